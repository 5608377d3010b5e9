"""The refinement simulation (``bench/simulate_refinement.py``) shows what judgekit's split is for.

The simulation runs judgekit's own refinement steps (split by case, development disagreements, few-shot
candidates, scoring, choice) on seeded worlds with a scripted judge. Here a short run holds its finding:
agreement reported on the labels a judge was tuned on overstates its agreement on fresh items, and the
figure on the held-out test part does not (the development figure overstates it too, which is why the
calibration record is written from the test part alone).
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np

BENCH = Path(__file__).resolve().parents[2] / "bench" / "simulate_refinement.py"


@functools.cache
def _simulation() -> ModuleType:
    spec = importlib.util.spec_from_file_location("simulate_refinement", BENCH)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_tuned_agreement_overstates_and_held_out_does_not() -> None:
    sim = _simulation()
    rng = np.random.default_rng([20261205, 80])
    runs = [sim.repetition(rng, 80, 0.5) for _ in range(30)]
    kappa = sim.summarise(runs, 0)
    # tuned on every label and reported on them: optimistic by about 0.1 kappa at 80 labelled cases
    assert kappa["all: reported - truth"] > 0.05
    # the development part of judgekit's split is optimistic too (the choice and the examples came from it)
    assert kappa["judgekit: dev - truth"] > 0.05
    # the held-out figure is not: its mean error is small next to the tuned figure's
    assert abs(kappa["judgekit: test - truth"]) < 0.5 * kappa["all: reported - truth"]
    assert kappa["judgekit: dev"] > kappa["judgekit: test"]


def test_a_repetition_is_reproducible_from_its_seed() -> None:
    sim = _simulation()
    first = sim.repetition(np.random.default_rng(7), 40, 0.5)
    again = sim.repetition(np.random.default_rng(7), 40, 0.5)
    assert first == again
    assert set(first) == {"all: reported", "all: truth", "judgekit: dev", "judgekit: test", "judgekit: truth"}
