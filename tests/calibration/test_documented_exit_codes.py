"""The exit codes ``docs/calibration.md`` promises are the ones ``calibrate`` and ``judge trust`` give.

Issue 35: the page said a bad label table exits 1 where it exits 2. Each test reads the code from the
page's own sentence, runs the input the page describes through the command line, and compares.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from judgekit.cli import main

PAGE = Path(__file__).resolve().parents[2] / "docs" / "calibration.md"
TEXT = " ".join(PAGE.read_text(encoding="utf-8").split())  # one line: sentences wrap anywhere


def _documented(pattern: str) -> int:
    found = re.findall(pattern, TEXT)
    assert len(found) == 1, f"docs/calibration.md: expected one sentence matching {pattern!r}, found {found}"
    return int(found[0])


def _exit_code_bullet() -> dict[int, str]:
    """The page's "Exit codes:" bullet of ``calibrate``, as {code: what it says the code means}."""
    bullet = TEXT.partition("- Exit codes: ")[2].partition(" - ")[0]
    parts = re.split(r"\*\*(\d)\*\* ", bullet)
    return {int(code): meaning for code, meaning in zip(parts[1::2], parts[2::2], strict=True)}


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def test_a_bad_label_table_exits_with_the_documented_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The page's own example: ``labels.csv:7: label: 'maybe' is not in the scale's domain``."""
    monkeypatch.chdir(tmp_path)
    rows = [f"GS-{i},honest_reporting,{rater},pass" for i in (1, 2) for rater in ("judge", "alice")]
    rows.append("GS-3,honest_reporting,judge,pass")
    rows.append("GS-3,honest_reporting,alice,maybe")  # line 7
    Path("labels.csv").write_text(
        "item_id,criterion,rater,label\n" + "\n".join(rows) + "\n", encoding="utf-8"
    )
    code, err = _run(capsys, "calibrate", "labels.csv", "--judge", "judge", "--no-record")
    assert "labels.csv:7: label: 'maybe' is not in the scale's domain" in err
    assert code == _documented(r"`--judge` or `--experts` name\. The command exits (\d)")
    assert "a bad label table" in _exit_code_bullet()[code]


def test_a_broken_record_file_exits_with_the_documented_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    code, err = _run(capsys, "judge", "trust", "3f2a9c1d0e4b5a6f7788", "--records", str(tmp_path))
    assert "broken.json" in err
    assert code == _documented(r"a broken record file is named \(exit (\d)\)")
    assert code == _documented(r"`judgekit judge trust` prints them and exits (\d)")


def test_the_exit_code_bullet_names_every_code_once() -> None:
    assert sorted(_exit_code_bullet()) == [0, 1, 2]
