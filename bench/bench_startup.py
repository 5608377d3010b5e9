"""Benchmark judgekit's start-up: fresh processes of the command line against ``python -c pass``.

Run: ``.venv/bin/python bench/bench_startup.py [--runs 7] [--before-src /tmp/old/src]``

What one run measures, each in N fresh processes (the median is printed), rounds interleaved so that the
baseline and every command share the same moments of a shared machine's load:

* ``python -c pass``: the interpreter's own start-up, the floor every figure is given over;
* ``judgekit --help`` and ``judgekit grade --help``;
* ``judgekit grade`` of the bundled example (``examples/airdesk``: 26 cases, the 104 trials of
  ``runs/agent-v2.jsonl``) without a judge: **time to the first result line** and **total**. The first
  result line is the moment this process, polling every 2 ms, first sees a newline-terminated line in the
  ``--out`` file, counted from just before the child is spawned (so it includes the interpreter's start
  and is late by at most one poll);
* ``judgekit report`` of that run's 104-line results file.

Each command runs the way the installed ``judgekit`` script runs it (``from judgekit.cli import main``)
with ``PYTHONPATH`` pointing at the source tree measured, so ``--before-src`` (for instance the ``src`` of
``git worktree add /tmp/old f8a1885``) is measured in the same run as this checkout. Bytecode is written to
a private ``PYTHONPYCACHEPREFIX`` and every command is run once before timing, as an installed package
has its ``.pyc`` files (``PYTHONDONTWRITEBYTECODE`` is dropped for the children).

Printed per command and tree: the median wall time and CPU time (user + system of the child), each also
as the difference to the baseline; the load average (1 minute) before each round; and a SHA-256 of each
``--help`` output so that a change in what help says is visible. Wall time on a loaded 2-core machine is
noisy; CPU time is the steadier figure.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "airdesk"
RUN = EXAMPLE / "runs" / "agent-v2.jsonl"
CLI = "import sys; from judgekit.cli import main; sys.exit(main())"
POLL = 0.002


@dataclass
class Run:
    """One fresh process: wall and CPU seconds, and, for a grading run, when its first line appeared."""

    wall: float
    cpu: float
    first: float | None = None
    first_cpu: float | None = None
    output: bytes = b""


@dataclass
class Sample:
    """The runs of one command in one tree, and the output of its untimed first run."""

    runs: list[Run] = field(default_factory=list)
    output: bytes = b""

    def median(self, figure: str) -> float | None:
        """The median of one figure of :class:`Run` over the runs that have it (``None``: none has)."""
        values = [getattr(run, figure) for run in self.runs if getattr(run, figure) is not None]
        return statistics.median(values) if values else None


def _env(src: Path | None, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONDONTWRITEBYTECODE", "PYTHONPATH"}}
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    env["COLUMNS"] = "100"
    env.pop("JUDGEKIT_CONFIG", None)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return env


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cpu_of(pid: int) -> float | None:
    """CPU seconds (user + system) a running process has used so far, from ``/proc`` (Linux)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_once(argv: list[str], env: dict[str, str], cwd: Path, watch: Path | None = None) -> Run:
    """Run one fresh process; with ``watch``, poll that file for its first complete line."""
    if watch is not None:
        watch.unlink(missing_ok=True)
    cpu0 = _children_cpu()
    start = time.perf_counter()
    child = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    first = first_cpu = None
    while watch is not None and child.poll() is None:
        try:
            if b"\n" in watch.read_bytes():
                first, first_cpu = time.perf_counter() - start, _cpu_of(child.pid)
                break
        except FileNotFoundError:
            pass
        time.sleep(POLL)
    out, _ = child.communicate()
    wall = time.perf_counter() - start
    if child.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv[3:])} exited {child.returncode}")
    if watch is not None and first is None:
        first = wall  # finished between two polls: its first line was there by the end
    return Run(wall, _children_cpu() - cpu0, first, first_cpu, out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="Fresh processes per command and tree (median).")
    parser.add_argument(
        "--before-src", type=Path, help="A src directory to measure as 'before' (of f8a1885)."
    )
    parser.add_argument("--python", default=sys.executable, help="The interpreter (the project's venv).")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    try:
        trees = {"after": ROOT / "src"}
        if args.before_src is not None:
            trees = {"before": args.before_src.resolve(), **trees}
        results = work / "results.jsonl"
        commands: dict[str, tuple[list[str], Path | None]] = {
            "python -c pass": (["-c", "pass"], None),
            "judgekit --help": (["-c", CLI, "--help"], None),
            "judgekit grade --help": (["-c", CLI, "grade", "--help"], None),
            "judgekit grade (example, no judge)": (
                [
                    "-c",
                    CLI,
                    "grade",
                    "--cases",
                    str(EXAMPLE),
                    "--transcripts",
                    str(RUN),
                    "--out",
                    str(results),
                ],
                results,
            ),
            "judgekit report (104 lines)": (["-c", CLI, "report", str(work / "report.jsonl")], None),
        }
        samples: dict[tuple[str, str], Sample] = {}
        loads: list[float] = []
        print(
            f"machine: {os.cpu_count()} CPUs, {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f}"
        )
        for round_ in range(args.runs + 1):  # round 0 writes the bytecode and the results file, untimed
            loads.append(os.getloadavg()[0])
            for tree, src in trees.items():
                env = _env(src, work / f"pycache-{tree}")
                for name, (rest, watch) in commands.items():
                    run = run_once([args.python, *rest], env, work, watch)
                    if watch is not None and not (work / "report.jsonl").exists():
                        shutil.copyfile(watch, work / "report.jsonl")
                    if round_ == 0:
                        samples[(tree, name)] = Sample(output=run.output)
                    else:
                        samples[(tree, name)].runs.append(run)
        _print(samples, trees, list(commands), loads[1:])
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _over(sample: Sample, base: Sample, figure: str) -> float:
    """A median figure of ``sample`` less the baseline's median wall (or CPU) time."""
    value = sample.median(figure) or 0.0
    return value - (base.median("cpu" if "cpu" in figure else "wall") or 0.0)


def _print(
    samples: dict[tuple[str, str], Sample], trees: dict[str, Path], names: list[str], loads: list[float]
) -> None:
    print(f"load average (1 min) before each timed round: {', '.join(f'{x:.2f}' for x in loads)}")
    print("median of each figure; '+' is over the same tree's python -c pass (wall over wall, CPU over CPU)")
    head = f"{'command':36} {'tree':6} {'wall s':>7} {'+wall':>7} {'cpu s':>6} {'+cpu':>6}"
    print(f"{head}  first line: wall (+), CPU (+)")
    for name in names:
        for tree in trees:
            sample, base = samples[(tree, name)], samples[(tree, "python -c pass")]
            line = f"{name:36} {tree:6} {sample.median('wall'):7.3f} {_over(sample, base, 'wall'):+7.3f}"
            line += f" {sample.median('cpu'):6.3f} {_over(sample, base, 'cpu'):+6.3f}"
            if sample.median("first") is not None:
                line += f"  {sample.median('first'):.3f} ({_over(sample, base, 'first'):+.3f})"
                line += f", {sample.median('first_cpu') or 0.0:.2f} ({_over(sample, base, 'first_cpu'):+.2f})"
            if "--help" in name:
                line += f"  sha256 {hashlib.sha256(sample.output).hexdigest()[:12]}"
            print(line)
    if "before" in trees:
        print("after / before, of the figures over the baseline:")
        for name in names[1:]:
            after, before = samples[("after", name)], samples[("before", name)]
            base_a, base_b = samples[("after", "python -c pass")], samples[("before", "python -c pass")]
            text = f"  {name:36}"
            for figure in ("wall", "cpu", "first", "first_cpu"):
                if after.median(figure) is not None and before.median(figure) is not None:
                    ratio = _over(after, base_a, figure) / _over(before, base_b, figure)
                    text += f"  {figure} {ratio:.2f}"
            print(text)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
