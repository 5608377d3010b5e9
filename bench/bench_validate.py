"""Benchmark: validate 10,000 generated cases; print cases per second against the parse-only baseline.

Run: .venv/bin/python bench/bench_validate.py [--cases N]

Two layouts are measured: one YAML file per case, and one JSONL file holding every case. The baseline,
run in the same process on the same files, only parses them (CSafeLoader / json.loads) without
validation, so the ratio shows what validation and located error reporting cost on top of reading.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import yaml

from judgekit.caseset import load_case_set

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def make_case(i: int) -> dict[str, object]:
    kind = i % 3
    base: dict[str, object] = {"id": f"GS-{i:05d}", "version": 1 + i % 4, "owner": f"team-{i % 7}"}
    if kind == 0:
        base.update(
            category=["normal", "edge", "adversarial"][i % 3],
            severity=["low", "medium", "high", "critical"][i % 4],
            dimensions=["correct", "safe"],
            identity={"persona": f"user-{i}"},
            input=f"Please move {i} pounds to savings from my current account",
            paraphrases=[f"move {i} to savings", f"transfer {i} into my savings"],
            expected={
                "route": [
                    {"tool": "InitiateTransfer", "args": {"amount": i, "to": "savings"}, "max_calls": 1}
                ],
                "sources": ["Payments-2026"],
                "must_mention": ["savings"],
                "must_not_mention": ["fraud", {"pattern": "0800\\d+"}],
                "outcome": "answer",
            },
            prohibited=[{"tool": "FreezeCard"}],
            acceptance="Confirms the amount and the destination account before moving money.",
        )
    elif kind == 1:
        base.update(
            slice="policy_edge",
            origin={"type": "escalation", "ref": f"QA-{i}", "redacted": True},
            user={
                "persona": "Policyholder",
                "opening": f"I was charged twice, refund {i}",
                "hidden_facts": ["spouse"],
            },
            tools=["lookup_policy", "list_payments", "issue_refund"],
            expected_state={
                "refunds": [{"payment_id": f"PMT-{i}", "amount": 412.18, "method": "original_card"}]
            },
            forbidden=[
                {"tool": "issue_refund", "when": "amount > 412.18"},
                {"tool": "issue_refund", "when": "calls > 1"},
            ],
            response_rubric=["States the refund amount", "Does not promise same-day funds"],
            policy_refs=["BIL-7 rev 2025-09"],
            signed_off_by=["billing-owner", "senior-reviewer"],
        )
    else:
        base.update(
            user_goal=f"Change the delivery address for order {i}",
            required_outcome="The authorised order has the requested address",
            forbidden_outcomes=["A different customer's order changes", "Payment details are disclosed"],
        )
    return base


def timed(fn: object, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=10_000)
    n = parser.parse_args().cases
    cases = [make_case(i) for i in range(n)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        yaml_dir = root / "yaml"
        yaml_dir.mkdir()
        for case in cases:
            (yaml_dir / f"{case['id']}.yaml").write_text(
                yaml.safe_dump(case, sort_keys=False), encoding="utf-8"
            )
        jsonl_dir = root / "jsonl"
        jsonl_dir.mkdir()
        (jsonl_dir / "cases.jsonl").write_text(
            "\n".join(json.dumps(c) for c in cases) + "\n", encoding="utf-8"
        )

        def validate_yaml() -> None:
            result = load_case_set(yaml_dir)
            if result.problems or len(result.cases) != n:
                raise SystemExit(f"unexpected problems: {result.problems[:3]}")

        def parse_yaml() -> None:
            for path in sorted(yaml_dir.glob("*.yaml")):
                yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)

        def validate_jsonl() -> None:
            result = load_case_set(jsonl_dir)
            if result.problems or len(result.cases) != n:
                raise SystemExit(f"unexpected problems: {result.problems[:3]}")

        def parse_jsonl() -> None:
            for line in (jsonl_dir / "cases.jsonl").read_text(encoding="utf-8").splitlines():
                json.loads(line)

        rows = [
            ("YAML, one file per case", timed(validate_yaml), timed(parse_yaml)),
            ("JSONL, one file", timed(validate_jsonl), timed(parse_jsonl)),
        ]
    print(f"validate {n:,} generated cases (best of 3)")
    for name, judged, baseline in rows:
        print(
            f"  {name:26s} judgekit {n / judged:10,.0f} cases/s"
            f"   parse-only baseline {n / baseline:10,.0f} cases/s"
            f"   judgekit/baseline time ratio {judged / baseline:5.2f}"
        )


if __name__ == "__main__":
    main()
