"""Scored judges: Spearman, Kendall's tau-b and Pearson against scipy, their intervals, gate and errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from judgekit.calibration.agreement import compute_agreement, resample_weights
from judgekit.calibration.correlation import (
    kendall_from,
    pearson_from,
    scored_agreement,
    spearman_from,
)
from judgekit.calibration.gate import TrustPolicy, evaluate_gate, parse_policy
from judgekit.calibration.labels import Scale, parse_labels
from judgekit.cli import main
from judgekit.errors import JudgekitError, ProblemsError

# A SummEval-style table: 1-5 coherence ratings of 20 summaries by three experts and a judge. Items
# i01-i10 belong to case c1..c5 (two summaries each), the others are a case each.
RATINGS = {  # item: (e1, e2, e3, judge)
    "i01": (5, 5, 4, 5),
    "i02": (4, 4, 4, 3),
    "i03": (2, 1, 2, 2),
    "i04": (3, 3, 2, 4),
    "i05": (1, 1, 1, 2),
    "i06": (4, 5, 5, 5),
    "i07": (3, 2, 3, 3),
    "i08": (2, 2, 3, 1),
    "i09": (5, 4, 5, 4),
    "i10": (3, 4, 3, 3),
    "i11": (1, 2, 1, 1),
    "i12": (4, 4, 3, 4),
    "i13": (2, 3, 2, 2),
    "i14": (5, 5, 5, 4),
    "i15": (3, 3, 3, 2),
    "i16": (4, 3, 4, 5),
    "i17": (1, 1, 2, 1),
    "i18": (2, 2, 2, 3),
    "i19": (4, 5, 4, 4),
    "i20": (3, 2, 2, 2),
}
RATERS = ("e1", "e2", "e3", "judge")
ORDINAL = Scale(name="coherence", values=("1", "2", "3", "4", "5"), level="ordinal")
INTERVAL = Scale(name="coherence", values=("1", "2", "3", "4", "5"), level="interval")


def case_of(item: str) -> str:
    k = int(item[1:])
    return f"c{(k + 1) // 2}" if k <= 10 else f"c{k}"


def write_table(path: Path, ratings: dict[str, tuple[int | str, ...]] = RATINGS) -> Path:
    lines = ["item_id,case_id,rater,label"]
    for item, values in ratings.items():
        lines += [f"{item},{case_of(item)},{r},{v}" for r, v in zip(RATERS, values, strict=True) if v != ""]
    path.write_text("\n".join(lines) + "\n")
    return path


def report_for(tmp_path: Path, scale: Scale = ORDINAL, ratings=RATINGS, resamples: int = 400, seed: int = 0):
    path = write_table(tmp_path / "labels.csv", ratings)
    table = parse_labels(path.read_bytes(), source=path, scale=scale)
    return compute_agreement(table, judge="judge", experts=["e1", "e2", "e3"], resamples=resamples, seed=seed)


def write_verdicts(path: Path) -> Path:
    """A pass/fail (nominal) table of ten items by the same raters."""
    rows = [f"i{k},{r},{'pass' if (k + j) % 3 else 'fail'}" for k in range(10) for j, r in enumerate(RATERS)]
    path.write_text("item_id,rater,label\n" + "\n".join(rows) + "\n")
    return path


def verdict_report(path: Path):
    return compute_agreement(
        parse_labels(path.read_bytes(), source=path), judge="judge", experts=["e1", "e2"]
    )


def column(k: int) -> np.ndarray:
    return np.array([v[k] for v in RATINGS.values()], dtype=float)


def scipy_all(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    return {
        "spearman": stats.spearmanr(x, y).statistic,
        "kendall_tau_b": stats.kendalltau(x, y, variant="b").statistic,
        "pearson": stats.pearsonr(x, y).statistic,
    }


# ---------------------------------------------------------------- values against scipy


@pytest.mark.parametrize("scale", [ORDINAL, INTERVAL], ids=["ordinal", "interval"])
def test_every_pair_equals_scipy_to_1e_12(tmp_path, scale):
    scored = scored_agreement(report_for(tmp_path, scale), resamples=200, seed=0)
    assert scored is not None
    judge = column(3)
    median = np.median(np.stack([column(0), column(1), column(2)]), axis=0)
    expected = {("consensus", "judge"): scipy_all(median, judge)}
    expected |= {(e, "judge"): scipy_all(column(k), judge) for k, e in enumerate(RATERS[:3])}
    expected |= {("e1", "e2"): scipy_all(column(0), column(1)), ("e1", "e3"): scipy_all(column(0), column(2))}
    expected |= {("e2", "e3"): scipy_all(column(1), column(2))}
    assert {(p.a, p.b) for p in scored.pairs} == set(expected)
    for p in scored.pairs:
        assert p.n == 20
        want = expected[(p.a, p.b)]
        assert p.spearman.value == pytest.approx(want["spearman"], abs=1e-12)
        assert p.kendall_tau_b.value == pytest.approx(want["kendall_tau_b"], abs=1e-12)
        if scale.level == "interval":
            assert p.pearson.value == pytest.approx(want["pearson"], abs=1e-12)
        else:
            assert p.pearson.value is None
            assert "interval or ratio scale" in (p.pearson.undefined_reason or "")


def test_the_figures_of_the_table(tmp_path):
    # scipy on the median of the three experts against the judge (printed in the issue 36 report)
    scored = scored_agreement(report_for(tmp_path, INTERVAL), resamples=200, seed=0)
    assert scored is not None
    jc = scored.judge_vs_consensus
    assert jc.spearman.value == pytest.approx(0.8787, abs=5e-5)
    assert jc.kendall_tau_b.value == pytest.approx(0.7886, abs=5e-5)
    assert jc.pearson.value == pytest.approx(0.8746, abs=5e-5)


def test_the_consensus_of_an_even_number_of_experts_is_the_mean_of_the_middle_two(tmp_path):
    ratings = {k: (v[0], v[1], "", v[3]) for k, v in RATINGS.items()}
    scored = scored_agreement(report_for(tmp_path, INTERVAL, ratings), resamples=100, seed=0)
    assert scored is not None
    median = (column(0) + column(1)) / 2.0
    assert scored.judge_vs_consensus.spearman.value == pytest.approx(
        stats.spearmanr(median, column(3)).statistic, abs=1e-12
    )
    assert "median" in scored.consensus


@pytest.mark.parametrize("seed", [0, 7])
def test_the_batched_formulas_equal_scipy_on_each_resample(seed):
    # A resample repeats each case's items as often as the case was drawn; the contingency formulas
    # must equal scipy on those repeated items.
    x, y = column(0), column(3)
    cases = np.array([int(case_of(i)[1:]) for i in RATINGS])
    _, case_index = np.unique(cases, return_inverse=True)
    weights = next(resample_weights(int(case_index.max()) + 1, 30, seed))
    xv, xi = np.unique(x, return_inverse=True)
    yv, yi = np.unique(y, return_inverse=True)
    for w in weights:
        reps = w[case_index].astype(int)
        t = np.zeros((1, xv.size, yv.size))
        np.add.at(t, (0, xi, yi), reps)
        xe, ye = np.repeat(x, reps), np.repeat(y, reps)
        want = scipy_all(xe, ye)
        assert spearman_from(t)[0][0] == pytest.approx(want["spearman"], abs=1e-12)
        assert kendall_from(t)[0][0] == pytest.approx(want["kendall_tau_b"], abs=1e-12)
        assert pearson_from(t, xv, yv)[0][0] == pytest.approx(want["pearson"], abs=1e-12)


# ---------------------------------------------------------------- intervals


def test_intervals_contain_the_estimate_and_are_reproducible_for_a_seed(tmp_path):
    report = report_for(tmp_path, INTERVAL)
    first = scored_agreement(report, resamples=500, seed=3)
    again = scored_agreement(report, resamples=500, seed=3)
    other = scored_agreement(report, resamples=500, seed=4)
    assert first is not None
    assert again is not None
    assert other is not None
    assert first == again
    assert first != other
    for p in first.pairs:
        for m in ("spearman", "kendall_tau_b", "pearson"):
            est = p.measure(m)
            assert est.interval is not None
            assert est.interval.method == "bootstrap"
            assert est.interval.confidence == report.confidence
            assert est.interval.low <= est.value <= est.interval.high


def test_the_resamples_are_the_agreement_reports_cases(tmp_path):
    # Every interval rests on the same resampled cases: a case-level bootstrap of 15 cases, not 20 items.
    report = report_for(tmp_path, INTERVAL, resamples=50)
    assert report.n_cases == 15
    scored = scored_agreement(report, resamples=1, seed=0)
    assert scored is not None
    w = next(resample_weights(15, 1, 0))[0]
    cases = list(dict.fromkeys(r.case_id for r in report.items))
    reps = np.array([w[cases.index(r.case_id)] for r in report.items]).astype(int)
    x, y = column(0), column(3)
    value = stats.spearmanr(np.repeat(x, reps), np.repeat(y, reps)).statistic
    interval = scored.judge_vs_experts[0].spearman.interval
    assert interval is not None
    assert interval.low == pytest.approx(value, abs=1e-12)


# ---------------------------------------------------------------- properties


@settings(max_examples=25, deadline=None)
@given(
    steps=st.lists(st.floats(min_value=0.1, max_value=50.0), min_size=5, max_size=5),
    start=st.floats(min_value=-100.0, max_value=100.0),
)
def test_spearman_and_kendall_are_invariant_to_a_monotone_relabelling(tmp_path_factory, steps, start):
    values = np.cumsum([start, *steps[:4]])
    relabelled = Scale(name="coherence", values=tuple(f"{v:.6f}" for v in values), level="interval")
    ratings = {k: tuple(f"{values[x - 1]:.6f}" for x in v) for k, v in RATINGS.items()}
    tmp = tmp_path_factory.mktemp("relabel")
    base = scored_agreement(report_for(tmp, INTERVAL, resamples=50), resamples=100, seed=1)
    moved = scored_agreement(report_for(tmp, relabelled, ratings, resamples=50), resamples=100, seed=1)
    assert base is not None
    assert moved is not None
    for p, q in zip(base.pairs, moved.pairs, strict=True):
        for m in ("spearman", "kendall_tau_b"):
            assert q.measure(m).value == pytest.approx(p.measure(m).value, abs=1e-12)
            a, b = p.measure(m).interval, q.measure(m).interval
            assert a is not None
            assert b is not None
            assert (b.low, b.high) == pytest.approx((a.low, a.high), abs=1e-12)


# ---------------------------------------------------------------- undefined values


def test_constant_ratings_and_too_few_items_are_undefined_with_a_reason_never_nan(tmp_path):
    ratings = {k: (v[0], v[1], v[2], 3) for k, v in RATINGS.items()}  # the judge says 3 to everything
    report = report_for(tmp_path, INTERVAL, ratings)
    scored = scored_agreement(report, resamples=100, seed=0)
    assert scored is not None
    jc = scored.judge_vs_consensus
    for m in ("spearman", "kendall_tau_b", "pearson"):
        assert jc.measure(m).value is None
        assert (
            jc.measure(m).undefined_reason
            == "judge gave one value on all 20 items both scored (no variance to correlate)"
        )
    assert scored.expert_pairs[0].spearman.value is not None
    two = {k: RATINGS[k] for k in ("i01", "i02")}
    short = scored_agreement(report_for(tmp_path, INTERVAL, two), resamples=100, seed=0)
    assert short is not None
    assert short.judge_vs_consensus.spearman.undefined_reason == (
        "fewer than 3 items carry a value from both consensus and judge (2)"
    )
    text = scored.model_dump_json()
    assert "NaN" not in text
    assert "nan" not in text.lower()


def test_a_nominal_scale_has_no_correlations(tmp_path):
    report = verdict_report(write_verdicts(tmp_path / "t.csv"))
    assert scored_agreement(report, resamples=100, seed=0) is None
    gate = evaluate_gate(report, TrustPolicy())
    assert "correlation_lower_bound" not in {c.name for c in gate.conditions}


# ---------------------------------------------------------------- the gate


def policy(**correlation: object) -> TrustPolicy:
    return parse_policy({"min_items": 10, "bootstrap": {"resamples": 300}, "correlation": correlation})


def condition(report, pol: TrustPolicy):
    gate = evaluate_gate(report, pol)
    return gate, next(c for c in gate.conditions if c.name == "correlation_lower_bound")


def test_the_correlation_condition_is_disabled_by_default_on_a_scored_scale(tmp_path):
    _, cond = condition(report_for(tmp_path), TrustPolicy())
    assert cond.passed is None
    assert cond.message == "disabled by the policy"


def test_the_correlation_condition_passes_and_fails_on_the_lower_bound(tmp_path):
    report = report_for(tmp_path, INTERVAL, resamples=300)
    scored = scored_agreement(report, resamples=300, seed=0)
    assert scored is not None
    low = scored.judge_vs_consensus.spearman.interval.low
    _, passed = condition(report, policy(measure="spearman", lower_bound=round(low - 0.01, 3)))
    assert passed.passed is True
    assert passed.observed == pytest.approx(low)
    assert passed.message.startswith("lower bound of Spearman's rho of the judge vs the experts' median is")
    gate, failed = condition(report, policy(measure="spearman", lower_bound=round(low + 0.01, 3)))
    assert failed.passed is False
    assert not gate.trusted
    assert "below the required" in failed.message
    _, pearson = condition(report, policy(measure="pearson", lower_bound=0.2))
    assert pearson.passed is True
    assert "Pearson's r" in pearson.message


def test_an_undefined_correlation_fails_its_condition_with_the_reason(tmp_path):
    ratings = {k: (v[0], v[1], v[2], 3) for k, v in RATINGS.items()}
    _, cond = condition(
        report_for(tmp_path, ORDINAL, ratings), policy(measure="kendall_tau_b", lower_bound=0.5)
    )
    assert cond.passed is False
    assert "is undefined: judge gave one value" in cond.message


def test_a_correlation_condition_on_a_nominal_scale_is_refused(tmp_path):
    report = verdict_report(write_verdicts(tmp_path / "t.csv"))
    with pytest.raises(
        JudgekitError,
        match=r"correlation.lower_bound gates on Spearman's rho, but the label "
        r"scale 'verdict' is nominal \(pass, fail\): its labels have no order",
    ) as err:
        evaluate_gate(report, policy(lower_bound=0.5))
    assert err.value.exit_code == 2


def test_pearson_on_an_ordinal_scale_is_refused(tmp_path):
    with pytest.raises(
        JudgekitError,
        match=r"correlation.measure is pearson, but the label scale 'coherence' "
        r"is ordinal: Pearson's r needs the distances between values",
    ):
        evaluate_gate(report_for(tmp_path), policy(measure="pearson", lower_bound=0.5))


def test_an_unknown_measure_in_the_policy_is_a_located_problem():
    with pytest.raises(ProblemsError, match=r"correlation\.measure"):
        policy(measure="pearsons", lower_bound=0.5)


# ---------------------------------------------------------------- end to end


def run_calibrate(tmp_path: Path, capsys, *extra: str) -> tuple[int, str, str]:
    write_table(tmp_path / "labels.csv")
    code = main(
        [
            "calibrate", str(tmp_path / "labels.csv"), "--judge", "judge", "--experts", "e1,e2,e3",
            "--scale", "1,2,3,4,5", "--level", "interval", "--records", str(tmp_path), *extra,
        ]
    )  # fmt: skip
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


def test_calibrate_prints_the_correlation_rows_and_gates_on_them(tmp_path, capsys):
    (tmp_path / "policy.yaml").write_text(
        "min_items: 10\ntpr_lower_bound: null\ntnr_lower_bound: null\nalpha_lower_bound: null\n"
        "agreement_gap:\n  max_gap: null\ncorrelation:\n  measure: spearman\n  lower_bound: 0.5\n"
    )
    code, out, _ = run_calibrate(tmp_path, capsys, "--policy", str(tmp_path / "policy.yaml"))
    assert code == 0, out
    assert "## Scored judges: correlations (interval scale)" in out
    assert "| judge vs the experts' median | 20 | 0.879 [" in out
    assert "| correlation_lower_bound | pass | 0.500 |" in out
    code, out, _ = run_calibrate(
        tmp_path, capsys, "--policy", str(tmp_path / "policy.yaml"), "--format", "json"
    )
    doc = json.loads(out)
    jc = doc["correlations"]["judge_vs_consensus"]
    assert jc["spearman"]["value"] == pytest.approx(0.8787, abs=5e-5)
    assert jc["spearman"]["interval"]["method"] == "bootstrap"


def test_calibrate_refuses_a_correlation_condition_on_verdicts_with_exit_2(tmp_path, capsys):
    write_verdicts(tmp_path / "v.csv")
    (tmp_path / "policy.yaml").write_text("correlation:\n  lower_bound: 0.5\n")
    code = main(
        ["calibrate", str(tmp_path / "v.csv"), "--judge", "judge", "--experts", "e1,e2",
         "--policy", str(tmp_path / "policy.yaml"), "--records", str(tmp_path)]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert "is nominal (pass, fail): its labels have no order to correlate" in err
    assert "Traceback" not in err


def test_the_record_keeps_the_correlations_and_reads_them_back(tmp_path, capsys):
    from judgekit.calibration.records import load_record

    code, _, _ = run_calibrate(tmp_path, capsys, "--fingerprint", "ab" * 32)
    assert code in (0, 1)
    (record_path,) = tmp_path.glob("*.json")
    record = load_record(record_path.read_bytes(), source=record_path)
    assert record.correlations is not None
    assert record.correlations.judge_vs_consensus.spearman.value == pytest.approx(0.8787, abs=5e-5)
    assert any(c.name == "correlation_lower_bound" and c.passed is None for c in record.gate.conditions)
