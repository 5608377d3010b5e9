"""Benchmark the runner's own overhead per trial, with the judge layer replayed from a cassette.

The trials are the bundled AirDesk example's recorded runs (``examples/airdesk/runs/agent-v1.jsonl``,
104 trials), copied ``--copies`` times with fresh trial numbers. Every trial is graded on every
deterministic layer plus the ``honest-reporting`` rubric judge.

1. **Record**: one run in cassette ``record`` mode against the loopback OpenAI-compatible server
   (``tests/judges/server.py``, in a subprocess, no added latency). Not timed; it fills the cassette.
2. **Runner, replayed**: :func:`judgekit.runner.run_trials` with the judge in ``replay`` mode (zero HTTP
   calls: the server's counter is checked), at concurrency 8: planning excluded, everything else included
   (queue, concurrent deterministic + judge layers, result lines built, redacted, serialised and appended
   one ``write`` each).
3. **Baseline, same work without the runner**: the same grader called trial after trial in a plain loop
   (``await grader.grade(case, transcript)``), nothing written.
4. The same pair with the deterministic layers only.

Overhead per trial = (runner - baseline) / trials, in CPU time of the benchmark process (all its threads;
``time.process_time``), which a busy shared machine disturbs far less than wall time.
Run: ``.venv/bin/python bench/bench_runner.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from judge_server import server_calls, start_server

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-real-key-000000000000")

AIRDESK = ROOT / "examples" / "airdesk"
MODEL = "openai/bench-judge"


def replicate(dest: Path, copies: int) -> int:
    src = AIRDESK / "runs" / "agent-v1.jsonl"
    rows = [json.loads(line) for line in src.read_text().splitlines() if line.strip()]
    most: dict[str, int] = {}
    for row in rows:
        most[row["case_id"]] = max(most.get(row["case_id"], 0), row["trial"])
    out = []
    for copy in range(copies):
        for row in rows:
            data = json.loads(json.dumps(row))
            for key in ("initial_state", "final_state"):
                if isinstance(data.get(key), str):
                    data[key] = str((src.parent / data[key]).resolve())
            data["trial"] = row["trial"] + copy * most[row["case_id"]]
            out.append(json.dumps(data))
    dest.write_text("\n".join(out) + "\n")
    return len(out)


def make_grader(judge: str | None, cassette: Path, base: str | None, case_root: Path) -> Any:
    from judgekit.judge_setup import JudgeConfig, build_rubric_grader
    from judgekit.runner import LayeredTrialGrader

    rubric = None
    if judge is not None:
        rubric = build_rubric_grader(
            JudgeConfig(
                model=MODEL,
                rubric="honest-reporting",
                cassette=cassette,
                mode=judge,
                api_base=base,
                max_cost=None,
                temperature=None,
                samples=None,
                concurrency=8,
            )
        )
    return LayeredTrialGrader(case_root, rubric)


async def runner_pass(plan: Any, grader: Any, out: Path) -> float:
    from judgekit.runner import prepare_output, run_trials

    if out.exists():
        out.unlink()
    state = prepare_output(out, plan, resume=False, judge_fingerprint=grader.judge_fingerprint)
    t0 = time.process_time()
    await run_trials(plan, grader, out=out, state=state, concurrency=8)
    return time.process_time() - t0


async def baseline_pass(plan: Any, grader: Any) -> float:
    t0 = time.process_time()
    for trial in plan.trials:
        await grader.grade(trial.case, trial.transcript)
    return time.process_time() - t0


def measure(plan: Any, grader: Any, out: Path, repeats: int) -> tuple[float, float]:
    """Best of ``repeats`` for each, interleaved, after one untimed warm-up (states cached, imports done)."""
    asyncio.run(baseline_pass(plan, grader))
    runner, base = float("inf"), float("inf")
    for _ in range(repeats):
        runner = min(runner, asyncio.run(runner_pass(plan, grader, out)))
        base = min(base, asyncio.run(baseline_pass(plan, grader)))
    return runner, base


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    from judgekit.caseset import load_case_set
    from judgekit.runner import plan_trials

    case_set = load_case_set([AIRDESK])
    case_set.raise_if_invalid()
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        transcripts = tmpdir / "t.jsonl"
        n = replicate(transcripts, args.copies)
        plan = plan_trials(case_set, [transcripts])
        cassette = tmpdir / "cassette.jsonl"
        proc, base = start_server()
        try:
            recorder = make_grader("record", cassette, base, case_set.root)
            recorder.set_sources({t.key: Path(t.source.file).parent for t in plan.trials})
            t0 = time.perf_counter()
            asyncio.run(runner_pass(plan, recorder, tmpdir / "recorded.jsonl"))
            recorder.close()
            recorded_calls = server_calls(base)
            print(
                f"recorded {recorded_calls:,} judge calls for {n:,} trials in "
                f"{time.perf_counter() - t0:.1f}s ({cassette.stat().st_size / 1e6:.1f} MB cassette)"
            )
            replayer = make_grader("replay", cassette, None, case_set.root)
            replayer.set_sources({t.key: Path(t.source.file).parent for t in plan.trials})
            judged_runner, judged_base = measure(plan, replayer, tmpdir / "replayed.jsonl", args.repeats)
            replayer.close()
            if server_calls(base) != recorded_calls:
                raise SystemExit("the replayed runs called the server")
        finally:
            proc.kill()
            proc.wait()
        det = make_grader(None, cassette, None, case_set.root)
        det.set_sources({t.key: Path(t.source.file).parent for t in plan.trials})
        det_runner, det_base = measure(plan, det, tmpdir / "det.jsonl", args.repeats)
        det.close()
    print("replay made 0 HTTP calls (server counter unchanged)")
    print()
    print("| layers (CPU time) | runner (concurrency 8) | plain loop | overhead per trial | ratio |")
    print("|---|---|---|---|---|")
    for label, runner, base_t in (
        ("deterministic + judge (replayed)", judged_runner, judged_base),
        ("deterministic only", det_runner, det_base),
    ):
        print(
            f"| {label} | {runner * 1e3 / n:.2f} ms/trial ({n / runner:,.0f} trials/s) | "
            f"{base_t * 1e3 / n:.2f} ms/trial | {(runner - base_t) * 1e6 / n:+.0f} µs | "
            f"{runner / base_t:.2f}x |"
        )


if __name__ == "__main__":
    main()
