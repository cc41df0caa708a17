//===- main.cpp - the MLP training step, compiled ahead of time -----------===//
//
// Trains the bundled MLP (examples/mlp-training-step.pbtxt) on a fixed
// batch with the step graph-compile turned into mlp_step.o and mlp_step.h:
// no MLIR, no interpreter, just the generated class. The variables start
// from the values the graph's initializers gave at compile time.
//
//===----------------------------------------------------------------------===//

#include "mlp_step.h"

#include <cstdio>
#include <cstdlib>

int main(int argc, char **argv) {
  int steps = argc > 1 ? std::atoi(argv[1]) : 5;
  cleave_example::MlpStep step;
  for (int i = 0; i < 2 * 784; ++i)
    step.feed_x()[i] = 0.01f;
  step.feed_labels()[0] = 3;
  step.feed_labels()[1] = 7;
  for (int s = 0; s < steps; ++s) {
    if (!step.Run()) {
      std::fprintf(stderr, "step %d failed: %s\n", s, step.error_message());
      return 1;
    }
    std::printf("step %d: Mean = %.9g global_step = %lld\n", s,
                double(*step.fetch_Mean()),
                static_cast<long long>(*step.fetch_global_step()));
  }
  return 0;
}
