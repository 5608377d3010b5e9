"""What the integrations share: the grader interface, explanations, optional extras."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from judgekit.api.grading import grade as grade_trial
from judgekit.cases import Case
from judgekit.errors import JudgekitError
from judgekit.graders.contract import GraderSpec
from judgekit.integrations.grading import (
    LayeredGrader,
    as_grader,
    require_extra,
)
from judgekit.transcript import Transcript
from judgekit.verdict import CheckResult, Evidence, FailureCategory, Grade, Trust, Verdict

CASE = Case.model_validate(
    {
        "id": "c1",
        "input": "refund order 7",
        "expected": {"route": [{"tool": "refund", "args": {"order_id": "7"}}]},
    }
)


def transcript(order: str) -> Transcript:
    return Transcript.model_validate(
        {
            "case_id": "c1",
            "messages": [
                {"role": "user", "content": "refund order 7"},
                {
                    "role": "assistant",
                    "tool_calls": [
                        {"id": "a", "function": {"name": "refund", "arguments": f'{{"order_id": "{order}"}}'}}
                    ],
                },
                {"role": "tool", "tool_call_id": "a", "content": "ok"},
            ],
        }
    )


def test_explain_puts_failed_gates_first_with_their_evidence() -> None:
    diff_lines = [f"users/u{i}: email: 'a' -> 'b'" for i in range(30)]
    grade = Grade(
        case_id="c1",
        trial=3,
        verdict=Verdict.FAIL,
        quality=0.5,
        checks=(
            CheckResult(
                check_id="text:must_mention:0",
                layer="text",
                verdict=Verdict.FAIL,
                gate=False,
                score=0.0,
                reason="never said",
            ),
            CheckResult(check_id="route", layer="route", verdict=Verdict.PASS),
            CheckResult(
                check_id="criterion:tone",
                layer="rubric",
                verdict=Verdict.INSUFFICIENT_INFORMATION,
                reason="judge unsure",
                trust=Trust.UNTRUSTED,
                evidence=(Evidence(kind="judge", summary="no quote", quote="thanks!", message_index=4),),
            ),
            CheckResult(
                check_id="state",
                layer="state",
                verdict=Verdict.FAIL,
                reason="wrong row changed",
                category=FailureCategory.INVALID_ARGUMENTS,
                evidence=(Evidence(kind="diff", summary="final -> expected", data={"lines": diff_lines}),),
            ),
            CheckResult(
                check_id="rule:0",
                layer="rules",
                verdict=Verdict.FAIL,
                reason="forbidden",
                evidence=(
                    Evidence(
                        kind="call", summary="breaks it", call_index=2, tool="refund", arguments={"amount": 9}
                    ),
                ),
            ),
            CheckResult(check_id="text", layer="text", verdict=Verdict.NOT_EVALUATED, reason="none"),
        ),
    )
    text = grade.explain(max_lines=5)
    lines = text.splitlines()
    assert lines[0] == "case c1 trial 3: FAIL (quality 0.50)"
    why = (
        "state: wrong row changed — users/u0: email: 'a' -> 'b' (+29 more) | rule:0: forbidden — breaks it | "
        "criterion:tone (insufficient information, did not decide): judge unsure — no quote; "
        'quote (message 4): "thanks!"'
    )
    assert lines[1] == f"  why: {why}"
    assert lines[2] == "  FAIL state [gate, invalid_arguments, decided the verdict]: wrong row changed"
    assert "        users/u0: email: 'a' -> 'b'" in lines
    assert "        ... 25 more line(s)" in lines
    assert "users/u5" not in text
    order = [
        line.strip().split(" ")[1]
        for line in lines
        if line.startswith("  ") and line.strip().split(" ")[0].isupper()
    ]
    assert order[:4] == ["state", "rule:0", "criterion:tone", "text:must_mention:0"]
    assert '    call #2: refund({"amount": 9})' in text
    assert "FAIL rule:0 [gate, decided the verdict]: forbidden" in text
    assert "UNDECIDED criterion:tone [gate, untrusted, did not decide]: judge unsure" in text
    assert 'quote (message 4): "thanks!"' in text
    assert lines[-2:] == ["  passed: route", "  not evaluated: text"]
    # the one-line reason: every gate that did not pass, each with the first evidence row it found (the
    # rest counted), the failed gates (which decided the verdict) before the undecided one
    assert grade.why() == why


def test_the_default_grader_is_every_deterministic_layer() -> None:
    grader = as_grader(None)
    assert isinstance(grader, LayeredGrader)
    assert grade_trial(CASE, transcript("7"), grader=grader).verdict is Verdict.PASS
    failed = grade_trial(CASE, transcript("8"), grader=grader)
    assert failed.verdict is Verdict.FAIL
    assert "call #0: refund" in failed.explain()


def test_functions_plain_and_async_are_graders() -> None:
    def checks(case: Case, t: Transcript) -> list[CheckResult]:
        return [CheckResult(check_id="x", layer="custom", verdict=Verdict.ERROR, reason="could not run")]

    async def grade(case: Case, t: Transcript) -> Grade:
        return Grade(case_id=case.id, trial=t.trial, verdict=Verdict.PASS)

    assert grade_trial(CASE, transcript("7"), grader=as_grader(checks)).verdict is Verdict.ERROR
    assert grade_trial(CASE, transcript("7"), grader=as_grader(grade)).verdict is Verdict.PASS

    def wrong(case: Case, t: Transcript) -> Any:
        return "pass"

    with pytest.raises(JudgekitError, match="'wrong' returned str; it must return a judgekit Grade"):
        grade_trial(CASE, transcript("7"), grader=as_grader(wrong))
    with pytest.raises(JudgekitError, match="cannot grade with a int"):
        as_grader(3)


def test_an_object_with_async_grade_is_used_as_it_is() -> None:
    class Mine:
        async def grade(self, case: Case, t: Transcript) -> Grade:
            return Grade(case_id=case.id, trial=t.trial, verdict=Verdict.NOT_EVALUATED)

    mine = Mine()
    wrapped = as_grader(mine)  # it has no spec, so it is named by its class
    assert wrapped.spec.name.endswith("test_an_object_with_async_grade_is_used_as_it_is.<locals>.Mine")
    assert grade_trial(CASE, transcript("7"), grader=wrapped).verdict is Verdict.NOT_EVALUATED

    class WithSpec(Mine):
        spec = GraderSpec(name="mine")

    with_spec = WithSpec()
    assert as_grader(with_spec) is with_spec  # a full Grader is used as it is


def test_grade_inside_an_event_loop_says_to_await() -> None:
    async def inside() -> None:
        grade_trial(CASE, transcript("7"), grader=as_grader(None))

    with pytest.raises(JudgekitError, match=r"use 'await judgekit.grade_async\(...\)'"):
        asyncio.run(inside())


def test_a_grader_with_no_layer_is_refused() -> None:
    with pytest.raises(JudgekitError, match="grades nothing"):
        LayeredGrader(deterministic=False)


def test_a_missing_extra_names_the_install_command() -> None:
    with pytest.raises(JudgekitError, match=r"pip install 'judgekit-agents\[nothing\]'"):
        require_extra("judgekit_no_such_module", "nothing")
    assert require_extra("json", "none").__name__ == "json"


def test_the_default_grader_resolves_fixtures_in_a_root_named_as_text(tmp_path: Path) -> None:
    (tmp_path / "world.json").write_text(json.dumps({"orders": {"7": {"status": "paid"}}}))
    case = Case.model_validate({"id": "c1", "input": "hi", "initial_state": "world.json"})
    fresh = Transcript.model_validate(
        {
            "case_id": "c1",
            "messages": [{"role": "user", "content": "hi"}],
            "initial_state": {"data": {"orders": {"7": {"status": "paid"}}}},
        }
    )
    grader = as_grader(None, root=str(tmp_path))
    assert isinstance(grader, LayeredGrader)
    fixture = next(c for c in grader.checks(case, fresh) if c.check_id == "fixture")
    assert fixture.verdict is Verdict.PASS, fixture.reason
