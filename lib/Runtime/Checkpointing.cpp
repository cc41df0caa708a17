//===- Checkpointing.cpp - variables to and from checkpoints --------------===//
//
// The names come from the graph's own saver, as tf.compat.v1.train.Saver
// restores: the SaveV2 nodes list each saved tensor's key and (for a
// partition of a partitioned variable) its "<full shape> <slice>" spec, and
// each saved tensor traces back, through Identity or ReadVariableOp, to a
// variable node. Restores are all or nothing.
//
//===----------------------------------------------------------------------===//

#include "cleave/Runtime/Checkpointing.h"

#include "cleave/Checkpoint/CheckpointState.h"
#include "cleave/Checkpoint/TensorBundle.h"
#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::runtime;

CheckpointedVariable runtime::describeVariable(graph::NodeOp node) {
  CheckpointedVariable var;
  var.variable = getVariableName(node);
  var.node = node.getName().str();
  var.key = var.node;
  var.dtype = attrAsDataType(node.getTFAttr("dtype")).value_or(0);
  var.shape = getKnownShapeAttr(node);
  return var;
}

/// Nodes of the top-level graphs (clusters included, functions not).
template <typename Fn> static void walkGraphNodes(ModuleOp module, Fn fn) {
  for (auto graphOp : module.getOps<graph::GraphOp>())
    graphOp.walk([&](graph::NodeOp node) { fn(node); });
}

std::vector<CheckpointedVariable> runtime::listVariables(ModuleOp module) {
  std::vector<CheckpointedVariable> vars;
  walkGraphNodes(module, [&](graph::NodeOp node) {
    if (isVariableOpType(node.getOpType()))
      vars.push_back(describeVariable(node));
  });
  return vars;
}

/// The variable node whose value `value` is: through Identity-like nodes
/// and resource reads.
static graph::NodeOp traceToVariable(Value value) {
  while (auto producer = value.getDefiningOp<graph::NodeOp>()) {
    StringRef op = producer.getOpType();
    if (isVariableOpType(op))
      return producer;
    if (op != "Identity" && op != "RefIdentity" && op != "ReadVariableOp" &&
        op != "Snapshot")
      return {};
    if (producer.getDataInputs().empty())
      return {};
    value = producer.getDataInputs()[0];
  }
  return {};
}

/// The strings of the Const node that produces `value`.
static llvm::Expected<std::vector<std::string>>
constStrings(Value value, graph::NodeOp user, StringRef what) {
  auto producer = value.getDefiningOp<graph::NodeOp>();
  while (producer && producer.getOpType() == "Identity" &&
         !producer.getDataInputs().empty())
    producer = producer.getDataInputs()[0].getDefiningOp<graph::NodeOp>();
  auto fail = [&] {
    return llvm::createStringError(
        "SaveV2 node '%s': its %s are not a constant string list",
        user.getName().str().c_str(), what.str().c_str());
  };
  if (!producer || producer.getOpType() != "Const")
    return fail();
  auto tensor = dyn_cast_or_null<graph::TensorAttr>(producer.getTFAttr("value"));
  auto elements = tensor ? dyn_cast_or_null<DenseStringElementsAttr>(
                               tensor.getValue())
                         : DenseStringElementsAttr();
  if (!elements)
    return fail();
  std::vector<std::string> strings;
  for (StringRef s : elements.getRawStringData())
    strings.push_back(s.str());
  // A splat holds one string for all elements.
  int64_t count = elements.getNumElements();
  if (strings.size() == 1 && count > 1)
    strings.assign(count, strings.front());
  return strings;
}

llvm::Expected<std::vector<CheckpointedVariable>>
runtime::listCheckpointedVariables(ModuleOp module) {
  std::vector<graph::NodeOp> savers;
  walkGraphNodes(module, [&](graph::NodeOp node) {
    if (node.getOpType() == "SaveV2")
      savers.push_back(node);
  });
  if (savers.empty()) {
    std::vector<CheckpointedVariable> vars = listVariables(module);
    // TPUEstimator's loop counter is a local variable (LOCAL_VARIABLES),
    // which a default Saver does not save.
    llvm::erase_if(vars, [](const CheckpointedVariable &var) {
      return var.key == "tpu_estimator/iterations_per_loop";
    });
    llvm::sort(vars, [](const CheckpointedVariable &a,
                        const CheckpointedVariable &b) { return a.key < b.key; });
    return vars;
  }
  std::vector<CheckpointedVariable> vars;
  llvm::StringSet<> seenKeys;
  for (graph::NodeOp saver : savers) {
    auto inputs = saver.getDataInputs();
    if (inputs.size() < 3)
      return llvm::createStringError("SaveV2 node '%s' has %zu inputs",
                                     saver.getName().str().c_str(),
                                     inputs.size());
    auto names = constStrings(inputs[1], saver, "tensor_names");
    if (!names)
      return names.takeError();
    auto slices = constStrings(inputs[2], saver, "shape_and_slices");
    if (!slices)
      return slices.takeError();
    size_t count = inputs.size() - 3;
    if (names->size() != count || slices->size() != count)
      return llvm::createStringError(
          "SaveV2 node '%s' saves %zu tensors but names %zu and slices %zu",
          saver.getName().str().c_str(), count, names->size(),
          slices->size());
    for (size_t i = 0; i < count; ++i) {
      graph::NodeOp variable = traceToVariable(inputs[3 + i]);
      if (!variable)
        return llvm::createStringError(
            "SaveV2 node '%s' saves '%s' (input %zu), which is not a "
            "variable: Cleave restores and saves only variables",
            saver.getName().str().c_str(), (*names)[i].c_str(), 3 + i);
      CheckpointedVariable var = describeVariable(variable);
      var.key = (*names)[i];
      var.shapeAndSlice = (*slices)[i];
      // A partitioned variable's parts share one key.
      if (!seenKeys.insert(var.key + "\n" + var.shapeAndSlice).second)
        continue;
      vars.push_back(std::move(var));
    }
  }
  return vars;
}

llvm::Expected<std::string>
runtime::resolveCheckpointPrefix(StringRef path) {
  if (!llvm::sys::fs::is_directory(path))
    return path.str();
  auto latest = checkpoint::latestCheckpoint(path);
  if (!latest)
    return latest.takeError();
  if (!*latest)
    return llvm::createStringError(
        "no checkpoint in directory '%s' (its 'checkpoint' file is missing, "
        "names none, or names one whose index file is gone)",
        path.str().c_str());
  return **latest;
}

llvm::Error
runtime::restoreVariables(ArrayRef<CheckpointedVariable> variables,
                          StringRef prefix, interp::State &state) {
  auto reader = checkpoint::BundleReader::open(prefix);
  if (!reader)
    return reader.takeError();
  llvm::StringMap<Tensor> fullTensors;
  std::vector<std::pair<std::string, Tensor>> values;
  for (const CheckpointedVariable &var : variables) {
    if (!reader->lookup(var.key))
      return llvm::createStringError(
          "Key %s not found in checkpoint '%s' (variable node '%s')",
          var.key.c_str(), prefix.str().c_str(), var.node.c_str());
    auto cached = fullTensors.find(var.key);
    if (cached == fullTensors.end()) {
      auto tensor = reader->read(var.key);
      if (!tensor)
        return tensor.takeError();
      cached = fullTensors.try_emplace(var.key, std::move(*tensor)).first;
    }
    Tensor value = cached->second;
    if (!var.shapeAndSlice.empty()) {
      auto spec = checkpoint::parseShapeAndSlice(var.shapeAndSlice);
      if (!spec)
        return llvm::createStringError(
            "variable node '%s': %s", var.node.c_str(),
            llvm::toString(spec.takeError()).c_str());
      auto &[fullShape, slice] = *spec;
      if (value.shape() != fullShape)
        return llvm::createStringError(
            "variable node '%s': tensor '%s' of checkpoint '%s' has shape "
            "%s, the saver's partitioning expects %s",
            var.node.c_str(), var.key.c_str(), prefix.str().c_str(),
            cleave::shapeString(value.shape()).c_str(),
            cleave::shapeString(fullShape).c_str());
      auto part = checkpoint::extractSlice(value, slice);
      if (!part)
        return llvm::createStringError(
            "variable node '%s': %s", var.node.c_str(),
            llvm::toString(part.takeError()).c_str());
      value = std::move(*part);
    }
    if (var.dtype && value.dtype() != var.dtype)
      return llvm::createStringError(
          "variable node '%s' is %s but tensor '%s' of checkpoint '%s' is %s",
          var.node.c_str(), cleave::dtypeName(var.dtype).c_str(),
          var.key.c_str(), prefix.str().c_str(),
          cleave::dtypeName(value.dtype()).c_str());
    if (var.shape && value.shape() != *var.shape)
      return llvm::createStringError(
          "variable node '%s' has shape %s but tensor '%s' of checkpoint "
          "'%s' has shape %s",
          var.node.c_str(), cleave::shapeString(*var.shape).c_str(),
          var.key.c_str(), prefix.str().c_str(),
          cleave::shapeString(value.shape()).c_str());
    values.emplace_back(var.variable, std::move(value));
  }
  // Everything checked: now the state changes.
  for (auto &[name, value] : values)
    state.variables[name] = std::move(value);
  return llvm::Error::success();
}

llvm::Error runtime::saveVariables(ArrayRef<CheckpointedVariable> variables,
                                   const interp::State &state,
                                   StringRef prefix) {
  checkpoint::BundleWriter writer(prefix.str());
  for (const CheckpointedVariable &var : variables) {
    auto it = state.variables.find(var.variable);
    if (it == state.variables.end() || !it->second.isValid())
      return llvm::createStringError(
          "cannot save variable node '%s': it has no value (not "
          "initialized)",
          var.node.c_str());
    if (var.shapeAndSlice.empty()) {
      if (llvm::Error error = writer.add(var.key, it->second))
        return error;
      continue;
    }
    auto spec = checkpoint::parseShapeAndSlice(var.shapeAndSlice);
    if (!spec)
      return llvm::createStringError(
          "variable node '%s': %s", var.node.c_str(),
          llvm::toString(spec.takeError()).c_str());
    if (llvm::Error error =
            writer.addSlice(var.key, spec->first, spec->second, it->second))
      return error;
  }
  return writer.finish();
}
