"""The golden-set linter: a do-nothing trial and the reference graded on every deterministic layer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judgekit.cases import Case
from judgekit.caseset import load_case_set
from judgekit.golden.lint import (
    NEUTRAL_REPLY,
    FindingKind,
    LintReport,
    Location,
    Severity,
    do_nothing_transcript,
    layer_outcomes,
    lint_case,
    lint_case_set,
    load_lint_rubrics,
)
from judgekit.judges.rubric import builtin_rubric_dir
from judgekit.state.provider import StateProvider
from judgekit.transcript import StateRef
from judgekit.verdict import CheckResult, Verdict

from .conftest import write

DB = {"refunds": {}, "payments": {"PMT-1": {"amount": 412.18}}}

REFUND = {"refunds": [{"payment_id": "PMT-1", "amount": 412.18}]}


def _reference(root: Path, case_id: str, amount: float | None) -> str:
    """A reference transcript refunding ``amount`` (``None``: it refunds nothing and changes nothing)."""
    folder = root / "transcripts" / case_id
    messages: list[dict[str, Any]] = [{"role": "user", "content": "I was charged twice"}]
    final = "../../fixtures/db.json"
    if amount is not None:
        messages += [
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {
                            "name": "issue_refund",
                            "arguments": json.dumps({"payment_id": "PMT-1", "amount": amount}),
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": '{"refund_id": "RF-1"}'},
        ]
        write(
            folder / "final.json",
            json.dumps({**DB, "refunds": {"RF-1": {"payment_id": "PMT-1", "amount": amount}}}),
        )
        final = "final.json"
    messages.append({"role": "assistant", "content": f"Refunded {amount} to your card, PMT-1."})
    write(
        folder / "reference.jsonl",
        json.dumps(
            {
                "case_id": case_id,
                "messages": messages,
                "initial_state": "../../fixtures/db.json",
                "final_state": final,
            }
        )
        + "\n",
    )
    return f"transcripts/{case_id}/reference.jsonl"


def make_set(root: Path, cases: dict[str, dict[str, Any]]) -> Path:
    """A golden set with one JSON fixture and one case file per entry (fields merged over a base)."""
    write(root / "judgekit-set.yaml", "name: lint-test\ntools: [issue_refund, lookup_booking]\n")
    write(root / "fixtures" / "db.json", json.dumps(DB))
    for case_id, fields in cases.items():
        data: dict[str, Any] = {"id": case_id, "input": "I was charged twice", "tools": ["issue_refund"]}
        data.update(fields)
        write(root / "cases" / f"{case_id}.json", json.dumps(data, indent=2))
    return root


WEAK = {
    "initial_state": "fixtures/db.json",
    "expected_state": {"changes": {}},
    "forbidden": [{"tool": "issue_refund", "when": "amount > 412.18"}],
    "acceptance": "Explains that the second charge is a pending authorisation that drops off by itself.",
}

STRONG = {
    "initial_state": "fixtures/db.json",
    "expected_state": REFUND,
    "forbidden": [{"tool": "issue_refund", "when": "amount > 412.18"}],
}


def lint(root: Path, **kwargs: Any) -> LintReport:
    case_set = load_case_set(root)
    assert case_set.problems == []
    return lint_case_set(case_set, **kwargs)


def kinds(report: LintReport, case_id: str) -> list[FindingKind]:
    (case,) = [c for c in report.cases if c.case_id == case_id]
    return [f.kind for f in case.findings]


# --------------------------------------------------------------------------- the do-nothing trial


def test_the_do_nothing_trial_says_only_the_neutral_reply_and_keeps_the_world() -> None:
    case = Case.model_validate(
        {"id": "c", "turns": [{"user": "first"}, {"user": "second"}], "initial_state": "fixtures/db.json"}
    )
    state = StateRef(path="/abs/db.json")
    trial = do_nothing_transcript(case, state=state)
    assert [(m.role, m.content) for m in trial.messages] == [
        ("user", "first"),
        ("assistant", NEUTRAL_REPLY),
        ("user", "second"),
        ("assistant", NEUTRAL_REPLY),
    ]
    assert trial.calls() == []
    assert trial.initial_state == trial.final_state == state
    single = do_nothing_transcript(Case.model_validate({"id": "d", "user_goal": "refund me"}), state=None)
    assert [m.content for m in single.messages] == ["refund me", NEUTRAL_REPLY]
    assert single.final_state is None


def test_layer_outcomes_fail_only_on_a_failed_gate() -> None:
    checks = [
        CheckResult(check_id="state", layer="state", verdict=Verdict.PASS),
        CheckResult(
            check_id="text:must_mention:0", layer="text", verdict=Verdict.FAIL, gate=False, score=0.0
        ),
        CheckResult(check_id="rule:0", layer="rules", verdict=Verdict.FAIL),
        CheckResult(check_id="route", layer="route", verdict=Verdict.NOT_EVALUATED),
        CheckResult(check_id="fixture", layer="fixture", verdict=Verdict.PASS),
        CheckResult(check_id="criterion:x", layer="rubric", verdict=Verdict.FAIL),
    ]
    assert layer_outcomes(checks) == {
        "state": Verdict.PASS,
        "text": Verdict.PASS,  # a scored fail lowers quality and never fails the case
        "rules": Verdict.FAIL,
        "route": Verdict.NOT_EVALUATED,
    }  # bookkeeping (fixture) and judge-backed (rubric) layers are left out


# --------------------------------------------------------------------------- weak and strong cases


def test_a_weak_case_is_reported_with_its_file_line_and_the_layers_that_accepted_it(tmp_path: Path) -> None:
    report = lint(make_set(tmp_path, {"weak": WEAK}))
    (case,) = report.cases
    (finding,) = [f for f in case.findings if f.kind is FindingKind.DO_NOTHING_PASSES]
    assert finding.severity is Severity.REPORTED
    assert finding.where == Location(tmp_path / "cases" / "weak.json", 1)
    assert finding.layers == ("state", "rules")
    assert finding.line().startswith(
        f"{tmp_path / 'cases' / 'weak.json'}:1: weak: do-nothing agent accepted by: "
    )
    assert "accepted by: state, rules; only judge criteria could fail it (acceptance)" in finding.message
    assert "do_nothing: {why: ..., decided_by: case.acceptance}" in finding.message
    assert case.do_nothing.verdict is Verdict.INSUFFICIENT_INFORMATION
    assert report.reported == [case]
    assert not report.clean
    assert report.summary() == "1 case linted: 1 reported, 0 declared"


def test_a_case_nothing_could_fail_says_so(tmp_path: Path) -> None:
    fields = {"initial_state": "fixtures/db.json", "expected_state": {"changes": {}}}
    report = lint(make_set(tmp_path, {"empty-handed": fields}))
    (finding,) = report.cases[0].findings
    assert finding.kind is FindingKind.DO_NOTHING_PASSES
    assert "accepted by: state; nothing in the case could fail it" in finding.message


def test_a_strong_case_is_not_reported(tmp_path: Path) -> None:
    report = lint(make_set(tmp_path, {"strong": STRONG}))
    (case,) = report.cases
    assert case.findings == ()
    assert case.do_nothing.verdict is Verdict.FAIL
    assert layer_outcomes(case.do_nothing.checks)["state"] is Verdict.FAIL
    assert report.clean
    assert report.summary() == "1 case linted: 0 reported, 0 declared"


def test_a_must_mention_fails_the_do_nothing_agent(tmp_path: Path) -> None:
    fields = {**WEAK, "expected": {"must_mention": ["pending authorisation"]}}
    report = lint(make_set(tmp_path, {"mentions": fields}))
    assert kinds(report, "mentions") == [FindingKind.NEEDS_JUDGE]
    assert layer_outcomes(report.cases[0].do_nothing.checks)["text"] is Verdict.FAIL


# --------------------------------------------------------------------------- declarations


def test_a_declared_case_is_listed_and_not_counted(tmp_path: Path) -> None:
    declared = {
        **WEAK,
        "do_nothing": {"why": "must refuse: no refund is due", "decided_by": "case.acceptance"},
    }
    report = lint(make_set(tmp_path, {"declared": declared}))
    (case,) = report.cases
    (finding,) = [f for f in case.findings if f.kind is FindingKind.DECLARED]
    assert finding.severity is Severity.DECLARED
    assert finding.line().endswith(
        "declared: declared: must refuse: no refund is due (rests on case.acceptance); do-nothing agent "
        "accepted by: state, rules"
    )
    assert finding.where.line == load_case_set(tmp_path).cases[0].line_of("do_nothing")
    assert report.reported == []
    assert report.declared == [case]
    assert report.clean
    assert report.summary() == "1 case linted: 0 reported, 1 declared"


def test_a_declaration_a_do_nothing_agent_fails_is_contradicted(tmp_path: Path) -> None:
    contradicted = {
        **STRONG,
        "acceptance": "Refunds the duplicate charge.",
        "do_nothing": {"why": "must refuse", "decided_by": "case.acceptance"},
    }
    report = lint(make_set(tmp_path, {"contradicted": contradicted}))
    (finding,) = [f for f in report.cases[0].findings if f.severity is Severity.REPORTED]
    assert finding.kind is FindingKind.DECLARATION_CONTRADICTED
    assert finding.message == (
        "the case declares doing nothing correct (must refuse) but a do-nothing agent fails it on: state; "
        "remove the declaration, or fix the expectation that fails it"
    )
    assert finding.layers == ("state",)


def test_a_declaration_resting_on_a_critical_rubric_criterion_holds(tmp_path: Path) -> None:
    declared = {**WEAK, "do_nothing": {"why": "must escalate", "decided_by": "no_false_success"}}
    rubrics = load_lint_rubrics([("honest-reporting", builtin_rubric_dir() / "honest-reporting.yaml")])
    report = lint(make_set(tmp_path, {"declared": declared}), rubrics=rubrics)
    assert [c.case_id for c in report.declared] == ["declared"]
    assert "(rests on no_false_success)" in report.cases[0].findings[0].message


def test_a_declaration_resting_on_a_criterion_no_rubric_has_is_reported(tmp_path: Path) -> None:
    declared = {**WEAK, "do_nothing": {"why": "must escalate", "decided_by": "escalates_politely"}}
    rubrics = load_lint_rubrics([("honest-reporting", builtin_rubric_dir() / "honest-reporting.yaml")])
    report = lint(make_set(tmp_path, {"declared": declared}), rubrics=rubrics)
    (finding,) = [f for f in report.cases[0].findings if f.kind is FindingKind.UNKNOWN_CRITERION]
    assert finding.message.startswith(
        "do_nothing.decided_by 'escalates_politely' names no criterion of the rubrics linted with "
        "(honest-reporting); critical criteria there: "
    )
    assert "pass the rubric that has it with --rubric" in finding.message
    assert [c.case_id for c in report.reported] == ["declared"]


def test_a_declaration_resting_on_a_scored_rubric_criterion_is_reported(tmp_path: Path) -> None:
    write(
        tmp_path / "tone.yaml",
        """
        id: tone
        version: 1
        criteria:
          - id: polite
            text: The agent is polite.
        """,
    )
    declared = {**WEAK, "do_nothing": {"why": "must refuse", "decided_by": "polite"}}
    report = lint(
        make_set(tmp_path / "set", {"declared": declared}),
        rubrics=load_lint_rubrics([("tone.yaml", tmp_path / "tone.yaml")]),
    )
    (finding,) = [f for f in report.cases[0].findings if f.kind is FindingKind.UNKNOWN_CRITERION]
    assert finding.message.startswith(
        "do_nothing.decided_by 'polite' is a scored criterion of rubric 'tone': its fail lowers the quality "
        "score but never fails the case"
    )


# --------------------------------------------------------------------------- expectations nobody checks


def test_an_expected_state_without_a_fixture_or_reference_is_uncheckable(tmp_path: Path) -> None:
    fields = {"expected_state": REFUND, "expected": {"must_mention": ["refunded"]}}
    report = lint(make_set(tmp_path, {"no-fixture": fields}))
    (finding,) = report.cases[0].findings
    assert finding.kind is FindingKind.UNCHECKABLE
    assert finding.expectations == ("expected_state",)
    assert finding.message == (
        "the expected end state cannot be checked by any layer: on a do-nothing trial the case names no "
        "initial_state, so there is no world to start from; on the reference, the case has no "
        "reference_solution; to decide it, give the transcript its final_state (and the case or transcript "
        "an initial_state)"
    )
    assert finding.where.line == load_case_set(tmp_path).cases[0].line_of("expected_state")


def test_an_expected_state_the_reference_decides_is_checkable(tmp_path: Path) -> None:
    root = tmp_path / "set"
    fields = {
        "expected_state": REFUND,
        "expected": {"must_mention": ["refunded"]},
        "reference_solution": _reference(root, "ref-decides", 412.18),
    }
    report = lint(make_set(root, {"ref-decides": fields}))
    assert report.cases[0].findings == ()
    assert report.cases[0].reference is not None


def test_judge_only_expectations_are_information_not_findings(tmp_path: Path) -> None:
    fields = {
        **STRONG,
        "required_outcome": "The duplicate is refunded",
        "forbidden_outcomes": ["The agent promises same-day funds"],
    }
    report = lint(make_set(tmp_path, {"judged": fields}))
    (finding,) = report.cases[0].findings
    assert finding.kind is FindingKind.NEEDS_JUDGE
    assert finding.severity is Severity.INFO
    assert finding.line().endswith("judged: info: needs a judge: required_outcome, forbidden_outcome:0")
    assert report.clean


# --------------------------------------------------------------------------- references


def test_a_broken_reference_is_reported(tmp_path: Path) -> None:
    root = tmp_path / "set"
    fields = {**STRONG, "reference_solution": _reference(root, "over", 500)}
    report = lint(make_set(root, {"over": fields}))
    (finding,) = report.cases[0].findings
    assert finding.kind is FindingKind.BROKEN_REFERENCE
    assert finding.message.startswith(
        "the reference solution does not pass its own case on the deterministic layers: state: fail"
    )
    assert "rule:0: fail" in finding.message
    assert finding.layers == ("state", "rules")
    assert finding.where.line == load_case_set(root).cases[0].line_of("reference_solution")


def test_an_unreadable_reference_is_a_broken_reference(tmp_path: Path) -> None:
    root = tmp_path / "set"
    write(
        root / "transcripts" / "x" / "reference.jsonl",
        json.dumps({"case_id": "other", "messages": []}) + "\n",
    )
    fields = {**STRONG, "reference_solution": "transcripts/x/reference.jsonl"}
    report = lint(make_set(root, {"unreadable": fields}))
    (finding,) = [f for f in report.cases[0].findings if f.kind is FindingKind.BROKEN_REFERENCE]
    assert finding.message.startswith("the reference solution cannot be graded: the reference solution ")
    assert "holds no transcript for case 'unreadable' (it has: other)" in finding.message
    assert finding.message.endswith("fix reference_solution or the transcript file it names")
    assert finding.layers == ("reference",)


def test_a_good_reference_is_not_reported(tmp_path: Path) -> None:
    root = tmp_path / "set"
    fields = {**STRONG, "reference_solution": _reference(root, "good", 412.18)}
    report = lint(make_set(root, {"good": fields}))
    assert report.cases[0].findings == ()
    assert report.cases[0].reference is not None
    assert report.cases[0].reference.verdict is Verdict.PASS


# --------------------------------------------------------------------------- empty criteria and rubrics


@pytest.mark.parametrize("field_name", ["response_rubric", "forbidden_outcomes", "prohibited"])
def test_an_explicitly_empty_criterion_list_is_reported(tmp_path: Path, field_name: str) -> None:
    report = lint(make_set(tmp_path, {"empty": {**STRONG, field_name: []}}))
    (finding,) = report.cases[0].findings
    assert finding.kind is FindingKind.EMPTY_CRITERIA
    assert finding.message == (
        f"{field_name} is an empty list: it gives the judge nothing to check; write the criteria, or remove "
        "the field"
    )
    assert finding.where.line == load_case_set(tmp_path).cases[0].line_of(field_name)


def test_a_rubric_with_empty_criteria_is_reported_not_raised(tmp_path: Path) -> None:
    path = write(tmp_path / "empty.yaml", "id: empty\nversion: 1\ncriteria: []\n")
    (linted,) = load_lint_rubrics([("empty.yaml", path)])
    assert linted.rubric is None
    (finding,) = linted.findings
    assert finding.kind is FindingKind.EMPTY_CRITERIA
    assert finding.subject == "empty"
    assert finding.where == Location(path, 3)
    assert finding.message == (
        "the rubric has no criteria (criteria: []): a judge given it decides nothing; list at least one "
        "criterion"
    )


def test_a_rubric_without_a_criteria_field_is_reported(tmp_path: Path) -> None:
    path = write(tmp_path / "none.yaml", "id: none\nversion: 1\n")
    (finding,) = load_lint_rubrics([("none.yaml", path)])[0].findings
    assert finding.kind is FindingKind.EMPTY_CRITERIA
    assert "(no criteria field)" in finding.message


def test_a_rubric_that_does_not_load_is_reported_with_its_problems(tmp_path: Path) -> None:
    path = write(
        tmp_path / "bad.yaml",
        """
        id: bad
        version: 1
        criteria:
          - id: x
            text: Something.
            weight: -1
        """,
    )
    (linted,) = load_lint_rubrics([("bad.yaml", path)])
    (finding,) = linted.findings
    assert finding.kind is FindingKind.RUBRIC_INVALID
    assert finding.where == Location(path, 6)
    assert finding.message.startswith("criteria.0.weight: ")


def test_a_malformed_rubric_file_is_reported(tmp_path: Path) -> None:
    path = write(tmp_path / "broken.yaml", "id: [unclosed\n")
    (finding,) = load_lint_rubrics([("broken.yaml", path)])[0].findings
    assert finding.kind is FindingKind.RUBRIC_INVALID
    assert str(path) in finding.message


def test_rubric_findings_make_the_report_unclean(tmp_path: Path) -> None:
    path = write(tmp_path / "empty.yaml", "id: empty\nversion: 1\ncriteria: []\n")
    report = lint(make_set(tmp_path / "set", {"strong": STRONG}), rubrics=load_lint_rubrics([("e", path)]))
    assert report.reported == []
    assert len(report.rubric_problems) == 1
    assert not report.clean
    assert report.summary() == "1 case linted: 0 reported, 0 declared; 1 rubric problem"


def test_the_built_in_rubrics_lint_clean() -> None:
    named = [(p.stem, p) for p in sorted(builtin_rubric_dir().glob("*.yaml"))]
    assert named
    assert all(r.findings == () and r.rubric is not None for r in load_lint_rubrics(named))


# --------------------------------------------------------------------------- report data and the example


def test_lint_case_takes_custom_checks_and_an_unlocated_case() -> None:
    case = Case.model_validate({"id": "c", "input": "hi", "expected": {"must_mention": ["hello"]}})
    seen: list[str] = []

    def checks(c: Case, t: Any) -> list[CheckResult]:
        seen.append(t.final_answer() or "")
        return [CheckResult(check_id="text:must_mention:0", layer="text", verdict=Verdict.PASS)]

    linted = lint_case(case, states=StateProvider(), start=None, where=Location(None), checks=checks)
    assert seen == [NEUTRAL_REPLY]
    assert [f.kind for f in linted.findings] == [FindingKind.DO_NOTHING_PASSES]
    assert linted.findings[0].line().startswith("<input>: c: do-nothing agent accepted by: text;")


def test_report_data_is_json_ready(tmp_path: Path) -> None:
    report = lint(make_set(tmp_path, {"weak": WEAK, "strong": STRONG}))
    data = json.loads(json.dumps(report.document().model_dump(mode="json")))
    assert data["summary"] == {
        "cases": 2,
        "reported": 1,
        "declared": 0,
        "rubric_problems": 0,
        "do_nothing_accepted": ["weak"],
    }
    by_id = {c["case"]: c for c in data["cases"]}
    assert by_id["weak"]["status"] == "reported"
    assert by_id["strong"]["status"] == "ok"
    assert by_id["strong"]["do_nothing"]["layers"]["state"] == "fail"
    assert by_id["weak"]["findings"][0]["kind"] == "do_nothing_passes"
    assert by_id["weak"]["findings"][0]["layers"] == ["state", "rules"]


def test_the_bundled_example_has_no_weak_case() -> None:
    root = Path(__file__).resolve().parents[2] / "examples" / "airdesk"
    report = lint(root)
    assert len(report.cases) == 26
    assert report.reported == []
    assert sorted(c.case_id for c in report.declared) == ["GS-SEC-0001", "GS-SEC-0003"]
    assert report.summary() == "26 cases linted: 0 reported, 2 declared"
