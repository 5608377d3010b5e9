"""Untrusted text in Markdown: rendered by a real CommonMark renderer, it is its own text and nothing else.

The renderer is markdown-it-py (CommonMark, with GitHub's tables, strikethrough and linkify of bare
``scheme://`` links and e-mail addresses). Every value is rendered in each place a judgekit renderer puts
one (running text, a list item, a heading, a table cell, after bold text, alone on a line after a
paragraph, a code span) and the rendering is compared with the same template holding a plain word.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from judgekit.markdown_text import md_code, md_text
from support import flatten_tokens, github_markdown

PLACEHOLDER = "ZZVALUEZZ"

TEXT_TEMPLATES = {
    "paragraph": "Before X after.",
    "list_item": "- X",
    "heading": "# Run report: X",
    "heading_end": "### judgekit: X",
    "table_cell": "| case | why |\n|---|---|\n| X | X |",
    "after_bold": "**X.** figures",
    "line_after_paragraph": "Some text\nX",
    "line_start": "X",
}
CODE_TEMPLATES = {
    "code_in_heading": "# Calibration of judge C against C",
    "code_in_paragraph": "Labels: C (sha256 `abc`) · scale C",
    "code_in_table": "| case | n |\n|---|---:|\n| C | 3 |",
}

FRAGMENTS = [
    "<img src=https://evil.example/x.png>",
    "[click](https://evil.example)",
    "[click](/relative)",
    "![pixel](https://evil.example/p.gif)",
    "[x]: https://evil.example",
    "[^1]",
    "[ ] ",
    "<https://evil.example>",
    "<a href='https://evil.example'>",
    "</a>",
    "<!-- c -->",
    "https://evil.example/path?q=1",
    "HTTPS://EVIL.EXAMPLE",
    "www.evil.example",
    "(www.evil.example)",
    "mailto:a@b.example",
    "alice@example.com",
    "@octocat",
    "#123",
    "# ",
    "## Heading",
    " #",
    "\n# Heading\n",
    "\n",
    "\r\n",
    "\r",
    "\n===\n",
    "\n---\n",
    "> ",
    "- ",
    "+ ",
    "1. ",
    "2) ",
    "    ",
    "\t",
    "```",
    "~~~",
    "`",
    "``",
    "**bold**",
    "*",
    "_",
    "__init__",
    "_em_",
    "a_b",
    "~~s~~",
    "~",
    "|",
    "\\",
    "\\|",
    "\\`",
    "&amp;",
    "&#60;",
    "&#x3C;",
    "&",
    "$x$",
    "$$",
    "$",
    "!",
    "[",
    "]",
    "(",
    ")",
    ":",
    ".",
    "=",
    "-",
    "\x00",
    "\u00a0",
    "é",
    "日本",
]
SPECIALS = "<>[]()!#*_`~|\\&;:/.@-+=$ \t\nabwx019"

VALUES = st.lists(
    st.one_of(
        st.sampled_from(FRAGMENTS),
        st.text(alphabet=SPECIALS, max_size=6),
        st.text(max_size=4),
    ),
    max_size=10,
).map("".join)


MD = github_markdown()
MD_UNJOINED = MarkdownIt("commonmark").disable("text_join")


def _visible(tokens: list[Token]) -> str:
    """The rendered text: each inline block's text and code, blocks apart by a space."""
    blocks = [
        "".join(c.content for c in t.children or () if c.type in ("text", "code_inline"))
        for t in tokens
        if t.type == "inline"
    ]
    return " ".join(blocks)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\x00", "\ufffd")).strip()


def _structure(tokens: list[Token]) -> Counter[str]:
    """Every token but text and code spans, with heading levels (a heading is ``heading_open:h1``)."""
    return Counter(
        f"{t.type}:{t.tag}"
        for t in flatten_tokens(tokens)
        if t.type not in ("text", "code_inline", "inline", "softbreak")
    )


def _check(template: str, mark: str, rendered_value: str, value: str) -> None:
    neutral = MD.parse(template.replace(mark, PLACEHOLDER))
    tokens = MD.parse(template.replace(mark, rendered_value))
    if _norm(value):
        assert _structure(tokens) == _structure(neutral), (template, value, rendered_value)
    else:  # nothing to show: an empty paragraph or line may go, nothing may come
        assert not _structure(tokens) - _structure(neutral), (template, value, rendered_value)
    expected = _norm(_visible(neutral).replace(PLACEHOLDER, _norm(value)))
    assert _norm(_visible(tokens)) == expected, (template, value, rendered_value)
    html = MD.renderer.render(tokens, MD.options, {})
    assert "<a " not in html, (template, value, html)
    assert "<img" not in html, (template, value, html)
    for t in flatten_tokens(tokens):
        if t.type == "text":
            # What GitHub would link or mention is never plain text: only inside a code span.
            assert not re.search(r"://|www\.|@|#\d", t.content, re.IGNORECASE), (template, value, t.content)


@pytest.mark.parametrize("where", sorted(TEXT_TEMPLATES))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=VALUES)
def test_untrusted_text_renders_as_itself(where: str, value: str) -> None:
    _check(TEXT_TEMPLATES[where], "X", md_text(value), value)


@pytest.mark.parametrize("where", sorted(CODE_TEMPLATES))
@settings(max_examples=150, deadline=None)
@given(value=VALUES)
def test_untrusted_code_span_renders_as_itself(where: str, value: str) -> None:
    rendered = md_code(value, table=where == "code_in_table")
    tokens = MD.parse(CODE_TEMPLATES[where].replace("C", rendered))
    neutral = MD.parse(CODE_TEMPLATES[where].replace("C", "`" + PLACEHOLDER + "`"))
    assert _structure(tokens) == _structure(neutral), (value, rendered)
    codes = [t.content for t in flatten_tokens(tokens) if t.type == "code_inline"]
    flat = re.sub(r"\r\n|\r|\n", " ", value.replace("\x00", "\ufffd"))
    # Each placeholder's code span holds the value exactly (the template's own `abc` is the extra one).
    assert codes.count(flat or " ") == CODE_TEMPLATES[where].count("C"), (value, rendered, codes)


@settings(max_examples=300, deadline=None)
@given(value=VALUES)
def test_dollar_signs_are_escaped_outside_code(value: str) -> None:
    """GitHub renders ``$...$`` as math (big fake text with ``$$\\Huge ...$$``): no ``$`` stays bare.

    Without markdown-it's text_join, an escaped character is its own ``text_special`` token, so a ``$`` in
    a ``text`` token is one no backslash escapes.
    """
    tokens = MD_UNJOINED.parse("Paragraph " + md_text(value))
    bare = [t.content for t in flatten_tokens(tokens) if t.type == "text" and "$" in t.content]
    assert not bare, (value, md_text(value), bare)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("refund_policy-3", "refund_policy-3", id="identifier_unchanged"),
        pytest.param("state: diff", "state: diff", id="reason_unchanged"),
        pytest.param("C:\\Users\\me", "C:\\Users\\me", id="windows_path_unchanged"),
        pytest.param("Q&A, 5-7 days, 41.6 ± 0.005", "Q&A, 5-7 days, 41.6 ± 0.005", id="prose_unchanged"),
        pytest.param("<img src=x>", "\\<img src=x>", id="tag"),
        pytest.param("# PASSED", "\\# PASSED", id="heading"),
        pytest.param("x ##", "x \\#\\#", id="closing_hashes"),
        pytest.param("1. item", "1\\. item", id="ordered_list"),
        pytest.param("see https://a.example/x.", "see `https://a.example/x.`", id="bare_url"),
        pytest.param("[a](https://e.example)", "`[a](https://e.example)`", id="link_with_url"),
        pytest.param("[a](/p)", "\\[a\\](/p)", id="relative_link"),
        pytest.param("ping @octocat", "ping `@octocat`", id="mention"),
        pytest.param("a\nb\r\nc", "a b c", id="line_breaks"),
        pytest.param("_x_ __init__", "\\_x\\_ \\_\\_init\\_\\_", id="emphasis_underscores"),
        pytest.param("&lt;b&gt;", "\\&lt;b\\&gt;", id="entities"),
        pytest.param("cost $5", "cost \\$5", id="dollar"),
    ],
)
def test_md_text_examples(value: str, expected: str) -> None:
    assert md_text(value) == expected


@given(
    st.text(alphabet=st.sampled_from(list("ab1. -+=[#>]()&;_\\<`*~|$x9")), max_size=30)
    | st.text(max_size=30),
    st.booleans(),
    st.booleans(),
)
def test_the_one_substitution_escapes_as_the_character_rules_do(
    text: str, at_start: bool, at_end: bool
) -> None:
    """The quick path (no neighbour-dependent character, no block marker) is the rules' own result."""
    from judgekit.markdown_text import _escape_plain, _escape_plain_each

    assert _escape_plain(text, at_start=at_start, at_end=at_end) == _escape_plain_each(
        text, at_start=at_start, at_end=at_end
    )
