"""Tests for judgekit.state.canonical: one representation per meaning."""

from __future__ import annotations

import json
import math
import unicodedata
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from judgekit.state import canonical, canonical_hash, canonical_json

from .strategies import VALUES


def shuffled(value: Any) -> Any:
    """The same value with every mapping's keys in reverse order."""
    if isinstance(value, dict):
        return {k: shuffled(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [shuffled(v) for v in value]
    return value


def to_float(value: Any) -> Any:
    """The same value with every int (not bool) written as a float."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, dict):
        return {k: to_float(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_float(v) for v in value]
    return value


def decompose(value: Any) -> Any:
    """The same value with all text (keys included) in NFD."""
    if isinstance(value, str):
        return unicodedata.normalize("NFD", value)
    if isinstance(value, dict):
        return {decompose(k): decompose(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decompose(v) for v in value]
    return value


@given(VALUES)
def test_key_order_is_irrelevant(value: Any) -> None:
    assert canonical(shuffled(value)) == canonical(value)
    assert canonical_json(shuffled(value)) == canonical_json(value)
    assert canonical_hash(shuffled(value)) == canonical_hash(value)


@given(VALUES)
def test_integral_floats_equal_ints(value: Any) -> None:
    assert canonical_json(to_float(value)) == canonical_json(value)


@given(st.integers(min_value=-(2**53), max_value=2**53))
def test_one_equals_one_point_zero(n: int) -> None:
    result = canonical(float(n))
    assert result == n
    assert type(result) is int
    assert canonical_json({"amount": float(n)}) == canonical_json({"amount": n})


@given(st.text(alphabet="aeiouAEIOUéèêëçñåøü\u0301\u0308 ", max_size=12))
def test_nfc_and_nfd_text_are_equal(text: str) -> None:
    nfc = unicodedata.normalize("NFC", text)
    nfd = unicodedata.normalize("NFD", text)
    assert canonical(nfd) == canonical(nfc) == nfc
    assert canonical({nfd: nfd}) == canonical({nfc: nfc})


@given(VALUES)
def test_nfd_values_have_the_same_hash(value: Any) -> None:
    assert canonical_hash(decompose(value)) == canonical_hash(value)


@given(VALUES)
def test_canonical_is_idempotent(value: Any) -> None:
    once = canonical(value)
    assert canonical(once) == once
    assert json.loads(canonical_json(value)) == once


def test_composed_and_decomposed_e_acute() -> None:
    assert canonical("Chlo\u00e9") == canonical("Chloe\u0301")
    assert canonical_hash({"name": "Chlo\u00e9"}) == canonical_hash({"name": "Chloe\u0301"})


def test_booleans_stay_booleans_but_equal_one_and_zero() -> None:
    assert canonical(True) is True
    assert canonical(False) is False
    assert canonical(True) == 1
    assert canonical_json(True) == "true"


def test_fractional_and_non_finite_floats_stay_floats() -> None:
    assert canonical(412.18) == 412.18
    assert type(canonical(412.18)) is float
    assert math.isnan(canonical(float("nan")))
    assert canonical(float("inf")) == float("inf")
    big = 2.0**70
    assert type(canonical(big)) is float


def test_tuples_become_lists_and_bytes_become_hex() -> None:
    assert canonical((1, 2.0, "x")) == [1, 2, "x"]
    assert canonical(b"\x00\xff") == {"$bytes": "00ff"}
    assert canonical(bytearray(b"\x01")) == {"$bytes": "01"}
    assert canonical(memoryview(b"\x02")) == {"$bytes": "02"}


def test_non_string_keys_become_text() -> None:
    assert canonical({1: "a"}) == {"1": "a"}


def test_unsupported_type_is_refused() -> None:
    with pytest.raises(TypeError, match="cannot put a set in a state"):
        canonical({1, 2})


def test_canonical_json_is_compact_sorted_and_unescaped() -> None:
    assert canonical_json({"b": 1.0, "a": "é"}) == '{"a":"é","b":1}'


def test_different_values_have_different_hashes() -> None:
    assert canonical_hash({"amount": 412.18}) != canonical_hash({"amount": 412.19})
    assert len(canonical_hash({})) == 64
