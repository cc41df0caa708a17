//===- EventWriter.h - TensorBoard event files of scalars -------*- C++ -*-===//
//
// What tf.summary's FileWriter writes for scalar summaries: an
// events.out.tfevents.<time>.<host> file of Event records in TFRecord
// framing, so TensorBoard and tf.compat.v1.train.summary_iterator read it.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_ESTIMATOR_EVENTWRITER_H
#define CLEAVE_LIB_ESTIMATOR_EVENTWRITER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <utility>
#include <vector>

namespace cleave::estimator {

/// Writes a new event file in `dir` (created if needed) with the file
/// version record and one summary of `scalars` at `step`.
llvm::Error
writeScalarEvents(llvm::StringRef dir, int64_t step,
                  llvm::ArrayRef<std::pair<std::string, double>> scalars);

/// The records of a TFRecord file, checked against their CRCs.
llvm::Expected<std::vector<std::string>> readRecords(llvm::StringRef path);

} // namespace cleave::estimator

#endif // CLEAVE_LIB_ESTIMATOR_EVENTWRITER_H
