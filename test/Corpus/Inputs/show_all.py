"""show_all.py CORPUS: runs graph-show (text and --json, the JSON parsed)
on every graph of CORPUS/MANIFEST.tsv (not the .debug GraphDebugInfo) and
on every SavedModel under CORPUS/savedmodel; prints a line per failure and
a count. The graphs TensorFlow refuses (EXPECTED FAILURE) are shown too,
or refused with an error naming the file (exit 1), never a crash.
Standard library only."""
import json
import os
import subprocess
import sys


def show(path, may_refuse=False):
    """None when graph-show reads `path` both ways (or, if `may_refuse`,
    refuses it cleanly), else why not."""
    for args in ([], ["--json"]):
        run = subprocess.run(["graph-show", path] + args, capture_output=True,
                             text=True)
        if (may_refuse and run.returncode == 1 and
                run.stderr.startswith("graph-show: ") and path in run.stderr):
            continue
        if run.returncode != 0:
            return run.stderr.strip().splitlines()[-1:] or [
                "exit status %d" % run.returncode]
        if args:
            try:
                json.loads(run.stdout)
            except ValueError as e:
                return "bad JSON: %s" % e
    return None


def main():
    corpus = sys.argv[1]
    paths = []
    with open(os.path.join(corpus, "MANIFEST.tsv")) as f:
        next(f)
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 7 or fields[0].endswith(".debug"):
                continue
            refused = fields[6].startswith("EXPECTED FAILURE")
            paths.append((os.path.join(corpus, fields[0]), refused))
    saved = os.path.join(corpus, "savedmodel")
    for root, dirs, files in os.walk(saved):
        if "saved_model.pb" in files or "saved_model.pbtxt" in files:
            paths.append((root, False))
    failed = 0
    for path, refused in sorted(paths):
        why = show(path, may_refuse=refused)
        if why:
            failed += 1
            print("FAIL %s: %s" % (path, why))
    print("graph-show: %d graphs, %d failed" % (len(paths), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
