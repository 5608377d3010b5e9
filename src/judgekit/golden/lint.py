"""The golden-set linter: cases a do-nothing agent passes, expectations nobody checks, broken references.

A golden case is only worth running when a useless agent fails it. For every case, :func:`lint_case`
grades a **do-nothing trial** (:func:`do_nothing_transcript`: the case's user turns answered by
:data:`NEUTRAL_REPLY`, no tool call, the world left exactly as the case's fixture has it) on every
deterministic layer (:func:`judgekit.graders.layered.deterministic_checks` settled by
:func:`judgekit.graders.layered.combine`, the same contract every grading path uses), grades the case's
reference solution the same way (:func:`judgekit.graders.layered.reference_checks`), and reports:

* ``do_nothing_passes``: no deterministic gate fails the do-nothing trial, so only judge criteria (or
  nothing at all) could fail an agent that does nothing; the finding names the layers that accepted it.
  A case that declares why doing nothing is correct (``do_nothing: {why, decided_by}``,
  :class:`judgekit.cases.DoNothing`) is listed as ``declared`` instead and does not count;
* ``declaration_contradicted``: a case declares doing nothing correct but a deterministic gate fails
  the do-nothing trial (the declaration or the case is wrong);
* ``unknown_criterion``: a declaration rests on a rubric criterion that none of the linted rubrics
  has, or on one that only scores (a scored criterion never fails a case);
* ``uncheckable``: a deterministic expectation that neither the do-nothing trial nor the reference
  solution decides (its checks are missing, ``not_evaluated`` or ``error`` on both), such as an expected
  state in a case with no fixture to start from. Judge-only expectations (required outcome, acceptance,
  forbidden outcomes) are not this: they are listed as ``needs_judge`` information;
* ``broken_reference``: the reference solution fails, errors or leaves undecided a deterministic check
  of its own case;
* ``empty_criteria``: a case lists an empty judge-criterion list explicitly (``response_rubric: []``,
  ``forbidden_outcomes: []``, ``prohibited: []``), or a rubric file has no criteria;
* ``rubric_invalid``: a rubric file that does not load (each of its located problems).

Findings are ``reported`` (they make ``judgekit cases lint`` exit 1), ``declared`` or ``info``. Nothing here
prints, calls a model or writes a file; the command (:mod:`judgekit.commands.lint`) renders.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgekit.errors import JudgekitError, ProblemsError
from judgekit.graders.contract import (
    Expectation,
    ExpectationKind,
    Layer,
    stated_expectations,
)
from judgekit.graders.layered import combine, deterministic_checks, reference_checks
from judgekit.graders.registry import layer_info, layer_of
from judgekit.state.provider import StateProvider
from judgekit.transcript import Message, StateRef, Transcript
from judgekit.verdict import CheckResult, FrozenModel, Grade, Verdict

if TYPE_CHECKING:
    from judgekit.cases import Case
    from judgekit.caseset import CaseSet, LoadedCase
    from judgekit.judges.rubric import Rubric

__all__ = [
    "EMPTY_LIST_FIELDS",
    "NEUTRAL_REPLY",
    "CaseLint",
    "CaseLintDocument",
    "CheckDocument",
    "ChecksFn",
    "Finding",
    "FindingDocument",
    "FindingKind",
    "GradeDocument",
    "LintDocument",
    "LintReport",
    "LintSummary",
    "Location",
    "RubricLint",
    "RubricLintDocument",
    "Severity",
    "do_nothing_transcript",
    "layer_outcomes",
    "lint_case",
    "lint_case_set",
    "load_lint_rubrics",
]

NEUTRAL_REPLY = "I'm sorry, I can't help with that right now."
"""The do-nothing agent's only words: a polite non-answer that names nothing case-specific (no booking,
amount, policy or tool), so no must-mention can match it by accident and no must-not-mention can be
broken by it."""

EMPTY_LIST_FIELDS = ("response_rubric", "forbidden_outcomes", "prohibited")
"""Case fields holding judge criteria or prohibitions: an explicitly empty list there states nothing."""

ChecksFn = Callable[["Case", Transcript], list[CheckResult]]
"""``(case, transcript) -> checks``: the deterministic checks of one trial (default:
:func:`judgekit.graders.layered.deterministic_checks` over the set's states). Integrations that add
gates of their own (tau-bench's outputs and episode gates) pass theirs."""


class Severity(StrEnum):
    """How a finding counts: ``reported`` makes the lint fail; ``declared`` and ``info`` do not."""

    REPORTED = "reported"
    DECLARED = "declared"
    INFO = "info"


class FindingKind(StrEnum):
    """What a finding is about (see the module docstring for each)."""

    DO_NOTHING_PASSES = "do_nothing_passes"
    DECLARED = "declared"
    DECLARATION_CONTRADICTED = "declaration_contradicted"
    UNKNOWN_CRITERION = "unknown_criterion"
    UNCHECKABLE = "uncheckable"
    NEEDS_JUDGE = "needs_judge"
    BROKEN_REFERENCE = "broken_reference"
    EMPTY_CRITERIA = "empty_criteria"
    RUBRIC_INVALID = "rubric_invalid"


_SEVERITY = {
    FindingKind.DO_NOTHING_PASSES: Severity.REPORTED,
    FindingKind.DECLARED: Severity.DECLARED,
    FindingKind.DECLARATION_CONTRADICTED: Severity.REPORTED,
    FindingKind.UNKNOWN_CRITERION: Severity.REPORTED,
    FindingKind.UNCHECKABLE: Severity.REPORTED,
    FindingKind.NEEDS_JUDGE: Severity.INFO,
    FindingKind.BROKEN_REFERENCE: Severity.REPORTED,
    FindingKind.EMPTY_CRITERIA: Severity.REPORTED,
    FindingKind.RUBRIC_INVALID: Severity.REPORTED,
}


@dataclass(frozen=True)
class Location:
    """Where a finding points.

    Attributes:
        file: The file (a case file, a rubric file, a tau-bench results file); ``None`` when the subject
            was built in memory.
        line: 1-based line in ``file``; ``None`` when unknown.
    """

    file: Path | None
    line: int | None = None

    def __str__(self) -> str:
        where = str(self.file) if self.file is not None else "<input>"
        return f"{where}:{self.line}" if self.line is not None else where


@dataclass(frozen=True)
class Finding:
    """One thing the linter found.

    Attributes:
        kind: What it is about.
        subject: The case id (or the rubric id or file, for rubric findings).
        where: The file and line it points at (the field concerned when it can be located, else the
            case's first line).
        message: What is wrong and what to do, in one line.
        layers: For ``do_nothing_passes`` and ``declared``: the deterministic layers that accepted the
            do-nothing trial; for ``declaration_contradicted``: the layers that failed it.
        expectations: The keys of the expectations concerned (``expected_state``, ``acceptance``...).
    """

    kind: FindingKind
    subject: str
    where: Location
    message: str
    layers: tuple[str, ...] = ()
    expectations: tuple[str, ...] = ()

    @property
    def severity(self) -> Severity:
        """Whether it counts toward the lint's failure (``reported``), or is ``declared`` or ``info``."""
        return _SEVERITY[self.kind]

    def line(self) -> str:
        """The finding as one line: ``file:line: subject: message``."""
        prefix = {Severity.INFO: "info: ", Severity.DECLARED: "declared: "}.get(self.severity, "")
        return f"{self.where}: {self.subject}: {prefix}{self.message}"

    def document(self) -> FindingDocument:
        """The finding as a field of the ``lint_report`` document."""
        return FindingDocument(
            kind=self.kind.value,
            severity=self.severity.value,
            subject=self.subject,
            file=str(self.where.file) if self.where.file is not None else None,
            line=self.where.line,
            message=self.message,
            layers=list(self.layers),
            expectations=list(self.expectations),
        )


@dataclass(frozen=True)
class CaseLint:
    """The lint of one case.

    Attributes:
        case_id: The case.
        where: The case's file and first line.
        do_nothing: The do-nothing trial's grade on the deterministic layers.
        reference: The reference solution's grade on the deterministic layers; ``None`` when the case has
            no reference solution.
        findings: What was found, in a stable order.
    """

    case_id: str
    where: Location
    do_nothing: Grade
    reference: Grade | None
    findings: tuple[Finding, ...]

    @property
    def reported(self) -> bool:
        """True when any finding counts toward the lint's failure."""
        return any(f.severity is Severity.REPORTED for f in self.findings)

    @property
    def declared(self) -> bool:
        """True when the case declares doing nothing correct and the declaration holds (nothing reported)."""
        return not self.reported and any(f.kind is FindingKind.DECLARED for f in self.findings)

    @property
    def do_nothing_accepted(self) -> bool:
        """True when no deterministic gate fails the do-nothing trial (declared or not)."""
        return self.do_nothing.verdict is not Verdict.FAIL

    def document(self) -> CaseLintDocument:
        """The case's lint as a field of the ``lint_report`` document."""
        return CaseLintDocument(
            case=self.case_id,
            file=str(self.where.file) if self.where.file is not None else None,
            line=self.where.line,
            status="reported" if self.reported else "declared" if self.declared else "ok",
            do_nothing=GradeDocument.of(self.do_nothing),
            reference=GradeDocument.of(self.reference) if self.reference is not None else None,
            findings=[f.document() for f in self.findings],
        )


@dataclass(frozen=True)
class RubricLint:
    """The lint of one rubric file.

    Attributes:
        name: The rubric as it was named (a built-in id or a path).
        path: The file read.
        rubric: The loaded rubric; ``None`` when it did not load.
        findings: Its problems (empty criteria, load problems).
    """

    name: str
    path: Path
    rubric: Rubric | None
    findings: tuple[Finding, ...]

    def document(self) -> RubricLintDocument:
        """The rubric's lint as a field of the ``lint_report`` document."""
        return RubricLintDocument(
            rubric=self.name,
            file=str(self.path),
            loaded=self.rubric is not None,
            criteria=[c.id for c in self.rubric.criteria] if self.rubric is not None else [],
            findings=[f.document() for f in self.findings],
        )


@dataclass(frozen=True)
class LintReport:
    """Everything the linter found in one golden set.

    Attributes:
        cases: One lint per case, in set order.
        rubrics: One lint per rubric linted with.
    """

    cases: tuple[CaseLint, ...]
    rubrics: tuple[RubricLint, ...] = ()

    @property
    def findings(self) -> list[Finding]:
        """Every finding: the rubrics' first, then each case's."""
        return [f for r in self.rubrics for f in r.findings] + [f for c in self.cases for f in c.findings]

    @property
    def reported(self) -> list[CaseLint]:
        """The cases with a reported finding."""
        return [c for c in self.cases if c.reported]

    @property
    def declared(self) -> list[CaseLint]:
        """The cases whose do-nothing declaration holds (and that have nothing reported)."""
        return [c for c in self.cases if c.declared]

    @property
    def rubric_problems(self) -> list[Finding]:
        """The reported findings about rubric files."""
        return [f for r in self.rubrics for f in r.findings if f.severity is Severity.REPORTED]

    @property
    def clean(self) -> bool:
        """True when nothing is reported (no case and no rubric)."""
        return not self.reported and not self.rubric_problems

    def summary(self) -> str:
        """One line: ``26 cases linted: 2 reported, 2 declared`` (plus rubric problems when any)."""
        noun = "case" if len(self.cases) == 1 else "cases"
        text = (
            f"{len(self.cases)} {noun} linted: {len(self.reported)} reported, {len(self.declared)} declared"
        )
        problems = len(self.rubric_problems)
        if problems:
            text += f"; {problems} rubric problem{'s' if problems != 1 else ''}"
        return text

    def document(self) -> LintDocument:
        """The report as the ``lint_report`` document ``judgekit cases lint`` prints."""
        return LintDocument(
            summary=LintSummary(
                cases=len(self.cases),
                reported=len(self.reported),
                declared=len(self.declared),
                rubric_problems=len(self.rubric_problems),
                do_nothing_accepted=[c.case_id for c in self.cases if c.do_nothing_accepted],
            ),
            rubrics=[r.document() for r in self.rubrics],
            cases=[c.document() for c in self.cases],
        )


class FindingDocument(FrozenModel):
    """One finding, as printed (:class:`Finding`).

    Attributes:
        kind: What was found (a :class:`FindingKind` value).
        severity: How much it matters (a :class:`Severity` value).
        subject: The case id or rubric name.
        file: The file, ``None`` when the subject has none.
        line: 1-based line in ``file``, ``None`` when unknown.
        message: What was found and what to do.
        layers: The layers concerned.
        expectations: The expectations concerned.
    """

    kind: str
    severity: str
    subject: str
    file: str | None
    line: int | None
    message: str
    layers: list[str]
    expectations: list[str]


class CheckDocument(FrozenModel):
    """One check of a linted trial's grade.

    Attributes:
        check: The check id.
        layer: Its layer.
        verdict: Its verdict.
        gate: Whether it is a gate.
        reason: Why (``""`` when none).
    """

    check: str
    layer: str
    verdict: str
    gate: bool
    reason: str


class GradeDocument(FrozenModel):
    """A linted trial's grade on the deterministic layers.

    Attributes:
        verdict: The trial's verdict.
        reason: Why (``""`` when no single reason).
        layers: Each layer's outcome (:func:`layer_outcomes`).
        checks: Every check.
    """

    verdict: str
    reason: str
    layers: dict[str, str]
    checks: list[CheckDocument]

    @classmethod
    def of(cls, grade: Grade) -> GradeDocument:
        """The document of ``grade``."""
        return cls(
            verdict=grade.verdict.value,
            reason=grade.reason,
            layers={layer: verdict.value for layer, verdict in layer_outcomes(grade.checks).items()},
            checks=[
                CheckDocument(
                    check=c.check_id, layer=c.layer, verdict=c.verdict.value, gate=c.gate, reason=c.reason
                )
                for c in grade.checks
            ],
        )


class CaseLintDocument(FrozenModel):
    """One case's lint, as printed (:class:`CaseLint`).

    Attributes:
        case: The case id.
        file: Its file, ``None`` when it has none.
        line: Its first line, ``None`` when unknown.
        status: ``reported``, ``declared`` or ``ok``.
        do_nothing: The do-nothing trial's grade.
        reference: The reference solution's grade, ``None`` without one.
        findings: What was found.
    """

    case: str
    file: str | None
    line: int | None
    status: str
    do_nothing: GradeDocument
    reference: GradeDocument | None
    findings: list[FindingDocument]


class RubricLintDocument(FrozenModel):
    """One rubric file's lint, as printed (:class:`RubricLint`).

    Attributes:
        rubric: The rubric as named (a built-in id or a path).
        file: The file read.
        loaded: Whether it loaded.
        criteria: Its criterion ids (empty when it did not load).
        findings: Its problems.
    """

    rubric: str
    file: str
    loaded: bool
    criteria: list[str]
    findings: list[FindingDocument]


class LintSummary(FrozenModel):
    """The counts of a lint.

    Attributes:
        cases: Cases linted.
        reported: Cases with a reported finding.
        declared: Cases whose do-nothing declaration holds.
        rubric_problems: Reported findings about rubric files.
        do_nothing_accepted: Ids of the cases whose do-nothing trial no deterministic gate fails.
    """

    cases: int
    reported: int
    declared: int
    rubric_problems: int
    do_nothing_accepted: list[str]


class LintDocument(FrozenModel):
    """A lint (the ``lint_report`` document).

    Attributes:
        summary: The counts.
        rubrics: One lint per rubric file.
        cases: One lint per case, in set order.
    """

    summary: LintSummary
    rubrics: list[RubricLintDocument]
    cases: list[CaseLintDocument]


# --------------------------------------------------------------------------- the do-nothing trial


def do_nothing_transcript(
    case: Case, *, state: StateRef | None, trial: int = 1, ended_by: str = "agent"
) -> Transcript:
    """The trial of an agent that does nothing: it answers every user turn with :data:`NEUTRAL_REPLY`.

    Args:
        case: The case.
        state: The world the trial starts from, recorded as both its initial and its final state (doing
            nothing changes nothing); ``None`` when there is no fixture (the trial then records no state,
            and the state layer cannot decide it).
        trial: The trial number (1-based).
        ended_by: How the episode ended (``agent`` by default; tau-bench's gates want ``user_stop``).

    Returns:
        The transcript: the case's opening (``input``, the first turn, ``user.opening`` or ``user_goal``)
        and, for a multi-turn case, every later scripted turn, each followed by the neutral reply; no tool
        call. A scripted user says all its turns whatever the agent answers, so later turns are played.
    """
    turns = [t.user for t in case.turns] if case.turns else [case.opening() or ""]
    messages: list[Message] = []
    for text in turns:
        messages.append(Message(role="user", content=text))
        messages.append(Message(role="assistant", content=NEUTRAL_REPLY))
    return Transcript(
        case_id=case.id,
        trial=trial,
        messages=tuple(messages),
        initial_state=state,
        final_state=state,
        ended_by=ended_by,
        metadata={"judgekit_lint": "do-nothing trial"},
    )


def _deterministic_layer(check: CheckResult) -> bool:
    """True for checks of a deterministic layer that is not bookkeeping (unknown layers count)."""
    info = layer_of(check)
    if info is None:
        return True
    return not info.judge_backed and not info.bookkeeping


def _judged_expectation(expectation: Expectation) -> bool:
    info = layer_info(expectation.layer)
    return info is not None and info.judge_backed


def _judge_backed(check: CheckResult) -> bool:
    info = layer_of(check)
    return info is not None and info.judge_backed


def layer_outcomes(checks: Sequence[CheckResult]) -> dict[str, Verdict]:
    """Each deterministic, non-bookkeeping layer's outcome over one trial's checks.

    A layer's outcome is ``fail`` when one of its gates fails; else ``error`` or
    ``insufficient_information`` when one of its checks is; else ``pass`` when one of its checks passed
    (a scored check that failed lowers quality and never fails a case, so it does not make the layer
    fail here); else ``not_evaluated`` (the case gives the layer nothing to check).

    Returns:
        Layer name to outcome, in the order the layers first appear.
    """
    by_layer: dict[str, list[CheckResult]] = {}
    for check in checks:
        if _deterministic_layer(check):
            by_layer.setdefault(check.layer, []).append(check)
    out: dict[str, Verdict] = {}
    for layer, found in by_layer.items():
        verdicts = {c.verdict for c in found}
        if any(c.gate and c.verdict is Verdict.FAIL for c in found):
            out[layer] = Verdict.FAIL
        elif Verdict.ERROR in verdicts:
            out[layer] = Verdict.ERROR
        elif Verdict.INSUFFICIENT_INFORMATION in verdicts:
            out[layer] = Verdict.INSUFFICIENT_INFORMATION
        elif Verdict.PASS in verdicts or Verdict.FAIL in verdicts:
            out[layer] = Verdict.PASS
        else:
            out[layer] = Verdict.NOT_EVALUATED
    return out


# --------------------------------------------------------------------------- one case


def _decided(expectation: Expectation, checks: Sequence[CheckResult]) -> tuple[bool, str]:
    """Whether a trial's checks decide an expectation (the contract's rule), and why not when not."""
    found = [c for c in checks if c.check_id in expectation.check_ids]
    if not found:
        return False, "no check of it ran"
    undecided = [c for c in found if c.verdict not in (Verdict.PASS, Verdict.FAIL)]
    if not undecided:
        return True, ""
    check = undecided[0]
    return False, f"{check.check_id} is {check.verdict.value}" + (
        f" ({check.reason})" if check.reason else ""
    )


def _expectation_field(case: Case, expectation: Expectation) -> str:
    """The case field an expectation comes from (for its line), best effort."""
    kind, key = expectation.kind, expectation.key
    index = key.rsplit(":", 1)[-1]
    if kind is ExpectationKind.EXPECTED_STATE:
        return "expected_state"
    if kind is ExpectationKind.EXPECTED_ROUTE:
        return "expected.route"
    if kind is ExpectationKind.MUST_MENTION:
        return f"expected.must_mention.{index}"
    if kind is ExpectationKind.MUST_NOT_MENTION:
        return f"expected.must_not_mention.{index}"
    if kind is ExpectationKind.TURN_TEXT:
        _, turn, item = key.split(":")
        return f"turns.{turn}.expect_contains.{item}"
    if kind is ExpectationKind.FORBIDDEN_RULE:
        i = int(index)
        if i < len(case.forbidden):
            return f"forbidden.{i}"
        rule_positions = [p for p, item in enumerate(case.prohibited) if not isinstance(item, str)]
        rest = i - len(case.forbidden)
        return f"prohibited.{rule_positions[rest]}" if rest < len(rule_positions) else "prohibited"
    return kind.value


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _layer_list(outcomes: Mapping[str, Verdict], verdict: Verdict) -> list[str]:
    return [layer for layer, v in outcomes.items() if v is verdict]


def _rubric_criterion_finding(case: Case, at: Location, rubrics: Sequence[Rubric] | None) -> Finding | None:
    """A finding when a declaration rests on a rubric criterion the linted rubrics lack or only score."""
    declared = case.do_nothing
    if declared is None or declared.decided_by.startswith("case.") or rubrics is None:
        return None
    name = declared.decided_by
    for rubric in rubrics:
        for criterion in rubric.criteria:
            if criterion.id != name:
                continue
            if criterion.critical:
                return None
            return Finding(
                FindingKind.UNKNOWN_CRITERION,
                case.id,
                at,
                f"do_nothing.decided_by '{name}' is a scored criterion of rubric '{rubric.id}': its fail "
                "lowers the quality score but never fails the case, so a useless do-nothing reply would "
                "still pass; name a critical criterion (or case.acceptance)",
            )
    known = sorted({c.id for r in rubrics for c in r.criteria if c.critical})
    return Finding(
        FindingKind.UNKNOWN_CRITERION,
        case.id,
        at,
        f"do_nothing.decided_by '{name}' names no criterion of the rubrics linted with "
        f"({', '.join(r.id for r in rubrics) or 'none'}); critical criteria there: "
        f"{', '.join(known) or 'none'}; pass the rubric that has it with --rubric, or name a case criterion "
        "(case.acceptance)",
    )


def lint_case(
    case: Case,
    *,
    states: StateProvider,
    start: StateRef | None,
    where: Location,
    line_of: Callable[[str], int | None] | None = None,
    raw: Mapping[str, Any] | None = None,
    rubrics: Sequence[Rubric] | None = None,
    checks: ChecksFn | None = None,
    ended_by: str = "agent",
) -> CaseLint:
    """Lint one case: grade a do-nothing trial and the reference solution, and say what is weak.

    Args:
        case: The case.
        states: Resolves the case's fixture, expected state and reference solution.
        start: The world the do-nothing trial starts (and ends) in: the case's fixture, or ``None`` when
            it has none.
        where: The case's file and first line.
        line_of: Field path (``expected_state``, ``do_nothing``) to its line in the case's file; ``None``
            points every finding at ``where``.
        raw: The case as written (the parsed mapping), to find explicitly empty criterion lists; ``None``
            skips that check.
        rubrics: The rubrics a ``do_nothing.decided_by`` naming a rubric criterion is looked up in;
            ``None`` skips that check.
        checks: The deterministic checks of a trial (default: every deterministic layer over ``states``).
        ended_by: How the do-nothing episode ends (see :func:`do_nothing_transcript`).

    Returns:
        The case's lint.
    """

    def at(field_path: str | None = None) -> Location:
        if field_path is None or line_of is None:
            return where
        return Location(where.file, line_of(field_path))

    run = checks or (lambda c, t: deterministic_checks(c, t, states=states))
    trial = do_nothing_transcript(case, state=start, ended_by=ended_by)
    nothing_checks = run(case, trial)
    nothing = combine(case, 1, nothing_checks)
    reference: Grade | None = None
    reference_checks_: list[CheckResult] = []
    unreadable: str | None = None
    if case.reference_solution:
        transcript, reference_checks_ = reference_checks(case, states=states)
        reference = combine(case, 1, reference_checks_)
        if transcript is None:
            unreadable = "; ".join(c.reason for c in reference_checks_) or "it cannot be read"
    expectations = stated_expectations(case)
    judged = [e for e in expectations if _judged_expectation(e)]
    deterministic = [e for e in expectations if not _judged_expectation(e)]
    findings: list[Finding] = []

    # 1. does a do-nothing agent get through?
    outcomes = layer_outcomes(nothing_checks)
    accepted = _layer_list(outcomes, Verdict.PASS)
    failed = _layer_list(outcomes, Verdict.FAIL) or list(
        dict.fromkeys(c.layer for c in nothing_checks if c.gate and c.verdict is Verdict.FAIL)
    )
    undecided = [
        layer for layer, v in outcomes.items() if v in (Verdict.ERROR, Verdict.INSUFFICIENT_INFORMATION)
    ]
    judges = [e.key for e in judged]
    declared = case.do_nothing
    if nothing.verdict is not Verdict.FAIL:
        accepted_text = ", ".join(accepted) if accepted else "no deterministic layer (none decided it)"
        undecided_text = f"; undecided: {', '.join(undecided)}" if undecided else ""
        if declared is not None:
            findings.append(
                Finding(
                    FindingKind.DECLARED,
                    case.id,
                    at("do_nothing"),
                    f"{declared.why} (rests on {declared.decided_by}); do-nothing agent accepted by: "
                    f"{accepted_text}{undecided_text}",
                    layers=tuple(accepted),
                )
            )
        else:
            could = (
                f"only judge criteria could fail it ({', '.join(judges)})"
                if judges
                else "nothing in the case could fail it"
            )
            findings.append(
                Finding(
                    FindingKind.DO_NOTHING_PASSES,
                    case.id,
                    where,
                    f"do-nothing agent accepted by: {accepted_text}{undecided_text}; {could}. Add an "
                    "expectation a do-nothing agent fails (an expected state change, a route, a "
                    "must_mention), or declare why doing nothing is correct: do_nothing: {why: ..., "
                    "decided_by: case.acceptance}",
                    layers=tuple(accepted),
                    expectations=tuple(judges),
                )
            )
    elif declared is not None:
        findings.append(
            Finding(
                FindingKind.DECLARATION_CONTRADICTED,
                case.id,
                at("do_nothing"),
                f"the case declares doing nothing correct ({declared.why}) but a do-nothing agent fails it "
                f"on: {', '.join(failed)}; remove the declaration, or fix the expectation that fails it",
                layers=tuple(failed),
            )
        )
    criterion = _rubric_criterion_finding(case, at("do_nothing"), rubrics)
    if criterion is not None:
        findings.append(criterion)

    # 2. deterministic expectations nobody can check
    for expectation in deterministic:
        ok, why_nothing = _decided(expectation, nothing_checks)
        if ok:
            continue
        if expectation.layer is Layer.STATE and start is None:
            why_nothing = "the case names no initial_state, so there is no world to start from"
        if reference is not None:
            ok, why_reference = _decided(expectation, reference_checks_)
            if ok:
                continue
            if unreadable is not None:
                why_reference = "it cannot be read"
        else:
            why_reference = "the case has no reference_solution"
        findings.append(
            Finding(
                FindingKind.UNCHECKABLE,
                case.id,
                at(_expectation_field(case, expectation)),
                f"{expectation.label} cannot be checked by any layer: on a do-nothing trial {why_nothing}; "
                f"on the reference, {why_reference}; to decide it, {expectation.decided_by}",
                layers=(expectation.layer.value,),
                expectations=(expectation.key,),
            )
        )

    # 3. judge-only expectations (information)
    if judged:
        findings.append(
            Finding(
                FindingKind.NEEDS_JUDGE,
                case.id,
                where,
                f"needs a judge: {', '.join(judges)}",
                layers=(Layer.RUBRIC.value,),
                expectations=tuple(judges),
            )
        )

    # 4. a reference that does not pass its own case
    if unreadable is not None:
        findings.append(
            Finding(
                FindingKind.BROKEN_REFERENCE,
                case.id,
                at("reference_solution"),
                f"the reference solution cannot be graded: {_short(unreadable, 300)}; fix reference_solution "
                "or the transcript file it names",
                layers=(Layer.REFERENCE.value,),
            )
        )
    elif reference is not None:
        bad = [
            c
            for c in reference_checks_
            if c.verdict in (Verdict.FAIL, Verdict.ERROR, Verdict.INSUFFICIENT_INFORMATION)
            and not _judge_backed(c)
        ]
        left_open = [e for e in deterministic if not _decided(e, reference_checks_)[0]]
        if bad or left_open:
            parts = [
                f"{c.check_id}: {c.verdict.value}" + (f" ({_short(c.reason)})" if c.reason else "")
                for c in bad
            ]
            listed = {c.check_id for c in bad}
            parts += [f"{e.label}: undecided" for e in left_open if not (e.check_ids & listed)]
            findings.append(
                Finding(
                    FindingKind.BROKEN_REFERENCE,
                    case.id,
                    at("reference_solution"),
                    "the reference solution does not pass its own case on the deterministic layers: "
                    + "; ".join(parts)
                    + "; fix the case, its fixtures or the reference (judgekit cases check-references shows "
                    "the evidence)",
                    layers=tuple(dict.fromkeys(c.layer for c in bad)),
                    expectations=tuple(e.key for e in left_open),
                )
            )

    # 5. explicitly empty criterion lists
    if raw is not None:
        for name in EMPTY_LIST_FIELDS:
            if name in raw and raw[name] == []:
                findings.append(
                    Finding(
                        FindingKind.EMPTY_CRITERIA,
                        case.id,
                        at(name),
                        f"{name} is an empty list: it gives the judge nothing to check; write the criteria, "
                        "or remove the field",
                    )
                )
    return CaseLint(case.id, where, nothing, reference, tuple(findings))


# --------------------------------------------------------------------------- rubrics


def load_lint_rubrics(named: Sequence[tuple[str, Path]]) -> list[RubricLint]:
    """Load rubric files for linting; a rubric that does not load becomes findings, never an exception.

    Args:
        named: ``(name as given, file)`` pairs (a built-in id and its file, or a path twice).

    Returns:
        One :class:`RubricLint` per file: ``empty_criteria`` when the file lists no criteria (the
        :class:`~judgekit.judges.rubric.Rubric` model refuses that at load; the linter says it plainly),
        ``rubric_invalid`` for each other located load problem.
    """
    from judgekit.io.documents import read_document
    from judgekit.judges.rubric import rubric_from_data

    out: list[RubricLint] = []
    for name, path in named:
        findings: list[Finding] = []
        rubric = None
        try:
            doc = read_document(path)
        except JudgekitError as exc:
            out.append(
                RubricLint(
                    name,
                    path,
                    None,
                    (Finding(FindingKind.RUBRIC_INVALID, name, Location(path), _short(exc.message, 400)),),
                )
            )
            continue
        data = doc.data
        subject = str(data.get("id")) if isinstance(data, dict) and data.get("id") else name
        if isinstance(data, dict) and not data.get("criteria"):
            findings.append(
                Finding(
                    FindingKind.EMPTY_CRITERIA,
                    subject,
                    Location(path, doc.line_of(("criteria",))),
                    "the rubric has no criteria ("
                    + ("criteria: []" if "criteria" in data else "no criteria field")
                    + "): a judge given it decides nothing; list at least one criterion",
                )
            )
        try:
            rubric = rubric_from_data(data, source=doc.path, line_of=doc.line_of)
        except ProblemsError as exc:
            for problem in exc.problems:
                if problem.field == "criteria" and findings:
                    continue  # the empty list, already said plainly
                findings.append(
                    Finding(
                        FindingKind.RUBRIC_INVALID,
                        subject,
                        Location(problem.file or path, problem.line),
                        f"{problem.field}: {problem.message}" if problem.field else problem.message,
                    )
                )
        out.append(RubricLint(name, path, rubric, tuple(findings)))
    return out


# --------------------------------------------------------------------------- a whole set


def _raw_case(loaded: LoadedCase) -> Mapping[str, Any] | None:
    if loaded.document is None:
        return None
    data: Any = loaded.document.data
    for part in loaded.prefix:
        if isinstance(part, int) and isinstance(data, list) and part < len(data):
            data = data[part]
        elif isinstance(part, str) and isinstance(data, dict):
            data = data.get(part)
        else:
            return None
    return data if isinstance(data, dict) else None


def lint_case_set(
    case_set: CaseSet,
    *,
    rubrics: Sequence[RubricLint] = (),
    include_candidates: bool = False,
) -> LintReport:
    """Lint every case of a loaded golden set (see the module docstring for what is found).

    Args:
        case_set: The set, already loaded and valid (its problems are not re-reported here).
        rubrics: Linted rubrics (:func:`load_lint_rubrics`): their findings join the report, and a
            ``do_nothing.decided_by`` naming a rubric criterion is looked up among those that loaded.
            With none given, such a reference is not checked.
        include_candidates: Also lint candidates (by default only reviewed cases).

    Returns:
        The report, cases in set order.
    """
    states = StateProvider(case_set.root)
    loaded_rubrics = [r.rubric for r in rubrics if r.rubric is not None] if rubrics else None
    selected = case_set.cases if include_candidates else case_set.reviewed()
    out: list[CaseLint] = []
    for loaded in selected:
        case = loaded.case
        start = StateRef(path=str(case_set.resolve(case.initial_state))) if case.initial_state else None
        out.append(
            lint_case(
                case,
                states=states,
                start=start,
                where=Location(loaded.path, loaded.line),
                line_of=loaded.line_of,
                raw=_raw_case(loaded),
                rubrics=loaded_rubrics,
            )
        )
    return LintReport(tuple(out), tuple(rubrics))
