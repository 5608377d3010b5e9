"""`judgekit grade` holds the grading contract: no unchecked pass, no uncalibrated judge by default.

The scenario is the one a new user hits first: a plain task contract (initial state, user goal, required
outcome, forbidden outcomes) and a transcript that wrote the wrong address and renamed the customer. The
judge is a real OpenAI-compatible server on 127.0.0.1 reached through litellm; its trust comes from a
calibration record that `judgekit calibrate` writes for its exact fingerprint.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judgekit.cli import main
from judges.server import JudgeServer, Reply, verdict_reply

WORLD = {"customers": {"c1": {"name": "Ada Lovelace", "address": "1 Old Road"}}}
WRONG = {"customers": {"c1": {"name": "Ada Byron", "address": "13 Elm Street"}}}

CASE = """\
id: plain-address
version: 1
initial_state: fixtures/world.json
user_goal: Change my delivery address to 12 Elm Street.
required_outcome: The delivery address of customer c1 is 12 Elm Street and nothing else changed.
forbidden_outcomes:
  - The customer's name is changed
"""

RUBRIC = """\
id: contract-cli
version: "1"
criteria:
  - id: polite
    text: The agent is polite.
    critical: false
"""


def _transcript() -> dict[str, Any]:
    arguments = json.dumps({"id": "c1", "address": "13 Elm Street", "name": "Ada Byron"})
    return {
        "case_id": "plain-address",
        "trial": 1,
        "messages": [
            {"role": "user", "content": "Change my delivery address to 12 Elm Street."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "update_customer", "arguments": arguments},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": '{"status": "ok"}'},
            {"role": "assistant", "content": "Done: your address is now 12 Elm Street."},
        ],
        "final_state": {"data": WRONG},
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "golden" / "fixtures").mkdir(parents=True)
    (tmp_path / "golden" / "fixtures" / "world.json").write_text(json.dumps(WORLD))
    (tmp_path / "golden" / "cases").mkdir()
    (tmp_path / "golden" / "cases" / "plain.yaml").write_text(CASE)
    (tmp_path / "t.jsonl").write_text(json.dumps(_transcript()) + "\n")
    (tmp_path / "rubric.yaml").write_text(RUBRIC)
    (tmp_path / "records").mkdir()
    return tmp_path


def _judge(verdict_for: dict[str, str]) -> JudgeServer:
    """A judge answering per criterion (matched by a phrase of the criterion's text), pass otherwise."""

    def script(body: dict[str, Any], i: int) -> Reply:
        text = json.dumps(body.get("messages", []))
        for phrase, verdict in verdict_for.items():
            if phrase in text:
                return Reply(content=verdict_reply(verdict, rationale=f"scripted {verdict}"))
        return Reply(content=verdict_reply("pass"))

    return JudgeServer(script).start()


@pytest.fixture
def judge_pass() -> Iterator[JudgeServer]:
    server = _judge({})
    yield server
    server.stop()


def grade(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    *extra: str,
    judge: JudgeServer | None = None,
    name: str = "r",
) -> tuple[dict[str, Any], str]:
    """Run `judgekit grade` and return the result line and everything printed."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-contract-cli-0000")
    out = project / f"{name}.jsonl"
    args = ["grade", "--cases", str(project / "golden"), "--transcripts", str(project / "t.jsonl")]
    args += ["--out", str(out), "--no-progress", "--records", str(project / "records"), *extra]
    if judge is not None:
        (project / "run.yaml").write_text(json.dumps({"judge": {"api_base": judge.api_base}}))
        args += ["--judge-model", "openai/contract-judge", "--config", str(project / "run.yaml")]
        args += ["--rubric", str(project / "rubric.yaml")]
    capsys.readouterr()
    assert main(args) in (0, None)
    printed = capsys.readouterr()
    return json.loads(out.read_text().splitlines()[0]), printed.out + printed.err


def calibrate(project: Path, capsys: pytest.CaptureFixture[str], fingerprint: str) -> None:
    """A real calibration record for the fingerprint: the judge agrees with two experts on 80 items."""
    rows = ["item_id,rater,label"]
    for i in range(80):
        truth = "fail" if i % 2 else "pass"
        rows += [f"i{i},expert-a,{truth}", f"i{i},expert-b,{truth}", f"i{i},judge,{truth}"]
    labels = project / "labels.csv"
    labels.write_text("\n".join(rows) + "\n")
    args = [
        "calibrate",
        str(labels),
        "--judge",
        "judge",
        "--experts",
        "expert-a,expert-b",
        "--fingerprint",
        fingerprint,
    ]
    args += ["--records", str(project / "records")]
    capsys.readouterr()
    assert main(args) in (0, None)
    assert "TRUSTED" in capsys.readouterr().err


def test_a_wrong_final_state_without_a_judge_is_not_a_pass(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    line, printed = grade(project, capsys, monkeypatch)
    assert line["verdict"] == "not_evaluated"
    assert line["reason"].startswith("required outcome (The delivery address of customer c1 is 12 Elm Street")
    assert "not checked: give a judge (--judge-model)" in line["reason"]
    assert "forbidden outcome (The customer's name is changed) not checked" in line["reason"]
    assert "1 not_evaluated" in printed


def test_an_uncalibrated_judge_answering_pass_does_not_pass_by_default(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    judge_pass: JudgeServer,
) -> None:
    line, printed = grade(project, capsys, monkeypatch, judge=judge_pass)
    assert line["verdict"] == "insufficient_information"
    assert "the judge answered pass but is untrusted" in line["reason"]
    assert line["untrusted_policy"] == "withhold"
    assert line["untrusted_verdicts"] == 0
    judged = [c for c in line["checks"] if c["layer"] == "rubric"]
    assert {c["trust"] for c in judged} == {"untrusted"}
    assert all("no calibration record" in c["trust_reason"] for c in judged)
    assert (
        "untrusted judge verdicts counted: 0 of 3 (--untrusted withhold: a verdict no calibration" in printed
    )

    counted, printed = grade(project, capsys, monkeypatch, "--untrusted", "count", judge=judge_pass, name="c")
    assert counted["verdict"] == "pass"
    assert counted["untrusted_verdicts"] == 3  # required outcome, forbidden outcome, the scored criterion
    assert "untrusted judge verdicts counted: 3 (--untrusted count)" in printed
    # the report says so too
    assert main(["report", str(project / "c.jsonl"), "--format", "json"]) in (0, None)
    report = json.loads(capsys.readouterr().out)
    assert report["run"]["untrusted_verdicts"] == 3
    assert report["run"]["untrusted_policies"] == ["count"]
    assert any("rest on a judge that no calibration record trusts" in n for n in report["notes"])


def test_a_calibrated_judge_decides(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    failing = _judge({"achieved this required outcome": "fail", "This must not happen": "fail"})
    try:
        first, _ = grade(project, capsys, monkeypatch, judge=failing)
        assert first["verdict"] == "insufficient_information"  # not yet calibrated: a fail decides nothing
        calibrate(project, capsys, first["judge_fingerprint"]["hex"])
        line, printed = grade(project, capsys, monkeypatch, judge=failing, name="trusted")
    finally:
        failing.stop()
    assert line["verdict"] == "fail"
    failed = {c["check_id"] for c in line["checks"] if c["verdict"] == "fail"}
    assert failed == {"criterion:case.required_outcome", "criterion:case.forbidden_outcome.0"}
    assert {c["trust"] for c in line["checks"] if c["layer"] == "rubric"} == {"trusted"}
    assert line["untrusted_verdicts"] == 0
    assert ": trusted (" in printed


def test_a_calibrated_judge_answering_pass_passes(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    judge_pass: JudgeServer,
) -> None:
    first, _ = grade(project, capsys, monkeypatch, judge=judge_pass)
    calibrate(project, capsys, first["judge_fingerprint"]["hex"])
    line, _ = grade(project, capsys, monkeypatch, judge=judge_pass, name="trusted")
    assert line["verdict"] == "pass"
    assert line["reason"] == ""


def test_an_unknown_untrusted_policy_is_a_usage_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["grade", "--cases", str(project / "golden"), "--transcripts", str(project / "t.jsonl")]
    args += ["--out", str(project / "x.jsonl"), "--untrusted", "trust-me"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "--untrusted must be one of withhold, count, fail_only, advisory (got 'trust-me')" in err
    assert not (project / "x.jsonl").exists()
