"""Agreement metrics: published values, agreement with the reference libraries, undefined cases."""

from __future__ import annotations

from pathlib import Path

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from judgekit.calibration.agreement import (
    ABSTAIN,
    MISSING,
    BootstrapStat,
    alpha_from_coincidence,
    bootstrap,
    build_ratings,
    cohen_kappa,
    coincidence_rows,
    compute_agreement,
    consensus_codes,
    fleiss_kappa,
    gwet_ac1,
    kappa_from_confusion,
    krippendorff_alpha,
    percent_agreement,
    resample_weights,
)
from judgekit.calibration.labels import Scale, parse_labels

N = None
# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", 4 observers x 12 units, missing values.
KRIPP_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
]


@pytest.mark.parametrize(
    ("level", "expected"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_2011_example(level, expected):
    est = krippendorff_alpha(KRIPP_2011, labels=[1, 2, 3, 4, 5], level=level)
    assert est.value == pytest.approx(expected, abs=5e-4)
    assert est.n == 11  # the 12th unit has a single value and is not pairable


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_vectorised_alpha_equals_the_krippendorff_package(level):
    codes = np.array([[MISSING if v is None else v - 1 for v in row] for row in KRIPP_2011])
    o = coincidence_rows(codes, 5).sum(axis=0).reshape(1, 5, 5)
    value, defined = alpha_from_coincidence(o, level, (1.0, 2.0, 3.0, 4.0, 5.0))
    data = np.array([[np.nan if v is None else v for v in row] for row in KRIPP_2011], dtype=float)
    assert defined[0]
    assert value[0] == pytest.approx(krippendorff.alpha(data, level_of_measurement=level), abs=1e-12)


def test_cohen_kappa_artstein_poesio_table_1():
    # Artstein & Poesio (2008) Table 1: contingency [[20, 20], [10, 50]]; scikit-learn's test uses 0.348.
    y1 = [0] * 40 + [1] * 60
    y2 = [0] * 20 + [1] * 20 + [0] * 10 + [1] * 50
    assert cohen_kappa(y1, y2, labels=[0, 1]).value == pytest.approx(0.348, abs=5e-4)


def test_cohen_kappa_artstein_poesio_table_4_multiclass():
    y1 = [0] * 46 + [1] * 44 + [2] * 10
    y2 = [0] * 52 + [1] * 32 + [2] * 16
    assert cohen_kappa(y1, y2, labels=[0, 1, 2]).value == pytest.approx(0.8013, abs=5e-5)


def test_weighted_kappa_matches_scikit_learn_and_orders_weights():
    y1 = [0] * 46 + [1] * 44 + [2] * 10
    y2 = [0] * 50 + [1] * 40 + [2] * 10
    for w in ("linear", "quadratic"):
        est = cohen_kappa(y1, y2, labels=[0, 1, 2], weights=w)
        assert est.value == pytest.approx(cohen_kappa_score(y1, y2, weights=w), abs=1e-12)
    none = cohen_kappa(y1, y2, labels=[0, 1, 2]).value
    lin = cohen_kappa(y1, y2, labels=[0, 1, 2], weights="linear").value
    quad = cohen_kappa(y1, y2, labels=[0, 1, 2], weights="quadratic").value
    assert none == pytest.approx(0.9315, abs=5e-5)
    assert none < lin < quad  # near-misses are forgiven more with heavier distance weights


def test_vectorised_kappa_equals_scikit_learn():
    rng = np.random.default_rng(4)
    a = rng.integers(0, 4, 300)
    b = np.where(rng.random(300) < 0.7, a, rng.integers(0, 4, 300))
    conf = np.zeros((1, 4, 4))
    np.add.at(conf[0], (a, b), 1)
    for w in ("none", "linear", "quadratic"):
        value, defined = kappa_from_confusion(conf, w)
        ref = cohen_kappa_score(a, b, weights=None if w == "none" else w)
        assert defined[0]
        assert value[0] == pytest.approx(ref, abs=1e-12)


def test_fleiss_kappa_wikipedia_example():
    # https://en.wikipedia.org/wiki/Fleiss%27_kappa worked example: 10 subjects, 14 raters, 5 categories.
    table = [
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
    assert fleiss_kappa(table).value == pytest.approx(0.210, abs=5e-4)


def test_gwet_ac1_matches_irrcac_on_the_krippendorff_data():
    # irrCAC's gwet.ac1.raw(cac.raw4raters) (the same 4 x 12 data): pa 0.8182, pe 0.1903, AC1 0.7754.
    est = gwet_ac1(KRIPP_2011, labels=[1, 2, 3, 4, 5])
    assert est.value == pytest.approx(0.77544, abs=5e-5)


def test_gwet_ac1_stays_high_where_kappa_collapses():
    # High agreement, one dominant label: the kappa paradox. 118 (+,+), 5 (+,-), 2 (-,+).
    y1 = ["+"] * 123 + ["-"] * 2
    y2 = ["+"] * 118 + ["-"] * 5 + ["+"] * 2
    kappa = cohen_kappa(y1, y2, labels=["+", "-"]).value
    ac1 = gwet_ac1([y1, y2], labels=["+", "-"]).value
    assert kappa is not None
    assert kappa < 0.0
    # pa = 118/125, pi+ = 243/250, pe = 2 pi+ (1 - pi+); AC1 = (pa - pe) / (1 - pe)
    pi = 243 / 250
    pe = 2 * pi * (1 - pi)
    assert ac1 == pytest.approx((118 / 125 - pe) / (1 - pe), abs=1e-12)


def test_percent_agreement_skips_missing_and_has_wilson_interval():
    est = percent_agreement(["a", "b", None, "a"], ["a", "a", "b", "a"], labels=["a", "b"])
    assert est.value == pytest.approx(2 / 3)
    assert est.n == 3
    assert est.interval is not None
    assert est.interval.method == "wilson"


# ---------------------------------------------------------------- undefined values


def test_kappa_is_undefined_with_a_reason_when_both_raters_use_one_label():
    est = cohen_kappa(["pass"] * 10, ["pass"] * 10, labels=["pass", "fail"])
    assert est.value is None
    assert "expected disagreement is zero" in (est.undefined_reason or "")


def test_kappa_is_undefined_when_no_item_has_both_labels():
    est = cohen_kappa(["pass", None], [None, "fail"], labels=["pass", "fail"])
    assert est.value is None
    assert "no item" in (est.undefined_reason or "")


def test_alpha_is_undefined_when_every_value_is_the_same():
    est = krippendorff_alpha([["x", "x", "x"], ["x", "x", "x"]], labels=["x", "y"])
    assert est.value is None
    assert "no expected disagreement" in (est.undefined_reason or "")


def test_alpha_is_undefined_without_pairable_values():
    est = krippendorff_alpha([["x", None], [None, "y"]], labels=["x", "y"])
    assert est.value is None
    assert "two or more" in (est.undefined_reason or "")


def test_fleiss_kappa_is_undefined_when_every_rating_is_in_one_category():
    est = fleiss_kappa([[3, 0], [3, 0]])
    assert est.value is None
    assert "one category" in (est.undefined_reason or "")


def test_gwet_ac1_is_undefined_without_two_labels_on_an_item():
    est = gwet_ac1([["a", None], [None, "b"]], labels=["a", "b"])
    assert est.value is None


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: cohen_kappa([1], [1, 2], labels=[1, 2]), "differ in length"),
        (lambda: cohen_kappa([3], [1], labels=[1, 2]), "is not one of the labels"),
        (lambda: percent_agreement([1], [1, 2], labels=[1, 2]), "differ in length"),
        (
            lambda: krippendorff_alpha([["a", "b"]], labels=["a", "b"], level="interval"),
            "needs numeric labels",
        ),
        (lambda: fleiss_kappa([[2, 0], [1, 2]]), "same number of raters"),
        (lambda: fleiss_kappa([[1, 0], [0, 1]]), "at least two raters"),
        (lambda: fleiss_kappa([[-1, 3]]), "non-negative"),
        (lambda: gwet_ac1([["a"]], labels=["a"]), "at least two labels"),
    ],
)
def test_each_metric_precondition_has_a_readable_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_judge_that_says_pass_to_everything_gets_undefined_values_never_nan(csv_bytes):
    rows = []
    for i in range(20):
        truth = "fail" if i % 4 == 0 else "pass"
        rows += [(f"i{i}", "", "e1", truth), (f"i{i}", "", "e2", truth), (f"i{i}", "", "judge", "pass")]
    table = parse_labels(csv_bytes(rows), source=Path("t.csv"))
    report = compute_agreement(table, judge="judge", experts=["e1", "e2"], resamples=200)
    jc = report.judge_vs_consensus
    assert jc.binary is not None
    assert jc.binary.tpr.value == 0.0
    assert jc.binary.precision.value is None
    assert "no flagged failures" in (jc.binary.precision.undefined_reason or "")
    text = report.model_dump_json()
    assert "NaN" not in text
    assert "nan" not in text.lower().replace("nominal", "")


# ---------------------------------------------------------------- consensus, bootstrap


def test_consensus_is_the_unique_mode_and_ties_are_missing():
    codes = np.array(
        [
            [0, 0, 1, MISSING, ABSTAIN],
            [0, 1, 1, MISSING, ABSTAIN],
            [1, MISSING, 0, MISSING, 0],
        ]
    )
    consensus, split, n_rated = consensus_codes(codes, 2)
    assert consensus.tolist() == [0, MISSING, 1, MISSING, ABSTAIN]
    assert split.tolist() == [True, True, True, False, True]
    assert n_rated.tolist() == [3, 2, 3, 0, 3]


def test_resample_weights_are_seeded_and_sum_to_the_number_of_cases():
    a = np.concatenate(list(resample_weights(7, 600, 3)))
    b = np.concatenate(list(resample_weights(7, 600, 3)))
    assert a.shape == (600, 7)
    assert np.array_equal(a, b)
    assert np.all(a.sum(axis=1) == 7)
    assert not np.array_equal(a, np.concatenate(list(resample_weights(7, 600, 4))))


def test_bootstrap_equals_a_per_resample_loop_on_the_same_weights():
    rng = np.random.default_rng(0)
    per_case = rng.integers(0, 5, size=(40, 4)).astype(float)

    def formula(s):
        total = s.sum(axis=1)
        return s[:, 0] / total, total > 0

    stat = BootstrapStat("share", per_case, formula)
    values, defined = bootstrap([stat], n_cases=40, n_resamples=300, seed=9)["share"]
    weights = np.concatenate(list(resample_weights(40, 300, 9)))
    loop = [float((w @ per_case)[0] / (w @ per_case).sum()) for w in weights]
    assert defined.all()
    assert np.allclose(values, loop)


def test_bootstrap_moves_a_cases_criteria_together(csv_bytes):
    # Two criteria per case with identical labels: resampling cases keeps every case's pair intact, so each
    # resample's confusion matrix has even counts. Resampling items would break that.
    rows = []
    for c in range(30):
        truth = "fail" if c % 3 == 0 else "pass"
        judge = truth if c % 5 else ("pass" if truth == "fail" else "fail")
        for crit in ("x", "y"):
            rows += [
                (f"c{c}", crit, "e1", truth),
                (f"c{c}", crit, "e2", truth),
                (f"c{c}", crit, "judge", judge),
            ]
    table = parse_labels(csv_bytes(rows), source=Path("t.csv"))
    ratings = build_ratings(table, ["judge", "e1", "e2"])
    assert len(ratings.cases) == 30
    assert len(ratings.items) == 60
    from judgekit.calibration.agreement import confusion_rows

    per_case = ratings.by_case(confusion_rows(ratings.row("e1"), ratings.row("judge"), 2))
    for w in resample_weights(30, 50, 1):
        counts = w @ per_case
        assert np.all(counts % 2 == 0)


def test_report_intervals_are_reproducible_and_bracket_point_values(good_table):
    r1 = compute_agreement(good_table, judge="judge", experts=["e1", "e2", "e3"], resamples=300, seed=5)
    r2 = compute_agreement(good_table, judge="judge", experts=["e1", "e2", "e3"], resamples=300, seed=5)
    assert r1 == r2
    jc = r1.judge_vs_consensus
    for est in [jc.kappa["none"], jc.alpha["nominal"], jc.ac1, jc.binary.f1, r1.expert_group.fleiss_kappa]:
        assert est.value is not None
        assert est.interval is not None
        assert est.interval.method == "bootstrap"
        assert est.interval.low <= est.value <= est.interval.high
    r3 = compute_agreement(good_table, judge="judge", experts=["e1", "e2", "e3"], resamples=300, seed=6)
    assert r3.judge_vs_consensus.kappa["none"].interval != jc.kappa["none"].interval


def test_point_values_come_from_the_reference_libraries(good_table):
    report = compute_agreement(good_table, judge="judge", experts=["e1", "e2", "e3"], resamples=100)
    ratings = build_ratings(good_table, ["judge", "e1", "e2", "e3"])
    e1, judge = ratings.row("e1"), ratings.row("judge")
    both = (e1 >= 0) & (judge >= 0)
    pair = next(p for p in report.judge_vs_experts if p.a == "e1")
    assert pair.kappa["none"].value == pytest.approx(cohen_kappa_score(e1[both], judge[both]), abs=1e-12)
    data = np.where(np.stack([e1, judge]) >= 0, np.stack([e1, judge]), np.nan).astype(float)
    keep = (~np.isnan(data)).sum(axis=0) >= 2
    assert pair.alpha["nominal"].value == pytest.approx(
        krippendorff.alpha(data[:, keep], value_domain=[0, 1], level_of_measurement="nominal"), abs=1e-12
    )


def test_abstentions_are_missing_for_agreement_and_counted_as_abstention(csv_bytes):
    rows = []
    for i in range(40):
        truth = "fail" if i % 4 == 0 else "pass"
        judge = "insufficient_information" if i % 10 == 0 else truth
        rows += [(f"i{i}", "", "e1", truth), (f"i{i}", "", "e2", truth), (f"i{i}", "", "judge", judge)]
    table = parse_labels(csv_bytes(rows), source=Path("t.csv"))
    report = compute_agreement(table, judge="judge", experts=["e1", "e2"], resamples=100)
    a = report.abstention
    assert a.items == 40
    assert a.judged == 36
    assert a.abstention.value == pytest.approx(0.1)
    assert a.agreement_on_judged.value == 1.0
    assert report.judge_vs_consensus.percent_agreement.value == 1.0
    assert report.judge_vs_consensus.n == 36
    # abstentions are shown in the confusion matrix's own column
    labels = report.judge_vs_consensus.confusion.labels
    assert labels[-1] == "insufficient_information"
    counts = report.judge_vs_consensus.confusion.counts
    assert sum(row[-1] for row in counts) == 4
    # items 0, 20 are failures (i % 4 == 0 and i % 10 == 0); 10, 30 are passes
    assert a.abstention_on_positive.value == pytest.approx(2 / 10)
    assert a.abstention_on_negative.value == pytest.approx(2 / 30)


def test_abstention_where_experts_split(csv_bytes):
    rows = []
    for i in range(20):
        e2 = "fail" if i < 5 else "pass"
        judge = "insufficient_information" if i < 4 else "pass"
        rows += [
            (f"i{i}", "", "e1", "pass"),
            (f"i{i}", "", "e2", e2),
            (f"i{i}", "", "e3", "pass"),
            (f"i{i}", "", "judge", judge),
        ]
    table = parse_labels(csv_bytes(rows), source=Path("t.csv"))
    report = compute_agreement(table, judge="judge", experts=["e1", "e2", "e3"], resamples=100)
    assert len(report.splits) == 5
    assert {s.item_id for s in report.splits} == {f"i{i}" for i in range(5)}
    assert report.abstention.abstention_where_experts_split.value == pytest.approx(4 / 5)
    assert report.abstention.abstention_where_experts_agree.value == 0.0


def test_ordinal_scale_reports_weighted_kappa_and_alpha_levels(csv_bytes):
    scale = Scale(name="q", values=("1", "2", "3", "4"), level="interval", positive=("1",))
    rng = np.random.default_rng(2)
    rows = []
    for i in range(80):
        truth = int(rng.integers(1, 5))
        for rater, noise in (("e1", 0.1), ("e2", 0.2), ("judge", 0.3)):
            v = truth if rng.random() > noise else min(4, max(1, truth + int(rng.choice([-1, 1]))))
            rows.append((f"i{i}", "", rater, str(v)))
    table = parse_labels(csv_bytes(rows), source=Path("t.csv"), scale=scale)
    report = compute_agreement(table, judge="judge", experts=["e1", "e2"], resamples=100)
    jc = report.judge_vs_consensus
    assert set(jc.kappa) == {"none", "linear", "quadratic"}
    assert set(jc.alpha) == {"nominal", "ordinal", "interval"}
    assert jc.kappa["quadratic"].value > jc.kappa["none"].value
    assert jc.binary is not None


def test_nominal_scale_without_positive_labels_has_no_binary_metrics(csv_bytes):
    scale = Scale(values=("red", "green", "blue"))
    rows = [(f"i{i}", "", r, ["red", "green", "blue"][i % 3]) for i in range(30) for r in ("e1", "judge")]
    table = parse_labels(csv_bytes(rows), source=Path("t.csv"), scale=scale)
    report = compute_agreement(table, judge="judge", experts=["e1"], resamples=100)
    assert report.judge_vs_consensus.binary is None
    assert "no positive" in (report.judge_vs_consensus.binary_reason or "")
    assert report.expert_group.fleiss_kappa.value is None


def test_every_defined_estimate_has_an_interval_or_says_why(good_table):
    from judgekit.stats import Estimate

    report = compute_agreement(good_table, judge="judge", experts=["e1", "e2", "e3"], resamples=100)
    seen = []

    def walk(obj, path):
        if isinstance(obj, Estimate):
            seen.append(path)
            if obj.value is None:
                assert obj.undefined_reason, path
            else:
                assert obj.interval is not None or obj.interval_reason, path
            return
        if isinstance(obj, dict):
            for k, v in obj.items():
                walk(v, f"{path}.{k}")
        elif isinstance(obj, tuple):
            for i, v in enumerate(obj):
                walk(v, f"{path}[{i}]")
        elif hasattr(type(obj), "model_fields"):
            for k in type(obj).model_fields:
                walk(getattr(obj, k), f"{path}.{k}")

    walk(report, "report")
    assert len(seen) > 60


def test_without_the_krippendorff_package_alpha_is_undefined_and_the_gate_says_why(good_table, monkeypatch):
    import sys

    from judgekit.calibration.gate import TrustPolicy, evaluate_gate

    monkeypatch.setitem(sys.modules, "krippendorff", None)  # import now raises ImportError
    report = compute_agreement(good_table, judge="judge", experts=["e1", "e2", "e3"], resamples=100)
    alpha = report.judge_vs_consensus.alpha["nominal"]
    assert alpha.value is None
    assert "krippendorff package" in (alpha.undefined_reason or "")
    assert report.judge_vs_consensus.kappa["none"].value is not None
    gate = evaluate_gate(report, TrustPolicy())
    assert "alpha_lower_bound" in {c.name for c in gate.failed}


def test_percent_agreement_confidence_level_widens_the_interval():
    y = ["a"] * 8 + ["b"] * 2
    z = ["a"] * 7 + ["b"] * 3
    narrow = percent_agreement(y, z, labels=["a", "b"], confidence=0.8).interval
    wide = percent_agreement(y, z, labels=["a", "b"], confidence=0.99).interval
    assert wide.low < narrow.low
    assert wide.high > narrow.high


def test_ac1_vs_consensus_leaves_out_items_where_the_experts_tie(tmp_path):
    # Two experts and a judge on six items; i5 and i6 are tied (one pass, one fail): no consensus.
    #   item:      i1    i2    i3    i4    i5    i6
    #   e1:        pass  pass  fail  pass  pass  fail
    #   e2:        pass  pass  fail  pass  fail  pass
    #   consensus: pass  pass  fail  pass  -     -
    #   judge:     pass  pass  fail  fail  fail  fail
    # Gwet's AC1 on the four items with a consensus (Gwet 2008, two raters, q = 2):
    #   pa = 3/4 (i1, i2, i3 agree)
    #   pi_pass = (1 + 1 + 0 + 1/2) / 4 = 0.625, pi_fail = 0.375
    #   pe = (0.625 * 0.375 + 0.375 * 0.625) / (2 - 1) = 0.46875
    #   AC1 = (0.75 - 0.46875) / (1 - 0.46875) = 0.28125 / 0.53125 = 9/17
    # The old code also counted the judge's 'fail' on i5 and i6 in pi (pi_fail = 3.5/6): 0.5135.
    rows = [
        ("i1", "", "e1", "pass"), ("i1", "", "e2", "pass"), ("i1", "", "judge", "pass"),
        ("i2", "", "e1", "pass"), ("i2", "", "e2", "pass"), ("i2", "", "judge", "pass"),
        ("i3", "", "e1", "fail"), ("i3", "", "e2", "fail"), ("i3", "", "judge", "fail"),
        ("i4", "", "e1", "pass"), ("i4", "", "e2", "pass"), ("i4", "", "judge", "fail"),
        ("i5", "", "e1", "pass"), ("i5", "", "e2", "fail"), ("i5", "", "judge", "fail"),
        ("i6", "", "e1", "fail"), ("i6", "", "e2", "pass"), ("i6", "", "judge", "fail"),
    ]  # fmt: skip
    path = tmp_path / "labels.csv"
    path.write_text("item_id,criterion,rater,label\n" + "".join(",".join(r) + "\n" for r in rows))
    table = parse_labels(path.read_bytes(), source=path)
    report = compute_agreement(table, judge="judge", experts=["e1", "e2"], resamples=300, seed=4)
    jc = report.judge_vs_consensus
    assert report.no_consensus == 2
    assert jc.n == 4
    assert jc.percent_agreement.value == pytest.approx(0.75)
    assert jc.ac1.value == pytest.approx(9 / 17, abs=1e-12)
    assert jc.ac1.n == 4
    # the same items as irrCAC's two-column AC1 of (consensus, judge) on the items with a consensus
    assert jc.ac1.value == pytest.approx(
        gwet_ac1(
            [["pass", "pass", "fail", "pass"], ["pass", "pass", "fail", "fail"]], labels=["pass", "fail"]
        ).value,
        abs=1e-12,
    )
    # the bootstrap resamples the same items: every resample's AC1 is the AC1 of its consensus items
    assert jc.ac1.interval is not None
    assert jc.ac1.interval.low <= jc.ac1.value <= jc.ac1.interval.high


def test_ac1_between_an_expert_and_the_judge_still_counts_one_sided_labels(tmp_path):
    # Judge vs an expert keeps Gwet's multi-rater form with missing values (irrCAC's gwet.ac1.raw):
    # an item only the judge labelled counts in the chance term.
    rows = [("i1", "", "e1", "pass"), ("i1", "", "judge", "pass"), ("i2", "", "e1", "fail")]
    rows += [("i2", "", "judge", "fail"), ("i3", "", "judge", "fail"), ("i4", "", "e1", "pass")]
    rows += [("i4", "", "judge", "pass")]
    table = parse_labels(
        ("item_id,criterion,rater,label\n" + "".join(",".join(r) + "\n" for r in rows)).encode(),
        source=tmp_path / "t.csv",
    )
    report = compute_agreement(table, judge="judge", experts=["e1"], resamples=50)
    expected = gwet_ac1(
        [["pass", "fail", None, "pass"], ["pass", "fail", "fail", "pass"]], labels=["pass", "fail"]
    )
    assert report.judge_vs_experts[0].ac1.value == pytest.approx(expected.value, abs=1e-12)
