//===- CapturedObject.h - TPUEstimator's _CapturedObject --------*- C++ -*-===//
//
// A value captured once where the mode's graph is built (as TPUEstimator
// captures scaffold_fn inside model_fn's wrapper) and read after, when the
// session starts. Capturing twice, or reading before capturing, is an
// internal error with TensorFlow's wording.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_ESTIMATOR_CAPTUREDOBJECT_H
#define CLEAVE_LIB_ESTIMATOR_CAPTUREDOBJECT_H

#include "llvm/Support/Error.h"

#include <optional>
#include <utility>

namespace cleave::estimator {

template <typename T> class CapturedObject {
public:
  llvm::Error capture(T value) {
    if (object)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "InternalError: Object can capture only once. Please file bug.");
    object = std::move(value);
    return llvm::Error::success();
  }

  llvm::Expected<const T &> get() const {
    if (!object)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "InternalError: Object is not captured properly before `get`. "
          "Please file bug.");
    return *object;
  }

private:
  std::optional<T> object;
};

} // namespace cleave::estimator

#endif // CLEAVE_LIB_ESTIMATOR_CAPTUREDOBJECT_H
