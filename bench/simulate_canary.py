"""Drift canaries: false alarms on a stable judge, power and delay on one that moved (issue 37).

Not a speed benchmark: a seeded simulation of the canary check's sequential test
(:func:`judgekit.calibration.drift.drift_test`, the function ``grade --canary`` and ``judge canary`` call)
over series of checks against one calibration record, beside the check a team would otherwise run: an
exact binomial test of each check's flips on its own at the same 1% ("rolling check"), with no account of
the checks before it.

The world of one series:

* a canary set of 200 labelled items, 35% of them failures; the judge's recorded verdict at calibration
  is wrong on 10% of the failures and 5% of the passes;
* a **stable** judge re-asked an item gives the recorded verdict, except on 6 of the 200 items, which are
  unstable (provider non-determinism) and flip on each re-ask with probability 1/2: a flip rate of 1.5%,
  under the null's tolerance of 2% (:data:`judgekit.calibration.drift.DEFAULT_TOLERANCE`); a row with 8
  unstable items puts the judge exactly at the null (2%), the hardest case the promise covers;
* a **drifted** judge also misses more failures: on failure items whose recorded verdict was right it now
  answers ``pass`` with a probability that raises its error rate on the failure class by 5, 10 or 20
  points (the kind of move a silent model swap makes on one class);
* each check re-asks ``n`` items drawn at random from the set (20, 50 or 100), a check per day for 30
  days.

Printed: the share of stable series with any alarm in 30 checks (promised at most 1% for judgekit's test);
for drift from the first check, the share detected within 30 checks and the median number of checks (and
re-asked items) to detection; and for drift that starts at check 11, the median delay after the change.

Run: ``.venv/bin/python bench/simulate_canary.py [--series 2000]`` (seeded; about a minute).
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

import numpy as np

from judgekit.calibration.drift import DEFAULT_ALPHA, DEFAULT_TOLERANCE, drift_test

SET_SIZE = 200
CHECKS = 30
FAIL_SHARE = 0.35
ERROR_FAIL, ERROR_PASS = 0.10, 0.05
UNSTABLE_ITEMS, UNSTABLE_FLIP = 6, 0.5
AT_THE_NULL = 8
"""Unstable items that put the stable judge's flip rate exactly at the null (8 / 200 x 1/2 = 2%)."""


@dataclass(frozen=True)
class CanarySet:
    """One series' canary set: each item's class, whether the recorded verdict was right, and stability."""

    fail: np.ndarray
    right: np.ndarray
    unstable: np.ndarray


def canary_set(rng: np.random.Generator, unstable_items: int) -> CanarySet:
    """Draw a canary set with exactly ``unstable_items`` unstable items (the judge's flip rate is fixed)."""
    fail = rng.uniform(size=SET_SIZE) < FAIL_SHARE
    wrong = rng.uniform(size=SET_SIZE) < np.where(fail, ERROR_FAIL, ERROR_PASS)
    unstable = np.zeros(SET_SIZE, dtype=bool)
    unstable[rng.choice(SET_SIZE, size=unstable_items, replace=False)] = True
    return CanarySet(fail=fail, right=~wrong, unstable=unstable)


def recheck(rng: np.random.Generator, canaries: CanarySet, n: int, shift: float) -> tuple[int, int, int, int]:
    """One check of ``n`` items: (flips, re-asked, new errors, re-asked items recorded right).

    ``shift`` is how far the failure-class error rate has moved (0 for a stable judge); "recorded right"
    items are those whose recorded verdict agreed with the consensus.
    """
    idx = rng.choice(SET_SIZE, size=n, replace=False)
    fail, right, unstable = canaries.fail[idx], canaries.right[idx], canaries.unstable[idx]
    flip = unstable & (rng.uniform(size=n) < UNSTABLE_FLIP)
    if shift > 0:
        # a recorded-right failure now passes with probability shift / (1 - ERROR_FAIL): the class's
        # error rate rises by `shift`
        flip |= fail & right & (rng.uniform(size=n) < shift / (1 - ERROR_FAIL))
    new_error = right & flip  # on a binary verdict, a right verdict that flips is now wrong
    return int(flip.sum()), n, int(new_error.sum()), int(right.sum())


def _binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    return float(sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1)))


def series(
    rng: np.random.Generator, n: int, shift: float, start: int, unstable_items: int = UNSTABLE_ITEMS
) -> tuple[int | None, int | None]:
    """The first check (1-based) at which judgekit's test and the rolling check alarm, or ``None``."""
    canaries = canary_set(rng, unstable_items)
    totals = [0, 0, 0, 0]
    ours: int | None = None
    rolling: int | None = None
    for check in range(1, CHECKS + 1):
        counts = recheck(rng, canaries, n, shift if check >= start else 0.0)
        totals = [a + b for a, b in zip(totals, counts, strict=True)]
        if ours is None:
            test = drift_test(
                flips=totals[0],
                rejudged=totals[1],
                new_errors=totals[2],
                right_before=totals[3],
                null_rate=DEFAULT_TOLERANCE,
                alpha=DEFAULT_ALPHA,
            )
            if test.detected:
                ours = check
        if rolling is None and _binomial_tail(counts[0], counts[1], DEFAULT_TOLERANCE) <= DEFAULT_ALPHA:
            rolling = check
        if ours is not None and rolling is not None:
            break
    return ours, rolling


def _median(values: list[int]) -> str:
    return f"{float(np.median(values)):.0f}" if values else "-"


def main() -> None:
    """Print the false-alarm, power and delay tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=2000, help="series per setting (default 2000)")
    parser.add_argument("--seed", type=int, default=20261205, help="seed (default 20261205)")
    args = parser.parse_args()
    began = time.perf_counter()
    print(
        f"canary simulation: {args.series} series of {CHECKS} checks per setting, seed {args.seed}; "
        f"alpha {DEFAULT_ALPHA:g} over the series, null flip rate {DEFAULT_TOLERANCE:g}; "
        f"stable flip rate {UNSTABLE_ITEMS / SET_SIZE * UNSTABLE_FLIP:.3f}\n"
    )
    print(
        "| items per check | failure-class error moved by | drift starts at check | "
        "judgekit: alarmed within 30 checks | median checks (items) to alarm | "
        "rolling check: alarmed | median checks |"
    )
    print("|---|---|---|---|---|---|---|")
    for n in (20, 50, 100):
        for shift, start in ((-1.0, 1), (0.0, 1), (0.05, 1), (0.10, 1), (0.20, 1), (0.10, 11), (0.20, 11)):
            rng = np.random.default_rng([args.seed, n, int(shift * 100) + 100, start])
            unstable = AT_THE_NULL if shift < 0 else UNSTABLE_ITEMS
            runs = [series(rng, n, max(shift, 0.0), start, unstable) for _ in range(args.series)]
            ours = [r[0] - start + 1 for r in runs if r[0] is not None and r[0] >= start]
            ours_early = sum(1 for r in runs if r[0] is not None and r[0] < start)
            rolling = [r[1] - start + 1 for r in runs if r[1] is not None and r[1] >= start]
            rolling_early = sum(1 for r in runs if r[1] is not None and r[1] < start)
            share = (len(ours) + ours_early) / args.series
            share_rolling = (len(rolling) + rolling_early) / args.series
            items = f"{_median(ours)} ({float(np.median(ours)) * n:.0f})" if ours else "-"
            moved = "stable (at the null)" if shift < 0 else "stable" if shift == 0 else f"+{shift:.2f}"
            early = f" ({ours_early} before the change)" if start > 1 else ""
            early_rolling = f" ({rolling_early} before the change)" if start > 1 else ""
            drifted = shift > 0
            print(
                f"| {n} | {moved} | {start if drifted else '-'} | {share:.3f}{early} | "
                f"{items if drifted else '-'} | {share_rolling:.3f}{early_rolling} | "
                f"{_median(rolling) if drifted else '-'} |"
            )
    print(f"\nelapsed {time.perf_counter() - began:.1f} s")


if __name__ == "__main__":
    main()
