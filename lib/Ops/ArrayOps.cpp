//===- ArrayOps.cpp - array op signatures ---------------------------------===//
//
// Ops from TensorFlow's array_ops.cc: constants, placeholders, identities
// and shape manipulation.
//
//===----------------------------------------------------------------------===//

#include "CommonShapeFns.h"
#include "OpTables.h"

#include "cleave/Ops/StridedSlice.h"
#include "llvm/Support/MathExtras.h"

using namespace cleave::ops;
using namespace cleave::ops::detail;

OpTable cleave::ops::detail::getArrayOps() {
  return {
      // Sources.
      {"Const", {}, {"output: dtype"}, {"value: tensor", "dtype: type"}},
      {"Placeholder",
       {},
       {"output: dtype"},
       {"dtype: type", "shape: shape = { unknown_rank: true }"}},
      {"PlaceholderWithDefault",
       {"input: dtype"},
       {"output: dtype"},
       {"dtype: type", "shape: shape"}},
      // Empty is SetDoNotOptimize(): its output is uninitialized memory.
      {"Empty",
       {"shape: int32"},
       {"output: dtype"},
       {"dtype: type", "init: bool = false"},
       /*isStateful=*/true},

      // Identities.
      {"Identity", {"input: T"}, {"output: T"}, {"T: type"}},
      {"IdentityN", {"input: T"}, {"output: T"}, {"T: list(type)"}},
      {"Snapshot", {"input: T"}, {"output: T"}, {"T: type"}},
      {"StopGradient", {"input: T"}, {"output: T"}, {"T: type"}},
      {"PreventGradient",
       {"input: T"},
       {"output: T"},
       {"T: type", "message: string = ''"}},
      {"EnsureShape", {"input: T"}, {"output: T"}, {"shape: shape", "T: type"}},
      {"ReverseV2",
       {"tensor: T", "axis: Tidx"},
       {"output: T"},
       {"Tidx: {int32, int64} = DT_INT32",
        "T: {uint8, int8, uint16, int16, int32, uint32, int64, uint64, bool, "
        "bfloat16, half, float, double, complex64, complex128, string}"}},
      {"CheckNumericsV2",
       {"tensor: T"},
       {"output: T"},
       {"T: {bfloat16, half, float, double}", "message: string"},
       /*isStateful=*/true},
      {"Unique",
       {"x: T"},
       {"y: T", "idx: out_idx"},
       {"T: type", "out_idx: {int32, int64} = DT_INT32"}},
      {"Bitcast",
       {"input: T"},
       {"output: type"},
       {"T: {bfloat16, half, float, double, int64, int32, uint8, uint16, "
        "uint32, uint64, int8, int16, complex64, complex128, qint8, quint8, "
        "qint16, quint16, qint32}",
        "type: {bfloat16, half, float, double, int64, int32, uint8, uint16, "
        "uint32, uint64, int8, int16, complex64, complex128, qint8, quint8, "
        "qint16, quint16, qint32}"}},
      {"MatrixBandPart",
       {"input: T", "num_lower: Tindex", "num_upper: Tindex"},
       {"band: T"},
       {"T: type", "Tindex: {int32, int64} = DT_INT64"}},
      {"CheckNumerics",
       {"tensor: T"},
       {"output: T"},
       {"T: {bfloat16, half, float, double}", "message: string"},
       /*isStateful=*/true},

      // Shape queries.
      {"Shape",
       {"input: T"},
       {"output: out_type"},
       {"T: type", "out_type: {int32, int64} = DT_INT32"}},
      {"ShapeN",
       {"input: N * T"},
       {"output: N * out_type"},
       {"N: int >= 1", "T: type", "out_type: {int32, int64} = DT_INT32"}},
      {"Size",
       {"input: T"},
       {"output: out_type"},
       {"T: type", "out_type: {int32, int64} = DT_INT32"}},
      {"Rank", {"input: T"}, {"output: int32"}, {"T: type"}},
      {"BroadcastGradientArgs",
       {"s0: T", "s1: T"},
       {"r0: T", "r1: T"},
       {"T: {int32, int64} = DT_INT32"}},

      // Reshaping.
      {"Reshape",
       {"tensor: T", "shape: Tshape"},
       {"output: T"},
       {"T: type", "Tshape: {int32, int64} = DT_INT32"}},
      {"Squeeze",
       {"input: T"},
       {"output: T"},
       {"T: type", "squeeze_dims: list(int) >= 0 = []"}},
      {"ExpandDims",
       {"input: T", "dim: Tdim"},
       {"output: T"},
       {"T: type", "Tdim: {int32, int64} = DT_INT32"}},
      {"Transpose",
       {"x: T", "perm: Tperm"},
       {"y: T"},
       {"T: type", "Tperm: {int32, int64} = DT_INT32"}},
      {"BroadcastTo",
       {"input: T", "shape: Tidx"},
       {"output: T"},
       {"T: type", "Tidx: {int32, int64} = DT_INT32"}},

      // Joining and splitting.
      {"Concat",
       {"concat_dim: int32", "values: N * T"},
       {"output: T"},
       {"N: int >= 2", "T: type"}},
      {"ConcatV2",
       {"values: N * T", "axis: Tidx"},
       {"output: T"},
       {"N: int >= 2", "T: type", "Tidx: {int32, int64} = DT_INT32"}},
      {"Split",
       {"split_dim: int32", "value: T"},
       {"output: num_split * T"},
       {"num_split: int >= 1", "T: type"}},
      {"SplitV",
       {"value: T", "size_splits: Tlen", "split_dim: int32"},
       {"output: num_split * T"},
       {"num_split: int >= 1", "T: type",
        "Tlen: {int8, int32, int64} = DT_INT64"}},
      {"Pack",
       {"values: N * T"},
       {"output: T"},
       {"N: int >= 1", "T: type", "axis: int = 0"}},
      {"Unpack",
       {"value: T"},
       {"output: num * T"},
       {"num: int >= 0", "T: type", "axis: int = 0"}},

      // Slicing and gathering.
      {"Slice",
       {"input: T", "begin: Index", "size: Index"},
       {"output: T"},
       {"T: type", "Index: {int32, int64}"}},
      {"StridedSlice",
       {"input: T", "begin: Index", "end: Index", "strides: Index"},
       {"output: T"},
       {"T: type", "Index: {int16, int32, int64}", "begin_mask: int = 0",
        "end_mask: int = 0", "ellipsis_mask: int = 0", "new_axis_mask: int = 0",
        "shrink_axis_mask: int = 0"}},
      {"StridedSliceGrad",
       {"shape: Index", "begin: Index", "end: Index", "strides: Index",
        "dy: T"},
       {"output: T"},
       {"T: type", "Index: {int32, int64}", "begin_mask: int = 0",
        "end_mask: int = 0", "ellipsis_mask: int = 0", "new_axis_mask: int = 0",
        "shrink_axis_mask: int = 0"}},
      {"Gather",
       {"params: Tparams", "indices: Tindices"},
       {"output: Tparams"},
       {"validate_indices: bool = true", "Tparams: type",
        "Tindices: {int32, int64}"}},
      {"GatherNd",
       {"params: Tparams", "indices: Tindices"},
       {"output: Tparams"},
       {"Tparams: type", "Tindices: {int16, int32, int64}",
        "bad_indices_policy: string = ''"}},
      {"ScatterNd",
       {"indices: Tindices", "updates: T", "shape: Tindices"},
       {"output: T"},
       {"T: type", "Tindices: {int16, int32, int64}",
        "bad_indices_policy: string = ''"}},
      {"TensorScatterUpdate",
       {"tensor: T", "indices: Tindices", "updates: T"},
       {"output: T"},
       {"T: type", "Tindices: {int16, int32, int64, uint16}",
        "bad_indices_policy: string = ''"}},
      {"TensorScatterAdd",
       {"tensor: T", "indices: Tindices", "updates: T"},
       {"output: T"},
       {"T: type", "Tindices: {int32, int64}",
        "bad_indices_policy: string = ''"}},
      {"TensorScatterSub",
       {"tensor: T", "indices: Tindices", "updates: T"},
       {"output: T"},
       {"T: type", "Tindices: {int32, int64}",
        "bad_indices_policy: string = ''"}},
      {"TensorScatterMin",
       {"tensor: T", "indices: Tindices", "updates: T"},
       {"output: T"},
       {"T: type", "Tindices: {int32, int64}",
        "bad_indices_policy: string = ''"}},
      {"TensorScatterMax",
       {"tensor: T", "indices: Tindices", "updates: T"},
       {"output: T"},
       {"T: type", "Tindices: {int32, int64}",
        "bad_indices_policy: string = ''"}},
      {"GatherV2",
       {"params: Tparams", "indices: Tindices", "axis: Taxis"},
       {"output: Tparams"},
       {"batch_dims: int = 0", "Tparams: type",
        "Tindices: {int16, int32, int64}", "Taxis: {int32, int64}"}},
      {"Where",
       {"input: T"},
       {"index: int64"},
       {"T: {numbertype, bool} = DT_BOOL"}},

      // Filling and padding.
      {"Fill",
       {"dims: index_type", "value: T"},
       {"output: T"},
       {"T: type", "index_type: {int32, int64} = DT_INT32"}},
      {"ZerosLike", {"x: T"}, {"y: T"}, {"T: type"}},
      {"OnesLike",
       {"x: T"},
       {"y: T"},
       {"T: {bfloat16, half, float, double, int8, uint8, int16, uint16, "
        "int32, uint32, int64, uint64, complex64, complex128, bool}"}},
      {"Tile",
       {"input: T", "multiples: Tmultiples"},
       {"output: T"},
       {"T: type", "Tmultiples: {int32, int64} = DT_INT32"}},
      {"Pad",
       {"input: T", "paddings: Tpaddings"},
       {"output: T"},
       {"T: type", "Tpaddings: {int32, int64} = DT_INT32"}},
      {"PadV2",
       {"input: T", "paddings: Tpaddings", "constant_values: T"},
       {"output: T"},
       {"T: type", "Tpaddings: {int32, int64} = DT_INT32"}},
      {"MirrorPad",
       {"input: T", "paddings: Tpaddings"},
       {"output: T"},
       {"T: type", "Tpaddings: {int32, int64} = DT_INT32",
        "mode: {'REFLECT', 'SYMMETRIC'}"}},
      {"OneHot",
       {"indices: TI", "depth: int32", "on_value: T", "off_value: T"},
       {"output: T"},
       {"axis: int = -1", "T: type",
        "TI: {uint8, int8, int32, int64} = DT_INT64"}},
  };
}

//===----------------------------------------------------------------------===//
// Shape functions
//===----------------------------------------------------------------------===//

static std::string constShape(InferenceContext &ctx) {
  if (auto shape = ctx.getTensorAttrShape("value"))
    ctx.setOutput(0, *shape);
  return "";
}

static std::string identityNShape(InferenceContext &ctx) {
  for (unsigned i = 0; i < ctx.getNumOutputs() && i < ctx.getNumInputs(); ++i)
    ctx.setOutput(i, ctx.getInputShape(i));
  return "";
}

/// Shape: a vector of the input's rank.
static std::string shapeShape(InferenceContext &ctx) {
  Shape in = ctx.getInputShape(0);
  ctx.setOutput(0, Shape::of({in.hasRank() ? in.rank() : Shape::kUnknown}));
  return "";
}

/// Reshape: the constant target shape, with one -1 inferred from the input.
static std::string reshapeShape(InferenceContext &ctx) {
  Shape in = ctx.getInputShape(0);
  auto target = ctx.getConstantInput(1);
  if (!target) {
    Shape shapeArg = ctx.getInputShape(1);
    ctx.setOutput(0, shapeArg.hasRank() && shapeArg.rank() == 1 &&
                             shapeArg.dims[0] >= 0
                         ? Shape::ofRank(shapeArg.dims[0])
                         : Shape::unknown());
    return "";
  }
  Shape out = Shape::of(*target);
  int64_t known = 1, unknownAt = -1;
  for (auto [i, d] : llvm::enumerate(out.dims)) {
    if (d == -1) {
      if (unknownAt >= 0)
        return "Cannot infer multiple unknown dimensions in shape " + out.str();
      unknownAt = i;
    } else if (d < 0) {
      return "Size " + std::to_string(i) + " must be non-negative, not " +
             std::to_string(d);
    } else if (llvm::MulOverflow(known, d, known)) {
      return "Shape " + out.str() +
             " is too large (more than 2**63 - 1 entries)";
    }
  }
  int64_t inCount = 1;
  bool inKnown = in.hasRank();
  for (int64_t d : in.dims)
    if (d < 0 || llvm::MulOverflow(inCount, d, inCount))
      inKnown = false;
  if (inKnown) {
    if (unknownAt >= 0) {
      if (known == 0 || inCount % known)
        return "Cannot reshape a tensor with " + std::to_string(inCount) +
               " elements to shape " + out.str();
      out.dims[unknownAt] = inCount / known;
    } else if (known != inCount) {
      return "Cannot reshape a tensor with " + std::to_string(inCount) +
             " elements to shape " + out.str() + " (" + std::to_string(known) +
             " elements)";
    }
  }
  ctx.setOutput(0, out);
  return "";
}

static std::string expandDimsShape(InferenceContext &ctx) {
  Shape in = ctx.getInputShape(0);
  auto axis = ctx.getConstantInput(1);
  if (!in.hasRank() || !axis || axis->size() != 1) {
    ctx.setOutput(0, in.hasRank() ? Shape::ofRank(in.rank() + 1)
                                  : Shape::unknown());
    return "";
  }
  int64_t a = (*axis)[0], rank = in.rank();
  if (a < -rank - 1 || a > rank)
    return "Tried to expand dim index " + std::to_string(a) +
           " for tensor with " + std::to_string(rank) + " dimensions.";
  if (a < 0)
    a += rank + 1;
  Shape out = in;
  out.dims.insert(out.dims.begin() + a, 1);
  ctx.setOutput(0, out);
  return "";
}

static std::string squeezeShape(InferenceContext &ctx) {
  Shape in = ctx.getInputShape(0);
  if (!in.hasRank()) {
    ctx.setOutput(0, Shape::unknown());
    return "";
  }
  auto dims =
      ctx.getIntListAttr("squeeze_dims").value_or(llvm::SmallVector<int64_t>());
  Shape out = Shape::of({});
  for (int64_t i = 0; i < in.rank(); ++i) {
    bool listed = llvm::any_of(
        dims, [&](int64_t d) { return d == i || d + in.rank() == i; });
    if (listed && in.dims[i] != 1 && in.dims[i] != Shape::kUnknown)
      return "Can not squeeze dim[" + std::to_string(i) +
             "], expected a dimension of 1, got " + std::to_string(in.dims[i]);
    if (dims.empty() && in.dims[i] == Shape::kUnknown) {
      ctx.setOutput(0, Shape::unknown());
      return "";
    }
    if (listed || (dims.empty() && in.dims[i] == 1))
      continue;
    out.dims.push_back(in.dims[i]);
  }
  ctx.setOutput(0, out);
  return "";
}

static std::string transposeShape(InferenceContext &ctx) {
  Shape in = ctx.getInputShape(0);
  auto perm = ctx.getConstantInput(1);
  if (!perm) {
    ctx.setOutput(0,
                  in.hasRank() ? Shape::ofRank(in.rank()) : Shape::unknown());
    return "";
  }
  if (in.hasRank() && int64_t(perm->size()) != in.rank())
    return "Dimension must be " + std::to_string(in.rank()) + " but is " +
           std::to_string(perm->size());
  Shape out = Shape::ofRank(perm->size());
  for (auto [i, p] : llvm::enumerate(*perm)) {
    if (p < 0 || p >= int64_t(perm->size()))
      return "perm[" + std::to_string(i) + "] = " + std::to_string(p) +
             " is out of range";
    out.dims[i] = in.hasRank() ? in.dims[p] : Shape::kUnknown;
  }
  ctx.setOutput(0, out);
  return "";
}

/// ConcatV2: inputs 0..N-1 joined along the constant axis (input N).
static std::string concatV2Shape(InferenceContext &ctx) {
  unsigned n = ctx.getNumInputs() - 1;
  auto axis = ctx.getConstantInput(n);
  Shape out = Shape::unknown();
  for (unsigned i = 0; i < n; ++i)
    if (ctx.getInputShape(i).hasRank())
      out = Shape::ofRank(ctx.getInputShape(i).rank());
  if (!axis || axis->size() != 1 || !out.hasRank()) {
    ctx.setOutput(0, out);
    return "";
  }
  int64_t rank = out.rank(), a = (*axis)[0];
  if (a < -rank || a >= rank)
    return "ConcatOp : Expected concatenating dimensions in the range [" +
           std::to_string(-rank) + ", " + std::to_string(rank) + "), but got " +
           std::to_string(a);
  if (a < 0)
    a += rank;
  int64_t total = 0;
  for (unsigned i = 0; i < n; ++i) {
    Shape s = ctx.getInputShape(i);
    if (!s.hasRank()) {
      total = Shape::kUnknown;
      continue;
    }
    if (s.rank() != rank)
      return "Shape must be rank " + std::to_string(rank) + " but is rank " +
             std::to_string(s.rank());
    for (int64_t d = 0; d < rank; ++d) {
      if (d == a)
        continue;
      if (out.dims[d] == Shape::kUnknown)
        out.dims[d] = s.dims[d];
      else if (s.dims[d] != Shape::kUnknown && s.dims[d] != out.dims[d])
        return "Dimension " + std::to_string(d) +
               " in both shapes must be equal, but are " +
               std::to_string(out.dims[d]) + " and " +
               std::to_string(s.dims[d]);
    }
    if (total != Shape::kUnknown)
      total =
          s.dims[a] == Shape::kUnknown ? Shape::kUnknown : total + s.dims[a];
  }
  out.dims[a] = total;
  ctx.setOutput(0, out);
  return "";
}

/// Pack: N inputs of one shape stacked along `axis`.
static std::string packShape(InferenceContext &ctx) {
  Shape elem = Shape::unknown();
  std::string error;
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i) {
    auto merged = mergeShapes(elem, ctx.getInputShape(i), error);
    if (!merged)
      return error;
    elem = *merged;
  }
  if (!elem.hasRank()) {
    ctx.setOutput(0, Shape::unknown());
    return "";
  }
  int64_t rank = elem.rank() + 1, axis = ctx.getIntAttr("axis").value_or(0);
  if (axis < -rank || axis >= rank)
    return "Invalid axis: " + std::to_string(axis) + "; must be in [" +
           std::to_string(-rank) + "," + std::to_string(rank) + ")";
  if (axis < 0)
    axis += rank;
  elem.dims.insert(elem.dims.begin() + axis, ctx.getNumInputs());
  ctx.setOutput(0, elem);
  return "";
}

/// Fill: the constant dims.
static std::string fillShape(InferenceContext &ctx) {
  if (auto dims = ctx.getConstantInput(0)) {
    for (int64_t d : *dims)
      if (d < 0)
        return "Fill dimensions must be >= 0, got " + std::to_string(d);
    ctx.setOutput(0, Shape::of(*dims));
  } else {
    Shape dimsShape = ctx.getInputShape(0);
    ctx.setOutput(0, dimsShape.hasRank() && dimsShape.rank() == 1 &&
                             dimsShape.dims[0] >= 0
                         ? Shape::ofRank(dimsShape.dims[0])
                         : Shape::unknown());
  }
  return "";
}

/// GatherV2: params[:axis] + indices + params[axis+1:], for a constant axis.
static std::string gatherV2Shape(InferenceContext &ctx) {
  Shape params = ctx.getInputShape(0), indices = ctx.getInputShape(1);
  auto axis = ctx.getConstantInput(2);
  if (!params.hasRank() || !indices.hasRank() || !axis || axis->size() != 1 ||
      ctx.getIntAttr("batch_dims").value_or(0) != 0) {
    ctx.setOutput(0, Shape::unknown());
    return "";
  }
  int64_t a = (*axis)[0], rank = params.rank();
  if (a < -rank || a >= rank)
    return "Shape must be at least rank " + std::to_string(a + 1) +
           " but is rank " + std::to_string(rank);
  if (a < 0)
    a += rank;
  Shape out = Shape::of({});
  out.dims.append(params.dims.begin(), params.dims.begin() + a);
  out.dims.append(indices.dims.begin(), indices.dims.end());
  out.dims.append(params.dims.begin() + a + 1, params.dims.end());
  ctx.setOutput(0, out);
  return "";
}

/// GatherNd: indices[:-1] + params[indices[-1]:].
static std::string gatherNdShape(InferenceContext &ctx) {
  Shape params = ctx.getInputShape(0), indices = ctx.getInputShape(1);
  for (const Shape *s : {&params, &indices})
    if (s->hasRank() && s->rank() < 1)
      return "Shape must be at least rank 1 but is rank 0";
  if (!params.hasRank() || !indices.hasRank() ||
      indices.dims.back() == Shape::kUnknown) {
    ctx.setOutput(0, Shape::unknown());
    return "";
  }
  int64_t depth = indices.dims.back();
  if (depth > params.rank())
    return "indices.shape[-1] must be <= params.rank, but saw indices shape: " +
           indices.str() + " and params shape: " + params.str();
  Shape out = Shape::of({});
  out.dims.append(indices.dims.begin(), indices.dims.end() - 1);
  out.dims.append(params.dims.begin() + depth, params.dims.end());
  ctx.setOutput(0, out);
  return "";
}

/// ScatterNd: the constant `shape`.
static std::string scatterNdShape(InferenceContext &ctx) {
  if (auto shape = ctx.getConstantInput(2)) {
    for (int64_t d : *shape)
      if (d < 0)
        return "Dimension " + std::to_string(d) + " must be >= 0";
    ctx.setOutput(0, Shape::of(*shape));
    return "";
  }
  Shape shapeShape = ctx.getInputShape(2);
  ctx.setOutput(0, shapeShape.hasRank() && shapeShape.rank() == 1
                       ? Shape::ofRank(shapeShape.dims[0])
                       : Shape::unknown());
  return "";
}

/// dims [start, end) of `shape`, clamped to its rank (as TensorFlow's
/// InferenceContext::Subshape).
static Shape subshape(const Shape &shape, int64_t start, int64_t end) {
  if (!shape.hasRank())
    return Shape::unknown();
  start = std::min(start, shape.rank());
  end = std::max(start, std::min(end, shape.rank()));
  return Shape::of(llvm::ArrayRef(shape.dims).slice(start, end - start));
}

/// The elements of a fully known shape, or -1.
static int64_t knownElements(const Shape &shape) {
  if (!shape.hasRank())
    return -1;
  int64_t count = 1;
  for (int64_t d : shape.dims)
    if (d == Shape::kUnknown || llvm::MulOverflow(count, d, count))
      return -1;
  return count;
}

/// Unique: the distinct values (how many is known only at run time) and an
/// index per element.
static std::string uniqueShape(InferenceContext &ctx) {
  Shape x = ctx.getInputShape(0);
  if (x.hasRank() && x.rank() != 1)
    return "Shape must be rank 1 but is rank " + std::to_string(x.rank());
  ctx.setOutput(0, Shape::ofRank(1));
  ctx.setOutput(1, x.hasRank() ? x : Shape::ofRank(1));
  return "";
}

/// Bytes per element of the DataTypes Bitcast takes.
static int64_t bitcastTypeSize(int32_t dtype) {
  switch (dtype) {
  case 4: case 6: case 11: case 12: // uint8, int8, qint8, quint8
    return 1;
  case 5: case 14: case 15: case 16: case 17: case 19: // 16-bit types
    return 2;
  case 1: case 3: case 13: case 22: // float, int32, qint32, uint32
    return 4;
  case 2: case 8: case 9: case 23: // double, complex64, int64, uint64
    return 8;
  case 18: // complex128
    return 16;
  default:
    return 0;
  }
}

/// Bitcast: the input's shape, with a last dimension added (to a smaller
/// type) or removed (to a larger one: it must hold the size ratio).
static std::string bitcastShape(InferenceContext &ctx) {
  Shape input = ctx.getInputShape(0);
  std::optional<int32_t> from = ctx.getTypeAttr("T"),
                         to = ctx.getTypeAttr("type");
  if (!input.hasRank() || !from || !to) {
    ctx.setOutput(0, Shape::unknown());
    return "";
  }
  int64_t inSize = bitcastTypeSize(*from), outSize = bitcastTypeSize(*to);
  if (!inSize || !outSize)
    return "Cannot bitcast types because one of the type sizes is zero.";
  Shape out = input;
  if (inSize > outSize) {
    out.dims.push_back(inSize / outSize);
  } else if (inSize < outSize) {
    if (input.rank() < 1)
      return "Shape must be at least rank 1 but is rank 0";
    int64_t last = input.dims.back(), ratio = outSize / inSize;
    if (last != Shape::kUnknown && last != ratio)
      return "Cannot bitcast due to shape. " + std::to_string(last) +
             " does not match " + std::to_string(ratio);
    out.dims.pop_back();
  }
  ctx.setOutput(0, out);
  return "";
}

/// TensorScatterUpdate/Add/Sub/Min/Max: the tensor's shape, once the
/// updates fit it: the indices' outer dims, then the tensor's dims past the
/// index depth (TensorFlow's ScatterNdShapeHelper, with its messages).
static std::string tensorScatterShape(InferenceContext &ctx) {
  Shape input = ctx.getInputShape(0), indices = ctx.getInputShape(1),
        updates = ctx.getInputShape(2);
  for (const Shape *s : {&input, &indices})
    if (s->hasRank() && s->rank() < 1)
      return "Shape must be at least rank 1 but is rank 0";
  if (knownElements(input) == 0 &&
      (knownElements(indices) > 0 || knownElements(updates) > 0))
    return "Indices and updates specified for empty input";
  if (indices.hasRank() && updates.hasRank() && updates.rank() != 0 &&
      indices.dims.back() != Shape::kUnknown) {
    int64_t outer = indices.rank() - 1, depth = indices.dims.back();
    std::string error;
    Shape prefixIndices = subshape(indices, 0, outer),
          prefixUpdates = subshape(updates, 0, outer);
    if (!mergeShapes(prefixIndices, prefixUpdates, error))
      return "Dimensions [0," + std::to_string(outer) +
             ") of indices[shape=" + indices.str() +
             "] = " + prefixIndices.str() + " must match dimensions [0," +
             std::to_string(outer) + ") of updates[shape=" + updates.str() +
             "] = " + prefixUpdates.str() + ": " + error;
    if (input.hasRank()) {
      Shape suffixInput = subshape(input, depth, input.rank()),
            suffixUpdates = subshape(updates, outer, updates.rank());
      if (!mergeShapes(suffixInput, suffixUpdates, error))
        return "Dimensions [" + std::to_string(depth) + "," +
               std::to_string(input.rank()) +
               ") of input[shape=" + input.str() + "] = " + suffixInput.str() +
               " must match dimensions [" + std::to_string(outer) + "," +
               std::to_string(updates.rank()) +
               ") of updates[shape=" + updates.str() +
               "] = " + suffixUpdates.str() + ": " + error;
    }
  }
  ctx.setOutput(0, input);
  return "";
}

/// Slice with constant begin and size (-1: to the end).
static std::string sliceShape(InferenceContext &ctx) {
  Shape in = ctx.getInputShape(0);
  auto begin = ctx.getConstantInput(1), size = ctx.getConstantInput(2);
  if (!size) {
    ctx.setOutput(0,
                  in.hasRank() ? Shape::ofRank(in.rank()) : Shape::unknown());
    return "";
  }
  Shape out = Shape::of(*size);
  for (size_t d = 0; d < size->size(); ++d) {
    if ((*size)[d] != -1)
      continue;
    bool known = begin && in.hasRank() && d < in.dims.size() && in.dims[d] >= 0;
    out.dims[d] = known ? in.dims[d] - (*begin)[d] : Shape::kUnknown;
  }
  if (in.hasRank() && in.rank() != out.rank())
    return "Shape must be rank " + std::to_string(in.rank()) + " but is rank " +
           std::to_string(out.rank());
  ctx.setOutput(0, out);
  return "";
}

/// Pad with constant paddings ([rank, 2]).
static std::string padShape(InferenceContext &ctx) {
  Shape in = ctx.getInputShape(0);
  auto paddings = ctx.getConstantInput(1);
  if (!in.hasRank() || !paddings) {
    ctx.setOutput(0,
                  in.hasRank() ? Shape::ofRank(in.rank()) : Shape::unknown());
    return "";
  }
  if (int64_t(paddings->size()) != 2 * in.rank())
    return "The first dimension of paddings must be the rank of inputs " +
           std::to_string(in.rank());
  Shape out = in;
  for (int64_t d = 0; d < in.rank(); ++d)
    if (in.dims[d] >= 0)
      out.dims[d] = in.dims[d] + (*paddings)[2 * d] + (*paddings)[2 * d + 1];
  ctx.setOutput(0, out);
  return "";
}

static std::string ensureShapeShape(InferenceContext &ctx) {
  std::string error;
  Shape declared = ctx.getShapeAttr("shape").value_or(Shape::unknown());
  auto out = mergeShapes(ctx.getInputShape(0), declared, error);
  if (!out)
    return error;
  ctx.setOutput(0, *out);
  return "";
}

static std::string axisError(int64_t axis, int64_t rank) {
  return "-input rank(-" + std::to_string(rank) +
         ") <= split_dim < input rank (" + std::to_string(rank) +
         "), but got " + std::to_string(axis);
}

/// Split: num_split equal pieces along the constant split_dim (input 0).
static std::string splitShape(InferenceContext &ctx) {
  Shape in = ctx.getInputShape(1);
  auto axis = ctx.getConstantInput(0);
  int64_t n = ctx.getNumOutputs();
  Shape piece = in.hasRank() ? Shape::ofRank(in.rank()) : Shape::unknown();
  if (in.hasRank() && axis && axis->size() == 1) {
    int64_t a = (*axis)[0];
    if (!normalizeAxis(a, in.rank()))
      return axisError((*axis)[0], in.rank());
    piece = in;
    if (in.dims[a] >= 0) {
      if (in.dims[a] % n)
        return "Number of ways to split should evenly divide the split "
               "dimension, but got split_dim " +
               std::to_string(a) + " (size = " + std::to_string(in.dims[a]) +
               ") and num_split " + std::to_string(n);
      piece.dims[a] = in.dims[a] / n;
    }
  }
  for (int64_t i = 0; i < n; ++i)
    ctx.setOutput(i, piece);
  return "";
}

/// SplitV: pieces of the constant size_splits (one may be -1).
static std::string splitVShape(InferenceContext &ctx) {
  Shape in = ctx.getInputShape(0);
  auto sizes = ctx.getConstantInput(1);
  auto axis = ctx.getConstantInput(2);
  unsigned n = ctx.getNumOutputs();
  if (!in.hasRank() || !axis || axis->size() != 1 || !sizes) {
    for (unsigned i = 0; i < n; ++i)
      ctx.setOutput(i,
                    in.hasRank() ? Shape::ofRank(in.rank()) : Shape::unknown());
    return "";
  }
  int64_t a = (*axis)[0];
  if (!normalizeAxis(a, in.rank()))
    return axisError((*axis)[0], in.rank());
  if (sizes->size() != n)
    return "Length of size_splits should be equal to the value of num_split "
           "but got " +
           std::to_string(sizes->size()) + " and " + std::to_string(n);
  int64_t known = 0, unknownAt = -1;
  for (auto [i, size] : llvm::enumerate(*sizes)) {
    if (size == -1) {
      if (unknownAt >= 0)
        return "There can only be one -1 in the input.";
      unknownAt = i;
    } else {
      known += size;
    }
  }
  int64_t dim = in.dims[a];
  if (dim >= 0 && ((unknownAt < 0 && known != dim) || known > dim))
    return "Determined shape must either match input shape along split_dim "
           "exactly if fully specified, or be less than the size of the input "
           "along split_dim if not fully specified.  Got: " +
           std::to_string(known);
  for (unsigned i = 0; i < n; ++i) {
    Shape piece = in;
    piece.dims[a] = int64_t(i) == unknownAt
                        ? (dim >= 0 ? dim - known : Shape::kUnknown)
                        : (*sizes)[i];
    ctx.setOutput(i, piece);
  }
  return "";
}

/// Unpack: `num` outputs with dimension `axis` removed.
static std::string unpackShape(InferenceContext &ctx) {
  Shape in = ctx.getInputShape(0);
  Shape out = Shape::unknown();
  if (in.hasRank()) {
    int64_t axis = ctx.getIntAttr("axis").value_or(0);
    if (!normalizeAxis(axis, in.rank()))
      return "Invalid axis: " + std::to_string(axis) + "; must be in [" +
             std::to_string(-in.rank()) + "," + std::to_string(in.rank()) + ")";
    int64_t n = ctx.getNumOutputs();
    if (in.dims[axis] >= 0 && in.dims[axis] != n)
      return "Dimension must be " + std::to_string(n) + " but is " +
             std::to_string(in.dims[axis]);
    out = in;
    out.dims.erase(out.dims.begin() + axis);
  }
  for (unsigned i = 0; i < ctx.getNumOutputs(); ++i)
    ctx.setOutput(i, out);
  return "";
}

/// StridedSlice with constant begin, end and strides.
static std::string stridedSliceShape(InferenceContext &ctx) {
  Shape in = ctx.getInputShape(0);
  auto begin = ctx.getConstantInput(1), end = ctx.getConstantInput(2),
       strides = ctx.getConstantInput(3);
  if (!in.hasRank() || !begin || !end || !strides) {
    ctx.setOutput(0, Shape::unknown());
    return "";
  }
  StridedSliceMasks masks;
  masks.begin = ctx.getIntAttr("begin_mask").value_or(0);
  masks.end = ctx.getIntAttr("end_mask").value_or(0);
  masks.ellipsis = ctx.getIntAttr("ellipsis_mask").value_or(0);
  masks.newAxis = ctx.getIntAttr("new_axis_mask").value_or(0);
  masks.shrinkAxis = ctx.getIntAttr("shrink_axis_mask").value_or(0);
  StridedSlicePlan plan;
  std::string error =
      planStridedSlice(in.dims, *begin, *end, *strides, masks, plan);
  if (!error.empty())
    return error;
  ctx.setOutput(0, Shape::of(plan.outputShape));
  return "";
}

/// OneHot: the indices' shape with `depth` inserted at `axis`.
static std::string oneHotShape(InferenceContext &ctx) {
  Shape indices = ctx.getInputShape(0);
  if (!indices.hasRank()) {
    ctx.setOutput(0, Shape::unknown());
    return "";
  }
  int64_t axis = ctx.getIntAttr("axis").value_or(-1), rank = indices.rank();
  if (axis < -1 || axis > rank)
    return "Expected axis to be -1 or between [0, " + std::to_string(rank + 1) +
           ").  But received: " + std::to_string(axis);
  auto depth = ctx.getConstantInput(1);
  if (depth && depth->size() == 1 && (*depth)[0] < 0)
    return "depth must be non-negative, got: " + std::to_string((*depth)[0]);
  Shape out = indices;
  out.dims.insert(out.dims.begin() + (axis == -1 ? rank : axis),
                  depth && depth->size() == 1 ? (*depth)[0] : Shape::kUnknown);
  ctx.setOutput(0, out);
  return "";
}

/// Where: [number of true elements, rank].
static std::string whereShape(InferenceContext &ctx) {
  Shape in = ctx.getInputShape(0);
  ctx.setOutput(0, Shape::of({Shape::kUnknown,
                              in.hasRank() ? in.rank() : Shape::kUnknown}));
  return "";
}

/// BroadcastTo: the constant target, which the input must broadcast to.
static std::string broadcastToShape(InferenceContext &ctx) {
  std::string error = shapes::fromShapeInput(ctx, 1);
  if (!error.empty())
    return error;
  Shape in = ctx.getInputShape(0), target = ctx.getOutputs()[0];
  if (!in.hasRank() || !target.hasRank())
    return "";
  if (in.rank() > target.rank())
    return "Rank of input (" + std::to_string(in.rank()) +
           ") must be no greater than rank of output shape (" +
           std::to_string(target.rank()) + ").";
  int64_t offset = target.rank() - in.rank();
  for (int64_t d = 0; d < in.rank(); ++d) {
    int64_t from = in.dims[d], to = target.dims[d + offset];
    if (from >= 0 && to >= 0 && from != 1 && from != to)
      return "Unable to broadcast tensor of shape " + in.str() +
             " to tensor of shape " + target.str();
  }
  return "";
}

/// BroadcastGradientArgs: two vectors of unknown length.
static std::string broadcastGradientArgsShape(InferenceContext &ctx) {
  ctx.setOutput(0, Shape::ofRank(1));
  ctx.setOutput(1, Shape::ofRank(1));
  return "";
}

/// Tile: each dim times the constant multiple.
static std::string tileShape(InferenceContext &ctx) {
  Shape in = ctx.getInputShape(0);
  auto multiples = ctx.getConstantInput(1);
  if (!in.hasRank()) {
    ctx.setOutput(0, Shape::unknown());
    return "";
  }
  if (!multiples) {
    ctx.setOutput(0, Shape::ofRank(in.rank()));
    return "";
  }
  if (int64_t(multiples->size()) != in.rank())
    return "Expected multiples argument to be a vector of length " +
           std::to_string(in.rank()) + " but got length " +
           std::to_string(multiples->size());
  Shape out = in;
  for (int64_t d = 0; d < in.rank(); ++d)
    if (in.dims[d] >= 0)
      out.dims[d] = in.dims[d] * (*multiples)[d];
  ctx.setOutput(0, out);
  return "";
}

/// StridedSliceGrad: the constant `shape` input.
static std::string stridedSliceGradShape(InferenceContext &ctx) {
  return shapes::fromShapeInput(ctx, 0);
}

detail::ShapeFnTable cleave::ops::detail::getArrayShapeFns() {
  return {
      {"Const", constShape},
      {"Placeholder", shapes::fromShapeAttr},
      {"PlaceholderWithDefault", shapes::fromShapeAttr},
      {"Identity", shapes::unchanged},
      {"IdentityN", identityNShape},
      {"Snapshot", shapes::unchanged},
      {"StopGradient", shapes::unchanged},
      {"PreventGradient", shapes::unchanged},
      {"CheckNumerics", shapes::unchanged},
      {"CheckNumericsV2", shapes::unchanged},
      {"Unique", uniqueShape},
      {"Bitcast", bitcastShape},
      {"MatrixBandPart", shapes::unchanged},
      {"ReverseV2", shapes::unchanged},
      {"ZerosLike", shapes::unchanged},
      {"OnesLike", shapes::unchanged},
      {"EnsureShape", ensureShapeShape},
      {"Shape", shapeShape},
      {"Size", shapes::scalar},
      {"Rank", shapes::scalar},
      {"Reshape", reshapeShape},
      {"ExpandDims", expandDimsShape},
      {"Squeeze", squeezeShape},
      {"Transpose", transposeShape},
      {"ConcatV2", concatV2Shape},
      {"Pack", packShape},
      {"Fill", fillShape},
      {"GatherV2", gatherV2Shape},
      {"GatherNd", gatherNdShape},
      {"ScatterNd", scatterNdShape},
      {"TensorScatterUpdate", tensorScatterShape},
      {"TensorScatterAdd", tensorScatterShape},
      {"TensorScatterSub", tensorScatterShape},
      {"TensorScatterMin", tensorScatterShape},
      {"TensorScatterMax", tensorScatterShape},
      {"Slice", sliceShape},
      {"Pad", padShape},
      {"Split", splitShape},
      {"SplitV", splitVShape},
      {"Unpack", unpackShape},
      {"StridedSlice", stridedSliceShape},
      {"StridedSliceGrad", stridedSliceGradShape},
      {"OneHot", oneHotShape},
      {"Where", whereShape},
      {"BroadcastTo", broadcastToShape},
      {"BroadcastGradientArgs", broadcastGradientArgsShape},
      {"Tile", tileShape},
  };
}

//===----------------------------------------------------------------------===//
// Gradients (array_grad.py), in TensorFlow's node order and names
//===----------------------------------------------------------------------===//

static std::string passThroughGrad(GradientContext &ctx) {
  ctx.setInputGrad(0, ctx.getOutputGrad(0));
  return "";
}

/// Reshape, ExpandDims, Squeeze: the gradient takes the input's shape back.
static std::string reshapeGrad(GradientContext &ctx) {
  GradTensor shape = ctx.op("Shape", {ctx.getInput(0)});
  ctx.setInputGrad(0, ctx.op("Reshape", {ctx.getOutputGrad(0), shape}));
  return "";
}

static std::string transposeGrad(GradientContext &ctx) {
  auto perm = ctx.getConstantInts(ctx.getInput(1));
  if (!perm)
    return "gradient of Transpose needs a constant permutation";
  std::vector<int64_t> inverse(perm->size());
  for (auto [i, p] : llvm::enumerate(*perm)) {
    if (p < 0 || p >= int64_t(perm->size()))
      return "Transpose permutation " + std::to_string(p) + " is out of range";
    inverse[p] = i;
  }
  GradTensor inv = ctx.intVector(inverse, "InvertPermutation");
  ctx.setInputGrad(0, ctx.op("Transpose", {ctx.getOutputGrad(0), inv}));
  return "";
}

/// The gradient of the value: the sum over the broadcast axes, reshaped.
static std::string broadcastToGrad(GradientContext &ctx) {
  GradTensor valueShape = ctx.op("Shape", {ctx.getInput(0)});
  auto r = ctx.addNode("BroadcastGradientArgs", {ctx.getInput(1), valueShape});
  if (r.size() != 2)
    return "";
  GradTensor sum = ctx.op("Sum", {ctx.getOutputGrad(0), r[1]},
                          {GradAttr::boolean("keep_dims", true)});
  ctx.setInputGrad(0, ctx.op("Reshape", {sum, valueShape}));
  return "";
}

/// Fill(dims, value): the value's gradient sums the whole output's.
static std::string fillGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor rank = ctx.op("Rank", {grad});
  GradTensor axes = ctx.op("Range",
                           {ctx.scalar(0, grads::kInt32, "range/start"), rank,
                            ctx.scalar(1, grads::kInt32, "range/delta")},
                           {}, "range");
  ctx.setInputGrad(
      1, ctx.op("Sum", {grad, axes}, {GradAttr::boolean("keep_dims", false)}));
  return "";
}

static std::string stridedSliceGrad(GradientContext &ctx) {
  std::vector<GradAttr> attrs;
  for (const char *mask : {"begin_mask", "end_mask", "ellipsis_mask",
                           "new_axis_mask", "shrink_axis_mask"})
    attrs.push_back(GradAttr::integer(mask, ctx.getIntAttr(mask).value_or(0)));
  GradTensor shape = ctx.op("Shape", {ctx.getInput(0)});
  ctx.setInputGrad(0, ctx.op("StridedSliceGrad",
                             {shape, ctx.getInput(1), ctx.getInput(2),
                              ctx.getInput(3), ctx.getOutputGrad(0)},
                             attrs));
  return "";
}

/// StridedSliceGrad(shape, begin, end, strides, dy) scatters dy: its
/// gradient is the same strided slice of the incoming one.
static std::string stridedSliceGradGrad(GradientContext &ctx) {
  std::vector<GradAttr> attrs;
  for (const char *mask : {"begin_mask", "end_mask", "ellipsis_mask",
                           "new_axis_mask", "shrink_axis_mask"})
    attrs.push_back(GradAttr::integer(mask, ctx.getIntAttr(mask).value_or(0)));
  ctx.setInputGrad(4, ctx.op("StridedSlice",
                             {ctx.getOutputGrad(0), ctx.getInput(1),
                              ctx.getInput(2), ctx.getInput(3)},
                             attrs));
  return "";
}

/// Pack: each input's gradient is its slice of the packed gradient.
static std::string packGrad(GradientContext &ctx) {
  int64_t n = ctx.getIntAttr("N").value_or(ctx.getNumInputs());
  auto slices = ctx.addNode(
      "Unpack", {ctx.getOutputGrad(0)},
      {GradAttr::integer("num", n),
       GradAttr::integer("axis", ctx.getIntAttr("axis").value_or(0))});
  for (auto [i, g] : llvm::enumerate(slices))
    ctx.setInputGrad(i, g);
  return "";
}

/// Unpack: the outputs' gradients packed back (zeros for those none
/// reached).
static std::string unpackGrad(GradientContext &ctx) {
  llvm::SmallVector<GradTensor> grads;
  for (unsigned i = 0; i < ctx.getNumOutputs(); ++i)
    grads.push_back(ctx.getOutputGrad(i));
  ctx.setInputGrad(
      0,
      ctx.op("Pack", grads,
             {GradAttr::integer("axis", ctx.getIntAttr("axis").value_or(0))}));
  return "";
}

/// IdentityN: each output's gradient goes to its input.
static std::string identityNGrad(GradientContext &ctx) {
  for (unsigned i = 0; i < ctx.getNumOutputs(); ++i)
    ctx.setInputGrad(i, ctx.getOutputGrad(i));
  return "";
}

/// Slice: the gradient is padded back to the input's shape.
static std::string sliceGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor x = ctx.getInput(0), begin = ctx.getInput(1);
  GradTensor column = ctx.intVector({-1, 1}, "stack");
  GradTensor before = ctx.op("Reshape", {begin, column});
  GradTensor remaining =
      ctx.op("Sub",
             {ctx.op("Sub", {ctx.op("Shape", {x}),
                             ctx.op("Shape", {grad}, {}, "Shape_1")}),
              begin},
             {}, "sub_1");
  GradTensor after = ctx.op("Reshape", {remaining, column});
  GradTensor axis = ctx.scalar(1, grads::kInt32, "concat/axis");
  GradTensor paddings = ctx.op("ConcatV2", {before, after, axis}, {}, "concat");
  ctx.setInputGrad(0, ctx.op("Pad", {grad, paddings}));
  return "";
}

/// Pad: the gradient is the slice of the padded region that was the input.
static std::string padGrad(GradientContext &ctx) {
  GradTensor x = ctx.getInput(0), paddings = ctx.getInput(1);
  GradTensor before = ctx.op(
      "Slice", {paddings, ctx.intVector({0, 0}), ctx.intVector({-1, 1})});
  GradTensor begin = ctx.op("Reshape", {before, ctx.intVector({-1})});
  GradTensor size = ctx.op("Shape", {x});
  ctx.setInputGrad(
      0, ctx.op("Slice", {ctx.getOutputGrad(0), begin, size}, {}, "Slice_1"));
  return "";
}

/// ConcatV2 along a constant axis of inputs of static size along it: the
/// gradient splits at the same sizes.
static std::string concatGrad(GradientContext &ctx) {
  unsigned n = ctx.getNumInputs() - 1;
  auto axisValue = ctx.getConstantInts(ctx.getInput(n));
  if (!axisValue || axisValue->size() != 1)
    return "gradient of ConcatV2 needs a constant axis";
  std::vector<int64_t> sizes;
  for (unsigned i = 0; i < n; ++i) {
    Shape shape = ctx.getShape(ctx.getInput(i));
    int64_t axis = (*axisValue)[0];
    if (!shape.hasRank())
      return "gradient of ConcatV2 needs inputs of known rank (run "
             "graph-infer-shapes first)";
    if (axis < 0)
      axis += shape.rank();
    if (axis < 0 || axis >= shape.rank() || shape.dims[axis] < 0)
      return "gradient of ConcatV2 needs the inputs' sizes along the axis";
    sizes.push_back(shape.dims[axis]);
  }
  auto parts = ctx.addNode(
      "SplitV", {ctx.getOutputGrad(0), ctx.intVector(sizes), ctx.getInput(n)},
      {GradAttr::integer("num_split", n)});
  for (unsigned i = 0; i < n && i < parts.size(); ++i)
    ctx.setInputGrad(i, parts[i]);
  return "";
}

/// Tile: the gradient, viewed as [m0, d0, m1, d1, ...], summed over the
/// multiples.
static std::string tileGrad(GradientContext &ctx) {
  GradTensor multiples = ctx.getInput(1);
  GradTensor inputShape = ctx.op("Shape", {ctx.getInput(0)});
  GradTensor pairs = ctx.op("Pack", {multiples, inputShape},
                            {GradAttr::integer("axis", 0)}, "stack");
  GradTensor splitShape = ctx.op(
      "Reshape",
      {ctx.op("Transpose", {pairs, ctx.intVector({1, 0}, "transpose/perm")}, {},
              "transpose"),
       ctx.intVector({-1}, "Reshape/shape")});
  GradTensor axes = ctx.op("Range",
                           {ctx.scalar(0, grads::kInt32, "range/start"),
                            ctx.op("Size", {splitShape}),
                            ctx.scalar(2, grads::kInt32, "range/delta")},
                           {}, "range");
  GradTensor viewed =
      ctx.op("Reshape", {ctx.getOutputGrad(0), splitShape}, {}, "Reshape_1");
  ctx.setInputGrad(0, ctx.op("Sum", {viewed, axes},
                             {GradAttr::boolean("keep_dims", false)}));
  return "";
}

/// GatherV2 along axis 0: an IndexedSlices of the gathered rows.
/// GatherV2 along an axis a > 0: the gradient, its index dims flattened,
/// is moved to put that axis first, summed into rows by index
/// (UnsortedSegmentSum), and moved back; a dense gradient, as
/// TensorFlow's _GatherV2Grad.
static std::string gatherV2AxisGrad(GradientContext &ctx, int64_t axis) {
  GradTensor params = ctx.getInput(0), indices = ctx.getInput(1);
  Shape shape = ctx.getShape(params);
  if (!shape.hasRank())
    return "the gradient of GatherV2 along an axis other than 0 needs the "
           "rank of the params (for now)";
  int64_t rank = shape.rank();
  if (axis < -rank || axis >= rank)
    return "Expected axis in the range [" + std::to_string(-rank) + ", " +
           std::to_string(rank) + "), but got " + std::to_string(axis);
  if (axis < 0)
    axis += rank;
  GradTensor paramsShape = ctx.op("Shape", {params});
  auto slice = [&](int64_t begin, int64_t end, bool toEnd, const char *name) {
    return ctx.op("StridedSlice",
                  {paramsShape,
                   ctx.intVector({begin}, std::string(name) + "/stack"),
                   ctx.intVector({end}, std::string(name) + "/stack_1"),
                   ctx.intVector({1}, std::string(name) + "/stack_2")},
                  {GradAttr::integer("end_mask", toEnd ? 1 : 0),
                   GradAttr::integer("shrink_axis_mask", 0)},
                  name);
  };
  GradTensor outer = slice(0, axis, false, "strided_slice");
  GradTensor inner = slice(axis + 1, 0, true, "strided_slice_1");
  GradTensor rows =
      ctx.op("StridedSlice",
             {paramsShape, ctx.intVector({axis}, "strided_slice_2/stack"),
              ctx.intVector({axis + 1}, "strided_slice_2/stack_1"),
              ctx.intVector({1}, "strided_slice_2/stack_2")},
             {GradAttr::integer("shrink_axis_mask", 1)}, "strided_slice_2");
  GradTensor valuesShape =
      ctx.op("ConcatV2",
             {outer, ctx.intVector({-1}, "concat/values_1"), inner,
              ctx.scalar(0, grads::kInt32, "concat/axis")},
             {}, "concat");
  GradTensor values = ctx.op("Reshape", {ctx.getOutputGrad(0), valuesShape});
  GradTensor flatIndices =
      ctx.op("Reshape", {indices, ctx.intVector({-1}, "Reshape_1/shape")}, {},
             "Reshape_1");
  // values[..., axis, ...] first, and back.
  std::vector<int64_t> toFront{axis}, fromFront;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      toFront.push_back(d);
  for (int64_t d = 1; d <= axis; ++d)
    fromFront.push_back(d);
  fromFront.push_back(0);
  for (int64_t d = axis + 1; d < rank; ++d)
    fromFront.push_back(d);
  GradTensor front =
      ctx.op("Transpose", {values, ctx.intVector(toFront, "transpose/perm")},
             {}, "transpose");
  GradTensor summed = ctx.op("UnsortedSegmentSum", {front, flatIndices, rows});
  ctx.setInputGrad(
      0, ctx.op("Transpose",
                {summed, ctx.intVector(fromFront, "transpose_1/perm")}, {},
                "transpose_1"));
  return "";
}

static std::string gatherV2Grad(GradientContext &ctx) {
  GradTensor params = ctx.getInput(0), indices = ctx.getInput(1);
  auto axis = ctx.getConstantInts(ctx.getInput(2));
  if (!axis || axis->size() != 1 ||
      ctx.getIntAttr("batch_dims").value_or(0) != 0)
    return "the gradient of GatherV2 supports a constant axis and "
           "batch_dims 0 only (for now)";
  if ((*axis)[0] != 0)
    return gatherV2AxisGrad(ctx, (*axis)[0]);
  GradTensor shape64 =
      ctx.op("Shape", {params}, {GradAttr::dtype("out_type", grads::kInt64)});
  GradTensor paramsShape = ctx.op("Cast", {shape64},
                                  {GradAttr::dtype("DstT", grads::kInt32),
                                   GradAttr::boolean("Truncate", false)});
  GradTensor size = ctx.op("Size", {indices});
  GradTensor indicesSize = ctx.op(
      "ExpandDims", {size, ctx.scalar(0, grads::kInt32, "ExpandDims/dim")});
  GradTensor tail =
      ctx.op("StridedSlice",
             {paramsShape, ctx.intVector({1}, "strided_slice/stack"),
              ctx.intVector({0}, "strided_slice/stack_1"),
              ctx.intVector({1}, "strided_slice/stack_2")},
             {GradAttr::integer("end_mask", 1)}, "strided_slice");
  GradTensor valuesShape =
      ctx.op("ConcatV2",
             {indicesSize, tail, ctx.scalar(0, grads::kInt32, "concat/axis")},
             {}, "concat");
  GradTensor values = ctx.op("Reshape", {ctx.getOutputGrad(0), valuesShape});
  GradTensor flatIndices = ctx.op("Reshape", {indices, indicesSize});
  ctx.setInputGradSlices(0, values, flatIndices, paramsShape);
  return "";
}

/// GatherNd: the gradient scattered back to where it was gathered from
/// (duplicates sum), as TensorFlow's _GatherNdGrad builds it for indices
/// other than a column of rows (for which it makes IndexedSlices).
static std::string gatherNdGrad(GradientContext &ctx) {
  GradTensor indices = ctx.getInput(1);
  GradTensor shape =
      ctx.op("Shape", {ctx.getInput(0)},
             {GradAttr::dtype("out_type", ctx.getDType(indices))});
  ctx.setInputGrad(0,
                   ctx.op("ScatterNd", {indices, ctx.getOutputGrad(0), shape}));
  return "";
}

/// ScatterNd: the updates' gradient is gathered where they were scattered.
static std::string scatterNdGrad(GradientContext &ctx) {
  ctx.setInputGrad(1,
                   ctx.op("GatherNd", {ctx.getOutputGrad(0), ctx.getInput(0)}));
  return "";
}

/// TensorScatterUpdate: the overwritten elements get no gradient; the
/// updates get the gradient where they went (TensorFlow's
/// _TensorScatterUpdateGrad).
static std::string tensorScatterUpdateGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0), indices = ctx.getInput(1);
  ctx.setInputGrad(2, ctx.op("GatherNd", {grad, indices}));
  GradTensor zeros = ctx.op("ZerosLike", {ctx.getInput(2)}, {}, "zeros_like");
  ctx.setInputGrad(0, ctx.op("TensorScatterUpdate",
                             {ctx.op("Identity", {grad}), indices, zeros}));
  return "";
}

/// TensorScatterAdd and TensorScatterSub: the tensor passes the gradient
/// on; the updates get it (negated for Sub) where they went.
template <bool isSub>
static std::string tensorScatterAddOrSubGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0);
  GradTensor updatesGrad = ctx.op("GatherNd", {grad, ctx.getInput(1)});
  ctx.setInputGrad(0, ctx.op("Identity", {grad}));
  ctx.setInputGrad(2, isSub ? ctx.op("Neg", {updatesGrad}) : updatesGrad);
  return "";
}

/// TensorScatterMin and TensorScatterMax: the gradient goes to whichever of
/// the tensor's element and its updates equals the result, split evenly
/// among ties (TensorFlow's _TensorScatterMinOrMaxGrad).
static std::string tensorScatterMinOrMaxGrad(GradientContext &ctx) {
  GradTensor grad = ctx.getOutputGrad(0), out = ctx.getOutput(0);
  GradTensor x = ctx.getInput(0), indices = ctx.getInput(1),
             y = ctx.getInput(2);
  int32_t dtype = ctx.getDType(grad);
  auto indicator = [&](GradTensor a, GradTensor b) {
    return ctx.op(
        "Cast", {ctx.op("Equal", {a, b})},
        {GradAttr::dtype("DstT", dtype), GradAttr::boolean("Truncate", false)});
  };
  GradTensor xIndicators = indicator(x, out);
  GradTensor yOutput = ctx.op("GatherNd", {out, indices});
  GradTensor yIndicators = indicator(y, yOutput);
  GradTensor shape = ctx.op(
      "Shape", {x}, {GradAttr::dtype("out_type", ctx.getDType(indices))});
  GradTensor ysIndicators = ctx.op("ScatterNd", {indices, yIndicators, shape});
  GradTensor indicators = ctx.op("AddV2", {xIndicators, ysIndicators});
  ctx.setInputGrad(
      0, ctx.op("RealDiv", {ctx.op("Mul", {grad, xIndicators}), indicators}));
  GradTensor shared = ctx.op("RealDiv", {grad, indicators});
  ctx.setInputGrad(
      2, ctx.op("Mul", {ctx.op("GatherNd", {shared, indices}), yIndicators}));
  return "";
}

/// Split(axis, value) and SplitV(value, sizes, axis): the gradients of the
/// pieces, concatenated.
static std::string splitGrad(GradientContext &ctx) {
  bool isV = ctx.getOpType() == "SplitV";
  std::vector<GradTensor> inputs;
  for (unsigned i = 0; i < ctx.getNumOutputs(); ++i)
    inputs.push_back(ctx.getOutputGrad(i));
  inputs.push_back(ctx.getInput(isV ? 2 : 0));
  ctx.setInputGrad(isV ? 0 : 1, ctx.op("ConcatV2", inputs, {}, "concat"));
  return "";
}

static std::string preventGradient(GradientContext &ctx) {
  std::string message = ctx.getStringAttr("message").value_or("");
  return "Gradient explicitly disabled. Reason: " + message;
}
/// The gradient reversed along the same axes.
static std::string reverseV2Grad(GradientContext &ctx) {
  ctx.setInputGrad(
      0, ctx.op("ReverseV2", {ctx.getOutputGrad(0), ctx.getInput(1)}));
  return "";
}

/// The band of the gradient: what lies outside the band had no effect.
static std::string matrixBandPartGrad(GradientContext &ctx) {
  ctx.setInputGrad(
      0, ctx.op("MatrixBandPart",
                {ctx.getOutputGrad(0), ctx.getInput(1), ctx.getInput(2)}));
  return "";
}

/// The gradient is checked as well, with TensorFlow's words before the
/// forward check's message.
template <const char *Op>
static std::string checkNumericsGrad(GradientContext &ctx) {
  std::string message =
      "Not a number (NaN) or infinity (Inf) values detected in gradient. " +
      ctx.getStringAttr("message").value_or("");
  ctx.setInputGrad(0, ctx.op(Op, {ctx.getOutputGrad(0)},
                             {GradAttr::string("message", message)}));
  return "";
}
static constexpr char kCheckNumerics[] = "CheckNumerics",
                      kCheckNumericsV2[] = "CheckNumericsV2";

detail::GradFnTable cleave::ops::detail::getArrayGradFns() {
  return {
      {"Identity", passThroughGrad},
      {"Snapshot", passThroughGrad},
      {"Reshape", reshapeGrad},
      {"ExpandDims", reshapeGrad},
      {"Squeeze", reshapeGrad},
      {"Transpose", transposeGrad},
      {"PreventGradient", preventGradient},
      {"CheckNumerics", checkNumericsGrad<kCheckNumerics>},
      {"CheckNumericsV2", checkNumericsGrad<kCheckNumericsV2>},
      {"MatrixBandPart", matrixBandPartGrad},
      {"GatherNd", gatherNdGrad},
      {"ScatterNd", scatterNdGrad},
      {"TensorScatterUpdate", tensorScatterUpdateGrad},
      {"TensorScatterAdd", tensorScatterAddOrSubGrad<false>},
      {"TensorScatterSub", tensorScatterAddOrSubGrad<true>},
      {"TensorScatterMin", tensorScatterMinOrMaxGrad},
      {"TensorScatterMax", tensorScatterMinOrMaxGrad},
      {"ReverseV2", reverseV2Grad},
      {"BroadcastTo", broadcastToGrad},
      {"Fill", fillGrad},
      {"StridedSlice", stridedSliceGrad},
      {"Slice", sliceGrad},
      {"Pad", padGrad},
      {"ConcatV2", concatGrad},
      {"Tile", tileGrad},
      {"GatherV2", gatherV2Grad},
      {"Split", splitGrad},
      {"SplitV", splitGrad},
      {"StridedSliceGrad", stridedSliceGradGrad},
      {"Pack", packGrad},
      {"Unpack", unpackGrad},
      {"IdentityN", identityNGrad},
  };
}
