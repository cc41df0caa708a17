#!/usr/bin/python3
"""Estimator (graph-estimator, issue 28): the layers-tutorial CNN's
training step on Fashion-MNIST (examples/fashion-mnist/cnn.job.pbtxt,
Adam, global batch 100) as graph-estimator trains it, at
iterations_per_loop 1, 10 and 100 on 1 and 2 replicas and with
use_tpu: false, against the bare compiled step (graph-run --timing on the
same training graph with a batch fed, no input pipeline, no estimator) and
against PyTorch's training loop over the same IDX data (the epoch's
permutation, each batch sliced from the decoded images, the step; data
handling included) at its best thread setting and allocator.

graph-estimator's step time comes from its own StepCounterHook lines
(global_step/sec every log_step_count_steps = 50 steps, the first
interval dropped: compilation), the median of the intervals. overhead =
the estimator's step / the bare step - 1. epoch = 600 steps of 100.
Both sides run without this machine's OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE (cpu_speed.py's bench_env), so both use the kernels
OpenBLAS picks for this processor.

Usage: /usr/bin/python3 bench/estimator.py --build BUILD_DIR [--steps 400]
           [--quick]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpu_speed as cs  # noqa: E402  (graph-run, the peers, environments)

EXAMPLE = os.path.join(cs.ROOT, "examples", "fashion-mnist")
DATA = "/usr/share/datasets/fashion-mnist"
BATCH = 100


def job(tmp, name, use_tpu, replicas, ipl):
    """cnn.job.pbtxt with the run's settings, beside copies of its graphs."""
    with open(os.path.join(EXAMPLE, "cnn.job.pbtxt")) as f:
        text = f.read()
    text = re.sub(r"use_tpu: \w+", "use_tpu: %s" % ("true" if use_tpu else
                                                      "false"), text)
    text = re.sub(r"num_shards: \d+", "num_shards: %d" % replicas, text)
    text = re.sub(r"iterations_per_loop: \d+", "iterations_per_loop: %d" % ipl,
                  text)
    text = re.sub(r"log_step_count_steps: \d+", "log_step_count_steps: 50",
                  text)
    text = re.sub(r"save_checkpoints_steps: \d+",
                  "save_checkpoints_steps: 1000000", text)
    for mode in ("train", "eval", "predict"):
        text = text.replace('"cnn-%s.pbtxt"' % mode, '"%s"' % os.path.join(
            EXAMPLE, "cnn-%s.pbtxt" % mode))
    path = os.path.join(tmp, name + ".job.pbtxt")
    with open(path, "w") as f:
        f.write(text)
    return path


def estimator_step_ms(tmp, name, steps, **settings):
    """Median step time graph-estimator's step counter reports."""
    path = job(tmp, name, **settings)
    cmd = [os.path.join(cs.CFG.build, "bin", "graph-estimator"), "train",
           path, "--model-dir", os.path.join(tmp, name), "--max-steps",
           str(steps)]
    p = subprocess.run(cmd, capture_output=True, text=True,
                       env=cs.bench_env())
    if p.returncode != 0:
        sys.exit("estimator: %s failed:\n%s" % (name, p.stderr[-2000:]))
    rates = [float(m) for m in
             re.findall(r"global_step/sec: ([0-9.e+]+)", p.stderr)]
    if len(rates) < 2:
        sys.exit("estimator: %s: too few step counter lines" % name)
    return 1e3 / statistics.median(rates[1:])


def bare_step_ms(tmp):
    """graph-run --timing on the same training step (Adam, batch 100)."""
    train = os.path.join(tmp, "cnn-step.pbtxt")
    subprocess.run([os.path.join(cs.CFG.build, "bin", "graph-opt"),
                    os.path.join(EXAMPLE, "cnn-train.pbtxt"),
                    "--graph-infer-shapes",
                    "--graph-minimize=loss=loss optimizer=adam "
                    "learning-rate=0.001 global-step=global_step "
                    "create-global-step", "--emit=pbtxt", "-o", train],
                   check=True)
    rng = np.random.default_rng(5)
    np.save(os.path.join(tmp, "x.npy"),
            rng.random((BATCH, 784), dtype=np.float32))
    np.save(os.path.join(tmp, "labels.npy"),
            rng.integers(0, 10, BATCH).astype(np.int32))
    args = [train, "--init", "init", "--feed",
            "x=@" + os.path.join(tmp, "x.npy"), "--feed",
            "labels=@" + os.path.join(tmp, "labels.npy"), "--fetch", "loss",
            "--target", "Adam"]
    return cs.measure_cleave(args, os.cpu_count())["median_ms"]


TORCH_LOOP = """
import gzip
def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big")
            for i in range(data[3])]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * len(dims)).reshape(dims)
images = torch.from_numpy(idx("%(data)s/train-images-idx3-ubyte.gz")
                          .astype(np.float32) / 255).reshape(-1, 1, 28, 28)
labels = torch.from_numpy(idx("%(data)s/train-labels-idx1-ubyte.gz")
                          .astype(np.int64))
B = %(batch)d
def glorot(shape, fan_in, fan_out):
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    return torch.empty(shape).uniform_(-limit, limit).requires_grad_()
params = [glorot((32, 1, 5, 5), 25, 800), torch.zeros(32, requires_grad=True),
          glorot((64, 32, 5, 5), 800, 1600), torch.zeros(64, requires_grad=True),
          glorot((1024, 3136), 3136, 1024), torch.zeros(1024, requires_grad=True),
          glorot((10, 1024), 1024, 10), torch.zeros(10, requires_grad=True)]
opt = torch.optim.Adam(params, lr=0.001)
order = torch.randperm(images.shape[0])
position = [0]
def step():
    start = position[0] %% (images.shape[0] - B)
    index = order[start:start + B]
    position[0] += B
    x, y = images[index], labels[index]
    w1, b1, w2, b2, w3, b3, w4, b4 = params
    h = F.max_pool2d(F.relu(F.conv2d(x, w1, b1, padding=2)), 2)
    h = F.max_pool2d(F.relu(F.conv2d(h, w2, b2, padding=2)), 2)
    h = F.dropout(F.relu(F.linear(h.flatten(1), w3, b3)), 0.4, True)
    loss = F.cross_entropy(F.linear(h, w4, b4), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
report(times=measure(step))
"""


def torch_step_ms(cores):
    """PyTorch's loop at its best setting: 1 or all threads of its own,
    OpenBLAS on all cores, its fastest allocator."""
    body = TORCH_LOOP % {"data": DATA, "batch": BATCH}
    allocator, preload = cs.pick_allocator("estimator", body, cores)
    figures = {}
    for threads in sorted({1, cores}):
        figures[threads] = cs.summary(cs.peer(
            body, threads, torch=True, blas_threads=cores,
            preload=preload)["times"])["median_ms"]
    best = min(figures, key=figures.get)
    print("estimator: PyTorch (%s): %s" % (allocator, ", ".join(
        "%d threads %.2f ms" % (t, ms) for t, ms in sorted(figures.items()))))
    return figures[best], "%d threads, %s" % (best, allocator)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    cs.CFG.build = os.path.abspath(args.build)
    cs.CFG.quick = args.quick
    steps = 150 if args.quick else args.steps
    if not os.path.exists(os.path.join(DATA, "train-images-idx3-ubyte.gz")):
        sys.exit("estimator: no Fashion-MNIST in %s (dataset-fashion-mnist)"
                 % DATA)
    cores = os.cpu_count()
    print("estimator: OpenBLAS kernel: %s" % cs.openblas_core(
        [cs.PYTHON, "-c", "import numpy; numpy.ones((64, 64)) @ "
         "numpy.ones((64, 64))"]))
    with tempfile.TemporaryDirectory() as tmp:
        bare = bare_step_ms(tmp)
        peer, setting = torch_step_ms(cores)
        rows = [("bare compiled step (graph-run)", bare)]
        rows.append(("use_tpu: false",
                     estimator_step_ms(tmp, "cpu", steps, use_tpu=False,
                                       replicas=1, ipl=1)))
        for replicas in (1, 2):
            for ipl in (1, 10, 100):
                rows.append(("%d replica%s, iterations_per_loop %d" % (
                    replicas, "s" if replicas > 1 else "", ipl),
                    estimator_step_ms(tmp, "r%d-ipl%d" % (replicas, ipl),
                                      steps, use_tpu=True, replicas=replicas,
                                      ipl=ipl)))
        print("\n| configuration | step (ms) | overhead over the bare step "
              "| epoch (s) | PyTorch epoch / epoch |")
        print("|---|---|---|---|---|")
        for name, ms in rows:
            print("| %s | %.2f | %+.1f %% | %.1f | %.2f |" % (
                name, ms, 100 * (ms / bare - 1), ms * 0.6, peer / ms))
        print("| PyTorch (%s) | %.2f | | %.1f | 1.00 |" % (setting, peer,
                                                             peer * 0.6))


if __name__ == "__main__":
    main()
