"""Importers: trajectories recorded by other harnesses, turned into judgekit transcripts.

Three formats are read:

* **tau-bench results files** (``sierra-research/tau-bench``): a JSON list (or JSONL) of episodes, each
  with ``task_id``, ``trial`` (0-based in tau-bench), ``reward`` (1.0 or 0.0), ``info`` (the task with its
  ground-truth ``actions`` and required ``outputs``, the reward details, which side ended the episode)
  and ``traj`` (OpenAI chat messages with tool calls; the system message carries the domain policy).
  Each episode becomes one :class:`~judgekit.transcript.Transcript`: case id ``<prefix><task_id>``, trial
  ``trial + 1`` (judgekit trials are 1-based; the original number is kept in the metadata), the stored
  reward and task in the metadata, and a run record whose ``prompt_hash`` is the SHA-256 of the system
  message.
* **OpenAI chat JSONL**: one conversation per line, ``{"messages": [...], "tools": [...], ...}`` as used
  for fine-tuning and evaluation exports. The case id comes from ``case_id``, ``metadata.case_id`` or a
  dotted field named by the caller; the trial from ``trial``/``metadata.trial``, else the order in which a
  case's conversations appear. ``tools`` is hashed into the run record's ``tool_definitions_hash``.
* **Anthropic messages JSONL**: one conversation a line, ``{"system": ..., "messages": [...], "tools":
  [...], ...}`` with ``tool_use`` / ``tool_result`` content blocks: read by
  :func:`judgekit.formats.adapters.read_anthropic`, which sits above this module (it converts with the
  adapter) and reads case id, trial, ``metadata``, ``model`` and the states with this module's
  ``_line_header``, as for OpenAI chat lines; ``tools`` is hashed the same way.

Importers never stop at the first bad entry: each bad entry is a located
:class:`~judgekit.errors.Problem` and the others are still imported. Pure parsing functions take
already-read data; :func:`read_tau_bench` and :func:`read_openai_chat` read files.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judgekit.errors import JudgekitError, LocatedError, Problem
from judgekit.io.documents import MAX_IMPORT_BYTES, load_json_bounded
from judgekit.results import CaseRef, ResultLine, make_result_line
from judgekit.transcript import RunRecord, Transcript
from judgekit.verdict import CheckResult, Grade, Verdict

__all__ = [
    "ImportResult",
    "ImportedTrial",
    "parse_openai_chat_line",
    "parse_tau_bench_episode",
    "read_openai_chat",
    "read_tau_bench",
    "reward_result_lines",
    "transcript_lines",
]

_DROPPABLE_MESSAGE_KEYS = frozenset({"refusal", "function_call", "audio", "annotations", "reasoning_content"})
"""Keys that OpenAI response dumps carry on messages and that say nothing when empty."""


@dataclass(frozen=True)
class ImportedTrial:
    """One imported trial.

    Attributes:
        transcript: The transcript.
        reward: The reward the source harness stored (tau-bench), or ``None`` when it stored none.
        line: 1-based line (JSONL) or 1-based entry number (JSON list) in the source file.
    """

    transcript: Transcript
    reward: float | None
    line: int


@dataclass
class ImportResult:
    """What an import produced.

    Attributes:
        source: The file read.
        trials: The imported trials, in file order.
        problems: Entries that could not be imported, located.
    """

    source: Path
    trials: list[ImportedTrial] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def _sha256(data: Any) -> str:
    text = data if isinstance(data, str) else json.dumps(data, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _clean_messages(messages: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    for message in messages:
        if isinstance(message, dict):
            message = {
                k: v for k, v in message.items() if not (k in _DROPPABLE_MESSAGE_KEYS and v in (None, [], ""))
            }
        out.append(message)
    return out


def _validation_message(exc: ValidationError) -> str:
    err = exc.errors(include_url=False)[0]
    loc = ".".join(str(p) for p in err["loc"])
    msg = str(err["msg"]).removeprefix("Value error, ")
    return f"{loc}: {msg}" if loc else msg


def _system_prompt(messages: Sequence[Any]) -> str | None:
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "system":
            content = message.get("content")
            if isinstance(content, str):
                return content
    return None


# --------------------------------------------------------------------------- tau-bench


def parse_tau_bench_episode(
    episode: Any,
    *,
    source: str | PathLike[str],
    line: int,
    case_prefix: str = "task-",
    agent_model: str | None = None,
    trial_counter: Counter[str] | None = None,
) -> ImportedTrial | Problem:
    """Turn one tau-bench episode into a transcript.

    Args:
        episode: The parsed episode (a mapping with ``task_id``, ``trial``, ``reward``, ``info``, ``traj``).
        source: The file it came from (for problems). As text or a path object.
        line: Its line or entry number (for problems).
        case_prefix: Prefix of the case id (``task-`` gives ``task-0``).
        agent_model: The agent's model, recorded in the run record.
        trial_counter: Counts earlier episodes per case; used for the trial number when an episode has
            no ``trial`` field (older tau-bench files).

    Returns:
        The imported trial, or the problem that prevented it.
    """
    source = Path(source)
    if not isinstance(episode, dict):
        return Problem(source, line, "", f"an episode must be a JSON object, found {type(episode).__name__}")
    missing = [k for k in ("task_id", "reward", "traj") if k not in episode]
    if missing:
        return Problem(
            source,
            line,
            missing[0],
            f"episode lacks {', '.join(repr(m) for m in missing)}; is this a tau-bench results file?",
        )
    task_id = episode["task_id"]
    if not isinstance(task_id, int | str) or isinstance(task_id, bool):
        return Problem(source, line, "task_id", f"task_id must be a number or text, got {task_id!r}")
    case_id = f"{case_prefix}{task_id}"
    reward = episode["reward"]
    if not isinstance(reward, int | float) or isinstance(reward, bool):
        return Problem(source, line, "reward", f"reward must be a number, got {reward!r}")
    traj = episode["traj"]
    if not isinstance(traj, list):
        return Problem(source, line, "traj", "traj must be a list of chat messages")
    raw_trial = episode.get("trial")
    counter = trial_counter if trial_counter is not None else Counter()
    if raw_trial is None:
        trial = counter[case_id] + 1
    elif isinstance(raw_trial, int) and not isinstance(raw_trial, bool) and raw_trial >= 0:
        trial = raw_trial + 1
    else:
        return Problem(source, line, "trial", f"trial must be a non-negative integer, got {raw_trial!r}")
    counter[case_id] += 1
    raw_info = episode.get("info")
    info: dict[str, Any] = raw_info if isinstance(raw_info, dict) else {}
    raw_task = info.get("task")
    task: dict[str, Any] = raw_task if isinstance(raw_task, dict) else {}
    metadata: dict[str, Any] = {
        "source_format": "tau-bench",
        "task_id": task_id,
        "tau_bench_trial": raw_trial,
        "reward": float(reward),
    }
    for key, name in (
        ("instruction", "instruction"),
        ("user_id", "user_id"),
        ("actions", "expected_actions"),
        ("outputs", "expected_outputs"),
    ):
        if key in task:
            metadata[name] = task[key]
    if "source" in info:
        metadata["tau_bench_source"] = info["source"]
    if isinstance(info.get("reward_info"), dict):
        metadata["reward_info"] = info["reward_info"].get("info")
    if "user_cost" in info:
        metadata["user_cost"] = info["user_cost"]
    messages = _clean_messages(traj)
    system = _system_prompt(messages)
    run = RunRecord(
        agent_model=agent_model,
        prompt_hash=_sha256(system) if system is not None else None,
        config={"source_format": "tau-bench"},
    )
    try:
        transcript = Transcript.model_validate(
            {"case_id": case_id, "trial": trial, "messages": messages, "run": run, "metadata": metadata}
        )
    except ValidationError as exc:
        return Problem(source, line, "", f"task {task_id} trial {raw_trial}: {_validation_message(exc)}")
    return ImportedTrial(transcript, float(reward), line)


def _read_json_or_jsonl(path: Path) -> Iterator[tuple[int, Any] | Problem]:
    """The entries of a JSON list file or of a JSONL file, each under the bounded reader's limits.

    A whole JSON list is parsed once (at most :data:`~judgekit.io.documents.MAX_IMPORT_BYTES`); a limit it
    breaks, or malformed JSON, stops the import with the file and line. A JSONL line that breaks a limit
    or is not JSON is a problem at its line and is left out.
    """
    try:
        from judgekit.io.documents import read_regular

        data = read_regular(path, "import file")
    except OSError as exc:
        raise JudgekitError(f"{path}: cannot read: {exc.strerror}") from None
    stripped = data.lstrip()
    if stripped.startswith(b"["):
        try:
            items = load_json_bounded(data, source=path, max_bytes=MAX_IMPORT_BYTES, what="the file")
        except LocatedError as exc:
            raise JudgekitError(f"{exc.problem}; nothing imported") from None
        if not isinstance(items, list):
            raise JudgekitError(f"{path}: expected a JSON list of entries, found {type(items).__name__}")
        yield from enumerate(items, start=1)
        return
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            yield number, load_json_bounded(raw, source=path, line=number)
        except LocatedError as exc:
            yield Problem(path, number, "", f"{exc.problem.message}; line skipped")


def read_tau_bench(
    path: str | PathLike[str], *, case_prefix: str = "task-", agent_model: str | None = None
) -> ImportResult:
    """Read a tau-bench results file (a JSON list of episodes, or JSONL).

    Problems are located by entry number (1-based position in the list) or line (JSONL).

    Args:
        path: The file, as text or a path object.
        case_prefix: Prefix of case ids.
        agent_model: The agent's model for the run record.

    Returns:
        The imported trials and problems. A duplicate ``(task, trial)`` is a problem (the first is kept).

    Raises:
        JudgekitError: When the file cannot be read or is not JSON at all.
    """
    return _import_entries(path, parse_tau_bench_episode, case_prefix=case_prefix, agent_model=agent_model)


# --------------------------------------------------------------------------- OpenAI chat JSONL


def _dotted(data: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data


@dataclass(frozen=True)
class _LineHeader:
    """What a chat-export line says about itself, whatever its message format.

    Attributes:
        case_id: The case the conversation is a trial of.
        trial: Its 1-based trial number (given on the line, or counted per case).
        metadata: The line's ``metadata`` object (a copy), with ``source_format`` set when absent.
        agent_model: The agent's model: the caller's, else the line's ``model``, else ``None``.
        states: The line's ``initial_state``, ``final_state`` and ``ended_by``, those that are set.
    """

    case_id: str
    trial: int
    metadata: dict[str, Any]
    agent_model: str | None
    states: dict[str, Any]

    @property
    def reward(self) -> float | None:
        """``metadata.reward`` when it is a number (the source's own verdict), else ``None``."""
        reward = self.metadata.get("reward")
        return float(reward) if isinstance(reward, int | float) and not isinstance(reward, bool) else None


def _line_header(
    data: dict[str, Any],
    *,
    source: Path,
    line: int,
    source_format: str,
    case_id_field: str | None,
    agent_model: str | None,
    trial_counter: Counter[str] | None,
) -> _LineHeader | Problem:
    """Read the case id, trial, metadata, model and states of a chat-export line (OpenAI or Anthropic).

    The case id comes from ``case_id_field`` (a dotted path) or else ``case_id``, then
    ``metadata.case_id``; the trial from ``trial``, then ``metadata.trial``, else one more than the
    conversations of that case seen so far (``trial_counter``, which is updated).

    Args:
        data: The parsed line.
        source: The file (for problems).
        line: The line number (for problems).
        source_format: Recorded as the metadata's ``source_format`` unless the line sets one.
        case_id_field: Dotted path of the field holding the case id, or ``None`` for the defaults.
        agent_model: The caller's agent model, which wins over the line's ``model``.
        trial_counter: Counts earlier conversations per case.

    Returns:
        The header, or the problem with the case id or trial.
    """
    candidates = [case_id_field] if case_id_field else ["case_id", "metadata.case_id"]
    case_id = next((v for f in candidates if (v := _dotted(data, f)) is not None), None)
    if case_id is None or isinstance(case_id, bool) or not isinstance(case_id, str | int):
        where = " or ".join(candidates)
        return Problem(
            source,
            line,
            candidates[0],
            f"no case id in {where}: add one to each line, or name the field with --case-id-field",
        )
    case_id = str(case_id)
    counter = trial_counter if trial_counter is not None else Counter()
    raw_trial = data.get("trial", _dotted(data, "metadata.trial"))
    if raw_trial is None:
        trial = counter[case_id] + 1
    elif isinstance(raw_trial, int) and not isinstance(raw_trial, bool) and raw_trial >= 1:
        trial = raw_trial
    else:
        return Problem(
            source, line, "trial", f"trial must be a positive integer (1-based), got {raw_trial!r}"
        )
    counter[case_id] += 1
    metadata = dict(data["metadata"]) if isinstance(data.get("metadata"), dict) else {}
    metadata.setdefault("source_format", source_format)
    model = agent_model or (data.get("model") if isinstance(data.get("model"), str) else None)
    states = {k: data[k] for k in ("initial_state", "final_state", "ended_by") if data.get(k) is not None}
    return _LineHeader(case_id, trial, metadata, model, states)


def parse_openai_chat_line(
    data: Any,
    *,
    source: str | PathLike[str],
    line: int,
    case_id_field: str | None = None,
    agent_model: str | None = None,
    trial_counter: Counter[str] | None = None,
) -> ImportedTrial | Problem:
    """Turn one OpenAI chat JSONL line into a transcript.

    Args:
        data: The parsed line: ``{"messages": [...]}`` plus optional ``tools``, ``model``, ``case_id``,
            ``trial``, ``metadata``, ``initial_state``, ``final_state``.
        source: The file (for problems). As text or a path object.
        line: The line number (for problems).
        case_id_field: Dotted path of the field holding the case id (default: ``case_id``, then
            ``metadata.case_id``).
        agent_model: The agent's model; defaults to the line's ``model``.
        trial_counter: Counts earlier conversations per case, for lines without a trial number.

    Returns:
        The imported trial, or the problem that prevented it.
    """
    source = Path(source)
    if not isinstance(data, dict):
        return Problem(source, line, "", f"a line must be a JSON object, found {type(data).__name__}")
    messages = data.get("messages")
    if not isinstance(messages, list):
        return Problem(source, line, "messages", "a chat line needs 'messages', a list of chat messages")
    header = _line_header(
        data,
        source=source,
        line=line,
        source_format="openai-chat",
        case_id_field=case_id_field,
        agent_model=agent_model,
        trial_counter=trial_counter,
    )
    if isinstance(header, Problem):
        return header
    cleaned = _clean_messages(messages)
    system = _system_prompt(cleaned)
    tools = data.get("tools")
    run = RunRecord(
        agent_model=header.agent_model,
        prompt_hash=_sha256(system) if system is not None else None,
        tool_definitions_hash=_sha256(tools) if tools else None,
        config={"source_format": "openai-chat"},
    )
    payload: dict[str, Any] = {
        "case_id": header.case_id,
        "trial": header.trial,
        "messages": cleaned,
        "run": run,
        "metadata": header.metadata,
        **header.states,
    }
    try:
        transcript = Transcript.model_validate(payload)
    except ValidationError as exc:
        return Problem(source, line, "", _validation_message(exc))
    return ImportedTrial(transcript, header.reward, line)


def read_openai_chat(
    path: str | PathLike[str], *, case_id_field: str | None = None, agent_model: str | None = None
) -> ImportResult:
    """Read an OpenAI chat JSONL file, one conversation a line.

    Args:
        path: The file, as text or a path object.
        case_id_field: Dotted path of the case id field (see :func:`parse_openai_chat_line`).
        agent_model: The agent's model for the run record (defaults to each line's ``model``).

    Returns:
        The imported trials and problems (a duplicate ``(case, trial)`` is a problem; the first is kept).

    Raises:
        JudgekitError: When the file cannot be read.
    """
    return _import_entries(path, parse_openai_chat_line, case_id_field=case_id_field, agent_model=agent_model)


def _import_entries(
    path: str | PathLike[str], parse_entry: Callable[..., ImportedTrial | Problem], **options: Any
) -> ImportResult:
    """Parse every entry of a JSON list or JSONL file; bad entries become problems, duplicates are dropped.

    Args:
        path: The file.
        parse_entry: One format's entry parser (``parse_openai_chat_line`` or the like), called with the
            entry, ``source``, ``line``, ``trial_counter`` (shared by the whole file) and ``options``.
        options: The parser's own keyword arguments (``agent_model``...).
    """
    source = Path(path)
    result = ImportResult(source)
    counter: Counter[str] = Counter()
    for item in _read_json_or_jsonl(source):
        if isinstance(item, Problem):
            result.problems.append(item)
            continue
        line, data = item
        parsed = parse_entry(data, source=source, line=line, trial_counter=counter, **options)
        if isinstance(parsed, Problem):
            result.problems.append(parsed)
        else:
            result.trials.append(parsed)
    _drop_duplicates(result)
    return result


def _drop_duplicates(result: ImportResult) -> None:
    seen: dict[tuple[str, int], int] = {}
    kept: list[ImportedTrial] = []
    for trial in result.trials:
        key = (trial.transcript.case_id, trial.transcript.trial)
        if key in seen:
            result.problems.append(
                Problem(
                    result.source,
                    trial.line,
                    "",
                    f"case '{key[0]}' trial {key[1]} appears twice (first at {seen[key]}); the first is kept",
                )
            )
            continue
        seen[key] = trial.line
        kept.append(trial)
    result.trials = kept


def transcript_lines(trials: Iterable[ImportedTrial]) -> Iterator[str]:
    """Serialise imported trials as transcript JSONL lines (what ``judgekit grade --transcripts`` reads)."""
    for trial in trials:
        yield trial.transcript.model_dump_json(exclude_none=True)


def reward_result_lines(
    trials: Iterable[ImportedTrial],
    *,
    run_id: str,
    pass_reward: float = 1.0,
    source_ids: Mapping[str, str] | None = None,
) -> Iterator[ResultLine]:
    """Result lines carrying the source harness's own verdicts (its stored rewards), one per trial.

    This lets ``judgekit report`` compute pass^k from what tau-bench recorded, and lets a judgekit grading
    of the same transcripts be compared with it. A trial passes when its reward is at least
    ``pass_reward`` (tau-bench rewards are 0.0 or 1.0); a trial with no stored reward is
    ``not_evaluated``, never a fail.

    Args:
        trials: The imported trials.
        run_id: The run id to record.
        pass_reward: The smallest reward that counts as a pass.
        source_ids: Case id -> the source's own name of the task (``tau2 task [mobile_data_issue]...``),
            for cases whose id the import escaped; named in the check's reason, so that a report shows
            it. ``None``: none.

    Yields:
        One result line per trial, with a single check ``stored_reward`` (layer ``imported``).
    """
    for trial in trials:
        t = trial.transcript
        if trial.reward is None:
            verdict, reason = Verdict.NOT_EVALUATED, "the source stored no reward for this trial"
        elif trial.reward >= pass_reward:
            verdict, reason = Verdict.PASS, ""
        else:
            verdict, reason = Verdict.FAIL, f"stored reward {trial.reward:g} is below {pass_reward:g}"
        if source_ids and t.case_id in source_ids:
            reason = f"{reason} ({source_ids[t.case_id]})" if reason else source_ids[t.case_id]
        check = CheckResult(check_id="stored_reward", layer="imported", verdict=verdict, reason=reason)
        grade = Grade(case_id=t.case_id, trial=t.trial, verdict=verdict, checks=(check,))
        yield make_result_line(
            run_id=run_id,
            case=CaseRef(id=t.case_id, version=1),
            grade=grade,
            run=t.run,
            grading={"source": "stored_reward", "pass_reward": pass_reward},
        )
