"""The one trust function: is this grader fingerprint trusted for this criterion, and why.

Every path that needs to know whether a judge-backed verdict may be believed asks
:meth:`TrustBook.decide` (or its callable form :meth:`TrustBook.lookup`, which graders take as their
``trust=``). Nothing else in judgekit computes trust.

A :class:`TrustBook` reads a calibration records folder **once**, when it is made, and answers from what it
read (a record written later is seen by a new book). It holds three sources, each keyed by the grader's
*exact* fingerprint, and for each fingerprint only the **latest** file of each source counts (latest by
``created_at``; a time without a zone is read as UTC; on a tie, the file name sorting last):

1. **Calibration records** (``<records>/*.json``, :mod:`judgekit.calibration.records`): the latest record
   must exist and have passed its policy. This is the only source that can *grant* trust: without it the
   fingerprint is untrusted whatever the other sources say.
2. **Bias reports** (``<records>/bias/*.json``, :mod:`judgekit.calibration.bias`): when the latest report
   blocks trust (a must-pass probe ``biased`` or ``error``) the fingerprint is untrusted for every
   criterion. A clear report, or none, changes nothing.
3. **Failure-mode records** (``<records>/failure-modes/*.json``, :mod:`judgekit.calibration.families`,
   written by ``judgekit judge failure-modes --fingerprint``): a criterion the latest record did not trust
   (Holm's step-down did not reject, or its gate failed at the adjusted confidence) is untrusted *for that
   criterion*. A criterion the record trusts, or does not cover, falls back to sources 1 and 2: a
   failure-mode record never grants trust on its own. A decision for the criterion ``""`` (a label table
   without a ``criterion`` column) is about the judge on every criterion and applies to every question,
   with or without a criterion.
4. **Canary checks** (``<records>/canary-history/*.json``, :mod:`judgekit.calibration.canary`, written by
   ``judgekit grade --canary N`` and ``judgekit judge canary``): when the latest check declares drift (its
   sequential test crossed, in this check or an earlier one of its series) and was made against the
   canary set of the fingerprint's *latest* calibration record, the fingerprint is untrusted for every
   criterion; the reason names the check, the items that flipped, the statistic against the threshold and
   the command that re-calibrates. A newer calibration record than the one the check re-asked starts a new
   series and lifts the withdrawal: the canary set measured the judge as that older record saw it (give
   the new calibration the judge's current replies, not the drifted judge's old ones). A check that
   declares nothing changes nothing.

**Prefix-keyed records.** Records are keyed by the full fingerprint (64 hexadecimal characters): every
command resolves a typed prefix to one first (:func:`judgekit.calibration.fingerprints.resolve_fingerprint`).
A record an older judgekit keyed by a prefix (``86b6bb71d425``) never grants trust, because trust is for an
exact grader, and is never ignored either, because a bias report or failure-mode record so keyed may be
withdrawing trust: while any record (of the three sources) is keyed by a proper prefix of a fingerprint, that
fingerprint is untrusted (``withheld_by`` ``prefix_keyed``), and the reason names each such file and the
command that writes it again for the full fingerprint (then delete the old file).

Sources 2, 3 and 4 only withdraw, so their order does not change the answer: the fingerprint is trusted for a
criterion exactly when source 1 grants it and neither 2 nor 3 withdraws it. Each source is read on its own
dates: a newer calibration record does not lift an older biased report or an older rejected failure mode
(only a newer report or record for the same fingerprint does), because they measured the same grader.

**Criterion ids.** :meth:`TrustBook.decide` takes the bare criterion id (``honest_reporting``,
``case.acceptance``), as the label table's ``criterion`` column writes it. Both sides are compared after
:func:`criterion_key`: surrounding white space and a leading ``criterion:`` (the rubric grader's check-id
prefix) are removed, and the rest must be equal, case-sensitively. So a table labelled by check id
(``criterion:honest_reporting``) and one labelled by criterion id match the same check. An empty criterion
(``None`` or ``""``) asks about the judge as a whole: sources 1 and 2, plus any ``""`` decision; the
failure modes it does not trust are named in the reason but do not change the answer.

**Labelled criterion texts.** Calibration speaks for a judge over the criteria it was measured on, so a
verdict on a criterion nobody labelled is still judged, but its reason says so. A calibration record lists
the labelled criterion texts by hash (:class:`~judgekit.calibration.records.LabelledCriteria`); asked with a
criterion's text (the graders pass the text the judge read), a trusted decision's reason ends saying
whether that text was among them, and asked with an id only, whether the id was labelled
(``criterion_labelled`` of the decision says it whatever the trust). A record written before judgekit kept the
hashes says ``unknown (record predates criterion hashes)``, never either way. With
``unlabelled_criteria="withhold"`` (the project setting ``unlabelled_criteria``) a verdict whose text was
never labelled is untrusted (``withheld_by`` names ``unlabelled_criterion``); with ``"count"`` (the
default) it keeps the record's trust and reports count it. An unknown answer never withholds.

**Reasons.** An untrusted decision's reason lists every source that withholds trust, in the order above,
joined by ``"; "``. A trusted decision's reason names the passing calibration record, the bias report
(or that none was recorded) and the failure-mode decision that applies (or what the record leaves out).

A broken file in any of the three places raises :class:`~judgekit.errors.ProblemsError` naming the file
and what is wrong, all files' problems together; a broken record is never skipped.

Example, with records made in memory (:meth:`TrustBook.from_records`):

>>> from pathlib import Path
>>> book = TrustBook.from_records(Path("calibration/records"))
>>> decision = book.decide("3f2a9c1d0e4b5a6f")
>>> decision.trust.value
'untrusted'
>>> decision.reason.split(":")[0]
'no calibration record for fingerprint 3f2a9c1d0e4b in calibration/records'
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from os import PathLike
from pathlib import Path
from typing import Final, Generic, Literal, TypeVar

from judgekit.advice import current_advice
from judgekit.calibration.bias import BIAS_DIR, BiasReport, bias_report_filename, load_bias_report
from judgekit.calibration.canary import (
    CANARY_HISTORY_DIR,
    CanaryCheck,
    canary_check_filename,
    load_canary_check,
)
from judgekit.calibration.families import (
    FAILURE_MODES_DIR,
    FailureModeDecision,
    FailureModeRecord,
    failure_mode_record_filename,
    load_failure_mode_record,
)
from judgekit.calibration.fingerprints import FULL_LENGTH, KnownFingerprints
from judgekit.calibration.gate import Condition, GateResult
from judgekit.calibration.records import CalibrationRecord, load_record, record_filename
from judgekit.errors import JudgekitError, Problem, ProblemsError
from judgekit.graders.contract import UNLABELLED_POLICIES, UnlabelledPolicy, unlabelled_policy
from judgekit.judges.rubric import CRITERION_HASH_SCHEME, criterion_text_hash
from judgekit.verdict import Trust, TrustDecision

__all__ = [
    "CHECK_PREFIX",
    "UNLABELLED_POLICIES",
    "TrustBook",
    "TrustStatus",
    "UnlabelledPolicy",
    "WithheldBy",
    "criterion_key",
    "criterion_labelled",
    "trust_decision",
    "unlabelled_policy",
]

CHECK_PREFIX: Final = "criterion:"
"""Prefix of the rubric grader's check ids (``criterion:<id>``), removed by :func:`criterion_key`."""

_T = TypeVar("_T", CalibrationRecord, BiasReport, FailureModeRecord, CanaryCheck)


def criterion_key(criterion: str) -> str:
    """The form in which criterion ids are compared: no surrounding space, no ``criterion:`` prefix.

    Args:
        criterion: A criterion id from a label table's ``criterion`` column, a bare rubric criterion id,
            or a rubric check id.

    Returns:
        The id compared case-sensitively; ``""`` means no criterion (the judge as a whole).

    >>> criterion_key("criterion:honest_reporting")
    'honest_reporting'
    >>> criterion_key(" case.acceptance ")
    'case.acceptance'
    >>> criterion_key("Honest_Reporting") == criterion_key("honest_reporting")
    False
    """
    return criterion.strip().removeprefix(CHECK_PREFIX).strip()


def criterion_labelled(
    record: CalibrationRecord, criterion: str, text: str | None
) -> tuple[bool | None, str]:
    """Whether a criterion was among those a calibration record's labels were given on, and why.

    Args:
        record: The calibration record.
        criterion: The criterion id, as :func:`criterion_key` gives it (``""``: none).
        text: The criterion's text as the judge read it, or ``None`` to ask by id only.

    Returns:
        ``(labelled, clause)``: ``True`` when the text's hash (or, without a text, the id) is listed,
        ``False`` when it is not, ``None`` when it cannot be told (a record that predates the hashes,
        another hash scheme, texts the calibration could not find); the clause says which for a reason.
        ``(None, "")`` when asked about neither a criterion nor a text.
    """
    listed = record.criteria
    if not criterion and text is None:
        return None, ""
    if listed is None:
        return None, "criterion text: unknown (record predates criterion hashes)"
    if listed.scheme != CRITERION_HASH_SCHEME:
        return None, (
            f"criterion text: unknown (the record hashed its labelled texts by {listed.scheme}, this "
            f"judgekit by {CRITERION_HASH_SCHEME})"
        )
    name = f"criterion {criterion!r}" if criterion else "the criterion"
    if text is not None:
        digest = criterion_text_hash(text)
        count = f"{len(listed.text_hashes)} labelled text(s)"
        if digest in listed.text_hashes:
            return True, f"{name}: its text ({digest[:12]}) is among the calibration's {count}"
        # a text of an id whose labelled texts were not all found (any id, asked without one) may be one
        missing = [k for k in listed.unresolved if not k or not criterion or k == criterion]
        if missing:
            why = (
                "the label table had no criterion column"
                if "" in missing
                else f"the calibration could not find every labelled text of {', '.join(missing)}: calibrate "
                "with --rubric and --cases"
            )
            return None, f"{name}: whether its text ({digest[:12]}) was labelled is unknown ({why})"
        return False, (
            f"{name}: its text ({digest[:12]}) was never labelled (not among the calibration's {count}): "
            "the verdict rests on the judge's agreement on other criteria"
        )
    if criterion in listed.ids:
        return True, f"{name} was labelled in the calibration (by id; its text was not given)"
    if "" in listed.unresolved:
        return None, f"{name}: whether it was labelled is unknown (the label table had no criterion column)"
    labelled = ", ".join(listed.ids) or "none"
    return False, f"{name} was never labelled in the calibration (labelled criteria: {labelled})"


def _utc(when: datetime) -> datetime:
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _date(when: datetime) -> str:
    return _utc(when).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def _short(fingerprint: str) -> str:
    return fingerprint[:12]


@dataclass(frozen=True)
class _Filed(Generic[_T]):
    """One record and the name of the file it came from."""

    value: _T
    name: str

    @property
    def order(self) -> tuple[datetime, str]:
        return _utc(self.value.created_at), self.name

    @property
    def cite(self) -> str:
        return f"{self.name}, {_date(self.value.created_at)}"


def _latest(items: Iterable[_Filed[_T]]) -> dict[str, _Filed[_T]]:
    out: dict[str, _Filed[_T]] = {}
    for item in items:
        fp = item.value.fingerprint
        if fp not in out or item.order > out[fp].order:
            out[fp] = item
    return out


def _canary_withdrawal(filed: _Filed[CanaryCheck], records_dir: Path) -> str:
    """Why a canary check that declared drift withdraws trust, with the evidence and what to do."""
    check = filed.value
    flipped = [r.item for r in check.replies if r.flipped]
    shown = ", ".join(flipped[:10]) + (f" and {len(flipped) - 10} more" if len(flipped) > 10 else "")
    first = (
        ""
        if check.first_detected in (None, filed.name)
        else f"; drift was first declared by {check.first_detected}, and an alarm stands for its series"
    )
    return (
        f"the latest canary check ({filed.cite}, check {check.check} against calibration record "
        f"{check.record_file}) declared drift: {check.test.summary}; items flipped in this check: "
        f"{shown or 'none'}{first}: the judge's replies moved since it was calibrated, so re-calibrate it "
        f"on its current replies (`judgekit grade ... --cache-mode off`, then `judgekit calibrate LABELS "
        f"--judge JUDGE --fingerprint {check.fingerprint} --records {records_dir}`)"
    )


def _read_folder(
    folder: Path, parse: Callable[[bytes, Path], _T], problems: list[Problem]
) -> list[_Filed[_T]]:
    if not folder.is_dir():
        return []
    out: list[_Filed[_T]] = []
    for path in sorted(folder.glob("*.json")):
        try:
            from judgekit.io.documents import read_regular

            out.append(_Filed(parse(read_regular(path, "trust record"), path), path.name))
        except ProblemsError as exc:
            problems.extend(exc.problems)
        except OSError as exc:
            problems.append(Problem(path, None, "", f"cannot read: {exc.strerror or exc}"))
    return out


def _prefix_keyed(
    what: str, filed: _Filed[CalibrationRecord] | _Filed[BiasReport] | _Filed[FailureModeRecord], full: str
) -> str:
    """Why a record keyed by a prefix trusts nothing, and how to replace it.

    Args:
        what: ``calibration record``, ``bias report`` or ``failure-mode record``.
        filed: The record and its file name.
        full: The full fingerprint it was meant for, or ``FULL`` when not known.
    """
    value = filed.value
    if isinstance(value, CalibrationRecord):
        again = f"judgekit calibrate {value.label_table.name} --judge {value.judge} --fingerprint {full}"
    elif isinstance(value, FailureModeRecord):
        again = f"judgekit judge failure-modes LABELS --judge RATER --fingerprint {full}"
    else:
        again = f"judgekit judge probe-bias ... --fingerprint {full}"
    return (
        f"the {what} {filed.name} is keyed by {value.fingerprint!r}, not by a full fingerprint (an older "
        f"judgekit wrote --fingerprint as typed), so it trusts no judge: write it again for the full "
        f"fingerprint (`{again}`) and delete {filed.name}"
    )


def _bounds(d: FailureModeDecision) -> str:
    parts = []
    for rate, low, bound in (("TPR", d.tpr_low, d.tpr_bound), ("TNR", d.tnr_low, d.tnr_bound)):
        if bound is None:
            continue
        shown = "undefined" if low is None else f"{low:.3f}"
        parts.append(f"{rate} lower bound {shown} (required {bound:g})")
    where = f" at Holm-adjusted confidence {d.confidence:.4f}"
    return (", ".join(parts) + where) if parts else f"no TPR/TNR bound in the policy{where}"


def _rejection(d: FailureModeDecision, filed: _Filed[FailureModeRecord]) -> str:
    label = repr(d.criterion) if d.criterion else "(all criteria)"
    alpha = filed.value.alpha
    if not d.holm_passed:
        holm = (
            f"Holm-adjusted p={d.holm_adjusted_p:.4g} (rank {d.holm_rank}) does not clear the family-wise "
            f"level {alpha:.4g}"
        )
    else:
        holm = f"Holm-adjusted p={d.holm_adjusted_p:.4g} clears {alpha:.4g} but the gate failed: " + (
            "; ".join(d.failed) or "no condition named"
        )
    return (
        f"failure mode {label} was rejected by the failure-mode record ({filed.cite}): {holm}; {_bounds(d)}"
    )


WithheldBy = Literal[
    "no_fingerprint",
    "uncalibrated",
    "failed_gate",
    "bias",
    "failure_mode",
    "prefix_keyed",
    "unlabelled_criterion",
    "canary_drift",
]
"""A source that withholds trust: ``no_fingerprint`` (the grader has none), ``uncalibrated`` (no calibration
record for this exact fingerprint: never calibrated, or the grader changed since), ``failed_gate`` (the latest
record failed its policy), ``bias`` (the latest bias report blocks trust), ``failure_mode`` (the latest
failure-mode record rejects the criterion), ``prefix_keyed`` (a record is keyed by a prefix of the
fingerprint, not the fingerprint: it must be written again for the full one), ``unlabelled_criterion`` (the
verdict's criterion text was never labelled in the calibration and ``unlabelled_criteria`` is
``withhold``), ``canary_drift`` (the latest canary check, made against the latest calibration record,
declares that the judge's replies moved)."""


@dataclass(frozen=True)
class TrustStatus:
    """Whether one grader fingerprint is trusted for one criterion, why, and the records read.

    Made by :meth:`TrustBook.status` (the trust rule); :meth:`TrustBook.decide` is its :attr:`decision`.

    Attributes:
        fingerprint: The fingerprint asked about, exactly as given.
        criterion: The criterion compared (after :func:`criterion_key`); ``""`` asks about the judge as a
            whole.
        records_dir: The records folder the book read (or names, for a book made in memory).
        trust: ``TRUSTED`` or ``UNTRUSTED`` (never ``NOT_REQUIRED``).
        reason: One line: every source that withholds trust, joined by ``"; "``, or the evidence for it.
        withheld_by: The sources that withhold trust, in the order the reason names them; empty exactly
            when trusted.
        record: The latest calibration record for the fingerprint, or ``None`` (uncalibrated).
        record_file: That record's file name, or ``None``.
        bias_report: The latest bias report for the fingerprint, or ``None`` (no probes recorded).
        bias_report_file: That report's file name, or ``None``.
        failure_modes: The latest failure-mode record for the fingerprint, or ``None``.
        failure_modes_file: That record's file name, or ``None``.
        canary_check: The latest canary check for the fingerprint, or ``None`` (never checked).
        canary_check_file: That check's file name, or ``None``.
        other_fingerprints: Calibration records in the folder for other fingerprints (0 or more): with no
            record for this one, a sign that the grader changed (a changed model, template, rubric or
            parameter is a new fingerprint).
        criterion_labelled: Whether the criterion's text (or id, asked without a text) was labelled in the
            latest calibration record (:func:`criterion_labelled`); ``None`` when it cannot be told.
    """

    fingerprint: str
    criterion: str
    records_dir: Path
    trust: Trust
    reason: str
    withheld_by: tuple[WithheldBy, ...] = ()
    record: CalibrationRecord | None = None
    record_file: str | None = None
    bias_report: BiasReport | None = None
    bias_report_file: str | None = None
    failure_modes: FailureModeRecord | None = None
    failure_modes_file: str | None = None
    canary_check: CanaryCheck | None = None
    canary_check_file: str | None = None
    other_fingerprints: int = 0
    criterion_labelled: bool | None = None

    @property
    def trusted(self) -> bool:
        """Whether the fingerprint is trusted for the criterion."""
        return self.trust is Trust.TRUSTED

    @property
    def decision(self) -> TrustDecision:
        """The decision a judge-backed check carries: :attr:`trust`, :attr:`reason` and whether labelled."""
        return TrustDecision(trust=self.trust, reason=self.reason, criterion_labelled=self.criterion_labelled)

    @property
    def gate(self) -> GateResult | None:
        """The gate of the latest calibration record (every condition and whether it passed), or ``None``."""
        return self.record.gate if self.record is not None else None

    @property
    def failed_conditions(self) -> tuple[Condition, ...]:
        """The conditions the latest calibration record failed (empty when it passed or there is none)."""
        return self.record.gate.failed if self.record is not None else ()


class TrustBook:
    """The trust sources of one records folder, read once, and the one trust function over them.

    Args:
        records_dir: The calibration records folder (the repository's ``calibration/records``), as text
            or a path object. A folder that does not exist holds nothing, so every fingerprint is
            untrusted (the reason says so).
        unlabelled_criteria: What a verdict on a criterion text the calibration never labelled may do
            (:data:`UnlabelledPolicy`): ``count`` (the default) or ``withhold``.

    Raises:
        ProblemsError: When ``records_dir`` is not a folder, or a calibration record, bias report or
            failure-mode record in it is broken (every broken file named, with what is wrong).

    Attributes:
        records_dir: The folder read.
        unlabelled_criteria: The policy for verdicts on never-labelled criterion texts.
    """

    def __init__(
        self, records_dir: str | PathLike[str], *, unlabelled_criteria: UnlabelledPolicy = "count"
    ) -> None:
        records_dir = Path(records_dir)
        self.records_dir = records_dir
        self.unlabelled_criteria = unlabelled_policy(unlabelled_criteria)
        self._exists = records_dir.is_dir()
        if records_dir.exists() and not self._exists:
            raise ProblemsError(
                [
                    Problem(
                        records_dir,
                        None,
                        "",
                        "is not a folder; --records names the folder of calibration records "
                        "(default calibration/records)",
                    )
                ]
            )
        problems: list[Problem] = []
        calibrations = _read_folder(records_dir, lambda b, p: load_record(b, source=p), problems)
        bias = _read_folder(records_dir / BIAS_DIR, lambda b, p: load_bias_report(b, source=p), problems)
        modes = _read_folder(
            records_dir / FAILURE_MODES_DIR, lambda b, p: load_failure_mode_record(b, source=p), problems
        )
        canaries = _read_folder(
            records_dir / CANARY_HISTORY_DIR, lambda b, p: load_canary_check(b, source=p), problems
        )
        if problems:
            raise ProblemsError(problems)
        self._calibrations = _latest(calibrations)
        self._bias = _latest(bias)
        self._modes = _latest(modes)
        self._canaries = _latest(canaries)

    @classmethod
    def from_records(
        cls,
        records_dir: str | os.PathLike[str],
        *,
        calibrations: Iterable[CalibrationRecord] = (),
        bias_reports: Iterable[BiasReport] = (),
        failure_modes: Iterable[FailureModeRecord] = (),
        canary_checks: Iterable[CanaryCheck] = (),
        unlabelled_criteria: UnlabelledPolicy = "count",
    ) -> TrustBook:
        """A book over records already in memory (no file is read).

        Args:
            records_dir: The folder the records are said to come from (named in reasons only), as text or a
                path object.
            calibrations: Calibration records.
            bias_reports: Bias reports.
            failure_modes: Failure-mode records.
            canary_checks: Canary checks (files of the canary history).
            unlabelled_criteria: As for the constructor.

        Returns:
            A book that decides exactly as one made from a folder holding these records under their
            standard file names.
        """
        records_dir = Path(records_dir)
        book = cls.__new__(cls)
        book.records_dir = records_dir
        book.unlabelled_criteria = unlabelled_policy(unlabelled_criteria)
        book._exists = True
        book._calibrations = _latest(_Filed(r, record_filename(r)) for r in calibrations)
        book._bias = _latest(_Filed(r, bias_report_filename(r)) for r in bias_reports)
        book._modes = _latest(_Filed(r, failure_mode_record_filename(r)) for r in failure_modes)
        book._canaries = _latest(
            _Filed(c, canary_check_filename(c.fingerprint, c.created_at, c.check)) for c in canary_checks
        )
        return book

    def __repr__(self) -> str:
        return (
            f"TrustBook({str(self.records_dir)!r}: {len(self._calibrations)} calibrated, "
            f"{len(self._bias)} probed, {len(self._modes)} with failure modes)"
        )

    def _filed(
        self,
    ) -> list[tuple[str, _Filed[CalibrationRecord] | _Filed[BiasReport] | _Filed[FailureModeRecord]]]:
        """Every latest file of the three sources, with what it is, in the order of the module docs."""
        return [
            *(("calibration record", f) for f in self._calibrations.values()),
            *(("bias report", f) for f in self._bias.values()),
            *(("failure-mode record", f) for f in self._modes.values()),
        ]

    def add_fingerprints(self, known: KnownFingerprints) -> None:
        """Add the fingerprints this book holds records for to ``known`` (for resolving a typed prefix).

        Every full fingerprint keyed by a calibration record, bias report or failure-mode record is added
        with the file that names it; a record keyed by anything shorter (written by judgekit before a
        prefix was resolved to its full fingerprint) is listed in ``known.prefix_keyed`` with what to do.

        Args:
            known: The fingerprints known so far; this book's are added to it.
        """
        count = len({f.value.fingerprint for _, f in self._filed()})
        held = f"{count} fingerprint(s)" if self._exists else "the folder does not exist"
        known.searched.append(f"the records in {self.records_dir} ({held})")
        for what, filed in self._filed():
            key = filed.value.fingerprint
            known.add(key, f"{what} {filed.name}")
            known.file_names.append((filed.name, key))
            if len(key) != FULL_LENGTH:
                known.prefix_keyed.append((key, _prefix_keyed(what, filed, "FULL")))

    def _prefix_keyed(self, fingerprint: str) -> list[str]:
        """What to say of each record keyed by a proper prefix of ``fingerprint`` (it trusts nothing)."""
        return [
            _prefix_keyed(what, filed, fingerprint)
            for what, filed in self._filed()
            if filed.value.fingerprint != fingerprint and fingerprint.startswith(filed.value.fingerprint)
        ]

    # ------------------------------------------------------------------------------------ the sources

    def _calibration(self, fingerprint: str) -> tuple[bool, str]:
        filed = self._calibrations.get(fingerprint)
        if filed is None:
            where = str(self.records_dir) + ("" if self._exists else " (the folder does not exist)")
            others = len(self._calibrations)
            hint = (
                f" ({others} record(s) there are for other fingerprints: a changed model, template, rubric "
                "or parameter is a new fingerprint)"
                if others
                else ""
            )
            return False, (
                f"no calibration record for fingerprint {_short(fingerprint)} in {where}: run "
                f"`{current_advice().calibrate_named(fingerprint)}` with expert labels first{hint}"
            )
        record = filed.value
        if record.trusted and record.gate.trusted:
            return True, f"calibration record {filed.name} ({_date(record.created_at)}) passed its policy"
        failed = "; ".join(f"{c.name}: {c.message}" for c in record.gate.failed)
        return False, (
            f"the latest calibration record ({filed.cite}) failed: "
            f"{failed or 'the record is marked not trusted'}"
        )

    def _probes(self, fingerprint: str) -> tuple[bool, str]:
        filed = self._bias.get(fingerprint)
        if filed is None:
            return True, "no bias probes recorded"
        report = filed.value
        if report.blocks_trust:
            names = ", ".join(f"{r.probe} ({r.verdict})" for r in report.blocking)
            return False, f"the latest bias report ({filed.cite}) has must-pass probe(s) not clear: {names}"
        return True, f"bias probes clear ({filed.cite})"

    def _canary(self, fingerprint: str) -> tuple[bool, str | None]:
        """``(clear, said)`` from the latest canary check: ``said`` is its withdrawal or a note (``None``)."""
        filed = self._canaries.get(fingerprint)
        if filed is None:
            return True, None
        check = filed.value
        record = self._calibrations.get(fingerprint)
        if record is not None and record.name != check.record_file:
            return True, (
                f"the latest canary check ({filed.cite}) re-asked the canary set of calibration record "
                f"{check.record_file}, not of the latest record {record.name}: a new series starts there"
            )
        if check.detected:
            return False, _canary_withdrawal(filed, self.records_dir)
        return True, f"canary check {check.check} clear ({filed.cite}; {check.test.summary})"

    def _failure_modes(self, fingerprint: str, key: str) -> tuple[list[str], list[str]]:
        """``(withdrawals, notes)`` from the latest failure-mode record for ``key`` (``""``: no criterion)."""
        filed = self._modes.get(fingerprint)
        if filed is None:
            return [], ["no failure-mode record"]
        decisions = {criterion_key(d.criterion): d for d in filed.value.decisions}
        applicable = [decisions[k] for k in dict.fromkeys(("", key)) if k in decisions]
        withdrawals = [_rejection(d, filed) for d in applicable if not d.trusted]
        notes = [
            f"failure mode {d.criterion!r} trusted by {filed.name}"
            if d.criterion
            else f"failure modes gated as one (no criterion column) trusted by {filed.name}"
            for d in applicable
            if d.trusted
        ]
        if key and not applicable:
            notes.append(
                f"the failure-mode record {filed.name} does not cover criterion {key!r} (it covers "
                f"{', '.join(sorted(decisions))})"
            )
        if not key:
            rejected = sorted(k for k, d in decisions.items() if k and not d.trusted)
            if rejected:
                notes.append(
                    f"failure mode(s) not trusted by {filed.name}: {', '.join(rejected)} (ask with the "
                    "criterion for their decisions)"
                )
        return withdrawals, notes

    # ------------------------------------------------------------------------------------ the answer

    def status(
        self, fingerprint: str, criterion: str | None = None, *, text: str | None = None
    ) -> TrustStatus:
        """Whether a grader fingerprint is trusted for a criterion, why, and the records that say so.

        This is where the trust rule lives; :meth:`decide` is its :class:`~judgekit.verdict.TrustDecision`.

        Args:
            fingerprint: The grader's exact fingerprint (as produced by the judge layer); compared as is,
                so any change (even white space) is another grader.
            criterion: The bare criterion id (``honest_reporting``, ``case.acceptance``; a
                ``criterion:`` prefix is removed, see :func:`criterion_key`); ``None`` or ``""`` asks
                about the judge as a whole.
            text: The criterion's text as the judge read it (``None``: asked by id only); the reason says
                whether it was among the labelled texts of the latest calibration record.

        Returns:
            The status: ``TRUSTED`` when the latest calibration record for the fingerprint passed, the
            latest bias report (if any) does not block trust, the latest failure-mode record (if any)
            does not reject the criterion, and, under ``unlabelled_criteria="withhold"``, the criterion
            was labelled (or cannot be told); ``UNTRUSTED`` otherwise, never ``NOT_REQUIRED``. Its reason
            lists every source that withholds trust, or the evidence for it (see the module docs), then
            whether the criterion was labelled; ``withheld_by`` names those sources.
        """
        key = criterion_key(criterion or "")
        if not fingerprint.strip():
            return TrustStatus(
                fingerprint=fingerprint,
                criterion=key,
                records_dir=self.records_dir,
                trust=Trust.UNTRUSTED,
                reason="the grader has no fingerprint: trust is recorded for an exact fingerprint, so an "
                "unnamed grader is never trusted",
                withheld_by=("no_fingerprint",),
            )
        calibrated, calibration_reason = self._calibration(fingerprint)
        clear, probes_reason = self._probes(fingerprint)
        withdrawals, notes = self._failure_modes(fingerprint, key)
        canary_clear, canary_said = self._canary(fingerprint)
        filed = self._calibrations.get(fingerprint)
        withheld: list[WithheldBy] = []
        if not calibrated:
            withheld.append("uncalibrated" if filed is None else "failed_gate")
        if not clear:
            withheld.append("bias")
        if withdrawals:
            withheld.append("failure_mode")
        if not canary_clear:
            withheld.append("canary_drift")
        legacy = self._prefix_keyed(fingerprint)
        if legacy:
            withheld.append("prefix_keyed")
        labelled, clause = (None, "") if filed is None else criterion_labelled(filed.value, key, text)
        unlabelled = labelled is False and self.unlabelled_criteria == "withhold"
        if unlabelled:
            withheld.append("unlabelled_criterion")
            clause += " (withheld: unlabelled_criteria is withhold)"
        blockers = [
            *([] if calibrated else [calibration_reason]),
            *([] if clear else [probes_reason]),
            *withdrawals,
            *([] if canary_clear or canary_said is None else [canary_said]),
            *legacy,
            *([clause] if unlabelled else []),
        ]
        canary_note = [canary_said] if canary_clear and canary_said is not None else []
        said = blockers or [
            calibration_reason,
            probes_reason,
            *notes,
            *canary_note,
            *([clause] if clause else []),
        ]
        bias = self._bias.get(fingerprint)
        canary = self._canaries.get(fingerprint)
        modes = self._modes.get(fingerprint)
        return TrustStatus(
            fingerprint=fingerprint,
            criterion=key,
            records_dir=self.records_dir,
            trust=Trust.UNTRUSTED if blockers else Trust.TRUSTED,
            reason="; ".join(said),
            withheld_by=tuple(withheld),
            record=filed.value if filed is not None else None,
            record_file=filed.name if filed is not None else None,
            bias_report=bias.value if bias is not None else None,
            bias_report_file=bias.name if bias is not None else None,
            failure_modes=modes.value if modes is not None else None,
            failure_modes_file=modes.name if modes is not None else None,
            canary_check=canary.value if canary is not None else None,
            canary_check_file=canary.name if canary is not None else None,
            other_fingerprints=len(self._calibrations) - (filed is not None),
            criterion_labelled=labelled,
        )

    def decide(
        self, fingerprint: str, criterion: str | None = None, *, text: str | None = None
    ) -> TrustDecision:
        """Whether a grader fingerprint is trusted for a criterion, and why (the one trust function).

        Args:
            fingerprint: As for :meth:`status`: the grader's exact fingerprint.
            criterion: As for :meth:`status`: a bare criterion id, or ``None`` for the judge as a whole.
            text: As for :meth:`status`: the criterion's text as the judge read it, or ``None``.

        Returns:
            :meth:`status`'s decision (``TRUSTED`` or ``UNTRUSTED``, the reason, whether labelled).
        """
        return self.status(fingerprint, criterion, text=text).decision

    def decide_text(self, fingerprint: str, criterion: str, text: str) -> TrustDecision:
        """:meth:`decide` for one criterion and the text the judge read: what a judge-backed grader asks.

        It fits :class:`judgekit.graders.rubric.TextTrustLookup`, so a rubric grader given a book as its
        ``trust=`` says in each check's trust reason whether the criterion's text was labelled.
        """
        return self.decide(fingerprint, criterion, text=text)

    def lookup(self, fingerprint: str, criterion: str) -> TrustDecision:
        """:meth:`decide` for one criterion: the callable a judge-backed grader takes as ``trust=``."""
        return self.decide(fingerprint, criterion)

    def __call__(self, fingerprint: str, criterion: str) -> TrustDecision:
        """Same as :meth:`lookup`: a book is itself the ``trust=`` callable of a judge-backed grader.

        It fits :data:`judgekit.graders.rubric.TrustLookup`: ``RubricGrader(rubric, client,
        trust=TrustBook(Path("calibration/records")))``.
        """
        return self.decide(fingerprint, criterion)

    def require(self, fingerprint: str, criterion: str | None = None) -> TrustDecision:
        """Refuse to score with an untrusted judge ("no calibration, no score").

        Args:
            fingerprint: The grader's exact fingerprint.
            criterion: As for :meth:`decide`.

        Returns:
            The trusted decision.

        Raises:
            JudgekitError: When :meth:`decide` says untrusted; the message is its reason and the exit
                code 1 (the trust gate refused).
        """
        decision = self.decide(fingerprint, criterion)
        if decision.trust is not Trust.TRUSTED:
            key = criterion_key(criterion or "")
            scope = f" for criterion {key!r}" if key else ""
            raise JudgekitError(
                f"the judge with fingerprint {_short(fingerprint)} is not trusted{scope}: {decision.reason}",
                exit_code=1,  # the trust gate refused (grade --require-trust), not an input error
            )
        return decision


def trust_decision(
    fingerprint: str, criterion: str | None = None, *, records_dir: str | os.PathLike[str]
) -> TrustDecision:
    """Read ``records_dir`` and decide once: ``TrustBook(records_dir).decide(fingerprint, criterion)``.

    Use a :class:`TrustBook` instead when asking more than once (it reads the folder once).

    ``records_dir`` may be given as text or a path object.

    Raises:
        ProblemsError: When a record file there is broken.
    """
    records_dir = Path(records_dir)
    return TrustBook(records_dir).decide(fingerprint, criterion)
