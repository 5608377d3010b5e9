"""Small, pure statistical helpers shared across judgekit: intervals for rates and paired tests.

Every function here is pure (no I/O, no global state), validates its inputs with one readable
``ValueError`` per precondition, and never returns NaN: a statistic that is undefined for its input is
refused with a ``ValueError`` that says why (callers turn that into an explicit undefined value), or, in
:func:`pass_k_curve`, given as ``None`` with a reason.

Repeated trials (pass^k, pass@k) take an explicit policy for undecided trials (:data:`UndecidedPolicy`,
``undecided="fail"`` or ``"exclude"``, in the manner of scikit-learn's ``zero_division``) and the per-task
undecided counts, both required, so no caller counts them one way by accident.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, model_serializer, model_validator

from judgekit import lazy

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy.module("numpy")  # imported at its first use: grading's start does not wait for it

__all__ = [
    "EXACT_BINOMIAL_MAX_N",
    "Estimate",
    "Interval",
    "Proportion",
    "binomial_half_two_sided",
    "bootstrap_ci",
    "clopper_pearson_interval",
    "mcnemar_exact",
    "sign_test",
    "wilson_interval",
    "wilson_mean_interval",
]


def _check_counts(successes: int, n: int) -> None:
    if n <= 0:
        raise ValueError(f"n must be a positive number of trials, got {n}")
    if successes < 0 or successes > n:
        raise ValueError(f"successes must be between 0 and n={n}, got {successes}")


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence}")


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion.

    Args:
        successes: Number of successes, ``0 <= successes <= n``.
        n: Number of trials, ``n >= 1``.
        confidence: Two-sided confidence level in (0, 1).

    Returns:
        ``(low, high)`` with ``0 <= low <= successes/n <= high <= 1``. For 40 of 50 at 95 % it is
        about ``(0.670, 0.888)``.

    Raises:
        ValueError: When ``n < 1``, ``successes`` is outside ``[0, n]`` or ``confidence`` is outside (0, 1).
            The rate is undefined for ``n == 0``; callers report that as undefined.
    """
    _check_counts(successes, n)
    return _wilson(successes / n, n, confidence)


_Z_95 = 1.959963984540054
"""``scipy.stats.norm.ppf(0.975)``, the normal quantile of a two-sided 95% interval, as SciPy gives it (to
the last bit: tests/test_stats.py holds it equal), so a report at 95% needs no SciPy import."""


def scipy_stats() -> Any:
    """``scipy.stats``, imported on first use (about a second of start-up a plain report does not pay)."""
    from scipy import stats

    return stats


def normal_quantile(confidence: float) -> float:
    """The two-sided normal quantile of ``confidence`` (``1.96`` at 0.95), as ``scipy.stats.norm.ppf``."""
    if confidence == 0.95:
        return _Z_95
    return float(scipy_stats().norm.ppf(1.0 - (1.0 - confidence) / 2.0))


def _wilson(p: float, n: int, confidence: float) -> tuple[float, float]:
    """The Wilson score interval at proportion ``p`` over ``n`` units (exact 0 and 1 at the ends)."""
    _check_confidence(confidence)
    z = normal_quantile(confidence)
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2.0 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denom
    low = 0.0 if p <= 0.0 else max(0.0, centre - half)
    high = 1.0 if p >= 1.0 else min(1.0, centre + half)
    return (min(low, p), max(high, p))


def wilson_mean_interval(mean: float, n: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """A conservative Wilson interval for the mean of ``n`` independent values in [0, 1].

    pass^k and pass@k are means over tasks of a per-task estimate in [0, 1] (tasks are the independent
    units; a task's trials are not). A value in [0, 1] with mean ``p`` has variance at most ``p (1 - p)``,
    the variance of a 0/1 value, so the Wilson score interval at ``p`` over ``n`` tasks is at least as wide
    as the normal interval of the mean, and it stays defined (not the zero-width interval of a sample
    standard deviation of 0) when every task passed.

    Args:
        mean: The mean, in [0, 1].
        n: How many values (tasks) it is the mean of, ``n >= 1``.
        confidence: Two-sided confidence level in (0, 1).

    Returns:
        ``(low, high)`` with ``0 <= low <= mean <= high <= 1``; for a mean of 0/1 values it is
        :func:`wilson_interval`.

    Raises:
        ValueError: When ``n < 1`` or ``mean`` is outside [0, 1].

    Examples:
        >>> wilson_mean_interval(0.8, 50) == wilson_interval(40, 50)
        True
        >>> [round(x, 3) for x in wilson_mean_interval(1.0, 12)]
        [0.758, 1.0]
    """
    if n < 1:
        raise ValueError(f"n must be a positive number of values, got {n}")
    if not 0.0 <= mean <= 1.0:
        raise ValueError(f"mean must be in [0, 1], got {mean}")
    return _wilson(mean, n, confidence)


def clopper_pearson_interval(successes: int, n: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Clopper–Pearson ("exact") interval for a binomial proportion.

    Args:
        successes: Number of successes, ``0 <= successes <= n``.
        n: Number of trials, ``n >= 1``.
        confidence: Two-sided confidence level in (0, 1); each tail gets ``(1 - confidence) / 2``.

    Returns:
        ``(low, high)``; ``low`` is 0 when ``successes == 0`` and ``high`` is 1 when ``successes == n``.

    Raises:
        ValueError: On the same preconditions as :func:`wilson_interval`.
    """
    _check_counts(successes, n)
    _check_confidence(confidence)
    tail = (1.0 - confidence) / 2.0
    beta = scipy_stats().beta
    low = 0.0 if successes == 0 else float(beta.ppf(tail, successes, n - successes + 1))
    high = 1.0 if successes == n else float(beta.ppf(1.0 - tail, successes + 1, n - successes))
    return (low, high)


def mcnemar_exact(b: int, c: int) -> float:
    """Exact (binomial) two-sided McNemar test on the discordant pairs of a paired comparison.

    Args:
        b: Pairs where the first condition succeeded and the second failed (``>= 0``).
        c: Pairs where the first condition failed and the second succeeded (``>= 0``).

    Returns:
        The two-sided p-value in [0, 1] under H0: a discordant pair is equally likely either way (0.0 only
        below the smallest double: :func:`binomial_half_two_sided`).
        With no discordant pairs (``b + c == 0``) there is no evidence of a difference and the p-value
        is 1.0.

    Raises:
        ValueError: When ``b`` or ``c`` is negative.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be non-negative, got b={b}, c={c}")
    return binomial_half_two_sided(min(b, c), b + c)


EXACT_BINOMIAL_MAX_N = 4096
"""Up to this many trials :func:`binomial_half_two_sided` sums the binomial coefficients exactly (integers)
and rounds once; beyond, it sums probabilities in floating point from one computed to full precision."""

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def binomial_half_two_sided(k: int, n: int) -> float:
    """The two-sided p-value of ``k`` successes in ``n`` trials of probability one half (exact binomial test).

    What ``scipy.stats.binomtest(k, n, 0.5).pvalue`` gives, without importing SciPy (half a second of a
    comparison's start-up): the probability of an outcome at most as likely as ``k``. With one half the
    distribution is symmetric, so that is twice the tail beyond ``k``, and 1 when ``k`` is the middle.

    Up to :data:`EXACT_BINOMIAL_MAX_N` trials the tail's binomial coefficients are summed as integers and
    the p-value is the exact fraction, correctly rounded. Beyond, the tail's largest probability is
    computed with Loader's saddle-point expansion (Stirling's series and the deviance, as in "Fast and
    accurate computation of binomial probabilities", 2000) and the others from it by the ratio of
    neighbours: a relative error of about ``1e-13`` (measured against exact fractions; ``1e-12`` at a
    million trials), where SciPy's own is about ``3e-14`` (``tests/test_stats.py`` holds both paths to
    exact fractions and to SciPy).

    Args:
        k: The successes (for a sign test, the smaller of the two counts), ``0 <= k <= n``.
        n: The trials, ``n >= 0``.

    Returns:
        The p-value in [0, 1]; 1.0 when ``n`` is 0 or ``k`` is the middle (``n // 2`` or, ``n`` odd, next
        to it). It is 0.0 only when it is below the smallest double, about ``5e-324`` (``k`` = 0 of 1,076
        trials or more, or 1,000 of 200,000).

    Raises:
        ValueError: When ``n`` is negative or ``k`` is outside ``[0, n]``.

    Examples:
        >>> binomial_half_two_sided(1, 11)  # 10 fixed against 1 broken: 2 * (1 + 11) / 2**11
        0.01171875
        >>> binomial_half_two_sided(3, 9), binomial_half_two_sided(4, 8)
        (0.5078125, 1.0)
    """
    if n < 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    m = min(k, n - k)
    if n - 2 * m <= 1:  # the middle outcome (or, n odd, one of the two): every outcome is as likely or less
        return 1.0
    if n <= EXACT_BINOMIAL_MAX_N:
        coefficient = total = 1
        for i in range(1, m + 1):  # C(n, i) from C(n, i - 1), exactly
            coefficient = coefficient * (n - i + 1) // i
            total += coefficient
        return min(1.0, (2 * total) / (1 << n))  # int / int: the exact fraction, correctly rounded
    tail = term = _half_binomial_pmf(m, n)
    i = m
    while i > 0 and term > tail * 1e-17:  # the smaller outcomes, each from its neighbour
        term *= i / (n - i + 1)
        tail += term
        i -= 1
    return min(1.0, 2.0 * tail)


def _half_binomial_pmf(x: int, n: int) -> float:
    """``P(X = x)`` for ``X ~ Binomial(n, 1/2)``, to full double precision (Loader's expansion)."""
    if x in (0, n):
        return math.ldexp(1.0, -n)
    middle = n / 2.0
    exponent = (
        _stirling_error(n)
        - _stirling_error(x)
        - _stirling_error(n - x)
        - _deviance(x, middle)
        - _deviance(n - x, middle)
    )
    return math.exp(exponent - _HALF_LOG_2PI - 0.5 * (math.log(x) + math.log1p(-x / n)))


_STIRLING_TERMS = (1.0 / 12, -1.0 / 360, 1.0 / 1260, -1.0 / 1680, 1.0 / 1188)
"""The series of :func:`_stirling_error` in ``1 / n``: the coefficients of ``n**-1, n**-3, ... n**-9``."""


def _stirling_error(n: int) -> float:
    """``log(n!) - log(sqrt(2 pi n) (n / e)**n)``: what Stirling's formula misses, for ``n >= 1``."""
    if n <= 15:  # exact factorial, one rounding of its logarithm
        return math.log(math.factorial(n)) - (n + 0.5) * math.log(n) + n - _HALF_LOG_2PI
    inverse = 1.0 / n
    square = inverse * inverse
    total = 0.0
    for coefficient in reversed(_STIRLING_TERMS):
        total = total * square + coefficient
    return total * inverse


def _deviance(x: float, mean: float) -> float:
    """``x log(x / mean) + mean - x``, without the cancellation of that formula when ``x`` is near ``mean``.

    Within a factor of three of ``mean`` it is summed as the series in ``v = (x - mean) / (x + mean)``
    (``|v| < 1/2``: about 28 terms at most), whose terms do not cancel; beyond, the formula loses at most
    a factor of two.
    """
    if abs(x - mean) < 0.5 * (x + mean):
        v = (x - mean) / (x + mean)
        total = (x - mean) * v
        step = 2.0 * x * v
        v2 = v * v
        j = 1
        while True:
            step *= v2
            more = total + step / (2 * j + 1)
            if more == total:
                return total
            total = more
            j += 1
    return x * math.log(x / mean) + mean - x


def sign_test(improved: int, worsened: int) -> float:
    """Two-sided exact sign test: are improvements and regressions equally likely?

    Ties (pairs that neither improved nor worsened) are left out by the caller.

    Args:
        improved: Number of pairs that improved (for example, cases fixed), ``>= 0``.
        worsened: Number of pairs that got worse (cases broken), ``>= 0``.

    Returns:
        The two-sided p-value; 1.0 when there are no untied pairs. 10 fixed vs 1 broken gives about
        0.012; 6 vs 3 gives about 0.51.

    Raises:
        ValueError: When a count is negative.
    """
    if improved < 0 or worsened < 0:
        raise ValueError(f"counts must be non-negative, got improved={improved}, worsened={worsened}")
    return mcnemar_exact(improved, worsened)


def _mean(values: np.ndarray) -> float:
    """``np.mean`` of the values: :func:`bootstrap_ci`'s default statistic (numpy is imported when used)."""
    return float(np.mean(values))


def bootstrap_ci(
    data: Sequence[float] | np.ndarray,
    statistic: Callable[[np.ndarray], float] = _mean,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval for a statistic of one sample of independent observations.

    The observations are resampled with replacement; for clustered data (criteria of one case),
    resample clusters instead (the calibration module does this).

    Args:
        data: The sample, one value per independent unit (at least one).
        statistic: Function from a 1-D array to a float; the mean by default.
        n_resamples: Number of bootstrap resamples (``>= 1``).
        confidence: Two-sided confidence level in (0, 1).
        seed: Seed of the random generator; the same seed gives the same interval.

    Returns:
        ``(low, high)``: the ``(1 - confidence) / 2`` and ``1 - (1 - confidence) / 2`` quantiles of the
        resampled statistic.

    Raises:
        ValueError: When the sample is empty, ``n_resamples < 1``, ``confidence`` is outside (0, 1), or the
            statistic is not finite on some resample.
    """
    arr = np.asarray(data, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError("data must be a non-empty one-dimensional sample")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    _check_confidence(confidence)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, arr.size, size=(n_resamples, arr.size))
    values = np.array([float(statistic(arr[row])) for row in idx])
    if not np.all(np.isfinite(values)):
        raise ValueError("the statistic is not finite on some bootstrap resample")
    tail = (1.0 - confidence) / 2.0
    return (float(np.quantile(values, tail)), float(np.quantile(values, 1.0 - tail)))


# --------------------------------------------------------------------------- repeated trials: pass^k, pass@k

__all__ += [
    "UNDECIDED_POLICIES",
    "PassKPoint",
    "UndecidedPolicy",
    "check_undecided_policy",
    "counted_trials",
    "pass_at_k",
    "pass_hat_k",
    "pass_hat_k_per_task",
    "pass_k_curve",
]

UndecidedPolicy = Literal["fail", "exclude"]
"""How a trial with no decided verdict (``error``, ``insufficient_information``, ``not_evaluated``) counts.

* ``"fail"``: it is a trial that did not pass. It stays in its task's trials ``n`` and adds nothing to the
  task's passes ``c``. The conservative choice, and tau-bench's (a reward other than 1 is a failure).
* ``"exclude"``: it is left out of ``n``, so the task is measured on its decided trials only. A task can
  then have fewer than k counted trials; pass^k and pass@k are undefined for it at that k. The scalar
  functions (:func:`pass_hat_k`, :func:`pass_at_k`, :func:`pass_hat_k_per_task`) refuse it with a
  ``ValueError`` naming the task; :func:`pass_k_curve` leaves it out at that k and counts it in
  :attr:`PassKPoint.tasks_left_out`.

There is no policy that counts an undecided trial as a pass (an error is never a pass). The optimistic
figure a report shows beside the value is a sensitivity bound, not a policy: the undecided trials moved
into the successes, under ``"fail"``.
"""

UNDECIDED_POLICIES: tuple[UndecidedPolicy, ...] = ("fail", "exclude")
"""Every :data:`UndecidedPolicy`, in the order the error messages and ``--undecided`` list them."""


def check_undecided_policy(undecided: object) -> UndecidedPolicy:
    """Validate an undecided-trial policy: the one place a pass^k caller's choice is checked.

    Args:
        undecided: The policy a caller named.

    Returns:
        The same policy, typed as :data:`UndecidedPolicy`.

    Raises:
        ValueError: When it is not one of :data:`UNDECIDED_POLICIES`.

    Examples:
        >>> check_undecided_policy("exclude")
        'exclude'
        >>> check_undecided_policy("pass")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: undecided must be 'fail' or 'exclude' (...), got 'pass'; an undecided trial is never ...
    """
    if isinstance(undecided, str) and undecided in UNDECIDED_POLICIES:
        return undecided
    raise ValueError(
        "undecided must be "
        + " or ".join(repr(p) for p in UNDECIDED_POLICIES)
        + f" (how a trial with no decided verdict counts), got {undecided!r}; "
        "an undecided trial is never counted as a pass"
    )


def _check_k(k: int, name: str = "k") -> None:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"{name} must be a positive integer, got {k!r}")


def _validated_counts(
    trials: Sequence[int] | np.ndarray,
    successes: Sequence[int] | np.ndarray,
    undecided_counts: Sequence[int] | np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = np.asarray(trials, dtype=np.int64)
    c = np.asarray(successes, dtype=np.int64)
    u = np.asarray(undecided_counts, dtype=np.int64)
    if n.ndim != 1 or c.ndim != 1 or u.ndim != 1 or not n.shape == c.shape == u.shape:
        raise ValueError(
            "trials, successes and undecided_counts must be one-dimensional and of equal length, "
            f"got shapes {n.shape}, {c.shape} and {u.shape}"
        )
    if np.any(n < 0):
        bad = int(np.flatnonzero(n < 0)[0])
        raise ValueError(f"task {bad}: trials must be non-negative, got {n[bad]}")
    if np.any(u < 0) or np.any(u > n):
        bad = int(np.flatnonzero((u < 0) | (u > n))[0])
        raise ValueError(
            f"task {bad}: undecided_counts must be between 0 and its trials ({n[bad]}), got {u[bad]}"
        )
    if np.any(c < 0) or np.any(c > n - u):
        bad = int(np.flatnonzero((c < 0) | (c > n - u))[0])
        raise ValueError(
            f"task {bad}: successes must be between 0 and its trials ({n[bad]}) less its undecided "
            f"trials ({u[bad]}), got {c[bad]}"
        )
    return n, c, u


def _counted(n: np.ndarray, u: np.ndarray, policy: UndecidedPolicy) -> np.ndarray:
    """The one rule of the policy: the trials of each task that count."""
    return n - u if policy == "exclude" else n


def counted_trials(
    trials: Sequence[int] | np.ndarray,
    successes: Sequence[int] | np.ndarray,
    *,
    undecided_counts: Sequence[int] | np.ndarray,
    undecided: UndecidedPolicy,
) -> tuple[np.ndarray, np.ndarray]:
    """Per task, the trials and successes that count under an undecided policy.

    pass^k, pass@k (here) and the run report's trial rates count trials by this one rule, so the policy
    means the same thing everywhere.

    Args:
        trials: All trials of each task, undecided ones included (``n_i >= 0``).
        successes: Trials of each task whose verdict is ``pass`` (``0 <= c_i <= n_i - u_i``).
        undecided_counts: Trials of each task with no decided verdict (``0 <= u_i <= n_i``).
        undecided: The policy (:data:`UndecidedPolicy`).

    Returns:
        ``(n, c)`` as int64 arrays, one entry per task: ``n_i`` is every trial under ``"fail"`` and the
        decided trials ``n_i - u_i`` under ``"exclude"``; ``c_i`` is the successes under both.

    Raises:
        ValueError: On an unknown policy, mismatched shapes, a negative count, or more successes and
            undecided trials than trials (the message names the task's position).

    Examples:
        >>> n, c = counted_trials([4, 4], [2, 3], undecided_counts=[1, 0], undecided="exclude")
        >>> n.tolist(), c.tolist()
        ([3, 4], [2, 3])
        >>> counted_trials([4, 4], [2, 3], undecided_counts=[1, 0], undecided="fail")[0].tolist()
        [4, 4]
    """
    policy = check_undecided_policy(undecided)
    n, c, u = _validated_counts(trials, successes, undecided_counts)
    return _counted(n, u, policy), c


def _ratios(n: np.ndarray, c: np.ndarray, k_max: int) -> Iterator[np.ndarray]:
    """For k = 1..k_max, per task ``prod_{i<k} (c - i) / (n - i)`` = C(c, k) / C(n, k).

    One vector step per k. The value is meaningful only where ``n >= k``; elsewhere it is NaN or 0 and the
    caller masks it (the division by zero there is silenced, never returned).
    """
    out = np.ones(n.shape, dtype=float)
    for i in range(k_max):
        with np.errstate(divide="ignore", invalid="ignore"):
            out = out * (np.clip(c - i, 0, None) / (n - i))
        yield out


def _at_k(n: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    for ratio in _ratios(n, c, k):
        last = ratio
    return last


def _scalar_counts(
    trials: Sequence[int] | np.ndarray,
    successes: Sequence[int] | np.ndarray,
    k: int,
    undecided_counts: Sequence[int] | np.ndarray,
    undecided: UndecidedPolicy,
) -> tuple[np.ndarray, np.ndarray]:
    policy = check_undecided_policy(undecided)
    n_all, c, u = _validated_counts(trials, successes, undecided_counts)
    if n_all.size == 0:
        raise ValueError("at least one task is needed; pass^k is undefined for an empty set")
    _check_k(k)
    n = _counted(n_all, u, policy)
    short = n < k
    if np.any(short):
        bad = int(np.flatnonzero(short)[0])
        more = int(np.sum(short)) - 1
        if policy == "exclude" and u[bad]:
            raise ValueError(
                f"k={k} is larger than the {n[bad]} decided trial(s) of task {bad} (and {more} more): its "
                f"{u[bad]} undecided trial(s) are excluded by undecided='exclude', and pass^k is undefined "
                "for a task with fewer than k counted trials; use pass_k_curve to leave such tasks out and "
                "count them, or undecided='fail'"
            )
        raise ValueError(
            f"k={k} is larger than the {n[bad]} trial(s) of task {bad} (and {more} more); "
            "pass^k needs at least k trials of every task"
        )
    return n, c


def pass_hat_k_per_task(
    trials: Sequence[int] | np.ndarray,
    successes: Sequence[int] | np.ndarray,
    k: int,
    *,
    undecided_counts: Sequence[int] | np.ndarray,
    undecided: UndecidedPolicy,
) -> np.ndarray:
    """Per task, the unbiased estimate of the chance that k fresh trials all succeed: C(c, k) / C(n, k).

    ``n`` and ``c`` are the task's counted trials and successes under the undecided policy
    (:func:`counted_trials`). Computed as the product ``prod_{i<k} (c - i) / (n - i)``, which never
    overflows (no factorials).

    Args:
        trials: All trials of each task, undecided ones included.
        successes: Passing trials of each task.
        k: Number of trials that must all succeed (``>= 1``).
        undecided_counts: Undecided trials of each task (``error``, ``insufficient_information``,
            ``not_evaluated``).
        undecided: How an undecided trial counts (:data:`UndecidedPolicy`); required, so every caller
            names it.

    Returns:
        A float array in [0, 1], one value per task; 1 exactly when every counted trial passed, 0 when
        fewer than ``k`` did.

    Raises:
        ValueError: On an unknown policy, mismatched shapes, no tasks, ``k < 1``, counts that do not add
            up, or a task with fewer than ``k`` counted trials (pass^k is undefined there; the message names
            the task's position and, under ``"exclude"``, its excluded undecided trials).

    Examples:
        >>> pass_hat_k_per_task([4, 4], [4, 2], 2, undecided_counts=[0, 1], undecided="fail").tolist()
        [1.0, 0.16666666666666666]
        >>> pass_hat_k_per_task([4, 4], [4, 2], 2, undecided_counts=[0, 1], undecided="exclude").tolist()
        [1.0, 0.3333333333333333]
    """
    n, c = _scalar_counts(trials, successes, k, undecided_counts, undecided)
    return _at_k(n, c, int(k))


def pass_hat_k(
    trials: Sequence[int] | np.ndarray,
    successes: Sequence[int] | np.ndarray,
    k: int,
    *,
    undecided_counts: Sequence[int] | np.ndarray,
    undecided: UndecidedPolicy,
) -> float:
    """pass^k (τ-bench): the chance that all of k trials of a task succeed, averaged over tasks.

    ``pass^k = mean over tasks of C(c, k) / C(n, k)`` with ``n`` counted trials and ``c`` successes per task
    (the undecided policy decides ``n``, see :data:`UndecidedPolicy`). pass^1 is the mean per-task success
    rate; pass^k falls as k grows unless tasks pass reliably. A task that passes 5 of 8 times contributes
    0.625 to pass^1 but only 0.018 to pass^5 and 0 to pass^6.

    Args:
        trials: All trials of each task, undecided ones included.
        successes: Passing trials of each task.
        k: Number of trials that must all succeed (``>= 1``).
        undecided_counts: Undecided trials of each task.
        undecided: How an undecided trial counts (:data:`UndecidedPolicy`); required.

    Returns:
        pass^k in [0, 1]; higher is better. For τ-bench's gpt-4o airline trajectories (50 tasks × 4 trials,
        none undecided, so both policies agree) it is 0.420, 0.273, 0.220, 0.200 for k = 1..4.

    Raises:
        ValueError: On the preconditions of :func:`pass_hat_k_per_task` (a task with fewer than k counted
            trials leaves pass^k undefined; :func:`pass_k_curve` leaves such tasks out instead).

    Examples:
        >>> pass_hat_k([8], [5], 1, undecided_counts=[0], undecided="fail")
        0.625
        >>> round(pass_hat_k([8], [5], 1, undecided_counts=[2], undecided="exclude"), 4)
        0.8333
    """
    return float(
        np.mean(
            pass_hat_k_per_task(trials, successes, k, undecided_counts=undecided_counts, undecided=undecided)
        )
    )


def pass_at_k(
    trials: Sequence[int] | np.ndarray,
    successes: Sequence[int] | np.ndarray,
    k: int,
    *,
    undecided_counts: Sequence[int] | np.ndarray,
    undecided: UndecidedPolicy,
) -> float:
    """pass@k: the chance that at least one of k trials of a task succeeds, averaged over tasks.

    The unbiased estimator of Chen et al. (2021): ``1 - C(n - c, k) / C(n, k)`` per task, computed as
    ``1 - prod_{i<k} (n - c - i) / (n - i)``, with ``n`` the counted trials under the undecided policy
    (under ``"fail"`` an undecided trial is one of the ``n - c`` misses).

    Args:
        trials: All trials of each task, undecided ones included.
        successes: Passing trials of each task.
        k: Number of attempts (``>= 1``).
        undecided_counts: Undecided trials of each task.
        undecided: How an undecided trial counts (:data:`UndecidedPolicy`); required.

    Returns:
        pass@k in [0, 1]; higher is better; pass@1 equals pass^1, and pass@k >= pass^k.

    Raises:
        ValueError: On the preconditions of :func:`pass_hat_k_per_task`.

    Examples:
        >>> round(pass_at_k([10], [3], 4, undecided_counts=[0], undecided="fail"), 4)
        0.8333
    """
    n, c = _scalar_counts(trials, successes, k, undecided_counts, undecided)
    return float(np.mean(1.0 - _at_k(n, n - c, int(k))))


@dataclass(frozen=True)
class PassKPoint:
    """pass^k and pass@k at one k, over the tasks that have at least k counted trials.

    Attributes:
        k: The number of trials (``>= 1``).
        pass_hat: pass^k in [0, 1] over the tasks used, or ``None`` when no task has k counted trials.
        pass_at: pass@k in [0, 1] over the same tasks, or ``None`` likewise.
        tasks_used: Tasks with at least k counted trials (every trial under ``"fail"``, decided trials
            under ``"exclude"``).
        tasks_left_out: The other tasks: pass^k is undefined for them at this k, so they are left out of
            the mean (never counted as 0 or 1) and counted here.
        reason: Why the values are ``None``, when they are; else ``None``.
    """

    k: int
    pass_hat: float | None
    pass_at: float | None
    tasks_used: int
    tasks_left_out: int
    reason: str | None = None


def pass_k_curve(
    trials: Sequence[int] | np.ndarray,
    successes: Sequence[int] | np.ndarray,
    k_max: int,
    *,
    undecided_counts: Sequence[int] | np.ndarray,
    undecided: UndecidedPolicy,
) -> tuple[PassKPoint, ...]:
    """pass^k and pass@k for k = 1..k_max, leaving out at each k the tasks with fewer than k counted trials.

    The form reports need when tasks have different trial counts, or when ``undecided="exclude"`` takes some
    of a task's trials away: where :func:`pass_hat_k` refuses, this leaves the task out at that k and counts
    it. Where every task has at least k counted trials the values equal :func:`pass_hat_k` and
    :func:`pass_at_k` exactly (the same running product, one vector step per k).

    Args:
        trials: All trials of each task, undecided ones included (no task is allowed too).
        successes: Passing trials of each task.
        k_max: Largest k (``>= 1``).
        undecided_counts: Undecided trials of each task.
        undecided: How an undecided trial counts (:data:`UndecidedPolicy`); required.

    Returns:
        One :class:`PassKPoint` per k, in order.

    Raises:
        ValueError: On an unknown policy, ``k_max < 1``, mismatched shapes or counts that do not add up.

    Examples:
        >>> curve = pass_k_curve([4, 2], [3, 2], 3, undecided_counts=[0, 0], undecided="fail")
        >>> [(p.k, p.pass_hat, p.tasks_used, p.tasks_left_out) for p in curve]
        [(1, 0.875, 2, 0), (2, 0.75, 2, 0), (3, 0.25, 1, 1)]
    """
    n, c = counted_trials(trials, successes, undecided_counts=undecided_counts, undecided=undecided)
    _check_k(k_max, "k_max")
    what = "decided trials" if undecided == "exclude" else "trials"
    out: list[PassKPoint] = []
    for k, (hat, miss) in enumerate(
        zip(_ratios(n, c, k_max), _ratios(n, n - c, k_max), strict=True), start=1
    ):
        use = n >= k
        used = int(use.sum())
        if used:
            out.append(
                PassKPoint(
                    k=k,
                    pass_hat=float(np.mean(hat[use])),
                    pass_at=float(np.mean(1.0 - miss[use])),
                    tasks_used=used,
                    tasks_left_out=int(n.size) - used,
                )
            )
        else:
            out.append(
                PassKPoint(
                    k=k,
                    pass_hat=None,
                    pass_at=None,
                    tasks_used=0,
                    tasks_left_out=int(n.size),
                    reason=f"no task has {k} {what}" if n.size else "no tasks",
                )
            )
    return tuple(out)


# --------------------------------------------------------------------------- estimates


class _Frozen(BaseModel):
    """Immutable, unknown fields rejected: :class:`judgekit.verdict.FrozenModel`'s rules (a sibling layer)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Interval(_Frozen):
    """A two-sided confidence interval.

    Attributes:
        low: Lower bound (``<= high``).
        high: Upper bound.
        confidence: Two-sided confidence level in (0, 1).
        method: How it was computed: ``wilson`` (rates), ``bootstrap`` (percentile bootstrap over cases),
            ``newcombe``, ``prediction-powered``, ``normal``...
        note: Anything a reader should know (resamples on which the statistic was undefined), or ``None``.
    """

    low: float
    high: float
    confidence: float
    method: str
    note: str | None = None


class Estimate(_Frozen):
    """A statistic with its sample size, interval and, when undefined, the reason.

    Attributes:
        value: The point value, or ``None`` when the statistic is undefined for this data (never NaN).
        n: The number of items (or, for rates, the denominator) it was computed on; ``>= 0``.
        undefined_reason: Why ``value`` is ``None``; ``None`` when it is defined.
        interval: The confidence interval, or ``None`` when none could be computed
            (``interval_reason`` says why).
        interval_reason: Why there is no interval, when there is none.
    """

    value: float | None
    n: int = 0
    undefined_reason: str | None = None
    interval: Interval | None = None
    interval_reason: str | None = None

    @property
    def defined(self) -> bool:
        """True when the statistic has a value."""
        return self.value is not None

    def __str__(self) -> str:
        """The estimate as a person reads it: value, interval and n, or why it is undefined.

        Examples:
            >>> print(Estimate(value=0.9692, n=65, interval=Interval(low=0.8946, high=0.9915,
            ...     confidence=0.95, method="wilson")))
            0.969 (95% CI 0.895 to 0.992, n=65)
            >>> print(Estimate(value=None, n=0, undefined_reason="no positive items"))
            undefined (no positive items)
        """
        if self.value is None:
            return f"undefined ({self.undefined_reason or 'no value'})"
        if self.interval is None:
            why = f"; no interval: {self.interval_reason}" if self.interval_reason else ""
            return f"{self.value:.3f} (n={self.n}{why})"
        i = self.interval
        return f"{self.value:.3f} ({i.confidence:.0%} CI {i.low:.3f} to {i.high:.3f}, n={self.n})"

    def with_interval(self, interval: Interval | None, reason: str | None = None) -> Estimate:
        """Return a copy carrying ``interval`` (or the reason there is none)."""
        return self.model_copy(update={"interval": interval, "interval_reason": reason})


class Proportion(Estimate):
    """A proportion, ``successes / n``, with its 95 % Wilson interval and its bounds under undecided units.

    An :class:`Estimate` (``value`` is the rate, ``None`` with its ``undefined_reason`` when ``n`` is 0)
    that also counts the units (trials or tasks) whose outcome rests on an undecided trial. It is written
    (and read) in the run report's flat shape: ``successes``, ``n``, ``rate``, ``low``, ``high``,
    ``undecided``, ``undecided_low``, ``undecided_high``; the undefined reason is carried, not written.

    Attributes:
        successes: Numerator, ``0 <= successes <= n``.
        undecided: Units whose outcome rests on an undecided trial (``>= 0``); the bounds below differ
            from each other only when it is positive.
        undecided_low: The rate over every unit, undecided ones included, when every undecided trial
            counts as not passing; in [0, 1], ``None`` when there is nothing to count. It is the
            missing-data bound, not a confidence limit: the Wilson interval is about sampling, this about
            the verdicts nobody reached.
        undecided_high: The same rate when every undecided trial counts as a pass (a sensitivity bound,
            never a policy); ``undecided_low <= undecided_high``.
    """

    successes: int
    undecided: int = 0
    undecided_low: float | None = None
    undecided_high: float | None = None

    @classmethod
    def wilson(
        cls,
        successes: int,
        n: int,
        *,
        what: str = "units",
        undecided: int = 0,
        undecided_low: float | None = None,
        undecided_high: float | None = None,
    ) -> Proportion:
        """The proportion with its 95 % Wilson interval, undefined (with the reason) when ``n`` is 0.

        Args:
            successes: Numerator.
            n: Denominator (``<= 0``: undefined).
            what: What ``n`` counts, for the undefined reason (``"counted trials"``).
            undecided: Units resting on an undecided trial.
            undecided_low: The rate with every undecided trial failing, or ``None``.
            undecided_high: The rate with every undecided trial passing, or ``None``.
        """
        common = {
            "successes": successes,
            "n": n,
            "undecided": undecided,
            "undecided_low": undecided_low,
            "undecided_high": undecided_high,
        }
        if n <= 0:
            return cls(
                value=None,
                undefined_reason=f"no {what} to compute it on",
                interval_reason="the statistic is undefined",
                **common,
            )
        low, high = wilson_interval(successes, n)
        return cls(
            value=successes / n,
            interval=Interval(low=low, high=high, confidence=0.95, method="wilson"),
            **common,
        )

    @property
    def rate(self) -> float | None:
        """``successes / n``, or ``None`` when ``n`` is 0."""
        return self.value

    @property
    def low(self) -> float | None:
        """The Wilson interval's lower bound, or ``None`` when undefined."""
        return self.interval.low if self.interval is not None else None

    @property
    def high(self) -> float | None:
        """The Wilson interval's upper bound, or ``None`` when undefined."""
        return self.interval.high if self.interval is not None else None

    @model_validator(mode="before")
    @classmethod
    def _from_flat(cls, data: Any) -> Any:
        """Read the flat shape (``rate``, ``low``, ``high``) the run report writes."""
        if not isinstance(data, dict) or "value" in data:
            return data
        out = {k: v for k, v in data.items() if k not in ("rate", "low", "high")}
        rate, low, high = data.get("rate"), data.get("low"), data.get("high")
        out["value"] = rate
        if rate is None:
            out.setdefault("undefined_reason", "no units to compute it on")
            out.setdefault("interval_reason", "the statistic is undefined")
        elif low is not None and high is not None:
            out["interval"] = Interval(low=low, high=high, confidence=0.95, method="wilson")
        return out

    @model_serializer(mode="plain")
    def _flat(self) -> dict[str, Any]:
        """Write the run report's flat shape (its JSON schema is unchanged)."""
        return {
            "successes": self.successes,
            "n": self.n,
            "rate": self.value,
            "low": self.low,
            "high": self.high,
            "undecided": self.undecided,
            "undecided_low": self.undecided_low,
            "undecided_high": self.undecided_high,
        }
