r"""Text checks over the assistant's messages: must-mention, must-not-mention and per-turn expectations.

Literal texts are matched after normalisation (:func:`normalise`): Unicode compatibility forms (NFKC),
letter case (case-folded), invisible format characters (zero-width spaces, joiners, byte-order marks)
removed, typographic quotes and dashes mapped to their ASCII forms, and every run of whitespace collapsed
to one space. A literal is found when it occurs as a substring of the normalised text (``"fraud"`` is found
in ``"defrauded"``; use a :class:`~judgekit.cases.TextPattern` with ``\b`` for word boundaries).

Patterns (:class:`~judgekit.cases.TextPattern`) are Python regular expressions searched in the text after
the same normalisation except case folding (``ignore_case`` decides case, true by default).

Which checks gate:

* ``must_not_mention`` is a gate: a mention fails the case (category ``policy_violation``).
* ``must_mention`` is a gate too: a required mention that is missing fails the case (category
  ``incorrect_reporting``). An item marked ``scored: true`` (a :class:`~judgekit.cases.TextLiteral` or
  :class:`~judgekit.cases.TextPattern`) is scored instead: 1.0 when found, 0.0 when not, weight 1.
* a multi-turn case's ``expect_contains`` is checked against the assistant's reply to that turn (the
  assistant messages between that user turn and the next); it gates when the turn is ``critical``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from judgekit.cases import Case, TextLiteral, TextMatch, TextPattern
from judgekit.graders.contract import Layer, make_check
from judgekit.patterns import CompiledPattern, compile_pattern
from judgekit.transcript import Transcript
from judgekit.verdict import CheckResult, Evidence, FailureCategory, Verdict

__all__ = [
    "LAYER",
    "check_text",
    "find_text",
    "is_affirmation",
    "is_scored",
    "normalise",
    "user_confirmed_before",
]

LAYER = Layer.TEXT.value
"""The layer name every check of this module reports."""

_PUNCT = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2033": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2015": "-",
        "\u2212": "-",
    }
)
_SPACE = re.compile(r"\s+")


def _strip_format_chars(text: str) -> str:
    if text.isascii():
        return text
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def _base_normalise(text: str) -> str:
    if not text.isascii():
        text = _strip_format_chars(unicodedata.normalize("NFKC", text)).translate(_PUNCT)
    return _SPACE.sub(" ", text).strip()


def normalise(text: str, *, fold_case: bool = True) -> str:
    """Normalise text for matching (see the module docstring).

    Args:
        text: Any text.
        fold_case: Whether to case-fold (``"Straße"`` becomes ``"strasse"``).

    Returns:
        The normalised text; normalising twice changes nothing.
    """
    out = _base_normalise(text)
    return out.casefold() if fold_case else out


def _compiled(pattern: str, ignore_case: bool) -> CompiledPattern:
    """A case's text pattern compiled for linear-time matching (cached in :mod:`judgekit.patterns`)."""
    return compile_pattern(pattern, ignore_case=ignore_case)


def find_text(item: TextMatch, text: str) -> str | None:
    """Find a literal or a pattern in one text.

    Args:
        item: A literal text or a :class:`~judgekit.cases.TextPattern`.
        text: The text to search (raw; it is normalised here).

    Returns:
        The matched excerpt of the normalised text (the literal as found, or the pattern's match), or
        ``None`` when it does not occur. A literal that normalises to nothing never matches.
    """
    if isinstance(item, TextPattern):
        match = _compiled(item.pattern, item.ignore_case).search(normalise(text, fold_case=False))
        return match.group(0) if match is not None else None
    needle = normalise(_literal(item))
    if not needle:
        return None
    haystack = normalise(text)
    at = haystack.find(needle)
    return haystack[at : at + len(needle)] if at >= 0 else None


def _literal(item: str | TextLiteral) -> str:
    return item.text if isinstance(item, TextLiteral) else item


def _label(item: TextMatch) -> str:
    return f"/{item.pattern}/" if isinstance(item, TextPattern) else repr(_literal(item))


def is_scored(item: TextMatch) -> bool:
    """Whether a ``must_mention`` item is marked scored only (a miss lowers quality, never fails)."""
    return not isinstance(item, str) and item.scored


_AFFIRM = re.compile(
    r"^(?:yes|yeah|yep|yup|sure|ok|okay|confirm(?:ed)?|i confirm|correct|that'?s (?:right|correct|fine)|"
    r"go ahead|please (?:do|proceed|go ahead)|proceed|do it|absolutely|affirmative|agreed|right)\b"
)
_NEGATION = re.compile(r"\b(?:no|not|don'?t|do not|never|cancel|stop|wait|hold on|nope)\b")


def is_affirmation(text: str) -> bool:
    """Whether a user message affirms (``"Yes, go ahead"``) rather than declines or hedges.

    The normalised message must start with an affirmative word or phrase (yes, yeah, sure, ok, confirm,
    correct, go ahead, please do, proceed, do it, absolutely, agreed, right) and contain no negation
    (no, not, don't, never, cancel, stop, wait, hold on). This is deliberately strict: ``"Yes but don't
    refund yet"`` is not an affirmation.
    """
    norm = normalise(text).lstrip("\"'(")
    return bool(_AFFIRM.match(norm)) and not _NEGATION.search(norm)


def user_confirmed_before(transcript: Transcript, message_index: int) -> bool:
    """Whether the user affirmed before the assistant message at ``message_index``.

    The latest user message before that message must be an affirmation (:func:`is_affirmation`) and must
    come after the assistant's previous message with text (the proposal being confirmed); a "yes" given
    to an earlier question does not confirm a later action.

    Returns:
        False when there is no such user message.
    """
    for i in range(min(message_index, len(transcript.messages)) - 1, -1, -1):
        message = transcript.messages[i]
        if message.role == "user":
            return bool(message.content) and is_affirmation(message.content or "")
        if message.role == "assistant" and message.content:
            return False
    return False


def _assistant_replies_by_turn(transcript: Transcript) -> list[list[tuple[int, str]]]:
    """For each user message in order, the assistant texts that follow it until the next user message."""
    turns: list[list[tuple[int, str]]] = []
    for i, message in enumerate(transcript.messages):
        if message.role == "user":
            turns.append([])
        elif message.role == "assistant" and message.content and turns:
            turns[-1].append((i, message.content))
    return turns


class _Normalised:
    """Each message's normalised forms, computed once per transcript and shared by every item."""

    def __init__(self) -> None:
        self._forms: dict[tuple[str, bool], str] = {}

    def get(self, text: str, fold: bool) -> str:
        key = (text, fold)
        form = self._forms.get(key)
        if form is None:
            form = self._forms[key] = normalise(text, fold_case=fold)
        return form


def _search_messages(
    item: TextMatch, texts: Sequence[tuple[int, str]], forms: _Normalised
) -> tuple[int, str, str] | None:
    if isinstance(item, TextPattern):
        pattern = _compiled(item.pattern, item.ignore_case)
        for index, text in texts:
            match = pattern.search(forms.get(text, False))
            if match is not None:
                return index, match.group(0), text
        return None
    needle = normalise(_literal(item))
    if not needle:
        return None
    for index, text in texts:
        haystack = forms.get(text, True)
        at = haystack.find(needle)
        if at >= 0:
            return index, haystack[at : at + len(needle)], text
    return None


def _excerpt(text: str, found: str, width: int = 80) -> str:
    norm = normalise(text, fold_case=False)
    at = norm.casefold().find(found.casefold())
    if at < 0:
        return found
    start = max(0, at - width // 2)
    end = min(len(norm), at + len(found) + width // 2)
    return ("..." if start else "") + norm[start:end] + ("..." if end < len(norm) else "")


def check_text(case: Case, transcript: Transcript) -> list[CheckResult]:
    """Run the case's text checks on the transcript's assistant messages.

    Args:
        case: The case (its ``expected.must_mention``, ``expected.must_not_mention`` and ``turns``).
        transcript: The trial.

    Returns:
        One check per text (``text:must_not_mention:<i>``, ``text:must_mention:<i>``,
        ``text:turn:<t>:<i>``), or a single ``not_evaluated`` check named ``text`` when the case has none.
    """
    expected = case.expected
    must = expected.must_mention if expected else ()
    must_not = expected.must_not_mention if expected else ()
    turn_items = [
        (t, i, item, turn.critical)
        for t, turn in enumerate(case.turns)
        for i, item in enumerate(turn.expect_contains)
    ]
    if not must and not must_not and not turn_items:
        return [
            CheckResult(
                check_id="text",
                layer=LAYER,
                verdict=Verdict.NOT_EVALUATED,
                reason="the case lists no must_mention, must_not_mention or per-turn expected texts",
            )
        ]
    texts = transcript.assistant_texts()
    forms = _Normalised()
    out: list[CheckResult] = []
    for i, item in enumerate(must_not):
        hit = _search_messages(item, texts, forms)
        check_id = f"text:must_not_mention:{i}"
        if hit is None:
            out.append(CheckResult(check_id=check_id, layer=LAYER, verdict=Verdict.PASS, gate=True))
            continue
        index, found, text = hit
        out.append(
            CheckResult(
                check_id=check_id,
                layer=LAYER,
                verdict=Verdict.FAIL,
                gate=True,
                reason=f"assistant message {index} mentions {_label(item)} (must not mention)",
                category=FailureCategory.POLICY_VIOLATION,
                evidence=(
                    Evidence(
                        kind="text",
                        summary=f"{_label(item)} found in assistant message {index}",
                        quote=_excerpt(text, found),
                        message_index=index,
                        data={"matched": found},
                    ),
                ),
            )
        )
    for i, item in enumerate(must):
        hit = _search_messages(item, texts, forms)
        check_id = f"text:must_mention:{i}"
        gate = not is_scored(item)
        if hit is not None:
            index, found, text = hit
            out.append(
                make_check(
                    check_id,
                    Layer.TEXT,
                    Verdict.PASS,
                    gate=gate,
                    evidence=(
                        Evidence(
                            kind="text",
                            summary=f"{_label(item)} found in assistant message {index}",
                            quote=_excerpt(text, found),
                            message_index=index,
                        ),
                    ),
                )
            )
            continue
        out.append(
            make_check(
                check_id,
                Layer.TEXT,
                Verdict.FAIL,
                gate=gate,
                reason=(
                    f"no assistant message mentions {_label(item)}"
                    if texts
                    else f"the assistant wrote no text, so it never mentions {_label(item)}"
                ),
                category=FailureCategory.INCORRECT_REPORTING,
                evidence=(
                    Evidence(
                        kind="note",
                        summary=f"searched {len(texts)} assistant message(s) for {_label(item)}",
                    ),
                ),
            )
        )
    if turn_items:
        replies = _assistant_replies_by_turn(transcript)
        for t, i, item, critical in turn_items:
            out.append(_turn_check(t, i, item, critical, replies, len(case.turns), forms))
    return out


def _turn_check(  # noqa: PLR0917
    t: int,
    i: int,
    item: str,
    critical: bool,
    replies: list[list[tuple[int, str]]],
    n_turns: int,
    forms: _Normalised,
) -> CheckResult:
    check_id = f"text:turn:{t}:{i}"
    if t >= len(replies):
        return CheckResult(
            check_id=check_id,
            layer=LAYER,
            verdict=Verdict.ERROR,
            gate=critical,
            reason=(
                f"the transcript has {len(replies)} user message(s) but the case has {n_turns} turns: turn "
                f"{t + 1} was never played, so its reply cannot be checked"
            ),
        )
    hit = _search_messages(item, replies[t], forms)
    if hit is not None:
        index, found, text = hit
        return make_check(
            check_id,
            Layer.TEXT,
            Verdict.PASS,
            gate=critical,
            evidence=(
                Evidence(
                    kind="text",
                    summary=f"turn {t + 1}: {item!r} found in assistant message {index}",
                    quote=_excerpt(text, found),
                    message_index=index,
                ),
            ),
        )
    return make_check(
        check_id,
        Layer.TEXT,
        Verdict.FAIL,
        gate=critical,
        reason=(
            f"the reply to turn {t + 1} does not contain {item!r}"
            if replies[t]
            else f"the assistant wrote no reply to turn {t + 1}"
        ),
        category=FailureCategory.INCORRECT_REPORTING if replies[t] else FailureCategory.INCOMPLETE_EXECUTION,
        evidence=(
            Evidence(kind="note", summary=f"turn {t + 1}: searched {len(replies[t])} assistant message(s)"),
        ),
    )
