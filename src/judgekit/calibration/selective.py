"""Selective judging: judge only where the judge is shown to agree with experts, and escalate the rest.

* :func:`selective_threshold`: the lowest confidence threshold at which the judge's agreement with experts
  on the items it keeps is at least a target with probability at least ``1 - delta``, by fixed-sequence
  testing with an exact binomial test, and the coverage left. It works on any real confidence scale
  (higher means more confident): a judge's stated confidence, the agreement of its samples, a
  log-probability.
* :func:`fit_cascade`: Trust or Escalate (Jung, Brahman and Choi, ICLR 2025): judges ordered cheap to
  strong, each with a threshold fitted on the calibration items the earlier stages passed on, at
  ``delta / k`` each so that the whole cascade keeps its promise with probability at least ``1 - delta``;
  what no judge keeps goes to a human. The fitted :class:`~judgekit.judges.cascade.Cascade` is what
  ``judgekit grade --cascade`` routes with (:func:`judgekit.judges.cascade.route`).

The candidate thresholds depend on the confidences only, never on correctness: that is what makes the
fixed sequence valid. They start at the strictest threshold that keeps at least :func:`min_items` items
(fewer could not show the target even if the judge were right on every one, so testing them would only
end the sequence) and step down a fixed grid of kept-item counts to the loosest (keep everything).

All functions are pure and return undefined values (``None`` with a reason) rather than NaN.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from judgekit import lazy
from judgekit.calibration.agreement import compute_agreement, rate, undefined
from judgekit.errors import JudgekitError
from judgekit.judges.cascade import Cascade, CascadeStage
from judgekit.stats import Estimate, Interval, scipy_stats
from judgekit.verdict import FrozenModel

if TYPE_CHECKING:
    import numpy as np

    from judgekit.calibration.labels import LabelTable
else:
    np = lazy.module("numpy")  # imported at its first use: grading's start does not wait for it

__all__ = [
    "DEFAULT_GRID",
    "CascadeDocument",
    "SelectiveResult",
    "SelectiveStep",
    "candidate_thresholds",
    "cascade_from_table",
    "fit_cascade",
    "min_items",
    "selective_threshold",
]

DEFAULT_GRID = 20
"""Steps of the kept-item grid between :func:`min_items` and all items."""


class SelectiveStep(FrozenModel):
    """One threshold tested in the fixed sequence.

    Attributes:
        threshold: Items with confidence at or above it are judged.
        judged: Items kept.
        agreed: Kept items where the judge equals the consensus.
        p_value: Exact one-sided binomial p-value of H0: agreement < target.
        rejected: True when ``p_value <= delta`` (agreement shown to reach the target).
    """

    threshold: float
    judged: int
    agreed: int
    p_value: float
    rejected: bool


class SelectiveResult(FrozenModel):
    """The chosen confidence threshold and what it leaves.

    Attributes:
        target_agreement: The agreement the judged items must reach.
        delta: Probability that the guarantee fails.
        threshold: The lowest threshold whose test (and every stricter one) rejected; ``None`` when even
            the strictest failed or there are too few items to test (``reason`` says why).
        coverage: Share of items the judge keeps at ``threshold`` (Wilson interval).
        agreement: Agreement on the kept items, with its one-sided exact lower bound as the interval's
            ``low``.
        steps: Every threshold tested, in order, up to and including the first that failed.
        reason: Why no threshold was chosen.
    """

    target_agreement: float
    delta: float
    threshold: float | None
    coverage: Estimate
    agreement: Estimate
    steps: tuple[SelectiveStep, ...]
    reason: str | None = None


def min_items(target: float, delta: float) -> int:
    """The fewest kept items that could show agreement ≥ ``target`` at level ``delta``.

    With ``n`` items all agreeing the exact p-value is ``target ** n``; this is the smallest ``n`` with
    ``target ** n <= delta`` (29 for target 0.9 and delta 0.05).

    Raises:
        ValueError: When ``target`` or ``delta`` is outside (0, 1).
    """
    if not 0.0 < target < 1.0 or not 0.0 < delta < 1.0:
        raise ValueError("target and delta must be strictly between 0 and 1")
    n = max(1, math.ceil(math.log(delta) / math.log(target) - 1e-12))
    while target**n > delta:  # guard the floating-point ceiling
        n += 1
    return n


def candidate_thresholds(
    confidence: Sequence[float] | np.ndarray, *, n_min: int, grid: int = DEFAULT_GRID
) -> list[float]:
    """The fixed sequence of thresholds, strictest first, chosen from the confidences alone.

    The kept-item counts ``n_min, n_min + s, n_min + 2s, ...`` and finally all items, with
    ``s = ceil((N - n_min) / grid)``, each give the threshold that keeps at least that many items (the
    count-th highest confidence); ties can make two counts give one threshold, which is tested once.

    Args:
        confidence: The confidences (finite, any scale, higher = more confident).
        n_min: The first kept-item count (:func:`min_items`).
        grid: Steps between ``n_min`` and all items (``>= 1``).

    Returns:
        Distinct thresholds, in decreasing order; empty when there are fewer than ``n_min`` items.
    """
    order = np.sort(np.asarray(confidence, dtype=float))[::-1]
    total = int(order.size)
    if total < n_min or total == 0:
        return []
    step = max(1, math.ceil((total - n_min) / max(1, grid)))
    counts = [*range(max(1, n_min), total, step), total]
    out: list[float] = []
    for m in counts:
        t = float(order[m - 1])
        if not out or t < out[-1]:
            out.append(t)
    return out


def selective_threshold(
    confidence: Sequence[float] | np.ndarray,
    correct: Sequence[bool] | np.ndarray,
    *,
    target: float = 0.90,
    delta: float = 0.05,
    interval_confidence: float = 0.95,
    population: int | None = None,
    grid: int = DEFAULT_GRID,
) -> SelectiveResult:
    """Pick the judge's confidence threshold by fixed-sequence testing with an exact binomial bound.

    The candidate thresholds are :func:`candidate_thresholds`, tested from strictest to loosest. At
    threshold t the judge keeps items with confidence ≥ t; H0(t) says its agreement on them is below
    ``target``, tested with the exact binomial tail P(Bin(n_t, target) ≥ k_t). Testing stops at the first
    H0 not rejected at level ``delta``; because the order is fixed before looking at correctness, the
    chance that any rejected threshold actually falls short of the target is at most ``delta``.

    Args:
        confidence: The judge's confidence per item, on any real scale where higher means more confident
            (a share of samples in [0, 1], a stated confidence, a log-probability ≤ 0).
        correct: Whether the judge's verdict equals the expert consensus, aligned with ``confidence``.
        target: Agreement the kept items must reach, in (0, 1).
        delta: Allowed probability that the guarantee fails, in (0, 1).
        interval_confidence: Two-sided confidence level of the coverage's Wilson interval.
        population: Items coverage is a share of (default: the items given). Pass a larger number when
            some items cannot be kept at any threshold (the judge abstained on them).
        grid: Steps of the kept-item grid (:func:`candidate_thresholds`).

    Returns:
        The chosen threshold, the coverage it leaves and the agreement on kept items.

    Raises:
        ValueError: When the inputs differ in length, a confidence is not finite, ``target`` or ``delta``
            is outside (0, 1), or ``population`` is smaller than the items given.
    """
    conf = np.asarray(confidence, dtype=float)
    ok = np.asarray(correct, dtype=bool)
    if conf.shape != ok.shape:
        raise ValueError(f"confidence and correct differ in length ({conf.size} and {ok.size})")
    if conf.size and not np.all(np.isfinite(conf)):
        raise ValueError("confidence values must be finite numbers")
    n_min = min_items(target, delta)
    n_total = int(conf.size) if population is None else population
    if population is not None and population < conf.size:
        raise ValueError(f"population {population} is smaller than the {conf.size} items given")
    if conf.size == 0:
        return _none(target, delta, "no items with a confidence and an expert consensus", ())
    candidates = candidate_thresholds(conf, n_min=n_min, grid=grid)
    if not candidates:
        return _none(
            target,
            delta,
            f"only {conf.size} items with a confidence; showing agreement ≥ {target:g} at δ = {delta:g} "
            f"needs at least {n_min} even if the judge agrees on every one",
            (),
        )
    steps: list[SelectiveStep] = []
    chosen: SelectiveStep | None = None
    for t in candidates:
        keep = conf >= t
        n_t, k_t = int(keep.sum()), int(ok[keep].sum())
        p = float(scipy_stats().binom.sf(k_t - 1, n_t, target))
        step = SelectiveStep(threshold=t, judged=n_t, agreed=k_t, p_value=p, rejected=p <= delta)
        steps.append(step)
        if not step.rejected:
            break
        chosen = step
    if chosen is None:
        first = steps[0]
        reason = (
            f"even at the strictest threshold {first.threshold:g} the judge agrees on {first.agreed} of "
            f"{first.judged} items, which does not show agreement ≥ {target:g} at δ = {delta:g}"
        )
        return _none(target, delta, reason, tuple(steps))
    coverage = rate(chosen.judged, n_total, confidence=interval_confidence, what="items")
    agreement = Estimate(
        value=chosen.agreed / chosen.judged,
        n=chosen.judged,
        interval=Interval(
            low=_lower_bound(chosen.agreed, chosen.judged, delta),
            high=1.0,
            confidence=1.0 - delta,
            method="exact binomial (one-sided)",
        ),
    )
    return SelectiveResult(
        target_agreement=target,
        delta=delta,
        threshold=chosen.threshold,
        coverage=coverage,
        agreement=agreement,
        steps=tuple(steps),
    )


def fit_cascade(
    stages: Sequence[tuple[str, Sequence[float | None] | np.ndarray, Sequence[bool] | np.ndarray]],
    *,
    target: float = 0.90,
    delta: float = 0.05,
    models: dict[str, str] | None = None,
    grid: int = DEFAULT_GRID,
) -> Cascade:
    """Fit a cascade of judges (cheap to strong) on the same calibration items, Trust or Escalate style.

    Stage 1's threshold is fitted on every item; stage ``i``'s on the items no earlier stage kept, at level
    ``delta / k`` (Bonferroni over the ``k`` stages), so with probability at least ``1 - delta`` every
    stage's agreement on what it keeps (among what reaches it) is at least ``target``, and hence so is the
    agreement on everything the judges decide.

    Args:
        stages: ``(name, confidences, correct)`` per judge, cheap first, each aligned with the same
            calibration items. A confidence of ``None`` (the judge abstained or gave no usable verdict)
            means the stage never keeps that item.
        target: Agreement promised on the items the judges decide, in (0, 1).
        delta: Probability that the promise fails, in (0, 1).
        models: The litellm model each stage judges with at grade time, by name (optional).
        grid: Steps of each stage's kept-item grid (:func:`candidate_thresholds`).

    Returns:
        The cascade with each stage's threshold (``None``: it keeps nothing), its kept items, agreement
        lower bound and coverage, and the share left to humans.

    Raises:
        ValueError: When no stage is given, two stages share a name, the stages cover different numbers of
            items, a confidence is not finite, or ``target`` or ``delta`` is outside (0, 1).
    """
    if not stages:
        raise ValueError("a cascade needs at least one stage")
    names = [s[0] for s in stages]
    if len(set(names)) != len(names):
        raise ValueError(f"stage names must differ (got {names})")
    min_items(target, delta)  # validates target and delta
    sizes = {len(s[1]) for s in stages} | {len(s[2]) for s in stages}
    if len(sizes) != 1:
        raise ValueError("every stage needs a confidence and a correctness for each calibration item")
    total = sizes.pop()
    share = delta / len(stages)
    reach = np.ones(total, dtype=bool)
    fitted: list[CascadeStage] = []
    for name, raw_conf, raw_ok in stages:
        conf = np.array([np.nan if c is None else float(c) for c in raw_conf], dtype=float)
        if np.any(np.isinf(conf)):
            raise ValueError(f"stage {name!r}: confidence values must be finite numbers")
        ok = np.asarray(raw_ok, dtype=bool)
        has = reach & ~np.isnan(conf)
        result = selective_threshold(
            conf[has], ok[has], target=target, delta=share, population=int(reach.sum()), grid=grid
        )
        kept = has & (conf >= result.threshold) if result.threshold is not None else np.zeros(total, bool)
        n_kept, n_agreed = int(kept.sum()), int(ok[kept].sum())
        fitted.append(
            CascadeStage(
                name=name,
                model=(models or {}).get(name),
                threshold=result.threshold,
                delta=share,
                reached=int(reach.sum()),
                kept=n_kept,
                agreed=n_agreed,
                agreement_lower_bound=_lower_bound(n_agreed, n_kept, share) if n_kept else None,
                coverage=n_kept / total if total else 0.0,
            )
        )
        reach &= ~kept
    return Cascade(
        target=target,
        delta=delta,
        calibration_items=total,
        human_share=float(reach.sum()) / total if total else 1.0,
        stages=tuple(fitted),
    )


def cascade_from_table(
    table: LabelTable,
    stages: Sequence[tuple[str, str | None]],
    *,
    experts: Sequence[str] | None,
    target: float,
    delta: float,
    source: str | os.PathLike[str],
    grid: int = DEFAULT_GRID,
) -> Cascade:
    """Fit a cascade on a label table: each stage is a judge rater, the experts' consensus is the truth.

    The calibration items are those with a substantive expert consensus that every stage labelled. A
    stage's confidence on an item is the row's ``confidence`` column; a row without one, or where the
    judge abstained, is never kept by that stage.

    Args:
        table: The validated label table.
        stages: ``(rater, model)`` per stage, cheap first; ``model`` is the litellm model used at grade
            time (``None``: not known).
        experts: The expert raters (``None``: the one rater that is not a stage, refused when there are
            several or it looks like a model: :func:`judgekit.calibration.labels.default_experts`).
        target: Agreement promised on the items the judges decide, in (0, 1).
        delta: Probability that the promise fails, in (0, 1).
        source: The label file, for messages.
        grid: Steps of each stage's kept-item grid.

    Raises:
        JudgekitError: When a stage is not a rater of the table, an expert is unknown or also a stage, no
            expert is left, a stage's rows carry no confidence, or no item has a consensus every stage
            labelled.
    """
    from judgekit.calibration.labels import check_raters, default_experts

    names = [name for name, _ in stages]
    unknown = [n for n in names if n not in table.raters]
    if unknown:
        raise JudgekitError(
            f"{source}: stage rater(s) {', '.join(unknown)} not in the label table (raters: "
            f"{', '.join(table.raters)}); name each stage as --stage RATER=MODEL with a rater of the table",
            exit_code=2,
        )
    chosen = list(default_experts(table, names) if experts is None else experts)
    clash = sorted(set(chosen) & set(names))
    if clash:
        raise JudgekitError(f"--experts: {', '.join(clash)} is a stage of the cascade, not an expert")
    experts_used = check_raters(table, names[0], chosen)
    reports = [compute_agreement(table, judge=n, experts=experts_used, resamples=1).items for n in names]
    abstain = table.scale.abstain
    by_stage = [{r.key: r for r in items} for items in reports]
    keys = [
        r.key
        for r in reports[0]
        if r.consensus is not None
        and r.consensus != abstain
        and all(k.get(r.key) is not None and k[r.key].judge is not None for k in by_stage)
    ]
    if not keys:
        raise JudgekitError(
            f"{source}: no item has an expert consensus and a label from every stage "
            f"({', '.join(names)}); label the same items with every judge",
            exit_code=2,
        )
    inputs: list[tuple[str, list[float | None], list[bool]]] = []
    for name, rows in zip(names, by_stage, strict=True):
        picked = [rows[k] for k in keys]
        conf = [r.confidence if r.judge != abstain else None for r in picked]
        if all(c is None for c in conf):
            raise JudgekitError(
                f"{source}: the rows of stage {name} carry no confidence; add a confidence column (the "
                "share of the judge's samples that gave its verdict) for its rows",
                exit_code=2,
            )
        inputs.append((name, conf, [r.judge == r.consensus for r in picked]))
    models = {name: model for name, model in stages if model is not None}
    return fit_cascade(inputs, target=target, delta=delta, models=models, grid=grid)


def _lower_bound(agreed: int, judged: int, delta: float) -> float:
    """Exact (Clopper–Pearson) one-sided ``1 - delta`` lower bound of a binomial proportion."""
    return 0.0 if agreed == 0 else float(scipy_stats().beta.ppf(delta, agreed, judged - agreed + 1))


def _none(target: float, delta: float, reason: str, steps: tuple[SelectiveStep, ...]) -> SelectiveResult:
    return SelectiveResult(
        target_agreement=target,
        delta=delta,
        threshold=None,
        coverage=undefined(reason),
        agreement=undefined(reason),
        steps=steps,
        reason=reason,
    )


class CascadeDocument(FrozenModel):
    """A cascade fitted and written (the ``cascade`` document ``judgekit judge fit-cascade`` prints).

    Attributes:
        out: The cascade file written.
        cascade: The cascade, as written to ``out``.
    """

    out: str
    cascade: Cascade
