"""The command tree: at most 16 top-level entries, each group built in one module, old names point to new."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
import typer
import typer.main

from judgekit.cli import app, main
from judgekit.commands.helptext import PolishedGroup
from judgekit.commands.tree import GROUPS, RENAMED, TOP, register

SRC = Path(__file__).resolve().parents[2] / "src" / "judgekit"


def _visible(command: Any, path: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Every visible command and group path below ``command``."""
    found = {path} if path else set()
    for name, child in getattr(command, "commands", {}).items():
        if not child.hidden:
            found |= _visible(child, (*path, name))
    return found


ROOT = typer.main.get_command(app)


def test_the_top_level_holds_at_most_16_entries_the_main_jobs_then_the_groups(
    capsys: pytest.CaptureFixture[str],
) -> None:
    top = [name for name, command in ROOT.commands.items() if not command.hidden]  # type: ignore[attr-defined]
    assert len(top) <= 16
    assert top == [*TOP, *GROUPS]
    assert main(["--help"]) == 0
    listed = capsys.readouterr().out
    for old in ("validate", "sample-labels", "calibrate-check", "export-otel", "golden"):
        assert f"│ {old} " not in listed  # the old names are hidden


@pytest.mark.parametrize(("old", "new"), RENAMED.items(), ids=list(RENAMED))
def test_an_old_name_says_where_it_went_and_exits_2(
    old: str, new: str, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main([*old.split(), "examples/airdesk", "--format", "json"]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"error: '{old}' is now 'judgekit {new}'\n")
    assert tuple(new.split()) in _visible(ROOT)  # the new place exists
    assert old in GROUPS or tuple(old.split()) not in _visible(ROOT)  # export became a group


@pytest.mark.parametrize("old", [old for old in RENAMED if old.split()[0] not in GROUPS])
def test_an_old_name_never_runs_not_even_its_help(old: str, capsys: pytest.CaptureFixture[str]) -> None:
    for args in ([], ["--help"], ["-h"]):
        capsys.readouterr()
        assert main([*old.split(), *args]) == 2
        assert capsys.readouterr() == ("", f"error: '{old}' is now 'judgekit {RENAMED[old]}'\n")


def test_a_near_miss_in_a_former_command_keeps_the_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "otle"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: No such command 'otle'")
    assert "'otel'" in err
    assert main(["export"]) == 2  # a group without a subcommand shows its help, as every group does
    assert "judgekit export cases" in capsys.readouterr().out


def _builders(tree: ast.AST) -> list[str]:
    """What a module calls to build command groups: ``typer.Typer(...)``, ``.add_typer(...)``."""
    found: list[str] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr == "add_typer" or (
            node.func.attr == "Typer"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "typer"
        ):
            found.append(node.func.attr)
    return found


def test_every_group_is_built_in_one_module() -> None:
    builders = {
        path.relative_to(SRC).as_posix(): calls
        for path in sorted(SRC.rglob("*.py"))
        if (calls := _builders(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert set(builders) == {"cli.py", "commands/tree.py"}, builders
    assert builders["cli.py"] == ["Typer"]  # the root application only
    groups = [name for name, command in ROOT.commands.items() if hasattr(command, "list_commands")]  # type: ignore[attr-defined]
    assert groups == list(GROUPS)
    assert len(set(groups)) == len(groups)


def test_the_tree_does_not_depend_on_registration_order_or_count() -> None:
    first, second = typer.Typer(), typer.Typer()
    register(first)
    register(second)
    register(second)  # a second registration into another app must not add to the first's groups
    one, two = typer.main.get_command(first), typer.main.get_command(second)
    assert _visible(one) == _visible(ROOT)
    assert {name: sorted(group.commands) for name, group in GROUPS.items()} == {
        name: sorted(one.commands[name].commands)  # type: ignore[attr-defined]
        for name in GROUPS
    }
    assert _visible(two) == _visible(one)
    assert all(
        len(group.commands) == len(GROUPS[name].commands)
        for name, group in two.commands.items()
        if name in GROUPS
    )  # type: ignore[attr-defined]


def _shape(command: Any, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], tuple[Any, ...]]:
    """Every command below ``command``: its class, help, examples, flags and each parameter (with metavar)."""
    params = tuple(
        (
            type(p).__name__,
            p.name,
            tuple(p.opts),
            tuple(p.secondary_opts),
            repr(p.default),
            p.required,
            p.help,
            p.metavar,
        )
        for p in command.params
    )
    polished = (
        command.help,
        command.epilog,
        command.context_class.__name__,
    )  # reflowed, examples, help cells
    found = {path: (type(command).__name__, *polished, command.hidden, command.no_args_is_help, params)}
    for name in command.list_commands(None) if hasattr(command, "list_commands") else ():
        found |= _shape(command.commands[name], (*path, name))
    return found


def test_the_lazily_built_tree_is_the_tree_register_builds() -> None:
    """judgekit builds each command when it is looked up; it is the command register() builds at once."""
    eager = typer.Typer(cls=PolishedGroup, add_completion=False)
    register(eager)
    eager_tree = _shape(typer.main.get_command(eager))  # every command built now, and polished
    lazy_tree = _shape(typer.main.get_command(app))
    assert list(lazy_tree) == list(eager_tree)  # the same commands, in the same order
    for path in list(lazy_tree)[1:]:  # the root's own help and options are the application's
        assert lazy_tree[path] == eager_tree[path], path
    assert len(lazy_tree) > 60


def test_looking_up_one_command_builds_that_command_only() -> None:
    root = typer.main.get_command(app)
    commands = root.commands  # type: ignore[attr-defined]
    assert list(commands) == [*TOP, *[n for n in commands if n not in TOP and n not in GROUPS], *GROUPS]
    grade = commands["grade"]
    assert grade.name == "grade"
    assert any(p.name == "out" for p in grade.params)
    assert commands["grade"] is grade  # built once
    built = [name for name in commands if name in commands._built]  # what was built
    assert built == ["grade"]
    group = commands["judge"]
    assert list(group.commands) == list(GROUPS["judge"].commands)
    assert group.commands._built == {}  # a group's commands wait until looked up


def test_check_is_spelt_one_way() -> None:
    names = {path[-1] for path in _visible(ROOT)}
    assert {"validate", "calibrate-check", "check-rubrics"}.isdisjoint(names)
    assert {("cases", "check"), ("labels", "check"), ("rubrics", "check")} <= _visible(ROOT)
