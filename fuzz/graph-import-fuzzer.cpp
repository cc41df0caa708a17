//===- graph-import-fuzzer.cpp - libFuzzer targets for the importer -------===//
//
// Feeds arbitrary bytes to the importer and exports whatever imports, as
// every message it can be. Built three times, each keeping only the inputs
// of one kind (CLEAVE_FUZZ_KIND), so that each target's corpus and coverage
// stay on its format:
//
//   graphdef-text-fuzzer     text GraphDefs
//   graphdef-binary-fuzzer   binary GraphDefs
//   savedmodel-fuzzer        MetaGraphDefs and SavedModels, text and binary
//
// Any crash, sanitizer report, hang or unbounded allocation is a bug: bad
// input must only produce diagnostics.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "cleave/Translate/GraphDef.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace cleave;

#define CLEAVE_FUZZ_GRAPHDEF_TEXT 1
#define CLEAVE_FUZZ_GRAPHDEF_BINARY 2
#define CLEAVE_FUZZ_SAVEDMODEL 3

static bool wanted(InputFormat format) {
  switch (format) {
  case InputFormat::GraphDefText:
    return CLEAVE_FUZZ_KIND == CLEAVE_FUZZ_GRAPHDEF_TEXT;
  case InputFormat::GraphDefBinary:
    return CLEAVE_FUZZ_KIND == CLEAVE_FUZZ_GRAPHDEF_BINARY;
  case InputFormat::MetaGraphDefText:
  case InputFormat::MetaGraphDefBinary:
  case InputFormat::SavedModelText:
  case InputFormat::SavedModelBinary:
    return CLEAVE_FUZZ_KIND == CLEAVE_FUZZ_SAVEDMODEL;
  case InputFormat::MLIR:
    return false;
  }
  return false;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes = fuzz::asString(data, size);
  if (!wanted(detectInputFormat(bytes)))
    return -1; // not added to the corpus
  auto buffer = llvm::MemoryBuffer::getMemBuffer(
      bytes, "fuzz", /*RequiresNullTerminator=*/false);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      importGraphDef(*buffer, &fuzz::getContext());
  if (!module)
    return 0;
  for (GraphMessage kind : {GraphMessage::GraphDef, GraphMessage::MetaGraphDef,
                            GraphMessage::SavedModel})
    for (bool binary : {false, true}) {
      std::string out;
      llvm::raw_string_ostream os(out);
      (void)writeGraphMessage(*module, os, kind, binary);
    }
  return 0;
}
