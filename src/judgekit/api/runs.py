"""Grade a run to a results file: the one run service behind ``judgekit grade``, the demo, Ray and the API.

:func:`grade_run` (and :func:`grade_run_async` for a caller already inside an event loop) does the whole
pipeline once: load the golden set and plan the trials (:func:`plan_run`), build the layered grader
(:func:`trial_grader`), check the results file and decide what is left to grade (:func:`open_results`),
grade every trial that has no line yet, appending one line per trial as it finishes, or send the judge's
requests as one provider batch (:func:`grade_trials`), then read the file back into the run report the
way ``judgekit report`` does, check the thresholds and decide the judge's trust. What it did comes back
as one :class:`RunOutcome`, whose :meth:`RunOutcome.document` is the document ``judgekit grade --format
json`` prints.

The steps are public because a caller sometimes needs one of them alone: Ray grades the planned trials
on its workers with :func:`grade_trials` and opens the results file on the driver with
:func:`open_results`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from pydantic import ConfigDict, Field, SkipValidation

from judgekit.advice import current_advice
from judgekit.api.canary import CanaryOutcome
from judgekit.caseset import CaseSet
from judgekit.errors import JudgekitError
from judgekit.graders.contract import UntrustedPolicy
from judgekit.graders.grounding import GroundingMode
from judgekit.graders.rubric import RubricGrader
from judgekit.judge_setup import JudgeConfig
from judgekit.provenance import Provenance
from judgekit.reports.run_gate import Threshold
from judgekit.runner import LayeredTrialGrader, OutputState, Progress, RunPlan, RunSummary
from judgekit.secrets import Redactor
from judgekit.verdict import FrozenModel, TrustDecision

if TYPE_CHECKING:
    from judgekit.graders.layered import GivenChecks
    from judgekit.reports.run_model import RunReport
    from judgekit.runner import PlannedTrial

    _ReadBack: TypeAlias = RunReport | None
else:  # the report model (numpy, the calibration estimators) is imported when a run is read back, after its
    _ReadBack = Any  # trials: grading's start does not wait for it

__all__ = [
    "DeterministicPass",
    "GateOutcome",
    "InputProblem",
    "JudgeOutcome",
    "RunOptions",
    "RunOutcome",
    "TransportOutcome",
    "grade_run",
    "grade_run_async",
    "grade_trials",
    "open_results",
    "plan_run",
    "trial_grader",
    "untrusted_note",
]

Say = Callable[[str], None]
"""Receives the notes and warnings of a run, one line each (the command line prints them on stderr)."""


def _quiet(text: str) -> None:
    """Say nothing (the default: the notes are in :attr:`RunOutcome.notes` too)."""


class DeterministicPass(Protocol):
    """Computes the deterministic layers' checks of a run's trials elsewhere, before the run grades them.

    ``judgekit grade --ray ADDRESS`` is one (:class:`judgekit.integrations.ray_grading.RayChecks`): the
    checks are computed on a Ray cluster, then the run goes on as in process on this machine (the judge,
    the combination into a verdict, the lines, resume, redaction), so its lines are those of the run in
    process.
    """

    def checks(
        self,
        trials: Sequence[PlannedTrial],
        *,
        root: str | os.PathLike[str],
        grounding: GroundingMode | None,
        say: Say,
    ) -> GivenChecks:
        """The checks of each trial by key (:meth:`judgekit.runner.LayeredTrialGrader.deterministic_checks`).

        Args:
            trials: The trials left to grade (resumed ones left out).
            root: The golden set's root (case fixtures resolve against it).
            grounding: The grounding mode of the run.
            say: Receives notes (where the checks were computed).
        """
        ...


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """How a run is graded: every option of ``judgekit grade`` besides its inputs and the judge.

    Keyword-only and frozen; checked when made, before any judge is set up or any file is read.

    Attributes:
        resume: Continue an interrupted run in the results file: finished trials are not graded again.
        retry_errors: With ``resume``: also grade again the trials whose line ended in error; their new
            lines replace the old ones. Refused without ``resume``.
        concurrency: Trials graded at once (>= 1; checked when the run starts).
        untrusted: What a verdict of a judge no calibration record trusts may do: ``withhold`` (decides
            nothing), ``fail_only`` or ``count``.
        grounding: Also check expected sources, in this mode (``None``: no grounding check).
        holdout: Holdout case ids to grade too (holdouts are left out otherwise).
        fsync: Force each result line to disk (power-loss safe; slower).
        batch: Send the judge's requests as one provider batch, wait for it, then write the results.
        batch_poll: With ``batch``: seconds between two looks at the batch's status (``None``: 30).
        thresholds: The thresholds the run's report is checked against (``--fail-under``...); empty: none.
        report: Read the results file back into the run report (the figures ``judgekit report``
            shows) even without thresholds; with thresholds it is always read.
        require_trust: Refuse a judge no calibration record trusts (exit code 1) instead of grading.
        canary: Drift canaries to re-ask before grading (0: none; ``judgekit grade --canary N``): a check
            (:func:`judgekit.api.canary.check_canaries_async`) that writes to the records folder, which is
            then read again, so a detected drift makes the judge untrusted for this run. Needs a judge.
        canary_seed: The seed of the canaries' choice (each check of a series chooses anew from it).
        grading: judgekit's configuration recorded in every line (secrets removed); ``None``: the cases,
            the judge and the options of this run.
        provenance: Record the run's provenance (versions, platform, case set digest) in every line.
        redactor: Removes secrets from every line written (``None``: the secrets of the environment and
            every key shape, :meth:`judgekit.secrets.Redactor.from_environ`).
        deterministic_pass: Compute the deterministic layers' checks there first (``judgekit grade
            --ray``: a Ray cluster); ``None``: in this process, trial by trial.

    Raises:
        JudgekitError: (exit code 2) When ``retry_errors`` is given without ``resume``, ``batch_poll``
            without ``batch`` or out of range, ``grounding`` is not a mode, or ``canary`` is negative.
    """

    resume: bool = False
    retry_errors: bool = False
    concurrency: int = 8
    untrusted: UntrustedPolicy = "withhold"
    grounding: GroundingMode | None = None
    holdout: tuple[str, ...] = ()
    fsync: bool = False
    batch: bool = False
    batch_poll: float | None = None
    thresholds: tuple[Threshold, ...] = ()
    report: bool = True
    require_trust: bool = False
    canary: int = 0
    canary_seed: int = 0
    grading: Mapping[str, Any] | None = None
    provenance: bool = True
    redactor: Redactor | None = field(default=None, compare=False)
    deterministic_pass: DeterministicPass | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        from judgekit.graders.grounding import MODES as GROUNDING_MODES
        from judgekit.runner import check_retry_errors

        check_retry_errors(resume=self.resume, retry_errors=self.retry_errors)
        if self.canary < 0:
            raise JudgekitError(f"--canary must be 0 (none) or more (got {self.canary})", exit_code=2)
        if self.batch_poll is not None and not self.batch:
            raise JudgekitError(
                "--batch-poll is the polling interval of --batch: give --batch too", exit_code=2
            )
        if self.batch_poll is not None:
            from judgekit.batch_grading import check_poll_interval

            check_poll_interval(self.batch_poll)
        if self.grounding is not None and self.grounding not in GROUNDING_MODES:
            raise JudgekitError(
                f"--grounding must be one of {', '.join(GROUNDING_MODES)} (got '{self.grounding}')",
                exit_code=2,
            )


# --------------------------------------------------------------------------- the outcome


class TransportOutcome(FrozenModel):
    """How the judge's calls were sent (never part of its fingerprint).

    Attributes:
        timeout_s: Seconds one judge attempt may take.
        retries: Retries after a request's first attempt.
        backoff_s: First backoff ceiling in seconds.
    """

    timeout_s: float
    retries: int
    backoff_s: float


class JudgeOutcome(FrozenModel):
    """The judge of a run and its trust.

    Attributes:
        model: The judge's model.
        fingerprint: The judge's fingerprint (what calibration records are keyed by).
        trust: ``trusted`` or ``untrusted``: the overall decision for this fingerprint.
        trust_reason: Why (the record that trusts it, or what is missing).
        records: The calibration records folder consulted.
        require_trust: Whether an untrusted judge was refused.
        cache_mode: ``record``, ``replay`` or ``off``.
        cassette: The judge cassette, or ``None``.
        untrusted_policy: What an untrusted verdict may do (``withhold``, ``fail_only``, ``count``).
        untrusted_verdicts_counted: Checks of this run whose untrusted verdict counted.
        untrusted_note: The sentence saying so (:func:`untrusted_note`).
        transport: How calls were sent.
    """

    model: str
    fingerprint: str
    trust: str
    trust_reason: str
    records: str
    require_trust: bool
    cache_mode: str
    cassette: str | None
    untrusted_policy: str
    untrusted_verdicts_counted: int
    untrusted_note: str
    transport: TransportOutcome


class GateOutcome(FrozenModel):
    """The thresholds checked on the run's report.

    Attributes:
        checked: Whether any threshold was given.
        passed: Whether every threshold was met (``None`` when none was given).
        thresholds: One row per threshold: its fields, ``met`` and its ``misses``.
        misses: One message per missed threshold and suite.
    """

    checked: bool
    passed: bool | None
    thresholds: list[dict[str, Any]]
    misses: list[str]


class InputProblem(FrozenModel):
    """An input line left out of the run (secrets removed from the message).

    Attributes:
        file: The transcript file, or ``None``.
        line: The 1-based line, or ``None``.
        field: The field concerned (``""`` for the whole line).
        message: What is wrong and what to do.
    """

    file: str | None
    line: int | None
    field: str
    message: str


class RunOutcome(FrozenModel):
    """What a run did: the counts, the cost, the judge's trust, the report's figures and the gate.

    Its dump (:meth:`document`) is the ``grade_summary`` document of ``judgekit grade --format json``. The
    report's fields (``trials_in_results``, ``undecided_policy``, ``pass_rates``, ``suites``) are ``None``
    when the report was not read (:attr:`RunOptions.report` off and no threshold).

    Attributes:
        run_id: The run id written in the lines.
        results: The results file.
        cases: The golden set.
        planned: Trials planned (after input problems).
        graded: Trials graded by this invocation (retried ones included).
        already_graded: Trials not graded because a line already existed (resume).
        retried: Trials graded again because their line ended in error.
        seconds: Wall time of the grading phase, rounded to milliseconds.
        verdicts: This invocation's trials by verdict state (every state, zeros included).
        errors: This invocation's trials with verdict error.
        grader_errors: Trials whose grader raised.
        cost_usd: Judge cost in US dollars; ``None`` when some trial's cost is unknown.
        cost_known_usd: The cost of the trials whose cost is known (a partial total when
            ``unpriced_trials`` > 0).
        unpriced_trials: Trials whose judge cost is unknown.
        cost_unknown_reason: Why, from the first such trial; ``None`` when every cost is known.
        judge: The judge and its trust; ``None`` without a judge (or with a trust lookup that is not a
            records folder).
        batch: The provider batch's record and state file, with ``batch``; ``None`` otherwise.
        trials_in_results: Trials in the results file (all invocations).
        undecided_policy: The report's undecided policy (``fail``, as ``judgekit report`` by default).
        pass_rates: pass^1 per suite (``None`` where undefined): the figure ``--fail-under`` checks.
        suites: Each suite of the report, as its JSON.
        gate: The thresholds and whether they were met.
        input_problems: The input lines left out.
        dropped_line: A truncated last line cut off before resuming.
        holdouts_left_out: Holdout cases whose trials were left out (not named).
        exit_code: What ``judgekit grade`` exits with: 2 when input lines were left out, else 1 when a
            threshold was missed, else 0.
        canary: The drift canary check made before grading (``--canary N``), or ``None`` without one; when
            it detected drift the judge was untrusted for the run (``judge.trust_reason`` says why).
        summary: The runner's summary (not in the document).
        report: The run report (not in the document); ``None`` when it was not read.
        notes: The notes and warnings said during the run, in order (not in the document).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    run_id: str
    results: str
    cases: str
    planned: int
    graded: int
    already_graded: int
    retried: int
    seconds: float
    verdicts: dict[str, int]
    errors: int
    grader_errors: int
    cost_usd: float | None
    cost_known_usd: float
    unpriced_trials: int
    cost_unknown_reason: str | None
    judge: JudgeOutcome | None
    batch: dict[str, Any] | None
    trials_in_results: int | None
    undecided_policy: str | None
    pass_rates: dict[str, float | None] | None
    suites: list[dict[str, Any]] | None
    gate: GateOutcome
    input_problems: list[InputProblem]
    dropped_line: int | None
    holdouts_left_out: list[str]
    exit_code: int
    canary: CanaryOutcome | None = None
    summary: SkipValidation[RunSummary] = Field(exclude=True)
    report: SkipValidation[_ReadBack] = Field(default=None, exclude=True)
    notes: tuple[str, ...] = Field(default=(), exclude=True)
    judged: bool = Field(default=False, exclude=True)

    def document(self) -> dict[str, Any]:
        """The ``grade_summary`` document's fields, as JSON values."""
        return self.model_dump(mode="json")

    @property
    def headline(self) -> str:
        """What the run did, in the one line ``judgekit grade`` prints.

        ``run <id>: graded <n> trial(s) in <s>s (<count> <verdict>, ...)``, then (when they apply) the
        trials retried after an error, those already graded, the judge's cost (dollars, or unknown and
        why: never a made-up $0), grader errors, and ``-> <results file>``.

        Examples:
            >>> from judgekit.runner import RunSummary
            >>> from judgekit.verdict import Verdict
            >>> summary = RunSummary(run_id="r1", planned=3, skipped_done=0, graded=3,
            ...     verdicts={Verdict.PASS: 2, Verdict.FAIL: 1}, grader_errors=0, cost_usd=0.0125,
            ...     untrusted_verdicts=0, seconds=1.25, problems=[])
            >>> headline(summary, results="v1.jsonl", judged=True)
            'run r1: graded 3 trial(s) in 1.2s (2 pass, 1 fail); judge cost $0.0125 -> v1.jsonl'
        """
        return headline(self.summary, results=self.results, judged=self.judged)


def headline(summary: RunSummary, *, results: str, judged: bool) -> str:
    """The one line a run prints (:attr:`RunOutcome.headline`), from the runner's summary.

    Args:
        summary: What the runner did.
        results: The results file, as the user named it.
        judged: Whether a judge graded (its cost is then part of the line).
    """
    counts = ", ".join(f"{n} {v.value}" for v, n in summary.verdicts.items() if n)
    return (
        f"run {summary.run_id}: graded {summary.graded} trial(s) in {summary.seconds:.1f}s"
        + (f" ({counts})" if counts else "")
        + (f"; {summary.retried} of them retried after an error" if summary.retried else "")
        + (f"; {summary.skipped_done} already graded" if summary.skipped_done else "")
        + (f"; {cost_text(summary)}" if judged else "")
        + (f"; {summary.grader_errors} grader error(s)" if summary.grader_errors else "")
        + f" -> {results}"
    )


def cost_text(summary: RunSummary) -> str:
    """The judge cost of a run for people: dollars, or unknown with why (never a fake $0.0000)."""
    if not summary.unpriced_trials:
        return f"judge cost ${summary.cost_usd:.4f}"
    known = summary.graded - summary.unpriced_trials
    return f"judge cost unknown for {summary.unpriced_trials} trial(s) ({summary.cost_unknown_reason})" + (
        f", ${summary.cost_usd:.4f} for the other {known}" if known else ""
    )


def untrusted_note(policy: str, summary: RunSummary) -> str:
    """The summary line on untrusted judge verdicts: what the policy did to them, or that there were none.

    The policy is explained only when it applied: a run whose every judge verdict is trusted says so, and
    never that an untrusted judge decides nothing. The policy and the opt-in are named as the path's user
    sets them (:func:`judgekit.advice.current_advice`: ``--untrusted count`` on the command line,
    ``untrusted='count'`` in Python).

    Args:
        policy: The untrusted policy in force (``withhold``, ``fail_only``, ``count``, ``advisory``).
        summary: The invocation's run summary: its graded trials, the checks resting on an untrusted judge
            (:attr:`~judgekit.runner.RunSummary.untrusted_checks`) and those of them that counted.
    """
    counted, graded, untrusted = summary.untrusted_verdicts, summary.graded, summary.untrusted_checks
    advice = current_advice()  # the policy and the opt-in as this path's user sets them
    named = advice.policy_named(policy)
    if not untrusted:
        return (
            f"untrusted judge verdicts: none; every judge verdict of the {graded} graded trial(s) is trusted "
            f"by a calibration record ({named} had nothing to decide)"
        )
    if policy == "count":
        return (
            f"untrusted judge verdicts counted: {counted} ({named}): verdicts resting on a judge no "
            f"calibration record trusts are included in the {graded} graded trial(s)"
        )
    if policy == "fail_only":
        return f"untrusted judge verdicts counted: {counted} of {untrusted} ({named}: only their fails count)"
    return (
        f"untrusted judge verdicts counted: 0 of {untrusted} ({named}: a verdict no calibration record "
        f"trusts decides nothing; opt in with {advice.count_untrusted})"
    )


# --------------------------------------------------------------------------- the steps


def plan_run(
    cases: str | os.PathLike[str] | CaseSet,
    transcripts: Sequence[str | os.PathLike[str]],
    *,
    holdout: Sequence[str] = (),
    holdout_option: str = "--holdout",
    transcripts_option: str = "--transcripts",
) -> tuple[CaseSet, RunPlan]:
    """Load the golden set and plan the trials of the transcript files.

    Args:
        cases: The golden set's folder, or a set already loaded.
        transcripts: Transcript JSONL files or glob patterns, in order.
        holdout: Holdout case ids to grade too.
        holdout_option: The option that names holdouts, in messages.
        transcripts_option: The option that names the transcripts, in messages (``""``: none).

    Returns:
        The case set and the plan (its input problems and held-out trials included).

    Raises:
        JudgekitError: (exit code 2) When the golden set is unusable, or a transcript file or pattern
            names nothing readable.
    """
    from judgekit.caseset import load_case_set
    from judgekit.io.paths import expand_input_paths
    from judgekit.runner import plan_trials

    case_set = cases if isinstance(cases, CaseSet) else load_case_set([Path(cases)])
    try:
        case_set.raise_if_invalid()
    except JudgekitError as exc:  # an unusable golden set is an input error here, not a finding
        exc.exit_code = 2
        raise
    files = expand_input_paths(transcripts, what="transcript file", option=transcripts_option)
    return case_set, plan_trials(case_set, files, holdout=holdout, option=holdout_option)


def trial_grader(
    root: str | os.PathLike[str],
    plan: RunPlan,
    judge: RubricGrader | None = None,
    *,
    untrusted: UntrustedPolicy = "withhold",
    grounding: GroundingMode | None = None,
) -> LayeredTrialGrader:
    """The layered grader of a run, each trial's states resolved against its transcript file's folder.

    Args:
        root: The golden set's root (case fixtures resolve against it).
        plan: The planned trials.
        judge: The judge layer, or ``None`` for the deterministic layers only.
        untrusted: What an untrusted judge's verdict may do.
        grounding: Also check expected sources, in this mode.

    Returns:
        The grader; call its ``close()`` when done.
    """
    grader = LayeredTrialGrader(Path(root), judge, untrusted, grounding)
    grader.set_sources({t.key: Path(t.source.file).resolve().parent for t in plan.trials})
    return grader


def open_results(
    out: str | os.PathLike[str],
    plan: RunPlan,
    *,
    grader: LayeredTrialGrader | None = None,
    resume: bool = False,
    retry_errors: bool = False,
) -> OutputState:
    """Check the results file and decide what is left to grade (:func:`judgekit.runner.prepare_output`).

    Args:
        out: The results file.
        plan: The planned trials.
        grader: The run's grader (its spec and judge fingerprint must match the lines resumed); ``None``:
            the deterministic layers without a judge.
        resume: Continue an existing file.
        retry_errors: With ``resume``, grade again the trials whose line ended in error.

    Raises:
        JudgekitError: (exit code 2) When ``out`` exists and is not empty without ``resume``, cannot be
            resumed by this grader, or is a folder.
    """
    from judgekit.runner import prepare_output

    try:
        return prepare_output(
            out,
            plan,
            resume=resume,
            judge_fingerprint=grader.judge_fingerprint if grader is not None else None,
            grader=grader.spec if grader is not None else None,
            retry_errors=retry_errors,
        )
    except JudgekitError as exc:  # an existing --out, a results file that cannot be resumed: input errors
        exc.exit_code = 2
        raise


async def grade_trials(
    plan: RunPlan,
    grader: LayeredTrialGrader,
    out: str | os.PathLike[str],
    *,
    state: OutputState,
    options: RunOptions | None = None,
    grading: Mapping[str, Any] | None = None,
    provenance: Provenance | None = None,
    progress: Progress | None = None,
    say: Say = _quiet,
    concurrency: int | None = None,
) -> tuple[RunSummary, dict[str, Any] | None]:
    """Grade every planned trial that has no line yet, one line per trial, or through a provider batch.

    Args:
        plan: The trials.
        grader: From :func:`trial_grader`.
        out: The results file (appended to).
        state: From :func:`open_results`.
        options: The run's options (``batch``, ``fsync``, ``concurrency``, ``redactor``...).
        grading: The configuration recorded in every line, as given (the caller removed its secrets).
        provenance: The run's :class:`~judgekit.provenance.Provenance`, recorded in every line (``None``:
            left out).
        progress: Receives progress events.
        say: Receives the batch's notes.
        concurrency: Trials graded at once, instead of ``options.concurrency``.

    Returns:
        The runner's summary, and with ``batch`` the batch's record (``None`` otherwise).

    Raises:
        JudgekitError: When the output cannot be written, another process is writing it, or the batch
            failed.
    """
    options = options or RunOptions()
    run: dict[str, Any] = {
        "out": out,
        "state": state,
        "concurrency": options.concurrency if concurrency is None else concurrency,
        "grading": grading,
        "redactor": options.redactor,
        "progress": progress,
        "fsync": options.fsync,
        "provenance": provenance,
    }
    if not options.batch:
        from judgekit.runner import run_trials

        return await run_trials(plan, grader, **run), None
    from judgekit.batch_grading import POLL_DEFAULT_S, grade_in_batch

    poll = options.batch_poll if options.batch_poll is not None else POLL_DEFAULT_S
    batch_run = await grade_in_batch(plan, grader, resume=options.resume, poll_s=poll, echo=say, **run)
    record = None
    if batch_run.state is not None:
        record = {**batch_run.state.record(), "state_file": str(batch_run.state_file)}
    return batch_run.summary, record


# --------------------------------------------------------------------------- the service


def grade_run(
    cases: str | os.PathLike[str] | CaseSet,
    transcripts: Sequence[str | os.PathLike[str]] | RunPlan,
    out: str | os.PathLike[str],
    *,
    judge: JudgeConfig | RubricGrader | None = None,
    options: RunOptions | None = None,
    progress: Progress | None = None,
    say: Say = _quiet,
) -> RunOutcome:
    """Grade a run to a results file: plan, grade every trial on every layer, report, gate, trust.

    Interrupt it at any time and run it again with ``RunOptions(resume=True)``: finished trials are not
    graded again, no line is duplicated, and a line cut off by the interruption is graded again.

    Args:
        cases: The golden set's folder, or a set already loaded.
        transcripts: Transcript JSONL files or glob patterns, or a plan already made (:func:`plan_run`).
        out: The results file (JSONL) to write, one line per trial.
        judge: The judge layer: a configuration to build it from, a rubric grader already built, or
            ``None`` for the deterministic layers only.
        options: How to grade (``None``: the defaults of :class:`RunOptions`).
        progress: Receives progress events (the command line draws its progress bar from them).
        say: Receives each note and warning as it happens (holdouts left out, input lines left out, a
            truncated line dropped, trials retried); they are in :attr:`RunOutcome.notes` too.

    Returns:
        What the run did (:class:`RunOutcome`).

    Raises:
        JudgekitError: On an input error (an unusable golden set or transcript pattern, a results file
            that exists or cannot be resumed; exit code 2), a bad judge setting (exit code 2), or when
            ``require_trust`` refuses the judge (exit code 1).
    """
    return asyncio.run(
        grade_run_async(cases, transcripts, out, judge=judge, options=options, progress=progress, say=say)
    )


async def grade_run_async(
    cases: str | os.PathLike[str] | CaseSet,
    transcripts: Sequence[str | os.PathLike[str]] | RunPlan,
    out: str | os.PathLike[str],
    *,
    judge: JudgeConfig | RubricGrader | None = None,
    options: RunOptions | None = None,
    progress: Progress | None = None,
    say: Say = _quiet,
) -> RunOutcome:
    """:func:`grade_run` for a caller inside an event loop (the same arguments, awaited)."""
    from judgekit.judge_setup import build_rubric_grader

    options = options or RunOptions()
    notes: list[str] = []

    def note(text: str) -> None:
        notes.append(text)
        say(text)

    rubric = build_rubric_grader(judge) if isinstance(judge, JudgeConfig) else judge
    canary = await _canary(rubric, options, note) if options.canary else None
    trust = _judge_trust(rubric, require=options.require_trust)
    if isinstance(transcripts, RunPlan):
        from judgekit.caseset import load_case_set

        case_set, plan = (cases if isinstance(cases, CaseSet) else load_case_set([Path(cases)])), transcripts
    else:
        case_set, plan = plan_run(cases, transcripts, holdout=options.holdout)
    cases_text = str(cases.root if isinstance(cases, CaseSet) else cases)
    if plan.held_out:
        note(
            f"note: left out {len(plan.held_out)} trial(s) of holdout case(s) "
            f"{', '.join(sorted({t.case.id for t in plan.held_out}))}; name one with --holdout ID to grade it"
        )
    grader = trial_grader(
        case_set.root, plan, rubric, untrusted=options.untrusted, grounding=options.grounding
    )
    try:
        state = open_results(
            out, plan, grader=grader, resume=options.resume, retry_errors=options.retry_errors
        )
        for line in _state_notes(out, plan, state):
            note(line)
        if options.deterministic_pass is not None:
            todo = [t for t in plan.trials if t.key not in state.done]
            given = options.deterministic_pass.checks(
                todo, root=case_set.root, grounding=options.grounding, say=note
            )
            grader.give_checks(given)
        redactor = options.redactor or Redactor.from_environ()
        grading = options.grading if options.grading is not None else _grading(cases_text, rubric, options)
        summary, batch = await grade_trials(
            plan,
            grader,
            out,
            state=state,
            options=replace(options, redactor=redactor),
            grading=redactor.data(dict(grading)),
            provenance=_provenance(cases_text, grader, options) if options.provenance else None,
            progress=progress,
            say=note,
        )
    finally:
        grader.close()
    report = _read_back(out, case_set, options) if options.report or options.thresholds else None
    return _outcome(
        out=out,
        cases=cases_text,
        plan=plan,
        state=state,
        summary=summary,
        batch=batch,
        report=report,
        rubric=rubric,
        trust=trust,
        options=options,
        redactor=redactor,
        notes=tuple(notes),
    ).model_copy(update={"canary": canary})


# --------------------------------------------------------------------------- the parts of the service


async def _canary(rubric: RubricGrader | None, options: RunOptions, note: Say) -> CanaryOutcome:
    """The drift canary check before grading; the judge's trust is then read again from the records.

    Raises:
        JudgekitError: (exit code 2) Without a judge, or as :func:`judgekit.api.canary.check_canaries_async`.
    """
    from judgekit.api.canary import check_canaries_async
    from judgekit.calibration.trust import TrustBook

    if rubric is None:
        raise JudgekitError(
            "--canary re-asks the judge's canaries: give a judge (--judge-model)", exit_code=2
        )
    outcome = await check_canaries_async(rubric, options.canary, seed=options.canary_seed)
    note(outcome.summary)
    book = rubric.trust
    if isinstance(book, TrustBook):  # the check wrote to the records: read them again for this run
        rubric.retrust(TrustBook(book.records_dir, unlabelled_criteria=book.unlabelled_criteria))
    return outcome


def _judge_trust(rubric: RubricGrader | None, *, require: bool) -> tuple[TrustDecision, Path] | None:
    """The judge's overall trust decision and its records folder, when its trust comes from records.

    Raises:
        JudgekitError: (exit code 1) When ``require`` refuses the judge.
    """
    if rubric is None:  # no judge: the calibration records (and their trust book) are not needed
        return None
    from judgekit.calibration.trust import TrustBook

    if not isinstance(rubric.trust, TrustBook):
        return None
    book = rubric.trust
    try:
        return (book.require if require else book.decide)(rubric.fingerprint), book.records_dir
    except JudgekitError as exc:  # an untrusted judge is a finding (docs/reference/exit-codes.md)
        exc.exit_code = 1
        raise


def _state_notes(out: str | os.PathLike[str], plan: RunPlan, state: OutputState) -> list[str]:
    """The warnings on the input lines left out and the notes on what resuming found."""
    lines = [f"warning: {problem}" for problem in plan.problems]
    if state.dropped_line is not None:
        lines.append(
            f"{out}:{state.dropped_line}: the last line was cut off by the interruption; it was dropped and "
            "that trial is graded again"
        )
    if state.retry:
        lines.append(
            f"{out}: retrying {len(state.retry)} trial(s) whose line ended in error; their new lines replace "
            "the old ones"
        )
    if state.errors_not_planned:
        lines.append(
            f"{out}: {state.errors_not_planned} line(s) that ended in error are of trials not in these "
            "--transcripts; they are kept as they are (give their transcripts to retry them)"
        )
    return lines


def _grading(cases: str, rubric: RubricGrader | None, options: RunOptions) -> dict[str, Any]:
    """The configuration recorded in every line when the caller gives none."""
    record: dict[str, Any] = {
        "cases": cases,
        "judge_model": rubric.client.params.model if rubric is not None else None,
        "judge_api_base": rubric.client.settings.api_base if rubric is not None else None,
        "rubric": rubric.rubric.id if rubric is not None else None,
        "cache_mode": rubric.client.mode.value if rubric is not None else None,
        "concurrency": options.concurrency,
        "untrusted_policy": options.untrusted,
    }
    if options.grounding is not None:
        record["grounding"] = options.grounding
    return record


def _provenance(cases: str, grader: LayeredTrialGrader, options: RunOptions) -> Provenance:
    """The run's provenance: method, seed, case set digest, thresholds, versions."""
    from judgekit.provenance import collect_provenance

    judge_fp = grader.judge_fingerprint
    params = grader.rubric_grader.client.params if grader.rubric_grader is not None else None
    return collect_provenance(
        method="layered" + (f"+rubric:{judge_fp['label']}" if judge_fp is not None else ""),
        seed=params.seed if params is not None else None,
        case_set=cases,
        thresholds={
            "untrusted_policy": options.untrusted,
            "judge_samples": params.samples if params is not None else None,
            "judge_temperature": params.temperature if params is not None else None,
        },
    )


def _read_back(out: str | os.PathLike[str], case_set: CaseSet, options: RunOptions) -> RunReport:
    """The figures ``judgekit report --cases`` shows for the results file (undecided counts as fail).

    The report service itself (:func:`judgekit.api.reports.report`), with no calibration records: the
    gate ``grade`` checks is the report's by construction.
    """
    from judgekit.api.reports import report

    return report(out, cases=case_set, records=(), holdout=options.holdout)


def _gate(report: RunReport | None, thresholds: Sequence[Threshold]) -> GateOutcome:
    """Each threshold checked on its own on the report: its fields, whether it was met, and its misses."""
    from judgekit.reports.run_gate import check_thresholds

    rows: list[dict[str, Any]] = []
    if report is not None:
        for threshold in thresholds:
            missed = check_thresholds(report, [threshold])
            rows.append({**threshold.model_dump(mode="json"), "met": not missed, "misses": list(missed)})
    misses = [miss for row in rows for miss in row["misses"]]
    return GateOutcome(
        checked=bool(thresholds),
        passed=not misses if thresholds else None,
        thresholds=rows,
        misses=misses,
    )


def _judge_outcome(
    rubric: RubricGrader, decision: TrustDecision, records: Path, summary: RunSummary, options: RunOptions
) -> JudgeOutcome:
    client = rubric.client
    return JudgeOutcome(
        model=client.params.model,
        fingerprint=rubric.fingerprint,
        trust=decision.trust.value,
        trust_reason=decision.reason,
        records=str(records),
        require_trust=options.require_trust,
        cache_mode=client.mode.value,
        cassette=str(client.cassette.path) if client.cassette is not None else None,
        untrusted_policy=options.untrusted,
        untrusted_verdicts_counted=summary.untrusted_verdicts,
        untrusted_note=untrusted_note(options.untrusted, summary),
        transport=TransportOutcome(
            timeout_s=client.settings.timeout,
            retries=client.settings.max_retries,
            backoff_s=client.settings.backoff_base,
        ),
    )


def _outcome(
    *,
    out: str | os.PathLike[str],
    cases: str,
    plan: RunPlan,
    state: OutputState,
    summary: RunSummary,
    batch: dict[str, Any] | None,
    report: RunReport | None,
    rubric: RubricGrader | None,
    trust: tuple[TrustDecision, Path] | None,
    options: RunOptions,
    redactor: Redactor,
    notes: tuple[str, ...],
) -> RunOutcome:
    from judgekit.verdict import Verdict

    gate = _gate(report, options.thresholds)
    judge = None
    if rubric is not None and trust is not None:  # a judge always has its trust decision
        judge = _judge_outcome(rubric, trust[0], trust[1], summary, options)
    return RunOutcome(
        run_id=summary.run_id,
        results=str(out),
        cases=cases,
        planned=summary.planned,
        graded=summary.graded,
        already_graded=summary.skipped_done,
        retried=summary.retried,
        seconds=round(summary.seconds, 3),
        verdicts={v.value: summary.verdicts.get(v, 0) for v in Verdict},
        errors=summary.verdicts.get(Verdict.ERROR, 0),
        grader_errors=summary.grader_errors,
        cost_usd=summary.cost_usd if not summary.unpriced_trials else None,
        cost_known_usd=summary.cost_usd,
        unpriced_trials=summary.unpriced_trials,
        cost_unknown_reason=summary.cost_unknown_reason,
        judge=judge,
        batch=batch,
        trials_in_results=report.run.trials if report is not None else None,
        undecided_policy=report.undecided_policy if report is not None else None,
        # pass^1 per suite, the figure --fail-under checks (None when undefined)
        pass_rates={s.name: s.pass_hat[0].value if s.pass_hat else None for s in report.suites}
        if report is not None
        else None,
        suites=[s.model_dump(mode="json") for s in report.suites] if report is not None else None,
        gate=gate,
        input_problems=[
            InputProblem(
                file=str(p.file) if p.file is not None else None,
                line=p.line,
                field=p.field,
                message=redactor.text(p.message),
            )
            for p in plan.problems
        ],
        dropped_line=state.dropped_line,
        holdouts_left_out=sorted({t.case.id for t in plan.held_out}),
        exit_code=2 if plan.problems else 1 if gate.misses else 0,
        summary=summary,
        report=report,
        notes=notes,
        judged=rubric is not None,
    )
