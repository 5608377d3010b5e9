"""The grading contract: layers classified, the gate/score rule, untrusted judges, stated expectations."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from judgekit.advice import ADVICE, AdvicePath, advice_for
from judgekit.cases import Case
from judgekit.graders.contract import (
    UNTRUSTED_POLICIES,
    ExpectationKind,
    GraderSpec,
    Layer,
    effective_verdict,
    make_check,
    settle,
    stated_expectations,
)
from judgekit.graders.layered import combine
from judgekit.verdict import CheckResult, Trust, Verdict

PLAIN = Case.model_validate(
    {
        "id": "plain-1",
        "initial_state": "fixtures/db.json",
        "user_goal": "Change my delivery address to 12 Elm Street.",
        "required_outcome": "The delivery address is 12 Elm Street and nothing else changed.",
        "forbidden_outcomes": ["The customer's name is changed"],
    }
)


def _judge(check_id: str, verdict: Verdict, trust: Trust, *, gate: bool = True) -> CheckResult:
    return make_check(check_id, Layer.RUBRIC, verdict, gate=gate, trust=trust, trust_reason="scripted")


def _fixture_pass() -> CheckResult:
    return make_check("fixture", Layer.FIXTURE, Verdict.PASS, gate=True)


# --------------------------------------------------------------------------- checks


@given(st.sampled_from(list(Verdict)), st.booleans(), st.floats(min_value=0, max_value=10))
def test_the_gate_score_rule(verdict: Verdict, gate: bool, weight: float) -> None:
    check = make_check("x", Layer.TEXT, verdict, gate=gate, weight=weight)
    if gate:
        assert check.score is None
    else:
        assert check.score == {Verdict.PASS: 1.0, Verdict.FAIL: 0.0}.get(verdict)
    assert check.layer == "text"


# --------------------------------------------------------------------------- untrusted judges


@pytest.mark.parametrize(
    ("policy", "verdict", "expected"),
    [
        ("withhold", Verdict.PASS, Verdict.INSUFFICIENT_INFORMATION),
        ("withhold", Verdict.FAIL, Verdict.INSUFFICIENT_INFORMATION),
        ("count", Verdict.PASS, Verdict.PASS),
        ("count", Verdict.FAIL, Verdict.FAIL),
        ("fail_only", Verdict.PASS, Verdict.INSUFFICIENT_INFORMATION),
        ("fail_only", Verdict.FAIL, Verdict.FAIL),
        ("advisory", Verdict.PASS, Verdict.NOT_EVALUATED),
        ("advisory", Verdict.FAIL, Verdict.NOT_EVALUATED),
    ],
)
def test_an_untrusted_verdict_under_each_policy(policy: str, verdict: Verdict, expected: Verdict) -> None:
    check = _judge("criterion:x", verdict, Trust.UNTRUSTED)
    assert effective_verdict(check, policy) is expected  # type: ignore[arg-type]


@pytest.mark.parametrize("policy", UNTRUSTED_POLICIES)
@pytest.mark.parametrize("verdict", list(Verdict))
def test_trusted_and_deterministic_verdicts_are_never_changed(policy: str, verdict: Verdict) -> None:
    assert effective_verdict(_judge("c", verdict, Trust.TRUSTED), policy) is verdict  # type: ignore[arg-type]
    plain = make_check("state", Layer.STATE, verdict, gate=True)
    assert effective_verdict(plain, policy) is verdict  # type: ignore[arg-type]


def test_withhold_is_the_default_everywhere() -> None:
    import inspect

    from judgekit.graders.layered import LayeredGrader

    assert UNTRUSTED_POLICIES[0] == "withhold"
    assert inspect.signature(combine).parameters["untrusted"].default == "withhold"
    assert inspect.signature(LayeredGrader).parameters["untrusted"].default == "withhold"


# --------------------------------------------------------------------------- expectations


def test_a_plain_contract_states_its_outcome_and_prohibitions() -> None:
    kinds = [e.kind for e in stated_expectations(PLAIN)]
    assert kinds == [ExpectationKind.REQUIRED_OUTCOME, ExpectationKind.FORBIDDEN_OUTCOME]
    required = stated_expectations(PLAIN)[0]
    assert required.check_ids == {"criterion:case.required_outcome"}
    assert "give a judge (make_grader(judge=JudgeConfig(...))" in required.decided_by  # the Python API's


def test_expected_sources_are_an_expectation_only_when_grounding_is_on() -> None:
    case = Case.model_validate(
        {"id": "g", "input": "hi", "expected": {"sources": ["Fees-2026"], "must_mention": ["fee"]}}
    )
    assert [e.key for e in stated_expectations(case)] == ["must_mention:0"]
    assert [e.key for e in stated_expectations(case, grounding=True)] == [
        "must_mention:0",
        "expected_source:Fees-2026",
    ]


def test_a_plain_contract_without_a_judge_is_not_evaluated() -> None:
    grade = combine(PLAIN, 1, [_fixture_pass()])
    assert grade.verdict is Verdict.NOT_EVALUATED
    assert "required outcome (The delivery address is 12 Elm Street" in grade.reason
    assert (
        "not checked: give a judge (make_grader(judge=JudgeConfig(...)), or grade_run(judge=...))"
        in grade.reason
    )
    assert grade.metadata["expectations"] == {
        "stated": 2,
        "decided": 0,
        "undecided": ["required_outcome", "forbidden_outcome:0"],
    }


def test_an_untrusted_judge_that_answers_pass_does_not_pass_the_case() -> None:
    checks = [
        _fixture_pass(),
        _judge("criterion:case.required_outcome", Verdict.PASS, Trust.UNTRUSTED),
        _judge("criterion:case.forbidden_outcome.0", Verdict.PASS, Trust.UNTRUSTED),
    ]
    withheld = combine(PLAIN, 1, checks)
    assert withheld.verdict is Verdict.INSUFFICIENT_INFORMATION
    assert "the judge answered pass but is untrusted (scripted)" in withheld.reason
    assert withheld.metadata["untrusted_verdicts"] == []
    counted = combine(PLAIN, 1, checks, untrusted="count")
    assert counted.verdict is Verdict.PASS
    assert counted.metadata["untrusted_verdicts"] == [
        "criterion:case.required_outcome",
        "criterion:case.forbidden_outcome.0",
    ]


@pytest.mark.parametrize("path", list(ADVICE))
def test_the_advice_names_the_settings_of_the_path_graded_through(path: AdvicePath) -> None:
    # issue 35: the Inspect scorer's reason advised a CLI flag (--judge-model) inside Inspect
    untrusted = [
        _fixture_pass(),
        _judge("criterion:case.required_outcome", Verdict.PASS, Trust.UNTRUSTED),
        _judge("criterion:case.forbidden_outcome.0", Verdict.PASS, Trust.UNTRUSTED),
    ]
    with advice_for(path) as advice:
        no_judge = combine(PLAIN, 1, [_fixture_pass()]).reason
        withheld = combine(PLAIN, 1, untrusted).reason
    assert (
        f"not checked: give a judge ({advice.judge}) whose calibration record trusts its fingerprint"
        in no_judge
    )
    assert f"but is untrusted (scripted); calibrate it, or opt in with {advice.count_untrusted}" in withheld
    if path != "cli":
        assert "--judge-model" not in no_judge
        assert "--untrusted" not in withheld
    assert combine(PLAIN, 1, [_fixture_pass()]).reason == no_judge.replace(
        advice.judge, ADVICE["python"].judge
    )


def test_an_untrusted_judge_that_answers_fail_does_not_fail_the_case() -> None:
    checks = [
        _fixture_pass(),
        _judge("criterion:case.required_outcome", Verdict.FAIL, Trust.UNTRUSTED),
        _judge("criterion:case.forbidden_outcome.0", Verdict.PASS, Trust.UNTRUSTED),
    ]
    assert combine(PLAIN, 1, checks).verdict is Verdict.INSUFFICIENT_INFORMATION
    assert combine(PLAIN, 1, checks, untrusted="fail_only").verdict is Verdict.FAIL
    assert combine(PLAIN, 1, checks, untrusted="count").verdict is Verdict.FAIL


def test_a_trusted_judge_decides() -> None:
    passing = [
        _fixture_pass(),
        _judge("criterion:case.required_outcome", Verdict.PASS, Trust.TRUSTED),
        _judge("criterion:case.forbidden_outcome.0", Verdict.PASS, Trust.TRUSTED),
    ]
    assert combine(PLAIN, 1, passing).verdict is Verdict.PASS
    failing = [*passing[:2], _judge("criterion:case.forbidden_outcome.0", Verdict.FAIL, Trust.TRUSTED)]
    assert combine(PLAIN, 1, failing).verdict is Verdict.FAIL


def test_a_case_stating_nothing_never_passes() -> None:
    bare = Case.model_validate({"id": "bare", "input": "hello"})
    grade = combine(bare, 1, [_fixture_pass()])
    assert grade.verdict is Verdict.NOT_EVALUATED
    assert "states no expectation" in grade.reason


def test_a_missing_required_mention_fails_the_case() -> None:
    from judgekit.graders.text import check_text
    from judgekit.transcript import Transcript

    case = Case.model_validate(
        {
            "id": "m",
            "input": "refund me",
            "expected": {
                "must_mention": ["refund issued", {"text": "have a nice day", "scored": True}],
            },
        }
    )
    transcript = Transcript.model_validate(
        {"case_id": "m", "trial": 1, "messages": [{"role": "assistant", "content": "I cannot help."}]}
    )
    checks = check_text(case, transcript)
    assert [(c.check_id, c.verdict, c.gate, c.score) for c in checks] == [
        ("text:must_mention:0", Verdict.FAIL, True, None),
        ("text:must_mention:1", Verdict.FAIL, False, 0.0),
    ]
    grade = combine(case, 1, [*checks, _fixture_pass()])
    assert grade.verdict is Verdict.FAIL
    assert grade.quality == 0.0


def test_a_scored_mention_is_still_an_expectation_that_must_be_decided() -> None:
    case = Case.model_validate(
        {"id": "s", "input": "hi", "expected": {"must_mention": [{"text": "thanks", "scored": True}]}}
    )
    assert combine(case, 1, [_fixture_pass()]).verdict is Verdict.NOT_EVALUATED
    found = make_check("text:must_mention:0", Layer.TEXT, Verdict.PASS, gate=False)
    assert combine(case, 1, [_fixture_pass(), found]).verdict is Verdict.PASS


def test_a_failed_gate_fails_even_with_expectations_undecided() -> None:
    case = PLAIN.model_copy(update={"forbidden": ()})
    rule_case = Case.model_validate(
        {
            "id": "r",
            "input": "refund me",
            "required_outcome": "refund issued",
            "forbidden": [{"tool": "refund", "when": "args.amount > 412.18"}],
        }
    )
    failed = make_check("rule:0", Layer.RULES, Verdict.FAIL, gate=True, reason="refund of 500")
    grade = combine(rule_case, 1, [_fixture_pass(), failed])
    assert grade.verdict is Verdict.FAIL
    assert grade.metadata["expectations"]["undecided"] == ["required_outcome"]
    assert case.id == "plain-1"


@given(st.lists(st.sampled_from(list(Verdict)), min_size=1, max_size=6))
def test_settle_never_passes_with_an_undecided_expectation(verdicts: list[Verdict]) -> None:
    case = Case.model_validate(
        {"id": "t", "input": "hi", "expected": {"must_mention": [f"m{i}" for i in range(len(verdicts))]}}
    )
    checks = [
        make_check(f"text:must_mention:{i}", Layer.TEXT, v, gate=True, reason="r")
        for i, v in enumerate(verdicts)
    ]
    from judgekit.verdict import combine_gate_verdicts

    settled = settle(combine_gate_verdicts(verdicts), stated_expectations(case), checks, untrusted="withhold")
    if settled.verdict is Verdict.PASS:
        assert all(v is Verdict.PASS for v in verdicts)
    if Verdict.FAIL in verdicts:
        assert settled.verdict is Verdict.FAIL
    if all(v is Verdict.PASS for v in verdicts):
        assert settled.verdict is Verdict.PASS


# --------------------------------------------------------------------------- specs


def test_a_grader_spec_fingerprint_changes_with_any_part() -> None:
    from judgekit.graders.layered import LayeredGrader

    base = LayeredGrader().spec
    assert base.fingerprint == LayeredGrader().spec.fingerprint
    assert len(base.fingerprint) == 64
    assert LayeredGrader(untrusted="count").spec.fingerprint != base.fingerprint
    assert LayeredGrader(grounding="cited").spec.fingerprint != base.fingerprint
    assert [p.name for p in base.parts] == ["state", "rules", "route", "text", "fixture"]
    record = base.record()
    assert record["fingerprint"] == base.fingerprint
    assert GraderSpec.model_validate(record["spec"]) == base
