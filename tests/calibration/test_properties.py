"""Property tests over a registry of every agreement metric, and a meta-test that each is classified.

Each metric is classified for three properties:

* symmetric: swapping the two raters leaves the value unchanged;
* order invariant: permuting the items leaves it unchanged (true of every metric here);
* rename invariant: renaming the labels by any permutation of the domain (the positive labels renamed
  with them) leaves it unchanged. Distance-weighted metrics depend on the order of the labels, so they are
  not.

A property classified False must come with a counterexample, so a classification cannot be lazy.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.calibration import agreement
from judgekit.calibration.agreement import (
    binary_metrics,
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha,
    percent_agreement,
)
from judgekit.stats import Estimate

Labels = list[object]
MetricFn = Callable[[Labels, Labels, list[object], list[object]], float | None]


def _fleiss(y1: Labels, y2: Labels, labels: list[object], positive: list[object]) -> float | None:
    rows = [
        [int(a == v) + int(b == v) for v in labels]
        for a, b in zip(y1, y2, strict=True)
        if a is not None and b is not None
    ]
    return fleiss_kappa(rows).value if rows else None


def _binary(field: str) -> MetricFn:
    def fn(y1, y2, labels, positive):
        est = getattr(binary_metrics(y1, y2, labels=labels, positive=positive), field)
        return est.value

    return fn


@dataclass(frozen=True)
class Metric:
    name: str
    fn: MetricFn
    symmetric: bool
    rename_invariant: bool
    order_invariant: bool = True
    # (y1, y2, labels, positive) where the failing property visibly fails
    asymmetry_example: tuple | None = None
    renaming_example: tuple | None = None


ORDERED = (["a", "b", "a", "c", "c", "b"], ["a", "c", "a", "c", "b", "b"], ["a", "b", "c"], ["a"])
SKEWED = (["a", "a", "a", "b"], ["a", "b", "b", "b"], ["a", "b"], ["a"])

REGISTRY: dict[str, Metric] = {
    m.name: m
    for m in [
        Metric(
            "percent_agreement",
            lambda y1, y2, lab, pos: percent_agreement(y1, y2, labels=lab).value,
            True,
            True,
        ),
        Metric("cohen_kappa", lambda y1, y2, lab, pos: cohen_kappa(y1, y2, labels=lab).value, True, True),
        Metric(
            "cohen_kappa_linear",
            lambda y1, y2, lab, pos: cohen_kappa(y1, y2, labels=lab, weights="linear").value,
            True,
            False,
            renaming_example=ORDERED,
        ),
        Metric(
            "cohen_kappa_quadratic",
            lambda y1, y2, lab, pos: cohen_kappa(y1, y2, labels=lab, weights="quadratic").value,
            True,
            False,
            renaming_example=ORDERED,
        ),
        Metric(
            "krippendorff_alpha_nominal",
            lambda y1, y2, lab, pos: krippendorff_alpha([y1, y2], labels=lab, level="nominal").value,
            True,
            True,
        ),
        Metric(
            "krippendorff_alpha_ordinal",
            lambda y1, y2, lab, pos: krippendorff_alpha([y1, y2], labels=lab, level="ordinal").value,
            True,
            False,
            renaming_example=ORDERED,
        ),
        Metric("gwet_ac1", lambda y1, y2, lab, pos: gwet_ac1([y1, y2], labels=lab).value, True, True),
        Metric("fleiss_kappa", _fleiss, True, True),
        Metric("tpr", _binary("tpr"), False, True, asymmetry_example=SKEWED),
        Metric("tnr", _binary("tnr"), False, True, asymmetry_example=SKEWED),
        Metric("precision", _binary("precision"), False, True, asymmetry_example=SKEWED),
        Metric("f1", _binary("f1"), True, True),
        Metric("base_rate", _binary("base_rate"), False, True, asymmetry_example=SKEWED),
    ]
}

# Which registry entries cover each public metric function of judgekit.calibration.agreement.
COVERS = {
    "percent_agreement": ["percent_agreement"],
    "cohen_kappa": ["cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic"],
    "krippendorff_alpha": ["krippendorff_alpha_nominal", "krippendorff_alpha_ordinal"],
    "gwet_ac1": ["gwet_ac1"],
    "fleiss_kappa": ["fleiss_kappa"],
    "binary_metrics": ["tpr", "tnr", "precision", "f1", "base_rate"],
}
# Public functions that return an Estimate but are helpers, not agreement metrics.
NOT_METRICS = {"rate", "undefined"}


def test_every_metric_function_is_classified():
    public = {
        name
        for name, obj in inspect.getmembers(agreement, inspect.isfunction)
        if name in agreement.__all__
        and inspect.signature(obj).return_annotation in ("Estimate", "BinaryMetrics", Estimate)
    }
    assert public - NOT_METRICS == set(COVERS), "a metric function is missing from the property registry"
    covered = {entry for entries in COVERS.values() for entry in entries}
    assert covered == set(REGISTRY)
    for m in REGISTRY.values():
        assert isinstance(m.symmetric, bool)
        assert isinstance(m.rename_invariant, bool)
        assert isinstance(m.order_invariant, bool)
        assert m.symmetric or m.asymmetry_example is not None, m.name
        assert m.rename_invariant or m.renaming_example is not None, m.name


DOMAIN = ["a", "b", "c"]


@st.composite
def paired_labels(draw, *, missing: bool = True):
    k = draw(st.integers(2, 3))
    labels = DOMAIN[:k]
    n = draw(st.integers(2, 25))
    value = st.sampled_from(labels)
    element = st.one_of(st.none(), value) if missing else value
    y1 = draw(st.lists(element, min_size=n, max_size=n))
    y2 = draw(st.lists(element, min_size=n, max_size=n))
    positive = [labels[0]]
    return y1, y2, labels, positive


def same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-9


@pytest.mark.parametrize("name", sorted(REGISTRY))
@settings(max_examples=60, deadline=None)
@given(data=paired_labels())
def test_symmetry_where_it_holds(name, data):
    m = REGISTRY[name]
    y1, y2, labels, positive = data
    if m.symmetric:
        assert same(m.fn(y1, y2, labels, positive), m.fn(y2, y1, labels, positive))


@pytest.mark.parametrize("name", sorted(REGISTRY))
@settings(max_examples=60, deadline=None)
@given(data=paired_labels(), seed=st.integers(0, 2**16))
def test_invariance_to_item_order(name, data, seed):
    m = REGISTRY[name]
    y1, y2, labels, positive = data
    perm = np.random.default_rng(seed).permutation(len(y1))
    p1, p2 = [y1[i] for i in perm], [y2[i] for i in perm]
    assert m.order_invariant
    assert same(m.fn(y1, y2, labels, positive), m.fn(p1, p2, labels, positive))


@pytest.mark.parametrize("name", sorted(REGISTRY))
@settings(max_examples=60, deadline=None)
@given(data=paired_labels(), seed=st.integers(0, 2**16))
def test_invariance_to_label_renaming_where_it_holds(name, data, seed):
    m = REGISTRY[name]
    y1, y2, labels, positive = data
    if not m.rename_invariant:
        return
    perm = list(np.random.default_rng(seed).permutation(len(labels)))
    rename = {labels[i]: labels[j] for i, j in enumerate(perm)}

    def r(ys):
        return [None if y is None else rename[y] for y in ys]

    assert same(m.fn(y1, y2, labels, positive), m.fn(r(y1), r(y2), labels, [rename[p] for p in positive]))


@pytest.mark.parametrize("name", sorted(n for n, m in REGISTRY.items() if not m.symmetric))
def test_asymmetric_metrics_have_a_counterexample(name):
    m = REGISTRY[name]
    y1, y2, labels, positive = m.asymmetry_example
    assert not same(m.fn(y1, y2, labels, positive), m.fn(y2, y1, labels, positive))


@pytest.mark.parametrize("name", sorted(n for n, m in REGISTRY.items() if not m.rename_invariant))
def test_order_dependent_metrics_have_a_renaming_counterexample(name):
    m = REGISTRY[name]
    y1, y2, labels, positive = m.renaming_example
    swap = {"a": "b", "b": "a", "c": "c"}  # moves "c" next to "a": distances change
    r1, r2 = [swap[y] for y in y1], [swap[y] for y in y2]
    assert not same(m.fn(y1, y2, labels, positive), m.fn(r1, r2, labels, [swap[p] for p in positive]))


@settings(max_examples=60, deadline=None)
@given(data=paired_labels(missing=False))
def test_metrics_are_bounded_and_perfect_agreement_is_one(data):
    y1, _, labels, positive = data
    for m in REGISTRY.values():
        v = m.fn(y1, y1, labels, positive)
        if v is None:
            continue
        assert -1.0 - 1e-9 <= v <= 1.0 + 1e-9
        if m.name in ("percent_agreement", "gwet_ac1", "f1") or m.name.startswith(("cohen", "krippendorff")):
            assert v == pytest.approx(1.0)
