"""Calibration records: building, writing and reading them (trust itself: test_trust.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from judgekit.calibration.gate import TrustPolicy
from judgekit.calibration.records import (
    LabelTableInfo,
    build_record,
    dump_record,
    load_record,
    load_records,
    record_filename,
)
from judgekit.errors import JudgekitError, ProblemsError

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def record(reports, which: str, fingerprint: str, when: datetime = T0):
    table, report, gate = reports[which]
    return build_record(
        fingerprint=fingerprint,
        report=report,
        gate=gate,
        policy=TrustPolicy(),
        label_table=LabelTableInfo(sha256=table.sha256, name="labels.csv", rows=len(table.rows)),
        now=when,
    )


def write(folder: Path, rec) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / record_filename(rec)
    path.write_text(dump_record(rec))
    return path


def test_record_holds_everything_and_round_trips(reports):
    rec = record(reports, "good", "model=x;template=abc;rubric=1")
    assert rec.trusted
    assert rec.schema_version == "judgekit.calibration-record/1"
    assert rec.label_table.sha256 == reports["good"][0].sha256
    assert rec.judgekit_version
    assert rec.created_at == T0
    assert len(rec.metrics.items) == 300
    assert load_record(dump_record(rec)) == rec


def test_record_filename_sorts_by_time_and_hides_the_fingerprint(reports):
    a = record_filename(record(reports, "good", "fp", T0))
    b = record_filename(record(reports, "good", "fp", T0 + timedelta(days=1)))
    assert a < b
    assert a.endswith("-20260102T030405Z.json")
    assert "fp" not in a.split("-")[1]


def test_a_broken_record_is_never_skipped_silently(tmp_path, reports):
    write(tmp_path, record(reports, "good", "fp"))
    (tmp_path / "zz.json").write_text("{not json")
    with pytest.raises(ProblemsError, match=r"zz\.json:1: not a JSON calibration record"):
        load_records(tmp_path)


def test_an_invalid_record_names_the_field(tmp_path):
    path = tmp_path / "r.json"
    path.write_text('{"fingerprint": "fp"}')
    with pytest.raises(ProblemsError) as info:
        load_records(tmp_path)
    assert any(
        "r.json: trusted: not a calibration record: Field required" in str(p) for p in info.value.problems
    )


def test_an_empty_fingerprint_cannot_be_recorded(reports):
    with pytest.raises(JudgekitError, match="the grader fingerprint is empty"):
        record(reports, "good", "  ")


def test_a_record_file_named_as_text_is_read_and_named(reports, tmp_path):
    import json

    from judgekit.errors import ProblemsError

    rec = record(reports, "good", "fp")
    path = tmp_path / "r.json"
    path.write_text(dump_record(rec))
    assert load_record(path.read_text(), source=str(path)) == rec
    data = json.loads(path.read_text())
    del data["fingerprint"]
    with pytest.raises(ProblemsError, match=r"r\.json: fingerprint") as exc:
        load_record(json.dumps(data), source=str(path))
    assert exc.value.problems[0].file == path
