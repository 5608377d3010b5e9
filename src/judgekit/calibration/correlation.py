"""Scored judges: rank and linear correlations of a judge's scores with the experts' (ordinal and up).

On an ``ordinal``, ``interval`` or ``ratio`` scale (a 1-5 quality rating, a 0-10 score) agreement is
not only "same label or not": a judge that says 4 where the experts say 5 and 2 where they say 1 ranks
the outputs as they do. This module measures that, for the judge against the experts' consensus, the
judge against each expert, and each pair of experts (the human ceiling):

- **Spearman's rho** (``scipy.stats.spearmanr``): the Pearson correlation of the midranks; ordinal and up.
- **Kendall's tau-b** (``scipy.stats.kendalltau``, variant ``b``): concordant minus discordant pairs over
  the pairs untied in each rater, corrected for ties; ordinal and up.
- **Pearson's r** (``scipy.stats.pearsonr``): the linear correlation of the values; interval and ratio
  only (on an ordinal scale the distances between values are not defined, so r is undefined with that
  reason).

Each is in [−1, 1]: 1 means the two rank (or, for r, place linearly) every item the same way, 0 no
association, −1 the reverse order. A measure is ``None`` with a reason, never NaN, when fewer than three
items carry both ratings or one side gives a single value on all of them (no variance to correlate).

**Consensus on a scored scale** is the median of the experts' substantive values on the item: of their
scale positions on an ordinal scale, of their numbers on an interval or ratio scale (with an even number
of experts, the mean of the two middle values, so a half position or a half score may appear). An item
with no substantive expert value has no consensus; abstentions are missing values. This is not the
report's nominal consensus (the unique mode, where a tie is no consensus): a median is defined on every
item an expert scored.

**Intervals** are percentile intervals of the case bootstrap of
:mod:`~judgekit.calibration.agreement` (:func:`~judgekit.calibration.agreement.bootstrap`): the same
seed, resamples and confidence, hence the same resampled cases as every other interval of the report.
Each measure is a function of the per-case contingency counts of (value of a, value of b), so a resample
is one matrix product and the formulas below reproduce scipy on the resampled items. Point values come
from scipy itself.

Everything is computed from the report's item labels, as :mod:`~judgekit.calibration.ceiling` does.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, TypeAlias

from judgekit import lazy
from judgekit.calibration.agreement import (
    CONSENSUS,
    AgreementReport,
    BootstrapStat,
    bootstrap,
    percentile_interval,
    undefined,
)
from judgekit.calibration.labels import Level, Scale
from judgekit.stats import Estimate
from judgekit.verdict import FrozenModel

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy.module("numpy")  # imported at its first use: grading's start does not wait for it


__all__ = [
    "MEASURES",
    "MEASURE_NAMES",
    "CorrelationMeasure",
    "CorrelationPair",
    "ScoredAgreement",
    "correlation_table",
    "is_scored",
    "scored_agreement",
]

CorrelationMeasure = Literal["spearman", "kendall_tau_b", "pearson"]
MEASURES: tuple[CorrelationMeasure, ...] = ("spearman", "kendall_tau_b", "pearson")
"""The measures, in report order."""
MEASURE_NAMES: dict[CorrelationMeasure, str] = {
    "spearman": "Spearman's rho",
    "kendall_tau_b": "Kendall's tau-b",
    "pearson": "Pearson's r",
}
"""How each measure is named in reports and messages."""
MIN_ITEMS = 3
"""Fewest items with both ratings for a correlation to be reported."""

_Formula: TypeAlias = "Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]"


def is_scored(level: Level) -> bool:
    """True for the levels correlations are reported at (``ordinal``, ``interval``, ``ratio``)."""
    return level != "nominal"


class CorrelationPair(FrozenModel):
    """How closely rater ``b``'s scores follow rater ``a``'s, on the items both scored.

    Attributes:
        a: The reference (``consensus`` or an expert).
        b: The rated rater (the judge or another expert).
        n: Items with a substantive value from both (abstentions and missing values left out).
        spearman: Spearman's rho in [−1, 1] (1: the same order), with its case-bootstrap interval.
        kendall_tau_b: Kendall's tau-b in [−1, 1], with its case-bootstrap interval.
        pearson: Pearson's r in [−1, 1], with its case-bootstrap interval; undefined on ordinal scales.
    """

    a: str
    b: str
    n: int
    spearman: Estimate
    kendall_tau_b: Estimate
    pearson: Estimate

    def measure(self, name: CorrelationMeasure) -> Estimate:
        """The estimate of measure ``name``."""
        return {"spearman": self.spearman, "kendall_tau_b": self.kendall_tau_b, "pearson": self.pearson}[name]


class ScoredAgreement(FrozenModel):
    """Correlations of a judge's scores with the experts', and among the experts.

    Attributes:
        level: The scale's level (``ordinal``, ``interval`` or ``ratio``).
        consensus: How the consensus was formed (the median of the experts' positions or values).
        judge_vs_consensus: The judge against the experts' median.
        judge_vs_experts: The judge against each expert.
        expert_pairs: Each pair of experts (the human ceiling).
    """

    level: Level
    consensus: str
    judge_vs_consensus: CorrelationPair
    judge_vs_experts: tuple[CorrelationPair, ...]
    expert_pairs: tuple[CorrelationPair, ...]

    @property
    def pairs(self) -> tuple[CorrelationPair, ...]:
        """Every pair, the consensus first."""
        return (self.judge_vs_consensus, *self.judge_vs_experts, *self.expert_pairs)


# --------------------------------------------------------------------------------------------------
# Batched formulas on contingency counts ``(B, kx, ky)`` of (x value, y value); values 0.0 where undefined


def _weighted_pearson(
    t: np.ndarray, x: np.ndarray, y: np.ndarray, n: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Pearson's r of scores ``x`` ``(B, kx)`` and ``y`` ``(B, ky)`` weighted by the counts ``t``."""
    safe_n = np.where(n > 0, n, 1.0)
    mx = np.einsum("bij,bi->b", t, x) / safe_n
    my = np.einsum("bij,bj->b", t, y) / safe_n
    dx = x - mx[:, None]
    dy = y - my[:, None]
    sxy = np.einsum("bij,bi,bj->b", t, dx, dy)
    sxx = np.einsum("bij,bi->b", t, dx**2)
    syy = np.einsum("bij,bj->b", t, dy**2)
    scale_x = np.einsum("bij,bi->b", t, x**2) + 1.0
    scale_y = np.einsum("bij,bj->b", t, y**2) + 1.0
    defined = (n >= MIN_ITEMS) & (sxx > 1e-12 * scale_x) & (syy > 1e-12 * scale_y)
    den = np.sqrt(np.where(defined, sxx * syy, 1.0))
    return np.where(defined, np.clip(sxy / den, -1.0, 1.0), 0.0), defined


def _midranks(totals: np.ndarray) -> np.ndarray:
    """Midrank of each value from its count ``(B, k)``: the ranks below it plus the mean of its ties."""
    return np.asarray(np.cumsum(totals, axis=1) - totals + (totals + 1.0) / 2.0)


def pearson_from(t: np.ndarray, xv: np.ndarray, yv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pearson's r from contingency counts ``t`` ``(B, kx, ky)`` and the values ``xv``, ``yv``."""
    b = t.shape[0]
    return _weighted_pearson(
        t, np.broadcast_to(xv, (b, xv.size)), np.broadcast_to(yv, (b, yv.size)), t.sum((1, 2))
    )


def spearman_from(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Spearman's rho from contingency counts ``t`` ``(B, kx, ky)`` (values in increasing order)."""
    return _weighted_pearson(t, _midranks(t.sum(axis=2)), _midranks(t.sum(axis=1)), t.sum(axis=(1, 2)))


def kendall_from(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kendall's tau-b from contingency counts ``t`` ``(B, kx, ky)`` (values in increasing order).

    tau-b = (P − Q) / sqrt((n0 − n1)(n0 − n2)) with P the concordant pairs, Q the discordant ones,
    n0 = n(n − 1)/2 and n1, n2 the pairs tied in x and in y.
    """
    n = t.sum(axis=(1, 2))
    # above[b, i, j]: counts with x index > i and y index > j; below_right: x index > i and y index < j
    rev = t[:, ::-1, ::-1].cumsum(axis=1).cumsum(axis=2)[:, ::-1, ::-1]
    above = np.zeros_like(t)
    above[:, :-1, :-1] = rev[:, 1:, 1:]
    lower = t[:, ::-1, :].cumsum(axis=1)[:, ::-1, :].cumsum(axis=2)
    below = np.zeros_like(t)
    below[:, :-1, 1:] = lower[:, 1:, :-1]
    concordant = (t * above).sum(axis=(1, 2))
    discordant = (t * below).sum(axis=(1, 2))
    rows, cols = t.sum(axis=2), t.sum(axis=1)
    n0 = n * (n - 1.0) / 2.0
    untied_x = n0 - (rows * (rows - 1.0)).sum(axis=1) / 2.0
    untied_y = n0 - (cols * (cols - 1.0)).sum(axis=1) / 2.0
    defined = (n >= MIN_ITEMS) & (untied_x > 0.5) & (untied_y > 0.5)
    den = np.sqrt(np.where(defined, untied_x * untied_y, 1.0))
    return np.where(defined, np.clip((concordant - discordant) / den, -1.0, 1.0), 0.0), defined


# --------------------------------------------------------------------------------------------------
# Values, consensus, one pair


def _scores(report: AgreementReport) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Each rater's score per item (NaN where missing or abstained), and the experts' median."""
    scale = report.scale
    numeric = scale.numeric_values() if scale.level in ("interval", "ratio") else None
    value = {v: (numeric[k] if numeric is not None else float(k)) for k, v in enumerate(scale.values)}

    def row(labels: list[str | None]) -> np.ndarray:
        return np.array([value.get(x, np.nan) if x is not None else np.nan for x in labels], dtype=float)

    items = report.items
    scores = {report.judge: row([r.judge for r in items])}
    for e in report.experts:
        scores[e] = row([r.experts.get(e) for r in items])
    stacked = np.stack([scores[e] for e in report.experts])
    has = ~np.isnan(stacked).all(axis=0)
    median = np.full(len(items), np.nan)
    if has.any():
        median[has] = np.nanmedian(stacked[:, has], axis=0)
    return scores, median


def _consensus_text(scale: Scale) -> str:
    what = "scale positions" if scale.level == "ordinal" else "values"
    return (
        f"the median of the experts' substantive {what} on each item "
        "(the mean of the two middle ones for an even number of experts)"
    )


def _constant_reason(x: np.ndarray, who: str, n: int) -> str | None:
    if np.unique(x).size < 2:
        return f"{who} gave one value on all {n} items both scored (no variance to correlate)"
    return None


def _scipy_value(measure: CorrelationMeasure, x: np.ndarray, y: np.ndarray) -> float:
    from scipy import stats

    if measure == "spearman":
        return float(stats.spearmanr(x, y).statistic)
    if measure == "kendall_tau_b":
        return float(stats.kendalltau(x, y, variant="b").statistic)
    return float(stats.pearsonr(x, y).statistic)


def _pair(
    x: np.ndarray,
    y: np.ndarray,
    *,
    a: str,
    b: str,
    level: Level,
    case_index: np.ndarray,
    n_cases: int,
    pending: dict[str, tuple[BootstrapStat, Estimate]],
) -> CorrelationPair:
    both = ~np.isnan(x) & ~np.isnan(y)
    n = int(both.sum())
    xs, ys = x[both], y[both]
    reason: str | None = None
    if n < MIN_ITEMS:
        reason = f"fewer than {MIN_ITEMS} items carry a value from both {a} and {b} ({n})"
    else:
        reason = _constant_reason(xs, a, n) or _constant_reason(ys, b, n)
    out: dict[CorrelationMeasure, Estimate] = {}
    for measure in MEASURES:
        if measure == "pearson" and level == "ordinal":
            out[measure] = undefined(
                "Pearson's r needs an interval or ratio scale; on an ordinal scale the distances between "
                "values are not defined (read Spearman's rho and Kendall's tau-b)",
                n,
            )
        elif reason is not None:
            out[measure] = undefined(reason, n)
        else:
            out[measure] = Estimate(value=_scipy_value(measure, xs, ys), n=n)
    if reason is None:
        xv, xi = np.unique(xs, return_inverse=True)
        yv, yi = np.unique(ys, return_inverse=True)
        rows = np.zeros((n, xv.size * yv.size))
        rows[np.arange(n), xi * yv.size + yi] = 1.0
        per_case = np.zeros((n_cases, rows.shape[1]))
        np.add.at(per_case, case_index[both], rows)
        shape = (xv.size, yv.size)
        formulas: dict[CorrelationMeasure, _Formula] = {
            "spearman": lambda s: spearman_from(s.reshape(-1, *shape)),
            "kendall_tau_b": lambda s: kendall_from(s.reshape(-1, *shape)),
            "pearson": lambda s: pearson_from(s.reshape(-1, *shape), xv, yv),
        }
        for measure, formula in formulas.items():
            if out[measure].defined:
                name = f"{a}~{b}:{measure}"
                pending[name] = (BootstrapStat(name, per_case, formula), out[measure])
    return CorrelationPair(a=a, b=b, n=n, **out)


def scored_agreement(report: AgreementReport, *, resamples: int, seed: int) -> ScoredAgreement | None:
    """Correlations of the judge with the experts' median, with each expert, and among the experts.

    Args:
        report: The agreement report (its ``items`` carry every label; its ``confidence`` is used).
        resamples: Case-bootstrap resamples (the policy's, as every interval of the report).
        seed: Bootstrap seed (the same seed gives the same intervals).

    Returns:
        The correlations, or ``None`` on a nominal scale (its labels have no order to correlate).
    """
    scale = report.scale
    if not is_scored(scale.level):
        return None
    scores, median = _scores(report)
    cases = list(dict.fromkeys(r.case_id for r in report.items))
    case_of = {c: k for k, c in enumerate(cases)}
    case_index = np.array([case_of[r.case_id] for r in report.items], dtype=np.int64)
    pending: dict[str, tuple[BootstrapStat, Estimate]] = {}

    def pair(x: np.ndarray, y: np.ndarray, a: str, b: str) -> CorrelationPair:
        return _pair(
            x, y, a=a, b=b, level=scale.level, case_index=case_index, n_cases=len(cases), pending=pending
        )

    judge = scores[report.judge]
    jc = pair(median, judge, CONSENSUS, report.judge)
    je = tuple(pair(scores[e], judge, e, report.judge) for e in report.experts)
    ep = tuple(pair(scores[x], scores[y], x, y) for x, y in itertools.combinations(report.experts, 2))
    boot = bootstrap([s for s, _ in pending.values()], n_cases=len(cases), n_resamples=resamples, seed=seed)
    with_interval: dict[int, Estimate] = {}
    for name, (_, est) in pending.items():
        interval, why = percentile_interval(*boot[name], confidence=report.confidence)
        with_interval[id(est)] = est.with_interval(interval, why)

    def attach(p: CorrelationPair) -> CorrelationPair:
        update: dict[str, Estimate] = {m: with_interval.get(id(p.measure(m)), p.measure(m)) for m in MEASURES}
        return p.model_copy(update=update)

    return ScoredAgreement(
        level=scale.level,
        consensus=_consensus_text(scale),
        judge_vs_consensus=attach(jc),
        judge_vs_experts=tuple(attach(p) for p in je),
        expert_pairs=tuple(attach(p) for p in ep),
    )


def correlation_table(scored: ScoredAgreement) -> list[tuple[str, int, dict[CorrelationMeasure, Estimate]]]:
    """One row per pair for the reports: ``(label, n, estimate per measure)``, the consensus first."""
    rows = [(f"{scored.judge_vs_consensus.b} vs the experts' median", scored.judge_vs_consensus.n)]
    rows += [(f"{p.b} vs {p.a}", p.n) for p in scored.judge_vs_experts]
    rows += [(f"{p.a} vs {p.b}", p.n) for p in scored.expert_pairs]
    return [
        (label, n, {m: p.measure(m) for m in MEASURES})
        for (label, n), p in zip(rows, scored.pairs, strict=True)
    ]
