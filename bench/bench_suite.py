"""The test suite's cost, before and after, in one run: CPU seconds of pytest over chosen test files.

Runs ``pytest -n 0 -q -p no:cacheprovider FILES`` (``CI=true``, so the hostile sweeps run whole and
count) once in a "before" checkout and once in this one, one after the other, and prints each run's CPU
seconds (user + system of pytest and every process it waited for: the sweeps' children, the command
line's subprocesses), its wall seconds, the 1-minute load average before it, and the ratio. CPU seconds
are what a shared machine's noise disturbs least; the wall time under load is printed, not compared.
Both runs use the same source (``--src``, default the before checkout's ``src``), so the ratio is the
tests' own cost.

    git worktree add /tmp/old f8a1885
    .venv/bin/python bench/bench_suite.py --before /tmp/old tests/hostile/test_judge_replies.py ...
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load() -> str:
    return Path("/proc/loadavg").read_text(encoding="ascii").split()[0]


def run(tree: Path, src: Path, files: list[str]) -> tuple[float, float, int, str]:
    """Run pytest on ``files`` in ``tree``, ``src`` first on the path: (CPU s, wall s, exit code, load)."""
    load = _load()
    env = {**os.environ, "CI": "true", "PYTHONPATH": str(src), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "0", "-q", "-p", "no:cacheprovider", *files],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:], flush=True)
    return cpu, wall, done.returncode, load


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="a checkout of the before commit")
    parser.add_argument("--src", type=Path, help="the source both runs import (default: BEFORE/src)")
    parser.add_argument("files", nargs="+", help="test files, relative to the checkouts")
    args = parser.parse_args()
    src = args.src or args.before / "src"
    print(f"machine: {os.cpu_count()} cores; source for both runs: {src}")
    rows = {}
    for name, tree in (("before", args.before), ("after", ROOT)):
        cpu, wall, code, load = run(tree, src, args.files)
        rows[name] = cpu
        print(f"{name:6}  CPU {cpu:8.1f} s  wall {wall:8.1f} s  exit {code}  load before {load}", flush=True)
    print(f"after / before CPU: {rows['after'] / rows['before']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
