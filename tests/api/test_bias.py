"""api.bias: bias probes as one call (recorded judgments here; live probes are tested through the command)."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.api.bias import probe_recorded
from judgekit.calibration.bias import load_bias_report
from judgekit.errors import JudgekitError

DATA = Path(__file__).parent.parent / "calibration" / "data"

#: A full judge fingerprint (64 hexadecimal characters), as judgekit writes them.
FP_1 = "f1" * 32


def test_probe_recorded_without_a_fingerprint_files_nothing_and_says_so(tmp_path: Path) -> None:
    out = tmp_path / "position.json"
    document = probe_recorded(DATA / "recorded_original.csv", DATA / "recorded_swapped.csv", out=out)
    assert document.report.consistent == 4
    assert [(w.path, w.what) for w in document.written] == [(str(out), "position_report")]
    assert out.read_text(encoding="utf-8") == document.report.model_dump_json(indent=2) + "\n"
    assert document.warnings[0].startswith("2 item(s) judged in one order only, not paired: q7 (original)")
    assert document.warnings[-1].startswith("no --fingerprint: no bias report written")


def test_probe_recorded_with_a_fingerprint_files_a_bias_report(tmp_path: Path) -> None:
    records = tmp_path / "records"
    records.mkdir()  # a records folder that is named must exist
    document = probe_recorded(
        DATA / "recorded_original.csv", DATA / "recorded_swapped.csv", fingerprint=FP_1, records=records
    )
    ((path, what),) = [(Path(w.path), w.what) for w in document.written]
    assert what == "bias_record"
    assert path.parent == records / "bias"
    report = load_bias_report(path.read_bytes(), source=path)
    assert (report.fingerprint, report.judge) == (FP_1, "recorded judgments")
    assert not any("no --fingerprint" in w for w in document.warnings)


def test_probe_recorded_refuses_a_tolerance_outside_0_1(tmp_path: Path) -> None:
    with pytest.raises(JudgekitError, match=r"--tolerance must be in \[0, 1\), got 1.0"):
        probe_recorded(DATA / "recorded_original.csv", tolerance=1.0)
