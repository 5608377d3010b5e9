from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.calibration.families import (
    calibrate_families,
    holm,
    render_families_markdown,
    score_p_value,
    split_by_criterion,
)
from judgekit.calibration.gate import BootstrapSettings, TrustPolicy
from judgekit.calibration.labels import parse_labels, parse_scale_option
from judgekit.errors import JudgekitError
from judgekit.stats import wilson_interval

from .conftest import make_csv, synthetic_rows

POLICY = TrustPolicy(bootstrap=BootstrapSettings(resamples=200))


@pytest.mark.parametrize("n", [5, 16, 40, 133])
@pytest.mark.parametrize("bound", [0.5, 0.8, 0.9])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_score_p_value_inverts_the_wilson_bound(n, bound, confidence):
    alpha = (1 - confidence) / 2
    for k in range(1, n + 1):
        low = wilson_interval(k, n, confidence=confidence)[0]
        if abs(low - bound) < 1e-9:
            continue
        assert (low >= bound) == (score_p_value(k, n, bound) <= alpha), (k, n)


def test_score_p_value_edges():
    assert score_p_value(0, 0, 0.8) == 1.0
    assert score_p_value(3, 10, 0.0) == 0.0
    assert score_p_value(10, 10, 1.0) == 1.0
    with pytest.raises(ValueError, match="successes"):
        score_p_value(11, 10, 0.5)


def test_holm_textbook_example():
    rejected, adjusted, rank = holm([0.01, 0.04, 0.03, 0.005], 0.05)
    assert rejected == [True, False, False, True]
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert rank == [2, 4, 3, 1]
    # step-down stops at the first failure even when a later p-value would pass alone
    assert holm([0.02, 0.001, 0.04], 0.05)[0] == [True, True, True]
    assert holm([0.03, 0.001, 0.04], 0.05)[0] == [False, True, False]


def _perfect_rows(criterion: str, fails: int, passes: int) -> list[tuple[str, ...]]:
    rows = []
    for i in range(fails + passes):
        label = "fail" if i < fails else "pass"
        for rater in ("e1", "e2", "judge"):
            rows.append((f"{criterion}{i:03d}", criterion, rater, label))
    return rows


def table(rows):
    return parse_labels(make_csv(rows), source=Path("labels.csv"))


def test_good_modes_trusted_bad_mode_named():
    rows = synthetic_rows(
        n_cases=200, criteria=("a", "b"), flips={"e1": 0.0, "e2": 0.02, "judge": 0.01}, seed=4, fail_rate=0.4
    )
    rows += synthetic_rows(
        n_cases=200, criteria=("c",), flips={"e1": 0.0, "e2": 0.02, "judge": 0.35}, seed=5, fail_rate=0.4
    )
    report = calibrate_families(table(rows), judge="judge", experts=["e1", "e2"], policy=POLICY)
    by = {f.criterion: f for f in report.families}
    assert by["a"].trusted
    assert by["b"].trusted
    assert not by["c"].trusted
    assert report.untrusted == ("c",)
    assert report.correction == "holm"
    assert "Holm" in report.statement
    assert "3 failure modes" in report.statement
    md = render_families_markdown(report)
    assert "Holm's step-down" in md
    assert "not trusted: c" in md
    # each criterion has its own calibration: its items only
    assert by["a"].report.n_items == 200
    assert {i.criterion for i in by["a"].report.items} == {"a"}


def test_holm_correction_withholds_trust_that_a_single_gate_would_give():
    # 16 of 16 failures caught: the 95% Wilson lower bound is 0.806, just above 0.80 (p = 0.0228 < 0.025)
    x = _perfect_rows("x", 16, 100)
    y = _perfect_rows("y", 16, 100)
    alone = calibrate_families(table(x), judge="judge", experts=["e1", "e2"], policy=POLICY)
    assert alone.correction == "none"
    assert alone.families[0].trusted
    assert alone.families[0].rate_p_value == pytest.approx(0.02275, abs=1e-4)
    together = calibrate_families(table(x + y), judge="judge", experts=["e1", "e2"], policy=POLICY)
    assert not together.trusted
    first = min(together.families, key=lambda f: f.holm_rank)
    assert first.holm_level == pytest.approx(0.0125)
    assert first.confidence == pytest.approx(0.975)
    assert not first.holm_passed
    assert "family-wise level" in first.message
    # at its adjusted confidence the gate's own TPR bound is below 0.80 too
    assert any(c.name == "tpr_lower_bound" for c in first.gate.failed)


def test_split_keeps_scale_and_hash():
    t = table(_perfect_rows("x", 2, 2) + _perfect_rows("y", 1, 1))
    parts = split_by_criterion(t)
    assert sorted(parts) == ["x", "y"]
    assert parts["x"].sha256 == t.sha256
    assert len(parts["y"].rows) == 6


def test_non_binary_scale_is_refused():
    scale = parse_scale_option("1,2,3", level="ordinal", positive="1")
    t = parse_labels(
        b"item_id,criterion,rater,label\na,x,e1,1\na,x,judge,2\n", source=Path("l.csv"), scale=scale
    )
    with pytest.raises(JudgekitError, match="one binary criterion per failure mode"):
        calibrate_families(t, judge="judge", experts=["e1"], policy=POLICY)


def test_policy_overrides_are_checked():
    t = table(_perfect_rows("x", 20, 40))
    with pytest.raises(JudgekitError, match="unknown criteria"):
        calibrate_families(t, judge="judge", experts=["e1", "e2"], policy=POLICY, policies={"zz": POLICY})
    other = POLICY.model_copy(update={"confidence": 0.9})
    with pytest.raises(JudgekitError, match="one family-wise confidence"):
        calibrate_families(t, judge="judge", experts=["e1", "e2"], policy=POLICY, policies={"x": other})


def test_a_mode_without_judge_labels_is_named():
    rows = _perfect_rows("x", 20, 40) + [r for r in _perfect_rows("y", 3, 3) if r[2] != "judge"]
    with pytest.raises(JudgekitError, match="criterion 'y' has no labels from the judge"):
        calibrate_families(table(rows), judge="judge", experts=["e1", "e2"], policy=POLICY)


# ------------------------------------------------------------------------------------------- records


def _record(when=None):
    from datetime import UTC, datetime

    from judgekit.calibration.families import build_failure_mode_record
    from judgekit.calibration.records import LabelTableInfo

    t = table(_perfect_rows("x", 12, 100) + _perfect_rows("y", 40, 100))
    report = calibrate_families(t, judge="judge", experts=["e1", "e2"], policy=POLICY)
    return report, build_failure_mode_record(
        report,
        fingerprint="fp",
        policy=POLICY,
        label_table=LabelTableInfo(sha256=t.sha256, name="labels.csv", rows=len(t.rows)),
        now=when or datetime(2026, 1, 2, 3, 4, 5, 678, tzinfo=UTC),
    )


def test_a_failure_mode_record_keeps_every_decision_and_round_trips():
    from judgekit.calibration.families import dump_failure_mode_record, load_failure_mode_record

    report, rec = _record()
    assert rec.schema_version == "judgekit.failure-mode-record/1"
    assert rec.correction == "holm"
    assert rec.alpha == pytest.approx(0.025)
    assert rec.created_at.microsecond == 0
    by = {d.criterion: d for d in rec.decisions}
    assert by["y"].trusted
    assert not by["x"].trusted
    x = next(f for f in report.families if f.criterion == "x")
    assert by["x"].holm_adjusted_p == x.holm_adjusted_p
    assert by["x"].tpr_bound == 0.8
    assert by["x"].tpr_low == next(c.observed for c in x.gate.conditions if c.name == "tpr_lower_bound")
    assert by["x"].failed == tuple(f"{c.name}: {c.message}" for c in x.gate.failed)
    assert by["x"].message == x.message
    assert load_failure_mode_record(dump_failure_mode_record(rec)) == rec


def test_a_failure_mode_record_file_name_sorts_by_time():
    from judgekit.calibration.families import failure_mode_record_filename

    _, rec = _record()
    name = failure_mode_record_filename(rec)
    assert name.endswith("-20260102T030405Z.json")
    assert len(name.split("-")[0]) == 16


def test_a_failure_mode_record_needs_a_fingerprint():
    from judgekit.calibration.families import build_failure_mode_record
    from judgekit.calibration.records import LabelTableInfo

    report = calibrate_families(
        table(_perfect_rows("x", 20, 40)), judge="judge", experts=["e1", "e2"], policy=POLICY
    )
    with pytest.raises(
        JudgekitError, match="the grader fingerprint is empty; a record needs the exact fingerprint"
    ):
        build_failure_mode_record(
            report, fingerprint=" ", policy=POLICY, label_table=LabelTableInfo(sha256="0", name="l", rows=1)
        )


def test_a_failure_mode_record_with_two_decisions_for_one_criterion_is_refused():
    import json

    from judgekit.calibration.families import dump_failure_mode_record, load_failure_mode_record
    from judgekit.errors import ProblemsError

    _, rec = _record()
    data = json.loads(dump_failure_mode_record(rec))
    data["decisions"][1]["criterion"] = data["decisions"][0]["criterion"]
    with pytest.raises(
        ProblemsError,
        match=r"f\.json: decisions: not a failure-mode record: Value error, criterion 'x' has two decisions; "
        r"each criterion has one",
    ):
        load_failure_mode_record(json.dumps(data), source=Path("f.json"))


def test_an_unknown_failure_mode_record_field_is_named():
    import json

    from judgekit.calibration.families import dump_failure_mode_record, load_failure_mode_record
    from judgekit.errors import ProblemsError

    _, rec = _record()
    data = json.loads(dump_failure_mode_record(rec))
    data["note"] = "hand edit"
    with pytest.raises(ProblemsError, match=r"f\.json: note: not a failure-mode record: unknown field"):
        load_failure_mode_record(json.dumps(data), source=Path("f.json"))


def test_a_failure_mode_record_file_named_as_text_is_read_and_named(tmp_path: Path) -> None:
    import json

    from judgekit.calibration.families import dump_failure_mode_record, load_failure_mode_record
    from judgekit.errors import ProblemsError

    _, rec = _record()
    path = tmp_path / "f.json"
    path.write_text(dump_failure_mode_record(rec))
    assert load_failure_mode_record(path.read_text(), source=str(path)) == rec
    data = json.loads(path.read_text())
    del data["fingerprint"]
    with pytest.raises(ProblemsError, match=r"f\.json: fingerprint: not a failure-mode record") as exc:
        load_failure_mode_record(json.dumps(data), source=str(path))
    assert exc.value.problems[0].file == path
