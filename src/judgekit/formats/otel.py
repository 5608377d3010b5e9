"""Import agent traces exported as OpenTelemetry OTLP JSON into transcripts, with a fidelity report.

Accepted input: an OTLP JSON export (``{"resourceSpans": [...]}``, optionally with ``"resourceLogs"`` for
log-based GenAI events), one trace per ``traceId`` becoming one :class:`~judgekit.transcript.Transcript`.
Conversations are read from whichever of these conventions the spans use (several may mix in one trace):

* **GenAI events** (OpenTelemetry GenAI semantic conventions, per-message events): span events (or log
  records with ``event.name``/``eventName``) named ``gen_ai.system.message``, ``gen_ai.user.message``,
  ``gen_ai.assistant.message``, ``gen_ai.tool.message`` and ``gen_ai.choice``. Their body fields
  (``content``, ``tool_calls``, ``id``, ``message``, ``finish_reason``) are read from the log record's body
  or, on span events, from the event's attributes (a whole JSON body in ``body`` or ``event.body`` is also
  accepted).
* **GenAI message attributes** (the newer form): ``gen_ai.system_instructions``, ``gen_ai.input.messages``
  and ``gen_ai.output.messages`` as JSON arrays of ``{"role", "parts": [...]}`` with ``text``,
  ``tool_call`` (``id``, ``name``, ``arguments``) and ``tool_call_response`` (``id``, ``response``) parts.
* **execute_tool spans** (``gen_ai.operation.name = execute_tool``): ``gen_ai.tool.name``,
  ``gen_ai.tool.call.id``, ``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``.
* **OpenLLMetry** indexed attributes: ``gen_ai.prompt.<i>.role`` / ``.content`` / ``.tool_call_id`` /
  ``.tool_calls.<j>.{id,name,arguments}`` and ``gen_ai.completion.<i>.*`` likewise.
* **OpenInference** flattened attributes: ``llm.input_messages.<i>.message.role`` / ``.content`` /
  ``.contents.<k>.message_content.text`` / ``.tool_call_id`` /
  ``.tool_calls.<j>.tool_call.{id,function.name,function.arguments}``, ``llm.output_messages.<i>.*``; TOOL
  spans (``openinference.span.kind = TOOL``) with ``tool.name``, ``tool_call.id``, ``input.value`` and
  ``output.value``.

Each model call repeats the conversation so far; calls are merged in start-time order (a call's input
extends the conversation read so far; a call whose input does not is merged message by message and noted
as a diverged history). Tool results are paired with their calls **by id**; a tool span whose call no
model span recorded adds the call and its result where it happened in time.

Every transcript carries a :class:`~judgekit.fidelity.FidelityReport` in ``metadata["fidelity"]`` (content
missing or truncated, tool results missing, arguments unparseable, final answer only, missing parents,
diverged histories) and the trace's identity in ``metadata["otel"]``.
:func:`~judgekit.fidelity.lost_capabilities` says what a lossy trace failed to record; the layer registry
(:func:`judgekit.graders.registry.restrict_to_supported`) turns the verdicts of the layers needing it into
``insufficient_information``, never ``pass``.

Bad input is named: a file that is not OTLP JSON, a span without ids, two spans with one id, a trace
whose parent links form a cycle (refused), a span naming a parent the trace does not contain (imported,
flagged), and a trace in which no span uses a known convention (refused, with the attribute keys seen).

:func:`evaluation_events` exports judgekit verdicts as ``gen_ai.evaluation.result`` events (OTLP JSON log
records, parented to the trace they grade).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from os import PathLike
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import Field, JsonValue

from judgekit.errors import JudgekitError, LocatedError, Problem, ProblemsError
from judgekit.fidelity import FidelityIssue, FidelityReport
from judgekit.io.documents import MAX_IMPORT_BYTES, load_json_bounded
from judgekit.transcript import Transcript
from judgekit.verdict import FrozenModel, WrittenFile

__all__ = [
    "CONVENTIONS",
    "OtelExport",
    "OtelImport",
    "check_problems",
    "evaluation_events",
    "export_evaluation_events",
    "import_otlp",
    "read_otlp_file",
    "trace_refs",
]

Convention = Literal["genai-events", "genai-messages", "genai-tool-spans", "openllmetry", "openinference"]
CONVENTIONS: Final[tuple[Convention, ...]] = (
    "genai-events",
    "genai-messages",
    "genai-tool-spans",
    "openllmetry",
    "openinference",
)

_EVENT_ROLES: Final = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
    "gen_ai.choice": "assistant",
}
_TRUNCATION = re.compile(r"(\[truncated\]|\(truncated\)|<truncated>|\[\.\.\. ?truncated[^\]]*\])\s*$", re.I)
_OPENLLMETRY = re.compile(r"^gen_ai\.(prompt|completion)\.(\d+)\.(.+)$")
_OPENINFERENCE = re.compile(r"^llm\.(input|output)_messages\.(\d+)\.message\.(.+)$")
_FLAT_CONVENTIONS = (("openllmetry", _OPENLLMETRY, "prompt"), ("openinference", _OPENINFERENCE, "input"))
"""The conventions that flatten a span's messages into indexed attributes, in the order they are read: the
convention's name, its attribute pattern, and the kind of its input messages (the other kind is output)."""
_TOOL_CALL_KEY = re.compile(r"^tool_calls\.(\d+)\.(.+)$")
_OI_CONTENTS = re.compile(r"^contents\.(\d+)\.message_content\.(\w+)$")


# ------------------------------------------------------------------------------------------- OTLP reading


@dataclass
class _Event:
    name: str
    time: int
    attributes: dict[str, Any]
    body: Any = None
    dropped: int = 0


@dataclass
class _Span:
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start: int
    end: int
    attributes: dict[str, Any]
    events: list[_Event]
    order: int
    where: str
    dropped: int = 0


def _any_value(value: Any) -> Any:
    """Decode an OTLP JSON ``AnyValue``."""
    if not isinstance(value, dict):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return value["intValue"]
    if "doubleValue" in value:
        return value["doubleValue"]
    if "arrayValue" in value:
        return [_any_value(v) for v in (value["arrayValue"] or {}).get("values", []) or []]
    if "kvlistValue" in value:
        return _attributes((value["kvlistValue"] or {}).get("values", []) or [])
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def _attributes(items: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(items, dict):  # already a mapping (lenient)
        return dict(items)
    for kv in items or []:
        if isinstance(kv, dict) and isinstance(kv.get("key"), str):
            out[kv["key"]] = _any_value(kv.get("value"))
    return out


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _read_spans(doc: dict[str, Any], source: Path | None, problems: list[Problem]) -> list[_Span]:
    spans: list[_Span] = []
    order = 0
    for r, rs in enumerate(doc.get("resourceSpans") or []):
        resource = _attributes(((rs or {}).get("resource") or {}).get("attributes"))
        for s, ss in enumerate(
            (rs or {}).get("scopeSpans") or (rs or {}).get("instrumentationLibrarySpans") or []
        ):
            for k, raw in enumerate((ss or {}).get("spans") or []):
                where = f"resourceSpans.{r}.scopeSpans.{s}.spans.{k}"
                if not isinstance(raw, dict):
                    problems.append(Problem(source, None, where, "a span must be a JSON object"))
                    continue
                trace_id, span_id = raw.get("traceId"), raw.get("spanId")
                if (
                    not trace_id
                    or not span_id
                    or not isinstance(trace_id, str)
                    or not isinstance(span_id, str)
                ):
                    problems.append(Problem(source, None, where, "the span has no traceId or spanId"))
                    continue
                attrs = {
                    **{f"resource.{key}": v for key, v in resource.items()},
                    **_attributes(raw.get("attributes")),
                }
                events = [
                    _Event(
                        name=str(e.get("name", "")),
                        time=_int(e.get("timeUnixNano")),
                        attributes=_attributes(e.get("attributes")),
                        dropped=_int(e.get("droppedAttributesCount")),
                    )
                    for e in raw.get("events") or []
                    if isinstance(e, dict)
                ]
                spans.append(
                    _Span(
                        trace_id=trace_id,
                        span_id=span_id,
                        parent_id=str(raw.get("parentSpanId") or ""),
                        name=str(raw.get("name", "")),
                        start=_int(raw.get("startTimeUnixNano")),
                        end=_int(raw.get("endTimeUnixNano")),
                        attributes=attrs,
                        events=events,
                        order=order,
                        where=where,
                        dropped=_int(raw.get("droppedAttributesCount")),
                    )
                )
                order += 1
    return spans


def _read_logs(doc: dict[str, Any]) -> list[tuple[str, str, _Event]]:
    """GenAI event log records: ``(trace id, span id, event)``."""
    out: list[tuple[str, str, _Event]] = []
    for rl in doc.get("resourceLogs") or []:
        for sl in (rl or {}).get("scopeLogs") or []:
            for rec in (sl or {}).get("logRecords") or []:
                if not isinstance(rec, dict):
                    continue
                attrs = _attributes(rec.get("attributes"))
                name = rec.get("eventName") or attrs.get("event.name") or ""
                if name not in _EVENT_ROLES:
                    continue
                out.append(
                    (
                        str(rec.get("traceId") or ""),
                        str(rec.get("spanId") or ""),
                        _Event(
                            name=str(name),
                            time=_int(rec.get("timeUnixNano") or rec.get("observedTimeUnixNano")),
                            attributes=attrs,
                            body=_any_value(rec.get("body")),
                            dropped=_int(rec.get("droppedAttributesCount")),
                        ),
                    )
                )
    return out


# ------------------------------------------------------------------------------------------- messages


@dataclass
class _Msg:
    role: str
    content: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    span_id: str = ""
    time: int = 0
    truncated: bool = False

    def key(self) -> tuple[Any, ...]:
        return (
            self.role,
            (self.content or "").strip(),
            tuple(c.get("id") or c.get("name") for c in self.tool_calls),
            self.tool_call_id,
        )


@dataclass
class _SpanRead:
    conventions: set[str] = field(default_factory=set)
    inputs: list[_Msg] = field(default_factory=list)
    outputs: list[_Msg] = field(default_factory=list)
    tool: dict[str, Any] | None = None
    notes: list[FidelityIssue] = field(default_factory=list)
    is_model: bool = False

    def note(self, kind: str, detail: str, span: _Span) -> None:
        """Record a fidelity issue (a :class:`FidelityIssue` kind) found on ``span``."""
        self.notes.append(FidelityIssue(kind=kind, detail=detail, span_id=span.span_id))


def _json_attr(value: Any, span: _Span, key: str, read: _SpanRead) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return load_json_bounded(value, source=None, what="the attribute")
    except LocatedError as exc:
        read.note(
            "content_truncated",
            f"attribute {key} on span {span.span_id} ({len(value)} characters) is not usable JSON "
            f"({exc.problem.message}); a malformed value was probably cut off by an attribute length "
            "limit",
            span,
        )
        return None


def _arguments_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _text_of(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [p.get("text") or p.get("content") if isinstance(p, dict) else str(p) for p in value]
        return "\n".join(t for t in texts if isinstance(t, str) and t) or None
    return json.dumps(value, ensure_ascii=False)


def _call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    return {
        "id": str(call_id) if call_id not in (None, "") else "",
        "type": "function",
        "function": {"name": str(name or ""), "arguments": _arguments_text(arguments) or ""},
    }


def _parts_messages(value: Any, span: _Span, read: _SpanRead, key: str) -> list[_Msg]:
    """Messages from ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (``role`` + ``parts``)."""
    out: list[_Msg] = []
    if value is None:
        return out
    if not isinstance(value, list):
        read.note("content_missing", f"{key} on span {span.span_id} is not a list", span)
        return out
    for m in value:
        if not isinstance(m, dict):
            continue
        role = str(m.get("role") or "")
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        responses: list[tuple[str, str | None]] = []
        for part in m.get("parts") or []:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text":
                if isinstance(part.get("content"), str):
                    texts.append(part["content"])
            elif kind == "tool_call":
                calls.append(_call(part.get("id"), part.get("name"), part.get("arguments")))
            elif kind == "tool_call_response":
                responses.append((str(part.get("id") or ""), _text_of(part.get("response"))))
            else:
                read.note(
                    "unsupported_part", f"a {kind!r} part in {key} on span {span.span_id} was left out", span
                )
        if role == "system" and not texts and not calls:
            continue
        if responses:
            for rid, text in responses:
                out.append(_Msg(role="tool", content=text, tool_call_id=rid or None, span_id=span.span_id))
            if texts and role != "tool":
                out.append(_Msg(role=role, content="\n".join(texts), span_id=span.span_id))
            continue
        out.append(
            _Msg(
                role=role, content="\n".join(texts) if texts else None, tool_calls=calls, span_id=span.span_id
            )
        )
    return out


def _event_message(event: _Event, span_id: str) -> _Msg | None:
    body = event.body
    if body is None:
        raw = event.attributes.get("body", event.attributes.get("event.body"))
        if isinstance(raw, str):
            try:
                body = load_json_bounded(raw, source=None, what="the event body")
            except LocatedError:
                body = {"content": raw}
        elif isinstance(raw, dict):
            body = raw
        else:
            body = event.attributes
    if not isinstance(body, dict):
        body = {"content": body}
    role = _EVENT_ROLES[event.name]
    message = body.get("message") if event.name == "gen_ai.choice" else body
    if isinstance(message, str):
        try:
            message = load_json_bounded(message, source=None, what="the message")
        except LocatedError:
            message = {"content": message}
    if not isinstance(message, dict):
        message = {}
    calls_raw = message.get("tool_calls")
    if isinstance(calls_raw, str):
        try:
            calls_raw = load_json_bounded(calls_raw, source=None, what="the tool calls")
        except LocatedError:
            calls_raw = []
    calls = []
    for c in calls_raw or []:
        if isinstance(c, dict):
            fn_raw = c.get("function")
            fn: dict[str, Any] = fn_raw if isinstance(fn_raw, dict) else {}
            calls.append(
                _call(c.get("id"), fn.get("name", c.get("name")), fn.get("arguments", c.get("arguments")))
            )
    return _Msg(
        role=str(message.get("role") or role),
        content=_text_of(message.get("content")),
        tool_calls=calls,
        tool_call_id=str(body.get("id")) if role == "tool" and body.get("id") else None,
        span_id=span_id,
        time=event.time,
        truncated=event.dropped > 0,
    )


def _inputs_first(
    indexed: dict[tuple[str, int], dict[str, Any]], input_kind: str
) -> list[tuple[tuple[str, int], dict[str, Any]]]:
    """The indexed messages, the ``input_kind`` ones first, each kind by index."""
    return sorted(indexed.items(), key=lambda kv: (kv[0][0] != input_kind, kv[0][1]))


def _indexed(attrs: Mapping[str, Any], pattern: re.Pattern[str]) -> dict[tuple[str, int], dict[str, Any]]:
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for key, value in attrs.items():
        m = pattern.match(key)
        if m:
            out.setdefault((m.group(1), int(m.group(2))), {})[m.group(3)] = value
    return out


def _flat_message(fields: Mapping[str, Any], span: _Span, *, openinference: bool) -> _Msg:
    calls: dict[int, dict[str, Any]] = {}
    contents: dict[int, str] = {}
    for key, value in fields.items():
        m = _TOOL_CALL_KEY.match(key)
        if m:
            sub = m.group(2).removeprefix("tool_call.")
            calls.setdefault(int(m.group(1)), {})[sub] = value
            continue
        c = _OI_CONTENTS.match(key)
        if c and c.group(2) == "text" and isinstance(value, str):
            contents[int(c.group(1))] = value
    tool_calls = [
        _call(
            c.get("id"),
            c.get("function.name", c.get("name")),
            c.get("function.arguments", c.get("arguments")),
        )
        for _, c in sorted(calls.items())
    ]
    content = fields.get("content")
    if content is None and contents:
        content = "\n".join(v for _, v in sorted(contents.items()))
    return _Msg(
        role=str(fields.get("role") or ("assistant" if tool_calls else "")),
        content=_text_of(content),
        tool_calls=tool_calls,
        tool_call_id=str(fields["tool_call_id"]) if fields.get("tool_call_id") else None,
        name=str(fields["name"]) if openinference and fields.get("name") else None,
        span_id=span.span_id,
    )


def _read_span(span: _Span, log_events: Sequence[_Event]) -> _SpanRead:
    read = _SpanRead()
    a = span.attributes
    op = a.get("gen_ai.operation.name")
    oi_kind = str(a.get("openinference.span.kind") or "").upper()
    # GenAI message attributes
    if any(k in a for k in ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions")):
        read.conventions.add("genai-messages")
        read.is_model = True
        system = _json_attr(a.get("gen_ai.system_instructions"), span, "gen_ai.system_instructions", read)
        if isinstance(system, list):
            text = _text_of([p for p in system if isinstance(p, dict)])
            if text:
                read.inputs.append(_Msg(role="system", content=text, span_id=span.span_id))
        read.inputs += _parts_messages(
            _json_attr(a.get("gen_ai.input.messages"), span, "gen_ai.input.messages", read),
            span,
            read,
            "gen_ai.input.messages",
        )
        read.outputs += _parts_messages(
            _json_attr(a.get("gen_ai.output.messages"), span, "gen_ai.output.messages", read),
            span,
            read,
            "gen_ai.output.messages",
        )
    # GenAI per-message events (span events and log records)
    events = [e for e in (*span.events, *log_events) if e.name in _EVENT_ROLES]
    if events:
        read.conventions.add("genai-events")
        read.is_model = True
        for e in sorted(events, key=lambda e: e.time):
            msg = _event_message(e, span.span_id)
            if msg is None:
                continue
            (read.outputs if e.name == "gen_ai.choice" else read.inputs).append(msg)
    # OpenLLMetry indexed attributes, then OpenInference flattened attributes
    for convention, pattern, input_kind in _FLAT_CONVENTIONS:
        indexed = _indexed(a, pattern)
        if not indexed:
            continue
        read.conventions.add(convention)
        read.is_model = True
        for (kind, _), fields in _inputs_first(indexed, input_kind):
            msg = _flat_message(fields, span, openinference=convention == "openinference")
            if not msg.role:
                msg.role = "user" if kind == input_kind else "assistant"
            (read.inputs if kind == input_kind else read.outputs).append(msg)
    # tool executions
    if op == "execute_tool":
        read.conventions.add("genai-tool-spans")
        read.tool = {
            "id": a.get("gen_ai.tool.call.id"),
            "name": a.get("gen_ai.tool.name"),
            "arguments": a.get("gen_ai.tool.call.arguments"),
            "result": a.get("gen_ai.tool.call.result"),
            "has_result": "gen_ai.tool.call.result" in a,
        }
    elif oi_kind == "TOOL":
        read.conventions.add("openinference")
        read.tool = {
            "id": a.get("tool_call.id"),
            "name": a.get("tool.name"),
            "arguments": a.get("input.value", a.get("tool.parameters")),
            "result": a.get("output.value"),
            "has_result": "output.value" in a,
        }
    if not read.is_model and (op in ("chat", "text_completion", "generate_content") or oi_kind == "LLM"):
        read.is_model = True
        read.note(
            "content_missing",
            f"model span {span.span_id} ({span.name}) recorded no messages (content capture off?)",
            span,
        )
    return read


# ------------------------------------------------------------------------------------------- traces


@dataclass
class OtelImport:
    """The result of importing one OTLP file.

    Attributes:
        transcripts: One transcript per importable trace, in file order.
        reports: The fidelity report of each transcript (same order).
        problems: Located problems: traces refused (cycles, unknown conventions) and malformed spans.
    """

    transcripts: list[Transcript] = field(default_factory=list)
    reports: list[FidelityReport] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def _cycle(spans: Mapping[str, _Span]) -> list[str] | None:
    state: dict[str, int] = {}
    for start in spans:
        path: list[str] = []
        node: str | None = start
        while node is not None and node in spans and state.get(node, 0) == 0:
            state[node] = 1
            path.append(node)
            parent = spans[node].parent_id
            node = parent if parent else None
            if node is not None and state.get(node) == 1:
                return [*path[path.index(node) :], node]
        for n in path:
            state[n] = 2
    return None


def _merge(reads: Sequence[tuple[_Span, _SpanRead]], issues: list[FidelityIssue]) -> list[_Msg]:
    conversation: list[_Msg] = []
    for span, read in reads:
        if not read.inputs and not read.outputs:
            continue
        inputs = list(read.inputs)
        keys = [m.key() for m in conversation]
        new_keys = [m.key() for m in inputs]
        if not conversation:
            extra = inputs
        elif new_keys[: len(keys)] == keys:
            extra = inputs[len(keys) :]
        elif len(new_keys) <= len(keys) and keys[: len(new_keys)] == new_keys:
            extra = []  # a retry or a sub-call on an earlier part of the conversation: nothing new
        else:
            seen = set(keys)
            extra = [m for m in inputs if m.key() not in seen]
            issues.append(
                FidelityIssue(
                    kind="history_diverged",
                    detail=f"the input of model span {span.span_id} does not extend the conversation "
                    "read so far (the agent trimmed or rewrote its history); merged message by message",
                    span_id=span.span_id,
                )
            )
        for m in extra:
            m.time = m.time or span.start
        conversation.extend(extra)
        for m in read.outputs:
            m.time = m.time or span.end
        conversation.extend(read.outputs)
    return conversation


def _place_tools(conversation: list[_Msg], tools: Sequence[tuple[_Span, dict[str, Any]]]) -> None:
    """Pair tool executions with calls by id; fill missing results; add calls no model span recorded."""
    by_call: dict[str, int] = {}
    for i, m in enumerate(conversation):
        for c in m.tool_calls:
            if c["id"]:
                by_call.setdefault(c["id"], i)
    answered = {m.tool_call_id: i for i, m in enumerate(conversation) if m.role == "tool" and m.tool_call_id}
    for span, tool in tools:
        call_id = str(tool["id"]) if tool.get("id") else ""
        result = _text_of(tool.get("result")) if tool.get("has_result") else None
        if not call_id:
            # pair by name with the first unanswered call of that name
            for i, m in enumerate(conversation):
                hit = next(
                    (
                        c
                        for c in m.tool_calls
                        if c["function"]["name"] == tool.get("name") and c["id"] not in answered
                    ),
                    None,
                )
                if hit is not None:
                    call_id = hit["id"] or f"{span.span_id}"
                    if not hit["id"]:
                        hit["id"] = call_id
                        by_call[call_id] = i
                    break
            else:
                call_id = f"otel-{span.span_id}"
        if call_id in answered:
            msg = conversation[answered[call_id]]
            if msg.content is None and result is not None:
                msg.content = result
            continue
        if call_id not in by_call:
            # a tool execution no model span recorded: add the call where it happened
            call_msg = _Msg(
                role="assistant",
                tool_calls=[_call(call_id, tool.get("name"), tool.get("arguments"))],
                span_id=span.span_id,
                time=span.start,
            )
            pos = next(
                (i for i, m in enumerate(conversation) if m.time and m.time > span.start), len(conversation)
            )
            conversation.insert(pos, call_msg)
            by_call = {c["id"]: i for i, m in enumerate(conversation) for c in m.tool_calls if c["id"]}
            answered = {
                m.tool_call_id: i for i, m in enumerate(conversation) if m.role == "tool" and m.tool_call_id
            }
        if result is None and not tool.get("has_result"):
            continue
        at = by_call[call_id] + 1
        while at < len(conversation) and conversation[at].role == "tool":
            at += 1
        conversation.insert(
            at, _Msg(role="tool", content=result, tool_call_id=call_id, span_id=span.span_id, time=span.end)
        )
        by_call = {c["id"]: i for i, m in enumerate(conversation) for c in m.tool_calls if c["id"]}
        answered = {
            m.tool_call_id: i for i, m in enumerate(conversation) if m.role == "tool" and m.tool_call_id
        }


def _case_and_trial(spans: Sequence[_Span]) -> tuple[str | None, int | None]:
    case, trial = None, None
    for s in spans:
        for prefix in ("", "resource."):
            case = case or s.attributes.get(f"{prefix}judgekit.case_id")
            if trial is None and s.attributes.get(f"{prefix}judgekit.trial") is not None:
                trial = _int(s.attributes.get(f"{prefix}judgekit.trial")) or None
    return (str(case) if case else None), trial


def _build(
    trace_id: str, spans: list[_Span], logs: Sequence[tuple[str, _Event]], source: Path | None
) -> tuple[list[_Msg], FidelityReport, str | None, int | None] | Problem:
    by_id: dict[str, _Span] = {}
    for s in spans:
        if s.span_id in by_id:
            return Problem(source, None, s.where, f"trace {trace_id}: span id {s.span_id} appears twice")
        by_id[s.span_id] = s
    cycle = _cycle(by_id)
    if cycle:
        return Problem(
            source,
            None,
            by_id[cycle[0]].where,
            f"trace {trace_id}: the parent links form a cycle ({' -> '.join(cycle)}); a trace is a tree. "
            "Fix the exporter or the file; the trace was not imported",
        )
    issues: list[FidelityIssue] = []
    missing_parents = 0
    for s in spans:
        if s.parent_id and s.parent_id not in by_id:
            missing_parents += 1
            issues.append(
                FidelityIssue(
                    kind="missing_parent",
                    detail=f"span {s.span_id} ({s.name}) names parent {s.parent_id}, which is not in the "
                    "export (a partial trace: spans may be missing)",
                    span_id=s.span_id,
                )
            )
    ordered = sorted(spans, key=lambda s: (s.start, s.order))
    log_by_span: dict[str, list[_Event]] = {}
    orphan_logs: list[_Event] = []
    for span_id, event in logs:
        (log_by_span.setdefault(span_id, []) if span_id in by_id else orphan_logs).append(event)
    reads = [(s, _read_span(s, log_by_span.get(s.span_id, []))) for s in ordered]
    if orphan_logs:
        pseudo = _Span(trace_id, "", "", "logs", 0, 0, {}, [], -1, "resourceLogs")
        reads.append((pseudo, _read_span(pseudo, orphan_logs)))
    conventions = sorted({c for _, r in reads for c in r.conventions})
    if not conventions:
        keys = sorted({k for s in spans for k in s.attributes if not k.startswith("resource.")})
        shown = ", ".join(keys[:15]) + (" ..." if len(keys) > 15 else "") if keys else "(none)"
        return Problem(
            source,
            None,
            ordered[0].where if ordered else "",
            f"trace {trace_id}: no span uses a known convention (GenAI events, gen_ai.input.messages / "
            "gen_ai.output.messages, execute_tool spans, OpenLLMetry gen_ai.prompt.N.*, OpenInference "
            f"llm.input_messages.N.*); attribute keys seen: {shown}",
        )
    for _, r in reads:
        issues.extend(r.notes)
    conversation = _merge([(s, r) for s, r in reads if r.is_model], issues)
    _place_tools(conversation, [(s, r.tool) for s, r in reads if r.tool is not None])
    case, trial = _case_and_trial(spans)
    report = _fidelity(trace_id, conventions, spans, reads, conversation, issues, missing_parents)
    return conversation, report, case, trial


def _fidelity(  # noqa: PLR0917 - private helper
    trace_id: str,
    conventions: list[str],
    spans: Sequence[_Span],
    reads: Sequence[tuple[_Span, _SpanRead]],
    conversation: Sequence[_Msg],
    issues: list[FidelityIssue],
    missing_parents: int,
) -> FidelityReport:
    content_missing = sum(1 for i in issues if i.kind == "content_missing")
    truncated = sum(1 for i in issues if i.kind == "content_truncated")
    for s in spans:
        if s.dropped:
            truncated += 1
            issues.append(
                FidelityIssue(
                    kind="content_truncated",
                    detail=f"span {s.span_id} dropped {s.dropped} attribute(s) (an exporter limit)",
                    span_id=s.span_id,
                )
            )
    answered = {m.tool_call_id for m in conversation if m.role == "tool" and m.tool_call_id}
    calls = 0
    missing_results = 0
    unparseable = 0
    for i, m in enumerate(conversation):
        empty = m.content is None or not m.content.strip()
        if empty and (m.role in ("user", "system", "tool") or (m.role == "assistant" and not m.tool_calls)):
            content_missing += 1
            issues.append(
                FidelityIssue(
                    kind="content_missing",
                    detail=f"{m.role} message {i} has no content",
                    span_id=m.span_id or None,
                    message_index=i,
                )
            )
        elif m.truncated or (m.content and _TRUNCATION.search(m.content)):
            truncated += 1
            issues.append(
                FidelityIssue(
                    kind="content_truncated",
                    detail=f"{m.role} message {i} is truncated",
                    span_id=m.span_id or None,
                    message_index=i,
                )
            )
        for c in m.tool_calls:
            calls += 1
            if c["id"] not in answered:
                missing_results += 1
                issues.append(
                    FidelityIssue(
                        kind="tool_result_missing",
                        detail=f"tool call {c['id'] or '?'} ({c['function']['name']}) in message {i} "
                        "has no result",
                        span_id=m.span_id or None,
                        message_index=i,
                    )
                )
            args = c["function"]["arguments"]
            ok = False
            if args.strip() == "":
                ok = True
            else:
                try:
                    ok = isinstance(load_json_bounded(args, source=None, what="the arguments"), dict)
                except LocatedError:
                    ok = False
            if not ok:
                unparseable += 1
                issues.append(
                    FidelityIssue(
                        kind="arguments_unparseable",
                        detail=f"tool call {c['id'] or '?'} ({c['function']['name']}) in message {i} has "
                        "arguments "
                        f"that are not a JSON object: {args[:80]!r}",
                        span_id=m.span_id or None,
                        message_index=i,
                    )
                )
    roles = {m.role for m in conversation}
    final_only = bool(conversation) and "user" not in roles and "tool" not in roles and calls == 0
    if final_only:
        issues.append(
            FidelityIssue(
                kind="final_answer_only",
                detail="only the agent's answer was recorded: no user message and no tool call",
            )
        )
    history = sum(1 for i in issues if i.kind == "history_diverged")
    return FidelityReport(
        trace_id=trace_id,
        conventions=tuple(conventions),
        spans=len(spans),
        model_spans=sum(1 for _, r in reads if r.is_model),
        tool_spans=sum(1 for _, r in reads if r.tool is not None),
        messages=len(conversation),
        tool_calls=calls,
        content_missing=content_missing,
        content_truncated=truncated,
        tool_results_missing=missing_results,
        arguments_unparseable=unparseable,
        final_answer_only=final_only,
        missing_parents=missing_parents,
        history_diverged=history,
        issues=tuple(issues),
    )


def _to_transcript(
    messages: Sequence[_Msg], report: FidelityReport, case_id: str, trial: int, root: str | None
) -> Transcript:
    data: list[dict[str, Any]] = []
    for m in messages:
        if m.role not in ("system", "user", "assistant", "tool"):
            continue
        item: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            item["tool_calls"] = [dict(c) for c in m.tool_calls]
        if m.tool_call_id:
            item["tool_call_id"] = m.tool_call_id
        if m.name and m.role == "tool":
            item["name"] = m.name
        data.append(item)
    otel: dict[str, JsonValue] = {
        "trace_id": report.trace_id,
        "root_span_id": root,
        "conventions": list(report.conventions),
    }
    return Transcript.model_validate(
        {
            "case_id": case_id,
            "trial": trial,
            "messages": data,
            "metadata": {"otel": otel, "fidelity": report.model_dump(mode="json")},
        }
    )


def import_otlp(
    data: bytes | str, *, source: str | os.PathLike[str] | None = None, case_id: str | None = None
) -> OtelImport:
    """Import every trace of an OTLP JSON export.

    Args:
        data: The file's bytes.
        source: The file, for messages, as text or a path object.
        case_id: The case every trace belongs to, when the spans do not say (``judgekit.case_id`` on a span
            or the resource wins); without either, the trace id is the case id.

    Returns:
        The transcripts, their fidelity reports and the problems (refused traces, malformed spans).
        Trials are numbered per case in file order unless a span carries ``judgekit.trial``.

    Raises:
        JudgekitError: When the data is not JSON or not an OTLP export (no ``resourceSpans``).
    """
    source = Path(source) if source is not None else None
    try:
        doc = load_json_bounded(data, source=source, max_bytes=MAX_IMPORT_BYTES, what="the trace export")
    except LocatedError as exc:
        raise JudgekitError(f"{exc.problem}; expected an OTLP JSON trace export") from None
    if not isinstance(doc, dict) or not ("resourceSpans" in doc or "resourceLogs" in doc):
        raise JudgekitError(
            f"{source or '<input>'}: not an OTLP JSON export: expected a top-level 'resourceSpans' list "
            "(OTLP/JSON ExportTraceServiceRequest), optionally with 'resourceLogs'"
        )
    out = OtelImport()
    spans = _read_spans(doc, source, out.problems)
    logs = _read_logs(doc)
    groups: dict[str, list[_Span]] = {}
    for s in spans:
        groups.setdefault(s.trace_id, []).append(s)
    log_groups: dict[str, list[tuple[str, _Event]]] = {}
    for trace_id, span_id, event in logs:
        log_groups.setdefault(trace_id, []).append((span_id, event))
        groups.setdefault(trace_id, [])
    if not groups:
        raise JudgekitError(f"{source or '<input>'}: the export holds no spans")
    trials: dict[str, int] = {}
    for trace_id, members in groups.items():
        built = _build(trace_id, members, log_groups.get(trace_id, []), source)
        if isinstance(built, Problem):
            out.problems.append(built)
            continue
        messages, report, span_case, span_trial = built
        case = span_case or case_id or trace_id
        trial = span_trial or trials.get(case, 0) + 1
        trials[case] = max(trials.get(case, 0), trial)
        roots = [s.span_id for s in members if not s.parent_id]
        try:
            transcript = _to_transcript(messages, report, case, trial, roots[0] if roots else None)
        except ValueError as exc:
            out.problems.append(
                Problem(
                    source,
                    None,
                    "",
                    f"trace {trace_id}: cannot form a transcript: {str(exc).splitlines()[0]}",
                )
            )
            continue
        out.transcripts.append(transcript)
        out.reports.append(report)
    return out


# ------------------------------------------------------------------------------------------- export


def _kv(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        v: dict[str, Any] = {"boolValue": value}
    elif isinstance(value, int):
        v = {"intValue": str(value)}
    elif isinstance(value, float):
        v = {"doubleValue": value}
    else:
        v = {"stringValue": str(value)}
    return {"key": key, "value": v}


def evaluation_events(
    results: Iterable[Any],
    *,
    traces: Mapping[tuple[str, int], tuple[str, str | None]] | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Export judgekit verdicts as ``gen_ai.evaluation.result`` events (OTLP JSON logs).

    One event per trial (``gen_ai.evaluation.name = judgekit.case``) and one per check
    (``judgekit.<check id>``), with ``gen_ai.evaluation.score.label`` = the verdict (``pass``, ``fail``,
    ``insufficient_information``, ``error``, ``not_evaluated``), ``gen_ai.evaluation.score.value`` = the
    quality or check score when there is one, ``gen_ai.evaluation.explanation`` = the reason, and
    ``judgekit.trust`` / ``judgekit.layer`` / ``judgekit.gate`` / ``judgekit.case_id`` / ``judgekit.trial``.

    Args:
        results: Result lines (:class:`judgekit.results.ResultLine`).
        traces: ``(case id, trial) -> (trace id, span id)`` of the graded trace, so each event is parented
            to it; trials without one carry no trace context.
        now: The events' time (UTC now when ``None``).

    Returns:
        An OTLP JSON ``ExportLogsServiceRequest`` (``{"resourceLogs": [...]}``).
    """
    from judgekit.version import __version__

    stamp = str(int((now or datetime.now(UTC)).timestamp() * 1e9))
    records: list[dict[str, Any]] = []
    for line in results:
        trace_id, span_id = (traces or {}).get((line.case.id, line.trial), ("", None))

        def record(
            attrs: list[dict[str, Any]], trace_id: str = trace_id, span_id: str | None = span_id
        ) -> dict[str, Any]:
            rec: dict[str, Any] = {
                "timeUnixNano": stamp,
                "eventName": "gen_ai.evaluation.result",
                "attributes": [_kv("event.name", "gen_ai.evaluation.result"), *attrs],
            }
            if trace_id:
                rec["traceId"] = trace_id
            if span_id:
                rec["spanId"] = span_id
            return rec

        common = [_kv("judgekit.case_id", line.case.id), _kv("judgekit.trial", line.trial)]
        case_attrs = [
            _kv("gen_ai.evaluation.name", "judgekit.case"),
            _kv("gen_ai.evaluation.score.label", line.verdict.value),
            *common,
        ]
        if line.quality is not None:
            case_attrs.append(_kv("gen_ai.evaluation.score.value", float(line.quality)))
        if line.failure_categories:
            case_attrs.append(
                _kv(
                    "gen_ai.evaluation.explanation",
                    "failed: " + ", ".join(c.value for c in line.failure_categories),
                )
            )
        records.append(record(case_attrs))
        for check in line.checks:
            attrs = [
                _kv("gen_ai.evaluation.name", f"judgekit.{check.check_id}"),
                _kv("gen_ai.evaluation.score.label", check.verdict.value),
                _kv("judgekit.layer", check.layer),
                _kv("judgekit.gate", check.gate),
                _kv("judgekit.trust", check.trust.value),
                *common,
            ]
            if check.score is not None:
                attrs.append(_kv("gen_ai.evaluation.score.value", float(check.score)))
            if check.reason:
                attrs.append(_kv("gen_ai.evaluation.explanation", check.reason))
            records.append(record(attrs))
    return {
        "resourceLogs": [
            {
                "resource": {"attributes": [_kv("service.name", "judgekit")]},
                "scopeLogs": [{"scope": {"name": "judgekit", "version": __version__}, "logRecords": records}],
            }
        ]
    }


def trace_refs(transcripts: Iterable[Transcript]) -> dict[tuple[str, int], tuple[str, str | None]]:
    """``(case id, trial) -> (trace id, root span id)`` of transcripts imported from OTLP."""
    out: dict[tuple[str, int], tuple[str, str | None]] = {}
    for t in transcripts:
        otel = t.metadata.get("otel")
        if isinstance(otel, dict) and isinstance(otel.get("trace_id"), str):
            root = otel.get("root_span_id")
            out[(t.case_id, t.trial)] = (str(otel["trace_id"]), root if isinstance(root, str) else None)
    return out


def read_otlp_file(path: str | PathLike[str], *, case_id: str | None = None) -> OtelImport:
    """Read and import an OTLP JSON file.

    Args:
        path: The file, as text or a path object.
        case_id: The case id to give every trace (default: read from each trace).

    Raises:
        JudgekitError: When the file cannot be read or is not an OTLP JSON export.
    """
    path = Path(path)
    try:
        from judgekit.io.documents import read_regular

        data = read_regular(path, "OTLP export")
    except FileNotFoundError:
        raise JudgekitError(f"{path}: trace file not found") from None
    except OSError as exc:
        raise JudgekitError(f"{path}: cannot read the trace file: {exc.strerror}") from None
    return import_otlp(data, source=path, case_id=case_id)


def check_problems(result: OtelImport) -> None:
    """Raise the import's problems together when no trace could be imported.

    Raises:
        ProblemsError: When every trace was refused.
    """
    if result.problems and not result.transcripts:
        raise ProblemsError(result.problems)


class OtelExport(FrozenModel):
    """Verdicts exported as OTLP JSON logs (the ``otel_export`` document ``judgekit export otel`` prints).

    Attributes:
        results: The results file read.
        trials: Result lines read (>= 0).
        events: ``gen_ai.evaluation.result`` events written (one per trial and one per check).
        linked_to_traces: Events parented to an imported trace.
        problems: Lines of the results file that could not be read, each located.
        written: The logs file written; empty when the results file had no readable line (then nothing
            was written).
    """

    results: str
    trials: int = 0
    events: int = 0
    linked_to_traces: int = 0
    problems: list[Problem]
    written: list[WrittenFile] = Field(default_factory=list)


def export_evaluation_events(
    results: str | PathLike[str], out: str | PathLike[str], *, transcripts: str | PathLike[str] | None = None
) -> OtelExport:
    """Write a results file's verdicts as OTLP JSON logs (:func:`evaluation_events`) to ``out``.

    Args:
        results: The results file (JSONL) written by ``judgekit grade``.
        out: The OTLP JSON logs file to write (atomically).
        transcripts: Transcripts imported from OTLP, whose traces the events are parented to (``None``:
            no trace context).

    Returns:
        What was written; when the results file has no readable line nothing is written, ``written`` is
        empty and ``problems`` says why.
    """
    from judgekit.io.atomic import write_atomic
    from judgekit.results import read_results
    from judgekit.transcript import read_transcripts

    read = read_results(results)
    if read.problems and not read.lines:
        return OtelExport(results=str(results), problems=read.problems)
    refs = trace_refs(read_transcripts(transcripts)) if transcripts is not None else {}
    doc = evaluation_events(read.lines, traces=refs)
    write_atomic(out, json.dumps(doc, indent=1) + "\n")
    records = doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    return OtelExport(
        results=str(results),
        trials=len(read.lines),
        events=len(records),
        linked_to_traces=sum(1 for r in records if r.get("traceId")),
        problems=read.problems,
        written=[WrittenFile(path=str(out), what="otlp_logs")],
    )
