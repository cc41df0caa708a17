#!/usr/bin/env python3
"""Runs a TensorFlow-style cluster on this machine, one process per task.

  scripts/local-cluster.py [--chief 1] [--worker N] [--ps N] [--evaluator 1]
      [--master 1] [--timeout S] -- COMMAND [ARG...]

Each task runs COMMAND with its own TF_CONFIG (the cluster on free loopback
ports, and the task's type and index), as a cluster manager starts them, and
its lines go to stdout prefixed with "[type:index] ". SIGINT and SIGTERM are
forwarded to every task; --kill-when kills a task when a line appears (the
fault tests). The launcher waits for the trainers and the
evaluator (ps tasks serve until the others are done, then are stopped),
reports each task's exit status and exits non-zero when any task failed or
the timeout passed (then every task is killed: none is left hanging).
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time


def free_ports(count):
    """Ports the kernel gives now; bound together so they differ."""
    sockets = []
    for _ in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("127.0.0.1", 0))
        sockets.append(s)
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def forward(prefix, stream, lock, on_line):
    for line in iter(stream.readline, b""):
        text = line.decode(errors="replace")
        with lock:
            sys.stdout.write(prefix + text)
            sys.stdout.flush()
        on_line(text)
    stream.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for job in ("chief", "master", "worker", "ps", "evaluator"):
        parser.add_argument("--" + job, type=int, default=1 if job == "chief" else 0,
                            help="tasks of type %s" % job)
    parser.add_argument("--timeout", type=float, default=600,
                        help="seconds before every task is killed (default 600)")
    parser.add_argument("--kill-when", action="append", default=[],
                        metavar="TASK=TEXT",
                        help="SIGKILL task TASK (type:index) once any task "
                        "prints a line containing TEXT (fault tests)")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="-- then the command each task runs")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command (give it after --)")
    if args.evaluator > 1:
        parser.error("--evaluator: at most 1 (TensorFlow allows one)")
    if args.chief and args.master:
        parser.error("--chief and --master cannot both be given")

    jobs = [(job, getattr(args, job)) for job in ("chief", "master", "worker", "ps")]
    ports = iter(free_ports(sum(count for _, count in jobs)))
    cluster = {job: ["127.0.0.1:%d" % next(ports) for _ in range(count)]
               for job, count in jobs if count}
    tasks = [(job, index) for job, count in jobs for index in range(count)]
    tasks += [("evaluator", 0)] * args.evaluator

    kills = []
    for kill in args.kill_when:
        task, sep, text = kill.partition("=")
        if not sep or ":" not in task:
            parser.error("--kill-when: TASK=TEXT, TASK as type:index, got %r" % kill)
        kills.append([task, text, False])

    lock = threading.Lock()
    processes = []

    def on_line(text):
        for kill in kills:
            if kill[2] or kill[1] not in text:
                continue
            kill[2] = True
            for job, index, process, _ in processes:
                if "%s:%d" % (job, index) == kill[0] and process.poll() is None:
                    process.kill()
                    with lock:
                        print("local-cluster: killed %s" % kill[0], flush=True)
    for job, index in tasks:
        env = dict(os.environ)
        env["TF_CONFIG"] = json.dumps(
            {"cluster": cluster, "task": {"type": job, "index": index}})
        process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT)
        thread = threading.Thread(target=forward, daemon=True,
                                  args=("[%s:%d] " % (job, index), process.stdout, lock,
                                        on_line))
        thread.start()
        processes.append((job, index, process, thread))

    def stop_all(signum, _frame):
        for _, _, process, _ in processes:
            if process.poll() is None:
                process.send_signal(signum)
    signal.signal(signal.SIGINT, stop_all)
    signal.signal(signal.SIGTERM, stop_all)

    deadline = time.monotonic() + args.timeout
    timed_out = False
    waited = [p for p in processes if p[0] != "ps"]
    while any(p[2].poll() is None for p in waited):
        if time.monotonic() > deadline:
            timed_out = True
            break
        time.sleep(0.05)
    # ps tasks serve until stopped; anything left after a timeout is killed.
    for job, _, process, _ in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM if job == "ps" and not timed_out
                                else signal.SIGKILL)
    failed = timed_out
    for job, index, process, thread in processes:
        try:
            status = process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            status = process.wait()
        thread.join()
        stopped = job == "ps" and not timed_out and status == -signal.SIGTERM
        killed = any(k[2] and k[0] == "%s:%d" % (job, index) for k in kills)
        if status != 0 and not stopped:
            failed = True
        what = ("exit status %d" % status if status >= 0
                else "killed by signal %d" % -status)
        print("local-cluster: %s:%d: %s%s" % (
            job, index, what,
            " (stopped)" if stopped else " (as asked)" if killed else ""))
    if timed_out:
        print("local-cluster: the tasks did not finish within %g s; all were "
              "killed" % args.timeout)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
