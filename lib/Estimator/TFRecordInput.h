//===- TFRecordInput.h - TFRecord files of tf.train.Example -----*- C++ -*-===//
//
// The input_fn most TensorFlow models have: tf.data.TFRecordDataset over
// files of serialized tf.train.Example protos, parsed with
// tf.io.parse_example and FixedLenFeature specs.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_ESTIMATOR_TFRECORDINPUT_H
#define CLEAVE_LIB_ESTIMATOR_TFRECORDINPUT_H

#include "cleave/Estimator/Input.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace cleave::estimator {

class TFRecordFiles;

/// Every Example of the files `spec` names (at `paths`, resolved), in file
/// order, as one column per feature: examples along dimension 0, each of
/// the feature's shape, cast as the spec says.
llvm::Expected<Examples> readTFRecordExamples(const TFRecordFiles &spec,
                                              llvm::ArrayRef<std::string> paths);

} // namespace cleave::estimator

#endif // CLEAVE_LIB_ESTIMATOR_TFRECORDINPUT_H
