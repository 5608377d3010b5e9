"""Normalisation: NFKC, case folding, punctuation and whitespace folding; the ASCII fast path."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.contamination.normalise import FIELD_SEPARATOR, canonical, fold, fold_many, tokens
from judgekit.textnorm import CONTAMINATION


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("Hello, World!", "hello world", id="case_and_punctuation"),
        pytest.param("  many\t\tspaces \n and lines ", "many spaces and lines", id="whitespace"),
        pytest.param("Ｆｕｌｌｗｉｄｔｈ ＡＢＣ", "fullwidth abc", id="nfkc_fullwidth"),
        pytest.param("the ﬁle", "the file", id="nfkc_ligature"),
        pytest.param("Straße", "strasse", id="casefold_sharp_s"),
        pytest.param("ΟΔΥΣΣΕΥΣ", "οδυσσευσ", id="casefold_final_sigma"),
        pytest.param("e\u0301cole", "école", id="nfkc_composes_marks"),
        pytest.param("snake_case-and—dashes", "snake case and dashes", id="underscore_and_dashes"),
        pytest.param("412.18 ½", "412 18 1 2", id="numbers_split_at_punctuation"),
        pytest.param("日本語のテキスト", "日本語のテキスト", id="cjk_one_token"),
        pytest.param("...!!!", "", id="no_tokens"),
        pytest.param("zero\u200bwidth", "zero width", id="zero_width_space_separates"),
    ],
)
def test_canonical_examples(text: str, expected: str) -> None:
    assert canonical(text) == expected


def test_line_breaks_are_kept_as_newlines_by_fold() -> None:
    assert fold("a\r\nb\u2028c\x85d") == "a\n\nb\nc\nd"
    assert tokens("a\r\nb") == ["a", "b"]


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_fast_path_equals_unicode_path(text: str) -> None:
    # A trailing "é" (kept, unchanged, composing with nothing before it) sends the text down the profile's
    # general path; the byte table must give the same folding, and both the rule's.
    assert fold(text) == CONTAMINATION.apply(text + "\u00e9")[:-1] == _fold_by_definition(text)


@given(st.lists(st.text(max_size=40), max_size=8))
def test_fold_many_is_fold_of_each_joined_by_separator(texts: list[str]) -> None:
    expected = FIELD_SEPARATOR.join(fold(t).encode("utf-8") for t in texts)
    assert fold_many(texts) == expected


def test_fold_many_separator_inside_a_text_is_folded_to_space() -> None:
    out = fold_many(["a\x01b", "c"])
    assert out.count(FIELD_SEPARATOR) == 1
    assert out == b"a b\x01c"


@given(st.text(max_size=60))
def test_canonical_is_idempotent(text: str) -> None:
    c = canonical(text)
    assert canonical(c) == c
    assert "  " not in c


def _fold_by_definition(text: str) -> str:
    """The normalisation rule written character by character (module docstring, step 2)."""
    s = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    breaks = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
    return "".join(ch if ch.isalnum() else "\n" if ch in breaks else " " for ch in s)


@settings(max_examples=300)
@given(st.text())
def test_fold_follows_its_definition_on_any_text(text: str) -> None:
    assert fold(text) == _fold_by_definition(text)


@pytest.mark.parametrize(
    "text",
    ["a\u3000b\u00a0c\u2003d", "x\x1fy\tz", "naïve_café—über\u2028next", "①②③ ½ ﬁ", "a\u0301\u0327b"],
)
def test_fold_follows_its_definition_on_edge_cases(text: str) -> None:
    assert fold(text) == _fold_by_definition(text)
