//===- Registration.cpp - mlir-translate registrations --------------------===//

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Support/ToolDiagnostics.h"
#include "cleave/Translate/GraphDef.h"

#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

static llvm::cl::opt<bool> exportBinary(
    "graphdef-binary",
    llvm::cl::desc("--export-* write the binary wire format (.pb) "
                   "instead of text (.pbtxt)"),
    llvm::cl::init(false));

void cleave::registerGraphDefTranslations() {
  registerGraphDefImportOptions();
  TranslateToMLIRRegistration importReg(
      "import-graphdef",
      "GraphDef, MetaGraphDef or SavedModel (.pb or .pbtxt, sniffed) to graph "
      "dialect",
      [](llvm::SourceMgr &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        const llvm::MemoryBuffer *buffer =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        // An import option's error has no place in the file.
        cleave::CommandLineDiagnostics optionErrors(context, "error: ");
        OwningOpRef<ModuleOp> module = importGraphDef(
            *buffer, context, getGraphDefImportOptionsFromCL());
        if (!module)
          return nullptr;
        return OwningOpRef<Operation *>(module.release());
      },
      [](DialectRegistry &registry) {
        registry.insert<graph::GraphDialect>();
      });
  auto exportAs = [](GraphMessage kind) {
    return [kind](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
      auto module = dyn_cast<ModuleOp>(op);
      if (!module)
        return op->emitError("expected a builtin.module");
      return writeGraphMessage(module, os, kind, exportBinary);
    };
  };
  auto dialects = [](DialectRegistry &registry) {
    registry.insert<graph::GraphDialect>();
  };
  TranslateFromMLIRRegistration exportGraphDefReg(
      "export-graphdef",
      "graph dialect to GraphDef (text, or binary with --graphdef-binary)",
      exportAs(GraphMessage::GraphDef), dialects);
  TranslateFromMLIRRegistration exportMetaGraphReg(
      "export-meta-graph",
      "graph dialect to MetaGraphDef (with what the imported MetaGraphDef "
      "held besides the graph)",
      exportAs(GraphMessage::MetaGraphDef), dialects);
  TranslateFromMLIRRegistration exportSavedModelReg(
      "export-saved-model",
      "graph dialect to SavedModel (the imported one, this MetaGraphDef "
      "written back in its place)",
      exportAs(GraphMessage::SavedModel), dialects);
}
