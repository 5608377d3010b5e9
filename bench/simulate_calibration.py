"""Simulations behind the calibration methods' guarantees (issue 18), printed, seeded, about a minute.

Not a speed benchmark: it measures whether the intervals and the cascade keep their promises.

* Coverage of the Lee et al. corrected pass rate (adjusted Wald) beside the plain delta-method interval
  (``beyond.rogan_gladen``) on the same draws, at the paper's setting and with a small calibration set.
* Coverage and mean width of PPI++ beside the human-only interval (λ = 0) on the same draws.
* The selective cascade (cheap judge, strong judge, human queue): the promised agreement on the items the
  judges decide against the realised agreement on held-out items, over repetitions, and the coverage.

Run: ``.venv/bin/python bench/simulate_calibration.py [--reps 2000]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from judgekit.calibration.beyond import rogan_gladen
from judgekit.calibration.corrected import lee_corrected_rate, ppi_plus_plus_mean
from judgekit.calibration.selective import fit_cascade


def lee_coverage(
    reps: int, theta: float, *, q0: float, q1: float, n: int, m: int, seed: int
) -> tuple[float, float]:
    """Share of repetitions whose Lee interval, and whose delta-method interval, holds the true rate."""
    rng = np.random.default_rng(seed)
    p = (q0 + q1 - 1) * theta + (1 - q0)  # the judge's expected pass share
    lee = delta = 0
    for _ in range(reps):
        passed = int(rng.binomial(n, p))
        hits0, hits1 = int(rng.binomial(m, q0)), int(rng.binomial(m, q1))
        est = lee_corrected_rate(passed, n, q0_hits=hits0, m0=m, q1_hits=hits1, m1=m).estimate
        if est.interval is not None and est.interval.low <= theta <= est.interval.high:
            lee += 1
        # the same draws in failure orientation: failures flagged, TPR = q0, TNR = q1
        old = rogan_gladen(n - passed, n, tp=hits0, fn=m - hits0, tn=hits1, fp=m - hits1)
        if old.interval is not None and old.interval.low <= 1 - theta <= old.interval.high:
            delta += 1
    return lee / reps, delta / reps


def ppi_coverage(reps: int, theta: float, n: int, big_n: int, seed: int) -> tuple[float, float, float, float]:
    """Coverage and mean width of PPI++ and of the human-only interval, on the same draws."""
    rng = np.random.default_rng(seed)
    cover = [0, 0]
    width = [0.0, 0.0]
    for _ in range(reps):
        truth = rng.uniform(size=n + big_n) < theta
        judge = np.where(rng.uniform(size=n + big_n) < 0.85, truth, ~truth).astype(float)
        y, f, fu = truth[:n].astype(float), judge[:n], judge[n:]
        got = ppi_plus_plus_mean(y, f, fu)
        for i, est in enumerate((got.estimate, got.classical)):
            if est.interval is None:
                continue
            cover[i] += est.interval.low <= theta <= est.interval.high
            width[i] += est.interval.high - est.interval.low
    return cover[0] / reps, cover[1] / reps, width[0] / reps, width[1] / reps


def cascade_run(reps: int, target: float, delta: float) -> None:
    """Fit on 600 calibration items, route 5,000 held-out items; P(right | c) = a + b c, c ~ U(0, 1)."""
    judges = {"cheap": (0.6, 0.4), "strong": (0.8, 0.2)}
    met, agreements, coverages, human = 0, [], [], []
    for seed in range(reps):
        rng = np.random.default_rng(seed)

        def draw(n: int, rng: np.random.Generator = rng) -> dict[str, tuple[np.ndarray, np.ndarray]]:
            out = {}
            for name, (a, b) in judges.items():
                conf = rng.uniform(size=n)
                out[name] = (conf, rng.uniform(size=n) < a + b * conf)
            return out

        cal, test = draw(600), draw(5000)
        cascade = fit_cascade([(k, *cal[k]) for k in judges], target=target, delta=delta)
        reach = np.ones(5000, bool)
        kept = agreed = 0
        cov = []
        for stage in cascade.stages:
            conf, ok = test[stage.name]
            keep = reach & (conf >= stage.threshold) if stage.threshold is not None else np.zeros(5000, bool)
            kept += int(keep.sum())
            agreed += int(ok[keep].sum())
            cov.append(float(keep.mean()))
            reach &= ~keep
        realised = agreed / kept if kept else 1.0
        met += realised >= target
        agreements.append(realised)
        coverages.append(cov)
        human.append(float(reach.mean()))
    cov = np.mean(coverages, axis=0)
    print(
        f"cascade (target {target}, delta {delta}, {reps} repetitions): promised agreement >= {target} in >= "
        f"{1 - delta:.0%} of repetitions; realised in {met / reps:.1%}; mean held-out agreement "
        f"{np.mean(agreements):.3f} (lowest {np.min(agreements):.3f}); coverage cheap {cov[0]:.3f}, strong "
        f"{cov[1]:.3f}, human {np.mean(human):.3f}"
    )


def main() -> None:
    """Print every simulation's figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000, help="Repetitions per coverage setting.")
    args = parser.parse_args()
    start = time.perf_counter()
    print(f"Lee et al. adjusted Wald vs delta method, {args.reps} repetitions, nominal 95%:")
    for theta, q0, q1, n, m in (
        (0.2, 0.7, 0.9, 1000, 250),
        (0.5, 0.7, 0.9, 1000, 250),
        (0.8, 0.85, 0.75, 1000, 250),
        (0.95, 0.9, 0.7, 1000, 50),
        (0.5, 0.7, 0.9, 200, 30),
    ):
        lee, old = lee_coverage(args.reps, theta, q0=q0, q1=q1, n=n, m=m, seed=int(theta * 100) + m)
        print(
            f"  theta {theta}, q0 {q0}, q1 {q1}, n {n}, m0 = m1 = {m}: Lee {lee:.4f}, delta method {old:.4f}"
        )
    print(f"PPI++ vs human labels alone, {args.reps} repetitions, judge right 85% of the time:")
    for theta, n, big_n in ((0.3, 200, 2000), (0.7, 100, 1000), (0.9, 300, 3000)):
        c_ppi, c_h, w_ppi, w_h = ppi_coverage(args.reps, theta, n, big_n, seed=int(theta * 10) + n)
        print(
            f"  theta {theta}, {n} labelled, {big_n} unlabelled: coverage PPI++ {c_ppi:.4f}, human-only "
            f"{c_h:.4f}; mean width {w_ppi:.4f} vs {w_h:.4f} (ratio {w_ppi / w_h:.2f})"
        )
    cascade_run(300, target=0.9, delta=0.1)
    print(f"({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
