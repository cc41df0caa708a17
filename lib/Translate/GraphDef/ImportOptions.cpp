//===- ImportOptions.cpp - the import flags every tool shares -------------===//
//
// One set of command-line options for reading graphs, registered by each
// tool that imports (graph-opt, graph-translate, graph-run, graph-compile),
// so that a flag listed in one tool's --help works in all of them.
//
//===----------------------------------------------------------------------===//

#include "cleave/Translate/GraphDef.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ManagedStatic.h"

using namespace cleave;
namespace cl = llvm::cl;

namespace {
struct ImportCLOptions {
  cl::OptionCategory category{"Graph import options"};
  cl::opt<bool> strictTensors{
      "graphdef-strict-tensors",
      cl::desc("Reject tensors whose byte size does not match their shape "
               "(TensorFlow accepts them; Cleave keeps the bytes and warns "
               "by default)"),
      cl::init(false), cl::cat(category)};
  cl::opt<bool> strictOps{
      "graphdef-strict-ops",
      cl::desc("Reject nodes whose op is neither registered nor a function "
               "of the library, as TensorFlow's importer does (Cleave keeps "
               "them by default)"),
      cl::init(false), cl::cat(category)};
  cl::list<std::string> outputArrays{
      "graphdef-output-arrays",
      cl::desc("Tensors that will be fetched (node or node:port); import "
               "fails when one does not exist"),
      cl::CommaSeparated, cl::cat(category)};
  cl::opt<bool> addDefaultAttrs{
      "graphdef-add-default-attrs",
      cl::desc("Fill in the registry defaults of attrs that nodes lack (a "
               "round trip then writes them out)"),
      cl::init(false), cl::cat(category)};
  cl::list<std::string> tags{
      "tags",
      cl::desc("SavedModel input: the tag set of the MetaGraphDef to read "
               "(default: serve)"),
      cl::CommaSeparated, cl::cat(category)};
};
} // namespace

static llvm::ManagedStatic<ImportCLOptions> clOptions;

void cleave::registerGraphDefImportOptions() { *clOptions; }

llvm::cl::OptionCategory &cleave::getGraphDefImportCategory() {
  return clOptions->category;
}

GraphDefImportOptions cleave::getGraphDefImportOptionsFromCL() {
  GraphDefImportOptions options;
  if (!clOptions.isConstructed())
    return options;
  options.strictTensors = clOptions->strictTensors;
  options.strictOps = clOptions->strictOps;
  options.outputArrays.assign(clOptions->outputArrays.begin(),
                              clOptions->outputArrays.end());
  options.addDefaultAttrs = clOptions->addDefaultAttrs;
  if (!clOptions->tags.empty())
    options.tags.assign(clOptions->tags.begin(), clOptions->tags.end());
  return options;
}
