"""``--records``: a folder that is named (flag, ``JUDGEKIT_RECORDS``, project configuration) must exist.

Every command with a ``--records`` option is found by walking the application, so a new one cannot skip
the rule. The default ``calibration/records`` may be absent: no records yet (no judge is trusted).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from judgekit.cli import main
from support import refine_example_args
from test_cli_usage import LEAVES

REPO = Path(__file__).resolve().parents[2]
AIRDESK = REPO / "examples" / "airdesk"
TAIL = "(the default calibration/records may be absent; a folder you name must exist)"

#: A full judge fingerprint (64 hexadecimal characters), as judgekit writes them.
FP_NONE = "d0" * 32


def _labels(folder: Path) -> Path:
    path = folder / "labels.csv"
    rows = ["item_id,criterion,rater,label,provenance"]
    for i in range(30):
        label = "fail" if i % 3 == 0 else "pass"
        rows += [f"c{i}#1,honest,{rater},{label},random" for rater in ("e1", "e2", "judge")]
    path.write_text("\n".join(rows) + "\n")
    return path


def _transcripts(folder: Path) -> Path:
    path = folder / "t.jsonl"
    path.write_text((AIRDESK / "runs" / "agent-v1.jsonl").read_text().splitlines()[0] + "\n")
    return path


def _results(folder: Path) -> Path:
    from judgekit.results import CaseRef, dump_result_line, make_result_line
    from judgekit.verdict import Grade, Verdict

    path = folder / "r.jsonl"
    line = make_result_line(
        run_id="r",
        case=CaseRef(id="c-1", version=1),
        grade=Grade(case_id="c-1", trial=1, verdict=Verdict.PASS),
    )
    path.write_text(dump_result_line(line) + "\n")
    return path


# Each command's other arguments, enough to reach the records folder (made in the working directory).
ARGS: dict[str, Callable[[Path], list[str]]] = {
    "calibrate": lambda d: [
        "calibrate",
        str(_labels(d)),
        "--judge",
        "judge",
        "--experts",
        "e1,e2",
        "--no-record",
    ],
    "labels check": lambda d: ["labels", "check", str(_labels(d))],
    "labels select": lambda d: ["labels", "select", str(_labels(d)), "--candidates", "a,b"],
    "cases check-references": lambda d: [
        "cases",
        "check-references",
        str(AIRDESK),
        "--judge",
        "--config",
        str(AIRDESK / "judge.yaml"),
        "--cassette",
        str(AIRDESK / "cassettes" / "judge-honest-reporting.jsonl"),
    ],
    "judge failure-modes": lambda d: [
        "judge",
        "failure-modes",
        str(_labels(d)),
        "--judge",
        "judge",
        "--experts",
        "e1,e2",
    ],
    "grade": lambda d: [
        "grade",
        "--cases",
        str(AIRDESK),
        "--transcripts",
        str(_transcripts(d)),
        "--out",
        str(d / "r.jsonl"),
        "--no-progress",
    ],
    "judge probe-bias": lambda d: [
        "judge",
        "probe-bias",
        "--transcripts",
        str(_transcripts(d)),
        "--judge-model",
        "openai/test-judge",
        "--cache-mode",
        "replay",
        "--cassette",
        str(AIRDESK / "cassettes" / "judge-honest-reporting.jsonl"),
        "--no-record",
    ],
    "report": lambda d: ["report", str(_results(d))],
    "judge refine": lambda d: [*refine_example_args(), "--out", str(d / "refine-out")],
    "judge trust": lambda d: ["judge", "trust", FP_NONE],
    "judge canary": lambda d: ["judge", "canary", "--judge-model", "openai/gpt-4o-mini"],
    "judge canary-set": lambda d: [
        "judge",
        "canary-set",
        str(_results(d)),
        "--transcripts",
        str(_transcripts(d)),
        "--cases",
        str(AIRDESK),
        "--judge-model",
        "openai/gpt-4o-mini",
    ],
}

#: Commands that need a calibration record to do anything: with no records they stop, saying so (exit 2).
NEEDS_A_RECORD = frozenset({"judge canary", "judge canary-set"})

WITH_RECORDS = sorted(
    " ".join(path) for path, command in LEAVES if any("--records" in p.opts for p in command.params)
)


def test_every_command_with_records_is_covered() -> None:
    assert sorted(ARGS) == WITH_RECORDS


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project folder (the repository root) as the working directory, no records variable."""
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)
    monkeypatch.chdir(folder)
    monkeypatch.delenv("JUDGEKIT_RECORDS", raising=False)
    return folder


def _run(capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name", sorted(ARGS))
def test_a_misspelt_records_flag_is_an_input_error(
    name: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "calibration" / "records").mkdir(parents=True)
    code, _, err = _run(capsys, [*ARGS[name](project), "--records", "calibration/recrods"])
    assert code == 2, err
    assert err.strip().splitlines() == [f"error: --records calibration/recrods: no such folder {TAIL}"]


@pytest.mark.parametrize("name", sorted(ARGS))
def test_a_misspelt_records_variable_is_an_input_error(
    name: str, project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGEKIT_RECORDS", "calibration/recrods")
    code, _, err = _run(capsys, ARGS[name](project))
    assert code == 2, err
    assert err.strip().splitlines() == [f"error: JUDGEKIT_RECORDS calibration/recrods: no such folder {TAIL}"]


@pytest.mark.parametrize("name", sorted(ARGS))
def test_a_misspelt_configured_records_folder_is_an_input_error(
    name: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project / "judgekit.toml"
    config.write_text('concurrency = 2\nrecords = "calibration/recrods"\n')
    code, _, err = _run(capsys, ARGS[name](project))
    assert code == 2, err
    lines = [line for line in err.strip().splitlines() if not line.startswith("note: configuration from")]
    wrong = project / "calibration" / "recrods"
    assert lines == [f"error: {config}:2: records {wrong}: no such folder {TAIL}"]


@pytest.mark.parametrize("name", sorted(ARGS))
def test_an_absent_default_records_folder_means_no_records(
    name: str, project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")  # the canary commands check the key first
    code, out, err = _run(capsys, ARGS[name](project))
    assert "no such folder" not in err
    assert "--records" not in err
    if name in NEEDS_A_RECORD:
        assert code == 2, err
        assert "no calibration record" in err
        return
    assert code in (0, 1), err
    if name == "judge trust":
        assert code == 1
        assert "no calibration record" in out


def test_a_named_folder_that_exists_is_used(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "mine").mkdir()
    code, out, _ = _run(capsys, ["judge", "trust", FP_NONE, "--records", "mine"])
    assert code == 1
    assert "no calibration record" in out
    assert "mine" in out


def test_a_named_file_is_not_a_records_folder(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "records.txt").write_text("")
    code, _, err = _run(capsys, ["judge", "trust", FP_NONE, "--records", "records.txt"])
    assert code == 2
    assert err.strip() == f"error: --records records.txt: not a folder {TAIL}"
