"""The promptfoo assertion: promptfoo's documented context, and promptfoo itself when it is installed."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from judgekit.integrations.promptfoo import get_assert, grading_result
from judgekit.verdict import CheckResult, Grade, Verdict

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "integrations" / "promptfoo.md"

CASE_YAML = """\
id: email-1
input: Change my email to new@x.io
initial_state: fixtures/world.json
expected_state:
  changes:
    users:
      modified:
        u1: {email: new@x.io}
expected:
  route:
    - {tool: update_email, args: {user_id: u1, email: new@x.io}}
  must_mention: [new@x.io]
  must_not_mention: [password]
"""
WORLD = {"users": {"u1": {"email": "old@x.io"}, "u2": {"email": "bo@x.io"}}}


def conversation(user_id: str = "u1", closing: str = "Done: new@x.io is your email.") -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Change my email to new@x.io"},
        {
            "role": "assistant",
            "content": None,
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
        {"role": "tool", "tool_call_id": "c1", "content": '{"ok": true}'},
        {"role": "assistant", "content": closing},
    ]


def final(user_id: str = "u1") -> dict[str, Any]:
    world = json.loads(json.dumps(WORLD))
    world["users"][user_id]["email"] = "new@x.io"
    return world


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    (tmp_path / "email.yaml").write_text(CASE_YAML)
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "world.json").write_text(json.dumps(WORLD))
    return tmp_path


def context(cases: Path, **vars: Any) -> dict[str, Any]:
    """promptfoo's documented AssertionValueFunctionContext."""
    variables = {"case_id": "email-1", **vars}
    return {
        "prompt": "Change my email to new@x.io",
        "vars": variables,
        "test": {"vars": variables, "assert": [{"type": "python", "value": "file://judgekit_assert.py"}]},
        "logProbs": None,
        "config": {"cases": str(cases)},
        "provider": {"id": "echo"},
        "providerResponse": {"output": "..."},
        "trace": None,
    }


def test_a_passing_conversation_gives_a_passing_grading_result(cases: Path) -> None:
    output = json.dumps({"messages": conversation(), "final_state": final()})
    result = get_assert(output, context(cases))
    assert set(result) == {"pass", "score", "reason", "componentResults", "namedScores", "metadata"}
    assert result["pass"] is True
    assert result["score"] == 1.0  # a pass with nothing scored (the one must_mention gates)
    assert result["metadata"]["judgekit_verdict"] == "pass"
    assert result["namedScores"]["judgekit.state"] == 1.0
    assert "judgekit.quality" not in result["namedScores"]  # no quality without a scored check
    assert all(c["pass"] for c in result["componentResults"])
    assert {c["assertion"]["value"] for c in result["componentResults"]} >= {
        "judgekit:state",
        "judgekit:route",
    }


def test_a_failing_conversation_explains_with_the_diff_and_the_call(cases: Path) -> None:
    # the state comes from vars this time, and the conversation is an already parsed list
    result = get_assert(conversation("u2"), context(cases, final_state=final("u2")))
    assert result["pass"] is False
    assert result["score"] == 0.0
    reason = result["reason"]
    assert reason.startswith("case email-1 trial 1: FAIL")
    assert "FAIL state" in reason
    assert "users" in reason
    assert "u2" in reason
    assert 'call #0: update_email({"email": "new@x.io", "user_id": "u2"})' in reason
    failed = {c["assertion"]["value"] for c in result["componentResults"] if not c["pass"]}
    assert {"judgekit:state", "judgekit:state:collateral", "judgekit:route"} <= failed
    assert result["namedScores"]["judgekit.route"] == 0.0


def test_a_missing_state_is_an_error_not_a_pass_and_not_a_named_zero(cases: Path) -> None:
    result = get_assert(json.dumps(conversation()), context(cases))
    assert result["pass"] is False
    assert result["metadata"]["judgekit_verdict"] == "error"
    assert result["reason"].startswith("ERROR (judgekit could not decide; this is not a pass)")
    assert "judgekit.state" not in result["namedScores"]  # an errored check is never counted as 0
    assert "judgekit.route" in result["namedScores"]


def test_plain_text_output_is_the_reply_to_the_prompt(cases: Path) -> None:
    result = get_assert("Your password is hunter2", context(cases, final_state=WORLD))
    assert result["pass"] is False
    assert "must_not_mention" in result["reason"]
    assert "password" in result["reason"]


def test_anthropic_output_is_read_too(cases: Path) -> None:
    anthropic = {
        "system": "You are AirDesk.",
        "messages": [
            {"role": "user", "content": "Change my email to new@x.io"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "update_email",
                        "input": {"user_id": "u1", "email": "new@x.io"},
                    }
                ],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Done: new@x.io"}]},
        ],
        "final_state": final(),
    }
    assert get_assert(json.dumps(anthropic), context(cases))["pass"] is True


@pytest.mark.parametrize(
    ("ctx_change", "output", "message"),
    [
        pytest.param({"config": {}}, "x", "needs 'config: {cases:", id="no_cases"),
        pytest.param({"vars": {}}, "x", "no judgekit case id: set 'case_id'", id="no_case_id"),
        pytest.param({"vars": {"case_id": "nope"}}, "x", "no case 'nope'", id="unknown_case"),
        pytest.param(
            {"vars": {"case_id": "emial-1"}}, "x", "; did you mean 'email-1'? (known:", id="near_case"
        ),
        pytest.param({}, '{"turns": []}', "unknown transcript shape", id="unknown_shape"),
        pytest.param({}, '[{"role": "robot", "content": "x"}]', "found role(s) 'robot'", id="unknown_role"),
    ],
)
def test_configuration_mistakes_are_errors_with_what_to_do(
    cases: Path, ctx_change: dict[str, Any], output: str, message: str
) -> None:
    ctx = {**context(cases), **ctx_change}
    result = get_assert(output, ctx)
    assert result["pass"] is False
    assert result["metadata"]["judgekit_verdict"] == "error"
    assert message in result["reason"]


@pytest.mark.parametrize(
    ("verdict", "label"),
    [
        pytest.param(Verdict.INSUFFICIENT_INFORMATION, "UNDECIDED", id="undecided"),
        pytest.param(Verdict.ERROR, "ERROR", id="error"),
        pytest.param(Verdict.NOT_EVALUATED, "NOT EVALUATED", id="not_evaluated"),
    ],
)
def test_undecided_states_never_pass_and_never_score(verdict: Verdict, label: str) -> None:
    check = CheckResult(check_id="criterion:x", layer="rubric", verdict=verdict, reason="judge unsure")
    result = grading_result(Grade(case_id="c", trial=1, verdict=verdict, checks=(check,)))
    assert result["pass"] is False
    assert result["reason"].startswith(label)
    assert result["namedScores"] == {}
    assert result["componentResults"] == []
    assert result["metadata"]["judgekit_verdict"] == verdict.value


def _blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_the_documented_direct_call_runs(capsys: pytest.CaptureFixture[str]) -> None:
    (block,) = _blocks("python")
    namespace: dict[str, Any] = {}
    exec(compile(block, str(DOC), "exec"), namespace)
    result = namespace["result"]
    assert result["pass"] is False
    assert 'call #0: refund({"order_id": "8"})' in result["reason"]


def _promptfoo_command() -> list[str] | None:
    """How to run promptfoo: $JUDGEKIT_PROMPTFOO (a command line), else 'promptfoo' on PATH."""
    configured = os.environ.get("JUDGEKIT_PROMPTFOO")
    if configured:
        return shlex.split(configured)
    found = shutil.which("promptfoo")
    return [found] if found else None


PROMPTFOO = _promptfoo_command()


@pytest.mark.skipif(PROMPTFOO is None, reason="promptfoo is not installed (set JUDGEKIT_PROMPTFOO to run it)")
def test_a_real_promptfoo_eval_with_the_documented_config(tmp_path: Path) -> None:
    assert PROMPTFOO is not None
    (config,) = _blocks("yaml")
    (tmp_path / "promptfooconfig.yaml").write_text(config)
    (tmp_path / "judgekit_assert.py").write_text(
        "from judgekit.integrations.promptfoo import get_assert  # noqa: F401\n"
    )
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "refund.yaml").write_text(
        "id: refund-1\ninput: Please refund order 7\nexpected:\n  route:\n"
        "    - {tool: refund, args: {order_id: '7'}}\n  must_not_mention: [internal]\n"
    )
    env = {
        **os.environ,
        "PROMPTFOO_PYTHON": sys.executable,
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_CONFIG_DIR": str(tmp_path / ".promptfoo"),
        "HOME": str(tmp_path),
    }
    run = subprocess.run(
        [
            *PROMPTFOO,
            "eval",
            "-c",
            "promptfooconfig.yaml",
            "-o",
            "out.json",
            "--no-cache",
            "--no-progress-bar",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert (tmp_path / "out.json").is_file(), run.stdout[-2000:] + run.stderr[-2000:]
    results = json.loads((tmp_path / "out.json").read_text())["results"]["results"]
    by_name = {r["testCase"]["description"]: r for r in results}
    right = by_name["refunds the right order"]
    wrong = by_name["refunds the wrong order"]
    assert right["success"] is True
    assert right["namedScores"]["judgekit.route"] == 1
    assert wrong["success"] is False
    # promptfoo nests the assertion's own result, with its component results, under the test's result
    (component,) = (c for c in wrong["gradingResult"]["componentResults"] if "metadata" in c)
    assert component["metadata"]["judgekit_verdict"] == "fail"
    assert 'call #0: refund({"order_id": "8"})' in component["reason"]
    assert not next(c for c in component["componentResults"] if c["assertion"]["value"] == "judgekit:route")[
        "pass"
    ]
    assert wrong["namedScores"]["judgekit.route"] == 0
