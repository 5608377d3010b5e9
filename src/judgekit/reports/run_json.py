"""JSON rendering of run reports and comparisons: the models as versioned, stable JSON documents."""

from __future__ import annotations

import json
from collections.abc import Iterator

import msgspec

from judgekit.reports.run_compare import Comparison
from judgekit.reports.run_model import RunReport

__all__ = ["render_comparison_json", "render_run_json", "run_json_pieces"]

_PIECE_CHARS = 1 << 20
"""About how many characters a piece of :func:`run_json_pieces` holds (whole trial entries, at least one)."""

_PLACEHOLDER = "judgekit:trial_reasons"
"""Stands in for the trial list while the rest of the report is rendered."""


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
    trial list (``trial_reasons``, the report's only field that grows with the run: one entry per trial
    that did not pass) is dumped entry by entry; the rest of the document is dumped once around it.

    Pieces are cut only between two entries of the trial list, right after the ``,`` and line break that
    separate them: no secret the redactor finds can straddle such a cut (a JSON string literal never holds
    a raw line break, and no redaction pattern crosses from one entry's closing ``}`` into the next), so
    each piece can be redacted on its own (:func:`judgekit.io.atomic.write_atomic_pieces`). A piece holds
    whole entries up to about a megabyte of characters.

    Args:
        report: The report.

    Yields:
        Text pieces, in order; never an empty one.
    """
    if not report.trial_reasons:
        yield _dump(report.model_dump(mode="json"))
        return
    head = report.model_dump(mode="json", exclude={"trial_reasons"})
    head["trial_reasons"] = _PLACEHOLDER
    before, found, after = _dump(head).partition(f'\n  "trial_reasons": "{_PLACEHOLDER}"')
    if not found:  # pragma: no cover - the key is top-level and unique, so its line is always there
        raise AssertionError("the trial list's placeholder is missing from the report's JSON")
    block: list[str] = [before, '\n  "trial_reasons": [\n']
    size = 0
    last = len(report.trial_reasons) - 1
    for index, reason in enumerate(report.trial_reasons):
        entry = _dump(reason.model_dump(mode="json"))[:-1].replace("\n", "\n    ")
        block += ("    ", entry, ",\n" if index < last else "\n  ]")
        size += len(entry)
        if size >= _PIECE_CHARS and index < last:
            yield "".join(block)
            block, size = [], 0
    block.append(after)
    yield "".join(block)


def render_comparison_json(comparison: Comparison) -> str:
    """Render a run comparison as JSON."""
    return _dump(comparison.model_dump(mode="json"))
