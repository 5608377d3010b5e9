"""JSON rendering of run reports and comparisons: the models as versioned, stable JSON documents."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec
from pydantic import BaseModel

from judgekit.reports.run_compare import Comparison
from judgekit.reports.run_model import RunReport

__all__ = ["render_comparison_json", "render_run_json", "run_json_pieces"]

_PIECE_CHARS = 1 << 20
"""About how many characters a piece of :func:`run_json_pieces` holds (whole batches of a long list's
entries, at least one)."""

_PLACEHOLDER = f"judgekit:long-list:{os.urandom(8).hex()}"
"""Stands in for each long list while the rest of the report is rendered (random, so no text of the
report can spell it)."""


def _dump(data: object) -> str:
    """``json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False)`` and a newline, faster.

    With an indent, :func:`json.dumps` runs its pure-Python encoder (seconds for a report of 400,000
    lines); without one, its C encoder. So the C encoder writes the text compact, with json's own numbers
    and escapes, and :func:`msgspec.json.format` indents it, copying every token as written: the same
    characters (tests/reports/test_run_json.py holds them equal). ``NaN`` and ``Infinity``, which only
    json writes, and text that is not UTF-8 (a lone surrogate) take json's own indenting.
    """
    compact = json.dumps(data, sort_keys=True, ensure_ascii=False)
    try:
        return msgspec.json.format(compact.encode("utf-8"), indent=2).decode("utf-8") + "\n"
    except (msgspec.DecodeError, UnicodeEncodeError):
        return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render_run_json(report: RunReport) -> str:
    """Render a run report as JSON (``schema_version`` and ``kind`` say what it is).

    Every field of the model is written: ``undecided_policy`` names the undecided policy in force and
    ``undecided_cases`` lists every case with undecided trials (the Markdown and HTML reports list the
    first :data:`~judgekit.reports.run_markdown.UNDECIDED_CASES_SHOWN`). The text is the pieces of
    :func:`run_json_pieces` joined.
    """
    return "".join(run_json_pieces(report))


def run_json_pieces(report: RunReport) -> Iterator[str]:
    r"""The text of :func:`render_run_json` in pieces, without holding the whole text or the whole dump.

    Joined, the pieces are the characters of ``json.dumps(report.model_dump(mode="json"), indent=2,
    sort_keys=True, ensure_ascii=False) + "\n"`` (tests/reports/test_run_json.py holds them equal). The
    lists that grow with the run (:func:`_long_lists`: the trial list, one entry per trial that did not
    pass; the judge cost of each case; the cases with undecided trials) are dumped a batch of entries at
    a time; the rest of the document is dumped once around them.

    Pieces are cut only between two entries of such a list, right after the ``,`` and line break that
    separate them: no secret the redactor finds can straddle such a cut (a JSON string literal never
    holds a raw line break, and no redaction pattern crosses from one entry's closing ``}`` into the
    next), so each piece can be redacted on its own (:func:`judgekit.io.atomic.write_atomic_pieces`). A
    piece holds whole batches of entries up to about a megabyte of characters.

    Args:
        report: The report.

    Yields:
        Text pieces, in order; never an empty one.
    """
    long_lists = [(path, items, exact) for path, items, exact in _long_lists(report) if items]
    if not long_lists:
        yield _dump(report.model_dump(mode="json"))
        return
    exclude: dict[str, Any] = {}
    for path, _, _ in long_lists:
        place = exclude
        for key in path[:-1]:
            place = place.setdefault(key, {})
        place[path[-1]] = True
    head = report.model_dump(mode="json", exclude=exclude)
    for path, _, _ in long_lists:
        place = head
        for key in path[:-1]:
            place = place[key]
        place[path[-1]] = _PLACEHOLDER
    rest = _dump(head)
    # json.dumps sorts the keys: the lists come in the order of their placeholders in the text
    marks = sorted(
        (rest.index(_placeholder_line(path)), path, items, exact) for path, items, exact in long_lists
    )
    block: list[str] = []
    size = 0
    done = 0
    for at, path, items, exact in marks:
        line = _placeholder_line(path)
        indent = "  " * len(path)
        block += (rest[done:at], f'\n{indent}"{path[-1]}": [\n')
        done = at + len(line)
        total = len(items)
        batch: list[dict[str, Any]] = []
        for index, item in enumerate(items, 1):
            batch.append(item.model_dump(mode="json"))
            if len(batch) < _BATCH and index < total:
                continue
            entries = _dump_entries(batch, len(path), exact=exact)
            batch = []
            block += (entries, ",\n" if index < total else f"\n{indent}]")
            size += len(entries)
            if size >= _PIECE_CHARS and index < total:
                yield "".join(block)
                block, size = [], 0
    block.append(rest[done:])
    yield "".join(block)


def _long_lists(report: RunReport) -> tuple[tuple[tuple[str, ...], Sequence[BaseModel], bool], ...]:
    """The report's lists that grow with the run: where each sits, its entries, whether they hold no float.

    A trial entry and an undecided case hold text, integers, booleans and ``null`` only
    (tests/reports/test_run_json.py holds their schemas to that); a cost row holds dollars.
    """
    return (
        (("trial_reasons",), report.trial_reasons, True),
        (("undecided_cases",), report.undecided_cases, True),
        (("cost", "cases"), report.cost.cases if report.cost is not None else (), False),
    )


def _placeholder_line(path: tuple[str, ...]) -> str:
    """The line :func:`_dump` writes for the list at ``path`` while its placeholder stands in for it."""
    return f'\n{"  " * len(path)}"{path[-1]}": "{_PLACEHOLDER}"'


_BATCH = 64
"""Entries of a long list dumped together (one encoding and one indenting of them all, not one each)."""

_SORTED = msgspec.json.Encoder(order="sorted").encode


def _dump_entries(entries: list[dict[str, Any]], depth: int = 1, *, exact: bool = True) -> str:
    r"""Entries of a list ``depth`` keys deep in the report as :func:`_dump` writes them, joined by ``,\n``.

    The result starts at the first entry's indent and ends at the last one's closing bracket. Entries are
    dumped all at once (one encoding and one indenting of them all instead of one each).

    Args:
        entries: The entries (JSON-like data).
        depth: How many keys deep the list is (``trial_reasons``: 1; ``cost.cases``: 2).
        exact: The entries hold text, integers, booleans and ``null``, never a float (see
            :func:`_long_lists`). msgspec writes each of those as :func:`json.dumps` does (every character
            outside the surrogates escaped the same way, keys sorted the same way), so it encodes them, and
            text with a lone surrogate, which only json writes, takes json. ``False``: :func:`_dump` (json)
            writes them.
    """
    listed = None
    if exact:
        with contextlib.suppress(UnicodeEncodeError):  # a lone surrogate: json writes it
            listed = msgspec.json.format(_SORTED(entries), indent=2).decode("utf-8")
    if listed is None:
        listed = _dump(entries)[:-1]
    # "[\n  {...},\n  {...}\n]" at indent 2 -> the entries at the list's indent, without the brackets
    shift = "  " * depth
    return shift + listed[2:-2].replace("\n", "\n" + shift)


def render_comparison_json(comparison: Comparison) -> str:
    """Render a run comparison as JSON."""
    return _dump(comparison.model_dump(mode="json"))
