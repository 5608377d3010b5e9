"""One calibration run, from a validated label table to a result the reports render.

This module is pure: the command reads the files, calls :func:`run_calibration`, renders the result and
writes the record.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Final, Literal

from judgekit.calibration.agreement import AgreementReport, compute_agreement
from judgekit.calibration.alttest import AltTestResult, alt_test_for_report
from judgekit.calibration.ceiling import HumanCeiling
from judgekit.calibration.compare import GraderComparison, compare_graders
from judgekit.calibration.correlation import ScoredAgreement
from judgekit.calibration.fingerprints import KnownFingerprints
from judgekit.calibration.fingerprints import resolve_fingerprint as resolve_typed
from judgekit.calibration.gate import GateResult, TrustPolicy, ceiling_for, correlations_for, evaluate_gate
from judgekit.calibration.jury import JuryAgreement, jury_agreement
from judgekit.calibration.labels import (
    LabelTable,
    check_items_have_two_raters,
    check_raters,
)
from judgekit.calibration.records import CalibrationRecord, LabelledCriteria, LabelTableInfo, build_record
from judgekit.calibration.selective import SelectiveResult, selective_threshold
from judgekit.calibration.trust import criterion_key
from judgekit.errors import JudgekitError
from judgekit.judges.rubric import criterion_text_hash
from judgekit.verdict import FrozenModel

__all__ = [
    "REPORT_SCHEMA",
    "CalibrationResult",
    "CriterionText",
    "labelled_criteria",
    "resolve_fingerprint",
    "run_calibration",
    "selective_for",
]

REPORT_SCHEMA: Final = "judgekit.calibration-report/1"

CriterionText = Callable[[str, str], str | None]
"""``(case id, criterion id) -> text``: the text the judge read for a labelled item's criterion, or ``None``
when it cannot be found. The case id is the label table's ``case_id`` (else its ``item_id``); the criterion
id is bare (no ``criterion:`` prefix)."""


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
        correlations: Spearman's rho, Kendall's tau-b and Pearson's r of the judge's scores with the
            experts' median, each expert and among the experts (``None`` on a nominal scale).
        criteria: The labelled criterion texts, by hash (:func:`labelled_criteria`); ``None`` for a result
            made without them (its record then says nothing of which texts were labelled).
        jury: For a jury (the judge rater is a jury whose members' rows are in the table): each member's
            agreement, the pairwise correlation of their errors, the effective number of independent votes
            and whether the jury pays (:mod:`judgekit.calibration.jury`); ``None`` for one judge (and then
            left out of the JSON report).
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
    correlations: ScoredAgreement | None = None
    criteria: LabelledCriteria | None = None
    jury: JuryAgreement | None = None

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
            correlations=self.correlations,
            criteria=self.criteria,
            now=now,
        )


def labelled_criteria(table: LabelTable, text_of: CriterionText) -> LabelledCriteria:
    """Which criterion texts the table's items were labelled on, by hash.

    Args:
        table: The label table calibrated on (after the random-sample guard).
        text_of: The text the judge read for a case's criterion (:data:`CriterionText`).

    Returns:
        Every labelled criterion id, the distinct hashes of the texts found, and the ids some of whose
        texts were not found (``""`` when the table has no ``criterion`` column: which texts its items
        were labelled on is not known).
    """
    ids: set[str] = set()
    hashes: set[str] = set()
    unresolved: set[str] = set()
    for item, case_id in table.case_of().items():
        key = criterion_key(item.criterion)
        if not key:
            unresolved.add("")
            continue
        ids.add(key)
        text = text_of(case_id, key)
        if text is None:
            unresolved.add(key)
        else:
            hashes.add(criterion_text_hash(text))
    return LabelledCriteria(
        ids=tuple(sorted(ids)), text_hashes=tuple(sorted(hashes)), unresolved=tuple(sorted(unresolved))
    )


def resolve_fingerprint(
    table: LabelTable, judge: str, option: str | None, known: KnownFingerprints | None = None
) -> str | None:
    """The judge's full fingerprint from ``--fingerprint`` or the table's ``fingerprint`` column.

    Each is resolved to one full fingerprint by :func:`judgekit.calibration.fingerprints.resolve_fingerprint`
    (a prefix of at least 8 hexadecimal characters names the one known fingerprint it starts), so the
    record is keyed by the full fingerprint whatever was typed.

    Args:
        table: The label table (its ``fingerprint`` column on the judge's rows, if any).
        judge: The judge rater.
        option: ``--fingerprint`` as typed, or ``None`` (not given).
        known: The fingerprints known to the command (records, the configured judge); the table's column
            is added to them. ``None``: only the table's.

    Returns:
        The full fingerprint, or ``None`` when neither the option nor the column gives one.

    Raises:
        JudgekitError: When the option or the column is not a fingerprint or a prefix of exactly one known
            fingerprint, or both are given and name different fingerprints.
    """
    known = known if known is not None else KnownFingerprints()
    known.searched.append("the label table's fingerprint column")
    for rater, fingerprint in table.fingerprints().items():
        known.add(fingerprint, f"the label table's fingerprint column for {rater!r}")
    raw = table.fingerprints().get(judge)
    column = (
        None
        if raw is None
        else resolve_typed(raw, known, option=f"the label table's fingerprint for {judge!r}")
    )
    chosen = None if option is None else resolve_typed(option, known, option="--fingerprint")
    if chosen is not None and column is not None and chosen != column:
        raise JudgekitError(
            f"--fingerprint {option!r} differs from the fingerprint {column!r} in the label table's rows for "
            f"the judge {judge!r}; calibrate the grader version that produced the labels"
        )
    return chosen if chosen is not None else column


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
    criterion_text: CriterionText | None = None,
    jury_members: Sequence[str] | None = None,
) -> CalibrationResult:
    """Measure the judge, apply the gate, and compare with a baseline.

    Args:
        table: The validated label table.
        judge: The judge rater.
        experts: Expert raters, or ``None`` for the default (:func:`.labels.default_experts`).
        policy: The trust policy.
        fingerprint: The judge's fingerprint (see :func:`resolve_fingerprint`).
        label_name: The label file's name, for the record.
        baseline: The old grader's record, for a grader-change comparison.
        criterion_text: Finds the text of each labelled item's criterion, to record which texts were
            labelled (:func:`labelled_criteria`); ``None`` records none (the record then says nothing of
            them, as one written before judgekit recorded them).
        jury_members: When the judge is a jury: its members' rater names in the table, whose agreement,
            correlated errors and effective votes the result's ``jury`` reports; ``None``: one judge.

    Raises:
        JudgekitError: For an unknown judge or expert, an item only one rater labelled, a baseline
            that cannot be compared, or jury members that are not usable (:func:`~.jury.jury_agreement`).
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
    if jury_members is not None:  # the members' rows are used: by the jury section
        unused = sorted(set(table.raters) - {judge, *chosen, *jury_members})
        notes = [n for n in report.notes if not n.startswith("rater(s) not used:")]
        notes += [f"rater(s) not used: {', '.join(unused)}"] if unused else []
        report = report.model_copy(update={"notes": tuple(notes)})
    ceiling = ceiling_for(report, policy)
    alt = alt_test_for_report(report, policy.alt_test)
    correlations = correlations_for(report, policy)
    gate = evaluate_gate(report, policy, ceiling=ceiling, alt_test=alt, correlations=correlations)
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
        correlations=correlations,
        criteria=None if criterion_text is None else labelled_criteria(table, criterion_text),
        jury=None
        if jury_members is None
        else jury_agreement(
            table,
            report,
            members=jury_members,
            resamples=policy.bootstrap.resamples,
            seed=policy.bootstrap.seed,
        ),
    )
