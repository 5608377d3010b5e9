"""Benchmark the calibration bootstrap: vectorised case resampling against a per-resample Python loop.

Data: 5,000 items (2,500 cases x 2 criteria), 3 experts and a judge, pass/fail labels with errors.
Both methods draw the *same* 2,000 resamples of cases (the multinomial weights of
:func:`judgekit.calibration.agreement.resample_weights`) and compute the same four statistics on each:

* Cohen's kappa, judge vs the experts' consensus;
* Krippendorff's alpha (nominal), judge vs consensus;
* Krippendorff's alpha (nominal), the three experts;
* Fleiss' kappa, the three experts.

The loop is what one writes without the additive-statistics trick: for every resample, gather the drawn
cases' items and call scikit-learn's ``cohen_kappa_score`` and the ``krippendorff`` package (and a numpy
Fleiss' kappa). The vectorised path is :func:`judgekit.calibration.agreement.bootstrap`: per-case counts
summed by one matrix product per block of resamples. The run checks that both give the same values
(to 1e-9) and prints the time ratio (target at least 10x). It then times a whole ``compute_agreement``
(every metric, every pair, every interval) at the same size.

Run: ``.venv/bin/python bench/bench_calibration.py`` (``--resamples`` and ``--cases`` for a quick run).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import krippendorff
import numpy as np
from sklearn.metrics import cohen_kappa_score

from judgekit.calibration.agreement import (
    BootstrapStat,
    _fleiss_from,
    _fleiss_rows,
    alpha_formula,
    bootstrap,
    build_ratings,
    coincidence_rows,
    compute_agreement,
    confusion_rows,
    consensus_codes,
    kappa_formula,
    resample_weights,
)
from judgekit.calibration.labels import parse_labels


def make_table(n_cases: int, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    lines = ["item_id,criterion,case_id,rater,label"]
    flips = {"e1": 0.04, "e2": 0.06, "e3": 0.08, "judge": 0.07}
    for c in range(n_cases):
        for crit in ("goal", "policy"):
            truth = "fail" if rng.random() < 0.3 else "pass"
            other = "pass" if truth == "fail" else "fail"
            for rater, p in flips.items():
                label = truth if rng.random() >= p else other
                lines.append(f"t{c},{crit},c{c},{rater},{label}")
    return ("\n".join(lines) + "\n").encode()


def fleiss_loop(codes: np.ndarray, n_values: int) -> float:
    m = codes.shape[0]
    counts = np.stack([(codes == v).sum(axis=0) for v in range(n_values)], axis=1).astype(float)
    full = counts.sum(axis=1) == m
    c = counts[full]
    p_i = ((c**2).sum(axis=1) - m) / (m * (m - 1))
    p_j = c.sum(axis=0) / (c.shape[0] * m)
    p_e = (p_j**2).sum()
    return float((p_i.mean() - p_e) / (1 - p_e))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=2500, help="cases (2 criteria each)")
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    table = parse_labels(make_table(args.cases), source=Path("bench.csv"))
    experts = ["e1", "e2", "e3"]
    ratings = build_ratings(table, ["judge", *experts])
    v = ratings.n_values
    judge = ratings.row("judge")
    ecodes = np.stack([ratings.row(e) for e in experts])
    consensus, _, _ = consensus_codes(ecodes, v)
    n_cases, n_items = len(ratings.cases), len(ratings.items)
    print(f"{n_items} items in {n_cases} cases, 3 experts + judge, {args.resamples} resamples")

    # ---- vectorised
    t0 = time.perf_counter()
    pair = np.stack([consensus, judge])
    stats = [
        BootstrapStat(
            "kappa", ratings.by_case(confusion_rows(consensus, judge, v)), kappa_formula(v, "none")
        ),
        BootstrapStat(
            "alpha_pair", ratings.by_case(coincidence_rows(pair, v)), alpha_formula(v, "nominal", None)
        ),
        BootstrapStat(
            "alpha_experts", ratings.by_case(coincidence_rows(ecodes, v)), alpha_formula(v, "nominal", None)
        ),
        BootstrapStat("fleiss", ratings.by_case(_fleiss_rows(ecodes, v)), lambda s: _fleiss_from(s, 3)),
    ]
    vec = bootstrap(stats, n_cases=n_cases, n_resamples=args.resamples, seed=args.seed)
    t_vec = time.perf_counter() - t0

    # ---- per-resample loop on the same resamples
    t0 = time.perf_counter()
    order = np.argsort(ratings.case_index, kind="stable")
    starts = np.searchsorted(ratings.case_index[order], np.arange(n_cases))
    ends = np.searchsorted(ratings.case_index[order], np.arange(n_cases), side="right")
    members = [order[s:e] for s, e in zip(starts, ends, strict=True)]
    loop: dict[str, list[float]] = {k: [] for k in ("kappa", "alpha_pair", "alpha_experts", "fleiss")}
    for block in resample_weights(n_cases, args.resamples, args.seed):
        for w in block:
            drawn = np.repeat(np.arange(n_cases), w.astype(np.int64))
            idx = np.concatenate([members[c] for c in drawn])
            j, c, e = judge[idx], consensus[idx], ecodes[:, idx]
            both = (j >= 0) & (c >= 0)
            loop["kappa"].append(float(cohen_kappa_score(c[both], j[both], labels=list(range(v)))))
            pdata = np.where(np.stack([c, j]) >= 0, np.stack([c, j]), np.nan).astype(float)
            loop["alpha_pair"].append(
                float(krippendorff.alpha(pdata, value_domain=list(range(v)), level_of_measurement="nominal"))
            )
            edata = np.where(e >= 0, e, np.nan).astype(float)
            loop["alpha_experts"].append(
                float(krippendorff.alpha(edata, value_domain=list(range(v)), level_of_measurement="nominal"))
            )
            loop["fleiss"].append(fleiss_loop(e, v))
    t_loop = time.perf_counter() - t0

    worst = 0.0
    for name, values in loop.items():
        vals, defined = vec[name]
        assert defined.all()
        diff = float(np.max(np.abs(vals - np.asarray(values))))
        worst = max(worst, diff)
        lo, hi = np.quantile(vals, [0.025, 0.975])
        print(f"  {name:14s} 95% interval [{lo:.4f}, {hi:.4f}]  max |vectorised - loop| = {diff:.1e}")
    if worst > 1e-9:
        raise SystemExit(f"vectorised and loop values differ by {worst}")
    print(f"vectorised bootstrap: {t_vec:8.3f} s")
    print(f"per-resample loop:    {t_loop:8.3f} s")
    print(f"ratio (loop / vectorised): {t_loop / t_vec:.1f}x  (target >= 10x)")

    t0 = time.perf_counter()
    report = compute_agreement(
        table, judge="judge", experts=experts, resamples=args.resamples, seed=args.seed
    )
    t_all = time.perf_counter() - t0
    n_boot = report.model_dump_json().count('"method":"bootstrap"')
    print(f"full compute_agreement (every metric and pair, {n_boot} bootstrap intervals): {t_all:.3f} s")


if __name__ == "__main__":
    main()
