"""``CostTally``: the judge cost per run, case and criterion, against the sums written out by hand.

The tally keeps integer counts per (case, criterion) cell and exact dollar sums; the reference below
adds every column of every note to every row it belongs to, and the dollars of a row are the correctly
rounded sum of its notes' (``math.fsum``): the totals must be equal, the dollars to the last bit, and
equal again when the lines are split into two tallies and merged, wherever the split.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from judgekit.reports.run_model import CostTally

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
        out.append(SimpleNamespace(check_id=check_id, evidence=evidence))
    return SimpleNamespace(case=SimpleNamespace(id=case_id), checks=out)


def _reference(lines: list[Any]) -> dict[tuple[str, str], list[float]]:
    rows: dict[tuple[str, str], list[float]] = {}
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
                float(usd) if priced else 0.0,
                0 if priced else 1,
                cost["replayed"],
                cost.get("cached_tokens", 0),
            ]
            for key in (("run", "run"), ("case", line.case.id), ("criterion", check.check_id)):
                row = rows.setdefault(key, [0, 0, 0, [], 0, 0, 0])
                for i, v in enumerate(values):
                    if i == 3:
                        row[3].append(v)
                    else:
                        row[i] += v
    for row in rows.values():
        row[3] = math.fsum(row[3])
    return rows


@given(st.lists(_LINE, max_size=30), st.integers(0, 30))
def test_the_tally_equals_every_note_added_to_every_row_exactly(raw: list[Any], cut: int) -> None:
    lines = [_line(case_id, checks) for case_id, checks in raw]
    tally = CostTally()
    later = CostTally()
    for i, line in enumerate(lines):
        (tally if i < cut else later).add(line)
    tally.merge(later)  # two parts of a file merged: the same totals as one pass
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
        assert r.known_usd == row[3]  # the same float: the exactly rounded sum
        assert r.usd == (None if row[4] else row[3])
    assert [r.key for r in summary.cases] == sorted(r.key for r in summary.cases)
    reasons = [c.get("unknown_reason") for _, checks in raw for _, c in checks if c and c["usd"] is None]
    assert summary.unknown_reason == next((r for r in reasons if r is not None), None)
