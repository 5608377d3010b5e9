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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import JsonValue

from judgekit.cases import Case, TextLiteral, TextMatch, TextPattern
from judgekit.graders.context import LayerContext
from judgekit.graders.contract import Layer, LayerInfo, describe_layer, make_check
from judgekit.patterns import CompiledPattern, compile_pattern
from judgekit.textnorm import TEXT_MATCHING, TEXT_PATTERNS, excerpt
from judgekit.transcript import Capability, Transcript
from judgekit.verdict import CheckResult, Evidence, FailureCategory, Verdict

__all__ = [
    "LAYER",
    "Confirmation",
    "ConfirmationStatus",
    "Reply",
    "TextLayer",
    "action_words",
    "check_text",
    "classify_reply",
    "confirmation_before",
    "find_text",
    "is_affirmation",
    "is_scored",
    "key_arguments",
    "normalise",
    "user_confirmed_before",
]

LAYER = Layer.TEXT.value
"""The layer name every check of this module reports."""


def normalise(text: str, *, fold_case: bool = True) -> str:
    """Normalise text for matching (see the module docstring).

    The profile :data:`judgekit.textnorm.TEXT_MATCHING`, or :data:`judgekit.textnorm.TEXT_PATTERNS`
    without case folding.

    Args:
        text: Any text.
        fold_case: Whether to case-fold (``"Straße"`` becomes ``"strasse"``).

    Returns:
        The normalised text. Normalising it again changes it only where a dropped format character stood
        between a letter and a combining mark: ``a``, a zero-width space and a combining diaeresis become
        ``a`` and the mark, which a second pass composes to ``ä``.
    """
    return (TEXT_MATCHING if fold_case else TEXT_PATTERNS).apply(text)


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


# --------------------------------------------------------------------------- confirmation

Reply = Literal["affirm", "decline", "hedge", "none"]
"""How a user message answers a proposal (see :func:`classify_reply`)."""

ConfirmationStatus = Literal["confirmed", "not_confirmed", "undecided"]
"""Whether the user confirmed an action: yes, no, or cannot tell (see :func:`confirmation_before`)."""

_SENTENCE = re.compile(r"[^.!?;\n]+[.!?;]*")
_AFFIRM = re.compile(
    r"\b(?:yes|yeah|yep|yup|sure|ok|okay|alright|all right|absolutely|definitely|affirmative|agreed|"
    r"confirm(?:ed)?|correct|that'?s (?:right|fine|good|great|perfect)|"
    r"(?:sounds|looks|seems) (?:good|great|perfect|fine|right|correct)|(?:all|everything) (?:looks|seems) "
    r"(?:good|great|perfect|fine|right|correct)|go ahead|proceed|please do|do it|do that|"
    r"let'?s do (?:it|that|this)|that works|works for me|make (?:the|that|this) (?:change|booking|update))\b"
)
_ASKS_TO_PROCEED = re.compile(
    r"\b(?:can|could|would|will) (?:you|we) (?:please )?(?:(?:just )?(?:proceed|go ahead)|confirm)\b"
)
_HOW_TO_PROCEED = re.compile(
    r"\b(?:how|when|where|what|why|before|if|whether) (?:do |can |should |would )?"
    r"(?:we|i|you)?\s*(?:proceed|go ahead)\b"
)
_DECLINE = re.compile(
    r"^(?:no|nope|nah)\b(?! (?:problem|worries|need|rush|other))|\b(?:not yet|not now|not right now|hold on|"
    r"hang on|wait|stop|never ?mind|changed my mind|on second thought|rather not|i'?d rather|"
    r"not (?:correct|right|what i)|that'?s (?:wrong|incorrect|not))\b|"
    r"\b(?:don'?t|do not|didn'?t)\b(?! (?:have|know|see|remember|need|think|understand|mind|worry)\b)"
)
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|i guess|i suppose|i think so|probably|possibly|not sure|unsure|let me think|"
    r"let me check|i'?ll think|i need to think)\b"
)

_ACTION_SYNONYMS: dict[str, tuple[str, ...]] = {
    "book": ("book", "reserve", "purchase"),
    "cancel": ("cancel",),
    "update": ("update", "change", "modify", "switch", "upgrade", "downgrade", "move"),
    "modify": ("update", "change", "modify"),
    "change": ("update", "change", "modify", "switch"),
    "send": ("send", "issue", "give", "offer"),
    "issue": ("issue", "send", "refund"),
    "refund": ("refund", "reimburse"),
    "baggage": ("bag", "luggage", "baggage"),
    "bag": ("bag", "luggage", "baggage"),
    "flight": ("flight", "cabin", "itinerary"),
    "passenger": ("passenger", "traveler", "traveller", "name"),
    "certificate": ("certificate", "voucher", "compensation"),
    "freeze": ("freeze", "block", "lock"),
}
_GENERIC_WORDS = frozenset({"reservation", "reservations", "order", "orders", "account", "record", "details"})
_TOOL_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_KEY_ID = re.compile(r"^(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{3,16}$")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_ASKS = re.compile(r"\?|\b(?:confirm|would you like|shall i|should i|do you want|let me know)\b")


@dataclass(frozen=True)
class Confirmation:
    """The outcome of the confirmation rule for one tool call (see :func:`confirmation_before`).

    Attributes:
        status: ``confirmed`` (the user affirmed a proposal naming this action and its key arguments),
            ``not_confirmed`` (no affirmation answers it, the user declined, or the "yes" answered another
            action or came before the agent asked again) or ``undecided`` (the rule cannot tell: the reply is
            hedged, or the proposal does not name the action or its key arguments).
        reason: One sentence saying why, naming message positions.
        user_index: Position of the user message read as the answer, or ``None`` when there is none.
    """

    status: ConfirmationStatus
    reason: str
    user_index: int | None = None

    @property
    def confirmed(self) -> bool:
        """Whether the status is ``confirmed`` (undecided counts as not confirmed)."""
        return self.status == "confirmed"


def _sentences(norm: str) -> list[str]:
    return [s.strip(" \"'()*-") for s in _SENTENCE.findall(norm) if s.strip(" \"'()*-")]


def classify_reply(text: str) -> Reply:
    """How a user message answers the agent's proposal.

    The normalised message is split into sentences. ``decline`` when any sentence declines or asks to
    wait: it starts with no/nope, or says not yet, hold on, wait, stop, never mind, changed my mind, I'd
    rather, that's wrong, or don't/do not (except "don't have/know/need/mind..."). Otherwise ``hedge``
    when the last affirming sentence or one after it hedges (maybe, perhaps, I guess, I think so, probably,
    not sure, let me think), or nothing affirms and something hedges ("Hmm, maybe I mixed things up.
    Yes, please proceed." affirms). Otherwise ``affirm`` when a sentence that is not a question affirms
    anywhere in it (yes, sure, ok, confirm, correct, that's right, sounds good, looks perfect, go ahead,
    proceed, please do, do it, let's do it, that works), or a question asks the agent to go on ("Could
    you proceed with...?"); a question such as "How do we proceed?" does not. Otherwise ``none`` (the
    message asks or tells something else).

    Args:
        text: A user message (raw).

    Returns:
        ``affirm``, ``decline``, ``hedge`` or ``none``.
    """
    sentences = _sentences(normalise(text))
    if any(_DECLINE.search(s) for s in sentences):
        return "decline"
    last_affirm = -1
    for i, sentence in enumerate(sentences):
        if _affirms(sentence):
            last_affirm = i
    if any(_HEDGE.search(s) for s in sentences[max(last_affirm, 0) :]):
        return "hedge"
    return "affirm" if last_affirm >= 0 else "none"


def _affirms(sentence: str) -> bool:
    if sentence.endswith("?"):
        return bool(_ASKS_TO_PROCEED.search(sentence)) and not _HOW_TO_PROCEED.search(sentence)
    if _HOW_TO_PROCEED.search(sentence) and not _AFFIRM.search(_HOW_TO_PROCEED.sub("", sentence)):
        return False
    return bool(_AFFIRM.search(sentence))


def is_affirmation(text: str) -> bool:
    """Whether a user message affirms (``"Yes, please cancel it"``) rather than declines or hedges.

    True exactly when :func:`classify_reply` gives ``affirm``: some sentence affirms and none declines or
    hedges (``"Yes, but wait"`` and ``"Yes, I think so"`` are not affirmations).
    """
    return classify_reply(text) == "affirm"


def _stem(word: str) -> str:
    word = word.casefold()
    for suffix in ("ations", "ation", "ings", "ing", "ages", "es", "s", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return {"baggag": "baggage", "bagg": "baggage", "cancell": "cancel", "cancel": "cancel"}.get(word, word)


def action_words(tool: str) -> frozenset[str]:
    """Word stems that name a tool's action in a proposal (``cancel_reservation``: cancel).

    The tool name is split into words (snake_case or CamelCase); each word other than a generic noun
    (reservation, order, account, details) adds its stem and its synonyms from a small table (update:
    change, modify, switch, upgrade, downgrade; book: reserve; baggage: bag, luggage; certificate:
    voucher, compensation; ...). A proposal names the action when its text contains one of the stems.

    Args:
        tool: The tool's name.

    Returns:
        Lower-case stems; empty when the name has no usable word (then no proposal can name it).
    """
    out: set[str] = set()
    for raw in _TOOL_WORD.findall(tool):
        word = raw.casefold()
        if word in _GENERIC_WORDS or word.isdigit() or len(word) < 3:
            continue
        stem = _stem(word)
        out.add(stem)
        out.update(_ACTION_SYNONYMS.get(stem, ()))
        out.update(_ACTION_SYNONYMS.get(word, ()))
    return frozenset(out)


def key_arguments(arguments: Mapping[str, Any] | None) -> tuple[frozenset[str], frozenset[float]]:
    """The values of a call a proposal must name: ids and amounts.

    Ids are string values anywhere in the arguments made only of letters and digits, with at least one of
    each, 3 to 16 characters (a reservation id ``ZFA04Y``, a flight number ``HAT170``, a card ``1234``
    is not: it has no letter). Values with separators (``credit_card_7815826``, ``mia_li_3668``, dates)
    are internal or reworded by agents, so they are not key. Amounts are the numbers under an argument
    whose name contains ``amount``, and their sum when there are several.

    Args:
        arguments: The call's arguments (``None`` when they could not be read).

    Returns:
        ``(ids, amounts)``: ids upper-cased; amounts as floats.
    """
    ids: set[str] = set()
    amounts: list[float] = []

    def walk(value: Any, name: str) -> None:
        if isinstance(value, Mapping):
            for key, item in value.items():
                walk(item, str(key))
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item, name)
        elif isinstance(value, str) and _KEY_ID.match(value):
            ids.add(value.upper())
        elif isinstance(value, int | float) and not isinstance(value, bool) and "amount" in name.casefold():
            amounts.append(float(value))

    walk(arguments or {}, "")
    found = set(amounts)
    if len(amounts) > 1:
        found.add(round(sum(amounts), 2))
    return frozenset(ids), frozenset(found)


def _mentions(text: str, ids: frozenset[str], amounts: frozenset[float]) -> tuple[set[str], bool]:
    upper = text.upper()
    named = {i for i in ids if re.search(rf"(?<![A-Z0-9]){re.escape(i)}(?![A-Z0-9])", upper)}
    numbers: set[float] = set()
    for raw in _NUMBER.findall(text):
        try:
            numbers.add(round(float(raw.replace(",", "")), 2))
        except ValueError:
            continue
    return named, any(round(a, 2) in numbers for a in amounts)


def _names_action(text: str, words: frozenset[str]) -> bool:
    norm = normalise(text)
    return any(re.search(rf"\b{re.escape(w)}", norm) for w in words)


def confirmation_before(
    transcript: Transcript,
    message_index: int,
    tool: str | None = None,
    arguments: Mapping[str, Any] | None = None,
) -> Confirmation:
    """Whether the user explicitly confirmed this action before the assistant message at ``message_index``.

    The method (deterministic):

    1. The answer is the latest user message before the call. None: ``not_confirmed``. If the assistant
       wrote a message after it that asks something (a question mark, "confirm", "would you like", "shall
       I", "let me know") the agent asked again and did not wait: ``not_confirmed``.
    2. The answer is read with :func:`classify_reply`: ``decline`` gives ``not_confirmed``, ``hedge``
       gives ``undecided``, ``none`` (a request, a choice among options, a question) gives
       ``not_confirmed``.
    3. For an affirmation, the proposal is the assistant's text between the previous user message and the
       answer, read together with the answer itself. It must name the action (:func:`action_words` of the
       tool) and, when the call has key arguments (:func:`key_arguments`: ids such as a reservation id or
       flight numbers, and amounts), at least one of them. When the proposal names neither the action nor
       any key argument, the exchange one turn earlier may supply them (the agent asked the reason for a
       cancellation after naming the reservation), and so may the conversation's focus: the latest id of
       the same shape written by the user or the agent is one of the call's. The action may also be named
       one turn earlier (the agent asked for the payment method of a booking it had described).
    4. Both named: ``confirmed``. The proposal names other ids of the same shape and none of the call's:
       the "yes" answered another proposal, ``not_confirmed``. Otherwise ``undecided``.

    Without ``tool`` only steps 1 and 2 apply and an affirmation is ``confirmed`` (the earlier behaviour).

    Args:
        transcript: The trial.
        message_index: Position of the assistant message that made the call.
        tool: The called tool's name.
        arguments: The call's arguments.

    Returns:
        The status with its reason.
    """
    messages = transcript.messages
    stop = min(message_index, len(messages))
    answer: int | None = None
    asked_after: int | None = None
    for i in range(stop - 1, -1, -1):
        message = messages[i]
        if message.role == "user" and message.content:
            answer = i
            break
        if message.role == "assistant" and message.content and _ASKS.search(normalise(message.content)):
            asked_after = i
    if answer is None:
        return Confirmation("not_confirmed", "no user message comes before the call")
    if asked_after is not None:
        return Confirmation(
            "not_confirmed",
            f"assistant message {asked_after} asks the user again after user message {answer} and the call "
            "came without a reply",
            answer,
        )
    reply_text = messages[answer].content or ""
    reply = classify_reply(reply_text)
    if reply == "decline":
        return Confirmation("not_confirmed", f"user message {answer} declines or asks to wait", answer)
    if reply == "hedge":
        return Confirmation("undecided", f"user message {answer} hedges", answer)
    if reply == "none":
        return Confirmation("not_confirmed", f"user message {answer} does not affirm", answer)
    if tool is None:
        return Confirmation("confirmed", f"user message {answer} affirms", answer)
    proposal, earlier = _proposals(transcript, answer)
    text = proposal + "\n" + reply_text
    words = action_words(tool)
    ids, amounts = key_arguments(arguments)
    named_ids, named_amount = _mentions(text, ids, amounts)
    has_keys = bool(ids or amounts)
    named_keys = bool(named_ids) or named_amount
    action = _names_action(text, words) or _names_action(earlier, words)
    if has_keys and not named_keys and not _mentions_key_shape(text, ids):
        named_ids, named_amount = _mentions(earlier, ids, amounts)
        named_keys = bool(named_ids) or named_amount or _in_focus(transcript, answer, ids)
    if action and (named_keys or not has_keys):
        return Confirmation(
            "confirmed",
            f"user message {answer} affirms a proposal naming the action and its arguments",
            answer,
        )
    if has_keys and not named_keys and _mentions_key_shape(text, ids):
        return Confirmation(
            "not_confirmed",
            f"user message {answer} affirms a proposal about other ids than the call's "
            f"({', '.join(sorted(ids)) or 'amounts'})",
            answer,
        )
    missing = "the action" if not action else "the call's ids or amounts"
    return Confirmation(
        "undecided",
        f"user message {answer} affirms, but the proposal it answers does not name {missing}",
        answer,
    )


def _proposals(transcript: Transcript, answer: int) -> tuple[str, str]:
    """The assistant texts of the turn the answer replies to, and the turn (agent and user) before it."""
    turns: list[list[str]] = [[], []]
    turn = 0
    for i in range(answer - 1, -1, -1):
        message = transcript.messages[i]
        if message.role == "user" and message.content:
            if turn == 1:
                break
            turn = 1
            turns[1].append(message.content)
            continue
        if message.role == "assistant" and message.content:
            turns[turn].append(message.content)
    return "\n".join(reversed(turns[0])), "\n".join(reversed(turns[1]))


def _in_focus(transcript: Transcript, answer: int, ids: frozenset[str]) -> bool:
    """Whether the latest id of the call's shape written before ``answer`` is one of the call's ids."""
    if not ids:
        return False
    lengths = {len(i) for i in ids}
    for i in range(answer, -1, -1):
        message = transcript.messages[i]
        if message.role not in {"user", "assistant"} or not message.content:
            continue
        tokens = [
            t
            for t in re.findall(r"\b[A-Za-z0-9]{3,16}\b", message.content)
            if len(t) in lengths and _KEY_ID.match(t) and not t.isdigit()
        ]
        if tokens:
            return tokens[-1].upper() in ids
    return False


def _mentions_key_shape(text: str, ids: frozenset[str]) -> bool:
    """Whether the text names an id of the same shape as one of the call's (same length, letters+digits)."""
    if not ids:
        return False
    lengths = {len(i) for i in ids}
    for token in re.findall(r"\b[A-Z0-9]{3,16}\b", text):
        if len(token) in lengths and _KEY_ID.match(token) and token not in ids and not token.isdigit():
            return True
    return False


def user_confirmed_before(
    transcript: Transcript,
    message_index: int,
    tool: str | None = None,
    arguments: Mapping[str, Any] | None = None,
) -> bool:
    """Whether the user confirmed the call at ``message_index`` (:func:`confirmation_before` says so).

    An undecided outcome gives False here; graders that can report it use :func:`confirmation_before`.
    """
    return confirmation_before(transcript, message_index, tool, arguments).confirmed


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
    """``found`` in ``text`` with up to ``width // 2`` characters either side, cut between words."""
    norm = normalise(text, fold_case=False)
    at = norm.casefold().find(found.casefold())
    if at < 0:
        return found
    return excerpt(norm, at, at + len(found), context=width // 2)


def _hit_evidence(what: str, hit: tuple[int, str, str], data: JsonValue = None) -> Evidence:
    """The evidence of ``what`` found by :func:`_search_messages`: the message and an excerpt around it.

    Args:
        what: What was found, as the summary names it (``'refund'``, ``turn 2: 'yes'``).
        hit: The message index, the text found and the message's text.
        data: Structured detail to keep with it (``None``: none).
    """
    index, found, text = hit
    return Evidence(
        kind="text",
        summary=f"{what} found in assistant message {index}",
        quote=_excerpt(text, found),
        message_index=index,
        data=data,
    )


def _found_check(check_id: str, gate: bool, what: str, hit: tuple[int, str, str]) -> CheckResult:
    """A passed check whose text was found (see :func:`_hit_evidence`)."""
    return make_check(check_id, Layer.TEXT, Verdict.PASS, gate=gate, evidence=(_hit_evidence(what, hit),))


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
        out.append(
            CheckResult(
                check_id=check_id,
                layer=LAYER,
                verdict=Verdict.FAIL,
                gate=True,
                reason=f"assistant message {hit[0]} mentions {_label(item)} (must not mention)",
                category=FailureCategory.POLICY_VIOLATION,
                evidence=(_hit_evidence(_label(item), hit, data={"matched": hit[1]}),),
            )
        )
    for i, item in enumerate(must):
        hit = _search_messages(item, texts, forms)
        check_id = f"text:must_mention:{i}"
        gate = not is_scored(item)
        if hit is not None:
            out.append(_found_check(check_id, gate, _label(item), hit))
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
        return _found_check(check_id, critical, f"turn {t + 1}: {item!r}", hit)
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


# --------------------------------------------------------------------------- the layer


class TextLayer:
    """The text layer: :func:`check_text` (must-mention, must-not-mention and per-turn texts)."""

    info: LayerInfo = describe_layer(
        LAYER, (Capability.ASSISTANT_TEXT,), "must-mention and must-not-mention texts"
    )

    def checks(self, case: Case, transcript: Transcript, context: LayerContext) -> list[CheckResult]:
        """One check per text the case states (one ``not_evaluated`` check when it states none)."""
        del context  # the texts are the case's and the transcript's alone
        return check_text(case, transcript)
