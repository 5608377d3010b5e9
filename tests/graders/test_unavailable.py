"""The ``unavailable_data`` diagnosis on hand-written trials: the category, and the near-misses that are not.

Issue 35: ``unavailable_data``, one of the seven failure categories, was defined and produced nowhere.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import judgekit
from graders._build import make_case
from judgekit.graders.unavailable import diagnose_unavailable_data, no_record, says_data_missing
from judgekit.results import CaseRef, dump_result_line, failure_categories, make_result_line
from judgekit.verdict import FailureCategory, Grade, Verdict

TOOLS = ["get_prescription", "refill_prescription", "transfer_to_human"]


def _case(**extra: Any) -> judgekit.Case:
    """Refill RX-7 for P-100; refilling a prescription the pharmacy does not have (RX-9) is forbidden."""
    fields: dict[str, Any] = {
        "tools": TOOLS,
        "forbidden": [
            {
                "tool": "refill_prescription",
                "when": "prescription_id != 'RX-7'",
                "description": "refill only a prescription on file",
            }
        ],
    }
    fields.update(extra)
    return make_case(**fields)


def _trial(*steps: tuple[str, Any, str | None] | str) -> judgekit.Transcript:
    """A trial: each ``(tool, arguments, result)`` step one assistant call and its result, a text a reply."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Please refill my prescription RX-9."}]
    for n, step in enumerate(steps):
        if isinstance(step, str):
            messages.append({"role": "assistant", "content": step})
            continue
        tool, args, result = step
        call = {"id": f"c{n}", "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        if result is not None:
            messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": result})
    return judgekit.Transcript.model_validate({"case_id": "case-1", "messages": messages})


NOT_ON_FILE = (
    "get_prescription",
    {"prescription_id": "RX-9"},
    "Error: no prescription RX-9 for patient P-100",
)
REFILL_RX9 = ("refill_prescription", {"prescription_id": "RX-9"}, '{"status": "queued"}')


def _checks(grade: Grade) -> dict[str, Any]:
    return {c.check_id: c for c in grade.checks}


def test_a_failed_trial_that_went_on_after_a_tool_error_is_unavailable_data() -> None:
    grade = judgekit.grade(_case(), _trial(NOT_ON_FILE, REFILL_RX9, "Done: your refill of RX-9 is queued."))
    assert grade.verdict is Verdict.FAIL
    check = _checks(grade)["unavailable_data"]
    assert (check.verdict, check.category, check.gate, check.layer) == (
        Verdict.FAIL,
        FailureCategory.UNAVAILABLE_DATA,
        False,
        "diagnosis",
    )
    assert check.reason == (
        "call 0 (get_prescription) answered with an error and the agent went on as if it had the data: "
        "it called refill_prescription (call 1) without saying the data was missing"
    )
    failed, step = check.evidence
    assert (failed.call_index, failed.tool, failed.arguments) == (
        0,
        "get_prescription",
        {"prescription_id": "RX-9"},
    )
    assert failed.summary == (
        'call 0 get_prescription: answered with an error: "Error: no prescription RX-9 for patient P-100"'
    )
    assert (step.call_index, step.tool) == (1, "refill_prescription")
    assert failure_categories(grade.checks) == (
        FailureCategory.POLICY_VIOLATION,
        FailureCategory.UNAVAILABLE_DATA,
    )
    assert "unavailable_data" in grade.explain()


def test_the_diagnosis_changes_no_verdict_no_quality_and_no_gate_count() -> None:
    trial = _trial(NOT_ON_FILE, REFILL_RX9, "Done.")
    with_it = judgekit.grade(_case(), trial)
    others = [c for c in with_it.checks if c.check_id != "unavailable_data"]
    from judgekit.graders.layered import combine

    without = combine(_case(), 1, others)
    assert (with_it.verdict, with_it.quality, with_it.reason) == (
        without.verdict,
        without.quality,
        without.reason,
    )
    assert with_it.metadata["gate_counts"] == without.metadata["gate_counts"]


def test_going_on_with_only_a_reply_that_asserts_the_data_is_unavailable_data() -> None:
    case = _case(expected={"must_mention": ["could not find"]})
    grade = judgekit.grade(
        case, _trial(("get_prescription", {"prescription_id": "RX-9"}, "[]"), "RX-9 has 2 refills left.")
    )
    assert grade.verdict is Verdict.FAIL
    check = _checks(grade)["unavailable_data"]
    assert "answered with no record" in check.reason
    assert "it wrote to the user (message 3)" in check.reason
    assert check.evidence[1].quote == "RX-9 has 2 refills left."


def test_near_miss_the_agent_says_it_cannot_find_the_record() -> None:
    """The trial fails (it also transferred), but the agent told the user the record is missing."""
    case = _case(forbidden=[{"tool": "transfer_to_human"}])
    trial = _trial(
        NOT_ON_FILE,
        "I couldn\u2019t find a prescription RX-9 on your file, so I\u2019m passing you to a pharmacist.",
        ("transfer_to_human", {}, "ok"),
    )
    grade = judgekit.grade(case, trial)
    assert grade.verdict is Verdict.FAIL
    assert "unavailable_data" not in _checks(grade)


def test_near_miss_a_tool_error_but_the_trial_passed() -> None:
    trial = _trial(NOT_ON_FILE, ("refill_prescription", {"prescription_id": "RX-7"}, "queued"), "Done.")
    grade = judgekit.grade(_case(expected={"must_mention": ["done"]}), trial)
    assert grade.verdict is Verdict.PASS
    assert "unavailable_data" not in _checks(grade)
    assert diagnose_unavailable_data(Verdict.FAIL, trial) is not None  # only the verdict kept it out


def test_near_miss_a_retry_of_the_same_tool_found_the_record() -> None:
    trial = _trial(
        ("get_prescription", {"prescription_id": "RX 9"}, "Error: malformed id"),
        ("get_prescription", {"prescription_id": "RX-9"}, '{"id": "RX-9", "refills_left": 0}'),
        REFILL_RX9,
        "Queued.",
    )
    grade = judgekit.grade(_case(), trial)
    assert grade.verdict is Verdict.FAIL
    assert "unavailable_data" not in _checks(grade)


def test_near_miss_the_trial_ended_at_the_error() -> None:
    assert diagnose_unavailable_data(Verdict.FAIL, _trial(NOT_ON_FILE)) is None


def test_near_miss_an_unanswered_call_is_no_error() -> None:
    trial = _trial(("get_prescription", {"prescription_id": "RX-9"}, None), REFILL_RX9, "Done.")
    assert diagnose_unavailable_data(Verdict.FAIL, trial) is None


@pytest.mark.parametrize("verdict", [Verdict.ERROR, Verdict.INSUFFICIENT_INFORMATION, Verdict.NOT_EVALUATED])
def test_only_a_failed_trial_is_diagnosed(verdict: Verdict) -> None:
    assert diagnose_unavailable_data(verdict, _trial(NOT_ON_FILE, REFILL_RX9, "Done.")) is None


def test_a_call_in_the_same_message_as_the_failed_one_is_not_going_on() -> None:
    """Two calls made together, before either answer was read: the second did not ignore the first's."""
    messages = [
        {"role": "user", "content": "refill RX-9"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "get_prescription", "arguments": "{}"}},
                {"id": "b", "type": "function", "function": {"name": "transfer_to_human", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "not found"},
        {"role": "tool", "tool_call_id": "b", "content": "ok"},
    ]
    trial = judgekit.Transcript.model_validate({"case_id": "case-1", "messages": messages})
    assert diagnose_unavailable_data(Verdict.FAIL, trial) is None


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("", True),
        ("   ", True),
        ("null", True),
        ("[]", True),
        ("{}", True),
        ('""', True),
        ('{"results": [], "next": null}', True),
        ('{"message": "Prescription RX-9 not found"}', True),
        ("Patient P-101 not found.", True),
        ("No records match.", True),
        ("no such prescription", True),
        ("The prescription does not exist", True),
        ("We couldn\u2019t locate that order", True),
        ('{"id": "RX-7", "refills_left": 0}', False),
        ('[{"id": "RX-7"}]', False),
        ("0", False),
        ('{"refills_left": 0}', False),
        ("Refill queued.", False),
        ("not found " + "x" * 300, False),  # a long answer holds data, whatever it says
        (None, False),
    ],
)
def test_no_record(answer: str | None, expected: bool) -> None:
    assert no_record(answer) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I could not find a prescription RX-9.", True),
        ("I can\u2019t find that prescription on your file.", True),
        ("There is no record of RX-9.", True),
        ("Sorry, the pharmacy system returned an error.", True),
        ("I was unable to retrieve your prescriptions.", True),
        ("The refill service is unavailable right now.", True),
        ("The refund could not go back to the card ending 9054 because that card has expired.", True),
        ("I'm sorry, the 18:40 flight is full, so I couldn't move you.", True),
        ("Your refund was not issued.", True),
        ("The payment didn't go through.", True),
        ("Your refill of RX-9 is queued.", False),
        ("RX-9 has 2 refills left.", False),
        ("All set: you're now booked on SK214 at 18:40 on 15 December.", False),
        ("All done: WD8N3Q is cancelled and your refund has been issued.", False),
    ],
)
def test_says_data_missing(text: str, expected: bool) -> None:
    assert says_data_missing(text) is expected


def test_reports_count_the_category(tmp_path: Path) -> None:
    """The run report's failure-category table counts the diagnosed trial once under unavailable_data."""
    case = _case()
    graded = [
        judgekit.grade(case, _trial(NOT_ON_FILE, REFILL_RX9, "Queued.")),
        judgekit.grade(case, _trial(NOT_ON_FILE, "I could not find RX-9.")).model_copy(update={"trial": 2}),
    ]
    ref = CaseRef(id=case.id, version=case.version)
    lines = [make_result_line(run_id="r1", case=ref, grade=g) for g in graded]
    assert [line.failure_categories for line in lines] == [
        (FailureCategory.POLICY_VIOLATION, FailureCategory.UNAVAILABLE_DATA),
        (),
    ]
    path = tmp_path / "results.jsonl"
    path.write_text("".join(dump_result_line(line) + "\n" for line in lines), encoding="utf-8")
    rows = {row.category: row for row in judgekit.report(path).failures}
    assert (rows["unavailable_data"].trials, rows["unavailable_data"].failed_checks) == (1, 1)
    assert rows["policy_violation"].trials == 1


AIRDESK = Path(__file__).resolve().parents[2] / "examples" / "airdesk" / "runs" / "agent-v1.jsonl"


def test_the_example_runs_claims_of_success_after_a_tool_error_are_diagnosed() -> None:
    """agent-v1 of the AirDesk example: a refund refused (card expired) or a flight full, then either a
    claim of success (diagnosed) or a plain word that it could not be done (not diagnosed)."""
    from judgekit.transcript import read_transcripts

    trials = {(t.case_id, t.trial): t for t in read_transcripts(AIRDESK)}
    diagnosed = {
        key: diagnose_unavailable_data(Verdict.FAIL, t)
        for key, t in trials.items()
        if key[0] in ("gs-refund-card-expired", "rf-full-flight-claimed")
    }
    said = {key: trials[key].final_answer() or "" for key in diagnosed}
    claims = {key for key, text in said.items() if text.startswith(("All done", "All set"))}
    assert claims, said  # the run holds both kinds
    assert {key for key, check in diagnosed.items() if check is not None} == claims
    check = diagnosed[min(claims)]
    assert check is not None
    assert check.evidence[0].summary.startswith(f"call {check.evidence[0].call_index} ")
    assert "answered with an error" in check.reason


def test_docs_show_the_diagnosis_as_explain_prints_it() -> None:
    """docs/graders.md's example lines are what ``explain()`` prints for the trial of the first test."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "graders.md").read_text(encoding="utf-8")
    section = page.partition("#### `unavailable_data`")[2]
    shown = section.partition("```\n")[2].partition("```")[0].splitlines()
    grade = judgekit.grade(_case(), _trial(NOT_ON_FILE, REFILL_RX9, "Done: your refill of RX-9 is queued."))
    printed = [line.strip() for line in grade.explain().splitlines()]
    assert shown
    assert shown[0].startswith("FAIL unavailable_data [unscored, unavailable_data]: ")
    for line in shown:
        assert line.strip() in printed


def test_the_reply_quoted_is_found_in_its_message_by_the_viewer() -> None:
    """A long reply on several lines is quoted verbatim up to a space, so the viewer can highlight it."""
    from judgekit.reports.viewer import locate_quote

    reply = "Good news!\n\nRX-9 has been refilled and " + "will be ready for collection tomorrow " * 8
    trial = _trial(("get_prescription", {"prescription_id": "RX-9"}, "not found"), reply)
    check = diagnose_unavailable_data(Verdict.FAIL, trial)
    assert check is not None
    quote = check.evidence[1].quote
    assert quote is not None
    assert quote.endswith("...")
    assert len(quote) <= 163
    texts = [m.content for m in trial.messages]
    found = locate_quote(texts, quote, check.evidence[1].message_index)
    assert found is not None
    assert (found["message_index"], found["start"]) == (3, 0)
    assert reply[found["start"] : found["end"]] == quote.removesuffix("...")


def test_a_user_grading_function_gets_the_diagnosis_too() -> None:
    """A function returning checks is combined by the same contract, so its failed trials are diagnosed."""
    from judgekit.integrations.grading import as_grader
    from judgekit.verdict import CheckResult

    def mine(case: judgekit.Case, transcript: judgekit.Transcript) -> list[CheckResult]:
        return [CheckResult(check_id="mine", layer="mine", verdict=Verdict.FAIL, reason="refilled RX-9")]

    trial = _trial(NOT_ON_FILE, REFILL_RX9, "Done.")
    grade = judgekit.grade(_case(), trial, grader=as_grader(mine))
    assert [c.check_id for c in grade.checks] == ["mine", "unavailable_data"]


def test_the_docs_list_the_seven_failure_categories() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "graders.md").read_text(encoding="utf-8")
    table = page.partition("### Failure categories")[2].partition("\n\n")[2].partition("\n\n")[0]
    assert sorted(re.findall(r"^\| `(\w+)` \|", table, re.M)) == sorted(c.value for c in FailureCategory)
