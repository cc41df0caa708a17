//===- InitAll.cpp - register everything Cleave provides ------------------===//

#include "cleave/InitAll.h"

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Dialect/Graph/Transforms/Passes.h"
#include "cleave/Translate/Dot.h"
#include "cleave/Translate/GraphDef.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void cleave::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<graph::GraphDialect>();
}

void cleave::registerAllPasses() {
  graph::registerGraphPasses();
  // Upstream passes that are useful on graphs (canonicalize, cse, ...).
  mlir::registerTransformsPasses();
}

void cleave::registerAllTranslations() {
  registerGraphDefTranslations();
  registerDotTranslation();
}
