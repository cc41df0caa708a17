//===- NNOps.cpp - neural network op signatures ---------------------------===//
//
// Ops from TensorFlow's nn_ops.cc: activations, convolutions, pooling,
// normalization, losses and their gradients.
//
//===----------------------------------------------------------------------===//

#include "CommonShapeFns.h"

#include "OpTables.h"
#include "cleave/Ops/WindowAttrs.h"

using namespace cleave::ops;
using namespace cleave::ops::detail;

// The strings of TensorFlow's GetPaddingAttrString() and friends
// (tensorflow/core/util/padding.h, tensor_format.h).
static constexpr const char *kPadding = "padding: {'SAME', 'VALID'}";
static constexpr const char *kPaddingWithExplicit =
    "padding: {'SAME', 'VALID', 'EXPLICIT'}";
static constexpr const char *kExplicitPaddings =
    "explicit_paddings: list(int) = []";
static constexpr const char *kDataFormat =
    "data_format: {'NHWC', 'NCHW'} = 'NHWC'";
static constexpr const char *kDataFormat2D3D =
    "data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'";
static constexpr const char *kFloatT = "T: {half, bfloat16, float, double}";
static constexpr const char *kDataFormat3D =
    "data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'";

static OpTableEntry activation(const char *name, const char *typeAttr) {
  return {name, {"features: T"}, {"activations: T"}, {typeAttr}};
}

static OpTableEntry activationGrad(const char *name, const char *second,
                                   const char *typeAttr) {
  return {name, {"gradients: T", second}, {"backprops: T"}, {typeAttr}};
}

OpTable cleave::ops::detail::getNNOps() {
  return {
      // Activations.
      activation("Relu", "T: {realnumbertype, qint8}"),
      activation("Relu6", "T: realnumbertype"),
      activation("Elu", kFloatT),
      activation("Selu", kFloatT),
      activation("Softplus", kFloatT),
      activation("Softsign", kFloatT),
      {"LeakyRelu",
       {"features: T"},
       {"activations: T"},
       {"alpha: float = 0.2", "T: {half, bfloat16, float, double} = DT_FLOAT"}},
      {"LeakyReluGrad",
       {"gradients: T", "features: T"},
       {"backprops: T"},
       {"alpha: float = 0.2", "T: {half, bfloat16, float, double} = DT_FLOAT"}},
      {"Softmax", {"logits: T"}, {"softmax: T"}, {kFloatT}},
      {"LogSoftmax", {"logits: T"}, {"logsoftmax: T"}, {kFloatT}},
      activationGrad("ReluGrad", "features: T", "T: realnumbertype"),
      activationGrad("Relu6Grad", "features: T", "T: realnumbertype"),
      activationGrad("EluGrad", "outputs: T", kFloatT),
      activationGrad("SeluGrad", "outputs: T", kFloatT),
      activationGrad("SoftplusGrad", "features: T", kFloatT),
      activationGrad("SoftsignGrad", "features: T", kFloatT),

      // Bias.
      {"BiasAdd",
       {"value: T", "bias: T"},
       {"output: T"},
       {"T: numbertype", kDataFormat}},
      {"BiasAddGrad",
       {"out_backprop: T"},
       {"output: T"},
       {"T: numbertype", kDataFormat}},

      // Convolutions.
      {"Conv2D",
       {"input: T", "filter: T"},
       {"output: T"},
       {"T: {half, bfloat16, float, double, int32}", "strides: list(int)",
        "use_cudnn_on_gpu: bool = true", kPaddingWithExplicit,
        kExplicitPaddings, kDataFormat, "dilations: list(int) = [1, 1, 1, 1]"}},
      {"Conv2DBackpropInput",
       {"input_sizes: int32", "filter: T", "out_backprop: T"},
       {"output: T"},
       {"T: {half, bfloat16, float, double, int32}", "strides: list(int)",
        "use_cudnn_on_gpu: bool = true", kPaddingWithExplicit,
        kExplicitPaddings, kDataFormat, "dilations: list(int) = [1, 1, 1, 1]"}},
      {"Conv2DBackpropFilter",
       {"input: T", "filter_sizes: int32", "out_backprop: T"},
       {"output: T"},
       {kFloatT, "strides: list(int)", "use_cudnn_on_gpu: bool = true",
        kPaddingWithExplicit, kExplicitPaddings, kDataFormat,
        "dilations: list(int) = [1, 1, 1, 1]"}},
      {"DepthwiseConv2dNative",
       {"input: T", "filter: T"},
       {"output: T"},
       {kFloatT, "strides: list(int)", kPaddingWithExplicit, kExplicitPaddings,
        kDataFormat, "dilations: list(int) = [1, 1, 1, 1]"}},

      // Pooling.
      {"MaxPool",
       {"input: T"},
       {"output: T"},
       {"T: {half, bfloat16, float, double, int32, int64, uint8, int16, "
        "int8, uint16, qint8} = DT_FLOAT",
        "ksize: list(int) >= 4", "strides: list(int) >= 4",
        kPaddingWithExplicit, kExplicitPaddings,
        "data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'"}},
      {"MaxPoolGrad",
       {"orig_input: T", "orig_output: T", "grad: T"},
       {"output: T"},
       {"ksize: list(int) >= 4", "strides: list(int) >= 4",
        kPaddingWithExplicit, kExplicitPaddings, kDataFormat,
        "T: realnumbertype = DT_FLOAT"}},
      {"AvgPool",
       {"value: T"},
       {"output: T"},
       {"ksize: list(int) >= 4", "strides: list(int) >= 4", kPadding,
        kDataFormat, kFloatT}},
      {"AvgPoolGrad",
       {"orig_input_shape: int32", "grad: T"},
       {"output: T"},
       {"ksize: list(int) >= 4", "strides: list(int) >= 4", kPadding,
        kDataFormat, kFloatT}},

      // Volumes (3-D convolution and pooling).
      {"Conv3D",
       {"input: T", "filter: T"},
       {"output: T"},
       {kFloatT, "strides: list(int) >= 5", kPadding, kDataFormat3D,
        "dilations: list(int) = [1, 1, 1, 1, 1]"}},
      {"Conv3DBackpropInputV2",
       {"input_sizes: Tshape", "filter: T", "out_backprop: T"},
       {"output: T"},
       {kFloatT, "strides: list(int) >= 5", kPadding, kDataFormat3D,
        "dilations: list(int) = [1, 1, 1, 1, 1]",
        "Tshape: {int32, int64} = DT_INT32"}},
      {"Conv3DBackpropFilterV2",
       {"input: T", "filter_sizes: int32", "out_backprop: T"},
       {"output: T"},
       {kFloatT, "strides: list(int) >= 5", kPadding, kDataFormat3D,
        "dilations: list(int) = [1, 1, 1, 1, 1]"}},
      {"MaxPool3D",
       {"input: T"},
       {"output: T"},
       {"ksize: list(int) >= 5", "strides: list(int) >= 5", kPadding,
        kDataFormat3D, "T: {half, bfloat16, float}"}},
      {"MaxPool3DGrad",
       {"orig_input: TInput", "orig_output: TInput", "grad: T"},
       {"output: T"},
       {"ksize: list(int) >= 5", "strides: list(int) >= 5", kPadding,
        kDataFormat3D, "T: {half, bfloat16, float} = DT_FLOAT",
        "TInput: {half, bfloat16, float} = DT_FLOAT"}},
      {"AvgPool3D",
       {"input: T"},
       {"output: T"},
       {"ksize: list(int) >= 5", "strides: list(int) >= 5", kPadding,
        kDataFormat3D, kFloatT}},
      {"AvgPool3DGrad",
       {"orig_input_shape: int32", "grad: T"},
       {"output: T"},
       {"ksize: list(int) >= 5", "strides: list(int) >= 5", kPadding,
        kDataFormat3D, kFloatT}},

      // Local response normalization.
      {"LRN",
       {"input: T"},
       {"output: T"},
       {"depth_radius: int = 5", "bias: float = 1.0", "alpha: float = 1.0",
        "beta: float = 0.5", "T: {half, bfloat16, float} = DT_FLOAT"}},
      {"LRNGrad",
       {"input_grads: T", "input_image: T", "output_image: T"},
       {"output: T"},
       {"depth_radius: int = 5", "bias: float = 1.0", "alpha: float = 1.0",
        "beta: float = 0.5", "T: {half, bfloat16, float} = DT_FLOAT"}},

      // Resizing (image_ops.cc).
      {"ResizeBilinear",
       {"images: T", "size: int32"},
       {"resized_images: float"},
       {"T: {int8, uint8, int16, uint16, int32, int64, bfloat16, half, "
        "float, double}",
        "align_corners: bool = false", "half_pixel_centers: bool = false"}},
      {"ResizeNearestNeighbor",
       {"images: T", "size: int32"},
       {"resized_images: T"},
       {"T: {int8, uint8, int16, uint16, int32, int64, half, float, double, "
        "bfloat16}",
        "align_corners: bool = false", "half_pixel_centers: bool = false"}},
      {"ResizeBilinearGrad",
       {"grads: float", "original_image: T"},
       {"output: T"},
       {"T: {float, bfloat16, half, double}", "align_corners: bool = false",
        "half_pixel_centers: bool = false"}},
      {"ResizeNearestNeighborGrad",
       {"grads: T", "size: int32"},
       {"output: T"},
       {"T: {uint8, int8, int32, half, float, double, bfloat16}",
        "align_corners: bool = false", "half_pixel_centers: bool = false"}},

      // Classification.
      {"TopKV2",
       {"input: T", "k: Tk"},
       {"values: T", "indices: index_type"},
       {"sorted: bool = true", "T: realnumbertype",
        "Tk: {int16, int32, int64} = DT_INT32",
        "index_type: {int16, int32, int64} = DT_INT32"}},
      {"InTopKV2",
       {"predictions: float", "targets: T", "k: T"},
       {"precision: bool"},
       {"T: {int32, int64} = DT_INT32"}},

      // Normalization.
      {"FusedBatchNorm",
       {"x: T", "scale: T", "offset: T", "mean: T", "variance: T"},
       {"y: T", "batch_mean: T", "batch_variance: T", "reserve_space_1: T",
        "reserve_space_2: T"},
       {"T: {float}", "epsilon: float = 0.0001",
        "exponential_avg_factor: float = 1.0", kDataFormat2D3D,
        "is_training: bool = true"}},
      {"FusedBatchNormV3",
       {"x: T", "scale: U", "offset: U", "mean: U", "variance: U"},
       {"y: T", "batch_mean: U", "batch_variance: U", "reserve_space_1: U",
        "reserve_space_2: U", "reserve_space_3: U"},
       {"T: {half, bfloat16, float}", "U: {bfloat16, float}",
        "epsilon: float = 0.0001", "exponential_avg_factor: float = 1.0",
        kDataFormat2D3D, "is_training: bool = true"}},
      {"FusedBatchNormGradV3",
       {"y_backprop: T", "x: T", "scale: float", "reserve_space_1: U",
        "reserve_space_2: U", "reserve_space_3: U"},
       {"x_backprop: T", "scale_backprop: U", "offset_backprop: U",
        "reserve_space_4: U", "reserve_space_5: U"},
       {"T: {half, bfloat16, float}", "U: {float}", "epsilon: float = 0.0001",
        kDataFormat2D3D, "is_training: bool = true"}},
      {"BatchNormWithGlobalNormalization",
       {"t: T", "m: T", "v: T", "beta: T", "gamma: T"},
       {"result: T"},
       {"T: numbertype", "variance_epsilon: float",
        "scale_after_normalization: bool"}},

      // Losses.
      {"L2Loss", {"t: T"}, {"output: T"}, {kFloatT}},
      {"SoftmaxCrossEntropyWithLogits",
       {"features: T", "labels: T"},
       {"loss: T", "backprop: T"},
       {kFloatT}},
      {"SparseSoftmaxCrossEntropyWithLogits",
       {"features: T", "labels: Tlabels"},
       {"loss: T", "backprop: T"},
       {kFloatT, "Tlabels: {int32, int64} = DT_INT64"}},
  };
}

//===----------------------------------------------------------------------===//
// Shape functions
//===----------------------------------------------------------------------===//

/// TensorFlow's WithRank: an unknown rank becomes `rank` unknown dims.
static std::string withRank(Shape &shape, int64_t rank) {
  if (!shape.hasRank()) {
    shape = Shape::ofRank(rank);
    return "";
  }
  if (shape.rank() != rank)
    return "Shape must be rank " + std::to_string(rank) + " but is rank " +
           std::to_string(shape.rank());
  return "";
}

/// TensorFlow's Merge of two dimensions into `into`.
static std::string mergeDim(int64_t &into, int64_t other) {
  if (into >= 0 && other >= 0 && into != other)
    return "Dimensions must be equal, but are " + std::to_string(into) +
           " and " + std::to_string(other);
  if (into < 0)
    into = other;
  return "";
}

/// BiasAdd: the value's shape; the bias must match its channel dimension.
static std::string biasAddShape(InferenceContext &ctx) {
  Shape value = ctx.getInputShape(0), bias = ctx.getInputShape(1);
  if (bias.hasRank() && bias.rank() != 1)
    return "Shape must be rank 1 but is rank " + std::to_string(bias.rank());
  std::string format = ctx.getStringAttr("data_format").value_or("NHWC");
  if (value.hasRank() && bias.hasRank()) {
    if (value.rank() < 2)
      return "Shape must be at least rank 2 but is rank " +
             std::to_string(value.rank());
    int64_t channel = format == "NCHW" ? 1 : value.rank() - 1;
    if (std::string error = mergeDim(value.dims[channel], bias.dims[0]);
        !error.empty())
      return error;
  }
  ctx.setOutput(0, value);
  return "";
}

/// BiasAddGrad: a vector over the channel dimension.
static std::string biasAddGradShape(InferenceContext &ctx) {
  Shape in = ctx.getInputShape(0);
  std::string format = ctx.getStringAttr("data_format").value_or("NHWC");
  if (!in.hasRank()) {
    ctx.setOutput(0, Shape::ofRank(1));
    return "";
  }
  // TensorFlow's WithRankAtLeast(input, 2).
  if (in.rank() < 2)
    return "Shape must be at least rank 2 but is rank " +
           std::to_string(in.rank());
  ctx.setOutput(0, Shape::of({in.dims[format == "NCHW" ? 1 : in.rank() - 1]}));
  return "";
}

/// SparseSoftmaxCrossEntropyWithLogits: loss [batch] and backprop
/// [batch, classes] from the logits.
static std::string sparseCrossEntropyShape(InferenceContext &ctx) {
  Shape logits = ctx.getInputShape(0);
  if (logits.hasRank() && logits.rank() != 2)
    return "Shape must be rank 2 but is rank " + std::to_string(logits.rank());
  if (!logits.hasRank())
    logits = Shape::ofRank(2);
  ctx.setOutput(0, Shape::of({logits.dims[0]}));
  ctx.setOutput(1, logits);
  return "";
}

/// SoftmaxCrossEntropyWithLogits: logits and labels broadcast to one
/// [batch, classes] shape.
static std::string crossEntropyShape(InferenceContext &ctx) {
  std::string error;
  auto joined =
      broadcastShapes(ctx.getInputShape(0), ctx.getInputShape(1), error);
  if (!joined)
    return error;
  if (joined->hasRank() && joined->rank() != 2)
    return "Shape must be rank 2 but is rank " + std::to_string(joined->rank());
  Shape both = joined->hasRank() ? *joined : Shape::ofRank(2);
  ctx.setOutput(0, Shape::of({both.dims[0]}));
  ctx.setOutput(1, both);
  return "";
}

/// Conv2D / MaxPool / AvgPool: NHWC or NCHW windows with SAME, VALID or
/// EXPLICIT padding (cleave/Ops/WindowAttrs.h, TensorFlow's
/// GetWindowedOutputSize); `outChannels` -2 keeps the input's channels.
static std::string windowed(InferenceContext &ctx, const Shape &in, bool isPool,
                            int64_t kh, int64_t kw, int64_t outChannels) {
  auto list = [&](const char *name) -> std::optional<std::vector<int64_t>> {
    if (auto values = ctx.getIntListAttr(name))
      return std::vector<int64_t>(values->begin(), values->end());
    return std::nullopt;
  };
  WindowAttrs attrs;
  std::string error = readWindowAttrs(
      ctx.getStringAttr("data_format").value_or("NHWC"),
      ctx.getStringAttr("padding").value_or(""), list("strides"),
      isPool ? list("ksize") : std::nullopt,
      isPool ? std::nullopt : list("dilations"),
      list("explicit_paddings").value_or(std::vector<int64_t>()), attrs);
  if (!error.empty())
    return error;
  if (!in.hasRank()) {
    ctx.setOutput(0, Shape::ofRank(4));
    return "";
  }
  if (in.rank() != 4)
    return "Shape must be rank 4 but is rank " + std::to_string(in.rank());
  if (isPool) {
    kh = attrs.ksize[1];
    kw = attrs.ksize[2];
  }
  // Positions in the data format of height, width and channels.
  int64_t h = attrs.nchw ? 2 : 1, w = attrs.nchw ? 3 : 2,
          c = attrs.nchw ? 1 : 3;
  Shape out = in;
  auto size = [&](int dim, int64_t extent, int64_t window) {
    if (extent < 0 || window < 0)
      return Shape::kUnknown;
    return windowDim(attrs, dim, extent, window).out;
  };
  out.dims[h] = size(1, in.dims[h], kh);
  out.dims[w] = size(2, in.dims[w], kw);
  if (outChannels != -2)
    out.dims[c] = outChannels;
  ctx.setOutput(0, out);
  return "";
}

static std::string conv2DShape(InferenceContext &ctx) {
  Shape filter = ctx.getInputShape(1);
  if (filter.hasRank() && filter.rank() != 4)
    return "Shape must be rank 4 but is rank " + std::to_string(filter.rank());
  if (!filter.hasRank())
    filter = Shape::ofRank(4);
  return windowed(ctx, ctx.getInputShape(0), /*isPool=*/false, filter.dims[0],
                  filter.dims[1], filter.dims[3]);
}

static std::string poolShape(InferenceContext &ctx) {
  auto ksize = ctx.getIntListAttr("ksize");
  if (!ksize || ksize->size() != 4)
    return "Sliding window ksize field must specify 4 dimensions";
  return windowed(ctx, ctx.getInputShape(0), /*isPool=*/true, 0, 0,
                  /*keep channels*/ -2);
}

namespace {
/// The rank and channel dimension of a FusedBatchNorm* op's data, from its
/// data_format (rank 5 for the 3-D formats).
struct BatchNormLayout {
  int64_t rank = 4, channel = 3;
};
} // namespace

static BatchNormLayout batchNormLayout(InferenceContext &ctx) {
  std::string format = ctx.getStringAttr("data_format").value_or("NHWC");
  BatchNormLayout layout;
  layout.rank = format == "NDHWC" || format == "NCDHW" ? 5 : 4;
  layout.channel =
      format == "NCHW" || format == "NCDHW" ? 1 : layout.rank - 1;
  return layout;
}

/// Merges the channel count with the length of each vector input in
/// [first, end).
static std::string mergeChannelVectors(InferenceContext &ctx, unsigned first,
                                       unsigned end, int64_t &channels) {
  for (unsigned i = first; i < end; ++i) {
    Shape vector = ctx.getInputShape(i);
    std::string error = withRank(vector, 1);
    if (error.empty())
      error = mergeDim(channels, vector.dims[0]);
    if (!error.empty())
      return error;
  }
  return "";
}

/// FusedBatchNormV3, as TensorFlow's FusedBatchNormV3Shape: x of rank 4
/// (5 for the 3-D formats); scale and offset, and mean and variance where
/// they are read (inference, or a running average), vectors of the
/// channel count; y like x, the statistics channel vectors,
/// reserve_space_3 unknown.
static std::string fusedBatchNormShape(InferenceContext &ctx) {
  BatchNormLayout layout = batchNormLayout(ctx);
  Shape x = ctx.getInputShape(0);
  if (std::string error = withRank(x, layout.rank); !error.empty())
    return error;
  bool training = ctx.getBoolAttr("is_training").value_or(true);
  double factor =
      ctx.getFloatAttr("exponential_avg_factor").value_or(1.0);
  unsigned vectors = training && factor == 1.0 ? 3 : 5;
  int64_t channels = x.dims[layout.channel];
  if (std::string error = mergeChannelVectors(ctx, 1, vectors, channels);
      !error.empty())
    return error;
  x.dims[layout.channel] = channels;
  ctx.setOutput(0, x);
  for (unsigned i = 1; i < 5; ++i)
    ctx.setOutput(i, Shape::of({channels}));
  // reserve_space_3 is implementation-defined (a scalar on CPU).
  ctx.setOutput(5, Shape::unknown());
  return "";
}

/// FusedBatchNormGradV3, as TensorFlow's FusedBatchNormGradShape:
/// y_backprop and x of rank 4 (5 for the 3-D formats) with one channel
/// count, which scale and the two saved statistics share; x_backprop like
/// y_backprop, the scale and offset gradients channel vectors, the
/// reserve spaces empty.
static std::string fusedBatchNormGradShape(InferenceContext &ctx) {
  BatchNormLayout layout = batchNormLayout(ctx);
  Shape dy = ctx.getInputShape(0), x = ctx.getInputShape(1);
  for (Shape *shape : {&dy, &x})
    if (std::string error = withRank(*shape, layout.rank); !error.empty())
      return error;
  int64_t channels = dy.dims[layout.channel];
  if (std::string error = mergeDim(channels, x.dims[layout.channel]);
      !error.empty())
    return error;
  if (std::string error = mergeChannelVectors(ctx, 2, 5, channels);
      !error.empty())
    return error;
  dy.dims[layout.channel] = channels;
  ctx.setOutput(0, dy);
  ctx.setOutput(1, Shape::of({channels}));
  ctx.setOutput(2, Shape::of({channels}));
  ctx.setOutput(3, Shape::of({0}));
  ctx.setOutput(4, Shape::of({0}));
  return "";
}

/// Conv3D, MaxPool3D, AvgPool3D: the windows of a 5-D input (NDHWC or
/// NCDHW, SAME or VALID); `outChannels` -2 keeps the input's channels.
static std::string volumeShape(InferenceContext &ctx, bool isPool,
                               llvm::ArrayRef<int64_t> window,
                               int64_t outChannels) {
  Shape in = ctx.getInputShape(0);
  if (std::string error = withRank(in, 5); !error.empty())
    return error;
  auto strides = ctx.getIntListAttr("strides");
  if (!strides || strides->size() != 5)
    return "Sliding window strides field must specify 5 dimensions";
  auto ksize = ctx.getIntListAttr("ksize");
  if (isPool && (!ksize || ksize->size() != 5))
    return "Sliding window ksize field must specify 5 dimensions";
  auto dilations = ctx.getIntListAttr("dilations")
                       .value_or(llvm::SmallVector<int64_t>(5, 1));
  bool ncdhw = ctx.getStringAttr("data_format").value_or("NDHWC") == "NCDHW";
  // The 2-D ops' geometry over five dims, indexed in the data format.
  WindowAttrs attrs;
  attrs.same = ctx.getStringAttr("padding").value_or("") == "SAME";
  attrs.strides.assign(strides->begin(), strides->end());
  attrs.dilations.assign(5, 1);
  if (dilations.size() == 5)
    attrs.dilations.assign(dilations.begin(), dilations.end());
  Shape out = in;
  for (int d = 0; d < 3; ++d) {
    int axis = ncdhw ? 2 + d : 1 + d;
    int64_t size = isPool ? (*ksize)[axis] : window[d];
    int64_t extent = in.dims[axis];
    out.dims[axis] = extent < 0 || size < 0 || attrs.strides[axis] < 1
                         ? Shape::kUnknown
                         : windowDim(attrs, axis, extent, size).out;
  }
  if (outChannels != -2)
    out.dims[ncdhw ? 1 : 4] = outChannels;
  ctx.setOutput(0, out);
  return "";
}

static std::string conv3DShape(InferenceContext &ctx) {
  Shape filter = ctx.getInputShape(1);
  if (std::string error = withRank(filter, 5); !error.empty())
    return error;
  return volumeShape(ctx, /*isPool=*/false,
                     {filter.dims[0], filter.dims[1], filter.dims[2]},
                     filter.dims[4]);
}

static std::string pool3DShape(InferenceContext &ctx) {
  return volumeShape(ctx, /*isPool=*/true, {}, -2);
}

/// LRN: the input's shape, of rank 4.
static std::string lrnShape(InferenceContext &ctx) {
  Shape input = ctx.getInputShape(0);
  if (std::string error = withRank(input, 4); !error.empty())
    return error;
  ctx.setOutput(0, input);
  return "";
}

/// LRNGrad: the three inputs' merged shape, of rank 4.
static std::string lrnGradShape(InferenceContext &ctx) {
  Shape shape = ctx.getInputShape(0);
  if (std::string error = withRank(shape, 4); !error.empty())
    return error;
  for (unsigned i : {1u, 2u}) {
    std::string error;
    std::optional<Shape> merged =
        mergeShapes(shape, ctx.getInputShape(i), error);
    if (!merged)
      return error;
    shape = *merged;
  }
  ctx.setOutput(0, shape);
  return "";
}

/// [batch, size[0], size[1], channels] from the images (or grads) and a
/// constant size: ResizeBilinear, ResizeNearestNeighbor and
/// ResizeNearestNeighborGrad (TensorFlow's ResizeShapeFn).
static std::string resizeShape(InferenceContext &ctx) {
  Shape images = ctx.getInputShape(0), size = ctx.getInputShape(1);
  if (std::string error = withRank(images, 4); !error.empty())
    return error;
  if (std::string error = withRank(size, 1); !error.empty())
    return error;
  if (size.dims[0] != Shape::kUnknown && size.dims[0] != 2)
    return "Dimension must be 2 but is " + std::to_string(size.dims[0]);
  Shape out = images;
  out.dims[1] = out.dims[2] = Shape::kUnknown;
  if (auto values = ctx.getConstantInput(1)) {
    if (values->size() == 2) {
      for (int64_t d : *values)
        if (d < 0)
          return "Dimension must be non-negative but is " + std::to_string(d);
      out.dims[1] = (*values)[0];
      out.dims[2] = (*values)[1];
    }
  }
  ctx.setOutput(0, out);
  return "";
}

/// ResizeBilinearGrad: the original image's shape.
static std::string resizeBilinearGradShape(InferenceContext &ctx) {
  ctx.setOutput(0, ctx.getInputShape(1));
  return "";
}

/// TopKV2: the input's shape with k as its last dimension.
static std::string topKShape(InferenceContext &ctx) {
  Shape input = ctx.getInputShape(0), k = ctx.getInputShape(1);
  if (input.hasRank() && input.rank() < 1)
    return "Shape must be at least rank 1 but is rank 0";
  if (k.hasRank() && k.rank() != 0)
    return "Shape must be rank 0 but is rank " + std::to_string(k.rank());
  int64_t count = Shape::kUnknown;
  if (auto value = ctx.getConstantInput(1)) {
    if (value->size() == 1) {
      count = (*value)[0];
      if (count < 0)
        return "Dimension must be non-negative but is " + std::to_string(count);
    }
  }
  if (!input.hasRank()) {
    ctx.setOutput(0, Shape::unknown());
    ctx.setOutput(1, Shape::unknown());
    return "";
  }
  int64_t last = input.dims.back();
  if (count != Shape::kUnknown && last != Shape::kUnknown && last < count)
    return "input must have last dimension >= k = " + std::to_string(count) +
           " but is " + std::to_string(last);
  Shape out = input;
  out.dims.back() = count;
  ctx.setOutput(0, out);
  ctx.setOutput(1, out);
  return "";
}

/// InTopKV2: a bool per row of the [batch, classes] predictions.
static std::string inTopKShape(InferenceContext &ctx) {
  Shape predictions = ctx.getInputShape(0), targets = ctx.getInputShape(1),
        k = ctx.getInputShape(2);
  if (predictions.hasRank() && predictions.rank() != 2)
    return "Shape must be rank 2 but is rank " +
           std::to_string(predictions.rank());
  if (targets.hasRank() && targets.rank() != 1)
    return "Shape must be rank 1 but is rank " + std::to_string(targets.rank());
  if (k.hasRank() && k.rank() != 0)
    return "Shape must be rank 0 but is rank " + std::to_string(k.rank());
  int64_t batch = predictions.hasRank() ? predictions.dims[0] : Shape::kUnknown;
  if (targets.hasRank() && targets.dims[0] != Shape::kUnknown) {
    if (batch != Shape::kUnknown && batch != targets.dims[0])
      return "Dimensions must be equal, but are " + std::to_string(batch) +
             " and " + std::to_string(targets.dims[0]);
    batch = targets.dims[0];
  }
  ctx.setOutput(0, Shape::of({batch}));
  return "";
}

detail::ShapeFnTable cleave::ops::detail::getNNShapeFns() {
  ShapeFnTable table = {
      {"BiasAdd", biasAddShape},
      {"TopKV2", topKShape},
      {"LRN", lrnShape},
      {"Conv3D", conv3DShape},
      {"MaxPool3D", pool3DShape},
      {"AvgPool3D", pool3DShape},
      {"Conv3DBackpropInputV2", shapes::fromShapeInputAt<0>},
      {"Conv3DBackpropFilterV2", shapes::fromShapeInputAt<1>},
      {"AvgPool3DGrad", shapes::fromShapeInputAt<0>},
      {"MaxPool3DGrad", shapes::unchanged},
      {"LRNGrad", lrnGradShape},
      {"ResizeBilinear", resizeShape},
      {"ResizeNearestNeighbor", resizeShape},
      {"ResizeNearestNeighborGrad", resizeShape},
      {"ResizeBilinearGrad", resizeBilinearGradShape},
      {"InTopKV2", inTopKShape},
      {"BiasAddGrad", biasAddGradShape},
      {"SoftmaxCrossEntropyWithLogits", crossEntropyShape},
      {"SparseSoftmaxCrossEntropyWithLogits", sparseCrossEntropyShape},
      {"Conv2D", conv2DShape},
      {"MaxPool", poolShape},
      {"AvgPool", poolShape},
      {"L2Loss", shapes::scalar},
      {"FusedBatchNormV3", fusedBatchNormShape},
      {"FusedBatchNormGradV3", fusedBatchNormGradShape},
      {"Conv2DBackpropInput", shapes::fromShapeInputAt<0>},
      {"Conv2DBackpropFilter", shapes::fromShapeInputAt<1>},
      {"AvgPoolGrad", shapes::fromShapeInputAt<0>},
  };
  for (const char *op : {"Relu", "Relu6", "Elu", "Selu", "LeakyRelu", "Softmax",
                         "LogSoftmax", "ReluGrad", "Relu6Grad", "EluGrad",
                         "SeluGrad", "MaxPoolGrad", "LeakyReluGrad", "Softplus",
                         "Softsign", "SoftplusGrad", "SoftsignGrad"})
    table.push_back({op, shapes::unchanged});
  return table;
}

//===----------------------------------------------------------------------===//
// Gradients (nn_grad.py), in TensorFlow's node order and names
//===----------------------------------------------------------------------===//

static std::string reluGrad(GradientContext &ctx) {
  ctx.setInputGrad(
      0, ctx.op("ReluGrad", {ctx.getOutputGrad(0), ctx.getOutput(0)}));
  return "";
}

static std::string eluGrad(GradientContext &ctx) {
  ctx.setInputGrad(0,
                   ctx.op("EluGrad", {ctx.getOutputGrad(0), ctx.getOutput(0)}));
  return "";
}

/// Softplus and Softsign: their gradient ops of (grad, features).
template <const char *GradOp>
static std::string featuresGrad(GradientContext &ctx) {
  ctx.setInputGrad(0, ctx.op(GradOp, {ctx.getOutputGrad(0), ctx.getInput(0)}));
  return "";
}
static constexpr char kSoftplusGrad[] = "SoftplusGrad",
                      kSoftsignGrad[] = "SoftsignGrad";

static std::string relu6Grad(GradientContext &ctx) {
  ctx.setInputGrad(
      0, ctx.op("Relu6Grad", {ctx.getOutputGrad(0), ctx.getInput(0)}));
  return "";
}

/// LeakyRelu: LeakyReluGrad(dy, x) with the forward op's alpha.
static std::string leakyReluGrad(GradientContext &ctx) {
  ctx.setInputGrad(
      0, ctx.op("LeakyReluGrad", {ctx.getOutputGrad(0), ctx.getInput(0)},
                {GradAttr::real("alpha",
                                ctx.getFloatAttr("alpha").value_or(0.2))}));
  return "";
}

static std::string biasAddGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  ctx.setInputGrad(0, grad);
  ctx.setInputGrad(
      1, ctx.op("BiasAddGrad", {grad},
                {GradAttr::string(
                    "data_format",
                    ctx.getStringAttr("data_format").value_or("NHWC"))}));
  return "";
}

/// reduce_sum(t, -1, keepdims=True) as Python writes it.
static GradTensor sumLastAxis(GradientContext &ctx, GradTensor t) {
  GradTensor axis = ctx.scalar(-1, grads::kInt32, "Sum/reduction_indices");
  return ctx.op("Sum", {t, axis}, {GradAttr::boolean("keep_dims", true)});
}

static std::string softmaxGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor softmax = ctx.getOutput(0);
  GradTensor sum = sumLastAxis(ctx, ctx.op("Mul", {grad, softmax}, {}, "mul"));
  GradTensor diff = ctx.op("Sub", {grad, sum}, {}, "sub");
  ctx.setInputGrad(0, ctx.op("Mul", {diff, softmax}, {}, "mul_1"));
  return "";
}

static std::string logSoftmaxGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor softmax = ctx.op("Exp", {ctx.getOutput(0)});
  GradTensor scaled =
      ctx.op("Mul", {sumLastAxis(ctx, grad), softmax}, {}, "mul");
  ctx.setInputGrad(0, ctx.op("Sub", {grad, scaled}, {}, "sub"));
  return "";
}

/// expand_dims(vec, -1) * mat.
static GradTensor broadcastMul(GradientContext &ctx, GradTensor vec,
                               GradTensor mat, llvm::StringRef suffix) {
  GradTensor dim =
      ctx.scalar(-1, grads::kInt32, ("ExpandDims" + suffix + "/dim").str());
  GradTensor column =
      ctx.op("ExpandDims", {vec, dim}, {}, ("ExpandDims" + suffix).str());
  return ctx.op("Mul", {column, mat}, {}, ("mul" + suffix).str());
}

static std::string softmaxCrossEntropyGrad(GradientContext &ctx) {
  bool sparse = ctx.getOpType() == "SparseSoftmaxCrossEntropyWithLogits";
  // The sparse op's fused backprop has no gradient of its own.
  const char *noSecondOrder =
      "Currently there is no way to take the second derivative of "
      "sparse_softmax_cross_entropy_with_logits due to the fused "
      "implementation's interaction with tf.gradients()";
  if (sparse && ctx.hasOutputGrad(1))
    return std::string("Gradient explicitly disabled. Reason: ") +
           noSecondOrder;
  GradTensor gradLoss = ctx.getOutputGrad(0);
  GradTensor backprop = ctx.getOutput(1);
  if (sparse)
    backprop = ctx.op("PreventGradient", {backprop},
                      {GradAttr::string("message", noSecondOrder)});
  GradTensor logitsGrad = broadcastMul(ctx, gradLoss, backprop, "");
  if (!sparse && ctx.hasOutputGrad(1)) {
    // The backprop output is softmax(logits) - labels: its gradient g
    // reaches the logits as (g - <g, softmax>) * softmax, row by row.
    GradTensor gradGrad = ctx.getOutputGrad(1);
    GradTensor softmax = ctx.op("Softmax", {ctx.getInput(0)});
    GradTensor row =
        ctx.op("ExpandDims",
               {gradGrad, ctx.scalar(1, grads::kInt32, "ExpandDims_1/dim")}, {},
               "ExpandDims_1");
    GradTensor column =
        ctx.op("ExpandDims",
               {softmax, ctx.scalar(2, grads::kInt32, "ExpandDims_2/dim")}, {},
               "ExpandDims_2");
    GradTensor dot = ctx.op(
        "Squeeze", {ctx.op("BatchMatMulV2", {row, column}, {}, "MatMul")},
        {GradAttr::intList("squeeze_dims", {1})});
    GradTensor extra =
        ctx.op("Mul", {ctx.op("Sub", {gradGrad, dot}, {}, "sub"), softmax}, {},
               "mul_1");
    logitsGrad = ctx.op("AddV2", {logitsGrad, extra}, {}, "add");
  }
  ctx.setInputGrad(0, logitsGrad);
  if (!sparse) {
    GradTensor logSoftmax = ctx.op("LogSoftmax", {ctx.getInput(0)});
    GradTensor labelsGrad =
        broadcastMul(ctx, gradLoss, ctx.op("Neg", {logSoftmax}), "_1");
    // The backprop output's -labels term: TensorFlow's rule leaves it out
    // (its labels gradient ignores the second output); Cleave does not.
    if (ctx.hasOutputGrad(1))
      labelsGrad =
          ctx.op("Sub", {labelsGrad, ctx.getOutputGrad(1)}, {}, "sub_1");
    ctx.setInputGrad(1, labelsGrad);
  }
  return "";
}

/// The attrs a convolution or pooling gradient copies from its forward op.
static std::vector<GradAttr>
copyAttrs(GradientContext &ctx, std::initializer_list<const char *> lists,
          std::initializer_list<const char *> strings) {
  std::vector<GradAttr> attrs;
  for (const char *name : lists)
    if (auto values = ctx.getIntListAttr(name))
      attrs.push_back(GradAttr::intList(
          name, std::vector<int64_t>(values->begin(), values->end())));
  for (const char *name : strings)
    if (auto value = ctx.getStringAttr(name))
      attrs.push_back(GradAttr::string(name, *value));
  return attrs;
}

/// The attrs of a convolution, for the convolutions of its gradient.
static std::vector<GradAttr> convAttrs(GradientContext &ctx) {
  std::vector<GradAttr> attrs =
      copyAttrs(ctx, {"dilations", "strides", "explicit_paddings"},
                {"padding", "data_format"});
  if (auto cudnn = ctx.getBoolAttr("use_cudnn_on_gpu"))
    attrs.push_back(GradAttr::boolean("use_cudnn_on_gpu", *cudnn));
  return attrs;
}

static std::string conv2DGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor input = ctx.getInput(0), filter = ctx.getInput(1);
  auto shapes = ctx.addNode("ShapeN", {input, filter});
  if (shapes.size() != 2)
    return "";
  std::vector<GradAttr> attrs = convAttrs(ctx);
  ctx.setInputGrad(
      0, ctx.op("Conv2DBackpropInput", {shapes[0], filter, grad}, attrs));
  ctx.setInputGrad(
      1, ctx.op("Conv2DBackpropFilter", {input, shapes[1], grad}, attrs));
  return "";
}

static std::string maxPoolGrad(GradientContext &ctx) {
  ctx.setInputGrad(
      0, ctx.op("MaxPoolGrad",
                {ctx.getInput(0), ctx.getOutput(0), ctx.getOutputGrad(0)},
                copyAttrs(ctx, {"ksize", "strides", "explicit_paddings"},
                          {"padding", "data_format"})));
  return "";
}

static std::string avgPoolGrad(GradientContext &ctx) {
  GradTensor shape = ctx.op("Shape", {ctx.getInput(0)});
  ctx.setInputGrad(0, ctx.op("AvgPoolGrad", {shape, ctx.getOutputGrad(0)},
                             copyAttrs(ctx, {"ksize", "strides"},
                                       {"padding", "data_format"})));
  return "";
}
// Second-order gradients (nn_grad.py's *GradGrad rules).

/// ReluGrad(dy, x) and Relu6Grad(dy, x) are linear in dy under a mask of
/// x: the incoming gradient is masked the same way; x gets zeros.
template <const char *GradOp>
static std::string maskedGradGrad(GradientContext &ctx) {
  GradTensor x = ctx.getInput(1);
  ctx.setInputGrad(0, ctx.op(GradOp, {ctx.getOutputGrad(0), x}));
  ctx.setInputGrad(1, ctx.op("ZerosLike", {x}));
  return "";
}
static constexpr char kReluGrad[] = "ReluGrad";
static constexpr char kRelu6Grad[] = "Relu6Grad";

/// LeakyReluGrad(dy, x) is linear in dy (scaled by alpha where x <= 0):
/// the incoming gradient goes through it again; x gets zeros.
static std::string leakyReluGradGrad(GradientContext &ctx) {
  GradTensor x = ctx.getInput(1);
  ctx.setInputGrad(
      0, ctx.op("LeakyReluGrad", {ctx.getOutputGrad(0), x},
                {GradAttr::real("alpha",
                                ctx.getFloatAttr("alpha").value_or(0.2))}));
  ctx.setInputGrad(1, ctx.op("ZerosLike", {x}));
  return "";
}

/// EluGrad(dy, y) = dy * (y + 1) where y < 0, else dy.
static std::string eluGradGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor dy = ctx.getInput(0), y = ctx.getInput(1);
  ctx.setInputGrad(0, ctx.op("EluGrad", {grad, y}));
  GradTensor negative =
      ctx.op("Less", {y, ctx.scalar(0, ctx.getDType(y), "Less/y")});
  GradTensor scaled = ctx.op("Mul", {grad, dy}, {}, "mul");
  ctx.setInputGrad(
      1, ctx.op("Select", {negative, scaled, ctx.op("ZerosLike", {y})}));
  return "";
}

/// BiasAddGrad sums over all but the channel dim: its gradient tiles the
/// incoming one back over them.
static std::string biasAddGradGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor shape = ctx.op("Shape", {ctx.getInput(0)});
  GradTensor biasShape = ctx.op("Shape", {grad}, {}, "Shape_1");
  auto slice = [&](int64_t begin, int64_t end, bool toEnd, const char *name) {
    return ctx.op("StridedSlice",
                  {shape, ctx.intVector({begin}, std::string(name) + "/stack"),
                   ctx.intVector({end}, std::string(name) + "/stack_1"),
                   ctx.intVector({1}, std::string(name) + "/stack_2")},
                  {GradAttr::integer("end_mask", toEnd ? 1 : 0)}, name);
  };
  GradTensor axis = ctx.scalar(0, grads::kInt32, "concat/axis");
  llvm::SmallVector<GradTensor> expanded, multiples;
  if (ctx.getStringAttr("data_format").value_or("NHWC") == "NCHW") {
    GradTensor batch = slice(0, 1, false, "strided_slice");
    GradTensor spatial = slice(2, 0, true, "strided_slice_1");
    expanded = {ctx.op("OnesLike", {batch}), biasShape,
                ctx.op("OnesLike", {spatial}, {}, "ones_like_1"), axis};
    multiples = {batch, ctx.intVector({1}, "concat_1/values_1"), spatial, axis};
  } else {
    GradTensor outer = slice(0, -1, false, "strided_slice");
    expanded = {ctx.op("OnesLike", {outer}), biasShape, axis};
    multiples = {outer, ctx.intVector({1}, "concat_1/values_1"), axis};
  }
  GradTensor reshaped =
      ctx.op("Reshape", {grad, ctx.op("ConcatV2", expanded, {}, "concat")});
  ctx.setInputGrad(0, ctx.op("Tile", {reshaped, ctx.op("ConcatV2", multiples,
                                                       {}, "concat_1")}));
  return "";
}

/// Conv2DBackpropInput(input_sizes, filter, dy) is linear in filter and dy.
static std::string conv2DBackpropInputGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor filter = ctx.getInput(1), dy = ctx.getInput(2);
  std::vector<GradAttr> attrs = convAttrs(ctx);
  ctx.setInputGrad(1, ctx.op("Conv2DBackpropFilter",
                             {grad, ctx.op("Shape", {filter}), dy}, attrs));
  ctx.setInputGrad(2, ctx.op("Conv2D", {grad, filter}, attrs));
  return "";
}

/// Conv2DBackpropFilter(input, filter_sizes, dy) is linear in input and dy.
static std::string conv2DBackpropFilterGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor input = ctx.getInput(0), dy = ctx.getInput(2);
  std::vector<GradAttr> attrs = convAttrs(ctx);
  ctx.setInputGrad(0, ctx.op("Conv2DBackpropInput",
                             {ctx.op("Shape", {input}), grad, dy}, attrs));
  ctx.setInputGrad(2, ctx.op("Conv2D", {input, grad}, attrs));
  return "";
}

/// AvgPoolGrad(shape, dy) is linear in dy: its gradient is the pooling.
static std::string avgPoolGradGrad(GradientContext &ctx) {
  ctx.setInputGrad(1, ctx.op("AvgPool", {ctx.getOutputGrad(0)},
                             copyAttrs(ctx, {"ksize", "strides"},
                                       {"padding", "data_format"})));
  return "";
}

static std::string fusedBatchNormGrad(GradientContext &ctx) {
  bool training = ctx.getBoolAttr("is_training").value_or(true);
  // Training normalized with the batch statistics it saved; inference
  // with the given ones.
  GradTensor mean = training ? ctx.getOutput(3) : ctx.getInput(3);
  GradTensor variance = training ? ctx.getOutput(4) : ctx.getInput(4);
  std::vector<GradAttr> attrs = copyAttrs(ctx, {}, {"data_format"});
  attrs.push_back(GradAttr::boolean("is_training", training));
  if (auto epsilon = ctx.getFloatAttr("epsilon"))
    attrs.push_back(GradAttr::real("epsilon", *epsilon));
  auto grads = ctx.addNode("FusedBatchNormGradV3",
                           {ctx.getOutputGrad(0), ctx.getInput(0),
                            ctx.getInput(1), mean, variance, ctx.getOutput(5)},
                           attrs);
  if (grads.size() != 5)
    return "";
  for (unsigned i = 0; i < 3; ++i)
    ctx.setInputGrad(i, grads[i]);
  return "";
}

/// L2Loss: t * grad.
static std::string l2LossGrad(GradientContext &ctx) {
  ctx.setInputGrad(
      0, ctx.op("Mul", {ctx.getInput(0), ctx.getOutputGrad(0)}, {}, "mul"));
  return "";
}

/// TopKV2: each chosen value's gradient goes back to where it was taken
/// from: the one-hot of its index over the last dimension, weighted by the
/// gradient and summed over the k choices (TensorFlow's _TopKGrad scatters
/// the same sums).
static std::string topKGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0), input = ctx.getInput(0);
  int32_t dtype = ctx.getDType(grad);
  GradTensor shape = ctx.op("Shape", {input});
  GradTensor depth = ctx.op("StridedSlice",
                            {shape, ctx.intVector({-1}, "strided_slice/stack"),
                             ctx.intVector({0}, "strided_slice/stack_1"),
                             ctx.intVector({1}, "strided_slice/stack_2")},
                            {GradAttr::dtype("Index", grads::kInt32),
                             GradAttr::integer("shrink_axis_mask", 1),
                             GradAttr::integer("end_mask", 1)},
                            "strided_slice");
  GradTensor oneHot =
      ctx.op("OneHot",
             {ctx.getOutput(1), depth, ctx.scalar(1, dtype, "OneHot/on_value"),
              ctx.scalar(0, dtype, "OneHot/off_value")},
             {GradAttr::integer("axis", -1)});
  GradTensor weighted = ctx.op(
      "Mul", {oneHot,
              ctx.op("ExpandDims",
                     {grad, ctx.scalar(-1, grads::kInt32, "ExpandDims/dim")})});
  ctx.setInputGrad(
      0, ctx.op("Sum", {weighted, ctx.scalar(-2, grads::kInt32,
                                             "Sum/reduction_indices")}));
  return "";
}

/// The attrs a gradient op repeats from its forward op.
static std::vector<GradAttr>
copiedAttrs(GradientContext &ctx, std::initializer_list<const char *> bools,
            std::initializer_list<const char *> floats,
            std::initializer_list<const char *> ints) {
  std::vector<GradAttr> attrs;
  for (const char *name : bools)
    if (auto v = ctx.getBoolAttr(name))
      attrs.push_back(GradAttr::boolean(name, *v));
  for (const char *name : floats)
    if (auto v = ctx.getFloatAttr(name))
      attrs.push_back(GradAttr::real(name, *v));
  for (const char *name : ints)
    if (auto v = ctx.getIntAttr(name))
      attrs.push_back(GradAttr::integer(name, *v));
  return attrs;
}

/// The list and string attrs a 3-D op's gradient op repeats.
static std::vector<GradAttr>
volumeGradAttrs(GradientContext &ctx,
                std::initializer_list<const char *> lists) {
  std::vector<GradAttr> attrs;
  for (const char *name : lists)
    if (auto v = ctx.getIntListAttr(name))
      attrs.push_back(
          GradAttr::intList(name, std::vector<int64_t>(v->begin(), v->end())));
  for (const char *name : {"padding", "data_format"})
    if (auto v = ctx.getStringAttr(name))
      attrs.push_back(GradAttr::string(name, *v));
  return attrs;
}

/// Conv3D: the backprops of the input and the filter (_Conv3DGrad).
static std::string conv3DGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  std::vector<GradAttr> attrs = volumeGradAttrs(ctx, {"strides", "dilations"});
  ctx.setInputGrad(
      0, ctx.op("Conv3DBackpropInputV2",
                {ctx.op("Shape", {ctx.getInput(0)}), ctx.getInput(1), grad},
                attrs));
  ctx.setInputGrad(
      1, ctx.op("Conv3DBackpropFilterV2",
                {ctx.getInput(0),
                 ctx.op("Shape", {ctx.getInput(1)}, {}, "Shape_1"), grad},
                attrs));
  return "";
}

/// MaxPool3D and AvgPool3D: their gradient ops with the same window.
template <bool isMax> static std::string pool3DGrad(GradientContext &ctx) {
  std::vector<GradAttr> attrs = volumeGradAttrs(ctx, {"ksize", "strides"});
  GradTensor grad = ctx.getOutputGrad(0);
  if (isMax)
    ctx.setInputGrad(0,
                     ctx.op("MaxPool3DGrad",
                            {ctx.getInput(0), ctx.getOutput(0), grad}, attrs));
  else
    ctx.setInputGrad(0,
                     ctx.op("AvgPool3DGrad",
                            {ctx.op("Shape", {ctx.getInput(0)}), grad}, attrs));
  return "";
}

/// LRN: LRNGrad(grad, input, output) with the forward op's attrs.
static std::string lrnGrad(GradientContext &ctx) {
  ctx.setInputGrad(
      0,
      ctx.op(
          "LRNGrad", {ctx.getOutputGrad(0), ctx.getInput(0), ctx.getOutput(0)},
          copiedAttrs(ctx, {}, {"bias", "alpha", "beta"}, {"depth_radius"})));
  return "";
}

/// ResizeBilinear: ResizeBilinearGrad(grad, images).
static std::string resizeBilinearGrad(GradientContext &ctx) {
  ctx.setInputGrad(
      0, ctx.op("ResizeBilinearGrad", {ctx.getOutputGrad(0), ctx.getInput(0)},
                copiedAttrs(ctx, {"align_corners", "half_pixel_centers"}, {},
                            {})));
  return "";
}

/// ResizeNearestNeighbor: ResizeNearestNeighborGrad(grad, the images'
/// height and width).
static std::string resizeNearestNeighborGrad(GradientContext &ctx) {
  GradTensor shape = ctx.op("Shape", {ctx.getInput(0)});
  GradTensor size = ctx.op("Slice",
                           {shape, ctx.intVector({1}, "Slice/begin"),
                            ctx.intVector({2}, "Slice/size")},
                           {GradAttr::dtype("Index", grads::kInt32)});
  ctx.setInputGrad(
      0, ctx.op("ResizeNearestNeighborGrad", {ctx.getOutputGrad(0), size},
                copiedAttrs(ctx, {"align_corners", "half_pixel_centers"}, {},
                            {})));
  return "";
}

detail::GradFnTable cleave::ops::detail::getNNGradFns() {
  return {
      {"L2Loss", l2LossGrad},
      {"TopKV2", topKGrad},
      {"LRN", lrnGrad},
      {"Conv3D", conv3DGrad},
      {"MaxPool3D", pool3DGrad<true>},
      {"AvgPool3D", pool3DGrad<false>},
      {"ResizeBilinear", resizeBilinearGrad},
      {"ResizeNearestNeighbor", resizeNearestNeighborGrad},
      {"Relu", reluGrad},
      {"Relu6", relu6Grad},
      {"LeakyRelu", leakyReluGrad},
      {"LeakyReluGrad", leakyReluGradGrad},
      {"Elu", eluGrad},
      {"Softplus", featuresGrad<kSoftplusGrad>},
      {"Softsign", featuresGrad<kSoftsignGrad>},
      {"BiasAdd", biasAddGrad},
      {"Softmax", softmaxGrad},
      {"LogSoftmax", logSoftmaxGrad},
      {"SoftmaxCrossEntropyWithLogits", softmaxCrossEntropyGrad},
      {"SparseSoftmaxCrossEntropyWithLogits", softmaxCrossEntropyGrad},
      {"Conv2D", conv2DGrad},
      {"MaxPool", maxPoolGrad},
      {"AvgPool", avgPoolGrad},
      {"FusedBatchNormV3", fusedBatchNormGrad},
      {"ReluGrad", maskedGradGrad<kReluGrad>},
      {"Relu6Grad", maskedGradGrad<kRelu6Grad>},
      {"EluGrad", eluGradGrad},
      {"BiasAddGrad", biasAddGradGrad},
      {"Conv2DBackpropInput", conv2DBackpropInputGrad},
      {"Conv2DBackpropFilter", conv2DBackpropFilterGrad},
      {"AvgPoolGrad", avgPoolGradGrad},
  };
}
