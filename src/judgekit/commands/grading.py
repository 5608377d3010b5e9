"""Grading commands: ``judgekit cases check-references``.

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
from judgekit.commands.output import chosen_format, format_option, print_model

if TYPE_CHECKING:
    from judgekit.commands.judge_options import JudgeSetup
    from judgekit.golden.references import ReferenceJudge

__all__ = ["check_references"]

_NO_MODEL = (
    "--judge needs a judge model and none is configured: give --judge-model MODEL (openai/gpt-4o-mini), "
    "or set judge.model in --config FILE, in [tool.judgekit.judge] of pyproject.toml or judgekit.toml, or in "
    "JUDGEKIT_JUDGE_MODEL (see judgekit config)"
)
"""The error of ``check-references --judge`` when no judge model is in force anywhere."""


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
    from judgekit.caseset import load_case_set
    from judgekit.errors import JudgekitError
    from judgekit.golden.references import check_references as check_each_reference
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
    elif given := _judge_flags_given(flags):
        raise JudgekitError(
            f"{', '.join(given)} {'is a judge option' if len(given) == 1 else 'are judge options'}: "
            "add --judge (the configured judge) or --judge-model MODEL to judge the references",
            exit_code=2,
        )
    case_set = load_case_set(cases)
    case_set.raise_if_invalid()
    selected = case_set.cases if include_candidates else case_set.reviewed()
    document = check_each_reference(
        selected,
        StateProvider(case_set.root),
        rubric=setup.grader if setup is not None else None,
        untrusted=setup.untrusted if setup is not None else "withhold",
    )
    if setup is not None:
        document = document.model_copy(update={"judge": _judge_entry(setup, document.cost_usd)})
    if output_format == "json":
        print_model("reference_check", document)
    else:
        _print_text(document.results, setup, document.cost_usd)
    if document.broken:
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


def _judge_entry(setup: JudgeSetup, cost: float | None) -> ReferenceJudge:
    """The ``judge`` entry of the document: who judged, its trust, the policy and the cost.

    Args:
        setup: The judge set-up (with a grader).
        cost: What the judge's calls cost in US dollars (0.0 when replayed; ``None`` when a price is unknown).
    """
    from judgekit.golden.references import ReferenceJudge

    fingerprint = setup.grader.fingerprint if setup.grader is not None else ""
    return ReferenceJudge(
        model=setup.model,
        fingerprint=fingerprint,
        fingerprint_short=fingerprint[:12],
        trust=setup.trust.trust.value if setup.trust is not None else None,
        trust_reason=setup.trust.reason if setup.trust is not None else None,
        records=str(setup.records),
        untrusted_policy=setup.untrusted,
        cache_mode=setup.mode,
        cassette=str(setup.cassette) if setup.cassette is not None else None,
        cost_usd=cost,
    )


def _print_text(rows: list[dict[str, Any]], setup: JudgeSetup | None, cost: float | None) -> None:
    from judgekit.golden.references import untrusted_hint

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
            f"judge: {untrusted_hint(setup.grader.fingerprint if setup and setup.grader else None)})",
            err=True,
        )
