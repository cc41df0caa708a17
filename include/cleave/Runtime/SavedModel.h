//===- SavedModel.h - running a MetaGraphDef as TensorFlow loads it -*- C++ -*-===//
//
// What a run needs from a MetaGraphDef beyond its graph: the tensors a
// SignatureDef names, and what TensorFlow's SavedModel loader does after
// restoring the variables (asset files fed to their tensors, the main op
// run once).
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RUNTIME_SAVEDMODEL_H
#define CLEAVE_RUNTIME_SAVEDMODEL_H

#include "cleave/Tensor/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <string>
#include <utility>
#include <vector>

namespace cleave::runtime {

/// A SignatureDef's inputs and outputs: (key, tensor name) pairs, sorted
/// by key.
struct Signature {
  std::vector<std::pair<std::string, std::string>> inputs;
  std::vector<std::pair<std::string, std::string>> outputs;
};

/// The signature `key` of the module's MetaGraphDef. Errors list the keys
/// there are (or say that the graph came without a MetaGraphDef).
llvm::Expected<Signature> getSignature(mlir::ModuleOp module,
                                       llvm::StringRef key);

/// What TensorFlow's loader runs after restoring the variables.
struct SavedModelInit {
  /// Asset file tensors, fed with their paths under `<export dir>/assets`.
  std::vector<std::pair<std::string, cleave::Tensor>> assetFeeds;
  /// The main op (collection saved_model_main_op, or legacy_init_op), to
  /// run once; empty when there is none.
  std::string mainOp;
};
llvm::Expected<SavedModelInit> getSavedModelInit(mlir::ModuleOp module,
                                                 llvm::StringRef exportDir);

/// The checkpoint prefix of a SavedModel's own variables,
/// `<export dir>/variables/variables`, when `module` was read from a
/// SavedModel at `path` and that checkpoint exists; empty otherwise (as
/// TensorFlow's loader, which then restores nothing).
std::string getSavedModelVariables(mlir::ModuleOp module, llvm::StringRef path);

/// The export directory of the SavedModel that `path` (a directory, or its
/// saved_model.pb / saved_model.pbtxt) names.
std::string getExportDir(llvm::StringRef path);

} // namespace cleave::runtime

#endif // CLEAVE_RUNTIME_SAVEDMODEL_H
