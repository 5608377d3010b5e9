"""Which characters can draw a fence bracket, and which vanish between two of them: derived from Unicode data.

A data fence is ``<<<BEGIN NAME nonce>>>`` ... ``<<<END NAME nonce>>>``; text inside a fence must never
hold anything a reader could take for one. :mod:`judgekit.judges.prompt` therefore neutralises every run
of two or more *brackets*, where a run may be held together by *glue*. Both sets come from the Unicode
character database (:mod:`unicodedata`), by the rules below, never from a hand-written list:

* **Bracket lookalikes** (:func:`bracket_lookalikes`): a character of category ``Sm`` (math symbol),
  ``Ps``/``Pe`` (opening/closing punctuation) or ``Pi``/``Pf`` (initial/final quotation mark) whose name
  holds one of the words in :data:`BRACKET_NAME_WORDS` (``LESS-THAN``, ``GREATER-THAN``, ``ANGLE``,
  ``CHEVRON``, ``GUILLEMET``, ``PRECEDES``, ``SUCCEEDS``): ``<``, ``≪``, ``⋘``, ``≤``, ``〈``, ``⟪``,
  ``❰``, ``«``, ``‹``, ``≺`` ...; a modifier letter (``Sk``) named a left or right arrowhead (``˂``,
  ``˃``); and every character whose NFKC or NFKD form contains one of those (``＜``, ``﹤``, ``︿`` ...).
* **Glue** (:func:`glue_characters`): characters that a reader drops or draws on top of the character
  before them, so that ``<`` glue ``<`` reads as ``<<``: control characters (``Cc``) except newline and
  tab, format characters (``Cf``: zero-width space, joiners, word joiner, byte order mark, bidi
  controls, tags, soft hyphen ...) and combining marks (``Mn``, ``Me``: accents, variation selectors,
  the combining long solidus of ``≮`` ...). Newline, tab and every space separate runs.

The sets depend on the Unicode version of the running Python, and scanning all code points takes about
a second, so they are generated once into :mod:`judgekit.judges._lookalike_table` (committed) by
``python -m judgekit.judges.lookalikes``; a test regenerates them and compares.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path

from judgekit.textnorm import LOOKALIKE_NFKC, LOOKALIKE_NFKD

__all__ = [
    "BRACKET_CATEGORIES",
    "BRACKET_NAME_WORDS",
    "GLUE_CATEGORIES",
    "bracket_lookalikes",
    "glue_characters",
    "is_bracket",
    "is_glue",
    "main",
    "ranges",
    "table_source",
]

BRACKET_CATEGORIES = frozenset({"Sm", "Ps", "Pe", "Pi", "Pf"})
"""General categories in which a character named by :data:`BRACKET_NAME_WORDS` is a bracket lookalike."""

BRACKET_NAME_WORDS = ("LESS-THAN", "GREATER-THAN", "ANGLE", "CHEVRON", "GUILLEMET", "PRECEDES", "SUCCEEDS")
"""Whole words of a character name that mark it as an angle bracket, guillemet or chevron shape."""

GLUE_CATEGORIES = frozenset({"Cc", "Cf", "Mn", "Me"})
"""General categories of the characters that join two brackets into a run (newline and tab excepted)."""

_NAME_WORDS = re.compile(r"(?<![A-Z-])(?:" + "|".join(map(re.escape, BRACKET_NAME_WORDS)) + r")(?![A-Z-])")
_ARROWHEAD = re.compile(r"\b(?:LEFT|RIGHT) ARROWHEAD\b")
_SEPARATORS = frozenset("\n\t")
_TABLE_MODULE = "judgekit.judges._lookalike_table"


def _named_bracket(char: str) -> bool:
    category = unicodedata.category(char)
    if category in BRACKET_CATEGORIES:
        return _NAME_WORDS.search(unicodedata.name(char, "")) is not None
    if category == "Sk":
        return _ARROWHEAD.search(unicodedata.name(char, "")) is not None
    return False


def is_glue(char: str) -> bool:
    """Whether ``char`` joins the brackets on either side of it into one run (see the module docstring).

    Args:
        char: One character.

    Returns:
        ``True`` for a control character other than newline and tab, a format character or a combining
        mark.
    """
    return char not in _SEPARATORS and unicodedata.category(char) in GLUE_CATEGORIES


def _code_points() -> list[str]:
    return [chr(i) for i in range(sys.maxunicode + 1) if not 0xD800 <= i <= 0xDFFF]


_COMPATIBILITY_FORMS = (LOOKALIKE_NFKC, LOOKALIKE_NFKD)
"""The forms of a character a bracket may hide in besides the character itself: its NFKC and NFKD forms."""


def bracket_lookalikes() -> frozenset[str]:
    """Every bracket lookalike of the running Python's Unicode version (the rule in the module docstring).

    Returns:
        The characters; scanning every code point takes about a second.
    """
    chars = _code_points()
    named = {c for c in chars if _named_bracket(c)}
    derived = {
        c
        for c in chars
        if unicodedata.decomposition(c)
        and any(d in named for profile in _COMPATIBILITY_FORMS for d in profile.apply(c))
    }
    return frozenset(named | derived)


def is_bracket(char: str) -> bool:
    """Whether one character is a bracket lookalike, by the same rule as :func:`bracket_lookalikes`.

    Args:
        char: One character.

    Returns:
        ``True`` when ``char`` or its NFKC or NFKD form holds a named bracket.
    """
    forms = {char, *(profile.apply(char) for profile in _COMPATIBILITY_FORMS)}
    return any(_named_bracket(c) for form in forms for c in form)


def glue_characters() -> frozenset[str]:
    """Every glue character of the running Python's Unicode version (see :func:`is_glue`).

    Returns:
        The characters.
    """
    return frozenset(c for c in _code_points() if is_glue(c))


def ranges(chars: frozenset[str]) -> tuple[tuple[int, int], ...]:
    """Compress a set of characters into sorted, disjoint, inclusive code point ranges.

    Args:
        chars: The characters.

    Returns:
        ``(first, last)`` pairs, ascending; adjacent code points share one pair.

    Example:
        >>> ranges(frozenset("abcx"))
        ((97, 99), (120, 120))
    """
    out: list[tuple[int, int]] = []
    for point in sorted(map(ord, chars)):
        if out and out[-1][1] == point - 1:
            out[-1] = (out[-1][0], point)
        else:
            out.append((point, point))
    return tuple(out)


def _format_ranges(name: str, doc: str, pairs: tuple[tuple[int, int], ...]) -> str:
    lines = [f"{name}: tuple[tuple[int, int], ...] = ("]
    lines += [f"    (0x{a:04X}, 0x{b:04X}),  # {_label(a, b)}" for a, b in pairs]
    lines.append(")")
    lines.append(f'"""{doc}"""')
    return "\n".join(lines)


def _label(first: int, last: int) -> str:
    name = unicodedata.name(chr(first), f"U+{first:04X}")
    if first == last:
        return name
    return f"{name} .. {unicodedata.name(chr(last), f'U+{last:04X}')}"


def table_source() -> str:
    """The full text of :mod:`judgekit.judges._lookalike_table` for the running Python's Unicode version.

    Returns:
        Python source: the Unicode version and the bracket and glue ranges.
    """
    return "\n".join(
        [
            '"""Bracket lookalikes and glue for the prompt fences: GENERATED, do not edit.',
            "",
            "Regenerate with ``python -m judgekit.judges.lookalikes`` (the rules are in that module);",
            "``tests/judges/test_lookalikes.py`` checks that regenerating gives this file.",
            '"""',
            "",
            "# ruff: noqa: E501",
            "# fmt: off",
            f'UNICODE_VERSION = "{unicodedata.unidata_version}"',
            '"""The Unicode version (``unicodedata.unidata_version``) the ranges were generated from."""',
            "",
            _format_ranges(
                "BRACKET_RANGES",
                "Inclusive code point ranges of the bracket lookalikes.",
                ranges(bracket_lookalikes()),
            ),
            "",
            _format_ranges(
                "GLUE_RANGES",
                "Inclusive code point ranges of the glue characters (joining brackets into a run).",
                ranges(glue_characters()),
            ),
            "",
        ]
    )


def main() -> None:
    """Write :mod:`judgekit.judges._lookalike_table` next to this module."""
    target = Path(__file__).with_name("_lookalike_table.py")
    from judgekit.io.atomic import write_atomic

    write_atomic(target, table_source())
    print(f"wrote {target} (Unicode {unicodedata.unidata_version})")


if __name__ == "__main__":
    main()
