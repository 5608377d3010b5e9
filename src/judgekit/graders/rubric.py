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
without one every verdict is ``untrusted``. A lookup that also takes the criterion's text
(:class:`TextTrustLookup`, as a ``TrustBook`` does) is given the text the judge read, so each check's trust
reason says whether that text was labelled in calibration; the judge note records the text's hash
(``criterion_text``) and that answer (``criterion_labelled``: true, false, or null when unknown). What an
untrusted verdict may do is the grading contract's business (:mod:`judgekit.graders.contract`): by default,
nothing.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from pydantic import JsonValue

from judgekit.graders.contract import GraderSpec, Layer, make_check
from judgekit.judges.cascade import HUMAN, Cascade, Route, RouteStep
from judgekit.judges.client import CallResult, JudgeClient
from judgekit.judges.fingerprint import Fingerprint, composite_fingerprint, judge_fingerprint
from judgekit.judges.jury import Jury, aggregate
from judgekit.judges.parse import (
    ParsedVerdict,
    SampledVerdict,
    normalise_for_match,
    parse_verdict,
    reduce_samples,
    verdict_json_schema,
)
from judgekit.judges.prompt import (
    PromptRenderer,
    RenderedPrompt,
    TrialData,
    render_case_facts,
    render_transcript,
)
from judgekit.judges.rubric import Criterion, Rubric
from judgekit.verdict import CheckResult, Evidence, FailureCategory, Trust, TrustDecision, Verdict

if TYPE_CHECKING:
    from judgekit.cases import Case
    from judgekit.transcript import Transcript

__all__ = [
    "CASE_CRITERIA_VERSION",
    "LAYER",
    "CascadeRouting",
    "JudgmentCost",
    "JuryPanel",
    "RubricGrader",
    "TextTrustLookup",
    "TrustLookup",
    "case_criteria",
]

LAYER = Layer.RUBRIC.value

CASE_CRITERIA_VERSION = 2
"""Version of how a case's own statements become criteria (:func:`case_criteria`); in the fingerprint.

1: acceptance, response rubric, forbidden outcomes. 2: also the required outcome.
"""

TrustLookup = Callable[[str, str], TrustDecision]
"""``(fingerprint hex, criterion id) -> TrustDecision``: the one trust function, as graders receive it."""


@runtime_checkable
class TextTrustLookup(Protocol):
    """A trust lookup also told the criterion's text (a :class:`~judgekit.calibration.trust.TrustBook`).

    A grader whose ``trust=`` has this method asks it instead of calling it, so the decision can say
    whether the text the judge read was labelled in calibration.
    """

    def __call__(self, fingerprint: str, criterion: str, /) -> TrustDecision:
        """The decision for a criterion id (as :data:`TrustLookup`)."""
        ...

    def decide_text(self, fingerprint: str, criterion: str, text: str) -> TrustDecision:
        """The decision for a criterion id and the text the judge read."""
        ...


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


@dataclass(frozen=True)
class JuryPanel:
    """A jury at grade time: its declared aggregation and the graders of its other members.

    Attributes:
        jury: The jury (:func:`judgekit.judges.jury.load_jury`); its first member is the grader that holds
            this panel.
        others: The graders of members 2 to n, in the jury's order.
    """

    jury: Jury
    others: tuple[RubricGrader, ...]


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
            The cascade enters the fingerprint: :attr:`fingerprint` then names every stage's own
            fingerprint, its threshold and the cascade's target, delta and confidence, and every verdict
            of the cascade is trusted under it. ``None``: no cascade.
        jury: Judge each criterion by a jury (this grader is member 1): every member is asked, and the
            jury's declared aggregation gives the verdict (:func:`judgekit.judges.jury.aggregate`). The
            jury enters the fingerprint as a cascade does (members' fingerprints, the aggregation and the
            weights). ``None``: no jury. A grader cannot have both.

    Attributes:
        fingerprint: SHA-256 hex string identifying this grader (model, parameters, rubric id, version and
            content hash, template hash, parser and judgekit versions, options); with a cascade or a jury,
            the composite fingerprint of the whole panel
            (:func:`judgekit.judges.fingerprint.composite_fingerprint`).
        fingerprint_spec: The components behind it.
        own_fingerprint: This judge's fingerprint alone (equal to :attr:`fingerprint` without a cascade or
            a jury): what a cascade stage or a jury member contributes to the panel's fingerprint.
    """

    def __init__(
        self,
        rubric: Rubric,
        client: JudgeClient,
        *,
        include_case_criteria: bool = True,
        trust: TrustLookup | None = None,
        cascade: CascadeRouting | None = None,
        jury: JuryPanel | None = None,
    ) -> None:
        if cascade is not None and len(cascade.escalate_to) != len(cascade.cascade.stages) - 1:
            raise ValueError("a cascade needs one grader for each stage after the first")
        if jury is not None and len(jury.others) != len(jury.jury.members) - 1:
            raise ValueError("a jury needs one grader for each member after the first")
        if jury is not None and cascade is not None:
            raise ValueError("a grader routes through a cascade or asks a jury, not both")
        self.cascade = cascade
        self.jury = jury
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
        self.own_fingerprint: str = self._fingerprint.hex
        if cascade is not None:
            self._fingerprint = self._panel(
                "cascade",
                [(s.name, {"threshold": s.threshold}) for s in cascade.cascade.stages],
                cascade.escalate_to,
                {
                    "target": cascade.cascade.target,
                    "delta": cascade.cascade.delta,
                    "confidence": cascade.cascade.confidence,
                },
            )
        if jury is not None:
            self._fingerprint = self._panel(
                "jury",
                [(m.name, {"weight": m.weight}) for m in jury.jury.members],
                jury.others,
                {"aggregation": jury.jury.aggregation},
            )
        self.fingerprint: str = self._fingerprint.hex
        self.fingerprint_spec = self._fingerprint.spec

    def _panel(
        self,
        kind: str,
        roles: list[tuple[str, dict[str, JsonValue]]],
        others: Sequence[RubricGrader],
        rule: dict[str, JsonValue],
    ) -> Fingerprint:
        """The composite fingerprint of this judge and ``others`` deciding together (a cascade or a jury).

        Args:
            kind: ``cascade`` or ``jury``.
            roles: Each judge's name and what the rule gives it (a threshold, a weight), this judge first.
            others: The other judges, in order.
            rule: The combining rule's settings.
        """
        graders = (self, *others)
        parts: list[dict[str, object]] = [
            {"name": name, "model": g.client.params.model, "fingerprint": g.own_fingerprint, **given}
            for (name, given), g in zip(roles, graders, strict=True)
        ]
        return composite_fingerprint(kind=kind, parts=parts, rubric=self.rubric, rule=dict(rule))

    @property
    def label(self) -> str:
        """Short human label of the fingerprint."""
        return self._fingerprint.label

    @property
    def trust(self) -> TrustLookup | None:
        """The trust lookup deciding this grader's verdicts (``None``: every verdict untrusted)."""
        return self._trust

    def retrust(self, trust: TrustLookup | None) -> None:
        """Decide this grader's verdicts with another trust lookup from now on.

        A drift canary check at the start of ``judgekit grade`` writes to the records folder; the run then
        reads the folder again so that a withdrawal applies to its own verdicts.
        """
        self._trust = trust

    def trust_status(self, criterion: str | Criterion) -> TrustDecision:
        """Trust of this grader's verdicts on one criterion (from the ``trust`` lookup; else untrusted).

        Args:
            criterion: The criterion id, or the criterion itself: then a :class:`TextTrustLookup` is also
                given its text.
        """
        if self._trust is None:
            return _NO_LOOKUP
        if isinstance(criterion, str):
            return self._trust(self.fingerprint, criterion)
        if isinstance(self._trust, TextTrustLookup):
            return self._trust.decide_text(self.fingerprint, criterion.id, criterion.text)
        return self._trust(self.fingerprint, criterion.id)

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

    def verdict_of(self, result: CallResult, prompt: RenderedPrompt) -> ParsedVerdict:
        """The verdict of one judge call on ``prompt``: its reply parsed against the rubric's verdict menu.

        A call that failed (``result.error``) is an ``error`` verdict with the call's reason and detail.
        """
        if result.error is not None:
            return ParsedVerdict(verdict=Verdict.ERROR, reason=result.error, detail=result.error_detail)
        menu = self.rubric.verdict
        return parse_verdict(
            result.content,
            options=menu.options,
            haystacks=prompt.quote_haystacks,
            finish_reason=result.finish_reason,
            max_quotes=menu.max_quotes,
        )

    async def judge(
        self, criterion: Criterion, transcript_text: str, case_facts: str, *, item: str
    ) -> SampledVerdict:
        """Judge one criterion ``samples`` times and reduce the samples."""
        sampled, _cost = await self._judge(criterion, TrialData.of(transcript_text, case_facts), item=item)
        return sampled

    async def rejudge(
        self, criterion: Criterion, transcript_text: str, case_facts: str, *, item: str
    ) -> tuple[SampledVerdict, JudgmentCost]:
        """Ask the judge again, never from the cassette: a drift canary's re-asked question.

        The request is rendered and sampled exactly as :meth:`judge` does; every sample goes to the
        provider and nothing is recorded.

        Returns:
            The reduced samples and what the calls cost.

        Raises:
            JudgekitError: In replay mode, which never calls the model (exit code 2).
        """
        async with self.client.admission():
            return await self._judge_admitted(
                criterion, TrialData.of(transcript_text, case_facts), item=item, fresh=True
            )

    async def _judge(
        self, criterion: Criterion, trial: TrialData, *, item: str
    ) -> tuple[SampledVerdict, JudgmentCost]:
        # render a few judgments ahead of the free request slots, not all of them before the first call
        async with self.client.admission():
            return await self._judge_admitted(criterion, trial, item=item)

    async def _judge_admitted(
        self, criterion: Criterion, trial: TrialData, *, item: str, fresh: bool = False
    ) -> tuple[SampledVerdict, JudgmentCost]:
        from judgekit.judges.sandbox import TemplateLimitError, TemplateRenderError

        try:
            prompt = self.renderer.render_trial(criterion, trial)
        except (TemplateLimitError, TemplateRenderError) as exc:
            # A limit the trial's own text reached (an agent's 8-million-character reply) is this trial's
            # error, not the run's: the other trials and the other layers go on.
            failed = ParsedVerdict(verdict=Verdict.ERROR, reason="prompt_render_failure", detail=exc.message)
            return reduce_samples([failed]), JudgmentCost()
        menu = self.rubric.verdict
        schema = verdict_json_schema(menu.options, menu.max_quotes)

        costs: list[JudgmentCost] = []

        async def one(sample: int) -> ParsedVerdict:
            request = self.client.build_request(prompt.messages, schema=schema, sample=sample)
            result = await self.client.complete(
                request, item=f"{item}/sample {sample}", cache_breaks=prompt.cache_breaks, fresh=fresh
            )
            costs.append(JudgmentCost.of_call(result))
            return self.verdict_of(result, prompt)

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
    ) -> tuple[list[CheckResult], JudgmentCost]:
        """:meth:`grade`, and what the judge calls of this trial cost.

        Returns:
            ``(checks, cost)``; the cost's ``usd`` is 0.0 when every reply came from the cassette and
            ``None`` when a call's price is unknown (the model is not in litellm's price map and no
            override was given), with ``unknown_reason`` saying so.
        """
        criteria, skipped = self.criteria_for(case)
        # built once for the trial and shared by every criterion's prompt (and by every cascade stage);
        # released when this trial's judgments are done
        trial = TrialData.of(render_transcript(transcript), render_case_facts(case))
        item_base = f"{transcript.case_id}#{transcript.trial}"
        judged = await asyncio.gather(
            *(self._decide(c, trial, transcript, item=f"{item_base}/{c.id}") for c in criteria)
        )
        checks = [check for check, _ in judged]
        return checks + skipped, _total_cost([cost for _, cost in judged])

    async def _decide(
        self,
        criterion: Criterion,
        trial: TrialData,
        transcript: Transcript,
        *,
        item: str,
    ) -> tuple[CheckResult, JudgmentCost]:
        """One criterion's check: judged by this grader, or routed through the cascade when there is one.

        The check's judge note (the ``note`` evidence with ``fingerprint``) carries ``data.cost``: what
        every call made for this criterion cost, over samples and cascade stages.
        """
        if self.jury is not None:
            return await self._decide_by_jury(self.jury, criterion, trial, transcript, item=item)
        sampled, cost = await self._judge(criterion, trial, item=item)
        trust = self.trust_status(criterion)  # a cascade's verdicts are trusted under its own fingerprint
        if self.cascade is None:
            check = self._check(criterion, sampled, transcript, trust)
            return _with_cost(check, cost), cost
        costs = [cost]
        graders = (self, *self.cascade.escalate_to)
        tried: list[RouteStep] = []
        check = self._check(criterion, sampled, transcript, trust, panel=self)
        for i, (stage, grader) in enumerate(zip(self.cascade.cascade.stages, graders, strict=True)):
            if i:
                sampled, cost = await grader._judge(criterion, trial, item=item)
                costs.append(cost)
            decided = sampled.verdict in (Verdict.PASS, Verdict.FAIL)
            conf = sampled.agreement if decided else None
            kept = stage.keeps(conf)
            tried.append(RouteStep(stage=stage.name, confidence=conf, threshold=stage.threshold, kept=kept))
            if i:
                check = grader._check(criterion, sampled, transcript, trust, panel=self)
            if kept:
                total = _total_cost(costs)
                routed = _with_route(check, Route(tried=tuple(tried), decided_by=stage.name))
                return _with_cost(routed, total), total
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
        total = _total_cost(costs)
        return _with_cost(_with_route(human, Route(tried=tuple(tried), decided_by=HUMAN)), total), total

    async def _decide_by_jury(
        self, panel: JuryPanel, criterion: Criterion, trial: TrialData, transcript: Transcript, *, item: str
    ) -> tuple[CheckResult, JudgmentCost]:
        """One criterion's check by the jury: every member judges it, the aggregation decides.

        The check carries the quotes of the members whose verdict is the jury's, and one judge note under
        the jury's fingerprint whose ``jury`` data lists each member's name, own fingerprint, verdict,
        sample agreement and reason; ``agreement`` is the share of members giving the jury's verdict.
        """
        members = panel.jury.members
        graders = (self, *panel.others)
        judged = await asyncio.gather(
            *(
                g._judge(criterion, trial, item=f"{item}/{m.name}")
                for m, g in zip(members, graders, strict=True)
            )
        )
        verdict = aggregate(panel.jury, [sampled.verdict for sampled, _ in judged])
        trust = self.trust_status(criterion)
        checks = [
            g._check(criterion, sampled, transcript, trust, panel=self)
            for g, (sampled, _) in zip(graders, judged, strict=True)
        ]
        votes = ", ".join(f"{m.name}: {c.verdict.value}" for m, c in zip(members, checks, strict=True))
        reasons = [c.reason for c in checks if c.verdict is verdict and c.reason]
        quotes = [e for c in checks if c.verdict is verdict for e in c.evidence if e.kind == "judge"]
        agreeing = sum(c.verdict is verdict for c in checks)
        note = Evidence(
            kind="note",
            summary=f"jury {self.label} ({panel.jury.aggregation}): {votes}",
            data={
                "fingerprint": self.fingerprint,
                "criterion": criterion.id,
                "criterion_text": criterion.text_hash,
                "criterion_labelled": trust.criterion_labelled,
                "agreement": agreeing / len(members),
                "samples": [c.verdict.value for c in checks],
                "unverified_quotes": sum(s.unverified_quotes for one, _ in judged for s in one.samples),
                "errors": [
                    {"member": m.name, "reason": s.reason, "detail": s.detail, "raw": s.raw}
                    for m, (sampled, _) in zip(members, judged, strict=True)
                    for s in sampled.samples
                    if s.verdict is Verdict.ERROR
                ],
                "jury": {
                    "aggregation": panel.jury.aggregation,
                    "members": [
                        {
                            "name": m.name,
                            "fingerprint": g.own_fingerprint,
                            "verdict": c.verdict.value,
                            "agreement": sampled.agreement,
                            "weight": m.weight,
                            "reason": c.reason,
                        }
                        for m, g, c, (sampled, _) in zip(members, graders, checks, judged, strict=True)
                    ],
                },
            },
        )
        if verdict is Verdict.INSUFFICIENT_INFORMATION:
            reason = f"the jury did not reach a verdict by {panel.jury.aggregation} ({votes})"
        elif verdict is Verdict.ERROR:
            reason = f"members in error could have changed the jury's verdict ({votes})"
        else:
            reason = f"jury {verdict.value} by {panel.jury.aggregation} ({votes})" + (
                f": {reasons[0]}" if reasons else ""
            )
        check = make_check(
            f"criterion:{criterion.id}",
            Layer.RUBRIC,
            verdict,
            gate=criterion.critical,
            reason=reason,
            category=criterion.category,
            evidence=[*quotes, note],
            trust=trust.trust,
            trust_reason=trust.reason,
            weight=criterion.weight,
        )
        total = _total_cost([cost for _, cost in judged])
        return _with_cost(check, total), total

    def _check(
        self,
        criterion: Criterion,
        sampled: SampledVerdict,
        transcript: Transcript,
        trust: TrustDecision,
        *,
        panel: RubricGrader | None = None,
    ) -> CheckResult:
        """One judge's check of one criterion.

        With ``panel`` (the cascade or jury this judge sits in) its note names the panel's fingerprint
        (what the verdict is trusted and calibrated under) and this judge's own as ``judge_fingerprint``.
        """
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
        owner = panel if panel is not None else self
        evidence.append(
            Evidence(
                kind="note",
                summary=f"judge {owner.label}: {sampled.usable}/{len(sampled.samples)} usable samples",
                data={
                    "fingerprint": owner.fingerprint,
                    **({"judge_fingerprint": self.own_fingerprint} if panel is not None else {}),
                    "criterion": criterion.id,
                    "criterion_text": criterion.text_hash,
                    "criterion_labelled": trust.criterion_labelled,
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


@dataclass(frozen=True)
class JudgmentCost:
    """What judge calls cost: tokens, US dollars, and why the dollars are unknown when they are.

    Attributes:
        calls: Judge replies counted (provider replies and replayed ones; failed calls are not counted:
            they report no usage).
        prompt_tokens: Prompt tokens of those replies (a replayed reply's as recorded in the cassette).
        completion_tokens: Completion tokens of those replies.
        usd: Cost in US dollars of those replies; 0.0 for replies replayed from the cassette (they cost
            nothing now) and when no call was made; ``None`` when any reply's price is unknown (never a
            partial sum).
        unknown_reason: Why ``usd`` is ``None`` (``litellm has no price for model ...``); else ``None``.
        replayed: How many of ``calls`` came from the cassette.
        cached_tokens: How many of ``prompt_tokens`` the provider read from its prompt cache (billed at
            its cached rate, which ``usd`` already reflects when litellm prices the model); 0 when the
            provider reported none (a replayed reply's as recorded).
        batched: How many of ``calls`` a provider batch answered (``judgekit grade --batch``); their
            ``usd`` is the batch price. In :meth:`as_data` only when not 0.
        served_models: The distinct models the replies said served them (their ``model`` field), in the
            order first seen, a refused reply's (another model than the one requested) included; empty
            when none said (a provider that sends none, a cassette recorded before judgekit kept it).
            Written beside ``cost`` in the judge note (``served_models``), not inside it.
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usd: float | None = 0.0
    unknown_reason: str | None = None
    replayed: int = 0
    cached_tokens: int = 0
    batched: int = 0
    served_models: tuple[str, ...] = ()

    @classmethod
    def of_call(cls, result: CallResult) -> JudgmentCost:
        """The cost of one call's result (a failed call counts nothing: no reply, no usage)."""
        served = (result.served_model,) if result.served_model is not None else ()
        if result.error is not None:
            return cls(served_models=served)
        reason = (
            None if result.cost is not None else result.cost_unknown_reason or "the judge reply has no cost"
        )
        return cls(
            1,
            result.prompt_tokens,
            result.completion_tokens,
            result.cost,
            reason,
            int(result.cached),
            result.cached_tokens,
            int(result.batch_id is not None),
            served,
        )

    def as_data(self) -> dict[str, JsonValue]:
        """A JSON-ready copy (the ``cost`` of a judge note's data)."""
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "usd": self.usd,
            "unknown_reason": self.unknown_reason,
            "replayed": self.replayed,
            "cached_tokens": self.cached_tokens,
            **({"batched": self.batched} if self.batched else {}),
        }


def _total_cost(costs: Sequence[JudgmentCost]) -> JudgmentCost:
    """The sum of ``costs``: tokens and calls add; the dollars are unknown when any one is (never partial)."""
    unknown = next((c.unknown_reason or "unknown cost" for c in costs if c.usd is None), None)
    return JudgmentCost(
        calls=sum(c.calls for c in costs),
        prompt_tokens=sum(c.prompt_tokens for c in costs),
        completion_tokens=sum(c.completion_tokens for c in costs),
        usd=None if unknown is not None else sum(c.usd or 0.0 for c in costs),
        unknown_reason=unknown,
        replayed=sum(c.replayed for c in costs),
        cached_tokens=sum(c.cached_tokens for c in costs),
        batched=sum(c.batched for c in costs),
        served_models=tuple(dict.fromkeys(m for c in costs for m in c.served_models)),
    )


def _with_cost(check: CheckResult, cost: JudgmentCost) -> CheckResult:
    """The check with ``cost`` in the data of its judge note (the ``note`` evidence with ``fingerprint``).

    Beside it, ``served_models``: the models the replies said served them (a list, maybe empty).
    """
    evidence = list(check.evidence)
    for i, item in enumerate(evidence):
        if item.kind == "note" and isinstance(item.data, dict) and "fingerprint" in item.data:
            data = {**item.data, "cost": cost.as_data(), "served_models": list(cost.served_models)}
            evidence[i] = item.model_copy(update={"data": data})
            break
    return check.model_copy(update={"evidence": tuple(evidence)})


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
