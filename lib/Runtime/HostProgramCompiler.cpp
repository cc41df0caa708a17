//===- HostProgramCompiler.cpp - host programs as native code -------------===//
//
// Each sequence of a host program becomes an LLVM function of straight-line
// calls, one per step, each followed by a return of its status on failure:
//
//   %s = llvm.call @cleave_host_run_node(%run, %frame, <seq>, <step>)
//   %f = llvm.icmp "ne" %s, 0
//   llvm.cond_br %f, ^fail, ^next
// ^fail:
//   llvm.return %s
//
// (a sequence longer than kStepsPerFunction is split into parts that its
// function calls the same way). The step's operands (its slots, the node,
// the body scope) are in the program the runtime holds; the code fixes
// their order and the calls. It compiles at -O0: it only calls functions.
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
} // namespace

/// Steps per generated function (see buildHostProgramModule).
static constexpr size_t kStepsPerFunction = 256;

namespace {
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

  // Emits function `name`(run, frame) -> i32 making `count` calls in
  // order (`call(i, run, frame)` builds call i and gives its status) and
  // returning the first non-zero status, else 0.
  auto sequenceType = LLVM::LLVMFunctionType::get(i32, {ptr, ptr});
  auto constant = [&](int64_t value) -> Value {
    return builder.create<LLVM::ConstantOp>(loc, i32,
                                            builder.getI32IntegerAttr(value));
  };
  auto emitFunction = [&](const std::string &name, size_t count,
                          llvm::function_ref<Value(size_t, Value, Value)>
                              call) {
    auto func = builder.create<LLVM::LLVMFuncOp>(loc, name, sequenceType);
    OpBuilder::InsertionGuard guard(builder);
    Block *current = func.addEntryBlock(builder);
    builder.setInsertionPointToEnd(current);
    Value run = current->getArgument(0), frame = current->getArgument(1);
    for (size_t i = 0; i < count; ++i) {
      Value status = call(i, run, frame);
      // Constants are made where they are used: a value live across blocks
      // costs the unoptimized code generator a stack slot and a reload in
      // each. And each failing call returns from a block of its own: one
      // exit for all would merge the statuses in a phi with a predecessor
      // per call.
      Value failed = builder.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::ne,
                                                  status, constant(0));
      Block *fail = builder.createBlock(&func.getBody(), func.getBody().end());
      builder.create<LLVM::ReturnOp>(loc, status);
      Block *next = builder.createBlock(&func.getBody(), func.getBody().end());
      builder.setInsertionPointToEnd(current);
      builder.create<LLVM::CondBrOp>(loc, failed, fail, next);
      current = next;
      builder.setInsertionPointToEnd(current);
    }
    builder.create<LLVM::ReturnOp>(loc, constant(0));
    return func;
  };

  for (size_t index = 0; index < program.sequences.size(); ++index) {
    ArrayRef<HostStep> steps = program.sequences[index].steps;
    // The calls of the entry points of steps [first, first + count).
    auto emitSteps = [&](const std::string &name, size_t first,
                         size_t count) {
      return emitFunction(name, count, [&](size_t i, Value run, Value frame) {
        const HostStep &step = steps[first + i];
        return builder
            .create<LLVM::CallOp>(loc, entries[size_t(step.kind)],
                                  ValueRange{run, frame, constant(index),
                                             constant(first + i)})
            .getResult();
      });
    };
    std::string name = getHostSequenceName(index);
    if (steps.size() <= kStepsPerFunction) {
      emitSteps(name, 0, steps.size());
      continue;
    }
    // A long sequence is split into parts that the sequence's function
    // calls in turn: the code generator's time grows faster than linearly
    // in the size of one function.
    SmallVector<LLVM::LLVMFuncOp> parts;
    for (size_t first = 0; first < steps.size(); first += kStepsPerFunction)
      parts.push_back(emitSteps(
          name + "_part_" + std::to_string(parts.size()), first,
          std::min(kStepsPerFunction, steps.size() - first)));
    emitFunction(name, parts.size(), [&](size_t i, Value run, Value frame) {
      return builder.create<LLVM::CallOp>(loc, parts[i], ValueRange{run, frame})
          .getResult();
    });
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
  compiled->jit =
      cpu::JITModule::create(*module, error, symbols, /*optimize=*/false);
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
