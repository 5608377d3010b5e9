"""The bracket-lookalike and glue tables behind the prompt fences: generated from Unicode data, complete."""

from __future__ import annotations

import doctest
import unicodedata
from pathlib import Path

import pytest

import judgekit.judges._lookalike_table as table
from judgekit.judges import lookalikes
from judgekit.judges._lookalike_table import BRACKET_RANGES, GLUE_RANGES, UNICODE_VERSION
from judgekit.judges.lookalikes import (
    bracket_lookalikes,
    glue_characters,
    is_bracket,
    is_glue,
    table_source,
)


def expand(pairs: tuple[tuple[int, int], ...]) -> frozenset[str]:
    return frozenset(chr(c) for first, last in pairs for c in range(first, last + 1))


BRACKETS = expand(BRACKET_RANGES)
GLUE = expand(GLUE_RANGES)

# Every bracket the issue names, and every one the old hand list had.
ISSUE_BRACKETS = "﹤﹥〈〉❰❱⟪⟫≪≫˂˃"
OLD_HAND_LIST = "<>‹›«»＜＞〈〉⟨⟩《》〈〉❮❯❬❭"
MORE_LOOKALIKES = "⋘⋙≺≻≮≯⟨⟩︽︾︿﹀⧼⧽⦑⦒⫷⫸≤≥"


@pytest.mark.parametrize("char", sorted(set(ISSUE_BRACKETS + OLD_HAND_LIST + MORE_LOOKALIKES)))
def test_table_holds_every_named_bracket_lookalike(char: str) -> None:
    assert char in BRACKETS, f"U+{ord(char):04X} {unicodedata.name(char)}"
    assert is_bracket(char)


@pytest.mark.parametrize(
    "char",
    [*"()[]{}/|\\^-_·#'\"`~=+*&%$@!?.,:; aZ09", "∧", "∨", "⊿", "▲", "▶", "►", "▭", "∆", "\u00a0", "\n", "\t"],
)
def test_table_leaves_ordinary_punctuation_and_other_shapes_out(char: str) -> None:
    assert char not in BRACKETS
    assert not is_bracket(char)


GLUE_SAMPLES = {
    "\x00": "NUL",
    "\x01": "START OF HEADING",
    "\x1b": "ESCAPE",
    "\r": "CARRIAGE RETURN",
    "\x7f": "DELETE",
    "\x85": "NEXT LINE",
    "\u00ad": "SOFT HYPHEN",
    "\u061c": "ARABIC LETTER MARK",
    "\u180e": "MONGOLIAN VOWEL SEPARATOR",
    "\u200b": "ZERO WIDTH SPACE",
    "\u200c": "ZERO WIDTH NON-JOINER",
    "\u200d": "ZERO WIDTH JOINER",
    "\u200e": "LEFT-TO-RIGHT MARK",
    "\u200f": "RIGHT-TO-LEFT MARK",
    "\u202a": "LEFT-TO-RIGHT EMBEDDING",
    "\u202e": "RIGHT-TO-LEFT OVERRIDE",
    "\u2060": "WORD JOINER",
    "\u2066": "LEFT-TO-RIGHT ISOLATE",
    "\u2069": "POP DIRECTIONAL ISOLATE",
    "\ufeff": "ZERO WIDTH NO-BREAK SPACE (byte order mark)",
    "\U000e0041": "TAG LATIN CAPITAL LETTER A",
    "\u0301": "COMBINING ACUTE ACCENT",
    "\u0338": "COMBINING LONG SOLIDUS OVERLAY",
    "\u034f": "COMBINING GRAPHEME JOINER",
    "\u20d2": "COMBINING LONG VERTICAL LINE OVERLAY",
    "\u20dd": "COMBINING ENCLOSING CIRCLE",
    "\ufe0f": "VARIATION SELECTOR-16",
}


@pytest.mark.parametrize("char", list(GLUE_SAMPLES), ids=list(GLUE_SAMPLES.values()))
def test_glue_holds_controls_format_characters_and_combining_marks(char: str) -> None:
    assert char in GLUE
    assert is_glue(char)


@pytest.mark.parametrize("char", ["\n", "\t", " ", "\u00a0", "\u3000", "a", "·", "<"])
def test_newline_tab_spaces_and_visible_characters_are_not_glue(char: str) -> None:
    assert char not in GLUE
    assert not is_glue(char)


def test_brackets_and_glue_are_disjoint() -> None:
    assert not BRACKETS & GLUE


def test_one_bracket_never_normalises_into_two() -> None:
    """A single character is never a run, so its NFKC or NFKD form must not hold two brackets either."""
    for char in BRACKETS:
        for form in ("NFKC", "NFKD"):
            assert sum(c in BRACKETS for c in unicodedata.normalize(form, char)) <= 1, hex(ord(char))


def test_is_bracket_and_is_glue_agree_with_the_table_on_every_code_point() -> None:
    if unicodedata.unidata_version != UNICODE_VERSION:
        pytest.skip(f"table generated from Unicode {UNICODE_VERSION}, this Python has another version")
    marked = BRACKETS | GLUE
    for point in range(0x110000):
        char = chr(point)
        if unicodedata.category(char) in {"Cn", "Cs", "Co"}:  # unassigned, surrogate, private use
            assert char not in marked, hex(point)
            continue
        assert is_bracket(char) == (char in BRACKETS), hex(point)
        assert is_glue(char) == (char in GLUE), hex(point)


def test_regenerating_the_table_gives_the_committed_file() -> None:
    committed = Path(table.__file__).read_text(encoding="utf-8")
    if unicodedata.unidata_version == UNICODE_VERSION:
        assert table_source() == committed, "run: python -m judgekit.judges.lookalikes"
    else:
        # Another Unicode version: characters are never removed and names and normalisation are stable,
        # so the committed table is a subset of what this Python derives.
        assert bracket_lookalikes() >= BRACKETS, "run: python -m judgekit.judges.lookalikes"
        assert glue_characters() >= GLUE - {c for c in GLUE if unicodedata.category(c) == "Cn"}


def test_main_writes_the_table_next_to_the_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "lookalikes.py"
    monkeypatch.setattr(lookalikes, "__file__", str(fake))
    monkeypatch.setattr(lookalikes, "table_source", lambda: "# the generated table\n")
    lookalikes.main()
    assert (tmp_path / "_lookalike_table.py").read_text(encoding="utf-8") == "# the generated table\n"


def test_doctests_run() -> None:
    result = doctest.testmod(lookalikes)
    assert result.attempted >= 1
    assert result.failed == 0
