//===- TensorLiteral.cpp - tensors written as nested lists -----------------===//

#include "cleave/Runtime/TensorLiteral.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cmath>
#include <limits>
#include <type_traits>

using namespace cleave;
using llvm::StringRef;

namespace {
/// One element of a literal: its text, unescaped when it was quoted.
struct LiteralToken {
  std::string text;
  bool quoted = false;
};
} // namespace

/// Parses a nested-list literal into its elements and a shape. An element
/// is a bare word (a number, true, false; any word for a string tensor) or
/// a double-quoted string with \\, \", \n and \t escapes.
static bool parseLiteral(StringRef text, std::vector<LiteralToken> &tokens,
                         std::vector<int64_t> &shape, std::string &error) {
  text = text.trim();
  std::vector<int64_t> counts; // separators seen at each depth
  std::vector<bool> nonEmpty;  // whether the open list at a depth has items
  int depth = 0, maxDepth = 0;
  std::vector<int64_t> widths;
  size_t i = 0;
  auto fail = [&](const std::string &why) {
    error = why;
    return false;
  };
  while (i < text.size()) {
    char c = text[i];
    if (c == '[') {
      ++depth;
      maxDepth = std::max(maxDepth, depth);
      if (depth > 1)
        nonEmpty[depth - 2] = true; // a nested list is an item
      if (int(counts.size()) < depth) {
        counts.resize(depth, 0);
        nonEmpty.resize(depth, false);
      }
      counts[depth - 1] = 0;
      nonEmpty[depth - 1] = false;
      ++i;
    } else if (c == ']') {
      if (!depth)
        return fail("unbalanced ']'");
      int64_t n = nonEmpty[depth - 1] ? counts[depth - 1] + 1 : 0;
      if (int(widths.size()) < depth)
        widths.resize(depth, -1);
      if (widths[depth - 1] == -1)
        widths[depth - 1] = n;
      else if (widths[depth - 1] != n)
        return fail("ragged literal: rows of different lengths");
      --depth;
      ++i;
    } else if (c == ',') {
      if (depth)
        ++counts[depth - 1];
      ++i;
    } else if (c == ' ') {
      ++i;
    } else {
      LiteralToken token;
      if (c == '"') {
        token.quoted = true;
        size_t j = i + 1;
        for (; j < text.size() && text[j] != '"'; ++j) {
          if (text[j] != '\\') {
            token.text += text[j];
            continue;
          }
          if (++j == text.size())
            break;
          switch (text[j]) {
          case 'n': token.text += '\n'; break;
          case 't': token.text += '\t'; break;
          case '"': case '\\': token.text += text[j]; break;
          default:
            return fail(std::string("unknown escape '\\") + text[j] +
                        "' in a string");
          }
        }
        if (j >= text.size())
          return fail("unterminated string " + text.substr(i).str());
        i = j + 1;
        if (i < text.size() && !StringRef(",] ").contains(text[i]))
          return fail("expected ',' or ']' after the string \"" +
                      token.text + "\"");
      } else {
        size_t end = text.find_first_of(",] ", i);
        token.text = text.slice(i, end).str();
        i = end == StringRef::npos ? text.size() : end;
      }
      tokens.push_back(std::move(token));
      if (depth)
        nonEmpty[depth - 1] = true;
    }
  }
  if (depth)
    return fail("unbalanced '['");
  shape.assign(widths.begin(), widths.end());
  if (maxDepth == 0 && tokens.size() != 1)
    return fail("expected one value or a bracketed list");
  return true;
}

/// A tensor of `dtype` and `shape` holding the literal's elements; an
/// invalid tensor with `error` when they do not fit the dtype.
/// Stores integer literal `text` as element `i` of integer tensor `t`;
/// false with `error` when it is not a whole number or out of the dtype's
/// range (a cast would wrap or truncate it silently). Whole numbers are
/// read as integers, not through a double, so that int64's and uint64's
/// large values keep every digit.
static bool setInteger(Tensor &t, int64_t i, StringRef text,
                       std::string &error) {
  enum { NotInteger, OutOfRange, Stored } outcome = NotInteger;
  visitNumeric(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_integral_v<T>) {
      using Limits = std::numeric_limits<T>;
      auto store = [&](auto value, bool inRange) {
        outcome = inRange ? Stored : OutOfRange;
        if (inRange)
          t.data<T>()[i] = T(value);
      };
      int64_t asSigned;
      uint64_t asUnsigned;
      double asDouble;
      if (text == "true" || text == "false")
        store(text == "true", true);
      else if (!text.getAsInteger(10, asSigned))
        store(asSigned, asSigned >= int64_t(Limits::min()) &&
                            (asSigned < 0 ||
                             uint64_t(asSigned) <= uint64_t(Limits::max())));
      else if (!text.getAsInteger(10, asUnsigned)) // past int64's range
        store(asUnsigned, asUnsigned <= uint64_t(Limits::max()));
      else if (!text.getAsDouble(asDouble) && std::isfinite(asDouble) &&
               asDouble == std::trunc(asDouble))
        // "1e3": whole, but written as a float. max + 1 as a double is the
        // first value past the range (2^63 and 2^64 exactly for int64 and
        // uint64).
        store(asDouble, asDouble >= double(Limits::min()) &&
                            asDouble < double(Limits::max()) + 1.0);
    }
  });
  if (outcome == OutOfRange)
    error = "'" + text.str() + "' is out of the range of " +
            dtypeName(t.dtype());
  else if (outcome == NotInteger)
    error = "'" + text.str() + "' is not an integer, but the tensor holds " +
            dtypeName(t.dtype()) + " values";
  return outcome == Stored;
}

static Tensor makeTensor(int32_t dtype, const std::vector<int64_t> &shape,
                         const std::vector<LiteralToken> &tokens,
                         std::string &error) {
  Tensor t(dtype, shape);
  if (dtype == kString) {
    for (auto [i, token] : llvm::enumerate(tokens))
      t.strings()[i] = token.text;
    return t;
  }
  if (!dtypeSize(dtype)) {
    error = "a literal cannot hold " + dtypeName(dtype) +
            " values; feed a .npy file";
    return Tensor();
  }
  for (auto [i, token] : llvm::enumerate(tokens)) {
    double v;
    if (token.quoted) {
      error = "\"" + token.text + "\" is a string, but the tensor holds " +
              dtypeName(dtype) + " values";
      return Tensor();
    }
    if (token.text == "true")
      v = 1;
    else if (token.text == "false")
      v = 0;
    else if (StringRef(token.text).getAsDouble(v)) {
      error = "'" + token.text + "' is not a number";
      return Tensor();
    }
    if (isIntegerDType(dtype)) {
      if (!setInteger(t, i, token.text, error))
        return Tensor();
      continue;
    }
    // Floats and bool hold any number.
    t.setFromDouble(i, v);
  }
  return t;
}

llvm::Expected<Tensor> runtime::parseTensorLiteral(StringRef text,
                                                   int32_t dtype) {
  std::vector<LiteralToken> tokens;
  std::vector<int64_t> shape;
  std::string error;
  if (!parseLiteral(text, tokens, shape, error))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
  Tensor tensor = makeTensor(dtype, shape, tokens, error);
  if (!tensor.isValid())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
  return tensor;
}
