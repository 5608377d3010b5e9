"""The command tree: every command's place below ``judgekit``, and where each old name went.

The main jobs sit at the top (``grade``, ``report``, ``compare``, ``view``, ``calibrate``, ``demo``,
``config``); everything else lives in a group named after the thing it works on (``cases``,
``candidates``, ``labels``, ``judge``, ``import``, ``export``, ``rubrics``, ``cassette``,
``contamination``). This module is the one place that builds the groups: the command modules only define
command functions, so no group is assembled across modules and nothing depends on registration order.

A command that moved keeps its old name as a hidden command (or, for ``export``, which became a group, as
the group's answer to an argument that is no subcommand) that prints one line saying where it went, exit
code 2: an old name never runs silently. :data:`RENAMED` is that table; ``docs/reference/cli.md`` renders
it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import typer
from typer.core import TyperGroup

from judgekit.commands import (
    calibrate,
    canary,
    cascade,
    config,
    contamination,
    demo,
    expert_labels,
    golden,
    grading,
    growing,
    inspect_logs,
    judge,
    jury,
    label_tools,
    lint,
    refine,
    runs,
    trust,
    view,
)
from judgekit.errors import JudgekitError, closest_name

__all__ = ["GROUPS", "RENAMED", "TOP", "Group", "register"]


class Group(NamedTuple):
    """One command group.

    Attributes:
        help: The group's help text (its first sentence is its summary in ``judgekit --help``).
        commands: Subcommand name to command function, in the order ``--help`` lists them.
    """

    help: str
    commands: dict[str, Callable[..., Any]]


TOP: dict[str, Callable[..., Any]] = {
    "grade": runs.grade,
    "report": runs.report,
    "compare": runs.compare,
    "view": view.view,
    "calibrate": calibrate.calibrate,
    "demo": demo.demo,
    "config": config.config,
}
"""The commands at the top level: the main jobs."""

GROUPS: dict[str, Group] = {
    "cases": Group(
        "Golden cases: check them, find weak ones, measure coverage, retire saturated ones, review changes.",
        {
            "check": golden.validate,
            "lint": lint.lint,
            "check-references": grading.check_references,
            "coverage": golden.coverage,
            "scan-pii": growing.scan_pii,
            "retire": golden.retire,
            "diff": golden.golden_diff,
            "reconcile": growing.golden_reconcile,
        },
    ),
    "candidates": Group(
        "Candidate cases awaiting review: generate them, take them in from incidents, promote them.",
        {
            "generate": growing.candidates_generate,
            "intake": growing.intake,
            "promote": golden.promote,
        },
    ),
    "labels": Group(
        "Expert labels for calibration: a review sheet, reading it back, planning, checking, selection.",
        {
            "sheet": growing.sample,
            "read": growing.sample_labels,
            "from-results": growing.labels_from_results,
            "import": label_tools.labels_import,
            "page": expert_labels.labels_page,
            "reconcile": expert_labels.labels_reconcile,
            "plan": trust.calibrate_plan,
            "check": trust.calibrate_check,
            "select": trust.calibrate_select,
        },
    ),
    "judge": Group(
        "A calibrated judge: whether it is trusted, corrected rates, failure modes, bias probes, a cascade, "
        "a jury's weights, "
        "a rubric refined on labels it is then measured apart from.",
        {
            "trust": calibrate.trust,
            "failure-rate": calibrate.failure_rate,
            "failure-modes": trust.failure_modes,
            "probe-bias": trust.probe_bias,
            "fit-cascade": cascade.fit_cascade,
            "fit-jury": jury.fit_jury,
            "refine": refine.refine,
            "canary": canary.canary_check,
            "canary-set": canary.canary_set,
        },
    ),
    "import": Group(
        "Turn trajectories recorded by other harnesses into judgekit transcripts.",
        {
            "tau-bench": runs.import_tau_bench,
            "tau2-bench": runs.import_tau2_bench,
            "openai": runs.import_openai,
            "anthropic": runs.import_anthropic,
            "otel": trust.import_otel,
            "inspect": inspect_logs.import_inspect,
        },
    ),
    "export": Group(
        "Write cases or verdicts for other tools: a test set, OpenTelemetry evaluation events, scores on "
        "copies of Inspect logs.",
        {"cases": golden.export, "otel": trust.export_otel, "inspect": inspect_logs.export_inspect},
    ),
    "rubrics": Group(
        "List, show and validate rubric files for the judge layer.",
        {"list": judge.list_rubrics, "show": judge.show_rubric, "check": judge.check_rubrics},
    ),
    "cassette": Group(
        "Inspect and compact judge cassettes (recorded judge replies).",
        {"stats": judge.cassette_stats, "compact": judge.cassette_compact},
    ),
    "contamination": Group(
        "Keep golden cases out of training data: keyed hash index, canaries, export scanner.",
        {
            "keygen": contamination.keygen,
            "index": contamination.index,
            "canary": contamination.canary,
            "scan": contamination.scan,
        },
    ),
}
"""The command groups, each built here and nowhere else."""

RENAMED: dict[str, str] = {
    "validate": "cases check",
    "lint": "cases lint",
    "check-references": "cases check-references",
    "coverage": "cases coverage",
    "scan-pii": "cases scan-pii",
    "retire": "cases retire",
    "golden": "cases",
    "golden diff": "cases diff",
    "golden reconcile": "cases reconcile",
    "intake": "candidates intake",
    "sample": "labels sheet",
    "sample-labels": "labels read",
    "calibrate-plan": "labels plan",
    "calibrate-check": "labels check",
    "calibrate-select": "labels select",
    "trust": "judge trust",
    "failure-rate": "judge failure-rate",
    "failure-modes": "judge failure-modes",
    "probe-bias": "judge probe-bias",
    "fit-cascade": "judge fit-cascade",
    "export": "export cases",
    "export-otel": "export otel",
}
"""Old command path (below ``judgekit``) to its new path: what the old name prints, and nothing else."""


def _moved_message(words: list[str]) -> str:
    """The line for an old command path: the longest old path ``words`` starts with, and its new place.

    Args:
        words: The old top-level name and the arguments after it (``["golden", "diff", "main"]``).
    """
    old = " ".join(words[:2]) if " ".join(words[:2]) in RENAMED else words[0]
    return f"'{old}' is now 'judgekit {RENAMED[old]}'"


class _Group(TyperGroup):
    """A command group; one whose name was once a command (``export``) says where that command went.

    An argument that is neither a subcommand nor close to one is taken as the old command's argument
    (``judgekit export examples/airdesk``): one line names the new place, exit code 2. A near miss
    (``export otle``) keeps the usual error with its did-you-mean.
    """

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """Find the subcommand ``args`` names, or refuse an old command's arguments with its new place."""
        name = self.name or ""
        wanted = args[0] if args else ""
        if (
            name in RENAMED
            and wanted
            and not wanted.startswith("-")
            and self.get_command(ctx, wanted) is None
            and closest_name(wanted, self.list_commands(ctx)) is None
        ):
            raise JudgekitError(_moved_message([name]))
        return super().resolve_command(ctx, args)


def _moved(old: str) -> Callable[..., None]:
    """The hidden command that stands for the old top-level name ``old``: it only says where it went."""

    def moved(ctx: typer.Context) -> None:
        raise JudgekitError(_moved_message([old, *ctx.args]))

    moved.__doc__ = f"Moved: see {RENAMED[old]!r}."
    return moved


def register(app: typer.Typer) -> None:
    """Add every command, every group and every old name's pointer to the ``judgekit`` application.

    Args:
        app: The root application; each call builds fresh groups, so it may be called for any number of
            applications.
    """
    for name, command in TOP.items():
        app.command(name)(command)
    for name, group in GROUPS.items():
        sub = typer.Typer(help=group.help, no_args_is_help=True, cls=_Group)
        for command_name, command in group.commands.items():
            sub.command(command_name)(command)
        app.add_typer(sub, name=name)
    for old in dict.fromkeys(path.split()[0] for path in RENAMED):
        if old not in TOP and old not in GROUPS:
            app.command(
                old,
                hidden=True,
                add_help_option=False,
                context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
            )(_moved(old))
