"""Runs an evaluator task while a trainer writes checkpoints in stages.

  staged-evaluator.py GRAPH_ESTIMATOR JOB MODEL_DIR STEP...

The model is first trained to the first STEP; then the evaluator starts
(TF_CONFIG: the evaluator of a one-chief cluster), and for each further
STEP, once the evaluator has evaluated the previous one and then polled
again without a new checkpoint, the model is trained on to it. The evaluator's output goes to stdout; the script exits
with its status (or 1 after 120 s, the evaluator killed).
"""
import json
import os
import subprocess
import sys
import threading
import time

tool, job, model_dir = sys.argv[1:4]
steps = [int(s) for s in sys.argv[4:]]


def train(max_steps):
    subprocess.run([tool, "train", job, "--model-dir", model_dir, "--quiet",
                    "--max-steps", str(max_steps)], check=True)


train(steps[0])
env = dict(os.environ)
env["TF_CONFIG"] = json.dumps({"cluster": {"chief": ["localhost:2222"]},
                               "task": {"type": "evaluator", "index": 0}})
evaluator = subprocess.Popen([tool, "train-and-evaluate", job, "--model-dir",
                              model_dir], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
evaluated = []
waits = []  # the waits before each evaluation's
lines = []


def read():
    for line in evaluator.stdout:
        lines.append(line)
        if line.startswith("INFO: Saving dict for global step "):
            evaluated.append(int(line.split()[6].rstrip(":")))
            waits.append(0)
        elif "before starting next eval run" in line and waits:
            waits[-1] += 1


reader = threading.Thread(target=read)
reader.start()
deadline = time.monotonic() + 120
# The next checkpoint once the evaluator has evaluated the previous one and
# then found no new one (its second wait after that evaluation).
for previous, step in zip(steps, steps[1:]):
    while (previous not in evaluated or waits[evaluated.index(previous)] < 2) \
            and evaluator.poll() is None:
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    train(step)
try:
    status = evaluator.wait(timeout=max(1, deadline - time.monotonic()))
except subprocess.TimeoutExpired:
    evaluator.kill()
    status = 1
reader.join()
sys.stdout.write("".join(lines))
sys.exit(status)
