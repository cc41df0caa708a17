//===- AllReducedStep.h - the plain step, synchronous across processes -*- C++
//-*-===//
//
// Synchronous training of the plain Estimator step (use_tpu: false) across
// trainer processes, as MultiWorkerMirroredStrategy runs an Estimator: each
// trainer computes the gradients of its share of the global batch, the
// trainers sum them (one Gloo all-reduce per dtype, the mean's 1/trainers
// applied), and each applies the sum with the graph's own optimizer ops,
// fed, so every process's variables stay the same.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_ESTIMATOR_ALLREDUCEDSTEP_H
#define CLEAVE_LIB_ESTIMATOR_ALLREDUCEDSTEP_H

#include "GradientExchange.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace cleave::runtime {
class ProcessGroup;
} // namespace cleave::runtime

namespace cleave::estimator {

class AllReducedStep : public GradientExchange {
public:
  /// `mean`: the sum is divided by the number of trainers (the optimizer's
  /// MEAN reduction), so that trainers on equal shares of a global batch
  /// take the step one process takes on all of it.
  static llvm::Expected<std::unique_ptr<AllReducedStep>>
  create(runtime::Session &session, llvm::StringRef globalStep,
         llvm::StringRef trainOp, runtime::ProcessGroup &trainers, bool mean);

  const std::vector<std::string> &getGradients() const override {
    return gradients;
  }
  /// Sums `values` across the trainers and runs the train op with the sums
  /// fed.
  llvm::Error exchange(llvm::ArrayRef<Tensor> values,
                       runtime::Session &session) override;

private:
  AllReducedStep(std::vector<std::string> gradients, std::string trainOp,
                 runtime::ProcessGroup &trainers, bool mean)
      : gradients(std::move(gradients)), trainOp(std::move(trainOp)),
        trainers(trainers), mean(mean) {}

  std::vector<std::string> gradients;
  std::string trainOp;
  runtime::ProcessGroup &trainers;
  bool mean;
};

} // namespace cleave::estimator

#endif // CLEAVE_LIB_ESTIMATOR_ALLREDUCEDSTEP_H
