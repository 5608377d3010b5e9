import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import settings

from judgekit import stats
from judgekit.stats import (
    binomial_half_two_sided,
    bootstrap_ci,
    clopper_pearson_interval,
    mcnemar_exact,
    sign_test,
    wilson_interval,
)


def test_wilson_40_of_50_reproduces_published_interval():
    low, high = wilson_interval(40, 50)
    assert low == pytest.approx(0.670, abs=5e-4)
    assert high == pytest.approx(0.888, abs=5e-4)


def test_wilson_edges_are_exact_bounds():
    assert wilson_interval(0, 10)[0] == 0.0
    assert wilson_interval(10, 10)[1] == 1.0
    low, high = wilson_interval(5, 10, confidence=0.99)
    low95, high95 = wilson_interval(5, 10)
    assert low < low95 < 0.5 < high95 < high


def test_clopper_pearson_known_value():
    # 0 of 10 at 95 %: upper bound 1 - 0.025**(1/10) = 0.3085
    low, high = clopper_pearson_interval(0, 10)
    assert low == 0.0
    assert high == pytest.approx(1 - 0.025 ** (1 / 10), abs=1e-9)
    low, high = clopper_pearson_interval(40, 50)
    assert low == pytest.approx(0.6628, abs=5e-4)
    assert high == pytest.approx(0.8997, abs=5e-4)


def test_sign_test_reference_values():
    assert sign_test(10, 1) == pytest.approx(0.01172, abs=1e-4)
    assert sign_test(6, 3) == pytest.approx(0.5078, abs=1e-3)
    assert sign_test(0, 0) == 1.0


def test_mcnemar_exact_is_symmetric_and_matches_binomial():
    assert mcnemar_exact(1, 10) == mcnemar_exact(10, 1)
    assert mcnemar_exact(0, 5) == pytest.approx(2 * 0.5**5)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: wilson_interval(1, 0), "n must be a positive"),
        (lambda: wilson_interval(11, 10), "successes must be between"),
        (lambda: wilson_interval(1, 10, confidence=1.0), "confidence must be strictly"),
        (lambda: mcnemar_exact(-1, 2), "discordant counts must be non-negative"),
        (lambda: sign_test(-1, 2), "counts must be non-negative"),
        (lambda: binomial_half_two_sided(3, 2), r"need 0 <= k <= n, got k=3, n=2"),
        (lambda: binomial_half_two_sided(0, -1), r"need 0 <= k <= n, got k=0, n=-1"),
        (lambda: bootstrap_ci([]), "non-empty"),
        (lambda: bootstrap_ci([1.0], n_resamples=0), "n_resamples must be at least 1"),
    ],
)
def test_each_precondition_has_a_readable_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_bootstrap_ci_is_seeded_and_brackets_the_mean():
    rng = np.random.default_rng(3)
    data = rng.normal(10.0, 1.0, size=200)
    a = bootstrap_ci(data, seed=1)
    b = bootstrap_ci(data, seed=1)
    assert a == b
    assert a[0] < float(np.mean(data)) < a[1]
    assert a[1] - a[0] == pytest.approx(2 * 1.96 / np.sqrt(200), rel=0.25)


# --- pass^k and pass@k (runs and statistics) ---------------------------------------------------------

import doctest  # noqa: E402
import inspect  # noqa: E402
from itertools import pairwise  # noqa: E402
from math import comb  # noqa: E402

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import judgekit.stats  # noqa: E402
from judgekit.stats import (  # noqa: E402
    UNDECIDED_POLICIES,
    check_undecided_policy,
    counted_trials,
    pass_at_k,
    pass_hat_k,
    pass_hat_k_per_task,
    pass_k_curve,
)


def _none(n):
    return [0] * len(n)


def test_pass_hat_k_seed_example_five_of_eight_is_not_passing():
    # A task passing 5 of 8 contributes 5/8 to pass^1 and nothing to pass^6..8.
    for policy in UNDECIDED_POLICIES:
        assert pass_hat_k([8], [5], 1, undecided_counts=[0], undecided=policy) == pytest.approx(0.625)
        assert pass_hat_k([8], [5], 5, undecided_counts=[0], undecided=policy) == pytest.approx(
            1 / comb(8, 5)
        )
        assert pass_hat_k([8], [5], 6, undecided_counts=[0], undecided=policy) == 0.0
        assert pass_hat_k([8], [8], 8, undecided_counts=[0], undecided=policy) == 1.0


def test_pass_hat_k_is_mean_of_binomial_ratios():
    n, c = [4, 4, 4, 3], [4, 2, 0, 3]
    expected = sum(comb(ci, 2) / comb(ni, 2) for ni, ci in zip(n, c, strict=True)) / 4
    assert pass_hat_k(n, c, 2, undecided_counts=_none(n), undecided="fail") == pytest.approx(expected)
    per_task = pass_hat_k_per_task(n, c, 2, undecided_counts=_none(n), undecided="fail")
    assert list(per_task) == pytest.approx([1.0, 1 / 6, 0.0, 1.0])


def test_pass_at_k_matches_chen_estimator():
    # Chen et al.: 1 - C(n-c, k)/C(n, k)
    assert pass_at_k([10], [3], 4, undecided_counts=[0], undecided="fail") == pytest.approx(
        1 - comb(7, 4) / comb(10, 4)
    )
    assert pass_at_k([5], [0], 5, undecided_counts=[0], undecided="fail") == 0.0
    assert pass_at_k([5], [1], 5, undecided_counts=[0], undecided="fail") == 1.0


def test_tau_bench_gpt4o_airline_figures_from_per_task_counts():
    # tau-bench's gpt-4o airline run: 50 tasks x 4 trials. Tasks by number of trials with reward 1,
    # tallied from the published trajectories (84 passes of 200); they give the published pass^k.
    counts = {0: 14, 1: 12, 2: 10, 3: 4, 4: 10}
    c = [passes for passes, tasks in counts.items() for _ in range(tasks)]
    n = [4] * len(c)
    assert (len(c), sum(c)) == (50, 84)
    for policy in UNDECIDED_POLICIES:
        got = [
            round(pass_hat_k(n, c, k, undecided_counts=_none(n), undecided=policy), 3) for k in range(1, 5)
        ]
        assert got == [0.420, 0.273, 0.220, 0.200]


def test_fail_keeps_undecided_trials_in_n_and_exclude_drops_them():
    # 4 trials: 2 pass, 1 fail, 1 error. fail: C(2,2)/C(4,2) = 1/6; exclude: C(2,2)/C(3,2) = 1/3.
    assert pass_hat_k([4], [2], 2, undecided_counts=[1], undecided="fail") == pytest.approx(1 / 6)
    assert pass_hat_k([4], [2], 2, undecided_counts=[1], undecided="exclude") == pytest.approx(1 / 3)
    # pass@2: fail 1 - C(2,2)/C(4,2) = 5/6; exclude 1 - C(1,2)/C(3,2) = 1
    assert pass_at_k([4], [2], 2, undecided_counts=[1], undecided="fail") == pytest.approx(5 / 6)
    assert pass_at_k([4], [2], 2, undecided_counts=[1], undecided="exclude") == pytest.approx(1.0)
    n, c = counted_trials([4, 3], [2, 0], undecided_counts=[1, 3], undecided="exclude")
    assert (n.tolist(), c.tolist()) == ([3, 0], [2, 0])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: pass_hat_k([3, 2], [1, 1], 3, undecided_counts=[0, 0], undecided="fail"),
            r"k=3 is larger than the 2 trial\(s\) of task 1 \(and 0 more\); pass\^k needs at least k trials",
        ),
        (
            lambda: pass_hat_k([3, 3], [1, 1], 3, undecided_counts=[0, 1], undecided="exclude"),
            r"k=3 is larger than the 2 decided trial\(s\) of task 1 \(and 0 more\): "
            r"its 1 undecided trial\(s\) are excluded by undecided='exclude'.*use pass_k_curve",
        ),
        (
            lambda: pass_hat_k([3], [4], 1, undecided_counts=[0], undecided="fail"),
            r"task 0: successes must be between 0 and its trials \(3\) "
            r"less its undecided trials \(0\), got 4",
        ),
        (
            lambda: pass_hat_k([3], [3], 1, undecided_counts=[1], undecided="fail"),
            r"task 0: successes must be between 0 and its trials \(3\) "
            r"less its undecided trials \(1\), got 3",
        ),
        (
            lambda: pass_hat_k([3], [0], 1, undecided_counts=[4], undecided="fail"),
            r"task 0: undecided_counts must be between 0 and its trials \(3\), got 4",
        ),
        (
            lambda: pass_hat_k([-1], [0], 1, undecided_counts=[0], undecided="fail"),
            "task 0: trials must be non-negative, got -1",
        ),
        (
            lambda: pass_hat_k([3], [1], 0, undecided_counts=[0], undecided="fail"),
            "k must be a positive integer, got 0",
        ),
        (
            lambda: pass_hat_k([], [], 1, undecided_counts=[], undecided="fail"),
            "at least one task is needed",
        ),
        (
            lambda: pass_at_k([3, 3], [1], 1, undecided_counts=[0, 0], undecided="fail"),
            "trials, successes and undecided_counts must be one-dimensional and of equal length",
        ),
        (
            lambda: pass_hat_k([3], [1], 1, undecided_counts=[0], undecided="pass"),
            "undecided must be 'fail' or 'exclude' .*got 'pass'; "
            "an undecided trial is never counted as a pass",
        ),
        (
            lambda: pass_k_curve([3], [1], 0, undecided_counts=[0], undecided="fail"),
            "k_max must be a positive integer, got 0",
        ),
    ],
    ids=[
        "k_above_trials",
        "k_above_decided_trials",
        "successes_above_trials",
        "successes_plus_undecided_above_trials",
        "undecided_above_trials",
        "negative_trials",
        "k_zero",
        "no_tasks",
        "shapes",
        "unknown_policy",
        "k_max_zero",
    ],
)
def test_pass_k_preconditions_have_readable_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("bad", ["pass", "FAIL", "", None, 0, ("fail",)])
def test_check_undecided_policy_refuses_anything_but_the_named_policies(bad):
    with pytest.raises(ValueError, match="undecided must be 'fail' or 'exclude'"):
        check_undecided_policy(bad)


def test_every_pass_k_function_requires_the_policy_and_the_undecided_counts():
    # the meta-test: a repeated-trials function that takes successes over trials must make its caller
    # name the undecided policy (keyword-only, no default), so no caller picks one by accident
    functions = [
        obj
        for name, obj in vars(judgekit.stats).items()
        if name in judgekit.stats.__all__
        and inspect.isfunction(obj)
        and "successes" in inspect.signature(obj).parameters
    ]
    names = {f.__name__ for f in functions}
    assert names >= {"pass_hat_k", "pass_at_k", "pass_hat_k_per_task", "pass_k_curve", "counted_trials"}
    interval_functions = {"wilson_interval", "clopper_pearson_interval"}  # one proportion, no trials per task
    for function in functions:
        if function.__name__ in interval_functions:
            continue
        params = inspect.signature(function).parameters
        for required in ("undecided", "undecided_counts"):
            assert required in params, f"{function.__name__} does not take {required}="
            assert params[required].kind is inspect.Parameter.KEYWORD_ONLY, function.__name__
            assert params[required].default is inspect.Parameter.empty, function.__name__


def test_doctests_run():
    result = doctest.testmod(judgekit.stats, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 10
    assert result.failed == 0


@st.composite
def _tasks(draw, *, undecided=True, min_decided=0):
    """Per task (trials, successes, undecided): trials include the undecided ones."""
    n_tasks = draw(st.integers(1, 12))
    n, c, u = [], [], []
    for _ in range(n_tasks):
        ui = draw(st.integers(0, 4)) if undecided else 0
        decided = draw(st.integers(max(1, min_decided), 10))
        n.append(decided + ui)
        u.append(ui)
        c.append(draw(st.integers(0, decided)))
    return n, c, u


@given(_tasks(undecided=False))
def test_pass_k_properties(tasks):
    n, c, u = tasks
    kmax = min(n)
    for policy in UNDECIDED_POLICIES:
        hats = [pass_hat_k(n, c, k, undecided_counts=u, undecided=policy) for k in range(1, kmax + 1)]
        ats = [pass_at_k(n, c, k, undecided_counts=u, undecided=policy) for k in range(1, kmax + 1)]
        # pass^1 == pass@1 == mean success rate; pass@k non-decreasing, pass@k >= pass^k
        assert hats[0] == pytest.approx(sum(ci / ni for ni, ci in zip(n, c, strict=True)) / len(n))
        assert ats[0] == pytest.approx(hats[0])
        for a, b in pairwise(ats):
            assert b >= a - 1e-12
        for h, a in zip(hats, ats, strict=True):
            assert 0.0 <= h <= a + 1e-12 <= 1.0 + 1e-12
        # exact agreement with the factorial formula
        for k in range(1, kmax + 1):
            exact = sum(comb(ci, k) / comb(ni, k) for ni, ci in zip(n, c, strict=True)) / len(n)
            assert hats[k - 1] == pytest.approx(exact, rel=1e-9, abs=1e-12)


@given(_tasks(undecided=False))
def test_exclude_equals_fail_when_no_trial_is_undecided(tasks):
    n, c, u = tasks
    for k in range(1, min(n) + 1):
        for f in (pass_hat_k, pass_at_k):
            assert f(n, c, k, undecided_counts=u, undecided="exclude") == f(
                n, c, k, undecided_counts=u, undecided="fail"
            )
    curves = [pass_k_curve(n, c, max(n), undecided_counts=u, undecided=p) for p in UNDECIDED_POLICIES]
    assert [(p.pass_hat, p.pass_at, p.tasks_used) for p in curves[0]] == [
        (p.pass_hat, p.pass_at, p.tasks_used) for p in curves[1]
    ]


@given(_tasks())
def test_fail_is_at_most_exclude_is_at_most_every_undecided_trial_passing(tasks):
    # per task C(c,k)/C(n,k) <= C(c,k)/C(n-u,k) <= C(c+u,k)/C(n,k): adding u trials as failures lowers the
    # ratio, adding them as passes raises it
    n, c, u = tasks
    for k in range(1, min(ni - ui for ni, ui in zip(n, u, strict=True)) + 1):
        fail = pass_hat_k_per_task(n, c, k, undecided_counts=u, undecided="fail")
        exclude = pass_hat_k_per_task(n, c, k, undecided_counts=u, undecided="exclude")
        all_pass = pass_hat_k_per_task(
            n, [ci + ui for ci, ui in zip(c, u, strict=True)], k, undecided_counts=_none(n), undecided="fail"
        )
        assert np.all(fail <= exclude + 1e-12)
        assert np.all(exclude <= all_pass + 1e-12)
        assert fail.mean() <= all_pass.mean() + 1e-12


@given(_tasks())
def test_pass_hat_k_is_non_increasing_in_k_under_each_policy(tasks):
    n, c, u = tasks
    for policy in UNDECIDED_POLICIES:
        counted, _ = counted_trials(n, c, undecided_counts=u, undecided=policy)
        hats = [
            pass_hat_k(n, c, k, undecided_counts=u, undecided=policy)
            for k in range(1, int(counted.min()) + 1)
        ]
        for a, b in pairwise(hats):
            assert b <= a + 1e-12


@given(_tasks(), st.randoms(use_true_random=False))
def test_pass_k_is_invariant_to_task_order(tasks, rnd):
    n, c, u = tasks
    order = list(range(len(n)))
    rnd.shuffle(order)
    shuffled = ([n[i] for i in order], [c[i] for i in order], [u[i] for i in order])
    for policy in UNDECIDED_POLICIES:
        counted, _ = counted_trials(n, c, undecided_counts=u, undecided=policy)
        for k in range(1, int(counted.min()) + 1):
            for f in (pass_hat_k, pass_at_k):
                a = f(n, c, k, undecided_counts=u, undecided=policy)
                b = f(*shuffled[:2], k, undecided_counts=shuffled[2], undecided=policy)
                assert a == pytest.approx(b, rel=1e-12, abs=1e-15)
        a_curve = pass_k_curve(n, c, max(n), undecided_counts=u, undecided=policy)
        b_curve = pass_k_curve(*shuffled[:2], max(n), undecided_counts=shuffled[2], undecided=policy)
        for p, q in zip(a_curve, b_curve, strict=True):
            assert (p.tasks_used, p.tasks_left_out) == (q.tasks_used, q.tasks_left_out)
            assert (p.pass_hat is None) == (q.pass_hat is None)
            if p.pass_hat is not None:
                assert p.pass_hat == pytest.approx(q.pass_hat, rel=1e-12, abs=1e-15)


@given(_tasks())
def test_curve_equals_the_scalar_functions_over_the_tasks_it_uses(tasks):
    n, c, u = tasks
    for policy in UNDECIDED_POLICIES:
        counted, _ = counted_trials(n, c, undecided_counts=u, undecided=policy)
        curve = pass_k_curve(n, c, max(n), undecided_counts=u, undecided=policy)
        assert [p.k for p in curve] == list(range(1, max(n) + 1))
        for point in curve:
            use = [i for i in range(len(n)) if counted[i] >= point.k]
            assert (point.tasks_used, point.tasks_left_out) == (len(use), len(n) - len(use))
            if not use:
                assert point.pass_hat is None
                assert point.pass_at is None
                assert f"no task has {point.k}" in (point.reason or "")
                continue
            args = ([n[i] for i in use], [c[i] for i in use], point.k)
            kw = {"undecided_counts": [u[i] for i in use], "undecided": policy}
            assert point.pass_hat == pass_hat_k(*args, **kw)  # the same running product: exactly equal
            assert point.pass_at == pass_at_k(*args, **kw)
            assert point.reason is None


def test_curve_reason_names_what_was_missing():
    (point,) = pass_k_curve([2], [0], 1, undecided_counts=[2], undecided="exclude")
    assert point.pass_hat is None
    assert point.reason == "no task has 1 decided trials"
    assert (
        pass_k_curve([2], [1], 3, undecided_counts=[0], undecided="fail")[2].reason == "no task has 3 trials"
    )
    assert pass_k_curve([], [], 2, undecided_counts=[], undecided="fail")[0].reason == "no tasks"


# --------------------------------------------------------------------------- the one estimate type


def test_a_proportion_is_an_estimate_with_its_wilson_interval() -> None:
    from judgekit.stats import Estimate, Interval, Proportion

    p = Proportion.wilson(8, 10, undecided=2, undecided_low=0.6, undecided_high=0.8)
    assert isinstance(p, Estimate)
    assert p.value == p.rate == 0.8
    low, high = wilson_interval(8, 10)
    assert p.interval == Interval(low=low, high=high, confidence=0.95, method="wilson")
    assert (p.low, p.high, p.undefined_reason) == (low, high, None)
    # written in the run report's flat shape, and read back from it
    flat = {
        "successes": 8,
        "n": 10,
        "rate": 0.8,
        "low": low,
        "high": high,
        "undecided": 2,
        "undecided_low": 0.6,
        "undecided_high": 0.8,
    }
    assert p.model_dump(mode="json") == flat
    assert Proportion.model_validate(flat) == p


def test_an_undefined_proportion_carries_its_reason_but_writes_the_same_json() -> None:
    from judgekit.stats import Proportion

    p = Proportion.wilson(0, 0, what="decided tasks")
    assert (p.value, p.rate, p.low, p.high, p.interval) == (None, None, None, None, None)
    assert p.undefined_reason == "no decided tasks to compute it on"
    assert not p.defined
    assert p.model_dump(mode="json") == {
        "successes": 0,
        "n": 0,
        "rate": None,
        "low": None,
        "high": None,
        "undecided": 0,
        "undecided_low": None,
        "undecided_high": None,
    }
    read = Proportion.model_validate(p.model_dump(mode="json"))
    assert read.undefined_reason == "no units to compute it on"


def test_there_is_one_interval_and_one_estimate_type() -> None:
    import ast
    from pathlib import Path

    from judgekit.calibration import agreement
    from judgekit.reports.run_compare import Comparison
    from judgekit.reports.run_model import GroupSummary
    from judgekit.stats import Estimate, Interval, Proportion

    src = Path(__file__).resolve().parents[1] / "src" / "judgekit"
    defined = [
        (path.relative_to(src).as_posix(), node.name)
        for path in src.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef) and node.name in ("Interval", "Estimate")
    ]
    assert sorted(defined) == [("stats.py", "Estimate"), ("stats.py", "Interval")]
    assert agreement.rate(3, 4, confidence=0.95, what="items").interval.__class__ is Interval
    assert isinstance(agreement.undefined("no items"), Estimate)
    assert GroupSummary.model_fields["trial_pass_rate"].annotation is Proportion
    assert Comparison.model_fields["task_pass_a"].annotation is Proportion


def test_the_95_percent_normal_quantile_is_scipys_to_the_last_bit():
    # a report at 95% reads the constant instead of importing SciPy; its intervals must not move
    from scipy import stats

    from judgekit.stats import _Z_95, normal_quantile

    assert normal_quantile(0.95) == float(stats.norm.ppf(0.975)) == _Z_95
    assert normal_quantile(0.9) == float(stats.norm.ppf(0.95))


# --------------------------------------------------------------------------- the exact binomial test at 1/2


def _exact_two_sided(k: int, n: int) -> Fraction:
    """The exact two-sided p-value at one half: twice the smaller tail, as a fraction, at most 1.

    Up to 1,000 trials each coefficient is ``math.comb``'s; beyond, each from the one before (integers).
    """
    m = min(k, n - k)
    if n <= 1000:
        tail = sum(math.comb(n, i) for i in range(m + 1))
    else:
        tail = term = 1
        for i in range(1, m + 1):
            term = term * (n - i + 1) // i
            tail += term
    return min(Fraction(1), Fraction(2 * tail, 2**n))


def test_sign_test_values_are_the_exact_fractions():
    # 10 fixed against 1 broken: 2 * (1 + 11) / 2**11; 6 against 3: 2 * 130 / 2**9; textbook values
    assert sign_test(10, 1) == 24 / 2048 == 0.01171875
    assert sign_test(6, 3) == 260 / 512 == 0.5078125
    assert mcnemar_exact(0, 5) == 2 * 0.5**5
    assert mcnemar_exact(4, 4) == 1.0
    assert mcnemar_exact(4, 5) == 1.0  # n odd: the two middle outcomes are the likeliest


def test_every_p_value_up_to_200_trials_is_the_exact_fraction_correctly_rounded():
    for n in range(201):
        for k in range(n + 1):
            assert binomial_half_two_sided(k, n) == float(_exact_two_sided(k, n)), (k, n)


def test_the_exact_path_agrees_with_scipy():
    from scipy.stats import binomtest

    for n in range(1, 120):
        for k in range(n + 1):
            ours, theirs = binomial_half_two_sided(k, n), min(1.0, binomtest(k, n, 0.5).pvalue)
            assert ours == pytest.approx(theirs, rel=1e-13, abs=0.0), (k, n)


@given(st.integers(min_value=stats.EXACT_BINOMIAL_MAX_N + 1, max_value=12_000), st.floats(0.0, 1.0))
@settings(max_examples=40, deadline=None)
def test_beyond_the_exact_path_the_p_value_is_within_1e_12_of_the_exact_fraction(
    n: int, where: float
) -> None:
    k = round(where * n)
    exact = _exact_two_sided(k, n)
    ours = binomial_half_two_sided(k, n)
    if exact < Fraction(2) ** -1000:  # below the doubles' normal range: both are tiny
        assert ours < 1e-290
        return
    assert abs(Fraction(ours) - exact) <= exact * Fraction(1, 10**12), (k, n)


@pytest.mark.parametrize("n", [2, 3, 15, 16, 17, 40, 101, 1000])
def test_the_floating_path_on_small_counts_is_within_1e_12_of_the_exact_fraction(
    n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # both of Stirling's branches (a factorial up to 15, the series above) and both of the deviance's
    monkeypatch.setattr(stats, "EXACT_BINOMIAL_MAX_N", 0)
    for k in range(n + 1):
        exact = _exact_two_sided(k, n)
        assert abs(Fraction(binomial_half_two_sided(k, n)) - exact) <= exact * Fraction(1, 10**12), (k, n)


@pytest.mark.parametrize(
    ("k", "n"),
    [(199_000, 400_000), (199_990, 400_000), (499_000, 1_000_000), (2_400, 5_000), (1_000, 200_000)],
)
def test_large_counts_agree_with_scipy(k: int, n: int) -> None:
    from scipy.stats import binomtest

    assert binomial_half_two_sided(k, n) == pytest.approx(binomtest(k, n, 0.5).pvalue, rel=1e-12, abs=1e-300)
