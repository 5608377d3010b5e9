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


def test_rubrics_show_unknown_id_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rubrics", "show", "nope"]) == 1
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
