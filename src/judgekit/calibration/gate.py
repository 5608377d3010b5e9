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

from judgekit.calibration.agreement import AgreementReport, Estimate, PairAgreement
from judgekit.errors import Problem, ProblemsError
from judgekit.verdict import FrozenModel

__all__ = [
    "Condition",
    "GateResult",
    "TrustPolicy",
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

    Attributes:
        metric: Pairwise metric compared: the mean over experts of the judge-vs-expert value against the
            mean over expert pairs.
        max_gap: Largest allowed shortfall (``null`` disables the condition).
    """

    metric: Literal["percent_agreement", "cohen_kappa", "gwet_ac1"] = "cohen_kappa"
    max_gap: float | None = Field(default=0.05, ge=0.0)


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


def _lower_bound(name: str, what: str, est: Estimate | None, threshold: float | None) -> Condition:
    if threshold is None:
        return _disabled(name)
    if est is None or est.value is None:
        reason = est.undefined_reason if est is not None else "not computed"
        return Condition(
            name=name,
            passed=False,
            observed=None,
            threshold=threshold,
            message=f"{what} is undefined: {reason}",
        )
    if est.interval is None:
        return Condition(
            name=name,
            passed=False,
            observed=None,
            threshold=threshold,
            message=f"{what} has no interval: {est.interval_reason}",
        )
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


def evaluate_gate(report: AgreementReport, policy: TrustPolicy) -> GateResult:
    """Decide whether the judge in ``report`` is trusted under ``policy``.

    Args:
        report: The agreement report (computed with ``policy.confidence``).
        policy: The trust policy.

    Returns:
        The verdict with every condition; ``trusted`` is True only when no enabled condition failed.
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
                Condition(
                    name="max_abstention",
                    passed=False,
                    observed=None,
                    threshold=policy.max_abstention,
                    message=f"abstention is undefined: {ab.undefined_reason}",
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
        conditions.append(_gap_condition(report, gap.metric, gap.max_gap))
    trusted = all(c.passed is not False for c in conditions)
    return GateResult(trusted=trusted, conditions=tuple(conditions))


def _pair_metric(pair: PairAgreement, metric: str) -> Estimate:
    if metric == "percent_agreement":
        return pair.percent_agreement
    if metric == "cohen_kappa":
        return pair.kappa["none"]
    return pair.ac1


def _gap_condition(report: AgreementReport, metric: str, max_gap: float) -> Condition:
    name = "agreement_gap"
    ceiling = report.expert_group.mean_pairwise[metric]
    judge_vals = [_pair_metric(p, metric) for p in report.judge_vs_experts]
    undefined_judge = [
        p.a for p, e in zip(report.judge_vs_experts, judge_vals, strict=True) if e.value is None
    ]
    if len(report.experts) < 2:
        msg = (
            "the experts' agreement with each other needs two or more experts; "
            f"there is {len(report.experts)}"
        )
        return Condition(name=name, passed=False, observed=None, threshold=max_gap, message=msg)
    if ceiling.value is None:
        msg = f"the experts' mean pairwise {metric} is undefined: {ceiling.undefined_reason}"
        return Condition(name=name, passed=False, observed=None, threshold=max_gap, message=msg)
    if undefined_judge:
        msg = f"the judge's {metric} is undefined against {', '.join(undefined_judge)}"
        return Condition(name=name, passed=False, observed=None, threshold=max_gap, message=msg)
    judge_mean = sum(float(e.value) for e in judge_vals if e.value is not None) / len(judge_vals)
    shortfall = ceiling.value - judge_mean
    ok = shortfall <= max_gap
    return Condition(
        name=name,
        passed=ok,
        observed=shortfall,
        threshold=max_gap,
        message=f"judge vs experts mean {metric} {judge_mean:.3f}, "
        f"experts vs each other {ceiling.value:.3f}: "
        f"shortfall {shortfall:.3f} {'within' if ok else 'above'} the allowed {max_gap:.3f}",
    )
