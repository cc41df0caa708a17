// Imports a GraphDef with Cleave, counts its nodes per op type, and writes
// it back as a binary GraphDef: the smallest useful embedding of the library.
#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/InitAll.h"
#include "cleave/Translate/GraphDef.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  if (argc != 3) {
    llvm::errs() << "usage: count-nodes <graph.pb|graph.pbtxt> <out.pb>\n";
    return 2;
  }
  mlir::DialectRegistry registry;
  cleave::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  auto buffer = llvm::MemoryBuffer::getFile(argv[1]);
  if (!buffer) {
    llvm::errs() << argv[1] << ": " << buffer.getError().message() << "\n";
    return 1;
  }
  mlir::OwningOpRef<mlir::ModuleOp> module =
      cleave::importGraphDef(**buffer, &context);
  if (!module)
    return 1;
  llvm::StringMap<unsigned> counts;
  module->walk([&](cleave::graph::NodeOp node) { ++counts[node.getOpType()]; });
  for (const auto &entry : counts)
    llvm::outs() << entry.getKey() << " " << entry.getValue() << "\n";
  std::error_code ec;
  llvm::raw_fd_ostream out(argv[2], ec);
  if (ec || mlir::failed(cleave::writeGraphDef(*module, out, /*binary=*/true)))
    return 1;
  return 0;
}
