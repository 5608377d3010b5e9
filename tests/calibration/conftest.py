from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from judgekit.calibration.labels import LabelTable, parse_labels


def make_csv(rows: list[tuple[str, ...]], header: str = "item_id,criterion,rater,label") -> bytes:
    return ("\n".join([header, *(",".join(r) for r in rows)]) + "\n").encode()


def synthetic_rows(
    *,
    n_cases: int = 60,
    criteria: tuple[str, ...] = ("a", "b"),
    flips: dict[str, float] | None = None,
    fail_rate: float = 0.3,
    abstain: dict[str, float] | None = None,
    seed: int = 0,
) -> list[tuple[str, ...]]:
    """Experts and a judge labelling case × criterion items, each flipping the truth at its own rate."""
    flips = flips or {"e1": 0.03, "e2": 0.05, "e3": 0.05, "judge": 0.04}
    abstain = abstain or {}
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(n_cases):
        for crit in criteria:
            truth = "fail" if rng.random() < fail_rate else "pass"
            for rater, p in flips.items():
                label = truth if rng.random() >= p else ("pass" if truth == "fail" else "fail")
                if rng.random() < abstain.get(rater, 0.0):
                    label = "insufficient_information"
                rows.append((f"case{c:03d}", crit, rater, label))
    return rows


@pytest.fixture
def good_table() -> LabelTable:
    return parse_labels(make_csv(synthetic_rows()), source=Path("labels.csv"))


@pytest.fixture
def csv_bytes():
    return make_csv


@pytest.fixture
def synthetic():
    return synthetic_rows


@pytest.fixture(scope="session")
def reports():
    """A good judge and a bad judge on the same kind of labels: (table, report, gate) each."""
    from judgekit.calibration.agreement import compute_agreement
    from judgekit.calibration.gate import TrustPolicy, evaluate_gate

    out = {}
    for name, judge_flip in (("good", 0.02), ("bad", 0.3)):
        rows = synthetic_rows(
            n_cases=150, flips={"e1": 0.02, "e2": 0.03, "e3": 0.03, "judge": judge_flip}, seed=1
        )
        table = parse_labels(make_csv(rows), source=Path("labels.csv"))
        report = compute_agreement(table, judge="judge", experts=["e1", "e2", "e3"], resamples=200)
        out[name] = (table, report, evaluate_gate(report, TrustPolicy()))
    assert out["good"][2].trusted
    assert not out["bad"][2].trusted
    return out
