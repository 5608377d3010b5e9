"""Every command's help reads like a good command line's: metavars, not Python types; examples that parse.

The commands are walked from the application itself, so a new command or option cannot skip the rules.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main

from judgekit.cli import app, main
from judgekit.commands.examples import EXAMPLES
from judgekit.commands.helptext import examples_epilog, metavar_for, wrap_command


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, command
    for name, child in sorted(getattr(command, "commands", {}).items()):
        if not child.hidden:  # an old name pointing to its new place (tests/commands/test_tree.py)
            yield from _commands(child, (*path, name))


ROOT = typer.main.get_command(app)
COMMANDS = list(_commands(ROOT))
IDS = [" ".join(path) or "judgekit" for path, _ in COMMANDS]
TYPE_MARKERS = ("<bool>", "<str>", "<int>", "<float>", "<path>", "<list[", "{")


def _help(capsys: pytest.CaptureFixture[str], path: tuple[str, ...]) -> str:
    capsys.readouterr()
    assert main([*path, "--help"]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=IDS)
def test_help_shows_no_python_types(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, path: tuple[str, ...], command: Any
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    text = _help(capsys, path)
    usage = next(line for line in text.splitlines() if "Usage:" in line)
    assert "{" not in usage, usage
    table = text.split("Examples:")[0]  # help texts of options may quote JSON ({"id", ...}); types may not
    for marker in TYPE_MARKERS[:-1]:
        assert marker not in table, f"{' '.join(path)}: {marker} in\n{text}"
    for param in command.params:
        if getattr(param, "hidden", False):
            continue
        shown = param.display_type_rich(None) if param.param_type_name == "argument" else param.metavar
        assert shown is not None
        assert not re.search(r"[<>{}]|list\[|\b(bool|str|int|float|Path)\b", shown), (param.name, shown)


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=IDS)
def test_every_option_and_argument_says_what_it_is_for(path: tuple[str, ...], command: Any) -> None:
    for param in command.params:
        if getattr(param, "hidden", False):
            continue
        text = " ".join((param.help or "").split())
        assert text, f"{' '.join(path)} {param.name}: no help"
        assert text[-1] in ".)", f"{' '.join(path)} {param.name}: help is not a sentence: {text!r}"


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=IDS)
def test_every_command_ends_its_help_with_examples(
    capsys: pytest.CaptureFixture[str], path: tuple[str, ...], command: Any
) -> None:
    assert EXAMPLES.get(" ".join(path)), (
        f"no examples for {' '.join(path) or 'judgekit'} in commands/examples.py"
    )
    text = _help(capsys, path)
    assert "Examples:" in text
    first = EXAMPLES[" ".join(path)][0]
    assert first.what in text
    assert text.rstrip().endswith(wrap_command(EXAMPLES[" ".join(path)][-1].command)[-1].strip())


def _resolve(words: list[str]) -> tuple[Any, list[str], list[str]]:
    """The command an example's words name, the path to it and its remaining arguments."""
    command: Any = ROOT
    path: list[str] = []
    while words and getattr(command, "commands", None) and words[0] in command.commands:
        path.append(words[0])
        command = command.commands[words.pop(0)]
    return command, path, words


REPO = Path(__file__).resolve().parents[1]


def _files_named_in(words: list[str], where: Path) -> None:
    """Create, below ``where``, every file and folder an example names (``examples/`` is the repository's)."""
    (where / "examples").symlink_to(REPO / "examples", target_is_directory=True)
    for word in words:
        if word.startswith(("-", "/", "examples/")) or ("." not in word and "/" not in word):
            continue
        target = where / word
        if word.endswith("/"):
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("", encoding="utf-8")


EXAMPLE_LINES = [(key, example) for key, examples in sorted(EXAMPLES.items()) for example in examples]


@pytest.mark.parametrize(
    ("key", "example"), EXAMPLE_LINES, ids=[f"{k or 'judgekit'}: {e.what}" for k, e in EXAMPLE_LINES]
)
def test_every_example_parses(
    key: str, example: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    words = shlex.split(example.command)
    _files_named_in(words, tmp_path)
    monkeypatch.chdir(tmp_path)
    assert words[0] == "judgekit"
    command, path, rest = _resolve(words[1:])
    if not key:  # the root's examples show other commands
        assert path, example.command
    else:
        assert " ".join(path) == key or not getattr(command, "commands", None), example.command
    assert not getattr(command, "commands", None), f"{example.command}: names a group, not a command"
    ctx = command.make_context(" ".join(["judgekit", *path]), rest, resilient_parsing=False)
    assert not ctx.args, f"{example.command}: left over {ctx.args}"
    ctx.close()


def test_the_examples_name_only_commands_that_exist() -> None:
    known = {" ".join(path) for path, _ in COMMANDS}
    assert set(EXAMPLES) <= known, set(EXAMPLES) - known


def test_metavars_follow_the_parameter() -> None:
    grade = ROOT.commands["grade"]  # type: ignore[attr-defined]
    shown = {p.name: p.metavar for p in grade.params}
    assert shown["cases"] == "DIR"
    assert shown["out"] == "FILE"
    assert shown["concurrency"] == "N"
    assert shown["max_cost"] == "X"
    assert shown["judge_model"] == "MODEL"
    assert shown["judge_api_base"] == "URL"
    assert shown["resume"] == ""
    validate = ROOT.commands["cases"].commands["check"]  # type: ignore[attr-defined]
    paths = next(p for p in validate.params if p.name == "paths")
    assert metavar_for(paths) == "PATH"
    assert paths.display_type_rich(None) == "PATH..."
    assert validate.collect_usage_pieces(validate.context_class(validate)) == ["[OPTIONS]", "PATHS..."]


def test_a_missing_argument_is_named_as_the_usage_line_names_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cases", "check"]) == 2
    assert "Missing argument 'PATHS'" in capsys.readouterr().err


def test_long_examples_wrap_between_options_as_shell_lines() -> None:
    command = (
        "judgekit grade --cases examples/airdesk --transcripts examples/airdesk/runs/agent-v2.jsonl "
        "--out v2.jsonl --resume"
    )
    lines = wrap_command(command, width=60)
    assert len(lines) > 1
    assert all(line.endswith(" \\") for line in lines[:-1])
    assert all(line.startswith("  --") for line in lines[1:])
    assert shlex.split(" ".join(line.removesuffix("\\") for line in lines)) == shlex.split(command)
    assert "--transcripts examples/airdesk/runs/agent-v2.jsonl" in "\n".join(lines)


def test_examples_follow_an_existing_epilog() -> None:
    examples = EXAMPLES["cases check"]
    text = examples_epilog(examples, "See docs/cases.md.")
    assert text.startswith("See docs/cases.md.\n\nExamples:\n")
    assert examples[0].command in text


def test_the_help_wraps_inside_the_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    text = _help(capsys, ("grade",))
    assert max(len(line) for line in text.splitlines()) <= 80


#: A help line that starts with a marker: the marker was cut off from the sentence it belongs to.
_DETACHED_MARKER = re.compile(r"(\[default: [^\]]*\]|\[default:|\[required\])(\s|$)")


@pytest.mark.parametrize("columns", ["80", "100"])
def test_no_default_or_required_marker_sits_alone_on_a_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, columns: str
) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    alone: list[str] = []
    for path, _ in COMMANDS:
        for line in _help(capsys, path).splitlines():
            cells = [cell.strip() for cell in line.strip().strip("│").split("  ") if cell.strip()]
            if cells and _DETACHED_MARKER.match(cells[-1]):
                alone.append(f"{' '.join(path) or 'judgekit'}: {line.rstrip()}")
    assert not alone, "a marker on a line of its own:\n" + "\n".join(alone)


def test_the_marker_check_sees_a_detached_marker() -> None:
    assert _DETACHED_MARKER.match("[default: text]")
    assert _DETACHED_MARKER.match("[required]")
    assert _DETACHED_MARKER.match("[default: regression,")
    assert not _DETACHED_MARKER.match("per trial. [required]")
    assert not _DETACHED_MARKER.match("default: pass/fail verdicts.")


def test_a_help_cell_keeps_the_marker_with_the_last_word() -> None:
    from rich.console import Console
    from rich.text import Text

    from judgekit.commands.helpcells import HelpCell

    cell = HelpCell(Text("Results file to write, one line per trial."), [Text("[required]")])
    assert [line.plain for line in cell.lines(Console(), 21)] == [
        "Results file to",
        "write, one line per",
        "trial. [required]",
    ]
    narrow = HelpCell(Text("Tokens per shingle."), [Text("[default: 13]")])
    lines = [line.plain for line in narrow.lines(Console(), 17)]
    assert lines == ["Tokens per", "shingle. [default", ": 13]"]


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=IDS)
def test_help_paragraphs_are_wrapped_by_the_terminal_not_the_docstring(
    capsys: pytest.CaptureFixture[str], path: tuple[str, ...], command: Any
) -> None:
    _help(capsys, path)  # the help is polished as it is shown
    item = re.compile(r"(?:[-*\u2022]|[0-9]+[.)])\s")
    for paragraph in (command.help or "").split("\n\n"):
        if paragraph.startswith("\b"):
            continue
        for line in paragraph.split("\n")[1:]:
            assert item.match(line.strip()) or line.startswith("    "), (
                f"{' '.join(path)}: a line break inside a sentence: {line!r}"
            )


def test_a_long_paragraph_fills_the_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "140")
    text = _help(
        capsys,
        ("judge", "probe-bias"),
    )
    [line] = [line for line in text.splitlines() if "Each probe re-asks" in line]
    assert "flip rate" in line  # the docstring breaks the sentence before it; the terminal does not
