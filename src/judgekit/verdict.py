"""Verdict states and the result types every grader layer returns.

The semantics here hold everywhere in judgekit:

* A verdict is one of five explicit states. ``error`` and ``not_evaluated`` are never folded into a pass
  or a fail, never counted as 0.0 or 1.0, and never silently dropped from a denominator.
* Trust is not a verdict: a judge-backed result carries its :class:`Trust` beside its verdict.
* Every failing check says why, with :class:`Evidence` (a structural diff, the offending call and its
  arguments, the quoted text) and one of seven :class:`FailureCategory` values.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue

__all__ = [
    "CheckResult",
    "Evidence",
    "FailureCategory",
    "FrozenModel",
    "Grade",
    "Trust",
    "TrustDecision",
    "Verdict",
    "combine_gate_verdicts",
    "count_verdicts",
]


class FrozenModel(BaseModel):
    """Base for judgekit's immutable data models: frozen, and unknown fields rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Verdict(StrEnum):
    """The outcome of one check, one layer or one whole case.

    Attributes:
        PASS: The check ran and the evidence satisfies it.
        FAIL: The check ran and the evidence violates it.
        INSUFFICIENT_INFORMATION: The check ran but the evidence does not decide it (a judge said so, or
            the transcript lacks what the check needs, such as a lossy trace).
        ERROR: The check could not run: judge unreachable, unparseable reply, bad configuration, a
            runtime type error in a rule. Never a pass, never a fail.
        NOT_EVALUATED: The layer is absent from the case, or was skipped on purpose.
    """

    PASS = "pass"
    FAIL = "fail"
    INSUFFICIENT_INFORMATION = "insufficient_information"
    ERROR = "error"
    NOT_EVALUATED = "not_evaluated"


class Trust(StrEnum):
    """Whether a judge-backed verdict may be believed.

    Attributes:
        TRUSTED: A calibration record that passed the trust policy exists for the grader's exact
            fingerprint.
        UNTRUSTED: The grader is judge-backed and no passing calibration record matches its fingerprint
            (including any grader whose model, template, rubric or parameters changed).
        NOT_REQUIRED: The result comes from a deterministic check; trust does not apply.
    """

    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"
    NOT_REQUIRED = "not_required"


class TrustDecision(FrozenModel):
    """Whether one judge-backed verdict may be believed, and why.

    Produced by the one trust function (:meth:`judgekit.calibration.trust.TrustBook.decide`) for a
    fingerprint and a criterion; carried by the check it applies to.

    Attributes:
        trust: The trust status.
        reason: Why, in one line a person can read: which calibration record trusts the fingerprint, or
            what is missing or withdrew the trust (no record, a failed record, a BIASED probe report, a
            failure mode rejected by Holm's correction).
    """

    trust: Trust
    reason: str = ""


class FailureCategory(StrEnum):
    """Why a case failed, in the seven categories that turn failures into a repair queue."""

    MISUNDERSTOOD_GOAL = "misunderstood_goal"
    WRONG_TOOL = "wrong_tool"
    INVALID_ARGUMENTS = "invalid_arguments"
    UNAVAILABLE_DATA = "unavailable_data"
    POLICY_VIOLATION = "policy_violation"
    INCOMPLETE_EXECUTION = "incomplete_execution"
    INCORRECT_REPORTING = "incorrect_reporting"


class Evidence(FrozenModel):
    """What a check saw that decided its verdict.

    Attributes:
        kind: What sort of evidence this is: ``diff`` (a structural state diff), ``call`` (one tool
            call), ``text`` (quoted message text), ``judge`` (a judge's quote and rationale) or ``note``.
        summary: One line a person can read in a report.
        call_index: 0-based position of the offending tool call in the transcript, when relevant.
        tool: The tool's name, when relevant.
        arguments: The call's parsed arguments, when relevant.
        quote: Quoted text (from an assistant message, or a judge's evidence quote).
        message_index: 0-based position of the quoted message in the transcript.
        data: Structured detail, such as a serialised state diff.
    """

    kind: str
    summary: str
    call_index: int | None = None
    tool: str | None = None
    arguments: dict[str, JsonValue] | None = None
    quote: str | None = None
    message_index: int | None = None
    data: JsonValue = None


class CheckResult(FrozenModel):
    """The result of one check inside one grader layer.

    Attributes:
        check_id: Stable identifier of the check within its case (``state``, ``rule:0``,
            ``route``, ``criterion:honest_reporting``).
        layer: The layer that produced it, a :class:`judgekit.graders.contract.Layer` value (``state``,
            ``rules``, ``route``, ``text``, ``grounding``, ``rubric``, ``fixture``, ...); a user's own
            grading function may name another, which the contract then does not restrict.
        verdict: The check's verdict.
        gate: True when a ``fail`` here fails the whole case whatever the quality score.
        reason: Why the verdict is what it is; required for every verdict other than ``pass``.
        category: The failure category, for ``fail`` verdicts.
        evidence: What the check saw.
        trust: Trust status of the verdict (``not_required`` for deterministic checks).
        trust_reason: Why the trust is what it is (empty for deterministic checks).
        score: Optional quality score in [0, 1] for scored (non-gating) checks; ``None`` when the
            check is not scored or did not produce a usable verdict.
        weight: Weight of ``score`` in the case's quality score (>= 0).
    """

    check_id: str
    layer: str
    verdict: Verdict
    gate: bool = True
    reason: str = ""
    category: FailureCategory | None = None
    evidence: tuple[Evidence, ...] = ()
    trust: Trust = Trust.NOT_REQUIRED
    trust_reason: str = ""
    score: float | None = Field(default=None, ge=0.0, le=1.0)
    weight: float = Field(default=1.0, ge=0.0)


class Grade(FrozenModel):
    """The graded result of one trial of one case.

    Attributes:
        case_id: The case graded.
        trial: The trial number (1-based) of the transcript graded.
        verdict: The case verdict decided by the gates (see :func:`combine_gate_verdicts`) and by the
            grading contract: a case whose stated expectations were not all decided is never ``pass``.
        reason: Why the case verdict is what it is when it is not ``pass`` and no single check says so
            (an expectation nobody checked, a judge not trusted); empty otherwise.
        quality: Weighted mean of the scored checks in [0, 1], or ``None`` when nothing was scored.
            It never changes ``verdict``.
        checks: Every check's result, gates and scored checks alike.
        metadata: Free-form information the grader recorded (fingerprints, timings).
    """

    case_id: str
    trial: int
    verdict: Verdict
    reason: str = ""
    quality: float | None = None
    checks: tuple[CheckResult, ...] = ()
    metadata: dict[str, Any] = Field(default_factory=dict)

    def counts(self) -> dict[Verdict, int]:
        """Count this grade's checks by verdict state (every state present, zero when absent)."""
        return count_verdicts(c.verdict for c in self.checks)


def count_verdicts(verdicts: Any) -> dict[Verdict, int]:
    """Count verdicts by state.

    Args:
        verdicts: Any iterable of :class:`Verdict`.

    Returns:
        A mapping with every :class:`Verdict` state as a key (zero when absent), so that reports can
        show each state's count and no state is silently dropped.
    """
    out = dict.fromkeys(Verdict, 0)
    for v in verdicts:
        out[Verdict(v)] += 1
    return out


def combine_gate_verdicts(verdicts: list[Verdict]) -> Verdict:
    """Combine the verdicts of a case's gating checks into the case verdict.

    The order of precedence is ``fail`` > ``error`` > ``insufficient_information`` > ``pass``:
    a single failed gate fails the case (a failure is certain even if another check errored); an
    error anywhere else makes the case ``error`` (it could not be decided, never a pass); a gate that
    could not be decided leaves the case ``insufficient_information``. ``not_evaluated`` gates are
    ignored; when every gate is ``not_evaluated`` (or there are none) the case is ``not_evaluated``.

    Args:
        verdicts: The verdicts of the gating checks.

    Returns:
        The case verdict.
    """
    present = set(verdicts) - {Verdict.NOT_EVALUATED}
    for state in (Verdict.FAIL, Verdict.ERROR, Verdict.INSUFFICIENT_INFORMATION, Verdict.PASS):
        if state in present:
            return state
    return Verdict.NOT_EVALUATED
