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
