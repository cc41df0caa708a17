//===- ToolDiagnostics.h - errors of a tool's command line ------*- C++ -*-===//
//
// Header-only, for the tools' mains.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_SUPPORT_TOOLDIAGNOSTICS_H
#define CLEAVE_SUPPORT_TOOLDIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace cleave {

/// Says an error with no place in the input (an unknown location: a feed,
/// fetch or target the graph lacks, a bad option value) as the tool's
/// own, `<prefix><message>` (`graph-run: `, `graph-opt: error: `), rather
/// than at the graph file's first line or at `<unknown>:0`. Install it
/// after the tool's SourceMgrDiagnosticHandler, which handles every other
/// diagnostic.
class CommandLineDiagnostics : public mlir::ScopedDiagnosticHandler {
public:
  CommandLineDiagnostics(mlir::MLIRContext *context, std::string prefix)
      : ScopedDiagnosticHandler(context), prefix(std::move(prefix)) {
    setHandler([this](mlir::Diagnostic &diag) {
      if (!mlir::isa<mlir::UnknownLoc>(diag.getLocation()) ||
          diag.getSeverity() != mlir::DiagnosticSeverity::Error)
        return mlir::failure();
      llvm::outs().flush();
      llvm::errs() << this->prefix << diag.str() << "\n";
      return mlir::success();
    });
  }

private:
  std::string prefix;
};

} // namespace cleave

#endif // CLEAVE_SUPPORT_TOOLDIAGNOSTICS_H
