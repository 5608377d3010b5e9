"""Inspect AI samples and logs: the one conversion to transcripts, scores from grades, scores written back.

Inspect keeps a sample's conversation in two shapes: a live :class:`~inspect_ai.solver.TaskState` while a
scorer runs (:mod:`judgekit.integrations.inspect`) and an :class:`~inspect_ai.log.EvalSample` in a log
written by ``inspect eval``. Both carry the same messages, store, metadata and epoch, and
:func:`inspect_transcript` turns them into one judgekit :class:`~judgekit.transcript.Transcript` the same
way:

* system, user and assistant messages keep their text; an assistant's tool calls keep id, name and
  arguments; a tool result keeps its call id, tool name and text, and a tool error is recorded as a result
  starting ``Error:``;
* the trial is the epoch (1-based, as in Inspect);
* the world states come from the store keys :data:`INITIAL_STATE_KEY` and :data:`FINAL_STATE_KEY`
  (inline ``{table: {key: row}}`` data or a path), else from the metadata fields ``initial_state`` and
  ``final_state`` (or the fields named).

:func:`read_inspect_logs` reads ``.eval`` and ``.json`` logs through inspect_ai's own log API only
(:func:`inspect_ai.log.read_eval_log`) and imports every sample, each with a
:class:`~judgekit.fidelity.FidelityReport` saying what the log did not record; a sample it cannot map is a
:class:`~judgekit.errors.Problem` located by log file, sample id and epoch, and a log it cannot read
(malformed, truncated, missing) is refused whole with a :class:`~judgekit.errors.JudgekitError`.

:func:`score_from_grade` maps a judgekit grade to an Inspect score (the mapping
:func:`judgekit.integrations.inspect.judgekit_scorer` gives), and :func:`write_scores` writes graded
verdicts as scores on a copy of each log (:func:`inspect_ai.log.edit_score`, then
:func:`inspect_ai.log.write_eval_log`), never touching the original.

Needs the ``inspect`` extra: ``pip install 'judgekit-agents[inspect]'``.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgekit.cases import CASE_ID_RULE, is_case_id
from judgekit.errors import JudgekitError, Problem, require_extra

require_extra("inspect_ai", "inspect")

from inspect_ai.log import (  # noqa: E402
    EvalLog,
    EvalSample,
    ProvenanceData,
    edit_score,
    read_eval_log,
    recompute_metrics,
    write_eval_log,
)
from inspect_ai.model import (  # noqa: E402
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
)
from inspect_ai.scorer import CORRECT, INCORRECT, Score, ScoreEdit  # noqa: E402
from inspect_ai.util import Store  # noqa: E402

from judgekit.fidelity import FidelityIssue, FidelityReport  # noqa: E402
from judgekit.formats.adapters import openai_chat_transcript  # noqa: E402
from judgekit.results import ResultLine  # noqa: E402
from judgekit.transcript import Transcript  # noqa: E402
from judgekit.verdict import Grade, Verdict, count_verdicts, effective_verdict  # noqa: E402

__all__ = [
    "FINAL_STATE_KEY",
    "INITIAL_STATE_KEY",
    "ImportedSample",
    "InspectLogImport",
    "SampleRef",
    "ScoresWritten",
    "grade_of_result",
    "inspect_transcript",
    "log_files",
    "read_inspect_logs",
    "score_from_grade",
    "write_scores",
]

INITIAL_STATE_KEY = "judgekit:initial_state"
"""Store key of the world before the conversation (inline ``{table: {key: row}}`` data or a path)."""

FINAL_STATE_KEY = "judgekit:final_state"
"""Store key of the world after the conversation (inline data or a path)."""

SOURCE_KEY = "inspect"
"""Key of ``transcript.metadata`` holding where an imported transcript came from (log, sample, epoch)."""


# --------------------------------------------------------------------------- messages


def _message_dict(message: ChatMessage) -> dict[str, Any]:
    if isinstance(message, ChatMessageSystem):
        return {"role": "system", "content": message.text}
    if isinstance(message, ChatMessageAssistant):
        out: dict[str, Any] = {"role": "assistant", "content": message.text or None}
        if message.tool_calls:
            out["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.function, "arguments": call.arguments},
                }
                for call in message.tool_calls
            ]
        return out
    if isinstance(message, ChatMessageTool):
        text = message.text
        if message.error is not None:
            text = f"Error: {message.error.message}" + (f"\n{text}" if text else "")
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id,
            "name": message.function,
            "content": text,
        }
    return {"role": "user", "content": message.text}


def _states(
    store: Mapping[str, Any] | Store, metadata: Mapping[str, Any], initial_field: str, final_field: str
) -> dict[str, Any]:
    """The world states a sample recorded: the store's judgekit keys, else the metadata fields named."""
    states: dict[str, Any] = {}
    for name, key, meta in (
        ("initial_state", INITIAL_STATE_KEY, initial_field),
        ("final_state", FINAL_STATE_KEY, final_field),
    ):
        value = store.get(key)
        if value is None:
            value = metadata.get(meta)
        if value is not None:
            states[name] = value
    return states


def inspect_transcript(
    messages: Sequence[ChatMessage],
    *,
    case_id: str,
    epoch: int,
    sample_id: object,
    store: Mapping[str, Any] | Store,
    metadata: Mapping[str, Any],
    model: str | None,
    initial_state_field: str = "initial_state",
    final_state_field: str = "final_state",
    trial: int | None = None,
    extra_metadata: Mapping[str, Any] | None = None,
) -> Transcript:
    """The judgekit transcript of one Inspect sample, live (a task state) or logged (an eval sample).

    Args:
        messages: The sample's messages, in order.
        case_id: The judgekit case the sample belongs to.
        epoch: Inspect's epoch (1-based); the trial unless ``trial`` is given.
        sample_id: The sample's id, recorded in the metadata.
        store: The sample's store (:data:`INITIAL_STATE_KEY`, :data:`FINAL_STATE_KEY`).
        metadata: The sample's metadata (the state fields when the store has no state).
        model: The model that played the agent, or ``None`` when unknown.
        initial_state_field: Metadata field of the world before, when the store has none.
        final_state_field: Metadata field of the world after, when the store has none.
        trial: The trial number (``>= 1``) when it is not the epoch.
        extra_metadata: More transcript metadata (where a logged sample came from, its fidelity).

    Raises:
        JudgekitError: When the messages do not form a valid transcript.
    """
    return openai_chat_transcript(
        [_message_dict(m) for m in messages],
        case_id=case_id,
        trial=trial if trial is not None else max(1, int(epoch)),
        agent_model=model,
        metadata={"source_format": "inspect", "sample_id": str(sample_id), **(extra_metadata or {})},
        **_states(store, metadata, initial_state_field, final_state_field),
    )


# --------------------------------------------------------------------------- scores


def _unscored_reason(grade: Grade) -> str:
    if grade.verdict is Verdict.ERROR:
        errored = [c for c in grade.checks if c.verdict is Verdict.ERROR and c.gate]
        return "grader_failed" if errored and all(c.layer == "rubric" for c in errored) else "scoring_failed"
    return grade.verdict.value


def score_from_grade(grade: Grade, *, answer: str | None = None) -> Score:
    """Map a judgekit grade to an Inspect score (see :mod:`judgekit.integrations.inspect` for the mapping).

    Args:
        grade: The grade.
        answer: The answer to record (the agent's final message).

    Returns:
        ``CORRECT`` for pass, ``INCORRECT`` for fail, otherwise an unscored score with its reason.
    """
    metadata: dict[str, Any] = {
        "judgekit_verdict": grade.verdict.value,
        "quality": grade.quality,
        "case_id": grade.case_id,
        "trial": grade.trial,
        "gate_counts": grade.metadata.get("gate_counts"),
        "checks": [
            {
                "check_id": c.check_id,
                "layer": c.layer,
                "verdict": c.verdict.value,
                "gate": c.gate,
                "reason": c.reason,
                "category": c.category.value if c.category else None,
                "trust": c.trust.value,
                "score": c.score,
            }
            for c in grade.checks
        ],
    }
    if "judge" in grade.metadata:
        metadata["judge"] = grade.metadata["judge"]
    metadata = json.loads(json.dumps(metadata, default=str))
    explanation = grade.explain()
    if grade.verdict is Verdict.PASS:
        return Score(value=CORRECT, answer=answer, explanation=explanation, metadata=metadata)
    why = grade.why()
    metadata["judgekit_reason"] = why  # the one line every judgekit report gives this trial
    if grade.verdict is Verdict.FAIL:
        return Score(value=INCORRECT, answer=answer, explanation=explanation, metadata=metadata)
    reason = _unscored_reason(grade)
    metadata["unscored_detail"] = why
    return Score.unscored(reason=reason, answer=answer, explanation=explanation, metadata=metadata)


def grade_of_result(line: ResultLine) -> Grade:
    """A results file's line as the grade judgekit's Inspect scorer would have scored.

    :meth:`~judgekit.results.ResultLine.as_grade`, with the gate counts the grading computed (each gate's
    verdict as the untrusted-judge policy the line records counted it) and, when a judge graded, the judge
    as the scorer records it (``{"fingerprint": hex, "label": label}``, from the line's judge record).
    """
    grade = line.as_grade()
    policy = line.untrusted_policy or "withhold"
    effective = [effective_verdict(c, policy) for c in line.checks if c.gate]
    metadata: dict[str, Any] = {
        **grade.metadata,
        "gate_counts": {str(k): v for k, v in count_verdicts(effective).items()},
    }
    record = line.judge_fingerprint
    if record is not None:
        metadata["judge"] = {"fingerprint": record.get("hex"), "label": record.get("label")}
    return grade.model_copy(update={"metadata": metadata})


# --------------------------------------------------------------------------- reading logs


@dataclass(frozen=True)
class SampleRef:
    """Where a sample is: its log, its id and its epoch.

    Attributes:
        log: The log file.
        sample_id: The sample's id (an ``int`` or a ``str``, as the log has it).
        epoch: Its epoch (1-based).
        uuid: Inspect's unique id of the sample run, or ``None`` when the log has none.
    """

    log: Path
    sample_id: int | str
    epoch: int
    uuid: str | None = None

    def __str__(self) -> str:
        return f"sample {self.sample_id!r} epoch {self.epoch}"

    def problem(self, message: str) -> Problem:
        """A problem located at this sample."""
        return Problem(self.log, None, str(self), message)


@dataclass(frozen=True)
class ImportedSample:
    """One sample imported.

    Attributes:
        ref: Where it came from.
        transcript: Its transcript (metadata ``inspect``: log, sample id, epoch, uuid, task, model; and
            ``fidelity``).
        fidelity: What the log did not record about it.
    """

    ref: SampleRef
    transcript: Transcript
    fidelity: FidelityReport


@dataclass
class InspectLogImport:
    """What reading Inspect logs produced.

    Attributes:
        logs: The logs read, in the order given.
        samples: The samples imported, in log order, then sample and epoch order.
        problems: The samples that could not be imported, each located by log, sample id and epoch.
        renumbered: Cases whose samples shared an epoch (several samples of one case, or one sample in
            several logs): their trials are numbered 1..n in reading order instead of by epoch.
    """

    logs: list[Path] = field(default_factory=list)
    samples: list[ImportedSample] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    renumbered: list[str] = field(default_factory=list)


def read_log(path: str | os.PathLike[str], *, header_only: bool = False, resolve: bool = True) -> EvalLog:
    """Read an Inspect log (``.eval`` or ``.json``) with inspect_ai's reader, or refuse it with its location.

    Args:
        path: The log file.
        header_only: Read the header alone (no samples), which is fast.
        resolve: Resolve the attachments (long texts Inspect stores once), so messages hold their text.

    Raises:
        JudgekitError: (exit 2) When the file is missing, is not an Inspect log, or is cut off.
    """
    log_path = Path(path)
    if not log_path.is_file():
        what = "is a folder" if log_path.is_dir() else "does not exist"
        raise JudgekitError(f"{log_path}: the Inspect log {what}; give an .eval or .json log file")
    if zipfile.is_zipfile(log_path):
        _check_members(log_path)
    try:
        return read_eval_log(str(log_path), header_only=header_only, resolve_attachments=resolve)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise JudgekitError(
            f"{log_path}: not a readable Inspect log ({type(exc).__name__}: {first}); the file is malformed "
            "or cut off (a truncated .eval zip or .json): give the complete log that inspect eval wrote"
        ) from None


def _check_members(log_path: Path) -> None:
    """Refuse an ``.eval`` zip whose members inspect_ai would read past what an honest log holds.

    A member named outside the archive (``../x``, an absolute path) is never one
    ``inspect eval`` writes, yet inspect_ai lists ``samples/../x.json`` among the samples; a member that
    inflates past :data:`MAX_MEMBER_BYTES` (a zip bomb) would be read whole into memory. Sizes are those
    the zip declares, which :mod:`zipfile` holds a member's reading to.

    Raises:
        JudgekitError: (exit 2) Naming the log and the member.
    """
    try:
        with zipfile.ZipFile(log_path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise JudgekitError(
            f"{log_path}: not a readable Inspect log ({type(exc).__name__}: {exc}); the .eval zip is "
            "malformed or cut off: give the complete log that inspect eval wrote"
        ) from None
    for member in members:
        name = member.filename
        parts = name.split("/")
        if name.startswith("/") or ".." in parts:
            raise JudgekitError(
                f"{log_path}: the .eval zip has a member named outside the archive ({name[:MAX_SHOWN]!r}), "
                "which inspect eval never writes: give the log that inspect eval wrote"
            )
        if member.file_size > MAX_MEMBER_BYTES:
            raise JudgekitError(
                f"{log_path}: the .eval zip member {name[:MAX_SHOWN]!r} inflates to {member.file_size:,} "
                f"bytes, more than the {MAX_MEMBER_BYTES:,} an Inspect log member may hold (a zip bomb or a "
                "damaged log): give the log that inspect eval wrote"
            )


def log_files(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The log files named: a file as given, a folder as every log inspect_ai lists in it (recursively).

    A log named twice (as a file and inside a folder given too) is read once, where it first appears.

    Raises:
        JudgekitError: (exit 2) When a folder holds no Inspect log.
    """
    from urllib.parse import unquote, urlparse

    from inspect_ai.log import list_eval_logs

    out: list[Path] = []
    for given in paths:
        path = Path(given)
        if not path.is_dir():
            out.append(path)
            continue
        found = sorted(Path(unquote(urlparse(info.name).path)) for info in list_eval_logs(str(path)))
        if not found:
            raise JudgekitError(f"{path}: the folder holds no Inspect log (.eval or .json); name the logs")
        out.extend(found)
    seen: set[Path] = set()
    unique: list[Path] = []
    for path in out:
        if path.resolve() not in seen:  # the first place a log is named wins
            seen.add(path.resolve())
            unique.append(path)
    return unique


MAX_MEMBER_BYTES = 1024**3
"""Largest size (bytes, 1 GiB) a member of an ``.eval`` zip may inflate to; a larger one refuses the log."""

MAX_SHOWN = 80
"""Characters of a hostile value (a case id, a member name) an error quotes; a longer one is cut."""


def _field(metadata: Mapping[str, Any], dotted: str) -> object:
    value: object = metadata
    for part in dotted.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def _fidelity(
    ref: SampleRef, sample: EvalSample, transcript: Transcript, final_state_field: str
) -> FidelityReport:
    """What the log did not record about a sample, as the OTLP importer reports it for a trace."""
    issues: list[FidelityIssue] = []
    results = {m.tool_call_id for m in sample.messages if isinstance(m, ChatMessageTool)}
    calls = [c for m in sample.messages if isinstance(m, ChatMessageAssistant) for c in m.tool_calls or []]
    missing = [c for c in calls if c.id not in results]
    for call in missing:
        issues.append(
            FidelityIssue(
                kind="tool_result_missing", detail=f"tool call {call.id} ({call.function}) has no result"
            )
        )
    unparseable = [c for c in calls if c.parse_error]
    for call in unparseable:
        issues.append(
            FidelityIssue(
                kind="arguments_unparseable",
                detail=f"tool call {call.id} ({call.function}): {call.parse_error}",
            )
        )
    for index, message in enumerate(sample.messages):
        if isinstance(message.content, list):
            parts = sorted({c.type for c in message.content if c.type not in ("text", "reasoning")})
            if parts:
                issues.append(
                    FidelityIssue(
                        kind="unsupported_part",
                        detail=f"{message.role} message {index}: {', '.join(parts)} content not carried over",
                        message_index=index,
                    )
                )
    if transcript.final_state is None:
        issues.append(
            FidelityIssue(
                kind="final_state_missing",
                detail=f"the log records no final state (no store key {FINAL_STATE_KEY!r}, no metadata field "
                f"{final_state_field!r}): the state layer cannot decide",
            )
        )
    events = [e.event for e in sample.events]
    return FidelityReport(
        trace_id=ref.uuid or f"{ref.log.name}:{ref.sample_id}:{ref.epoch}",
        conventions=("inspect_ai",),
        spans=len(events),
        model_spans=events.count("model"),
        tool_spans=events.count("tool"),
        messages=len(transcript.messages),
        tool_calls=len(calls),
        tool_results_missing=len(missing),
        arguments_unparseable=len(unparseable),
        issues=tuple(issues),
    )


def _case_id(sample: EvalSample, case_id_field: str | None) -> tuple[str | None, str]:
    """The sample's case id, or ``None`` and why it has none (a missing field, a value not a case id).

    A text or a whole number (not a boolean) is taken; anything else, or a text not shaped as a case id
    (:func:`judgekit.cases.is_case_id`: a path such as ``../x``, control characters), is refused rather
    than turned into a text that names no case.
    """
    metadata = sample.metadata or {}
    if case_id_field is not None:
        value = _field(metadata, case_id_field)
        where = f"metadata field {case_id_field!r} (--case-id-field)"
        if value is None:
            return None, f"the sample's metadata has no field {case_id_field!r} (--case-id-field)"
    elif metadata.get("case_id") is not None:
        value, where = metadata["case_id"], "metadata case_id"
    else:
        value, where = sample.id, "sample id (it has no metadata case_id)"
    if isinstance(value, bool) or not isinstance(value, str | int):
        shown = repr(value)
        shown = shown if len(shown) <= MAX_SHOWN else shown[: MAX_SHOWN - 3] + "..."
        return None, (
            f"the sample's {where} is a {type(value).__name__} ({shown}), not a case id: set it to the "
            "judgekit case's id, a text"
        )
    text = str(value)
    if not is_case_id(text):
        shown = repr(text) if len(text) <= MAX_SHOWN else repr(text[:MAX_SHOWN]) + "..."
        return None, (
            f"the sample's {where} {shown} is not a judgekit case id ({CASE_ID_RULE}): set metadata "
            "case_id on the sample (or name its field with --case-id-field) to the case's id"
        )
    return text, ""


def read_inspect_logs(
    logs: Iterable[str | os.PathLike[str]],
    *,
    case_id_field: str | None = None,
    initial_state_field: str = "initial_state",
    final_state_field: str = "final_state",
) -> InspectLogImport:
    """Import every sample of Inspect logs as transcripts, each with a fidelity report.

    Every log is read before anything is returned, so an unreadable one refuses the whole import.

    Args:
        logs: ``.eval`` or ``.json`` logs written by ``inspect eval``, or folders of them (a log folder:
            every log inspect_ai lists in it, recursively, in name order).
        case_id_field: Dotted sample-metadata field holding the case id (``None``: ``metadata.case_id``,
            else the sample id, as judgekit's Inspect scorer finds it). A sample without it is a problem.
        initial_state_field: Metadata field of the world before, when the store has none.
        final_state_field: Metadata field of the world after, when the store has none.

    Returns:
        The samples imported and the samples that could not be, each located. The trial is the epoch,
        unless several samples of one case share an epoch (then ``renumbered`` names the case and its
        trials count 1..n in reading order; the epoch stays in the metadata).

    Raises:
        JudgekitError: (exit 2) When a log is missing, malformed or cut off (the error names it).
    """
    read = [(p, read_log(p)) for p in log_files(logs)]
    out = InspectLogImport(logs=[p for p, _ in read])
    pending: list[tuple[SampleRef, EvalSample, str, str | None]] = []
    for path, log in read:
        for sample in log.samples or []:
            ref = SampleRef(path, sample.id, int(sample.epoch), sample.uuid)
            case_id, why = _case_id(sample, case_id_field)
            if case_id is None:
                out.problems.append(ref.problem(why))
            elif sample.error is not None:
                first = sample.error.message.strip().splitlines()[0] if sample.error.message.strip() else "?"
                out.problems.append(
                    ref.problem(f"the sample ended in an error in the Inspect run ({first}); not imported")
                )
            elif not sample.messages:
                out.problems.append(ref.problem("the sample has no messages"))
            else:
                pending.append((ref, sample, case_id, str(log.eval.model) if log.eval.model else None))
    shared = Counter((case_id, ref.epoch) for ref, _, case_id, _ in pending)
    out.renumbered = sorted({case_id for (case_id, _), n in shared.items() if n > 1})
    counters: Counter[str] = Counter()
    for ref, sample, case_id, model in pending:
        counters[case_id] += 1
        trial = counters[case_id] if case_id in out.renumbered else None
        source = {
            "log": str(ref.log.resolve()),
            "sample_id": ref.sample_id,
            "epoch": ref.epoch,
            "uuid": ref.uuid,
            "sample_metadata": json.loads(json.dumps(sample.metadata or {}, default=str)),
        }
        try:
            transcript = inspect_transcript(
                sample.messages,
                case_id=case_id,
                epoch=ref.epoch,
                sample_id=sample.id,
                store=sample.store or {},
                metadata=sample.metadata or {},
                model=model,
                initial_state_field=initial_state_field,
                final_state_field=final_state_field,
                trial=trial,
                extra_metadata={SOURCE_KEY: source},
            )
        except JudgekitError as exc:
            out.problems.append(ref.problem(f"not a transcript: {exc.message}"))
            continue
        report = _fidelity(ref, sample, transcript, final_state_field)
        metadata = {**transcript.metadata, "fidelity": report.model_dump(mode="json")}
        out.samples.append(ImportedSample(ref, transcript.model_copy(update={"metadata": metadata}), report))
    return out


# --------------------------------------------------------------------------- scores back


@dataclass
class ScoresWritten:
    """Verdicts written back as scores on copies of Inspect logs.

    Attributes:
        copies: Each original log and the copy written beside the scores (original, copy).
        scored: Samples given a score, per copy.
        not_graded: Samples of the logs that no result graded (they have no new score), located.
        problems: Results that could not be placed on a sample, located.
    """

    copies: list[tuple[Path, Path]] = field(default_factory=list)
    scored: dict[str, int] = field(default_factory=dict)
    not_graded: list[SampleRef] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def write_scores(
    graded: Mapping[SampleRef, tuple[Grade, str]],
    out_dir: str | os.PathLike[str],
    *,
    score_name: str = "judgekit",
) -> ScoresWritten:
    """Write grades as scores named ``score_name`` on a copy of each log, in ``out_dir``; originals untouched.

    Each copy is the log as inspect_ai reads it, with one more score per graded sample (an
    :func:`~inspect_ai.log.edit_score` whose provenance says judgekit and where the grade came from), its
    metrics recomputed, written by :func:`~inspect_ai.log.write_eval_log` in the log's own format under the
    same file name. Every copy is prepared before the first is written.

    Args:
        graded: Sample to its grade and the provenance text (``judgekit grade, results r.jsonl, run 7f...``).
        out_dir: Folder for the copies (created when missing); never a log's own folder.
        score_name: The name of the new score (``judgekit``, as judgekit's Inspect scorer names it).

    Raises:
        JudgekitError: (exit 2) When a log cannot be read, already has a score named ``score_name``, or its
            copy would overwrite it.
    """
    folder = Path(out_dir)
    by_log: dict[Path, dict[tuple[str, int], tuple[Grade, str]]] = {}
    for ref, entry in graded.items():
        by_log.setdefault(ref.log, {})[(str(ref.sample_id), ref.epoch)] = entry
    out = ScoresWritten()
    for log_path in by_log:  # the headers first (fast): refuse before reading any samples
        if (folder / log_path.name).resolve() == log_path.resolve():
            raise JudgekitError(
                f"{log_path}: the copy would overwrite the original log; give an output folder other than "
                "the log's own"
            )
        header = read_log(log_path, header_only=True, resolve=False)
        if header.results is not None and any(s.name == score_name for s in header.results.scores):
            raise JudgekitError(
                f"{log_path}: the log already has scores named {score_name!r}; choose another name with "
                "--score-name"
            )
    prepared: list[tuple[EvalLog, Path, Path]] = []
    for log_path, grades in by_log.items():
        copy = folder / log_path.name
        log = read_log(log_path, resolve=False)
        for sample in log.samples or []:
            if score_name in (sample.scores or {}):
                raise JudgekitError(
                    f"{log_path}: sample {sample.id!r} epoch {sample.epoch} already has a score named "
                    f"{score_name!r}; choose another name with --score-name"
                )
        scored = 0
        for sample in log.samples or []:
            found = grades.get((str(sample.id), int(sample.epoch)))
            if found is None:
                out.not_graded.append(SampleRef(log_path, sample.id, int(sample.epoch), sample.uuid))
                continue
            grade, provenance = found
            answer = sample.output.completion if sample.output is not None else None
            score = score_from_grade(grade, answer=answer)
            edit = ScoreEdit(
                value=score.value,
                answer=score.answer,
                explanation=score.explanation,
                reason=score.reason,
                metadata=score.metadata or {},
                provenance=ProvenanceData(author="judgekit", reason=provenance),
            )
            edit_score(log, sample.id, score_name, edit, recompute_metrics=False, epoch=sample.epoch)
            scored += 1
        recompute_metrics(log)
        out.scored[str(copy)] = scored
        prepared.append((log, log_path, copy))
    folder.mkdir(parents=True, exist_ok=True)
    for log, original, copy in prepared:
        partial = copy.with_name(copy.name + ".partial")
        write_eval_log(log, str(partial), format="json" if original.suffix == ".json" else "eval")
        partial.replace(copy)  # a copy is whole or absent
        out.copies.append((original, copy))
    return out
