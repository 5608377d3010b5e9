"""Keyed hashing of golden-set texts and the contamination index file (format version 3).

An index lets a training team check an export for golden-set text without being able to read the cases:
it holds keyed digests, never text. The key stays with whoever runs the scan; the index records only a
fingerprint of it. The whole file is authenticated with an HMAC-SHA256 keyed from the key, so reading an
index verifies it with the key first: an edited parameter, case id, canary or digest, a truncated or
extended file, and an index built with another key are all refused.

Two kinds of entries are stored for every text a case carries (``docs/contamination.md`` has the full
format specification and the golden test vectors live in ``tests/contamination/vectors/``):

* *whole-text* entries: the keyed digest of the text's canonical form (catches short texts, and a field
  or a line of an export that is exactly a case text after normalisation);
* *shingle* entries: the keyed digest of every run of ``shingle_size`` consecutive tokens (7 by
  default, :data:`DEFAULT_SHINGLE_SIZE`), with the run's offset inside its text (catches texts embedded
  in longer documents, or lightly edited: the scanner counts how many distinct shingles of one case text
  a stretch of a record holds, see :mod:`judgekit.contamination.scan`).

Each entry has two hashes. The *digest* is keyed BLAKE2b over the canonical bytes (the authoritative
match). The *prefilter* is a 32-bit keyed hash built from per-token values with 64-bit integer
arithmetic, so that a scanner can compute it for every window of an export with a few vectorised numpy
operations; a window whose prefilter is not in the index is not looked at again, and a window whose
prefilter is in the index is confirmed by its BLAKE2b digest.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from judgekit.contamination.normalise import (
    FIELD_SEPARATOR,
    NORMALISATION_VERSION,
    UNICODE_VERSION,
    fold,
    fold_many,
)
from judgekit.errors import JudgekitError
from judgekit.io.atomic import write_atomic
from judgekit.io.documents import read_regular
from judgekit.io.filekind import check_input_file

__all__ = [
    "DEFAULT_SHINGLE_SIZE",
    "FORMAT_VERSION",
    "HASH_SCHEME",
    "MAC_ALGORITHM",
    "MAC_BYTES",
    "MAC_KEY_INFO",
    "MAGIC",
    "OUTDATED_FORMAT_VERSIONS",
    "UNAUTHENTICATED_FORMAT_VERSIONS",
    "ContaminationIndex",
    "IndexOptions",
    "Key",
    "TextRef",
    "TokenSpans",
    "build_index",
    "canary_for",
    "fmix64",
    "index_mac",
    "index_mac_key",
    "key_from_bytes",
    "load_key",
    "read_index",
    "shingle_digest",
    "shingle_hasher",
    "sliding_window_values",
    "text_digest",
    "text_hasher",
    "token_prefix",
    "token_spans",
    "token_values",
    "window_values",
    "write_index",
]

MAGIC = b"JKCONTAM"
FORMAT_VERSION = 3
"""The index file layout this judgekit writes and reads (2: authenticated with a keyed MAC; 3: the same
layout, written for the hit-count matching of issue 17, 7-token shingles by default)."""
UNAUTHENTICATED_FORMAT_VERSIONS = (1,)
"""Earlier layouts without a MAC: refused with a request to rebuild, since tampering with them is unseen."""
OUTDATED_FORMAT_VERSIONS = (2,)
"""Earlier authenticated layouts: refused with a request to rebuild. A version 2 index was built for one
13-token shingle per leak (13-token shingles by default), which misses near-duplicates whose edits leave
no 13 untouched tokens in a row; scanning with it would silently keep that blind spot."""
DEFAULT_SHINGLE_SIZE = 7
"""Tokens per shingle of a new index (``--shingle-size``)."""
MAC_ALGORITHM = "hmac-sha256"
"""The MAC of an index file, recorded in its header."""
MAC_KEY_INFO = b"judgekit index mac v1"
"""Domain separation of the MAC key: ``mac key = HMAC-SHA256(key=master, msg=MAC_KEY_INFO)``."""
MAC_BYTES = 32
"""Length of the tag that ends an index file."""
HASH_SCHEME = "jk-c1"
"""Identifies every hash function below; any change to one of them is a new scheme and a new version."""

MIN_KEY_BYTES = 16

U64 = np.uint64
U64Array = npt.NDArray[np.uint64]
U32Array = npt.NDArray[np.uint32]
I64Array = npt.NDArray[np.int64]

CHUNK_MULTIPLIER = 0x9E3779B97F4A7C15
"""Position constant of token chunks: chunk ``i`` is XORed with ``(i + 1) * CHUNK_MULTIPLIER``."""
TOKEN_MULTIPLIER = 0xA0761D6478BD642F
"""Odd multiplier of the polynomial over token values."""
_M64 = (1 << 64) - 1
_FMIX_C1 = 0xFF51AFD7ED558CCD
_FMIX_C2 = 0xC4CEB9FE1A85EC53


# --------------------------------------------------------------------------------------------- keys


@dataclass(frozen=True)
class Key:
    """A contamination key and the sub-keys derived from it.

    Attributes:
        master: 32 bytes, ``BLAKE2b-256(key file bytes, person="jk-c1-master")``; the key of every
            BLAKE2b digest.
        fingerprint: 32 hex characters, ``BLAKE2b-128(b"key fingerprint", key=master,
            person="jk-c1-keyfp")``. Safe to publish: it identifies the key without revealing it.
        tok: 64-bit sub-key of token values.
        win: 64-bit sub-key of shingle prefilters.
        txt: 64-bit sub-key of whole-text prefilters.
    """

    master: bytes = field(repr=False)
    fingerprint: str
    tok: int = field(repr=False)
    win: int = field(repr=False)
    txt: int = field(repr=False)


def key_from_bytes(raw: bytes) -> Key:
    """Derive a :class:`Key` from raw key bytes (surrounding ASCII whitespace is ignored).

    Raises:
        JudgekitError: The key is shorter than 16 bytes (exit code 2).
    """
    raw = raw.strip()
    if len(raw) < MIN_KEY_BYTES:
        raise JudgekitError(
            f"the contamination key is {len(raw)} bytes long; it needs at least {MIN_KEY_BYTES} "
            "(create one with `judgekit contamination keygen --out KEY`)",
            exit_code=2,
        )
    master = hashlib.blake2b(raw, digest_size=32, person=b"jk-c1-master").digest()
    fp = hashlib.blake2b(b"key fingerprint", key=master, digest_size=16, person=b"jk-c1-keyfp").hexdigest()
    sub = hashlib.blake2b(b"fast subkeys", key=master, digest_size=24, person=b"jk-c1-subkeys").digest()
    tok, win, txt = (int.from_bytes(sub[i : i + 8], "little") for i in (0, 8, 16))
    return Key(master=master, fingerprint=fp, tok=tok, win=win, txt=txt)


def load_key(path: str | os.PathLike[str]) -> Key:
    """Read a key file (its bytes, surrounding whitespace stripped) and derive the :class:`Key`.

    Args:
        path: The file, as text or a path object.

    Raises:
        JudgekitError: The file cannot be read, is not a regular file (a named pipe, device, folder: refused
            at once, never waited on) or the key is too short (exit code 2).
    """
    path = Path(path)
    check_input_file(path, what="contamination key")
    try:
        raw = read_regular(path, "contamination key")
    except OSError as exc:
        raise JudgekitError(
            f"{path}: cannot read the key file ({exc.strerror}); pass the file given to "
            "`judgekit contamination index --key-file`",
            exit_code=2,
        ) from None
    try:
        return key_from_bytes(raw)
    except JudgekitError as exc:
        raise JudgekitError(f"{path}: {exc.message}", exit_code=2) from None


def canary_for(key: Key, set_name: str) -> str:
    """Return the canary string of a case set: ``JUDGEKIT-CANARY-`` and 32 hex characters.

    The same key and set name always give the same canary; embed it in the case files so that a copy of
    them in training data is found verbatim even after any rewording of the cases.
    """
    digest = hashlib.blake2b(set_name.encode("utf-8"), key=key.master, digest_size=16, person=b"jk-c1-canary")
    return "JUDGEKIT-CANARY-" + digest.hexdigest().upper()


# ------------------------------------------------------------------------------------------ digests


def shingle_digest(key: Key, canonical_bytes: bytes) -> int:
    """Keyed BLAKE2b-64 of a shingle's canonical bytes (tokens joined by single spaces), as an integer."""
    d = hashlib.blake2b(canonical_bytes, key=key.master, digest_size=8, person=b"jk-c1-shingle")
    return int.from_bytes(d.digest(), "little")


def text_digest(key: Key, canonical_bytes: bytes) -> int:
    """Keyed BLAKE2b-64 of a whole text's canonical bytes, as an integer."""
    d = hashlib.blake2b(canonical_bytes, key=key.master, digest_size=8, person=b"jk-c1-text")
    return int.from_bytes(d.digest(), "little")


def shingle_hasher(key: Key) -> Any:
    """The keyed BLAKE2b state of :func:`shingle_digest` before any data.

    ``copy()`` it, ``update`` the copy with the canonical bytes and read its digest: the same value as
    :func:`shingle_digest`, without hashing the key block again for every shingle.
    """
    return hashlib.blake2b(key=key.master, digest_size=8, person=b"jk-c1-shingle")


def text_hasher(key: Key) -> Any:
    """The keyed BLAKE2b state of :func:`text_digest` before any data (see :func:`shingle_hasher`)."""
    return hashlib.blake2b(key=key.master, digest_size=8, person=b"jk-c1-text")


# --------------------------------------------------------------------------- vectorised fast hashing


def fmix64(x: U64Array) -> U64Array:
    """MurmurHash3's 64-bit finaliser, element-wise, modulo 2^64 (modifies and returns ``x``)."""
    x ^= x >> U64(33)
    x *= U64(_FMIX_C1)
    x ^= x >> U64(33)
    x *= U64(_FMIX_C2)
    x ^= x >> U64(33)
    return x


class _Powers:
    """Cached arrays of ``m**i`` and ``m**-i`` modulo 2^64, grown on demand."""

    def __init__(self, multiplier: int) -> None:
        self.m = multiplier
        self.inv = pow(multiplier, -1, 1 << 64)
        self.pos: U64Array = np.ones(1, dtype=U64)
        self.neg: U64Array = np.ones(1, dtype=U64)

    def ensure(self, n: int) -> None:
        if n <= len(self.pos):
            return
        size = 1 << max(16, math.ceil(math.log2(n)))
        self.pos = _powers(self.m, size)
        self.neg = _powers(self.inv, size)


def _powers(m: int, size: int) -> U64Array:
    """``m**i`` modulo 2^64 for ``i`` in ``range(size)`` (a power of two).

    Built by doubling (the second half is the first times ``m**half``): a vectorised multiply per
    doubling, several times faster than ``np.cumprod``, which has no vectorised loop for integers.
    """
    out = np.empty(size, dtype=U64)
    out[0] = 1
    half = 1
    with np.errstate(over="ignore"):
        while half < size:
            np.multiply(out[:half], U64(pow(m, half, 1 << 64)), out=out[half : 2 * half])
            half *= 2
    return out


_TOKEN_POWERS = _Powers(TOKEN_MULTIPLIER)
_MASKS = np.array([0] + [(1 << (8 * k)) - 1 for k in range(1, 8)] + [(1 << 64) - 1], dtype=U64)


@dataclass(frozen=True)
class TokenSpans:
    """Where the tokens of a folded buffer are.

    Attributes:
        starts: Byte offset of each token's first byte.
        ends: Byte offset one past each token's last byte.
        text_first: For each text of the buffer, the index of its first token (``len(starts)`` for
            trailing texts without tokens); non-decreasing.
        line_first: The index of the first token after every line break or text separator, sorted.
    """

    starts: I64Array
    ends: I64Array
    text_first: I64Array
    line_first: I64Array

    def text_of(self, tokens: I64Array) -> I64Array:
        """Index of the text each of the given tokens belongs to."""
        return np.searchsorted(self.text_first, tokens, side="right") - 1


def token_spans(buf: npt.NDArray[np.uint8]) -> TokenSpans:
    """Find the tokens of a folded buffer (see :func:`judgekit.contamination.normalise.fold_many`).

    A token is a maximal run of bytes other than space, line feed and the text separator.
    """
    sep = buf == FIELD_SEPARATOR[0]
    brk = sep | (buf == 10)
    word = ~(brk | (buf == 32))
    edges = np.diff(word.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    sep_pos = np.flatnonzero(sep)
    text_first = np.concatenate(([0], np.searchsorted(starts, sep_pos)))
    line_first = np.searchsorted(starts, np.flatnonzero(brk))
    return TokenSpans(starts=starts, ends=ends, text_first=text_first, line_first=line_first)


def _words(buf: npt.NDArray[np.uint8]) -> U64Array:
    """Overlapping little-endian 64-bit words: ``words[i]`` holds bytes ``i .. i+7`` (zero past the end)."""
    padded = np.zeros(len(buf) + 8, dtype=np.uint8)
    padded[: len(buf)] = buf
    view = np.lib.stride_tricks.as_strided(padded, shape=(len(buf) + 1, 8), strides=(1, 1))
    words: U64Array = view.view("<u8").reshape(-1)
    return words


def token_values(buf: npt.NDArray[np.uint8], spans: TokenSpans, key: Key) -> U64Array:
    """Keyed 64-bit value of every token.

    For a token of ``L`` UTF-8 bytes cut into ``m = ceil(L / 8)`` chunks ``c_i`` (little-endian 64-bit
    words, the last one zero-padded)::

        value = fmix64(sum(fmix64(c_i XOR ((i + 1) * CHUNK_MULTIPLIER))) XOR L XOR key.tok)

    with every operation modulo 2^64.
    """
    starts = spans.starts
    if not len(starts):
        return np.zeros(0, dtype=U64)
    words = _words(buf)
    lengths = spans.ends - starts
    with np.errstate(over="ignore"):
        first = words[starts] & _MASKS[np.minimum(lengths, 8)]
        first ^= U64(CHUNK_MULTIPLIER)
        acc = fmix64(first)
        long = np.flatnonzero(lengths > 8)
        if len(long):
            extra = (lengths[long] + 7) // 8 - 1
            tok = np.repeat(long, extra)
            group = np.cumsum(extra) - extra
            chunk = np.arange(len(tok)) - np.repeat(group, extra) + 1
            rem = lengths[tok] - 8 * chunk
            c = words[starts[tok] + 8 * chunk] & _MASKS[np.minimum(rem, 8)]
            c ^= (chunk + 1).astype(U64) * U64(CHUNK_MULTIPLIER)
            acc[long] += np.add.reduceat(fmix64(c), group)
        acc ^= lengths.astype(U64)
        acc ^= U64(key.tok)
    return fmix64(acc)


def token_prefix(values: U64Array) -> U64Array:
    """Prefix sums of ``value[i] * TOKEN_MULTIPLIER**i`` (``len(values) + 1`` entries, the first 0)."""
    m = len(values)
    _TOKEN_POWERS.ensure(m + 1)
    prefix = np.empty(m + 1, dtype=U64)
    prefix[0] = 0
    with np.errstate(over="ignore"):
        np.cumsum(values * _TOKEN_POWERS.pos[:m], dtype=U64, out=prefix[1:])
    return prefix


def window_values(prefix: U64Array, first: I64Array, last: I64Array) -> U64Array:
    """Polynomial value of token ranges: ``sum(value[first + j] * 0x9E3779B97F4A7C15**j)`` mod 2^64.

    Args:
        prefix: Output of the token prefix sum (``len(values) + 1`` entries).
        first: First token of each range.
        last: One past the last token of each range.
    """
    with np.errstate(over="ignore"):
        out = prefix[last] - prefix[first]
        out *= _TOKEN_POWERS.neg[first]
    return out


def sliding_window_values(prefix: U64Array, n: int) -> U64Array:
    """Run values of every window of ``n`` consecutive tokens (window ``i`` covers tokens ``i .. i+n-1``).

    The same values as :func:`window_values` with ``first = arange(count - n + 1)``, computed with
    slices instead of gathers (the scanner's hot path).
    """
    count = len(prefix) - n
    with np.errstate(over="ignore"):
        out = prefix[n:] - prefix[:-n]
        out *= _TOKEN_POWERS.neg[:count]
    return out


def prefilter(values: U64Array, subkey: int) -> U32Array:
    """Keyed 32-bit prefilter: the top 32 bits of ``fmix64(value XOR subkey)``."""
    with np.errstate(over="ignore"):
        x = values ^ U64(subkey)
    return (fmix64(x) >> U64(32)).astype(np.uint32)


@dataclass(frozen=True)
class FastHashes:
    """Token spans and prefix sums of one folded buffer (the scanner's and the index builder's view)."""

    spans: TokenSpans
    prefix: U64Array


def fast_hashes(buf: npt.NDArray[np.uint8], key: Key) -> FastHashes:
    """Tokenise a folded buffer and compute its token prefix sums."""
    spans = token_spans(buf)
    values = token_values(buf, spans, key)
    return FastHashes(spans=spans, prefix=token_prefix(values))


# ------------------------------------------------------------------------------------------- index


@dataclass(frozen=True)
class TextRef:
    """One text of one golden case, as the index knows it (never the text itself).

    Attributes:
        case: Index of the case in :attr:`ContaminationIndex.case_ids`.
        field: Field path of the text inside the case (``user.opening``).
        n_tokens: Number of normalised tokens.
    """

    case: int
    field: str
    n_tokens: int


@dataclass(frozen=True)
class IndexOptions:
    """How an index is built.

    Attributes:
        shingle_size: Tokens per shingle, 4 to 64 (:data:`DEFAULT_SHINGLE_SIZE`, 7). The scanner asks for
            as many distinct shingles of a case text as a run of 13 tokens holds (``14 - shingle_size``)
            inside a stretch of a record, so smaller shingles find edited text that larger ones miss.
        min_text_tokens: Whole texts with fewer tokens get no whole-text entry (they would match
            everyday phrases such as "thank you").
        max_cases: A shingle or whole text found in more than this many distinct cases is dropped as
            template text. ``None`` means ``max(2, ceil(2% of the cases))``.
        boilerplate: Texts whose whole-text and shingle entries are always dropped (templated system
            prompts, policy boilerplate that legitimately appears in training data).
        canaries: Canary strings to report verbatim wherever they appear.
    """

    shingle_size: int = DEFAULT_SHINGLE_SIZE
    min_text_tokens: int = 4
    max_cases: int | None = None
    boilerplate: tuple[str, ...] = ()
    canaries: tuple[str, ...] = ()


@dataclass(frozen=True)
class ContaminationIndex:
    """A loaded or freshly built contamination index.

    Entry arrays are sorted by digest. ``shingle_*`` arrays have one element per (shingle, text,
    offset) entry; ``text_*`` arrays one element per whole-text entry.
    """

    key_fingerprint: str
    shingle_size: int
    min_text_tokens: int
    max_cases: int
    case_ids: tuple[str, ...]
    texts: tuple[TextRef, ...]
    canaries: tuple[str, ...]
    unicode_version: str
    stats: dict[str, int]
    shingle_digest: U64Array
    shingle_prefilter: U32Array
    shingle_text: U32Array
    shingle_offset: U32Array
    text_digest: U64Array
    text_prefilter: U32Array
    text_text: U32Array


def _texts_buffer(texts: Sequence[str]) -> npt.NDArray[np.uint8]:
    return np.frombuffer(fold_many(texts), dtype=np.uint8)


def _case_entries(
    key: Key, texts: Sequence[str], n: int, min_tokens: int
) -> tuple[list[list[tuple[int, int, int]]], list[tuple[int, int] | None]]:
    """Shingle entries ``(digest, prefilter, offset)`` per text, and whole-text ``(digest, prefilter)``."""
    buf = _texts_buffer(texts)
    fh = fast_hashes(buf, key)
    spans = fh.spans
    raw = buf.tobytes()
    shingles: list[list[tuple[int, int, int]]] = []
    wholes: list[tuple[int, int] | None] = []
    bounds = np.append(spans.text_first, len(spans.starts))
    for t in range(len(texts)):
        lo, hi = int(bounds[t]), int(bounds[t + 1])
        count = hi - lo
        toks = [raw[spans.starts[i] : spans.ends[i]] for i in range(lo, hi)]
        whole: tuple[int, int] | None = None
        if count >= min_tokens:
            v = window_values(fh.prefix, np.array([lo]), np.array([hi]))
            whole = (text_digest(key, b" ".join(toks)), int(prefilter(v, key.txt)[0]))
        wholes.append(whole)
        entries: list[tuple[int, int, int]] = []
        if count >= n:
            first = np.arange(lo, hi - n + 1)
            pf = prefilter(window_values(fh.prefix, first, first + n), key.win)
            for j in range(count - n + 1):
                entries.append((shingle_digest(key, b" ".join(toks[j : j + n])), int(pf[j]), j))
        shingles.append(entries)
    return shingles, wholes


def build_index(
    cases: Iterable[tuple[str, Sequence[tuple[str, str]]]], key: Key, options: IndexOptions | None = None
) -> ContaminationIndex:
    """Build an index from golden cases.

    Args:
        cases: ``(case_id, [(field_path, text), ...])`` for every case; empty texts are ignored.
        key: The key; only its fingerprint is recorded.
        options: Shingle size, frequency guard, boilerplate and canaries.

    Returns:
        The index. ``stats`` counts what was kept and what the frequency guard and the boilerplate list
        dropped.

    Raises:
        JudgekitError: Duplicate case ids, no case at all, or a shingle size below 4.
    """
    opts = options or IndexOptions()
    n = opts.shingle_size
    if n < 4 or n > 64:
        raise JudgekitError(
            f"shingle size {n} is out of range; use 4 to 64 tokens ({DEFAULT_SHINGLE_SIZE} is the default)"
        )
    case_ids: list[str] = []
    refs: list[TextRef] = []
    shingle_rows: list[tuple[int, int, int, int]] = []  # digest, prefilter, text, offset
    whole_rows: list[tuple[int, int, int]] = []  # digest, prefilter, text
    seen: set[str] = set()
    for case_id, pairs in cases:
        if case_id in seen:
            raise JudgekitError(f"case id {case_id!r} appears twice; case ids must be unique")
        seen.add(case_id)
        case_idx = len(case_ids)
        case_ids.append(case_id)
        kept = [(f, t) for f, t in pairs if fold(t).strip()]
        if not kept:
            continue
        shingles, wholes = _case_entries(key, [t for _, t in kept], n, opts.min_text_tokens)
        for (fld, text), ents, whole in zip(kept, shingles, wholes, strict=True):
            text_idx = len(refs)
            refs.append(TextRef(case=case_idx, field=fld, n_tokens=len(fold(text).split())))
            shingle_rows.extend((d, p, text_idx, off) for d, p, off in ents)
            if whole is not None:
                whole_rows.append((whole[0], whole[1], text_idx))
    if not case_ids:
        raise JudgekitError("no cases to index; the case set is empty")

    max_cases = opts.max_cases if opts.max_cases is not None else max(2, math.ceil(0.02 * len(case_ids)))
    boiler_sh: set[int] = set()
    boiler_tx: set[int] = set()
    if opts.boilerplate:
        b_sh, b_tx = _case_entries(key, list(opts.boilerplate), n, 1)
        boiler_sh = {d for ents in b_sh for d, _, _ in ents}
        boiler_tx = {w[0] for w in b_tx if w is not None}

    def guard(rows: Sequence[tuple[int, ...]], boiler: set[int]) -> tuple[list[tuple[int, ...]], int, int]:
        owners: dict[int, set[int]] = {}
        for row in rows:
            owners.setdefault(row[0], set()).add(refs[row[2]].case)
        shared = {d for d, cs in owners.items() if len(cs) > max_cases}
        kept_rows = [r for r in rows if r[0] not in shared and r[0] not in boiler]
        n_shared = sum(1 for r in rows if r[0] in shared)
        return kept_rows, n_shared, len(rows) - len(kept_rows) - n_shared

    sh_kept, sh_shared, sh_boiler = guard(shingle_rows, boiler_sh)
    tx_kept, tx_shared, tx_boiler = guard(whole_rows, boiler_tx)
    sh_kept.sort()
    tx_kept.sort()
    sh = np.array(sh_kept, dtype=np.uint64).reshape(-1, 4)
    tx = np.array(tx_kept, dtype=np.uint64).reshape(-1, 3)
    stats = {
        "cases": len(case_ids),
        "texts": len(refs),
        "shingle_entries": len(sh_kept),
        "shingle_entries_dropped_shared": sh_shared,
        "shingle_entries_dropped_boilerplate": sh_boiler,
        "text_entries": len(tx_kept),
        "text_entries_dropped_shared": tx_shared,
        "text_entries_dropped_boilerplate": tx_boiler,
        "texts_below_min_tokens": sum(1 for r in refs if r.n_tokens < opts.min_text_tokens),
    }
    return ContaminationIndex(
        key_fingerprint=key.fingerprint,
        shingle_size=n,
        min_text_tokens=opts.min_text_tokens,
        max_cases=max_cases,
        case_ids=tuple(case_ids),
        texts=tuple(refs),
        canaries=tuple(dict.fromkeys(opts.canaries)),
        unicode_version=UNICODE_VERSION,
        stats=stats,
        shingle_digest=sh[:, 0].copy(),
        shingle_prefilter=sh[:, 1].astype(np.uint32),
        shingle_text=sh[:, 2].astype(np.uint32),
        shingle_offset=sh[:, 3].astype(np.uint32),
        text_digest=tx[:, 0].copy(),
        text_prefilter=tx[:, 1].astype(np.uint32),
        text_text=tx[:, 2].astype(np.uint32),
    )


# ------------------------------------------------------------------------------------- file format

_ARRAYS: tuple[tuple[str, str], ...] = (
    ("shingle_digest", "<u8"),
    ("shingle_prefilter", "<u4"),
    ("shingle_text", "<u4"),
    ("shingle_offset", "<u4"),
    ("text_digest", "<u8"),
    ("text_prefilter", "<u4"),
    ("text_text", "<u4"),
)

_PREAMBLE_BYTES = 16
"""Magic (8 bytes), format version (4) and header length (4)."""


def index_mac_key(key: Key) -> bytes:
    """The 32-byte key of the index MAC: ``HMAC-SHA256(key=master, msg=MAC_KEY_INFO)``.

    Domain-separated from every other use of the master key (digests, canaries, fingerprint), so that no
    value an index or a report publishes can stand in for the MAC key.
    """
    return hmac.new(key.master, MAC_KEY_INFO, hashlib.sha256).digest()


def index_mac(key: Key, content: bytes | memoryview) -> bytes:
    """The 32-byte tag of an index file: ``HMAC-SHA256(index_mac_key(key), content)``.

    Args:
        key: The contamination key the index is built with.
        content: Every byte of the file before the tag (preamble, header, padding, array region).
    """
    return hmac.new(index_mac_key(key), content, hashlib.sha256).digest()


def _header(index: ContaminationIndex, arrays: list[dict[str, Any]], region_bytes: int) -> bytes:
    header = {
        "format": "judgekit-contamination-index",
        "format_version": FORMAT_VERSION,
        "hash_scheme": HASH_SCHEME,
        "mac": MAC_ALGORITHM,
        "key_fingerprint": index.key_fingerprint,
        "normalisation": {"version": NORMALISATION_VERSION, "unicode_version": index.unicode_version},
        "shingle_size": index.shingle_size,
        "min_text_tokens": index.min_text_tokens,
        "max_cases": index.max_cases,
        "cases": list(index.case_ids),
        "texts": [[r.case, r.field, r.n_tokens] for r in index.texts],
        "canaries": list(index.canaries),
        "stats": index.stats,
        "arrays": arrays,
        "region_bytes": region_bytes,
    }
    return _canonical_json(header)


def _canonical_json(value: Any) -> bytes:
    """The header's byte form: UTF-8 JSON, keys sorted, no spaces, non-ASCII characters as they are."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def write_index(index: ContaminationIndex, path: str | os.PathLike[str], key: Key) -> None:
    """Write an index file, authenticated with the key (format version 3; byte-for-byte deterministic).

    The last :data:`MAC_BYTES` bytes of the file are :func:`index_mac` over every byte before them, so
    that a reader holding the key can tell the file is exactly what was written. The file is written to a
    temporary name and renamed, so that a reader never sees half a file.

    Args:
        index: The index to write.
        path: The file, as text or a path object.
        key: The key the index was built with (it keys the MAC).

    Raises:
        JudgekitError: ``key`` is not the key the index was built with (exit code 2).
    """
    if key.fingerprint != index.key_fingerprint:
        raise JudgekitError(
            f"{path}: the key (fingerprint {key.fingerprint}) is not the key this index was built with "
            f"(fingerprint {index.key_fingerprint}); write it with the key given to build_index",
            exit_code=2,
        )
    path = Path(path)
    blobs = [np.ascontiguousarray(getattr(index, name), dtype=dt).tobytes() for name, dt in _ARRAYS]
    # Offsets are relative to the start of the array region (which begins 8-byte aligned after the header).
    arrays: list[dict[str, Any]] = []
    pos = 0
    for (name, dt), blob in zip(_ARRAYS, blobs, strict=True):
        arrays.append({"name": name, "dtype": dt, "count": len(blob) // np.dtype(dt).itemsize, "offset": pos})
        pos += len(blob)
    header = _header(index, arrays, pos)
    prefix = MAGIC + FORMAT_VERSION.to_bytes(4, "little") + len(header).to_bytes(4, "little") + header
    prefix += b"\x00" * (-len(prefix) % 8)
    mac = hmac.new(index_mac_key(key), prefix, hashlib.sha256)
    for blob in blobs:
        mac.update(blob)
    # redact=False: a binary index of keyed hashes and offsets (no text), streamed in blocks.
    write_atomic(path, [prefix, *blobs, mac.digest()], redact=False)


def _bad_index(path: Path, what: str) -> JudgekitError:
    return JudgekitError(
        f"{path}: not a usable contamination index ({what}); rebuild it with `judgekit contamination index`",
        exit_code=2,
    )


_CLAIMED_FINGERPRINT = re.compile(rb'"key_fingerprint":"([0-9a-f]{32})"')


def _does_not_verify(path: Path, data: bytes, key: Key) -> JudgekitError:
    """The refusal of an index whose MAC does not match, naming the fingerprint its header claims."""
    hlen = int.from_bytes(data[12:_PREAMBLE_BYTES], "little")
    found = _CLAIMED_FINGERPRINT.search(data, _PREAMBLE_BYTES, min(len(data), _PREAMBLE_BYTES + hlen))
    claimed = found.group(1).decode("ascii") if found else None
    if claimed is not None and claimed != key.fingerprint:
        cause = (
            f"built with another key (its unverified header names fingerprint {claimed}), or tampered with"
        )
    else:
        cause = "tampered with, truncated or extended since it was written, or built with another key"
    return JudgekitError(
        f"{path}: the index does not verify with this key (fingerprint {key.fingerprint}): it was {cause}, "
        "so it cannot be trusted to find leaks. Scan with the key file the index was built with, or rebuild "
        "the index from the golden set with `judgekit contamination index`",
        exit_code=2,
    )


def read_index(path: str | os.PathLike[str], key: Key) -> ContaminationIndex:
    """Read an index file and verify it with the key before anything in it is used.

    The MAC (:func:`index_mac` over every byte before the file's last :data:`MAC_BYTES` bytes) is checked
    in constant time before the header is parsed, so an edited parameter, case id, canary or digest, a
    truncated or extended file, and an index built with another key are all refused the same way.

    Args:
        path: The file, as text or a path object.
        key: The contamination key the index was built with.

    Raises:
        JudgekitError: The file is missing, not an index, in the unauthenticated format version 1, the
            outdated version 2 (13-token shingles; rebuild it) or an
            unknown version, or does not verify with the key (tampered with, or another key), or is not a
            regular file (a named pipe, device or folder: refused at once). Exit code 2.
    """
    path = Path(path)
    check_input_file(path, what="contamination index")
    try:
        data = read_regular(path, "contamination index")
    except OSError as exc:
        raise JudgekitError(f"{path}: cannot read the index ({exc.strerror})", exit_code=2) from None
    if len(data) < _PREAMBLE_BYTES or data[:8] != MAGIC:
        raise _bad_index(path, "it does not start with the judgekit index magic bytes")
    version = int.from_bytes(data[8:12], "little")
    if version in UNAUTHENTICATED_FORMAT_VERSIONS:
        raise _bad_index(
            path,
            f"format version {version}, which is not authenticated with the key, so tampering with it "
            f"cannot be detected; this judgekit reads only version {FORMAT_VERSION}",
        )
    if version in OUTDATED_FORMAT_VERSIONS:
        raise _bad_index(
            path,
            f"format version {version}, written by an earlier judgekit for one 13-token shingle per leak, "
            "which misses near-duplicates with a few words replaced; this judgekit reads only version "
            f"{FORMAT_VERSION}",
        )
    if version != FORMAT_VERSION:
        raise _bad_index(path, f"format version {version}; this judgekit reads version {FORMAT_VERSION}")
    if len(data) < _PREAMBLE_BYTES + MAC_BYTES:
        raise _does_not_verify(path, data, key)
    view = memoryview(data)
    if not hmac.compare_digest(index_mac(key, view[:-MAC_BYTES]), data[-MAC_BYTES:]):
        raise _does_not_verify(path, data, key)
    hlen = int.from_bytes(data[12:_PREAMBLE_BYTES], "little")
    return _decode(path, view[_PREAMBLE_BYTES : _PREAMBLE_BYTES + hlen], view[:-MAC_BYTES], hlen)


def _decode(path: Path, header_bytes: memoryview, content: memoryview, hlen: int) -> ContaminationIndex:
    """Build the index from a verified file's header and content (everything before the tag).

    Only files whose MAC verified reach here, so every check below guards against a writer's bug rather
    than an attacker: the header must be canonical JSON of this version, and the arrays must tile the
    array region exactly.
    """
    try:
        header = json.loads(bytes(header_bytes).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _bad_index(path, "its header is not valid JSON") from None
    if not isinstance(header, dict) or _canonical_json(header) != bytes(header_bytes):
        raise _bad_index(path, "its header is not in canonical form")
    base = _PREAMBLE_BYTES + hlen + (-(_PREAMBLE_BYTES + hlen) % 8)
    region = content[base:]
    try:
        if header["format_version"] != FORMAT_VERSION:
            raise _bad_index(path, f"its header names format version {header['format_version']!r}")
        if header["hash_scheme"] != HASH_SCHEME:
            raise _bad_index(path, f"hash scheme {header['hash_scheme']!r}; this judgekit uses {HASH_SCHEME}")
        if header["mac"] != MAC_ALGORITHM:
            raise _bad_index(path, f"MAC {header['mac']!r}; this judgekit uses {MAC_ALGORITHM}")
        norm = header["normalisation"]["version"]
        if norm != NORMALISATION_VERSION:
            raise _bad_index(
                path, f"normalisation version {norm}; this judgekit uses {NORMALISATION_VERSION}"
            )
        if int(header["region_bytes"]) != len(region) or any(content[_PREAMBLE_BYTES + hlen : base]):
            raise _bad_index(path, "its array region does not have the length its header records")
        arrays: dict[str, Any] = {}
        pos = 0
        for spec, (name, dtype) in zip(header["arrays"], _ARRAYS, strict=True):
            if spec["name"] != name or spec["dtype"] != dtype or int(spec["offset"]) != pos:
                raise _bad_index(path, f"its array table is not the layout of version {FORMAT_VERSION}")
            dt = np.dtype(dtype)
            arr = np.frombuffer(region, dtype=dt, count=int(spec["count"]), offset=pos)
            arrays[name] = arr.astype(dt.newbyteorder("="))
            pos += arr.nbytes
        if pos != len(region):
            raise _bad_index(path, "its arrays do not fill the array region")
        case_ids = tuple(str(c) for c in header["cases"])
        texts = tuple(TextRef(case=int(c), field=str(f), n_tokens=int(k)) for c, f, k in header["texts"])
        shingle_size = int(header["shingle_size"])
        if not 4 <= shingle_size <= 64:
            raise _bad_index(path, f"shingle size {shingle_size} is out of range")
        if any(not 0 <= t.case < len(case_ids) for t in texts):
            raise _bad_index(path, "a text refers to a case the index does not have")
        for name in ("shingle_text", "text_text"):
            if len(arrays[name]) and int(arrays[name].max()) >= len(texts):
                raise _bad_index(path, f"{name} refers to a text the index does not have")
        return ContaminationIndex(
            key_fingerprint=str(header["key_fingerprint"]),
            shingle_size=shingle_size,
            min_text_tokens=int(header["min_text_tokens"]),
            max_cases=int(header["max_cases"]),
            case_ids=case_ids,
            texts=texts,
            canaries=tuple(str(c) for c in header["canaries"]),
            unicode_version=str(header["normalisation"]["unicode_version"]),
            stats={str(k): int(v) for k, v in header["stats"].items()},
            **{name: arrays[name] for name, _ in _ARRAYS},
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _bad_index(path, f"its header is incomplete: {exc}") from None
