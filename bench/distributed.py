#!/usr/bin/python3
"""Synchronous training across processes (issue 29): the Fashion-MNIST MLP
and CNN jobs' steps (784-256-128-100-10 and the layers-tutorial CNN, Adam,
global batch 100) in one process of two replicas (graph-estimator train) and in two trainer processes of one
replica each (graph-estimator train-and-evaluate, a chief and a worker
started by scripts/local-cluster.py, their gradients all-reduced over
Gloo), beside PyTorch's DistributedDataParallel on its gloo backend over
the same global batch in one and two processes, and Gloo's all-reduce of
the step's gradient bytes alone, through Cleave's process group
(cleave-allreduce-bench: two processes) and through PyTorch's
(torch.distributed.all_reduce, which is Gloo's).

Cleave's step time is the median of its step counter's global_step/sec
intervals (the first dropped: compilation); PyTorch's, the median of timed
steps after a warm-up. Both sides run without this machine's
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE (cpu_speed.py's bench_env).

Usage: /usr/bin/python3 bench/distributed.py --build BUILD_DIR
           [--models mlp,cnn] [--steps 1500] [--cnn-steps 300]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpu_speed as cs  # noqa: E402  (paths, environments)

EXAMPLE = os.path.join(cs.ROOT, "examples", "fashion-mnist")
# Each model's parameters: what one step all-reduces.
PARAMETERS = {
    "mlp": 784 * 256 + 256 + 256 * 128 + 128 + 128 * 100 + 100 + 100 * 10 + 10,
    "cnn": 32 * 25 + 32 + 64 * 32 * 25 + 64 + 3136 * 1024 + 1024 + 1024 * 10
    + 10,
}


def job(tmp, model, name, shards, steps):
    """<model>.job.pbtxt with `shards` replicas, `steps` steps, no
    checkpoints but the first and last, and a step counter every 50 steps
    (train_and_evaluate's max_steps too)."""
    with open(os.path.join(EXAMPLE, model + ".job.pbtxt")) as f:
        text = f.read()
    text = re.sub(r"max_steps: \d+", "max_steps: %d" % steps, text)
    if "train_spec" not in text:
        text += "\ntrain_spec { max_steps: %d }\n" % steps
    text = re.sub(r"num_shards: \d+", "num_shards: %d" % shards, text)
    text = re.sub(r"save_checkpoints_steps: \d+",
                  "save_checkpoints_steps: 1000000", text)
    text = re.sub(r"log_step_count_steps: \d+", "log_step_count_steps: 50",
                  text)
    text = re.sub(r"iterations_per_loop: \d+", "iterations_per_loop: 50",
                  text)
    for mode in ("train", "eval", "predict"):
        text = text.replace('"%s-%s.pbtxt"' % (model, mode), '"%s"' % os.path.join(
            EXAMPLE, "%s-%s.pbtxt" % (model, mode)))
    path = os.path.join(tmp, name + ".job.pbtxt")
    with open(path, "w") as f:
        f.write(text)
    return path


def median_step_ms(log, who):
    rates = [float(m) for m in re.findall(
        re.escape(who) + r"INFO: global_step/sec: ([0-9.e+]+)", log)]
    if len(rates) < 2:
        sys.exit("distributed: too few step counter lines for %r:\n%s"
                 % (who, log[-2000:]))
    return 1e3 / statistics.median(rates[1:])


def cleave_one_process(tmp, model, steps):
    tool = os.path.join(cs.CFG.build, "bin", "graph-estimator")
    p = subprocess.run([tool, "train", job(tmp, model, model + "-one", 2, steps),
                        "--model-dir", os.path.join(tmp, model + "-one"),
                        "--max-steps", str(steps)],
                       capture_output=True, text=True, env=cs.bench_env())
    if p.returncode:
        sys.exit("distributed: one process failed:\n" + p.stderr[-2000:])
    return median_step_ms(p.stderr, "")


def cleave_two_processes(tmp, model, steps):
    path = job(tmp, model, model + "-two", 1, steps)
    tool = os.path.join(cs.CFG.build, "bin", "graph-estimator")
    p = subprocess.run([sys.executable,
                        os.path.join(cs.ROOT, "scripts", "local-cluster.py"),
                        "--worker", "1", "--timeout", "1800", "--", tool,
                        "train-and-evaluate", path, "--model-dir",
                        os.path.join(tmp, model + "-two")],
                       capture_output=True, text=True, env=cs.bench_env())
    if p.returncode:
        sys.exit("distributed: two processes failed:\n" + p.stdout[-2000:])
    return median_step_ms(p.stdout, "[chief:0] ")


TORCH = r"""
import os, statistics, sys, tempfile, time
import torch, torch.distributed as dist, torch.nn as nn
import torch.multiprocessing as mp

def run(rank, world, store, steps, out):
    torch.set_num_threads(1)
    if world > 1:
        dist.init_process_group("gloo", init_method="file://" + store,
                                rank=rank, world_size=world)
    torch.manual_seed(0)
    if "%(model)s" == "mlp":
        model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(),
                              nn.Linear(256, 128), nn.ReLU(),
                              nn.Linear(128, 100), nn.ReLU(),
                              nn.Linear(100, 10))
        x = torch.rand(100 // world, 784)
    else:
        model = nn.Sequential(nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(),
                              nn.MaxPool2d(2), nn.Conv2d(32, 64, 5, padding=2),
                              nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                              nn.Linear(3136, 1024), nn.ReLU(),
                              nn.Dropout(0.4), nn.Linear(1024, 10))
        x = torch.rand(100 // world, 1, 28, 28)
    if world > 1:
        model = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.Adam(model.parameters(), lr=0.001)
    y = torch.randint(0, 10, (100 // world,))
    times = []
    for i in range(steps):
        start = time.perf_counter()
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - start)
    allreduce = []
    if world > 1:
        grads = torch.zeros(%(parameters)d)
        for i in range(steps // 2):
            start = time.perf_counter()
            dist.all_reduce(grads)
            allreduce.append(time.perf_counter() - start)
        dist.destroy_process_group()
    if rank == 0:
        with open(out, "w") as f:
            f.write("%%f %%f" %% (1e3 * statistics.median(times[steps // 5:]),
                                1e3 * statistics.median(allreduce)
                                if allreduce else 0))

if __name__ == "__main__":
    world, steps, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    store = tempfile.mktemp()
    if world == 1:
        run(0, 1, store, steps, out)
    else:
        mp.spawn(run, args=(world, store, steps, out), nprocs=world)
"""


def torch_figures(tmp, model, world, steps):
    """PyTorch's step and all-reduce at its best: with each allocator its
    CPU users preload (cpu_speed.ALLOCATORS), the fastest step kept; returns
    (step ms, all-reduce ms, allocator)."""
    script = os.path.join(tmp, "ddp-%s.py" % model)
    with open(script, "w") as f:
        f.write(TORCH % {"parameters": PARAMETERS[model], "model": model})
    best = None
    for name, path in cs.ALLOCATORS:
        if path and not os.path.exists(path):
            continue
        out = os.path.join(tmp, "ddp-%s-%d-%s.txt" % (model, world, name))
        env = cs.bench_env(**({"LD_PRELOAD": path} if path else {}))
        subprocess.run([cs.PYTHON, script, str(world), str(steps), out],
                       check=True, env=env)
        with open(out) as f:
            step, allreduce = (float(v) for v in f.read().split())
        if best is None or step < best[0]:
            best = (step, allreduce, name)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True)
    parser.add_argument("--models", default="mlp,cnn")
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--cnn-steps", type=int, default=300)
    args = parser.parse_args()
    cs.CFG.build = os.path.abspath(args.build)
    rows, gloo = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models.split(","):
            steps = args.cnn_steps if model == "cnn" else args.steps
            torch_steps = 60 if model == "cnn" else 400
            one = cleave_one_process(tmp, model, steps)
            two = cleave_two_processes(tmp, model, steps)
            torch_one, _, alloc_one = torch_figures(tmp, model, 1,
                                                    torch_steps)
            torch_two, gloo[model], alloc_two = torch_figures(tmp, model, 2,
                                                              torch_steps)
            rows.append((model, "1 process (Cleave: 2 replicas)", one,
                         torch_one, alloc_one))
            rows.append((model, "2 processes (Cleave: 1 replica each, Gloo)",
                         two, torch_two, alloc_two))
    print("\n| model | configuration | Cleave step (ms) | DDP step (ms) "
          "| DDP / Cleave | DDP's allocator |")
    print("|---|---|---|---|---|---|")
    for model, name, cleave, peer, allocator in rows:
        print("| %s | %s | %.3f | %.3f | %.2f | %s |"
              % (model, name, cleave, peer, peer / cleave, allocator))
    tool = os.path.join(cs.CFG.build, "bin", "cleave-allreduce-bench")
    for model, ms in gloo.items():
        ours = float(subprocess.run(
            [tool, str(PARAMETERS[model]), "300" if model == "mlp" else "60"],
            check=True, capture_output=True, text=True).stdout)
        print("\n%s: Gloo all-reduce of the step's %d gradient bytes alone: "
              "%.3f ms through Cleave's process group, %.3f ms through "
              "PyTorch's gloo backend (Cleave / PyTorch %.2f)"
              % (model, 4 * PARAMETERS[model], ours, ms, ours / ms))


if __name__ == "__main__":
    main()
