"""Grading commands: ``judgekit check-references``.

Only typer is imported at module level; the graders (and their CEL, numpy and scipy imports) load inside
the command so that ``judgekit --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from judgekit.commands.inputs import existing_inputs
from judgekit.commands.output import chosen_format, format_option

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add the grading commands to the ``judgekit`` application."""
    app.command("check-references")(check_references)


@existing_inputs("cases")
def check_references(
    cases: list[Path] = typer.Argument(..., help="Golden-set folder(s) or case files."),
    output_format: str = format_option(),
    include_candidates: bool = typer.Option(
        False, "--candidates", help="Also check candidates (by default only reviewed cases)."
    ),
) -> None:
    """Run every deterministic grader layer on each case's reference solution.

    A reference whose checks do not all pass (a failed gate or scored check, or a check that cannot run:
    unreadable reference, no final state, a rule that errors) is a broken task and is listed with the
    reasons. Cases without a reference solution are
    listed apart and do not count as broken. Exit code 1 when any reference is broken; 2 when the set is
    invalid (every problem is listed); 0 otherwise.
    """
    import json

    from judgekit.caseset import load_case_set
    from judgekit.graders.layered import combine, reference_checks
    from judgekit.state.provider import StateProvider
    from judgekit.verdict import Verdict

    output_format = chosen_format(output_format)
    case_set = load_case_set(cases)
    case_set.raise_if_invalid()
    selected = case_set.cases if include_candidates else case_set.reviewed()
    states = StateProvider(case_set.root)
    rows: list[dict[str, Any]] = []
    for loaded in selected:
        case = loaded.case
        where = f"{loaded.path}:{loaded.line}"
        if not case.reference_solution:
            rows.append({"case": case.id, "file": where, "status": "no_reference", "verdict": None})
            continue
        _, checks = reference_checks(case, states=states)
        grade = combine(case, 1, checks)
        not_passing = [c for c in checks if c.verdict not in (Verdict.PASS, Verdict.NOT_EVALUATED)]
        if not_passing:
            status = "broken"
        elif all(c.verdict is Verdict.NOT_EVALUATED for c in checks):
            status = "nothing_to_check"
        else:
            status = "ok"
        rows.append(
            {
                "case": case.id,
                "file": where,
                "status": status,
                "verdict": grade.verdict.value,
                "problems": [
                    {
                        "check": c.check_id,
                        "verdict": c.verdict.value,
                        "gate": c.gate,
                        "category": c.category.value if c.category else None,
                        "reason": c.reason,
                        "evidence": [e.summary for e in c.evidence[:5]],
                    }
                    for c in not_passing
                ],
            }
        )
    broken = [r for r in rows if r["status"] == "broken"]
    if output_format == "json":
        summary = {
            "cases": len(rows),
            "ok": sum(r["status"] == "ok" for r in rows),
            "broken": len(broken),
            "no_reference": sum(r["status"] == "no_reference" for r in rows),
            "nothing_to_check": sum(r["status"] == "nothing_to_check" for r in rows),
        }
        from judgekit.commands.output import versioned

        document = versioned("reference_check", {"summary": summary, "results": rows})
        typer.echo(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        _print_text(rows)
    if broken:
        raise typer.Exit(1)


def _print_text(rows: list[dict[str, Any]]) -> None:
    labels = {
        "ok": "ok",
        "broken": "BROKEN",
        "no_reference": "no reference",
        "nothing_to_check": "nothing to check",
    }
    for row in rows:
        typer.echo(f"{labels[row['status']]:<16} {row['case']}  ({row['file']})")
        if row["status"] == "broken":
            for problem in row["problems"]:
                gate = "gate" if problem["gate"] else "scored"
                category = f" [{problem['category']}]" if problem["category"] else ""
                typer.echo(
                    f"    {problem['check']}: {problem['verdict']} ({gate}){category}: {problem['reason']}"
                )
                for line in problem["evidence"]:
                    typer.echo(f"      - {line}")
    counts = {key: sum(r["status"] == key for r in rows) for key in labels}
    typer.echo(
        f"{len(rows)} case(s): {counts['ok']} ok, {counts['broken']} broken, "
        f"{counts['no_reference']} without a reference solution, {counts['nothing_to_check']} with nothing "
        "to check"
    )
    if counts["broken"]:
        typer.echo("a broken reference means the task (case, fixtures or reference) needs fixing", err=True)
