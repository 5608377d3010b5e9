"""The seeded multi-annotator table of ``data/alt_test_labels.csv`` (run this file to rewrite it).

Fifty cases, one item each, on the verdict scale. A hidden truth is ``fail`` with probability 0.4. Four
experts ``e1``..``e4`` report it flipped with probabilities 0.08, 0.10, 0.12 and 0.15. Three judges:
``judge-majority`` gives the majority label of the four experts (``fail`` on a 2-2 tie),
``judge-good`` the truth flipped with probability 0.06, and ``judge-random`` a fair coin. Generated with
``numpy.random.default_rng(18)`` in that order (truth, experts, then judges) per case.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

PATH = Path(__file__).parent / "data" / "alt_test_labels.csv"
EXPERT_FLIPS = {"e1": 0.08, "e2": 0.10, "e3": 0.12, "e4": 0.15}


def alt_test_csv(seed: int = 18, n_cases: int = 50) -> str:
    """The table's text."""
    rng = np.random.default_rng(seed)
    lines = ["item_id,case_id,rater,label"]
    for c in range(n_cases):
        truth = "fail" if rng.random() < 0.4 else "pass"
        other = "pass" if truth == "fail" else "fail"
        labels = {e: (other if rng.random() < p else truth) for e, p in EXPERT_FLIPS.items()}
        fails = sum(v == "fail" for v in labels.values())
        labels["judge-majority"] = "fail" if fails >= 2 else "pass"
        labels["judge-good"] = other if rng.random() < 0.06 else truth
        labels["judge-random"] = "fail" if rng.random() < 0.5 else "pass"
        lines += [f"c{c:02d}-t1,c{c:02d},{rater},{label}" for rater, label in labels.items()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    PATH.write_text(alt_test_csv(), encoding="utf-8")
