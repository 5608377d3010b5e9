"""Report and compare through the front door: the commands' figures, with records chosen by the caller."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import judgekit
from judgekit.api.reports import render_report
from judgekit.cli import main
from judgekit.errors import JudgekitError

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "airdesk"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("runs")
    out = {}
    for version in ("agent-v1", "agent-v2"):
        out[version] = folder / f"{version}.jsonl"
        run = EXAMPLE / "runs" / f"{version}.jsonl"
        assert (
            main(
                [
                    "-q",
                    "grade",
                    "--cases",
                    str(EXAMPLE),
                    "--transcripts",
                    str(run),
                    "--out",
                    str(out[version]),
                ]
            )
            == 0
        )
    return out


def test_the_report_is_the_one_judgekit_report_prints(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    model = judgekit.report(runs["agent-v1"], cases=EXAMPLE, records=())
    capsys.readouterr()
    assert main(["report", str(runs["agent-v1"]), "--cases", str(EXAMPLE), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(render_report(model, "json"))
    assert model.run.trials == 104


def test_records_read_already_are_used_as_given_whatever_the_environment_says(
    runs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGEKIT_RECORDS", str(tmp_path / "no-such-folder"))
    with pytest.raises(JudgekitError, match="no-such-folder"):
        judgekit.report(runs["agent-v1"])  # the folder the environment names must exist
    assert judgekit.report(runs["agent-v1"], records=()).run.trials == 104


def test_compare_warns_of_each_bad_line_then_compares(runs: dict[str, Path], tmp_path: Path) -> None:
    broken = tmp_path / "v2.jsonl"
    broken.write_bytes(runs["agent-v2"].read_bytes() + b"{not json\n")
    seen: list[str] = []
    comparison = judgekit.compare(runs["agent-v1"], broken, warn=lambda p: seen.append(str(p)))
    assert len(seen) == 1
    assert "v2.jsonl:105" in seen[0]
    clean = judgekit.compare(runs["agent-v1"], runs["agent-v2"])
    assert (comparison.fixed, comparison.broken, comparison.verdict) == (
        clean.fixed,
        clean.broken,
        clean.verdict,
    )


def test_an_unknown_report_format_is_refused_naming_the_formats(runs: dict[str, Path]) -> None:
    with pytest.raises(JudgekitError, match=r"format must be html, md or json \(got 'pdf'\)") as info:
        render_report(judgekit.report(runs["agent-v1"], records=()), "pdf")
    assert info.value.exit_code == 2
