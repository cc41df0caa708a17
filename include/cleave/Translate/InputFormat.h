//===- InputFormat.h - which message a graph file holds ---------*- C++ -*-===//
//
// Content sniffing shared by the importer and graph-diff (which links only
// protobuf, not MLIR).
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TRANSLATE_INPUTFORMAT_H
#define CLEAVE_TRANSLATE_INPUTFORMAT_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace cleave {

/// What a buffer holds, judged by its content (never by a file extension).
enum class InputFormat {
  GraphDefText,
  GraphDefBinary,
  MetaGraphDefText,
  MetaGraphDefBinary,
  SavedModelText,
  SavedModelBinary,
  MLIR
};

/// Sniffs `buffer`: text that starts (after `#` comments) with a field in
/// protobuf text syntax (`node {`, `versions: {`, but not `module {`) is a
/// text message, whose first field name says which (`meta_info_def` a
/// MetaGraphDef, `meta_graphs` a SavedModel, anything else a GraphDef);
/// bytes that are not text are a binary message, told apart by its
/// top-level fields; anything else is MLIR.
InputFormat detectInputFormat(llvm::StringRef buffer);

/// What `buffer` holds when it is plainly no graph at all ("a NumPy
/// array", "a Python script", ...), judged by magic bytes and the first
/// word; empty when it may be a graph (then the parser's errors apply).
std::string identifyNonGraph(llvm::StringRef buffer);

/// Whether `format` is one of the protobuf formats (not MLIR).
inline bool isProtobufFormat(InputFormat format) {
  return format != InputFormat::MLIR;
}

} // namespace cleave

#endif // CLEAVE_TRANSLATE_INPUTFORMAT_H
