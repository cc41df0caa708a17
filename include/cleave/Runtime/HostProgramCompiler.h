//===- HostProgramCompiler.h - host programs as native code -----*- C++ -*-===//
//
// Compiles a run's host program (cleave/Executor/HostProgram.h) through
// LLVM: each sequence becomes a native function that calls the runtime's
// entry point of each step in order, straight-line, and returns the first
// failing step's status. Nested scopes (a cluster's body, each replica)
// run their own compiled sequences, so no part of a step's orchestration
// is interpreted.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RUNTIME_HOSTPROGRAMCOMPILER_H
#define CLEAVE_RUNTIME_HOSTPROGRAMCOMPILER_H

#include "cleave/Executor/HostProgram.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace cleave::runtime {

/// The LLVM-dialect module of `program`: per sequence `i`, a function
/// `cleave_host_sequence_<i>(run, frame) -> i32`.
mlir::OwningOpRef<mlir::ModuleOp>
buildHostProgramModule(const interp::HostProgram &program,
                       mlir::MLIRContext *context);

/// The name of sequence `sequence`'s function.
std::string getHostSequenceName(int32_t sequence);

/// Compiles host programs with the ORC JIT (cpu::JITModule), in `context`
/// (which has the LLVM dialect's translation registered, as
/// cleave::registerAllDialects does).
class LLVMHostProgramCompiler : public interp::HostProgramCompiler {
public:
  explicit LLVMHostProgramCompiler(mlir::MLIRContext *context)
      : context(context) {}

  std::unique_ptr<interp::CompiledHostProgram>
  compile(const interp::HostProgram &program, std::string &error) override;

private:
  mlir::MLIRContext *context;
};

} // namespace cleave::runtime

#endif // CLEAVE_RUNTIME_HOSTPROGRAMCOMPILER_H
