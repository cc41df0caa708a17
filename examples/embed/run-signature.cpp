// Runs a SavedModel's signature from C++ through cleave::runtime::Session,
// as TensorFlow Serving would: run-signature <saved_model_dir> <signature>
// <input key> <value>, where the value is a literal such as [[1],[2],[5]].
// Prints each output as "key = dtype [shape] values".
#include "cleave/InitAll.h"
#include "cleave/Runtime/Session.h"
#include "cleave/Runtime/TensorLiteral.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

using namespace cleave;

int main(int argc, char **argv) {
  if (argc != 5) {
    llvm::errs() << "usage: run-signature <saved_model_dir> <signature> "
                    "<input key> <value>\n";
    return 2;
  }
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  auto report = [](llvm::Error error) {
    runtime::logError(std::move(error), llvm::errs(), "run-signature: ");
    return 1;
  };

  // Open the model, restore its variables and run its main op.
  auto session = runtime::Session::open(argv[1], context, {});
  if (!session)
    return report(session.takeError());
  if (llvm::Error error = (*session)->loadSavedModel())
    return report(std::move(error));
  // Feed the input key and fetch every output of the signature.
  auto signature = (*session)->bindSignature(argv[2], {argv[3]}, {});
  if (!signature)
    return report(signature.takeError());
  const std::string &input = signature->feeds.front();
  auto value =
      runtime::parseTensorLiteral(argv[4], (*session)->getFeedDType(input));
  if (!value)
    return report(value.takeError());
  auto outputs = (*session)->run({{input, *value}}, signature->fetches, {});
  if (!outputs)
    return report(outputs.takeError());
  for (size_t i = 0; i < outputs->size(); ++i)
    llvm::outs() << signature->fetchKeys[i] << " = " << (*outputs)[i].toString()
                 << "\n";
  return 0;
}
