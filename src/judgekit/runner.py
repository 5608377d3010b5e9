"""Grade many trials: concurrency, one result line per trial as it finishes, resume after any interruption.

The runner is the only part of judgekit that grades at scale. It

1. **plans** the run (:func:`plan_trials`): reads transcript files line by line, keeps each trial with
   where it came from (file, line, SHA-256 of the line), and reports as located problems the lines that are
   not transcripts, trials of cases not in the set and repeated ``(case, trial)`` pairs; those are left
   out and everything else is graded;
2. **prepares the output** (:func:`prepare_output`): a fresh run refuses to overwrite a results file; a
   resumed run cuts off a truncated last line (the only line a kill can damage), reads what finished,
   checks it was graded the same way (same case versions, same judge fingerprint, same transcripts) and
   keeps its run id;
3. **grades** (:func:`run_trials`): ``concurrency`` workers take trials from a queue; each trial's
   deterministic layers (in a worker thread) and judge layer (async HTTP) run concurrently; each finished
   trial is appended as one whole line (:class:`~judgekit.io.atomic.LineAppender`, one ``write`` per line),
   secrets removed. Interrupting the run (Ctrl-C, ``kill -9``) loses at most the trials in flight;
   ``--resume`` grades exactly the trials that have no line, so nothing is graded twice and no line is
   duplicated;
4. **retries errors** on request (``--resume --retry-errors``): the trials whose line ended in error
   (:func:`ended_in_error`: the case verdict is ``error``, or any of its checks is) are graded again and
   their new lines replace the old ones. Before the first new line is appended, the results file is
   rewritten without those lines (a copy in the same folder, flushed to disk, renamed over the file, all
   under the file's lock), so the file never holds two lines for one trial: a kill before the rename
   leaves it as it was, a kill after it leaves those trials without a line, which the next ``--resume``
   grades like any trial an interruption left.

A grader that raises is a bug or an outage, not a verdict: the trial gets an ``error`` verdict with the
exception named, the run goes on and the error count shows it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import JsonValue, ValidationError

from judgekit.errors import JudgekitError, LocatedError, Problem, did_you_mean
from judgekit.graders.contract import Grader, GraderSpec, UntrustedPolicy
from judgekit.io.atomic import LineAppender, fsync_folder, make_parent_folder, repair_tail
from judgekit.io.documents import (
    iter_lines,
    json_error_detail,
    line_too_long,
    load_json_bounded,
)
from judgekit.results import (
    CaseRef,
    FastResultLine,
    ResultLine,
    TrialSource,
    dump_result_line,
    fast_result_line,
    make_result_line,
    read_results,
)
from judgekit.secrets import Redactor
from judgekit.transcript import RunRecord, Transcript
from judgekit.verdict import CheckResult, Grade, Trust, Verdict

if TYPE_CHECKING:
    from judgekit.cases import Case
    from judgekit.caseset import CaseSet
    from judgekit.graders.grounding import GroundingMode
    from judgekit.graders.layered import GivenChecks, LayeredGrader
    from judgekit.graders.rubric import RubricGrader
    from judgekit.provenance import Provenance

__all__ = [
    "LayeredTrialGrader",
    "OutputState",
    "PlannedTrial",
    "Progress",
    "RunPlan",
    "RunSummary",
    "case_ref",
    "check_retry_errors",
    "ended_in_error",
    "judge_record",
    "new_run_id",
    "parse_transcript_line",
    "plan_trials",
    "prepare_output",
    "run_trials",
]


# --------------------------------------------------------------------------- types


@dataclass(frozen=True)
class PlannedTrial:
    """A trial to grade and where it came from.

    Attributes:
        case: The case it ran.
        transcript: The transcript.
        source: File, line and hash of the transcript line.
    """

    case: Case
    transcript: Transcript
    source: TrialSource

    @property
    def key(self) -> tuple[str, int]:
        """``(case id, trial)``."""
        return (self.transcript.case_id, self.transcript.trial)


@dataclass
class RunPlan:
    """The trials of a run and the input problems found while planning it.

    Attributes:
        trials: Trials to grade, in input order.
        problems: Lines left out: not a transcript, a case not in the set, a repeated trial.
        held_out: Trials of holdout cases that were not named, in input order: left out of
            :attr:`trials` (they are not problems; a caller says they were left out).
        holdouts: Ids of the holdout cases named for this run (their trials are in :attr:`trials`);
            :func:`run_trials` records them in every line's ``grading["holdouts"]``.
    """

    trials: list[PlannedTrial] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    held_out: list[PlannedTrial] = field(default_factory=list)
    holdouts: tuple[str, ...] = ()


class Progress(Protocol):
    """Receives progress events (the command line draws a progress bar from them)."""

    def start(self, total: int, already_done: int) -> None:
        """The run starts: ``total`` trials planned, ``already_done`` of them finished earlier."""
        ...

    def advance(self, line: ResultLine, cost_so_far: float) -> None:
        """One trial finished and its line was written."""
        ...

    def finish(self) -> None:
        """The run ended (normally or not)."""
        ...


@dataclass
class OutputState:
    """The results file before grading starts.

    Attributes:
        run_id: The run id to write (kept from the file when resuming).
        done: Keys of trials already graded (not graded again).
        dropped_line: 1-based number of a truncated last line that was cut off, if any.
        resumed: True when an existing file is being continued.
        retry: Keys of planned trials whose line ended in error (:func:`ended_in_error`) and that are
            graded again (``--retry-errors``); they are not in :attr:`done`. :func:`run_trials` removes
            their lines from the file before appending the new ones. Empty without ``--retry-errors``.
        errors_not_planned: Lines that ended in error but whose trial is not in this run's transcripts:
            kept as they are (there is nothing to grade them from); 0 without ``--retry-errors``.
    """

    run_id: str
    done: set[tuple[str, int]] = field(default_factory=set)
    dropped_line: int | None = None
    resumed: bool = False
    retry: set[tuple[str, int]] = field(default_factory=set)
    errors_not_planned: int = 0


@dataclass
class RunSummary:
    """What a run did.

    Attributes:
        run_id: The run id.
        planned: Trials planned (after input problems).
        skipped_done: Trials not graded because a line already existed (resume).
        graded: Trials graded by this invocation (the retried ones included).
        verdicts: This invocation's trials by verdict state.
        grader_errors: Trials whose grader raised (counted in ``verdicts[error]`` too).
        untrusted_verdicts: Checks of this invocation's trials whose verdict counted although their judge
            is untrusted (only under ``--untrusted count`` or ``fail_only``).
        untrusted_checks: Checks of this invocation's trials that rest on an untrusted judge, whether the
            policy counted them or not (0: every judge verdict was trusted, or no judge ran).
        cost_usd: Judge cost of this invocation's trials whose cost is known, in US dollars (a partial
            total when ``unpriced_trials`` > 0: say so, never show it alone).
        unpriced_trials: Trials of this invocation whose judge cost is unknown (an unpriced model).
        cost_unknown_reason: Why, from the first such trial; ``None`` when every cost is known.
        seconds: Wall time of the grading phase.
        problems: Input problems from planning.
        dropped_line: A truncated last line cut off before resuming.
        retried: Trials graded again because their line ended in error (``--retry-errors``); counted in
            ``graded`` too.
    """

    run_id: str
    planned: int
    skipped_done: int
    graded: int
    verdicts: dict[Verdict, int]
    grader_errors: int
    cost_usd: float
    untrusted_verdicts: int
    seconds: float
    problems: list[Problem]
    dropped_line: int | None = None
    unpriced_trials: int = 0
    cost_unknown_reason: str | None = None
    retried: int = 0
    untrusted_checks: int = 0


# --------------------------------------------------------------------------- planning


def new_run_id() -> str:
    """A fresh run id: UTC time and a random suffix (``20261129T195000Z-3fa2c1``)."""
    return f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}"


def case_ref(case: Case) -> CaseRef:
    """The :class:`~judgekit.results.CaseRef` recorded for a case."""
    return CaseRef(
        id=case.id,
        version=case.version,
        slice=case.slice_name,
        category=case.category,
        severity=case.severity,
        policy_refs=case.policy_refs,
    )


def plan_trials(
    case_set: CaseSet,
    transcript_files: str | PathLike[str] | Sequence[str | PathLike[str]],
    *,
    holdout: str | Sequence[str] = (),
    option: str = "--holdout",
) -> RunPlan:
    """Read transcript files and pair each trial with its case.

    Args:
        case_set: The (valid) case set; candidates are not graded.
        transcript_files: JSONL transcript files (one trial a line, see ``docs/transcripts.md``): one path
            or several, each a ``str`` or a path object, and glob patterns (``runs/*.jsonl``, ``**``
            recursive) expanded in order.
        holdout: Ids of the holdout cases to grade too (:func:`judgekit.caseset.select_cases`); the trials
            of every other holdout case go to :attr:`RunPlan.held_out`, not :attr:`RunPlan.trials`.
        option: How the caller's user spells ``holdout`` (for the error message).

    Returns:
        The plan. Problems (each ``file:line``): a line that is not a valid transcript, a case id not in
        the set, a ``(case, trial)`` already seen (the first is kept).

    Raises:
        JudgekitError: When a ``holdout`` name is not a holdout case of the set (exit code 2), a
            transcript file cannot be read, a file is missing or a pattern matches nothing (exit code 2),
            or a line is a raw OpenAI chat or Anthropic messages conversation rather than a transcript
            (exit code 2; the message gives the ``judgekit import`` command to run). Nothing is graded or
            written then.
    """
    from judgekit.caseset import select_cases
    from judgekit.io.paths import expand_input_paths

    selection = select_cases(case_set, holdout, option=option)
    given = [transcript_files] if isinstance(transcript_files, str | PathLike) else list(transcript_files)
    files = expand_input_paths(given, what="transcript file")
    cases = {case.id: case for case in selection.cases}
    held_out = {
        loaded.case.id: loaded.case for loaded in case_set.reviewed() if loaded.case.id in selection.left_out
    }
    candidates = {loaded.case.id for loaded in case_set.candidates()}
    ids = [loaded.case.id for loaded in case_set.reviewed()]  # a did-you-mean names a gradable case
    plan = RunPlan(holdouts=selection.named)
    seen: dict[tuple[str, int], str] = {}
    for path in files:
        try:
            from judgekit.io.documents import open_regular

            handle = open_regular(path, "results file")
        except OSError as exc:
            raise JudgekitError(f"{path}: cannot read transcripts: {exc.strerror}") from None
        with handle:
            for number, raw, _ in iter_lines(handle):
                if raw is None:
                    plan.problems.append(line_too_long(path, number))
                    continue
                if not raw.strip():
                    continue
                transcript = _parse_transcript(path, number, raw, plan.problems)
                if transcript is None:
                    continue
                case = cases.get(transcript.case_id) or held_out.get(transcript.case_id)
                if case is None:
                    why = (
                        "is a candidate (unreviewed) and is not graded"
                        if transcript.case_id in candidates
                        else f"is not in the case set ({case_set.root})"
                    )
                    hint = "" if transcript.case_id in candidates else did_you_mean(transcript.case_id, ids)
                    plan.problems.append(
                        Problem(
                            path,
                            number,
                            "case_id",
                            f"case '{transcript.case_id}' {why}; trial {transcript.trial} left out{hint}",
                        )
                    )
                    continue
                key = (transcript.case_id, transcript.trial)
                where = f"{path}:{number}"
                if key in seen:
                    plan.problems.append(
                        Problem(
                            path,
                            number,
                            "trial",
                            f"case '{key[0]}' trial {key[1]} already read at {seen[key]}; this one is left "
                            "out (number trials uniquely per case)",
                        )
                    )
                    continue
                seen[key] = where
                digest = hashlib.sha256(raw.rstrip(b"\r\n")).hexdigest()
                planned = PlannedTrial(
                    case, transcript, TrialSource(file=str(path), line=number, sha256=digest)
                )
                (plan.held_out if case.id in held_out else plan.trials).append(planned)
    return plan


_CHAT_ONLY_KEYS = frozenset(
    {"tools", "model", "system", "tool_choice", "parallel_tool_calls", "temperature", "max_tokens", "top_p"}
)
"""Top-level keys of a chat request or export that a judgekit transcript does not have."""


def _foreign_conversation(path: Path, number: int, data: Any) -> JudgekitError | None:
    """The refusal for a raw OpenAI chat or Anthropic conversation, naming its import command; or ``None``.

    Only a line that failed as a transcript is asked: an object with a ``messages`` list that either has
    no ``case_id`` or carries keys only a chat request has (``tools``, ``model``, ``system``...), in a
    shape :func:`judgekit.formats.adapters.detect_format` recognises.
    """
    import shlex

    from judgekit.formats.adapters import detect_format

    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        return None
    if "case_id" in data and not (set(data) & _CHAT_ONLY_KEYS):
        return None
    try:
        fmt = detect_format(data)
    except JudgekitError:
        return None
    name, command = ("Anthropic messages", "anthropic") if fmt == "anthropic" else ("OpenAI chat", "openai")
    target = path.with_name(f"{path.stem}.transcripts.jsonl")
    metadata = data.get("metadata")
    has_id = "case_id" in data or (isinstance(metadata, dict) and "case_id" in metadata)
    field_hint = "" if has_id else " --case-id-field FIELD"
    why = "" if has_id else " (no case_id on the line: name the field that holds it)"
    source, out = shlex.quote(str(path)), shlex.quote(str(target))
    return JudgekitError(
        f"{path}:{number}: this line is an {name} conversation, not a judgekit transcript "
        f"(docs/transcripts.md); import the file first{why}: judgekit import {command} {source} --out {out}"
        f"{field_hint}, then grade --transcripts {out}",
        exit_code=2,
    )


def parse_transcript_line(
    path: str | os.PathLike[str], number: int, raw: bytes, problems: list[Problem]
) -> Transcript | None:
    """Parse one transcript line exactly as :func:`plan_trials` does, for graders that read lines elsewhere.

    Args:
        path: The file the line came from (named in problems), as text or a path object.
        number: The line's 1-based number in that file.
        raw: The line's bytes.
        problems: Receives the located problem when the line is not a transcript.

    Returns:
        The transcript, or ``None`` when the line is malformed JSON or not a valid transcript (the
        problem, with the same message ``plan_trials`` gives, was appended to ``problems``).

    Raises:
        JudgekitError: When the line is a raw OpenAI chat or Anthropic conversation (exit code 2; the
            message gives the ``judgekit import`` command to run).
    """
    return _parse_transcript(Path(path), number, raw, problems)


def _parse_transcript(path: Path, number: int, raw: bytes, problems: list[Problem]) -> Transcript | None:
    # The shared bounded reader (limits on hostile input, repeated keys refused), then the schema.
    try:
        data = load_json_bounded(raw, source=path, line=number)
    except LocatedError as json_exc:
        message = json_exc.problem.message
        if message.startswith(("malformed JSON: ", "not valid UTF-8")):
            message = f"malformed JSON ({json_error_detail(message)})"
        problems.append(Problem(path, number, "", f"{message}; line left out"))
        return None
    try:
        return Transcript.model_validate(data)
    except ValidationError as exc:
        refusal = _foreign_conversation(path, number, data)
        if refusal is not None:
            raise refusal from None
        err = exc.errors(include_url=False)[0]
        loc = ".".join(str(p) for p in err["loc"])
        msg = str(err["msg"]).removeprefix("Value error, ")
        problems.append(Problem(path, number, loc, f"{msg}; line left out"))
        return None


# --------------------------------------------------------------------------- output file


def check_retry_errors(*, resume: bool, retry_errors: bool) -> None:
    """Refuse ``retry_errors`` without ``resume``: there is no earlier run whose error lines to grade again.

    :func:`prepare_output` checks it; the command line checks it first too, before setting up a judge.

    Raises:
        JudgekitError: (exit code 2) When ``retry_errors`` is given without ``resume``.
    """
    if retry_errors and not resume:
        raise JudgekitError(
            "--retry-errors re-grades the trials of an existing run whose line ended in error: give --resume "
            "too (with the same --out)",
            exit_code=2,
        )


def prepare_output(
    out: str | os.PathLike[str],
    plan: RunPlan,
    *,
    resume: bool,
    judge_fingerprint: Mapping[str, JsonValue] | None,
    grader: GraderSpec | None = None,
    retry_errors: bool = False,
) -> OutputState:
    """Check the results file and decide what is left to grade.

    Args:
        out: The results file, as text or a path object; its folder is created when missing.
        plan: The planned trials.
        resume: Continue an existing file.
        judge_fingerprint: The fingerprint of this run's judge layer.
        grader: This run's grader spec; a line graded by a grader with another fingerprint (another
            contract version, untrusted policy, grounding mode or judge) cannot be resumed. Lines that
            recorded no grader are compared by judge fingerprint only.
        retry_errors: With ``resume``, grade again the planned trials whose line ended in error
            (:func:`ended_in_error`); they go to :attr:`OutputState.retry` instead of
            :attr:`OutputState.done`. Refused without ``resume`` (:func:`check_retry_errors`).

    Returns:
        The run id, the finished trials and the trials to retry.

    Raises:
        JudgekitError: When ``retry_errors`` is given without ``resume`` or ``out`` is a folder (exit code
            2); when ``out`` exists and is not empty without
            ``resume``; when resuming a file with lines judgekit cannot read (another schema version,
            malformed lines), or graded differently (other case versions, another judge fingerprint,
            changed transcripts), naming what differs.
    """
    check_retry_errors(resume=resume, retry_errors=retry_errors)
    out = Path(out)
    if out.is_dir():
        raise JudgekitError(
            f"--out {out} is a folder; --out takes the results file to write (JSONL), for example "
            f"--out {out / 'results.jsonl'}",
            exit_code=2,
        )
    exists = out.exists() and out.stat().st_size > 0
    make_parent_folder(out)  # --out results/run.jsonl in a fresh clone: made here, before any grading
    if not resume:
        if exists:
            raise JudgekitError(
                f"{out} already holds results; pass --resume to continue that run, or choose another --out"
            )
        return OutputState(run_id=new_run_id())
    if not exists:
        return OutputState(run_id=new_run_id())
    repaired = repair_tail(out)
    results = read_results(out)
    if results.problems:
        listed = "\n  ".join(str(p) for p in results.problems[:10])
        raise JudgekitError(
            f"cannot resume {out}: it has lines this judgekit cannot continue:\n  {listed}\n"
            "Fix or remove those lines, or start a new run with another --out."
        )
    run_ids = results.run_ids
    if len(run_ids) > 1:
        raise JudgekitError(
            f"cannot resume {out}: it holds several runs ({', '.join(run_ids)}); use a new --out"
        )
    planned = {t.key: t for t in plan.trials}
    differences: list[str] = []
    wanted_fp = dict(judge_fingerprint) if judge_fingerprint is not None else None
    for line in results.lines:
        trial = planned.get(line.key)
        if trial is None:
            continue
        if line.case.version != trial.case.version:
            differences.append(
                f"case '{line.case.id}': graded at version {line.case.version}, the set now has "
                f"version {trial.case.version}"
            )
        if line.judge_fingerprint != wanted_fp:
            differences.append(
                f"case '{line.case.id}' trial {line.trial}: graded by another judge fingerprint "
                f"({_fp_label(line.judge_fingerprint)} vs {_fp_label(wanted_fp)} now)"
            )
        recorded = line.grader.get("fingerprint") if line.grader is not None else None
        if grader is not None and recorded is not None and recorded != grader.fingerprint:
            differences.append(
                f"case '{line.case.id}' trial {line.trial}: graded by another grader (fingerprint "
                f"{str(recorded)[:12]} vs {grader.fingerprint[:12]} now: a changed contract version, "
                "untrusted policy, grounding mode or judge)"
            )
        if line.source is not None and line.source.sha256 != trial.source.sha256:
            differences.append(
                f"case '{line.case.id}' trial {line.trial}: the transcript changed since it was graded "
                f"({trial.source.file}:{trial.source.line})"
            )
        if len(differences) >= 10:
            break
    if differences:
        raise JudgekitError(
            f"cannot resume {out}: it was graded differently from this run:\n  "
            + "\n  ".join(differences)
            + "\nStart a new run with another --out (resuming would mix two measurements)."
        )
    done = results.keys()
    retry: set[tuple[str, int]] = set()
    errors_not_planned = 0
    if retry_errors:
        for line in results.lines:
            if ended_in_error(line):
                if line.key in planned:
                    retry.add(line.key)
                else:
                    errors_not_planned += 1
    return OutputState(
        run_id=run_ids[0] if run_ids else new_run_id(),
        done=done - retry,
        dropped_line=repaired.line,
        resumed=True,
        retry=retry,
        errors_not_planned=errors_not_planned,
    )


def ended_in_error(line: ResultLine | FastResultLine) -> bool:
    """Whether a trial's line ended in error: what ``grade --resume --retry-errors`` grades again.

    A line ended in error when its case verdict is ``error`` or any of its checks is ``error``: something
    could not run (the judge was unreachable or answered what could not be parsed, the grader raised, a
    state could not be read). A judge criterion that could not run does not always make the case verdict
    ``error``: an undecided expectation makes it ``insufficient_information`` or ``not_evaluated``, and a
    failed gate makes it ``fail`` with its quality unscored; those trials are incomplete too, and are
    retried. A judge that answered "the evidence does not decide" (``insufficient_information``) or a
    layer skipped on purpose (``not_evaluated``) is an answer, not an error, and is not retried.

    Args:
        line: A result line (either decoding of it).

    Returns:
        True when the line, or one of its checks, has the verdict ``error``.
    """
    return line.verdict is Verdict.ERROR or any(check.verdict is Verdict.ERROR for check in line.checks)


@contextlib.contextmanager
def _without_lines(out: Path, drop: set[tuple[str, int]], *, fsync: bool) -> Iterator[None]:
    """Rewrite the results file without the error lines of ``drop``, holding its lock until the exit.

    The file is locked (as :class:`~judgekit.io.atomic.LineAppender` does, so a run writing it is refused
    and nothing is changed), copied line by line into a temporary file in the same folder without the
    lines of ``drop`` that ended in error, the copy flushed to disk, then renamed over the file (a symlink
    is followed: its target is replaced and the link stays). The old file's lock is held until the
    context exits, so that no process that opened the old file can append to it, unseen, meanwhile.
    Copies a killed rewrite left behind (``.NAME.*.tmp`` beside the file) are removed first.

    Raises:
        JudgekitError: When another process holds the file's lock, or the copy cannot be written.
    """
    import fcntl
    import glob
    import tempfile

    from judgekit.io.atomic import output_target

    target = output_target(out)
    try:
        fd = os.open(target, os.O_RDONLY)
    except OSError as exc:
        raise JudgekitError(f"{out}: cannot read results: {exc.strerror}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise JudgekitError(
                f"{out}: another process is writing this file; wait for it to finish or choose another --out"
            ) from None
        mode = os.fstat(fd).st_mode & 0o7777
        # a copy a killed rewrite left (before its rename): no other process rewrites this file while we
        # hold its lock, so every such copy is stale
        for stale in target.parent.glob(f".{glob.escape(target.name)}.*.tmp"):
            with contextlib.suppress(OSError):
                stale.unlink()
        try:
            tmp_fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        except OSError as exc:
            raise JudgekitError(f"{out}: cannot rewrite the results file: {exc.strerror}") from None
        try:
            os.fchmod(tmp_fd, mode)
            os.close(tmp_fd)
            with os.fdopen(os.dup(fd), "rb") as source, LineAppender(tmp_name, fsync=False) as copy:
                for number, raw, _ in iter_lines(source):
                    if raw is None:  # prepare_output refuses such a file: it changed since
                        raise JudgekitError(
                            f"{out}:{number}: the results file changed while the run started (a line over "
                            "the size limit appeared); nothing was rewritten: run the command again"
                        )
                    if not raw.strip():
                        continue
                    if _dropped(raw, drop):
                        continue
                    copy.write_line(raw)
            # LineAppender's exit flushed the copy to disk
            os.replace(tmp_name, target)
            if fsync:
                fsync_folder(target.parent)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
            raise
        yield
    finally:
        os.close(fd)


def _dropped(raw: bytes, drop: set[tuple[str, int]]) -> bool:
    """Whether a line is the error line of a trial in ``drop`` (a line that is not a result line is kept)."""
    line: ResultLine | FastResultLine | None = fast_result_line(raw)
    if line is None:
        try:
            line = ResultLine.model_validate_json(raw)
        except ValidationError:
            return False
    return line.key in drop and ended_in_error(line)


def judge_record(spec: GraderSpec) -> dict[str, JsonValue] | None:
    """The judge part of a grader's spec, as result lines record it (``{"hex", "label", "spec"}``).

    Returns:
        The arguments of the first ``rubric`` part found depth-first, or ``None`` when the grader has no
        judge layer.
    """
    if spec.name == "rubric":
        return dict(spec.args)
    for part in spec.parts:
        found = judge_record(part)
        if found is not None:
            return found
    return None


def _fp_label(fp: Mapping[str, Any] | None) -> str:
    """``judge`` and the short fingerprint judgekit prints everywhere (the first 12 characters of ``hex``)."""
    if fp is None:
        return "no judge"
    hex_ = fp.get("hex")
    if isinstance(hex_, str) and hex_:
        return f"judge {hex_[:12]}"  # a prefix `judgekit judge trust` and `calibrate --fingerprint` accept
    text = json.dumps(fp, sort_keys=True, default=str)  # a record without its hex: a digest of it, to compare
    return "judge " + hashlib.sha256(text.encode()).hexdigest()[:12]


# --------------------------------------------------------------------------- grading


def _error_grade(trial: PlannedTrial, exc: BaseException) -> Grade:
    reason = f"the grader raised {type(exc).__name__}: {exc}"
    check = CheckResult(check_id="runner", layer="runner", verdict=Verdict.ERROR, reason=reason[:2000])
    return Grade(case_id=trial.case.id, trial=trial.transcript.trial, verdict=Verdict.ERROR, checks=(check,))


async def run_trials(
    plan: RunPlan,
    grader: Grader,
    *,
    out: str | os.PathLike[str],
    state: OutputState,
    concurrency: int = 8,
    grading: Mapping[str, JsonValue] | None = None,
    redactor: Redactor | None = None,
    progress: Progress | None = None,
    fsync: bool = False,
    clock: Callable[[], float] = time.perf_counter,
    provenance: Provenance | None = None,
) -> RunSummary:
    """Grade every planned trial that has no line yet, appending one line per trial as it finishes.

    The trials of ``state.retry`` (``--retry-errors``) are graded again: their error lines are removed
    from the file (an atomic rewrite under the file's lock) before the first new line is appended.

    Args:
        plan: The trials.
        grader: The grader.
        out: The results file (appended to), as text or a path object.
        state: From :func:`prepare_output`: the run id and the finished trials.
        concurrency: Trials graded at once (>= 1).
        grading: judgekit's configuration for the run, recorded in every line (secrets removed).
        redactor: Removes secrets from every line before it is written (a default shape-based one when
            ``None``).
        progress: Receives progress events.
        fsync: Force every line to disk (protects against power loss too; slower).
        clock: Time source (for tests).
        provenance: The run's provenance (:func:`judgekit.provenance.collect_provenance`), recorded in
            every line; ``None`` leaves it out.

    Returns:
        What this invocation did.

    Raises:
        JudgekitError: When ``concurrency`` is below 1, the output cannot be written, or another process
            is writing it.
    """
    out = Path(out)
    if concurrency < 1:
        raise JudgekitError(f"--concurrency must be at least 1, got {concurrency}")
    redactor = redactor or Redactor()
    todo = [t for t in plan.trials if t.key not in state.done]
    skipped = len(plan.trials) - len(todo)
    verdicts = dict.fromkeys(Verdict, 0)
    errors = 0
    spec = grader.spec
    fp_data = judge_record(spec)
    grader_data = spec.record()
    grading_data = dict(grading or {})
    if plan.holdouts:  # a run that used holdouts says so in every line (judgekit report reads it)
        from judgekit.caseset import HOLDOUT_GRADING_KEY

        grading_data.setdefault(HOLDOUT_GRADING_KEY, list(plan.holdouts))
    spent = 0.0
    unpriced = 0
    unknown_reason: str | None = None
    untrusted_count = untrusted_checks = 0
    started = clock()
    if progress is not None:
        progress.start(len(plan.trials), skipped)
    queue: asyncio.Queue[PlannedTrial] = asyncio.Queue()
    for trial in todo:
        queue.put_nowait(trial)

    try:
        with contextlib.ExitStack() as files:
            if state.retry:
                files.enter_context(_without_lines(out, state.retry, fsync=fsync))
            appender = files.enter_context(LineAppender(out, fsync=fsync))

            async def worker() -> None:
                nonlocal errors, spent, untrusted_count, untrusted_checks, unpriced, unknown_reason
                while True:
                    try:
                        trial = queue.get_nowait()
                    except asyncio.QueueEmpty:
                        return
                    t0 = clock()
                    try:
                        grade = await grader.grade(trial.case, trial.transcript)
                    except asyncio.CancelledError:
                        raise
                    except Exception as exc:
                        grade = _error_grade(trial, exc)
                        errors += 1
                    line = make_result_line(
                        run_id=state.run_id,
                        case=case_ref(trial.case),
                        grade=grade,
                        run=trial.transcript.run or RunRecord(),
                        judge_fingerprint=fp_data,
                        grader=grader_data,
                        grading=grading_data,
                        source=trial.source,
                        duration_s=round(clock() - t0, 6),
                        provenance=provenance,
                    )
                    appender.write_line(dump_result_line(line, redactor))
                    verdicts[line.verdict] += 1
                    spent += line.cost_usd or 0.0
                    if line.cost_usd is None and line.cost_unknown_reason is not None:
                        unpriced += 1
                        unknown_reason = unknown_reason or line.cost_unknown_reason
                    untrusted_count += line.untrusted_verdicts
                    untrusted_checks += sum(1 for check in line.checks if check.trust is Trust.UNTRUSTED)
                    if progress is not None:
                        progress.advance(line, spent)

            workers = [asyncio.create_task(worker()) for _ in range(min(concurrency, max(1, len(todo))))]
            try:
                await asyncio.gather(*workers)
            except BaseException:
                for w in workers:
                    w.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
                raise
    finally:
        if progress is not None:
            progress.finish()
    return RunSummary(
        run_id=state.run_id,
        planned=len(plan.trials),
        skipped_done=skipped,
        graded=sum(verdicts.values()),
        verdicts=verdicts,
        grader_errors=errors,
        cost_usd=spent,
        untrusted_verdicts=untrusted_count,
        untrusted_checks=untrusted_checks,
        seconds=clock() - started,
        problems=plan.problems,
        dropped_line=state.dropped_line,
        unpriced_trials=unpriced,
        cost_unknown_reason=unknown_reason,
        retried=sum(1 for t in todo if t.key in state.retry),
    )


# --------------------------------------------------------------------------- the layered grader


class LayeredTrialGrader:
    """The runner's grader: a :class:`~judgekit.graders.layered.LayeredGrader` per transcript folder.

    A :class:`~judgekit.graders.contract.Grader` for :func:`run_trials`. Every trial goes through the one
    layered grader (deterministic layers, the judge layer when one is configured, lossy-trace restriction,
    :func:`~judgekit.graders.layered.combine`). What this adds for the runner: states in a transcript
    resolve against that transcript file's folder, and the deterministic layers run in one worker thread
    concurrently with the judge's HTTP calls.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        rubric_grader: RubricGrader | None,
        untrusted: UntrustedPolicy = "withhold",
        grounding: GroundingMode | None = None,
    ) -> None:
        root = Path(root)
        from concurrent.futures import ThreadPoolExecutor

        from judgekit.graders.layered import LayeredGrader
        from judgekit.state.provider import StateProvider

        self.rubric_grader = rubric_grader
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="judgekit-deterministic")
        self._root = LayeredGrader(
            states=StateProvider(root),
            rubric=rubric_grader,
            untrusted=untrusted,
            grounding=grounding,
            executor=self._executor,
        )
        self._graders: dict[Path, LayeredGrader] = {}
        self._sources: dict[tuple[str, int], Path] = {}

    def set_sources(self, sources: dict[tuple[str, int], Path]) -> None:
        """Tell the grader which transcript file each trial came from (its states resolve against it)."""
        self._sources = sources

    @property
    def spec(self) -> GraderSpec:
        """The layered grader's spec (the same for every transcript folder)."""
        return self._root.spec

    @property
    def judge_fingerprint(self) -> dict[str, JsonValue] | None:
        """The judge layer's fingerprint record (hex, label and spec), or ``None`` without a judge layer."""
        return judge_record(self.spec)

    def _grader(self, transcript: Transcript) -> LayeredGrader:
        from judgekit.graders.layered import LayeredGrader

        folder = self._sources.get((transcript.case_id, transcript.trial))
        if folder is None:
            return self._root
        grader = self._graders.get(folder)
        if grader is None:
            root = self._root
            grader = self._graders[folder] = LayeredGrader(
                states=root.states.for_transcripts(folder),
                rubric=root.rubric,
                untrusted=root.untrusted,
                grounding=root.grounding,
                executor=root.executor,
                given_checks=root.given_checks,
            )
        return grader

    def deterministic_checks(self, case: Case, transcript: Transcript) -> list[CheckResult]:
        """The deterministic layers' checks of one trial, its states resolved as :meth:`grade` resolves them.

        What a Ray worker computes for ``judgekit grade --ray`` (:meth:`give_checks` on the driver).

        Raises:
            Exception: Whatever a deterministic layer raised (:meth:`grade` makes it an ``error`` trial).
        """
        return self._grader(transcript).checks(case, transcript)

    def give_checks(self, given: GivenChecks) -> None:
        """Use deterministic checks computed elsewhere: :meth:`grade` runs only the judge and the combination.

        Args:
            given: By trial key, the checks (or the exception raised) computed for that trial, as
                :meth:`deterministic_checks` computes them; a trial not in it is checked here.
        """
        self._root.given_checks = given
        for grader in self._graders.values():
            grader.given_checks = given

    async def grade(self, case: Case, transcript: Transcript) -> Grade:
        """Grade one trial on every layer."""
        return await self._grader(transcript).grade(case, transcript)

    def close(self) -> None:
        """Stop the worker thread."""
        self._executor.shutdown(wait=False, cancel_futures=True)
