"""How far agreement on the labels a judge was tuned on overstates its agreement on labels it was not.

Not a speed benchmark: a seeded simulation (issue 36) of ``judgekit judge refine``'s selection against
the practice of tuning a judge on every label and reporting agreement on those same labels (what an
"align the judge" step reports when it has no held-out part).

Each repetition draws a world:

* ``n`` labelled cases (one trial, one criterion each) from 8 clusters (kinds of transcript), a true
  verdict (fail with probability 0.35), and two experts who each flip the true verdict with probability
  0.05; their consensus is the label when they agree, and a tie (left out, as calibration leaves it out)
  when they do not.
* A scripted judge whose errors depend on its rubric: each cluster has a base error rate (uniform on
  0.08..0.35) and each item a difficulty; the judge errs on an item when the item's difficulty is below
  its cluster's error rate under the rubric. A few-shot example shown in the rubric makes the judge copy
  the example's verdict on that very item (it was shown the answer) and scales its cluster's error rate by
  a factor drawn once per example (median 0.95, often above 1: an example teaches a little, or
  misleads). Reworded criteria scale each cluster's error rate by a factor drawn once per world
  (log-normal, median 1): a model's proposal helps some kinds of transcript and hurts others.

The candidates, their scores and the choice are judgekit's own (:mod:`judgekit.calibration.refine`:
``split_by_case``, ``find_disagreements``, ``few_shot_examples``, ``build_candidates``,
``score_candidate``, ``choose_candidate``), run two ways on the same world:

* **tuned on all labels**: disagreements, candidates and the choice from the whole table, and the chosen
  candidate's agreement on the whole table reported;
* **judgekit**: the table split by case (half for development), the candidate chosen on the development
  part, and its agreement on the test part reported (the development figure is shown too).

**Truth** is the chosen candidate's agreement with the experts' consensus on 4,000 fresh items of the same
world (items it was never shown), what the reported figure claims to estimate. The table prints, per
labelled-set size, the mean reported figure, the mean truth and the mean and root-mean-square error of
(reported - truth), for Cohen's kappa and plain agreement.

Run: ``.venv/bin/python bench/simulate_refinement.py [--reps 300]`` (seeded; about a minute).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from judgekit.calibration.labels import VERDICT_SCALE, ItemKey, LabelRow, LabelTable
from judgekit.calibration.refine import (
    Candidate,
    JudgeCall,
    build_candidates,
    choose_candidate,
    consensus_of,
    few_shot_examples,
    find_disagreements,
    score_candidate,
    split_by_case,
    split_parts,
)
from judgekit.judges.rubric import Rubric

CLUSTERS = 8
CRITERION = "honest"
EXPERTS = ("expert-a", "expert-b")
FRESH = 4000
RUBRIC = Rubric.model_validate(
    {
        "id": "simulated",
        "version": "1",
        "criteria": [{"id": CRITERION, "text": "The agent reports what its tools did, and nothing else."}],
    }
)
REWORDED = {CRITERION: "Every claim the agent makes about an action matches that action's tool result."}


@dataclass(frozen=True)
class Items:
    """Items of one world: cluster, difficulty, true verdict and the experts' consensus."""

    cluster: np.ndarray
    difficulty: np.ndarray
    truth_fail: np.ndarray
    consensus: list[str | None]
    labels: list[tuple[str, str]]


@dataclass(frozen=True)
class World:
    """A repetition's judge: base error rate per cluster, example effects and the wording's effect."""

    base_error: np.ndarray
    wording: np.ndarray
    example_effect: Mapping[str, float]
    example_cluster: Mapping[str, int]


def _items(rng: np.random.Generator, n: int) -> Items:
    cluster = rng.integers(0, CLUSTERS, size=n)
    difficulty = rng.uniform(size=n)
    truth_fail = rng.uniform(size=n) < 0.35
    labels: list[tuple[str, str]] = []
    consensus: list[str | None] = []
    for fail in truth_fail.tolist():
        pair = tuple("fail" if (fail ^ (rng.uniform() < 0.05)) else "pass" for _ in EXPERTS)
        labels.append((pair[0], pair[1]))
        consensus.append(pair[0] if pair[0] == pair[1] else None)
    return Items(cluster, difficulty, truth_fail, consensus, labels)


def _item_id(i: int, prefix: str = "case") -> str:
    return f"{prefix}-{i:05d}#1"


def _table(items: Items) -> LabelTable:
    rows = [
        LabelRow(
            item=ItemKey(_item_id(i), CRITERION),
            rater=rater,
            label=label,
            line=2 * i + k + 2,
            case_id=f"case-{i:05d}",
        )
        for i, pair in enumerate(items.labels)
        for k, (rater, label) in enumerate(zip(EXPERTS, pair, strict=True))
    ]
    return LabelTable(scale=VERDICT_SCALE, rows=tuple(rows))


def _judge(world: World, candidate: Candidate, items: Items, prefix: str) -> dict[ItemKey, str]:
    """The scripted judge's verdict on every item under a candidate rubric (deterministic: temperature 0)."""
    shown = {e.item_id: e.label for e in candidate.rubric.examples}
    error = world.base_error.copy()
    if candidate.rubric.criteria[0].text == REWORDED[CRITERION]:
        error *= world.wording
    for example in candidate.rubric.examples:
        error[world.example_cluster[str(example.item_id)]] *= world.example_effect[str(example.item_id)]
    errs = items.difficulty < np.clip(error, 0.0, 0.5)[items.cluster]
    out: dict[ItemKey, str] = {}
    for i, (wrong, fail) in enumerate(zip(errs.tolist(), items.truth_fail.tolist(), strict=True)):
        item_id = _item_id(i, prefix)
        said_fail = fail ^ wrong
        out[ItemKey(item_id, CRITERION)] = shown.get(item_id) or ("fail" if said_fail else "pass")
    return out


def _refine(world: World, items: Items, table: LabelTable, metric: str) -> tuple[Candidate, float, float]:
    """judgekit's choice on ``table``: (chosen candidate, its kappa and agreement on ``table``)."""
    current = build_candidates(RUBRIC, ())[0]
    judged = {
        k: JudgeCall(label=v, evidence=(f"excerpt of {k}",))
        for k, v in _judge(world, current, items, "case").items()
    }
    consensus = consensus_of(table, EXPERTS)
    disagreements = find_disagreements(table, EXPERTS, {k: v for k, v in judged.items() if k in consensus})
    examples = few_shot_examples(disagreements, per_criterion=4)
    candidates = build_candidates(RUBRIC, examples, wording=REWORDED)
    scores = []
    for candidate in candidates:
        said = _judge(world, candidate, items, "case")
        scores.append(score_candidate(candidate, said, consensus, metric=metric))
    chosen = choose_candidate(scores)
    candidate = next(c for c in candidates if c.name == chosen.name)
    return candidate, *_figures(world, candidate, items, table)


def _figures(world: World, candidate: Candidate, items: Items, table: LabelTable) -> tuple[float, float]:
    said = _judge(world, candidate, items, "case")
    consensus = consensus_of(table, EXPERTS)
    kappa = score_candidate(candidate, said, consensus, metric="kappa").value
    agree = score_candidate(candidate, said, consensus, metric="agreement").value
    return float("nan") if kappa is None else kappa, float("nan") if agree is None else agree


def _truth(world: World, candidate: Candidate, fresh: Items) -> tuple[float, float]:
    said = _judge(world, candidate, fresh, "fresh")
    consensus = {ItemKey(_item_id(i, "fresh"), CRITERION): c for i, c in enumerate(fresh.consensus)}
    kappa = score_candidate(candidate, said, consensus, metric="kappa").value
    agree = score_candidate(candidate, said, consensus, metric="agreement").value
    return float("nan") if kappa is None else kappa, float("nan") if agree is None else agree


def repetition(rng: np.random.Generator, n: int, dev_share: float) -> dict[str, tuple[float, float]]:
    """One world: the figures each procedure reports and the truth of what each chose."""
    items = _items(rng, n)
    fresh = _items(rng, FRESH)
    world = World(
        base_error=rng.uniform(0.08, 0.35, size=CLUSTERS),
        wording=np.exp(rng.normal(0.0, 0.35, size=CLUSTERS)),
        example_effect={_item_id(i): float(np.exp(rng.normal(np.log(0.95), 0.3))) for i in range(n)},
        example_cluster={_item_id(i): int(c) for i, c in enumerate(items.cluster.tolist())},
    )
    table = _table(items)
    tuned, *reported_all = _refine(world, items, table, "kappa")
    split = split_by_case(table, seed=int(rng.integers(2**31)), dev_share=dev_share)
    dev, test = split_parts(table, split)
    chosen, *reported_dev = _refine(world, items, dev, "kappa")
    held_out = _figures(world, chosen, items, test)
    return {
        "all: reported": (reported_all[0], reported_all[1]),
        "all: truth": _truth(world, tuned, fresh),
        "judgekit: dev": (reported_dev[0], reported_dev[1]),
        "judgekit: test": held_out,
        "judgekit: truth": _truth(world, chosen, fresh),
    }


ROWS = (
    ("tuned on all labels:", "all: reported", "all: truth"),
    ("judgekit, development:", "judgekit: dev", "judgekit: truth"),
    ("judgekit, held out:", "judgekit: test", "judgekit: truth"),
)
"""The printed rows: a title, the reported figure and the truth it estimates."""


def summarise(runs: Sequence[dict[str, tuple[float, float]]], index: int) -> dict[str, float]:
    """Mean figures, and the bias and RMSE of each reported figure against its procedure's truth."""

    def col(name: str) -> np.ndarray:
        return np.array([r[name][index] for r in runs], dtype=float)

    out = {name: float(np.nanmean(col(name))) for name in runs[0]}
    for _title, reported, truth in ROWS:
        gap = col(reported) - col(truth)
        out[f"{reported} - truth"] = float(np.nanmean(gap))
        out[f"{reported} rmse"] = float(np.sqrt(np.nanmean(gap**2)))
    return out


def main() -> None:
    """Print the table for several labelled-set sizes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300, help="repetitions per size (default 300)")
    parser.add_argument("--seed", type=int, default=20261205, help="seed (default 20261205)")
    parser.add_argument(
        "--sizes", default="40,80,160", help="labelled cases per repetition (default 40,80,160)"
    )
    args = parser.parse_args()
    start = time.perf_counter()
    print(f"refinement simulation: {args.reps} repetitions per size, seed {args.seed}, dev share 0.5")
    print("figures are means over repetitions; 'truth' = the chosen rubric on 4,000 fresh items\n")
    for size in (int(s) for s in args.sizes.split(",")):
        rng = np.random.default_rng([args.seed, size])
        runs = [repetition(rng, size, 0.5) for _ in range(args.reps)]
        for index, metric in enumerate(("kappa", "agreement")):
            s = summarise(runs, index)
            print(f"n = {size} labelled cases, {metric}:")
            for title, reported, truth in ROWS:
                print(
                    f"  {title:<23}reported {s[reported]:.3f}  truth {s[truth]:.3f}  overstated by "
                    f"{s[reported + ' - truth']:+.3f} (rmse {s[reported + ' rmse']:.3f})"
                )
        print()
    print(f"elapsed {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
