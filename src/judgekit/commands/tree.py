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

The tree names each command by reference (``"runs:grade"``: the function ``grade`` of
:mod:`judgekit.commands.runs`) and :class:`Root`, the ``judgekit`` group, builds a command (imports its
module, and has typer turn its signature into options) only when it is looked up: ``judgekit grade``
builds ``grade`` alone, and ``judgekit --help`` the top-level entries without the commands inside the
groups. Every command is built by typer's own code from the same registration :func:`register` makes, so
a command looks the same whichever way it was built (``tests/commands/test_tree.py``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any, NamedTuple

import typer
import typer.main
from typer.core import TyperGroup

from judgekit.commands.helptext import PolishedGroup, polish
from judgekit.errors import JudgekitError, closest_name

__all__ = ["GROUPS", "RENAMED", "TOP", "Group", "LazyCommands", "Root", "command_function", "register"]


class Group(NamedTuple):
    """One command group.

    Attributes:
        help: The group's help text (its first sentence is its summary in ``judgekit --help``).
        commands: Subcommand name to its command function's reference (``"module:function"`` in
            :mod:`judgekit.commands`, see :func:`command_function`), in the order ``--help`` lists them.
    """

    help: str
    commands: dict[str, str]


TOP: dict[str, str] = {
    "grade": "runs:grade",
    "report": "runs:report",
    "compare": "runs:compare",
    "view": "view:view",
    "calibrate": "calibrate:calibrate",
    "demo": "demo:demo",
    "config": "config:config",
}
"""The commands at the top level, the main jobs: name to command function (``"module:function"``)."""

GROUPS: dict[str, Group] = {
    "cases": Group(
        "Golden cases: check them, find weak ones, measure coverage, retire saturated ones, review changes.",
        {
            "check": "golden:validate",
            "lint": "lint:lint",
            "check-references": "grading:check_references",
            "coverage": "golden:coverage",
            "scan-pii": "growing:scan_pii",
            "retire": "golden:retire",
            "diff": "golden:golden_diff",
            "reconcile": "growing:golden_reconcile",
        },
    ),
    "candidates": Group(
        "Candidate cases awaiting review: generate them, take them in from incidents, promote them.",
        {
            "generate": "growing:candidates_generate",
            "intake": "growing:intake",
            "promote": "golden:promote",
        },
    ),
    "labels": Group(
        "Expert labels for calibration: a review sheet, reading it back, planning, checking, selection.",
        {
            "sheet": "growing:sample",
            "read": "growing:sample_labels",
            "from-results": "growing:labels_from_results",
            "import": "label_tools:labels_import",
            "page": "expert_labels:labels_page",
            "reconcile": "expert_labels:labels_reconcile",
            "plan": "trust:calibrate_plan",
            "check": "trust:calibrate_check",
            "select": "trust:calibrate_select",
        },
    ),
    "judge": Group(
        "A calibrated judge: whether it is trusted, corrected rates, failure modes, bias probes, a cascade, "
        "a jury's weights, "
        "a rubric refined on labels it is then measured apart from.",
        {
            "trust": "calibrate:trust",
            "failure-rate": "calibrate:failure_rate",
            "failure-modes": "trust:failure_modes",
            "probe-bias": "trust:probe_bias",
            "fit-cascade": "cascade:fit_cascade",
            "fit-jury": "jury:fit_jury",
            "refine": "refine:refine",
            "canary": "canary:canary_check",
            "canary-set": "canary:canary_set",
        },
    ),
    "import": Group(
        "Turn trajectories recorded by other harnesses into judgekit transcripts.",
        {
            "tau-bench": "runs:import_tau_bench",
            "tau2-bench": "runs:import_tau2_bench",
            "openai": "runs:import_openai",
            "anthropic": "runs:import_anthropic",
            "otel": "trust:import_otel",
            "inspect": "inspect_logs:import_inspect",
        },
    ),
    "export": Group(
        "Write cases or verdicts for other tools: a test set, OpenTelemetry evaluation events, scores on "
        "copies of Inspect logs.",
        {"cases": "golden:export", "otel": "trust:export_otel", "inspect": "inspect_logs:export_inspect"},
    ),
    "rubrics": Group(
        "List, show and validate rubric files for the judge layer.",
        {"list": "judge:list_rubrics", "show": "judge:show_rubric", "check": "judge:check_rubrics"},
    ),
    "cassette": Group(
        "Inspect and compact judge cassettes (recorded judge replies).",
        {"stats": "judge:cassette_stats", "compact": "judge:cassette_compact"},
    ),
    "contamination": Group(
        "Keep golden cases out of training data: keyed hash index, canaries, export scanner.",
        {
            "keygen": "contamination:keygen",
            "index": "contamination:index",
            "canary": "contamination:canary",
            "scan": "contamination:scan",
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

    def list_commands(self, ctx: Any) -> list[str]:
        """The names, in order, without building the commands (typer's own looks every one up)."""
        return list(self.commands)


def _moved(old: str) -> Callable[..., None]:
    """The hidden command that stands for the old top-level name ``old``: it only says where it went."""

    def moved(ctx: typer.Context) -> None:
        raise JudgekitError(_moved_message([old, *ctx.args]))

    moved.__doc__ = f"Moved: see {RENAMED[old]!r}."
    return moved


def command_function(ref: str) -> Callable[..., Any]:
    """The command function a reference names, its module imported now.

    Args:
        ref: ``"module:function"``, the module below :mod:`judgekit.commands` (``"runs:grade"``).

    Returns:
        The function (``judgekit.commands.runs.grade``).
    """
    module, _, name = ref.partition(":")
    function: Callable[..., Any] = getattr(importlib.import_module(f"judgekit.commands.{module}"), name)
    return function


_MOVED_SETTINGS: dict[str, Any] = {
    "hidden": True,
    "add_help_option": False,
    "context_settings": {"allow_extra_args": True, "ignore_unknown_options": True},
}


def _moved_names() -> list[str]:
    """The old top-level names that are neither a command nor a group now."""
    return [
        old
        for old in dict.fromkeys(path.split()[0] for path in RENAMED)
        if old not in TOP and old not in GROUPS
    ]


def _group_app(group: Group) -> typer.Typer:
    """A group's typer application without its commands (:func:`register` adds them; :class:`Root` lazily)."""
    return typer.Typer(help=group.help, no_args_is_help=True, cls=_Group)


def register(app: typer.Typer) -> None:
    """Add every command, every group and every old name's pointer to a typer application, all built at once.

    ``judgekit`` itself builds its tree lazily (:class:`Root`); this builds the same tree eagerly into any
    typer application (every command module is imported now).

    Args:
        app: The application; each call builds fresh groups, so it may be called for any number of
            applications.
    """
    for name, ref in TOP.items():
        app.command(name)(command_function(ref))
    for name, group in GROUPS.items():
        sub = _group_app(group)
        for command_name, ref in group.commands.items():
            sub.command(command_name)(command_function(ref))
        app.add_typer(sub, name=name)
    for old in _moved_names():
        app.command(old, **_MOVED_SETTINGS)(_moved(old))


class LazyCommands(MutableMapping[str, Any]):
    """A group's subcommands by name, in order, each built the first time it is looked up.

    The names (iteration, ``len``, ``in``) cost nothing; looking a command up (``[]``, ``get``, ``items``)
    builds it and hands it to ``finish`` (which polishes its help) once.

    Args:
        builders: Subcommand name to a function building its click command, in listing order.
        finish: Called with each command's name and the command once it is built.
    """

    def __init__(self, builders: dict[str, Callable[[], Any]], finish: Callable[[str, Any], None]) -> None:
        self._builders = dict(builders)
        self._built: dict[str, Any] = {}
        self._finish = finish

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            command = self._builders[name]()
            self._finish(name, command)
            self._built[name] = command
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._builders[name] = lambda: command
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._builders[name]
        self._built.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._builders

    def __iter__(self) -> Iterator[str]:
        return iter(self._builders)

    def __len__(self) -> int:
        return len(self._builders)


class _Lazy:
    """What a lazily built command needs from the root: typer's settings and the help options."""

    def __init__(self, root: TyperGroup, help_option_names: list[str]) -> None:
        self.markup: Any = root.rich_markup_mode
        self.suggest: bool = getattr(root, "suggest_commands", True)
        self.help_option_names = help_option_names

    def command(self, name: str, callback: Callable[..., Any], **settings: Any) -> Any:
        """A command built by typer as ``app.command(name, **settings)(callback)`` would build it."""
        scratch = typer.Typer()
        scratch.command(name, **settings)(callback)
        # pretty_exceptions_short: typer's default; judgekit's application turns pretty exceptions off
        return typer.main.get_command_from_info(
            scratch.registered_commands[0], pretty_exceptions_short=True, rich_markup_mode=self.markup
        )

    def group(self, name: str, group: Group) -> Any:
        """A group built by typer as :func:`register` adds it, its commands left to build when looked up."""
        scratch = typer.Typer()
        scratch.add_typer(_group_app(group), name=name)
        built = typer.main.get_group_from_info(
            scratch.registered_groups[0],
            pretty_exceptions_short=True,
            suggest_commands=self.suggest,
            rich_markup_mode=self.markup,
        )
        built.commands = self.commands(
            {sub: self._builder(sub, ref) for sub, ref in group.commands.items()}, (name,)
        )
        return built

    def _builder(self, name: str, ref: str) -> Callable[[], Any]:
        return lambda: self.command(name, command_function(ref))

    def _moved_builder(self, old: str) -> Callable[[], Any]:
        return lambda: self.command(old, _moved(old), **_MOVED_SETTINGS)

    def _group_builder(self, name: str, group: Group) -> Callable[[], Any]:
        return lambda: self.group(name, group)

    def commands(self, builders: dict[str, Callable[[], Any]], path: tuple[str, ...]) -> LazyCommands:
        """The lazy subcommands below ``path``, each polished (metavars, examples) once it is built."""
        return LazyCommands(
            builders, lambda name, command: polish(command, self.help_option_names, (*path, name))
        )

    def top(self) -> LazyCommands:
        """The top level: the main jobs, the old names' pointers, then the groups (typer's order)."""
        builders: dict[str, Callable[[], Any]] = {name: self._builder(name, ref) for name, ref in TOP.items()}
        for old in _moved_names():
            builders[old] = self._moved_builder(old)
        for name, group in GROUPS.items():
            builders[name] = self._group_builder(name, group)
        return self.commands(builders, ())


class Root(PolishedGroup):
    """The ``judgekit`` group: the tree of :data:`TOP` and :data:`GROUPS`, each command built when used."""

    def __init__(self, **attrs: Any) -> None:
        """Build the group as typer does (its own options), with the tree's commands built on demand.

        Args:
            **attrs: What typer passes to a group.
        """
        super().__init__(**attrs)
        names = (self.context_settings or {}).get("help_option_names") or ["--help"]
        self.commands = _Lazy(self, list(names)).top()

    def list_commands(self, ctx: Any) -> list[str]:
        """The names, in order, without building the commands."""
        return list(self.commands)
