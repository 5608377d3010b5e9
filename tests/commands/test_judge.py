"""``judgekit rubrics`` and ``judgekit cassette`` commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgekit.cli import main
from judgekit.judges.cache import Cassette


def test_rubrics_list_shows_every_shipped_rubric(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rubrics", "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in out] == [
        "clarifying-questions",
        "grounded-in-policy",
        "honest-reporting",
        "refusal-escalation",
    ]
    assert "4 criteria (3 gates)" in out[2]


def test_rubrics_show_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rubrics", "show", "honest-reporting"]) == 0
    text = capsys.readouterr().out
    assert "- no_false_success [honesty; GATE; incorrect_reporting]" in text
    assert main(["rubrics", "show", "honest-reporting", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["id"] == "honest-reporting"
    assert len(data["content_hash"]) == 64


def test_rubrics_show_lists_a_rubric_few_shot_examples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A rubric with examples (a refinement's candidate) shows them in text and JSON; it used to crash."""
    import yaml

    from judgekit.judges.rubric import load_builtin_rubric

    data = load_builtin_rubric("honest-reporting").model_dump(mode="json", exclude_none=True)
    data["examples"] = [
        {"criterion": "no_false_success", "label": "fail", "text": "Your refund is done."},
        {"criterion": "case.acceptance", "label": "pass", "text": "Booking cancelled."},
    ]
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert main(["rubrics", "show", str(path)]) == 0
    text = capsys.readouterr().out
    assert "  example (fail): Your refund is done." in text
    assert "- example for case.acceptance (pass): Booking cancelled." in text
    assert main(["rubrics", "show", str(path), "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)["examples"]
    assert [e["criterion"] for e in shown] == ["no_false_success", "case.acceptance"]


def test_rubrics_show_unknown_id_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rubrics", "show", "nope"]) == 2  # an unknown id: an input error
    assert "no built-in rubric 'nope'" in capsys.readouterr().err


def test_rubrics_check_reports_each_bad_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("id: g\nversion: 1\ncriteria:\n  - id: a\n    text: t\n", encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: b\nversion: 1\ncriteria:\n  - id: a\n    txt: t\n", encoding="utf-8")
    assert main(["rubrics", "check", str(good), str(bad)]) == 1
    captured = capsys.readouterr()
    assert "good.yaml: ok (g v1, 1 criteria)" in captured.out
    assert "bad.yaml:5: criteria.0.txt: Extra inputs are not permitted" in captured.err
    assert main(["rubrics", "check", str(good)]) == 0


def test_cassette_stats_and_compact(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.jsonl"
    cassette = Cassette(path)
    cassette.put("b", {"model": "openai/x"}, {"content": "1"})
    cassette.put("a", {"model": "openai/x"}, {"content": "2"})
    cassette.put("b", {"model": "openai/x"}, {"content": "3"})
    assert main(["cassette", "stats", str(path)]) == 0
    assert "2 recorded replies, 0 unusable line(s)" in capsys.readouterr().out
    assert main(["cassette", "compact", str(path)]) == 0
    assert "3 line(s) -> 2 record(s)" in capsys.readouterr().out
    keys = [json.loads(line)["key"] for line in path.read_text(encoding="utf-8").splitlines()]
    assert keys == ["a", "b"]


def test_cassette_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cassette", "stats", str(tmp_path / "none.jsonl")]) == 2
    assert f"path '{tmp_path / 'none.jsonl'}' does not exist" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- --format json

AIRDESK_CASSETTE = Path(__file__).resolve().parents[2] / "examples" / "airdesk" / "cassettes"


def _document(capsys: pytest.CaptureFixture[str], kind: str) -> dict:
    """The one JSON document on standard output, checked to be of ``kind``."""
    document = json.loads(capsys.readouterr().out)
    assert document["schema_version"] == 1
    assert document["kind"] == kind
    return document


def test_rubrics_list_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rubrics", "list", "--format", "json"]) == 0
    document = _document(capsys, "rubric_list")
    rows = {row["id"]: row for row in document["rubrics"]}
    assert list(rows) == [
        "clarifying-questions",
        "grounded-in-policy",
        "honest-reporting",
        "refusal-escalation",
    ]
    honest = rows["honest-reporting"]
    assert (honest["criteria"], honest["gates"], honest["version"]) == (4, 3, "1")
    assert honest["title"] == "Honest reporting of what the tools did"
    assert len(honest["content_hash"]) == 64


def test_rubrics_check_json_lists_each_file_and_its_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from judgekit.judges.rubric import builtin_rubric_dir

    good = builtin_rubric_dir() / "honest-reporting.yaml"
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: b\nversion: 1\ncriteria:\n  - id: a\n    txt: t\n", encoding="utf-8")
    assert main(["rubrics", "check", str(good), str(bad), "--format", "json"]) == 1
    document = _document(capsys, "rubric_check")
    assert (document["checked"], document["valid"], document["invalid"]) == (2, 1, 1)
    ok, broken = document["files"]
    assert ok == {
        "file": str(good),
        "ok": True,
        "id": "honest-reporting",
        "version": "1",
        "criteria": 4,
        "problems": [],
    }
    assert broken["ok"] is False
    extra = next(p for p in broken["problems"] if p["field"] == "criteria.0.txt")
    assert (extra["file"], extra["line"], extra["message"]) == (str(bad), 5, "Extra inputs are not permitted")
    assert main(["rubrics", "check", str(good), "--format", "json"]) == 0
    assert _document(capsys, "rubric_check")["invalid"] == 0


def test_cassette_stats_json_counts_replies_models_and_unusable_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "judge.jsonl"
    path.write_bytes((AIRDESK_CASSETTE / "judge-honest-reporting.jsonl").read_bytes() + b'{"torn": \n')
    replies = len(Cassette(path))
    assert replies > 100
    assert main(["cassette", "stats", str(path), "--format", "json"]) == 0
    document = _document(capsys, "cassette_stats")
    assert document["file"] == str(path)
    assert document["recorded_replies"] == replies
    assert document["unusable_lines"] == 1
    assert document["models"] == {"openai/airdesk-synthetic-judge": replies}
    assert document["meta"]["synthetic"] is True
    assert document["meta"]["rubric"] == "honest-reporting"


def test_cassette_compact_json_says_what_was_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "judge.jsonl"
    original = (AIRDESK_CASSETTE / "judge-honest-reporting.jsonl").read_text(encoding="utf-8")
    lines = original.splitlines()
    superseded = next(line for line in lines if '"key"' in line)
    path.write_text(original + superseded + "\n", encoding="utf-8")  # one reply recorded twice
    assert main(["cassette", "compact", str(path), "--format", "json"]) == 0
    document = _document(capsys, "cassette_compaction")
    assert document["lines_before"] == len(lines) + 1
    assert document["records_kept"] == len(lines) - 1  # every line but the meta header is a reply
    assert document["lines_after"] == len(lines)
    assert document["meta_header"] is True
    assert len(path.read_text(encoding="utf-8").splitlines()) == document["lines_after"]


@pytest.mark.parametrize(
    "args",
    [("rubrics", "list"), ("rubrics", "show", "honest-reporting"), ("rubrics", "check", "{rubric}")],
)
def test_judge_commands_refuse_an_unknown_format(
    args: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    from judgekit.judges.rubric import builtin_rubric_dir

    rubric = str(builtin_rubric_dir() / "honest-reporting.yaml")
    assert main([*(a.format(rubric=rubric) for a in args), "--format", "yaml"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == "error: --format must be text or json (got 'yaml')"
