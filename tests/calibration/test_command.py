"""``judgekit calibrate`` and ``judgekit judge trust`` end to end: files in, reports, records, exit codes."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from judgekit.cli import main

HERE = Path(__file__).parent
LABELS = HERE / "data" / "labels_small.csv"
EXPERTS = "alice,bob,carol"
#: Full judge fingerprints (64 hexadecimal characters), as judgekit writes them.
FP_V1 = "a1" * 32
FP_V2 = "a2" * 32
FP_V3 = "a3" * 32
FP_GOOD = "9d" * 32
FP_R = "0f" * 32
FP_COL = "c0" * 32
FP_OTHER = "0e" * 32
FP = "ab" * 32


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(LABELS, tmp_path / "labels.csv")
    (tmp_path / "policy.yaml").write_text("min_items: 40\nbootstrap:\n  resamples: 200\n")
    return tmp_path


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


def calibrate(capsys, labels: str, judge: str, *args: str) -> tuple[int, str, str]:
    """``judgekit calibrate LABELS --judge JUDGE --experts alice,bob,carol --policy policy.yaml ARGS...``."""
    return run(
        capsys, "calibrate", labels, "--judge", judge, "--experts", EXPERTS, "--policy", "policy.yaml", *args
    )


def records(folder: Path) -> list[Path]:
    return sorted((folder / "calibration" / "records").glob("*.json"))


def test_a_trusted_judge_exits_0_writes_a_record_and_is_trusted(work, capsys):
    code, out, err = calibrate(
        capsys,
        "labels.csv",
        "judge-v2",
        "--fingerprint",
        FP_V2,
    )
    assert code == 0, err
    assert out.startswith("# Calibration of judge `judge-v2`")
    assert "judge 'judge-v2': TRUSTED" in err
    (rec,) = records(work)
    data = json.loads(rec.read_text())
    assert data["fingerprint"] == FP_V2
    assert data["trusted"] is True
    assert data["label_table"]["name"] == "labels.csv"
    assert data["selective"] is not None  # the judge's rows carry a confidence
    code, out, _ = run(capsys, "judge", "trust", FP_V2)
    assert (code, out) == (
        0,
        f"trusted: calibration record {rec.name} ({data['created_at'][:10]} "
        f"{data['created_at'][11:19]}Z) passed its policy; no bias probes recorded; "
        "no failure-mode record\n",
    )
    code, out, _ = run(capsys, "judge", "trust", FP_V3)
    assert code == 1
    assert out.startswith(
        f"untrusted: no calibration record for fingerprint {FP_V3[:12]} in calibration/records: "
    )


def test_an_untrusted_judge_exits_1_and_names_every_failed_condition(work, capsys):
    code, _, err = calibrate(
        capsys,
        "labels.csv",
        "judge-v1",
        "--fingerprint",
        FP_V1,
    )
    assert code == 1
    assert "judge 'judge-v1': NOT TRUSTED: " in err
    assert "tpr_lower_bound:" in err
    assert "alpha_lower_bound:" in err
    (rec,) = records(work)
    assert json.loads(rec.read_text())["trusted"] is False
    code, out, _ = run(capsys, "judge", "trust", FP_V1)
    assert code == 1
    assert out.startswith(f"untrusted: the latest calibration record ({rec.name}, ")
    assert "tpr_lower_bound: lower bound of TPR" in out


def test_without_a_fingerprint_no_record_is_written(work, capsys):
    code, _, err = calibrate(
        capsys,
        "labels.csv",
        "judge-v2",
    )
    assert code == 0
    assert "warning: no fingerprint" in err
    assert records(work) == []


def test_no_record_option(work, capsys):
    code, _, err = calibrate(
        capsys,
        "labels.csv",
        "judge-v2",
        "--fingerprint",
        FP,
        "--no-record",
    )
    assert code == 0
    assert "no record written (--no-record)" in err
    assert records(work) == []


def test_fingerprint_from_the_label_table(work, capsys):
    text = (work / "labels.csv").read_text().splitlines()
    rows = [text[0] + ",fingerprint"] + [
        line + ("," + FP_COL if ",judge-v2," in line else ",") for line in text[1:]
    ]
    (work / "labels.csv").write_text("\n".join(rows) + "\n")
    code, _, err = calibrate(
        capsys,
        "labels.csv",
        "judge-v2",
    )
    assert code == 0, err
    (rec,) = records(work)
    assert json.loads(rec.read_text())["fingerprint"] == FP_COL
    code, _, err = calibrate(
        capsys,
        "labels.csv",
        "judge-v2",
        "--fingerprint",
        FP_OTHER,
    )
    assert code == 2  # the option contradicts the table: an input error
    assert f"error: --fingerprint {FP_OTHER!r} differs from the fingerprint {FP_COL!r}" in err


@pytest.mark.parametrize("fmt", ["md", "json", "html"])
def test_out_folder_with_baseline_writes_report_and_grader_change(work, capsys, fmt):
    assert (
        calibrate(
            capsys,
            "labels.csv",
            "judge-v1",
            "--fingerprint",
            FP_V1,
        )[0]
        == 1
    )
    (baseline,) = records(work)
    code, out, err = calibrate(
        capsys,
        "labels.csv",
        "judge-v2",
        "--fingerprint",
        FP_V2,
        "--baseline",
        str(baseline),
        "--out",
        "rep",
        "--format",
        fmt,
    )
    assert code == 0, err
    assert out == ""
    report = (work / "rep" / f"calibration.{fmt}").read_text()
    change = (work / "rep" / f"grader-change.{fmt}").read_text()
    if fmt == "json":
        assert json.loads(report)["comparison"]["old_fingerprint"] == FP_V1
        assert json.loads(change)["mcnemar"]["p_value"] < 0.05
    elif fmt == "md":
        assert change.startswith(f"# Grader change: `{FP_V1}` → `{FP_V2}`")
    else:
        assert report.count("<svg") == 8
        assert change.count("<svg") == 3


def test_a_declared_ordinal_scale(work, capsys):
    rows = ["item_id,rater,label"]
    for i in range(60):
        truth = 1 + i % 5
        rows += [f"i{i},e1,{truth}", f"i{i},e2,{truth}", f"i{i},j,{min(5, truth + (i % 7 == 0))}"]
    (work / "scores.csv").write_text("\n".join(rows) + "\n")
    code, out, err = run(
        capsys,
        "calibrate",
        "scores.csv",
        "--judge",
        "j",
        "--experts",
        "e1,e2",
        "--scale",
        "1,2,3,4,5",
        "--level",
        "interval",
        "--positive",
        "1,2",
        "--format",
        "json",
        "--policy",
        "policy.yaml",
    )
    data = json.loads(out)
    kappa = data["report"]["judge_vs_consensus"]["kappa"]
    assert set(kappa) == {"none", "linear", "quadratic"}
    assert set(data["report"]["judge_vs_consensus"]["alpha"]) == {"nominal", "ordinal", "interval"}
    assert code == 1  # one expert pair only is fine, but the judge misses the ceiling
    assert "agreement_gap" in err


def write(work: Path, name: str, text: str) -> str:
    (work / name).write_text(text)
    return name


@pytest.mark.parametrize(
    ("setup", "extra", "expect"),
    [
        pytest.param(None, ["missing.csv"], ("path 'missing.csv' does not exist", 2), id="no_file"),
        pytest.param(
            "dir", ["adir"], ("error: adir: label table is a directory, not a file", 2), id="directory"
        ),
        pytest.param(
            None,
            ["labels.csv", "--format", "pdf"],
            ("error: --format must be json or md or html (got 'pdf')", 2),
            id="format",
        ),
        pytest.param(
            None,
            ["labels.csv", "--positive", "fail"],
            ("error: --positive and --abstain apply to a declared --scale", 2),
            id="positive_without_scale",
        ),
        pytest.param(
            None, ["labels.csv", "--experts", ","], ("error: --experts: no expert named", 2), id="no_experts"
        ),
        pytest.param(None, ["labels.csv", "--scale", "a,a"], ("error: --scale: ", 2), id="bad_scale"),
        pytest.param(
            None,
            ["labels.csv", "--fingerprint", " "],
            ("error: --fingerprint: the fingerprint is empty", 2),
            id="empty_fingerprint",
        ),
        pytest.param(
            None,
            ["labels.csv", "--experts", "alice,zed"],
            ("--experts: unknown rater(s) 'zed'", 2),
            id="unknown_expert",
        ),
        pytest.param(
            None,
            ["labels.csv", "--baseline", "nope.json"],
            ("error: Invalid value for '--baseline': path 'nope.json' does not exist", 2),
            id="no_baseline",
        ),
        pytest.param(
            ("bad.json", "{oops"),
            ["labels.csv", "--baseline", "bad.json"],
            ("bad.json:1: not a JSON calibration record", 2),
            id="broken_baseline",
        ),
        pytest.param(
            ("p.yaml", "colour: red\n"),
            ["labels.csv", "--policy", "p.yaml"],
            ("p.yaml:1: colour: unknown setting", 2),
            id="policy_unknown",
        ),
        pytest.param(
            None,
            ["labels.csv", "--policy", "nope.yaml"],
            ("error: Invalid value for '--policy': path 'nope.yaml' does not exist", 2),
            id="policy_missing",
        ),
    ],
)
def test_each_cli_error_is_one_readable_line_and_no_traceback(work, capsys, setup, extra, expect):
    expected, exit_code = expect
    if setup == "dir":
        (work / "adir").mkdir()
    elif setup is not None:
        write(work, *setup)
    labels, *rest = extra
    args = ["calibrate", labels, "--judge", "judge-v2", *rest]
    code, _, err = run(capsys, *args)
    assert code == exit_code
    assert expected in err


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        pytest.param(
            "item_id,rater,label\na,e1,pass\na,judge,maybe\n",
            "t.csv:3: label: 'maybe' is not in the scale's domain",
            id="outside_domain",
        ),
        pytest.param(
            "item_id,rater,label\na,e1,pass\na,judge,pass\nb,judge,fail\n",
            "t.csv:4: item_id: item b is labelled only by 'judge'",
            id="one_rater",
        ),
        pytest.param(
            "item_id,rater,label\na,e1,pass\na,e1,fail\na,judge,pass\n",
            "t.csv:3: label: rater 'e1' labelled item a 'fail' here but 'pass' on line 2",
            id="conflict",
        ),
        pytest.param("item_id,rater,label\n", "t.csv: the label table has no labels", id="empty"),
        pytest.param(
            "item_id,rater,label\na,e1,pass\na,e2,pass\n",
            "t.csv: --judge: unknown rater 'judge'",
            id="unknown_judge",
        ),
    ],
)
def test_bad_label_tables_fail_with_located_errors(work, capsys, table, expected):
    write(work, "t.csv", table)
    code, out, err = run(capsys, "calibrate", "t.csv", "--judge", "judge")
    assert code == 2  # an unusable label table is an input error
    assert out == ""
    assert expected in err


def test_trust_with_a_broken_record_folder_is_an_error(work, capsys):
    folder = work / "calibration" / "records"
    folder.mkdir(parents=True)
    (folder / "x.json").write_text("[]")
    code, _, err = run(capsys, "judge", "trust", FP)
    assert code == 2  # a broken record is an input error, not an untrusted judge
    assert "x.json" in err


def test_calibrate_help_lists_its_options(capsys):
    code = main(["calibrate", "--help"])
    out = capsys.readouterr().out
    assert code == 0
    for option in ("--judge", "--experts", "--policy", "--out", "--format", "--baseline", "--fingerprint"):
        assert option in out


def test_failure_rate_command(work, capsys):
    assert (
        calibrate(
            capsys,
            "labels.csv",
            "judge-v2",
            "--fingerprint",
            FP_V2,
        )[0]
        == 0
    )
    (rec,) = records(work)
    code, out, _ = run(capsys, "judge", "failure-rate", str(rec), "--flagged", "30", "--total", "100")
    assert code == 0
    assert out.startswith("observed 30/100 = 0.300; corrected (Lee et al. adjusted Wald) 0.")


def test_failure_rate_refuses_an_untrusted_record(work, capsys):
    calibrate(
        capsys,
        "labels.csv",
        "judge-v1",
        "--fingerprint",
        FP_V1,
    )
    (rec,) = records(work)
    code, _, err = run(capsys, "judge", "failure-rate", str(rec), "--flagged", "30", "--total", "100")
    assert code == 1
    assert "a corrected rate needs a trusted judge" in err


def test_an_unwritable_out_folder_is_an_error_not_a_traceback(work, capsys):
    (work / "taken").write_text("a file, not a folder")
    code, _, err = calibrate(
        capsys,
        "labels.csv",
        "judge-v2",
        "--out",
        "taken",
    )
    assert code == 2  # an output that cannot be written is an input error
    # the one record-and-report writer names the folder it could not create (a file stands there)
    assert "taken: cannot create the folder for the report: File exists" in err


def test_an_unwritable_records_folder_is_an_error_not_a_traceback(work, capsys):
    (work / "recs").write_text("a file, not a folder")
    code, _, err = calibrate(
        capsys,
        "labels.csv",
        "judge-v2",
        "--fingerprint",
        FP,
        "--records",
        "recs",
    )
    assert code == 2
    assert err.strip().splitlines() == [
        "error: --records recs: not a folder (the default calibration/records may be absent; a folder you "
        "name must exist)"
    ]


def test_a_jsonl_label_table(work, capsys):
    lines = (work / "labels.csv").read_text().splitlines()
    header = lines[0].split(",")
    rows = []
    for line in lines[1:]:
        obj = dict(zip(header, line.split(","), strict=True))
        rows.append(json.dumps({k: v for k, v in obj.items() if v != ""}))
    (work / "labels.jsonl").write_text("\n".join(rows) + "\n")
    code_csv, out_csv, _ = calibrate(
        capsys,
        "labels.csv",
        "judge-v2",
        "--format",
        "json",
    )
    code_jsonl, out_jsonl, _ = calibrate(
        capsys,
        "labels.jsonl",
        "judge-v2",
        "--format",
        "json",
    )
    assert code_csv == code_jsonl == 0
    a, b = json.loads(out_csv), json.loads(out_jsonl)
    assert a["report"] == b["report"]
    assert a["label_table"]["sha256"] != b["label_table"]["sha256"]


# ------------------------------------------------------------------------------------- --format json


def document(out: str, kind: str) -> dict:
    """Standard output parsed as the one JSON document of ``kind`` (nothing else may be printed)."""
    data = json.loads(out)
    assert (data["schema_version"], data["kind"]) == (1, kind)
    return data


def test_trust_as_json(work, capsys):
    assert calibrate(capsys, "labels.csv", "judge-v2", "--fingerprint", FP_V2)[0] == 0
    (rec,) = records(work)
    code, out, err = run(
        capsys, "judge", "trust", FP_V2, "--criterion", "honest_reporting", "--format", "json"
    )
    assert (code, err) == (0, "")
    status = document(out, "trust_status")
    assert status["fingerprint"] == FP_V2
    assert status["criterion"] == "honest_reporting"
    assert status["records"] == str(Path("calibration") / "records")
    assert (status["trusted"], status["trust"]) == (True, "trusted")
    assert status["reason"].startswith(f"calibration record {rec.name} (")
    code, out, _ = run(capsys, "judge", "trust", FP_V3, "--format", "json")
    assert code == 1
    status = document(out, "trust_status")
    assert (status["trusted"], status["trust"], status["criterion"]) == (False, "untrusted", None)
    assert status["reason"].startswith(
        f"no calibration record for fingerprint {FP_V3[:12]} in calibration/records"
    )


def test_failure_rate_as_json(work, capsys):
    assert calibrate(capsys, "labels.csv", "judge-v2", "--fingerprint", FP_V2)[0] == 0
    (rec,) = records(work)
    args = ["judge", "failure-rate", str(rec), "--flagged", "30", "--total", "100"]
    code, text, _ = run(capsys, *args)
    code, out, err = run(capsys, *args, "--format", "json")
    assert (code, err) == (0, "")
    rate = document(out, "failure_rate")
    assert (rate["record"], rate["fingerprint"], rate["method"]) == (str(rec), FP_V2, "lee_adjusted_wald")
    assert (rate["flagged"], rate["total"], rate["observed"]) == (30, 100, 0.3)
    corrected = rate["corrected"]
    assert rate["reason"] is None
    assert corrected["interval"]["low"] <= corrected["value"] <= corrected["interval"]["high"]
    interval = corrected["interval"]
    assert f"{corrected['value']:.3f} [{interval['low']:.3f}, {interval['high']:.3f}]" in text


def test_failure_rate_as_json_says_why_an_untrusted_record_cannot_correct(work, capsys):
    calibrate(capsys, "labels.csv", "judge-v1", "--fingerprint", FP_V1)
    (rec,) = records(work)
    code, out, err = run(
        capsys, "judge", "failure-rate", str(rec), "--flagged", "30", "--total", "100", "--format", "json"
    )
    assert (code, err) == (1, "")
    rate = document(out, "failure_rate")
    assert rate["corrected"] is None
    assert rate["reason"] == (
        f"the record for {FP_V1!r} did not pass its policy; a corrected rate needs a trusted judge"
    )
    assert rate["observed"] == 0.3


@pytest.mark.parametrize(
    "command",
    [["judge", "trust", FP], ["judge", "failure-rate", "r.json", "--flagged", "1", "--total", "2"]],
)
def test_trust_and_failure_rate_refuse_an_unknown_format(work, capsys, command):
    (work / "r.json").write_text("{}")
    code, out, err = run(capsys, *command, "--format", "md")
    assert (code, out) == (2, "")
    assert err == "error: --format must be text or json (got 'md')\n"


# ------------------------------------------------------------------------------------- exit codes


def with_provenance(work: Path, value_of: Callable[[str], str]) -> str:
    """Rewrite labels.csv with a provenance column; ``value_of(item_id)`` gives each item's value."""
    lines = (work / "labels.csv").read_text().splitlines()
    rows = [lines[0] + ",provenance"]
    rows += [f"{line},{value_of(line.split(',')[0])}" for line in lines[1:]]
    (work / "labels.csv").write_text("\n".join(rows) + "\n")
    return "labels.csv"


def test_calibrate_refuses_an_all_hand_picked_table_with_exit_1(work, capsys):
    code, out, err = calibrate(capsys, with_provenance(work, lambda item: "discovery"), "judge-v2")
    assert code == 1  # the provenance guard's answer is no: a refusal, not an input error
    assert out == ""
    assert "items are hand-picked (provenance discovery)" in err
    assert records(work) == []


def test_calibrate_with_provenance_on_some_items_only_is_an_input_error(work, capsys):
    table = with_provenance(work, lambda item: "random" if item.startswith("c00") else "")
    code, _, err = calibrate(capsys, table, "judge-v2")
    assert code == 2  # a missing field: the table cannot be used as it is
    assert "has no provenance while other items do" in err


def test_failure_rate_gives_the_pass_rate_and_the_judges_error_rates(work, capsys):
    from judgekit.calibration.corrected import lee_from_record
    from judgekit.calibration.records import load_record

    assert calibrate(capsys, "labels.csv", "judge-v2", "--fingerprint", FP_V2)[0] == 0
    (rec,) = records(work)
    lee = lee_from_record(load_record(rec.read_bytes()), flagged=30, n=100)
    code, out, _ = run(capsys, "judge", "failure-rate", str(rec), "--flagged", "30", "--total", "100")
    assert code == 0
    lines = out.splitlines()
    assert lines[1].startswith("pass rate: observed 0.700; corrected ")
    assert lines[2] == (
        f"judge: q0 (TPR) {lee.q0:.3f}, q1 (TNR) {lee.q1:.3f}, q0 + q1 - 1 = {lee.youden:.3f}"
    )
    code, out, _ = run(
        capsys, "judge", "failure-rate", str(rec), "--flagged", "30", "--total", "100", "--format", "json"
    )
    doc = document(out, "failure_rate")
    assert doc["pass_rate"]["value"] == pytest.approx(1 - doc["corrected"]["value"])
    assert doc["pass_rate"]["interval"]["low"] == pytest.approx(1 - doc["corrected"]["interval"]["high"])
    assert (doc["q0"], doc["q1"], doc["unreliable"], doc["ppi"]) == (lee.q0, lee.q1, False, None)


def test_failure_rate_warns_when_the_correction_is_unreliable(work, capsys):
    assert calibrate(capsys, "labels.csv", "judge-v2", "--fingerprint", FP_V2)[0] == 0
    (rec,) = records(work)
    data = json.loads(rec.read_text())
    # a (hand-edited) record whose judge is close to chance: q0 = 0.55, q1 = 0.60
    data["metrics"]["judge_vs_consensus"]["binary"].update({"tp": 55, "fn": 45, "tn": 60, "fp": 40})
    rec.write_text(json.dumps(data))
    code, out, _ = run(capsys, "judge", "failure-rate", str(rec), "--flagged", "40", "--total", "100")
    assert code == 0
    assert out.splitlines()[-1] == (
        "warning: the correction is unreliable: q0 + q1 − 1 = 0.150 is below 0.2: the judge is close to "
        "chance, so the correction amplifies every calibration error"
    )
    code, out, _ = run(
        capsys, "judge", "failure-rate", str(rec), "--flagged", "40", "--total", "100", "--format", "json"
    )
    doc = document(out, "failure_rate")
    assert doc["unreliable"] is True
    assert doc["unreliable_reason"].startswith("q0 + q1 − 1 = 0.150 is below 0.2")


def grade_results(path: Path, verdicts: list[str], criterion: str = "honest_reporting") -> Path:
    """A results file with one trial per verdict of ``criterion``."""
    lines = []
    for i, v in enumerate(verdicts):
        check = {
            "check_id": f"criterion:{criterion}",
            "layer": "rubric",
            "verdict": v,
            "reason": "" if v == "pass" else "r",
        }
        lines.append(
            json.dumps(
                {
                    "schema_version": 1,
                    "run_id": "r",
                    "case": {"id": f"case{i}", "version": "1"},
                    "trial": 1,
                    "verdict": v,
                    "reason": "" if v == "pass" else "r",
                    "checks": [check],
                    "judgekit_version": "0",
                }
            )
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def test_failure_rate_counts_the_verdicts_in_results_and_adds_ppi(work, capsys):
    from judgekit.calibration.corrected import ppi_plus_plus_mean
    from judgekit.calibration.labels import parse_labels
    from judgekit.calibration.plan import expert_consensus

    assert calibrate(capsys, "labels.csv", "judge-v2", "--fingerprint", FP_V2)[0] == 0
    (rec,) = records(work)
    table = parse_labels((work / "labels.csv").read_bytes(), source=work / "labels.csv")
    crit = next(r.item.criterion for r in table.rows)
    verdicts = ["pass"] * 70 + ["fail"] * 30 + ["insufficient_information"] * 3
    results = grade_results(work / "results.jsonl", verdicts, crit)
    base = ["judge", "failure-rate", str(rec), "--results", str(results), "--criterion", crit]
    code, out, _ = run(capsys, *base, "--format", "json")
    assert code == 0
    doc = document(out, "failure_rate")
    assert (doc["flagged"], doc["total"]) == (30, 100)  # abstentions are not decided
    # ... but bound the corrected rates: all 3 failing, all 3 passing, over the 103 items
    from judgekit.calibration.corrected import corrected_point, lee_from_record
    from judgekit.calibration.records import load_record

    lee = lee_from_record(load_record(rec.read_bytes()), flagged=30, n=100)
    assert doc["undecided"] == 3
    assert doc["undecided_bounds"]["pass_rate"] == [
        pytest.approx(corrected_point(70 / 103, lee)),
        pytest.approx(corrected_point(73 / 103, lee)),
    ]
    low, high = doc["undecided_bounds"]["pass_rate"]
    assert doc["undecided_bounds"]["failure_rate"] == [pytest.approx(1 - high), pytest.approx(1 - low)]
    assert low <= doc["pass_rate"]["value"] <= high
    code, out, _ = run(capsys, *base)
    assert "bounds with the 3 undecided item(s) all failing / all passing: corrected failure rate" in out
    code, out, _ = run(
        capsys, "judge", "failure-rate", str(rec), "--flagged", "30", "--total", "100", "--format", "json"
    )
    assert document(out, "failure_rate")["undecided_bounds"] is None
    code, out, _ = run(
        capsys,
        "judge",
        "failure-rate",
        str(rec),
        "--flagged",
        "30",
        "--total",
        "100",
        "--undecided",
        "3",
        "--format",
        "json",
    )
    assert document(out, "failure_rate")["undecided_bounds"] == doc["undecided_bounds"]
    code, out, _ = run(capsys, *base, "--labels", "labels.csv", "--judge", "judge-v2", "--experts", EXPERTS)
    assert code == 0
    assert "PPI++ pass rate " in out.splitlines()[-1]
    code, out, _ = run(
        capsys,
        *base,
        "--labels",
        "labels.csv",
        "--judge",
        "judge-v2",
        "--experts",
        EXPERTS,
        "--format",
        "json",
    )
    ppi = document(out, "failure_rate")["ppi"]
    consensus = expert_consensus(table, EXPERTS.split(","))
    pairs = [
        (float(consensus[r.item] == "pass"), float(r.label == "pass"))
        for r in table.rows
        if r.rater == "judge-v2"
        and r.item.criterion == crit
        and consensus.get(r.item) in {"pass", "fail"}
        and r.label in {"pass", "fail"}
    ]
    want = ppi_plus_plus_mean([h for h, _ in pairs], [j for _, j in pairs], [1.0] * 70 + [0.0] * 30)
    assert ppi["lam"] == pytest.approx(want.lam)
    assert ppi["estimate"]["value"] == pytest.approx(want.estimate.value)
    assert ppi["effective_labels"] == pytest.approx(want.effective_labels)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "error: failure-rate: give --flagged and --total, or --results with --criterion to count them"),
        (["--results", "results.jsonl"], "error: --results: name the criterion to count with --criterion"),
        (
            ["--results", "results.jsonl", "--criterion", "nope"],
            "error: results.jsonl: no pass or fail verdict for criterion 'nope'; check --criterion",
        ),
        (
            ["--flagged", "1", "--total", "2", "--labels", "labels.csv"],
            "error: --labels: PPI++ also needs --results, --criterion and --judge",
        ),
        (
            ["--results", "results.jsonl", "--criterion", "x", "--labels", "labels.csv", "--judge", "nobody"],
            "error: labels.csv: --judge 'nobody' has no rows in the label table",
        ),
        (
            [
                "--results",
                "results.jsonl",
                "--criterion",
                "x",
                "--labels",
                "labels.csv",
                "--judge",
                "judge-v2",
                "--experts",
                EXPERTS,
            ],
            "error: labels.csv: no item of criterion 'x' has both a judge verdict and an expert consensus",
        ),
    ],
)
def test_failure_rate_option_errors(work, capsys, extra, message):
    assert calibrate(capsys, "labels.csv", "judge-v2", "--fingerprint", FP_V2)[0] == 0
    (rec,) = records(work)
    grade_results(work / "results.jsonl", ["pass", "fail"], "x")
    code, _, err = run(capsys, "judge", "failure-rate", str(rec), *extra)
    assert code == 2
    assert err.strip() == message


def test_failure_rate_labels_refuse_the_ambiguous_default_experts(work, capsys):
    # the table holds alice, bob, carol and other judges: the old default took them all as experts
    assert calibrate(capsys, "labels.csv", "judge-v2", "--fingerprint", FP_V2)[0] == 0
    (rec,) = records(work)
    grade_results(work / "results.jsonl", ["pass", "fail"], "x")
    args = ["--results", "results.jsonl", "--criterion", "x", "--labels", "labels.csv", "--judge", "judge-v2"]
    code, _, err = run(capsys, "judge", "failure-rate", str(rec), *args)
    assert code == 2
    assert err.startswith("error: labels.csv: --experts not given: the table has ")
    assert "'alice', 'bob', 'carol'" in err
    assert "name the experts with --experts NAME[,NAME...]" in err


def test_failure_rate_with_broken_results_names_the_line(work, capsys):
    assert calibrate(capsys, "labels.csv", "judge-v2", "--fingerprint", FP_V2)[0] == 0
    (rec,) = records(work)
    (work / "results.jsonl").write_text("{not json\n")
    code, _, err = run(
        capsys, "judge", "failure-rate", str(rec), "--results", "results.jsonl", "--criterion", "x"
    )
    assert code == 2
    assert "results.jsonl:1" in err


def test_failure_rate_with_impossible_counts_is_an_input_error(work, capsys):
    assert calibrate(capsys, "labels.csv", "judge-v2", "--fingerprint", FP_V2)[0] == 0
    (rec,) = records(work)
    code, _, err = run(capsys, "judge", "failure-rate", str(rec), "--flagged", "5", "--total", "2")
    assert code == 2
    assert "error: --flagged/--total: flagged must be between" in err


ALT_LABELS = HERE / "data" / "alt_test_labels.csv"
ALT_POLICY = (
    "min_items: null\ntpr_lower_bound: null\ntnr_lower_bound: null\nalpha_lower_bound: null\n"
    "max_abstention: null\nagreement_gap: {max_gap: null}\nalt_test: {required: true}\n"
    "bootstrap: {resamples: 200}\n"
)


def alt_calibrate(capsys, work: Path, judge: str, *args: str) -> tuple[int, str, str]:
    shutil.copy(ALT_LABELS, work / "alt.csv")
    (work / "alt.yaml").write_text(ALT_POLICY)
    return run(
        capsys, "calibrate", "alt.csv", "--judge", judge, "--experts", "e1,e2,e3,e4", "--policy", "alt.yaml",
        *args,
    )  # fmt: skip


def test_calibrate_with_four_experts_runs_the_alt_test_and_records_it(work, capsys):
    code, out, err = alt_calibrate(capsys, work, "judge-good", "--fingerprint", FP_GOOD)
    assert code == 0, err
    assert "## Alternative-annotator test" in out
    assert "Winning rate ω = 1.000, advantage probability ρ = 0.930: the judge **PASSES**" in out
    assert "## The human ceiling as a test" in out
    assert "| alt_test | pass | 0.500 | 1.000 |" in out
    (rec,) = records(work)
    data = json.loads(rec.read_text())
    assert data["alt_test"]["winning_rate"] == 1.0
    assert [a["annotator"] for a in data["alt_test"]["annotators"]] == ["e1", "e2", "e3", "e4"]
    assert data["ceiling"]["metric"] == "cohen_kappa"
    assert [c["passed"] for c in data["gate"]["conditions"] if c["name"] == "alt_test"] == [True]


def test_calibrate_fails_a_random_judge_on_a_required_alt_test(work, capsys):
    code, _, err = alt_calibrate(capsys, work, "judge-random", "--no-record", "--fingerprint", FP_R)
    assert code == 1
    assert "NOT TRUSTED: alt_test: the judge wins against 0 of 4 annotators" in err


def test_annotator_kind_and_epsilon_options(work, capsys):
    code, out, err = alt_calibrate(
        capsys, work, "judge-good", "--annotator-kind", "crowd,e2=expert", "--format", "json"
    )
    assert code == 0, err
    doc = json.loads(out)
    assert [(a["kind"], a["epsilon"]) for a in doc["alt_test"]["annotators"]] == [
        ("crowd", 0.1),
        ("expert", 0.2),
        ("crowd", 0.1),
        ("crowd", 0.1),
    ]
    assert doc["policy"]["alt_test"]["annotator_kinds"] == {"e2": "expert"}
    code, out, _ = alt_calibrate(capsys, work, "judge-good", "--alt-test-epsilon", "0.1", "--format", "json")
    doc = json.loads(out)
    assert doc["alt_test"]["winning_rate"] == 0.5
    assert {a["epsilon"] for a in doc["alt_test"]["annotators"]} == {0.1}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--annotator-kind", "robot"],
            "error: --annotator-kind: 'robot' is not a kind of annotator; use expert, skilled or crowd",
        ),
        (
            ["--annotator-kind", "zed=expert"],
            "error: --annotator-kind: 'zed' is not an expert in the label table (raters: e1, e2, e3, e4, "
            "judge-majority, judge-random)",
        ),
        (["--annotator-kind", ""], "error: --annotator-kind: no kind given; use expert, skilled or crowd"),
        (["--alt-test-epsilon", "1.5"], "error: --alt-test-epsilon must be at least 0 and below 1 (got 1.5)"),
    ],
)
def test_alt_test_option_errors(work, capsys, extra, message):
    code, out, err = alt_calibrate(capsys, work, "judge-good", *extra)
    assert code == 2
    assert out == ""
    assert message in err
