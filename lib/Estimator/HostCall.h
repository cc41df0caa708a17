//===- HostCall.h - TPUEstimatorSpec.host_call on the host ------*- C++ -*-===//
//
// host_call = (host_fn, tensors): a host graph whose placeholders receive
// the model's tensors of each training step (outfed on the device, the
// replicas' concatenated), run once per step, in step order: what
// TensorFlow users write summaries and logging with.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_ESTIMATOR_HOSTCALL_H
#define CLEAVE_LIB_ESTIMATOR_HOSTCALL_H

#include "cleave/Estimator/Job.h"
#include "cleave/Runtime/Session.h"

#include "mlir/IR/BuiltinOps.h"

#include <memory>
#include <string>
#include <vector>

namespace cleave::estimator {

class HostCallRunner {
public:
  /// Checks the job's host_call against the train graph `model` and opens
  /// host_fn's graph.
  static llvm::Expected<std::unique_ptr<HostCallRunner>>
  create(const Job &job, mlir::ModuleOp model, mlir::MLIRContext &context,
         const runtime::SessionOptions &options);

  /// The model's tensors each step gives host_fn, in order.
  const std::vector<std::string> &getModelTensors() const {
    return modelTensors;
  }
  /// Runs host_fn on one step's tensors.
  llvm::Error run(llvm::ArrayRef<Tensor> tensors);

private:
  HostCallRunner() = default;
  std::unique_ptr<runtime::Session> host;
  std::vector<std::string> placeholders, modelTensors, targets;
};

} // namespace cleave::estimator

#endif // CLEAVE_LIB_ESTIMATOR_HOSTCALL_H
