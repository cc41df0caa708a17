//===- Registration.cpp - mlir-translate registrations --------------------===//

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Translate/GraphDef.h"

#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

static llvm::cl::opt<bool> exportBinary(
    "graphdef-binary",
    llvm::cl::desc("--export-graphdef writes the binary wire format (.pb) "
                   "instead of text (.pbtxt)"),
    llvm::cl::init(false));

static llvm::cl::opt<bool> strictTensors(
    "graphdef-strict-tensors",
    llvm::cl::desc("Reject tensors whose byte size does not match their "
                   "shape (TensorFlow accepts them; Cleave warns by default)"),
    llvm::cl::init(false));

static llvm::cl::list<std::string> outputArrays(
    "graphdef-output-arrays",
    llvm::cl::desc("Tensors that will be fetched (node or node:port); "
                   "import fails when one does not exist"),
    llvm::cl::CommaSeparated);

static llvm::cl::opt<bool> addDefaultAttrs(
    "graphdef-add-default-attrs",
    llvm::cl::desc("Fill in the registry defaults of attrs that nodes lack "
                   "(a round trip then writes them out)"),
    llvm::cl::init(false));

void cleave::registerGraphDefTranslations() {
  TranslateToMLIRRegistration importReg(
      "import-graphdef", "GraphDef (.pb or .pbtxt, sniffed) to graph dialect",
      [](llvm::SourceMgr &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        const llvm::MemoryBuffer *buffer =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        GraphDefImportOptions options;
        options.strictTensors = strictTensors;
        options.outputArrays.assign(outputArrays.begin(), outputArrays.end());
        options.addDefaultAttrs = addDefaultAttrs;
        OwningOpRef<ModuleOp> module =
            importGraphDef(*buffer, context, options);
        if (!module)
          return nullptr;
        return OwningOpRef<Operation *>(module.release());
      },
      [](DialectRegistry &registry) {
        registry.insert<graph::GraphDialect>();
      });
  TranslateFromMLIRRegistration exportReg(
      "export-graphdef", "graph dialect to GraphDef (text, or binary with "
                         "--graphdef-binary)",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        return writeGraphDef(module, os, exportBinary);
      },
      [](DialectRegistry &registry) {
        registry.insert<graph::GraphDialect>();
      });
}
