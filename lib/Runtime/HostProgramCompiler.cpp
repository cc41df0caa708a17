//===- HostProgramCompiler.cpp - host programs as native code -------------===//
//
// Each sequence of a host program becomes one LLVM function of straight-line
// calls, one per step, each followed by a branch to the exit on failure:
//
//   %s = llvm.call @cleave_host_run_node(%run, %frame, <seq>, <step>)
//   %f = llvm.icmp "ne" %s, 0
//   llvm.cond_br %f, ^exit(%s), ^next
//
// The step's operands (its slots, the node, the body scope) are in the
// program the runtime holds; the code fixes their order and the calls.
//
//===----------------------------------------------------------------------===//

#include "cleave/Runtime/HostProgramCompiler.h"

#include "cleave/Target/CPU/CPUTarget.h"
#include "cleave/Target/CPU/KernelLibrary.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;
using namespace cleave::runtime;

namespace {
using SequenceFunction = int32_t (*)(void *run, void *frame);

class JITHostProgram : public CompiledHostProgram {
public:
  std::unique_ptr<cpu::JITModule> jit;
  std::vector<SequenceFunction> sequences;

  CLEAVE_CALLS_JIT_CODE
  int32_t runSequence(int32_t sequence, void *run, void *frame) override {
    return sequences[sequence](run, frame);
  }
};
} // namespace

std::string cleave::runtime::getHostSequenceName(int32_t sequence) {
  return "cleave_host_sequence_" + std::to_string(sequence);
}

OwningOpRef<ModuleOp>
cleave::runtime::buildHostProgramModule(const HostProgram &program,
                                        MLIRContext *context) {
  context->getOrLoadDialect<LLVM::LLVMDialect>();
  Location loc = UnknownLoc::get(context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  OpBuilder builder = OpBuilder::atBlockEnd(module->getBody());
  Type ptr = LLVM::LLVMPointerType::get(context);
  Type i32 = builder.getI32Type();

  // Every entry point has the signature (run, frame, sequence, step) -> i32.
  auto entryType = LLVM::LLVMFunctionType::get(i32, {ptr, ptr, i32, i32});
  llvm::SmallVector<LLVM::LLVMFuncOp> entries;
  for (HostStep::Kind kind : kHostStepKinds)
    entries.push_back(builder.create<LLVM::LLVMFuncOp>(
        loc, getHostEntryPoint(kind).name, entryType));

  auto sequenceType = LLVM::LLVMFunctionType::get(i32, {ptr, ptr});
  for (auto [index, sequence] : llvm::enumerate(program.sequences)) {
    auto func = builder.create<LLVM::LLVMFuncOp>(
        loc, getHostSequenceName(index), sequenceType);
    OpBuilder::InsertionGuard guard(builder);
    Block *entry = func.addEntryBlock(builder);
    Value run = entry->getArgument(0), frame = entry->getArgument(1);
    // The exit on failure returns the failing step's status.
    Block *exit = builder.createBlock(&func.getBody(), func.getBody().end(),
                                      {i32}, {loc});
    builder.create<LLVM::ReturnOp>(loc, exit->getArgument(0));

    builder.setInsertionPointToEnd(entry);
    // Each i32 constant once, at the function's start.
    llvm::DenseMap<int64_t, Value> constants;
    auto constant = [&](int64_t value) -> Value {
      auto [it, inserted] = constants.try_emplace(value);
      if (inserted) {
        OpBuilder::InsertionGuard atStart(builder);
        builder.setInsertionPointToStart(entry);
        it->second = builder.create<LLVM::ConstantOp>(
            loc, i32, builder.getI32IntegerAttr(value));
      }
      return it->second;
    };
    Value zero = constant(0), sequenceIndex = constant(index);
    Block *current = entry;
    for (auto [stepIndex, step] : llvm::enumerate(sequence.steps)) {
      Value status =
          builder
              .create<LLVM::CallOp>(loc, entries[size_t(step.kind)],
                                    ValueRange{run, frame, sequenceIndex,
                                               constant(stepIndex)})
              .getResult();
      Value failed = builder.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::ne,
                                                  status, zero);
      Block *next = builder.createBlock(exit);
      builder.setInsertionPointToEnd(current);
      builder.create<LLVM::CondBrOp>(loc, failed, exit, ValueRange{status},
                                     next, ValueRange{});
      current = next;
      builder.setInsertionPointToEnd(current);
    }
    builder.create<LLVM::ReturnOp>(loc, zero);
  }
  return module;
}

std::unique_ptr<CompiledHostProgram>
LLVMHostProgramCompiler::compile(const HostProgram &program,
                                 std::string &error) {
  OwningOpRef<ModuleOp> module = buildHostProgramModule(program, context);
  auto compiled = std::make_unique<JITHostProgram>();
  // The compiled calls resolve to this process's entry points.
  llvm::SmallVector<cpu::KernelSymbol> symbols;
  for (HostStep::Kind kind : kHostStepKinds) {
    const HostEntryPoint &entry = getHostEntryPoint(kind);
    symbols.push_back(
        {entry.name, reinterpret_cast<void *>(entry.function)});
  }
  compiled->jit = cpu::JITModule::create(*module, error, symbols);
  if (!compiled->jit)
    return nullptr;
  for (size_t i = 0; i < program.sequences.size(); ++i) {
    void *address = compiled->jit->lookupAddress(getHostSequenceName(i));
    if (!address) {
      error = "no native code for " + getHostSequenceName(i);
      return nullptr;
    }
    compiled->sequences.push_back(reinterpret_cast<SequenceFunction>(address));
  }
  return compiled;
}
