"""Runs a command with its address space limited to N MiB.

Usage: memory_limit.py N command [args...]. A tool that materialises what
it should keep compact fails under the limit instead of passing on a
machine with memory to spare.
"""
import os
import resource
import sys

limit = int(sys.argv[1]) << 20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
os.execvp(sys.argv[2], sys.argv[2:])
