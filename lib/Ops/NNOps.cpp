//===- NNOps.cpp - neural network op signatures ---------------------------===//
//
// Ops from TensorFlow's nn_ops.cc: activations, convolutions, pooling,
// normalization, losses and their gradients.
//
//===----------------------------------------------------------------------===//

#include "OpTables.h"

using namespace cleave::ops::detail;

namespace {
// The strings of TensorFlow's GetPaddingAttrString() and friends
// (tensorflow/core/util/padding.h, tensor_format.h).
constexpr const char *kPadding = "padding: {'SAME', 'VALID'}";
constexpr const char *kPaddingWithExplicit =
    "padding: {'SAME', 'VALID', 'EXPLICIT'}";
constexpr const char *kExplicitPaddings = "explicit_paddings: list(int) = []";
constexpr const char *kDataFormat = "data_format: {'NHWC', 'NCHW'} = 'NHWC'";
constexpr const char *kDataFormat2D3D =
    "data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'";
constexpr const char *kFloatT = "T: {half, bfloat16, float, double}";

OpTableEntry activation(const char *name, const char *typeAttr) {
  return {name, {"features: T"}, {"activations: T"}, {typeAttr}};
}

OpTableEntry activationGrad(const char *name, const char *second,
                            const char *typeAttr) {
  return {name, {"gradients: T", second}, {"backprops: T"}, {typeAttr}};
}
} // namespace

OpTable cleave::ops::detail::getNNOps() {
  return {
      // Activations.
      activation("Relu", "T: {realnumbertype, qint8}"),
      activation("Relu6", "T: realnumbertype"),
      activation("Elu", kFloatT),
      activation("Selu", kFloatT),
      {"LeakyRelu",
       {"features: T"},
       {"activations: T"},
       {"alpha: float = 0.2", "T: {half, bfloat16, float, double} = DT_FLOAT"}},
      {"Softmax", {"logits: T"}, {"softmax: T"}, {kFloatT}},
      {"LogSoftmax", {"logits: T"}, {"logsoftmax: T"}, {kFloatT}},
      activationGrad("ReluGrad", "features: T", "T: realnumbertype"),
      activationGrad("Relu6Grad", "features: T", "T: realnumbertype"),
      activationGrad("EluGrad", "outputs: T", kFloatT),
      activationGrad("SeluGrad", "outputs: T", kFloatT),

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
