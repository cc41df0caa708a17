//===- HostTransfers.h - the channels host and device meet on ---*- C++ -*-===//
//
// Host transfers name their channel by key: the device side's
// `_XlaHostComputeMlir` (send_key, recv_key), `XlaSendToHost` and
// `XlaRecvFromHost` (key), the host side's `_XlaRecvAtHost` and
// `_XlaSendFromHost` (key); infeed and outfeed are queues. What the runtime
// needs to know about them before a run: who sends what, and which host
// side a computation needs.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_GRAPH_UTILS_HOSTTRANSFERS_H
#define CLEAVE_DIALECT_GRAPH_UTILS_HOSTTRANSFERS_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"

namespace cleave::graph {

/// The channels and queues some ops send and receive on.
struct ChannelUse {
  llvm::StringSet<> sentChannels;
  llvm::StringSet<> receivedChannels;
  /// "infeed", "outfeed".
  llvm::StringSet<> sentQueues;
};

/// What `ops`, the ops in their regions and the library functions they
/// call (transitively) send and receive on.
ChannelUse getChannelUse(mlir::ModuleOp module,
                         llvm::ArrayRef<mlir::Operation *> ops);

/// The host sides of the computations `needed` holds: the ops of `body`
/// outside `needed` that read the program key of such a computation
/// ("<cluster>/program_key", as graph-extract-outside-compilation names
/// it) and send on a channel `neededUse` (the channel use of `needed`)
/// receives on. TensorFlow runs the host side of a compiled computation
/// whenever the computation runs; in a split graph read from a GraphDef
/// only the program key and the channel keys tie the two (the host side is
/// no ancestor of the computation's results), so a run that needs the
/// computation needs these too, and what they need in turn.
llvm::SmallVector<mlir::Operation *>
findChannelSenders(mlir::ModuleOp module, mlir::Block &body,
                   const llvm::DenseSet<mlir::Operation *> &needed,
                   const ChannelUse &neededUse);

/// Grows `needed` by the host sides of the computations it holds
/// (findChannelSenders) until none is new (a host side may wait on a
/// channel of its own): `addNeeded` adds the given ops, and what they need,
/// to `needed`. Returns the channel use of the grown set.
ChannelUse addHostSides(
    mlir::ModuleOp module, mlir::Block &body,
    const llvm::DenseSet<mlir::Operation *> &needed,
    llvm::function_ref<void(llvm::ArrayRef<mlir::Operation *>)> addNeeded);

} // namespace cleave::graph

#endif // CLEAVE_DIALECT_GRAPH_UTILS_HOSTTRANSFERS_H
