r"""Text normalisation for contamination checks (normalisation version 1).

Every text is folded the same way on both sides of a contamination check, when the index is built from
the golden cases and when a training export is scanned:

1. Unicode NFKC, then full case folding (:meth:`str.casefold`), then NFKC again (case folding can undo
   NFKC for a handful of characters): the profile :data:`judgekit.textnorm.CONTAMINATION` does steps 1
   and 2.
2. Every character that :meth:`str.isalnum` accepts (Unicode letters and numbers) is kept. Every line break
   (``\n``, ``\r``, ``\v``, ``\f``, ``\x1c``-``\x1e``, ``\x85``, U+2028, U+2029) becomes ``\n``. Every
   other character (spaces, punctuation, symbols, the underscore, combining marks, controls, lone
   surrogates) becomes a space.
3. A *token* is a maximal run of kept characters. The *canonical form* of a text is its tokens joined by
   single spaces; it is what keyed digests are computed over (see :mod:`judgekit.contamination.index`).

ASCII text takes a byte-translation fast path that gives exactly the same result as the general path.
The result depends on the Unicode database of the running Python (:data:`UNICODE_VERSION`); index files
record it so that a scan can say when it differs.
"""

from __future__ import annotations

from collections.abc import Sequence

from judgekit.textnorm import CONTAMINATION, LINE_BREAKS
from judgekit.textnorm import UNICODE_VERSION as _UNICODE_VERSION

__all__ = [
    "ASCII_FOLD_TABLE",
    "FIELD_SEPARATOR",
    "NORMALISATION_VERSION",
    "UNICODE_VERSION",
    "canonical",
    "fold",
    "fold_many",
    "tokens",
]

NORMALISATION_VERSION = 1
"""Bumped whenever any text would normalise differently; part of the index format."""

UNICODE_VERSION: str = _UNICODE_VERSION
"""Version of the Unicode database used by NFKC, case folding and character classes in this process."""

FIELD_SEPARATOR = b"\x01"
"""Byte that separates texts inside a folded buffer (:func:`fold_many`); never produced by :func:`fold`."""


def _ascii_table(*, keep_separator: bool) -> bytes:
    table = bytearray(b" " * 256)
    for b in range(256):
        ch = chr(b)
        if b < 128 and ch.isalnum():
            table[b] = ord(ch.lower())
        elif b >= 128:
            table[b] = b  # never used on ASCII input; identity keeps the table total
    for ch in LINE_BREAKS:
        if ord(ch) < 128:
            table[ord(ch)] = ord("\n")
    if keep_separator:
        table[FIELD_SEPARATOR[0]] = FIELD_SEPARATOR[0]
    return bytes(table)


_ASCII_TABLE = _ascii_table(keep_separator=False)
_ASCII_TABLE_SEP = _ascii_table(keep_separator=True)
ASCII_FOLD_TABLE: bytes = _ASCII_TABLE_SEP
"""What each byte of ASCII text folds to, the separator (:data:`FIELD_SEPARATOR`) kept: ``fold_many`` of
ASCII texts is ``FIELD_SEPARATOR.join(texts)`` translated by this table (when no text holds the
separator)."""


def fold(text: str) -> str:
    r"""Fold a text: NFKC and case folding, punctuation to spaces, line breaks to ``\n``.

    Args:
        text: Any text.

    Returns:
        The folded text. Spaces are not collapsed, so token boundaries and line breaks keep their
        positions; :func:`canonical` gives the collapsed form. The result contains only kept characters,
        spaces and ``\n``.
    """
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_TABLE).decode("ascii")
    return CONTAMINATION.apply(text)


def tokens(text: str) -> list[str]:
    """Split a text into normalised tokens (see the module docstring)."""
    return fold(text).split()


def canonical(text: str) -> str:
    """Return the canonical form of a text: its normalised tokens joined by single spaces.

    Two texts that differ only in case, Unicode compatibility forms, punctuation or whitespace have the
    same canonical form. An empty result means the text has no tokens.
    """
    return " ".join(tokens(text))


def fold_many(texts: Sequence[str]) -> bytes:
    """Fold many texts into one UTF-8 buffer, texts separated by :data:`FIELD_SEPARATOR`.

    This is the scanner's input form. Text ``i`` of the buffer is ``fold(texts[i])`` encoded as UTF-8;
    the buffer never contains the separator byte anywhere else. When every text is ASCII the whole batch
    is folded by one byte translation.

    Args:
        texts: The texts, in order.

    Returns:
        The folded buffer (``b""`` for no texts).
    """
    joined = "\x01".join(texts)
    if joined.isascii() and joined.count("\x01") == len(texts) - 1:
        return joined.encode("ascii").translate(_ASCII_TABLE_SEP)
    return FIELD_SEPARATOR.join(
        t.encode("ascii").translate(_ASCII_TABLE) if t.isascii() else CONTAMINATION.apply(t).encode("utf-8")
        for t in texts
    )
