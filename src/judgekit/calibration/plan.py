"""Label planning: how many expert labels per class are still needed before a judge *can* be certified.

The trust gate (:mod:`judgekit.calibration.gate`) compares the lower bound of the two-sided Wilson interval
of TPR (failures caught) and TNR with the policy's thresholds. A judge of true accuracy ``p`` on a class can
only clear a threshold ``b`` once there are enough labelled items of that class for the interval to be
narrow enough. This module does that arithmetic ahead of labelling:

* :func:`labels_needed` is the smallest number ``n`` of labelled items of one class such that a judge that
  is right on ``floor(p · n)`` of them (the expected count, rounded down) has a Wilson lower bound of at
  least ``b`` at the policy's confidence. With ``assurance`` set it is instead the smallest ``n`` for which a
  judge of true accuracy ``p`` clears the bound with at least that probability (exact binomial).
  A perfect judge at 95 % needs 16 labels for ``b = 0.80``: ``16 / (16 + 1.96²) = 0.806`` while
  ``15 / (15 + 1.96²) = 0.796``.
* A bound that can never be met is said so, with the reason: a threshold of 1 or more (a Wilson lower
  bound is below 1 for every finite sample), or an expected accuracy at or below the threshold (the lower
  bound tends to ``p`` from below, so it never reaches ``b ≥ p``).
* :func:`plan_labels` applies this to a whole policy and to the labels already collected (per criterion and
  overall), and says what to label next: the classes and criteria that are short, and how many randomly
  sampled production items that takes at the expected failure rate.

Everything here is pure; nothing reads files.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from judgekit.calibration.corrected import LeeAllocation
from judgekit.calibration.labels import ItemKey, LabelTable, default_experts
from judgekit.stats import normal_quantile, scipy_stats
from judgekit.verdict import FrozenModel

__all__ = [
    "ClassNeed",
    "CriterionAllocation",
    "CriterionPlan",
    "LabelPlan",
    "LabelPlanDocument",
    "PlanSettings",
    "expert_consensus",
    "labels_needed",
    "plan_labels",
    "wilson_lower_bounds",
]

MAX_SEARCH = 1_000_000
"""Largest sample size :func:`labels_needed` searches before it gives up (reported, never silent)."""


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence}")
    return normal_quantile(confidence)


def wilson_lower_bounds(successes: np.ndarray, n: np.ndarray, *, confidence: float) -> np.ndarray:
    """Vectorised lower bound of the two-sided Wilson interval, as :func:`judgekit.stats.wilson_interval`.

    Args:
        successes: Successes per sample, ``0 <= successes <= n``.
        n: Sample sizes, ``n >= 1``.
        confidence: Two-sided confidence in (0, 1).

    Returns:
        The lower bounds (0 where ``successes == 0``).
    """
    z = _z(confidence)
    k = np.asarray(successes, dtype=float)
    m = np.asarray(n, dtype=float)
    p = k / m
    denom = 1.0 + z * z / m
    centre = (p + z * z / (2.0 * m)) / denom
    half = z * np.sqrt(p * (1.0 - p) / m + z * z / (4.0 * m * m)) / denom
    low = np.maximum(0.0, centre - half)
    return np.where(k == 0, 0.0, low)


class ClassNeed(FrozenModel):
    """How many labelled items one class (failures for TPR, passes for TNR) needs.

    Attributes:
        rate: ``tpr`` (the class is consensus failures) or ``tnr`` (consensus passes).
        label: The consensus label of the class (``fail`` or ``pass``).
        bound: The policy's lower-bound threshold.
        expected: The judge's expected rate on the class (its accuracy there), in [0, 1].
        required: Labelled items of the class needed in total; ``None`` when the bound can never be met.
        have: Items of the class already labelled (with a substantive expert consensus).
        still_needed: ``max(0, required - have)`` scaled up for the judge's expected coverage; ``None``
            when the bound can never be met.
        achievable: False when no number of labels can meet the bound at the expected rate.
        reason: Why the bound can never be met (``""`` when it can).
    """

    rate: Literal["tpr", "tnr"]
    label: str
    bound: float
    expected: float
    required: int | None
    have: int = 0
    still_needed: int | None = None
    achievable: bool = True
    reason: str = ""


class CriterionPlan(FrozenModel):
    """The plan for one criterion (``""`` for the whole table).

    Attributes:
        criterion: The criterion, or ``""`` for every item together (what the single trust gate uses).
        needs: One entry per enabled rate condition.
        items_have: Items with a substantive expert consensus.
        min_items_short: Items still needed to reach the policy's ``min_items`` (0 when met or disabled).
        random_items_to_label: Expected number of randomly sampled production items to label so that every
            class reaches its requirement at the expected failure rate; ``None`` when some bound can never be
            met or the failure rate is 0 or 1 and a class is short.
    """

    criterion: str
    needs: tuple[ClassNeed, ...]
    items_have: int
    min_items_short: int
    random_items_to_label: int | None

    @property
    def achievable(self) -> bool:
        """True when every rate condition can be met at the expected accuracy."""
        return all(n.achievable for n in self.needs)

    @property
    def short(self) -> bool:
        """True when some class or ``min_items`` is still short."""
        return self.min_items_short > 0 or any((n.still_needed or 0) > 0 for n in self.needs)


class PlanSettings(FrozenModel):
    """What the plan assumes about the judge and the production stream.

    Attributes:
        expected_tpr: The judge's expected TPR (share of failures it catches), in [0, 1].
        expected_tnr: The judge's expected TNR, in [0, 1].
        expected_coverage: Share of items on which the judge gives a verdict rather than abstaining, in
            (0, 1]; abstentions do not count towards TPR or TNR, so needs are divided by it.
        failure_rate: Expected share of failures in a random production sample, in [0, 1]; turns per-class
            needs into a number of random items to label.
        assurance: When set, plan for the probability (in (0, 1)) that a judge of the expected accuracy
            actually clears the bound; when ``None``, plan at the expected count ``floor(p · n)``.
    """

    expected_tpr: float = Field(default=0.95, ge=0.0, le=1.0)
    expected_tnr: float = Field(default=0.95, ge=0.0, le=1.0)
    expected_coverage: float = Field(default=1.0, gt=0.0, le=1.0)
    failure_rate: float = Field(default=0.2, ge=0.0, le=1.0)
    assurance: float | None = Field(default=None, gt=0.0, lt=1.0)


class LabelPlan(FrozenModel):
    """The whole plan.

    Attributes:
        confidence: The policy's two-sided confidence.
        settings: The assumptions.
        overall: The plan for every item together (the single trust gate).
        criteria: One plan per criterion in the table, shortest first (what to label next).
        achievable: False when some bound can never be met at the expected accuracy.
        next_steps: Plain sentences: what to label next, or why the policy can never be met.
    """

    confidence: float
    settings: PlanSettings
    overall: CriterionPlan
    criteria: tuple[CriterionPlan, ...] = ()
    achievable: bool
    next_steps: tuple[str, ...]


def _never(bound: float, expected: float) -> str:
    if bound >= 1.0:
        return (
            f"a lower bound of {bound:g} can never be met: the Wilson lower bound is below 1 for every "
            "finite number of labels, even for a judge that is always right"
        )
    if expected <= bound:
        return (
            f"a judge expected to be right on {expected:.1%} of the class can never show a lower bound of "
            f"{bound:.3f}: the lower bound approaches the judge's rate from below and never reaches a "
            "threshold at or above it. Lower the threshold or improve the judge"
        )
    return ""


def labels_needed(
    bound: float,
    expected: float,
    *,
    confidence: float = 0.95,
    assurance: float | None = None,
    max_n: int = MAX_SEARCH,
) -> int | None:
    """Smallest number of labelled items of one class that lets a judge clear a lower-bound threshold.

    Args:
        bound: The threshold the Wilson lower bound must reach, in [0, 1].
        expected: The judge's expected rate on the class, in [0, 1].
        confidence: The interval's two-sided confidence, in (0, 1).
        assurance: ``None`` plans at the expected count ``floor(expected · n)``; a probability in (0, 1)
            plans for a judge of true rate ``expected`` to clear the bound with at least that probability.
        max_n: Largest ``n`` searched.

    Returns:
        The smallest such ``n`` (at least 1), or ``None`` when the bound can never be met (see the module
        docs) or is not met by ``max_n``.

    Raises:
        ValueError: When an argument is out of range.

    Examples:
        >>> labels_needed(0.80, 1.0)
        16
        >>> labels_needed(0.80, 0.80) is None
        True
    """
    if not 0.0 <= bound <= 1.0:
        raise ValueError(f"bound must be in [0, 1], got {bound}")
    if not 0.0 <= expected <= 1.0:
        raise ValueError(f"expected must be in [0, 1], got {expected}")
    if assurance is not None and not 0.0 < assurance < 1.0:
        raise ValueError(f"assurance must be strictly between 0 and 1, got {assurance}")
    _z(confidence)
    if bound <= 0.0:
        return 1
    if _never(bound, expected):
        return None
    start = 1
    while start <= max_n:
        stop = min(max_n, start * 4 + 64)
        n = np.arange(start, stop + 1)
        if assurance is None:
            k = np.floor(expected * n + 1e-9)
            ok = wilson_lower_bounds(k, n, confidence=confidence) >= bound - 1e-12
        else:
            # smallest k with a lower bound >= bound, for each n (the lower bound increases with k)
            kmin = _min_successes(n, bound, confidence)
            prob = np.where(kmin >= 0, scipy_stats().binom.sf(kmin - 1, n, expected), 0.0)
            ok = prob >= assurance
        hits = np.flatnonzero(ok)
        if hits.size:
            return int(n[hits[0]])
        start = stop + 1
    return None


def _min_successes(n: np.ndarray, bound: float, confidence: float) -> np.ndarray:
    """Smallest success count whose Wilson lower bound reaches ``bound``, per ``n`` (-1 when none does)."""
    lo = np.zeros(n.shape, dtype=np.int64)
    hi = n.astype(np.int64).copy()
    possible = wilson_lower_bounds(hi, n, confidence=confidence) >= bound - 1e-12
    # binary search on k in [0, n]: the lower bound is increasing in k
    while True:
        active = lo < hi
        if not active.any():
            break
        mid = (lo + hi) // 2
        ok = wilson_lower_bounds(mid, n, confidence=confidence) >= bound - 1e-12
        hi = np.where(active & ok, mid, hi)
        lo = np.where(active & ~ok, mid + 1, lo)
    return np.where(possible, lo, -1)


def expert_consensus(table: LabelTable, experts: Sequence[str]) -> dict[ItemKey, str]:
    """The experts' majority label per item (substantive labels only; ties and abstentions left out)."""
    scale = table.scale
    votes: dict[ItemKey, dict[str, int]] = {}
    wanted = set(experts)
    for row in table.rows:
        if row.rater not in wanted or row.label not in scale.values:
            continue
        counts = votes.setdefault(row.item, {})
        counts[row.label] = counts.get(row.label, 0) + 1
    out: dict[ItemKey, str] = {}
    for item, counts in votes.items():
        ranked = sorted(counts.items(), key=lambda kv: -kv[1])
        if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
            continue
        out[item] = ranked[0][0]
    return out


def _class_need(  # noqa: PLR0917 - private helper
    rate: Literal["tpr", "tnr"],
    label: str,
    bound: float,
    expected: float,
    have: int,
    confidence: float,
    settings: PlanSettings,
) -> ClassNeed:
    reason = _never(bound, expected)
    required = (
        None
        if reason
        else labels_needed(bound, expected, confidence=confidence, assurance=settings.assurance)
    )
    if required is None and not reason:
        reason = f"not met within {MAX_SEARCH} labels at the expected rate {expected:.3f}"
    still = None
    if required is not None:
        still = math.ceil(max(0, required - have) / settings.expected_coverage)
    return ClassNeed(
        rate=rate,
        label=label,
        bound=bound,
        expected=expected,
        required=required,
        have=have,
        still_needed=still,
        achievable=required is not None,
        reason=reason,
    )


def _criterion_plan(
    criterion: str,
    consensus: Sequence[str],
    *,
    positive: tuple[str, ...],
    tpr_bound: float | None,
    tnr_bound: float | None,
    min_items: int | None,
    confidence: float,
    settings: PlanSettings,
) -> CriterionPlan:
    n_fail = sum(1 for c in consensus if c in positive)
    n_pass = len(consensus) - n_fail
    fail_label = positive[0] if positive else "fail"
    needs: list[ClassNeed] = []
    if tpr_bound is not None:
        needs.append(
            _class_need("tpr", fail_label, tpr_bound, settings.expected_tpr, n_fail, confidence, settings)
        )
    if tnr_bound is not None:
        needs.append(
            _class_need("tnr", "pass", tnr_bound, settings.expected_tnr, n_pass, confidence, settings)
        )
    short_items = max(0, (min_items or 0) - len(consensus))
    random_items: int | None = 0
    for need in needs:
        if need.still_needed is None:
            random_items = None
            break
        if need.still_needed == 0:
            continue
        share = settings.failure_rate if need.rate == "tpr" else 1.0 - settings.failure_rate
        if share <= 0.0:
            random_items = None
            break
        if random_items is not None:
            random_items = max(random_items, math.ceil(need.still_needed / share))
    if random_items is not None:
        random_items = max(random_items, short_items)
    return CriterionPlan(
        criterion=criterion,
        needs=tuple(needs),
        items_have=len(consensus),
        min_items_short=short_items,
        random_items_to_label=random_items,
    )


def plan_labels(
    *,
    tpr_bound: float | None,
    tnr_bound: float | None,
    confidence: float,
    min_items: int | None = None,
    settings: PlanSettings | None = None,
    table: LabelTable | None = None,
    experts: Sequence[str] | None = None,
) -> LabelPlan:
    """Plan the labels a policy still needs, overall and per criterion.

    Args:
        tpr_bound: The policy's ``tpr_lower_bound`` (``None`` when disabled).
        tnr_bound: The policy's ``tnr_lower_bound`` (``None`` when disabled).
        confidence: The policy's two-sided confidence.
        min_items: The policy's ``min_items`` (``None`` when disabled).
        settings: Expected judge accuracy, coverage and failure rate.
        table: Labels already collected (optional); only its experts' consensus counts.
        experts: The experts in ``table`` (``None``: its one rater, refused when it holds several or one
            that looks like a model: :func:`judgekit.calibration.labels.default_experts`).

    Returns:
        The plan, with plain next steps.
    """
    settings = settings or PlanSettings()
    positive = table.scale.positive if table is not None else ("fail",)
    consensus: dict[ItemKey, str] = {}
    if table is not None:
        consensus = expert_consensus(table, experts if experts is not None else default_experts(table, ()))
    common = {
        "positive": positive or ("fail",),
        "tpr_bound": tpr_bound,
        "tnr_bound": tnr_bound,
        "min_items": min_items,
        "confidence": confidence,
        "settings": settings,
    }
    overall = _criterion_plan("", list(consensus.values()), **common)  # type: ignore[arg-type]
    criteria: list[CriterionPlan] = []
    names = sorted({k.criterion for k in consensus if k.criterion})
    for name in names:
        labels = [v for k, v in consensus.items() if k.criterion == name]
        criteria.append(_criterion_plan(name, labels, **common))  # type: ignore[arg-type]
    criteria.sort(key=lambda p: (-(p.random_items_to_label or 0), p.criterion))
    achievable = overall.achievable
    steps: list[str] = []
    for need in overall.needs:
        if not need.achievable:
            steps.append(f"{need.rate.upper()} >= {need.bound:g}: never met. {need.reason}.")
    if achievable:
        steps.extend(_steps(overall, settings))
        for plan in criteria:
            if plan.short:
                steps.extend(_steps(plan, settings))
        if not any(p.short for p in (overall, *criteria)):
            steps.append("enough labels: every class meets its requirement at the expected accuracy")
    return LabelPlan(
        confidence=confidence,
        settings=settings,
        overall=overall,
        criteria=tuple(criteria),
        achievable=achievable,
        next_steps=tuple(steps),
    )


def _steps(plan: CriterionPlan, settings: PlanSettings) -> list[str]:
    where = f"criterion {plan.criterion!r}" if plan.criterion else "overall"
    out: list[str] = []
    for need in plan.needs:
        if need.still_needed:
            what = "failures (TPR)" if need.rate == "tpr" else "passes (TNR)"
            out.append(
                f"{where}: label {need.still_needed} more consensus {what}; have {need.have}, "
                f"need {need.required} for a lower bound >= {need.bound:g} at expected "
                f"{need.rate.upper()} {need.expected:.2f}"
            )
    if plan.min_items_short:
        out.append(f"{where}: {plan.min_items_short} more items to reach the policy's min_items")
    if out and plan.random_items_to_label:
        out.append(
            f"{where}: about {plan.random_items_to_label} randomly sampled production items at a failure "
            f"rate of {settings.failure_rate:.0%}"
        )
    return out


class CriterionAllocation(FrozenModel):
    """Lee et al.'s split of a label budget for one criterion; printed flat (``criterion``, then the split).

    Attributes:
        criterion: The criterion (``""`` when the table has no criteria).
        allocation: The split (:class:`~judgekit.calibration.corrected.LeeAllocation`).
    """

    criterion: str
    allocation: LeeAllocation

    @model_serializer(mode="wrap")
    def _flat(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {"criterion": data["criterion"], **data["allocation"]}


class LabelPlanDocument(LabelPlan):
    """A label plan with, when asked for, the split of a label budget (the ``label_plan`` document).

    Attributes:
        allocation: One split per criterion (``--budget`` and ``--pass-share``), or ``None`` when no
            budget was given (the field is then left out of the document).
    """

    allocation: list[CriterionAllocation] | None = Field(default=None, exclude_if=lambda value: value is None)

    @classmethod
    def of(cls, plan: LabelPlan, allocation: list[tuple[str, LeeAllocation]] | None) -> LabelPlanDocument:
        """The document of ``plan`` and its budget split.

        Args:
            plan: The label plan.
            allocation: ``(criterion, split)`` per criterion, or ``None`` without a budget.

        Returns:
            The plan's fields, then the split when there is one.
        """
        splits = (
            None
            if allocation is None
            else [CriterionAllocation(criterion=c, allocation=a) for c, a in allocation]
        )
        return cls(**dict(plan), allocation=splits)
