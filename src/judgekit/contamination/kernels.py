"""Compiled scanning kernels (numba, optional): the scanner's hot path in two passes over a folded buffer.

The kernels compute exactly the values of the numpy reference in :mod:`judgekit.contamination.index`
(:func:`~judgekit.contamination.index.token_spans`, :func:`~judgekit.contamination.index.token_values`,
:func:`~judgekit.contamination.index.token_prefix`,
:func:`~judgekit.contamination.index.sliding_window_values` and
:func:`~judgekit.contamination.index.prefilter`, hash scheme ``jk-c1``), without the dozen temporary
arrays numpy needs per step: :func:`fold_spans_and_values` folds the bytes through a byte table (ASCII
text is folded here rather than by :func:`~judgekit.contamination.normalise.fold_many`), finds the token,
line and text boundaries in one pass over the bytes and hashes the tokens in a second pass over them,
and :func:`window_candidates` rolls the polynomial window value along the tokens and probes the
prefilter bitmap, returning only the windows whose bit is set (1 to 2 in 100 of a clean export's). The
index builder keeps the numpy reference; ``tests/contamination/test_kernels.py`` checks that both agree
value for value on generated buffers.

The input is a folded buffer (:func:`~judgekit.contamination.normalise.fold_many`): its only bytes below
33 are the space (32), the line feed (10) and the text separator (1), so "a byte above 32" is "a token
byte", and "a byte below 32" is a line or text boundary.

Compiled code is cached on disk (numba ``cache=True``), so a process compiles the kernels once per
judgekit version and later processes load them.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from judgekit.contamination.index import (
    _MASKS,
    _TOKEN_POWERS,
    CHUNK_MULTIPLIER,
    TOKEN_MULTIPLIER,
    I64Array,
    Key,
    TokenSpans,
    U32Array,
    U64Array,
    prefilter,
    sliding_window_values,
    token_prefix,
    token_spans,
    token_values,
)

numba: Any
try:
    numba = importlib.import_module("numba")
except ImportError:  # the `fast` extra is not installed: the numpy reference gives the same values
    numba = None

__all__ = [
    "COMPILED",
    "IDENTITY",
    "Buckets",
    "Workspace",
    "bucket_starts",
    "fold_spans_and_values",
    "load_kernels",
    "member",
    "scan_buffer",
    "spans_and_values",
    "window_candidates",
]

_C1 = np.uint64(0xFF51AFD7ED558CCD)
_C2 = np.uint64(0xC4CEB9FE1A85EC53)
_CHUNK = np.uint64(CHUNK_MULTIPLIER)
_M = np.uint64(TOKEN_MULTIPLIER)
_M_INV = np.uint64(pow(TOKEN_MULTIPLIER, -1, 1 << 64))
_S33 = np.uint64(33)
_S32 = np.uint64(32)
_S3 = np.uint64(3)
_S7 = np.uint64(7)
_S8 = np.uint64(8)
_ONE = np.uint64(1)


def _fmix64(x: Any) -> Any:
    x ^= x >> _S33
    x *= _C1
    x ^= x >> _S33
    x *= _C2
    x ^= x >> _S33
    return x


def _spans_and_values(  # noqa: PLR0917 - a numba kernel takes its arrays positionally
    buf: Any,
    table: Any,
    folded: Any,
    words: Any,
    masks: Any,
    tok: Any,
    edges: Any,
    values: Any,
    prefix: Any,
    breaks: Any,
    break_tokens: Any,
) -> Any:
    # Pass 1: each byte is folded through ``table`` into ``folded`` (whose 64-bit view is ``words``);
    # every position is written to ``edges`` and the count advances only where a token starts or ends,
    # so ``edges`` alternates token starts and token ends. A byte below 32 (line feed, text separator) is
    # a boundary: its position goes to ``breaks`` and the number of tokens before it to ``break_tokens``.
    k: Any = 0
    prev: Any = 0
    n_breaks = 0
    for i in range(len(buf)):
        c = table[buf[i]]
        folded[i] = c
        w = np.int64(c > 32)
        edges[k] = i
        k += w ^ prev
        prev = w
        if c < 32:
            breaks[n_breaks] = i
            break_tokens[n_breaks] = k >> 1
            n_breaks += 1
    edges[k] = len(buf)
    k += prev
    n_tok = k // 2
    # Pass 2: the value of each token from its 8-byte chunks, read as little-endian words assembled from
    # two aligned words of the zero-padded buffer (``words``), masked to the bytes of the token; and the
    # prefix sums of ``value[t] * TOKEN_MULTIPLIER**t``. (Rolling the windows in this loop as well, instead
    # of in ``_window_candidates`` over the finished values, measured 1.8 times slower: more live values.)
    acc_prefix = np.uint64(0)
    power = np.uint64(1)
    prefix[0] = acc_prefix
    for t in range(n_tok):
        s = edges[2 * t]
        length = edges[2 * t + 1] - s
        acc = np.uint64(0)
        chunk = np.uint64(1)
        pos = s
        left = length
        while True:
            q = pos >> 3
            r = np.uint64((pos & 7) * 8)
            c = (words[q] >> r) | ((words[q + 1] << (np.uint64(63) - r)) << _ONE)
            c &= masks[min(left, 8)]
            acc += _fmix64(c ^ (chunk * _CHUNK))
            if left <= 8:
                break
            chunk += _ONE
            pos += 8
            left -= 8
        v = _fmix64(acc ^ np.uint64(length) ^ tok)
        values[t] = v
        acc_prefix += v * power
        power *= _M
        prefix[t + 1] = acc_prefix
    return n_tok, n_breaks


def _window_candidates(  # noqa: PLR0917 - a numba kernel takes its arrays positionally
    values: Any, n: int, win: Any, bitmap: Any, shift: Any, out: Any, pf_out: Any
) -> Any:
    count = len(values) - n + 1
    if count <= 0:
        return 0
    top_power = np.uint64(1)
    for _ in range(n - 1):
        top_power *= _M
    w = np.uint64(0)
    power = np.uint64(1)
    for j in range(n):
        w += values[j] * power
        power *= _M
    found = 0
    i = 0
    while True:
        pf = _fmix64(w ^ win) >> _S32
        top = pf >> shift
        if (bitmap[top >> _S3] >> (top & _S7)) & _ONE:
            out[found] = i
            pf_out[found] = pf
            found += 1
        if i + 1 >= count:
            break
        w = (w - values[i]) * _M_INV + values[i + n] * top_power
        i += 1
    return found


def _member_in_buckets(values: Any, sorted_unique: Any, starts: Any, shift: Any, out: Any) -> None:
    # The top bits of a 32-bit value pick its bucket, ``sorted_unique[starts[b]:starts[b + 1]]`` (a few
    # entries), and a binary search runs in that bucket only: about two cache misses per value instead of
    # one per halving of the whole table (numpy's searchsorted spent about 250 ns on each unsorted needle
    # here). One bucket (``starts = [0, n]``, ``shift = 32``) is a binary search of the whole table.
    for i in range(len(values)):
        v = values[i]
        b = np.uint64(v) >> shift
        lo = starts[b]
        end = starts[b + 1]
        hi = end
        while lo < hi:
            mid = (lo + hi) >> 1
            if sorted_unique[mid] < v:
                lo = mid + 1
            else:
                hi = mid
        out[i] = lo < end and sorted_unique[lo] == v


def _jit(func: Callable[..., Any]) -> Any:
    """Compile lazily with an on-disk cache; without a writable cache location, compile per process."""
    try:
        return numba.njit(cache=True, nogil=True)(func)
    except RuntimeError:  # numba: "cannot cache function ...: no locator available"
        return numba.njit(nogil=True)(func)


COMPILED = numba is not None
"""Whether the kernels are compiled (numba installed, ``pip install 'judgekit-agents[fast]'``); without it
:func:`spans_and_values` and :func:`window_candidates` compute the same values with the numpy reference,
about a third slower on a whole scan."""

_loaded = False


def load_kernels() -> None:
    """Load (or compile) the kernels in this process now rather than at the first batch.

    A parent that forks scanning workers calls it first, so that the workers inherit the loaded kernels
    instead of each paying numba's start-up (about 0.2 CPU-s). Does nothing without numba, or when the
    kernels are loaded already.
    """
    if COMPILED:
        _load()


def _load() -> None:
    """Load (or compile) both kernels once per process, without numba importing SciPy.

    On its first compilation or cache load in a process, numba imports ``numba.np.arraymath``, which
    imports ``scipy.linalg`` (when SciPy is installed) only to learn whether ``np.correlate`` may use BLAS:
    about 0.44 CPU-s of the 0.55 s a scanning process spent loading the cached kernels. When SciPy's
    linear algebra is not imported yet, this hides ``scipy.linalg.cython_blas`` for that one import
    (numba then gives ``np.correlate`` and ``np.convolve`` in compiled code its own loop instead of
    BLAS; ``np.dot`` and ``np.linalg`` still import SciPy when compiled, as before). Nothing else changes.
    """
    global _loaded  # noqa: PLW0603 - a once-per-process flag
    if _loaded:
        return
    _loaded = True
    hide = "scipy.linalg.cython_blas" not in sys.modules and "numba.np.arraymath" not in sys.modules
    if hide:
        sys.modules["scipy.linalg.cython_blas"] = None  # type: ignore[assignment]
    try:
        key = np.uint64(0)
        raw = np.frombuffer(b"a b", dtype=np.uint8)
        work = Workspace()
        work.fit(len(raw))
        padded = work.padded
        _spans_kernel(
            raw,
            IDENTITY,
            padded,
            padded.view(np.uint64),
            _MASKS,
            key,
            work.edges,
            work.values,
            work.prefix,
            work.breaks,
            work.break_tokens,
        )
        _window_kernel(
            work.values[:2], 1, key, np.zeros(1, dtype=np.uint8), np.uint64(40), work.first, work.pf
        )
        probe = np.zeros(1, dtype=np.uint32)
        starts, shift = bucket_starts(probe)
        _member_kernel(probe, probe, starts, np.uint64(shift), np.zeros(1, dtype=np.bool_))
    finally:
        if hide:
            del sys.modules["scipy.linalg.cython_blas"]


if COMPILED:
    _fmix64 = _jit(_fmix64)
    _spans_kernel = cast(Callable[..., tuple[int, int]], _jit(_spans_and_values))
    _window_kernel = cast(Callable[..., int], _jit(_window_candidates))
    _member_kernel = cast(Callable[..., None], _jit(_member_in_buckets))


class Workspace:
    """Reusable output arrays of the kernels, grown on demand.

    Fresh arrays of a few megabytes cost a page fault per 4 KiB on every batch; a scanner keeps one
    workspace and the kernels write into it. Arrays returned with a workspace are views into it, valid
    until the next call that uses the same workspace.
    """

    def __init__(self) -> None:
        self.size = -1
        self.padded: npt.NDArray[np.uint8] = np.zeros(0, dtype=np.uint8)
        self.edges: I64Array = np.zeros(0, dtype=np.int64)
        self.breaks: I64Array = np.zeros(0, dtype=np.int64)
        self.break_tokens: I64Array = np.zeros(0, dtype=np.int64)
        self.values: U64Array = np.zeros(0, dtype=np.uint64)
        self.prefix: U64Array = np.zeros(0, dtype=np.uint64)
        self.first: I64Array = np.zeros(0, dtype=np.int64)
        self.pf: U64Array = np.zeros(0, dtype=np.uint64)

    def __getstate__(self) -> dict[str, Any]:
        """Pickle as an empty workspace (a matcher shipped to a worker does not carry its scratch arrays)."""
        return {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickle as an empty workspace."""
        self.__init__()  # type: ignore[misc]

    def fit(self, size: int) -> None:
        """Make room for a folded buffer of ``size`` bytes."""
        if size <= self.size:
            return
        size = max(size, 2 * self.size)
        cap = size // 2 + 1
        self.padded = np.zeros(size + 24 - size % 8, dtype=np.uint8)
        self.edges = np.empty(size + 2, dtype=np.int64)
        self.breaks = np.empty(size + 1, dtype=np.int64)
        self.break_tokens = np.empty(size + 1, dtype=np.int64)
        self.values = np.empty(cap, dtype=np.uint64)
        self.prefix = np.empty(cap + 1, dtype=np.uint64)
        self.first = np.empty(cap, dtype=np.int64)
        self.pf = np.empty(cap, dtype=np.uint64)
        self.size = size


IDENTITY = np.arange(256, dtype=np.uint8)
"""The byte table of a buffer that is folded already (:func:`spans_and_values`)."""


def spans_and_values(
    buf: npt.NDArray[np.uint8], key: Key, work: Workspace | None = None
) -> tuple[TokenSpans, U64Array, U64Array]:
    """Token spans and keyed token values of a folded buffer in one pass.

    Args:
        buf: A folded buffer (:func:`~judgekit.contamination.normalise.fold_many` output) as bytes.
        key: The contamination key (its ``tok`` sub-key keys the token values).
        work: Arrays to write into (the results are then views into it); ``None`` for fresh arrays.

    Returns:
        The same :class:`~judgekit.contamination.index.TokenSpans` as
        :func:`~judgekit.contamination.index.token_spans`, the same token values as
        :func:`~judgekit.contamination.index.token_values`, and their prefix sums as
        :func:`~judgekit.contamination.index.token_prefix` (one more entry than tokens).
    """
    _, spans, values, prefix = fold_spans_and_values(buf, IDENTITY, key, work)
    return spans, values, prefix


def fold_spans_and_values(
    raw: npt.NDArray[np.uint8], table: npt.NDArray[np.uint8], key: Key, work: Workspace | None = None
) -> tuple[npt.NDArray[np.uint8], TokenSpans, U64Array, U64Array]:
    r"""Fold a buffer through a byte table, then its token spans and keyed token values, in one pass.

    Args:
        raw: The bytes to fold (``"\x01".join(texts)`` encoded, when every text is ASCII).
        table: 256 bytes: what each byte folds to (:data:`judgekit.contamination.normalise.ASCII_FOLD_TABLE`
            for ASCII text, :data:`IDENTITY` for a buffer folded already). The folded buffer must have
            the properties of :func:`~judgekit.contamination.normalise.fold_many` output.
        key: The contamination key (its ``tok`` sub-key keys the token values).
        work: Arrays to write into (the results are then views into it); ``None`` for fresh arrays.

    Returns:
        The folded buffer (``table[raw]``), and its spans, token values and prefix sums as
        :func:`spans_and_values` gives them.
    """
    folded, spans, values, prefix, _, _ = scan_buffer(raw, table, key, work=work)
    return folded, spans, values, prefix


def scan_buffer(
    raw: npt.NDArray[np.uint8],
    table: npt.NDArray[np.uint8],
    key: Key,
    probe: tuple[int, npt.NDArray[np.uint8], int] | None = None,
    *,
    work: Workspace | None = None,
) -> tuple[npt.NDArray[np.uint8], TokenSpans, U64Array, U64Array, I64Array, U32Array]:
    """:func:`fold_spans_and_values`, then :func:`window_candidates` over the token values (one call).

    Args:
        raw: The bytes to fold.
        table: What each byte folds to (see :func:`fold_spans_and_values`).
        key: The contamination key.
        probe: ``(n, bitmap, shift)`` as :func:`window_candidates` takes them; ``None`` for no windows.
        work: Arrays to write into (the results are then views into it); ``None`` for fresh arrays.

    Returns:
        The folded buffer, its spans, token values and prefix sums (as :func:`fold_spans_and_values`),
        and the windows whose bit is set with their prefilters (as :func:`window_candidates`; empty
        without ``probe``).
    """
    if not COMPILED:
        buf = table[raw]
        spans = token_spans(buf)
        values = token_values(buf, spans, key)
        if probe is None:
            cand, pf = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint32)
        else:
            cand, pf = window_candidates(values, probe[0], key, probe[1], probe[2])
        return buf, spans, values, token_prefix(values), cand, pf
    _load()
    size = len(raw)
    work = work or Workspace()
    work.fit(size)
    padded = work.padded
    padded[size : size + 16] = 0
    n_tok, n_breaks = _spans_kernel(
        raw,
        table,
        padded,
        padded.view(np.uint64),
        _MASKS,
        np.uint64(key.tok),
        work.edges,
        work.values,
        work.prefix,
        work.breaks,
        work.break_tokens,
    )
    _TOKEN_POWERS.ensure(n_tok + 1)  # for window values over the prefix sums
    edges = work.edges
    folded = padded[:size]
    breaks = work.breaks[:n_breaks]
    line_first = work.break_tokens[:n_breaks]
    spans = TokenSpans(
        starts=edges[0 : 2 * n_tok : 2],
        ends=edges[1 : 2 * n_tok : 2],
        text_first=np.concatenate(([0], line_first[folded[breaks] == 1])),
        line_first=line_first,
    )
    values = work.values[:n_tok]
    found = 0
    if probe is not None:
        found = _window_kernel(
            values, probe[0], np.uint64(key.win), probe[1], np.uint64(probe[2]), work.first, work.pf
        )
    return (
        folded,
        spans,
        values,
        work.prefix[: n_tok + 1],
        work.first[:found],
        work.pf[:found].astype(np.uint32),
    )


def window_candidates(
    values: U64Array,
    n: int,
    key: Key,
    bitmap: npt.NDArray[np.uint8],
    shift: int,
    *,
    work: Workspace | None = None,
) -> tuple[I64Array, U32Array]:
    """The windows of ``n`` tokens whose shingle prefilter has its bit set in the bitmap.

    Args:
        values: Token values (:func:`spans_and_values`).
        n: Tokens per window (the index's shingle size).
        key: The contamination key (its ``win`` sub-key keys the prefilters).
        bitmap: Packed bitmap over the top ``32 - shift`` bits of the index's shingle prefilters.
        shift: How far a prefilter is shifted right to give its bitmap position.
        work: Arrays to write into (the first result is then a view into it); ``None`` for fresh arrays.

    Returns:
        The first token of each such window, ascending, and the window's 32-bit prefilter (the same
        value as :func:`~judgekit.contamination.index.prefilter` of the window's run value).
    """
    if not COMPILED:
        if len(values) < n:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint32)
        pf = prefilter(sliding_window_values(token_prefix(values), n), key.win)
        top = pf >> np.uint32(shift)
        cand = np.flatnonzero((bitmap[top >> np.uint32(3)] >> (top & np.uint32(7)).astype(np.uint8)) & 1)
        return cand.astype(np.int64), pf[cand]
    _load()
    if work is None:
        work = Workspace()
        work.fit(2 * len(values))
    found = _window_kernel(values, n, np.uint64(key.win), bitmap, np.uint64(shift), work.first, work.pf)
    return work.first[:found], work.pf[:found].astype(np.uint32)


Buckets = tuple[I64Array, int]
"""``(starts, shift)`` of :func:`bucket_starts`: where each bucket of a sorted table begins, and the shift
that gives a value's bucket."""


def bucket_starts(sorted_unique: U32Array, per_bucket: int = 4) -> Buckets:
    """Bucket a sorted table of 32-bit values by their top bits, for :func:`member`.

    Args:
        sorted_unique: A sorted array of distinct ``uint32`` values.
        per_bucket: Entries per bucket on average (at least 1); the number of buckets is the power of
            two nearest ``len(sorted_unique) / per_bucket``, from 2**8 to 2**24.

    Returns:
        ``(starts, shift)``: bucket ``b`` (the values whose ``value >> shift`` is ``b``) is
        ``sorted_unique[starts[b]:starts[b + 1]]``; ``starts`` has one entry more than there are buckets.

    Example:
        >>> import numpy as np
        >>> starts, shift = bucket_starts(np.array([1, 2**31, 2**32 - 1], dtype=np.uint32))
        >>> shift, len(starts), int(starts[1]), int(starts[128]), int(starts[-1])
        (24, 257, 1, 1, 3)
    """
    bits = int(np.clip(np.round(np.log2(max(len(sorted_unique), 1) / max(per_bucket, 1))), 8, 24))
    shift = 32 - bits
    edges = np.arange((1 << bits) + 1, dtype=np.uint64) << np.uint64(shift)
    starts = np.searchsorted(sorted_unique.astype(np.uint64), edges).astype(np.int64)
    return starts, shift


def member(
    values: U32Array, sorted_unique: U32Array, buckets: Buckets | None = None
) -> npt.NDArray[np.bool_]:
    """Which ``values`` occur in ``sorted_unique`` (32-bit prefilters, sorted ascending and distinct).

    Args:
        values: The values to look up, in any order.
        sorted_unique: A sorted array of distinct values of the same dtype.
        buckets: :func:`bucket_starts` of ``sorted_unique`` (``uint32`` only), or ``None``. With them the
            compiled lookup searches one small bucket per value instead of the whole table; the mask is
            the same.

    Returns:
        A boolean mask over ``values``; compiled (``uint32`` values and table), one binary search per
        value (in its bucket when ``buckets`` are given), and otherwise the same mask from
        ``np.searchsorted``.
    """
    if not len(sorted_unique) or not len(values):
        return np.zeros(len(values), dtype=np.bool_)
    if not COMPILED or values.dtype != np.uint32 or sorted_unique.dtype != np.uint32:
        pos = np.searchsorted(sorted_unique, values)
        np.minimum(pos, len(sorted_unique) - 1, out=pos)
        return np.asarray(sorted_unique[pos] == values)
    _load()
    out = np.empty(len(values), dtype=np.bool_)
    starts, shift = (
        buckets if buckets is not None else (np.array([0, len(sorted_unique)], dtype=np.int64), 32)
    )
    _member_kernel(
        np.ascontiguousarray(values), np.ascontiguousarray(sorted_unique), starts, np.uint64(shift), out
    )
    return out
