"""A case's judged text changed after calibration: the trust reason, the report and the policy say so.

Issue 35, trap 8: replacing a case's ``acceptance`` with a criterion nobody labelled left its verdict
trusted without a word, and ``judgekit judge trust FP --criterion never_labelled`` said trusted. The judge
is a real OpenAI-compatible server on 127.0.0.1; its calibration record is the one ``judgekit calibrate``
writes from a label table over the case's acceptance and the rubric's criterion.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judgekit.cli import main
from judgekit.judges.rubric import criterion_text_hash
from judges.server import JudgeServer, Reply, verdict_reply

LABELLED = "The agent issued the refund for order 17 and told the customer."
NEW = "The agent booked the customer on the next flight to Lisbon."
CASE = "id: refund\nversion: 1\nuser_goal: Refund order 17.\nacceptance: {acceptance}\n"
RUBRIC = """\
id: refunds
version: "1"
criteria:
  - id: polite
    text: The agent is polite.
    critical: false
"""
TRANSCRIPT = {
    "case_id": "refund",
    "trial": 1,
    "messages": [
        {"role": "user", "content": "Refund order 17."},
        {"role": "assistant", "content": "Done: order 17 is refunded."},
    ],
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "golden" / "cases").mkdir(parents=True)
    (tmp_path / "golden" / "cases" / "refund.yaml").write_text(CASE.format(acceptance=LABELLED))
    (tmp_path / "t.jsonl").write_text(json.dumps(TRANSCRIPT) + "\n")
    (tmp_path / "rubric.yaml").write_text(RUBRIC)
    (tmp_path / "records").mkdir()
    rows = ["item_id,case_id,criterion,rater,label"]
    for i in range(80):  # the judge agrees with two experts on 80 trials of each criterion
        truth = "fail" if i % 2 else "pass"
        for criterion in ("case.acceptance", "polite"):
            rows += [f"refund#{i},refund,{criterion},{rater},{truth}" for rater in ("a", "b", "judge")]
    (tmp_path / "labels.csv").write_text("\n".join(rows) + "\n")
    return tmp_path


@pytest.fixture
def judge() -> Iterator[JudgeServer]:
    server = JudgeServer(lambda body, i: Reply(content=verdict_reply("pass"))).start()
    yield server
    server.stop()


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(args))
    printed = capsys.readouterr()
    assert "Traceback" not in printed.err
    return code or 0, printed.out + printed.err


def grade(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    judge: JudgeServer,
    name: str,
    *extra: str,
) -> dict[str, Any]:
    """``judgekit grade`` with the judge; the one result line."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unlabelled-0000")
    (project / "run.yaml").write_text(json.dumps({"judge": {"api_base": judge.api_base}}))
    out = project / f"{name}.jsonl"
    code, printed = run(
        capsys,
        *("grade", "--cases", str(project / "golden"), "--transcripts", str(project / "t.jsonl")),
        *("--out", str(out), "--no-progress", "--records", str(project / "records")),
        *("--judge-model", "openai/unlabelled-judge", "--config", str(project / "run.yaml")),
        *("--rubric", str(project / "rubric.yaml"), *extra),
    )
    assert code == 0, printed
    return json.loads(out.read_text().splitlines()[0])


def acceptance(line: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in line["checks"] if c["check_id"] == "criterion:case.acceptance")


def note(check: dict[str, Any]) -> dict[str, Any]:
    return next(e["data"] for e in check["evidence"] if e["kind"] == "note" and "fingerprint" in e["data"])


def calibrated(project: Path, capsys: pytest.CaptureFixture[str], fingerprint: str) -> dict[str, Any]:
    code, printed = run(
        capsys,
        *("calibrate", str(project / "labels.csv"), "--judge", "judge", "--experts", "a,b"),
        *("--fingerprint", fingerprint),
        *("--records", str(project / "records"), "--rubric", str(project / "rubric.yaml")),
        *("--cases", str(project / "golden")),
    )
    assert code == 0, printed
    assert (
        "Criterion texts labelled: 2 distinct text(s) of case.acceptance, polite, recorded by hash" in printed
    )
    (record,) = (project / "records").glob("*.json")
    return json.loads(record.read_text())


def test_texts_calibrate_cannot_find_are_unresolved_and_say_how_to_find_them(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        "calibrate",
        str(project / "labels.csv"),
        "--judge",
        "judge",
        "--experts",
        "a,b",
        "--fingerprint",
        "ab" * 32,
    ]
    code, printed = run(capsys, *args, "--records", str(project / "records"), "--format", "html")
    assert code == 0, printed
    assert (
        "Criterion texts labelled: 0 distinct text(s) of case.acceptance, polite, recorded by hash (a "
        "verdict on any other text is said to rest on agreement elsewhere); texts not found for "
        "case.acceptance, polite: give the judge&#39;s rubric (--rubric) and the golden set (--cases)."
    ) in printed
    (record,) = (project / "records").glob("*.json")
    listed = json.loads(record.read_text())["criteria"]
    assert (listed["text_hashes"], listed["unresolved"]) == ([], ["case.acceptance", "polite"])
    code, out = run(capsys, "judge", "trust", "ab" * 32, "--records", str(project / "records"), "--text", NEW)
    assert code == 0
    assert out.rstrip().endswith(
        f"the criterion: whether its text ({criterion_text_hash(NEW)[:12]}) was labelled is unknown (the "
        "calibration could not find every labelled text of case.acceptance, polite: calibrate with --rubric "
        "and --cases)"
    )


def test_a_replaced_acceptance_is_said_counted_and_withheld_on_request(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, judge: JudgeServer
) -> None:
    fingerprint = grade(project, capsys, monkeypatch, judge, "first")["judge_fingerprint"]["hex"]
    record = calibrated(project, capsys, fingerprint)
    assert record["criteria"] == {
        "scheme": "judgekit.criterion-text-sha256/1",
        "ids": ["case.acceptance", "polite"],
        "text_hashes": sorted([criterion_text_hash(LABELLED), criterion_text_hash("The agent is polite.")]),
        "unresolved": [],
    }

    before = grade(project, capsys, monkeypatch, judge, "before")
    check = acceptance(before)
    assert check["trust"] == "trusted"
    assert check["trust_reason"].endswith(
        f"criterion 'case.acceptance': its text ({criterion_text_hash(LABELLED)[:12]}) is among the "
        "calibration's 2 labelled text(s)"
    )
    assert note(check)["criterion_labelled"] is True

    # the trap: the case's acceptance is replaced by a criterion nobody labelled
    (project / "golden" / "cases" / "refund.yaml").write_text(CASE.format(acceptance=NEW))
    after = grade(project, capsys, monkeypatch, judge, "after")
    assert after["judge_fingerprint"]["hex"] == fingerprint  # the judge is the same grader
    assert after["verdict"] == "pass"  # judgeable by default: count
    check = acceptance(after)
    assert check["trust"] == "trusted"
    assert check["trust_reason"].endswith(
        f"criterion 'case.acceptance': its text ({criterion_text_hash(NEW)[:12]}) was never labelled (not "
        "among the calibration's 2 labelled text(s)): the verdict rests on the judge's agreement on other "
        "criteria"
    )
    said = note(check)
    assert (said["criterion_text"], said["criterion_labelled"]) == (criterion_text_hash(NEW), False)

    _, printed = run(capsys, "report", str(project / "after.jsonl"), "--format", "json")
    report = json.loads(printed[: printed.rindex("}") + 1])
    assert (report["run"]["unlabelled_verdicts"], report["run"]["trials_with_unlabelled"]) == (1, 1)
    assert any("criterion texts the judge's calibration never labelled" in n for n in report["notes"])
    _, printed = run(capsys, "report", str(project / "after.jsonl"))
    assert "- Judge verdicts on criterion texts never labelled in calibration: 1 in 1 trial(s)" in printed
    _, printed = run(capsys, "report", str(project / "before.jsonl"))
    assert "- Judge verdicts on criterion texts never labelled in calibration: 0 in 0 trial(s)" in printed

    # the policy condition withholds it: untrusted, so the default untrusted policy decides nothing
    withheld = grade(project, capsys, monkeypatch, judge, "withheld", "--unlabelled-criteria", "withhold")
    check = acceptance(withheld)
    assert check["trust"] == "untrusted"
    assert check["trust_reason"].endswith("(withheld: unlabelled_criteria is withhold)")
    assert withheld["verdict"] == "insufficient_information"
    assert "acceptance" in withheld["reason"]
    polite = next(c for c in withheld["checks"] if c["check_id"] == "criterion:polite")
    assert polite["trust"] == "trusted"  # a labelled text keeps its trust


def test_judge_trust_says_whether_a_criterion_was_labelled(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, judge: JudgeServer
) -> None:
    fingerprint = grade(project, capsys, monkeypatch, judge, "first")["judge_fingerprint"]["hex"]
    calibrated(project, capsys, fingerprint)
    trust = ("judge", "trust", fingerprint, "--records", str(project / "records"))
    code, out = run(capsys, *trust, "--criterion", "never_labelled")
    assert code == 0
    assert out.startswith("trusted: ")
    assert out.rstrip().endswith(
        "criterion 'never_labelled' was never labelled in the calibration (labelled criteria: "
        "case.acceptance, polite)"
    )
    code, out = run(capsys, *trust, "--criterion", "never_labelled", "--unlabelled-criteria", "withhold")
    assert code == 1
    assert out.startswith("untrusted: criterion 'never_labelled' was never labelled")
    code, out = run(capsys, *trust, "--criterion", "case.acceptance", "--text", NEW, "--format", "json")
    assert code == 0
    assert json.loads(out)["criterion_labelled"] is False
    code, out = run(capsys, *trust, "--criterion", "case.acceptance", "--text", f"  {LABELLED}\n")
    assert (code, "is among the calibration's 2 labelled text(s)" in out) == (0, True)
    code, out = run(capsys, *trust, "--unlabelled-criteria", "sometimes")
    assert code == 2
    assert "--unlabelled-criteria) must be one of count, withhold (got 'sometimes')" in out


def test_an_unknown_unlabelled_policy_is_refused_before_grading(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["grade", "--cases", str(project / "golden"), "--transcripts", str(project / "t.jsonl")]
    code, out = run(capsys, *args, "--out", str(project / "x.jsonl"), "--unlabelled-criteria", "maybe")
    assert code == 2
    assert "unlabelled_criteria (--unlabelled-criteria) must be one of count, withhold (got 'maybe')" in out
    assert not (project / "x.jsonl").exists()
