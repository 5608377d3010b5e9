"""Small builders for grader tests: cases and transcripts from a few lines."""

from __future__ import annotations

import json
from typing import Any

from judgekit.cases import Case
from judgekit.transcript import Transcript

Call = tuple[str, Any]  # (tool, arguments as a dict, or a raw string sent verbatim)


def make_case(**fields: Any) -> Case:
    data: dict[str, Any] = {"id": "case-1", "input": "help me"}
    data.update(fields)
    return Case.model_validate(data)


def make_transcript(
    calls: list[Call] | None = None,
    *,
    case_id: str = "case-1",
    texts: list[str] | None = None,
    results: list[str | None] | None = None,
    user: str = "please help",
    final_state: Any = None,
    initial_state: Any = None,
    messages: list[dict[str, Any]] | None = None,
) -> Transcript:
    """A transcript: one user message, then each call in its own assistant message with a result."""
    msgs: list[dict[str, Any]] = [{"role": "user", "content": user}]
    for i, (tool, args) in enumerate(calls or []):
        raw = args if isinstance(args, str) else json.dumps(args)
        msgs.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": f"c{i}", "type": "function", "function": {"name": tool, "arguments": raw}}
                ],
            }
        )
        result = results[i] if results is not None and i < len(results) else "ok"
        if result is not None:
            msgs.append({"role": "tool", "tool_call_id": f"c{i}", "content": result})
    for text in texts or []:
        msgs.append({"role": "assistant", "content": text})
    msgs.extend(messages or [])
    data: dict[str, Any] = {"case_id": case_id, "messages": msgs}
    if final_state is not None:
        data["final_state"] = final_state
    if initial_state is not None:
        data["initial_state"] = initial_state
    return Transcript.model_validate(data)


def by_id(checks: list[Any]) -> dict[str, Any]:
    return {c.check_id: c for c in checks}
