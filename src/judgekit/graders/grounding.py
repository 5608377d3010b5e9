"""Grounding: the case's expected sources were actually retrieved or cited in the transcript.

A case's ``expected.sources`` name the approved documents or records the answer must rest on
(``BAG-2``, ``ISA-Terms-2026``). This deterministic layer looks for each one in the transcript:

* **retrieved**: a tool returned it: the source id appears in a tool result that is not an error, or in
  the arguments of a call whose result is not an error (``get_policy(doc_id="BAG-2")`` answered);
* **cited**: an assistant message names it.

Source ids are matched as whole tokens, case-insensitively, with any run of spaces, hyphens, underscores,
dots or slashes between their parts: ``BAG-2`` is found in ``bag 2`` and ``(BAG-2)`` but not in ``BAG-20``
or ``XBAG-2``.

Verdicts, one check per expected source (``grounding:<source>``):

* ``pass`` when the source was found as the ``mode`` requires;
* ``fail`` (category ``incorrect_reporting``) when it was not, with where it was found instead (retrieved
  but never cited, for example) as evidence;
* ``insufficient_information`` when it was not found but the transcript is lossy: some tool calls have no
  recorded result, so a retrieval cannot be ruled out;
* one ``not_evaluated`` check when the case expects no sources.

The checks are scored (weight 1, score 1.0 or 0.0) and do not gate by default, like must-mention: an
answer that does not show its source lowers quality; pass ``gate=True`` to make grounding a gate.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from judgekit.cases import Case
from judgekit.graders.contract import Layer, LayerInfo, describe_layer, make_check, not_evaluated
from judgekit.textnorm import excerpt
from judgekit.transcript import Capability, Transcript
from judgekit.verdict import CheckResult, Evidence, FailureCategory, Verdict

if TYPE_CHECKING:
    from judgekit.graders.context import LayerContext

__all__ = ["LAYER", "GroundingLayer", "GroundingMode", "SourceHit", "check_grounding", "find_source"]

LAYER = Layer.GROUNDING.value
"""The layer name every check of this module reports."""

GroundingMode = Literal["retrieved_or_cited", "retrieved", "cited", "retrieved_and_cited"]
MODES: tuple[GroundingMode, ...] = ("retrieved_or_cited", "retrieved", "cited", "retrieved_and_cited")

_SEP = r"[\s_\-./\u2010-\u2015]*"


def _pattern(source: str) -> re.Pattern[str]:
    parts = [p for p in re.split(r"[\s_\-./\u2010-\u2015]+", source.strip()) if p]
    body = _SEP.join(re.escape(p) for p in parts) if parts else re.escape(source)
    return re.compile(rf"(?<![A-Za-z0-9]){body}(?![A-Za-z0-9])", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class SourceHit:
    """Where a source was found.

    Attributes:
        how: ``retrieved`` (tool result or answered call arguments) or ``cited`` (assistant text).
        message_index: The message it was found in.
        call_index: The tool call, for retrievals.
        tool: The tool's name, for retrievals.
        quote: The text around the match.
    """

    how: str
    message_index: int
    call_index: int | None
    tool: str | None
    quote: str


def _excerpt(text: str, m: re.Match[str], width: int = 60) -> str:
    """The match with up to ``width`` characters either side, cut between words, on one line."""
    return excerpt(text, m.start(), m.end(), context=width).replace("\n", " ")


def find_source(source: str, transcript: Transcript) -> list[SourceHit]:
    """Every place ``source`` was retrieved or cited in ``transcript``, in message order."""
    pattern = _pattern(source)
    hits: list[SourceHit] = []
    result_index: dict[str, int] = {
        m.tool_call_id: i for i, m in enumerate(transcript.messages) if m.role == "tool" and m.tool_call_id
    }
    for call in transcript.calls():
        if call.result is None or call.is_error:
            continue
        found = pattern.search(call.result)
        if found:
            where = result_index.get(call.call.id, call.message_index)
            hits.append(
                SourceHit("retrieved", where, call.index, call.call.name, _excerpt(call.result, found))
            )
            continue
        args = call.call.arguments if call.call.arguments is not None else call.call.raw_arguments
        args_text = json.dumps(args, ensure_ascii=False) if not isinstance(args, str) else args
        if args_text:
            found = pattern.search(args_text)
            if found:
                hits.append(
                    SourceHit(
                        "retrieved",
                        call.message_index,
                        call.index,
                        call.call.name,
                        _excerpt(args_text, found),
                    )
                )
    for index, text in transcript.assistant_texts():
        found = pattern.search(text)
        if found:
            hits.append(SourceHit("cited", index, None, None, _excerpt(text, found)))
    return sorted(hits, key=lambda h: (h.message_index, h.how))


def _satisfied(mode: GroundingMode, retrieved: bool, cited: bool) -> bool:
    if mode == "retrieved":
        return retrieved
    if mode == "cited":
        return cited
    if mode == "retrieved_and_cited":
        return retrieved and cited
    return retrieved or cited


_WANTS = {
    "retrieved_or_cited": "retrieved by a tool or cited in a reply",
    "retrieved": "retrieved by a tool",
    "cited": "cited in a reply",
    "retrieved_and_cited": "both retrieved by a tool and cited in a reply",
}


def check_grounding(
    case: Case,
    transcript: Transcript,
    *,
    mode: GroundingMode = "retrieved_or_cited",
    gate: bool = False,
) -> list[CheckResult]:
    """Check that each of the case's expected sources was retrieved or cited (see the module docstring).

    Args:
        case: The case (its ``expected.sources``).
        transcript: The trial.
        mode: What counts as grounded: ``retrieved_or_cited`` (default), ``retrieved``, ``cited`` or
            ``retrieved_and_cited``.
        gate: Whether a missing source fails the case (default: scored only).

    Returns:
        One check per expected source, or one ``not_evaluated`` check when there is none.

    Raises:
        ValueError: For an unknown mode.
    """
    if mode not in MODES:
        raise ValueError(f"unknown grounding mode {mode!r}; use one of {', '.join(MODES)}")
    sources = list(dict.fromkeys(case.expected.sources)) if case.expected else []
    if not sources:
        return [not_evaluated(LAYER, Layer.GROUNDING, "the case lists no expected sources", gate=gate)]
    unanswered = [c for c in transcript.calls() if c.result is None]
    out: list[CheckResult] = []
    for source in sources:
        hits = find_source(source, transcript)
        retrieved = any(h.how == "retrieved" for h in hits)
        cited = any(h.how == "cited" for h in hits)
        evidence = tuple(
            Evidence(
                kind="call" if h.how == "retrieved" else "text",
                summary=(
                    f"{source} retrieved by {h.tool} (call {h.call_index})"
                    if h.how == "retrieved"
                    else f"{source} cited in message {h.message_index}"
                ),
                call_index=h.call_index,
                tool=h.tool,
                quote=h.quote,
                message_index=h.message_index,
            )
            for h in hits[:5]
        )
        check_id = f"{LAYER}:{source}"
        if _satisfied(mode, retrieved, cited):
            how = " and ".join(w for w, ok in (("retrieved", retrieved), ("cited", cited)) if ok)
            out.append(
                make_check(
                    check_id,
                    Layer.GROUNDING,
                    Verdict.PASS,
                    gate=gate,
                    reason=f"{source} was {how}",
                    evidence=evidence,
                )
            )
            continue
        seen = (
            "it was only retrieved, never cited"
            if retrieved
            else "it was only cited, never retrieved"
            if cited
            else "it appears nowhere in the tool results or the replies"
        )
        reason = f"expected source {source} was not {_WANTS[mode]}: {seen}"
        if not retrieved and unanswered and mode != "cited":
            out.append(
                make_check(
                    check_id,
                    Layer.GROUNDING,
                    Verdict.INSUFFICIENT_INFORMATION,
                    gate=gate,
                    reason=(
                        f"{reason}; but {len(unanswered)} tool call(s) have no recorded result (calls "
                        f"{', '.join(str(c.index) for c in unanswered[:5])}), so a retrieval cannot be "
                        "ruled out"
                    ),
                    evidence=evidence,
                )
            )
            continue
        out.append(
            make_check(
                check_id,
                Layer.GROUNDING,
                Verdict.FAIL,
                gate=gate,
                reason=reason,
                category=FailureCategory.INCORRECT_REPORTING,
                evidence=evidence,
            )
        )
    return out


class GroundingLayer:
    """The grounding layer, optional: :func:`check_grounding` in the mode the grading gives (``mode``)."""

    info: LayerInfo = describe_layer(
        LAYER,
        (Capability.TOOL_RESULTS, Capability.ASSISTANT_TEXT),
        "expected sources retrieved or cited",
        optional=True,
    )

    def checks(self, case: Case, transcript: Transcript, context: LayerContext) -> list[CheckResult]:
        """One scored check per expected source; one ``error`` check for a mode not in :data:`MODES`."""
        mode = context.args(self.info).get("mode")
        for known in MODES:
            if mode == known:
                return check_grounding(case, transcript, mode=known)
        return [
            make_check(
                LAYER,
                Layer.GROUNDING,
                Verdict.ERROR,
                gate=False,
                reason=f"grounding mode {mode!r} is not one of " + ", ".join(MODES),
            )
        ]
