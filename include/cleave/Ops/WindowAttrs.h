//===- WindowAttrs.h - convolution and pooling windows ----------*- C++ -*-===//
//
// The attrs of Conv2D, its backprops and the 2-D pooling ops, read once for
// the shape functions, the reference kernels and the CPU lowering:
// data_format (NHWC or NCHW: every list is reordered to NHWC, the order the
// kernels and the lowering compute in), strides, ksize, dilations, and
// SAME, VALID or EXPLICIT padding, with TensorFlow's messages. And the
// size and padding of one spatial dimension (GetWindowedOutputSize).
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_OPS_WINDOWATTRS_H
#define CLEAVE_OPS_WINDOWATTRS_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cleave::ops {

struct WindowAttrs {
  bool nchw = false;
  bool same = false, isExplicit = false;
  /// NHWC order, four each; ksize empty for convolutions, dilations 1s for
  /// pooling.
  std::vector<int64_t> strides, ksize, dilations;
  /// EXPLICIT's (before, after) per dimension, NHWC order.
  std::vector<int64_t> explicitPaddings;
};

/// Checks and reorders the attrs; `ksize` and `dilations` are absent for
/// ops without them. Returns TensorFlow's message, or "".
std::string
readWindowAttrs(const std::string &format, const std::string &padding,
                const std::optional<std::vector<int64_t>> &strides,
                const std::optional<std::vector<int64_t>> &ksize,
                const std::optional<std::vector<int64_t>> &dilations,
                const std::vector<int64_t> &explicitPaddings,
                WindowAttrs &attrs);

/// The same, read from a node's attrs with their defaults through `node`
/// (a NodeAttrReader: a kernel's or a lowering's context).
template <typename AttrReader>
std::string readWindowAttrs(AttrReader &node, bool hasKsize,
                            bool hasDilations, WindowAttrs &attrs) {
  return readWindowAttrs(
      node.getString("data_format").value_or("NHWC"),
      node.getString("padding").value_or(""), node.getIntList("strides"),
      hasKsize ? node.getIntList("ksize") : std::nullopt,
      hasDilations ? node.getIntList("dilations") : std::nullopt,
      node.getIntList("explicit_paddings").value_or(std::vector<int64_t>()),
      attrs);
}

/// One spatial dimension of a window.
struct WindowDim {
  int64_t out = 0, before = 0, after = 0;
};

/// The output size and padding of spatial dimension `dim` (1: height, 2:
/// width, in NHWC; 1 to 3 for the 3-D ops' NDHWC, whose five strides and
/// dilations the attrs then hold) of an input `in` long under a window
/// `size` long.
WindowDim windowDim(const WindowAttrs &attrs, int dim, int64_t in,
                    int64_t size);

/// The permutation from NCHW to NHWC and back.
constexpr int64_t kNCHWToNHWC[] = {0, 2, 3, 1};
constexpr int64_t kNHWCToNCHW[] = {0, 3, 1, 2};

} // namespace cleave::ops

#endif // CLEAVE_OPS_WINDOWATTRS_H
