"""Drift canaries: the seeded choice, the series' counts, and the trust function's canary source."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.calibration.canary import (
    CANARY_HISTORY_DIR,
    CanaryCheck,
    CanaryCost,
    CanaryItem,
    CanarySet,
    calibration_flip_rate,
    canary_check_filename,
    choose_items,
    evaluate_check,
    load_canary_check,
    reply_of,
)
from judgekit.calibration.records import dump_record, record_filename
from judgekit.calibration.trust import TrustBook
from judgekit.errors import JudgekitError, ProblemsError
from judgekit.judges.rubric import Criterion
from judgekit.verdict import Trust

from .test_trust import FP, T0, calibration

CRITERION = Criterion(id="polite", text="The agent thanks the customer.")


def item(n: int, recorded: str = "pass", consensus: str | None = "pass") -> CanaryItem:
    return CanaryItem(
        item_id=f"refund#{n}",
        case_id="refund",
        criterion=CRITERION,
        consensus=consensus,
        recorded=recorded,
        recorded_samples=(recorded,),
        transcript_text=f"transcript {n}",
        case_facts="case id: refund",
    )


def canary_set(size: int = 40, record_file: str = "r.json") -> CanarySet:
    return CanarySet(
        fingerprint=FP,
        record_file=record_file,
        record_sha256="0" * 64,
        created_at=T0,
        tolerance=0.02,
        items=tuple(item(n, "pass" if n % 2 else "fail", "pass" if n % 2 else "fail") for n in range(size)),
    )


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 60), seed=st.integers(0, 10**6), check=st.integers(1, 50))
def test_the_choice_is_seeded_distinct_and_bounded_by_the_set(n: int, seed: int, check: int) -> None:
    canaries = canary_set()
    chosen = choose_items(canaries, n, seed=seed, check=check)
    assert chosen == choose_items(canaries, n, seed=seed, check=check)
    assert len({i.key for i in chosen}) == len(chosen) == min(n, len(canaries.items))


def test_each_check_of_a_series_chooses_anew() -> None:
    canaries = canary_set()
    picks = {tuple(i.key for i in choose_items(canaries, 5, seed=0, check=c)) for c in range(1, 6)}
    assert len(picks) == 5


def test_a_choice_of_no_item_is_refused() -> None:
    with pytest.raises(JudgekitError, match=r"^--canary must be at least 1 \(got 0\)$") as raised:
        choose_items(canary_set(), 0, seed=0, check=1)
    assert raised.value.exit_code == 2


def test_the_calibration_flip_rate_needs_several_samples() -> None:
    assert calibration_flip_rate([item(1)]) is None
    several = item(2).model_copy(update={"recorded_samples": ("pass", "fail", "pass", "pass")})
    assert calibration_flip_rate([item(1), several]) == 0.25


def _check(
    canaries: CanarySet, previous: CanaryCheck | None, flipped: int, size: int, when: datetime
) -> CanaryCheck:
    chosen = choose_items(canaries, size, seed=0, check=(previous.check if previous else 0) + 1)
    replies = [
        reply_of(i, ("fail" if i.recorded == "pass" else "pass") if k < flipped else i.recorded, None)
        for k, i in enumerate(chosen)
    ]
    return evaluate_check(canaries, previous, replies, seed=0, cost=CanaryCost(calls=size), now=when)


def test_the_series_counts_add_up_and_an_alarm_stands() -> None:
    canaries = canary_set(200)
    first = _check(canaries, None, 0, 10, T0)
    assert (first.check, first.rejudged, first.flips, first.detected, first.first_detected) == (
        1,
        10,
        0,
        False,
        None,
    )
    second = _check(canaries, first, 8, 10, T0 + timedelta(hours=1))
    assert (second.check, second.rejudged, second.flips) == (2, 20, 8)
    assert second.right_before == 20  # every recorded verdict agreed with the consensus
    assert second.new_errors == 8
    assert second.detected
    assert second.test.flips.e_value >= 200
    name = canary_check_filename(FP, second.created_at, 2)
    assert second.first_detected == name
    assert len(second.flipped_items) == 8
    third = _check(canaries, second, 0, 150, T0 + timedelta(hours=2))
    assert third.test.flips.e_value < 200  # 150 stable items dilute the evidence...
    assert third.detected  # ...but the supremum crossed: the alarm stands for the series
    assert third.first_detected == name


def test_a_failed_call_counts_in_neither_stream() -> None:
    canaries = canary_set()
    (one,) = choose_items(canaries, 1, seed=0, check=1)
    replies = [reply_of(one, "error", "provider_error")]
    check = evaluate_check(canaries, None, replies, seed=0, cost=CanaryCost())
    assert (check.rejudged, check.flips, check.errors, check.replies[0].flipped) == (0, 0, 1, False)
    assert check.replies[0].error == "provider_error"


# --------------------------------------------------------------------------- the trust function's source


def _book(reports: object, *checks: CanaryCheck, later_record: bool = False) -> TrustBook:
    records = [calibration(reports, "good")]
    if later_record:
        records.append(calibration(reports, "good", when=T0 + timedelta(days=1)))
    return TrustBook.from_records(Path("records"), calibrations=records, canary_checks=checks)


def _series(reports: object, flipped: int) -> CanaryCheck:
    record = record_filename(calibration(reports, "good"))
    canaries = canary_set(record_file=record)
    first = _check(canaries, None, 0, 10, T0 + timedelta(hours=1))
    return _check(canaries, first, flipped, 10, T0 + timedelta(hours=2))


def test_a_check_that_declares_drift_withdraws_trust_with_the_evidence(reports: object) -> None:
    check = _series(reports, 8)
    status = _book(reports, check).status(FP, "polite")
    assert status.trust is Trust.UNTRUSTED
    assert status.withheld_by == ("canary_drift",)
    name = canary_check_filename(FP, check.created_at, 2)
    assert status.canary_check_file == name
    assert status.reason.startswith(
        f"the latest canary check ({name}, 2026-01-02 05:04:05Z, check 2 against calibration record "
        f"{check.record_file}) declared drift: flips 8/20 (null rate 0.02): e-value "
    )
    assert f"items flipped in this check: {', '.join(check.flipped_items)}: the judge's replies moved" in (
        status.reason
    )
    assert status.reason.endswith(
        f"re-calibrate it on its current replies (`judgekit grade ... --cache-mode off`, then `judgekit "
        f"calibrate LABELS --judge JUDGE --fingerprint {FP} --records records`)"
    )


def test_a_clear_check_keeps_trust_and_is_cited(reports: object) -> None:
    status = _book(reports, _series(reports, 0)).status(FP)
    assert status.trust is Trust.TRUSTED
    assert "canary check 2 clear (" in status.reason


def test_a_newer_calibration_record_lifts_the_withdrawal(reports: object) -> None:
    check = _series(reports, 8)
    status = _book(reports, check, later_record=True).status(FP)
    assert status.trust is Trust.TRUSTED
    assert (
        f"re-asked the canary set of calibration record {check.record_file}, not of the latest record "
        f"{record_filename(calibration(reports, 'good', when=T0 + timedelta(days=1)))}: a new series starts "
        "there"
    ) in status.reason


def test_a_check_of_another_fingerprint_changes_nothing(reports: object) -> None:
    check = _series(reports, 8).model_copy(update={"fingerprint": "ab" * 32})
    assert _book(reports, check).status(FP).trust is Trust.TRUSTED


def test_the_history_is_read_from_the_records_folder_and_a_broken_file_is_named(
    reports: object, tmp_path: Path
) -> None:
    record = calibration(reports, "good")
    (tmp_path / record_filename(record)).write_text(dump_record(record))
    check = _series(reports, 8)
    history = tmp_path / CANARY_HISTORY_DIR
    history.mkdir()
    name = canary_check_filename(FP, check.created_at, check.check)
    (history / name).write_text(check.model_dump_json(indent=2))
    assert load_canary_check((history / name).read_text()) == check
    assert TrustBook(tmp_path).status(FP).withheld_by == ("canary_drift",)
    (history / "broken.json").write_text('{"schema_version": "judgekit.canary-check/1"}')
    with pytest.raises(ProblemsError) as raised:
        TrustBook(tmp_path)
    assert any(p.file == history / "broken.json" for p in raised.value.problems)
