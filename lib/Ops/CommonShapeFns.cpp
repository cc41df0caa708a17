//===- CommonShapeFns.cpp - shape functions shared by many ops ------------===//

#include "CommonShapeFns.h"

#include "cleave/Ops/OpRegistry.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

using namespace cleave::ops;
using namespace cleave::ops::detail;

std::string Shape::str() const {
  if (unknownRank)
    return "?";
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      s += ",";
    s += dims[i] < 0 ? "?" : std::to_string(dims[i]);
  }
  return s + "]";
}

std::optional<Shape> cleave::ops::broadcastShapes(const Shape &a,
                                                  const Shape &b,
                                                  std::string &error) {
  if (!a.hasRank() || !b.hasRank()) {
    // The rank is at least the larger known rank, but unknown.
    return Shape::unknown();
  }
  int64_t rank = std::max(a.rank(), b.rank());
  Shape out = Shape::ofRank(rank);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.rank() ? 1 : a.dims[i - (rank - a.rank())];
    int64_t db = i < rank - b.rank() ? 1 : b.dims[i - (rank - b.rank())];
    if (da == 1) {
      out.dims[i] = db;
    } else if (db == 1) {
      out.dims[i] = da;
    } else if (da == Shape::kUnknown || db == Shape::kUnknown) {
      out.dims[i] = da == Shape::kUnknown ? db : da;
    } else if (da != db) {
      error = "Dimensions must be equal, but are " + std::to_string(da) +
              " and " + std::to_string(db);
      return std::nullopt;
    } else {
      out.dims[i] = da;
    }
  }
  return out;
}

std::optional<Shape> cleave::ops::mergeShapes(const Shape &a, const Shape &b,
                                              std::string &error) {
  if (!a.hasRank())
    return b;
  if (!b.hasRank())
    return a;
  if (a.rank() != b.rank()) {
    error = "Shapes must be equal rank, but are " + std::to_string(a.rank()) +
            " and " + std::to_string(b.rank());
    return std::nullopt;
  }
  Shape out = a;
  for (int64_t i = 0; i < a.rank(); ++i) {
    if (b.dims[i] == Shape::kUnknown)
      continue;
    if (a.dims[i] != Shape::kUnknown && a.dims[i] != b.dims[i]) {
      error = "Dimension " + std::to_string(i) +
              " in both shapes must be equal, but are " +
              std::to_string(a.dims[i]) + " and " + std::to_string(b.dims[i]);
      return std::nullopt;
    }
    out.dims[i] = b.dims[i];
  }
  return out;
}

Shape cleave::ops::relaxShapes(const Shape &a, const Shape &b) {
  if (!a.hasRank() || !b.hasRank() || a.rank() != b.rank())
    return Shape::unknown();
  Shape out = a;
  for (int64_t d = 0; d < a.rank(); ++d)
    if (a.dims[d] != b.dims[d])
      out.dims[d] = Shape::kUnknown;
  return out;
}

std::string shapes::unchanged(InferenceContext &ctx) {
  Shape in = ctx.getNumInputs() ? ctx.getInputShape(0) : Shape::unknown();
  for (unsigned i = 0; i < ctx.getNumOutputs(); ++i)
    ctx.setOutput(i, in);
  return "";
}

std::string shapes::broadcastBinary(InferenceContext &ctx) {
  std::string error;
  auto out = broadcastShapes(ctx.getInputShape(0), ctx.getInputShape(1), error);
  if (!out)
    return error;
  ctx.setOutput(0, *out);
  return "";
}

std::string shapes::scalar(InferenceContext &ctx) {
  for (unsigned i = 0; i < ctx.getNumOutputs(); ++i)
    ctx.setOutput(i, Shape::scalar());
  return "";
}

std::string shapes::none(InferenceContext &) { return ""; }

std::string shapes::fromShapeAttr(InferenceContext &ctx) {
  if (auto shape = ctx.getShapeAttr("shape"))
    ctx.setOutput(0, *shape);
  return "";
}

std::string shapes::reduction(InferenceContext &ctx) {
  Shape in = ctx.getInputShape(0);
  bool keepDims = ctx.getBoolAttr("keep_dims").value_or(false);
  auto axes = ctx.getConstantInput(1);
  if (!in.hasRank() || !axes) {
    // Without the axes only keep_dims tells the rank.
    ctx.setOutput(0, keepDims && in.hasRank() ? Shape::ofRank(in.rank())
                                              : Shape::unknown());
    return "";
  }
  llvm::SmallVector<bool, 4> reduced(in.rank(), false);
  for (int64_t axis : *axes) {
    if (axis < -in.rank() || axis >= in.rank())
      return "Invalid reduction dimension " + std::to_string(axis) +
             " for input with " + std::to_string(in.rank()) + " dimensions.";
    reduced[axis < 0 ? axis + in.rank() : axis] = true;
  }
  Shape out = Shape::of({});
  for (int64_t i = 0; i < in.rank(); ++i) {
    if (!reduced[i])
      out.dims.push_back(in.dims[i]);
    else if (keepDims)
      out.dims.push_back(1);
  }
  ctx.setOutput(0, out);
  return "";
}

std::string shapes::fromShapeInput(InferenceContext &ctx, unsigned index) {
  if (auto dims = ctx.getConstantInput(index)) {
    for (int64_t d : *dims)
      if (d < 0)
        return "Dimension " + std::to_string(d) + " must be >= 0";
    ctx.setOutput(0, Shape::of(*dims));
    return "";
  }
  Shape vector = ctx.getInputShape(index);
  if (vector.hasRank() && vector.rank() != 1)
    return "Shape must be rank 1 but is rank " + std::to_string(vector.rank());
  ctx.setOutput(0, vector.hasRank() && vector.dims[0] >= 0
                       ? Shape::ofRank(vector.dims[0])
                       : Shape::unknown());
  return "";
}

std::string shapes::fromShapeListAttr(InferenceContext &ctx,
                                      llvm::StringRef name) {
  auto list = ctx.getShapeListAttr(name);
  if (!list || list->size() < ctx.getNumOutputs())
    return "";
  for (unsigned i = 0; i < ctx.getNumOutputs(); ++i)
    ctx.setOutput(i, (*list)[i]);
  return "";
}

ShapeFn cleave::ops::lookupShapeFn(llvm::StringRef opType) {
  static const llvm::StringMap<ShapeFn> *table = [] {
    auto *map = new llvm::StringMap<ShapeFn>();
    for (const ShapeFnTable &family :
         {getArrayShapeFns(), getMathShapeFns(), getNNShapeFns(),
          getControlFlowShapeFns(), getStateShapeFns(), getFunctionalShapeFns(),
          getRandomShapeFns(), getHostShapeFns(), getTPUShapeFns(),
          getIOShapeFns(), getDataShapeFns()})
      for (const auto &[name, fn] : family) {
        if (!lookupOp(name))
          llvm::report_fatal_error(
              llvm::Twine("shape function for unregistered op '") + name + "'");
        if (!map->try_emplace(name, fn).second)
          llvm::report_fatal_error(llvm::Twine("two shape functions for op '") +
                                   name + "'");
      }
    return map;
  }();
  return table->lookup(opType);
}
