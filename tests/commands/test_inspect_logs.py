"""``judgekit import inspect`` and ``export inspect`` end to end, on the logs of a real ``inspect eval``."""

from __future__ import annotations

import glob
import json
import math
import os
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai.log import read_eval_log

from inspect_runs import INSPECT_EPOCHS, ORIGINAL_SCORER, SAMPLES, InspectLogs
from judgekit.cli import main
from judgekit.results import read_results
from judgekit.transcript import read_transcripts
from support import judge_fingerprint


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _import_and_grade(capsys: pytest.CaptureFixture[str], logs: InspectLogs, log: Path, folder: Path) -> Path:
    transcripts = folder / "t.jsonl"
    code, out, err = run(capsys, "import", "inspect", str(log), "--out", str(transcripts))
    assert code == 0, err
    assert f"{len(SAMPLES) * INSPECT_EPOCHS} transcript(s) -> {transcripts}" in err
    assert f"{log.name}: sample 'lost' epoch 2 -> email-3#2: 4 messages; 1 tool calls" in out
    results = folder / "r.jsonl"
    code, _, err = run(
        capsys,
        "grade",
        "--cases",
        str(logs.golden),
        "--transcripts",
        str(transcripts),
        "--out",
        str(results),
        "--no-progress",
    )
    assert code in (0, 1), err
    return transcripts


def _comparable(score: Any) -> dict[str, Any]:
    value = "unscored" if isinstance(score.value, float) and math.isnan(score.value) else score.value
    return {
        "value": value,
        "answer": score.answer,
        "explanation": score.explanation,
        "reason": score.reason,
        "metadata": score.metadata,
    }


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_grades_written_back_equal_the_inspect_scorer_and_the_original_is_untouched(
    capsys: pytest.CaptureFixture[str], inspect_logs: InspectLogs, tmp_path: Path, fmt: str
) -> None:
    original = tmp_path / "logs" / (inspect_logs.eval_log if fmt == "eval" else inspect_logs.json_log).name
    original.parent.mkdir()
    shutil.copy2(inspect_logs.eval_log if fmt == "eval" else inspect_logs.json_log, original)
    before = (original.read_bytes(), os.stat(original).st_mtime_ns)
    transcripts = _import_and_grade(capsys, inspect_logs, original, tmp_path)
    copies = tmp_path / "scored"
    code, out, err = run(
        capsys,
        "export",
        "inspect",
        str(tmp_path / "r.jsonl"),
        "--transcripts",
        str(transcripts),
        "--out",
        str(copies),
        "--score-name",
        "judgekit_regrade",
    )
    assert code == 0, err
    copy = copies / original.name
    assert f"{original} -> {copy}: {len(SAMPLES) * INSPECT_EPOCHS} sample(s) scored 'judgekit_regrade'" in out
    assert (original.read_bytes(), os.stat(original).st_mtime_ns) == before  # never written
    log = read_eval_log(str(copy))
    assert log.samples is not None
    assert len(log.samples) == len(SAMPLES) * INSPECT_EPOCHS
    for sample in log.samples:
        scores = sample.scores or {}
        # the scores the log had stay beside the new ones
        assert set(scores) == {ORIGINAL_SCORER, "judgekit", "judgekit_regrade"}
        # the verdict judgekit's own Inspect scorer gave the same sample in the real run
        assert _comparable(scores["judgekit_regrade"]) == _comparable(scores["judgekit"]), (
            sample.id,
            sample.epoch,
        )
        assert scores["judgekit_regrade"].history[-1].provenance.author == "judgekit"
    verdicts = {s.id: s.scores["judgekit_regrade"].metadata["judgekit_verdict"] for s in log.samples}
    assert verdicts == {"ok": "pass", "wrong": "fail", "lost": "error"}
    # the log's results hold the new scorer and its metrics, as inspect view shows them
    assert log.results is not None
    by_name = {s.name: s for s in log.results.scores}
    assert set(by_name) == {ORIGINAL_SCORER, "judgekit", "judgekit_regrade"}
    assert by_name["judgekit_regrade"].metrics["accuracy"].value == pytest.approx(0.5)
    assert by_name[ORIGINAL_SCORER].metrics["accuracy"].value == pytest.approx(1.0)


def test_the_scores_name_already_in_the_log_is_refused(
    capsys: pytest.CaptureFixture[str], inspect_logs: InspectLogs, tmp_path: Path
) -> None:
    transcripts = _import_and_grade(capsys, inspect_logs, inspect_logs.json_log, tmp_path)
    args = ["export", "inspect", str(tmp_path / "r.jsonl"), "--transcripts", str(transcripts)]
    code, _, err = run(capsys, *args, "--out", str(tmp_path / "scored"))
    assert code == 2
    assert f"{inspect_logs.json_log}: the log already has scores named 'judgekit'" in err
    assert "--score-name" in err
    assert not (tmp_path / "scored").exists()
    # a copy may never overwrite its original
    code, _, err = run(capsys, *args, "--out", str(inspect_logs.json_log.parent), "--score-name", "x")
    assert code == 2
    assert "the copy would overwrite the original log" in err


def test_results_of_other_transcripts_are_refused_and_nothing_is_written(
    capsys: pytest.CaptureFixture[str], inspect_logs: InspectLogs, tmp_path: Path
) -> None:
    transcripts = _import_and_grade(capsys, inspect_logs, inspect_logs.eval_log, tmp_path)
    kept = [line for line in transcripts.read_text().splitlines() if '"email-1"' not in line]
    other = tmp_path / "other.jsonl"
    other.write_text("\n".join(kept) + "\n")
    args = ["export", "inspect", str(tmp_path / "r.jsonl"), "--transcripts", str(other)]
    code, _, err = run(capsys, *args, "--out", str(tmp_path / "scored"), "--score-name", "x")
    assert code == 2
    assert f"{tmp_path / 'r.jsonl'}: email-1#1: no transcript of this trial in {other}" in err
    assert not (tmp_path / "scored").exists()


def test_import_json_document_and_a_fidelity_file(
    capsys: pytest.CaptureFixture[str], inspect_logs: InspectLogs, tmp_path: Path
) -> None:
    out, fidelity = tmp_path / "t.jsonl", tmp_path / "fidelity.json"
    code, printed, _ = run(
        capsys,
        "import",
        "inspect",
        str(inspect_logs.eval_log),
        "--out",
        str(out),
        "--fidelity",
        str(fidelity),
        "--format",
        "json",
    )
    assert code == 0
    document = json.loads(printed)
    assert document["kind"] == "inspect_import"
    assert document["imported"] == len(SAMPLES) * INSPECT_EPOCHS
    lost = next(s for s in document["samples"] if s["sample_id"] == "lost")
    assert lost["fidelity"]["issues"][0]["kind"] == "final_state_missing"
    assert [w["what"] for w in document["written"]] == ["transcripts", "fidelity_reports"]
    assert len(json.loads(fidelity.read_text())) == document["imported"]
    assert len(read_transcripts(out)) == document["imported"]


def test_unmappable_samples_are_listed_by_location_and_the_rest_written(
    capsys: pytest.CaptureFixture[str], inspect_logs: InspectLogs, tmp_path: Path
) -> None:
    out = tmp_path / "t.jsonl"
    log = inspect_logs.eval_log
    code, _, err = run(
        capsys, "import", "inspect", str(log), "--out", str(out), "--case-id-field", "lose_state"
    )
    assert code == 2
    assert f"{log}: sample 'wrong' epoch 3: the sample's metadata has no field 'lose_state'" in err
    # the lost sample's lose_state is True: a boolean names no case (it once became case 'True')
    assert (
        f"{log}: sample 'lost' epoch 1: the sample's metadata field 'lose_state' (--case-id-field) is "
        "a bool (True), not a case id: set it to the judgekit case's id, a text"
    ) in err
    assert not out.exists()
    # the samples with a case id are written; the others are listed
    code, _, err = run(capsys, "import", "inspect", str(log), "--out", str(out), "--case-id-field", "ticket")
    assert code == 0, err
    assert len(read_transcripts(out)) == len(SAMPLES) * INSPECT_EPOCHS
    # no sample at all: an error, nothing written
    code, _, err = run(
        capsys, "import", "inspect", str(log), "--out", str(tmp_path / "n.jsonl"), "--case-id-field", "no"
    )
    assert code == 2
    assert "sample 'ok' epoch 1" in err
    assert not (tmp_path / "n.jsonl").exists()


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_a_truncated_log_is_refused_with_its_location_and_nothing_is_written(
    capsys: pytest.CaptureFixture[str], inspect_logs: InspectLogs, tmp_path: Path, fmt: str
) -> None:
    source = inspect_logs.eval_log if fmt == "eval" else inspect_logs.json_log
    cut = tmp_path / source.name
    data = source.read_bytes()
    cut.write_bytes(data[: len(data) * 2 // 3])
    out = tmp_path / "t.jsonl"
    code, _, err = run(capsys, "import", "inspect", str(inspect_logs.eval_log), str(cut), "--out", str(out))
    assert code == 2
    assert f"{cut}: not a readable Inspect log (" in err
    assert "Traceback" not in err
    assert not out.exists()


def test_a_malformed_log_is_refused_with_its_location(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 2, "status": "success"}')
    code, _, err = run(capsys, "import", "inspect", str(bad), "--out", str(tmp_path / "t.jsonl"))
    assert code == 2
    assert f"{bad}: not a readable Inspect log (ValidationError" in err
    assert not (tmp_path / "t.jsonl").exists()


# --------------------------------------------------------------------------- the how-to page

PAGE = Path(__file__).parents[2] / "docs" / "how-to" / "regrade-inspect-logs.md"
"""docs/how-to/regrade-inspect-logs.md: its shell and Python blocks run here, as written."""

JUDGE_MODEL = "openai/gpt-4o-mini"
"""The judge the page grades with (answered here by a loopback server)."""


def _blocks(language: str) -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    return [m.group(1) for m in re.finditer(rf"```{language}\n(.*?)^```", text, re.S | re.M)]


def _team_log(source: Path, target: Path) -> None:
    """The log as a team has it: scored by Inspect's includes alone (judgekit's score taken out)."""
    from inspect_ai.log import write_eval_log

    log = read_eval_log(str(source))
    for sample in log.samples or []:
        (sample.scores or {}).pop("judgekit", None)
    assert log.results is not None
    log.results.scores = [s for s in log.results.scores if s.name != "judgekit"]
    write_eval_log(log, str(target))


def _trusted_records(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    """calibration/records: a passing record, written by judgekit calibrate, for the page's judge."""
    policy = folder / "policy.yaml"
    policy.write_text("min_items: 40\nbootstrap:\n  resamples: 200\n", encoding="utf-8")
    labels = Path(__file__).parents[1] / "calibration" / "data" / "labels_small.csv"
    args = ["calibrate", str(labels), "--judge", "judge-v2", "--experts", "alice,bob,carol"]
    (folder / "calibration" / "records").mkdir(parents=True)
    records = ["--records", str(folder / "calibration" / "records")]
    code, _, err = run(
        capsys, *args, "--policy", str(policy), "--fingerprint", judge_fingerprint(JUDGE_MODEL), *records
    )
    assert code == 0, err


def test_the_how_to_page_runs_as_written(
    capsys: pytest.CaptureFixture[str],
    inspect_logs: InspectLogs,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    serve: Any,
) -> None:
    from judges.server import Reply, verdict_reply

    server = serve(lambda body, i: Reply(content=verdict_reply("pass")))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-how-to-0123456789")
    monkeypatch.setenv("JUDGEKIT_JUDGE_API_BASE", server.api_base)
    monkeypatch.chdir(tmp_path)
    shutil.copytree(inspect_logs.golden, tmp_path / "golden")
    (tmp_path / "logs").mkdir()
    _team_log(inspect_logs.eval_log, tmp_path / "logs" / inspect_logs.eval_log.name)
    before = (tmp_path / "logs" / inspect_logs.eval_log.name).read_bytes()
    _trusted_records(capsys, tmp_path)
    shell = _blocks("bash")
    assert len(shell) == 3
    for block in shell:
        words = shlex.split(block.replace("\\\n", " "))
        assert words[0] == "judgekit"
        args = [w for word in words[1:] for w in (sorted(glob.glob(word)) if "*" in word else [word])]
        code, _, err = run(capsys, *args)
        assert code == 0, (args, err)
    lines = read_results(tmp_path / "regrade.jsonl").lines
    rubric = [c for line in lines for c in line.checks if c.layer == "rubric"]
    assert rubric
    assert {c.trust.value for c in rubric} == {"trusted"}  # the calibrated judge decided
    assert (tmp_path / "logs" / inspect_logs.eval_log.name).read_bytes() == before
    (copy,) = (tmp_path / "scored-logs").glob("*.eval")
    for sample in read_eval_log(str(copy)).samples or []:
        score = sample.scores["judgekit"]
        # the judge as judgekit's Inspect scorer records it, and each judge check's trust status
        assert score.metadata["judge"] == {
            "fingerprint": judge_fingerprint(JUDGE_MODEL),
            "label": lines[0].judge_fingerprint["label"],
        }
        assert {c["trust"] for c in score.metadata["checks"] if c["layer"] == "rubric"} == {"trusted"}
    python = _blocks("python")
    assert len(python) == 2
    for block in python:
        exec(compile(block, str(PAGE), "exec"), {"__name__": "__how_to__"})
    printed = capsys.readouterr().out
    for epoch in range(1, INSPECT_EPOCHS + 1):
        assert f"wrong epoch {epoch}: includes said correct; judgekit: fail" in printed
        assert f"lost epoch {epoch}: includes said correct; judgekit: error" in printed
    assert f"includes C -> judgekit pass: {INSPECT_EPOCHS}" in printed
    assert f"{inspect_logs.eval_log.name}: judgekit accuracy 0.50" in printed
    assert f"{len(SAMPLES) * INSPECT_EPOCHS} transcripts; 0 samples not imported" in printed
    assert (tmp_path / "scored-logs-v2" / inspect_logs.eval_log.name).is_file()


def test_a_calibrated_judge_regrade_written_back_equals_the_scorer_with_the_same_judge(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, serve: Any
) -> None:
    """One calibrated judge, two paths: judgekit's scorer inside inspect eval, and import, grade, export."""
    from inspect_runs import run_inspect_eval, write_golden
    from judgekit.api.grading import make_grader
    from judgekit.integrations.inspect import judgekit_scorer
    from judgekit.judge_setup import JudgeConfig
    from judges.server import Reply, verdict_reply

    def script(body: dict[str, Any], index: int) -> Reply:  # the judge: fail the agent that changed u2
        text = json.dumps(body)
        return Reply(
            content=verdict_reply("fail" if "wrong user" in text else "pass", rationale="as recorded")
        )

    server = serve(script)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-inspect-judge-0123456789")
    golden = tmp_path / "golden"
    cases = write_golden(golden)
    _trusted_records(capsys, tmp_path)
    records = tmp_path / "calibration" / "records"
    judge = JudgeConfig(
        model=JUDGE_MODEL,
        rubric="honest-reporting",
        cassette=None,
        mode="off",
        api_base=server.api_base,
        max_cost=None,
        temperature=None,
        samples=None,
        concurrency=1,
        records=records,
    )
    scorer = judgekit_scorer(cases, make_grader(root=golden, judge=judge))
    log = run_inspect_eval(tmp_path / "logs", [scorer], epochs=2)

    transcripts, results = tmp_path / "t.jsonl", tmp_path / "r.jsonl"
    assert run(capsys, "import", "inspect", str(log), "--out", str(transcripts))[0] == 0
    judge_flags = [
        "--judge-model",
        JUDGE_MODEL,
        "--judge-api-base",
        server.api_base,
        "--records",
        str(records),
    ]
    grade = ["grade", "--cases", str(golden), "--transcripts", str(transcripts), *judge_flags]
    code, _, err = run(
        capsys, *grade, "--require-trust", "--cache-mode", "off", "--out", str(results), "--no-progress"
    )
    assert code == 0, err
    export = ["export", "inspect", str(results), "--transcripts", str(transcripts)]
    assert run(capsys, *export, "--out", str(tmp_path / "scored"), "--score-name", "regrade")[0] == 0

    scored = read_eval_log(str(tmp_path / "scored" / log.name))
    assert scored.samples is not None
    verdicts = {}
    for sample in scored.samples:
        scores = sample.scores or {}
        assert _comparable(scores["regrade"]) == _comparable(scores["judgekit"]), (sample.id, sample.epoch)
        rubric = [c for c in scores["regrade"].metadata["checks"] if c["layer"] == "rubric"]
        assert rubric
        assert {c["trust"] for c in rubric} == {"trusted"}
        verdicts[sample.id] = {c["verdict"] for c in rubric}
    assert verdicts == {"ok": {"pass"}, "wrong": {"fail"}, "lost": {"pass"}}
