//===- graph-ops.cpp - list what Cleave knows about each op ---------------===//
//
//   graph-ops              one line per registered op (tab-separated)
//   graph-ops --markdown   the table of docs/generated/Ops.md
//   graph-ops Conv2D ...   only these ops (unknown names are an error)
//   graph-ops --fuzz-dictionary
//                          a libFuzzer dictionary: every op name, attr name
//                          and DataType name, as they are written in text
//                          GraphDefs
//
// For each op: its family (the file stem of its pieces in every layer:
// lib/Ops/<Family>Ops.cpp, <Family>Kernels.cpp, <Family>Lowerings.cpp),
// whether the device backend compiles it, whether it lowers
// to native code on the CPU target (graph-run --backend=cpu), whether it is
// stateful, and whether it has a shape function, a reference kernel and a
// gradient rule ("none" for ops TensorFlow declares not differentiable,
// "pass" for those graph-gradient differentiates itself: control flow and
// calls).
//
//===----------------------------------------------------------------------===//

#include "cleave/Conversion/GraphToLinalg.h"
#include "cleave/Kernels/KernelHost.h"
#include "cleave/Ops/GradientRules.h"
#include "cleave/Ops/OpRegistry.h"
#include "cleave/Ops/ShapeInference.h"
#include "cleave/Support/CommandLine.h"
#include "cleave/Tensor/Tensor.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

using namespace cleave;
namespace cl = llvm::cl;

static cl::OptionCategory category("graph-ops options");
static cl::opt<bool> markdown("markdown", cl::desc("Write a Markdown table"),
                              cl::cat(category));
static cl::opt<bool>
    fuzzDictionary("fuzz-dictionary",
                   cl::desc("Write a libFuzzer dictionary of op names, attr "
                            "names and dtypes"),
                   cl::cat(category));
static cl::list<std::string> names(cl::Positional, cl::desc("[op ...]"),
                                   cl::cat(category));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cleave::parseToolOptions(
      argc, argv,
      "Lists the op registry: device support, CPU lowering, statefulness, "
      "shape "
      "functions, reference kernels and gradient rules\n");
  if (fuzzDictionary) {
    // One entry per token (libFuzzer's format: name="value").
    std::set<std::string> attrs, tokens;
    for (const ops::OpSpec *op : ops::getRegisteredOps()) {
      tokens.insert("\"" + op->name + "\"");
      for (const ops::AttrSpec &attr : op->attrs)
        attrs.insert(attr.name);
    }
    for (const std::string &attr : attrs)
      tokens.insert("key: \"" + attr + "\"");
    for (int32_t dtype = 1; dtype < 30; ++dtype)
      if (ops::parseDataTypeEnum(
              "DT_" + llvm::StringRef(dtypeName(dtype)).upper()) == dtype)
        tokens.insert("DT_" + llvm::StringRef(dtypeName(dtype)).upper());
    size_t i = 0;
    for (const std::string &token : tokens) {
      llvm::outs() << "t" << i++ << "=\"";
      llvm::outs().write_escaped(token);
      llvm::outs() << "\"\n";
    }
    return 0;
  }
  std::vector<const ops::OpSpec *> selected;
  if (names.empty()) {
    selected = ops::getRegisteredOps();
  } else {
    for (const std::string &name : names) {
      const ops::OpSpec *op = ops::lookupOp(name);
      if (!op) {
        llvm::errs() << "graph-ops: op '" << name << "' is not registered\n";
        return 1;
      }
      selected.push_back(op);
    }
  }
  llvm::raw_ostream &os = llvm::outs();
  auto yes = [](bool b) { return b ? "yes" : "-"; };
  size_t device = 0, cpu = 0, shapes = 0, kernels = 0, gradients = 0;
  if (markdown)
    os << "| op | family | device | cpu | stateful | shape function | "
          "reference kernel | gradient |\n"
       << "|---|---|---|---|---|---|---|---|\n";
  else
    os << "op\tfamily\tdevice\tcpu\tstateful\tshape_fn\tkernel\tgradient\n";
  for (const ops::OpSpec *op : selected) {
    bool hasShapeFn = ops::lookupShapeFn(op->name) != nullptr;
    bool hasKernel = interp::hasKernel(op->name);
    bool lowersOnCPU = conversion::hasCPULowering(op->name);
    device += op->isDeviceCompilable;
    cpu += lowersOnCPU;
    shapes += hasShapeFn;
    kernels += hasKernel;
    bool hasGradient = ops::lookupGradFn(op->name) != nullptr;
    gradients += hasGradient;
    const char *gradient = hasGradient                             ? "yes"
                           : ops::isNotDifferentiable(op->name)    ? "none"
                           : ops::isDifferentiatedByPass(op->name) ? "pass"
                                                                   : "-";
    const char *sep = markdown ? " | " : "\t";
    os << (markdown ? "| `" : "") << op->name << (markdown ? "`" : "") << sep
       << ops::stringifyOpFamily(op->family) << sep
       << yes(op->isDeviceCompilable) << sep << yes(lowersOnCPU) << sep
       << yes(op->isStateful) << sep
       << yes(hasShapeFn) << sep << yes(hasKernel) << sep << gradient
       << (markdown ? " |" : "") << "\n";
  }
  if (markdown)
    os << "\n"
       << selected.size() << " ops: " << device << " device-compilable, "
       << cpu << " lowered to the CPU, " << shapes << " with a shape function, " << kernels
       << " with a reference kernel, " << gradients
       << " with a gradient rule.\n";
  return 0;
}
