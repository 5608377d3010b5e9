"""``judgekit labels from-results`` end to end: the judge's rows of a real results file, then calibrate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from api.test_labels import EXPERTS, FINGERPRINT, JUDGE, experts, graded
from judgekit.cli import main

__all__ = ["experts", "graded"]  # the module-scoped fixtures: the graded calibration sample, its experts


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def test_from_results_joined_with_the_experts_then_calibrate(
    graded: Path, experts: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "labels.csv"
    code, printed, _ = run(
        capsys, "labels", "from-results", str(graded), "--join", str(experts), "--out", str(out)
    )
    assert code == 0
    assert printed == (
        f"wrote {out}: 600 judge label row(s) (524 pass, 67 fail, 9 insufficient_information) by {JUDGE} on "
        f"11 criteria after the 1200 row(s) of {experts}; 600 untrusted when graded (kept: calibration "
        "measures what the judge said); left out: nothing\n"
        f"Next: judgekit calibrate {out} --judge {JUDGE} --experts {','.join(EXPERTS)}\n"
    )
    records = tmp_path / "records"
    records.mkdir()
    code, _, err = run(
        capsys,
        "calibrate",
        str(out),
        "--judge",
        JUDGE,
        "--experts",
        ",".join(EXPERTS),
        "--records",
        str(records),
    )
    assert code == 0, err
    assert f"judge '{JUDGE}': TRUSTED" in err
    (record,) = records.glob("*.json")
    assert json.loads(record.read_text(encoding="utf-8"))["fingerprint"] == FINGERPRINT  # from the table


def test_from_results_as_json(graded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = [
        "labels",
        "from-results",
        str(graded),
        "--out",
        str(tmp_path / "j.csv"),
        "--criteria",
        "case.acceptance",
    ]
    code, printed, _ = run(capsys, *args, "--format", "json")
    assert code == 0
    doc = json.loads(printed)
    assert (doc["kind"], doc["rows"], doc["criteria"]) == ("judge_labels", 44, ["case.acceptance"])
    assert doc["left_out"] == {"not_in_criteria": 556}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--criteria", " , "], "error: --criteria: no criterion named\n"),
        (["--criteria", "honest"], "error: --criteria: 'honest' not judged in "),
    ],
)
def test_from_results_mistakes_exit_2(
    graded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    code, printed, err = run(
        capsys, "labels", "from-results", str(graded), "--out", str(tmp_path / "j.csv"), *extra
    )
    assert (code, printed) == (2, "")
    assert err.startswith(message)
    assert not (tmp_path / "j.csv").exists()
