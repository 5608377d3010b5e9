"""The canonical form of state values: one representation per meaning.

Two states are equal exactly when their canonical forms are equal:

* mapping key order is irrelevant (mappings compare as mappings);
* numbers compare by value: an integral float becomes an int, so ``1 == 1.0``; booleans stay booleans
  but, as in Python and SQLite (which has no boolean type), ``True`` equals ``1``;
* text is Unicode-normalised to NFC (the profile :data:`judgekit.textnorm.STATE_TEXT`), so a composed and
  a decomposed ``é`` are the same;
* tuples become lists; bytes become ``{"$bytes": "<hex>"}``.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from judgekit.textnorm import STATE_TEXT

__all__ = ["canonical", "canonical_hash", "canonical_json"]


def canonical(value: Any) -> Any:
    """Return the canonical form of a JSON-like value (see the module docstring).

    Args:
        value: ``None``, booleans, numbers, text, bytes, lists, tuples and mappings, nested.

    Returns:
        A new value built from dicts, lists, str, int, float, bool and None.

    Raises:
        TypeError: For a value of any other type.
    """
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, str):
        return STATE_TEXT.apply(value)
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 2**63:
            return int(value)
        return value
    if isinstance(value, dict):
        return {STATE_TEXT.apply(str(k)): canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    if isinstance(value, bytes | bytearray | memoryview):
        return {"$bytes": bytes(value).hex()}
    raise TypeError(f"cannot put a {type(value).__name__} in a state")


def canonical_json(value: Any) -> str:
    """Serialise a value's canonical form deterministically (sorted keys, no spaces, UTF-8 text)."""
    return json.dumps(
        canonical(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True
    )


def canonical_hash(value: Any) -> str:
    """SHA-256 hex digest of :func:`canonical_json`.

    For fingerprints and fixture identity only; a hash is never an explanation of a difference.
    """
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()
