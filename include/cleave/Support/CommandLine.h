//===- CommandLine.h - command-line parsing for Cleave's tools --*- C++ -*-===//
//
// Header-only (CleaveSupport itself has no LLVM: programs linking
// graph-compile's objects use it).
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_SUPPORT_COMMANDLINE_H
#define CLEAVE_SUPPORT_COMMANDLINE_H

#include "cleave/Version.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace cleave {

/// --version: Cleave's version and commit, and the LLVM and MLIR it is
/// built on.
inline void printCleaveVersion(llvm::raw_ostream &os) {
  os << "Cleave " << CLEAVE_VERSION << " (" << CLEAVE_GIT_HASH << ")\n"
     << "  LLVM and MLIR " << LLVM_VERSION_STRING << "\n";
}

/// llvm::cl::ParseCommandLineOptions for a tool, exiting with status 1 on a
/// bad command line: its messages go to stderr, except the "Too many
/// positional arguments" that follows an unknown option (the option's
/// value, taken for a positional, says nothing new after "Did you mean").
inline void parseToolOptions(int argc, char **argv, const char *overview) {
  llvm::cl::SetVersionPrinter(printCleaveVersion);
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

/// Hides every option registered so far but --help and --version and those
/// of `keep`: the libraries' static options, above all the hundreds LLVM's
/// code generators register when libLLVM loads (--aarch64-*, --amdgpu-*),
/// as clang hides them. --help then shows the tool's options and those
/// registered after this call (MLIR's); --help-hidden lists every one.
inline void
hideLibraryOptions(std::initializer_list<llvm::cl::OptionCategory *> keep) {
  for (auto &entry : llvm::cl::getRegisteredOptions()) {
    llvm::cl::Option *option = entry.second;
    if (entry.first() == "help" || entry.first() == "version")
      continue;
    bool kept = llvm::any_of(option->Categories, [&](auto *category) {
      return llvm::is_contained(keep, category);
    });
    if (!kept)
      option->setHiddenFlag(llvm::cl::Hidden);
  }
  llvm::cl::SetVersionPrinter(printCleaveVersion);
}

/// " (did you mean 'x'?)" naming the nearest of `names` to `wrong` (up to
/// three, within an edit distance of a third of its length), as the flag
/// parser suggests flags; "" when none is near.
inline std::string suggestNearest(llvm::StringRef wrong,
                                  llvm::ArrayRef<llvm::StringRef> names) {
  unsigned limit = std::max<unsigned>(2, wrong.size() / 3), best = limit;
  llvm::SmallVector<llvm::StringRef> nearest;
  for (llvm::StringRef name : names) {
    unsigned d = wrong.edit_distance(name, /*AllowReplacements=*/true,
                                     /*MaxEditDistance=*/limit);
    if (d > limit)
      continue;
    if (d < best) {
      best = d;
      nearest.clear();
    }
    if (d == best && nearest.size() < 3)
      nearest.push_back(name);
  }
  if (nearest.empty())
    return "";
  llvm::sort(nearest);
  std::string text = " (did you mean ";
  for (auto [i, name] : llvm::enumerate(nearest))
    text += (i ? (i + 1 == nearest.size() ? " or '" : ", '") : "'") +
            name.str() + "'";
  return text + "?)";
}

/// The same over the keys of `names` (a graph's nodes by name).
template <typename T>
std::string suggestNearest(llvm::StringRef wrong,
                           const llvm::StringMap<T> &names) {
  llvm::SmallVector<llvm::StringRef> keys;
  for (const auto &entry : names)
    keys.push_back(entry.getKey());
  return suggestNearest(wrong, keys);
}

} // namespace cleave

#endif // CLEAVE_SUPPORT_COMMANDLINE_H
