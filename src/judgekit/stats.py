"""Small, pure statistical helpers shared across judgekit: intervals for rates and paired tests.

Every function here is pure (no I/O, no global state), validates its inputs with one readable
``ValueError`` per precondition, and never returns NaN: a statistic that is undefined for its input is
refused with a ``ValueError`` that says why (callers turn that into an explicit undefined value).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from scipy import stats as _st

__all__ = [
    "bootstrap_ci",
    "clopper_pearson_interval",
    "mcnemar_exact",
    "sign_test",
    "wilson_interval",
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
    _check_confidence(confidence)
    z = float(_st.norm.ppf(1.0 - (1.0 - confidence) / 2.0))
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2.0 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denom
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return (low, high)


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
    low = 0.0 if successes == 0 else float(_st.beta.ppf(tail, successes, n - successes + 1))
    high = 1.0 if successes == n else float(_st.beta.ppf(1.0 - tail, successes + 1, n - successes))
    return (low, high)


def mcnemar_exact(b: int, c: int) -> float:
    """Exact (binomial) two-sided McNemar test on the discordant pairs of a paired comparison.

    Args:
        b: Pairs where the first condition succeeded and the second failed (``>= 0``).
        c: Pairs where the first condition failed and the second succeeded (``>= 0``).

    Returns:
        The two-sided p-value in (0, 1] under H0: a discordant pair is equally likely either way.
        With no discordant pairs (``b + c == 0``) there is no evidence of a difference and the p-value
        is 1.0.

    Raises:
        ValueError: When ``b`` or ``c`` is negative.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be non-negative, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    return float(min(1.0, _st.binomtest(min(b, c), n, 0.5, alternative="two-sided").pvalue))


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


def bootstrap_ci(
    data: Sequence[float] | np.ndarray,
    statistic: Callable[[np.ndarray], float] = np.mean,
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

__all__ += ["pass_at_k", "pass_hat_k", "pass_hat_k_per_task"]


def _check_trials(
    trials: Sequence[int] | np.ndarray, successes: Sequence[int] | np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    n = np.asarray(trials, dtype=np.int64)
    c = np.asarray(successes, dtype=np.int64)
    if n.ndim != 1 or c.ndim != 1 or n.shape != c.shape:
        raise ValueError(
            "trials and successes must be one-dimensional and of equal length, "
            f"got shapes {n.shape} and {c.shape}"
        )
    if n.size == 0:
        raise ValueError("at least one task is needed; pass^k is undefined for an empty set")
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if np.any(c < 0) or np.any(c > n):
        bad = int(np.flatnonzero((c < 0) | (c > n))[0])
        raise ValueError(f"task {bad}: successes must be between 0 and its trials ({n[bad]}), got {c[bad]}")
    if np.any(n < k):
        bad = int(np.flatnonzero(n < k)[0])
        raise ValueError(
            f"k={k} is larger than the {n[bad]} trial(s) of task {bad} (and {int(np.sum(n < k)) - 1} more); "
            "pass^k needs at least k trials of every task"
        )
    return n, c


def pass_hat_k_per_task(
    trials: Sequence[int] | np.ndarray, successes: Sequence[int] | np.ndarray, k: int
) -> np.ndarray:
    """Per task, the unbiased estimate of the chance that k fresh trials all succeed: C(c, k) / C(n, k).

    Computed as the product ``prod_{i<k} (c - i) / (n - i)``, which never overflows (no factorials).

    Args:
        trials: Trials of each task (``n_i >= k``).
        successes: Successful trials of each task (``0 <= c_i <= n_i``).
        k: Number of trials that must all succeed (``>= 1``).

    Returns:
        A float array in [0, 1], one value per task; 1 exactly when ``c_i == n_i``, 0 when ``c_i < k``.

    Raises:
        ValueError: On mismatched shapes, no tasks, ``k < 1``, successes outside ``[0, n_i]``, or a task with
            fewer than ``k`` trials (pass^k is undefined there; the message names the task's position).
    """
    n, c = _check_trials(trials, successes, k)
    out = np.ones(n.shape, dtype=float)
    for i in range(int(k)):
        out *= np.clip(c - i, 0, None) / (n - i)
    return out


def pass_hat_k(trials: Sequence[int] | np.ndarray, successes: Sequence[int] | np.ndarray, k: int) -> float:
    """pass^k (τ-bench): the chance that all of k trials of a task succeed, averaged over tasks.

    ``pass^k = mean over tasks of C(c, k) / C(n, k)`` with n trials and c successes per task. pass^1 is the
    mean per-task success rate; pass^k falls as k grows unless tasks pass reliably. A task that passes 5 of
    8 times contributes 0.625 to pass^1 but only 0.018 to pass^5 and 0 to pass^6.

    Args:
        trials: Trials of each task (``n_i >= k``).
        successes: Successful trials of each task.
        k: Number of trials that must all succeed (``>= 1``).

    Returns:
        pass^k in [0, 1]; higher is better. For τ-bench's gpt-4o airline trajectories (50 tasks × 4 trials)
        it is 0.420, 0.273, 0.220, 0.200 for k = 1..4.

    Raises:
        ValueError: On the preconditions of :func:`pass_hat_k_per_task` (k larger than a task's trials
            leaves pass^k undefined; callers report that as undefined).
    """
    return float(np.mean(pass_hat_k_per_task(trials, successes, k)))


def pass_at_k(trials: Sequence[int] | np.ndarray, successes: Sequence[int] | np.ndarray, k: int) -> float:
    """pass@k: the chance that at least one of k trials of a task succeeds, averaged over tasks.

    The unbiased estimator of Chen et al. (2021): ``1 - C(n - c, k) / C(n, k)`` per task, computed as
    ``1 - prod_{i<k} (n - c - i) / (n - i)``.

    Args:
        trials: Trials of each task (``n_i >= k``).
        successes: Successful trials of each task.
        k: Number of attempts (``>= 1``).

    Returns:
        pass@k in [0, 1]; higher is better; pass@1 equals pass^1, and pass@k >= pass^k.

    Raises:
        ValueError: On the preconditions of :func:`pass_hat_k_per_task`.
    """
    n, c = _check_trials(trials, successes, k)
    fail_all = np.ones(n.shape, dtype=float)
    for i in range(int(k)):
        fail_all *= np.clip(n - c - i, 0, None) / (n - i)
    return float(np.mean(1.0 - fail_all))
