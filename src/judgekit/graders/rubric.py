"""The judge-backed grader: one :class:`~judgekit.verdict.CheckResult` per rubric criterion, with trust.

For a (case, transcript) pair the grader asks the judge about every criterion of its rubric plus, when
enabled, the case's own criteria:

* ``case.acceptance`` becomes the critical criterion ``case.acceptance`` (an acceptance still marked
  ``REVIEW:`` is not judged: its check is ``not_evaluated`` with the reason);
* each ``response_rubric`` line becomes the scored criterion ``case.response_rubric.<i>``;
* each free-text prohibition (``prohibited`` texts and ``forbidden_outcomes``) becomes the critical
  criterion ``case.forbidden_outcome.<i>`` ("this must not happen").

Each criterion is judged ``samples`` times (separate requests); the check carries the majority verdict, the
agreement fraction, every sample's verdict, the judge's quotes (flagged when not found in the transcript,
located to a message when found) and the raw reply of unusable samples. A critical criterion is a gate;
the others are scored 1.0 (pass) or 0.0 (fail) with their weight, and ``None`` otherwise (an error or an
undecided criterion is never a 0 or a 1).

Trust sits beside the verdict: the grader's :attr:`RubricGrader.fingerprint` (hex) is looked up with the
``trust`` callable (calibration supplies it); without one every verdict is ``untrusted``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from judgekit.judges.client import JudgeClient
from judgekit.judges.fingerprint import Fingerprint, judge_fingerprint
from judgekit.judges.parse import (
    ParsedVerdict,
    SampledVerdict,
    normalise_for_match,
    parse_verdict,
    reduce_samples,
    verdict_json_schema,
)
from judgekit.judges.prompt import PromptRenderer, render_case_facts, render_transcript
from judgekit.judges.rubric import Criterion, Rubric
from judgekit.verdict import CheckResult, Evidence, FailureCategory, Trust, Verdict

if TYPE_CHECKING:
    from judgekit.cases import Case
    from judgekit.transcript import Transcript

__all__ = ["LAYER", "RubricGrader", "case_criteria"]

LAYER = "rubric"

_SCORES = {Verdict.PASS: 1.0, Verdict.FAIL: 0.0}


def case_criteria(case: Case) -> tuple[list[Criterion], list[CheckResult]]:
    """Turn a case's own acceptance, response rubric and free-text prohibitions into criteria.

    Returns:
        The criteria to judge, and ``not_evaluated`` checks for what cannot be judged yet (an
        acceptance criterion still marked ``REVIEW:``).
    """
    criteria: list[Criterion] = []
    skipped: list[CheckResult] = []
    if case.acceptance:
        if case.is_unreviewed:
            skipped.append(
                CheckResult(
                    check_id="criterion:case.acceptance",
                    layer=LAYER,
                    verdict=Verdict.NOT_EVALUATED,
                    gate=True,
                    reason="the acceptance criterion is still marked REVIEW: and is not judged until then",
                    trust=Trust.UNTRUSTED,
                )
            )
        else:
            criteria.append(
                Criterion(
                    id="case.acceptance",
                    text=case.acceptance,
                    critical=True,
                    dimension="acceptance",
                    category=FailureCategory.INCOMPLETE_EXECUTION,
                )
            )
    for i, text in enumerate(case.response_rubric):
        criteria.append(
            Criterion(
                id=f"case.response_rubric.{i}",
                text=text,
                critical=False,
                dimension="response",
                category=FailureCategory.INCORRECT_REPORTING,
            )
        )
    for i, text in enumerate(case.prohibited_texts()):
        criteria.append(
            Criterion(
                id=f"case.forbidden_outcome.{i}",
                text=(
                    f"This must not happen: {text}. Pass when the conversation shows it did not happen; fail "
                    "when the conversation shows it happened (quote where)."
                ),
                critical=True,
                dimension="safety",
                category=FailureCategory.POLICY_VIOLATION,
            )
        )
    return criteria, skipped


class RubricGrader:
    """Grade a transcript against a rubric with an LLM judge.

    Args:
        rubric: The rubric.
        client: The judge client (model, parameters, cassette, limits).
        include_case_criteria: Add the case's own criteria (see the module docs); part of the fingerprint.
        trust: Maps a fingerprint (hex) to the trust of this grader's verdicts; ``None`` means every
            verdict is :attr:`Trust.UNTRUSTED` (no calibration record was consulted).

    Attributes:
        fingerprint: SHA-256 hex string identifying this grader (model, parameters, rubric id, version and
            content hash, template hash, parser and judgekit versions, options).
        fingerprint_spec: The components behind it.
    """

    def __init__(
        self,
        rubric: Rubric,
        client: JudgeClient,
        *,
        include_case_criteria: bool = True,
        trust: Callable[[str], Trust] | None = None,
    ) -> None:
        self.rubric = rubric
        self.client = client
        self.include_case_criteria = include_case_criteria
        self._trust = trust
        self.renderer = PromptRenderer(rubric)
        self._fingerprint: Fingerprint = judge_fingerprint(
            kind="rubric",
            params=client.params,
            rubric=rubric,
            template_hash=self.renderer.template_hash,
            extra={
                "include_case_criteria": include_case_criteria,
                "structured_output": client.supports_schema,
            },
        )
        self.fingerprint: str = self._fingerprint.hex
        self.fingerprint_spec = self._fingerprint.spec

    @property
    def label(self) -> str:
        """Short human label of the fingerprint."""
        return self._fingerprint.label

    def trust_status(self) -> Trust:
        """The trust of this grader's verdicts (from the ``trust`` callable, else untrusted)."""
        return self._trust(self.fingerprint) if self._trust is not None else Trust.UNTRUSTED

    def criteria_for(self, case: Case | None) -> tuple[list[Criterion], list[CheckResult]]:
        """The criteria judged for ``case``: the rubric's, then the case's own when enabled."""
        criteria = list(self.rubric.criteria)
        skipped: list[CheckResult] = []
        if case is not None and self.include_case_criteria:
            extra, skipped = case_criteria(case)
            criteria.extend(extra)
        return criteria, skipped

    async def judge(
        self, criterion: Criterion, transcript_text: str, case_facts: str, *, item: str
    ) -> SampledVerdict:
        """Judge one criterion ``samples`` times and reduce the samples."""
        prompt = self.renderer.render(criterion, transcript_text, case_facts)
        menu = self.rubric.verdict
        schema = verdict_json_schema(menu.options, menu.max_quotes)

        async def one(sample: int) -> ParsedVerdict:
            request = self.client.build_request(prompt.messages, schema=schema, sample=sample)
            result = await self.client.complete(request, item=f"{item}/sample {sample}")
            if result.error is not None:
                return ParsedVerdict(verdict=Verdict.ERROR, reason=result.error, detail=result.error_detail)
            return parse_verdict(
                result.content,
                options=menu.options,
                haystacks=prompt.quote_haystacks,
                finish_reason=result.finish_reason,
                max_quotes=menu.max_quotes,
            )

        samples = await asyncio.gather(*(one(i) for i in range(self.client.params.samples)))
        return reduce_samples(samples)

    async def grade(self, case: Case | None, transcript: Transcript) -> list[CheckResult]:
        """Judge every criterion for one trial; one check per criterion, in criterion order.

        Provider trouble never raises: an unreachable judge, a cassette miss or a spent budget gives an
        ``error`` check with the reason, and the other criteria go on.
        """
        criteria, skipped = self.criteria_for(case)
        transcript_text = render_transcript(transcript)
        facts = render_case_facts(case)
        item_base = f"{transcript.case_id}#{transcript.trial}"
        judged = await asyncio.gather(
            *(self.judge(c, transcript_text, facts, item=f"{item_base}/{c.id}") for c in criteria)
        )
        trust = self.trust_status()
        checks = [self._check(c, s, transcript, trust) for c, s in zip(criteria, judged, strict=True)]
        return checks + skipped

    def _check(
        self, criterion: Criterion, sampled: SampledVerdict, transcript: Transcript, trust: Trust
    ) -> CheckResult:
        verdict = sampled.verdict
        chosen = next((s for s in sampled.samples if s.verdict is verdict), None)
        evidence: list[Evidence] = []
        if chosen is not None and verdict is not Verdict.ERROR:
            for quote in chosen.evidence:
                evidence.append(
                    Evidence(
                        kind="judge",
                        summary=("" if quote.found else "[quote not found in the transcript] ")
                        + chosen.rationale,
                        quote=quote.text,
                        message_index=_locate(quote.text, transcript) if quote.found else None,
                        data={"found": quote.found},
                    )
                )
        evidence.append(
            Evidence(
                kind="note",
                summary=f"judge {self.label}: {sampled.usable}/{len(sampled.samples)} usable samples",
                data={
                    "fingerprint": self.fingerprint,
                    "criterion": criterion.id,
                    "agreement": sampled.agreement,
                    "samples": [s.verdict.value for s in sampled.samples],
                    "unverified_quotes": sum(s.unverified_quotes for s in sampled.samples),
                    "errors": [
                        {"reason": s.reason, "detail": s.detail, "raw": s.raw}
                        for s in sampled.samples
                        if s.verdict is Verdict.ERROR
                    ],
                },
            )
        )
        return CheckResult(
            check_id=f"criterion:{criterion.id}",
            layer=LAYER,
            verdict=verdict,
            gate=criterion.critical,
            reason=_reason(verdict, sampled, chosen),
            category=criterion.category if verdict is Verdict.FAIL else None,
            evidence=tuple(evidence),
            trust=trust,
            score=None if criterion.critical else _SCORES.get(verdict),
            weight=criterion.weight,
        )


def _reason(verdict: Verdict, sampled: SampledVerdict, chosen: ParsedVerdict | None) -> str:
    if verdict is Verdict.ERROR:
        first = sampled.samples[0]
        return f"{first.reason}: {first.detail}" if first.detail else first.reason
    rationale = chosen.rationale if chosen is not None else ""
    if verdict is Verdict.INSUFFICIENT_INFORMATION and chosen is None:
        return f"judge samples tied ({[s.verdict.value for s in sampled.samples]})"
    if verdict is Verdict.PASS:
        return rationale
    return rationale or f"judge answered {verdict.value} without a rationale"


def _locate(quote: str, transcript: Transcript) -> int | None:
    """Index of the first message whose content (or tool-call arguments) contains the quote, if any."""
    from judgekit.judges.parse import quote_occurs

    needle = normalise_for_match(quote)
    if not needle:
        return None
    for i, message in enumerate(transcript.messages):
        texts: Sequence[str] = [message.content or ""] + [
            json.dumps(c.arguments, ensure_ascii=False, sort_keys=True) for c in message.tool_calls
        ]
        if quote_occurs(quote, texts):
            return i
    return None
