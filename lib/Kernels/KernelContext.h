//===- KernelContext.h - what a reference kernel sees -----------*- C++ -*-===//
//
// Private to CleaveKernels. A kernel computes one node's outputs from its
// input tensors and attrs, asking its KernelHost for the rest; each family
// file registers its kernels in a table, as lib/Ops does for signatures and
// shape functions.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_KERNELS_KERNELCONTEXT_H
#define CLEAVE_LIB_KERNELS_KERNELCONTEXT_H

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"
#include "cleave/Kernels/KernelHost.h"
#include "cleave/Ops/ElementwiseOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <type_traits>
#include <utility>

namespace cleave::interp {

/// x + y, x - y and x * y as TensorFlow's integer kernels compute them in
/// practice: wrapping around (two's complement). Signed overflow is
/// undefined in C++, so integers go through their unsigned type.
template <typename T>
constexpr bool kWraps = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <typename T> T wrappingAdd(T x, T y) {
  if constexpr (kWraps<T>) {
    using U = std::make_unsigned_t<T>;
    return T(U(U(x) + U(y)));
  } else {
    return x + y;
  }
}
template <typename T> T wrappingSub(T x, T y) {
  if constexpr (kWraps<T>) {
    using U = std::make_unsigned_t<T>;
    return T(U(U(x) - U(y)));
  } else {
    return x - y;
  }
}
template <typename T> T wrappingMul(T x, T y) {
  if constexpr (kWraps<T>) {
    // uint16_t operands promote to int, whose product can overflow: the
    // product is taken in at least unsigned int.
    using U = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
    return T(std::make_unsigned_t<T>(U(x) * U(y)));
  } else {
    return x * y;
  }
}

class KernelContext : public NodeAttrReader {
public:
  KernelContext(graph::NodeOp node, std::vector<Tensor> inputs,
                KernelHost &host, mlir::DictionaryAttr bindings)
      : NodeAttrReader(node, bindings), node(node), inputs(std::move(inputs)),
        host(host), state(host.getState()), bindings(bindings),
        outputs(node.getOutputs().size()) {}

  graph::NodeOp node;
  std::vector<Tensor> inputs;
  KernelHost &host;
  State &state;
  /// The attrs of the function instantiation the node runs in (null at the
  /// top level): they give the values of #graph.placeholder attrs.
  mlir::DictionaryAttr bindings;
  std::vector<Tensor> outputs;

  /// An error on the node: "Node 'name': ...".
  mlir::InFlightDiagnostic error() {
    return node.emitError() << "Node '" << node.getName() << "': ";
  }

  // The node's attrs, with placeholders bound, come from NodeAttrReader.
  /// A `tensor` attr decoded to a host tensor.
  mlir::FailureOr<Tensor> getTensor(llvm::StringRef name);
};

using Kernel = mlir::LogicalResult (*)(KernelContext &ctx);
using KernelTable = std::vector<std::pair<llvm::StringRef, Kernel>>;

/// One table per op family, in <Family>Kernels.cpp (ops::OpFamily).
KernelTable getArrayKernels();
KernelTable getMathKernels();
KernelTable getNNKernels();
/// LRN and the resize ops, NN family ops in ImageKernels.cpp.
KernelTable getImageKernels();
/// The 3-D convolution and pooling ops, NN family ops in VolumeKernels.cpp.
KernelTable getVolumeKernels();
KernelTable getStateKernels();
KernelTable getControlFlowKernels();
KernelTable getFunctionalKernels();
KernelTable getRandomKernels();
KernelTable getTPUKernels();
KernelTable getHostKernels();
/// The summary writers, Host family ops in SummaryKernels.cpp.
KernelTable getSummaryKernels();
KernelTable getDataKernels();
/// The TensorList ops, Data family ops in ListKernels.cpp.
KernelTable getListKernels();
KernelTable getIOKernels();

/// The kernel of a one-input element-wise op (MathKernels.cpp, which
/// instantiates it for the ops of other families that use it: the
/// activations of NNKernels.cpp).
template <ops::UnaryOp op> mlir::LogicalResult unaryKernel(KernelContext &ctx);

/// The kernel of `opType`, or null.
Kernel lookupKernel(llvm::StringRef opType);

/// The kernel of a node whose op type names a library function.
mlir::LogicalResult callFunctionNode(KernelContext &ctx);

/// Row-major strides of `shape`, in elements.
std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape);

/// For each element of a tensor of shape `out`, the flat index of the
/// element of a tensor of shape `in` that broadcasts to it.
std::vector<int64_t> broadcastIndices(const std::vector<int64_t> &in,
                                      const std::vector<int64_t> &out);

/// Copies `count` elements of `src` from `srcIndex` into `dst` at
/// `dstIndex` (flat indices, same dtype): bytes for numbers, the strings of
/// string and resource tensors. Nothing for `count` 0.
inline void copyElements(Tensor &dst, int64_t dstIndex, const Tensor &src,
                         int64_t srcIndex, int64_t count) {
  if (count <= 0)
    return;
  if (src.dtype() == kString || src.dtype() == kResource) {
    std::copy_n(src.strings().begin() + srcIndex, count,
                dst.strings().begin() + dstIndex);
    return;
  }
  size_t size = dtypeSize(src.dtype());
  std::memcpy(dst.raw() + dstIndex * size, src.raw() + srcIndex * size,
              count * size);
}

/// A scalar string tensor.
inline Tensor stringScalar(std::string value) {
  Tensor t(kString, {});
  t.strings()[0] = std::move(value);
  return t;
}

/// A new tensor of `outShape` whose element i is element `source(i)` of
/// `in` (any dtype, strings included).
template <typename SourceFn>
Tensor gather(const Tensor &in, const std::vector<int64_t> &outShape,
              SourceFn source) {
  Tensor out(in.dtype(), outShape);
  int64_t n = out.numElements();
  for (int64_t i = 0; i < n; ++i)
    copyElements(out, i, in, source(i), 1);
  return out;
}

/// `in` with its dimensions permuted: result dimension d is `in`'s
/// perm[d] (a valid permutation of its rank).
inline Tensor transposed(const Tensor &in, llvm::ArrayRef<int64_t> perm) {
  std::vector<int64_t> outShape;
  for (int64_t p : perm)
    outShape.push_back(in.shape()[p]);
  auto inStrides = stridesOf(in.shape()), outStrides = stridesOf(outShape);
  return gather(in, outShape, [&](int64_t i) {
    int64_t src = 0;
    for (size_t d = 0; d < perm.size(); ++d)
      src += (i / outStrides[d]) % outShape[d] * inStrides[perm[d]];
    return src;
  });
}

} // namespace cleave::interp

#endif // CLEAVE_LIB_KERNELS_KERNELCONTEXT_H
