//===- graph-opt.cpp - run passes on TensorFlow graphs --------------------===//
//
// Like mlir-opt, but reads TensorFlow's files too (GraphDefs, MetaGraphDefs
// and SavedModels, text or binary, detected by content; a SavedModel
// directory) and writes MLIR, one of those messages or a Graphviz view
// (--emit=).
//
//===----------------------------------------------------------------------===//

#include "cleave/InitAll.h"
#include "cleave/Runtime/Checkpointing.h"
#include "cleave/Support/CommandLine.h"
#include "cleave/Support/DelayedNote.h"
#include "cleave/Support/ToolDiagnostics.h"
#include "cleave/Support/ToolInit.h"
#include "cleave/Translate/Dot.h"
#include "cleave/Translate/GraphDef.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Support/ToolUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <array>
#include <chrono>
#include <mutex>

using namespace mlir;

namespace {
enum class Emit {
  MLIR,
  PbTxt,
  Pb,
  MetaGraphPbTxt,
  MetaGraphPb,
  SavedModelPbTxt,
  SavedModelPb,
  Dot
};
} // namespace

/// graph-opt's own options, listed first by --help.
static llvm::cl::OptionCategory graphOptCategory("Cleave graph-opt options");

static llvm::cl::opt<std::string>
    inputFilename(llvm::cl::Positional, llvm::cl::desc("<input file>"),
                  llvm::cl::init("-"), llvm::cl::cat(graphOptCategory));
static llvm::cl::opt<std::string>
    outputFilename("o", llvm::cl::desc("Output filename"),
                   llvm::cl::value_desc("filename"), llvm::cl::init("-"),
                   llvm::cl::cat(graphOptCategory));
static llvm::cl::opt<Emit> emitFormat(
    "emit", llvm::cl::desc("What to write"), llvm::cl::init(Emit::MLIR),
    llvm::cl::values(
        clEnumValN(Emit::MLIR, "mlir", "the module as MLIR (default)"),
        clEnumValN(Emit::PbTxt, "pbtxt", "a text GraphDef"),
        clEnumValN(Emit::Pb, "pb", "a binary GraphDef"),
        clEnumValN(Emit::MetaGraphPbTxt, "metagraph-pbtxt",
                   "a text MetaGraphDef (with what the input MetaGraphDef "
                   "or SavedModel held besides the graph)"),
        clEnumValN(Emit::MetaGraphPb, "metagraph-pb",
                   "a binary MetaGraphDef (.meta)"),
        clEnumValN(Emit::SavedModelPbTxt, "savedmodel-pbtxt",
                   "a text SavedModel (saved_model.pbtxt)"),
        clEnumValN(Emit::SavedModelPb, "savedmodel-pb",
                   "a binary SavedModel (saved_model.pb)"),
        clEnumValN(Emit::Dot, "dot", "a Graphviz graph")),
    llvm::cl::cat(graphOptCategory));

static llvm::cl::opt<bool> listVariablesOpt(
    "list-variables",
    llvm::cl::desc("Print the graph's variables (name, dtype, shape, and "
                   "the checkpoint key its saver uses) instead of the graph"),
    llvm::cl::init(false), llvm::cl::cat(graphOptCategory));

static llvm::cl::opt<double> slowSeconds(
    "slow-seconds",
    llvm::cl::desc("say on stderr what took longer than this many seconds: "
                   "the import and each pass, as it ends (default 1; 0: "
                   "everything; --mlir-timing gives the full breakdown)"),
    llvm::cl::init(1.0), llvm::cl::cat(graphOptCategory));

namespace {
/// Says which passes ran longer than --slow-seconds, as each ends, so that
/// a long pipeline is not silent until the end.
class SlowPassNotes : public PassInstrumentation {
public:
  void runBeforePass(Pass *pass, Operation *op) override {
    // Nested passes may run on several threads at once.
    std::lock_guard<std::mutex> lock(mutex);
    Running &run = running[{pass, op}];
    run.start = std::chrono::steady_clock::now();
    // A pass that runs long says so while it runs.
    run.note = std::make_unique<cleave::DelayedNote>(
        slowSeconds, [name = describe(pass, op)] {
          llvm::outs().flush();
          llvm::errs() << "graph-opt: running " << name << " ...\n";
        });
  }
  void runAfterPass(Pass *pass, Operation *op) override { note(pass, op); }
  void runAfterPassFailed(Pass *pass, Operation *op) override {
    note(pass, op);
  }

private:
  /// The pass by its flag, and the op it runs on unless the module.
  static std::string describe(Pass *pass, Operation *op) {
    StringRef name = pass->getArgument();
    std::string text = (name.empty() ? pass->getName() : name).str();
    if (!isa<ModuleOp>(op))
      text += " on '" + op->getName().getStringRef().str() + "'";
    return text;
  }
  void note(Pass *pass, Operation *op) {
    Running run;
    {
      std::lock_guard<std::mutex> lock(mutex);
      run = std::move(running[{pass, op}]);
      running.erase({pass, op});
    }
    run.note.reset(); // ends the wait (or the note under way)
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - run.start)
                         .count();
    if (seconds < slowSeconds)
      return;
    std::lock_guard<std::mutex> lock(mutex);
    llvm::outs().flush(); // whole lines when stdout and stderr meet
    llvm::errs() << "graph-opt: " << describe(pass, op) << " took "
                 << llvm::format("%.2f", seconds) << " s\n";
  }
  /// A pass running on an op: since when, and the note waiting to say so.
  struct Running {
    std::chrono::steady_clock::time_point start;
    std::unique_ptr<cleave::DelayedNote> note;
  };
  std::mutex mutex;
  llvm::DenseMap<std::pair<Pass *, Operation *>, Running> running;
};
} // namespace

/// The variables table of --list-variables.
static LogicalResult printVariables(ModuleOp module, llvm::raw_ostream &os) {
  std::vector<cleave::runtime::CheckpointedVariable> vars =
      cleave::runtime::listVariables(module);
  auto saved = cleave::runtime::listCheckpointedVariables(module);
  if (!saved)
    return module.emitError(llvm::toString(saved.takeError()));
  llvm::StringMap<std::string> keys;
  for (const auto &var : *saved)
    keys[var.node] = var.shapeAndSlice.empty()
                         ? var.key
                         : var.key + " [" + var.shapeAndSlice + "]";
  std::vector<std::array<std::string, 4>> rows = {
      {"variable", "dtype", "shape", "saved as"}};
  for (const auto &var : vars) {
    std::string key = keys.lookup(var.node);
    rows.push_back({var.node, var.dtype ? cleave::dtypeName(var.dtype) : "?",
                    var.shape ? cleave::shapeString(*var.shape) : "?",
                    key.empty() ? "(not saved)" : key});
  }
  std::array<size_t, 4> widths{};
  for (const auto &row : rows)
    for (size_t i = 0; i < 4; ++i)
      widths[i] = std::max(widths[i], row[i].size());
  for (const auto &row : rows) {
    for (size_t i = 0; i < 3; ++i)
      os << llvm::left_justify(row[i], widths[i] + 2);
    os << row[3] << "\n";
  }
  return success();
}

/// Imports or parses one buffer, runs the pipeline and writes the result.
static LogicalResult processBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer,
                                   llvm::raw_ostream &os,
                                   const MlirOptMainConfig &config,
                                   DialectRegistry &registry) {
  MLIRContext context(registry);
  context.allowUnregisteredDialects(config.shouldAllowUnregisteredDialects());
  context.loadAllAvailableDialects();
  cleave::InputFormat format = cleave::detectInputFormat(buffer->getBuffer());
  // As mlir-opt: expected diagnostics must not carry the op dump note. A
  // GraphDef's diagnostics point at the node's text, which says more.
  context.printOpOnDiagnostic(format == cleave::InputFormat::MLIR &&
                              !config.shouldVerifyDiagnostics());
  llvm::SourceMgr sourceMgr;
  const llvm::MemoryBuffer *raw = buffer.get();
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());

  auto run = [&]() -> LogicalResult {
    DefaultTimingManager tm;
    applyDefaultTimingManagerCLOptions(tm);
    TimingScope timing = tm.getRootScope();
    OwningOpRef<ModuleOp> module;
    {
      TimingScope parseTiming = timing.nest(
          format == cleave::InputFormat::MLIR ? "Parser" : "GraphDef import");
      auto start = std::chrono::steady_clock::now();
      if (format == cleave::InputFormat::MLIR) {
        module = parseSourceFile<ModuleOp>(sourceMgr, &context);
      } else {
        module = cleave::importGraphDef(
            *raw, &context, cleave::getGraphDefImportOptionsFromCL());
      }
      double seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      if (module && seconds >= slowSeconds)
        llvm::errs() << "graph-opt: "
                     << (format == cleave::InputFormat::MLIR ? "parsing"
                                                             : "import")
                     << " took " << llvm::format("%.2f", seconds) << " s\n";
    }
    if (!module)
      return failure();
    PassManager pm(&context, ModuleOp::getOperationName());
    pm.enableVerifier(config.shouldVerifyPasses());
    if (failed(applyPassManagerCLOptions(pm)))
      return failure();
    pm.enableTiming(timing);
    pm.addInstrumentation(std::make_unique<SlowPassNotes>());
    if (failed(config.setupPassPipeline(pm)) || failed(pm.run(*module)))
      return failure();
    TimingScope outputTiming = timing.nest("Output");
    if (listVariablesOpt)
      return printVariables(*module, os);
    switch (emitFormat) {
    case Emit::MLIR:
      module->print(os);
      os << "\n";
      return success();
    case Emit::PbTxt:
    case Emit::Pb:
      return cleave::writeGraphMessage(*module, os,
                                       cleave::GraphMessage::GraphDef,
                                       emitFormat == Emit::Pb);
    case Emit::MetaGraphPbTxt:
    case Emit::MetaGraphPb:
      return cleave::writeGraphMessage(*module, os,
                                       cleave::GraphMessage::MetaGraphDef,
                                       emitFormat == Emit::MetaGraphPb);
    case Emit::SavedModelPbTxt:
    case Emit::SavedModelPb:
      return cleave::writeGraphMessage(*module, os,
                                       cleave::GraphMessage::SavedModel,
                                       emitFormat == Emit::SavedModelPb);
    case Emit::Dot:
      return cleave::writeDot(*module, os);
    }
    return failure();
  };

  if (!config.shouldVerifyDiagnostics()) {
    SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    cleave::CommandLineDiagnostics optionErrors(&context, "graph-opt: error: ");
    return run();
  }
  SourceMgrDiagnosticVerifierHandler handler(sourceMgr, &context);
  (void)run();
  return handler.verify();
}

/// Parses the options of each pass on the command line once on its own, so
/// that a wrong one names the pass and lists the options it has (MLIR's
/// pipeline parser says only `<Pass-Options-Parser>: no such option x`).
static bool checkPassOptions(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    StringRef arg(argv[i]);
    if (!arg.consume_front("-"))
      continue;
    arg.consume_front("-");
    auto [name, options] = arg.split('=');
    const PassInfo *info = PassInfo::lookup(name);
    if (!info || options.empty())
      continue;
    OpPassManager pm(ModuleOp::getOperationName());
    std::string message;
    auto onError = [&](const llvm::Twine &msg) {
      message = msg.str();
      return failure();
    };
    if (succeeded(info->addToPipeline(pm, options, onError)))
      continue;
    StringRef reason(message);
    reason = reason.trim();
    reason.consume_front("<Pass-Options-Parser>: ");
    if (reason.empty()) // the option's own parser said why, above
      reason = "invalid options";
    std::string known;
    OpPassManager defaults(ModuleOp::getOperationName());
    if (succeeded(info->addToPipeline(defaults, "", onError))) {
      llvm::raw_string_ostream os(known);
      defaults.begin()->printAsTextualPipeline(os);
    }
    llvm::errs() << "graph-opt: --" << name << ": " << reason;
    if (!known.empty())
      llvm::errs() << "; its options, with their defaults: " << known;
    llvm::errs() << "\n";
    return false;
  }
  return true;
}

int main(int argc, char **argv) {
  cleave::initTool(argc, argv);
  llvm::InitLLVM init(argc, argv);
  cleave::hideLibraryOptions({&graphOptCategory});
  DialectRegistry registry;
  cleave::registerAllDialects(registry);
  cleave::registerAllPasses();
  MlirOptMainConfig::registerCLOptions(registry);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  cleave::registerGraphDefImportOptions();
  cleave::parseToolOptions(
      argc, argv,
      "Cleave optimizer: runs passes on GraphDefs (.pb, .pbtxt) and MLIR\n");
  if (!checkPassOptions(argc, argv))
    return 1;
  const MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();

  auto file = cleave::readGraphInput(inputFilename, "graph-opt");
  if (!file)
    return 1;
  std::string error;
  auto output = openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "graph-opt: " << error << "\n";
    return 1;
  }
  // Plain MLIR in and out: mlir-opt's own driver, with all its flags. A
  // split file may mix formats, so its chunks are sniffed one by one below.
  if (emitFormat == Emit::MLIR && !listVariablesOpt &&
      config.inputSplitMarker().empty() &&
      cleave::detectInputFormat(file->getBuffer()) == cleave::InputFormat::MLIR) {
    if (failed(MlirOptMain(output->os(), std::move(file), registry, config)))
      return 1;
    output->keep();
    return 0;
  }
  auto chunk = [&](std::unique_ptr<llvm::MemoryBuffer> buffer,
                   llvm::raw_ostream &os) {
    return processBuffer(std::move(buffer), os, config, registry);
  };
  if (failed(splitAndProcessBuffer(std::move(file), chunk, output->os(),
                                   config.inputSplitMarker(),
                                   config.outputSplitMarker())))
    return 1;
  output->keep();
  return 0;
}
