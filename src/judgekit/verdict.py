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
    "GATE_SEVERITY",
    "REASON_SEPARATOR",
    "CheckResult",
    "Evidence",
    "FailureCategory",
    "FrozenModel",
    "GateFinding",
    "Grade",
    "Trust",
    "TrustDecision",
    "Verdict",
    "WrittenFile",
    "combine_gate_verdicts",
    "count_verdicts",
    "deciding_check",
    "deciding_gate",
    "effective_verdict",
    "evidence_line",
    "explain_check",
    "explain_grade",
    "failed_gates",
    "reason_parts",
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

        The grading contract's reason when it gave one (an expectation nobody decided, an untrusted
        judge), then every gate that did not pass with its evidence (:meth:`failed_gates`), those that
        decided the verdict first.
        """
        return verdict_reason(self.verdict, self.reason, self.checks, untrusted=self.untrusted_policy)

    @property
    def untrusted_policy(self) -> str | None:
        """The untrusted-judge policy the grade was made under (``metadata``); ``None`` when not recorded."""
        policy = self.metadata.get("untrusted_policy")
        return policy if isinstance(policy, str) else None

    def failed_gates(self) -> tuple[GateFinding, ...]:
        """Every gate of this grade that did not pass, with its evidence (see :func:`failed_gates`)."""
        return failed_gates(self.verdict, self.reason, self.checks, untrusted=self.untrusted_policy)

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


GATE_SEVERITY: tuple[Verdict, ...] = (Verdict.FAIL, Verdict.ERROR, Verdict.INSUFFICIENT_INFORMATION)
"""The states of a gate that did not pass, most severe first: :func:`combine_gate_verdicts`'s precedence."""

_RANK = {state: i for i, state in enumerate(GATE_SEVERITY)}

_WORDS = {
    Verdict.PASS: "pass",
    Verdict.FAIL: "fail",
    Verdict.ERROR: "error",
    Verdict.INSUFFICIENT_INFORMATION: "insufficient information",
    Verdict.NOT_EVALUATED: "not evaluated",
}

REASON_SEPARATOR = " | "
"""What joins the parts of a trial's one-line reason (:func:`verdict_reason`)."""


def effective_verdict(check: CheckResult, policy: str | None) -> Verdict:
    """The verdict a check contributes to its case under an untrusted-judge policy.

    Checks that are not ``untrusted`` (deterministic checks, trusted judges) contribute their verdict
    unchanged, and so does every ``error``, ``not_evaluated`` or ``insufficient_information``. An
    untrusted ``pass`` or ``fail`` counts as it is under ``count``, as ``not_evaluated`` under
    ``advisory``, a ``fail`` as itself under ``fail_only``, and otherwise (``withhold``, the default, and
    ``None``: no policy recorded) as ``insufficient_information``
    (:data:`judgekit.graders.contract.UntrustedPolicy`).
    """
    if check.trust is not Trust.UNTRUSTED or check.verdict not in (Verdict.PASS, Verdict.FAIL):
        return check.verdict
    if policy == "count":
        return check.verdict
    if policy == "advisory":
        return Verdict.NOT_EVALUATED
    if policy == "fail_only" and check.verdict is Verdict.FAIL:
        return Verdict.FAIL
    return Verdict.INSUFFICIENT_INFORMATION


class GateFinding(FrozenModel):
    """One gate of a trial that did not pass, with its own evidence: an entry of :func:`failed_gates`.

    Attributes:
        check_id: The check's id (``state``, ``rule:0``, ``criterion:honest_reporting``).
        layer: Its layer.
        verdict: Its verdict as recorded: ``fail``, ``error`` or ``insufficient_information`` (or the
            trial's verdict, for the one check that explains a trial no gate that did not pass does).
        counted_as: The verdict it contributed to the case (:func:`effective_verdict`): its own, except for
            an untrusted judge's ``pass`` or ``fail`` under the untrusted-judge policy in force.
        gate: True for a gate; False only for a scored check that explains a trial no gate does.
        decided: True when this check decided the trial's verdict: it counted as the trial's verdict, the
            most severe state among the gates (:func:`combine_gate_verdicts`: any one failed gate fails
            the case, so every failed gate of a failed trial decided it). False for a gate of lower
            severity (an error beside a failure, an untrusted judge's withheld answer).
        category: Its failure category, or ``None``.
        trust: Its trust status (``not_required`` for deterministic checks).
        reason: Its reason, whitespace collapsed (``""`` when it recorded none).
        evidence: One line per piece of its evidence that adds to the reason (the offending call, the
            first diff row, the quote; :func:`evidence_line`), notes left out; may be empty.
        line: The entry in one line, as every report shows it: ``<check id>: <reason> — <evidence>``, with
            ``(<verdict>, did not decide)`` after the id when it did not decide the verdict, and what it
            counted as for an untrusted judge.
    """

    check_id: str
    layer: str
    verdict: Verdict
    counted_as: Verdict
    gate: bool = True
    decided: bool
    category: FailureCategory | None = None
    trust: Trust = Trust.NOT_REQUIRED
    reason: str = ""
    evidence: tuple[str, ...] = ()
    line: str


def failed_gates(
    verdict: Verdict, reason: str, checks: Sequence[CheckResult], *, untrusted: str | None = None
) -> tuple[GateFinding, ...]:
    """Every gate of a trial that did not pass, each with its own evidence: the one list every report shows.

    A gate is listed when its recorded verdict is ``fail``, ``error`` or ``insufficient_information``. The
    order is the gates' severity (:data:`GATE_SEVERITY`, by the verdict each counted as), then the
    grading order, which is the layer registry's (``state``, ``rules``, ``route``, ``text``, ``fixture``,
    ``grounding``, registered layers, the judge's criteria last). The gates that decided the verdict
    therefore come first. When no gate that did not pass has the trial's verdict and the contract gave
    no reason, the first gate with that verdict (a ``not_evaluated`` trial's skipped gate), else the first
    scored check with it, explains the trial and is listed first, as deciding.

    Args:
        verdict: The trial's verdict.
        reason: The grading contract's reason (``Grade.reason`` / ``ResultLine.reason``), may be empty.
        checks: The trial's checks, in grading order.
        untrusted: The untrusted-judge policy the trial was graded under (``withhold``, ``count``,
            ``fail_only``, ``advisory``); ``None`` (not recorded) reads as ``withhold``, the default.

    Returns:
        The findings; empty for a pass and when no gate did not pass.

    Examples:
        >>> state = CheckResult(check_id="state", layer="state", verdict=Verdict.FAIL, reason="1 row differs")
        >>> rule = CheckResult(check_id="rule:0", layer="rules", verdict=Verdict.FAIL, reason="refill twice")
        >>> [(g.check_id, g.decided) for g in failed_gates(Verdict.FAIL, "", [state, rule])]
        [('state', True), ('rule:0', True)]
    """
    return tuple(_finding(c, v, decided=d) for c, v, d in _not_passed(verdict, reason, checks, untrusted))


def _contract_explains(verdict: Verdict, reason: str) -> bool:
    """Whether the grading contract's reason, not a check, explains a trial: an undecided one that has it."""
    return verdict is not Verdict.FAIL and bool(reason.strip())


def _not_passed(
    verdict: Verdict, reason: str, checks: Sequence[CheckResult], untrusted: str | None
) -> list[tuple[CheckResult, Verdict, bool]]:
    """:func:`failed_gates`' checks in its order, each with what it counted as and whether it decided."""
    if verdict is Verdict.PASS:
        return []
    listed = [(c, effective_verdict(c, untrusted)) for c in checks if c.gate and c.verdict in GATE_SEVERITY]
    if not any(v is verdict for _, v in listed) and not _contract_explains(verdict, reason):
        same = [(c, v) for c in checks if (v := effective_verdict(c, untrusted)) is verdict]
        explainer = next((cv for cv in same if cv[0].gate), same[0] if same else None)
        if explainer is not None:
            listed.append(explainer)
    listed.sort(key=lambda cv: (cv[1] is not verdict, _RANK.get(cv[1], len(_RANK))))
    return [(c, v, v is verdict) for c, v in listed]


def _finding(check: CheckResult, counted_as: Verdict, *, decided: bool) -> GateFinding:
    """One :class:`GateFinding`: its evidence lines and its one line."""
    reason = " ".join(check.reason.split())
    evidence: list[str] = []
    for item in check.evidence:
        if item.kind == "note":
            continue
        new = [p for p in _evidence_parts(item) if p.split(" (+")[0] not in reason]
        if new:
            evidence.append("; ".join(new))
    note = ""
    if not decided:
        what = _WORDS[check.verdict]
        if counted_as is not check.verdict:
            what += f" from an untrusted judge, counted as {_WORDS[counted_as]}"
        note = f" ({what}, did not decide)"
    head = f"{check.check_id}{note}: {reason}" if reason else f"{check.check_id}{note}"
    return GateFinding(
        check_id=check.check_id,
        layer=check.layer,
        verdict=check.verdict,
        counted_as=counted_as,
        gate=check.gate,
        decided=decided,
        category=check.category,
        trust=check.trust,
        reason=reason,
        evidence=tuple(evidence),
        line=f"{head} — {'; '.join(evidence)}" if evidence else head,
    )


def reason_parts(verdict: Verdict, reason: str, gates: Sequence[GateFinding]) -> tuple[str, ...]:
    """The parts of a trial's one-line reason, each one line, in order.

    The grading contract's reason comes first when it explains the verdict (an undecided trial's
    expectation nobody decided or untrusted judge withheld; a failed trial's only when no gate says why),
    then each gate's :attr:`GateFinding.line`.

    Args:
        verdict: The trial's verdict.
        reason: The grading contract's reason, may be empty.
        gates: The trial's :func:`failed_gates`.

    Returns:
        The parts; empty for a pass and when nothing says why.
    """
    if verdict is Verdict.PASS:
        return ()
    contract = " ".join(reason.split()) if verdict is not Verdict.FAIL or not gates else ""
    lines = tuple(g.line for g in gates)
    return (contract, *lines) if contract else lines


def verdict_reason(
    verdict: Verdict, reason: str, checks: Sequence[CheckResult], *, untrusted: str | None = None
) -> str:
    """Why a trial has its verdict, in one line: the one rule every report, viewer and integration uses.

    The parts (:func:`reason_parts`) joined by :data:`REASON_SEPARATOR`: the grading contract's reason
    when it kept the trial from passing (an expectation nobody decided, an untrusted judge), then every
    gate that did not pass with its id, its reason and what its evidence adds, the gates that decided the
    verdict first (:func:`failed_gates`). Two trials that failed differently never share a reason.

    Args:
        verdict: The trial's verdict.
        reason: The grading contract's reason (``Grade.reason`` / ``ResultLine.reason``), may be empty.
        checks: The trial's checks, in grading order.
        untrusted: The untrusted-judge policy the trial was graded under; ``None`` reads as ``withhold``.

    Returns:
        One line (whitespace collapsed, never a newline); ``""`` for a pass or when nothing says why.

    Examples:
        >>> rule = CheckResult(check_id="rule:1", layer="rules", verdict=Verdict.FAIL,
        ...     reason="refunded twice",
        ...     evidence=(Evidence(kind="call", summary="call 2: issue_refund(calls=2)", call_index=2),))
        >>> verdict_reason(Verdict.FAIL, "", [rule])
        'rule:1: refunded twice — call 2: issue_refund(calls=2)'
        >>> state = CheckResult(check_id="state", layer="state", verdict=Verdict.FAIL, reason="1 row differs")
        >>> verdict_reason(Verdict.FAIL, "", [state, rule])
        'state: 1 row differs | rule:1: refunded twice — call 2: issue_refund(calls=2)'
        >>> verdict_reason(Verdict.PASS, "", [])
        ''
    """
    gates = failed_gates(verdict, reason, checks, untrusted=untrusted)
    return REASON_SEPARATOR.join(reason_parts(verdict, reason, gates))


def deciding_check(
    verdict: Verdict, reason: str, checks: Sequence[CheckResult], *, untrusted: str | None = None
) -> CheckResult | None:
    """The first check that decided a trial's verdict, or ``None`` when the contract's reason explains it.

    Args:
        verdict: The trial's verdict.
        reason: The grading contract's reason, may be empty.
        checks: The trial's checks, in grading order.
        untrusted: The untrusted-judge policy in force (see :func:`failed_gates`).

    Returns:
        The first of :func:`failed_gates` that decided the verdict (for a failed trial its most severe,
        first failed gate); ``None`` for a pass, for a trial whose verdict the contract's reason gave, and
        when no check decided it.
    """
    if _contract_explains(verdict, reason):
        return None
    return next((c for c, _, decided in _not_passed(verdict, reason, checks, untrusted) if decided), None)


def deciding_gate(verdict: Verdict, reason: str, gates: Sequence[GateFinding]) -> GateFinding | None:
    """:func:`deciding_check` read from a trial's :func:`failed_gates` (no second pass over its checks)."""
    if _contract_explains(verdict, reason):
        return None
    return next((g for g in gates if g.decided), None)


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
    return _explain_check(check, max_lines=max_lines)


def _explain_check(check: CheckResult, *, max_lines: int, note: str = "") -> str:
    """:func:`explain_check`, with ``note`` (whether the check decided the verdict) among its tags."""
    tags = ["gate" if check.gate else "scored" if check.weight > 0 else "unscored"]
    if check.category is not None:
        tags.append(check.category.value)
    if check.trust.value != "not_required":
        tags.append(check.trust.value)
    if note:
        tags.append(note)
    head = f"{_MARK[check.verdict]} {check.check_id} [{', '.join(tags)}]"
    if check.reason:
        head += f": {check.reason}"
    lines = [head]
    for evidence in check.evidence:
        lines.extend(f"    {line}" for line in _evidence_lines(evidence, max_lines=max_lines))
    return "\n".join(lines)


def _decided_note(check: CheckResult, counted_as: Verdict, decided: bool) -> str:
    """The tag :func:`explain_grade` gives a listed gate: whether it decided the verdict, what it counted."""
    if decided:
        return "decided the verdict"
    if counted_as is not check.verdict:
        return f"untrusted judge, counted as {_WORDS[counted_as]}; did not decide"
    return "did not decide"


def explain_grade(grade: Grade, *, max_lines: int = 20, show_passed: bool = True) -> str:
    """A grade as the text a person reads: why the case has its verdict, with the evidence.

    The one explanation every path prints (:meth:`Grade.explain`; the pytest plugin, the Inspect AI scorer
    and the promptfoo assertion show it). Every gate that did not pass comes first, in
    :func:`failed_gates`' order (the gates that decided the verdict first, each tagged ``decided the
    verdict`` or ``did not decide``), then the other failed, errored and undecided checks; passed and
    skipped checks are listed by id only.

    Args:
        grade: The grade.
        max_lines: Most diff lines shown per piece of evidence (the rest is counted).
        show_passed: List the ids of passed and skipped checks at the end.

    Returns:
        Several lines of text, starting ``case <id> trial <n>: <VERDICT>``, then (unless it passed)
        ``  why: <reason>`` with :func:`verdict_reason`'s one line (every gate that did not pass).

    Examples:
        >>> rule = CheckResult(check_id="rule:no-double-refund", layer="rules", verdict=Verdict.FAIL,
        ...     reason="refunded twice", evidence=(Evidence(kind="call", summary="second refund",
        ...     call_index=3, tool="refund", arguments={"order": "7"}),))
        >>> print(Grade(case_id="refund-1", trial=1, verdict=Verdict.FAIL, checks=(rule,)).explain())
        case refund-1 trial 1: FAIL
          why: rule:no-double-refund: refunded twice — second refund
          FAIL rule:no-double-refund [gate, decided the verdict]: refunded twice
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
    gates = _not_passed(grade.verdict, grade.reason, grade.checks, grade.untrusted_policy)
    listed = {id(c) for c, _, _ in gates}
    shown = [(c, _decided_note(c, v, d)) for c, v, d in gates] + [
        (c, "") for state in GATE_SEVERITY for c in grade.checks if c.verdict is state and id(c) not in listed
    ]
    lines.extend(
        "  " + _explain_check(c, max_lines=max_lines, note=note).replace("\n", "\n  ") for c, note in shown
    )
    if show_passed:
        passed = [c.check_id for c in grade.checks if c.verdict is Verdict.PASS]
        skipped = [c.check_id for c in grade.checks if c.verdict is Verdict.NOT_EVALUATED]
        if passed:
            lines.append("  passed: " + ", ".join(passed))
        if skipped:
            lines.append("  not evaluated: " + ", ".join(skipped))
    return "\n".join(lines)
