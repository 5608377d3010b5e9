import numpy as np
import pytest

from judgekit.stats import bootstrap_ci, clopper_pearson_interval, mcnemar_exact, sign_test, wilson_interval


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

from itertools import pairwise  # noqa: E402
from math import comb  # noqa: E402

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from judgekit.stats import pass_at_k, pass_hat_k, pass_hat_k_per_task  # noqa: E402


def test_pass_hat_k_seed_example_five_of_eight_is_not_passing():
    # A task passing 5 of 8 contributes 5/8 to pass^1 and nothing to pass^6..8.
    assert pass_hat_k([8], [5], 1) == pytest.approx(0.625)
    assert pass_hat_k([8], [5], 5) == pytest.approx(1 / comb(8, 5))
    assert pass_hat_k([8], [5], 6) == 0.0
    assert pass_hat_k([8], [8], 8) == 1.0


def test_pass_hat_k_is_mean_of_binomial_ratios():
    n, c = [4, 4, 4, 3], [4, 2, 0, 3]
    expected = sum(comb(ci, 2) / comb(ni, 2) for ni, ci in zip(n, c, strict=True)) / 4
    assert pass_hat_k(n, c, 2) == pytest.approx(expected)
    assert list(pass_hat_k_per_task(n, c, 2)) == pytest.approx([1.0, 1 / 6, 0.0, 1.0])


def test_pass_at_k_matches_chen_estimator():
    # Chen et al.: 1 - C(n-c, k)/C(n, k)
    assert pass_at_k([10], [3], 4) == pytest.approx(1 - comb(7, 4) / comb(10, 4))
    assert pass_at_k([5], [0], 5) == 0.0
    assert pass_at_k([5], [1], 5) == 1.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: pass_hat_k([3, 2], [1, 1], 3), r"k=3 is larger than the 2 trial\(s\) of task 1"),
        (lambda: pass_hat_k([3], [4], 1), "task 0: successes must be between 0 and its trials"),
        (lambda: pass_hat_k([3], [1], 0), "k must be a positive integer"),
        (lambda: pass_hat_k([], [], 1), "at least one task"),
        (lambda: pass_at_k([3, 3], [1], 1), "equal length"),
    ],
)
def test_pass_k_preconditions_have_readable_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@st.composite
def _tasks(draw):
    n_tasks = draw(st.integers(1, 12))
    n = [draw(st.integers(1, 10)) for _ in range(n_tasks)]
    c = [draw(st.integers(0, ni)) for ni in n]
    return n, c


@given(_tasks())
def test_pass_k_properties(tasks):
    n, c = tasks
    kmax = min(n)
    hats = [pass_hat_k(n, c, k) for k in range(1, kmax + 1)]
    ats = [pass_at_k(n, c, k) for k in range(1, kmax + 1)]
    # pass^1 == pass@1 == mean success rate; pass^k non-increasing, pass@k non-decreasing, pass@k >= pass^k
    assert hats[0] == pytest.approx(sum(ci / ni for ni, ci in zip(n, c, strict=True)) / len(n))
    assert ats[0] == pytest.approx(hats[0])
    for a, b in pairwise(hats):
        assert b <= a + 1e-12
    for a, b in pairwise(ats):
        assert b >= a - 1e-12
    for h, a in zip(hats, ats, strict=True):
        assert 0.0 <= h <= a + 1e-12 <= 1.0 + 1e-12
    # exact agreement with the factorial formula
    for k in range(1, kmax + 1):
        exact = sum(comb(ci, k) / comb(ni, k) for ni, ci in zip(n, c, strict=True)) / len(n)
        assert pass_hat_k(n, c, k) == pytest.approx(exact, rel=1e-9, abs=1e-12)
    # order of tasks does not matter
    assert pass_hat_k(n[::-1], c[::-1], 1) == pytest.approx(hats[0])
