#!/usr/bin/env python3
"""Runs the commands of Markdown documents and compares what they print.

The README and docs/*.md show commands in fenced blocks. Two kinds run:

* A transcript: a block with lines starting `$ `. Each such line (joined
  with its `\\` continuation lines) is a command; the lines up to the next
  command are what it prints, stdout and stderr together. An expected line
  `...` stands for any number of lines, and `...` inside a line for any
  text. A command shown printing nothing must also exit 0.
  `$ cat FILE` of a file that does not exist yet writes the shown lines to
  FILE: that is how a document shows an input it then uses.
* A script: a `sh` block without prompts. Every command in it must exit 0;
  what it prints is not compared.

An HTML comment on the line before a fence changes that:
`<!-- doc-test: skip (why) -->` (not run: the test command itself, a
benchmark, a pattern with made-up file names), `<!-- doc-test: run -->`
(run, output not compared: timings), `<!-- doc-test: before CMD -->` (CMD
runs first, unshown: an input the text only describes).

Commands run with bash in a scratch directory where `build` is the build
directory and the source tree's top-level directories are linked, so the
documents' relative paths work and files they write land there; `/tmp/` in
a command and in its output is that directory's `tmp/`. Blocks run in
document order, files kept in between, as a reader would type them.
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

MARKER = re.compile(r"<!--\s*doc-test:\s*(skip|run|before)\b\s*(.*?)\s*-->")


class Block:
    def __init__(self, doc, line, lang, lines, directives):
        self.doc, self.line, self.lang, self.lines = doc, line, lang, lines
        self.directives = directives  # [(kind, argument)]

    def has(self, kind):
        return any(k == kind for k, _ in self.directives)


def read_blocks(path):
    """The fenced blocks of a Markdown file with the directives before them."""
    blocks, lines = [], open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        fence = re.match(r"^(\s*)```(\w*)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        directives, j = [], i - 1
        while j >= 0 and MARKER.search(lines[j]):
            m = MARKER.search(lines[j])
            directives.insert(0, (m.group(1), m.group(2)))
            j -= 1
        start, body = i + 2, []  # the 1-based number of the block's first line
        i += 1
        while i < len(lines) and not re.match(r"^\s*```\s*$", lines[i]):
            body.append(lines[i])
            i += 1
        blocks.append(Block(path, start, fence.group(2), body, directives))
        i += 1
    return blocks


def join_continuations(lines):
    """[(index of the first line, command)], a trailing backslash continuing a command."""
    commands, current, first = [], None, 0
    for k, line in enumerate(lines):
        if current is None:
            current, first = line, k
        else:
            current += "\n" + line
        if not line.endswith("\\"):
            commands.append((first, current))
            current = None
    if current is not None:
        commands.append((first, current))
    return commands


def transcript(block):
    """[(command, first line, expected lines)] of a transcript block."""
    steps, k = [], 0
    while k < len(block.lines):
        if not block.lines[k].startswith("$ "):
            raise SystemExit(f"{block.doc}:{block.line + k}: output before the first command")
        command_lines, first = [block.lines[k][2:]], block.line + k
        while command_lines[-1].endswith("\\") and k + 1 < len(block.lines):
            k += 1
            command_lines.append(block.lines[k])
        k += 1
        expected = []
        while k < len(block.lines) and not block.lines[k].startswith("$ "):
            expected.append(block.lines[k])
            k += 1
        steps.append(("\n".join(command_lines), first, expected))
    return steps


def line_matches(pattern, actual):
    if "..." not in pattern:
        return pattern == actual
    regex = ".*".join(re.escape(part) for part in pattern.split("..."))
    return re.fullmatch(regex, actual) is not None


def output_matches(expected, actual):
    """Whether actual lines match expected ones, `...` lines matching any run."""
    def match(e, a):
        if e == len(expected):
            return a == len(actual)
        if expected[e].strip() == "...":
            return any(match(e + 1, k) for k in range(a, len(actual) + 1))
        return a < len(actual) and line_matches(expected[e], actual[a]) and match(e + 1, a + 1)
    return match(0, 0)


class Runner:
    def __init__(self, workdir, timeout):
        self.workdir, self.timeout, self.failures, self.commands = workdir, timeout, [], 0
        self.tmp = os.path.join(workdir, "tmp")

    def localize(self, text):
        return text.replace("/tmp/", self.tmp + "/")

    def run(self, command):
        self.commands += 1
        try:
            done = subprocess.run(["bash", "-c", "set -o pipefail\n" + self.localize(command)],
                                  cwd=self.workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return None, f"(did not finish within {self.timeout} s)"
        return done.returncode, done.stdout.decode("utf-8", "replace")

    def fail(self, where, command, why, output):
        printed = output.rstrip("\n").split("\n") if output.strip() else []
        self.failures.append(f"{where}: {why}\n  $ {command}\n" + "".join(f"  | {line}\n" for line in printed))

    def run_script(self, block):
        for k, command in join_continuations(block.lines):
            if not command.strip() or command.lstrip().startswith("#"):
                continue
            status, output = self.run(command)
            if status != 0:
                self.fail(f"{block.doc}:{block.line + k}", command, f"exit {status}", output)

    def run_transcript(self, block):
        for command, line, expected in transcript(block):
            where = f"{block.doc}:{line}"
            cat = re.fullmatch(r"cat ([\w.-]+)", command)
            if cat and not os.path.exists(os.path.join(self.workdir, cat.group(1))):
                with open(os.path.join(self.workdir, cat.group(1)), "w") as f:
                    f.write("\n".join(expected) + "\n")
                continue
            status, output = self.run(command)
            actual = output.rstrip("\n").split("\n") if output.strip() else []
            wanted = [self.localize(e) for e in expected]
            if status is None or (status != 0 and not expected):
                self.fail(where, command, f"exit {status}", output)
            elif not block.has("run") and not output_matches(wanted, actual):
                self.fail(where, command, "printed something else; expected:\n" +
                          "".join(f"  > {e}\n" for e in wanted).rstrip("\n") + "\n got:", output)

    def run_block(self, block):
        if block.has("skip"):
            return
        for kind, argument in block.directives:
            if kind == "before":
                status, output = self.run(argument)
                if status != 0:
                    self.fail(f"{block.doc}:{block.line}", argument, f"exit {status}", output)
        if any(line.startswith("$ ") for line in block.lines):
            self.run_transcript(block)
        elif block.lang == "sh":
            self.run_script(block)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", required=True, help="the source tree")
    parser.add_argument("--build", required=True, help="the build directory")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per command")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    parser.add_argument("documents", nargs="*",
                        help="Markdown files, relative to --source (default: the README, docs/*.md and "
                        "examples/*/README.md)")
    args = parser.parse_args()
    if not args.documents:
        args.documents = ["README.md"] + sorted(
            os.path.relpath(path, args.source)
            for pattern in ("docs/*.md", "examples/*/README.md")
            for path in glob.glob(os.path.join(args.source, pattern)))

    workdir = tempfile.mkdtemp(prefix="cleave-doc-test-")
    os.symlink(os.path.abspath(args.build), os.path.join(workdir, "build"))
    for entry in os.listdir(args.source):
        if not entry.startswith(("build", ".")) and not os.path.exists(os.path.join(workdir, entry)) and \
                os.path.isdir(os.path.join(args.source, entry)):
            os.symlink(os.path.abspath(os.path.join(args.source, entry)), os.path.join(workdir, entry))
    runner = Runner(workdir, args.timeout)
    os.makedirs(runner.tmp)
    try:
        for document in args.documents:
            for block in read_blocks(os.path.join(args.source, document)):
                block.doc = document
                runner.run_block(block)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    for failure in runner.failures:
        print(failure, file=sys.stderr)
    print(f"{runner.commands} commands run, {len(runner.failures)} failed")
    return 1 if runner.failures else 0


if __name__ == "__main__":
    sys.exit(main())
