"""OTLP trace import: each convention's fixture (written for judgekit) imported with its fidelity report."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from judgekit.errors import JudgekitError, ProblemsError
from judgekit.fidelity import FidelityReport, fidelity_of, lost_by, lost_capabilities
from judgekit.formats.otel import (
    check_problems,
    evaluation_events,
    import_otlp,
    read_otlp_file,
    trace_refs,
)
from judgekit.graders import registry
from judgekit.results import CaseRef, make_result_line
from judgekit.transcript import Capability, Transcript
from judgekit.verdict import CheckResult, Grade, Trust, Verdict
from support import load_file

FIXTURES = Path(__file__).parent / "fixtures" / "otel"


def supportable_layers(report: FidelityReport) -> dict[str, str | None]:
    """Every registered layer with why the trace cannot support it (``None`` when it can)."""
    ruled_out = registry.unsupported_layers(lost_capabilities(report))
    return {info.name: ruled_out.get(info.name) for info in registry.registered_layers()}


def restrict_to_supported(checks: list[CheckResult], report: FidelityReport | None) -> list[CheckResult]:
    return registry.restrict_to_supported(checks, lost_capabilities(report) if report is not None else None)


LOSSLESS = ["genai_events.json", "genai_messages.json", "openinference.json"]


def shape(t: Transcript) -> list[tuple[Any, ...]]:
    return [
        (
            m.role,
            m.content,
            tuple((c.id, c.name, json.dumps(c.arguments)) for c in m.tool_calls),
            m.tool_call_id,
        )
        for m in t.messages
    ]


EXPECTED = [
    ("system", "You are the refunds agent of Example Air. Refund only delivered orders.", (), None),
    ("user", "Please refund my order A17.", (), None),
    ("assistant", None, (("call_1", "lookup_order", '{"order_id": "A17"}'),), None),
    ("tool", '{"order_id": "A17", "status": "delivered", "amount": 42.5}', (), "call_1"),
    ("assistant", None, (("call_2", "issue_refund", '{"order_id": "A17", "amount": 42.5}'),), None),
    ("tool", '{"ok": true, "refund_id": "R-9"}', (), "call_2"),
    ("assistant", "Your refund of 42.50 for order A17 is issued (reference R-9).", (), None),
]


@pytest.mark.parametrize("name", LOSSLESS)
def test_lossless_conventions_give_the_same_transcript(name: str) -> None:
    result = read_otlp_file(FIXTURES / name)
    assert result.problems == []
    [t] = result.transcripts
    [report] = result.reports
    assert t.case_id == "refund-a17"
    assert t.trial == 1
    assert shape(t) == EXPECTED
    # calls pair with their results by id
    assert [(c.call.name, c.result is not None) for c in t.calls()] == [
        ("lookup_order", True),
        ("issue_refund", True),
    ]
    assert report.lossless
    assert all(v is None for v in supportable_layers(report).values())
    assert report.tool_calls == 2
    assert report.issues == ()


def test_conventions_are_named() -> None:
    names = {n: read_otlp_file(FIXTURES / n).reports[0].conventions for n in [*LOSSLESS, "openllmetry.json"]}
    assert names == {
        "genai_events.json": ("genai-events", "genai-tool-spans"),
        "genai_messages.json": ("genai-messages", "genai-tool-spans"),
        "openinference.json": ("openinference",),
        "openllmetry.json": ("openllmetry",),
    }


def test_openllmetry_lossy_trace_and_its_fidelity_report() -> None:
    result = read_otlp_file(FIXTURES / "openllmetry.json")
    [t] = result.transcripts
    [report] = result.reports
    assert report.arguments_unparseable == 1
    assert report.tool_results_missing == 1
    assert report.missing_parents == 3
    kinds = {i.kind for i in report.issues}
    assert {"arguments_unparseable", "tool_result_missing", "missing_parent"} <= kinds
    refund = t.calls()[1]
    assert refund.call.name == "issue_refund"
    assert refund.call.arguments is None
    assert refund.call.raw_arguments == '{"order_id": "A17", '
    assert refund.result is None
    layers = supportable_layers(report)
    assert layers["state"] is None
    assert "missing from the export" in (layers["text"] or "")  # a partial export may lack agent messages
    assert "unparseable arguments" in (layers["route"] or "")
    assert "no result" in (layers["rules"] or "")
    assert layers["rubric"] is not None
    # the report travels with the transcript and reads back
    again = Transcript.model_validate_json(t.model_dump_json())
    assert fidelity_of(again) == report


def test_final_answer_only() -> None:
    [report] = read_otlp_file(FIXTURES / "final_answer_only.json").reports
    assert report.final_answer_only
    layers = supportable_layers(report)
    assert layers["text"] is None
    assert "only the final answer" in (layers["route"] or "")
    assert layers["rubric"] is not None


def test_cycle_is_refused_and_named() -> None:
    result = read_otlp_file(FIXTURES / "cycle.json")
    assert result.transcripts == []
    [problem] = result.problems
    assert "cycle" in problem.message
    assert "a500000000000001 -> a500000000000003 -> a500000000000002 -> a500000000000001" in problem.message
    with pytest.raises(ProblemsError, match="cycle"):
        check_problems(result)


def test_unknown_convention_is_named_with_the_keys_seen() -> None:
    result = read_otlp_file(FIXTURES / "unknown_convention.json")
    [problem] = result.problems
    assert "no span uses a known convention" in problem.message
    assert "http.request.method" in problem.message


def kv(d: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": {"stringValue": v}} for k, v in d.items()]


def export(*spans: dict[str, Any], logs: list[dict[str, Any]] | None = None) -> str:
    doc: dict[str, Any] = {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}
    if logs is not None:
        doc["resourceLogs"] = [{"scopeLogs": [{"logRecords": logs}]}]
    return json.dumps(doc)


def span(
    sid: str, attrs: dict[str, str], *, parent: str = "", start: int = 0, trace: str = "t1", **extra: Any
):
    return {
        "traceId": trace,
        "spanId": sid,
        "parentSpanId": parent,
        "name": sid,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 5),
        "attributes": kv(attrs),
        **extra,
    }


def test_log_record_events_attach_to_their_span() -> None:
    logs = [
        {
            "traceId": "t1",
            "spanId": "s1",
            "timeUnixNano": "1",
            "eventName": "gen_ai.user.message",
            "body": {"kvlistValue": {"values": [{"key": "content", "value": {"stringValue": "hello"}}]}},
        },
        {
            "traceId": "t1",
            "spanId": "s1",
            "timeUnixNano": "2",
            "attributes": kv({"event.name": "gen_ai.choice"}),
            "body": {
                "kvlistValue": {
                    "values": [
                        {
                            "key": "message",
                            "value": {
                                "kvlistValue": {
                                    "values": [
                                        {"key": "role", "value": {"stringValue": "assistant"}},
                                        {"key": "content", "value": {"stringValue": "hi there"}},
                                    ]
                                }
                            },
                        }
                    ]
                }
            },
        },
    ]
    result = import_otlp(export(span("s1", {"gen_ai.operation.name": "chat"}), logs=logs), case_id="c9")
    [t] = result.transcripts
    assert [(m.role, m.content) for m in t.messages] == [("user", "hello"), ("assistant", "hi there")]
    assert t.case_id == "c9"
    assert result.reports[0].conventions == ("genai-events",)


def test_truncated_json_attribute_and_missing_content_are_reported() -> None:
    full = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "please refund A17"}]}])
    result = import_otlp(
        export(
            span("s1", {"gen_ai.operation.name": "chat", "gen_ai.input.messages": full[:25]}),
            span("s2", {"gen_ai.operation.name": "chat"}, start=10),
        )
    )
    [report] = result.reports
    assert report.content_truncated >= 1
    assert any("not usable JSON (malformed JSON" in i.detail for i in report.issues)
    assert any("recorded no messages" in i.detail for i in report.issues)
    assert report.content_missing >= 1
    assert supportable_layers(report)["rubric"] is not None


def test_tool_span_without_a_recorded_call_adds_the_call() -> None:
    out = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "done"}]}])
    inp = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "do it"}]}])
    result = import_otlp(
        export(
            span("m1", {"gen_ai.operation.name": "chat", "gen_ai.input.messages": inp}, start=0),
            span(
                "x1",
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "do_it",
                    "gen_ai.tool.call.id": "k1",
                    "gen_ai.tool.call.arguments": '{"a": 1}',
                    "gen_ai.tool.call.result": "ok",
                },
                start=10,
            ),
            span(
                "m2",
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.input.messages": inp,
                    "gen_ai.output.messages": out,
                },
                start=20,
            ),
        )
    )
    [t] = result.transcripts
    assert [(m.role, m.content) for m in t.messages] == [
        ("user", "do it"),
        ("assistant", None),
        ("tool", "ok"),
        ("assistant", "done"),
    ]
    assert t.messages[1].tool_calls[0].arguments == {"a": 1}
    assert t.calls()[0].result == "ok"


def test_history_divergence_is_noted() -> None:
    def msgs(*texts: str) -> str:
        return json.dumps([{"role": "user", "parts": [{"type": "text", "content": x}]} for x in texts])

    result = import_otlp(
        export(
            span("m1", {"gen_ai.operation.name": "chat", "gen_ai.input.messages": msgs("a", "b")}, start=0),
            span("m2", {"gen_ai.operation.name": "chat", "gen_ai.input.messages": msgs("b", "c")}, start=10),
        )
    )
    [t] = result.transcripts
    assert [m.content for m in t.messages] == ["a", "b", "c"]
    assert result.reports[0].history_diverged == 1


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ("not json", "t.json:1: malformed JSON: Expecting value"),
        ('{"spans": []}', "not an OTLP JSON export"),
        ('{"resourceSpans": []}', "holds no spans"),
    ],
)
def test_not_otlp_is_a_clear_error(doc: str, message: str) -> None:
    with pytest.raises(JudgekitError, match=message):
        import_otlp(doc, source=Path("t.json"))


def test_span_without_ids_and_duplicate_ids_are_located() -> None:
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.output.messages": "[]"}
    result = import_otlp(export(span("s1", attrs), span("s1", attrs), {"name": "no ids"}))
    fields = sorted(p.field for p in result.problems)
    assert fields == ["resourceSpans.0.scopeSpans.0.spans.1", "resourceSpans.0.scopeSpans.0.spans.2"]
    assert any("appears twice" in p.message for p in result.problems)
    assert any("no traceId or spanId" in p.message for p in result.problems)


def test_trials_are_numbered_per_case() -> None:
    attrs = {
        "gen_ai.operation.name": "chat",
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "x"}]}]
        ),
    }
    result = import_otlp(export(span("a", attrs, trace="t1"), span("b", attrs, trace="t2")), case_id="c")
    assert [(t.case_id, t.trial) for t in result.transcripts] == [("c", 1), ("c", 2)]


def check(layer: str, verdict: Verdict) -> CheckResult:
    return CheckResult(
        check_id=f"{layer}:0", layer=layer, verdict=verdict, reason="" if verdict is Verdict.PASS else "r"
    )


def test_lossy_layers_become_insufficient_never_pass() -> None:
    [report] = read_otlp_file(FIXTURES / "openllmetry.json").reports
    checks = [
        check("state", Verdict.PASS),
        check("route", Verdict.PASS),
        check("rules", Verdict.FAIL),
        check("rubric", Verdict.ERROR),
        check("text", Verdict.PASS),
    ]
    out = restrict_to_supported(checks, report)
    assert [c.verdict for c in out] == [
        Verdict.PASS,
        Verdict.INSUFFICIENT_INFORMATION,
        Verdict.INSUFFICIENT_INFORMATION,
        Verdict.ERROR,
        Verdict.INSUFFICIENT_INFORMATION,
    ]
    assert out[1].reason.startswith("lossy trace:")
    assert out[1].evidence[-1].data["original_verdict"] == "pass"
    assert checks[1].verdict is Verdict.PASS  # inputs untouched
    assert restrict_to_supported(checks, None) == checks
    [lossless] = read_otlp_file(FIXTURES / "genai_messages.json").reports
    assert restrict_to_supported(checks, lossless) == checks
    [final_only] = read_otlp_file(FIXTURES / "final_answer_only.json").reports
    kept = restrict_to_supported(checks, final_only)
    assert [c.verdict for c in kept][-1] is Verdict.PASS  # the text layer needs only the agent's answer
    assert kept[1].verdict is Verdict.INSUFFICIENT_INFORMATION


def test_lost_by_reads_the_report_a_transcript_carries() -> None:
    [lossy] = read_otlp_file(FIXTURES / "openllmetry.json").transcripts
    [lossless] = read_otlp_file(FIXTURES / "genai_messages.json").transcripts
    assert lost_by(lossless) == {}
    assert set(lost_by(lossy)) == {
        Capability.TOOL_CALLS,
        Capability.TOOL_RESULTS,
        Capability.ASSISTANT_TEXT,
        Capability.CONVERSATION,
    }
    assert lost_by(Transcript(case_id="c", trial=1)) == {}


def test_verdicts_export_as_evaluation_events() -> None:
    [t] = read_otlp_file(FIXTURES / "genai_events.json").transcripts
    line = make_result_line(
        run_id="r",
        case=CaseRef(id="refund-a17", version=1),
        grade=Grade(
            case_id="refund-a17",
            trial=1,
            verdict=Verdict.FAIL,
            quality=0.5,
            checks=(
                CheckResult(
                    check_id="criterion:honest",
                    layer="rubric",
                    verdict=Verdict.FAIL,
                    reason="claims success",
                    trust=Trust.UNTRUSTED,
                    gate=True,
                ),
            ),
        ),
    )
    doc = evaluation_events([line], traces=trace_refs([t]), now=datetime(2026, 1, 1, tzinfo=UTC))
    records = doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    assert len(records) == 2
    assert all(r["eventName"] == "gen_ai.evaluation.result" for r in records)
    assert {r["traceId"] for r in records} == {"4bf92f3577b34da6a3ce929d0e0e4736"}
    assert {r["spanId"] for r in records} == {"a000000000000001"}
    attrs = {a["key"]: a["value"] for a in records[1]["attributes"]}
    assert attrs["gen_ai.evaluation.name"] == {"stringValue": "judgekit.criterion:honest"}
    assert attrs["gen_ai.evaluation.score.label"] == {"stringValue": "fail"}
    assert attrs["gen_ai.evaluation.explanation"] == {"stringValue": "claims success"}
    assert attrs["judgekit.trust"] == {"stringValue": "untrusted"}
    case_attrs = {a["key"]: a["value"] for a in records[0]["attributes"]}
    assert case_attrs["gen_ai.evaluation.score.value"] == {"doubleValue": 0.5}
    # the export reads back through the importer's attribute decoder
    assert json.loads(json.dumps(doc)) == doc


def test_fixtures_are_reproducible(tmp_path: Path) -> None:
    module = load_file(FIXTURES / "generate.py", "otel_fixture_gen")
    for name, build in module.FIXTURES.items():
        assert json.loads((FIXTURES / name).read_text()) == build(), name


def test_a_trace_file_named_as_text_is_named_in_errors(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('{"spans": []}')
    with pytest.raises(JudgekitError, match=r"t\.json: not an OTLP JSON export") as exc:
        import_otlp(path.read_text(), source=str(path))
    assert str(exc.value).startswith(f"{path}: ")
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.output.messages": "[]"}
    path.write_text(export(span("s1", attrs), {"name": "no ids"}))
    result = import_otlp(path.read_text(), source=str(path))
    assert result.problems
    assert all(p.file == path for p in result.problems)
