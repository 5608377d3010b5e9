"""Selective judging on any confidence scale, and the Trust-or-Escalate cascade of judges."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from judgekit.calibration import beyond
from judgekit.calibration.selective import (
    candidate_thresholds,
    fit_cascade,
    min_items,
    selective_threshold,
)
from judgekit.judges.cascade import HUMAN, route


def _continuous(seed: int, n: int = 500) -> tuple[np.ndarray, np.ndarray]:
    """A judge whose confidence is uniform on (0, 1) and right with probability 0.7 + 0.3 * confidence."""
    rng = np.random.default_rng(seed)
    conf = rng.uniform(size=n)
    return conf, rng.uniform(size=n) < 0.7 + 0.3 * conf


def test_continuous_confidences_find_a_threshold():
    # The old sequence started at the single highest confidence (1 item, p = 0.9 > δ) and stopped there.
    conf, ok = _continuous(0)
    res = selective_threshold(conf, ok, target=0.9, delta=0.05)
    assert res.threshold is not None
    assert res.steps[0].judged >= min_items(0.9, 0.05)
    assert res.agreement.interval is not None
    assert res.agreement.interval.low >= 0.9
    assert res.coverage.value is not None
    assert res.coverage.value > 0.5
    # the true agreement above t is 0.7 + 0.15 (1 + t) >= 0.9 for t >= 1/3: the threshold is not below it
    # by much (it may be, with probability at most δ)
    assert res.threshold > 0.2


def test_a_log_probability_scale_gives_the_same_items():
    conf, ok = _continuous(1)
    plain = selective_threshold(conf, ok, target=0.9, delta=0.05)
    logged = selective_threshold(np.log(conf), ok, target=0.9, delta=0.05)
    assert logged.threshold is not None
    assert plain.threshold is not None
    assert logged.threshold < 0  # no [0, 1] restriction
    assert logged.threshold == pytest.approx(math.log(plain.threshold))
    assert logged.coverage.value == plain.coverage.value


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    scale=st.floats(0.01, 100.0),
    shift=st.floats(-50.0, 50.0),
)
def test_any_increasing_rescaling_keeps_the_same_items(seed: int, scale: float, shift: float):
    conf, ok = _continuous(seed, 200)
    a = selective_threshold(conf, ok, target=0.85, delta=0.1)
    b = selective_threshold(conf * scale + shift, ok, target=0.85, delta=0.1)
    assert [s.judged for s in a.steps] == [s.judged for s in b.steps]
    assert a.coverage.value == b.coverage.value


def test_min_items_is_the_smallest_all_agree_sample_that_rejects():
    assert min_items(0.9, 0.05) == 29  # 0.9^29 = 0.047 <= 0.05 < 0.9^28 = 0.052
    for target, delta in [(0.9, 0.05), (0.8, 0.1), (0.95, 0.01), (0.5, 0.5)]:
        n = min_items(target, delta)
        assert target**n <= delta < target ** (n - 1) or n == 1
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        min_items(1.0, 0.05)


def test_candidates_depend_on_the_confidences_only_and_start_with_enough_items():
    conf, _ = _continuous(2, 300)
    cands = candidate_thresholds(conf, n_min=29, grid=20)
    assert cands == sorted(cands, reverse=True)
    assert int((conf >= cands[0]).sum()) == 29
    assert cands[-1] == conf.min()  # the loosest keeps everything
    assert len(cands) == 21
    assert candidate_thresholds(conf[:28], n_min=29) == []


def test_too_few_items_to_show_the_target():
    res = selective_threshold([0.9] * 28, [True] * 28, target=0.9, delta=0.05)
    assert res.threshold is None
    assert res.steps == ()
    assert "needs at least 29" in (res.reason or "")


def test_selective_threshold_fixed_sequence_with_exact_binomial():
    # confidence 1.0: 100 items, 98 right; 0.8: 50 more, 49 right; 0.6: 50 more, 25 right
    conf = [1.0] * 100 + [0.8] * 50 + [0.6] * 50
    correct = [True] * 98 + [False] * 2 + [True] * 49 + [False] * 1 + [True] * 25 + [False] * 25
    res = selective_threshold(conf, correct, target=0.9, delta=0.05)
    assert res.threshold == 0.8  # at 0.6 agreement is 172/200 < 0.9
    assert [s.threshold for s in res.steps] == [1.0, 0.8, 0.6]
    assert res.steps[1].p_value == pytest.approx(stats.binom.sf(146, 150, 0.9))
    assert res.steps[-1].rejected is False
    assert res.coverage.value == pytest.approx(150 / 200)
    assert res.agreement.value == pytest.approx(147 / 150)
    assert res.agreement.interval is not None
    assert res.agreement.interval.low >= 0.9  # rejected H0, so the exact one-sided bound clears the target
    assert res.agreement.interval.low == pytest.approx(stats.beta.ppf(0.05, 147, 4))


def test_selective_threshold_stops_at_the_first_failure_even_if_later_ones_pass():
    conf = [1.0] * 40 + [0.9] * 400
    correct = [False] * 10 + [True] * 30 + [True] * 400
    res = selective_threshold(conf, correct, target=0.9, delta=0.05)
    assert res.threshold is None
    assert len(res.steps) == 1
    assert "strictest threshold 1" in (res.reason or "")


def test_too_few_at_the_top_are_skipped_not_a_stop():
    # 10 wrong items alone at the top could never show the target: the sequence starts lower
    res = selective_threshold([1.0] * 10 + [0.9] * 400, [False] * 10 + [True] * 400, target=0.9)
    assert res.threshold == 0.9
    assert res.steps[0].judged == 410


def test_selective_coverage_counts_abstentions_in_the_population():
    res = selective_threshold([1.0] * 60, [True] * 60, target=0.8, population=100)
    assert res.coverage.value == pytest.approx(0.6)


def test_selective_threshold_errors():
    with pytest.raises(ValueError, match="differ in length"):
        selective_threshold([1.0], [True, False])
    with pytest.raises(ValueError, match="finite numbers"):
        selective_threshold([float("nan")], [True])
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        selective_threshold([1.0], [True], target=1.0)
    with pytest.raises(ValueError, match="smaller than"):
        selective_threshold([1.0, 1.0], [True, True], population=1)
    assert selective_threshold([], []).threshold is None


def test_old_imports_from_beyond_still_work():
    assert beyond.selective_threshold is selective_threshold
    assert beyond.SelectiveResult.__name__ == "SelectiveResult"


def test_each_stage_is_fitted_on_what_the_earlier_ones_passed_on():
    # stage a is right above 0.5 and wrong below; stage b is right everywhere
    conf_a = np.linspace(0.0, 1.0, 200)
    ok_a = conf_a >= 0.5
    conf_b = np.full(200, 0.7)
    cascade = fit_cascade(
        [("a", conf_a, ok_a), ("b", conf_b, np.ones(200, bool))],
        target=0.9,
        delta=0.1,
        models={"a": "openai/small", "b": "openai/large"},
    )
    a, b = cascade.stages
    assert a.delta == b.delta == pytest.approx(0.05)  # Bonferroni over two stages
    assert a.threshold is not None
    assert a.threshold >= 0.45
    assert a.reached == 200
    assert b.reached == 200 - a.kept
    assert b.threshold == 0.7
    assert b.kept == b.reached
    assert cascade.human_share == 0.0
    assert a.coverage + b.coverage == pytest.approx(1.0)
    assert a.agreement_lower_bound is not None
    assert a.agreement_lower_bound >= 0.9
    assert (a.model, b.model) == ("openai/small", "openai/large")


def test_a_stage_with_no_threshold_passes_everything_on_and_abstentions_are_never_kept():
    conf = [0.9] * 100
    cascade = fit_cascade(
        [("bad", conf, [False] * 100), ("good", [None] * 50 + [0.8] * 50, [True] * 100)],
        target=0.9,
        delta=0.05,
    )
    bad, good = cascade.stages
    assert bad.threshold is None
    assert bad.kept == 0
    assert bad.agreement_lower_bound is None
    assert good.reached == 100
    assert good.kept == 50
    assert cascade.human_share == pytest.approx(0.5)


def test_route_goes_to_the_first_stage_that_keeps_the_item_else_to_a_human():
    cascade = fit_cascade(
        [("a", [1.0] * 60 + [0.5] * 60, [True] * 60 + [False] * 60), ("b", [0.8] * 120, [True] * 120)],
        target=0.9,
        delta=0.05,
    )
    assert cascade.stages[0].threshold == 1.0
    assert route(cascade, {"a": 1.0}).decided_by == "a"
    went = route(cascade, {"a": 0.5, "b": 0.9})
    assert went.decided_by == "b"
    assert [(s.stage, s.confidence, s.kept) for s in went.tried] == [("a", 0.5, False), ("b", 0.9, True)]
    human = route(cascade, {"a": 0.5, "b": 0.1})
    assert human.decided_by == HUMAN
    assert len(human.tried) == 2
    assert route(cascade, {"a": None}).decided_by == HUMAN  # b's confidence missing: not kept


def test_fit_cascade_errors():
    with pytest.raises(ValueError, match="at least one stage"):
        fit_cascade([])
    with pytest.raises(ValueError, match="names must differ"):
        fit_cascade([("a", [1.0], [True]), ("a", [1.0], [True])])
    with pytest.raises(ValueError, match="each calibration item"):
        fit_cascade([("a", [1.0], [True]), ("b", [1.0, 0.5], [True, True])])
    with pytest.raises(ValueError, match="finite"):
        fit_cascade([("a", [math.inf], [True])])


# Simulation: two judges with different accuracy/confidence relations, P(right | c) = a + b c, c ~ U(0, 1).
_JUDGES = {"cheap": (0.6, 0.4), "strong": (0.8, 0.2)}
_TARGET, _DELTA, _REPS = 0.9, 0.1, 300


def _draw(rng: np.random.Generator, n: int, judges: dict[str, tuple[float, float]]):
    out = {}
    for name, (a, b) in judges.items():
        conf = rng.uniform(size=n)
        out[name] = (conf, rng.uniform(size=n) < a + b * conf)
    return out


def _one_repetition(seed: int, judges: dict[str, tuple[float, float]], n_cal: int = 600, n_test: int = 5000):
    """Fit on calibration items, route held-out items; realised and true agreement on what judges decide."""
    rng = np.random.default_rng(seed)
    cal, test = _draw(rng, n_cal, judges), _draw(rng, n_test, judges)
    cascade = fit_cascade([(k, *cal[k]) for k in judges], target=_TARGET, delta=_DELTA)
    reach = np.ones(n_test, bool)
    kept = agreed = 0
    coverage = []
    true_num = true_den = 0.0
    still = 1.0  # population share reaching the stage
    for stage in cascade.stages:
        conf, ok = test[stage.name]
        keep = reach & (conf >= stage.threshold) if stage.threshold is not None else np.zeros(n_test, bool)
        kept += int(keep.sum())
        agreed += int(ok[keep].sum())
        coverage.append(float(keep.mean()))
        reach &= ~keep
        if stage.threshold is not None:
            a, b = judges[stage.name]
            t = max(stage.threshold, 0.0)
            share = still * (1 - t)
            true_num += share * (a + b * (1 + t) / 2)  # E[a + b c | c >= t] = a + b (1 + t) / 2
            true_den += share
            still *= t
    realised = agreed / kept if kept else None
    true = true_num / true_den if true_den else None
    return realised, true, coverage, float(reach.mean())


def test_simulation_the_cascade_keeps_its_promise_on_held_out_items():
    runs = [_one_repetition(seed, _JUDGES) for seed in range(_REPS)]
    realised = [r for r, _, _, _ in runs]
    true = [t for _, t, _, _ in runs]
    # held out: agreement on what the judges decided reaches the target in >= 1 - δ of repetitions, less a
    # binomial allowance for 300 repetitions (the 0.1% quantile of Bin(300, 0.9))
    allowed = stats.binom.ppf(0.001, _REPS, 1 - _DELTA) / _REPS
    met = np.mean([r is None or r >= _TARGET for r in realised])
    assert met >= allowed
    assert np.mean([t is None or t >= _TARGET for t in true]) >= allowed  # the population agreement too
    coverage = np.mean([c for _, _, c, _ in runs], axis=0)
    human = np.mean([h for _, _, _, h in runs])
    # and it decides something: both stages keep items, and the human queue is not everything
    assert coverage[0] > 0.05
    assert coverage[1] > 0.2
    assert human < 0.6
    assert sum(coverage) + human == pytest.approx(1.0)


def test_simulation_a_judge_below_the_target_everywhere_is_rarely_trusted():
    # right with probability 0.88 whatever its confidence: no threshold truly reaches 0.9
    runs = [_one_repetition(seed, {"flat": (0.88, 0.0)}, n_test=100) for seed in range(_REPS)]
    found = np.mean([c[0] > 0 for _, _, c, _ in runs])
    assert found <= 1 - stats.binom.ppf(0.001, _REPS, 1 - _DELTA) / _REPS
