"""Calibration records: the evidence that a judge with an exact fingerprint earned trust.

A record is a JSON file in the repository's ``calibration/records/`` directory. It holds the grader
fingerprint (produced by the judge layer: model, parameters, template hash, rubric version), the label
table's SHA-256, every metric, the policy, the trust verdict, judgekit's version and the date, every
item's labels (so that a later grader can be compared with this one on the same items), and which criterion
texts were labelled, by hash (:class:`LabelledCriteria`; absent from records written before judgekit kept
them).

Whether a fingerprint is trusted is not decided here: :meth:`judgekit.calibration.trust.TrustBook.decide`
is the one trust function. It requires that the most recent record for the *exact* fingerprint passed its
policy, and also reads the bias reports and the failure-mode records that can withdraw that trust. This
module builds, writes and reads the records themselves.
"""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime
from os import PathLike
from pathlib import Path
from typing import Final, Literal

from judgekit.calibration.agreement import AgreementReport
from judgekit.calibration.alttest import AltTestResult
from judgekit.calibration.beyond import SelectiveResult
from judgekit.calibration.ceiling import HumanCeiling
from judgekit.calibration.correlation import ScoredAgreement
from judgekit.calibration.gate import GateResult, TrustPolicy
from judgekit.errors import JudgekitError
from judgekit.judges.rubric import CRITERION_HASH_SCHEME
from judgekit.verdict import FrozenModel
from judgekit.version import __version__

__all__ = [
    "RECORD_SCHEMA",
    "CalibrationRecord",
    "LabelTableInfo",
    "LabelledCriteria",
    "build_record",
    "dump_record",
    "load_record",
    "load_records",
    "record_filename",
    "stamped_filename",
]

RECORD_SCHEMA: Final = "judgekit.calibration-record/1"


class LabelTableInfo(FrozenModel):
    """Which labels a record was computed on.

    Attributes:
        sha256: SHA-256 of the label table's bytes.
        name: The table's file name (not its full path, so records do not leak local paths).
        rows: Distinct (item, rater) ratings in the table.
    """

    sha256: str
    name: str
    rows: int


class LabelledCriteria(FrozenModel):
    """Which criterion texts a calibration's labels were given on, by hash.

    Calibration speaks for a judge over the criteria it was measured on; a verdict on a criterion text
    nobody labelled rests on that judge's agreement elsewhere. The trust function
    (:meth:`judgekit.calibration.trust.TrustBook.status`) says in each reason whether a verdict's text is
    listed here.

    Attributes:
        scheme: How :attr:`text_hashes` were made (:data:`judgekit.judges.rubric.CRITERION_HASH_SCHEME`);
            hashes of another scheme are never compared, so whether a text was labelled is then unknown.
        ids: The labelled criterion ids (the label table's ``criterion`` column, without a ``criterion:``
            prefix), sorted; empty when the table has no ``criterion`` column.
        text_hashes: The distinct hashes of the labelled texts, as the judge read them
            (:func:`judgekit.judges.rubric.criterion_text_hash`), sorted.
        unresolved: Labelled criterion ids whose text was not found (no rubric or golden set given, a
            criterion the rubric does not have, a case not in the set), sorted; ``""`` when the table has no
            ``criterion`` column. Whether a text of one of these was labelled is unknown.
    """

    scheme: str = CRITERION_HASH_SCHEME
    ids: tuple[str, ...] = ()
    text_hashes: tuple[str, ...] = ()
    unresolved: tuple[str, ...] = ()


class CalibrationRecord(FrozenModel):
    """One calibration of one grader version against experts.

    Attributes:
        schema_version: Always :data:`RECORD_SCHEMA`.
        fingerprint: The grader's exact fingerprint; trust applies to this string only.
        trusted: The gate's verdict (the same as ``gate.trusted``, kept at the top for readers).
        judge: The judge rater's name in the label table.
        experts: The expert raters.
        label_table: The labels' hash, file name and size.
        policy: The trust policy applied.
        gate: Every condition and whether it passed.
        metrics: Every agreement metric and every item's labels.
        selective: Selective-judging result, when the judge's rows carried a confidence.
        ceiling: The human-ceiling comparison (judge vs experts against experts vs each other).
        alt_test: The alternative-annotator test, per annotator and overall.
        correlations: Spearman, Kendall's tau-b and Pearson of the judge's scores with the experts' on a
            scored scale; ``None`` on a nominal scale and in a record written before judgekit computed them.
        judgekit_version: judgekit's version that wrote the record.
        created_at: When the record was made (UTC, ISO 8601).
        criteria: The labelled criterion texts, by hash; ``None`` in a record written before judgekit
            recorded them (whether a text was labelled is then unknown).
    """

    schema_version: Literal["judgekit.calibration-record/1"] = RECORD_SCHEMA
    fingerprint: str
    trusted: bool
    judge: str
    experts: tuple[str, ...]
    label_table: LabelTableInfo
    policy: TrustPolicy
    gate: GateResult
    metrics: AgreementReport
    selective: SelectiveResult | None = None
    ceiling: HumanCeiling | None = None
    alt_test: AltTestResult | None = None
    correlations: ScoredAgreement | None = None
    judgekit_version: str
    created_at: datetime
    criteria: LabelledCriteria | None = None


def build_record(
    *,
    fingerprint: str,
    report: AgreementReport,
    gate: GateResult,
    policy: TrustPolicy,
    label_table: LabelTableInfo,
    selective: SelectiveResult | None = None,
    ceiling: HumanCeiling | None = None,
    alt_test: AltTestResult | None = None,
    correlations: ScoredAgreement | None = None,
    criteria: LabelledCriteria | None = None,
    now: datetime | None = None,
) -> CalibrationRecord:
    """Assemble a calibration record.

    Args:
        fingerprint: The grader fingerprint (non-empty).
        report: The agreement report.
        gate: The gate's verdict on ``report``.
        policy: The policy the gate applied.
        label_table: The labels' hash, name and size.
        selective: The selective-judging result, if computed.
        ceiling: The human-ceiling comparison, if computed.
        alt_test: The alternative-annotator test, if computed.
        correlations: The scored-scale correlations, if computed.
        criteria: The labelled criterion texts, by hash (``None``: not recorded).
        now: The record's time (UTC now when ``None``).

    Raises:
        JudgekitError: When the fingerprint is empty.
    """
    if not fingerprint.strip():
        raise JudgekitError("the grader fingerprint is empty; a record needs the exact fingerprint it trusts")
    return CalibrationRecord(
        fingerprint=fingerprint,
        trusted=gate.trusted,
        judge=report.judge,
        experts=report.experts,
        label_table=label_table,
        policy=policy,
        gate=gate,
        metrics=report,
        selective=selective,
        ceiling=ceiling,
        alt_test=alt_test,
        correlations=correlations,
        judgekit_version=__version__,
        created_at=(now or datetime.now(UTC)).replace(microsecond=0),
        criteria=criteria,
    )


def stamped_filename(fingerprint: str, created_at: datetime) -> str:
    """The file name of a calibration record, bias report or failure-mode record.

    ``<sha256(fingerprint)[:16]>-<UTC time>.json``: names of one fingerprint sort by date. A naive
    ``created_at`` is taken as local time (``astimezone``).
    """
    digest = hashlib.sha256(fingerprint.encode("utf-8")).hexdigest()[:16]
    return f"{digest}-{created_at.astimezone(UTC).strftime('%Y%m%dT%H%M%SZ')}.json"


def record_filename(record: CalibrationRecord) -> str:
    """File name for a record: a short hash of the fingerprint and the UTC time, so names sort by date."""
    return stamped_filename(record.fingerprint, record.created_at)


def dump_record(record: CalibrationRecord) -> str:
    """Serialise a record as indented JSON (ends with a newline)."""
    return record.model_dump_json(indent=2) + "\n"


def load_record(text: str | bytes, *, source: str | os.PathLike[str] | None = None) -> CalibrationRecord:
    """Parse and validate a record.

    ``source`` may be given as text or a path object.

    Raises:
        ProblemsError: When it is not JSON, or a field is missing, unknown or invalid (one problem each,
            naming ``source`` and the field).
    """
    from judgekit.io.documents import load_json_model

    return load_json_model(CalibrationRecord, text, source=source, what="calibration record")


def load_records(records_dir: str | PathLike[str]) -> list[CalibrationRecord]:
    """Read every ``*.json`` record in ``records_dir`` (none when it does not exist).

    Args:
        records_dir: The records folder, as text or a path object.

    Raises:
        ProblemsError: When a file there is not a valid record (a broken record is never skipped
            silently).
    """
    records_dir = Path(records_dir)
    if not records_dir.is_dir():
        return []
    from judgekit.io.documents import read_regular

    return [
        load_record(read_regular(p, "calibration record"), source=p)
        for p in sorted(records_dir.glob("*.json"))
    ]
