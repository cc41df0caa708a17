#!/usr/bin/env python3
"""GraphDef round-trip benchmark: Cleave import+export against mlir-opt.

For each size (default 10k, 100k, 1M nodes) it generates a realistic binary
GraphDef, times Cleave's parse / import / export / serialize in one process
(cleave-graphdef-bench), and runs `mlir-opt --allow-unregistered-dialect` on
the same graph in MLIR generic form (parse + print) in the same job. Reports
seconds, peak RSS and the ratio (Cleave import+export) / (mlir-opt).

Usage: graphdef_roundtrip.py --build BUILD_DIR [--sizes 10000,100000,1000000]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time


def run_measured(cmd):
    """Runs cmd, returns (stdout, wall seconds, peak RSS MiB)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        # wait4 gives this child's own peak RSS (KiB on Linux).
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            sys.exit("failed: %s\n%s" % (" ".join(cmd), err.read().decode()))
        return out.read().decode(), wall, usage.ru_maxrss // 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--mlir-opt", default="/usr/lib/llvm-19/bin/mlir-opt")
    args = ap.parse_args()
    bench = os.path.join(args.build, "bin", "cleave-graphdef-bench")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(s) for s in args.sizes.split(",")]:
            pb = os.path.join(tmp, "g%d.pb" % n)
            mlir = os.path.join(tmp, "g%d.mlir" % n)
            subprocess.run([bench, "generate", str(n), pb], check=True,
                           stdout=subprocess.DEVNULL)
            out, _, _ = run_measured([bench, "roundtrip", pb, mlir])
            stats = dict(line.split("=", 1) for line in out.split())
            _, opt_s, opt_rss = run_measured(
                [args.mlir_opt, "--allow-unregistered-dialect", mlir,
                 "-o", os.devnull])
            ours = float(stats["import_s"]) + float(stats["export_s"])
            rows.append((n, stats, opt_s, opt_rss, ours))
            os.remove(mlir)
    print("%9s %9s %8s %8s %8s %8s %9s %9s %10s %9s %6s" % (
        "nodes", "MB", "parse_s", "import_s", "export_s", "serial_s",
        "total_s", "peak_MiB", "mlir-opt_s", "mlir_MiB", "ratio"))
    for n, st, opt_s, opt_rss, ours in rows:
        print("%9d %9.1f %8s %8s %8s %8s %9s %9s %10.2f %9d %6.2f" % (
            int(st["nodes"]), int(st["bytes"]) / 1e6, st["parse_s"],
            st["import_s"], st["export_s"], st["serialize_s"],
            st["roundtrip_s"], st["peak_rss_mib"], opt_s, opt_rss,
            ours / opt_s))
        if st["identical"] != "1":
            print("  warning: export did not reproduce the input bytes")
    print("ratio = Cleave (import + export) / mlir-opt (parse + print); "
          "total_s = parse + import + export + serialize")


if __name__ == "__main__":
    main()
