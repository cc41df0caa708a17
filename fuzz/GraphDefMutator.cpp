//===- GraphDefMutator.cpp - structural mutations of a GraphDef -----------===//

#include "GraphDefMutator.h"

#include "cleave/Ops/OpRegistry.h"
#include "cleave/tf/graph.pb.h"

#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

#include <algorithm>
#include <vector>

using namespace cleave;
namespace pb = google::protobuf;

namespace {
using Nodes = pb::RepeatedPtrField<tensorflow::NodeDef>;
} // namespace

template <typename T>
static T pick(std::mt19937_64 &rng, const std::vector<T> &from) {
  return from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(rng)];
}

static size_t index(std::mt19937_64 &rng, size_t size) {
  return std::uniform_int_distribution<size_t>(0, size - 1)(rng);
}

/// The node lists a mutation may edit: the graph's and each function's.
static std::vector<Nodes *> nodeLists(tensorflow::GraphDef &graph) {
  std::vector<Nodes *> lists;
  if (graph.node_size())
    lists.push_back(graph.mutable_node());
  for (tensorflow::FunctionDef &f :
       *graph.mutable_library()->mutable_function())
    if (f.node_def_size())
      lists.push_back(f.mutable_node_def());
  return lists;
}

/// A node of some list, or null when there is none.
static tensorflow::NodeDef *pickNode(tensorflow::GraphDef &graph,
                                     std::mt19937_64 &rng,
                                     Nodes **list = nullptr) {
  std::vector<Nodes *> lists = nodeLists(graph);
  if (lists.empty())
    return nullptr;
  Nodes *nodes = pick(rng, lists);
  if (list)
    *list = nodes;
  return nodes->Mutable(int(index(rng, nodes->size())));
}

/// Ports that break code which trusts them.
static int64_t edgePort(std::mt19937_64 &rng) {
  return pick<int64_t>(rng, {0, 1, 2, 3, 7, -1, -5, 1000, 2147483647,
                             -2147483648LL, 4294967296LL});
}

/// Dimension sizes: unknown, empty, ordinary, past int32, past memory.
static int64_t edgeDim(std::mt19937_64 &rng) {
  return pick<int64_t>(rng, {-1, -2, 0, 1, 2, 3, 1000000000, 2147483648LL,
                             (int64_t(1) << 40), (int64_t(1) << 62),
                             -9223372036854775807LL});
}

/// DataType values: common, exotic, reference, and none at all.
static int edgeDType(std::mt19937_64 &rng) {
  return pick<int>(
      rng, {1, 2, 3, 4, 5, 6, 7, 9, 10, 14, 19, 20, 21, 0, 101, 103, 1000, -3});
}

/// The shapes reachable in a node's attrs.
static std::vector<tensorflow::TensorShapeProto *>
shapesOf(tensorflow::NodeDef &node) {
  std::vector<tensorflow::TensorShapeProto *> shapes;
  for (auto &[key, value] : *node.mutable_attr()) {
    if (value.has_shape())
      shapes.push_back(value.mutable_shape());
    if (value.has_tensor())
      shapes.push_back(value.mutable_tensor()->mutable_tensor_shape());
    if (value.has_list())
      for (tensorflow::TensorShapeProto &s :
           *value.mutable_list()->mutable_shape())
        shapes.push_back(&s);
  }
  return shapes;
}

/// "name", "name:3" or "name:out:3" with another port; a control input
/// as it is.
static std::string withPort(const std::string &input, int64_t port) {
  if (input.empty() || input[0] == '^')
    return input;
  size_t colon = input.rfind(':');
  if (colon == std::string::npos)
    return input + ":" + std::to_string(port);
  return input.substr(0, colon + 1) + std::to_string(port);
}

static const char *changeOp(tensorflow::GraphDef &graph, std::mt19937_64 &rng) {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> names;
    for (const ops::OpSpec *spec : ops::getRegisteredOps())
      names.push_back(spec->name);
    return names;
  }();
  tensorflow::NodeDef *node = pickNode(graph, rng);
  if (!node)
    return nullptr;
  node->set_op(pick(rng, ops));
  return "change-op";
}

static const char *deleteInput(tensorflow::GraphDef &graph,
                               std::mt19937_64 &rng) {
  tensorflow::NodeDef *node = pickNode(graph, rng);
  if (!node || !node->input_size())
    return nullptr;
  auto *inputs = node->mutable_input();
  inputs->erase(inputs->begin() + index(rng, inputs->size()));
  return "delete-input";
}

static const char *duplicateInput(tensorflow::GraphDef &graph,
                                  std::mt19937_64 &rng) {
  tensorflow::NodeDef *node = pickNode(graph, rng);
  if (!node || !node->input_size())
    return nullptr;
  std::string input = node->input(int(index(rng, node->input_size())));
  node->add_input(input);
  return "duplicate-input";
}

static const char *changePort(tensorflow::GraphDef &graph,
                              std::mt19937_64 &rng) {
  tensorflow::NodeDef *node = pickNode(graph, rng);
  if (!node || !node->input_size())
    return nullptr;
  int i = int(index(rng, node->input_size()));
  node->set_input(i, withPort(node->input(i), edgePort(rng)));
  return "change-port";
}

/// Points an input (data or control) at another node of the same list:
/// cycles, self-loops and edges across frames come from here.
static const char *rewireInput(tensorflow::GraphDef &graph,
                               std::mt19937_64 &rng) {
  Nodes *list = nullptr;
  tensorflow::NodeDef *node = pickNode(graph, rng, &list);
  if (!node)
    return nullptr;
  std::string source = list->Get(int(index(rng, list->size()))).name();
  if (std::uniform_int_distribution<int>(0, 3)(rng) == 0)
    source = "^" + source;
  if (node->input_size() && std::uniform_int_distribution<int>(0, 1)(rng))
    node->set_input(int(index(rng, node->input_size())), source);
  else
    node->add_input(source);
  return "rewire-input";
}

static const char *changeDType(tensorflow::GraphDef &graph,
                               std::mt19937_64 &rng) {
  tensorflow::NodeDef *node = pickNode(graph, rng);
  if (!node)
    return nullptr;
  std::vector<tensorflow::AttrValue *> typed;
  for (auto &[key, value] : *node->mutable_attr())
    if (value.value_case() == tensorflow::AttrValue::kType ||
        (value.has_tensor()) || (value.has_list() && value.list().type_size()))
      typed.push_back(&value);
  if (typed.empty())
    return nullptr;
  tensorflow::AttrValue *value = pick(rng, typed);
  auto dtype = static_cast<tensorflow::DataType>(edgeDType(rng));
  if (value->value_case() == tensorflow::AttrValue::kType)
    value->set_type(dtype);
  else if (value->has_tensor())
    value->mutable_tensor()->set_dtype(dtype);
  else
    value->mutable_list()->set_type(int(index(rng, value->list().type_size())),
                                    dtype);
  return "change-dtype";
}

static const char *changeDim(tensorflow::GraphDef &graph,
                             std::mt19937_64 &rng) {
  tensorflow::NodeDef *node = pickNode(graph, rng);
  if (!node)
    return nullptr;
  std::vector<tensorflow::TensorShapeProto *> shapes = shapesOf(*node);
  if (shapes.empty())
    return nullptr;
  tensorflow::TensorShapeProto *shape = pick(rng, shapes);
  switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
  case 0:
    shape->add_dim()->set_size(edgeDim(rng));
    break;
  case 1:
    if (shape->dim_size())
      shape->mutable_dim()->RemoveLast();
    break;
  case 2:
    shape->set_unknown_rank(!shape->unknown_rank());
    break;
  default:
    if (!shape->dim_size())
      return nullptr;
    shape->mutable_dim(int(index(rng, shape->dim_size())))
        ->set_size(edgeDim(rng));
  }
  return "change-dim";
}

/// Copies a top-level node into a function body (creating a function and
/// a call of it when there is none): graph-level constructs meet the
/// function machinery.
static const char *copyIntoFunction(tensorflow::GraphDef &graph,
                                    std::mt19937_64 &rng) {
  if (!graph.node_size())
    return nullptr;
  auto *functions = graph.mutable_library()->mutable_function();
  if (functions->empty()) {
    tensorflow::FunctionDef *f = functions->Add();
    f->mutable_signature()->set_name("mutant_fn");
    tensorflow::NodeDef *call = graph.add_node();
    call->set_name("mutant_call");
    call->set_op("mutant_fn");
  }
  tensorflow::FunctionDef &f =
      functions->at(int(index(rng, functions->size())));
  tensorflow::NodeDef *copy = f.add_node_def();
  *copy = graph.node(int(index(rng, graph.node_size())));
  return "copy-into-function";
}

static const char *swapAttrs(tensorflow::GraphDef &graph,
                             std::mt19937_64 &rng) {
  tensorflow::NodeDef *a = pickNode(graph, rng), *b = pickNode(graph, rng);
  if (!a || !b || a == b)
    return nullptr;
  a->mutable_attr()->swap(*b->mutable_attr());
  return "swap-attrs";
}

static const char *dropAttr(tensorflow::GraphDef &graph, std::mt19937_64 &rng) {
  tensorflow::NodeDef *node = pickNode(graph, rng);
  if (!node || node->attr().empty())
    return nullptr;
  auto it = node->mutable_attr()->begin();
  std::advance(it, index(rng, node->attr().size()));
  node->mutable_attr()->erase(it);
  return "drop-attr";
}

/// An int, bool or float attr (axis, N, keep_dims, ...) set to an edge
/// value.
static const char *changeScalarAttr(tensorflow::GraphDef &graph,
                                    std::mt19937_64 &rng) {
  tensorflow::NodeDef *node = pickNode(graph, rng);
  if (!node)
    return nullptr;
  std::vector<tensorflow::AttrValue *> scalars;
  for (auto &[key, value] : *node->mutable_attr())
    if (value.value_case() == tensorflow::AttrValue::kI ||
        value.value_case() == tensorflow::AttrValue::kB ||
        value.value_case() == tensorflow::AttrValue::kF)
      scalars.push_back(&value);
  if (scalars.empty())
    return nullptr;
  tensorflow::AttrValue *value = pick(rng, scalars);
  if (value->value_case() == tensorflow::AttrValue::kI)
    value->set_i(edgePort(rng));
  else if (value->value_case() == tensorflow::AttrValue::kB)
    value->set_b(!value->b());
  else
    value->set_f(pick<float>(rng, {0.0f, -1.0f, 1e38f, -0.0f, 1e-45f}));
  return "change-scalar-attr";
}

static const char *duplicateNode(tensorflow::GraphDef &graph,
                                 std::mt19937_64 &rng) {
  Nodes *list = nullptr;
  tensorflow::NodeDef *node = pickNode(graph, rng, &list);
  if (!node)
    return nullptr;
  tensorflow::NodeDef copy = *node;
  // Same name now and then: TensorFlow's "duplicate node name".
  if (std::uniform_int_distribution<int>(0, 3)(rng))
    copy.set_name(copy.name() + "_dup");
  *list->Add() = std::move(copy);
  return "duplicate-node";
}

static const char *deleteNode(tensorflow::GraphDef &graph,
                              std::mt19937_64 &rng) {
  Nodes *list = nullptr;
  if (!pickNode(graph, rng, &list))
    return nullptr;
  list->erase(list->begin() + index(rng, list->size()));
  return "delete-node";
}

const char *cleave::fuzz::mutateGraphDef(tensorflow::GraphDef &graph,
                                         std::mt19937_64 &rng) {
  using Mutation = const char *(*)(tensorflow::GraphDef &, std::mt19937_64 &);
  static const std::vector<Mutation> mutations = {
      changeOp,    deleteInput, duplicateInput,   changePort,
      rewireInput, changeDType, changeDim,        copyIntoFunction,
      swapAttrs,   dropAttr,    changeScalarAttr, duplicateNode,
      deleteNode};
  // Not every mutation applies to every graph: try a few.
  for (int attempt = 0; attempt < 8; ++attempt)
    if (const char *name = pick(rng, mutations)(graph, rng))
      return name;
  return "none";
}

namespace {
/// Most inputs libFuzzer hands over do not parse; that is no news.
class QuietErrors : public pb::io::ErrorCollector {
public:
  void AddError(int, pb::io::ColumnNumber, const std::string &) override {}
};
} // namespace

bool cleave::fuzz::mutateGraphDefText(std::string &text, uint64_t seed,
                                      unsigned steps) {
  tensorflow::GraphDef graph;
  pb::TextFormat::Parser parser;
  QuietErrors quiet;
  parser.RecordErrorsTo(&quiet);
  parser.AllowPartialMessage(true);
  if (!parser.ParseFromString(text, &graph))
    return false;
  std::mt19937_64 rng(seed);
  for (unsigned i = 0; i < steps; ++i)
    mutateGraphDef(graph, rng);
  // One line, as the seeds are: mutants stay small.
  pb::TextFormat::Printer printer;
  printer.SetSingleLineMode(true);
  std::string out;
  if (!printer.PrintToString(graph, &out))
    return false;
  text = std::move(out);
  return true;
}
