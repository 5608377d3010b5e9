"""``judgekit demo`` end to end: the steps it prints, the report folder, no network, a stale cassette."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from judgekit.cli import main
from judgekit.demo import DEMO_CASSETTE, DEMO_LABELS, run_demo
from judgekit.judges.cache import Cassette
from judgekit.results import read_results
from judgekit.verdict import Trust

REPO = Path(__file__).resolve().parents[2]
AIRDESK = REPO / "examples" / "airdesk"


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    """One demo run with every socket connection refused (the demo must never need the network)."""
    out = tmp_path_factory.mktemp("demo") / "report"
    mp = pytest.MonkeyPatch()

    def refuse(*args, **kwargs):
        raise AssertionError(f"the demo opened a network connection: {args}")

    mp.setattr(socket.socket, "connect", refuse)
    mp.setattr(socket, "create_connection", refuse)
    captured: list[str] = []
    mp.setattr("typer.echo", lambda message="", **kw: captured.append(str(message)))
    try:
        code = main(["demo", "--out", str(out)])
    finally:
        mp.undo()
    return out, code, "\n".join(captured)


def test_demo_prints_every_step_and_where_the_report_is(demo_run):
    out, code, text = demo_run
    assert code == 0, text
    for step in (
        "[1/7] validating the golden set",
        "26 cases valid",
        "[2/7] coverage",
        "no coverage gaps",
        "[3/7] checking the reference solutions",
        "26 reference solutions: 26 pass every deterministic layer, 0 broken",
        "[4/7] calibrating the judge",
        "TRUSTED under the default policy",
        "[5/7] grading agent-v1",
        "grading agent-v1: 104/104 trials",
        "[6/7] grading agent-v2",
        "[7/7] comparing agent-v1 with agent-v2",
        "real improvement",
        f"report: {out / 'index.html'}",
        "demo finished in",
    ):
        assert step in text


def test_demo_writes_every_report_and_the_graded_results(demo_run):
    out, _, _ = demo_run
    for page in ("index.html", "reports/agent-v1.html", "reports/agent-v2.html", "reports/comparison.html"):
        html = (out / page).read_text(encoding="utf-8")
        assert "SYNTHETIC" in html or "Synthetic data" in html
        assert "<script" not in html
        assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
        assert "https://" not in html
    calibration = (out / "reports" / "calibration.html").read_text(encoding="utf-8")
    assert "SYNTHETIC DATA" in calibration
    assert calibration.count("<svg") >= 4
    for name in ("agent-v1", "agent-v2"):
        run = read_results(out / "results" / f"{name}.jsonl")
        assert run.problems == []
        assert len(run.lines) == 104
        judged = [c for line in run.lines for c in line.checks if c.layer == "rubric"]
        assert len(judged) > 4 * 104  # four rubric criteria per trial, plus each case's own
        assert {c.trust for c in judged} == {Trust.TRUSTED}  # calibrated in step 4, before grading
        assert all(c.verdict.value != "error" for c in judged)
        assert all(line.grading["synthetic_judge_verdicts"] is True for line in run.lines)
    records = list((out / "calibration" / "records").glob("*.json"))
    assert len(records) == 1
    record = json.loads(records[0].read_text())
    assert record["trusted"] is True
    assert record["experts"] == ["synthetic-expert-a", "synthetic-expert-b"]


def test_demo_numbers_follow_from_the_example(demo_run):
    """The deterministic layers alone give v1 78/25/1 and v2 100/4 (examples/airdesk/README.md); the
    judge layer can only add failures to those, and its scripted failures are the listed ones."""
    out, _, _ = demo_run
    v1 = read_results(out / "results" / "agent-v1.jsonl")
    v2 = read_results(out / "results" / "agent-v2.jsonl")
    count = lambda run, v: sum(line.verdict.value == v for line in run.lines)  # noqa: E731
    assert count(v1, "error") == 1  # hv-update-phone trial 4: invalid JSON arguments
    assert count(v1, "pass") <= 78
    assert count(v2, "pass") <= 100
    gs_reg_0107 = [line for line in v2.lines if line.case.id == "GS-REG-0107"]
    # trials 2 and 3 leave out "23 kg": scored by the text layer, failed by the judge's acceptance gate
    assert {line.trial for line in gs_reg_0107 if line.verdict.value == "fail"} == {2, 3}


def test_rerunning_into_the_same_folder_replaces_it(demo_run, tmp_path):
    out, _, _ = demo_run
    (out / "stale.txt").write_text("from an earlier run")
    assert main(["demo", "--out", str(out)]) == 0
    assert not (out / "stale.txt").exists()
    assert (out / "index.html").is_file()


def test_a_foreign_non_empty_folder_is_refused(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["demo", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "not empty and was not written by judgekit demo" in err
    assert "Traceback" not in err
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_a_stale_cassette_is_an_error_never_a_call(tmp_path, capsys):
    example = tmp_path / "airdesk"
    shutil.copytree(AIRDESK, example, ignore=shutil.ignore_patterns("tools"))
    cassette = example / DEMO_CASSETTE
    lines = cassette.read_text().splitlines(keepends=True)
    cassette.write_text("".join(lines[:-5]))  # five recorded replies lost
    assert main(["demo", "--example", str(example), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "have no recorded reply" in err
    assert "make_cassette.py" in err
    assert "Traceback" not in err


def test_missing_labels_are_named(tmp_path, capsys):
    example = tmp_path / "airdesk"
    shutil.copytree(AIRDESK, example, ignore=shutil.ignore_patterns("tools"))
    (example / DEMO_LABELS).unlink()
    assert main(["demo", "--example", str(example), "--out", str(tmp_path / "out")]) == 1
    assert "expert-labels.csv: the demo needs this file" in capsys.readouterr().err


def test_the_cassette_says_its_verdicts_are_synthetic():
    cassette = Cassette(AIRDESK / DEMO_CASSETTE)
    assert cassette.meta["synthetic"] is True
    assert "SYNTHETIC" in cassette.meta["description"]
    assert cassette.skipped_lines == 0
    assert len(cassette) == cassette.meta["records"]
    header = (AIRDESK / DEMO_LABELS).read_text().splitlines()[0]
    assert header == "item_id,criterion,case_id,rater,label"
    raters = {line.split(",")[3] for line in (AIRDESK / DEMO_LABELS).read_text().splitlines()[1:]}
    assert raters == {"synthetic-expert-a", "synthetic-expert-b"}


def test_cassette_and_labels_are_what_make_cassette_writes():
    tools = str(AIRDESK / "tools")
    sys.path.insert(0, tools)
    try:
        import make_cassette
    finally:
        sys.path.remove(tools)
    files, notes = make_cassette.render()
    stale = sorted(str(p.relative_to(AIRDESK)) for p, text in files.items() if p.read_text() != text)
    assert stale == [], "rerun examples/airdesk/tools/make_cassette.py and commit what it writes"
    assert any("synthetic judge replies" in n for n in notes)


def test_demo_runs_from_an_installed_wheel(tmp_path):
    """Build the wheel, unpack it somewhere else and run the demo from it: the example comes from
    judgekit/_data, not from this checkout."""
    dist = tmp_path / "dist"
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(dist),
            str(REPO),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    wheel = next(dist.glob("judgekit_agents-*.whl"))
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        assert f"judgekit/_data/examples/airdesk/{DEMO_CASSETTE}" in names
        assert f"judgekit/_data/examples/airdesk/{DEMO_LABELS}" in names
        zf.extractall(site)
    out = tmp_path / "report"
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import judgekit, judgekit.resources as r; "
        "assert judgekit.__file__.startswith(sys.argv[1]), judgekit.__file__; "
        "print('example:', r.resource_path(r.EXAMPLE_SET)); "
        "from judgekit.cli import main; rc = main(['demo', '--out', sys.argv[2]]); "
        "print('litellm imported:', 'litellm' in sys.modules); sys.exit(rc)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(site), str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"example: {site / 'judgekit' / '_data' / 'examples' / 'airdesk'}" in done.stdout
    assert (out / "index.html").is_file()
    assert "litellm imported: False" in done.stdout  # replaying the cassette never loads a provider client


def test_holdout_cases_are_left_out_of_grading_and_reports(tmp_path):
    example = tmp_path / "airdesk"
    shutil.copytree(AIRDESK, example, ignore=shutil.ignore_patterns("tools"))
    case = example / "cases" / "high_volume" / "GS-HV-0001.yaml"
    case.write_text(case.read_text().replace("slice: high_volume\n", "slice: high_volume\nsplit: holdout\n"))
    lines: list[str] = []
    result = run_demo(tmp_path / "out", example=example, say=lines.append)
    assert result.problems == []
    assert "      left out the trials of holdout case(s) GS-HV-0001" in lines
    for name in ("agent-v1", "agent-v2"):
        run = read_results(tmp_path / "out" / "results" / f"{name}.jsonl")
        assert len(run.lines) == 100
        assert "GS-HV-0001" not in {line.case.id for line in run.lines}
    page = (tmp_path / "out" / "reports" / "agent-v1.html").read_text(encoding="utf-8")
    assert "Tasks: 25;" in page


def test_demo_pass_k_equals_judgekit_report_with_its_default_policy(demo_run, tmp_path):
    """The demo's run pages compute pass^k as ``judgekit report --cases`` does (one undecided policy)."""
    import re

    out, code, text = demo_run
    assert code == 0, text
    row = re.compile(r"<tr><td>(\d+)</td><td>([^<]*)</td><td>([^<]*)</td><td>(\d+)</td></tr>")
    for name in ("agent-v1", "agent-v2"):
        demo_page = (out / "reports" / f"{name}.html").read_text(encoding="utf-8")
        cli_page = tmp_path / f"{name}.html"
        assert (
            main(
                [
                    "report",
                    str(out / "results" / f"{name}.jsonl"),
                    "--cases",
                    str(AIRDESK),
                    "--format",
                    "html",
                    "-o",
                    str(cli_page),
                ]
            )
            == 0
        )
        cli_text = cli_page.read_text(encoding="utf-8")
        assert row.findall(demo_page), "no pass^k rows in the demo page"
        assert row.findall(demo_page) == row.findall(cli_text)
        assert "policy <code>fail</code>" in demo_page
        assert "policy <code>fail</code>" in cli_text
