"""Agreement metrics between a judge and experts, and between the experts themselves.

Public metric functions follow scikit-learn's style: plain functions of label arrays with keyword-only
options, returning an :class:`~judgekit.stats.Estimate` (the one estimate type, with its
:class:`~judgekit.stats.Interval`). A statistic that is undefined for its input (kappa when both raters
use one label, a TPR with no failures) is an estimate whose ``value`` is ``None`` and whose
``undefined_reason`` says why; judgekit never returns NaN.

Point values come from the reference implementations: Cohen's kappa from scikit-learn
(``cohen_kappa_score``) and Krippendorff's alpha from the ``krippendorff`` package. Fleiss' kappa, Gwet's
AC1 and the binary metrics are computed here from their textbook definitions.

Bootstrap intervals resample *cases* (a case's criteria and trials move together). They are vectorised:
every statistic is a function of per-case additive counts (a confusion matrix, a coincidence matrix,
category totals), so one resample is a multinomial weight vector over cases and a whole block of
resamples is one matrix product. The same weights serve every statistic, which keeps paired comparisons
(:mod:`judgekit.calibration.compare`) paired.

Abstentions (the scale's abstain label, ``insufficient_information`` on the verdict scale) are missing
values for every agreement metric; they are counted separately as coverage and abstention.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias, TypeVar

from judgekit import lazy
from judgekit.calibration.labels import ItemKey, LabelTable, Level, Scale
from judgekit.stats import Estimate, Interval, wilson_interval
from judgekit.verdict import FrozenModel

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy.module("numpy")  # imported at its first use: grading's start does not wait for it


__all__ = [
    "ABSTAIN",
    "CONSENSUS",
    "MISSING",
    "AbstentionSummary",
    "AgreementReport",
    "BinaryMetrics",
    "BootstrapStat",
    "ConfusionMatrix",
    "GroupAgreement",
    "ItemRecord",
    "PairAgreement",
    "Ratings",
    "ac1_from",
    "alpha_formula",
    "alpha_from_coincidence",
    "binary_metrics",
    "binary_rows",
    "bootstrap",
    "build_ratings",
    "cohen_kappa",
    "coincidence_rows",
    "compute_agreement",
    "confusion_matrix",
    "confusion_rows",
    "consensus_codes",
    "f1_from",
    "fleiss_kappa",
    "gwet_ac1",
    "kappa_formula",
    "kappa_from_confusion",
    "krippendorff_alpha",
    "percent_agreement",
    "percentile_interval",
    "rate",
    "resample_weights",
    "undefined",
]

MISSING = -1
"""Code of a rating that was not given."""
ABSTAIN = -2
"""Code of an abstention (the scale's abstain label)."""
CONSENSUS = "consensus"
"""Name of the experts' consensus as the reference rater of :attr:`AgreementReport.judge_vs_consensus`."""

KappaWeights = Literal["none", "linear", "quadratic"]
_M = TypeVar("_M", bound=FrozenModel)
FloatArray: TypeAlias = "np.ndarray"


# --------------------------------------------------------------------------------------------------
# Result types


def undefined(reason: str, n: int = 0) -> Estimate:
    """An undefined estimate with its reason."""
    return Estimate(value=None, n=n, undefined_reason=reason, interval_reason="the statistic is undefined")


def rate(successes: int, n: int, *, confidence: float, what: str) -> Estimate:
    """A proportion with its Wilson interval, or undefined when ``n == 0``.

    Args:
        successes: Numerator.
        n: Denominator.
        confidence: Two-sided confidence level.
        what: What the denominator counts, for the undefined reason (``"reference failures"``).
    """
    if n == 0:
        return undefined(f"no {what} to compute it on")
    low, high = wilson_interval(successes, n, confidence=confidence)
    return Estimate(
        value=successes / n,
        n=n,
        interval=Interval(low=low, high=high, confidence=confidence, method="wilson"),
    )


class ConfusionMatrix(FrozenModel):
    """Counts of (reference label, rated label) pairs.

    Attributes:
        labels: Row and column labels, in scale order (the abstain label last when shown).
        counts: ``counts[i][j]`` is the number of items whose reference label is ``labels[i]`` and whose
            rated label is ``labels[j]``.
        reference: Name of the row rater.
        rated: Name of the column rater.
    """

    labels: tuple[str, ...]
    counts: tuple[tuple[int, ...], ...]
    reference: str
    rated: str


class BinaryMetrics(FrozenModel):
    """Detection of failures, with the scale's positive labels (``fail``) as the positive class.

    Computed on items where both the reference and the rated rater gave a substantive label.

    Attributes:
        tp: Reference positive, rated positive (failures caught).
        fn: Reference positive, rated negative (failures missed).
        tn: Reference negative, rated negative.
        fp: Reference negative, rated positive (false alarms).
        tpr: Sensitivity, TP / (TP + FN), with a Wilson interval; higher is better.
        tnr: Specificity, TN / (TN + FP), with a Wilson interval; higher is better.
        precision: TP / (TP + FP), with a Wilson interval.
        f1: 2TP / (2TP + FP + FN), with a bootstrap interval.
        base_rate: Share of reference positives, (TP + FN) / n, with a Wilson interval.
    """

    tp: int
    fn: int
    tn: int
    fp: int
    tpr: Estimate
    tnr: Estimate
    precision: Estimate
    f1: Estimate
    base_rate: Estimate


class PairAgreement(FrozenModel):
    """Agreement of rater ``b`` with reference ``a`` on the items both labelled substantively.

    Attributes:
        a: The reference rater (``consensus`` or an expert).
        b: The rated rater (the judge or another expert).
        n: Items on which both gave a substantive label.
        percent_agreement: Share of those items with equal labels (Wilson interval).
        kappa: Cohen's kappa by weighting: ``none`` always; ``linear`` and ``quadratic`` on ordered scales.
        alpha: Krippendorff's alpha of the two raters at each level the scale supports.
        ac1: Gwet's AC1 (stable when one label dominates).
        confusion: Counts of (a's label, b's label), abstentions included as their own row and column.
        binary: Failure-detection metrics, or ``None`` (``binary_reason`` says why).
        binary_reason: Why there are no binary metrics.
    """

    a: str
    b: str
    n: int
    percent_agreement: Estimate
    kappa: dict[str, Estimate]
    alpha: dict[str, Estimate]
    ac1: Estimate
    confusion: ConfusionMatrix
    binary: BinaryMetrics | None = None
    binary_reason: str | None = None


class GroupAgreement(FrozenModel):
    """Agreement among a group of raters (the experts): the human ceiling.

    Attributes:
        raters: The raters.
        n: Items that at least two of them labelled substantively.
        alpha: Krippendorff's alpha over all of them at each supported level (missing values allowed).
        fleiss_kappa: Fleiss' kappa on the items every rater labelled substantively (three or more
            raters; undefined with a reason otherwise).
        ac1: Gwet's multi-rater AC1 on items with at least two substantive labels.
        mean_pairwise: Mean over rater pairs of each pairwise metric (``percent_agreement``,
            ``cohen_kappa``, ``gwet_ac1``); undefined when any pair's value is.
    """

    raters: tuple[str, ...]
    n: int
    alpha: dict[str, Estimate]
    fleiss_kappa: Estimate
    ac1: Estimate
    mean_pairwise: dict[str, Estimate]


class AbstentionSummary(FrozenModel):
    """How often the judge declined to decide, and where.

    Attributes:
        items: Items with a judge label and a substantive expert consensus.
        judged: Of those, items the judge decided (a substantive label).
        coverage: ``judged / items`` (Wilson interval); higher means fewer abstentions.
        abstention: ``1 - coverage``, with its interval.
        agreement_on_judged: Share of judged items where the judge equals the consensus.
        abstention_where_experts_split: Abstention rate on items the experts did not label unanimously.
        abstention_where_experts_agree: Abstention rate on items the experts labelled unanimously.
        abstention_on_positive: Abstention rate on items whose consensus is a failure.
        abstention_on_negative: Abstention rate on items whose consensus is not a failure.
        decided_where_experts_abstained: Items whose consensus is the abstain label but that the judge
            decided anyway.
    """

    items: int
    judged: int
    coverage: Estimate
    abstention: Estimate
    agreement_on_judged: Estimate
    abstention_where_experts_split: Estimate
    abstention_where_experts_agree: Estimate
    abstention_on_positive: Estimate
    abstention_on_negative: Estimate
    decided_where_experts_abstained: int


class ItemRecord(FrozenModel):
    """One item's labels: what the judge said, what each expert said, and the consensus.

    Attributes:
        item_id: The case × trial identifier.
        criterion: The criterion (``""`` when none).
        case_id: The resampling unit.
        judge: The judge's label, or ``None`` when the judge did not label it.
        experts: Each expert's label (experts who did not label it are absent).
        consensus: The unique most frequent expert label, or ``None`` when there is a tie.
        split: True when two or more experts labelled it and they did not all agree.
        confidence: The judge's confidence for it, when given.
    """

    item_id: str
    criterion: str = ""
    case_id: str
    judge: str | None
    experts: dict[str, str]
    consensus: str | None
    split: bool
    confidence: float | None = None

    @property
    def key(self) -> ItemKey:
        """The item's key."""
        return ItemKey(self.item_id, self.criterion)


class AgreementReport(FrozenModel):
    """Everything calibration measured for one judge against a set of experts.

    Attributes:
        judge: The judge rater.
        experts: The expert raters.
        scale: The label scale.
        n_items: Items labelled by at least two of the judge and experts.
        n_cases: Cases those items belong to (the bootstrap's resampling unit).
        confidence: Two-sided confidence level of every interval.
        resamples: Bootstrap resamples.
        seed: Bootstrap seed.
        judge_vs_consensus: The judge against the experts' consensus.
        judge_vs_experts: The judge against each expert.
        expert_pairs: Each pair of experts.
        expert_group: Agreement among all experts.
        abstention: The judge's coverage and abstention.
        no_consensus: Items whose experts tied (no unique most frequent label).
        splits: Items where the experts did not all agree: findings to fix or turn into ask-a-question
            cases.
        items: Every item's labels (kept in the calibration record for later comparison).
        notes: Things a reader should know about the data.
    """

    judge: str
    experts: tuple[str, ...]
    scale: Scale
    n_items: int
    n_cases: int
    confidence: float
    resamples: int
    seed: int
    judge_vs_consensus: PairAgreement
    judge_vs_experts: tuple[PairAgreement, ...]
    expert_pairs: tuple[PairAgreement, ...]
    expert_group: GroupAgreement
    abstention: AbstentionSummary
    no_consensus: int
    splits: tuple[ItemRecord, ...]
    items: tuple[ItemRecord, ...]
    notes: tuple[str, ...] = ()


# --------------------------------------------------------------------------------------------------
# Internal form: an integer code matrix


@dataclass(frozen=True)
class Ratings:
    """Labels as integer codes: ``codes[r, i]`` is rater ``r``'s label for item ``i``.

    Codes ``0..V-1`` are the scale's substantive values in scale order; :data:`ABSTAIN` is an
    abstention; :data:`MISSING` is no label.

    Attributes:
        scale: The scale.
        raters: Row names.
        items: Column keys, sorted.
        codes: ``(len(raters), len(items))`` integer matrix.
        case_index: For each item, the index of its case in ``cases``.
        cases: The case identifiers.
    """

    scale: Scale
    raters: tuple[str, ...]
    items: tuple[ItemKey, ...]
    codes: np.ndarray
    case_index: np.ndarray
    cases: tuple[str, ...]

    @property
    def n_values(self) -> int:
        """Number of substantive values ``V``."""
        return len(self.scale.values)

    def row(self, rater: str) -> np.ndarray:
        """The code row of ``rater``."""
        return np.asarray(self.codes[self.raters.index(rater)])

    def by_case(self, values: np.ndarray) -> np.ndarray:
        """Sum per-item rows ``(N, d)`` into per-case rows ``(C, d)``."""
        out = np.zeros((len(self.cases), values.shape[1]), dtype=float)
        np.add.at(out, self.case_index, values)
        return out


def build_ratings(table: LabelTable, raters: Sequence[str]) -> Ratings:
    """Encode the labels of ``raters`` on every item at least one of them labelled.

    Args:
        table: The validated label table.
        raters: The raters to keep, in row order.

    Returns:
        The code matrix, with items sorted and cases numbered in order of first appearance.
    """
    scale = table.scale
    index = {v: i for i, v in enumerate(scale.values)}
    if scale.abstain is not None:
        index[scale.abstain] = ABSTAIN
    wanted = {r: k for k, r in enumerate(raters)}
    items = sorted({row.item for row in table.rows if row.rater in wanted})
    col = {item: j for j, item in enumerate(items)}
    codes = np.full((len(raters), len(items)), MISSING, dtype=np.int16)
    case_of: dict[ItemKey, str] = {}
    for row in table.rows:
        k = wanted.get(row.rater)
        if k is None:
            continue
        codes[k, col[row.item]] = index[row.label]
        case_of[row.item] = row.case_id
    cases = tuple(dict.fromkeys(case_of[i] for i in items))
    cidx = {c: k for k, c in enumerate(cases)}
    case_index = np.array([cidx[case_of[i]] for i in items], dtype=np.int64)
    return Ratings(scale, tuple(raters), tuple(items), codes, case_index, cases)


def consensus_codes(codes: np.ndarray, n_values: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The experts' consensus on each item: the unique most frequent label (abstentions are a label).

    Args:
        codes: ``(R, N)`` expert codes.
        n_values: Number of substantive values.

    Returns:
        ``(consensus, split, n_rated)``: the consensus code per item (:data:`MISSING` when no expert
        labelled it or the most frequent labels tie), whether two or more experts labelled it without
        all agreeing, and how many experts labelled it.
    """
    n_items = codes.shape[1]
    # columns 0..V-1 substantive values, column V abstain
    shifted = np.where(codes == ABSTAIN, n_values, codes)
    counts = np.zeros((n_items, n_values + 1), dtype=np.int64)
    for r in range(codes.shape[0]):
        rated = shifted[r] >= 0
        counts[np.nonzero(rated)[0], shifted[r][rated]] += 1
    n_rated = counts.sum(axis=1)
    top = counts.max(axis=1)
    n_top = (counts == top[:, None]).sum(axis=1)
    winner = counts.argmax(axis=1)
    consensus = np.where(winner == n_values, ABSTAIN, winner)
    consensus = np.where((n_rated == 0) | (n_top > 1), MISSING, consensus)
    split = (n_rated >= 2) & ((counts > 0).sum(axis=1) > 1)
    return consensus.astype(np.int16), split, n_rated


# --------------------------------------------------------------------------------------------------
# Batched formulas on additive statistics. Each takes arrays with a leading batch axis and returns
# (values, defined); values are 0.0 where undefined so that nothing downstream sees a NaN.


def _kappa_weights(n_values: int, weights: KappaWeights) -> np.ndarray:
    i, j = np.indices((n_values, n_values))
    if weights == "none":
        return np.asarray(i != j, dtype=float)
    if weights == "linear":
        return np.asarray(np.abs(i - j), dtype=float)
    return np.asarray((i - j) ** 2, dtype=float)


Formula: TypeAlias = "Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]"


def kappa_formula(n_values: int, weights: KappaWeights) -> Formula:
    """Batched kappa over flattened ``(B, V*V)`` confusion counts (for :class:`BootstrapStat`)."""

    def formula(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return kappa_from_confusion(s.reshape(-1, n_values, n_values), weights)

    return formula


def alpha_formula(n_values: int, level: Level, numeric: tuple[float, ...] | None) -> Formula:
    """Batched alpha over flattened ``(B, V*V)`` coincidence counts (for :class:`BootstrapStat`)."""

    def formula(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return alpha_from_coincidence(s.reshape(-1, n_values, n_values), level, numeric)

    return formula


def kappa_from_confusion(conf: np.ndarray, weights: KappaWeights = "none") -> tuple[np.ndarray, np.ndarray]:
    """Cohen's kappa from batched confusion matrices ``(B, V, V)``.

    kappa = 1 − Σ w·O / Σ w·E with E the product of the margins divided by n; defined when n > 0 and
    the expected disagreement Σ w·E is positive (it is zero when both raters use one and the same
    label).
    """
    n_values = conf.shape[-1]
    w = _kappa_weights(n_values, weights)
    n = conf.sum(axis=(1, 2))
    safe_n = np.where(n > 0, n, 1.0)
    expected = conf.sum(axis=2)[:, :, None] * conf.sum(axis=1)[:, None, :] / safe_n[:, None, None]
    num = (w * conf).sum(axis=(1, 2))
    den = (w * expected).sum(axis=(1, 2))
    defined = (n > 0) & (den > 1e-12 * np.maximum(n, 1.0))
    value = np.where(defined, 1.0 - num / np.where(defined, den, 1.0), 0.0)
    return value, defined


def _alpha_delta(
    n_c: np.ndarray, level: Level, numeric: tuple[float, ...] | None
) -> np.ndarray:  # (B, V, V) or (V, V)
    n_values = n_c.shape[-1]
    if level == "nominal":
        return 1.0 - np.eye(n_values)
    if level == "ordinal":
        mid = np.cumsum(n_c, axis=-1) - n_c / 2.0
        return np.asarray((mid[..., None, :] - mid[..., :, None]) ** 2)
    if numeric is None:
        raise ValueError(f"level {level!r} needs numeric scale values")
    v = np.asarray(numeric, dtype=float)
    diff = v[None, :] - v[:, None]
    if level == "interval":
        return np.asarray(diff**2)
    total = v[None, :] + v[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(total != 0, diff / np.where(total != 0, total, 1.0), 0.0)
    return np.asarray(ratio**2)


def alpha_from_coincidence(
    o: np.ndarray, level: Level = "nominal", numeric: tuple[float, ...] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Krippendorff's alpha from batched coincidence matrices ``(B, V, V)``.

    alpha = 1 − (n − 1) Σ o·δ / Σ n_c n_k δ (Krippendorff 2011), with δ the squared distance of the
    level (the ordinal distance depends on the value totals ``n_c``, so it is computed per batch row).
    Defined when at least two pairable values exist and the expected disagreement is positive.
    """
    n_c = o.sum(axis=2)
    n = n_c.sum(axis=1)
    delta = _alpha_delta(n_c, level, numeric)
    observed = (o * delta).sum(axis=(1, 2))
    expected = (n_c[:, :, None] * n_c[:, None, :] * delta).sum(axis=(1, 2))
    defined = (n > 1) & (expected > 1e-12)
    value = np.where(defined, 1.0 - (n - 1.0) * observed / np.where(defined, expected, 1.0), 0.0)
    return value, defined


def _fleiss_from(stats: np.ndarray, n_raters: int) -> tuple[np.ndarray, np.ndarray]:
    # stats columns: sum of P_i, item count, category totals (V)
    p_sum, count, totals = stats[:, 0], stats[:, 1], stats[:, 2:]
    safe = np.where(count > 0, count, 1.0)
    p_bar = p_sum / safe
    p_j = totals / (safe * n_raters)[:, None]
    p_e = (p_j**2).sum(axis=1)
    defined = (count > 0) & (p_e < 1.0 - 1e-12)
    value = np.where(defined, (p_bar - p_e) / np.where(defined, 1.0 - p_e, 1.0), 0.0)
    return value, defined


def ac1_from(stats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gwet's AC1 from batched additive per-item sums ``(B, 3 + V)``, with whether each is defined.

    Columns: the sum of per-item agreement (items with at least two labels), the count of those items,
    the count of items with at least one label, then each of the V labels' share summed over those items.
    AC1 = (pa − pe) / (1 − pe); defined when some item has two labels and ``pe < 1``; an undefined row's
    value is 0.
    """
    pa_sum, count2, count1, shares = stats[:, 0], stats[:, 1], stats[:, 2], stats[:, 3:]
    q = shares.shape[1]
    pa = pa_sum / np.where(count2 > 0, count2, 1.0)
    pi = shares / np.where(count1 > 0, count1, 1.0)[:, None]
    pe = (pi * (1.0 - pi)).sum(axis=1) / (q - 1)
    defined = (count2 > 0) & (pe < 1.0 - 1e-12)
    value = np.where(defined, (pa - pe) / np.where(defined, 1.0 - pe, 1.0), 0.0)
    return value, defined


def f1_from(stats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Batched F1 = 2TP / (2TP + FP + FN) from ``(B, 4)`` counts ordered TP, FN, TN, FP."""
    tp, fn, _tn, fp = stats[:, 0], stats[:, 1], stats[:, 2], stats[:, 3]
    den = 2 * tp + fp + fn
    defined = den > 0
    return np.where(defined, 2 * tp / np.where(defined, den, 1.0), 0.0), defined


# --------------------------------------------------------------------------------------------------
# Per-item statistics (rows are items; summed per case for the bootstrap)


def _value_counts(codes: np.ndarray, n_values: int) -> np.ndarray:
    """``(N, V)`` number of raters giving each substantive value to each item."""
    n_items = codes.shape[1]
    counts = np.zeros((n_items, n_values), dtype=float)
    for r in range(codes.shape[0]):
        ok = codes[r] >= 0
        counts[np.nonzero(ok)[0], codes[r][ok]] += 1.0
    return counts


def confusion_rows(a: np.ndarray, b: np.ndarray, n_values: int) -> np.ndarray:
    """``(N, V*V)`` one-hot (a, b) pair per item where both are substantive."""
    out = np.zeros((a.shape[0], n_values * n_values), dtype=float)
    both = (a >= 0) & (b >= 0)
    idx = np.nonzero(both)[0]
    out[idx, a[both].astype(np.int64) * n_values + b[both].astype(np.int64)] = 1.0
    return out


def coincidence_rows(codes: np.ndarray, n_values: int) -> np.ndarray:
    """``(N, V*V)`` each item's contribution to the coincidence matrix (zero for unpairable items)."""
    c = _value_counts(codes, n_values)
    m = c.sum(axis=1)
    pairable = m >= 2
    contrib = c[:, :, None] * c[:, None, :] - np.einsum("iv,vw->ivw", c, np.eye(n_values))
    contrib = contrib / np.where(pairable, m - 1.0, 1.0)[:, None, None]
    contrib[~pairable] = 0.0
    return np.asarray(contrib.reshape(codes.shape[1], n_values * n_values))


def _ac1_rows(codes: np.ndarray, n_values: int) -> np.ndarray:
    c = _value_counts(codes, n_values)
    r = c.sum(axis=1)
    two = r >= 2
    one = r >= 1
    safe = np.where(two, r, 2.0)
    out = np.zeros((codes.shape[1], 3 + n_values))
    out[two, 0] = ((c * (c - 1.0)).sum(axis=1) / (safe * (safe - 1.0)))[two]
    out[two, 1] = 1.0
    out[one, 2] = 1.0
    out[one, 3:] = c[one] / r[one, None]
    return out


def _fleiss_rows(codes: np.ndarray, n_values: int) -> np.ndarray:
    m = codes.shape[0]
    c = _value_counts(codes, n_values)
    full = c.sum(axis=1) == m
    out = np.zeros((codes.shape[1], 2 + n_values))
    if m >= 2:
        out[full, 0] = ((c[full] ** 2).sum(axis=1) - m) / (m * (m - 1.0))
        out[full, 1] = 1.0
        out[full, 2:] = c[full]
    return out


def binary_rows(ref: np.ndarray, rated: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """``(N, 4)`` one-hot TP, FN, TN, FP per item where both labels are substantive.

    ``positive[k]`` is True when substantive code ``k`` is a positive (failing) label.
    """
    both = (ref >= 0) & (rated >= 0)
    ref_pos = np.zeros(ref.shape, bool)
    rated_pos = np.zeros(ref.shape, bool)
    ref_pos[both] = positive[ref[both]]
    rated_pos[both] = positive[rated[both]]
    return np.stack(
        [
            both & ref_pos & rated_pos,
            both & ref_pos & ~rated_pos,
            both & ~ref_pos & ~rated_pos,
            both & ~ref_pos & rated_pos,
        ],
        axis=1,
    ).astype(float)


# --------------------------------------------------------------------------------------------------
# Public metric functions on label arrays


def _codes_of(labels: Sequence[object], domain: Sequence[object], name: str) -> np.ndarray:
    index = {v: i for i, v in enumerate(domain)}
    out = np.full(len(labels), MISSING, dtype=np.int64)
    for k, v in enumerate(labels):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        if v not in index:
            raise ValueError(f"{name}[{k}] = {v!r} is not one of the labels {list(domain)}")
        out[k] = index[v]
    return out


def percent_agreement(
    y1: Sequence[object], y2: Sequence[object], *, labels: Sequence[object], confidence: float = 0.95
) -> Estimate:
    """Share of items on which two raters give the same label (items either left blank are skipped).

    Args:
        y1: First rater's labels (``None`` for missing).
        y2: Second rater's labels, aligned with ``y1``.
        labels: The label domain.
        confidence: Two-sided confidence level of the Wilson interval.

    Returns:
        The proportion in [0, 1] with its Wilson interval; undefined when no item has both labels.

    Raises:
        ValueError: When the arrays differ in length or hold a label outside ``labels``.
    """
    if len(y1) != len(y2):
        raise ValueError(f"y1 and y2 differ in length ({len(y1)} and {len(y2)})")
    a, b = _codes_of(y1, labels, "y1"), _codes_of(y2, labels, "y2")
    both = (a >= 0) & (b >= 0)
    return rate(
        int((a[both] == b[both]).sum()), int(both.sum()), confidence=confidence, what="items rated by both"
    )


def cohen_kappa(
    y1: Sequence[object],
    y2: Sequence[object],
    *,
    labels: Sequence[object],
    weights: KappaWeights = "none",
) -> Estimate:
    """Cohen's kappa of two raters (scikit-learn's ``cohen_kappa_score``), or undefined with a reason.

    Args:
        y1: First rater's labels (``None`` for missing; items either left blank are skipped).
        y2: Second rater's labels.
        labels: The label domain; for ``linear`` and ``quadratic`` weights it must be in scale order.
        weights: ``none``, ``linear`` (|i − j|) or ``quadratic`` ((i − j)²) disagreement weights.

    Returns:
        Kappa in [−1, 1]: 1 is perfect agreement, 0 the agreement expected by chance. Undefined when no
        item has both labels or the expected disagreement is zero (both raters used one and the same
        label).

    Raises:
        ValueError: When the arrays differ in length or hold a label outside ``labels``.
    """
    if len(y1) != len(y2):
        raise ValueError(f"y1 and y2 differ in length ({len(y1)} and {len(y2)})")
    a, b = _codes_of(y1, labels, "y1"), _codes_of(y2, labels, "y2")
    return _kappa_estimate(a, b, len(labels), weights)


def _kappa_estimate(a: np.ndarray, b: np.ndarray, n_values: int, weights: KappaWeights) -> Estimate:
    from sklearn.metrics import cohen_kappa_score

    both = (a >= 0) & (b >= 0)
    n = int(both.sum())
    if n == 0:
        return undefined("no item has a substantive label from both raters")
    conf = confusion_rows(a, b, n_values).sum(axis=0).reshape(1, n_values, n_values)
    _, defined = kappa_from_confusion(conf, weights)
    if not defined[0]:
        used = sorted(set(a[both].tolist()) | set(b[both].tolist()))
        return undefined(
            f"expected disagreement is zero: both raters used only label code(s) {used} on {n} items", n
        )
    value = float(
        cohen_kappa_score(
            a[both], b[both], labels=list(range(n_values)), weights=None if weights == "none" else weights
        )
    )
    return Estimate(value=value, n=n)


def krippendorff_alpha(
    reliability_data: Sequence[Sequence[object]],
    *,
    labels: Sequence[object],
    level: Level = "nominal",
) -> Estimate:
    """Krippendorff's alpha (the ``krippendorff`` package) for raters × items data with missing values.

    Args:
        reliability_data: One row per rater, one column per item; ``None`` (or NaN) is a missing value.
        labels: The ordered value domain. For ``interval`` and ``ratio`` the labels must be numbers.
        level: ``nominal``, ``ordinal``, ``interval`` or ``ratio``.

    Returns:
        Alpha (1 perfect, 0 chance, below 0 systematic disagreement), with ``n`` the number of items
        with at least two values. Undefined when fewer than two pairable values exist or every pairable
        value is the same (no expected disagreement).

    Raises:
        ValueError: When a value is outside ``labels`` or the level needs numbers the labels are not.
    """
    codes = np.stack([_codes_of(row, labels, f"rater {k}") for k, row in enumerate(reliability_data)])
    numeric: tuple[float, ...] | None = None
    if level in ("interval", "ratio"):
        try:
            numeric = tuple(float(v) for v in labels)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise ValueError(f"level {level!r} needs numeric labels, got {list(labels)}") from None
    return _alpha_estimate(codes, len(labels), level, numeric)


def _alpha_estimate(
    codes: np.ndarray, n_values: int, level: Level, numeric: tuple[float, ...] | None
) -> Estimate:
    try:
        import krippendorff
    except ImportError:
        return undefined(
            "the krippendorff package (GPL-3.0-or-later) is not installed; install it to report alpha"
        )

    rows = coincidence_rows(codes, n_values)
    pairable = int(((codes >= 0).sum(axis=0) >= 2).sum())
    if pairable == 0:
        return undefined("no item has two or more substantive labels")
    o = rows.sum(axis=0).reshape(1, n_values, n_values)
    _, defined = alpha_from_coincidence(o, level, numeric)
    if not defined[0]:
        return undefined(
            f"no expected disagreement: every pairable value on {pairable} items is the same", pairable
        )
    keep = (codes >= 0).sum(axis=0) >= 2
    sub = codes[:, keep].astype(float)
    if numeric is not None and level in ("interval", "ratio"):
        domain = np.asarray(numeric, dtype=float)
        data = np.where(sub >= 0, domain[np.clip(sub, 0, None).astype(np.int64)], np.nan)
    else:
        domain = np.arange(n_values, dtype=float)
        data = np.where(sub >= 0, sub, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = float(krippendorff.alpha(data, value_domain=domain, level_of_measurement=level))
    return Estimate(value=value, n=pairable)


def fleiss_kappa(counts: Sequence[Sequence[int]] | np.ndarray) -> Estimate:
    """Fleiss' kappa from an items × categories table of rater counts (same number of raters per item).

    Args:
        counts: ``counts[i][j]`` is how many raters put item ``i`` in category ``j``; every row sums to
            the same number of raters ``m >= 2``.

    Returns:
        Kappa (1 perfect, 0 chance); undefined when there are no items or every rating is in one
        category.

    Raises:
        ValueError: When rows have different totals, a count is negative, or ``m < 2``.
    """
    c = np.asarray(counts, dtype=float)
    if c.ndim != 2 or c.shape[0] == 0:
        return undefined("no items")
    if (c < 0).any():
        raise ValueError("counts must be non-negative")
    totals = c.sum(axis=1)
    if not np.all(totals == totals[0]):
        raise ValueError("every item needs the same number of raters for Fleiss' kappa")
    m = int(totals[0])
    if m < 2:
        raise ValueError(f"Fleiss' kappa needs at least two raters per item, got {m}")
    stats = np.concatenate(
        [[((c**2).sum(axis=1) - m).sum() / (m * (m - 1.0)), float(c.shape[0])], c.sum(axis=0)]
    )[None, :]
    value, defined = _fleiss_from(stats, m)
    if not defined[0]:
        return undefined("every rating is in one category (no expected disagreement)", c.shape[0])
    return Estimate(value=float(value[0]), n=c.shape[0])


def gwet_ac1(reliability_data: Sequence[Sequence[object]], *, labels: Sequence[object]) -> Estimate:
    """Gwet's AC1 (multi-rater form) for raters × items data with missing values.

    AC1 = (pa − pe) / (1 − pe) (Gwet 2008) with pa the mean per-item pairwise agreement over items with
    two or more labels and pe = Σ π_k (1 − π_k) / (q − 1), π_k the mean share of label k over items with
    at least one label.
    Unlike kappa it stays stable when one label dominates.

    Args:
        reliability_data: One row per rater, one column per item; ``None`` is missing.
        labels: The label domain (``q = len(labels)``, at least 2).

    Returns:
        AC1 in [−1, 1]; undefined when no item has two labels.

    Raises:
        ValueError: When a value is outside ``labels`` or fewer than two labels are given.
    """
    if len(labels) < 2:
        raise ValueError("AC1 needs a domain of at least two labels")
    codes = np.stack([_codes_of(row, labels, f"rater {k}") for k, row in enumerate(reliability_data)])
    return _ac1_estimate(codes, len(labels))


def _ac1_estimate(codes: np.ndarray, n_values: int) -> Estimate:
    rows = _ac1_rows(codes, n_values)
    value, defined = ac1_from(rows.sum(axis=0)[None, :])
    n = int(rows[:, 1].sum())
    if not defined[0]:
        return undefined("no item has two or more substantive labels", n)
    return Estimate(value=float(value[0]), n=n)


def binary_metrics(
    y_true: Sequence[object],
    y_pred: Sequence[object],
    *,
    labels: Sequence[object],
    positive: Sequence[object],
    confidence: float = 0.95,
) -> BinaryMetrics:
    """Failure detection of ``y_pred`` against the reference ``y_true``, ``positive`` labels as failures.

    Args:
        y_true: Reference labels (``None`` for missing; items either left blank are skipped).
        y_pred: Rated labels, aligned with ``y_true``.
        labels: The label domain.
        positive: The labels that count as the positive class (a failure), a non-empty proper subset.
        confidence: Two-sided confidence level of the Wilson intervals.

    Returns:
        Counts and rates; each rate is undefined (with the reason) when its denominator is zero. F1 has
        no interval here (the calibration report adds a case bootstrap).

    Raises:
        ValueError: When the arrays differ in length, hold a label outside ``labels``, or ``positive``
            is empty, not in ``labels``, or all of them.
    """
    if len(y_true) != len(y_pred):
        raise ValueError(f"y_true and y_pred differ in length ({len(y_true)} and {len(y_pred)})")
    if not positive or any(p not in labels for p in positive) or len(set(positive)) >= len(set(labels)):
        raise ValueError("positive must be a non-empty proper subset of labels")
    a, b = _codes_of(y_true, labels, "y_true"), _codes_of(y_pred, labels, "y_pred")
    pos = np.array([x in positive for x in labels])
    tp, fn, tn, fp = (int(x) for x in binary_rows(a, b, pos).sum(axis=0))
    return _binary_metrics(tp, fn, tn, fp, n=tp + fn + tn + fp, confidence=confidence)


def _binary_metrics(tp: int, fn: int, tn: int, fp: int, *, n: int, confidence: float) -> BinaryMetrics:
    """:class:`BinaryMetrics` of failure-positive counts over ``n`` items both labelled (Wilson rates, F1)."""
    f1_value, f1_defined = f1_from(np.array([[tp, fn, tn, fp]], dtype=float))
    return BinaryMetrics(
        tp=tp,
        fn=fn,
        tn=tn,
        fp=fp,
        tpr=rate(tp, tp + fn, confidence=confidence, what="reference failures"),
        tnr=rate(tn, tn + fp, confidence=confidence, what="reference non-failures"),
        precision=rate(tp, tp + fp, confidence=confidence, what="flagged failures"),
        f1=Estimate(value=float(f1_value[0]), n=tp + fn + fp)
        if f1_defined[0]
        else undefined("no reference failures and no flagged failures (2TP + FP + FN = 0)"),
        base_rate=rate(tp + fn, n, confidence=confidence, what="items both labelled"),
    )


# --------------------------------------------------------------------------------------------------
# Vectorised case bootstrap


@dataclass(frozen=True)
class BootstrapStat:
    """A statistic the bootstrap can resample: per-case additive counts and a batched formula.

    Attributes:
        name: Identifier of the statistic.
        per_case: ``(C, d)`` counts per case; a resample's counts are the weighted sum over cases.
        formula: Maps ``(B, d)`` summed counts to ``(values, defined)`` arrays of shape ``(B,)``.
    """

    name: str
    per_case: np.ndarray
    formula: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def resample_weights(n_cases: int, n_resamples: int, seed: int, *, block: int = 256) -> Iterator[np.ndarray]:
    """Yield blocks of bootstrap weights: each row counts how often each case is drawn (sums to ``C``).

    Args:
        n_cases: Number of cases ``C`` (at least 1).
        n_resamples: Total resamples ``B``.
        seed: Seed of the generator (same seed, same resamples).
        block: Rows per yielded block (bounds memory at ``block × C``).
    """
    rng = np.random.default_rng(seed)
    done = 0
    while done < n_resamples:
        size = min(block, n_resamples - done)
        # draw n_cases cases with replacement per resample, then count draws per case (row-wise bincount)
        drawn = rng.integers(0, n_cases, size=(size, n_cases)) + np.arange(size)[:, None] * n_cases
        yield np.bincount(drawn.ravel(), minlength=size * n_cases).reshape(size, n_cases).astype(float)
        done += size


def bootstrap(
    stats: Sequence[BootstrapStat], *, n_cases: int, n_resamples: int, seed: int
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Resample cases ``n_resamples`` times and evaluate every statistic on the same resamples.

    Returns:
        For each statistic name, ``(values, defined)`` arrays of shape ``(n_resamples,)``.
    """
    if not stats:
        return {}
    widths = [s.per_case.shape[1] for s in stats]
    stacked = np.concatenate([s.per_case for s in stats], axis=1)
    bounds = np.cumsum([0, *widths])
    values: dict[str, list[np.ndarray]] = {s.name: [] for s in stats}
    masks: dict[str, list[np.ndarray]] = {s.name: [] for s in stats}
    for w in resample_weights(n_cases, n_resamples, seed):
        agg = w @ stacked
        for k, s in enumerate(stats):
            v, d = s.formula(agg[:, bounds[k] : bounds[k + 1]])
            values[s.name].append(v)
            masks[s.name].append(d)
    return {name: (np.concatenate(values[name]), np.concatenate(masks[name])) for name in values}


def percentile_interval(
    values: np.ndarray, defined: np.ndarray, *, confidence: float
) -> tuple[Interval | None, str | None]:
    """Percentile interval of the defined bootstrap values, or ``None`` with the reason."""
    total = values.shape[0]
    ok = values[defined]
    if ok.size == 0:
        return None, f"the statistic is undefined on all {total} bootstrap resamples"
    tail = (1.0 - confidence) / 2.0
    note = None
    if ok.size < total:
        note = f"undefined on {total - ok.size} of {total} resamples; interval from the other {ok.size}"
    low, high = float(np.quantile(ok, tail)), float(np.quantile(ok, 1.0 - tail))
    return Interval(low=low, high=high, confidence=confidence, method="bootstrap", note=note), None


# --------------------------------------------------------------------------------------------------
# Putting it together


@dataclass
class _Pending:
    """Estimates waiting for their bootstrap interval."""

    stats: list[BootstrapStat]
    targets: dict[str, Estimate]


def _alpha_estimates(ratings: Ratings, codes: np.ndarray, tag: str, pending: _Pending) -> dict[str, Estimate]:
    """Krippendorff's alpha of the raters' ``codes`` ``(raters, items)`` at each level of the scale.

    Each defined one waits in ``pending`` for its case-bootstrap interval, named ``<tag>:alpha:<level>``.
    """
    v = ratings.n_values
    numeric = ratings.scale.numeric_values()
    coinc = ratings.by_case(coincidence_rows(codes, v))
    alphas: dict[str, Estimate] = {}
    for level in ratings.scale.levels():
        est = _alpha_estimate(codes, v, level, numeric)
        alphas[level] = est
        if est.defined:
            name = f"{tag}:alpha:{level}"
            pending.stats.append(BootstrapStat(name, coinc, alpha_formula(v, level, numeric)))
            pending.targets[name] = est
    return alphas


def _kappa_variants(scale: Scale) -> tuple[KappaWeights, ...]:
    return ("none",) if scale.level == "nominal" else ("none", "linear", "quadratic")


def _labels_with_abstain(scale: Scale) -> tuple[str, ...]:
    return scale.domain


def confusion_matrix(
    ref_codes: np.ndarray, rated_codes: np.ndarray, scale: Scale, *, reference: str, rated: str
) -> ConfusionMatrix:
    """Counts of (reference, rated) labels over items both labelled, abstentions as their own label."""
    labels = _labels_with_abstain(scale)
    k = len(labels)

    def pos(code: np.ndarray) -> np.ndarray:
        return np.where(code == ABSTAIN, len(scale.values), code)

    both = (ref_codes != MISSING) & (rated_codes != MISSING)
    mat = np.zeros((k, k), dtype=np.int64)
    np.add.at(mat, (pos(ref_codes[both]), pos(rated_codes[both])), 1)
    return ConfusionMatrix(
        labels=labels,
        counts=tuple(tuple(int(x) for x in row) for row in mat),
        reference=reference,
        rated=rated,
    )


def _pair(
    ref: np.ndarray,
    rated: np.ndarray,
    ratings: Ratings,
    *,
    a: str,
    b: str,
    pending: _Pending,
    confidence: float,
    binary: bool,
    on_consensus: bool = False,
) -> PairAgreement:
    scale = ratings.scale
    v = ratings.n_values
    both = (ref >= 0) & (rated >= 0)
    n = int(both.sum())
    tag = f"{a}~{b}"
    pa = rate(int((ref[both] == rated[both]).sum()), n, confidence=confidence, what="items both labelled")
    conf_rows = ratings.by_case(confusion_rows(ref, rated, v))
    kappas: dict[str, Estimate] = {}
    for w in _kappa_variants(scale):
        est = _kappa_estimate(ref, rated, v, w)
        kappas[w] = est
        if est.defined:
            name = f"{tag}:kappa:{w}"
            pending.stats.append(BootstrapStat(name, conf_rows, kappa_formula(v, w)))
            pending.targets[name] = est
    pair_codes = np.stack([ref, rated])
    alphas = _alpha_estimates(ratings, pair_codes, tag, pending)
    # Against the consensus, AC1 uses exactly the items of n and percent agreement: an item with no
    # consensus (the experts tied) or an abstaining consensus leaves the judge's label out of the chance
    # term too. Between two raters, a label the other did not give still counts in the chance term
    # (Gwet's multi-rater form with missing values, as irrCAC computes it).
    ac1_codes = np.where(both, pair_codes, MISSING).astype(pair_codes.dtype) if on_consensus else pair_codes
    ac1 = _ac1_estimate(ac1_codes, v)
    if ac1.defined:
        name = f"{tag}:ac1"
        pending.stats.append(BootstrapStat(name, ratings.by_case(_ac1_rows(ac1_codes, v)), ac1_from))
        pending.targets[name] = ac1
    bin_metrics: BinaryMetrics | None = None
    bin_reason: str | None = None
    if not binary:
        bin_reason = "binary metrics are computed only for the judge"
    elif not scale.positive:
        bin_reason = scale.no_positive_reason
    else:
        positive = np.array([x in scale.positive for x in scale.values])
        rows = binary_rows(ref, rated, positive)
        tp, fn, tn, fp = (int(x) for x in rows.sum(axis=0))
        bin_metrics = _binary_metrics(tp, fn, tn, fp, n=n, confidence=confidence)
        if bin_metrics.f1.defined:
            name = f"{tag}:f1"
            pending.stats.append(BootstrapStat(name, ratings.by_case(rows), f1_from))
            pending.targets[name] = bin_metrics.f1
    return PairAgreement(
        a=a,
        b=b,
        n=n,
        percent_agreement=pa,
        kappa=kappas,
        alpha=alphas,
        ac1=ac1,
        confusion=confusion_matrix(ref, rated, scale, reference=a, rated=b),
        binary=bin_metrics,
        binary_reason=bin_reason,
    )


def _mean_of(estimates: Sequence[Estimate], what: str) -> Estimate:
    if not estimates:
        return undefined(f"no pairs to average {what} over")
    missing = [e for e in estimates if not e.defined]
    if missing:
        return undefined(f"{what} is undefined for {len(missing)} of {len(estimates)} pairs")
    values = [float(e.value) for e in estimates if e.value is not None]
    return Estimate(
        value=float(np.mean(values)),
        n=len(values),
        interval_reason=f"a mean over {len(values)} rater pairs; each pair's value has its own interval",
    )


def _group(
    ratings: Ratings, experts: Sequence[str], pairs: Sequence[PairAgreement], pending: _Pending
) -> GroupAgreement:
    v = ratings.n_values
    codes = np.stack([ratings.row(e) for e in experts])
    alphas = _alpha_estimates(ratings, codes, "experts", pending)
    m = len(experts)
    if m < 3:
        fleiss = undefined(f"Fleiss' kappa is reported for three or more experts; there are {m}")
    else:
        frows = _fleiss_rows(codes, v)
        full = frows[:, 1] > 0
        if not full.any():
            fleiss = undefined("no item has a substantive label from every expert")
        else:
            fleiss = fleiss_kappa(_value_counts(codes[:, full], v))
            if fleiss.defined:
                name = "experts:fleiss"
                pending.stats.append(
                    BootstrapStat(name, ratings.by_case(frows), lambda s: _fleiss_from(s, m))
                )
                pending.targets[name] = fleiss
    ac1 = _ac1_estimate(codes, v)
    if ac1.defined:
        pending.stats.append(BootstrapStat("experts:ac1", ratings.by_case(_ac1_rows(codes, v)), ac1_from))
        pending.targets["experts:ac1"] = ac1
    mean_pairwise = {
        "percent_agreement": _mean_of([p.percent_agreement for p in pairs], "percent agreement"),
        "cohen_kappa": _mean_of([p.kappa["none"] for p in pairs], "Cohen's kappa"),
        "gwet_ac1": _mean_of([p.ac1 for p in pairs], "Gwet's AC1"),
    }
    return GroupAgreement(
        raters=tuple(experts),
        n=int(((codes >= 0).sum(axis=0) >= 2).sum()),
        alpha=alphas,
        fleiss_kappa=fleiss,
        ac1=ac1,
        mean_pairwise=mean_pairwise,
    )


def _attach(obj: _M, intervals: dict[int, Estimate]) -> _M:
    """Replace every Estimate inside ``obj`` whose id is in ``intervals`` by its interval-carrying copy."""
    updates: dict[str, object] = {}
    for name in type(obj).model_fields:
        value = getattr(obj, name)
        new = _replace(value, intervals)
        if new is not value:
            updates[name] = new
    return obj.model_copy(update=updates) if updates else obj


def _replace(value: object, intervals: dict[int, Estimate]) -> object:
    if isinstance(value, Estimate):
        return intervals.get(id(value), value)
    if isinstance(value, FrozenModel):
        return _attach(value, intervals)
    if isinstance(value, dict):
        changed = {k: _replace(x, intervals) for k, x in value.items()}
        return changed if any(changed[k] is not value[k] for k in value) else value
    if isinstance(value, tuple):
        items = tuple(_replace(x, intervals) for x in value)
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    return value


def _rate_mask(mask_num: np.ndarray, mask_den: np.ndarray, confidence: float, what: str) -> Estimate:
    return rate(int((mask_num & mask_den).sum()), int(mask_den.sum()), confidence=confidence, what=what)


def compute_agreement(
    table: LabelTable,
    *,
    judge: str,
    experts: Sequence[str],
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> AgreementReport:
    """Measure a judge against experts on a validated label table.

    Args:
        table: The label table (validated, raters checked by the caller).
        judge: The judge rater.
        experts: The expert raters (at least one).
        confidence: Two-sided confidence level of every interval, in (0, 1).
        resamples: Bootstrap resamples of cases (at least 1).
        seed: Bootstrap seed; the same seed gives the same intervals.

    Returns:
        The agreement report.

    Raises:
        ValueError: When ``experts`` is empty, ``resamples < 1`` or ``confidence`` is outside (0, 1).
    """
    if not experts:
        raise ValueError("at least one expert is needed")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence}")
    scale = table.scale
    ratings = build_ratings(table, [judge, *experts])
    v = ratings.n_values
    judge_codes = ratings.row(judge)
    expert_codes = np.stack([ratings.row(e) for e in experts])
    consensus, split, _ = consensus_codes(expert_codes, v)
    pending = _Pending([], {})
    jc = _pair(
        consensus,
        judge_codes,
        ratings,
        a=CONSENSUS,
        b=judge,
        pending=pending,
        confidence=confidence,
        binary=True,
        on_consensus=True,
    )
    je = tuple(
        _pair(
            ratings.row(e),
            judge_codes,
            ratings,
            a=e,
            b=judge,
            pending=pending,
            confidence=confidence,
            binary=True,
        )
        for e in experts
    )
    ep = tuple(
        _pair(
            ratings.row(x),
            ratings.row(y),
            ratings,
            a=x,
            b=y,
            pending=pending,
            confidence=confidence,
            binary=False,
        )
        for x, y in itertools.combinations(experts, 2)
    )
    group = _group(ratings, experts, ep, pending)

    # abstention
    substantive_ref = consensus >= 0
    has_judge = judge_codes != MISSING
    base = substantive_ref & has_judge
    judged = base & (judge_codes >= 0)
    abstained = base & (judge_codes == ABSTAIN)
    positive = np.array([x in scale.positive for x in scale.values])
    ref_pos = np.zeros_like(base)
    ref_pos[substantive_ref] = positive[consensus[substantive_ref]] if scale.positive else False
    coverage = _rate_mask(judged, base, confidence, "items with a judge label and an expert consensus")
    abstention = _rate_mask(abstained, base, confidence, "items with a judge label and an expert consensus")
    agree_judged = _rate_mask(judge_codes == consensus, judged, confidence, "judged items")
    abst = AbstentionSummary(
        items=int(base.sum()),
        judged=int(judged.sum()),
        coverage=coverage,
        abstention=abstention,
        agreement_on_judged=agree_judged,
        abstention_where_experts_split=_rate_mask(
            judge_codes == ABSTAIN, has_judge & split, confidence, "judged items where the experts split"
        ),
        abstention_where_experts_agree=_rate_mask(
            judge_codes == ABSTAIN,
            has_judge & ~split & (consensus != MISSING),
            confidence,
            "items the experts labelled unanimously",
        ),
        abstention_on_positive=_rate_mask(abstained, base & ref_pos, confidence, "consensus failures")
        if scale.positive
        else undefined(scale.no_positive_reason),
        abstention_on_negative=_rate_mask(abstained, base & ~ref_pos, confidence, "consensus non-failures")
        if scale.positive
        else undefined(scale.no_positive_reason),
        decided_where_experts_abstained=int(((consensus == ABSTAIN) & (judge_codes >= 0)).sum()),
    )

    # intervals
    boot = bootstrap(pending.stats, n_cases=len(ratings.cases), n_resamples=resamples, seed=seed)
    by_id: dict[int, Estimate] = {}
    for name, est in pending.targets.items():
        interval, reason = percentile_interval(*boot[name], confidence=confidence)
        by_id[id(est)] = est.with_interval(interval, reason)
    jc = _attach(jc, by_id)
    je = tuple(_attach(p, by_id) for p in je)
    ep = tuple(_attach(p, by_id) for p in ep)
    group = _attach(group, by_id)

    # items
    decode: dict[int, str] = dict(enumerate(scale.values))
    if scale.abstain is not None:
        decode[ABSTAIN] = scale.abstain
    confid = table.confidences(judge)
    records: list[ItemRecord] = []
    for j, key in enumerate(ratings.items):
        labels = {
            e: decode[int(expert_codes[k, j])] for k, e in enumerate(experts) if expert_codes[k, j] != MISSING
        }
        records.append(
            ItemRecord(
                item_id=key.item_id,
                criterion=key.criterion,
                case_id=ratings.cases[int(ratings.case_index[j])],
                judge=decode.get(int(judge_codes[j])),
                experts=labels,
                consensus=decode.get(int(consensus[j])),
                split=bool(split[j]),
                confidence=confid.get(key),
            )
        )
    notes = list(table.notes)
    no_judge = int((~has_judge).sum())
    if no_judge:
        notes.append(
            f"{no_judge} item(s) have expert labels but no judge label; they count only among experts"
        )
    no_cons = int(((consensus == MISSING) & ((expert_codes != MISSING).any(axis=0))).sum())
    if no_cons:
        notes.append(
            f"{no_cons} item(s) have tied expert labels (no consensus); "
            "they are left out of judge vs consensus"
        )
    others = sorted(set(table.raters) - {judge, *experts})
    if others:
        notes.append(f"rater(s) not used: {', '.join(others)}")
    return AgreementReport(
        judge=judge,
        experts=tuple(experts),
        scale=scale,
        n_items=len(ratings.items),
        n_cases=len(ratings.cases),
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        judge_vs_consensus=jc,
        judge_vs_experts=je,
        expert_pairs=ep,
        expert_group=group,
        abstention=abst,
        no_consensus=no_cons,
        splits=tuple(r for r in records if r.split),
        items=tuple(records),
        notes=tuple(notes),
    )
