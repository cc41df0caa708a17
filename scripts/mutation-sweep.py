#!/usr/bin/env python3
"""Runs every tool on structural mutants of real graphs; reports crashes.

    scripts/mutation-sweep.py [--build DIR] [--mutants N] [--seed S]
                              [--minutes M] [--timeout T] [--jobs J]
                              [--out DIR]

Each mutant is a text GraphDef of the shared corpus or of the lit tests,
changed by 1 to 3 structural mutations (graphdef-mutate, the fuzzers'
mutator: ops swapped for registered ones, inputs deleted or rewired, output
indices, dtypes and dimensions changed, nodes copied into function bodies,
attrs swapped or dropped). Every tool then reads it: graph-opt through the
main pipelines, graph-run on both backends with no feeds, graph-freeze,
graph-translate's round trip. An error with a message is the right answer;
a signal, a sanitizer report, an LLVM fatal error or a run past the
timeout is a finding. Findings are kept in --out (the mutant, the command
and the end of its output) and make the exit status 1.

Run it on the sanitizer build (build-asan, which CI makes): a bug that
reads out of bounds may not crash in Release. A fixed --seed gives the
same mutants again (CI); none draws one.
"""
import argparse
import concurrent.futures
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "corpus")

# What tells a crash from an error: the process died of a signal, or said
# one of these.
CRASH_MARKERS = (
    "ERROR: AddressSanitizer",
    "ERROR: LeakSanitizer",
    "runtime error:",  # UndefinedBehaviorSanitizer
    "LLVM ERROR:",
    "PLEASE submit a bug report",
    "Assertion `",
)


def seeds():
    """Small text GraphDefs: the corpus's and the lit tests'."""
    found = []
    for top in (SHARED, os.path.join(ROOT, "test")):
        for directory, _, files in os.walk(top):
            for name in files:
                path = os.path.join(directory, name)
                if name.endswith(".pbtxt") and os.path.getsize(path) < 64 << 10:
                    found.append(path)
    return sorted(found)


def node_names(path):
    """Top-level node names, in order (a regex is enough for a sweep)."""
    with open(path, errors="replace") as f:
        text = f.read()
    library = text.find("library {")
    head = text if library < 0 else text[:library]
    return re.findall(r'node \{\s*name: "([^"]+)"', head)


def commands(build, mutant, fetch):
    """(label, argv) of every tool run on one mutant."""
    b = lambda tool: os.path.join(build, "bin", tool)
    opt = [b("graph-opt"), mutant, "-o", os.devnull]
    run = [b("graph-run"), mutant, "--channel-timeout=2", "--max-iterations=1000"]
    fetches = ["--fetch=" + fetch] if fetch else []
    return [
        ("infer-shapes", opt + ["--graph-infer-shapes"]),
        ("functionalize", opt + ["--graph-functionalize-conds",
                                 "--graph-functionalize-loops",
                                 "--graph-infer-shapes"]),
        ("replication", opt + ["--graph-cluster-formation",
                               "--graph-extract-outside-compilation"]),
        ("auto-cluster", opt + ["--graph-auto-cluster"]),
        # Two towers over the fetched node as the loss (mostly its
        # diagnostics: no scalar loss, no batch to split).
        ("towers", opt + ["--graph-infer-shapes",
                          "--graph-towers=num-devices=2 loss=" + fetch]
         if fetch else opt + ["--graph-towers=num-devices=2 mode=eval"]),
        ("export", [b("graph-opt"), mutant, "--emit=pbtxt", "-o", os.devnull]),
        ("interpreter", run + ["--backend=interpreter"] + fetches),
        ("cpu", run + ["--backend=cpu"] + fetches),
        ("freeze", [b("graph-freeze"), mutant, "-o", os.devnull]
         + (["--outputs=" + fetch] if fetch else [])),
    ]


def run_one(label, argv, timeout, env):
    """None, or why this run is a finding, and the end of its output."""
    try:
        done = subprocess.run(argv, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    err = done.stderr.decode(errors="replace")
    if done.returncode < 0:
        return "signal %d" % -done.returncode, err[-4000:]
    for marker in CRASH_MARKERS:
        if marker in err:
            return marker.strip(": `"), err[-4000:]
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build-asan"))
    parser.add_argument("--mutants", type=int, default=100)
    parser.add_argument("--minutes", type=float, default=0,
                        help="run until this long has passed (overrides --mutants)")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--timeout", type=float, default=30)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", default=os.path.join(ROOT, "build-asan",
                                                      "sweep-findings"))
    args = parser.parse_args()
    mutate = os.path.join(args.build, "bin", "graphdef-mutate")
    if not os.access(mutate, os.X_OK):
        sys.exit("mutation-sweep: %s is missing (configure the build with "
                 "-DCLEAVE_ENABLE_FUZZERS=ON)" % mutate)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    inputs = seeds()
    env = dict(os.environ)
    # libMLIR is not instrumented (see test/lit.cfg.py); leaks at exit of a
    # failed tool are not what the sweep looks for. An allocation past 2 GB
    # fails (as on a machine without the memory): the tool must say so, not
    # spend minutes filling gigabytes a mutant asked for.
    env["ASAN_OPTIONS"] = ("allow_user_poisoning=0:detect_leaks=0:"
                           "allocator_may_return_null=1:"
                           "max_allocation_size_mb=2048")
    work = tempfile.mkdtemp(prefix="sweep-")
    os.makedirs(args.out, exist_ok=True)
    deadline = time.time() + args.minutes * 60 if args.minutes else None
    print("mutation-sweep: seed %d, %d seed graphs, %s" % (
        seed, len(inputs),
        "%.0f min" % args.minutes if deadline else "%d mutants" % args.mutants))
    findings, runs, mutants, start = [], 0, 0, time.time()
    pool = concurrent.futures.ThreadPoolExecutor(args.jobs)
    try:
        while (time.time() < deadline) if deadline else mutants < args.mutants:
            source = rng.choice(inputs)
            mutant = os.path.join(work, "mutant-%d.pbtxt" % mutants)
            steps = rng.randint(1, 3)
            made = subprocess.run([mutate, source, mutant,
                                   str(rng.randrange(1 << 62)), str(steps)],
                                  capture_output=True, text=True, env=env)
            if made.returncode != 0:
                continue  # not a GraphDef (a test's MLIR input, say)
            mutants += 1
            names = node_names(mutant)
            fetch = rng.choice(names) if names else ""
            jobs = {pool.submit(run_one, label, argv, args.timeout, env):
                    (label, argv) for label, argv in commands(args.build,
                                                             mutant, fetch)}
            for future in concurrent.futures.as_completed(jobs):
                runs += 1
                finding = future.result()
                if not finding:
                    continue
                label, argv = jobs[future]
                kept = os.path.join(args.out, "finding-%d-%s.pbtxt" % (
                    len(findings), label))
                shutil.copy(mutant, kept)
                with open(kept + ".txt", "w") as f:
                    f.write("source: %s\nmutations: %s\ncommand: %s\n"
                            "finding: %s\n\n%s" % (
                                source, " ".join(made.stdout.split()),
                                " ".join(argv), finding[0], finding[1]))
                findings.append((label, finding[0], source))
                print("FINDING %s (%s): %s -> %s" % (label, finding[0],
                                                     source, kept))
            os.remove(mutant)
    finally:
        pool.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    print("mutation-sweep: %d mutants, %d tool runs in %.0f s: %d findings"
          % (mutants, runs, time.time() - start, len(findings)))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
