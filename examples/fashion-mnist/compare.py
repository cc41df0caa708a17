#!/usr/bin/env python3
"""Checks a replicated run against its single-replica oracle.

Reads graph-run's output of the single-replica run (`step k: model/loss =
float [] v`) and of the replicated one (`step k: output0:r = float [] v`)
and checks, step by step, that the single run's loss (over the global
batch) equals the mean of the replicas' losses (each over its share), to
float tolerance: the replicas then followed the same path. With
--compiled, also that the compiled replicated run (graph-run
--backend=cpu) gave each replica's loss of the interpreted one at every
step.

Usage: compare.py SINGLE_OUTPUT REPLICATED_OUTPUT [--compiled OUTPUT]
                  [--rtol 1e-4]
"""
import argparse
import re
import sys

LINE = re.compile(r"^step (\d+): (\S+) = float \[\] (\S+)$")


def losses(path):
    by_step = {}
    with open(path) as f:
        for line in f:
            m = LINE.match(line.strip())
            if m:
                by_step.setdefault(int(m.group(1)), []).append(float(m.group(3)))
    return by_step


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("single")
    ap.add_argument("replicated")
    ap.add_argument("--compiled")
    ap.add_argument("--rtol", type=float, default=1e-4)
    args = ap.parse_args()
    single, replicated = losses(args.single), losses(args.replicated)
    if not single or sorted(single) != sorted(replicated):
        sys.exit("compare: the runs have different steps (%d and %d)" %
                 (len(single), len(replicated)))
    worst = 0.0
    for step in sorted(single):
        want = single[step][0]
        got = sum(replicated[step]) / len(replicated[step])
        error = abs(got - want) / max(1.0, abs(want))
        worst = max(worst, error)
        if error > args.rtol:
            sys.exit("compare: step %d: single-replica loss %g, mean of the "
                     "replicas' losses %g" % (step, want, got))
    steps = sorted(single)
    print("%d steps, %d replicas: the mean replica loss equals the "
          "single-replica loss (largest relative difference %.1e); loss "
          "%.4f -> %.4f" % (len(steps), len(replicated[steps[0]]), worst,
                            single[steps[0]][0], single[steps[-1]][0]))
    if args.compiled:
        compiled = losses(args.compiled)
        if sorted(compiled) != steps:
            sys.exit("compare: the compiled run has %d steps, the "
                     "interpreted one %d" % (len(compiled), len(steps)))
        worst = 0.0
        for step in steps:
            for r, (got, want) in enumerate(zip(compiled[step],
                                                replicated[step])):
                error = abs(got - want) / max(1.0, abs(want))
                worst = max(worst, error)
                if error > args.rtol:
                    sys.exit("compare: step %d, replica %d: compiled loss "
                             "%g, interpreted %g" % (step, r, got, want))
        print("compiled equals interpreted (largest relative difference "
              "%.1e)" % worst)


if __name__ == "__main__":
    main()
