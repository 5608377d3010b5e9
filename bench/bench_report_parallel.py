"""Benchmark ``judgekit report`` and ``judgekit compare`` read by N processes over byte ranges against one.

The results files are real ``judgekit grade`` output: the result lines of the bundled demo's two runs
(``judgekit demo``: 104 trials each, about 12 KB a line, with judge notes, quotes and costs), replicated
to ``--lines`` lines, each copy's case ids given a distinct suffix (``gs-double-charge~r17``), so every
task keeps the demo's trials and every ``(case, trial)`` key is distinct. File A replicates the first
run, file B the second (for ``compare``).

Each measurement is one child process running the command itself (``judgekit report FILE`` or
``judgekit compare A B``, through :func:`judgekit.cli.main`, in Markdown, the commands' default format,
written with ``--output``; since the eighth session: before, the child called the services
:func:`judgekit.api.reports.report` / :func:`~judgekit.api.reports.compare` and rendered the Markdown
itself, which left out what only the command does), with ``--processes 1`` or ``--processes N``, in a
folder of its own (no project configuration); the runs alternate (1, N, 1, N, ...) so that both see the
same load. The wall is the child's, from its start (interpreter start-up and imports included) to the
command's return (its objects freed); the CPU is the child's and its workers' up to then. The Markdown
of every run must be the same (SHA-256). In the first pair of runs the child then also makes the report
as JSON and HTML (the comparison as JSON) through the services, not counted, and those must be the same
too; the benchmark stops otherwise. Printed per run: wall, CPU (the child's own and its workers'), the
1-minute load average before it; then the medians and the ratio N / 1.

Run: ``.venv/bin/python bench/bench_report_parallel.py --lines 400000`` (``--lines 40000`` for a quick
run; the files are written under ``--tmp`` and deleted at the end unless ``--keep``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compiled import compiled_env

ROOT = Path(__file__).resolve().parents[1]

_CASE_ID = re.compile(rb'"case":\{"id":"([^"]*)"')

_CHILD = """
import hashlib, os, resource, sys, time
from judgekit.cli import main
from judgekit.reports import run_parts
kind, processes, check, out, *files = sys.argv[1:]
# the critical path's parts: this process's CPU in its own range, each worker's CPU (when it is reaped)
ranges, workers_cpu = [], []
read_range, result = run_parts._read_range, run_parts._Worker.result
def timed_range(*args):
    start = time.process_time()
    try:
        return read_range(*args)
    finally:
        ranges.append(time.process_time() - start)
def timed_result(self):
    try:
        return result(self)
    finally:
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        workers_cpu.append(used.ru_utime + used.ru_stime - sum(workers_cpu))
run_parts._read_range, run_parts._Worker.result = timed_range, timed_result
markdown = out + ".md"
# the command itself, in Markdown (its default format), written to a file
code = main([kind, *files, "--processes", processes, "--output", markdown])
done = time.perf_counter()
own = resource.getrusage(resource.RUSAGE_SELF)
workers = resource.getrusage(resource.RUSAGE_CHILDREN)
if code not in (0, 1):
    raise SystemExit(f"judgekit {kind} exited with {code}")
with open(markdown, "rb") as handle:
    texts = [handle.read()]
if check == "1":  # the other formats too, for the check that every output is the same (not counted)
    from judgekit.api import reports
    if kind == "report":
        model = reports.report(files[0], processes=int(processes), records=())
        texts += [reports.render_report(model, fmt).encode() for fmt in ("json", "html")]
    else:
        from judgekit.reports.run_json import render_comparison_json
        result = reports.compare(files[0], files[1], processes=int(processes))
        texts.append(render_comparison_json(result).encode())
with open(out, "w") as handle:
    handle.write(" ".join(hashlib.sha256(t).hexdigest() for t in texts))
    handle.write(f"\\n{own.ru_utime + own.ru_stime} {workers.ru_utime + workers.ru_stime} ")
    handle.write(f"{time.perf_counter() - done} ")
    cpu = own.ru_utime + own.ru_stime
    if workers_cpu:  # this process's CPU, its own ranges counted as the longer of each and its worker's
        cpu += sum(max(r, w) - r for r, w in zip(ranges, workers_cpu))
    handle.write(f"{cpu}")
os._exit(0)  # what the check built is not freed on the clock (the command's own objects already were)
"""


def demo_results(folder: Path) -> list[Path]:
    """The bundled demo's two results files, made by ``judgekit demo --out folder`` when absent."""
    found = sorted((folder / "results").glob("agent-v*.jsonl"))
    if len(found) < 2:
        subprocess.run(
            [sys.executable, "-m", "judgekit.cli", "demo", "--out", str(folder)],
            check=True,
            stdout=subprocess.DEVNULL,
            env=_env(),
        )
        found = sorted((folder / "results").glob("agent-v*.jsonl"))
    return found


def replicate(source: Path, out: Path, lines: int) -> None:
    """Write ``lines`` lines: ``source``'s lines over and over, each copy's case ids suffixed ``~rN``."""
    rows = [raw for raw in source.read_bytes().splitlines() if raw.strip()]
    with out.open("wb") as handle:
        written = copy = 0
        while written < lines:
            suffix = f'~r{copy}"'.encode()
            for raw in rows[: lines - written]:
                match = _CASE_ID.search(raw)
                if match is None:
                    raise SystemExit(f"{source}: a line without a case id")
                cut = match.end() - 1  # before the case id's closing quote
                handle.write(raw[:cut] + suffix + raw[cut + 1 :] + b"\n")
            written += min(len(rows), lines - written)
            copy += 1


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    return env


_COMPILED: dict[str, str] = {}


def _compiled_env(tmp: Path) -> dict[str, str]:
    """:func:`_env` for children that read judgekit byte-compiled, as installed (compiled on first use)."""
    if not _COMPILED:
        _COMPILED.update(compiled_env(_env(), tmp / "pycache", ROOT / "src"))
    return _COMPILED


def measure(
    kind: str, processes: int, files: list[Path], tmp: Path, *, check: bool
) -> tuple[float, float, float, float, float, str]:
    """One child run: wall s, CPU s (all, its own, its workers'), load before, output hashes.

    The child runs the command (``judgekit report`` or ``judgekit compare`` with ``--processes`` and
    ``--output``) in a folder of its own (no project configuration); with ``check`` it then also makes
    the JSON and HTML outputs, not counted, for the check that every output is the same.
    """
    out = tmp / f"{kind}-{processes}.sha"
    load = os.getloadavg()[0]
    start = time.perf_counter()
    command = [sys.executable, "-c", _CHILD, kind, str(processes), "1" if check else "0", str(out)]
    command += [str(f.resolve()) for f in files]
    # its standard error (a line per lost regression task, "wrote ...") is written, to nowhere
    subprocess.run(command, check=True, env=_compiled_env(tmp), cwd=tmp, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    digest, cpus = out.read_text().split("\n")
    own, workers, checking, critical = (float(x) for x in cpus.split())
    return wall - checking, own + workers, critical, workers, load, digest


def bench(kind: str, files: list[Path], processes: int, repeat: int, tmp: Path) -> None:
    """Alternate one-process and N-process runs; print each, the medians, the ratio; check the hashes."""
    walls: dict[int, list[float]] = {1: [], processes: []}
    cpus: dict[int, list[float]] = {1: [], processes: []}
    parents: list[float] = []
    hashes: set[str] = set()
    markdowns: set[str] = set()
    size = sum(f.stat().st_size for f in files)
    print(f"\n{kind}: {', '.join(f.name for f in files)} ({size / 1e6:,.0f} MB)")
    for r in range(repeat):
        for p in (1, processes):
            wall, cpu, critical, workers, load, digest = measure(kind, p, files, tmp, check=r == 0)
            walls[p].append(wall)
            cpus[p].append(cpu)
            if p > 1:
                parents.append(critical)
            markdowns.add(digest.split()[0])  # the command's Markdown, every run
            if r == 0:
                hashes.add(digest)  # with the JSON and HTML made after it (the first pair of runs)
            print(
                f"  run {r + 1} processes={p}: wall {wall:7.2f} s  CPU {cpu:7.2f} s (workers {workers:.2f}; "
                f"critical path {critical:.2f})  load before {load:.2f}"
            )
    if len(hashes) != 1 or len(markdowns) != 1:
        raise SystemExit(f"outputs differ between the runs: {sorted(hashes)} {sorted(markdowns)}")
    one, many = statistics.median(walls[1]), statistics.median(walls[processes])
    print(f"  median wall: 1 process {one:.2f} s, {processes} processes {many:.2f} s: ratio {many / one:.3f}")
    cpu_one, cpu_many, parent = (statistics.median(v) for v in (cpus[1], cpus[processes], parents))
    print(
        f"  median CPU: 1 process {cpu_one:.2f} s, {processes} processes {cpu_many:.2f} s in all "
        f"({cpu_many / cpu_one:.3f}x); critical path {parent:.2f} s: {parent / cpu_one:.3f} of one "
        "process's CPU (the wall ratio with a free core per process)"
    )
    print(f"  outputs identical, SHA-256 {' '.join(h[:16] for h in next(iter(hashes)).split())}")


def main(argv: list[str] | None = None) -> None:
    """Generate the files, run the benchmark, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=400_000)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--demo", type=Path, default=None, help="a judgekit demo --out folder to reuse")
    parser.add_argument(
        "--tmp",
        type=Path,
        default=None,
        help="where the run's own folder of generated files goes (default /tmp)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the run's folder of generated files")
    parser.add_argument("--only", choices=("report", "compare"), default=None)
    args = parser.parse_args(argv)
    if args.tmp is not None:
        args.tmp.mkdir(parents=True, exist_ok=True)
    # a folder of its own, even inside --tmp: only what this run made is deleted at the end
    tmp = Path(tempfile.mkdtemp(prefix="bench-report-parallel-", dir=args.tmp))
    print(f"machine: {os.cpu_count()} CPUs; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    try:
        sources = demo_results(args.demo or tmp / "demo")
        files = [tmp / f"a-{args.lines}.jsonl", tmp / f"b-{args.lines}.jsonl"]
        for source, out in zip(sources, files, strict=True):
            if not out.exists():
                replicate(source, out, args.lines)
        if args.only in (None, "report"):
            bench("report", files[:1], args.processes, args.repeat, tmp)
        if args.only in (None, "compare"):
            bench("compare", files, args.processes, args.repeat, tmp)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
