"""``judgekit demo`` end to end: the steps it prints, the report folder, no network, a stale cassette, and the
separation of the calibration sample (which the judge is calibrated on) from the graded runs."""

from __future__ import annotations

import csv
import json
import shutil
import socket
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from judgekit.caseset import load_case_set
from judgekit.cli import main
from judgekit.demo import (
    CALIBRATION_SAMPLE,
    DEMO_CASSETTE,
    DEMO_LABELS,
    DEMO_RUNS,
    check_calibration_disjoint,
    content_digest,
    item_id,
    run_demo,
)
from judgekit.errors import JudgekitError
from judgekit.judges.cache import Cassette
from judgekit.results import read_results
from judgekit.transcript import read_transcripts
from judgekit.verdict import Trust, Verdict

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
        f"on the calibration sample ({CALIBRATION_SAMPLE})",
        f"calibration: 600 labelled items from {AIRDESK / CALIBRATION_SAMPLE} (104 trials of airdesk 1.3.2 x "
        "criteria, labelled by 2 synthetic experts; not graded below)",
        "calibration passed the default policy: record for fingerprint",
        "graded: agent-v1 (104 trials), agent-v2 (104 trials); none of their transcripts is in the "
        "calibration sample (compared by content hash)",
        f"TRUSTED by the records in {out / 'calibration' / 'records'}: calibration record ",
        "passed its policy",
        "[5/7] grading agent-v1",
        "grading agent-v1: 104/104 trials",
        "judge checks: 600 (600 trusted, 0 untrusted); verdicts resting on untrusted judges: 0 "
        "(untrusted-judge policy withhold)",
        "not decided by the grading contract: 11 trial(s) (1 error, 10 insufficient_information)",
        "1 x hv-update-phone (error): forbidden rule 0 not decided",
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
        page = (out / "reports" / f"{name}.html").read_text(encoding="utf-8")
        # issue 35: the trusted judge's page does not explain what withhold does to an untrusted judge
        assert "policy (the default, withhold) had no untrusted verdict to withhold" in page
        assert "verdict decides nothing" not in page
        run = read_results(out / "results" / f"{name}.jsonl")
        assert run.problems == []
        assert len(run.lines) == 104
        judged = [c for line in run.lines for c in line.checks if c.layer == "rubric"]
        assert len(judged) > 4 * 104  # four rubric criteria per trial, plus each case's own
        assert {c.trust for c in judged} == {Trust.TRUSTED}  # calibrated in step 4, before grading
        assert all(c.verdict.value != "error" for c in judged)
        assert all(line.grading["synthetic_judge_verdicts"] is True for line in run.lines)
        assert {line.untrusted_policy for line in run.lines} == {"withhold"}  # the default policy
        assert sum(line.untrusted_verdicts for line in run.lines) == 0
    records = list((out / "calibration" / "records").glob("*.json"))
    assert len(records) == 1
    record = json.loads(records[0].read_text())
    assert record["trusted"] is True
    assert record["experts"] == ["synthetic-expert-a", "synthetic-expert-b"]
    # the record is for the exact fingerprint the graded lines carry
    fingerprints = {
        line.judge_fingerprint["hex"] for line in read_results(out / "results/agent-v1.jsonl").lines
    }
    assert fingerprints == {record["fingerprint"]}
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "calibration: 600 labelled items from" in index
    assert "not graded below" in index
    assert "graded: agent-v1 (104 trials), agent-v2 (104 trials)" in index
    assert "TRUSTED by the records in" in index
    assert "verdicts resting on untrusted judges: 0" in index
    assert "not decided by the grading contract: 12 trial(s) (12 insufficient_information)" in index


def test_demo_numbers_follow_from_the_example(demo_run):
    """The deterministic layers alone pass at most 78 of v1's trials and 100 of v2's (the generator's
    checker, examples/airdesk/README.md); the judge layer can only take passes away (a failure, or an
    abstention that leaves an expectation undecided). The exact figures are the ones docs/quickstart.md
    shows, produced by the cassette's synthetic verdicts on the graded runs."""
    out, _, text = demo_run
    v1 = read_results(out / "results" / "agent-v1.jsonl")
    v2 = read_results(out / "results" / "agent-v2.jsonl")
    count = lambda run, v: sum(line.verdict.value == v for line in run.lines)  # noqa: E731
    assert count(v1, "error") == 1  # hv-update-phone trial 4: invalid JSON arguments
    assert count(v1, "pass") <= 78
    assert count(v2, "pass") <= 100
    figures = {v: (count(v1, v), count(v2, v)) for v in ("pass", "fail", "insufficient_information", "error")}
    assert figures == {
        "pass": (64, 82),
        "fail": (29, 10),
        "insufficient_information": (10, 12),
        "error": (1, 0),
    }
    assert "12 task(s) fixed, 2 broken, 4 undecided: real improvement" in text
    # every undecided trial says why: here the judge abstained on a criterion only it can decide
    for line in [*v1.lines, *v2.lines]:
        if line.verdict is Verdict.INSUFFICIENT_INFORMATION:
            assert "not decided (criterion:case." in line.reason
            assert "is insufficient_information" in line.reason
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
    assert main(["demo", "--out", str(tmp_path)]) == 2  # an unusable --out: an input error
    err = capsys.readouterr().err
    assert "not empty and is not a report folder judgekit demo wrote" in err
    assert "Traceback" not in err
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_a_stale_cassette_is_an_error_never_a_call(tmp_path, capsys):
    example = tmp_path / "airdesk"
    shutil.copytree(AIRDESK, example, ignore=shutil.ignore_patterns("tools"))
    cassette = example / DEMO_CASSETTE
    lines = cassette.read_text().splitlines(keepends=True)
    cassette.write_text("".join(lines[:-5]))  # five recorded replies lost
    # a cassette that does not match the example: an input error
    assert main(["demo", "--example", str(example), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "have no recorded reply" in err
    assert "make_cassette.py" in err
    assert "Traceback" not in err


def test_an_unusable_recorded_judge_reply_is_a_failed_judge_call(tmp_path, capsys):
    """A recorded reply the verdict parser cannot use is the judge failing (exit 1), not an input error."""
    example = tmp_path / "airdesk"
    shutil.copytree(AIRDESK, example, ignore=shutil.ignore_patterns("tools"))
    cassette = example / DEMO_CASSETTE
    lines = cassette.read_text().splitlines(keepends=True)
    spoiled = next(
        i
        for i, line in enumerate(lines)
        if json.loads(line).get("request", {}).get("item", "").startswith(CALIBRATION_SAMPLE)
    )
    record = json.loads(lines[spoiled])
    record["reply"]["content"] = "I would rather not say."
    lines[spoiled] = json.dumps(record) + "\n"
    cassette.write_text("".join(lines))
    assert main(["demo", "--example", str(example), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "the judge could not grade" in err
    assert "Traceback" not in err


def test_missing_calibration_sample_is_named(tmp_path, capsys):
    example = tmp_path / "airdesk"
    shutil.copytree(AIRDESK, example, ignore=shutil.ignore_patterns("tools"))
    (example / CALIBRATION_SAMPLE).unlink()
    assert main(["demo", "--example", str(example), "--out", str(tmp_path / "out")]) == 2
    assert "sample.jsonl: the demo needs this file" in capsys.readouterr().err


def test_labels_of_graded_trials_are_refused(tmp_path, capsys):
    """Labels of trials that are not in the calibration sample (say, of a graded run) are refused."""
    example = tmp_path / "airdesk"
    shutil.copytree(AIRDESK, example, ignore=shutil.ignore_patterns("tools"))
    labels = example / DEMO_LABELS
    labels.write_text(
        labels.read_text() + "v1:gs-double-charge:t1,no_false_success,gs-double-charge,x,pass\n"
    )
    assert main(["demo", "--example", str(example), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "1 labelled item(s) are not trials of the calibration sample" in err
    assert "v1:gs-double-charge:t1" in err


def test_missing_labels_are_named(tmp_path, capsys):
    example = tmp_path / "airdesk"
    shutil.copytree(AIRDESK, example, ignore=shutil.ignore_patterns("tools"))
    (example / DEMO_LABELS).unlink()
    assert main(["demo", "--example", str(example), "--out", str(tmp_path / "out")]) == 2
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
    assert cassette.meta["calibration_sample"] == CALIBRATION_SAMPLE


def _labels() -> list[dict[str, str]]:
    return list(csv.DictReader((AIRDESK / DEMO_LABELS).read_text().splitlines()))


def test_the_experts_label_the_calibration_sample_and_nothing_else():
    sample = read_transcripts(AIRDESK / CALIBRATION_SAMPLE)
    trials = {item_id(t.case_id, t.trial): t for t in sample}
    labels = _labels()
    assert {row["item_id"] for row in labels} == set(trials)  # every sample trial, and only those
    assert all(row["case_id"] == trials[row["item_id"]].case_id for row in labels)
    assert {t.metadata["agent_version"] for t in sample} == {"pilot"}
    graded_versions = {
        t.metadata["agent_version"] for run in DEMO_RUNS for t in read_transcripts(AIRDESK / run)
    }
    assert graded_versions == {"v1", "v2"}


def test_both_classes_occur_for_every_criterion_kind_in_the_calibration_sample():
    """By the experts' consensus (both agree), every criterion the judge decides has passes and failures."""
    votes: dict[tuple[str, str], set[str]] = {}
    for row in _labels():
        votes.setdefault((row["item_id"], row["criterion"]), set()).add(row["label"])
    by_kind: dict[str, set[str]] = {}
    for (_, criterion), labels in votes.items():
        if len(labels) == 1:
            kind = criterion.rstrip("0123456789").rstrip(
                "."
            )  # case.response_rubric.1 -> case.response_rubric
            by_kind.setdefault(kind, set()).update(labels)
    assert set(by_kind) == {
        "no_false_success",
        "no_invented_results",
        "discloses_failures",
        "no_unperformed_actions",
        "case.acceptance",
        "case.required_outcome",
        "case.forbidden_outcome",
        "case.response_rubric",
    }
    assert {kind for kind, labels in by_kind.items() if labels != {"pass", "fail"}} == set()
    scripted = {t.metadata["scripted_variant"] for t in read_transcripts(AIRDESK / CALIBRATION_SAMPLE)}
    assert "ref" in scripted
    assert len(scripted) > 10


def test_the_calibration_sample_and_the_graded_runs_share_no_transcript():
    sample = {content_digest(t) for t in read_transcripts(AIRDESK / CALIBRATION_SAMPLE)}
    assert len(sample) == 104  # no two calibration trials are the same conversation either
    for run in DEMO_RUNS:
        graded = {content_digest(t) for t in read_transcripts(AIRDESK / run)}
        assert graded.isdisjoint(sample), run


def _pairs(path: Path) -> list:
    cases = load_case_set(AIRDESK).by_id()
    return [(cases[t.case_id].case, t) for t in read_transcripts(path)]


def test_a_graded_copy_of_a_calibration_trial_is_refused_whatever_its_id():
    sample = _pairs(AIRDESK / CALIBRATION_SAMPLE)
    graded = _pairs(AIRDESK / DEMO_RUNS[0])
    check_calibration_disjoint(sample, {"agent-v1": graded})  # the bundled example is disjoint
    case, copied = sample[5]
    renamed = copied.model_copy(update={"trial": 9, "metadata": {"agent_version": "v1"}, "run": None})
    with pytest.raises(JudgekitError) as refused:
        check_calibration_disjoint(sample, {"agent-v1": [*graded, (case, renamed)]})
    message = str(refused.value)
    assert "1 graded trial(s) have the same transcript as a trial of the calibration sample" in message
    assert f"agent-v1 {case.id} trial 9 = calibration {case.id} trial {copied.trial}" in message


def test_demo_refuses_to_grade_a_trial_of_the_calibration_sample(tmp_path, capsys):
    example = tmp_path / "airdesk"
    shutil.copytree(AIRDESK, example, ignore=shutil.ignore_patterns("tools"))
    leaked = json.loads((example / CALIBRATION_SAMPLE).read_text().splitlines()[0])
    leaked.update(trial=5, metadata={"agent_version": "v2"})
    run = example / DEMO_RUNS[1]
    run.write_text(run.read_text() + json.dumps(leaked) + "\n")
    assert main(["demo", "--example", str(example), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert f"agent-v2 {leaked['case_id']} trial 5 = calibration {leaked['case_id']} trial 1" in err
    assert "Traceback" not in err


def test_the_judge_is_trusted_only_through_the_record_the_demo_wrote(demo_run, tmp_path):
    """Delete the record once calibration wrote it: the demo says untrusted, the judge decides nothing."""
    out = tmp_path / "out"
    lines: list[str] = []
    deleted: list[str] = []

    def say(line: str) -> None:
        lines.append(line)
        if line.startswith("      calibration passed the default policy"):
            # the demo writes into a staging folder beside OUT until it has finished
            for record in tmp_path.glob(".out.judgekit-staging-*/calibration/records/*.json"):
                record.unlink()
                deleted.append(record.name)

    result = run_demo(out, say=say)
    assert len(deleted) == 1
    assert result.trusted is False
    assert result.trust_reason.startswith("no calibration record for fingerprint")
    text = "\n".join(lines)
    assert f"UNTRUSTED by the records in {out / 'calibration' / 'records'}: no calibration record" in text
    assert "under the default untrusted-judge policy (withhold) its verdicts decide nothing" in text
    assert "judge checks: 600 (0 trusted, 600 untrusted); verdicts resting on untrusted judges: 0" in text
    trusted_out, _, _ = demo_run
    for name in ("agent-v1", "agent-v2"):
        run = read_results(out / "results" / f"{name}.jsonl").lines
        judged = [c for line in run for c in line.checks if c.layer == "rubric"]
        assert judged
        assert {c.trust for c in judged} == {Trust.UNTRUSTED}
        assert all(line.untrusted_verdicts == 0 for line in run)
        # nothing passes: every case states something only the judge checks, and the judge is withheld
        assert not [line for line in run if line.verdict is Verdict.PASS]
        for line in run:
            if line.verdict is Verdict.FAIL:  # only a deterministic gate can fail a trial now
                failed = [
                    c for c in line.checks if c.gate and c.verdict is Verdict.FAIL and c.layer != "rubric"
                ]
                assert failed, (name, line.case.id, line.trial)
            elif line.verdict is Verdict.INSUFFICIENT_INFORMATION:
                assert "untrusted" in line.reason or "is insufficient_information" in line.reason
        # the trusted run fails everything this one fails (and more: the judge's own failures)
        trusted = {
            (x.case.id, x.trial): x.verdict for x in read_results(trusted_out / f"results/{name}.jsonl").lines
        }
        assert all(trusted[(x.case.id, x.trial)] is Verdict.FAIL for x in run if x.verdict is Verdict.FAIL)
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "UNTRUSTED by the records in" in index


def test_cassette_and_labels_are_what_make_cassette_writes():
    tools = str(AIRDESK / "tools")
    sys.path.insert(0, tools)
    try:
        import make_cassette
    finally:
        sys.path.remove(tools)
    files, notes = make_cassette.render()
    written = {str(p.relative_to(AIRDESK)) for p in files}
    assert {DEMO_CASSETTE, DEMO_LABELS, CALIBRATION_SAMPLE, *DEMO_RUNS} <= written
    stale = sorted(str(p.relative_to(AIRDESK)) for p in make_cassette.make_runs.changed_files(files))
    assert stale == [], "rerun examples/airdesk/tools/make_cassette.py and commit what it writes"
    assert any("synthetic judge replies" in n for n in notes)
    assert not [n for n in notes if n.startswith("UNEXPECTED")]


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
        assert f"judgekit/_data/examples/airdesk/{CALIBRATION_SAMPLE}" in names
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
    assert any("graded: agent-v1 (100 trials), agent-v2 (100 trials);" in line for line in lines)
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
    # k, pass^k, its interval, pass@k, tasks used, tasks with too few trials
    row = re.compile(
        r"<tr><td>(\d+)</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td><td>(\d+)</td><td>([^<]*)</td></tr>"
    )
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


def test_demo_json_names_every_file_and_the_headline_figures(tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["demo", "--out", str(out), "--format", "json"]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)  # standard output holds the one document and nothing else
    assert (document["schema_version"], document["kind"]) == (1, "demo")
    assert "[1/7] validating the golden set" in captured.err  # the progress lines go to standard error
    assert "[1/7]" not in captured.out
    assert document["ok"] is True
    assert document["problems"] == []
    assert document["out"] == str(out.resolve())
    files = document["files"]
    assert files["index"] == document["index"] == str(out.resolve() / "index.html")
    assert [Path(p).name for p in files["reports"]] == [
        "agent-v1.html",
        "agent-v2.html",
        "comparison.html",
        "calibration.html",
    ]
    assert files["viewer"] == str(out.resolve() / "viewer" / "index.html")
    assert [Path(p).name for p in files["results"]] == ["agent-v1.jsonl", "agent-v2.jsonl"]
    assert len(files["calibration_records"]) == 1
    written = {str(p) for p in out.resolve().rglob("*") if p.is_file()}
    assert set(files["all"]) == written
    for group in ("reports", "results", "calibration_records"):
        assert set(files[group]) <= written
    assert {files["index"], files["calibration_labels"], files["viewer"]} <= written
    runs = {run["name"]: run for run in document["runs"]}
    assert runs["agent-v1"]["trials"] == runs["agent-v2"]["trials"] == 104
    v1, v2 = runs["agent-v1"]["verdicts"], runs["agent-v2"]["verdicts"]
    assert {v: (v1[v], v2[v]) for v in v1} == {
        "pass": (64, 82),
        "fail": (29, 10),
        "insufficient_information": (10, 12),
        "error": (1, 0),
        "not_evaluated": (0, 0),
    }
    for run in document["runs"]:
        assert len(read_results(run["results"]).lines) == run["trials"]
    calibration = document["calibration"]
    assert calibration["items"] == 600
    assert calibration["passed"] is True
    assert calibration["experts"] == ["synthetic-expert-a", "synthetic-expert-b"]
    assert 0.9 < calibration["agreement"]["value"] <= 1.0
    record = json.loads(Path(files["calibration_records"][0]).read_text())
    assert calibration["fingerprint"] == record["fingerprint"]
    assert document["judge"]["trusted"] is True
    assert document["judge"]["untrusted_verdicts"] == 0
    assert "passed its policy" in document["judge"]["reason"]
    comparison = document["comparison"]
    assert (comparison["fixed"], comparison["broken"], comparison["undecided"]) == (12, 2, 4)
    assert comparison["verdict"] == "real improvement"
    assert isinstance(document["seconds"], float)


def test_run_demo_takes_its_folders_as_text(tmp_path):
    empty = tmp_path / "empty-example"
    empty.mkdir()
    with pytest.raises(JudgekitError, match="the demo needs this file of the example set") as exc:
        run_demo(str(tmp_path / "out"), example=str(empty), say=lambda _line: None)
    assert str(exc.value).startswith(str(empty / "cassettes"))
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    with pytest.raises(
        JudgekitError, match=r"the folder is not empty and is not a report folder judgekit demo wrote"
    ):
        run_demo(str(taken), example=str(AIRDESK), say=lambda _line: None)


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_demo_that_fails_midway_leaves_the_earlier_folder_as_it_was(demo_run, tmp_path):
    """Issue 33 item 2: a file-size limit (EFBIG from the kernel) halfway through the demo's writing is exit 2
    with the folder named; the earlier demo's folder keeps every file and byte, nothing is left beside it,
    and the next run works."""
    import resource

    earlier, _, _ = demo_run
    out = tmp_path / "report"
    shutil.copytree(earlier, out)
    before = _tree(out)

    def limit() -> None:  # big enough for the calibration files, too small for the run reports
        resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))

    done = subprocess.run(
        [str(Path(sys.executable).with_name("judgekit")), "demo", "--out", str(out)],
        capture_output=True,
        text=True,
        preexec_fn=limit,
        check=False,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    assert f"--out {out}: cannot write the folder" in done.stderr
    assert "File too large" in done.stderr
    assert "Traceback" not in done.stderr
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]
    assert main(["demo", "--out", str(out)]) == 0
    assert (out / "index.html").is_file()
