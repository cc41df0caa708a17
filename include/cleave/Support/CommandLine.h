//===- CommandLine.h - command-line parsing for Cleave's tools --*- C++ -*-===//
//
// Header-only (CleaveSupport itself has no LLVM: programs linking
// graph-compile's objects use it).
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_SUPPORT_COMMANDLINE_H
#define CLEAVE_SUPPORT_COMMANDLINE_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>

namespace cleave {

/// llvm::cl::ParseCommandLineOptions for a tool, exiting with status 1 on a
/// bad command line: its messages go to stderr, except the "Too many
/// positional arguments" that follows an unknown option (the option's
/// value, taken for a positional, says nothing new after "Did you mean").
inline void parseToolOptions(int argc, char **argv, const char *overview) {
  std::string messages;
  llvm::raw_string_ostream errors(messages);
  if (llvm::cl::ParseCommandLineOptions(argc, argv, overview, &errors))
    return;
  bool unknownOption =
      llvm::StringRef(messages).contains("Unknown command line argument");
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(messages).split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef line : lines) {
    if (unknownOption && (line.contains("Too many positional arguments") ||
                          line.starts_with("Can specify at most")))
      continue;
    llvm::errs() << line << "\n";
  }
  std::exit(1);
}

} // namespace cleave

#endif // CLEAVE_SUPPORT_COMMANDLINE_H
