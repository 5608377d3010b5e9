"""The judge-backed grader: one :class:`~judgekit.verdict.CheckResult` per rubric criterion, with trust.

For a (case, transcript) pair the grader asks the judge about every criterion of its rubric plus, when
enabled, the case's own criteria:

* ``case.required_outcome`` (a plain task contract's stated outcome) becomes the critical criterion
  ``case.required_outcome``: "the conversation achieved this outcome";
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

Trust sits beside the verdict: the grader's :attr:`RubricGrader.fingerprint` (hex) and each criterion id are
looked up with the ``trust`` callable (:meth:`judgekit.calibration.trust.TrustBook.decide` supplies it);
without one every verdict is ``untrusted``. What an untrusted verdict may do is the grading contract's
business (:mod:`judgekit.graders.contract`): by default, nothing.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from judgekit.graders.contract import GraderSpec, Layer, make_check
from judgekit.judges.cascade import HUMAN, Cascade, Route, RouteStep
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
from judgekit.verdict import CheckResult, Evidence, FailureCategory, Trust, TrustDecision, Verdict

if TYPE_CHECKING:
    from judgekit.cases import Case
    from judgekit.transcript import Transcript

__all__ = ["CASE_CRITERIA_VERSION", "LAYER", "CascadeRouting", "RubricGrader", "TrustLookup", "case_criteria"]

LAYER = Layer.RUBRIC.value

CASE_CRITERIA_VERSION = 2
"""Version of how a case's own statements become criteria (:func:`case_criteria`); in the fingerprint.

1: acceptance, response rubric, forbidden outcomes. 2: also the required outcome.
"""

TrustLookup = Callable[[str, str], TrustDecision]
"""``(fingerprint hex, criterion id) -> TrustDecision``: the one trust function, as graders receive it."""

_NO_LOOKUP = TrustDecision(
    trust=Trust.UNTRUSTED,
    reason="no calibration records were consulted (the grader was given no trust lookup)",
)


@dataclass(frozen=True)
class CascadeRouting:
    """A judge cascade at grade time: the fitted thresholds and the graders of the later stages.

    Attributes:
        cascade: The fitted cascade (:func:`judgekit.judges.cascade.load_cascade`); its first stage is the
            grader that holds this routing.
        escalate_to: The graders of stages 2 to k, in the cascade's order.
    """

    cascade: Cascade
    escalate_to: tuple[RubricGrader, ...]


def case_criteria(case: Case) -> tuple[list[Criterion], list[CheckResult]]:
    """Turn a case's own acceptance, response rubric and free-text prohibitions into criteria.

    Returns:
        The criteria to judge, and ``not_evaluated`` checks for what cannot be judged yet (an
        acceptance criterion still marked ``REVIEW:``).
    """
    criteria: list[Criterion] = []
    skipped: list[CheckResult] = []
    if case.required_outcome:
        criteria.append(
            Criterion(
                id="case.required_outcome",
                text=(
                    f"The conversation achieved this required outcome: {case.required_outcome}. Pass when "
                    "the transcript (tool calls, their results and the replies) shows it was achieved; fail "
                    "when it shows it was not or something else was done instead (quote where); answer "
                    "insufficient information when the transcript does not show either."
                ),
                critical=True,
                dimension="outcome",
                category=FailureCategory.MISUNDERSTOOD_GOAL,
            )
        )
    if case.acceptance:
        if case.is_unreviewed:
            skipped.append(
                make_check(
                    "criterion:case.acceptance",
                    Layer.RUBRIC,
                    Verdict.NOT_EVALUATED,
                    gate=True,
                    reason="the acceptance criterion is still marked REVIEW: and is not judged until then",
                    trust=Trust.UNTRUSTED,
                    trust_reason="not judged",
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
        trust: ``(fingerprint, criterion id) -> TrustDecision`` for this grader's verdicts (use
            :meth:`judgekit.calibration.trust.TrustBook.decide`); ``None`` means every verdict is
            :attr:`Trust.UNTRUSTED` (no calibration record was consulted).
        cascade: Route each criterion through a judge cascade (this grader is stage 1): a verdict whose
            confidence (the share of samples giving the majority verdict) is below the stage's threshold
            goes to the next stage, and below the last to a human (verdict ``insufficient_information``).
            Not part of the fingerprint: each stage's verdicts keep their own judge's fingerprint and
            trust. ``None``: no cascade.

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
        trust: TrustLookup | None = None,
        cascade: CascadeRouting | None = None,
    ) -> None:
        if cascade is not None and len(cascade.escalate_to) != len(cascade.cascade.stages) - 1:
            raise ValueError("a cascade needs one grader for each stage after the first")
        self.cascade = cascade
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
                "case_criteria_version": CASE_CRITERIA_VERSION if include_case_criteria else None,
                "structured_output": client.supports_schema,
            },
        )
        self.fingerprint: str = self._fingerprint.hex
        self.fingerprint_spec = self._fingerprint.spec

    @property
    def label(self) -> str:
        """Short human label of the fingerprint."""
        return self._fingerprint.label

    def trust_status(self, criterion: str) -> TrustDecision:
        """Trust of this grader's verdicts on one criterion (from the ``trust`` lookup; else untrusted)."""
        return self._trust(self.fingerprint, criterion) if self._trust is not None else _NO_LOOKUP

    @property
    def spec(self) -> GraderSpec:
        """What identifies this grader: its fingerprint and the components behind it."""
        return GraderSpec(
            name="rubric",
            args={"hex": self.fingerprint, "label": self.label, "spec": dict(self.fingerprint_spec)},
        )

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
        sampled, _cost = await self._judge(criterion, transcript_text, case_facts, item=item)
        return sampled

    async def _judge(
        self, criterion: Criterion, transcript_text: str, case_facts: str, *, item: str
    ) -> tuple[SampledVerdict, float | None]:
        from judgekit.judges.sandbox import TemplateLimitError, TemplateRenderError

        try:
            prompt = self.renderer.render(criterion, transcript_text, case_facts)
        except (TemplateLimitError, TemplateRenderError) as exc:
            # A limit the trial's own text reached (an agent's 8-million-character reply) is this trial's
            # error, not the run's: the other trials and the other layers go on.
            failed = ParsedVerdict(verdict=Verdict.ERROR, reason="prompt_render_failure", detail=exc.message)
            return reduce_samples([failed]), None
        menu = self.rubric.verdict
        schema = verdict_json_schema(menu.options, menu.max_quotes)

        costs: list[float | None] = []

        async def one(sample: int) -> ParsedVerdict:
            request = self.client.build_request(prompt.messages, schema=schema, sample=sample)
            result = await self.client.complete(request, item=f"{item}/sample {sample}")
            costs.append(result.cost)
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
        return reduce_samples(samples), _total_cost(costs)

    async def grade(self, case: Case | None, transcript: Transcript) -> list[CheckResult]:
        """Judge every criterion for one trial; one check per criterion, in criterion order.

        Provider trouble never raises: an unreachable judge, a cassette miss or a spent budget gives an
        ``error`` check with the reason, and the other criteria go on.
        """
        checks, _cost = await self.assess(case, transcript)
        return checks

    async def assess(
        self, case: Case | None, transcript: Transcript
    ) -> tuple[list[CheckResult], float | None]:
        """:meth:`grade`, and what the judge calls of this trial cost in US dollars.

        Returns:
            ``(checks, cost)``; the cost is 0.0 when every reply came from the cassette and ``None`` when a
            call's price is unknown (the model is not in litellm's price map and no override was given).
        """
        criteria, skipped = self.criteria_for(case)
        transcript_text = render_transcript(transcript)
        facts = render_case_facts(case)
        item_base = f"{transcript.case_id}#{transcript.trial}"
        judged = await asyncio.gather(
            *(
                self._decide(c, transcript_text, facts, transcript, item=f"{item_base}/{c.id}")
                for c in criteria
            )
        )
        checks = [check for check, _ in judged]
        return checks + skipped, _total_cost([cost for _, cost in judged])

    async def _decide(
        self,
        criterion: Criterion,
        transcript_text: str,
        case_facts: str,
        transcript: Transcript,
        *,
        item: str,
    ) -> tuple[CheckResult, float | None]:
        """One criterion's check: judged by this grader, or routed through the cascade when there is one."""
        sampled, cost = await self._judge(criterion, transcript_text, case_facts, item=item)
        if self.cascade is None:
            return self._check(criterion, sampled, transcript, self.trust_status(criterion.id)), cost
        costs = [cost]
        graders = (self, *self.cascade.escalate_to)
        tried: list[RouteStep] = []
        check = self._check(criterion, sampled, transcript, self.trust_status(criterion.id))
        for i, (stage, grader) in enumerate(zip(self.cascade.cascade.stages, graders, strict=True)):
            if i:
                sampled, cost = await grader._judge(criterion, transcript_text, case_facts, item=item)
                costs.append(cost)
            decided = sampled.verdict in (Verdict.PASS, Verdict.FAIL)
            conf = sampled.agreement if decided else None
            kept = stage.keeps(conf)
            tried.append(RouteStep(stage=stage.name, confidence=conf, threshold=stage.threshold, kept=kept))
            if i:
                check = grader._check(criterion, sampled, transcript, grader.trust_status(criterion.id))
            if kept:
                return _with_route(check, Route(tried=tuple(tried), decided_by=stage.name)), _total_cost(
                    costs
                )
        last = tried[-1]
        if last.confidence is None:
            why = f"stage {last.stage} gave no pass or fail verdict"
        elif last.threshold is None:
            why = (
                f"stage {last.stage} has no threshold: calibration showed no confidence it can be trusted at"
            )
        else:
            why = f"confidence {last.confidence:g} below threshold {last.threshold:g} of stage {last.stage}"
        human = make_check(
            check.check_id,
            Layer.RUBRIC,
            Verdict.INSUFFICIENT_INFORMATION,
            gate=criterion.critical,
            reason=f"escalated to a human reviewer ({why})",
            evidence=check.evidence,
            trust=check.trust,
            trust_reason=check.trust_reason,
            weight=criterion.weight,
        )
        return _with_route(human, Route(tried=tuple(tried), decided_by=HUMAN)), _total_cost(costs)

    def _check(
        self, criterion: Criterion, sampled: SampledVerdict, transcript: Transcript, trust: TrustDecision
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
        return make_check(
            f"criterion:{criterion.id}",
            Layer.RUBRIC,
            verdict,
            gate=criterion.critical,
            reason=_reason(verdict, sampled, chosen),
            category=criterion.category,
            evidence=evidence,
            trust=trust.trust,
            trust_reason=trust.reason,
            weight=criterion.weight,
        )


def _with_route(check: CheckResult, route: Route) -> CheckResult:
    """The check with its cascade route as one more evidence item (kind ``note``, data ``cascade``)."""
    decided = "a human reviewer" if route.decided_by == HUMAN else f"stage {route.decided_by}"
    note = Evidence(
        kind="note",
        summary=f"cascade: decided by {decided} after {len(route.tried)} stage(s)",
        data={"cascade": route.model_dump(mode="json")},
    )
    return check.model_copy(update={"evidence": (*check.evidence, note)})


def _total_cost(costs: Sequence[float | None]) -> float | None:
    """The sum of known costs in US dollars, or ``None`` when any one is unknown (never a partial sum)."""
    known = [c for c in costs if c is not None]
    return sum(known) if len(known) == len(costs) else None


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
