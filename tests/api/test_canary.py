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


def write_project(root: Path, judge: dict[str, Any]) -> None:
    """The golden set (one case), 80 transcripts (and the first two apart), the rubric, an empty records
    folder and the run configuration with these ``judge`` settings."""
    (root / "golden" / "cases").mkdir(parents=True)
    (root / "golden" / "cases" / "refund.yaml").write_text(CASE)
    lines = [json.dumps(_transcript(i)) for i in range(1, TRIALS + 1)]
    (root / "all.jsonl").write_text("\n".join(lines) + "\n")
    (root / "two.jsonl").write_text("\n".join(lines[:2]) + "\n")
    (root / "rubric.yaml").write_text(RUBRIC)
    (root / "records").mkdir()
    (root / "run.yaml").write_text(json.dumps({"judge": judge}))


@pytest.fixture
def project(tmp_path: Path, judge: tuple[JudgeServer, Judge], monkeypatch: pytest.MonkeyPatch) -> Path:
    prices = {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}
    write_project(tmp_path, {"api_base": judge[0].api_base, **prices})
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


def calibrate_args(fingerprint: str, records: str | Path) -> list[str]:
    """``judgekit calibrate`` of labels.csv (judge ``judge``, experts a and b) with the project's rubric and
    golden set, keyed by ``fingerprint``, into ``records``."""
    return [
        *("calibrate", "labels.csv", "--judge", "judge", "--experts", "a,b", "--fingerprint", fingerprint),
        *("--records", str(records), "--rubric", "rubric.yaml", "--cases", "golden"),
    ]


def calibrated(capsys: pytest.CaptureFixture[str], project: Path, fingerprint: str) -> None:
    results = [json.loads(line) for line in (project / "full.jsonl").read_text().splitlines()]
    rows = ["item_id,case_id,criterion,rater,label"]
    for line in results:
        check = next(c for c in line["checks"] if c["check_id"] == "criterion:polite")
        truth = "pass" if line["trial"] % 2 == 0 else "fail"
        item = f"refund#{line['trial']},refund,polite"
        rows += [f"{item},a,{truth}", f"{item},b,{truth}", f"{item},judge,{check['verdict']}"]
    (project / "labels.csv").write_text("\n".join(rows) + "\n")
    code, printed, err = run(capsys, *calibrate_args(fingerprint, "records"))
    assert code == 0, printed + err
    assert "TRUSTED" in printed, printed
    assert "NOT TRUSTED" not in printed, printed


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


# --------------------------------------------------------------------------- one test per error message


@pytest.fixture(scope="module")
def calibrated_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A project graded and calibrated once (no canary set yet), its judge server running."""
    root = tmp_path_factory.mktemp("canary-errors")
    server = JudgeServer(Judge()).start()
    with pytest.MonkeyPatch.context() as patch:
        write_project(root, {"api_base": server.api_base})
        patch.setenv("OPENAI_API_KEY", "sk-canary-0000")
        patch.chdir(root)
        assert main(
            [
                "grade",
                "--cases",
                "golden",
                "--transcripts",
                "all.jsonl",
                "--out",
                "full.jsonl",
                "--no-progress",
                "--records",
                "records",
                *JUDGE,
            ]
        ) in (0, None)
        first = json.loads((root / "full.jsonl").read_text().splitlines()[0])
        fingerprint = first["judge_fingerprint"]["hex"]
        rows = ["item_id,case_id,criterion,rater,label"]
        for i in range(1, TRIALS + 1):
            truth = "pass" if i % 2 == 0 else "fail"
            rows += [f"refund#{i},refund,polite,{r},{truth}" for r in ("a", "b", "judge")]
        (root / "labels.csv").write_text("\n".join(rows) + "\n")
        assert main(calibrate_args(fingerprint, "records")) in (0, None)
        yield root, fingerprint
    server.stop()


@pytest.fixture
def errors_project(calibrated_project: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    root, fingerprint = calibrated_project
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-0000")
    monkeypatch.chdir(root)
    return root, fingerprint


def refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, printed, err = run(capsys, *args)
    assert code == 2, printed + err
    return " ".join(err.split())


CANARY_SET = ("judge", "canary-set", "full.jsonl", "--transcripts", "all.jsonl", "--cases", "golden")


def test_a_check_without_a_calibration_record_is_refused(
    errors_project: tuple[Path, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "empty").mkdir()
    err = refused(capsys, "judge", "canary", "-n", "5", "--records", str(tmp_path / "empty"), *JUDGE)
    assert (
        f"no calibration record for fingerprint {errors_project[1][:12]} in {tmp_path / 'empty'}: a "
        "canary set is kept with the judge's latest calibration record; calibrate the judge first" in err
    )


def test_a_check_without_a_canary_set_says_how_to_build_it(
    errors_project: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    err = refused(capsys, "judge", "canary", "-n", "5", "--records", "records", *JUDGE)
    assert "no canary set for calibration record " in err
    assert "build it from the results its judge graded with `judgekit judge canary-set RESULTS" in err


def with_canary_set(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    """A copy of the project's records folder whose record has its canary set: (folder, record)."""
    records = tmp_path / "records"
    records.mkdir()
    (record,) = (root / "records").glob("*.json")
    (records / record.name).write_bytes(record.read_bytes())
    code, printed, err = run(capsys, *CANARY_SET, "--records", str(records), *JUDGE)
    assert code == 0, printed + err
    return records, record


def test_a_canary_set_of_a_changed_record_is_refused(
    errors_project: tuple[Path, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    records, record = with_canary_set(errors_project[0], tmp_path, capsys)
    (records / record.name).write_bytes(record.read_bytes() + b" ")
    err = refused(capsys, "judge", "canary", "-n", "5", "--records", str(records), *JUDGE)
    assert "the canary set was built for another version of " in err
    assert "build it again with `judgekit judge canary-set`" in err


def test_a_check_in_replay_mode_is_refused(
    errors_project: tuple[Path, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    records, _ = with_canary_set(errors_project[0], tmp_path, capsys)
    (tmp_path / "c.jsonl").write_text("")
    err = refused(
        capsys,
        "judge",
        "canary",
        "-n",
        "5",
        "--records",
        str(records),
        *JUDGE,
        "--cassette",
        str(tmp_path / "c.jsonl"),
        "--cache-mode",
        "replay",
    )
    assert (
        "a canary check re-asks the judge, and cache mode 'replay' never calls the model: use "
        "--cache-mode record or off" in err
    )


def test_grade_canary_without_a_judge_is_refused(
    errors_project: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    err = refused(
        capsys,
        "grade",
        "--cases",
        "golden",
        "--transcripts",
        "all.jsonl",
        "--out",
        "none.jsonl",
        "--no-progress",
        "--canary",
        "3",
    )
    assert "--canary re-asks the judge's canaries: give a judge (--judge-model)" in err


def test_a_negative_canary_count_is_refused() -> None:
    from judgekit.api.runs import RunOptions
    from judgekit.errors import JudgekitError

    with pytest.raises(JudgekitError, match=r"^--canary must be 0 \(none\) or more \(got -1\)$"):
        RunOptions(canary=-1)


def test_a_tolerance_out_of_range_is_refused(
    errors_project: tuple[Path, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    err = refused(capsys, *CANARY_SET, "--records", "records", *JUDGE, "--tolerance", "1.5")
    assert "--tolerance must be above 0 and below 1 (got 1.5)" in err


def test_results_without_a_labelled_item_are_refused(
    errors_project: tuple[Path, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "other.jsonl").write_text(json.dumps(_transcript(TRIALS + 1)) + "\n")
    out = tmp_path / "other-results.jsonl"
    code, printed, err = run(
        capsys,
        "grade",
        "--cases",
        "golden",
        "--transcripts",
        str(tmp_path / "other.jsonl"),
        "--out",
        str(out),
        "--no-progress",
        "--records",
        "records",
        *JUDGE,
    )
    assert code == 0, printed + err
    err = refused(
        capsys,
        "judge",
        "canary-set",
        str(out),
        "--transcripts",
        str(tmp_path / "other.jsonl"),
        "--cases",
        "golden",
        "--records",
        "records",
        *JUDGE,
    )
    assert f"{out}: no item the record " in err
    assert "give the results file the labelled items were graded in (item ids are CASE#TRIAL)" in err


def test_a_record_of_another_judge_is_refused(
    errors_project: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    root, fingerprint = errors_project
    (record,) = (root / "records").glob("*.json")
    err = refused(
        capsys,
        *CANARY_SET,
        "--records",
        "records",
        "--record",
        str(record),
        "--judge-model",
        "openai/another-judge",
        "--config",
        "run.yaml",
        "--rubric",
        "rubric.yaml",
    )
    assert f"the record is for fingerprint {fingerprint[:12]}, the judge configured is " in err


def test_calibrate_keeps_the_canary_set_when_given_the_judges_results(
    errors_project: tuple[Path, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _, fingerprint = errors_project
    records = tmp_path / "records"
    records.mkdir()
    code, printed, err = run(
        capsys,
        *calibrate_args(fingerprint, records),
        *("--canary-results", "full.jsonl", "--canary-transcripts", "all.jsonl"),
    )
    assert code == 0, printed + err
    (record,) = records.glob("*.json")
    assert f"canary set: {records / 'canaries' / record.name}" in err
    canaries = json.loads((records / "canaries" / record.name).read_text())
    assert (canaries["fingerprint"], canaries["record_file"], len(canaries["items"])) == (
        fingerprint,
        record.name,
        TRIALS,
    )


def test_calibrate_canary_results_without_their_transcripts_are_refused(
    errors_project: tuple[Path, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    err = refused(capsys, *calibrate_args(errors_project[1], tmp_path), "--canary-results", "full.jsonl")
    assert (
        "--canary-results needs the transcripts it was graded from (--canary-transcripts FILE) and the "
        "golden set (--cases FOLDER)" in err
    )
    assert list(tmp_path.glob("*.json")) == []  # refused before anything was measured or written


def test_the_configuration_key_re_asks_canaries_before_a_run(
    errors_project: tuple[Path, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root, fingerprint = errors_project
    records, _ = with_canary_set(root, tmp_path, capsys)
    config = json.loads((root / "run.yaml").read_text())
    (tmp_path / "canary.yaml").write_text(json.dumps({"judge": {**config["judge"], "canary": 7}}))
    judge = (
        "--judge-model",
        "openai/canary-judge",
        "--rubric",
        "rubric.yaml",
        "--config",
        str(tmp_path / "canary.yaml"),
    )
    code, printed, err = run(
        capsys,
        *("grade", "--cases", "golden", "--transcripts", "two.jsonl", "--out", str(tmp_path / "r.jsonl")),
        *("--no-progress", "--records", str(records), *judge, "--format", "json"),
    )
    assert code == 0, printed + err
    summary = json.loads(printed)
    assert (summary["canary"]["check"]["check"], len(summary["canary"]["check"]["replies"])) == (1, 7)
    assert summary["judge"]["trust"] == "trusted"
    assert f"canary check 1 of fingerprint {fingerprint[:12]}: 7 item(s) re-asked" in err
    assert len(list((records / "canary-history").glob("*.json"))) == 1


@pytest.mark.parametrize("value", ["lots", True, -1, 10001, 2.5])
def test_a_canary_count_in_a_run_configuration_that_is_not_a_count_is_refused(
    errors_project: tuple[Path, str], capsys: pytest.CaptureFixture[str], tmp_path: Path, value: object
) -> None:
    config = json.loads((errors_project[0] / "run.yaml").read_text())
    (tmp_path / "bad.yaml").write_text(json.dumps({"judge": {**config["judge"], "canary": value}}))
    err = refused(
        capsys,
        *("grade", "--cases", "golden", "--transcripts", "two.jsonl", "--out", str(tmp_path / "r.jsonl")),
        *("--judge-model", "openai/canary-judge", "--config", str(tmp_path / "bad.yaml")),
    )
    assert f"bad.yaml:1: judge.canary: must be a whole number from 0 to 10000; got {value!r}" in err
