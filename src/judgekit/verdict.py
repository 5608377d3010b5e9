"""Verdict states and the result types every grader layer returns.

The semantics here hold everywhere in judgekit:

* A verdict is one of five explicit states. ``error`` and ``not_evaluated`` are never folded into a pass
  or a fail, never counted as 0.0 or 1.0, and never silently dropped from a denominator.
* Trust is not a verdict: a judge-backed result carries its :class:`Trust` beside its verdict.
* Every failing check says why, with :class:`Evidence` (a structural diff, the offending call and its
  arguments, the quoted text) and one of seven :class:`FailureCategory` values.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
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
    "WrittenFile",
    "combine_gate_verdicts",
    "count_verdicts",
    "deciding_check",
    "evidence_line",
    "explain_check",
    "explain_grade",
    "verdict_reason",
]


class FrozenModel(BaseModel):
    """Base for judgekit's immutable data models: frozen, and unknown fields rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class WrittenFile(FrozenModel):
    """A file a command wrote, as its JSON document lists it.

    Attributes:
        path: Where, as given.
        what: Which file it is (``contamination_key``, ``otlp_logs``, ``label_usage_ledger``, ...).
    """

    path: str
    what: str


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
            failure mode rejected by Holm's correction), and whether the criterion's text was labelled.
        criterion_labelled: Whether the criterion's text (or, asked by id only, its id) was among those
            the calibration record's labels were given on; ``None`` when it cannot be told (no record, a
            record that predates criterion hashes, the judge as a whole, a lookup that does not say).
    """

    trust: Trust
    reason: str = ""
    criterion_labelled: bool | None = None


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

    def why(self) -> str:
        """Why the case has its verdict, in one line, or ``""`` for a pass (:func:`verdict_reason`).

        A failed case: its first failed gate with the evidence; a case the grading contract kept from
        passing (an expectation nobody decided, an untrusted judge): the contract's reason; else the check
        that decided the verdict.
        """
        return verdict_reason(self.verdict, self.reason, self.checks)

    def explain(self, *, max_lines: int = 20, show_passed: bool = True) -> str:
        """This grade as the text a person reads, with the evidence (see :func:`explain_grade`)."""
        return explain_grade(self, max_lines=max_lines, show_passed=show_passed)


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


def evidence_line(evidence: Evidence) -> str:
    """One piece of evidence as one line: the offending call, the first diff row, or the quote.

    Args:
        evidence: The evidence.

    Returns:
        A single line (whitespace collapsed); ``""`` when the evidence carries nothing to show.

    Examples:
        >>> evidence_line(Evidence(kind="diff", summary="collateral changes", data={"lines": ["a/1: added"]}))
        'a/1: added'
        >>> evidence_line(Evidence(kind="judge", summary="claims a refund", quote="I did", message_index=8))
        'claims a refund; quote (message 8): "I did"'
    """
    return "; ".join(_evidence_parts(evidence))


def _evidence_parts(evidence: Evidence) -> list[str]:
    """The parts of :func:`evidence_line`, each one line: what it shows, then its quote."""
    parts: list[str] = []
    data = evidence.data
    rows = data.get("lines") if isinstance(data, dict) else None
    if evidence.kind == "diff" and isinstance(rows, list) and rows:
        more = f" (+{len(rows) - 1} more)" if len(rows) > 1 else ""
        parts.append(f"{rows[0]}{more}")
    elif evidence.summary:
        parts.append(evidence.summary)
    if evidence.quote and evidence.quote not in evidence.summary:
        where = f" (message {evidence.message_index})" if evidence.message_index is not None else ""
        parts.append(f'quote{where}: "{evidence.quote}"')
    return [" ".join(p.split()) for p in parts if p.strip()]


def verdict_reason(verdict: Verdict, reason: str, checks: Sequence[CheckResult]) -> str:
    """Why a trial has its verdict, in one line: the one rule every report, viewer and integration uses.

    A failed trial is explained by its first failed gate (its id, its reason and its first evidence
    that says something), else by its first failed check. A trial the grading contract kept from
    passing (an expectation nobody decided, an untrusted judge) is explained by the contract's reason.
    Otherwise the first gate, then the first check, with the trial's verdict explains it.

    Args:
        verdict: The trial's verdict.
        reason: The grading contract's reason (``Grade.reason`` / ``ResultLine.reason``), may be empty.
        checks: The trial's checks, in grading order.

    Returns:
        One line (whitespace collapsed, never a newline); ``""`` for a pass or when nothing says why.

    Examples:
        >>> rule = CheckResult(check_id="rule:1", layer="rules", verdict=Verdict.FAIL,
        ...     reason="refunded twice",
        ...     evidence=(Evidence(kind="call", summary="call 2: issue_refund(calls=2)", call_index=2),))
        >>> verdict_reason(Verdict.FAIL, "", [rule])
        'rule:1: refunded twice — call 2: issue_refund(calls=2)'
        >>> verdict_reason(Verdict.PASS, "", [])
        ''
    """
    if verdict is Verdict.PASS:
        return ""
    check = deciding_check(verdict, reason, checks)
    if check is not None:
        return _check_line(check)
    return " ".join(reason.split())


def deciding_check(verdict: Verdict, reason: str, checks: Sequence[CheckResult]) -> CheckResult | None:
    """The check :func:`verdict_reason` explains a trial by, or ``None`` when the contract's reason does.

    Args:
        verdict: The trial's verdict.
        reason: The grading contract's reason, may be empty.
        checks: The trial's checks, in grading order.

    Returns:
        For a failed trial its first failed gate (else its first failed check); for another verdict
        ``None`` when ``reason`` is given, else the first gate (then check) with that verdict; ``None``
        for a pass and when no check matches.
    """
    if verdict is Verdict.PASS:
        return None
    if verdict is not Verdict.FAIL and reason.strip():
        return None
    same = [c for c in checks if c.verdict is verdict]
    return next((c for c in same if c.gate), same[0] if same else None)


def _check_line(check: CheckResult) -> str:
    """``check_id: reason — evidence`` for one check.

    The evidence part is what its first evidence that is not a note adds to the reason (nothing when the
    reason already says it).
    """
    reason = " ".join(check.reason.split())
    head = f"{check.check_id}: {reason}" if reason else check.check_id
    for evidence in check.evidence:
        if evidence.kind == "note":
            continue
        new = [p for p in _evidence_parts(evidence) if p.split(" (+")[0] not in reason]
        if new:
            return f"{head} — {'; '.join(new)}"
    return head


# --------------------------------------------------------------------------- explanations

_MARK = {
    Verdict.FAIL: "FAIL",
    Verdict.ERROR: "ERROR",
    Verdict.INSUFFICIENT_INFORMATION: "UNDECIDED",
    Verdict.NOT_EVALUATED: "SKIPPED",
    Verdict.PASS: "PASS",
}


def _short(value: object, limit: int = 200) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _evidence_lines(evidence: Evidence, *, max_lines: int) -> list[str]:
    out: list[str] = []
    if evidence.kind == "call" or evidence.call_index is not None:
        args = "" if evidence.arguments is None else _short(evidence.arguments)
        where = f"call #{evidence.call_index}" if evidence.call_index is not None else "call"
        out.append(f"{where}: {evidence.tool or '?'}({args})")
        if evidence.summary:
            out.append(evidence.summary)
    elif evidence.kind == "diff":
        out.append(evidence.summary)
        data = evidence.data
        lines = data.get("lines") if isinstance(data, dict) else None
        if isinstance(lines, list):
            shown = [str(x) for x in lines[:max_lines]]
            out.extend(f"  {line}" for line in shown)
            if len(lines) > max_lines:
                out.append(f"  ... {len(lines) - max_lines} more line(s)")
    elif evidence.summary:
        out.append(evidence.summary)
    if evidence.quote:
        where = f" (message {evidence.message_index})" if evidence.message_index is not None else ""
        out.append(f'quote{where}: "{evidence.quote}"')
    return out


def explain_check(check: CheckResult, *, max_lines: int = 20) -> str:
    """One check as readable lines: verdict, id, gate and category, reason, then its evidence.

    Args:
        check: The check.
        max_lines: Most diff lines shown per piece of evidence (the rest is counted).

    Returns:
        A first line ``<MARK> <check id> [gate|scored|unscored, category, trust]: <reason>`` (MARK one of
        PASS, FAIL, ERROR, UNDECIDED, SKIPPED; ``unscored``: neither a gate nor scored, weight 0), then one
        indented line per piece of evidence.
    """
    tags = ["gate" if check.gate else "scored" if check.weight > 0 else "unscored"]
    if check.category is not None:
        tags.append(check.category.value)
    if check.trust.value != "not_required":
        tags.append(check.trust.value)
    head = f"{_MARK[check.verdict]} {check.check_id} [{', '.join(tags)}]"
    if check.reason:
        head += f": {check.reason}"
    lines = [head]
    for evidence in check.evidence:
        lines.extend(f"    {line}" for line in _evidence_lines(evidence, max_lines=max_lines))
    return "\n".join(lines)


def explain_grade(grade: Grade, *, max_lines: int = 20, show_passed: bool = True) -> str:
    """A grade as the text a person reads: why the case has its verdict, with the evidence.

    The one explanation every path prints (:meth:`Grade.explain`; the pytest plugin, the Inspect AI scorer
    and the promptfoo assertion show it). Failed gates come first, then errors, undecided checks and
    failed scored checks; passed and skipped checks are listed by id only.

    Args:
        grade: The grade.
        max_lines: Most diff lines shown per piece of evidence (the rest is counted).
        show_passed: List the ids of passed and skipped checks at the end.

    Returns:
        Several lines of text, starting ``case <id> trial <n>: <VERDICT>``, then (unless it passed)
        ``  why: <reason>`` with :func:`verdict_reason`'s one line.

    Examples:
        >>> rule = CheckResult(check_id="rule:no-double-refund", layer="rules", verdict=Verdict.FAIL,
        ...     reason="refunded twice", evidence=(Evidence(kind="call", summary="second refund",
        ...     call_index=3, tool="refund", arguments={"order": "7"}),))
        >>> print(Grade(case_id="refund-1", trial=1, verdict=Verdict.FAIL, checks=(rule,)).explain())
        case refund-1 trial 1: FAIL
          why: rule:no-double-refund: refunded twice — second refund
          FAIL rule:no-double-refund [gate]: refunded twice
              call #3: refund({"order": "7"})
              second refund
    """
    quality = "" if grade.quality is None else f" (quality {grade.quality:.2f})"
    lines = [f"case {grade.case_id} trial {grade.trial}: {grade.verdict.value.upper()}{quality}"]
    why = grade.why()  # the one-line reason every report, viewer and integration shows
    if why:
        lines.append(f"  why: {why}")
    counted = grade.metadata.get("untrusted_verdicts")
    if counted:
        lines.append(
            f"  untrusted: {len(counted)} verdict(s) counted from a judge no calibration record trusts "
            f"({', '.join(counted)}; --untrusted {grade.metadata.get('untrusted_policy')})"
        )
    order = (Verdict.FAIL, Verdict.ERROR, Verdict.INSUFFICIENT_INFORMATION)
    shown = sorted(
        (c for c in grade.checks if c.verdict in order),
        key=lambda c: (not c.gate, order.index(c.verdict)),
    )
    lines.extend("  " + explain_check(c, max_lines=max_lines).replace("\n", "\n  ") for c in shown)
    if show_passed:
        passed = [c.check_id for c in grade.checks if c.verdict is Verdict.PASS]
        skipped = [c.check_id for c in grade.checks if c.verdict is Verdict.NOT_EVALUATED]
        if passed:
            lines.append("  passed: " + ", ".join(passed))
        if skipped:
            lines.append("  not evaluated: " + ", ".join(skipped))
    return "\n".join(lines)
