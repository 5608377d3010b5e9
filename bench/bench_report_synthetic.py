"""The synthetic result lines ``bench/bench_report.py --variant synthetic`` measures (a secondary variant).

Hand-written lines shaped like ``judgekit grade``'s: 14 checks per trial (10 deterministic rule checks
with call evidence, 4 judged criteria with a quote and the judge's note with its fingerprint and cost),
the run record, the judge fingerprint, the grading configuration, the transcript source, the cost: about
8 KB per line; a pass probability per task, about 1 % error and 0.5 % insufficient-information trials.
The main benchmark replicates the bundled example's real lines instead.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

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
