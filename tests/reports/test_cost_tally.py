"""``CostTally``: the judge cost per run, case and criterion, against the sums written out by hand.

The tally keeps integer counts per (case, criterion) cell and the dollars exactly (integer counts of
2**-1074); the reference below adds every column of every note to every row it belongs to, and the dollars
with :func:`math.fsum` (the exactly rounded sum): the totals must be equal, the dollars to the last bit.
Tallies of the parts of a file, added field by field, give the tally of the whole, whatever the split.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from judgekit.reports.run_model import CostTally
from judgekit.verdict import Verdict

_COST = st.fixed_dictionaries(
    {
        "prompt_tokens": st.integers(0, 10**6),
        "completion_tokens": st.integers(0, 10**5),
        "usd": st.one_of(st.none(), st.floats(0, 1, allow_nan=False), st.integers(0, 3)),
        "replayed": st.integers(0, 1),
    },
    optional={
        "cached_tokens": st.integers(0, 10**5),
        "unknown_reason": st.sampled_from(["no price for judge-x", "not priced"]),
    },
)
_CHECK = st.tuples(st.sampled_from(["criterion:a", "criterion:b", "rule:r"]), st.one_of(st.none(), _COST))
_LINE = st.tuples(st.sampled_from(["case-1", "case-2", "case-3"]), st.lists(_CHECK, max_size=5))


def _line(case_id: str, checks: list[tuple[str, dict[str, Any] | None]]) -> Any:
    """A result line as the tally reads it: a case id, checks whose evidence may hold a judge note."""
    out = []
    for check_id, cost in checks:
        evidence = [SimpleNamespace(kind="quote", data=None)]
        if cost is not None:
            evidence.append(SimpleNamespace(kind="note", data={"fingerprint": "ab" * 8, "cost": cost}))
        out.append(
            SimpleNamespace(check_id=check_id, layer="rubric", verdict=Verdict.PASS, evidence=evidence)
        )
    return SimpleNamespace(case=SimpleNamespace(id=case_id), checks=out)


def _reference(lines: list[Any]) -> dict[tuple[str, str], list[Any]]:
    rows: dict[tuple[str, str], list[Any]] = {}
    for line in lines:
        for check in line.checks:
            notes = [e.data["cost"] for e in check.evidence if e.kind == "note"]
            if not notes:
                continue
            cost = notes[0]
            usd = cost["usd"]
            priced = usd is not None
            values = [
                1,
                cost["prompt_tokens"],
                cost["completion_tokens"],
                [float(usd)] if priced else [],
                0 if priced else 1,
                cost["replayed"],
                cost.get("cached_tokens", 0),
            ]
            for key in (("run", "run"), ("case", line.case.id), ("criterion", check.check_id)):
                row = rows.setdefault(key, [0, 0, 0, [], 0, 0, 0])
                for i, v in enumerate(values):
                    row[i] += v
    return rows


@given(st.lists(_LINE, max_size=30))
def test_the_tally_equals_every_note_added_to_every_row_in_file_order(raw: list[Any]) -> None:
    lines = [_line(case_id, checks) for case_id, checks in raw]
    tally = CostTally()
    for line in lines:
        tally.add(line)
    summary = tally.summary()
    expected = _reference(lines)
    if not expected:
        assert summary is None
        return
    assert summary is not None
    got = {("run", "run"): summary.run}
    got.update({("case", r.key): r for r in summary.cases})
    got.update({("criterion", r.key): r for r in summary.criteria})
    assert set(got) == set(expected)
    for key, row in expected.items():
        r = got[key]
        assert (r.judgments, r.prompt_tokens, r.completion_tokens) == (row[0], row[1], row[2])
        assert (r.unpriced, r.replayed, r.cached_tokens) == (row[4], row[5], row[6])
        assert r.known_usd == math.fsum(row[3])  # the same float: the exactly rounded sum
        assert r.usd == (None if row[4] else math.fsum(row[3]))
    assert [r.key for r in summary.cases] == sorted(r.key for r in summary.cases)
    reasons = [c.get("unknown_reason") for _, checks in raw for _, c in checks if c and c["usd"] is None]
    assert summary.unknown_reason == next((r for r in reasons if r is not None), None)


@given(st.lists(_LINE, max_size=30), st.data())
def test_tallies_of_the_parts_added_field_by_field_are_the_tally_of_the_whole(raw: list[Any], data) -> None:
    lines = [_line(case_id, checks) for case_id, checks in raw]
    whole, parts = CostTally(), [CostTally(), CostTally()]
    for line in lines:
        whole.add(line)
        parts[data.draw(st.integers(0, 1))].add(line)
    merged = CostTally()
    for part in parts:  # everything but the first reason is a sum of integers
        for mine, theirs in ((merged.cases, part.cases), (merged.criteria, part.criteria)):
            for key, cell in theirs.items():
                mine[key] = [a + b for a, b in zip(mine.get(key, [0] * 7), cell, strict=True)]
    merged.reason = whole.reason
    assert merged.summary() == whole.summary()
