from __future__ import annotations

import csv
from pathlib import Path

import pytest

from judgekit.cases import Case
from judgekit.errors import JudgekitError
from judgekit.golden.export import export_copilot_studio


def _case(i: int, **fields: object) -> Case:
    return Case.model_validate(
        {"id": f"c{i}", "input": f"question {i}", "acceptance": f"answer {i}", **fields}
    )


def _rows(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh))


def test_paraphrases_expand_and_files_cap_at_100_rows(tmp_path: Path) -> None:
    cases = [_case(i, owner="cards", paraphrases=["p1", "p2"]) for i in range(40)]  # 120 rows
    result = export_copilot_studio(cases, tmp_path / "out")
    assert [(p.name, n) for p, n in result.files] == [("cards-1.csv", 100), ("cards-2.csv", 20)]
    first = _rows(tmp_path / "out" / "cards-1.csv")
    assert first[0] == ["Question", "Expected response"]
    assert first[1:4] == [["question 0", "answer 0"], ["p1", "answer 0"], ["p2", "answer 0"]]
    assert len(first) == 101


def test_reference_answer_preferred_and_owners_split(tmp_path: Path) -> None:
    cases = [
        _case(1, owner="a", expected={"reference_answer": "the reference"}),
        _case(2),
    ]
    result = export_copilot_studio(cases, tmp_path)
    names = sorted(p.name for p, _ in result.files)
    assert names == ["a-1.csv", "unowned-1.csv"]
    assert _rows(tmp_path / "a-1.csv")[1] == ["question 1", "the reference"]


def test_multi_turn_and_too_long_left_out(tmp_path: Path) -> None:
    long_q = "x" * 1001
    cases = [
        Case.model_validate({"id": "mt", "turns": [{"user": "a"}, {"user": "b"}], "acceptance": "ok"}),
        _case(1, input=long_q, paraphrases=["short"]),
    ]
    result = export_copilot_studio(cases, tmp_path)
    assert result.multi_turn == ["mt"]
    assert result.too_long == [("c1", "question", 1001)]
    assert _rows(tmp_path / "unowned-1.csv")[1:] == [["short", "answer 1"]]


def test_out_must_be_a_folder(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("keep me", encoding="utf-8")
    with pytest.raises(JudgekitError, match="exists and is not a folder"):
        export_copilot_studio([_case(1)], target)
    assert target.read_text(encoding="utf-8") == "keep me"


def test_an_output_folder_named_as_text(tmp_path: Path) -> None:
    result = export_copilot_studio([_case(1, owner="cards")], str(tmp_path / "out"))
    assert [(p, n) for p, n in result.files] == [(tmp_path / "out" / "cards-1.csv", 1)]
    assert _rows(tmp_path / "out" / "cards-1.csv")[1] == ["question 1", "answer 1"]
