"""One trial of an agent: messages, tool calls with parsed arguments, states and the run's record.

Messages follow the OpenAI chat format (``system``, ``user``, ``assistant`` with ``tool_calls``, ``tool``
results with ``tool_call_id``). Tool-call arguments arrive as JSON strings in that format; they are parsed
once, when the transcript is read, into data. Arguments that are not valid JSON are kept verbatim with the
parse error, so graders can report them as ``invalid_arguments`` instead of crashing.

Transcript files are JSONL, one trial per line, read as a stream by :func:`iter_transcripts`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from os import PathLike
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, JsonValue, ValidationError, field_validator, model_validator

from judgekit.errors import JudgekitError, LocatedError, Problem
from judgekit.io.documents import check_json_bounds, iter_lines, line_too_long, load_json_bounded, open_input
from judgekit.verdict import FrozenModel

__all__ = [
    "CallRecord",
    "Capability",
    "Message",
    "RunRecord",
    "StateRef",
    "ToolCall",
    "Transcript",
    "iter_transcripts",
    "read_reference",
    "read_transcripts",
]


class Capability(StrEnum):
    """What a transcript can record, and so what a grader layer may need from it.

    A transcript written by an agent harness records all of them; one imported from a lossy trace may lose
    some (see :func:`judgekit.fidelity.lost_by`), and the layers needing what was lost then
    cannot decide (:func:`judgekit.graders.registry.restrict_to_supported`).

    Attributes:
        FINAL_STATE: The world after the conversation (a snapshot; never lost by a trace).
        TOOL_CALLS: Every tool call, with parseable arguments.
        TOOL_RESULTS: Every tool call's result.
        ASSISTANT_TEXT: The assistant's messages, complete.
        CONVERSATION: The whole conversation, nothing missing, truncated or diverged.
    """

    FINAL_STATE = "final_state"
    TOOL_CALLS = "tool_calls"
    TOOL_RESULTS = "tool_results"
    ASSISTANT_TEXT = "assistant_text"
    CONVERSATION = "conversation"


class ToolCall(FrozenModel):
    """One tool call made by the assistant.

    Attributes:
        id: The call's id (pairs it with its result); generated as ``call_<n>`` when absent.
        name: The tool's name.
        arguments: The parsed arguments, or ``None`` when they could not be parsed.
        arguments_error: Why parsing failed (``None`` when it did not).
        raw_arguments: The arguments text as received, kept only when parsing failed.
    """

    id: str
    name: str
    arguments: dict[str, JsonValue] | None = None
    arguments_error: str | None = None
    raw_arguments: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_openai(cls, value: Any) -> Any:
        """Accept the OpenAI shape ``{"id", "type": "function", "function": {"name", "arguments"}}``."""
        if not isinstance(value, dict):
            return value
        data = dict(value)
        function = data.pop("function", None)
        data.pop("type", None)
        if isinstance(function, dict):
            data.setdefault("name", function.get("name"))
            if "arguments" in function:
                data.setdefault("arguments", function["arguments"])
        args = data.get("arguments")
        if isinstance(args, str):
            try:
                check_json_bounds(args, source=None, what="the arguments")
            except LocatedError as exc:
                data["arguments"] = None
                data["arguments_error"] = f"arguments refused: {exc.problem.message}"
                data["raw_arguments"] = args
                return data
            try:
                parsed = json.loads(args) if args.strip() else {}
            except json.JSONDecodeError as exc:
                data["arguments"] = None
                data["arguments_error"] = f"arguments are not valid JSON: {exc.msg} at column {exc.colno}"
                data["raw_arguments"] = args
            else:
                if isinstance(parsed, dict):
                    data["arguments"] = parsed
                else:
                    data["arguments"] = None
                    data["arguments_error"] = f"arguments must be a JSON object, got {type(parsed).__name__}"
                    data["raw_arguments"] = args
        return data


class Message(FrozenModel):
    """One chat message.

    Attributes:
        role: ``system``, ``user``, ``assistant`` or ``tool``.
        content: The text (``None`` for an assistant message that only calls tools). Content given as
            a list of text parts is joined.
        tool_calls: The assistant's tool calls.
        tool_call_id: For ``tool`` messages, the call this is the result of.
        name: Optional name (tool name for results in older formats).
    """

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None

    @field_validator("content", mode="before")
    @classmethod
    def _join_parts(cls, value: Any) -> Any:
        if isinstance(value, list):
            texts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in value]
            return "\n".join(t for t in texts if t)
        return value

    @field_validator("tool_calls", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return () if value is None else value


class StateRef(FrozenModel):
    """A world state attached to a transcript: inline data or a file.

    Attributes:
        path: A state file (``.json`` document store, ``.sqlite``/``.db`` SQLite file, ``.sql`` dump),
            relative to the transcript file's folder unless absolute.
        data: An inline JSON state (tables of records).
    """

    path: str | None = None
    data: dict[str, JsonValue] | None = None

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"path": value}
        if isinstance(value, dict) and not ({"path", "data"} & set(value)):
            return {"data": value}
        return value

    @model_validator(mode="after")
    def _one(self) -> StateRef:
        if (self.path is None) == (self.data is None):
            raise ValueError("a state is either a path or inline data")
        return self


class RunRecord(FrozenModel):
    """What was evaluated: the values that make a result reproducible.

    Attributes:
        agent_model: The agent's model.
        prompt_hash: Hash of the agent's system prompt.
        tool_definitions_hash: Hash of the tool definitions the agent was given.
        app_version: The agent application's version.
        fixture_version: The version of the fixtures the trial started from.
        config: Any other relevant configuration (temperature, flags). Never secrets.
    """

    agent_model: str | None = None
    prompt_hash: str | None = None
    tool_definitions_hash: str | None = None
    app_version: str | None = None
    fixture_version: str | None = None
    config: dict[str, JsonValue] = Field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CallRecord:
    """A tool call in transcript order, paired with its result.

    Attributes:
        index: 0-based position among all tool calls in the transcript.
        message_index: Position of the assistant message that made the call.
        call: The call.
        result: The tool's result text, or ``None`` when no result message answered it.
        is_error: True when the result reports an error (a result message whose content starts with
            ``Error`` or is a JSON object with an ``error`` key).
    """

    index: int
    message_index: int
    call: ToolCall
    result: str | None
    is_error: bool


def _looks_like_error(text: str | None) -> bool:
    if text is None:
        return False
    stripped = text.lstrip()
    if stripped[:5].lower() == "error":
        return True
    if stripped.startswith("{"):
        if "error" not in stripped and "\\" not in stripped:
            return False  # no "error" key can be in it (not even an escaped one): skip parsing
        try:
            check_json_bounds(stripped, source=None)
            data = json.loads(stripped)
        except (json.JSONDecodeError, LocatedError):
            return False
        return isinstance(data, dict) and "error" in data
    return False


class Transcript(FrozenModel):
    """One trial of one case.

    Attributes:
        case_id: The case this trial ran.
        trial: Trial number, 1-based.
        messages: The conversation.
        initial_state: The world before the conversation, if recorded.
        final_state: The world after it, if recorded.
        run: The run's record (what was evaluated).
        ended_by: Why the episode ended (``agent``, ``user``, ``max_steps``, ``error``), if known.
        metadata: Anything else the harness recorded.
    """

    case_id: str
    trial: int = Field(default=1, ge=1)
    messages: tuple[Message, ...] = ()
    initial_state: StateRef | None = None
    final_state: StateRef | None = None
    run: RunRecord | None = None
    ended_by: str | None = None
    metadata: dict[str, JsonValue] = Field(default_factory=dict)

    def calls(self) -> list[CallRecord]:
        """Every tool call in order, paired with its result by ``tool_call_id``."""
        results: dict[str, str | None] = {}
        for message in self.messages:
            if message.role == "tool" and message.tool_call_id is not None:
                results.setdefault(message.tool_call_id, message.content)
        out: list[CallRecord] = []
        for m_index, message in enumerate(self.messages):
            for call in message.tool_calls:
                result = results.get(call.id)
                out.append(CallRecord(len(out), m_index, call, result, _looks_like_error(result)))
        return out

    def assistant_texts(self) -> list[tuple[int, str]]:
        """``(message index, text)`` of every assistant message with text."""
        return [(i, m.content) for i, m in enumerate(self.messages) if m.role == "assistant" and m.content]

    def final_answer(self) -> str | None:
        """The last assistant text, or ``None`` when the assistant never wrote any."""
        texts = self.assistant_texts()
        return texts[-1][1] if texts else None

    @model_validator(mode="before")
    @classmethod
    def _number_calls(cls, value: Any) -> Any:
        """Give id-less tool calls stable ids (``call_<n>``) and pair id-less results in order.

        A ``tool`` message without ``tool_call_id`` answers the earliest call not yet answered (the
        order older formats rely on); it is given that call's id.
        """
        if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
            return value
        counter = 0
        unanswered: list[str] = []
        messages = []
        for message in value["messages"]:
            if isinstance(message, dict) and isinstance(message.get("tool_calls"), list):
                calls = []
                for call in message["tool_calls"]:
                    if isinstance(call, dict) and not call.get("id"):
                        call = {**call, "id": f"call_{counter}"}
                    counter += 1
                    if isinstance(call, dict):
                        unanswered.append(str(call["id"]))
                    calls.append(call)
                message = {**message, "tool_calls": calls}
            elif isinstance(message, dict) and message.get("role") == "tool":
                answered = message.get("tool_call_id")
                if answered:
                    if answered in unanswered:
                        unanswered.remove(answered)
                elif unanswered:
                    message = {**message, "tool_call_id": unanswered.pop(0)}
            messages.append(message)
        return {**value, "messages": messages}


def iter_transcripts(path: str | PathLike[str], *, any_trial: bool = False) -> Iterator[Transcript | Problem]:
    """Stream transcripts from a JSONL file, one per non-blank line.

    A line that is not valid JSON or not a valid transcript is yielded as a located
    :class:`~judgekit.errors.Problem` and reading goes on. The format is specified field by field in
    ``docs/transcripts.md``.

    Args:
        path: The JSONL file, as text or a path object.
        any_trial: When true (a reference solution, which is no trial of a run), an integer ``trial``
            of any value (``0`` included) is accepted and ignored: the transcript gets the default
            trial number 1. A ``trial`` that is not an integer is still a problem.

    Raises:
        JudgekitError: When the file cannot be opened.
    """
    path = Path(path)
    with open_input(path, "transcripts") as handle:  # a FIFO or device is refused at once
        for number, raw, _ in iter_lines(handle):
            if raw is None:
                yield line_too_long(path, number)
                continue
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8-sig")  # a byte-order mark (an editor's) is allowed
            except UnicodeDecodeError as exc:
                yield Problem(path, number, "", f"not valid UTF-8 (byte offset {exc.start} in the line)")
                continue
            try:
                data = load_json_bounded(text, source=path, line=number)
            except LocatedError as exc:
                yield exc.problem
                continue
            if any_trial and isinstance(data, dict) and type(data.get("trial")) is int:
                data = {k: v for k, v in data.items() if k != "trial"}
            try:
                yield Transcript.model_validate(data)
            except ValidationError as exc:
                err = exc.errors(include_url=False)[0]
                loc = ".".join(str(p) for p in err["loc"])
                yield Problem(path, number, loc, str(err["msg"]).removeprefix("Value error, "))


def read_transcripts(path: str | PathLike[str]) -> list[Transcript]:
    """Read every transcript of a JSONL file, raising one error listing every bad line.

    Args:
        path: The JSONL file, as text or a path object.

    Raises:
        ProblemsError: When any line is malformed.
    """
    from judgekit.errors import ProblemsError

    out: list[Transcript] = []
    problems: list[Problem] = []
    for item in iter_transcripts(path):
        (problems if isinstance(item, Problem) else out).append(item)  # type: ignore[arg-type]
    if problems:
        raise ProblemsError(problems)
    return out


def read_reference(path: str | PathLike[str]) -> Transcript | None:
    """Read a case's reference solution: a JSONL file holding exactly one transcript.

    A reference is not a trial of a run, so its ``trial`` may be any integer or absent (see
    ``any_trial`` of :func:`iter_transcripts`).

    Args:
        path: The reference transcript file, as text or a path object.

    Returns:
        The file's one transcript, or ``None`` when the file holds no (non-blank) line.

    Raises:
        JudgekitError: When the file cannot be opened, or holds more than one transcript line.
        ProblemsError: When a line is malformed (every bad line is listed).
    """
    from judgekit.errors import ProblemsError

    out: list[Transcript] = []
    problems: list[Problem] = []
    for item in iter_transcripts(path, any_trial=True):
        (problems if isinstance(item, Problem) else out).append(item)  # type: ignore[arg-type]
    if problems:
        raise ProblemsError(problems)
    if len(out) > 1:
        raise JudgekitError(
            f"{path}: a reference solution is one transcript on one line, this file holds {len(out)}; "
            "keep only the case's reference transcript in it"
        )
    return out[0] if out else None
