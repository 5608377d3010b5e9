"""``judgekit config``, and a project configuration driving ``grade``, ``calibrate`` and ``trust``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgekit.cli import main
from judgekit.results import read_results

REPO = Path(__file__).resolve().parents[2]
AIRDESK = REPO / "examples" / "airdesk"
RUN = AIRDESK / "runs" / "agent-v1.jsonl"

pytestmark = pytest.mark.skipif(not RUN.is_file(), reason="airdesk example not present")

#: A full judge fingerprint (64 hexadecimal characters), as judgekit writes them.
FP_ABC = "abc1" * 16


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch):
    for var in ("JUDGEKIT_JUDGE_MODEL", "JUDGEKIT_JUDGE_API_BASE", "JUDGEKIT_RECORDS", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def _project(root: Path, extra: str = "") -> Path:
    """A project whose pyproject.toml holds the example's case set and replayed judge."""
    root.mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir(exist_ok=True)  # the repository root: the walk stops here
    (root / "calibration" / "records").mkdir(parents=True, exist_ok=True)  # a configured folder must exist
    path = root / "pyproject.toml"
    path.write_text(
        f"""\
[project]
name = "support-agent"

[tool.judgekit]
cases = "{AIRDESK}"
records = "calibration/records"
concurrency = 4
{extra}
[tool.judgekit.judge]
model = "openai/airdesk-synthetic-judge"
rubric = "honest-reporting"
temperature = 0.0
samples = 1
structured_output = "off"
cache = "replay"
cassette = "{AIRDESK / "cassettes" / "judge-honest-reporting.jsonl"}"
""",
        encoding="utf-8",
    )
    return path


def _run(capsys, *args: object) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_pyproject_drives_grade_with_only_transcripts_and_out(tmp_path, capsys, monkeypatch):
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, "grade", "--transcripts", RUN, "--out", "v1.jsonl", "--no-progress")
    assert code == 0, err
    assert f"note: configuration from {tmp_path / 'pyproject.toml'}" in err
    results = read_results(tmp_path / "v1.jsonl")
    assert len(results.lines) == 104
    grading = results.lines[0].grading
    assert grading["cases"] == str(AIRDESK)
    assert grading["judge_model"] == "openai/airdesk-synthetic-judge"
    assert grading["cache_mode"] == "replay"
    assert grading["concurrency"] == 4
    assert grading["project_config"] == str(tmp_path / "pyproject.toml")
    assert "judge cost $0.0000" in out  # replayed from the cassette: no model was called
    assert f"calibration records: {tmp_path / 'calibration' / 'records'}" in err


def test_grade_from_the_configuration_equals_grade_from_flags(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    flags = [
        "--cases",
        AIRDESK,
        "--config",
        AIRDESK / "judge.yaml",
        "--cassette",
        AIRDESK / "cassettes" / "judge-honest-reporting.jsonl",
    ]
    args = ["--transcripts", RUN, "--no-progress"]
    code, _, err = _run(capsys, "grade", *flags, *args, "--out", "flags.jsonl")
    assert code == 0, err
    _project(tmp_path / "project")
    monkeypatch.chdir(tmp_path / "project")
    code, _, err = _run(capsys, "grade", *args, "--out", "config.jsonl")
    assert code == 0, err
    by_flags = {line.key: line.verdict for line in read_results(tmp_path / "flags.jsonl").lines}
    by_config = read_results(tmp_path / "project" / "config.jsonl").lines
    assert {line.key: line.verdict for line in by_config} == by_flags


def test_a_flag_overrides_the_configuration(tmp_path, capsys, monkeypatch):
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    args = ["grade", "--transcripts", RUN, "--out", "v1.jsonl", "--no-progress", "--concurrency", "2"]
    code, _, err = _run(capsys, *args, "--untrusted", "advisory")
    assert code == 0, err
    grading = read_results(tmp_path / "v1.jsonl").lines[0].grading
    assert grading["concurrency"] == 2
    assert grading["untrusted_policy"] == "advisory"


def test_grade_without_cases_anywhere_is_one_error_line(tmp_path, capsys, monkeypatch):
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, "grade", "--transcripts", RUN, "--out", "v1.jsonl")
    assert code == 2
    assert out == ""
    assert err.strip() == (
        "error: no golden set: give --cases FOLDER, or set cases in [tool.judgekit] of pyproject.toml or in "
        "judgekit.toml (see judgekit config)"
    )
    assert not (tmp_path / "v1.jsonl").exists()


def test_an_invalid_configuration_stops_grade_with_its_location(tmp_path, capsys, monkeypatch):
    _project(tmp_path, extra='untrusted = "sometimes"\n')
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, "grade", "--transcripts", RUN, "--out", "v1.jsonl")
    assert code == 2
    assert err.strip() == (
        f"error: {tmp_path / 'pyproject.toml'}:8: tool.judgekit.untrusted: must be 'withhold', 'count', "
        "'fail_only' or 'advisory' (got 'sometimes')"
    )
    assert "Traceback" not in err


def test_config_shows_each_value_and_where_it_came_from(tmp_path, capsys, monkeypatch):
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JUDGEKIT_JUDGE_API_BASE", "https://user:hunter2-secret@judge.example/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-abcdefghijklmnop")
    code, out, err = _run(capsys, "config")
    assert code == 0, err
    config = tmp_path / "pyproject.toml"
    assert out.splitlines()[0] == f"project configuration: {config} ([tool.judgekit])"
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.startswith("  ")}
    assert rows["cases"] == [str(AIRDESK), f"{config}:5"]
    assert rows["records"] == [str(tmp_path / "calibration" / "records"), f"{config}:6"]
    assert rows["concurrency"] == ["4", f"{config}:7"]
    assert rows["untrusted"] == ["withhold", "default"]
    assert rows["judge.model"] == ["openai/airdesk-synthetic-judge", f"{config}:10"]
    assert rows["judge.api_base"] == ["https://[REDACTED]@judge.example/v1", "env", "JUDGEKIT_JUDGE_API_BASE"]
    assert rows["judge.max_cost"] == ["(unset)", "default"]
    assert "hunter2" not in out
    assert "sk-test" not in out


def test_config_json_has_a_schema_version_values_and_sources(tmp_path, capsys, monkeypatch):
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JUDGEKIT_JUDGE_MODEL", "openai/from-env")
    run = tmp_path / "run.yaml"
    run.write_text("judge:\n  samples: 3\n", encoding="utf-8")
    code, out, _ = _run(capsys, "config", "--config", run, "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["schema_version"] == 1
    assert data["project_config"] == str(tmp_path / "pyproject.toml")
    assert data["run_config"] == str(run)
    settings = data["settings"]
    assert settings["judge.model"] == {"value": "openai/from-env", "source": "env JUDGEKIT_JUDGE_MODEL"}
    assert settings["judge.samples"] == {"value": 3, "source": f"{run}:2"}
    assert settings["judge.temperature"] == {"value": 0.0, "source": f"{tmp_path / 'pyproject.toml'}:12"}
    assert settings["policy"] == {"value": None, "source": "default"}


def test_config_without_a_project_says_so(tmp_path, capsys, monkeypatch):
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(capsys, "config")
    assert code == 0
    assert out.splitlines()[0] == (
        f"project configuration: none found from {tmp_path} (judgekit.toml, or [tool.judgekit] in "
        "pyproject.toml)"
    )
    assert "  cases" in out


def test_config_bad_format_is_one_error_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, "config", "--format", "yaml")
    assert code == 2
    assert out == ""
    assert err.strip() == "error: --format must be text or json (got 'yaml')"


def test_config_reports_an_invalid_file_and_exits_2(tmp_path, capsys, monkeypatch):
    (tmp_path / "judgekit.toml").write_text("[judge]\ntemprature = 0.2\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, "config")
    assert code == 2
    assert err.strip() == (
        f"error: {tmp_path / 'judgekit.toml'}:2: judge.temprature: unknown field 'temprature'; "
        "did you mean 'temperature'?"
    )


def test_trust_and_calibrate_read_the_configured_records(tmp_path, capsys, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "judgekit.toml").write_text('records = "team/records"\n', encoding="utf-8")
    for name in ("team/records", "env-records", "flag-records"):  # a folder that is named must exist
        (tmp_path / name).mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(capsys, "judge", "trust", FP_ABC)
    assert code == 1
    assert str(tmp_path / "team" / "records") in out
    monkeypatch.setenv("JUDGEKIT_RECORDS", str(tmp_path / "env-records"))
    code, out, _ = _run(capsys, "judge", "trust", FP_ABC)
    assert str(tmp_path / "env-records") in out
    code, out, _ = _run(capsys, "judge", "trust", FP_ABC, "--records", tmp_path / "flag-records")
    assert str(tmp_path / "flag-records") in out
