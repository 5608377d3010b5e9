"""The calibration service: ``calibrate`` (a label table in; report, gate, record out), ``trust_status``."""

from __future__ import annotations

import json
import math
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from judgekit.api.calibration import Calibration, CalibrationOptions, calibrate, trust_status
from judgekit.calibration.bias import BiasReport, ProbeResult, ProbeSettings
from judgekit.calibration.gate import BootstrapSettings, TrustPolicy
from judgekit.calibration.labels import VERDICT_SCALE, LabelTable, parse_labels, parse_scale_option
from judgekit.calibration.records import load_record, record_filename
from judgekit.calibration.trust import TrustBook
from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.verdict import Trust

DATA = Path(__file__).parents[1] / "calibration" / "data"
POLICY = TrustPolicy(bootstrap=BootstrapSettings(resamples=200))
SMALL_POLICY = "min_items: 40\nbootstrap:\n  resamples: 200\n"  # the command tests' policy
EXPERTS = ("alice", "bob", "carol")
#: Full judge fingerprints (64 hexadecimal characters), as judgekit writes them.
FP_V1, FP_V2, FP_V3 = "b1" * 32, "b2" * 32, "b3" * 32
FP = {"judge-v1": FP_V1, "judge-v2": FP_V2, "judge-v3": FP_V3}


def table(
    rows: list[str], *, header: str = "item_id,rater,label", scale_text: str | None = None
) -> LabelTable:
    scale = VERDICT_SCALE
    if scale_text is not None:
        scale = parse_scale_option(scale_text, level="nominal", positive="1", abstain=None)
    return parse_labels("\n".join([header, *rows]) + "\n", source="labels.csv", scale=scale)


def options(tmp_path: Path, judge: str = "judge", **more: object) -> CalibrationOptions:
    return CalibrationOptions(judge=judge, policy=POLICY, records=tmp_path, **more)  # type: ignore[arg-type]


def wilson(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson's (1927) score interval, written out from the formula."""
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


# ------------------------------------------------------------------------------------ literature values


def test_kappa_and_rates_of_artstein_and_poesio_table_1(tmp_path):
    # Artstein & Poesio (2008) Table 1, contingency [[20, 20], [10, 50]]: kappa 0.348, agreement 0.7.
    expert = ["fail"] * 40 + ["pass"] * 60
    judge = ["fail"] * 20 + ["pass"] * 20 + ["fail"] * 10 + ["pass"] * 50
    rows = [f"i{i:03d},expert,{label}" for i, label in enumerate(expert)]
    rows += [f"i{i:03d},judge,{label}" for i, label in enumerate(judge)]
    result = calibrate(table(rows), options=options(tmp_path))
    pair = result.judge_vs_consensus
    assert pair.kappa["none"].value == pytest.approx(0.348, abs=5e-4)
    assert pair.percent_agreement.value == pytest.approx(0.7)
    assert result.tpr is not None
    assert result.tnr is not None
    assert (result.tpr.value, result.tpr.n) == (0.5, 40)  # 20 of the 40 failures caught
    assert result.tpr.interval is not None
    assert (result.tpr.interval.low, result.tpr.interval.high) == pytest.approx(wilson(20, 40))
    assert (result.tnr.value, result.tnr.n) == (pytest.approx(50 / 60), 60)
    assert result.tnr.interval is not None
    assert (result.tnr.interval.low, result.tnr.interval.high) == pytest.approx(wilson(50, 60))
    assert not result.trusted  # TPR 0.5 is far below the default 0.8
    assert [c.name for c in result.failed_conditions][:2] == ["tpr_lower_bound", "tnr_lower_bound"]
    assert result.summary.startswith("judge 'judge': NOT TRUSTED: tpr_lower_bound: lower bound of TPR")


KRIPP_2011 = [  # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 observers x 12 units
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


@pytest.mark.parametrize(("level", "expected"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_the_experts_agreement_reproduces_krippendorff_2011(tmp_path, level, expected):
    rows = ["item_id,rater,label"]
    for observer, values in zip("ABCD", KRIPP_2011, strict=True):
        rows += [f"u{unit:02d},{observer},{v}" for unit, v in enumerate(values) if v is not None]
    rows += [f"u{unit:02d},judge,3" for unit in range(12)]
    (tmp_path / "k.csv").write_text("\n".join(rows) + "\n")
    scale = parse_scale_option("1,2,3,4,5", level=level, positive="1", abstain=None)
    result = calibrate(
        tmp_path / "k.csv", options=options(tmp_path, scale=scale, experts=list("ABCD"))
    )  # the file
    group = result.expert_agreement
    assert group.raters == ("A", "B", "C", "D")
    assert group.alpha[level].value == pytest.approx(expected, abs=5e-4)
    assert group.n == 11  # the 12th unit has a single expert value and is not pairable
    assert result.result.label_table.name == "k.csv"


def test_calibrate_refuses_the_ambiguous_default_experts(tmp_path):
    rows = [f"i{i},{rater},pass" for i in range(3) for rater in ("alice", "gpt-4o", "judge")]
    with pytest.raises(JudgekitError, match=r"--experts not given: the table has 2 raters besides 'judge'"):
        calibrate(table(rows), options=options(tmp_path))
    result = calibrate(table(rows), options=options(tmp_path, experts=["alice"]))
    assert result.report.experts == ("alice",)


def test_the_experts_fleiss_kappa_reproduces_the_wikipedia_example(tmp_path):
    # https://en.wikipedia.org/wiki/Fleiss%27_kappa worked example: 10 subjects, 14 raters, 5 categories.
    counts = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    rows = []
    for subject, row in enumerate(counts):
        labels = [category + 1 for category, n in enumerate(row) for _ in range(n)]
        rows += [f"s{subject},e{rater:02d},{label}" for rater, label in enumerate(labels)]
        rows.append(f"s{subject},judge,3")
    experts = [f"e{rater:02d}" for rater in range(14)]
    result = calibrate(table(rows, scale_text="1,2,3,4,5"), options=options(tmp_path, experts=experts))
    assert result.expert_agreement.fleiss_kappa.value == pytest.approx(0.210, abs=5e-4)
    assert len(result.report.expert_pairs) == 14 * 13 // 2


# ------------------------------------------------------------------------------------ the command calls it


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(DATA / "labels_small.csv", tmp_path / "labels.csv")
    (tmp_path / "policy.yaml").write_text(SMALL_POLICY)
    return tmp_path


def command(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["calibrate", "labels.csv", "--experts", ",".join(EXPERTS), "--policy", "policy.yaml", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_command_and_the_api_give_the_same_record_and_report(work, capsys):
    code, out, err = command(capsys, "--judge", "judge-v2", "--fingerprint", FP_V2, "--format", "json")
    assert code == 0, err
    (written,) = (work / "calibration" / "records").glob("*.json")
    by_command = load_record(written.read_bytes())
    result = calibrate(
        "labels.csv",
        options=CalibrationOptions(
            judge="judge-v2", experts=EXPERTS, policy="policy.yaml", fingerprint=FP_V2
        ),
    )
    assert result.record is not None
    assert result.record.model_dump(exclude={"created_at"}) == by_command.model_dump(exclude={"created_at"})
    assert result.render("json") == out  # the command prints what the API renders
    assert err.splitlines()[-2:] == [f"record: {written.relative_to(work)}", result.summary]
    assert result.records_dir == Path("calibration/records")  # the default folder, as the command's


def test_the_command_and_the_api_give_the_same_untrusted_verdict(work, capsys):
    code, out, err = command(capsys, "--judge", "judge-v1", "--no-record")
    result = calibrate(
        "labels.csv", options=CalibrationOptions(judge="judge-v1", experts=EXPERTS, policy="policy.yaml")
    )
    assert code == 1
    assert out == result.render("md")
    assert err.splitlines()[-1] == result.summary
    assert result.summary.startswith("judge 'judge-v1': NOT TRUSTED: ")
    assert result.record is None  # no fingerprint: nothing to record
    assert result.fingerprint is None


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Calibration]:
    """judge-v1 (fails the policy) and judge-v2 (passes) on the command tests' label table."""
    labels = parse_labels((DATA / "labels_small.csv").read_bytes(), source=DATA / "labels_small.csv")
    policy = TrustPolicy(min_items=40, bootstrap=BootstrapSettings(resamples=200))
    return {
        judge: calibrate(
            labels,
            options=CalibrationOptions(
                judge=judge,
                experts=EXPERTS,
                policy=policy,
                fingerprint=FP[judge],
                records=tmp_path_factory.mktemp("records"),
            ),
        )
        for judge in ("judge-v1", "judge-v2")
    }


def test_records_and_reports_are_written_where_asked(small, tmp_path):
    old, new = small["judge-v1"], small["judge-v2"]
    assert (old.trusted, new.trusted) == (False, True)
    assert old.record is not None
    assert new.record is not None
    path = new.write_record(tmp_path / "records")
    assert path == tmp_path / "records" / record_filename(new.record)
    assert load_record(path.read_bytes()) == new.record
    assert new.write_change(tmp_path / "out") is None  # no baseline, no grader-change report
    changed = calibrate(
        DATA / "labels_small.csv",
        options=CalibrationOptions(
            judge="judge-v2",
            experts=EXPERTS,
            policy=new.result.policy,
            fingerprint=FP_V2,
            baseline=old.record,
            records=tmp_path,
        ),
    )
    report = changed.write_report(tmp_path / "out", "json")
    change = changed.write_change(tmp_path / "out", "md")
    assert report == tmp_path / "out" / "calibration.json"
    assert json.loads(report.read_text())["comparison"]["old_fingerprint"] == FP_V1
    assert change == tmp_path / "out" / "grader-change.md"
    assert change.read_text().startswith(f"# Grader change: `{FP_V1}` → `{FP_V2}`")


def test_a_note_is_given_as_soon_as_it_is_known_even_before_an_error(tmp_path):
    rows = [
        f"i{i},{rater},pass,{'random' if i else 'discovery'}" for i in range(4) for rater in ("e1", "judge")
    ]
    labels = table(rows, header="item_id,rater,label,provenance")
    notes: list[str] = []
    with pytest.raises(JudgekitError, match="--experts: unknown rater"):
        calibrate(labels, options=options(tmp_path, experts=["zed"]), on_note=notes.append)
    assert notes == [
        "rates and gates use the 3 random-sample items; 1 hand-picked (discovery) items are left out"
    ]


# ------------------------------------------------------------------------------------ one test per message


def test_an_unknown_report_format_is_refused(small):
    with pytest.raises(JudgekitError) as exc:
        small["judge-v2"].render("pdf")
    assert exc.value.message == "format must be json, md or html (got 'pdf')"
    assert exc.value.exit_code == 2


def test_a_scale_that_contradicts_a_table_already_read_is_refused(tmp_path):
    labels = table(["a,e1,pass", "a,judge,pass"])
    scale = parse_scale_option("1,2,3", level="ordinal", positive="1", abstain=None)
    with pytest.raises(JudgekitError) as exc:
        calibrate(labels, options=options(tmp_path, scale=scale))
    assert exc.value.message == (
        "scale: the label table was already read with another scale; pass the scale to parse_labels, or "
        "pass the table's file to calibrate"
    )


def test_writing_a_record_without_a_fingerprint_is_refused(tmp_path):
    rows = [f"i{i},{rater},{'pass' if i % 3 else 'fail'}" for i in range(6) for rater in ("e1", "judge")]
    result = calibrate(table(rows), options=options(tmp_path))
    assert result.record is None
    with pytest.raises(JudgekitError) as exc:
        result.write_record(tmp_path)
    assert exc.value.message.startswith("no calibration record to write: the judge has no fingerprint; ")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(JudgekitError, match="the grader fingerprint is empty"):
        result.result.to_record()


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (
            {"annotator_kind": "robot"},
            "--annotator-kind: 'robot' is not a kind of annotator; use expert, skilled or crowd",
        ),
        (
            {"annotator_kinds": {"judge": "crowd"}},
            "--annotator-kind: 'judge' is not an expert in the label table (raters: e1)",
        ),
        ({"alt_test_epsilon": -0.1}, "--alt-test-epsilon must be at least 0 and below 1 (got -0.1)"),
        ({"experts": [" "]}, "--experts: no expert named"),
    ],
)
def test_python_callers_get_the_commands_checks(tmp_path, given, message):
    with pytest.raises(JudgekitError) as exc:
        calibrate(table(["a,e1,pass", "a,judge,pass"]), options=options(tmp_path, **given))
    assert exc.value.message == message


# ------------------------------------------------------------------------------------ trust_status


def biased(fingerprint: str) -> BiasReport:
    result = ProbeResult(
        probe="sycophancy",
        verdict="biased",
        must_pass=True,
        n=20,
        treated_flips=12,
        placebo_flips=0,
        both=0,
        bias=0.6,
        low=0.35,
        high=0.78,
        message="m",
    )
    return BiasReport(
        fingerprint=fingerprint,
        judge="j",
        settings=ProbeSettings(),
        results=(result,),
        created_at=datetime(2026, 1, 2, tzinfo=UTC),
    )


def book(small, *, bias: tuple[BiasReport, ...] = ()) -> TrustBook:
    records = [c.record for c in small.values() if c.record is not None]
    return TrustBook.from_records("recs", calibrations=records, bias_reports=bias)


def test_a_passing_record_trusts_and_names_itself(small):
    status = trust_status(FP_V2, book(small))
    record = small["judge-v2"].record
    assert record is not None
    assert (status.trusted, status.trust, status.withheld_by) == (True, Trust.TRUSTED, ())
    assert (status.record, status.record_file) == (record, record_filename(record))
    assert status.gate == record.gate
    assert status.failed_conditions == ()
    assert status.reason.startswith(f"calibration record {record_filename(record)} (")


def test_a_failed_record_names_its_failed_conditions(small):
    status = trust_status(FP_V1, book(small), criterion="goal")
    record = small["judge-v1"].record
    assert record is not None
    assert status.withheld_by == ("failed_gate",)
    assert status.failed_conditions == record.gate.failed
    assert [c.name for c in status.failed_conditions] == [c.name for c in small["judge-v1"].failed_conditions]
    assert status.reason.startswith(f"the latest calibration record ({record_filename(record)}, ")
    assert status.criterion == "goal"


def test_a_changed_grader_is_uncalibrated_and_the_other_records_are_counted(small):
    status = trust_status(FP_V3, book(small))
    assert (status.trusted, status.withheld_by, status.record) == (False, ("uncalibrated",), None)
    assert status.other_fingerprints == 2
    assert status.reason.startswith(f"no calibration record for fingerprint {FP_V3[:12]} in recs: ")
    assert "2 record(s) there are for other fingerprints" in status.reason


def test_a_biased_report_withdraws_trust_from_a_passing_record(small):
    status = trust_status(FP_V2, book(small, bias=(biased(FP_V2),)))
    assert (status.trusted, status.withheld_by) == (False, ("bias",))
    assert status.bias_report is not None
    assert status.bias_report_file is not None
    assert status.record == small["judge-v2"].record  # the record passed; the bias report withdrew it


def test_a_grader_without_a_fingerprint_is_never_trusted(small):
    status = book(small).status(" ")
    assert (status.trusted, status.withheld_by) == (False, ("no_fingerprint",))
    with pytest.raises(JudgekitError, match="fingerprint: the fingerprint is empty"):
        trust_status(" ", book(small))  # asked by a person: a blank fingerprint is a mistake


@pytest.mark.parametrize("fingerprint", [FP_V1, FP_V2, FP_V3])
def test_the_status_carries_the_one_trust_decision(small, fingerprint):
    trust = book(small)
    assert trust_status(fingerprint, trust).decision == trust.decide(fingerprint)


def test_the_records_folder_in_force_is_read(small, tmp_path, monkeypatch):
    record = small["judge-v2"].write_record(tmp_path)
    monkeypatch.setenv("JUDGEKIT_RECORDS", str(tmp_path))
    status = trust_status(FP_V2)
    assert (status.trusted, status.records_dir, status.record_file) == (True, tmp_path, record.name)
    assert trust_status(FP_V2, str(tmp_path)).trusted
    with pytest.raises(JudgekitError, match="no such folder"):
        trust_status(FP_V2, tmp_path / "missing")


def test_a_prefix_names_the_one_full_fingerprint_through_the_python_api(small, tmp_path, monkeypatch):
    import judgekit

    (tmp_path / ".git").mkdir()  # a project without configuration: no configured judge
    monkeypatch.chdir(tmp_path)
    status = judgekit.trust_status(FP_V2[:12], book(small))
    assert (status.fingerprint, status.trusted) == (FP_V2, True)
    small["judge-v1"].write_record(tmp_path / "recs")
    again = calibrate(
        DATA / "labels_small.csv",
        options=CalibrationOptions(
            judge="judge-v1", experts=EXPERTS, policy=POLICY, fingerprint=FP_V1[:8], records=tmp_path / "recs"
        ),
    )
    assert again.record is not None
    assert again.record.fingerprint == FP_V1  # the record is keyed by the full fingerprint
    with pytest.raises(JudgekitError, match=r"^fingerprint: no known fingerprint starts with b3b3b3b3b3b3 "):
        judgekit.trust_status(FP_V3[:12], book(small))


def test_the_correlations_of_a_scored_scale_reach_python_callers(tmp_path):
    # Krippendorff's 2011 observers on an interval scale: each expert pair's rho, tau-b and r are scipy's
    # on the units both scored; a judge that says 3 everywhere has no variance to correlate.
    from scipy import stats

    rows = ["item_id,rater,label"]
    for observer, values in zip("ABCD", KRIPP_2011, strict=True):
        rows += [f"u{unit:02d},{observer},{v}" for unit, v in enumerate(values) if v is not None]
    rows += [f"u{unit:02d},judge,3" for unit in range(12)]
    (tmp_path / "k.csv").write_text("\n".join(rows) + "\n")
    scale = parse_scale_option("1,2,3,4,5", level="interval", positive="1", abstain=None)
    result = calibrate(tmp_path / "k.csv", options=options(tmp_path, scale=scale, experts=list("ABCD")))
    scored = result.correlations
    assert scored is not None
    a_b = next(p for p in scored.expert_pairs if (p.a, p.b) == ("A", "B"))
    both = [
        (x, y) for x, y in zip(KRIPP_2011[0], KRIPP_2011[1], strict=True) if x is not None and y is not None
    ]
    x, y = zip(*both, strict=True)
    assert a_b.n == len(both) == 9
    assert a_b.spearman.value == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert a_b.kendall_tau_b.value == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
    assert a_b.pearson.value == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert scored.judge_vs_consensus.spearman.value is None
    assert "judge gave one value on all 12 items" in (
        scored.judge_vs_consensus.spearman.undefined_reason or ""
    )
