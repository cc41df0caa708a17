//===- GradientColocation.cpp - gradient_uid outside-compilation scopes ---===//
//
// TensorFlow's TPUReplicateContext.EnterGradientColocation and
// ExitGradientColocation, with their messages.
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Graph/Transforms/GradientColocation.h"

#include "llvm/ADT/Twine.h"

using namespace cleave::graph;

std::optional<std::string>
GradientColocation::enter(llvm::StringRef opName, llvm::StringRef outsideAttr,
                          llvm::StringRef gradientUid) {
  stack.push_back(opName.str());
  // A scope is open (the user's, or an outer gradient colocation's): the
  // new nodes stay in it.
  if (outsideCluster || outsideAttr.empty())
    return std::nullopt;
  if (inGradientColocation)
    return std::string("Cannot nest gradient colocation operations outside "
                       "compilation");
  if (gradientUid == kUnsupportedGradientUid)
    return std::string(
        "No gradient_uid calling gradient within outside_compilation");
  inGradientColocation = opName.str();
  // The uid is always the suffix after the last '.': the same invocation
  // keeps the cluster, a gradient of a gradient appends its own uid.
  llvm::StringRef lastPart = outsideAttr.rsplit('.').second;
  if (!lastPart.empty() && lastPart == gradientUid)
    outsideCluster = outsideAttr.str();
  else
    outsideCluster = (llvm::Twine(outsideAttr) + "." + gradientUid).str();
  return std::nullopt;
}

std::optional<std::string> GradientColocation::exit(llvm::StringRef opName) {
  if (stack.empty())
    return ("Badly nested gradient colocation: empty stack when popping Op " +
            llvm::Twine(opName))
        .str();
  std::string last = stack.pop_back_val();
  if (last != opName)
    return ("Badly nested gradient colocation, expected " + last + ", got " +
            llvm::Twine(opName))
        .str();
  if (inGradientColocation && *inGradientColocation == opName) {
    inGradientColocation.reset();
    outsideCluster.reset();
  }
  return std::nullopt;
}
