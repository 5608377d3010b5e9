"""Fidelity reports: what a lossy import lost, by capability, read back from the transcript."""

from __future__ import annotations

import pytest

from judgekit.errors import JudgekitError
from judgekit.fidelity import FidelityIssue, FidelityReport, fidelity_of, lost_by, lost_capabilities
from judgekit.transcript import Capability, Transcript


def report(**counts: object) -> FidelityReport:
    fields: dict[str, object] = {
        "trace_id": "t1",
        "conventions": ("openllmetry",),
        "spans": 3,
        "model_spans": 2,
        "tool_spans": 1,
        "messages": 5,
        "tool_calls": 1,
    }
    return FidelityReport.model_validate({**fields, **counts})


def test_a_report_with_nothing_missing_is_lossless() -> None:
    clean = report()
    assert clean.lossless
    assert lost_capabilities(clean) == {}
    assert clean.summary() == "trace t1 (openllmetry): 5 messages; 1 tool calls"


@pytest.mark.parametrize(
    ("counts", "lost"),
    [
        pytest.param(
            {"final_answer_only": True}, {Capability.TOOL_CALLS, Capability.CONVERSATION}, id="final"
        ),
        pytest.param(
            {"arguments_unparseable": 1}, {Capability.TOOL_CALLS, Capability.CONVERSATION}, id="args"
        ),
        pytest.param(
            {"tool_results_missing": 2}, {Capability.TOOL_RESULTS, Capability.CONVERSATION}, id="results"
        ),
        pytest.param(
            {"missing_parents": 1},
            {Capability.TOOL_CALLS, Capability.ASSISTANT_TEXT, Capability.CONVERSATION},
            id="partial_export",
        ),
        pytest.param({"history_diverged": 1}, {Capability.CONVERSATION}, id="diverged"),
        pytest.param({"content_missing": 1}, {Capability.CONVERSATION}, id="user_content_missing"),
    ],
)
def test_each_loss_rules_out_its_capabilities_and_never_the_final_state(
    counts: dict[str, object], lost: set[Capability]
) -> None:
    found = lost_capabilities(report(**counts))
    assert set(found) == lost
    assert Capability.FINAL_STATE not in found
    assert all(found.values())
    assert not report(**counts).lossless


def test_agent_text_is_lost_only_when_an_assistant_message_lost_content() -> None:
    issue = FidelityIssue(kind="content_truncated", detail="assistant message 3 truncated", message_index=3)
    found = lost_capabilities(report(content_truncated=1, issues=(issue,)))
    assert found[Capability.ASSISTANT_TEXT] == "agent message content lost (assistant message 3 truncated)"
    assert found[Capability.CONVERSATION] == "content missing on 0 and truncated on 1 message(s)"


def test_lost_by_reads_the_report_in_the_transcript_metadata() -> None:
    lossy = report(tool_results_missing=1)
    carried = Transcript(case_id="c", trial=1, metadata={"fidelity": lossy.model_dump(mode="json")})
    assert fidelity_of(carried) == lossy
    assert lost_by(carried) == lost_capabilities(lossy)
    plain = Transcript(case_id="c", trial=2)
    assert fidelity_of(plain) is None
    assert lost_by(plain) == {}


def test_a_malformed_stored_report_is_a_located_error() -> None:
    broken = Transcript(case_id="c", trial=4, metadata={"fidelity": {"trace_id": "t"}})
    with pytest.raises(
        JudgekitError, match=r"^transcript c#4: metadata\.fidelity is not a fidelity report \("
    ):
        fidelity_of(broken)
