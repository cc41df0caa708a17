//===- RandomState.h - a random node's place in its stream ------*- C++ -*-===//
//
// A stateful random node (RandomUniform, RandomStandardNormal,
// TruncatedNormal, RandomUniformInt) draws new numbers on every run: its
// generator moves on by kBlocksReservedPerOutput blocks per output, as
// TensorFlow's GuardedPhiloxRandom does. How far it has moved is a uint64
// scalar in the variables of the run's State, so that compiled code threads
// it as it threads a variable and the interpreter and compiled code take
// turns on one stream.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_KERNELS_RANDOMSTATE_H
#define CLEAVE_KERNELS_RANDOMSTATE_H

#include "cleave/Support/Philox.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace cleave::interp {

/// The variable holding how many blocks node `nodeName` has drawn (absent
/// before its first run: none); a name no node can have.
std::string getRandomStateVariable(llvm::StringRef nodeName);

/// The generator of a stateful random node before its first run:
/// TensorFlow's PhiloxRandom(seed, seed2). Where both seeds are 0,
/// TensorFlow draws seeds from the system; Cleave derives them from the
/// node's name instead, so that a run is reproducible.
random::Philox getStatefulGenerator(int64_t seed, int64_t seed2,
                                    llvm::StringRef nodeName);

/// The generator's element type for a TensorFlow dtype (unsigned integers
/// draw the bits of their signed peers), or nullopt.
std::optional<random::ElementType> getRandomElementType(int32_t dtype);

} // namespace cleave::interp

#endif // CLEAVE_KERNELS_RANDOMSTATE_H
