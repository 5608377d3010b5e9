"""Checking a golden set's reference solutions: every grader layer run on each case's own reference.

A reference that does not pass its own case is a broken task (the case, its fixtures or the reference
need fixing). :func:`check_references` grades each reference (:func:`grade_references`: the deterministic
layers, and with a judge the rubric layer under the untrusted policy in force) and returns the
``reference_check`` document (:class:`ReferenceCheckDocument`), one row per case (:func:`reference_row`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from pydantic import Field

from judgekit.advice import current_advice
from judgekit.cases import Case
from judgekit.caseset import LoadedCase
from judgekit.graders.contract import Layer, UntrustedPolicy, effective_verdict
from judgekit.graders.layered import LayeredGrader, combine, reference_checks
from judgekit.graders.rubric import RubricGrader
from judgekit.state.provider import StateProvider
from judgekit.transcript import Transcript
from judgekit.verdict import CheckResult, Evidence, FrozenModel, Grade, Trust, Verdict

__all__ = [
    "ReferenceCheckDocument",
    "ReferenceJudge",
    "check_references",
    "grade_references",
    "reference_row",
    "untrusted_hint",
]


def untrusted_hint(fingerprint: str | None = None) -> str:
    """What to do about a judge whose verdicts are withheld because no calibration record trusts it.

    Worded for the path the user is on (:func:`judgekit.advice.current_advice`): ``judgekit calibrate ...``
    and ``--untrusted count`` on the command line, ``judgekit.api.calibrate(...)`` and ``untrusted='count'``
    in Python.

    Args:
        fingerprint: The judge's full fingerprint, or ``None`` when unknown (``FINGERPRINT`` stands for it).
    """
    advice = current_advice()
    return (
        f"calibrate it ({advice.calibrate_named(fingerprint or 'FINGERPRINT')}) or opt in with "
        f"{advice.count_untrusted}"
    )


def grade_references(
    cases: Sequence[Case],
    states: StateProvider,
    rubric: RubricGrader | None,
    untrusted: UntrustedPolicy = "withhold",
) -> list[tuple[Grade, float | None] | None]:
    """Grade each case's reference solution: the deterministic layers, and the judge's criteria with a judge.

    Without a judge (or when the reference cannot be read) the checks are
    :func:`judgekit.graders.layered.reference_checks`, combined as trial 1. With a judge each readable
    reference is graded by :class:`judgekit.graders.layered.LayeredGrader` (the deterministic layers on the
    reference's own states, the rubric layer, the untrusted policy in force), exactly as ``grade`` grades a
    trial; the references are judged concurrently (the judge client bounds the requests in flight).

    Args:
        cases: The cases checked, in order.
        states: Resolves the golden set's fixtures and each case's reference solution.
        rubric: The judge layer, or ``None`` for the deterministic layers alone.
        untrusted: The untrusted-judge policy in force with a judge (default ``withhold``).

    Returns:
        One entry per case, in order: ``None`` when the case has no reference solution, else ``(grade,
        judge cost in US dollars)``; the cost is 0.0 without a judge or when every reply was replayed, and
        ``None`` when a call's price is unknown.
    """
    out: list[tuple[Grade, float | None] | None] = [None] * len(cases)
    judged: list[tuple[int, Case, Transcript]] = []
    for index, case in enumerate(cases):
        if not case.reference_solution:
            continue
        reference = states.reference(case)
        if rubric is None or isinstance(reference, str):
            ref, checks = reference_checks(case, states=states)
            out[index] = (combine(case, 1, checks, transcript=ref), 0.0)
        else:
            judged.append((index, case, reference))
    if judged and rubric is not None:
        judge = rubric

        async def grade_all() -> list[Grade]:
            return await asyncio.gather(
                *(
                    LayeredGrader(
                        states=states.reference_provider(case),
                        rubric=judge,
                        untrusted=untrusted,
                    ).grade(case, reference)
                    for _, case, reference in judged
                )
            )

        for (index, _, _), grade in zip(judged, asyncio.run(grade_all()), strict=True):
            out[index] = (grade, grade.metadata.get("cost_usd"))
    return out


def _is_judged(check: CheckResult) -> bool:
    """Whether a check comes from the judge (the rubric layer) rather than a deterministic layer."""
    return check.layer == Layer.RUBRIC.value


def reference_row(grade: Grade, policy: UntrustedPolicy | None) -> dict[str, Any]:
    """One reference's status and verdict, the checks that keep it from ``ok``, and every judge check.

    A deterministic check that does not pass (``not_evaluated`` aside) makes the reference ``broken``. A
    judge check counts by :func:`judgekit.graders.contract.effective_verdict` under ``policy``: an
    effective ``fail`` or ``error`` makes it ``broken``; an effective ``insufficient_information`` (the judge
    could not decide, or its verdict was withheld because no calibration record trusts it) or a verdict the
    policy set aside (``advisory``) makes it ``judge_undecided`` unless it is broken. A reference with only
    ``not_evaluated`` checks has ``nothing_to_check``.

    Args:
        grade: The reference's grade (trial 1).
        policy: The untrusted-judge policy in force, or ``None`` without a judge.

    Returns:
        ``status``, ``verdict``, ``problems`` (each check that made it broken or undecided: ``check``,
        ``verdict``, ``gate``, ``category``, ``reason``, ``evidence``; judge checks also ``trust``,
        ``counted``, ``effective_verdict`` and ``undecided``, why it decided nothing) and, with a judge,
        ``judge_checks`` (every judge check, in the same shape).
    """
    checks = list(grade.checks)
    problems: list[dict[str, Any]] = []
    judge_checks: list[dict[str, Any]] = []
    broken = undecided = False
    for check in checks:
        entry: dict[str, Any] = {
            "check": check.check_id,
            "verdict": check.verdict.value,
            "gate": check.gate,
            "category": check.category.value if check.category else None,
            "reason": check.reason,
            "evidence": [_evidence_line(e) for e in check.evidence[:5]],
        }
        if not _is_judged(check) or policy is None:
            if check.verdict not in (Verdict.PASS, Verdict.NOT_EVALUATED):
                broken = True
                problems.append(entry)
            continue
        effective = effective_verdict(check, policy)
        counted = effective is check.verdict
        why: str | None = None
        if effective in (Verdict.FAIL, Verdict.ERROR):
            broken = True
        elif check.trust is Trust.UNTRUSTED and not counted:
            undecided = True
            why = (
                f"untrusted judge: no calibration record trusts it, so its {check.verdict.value} decides "
                f"nothing under {current_advice().policy_named(policy)}; "
                f"{untrusted_hint(_fingerprint(check))}"
            )
        elif effective is Verdict.INSUFFICIENT_INFORMATION:
            undecided = True
            why = "the judge answered insufficient_information: the reference does not settle this criterion"
        entry.update(
            {
                "trust": check.trust.value,
                "counted": counted,
                "effective_verdict": effective.value,
                "undecided": why,
            }
        )
        judge_checks.append(entry)
        if effective in (Verdict.FAIL, Verdict.ERROR) or why is not None:
            problems.append(entry)
    if broken:
        status = "broken"
    elif undecided:
        status = "judge_undecided"
    elif all(c.verdict is Verdict.NOT_EVALUATED for c in checks):
        status = "nothing_to_check"
    else:
        status = "ok"
    row: dict[str, Any] = {"status": status, "verdict": grade.verdict.value, "problems": problems}
    if policy is not None:
        row["judge_checks"] = judge_checks
    return row


def _fingerprint(check: CheckResult) -> str | None:
    """The fingerprint of the judge behind a judge check (its note's), or ``None`` when it names none."""
    for evidence in check.evidence:
        if evidence.kind == "note" and isinstance(evidence.data, dict):
            fingerprint = evidence.data.get("fingerprint")
            if isinstance(fingerprint, str):
                return fingerprint
    return None


def _evidence_line(evidence: Evidence) -> str:
    """One line of a check's evidence: the judge's quote with its rationale, else the evidence's summary."""
    if evidence.quote:
        return f'"{evidence.quote}" ({evidence.summary})' if evidence.summary else f'"{evidence.quote}"'
    return str(evidence.summary)


class ReferenceJudge(FrozenModel):
    """Who judged the references: the ``judge`` entry of the ``reference_check`` document.

    Attributes:
        model: The judge's litellm model (``None`` when none is set up).
        fingerprint: The grader's fingerprint in full, as calibration records name it.
        fingerprint_short: Its first 12 characters.
        trust: ``trusted``, ``untrusted`` or ``not_required`` (``None`` when no trust was looked up).
        trust_reason: Why (``None`` as for ``trust``).
        records: The calibration records folder.
        untrusted_policy: What an untrusted verdict may do (``withhold``, ``count``...).
        cache_mode: The cassette's cache mode.
        cassette: The cassette, or ``None``.
        cost_usd: What the judge's calls cost in US dollars (0.0 when replayed; ``None`` when a price is
            unknown).
    """

    model: str | None
    fingerprint: str
    fingerprint_short: str
    trust: str | None
    trust_reason: str | None
    records: str
    untrusted_policy: str
    cache_mode: str
    cassette: str | None
    cost_usd: float | None


class ReferenceCheckDocument(FrozenModel):
    """Each reference's status (the ``reference_check`` document).

    Attributes:
        summary: Cases checked and how many are ``ok``, ``broken``, without a reference
            (``no_reference``), with ``nothing_to_check``, and with a judge ``judge_undecided``.
        results: One row per case, in order: ``case``, ``file`` (``path:line``), and the row of
            :func:`reference_row` (``status``, ``verdict``, ``problems``, ``judge_checks`` with a judge);
            a case without a reference has only ``status`` ``no_reference`` and ``verdict`` ``None``.
        judge: Who judged (absent from the document without a judge).
        cost_usd: What the judge's calls cost in US dollars (0.0 without a judge or when replayed; ``None``
            when a price is unknown); printed in ``judge``.
    """

    summary: dict[str, int]
    results: list[dict[str, Any]]
    judge: ReferenceJudge | None = Field(default=None, exclude_if=lambda value: value is None)
    cost_usd: float | None = Field(default=0.0, exclude=True)

    @property
    def broken(self) -> int:
        """References that do not pass their own case."""
        return self.summary["broken"]


def check_references(
    cases: Sequence[LoadedCase],
    states: StateProvider,
    *,
    rubric: RubricGrader | None = None,
    untrusted: UntrustedPolicy = "withhold",
) -> ReferenceCheckDocument:
    """Run every grader layer on each case's reference solution and say which references are broken.

    Args:
        cases: The cases to check, in order (normally the reviewed cases of a valid set).
        states: Resolves the set's fixtures and each case's reference solution.
        rubric: The judge layer, or ``None`` for the deterministic layers alone.
        untrusted: The untrusted-judge policy in force with a judge (``withhold``, the default: an untrusted
            judge's verdict decides nothing).

    Returns:
        The document without its ``judge`` entry (the caller, who set the judge up, adds it with
        ``model_copy``); ``summary["broken"]`` > 0 when a reference does not pass.
    """
    policy = untrusted if rubric is not None else None
    rows: list[dict[str, Any]] = []
    graded = grade_references([loaded.case for loaded in cases], states, rubric, untrusted)
    cost: float | None = 0.0
    for loaded, result in zip(cases, graded, strict=True):
        where = f"{loaded.path}:{loaded.line}"
        if result is None:
            rows.append({"case": loaded.case.id, "file": where, "status": "no_reference", "verdict": None})
            continue
        grade, case_cost = result
        cost = None if cost is None or case_cost is None else cost + case_cost
        rows.append({"case": loaded.case.id, "file": where, **reference_row(grade, policy)})
    summary = {
        "cases": len(rows),
        "ok": sum(r["status"] == "ok" for r in rows),
        "broken": sum(r["status"] == "broken" for r in rows),
        "no_reference": sum(r["status"] == "no_reference" for r in rows),
        "nothing_to_check": sum(r["status"] == "nothing_to_check" for r in rows),
    }
    if rubric is not None:
        summary["judge_undecided"] = sum(r["status"] == "judge_undecided" for r in rows)
    return ReferenceCheckDocument(summary=summary, results=rows, cost_usd=cost)
