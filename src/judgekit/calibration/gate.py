"""The trust gate: a policy of conditions a judge must meet before its verdicts are trusted.

Every condition compares a *conservative* figure with its threshold: the lower confidence bound of TPR,
TNR and alpha, not the point value. A condition whose statistic is undefined fails (an undefined TPR is
not evidence that failures are caught). A threshold set to ``null`` in the policy file disables its
condition; the record says it was disabled.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from judgekit.calibration.agreement import AgreementReport, PairAgreement
from judgekit.calibration.alttest import AltTestResult, AltTestSettings, alt_test_for_report
from judgekit.calibration.ceiling import HumanCeiling, human_ceiling
from judgekit.calibration.correlation import (
    MEASURE_NAMES,
    CorrelationMeasure,
    ScoredAgreement,
    is_scored,
    scored_agreement,
)
from judgekit.errors import JudgekitError, Problem, ProblemsError
from judgekit.stats import Estimate
from judgekit.verdict import FrozenModel

__all__ = [
    "Condition",
    "GateResult",
    "TrustPolicy",
    "correlations_for",
    "evaluate_gate",
    "parse_policy",
]


class BootstrapSettings(FrozenModel):
    """Bootstrap settings: resamples of cases and the seed."""

    resamples: int = Field(default=2000, ge=100, le=100_000)
    seed: int = 0


class SelectiveSettings(FrozenModel):
    """Selective judging: the agreement target and the error rate ``delta`` of the guarantee."""

    target_agreement: float = Field(default=0.90, gt=0.0, lt=1.0)
    delta: float = Field(default=0.05, gt=0.0, lt=1.0)


class AgreementGap(FrozenModel):
    """How far the judge's agreement with experts may fall below the experts' agreement with each other.

    The shortfall is the mean over expert pairs of the metric minus the mean over experts of the
    judge-vs-expert value (:func:`judgekit.calibration.ceiling.human_ceiling`).

    Attributes:
        metric: Pairwise metric compared: the mean over experts of the judge-vs-expert value against the
            mean over expert pairs.
        max_gap: Largest allowed shortfall (``null`` disables the condition).
        decide_on: ``point`` compares the point shortfall with ``max_gap``; ``interval`` compares the
            upper bound of its paired bootstrap interval (the judge is within ``max_gap`` of the human
            ceiling with the policy's confidence), which is the conservative test.
    """

    metric: Literal["percent_agreement", "cohen_kappa", "gwet_ac1"] = "cohen_kappa"
    max_gap: float | None = Field(default=0.05, ge=0.0)
    decide_on: Literal["point", "interval"] = "point"


class CorrelationCondition(FrozenModel):
    """A lowest allowed lower bound of a correlation of the judge's scores with the experts' median.

    Scored scales only (``ordinal``, ``interval``, ``ratio``; see :mod:`judgekit.calibration.correlation`).

    Attributes:
        measure: ``spearman`` (Spearman's rho) or ``kendall_tau_b`` (Kendall's tau-b) on ordinal scales and
            up; ``pearson`` (Pearson's r) on interval and ratio scales only.
        lower_bound: Lowest allowed lower bound of the measure's case-bootstrap interval, judge vs the
            experts' median, in [−1, 1]; ``null`` (the default) disables the condition.
    """

    measure: CorrelationMeasure = "spearman"
    lower_bound: float | None = Field(default=None, ge=-1.0, le=1.0)


class TrustPolicy(FrozenModel):
    """The conditions of trust, with the defaults shown in ``calibration/policy.default.yaml``.

    Attributes:
        min_items: Fewest items with a judge label and an expert consensus (default 50).
        confidence: Two-sided confidence level of every interval (default 0.95).
        tpr_lower_bound: Lowest allowed lower bound of the TPR interval (failures caught; default 0.80).
        tnr_lower_bound: Lowest allowed lower bound of the TNR interval (default 0.80).
        alpha_lower_bound: Lowest allowed lower bound of the bootstrap interval of Krippendorff's alpha
            between the judge and the consensus, at the scale's level (default 0.667, Krippendorff's
            threshold for tentative conclusions).
        max_abstention: Largest allowed share of items on which the judge abstained (default 0.10).
        agreement_gap: The judge's agreement with experts against the experts' own agreement.
        alt_test: The alternative-annotator test (three or more experts; not required by default).
        correlation: A correlation of the judge's scores with the experts' median (scored scales; disabled
            by default).
        bootstrap: Bootstrap resamples and seed.
        selective: Selective-judging target (used when the judge's rows carry a confidence).
    """

    min_items: int | None = Field(default=50, ge=1)
    confidence: float = Field(default=0.95, gt=0.5, lt=1.0)
    tpr_lower_bound: float | None = Field(default=0.80, ge=0.0, le=1.0)
    tnr_lower_bound: float | None = Field(default=0.80, ge=0.0, le=1.0)
    alpha_lower_bound: float | None = Field(default=0.667, ge=-1.0, le=1.0)
    max_abstention: float | None = Field(default=0.10, ge=0.0, le=1.0)
    agreement_gap: AgreementGap = AgreementGap()
    alt_test: AltTestSettings = AltTestSettings()
    correlation: CorrelationCondition = CorrelationCondition()
    bootstrap: BootstrapSettings = BootstrapSettings()
    selective: SelectiveSettings = SelectiveSettings()


def parse_policy(
    data: Any,
    *,
    source: str | os.PathLike[str] | None = None,
    line_of: Callable[[tuple[str | int, ...]], int] | None = None,
) -> TrustPolicy:
    """Validate a parsed policy document (``None`` or an empty document means every default).

    Args:
        data: The parsed YAML or JSON document.
        source: The policy file, for messages, as text or a path object.
        line_of: Maps a field's location to its line in ``source`` (from the document reader).

    Raises:
        ProblemsError: One located problem per invalid or unknown field.
    """
    source = Path(source) if source is not None else None
    if data is None:
        return TrustPolicy()
    if not isinstance(data, dict):
        raise ProblemsError([Problem(source, 1, "", "a policy must be a mapping of settings")])
    try:
        return TrustPolicy.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = tuple(err["loc"])
            line = line_of(loc) if line_of is not None else None
            msg = "unknown setting" if err["type"] == "extra_forbidden" else err["msg"]
            problems.append(Problem(source, line, ".".join(str(p) for p in loc), msg))
        raise ProblemsError(problems) from None


class Condition(FrozenModel):
    """One condition of the policy and how the judge did on it.

    Attributes:
        name: Stable identifier (``tpr_lower_bound``).
        passed: True when met; ``None`` when the policy disabled it.
        observed: The figure compared with the threshold, or ``None`` when undefined.
        threshold: The policy's threshold, or ``None`` when disabled.
        message: One line a person can read: what was required and what was seen, or why undefined.
    """

    name: str
    passed: bool | None
    observed: float | None
    threshold: float | None
    message: str


class GateResult(FrozenModel):
    """The trust verdict.

    Attributes:
        trusted: True only when every enabled condition passed.
        conditions: Every condition, passed, failed or disabled.
    """

    trusted: bool
    conditions: tuple[Condition, ...]

    @property
    def failed(self) -> tuple[Condition, ...]:
        """The conditions that failed."""
        return tuple(c for c in self.conditions if c.passed is False)


def _disabled(name: str) -> Condition:
    return Condition(name=name, passed=None, observed=None, threshold=None, message="disabled by the policy")


def _failed_undefined(name: str, threshold: float, message: str) -> Condition:
    """A failed condition whose value could not be observed (undefined, or without an interval)."""
    return Condition(name=name, passed=False, observed=None, threshold=threshold, message=message)


def _lower_bound(name: str, what: str, est: Estimate | None, threshold: float | None) -> Condition:
    if threshold is None:
        return _disabled(name)
    if est is None or est.value is None:
        reason = est.undefined_reason if est is not None else "not computed"
        return _failed_undefined(name, threshold, f"{what} is undefined: {reason}")
    if est.interval is None:
        return _failed_undefined(name, threshold, f"{what} has no interval: {est.interval_reason}")
    low = est.interval.low
    ok = low >= threshold
    return Condition(
        name=name,
        passed=ok,
        observed=low,
        threshold=threshold,
        message=f"lower bound of {what} is {low:.3f} ({est.value:.3f} on {est.n}); "
        f"{'at least' if ok else 'below'} the required {threshold:.3f}",
    )


def ceiling_for(report: AgreementReport, policy: TrustPolicy) -> HumanCeiling:
    """The human-ceiling comparison of ``report`` at the policy's metric and bootstrap settings."""
    return human_ceiling(
        report,
        metric=policy.agreement_gap.metric,
        resamples=policy.bootstrap.resamples,
        seed=policy.bootstrap.seed,
    )


def correlations_for(report: AgreementReport, policy: TrustPolicy) -> ScoredAgreement | None:
    """The correlations of ``report`` at the policy's bootstrap settings (``None`` on a nominal scale)."""
    return scored_agreement(report, resamples=policy.bootstrap.resamples, seed=policy.bootstrap.seed)


def evaluate_gate(
    report: AgreementReport,
    policy: TrustPolicy,
    *,
    ceiling: HumanCeiling | None = None,
    alt_test: AltTestResult | None = None,
    correlations: ScoredAgreement | None = None,
) -> GateResult:
    """Decide whether the judge in ``report`` is trusted under ``policy``.

    Args:
        report: The agreement report (computed with ``policy.confidence``).
        policy: The trust policy.
        ceiling: The human-ceiling comparison (computed from ``report`` when ``None``).
        alt_test: The alternative-annotator test (computed from ``report`` when ``None`` and the policy
            requires it).
        correlations: The scored-scale correlations (computed from ``report`` when ``None`` and the
            policy's correlation condition is enabled).

    Returns:
        The verdict with every condition; ``trusted`` is True only when no enabled condition failed. On a
        scored scale it has a ``correlation_lower_bound`` condition (disabled unless the policy sets it).

    Raises:
        JudgekitError: When the policy's correlation condition cannot apply to the scale: any
            correlation on a nominal scale, Pearson's r on an ordinal one.
    """
    jc = report.judge_vs_consensus
    conditions: list[Condition] = []
    n_items = report.abstention.items
    if policy.min_items is None:
        conditions.append(_disabled("min_items"))
    else:
        ok = n_items >= policy.min_items
        conditions.append(
            Condition(
                name="min_items",
                passed=ok,
                observed=float(n_items),
                threshold=float(policy.min_items),
                message=f"{n_items} items have a judge label and an expert consensus; "
                f"{'at least' if ok else 'fewer than'} the required {policy.min_items}",
            )
        )
    binary = jc.binary
    conditions.append(
        _lower_bound(
            "tpr_lower_bound",
            "TPR (failures caught)",
            binary.tpr if binary else Estimate(value=None, undefined_reason=jc.binary_reason),
            policy.tpr_lower_bound,
        )
    )
    conditions.append(
        _lower_bound(
            "tnr_lower_bound",
            "TNR",
            binary.tnr if binary else Estimate(value=None, undefined_reason=jc.binary_reason),
            policy.tnr_lower_bound,
        )
    )
    level = report.scale.level
    conditions.append(
        _lower_bound(
            "alpha_lower_bound",
            f"Krippendorff's alpha ({level}) of judge vs consensus",
            jc.alpha.get(level),
            policy.alpha_lower_bound,
        )
    )
    if policy.max_abstention is None:
        conditions.append(_disabled("max_abstention"))
    else:
        ab = report.abstention.abstention
        if ab.value is None:
            conditions.append(
                _failed_undefined(
                    "max_abstention", policy.max_abstention, f"abstention is undefined: {ab.undefined_reason}"
                )
            )
        else:
            ok = ab.value <= policy.max_abstention
            conditions.append(
                Condition(
                    name="max_abstention",
                    passed=ok,
                    observed=ab.value,
                    threshold=policy.max_abstention,
                    message=f"the judge abstained on {ab.value:.1%} of {ab.n} items; "
                    f"{'within' if ok else 'above'} the allowed {policy.max_abstention:.1%}",
                )
            )
    gap = policy.agreement_gap
    if gap.max_gap is None:
        conditions.append(_disabled("agreement_gap"))
    else:
        if ceiling is None or ceiling.metric != gap.metric:
            ceiling = ceiling_for(report, policy)
        conditions.append(_gap_condition(report, ceiling, gap.max_gap, gap.decide_on))
    if not policy.alt_test.required:
        conditions.append(_disabled("alt_test"))
    else:
        if alt_test is None:
            alt_test = alt_test_for_report(report, policy.alt_test)
        conditions.append(_alt_condition(alt_test))
    conditions += _correlation_conditions(report, policy, correlations)
    trusted = all(c.passed is not False for c in conditions)
    return GateResult(trusted=trusted, conditions=tuple(conditions))


def _correlation_conditions(
    report: AgreementReport, policy: TrustPolicy, correlations: ScoredAgreement | None
) -> list[Condition]:
    """The correlation condition: none on a nominal scale whose policy leaves it disabled."""
    name = "correlation_lower_bound"
    cond = policy.correlation
    scale = report.scale
    if cond.lower_bound is None:
        return [_disabled(name)] if is_scored(scale.level) else []
    what = MEASURE_NAMES[cond.measure]
    if not is_scored(scale.level):
        raise JudgekitError(
            f"the trust policy's correlation.lower_bound gates on {what}, but the label scale "
            f"{scale.name!r} is nominal ({', '.join(scale.values)}): its labels have no order to correlate; "
            "set correlation.lower_bound to null, or declare an ordered scale (--scale 1,2,3,4,5 with "
            "--level ordinal or interval)",
            exit_code=2,
        )
    if cond.measure == "pearson" and scale.level == "ordinal":
        raise JudgekitError(
            f"the trust policy's correlation.measure is pearson, but the label scale {scale.name!r} is "
            "ordinal: Pearson's r needs the distances between values (an interval or ratio scale); use "
            "measure: spearman or kendall_tau_b, or declare the scale with --level interval",
            exit_code=2,
        )
    if correlations is None:
        correlations = correlations_for(report, policy)
    est = correlations.judge_vs_consensus.measure(cond.measure) if correlations is not None else None
    return [_lower_bound(name, f"{what} of the judge vs the experts' median", est, cond.lower_bound)]


def _alt_condition(result: AltTestResult) -> Condition:
    name = "alt_test"
    if result.winning_rate is None:
        return _failed_undefined(
            name, 0.5, f"the alternative-annotator test is undefined: {result.undefined_reason}"
        )
    won = sum(a.rejected for a in result.annotators)
    ok = bool(result.passed)
    return Condition(
        name=name,
        passed=ok,
        observed=result.winning_rate,
        threshold=0.5,
        message=f"the judge wins against {won} of {len(result.annotators)} annotators "
        f"(winning rate {result.winning_rate:.3f}, Benjamini-Yekutieli at {result.alpha:g}; "
        f"advantage probability {result.advantage_probability:.3f}); "
        f"{'at least' if ok else 'below'} the required 0.500",
    )


def _gap_condition(
    report: AgreementReport, ceiling: HumanCeiling, max_gap: float, decide_on: str
) -> Condition:
    name = "agreement_gap"
    metric = ceiling.metric
    if len(report.experts) < 2:
        msg = (
            "the experts' agreement with each other needs two or more experts; "
            f"there is {len(report.experts)}"
        )
        return _failed_undefined(name, max_gap, msg)
    if ceiling.experts.value is None:
        msg = f"the experts' mean pairwise {metric} is undefined: {ceiling.experts.undefined_reason}"
        return _failed_undefined(name, max_gap, msg)
    undefined_judge = [p.a for p in report.judge_vs_experts if _pair_metric(p, metric).value is None]
    if undefined_judge or ceiling.judge.value is None or ceiling.difference.value is None:
        msg = f"the judge's {metric} is undefined against {', '.join(undefined_judge) or 'an expert'}"
        return _failed_undefined(name, max_gap, msg)
    shortfall = -ceiling.difference.value
    base = ceiling.base_rate.value
    at_base = "" if base is None or metric != "cohen_kappa" else f" (consensus base rate {base:.3f})"
    seen = (
        f"judge vs experts mean {metric} {ceiling.judge.value:.3f}, "
        f"experts vs each other {ceiling.experts.value:.3f}{at_base}: shortfall {shortfall:.3f}"
    )
    if decide_on == "point":
        ok = shortfall <= max_gap
        return Condition(
            name=name,
            passed=ok,
            observed=shortfall,
            threshold=max_gap,
            message=f"{seen} {'within' if ok else 'above'} the allowed {max_gap:.3f}",
        )
    interval = ceiling.difference.interval
    if interval is None:
        msg = f"{seen}, with no interval: {ceiling.difference.interval_reason}"
        return _failed_undefined(name, max_gap, msg)
    upper = -interval.low
    ok = upper <= max_gap
    return Condition(
        name=name,
        passed=ok,
        observed=upper,
        threshold=max_gap,
        message=f"{seen}, upper bound {upper:.3f} ({interval.confidence:.0%} paired bootstrap); "
        f"{'within' if ok else 'above'} the allowed {max_gap:.3f}",
    )


def _pair_metric(pair: PairAgreement, metric: str) -> Estimate:
    if metric == "percent_agreement":
        return pair.percent_agreement
    if metric == "cohen_kappa":
        return pair.kappa["none"]
    return pair.ac1
