"""Before a grader change: compare the old grader (a calibration record) with the new one on the same labels.

The reference is the experts' consensus in the *current* label table. On the items both graders
labelled, the comparison reports:

* metric deltas (new − old) with paired bootstrap intervals: both graders are evaluated on the same
  resamples of cases, so the interval reflects the paired design;
* an exact McNemar test on per-item correctness (a verdict is correct when it equals the consensus; an
  abstention is correct only where the consensus itself is the abstain label);
* every flipped item (the verdict changed), with both verdicts and every expert's label.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np

from judgekit.calibration.agreement import (
    ABSTAIN,
    MISSING,
    AgreementReport,
    BootstrapStat,
    ConfusionMatrix,
    Formula,
    ItemRecord,
    alpha_from_coincidence,
    binary_rows,
    bootstrap,
    coincidence_rows,
    confusion_matrix,
    confusion_rows,
    f1_from,
    kappa_from_confusion,
    percentile_interval,
    rate,
    undefined,
)
from judgekit.calibration.labels import ItemKey, Scale
from judgekit.calibration.records import CalibrationRecord
from judgekit.errors import JudgekitError
from judgekit.stats import Estimate, mcnemar_exact
from judgekit.verdict import FrozenModel

__all__ = ["FlippedItem", "GraderComparison", "McNemarResult", "MetricDelta", "compare_graders"]


class MetricDelta(FrozenModel):
    """One metric for the old and the new grader, and the change.

    Attributes:
        metric: The metric's name.
        old: Value for the old grader on the common items (``None`` when undefined).
        new: Value for the new grader on the common items.
        delta: ``new − old`` with a paired bootstrap interval; undefined when either side is.
    """

    metric: str
    old: float | None
    new: float | None
    delta: Estimate


class McNemarResult(FrozenModel):
    """Exact McNemar test on per-item correctness.

    Attributes:
        both_correct: Items both graders got right.
        old_only: Items the old grader got right and the new one wrong (regressions, ``b``).
        new_only: Items the new grader got right and the old one wrong (fixes, ``c``).
        both_wrong: Items both got wrong.
        p_value: Two-sided exact p-value (1.0 with no discordant items).
    """

    both_correct: int
    old_only: int
    new_only: int
    both_wrong: int
    p_value: float


class FlippedItem(FrozenModel):
    """An item whose verdict changed between the graders.

    Attributes:
        item_id: The case × trial.
        criterion: The criterion.
        case_id: The case.
        old: The old grader's verdict.
        new: The new grader's verdict.
        consensus: The experts' consensus (``None`` on a tie).
        experts: Each expert's label.
        change: ``fixed`` (now correct), ``broken`` (now wrong) or ``changed`` (correctness unchanged).
    """

    item_id: str
    criterion: str
    case_id: str
    old: str
    new: str
    consensus: str | None
    experts: dict[str, str]
    change: Literal["fixed", "broken", "changed"]


class GraderComparison(FrozenModel):
    """The old grader against the new one.

    Attributes:
        old_fingerprint: The baseline record's fingerprint.
        new_fingerprint: The new grader's fingerprint (``None`` when not given).
        same_labels: True when both were calibrated on a label table with the same SHA-256.
        common_items: Items both graders labelled that have an expert consensus.
        only_old: Items only the baseline labelled (left out).
        only_new: Items only the new grader labelled (left out).
        old_confusion: The old grader against the consensus on the common items.
        new_confusion: The new grader against the consensus on the common items.
        deltas: Metric changes with intervals.
        mcnemar: The paired test on correctness.
        flipped: Every item whose verdict changed.
        notes: What a reader should know.
        base_rate: The share of failures in the consensus on the common items (Wilson interval), the base
            rate the kappa change is read against; undefined when the scale has no failing labels.
    """

    old_fingerprint: str
    new_fingerprint: str | None
    same_labels: bool
    common_items: int
    only_old: int
    only_new: int
    old_confusion: ConfusionMatrix
    new_confusion: ConfusionMatrix
    deltas: tuple[MetricDelta, ...]
    mcnemar: McNemarResult
    flipped: tuple[FlippedItem, ...]
    notes: tuple[str, ...] = ()
    base_rate: Estimate | None = None


def _encode(label: str | None, scale: Scale) -> int:
    if label is None:
        return MISSING
    if label == scale.abstain:
        return ABSTAIN
    return scale.values.index(label)


def compare_graders(
    baseline: CalibrationRecord,
    current: AgreementReport,
    *,
    new_fingerprint: str | None = None,
    label_sha256: str = "",
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> GraderComparison:
    """Compare the baseline record's grader with the grader measured in ``current``.

    Args:
        baseline: The old grader's calibration record.
        current: The agreement report of the new grader on the current labels.
        new_fingerprint: The new grader's fingerprint, if known.
        label_sha256: SHA-256 of the current label table.
        confidence: Two-sided confidence level of the delta intervals.
        resamples: Bootstrap resamples (of cases).
        seed: Bootstrap seed.

    Returns:
        The comparison.

    Raises:
        JudgekitError: When the two use different scales or share no item with a consensus.
    """
    scale = current.scale
    if baseline.metrics.scale != scale:
        raise JudgekitError(
            f"--baseline: the record's scale {list(baseline.metrics.scale.domain)} differs from the current "
            f"scale {list(scale.domain)}; compare graders on the same scale"
        )
    old_items: dict[ItemKey, ItemRecord] = {r.key: r for r in baseline.metrics.items if r.judge is not None}
    new_items: dict[ItemKey, ItemRecord] = {r.key: r for r in current.items if r.judge is not None}
    common = sorted(k for k in new_items if k in old_items and new_items[k].consensus is not None)
    only_old = sum(1 for k in old_items if k not in new_items)
    only_new = sum(1 for k in new_items if k not in old_items)
    if not common:
        raise JudgekitError(
            "--baseline: the record and the current labels share no item that both graders labelled and the "
            "experts agree on; compare graders on the same labels"
        )
    cases = tuple(dict.fromkeys(new_items[k].case_id for k in common))
    cidx = {c: i for i, c in enumerate(cases)}
    case_index = np.array([cidx[new_items[k].case_id] for k in common], dtype=np.int64)
    ref = np.array([_encode(new_items[k].consensus, scale) for k in common], dtype=np.int64)
    old = np.array([_encode(old_items[k].judge, scale) for k in common], dtype=np.int64)
    new = np.array([_encode(new_items[k].judge, scale) for k in common], dtype=np.int64)
    v = len(scale.values)

    def by_case(rows: np.ndarray) -> np.ndarray:
        out = np.zeros((len(cases), rows.shape[1]))
        np.add.at(out, case_index, rows)
        return out

    metrics: list[tuple[str, Callable[[np.ndarray], np.ndarray], Formula]] = []

    def pa(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        c = s.reshape(-1, v, v)
        n = c.sum(axis=(1, 2))
        return np.where(n > 0, np.trace(c, axis1=1, axis2=2) / np.where(n > 0, n, 1), 0.0), n > 0

    def kappa(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return kappa_from_confusion(s.reshape(-1, v, v), "none")

    numeric = scale.numeric_values()

    def alpha(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return alpha_from_coincidence(s.reshape(-1, v, v), scale.level, numeric)

    def conf_rows(j: np.ndarray) -> np.ndarray:
        return confusion_rows(ref, j, v)

    def coinc_rows(j: np.ndarray) -> np.ndarray:
        return coincidence_rows(np.stack([ref, j]), v)

    metrics += [
        ("percent_agreement", conf_rows, pa),
        ("cohen_kappa", conf_rows, kappa),
        (f"krippendorff_alpha_{scale.level}", coinc_rows, alpha),
    ]
    if scale.positive:
        positive = np.array([x in scale.positive for x in scale.values])

        def bin_rows(j: np.ndarray) -> np.ndarray:
            return binary_rows(ref, j, positive)

        def tpr(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            d = s[:, 0] + s[:, 1]
            return np.where(d > 0, s[:, 0] / np.where(d > 0, d, 1), 0.0), d > 0

        def tnr(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            d = s[:, 2] + s[:, 3]
            return np.where(d > 0, s[:, 2] / np.where(d > 0, d, 1), 0.0), d > 0

        metrics += [("tpr", bin_rows, tpr), ("tnr", bin_rows, tnr), ("f1", bin_rows, f1_from)]

    stats: list[BootstrapStat] = []
    points: list[tuple[str, float | None, float | None]] = []
    for name, rows_of, formula in metrics:
        new_case = by_case(rows_of(new))
        old_case = by_case(rows_of(old))
        nv, nd = formula(new_case.sum(axis=0)[None, :])
        ov, od = formula(old_case.sum(axis=0)[None, :])
        points.append((name, float(ov[0]) if od[0] else None, float(nv[0]) if nd[0] else None))
        width = new_case.shape[1]

        def diff(s: np.ndarray, f: Formula = formula, w: int = width) -> tuple[np.ndarray, np.ndarray]:
            a, ad = f(s[:, :w])
            b, bd = f(s[:, w:])
            return a - b, ad & bd

        stats.append(BootstrapStat(name, np.concatenate([new_case, old_case], axis=1), diff))
    boot = bootstrap(stats, n_cases=len(cases), n_resamples=resamples, seed=seed)
    deltas: list[MetricDelta] = []
    for name, o, n in points:
        if o is None or n is None:
            side = "old" if o is None else "new"
            deltas.append(
                MetricDelta(
                    metric=name, old=o, new=n, delta=undefined(f"{name} is undefined for the {side} grader")
                )
            )
            continue
        interval, reason = percentile_interval(*boot[name], confidence=confidence)
        deltas.append(
            MetricDelta(
                metric=name,
                old=o,
                new=n,
                delta=Estimate(value=n - o, n=len(common), interval=interval, interval_reason=reason),
            )
        )

    old_ok = old == ref
    new_ok = new == ref
    b = int((old_ok & ~new_ok).sum())
    c = int((~old_ok & new_ok).sum())
    mcnemar = McNemarResult(
        both_correct=int((old_ok & new_ok).sum()),
        old_only=b,
        new_only=c,
        both_wrong=int((~old_ok & ~new_ok).sum()),
        p_value=mcnemar_exact(b, c),
    )
    flipped: list[FlippedItem] = []
    for j, k in enumerate(common):
        o_label, n_label = old_items[k].judge, new_items[k].judge
        if o_label == n_label or o_label is None or n_label is None:
            continue
        change: Literal["fixed", "broken", "changed"] = (
            "fixed" if new_ok[j] and not old_ok[j] else "broken" if old_ok[j] and not new_ok[j] else "changed"
        )
        rec = new_items[k]
        flipped.append(
            FlippedItem(
                item_id=k.item_id,
                criterion=k.criterion,
                case_id=rec.case_id,
                old=o_label,
                new=n_label,
                consensus=rec.consensus,
                experts=dict(rec.experts),
                change=change,
            )
        )
    notes: list[str] = []
    same = bool(label_sha256) and label_sha256 == baseline.label_table.sha256
    if not same:
        notes.append(
            "the baseline was calibrated on a different label table; the comparison uses the current "
            "experts' consensus on the items both graders labelled"
        )
    if only_old or only_new:
        notes.append(
            f"left out: {only_old} item(s) only the baseline labelled, "
            f"{only_new} only the new grader labelled"
        )
    if new_fingerprint is not None and new_fingerprint == baseline.fingerprint:
        notes.append("the new grader has the same fingerprint as the baseline")
    failing = [scale.values.index(p) for p in scale.positive]
    decided_ref = ref[ref >= 0]
    base_rate = (
        rate(
            int(np.isin(decided_ref, failing).sum()),
            int(decided_ref.size),
            confidence=confidence,
            what="items",
        )
        if failing and decided_ref.size
        else undefined("the scale declares no failing labels" if not failing else "no decided consensus")
    )
    return GraderComparison(
        base_rate=base_rate,
        old_fingerprint=baseline.fingerprint,
        new_fingerprint=new_fingerprint,
        same_labels=same,
        common_items=len(common),
        only_old=only_old,
        only_new=only_new,
        old_confusion=confusion_matrix(ref, old, scale, reference="consensus", rated="old grader"),
        new_confusion=confusion_matrix(ref, new, scale, reference="consensus", rated="new grader"),
        deltas=tuple(deltas),
        mcnemar=mcnemar,
        flipped=tuple(flipped),
        notes=tuple(notes),
    )
