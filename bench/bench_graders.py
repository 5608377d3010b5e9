"""Benchmark: every deterministic grader layer over generated transcripts, against a state-only baseline.

Run: ``.venv/bin/python bench/bench_graders.py`` (``--quick`` for a short run).

The main run grades 10,000 generated transcripts. Each has 20 tool calls with JSON arguments and
results, and a final state of 5 tables with 1,000 rows in all. The grading runs every deterministic layer:

- the end state (expected changes, with collateral-change detection);
- four forbidden rules (CEL conditions, one of them over changed state rows);
- a superset route of three expected calls solved as an assignment;
- three must-mention and must-not-mention texts;
- ``combine``.

The baseline, in the same run and on the same transcripts, is what a state-only grader would do: compare
the canonical JSON of the final state with the canonical JSON of the expected state.

Both arms start from loaded snapshots. Each final state is a separate object tree, as if read from its own
file, so equality cannot short-cut on shared rows. Reading state files is excluded from both arms and
timed separately. Everything runs in one process on one core, so transcripts per second is per core.

A second table shows how the cost grows with the state's size (100, 1,000 and 10,000 rows).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import time
from typing import Any

from judgekit.cases import Case
from judgekit.graders.layered import combine, deterministic_checks
from judgekit.state import Snapshot, canonical_json, snapshot_from_data
from judgekit.state.provider import StateProvider
from judgekit.transcript import Transcript
from judgekit.verdict import Verdict

TABLES = ("customers", "accounts", "payments", "refunds", "tickets")
TOOLS = ("lookup_customer", "list_payments", "issue_refund", "create_ticket", "send_message", "search_kb")


def make_initial(rows: int, rng: random.Random) -> dict[str, dict[str, Any]]:
    per_table = max(1, rows // len(TABLES))
    data: dict[str, dict[str, Any]] = {}
    for table in TABLES:
        data[table] = {
            f"{table[:3].upper()}-{i:05d}": {
                "id": f"{table[:3].upper()}-{i:05d}",
                "customer_id": f"C-{rng.randrange(per_table):05d}",
                "amount": round(rng.uniform(1, 900), 2),
                "status": rng.choice(["open", "settled", "pending"]),
                "updated_at": "2026-11-01T00:00:00Z",
                "meta": {"channel": rng.choice(["web", "phone"]), "tags": ["a", "b"]},
            }
            for i in range(per_table)
        }
    return data


def make_case() -> Case:
    return Case.model_validate(
        {
            "id": "bench-refund",
            "user": {"opening": "I was charged twice; refund the duplicate."},
            "initial_state": "initial.json",
            "tools": list(TOOLS),
            "identity": {"customer_id": "C-00001"},
            "expected_state": {
                "changes": {
                    "refunds": {
                        "added": [{"payment_id": "PAY-00003", "amount": {"approx": 412.18, "tol": 0.005}}]
                    },
                    "payments": {"modified": {"PAY-00003": {"status": "refunded"}}},
                },
                "ignore_fields": ["updated_at"],
            },
            "forbidden": [
                {"tool": "issue_refund", "when": "amount > 412.18"},
                {"tool": "issue_refund", "when": "calls > 1"},
                {"tool": "issue_refund", "when": "!('list_payments' in before) || total.amount > 412.18"},
                {"state_when": "table == 'accounts' && row.customer_id != identity.customer_id"},
            ],
            "expected": {
                "route": [
                    {"tool": "lookup_customer", "args": {"customer_id": "C-00001"}},
                    {"tool": "list_payments", "args": {"customer_id": "C-00001"}, "max_calls": 5},
                    {
                        "tool": "issue_refund",
                        "args": {"payment_id": "PAY-00003", "amount": 412.18},
                        "requires_confirmation": True,
                    },
                ],
                "route_match": "superset",
                "must_mention": ["412.18", {"pattern": r"5\s*-\s*7 business days"}],
                "must_not_mention": ["same day"],
            },
        }
    )


def make_final(initial: dict[str, dict[str, Any]], variant: int) -> dict[str, Any]:
    """The agent's final state: a fresh object tree, as if loaded from its own file."""
    data: dict[str, Any] = json.loads(json.dumps(initial))
    data["refunds"]["REF-NEW"] = {
        "id": "REF-NEW",
        "payment_id": "PAY-00003",
        "amount": 412.18,
        "status": "open",
    }
    data["payments"]["PAY-00003"]["status"] = "refunded"
    if variant % 4 == 3:  # a timestamp that legitimately churns (ignore_fields)
        data["payments"]["PAY-00003"]["updated_at"] = f"2026-11-29T10:{variant % 60:02d}:00Z"
    if variant % 4 == 1:  # collateral: another customer's account touched
        first = next(iter(data["accounts"]))
        data["accounts"][first]["status"] = "closed"
    if variant % 4 == 2:  # over-refund
        data["refunds"]["REF-NEW"]["amount"] = 500.0
    return data


def make_transcript(index: int, variant: int, n_calls: int, rng: random.Random) -> Transcript:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "I was charged twice; refund the duplicate."}
    ]
    plan: list[tuple[str, dict[str, Any]]] = [
        ("lookup_customer", {"customer_id": "C-00001"}),
        ("list_payments", {"customer_id": "C-00001", "since": "2026-11-01"}),
    ]
    while len(plan) < n_calls - 1:
        tool = rng.choice(("search_kb", "list_payments", "send_message", "create_ticket"))
        plan.append(
            (tool, {"customer_id": "C-00001", "query": f"q{rng.randrange(1000)}", "page": rng.randrange(5)})
        )
    amount = 500.0 if variant % 4 == 2 else 412.18
    plan.append(("issue_refund", {"payment_id": "PAY-00003", "amount": amount, "reason": "duplicate"}))
    for i, (tool, args) in enumerate(plan):
        if tool == "issue_refund":
            messages.append({"role": "assistant", "content": f"I can refund {amount} to your card. Shall I?"})
            messages.append({"role": "user", "content": "Yes, go ahead."})
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": tool, "arguments": json.dumps(args)},
                    }
                ],
            }
        )
        messages.append(
            {"role": "tool", "tool_call_id": f"c{i}", "content": json.dumps({"ok": True, "n": i})}
        )
    messages.append(
        {
            "role": "assistant",
            "content": f"Done: {amount} is on its way back to your card within 5-7 business days.",
        }
    )
    return Transcript.model_validate(
        {
            "case_id": "bench-refund",
            "trial": 1 + index % 4,
            "messages": messages,
            "final_state": f"final-{variant}.json",
        }
    )


def share_rows(initial: Snapshot, final: Snapshot) -> Snapshot:
    """The same final state, re-using the initial state's row objects wherever a row is unchanged.

    This is what a simulator that applies the agent's writes to a copy-on-write database produces (and
    how the tau-bench replay in tests/graders/test_state.py builds final states).
    """
    tables: dict[str, dict[str, Any]] = {}
    for name, rows in final.tables.items():
        before = initial.tables.get(name, {})
        tables[name] = {k: (before[k] if k in before and before[k] == v else v) for k, v in rows.items()}
    return Snapshot(tables, final.source)


def build(
    rows: int, n_transcripts: int, n_finals: int, *, shared: bool, seed: int = 7
) -> tuple[Case, list[Transcript], StateProvider, dict[str, Snapshot]]:
    rng = random.Random(seed)
    initial = make_initial(rows, rng)
    initial_snapshot = snapshot_from_data(initial)
    finals = {f"final-{v}.json": snapshot_from_data(make_final(initial, v)) for v in range(n_finals)}
    if shared:
        finals = {k: share_rows(initial_snapshot, v) for k, v in finals.items()}
    snapshots = {"initial.json": initial_snapshot, **finals}
    transcripts = [make_transcript(i, i % n_finals, 20, rng) for i in range(n_transcripts)]
    return make_case(), transcripts, StateProvider(snapshots=snapshots), finals


def expected_state(case: Case, initial: Snapshot) -> Snapshot:
    """The state the case expects, materialised for the baseline's equality check."""
    data = initial.to_data()
    data["refunds"]["REF-NEW"] = {
        "id": "REF-NEW",
        "payment_id": "PAY-00003",
        "amount": 412.18,
        "status": "open",
    }
    data["payments"]["PAY-00003"]["status"] = "refunded"
    return snapshot_from_data(data)


def run_layers(
    case: Case, transcripts: list[Transcript], states: StateProvider
) -> tuple[float, dict[str, int]]:
    """CPU seconds of this process (one core) to grade every transcript on every deterministic layer."""
    verdicts: dict[str, int] = {}
    start = time.process_time()
    for t in transcripts:
        grade = combine(case, t.trial, deterministic_checks(case, t, states=states))
        verdicts[grade.verdict.value] = verdicts.get(grade.verdict.value, 0) + 1
    return time.process_time() - start, verdicts


def run_baseline(
    transcripts: list[Transcript], finals: dict[str, Snapshot], expected: Snapshot
) -> tuple[float, int]:
    """CPU seconds to compare each final state's canonical JSON with the expected state's."""
    start = time.process_time()
    target = canonical_json(expected.tables)
    equal = 0
    for t in transcripts:
        final = finals[t.final_state.path or ""]  # type: ignore[union-attr]
        equal += canonical_json(final.tables) == target
    return time.process_time() - start, equal


def measure(
    rows: int, n: int, n_finals: int, *, shared: bool, baseline_n: int | None = None
) -> dict[str, Any]:
    case, transcripts, states, finals = build(rows, n, n_finals, shared=shared)
    initial = states.load("initial.json", None, "initial")
    assert isinstance(initial, Snapshot)
    expected = expected_state(case, initial)
    # Warm-up (compiles the case's rules once, as a real run does).
    run_layers(case, transcripts[:20], states)
    layers_s, verdicts = run_layers(case, transcripts, states)
    sample = transcripts[: baseline_n or n]
    base_s, equal = run_baseline(sample, finals, expected)
    raw = json.dumps(next(iter(finals.values())).tables)
    start = time.perf_counter()
    for _ in range(5):
        snapshot_from_data(json.loads(raw))
    load_ms = (time.perf_counter() - start) / 5 * 1000
    return {
        "rows": sum(len(r) for r in initial.tables.values()),
        "transcripts": n,
        "layers_per_s": n / layers_s,
        "baseline_per_s": len(sample) / base_s,
        "baseline_n": len(sample),
        "ratio": (n / layers_s) / (len(sample) / base_s),
        "verdicts": verdicts,
        "baseline_equal": equal,
        "load_ms": load_ms,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="1,000 transcripts instead of 10,000")
    args = parser.parse_args()
    n = 1_000 if args.quick else 10_000
    base_n = 200 if args.quick else 1_000
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} logical cores")
    print("one core used")
    print("rates are transcripts per CPU-second of this process (time.process_time), i.e. per core")
    for shared, label in (
        (True, "final states share unchanged rows with the initial state (copy-on-write)"),
        (False, "every final state a separate object tree (as if each were read from its own file)"),
    ):
        r = measure(1_000, n, 40, shared=shared, baseline_n=base_n)
        print(
            f"\n{n:,} transcripts x 20 calls, 5-table state of {r['rows']:,} rows; {label}\n"
            f"  all deterministic layers : {r['layers_per_s']:>9,.0f} transcripts/s/core\n"
            f"  baseline (canonical JSON): {r['baseline_per_s']:>9,.1f} transcripts/s/core "
            f"(timed on the first {r['baseline_n']:,})\n"
            f"  ratio layers/baseline    : {r['ratio']:.1f}x\n"
            f"  verdicts: {r['verdicts']}; "
            f"baseline found {r['baseline_equal']:,} of {r['baseline_n']:,} equal\n"
            f"  (in neither arm) reading one final state from JSON text: {r['load_ms']:.1f} ms"
        )
        assert r["verdicts"].get(Verdict.PASS.value, 0) > 0
        assert r["verdicts"].get(Verdict.FAIL.value, 0) > 0
    print("\nscaling with state size (2,000 transcripts each; baseline on 200):")
    print(f"  {'rows':>7} {'sharing':>8} {'layers/s':>10} {'baseline/s':>11} {'ratio':>8} {'load ms':>8}")
    for rows in (100, 1_000, 10_000):
        for shared in (True, False):
            r = measure(
                rows, 300 if args.quick else 2_000, 20, shared=shared, baseline_n=50 if args.quick else 200
            )
            print(
                f"  {r['rows']:>7,} {'shared' if shared else 'separate':>8} {r['layers_per_s']:>10,.0f} "
                f"{r['baseline_per_s']:>11,.1f} {r['ratio']:>7.1f}x {r['load_ms']:>8.1f}"
            )


if __name__ == "__main__":
    main()
