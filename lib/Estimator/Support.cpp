//===- Support.cpp - what the Estimator library's files share -------------===//

#include "Support.h"

#include "cleave/Checkpoint/TensorBundle.h"
#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"
#include "cleave/Dialect/Graph/Utils/TensorNames.h"
#include "cleave/Runtime/Checkpointing.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::estimator;

llvm::Error estimator::makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

graph::NodeOp estimator::findNode(ModuleOp module, llvm::StringRef name) {
  graph::NodeOp found;
  walkNodes(module, [&](graph::NodeOp node) {
    if (!found && node.getName() == name)
      found = node;
  });
  return found;
}

bool estimator::hasTensor(ModuleOp module, llvm::StringRef tensor) {
  auto [name, port] = graph::splitTensorName(tensor);
  graph::NodeOp node = findNode(module, name);
  return node && port < node.getOutputs().size();
}

int32_t estimator::getTensorDType(ModuleOp module, llvm::StringRef tensor) {
  auto [name, port] = graph::splitTensorName(tensor);
  graph::NodeOp node = findNode(module, name);
  if (!node || port >= node.getOutputs().size())
    return 0;
  auto type = dyn_cast<TensorType>(node.getOutputs()[port].getType());
  return type ? graph::typeToDataType(type.getElementType()) : 0;
}

std::vector<graph::NodeOp> estimator::getVariables(ModuleOp module) {
  std::vector<graph::NodeOp> variables;
  walkNodes(module, [&](graph::NodeOp node) {
    if (isVariableOpType(node.getOpType()))
      variables.push_back(node);
  });
  return variables;
}

graph::NodeOp estimator::getInitializer(graph::NodeOp variable) {
  graph::NodeOp first;
  for (Operation *user : variable.getOutputs()[0].getUsers()) {
    auto node = dyn_cast<graph::NodeOp>(user);
    if (!node ||
        (node.getOpType() != "Assign" &&
         node.getOpType() != "AssignVariableOp") ||
        node.getDataInputs().empty() ||
        node.getDataInputs()[0] != variable.getOutputs()[0])
      continue;
    if (node.getName() == (variable.getName() + "/Assign").str())
      return node;
    if (!first)
      first = node;
  }
  return first;
}

llvm::StringSet<> estimator::getControlInputNames(graph::NodeOp op) {
  llvm::StringSet<> names;
  for (Value control : op.getControlInputs())
    if (auto node = control.getDefiningOp<graph::NodeOp>())
      names.insert(node.getName());
  return names;
}

llvm::Expected<std::string>
estimator::findLatestCheckpoint(llvm::StringRef modelDir) {
  llvm::SmallString<256> state(modelDir);
  llvm::sys::path::append(state, "checkpoint");
  if (!llvm::sys::fs::exists(state))
    return std::string();
  return runtime::resolveCheckpointPrefix(modelDir);
}

std::optional<int64_t> estimator::getCheckpointStep(llvm::StringRef prefix) {
  int64_t step;
  if (prefix.rsplit('-').second.getAsInteger(10, step))
    return std::nullopt;
  return step;
}

std::string estimator::getCheckpointPrefix(llvm::StringRef modelDir,
                                           int64_t step) {
  llvm::SmallString<256> prefix(modelDir);
  llvm::sys::path::append(prefix, "model.ckpt-" + std::to_string(step));
  return std::string(prefix);
}

std::string estimator::pythonList(llvm::ArrayRef<std::string> items) {
  std::string out = "[";
  for (const std::string &item : items)
    out += (out.size() > 1 ? ", '" : "'") + item + "'";
  return out + "]";
}

std::string estimator::formatValue(const Tensor &tensor) {
  return tensor.isValid() ? tensor.toNumpyString() : "None";
}

double estimator::secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

llvm::Expected<std::vector<std::pair<std::string, std::string>>>
estimator::mapVariablesByName(ModuleOp module, llvm::StringRef prefix,
                              llvm::StringRef except,
                              std::vector<std::string> *missing) {
  auto reader = checkpoint::BundleReader::open(prefix);
  if (!reader)
    return reader.takeError();
  llvm::StringSet<> keys;
  for (const std::string &key : reader->keys())
    keys.insert(key);
  std::vector<std::pair<std::string, std::string>> mapped;
  for (graph::NodeOp variable : getVariables(module)) {
    llvm::StringRef name = variable.getName();
    if (name == except)
      continue;
    if (keys.contains(name))
      mapped.emplace_back(name.str(), name.str());
    else if (missing)
      missing->push_back(name.str());
  }
  return mapped;
}
