"""The alternative-annotator test: could this judge replace one of our annotators?

Calderon, Reichart and Dror, "The Alternative Annotator Test for LLM-as-a-Judge: How to Statistically
Justify Replacing Human Annotators with LLMs" (ACL 2025; reference code at ``nitaytech/AltTest``).

Leave one annotator ``j`` out at a time. On every item ``i`` that ``j``, the judge and at least one other
annotator labelled, score how well the judge ``f`` and the left-out annotator ``h_j`` represent the
*other* annotators: for labels, ``S(x, i)`` is the share of the other annotators whose label equals
``x``'s (``accuracy``); on an interval or ratio scale it is minus the root mean squared difference from
their values (``neg_rmse``). Then

* ``W^f_i = 1[S(f, i) >= S(h_j, i)]`` and ``W^h_i = 1[S(h_j, i) >= S(f, i)]`` (a tie counts for both);
* ``rho^f_j`` = mean of ``W^f`` (the judge's advantage probability against ``j``), ``rho^h_j`` = mean of
  ``W^h``;
* a one-sided one-sample t-test of ``H0: rho^f_j <= rho^h_j - epsilon_j`` on the paired differences
  ``d_i = W^h_i - W^f_i`` (``H0: mean(d) >= epsilon_j`` against ``mean(d) < epsilon_j``);
* the Benjamini–Yekutieli procedure over the annotators' p-values at level ``alpha`` (false discovery
  rate under any dependence between the tests);
* the winning rate ``omega`` = share of annotators whose null hypothesis is rejected; the judge passes
  when ``omega >= 0.5``; the advantage probability ``rho^f`` = mean over annotators of ``rho^f_j`` (for
  comparing judges: higher is better).

``epsilon`` is the cost-benefit allowance granted to the judge because it is cheaper and faster than a
person. The authors' rule of thumb (README and notebook of ``nitaytech/AltTest``): 0.2 for experts,
0.15 for skilled annotators, 0.1 for crowd workers. The test needs three or more annotators here (the
authors recommend three: with two there is no consensus to represent) and at least 30 items per
annotator (the t-test's normality assumption; the reference implementation skips an annotator with
fewer). Abstentions and missing labels are left out of the comparison, as for every agreement metric.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final, Literal

from pydantic import Field

from judgekit import lazy
from judgekit.calibration.agreement import AgreementReport
from judgekit.stats import scipy_stats
from judgekit.verdict import FrozenModel

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy.module("numpy")  # imported at its first use: grading's start does not wait for it


__all__ = [
    "EPSILON_BY_KIND",
    "MIN_ANNOTATORS",
    "MIN_ITEMS",
    "AltTestResult",
    "AltTestSettings",
    "AnnotatorComparison",
    "AnnotatorKind",
    "alt_test",
    "alt_test_for_report",
    "benjamini_yekutieli",
]

AnnotatorKind = Literal["expert", "skilled", "crowd"]
Scoring = Literal["accuracy", "neg_rmse"]

EPSILON_BY_KIND: Final[dict[str, float]] = {"expert": 0.2, "skilled": 0.15, "crowd": 0.1}
"""The authors' suggested epsilon per kind of annotator."""
MIN_ANNOTATORS: Final = 3
"""Fewest annotators with enough items for the test to be defined."""
MIN_ITEMS: Final = 30
"""Fewest items per annotator (the t-test's normality assumption)."""


class AltTestSettings(FrozenModel):
    """The alternative-annotator test in a trust policy (``alt_test:``).

    Attributes:
        required: When true the judge must pass the test to be trusted; when false the test is still
            computed and reported, and its condition is shown as disabled.
        alpha: False discovery rate of the Benjamini–Yekutieli procedure (default 0.05).
        epsilon: One epsilon for every annotator, overriding the kinds' values; ``null`` uses the kinds.
        annotator_kind: Kind of every annotator not in ``annotator_kinds`` (default ``expert``, 0.2).
        annotator_kinds: Kind of named annotators (``{alice: expert, bob: crowd}``).
        min_items: Fewest items an annotator must share with the judge and another annotator; an
            annotator with fewer is left out of the test (default and minimum 30).
    """

    required: bool = False
    alpha: float = Field(default=0.05, gt=0.0, lt=1.0)
    epsilon: float | None = Field(default=None, ge=0.0, lt=1.0)
    annotator_kind: AnnotatorKind = "expert"
    annotator_kinds: dict[str, AnnotatorKind] = Field(default_factory=dict)
    min_items: int = Field(default=MIN_ITEMS, ge=MIN_ITEMS)

    def kind_of(self, annotator: str) -> AnnotatorKind:
        """The kind of ``annotator``."""
        return self.annotator_kinds.get(annotator, self.annotator_kind)

    def epsilon_of(self, annotator: str) -> float:
        """The epsilon applied to ``annotator``: ``epsilon`` if set, else its kind's value."""
        return self.epsilon if self.epsilon is not None else EPSILON_BY_KIND[self.kind_of(annotator)]


class AnnotatorComparison(FrozenModel):
    """The judge against one left-out annotator.

    Attributes:
        annotator: The left-out annotator ``j``.
        kind: Its kind.
        epsilon: The epsilon applied.
        n: Items compared (labelled by ``j``, the judge and at least one other annotator).
        judge_advantage: ``rho^f_j``: share of items on which the judge represents the others at least
            as well as ``j`` does.
        annotator_advantage: ``rho^h_j``: share of items on which ``j`` represents them at least as well
            as the judge does.
        t_statistic: The t statistic of ``mean(d) - epsilon``; ``None`` when the differences do not vary
            (then the p-value is 0 when ``mean(d) < epsilon`` and 1 otherwise).
        p_value: One-sided p-value of ``H0: rho^f_j <= rho^h_j - epsilon``.
        p_adjusted: Benjamini–Yekutieli adjusted p-value (capped at 1).
        rejected: True when ``p_adjusted <= alpha``: the judge wins against ``j``.
    """

    annotator: str
    kind: AnnotatorKind
    epsilon: float
    n: int
    judge_advantage: float
    annotator_advantage: float
    t_statistic: float | None
    p_value: float
    p_adjusted: float
    rejected: bool


class AltTestResult(FrozenModel):
    """The alternative-annotator test of one judge.

    Attributes:
        scoring: ``accuracy`` (share of the other annotators matched) or ``neg_rmse``.
        alpha: The false discovery rate.
        min_items: Fewest items per annotator.
        annotators: One comparison per annotator with enough items.
        skipped: Annotators left out, each with the reason.
        winning_rate: ``omega``, share of annotators the judge wins against; ``None`` when undefined.
        advantage_probability: ``rho^f``, mean of ``judge_advantage``; ``None`` when undefined.
        passed: True when ``winning_rate >= 0.5``; ``None`` when undefined.
        undefined_reason: Why the test is undefined (fewer than three usable annotators).
    """

    scoring: Scoring
    alpha: float
    min_items: int
    annotators: tuple[AnnotatorComparison, ...]
    skipped: tuple[str, ...] = ()
    winning_rate: float | None
    advantage_probability: float | None
    passed: bool | None
    undefined_reason: str | None = None


def benjamini_yekutieli(p_values: Sequence[float]) -> list[float]:
    """Benjamini–Yekutieli adjusted p-values (``statsmodels`` ``multipletests(method="fdr_by")``).

    ``p_adj_(k) = min_{j >= k} min(1, m * H_m * p_(j) / j)`` over the sorted p-values, with
    ``H_m = 1 + 1/2 + ... + 1/m``. A hypothesis is rejected at level ``alpha`` when its adjusted value is
    at most ``alpha``, which is the step-up rule ``p_(k) <= k * alpha / (m * H_m)``.

    Args:
        p_values: The raw p-values, each in [0, 1].

    Returns:
        The adjusted p-values in the input order.
    """
    m = len(p_values)
    if m == 0:
        return []
    h_m = sum(1.0 / k for k in range(1, m + 1))
    order = sorted(range(m), key=lambda k: p_values[k])
    adjusted = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        k = order[rank - 1]
        running = min(running, m * h_m * p_values[k] / rank)
        adjusted[k] = min(1.0, running)
    return adjusted


def _score(x: float | str, others: Sequence[float | str], scoring: Scoring) -> float:
    if scoring == "accuracy":
        return sum(1 for o in others if o == x) / len(others)
    xf = float(x)
    return -math.sqrt(sum((xf - float(o)) ** 2 for o in others) / len(others))


def _one_sided_p(d: np.ndarray, epsilon: float) -> tuple[float | None, float]:
    """``(t, p)`` of the one-sample t-test of ``mean(d) < epsilon`` (``H0: mean(d) >= epsilon``)."""
    n = d.shape[0]
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd <= 1e-12 * max(1.0, abs(mean)):
        return None, (0.0 if mean < epsilon else 1.0)
    t = (mean - epsilon) / (sd / math.sqrt(n))
    return t, float(scipy_stats().t.cdf(t, df=n - 1))


def alt_test(
    judge: Mapping[str, float | str],
    annotators: Mapping[str, Mapping[str, float | str]],
    *,
    settings: AltTestSettings | None = None,
    scoring: Scoring = "accuracy",
) -> AltTestResult:
    """Run the alternative-annotator test.

    Args:
        judge: The judge's label per item id (items it did not label, or abstained on, absent).
        annotators: Each annotator's label per item id (missing and abstained items absent).
        settings: Alpha, epsilon or kinds, and the fewest items per annotator (defaults when ``None``).
        scoring: ``accuracy`` for labels, ``neg_rmse`` for numbers.

    Returns:
        The result; undefined (``winning_rate`` ``None`` with the reason) when fewer than three
        annotators have ``settings.min_items`` items.
    """
    cfg = settings or AltTestSettings()
    raters = sorted(annotators)
    comparisons: list[tuple[str, int, float, float, float | None, float]] = []
    skipped: list[str] = []
    for j in raters:
        w_f: list[int] = []
        w_h: list[int] = []
        for item, label in annotators[j].items():
            if item not in judge:
                continue
            others = [annotators[o][item] for o in raters if o != j and item in annotators[o]]
            if not others:
                continue
            s_f = _score(judge[item], others, scoring)
            s_h = _score(label, others, scoring)
            w_f.append(1 if s_f >= s_h else 0)
            w_h.append(1 if s_h >= s_f else 0)
        n = len(w_f)
        if n < cfg.min_items:
            skipped.append(
                f"{j}: {n} item(s) labelled by {j}, the judge and another annotator; "
                f"the test needs at least {cfg.min_items}"
            )
            continue
        d = np.asarray(w_h, dtype=float) - np.asarray(w_f, dtype=float)
        t, p = _one_sided_p(d, cfg.epsilon_of(j))
        comparisons.append((j, n, float(np.mean(w_f)), float(np.mean(w_h)), t, p))
    if len(comparisons) < MIN_ANNOTATORS:
        reason = (
            f"the alternative-annotator test needs at least {MIN_ANNOTATORS} annotators with "
            f"{cfg.min_items} or more items each; there {'is' if len(comparisons) == 1 else 'are'} "
            f"{len(comparisons)} of {len(raters)}"
        )
        return AltTestResult(
            scoring=scoring,
            alpha=cfg.alpha,
            min_items=cfg.min_items,
            annotators=(),
            skipped=tuple(skipped),
            winning_rate=None,
            advantage_probability=None,
            passed=None,
            undefined_reason=reason,
        )
    adjusted = benjamini_yekutieli([c[5] for c in comparisons])
    rows = tuple(
        AnnotatorComparison(
            annotator=j,
            kind=cfg.kind_of(j),
            epsilon=cfg.epsilon_of(j),
            n=n,
            judge_advantage=rho_f,
            annotator_advantage=rho_h,
            t_statistic=t,
            p_value=p,
            p_adjusted=p_adj,
            rejected=p_adj <= cfg.alpha,
        )
        for (j, n, rho_f, rho_h, t, p), p_adj in zip(comparisons, adjusted, strict=True)
    )
    omega = sum(r.rejected for r in rows) / len(rows)
    return AltTestResult(
        scoring=scoring,
        alpha=cfg.alpha,
        min_items=cfg.min_items,
        annotators=rows,
        skipped=tuple(skipped),
        winning_rate=omega,
        advantage_probability=float(np.mean([r.judge_advantage for r in rows])),
        passed=omega >= 0.5,
    )


def alt_test_for_report(report: AgreementReport, settings: AltTestSettings) -> AltTestResult:
    """The alternative-annotator test of the report's judge against its experts, from its item labels.

    Items are keyed by item id and criterion. Abstentions are left out. Scoring is ``neg_rmse`` on an
    interval or ratio scale (labels as numbers), ``accuracy`` otherwise.
    """
    scale = report.scale
    numeric = scale.level in ("interval", "ratio")

    def value(label: str) -> float | str:
        return float(label) if numeric else label

    judge: dict[str, float | str] = {}
    annotators: dict[str, dict[str, float | str]] = {e: {} for e in report.experts}
    for rec in report.items:
        key = f"{rec.item_id}\x1f{rec.criterion}"
        if rec.judge is not None and rec.judge != scale.abstain:
            judge[key] = value(rec.judge)
        for e, label in rec.experts.items():
            if label != scale.abstain:
                annotators[e][key] = value(label)
    return alt_test(judge, annotators, settings=settings, scoring="neg_rmse" if numeric else "accuracy")
