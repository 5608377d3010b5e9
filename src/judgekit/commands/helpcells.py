"""Help cells: an option's help and its ``[default: ...]`` / ``[required]`` markers as one wrapped paragraph.

Typer lays an option's help and its markers out as rich ``Columns``, so a help text that fills its cell
pushes the marker onto a line of its own. :class:`HelpCell` renders the help and the markers as one
wrapped paragraph instead, the first marker kept on the line of the help's last word
(:func:`install_help_cells`).

This module imports rich and typer's help renderer (``typer.rich_utils``), so it is imported only when a
help text is shown (:class:`judgekit.commands.helptext.HelpContext`), never by a command that only runs.

``typer.rich_utils`` imports ``rich.markdown`` (markdown-it, pygments) and ``rich.traceback`` (rich's
pretty printer, attrs) at its top, about 0.06 CPU-seconds, a third of ``judgekit --help``, for two names
judgekit's help never uses: ``Markdown`` renders help only in typer's ``"markdown"`` markup mode
(judgekit's is ``"rich"``) and ``Traceback`` only typer's pretty exceptions (off in judgekit).
:func:`_import_rich_utils` imports it with those two names standing in for the real classes: a stand-in
imports its module and hands over the real class the first time it is called or read (so typer behaves
the same if it ever uses one), and the stand-in modules are removed from ``sys.modules`` once typer has
its names, so any later ``import rich.markdown`` imports the real module.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from rich.columns import Columns
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text
from typer import _click
from typer.core import TyperArgument, TyperOption

__all__ = ["HelpCell", "install_help_cells"]

#: What typer.rich_utils imports at its top and judgekit's help never calls: module, class name.
_UNUSED_BY_HELP = (("rich.markdown", "Markdown"), ("rich.traceback", "Traceback"))


class _LateClass(type):
    """A stand-in class's type: reading an attribute (``Traceback.from_exception``) reads the real class's."""

    module: str
    name: str

    def real(cls) -> Any:
        """The real class, its module imported now."""
        return getattr(importlib.import_module(cls.module), cls.name)

    def __getattr__(cls, attr: str) -> Any:
        return getattr(cls.real(), attr)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls.real()(*args, **kwargs)


def _import_rich_utils() -> types.ModuleType:
    """``typer.rich_utils``, imported with stand-ins for the rich modules judgekit's help does not use."""
    if "typer.rich_utils" in sys.modules:
        return sys.modules["typer.rich_utils"]
    stand_ins: dict[str, types.ModuleType] = {}
    for module, name in _UNUSED_BY_HELP:
        if module not in sys.modules:
            stand_in = types.ModuleType(module, f"Stand-in for {module} while typer.rich_utils is imported.")
            setattr(stand_in, name, _LateClass(name, (), {"module": module, "name": name}))
            stand_ins[module] = sys.modules[module] = stand_in
    try:
        return importlib.import_module("typer.rich_utils")
    finally:
        for module, stand_in in stand_ins.items():
            if sys.modules.get(module) is stand_in:
                del sys.modules[module]


if TYPE_CHECKING:
    from typer import rich_utils
else:
    rich_utils = _import_rich_utils()


def _text_words(text: Text) -> list[Text]:
    """The words of a one-line text (runs of spaces dropped), each keeping its styles."""
    return [word for word in text.split(" ") if word.plain]


def _glue(words: list[Text]) -> Text:
    joined = Text()
    for i, word in enumerate(words):
        if i:
            joined.append(" ")
        joined.append_text(word)
    return joined


def _fill(units: list[Text], width: int) -> list[Text]:
    """Lay units out greedily, one space between them, in lines of at most ``width`` cells."""
    lines: list[Text] = []
    for unit in units:
        if lines and lines[-1].cell_len + 1 + unit.cell_len <= width:
            lines[-1].append(" ")
            lines[-1].append_text(unit)
        else:
            lines.append(unit.copy())
    return lines


class HelpCell(Columns):
    """An option's help and its markers (``[default: 8]``, ``[required]``) as one wrapped paragraph.

    The markers follow the help's last word on its line; when the whole tail does not fit the cell, the
    help's last word stays with the first marker word (``[default:``), cut at the cell's width when even
    that does not fit, so a marker never starts a line of its own.

    Args:
        help_text: The help (``None``: the option has none).
        markers: The marker texts, in order (the environment variable, the default, required).
    """

    def __init__(self, help_text: Text | None, markers: list[Text]) -> None:
        super().__init__([r for r in (help_text, *markers) if r is not None])
        self.help_text = help_text
        self.markers = markers

    def lines(self, console: Console, width: int) -> list[Text]:
        """The cell's lines at ``width`` cells.

        Args:
            console: The console rendering the help.
            width: The width of the cell.

        Returns:
            The lines, each at most ``width`` cells unless one word is wider.
        """
        width = max(width, 1)
        paragraphs: list[Text] = list(self.help_text.split("\n")) if self.help_text is not None else []
        out: list[Text] = []
        for paragraph in paragraphs[:-1]:
            out.extend(paragraph.wrap(console, width))
        head = _text_words(paragraphs[-1]) if paragraphs else []
        tail = [word for marker in self.markers for word in _text_words(marker)]
        units = head[:-1]
        last = head[-1:]
        whole = _glue(last + tail)
        tie = _glue(last + tail[:1])
        if whole.cell_len <= width or not tail:
            units.append(whole)
        elif tie.cell_len <= width:
            units.append(tie)
            units.extend(tail[1:])
        else:  # a cell narrower than "word [default:": cut the tie itself rather than leave the marker alone
            units.extend(tie.divide(range(width, len(tie.plain), width)))
            units.extend(tail[1:])
        out.extend(_fill(units, width))
        return out

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """Render the lines at the width the table gives the cell."""
        yield Text("\n").join(self.lines(console, options.max_width))

    def _tie(self) -> Text:
        """The help's last word with the first marker word: the narrowest the cell's last line can be."""
        head = _text_words(self.help_text.split("\n")[-1]) if self.help_text is not None else []
        tail = [word for marker in self.markers for word in _text_words(marker)]
        return _glue(head[-1:] + tail[:1])

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        """Measure like the help and markers as one text, but never narrower than :meth:`_tie`."""
        joined = _glue([t for t in (self.help_text, *self.markers) if t is not None])
        measured = Measurement.get(console, options, joined)
        tie = min(self._tie().cell_len, options.max_width)
        return Measurement(max(measured.minimum, tie), max(measured.maximum, tie))


_typer_parameter_help = rich_utils._get_parameter_help


def _parameter_help(
    *,
    param: TyperOption | TyperArgument | _click.Parameter,
    ctx: _click.Context,
    markup_mode: rich_utils.MarkupModeStrict,
) -> Columns:
    """Typer's help cell of a parameter, as a :class:`HelpCell` when it is text and markers."""
    columns = _typer_parameter_help(param=param, ctx=ctx, markup_mode=markup_mode)
    items = list(columns.renderables)
    if not all(isinstance(item, Text) for item in items) or len(items) < 2:
        return columns  # Markdown help, or nothing to keep together
    texts = [item for item in items if isinstance(item, Text)]
    has_help = bool(getattr(param, "help", None))
    return HelpCell(texts[0] if has_help else None, texts[1:] if has_help else texts)


def install_help_cells() -> None:
    """Make typer's help render each parameter's help and markers as a :class:`HelpCell` (idempotent)."""
    rich_utils._get_parameter_help = _parameter_help
