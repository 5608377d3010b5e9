"""Many failure modes at once: one binary criterion per failure mode, each calibrated and gated on its own.

A judge that is trusted "overall" can still miss one failure mode entirely: the overall TPR is dominated by
the common modes. So each failure mode is its own binary criterion (the ``criterion`` column of the label
table) with its own agreement report and its own trust gate.

Gating many criteria together multiplies the chances of trusting one by luck: at 95 % two-sided (2.5 %
one-sided per lower bound) and ten criteria, the chance that at least one judge criterion whose true TPR
or TNR is below the threshold gets through is far above 2.5 %. :func:`calibrate_families` controls that
**family-wise error** with Holm's step-down procedure:

1. For each criterion, the evidence that its TPR and TNR exceed their thresholds is summarised as one
   p-value: the larger of the two one-sided score-test p-values for ``H0: rate <= threshold`` (an
   intersection-union test: the criterion is trusted only if both rates clear). The score test is the one
   the Wilson interval inverts, so a lower bound at two-sided confidence ``C`` reaches the threshold exactly
   when that p-value is at most ``(1 - C) / 2``.
2. Sorted by p-value, the criterion at rank ``k`` of ``m`` is tested at ``alpha / (m - k + 1)`` and the
   procedure stops at the first that fails (Holm 1979); ``alpha = (1 - confidence) / 2``.
3. Each criterion's full gate (minimum items, TPR, TNR, alpha, abstention, expert gap) is evaluated on its
   own items at its Holm-adjusted confidence ``1 - 2 · alpha / (m - k + 1)``, so every interval shown is the
   one the decision used. A criterion is trusted when it passed the step-down and its gate.

The report says that Holm's correction was applied, over how many criteria, and at which levels.

**Failure-mode records.** The decisions are kept as a :class:`FailureModeRecord`
(``judgekit.failure-mode-record/1``) keyed by the judge's exact fingerprint, in the ``failure-modes/``
sub-folder of the calibration records folder (:data:`FAILURE_MODES_DIR`), one JSON file per run named like
calibration records (``<sha256(fingerprint)[:16]>-<UTC time>.json``). The trust function
(:meth:`judgekit.calibration.trust.TrustBook.decide`) reads them: a criterion the latest record for a
fingerprint did not trust is untrusted for that criterion, whatever the judge's overall calibration.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Final, Literal

from pydantic import Field, field_validator

from judgekit.calibration.agreement import AgreementReport, compute_agreement
from judgekit.calibration.gate import GateResult, TrustPolicy, evaluate_gate
from judgekit.calibration.labels import LabelTable, check_items_have_two_raters, check_raters
from judgekit.calibration.records import LabelTableInfo, stamped_filename
from judgekit.errors import JudgekitError
from judgekit.markdown_text import md_code, md_text
from judgekit.stats import scipy_stats
from judgekit.verdict import FrozenModel
from judgekit.version import __version__

__all__ = [
    "FAILURE_MODES_DIR",
    "FAILURE_MODE_RECORD_SCHEMA",
    "FailureModeDecision",
    "FailureModeRecord",
    "FamilyReport",
    "FamilyResult",
    "build_failure_mode_record",
    "calibrate_families",
    "dump_failure_mode_record",
    "failure_mode_record_filename",
    "holm",
    "load_failure_mode_record",
    "render_families_markdown",
    "score_p_value",
    "split_by_criterion",
]

FAILURE_MODES_DIR: Final = "failure-modes"
"""Sub-folder of the calibration records folder holding failure-mode records."""

FAILURE_MODE_RECORD_SCHEMA: Final = "judgekit.failure-mode-record/1"


def score_p_value(successes: int, n: int, bound: float) -> float:
    """One-sided score-test p-value for ``H0: rate <= bound`` against ``rate > bound``.

    It is at most ``(1 - C) / 2`` exactly when the two-sided Wilson interval at confidence ``C`` has a lower
    bound of at least ``bound``.

    Args:
        successes: Successes, ``0 <= successes <= n``.
        n: Trials; ``n == 0`` gives 1.0 (no evidence).
        bound: The threshold in [0, 1]; 0 gives 0.0 (always met), 1 gives 1.0 (never met).

    Raises:
        ValueError: When the counts or the bound are out of range.
    """
    if n < 0 or not 0 <= successes <= max(n, 0):
        raise ValueError(f"successes must be in [0, n], got {successes} of {n}")
    if not 0.0 <= bound <= 1.0:
        raise ValueError(f"bound must be in [0, 1], got {bound}")
    if n == 0:
        return 1.0
    if bound <= 0.0:
        return 0.0
    if bound >= 1.0:
        return 1.0
    z = (successes / n - bound) / math.sqrt(bound * (1.0 - bound) / n)
    return float(scipy_stats().norm.sf(z))


def holm(p_values: Sequence[float], alpha: float) -> tuple[list[bool], list[float], list[int]]:
    """Holm's step-down procedure.

    Args:
        p_values: One p-value per hypothesis.
        alpha: Family-wise error rate in (0, 1).

    Returns:
        ``(rejected, adjusted, rank)`` per hypothesis in input order: whether it is rejected, its
        Holm-adjusted p-value (``max_{i <= k} min(1, (m - i + 1) p_(i))``) and its 1-based rank.

    Raises:
        ValueError: When ``alpha`` is outside (0, 1) or a p-value outside [0, 1].
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha}")
    if any(not 0.0 <= p <= 1.0 for p in p_values):
        raise ValueError("p-values must be in [0, 1]")
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    rejected = [False] * m
    adjusted = [1.0] * m
    rank = [0] * m
    running = 0.0
    still = True
    for k, i in enumerate(order, start=1):
        rank[i] = k
        running = max(running, min(1.0, (m - k + 1) * p_values[i]))
        adjusted[i] = running
        still = still and p_values[i] <= alpha / (m - k + 1)
        rejected[i] = still
    return rejected, adjusted, rank


def split_by_criterion(table: LabelTable) -> dict[str, LabelTable]:
    """One table per criterion (``""`` when the table has no criteria), same scale, source and hash."""
    groups: dict[str, list[object]] = {}
    for row in table.rows:
        groups.setdefault(row.item.criterion, []).append(row)
    return {
        name: LabelTable(
            scale=table.scale,
            rows=tuple(rows),  # type: ignore[arg-type]
            source=table.source,
            sha256=table.sha256,
            notes=table.notes,
        )
        for name, rows in sorted(groups.items())
    }


class FamilyResult(FrozenModel):
    """One failure mode's calibration.

    Attributes:
        criterion: The criterion (failure mode).
        items: Items of this criterion with a judge label and an expert consensus.
        rate_p_value: The larger one-sided score-test p-value of TPR and TNR against their thresholds
            (1.0 when a rate is undefined; 0.0 when both conditions are disabled).
        holm_rank: 1-based rank of ``rate_p_value`` among the criteria.
        holm_level: The one-sided level it was tested at, ``alpha / (m - rank + 1)``.
        holm_adjusted_p: Holm-adjusted p-value.
        holm_passed: Whether it was rejected by the step-down (evidence that both rates clear).
        confidence: The two-sided confidence of its intervals and gate (Holm-adjusted).
        report: The agreement report at that confidence.
        gate: The gate at that confidence.
        trusted: ``holm_passed`` and the gate passed.
        message: One sentence for a report.
    """

    criterion: str
    items: int
    rate_p_value: float
    holm_rank: int
    holm_level: float
    holm_adjusted_p: float
    holm_passed: bool
    confidence: float
    report: AgreementReport
    gate: GateResult
    trusted: bool
    message: str


class FamilyReport(FrozenModel):
    """The calibration of every failure mode gated together.

    Attributes:
        judge: The judge rater.
        experts: The expert raters.
        confidence: The policy's two-sided confidence (per criterion, before correction).
        alpha: The family-wise one-sided error rate, ``(1 - confidence) / 2``.
        correction: ``holm`` when two or more criteria are gated together, ``none`` for one.
        statement: The sentence a report prints about the correction.
        families: One result per criterion, in criterion order.
    """

    judge: str
    experts: tuple[str, ...]
    confidence: float
    alpha: float
    correction: str
    statement: str
    families: tuple[FamilyResult, ...]

    @property
    def trusted(self) -> bool:
        """True when every criterion is trusted."""
        return all(f.trusted for f in self.families)

    @property
    def untrusted(self) -> tuple[str, ...]:
        """The criteria that are not trusted."""
        return tuple(f.criterion for f in self.families if not f.trusted)


def _rate_p(report: AgreementReport, policy: TrustPolicy) -> float:
    binary = report.judge_vs_consensus.binary
    ps: list[float] = []
    if policy.tpr_lower_bound is not None:
        ps.append(
            1.0 if binary is None else score_p_value(binary.tp, binary.tp + binary.fn, policy.tpr_lower_bound)
        )
    if policy.tnr_lower_bound is not None:
        ps.append(
            1.0 if binary is None else score_p_value(binary.tn, binary.tn + binary.fp, policy.tnr_lower_bound)
        )
    return max(ps) if ps else 0.0


def calibrate_families(
    table: LabelTable,
    *,
    judge: str,
    experts: Sequence[str] | None,
    policy: TrustPolicy,
    policies: Mapping[str, TrustPolicy] | None = None,
) -> FamilyReport:
    """Calibrate and gate every criterion of a binary label table, with Holm's family-wise correction.

    Args:
        table: The label table; its ``criterion`` column names the failure modes.
        judge: The judge rater.
        experts: Expert raters (``None``: the default, :func:`judgekit.calibration.labels.default_experts`).
        policy: The trust policy for every criterion.
        policies: Per-criterion policies that replace ``policy`` for those criteria; their confidence must
            equal ``policy.confidence`` (one family-wise level).

    Returns:
        The report, one result per criterion.

    Raises:
        JudgekitError: When the scale is not binary with a failing label, a per-criterion policy names an
            unknown criterion or another confidence, or a rater is unknown.
        ProblemsError: When an item is labelled by only one rater.
    """
    scale = table.scale
    if len(scale.values) != 2 or len(scale.positive) != 1:
        raise JudgekitError(
            "failure-mode calibration needs one binary criterion per failure mode: a two-valued scale with "
            f"one failing label (got values {list(scale.values)}, positive {list(scale.positive)})"
        )
    chosen = check_raters(table, judge, experts)
    check_items_have_two_raters(table, [judge, *chosen])
    groups = split_by_criterion(table)
    overrides = dict(policies or {})
    unknown = sorted(set(overrides) - set(groups))
    if unknown:
        raise JudgekitError(
            f"policies are given for unknown criteria {unknown}; criteria in the table: {sorted(groups)}"
        )
    mismatched = sorted(k for k, p in overrides.items() if p.confidence != policy.confidence)
    if mismatched:
        raise JudgekitError(
            f"the policies for {mismatched} use another confidence than {policy.confidence}; criteria "
            "gated together share one family-wise confidence"
        )
    names = list(groups)
    first_pass: dict[str, AgreementReport] = {}
    p_values: list[float] = []
    for name in names:
        pol = overrides.get(name, policy)
        present = [e for e in chosen if e in groups[name].raters]
        if judge not in groups[name].raters or not present:
            raise JudgekitError(
                f"criterion {name!r} has no labels from the judge {judge!r} or from any expert; every "
                "failure mode needs both"
            )
        rep = compute_agreement(
            groups[name],
            judge=judge,
            experts=present,
            confidence=pol.confidence,
            resamples=pol.bootstrap.resamples,
            seed=pol.bootstrap.seed,
        )
        first_pass[name] = rep
        p_values.append(_rate_p(rep, pol))
    alpha = (1.0 - policy.confidence) / 2.0
    m = len(names)
    rejected, adjusted, rank = holm(p_values, alpha)
    results: list[FamilyResult] = []
    for i, name in enumerate(names):
        pol = overrides.get(name, policy)
        level = alpha / (m - rank[i] + 1)
        conf = 1.0 - 2.0 * level
        if m == 1:
            rep = first_pass[name]
        else:
            present = [e for e in chosen if e in groups[name].raters]
            rep = compute_agreement(
                groups[name],
                judge=judge,
                experts=present,
                confidence=conf,
                resamples=pol.bootstrap.resamples,
                seed=pol.bootstrap.seed,
            )
        gate = evaluate_gate(rep, pol.model_copy(update={"confidence": conf}))
        trusted = rejected[i] and gate.trusted
        if trusted:
            msg = f"{name or '(all)'}: trusted at Holm rank {rank[i]} of {m} (confidence {conf:.4f})"
        elif not rejected[i]:
            msg = (
                f"{name or '(all)'}: not trusted: TPR/TNR evidence p={p_values[i]:.4g} (Holm-adjusted "
                f"{adjusted[i]:.4g}) does not clear the family-wise level {alpha:.4g}"
            )
        else:
            failed = "; ".join(f"{c.name}: {c.message}" for c in gate.failed)
            msg = f"{name or '(all)'}: not trusted: {failed}"
        results.append(
            FamilyResult(
                criterion=name,
                items=rep.abstention.items,
                rate_p_value=p_values[i],
                holm_rank=rank[i],
                holm_level=level,
                holm_adjusted_p=adjusted[i],
                holm_passed=rejected[i],
                confidence=conf,
                report=rep,
                gate=gate,
                trusted=trusted,
                message=msg,
            )
        )
    if m > 1:
        statement = (
            f"{m} failure modes gated together: Holm's step-down procedure keeps the family-wise error "
            f"(trusting at least one criterion whose TPR or TNR is really below its threshold) at most "
            f"{alpha:.4g} one-sided, the level of one {policy.confidence:.0%} lower bound. Criteria are "
            f"tested at one-sided levels from {alpha / m:.4g} to {alpha:.4g}; each criterion's intervals "
            "and gate are shown at its Holm-adjusted confidence."
        )
        correction = "holm"
    else:
        statement = "one failure mode: no multiplicity correction is needed"
        correction = "none"
    return FamilyReport(
        judge=judge,
        experts=tuple(chosen),
        confidence=policy.confidence,
        alpha=alpha,
        correction=correction,
        statement=statement,
        families=tuple(results),
    )


def render_families_markdown(report: FamilyReport) -> str:
    """A Markdown table of the failure modes, with the correction statement."""
    lines = [
        f"# Failure modes: judge {md_code(report.judge)}",
        "",
        report.statement,
        "",
        "| criterion | items | p (TPR/TNR) | Holm rank | level | adjusted p | confidence | TPR low | "
        "TNR low | trusted |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for f in report.families:
        binary = f.report.judge_vs_consensus.binary

        def low(est: object) -> str:
            interval = getattr(est, "interval", None)
            return f"{interval.low:.3f}" if interval is not None else "undefined"

        tpr = low(binary.tpr) if binary is not None else "undefined"
        tnr = low(binary.tnr) if binary is not None else "undefined"
        lines.append(
            f"| {md_text(f.criterion) or '(all)'} | {f.items} | {f.rate_p_value:.4g} | {f.holm_rank} | "
            f"{f.holm_level:.4g} | {f.holm_adjusted_p:.4g} | {f.confidence:.4f} | {tpr} | {tnr} | "
            f"{'yes' if f.trusted else 'no'} |"
        )
    lines.append("")
    for f in report.families:
        if not f.trusted:
            lines.append(f"- {md_text(f.message)}")
    verdict = (
        "every failure mode trusted"
        if report.trusted
        else f"not trusted: {', '.join(md_text(c) for c in report.untrusted)}"
    )
    lines += ["", f"**Verdict:** {verdict}", ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------- records


class FailureModeDecision(FrozenModel):
    """One failure mode's trust decision, as recorded.

    Attributes:
        criterion: The criterion as written in the label table's ``criterion`` column (``""`` when the
            table had none: the decision then covers the judge on every criterion).
        trusted: True when the criterion passed Holm's step-down and its gate at the adjusted confidence.
        items: Items of this criterion with a judge label and an expert consensus (>= 0).
        rate_p_value: The larger one-sided score-test p-value of TPR and TNR, in [0, 1].
        holm_rank: 1-based rank of ``rate_p_value`` among the criteria.
        holm_level: The one-sided level it was tested at, in (0, 1).
        holm_adjusted_p: Holm-adjusted p-value, in [0, 1].
        holm_passed: Whether the step-down rejected ``H0`` (evidence that both rates clear).
        confidence: The two-sided confidence of its intervals and gate (Holm-adjusted), in (0, 1).
        tpr_low: Lower bound of the TPR interval at ``confidence``; ``None`` when TPR is undefined (no
            failure among the consensus labels) or has no interval.
        tnr_low: Lower bound of the TNR interval; ``None`` when undefined.
        tpr_bound: The policy's required TPR lower bound; ``None`` when the condition is disabled.
        tnr_bound: The policy's required TNR lower bound; ``None`` when disabled.
        failed: Every gate condition that failed, as ``name: message``; empty when the gate passed.
        message: The one-sentence explanation of the decision.
    """

    criterion: str
    trusted: bool
    items: int = Field(ge=0)
    rate_p_value: float = Field(ge=0.0, le=1.0)
    holm_rank: int = Field(ge=1)
    holm_level: float = Field(gt=0.0, lt=1.0)
    holm_adjusted_p: float = Field(ge=0.0, le=1.0)
    holm_passed: bool
    confidence: float = Field(gt=0.0, lt=1.0)
    tpr_low: float | None
    tnr_low: float | None
    tpr_bound: float | None
    tnr_bound: float | None
    failed: tuple[str, ...] = ()
    message: str


class FailureModeRecord(FrozenModel):
    """Every failure mode's decision for one grader version, gated together with Holm's correction.

    Attributes:
        schema_version: Always :data:`FAILURE_MODE_RECORD_SCHEMA`.
        fingerprint: The grader's exact fingerprint; the decisions apply to this string only.
        judge: The judge rater in the label table.
        experts: The expert raters.
        label_table: The labels' hash, file name and size.
        policy: The trust policy applied to every criterion (a per-criterion override shows in the
            decision's ``tpr_bound`` and ``tnr_bound``).
        alpha: The family-wise one-sided error rate, ``(1 - policy.confidence) / 2``.
        correction: ``holm`` when two or more criteria were gated together, ``none`` for one.
        statement: The sentence a report prints about the correction.
        decisions: One decision per criterion, criteria unique.
        judgekit_version: judgekit's version that wrote the record.
        created_at: When the record was made (UTC, ISO 8601; a time without a zone is read as UTC).
    """

    schema_version: Literal["judgekit.failure-mode-record/1"] = FAILURE_MODE_RECORD_SCHEMA
    fingerprint: str = Field(min_length=1)
    judge: str
    experts: tuple[str, ...]
    label_table: LabelTableInfo
    policy: TrustPolicy
    alpha: float = Field(gt=0.0, lt=1.0)
    correction: Literal["holm", "none"]
    statement: str
    decisions: tuple[FailureModeDecision, ...] = Field(min_length=1)
    judgekit_version: str
    created_at: datetime

    @field_validator("decisions")
    @classmethod
    def _unique_criteria(cls, decisions: tuple[FailureModeDecision, ...]) -> tuple[FailureModeDecision, ...]:
        seen: set[str] = set()
        for d in decisions:
            if d.criterion in seen:
                raise ValueError(f"criterion {d.criterion!r} has two decisions; each criterion has one")
            seen.add(d.criterion)
        return decisions


def _condition(gate: GateResult, name: str) -> tuple[float | None, float | None]:
    for c in gate.conditions:
        if c.name == name:
            return c.observed, c.threshold
    return None, None


def build_failure_mode_record(
    report: FamilyReport,
    *,
    fingerprint: str,
    policy: TrustPolicy,
    label_table: LabelTableInfo,
    now: datetime | None = None,
) -> FailureModeRecord:
    """Turn a family report into the record the trust function reads.

    Args:
        report: The report of :func:`calibrate_families`.
        fingerprint: The judge's exact grader fingerprint (non-empty).
        policy: The policy the report was computed with.
        label_table: The labels' hash, name and size.
        now: The record's time (UTC now when ``None``).

    Raises:
        JudgekitError: When the fingerprint is empty.
    """
    if not fingerprint.strip():
        raise JudgekitError("the grader fingerprint is empty; a record needs the exact fingerprint it is for")
    decisions = []
    for f in report.families:
        tpr_low, tpr_bound = _condition(f.gate, "tpr_lower_bound")
        tnr_low, tnr_bound = _condition(f.gate, "tnr_lower_bound")
        decisions.append(
            FailureModeDecision(
                criterion=f.criterion,
                trusted=f.trusted,
                items=f.items,
                rate_p_value=f.rate_p_value,
                holm_rank=f.holm_rank,
                holm_level=f.holm_level,
                holm_adjusted_p=f.holm_adjusted_p,
                holm_passed=f.holm_passed,
                confidence=f.confidence,
                tpr_low=tpr_low,
                tnr_low=tnr_low,
                tpr_bound=tpr_bound,
                tnr_bound=tnr_bound,
                failed=tuple(f"{c.name}: {c.message}" for c in f.gate.failed),
                message=f.message,
            )
        )
    return FailureModeRecord(
        fingerprint=fingerprint,
        judge=report.judge,
        experts=report.experts,
        label_table=label_table,
        policy=policy,
        alpha=report.alpha,
        correction="holm" if report.correction == "holm" else "none",
        statement=report.statement,
        decisions=tuple(decisions),
        judgekit_version=__version__,
        created_at=(now or datetime.now(UTC)).replace(microsecond=0),
    )


def failure_mode_record_filename(record: FailureModeRecord) -> str:
    """File name for a record: ``<sha256(fingerprint)[:16]>-<UTC time>.json``, so names sort by date.

    The file goes in the records folder's :data:`FAILURE_MODES_DIR` sub-folder.
    """
    when = record.created_at if record.created_at.tzinfo else record.created_at.replace(tzinfo=UTC)
    return stamped_filename(record.fingerprint, when)


def dump_failure_mode_record(record: FailureModeRecord) -> str:
    """Serialise a record as indented JSON (ends with a newline)."""
    return record.model_dump_json(indent=2) + "\n"


def load_failure_mode_record(
    text: str | bytes, *, source: str | os.PathLike[str] | None = None
) -> FailureModeRecord:
    """Parse and validate a failure-mode record.

    Args:
        text: The file's content.
        source: The file, for messages, as text or a path object.

    Raises:
        ProblemsError: When it is not JSON, or a field is missing, unknown or invalid (one problem each,
            naming ``source`` and the field).
    """
    from judgekit.io.documents import load_json_model

    return load_json_model(
        FailureModeRecord,
        text,
        source=source,
        what="failure-mode record",
        redo="restore the file or run judgekit judge failure-modes again",
    )
