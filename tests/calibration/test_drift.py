"""The drift canaries' sequential test: hand-computed e-values, the supermartingale step, the threshold."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate

from judgekit.calibration.drift import (
    DEFAULT_ALPHA,
    drift_test,
    log_mixture_e_value,
    mixture_e_value,
    null_rate,
)


@pytest.mark.parametrize(
    ("events", "trials", "p0", "expected"),
    [
        # (1/(1-p0)) * integral over [p0, 1] of (p/p0)^S ((1-p)/(1-p0))^(n-S) dp, by hand
        (1, 1, 0.5, 1.5),  # 2 * 2 * (1/2 - 1/8)
        (0, 1, 0.5, 0.5),  # 2 * 2 * (1/8)
        (2, 2, 0.5, 7 / 3),  # 2 * 4 * (1 - 1/8) / 3
        (1, 2, 0.5, 2 / 3),  # 2 * 4 * (1/12): p(1-p) over [1/2, 1] is 1/12
        (0, 0, 0.02, 1.0),  # before any item
        (1, 1, 0.1, (1 - 0.01) / 2 / 0.9 / 0.1),  # (1/0.9) * (1/0.1) * (1 - 0.1^2) / 2 = 5.5
    ],
)
def test_e_values_against_hand_computed_integrals(
    events: int, trials: int, p0: float, expected: float
) -> None:
    assert mixture_e_value(events, trials, p0) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("events", "trials", "p0"), [(3, 40, 0.02), (9, 30, 0.02), (0, 200, 0.05), (17, 60, 0.1)]
)
def test_e_values_against_numerical_integration(events: int, trials: int, p0: float) -> None:
    def ratio(p: float) -> float:
        return float((p / p0) ** events * ((1 - p) / (1 - p0)) ** (trials - events))

    value, _ = integrate.quad(ratio, p0, 1, epsabs=0, epsrel=1e-11, limit=200)
    assert mixture_e_value(events, trials, p0) == pytest.approx(value / (1 - p0), rel=1e-8)


@settings(max_examples=300, deadline=None)
@given(
    events=st.integers(0, 60),
    extra=st.integers(0, 60),
    p0=st.floats(0.005, 0.4),
    q_share=st.floats(0.0, 1.0),
)
def test_under_the_null_the_next_e_value_is_expected_no_larger(
    events: int, extra: int, p0: float, q_share: float
) -> None:
    """The supermartingale step behind Ville's inequality: E[E_{n+1} | past] <= E_n when q <= p0."""
    trials = events + extra
    q = q_share * p0  # any flip probability the null allows
    now = mixture_e_value(events, trials, p0)
    step = q * mixture_e_value(events + 1, trials + 1, p0) + (1 - q) * mixture_e_value(events, trials + 1, p0)
    assert step <= now * (1 + 1e-9)


@settings(max_examples=200, deadline=None)
@given(events=st.integers(0, 40), extra=st.integers(1, 40), p0=st.floats(0.005, 0.4))
def test_one_more_flip_is_more_evidence_than_one_more_stable_item(events: int, extra: int, p0: float) -> None:
    trials = events + extra
    assert mixture_e_value(events + 1, trials, p0) > mixture_e_value(events, trials, p0)


@settings(max_examples=200, deadline=None)
@given(
    flips=st.integers(0, 50),
    stable=st.integers(0, 50),
    alpha=st.floats(0.0001, 0.5),
    p0=st.floats(0.005, 0.4),
)
def test_drift_is_declared_exactly_when_a_stream_reaches_two_over_alpha(
    flips: int, stable: int, alpha: float, p0: float
) -> None:
    rejudged = flips + stable
    test = drift_test(
        flips=flips, rejudged=rejudged, new_errors=0, right_before=stable, null_rate=p0, alpha=alpha
    )
    assert test.threshold == pytest.approx(2 / alpha)
    assert test.flips.crossed == (test.flips.e_value >= 2 / alpha)
    assert test.detected == (test.flips.crossed or test.new_errors.crossed)
    assert not test.new_errors.crossed  # no new error: its e-value never exceeds 1
    assert test.new_errors.e_value <= 1.0


def test_the_default_is_one_percent_over_the_series_split_over_two_streams() -> None:
    test = drift_test(flips=0, rejudged=0, new_errors=0, right_before=0, null_rate=0.02)
    assert (DEFAULT_ALPHA, test.alpha, test.threshold) == (0.01, 0.01, 200.0)
    assert test.summary == (
        "flips 0/0 (null rate 0.02): e-value 1 < 200; new_errors 0/0 (null rate 0.02): e-value 1 < 200 "
        "(false-alarm rate 0.01 over the series)"
    )


def test_log_e_value_stays_finite_where_the_e_value_overflows() -> None:
    assert math.isinf(mixture_e_value(900, 1000, 0.02))
    assert 1000 < log_mixture_e_value(900, 1000, 0.02) < 5000


def test_the_null_rate_is_the_larger_of_the_tolerance_and_the_calibration_flip_rate() -> None:
    assert null_rate(0.02, None) == 0.02
    assert null_rate(0.02, 0.0) == 0.02
    assert null_rate(0.02, 0.07) == 0.07
    assert null_rate(0.02, 0.9) == 0.5  # a judge flipping most samples is tested against a coin at most


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: mixture_e_value(3, 2, 0.1), "events must be between 0 and trials (got 3 of 2)"),
        (lambda: mixture_e_value(1, 2, 0.0), "the null rate must be above 0 and below 1 (got 0.0)"),
        (lambda: null_rate(1.0, None), "the flip tolerance must be above 0 and below 1 (got 1.0)"),
        (
            lambda: drift_test(flips=0, rejudged=1, new_errors=0, right_before=1, null_rate=0.1, alpha=1.0),
            "alpha must be above 0 and below 1 (got 1.0)",
        ),
        (
            lambda: drift_test(flips=0, rejudged=1, new_errors=0, right_before=2, null_rate=0.1),
            "right_before cannot exceed rejudged",
        ),
    ],
)
def test_each_out_of_range_argument_is_refused(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call()  # type: ignore[operator]
