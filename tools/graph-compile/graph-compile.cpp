//===- graph-compile.cpp - a graph to an object file and a header ---------===//
//
//   graph-compile mlp.pbtxt --feed x=64x784 --feed labels=64 --fetch Mean
//                 --target GradientDescent --init init --class demo::MlpStep
//                 -o mlp_step.o --header mlp_step.h
//
// As TensorFlow's tfcompile: the nodes the fetches and targets need become
// one native function for the host CPU, and the header declares a class
// with a buffer per feed, fetch and variable and Run(). With --init, the
// named initializers run on the reference interpreter at compile time and
// the variables' values are baked into the object.
//
//===----------------------------------------------------------------------===//

#include "cleave/Executor/Executor.h"
#include "cleave/InitAll.h"
#include "cleave/Support/CommandLine.h"
#include "cleave/Support/ToolDiagnostics.h"
#include "cleave/Support/ToolInit.h"
#include "cleave/Target/CPU/AheadOfTime.h"
#include "cleave/Translate/GraphDef.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace cleave;
namespace cl = llvm::cl;

static cl::OptionCategory category("graph-compile options");
static cl::opt<std::string> inputFilename(cl::Positional, cl::Required,
                                          cl::desc("<graph: .pb, .pbtxt or "
                                                   ".mlir>"),
                                          cl::cat(category));
static cl::list<std::string>
    feedOpts("feed",
             cl::desc("placeholder to feed: name, or name=2x784 to give its "
                      "shape"),
             cl::cat(category));
static cl::list<std::string> fetchOpts("fetch",
                                       cl::desc("tensor to return: "
                                                "node[:port]"),
                                       cl::cat(category));
static cl::list<std::string> targetOpts("target",
                                        cl::desc("node to run for effect"),
                                        cl::cat(category));
static cl::list<std::string>
    initOpts("init",
             cl::desc("initializer run at compile time (on the interpreter); "
                      "the variables' values are baked into the object"),
             cl::cat(category));
static cl::opt<std::string>
    className("class", cl::desc("the generated class, with its namespaces"),
              cl::Required, cl::cat(category));
static cl::opt<std::string> functionName(
    "function",
    cl::desc("the C symbol of the compiled function (default: from --class)"),
    cl::cat(category));
static cl::opt<std::string> objectFile("o", cl::desc("object file to write"),
                                       cl::Required, cl::cat(category));
static cl::opt<std::string> headerFile("header",
                                       cl::desc("header file to write"),
                                       cl::Required, cl::cat(category));

static bool isIdentifier(StringRef name) {
  return !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
         llvm::all_of(name, [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
         });
}

int main(int argc, char **argv) {
  cleave::initTool(argc, argv);
  llvm::InitLLVM init(argc, argv);
  registerGraphDefImportOptions();
  cl::HideUnrelatedOptions({&category, &getGraphDefImportCategory()});
  cleave::parseToolOptions(argc, argv,
                           "Cleave ahead-of-time compiler: a graph to an "
                           "object file and a C++ header\n");
  DialectRegistry registry;
  cleave::registerAllDialects(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  cleave::CommandLineDiagnostics requestErrors(&context, "graph-compile: ");

  SmallVector<StringRef> scopes;
  StringRef(className).split(scopes, "::");
  if (!llvm::all_of(scopes, isIdentifier)) {
    llvm::errs() << "graph-compile: --class '" << className
                 << "' is not a C++ class name (namespaces joined by ::)\n";
    return 1;
  }
  cpu::AheadOfTimeOptions options;
  options.className = className;
  options.function = functionName.empty() ? "cleave_" + llvm::join(scopes, "_")
                                          : functionName.getValue();
  if (!isIdentifier(options.function)) {
    llvm::errs() << "graph-compile: --function '" << options.function
                 << "' is not a C identifier\n";
    return 1;
  }
  for (StringRef feed : feedOpts) {
    auto [name, shapeText] = feed.split('=');
    cpu::AheadOfTimeOptions::Feed spec{name.str(), std::nullopt};
    if (feed.contains('=')) {
      std::vector<int64_t> dims;
      SmallVector<StringRef> parts;
      if (!shapeText.empty())
        shapeText.split(parts, 'x');
      for (StringRef part : parts) {
        int64_t d;
        if (part.getAsInteger(10, d) || d < 0) {
          llvm::errs() << "graph-compile: --feed " << name << ": '"
                       << shapeText
                       << "' is not a shape (dims joined by x, e.g. 2x784; "
                          "empty for a scalar)\n";
          return 1;
        }
        dims.push_back(d);
      }
      spec.shape = dims;
    }
    options.feeds.push_back(spec);
  }
  options.fetches.assign(fetchOpts.begin(), fetchOpts.end());
  options.targets.assign(targetOpts.begin(), targetOpts.end());
  if (options.fetches.empty() && options.targets.empty()) {
    llvm::errs() << "graph-compile: nothing to compile: give --fetch or "
                    "--target\n";
    return 1;
  }
  options.sourceName = llvm::sys::path::filename(inputFilename).str();

  OwningOpRef<ModuleOp> module =
      loadGraphFile(inputFilename, &context, sourceMgr, "graph-compile",
                    getGraphDefImportOptionsFromCL());
  if (!module)
    return 1;

  interp::Executor interpreter(*module);
  if (!initOpts.empty()) {
    std::vector<std::string> initTargets(initOpts.begin(), initOpts.end());
    if (failed(interpreter.run({}, {}, initTargets)))
      return 1;
    options.initialVariables = &interpreter.getState().variables;
  }

  std::error_code ec;
  auto object = std::make_unique<llvm::ToolOutputFile>(
      objectFile, ec, llvm::sys::fs::OF_None);
  if (ec) {
    llvm::errs() << "graph-compile: cannot write '" << objectFile
                 << "': " << ec.message() << "\n";
    return 1;
  }
  auto header = std::make_unique<llvm::ToolOutputFile>(
      headerFile, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    llvm::errs() << "graph-compile: cannot write '" << headerFile
                 << "': " << ec.message() << "\n";
    return 1;
  }
  if (failed(cpu::compileAheadOfTime(*module, options, object->os(),
                                     header->os())))
    return 1;
  object->keep();
  header->keep();
  return 0;
}
