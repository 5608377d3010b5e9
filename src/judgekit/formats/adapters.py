"""Transcript adapters: conversations in the OpenAI chat and Anthropic messages formats, as transcripts.

Harnesses hand judgekit a conversation as it was sent to or received from a model API. Two shapes are read:

* **OpenAI chat** (:func:`openai_chat_transcript`): a list of messages with ``role`` ``system`` (or
  ``developer``), ``user``, ``assistant`` (with ``tool_calls``: ``{"id", "type": "function", "function":
  {"name", "arguments"}}``, arguments a JSON string or an object) and ``tool`` (``tool_call_id``,
  ``content``); the legacy ``function`` role is read as a tool result. This is the shape judgekit's own
  transcripts use, so the adapter reuses :func:`judgekit.formats.importers.parse_openai_chat_line`.
* **Anthropic messages** (:func:`anthropic_transcript`): a top-level ``system`` prompt (text or text
  blocks) and ``messages`` whose ``role`` is ``user`` or ``assistant`` and whose ``content`` is text or a
  list of content blocks: ``text``, ``tool_use`` (``id``, ``name``, ``input``) in assistant turns,
  ``tool_result`` (``tool_use_id``, ``content`` text or blocks, ``is_error``) in user turns. Server tools
  (``server_tool_use`` / ``mcp_tool_use`` and their ``*_tool_result`` blocks inside the assistant turn)
  become calls and results in the same way; a non-text result is kept as its JSON. Thinking
  blocks are left out (they are not part of what the agent said or did); image and document blocks are
  counted in the transcript's metadata (``omitted_blocks``) rather than silently dropped. A tool result
  flagged ``is_error`` is recorded with content starting ``Error:``, which is how judgekit recognises a
  failed call.

:func:`to_transcript` detects which of the two a conversation is. A conversation in neither shape is
refused with a :class:`~judgekit.errors.JudgekitError` that says what was expected and what was found;
nothing is guessed.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any, Literal

from pydantic import JsonValue, ValidationError

from judgekit.errors import JudgekitError, Problem
from judgekit.formats.importers import (
    ImportedTrial,
    ImportResult,
    _import_entries,
    _line_header,
    _sha256,
    parse_openai_chat_line,
)
from judgekit.transcript import Transcript

__all__ = [
    "ANTHROPIC_SHAPE",
    "OPENAI_SHAPE",
    "anthropic_transcript",
    "detect_format",
    "openai_chat_transcript",
    "parse_anthropic_line",
    "read_anthropic",
    "to_transcript",
]

OPENAI_SHAPE = (
    "OpenAI chat messages: a list of {role: system|developer|user|assistant|tool, content: text or "
    "[{type: text, text}], tool_calls: [{id, type: function, function: {name, arguments}}], tool_call_id}"
)
"""What :func:`openai_chat_transcript` expects, as said in its error messages."""

ANTHROPIC_SHAPE = (
    "Anthropic messages: {system?, messages: [{role: user|assistant, content: text or "
    "[{type: text|tool_use|tool_result, ...}]}]} with tool_use {id, name, input} and "
    "tool_result {tool_use_id, content, is_error?}"
)
"""What :func:`anthropic_transcript` expects, as said in its error messages."""

_OPENAI_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
_ANTHROPIC_ROLES = frozenset({"user", "assistant"})
_SKIPPED_BLOCKS = frozenset({"thinking", "redacted_thinking"})
_OMITTED_BLOCKS = frozenset({"image", "document", "search_result", "container_upload"})
_ANTHROPIC_ONLY_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})

Format = Literal["openai", "anthropic"]


def _refuse(what: str, where: str, expected: str, found: str) -> JudgekitError:
    return JudgekitError(f"{what}: {where}: expected {expected}; found {found}")


def _kind(value: Any) -> str:
    if isinstance(value, Mapping):
        keys = ", ".join(sorted(str(k) for k in value)[:8])
        return f"an object with keys {{{keys}}}"
    if isinstance(value, list):
        return f"a list of {len(value)} item(s)"
    return f"{type(value).__name__} {value!r:.60}"


def _block_types(content: Any) -> set[str]:
    if not isinstance(content, list):
        return set()
    return {str(b.get("type")) for b in content if isinstance(b, Mapping)}


def detect_format(data: Any) -> Format:
    """Tell which format a conversation is in.

    Args:
        data: A list of messages, or an object with ``messages`` (and, for Anthropic, ``system``).

    Returns:
        ``"anthropic"`` when any message carries Anthropic content blocks (``tool_use``, ``tool_result``,
        thinking) or the object has a top-level ``system``; ``"openai"`` when messages carry OpenAI
        ``tool_calls``, ``tool``/``system``/``developer`` roles, or only plain text.

    Raises:
        JudgekitError: When it is neither (no message list, messages that are not objects, roles that
            neither format has).
    """
    messages = data.get("messages") if isinstance(data, Mapping) else data
    if not isinstance(messages, list):
        raise _refuse(
            "unknown transcript shape",
            "top level",
            f"a list of messages or an object with 'messages' ({OPENAI_SHAPE}; or {ANTHROPIC_SHAPE})",
            _kind(data),
        )
    roles: set[str] = set()
    blocks: set[str] = set()
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or "role" not in message:
            raise _refuse(
                "unknown transcript shape",
                f"messages[{i}]",
                "an object with a 'role'",
                _kind(message),
            )
        roles.add(str(message["role"]))
        blocks |= _block_types(message.get("content"))
    top_level_system = isinstance(data, Mapping) and "system" in data
    if blocks & _ANTHROPIC_ONLY_BLOCKS or (top_level_system and not roles - _ANTHROPIC_ROLES):
        return "anthropic"
    unknown = roles - _OPENAI_ROLES
    if unknown:
        raise _refuse(
            "unknown transcript shape",
            "messages",
            "roles system, developer, user, assistant, tool (OpenAI chat) or user, assistant (Anthropic)",
            "role(s) " + ", ".join(sorted(repr(r) for r in unknown)),
        )
    return "openai"


def to_transcript(data: Any, *, case_id: str, trial: int = 1, **kwargs: Any) -> Transcript:
    """Turn a conversation in either format into a transcript (see :func:`detect_format`).

    Args:
        data: A list of messages, or an object with ``messages`` (plus ``system`` for Anthropic and,
            for OpenAI, optionally ``tools`` and ``model``).
        case_id: The case the conversation is a trial of.
        trial: The trial number (1-based).
        **kwargs: Passed on to :func:`openai_chat_transcript` or :func:`anthropic_transcript`.

    Raises:
        JudgekitError: When the conversation is in neither shape, or is malformed.
    """
    fmt = detect_format(data)
    if fmt == "anthropic":
        if isinstance(data, Mapping):
            kwargs.setdefault("system", data.get("system"))
            messages = data["messages"]
        else:
            messages = data
        return anthropic_transcript(messages, case_id=case_id, trial=trial, **kwargs)
    if isinstance(data, Mapping):
        kwargs.setdefault("tools", data.get("tools"))
        if isinstance(data.get("model"), str):
            kwargs.setdefault("agent_model", data["model"])
        messages = data["messages"]
    else:
        messages = data
    return openai_chat_transcript(messages, case_id=case_id, trial=trial, **kwargs)


# --------------------------------------------------------------------------- OpenAI chat


def openai_chat_transcript(
    messages: Sequence[Any],
    *,
    case_id: str,
    trial: int = 1,
    tools: Sequence[Any] | None = None,
    agent_model: str | None = None,
    initial_state: Any = None,
    final_state: Any = None,
    ended_by: str | None = None,
    metadata: Mapping[str, JsonValue] | None = None,
) -> Transcript:
    """Turn OpenAI chat messages into a transcript.

    Args:
        messages: The conversation (see :data:`OPENAI_SHAPE`).
        case_id: The case it is a trial of.
        trial: Trial number, 1-based.
        tools: The tool definitions the agent was given (hashed into the run record).
        agent_model: The agent's model.
        initial_state: The world before (a state file path, or inline ``{table: {key: row}}`` data).
        final_state: The world after, in the same forms.
        ended_by: Why the episode ended, when known.
        metadata: Anything else to keep with the transcript.

    Raises:
        JudgekitError: When the messages are not in the OpenAI chat shape (Anthropic content blocks are
            pointed at :func:`anthropic_transcript`), or a message is malformed.
    """
    if not isinstance(messages, Sequence) or isinstance(messages, str | bytes):
        raise _refuse("not an OpenAI chat transcript", "messages", OPENAI_SHAPE, _kind(messages))
    converted: list[Any] = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise _refuse("not an OpenAI chat transcript", f"messages[{i}]", OPENAI_SHAPE, _kind(message))
        role = message.get("role")
        if role not in _OPENAI_ROLES:
            raise _refuse(
                "not an OpenAI chat transcript",
                f"messages[{i}].role",
                "one of system, developer, user, assistant, tool, function",
                repr(role),
            )
        anthropic_blocks = _block_types(message.get("content")) & _ANTHROPIC_ONLY_BLOCKS
        if anthropic_blocks:
            raise _refuse(
                "not an OpenAI chat transcript",
                f"messages[{i}].content",
                "text or text parts",
                f"Anthropic content blocks ({', '.join(sorted(anthropic_blocks))}); "
                "use anthropic_transcript() for the Anthropic messages format",
            )
        item = dict(message)
        if role == "developer":
            item["role"] = "system"
        elif role == "function":
            item = {"role": "tool", "name": item.get("name"), "content": item.get("content")}
        converted.append(item)
    line: dict[str, Any] = {"case_id": case_id, "trial": trial, "messages": converted}
    if tools:
        line["tools"] = list(tools)
    if initial_state is not None:
        line["initial_state"] = initial_state
    if final_state is not None:
        line["final_state"] = final_state
    if ended_by is not None:
        line["ended_by"] = ended_by
    if metadata:
        line["metadata"] = dict(metadata)
    parsed = parse_openai_chat_line(line, source=Path("<openai chat>"), line=1, agent_model=agent_model)
    if isinstance(parsed, Problem):
        where = f"{parsed.field}: " if parsed.field else ""
        raise JudgekitError(f"not a valid OpenAI chat transcript: {where}{parsed.message}")
    return parsed.transcript


# --------------------------------------------------------------------------- Anthropic messages


def _not_anthropic(where: str, expected: str, found: str) -> JudgekitError:
    return _refuse("not an Anthropic transcript", where, expected, found)


def _blocks(content: list[Any], where: str) -> Iterator[tuple[str, Mapping[str, Any], Any]]:
    """Each content block of ``content`` with its place (``{where}[j]``) and its ``type``, in order.

    Raises:
        JudgekitError: When an item is not an object with a ``type`` (checked as the item is reached).
    """
    for j, block in enumerate(content):
        place = f"{where}[{j}]"
        if not isinstance(block, Mapping) or "type" not in block:
            raise _not_anthropic(place, "a content block with a 'type'", _kind(block))
        yield place, block, block["type"]


def _other_block(kind: Any, place: str, omitted: list[str], expected: str) -> None:
    """Handle a block its turn does not read: note an omitted one, drop a thinking one, refuse the rest.

    An omitted block (image, document...) is added to ``omitted``; a thinking block is dropped; any other
    is refused as not ``expected``. A user turn does not call this: it refuses thinking blocks too.

    Raises:
        JudgekitError: When ``kind`` is neither omitted nor skipped.
    """
    if kind in _OMITTED_BLOCKS:
        omitted.append(str(kind))
    elif kind not in _SKIPPED_BLOCKS:
        raise _not_anthropic(f"{place}.type", expected, repr(kind))


def _text_of(content: Any, where: str) -> tuple[str, list[str]]:
    """Text of a ``content`` that is a string or a list of blocks; returns (text, omitted block types)."""
    if content is None:
        return "", []
    if isinstance(content, str):
        return content, []
    if not isinstance(content, list):
        raise _not_anthropic(where, "text or a list of content blocks", _kind(content))
    texts: list[str] = []
    omitted: list[str] = []
    for place, block, kind in _blocks(content, where):
        if kind == "text":
            texts.append(str(block.get("text", "")))
        else:
            _other_block(kind, place, omitted, "text (or image/document blocks) inside a tool result")
    return "\n".join(t for t in texts if t), omitted


def _system_text(system: Any) -> str | None:
    if system is None:
        return None
    text, _ = _text_of(system, "system")
    return text


def _server_result(block: Mapping[str, Any], where: str) -> dict[str, Any]:
    """A server tool's result block (``web_search_tool_result`` and the like) as a tool message."""
    if not isinstance(block.get("tool_use_id"), str):
        raise _not_anthropic(where, f"{block['type']} with a text 'tool_use_id'", _kind(block))
    content = block.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list) and all(
        isinstance(b, Mapping) and b.get("type") == "text" for b in content
    ):
        text = "\n".join(str(b.get("text", "")) for b in content)
    else:
        text = json.dumps(content, ensure_ascii=False, sort_keys=True)
    return {"role": "tool", "tool_call_id": block["tool_use_id"], "content": text}


def _assistant(content: Any, i: int, omitted: list[str]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"role": "assistant", "content": content}]
    if not isinstance(content, list):
        raise _not_anthropic(f"messages[{i}].content", "text or content blocks", _kind(content))
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for where, block, kind in _blocks(content, f"messages[{i}].content"):
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif isinstance(kind, str) and kind != "tool_result" and kind.endswith("_tool_result"):
            results.append(_server_result(block, where))
        elif kind in {"tool_use", "server_tool_use", "mcp_tool_use"}:
            if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
                raise _not_anthropic(where, "tool_use with text 'id' and 'name'", _kind(block))
            raw_input = block.get("input", {})
            arguments = raw_input if isinstance(raw_input, Mapping) else json.dumps(raw_input)
            calls.append({"id": block["id"], "name": block["name"], "arguments": arguments})
        else:
            _other_block(
                kind,
                where,
                omitted,
                "text, tool_use, server tool blocks, thinking or redacted_thinking in an assistant turn",
            )
    text = "\n".join(t for t in texts if t)
    out: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        out["tool_calls"] = calls
    return [out, *results]


def _user(content: Any, i: int, omitted: list[str]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    if not isinstance(content, list):
        raise _not_anthropic(f"messages[{i}].content", "text or content blocks", _kind(content))
    out: list[dict[str, Any]] = []
    texts: list[str] = []
    for where, block, kind in _blocks(content, f"messages[{i}].content"):
        if kind == "tool_result":
            if not isinstance(block.get("tool_use_id"), str):
                raise _not_anthropic(
                    where,
                    "tool_result with a text 'tool_use_id'",
                    _kind(block),
                )
            text, more = _text_of(block.get("content"), f"{where}.content")
            omitted.extend(more)
            if block.get("is_error") and not text.lstrip().lower().startswith("error"):
                text = f"Error: {text}"
            out.append({"role": "tool", "tool_call_id": block["tool_use_id"], "content": text})
        elif kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind in _OMITTED_BLOCKS:
            omitted.append(str(kind))
        else:
            raise _not_anthropic(
                f"{where}.type",
                "text, tool_result, image or document in a user turn",
                repr(kind),
            )
    text = "\n".join(t for t in texts if t)
    if text:
        out.append({"role": "user", "content": text})
    return out


def anthropic_transcript(
    messages: Sequence[Any],
    *,
    case_id: str,
    trial: int = 1,
    system: Any = None,
    agent_model: str | None = None,
    initial_state: Any = None,
    final_state: Any = None,
    ended_by: str | None = None,
    metadata: Mapping[str, JsonValue] | None = None,
) -> Transcript:
    """Turn Anthropic messages (content blocks with ``tool_use`` and ``tool_result``) into a transcript.

    Each assistant turn becomes one assistant message (its text blocks joined, its ``tool_use`` blocks as
    tool calls with their ``input`` as arguments); each ``tool_result`` block becomes a tool message
    answering its ``tool_use_id``, followed by the user turn's own text, if any.

    Args:
        messages: The conversation (see :data:`ANTHROPIC_SHAPE`).
        case_id: The case it is a trial of.
        trial: Trial number, 1-based.
        system: The top-level system prompt (text or text blocks).
        agent_model: The agent's model.
        initial_state: The world before (a state file path, or inline data).
        final_state: The world after.
        ended_by: Why the episode ended, when known.
        metadata: Anything else to keep with the transcript.

    Raises:
        JudgekitError: When the messages are not in the Anthropic shape (OpenAI ``tool_calls`` or
            ``tool`` roles are pointed at :func:`openai_chat_transcript`), or a block is malformed.
    """
    from judgekit.transcript import RunRecord

    if not isinstance(messages, Sequence) or isinstance(messages, str | bytes):
        raise _not_anthropic("messages", ANTHROPIC_SHAPE, _kind(messages))
    converted: list[dict[str, Any]] = []
    omitted: list[str] = []
    system_text = _system_text(system)
    if system_text:
        converted.append({"role": "system", "content": system_text})
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise _not_anthropic(f"messages[{i}]", ANTHROPIC_SHAPE, _kind(message))
        role = message.get("role")
        if role not in _ANTHROPIC_ROLES or "tool_calls" in message:
            hint = (
                "; this looks like the OpenAI chat format: use openai_chat_transcript()"
                if role in _OPENAI_ROLES
                else ""
            )
            found = "tool_calls" if "tool_calls" in message else f"role {role!r}"
            raise _not_anthropic(
                f"messages[{i}]",
                "role user or assistant with content blocks",
                found + hint,
            )
        content = message.get("content")
        if role == "assistant":
            converted.extend(_assistant(content, i, omitted))
        else:
            converted.extend(_user(content, i, omitted))
    meta: dict[str, Any] = {"source_format": "anthropic-messages", **(metadata or {})}
    if omitted:
        meta["omitted_blocks"] = {kind: omitted.count(kind) for kind in sorted(set(omitted))}
    payload: dict[str, Any] = {
        "case_id": case_id,
        "trial": trial,
        "messages": converted,
        "run": RunRecord(
            agent_model=agent_model,
            prompt_hash=_sha256(system_text) if system_text else None,
            config={"source_format": "anthropic-messages"},
        ),
        "metadata": meta,
    }
    for key, value in (
        ("initial_state", initial_state),
        ("final_state", final_state),
        ("ended_by", ended_by),
    ):
        if value is not None:
            payload[key] = value
    try:
        return Transcript.model_validate(payload)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise JudgekitError(
            f"not a valid Anthropic transcript: {loc}: {str(err['msg']).removeprefix('Value error, ')}"
        ) from None


# --------------------------------------------------------------------------- Anthropic messages JSONL

_OPENAI_ONLY_ROLES = frozenset({"system", "developer", "tool", "function"})
"""Message roles of the OpenAI chat format that the Anthropic messages format does not have."""


def _looks_openai(messages: Sequence[Any]) -> bool:
    return any(
        isinstance(m, dict) and (m.get("role") in _OPENAI_ONLY_ROLES or "tool_calls" in m) for m in messages
    )


def parse_anthropic_line(
    data: Any,
    *,
    source: str | PathLike[str],
    line: int,
    case_id_field: str | None = None,
    agent_model: str | None = None,
    trial_counter: Counter[str] | None = None,
) -> ImportedTrial | Problem:
    """Turn one Anthropic messages JSONL line into a transcript.

    The conversation is converted by :func:`anthropic_transcript`: assistant
    ``tool_use`` blocks become tool calls, user ``tool_result`` blocks become tool results (content
    starting ``Error:`` when ``is_error``), text blocks become the turns' text, thinking is left out.

    Args:
        data: The parsed line: ``{"messages": [...]}`` plus optional ``system`` (text or text blocks),
            ``tools``, ``model``, ``case_id``, ``trial``, ``metadata``, ``initial_state``,
            ``final_state``, ``ended_by``.
        source: The file (for problems). As text or a path object.
        line: The line number (for problems).
        case_id_field: Dotted path of the field holding the case id (default: ``case_id``, then
            ``metadata.case_id``).
        agent_model: The agent's model; defaults to the line's ``model``.
        trial_counter: Counts earlier conversations per case, for lines without a trial number.

    Returns:
        The imported trial, or the problem that prevented it (a block in the wrong shape is named by
        its place in ``messages``).
    """
    source = Path(source)
    if not isinstance(data, dict):
        return Problem(source, line, "", f"a line must be a JSON object, found {type(data).__name__}")
    messages = data.get("messages")
    if not isinstance(messages, list):
        return Problem(
            source, line, "messages", "an Anthropic messages line needs 'messages', a list of messages"
        )
    if _looks_openai(messages):
        return Problem(
            source,
            line,
            "messages",
            "this line is an OpenAI chat conversation (system/tool roles or tool_calls), not Anthropic "
            "messages: import the file with judgekit import openai",
        )
    header = _line_header(
        data,
        source=source,
        line=line,
        source_format="anthropic-messages",
        case_id_field=case_id_field,
        agent_model=agent_model,
        trial_counter=trial_counter,
    )
    if isinstance(header, Problem):
        return header
    try:
        transcript = anthropic_transcript(
            messages,
            case_id=header.case_id,
            trial=header.trial,
            system=data.get("system"),
            agent_model=header.agent_model,
            metadata=header.metadata,
            **header.states,
        )
    except JudgekitError as exc:
        return Problem(source, line, "", exc.message)
    tools = data.get("tools")
    if tools and transcript.run is not None:
        run = transcript.run.model_copy(update={"tool_definitions_hash": _sha256(tools)})
        transcript = transcript.model_copy(update={"run": run})
    return ImportedTrial(transcript, header.reward, line)


def read_anthropic(
    path: str | PathLike[str], *, case_id_field: str | None = None, agent_model: str | None = None
) -> ImportResult:
    """Read an Anthropic messages JSONL file, one conversation a line.

    Args:
        path: The file, as text or a path object.
        case_id_field: Dotted path of the case id field (see :func:`parse_anthropic_line`).
        agent_model: The agent's model for the run record (defaults to each line's ``model``).

    Returns:
        The imported trials and problems (a duplicate ``(case, trial)`` is a problem; the first is kept).

    Raises:
        JudgekitError: When the file cannot be read.
    """
    return _import_entries(path, parse_anthropic_line, case_id_field=case_id_field, agent_model=agent_model)
