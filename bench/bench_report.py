"""Benchmark ``judgekit report`` on result lines as ``judgekit grade`` writes them: time and peak memory.

The results file has lines like ``judgekit grade`` writes: 14 checks per trial (10 deterministic rule checks
with call evidence, 4 judged criteria with a quote and the judge's note with its fingerprint and cost),
the run record, the judge fingerprint, the grading configuration, the transcript source, the cost: about
8 KB per line. The mix: a pass probability per task, about 1 % error and 0.5 % insufficient-information
trials, one failed rule check in each failed trial.

Each method runs in its own subprocess (so its peak RSS is its own: ``ru_maxrss``, the kernel's VmHWM),
on the same file, and reports CPU seconds, wall seconds and peak RSS, with the load average before it:

1. ``before``: the streamed report (``report_run`` of a path; ``stream_run_report`` before the one
   engine) of the code given by ``--before-src`` (a ``src`` directory, e.g. of
   ``git archive HEAD`` extracted into /tmp): every line through the hostile-input checks and pydantic.
2. ``after``: ``report_run`` of the file's path, in this checkout (what ``judgekit report`` runs): the
   exact fast path (a typed msgspec mirror of the schema), the full path for any line it is not certain
   about.
3. ``in-memory``: ``read_results`` then ``report_run`` of the lines in memory, in this checkout (every
   line kept): run on the small file only, to check the streamed report against it.
4. ``loop``: a fair single-pass loop: ``msgspec`` decodes each line's verdict and case id only (no
   validation, no hostile-input checks), counts once per task, pass^k from the counts with
   ``math.comb``. What the report's headline numbers cost with nothing else.
5. ``decode``: the floor of any report that validates every field: each line decoded by the fast path's
   typed mirror (:data:`judgekit.results._FAST_DECODE`) and dropped; no hostile-input test, no duplicate-key
   proof, nothing counted.
6. ``decode+count``: the floor of today's aggregation: the same decode, every line fed to
   :class:`~judgekit.reports.run_model.RunAccumulator` and the report built (its JSON must equal
   ``after``'s: the lines are all ones the fast path accepts). ``after`` minus this is what the
   hostile-input tests and the duplicate-key proof cost.

Before any figure is printed: the first 200 lines are checked to be what ``judgekit grade`` writes
(``dump_result_line`` of the line read back gives the same bytes); on both files the reports of
``before`` and ``after`` (and on the small file ``in-memory``) are checked to be the same JSON text (by
SHA-256, with the ``cached_tokens`` cost column, which another change adds at the same time, left out of
both), and the loop's pass^1 to agree with the report's.

Run: ``.venv/bin/python bench/bench_report.py`` (``--lines 40000`` for a quick run).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

FAILURES = (
    "wrong_tool",
    "invalid_arguments",
    "policy_violation",
    "incomplete_execution",
    "incorrect_reporting",
)
TRIALS = 40


def _line(rng: random.Random, task: int, trial: int, p: float, version: str) -> dict[str, Any]:
    """One result line shaped like ``judgekit grade``'s, with 14 checks and their evidence."""
    r = rng.random()
    if r < 0.01:
        verdict = "error"
    elif r < 0.015:
        verdict = "insufficient_information"
    else:
        verdict = "pass" if rng.random() < p else "fail"
    checks: list[dict[str, Any]] = []
    for i in range(10):
        failed = verdict == "fail" and i == 3
        checks.append(
            {
                "check_id": f"rule:{i}",
                "layer": "trajectory",
                "verdict": "fail" if failed else "pass",
                "gate": True,
                "reason": f"called refund_order with amount {rng.randint(1, 999)} over the limit"
                if failed
                else "",
                "category": FAILURES[task % 5] if failed else None,
                "evidence": [
                    {
                        "kind": "call",
                        "summary": f"tool call {i} lookup_order(order_id='A{rng.randint(1000, 9999)}')",
                        "call_index": i,
                        "tool": "lookup_order",
                        "arguments": {"order_id": f"A{rng.randint(1000, 9999)}", "include": ["items"]},
                        "quote": None,
                        "message_index": i * 2,
                        "data": {"ms": rng.randint(1, 400)},
                    }
                ],
                "trust": "not_required",
                "trust_reason": "",
                "score": None,
                "weight": 1.0,
            }
        )
    for c in range(4):
        undecided = verdict in ("error", "insufficient_information") and c == 0
        checks.append(
            {
                "check_id": f"criterion:c{c}",
                "layer": "rubric",
                "verdict": verdict if undecided else "pass",
                "gate": True,
                "reason": "the judge could not decide" if undecided else "",
                "category": None,
                "evidence": [
                    {
                        "kind": "quote",
                        "summary": "the agent said",
                        "call_index": None,
                        "tool": None,
                        "arguments": None,
                        "quote": "I have refunded the order and emailed the customer a confirmation. " * 2,
                        "message_index": 5,
                        "data": None,
                    },
                    {
                        "kind": "note",
                        "summary": "judge gpt-4o-mini",
                        "call_index": None,
                        "tool": None,
                        "arguments": None,
                        "quote": None,
                        "message_index": None,
                        "data": {
                            "fingerprint": "ab" * 16,
                            "model": "gpt-4o-mini",
                            "cost": {
                                "prompt_tokens": rng.randint(800, 1500),
                                "completion_tokens": rng.randint(50, 200),
                                "usd": round(rng.random() / 1000, 7),
                                "replayed": 0,
                            },
                        },
                    },
                ],
                "trust": "trusted",
                "trust_reason": "calibration record r1 trusts this fingerprint",
                "score": round(rng.random(), 3),
                "weight": 1.0,
            }
        )
    return {
        "schema_version": 1,
        "run_id": "run-2026-12-01",
        "case": {
            "id": f"task-{task:05d}",
            "version": 1,
            "slice": ("real_failures", "policy_edge", "regression")[task % 3],
            "category": ("normal", "edge", "regression")[task % 3],
            "severity": ("critical", "high", "medium", "low")[task % 4],
            "policy_refs": ["refunds@3"],
        },
        "trial": trial,
        "verdict": verdict,
        "reason": "",
        "quality": round(rng.random(), 3),
        "checks": checks,
        "failure_categories": [FAILURES[task % 5]] if verdict == "fail" else [],
        "run": {
            "agent_model": "agent-x",
            "prompt_hash": "p" * 64,
            "tool_definitions_hash": "t" * 64,
            "app_version": "1.4.2",
            "fixture_version": "f1",
            "config": {"temperature": 0.2},
        },
        "judge_fingerprint": {"hex": "ab" * 16, "model": "gpt-4o-mini"},
        "grader": None,
        "untrusted_verdicts": 0,
        "untrusted_policy": "withhold",
        "grading": {"judge_model": "gpt-4o-mini", "concurrency": 8},
        "judgekit_version": version,
        "source": {"file": "transcripts.jsonl", "line": task * TRIALS + trial, "sha256": "0" * 64},
        "cost_usd": 0.0021,
        "cost_unknown_reason": None,
        "duration_s": 1.25,
        "provenance": {
            "method": "judgekit grade",
            "seed": None,
            "judgekit_version": version,
            "case_set_revision": "3f9c2a1",
            "case_set_dirty": False,
            "case_set_revision_note": None,
            "dependencies": {"litellm": "1.50.0", "pydantic": "2.9.2"},
            "python": "3.12.3",
            "thresholds": {},
        },
    }


def generate(path: Path, lines: int, seed: int = 7) -> None:
    """Write ``lines`` result lines (tasks of 40 trials each)."""
    from judgekit import __version__

    rng = random.Random(seed)
    with path.open("w") as handle:
        p = 0.0
        for n in range(lines):
            task, trial = divmod(n, TRIALS)
            if trial == 0:
                p = rng.random() ** 0.5
            handle.write(
                json.dumps(_line(rng, task, trial + 1, p, __version__), separators=(",", ":")) + "\n"
            )


# --------------------------------------------------------------------------- the methods (in a subprocess)


def _report(report: Any) -> dict[str, Any]:
    from judgekit.reports.run_json import render_run_json

    return {"json": render_run_json(report), "pass1": report.suites[0].pass_hat[0].value}


def _comparable(text: str) -> str:
    """The report's JSON text without ``cached_tokens`` (a cost column today's code may not have yet)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "cached_tokens"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return json.dumps(strip(json.loads(text))) if text else ""


def _in_memory(path: Path) -> dict[str, Any]:
    from judgekit.reports.run_model import report_run
    from judgekit.results import read_results

    return _report(report_run(read_results(path), undecided="fail")[0])


def _streamed(path: Path) -> dict[str, Any]:
    try:
        from judgekit.reports.run_model import report_run
    except ImportError:  # a --before-src from before the one report engine: its streamed report
        report_run = importlib.import_module("judgekit.reports.run_stream").stream_run_report

    report, _ = report_run(path, undecided="fail")
    return _report(report)


def _loop(path: Path) -> dict[str, Any]:
    """One pass, counting once per task; pass^1 of the capability suite from the counts."""
    import math

    decode = msgspec.json.Decoder(_LoopLine).decode
    tasks: dict[str, list[int]] = {}
    regression: set[str] = set()
    with path.open("rb") as handle:
        for raw in handle:
            line = decode(raw)
            counts = tasks.get(line.case.id)
            if counts is None:
                counts = tasks[line.case.id] = [0, 0]
                if line.case.category == "regression" or line.case.slice in ("regression", "regressions"):
                    regression.add(line.case.id)
            counts[0] += 1
            counts[1] += line.verdict == "pass"
    capability = [c for cid, c in tasks.items() if cid not in regression]
    k_max = max(n for n, _ in capability)
    curve = [
        sum(math.comb(c, k) / math.comb(n, k) for n, c in capability if n >= k)
        / sum(1 for n, _ in capability if n >= k)
        for k in range(1, k_max + 1)
    ]
    return {"json": "", "pass1": curve[0]}


class _LoopCase(msgspec.Struct):
    id: str
    slice: str | None = None
    category: str | None = None


class _LoopLine(msgspec.Struct):
    """The two fields the loop reads; msgspec skips the rest of the line without building it."""

    case: _LoopCase
    verdict: str


def _decode(path: Path) -> dict[str, Any]:
    """Every line through the typed mirror's decoder, nothing else (the floor of full validation)."""
    from judgekit.results import _FAST_DECODE

    lines = 0
    with path.open("rb") as handle:
        for raw in handle:
            _FAST_DECODE(raw)
            lines += 1
    return {"json": "", "pass1": None, "lines": lines}


def _decode_count(path: Path) -> dict[str, Any]:
    """The typed decode and the report's one accumulation, with no hostile-input test and no proof."""
    from judgekit.reports.retirement import DEFAULT_MIN_TRIALS, DEFAULT_RELEASES, RetirementTallies
    from judgekit.reports.run_model import DEFAULT_REGRESSION_SLICES, RunAccumulator
    from judgekit.results import _FAST_DECODE, paused_gc

    acc = RunAccumulator(
        known_cases=None, drop=frozenset(), calibration_records=(), retirement=RetirementTallies()
    )
    with paused_gc(), path.open("rb") as handle:
        for raw in handle:
            acc.add(_FAST_DECODE(raw))
        report = acc.report(
            file=path.name,
            path=path,
            problems_in=(),
            policy="fail",
            k=None,
            retire_after=DEFAULT_RELEASES,
            retire_min_trials=DEFAULT_MIN_TRIALS,
            regression_slices=DEFAULT_REGRESSION_SLICES,
            splits={},
        )
    return _report(report)


METHODS = {
    "before": _streamed,
    "after": _streamed,
    "in-memory": _in_memory,
    "loop": _loop,
    "decode": _decode,
    "decode+count": _decode_count,
}


def _child(method: str, path: Path, out: Path) -> None:
    if method == "before":
        sys.path.insert(0, os.environ["BENCH_BEFORE_SRC"])
    t_cpu, t_wall = time.process_time(), time.perf_counter()
    result = METHODS[method](path)
    result["cpu_s"] = time.process_time() - t_cpu
    result["wall_s"] = time.perf_counter() - t_wall
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # after the measurement: the report text's hash, the cached_tokens column left out
    result["sha256"] = hashlib.sha256(_comparable(result.pop("json")).encode()).hexdigest()
    out.write_text(json.dumps(result))


def run(method: str, path: Path, tmp: Path, before_src: str) -> dict[str, Any]:
    """Run one method on one file in a fresh interpreter; its figures, with the load average before."""
    out = tmp / f"{method}-{path.stem}.json"
    load = os.getloadavg()[0]
    subprocess.run(
        [sys.executable, __file__, "--child", method, str(path), str(out)],
        check=True,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "BENCH_BEFORE_SRC": before_src},
    )
    result: dict[str, Any] = json.loads(out.read_text())
    result["load"] = load
    return result


def _check_grade_shaped(path: Path, lines: int = 200) -> None:
    """Refuse to measure unless the first lines are byte for byte what ``judgekit grade`` writes."""
    from judgekit.results import ResultLine, dump_result_line

    with path.open("rb") as handle:
        for _, raw in zip(range(lines), handle, strict=False):
            if dump_result_line(ResultLine.model_validate_json(raw)) + "\n" != raw.decode():
                raise SystemExit("the generated lines are not what judgekit grade writes")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=400_000, help="Lines of the full file.")
    parser.add_argument(
        "--in-memory-lines", type=int, default=20_000, help="Lines of the small file (in-memory path too)."
    )
    parser.add_argument("--before-src", help="The src directory of the code to compare with (required).")
    parser.add_argument("--child", nargs=3, metavar=("METHOD", "PATH", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child[0], Path(args.child[1]), Path(args.child[2]))
        return
    if not args.before_src:
        parser.error("--before-src is required: the src directory of today's code (git archive HEAD src)")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        small, full = tmp / "small.jsonl", tmp / "full.jsonl"
        t0 = time.perf_counter()
        generate(small, args.in_memory_lines)
        generate(full, args.lines)
        _check_grade_shaped(full)
        size = full.stat().st_size
        print(
            f"generated {args.lines:,} lines ({size / 1e9:.2f} GB, {size / args.lines / 1e3:.1f} KB a line) "
            f"and {args.in_memory_lines:,} lines in {time.perf_counter() - t0:.0f} s; {os.cpu_count()} CPUs"
        )
        rows: list[tuple[str, int, dict[str, Any]]] = []
        for path, n, methods in (
            (small, args.in_memory_lines, ("before", "after", "in-memory", "decode+count", "decode", "loop")),
            (full, args.lines, ("before", "after", "decode+count", "decode", "loop")),
        ):
            results = {m: run(m, path, tmp, args.before_src) for m in methods}
            if len({r["sha256"] for m, r in results.items() if m not in ("loop", "decode")}) != 1:
                raise SystemExit(f"the reports differ on {n:,} lines: " + str(results))
            if results["decode"]["lines"] != n:
                raise SystemExit(f"decode read {results['decode']['lines']:,} lines of {n:,}")
            for result in results.values():
                if result["pass1"] is not None and abs(result["pass1"] - results["before"]["pass1"]) > 1e-12:
                    raise SystemExit("the loop's pass^1 disagrees with the report's")
            rows.extend((m, n, r) for m, r in results.items())
        print(
            "before, after, in-memory and decode+count give the same report JSON; the loop's pass^1 agrees\n"
        )
        print("| method | lines | CPU s | wall s | peak RSS | us/line (CPU) | load avg (1 min, before) |")
        print("|---|---|---|---|---|---|---|")
        for method, n, r in rows:
            print(
                f"| {method} | {n:,} | {r['cpu_s']:.1f} | {r['wall_s']:.1f} | {r['peak_rss_mb']:,.0f} MB "
                f"| {r['cpu_s'] / n * 1e6:.0f} | {r['load']:.2f} |"
            )


if __name__ == "__main__":
    main()
