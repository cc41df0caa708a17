//===- graph-freeze.cpp - variables to constants from a checkpoint --------===//
//
//   graph-freeze model.meta --restore=ckpt/model-100 --outputs=softmax
//                -o frozen.pb
//   graph-freeze saved_model_dir --outputs=y -o frozen.pbtxt --text
//
// As TensorFlow's freeze_graph: the variables are read from the checkpoint
// by the graph's saver names (a SavedModel's own variables by default),
// become Consts, and the graph is pruned to what the outputs need. Writes a
// GraphDef (binary unless --text).
//
//===----------------------------------------------------------------------===//

#include "cleave/InitAll.h"
#include "cleave/Runtime/Checkpointing.h"
#include "cleave/Runtime/Freezing.h"
#include "cleave/Runtime/SavedModel.h"
#include "cleave/Support/CommandLine.h"
#include "cleave/Support/ToolInit.h"
#include "cleave/Translate/GraphDef.h"
#include "cleave/tf/graph.pb.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace cleave;
namespace cl = llvm::cl;

static cl::OptionCategory category("graph-freeze options");
static cl::opt<std::string>
    inputFilename(cl::Positional, cl::Required,
                  cl::desc("<graph: GraphDef, MetaGraphDef, SavedModel or "
                           "MLIR>"),
                  cl::cat(category));
static cl::list<std::string>
    outputNames("outputs", cl::desc("nodes the frozen graph must compute"),
                cl::CommaSeparated, cl::OneOrMore, cl::cat(category));
static cl::opt<std::string> restorePath(
    "restore",
    cl::desc("checkpoint prefix, or a directory's latest checkpoint "
             "(default for a SavedModel: its variables/variables)"),
    cl::cat(category));
static cl::opt<std::string> outputFilename("o", cl::desc("output file"),
                                           cl::init("-"), cl::cat(category));
static cl::opt<bool> textOutput("text",
                                cl::desc("write a text GraphDef (.pbtxt)"),
                                cl::init(false), cl::cat(category));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "graph-freeze: " << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  cleave::initTool(argc, argv);
  llvm::InitLLVM init(argc, argv);
  registerGraphDefImportOptions();
  cl::HideUnrelatedOptions({&category, &getGraphDefImportCategory()});
  cleave::parseToolOptions(argc, argv,
                           "Cleave graph-freeze: variables to constants, as "
                           "TensorFlow's freeze_graph\n");
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      loadGraphFile(inputFilename, &context, sourceMgr, "graph-freeze",
                    getGraphDefImportOptionsFromCL());
  if (!module)
    return 1;

  std::string restoreFrom =
      restorePath.empty()
          ? runtime::getSavedModelVariables(*module, inputFilename)
          : restorePath.getValue();
  interp::State state;
  if (!restoreFrom.empty()) {
    auto prefix = runtime::resolveCheckpointPrefix(restoreFrom);
    if (!prefix)
      return fail("--restore: " + llvm::toString(prefix.takeError()));
    auto variables = runtime::listCheckpointedVariables(*module);
    if (!variables)
      return fail(llvm::toString(variables.takeError()));
    if (llvm::Error error =
            runtime::restoreVariables(*variables, *prefix, state))
      return fail("restoring '" + *prefix + "': " +
                  llvm::toString(std::move(error)));
  }

  tensorflow::GraphDef graph;
  if (failed(exportGraphDef(*module, graph)))
    return 1;
  std::vector<std::string> outputs(outputNames.begin(), outputNames.end());
  if (llvm::Error error =
          runtime::freezeGraphDef(graph, state.variables, outputs))
    return fail(llvm::toString(std::move(error)) +
                (restoreFrom.empty() ? " (give a checkpoint with --restore)"
                                     : ""));

  // Imported again: the frozen graph is checked as any input is.
  OwningOpRef<ModuleOp> frozen =
      importGraphDef(graph, &context, "<frozen graph>");
  if (!frozen)
    return 1;
  std::error_code ec;
  llvm::ToolOutputFile output(outputFilename, ec, llvm::sys::fs::OF_None);
  if (ec)
    return fail("cannot write '" + outputFilename + "': " + ec.message());
  if (failed(writeGraphDef(*frozen, output.os(), /*binary=*/!textOutput)))
    return 1;
  output.keep();
  return 0;
}
