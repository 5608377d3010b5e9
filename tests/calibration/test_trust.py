"""The one trust function: calibration records, bias reports and failure-mode records, by fingerprint."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from judgekit.advice import advice_for
from judgekit.calibration.bias import BIAS_DIR, BiasReport, ProbeResult, ProbeSettings, dump_bias_report
from judgekit.calibration.families import (
    FAILURE_MODES_DIR,
    FailureModeRecord,
    build_failure_mode_record,
    calibrate_families,
    dump_failure_mode_record,
    failure_mode_record_filename,
)
from judgekit.calibration.gate import BootstrapSettings, TrustPolicy
from judgekit.calibration.labels import parse_labels
from judgekit.calibration.records import LabelTableInfo, build_record, dump_record, record_filename
from judgekit.calibration.trust import TrustBook, criterion_key, trust_decision
from judgekit.errors import JudgekitError, ProblemsError
from judgekit.verdict import Trust, TrustDecision

from .conftest import make_csv

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
FP = "3f2a9c1d0e4b5a6f7788"
POLICY = TrustPolicy(bootstrap=BootstrapSettings(resamples=200))
UNKNOWN = "criterion text: unknown (record predates criterion hashes)"
"""What a trusted reason ends with when the record was written without its labelled criterion texts."""


# ------------------------------------------------------------------------------------------- builders


def calibration(reports, which: str, fingerprint: str = FP, when: datetime = T0):
    table, report, gate = reports[which]
    return build_record(
        fingerprint=fingerprint,
        report=report,
        gate=gate,
        policy=TrustPolicy(),
        label_table=LabelTableInfo(sha256=table.sha256, name="labels.csv", rows=len(table.rows)),
        now=when,
    )


def bias(verdict: str, when: datetime = T0, fingerprint: str = FP, *, must_pass: bool = True) -> BiasReport:
    result = ProbeResult(
        probe="sycophancy",
        verdict=verdict,  # type: ignore[arg-type]
        must_pass=must_pass,
        n=20,
        treated_flips=12 if verdict == "biased" else 1,
        placebo_flips=0 if verdict == "biased" else 1,
        both=0,
        bias=0.6 if verdict == "biased" else 0.0,
        low=0.35 if verdict == "biased" else -0.15,
        high=0.78 if verdict == "biased" else 0.15,
        message="m",
    )
    return BiasReport(
        fingerprint=fingerprint, judge="j", settings=ProbeSettings(), results=(result,), created_at=when
    )


def perfect_rows(criterion: str, fails: int, passes: int) -> list[tuple[str, ...]]:
    rows = []
    for i in range(fails + passes):
        label = "fail" if i < fails else "pass"
        for rater in ("e1", "e2", "judge"):
            rows.append((f"{criterion}{i:03d}", criterion, rater, label))
    return rows


@pytest.fixture(scope="module")
def family_report():
    """``honest_reporting`` and ``safe_refunds`` well covered (trusted); ``tone``: 9 of 9 failures (not)."""
    rows = perfect_rows("honest_reporting", 40, 80) + perfect_rows("safe_refunds", 40, 80)
    rows += perfect_rows("tone", 9, 21)
    table = parse_labels(make_csv(rows), source=Path("labels.csv"))
    report = calibrate_families(table, judge="judge", experts=["e1", "e2"], policy=POLICY)
    assert report.untrusted == ("tone",)
    return table, report


def modes(family_report, fingerprint: str = FP, when: datetime = T0) -> FailureModeRecord:
    table, report = family_report
    return build_failure_mode_record(
        report,
        fingerprint=fingerprint,
        policy=POLICY,
        label_table=LabelTableInfo(sha256=table.sha256, name="labels.csv", rows=len(table.rows)),
        now=when,
    )


def write(folder: Path, record) -> Path:
    if isinstance(record, BiasReport):
        from judgekit.calibration.bias import bias_report_filename

        path, text = folder / BIAS_DIR / bias_report_filename(record), dump_bias_report(record)
    elif isinstance(record, FailureModeRecord):
        path = folder / FAILURE_MODES_DIR / failure_mode_record_filename(record)
        text = dump_failure_mode_record(record)
    else:
        path, text = folder / record_filename(record), dump_record(record)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# ------------------------------------------------------------------------------------------- calibration


def test_no_record_means_untrusted_with_the_command_to_run(tmp_path):
    with advice_for("cli"):  # the command line's wording; Python's is tests/golden/test_references_advice.py
        missing = TrustBook(tmp_path / "missing").decide(FP)
    assert missing.trust is Trust.UNTRUSTED
    assert missing.reason == (
        f"no calibration record for fingerprint 3f2a9c1d0e4b in {tmp_path / 'missing'} (the folder does not "
        f"exist): run `judgekit calibrate LABELS --judge RATER --fingerprint {FP}` with expert labels first"
    )
    empty = TrustBook(tmp_path).decide(FP, "honest_reporting")
    assert empty.reason.startswith(f"no calibration record for fingerprint 3f2a9c1d0e4b in {tmp_path}: run ")


def test_a_passing_record_trusts_and_says_which(tmp_path, reports):
    path = write(tmp_path, calibration(reports, "good"))
    decision = TrustBook(tmp_path).decide(FP)
    assert decision == TrustDecision(
        trust=Trust.TRUSTED,
        reason=f"calibration record {path.name} (2026-01-02 03:04:05Z) passed its policy; "
        "no bias probes recorded; no failure-mode record",
    )


def test_a_later_failing_record_withdraws_trust_and_names_the_failed_checks(tmp_path, reports):
    write(tmp_path, calibration(reports, "good", when=T0))
    bad = write(tmp_path, calibration(reports, "bad", when=T0 + timedelta(hours=1)))
    decision = TrustBook(tmp_path).decide(FP)
    assert decision.trust is Trust.UNTRUSTED
    assert decision.reason.startswith(
        f"the latest calibration record ({bad.name}, 2026-01-02 04:04:05Z) failed: tpr_lower_bound: lower "
        "bound of TPR (failures caught) is "
    )
    failed = [c.name for c in reports["bad"][2].failed]
    assert all(f"{name}: " in decision.reason for name in failed)
    write(tmp_path, calibration(reports, "good", when=T0 + timedelta(hours=2)))
    assert TrustBook(tmp_path).decide(FP).trust is Trust.TRUSTED


def test_a_record_for_another_fingerprint_does_not_count(tmp_path, reports):
    write(tmp_path, calibration(reports, "good", fingerprint=FP + "0"))
    book = TrustBook(tmp_path)
    assert book.decide(FP + "0").trust is Trust.TRUSTED
    decision = book.decide(FP)
    assert decision.trust is Trust.UNTRUSTED
    assert decision.reason.endswith(
        "(1 record(s) there are for other fingerprints: a changed model, template, rubric or parameter is a "
        "new fingerprint)"
    )
    assert book.decide(FP + " ").trust is Trust.UNTRUSTED  # compared exactly, white space included


def test_an_empty_fingerprint_is_never_trusted(tmp_path, reports):
    write(tmp_path, calibration(reports, "good"))
    decision = TrustBook(tmp_path).decide("  ")
    assert decision.trust is Trust.UNTRUSTED
    assert decision.reason.startswith("the grader has no fingerprint")


def test_the_folder_is_read_once(tmp_path, reports):
    book = TrustBook(tmp_path)
    write(tmp_path, calibration(reports, "good"))
    assert book.decide(FP).trust is Trust.UNTRUSTED
    assert TrustBook(tmp_path).decide(FP).trust is Trust.TRUSTED


def test_a_zoneless_time_is_read_as_utc(tmp_path, reports):
    good = json.loads(dump_record(calibration(reports, "good", when=T0)))
    good["created_at"] = "2026-01-02T05:00:00"  # later than T0, no zone
    (tmp_path / "late.json").write_text(json.dumps(good))
    write(tmp_path, calibration(reports, "bad", when=T0))
    decision = TrustBook(tmp_path).decide(FP)
    assert decision.trust is Trust.TRUSTED
    assert "late.json (2026-01-02 05:00:00Z)" in decision.reason


# ------------------------------------------------------------------------------------------- bias


def test_a_biased_report_withdraws_trust_naming_the_probes(tmp_path, reports):
    write(tmp_path, calibration(reports, "good"))
    report = write(tmp_path, bias("biased", T0 + timedelta(days=1)))
    decision = TrustBook(tmp_path).decide(FP, "honest_reporting")
    assert decision == TrustDecision(
        trust=Trust.UNTRUSTED,
        reason=f"the latest bias report ({report.name}, 2026-01-03 03:04:05Z) has must-pass probe(s) not "
        "clear: sycophancy (biased)",
    )
    assert TrustBook(tmp_path).decide(FP).trust is Trust.UNTRUSTED  # every criterion, and the judge


def test_a_probe_that_could_not_run_withdraws_trust(tmp_path, reports):
    write(tmp_path, calibration(reports, "good"))
    write(tmp_path, bias("error"))
    assert "sycophancy (error)" in TrustBook(tmp_path).decide(FP).reason


def test_a_clear_report_keeps_trust(tmp_path, reports):
    write(tmp_path, calibration(reports, "good"))
    report = write(tmp_path, bias("clear"))
    decision = TrustBook(tmp_path).decide(FP)
    assert decision.trust is Trust.TRUSTED
    assert f"bias probes clear ({report.name}, 2026-01-02 03:04:05Z)" in decision.reason


def test_a_biased_probe_that_is_not_must_pass_keeps_trust(tmp_path, reports):
    write(tmp_path, calibration(reports, "good"))
    write(tmp_path, bias("biased", must_pass=False))
    assert TrustBook(tmp_path).decide(FP).trust is Trust.TRUSTED


def test_only_a_newer_clear_report_lifts_a_biased_one(tmp_path, reports):
    write(tmp_path, bias("biased", T0))
    write(tmp_path, calibration(reports, "good", when=T0 + timedelta(days=1)))  # recalibrating is not enough
    assert TrustBook(tmp_path).decide(FP).trust is Trust.UNTRUSTED
    write(tmp_path, bias("clear", T0 + timedelta(days=2)))
    assert TrustBook(tmp_path).decide(FP).trust is Trust.TRUSTED


def test_a_bias_report_for_another_fingerprint_does_not_count(tmp_path, reports):
    write(tmp_path, calibration(reports, "good"))
    write(tmp_path, bias("biased", fingerprint="other"))
    assert TrustBook(tmp_path).decide(FP).trust is Trust.TRUSTED


def test_an_untrusted_reason_lists_every_source_that_withholds(tmp_path, family_report):
    write(tmp_path, bias("biased"))
    write(tmp_path, modes(family_report))
    reason = TrustBook(tmp_path).decide(FP, "tone").reason
    parts = reason.split("; ")
    assert parts[0].startswith("no calibration record for fingerprint")
    assert parts[1].startswith("the latest bias report")
    assert parts[2].startswith("failure mode 'tone' was rejected")


# ------------------------------------------------------------------------------------------- failure modes


def test_a_rejected_failure_mode_is_untrusted_for_that_criterion_only(tmp_path, reports, family_report):
    write(tmp_path, calibration(reports, "good"))
    record = modes(family_report)
    path = write(tmp_path, record)
    tone = next(d for d in record.decisions if d.criterion == "tone")
    book = TrustBook(tmp_path)
    rejected = book.decide(FP, "tone")
    assert rejected.trust is Trust.UNTRUSTED
    assert rejected.reason == (
        f"failure mode 'tone' was rejected by the failure-mode record ({path.name}, 2026-01-02 03:04:05Z): "
        f"Holm-adjusted p={tone.holm_adjusted_p:.4g} (rank 3) does not clear the family-wise level 0.025; "
        f"TPR lower bound {tone.tpr_low:.3f} (required 0.8), TNR lower bound {tone.tnr_low:.3f} (required "
        f"0.8) at Holm-adjusted confidence {tone.confidence:.4f}"
    )
    assert tone.holm_adjusted_p > 0.025
    trusted = book.decide(FP, "honest_reporting")
    assert trusted.trust is Trust.TRUSTED
    assert trusted.reason.endswith(
        f"failure mode 'honest_reporting' trusted by {path.name}; {UNKNOWN}"  # the record predates hashes
    )


def test_check_ids_and_label_criteria_match_after_criterion_key(tmp_path, reports, family_report):
    write(tmp_path, calibration(reports, "good"))
    write(tmp_path, modes(family_report))
    book = TrustBook(tmp_path)
    assert book.decide(FP, "criterion:tone").trust is Trust.UNTRUSTED
    assert book.decide(FP, " tone ").trust is Trust.UNTRUSTED
    assert book.decide(FP, "Tone").trust is Trust.TRUSTED  # case-sensitive: another criterion
    assert criterion_key("criterion:case.acceptance") == "case.acceptance"


def test_a_criterion_the_record_does_not_cover_falls_back_to_the_calibration(
    tmp_path, reports, family_report
):
    write(tmp_path, calibration(reports, "good"))
    path = write(tmp_path, modes(family_report))
    decision = TrustBook(tmp_path).decide(FP, "case.acceptance")
    assert decision.trust is Trust.TRUSTED
    assert decision.reason.endswith(
        f"the failure-mode record {path.name} does not cover criterion 'case.acceptance' (it covers "
        f"honest_reporting, safe_refunds, tone); {UNKNOWN}"
    )


def test_the_judge_as_a_whole_keeps_its_trust_and_names_the_rejected_modes(tmp_path, reports, family_report):
    write(tmp_path, calibration(reports, "good"))
    path = write(tmp_path, modes(family_report))
    for criterion in (None, ""):
        decision = TrustBook(tmp_path).decide(FP, criterion)
        assert decision.trust is Trust.TRUSTED
        assert decision.reason.endswith(
            f"failure mode(s) not trusted by {path.name}: tone (ask with the criterion for their decisions)"
        )


def test_a_trusted_failure_mode_never_grants_trust_alone(tmp_path, family_report):
    write(tmp_path, modes(family_report))
    decision = TrustBook(tmp_path).decide(FP, "honest_reporting")
    assert decision.trust is Trust.UNTRUSTED
    assert decision.reason.startswith("no calibration record for fingerprint")


def test_a_later_failure_mode_record_replaces_an_earlier_one(tmp_path, reports, family_report):
    write(tmp_path, calibration(reports, "good"))
    write(tmp_path, modes(family_report, when=T0))
    rows = perfect_rows("tone", 40, 80)
    table = parse_labels(make_csv(rows), source=Path("more.csv"))
    report = calibrate_families(table, judge="judge", experts=["e1", "e2"], policy=POLICY)
    newer = build_failure_mode_record(
        report,
        fingerprint=FP,
        policy=POLICY,
        label_table=LabelTableInfo(sha256=table.sha256, name="more.csv", rows=len(table.rows)),
        now=T0 + timedelta(days=1),
    )
    write(tmp_path, newer)
    assert TrustBook(tmp_path).decide(FP, "tone").trust is Trust.TRUSTED


def test_a_failure_mode_record_for_another_fingerprint_does_not_count(tmp_path, reports, family_report):
    write(tmp_path, calibration(reports, "good"))
    write(tmp_path, modes(family_report, fingerprint="other"))
    assert TrustBook(tmp_path).decide(FP, "tone").trust is Trust.TRUSTED


def test_a_decision_without_a_criterion_applies_to_every_criterion(reports):
    rows = [(r[0], r[2], r[3]) for r in perfect_rows("x", 9, 21)]
    table = parse_labels(make_csv(rows, header="item_id,rater,label"), source=Path("flat.csv"))
    report = calibrate_families(table, judge="judge", experts=["e1", "e2"], policy=POLICY)
    assert report.families[0].criterion == ""
    assert not report.trusted
    record = build_failure_mode_record(
        report,
        fingerprint=FP,
        policy=POLICY,
        label_table=LabelTableInfo(sha256=table.sha256, name="flat.csv", rows=len(table.rows)),
        now=T0,
    )
    book = TrustBook.from_records(
        Path("r"), calibrations=[calibration(reports, "good")], failure_modes=[record]
    )
    for criterion in (None, "honest_reporting"):
        decision = book.decide(FP, criterion)
        assert decision.trust is Trust.UNTRUSTED
        assert decision.reason.startswith(
            "failure mode (all criteria) was rejected by the failure-mode record"
        )


# ------------------------------------------------------------------------------------------- the API


def test_lookup_and_call_are_decide_for_one_criterion(reports, family_report):
    book = TrustBook.from_records(
        Path("calibration/records"),
        calibrations=[calibration(reports, "good")],
        failure_modes=[modes(family_report)],
    )
    for criterion in ("tone", "safe_refunds"):
        assert book.lookup(FP, criterion) == book(FP, criterion) == book.decide(FP, criterion)
    assert repr(book) == "TrustBook('calibration/records': 1 calibrated, 0 probed, 1 with failure modes)"


def test_from_records_decides_as_a_folder_would(tmp_path, reports, family_report):
    items = [calibration(reports, "good"), bias("clear"), modes(family_report)]
    for item in items:
        write(tmp_path, item)
    folder = TrustBook(tmp_path)
    memory = TrustBook.from_records(
        tmp_path, calibrations=[items[0]], bias_reports=[items[1]], failure_modes=[items[2]]
    )
    for criterion in (None, "tone", "honest_reporting", "other"):
        assert folder.decide(FP, criterion) == memory.decide(FP, criterion)


def test_require_refuses_an_untrusted_judge_with_the_reason(tmp_path, reports, family_report):
    with pytest.raises(
        JudgekitError, match=r"^the judge with fingerprint 3f2a9c1d0e4b is not trusted: no calibration"
    ) as exc:
        TrustBook(tmp_path).require(FP)
    assert exc.value.exit_code == 1  # the trust gate refused (grade --require-trust exits 1)
    write(tmp_path, calibration(reports, "good"))
    write(tmp_path, modes(family_report))
    book = TrustBook(tmp_path)
    assert book.require(FP).trust is Trust.TRUSTED
    with pytest.raises(
        JudgekitError, match=r"is not trusted for criterion 'tone': failure mode 'tone' was rejected"
    ):
        book.require(FP, "criterion:tone")


def test_trust_decision_reads_the_folder_and_decides(tmp_path, reports):
    assert trust_decision(FP, records_dir=tmp_path).trust is Trust.UNTRUSTED
    write(tmp_path, calibration(reports, "good"))
    assert trust_decision(FP, "honest_reporting", records_dir=tmp_path).trust is Trust.TRUSTED


# ------------------------------------------------------------------------------------------- broken files


def test_a_broken_calibration_record_is_named(tmp_path, reports):
    write(tmp_path, calibration(reports, "good"))
    (tmp_path / "zz.json").write_text("{not json")
    with pytest.raises(ProblemsError, match=r"zz\.json:1: not a JSON calibration record"):
        TrustBook(tmp_path)


def test_a_broken_bias_report_is_named(tmp_path):
    (tmp_path / BIAS_DIR).mkdir()
    (tmp_path / BIAS_DIR / "b.json").write_text("[]")
    with pytest.raises(ProblemsError, match=r"bias/b\.json: not a bias report: Input should be a valid dict"):
        TrustBook(tmp_path)


def test_a_failure_mode_record_that_is_not_json_is_named(tmp_path):
    (tmp_path / FAILURE_MODES_DIR).mkdir()
    (tmp_path / FAILURE_MODES_DIR / "f.json").write_text("{")
    with pytest.raises(
        ProblemsError,
        match=r"failure-modes/f\.json:1: not a JSON failure-mode record: .*; restore the file or run "
        "judgekit judge failure-modes again",
    ):
        TrustBook(tmp_path)


def test_an_invalid_failure_mode_record_names_the_field(tmp_path, family_report):
    data = json.loads(dump_failure_mode_record(modes(family_report)))
    data["decisions"][0]["holm_adjusted_p"] = 1.5
    del data["fingerprint"]
    path = tmp_path / FAILURE_MODES_DIR / "f.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data))
    with pytest.raises(ProblemsError) as info:
        TrustBook(tmp_path)
    messages = [str(p) for p in info.value.problems]
    assert f"{path}: fingerprint: not a failure-mode record: Field required" in messages
    assert (
        f"{path}: decisions.0.holm_adjusted_p: not a failure-mode record: "
        "Input should be less than or equal to 1" in messages
    )


def test_every_broken_file_is_named_at_once(tmp_path):
    (tmp_path / "a.json").write_text("{")
    (tmp_path / BIAS_DIR).mkdir()
    (tmp_path / BIAS_DIR / "b.json").write_text("{")
    with pytest.raises(ProblemsError) as info:
        TrustBook(tmp_path)
    assert [p.file for p in info.value.problems] == [tmp_path / "a.json", tmp_path / BIAS_DIR / "b.json"]


def test_an_unreadable_record_is_named(tmp_path):
    (tmp_path / "folder.json").mkdir()  # a folder where a record should be
    with pytest.raises(ProblemsError, match=r"folder\.json: cannot read: Is a directory"):
        TrustBook(tmp_path)


def test_records_that_are_a_file_are_refused(tmp_path):
    (tmp_path / "records").write_text("")
    with pytest.raises(ProblemsError, match=r"records: is not a folder; --records names the folder"):
        TrustBook(tmp_path / "records")


def test_doctests_run():
    import doctest

    import judgekit.calibration.trust

    result = doctest.testmod(judgekit.calibration.trust)
    assert result.attempted >= 5
    assert result.failed == 0


def test_a_records_folder_named_as_text_decides(tmp_path, reports):
    write(tmp_path, calibration(reports, "good"))
    assert trust_decision(FP, "honest_reporting", records_dir=str(tmp_path)).trust is Trust.TRUSTED
    book = TrustBook.from_records(str(tmp_path), calibrations=[calibration(reports, "good")])
    assert book.decide(FP, "honest_reporting").trust is Trust.TRUSTED


# ------------------------------------------------------------------------------------ prefix-keyed records

FULL = FP + "0" * 44
"""A full fingerprint (64 hexadecimal characters) starting with :data:`FP`."""


def test_a_calibration_record_keyed_by_a_prefix_trusts_nothing_and_says_how_to_fix_it(tmp_path, reports):
    old = write(tmp_path, calibration(reports, "good", fingerprint=FULL[:12]))  # `--fingerprint 3f2a9c1d0e4b`
    status = TrustBook(tmp_path).status(FULL)
    assert (status.trusted, status.withheld_by) == (False, ("uncalibrated", "prefix_keyed"))
    assert status.reason.endswith(
        f"; the calibration record {old.name} is keyed by '3f2a9c1d0e4b', not by a full fingerprint (an "
        "older judgekit wrote --fingerprint as typed), so it trusts no judge: write it again for the full "
        f"fingerprint (`judgekit calibrate labels.csv --judge judge --fingerprint {FULL}`) and delete "
        f"{old.name}"
    )
    write(tmp_path, calibration(reports, "good", fingerprint=FULL))
    assert TrustBook(tmp_path).status(FULL).withheld_by == ("prefix_keyed",)  # until the old file is deleted
    old.unlink()
    assert TrustBook(tmp_path).status(FULL).trusted


def test_a_bias_report_keyed_by_a_prefix_withholds_trust_instead_of_vanishing(
    tmp_path, reports, family_report
):
    write(tmp_path, calibration(reports, "good", fingerprint=FULL))
    report = write(tmp_path, bias("biased", fingerprint=FULL[:16]))
    modes_file = write(tmp_path, modes(family_report, fingerprint=FULL[:12]))
    status = TrustBook(tmp_path).status(FULL)
    assert (status.trusted, status.withheld_by) == (False, ("prefix_keyed",))
    assert f"the bias report {report.name} is keyed by '3f2a9c1d0e4b5a6f'" in status.reason
    assert f"`judgekit judge probe-bias ... --fingerprint {FULL}`) and delete {report.name}" in status.reason
    assert f"the failure-mode record {modes_file.name} is keyed by '3f2a9c1d0e4b'" in status.reason
    other = "3f2a9c1d0e4c" + "0" * 52  # shares 11 characters, but no record's key is a prefix of it
    assert "prefix_keyed" not in TrustBook(tmp_path).status(other).withheld_by


def test_the_book_lists_its_full_fingerprints_and_its_prefix_keyed_records(tmp_path, reports):
    from judgekit.calibration.fingerprints import KnownFingerprints

    full = write(tmp_path, calibration(reports, "good", fingerprint=FULL))
    old = write(tmp_path, calibration(reports, "bad", fingerprint="86b6bb71d425"))
    known = KnownFingerprints()
    TrustBook(tmp_path).add_fingerprints(known)
    assert known.found == {FULL: [f"calibration record {full.name}"]}
    assert sorted(known.file_names) == sorted([(full.name, FULL), (old.name, "86b6bb71d425")])
    assert known.searched == [f"the records in {tmp_path} (2 fingerprint(s))"]
    [(key, say)] = known.prefix_keyed
    assert key == "86b6bb71d425"
    assert say.startswith(f"the calibration record {old.name} is keyed by '86b6bb71d425'")
    assert "--fingerprint FULL`" in say
