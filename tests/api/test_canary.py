"""Drift canaries end to end over real HTTP: a loopback judge that changes halfway through a series of runs.

The judge is a scripted OpenAI-compatible server on 127.0.0.1. It is graded, calibrated (``judgekit
calibrate`` on a label table whose judge rows are its verdicts), given a canary set (``judgekit judge
canary-set`` from the results file it graded), then graded again and again with ``--canary 20``. Halfway
through, the server starts failing every polite transcript: the next run's canary check declares drift,
its judge is untrusted with the reason, the evidence and what to do, and the runs before it were not.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judgekit.cli import main
from judges.server import JudgeServer, Reply, verdict_reply

TRIALS = 80
RUBRIC = """\
id: manners
version: "1"
criteria:
  - id: polite
    text: The agent thanks the customer.
    critical: false
"""
CASE = "id: refund\nversion: 1\nuser_goal: Refund order 17.\nacceptance: The agent refunds order 17.\n"


def _transcript(trial: int) -> dict[str, Any]:
    words = "Done: order 17 is refunded, thank you." if trial % 2 == 0 else "Done: order 17 is refunded."
    return {
        "case_id": "refund",
        "trial": trial,
        "messages": [
            {"role": "user", "content": f"Refund order 17 (ticket {trial})."},
            {"role": "assistant", "content": words},
        ],
    }


class Judge:
    """Passes a transcript that says thank you; after :attr:`drifted` is set, fails every transcript."""

    def __init__(self) -> None:
        self.drifted = False

    def __call__(self, body: dict[str, Any], index: int) -> Reply:
        text = body["messages"][-1]["content"]
        polite = "thank you" in text and "polite" in text
        verdict = "pass" if polite and not self.drifted else "fail"
        if "acceptance" in text and "refunds order 17" in text:
            verdict = "pass"
        return Reply(content=verdict_reply(verdict))


@pytest.fixture
def judge() -> Iterator[tuple[JudgeServer, Judge]]:
    script = Judge()
    server = JudgeServer(script).start()
    yield server, script
    server.stop()


@pytest.fixture
def project(tmp_path: Path, judge: tuple[JudgeServer, Judge], monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "golden" / "cases").mkdir(parents=True)
    (tmp_path / "golden" / "cases" / "refund.yaml").write_text(CASE)
    lines = [json.dumps(_transcript(i)) for i in range(1, TRIALS + 1)]
    (tmp_path / "all.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "two.jsonl").write_text("\n".join(lines[:2]) + "\n")
    (tmp_path / "rubric.yaml").write_text(RUBRIC)
    (tmp_path / "records").mkdir()
    run_config = {
        "judge": {"api_base": judge[0].api_base, "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}
    }
    (tmp_path / "run.yaml").write_text(json.dumps(run_config))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-0000")
    monkeypatch.chdir(tmp_path)
    return tmp_path


JUDGE = ("--judge-model", "openai/canary-judge", "--config", "run.yaml", "--rubric", "rubric.yaml")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    printed = capsys.readouterr()
    assert "Traceback" not in printed.err
    return code or 0, printed.out, printed.err


def grade(
    capsys: pytest.CaptureFixture[str], out: str, transcripts: str, *extra: str
) -> tuple[dict[str, Any], str]:
    code, printed, err = run(
        capsys,
        *("grade", "--cases", "golden", "--transcripts", transcripts, "--out", out, "--no-progress"),
        *("--records", "records", *JUDGE, "--format", "json", *extra),
    )
    assert code == 0, printed + err
    return json.loads(printed), err


def calibrated(capsys: pytest.CaptureFixture[str], project: Path, fingerprint: str) -> None:
    results = [json.loads(line) for line in (project / "full.jsonl").read_text().splitlines()]
    rows = ["item_id,case_id,criterion,rater,label"]
    for line in results:
        check = next(c for c in line["checks"] if c["check_id"] == "criterion:polite")
        truth = "pass" if line["trial"] % 2 == 0 else "fail"
        item = f"refund#{line['trial']},refund,polite"
        rows += [f"{item},a,{truth}", f"{item},b,{truth}", f"{item},judge,{check['verdict']}"]
    (project / "labels.csv").write_text("\n".join(rows) + "\n")
    code, printed, err = run(
        capsys,
        *("calibrate", "labels.csv", "--judge", "judge", "--experts", "a,b", "--fingerprint", fingerprint),
        *("--records", "records", "--rubric", "rubric.yaml", "--cases", "golden"),
    )
    assert code == 0, printed + err
    assert "TRUSTED" in printed and "NOT TRUSTED" not in printed, printed


def test_trust_is_withdrawn_after_the_judge_changes_and_not_before(
    project: Path, judge: tuple[JudgeServer, Judge], capsys: pytest.CaptureFixture[str]
) -> None:
    server, script = judge
    first, _ = grade(capsys, "full.jsonl", "all.jsonl")
    fingerprint = first["judge"]["fingerprint"]
    calibrated(capsys, project, fingerprint)
    (record,) = (project / "records").glob("*.json")

    code, printed, err = run(
        capsys,
        *("judge", "canary-set", "full.jsonl", "--transcripts", "all.jsonl", "--cases", "golden"),
        *("--records", "records", *JUDGE),
    )
    assert code == 0, printed + err
    assert (
        f"canary set of {record.name}: {TRIALS} item(s), null flip rate 0.02, false-alarm rate 0.01"
        in printed
    )
    canaries = json.loads((project / "records" / "canaries" / record.name).read_text())
    assert canaries["fingerprint"] == fingerprint
    assert {i["recorded"] for i in canaries["items"]} == {"pass", "fail"}

    trusts: list[str] = []
    reasons: list[str] = []
    for number in range(1, 7):
        if number == 4:
            script.drifted = True  # the provider silently replaces the model behind the name
        calls = server.calls
        summary, err = grade(capsys, f"run{number}.jsonl", "two.jsonl", "--canary", "20")
        assert server.calls - calls == 20 + 4  # 20 canaries re-asked (never from a cassette), 2 trials x 2
        trusts.append(summary["judge"]["trust"])
        reasons.append(summary["judge"]["trust_reason"])
        canary = summary["canary"]
        assert canary["check"]["check"] == number
        assert canary["check"]["cost"] == {
            "calls": 20,
            "prompt_tokens": 2000,
            "completion_tokens": 400,
            "usd": pytest.approx(0.0028),
            "unknown_reason": None,
        }
        assert f"canary check {number} of fingerprint {fingerprint[:12]}" in err
        line = json.loads((project / f"run{number}.jsonl").read_text().splitlines()[0])
        polite = next(c for c in line["checks"] if c["check_id"] == "criterion:polite")
        assert polite["trust"] == summary["judge"]["trust"]

    assert trusts == ["trusted"] * 3 + ["untrusted"] * 3
    assert all("canary check" in r and "clear" in r for r in reasons[:3])
    withdrawn = reasons[3]
    assert "the latest canary check (" in withdrawn
    assert "check 4 against calibration record" in withdrawn
    assert "declared drift: flips " in withdrawn
    assert ">= 200" in withdrawn
    assert "items flipped in this check: refund#" in withdrawn
    assert f"judgekit calibrate LABELS --judge JUDGE --fingerprint {fingerprint}" in withdrawn
    assert "drift was first declared by" in reasons[5]  # an alarm stands for its series
    history = sorted((project / "records" / "canary-history").glob("*.json"))
    assert [json.loads(p.read_text())["detected"] for p in history] == [False] * 3 + [True] * 3

    # the scheduled re-check says the same, exit 1
    code, printed, _ = run(capsys, "judge", "canary", "-n", "10", "--records", "records", *JUDGE)
    assert code == 1
    assert "DRIFT DETECTED: the judge is untrusted until re-calibrated" in printed
    code, printed, _ = run(capsys, "judge", "trust", fingerprint, "--records", "records", "--format", "json")
    status = json.loads(printed)
    assert status["trusted"] is False
    assert status["reason"].startswith("the latest canary check (")

    # a newer calibration record starts a new series: the withdrawal is lifted
    time.sleep(1.1)
    calibrated(capsys, project, fingerprint)
    code, printed, _ = run(capsys, "judge", "trust", fingerprint, "--records", "records")
    assert code == 0
    assert "not of the latest record" in printed
    assert "a new series starts there" in printed
