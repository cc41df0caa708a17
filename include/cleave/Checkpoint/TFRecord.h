//===- TFRecord.h - TensorFlow's record files ------------------*- C++ -*-===//
//
// The framing of TFRecord files (tf.io.TFRecordWriter, event files): per
// record its length (uint64, little-endian), the masked CRC-32C of those 8
// bytes, the data, and the masked CRC-32C of the data.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_CHECKPOINT_TFRECORD_H
#define CLEAVE_CHECKPOINT_TFRECORD_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

namespace cleave::checkpoint {

/// Appends one record holding `data`.
void writeTFRecord(llvm::raw_ostream &os, llvm::StringRef data);

/// The records of a file's bytes, each checked as TensorFlow's
/// RecordReader checks them ("corrupted record at <offset>", "truncated
/// record at <offset>"); `path` names the file in errors.
llvm::Expected<std::vector<llvm::StringRef>>
splitTFRecords(llvm::StringRef bytes, llvm::StringRef path);

} // namespace cleave::checkpoint

#endif // CLEAVE_CHECKPOINT_TFRECORD_H
