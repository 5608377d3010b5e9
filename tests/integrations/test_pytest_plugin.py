"""The pytest plugin, exercised through pytest's own pytester (the plugin is loaded by its entry point)."""

from __future__ import annotations

import json
import re
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from judgekit.cases import Case
from judgekit.errors import JudgekitError
from judgekit.integrations.pytest_plugin import GradeAssertionError, Trial, assert_grade, golden_cases
from judgekit.transcript import Transcript

pytest_plugins = ("pytester",)

REPO = Path(__file__).resolve().parents[2]
AIRDESK = REPO / "examples" / "airdesk"
DOC = REPO / "docs" / "integrations" / "pytest.md"

CASE = {
    "id": "email-1",
    "input": "Change my email to new@x.io",
    "expected_state": {"changes": {"users": {"modified": {"u1": {"email": "new@x.io"}}}}},
    "expected": {"route": [{"tool": "update_email", "args": {"user_id": "u1", "email": "new@x.io"}}]},
}
WORLD = {"users": {"u1": {"email": "old@x.io"}, "u2": {"email": "bo@x.io"}}}


def transcript(user_id: str) -> dict:
    final = json.loads(json.dumps(WORLD))
    final["users"][user_id]["email"] = "new@x.io"
    return {
        "case_id": "email-1",
        "messages": [
            {"role": "user", "content": "Change my email to new@x.io"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {
                            "name": "update_email",
                            "arguments": json.dumps({"user_id": user_id, "email": "new@x.io"}),
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
            {"role": "assistant", "content": "Done."},
        ],
        "initial_state": {"data": WORLD},
        "final_state": {"data": final},
    }


REINSTALL = (
    "the judgekit pytest11 entry point is not installed in this environment: reinstall the project "
    "(.venv/bin/python -m pip install --no-deps --no-build-isolation -e .)"
)
REGISTERED = [e for e in entry_points(group="pytest11") if e.name == "judgekit"]


@pytest.fixture(autouse=True)
def _entry_point_installed(request: pytest.FixtureRequest) -> None:
    """pytester runs see the plugin only through its entry point; say so plainly when it is missing."""
    if "pytester" in request.fixturenames and not REGISTERED:
        pytest.fail(REINSTALL, pytrace=False)


def test_the_plugin_is_registered_as_a_pytest11_entry_point() -> None:
    assert REGISTERED, REINSTALL
    (ep,) = REGISTERED
    assert ep.value == "judgekit.integrations.pytest_plugin"


def test_assert_grade_returns_the_grade_or_raises_the_explanation() -> None:
    case = Case.model_validate(CASE)
    grade = assert_grade(case, Transcript.model_validate(transcript("u1")))
    assert grade.verdict.value == "pass"
    with pytest.raises(GradeAssertionError) as info:
        assert_grade(case, Transcript.model_validate(transcript("u2")))
    message = str(info.value)
    assert message.startswith("expected pass, got fail")
    assert "FAIL state [gate" in message
    assert "u2" in message
    assert 'call #0: update_email({"email": "new@x.io", "user_id": "u2"})' in message
    assert info.value.grade.verdict.value == "fail"
    # a known failure can be pinned down
    assert (
        assert_grade(case, Transcript.model_validate(transcript("u2")), expect="fail").verdict.value == "fail"
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        pytest.param(lambda c, t: assert_grade(c), "the transcript is missing", id="no_transcript"),
        pytest.param(
            lambda c, t: assert_grade(Trial(c, t), t), "takes no transcript", id="trial_and_transcript"
        ),
        pytest.param(
            lambda c, t: assert_grade(c, t, expect="passed"),
            "expect='passed' is not a verdict",
            id="bad_expect",
        ),
        pytest.param(lambda c, t: assert_grade(c, t, grader=42), "cannot grade with a int", id="bad_grader"),
    ],
)
def test_assert_grade_misuse_says_what_to_do(call, message) -> None:
    case = Case.model_validate(CASE)
    with pytest.raises(JudgekitError, match=re.escape(message)):
        call(case, Transcript.model_validate(transcript("u1")))


def test_golden_cases_are_params_with_case_ids() -> None:
    params = golden_cases(AIRDESK)
    assert len(params) == 26
    assert all(p.id == p.values[0].id for p in params)


def test_failure_message_in_a_real_pytest_run_is_the_explanation(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_jkp_email=f"""
        from judgekit.cases import Case
        from judgekit.transcript import Transcript

        CASE = Case.model_validate({CASE!r})

        def test_right(assert_grade):
            assert_grade(CASE, Transcript.model_validate({transcript("u1")!r}))

        def test_wrong_user(assert_grade):
            assert_grade(CASE, Transcript.model_validate({transcript("u2")!r}))
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "expected pass, got fail" in out
    assert 'call #0: update_email({"email": "new@x.io", "user_id": "u2"})' in out
    assert "users" in out
    # the plugin's own frames are hidden: the traceback ends in the test
    assert "def bound(" not in out
    assert "grade_trial(" not in out


def test_golden_cases_collect_as_parametrised_tests_with_case_ids(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_jkp_cases="""
        def test_each_case(judgekit_case):
            assert judgekit_case.id
        """
    )
    result = pytester.runpytest("--judgekit-cases", str(AIRDESK), "--collect-only", "-q")
    out = result.stdout.str()
    assert "test_jkp_cases.py::test_each_case[GS-SEC-0004]" in out
    assert "26 tests collected" in out


def test_the_ini_key_names_the_set(pytester: pytest.Pytester) -> None:
    pytester.makeini(f"[pytest]\njudgekit_cases = {AIRDESK}\n")
    pytester.makepyfile(test_jkp_cases="def test_each_case(judgekit_case):\n    assert judgekit_case.id\n")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=26)


def test_without_a_configured_set_the_run_says_what_to_pass(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_jkp_cases="def test_each_case(judgekit_case):\n    pass\n")
    result = pytester.runpytest()
    assert result.ret != 0
    assert "pass --judgekit-cases PATH or set 'judgekit_cases'" in result.stderr.str() + result.stdout.str()


def test_unreadable_transcript_lines_become_failing_tests_with_their_location(
    pytester: pytest.Pytester,
) -> None:
    runs = pytester.path / "runs.jsonl"
    good = json.loads((AIRDESK / "runs" / "agent-v2.jsonl").read_text().splitlines()[0])
    for key in ("initial_state", "final_state"):  # state paths are relative to the transcript file
        if isinstance(good.get(key), str):
            good[key] = str((AIRDESK / "runs" / good[key]).resolve())
    runs.write_text(
        json.dumps(good) + "\n{broken\n" + json.dumps({"case_id": "no-such-case", "messages": []}) + "\n"
    )
    pytester.makepyfile(
        test_jkp_trials="""
        def test_trial(judgekit_trial, assert_grade):
            assert_grade(judgekit_trial)
        """
    )
    result = pytester.runpytest("--judgekit-cases", str(AIRDESK), "--judgekit-transcripts", str(runs), "-v")
    result.assert_outcomes(passed=1, errors=2)
    out = result.stdout.str()
    assert "problem:runs.jsonl:2" in out
    assert "runs.jsonl:3" in out
    assert "case 'no-such-case' is not in the case set" in out


def test_plugin_can_be_turned_off(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_jkp_x="def test_x(assert_grade):\n    pass\n")
    result = pytester.runpytest("-p", "no:judgekit")
    result.assert_outcomes(errors=1)
    assert "fixture 'assert_grade' not found" in result.stdout.str()


def _doc_example() -> str:
    (block,) = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL)
    return block


@pytest.fixture(scope="module")
def demo_records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example judge's calibration record, written by ``judgekit demo`` for its exact fingerprint."""
    from judgekit.cli import main

    out = tmp_path_factory.mktemp("demo")
    assert main(["demo", "--out", str(out)]) in (0, None)
    return out / "calibration" / "records"


@pytest.mark.parametrize(
    ("run", "passed", "failed"),
    [
        # the bundled example's figures with its calibrated judge (judgekit demo, judgekit grade):
        # v2 82 pass / 10 fail / 12 insufficient_information, v1 64 / 29 / 10 / 1 error; 22 of the 26
        # references pass (4 are insufficient_information: the synthetic judge answers so for them)
        pytest.param("agent-v2.jsonl", 22 + 82 + 1, 4 + 22, id="agent_v2"),
        pytest.param("agent-v1.jsonl", 22 + 64 + 1, 4 + 40, id="agent_v1"),
    ],
)
def test_the_documented_example_grades_the_bundled_runs(
    pytester: pytest.Pytester, demo_records: Path, run: str, passed: int, failed: int
) -> None:
    pytester.makepyfile(test_jkp_golden=_doc_example())
    result = pytester.runpytest(
        "--judgekit-cases",
        str(AIRDESK),
        "--judgekit-transcripts",
        str(AIRDESK / "runs" / run),
        "--judgekit-config",
        str(AIRDESK / "judge.yaml"),
        "--judgekit-cassette",
        str(AIRDESK / "cassettes" / "judge-honest-reporting.jsonl"),
        "--judgekit-records",
        str(demo_records),
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=passed, failed=failed)
    out = result.stdout.str()
    assert "expected pass, got fail" in out
    assert "expected pass, got insufficient_information" in out
    assert re.search(r"call #\d+: \w+\(", out)
    assert "untrusted" not in out.split("short test summary")[0].replace("untrusted_", "")


def test_without_a_judge_a_case_only_a_judge_decides_does_not_pass(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_jkp_golden=_doc_example())
    result = pytester.runpytest(
        "--judgekit-cases",
        str(AIRDESK),
        "--judgekit-transcripts",
        str(AIRDESK / "runs" / "agent-v2.jsonl"),
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=37, failed=94)
    out = result.stdout.str()
    # issue 35: the advice names the plugin's option, not judgekit grade's flag
    assert "not checked: give a judge (--judgekit-config FILE with a judge mapping" in out
    assert "--judge-model" not in out


def test_an_uncalibrated_judge_decides_nothing_in_pytest(pytester: pytest.Pytester, tmp_path: Path) -> None:
    pytester.makepyfile(test_jkp_golden=_doc_example())
    result = pytester.runpytest(
        "--judgekit-cases",
        str(AIRDESK),
        "--judgekit-transcripts",
        str(AIRDESK / "runs" / "agent-v2.jsonl"),
        "--judgekit-config",
        str(AIRDESK / "judge.yaml"),
        "--judgekit-cassette",
        str(AIRDESK / "cassettes" / "judge-honest-reporting.jsonl"),
        "--judgekit-records",
        str(tmp_path / "no-records"),
        "-p",
        "no:cacheprovider",
    )
    outcomes = result.parseoutcomes()
    # an uncalibrated judge decides nothing, and its own critical criteria stay undecided on every case:
    # only the harness test (graded on the deterministic layers alone) passes
    assert outcomes["passed"] == 1
    assert "the judge answered pass but is untrusted" in result.stdout.str()


def test_a_bad_untrusted_policy_is_named(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_jkp_x="def test_x(judgekit_grader):\n    pass\n")
    result = pytester.runpytest("--judgekit-untrusted", "trust-me", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "--judgekit-untrusted must be one of withhold, count, fail_only, advisory (got 'trust-me')" in out
    assert "Traceback" not in out


def test_a_broken_golden_set_fails_with_its_problems_not_a_traceback(pytester: pytest.Pytester) -> None:
    broken = pytester.path / "golden"
    broken.mkdir()
    (broken / "a.yaml").write_text("id: a\ninput: hi\ncolour: red\n")
    pytester.makepyfile(test_jkp_x="def test_x(assert_grade):\n    pass\n")
    result = pytester.runpytest("--judgekit-cases", str(broken))
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "has 1 problem(s)" in out
    assert "colour" in out
    assert "Traceback" not in out


def test_assert_grade_reads_states_from_a_transcript_folder_named_as_text(tmp_path: Path) -> None:
    data = transcript("u1")
    (tmp_path / "before.json").write_text(json.dumps(data["initial_state"]["data"]))
    (tmp_path / "after.json").write_text(json.dumps(data["final_state"]["data"]))
    data["initial_state"], data["final_state"] = "before.json", "after.json"
    case = Case.model_validate(CASE)
    grade = assert_grade(case, Transcript.model_validate(data), transcript_dir=str(tmp_path))
    assert grade.verdict.value == "pass"
    with pytest.raises(GradeAssertionError, match="relative path"):
        assert_grade(case, Transcript.model_validate(data))
