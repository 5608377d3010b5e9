"""Output for machines: ``--quiet``, ``NO_COLOR``, and ``--format json`` documents with a schema version."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from judgekit.cli import main
from judgekit.commands.output import JSON_SCHEMA_VERSION, quiet_output, versioned

REPO = Path(__file__).resolve().parents[1]
AIRDESK = REPO / "examples" / "airdesk"
#: SGR codes that set a colour (30-37, 38;..., 40-47, 48;..., 90-97, 100-107), as opposed to bold or dim.
COLOUR = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-8]|4[0-8]|9[0-7]|10[0-7])(?:;[0-9;]*)?m")


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


# ---------------------------------------------------------------------------------------------- --quiet


def test_quiet_prints_nothing_when_all_is_well(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "--quiet", "cases", "check", str(AIRDESK))
    assert code == 0
    assert (out, err) == ("", "")
    code, out, _ = _run(capsys, "cases", "check", str(AIRDESK))
    assert code == 0
    assert "cases valid" in out


def test_quiet_keeps_the_error_line_and_the_exit_code(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = _run(capsys, "-q", "cases", "check", str(tmp_path / "missing"))
    assert code != 0
    assert out == ""
    assert err.startswith("error: ")
    assert len(err.splitlines()) == 1


def test_quiet_still_writes_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_file = tmp_path / "v2.jsonl"
    code, out, err = _run(
        capsys,
        "-q",
        "grade",
        "--cases",
        str(AIRDESK),
        "--transcripts",
        str(AIRDESK / "runs" / "agent-v2.jsonl"),
        "--out",
        str(out_file),
        "--no-progress",
    )
    assert (out, err) == ("", "")
    assert code in (0, 1)
    assert out_file.read_text(encoding="utf-8").count("\n") > 0


def test_quiet_output_lets_only_error_lines_through(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = io.StringIO()
    monkeypatch.setattr(sys, "stderr", screen)
    with quiet_output():
        print("a result")
        sys.stderr.write("warning: something\nerror: the first ")
        sys.stderr.write("problem\nnote: x\n")
        sys.stderr.write("error: cut off")
        assert not sys.stderr.isatty()
        assert not sys.stdout.isatty()
    assert screen.getvalue() == "error: the first problem\nerror: cut off\n"


def test_quiet_is_in_the_root_help(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(capsys, "--help")
    assert "--quiet" in out
    assert "-q" in out
    assert "NO_COLOR" in out


# ---------------------------------------------------------------------------------------------- NO_COLOR


def _help_in_a_fresh_process(**env: str) -> str:
    environment = {k: v for k, v in os.environ.items() if k not in {"NO_COLOR", "FORCE_COLOR", "TERM"}}
    environment.update({"LITELLM_LOCAL_MODEL_COST_MAP": "True", "COLUMNS": "100", **env})
    done = subprocess.run(
        [sys.executable, "-m", "judgekit.cli", "grade", "--help"],
        capture_output=True,
        text=True,
        env=environment,
        check=True,
        cwd=REPO,
    )
    return done.stdout


def test_help_is_coloured_on_a_forced_terminal_and_plain_under_no_color() -> None:
    coloured = _help_in_a_fresh_process(FORCE_COLOR="1", TERM="xterm-256color")
    assert COLOUR.search(coloured), "the check cannot tell: no colour even when forced"
    plain = _help_in_a_fresh_process(FORCE_COLOR="1", TERM="xterm-256color", NO_COLOR="1")
    assert not COLOUR.search(plain)
    assert "--transcripts" in re.sub(r"\x1b\[[0-9;]*m", "", plain)


def test_no_color_also_holds_for_the_progress_console(monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console

    monkeypatch.setenv("NO_COLOR", "1")
    console = Console(stderr=True, force_terminal=True)  # as the grade progress bar builds it
    assert console.no_color


# ---------------------------------------------------------------------------------------------- --format json


def test_versioned_documents_lead_with_their_schema() -> None:
    document = versioned("lint_report", {"findings": []})
    assert list(document)[:2] == ["schema_version", "kind"]
    assert document["schema_version"] == JSON_SCHEMA_VERSION


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("cases", "lint", str(AIRDESK)), id="lint"),
        pytest.param(("cases", "check-references", str(AIRDESK)), id="check-references"),
        pytest.param(
            (
                "labels",
                "plan",
            ),
            id="calibrate-plan",
        ),
        pytest.param(("rubrics", "show", "honest-reporting"), id="rubrics-show"),
        pytest.param(
            (
                "cases",
                "reconcile",
                str(AIRDESK / "resolutions" / "expert-a.yaml"),
                str(AIRDESK / "resolutions" / "expert-b.yaml"),
                "--set",
                str(AIRDESK),
            ),
            id="golden-reconcile",
        ),
        pytest.param(
            (
                "calibrate",
                str(AIRDESK / "labels" / "expert-labels.csv"),
                "--judge",
                "synthetic-expert-b",
                "--no-record",
            ),
            id="calibrate",
        ),
    ],
)
def test_json_output_carries_a_schema_version(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    code, out, _ = _run(capsys, *args, "--format", "json")
    assert code in (0, 1), out
    document = json.loads(out)
    assert "schema_version" in document
    assert document["schema_version"]


# ---------------------------------------------------------------------------------------------- redaction

AWS_KEY = "AKIA" + "ZXCVBNMASDFGHJKL"


def test_a_report_printed_on_standard_output_is_redacted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33 item 1: standard output is written like a file, through the one redactor."""
    from judgekit.results import CaseRef, dump_result_line, make_result_line
    from judgekit.verdict import CheckResult, Grade, Verdict

    monkeypatch.setenv("ACME_API_TOKEN", "acme-token-0123456789")
    check = CheckResult(
        check_id="rule:0",
        layer="rules",
        verdict=Verdict.FAIL,
        reason=f"the agent echoed {AWS_KEY} and acme-token-0123456789",
    )
    grade = Grade(case_id="a", trial=1, verdict=Verdict.FAIL, checks=(check,))
    line = make_result_line(run_id="r", case=CaseRef(id="a", version=1), grade=grade)
    results = tmp_path / f"run-{AWS_KEY}.jsonl"  # the report's title names the file
    results.write_text(dump_result_line(line) + "\n", encoding="utf-8")
    code, out, err = _run(capsys, "report", str(results), "--format", "md")
    assert code == 0, err
    assert "the agent echoed" in out
    assert AWS_KEY not in out
    assert "acme-token-0123456789" not in out
    assert "[REDACTED]" in out


def test_the_internal_error_file_and_line_are_redacted(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33 ('also seen'): the unexpected-error path wrote the traceback without the redactor."""
    from judgekit.cli import _internal_error

    monkeypatch.delenv("JUDGEKIT_DEBUG", raising=False)
    with pytest.raises(RuntimeError) as caught:
        raise RuntimeError(f"boom with {AWS_KEY}")
    assert _internal_error(caught.value) == 1
    err = capsys.readouterr().err
    assert AWS_KEY not in err
    saved = Path(re.search(r"the traceback is in (\S+)", err).group(1))  # type: ignore[union-attr]
    text = saved.read_text(encoding="utf-8")
    saved.unlink()
    assert "boom with [REDACTED]" in text
    assert AWS_KEY not in text


def test_a_usage_error_line_is_redacted(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33 item 1: both standard streams pass the one redactor (click echoed the path as given)."""
    monkeypatch.setenv("ACME_SERVICE_TOKEN", "acme-token-9876543210")
    code, out, err = _run(capsys, "report", "/no/such/acme-token-9876543210.jsonl")
    assert code == 2
    assert "acme-token-9876543210" not in out + err
    assert "[REDACTED].jsonl" in err
