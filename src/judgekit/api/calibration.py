"""Calibrate a judge against expert labels in one call, and ask whether a judge is trusted and why.

Two jobs, one function each:

- :func:`calibrate`: a long label table (a file, or a table already read) and a
  :class:`CalibrationOptions` in; one :class:`Calibration` out, carrying the agreement report (the judge
  against the experts' consensus and each expert, TPR/TNR with intervals, the experts' agreement with each
  other), the gate decision of the trust policy, and the calibration record ``judgekit calibrate`` writes.
  Its methods render the report (Markdown, JSON or HTML) and write the report and the record, so the
  command only renders.
- :func:`trust_status`: whether a judge fingerprint is trusted for a criterion, and why: which calibration
  record, which gate conditions failed, or what is missing (no record for this exact fingerprint, a bias
  report or a failure-mode record that withdraws trust). It asks the one trust function
  (:meth:`judgekit.calibration.trust.TrustBook.status`); nothing here decides trust itself.

The steps are those ``judgekit calibrate`` has always taken, in the same order, with the same messages:
the records folder and the policy in force (the option, else ``JUDGEKIT_RECORDS`` / the project
configuration, else the defaults), the label table, the random-sample guard (hand-picked items stay out of
rates and gates), the selection-set guard (labels that chose a judge cannot certify it), the policy and
its alternative-annotator options, the baseline, the fingerprint, then the measurement
(:func:`judgekit.calibration.pipeline.run_calibration`) and the record
(:func:`judgekit.calibration.records.build_record`). Messages name the command line's options
(``--experts``, ``--annotator-kind``) because the command passes them through unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from judgekit.calibration.trust import TrustBook, TrustStatus, unlabelled_policy
from judgekit.errors import JudgekitError
from judgekit.io.atomic import write_atomic_making_folder

if TYPE_CHECKING:
    from judgekit.calibration.agreement import AgreementReport, GroupAgreement, PairAgreement
    from judgekit.calibration.compare import GraderComparison
    from judgekit.calibration.correlation import ScoredAgreement
    from judgekit.calibration.fingerprints import KnownFingerprints
    from judgekit.calibration.gate import Condition, GateResult, TrustPolicy
    from judgekit.calibration.guards import ProvenanceSummary
    from judgekit.calibration.labels import LabelTable, Scale
    from judgekit.calibration.pipeline import CalibrationResult, CriterionText
    from judgekit.calibration.records import CalibrationRecord
    from judgekit.caseset import CaseSet
    from judgekit.judges.jury import Jury
    from judgekit.judges.rubric import Rubric
    from judgekit.stats import Estimate

__all__ = [
    "REPORT_FORMATS",
    "Calibration",
    "CalibrationOptions",
    "TrustStatus",
    "calibrate",
    "fit_jury",
    "known_fingerprints",
    "resolve_judge_fingerprint",
    "trust_status",
]

REPORT_FORMATS: Final = ("json", "md", "html")
"""The formats a calibration report renders to: JSON, Markdown, HTML (the file suffix is the format)."""

_KINDS: Final = ("expert", "skilled", "crowd")
_IN_MEMORY: Final = "(in memory)"


@dataclass(frozen=True, kw_only=True)
class CalibrationOptions:
    """How to calibrate: the judge, the experts, the policy and the rest of ``judgekit calibrate``'s options.

    Attributes:
        judge: The rater whose labels are the judge's verdicts.
        experts: The expert raters (``--experts``), or ``None`` for the one rater besides the judge:
            refused when the table holds several or that one looks like a model
            (:func:`judgekit.calibration.labels.default_experts`); an empty list is refused.
        fingerprint: The judge's grader fingerprint: all 64 characters, or a prefix of at least 8 (the 12
            judgekit prints work) naming exactly one fingerprint known from the records folder, the
            table's ``fingerprint`` column or the configured judge (:func:`resolve_judge_fingerprint`); the
            record is keyed by the full fingerprint. ``None`` takes it from the table's ``fingerprint``
            column for the judge's rows; with neither there is no record, so nothing becomes trusted.
        policy: The trust policy: a :class:`~judgekit.calibration.gate.TrustPolicy`, a YAML or JSON file,
            or ``None`` for the project configuration's policy, else the defaults.
        baseline: The old grader's calibration record (a record or its file), to report the grader change;
            ``None`` for no comparison.
        scale: The label scale when the labels are read from a file (``None``: pass/fail verdicts). A
            table already read keeps its own scale; giving a different one is refused.
        records: The calibration records folder (``None``: ``JUDGEKIT_RECORDS``, the project
            configuration, else ``calibration/records``; a folder named must exist). Its label usage log
            is checked, and :meth:`Calibration.write_record` writes there.
        annotator_kind: The kind of every expert for the alternative-annotator test's epsilon: ``expert``
            (0.2), ``skilled`` (0.15) or ``crowd`` (0.1); ``None`` keeps the policy's.
        annotator_kinds: The kind of named experts, overriding ``annotator_kind`` for them
            (``{"alice": "expert", "bob": "crowd"}``); each must be an expert in the table.
        alt_test_epsilon: One epsilon for every expert (at least 0, below 1), overriding the kinds and
            the policy; ``None`` keeps them.
        rubric: The judge's rubric, whose criterion texts the table's rubric criterion ids
            (``honest_reporting``) name: a rubric, a rubric file or a built-in rubric id (``--rubric``;
            ``None``: the ``judge.rubric`` setting in force, by default ``honest-reporting``). The record
            lists the hash of each labelled text.
        cases: The golden set whose cases' own criteria the table's ``case.*`` criterion ids name, each
            found by its row's ``case_id`` (else its ``item_id``, with or without a ``#trial`` suffix): a
            case set or its folder (``--cases``; ``None``: the ``cases`` setting, else none, and those ids
            are recorded as unresolved).
        jury: When the judge rater is a jury (:mod:`judgekit.judges.jury`): the jury or its file. Its
            members' rows (rater = each member's name) are then measured too: the report's jury section
            shows each member's agreement, their error correlations, the effective number of independent
            votes and whether the jury pays. A weighted jury's development items (``fit``) are left out of
            the table first, so the labels that fitted the weights never certify the jury. ``None``: one
            judge. The experts default to the one rater besides the jury and its members.
        canary_results: A results file the judge graded (``judgekit grade --out``, the judge's replies):
            with it, :meth:`Calibration.write_canary_set` keeps the record's drift canary set, the labelled
            items it holds with their recorded verdicts (:func:`judgekit.api.canary.build_canary_set`;
            needs ``canary_transcripts`` and the golden set ``cases``). ``None``: no canary set.
        canary_transcripts: The transcript files ``canary_results`` was graded from.
    """

    judge: str
    experts: Sequence[str] | None = None
    fingerprint: str | None = None
    policy: TrustPolicy | str | os.PathLike[str] | None = None
    baseline: CalibrationRecord | str | os.PathLike[str] | None = None
    scale: Scale | None = None
    records: str | os.PathLike[str] | None = None
    annotator_kind: str | None = None
    annotator_kinds: Mapping[str, str] = field(default_factory=dict)
    alt_test_epsilon: float | None = None
    rubric: Rubric | str | os.PathLike[str] | None = None
    cases: CaseSet | str | os.PathLike[str] | None = None
    jury: Jury | str | os.PathLike[str] | None = None
    canary_results: str | os.PathLike[str] | None = None
    canary_transcripts: Sequence[str | os.PathLike[str]] = ()


def _checked_format(fmt: str) -> str:
    if fmt not in REPORT_FORMATS:
        raise JudgekitError(f"format must be json, md or html (got {fmt!r})")
    return fmt


@dataclass(frozen=True)
class Calibration:
    """One calibration of a judge against experts: the report, the gate decision and the record.

    Attributes:
        result: Everything measured (:class:`~judgekit.calibration.pipeline.CalibrationResult`): the
            agreement report, the policy, the gate, selective judging, the human ceiling, the
            alternative-annotator test and the grader change against the baseline.
        record: The calibration record (what ``judgekit calibrate`` writes), or ``None`` when the judge has
            no fingerprint (then nothing can become trusted). Built, not written: see :meth:`write_record`.
        provenance: How the table's items split by provenance; rates and gates used the random-sample
            items only, and ``provenance.note`` says so.
        records_dir: The records folder in force (checked for the label usage log; the record's default
            destination).
        canaries: Where the record's drift canary set comes from (the options' ``canary_results``), or
            ``None``.
    """

    result: CalibrationResult
    record: CalibrationRecord | None
    provenance: ProvenanceSummary
    records_dir: Path
    canaries: CanarySource | None = None

    @property
    def judge(self) -> str:
        """The judge rater's name in the label table."""
        return self.result.report.judge

    @property
    def fingerprint(self) -> str | None:
        """The judge's fingerprint, or ``None`` when none was given or found in the table."""
        return self.result.fingerprint

    @property
    def report(self) -> AgreementReport:
        """Every agreement metric: the judge against the consensus and each expert, the experts' own."""
        return self.result.report

    @property
    def gate(self) -> GateResult:
        """The trust policy's decision: every condition and whether it passed."""
        return self.result.gate

    @property
    def trusted(self) -> bool:
        """Whether the judge passed the policy (a record is still needed for it to become trusted)."""
        return self.result.gate.trusted

    @property
    def failed_conditions(self) -> tuple[Condition, ...]:
        """The policy's conditions the judge failed (empty when trusted)."""
        return self.result.gate.failed

    @property
    def tpr(self) -> Estimate | None:
        """The judge's true-positive rate (failures it catches), with its interval; ``None`` off pass/fail."""
        binary = self.result.report.judge_vs_consensus.binary
        return binary.tpr if binary is not None else None

    @property
    def tnr(self) -> Estimate | None:
        """The judge's true-negative rate (passes it passes), with its interval; ``None`` off pass/fail."""
        binary = self.result.report.judge_vs_consensus.binary
        return binary.tnr if binary is not None else None

    @property
    def judge_vs_consensus(self) -> PairAgreement:
        """The judge against the experts' consensus: percent agreement, kappa, alpha, confusion matrix."""
        return self.result.report.judge_vs_consensus

    @property
    def expert_agreement(self) -> GroupAgreement:
        """The experts' agreement with each other (alpha, Fleiss' kappa, mean pairwise), the human ceiling."""
        return self.result.report.expert_group

    @property
    def comparison(self) -> GraderComparison | None:
        """The grader change against the baseline record, or ``None`` without a baseline."""
        return self.result.comparison

    @property
    def correlations(self) -> ScoredAgreement | None:
        """Spearman, Kendall and Pearson of the judge's scores with the experts'; ``None`` if nominal."""
        return self.result.correlations

    @property
    def summary(self) -> str:
        """One line: ``judge 'NAME': TRUSTED``, or ``NOT TRUSTED:`` with every failed condition and why."""
        if self.trusted:
            return f"judge {self.judge!r}: TRUSTED"
        failed = "; ".join(f"{c.name}: {c.message}" for c in self.failed_conditions)
        return f"judge {self.judge!r}: NOT TRUSTED: {failed}"

    def render(self, fmt: str = "md") -> str:
        """The calibration report as ``json``, ``md`` (Markdown) or ``html``.

        Raises:
            JudgekitError: For any other format.
        """
        from judgekit.reports.calibration_report import render_calibration

        return render_calibration(self.result, _checked_format(fmt))

    def render_change(self, fmt: str = "md") -> str | None:
        """The grader-change report against the baseline (``json``, ``md`` or ``html``); ``None`` without one.

        Raises:
            JudgekitError: For any other format.
        """
        from judgekit.reports.calibration_report import render_comparison

        fmt = _checked_format(fmt)
        return None if self.result.comparison is None else render_comparison(self.result.comparison, fmt)

    def write_report(self, folder: str | os.PathLike[str], fmt: str = "md") -> Path:
        """Write the report to ``folder/calibration.<fmt>`` (the folder is created) and return the path.

        Raises:
            JudgekitError: For an unknown format, or a file that cannot be written (exit code 2).
        """
        path = Path(folder) / f"calibration.{_checked_format(fmt)}"
        write_atomic_making_folder(path, self.render(fmt), what="report")
        return path

    def write_change(self, folder: str | os.PathLike[str], fmt: str = "md") -> Path | None:
        """Write the grader-change report to ``folder/grader-change.<fmt>``; ``None`` without a baseline.

        Raises:
            JudgekitError: For an unknown format, or a file that cannot be written (exit code 2).
        """
        text = self.render_change(fmt)
        if text is None:
            return None
        path = Path(folder) / f"grader-change.{fmt}"
        write_atomic_making_folder(path, text, what="grader-change report")
        return path

    def write_record(self, folder: str | os.PathLike[str] | None = None) -> Path:
        """Write the calibration record into ``folder`` (default :attr:`records_dir`) and return its path.

        The file name is a short hash of the fingerprint and the record's UTC time
        (:func:`~judgekit.calibration.records.record_filename`); the folder is created.

        Raises:
            JudgekitError: When there is no record (the judge has no fingerprint), or it cannot be written.
        """
        from judgekit.calibration.records import dump_record, record_filename

        if self.record is None:
            raise JudgekitError(
                "no calibration record to write: the judge has no fingerprint; give "
                "CalibrationOptions(fingerprint=...) or a fingerprint column in the label table"
            )
        path = Path(folder if folder is not None else self.records_dir) / record_filename(self.record)
        write_atomic_making_folder(path, dump_record(self.record), what="calibration record")
        return path

    def write_canary_set(self, record_file: str | os.PathLike[str]) -> Path | None:
        """Build the drift canary set of the record just written and write it next to it.

        Args:
            record_file: The record's file (:meth:`write_record`'s path): the set is bound to its bytes.

        Returns:
            The canary set's file (``<records>/canaries/<record file name>``), or ``None`` without
            ``canary_results``.

        Raises:
            JudgekitError: (exit code 2) When no labelled item has a judge verdict in the results and a
                transcript, or the set cannot be written.
        """
        if self.canaries is None:
            return None
        from judgekit.api.canary import build_canary_set, write_canary_set

        source = self.canaries
        built = build_canary_set(
            source.results,
            rubric=source.rubric,
            cases=source.cases,
            transcripts=source.transcripts,
            record=record_file,
        )
        return write_canary_set(built, Path(record_file).parent)


@dataclass(frozen=True)
class CanarySource:
    """What a calibration's drift canary set is built from (:attr:`CalibrationOptions.canary_results`).

    Attributes:
        results: The results file the judge graded.
        transcripts: The transcript files it was graded from.
        cases: The golden set it was graded against.
        rubric: The judge's rubric (with the cases' own criteria, what each canary's criterion is).
    """

    results: str | os.PathLike[str]
    transcripts: tuple[str | os.PathLike[str], ...]
    cases: CaseSet
    rubric: Rubric


def _label_table(labels: LabelTable | str | os.PathLike[str], scale: Scale | None) -> tuple[LabelTable, str]:
    """The validated table and the name its record gives it (the file's name, not its full path)."""
    from judgekit.calibration.labels import VERDICT_SCALE, LabelTable, parse_labels

    if isinstance(labels, LabelTable):
        if scale is not None and scale != labels.scale:
            raise JudgekitError(
                "scale: the label table was already read with another scale; pass the scale to "
                "parse_labels, or pass the table's file to calibrate"
            )
        return labels, labels.source.name if labels.source is not None else _IN_MEMORY
    from judgekit.io.documents import read_input

    path = Path(labels)
    table = parse_labels(read_input(path, "label table"), source=path, scale=scale or VERDICT_SCALE)
    return table, path.name


def _jury(jury: Jury | str | os.PathLike[str] | None) -> Jury | None:
    """The jury given as a jury or its file (``None``: one judge)."""
    from judgekit.judges.jury import Jury, load_jury

    return jury if isinstance(jury, Jury) or jury is None else load_jury(jury)


def _without_development(
    table: LabelTable, development: Sequence[str], on_note: Callable[[str], None] | None
) -> LabelTable:
    """The table without a weighted jury's development items (their rows fitted its weights)."""
    from judgekit.calibration.labels import LabelTable

    left_out = set(development)
    rows = tuple(r for r in table.rows if str(r.item) not in left_out)
    dropped = len({r.item for r in table.rows}) - len({r.item for r in rows})
    note = (
        f"{dropped} development item(s) that fitted the jury's weights were left out of this calibration "
        f"({len({r.item for r in rows})} items remain)"
    )
    if on_note is not None:
        on_note(note)
    return LabelTable(
        scale=table.scale, rows=rows, source=table.source, sha256=table.sha256, notes=(*table.notes, note)
    )


def _policy(policy: TrustPolicy | str | os.PathLike[str] | None) -> TrustPolicy:
    """The policy given, read from its file, or the defaults."""
    from judgekit.calibration.gate import TrustPolicy, parse_policy

    if isinstance(policy, TrustPolicy):
        return policy
    if policy is None:
        return TrustPolicy()
    from judgekit.io.documents import read_document

    doc = read_document(policy)
    return parse_policy(doc.data, source=policy, line_of=doc.line_of)


def _kind(text: str) -> str:
    if text not in _KINDS:
        raise JudgekitError(
            f"--annotator-kind: {text!r} is not a kind of annotator; use expert, skilled or crowd"
        )
    return text


def _alt_test_options(policy: TrustPolicy, options: CalibrationOptions, raters: Sequence[str]) -> TrustPolicy:
    """The policy with the options' annotator kinds and epsilon applied to its ``alt_test``.

    Raises:
        JudgekitError: For an unknown kind, a named annotator who is not an expert in the table, or an
            epsilon outside [0, 1).
    """
    settings = policy.alt_test
    update: dict[str, object] = {}
    epsilon = options.alt_test_epsilon
    if epsilon is not None:
        if not 0.0 <= epsilon < 1.0:
            raise JudgekitError(f"--alt-test-epsilon must be at least 0 and below 1 (got {epsilon:g})")
        update["epsilon"] = epsilon
    if options.annotator_kind is not None or options.annotator_kinds:
        default = settings.annotator_kind if options.annotator_kind is None else _kind(options.annotator_kind)
        named: dict[str, str] = dict(settings.annotator_kinds)
        for name, text in options.annotator_kinds.items():
            kind = _kind(text)
            if name not in raters or name == options.judge:
                raise JudgekitError(
                    f"--annotator-kind: {name!r} is not an expert in the label table "
                    f"(raters: {', '.join(r for r in raters if r != options.judge)})"
                )
            named[name] = kind
        update["annotator_kind"] = default
        update["annotator_kinds"] = named
    if not update:
        return policy
    return policy.model_copy(update={"alt_test": settings.model_copy(update=update)})


def _baseline(baseline: CalibrationRecord | str | os.PathLike[str] | None) -> CalibrationRecord | None:
    from judgekit.calibration.records import CalibrationRecord, load_record

    if baseline is None or isinstance(baseline, CalibrationRecord):
        return baseline
    from judgekit.io.documents import read_input

    return load_record(read_input(baseline, "baseline record"), source=baseline)


def _rubric_and_cases(options: CalibrationOptions) -> tuple[Rubric, CaseSet | None]:
    """The judge's rubric and the golden set in force (``None``: none given or configured).

    Raises:
        JudgekitError: When the rubric cannot be loaded, or a golden-set folder named does not exist.
    """
    from judgekit.caseset import CaseSet, load_case_set
    from judgekit.judge_setup import load_rubric_setting
    from judgekit.judges.rubric import Rubric
    from judgekit.settings import setting

    given = options.rubric
    if isinstance(given, Rubric):
        rubric = given
    else:
        rubric = load_rubric_setting(setting("judge.rubric", None if given is None else os.fspath(given)))
    cases = options.cases if isinstance(options.cases, CaseSet) else setting("cases", options.cases)
    if cases is not None and not isinstance(cases, CaseSet):
        cases = load_case_set([Path(cases)], check_files=False, compile_rules=False)
    return rubric, cases


def _canary_source(options: CalibrationOptions, rubric: Rubric, cases: CaseSet | None) -> CanarySource | None:
    """Where the record's canary set comes from, checked before anything is measured.

    Raises:
        JudgekitError: (exit code 2) When ``canary_results`` is given without its transcripts or golden set.
    """
    if options.canary_results is None:
        if options.canary_transcripts:
            raise JudgekitError("--canary-transcripts goes with --canary-results RESULTS", exit_code=2)
        return None
    if not options.canary_transcripts or cases is None:
        raise JudgekitError(
            "--canary-results needs the transcripts it was graded from (--canary-transcripts FILE) and the "
            "golden set (--cases FOLDER)",
            exit_code=2,
        )
    return CanarySource(options.canary_results, tuple(options.canary_transcripts), cases, rubric)


def _criterion_texts(rubric: Rubric, cases: CaseSet | None) -> CriterionText:
    """What text the judge read for a labelled (case, criterion): the rubric's, else the case's own."""
    from judgekit.graders.rubric import case_criteria

    texts = {c.id: c.text for c in rubric.criteria}
    by_id = {} if cases is None else {loaded.id: loaded.case for loaded in cases}

    def text_of(case_id: str, criterion: str) -> str | None:
        if not criterion.startswith("case."):
            return texts.get(criterion)
        case = by_id.get(case_id) or by_id.get(case_id.rpartition("#")[0])
        if case is None:
            return None
        return next((c.text for c in case_criteria(case)[0] if c.id == criterion), None)

    return text_of


def calibrate(
    labels: LabelTable | str | os.PathLike[str],
    *,
    options: CalibrationOptions,
    on_note: Callable[[str], None] | None = None,
) -> Calibration:
    r"""Measure a judge against experts on a label table, apply the trust policy, and build the record.

    The same steps, in the same order and with the same messages, as ``judgekit calibrate`` (which calls
    this function): see the module documentation. Nothing is written: render and write with the result's
    methods.

    Args:
        labels: A long label table (``item_id, rater, label [, criterion, case_id, confidence,
            fingerprint, provenance]``): its ``.csv``, ``.tsv`` or ``.jsonl`` file, or a
            :class:`~judgekit.calibration.labels.LabelTable` already read.
        options: The judge, the experts, the policy and the rest (:class:`CalibrationOptions`).
        on_note: Called with each note for the person calibrating as soon as it is known, before a later
            step can stop with an error: the provenance note when the table records provenance (how many
            hand-picked items were left out). ``None`` drops them (they stay on the result).

    Returns:
        The calibration: report, gate decision and record (``None`` without a fingerprint).

    Raises:
        JudgekitError: An input mistake (exit code 2): a records folder named that does not exist, an
            unreadable or malformed label table or baseline, an unknown judge or expert, no expert named,
            an item only one rater labelled, a fingerprint that contradicts the table, a bad annotator
            kind or epsilon, a scale given with a table read with another. A guard's refusal (exit code
            1): every item hand-picked, or labels already used to choose a judge.
        ProblemsError: Located problems in the label table, the policy or the baseline (exit code 2).

    Example, on a tiny table (too few items for the default policy, so the judge is not trusted):

    >>> import tempfile
    >>> from judgekit.calibration.labels import parse_labels
    >>> rows = ["item_id,rater,label"] + [
    ...     f"i{n},{rater},{label}"
    ...     for n, (expert, judge) in enumerate([("pass", "pass"), ("fail", "fail"), ("pass", "fail")] * 4)
    ...     for rater, label in (("alice", expert), ("judge", judge))
    ... ]
    >>> table = parse_labels("\n".join(rows), source="labels.csv")
    >>> folder = tempfile.TemporaryDirectory()
    >>> options = CalibrationOptions(judge="judge", fingerprint="3f2a9c1d" * 8, records=folder.name)
    >>> result = calibrate(table, options=options)
    >>> round(result.judge_vs_consensus.kappa["none"].value, 3)
    0.4
    >>> result.tpr.value, round(result.tnr.value, 3)
    (1.0, 0.5)
    >>> result.summary.split(": ")[:3]
    ["judge 'judge'", 'NOT TRUSTED', 'min_items']
    >>> result.record.fingerprint[:12], result.record.trusted
    ('3f2a9c1d3f2a', False)
    >>> folder.cleanup()
    """
    from judgekit.calibration.gate import TrustPolicy
    from judgekit.calibration.guards import check_not_selection_set, load_usage, random_sample_only
    from judgekit.calibration.pipeline import resolve_fingerprint, run_calibration
    from judgekit.settings import records_folder, setting

    records = records_folder(options.records)  # option > JUDGEKIT_RECORDS > project configuration > default
    policy = options.policy if isinstance(options.policy, TrustPolicy) else setting("policy", options.policy)
    table, name = _label_table(labels, options.scale)
    jury = _jury(options.jury)
    if jury is not None and jury.fit is not None:  # the labels that fitted the weights cannot certify them
        table = _without_development(table, jury.fit.development_items, on_note)
    table, provenance = random_sample_only(table)  # rates and gates use the random-sample items only
    if provenance.random and on_note is not None:
        on_note(provenance.note)
    check_not_selection_set(table, load_usage(records))  # labels that chose a judge cannot certify it
    trust_policy = _alt_test_options(_policy(policy), options, table.raters)
    experts = None
    if options.experts is not None:
        experts = [e.strip() for e in options.experts if e.strip()]
        if not experts:
            raise JudgekitError("--experts: no expert named", exit_code=2)
    elif jury is not None:
        from judgekit.calibration.labels import default_experts

        experts = list(default_experts(table, (options.judge, *jury.names)))
    baseline = _baseline(options.baseline)
    known = known_fingerprints(records)  # a prefix names one of these (read only when one is given)
    fingerprint = resolve_fingerprint(table, options.judge, options.fingerprint, known)
    rubric, cases = _rubric_and_cases(options)  # where the criterion texts were always read
    canaries = _canary_source(options, rubric, cases)  # checked before anything is measured
    result = run_calibration(
        table,
        judge=options.judge,
        experts=experts,
        policy=trust_policy,
        fingerprint=fingerprint,
        label_name=name,
        baseline=baseline,
        criterion_text=_criterion_texts(rubric, cases),
        jury_members=jury.names if jury is not None else None,
    )
    record = result.to_record() if fingerprint is not None else None
    return Calibration(
        result=result, record=record, provenance=provenance, records_dir=records, canaries=canaries
    )


def trust_status(
    fingerprint: str,
    records: TrustBook | str | os.PathLike[str] | None = None,
    *,
    criterion: str | None = None,
    text: str | None = None,
    unlabelled_criteria: str | None = None,
) -> TrustStatus:
    """Whether the judge with this fingerprint is trusted (for a criterion), and why.

    Trusted needs a passing latest calibration record for the *exact* fingerprint; the latest bias report
    and the latest failure-mode record can withdraw it (the rule:
    :meth:`judgekit.calibration.trust.TrustBook.status`). A changed model, template, rubric or parameter
    is a new fingerprint, so a new, uncalibrated grader.

    Args:
        fingerprint: The grader's fingerprint: all 64 characters, or a prefix of at least 8 (the 12
            judgekit prints work) naming exactly one fingerprint of the records or of the configured judge
            (:func:`resolve_judge_fingerprint`); the status is for that full fingerprint.
        records: The calibration records folder (with its ``bias/`` and ``failure-modes/`` sub-folders),
            a :class:`~judgekit.calibration.trust.TrustBook` already read, or ``None`` for the folder in
            force (``JUDGEKIT_RECORDS``, the project configuration, else ``calibration/records``).
        criterion: A criterion id (``honest_reporting``, ``case.acceptance``) to also apply its
            failure-mode decision and say whether it was labelled; ``None`` asks about the judge as a whole.
        text: The criterion's text as the judge reads it, to say whether that exact text was labelled in
            calibration (``None``: by the id only).
        unlabelled_criteria: ``count`` or ``withhold`` (a never-labelled criterion is then untrusted) when
            the records are read here (``None``: the ``unlabelled_criteria`` setting, else ``count``); a
            book given keeps its own.

    Returns:
        The status: ``trusted``, the one-line ``reason``, ``withheld_by`` (``uncalibrated``,
        ``failed_gate``, ``bias``, ``failure_mode``, ``prefix_keyed``), the latest record with its gate
        and failed conditions, the bias report and failure-mode record read.

    Raises:
        JudgekitError: When a records folder named does not exist, or ``fingerprint`` names no single
            fingerprint (not hexadecimal, too short, a prefix of several or of none; exit code 2).
        ProblemsError: When the folder is not a folder, or a record in it is broken (exit code 2).

    >>> status = trust_status("3f2a9c1d0e4b5a6f" * 4, TrustBook.from_records("calibration/records"))
    >>> status.trusted, status.withheld_by, status.record
    (False, ('uncalibrated',), None)
    """
    if not isinstance(records, TrustBook):
        from judgekit.settings import records_folder, setting

        unlabelled = setting("unlabelled_criteria", unlabelled_criteria)
        records = TrustBook(records_folder(records), unlabelled_criteria=unlabelled_policy(unlabelled))
    return records.status(resolve_judge_fingerprint(fingerprint, records), criterion, text=text)


def _add_configured_judge(known: KnownFingerprints) -> None:
    """Add the fingerprint of the judge the settings configure (what ``judgekit grade`` would build).

    The judge comes from ``JUDGEKIT_JUDGE_MODEL`` and the project configuration's ``judge`` settings, as
    ``grade`` builds it without flags; it is built (nothing is sent) only to compute its fingerprint. A judge
    that cannot be built is named in ``known.searched`` with why, and adds nothing.
    """
    from judgekit.judge_setup import JUDGE_SETTINGS, JudgeConfig, build_rubric_grader
    from judgekit.settings import resolve_settings

    effective = resolve_settings()
    model = effective.value("judge.model")
    jury = effective.path("judge.jury")  # a jury's first member is the judge when no model is set
    if model is None and jury is None:
        known.searched.append(
            "the configured judge (none: no judge.model in judgekit.toml, nor JUDGEKIT_JUDGE_MODEL)"
        )
        return
    where = effective.source("judge.model" if model is not None else "judge.jury")
    model = model if model is not None else f"jury {jury}"
    cassette = effective.path("judge.cassette")
    settings = {name: effective.value(f"judge.{name}") for name in JUDGE_SETTINGS}
    try:
        grader = build_rubric_grader(
            JudgeConfig.from_settings(
                {**settings, "jury": jury},
                cassette=cassette,
                mode=effective.value("judge.cache") or ("record" if cassette else "off"),
            )
        )
    except JudgekitError as exc:
        known.searched.append(f"the configured judge {model} ({where}; it could not be built: {exc})")
        return
    known.searched.append(f"the configured judge {model} ({where})")
    known.add(grader.fingerprint, f"the configured judge {model}")


def known_fingerprints(
    records: TrustBook | str | os.PathLike[str] | None = None, *, configured_judge: bool = True
) -> KnownFingerprints:
    """The full fingerprints a typed prefix may name: the records folder's and the configured judge's.

    Both are read only when a prefix must be resolved (a full fingerprint needs neither).

    Args:
        records: The calibration records folder (its calibration records, bias reports and failure-mode
            records; a folder that does not exist holds none, as the message then says), a
            :class:`~judgekit.calibration.trust.TrustBook` already read, or ``None`` for the folder in force.
        configured_judge: Also the judge the settings configure (``JUDGEKIT_JUDGE_MODEL``, the project
            configuration's ``judge`` settings), built only to compute its fingerprint.

    Returns:
        The known fingerprints, where each was seen and what was searched
        (:class:`~judgekit.calibration.fingerprints.KnownFingerprints`); a command adds its own sources
        (a label table's ``fingerprint`` column) before resolving.

    Raises:
        JudgekitError: When ``records`` is ``None`` and the folder configured does not exist (exit code 2).
    """
    from judgekit.calibration.fingerprints import KnownFingerprints
    from judgekit.settings import records_folder

    known = KnownFingerprints()
    if isinstance(records, TrustBook):
        known.pending.append(records.add_fingerprints)
    else:
        folder = records_folder() if records is None else Path(records)  # a folder that is absent: no records
        known.pending.append(lambda k: TrustBook(folder).add_fingerprints(k))  # read only for a prefix
    if configured_judge:
        known.pending.append(_add_configured_judge)
    return known


def resolve_judge_fingerprint(
    typed: str,
    records: TrustBook | str | os.PathLike[str] | None = None,
    *,
    option: str = "fingerprint",
) -> str:
    """The one full fingerprint that ``typed`` (a full fingerprint or a prefix of one) names.

    The rule is :func:`judgekit.calibration.fingerprints.resolve_fingerprint`'s, over
    :func:`known_fingerprints`: a prefix of at least 8 hexadecimal characters (the 12 judgekit prints
    work) must start exactly one fingerprint of the records folder or of the configured judge.

    Args:
        typed: What the user gave.
        records: As for :func:`known_fingerprints`.
        option: The option or argument named in messages (``--fingerprint``).

    Returns:
        The full fingerprint (64 lower-case hexadecimal characters).

    Raises:
        JudgekitError: (exit code 2) For text that is not hexadecimal, too short or too long, a prefix of
            several known fingerprints (named) or of none (what was searched, and how to give the full one).
        ProblemsError: When a record in the folder is broken (exit code 2).

    >>> resolve_judge_fingerprint("86B6BB71D425" + "0" * 52, TrustBook.from_records("calibration/records"))
    '86b6bb71d4250000000000000000000000000000000000000000000000000000'
    """
    from judgekit.calibration.fingerprints import resolve_fingerprint

    return resolve_fingerprint(typed, known_fingerprints(records), option=option)


def fit_jury(
    labels: LabelTable | str | os.PathLike[str],
    members: Sequence[tuple[str, str]],
    *,
    experts: Sequence[str] | None = None,
    development_share: float = 0.5,
    seed: int = 0,
    on_note: Callable[[str], None] | None = None,
) -> Jury:
    """Fit a weighted jury's weights on the development part of a label table (``judgekit judge fit-jury``).

    The table's random-sample items are split by case (:func:`judgekit.calibration.jury.development_items`);
    each member's weight is fitted on the development part only
    (:func:`judgekit.calibration.jury.fit_jury_weights`), and the jury returned records those items, which
    :func:`calibrate` then leaves out, so the same labels never both fit and certify the jury.

    Args:
        labels: The label table (its file, or a table already read), with each member's rows (rater = the
            member's name) and the experts'.
        members: The jury's members in order, each ``(name, model)``: its rater name in the table and the
            litellm model it judges with at grade time (at least two, unique names).
        experts: The expert raters (``None``: the one rater besides the members).
        development_share: Share of the cases in the development part, strictly between 0 and 1.
        seed: Changes which cases are drawn.
        on_note: Called with the provenance note when the table records provenance.

    Returns:
        The weighted jury, with each member's weight and the fit (what it was fitted on).

    Raises:
        JudgekitError: (exit code 2) An unreadable table, fewer than two members or a name given twice,
            no expert, a member with no rows, a share outside (0, 1), or no development label to fit on.
    """
    from pydantic import ValidationError

    from judgekit.calibration.guards import random_sample_only
    from judgekit.calibration.jury import development_items, fit_jury_weights
    from judgekit.calibration.labels import default_experts
    from judgekit.judges.jury import Jury, JuryMember

    try:
        chosen = Jury(aggregation="majority", members=tuple(JuryMember(name=n, model=m) for n, m in members))
    except ValidationError as exc:
        reason = str(exc.errors(include_url=False)[0]["msg"]).removeprefix("Value error, ")
        raise JudgekitError(f"--member: {reason}", exit_code=2) from None
    table, name = _label_table(labels, None)
    table, provenance = random_sample_only(table)  # weights use the random-sample items only
    if provenance.random and on_note is not None:
        on_note(provenance.note)
    named = (
        [e.strip() for e in experts if e.strip()]
        if experts is not None
        else list(default_experts(table, chosen.names))
    )
    dev = development_items(table, share=development_share, seed=seed)
    return fit_jury_weights(table, chosen, experts=named, development=dev, labels_name=name)
