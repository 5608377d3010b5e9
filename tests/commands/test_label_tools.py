"""``judgekit labels import``: each tool's export imported, then calibrated with the annotators named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgekit.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "label_tools"

#: The command line of each tool's import (the fixture and the options that map it).
IMPORTS = {
    "label-studio": [
        "label_studio_export.json",
        "--map",
        "Yes=pass,No=fail",
        "--rater-name",
        "alice@example.com=alice,12=bob",
    ],
    "argilla": [
        "argilla",
        "--rater-name",
        "7c1a6f3e-0b8e-4a57-9a52-3f1d2a6c0a11=alice,d2f4b9a0-5c3e-4e1b-8f6a-9b7c1e2d3f44=bob",
    ],
    "langfuse": [
        "langfuse_scores.csv",
        "--map",
        "True=pass,False=fail",
        "--item-field",
        "item_id",
        "--rater-name",
        "user_alice=alice,user_bob=bob",
    ],
    "phoenix": [
        "phoenix_span_annotations.json",
        "--map",
        "correct=pass,incorrect=fail",
        "--item-field",
        "item_id",
        "--rater-name",
        "VXNlcjoy=alice,VXNlcjoz=bob",
    ],
}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "policy.yaml").write_text("min_items: 5\nbootstrap:\n  resamples: 200\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("tool", list(IMPORTS))
def test_each_import_feeds_calibrate_with_the_annotators_as_experts(
    tool: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name, *options = IMPORTS[tool]
    code, out, err = run(
        capsys,
        "labels",
        "import",
        tool,
        str(FIXTURES / name),
        "--out",
        "labels.csv",
        "--model-rater",
        "judge",
        *options,
    )
    assert code == 0, err
    assert out.startswith(
        "wrote labels.csv: 18 label(s) on 6 item(s) (resolved) by alice (6), bob (6), judge (6)\n"
    )
    assert out.endswith("Next: judgekit calibrate labels.csv --judge judge --experts alice,bob\n")
    code, report, err = run(
        capsys,
        "calibrate",
        "labels.csv",
        "--judge",
        "judge",
        "--experts",
        "alice,bob",
        "--policy",
        "policy.yaml",
        "--no-record",
    )
    assert code == 1, err  # six items: too few and too uncertain to trust, but measured
    assert report.startswith("# Calibration of judge `judge` against `alice`, `bob`\n")
    assert (
        "| percent agreement | 0.800 " in report
    )  # the judge agrees with the consensus on 4 of 5 decided items


def test_unmapped_records_are_listed_by_location_and_nothing_is_written(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys,
        "labels",
        "import",
        "phoenix",
        str(FIXTURES / "phoenix_span_annotations.json"),
        "--out",
        "l.csv",
    )
    assert code == 2
    assert not (project / "l.csv").exists()
    source = FIXTURES / "phoenix_span_annotations.json"
    assert err.splitlines()[0] == (
        f"{source}: [0].result: annotation U3BhbkFubm90YXRpb2461 (resolved): 'correct' is not a label of "
        "the scale ['pass', 'fail', 'insufficient_information']; map it with --map correct=<label> (or "
        "declare the tool's values with --scale)"
    )
    assert "12 record(s) could not be mapped; nothing written" in err
    assert "pass --accept-skipped to write the labels that mapped" in err
    assert "left out: 6 LLM annotations (Phoenix annotator_kind LLM; --model-rater NAME imports them" in out


def test_the_json_document_lists_raters_left_out_and_problems(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys,
        "labels",
        "import",
        "argilla",
        str(FIXTURES / "argilla"),
        "--out",
        "l.jsonl",
        "--format",
        "json",
    )
    assert code == 0
    doc = json.loads(out)
    assert doc["kind"] == "label_import"
    assert doc["raters"] == {
        "7c1a6f3e-0b8e-4a57-9a52-3f1d2a6c0a11": 6,
        "d2f4b9a0-5c3e-4e1b-8f6a-9b7c1e2d3f44": 6,
    }
    assert doc["left_out"] == {
        "draft responses (only submitted responses are labels)": 1,
        "model suggestions (Argilla suggestions; --model-rater NAME imports them as that rater)": 6,
    }
    assert doc["problems"] == []
    assert doc["next"].startswith("add the judge's rows (judgekit labels from-results")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--map", "Yes"], "--map: 'Yes' is not FROM=TO"),
        (["--rater-name", "a=b,a=c"], "--rater-name: 'a' is given twice"),
        (["--map", "Yes=ok"], "--map: 'ok' is not a label of the scale"),
        (["--positive", "1"], "--positive and --abstain apply to a declared --scale"),
        (["--scale", "1,1"], "--scale: "),
    ],
)
def test_option_mistakes_exit_2_with_the_option_named(
    args: list[str], message: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        capsys,
        "labels",
        "import",
        "label-studio",
        str(FIXTURES / "label_studio_export.json"),
        "--out",
        "l.csv",
        *args,
    )
    assert code == 2
    assert message in err


def test_a_refusal_in_json_is_the_document_with_its_problems_and_exit_2(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = FIXTURES / "label_studio_export.json"
    code, out, _ = run(
        capsys, "labels", "import", "label-studio", str(source), "--out", "l.csv", "--format", "json"
    )
    assert code == 2
    doc = json.loads(out)
    assert (doc["written"], doc["labels"], len(doc["problems"])) == (False, 0, 12)
    assert doc["problems"][0] == {
        "file": str(source),
        "line": None,
        "field": "[0].annotations[0].result[0].value",
        "message": "task 101, annotation 2001, control 'resolved': 'Yes' is not a label of the scale "
        "['pass', 'fail', 'insufficient_information']; map it with --map Yes=<label> (or declare the tool's "
        "values with --scale)",
    }
    assert not (project / "l.csv").exists()
    code, out, _ = run(
        capsys,
        "labels",
        "import",
        "label-studio",
        str(source),
        "--out",
        "l.csv",
        "--map",
        "Yes=pass",
        "--accept-skipped",
        "--format",
        "json",
    )
    assert code == 0
    doc = json.loads(out)
    assert (doc["written"], doc["labels"], len(doc["problems"])) == (
        True,
        7,
        5,
    )  # the Yes labels; 5 No listed
