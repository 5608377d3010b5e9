r"""Untrusted text in Markdown: one escaping for every Markdown renderer.

Every Markdown output judgekit writes (run report, the short pull-request comment, run comparison,
calibration and grader-change reports, retirement advice, the growing sample sheet, contamination and
judge-family reports, label plans) is read where Markdown is rendered: a GitHub step summary, a pull-request
comment, a wiki. Text that comes from transcripts, results files, case files or label tables (agent
models, case ids, quotes, judge reasons, rater names, file names) is untrusted there: ``<img src=...>``
would be a tracking pixel, ``[click](https://...)`` a disguised link, ``# PASSED`` a fake heading.

Two functions put such text into Markdown; the text judgekit itself writes (headings, table rules,
figures) does not go through them:

* :func:`md_text` for a value in running text, a list item or a table cell. It keeps the value
  readable as it is printed to a terminal: only what would be Markdown syntax where it stands gets a
  backslash (a CommonMark backslash escape, shown as the bare character by every CommonMark renderer).
* :func:`md_code` for a value judgekit shows as a code span (a judge or rater name in backticks).

What :func:`md_text` does, so that the value renders as the same visible text and nothing else:

* Line breaks become spaces and the value is stripped of surrounding blanks (one value is one line; a
  line break would let it start a block: a heading, a list, a quote, an indented code block). NUL
  becomes U+FFFD, as CommonMark replaces it.
* ``< ` * ~ | $`` are escaped everywhere: no HTML tag, comment or ``<https://...>`` autolink, code
  span, emphasis, strikethrough (GitHub), table cell break or math (GitHub's ``$...$``) can start or
  close in the value, or pair with judgekit's own markup.
  ``\`` is escaped only where it would escape what follows (before ASCII punctuation or at the value's
  end), so Windows paths stay as they are.
* ``_`` is escaped unless its run stands between two letters or digits (``refund_policy`` stays, as
  ``_`` inside a word can neither open nor close emphasis).
* ``]`` is escaped before ``(`` and at the value's end, and ``[`` at its start: no inline link or image
  (``[text](url)``, ``![alt](src)``) can form, and no link reference definition (``[x]: url``), footnote
  or task-list box can start; a bare ``[x]`` elsewhere needs a definition to become a link and no value
  can write one.
* ``&`` is escaped where it starts an entity (``&lt;``, ``&#60;``): it shows as written, not as the
  character it names.
* At the value's start (a list item's or a line's start) ``#``, ``>``, ``-``, ``+``, ``=`` and the ``.``
  or ``)`` of ``1.``/``1)`` are escaped (no heading, quote, nested list or rule); a run of ``#`` at its
  end is escaped (a heading would drop it as closing marks).
* **Bare links are broken**: GitHub turns ``https://...``, ``www....``, ``user@host.example`` into
  links, ``@name`` into a mention (a notification from a pull-request comment) and ``#123`` into an
  issue link. Each blank-separated word holding ``://``, ``@``, ``www.`` or ``#`` and a digit is
  shown as a code span instead (no renderer links inside code), the whole word (up to a backtick or
  ``|``, which stay escaped outside it).

Not broken: a bare domain without ``www.`` (``example.com``; GitHub does not link it, some linkifiers
do) and commit hashes (GitHub links one only when it names a commit of the repository).
"""

from __future__ import annotations

import re

__all__ = ["md_code", "md_text"]

_LINE_BREAKS = re.compile(r"\r\n|\r|\n")

_WORDS = re.compile(r"[^\s`|]+")
"""A word that may become a code span: blank-separated, never holding a backtick or ``|``."""

_LINKY = re.compile(r"://|@|#\d|www\.", re.IGNORECASE)
"""What makes GitHub (or a linkifier) turn a word into a link or mention."""

_ALWAYS = frozenset("<`*~|$")
_ASCII_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_ENTITY = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]{0,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});")
_LINE_START = frozenset("#>-+=[")
_ORDERED_MARKER = re.compile(r"\d{1,9}[.)](?=[ \t]|$)")


def _flat(text: str) -> str:
    return _LINE_BREAKS.sub(" ", text.replace("\x00", "\ufffd")).strip()


def _is_word_char(ch: str) -> bool:
    return ch.isalnum()


_CONTEXT_CHARS = re.compile(r"[\\_#\]&]")
"""The characters whose escaping depends on what is around them (:func:`_escape_plain_each`)."""

_ALWAYS_ESCAPED = str.maketrans({ch: "\\" + ch for ch in _ALWAYS})
"""``str.translate`` table: each character that is always escaped, with its backslash."""


def _escape_plain(text: str, *, at_start: bool, at_end: bool) -> str:
    r"""Escape one stretch of the value that is not a code span.

    A stretch without the characters whose escaping depends on their neighbours (``\ _ # ] &``) and
    without a block marker at its start (most ids, names and reasons) needs only each of ``<`*~|$``
    escaped, which one ``str.translate`` does; any other stretch is escaped character by character
    (:func:`_escape_plain_each`). Both give the same text (``tests/test_markdown_text.py``).

    Args:
        text: The stretch.
        at_start: True when it starts the value (block markers are escaped there).
        at_end: True when it ends the value (a trailing ``]`` or run of ``#`` is escaped).
    """
    if _CONTEXT_CHARS.search(text) is None and not (
        at_start and text and (text[0] in _LINE_START or _ORDERED_MARKER.match(text) is not None)
    ):
        return text.translate(_ALWAYS_ESCAPED)
    return _escape_plain_each(text, at_start=at_start, at_end=at_end)


def _escape_plain_each(text: str, *, at_start: bool, at_end: bool) -> str:
    """:func:`_escape_plain`, character by character: the rules themselves."""
    n = len(text)
    marker = _ORDERED_MARKER.match(text) if at_start else None
    marker_at = marker.end() - 1 if marker else -1
    hashes_from = len(text.rstrip("#")) if at_end else n
    out: list[str] = []
    i = 0
    while i < n:
        ch = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if ch == "\\":
            # Before ASCII punctuation, or where the stretch ends (a code span's backtick or judgekit's text
            # follows), a lone backslash would escape what comes next.
            out.append("\\\\" if (not nxt or nxt in _ASCII_PUNCTUATION) else "\\")
        elif ch == "_":
            j = i
            while j < n and text[j] == "_":
                j += 1
            inner = i > 0 and j < n and _is_word_char(text[i - 1]) and _is_word_char(text[j])
            out.append(text[i:j] if inner else "\\_" * (j - i))
            i = j
            continue
        elif (
            ch in _ALWAYS
            or (i == 0 and at_start and ch in _LINE_START)
            or i == marker_at
            or (ch == "#" and i >= hashes_from)
            or (ch == "]" and (nxt == "(" or (not nxt and at_end)))
            or (ch == "&" and _ENTITY.match(text, i) is not None)
        ):
            out.append("\\" + ch)
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def md_text(text: str) -> str:
    r"""Untrusted text as Markdown that renders as the same visible text and nothing else.

    Args:
        text: Any text (a case id, an agent model, a judge's reason, a quote).

    Returns:
        One line of Markdown, safe in running text, after a list marker, in a heading and in a table
        cell: no HTML, link, image, heading, list, quote, code, emphasis or table cell starts in it, and
        a bare URL, e-mail address, ``@mention`` or ``#123`` is shown as a code span. Rendered, its text
        is ``text`` with line breaks as spaces and surrounding blanks removed.

    Examples:
        >>> md_text("refund_policy-3: said 'no' [x]")
        "refund_policy-3: said 'no' [x\\]"
        >>> md_text("<img src=x> # not a heading")
        '\\<img src=x> # not a heading'
        >>> md_text("# PASSED")
        '\\# PASSED'
        >>> md_text("see [click](https://evil.example)")
        'see `[click](https://evil.example)`'
    """
    flat = _flat(text)
    pieces: list[str] = []
    pos = 0
    spans = [m for m in _WORDS.finditer(flat) if _LINKY.search(m.group())]
    for m in spans:
        if m.start() > pos:
            pieces.append(_escape_plain(flat[pos : m.start()], at_start=pos == 0, at_end=False))
        pieces.append(f"`{m.group()}`")
        pos = m.end()
    if pos < len(flat) or not pieces:
        pieces.append(_escape_plain(flat[pos:], at_start=pos == 0, at_end=True))
    return "".join(pieces)


def md_code(text: str, *, table: bool = False) -> str:
    r"""Untrusted text as one Markdown code span (judgekit shows names such as a judge's in backticks).

    Nothing is interpreted inside a code span (no HTML, link, emphasis or mention), so the text is kept
    as it is but for line breaks (spaces: a code span is one line here) and NUL (U+FFFD). The fence is
    one backtick longer than the longest backtick run inside, and a space pads both ends when the text
    starts or ends with a backtick or with a space at both ends (CommonMark strips one such pair).
    In a table cell ``|`` splits the cell even inside a code span: give ``table=True`` there, and each
    ``|`` is written ``\|`` (GitHub and markdown-it show it as ``|`` in a cell's code span).

    Args:
        text: Any text.
        table: True when the code span stands in a table cell.

    Returns:
        The code span; ``` ` ` ``` (a single space) for empty text.

    Examples:
        >>> md_code("judge")
        '`judge`'
        >>> md_code("a`b")
        '``a`b``'
        >>> md_code("`x")
        '`` `x ``'
    """
    flat = _LINE_BREAKS.sub(" ", text.replace("\x00", "\ufffd"))
    if table:
        flat = flat.replace("|", "\\|")
    if not flat:
        return "` `"
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = flat[0] == "`" or flat[-1] == "`" or (flat[0] == " " and flat[-1] == " " and flat.strip(" "))
    inner = f" {flat} " if pad else flat
    return f"{fence}{inner}{fence}"
