"""JSON rendering of run reports and comparisons: the models as versioned, stable JSON documents."""

from __future__ import annotations

import json

import msgspec

from judgekit.reports.run_compare import Comparison
from judgekit.reports.run_model import RunReport

__all__ = ["render_comparison_json", "render_run_json"]


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
    first :data:`~judgekit.reports.run_markdown.UNDECIDED_CASES_SHOWN`).
    """
    return _dump(report.model_dump(mode="json"))


def render_comparison_json(comparison: Comparison) -> str:
    """Render a run comparison as JSON."""
    return _dump(comparison.model_dump(mode="json"))
