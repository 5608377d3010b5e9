"""Grading commands: ``judgekit check-references``.

Only typer is imported at module level; the graders (and their CEL, numpy and scipy imports) load inside
the command so that ``judgekit --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from judgekit.commands.inputs import existing_inputs
from judgekit.commands.judge_options import (
    JudgeFlags,
    cache_mode_option,
    cassette_option,
    config_option,
    judge_api_base_option,
    judge_backoff_option,
    judge_model_option,
    judge_retries_option,
    judge_timeout_option,
    max_cost_option,
    records_option,
    require_trust_option,
    rubric_option,
    setup_judge,
    untrusted_option,
)
from judgekit.commands.output import chosen_format, format_option

if TYPE_CHECKING:
    from judgekit.cases import Case
    from judgekit.commands.judge_options import JudgeSetup
    from judgekit.graders.contract import UntrustedPolicy
    from judgekit.state.provider import StateProvider
    from judgekit.verdict import CheckResult, Grade

__all__ = ["register"]

_NO_MODEL = (
    "--judge needs a judge model and none is configured: give --judge-model MODEL (openai/gpt-4o-mini), "
    "or set judge.model in --config FILE, in [tool.judgekit.judge] of pyproject.toml or judgekit.toml, or in "
    "JUDGEKIT_JUDGE_MODEL (see judgekit config)"
)
"""The error of ``check-references --judge`` when no judge model is in force anywhere."""

_UNTRUSTED_HINT = "calibrate it (judgekit calibrate) or opt in with --untrusted count"
"""What to do about a judge whose verdicts are withheld because no calibration record trusts it."""


def register(app: typer.Typer) -> None:
    """Add the grading commands to the ``judgekit`` application."""
    app.command("check-references")(check_references)


@existing_inputs("cases", "config")
def check_references(  # noqa: PLR0917 - typer options
    cases: list[Path] = typer.Argument(..., help="Golden-set folder(s) or case files."),
    output_format: str = format_option(),
    include_candidates: bool = typer.Option(
        False, "--candidates", help="Also check candidates (by default only reviewed cases)."
    ),
    judge: bool = typer.Option(
        False,
        "--judge",
        help="Also run the case's judge criteria (rubric, acceptance) on each reference, with the "
        "configured judge (judge.model of the configuration; --judge-model implies it).",
    ),
    judge_model: str | None = judge_model_option(),
    judge_api_base: str | None = judge_api_base_option(),
    rubric: str | None = rubric_option(),
    cassette: Path | None = cassette_option(),
    cache_mode: str | None = cache_mode_option(),
    max_cost: float | None = max_cost_option(),
    judge_timeout: float | None = judge_timeout_option(),
    judge_retries: int | None = judge_retries_option(),
    judge_backoff: float | None = judge_backoff_option(),
    records: Path | None = records_option(),
    untrusted: str | None = untrusted_option(),
    require_trust: bool = require_trust_option(),
    config: Path | None = config_option(),
) -> None:
    """Run every deterministic grader layer (and with --judge the judge's criteria) on each reference.

    A reference whose checks do not all pass (a failed gate or scored check, or a check that cannot run:
    unreadable reference, no final state, a rule that errors) is a broken task and is listed with the
    reasons. Cases without a reference solution are
    listed apart and do not count as broken. With --judge (or --judge-model) the judge's criteria run on
    each reference too, as in grade: a criterion that fails or errors while its verdict counts makes the
    reference broken; one the judge cannot decide, or whose verdict is withheld because no calibration
    record trusts the judge (--untrusted withhold, the default), makes it judge_undecided, which is listed
    and counted but does not fail. Exit code 1 when any reference is broken or --require-trust refuses an
    untrusted judge; 2 when the set is invalid (every problem is listed) or the judge cannot be set up; 0
    otherwise.
    """
    import json

    from judgekit.caseset import load_case_set
    from judgekit.errors import JudgekitError
    from judgekit.state.provider import StateProvider

    output_format = chosen_format(output_format)
    flags = JudgeFlags(
        model=judge_model,
        api_base=judge_api_base,
        rubric=rubric,
        cassette=cassette,
        cache_mode=cache_mode,
        max_cost=max_cost,
        timeout=judge_timeout,
        retries=judge_retries,
        backoff=judge_backoff,
        records=records,
        untrusted=untrusted,
        require_trust=require_trust,
        config=config,
    )
    setup: JudgeSetup | None = None
    if judge or judge_model is not None:
        setup = setup_judge(flags, need_model=_NO_MODEL)
    else:
        given = _judge_flags_given(flags)
        if given:
            raise JudgekitError(
                f"{', '.join(given)} {'is a judge option' if len(given) == 1 else 'are judge options'}: "
                "add --judge (the configured judge) or --judge-model MODEL to judge the references",
                exit_code=2,
            )
    case_set = load_case_set(cases)
    case_set.raise_if_invalid()
    selected = case_set.cases if include_candidates else case_set.reviewed()
    states = StateProvider(case_set.root)
    rows: list[dict[str, Any]] = []
    graded = _grade_references([loaded.case for loaded in selected], states, setup)
    cost: float | None = 0.0
    for loaded, result in zip(selected, graded, strict=True):
        case = loaded.case
        where = f"{loaded.path}:{loaded.line}"
        if result is None:
            rows.append({"case": case.id, "file": where, "status": "no_reference", "verdict": None})
            continue
        grade, case_cost = result
        cost = None if cost is None or case_cost is None else cost + case_cost
        rows.append({"case": case.id, "file": where, **_row(grade, setup.untrusted if setup else None)})
    broken = [r for r in rows if r["status"] == "broken"]
    if output_format == "json":
        summary = {
            "cases": len(rows),
            "ok": sum(r["status"] == "ok" for r in rows),
            "broken": len(broken),
            "no_reference": sum(r["status"] == "no_reference" for r in rows),
            "nothing_to_check": sum(r["status"] == "nothing_to_check" for r in rows),
        }
        body: dict[str, Any] = {"summary": summary, "results": rows}
        if setup is not None:
            summary["judge_undecided"] = sum(r["status"] == "judge_undecided" for r in rows)
            body["judge"] = _judge_document(setup, cost)
        from judgekit.commands.output import versioned

        document = versioned("reference_check", body)
        typer.echo(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        _print_text(rows, setup, cost)
    if broken:
        raise typer.Exit(1)


def _judge_flags_given(flags: JudgeFlags) -> list[str]:
    """The judge options given without ``--judge``, by flag name, in the order of the help.

    Args:
        flags: The judge options as given (``--judge-model`` is never among them: it implies ``--judge``).

    Returns:
        The flags given (``--rubric``, ``--records``, ...); empty when none was.
    """
    named = (
        ("--judge-api-base", flags.api_base),
        ("--rubric", flags.rubric),
        ("--cassette", flags.cassette),
        ("--cache-mode", flags.cache_mode),
        ("--max-cost", flags.max_cost),
        ("--judge-timeout", flags.timeout),
        ("--judge-retries", flags.retries),
        ("--judge-backoff", flags.backoff),
        ("--records", flags.records),
        ("--untrusted", flags.untrusted),
        ("--require-trust", flags.require_trust or None),
        ("--config", flags.config),
    )
    return [flag for flag, value in named if value is not None]


def _grade_references(
    cases: list[Case], states: StateProvider, setup: JudgeSetup | None
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
        setup: The judge, or ``None`` for the deterministic layers alone.

    Returns:
        One entry per case, in order: ``None`` when the case has no reference solution, else ``(grade,
        judge cost in US dollars)``; the cost is 0.0 without a judge or when every reply was replayed, and
        ``None`` when a call's price is unknown.
    """
    import asyncio

    from judgekit.graders.layered import LayeredGrader, combine, reference_checks

    out: list[tuple[Grade, float | None] | None] = [None] * len(cases)
    judged: list[tuple[int, Case, Any]] = []
    for index, case in enumerate(cases):
        if not case.reference_solution:
            continue
        reference = states.reference(case)
        if setup is None or setup.grader is None or isinstance(reference, str):
            _, checks = reference_checks(case, states=states)
            out[index] = (combine(case, 1, checks), 0.0)
        else:
            judged.append((index, case, reference))
    if judged and setup is not None and setup.grader is not None:
        rubric = setup.grader

        async def grade_all() -> list[Grade]:
            return await asyncio.gather(
                *(
                    LayeredGrader(
                        states=states.reference_provider(case), rubric=rubric, untrusted=setup.untrusted
                    ).grade(case, reference)
                    for _, case, reference in judged
                )
            )

        for (index, _, _), grade in zip(judged, asyncio.run(grade_all()), strict=True):
            out[index] = (grade, grade.metadata.get("cost_usd"))
    return out


def _is_judged(check: CheckResult) -> bool:
    """Whether a check comes from the judge (the rubric layer) rather than a deterministic layer."""
    from judgekit.graders.contract import Layer

    return check.layer == Layer.RUBRIC.value


def _row(grade: Grade, policy: UntrustedPolicy | None) -> dict[str, Any]:
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
    from judgekit.graders.contract import effective_verdict
    from judgekit.verdict import Trust, Verdict

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
                f"nothing under --untrusted {policy}; {_UNTRUSTED_HINT}"
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


def _evidence_line(evidence: Any) -> str:
    """One line of a check's evidence: the judge's quote with its rationale, else the evidence's summary."""
    if evidence.quote:
        return f'"{evidence.quote}" ({evidence.summary})' if evidence.summary else f'"{evidence.quote}"'
    return str(evidence.summary)


def _judge_document(setup: JudgeSetup, cost: float | None) -> dict[str, Any]:
    """The ``judge`` entry of the JSON document: who judged, its trust, the policy and the cost.

    Args:
        setup: The judge set-up (with a grader).
        cost: What the judge's calls cost in US dollars (0.0 when replayed; ``None`` when a price is unknown).

    Returns:
        ``model``, ``fingerprint`` (in full, as calibration records name it), ``fingerprint_short`` (its
        first 12 characters, as the standard-error line shows it), ``trust``, ``trust_reason``,
        ``records``, ``untrusted_policy``, ``cache_mode``, ``cassette`` and ``cost_usd``.
    """
    fingerprint = setup.grader.fingerprint if setup.grader is not None else ""
    return {
        "model": setup.model,
        "fingerprint": fingerprint,
        "fingerprint_short": fingerprint[:12],
        "trust": setup.trust.trust.value if setup.trust is not None else None,
        "trust_reason": setup.trust.reason if setup.trust is not None else None,
        "records": str(setup.records),
        "untrusted_policy": setup.untrusted,
        "cache_mode": setup.mode,
        "cassette": str(setup.cassette) if setup.cassette is not None else None,
        "cost_usd": cost,
    }


def _print_text(rows: list[dict[str, Any]], setup: JudgeSetup | None, cost: float | None) -> None:
    labels = {
        "ok": "ok",
        "broken": "BROKEN",
        "judge_undecided": "JUDGE UNDECIDED",
        "no_reference": "no reference",
        "nothing_to_check": "nothing to check",
    }
    for row in rows:
        typer.echo(f"{labels[row['status']]:<16} {row['case']}  ({row['file']})")
        if row["status"] in ("broken", "judge_undecided"):
            for problem in row["problems"]:
                gate = "gate" if problem["gate"] else "scored"
                category = f" [{problem['category']}]" if problem["category"] else ""
                trust = f" (judge {problem['trust']})" if "trust" in problem else ""
                typer.echo(
                    f"    {problem['check']}: {problem['verdict']} ({gate}){category}{trust}: "
                    f"{problem['reason']}"
                )
                if problem.get("undecided"):
                    typer.echo(f"      undecided: {problem['undecided']}")
                for line in problem["evidence"]:
                    typer.echo(f"      - {line}")
    counts = {key: sum(r["status"] == key for r in rows) for key in labels}
    undecided = f"{counts['judge_undecided']} judge undecided, " if setup is not None else ""
    typer.echo(
        f"{len(rows)} case(s): {counts['ok']} ok, {counts['broken']} broken, {undecided}"
        f"{counts['no_reference']} without a reference solution, {counts['nothing_to_check']} with nothing "
        "to check"
        + (
            ("; judge cost " + (f"${cost:.4f}" if cost is not None else "unknown"))
            if setup is not None
            else ""
        )
    )
    if counts["broken"]:
        typer.echo("a broken reference means the task (case, fixtures or reference) needs fixing", err=True)
    if counts["judge_undecided"]:
        typer.echo(
            "a judge-undecided reference was not confirmed by the judge: see 'undecided' above (an untrusted "
            f"judge: {_UNTRUSTED_HINT})",
            err=True,
        )
