"""Strict parsing of judge replies into verdicts, and the reduction of several samples to one.

Rules (after Inspect AI's model-graded scorers, made stricter; the reply is untrusted text):

* The reply must contain exactly one JSON object with a ``verdict`` key. Markdown fences and prose around
  it are tolerated. Objects nested inside another object (for example a verdict-shaped string inside an
  evidence quote) are never candidates: only top-level objects count.
* **One verdict per reply.** Two or more top-level objects with a ``verdict`` key are an error, whether
  they agree or not, unless they are byte-identical copies of one object. A verdict object that repeats a
  key (``{"verdict": "fail", "verdict": "pass"}``, at any depth) is an error. A key that only looks like
  ``verdict`` (``Verdict``, ``ver\u200bdict``, a fullwidth or padded form) is not a verdict key, and an
  object holding one makes the reply an error.
* The verdict must be one of the offered options. Case, surrounding whitespace, zero-width characters and
  ``-``/space instead of ``_`` are forgiven in the value; anything else (``passed``, ``PASS!``, a Cyrillic
  ``а`` in ``pаss``, a number, a verdict not on the menu) is off-menu.
* A refusal is an error: ``message.refusal`` set by the provider, or refusal phrasing ("I can't help
  with that", "I must decline", ...) in the prose around the JSON objects.
* A reply that did not end normally is an error: any finish reason but ``stop`` (``length``,
  ``content_filter``, ``tool_calls``, ``refusal``...; an unknown finish reason, ``None``, is accepted), or
  a JSON object opened after the last complete object that never closes (a cut-off tail).
* Bounds: a reply longer than :data:`REPLY_MAX_CHARS` characters, JSON nested deeper than
  :data:`JSON_MAX_DEPTH` levels, more than :data:`JSON_MAX_OBJECTS` top-level objects, or a reply the
  scanner cannot finish within :data:`JSON_SCAN_PASSES` reads of its length is an error, named by its
  limit. Scanning for objects is linear in the reply's length and never recursive.
* Every such reply is :attr:`Verdict.ERROR` with reason ``judge_parse_failure``, a detail saying what was
  wrong, and the raw reply kept. Never a pass, never a fail.
* Evidence quotes are checked against the data the judge was shown; a quote that does not occur there is
  kept and flagged (``found=False``), never silently dropped.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pydantic import Field

from judgekit.textnorm import QUOTE_MATCHING, REFUSAL_PROSE, REPLY_KEYS, VERDICT_OPTIONS
from judgekit.verdict import FrozenModel, Verdict

__all__ = [
    "JSON_MAX_DEPTH",
    "JSON_MAX_OBJECTS",
    "JSON_SCAN_PASSES",
    "PARSE_FAILURE",
    "REFUSAL_PATTERNS",
    "REPLY_MAX_CHARS",
    "EvidenceQuote",
    "FoundObject",
    "JsonScan",
    "ParsedVerdict",
    "SampledVerdict",
    "find_json_objects",
    "find_reply_object",
    "normalise_for_match",
    "normalise_option",
    "parse_verdict",
    "quote_occurs",
    "reduce_samples",
    "scan_json_objects",
    "verdict_json_schema",
]

PARSE_FAILURE = "judge_parse_failure"
"""The ``reason`` of every verdict that could not be parsed."""

REPLY_MAX_CHARS: Final = 200_000
"""The longest judge reply parsed, in characters; a longer one is an error (a verdict reply is a few
hundred characters, and ``max_tokens`` keeps an honest one far below this: 200,000 characters is about
50,000 tokens)."""

JSON_MAX_DEPTH: Final = 64
"""The deepest nesting of ``{``/``[`` inside one JSON object of a reply; deeper is an error, found by an
iterative scan before any decoding (so ``'{"a":' * 100000`` never reaches the recursive decoder)."""

JSON_MAX_OBJECTS: Final = 1_000
"""The most top-level JSON objects read from one reply; a reply with more is an error."""

JSON_SCAN_PASSES: Final = 4
"""How many times over its own length (plus a fixed 65,536 characters) the object scanner may read a
reply, restarting after a candidate that is not JSON (each candidate counts at least 64 characters); a
reply that needs more is an error. This makes scanning linear-time whatever the reply."""

REFUSAL_PATTERNS: Final = (
    r"\bi(?: can ?not| can'?t| won'?t| will not| am unable to|'?m unable to| am not able to|'?m not able to)"
    r" (?:help|assist|comply|provide|do that|do this|evaluate|judge|grade|complete|fulfil+|answer|continue"
    r"|engage|participate|support|process|review|assess|give|share|perform|rate|score|compare)\b",
    r"\bi(?: must| have to| need to| will have to| am going to have to|'?m going to have to)"
    r" (?:decline|refuse)\b",
    r"\bi (?:decline|refuse) to\b",
    r"\bi(?:'?m| am) sorry,? but\b",
    r"\bi apologi[sz]e,? but\b",
    r"\bas an ai\b",
    r"\bagainst my (?:guidelines|policy|policies|principles|programming|usage polic(?:y|ies))\b",
    r"\bi(?:'?m| am) not (?:comfortable|allowed|permitted) to\b",
)
"""Refusal phrasing (matched, after NFKC, removal of format characters, case folding, straight
apostrophes and collapsed spaces, in the prose *outside* the reply's JSON objects): a reply that says it
will not do the job is an error even when it also holds a verdict."""

_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|…|\[\.\.\.\])\s*")
_EDGE_QUOTES = "\"'“”‘’«»`"


class EvidenceQuote(FrozenModel):
    """One quote a judge gave as evidence.

    Attributes:
        text: The quote as the judge wrote it.
        found: True when it occurs in the data the judge was shown (after whitespace, case and
            zero-width normalisation; a quote with ``...`` elisions must have every fragment present, in
            order).
    """

    text: str
    found: bool


class ParsedVerdict(FrozenModel):
    """One judge reply, parsed.

    Attributes:
        verdict: ``pass``, ``fail``, ``insufficient_information``, or ``error`` when the reply could not
            be parsed (or the call failed).
        evidence: The quotes, each flagged as found or not.
        rationale: The judge's short rationale ("" when absent).
        reason: ``""`` for a parsed verdict; ``judge_parse_failure`` for an unusable reply; for a failed
            call the client's reason (``provider_error``, ``budget_exhausted``, ``cassette_miss``).
        detail: What exactly was wrong, for people.
        raw: The judge's raw reply (``None`` when there was none).
    """

    verdict: Verdict
    evidence: tuple[EvidenceQuote, ...] = ()
    rationale: str = ""
    reason: str = ""
    detail: str = ""
    raw: str | None = None

    @property
    def unverified_quotes(self) -> int:
        """How many evidence quotes were not found in the data."""
        return sum(1 for q in self.evidence if not q.found)


class SampledVerdict(FrozenModel):
    """The reduction of ``n`` samples of one criterion.

    Attributes:
        verdict: The majority verdict among usable samples (pass, fail or insufficient_information);
            ``insufficient_information`` when the top two tie; ``error`` when no sample was usable.
        agreement: Share of usable samples that gave the majority verdict, in (0, 1]; ``None`` when no
            sample was usable (undefined, never 0).
        samples: Every sample, in order.
        usable: How many samples gave a verdict (not ``error``).
    """

    verdict: Verdict
    agreement: float | None = Field(default=None, gt=0.0, le=1.0)
    samples: tuple[ParsedVerdict, ...]
    usable: int


def verdict_json_schema(options: Sequence[str], max_quotes: int) -> dict[str, Any]:
    """The JSON schema of one verdict reply, for providers that support structured output.

    Args:
        options: The offered verdicts.
        max_quotes: The most evidence quotes allowed.

    Returns:
        An OpenAI-style ``response_format`` value (``{"type": "json_schema", "json_schema": {...}}``).
    """
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "criterion_verdict",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {
                    "verdict": {"type": "string", "enum": list(options)},
                    "evidence": {"type": "array", "items": {"type": "string"}, "maxItems": max_quotes},
                    "rationale": {"type": "string"},
                },
                "required": ["verdict", "evidence", "rationale"],
                "additionalProperties": False,
            },
        },
    }


@dataclass(frozen=True, slots=True)
class FoundObject:
    """One top-level JSON object found in a reply.

    Attributes:
        start: Index of its ``{`` in the text.
        end: Index just after its closing ``}``.
        value: The decoded object (a repeated key keeps its last value, as :func:`json.loads` does).
        duplicate_keys: Keys that occur more than once in one object, at any depth of this one.
    """

    start: int
    end: int
    value: dict[str, Any]
    duplicate_keys: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class JsonScan:
    """What scanning a text for top-level JSON objects found.

    Attributes:
        objects: The objects, in order (empty when the scan stopped).
        unclosed_at: Index of the first ``{`` after the last complete object that never closes (the text
            looks cut off there), or ``None``.
        stopped: ``""`` when the whole text was scanned; otherwise why scanning stopped, naming the limit.
    """

    objects: tuple[FoundObject, ...]
    unclosed_at: int | None
    stopped: str


_STRUCTURE = re.compile(r'[{}\[\]"]')
# Where a JSON object can start: "{", JSON whitespace, then a key's quote or "}" (or the end of the text,
# which is a cut-off object). Any other "{" can never begin an object and is skipped without a match.
_OBJECT_START = re.compile(r'\{[ \t\n\r]*(?:["}]|\Z)')
_STRING = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)  # possessive: never backtracks
_CLOSED, _UNCLOSED, _MISMATCH, _DEEP = range(4)
_SCAN_ALLOWANCE: Final = 65_536
_CANDIDATE_COST: Final = 64


def _match_braces(text: str, start: int, max_depth: int) -> tuple[int, int]:
    """Find where the JSON value opened at ``text[start]`` closes, iteratively (strings and escapes known).

    Returns:
        ``(status, index)``: ``_CLOSED`` with the index after the closing bracket; ``_UNCLOSED`` with
        ``len(text)``; ``_MISMATCH`` or ``_DEEP`` with the index of the offending bracket.
    """
    closers: list[str] = []
    i = start
    n = len(text)
    while True:
        found = _STRUCTURE.search(text, i)
        if found is None:
            return _UNCLOSED, n
        char = found.group()
        j = found.start()
        if char == '"':
            string = _STRING.match(text, j)
            if string is None:
                return _UNCLOSED, n
            i = string.end()
            continue
        if char in "{[":
            closers.append("}" if char == "{" else "]")
            if len(closers) > max_depth:
                return _DEEP, j
        elif not closers or closers.pop() != char:
            return _MISMATCH, j
        elif not closers:
            return _CLOSED, j + 1
        i = j + 1


def _decode_object(span: str) -> tuple[dict[str, Any], tuple[str, ...]] | None:
    """Decode one balanced span as a JSON object, noting repeated keys; ``None`` when it is not one."""
    repeated: list[str] = []

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for key, value in pairs:
            if key in obj:
                repeated.append(key)
            obj[key] = value
        return obj

    try:
        value = json.loads(span, object_pairs_hook=pairs_hook)
    except ValueError:  # not JSON, or an integer longer than Python converts
        return None
    if not isinstance(value, dict):
        return None
    return value, tuple(dict.fromkeys(repeated))


def scan_json_objects(text: str, *, max_depth: int = JSON_MAX_DEPTH) -> JsonScan:
    """Find every top-level JSON object embedded in ``text``, in order, in linear time.

    Scans left to right. At each ``{`` outside an object already found, an iterative bracket match (which
    knows JSON strings and escapes, and refuses nesting deeper than ``max_depth``) finds where the
    candidate closes, and only that balanced span is decoded. A decoded object's whole span is skipped, so
    objects nested inside it (or inside its strings) are never returned on their own. A candidate that is
    not JSON is skipped by one character, as a decoder tried at every ``{`` would; a ``{`` not followed
    (after JSON whitespace) by ``"`` or ``}`` cannot start an object and is passed over at once.

    Args:
        text: The text to scan.
        max_depth: The deepest nesting allowed (default :data:`JSON_MAX_DEPTH`).

    Returns:
        The objects found, where a tail is left unclosed, and why scanning stopped early (if it did:
        deeper than ``max_depth``, more than :data:`JSON_MAX_OBJECTS` objects, or more than
        :data:`JSON_SCAN_PASSES` reads of the text).
    """
    budget = JSON_SCAN_PASSES * len(text) + _SCAN_ALLOWANCE
    objects: list[FoundObject] = []
    unclosed_at: int | None = None
    start = _OBJECT_START.search(text)
    while start is not None:
        pos = start.start()
        status, end = _match_braces(text, pos, max_depth)
        budget -= max(end - pos + 1, _CANDIDATE_COST)
        if status == _DEEP:
            return JsonScan(
                (),
                unclosed_at,
                f"JSON nested deeper than {max_depth} levels at character {end + 1} (limit JSON_MAX_DEPTH)",
            )
        if budget < 0:
            return JsonScan(
                (),
                unclosed_at,
                f"scanning for JSON objects needed more than {JSON_SCAN_PASSES} reads of the reply "
                "(limit JSON_SCAN_PASSES)",
            )
        if status == _CLOSED:
            decoded = _decode_object(text[pos:end])
            if decoded is not None:
                if len(objects) == JSON_MAX_OBJECTS:
                    return JsonScan(
                        (),
                        unclosed_at,
                        f"more than {JSON_MAX_OBJECTS} top-level JSON objects (limit JSON_MAX_OBJECTS)",
                    )
                objects.append(FoundObject(pos, end, decoded[0], decoded[1]))
                unclosed_at = None
                start = _OBJECT_START.search(text, end)
                continue
        elif status == _UNCLOSED and unclosed_at is None:
            unclosed_at = pos
        start = _OBJECT_START.search(text, pos + 1)
    return JsonScan(tuple(objects), unclosed_at, "")


def find_json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object embedded in ``text``, in order (see :func:`scan_json_objects`).

    Linear-time and never recursive. When the scan stops at a limit (nesting deeper than
    :data:`JSON_MAX_DEPTH`, too many objects, too much rescanning) nothing is returned: a text that cannot
    be read whole yields no objects rather than some of them.
    """
    scan = scan_json_objects(text)
    return [] if scan.stopped else [o.value for o in scan.objects]


def normalise_for_match(text: str) -> str:
    """Normalise for quote matching: NFKC, zero-width characters removed, case folded, spaces collapsed.

    The profile :data:`judgekit.textnorm.QUOTE_MATCHING`.
    """
    return QUOTE_MATCHING.apply(text)


def quote_occurs(quote: str, haystacks: Iterable[str]) -> bool:
    """Whether ``quote`` occurs in any of ``haystacks`` (normalised; ``...`` elisions allowed, in order).

    An empty quote (after trimming quotation marks) never occurs.
    """
    fragments = [normalise_for_match(f).strip(_EDGE_QUOTES).strip() for f in _ELLIPSIS.split(quote)]
    fragments = [f for f in fragments if f]
    if not fragments:
        return False
    for hay in haystacks:
        norm = normalise_for_match(hay)
        pos = 0
        for frag in fragments:
            found = norm.find(frag, pos)
            if found == -1:
                break
            pos = found + len(frag)
        else:
            return True
    return False


def normalise_option(value: str) -> str:
    """An option's comparable form: NFC, zero-width removed, case-folded, spaces and hyphens as ``_``.

    The profile :data:`judgekit.textnorm.VERDICT_OPTIONS`.

    Examples:
        >>> normalise_option(" Insufficient-Information\u200b")
        'insufficient_information'
    """
    return VERDICT_OPTIONS.apply(value)


_REFUSAL = re.compile("|".join(REFUSAL_PATTERNS))
_RAW_KEPT_CHARS: Final = 2_000
_STOP = "stop"


def _refusal_in(prose: str) -> str | None:
    """The refusal phrase in ``prose`` (normalised), or ``None``."""
    text = REFUSAL_PROSE.apply(prose)
    found = _REFUSAL.search(text)
    return found.group() if found else None


def _finish_problem(finish_reason: str | None) -> str:
    if finish_reason is None:
        return ""
    reason = str(finish_reason).strip().casefold()
    if reason == _STOP:
        return ""
    if reason == "length":
        return "reply truncated by the token limit (finish_reason=length)"
    if reason == "content_filter":
        return "reply stopped by the provider's content filter (finish_reason=content_filter)"
    if reason == "refusal":
        return "the judge refused to answer (finish_reason=refusal)"
    return f"reply ended with finish_reason={finish_reason!r}, not 'stop'"


def _not_text(value: Any) -> bool:
    """Whether a decoded value holds a string that is not encodable text (a lone surrogate escape)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_not_text(k) or _not_text(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_not_text(v) for v in value)
    return False


def find_reply_object(
    raw: str | None,
    key: str,
    *,
    finish_reason: str | None = None,
    refusal: str | None = None,
    max_chars: int = REPLY_MAX_CHARS,
) -> tuple[dict[str, Any] | None, str]:
    """The one usable top-level object with ``key`` in a judge reply, under every rule of this module.

    Applies, in order: a refusal (``message.refusal``), a finish reason other than ``stop``, an empty
    reply, the size limit, the scan limits (depth, objects, passes), lookalike keys, more than one object
    with ``key`` (unless byte-identical), repeated keys, a cut-off tail, refusal phrasing in the prose
    around the objects, and strings that are not text.

    Args:
        raw: The reply's text (``None`` when the provider returned no content).
        key: The key that marks the answer object (``verdict``, ``preferred``).
        finish_reason: The provider's finish reason; ``None`` (unknown) and ``stop`` are accepted.
        refusal: The provider's ``message.refusal`` text, when it set one.
        max_chars: The longest reply read (default :data:`REPLY_MAX_CHARS`).

    Returns:
        ``(object, "")`` for a usable reply; ``(None, problem)`` otherwise, the problem saying which rule
        (and which limit) the reply broke.
    """
    if refusal is not None and str(refusal).strip():
        return None, f"the judge refused (message.refusal: {str(refusal).strip()[:200]!r})"
    finish = _finish_problem(finish_reason)
    if finish:
        return None, finish
    if raw is None or not raw.strip():
        return None, "empty reply"
    if len(raw) > max_chars:
        return None, f"reply is {len(raw):,} characters, more than {max_chars:,} (limit REPLY_MAX_CHARS)"
    scan = scan_json_objects(raw)
    if scan.stopped:
        return None, scan.stopped
    key_form = REPLY_KEYS.apply(key)
    for found in scan.objects:
        for k in found.value:
            if k != key and REPLY_KEYS.apply(k) == key_form:
                return None, (
                    f"key {k!r} at character {found.start + 1} looks like {key!r} but is not it (case, "
                    "spaces, zero-width or compatibility characters): not a verdict, and ambiguous"
                )
    candidates = [o for o in scan.objects if key in o.value]
    if not candidates:
        tail = ""
        if scan.unclosed_at is not None:
            tail = f" (the object at character {scan.unclosed_at + 1} never closes: the reply looks cut off)"
        return None, f"no JSON object with a {key!r} key in the reply{tail}"
    spans = {raw[o.start : o.end] for o in candidates}
    if len(spans) > 1:
        values = ", ".join(repr(o.value[key]) for o in candidates[:5])
        return None, (
            f"the reply holds {len(candidates)} different objects with a {key!r} key ({values}); a reply "
            "must give exactly one"
        )
    chosen = candidates[-1]
    if chosen.duplicate_keys:
        return None, (
            f"the {key} object at character {chosen.start + 1} repeats the key "
            f"{chosen.duplicate_keys[0]!r}; a repeated key is ambiguous"
        )
    if scan.unclosed_at is not None:
        return None, (
            f"a JSON object opened at character {scan.unclosed_at + 1}, after the last complete one, "
            "never closes: the reply looks cut off"
        )
    pieces: list[str] = []
    last = 0
    for o in scan.objects:
        pieces.append(raw[last : o.start])
        last = o.end
    pieces.append(raw[last:])
    phrase = _refusal_in(" ".join(pieces))
    if phrase is not None:
        return None, f"the judge's reply reads as a refusal ({phrase!r} around the JSON object)"
    if _not_text(chosen.value):
        return None, f"the {key} object holds a lone surrogate escape (\\ud800-\\udfff), which is not text"
    return chosen.value, ""


def _failure(detail: str, raw: str | None) -> ParsedVerdict:
    if raw is not None and len(raw) > REPLY_MAX_CHARS:
        raw = raw[:_RAW_KEPT_CHARS] + f"... [{len(raw) - _RAW_KEPT_CHARS:,} more characters not kept]"
    return ParsedVerdict(verdict=Verdict.ERROR, reason=PARSE_FAILURE, detail=detail, raw=raw)


def parse_verdict(
    raw: str | None,
    *,
    options: Sequence[str],
    haystacks: Iterable[str] = (),
    finish_reason: str | None = None,
    max_quotes: int | None = None,
    refusal: str | None = None,
) -> ParsedVerdict:
    """Parse one judge reply strictly (the rules are in this module's docstring).

    Args:
        raw: The reply's text (``None`` when the provider returned no content).
        options: The verdicts that were offered (a subset of pass, fail, insufficient_information).
        haystacks: The data the judge was shown; evidence quotes are checked against it.
        finish_reason: The provider's finish reason; anything but ``stop`` (or ``None``, unknown) means
            the reply did not end normally (``length``: truncated; ``content_filter``; ``refusal``...).
        max_quotes: When set, more quotes than this is a parse failure (the menu said "up to n").
        refusal: The provider's ``message.refusal`` text, when it set one: always an error.

    Returns:
        A parsed verdict, or an ``error`` verdict with reason ``judge_parse_failure``, the detail and the
        raw reply (only its first 2,000 characters when it is longer than :data:`REPLY_MAX_CHARS`).
    """
    obj, problem = find_reply_object(raw, "verdict", finish_reason=finish_reason, refusal=refusal)
    if obj is None:
        return _failure(problem, raw)
    value = obj["verdict"]
    if not isinstance(value, str):
        return _failure(f"verdict is {type(value).__name__}, not a string", raw)
    normalised = normalise_option(value)
    if normalised not in options:
        return _failure(f"verdict {value!r} is not one of {list(options)}", raw)
    evidence = obj.get("evidence", [])
    if evidence is None:
        evidence = []
    if isinstance(evidence, str):
        evidence = [evidence]
    if not isinstance(evidence, list) or not all(isinstance(q, str) for q in evidence):
        return _failure("evidence is not a list of strings", raw)
    if max_quotes is not None and len(evidence) > max_quotes:
        return _failure(f"{len(evidence)} evidence quotes, more than the {max_quotes} allowed", raw)
    rationale = obj.get("rationale", "")
    if rationale is None:
        rationale = ""
    if not isinstance(rationale, str):
        return _failure("rationale is not a string", raw)
    hay = tuple(haystacks)
    quotes = tuple(EvidenceQuote(text=q, found=quote_occurs(q, hay)) for q in evidence if q.strip())
    return ParsedVerdict(verdict=Verdict(normalised), evidence=quotes, rationale=rationale.strip(), raw=raw)


def reduce_samples(samples: Sequence[ParsedVerdict]) -> SampledVerdict:
    """Reduce ``n`` samples of one criterion to a majority verdict with its agreement.

    Errors are not votes: the majority is taken over usable samples, and ``agreement`` is the majority's
    share of them. A tie between the two most common verdicts gives ``insufficient_information`` (the
    samples do not decide), with the tied share as agreement. With no usable sample the verdict is
    ``error`` and agreement is ``None``.

    Raises:
        ValueError: When ``samples`` is empty.
    """
    if not samples:
        raise ValueError("reduce_samples needs at least one sample")
    usable = [s.verdict for s in samples if s.verdict is not Verdict.ERROR]
    if not usable:
        return SampledVerdict(verdict=Verdict.ERROR, agreement=None, samples=tuple(samples), usable=0)
    ranked = Counter(usable).most_common()
    top, top_count = ranked[0]
    if len(ranked) > 1 and ranked[1][1] == top_count:
        top = Verdict.INSUFFICIENT_INFORMATION
    return SampledVerdict(
        verdict=top, agreement=top_count / len(usable), samples=tuple(samples), usable=len(usable)
    )
