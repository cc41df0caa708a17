//===- Einsum.cpp - what an Einsum equation computes ----------------------===//

#include "cleave/Ops/Einsum.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <map>

using namespace cleave::ops;

static std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    text += (i ? "," : "") + (d < 0 ? std::string("?") : std::to_string(d));
  return text + "]";
}

std::string cleave::ops::splitEinsum(llvm::StringRef equation,
                                     std::vector<std::string> &inputs,
                                     std::string &output) {
  inputs.clear();
  output.clear();
  std::string text;
  for (char c : equation)
    if (c != ' ')
      text += c;
  size_t arrow = text.find("->");
  llvm::StringRef left = llvm::StringRef(text).substr(0, arrow);
  bool implicit = arrow == std::string::npos;
  llvm::SmallVector<llvm::StringRef> parts;
  left.split(parts, ',');
  if (parts.size() > 2)
    return "Expected either 1 or 2 input subscripts, but got: " +
           std::to_string(parts.size());
  auto normalized = [&](llvm::StringRef part, std::string &out) {
    out.clear();
    for (size_t i = 0; i < part.size(); ++i) {
      if (part.substr(i).starts_with("...")) {
        if (out.find('.') != std::string::npos)
          return "Found more than one ellipsis in subscript: " + part.str();
        out += '.';
        i += 2;
      } else if (llvm::isAlpha(part[i])) {
        out += part[i];
      } else {
        return "Invalid character '" + std::string(1, part[i]) +
               "' in Einsum equation: " + equation.str();
      }
    }
    return std::string();
  };
  for (llvm::StringRef part : parts) {
    inputs.emplace_back();
    if (std::string error = normalized(part, inputs.back()); !error.empty())
      return error;
  }
  if (!implicit) {
    if (std::string error =
            normalized(llvm::StringRef(text).substr(arrow + 2), output);
        !error.empty())
      return error;
    return "";
  }
  // Implicit: the ellipsis, then the labels that appear once, in order.
  std::map<char, int> counts;
  bool ellipsis = false;
  for (const std::string &in : inputs)
    for (char c : in) {
      if (c == '.')
        ellipsis = true;
      else
        ++counts[c];
    }
  if (ellipsis)
    output += '.';
  for (auto [c, n] : counts)
    if (n == 1)
      output += c;
  return "";
}

std::vector<int64_t> EinsumPlan::outputShape() const {
  std::vector<int64_t> shape;
  for (int64_t label : outputLabels)
    shape.push_back(labelSizes[label]);
  return shape;
}

std::string cleave::ops::planEinsum(llvm::StringRef equation,
                                    llvm::ArrayRef<std::vector<int64_t>> shapes,
                                    EinsumPlan &plan) {
  std::vector<std::string> inputs;
  std::string output;
  if (std::string error = splitEinsum(equation, inputs, output); !error.empty())
    return error;
  if (inputs.size() != shapes.size())
    return "Expected " + std::to_string(inputs.size()) +
           " inputs but got: " + std::to_string(shapes.size());
  // The ellipsis dims of each input, broadcast right-aligned to the
  // longest.
  std::vector<int64_t> ellipsisRanks(inputs.size(), 0);
  int64_t ellipsisRank = 0;
  for (auto [i, in] : llvm::enumerate(inputs)) {
    int64_t named = int64_t(in.size()) - (in.find('.') != std::string::npos);
    int64_t rank = shapes[i].size();
    if (in.find('.') == std::string::npos) {
      if (rank != named)
        return "Expected input " + std::to_string(i) + " to have rank " +
               std::to_string(named) + " but got: " + std::to_string(rank);
    } else {
      if (rank < named)
        return "Expected input " + std::to_string(i) +
               " to have rank at least " + std::to_string(named) +
               " but got: " + std::to_string(rank);
      ellipsisRanks[i] = rank - named;
      ellipsisRank = std::max(ellipsisRank, rank - named);
    }
  }
  // Labels: the ellipsis dims first (0..E-1), then the letters.
  std::map<char, int64_t> letters;
  plan = EinsumPlan();
  plan.labelSizes.assign(ellipsisRank, 1);
  auto letterLabel = [&](char c) {
    auto [it, isNew] = letters.try_emplace(c, plan.labelSizes.size());
    if (isNew)
      plan.labelSizes.push_back(-1);
    return it->second;
  };
  for (auto [i, in] : llvm::enumerate(inputs)) {
    std::vector<int64_t> &labels = plan.inputLabels.emplace_back();
    int64_t axis = 0;
    for (char c : in) {
      if (c == '.') {
        for (int64_t e = 0; e < ellipsisRanks[i]; ++e)
          labels.push_back(ellipsisRank - ellipsisRanks[i] + e);
        axis += ellipsisRanks[i];
        continue;
      }
      labels.push_back(letterLabel(c));
      ++axis;
    }
  }
  // Sizes: letters must agree; ellipsis dims broadcast (1 stretches).
  for (auto [i, labels] : llvm::enumerate(plan.inputLabels)) {
    for (auto [axis, label] : llvm::enumerate(labels)) {
      int64_t d = shapes[i][axis];
      int64_t &size = plan.labelSizes[label];
      bool isEllipsis = label < ellipsisRank;
      if (d < 0)
        continue;
      if (isEllipsis) {
        if (size == 1 || size < 0)
          size = d;
        else if (d != 1 && d != size)
          return "Incompatible shapes for the ellipsis dimensions: " +
                 shapeText(shapes[0]) +
                 (shapes.size() > 1 ? " vs. " + shapeText(shapes[1]) : "");
      } else if (size < 0) {
        size = d;
      } else if (size != d) {
        return "Expected dimension " + std::to_string(size) + " at axis " +
               std::to_string(axis) + " of the input shaped " +
               shapeText(shapes[i]) + " but got dimension " + std::to_string(d);
      }
    }
  }
  for (auto [i, labels] : llvm::enumerate(plan.inputLabels)) {
    std::vector<bool> &broadcast = plan.broadcast.emplace_back();
    for (auto [axis, label] : llvm::enumerate(labels))
      broadcast.push_back(label < ellipsisRank && shapes[i][axis] == 1 &&
                          plan.labelSizes[label] != 1);
  }
  // The output. A label it repeats writes a diagonal (TensorFlow's
  // inflation, as gradients of diagonals need: i->ii).
  for (char c : output) {
    if (c == '.') {
      for (int64_t e = 0; e < ellipsisRank; ++e)
        plan.outputLabels.push_back(e);
      continue;
    }
    auto it = letters.find(c);
    if (it == letters.end())
      return std::string("Output subscripts contain the label ") + c +
             " not present in the input subscripts.";
    plan.outputLabels.push_back(it->second);
  }
  if (ellipsisRank > 0 && output.find('.') == std::string::npos)
    for (int64_t e = 0; e < ellipsisRank; ++e)
      if (plan.labelSizes[e] != 1)
        return "Output subscripts must contain an ellipsis where the "
               "inputs' ellipsis dimensions are not all 1";
  return "";
}
