"""Strict parsing of judge replies into verdicts, and the reduction of several samples to one.

Rules (after Inspect AI's model-graded scorers, made stricter):

* The reply must contain a JSON object with a ``verdict`` key. Markdown fences and prose around it are
  tolerated; when the reply holds several such objects **the last one wins** (a judge that corrects itself
  is taken at its final word). Objects nested inside another object (for example a verdict-shaped string
  inside an evidence quote) are never candidates: only top-level objects count.
* The verdict must be one of the offered options. Case, surrounding whitespace, zero-width characters and
  ``-``/space instead of ``_`` are forgiven; anything else (``passed``, ``PASS!``, a Cyrillic ``а`` in
  ``pаss``, a verdict not on the menu) is off-menu.
* A reply cut off by the token limit (``finish_reason == "length"``), with no JSON object, with a verdict
  that is not a string, or with evidence that is not a list of strings, is a parse failure:
  :attr:`Verdict.ERROR` with reason ``judge_parse_failure`` and the raw reply kept. Never a pass, never
  a fail.
* Evidence quotes are checked against the data the judge was shown; a quote that does not occur there is
  kept and flagged (``found=False``), never silently dropped.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import Field

from judgekit.verdict import FrozenModel, Verdict

__all__ = [
    "PARSE_FAILURE",
    "EvidenceQuote",
    "ParsedVerdict",
    "SampledVerdict",
    "find_json_objects",
    "normalise_for_match",
    "parse_verdict",
    "quote_occurs",
    "reduce_samples",
    "verdict_json_schema",
]

PARSE_FAILURE = "judge_parse_failure"
"""The ``reason`` of every verdict that could not be parsed."""

_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e\u200e\u200f"), None)
_SPACES = re.compile(r"\s+")
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


def find_json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object embedded in ``text``, in order.

    Scans left to right; at each ``{`` tries to decode one JSON value. A decoded object's whole span is
    skipped, so objects nested inside it (or inside its strings) are never returned on their own.
    """
    decoder = json.JSONDecoder()
    out: list[dict[str, Any]] = []
    i = text.find("{")
    while i != -1:
        try:
            value, end = decoder.raw_decode(text, i)
        except ValueError:
            i = text.find("{", i + 1)
            continue
        if isinstance(value, dict):
            out.append(value)
        i = text.find("{", end)
    return out


def normalise_for_match(text: str) -> str:
    """Normalise for quote matching: NFKC, zero-width characters removed, case folded, spaces collapsed."""
    text = unicodedata.normalize("NFKC", text).translate(_ZERO_WIDTH).casefold()
    return _SPACES.sub(" ", text).strip()


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


def _normalise_option(value: str) -> str:
    text = unicodedata.normalize("NFC", value).translate(_ZERO_WIDTH).strip().casefold()
    return re.sub(r"[\s-]+", "_", text)


def _failure(detail: str, raw: str | None) -> ParsedVerdict:
    return ParsedVerdict(verdict=Verdict.ERROR, reason=PARSE_FAILURE, detail=detail, raw=raw)


def parse_verdict(
    raw: str | None,
    *,
    options: Sequence[str],
    haystacks: Iterable[str] = (),
    finish_reason: str | None = None,
    max_quotes: int | None = None,
) -> ParsedVerdict:
    """Parse one judge reply strictly.

    Args:
        raw: The reply's text (``None`` when the provider returned no content).
        options: The verdicts that were offered (a subset of pass, fail, insufficient_information).
        haystacks: The data the judge was shown; evidence quotes are checked against it.
        finish_reason: The provider's finish reason; ``length`` means the reply was truncated.
        max_quotes: When set, more quotes than this is a parse failure (the menu said "up to n").

    Returns:
        A parsed verdict, or an ``error`` verdict with reason ``judge_parse_failure`` and the raw reply.
    """
    if raw is None or not raw.strip():
        return _failure("empty reply", raw)
    if finish_reason == "length":
        return _failure("reply truncated by the token limit (finish_reason=length)", raw)
    candidates = [o for o in find_json_objects(raw.translate(_ZERO_WIDTH)) if "verdict" in o]
    if not candidates:
        return _failure("no JSON object with a 'verdict' key in the reply", raw)
    obj = candidates[-1]
    value = obj["verdict"]
    if not isinstance(value, str):
        return _failure(f"verdict is {type(value).__name__}, not a string", raw)
    normalised = _normalise_option(value)
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
