"""Benchmark the peak memory of ``judgekit grade`` on one very long transcript, against a short one.

Issue 33 ("Also seen"): a 100,000-message transcript (4 MB) used 672 MB in ``grade``. This measures it.

The transcript is the first trial of the bundled AirDesk example (``examples/airdesk/runs/agent-v1.jsonl``,
11 messages, state paths made absolute) with ``--messages`` minus 11 short filler messages
(``{"role": "user", "content": "message 123"}``, alternating user and assistant) inserted after its first
two: about 48 bytes a message, 4.8 MB at 100,000 messages. The **baseline** is the same trial unpadded,
graded in the same run the same way, so imports, the golden set, the runner and litellm count in both.

Each measurement is ``judgekit grade`` (``judgekit.cli.main``, the command a user runs) in a fresh child
interpreter, whose peak RSS is its own (``resource.getrusage(RUSAGE_SELF).ru_maxrss``, the kernel's
VmHWM), on two grader set-ups:

* ``deterministic``: every deterministic layer, no judge;
* ``judge``: plus the ``honest-reporting`` rubric judge (7 criteria, one sample each) answered by the
  loopback OpenAI-compatible server (``tests/judges/server.py``, in its own process, no added latency).

It prints, per set-up, the baseline's and the long transcript's peak RSS and wall time, the difference and
the difference per MB of transcript, then the judge layer's own share (the judge set-up less the deterministic
one) and its ratio. ``--trace`` also runs the long judge case under ``tracemalloc`` (about
50 times slower) and prints the largest allocation sites at the traced peak.

Run: ``.venv/bin/python bench/bench_long_transcript.py`` (``--messages 20000`` for a quick run).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from judge_server import start_server

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support import absolute_states  # noqa: E402  (tests/support.py: the tests' AirDesk helpers)

AIRDESK = ROOT / "examples" / "airdesk"
RUNS = AIRDESK / "runs"
MODEL = "openai/bench-judge"


def write_transcript(dest: Path, messages: int) -> int:
    """Write the AirDesk trial padded to ``messages`` messages (at least its own 11); its size in bytes."""
    row = absolute_states(json.loads((RUNS / "agent-v1.jsonl").read_text().splitlines()[0]), RUNS)
    own = row["messages"]
    filler = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"}
        for i in range(max(0, messages - len(own)))
    ]
    row["messages"] = own[:2] + filler + own[2:]
    dest.write_text(json.dumps(row) + "\n")
    return dest.stat().st_size


def child(transcripts: str, out: str, config: str, trace: bool) -> None:
    """Grade in this (fresh) process and print its figures as one JSON line on standard output."""
    sys.path.insert(0, str(ROOT / "src"))
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-real-key-000000000000")
    from judgekit.cli import main

    args = ["grade", "--cases", str(AIRDESK), "--transcripts", transcripts, "--out", out, "--no-progress"]
    if config:
        args += ["--judge-model", MODEL, "--config", config]
    sites: list[dict[str, Any]] = []
    if trace:
        import threading
        import tracemalloc

        import litellm  # noqa: F401 - imported before tracing starts: its import is not the transcript's

        tracemalloc.start(8)
        best: list[Any] = [0, None]
        done = threading.Event()

        def watch() -> None:
            while not done.is_set():
                current, _ = tracemalloc.get_traced_memory()
                if current > best[0] * 1.05:
                    best[0], best[1] = current, tracemalloc.take_snapshot()
                done.wait(0.05)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
    started = time.perf_counter()
    code = main(args)
    wall = time.perf_counter() - started
    if trace:
        done.set()
        watcher.join()
        _, peak = tracemalloc.get_traced_memory()
        snapshot = best[1].filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
        for stat in snapshot.statistics("traceback")[:8]:
            frames = [
                f"{f.filename.split('/src/')[-1]}:{f.lineno}"
                for f in stat.traceback
                if "judgekit" in f.filename
            ]
            sites.append({"mb": stat.size / 2**20, "blocks": stat.count, "where": frames[-3:]})
        sites.insert(0, {"traced_peak_mb": peak / 2**20, "snapshot_mb": best[0] / 2**20})
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"exit": code, "peak_mb": peak_kb / 1024, "wall_s": wall, "sites": sites}))


def measure(transcripts: Path, out: Path, config: str, *, trace: bool = False) -> dict[str, Any]:
    """Run :func:`child` in a fresh interpreter; its figures, with the load average before."""
    out.unlink(missing_ok=True)
    load = os.getloadavg()[0]
    cmd = [sys.executable, __file__, "--child", str(transcripts), str(out), config]
    if trace:
        cmd.append("--trace")
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=3600)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise SystemExit(f"the child failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    if result["exit"] not in (0, 1):
        raise SystemExit(f"grade exited {result['exit']}:\n{done.stderr[-3000:]}")
    result["load"] = load
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=100_000, help="messages in the long transcript")
    parser.add_argument("--trace", action="store_true", help="also trace the long judge case (slow)")
    parser.add_argument("--child", nargs=3, metavar=("TRANSCRIPTS", "OUT", "CONFIG"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child, trace=args.trace)
        return
    server, base = start_server()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            short, long = folder / "short.jsonl", folder / "long.jsonl"
            short_bytes = write_transcript(short, 0)
            long_bytes = write_transcript(long, args.messages)
            config = folder / "run.yaml"
            config.write_text(json.dumps({"judge": {"api_base": base, "rubric": "honest-reporting"}}))
            print(
                f"long transcript: {args.messages:,} messages, {long_bytes / 1e6:.1f} MB; baseline: the same "
                f"trial unpadded ({short_bytes:,} bytes)\n"
            )
            print("| set-up | transcript | peak RSS (MB) | wall s | load avg (1 min, before) |")
            print("|---|---|---:|---:|---:|")
            rows = []
            for setup, cfg in (("deterministic", ""), ("judge", str(config))):
                base_run = measure(short, folder / "o-short.jsonl", cfg)
                long_run = measure(long, folder / "o-long.jsonl", cfg)
                for name, run in (("baseline", base_run), ("long", long_run)):
                    figures = f"{run['peak_mb']:.0f} | {run['wall_s']:.1f} | {run['load']:.2f}"
                    print(f"| {setup} | {name} | {figures} |")
                rows.append((setup, base_run, long_run))
            print()
            for setup, base_run, long_run in rows:
                extra = long_run["peak_mb"] - base_run["peak_mb"]
                print(
                    f"{setup}: the long transcript adds {extra:.0f} MB of peak RSS, "
                    f"{extra / (long_bytes / 2**20):.0f} MB per MB of transcript "
                    f"({long_run['peak_mb'] / base_run['peak_mb']:.2f}x the baseline)"
                )
            (_, det_base, det_long), (_, judge_base, judge_long) = rows
            layer_base = judge_base["peak_mb"] - det_base["peak_mb"]
            layer_long = judge_long["peak_mb"] - det_long["peak_mb"]
            print(
                f"judge layer alone (judge minus deterministic): {layer_base:.0f} MB baseline, "
                f"{layer_long:.0f} MB long ({layer_long / layer_base:.2f}x; at 16642e3, before the "
                "per-trial prompt parts: 155 and 456 MB, 2.94x)"
            )
            if args.trace:
                traced = measure(long, folder / "o-trace.jsonl", str(config), trace=True)
                head, *sites = traced["sites"]
                print(
                    f"\ntracemalloc, long judge case: traced peak {head['traced_peak_mb']:.0f} MB; largest "
                    f"sites at {head['snapshot_mb']:.0f} MB:"
                )
                for site in sites:
                    where = " <- ".join(site["where"]) or "(no judgekit frame: imports, litellm, httpx)"
                    print(f"  {site['mb']:6.1f} MB in {site['blocks']:>9,} blocks  {where}")
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
