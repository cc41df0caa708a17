#!/usr/bin/env python3
"""graph-replicate + graph-cluster-formation + extraction scaling benchmark.

Generates the foundation benchmark's graphs (cleave-graphdef-bench generate,
with --tower: each layer's compute in name scope "model/", its variables
outside) at 100k and 1M nodes, and times in one process: GraphDef import
(the in-job peer every figure is normalised by), graph-replicate of
"model" for 8 replicas with one outside-compilation scope,
graph-cluster-formation and graph-extract-outside-compilation. Linear passes keep (pass time / import time) flat
across sizes; the scaling column divides the time growth by the size growth
(1.00 = linear).

Usage: replicate_scaling.py --build BUILD_DIR [--sizes 100000,1000000]
       [--replicas 8]
"""
import argparse
import os
import subprocess
import tempfile


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--replicas", type=int, default=8)
    args = ap.parse_args()
    bench = os.path.join(args.build, "bin", "cleave-graphdef-bench")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(s) for s in args.sizes.split(",")]:
            pb = os.path.join(tmp, "g%d.pb" % n)
            subprocess.run([bench, "generate", str(n), pb, "--tower"],
                           check=True, stdout=subprocess.DEVNULL)
            out = subprocess.run([bench, "replicate", pb, str(args.replicas)],
                                 check=True, capture_output=True,
                                 text=True).stdout
            os.remove(pb)
            rows.append({k: float(v) for k, v in
                         (line.split("=", 1) for line in out.split())})
    print("%9s %9s %11s %10s %10s %12s %13s %15s %9s" % (
        "nodes", "import_s", "replicate_s", "cluster_s", "extract_s",
        "rep/import", "cluster/import", "extract/import", "peak_MiB"))
    for r in rows:
        print("%9d %9.3f %11.3f %10.3f %10.3f %12.2f %13.2f %15.2f %9d" % (
            r["nodes"], r["import_s"], r["replicate_s"], r["cluster_s"],
            r["extract_s"], r["replicate_s"] / r["import_s"],
            r["cluster_s"] / r["import_s"], r["extract_s"] / r["import_s"],
            r["peak_rss_mib"]))
    for a, b in zip(rows, rows[1:]):
        growth = b["nodes"] / a["nodes"]
        both_a = a["replicate_s"] + a["cluster_s"]
        both_b = b["replicate_s"] + b["cluster_s"]
        print("scaling %d -> %d nodes (time growth / size growth): "
              "replicate %.2f, cluster formation %.2f, extraction %.2f, "
              "both %.2f, import (peer) %.2f" % (
                  a["nodes"], b["nodes"],
                  b["replicate_s"] / a["replicate_s"] / growth,
                  b["cluster_s"] / a["cluster_s"] / growth,
                  b["extract_s"] / a["extract_s"] / growth,
                  both_b / both_a / growth,
                  b["import_s"] / a["import_s"] / growth))


if __name__ == "__main__":
    main()
