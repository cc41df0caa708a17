//===- GradientColocation.h - gradient_uid outside-compilation scopes -*- C++
//-*-===//
//
// TPUReplicateContext.EnterGradientColocation / ExitGradientColocation: while
// the gradient of an outside-compiled op is built, new nodes go to the
// outside-compilation cluster "<root of its cluster>.<gradient_uid>". Only
// the outermost colocation opens a scope; nested ones inherit it.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_GRAPH_TRANSFORMS_GRADIENTCOLOCATION_H
#define CLEAVE_DIALECT_GRAPH_TRANSFORMS_GRADIENTCOLOCATION_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace cleave::graph {

/// The uid _DefaultGradYs uses when none is passed: building a gradient in
/// an outside-compilation scope with it is an error.
inline constexpr llvm::StringLiteral kUnsupportedGradientUid =
    "__unsupported__";

class GradientColocation {
public:
  /// Colocates with op `opName`, whose `_xla_outside_compilation` value is
  /// `outsideCluster` (empty: none). Returns TensorFlow's error when the
  /// scope cannot be entered.
  std::optional<std::string> enter(llvm::StringRef opName,
                                   llvm::StringRef outsideCluster,
                                   llvm::StringRef gradientUid);
  /// Ends the colocation with `opName`; errors when colocations are not
  /// properly nested.
  std::optional<std::string> exit(llvm::StringRef opName);

  /// The outside-compilation cluster new nodes belong to, if any.
  std::optional<llvm::StringRef> getOutsideCluster() const {
    if (!outsideCluster)
      return std::nullopt;
    return llvm::StringRef(*outsideCluster);
  }

  /// Closes the open outside-compilation scope behind the colocation's back
  /// (what a user outside_compilation() exit would do); the next enter then
  /// reports the bad nesting. For tests of that diagnostic.
  void closeOutsideScope() { outsideCluster.reset(); }

private:
  llvm::SmallVector<std::string> stack;
  std::optional<std::string> outsideCluster;
  /// The op whose colocation opened the scope.
  std::optional<std::string> inGradientColocation;
};

} // namespace cleave::graph

#endif // CLEAVE_DIALECT_GRAPH_TRANSFORMS_GRADIENTCOLOCATION_H
