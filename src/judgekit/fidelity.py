"""Fidelity: what an import of another harness's record kept and what it lost, next to the transcript.

An importer that cannot carry everything the agent did into a :class:`~judgekit.transcript.Transcript`
stores a :class:`FidelityReport` in ``transcript.metadata["fidelity"]``: counts of what was missing,
truncated, unparseable or diverged, and every issue located. :func:`lost_capabilities` turns a report into
the :class:`~judgekit.transcript.Capability` values the record failed to carry, each with its reason, and
:func:`lost_by` reads them from a transcript (empty for a transcript that is no lossy import). The layer
registry (:func:`judgekit.graders.registry.restrict_to_supported`) then makes the verdicts of the layers
needing a lost capability ``insufficient_information``, never ``pass``.

The OpenTelemetry importer (:mod:`judgekit.formats.otel`) and the Inspect AI log importer
(:mod:`judgekit.formats.inspect_logs`: a sample is a trace, its events the spans) write these reports; the
model lives here, below every importer and above the transcript, so that any importer can write one and the
graders can read one without importing a format.
"""

from __future__ import annotations

from judgekit.errors import JudgekitError
from judgekit.transcript import Capability, Transcript
from judgekit.verdict import FrozenModel

__all__ = ["FidelityIssue", "FidelityReport", "fidelity_of", "lost_by", "lost_capabilities"]


class FidelityIssue(FrozenModel):
    """One way the imported transcript falls short of the agent's real conversation.

    Attributes:
        kind: ``content_missing``, ``content_truncated``, ``tool_result_missing``, ``arguments_unparseable``,
            ``final_answer_only``, ``missing_parent``, ``history_diverged``, ``unsupported_part`` or
            ``final_state_missing`` (the record holds no world after the run: the state layer cannot
            decide, as for any transcript without a final state).
        detail: What and where, for people.
        span_id: The span concerned, when there is one.
        message_index: The transcript message concerned, when there is one.
    """

    kind: str
    detail: str
    span_id: str | None = None
    message_index: int | None = None


class FidelityReport(FrozenModel):
    """How faithfully a trace was turned into a transcript.

    Attributes:
        trace_id: The trace.
        conventions: The conventions its spans used.
        spans: Spans in the trace.
        model_spans: Spans that recorded a model call.
        tool_spans: Spans that recorded a tool execution.
        messages: Messages in the transcript.
        tool_calls: Tool calls in the transcript.
        content_missing: Messages without the content they should have (content capture off, or empty).
        content_truncated: Messages or attributes cut off by an exporter limit.
        tool_results_missing: Tool calls with no result.
        arguments_unparseable: Tool calls whose arguments are not a JSON object.
        final_answer_only: True when only the agent's answer was recorded: no user message, no tool call.
        missing_parents: Spans naming a parent the trace does not contain (the export is partial).
        history_diverged: Model calls whose input did not extend the conversation read so far.
        issues: Every issue, located.
    """

    trace_id: str
    conventions: tuple[str, ...]
    spans: int
    model_spans: int
    tool_spans: int
    messages: int
    tool_calls: int
    content_missing: int = 0
    content_truncated: int = 0
    tool_results_missing: int = 0
    arguments_unparseable: int = 0
    final_answer_only: bool = False
    missing_parents: int = 0
    history_diverged: int = 0
    issues: tuple[FidelityIssue, ...] = ()

    @property
    def lossless(self) -> bool:
        """True when nothing was lost."""
        return not lost_capabilities(self)

    def summary(self) -> str:
        """One line for people."""
        parts = [f"{self.messages} messages", f"{self.tool_calls} tool calls"]
        for name in (
            "content_missing",
            "content_truncated",
            "tool_results_missing",
            "arguments_unparseable",
            "missing_parents",
            "history_diverged",
        ):
            value = getattr(self, name)
            if value:
                parts.append(f"{name.replace('_', ' ')}: {value}")
        if self.final_answer_only:
            parts.append("final answer only")
        return f"trace {self.trace_id} ({', '.join(self.conventions)}): " + "; ".join(parts)


def lost_capabilities(report: FidelityReport) -> dict[Capability, str]:
    """What a trace failed to record, by :class:`~judgekit.transcript.Capability`, with the reason.

    * ``final_state``: never lost (world states come from snapshots, not from the trace).
    * ``tool_calls``: lost when only the final answer was recorded, an argument is unparseable, or a span
      names a parent missing from the export.
    * ``tool_results``: lost when a tool call has no result.
    * ``assistant_text``: lost when agent message content is missing or truncated, or the export is partial
      (a must-not-mention check would pass on what is missing).
    * ``conversation``: lost when anything at all is missing, truncated, unparseable or diverged.

    Which grader layers that rules out is the grading contract's business
    (:func:`judgekit.graders.registry.unsupported_layers`).
    """
    calls_lost: list[str] = []
    if report.final_answer_only:
        calls_lost.append("only the final answer was recorded (no tool calls, no user message)")
    if report.arguments_unparseable:
        calls_lost.append(f"{report.arguments_unparseable} tool call(s) have unparseable arguments")
    if report.missing_parents:
        calls_lost.append(f"{report.missing_parents} span(s) name a parent missing from the export")
    results_lost = (
        [f"{report.tool_results_missing} tool call(s) have no result"] if report.tool_results_missing else []
    )
    assistant_lost = [
        i.detail
        for i in report.issues
        if i.kind in ("content_missing", "content_truncated") and "assistant" in i.detail
    ]
    text_lost: list[str] = []
    if assistant_lost:
        text_lost.append(f"agent message content lost ({assistant_lost[0]})")
    if report.missing_parents:
        text_lost.append(f"{report.missing_parents} span(s) name a parent missing from the export")
    everything: list[str] = calls_lost + results_lost
    if report.content_missing or report.content_truncated:
        everything.append(
            f"content missing on {report.content_missing} and truncated on "
            f"{report.content_truncated} message(s)"
        )
    if report.history_diverged:
        everything.append(f"{report.history_diverged} model call(s) had a history that diverged")
    found = {
        Capability.TOOL_CALLS: calls_lost,
        Capability.TOOL_RESULTS: results_lost,
        Capability.ASSISTANT_TEXT: text_lost,
        Capability.CONVERSATION: everything,
    }
    return {cap: "; ".join(items) for cap, items in found.items() if items}


def fidelity_of(transcript: Transcript) -> FidelityReport | None:
    """The fidelity report an import stored in ``transcript.metadata["fidelity"]``, if any.

    Raises:
        JudgekitError: When the stored report is malformed.
    """
    data = transcript.metadata.get("fidelity")
    if data is None:
        return None
    try:
        return FidelityReport.model_validate(data)
    except ValueError as exc:
        raise JudgekitError(
            f"transcript {transcript.case_id}#{transcript.trial}: metadata.fidelity is not a fidelity report "
            f"({str(exc).splitlines()[0]})"
        ) from None


def lost_by(transcript: Transcript) -> dict[Capability, str]:
    """What the trace behind a transcript failed to record (empty for a transcript that is no import).

    Raises:
        JudgekitError: When the stored fidelity report is malformed.
    """
    report = fidelity_of(transcript)
    return lost_capabilities(report) if report is not None else {}
