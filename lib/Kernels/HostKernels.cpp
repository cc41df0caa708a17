//===- HostKernels.cpp - printing, string formatting and summaries --------===//
//
// The host-only ops of a training graph. Tensors are rendered as
// TensorFlow's Tensor::SummarizeValue does: for the v1 Print op, nested
// brackets without separators ("[1 2][3...]"); for PrintV2 / StringFormat,
// NumPy-style brackets with quoted strings.
//
//===----------------------------------------------------------------------===//

#include "KernelContext.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;

namespace {
/// The shortest text that reads back as the same value, as StrCat prints
/// floats.
std::string formatFloat(double v, bool isFloat) {
  char buffer[64];
  for (int digits = isFloat ? 6 : 15; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, v);
    double back = std::strtod(buffer, nullptr);
    if (isFloat ? float(back) == float(v) : back == v)
      break;
  }
  return buffer;
}

std::string formatElement(const Tensor &t, int64_t i, bool quoteStrings) {
  switch (t.dtype()) {
  case kString:
    return quoteStrings ? "\"" + t.strings()[i] + "\"" : t.strings()[i];
  case kBool:
    return t.data<bool>()[i] ? "1" : "0";
  case kFloat:
  case kDouble:
    return formatFloat(t.getAsDouble(i), t.dtype() == kFloat);
  case kUInt64:
    return std::to_string(t.data<uint64_t>()[i]);
  default:
    return dtypeSize(t.dtype()) ? std::to_string(t.getAsInt(i)) : "?";
  }
}

/// v1 (TensorFlow's PrintOneDim): the first `limit` elements in nested
/// brackets without separators between rows ("[1 2][3...]"), "..." where
/// a row or the tensor is cut short.
void summarizeV1(const Tensor &t, int64_t limit, int64_t dim, int64_t &next,
                 std::string &text) {
  if (next >= limit)
    return;
  int64_t size = t.shape()[dim];
  if (dim == t.rank() - 1) {
    for (int64_t i = 0; i < size; ++i) {
      if (next >= limit) {
        if (dim != 0)
          text += "...";
        return;
      }
      text += (i ? " " : "") + formatElement(t, next++, /*quoteStrings=*/false);
    }
    return;
  }
  for (int64_t i = 0; i < size; ++i) {
    bool opened = next < limit;
    if (opened)
      text += "[";
    summarizeV1(t, limit, dim + 1, next, text);
    if (next < limit || opened)
      text += "]";
  }
}

std::string summarizeFlat(const Tensor &t, int64_t summarize) {
  int64_t n = t.numElements();
  int64_t limit = summarize < 0 ? n : std::min(n, summarize);
  if (t.rank() == 0)
    return n ? formatElement(t, 0, /*quoteStrings=*/false) : "";
  std::string text;
  int64_t next = 0;
  summarizeV1(t, limit, 0, next, text);
  if (n > limit)
    text += "...";
  return text;
}

/// What separates two entries of dimension `dim` in the v2 form, as NumPy
/// prints: a space in the last dimension, else one newline per inner
/// dimension and an indent.
std::string spacing(int64_t dim, int64_t rank) {
  if (dim == rank - 1)
    return " ";
  return std::string(rank - dim - 1, '\n') + std::string(dim + 1, ' ');
}

/// v2: nested brackets; each dimension longer than 2 * summarize shows its
/// first and last `summarize` entries around "...".
void summarizeNested(const Tensor &t, int64_t summarize, int64_t dim,
                     int64_t offset, std::string &text) {
  if (dim == t.rank()) {
    text += formatElement(t, offset, /*quoteStrings=*/true);
    return;
  }
  int64_t size = t.shape()[dim], stride = 1;
  for (int64_t d = dim + 1; d < t.rank(); ++d)
    stride *= t.shape()[d];
  bool elide = summarize >= 0 && size > 2 * summarize;
  text += "[";
  for (int64_t i = 0; i < size; ++i) {
    if (i)
      text += spacing(dim, t.rank());
    if (elide && i == summarize) {
      text += "...";
      i = size - summarize - 1;
      continue;
    }
    summarizeNested(t, summarize, dim + 1, offset + i * stride, text);
  }
  text += "]";
}

std::string summarize(const Tensor &t, int64_t summarize) {
  std::string text;
  summarizeNested(t, summarize, 0, 0, text);
  return text;
}

/// Print (v1): logs message and the data tensors, forwards its input.
LogicalResult print(KernelContext &ctx) {
  int64_t firstN = ctx.getInt("first_n").value_or(-1);
  uint64_t &count = ctx.state.nodeRuns[ctx.node.getName()];
  if (firstN < 0 || int64_t(count++) < firstN) {
    std::string text = ctx.getString("message").value_or("");
    for (size_t i = 1; i < ctx.inputs.size(); ++i)
      text += "[" + summarizeFlat(ctx.inputs[i],
                                  ctx.getInt("summarize").value_or(3)) + "]";
    llvm::errs() << text << "\n";
  }
  ctx.outputs[0] = ctx.inputs[0];
  return success();
}

/// PrintV2: writes a string scalar to stderr, stdout or a file://.
LogicalResult printV2(KernelContext &ctx) {
  if (ctx.inputs[0].numElements() != 1)
    return ctx.error() << "Input is expected to be scalar, but got "
                       << shapeString(ctx.inputs[0].shape());
  std::string stream = ctx.getString("output_stream").value_or("stderr");
  std::string text =
      ctx.inputs[0].strings()[0] + ctx.getString("end").value_or("\n");
  if (stream == "stdout") {
    llvm::outs() << text;
    llvm::outs().flush();
  } else if (stream == "stderr" || StringRef(stream).starts_with("log(")) {
    llvm::errs() << text;
  } else if (StringRef(stream).starts_with("file://")) {
    std::error_code ec;
    llvm::raw_fd_ostream file(stream.substr(7), ec, llvm::sys::fs::OF_Append);
    if (ec)
      return ctx.error() << "cannot open '" << stream.substr(7)
                         << "': " << ec.message();
    file << text;
  } else {
    return ctx.error() << "Unknown output stream: " << stream;
  }
  return success();
}

/// StringFormat: the template with each placeholder replaced by the next
/// input, summarized.
LogicalResult stringFormat(KernelContext &ctx) {
  std::string tmpl = ctx.getString("template").value_or("%s");
  std::string placeholder = ctx.getString("placeholder").value_or("%s");
  int64_t summarizeN = ctx.getInt("summarize").value_or(3);
  std::vector<size_t> at; // where each placeholder starts
  for (size_t p = tmpl.find(placeholder); !placeholder.empty() &&
                                          p != std::string::npos;
       p = tmpl.find(placeholder, p + placeholder.size()))
    at.push_back(p);
  if (at.size() != ctx.inputs.size())
    return ctx.error() << "num placeholders in template and num inputs must "
                          "match: "
                       << at.size() << " vs. " << ctx.inputs.size();
  std::string text;
  size_t pos = 0;
  for (size_t i = 0; i < at.size(); ++i) {
    text += tmpl.substr(pos, at[i] - pos) + summarize(ctx.inputs[i], summarizeN);
    pos = at[i] + placeholder.size();
  }
  text += tmpl.substr(pos);
  ctx.outputs[0] = stringScalar(text);
  return success();
}

/// StringJoin: the inputs joined element by element with the separator;
/// scalars repeat against the other inputs, which share one shape.
LogicalResult stringJoin(KernelContext &ctx) {
  std::string separator = ctx.getString("separator").value_or("");
  const Tensor *shaped = nullptr;
  for (const Tensor &in : ctx.inputs) {
    if (in.rank() == 0)
      continue;
    if (shaped && shaped->shape() != in.shape())
      return ctx.error() << "Input shapes do not match: "
                         << shapeString(shaped->shape()) << " vs. "
                         << shapeString(in.shape());
    shaped = &in;
  }
  Tensor out(kString, shaped ? shaped->shape() : std::vector<int64_t>{});
  for (int64_t i = 0; i < out.numElements(); ++i) {
    std::string &joined = out.strings()[i];
    for (auto [k, in] : llvm::enumerate(ctx.inputs))
      joined += (k ? separator : "") + in.strings()[in.rank() ? i : 0];
  }
  ctx.outputs[0] = out;
  return success();
}

/// StringLength: bytes, or UTF-8 characters (bytes that do not continue
/// a character).
LogicalResult stringLength(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0];
  bool characters = ctx.getString("unit").value_or("BYTE") == "UTF8_CHAR";
  Tensor out(kInt32, in.shape());
  for (int64_t i = 0; i < in.numElements(); ++i) {
    const std::string &text = in.strings()[i];
    int32_t length = text.size();
    if (characters)
      length = llvm::count_if(text, [](char c) { return (c & 0xC0) != 0x80; });
    out.data<int32_t>()[i] = length;
  }
  ctx.outputs[0] = out;
  return success();
}

/// AsString: each element through a printf format built from the attrs.
LogicalResult asString(KernelContext &ctx) {
  const Tensor &in = ctx.inputs[0];
  int64_t precision = ctx.getInt("precision").value_or(-1),
          width = ctx.getInt("width").value_or(-1);
  bool scientific = ctx.getBool("scientific").value_or(false),
       shortest = ctx.getBool("shortest").value_or(false);
  std::string fill = ctx.getString("fill").value_or("");
  if (scientific && shortest)
    return ctx.error() << "Cannot select both scientific and shortest notation";
  if (fill.size() > 1)
    return ctx.error() << "Fill string must be one or fewer characters";
  bool isFloat = in.dtype() == kFloat || in.dtype() == kDouble;
  if (precision > -1 && !isFloat)
    return ctx.error() << "precision not supported for datatype "
                       << dtypeName(in.dtype());
  if ((scientific || shortest) && !isFloat)
    return ctx.error() << "scientific and shortest format not supported for "
                          "datatype "
                       << dtypeName(in.dtype());
  std::string format = "%";
  if (fill == "-" || fill == "0" || fill == " " || fill == "+")
    format += fill;
  else if (!fill.empty())
    return ctx.error() << "Fill argument not supported: \"" << fill << "\"";
  if (width > -1)
    format += std::to_string(width);
  if (precision > -1)
    format += "." + std::to_string(precision);
  Tensor out(kString, in.shape());
  for (int64_t i = 0; i < in.numElements(); ++i) {
    char buffer[512];
    if (in.dtype() == kString) {
      out.strings()[i] = in.strings()[i];
      continue;
    }
    if (in.dtype() == kBool) { // width and fill do not apply
      out.strings()[i] = in.data<bool>()[i] ? "true" : "false";
      continue;
    }
    if (isFloat) {
      std::string spec = format + (shortest ? "g" : scientific ? "e" : "f");
      std::snprintf(buffer, sizeof buffer, spec.c_str(), in.getAsDouble(i));
    } else if (in.dtype() == kUInt64) {
      std::snprintf(buffer, sizeof buffer, (format + PRIu64).c_str(),
                    in.data<uint64_t>()[i]);
    } else if (dtypeSize(in.dtype())) {
      std::snprintf(buffer, sizeof buffer, (format + PRId64).c_str(),
                    in.getAsInt(i));
    } else {
      return ctx.error() << "unsupported dtype " << dtypeName(in.dtype());
    }
    out.strings()[i] = buffer;
  }
  ctx.outputs[0] = out;
  return success();
}

/// Appends a protobuf varint.
void appendVarint(std::string &out, uint64_t v) {
  do {
    out += char((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
}

/// ScalarSummary: a serialized tensorflow.Summary with one simple_value per
/// tag (Summary.value = 1; Value.tag = 1, Value.simple_value = 2).
LogicalResult scalarSummary(KernelContext &ctx) {
  const Tensor &tags = ctx.inputs[0], &values = ctx.inputs[1];
  if (tags.shape() != values.shape())
    return ctx.error() << "tags and values are not the same shape: "
                       << shapeString(tags.shape())
                       << " != " << shapeString(values.shape());
  std::string summary;
  for (int64_t i = 0; i < tags.numElements(); ++i) {
    std::string value;
    if (!tags.strings()[i].empty()) { // proto3 leaves an empty tag out
      value += char(0x0a);            // tag, length-delimited
      appendVarint(value, tags.strings()[i].size());
      value += tags.strings()[i];
    }
    value += char(0x15); // simple_value, fixed32
    float f = float(values.getAsDouble(i));
    char bytes[4];
    std::memcpy(bytes, &f, 4); // little-endian hosts only, as .npy I/O
    value.append(bytes, 4);
    summary += char(0x0a);
    appendVarint(summary, value.size());
    summary += value;
  }
  ctx.outputs[0] = stringScalar(summary);
  return success();
}
} // namespace

KernelTable cleave::interp::getHostKernels() {
  return {
      {"Print", print},
      {"PrintV2", printV2},
      {"StringFormat", stringFormat},
      {"StringJoin", stringJoin},
      {"AsString", asString},
      {"StringLength", stringLength},
      {"ScalarSummary", scalarSummary},
  };
}
