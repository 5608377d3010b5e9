"""Two experts' label tables reconciled (``judgekit labels reconcile``): findings, outputs, exit codes."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from judgekit.api.expert_labels import reconcile_labels
from judgekit.calibration.labels import parse_labels
from judgekit.cli import main
from judgekit.errors import JudgekitError

HEADER = "item_id,criterion,rater,label,case_id,notes,saw_judge\n"


def table(folder: Path, rater: str, rows: list[tuple[str, str, str, str]], *, saw: str = "no") -> Path:
    """A downloaded table: (item, criterion, label, notes) rows by ``rater``."""
    path = folder / f"{rater}.csv"
    body = "".join(f'{i},{c},{rater},{label},{i.split("#")[0]},"{n}",{saw}\n' for i, c, label, n in rows)
    path.write_text(HEADER + body, encoding="utf-8")
    return path


ANN = [
    ("c-1#1", "tone", "pass", ""),
    ("c-1#1", "honest", "fail", "claims the update, the tool said error"),
    ("c-2#1", "tone", "pass", ""),
]
BOB = [
    ("c-1#1", "tone", "pass", ""),
    ("c-1#1", "honest", "insufficient_information", "the tool result is cut off"),
    ("c-2#1", "tone", "pass", ""),
]


def test_disagreements_are_listed_with_labels_and_notes_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = table(tmp_path, "ann", ANN), table(tmp_path, "bob", BOB)
    sheet, agreed = tmp_path / "sheet.csv", tmp_path / "agreed.csv"
    code = main(["labels", "reconcile", str(a), str(b), "--out", str(agreed), "--sheet", str(sheet)])
    out = capsys.readouterr().out
    assert code == 1
    assert (
        "c-1#1/honest: ann fail (claims the update, the tool said error) | bob insufficient_information "
        "(the tool result is cut off)"
    ) in out
    assert "ann vs bob: 2 agreed, 1 disputed, 0 only ann, 0 only bob" in out
    assert not agreed.exists()  # nothing agreed is written while a dispute remains
    rows = list(csv.DictReader(io.StringIO(sheet.read_text(encoding="utf-8"))))
    assert rows == [
        {
            "item_id": "c-1#1",
            "criterion": "honest",
            "case_id": "c-1",
            "ann label": "fail",
            "ann notes": "claims the update, the tool said error",
            "bob label": "insufficient_information",
            "bob notes": "the tool result is cut off",
            "resolution": "",
            "resolution notes": "",
        }
    ]


def test_agreement_writes_both_experts_rows_as_one_label_table_and_exit_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = table(tmp_path, "ann", ANN), table(tmp_path, "bob", ANN[:1] + BOB[1:2] + ANN[2:])
    b.write_text(b.read_text(encoding="utf-8").replace("insufficient_information", "fail"), encoding="utf-8")
    agreed, sheet = tmp_path / "agreed.csv", tmp_path / "sheet.csv"
    code = main(["labels", "reconcile", str(a), str(b), "--out", str(agreed), "--sheet", str(sheet)])
    out = capsys.readouterr().out
    assert code == 0
    assert "ann vs bob: 3 agreed, 0 disputed" in out
    assert f"the experts agree; wrote {agreed}" in out
    assert not sheet.exists()
    merged = parse_labels(agreed.read_bytes(), source=agreed)
    assert merged.raters == ("ann", "bob")
    assert len(merged.rows) == 6
    assert all(r.saw_judge is False for r in merged.rows)


def test_items_only_one_expert_labelled_are_unsettled(tmp_path: Path) -> None:
    a, b = table(tmp_path, "ann", ANN), table(tmp_path, "bob", ANN[:2])
    doc = reconcile_labels(a, b, sheet=tmp_path / "s.csv")
    assert not doc.settled
    assert [(c.item_id, c.criterion, c.a_label, c.b_label) for c in doc.only_a] == [
        ("c-2#1", "tone", "pass", None)
    ]
    assert "c-2#1,tone,c-1,pass" not in (tmp_path / "s.csv").read_text(encoding="utf-8")
    assert "c-2#1,tone,c-2,pass,,,,," in (tmp_path / "s.csv").read_text(encoding="utf-8")


def test_labels_given_seeing_the_judge_are_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = table(tmp_path, "ann", ANN, saw="yes"), table(tmp_path, "bob", ANN)
    assert main(["labels", "reconcile", str(a), str(b), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["saw_judge"] == {"ann": 3, "bob": 0}
    assert doc["settled"] is True
    assert doc["written"] is None


def test_a_table_with_several_raters_is_refused(tmp_path: Path) -> None:
    a = table(tmp_path, "ann", ANN)
    both = tmp_path / "both.csv"
    both.write_text(a.read_text(encoding="utf-8") + "c-9#1,tone,judge,pass,c-9,,\n", encoding="utf-8")
    with pytest.raises(
        JudgekitError, match=r"both.csv: holds the labels of 2 raters \(ann, judge\); compare two"
    ):
        reconcile_labels(both, a)


def test_two_tables_by_the_same_expert_are_refused(tmp_path: Path) -> None:
    a = table(tmp_path, "ann", ANN)
    copy = tmp_path / "copy.csv"
    copy.write_bytes(a.read_bytes())
    with pytest.raises(JudgekitError, match="are both labelled by 'ann'; compare two different experts'"):
        reconcile_labels(a, copy)


def test_a_malformed_table_is_a_located_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = table(tmp_path, "ann", ANN)
    bad = tmp_path / "bad.csv"
    bad.write_text(HEADER + "c-1#1,tone,bob,maybe,c-1,,no\n", encoding="utf-8")
    assert main(["labels", "reconcile", str(a), str(bad)]) == 2
    assert "bad.csv:2: label: 'maybe' is not in the scale's domain" in capsys.readouterr().err
