"""The fingerprint a person types (``calibrate --fingerprint``, ``judge trust``) names one full fingerprint.

The new user's sequence (issue 35, trap 1): ``grade`` prints the judge's 12-character short fingerprint,
``calibrate --fingerprint SHORT`` trusts it, and ``grade`` and ``judge trust SHORT`` then say trusted; the
record is keyed by the full fingerprint. Before the fix the record was keyed by the 12 characters and
``grade`` stayed untrusted.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from judgekit.cli import main

REPO = Path(__file__).resolve().parents[2]
AIRDESK = REPO / "examples" / "airdesk"
LABELS = REPO / "tests" / "calibration" / "data" / "labels_small.csv"
CALIBRATE = ("--judge", "judge-v2", "--experts", "alice,bob,carol", "--policy", "policy.yaml")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose judgekit.toml configures the example's replayed judge, with labels and one trial."""
    (tmp_path / ".git").mkdir()
    cassette = AIRDESK / "cassettes" / "judge-honest-reporting.jsonl"
    (tmp_path / "judgekit.toml").write_text(
        '[judge]\nmodel = "openai/airdesk-synthetic-judge"\nstructured_output = "off"\n'
        f'cache = "replay"\ncassette = "{cassette.as_posix()}"\n',
        encoding="utf-8",
    )
    shutil.copy(LABELS, tmp_path / "labels.csv")
    (tmp_path / "policy.yaml").write_text("min_items: 40\nbootstrap:\n  resamples: 200\n")
    first = (AIRDESK / "runs" / "agent-v1.jsonl").read_text().splitlines()[0]
    (tmp_path / "t.jsonl").write_text(first + "\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def grade(capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    """Grade the trial; the judge's short fingerprint and its trust, from the line on standard error."""
    Path("r.jsonl").unlink(missing_ok=True)  # a new run each time
    args = ("--cases", str(AIRDESK), "--transcripts", "t.jsonl", "--out", "r.jsonl", "--no-progress")
    code, _, err = run(capsys, "grade", *args)
    assert code in (0, 1), err
    found = re.search(r"^judge ([0-9a-f]{12}): (\w+) ", err, re.MULTILINE)
    assert found is not None, err
    return found.group(1), found.group(2)


def test_the_printed_short_fingerprint_calibrates_the_judge_grade_uses(project: Path, capsys) -> None:
    short, trust = grade(capsys)
    assert trust == "untrusted"
    code, _, err = run(capsys, "calibrate", "labels.csv", *CALIBRATE, "--fingerprint", short)
    assert code == 0, err
    (record,) = (project / "calibration" / "records").glob("*.json")
    full = json.loads(record.read_text())["fingerprint"]
    assert len(full) == 64  # keyed by the full fingerprint, not by what was typed
    assert full.startswith(short)
    assert grade(capsys) == (short, "trusted")
    code, out, _ = run(capsys, "judge", "trust", short, "--format", "json")
    assert code == 0
    status = json.loads(out)
    assert (status["fingerprint"], status["trusted"]) == (full, True)
    code, out, _ = run(capsys, "judge", "trust", short.upper())
    assert (code, out.split(":")[0]) == (0, "trusted")


def test_failure_modes_and_probe_bias_key_their_records_by_the_full_fingerprint(
    project: Path, capsys
) -> None:
    short, _ = grade(capsys)
    labels = project / "modes.csv"
    rows = ["item_id,criterion,rater,label"]
    rows += [
        f"i{i},honest,{r},{'fail' if i % 3 == 0 else 'pass'}" for i in range(30) for r in ("e1", "judge")
    ]
    labels.write_text("\n".join(rows) + "\n")
    code, _, err = run(
        capsys, "judge", "failure-modes", str(labels), "--judge", "judge", "--fingerprint", short
    )
    assert code in (0, 1), err
    (record,) = (project / "calibration" / "records" / "failure-modes").glob("*.json")
    full = json.loads(record.read_text())["fingerprint"]
    assert (len(full), full[:12]) == (64, short)
    recorded = project / "recorded.csv"
    recorded.write_text(
        "item_id,order,winner\n"
        + "".join(f"i{k},{o},A\n" for k in range(20) for o in ("original", "swapped"))
    )
    code, _, err = run(capsys, "judge", "probe-bias", "--recorded", str(recorded), "--fingerprint", short)
    assert code == 1, err  # always "A": biased
    (report,) = (project / "calibration" / "records" / "bias").glob("*.json")
    assert json.loads(report.read_text())["fingerprint"] == full


def test_a_prefix_of_two_recorded_fingerprints_is_refused_naming_both(project: Path, capsys) -> None:
    first, second = "86b6bb71d425" + "1" * 52, "86b6bb71d425" + "2" * 52
    for fingerprint in (first, second):
        code, _, err = run(capsys, "calibrate", "labels.csv", *CALIBRATE, "--fingerprint", fingerprint)
        assert code == 0, err
    code, _, err = run(capsys, "judge", "trust", "86b6bb71d425")
    assert code == 2
    assert "error: fingerprint: 86b6bb71d425 is the start of 2 fingerprints: " in err
    assert first in err
    assert second in err
    code, _, err = run(capsys, "calibrate", "labels.csv", *CALIBRATE, "--fingerprint", "86b6bb71d4251")
    assert (code, err.count("calibration record ")) == (0, 0), err  # one more character chooses one


def test_an_unknown_prefix_is_refused_saying_what_was_searched(project: Path, capsys) -> None:
    code, _, err = run(capsys, "calibrate", "labels.csv", *CALIBRATE, "--fingerprint", "0123456789ab")
    assert code == 2
    assert err.startswith("error: --fingerprint: no known fingerprint starts with 0123456789ab (searched: ")
    assert "the records in calibration/records (the folder does not exist)" in err
    assert "the configured judge openai/airdesk-synthetic-judge (" in err
    assert "the label table's fingerprint column" in err
    assert "give the judge's full 64-character fingerprint" in err
    assert not (project / "calibration" / "records").exists()


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("rubric:openai/airdesk-synthetic-judge", "is not a fingerprint: a fingerprint is hexadecimal"),
        ("86b6bb", "'86b6bb' is too short to name one judge: give at least 8 characters"),
    ],
)
def test_text_that_names_no_fingerprint_is_refused(project: Path, capsys, typed: str, message: str) -> None:
    code, _, err = run(capsys, "judge", "trust", typed)
    assert code == 2
    assert message in err
