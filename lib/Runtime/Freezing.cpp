//===- Freezing.cpp - variables to constants, as freeze_graph -------------===//
//
// Works on the GraphDef, as TensorFlow's convert_variables_to_constants
// does: the result is what a frozen .pb holds, node order and untouched
// nodes as they were. Constants are written as make_tensor_proto writes
// them (tensor_content for numbers, string_val for strings).
//
//===----------------------------------------------------------------------===//

#include "cleave/Runtime/Freezing.h"
#include "cleave/Dialect/Graph/Utils/NodeDefUtil.h"
#include "cleave/Support/CommandLine.h"

#include "cleave/tf/graph.pb.h"

#include "llvm/ADT/StringSet.h"

using namespace cleave;
using namespace cleave::runtime;
using llvm::StringRef;
namespace tf = tensorflow;

/// Ops that change a variable: a frozen graph cannot run them.
static bool updatesVariable(StringRef op) {
  return op.starts_with("Assign") || op.starts_with("Apply") ||
         op.starts_with("ResourceApply") || op.starts_with("ResourceScatter") ||
         op.starts_with("ScatterAdd") || op.starts_with("ScatterSub") ||
         op.starts_with("ScatterUpdate") || op == "AssignVariableOp";
}

static StringRef inputNode(StringRef input) {
  input.consume_front("^");
  return input.split(':').first;
}

static void setTensorProto(const cleave::Tensor &value,
                           tf::TensorProto &proto) {
  proto.set_dtype(static_cast<tf::DataType>(value.dtype()));
  proto.mutable_tensor_shape(); // present even for a scalar, as TF writes it
  for (int64_t dim : value.shape())
    proto.mutable_tensor_shape()->add_dim()->set_size(dim);
  if (value.dtype() == cleave::kString) {
    for (const std::string &s : value.strings())
      proto.add_string_val(s);
    return;
  }
  proto.set_tensor_content(std::string(value.raw(), value.byteSize()));
}

llvm::Error
runtime::freezeGraphDef(tf::GraphDef &graph,
                        const llvm::StringMap<cleave::Tensor> &values,
                        llvm::ArrayRef<std::string> outputs) {
  llvm::StringMap<int> byName;
  for (int i = 0; i < graph.node_size(); ++i)
    byName[graph.node(i).name()] = i;
  // What the outputs need, through data and control inputs.
  llvm::StringSet<> needed;
  std::vector<std::string> work;
  for (const std::string &output : outputs) {
    StringRef name = inputNode(output);
    if (!byName.count(name))
      return llvm::createStringError("output '%s': no node named '%s'%s",
                                     output.c_str(), name.str().c_str(),
                                     suggestNearest(name, byName).c_str());
    work.push_back(name.str());
  }
  while (!work.empty()) {
    std::string name = std::move(work.back());
    work.pop_back();
    if (!needed.insert(name).second)
      continue;
    const tf::NodeDef &node = graph.node(byName.lookup(name));
    for (const std::string &input : node.input()) {
      StringRef producer = inputNode(input);
      if (!byName.count(producer))
        return llvm::createStringError("node '%s': input '%s' does not exist",
                                       name.c_str(), input.c_str());
      work.push_back(producer.str());
    }
  }

  tf::GraphDef frozen;
  for (const tf::NodeDef &node : graph.node()) {
    if (!needed.contains(node.name()))
      continue;
    if (updatesVariable(node.op()))
      return llvm::createStringError(
          "node '%s' (%s) updates a variable, and the outputs need it: a "
          "frozen graph holds constants, not variables",
          node.name().c_str(), node.op().c_str());
    tf::NodeDef &out = *frozen.add_node();
    out = node;
    if (isVariableOpType(node.op())) {
      std::string key = node.name();
      auto shared = node.attr().find("shared_name");
      if (shared != node.attr().end() && !shared->second.s().empty())
        key = shared->second.s();
      auto value = values.find(key);
      if (value == values.end() || !value->second.isValid())
        return llvm::createStringError(
            "variable node '%s' has no value to freeze (not in the "
            "checkpoint)",
            node.name().c_str());
      out.set_op("Const");
      out.clear_input();
      auto dtype = node.attr().find("dtype");
      out.clear_attr();
      if (dtype != node.attr().end())
        (*out.mutable_attr())["dtype"] = dtype->second;
      setTensorProto(value->second,
                     *(*out.mutable_attr())["value"].mutable_tensor());
      continue;
    }
    if (node.op() == "ReadVariableOp") {
      out.set_op("Identity");
      auto dtype = node.attr().find("dtype");
      out.clear_attr();
      if (dtype != node.attr().end())
        (*out.mutable_attr())["T"] = dtype->second;
    }
  }
  if (graph.has_versions())
    *frozen.mutable_versions() = graph.versions();
  if (graph.has_library())
    *frozen.mutable_library() = graph.library();
  graph = std::move(frozen);
  return llvm::Error::success();
}
