//===- WindowAttrs.cpp - convolution and pooling windows ------------------===//

#include "cleave/Ops/WindowAttrs.h"

#include <algorithm>

using namespace cleave::ops;

/// `values` (NCHW order when `nchw`) in NHWC order.
static std::vector<int64_t> toNHWC(std::vector<int64_t> values, bool nchw,
                                   size_t groups = 1) {
  if (!nchw)
    return values;
  std::vector<int64_t> out(values.size());
  for (size_t d = 0; d < 4; ++d)
    for (size_t g = 0; g < groups; ++g)
      out[d * groups + g] = values[kNCHWToNHWC[d] * groups + g];
  return out;
}

std::string cleave::ops::readWindowAttrs(
    const std::string &format, const std::string &padding,
    const std::optional<std::vector<int64_t>> &strides,
    const std::optional<std::vector<int64_t>> &ksize,
    const std::optional<std::vector<int64_t>> &dilations,
    const std::vector<int64_t> &explicitPaddings, WindowAttrs &attrs) {
  attrs = WindowAttrs();
  if (format != "NHWC" && format != "NCHW")
    return "data_format '" + format + "' is not supported (NHWC or NCHW)";
  attrs.nchw = format == "NCHW";
  if (!strides || strides->size() != 4)
    return "strides must have 4 entries with batch and depth strides of 1";
  attrs.strides = toNHWC(*strides, attrs.nchw);
  if (attrs.strides[0] != 1 || attrs.strides[3] != 1 || attrs.strides[1] < 1 ||
      attrs.strides[2] < 1)
    return "strides must have 4 entries with batch and depth strides of 1";
  if (ksize) {
    if (ksize->size() != 4)
      return "ksize must have 4 entries with batch and depth sizes of 1";
    attrs.ksize = toNHWC(*ksize, attrs.nchw);
    if (attrs.ksize[0] != 1 || attrs.ksize[3] != 1 || attrs.ksize[1] < 1 ||
        attrs.ksize[2] < 1)
      return "ksize must have 4 entries with batch and depth sizes of 1";
  }
  attrs.dilations = {1, 1, 1, 1};
  if (dilations) {
    if (dilations->size() != 4)
      return "dilations must have 4 entries";
    attrs.dilations = toNHWC(*dilations, attrs.nchw);
    if (attrs.dilations[0] != 1 || attrs.dilations[3] != 1)
      return "Current implementation does not yet support dilations in the "
             "batch and depth dimensions.";
    if (attrs.dilations[1] < 1 || attrs.dilations[2] < 1)
      return "Dilated rates should be larger than 0.";
  }
  if (padding != "SAME" && padding != "VALID" && padding != "EXPLICIT")
    return "padding '" + padding +
           "' is not supported (SAME, VALID or EXPLICIT)";
  attrs.same = padding == "SAME";
  attrs.isExplicit = padding == "EXPLICIT";
  if (!attrs.isExplicit) {
    if (!explicitPaddings.empty())
      return "explicit_paddings attribute must be empty if the padding "
             "attribute is not EXPLICIT";
    return "";
  }
  if (explicitPaddings.size() != 8)
    return "explicit_paddings attribute must contain 8 values, but got: " +
           std::to_string(explicitPaddings.size());
  if (std::any_of(explicitPaddings.begin(), explicitPaddings.end(),
                  [](int64_t p) { return p < 0; }))
    return "All explicit_paddings must be nonnegative";
  attrs.explicitPaddings = toNHWC(explicitPaddings, attrs.nchw, 2);
  if (attrs.explicitPaddings[0] || attrs.explicitPaddings[1] ||
      attrs.explicitPaddings[6] || attrs.explicitPaddings[7])
    return "Nonzero explicit padding in the batch or depth dimensions is not "
           "supported";
  return "";
}

WindowDim cleave::ops::windowDim(const WindowAttrs &attrs, int dim, int64_t in,
                                 int64_t size) {
  int64_t stride = attrs.strides[dim], dilation = attrs.dilations[dim];
  int64_t effective = (size - 1) * dilation + 1;
  WindowDim w;
  if (attrs.isExplicit) {
    w.before = attrs.explicitPaddings[2 * dim];
    w.after = attrs.explicitPaddings[2 * dim + 1];
    int64_t padded = in + w.before + w.after;
    w.out = padded < effective ? 0 : (padded - effective + stride) / stride;
  } else if (attrs.same) {
    w.out = (in + stride - 1) / stride;
    int64_t pad = std::max<int64_t>((w.out - 1) * stride + effective - in, 0);
    w.before = pad / 2;
    w.after = pad - w.before;
  } else {
    w.out = in < effective ? 0 : (in - effective + stride) / stride;
  }
  return w;
}
