//===- InitAll.cpp - register everything Cleave provides ------------------===//

#include "cleave/InitAll.h"

#include "cleave/AutoClustering/Passes.h"
#include "cleave/Conversion/Passes.h"
#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/Dialect/Graph/Transforms/Passes.h"
#include "cleave/Target/CPU/CPUTarget.h"
#include "cleave/Target/CPU/Passes.h"
#include "cleave/Translate/Dot.h"
#include "cleave/Translate/GraphDef.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void cleave::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<graph::GraphDialect>();
  // The upstream dialects the CPU backend lowers to, with their interfaces.
  cpu::registerCPUDialects(registry);
}

void cleave::registerAllPasses() {
  graph::registerGraphPasses();
  registerConversionPasses();
  registerAutoClusteringPasses();
  registerCPUPasses();
  cpu::registerCPUPipelines();
  // Upstream passes that are useful on graphs (canonicalize, cse, ...).
  mlir::registerTransformsPasses();
}

void cleave::registerAllTranslations() {
  registerGraphDefTranslations();
  registerDotTranslation();
}
