"""One calibration run, from a validated label table to a result the reports render.

This module is pure: the command reads the files, calls :func:`run_calibration`, renders the result and
writes the record.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Final, Literal

from judgekit.calibration.agreement import AgreementReport, compute_agreement
from judgekit.calibration.alttest import AltTestResult, alt_test_for_report
from judgekit.calibration.ceiling import HumanCeiling
from judgekit.calibration.compare import GraderComparison, compare_graders
from judgekit.calibration.gate import GateResult, TrustPolicy, ceiling_for, evaluate_gate
from judgekit.calibration.labels import (
    LabelTable,
    check_items_have_two_raters,
    check_raters,
)
from judgekit.calibration.records import CalibrationRecord, LabelTableInfo, build_record
from judgekit.calibration.selective import SelectiveResult, selective_threshold
from judgekit.errors import JudgekitError
from judgekit.verdict import FrozenModel

__all__ = ["REPORT_SCHEMA", "CalibrationResult", "resolve_fingerprint", "run_calibration", "selective_for"]

REPORT_SCHEMA: Final = "judgekit.calibration-report/1"


class CalibrationResult(FrozenModel):
    """Everything one ``judgekit calibrate`` run found.

    Attributes:
        schema_version: Always :data:`REPORT_SCHEMA`.
        fingerprint: The judge's fingerprint, or ``None`` when none was given (then no record is written
            and nothing can be trusted).
        label_table: The labels' hash, name and size.
        policy: The policy applied.
        report: The agreement metrics.
        gate: The trust verdict.
        selective: Selective judging, when the judge's rows carry a confidence.
        comparison: The comparison with ``--baseline``, when given.
        ceiling: The judge's agreement with the experts against theirs with each other (the human
            ceiling), with a paired bootstrap interval on the difference, and the consensus base rate.
        alt_test: The alternative-annotator test (undefined, with the reason, below three experts).
    """

    schema_version: Literal["judgekit.calibration-report/1"] = REPORT_SCHEMA
    fingerprint: str | None
    label_table: LabelTableInfo
    policy: TrustPolicy
    report: AgreementReport
    gate: GateResult
    selective: SelectiveResult | None = None
    comparison: GraderComparison | None = None
    ceiling: HumanCeiling | None = None
    alt_test: AltTestResult | None = None

    def to_record(self, *, now: datetime | None = None) -> CalibrationRecord:
        """The calibration record of this run (what ``judgekit calibrate`` writes), not yet written.

        Args:
            now: The record's time (UTC now when ``None``).

        Raises:
            JudgekitError: When the run has no fingerprint (a record trusts an exact fingerprint only).
        """
        return build_record(
            fingerprint=self.fingerprint or "",
            report=self.report,
            gate=self.gate,
            policy=self.policy,
            label_table=self.label_table,
            selective=self.selective,
            ceiling=self.ceiling,
            alt_test=self.alt_test,
            now=now,
        )


def resolve_fingerprint(table: LabelTable, judge: str, option: str | None) -> str | None:
    """The judge's fingerprint from ``--fingerprint`` or the table's ``fingerprint`` column.

    Raises:
        JudgekitError: When both are given and differ, or the option is blank.
    """
    column = table.fingerprints().get(judge)
    if option is not None and not option.strip():
        raise JudgekitError("--fingerprint: the fingerprint is empty")
    if option is not None and column is not None and option != column:
        raise JudgekitError(
            f"--fingerprint {option!r} differs from the fingerprint {column!r} in the label table's rows for "
            f"the judge {judge!r}; calibrate the grader version that produced the labels"
        )
    return option if option is not None else column


def selective_for(report: AgreementReport, policy: TrustPolicy) -> SelectiveResult | None:
    """Selective judging on the items with a judge confidence and a substantive consensus, if any."""
    scale = report.scale
    usable = [
        r
        for r in report.items
        if r.judge is not None and r.consensus is not None and r.consensus != scale.abstain
    ]
    with_conf = [r for r in usable if r.confidence is not None]
    if not with_conf:
        return None
    decided = [r for r in with_conf if r.judge != scale.abstain]
    return selective_threshold(
        [float(r.confidence) for r in decided if r.confidence is not None],
        [r.judge == r.consensus for r in decided],
        target=policy.selective.target_agreement,
        delta=policy.selective.delta,
        interval_confidence=policy.confidence,
        population=len(with_conf),
    )


def run_calibration(
    table: LabelTable,
    *,
    judge: str,
    experts: Sequence[str] | None,
    policy: TrustPolicy,
    fingerprint: str | None,
    label_name: str,
    baseline: CalibrationRecord | None = None,
) -> CalibrationResult:
    """Measure the judge, apply the gate, and compare with a baseline.

    Args:
        table: The validated label table.
        judge: The judge rater.
        experts: Expert raters, or ``None`` for every other rater.
        policy: The trust policy.
        fingerprint: The judge's fingerprint (see :func:`resolve_fingerprint`).
        label_name: The label file's name, for the record.
        baseline: The old grader's record, for a grader-change comparison.

    Raises:
        JudgekitError: For an unknown judge or expert, an item only one rater labelled, or a baseline
            that cannot be compared.
    """
    chosen = check_raters(table, judge, experts)
    check_items_have_two_raters(table, [judge, *chosen])
    report = compute_agreement(
        table,
        judge=judge,
        experts=chosen,
        confidence=policy.confidence,
        resamples=policy.bootstrap.resamples,
        seed=policy.bootstrap.seed,
    )
    ceiling = ceiling_for(report, policy)
    alt = alt_test_for_report(report, policy.alt_test)
    gate = evaluate_gate(report, policy, ceiling=ceiling, alt_test=alt)
    comparison = None
    if baseline is not None:
        comparison = compare_graders(
            baseline,
            report,
            new_fingerprint=fingerprint,
            label_sha256=table.sha256,
            confidence=policy.confidence,
            resamples=policy.bootstrap.resamples,
            seed=policy.bootstrap.seed,
        )
    return CalibrationResult(
        fingerprint=fingerprint,
        label_table=LabelTableInfo(sha256=table.sha256, name=label_name, rows=len(table.rows)),
        policy=policy,
        report=report,
        gate=gate,
        selective=selective_for(report, policy),
        comparison=comparison,
        ceiling=ceiling,
        alt_test=alt,
    )
