r"""Text normalisation: every Unicode fold judgekit applies, as named profiles.

What lives here: :class:`Profile` (one normalisation, its options and version) and one profile per purpose
(:data:`PROFILES` lists them): matching quotes, verdict options, keys and refusals in judge replies; the
text grader's literals and patterns; words of utterances and few-shot texts; few-shot digests; state
values; the review guard; contamination folding; the compatibility forms behind the bracket lookalikes;
the hashes of judged criterion texts.
This is the one module of judgekit that calls :func:`unicodedata.normalize`; a caller names its profile
(``QUOTE_MATCHING.apply(text)``) and never normalises on its own.

Who may import it: any module. It sits in the bottom layer (beside ``verdict``, ``stats`` and ``errors``)
and imports nothing of judgekit.

Every profile applies the same steps in the same order, each switched on or tuned by an option:

1. Unicode normalisation to :attr:`Profile.form` (``NFC``, ``NFKC`` or ``NFKD``). With
   :attr:`Profile.drop_decomposed` the text is first decomposed (NFKD), the dropped characters removed,
   and the rest composed to the form, so that a combining mark is dropped on its own.
2. Dropping characters: every character whose general category is in :attr:`Profile.drop_categories`
   (``Cf`` is the format characters: zero-width space and joiners, the byte order mark, bidi controls) or
   that is in :attr:`Profile.drop_chars`.
3. :attr:`Profile.translate`: single characters replaced by ASCII ones (typographic quotes and dashes).
4. :attr:`Profile.casefold` (full case folding, :meth:`str.casefold`), then with :attr:`Profile.refold`
   NFKC again where case folding left text that is not NFKC (``ǰ`` folds to ``j`` and a combining caron).
5. :attr:`Profile.symbols`: characters that are neither word characters (``\w``: letters, numbers, the
   underscore) nor white space become spaces (``"space"``), the underscore too (``"space_underscore"``).
6. :attr:`Profile.strip`: surrounding white space removed (``"both"``) or only leading (``"leading"``).
7. :attr:`Profile.whitespace`: runs of white space (and hyphens, with :attr:`Profile.hyphens_are_spaces`)
   become :attr:`Profile.separator` (``"collapse"``), are removed (``"remove"``), or line breaks become
   ``\n`` and other white space a space, without collapsing (``"lines"``).

White space is what :meth:`str.isspace` accepts, the same characters as ``\s`` in :mod:`re`. ASCII text
skips the steps that cannot change it (normalisation, dropping format characters, translating non-ASCII
characters); the result is the same as the general path.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

__all__ = [
    "CONTAMINATION",
    "CRITERION_TEXT",
    "LINE_BREAKS",
    "LOOKALIKE_NFKC",
    "LOOKALIKE_NFKD",
    "PROFILES",
    "QUOTE_MATCHING",
    "REFUSAL_PROSE",
    "REPLY_KEYS",
    "REVIEW_GUARD",
    "STATE_TEXT",
    "TEXT_DIGESTS",
    "TEXT_MATCHING",
    "TEXT_PATTERNS",
    "UNICODE_VERSION",
    "VERDICT_OPTIONS",
    "WORDS",
    "Form",
    "Profile",
    "excerpt",
    "excerpt_bounds",
]

UNICODE_VERSION: str = unicodedata.unidata_version
"""Version of the Unicode database (NFKC, case folding, categories) of the running Python (``"14.0.0"``
for Python 3.11).

Every profile's output depends on it as well as on the profile: a new Python may normalise a character
new to Unicode differently."""

LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
"""The characters ``whitespace="lines"`` turns into ``\\n``: those :meth:`str.splitlines` splits on."""

Form = Literal["NFC", "NFKC", "NFKD"]
"""A Unicode normalisation form: NFC composes; NFKC also folds compatibility forms (fullwidth letters,
ligatures, superscripts) to their plain letters; NFKD is NFKC's decomposed form."""

_SPACE_RUN = re.compile(r"\s+")
_SPACE_OR_HYPHEN_RUN = re.compile(r"[\s-]+")
_SYMBOL = re.compile(r"[^\w\s]")
_SYMBOL_OR_UNDERSCORE = re.compile(r"[^\w\s]|_")
_LINE_BREAK = re.compile("[" + re.escape(LINE_BREAKS[1:]) + "]")
_OTHER_SPACE = re.compile(r"[^\S \n]")

_Step = Callable[[str], str]


@dataclass(frozen=True)
class Profile:
    r"""One named text normalisation: the options of the steps in the module docstring.

    A profile's output is stored in keys and digests (contamination index entries, few-shot digests in
    leakage checks, canonical state hashes) and compared with text normalised earlier, perhaps by an older
    judgekit. Changing any option of a profile therefore changes stored keys: make such a change only
    deliberately, bump :attr:`version` with it, and update the pinned outputs in ``tests/test_textnorm.py``.

    Attributes:
        name: The profile's name, what it is for (``"quote_matching"``).
        version: The profile's version, a decimal number as text (``"1"``); bumped whenever any text would
            normalise differently. Recorded nowhere yet.
        form: The Unicode normalisation form of step 1.
        drop_decomposed: Whether characters are dropped from the NFKD form before composing to ``form``
            (so that combining marks go on their own) rather than after normalising.
        drop_categories: General categories (``"Cf"``, ``"Mn"``...) whose characters are removed; empty
            for none.
        drop_chars: Characters removed whatever their category; empty for none.
        translate: Characters replaced by others (one character each), after dropping; empty for none.
        casefold: Whether the text is case-folded (``"Straße"`` becomes ``"strasse"``).
        refold: Whether NFKC is applied again after case folding, where the folded text is not NFKC.
        symbols: ``"keep"``; ``"space"``: every character neither a word character nor white space
            becomes a space; ``"space_underscore"``: the underscore as well.
        strip: Surrounding white space removed: ``"both"``, ``"leading"`` or ``"none"``.
        whitespace: ``"keep"``; ``"collapse"``: each run becomes :attr:`separator`; ``"remove"``: all
            white space removed; ``"lines"``: line breaks (:data:`LINE_BREAKS`) become ``\n``, other
            white space a space, nothing collapsed.
        separator: What a collapsed run of white space becomes (``" "`` or ``"_"``).
        hyphens_are_spaces: Whether ``-`` counts as white space when collapsing.
    """

    name: str
    version: str
    form: Form
    drop_decomposed: bool = False
    drop_categories: frozenset[str] = frozenset()
    drop_chars: frozenset[str] = frozenset()
    translate: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    casefold: bool = False
    refold: bool = False
    symbols: Literal["keep", "space", "space_underscore"] = "keep"
    strip: Literal["none", "both", "leading"] = "none"
    whitespace: Literal["keep", "collapse", "remove", "lines"] = "keep"
    separator: str = " "
    hyphens_are_spaces: bool = False
    _ascii_steps: tuple[_Step, ...] = field(init=False, repr=False, compare=False)
    _unicode_steps: tuple[_Step, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        ascii_steps, unicode_steps = self._steps()
        object.__setattr__(self, "_ascii_steps", ascii_steps)
        object.__setattr__(self, "_unicode_steps", unicode_steps)

    def apply(self, text: str) -> str:
        """Normalise a text by this profile.

        Args:
            text: Any text (lone surrogates included).

        Returns:
            The normalised text; empty when nothing of ``text`` is kept.
        """
        for step in self._ascii_steps if text.isascii() else self._unicode_steps:
            text = step(text)
        return text

    def _steps(self) -> tuple[tuple[_Step, ...], tuple[_Step, ...]]:
        """The steps for ASCII text and for any text, in order."""
        form = self.form
        drop = self._drop_step()
        unicode_steps: list[_Step] = []
        if self.drop_decomposed:
            unicode_steps.append(lambda t: unicodedata.normalize("NFKD", t))
            unicode_steps.extend(drop)
            unicode_steps.append(lambda t: unicodedata.normalize(form, t))
        else:
            unicode_steps.append(lambda t: unicodedata.normalize(form, t))
            unicode_steps.extend(drop)
        ascii_steps: list[_Step] = [] if self._ascii_unchanged_by_drop() else list(drop)
        table = str.maketrans(dict(self.translate))
        if table:
            unicode_steps.append(lambda t: t.translate(table))
            if any(k < 128 for k in table):
                ascii_steps.append(lambda t: t.translate(table))
        tail = self._tail_steps()
        # With refold, casefold is the first tail step (_tail_steps checks that casefold is set).
        tail_unicode = [tail[0], _refold, *tail[1:]] if self.refold else tail
        return (*ascii_steps, *tail), (*unicode_steps, *tail_unicode)

    def _drop_step(self) -> list[_Step]:
        categories, chars = self.drop_categories, self.drop_chars
        if categories:
            category = unicodedata.category
            return [lambda t: "".join(c for c in t if category(c) not in categories and c not in chars)]
        if chars:
            table = dict.fromkeys(map(ord, chars))
            return [lambda t: t.translate(table)]
        return []

    def _ascii_unchanged_by_drop(self) -> bool:
        return not any(
            unicodedata.category(chr(b)) in self.drop_categories or chr(b) in self.drop_chars
            for b in range(128)
        )

    def _tail_steps(self) -> list[_Step]:
        """Steps 4-7 (case folding to white space); they run on ASCII text as well."""
        if self.refold and not self.casefold:
            raise ValueError(f"profile {self.name!r}: refold needs casefold")
        steps: list[_Step] = []
        if self.casefold:
            steps.append(str.casefold)
        if self.symbols != "keep":
            symbol = _SYMBOL_OR_UNDERSCORE if self.symbols == "space_underscore" else _SYMBOL
            steps.append(lambda t: symbol.sub(" ", t))
        if self.strip == "both":
            steps.append(str.strip)
        elif self.strip == "leading":
            steps.append(str.lstrip)
        if self.whitespace == "collapse":
            run, separator = (_SPACE_OR_HYPHEN_RUN if self.hyphens_are_spaces else _SPACE_RUN), self.separator
            steps.append(lambda t: run.sub(separator, t))
        elif self.whitespace == "remove":
            steps.append(lambda t: _SPACE_RUN.sub("", t))
        elif self.whitespace == "lines":
            steps.append(lambda t: _OTHER_SPACE.sub(" ", _LINE_BREAK.sub("\n", t)))
        return steps


def _refold(text: str) -> str:
    return text if unicodedata.is_normalized("NFKC", text) else unicodedata.normalize("NFKC", text)


_ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e\u200e\u200f")
"""Zero-width and invisible characters a judge may slip into a quote or a verdict: zero-width space,
non-joiner and joiner, word joiner, byte order mark, soft hyphen, Mongolian vowel separator, left-to-right
and right-to-left marks."""

_TYPOGRAPHIC = MappingProxyType(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    }
)
"""Typographic quotes, primes and dashes, and the ASCII character each reads as."""

QUOTE_MATCHING = Profile(
    name="quote_matching",
    version="1",
    form="NFKC",
    drop_chars=_ZERO_WIDTH,
    casefold=True,
    strip="both",
    whitespace="collapse",
)
"""Evidence quotes and the data they quote (:func:`judgekit.judges.parse.quote_occurs`): NFKC, zero-width
characters removed, case folded, white space collapsed to one space and stripped. Not idempotent: case
folding can leave text that NFKC would change again."""

VERDICT_OPTIONS = Profile(
    name="verdict_options",
    version="1",
    form="NFC",
    drop_chars=_ZERO_WIDTH,
    casefold=True,
    strip="both",
    whitespace="collapse",
    separator="_",
    hyphens_are_spaces=True,
)
"""A verdict value against the offered options (:func:`judgekit.judges.parse.normalise_option`): NFC (no
compatibility folding: a fullwidth ``ｐａｓｓ`` stays off-menu), zero-width characters removed, stripped,
case folded, runs of white space and hyphens as ``_``. Not idempotent (case folding, as above)."""

REPLY_KEYS = Profile(
    name="reply_keys",
    version="1",
    form="NFKC",
    drop_categories=frozenset({"Cf"}),
    casefold=True,
    whitespace="remove",
)
"""A JSON key of a judge reply compared with ``verdict`` to find lookalike keys: NFKC, format characters
removed, case folded, all white space removed."""

_APOSTROPHES = MappingProxyType(dict.fromkeys("\u2018\u2019\u02bc\u2032\uff07`\u00b4", "'"))

REFUSAL_PROSE = Profile(
    name="refusal_prose",
    version="1",
    form="NFKC",
    drop_categories=frozenset({"Cf"}),
    translate=_APOSTROPHES,
    casefold=True,
    whitespace="collapse",
)
"""The prose around a judge's JSON, searched for refusal phrases: NFKC, format characters removed,
apostrophe lookalikes as ``'``, case folded, white space collapsed (not stripped)."""

TEXT_MATCHING = Profile(
    name="text_matching",
    version="1",
    form="NFKC",
    drop_categories=frozenset({"Cf"}),
    translate=_TYPOGRAPHIC,
    casefold=True,
    strip="both",
    whitespace="collapse",
)
"""The text grader's literals and the assistant's messages (:func:`judgekit.graders.text.normalise`):
NFKC, format characters removed, typographic quotes and dashes as ASCII, case folded, white space
collapsed and stripped. Not idempotent (case folding, as above)."""

TEXT_PATTERNS = Profile(
    name="text_patterns",
    version="1",
    form="NFKC",
    drop_categories=frozenset({"Cf"}),
    translate=_TYPOGRAPHIC,
    strip="both",
    whitespace="collapse",
)
"""What the text grader's patterns and the rules' patterns search: :data:`TEXT_MATCHING` without case
folding (a pattern's ``ignore_case`` decides case)."""

WORDS = Profile(
    name="words",
    version="1",
    form="NFKC",
    casefold=True,
    symbols="space",
    strip="both",
    whitespace="collapse",
)
"""Words separated by single spaces: NFKC, case folded, every character that is neither a word character
(the underscore is one) nor white space as a space, white space collapsed and stripped. Generated
utterances are compared in this form; its :meth:`str.split` is the words a leakage guard looks for in a
prompt."""

TEXT_DIGESTS = Profile(
    name="text_digests",
    version="1",
    form="NFKC",
    casefold=True,
    strip="both",
    whitespace="collapse",
)
"""What a few-shot text's SHA-256 is taken over (:func:`judgekit.calibration.guards.text_digest`): NFKC,
case folded, white space collapsed and stripped; punctuation and zero-width characters kept."""

STATE_TEXT = Profile(name="state_text", version="1", form="NFC")
"""Text inside a state snapshot (:mod:`judgekit.state.canonical`): NFC only, so that a composed and a
decomposed ``é`` are one value while case, width and compatibility forms still differ."""

_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Mn", "Me", "Zl", "Zp"})
"""Unicode general categories the review guard drops: controls, format characters (zero-width space,
byte order mark, bidirectional marks, tags), surrogates, private use, unassigned code points, combining
marks, and line and paragraph separators."""

_HANGUL_FILLERS = frozenset("\u115f\u1160\u3164\uffa0")
"""The Hangul fillers: letters (``Lo``) that Unicode lists as default-ignorable (they show as nothing)."""

REVIEW_GUARD = Profile(
    name="review_guard",
    version="1",
    form="NFKC",
    drop_decomposed=True,
    drop_categories=_INVISIBLE_CATEGORIES,
    drop_chars=_HANGUL_FILLERS,
    casefold=True,
    strip="leading",
)
"""An acceptance criterion as the review guard reads it (:func:`judgekit.cases.review_guard_text`):
decomposed (NFKD), every invisible character dropped (controls, format characters, surrogates, private
use, unassigned code points, combining marks, line and paragraph separators, the Hangul fillers), composed
(NFKC), leading white space stripped, case folded."""

CONTAMINATION = Profile(
    name="contamination",
    version="1",
    form="NFKC",
    casefold=True,
    refold=True,
    symbols="space_underscore",
    whitespace="lines",
)
"""Contamination folding (:mod:`judgekit.contamination.normalise`, normalisation version 1 of the index
format): NFKC, case folded, NFKC again, every character but letters, numbers and white space (the
underscore included) as a space, line breaks as ``\\n``, other white space as a space, nothing collapsed."""

LOOKALIKE_NFKC = Profile(name="lookalike_nfkc", version="1", form="NFKC")
"""A character's composed compatibility form, one of the forms a bracket lookalike is recognised by
(:mod:`judgekit.judges.lookalikes`)."""

LOOKALIKE_NFKD = Profile(name="lookalike_nfkd", version="1", form="NFKD")
"""A character's decomposed compatibility form (see :data:`LOOKALIKE_NFKC`)."""

CRITERION_TEXT = Profile(name="criterion_text", version="1", form="NFC", strip="both", whitespace="collapse")
"""A judged criterion's text as its hash is taken (:func:`judgekit.judges.rubric.criterion_text_hash`, the
labelled texts of a calibration record): NFC, white space collapsed to single spaces and stripped. Only
differences a judge does not read are removed (a composed or decomposed ``é``, a block scalar's final line
break, a wrapped line); case, punctuation and every word stay, so a reworded criterion is another text."""

PROFILES: Mapping[str, Profile] = MappingProxyType(
    {
        p.name: p
        for p in (
            QUOTE_MATCHING,
            VERDICT_OPTIONS,
            REPLY_KEYS,
            REFUSAL_PROSE,
            TEXT_MATCHING,
            TEXT_PATTERNS,
            WORDS,
            TEXT_DIGESTS,
            STATE_TEXT,
            REVIEW_GUARD,
            CONTAMINATION,
            LOOKALIKE_NFKC,
            LOOKALIKE_NFKD,
            CRITERION_TEXT,
        )
    }
)
"""Every profile by name."""


# --------------------------------------------------------------------------- excerpts

ELLIPSIS = "..."
"""What :func:`excerpt` puts where it cut text off (three full stops: the viewer strips them to find the
quote in its message)."""

_JOINERS = frozenset("\u200d\u034f")  # zero-width joiner, combining grapheme joiner
_EXTENDERS = ((0xFE00, 0xFE0F), (0xE0100, 0xE01EF), (0x1F3FB, 0x1F3FF), (0xE0020, 0xE007F))
"""Variation selectors, emoji skin-tone modifiers and tag characters: they extend the character before."""
_JAMO = ((0x1100, 0x11FF), (0xA960, 0xA97F), (0xD7B0, 0xD7FF))


def _within(ch: str, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(lo <= ord(ch) <= hi for lo, hi in ranges)


def _regional(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def _grapheme_break(text: str, i: int) -> bool:
    """Whether ``text`` may be cut before index ``i`` without splitting a user-perceived character.

    A conservative subset of Unicode's grapheme cluster rules (UAX #29): never between CR and LF, a high
    and a low surrogate, around a joiner, before a combining mark or a variation selector, skin-tone
    modifier or tag character, between conjoining Hangul jamo, or inside a regional-indicator pair (a flag).
    """
    if i <= 0 or i >= len(text):
        return True
    before, ch = text[i - 1], text[i]
    if (before, ch) == ("\r", "\n") or ("\ud800" <= before <= "\udbff" and "\udc00" <= ch <= "\udfff"):
        return False
    if before in _JOINERS or ch in _JOINERS or unicodedata.category(ch) in ("Mn", "Mc", "Me"):
        return False
    if _within(ch, _EXTENDERS) or (_within(before, _JAMO) and _within(ch, _JAMO)):
        return False
    if _regional(before) and _regional(ch):
        run = 0
        while i - run - 1 >= 0 and _regional(text[i - run - 1]):
            run += 1
        return run % 2 == 0
    return True


def excerpt(text: str, start: int, end: int, *, context: int) -> str:
    """``text[start:end]`` with up to ``context`` characters of ``text`` either side, cut between words.

    Where the context is cut off, the excerpt ends at a word boundary (white space) inside the context,
    with :data:`ELLIPSIS` marking the cut, so it never ends mid-word: the words the context had no room
    for are left out whole. When the context on a side holds no word boundary (one long word, a URL, or
    a script written without spaces) that side is cut at the nearest character boundary inside it that
    splits no user-perceived character (a combining accent, an emoji sequence, a flag, a surrogate pair).
    The span itself is kept as it is.

    Args:
        text: The whole text.
        start: Where the quoted span starts, ``0 <= start <= end``.
        end: Where it ends, ``end <= len(text)``.
        context: The most characters shown either side of the span, ``>= 0``.

    Returns:
        The excerpt, with ``...`` at each end where text was left out (never white space beside it).

    Examples:
        >>> excerpt("I refunded the duplicate charge of 412.18 twice today", 35, 41, context=12)
        '...charge of 412.18 twice today'
        >>> excerpt("I refunded the duplicate charge of 412.18 twice today", 15, 24, context=6)
        '...the duplicate...'
        >>> excerpt("short", 0, 5, context=40)
        'short'
    """
    left, right = excerpt_bounds(text, start, end, context=context)
    head = ELLIPSIS if left > 0 else ""
    tail = ELLIPSIS if right < len(text) else ""
    return head + text[left:right] + tail


def excerpt_bounds(text: str, start: int, end: int, *, context: int) -> tuple[int, int]:
    """Where :func:`excerpt` cuts ``text``: ``(left, right)`` with ``left <= start`` and ``end <= right``.

    ``left`` is 0, or follows white space, or (no white space in the context before the span) is the
    first boundary between user-perceived characters inside it, or ``start``; ``right`` likewise, and
    neither is more than ``context`` characters from the span. White space at a cut is left out.
    """
    left, right = max(0, start - context), min(len(text), end + context)
    if left > 0:
        word = next((i for i in range(left, start + 1) if text[i - 1].isspace()), None)
        if word is None:
            word = next(i for i in range(left, start + 1) if i == start or _grapheme_break(text, i))
        left = word
        while left < start and text[left].isspace():
            left += 1
    if right < len(text):
        word = next((i for i in range(right, end - 1, -1) if text[i].isspace()), None)
        if word is None:
            word = next(i for i in range(right, end - 1, -1) if i == end or _grapheme_break(text, i))
        right = word
        while right > end and text[right - 1].isspace():
            right -= 1
    return left, right
