//===- GradientExchange.h - a step's gradients across processes -*- C++ -*-===//
//
// What a trainer of several processes does with the gradients its plain
// step computed, instead of running the train op itself: push them to the
// ps tasks (ParameterClient) or sum them with the other trainers and apply
// the sum (AllReducedStep). Either way the session ends the step with the
// variables and global_step the next step starts from.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_ESTIMATOR_GRADIENTEXCHANGE_H
#define CLEAVE_LIB_ESTIMATOR_GRADIENTEXCHANGE_H

#include "cleave/Runtime/Session.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace cleave::estimator {

class GradientExchange {
public:
  virtual ~GradientExchange() = default;
  /// The tensors a step fetches: what the optimizer's updates read as
  /// gradients.
  virtual const std::vector<std::string> &getGradients() const = 0;
  /// Hands over `values` (in getGradients' order) and updates `session`.
  virtual llvm::Error exchange(llvm::ArrayRef<Tensor> values,
                               runtime::Session &session) = 0;
};

} // namespace cleave::estimator

#endif // CLEAVE_LIB_ESTIMATOR_GRADIENTEXCHANGE_H
