//===- DeviceSupport.cpp - which ops the device backend compiles ----------===//
//
// Families default to device (array, math, nn, state, control flow,
// functional, random, TPU) or host (logging, strings, summaries, data).
// This is the list of ops that differ from their family, after
// TensorFlow's XLA kernel registrations for TPU: what has no XLA kernel is
// host-only and must be outside-compiled in a replicated computation.
//
//===----------------------------------------------------------------------===//

#include "OpTables.h"

std::vector<llvm::StringRef> cleave::ops::detail::getDeviceSupportExceptions() {
  return {
      // Host-only ops of device families.
      // Reference variables live on the host; TPU computations take
      // resource variables only.
      "VariableV2",
      "Variable",
      "IsVariableInitialized",
      "Assign",
      "AssignAdd",
      "AssignSub",
      "ApplyGradientDescent",
      "ApplyMomentum",
      "ApplyAdam",
      "DestroyResourceOp",
      // Transfers the partitioner inserts run around compiled code.
      "_Send",
      "_Recv",
      "_HostSend",
      "_HostRecv",
      // Calls that need a runtime: a remote target, or a gradient not yet
      // expanded into ops.
      "RemoteCall",
      "SymbolicGradient",
      // The host halves of replication and feeds.
      "_TPUReplicate",
      "TPUCompilationResult",
      "InfeedEnqueueTuple",
      "OutfeedDequeueTuple",
      "_XlaRecvAtHost",
      "_XlaRecvAtHostV2",
      "_XlaSendFromHost",
      "_XlaSendFromHostV2",
      "_XlaCompileMlirPlaceholderProgramKey",
      "_TPUDeviceOrdinalPlaceholder",

      // Device ops of host families: TensorArrays and TensorLists have XLA
      // kernels (with static sizes).
      "TensorArrayV3",
      "TensorArrayGradV3",
      "TensorArrayWriteV3",
      "TensorArrayReadV3",
      "TensorArrayGatherV3",
      "TensorArrayScatterV3",
      "TensorArraySizeV3",
      "TensorArrayCloseV3",
      "EmptyTensorList",
      "TensorListReserve",
      "TensorListFromTensor",
      "TensorListGetItem",
      "TensorListSetItem",
      "TensorListStack",
      "TensorListPushBack",
      "TensorListPopBack",
      "TensorListLength",
      "TensorListElementShape",
  };
}
