//===- graph-translate.cpp - GraphDef <-> MLIR translation ----------------===//
//
//   graph-translate --import-graphdef model.pbtxt      (or model.pb)
//   graph-translate --export-graphdef [--graphdef-binary] model.mlir
//
//===----------------------------------------------------------------------===//

#include "cleave/InitAll.h"
#include "cleave/Support/CommandLine.h"
#include "cleave/Support/ToolInit.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  cleave::initTool(argc, argv);
  cleave::hideLibraryOptions({});
  cleave::registerAllTranslations();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "Cleave GraphDef translation tool"));
}
