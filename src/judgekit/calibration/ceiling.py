"""The human ceiling as a test: is the judge within reach of the experts' agreement with each other?

The judge's agreement with the experts is read against the experts' agreement with each other (the
*human ceiling*): a kappa of 0.6 is poor when experts reach 0.9 with each other and fine when they reach
0.6. This module measures the difference

    D = mean over experts e of M(judge, e)  −  mean over expert pairs (e, e') of M(e, e')

for a pairwise metric ``M`` (Cohen's kappa, percent agreement or Gwet's AC1, each on the items both
raters labelled substantively, exactly as the report's pairwise figures), with a *paired* percentile
bootstrap interval over cases: every resample draws the same cases for the judge's pairs and the
experts' pairs, so the interval reflects the difference and not two independent uncertainties.
``D < 0`` means the judge agrees with the experts less than they agree with each other.

It also gives the base rate (the share of failing labels in the experts' consensus) that kappa is always
printed with: kappa depends on it, and the same agreement gives a lower kappa at an extreme base rate.

Everything is computed from the report's item labels, so it can be recomputed from a calibration record.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal, TypeAlias

from pydantic import Field

from judgekit import lazy
from judgekit.calibration.agreement import (
    ABSTAIN,
    MISSING,
    AgreementReport,
    BootstrapStat,
    ac1_from,
    bootstrap,
    confusion_rows,
    kappa_from_confusion,
    percentile_interval,
    rate,
    undefined,
)
from judgekit.stats import Estimate
from judgekit.verdict import FrozenModel

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy.module("numpy")  # imported at its first use: grading's start does not wait for it


__all__ = ["CeilingMetric", "HumanCeiling", "consensus_base_rate", "consensus_shares", "human_ceiling"]

CeilingMetric = Literal["percent_agreement", "cohen_kappa", "gwet_ac1"]
_Formula: TypeAlias = "Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]"


class HumanCeiling(FrozenModel):
    """The judge's agreement with the experts against the experts' agreement with each other.

    Attributes:
        metric: The pairwise metric compared.
        judge: Mean over experts of the judge-vs-expert value, with its bootstrap interval.
        experts: Mean over expert pairs of the expert-vs-expert value (the ceiling), with its interval.
        difference: ``judge - experts``; negative when the judge falls short of the ceiling. Its interval
            is a paired case bootstrap (the same resamples for both means).
        base_rate: Share of failing labels in the experts' consensus (Wilson interval); undefined when
            the scale declares no failing label.
        consensus_shares: Each scale value's share of the items with a substantive expert consensus, in
            scale order (sums to 1; empty when no item has one). Kappa's chance term comes from these, so
            on a scale without failing labels (pairwise A/B/tie, ordinal ratings) they are what kappa is
            read against.
    """

    metric: CeilingMetric
    judge: Estimate
    experts: Estimate
    difference: Estimate
    base_rate: Estimate
    consensus_shares: dict[str, float] = Field(default_factory=dict)


def consensus_shares(report: AgreementReport) -> dict[str, float]:
    """Each scale value's share of the items whose expert consensus is substantive (scale order)."""
    scale = report.scale
    decided = [r.consensus for r in report.items if r.consensus is not None and r.consensus != scale.abstain]
    if not decided:
        return {}
    return {v: sum(1 for c in decided if c == v) / len(decided) for v in scale.values}


def consensus_base_rate(report: AgreementReport) -> Estimate:
    """Share of items whose expert consensus is a failing label, among items with a substantive one."""
    scale = report.scale
    if not scale.positive:
        return undefined("the scale declares no failing labels")
    decided = [r.consensus for r in report.items if r.consensus is not None and r.consensus != scale.abstain]
    failing = sum(1 for c in decided if c in scale.positive)
    return rate(failing, len(decided), confidence=report.confidence, what="items with an expert consensus")


def _ac1_pair_rows(a: np.ndarray, b: np.ndarray, n_values: int) -> np.ndarray:
    """Per-item additive counts of Gwet's AC1 for two raters (as the report's multi-rater AC1 of a pair).

    Columns: agreement on items both labelled, items both labelled, items at least one labelled, then
    each value's share of the item's labels (items at least one labelled).
    """
    out = np.zeros((a.shape[0], 3 + n_values))
    for k in range(a.shape[0]):
        labels = [int(x) for x in (a[k], b[k]) if x >= 0]
        if not labels:
            continue
        out[k, 2] = 1.0
        for x in labels:
            out[k, 3 + x] += 1.0 / len(labels)
        if len(labels) == 2:
            out[k, 0] = 1.0 if labels[0] == labels[1] else 0.0
            out[k, 1] = 1.0
    return out


def _percent(s: np.ndarray, n_values: int) -> tuple[np.ndarray, np.ndarray]:
    conf = s.reshape(-1, n_values, n_values)
    n = conf.sum(axis=(1, 2))
    agree = np.trace(conf, axis1=1, axis2=2)
    defined = n > 0
    return np.where(defined, agree / np.where(defined, n, 1.0), 0.0), defined


def _pair_stat(
    metric: CeilingMetric, a: np.ndarray, b: np.ndarray, n_values: int
) -> tuple[np.ndarray, _Formula]:
    if metric == "gwet_ac1":
        return _ac1_pair_rows(a, b, n_values), ac1_from
    rows = confusion_rows(a, b, n_values)
    if metric == "cohen_kappa":
        return rows, lambda s: kappa_from_confusion(s.reshape(-1, n_values, n_values), "none")
    return rows, lambda s: _percent(s, n_values)


def _mean_formula(
    widths: Sequence[int], formulas: Sequence[_Formula], n_judge: int
) -> tuple[_Formula, _Formula, _Formula]:
    bounds = np.cumsum([0, *widths])

    def pieces(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        vals, defs = [], []
        for k, f in enumerate(formulas):
            v, d = f(s[:, bounds[k] : bounds[k + 1]])
            vals.append(v)
            defs.append(d)
        return np.stack(vals, axis=1), np.stack(defs, axis=1)

    def judge_mean(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        v, d = pieces(s)
        return v[:, :n_judge].mean(axis=1), np.asarray(d[:, :n_judge].all(axis=1))

    def expert_mean(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        v, d = pieces(s)
        return v[:, n_judge:].mean(axis=1), np.asarray(d[:, n_judge:].all(axis=1))

    def diff(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        v, d = pieces(s)
        return v[:, :n_judge].mean(axis=1) - v[:, n_judge:].mean(axis=1), np.asarray(d.all(axis=1))

    return judge_mean, expert_mean, diff


def human_ceiling(
    report: AgreementReport, *, metric: CeilingMetric = "cohen_kappa", resamples: int, seed: int
) -> HumanCeiling:
    """Compare the judge's agreement with the experts with theirs with each other, on the report's items.

    Args:
        report: The agreement report (its ``items`` carry every label; its ``confidence`` is used).
        metric: The pairwise metric.
        resamples: Bootstrap resamples of cases.
        seed: Bootstrap seed (the same seed gives the same interval).

    Returns:
        The comparison; ``difference`` is undefined with the reason when there are fewer than two
        experts or a pair's value is undefined.
    """
    scale = report.scale
    n_values = len(scale.values)
    index = {v: k for k, v in enumerate(scale.values)}
    base_rate = consensus_base_rate(report)
    experts = list(report.experts)
    if len(experts) < 2:
        reason = f"the human ceiling needs two or more experts; there is {len(experts)}"
        return HumanCeiling(
            metric=metric,
            judge=undefined(reason),
            experts=undefined(reason),
            difference=undefined(reason),
            base_rate=base_rate,
            consensus_shares=consensus_shares(report),
        )

    def code(label: str | None) -> int:
        if label is None:
            return MISSING
        if label == scale.abstain:
            return ABSTAIN
        return index[label]

    items = report.items
    judge_codes = np.array([code(r.judge) for r in items], dtype=np.int64)
    expert_codes = {e: np.array([code(r.experts.get(e)) for r in items], dtype=np.int64) for e in experts}
    cases = list(dict.fromkeys(r.case_id for r in items))
    case_of = {c: k for k, c in enumerate(cases)}
    case_index = np.array([case_of[r.case_id] for r in items], dtype=np.int64)
    pairs = [(expert_codes[e], judge_codes) for e in experts]
    pairs += [(expert_codes[x], expert_codes[y]) for x, y in itertools.combinations(experts, 2)]
    rows: list[np.ndarray] = []
    formulas: list[_Formula] = []
    for a, b in pairs:
        r, f = _pair_stat(metric, a, b, n_values)
        per_case = np.zeros((len(cases), r.shape[1]))
        np.add.at(per_case, case_index, r)
        rows.append(per_case)
        formulas.append(f)
    stacked = np.concatenate(rows, axis=1)
    n_judge = len(experts)
    judge_f, expert_f, diff_f = _mean_formula([r.shape[1] for r in rows], formulas, n_judge)
    stats = [
        BootstrapStat("judge", stacked, judge_f),
        BootstrapStat("experts", stacked, expert_f),
        BootstrapStat("difference", stacked, diff_f),
    ]
    total = stacked.sum(axis=0)[None, :]
    boot = bootstrap(stats, n_cases=len(cases), n_resamples=resamples, seed=seed)
    out: dict[str, Estimate] = {}
    n_items = int(((judge_codes >= 0) | np.any([c >= 0 for c in expert_codes.values()], axis=0)).sum())
    whose = {"judge": "the judge's", "experts": "an expert pair's", "difference": "a pair's"}
    for s in stats:
        value, defined = s.formula(total)
        if not bool(defined[0]):
            out[s.name] = undefined(
                f"{whose[s.name]} {metric} is undefined on the items both labelled", n=n_items
            )
            continue
        interval, why = percentile_interval(*boot[s.name], confidence=report.confidence)
        out[s.name] = Estimate(value=float(value[0]), n=n_items, interval=interval, interval_reason=why)
    return HumanCeiling(
        metric=metric,
        judge=out["judge"],
        experts=out["experts"],
        difference=out["difference"],
        base_rate=base_rate,
        consensus_shares=consensus_shares(report),
    )
