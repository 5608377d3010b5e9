"""Help that reads like a good command line's, applied to every command at once.

Typer shows each parameter's Python type (``<bool>``, ``<list[Path]>``) and writes required arguments as
``{labels}`` in the usage line. :func:`polish` walks the click command tree typer builds and gives every
parameter a metavar chosen from its type, its name and its help text (``FILE``, ``DIR``, ``PATH``, ``N``,
``X``, ``TEXT``, ``MODEL``; flags get none), writes arguments as ``LABELS`` / ``[LABELS]`` in the usage
line, and ends each command's help with its examples from :mod:`judgekit.commands.examples`. Nothing is
declared per option, so a new option gets a metavar too.

Typer lays an option's help and its ``[default: ...]`` / ``[required]`` markers out as rich ``Columns``, so a
help text that fills its cell pushes the marker onto a line of its own;
:class:`~judgekit.commands.helpcells.HelpCell` renders them as one paragraph. Rich and typer's help
renderer (``typer.rich_utils``, which imports rich's Markdown and traceback modules: about a tenth of a
second) are imported only when a help text is shown: every polished command's context installs the help
cells in :meth:`HelpContext.get_help`, so a command that only runs never imports them.
"""

from __future__ import annotations

import inspect
import re
import typing
from pathlib import Path
from typing import Any

from typer import _click
from typer.core import TyperArgument, TyperGroup, TyperOption

from judgekit.commands.examples import EXAMPLES, Example

#: Names (or name endings) of text parameters that deserve a more telling metavar than ``TEXT``.
_TEXT_METAVARS: tuple[tuple[str, str], ...] = (
    ("model", "MODEL"),
    ("api_base", "URL"),
    ("format", "FORMAT"),
    ("fmt", "FORMAT"),
    ("fingerprint", "FINGERPRINT"),
    ("rubric", "RUBRIC"),
    ("_id", "ID"),
    ("ids", "ID"),
    ("holdout", "ID"),
    ("criterion", "ID"),
    ("rev", "REV"),
)


#: Words of a path parameter's help that say it is a folder, or a file.
_DIR_WORDS = frozenset({"folder", "folders", "directory", "directories"})
#: "folders or case files", "files or folders": a parameter that takes either.
_EITHER = re.compile(r"(folder|director)\w*(\(s\))? or |files? or (folder|director)")
_FILE_WORDS = frozenset(
    {
        "file",
        "files",
        "json",
        "jsonl",
        "csv",
        "tsv",
        "yaml",
        "yml",
        "results",
        "record",
        "report",
        "sheet",
        "table",
        "cassette",
        "database",
        "index",
        "export",
        "key",
        "trace",
        "transcripts",
    }
)


def _element(annotation: Any) -> Any:
    """The element type of ``list[X]`` (else the annotation itself)."""
    if typing.get_origin(annotation) in (list, tuple):
        args = [a for a in typing.get_args(annotation) if a is not Ellipsis]
        return args[0] if args else str
    return annotation


def _path_metavar(param: TyperArgument | TyperOption) -> str:
    """``FILE``, ``DIR`` or ``PATH``, from the declared file/dir checks, else from the help text."""
    info = param.type_descriptor.parameter_info
    if getattr(info, "file_okay", True) is False:
        return "DIR"
    if getattr(info, "dir_okay", True) is False:
        return "FILE"
    text = (param.help or "").lower()
    name = param.name or ""
    words = re.findall(r"[a-z]+", text)
    dir_at = next((i for i, w in enumerate(words) if w in _DIR_WORDS), None)
    file_at = next((i for i, w in enumerate(words) if w in _FILE_WORDS), None)
    if dir_at is not None and file_at is not None:
        if _EITHER.search(text):
            return "PATH"
        if name in {"out", "output"}:
            return "DIR"  # "write the report into this folder"
        return "DIR" if dir_at < file_at else "FILE"
    if dir_at is not None:
        return "DIR"
    if file_at is not None:
        return "FILE"
    if name in {"records", "cases", "set_path"}:
        return "DIR"
    if name in {"out", "output", "policy", "baseline", "labels"}:
        return "FILE"
    return "PATH"


def metavar_for(param: TyperArgument | TyperOption) -> str:
    """The metavar a parameter is shown with: none for a flag, else one word naming what it takes.

    Args:
        param: A typer option or argument.

    Returns:
        ``""`` for a flag; ``FILE``, ``DIR`` or ``PATH`` for paths; ``N`` for integers, ``X`` for other
        numbers; the choices joined by ``|`` for a choice; ``MODEL``, ``URL``, ``FORMAT``, ``ID`` ... or
        ``TEXT`` for text.
    """
    if isinstance(param, TyperOption) and (param.is_flag or param.count):
        return ""
    descriptor = param.type_descriptor
    if descriptor.is_choice and descriptor.choices:
        return "|".join(str(getattr(c, "value", c)) for c in descriptor.choices)
    if descriptor.is_path:
        return _path_metavar(param)
    kind = _element(descriptor.annotation)
    if kind is bool:
        return ""
    if kind is int:
        return "N"
    if kind is float:
        return "X"
    if isinstance(kind, type) and issubclass(kind, Path):
        return _path_metavar(param)
    name = param.name or ""
    for suffix, metavar in _TEXT_METAVARS:
        if name == suffix or name.endswith(suffix):
            return metavar
    return "TEXT"


class _Argument(TyperArgument):
    """A typer argument shown as ``NAME`` (required) or ``[NAME]`` with its kind (``FILE``) as its type."""

    def display_type_rich(self, ctx: _click.Context) -> str | None:
        """The argument's kind (``FILE``, ``DIR``, ``TEXT``), never a Python type."""
        kind = metavar_for(self)
        return f"{kind}..." if self.nargs != 1 and kind else kind

    def get_usage_pieces(self, ctx: _click.Context) -> list[str]:
        """``NAME``, ``[NAME]``, ``NAME...`` or ``[NAME]...`` in the usage line."""
        name = self.display_name_raw
        piece = name if self.required else f"[{name}]"
        return [f"{piece}..." if self.nargs != 1 else piece]


def _polish_param(param: Any) -> None:
    if isinstance(param, TyperArgument):
        if param.metavar is None:
            param.metavar = (param.name or "arg").upper()
        if type(param) is TyperArgument:
            param.__class__ = _Argument
    elif isinstance(param, TyperOption) and param.metavar is None:
        param.metavar = metavar_for(param)


def wrap_command(command: str, width: int = 76) -> list[str]:
    """A long command line as shell lines ending in a backslash, broken before options, within ``width``.

    Args:
        command: The command line.
        width: The longest line wanted (a single long word may exceed it).

    Returns:
        The lines; the continuation lines are indented by two spaces.
    """
    lines: list[str] = []
    current = ""
    for word in _words(command):
        candidate = f"{current} {word}" if current else word
        if current and len(candidate) > width - 2 and word.startswith("-"):
            lines.append(f"{current} \\")
            current = f"  {word}"
        else:
            current = candidate
    lines.append(current)
    return lines


def _words(command: str) -> list[str]:
    """The command's words, an option kept with its value (``--out FILE``) so lines break between options."""
    words: list[str] = []
    for word in command.split(" "):
        if words and words[-1].startswith("-") and " " not in words[-1] and not word.startswith("-"):
            words[-1] = f"{words[-1]} {word}"
        else:
            words.append(word)
    return words


def examples_epilog(examples: tuple[Example, ...], existing: str | None = None) -> str:
    """The ``Examples:`` block that ends a command's help (after any epilog it already has).

    Args:
        examples: The command's examples.
        existing: The command's own epilog, kept in front.

    Returns:
        The new epilog.
    """
    parts = []
    for example in examples:
        command = "\n".join(f"    {line}" for line in wrap_command(example.command))
        parts.append(f"  {example.what}:\n{command}")
    block = "Examples:\n" + "\n".join(parts)
    return f"{existing.rstrip()}\n\n{block}" if existing else block


_ITEM = re.compile(r"(?:[-*•]|[0-9]+[.)])\s")


def reflow(help_text: str) -> str:
    r"""A command's help with each paragraph on one line, so the terminal, not the docstring, wraps it.

    Rich help keeps a docstring's single line breaks, which break sentences at the source's width
    rather than the terminal's. Paragraphs (separated by a blank line) are joined into one line each;
    a list item (a line starting ``-``, ``*`` or ``1.``) starts a new line, and its continuation lines
    join it; indented lines and a paragraph starting ``\b`` are kept as written.

    Args:
        help_text: The command's help (a docstring, indented or not).

    Returns:
        The help, reflowed.

    Example:
        >>> reflow("Grade a run.\n\n    Exit 1 when a\n    threshold is missed.\n    - one\n      item")
        'Grade a run.\n\nExit 1 when a threshold is missed.\n- one item'
    """
    paragraphs = []
    for paragraph in inspect.cleandoc(help_text).split("\n\n"):
        if paragraph.startswith("\b"):
            paragraphs.append(paragraph)
            continue
        lines: list[str] = []
        for line in paragraph.split("\n"):
            stripped = line.strip()
            if lines and stripped and not _ITEM.match(stripped) and not line.startswith("    "):
                lines[-1] = f"{lines[-1]} {stripped}"
            else:
                lines.append(line.rstrip())
        paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs)


class HelpContext(_click.Context):
    """A command's context that installs the help cells before it renders the command's help.

    Every way a help text is shown (``--help``, ``-h``, a group called without a subcommand) asks the
    context for it, so this is where rich and typer's help renderer are first imported.
    """

    def get_help(self) -> str:
        """The command's help, rendered with :class:`~judgekit.commands.helpcells.HelpCell` cells."""
        from judgekit.commands.helpcells import install_help_cells

        install_help_cells()
        return super().get_help()


def polish(command: Any, help_option_names: list[str], path: tuple[str, ...] = ()) -> None:
    """Give every parameter of a command tree a metavar, and every command its examples.

    Args:
        command: The click command or group typer built (its subcommands are walked).
        help_option_names: The help options in force (``-h``, ``--help``): the help option is created
            with them so that it is shown as a flag, not as ``<bool>``.
        path: The command's path below ``judgekit`` (for looking up its examples).
    """
    for param in command.params:
        _polish_param(param)
    command.context_class = HelpContext
    ctx = command.context_class(command, info_name=path[-1] if path else "judgekit")
    ctx.help_option_names = list(help_option_names)
    help_option = command.get_help_option(ctx)
    if help_option is not None:
        help_option.metavar = ""
    if command.help:
        command.help = reflow(command.help)
    examples = EXAMPLES.get(" ".join(path), ())
    if examples and "Examples:" not in (command.epilog or ""):
        command.epilog = examples_epilog(examples, command.epilog)
    children = getattr(command, "commands", {})
    if isinstance(children, dict):  # built commands; lazily built ones are polished as they are built
        for name, child in children.items():
            polish(child, help_option_names, (*path, name))


class PolishedGroup(TyperGroup):
    """The root group: once typer has built the whole command tree, :func:`polish` it.

    Typer builds the click commands anew on every run (and for ``docs/gen_cli_reference.py``), and the
    root group is built last, with every subcommand in hand, so its constructor is the one place that
    sees the whole tree each time.
    """

    def __init__(self, **attrs: Any) -> None:
        """Build the group as typer does, then polish its tree.

        Args:
            **attrs: What typer passes to a group.
        """
        super().__init__(**attrs)
        names = (self.context_settings or {}).get("help_option_names") or ["--help"]
        polish(self, list(names))
