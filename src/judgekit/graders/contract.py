"""The grading contract: the layers, what each needs, what a case states, and when a case may pass.

This module is the one place where judgekit says what a verdict means. Every grading path (the runner
behind ``judgekit grade``, the demo, the pytest plugin, Inspect AI, promptfoo, tau-bench, the Python API)
goes through :func:`settle` via :func:`judgekit.graders.layered.combine`, so none can answer differently.

* **Layers** (:class:`LayerInfo`, the core names in :class:`Layer`): each says what it needs from a
  transcript (:class:`~judgekit.transcript.Capability`) and whether it is bookkeeping (its pass proves
  nothing about the agent). Which layers exist, in which order, is the layer registry's
  (:mod:`judgekit.graders.registry`); a trial imported from a lossy trace is graded only by the layers
  whose needs it records (:func:`judgekit.graders.registry.restrict_to_supported`).
* **Expectations** (:func:`stated_expectations`): everything a case states it expects (expected state,
  required outcome, acceptance, forbidden rules and outcomes, expected route, must / must-not mention,
  per-turn texts, expected sources when grounding is on) maps to the checks that decide it.
* **The rule** (:func:`settle`): a case is ``pass`` only when its gates pass *and* every expectation it
  states was decided by at least one check. An expectation with no decided check makes the case
  ``insufficient_information`` (something was decided, not everything) or ``not_evaluated`` (nothing
  was), with a reason naming the expectation and what would decide it. A failed gate still fails the
  case: a failure is certain whatever else is missing.
* **Untrusted judges** (:data:`UntrustedPolicy`): by default (``withhold``) a judge-backed verdict without
  a calibration record trusting its exact fingerprint counts as ``insufficient_information``: the judge
  ran and answered, but its answer is not yet evidence anyone may believe, so the case is neither
  ``pass`` nor ``fail`` on its account.
* **Checks** are built by :func:`make_check`, which owns the gate/score rule (a gate has no score; a
  scored check scores 1.0 for ``pass``, 0.0 for ``fail`` and ``None`` otherwise).
* **Specs** (:class:`GraderSpec`): every grader, deterministic ones included, has a spec and a
  fingerprint; result lines record it, and a changed grader is a different grader.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from pydantic import Field, JsonValue

from judgekit.advice import current_advice
from judgekit.errors import JudgekitError
from judgekit.transcript import Capability
from judgekit.verdict import (
    CheckResult,
    Evidence,
    FailureCategory,
    FrozenModel,
    Grade,
    Trust,
    Verdict,
    effective_verdict,
)

if TYPE_CHECKING:
    from judgekit.cases import Case
    from judgekit.transcript import Transcript

__all__ = [
    "CONTRACT_VERSION",
    "UNLABELLED_POLICIES",
    "UNTRUSTED_POLICIES",
    "Expectation",
    "ExpectationKind",
    "Grader",
    "GraderSpec",
    "Layer",
    "LayerInfo",
    "Settlement",
    "UnlabelledPolicy",
    "UntrustedPolicy",
    "describe_layer",
    "effective_verdict",
    "first_few",
    "layer_spec",
    "make_check",
    "not_evaluated",
    "settle",
    "stated_expectations",
    "unlabelled_policy",
]

CONTRACT_VERSION = 2
"""Version of the grading contract (what a pass means); part of every grader's fingerprint.

1: gates alone decided the verdict. 2: every stated expectation must be decided, untrusted judges
withheld by default.
"""


# --------------------------------------------------------------------------- layers


class Layer(StrEnum):
    """The names of judgekit's core layers: the kinds of check a :class:`~judgekit.verdict.CheckResult` is.

    ``CheckResult.layer`` holds a layer's name: one of these, or the name of a layer registered from
    outside the core (tau-bench's reward conditions, verdicts stored by an imported harness, a user's
    own layer; see :func:`judgekit.graders.registry.register_layer`). The registry describes each
    (:func:`judgekit.graders.registry.layer_info`).
    """

    STATE = "state"
    RULES = "rules"
    ROUTE = "route"
    TEXT = "text"
    GROUNDING = "grounding"
    RUBRIC = "rubric"
    FIXTURE = "fixture"
    CASE = "case"
    REFERENCE = "reference"
    RUNNER = "runner"


@dataclass(frozen=True)
class LayerInfo:
    """What a layer is and needs.

    Attributes:
        name: The layer's name, as checks record it in ``CheckResult.layer`` (``state``, ``tau-bench``):
            unique among the registered layers, without commas.
        needs: What the transcript must record faithfully for the layer's pass or fail to count.
        bookkeeping: True when a pass of this layer says nothing about the agent's work (the trial started
            from the right fixture; the transcript belongs to the case); a case whose only decided checks
            are bookkeeping never passes.
        judge_backed: True when an LLM judge decides the layer's checks (their trust matters).
        version: Version of the layer's semantics (>= 1); part of its spec and fingerprint.
        summary: One line for documentation and reports.
        optional: True when the layer runs only in a grading that asks for it by name, with its
            arguments (grounding with its mode, tau-bench with its reward version); False when it runs in
            every grading.
    """

    name: str
    needs: frozenset[Capability]
    bookkeeping: bool
    judge_backed: bool
    version: int
    summary: str
    optional: bool = False


def describe_layer(
    name: str,
    needs: Iterable[Capability],
    summary: str,
    *,
    bookkeeping: bool = False,
    judge: bool = False,
    optional: bool = False,
    version: int = 1,
) -> LayerInfo:
    """A :class:`LayerInfo` (what every layer file declares about its layer).

    Example:
        >>> info = describe_layer("text", (Capability.ASSISTANT_TEXT,), "must-mention texts")
        >>> info.needs == {Capability.ASSISTANT_TEXT}, info.optional
        (True, False)
    """
    return LayerInfo(name, frozenset(needs), bookkeeping, judge, version, summary, optional)


# --------------------------------------------------------------------------- checks

_SCORES = {Verdict.PASS: 1.0, Verdict.FAIL: 0.0}


def first_few(items: Sequence[str], shown: int = 5) -> str:
    """The first ``shown`` of ``items`` joined by ``; ``, with ``; ...`` after them when there are more.

    A failed check's reason lists its problems this way; an empty ``items`` gives ``""``.
    """
    return "; ".join(items[:shown]) + ("; ..." if len(items) > shown else "")


def make_check(
    check_id: str,
    layer: str,
    verdict: Verdict,
    *,
    gate: bool,
    reason: str = "",
    category: FailureCategory | None = None,
    evidence: Iterable[Evidence] = (),
    trust: Trust = Trust.NOT_REQUIRED,
    trust_reason: str = "",
    weight: float = 1.0,
) -> CheckResult:
    """Build a check; the gate/score rule lives here and nowhere else.

    A gate carries no score (its ``fail`` fails the case; quality never buys it back). A scored check
    scores 1.0 for ``pass``, 0.0 for ``fail`` and ``None`` for every other verdict: an error or an undecided
    check is never counted as 0 or 1. ``category`` is kept only on a ``fail``.

    Example:
        >>> make_check("text:must_mention:0", Layer.TEXT, Verdict.FAIL, gate=False).score
        0.0
        >>> make_check("rule:0", Layer.RULES, Verdict.FAIL, gate=True).score is None
        True
    """
    return CheckResult(
        check_id=check_id,
        layer=str(layer),
        verdict=verdict,
        gate=gate,
        reason=reason,
        category=category if verdict is Verdict.FAIL else None,
        evidence=tuple(evidence),
        trust=trust,
        trust_reason=trust_reason,
        score=None if gate else _SCORES.get(verdict),
        weight=weight,
    )


def not_evaluated(check_id: str, layer: str, reason: str, *, gate: bool = True) -> CheckResult:
    """The one check a layer reports when the case gives it nothing to check."""
    return make_check(check_id, layer, Verdict.NOT_EVALUATED, gate=gate, reason=reason)


# --------------------------------------------------------------------------- untrusted judges

UntrustedPolicy = Literal["withhold", "count", "fail_only", "advisory"]
"""What a verdict of an untrusted judge may do to the case verdict.

* ``withhold`` (the default): it counts as ``insufficient_information``; the case is neither ``pass`` nor
  ``fail`` on its account, and an expectation only that judge decides stays undecided.
* ``count``: it counts as it is (an explicit opt-in); every output counts such verdicts.
* ``fail_only``: its ``fail`` counts, its ``pass`` counts as ``insufficient_information``.
* ``advisory``: it counts as ``not_evaluated`` (shown, never deciding).
"""

UNTRUSTED_POLICIES: tuple[str, ...] = ("withhold", "count", "fail_only", "advisory")
"""Every :data:`UntrustedPolicy`, the default first."""

UnlabelledPolicy = Literal["count", "withhold"]
"""What a judge's verdict on a criterion text its calibration never labelled may do: ``count`` (the default:
it keeps the judge's trust; reports count such verdicts) or ``withhold`` (it is untrusted, so the untrusted
policy decides what it does: by default nothing)."""

UNLABELLED_POLICIES: tuple[str, ...] = ("count", "withhold")
"""Every :data:`UnlabelledPolicy`, the default first."""


def unlabelled_policy(policy: object) -> UnlabelledPolicy:
    """``policy`` checked against :data:`UNLABELLED_POLICIES` (the setting ``unlabelled_criteria``).

    Raises:
        JudgekitError: When it is another value (exit code 2, naming the allowed ones).
    """
    if policy in {"count", "withhold"}:
        return "count" if policy == "count" else "withhold"
    raise JudgekitError(
        f"unlabelled_criteria (--unlabelled-criteria) must be one of {', '.join(UNLABELLED_POLICIES)} "
        f"(got {policy!r})",
        exit_code=2,
    )


# effective_verdict (the verdict a check contributes under a policy) lives in judgekit.verdict, beside the
# failed-gates list every report reads, and is offered here under its old name.


# --------------------------------------------------------------------------- expectations


class ExpectationKind(StrEnum):
    """The kinds of expectation a case can state."""

    EXPECTED_STATE = "expected_state"
    FORBIDDEN_RULE = "forbidden_rule"
    EXPECTED_ROUTE = "expected_route"
    MUST_MENTION = "must_mention"
    MUST_NOT_MENTION = "must_not_mention"
    TURN_TEXT = "turn_text"
    REQUIRED_OUTCOME = "required_outcome"
    ACCEPTANCE = "acceptance"
    FORBIDDEN_OUTCOME = "forbidden_outcome"
    EXPECTED_SOURCE = "expected_source"


@dataclass(frozen=True)
class Expectation:
    """One thing a case states it expects, and the checks that decide it.

    Attributes:
        kind: What sort of expectation it is.
        key: Unique within the case (``must_mention:0``, ``forbidden_rule:2``, ``expected_state``).
        label: One line a person reads ("must mention 'refund issued'").
        check_ids: The ids of the checks that decide it; it is decided when at least one of them is
            present and every one present has an effective ``pass`` or ``fail``.
        layer: The layer whose checks decide it.
        decided_by: What would decide it when nothing did ("give the transcript a final_state").
    """

    kind: ExpectationKind
    key: str
    label: str
    check_ids: frozenset[str]
    layer: Layer
    decided_by: str


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _mention_label(item: object) -> str:
    pattern = getattr(item, "pattern", None)
    if isinstance(pattern, str):
        return f"/{pattern}/"
    text = getattr(item, "text", item)
    return repr(_short(str(text), 60))


def stated_expectations(case: Case, *, grounding: bool = False) -> tuple[Expectation, ...]:
    """Every expectation a case states, each with the checks that decide it.

    Args:
        case: The case.
        grounding: Whether grounding is on for this grading (only then are expected sources an
            expectation: with it off, nobody promised to check them).

    Returns:
        The expectations in a stable order. A case that states none can never pass.
    """
    out: list[Expectation] = []
    judge_hint = f"give a judge ({current_advice().judge}) whose calibration record trusts its fingerprint"

    def add(
        kind: ExpectationKind, key: str, label: str, ids: Iterable[str], *, layer: Layer, hint: str
    ) -> None:
        out.append(Expectation(kind, key, label, frozenset(ids), layer, hint))

    if case.expected_state is not None:
        add(
            ExpectationKind.EXPECTED_STATE,
            "expected_state",
            "the expected end state",
            ("state", "state:collateral"),
            layer=Layer.STATE,
            hint="give the transcript its final_state (and the case or transcript an initial_state)",
        )
    for i, rule in enumerate(case.rules()):
        add(
            ExpectationKind.FORBIDDEN_RULE,
            f"forbidden_rule:{i}",
            f"forbidden rule {i}" + (f" ({_short(rule.description)})" if rule.description else ""),
            (f"rule:{i}",),
            layer=Layer.RULES,
            hint="fix the rule's error (see its check) so the rules layer can decide it",
        )
    expected = case.expected
    if expected is not None and expected.route is not None:
        add(
            ExpectationKind.EXPECTED_ROUTE,
            "expected_route",
            "the expected route",
            ("route", "route:max_calls", "route:confirmation"),
            layer=Layer.ROUTE,
            hint="record the trial's tool calls",
        )
    if expected is not None:
        for kind, items in (
            (ExpectationKind.MUST_MENTION, expected.must_mention),
            (ExpectationKind.MUST_NOT_MENTION, expected.must_not_mention),
        ):
            for i, item in enumerate(items):
                add(
                    kind,
                    f"{kind}:{i}",
                    f"{kind.replace('_', ' ')} {_mention_label(item)}",
                    (f"text:{kind}:{i}",),
                    layer=Layer.TEXT,
                    hint="record the assistant's messages",
                )
        if grounding:
            for source in dict.fromkeys(expected.sources):
                add(
                    ExpectationKind.EXPECTED_SOURCE,
                    f"expected_source:{source}",
                    f"expected source {source}",
                    (f"grounding:{source}",),
                    layer=Layer.GROUNDING,
                    hint="record the tool results and the replies",
                )
    for t, turn in enumerate(case.turns):
        for i, item in enumerate(turn.expect_contains):
            add(
                ExpectationKind.TURN_TEXT,
                f"turn_text:{t}:{i}",
                f"turn {t} must contain {_mention_label(item)}",
                (f"text:turn:{t}:{i}",),
                layer=Layer.TEXT,
                hint="record the assistant's messages",
            )
    if case.required_outcome:
        add(
            ExpectationKind.REQUIRED_OUTCOME,
            "required_outcome",
            f"required outcome ({_short(case.required_outcome)})",
            ("criterion:case.required_outcome",),
            layer=Layer.RUBRIC,
            hint=judge_hint,
        )
    if case.acceptance:
        add(
            ExpectationKind.ACCEPTANCE,
            "acceptance",
            f"acceptance ({_short(case.acceptance)})",
            ("criterion:case.acceptance",),
            layer=Layer.RUBRIC,
            hint=judge_hint
            if not case.is_unreviewed
            else "review the acceptance criterion (it is still marked REVIEW:), then give a trusted judge",
        )
    for i, text in enumerate(case.prohibited_texts()):
        add(
            ExpectationKind.FORBIDDEN_OUTCOME,
            f"forbidden_outcome:{i}",
            f"forbidden outcome ({_short(text)})",
            (f"criterion:case.forbidden_outcome.{i}",),
            layer=Layer.RUBRIC,
            hint=judge_hint,
        )
    return tuple(out)


# --------------------------------------------------------------------------- settling a case


class Settlement(FrozenModel):
    """How the contract settled one trial.

    Attributes:
        verdict: The case verdict.
        reason: Why, when the contract (not a single failed check) decided it; empty otherwise.
        undecided: The keys of the expectations no check decided, in order.
        decided: How many of the case's expectations were decided.
        stated: How many expectations the case states.
    """

    verdict: Verdict
    reason: str = ""
    undecided: tuple[str, ...] = ()
    decided: int = 0
    stated: int = 0


def _untrusted_answer(found: Sequence[tuple[CheckResult, Verdict]]) -> CheckResult | None:
    """The untrusted judge check that kept an expectation undecided, if that is why."""
    check = next(
        (c for c, v in found if v not in (Verdict.PASS, Verdict.FAIL)), found[0][0] if found else None
    )
    if check is not None and check.trust is Trust.UNTRUSTED and check.verdict in (Verdict.PASS, Verdict.FAIL):
        return check
    return None


def _why_undecided(expectation: Expectation, found: Sequence[tuple[CheckResult, Verdict]]) -> str:
    if not found:
        return f"{expectation.label} not checked: {expectation.decided_by}"
    check, verdict = next(((c, v) for c, v in found if v not in (Verdict.PASS, Verdict.FAIL)), found[0])
    detail = f": {check.reason}" if check.reason else ""
    return f"{expectation.label} not decided ({check.check_id} is {verdict.value}{detail})"


def _untrusted_reasons(withheld: Sequence[tuple[str, CheckResult]]) -> list[str]:
    """One sentence per distinct trust reason, naming every expectation or gate it kept undecided."""
    by_reason: dict[str, list[tuple[str, CheckResult]]] = {}
    for label, check in withheld:
        why = check.trust_reason or "no calibration record trusts its fingerprint"
        by_reason.setdefault(why, []).append((label, check))
    out: list[str] = []
    count_untrusted = current_advice().count_untrusted
    for why, items in by_reason.items():
        answers = "/".join(sorted({c.verdict.value for _, c in items}))
        labels = ", ".join(label for label, _ in items)
        out.append(
            f"{labels} not decided: the judge answered {answers} but is untrusted ({why}); calibrate it, or "
            f"opt in with {count_untrusted}"
        )
    return out


def settle(
    gate_verdict: Verdict,
    expectations: Sequence[Expectation],
    checks: Sequence[CheckResult],
    *,
    untrusted: UntrustedPolicy,
) -> Settlement:
    """Apply the contract: a case passes only when its gates pass and every stated expectation was decided.

    Args:
        gate_verdict: The verdict of the gates alone (:func:`~judgekit.verdict.combine_gate_verdicts` over
            the effective gate verdicts).
        expectations: What the case states (:func:`stated_expectations`).
        checks: Every check of the trial.
        untrusted: The untrusted-judge policy in force (see :func:`effective_verdict`).

    Returns:
        The settlement. ``fail``, ``error`` and ``insufficient_information`` from the gates stand (the
        latter two with the undecided expectations and withheld judge gates as the reason). Otherwise:
        a case stating no expectation is ``not_evaluated``; a case with an undecided expectation is
        ``insufficient_information`` when another expectation was decided and ``not_evaluated`` when none
        was; a case whose every expectation was decided keeps the gates' ``pass``.
    """
    by_id: dict[str, list[CheckResult]] = {}
    for check in checks:
        by_id.setdefault(check.check_id, []).append(check)
    undecided: list[tuple[Expectation, str | None]] = []
    withheld: list[tuple[str, CheckResult]] = []
    decided = 0
    for expectation in expectations:
        found = [
            (c, effective_verdict(c, untrusted))
            for i in sorted(expectation.check_ids)
            for c in by_id.get(i, ())
        ]
        if found and all(v in (Verdict.PASS, Verdict.FAIL) for _, v in found):
            decided += 1
            continue
        judge = _untrusted_answer(found)
        if judge is not None:
            withheld.append((expectation.label, judge))
            undecided.append((expectation, None))
        else:
            undecided.append((expectation, _why_undecided(expectation, found)))
    stated = len(expectations)
    keys = tuple(e.key for e, _ in undecided)
    covered = {i for e, _ in undecided for i in e.check_ids}
    withheld.extend(
        (c.check_id, c)
        for c in checks
        if c.gate
        and c.check_id not in covered
        and c.trust is Trust.UNTRUSTED
        and c.verdict in (Verdict.PASS, Verdict.FAIL)
        and effective_verdict(c, untrusted) is not c.verdict
    )
    reasons = [why for _, why in undecided if why is not None] + _untrusted_reasons(withheld)
    if gate_verdict is Verdict.FAIL:
        return Settlement(verdict=gate_verdict, undecided=keys, decided=decided, stated=stated)
    if gate_verdict in (Verdict.ERROR, Verdict.INSUFFICIENT_INFORMATION):
        return Settlement(
            verdict=gate_verdict, reason="; ".join(reasons), undecided=keys, decided=decided, stated=stated
        )
    if not expectations:
        return Settlement(
            verdict=Verdict.NOT_EVALUATED,
            reason="the case states no expectation a grader can check (no expected_state, required_outcome, "
            "acceptance, forbidden rules or outcomes, expected route or texts), so it cannot pass",
            stated=0,
        )
    if undecided:
        verdict = Verdict.INSUFFICIENT_INFORMATION if decided else Verdict.NOT_EVALUATED
        return Settlement(
            verdict=verdict,
            reason="; ".join(reasons),
            undecided=keys,
            decided=decided,
            stated=stated,
        )
    return Settlement(verdict=Verdict.PASS, decided=decided, stated=stated)


# --------------------------------------------------------------------------- specs and the grader protocol


class GraderSpec(FrozenModel):
    """What identifies a grader: enough to re-create it, and what its fingerprint hashes.

    Attributes:
        name: The grader's kind (``layered``, ``state``, ``rubric``, ``function:module.name``).
        version: Version of its semantics.
        args: Its arguments (JSON values).
        parts: The graders it is made of (a layered grader's layers, a judge's spec).
    """

    name: str
    version: int = 1
    args: dict[str, JsonValue] = Field(default_factory=dict)
    parts: tuple[GraderSpec, ...] = ()

    @property
    def fingerprint(self) -> str:
        """SHA-256 hex of the canonical JSON of the spec: equal specs, equal fingerprints."""
        text = json.dumps(
            self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def record(self) -> dict[str, JsonValue]:
        """The form recorded in result lines: ``{"fingerprint": hex, "spec": {...}}``."""
        return {"fingerprint": self.fingerprint, "spec": self.model_dump(mode="json")}


def layer_spec(info: LayerInfo, **args: JsonValue) -> GraderSpec:
    """The spec of one deterministic layer: its name, its version and the arguments it runs with."""
    return GraderSpec(name=info.name, version=info.version, args=dict(args))


@runtime_checkable
class Grader(Protocol):
    """Anything that grades one trial: the one grader interface of every path.

    ``spec`` identifies the grader (recorded in result lines; a changed spec is a changed grader). ``grade``
    never raises for expected problems: they are verdicts (``error`` with a reason).
    """

    @property
    def spec(self) -> GraderSpec:
        """What identifies this grader."""
        ...

    async def grade(self, case: Case, transcript: Transcript) -> Grade:
        """Grade one trial."""
        ...
