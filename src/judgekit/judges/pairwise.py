"""Pairwise judging: which of two responses better satisfies a criterion, asked in both orders.

LLM judges favour a position (often the first response shown). Every comparison is therefore run twice,
with the responses swapped, and the second answer is mapped back to the original labels:

* both orders prefer the same response (or both say ``tie``): that is the result, ``position_consistent``
  is true;
* the orders disagree: there is no winner (``winner`` is ``None``) and ``position_consistent`` is false:
  the judge's preference followed the position, not the responses;
* either order is unusable (provider error, parse failure): no winner, ``position_consistent`` is
  ``None`` (undefined) and ``error`` says why.

The judge answers ``{"preferred": "A" | "B" | "tie" | "insufficient_information", "evidence": [...],
"rationale": "..."}``, parsed as strictly as verdicts (last top-level object wins; anything else is a
``judge_parse_failure``). Both responses enter the prompt inside nonce-tagged fences, as transcripts do.
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import TYPE_CHECKING, Any, Literal

from judgekit.judges.client import JudgeClient
from judgekit.judges.fingerprint import judge_fingerprint
from judgekit.judges.parse import PARSE_FAILURE, find_reply_object, normalise_option
from judgekit.judges.prompt import (
    SYSTEM_PROMPT,
    block_tag,
    fence,
    judge_messages,
    render_case_facts,
    render_transcript,
)
from judgekit.judges.rubric import Criterion, Rubric
from judgekit.verdict import FrozenModel

if TYPE_CHECKING:
    from judgekit.cases import Case
    from judgekit.transcript import Transcript

__all__ = ["PAIRWISE_TEMPLATE", "PairwiseJudge", "PairwiseResult", "Preference", "parse_preference"]

Choice = Literal["first", "second", "tie", "insufficient_information"]

PAIRWISE_TEMPLATE = """\
Compare two conversations, A and B, on one criterion and say which satisfies it better.

Criterion {criterion_id} (dimension: {dimension}):
{criterion_text}

Answer "A" or "B" for the conversation that satisfies the criterion better, "tie" when they satisfy it \
equally well (or equally badly), or "insufficient_information" when the data blocks lack what the \
criterion needs. The order in which the conversations are shown says nothing about their quality.

Reply with exactly one JSON object and nothing else:
{{"preferred": <one of "A", "B", "tie", "insufficient_information">, "evidence": [<up to 3 short quotes \
copied exactly from the data blocks>], "rationale": <one or two sentences>}}

Facts about the task, from its case file (block tag {nonce}):
{case_facts}

Conversation A (block tag {nonce}):
{first}

Conversation B (block tag {nonce}):
{second}"""

_OPTIONS = {"a": "A", "b": "B", "tie": "tie", "insufficient_information": "insufficient_information"}


class Preference(FrozenModel):
    """One order's answer.

    Attributes:
        choice: The answer mapped to the original labels (``first``/``second``/``tie``/
            ``insufficient_information``), or ``None`` when unusable.
        rationale: The judge's rationale.
        reason: ``""``, ``judge_parse_failure`` or the client's error reason.
        detail: What went wrong.
        raw: The raw reply.
    """

    choice: Choice | None
    rationale: str = ""
    reason: str = ""
    detail: str = ""
    raw: str | None = None


class PairwiseResult(FrozenModel):
    """The comparison of two responses on one criterion.

    Attributes:
        criterion_id: The criterion compared on.
        winner: ``first``, ``second`` or ``tie`` when both orders agree; ``None`` otherwise.
        position_consistent: True when both orders gave the same answer; false when they disagree;
            ``None`` when either order was unusable.
        shown_first: The answer with the first response shown first (``A`` = first).
        shown_second: The answer with the second response shown first, mapped back.
        error: Why there is no usable comparison (``None`` when both orders were usable).
    """

    criterion_id: str
    winner: Literal["first", "second", "tie"] | None
    position_consistent: bool | None
    shown_first: Preference
    shown_second: Preference
    error: str | None = None


def parse_preference(
    raw: str | None, *, finish_reason: str | None = None, refusal: str | None = None
) -> tuple[str | None, str, str]:
    """Parse a pairwise reply under the same rules as a verdict reply (:func:`find_reply_object`).

    More than one ``preferred`` object (unless identical), a repeated or lookalike key, a refusal, a
    finish reason other than ``stop``, a cut-off tail or a reply over the size limit is unusable.

    Args:
        raw: The reply's text (``None`` when the provider returned no content).
        finish_reason: The provider's finish reason (``None``, unknown, and ``stop`` are accepted).
        refusal: The provider's ``message.refusal`` text, when it set one.

    Returns:
        ``(label, rationale, problem)``: ``label`` is ``A``, ``B``, ``tie`` or ``insufficient_information``
        (``None`` with ``problem`` set when the reply is unusable).

    Examples:
        >>> parse_preference('{"preferred": "B", "rationale": "cites the policy"}')
        ('B', 'cites the policy', '')
        >>> parse_preference('{"preferred": "A"} {"preferred": "B"}')[2][:27]
        'the reply holds 2 different'
    """
    obj, problem = find_reply_object(raw, "preferred", finish_reason=finish_reason, refusal=refusal)
    if obj is None:
        return None, "", problem
    value = obj["preferred"]
    if not isinstance(value, str):
        return None, "", f"preferred is {type(value).__name__}, not a string"
    key = normalise_option(value)
    if key not in _OPTIONS:
        return None, "", f"preferred {value!r} is not one of ['A', 'B', 'tie', 'insufficient_information']"
    rationale = obj.get("rationale", "")
    return _OPTIONS[key], rationale if isinstance(rationale, str) else "", ""


class PairwiseJudge:
    """Compare two transcripts on each criterion of a rubric, in both orders.

    Args:
        rubric: The rubric whose criteria are compared on.
        client: The judge client.

    Attributes:
        fingerprint: SHA-256 hex string identifying this judge (kind ``pairwise``).
    """

    def __init__(self, rubric: Rubric, client: JudgeClient) -> None:
        self.rubric = rubric
        self.client = client
        fixed = "\x1f".join([SYSTEM_PROMPT, PAIRWISE_TEMPLATE])
        self.template_hash = hashlib.sha256(fixed.encode("utf-8")).hexdigest()
        fp = judge_fingerprint(
            kind="pairwise", params=client.params, rubric=rubric, template_hash=self.template_hash
        )
        self.fingerprint = fp.hex
        self.fingerprint_spec = fp.spec

    def _messages(self, criterion: Criterion, facts: str, a: str, b: str) -> tuple[dict[str, str], ...]:
        nonce = block_tag(self.template_hash, criterion.id, facts, a, b)
        user = PAIRWISE_TEMPLATE.format(
            criterion_id=criterion.id,
            dimension=criterion.dimension,
            criterion_text=criterion.text,
            case_facts=fence("case_facts", facts, nonce),
            first=fence("conversation_a", a, nonce),
            second=fence("conversation_b", b, nonce),
            nonce=nonce,
        )
        return judge_messages(user)

    async def _ask(self, messages: tuple[dict[str, str], ...], *, item: str, swapped: bool) -> Preference:
        request = self.client.build_request(messages, schema=None)
        result = await self.client.complete(request, item=item)
        if result.error is not None:
            return Preference(choice=None, reason=result.error, detail=result.error_detail)
        label, rationale, problem = parse_preference(
            result.content, finish_reason=result.finish_reason, refusal=result.refusal
        )
        if label is None:
            return Preference(choice=None, reason=PARSE_FAILURE, detail=problem, raw=result.content)
        mapping: dict[str, Any] = {
            "A": "second" if swapped else "first",
            "B": "first" if swapped else "second",
            "tie": "tie",
            "insufficient_information": "insufficient_information",
        }
        return Preference(choice=mapping[label], rationale=rationale, raw=result.content)

    async def compare(self, case: Case | None, first: Transcript, second: Transcript) -> list[PairwiseResult]:
        """Compare ``first`` and ``second`` on every criterion, in both orders (2 calls per criterion)."""
        facts = render_case_facts(case)
        a_text, b_text = render_transcript(first), render_transcript(second)
        item = f"{first.case_id}#{first.trial} vs {second.case_id}#{second.trial}"

        async def one(criterion: Criterion) -> PairwiseResult:
            p1, p2 = await asyncio.gather(
                self._ask(
                    self._messages(criterion, facts, a_text, b_text),
                    item=f"{item}/{criterion.id}/AB",
                    swapped=False,
                ),
                self._ask(
                    self._messages(criterion, facts, b_text, a_text),
                    item=f"{item}/{criterion.id}/BA",
                    swapped=True,
                ),
            )
            # an order without a usable answer leaves no comparison: its reason is the error
            bad = p1 if p1.choice is None else p2 if p2.choice is None else None
            consistent = None if bad is not None else p1.choice == p2.choice
            winner = p1.choice if consistent and p1.choice != "insufficient_information" else None
            return PairwiseResult(
                criterion_id=criterion.id,
                winner=winner,
                position_consistent=consistent,
                shown_first=p1,
                shown_second=p2,
                error=f"{bad.reason}: {bad.detail}" if bad is not None else None,
            )

        return list(await asyncio.gather(*(one(c) for c in self.rubric.criteria)))
