"""A jury of three judges against each of its members, with correlated and with uncorrelated errors.

Not a speed benchmark: a seeded simulation (issue 37) of what ``judgekit calibrate --jury`` reports for a
jury (:mod:`judgekit.calibration.jury`): each member's agreement with the experts, the pairwise correlation
of the members' errors, the effective number of independent votes ``n / (1 + (n - 1) * max(rho, 0))``, the
jury's own agreement under each aggregation, and whether the jury pays (its kappa interval above its best
member's kappa).

Each world has ``n`` cases (one criterion each) whose true verdict is fail with probability 0.35; two
experts label the truth. Three members err with probabilities 0.10, 0.15 and 0.20. Whether a member errs
on an item is ``u < e`` for a uniform ``u``: with probability ``shared`` the item's own difficulty (one
``u`` for every member: they fail on the same hard items), otherwise the member's own draw. ``shared = 1``
is the same-family panel (errors as correlated as their rates allow), ``shared = 0`` the cross-family one
(independent errors).

The jury's verdicts are judgekit's own (:func:`judgekit.judges.jury.aggregate`); the weighted jury's weights
are fitted on half the cases (:func:`judgekit.calibration.jury.fit_jury_weights`) and every figure is
measured on the other half (:func:`judgekit.api.calibrate`, which leaves the development items out).

Run: ``.venv/bin/python bench/simulate_jury.py [--n 1200] [--seed 7]`` (seeded; about half a minute).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from judgekit.api.calibration import CalibrationOptions, calibrate
from judgekit.calibration.jury import development_items, fit_jury_weights
from judgekit.calibration.labels import VERDICT_SCALE, ItemKey, LabelRow, LabelTable
from judgekit.judges.jury import Jury, JuryMember, aggregate
from judgekit.verdict import Verdict

ERROR_RATES = {"a": 0.10, "b": 0.15, "c": 0.20}
EXPERTS = ("alice", "bob")
POLICY = "min_items: 50\nbootstrap: {resamples: 500, seed: 0}\n"


def world(n: int, shared: float, seed: int) -> tuple[list[str], dict[str, list[str]]]:
    """The truth per case and each member's verdicts."""
    rng = np.random.default_rng(seed)
    truth = ["fail" if x else "pass" for x in rng.uniform(size=n) < 0.35]
    difficulty = rng.uniform(size=n)
    use_shared = rng.uniform(size=n) < shared
    verdicts: dict[str, list[str]] = {}
    for name, rate in ERROR_RATES.items():
        own = rng.uniform(size=n)
        u = np.where(use_shared, difficulty, own)
        verdicts[name] = [
            ("pass" if t == "fail" else "fail") if wrong else t
            for t, wrong in zip(truth, u < rate, strict=True)
        ]
    return truth, verdicts


def table(truth: list[str], raters: dict[str, list[str]], keep: set[int] | None = None) -> LabelTable:
    rows = []
    for i, t in enumerate(truth):
        if keep is not None and i not in keep:
            continue
        item = ItemKey(f"i{i}", "g")
        labels = {**dict.fromkeys(EXPERTS, t), **{name: v[i] for name, v in raters.items()}}
        rows += [
            LabelRow(item=item, rater=r, label=lab, line=0, case_id=f"c{i}") for r, lab in labels.items()
        ]
    return LabelTable(scale=VERDICT_SCALE, rows=tuple(rows), sha256=f"sim-{len(rows)}")


def jury_votes(jury: Jury, members: dict[str, list[str]], n: int) -> list[str]:
    return [aggregate(jury, [Verdict(members[m.name][i]) for m in jury.members]).value for i in range(n)]


def fmt(est: object) -> str:
    value = getattr(est, "value", None)
    interval = getattr(est, "interval", None)
    if value is None:
        return "undefined"
    if interval is None:
        return f"{value:.3f}"
    return f"{value:.3f} [{interval.low:.3f}, {interval.high:.3f}]"


def scenario(label: str, n: int, shared: float, seed: int, folder: Path) -> None:
    truth, members = world(n, shared, seed)
    everything = table(truth, members)
    dev = development_items(everything, share=0.5, seed=seed)
    test = {i for i in range(n) if ItemKey(f"i{i}", "g") not in set(dev)}
    plain = [JuryMember(name=m, model=f"sim/{m}") for m in ERROR_RATES]
    weighted = fit_jury_weights(
        everything,
        Jury(aggregation="majority", members=plain),
        experts=EXPERTS,
        development=dev,
        labels_name="simulated",
    )
    print(f"\n### {label} (shared difficulty {shared:g}; {n} cases, {len(test)} measured)\n")
    print("| rater | weight | agreement | kappa | TPR | TNR | pays |")
    print("|---|---:|---|---|---|---|---|")
    juries = {
        "majority": Jury(aggregation="majority", members=plain),
        "any_fail": Jury(aggregation="any_fail", members=plain),
        "weighted": weighted,
    }
    first = None
    for name, jury in juries.items():
        votes = jury_votes(jury, members, n)
        result = calibrate(
            table(truth, {**members, "jury": votes}, None if jury.fit else test),
            options=CalibrationOptions(
                judge="jury", experts=EXPERTS, records=folder, jury=jury, policy=folder / "policy.yaml"
            ),
        ).result
        assert result.jury is not None
        if first is None:
            first = result.jury
            for m in first.members:
                a = m.agreement
                w = next(x.weight for x in weighted.members if x.name == m.name)
                print(
                    f"| member {m.name} (errs {ERROR_RATES[m.name]:.0%}) | {w:.2f} | "
                    f"{fmt(a.percent_agreement)} | {fmt(a.kappa['none'])} | "
                    f"{fmt(a.binary.tpr if a.binary else None)} | "
                    f"{fmt(a.binary.tnr if a.binary else None)} | |"
                )
        a = result.report.judge_vs_consensus
        print(
            f"| **jury, {name}** | | {fmt(a.percent_agreement)} | {fmt(a.kappa['none'])} | "
            f"{fmt(a.binary.tpr if a.binary else None)} | {fmt(a.binary.tnr if a.binary else None)} | "
            f"{'yes' if result.jury.pays else 'no'} |"
        )
    assert first is not None
    phis = ", ".join(f"{c.a}·{c.b} {c.phi:.3f}" for c in first.correlations if c.phi is not None)
    print(
        f"\nerror correlations (phi): {phis}; mean rho = {first.mean_error_correlation:.3f}; "
        f"effective votes = {first.effective_votes:.2f} of {len(first.members)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1200, help="cases per world")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "policy.yaml").write_text(POLICY)
        for label, shared in (("correlated errors", 1.0), ("half shared", 0.5), ("uncorrelated errors", 0.0)):
            scenario(label, args.n, shared, args.seed, folder)
    print(f"\n({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
