"""The one-line reason of a trial (``verdict_reason``): the rule every report, viewer and integration uses."""

from __future__ import annotations

import doctest

from hypothesis import given
from hypothesis import strategies as st

import judgekit.verdict
from judgekit.verdict import (
    CheckResult,
    Evidence,
    FailureCategory,
    Grade,
    Trust,
    Verdict,
    deciding_check,
    evidence_line,
    failed_gates,
    verdict_reason,
)

F, P, E, U = Verdict.FAIL, Verdict.PASS, Verdict.ERROR, Verdict.INSUFFICIENT_INFORMATION


def _check(
    check_id: str, verdict: Verdict, reason: str = "", *, gate: bool = True, evidence=()
) -> CheckResult:
    category = FailureCategory.POLICY_VIOLATION if verdict is F else None
    return CheckResult(
        check_id=check_id,
        layer="rules",
        verdict=verdict,
        gate=gate,
        reason=reason,
        category=category,
        evidence=tuple(evidence),
    )


CALL = Evidence(kind="call", summary="call 2: issue_refund(calls=2) breaks 'calls > 1'", call_index=2)
DIFF = Evidence(
    kind="diff", summary="collateral changes", data={"lines": ["refunds/RF-2: row added", "b/1: x"]}
)
NOTE = Evidence(kind="note", summary="judge rubric:m:r@1: 1/1 usable samples")
QUOTE = Evidence(kind="judge", summary="claims both refunds", quote="I've refunded both", message_index=8)


def test_doctests_run():
    result = doctest.testmod(judgekit.verdict)
    assert result.attempted >= 4
    assert result.failed == 0


def test_a_failed_trial_is_explained_by_every_failed_gate_not_a_failed_scored_check():
    checks = [
        _check("state", P),
        _check("criterion:tone", F, "curt", gate=False),
        _check("rule:1", F, "refunded twice", evidence=[CALL]),
        _check("rule:2", F, "later gate"),
    ]
    assert deciding_check(F, "", checks) is checks[2]
    assert verdict_reason(F, "", checks) == (
        "rule:1: refunded twice — call 2: issue_refund(calls=2) breaks 'calls > 1' | rule:2: later gate"
    )


def test_a_failed_trial_without_a_failed_gate_falls_back_to_its_first_failed_check():
    checks = [_check("criterion:tone", F, "curt", gate=False)]
    assert verdict_reason(F, "", checks) == "criterion:tone: curt"


def test_a_diff_shows_its_first_row_and_counts_the_rest():
    assert verdict_reason(F, "", [_check("state:collateral", F, "2 rows changed", evidence=[DIFF])]) == (
        "state:collateral: 2 rows changed — refunds/RF-2: row added (+1 more)"
    )


def test_evidence_the_reason_already_says_is_not_repeated():
    said = _check("state:collateral", F, "1 row changed: refunds/RF-2: row added", evidence=[DIFF])
    assert verdict_reason(F, "", [said]) == "state:collateral: 1 row changed: refunds/RF-2: row added"


def test_a_note_is_skipped_for_the_judge_quote():
    check = _check("criterion:honest", F, "claims both refunds", evidence=[NOTE, QUOTE])
    assert verdict_reason(F, "", [check]) == (
        'criterion:honest: claims both refunds — quote (message 8): "I\'ve refunded both"'
    )


def test_an_undecided_trial_is_explained_by_the_grading_contract_when_it_says_why():
    checks = [_check("criterion:x", U, "judge unsure")]
    reason = "required outcome not decided (criterion:x is insufficient_information: judge unsure)"
    assert deciding_check(U, reason, checks) is None
    assert verdict_reason(U, reason, checks) == f"{reason} | criterion:x: judge unsure"


def test_an_undecided_trial_without_a_contract_reason_names_every_gate_in_that_state():
    checks = [
        _check("text", U, "scored unsure", gate=False),
        _check("rule:0", E, "bad JSON"),
        _check("st", E, "x"),
    ]
    assert deciding_check(E, "", checks) is checks[1]
    assert verdict_reason(E, "", checks) == "rule:0: bad JSON | st: x"


def test_a_pass_has_no_reason_and_nothing_says_why_gives_an_empty_line():
    assert verdict_reason(P, "ignored", [_check("state", P)]) == ""
    assert verdict_reason(E, "", []) == ""


def test_evidence_line_of_each_kind():
    assert evidence_line(CALL) == "call 2: issue_refund(calls=2) breaks 'calls > 1'"
    assert evidence_line(DIFF) == "refunds/RF-2: row added (+1 more)"
    assert evidence_line(QUOTE) == 'claims both refunds; quote (message 8): "I\'ve refunded both"'
    assert evidence_line(Evidence(kind="note", summary="")) == ""


TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=60)


@given(
    reason=TEXT,
    contract=TEXT,
    quote=st.none() | TEXT,
    gate=st.booleans(),
    verdict=st.sampled_from([F, E, U, Verdict.NOT_EVALUATED]),
)
def test_the_reason_is_always_one_line(reason, contract, quote, gate, verdict):
    evidence = Evidence(kind="judge", summary=reason, quote=quote, message_index=1)
    line = verdict_reason(verdict, contract, [_check("c", verdict, reason, gate=gate, evidence=[evidence])])
    assert "\n" not in line
    assert "\r" not in line
    assert line == " ".join(line.split())


# --------------------------------------------------------------------------- every failed gate (issue 35)

STATE_DIFF = Evidence(
    kind="diff",
    summary="final -> expected",
    data={"lines": ["refills/RX-100: status: 'pending' -> 'filled'"]},
)


def _state(verdict: Verdict = F) -> CheckResult:
    return CheckResult(
        check_id="state",
        layer="state",
        verdict=verdict,
        reason="1 expected change(s) not made" if verdict is F else "",
        category=FailureCategory.INCOMPLETE_EXECUTION if verdict is F else None,
        evidence=(STATE_DIFF,) if verdict is F else (),
    )


def test_a_forbidden_rule_and_a_missed_state_are_both_explained_each_with_its_evidence():
    rule = _check("rule:0", F, "refill requested twice", evidence=[CALL])
    grade = Grade(case_id="refill-1", trial=1, verdict=F, checks=(_state(), rule))
    gates = grade.failed_gates()
    assert [(g.check_id, g.layer, g.decided, g.evidence) for g in gates] == [
        ("state", "state", True, ("refills/RX-100: status: 'pending' -> 'filled'",)),
        ("rule:0", "rules", True, ("call 2: issue_refund(calls=2) breaks 'calls > 1'",)),
    ]
    assert grade.why() == (
        "state: 1 expected change(s) not made — refills/RX-100: status: 'pending' -> 'filled' | "
        "rule:0: refill requested twice — call 2: issue_refund(calls=2) breaks 'calls > 1'"
    )
    text = grade.explain()
    assert (
        "  FAIL state [gate, incomplete_execution, decided the verdict]: 1 expected change(s) not made"
        in text
    )
    assert "  FAIL rule:0 [gate, policy_violation, decided the verdict]: refill requested twice" in text
    assert "    call #2: ?()" in text  # rule:0's own evidence, under it
    state_at = text.index("FAIL state")
    assert state_at < text.index("refills/RX-100", state_at) < text.index("FAIL rule:0")


def test_failed_gates_come_first_then_errors_then_undecided_then_grading_order():
    checks = [
        _check("rule:0", U, "judge unsure"),
        _check("rule:1", E, "bad JSON"),
        _check("rule:2", F, "broke it"),
        _check("rule:3", F, "broke it too"),
        _check("rule:4", P),
    ]
    gates = failed_gates(F, "", checks)
    assert [(g.check_id, g.decided) for g in gates] == [
        ("rule:2", True),
        ("rule:3", True),
        ("rule:1", False),
        ("rule:0", False),
    ]
    assert verdict_reason(F, "", checks) == (
        "rule:2: broke it | rule:3: broke it too | rule:1 (error, did not decide): bad JSON | "
        "rule:0 (insufficient information, did not decide): judge unsure"
    )


def test_an_untrusted_judges_withheld_failure_is_listed_but_did_not_decide():
    judge = CheckResult(
        check_id="criterion:x",
        layer="rubric",
        verdict=F,
        reason="claims the refill went through",
        trust=Trust.UNTRUSTED,
    )
    checks = [_state(), judge]
    withheld = failed_gates(F, "", checks, untrusted="withhold")
    assert [(g.check_id, g.counted_as, g.decided) for g in withheld] == [
        ("state", F, True),
        ("criterion:x", U, False),
    ]
    assert withheld[1].line == (
        "criterion:x (fail from an untrusted judge, counted as insufficient information, did not decide): "
        "claims the refill went through"
    )
    assert failed_gates(F, "", checks) == withheld  # no policy recorded: the default, withhold
    counted = failed_gates(F, "", checks, untrusted="count")
    assert [(g.check_id, g.decided) for g in counted] == [("state", True), ("criterion:x", True)]
    # a line read back keeps the policy, so its explanation counts the judge as the grading did
    grade = Grade(
        case_id="c", trial=1, verdict=F, checks=tuple(checks), metadata={"untrusted_policy": "count"}
    )
    assert "did not decide" not in grade.why()
    assert "did not decide" in grade.model_copy(update={"metadata": {}}).why()
