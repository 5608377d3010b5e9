"""Every path that explains a trial gives the same one-line reason: ``judgekit.verdict.verdict_reason``.

The paths (the registry below) are the run report's JSON (in memory, and streamed as ``judgekit report``
reads a file), Markdown, short Markdown and HTML, the demo's run summary, ``explain()`` (which the pytest
plugin and promptfoo print), Inspect's score (from the scorer, and written back on a log copy) and the
viewer's run data. Each is run on the demo's graded agent-v1 trials (every layer, the replayed judge) and
must carry, for each trial that did not pass, exactly the reason ``verdict_reason`` gives. A meta-test
parses the sources and fails when a module produces a trial's reason without being in the registry, so a
new path cannot drift unnoticed.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from judgekit.results import ResultLine, read_results
from judgekit.verdict import Grade, Verdict, failed_gates, reason_parts, verdict_reason
from support import called_name, load_viewer_data

REPO = Path(__file__).resolve().parents[1]

Lines = Sequence[ResultLine]


@pytest.fixture(scope="module")
def demo_lines(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[ResultLine]]:
    out = tmp_path_factory.mktemp("reasons") / "demo"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(
        [sys.executable, "-m", "judgekit.cli", "demo", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    path = out / "results" / "agent-v1.jsonl"
    return path, list(read_results(path).lines)


def _expected(lines: Lines) -> dict[tuple[str, int], str]:
    return {
        (line.case.id, line.trial): verdict_reason(
            line.verdict, line.reason, line.checks, untrusted=line.untrusted_policy
        )
        for line in lines
        if line.verdict is not Verdict.PASS
    }


def _grade(line: ResultLine) -> Grade:
    return line.as_grade()


def _report(path: Path):
    from judgekit.reports.run_model import report_run

    return report_run(read_results(path), undecided="fail")[0]


def _report_json(path: Path, lines: Lines) -> dict[tuple[str, int], str]:
    from judgekit.reports.run_json import render_run_json

    document = json.loads(render_run_json(_report(path)))
    return {(r["case_id"], r["trial"]): r["reason"] for r in document["trial_reasons"]}


def _parts(line: ResultLine) -> tuple[str, ...]:
    gates = failed_gates(line.verdict, line.reason, line.checks, untrusted=line.untrusted_policy)
    return reason_parts(line.verdict, line.reason, gates)


def _in_text(
    text: str, lines: Lines, escape: Callable[[str], str], clip: Callable[[str], str] = str
) -> dict[tuple[str, int], str]:
    # a rendering lists each reason once per group of trials, each part (the contract's, every gate's) on
    # its own line: every part found in the text means carried
    return {
        (line.case.id, line.trial): verdict_reason(
            line.verdict, line.reason, line.checks, untrusted=line.untrusted_policy
        )
        for line in lines
        if line.verdict is not Verdict.PASS and all(escape(clip(part)) in text for part in _parts(line))
    }


def _report_streamed(path: Path, lines: Lines) -> dict[tuple[str, int], str]:
    from judgekit.reports.run_model import report_run

    report, _ = report_run(path, undecided="fail")  # the file streamed, as `judgekit report` reads it
    return {(r.case_id, r.trial): r.reason for r in report.trial_reasons}


def _report_markdown(path: Path, lines: Lines) -> dict[tuple[str, int], str]:
    from judgekit.markdown_text import md_text
    from judgekit.reports.run_markdown import render_run_markdown

    # the reason is written as the renderer writes untrusted text: escaped as Markdown text (issue 33 F9)
    return _in_text(render_run_markdown(_report(path)), lines, md_text)


def _report_short(path: Path, lines: Lines) -> dict[tuple[str, int], str]:
    from judgekit.markdown_text import md_text
    from judgekit.reports.run_markdown import SHORT_PART_MIN, render_short_markdown

    # the short form clips each part of a reason to its share of the row (at least 60 characters)
    text = render_short_markdown(_report(path), top=100)
    return _in_text(text, lines, md_text, lambda part: part[: SHORT_PART_MIN - 3])


def _report_html(path: Path, lines: Lines) -> dict[tuple[str, int], str]:
    from markupsafe import escape

    from judgekit.reports.run_html import render_run_html

    return _in_text(render_run_html(_report(path)), lines, lambda s: str(escape(s)))


def _demo(path: Path, lines: Lines) -> dict[tuple[str, int], str]:
    from judgekit.demo import _why

    return {(line.case.id, line.trial): _why(line) for line in lines if line.verdict is not Verdict.PASS}


def _explain(path: Path, lines: Lines) -> dict[tuple[str, int], str]:
    out = {}
    for line in lines:
        if line.verdict is not Verdict.PASS:
            why = line.explain().splitlines()[1]
            assert why.startswith("  why: ")
            out[(line.case.id, line.trial)] = why.removeprefix("  why: ")
    return out


def _promptfoo(path: Path, lines: Lines) -> dict[tuple[str, int], str]:
    from judgekit.integrations.promptfoo import grading_result

    out = {}
    for line in lines:
        if line.verdict is not Verdict.PASS:
            reason = grading_result(_grade(line))["reason"]
            out[(line.case.id, line.trial)] = reason.split("  why: ", 1)[1].split("\n", 1)[0]
    return out


def _inspect(path: Path, lines: Lines) -> dict[tuple[str, int], str]:
    pytest.importorskip("inspect_ai")
    from judgekit.integrations.inspect import score_from_grade

    return {
        (line.case.id, line.trial): score_from_grade(_grade(line)).metadata["judgekit_reason"]
        for line in lines
        if line.verdict is not Verdict.PASS
    }


def _inspect_written_back(path: Path, lines: Lines) -> dict[tuple[str, int], str]:
    """The score ``judgekit export inspect`` writes on a log copy, from the results line it read."""
    pytest.importorskip("inspect_ai")
    from judgekit.formats.inspect_logs import grade_of_result, score_from_grade

    return {
        (line.case.id, line.trial): score_from_grade(grade_of_result(line)).metadata["judgekit_reason"]
        for line in read_results(path)
        if line.verdict is not Verdict.PASS
    }


def _viewer(path: Path, lines: Lines) -> dict[tuple[str, int], str]:
    from judgekit.api.viewer import write_viewer

    out = path.parent / "viewer-for-reasons"
    write_viewer([read_results(path)], out)
    data = load_viewer_data(out / "data" / "index.js")  # the rows joined from rows-K.js, as the page does
    ids = [case["id"] for case in data["cases"]]
    rows = data["runs"][0]["rows"]  # [case index, trial, verdict, ..., reason]
    return {(ids[r[0]], r[1]): r[-1] for r in rows if r[2] != "pass"}


PATHS: dict[str, tuple[str, Callable[[Path, Lines], dict[tuple[str, int], str]]]] = {
    "report json": ("judgekit.reports.run_model", _report_json),
    # one engine (report_run) over both sources: the file streamed, or its lines in memory
    "report streamed (judgekit report)": ("judgekit.reports.run_model", _report_streamed),
    "report markdown": ("judgekit.reports.run_markdown", _report_markdown),
    "report short markdown": ("judgekit.reports.run_markdown", _report_short),
    "report html": ("judgekit.reports.run_html", _report_html),
    "demo summary": ("judgekit.demo", _demo),
    "explain (pytest plugin)": ("judgekit.verdict", _explain),
    "promptfoo": ("judgekit.integrations.promptfoo", _promptfoo),
    # the Inspect scorer (integrations.inspect re-exports it) and the scores written back on log copies
    "inspect": ("judgekit.formats.inspect_logs", _inspect),
    "inspect scores written back": ("judgekit.formats.inspect_logs", _inspect_written_back),
    "viewer": ("judgekit.reports.viewer", _viewer),
}
"""Path name -> (the module that produces the reason, what it gives each trial that did not pass)."""

_REASON_NAMES = {
    "verdict_reason",
    "deciding_check",
    "why",
    "explain",
    "explain_grade",
    "trial_reasons",
    "reason_rows",
    "failed_gates",
    "reason_parts",
    "deciding_gate",
    "trial_reason",
}
"""Functions that produce (or render) a trial's one-line reason: a module calling one is a path."""

PRODUCERS = {"judgekit.verdict"}
"""Modules that define the rule rather than carry it."""


@pytest.mark.parametrize("name", sorted(PATHS))
def test_every_path_gives_each_trial_the_same_reason(name: str, demo_lines) -> None:
    path, lines = demo_lines
    expected = _expected(lines)
    assert len(expected) >= 30  # failed and undecided trials of every layer
    got = PATHS[name][1](path, lines)
    if name == "report short markdown":  # the first 100 rows only, by design
        assert got, "the short report shows no reason"
        expected = {k: v for k, v in expected.items() if k in got}
    assert got == expected


def test_the_demo_trials_exercise_every_kind_of_reason(demo_lines) -> None:
    _, lines = demo_lines
    reasons = set(_expected(lines).values())
    assert any(" — call " in r for r in reasons)  # a rule with its offending call
    assert any(r.startswith("state") for r in reasons)  # a state diff row
    assert any("quote (message " in r for r in reasons)  # a judge's quote
    assert any(" not decided (" in r for r in reasons)  # the grading contract's reason
    assert all("\n" not in r and r for r in reasons)


def _callers() -> set[str]:
    out: set[str] = set()
    for path in (REPO / "src").rglob("*.py"):
        module = ".".join(path.relative_to(REPO / "src").with_suffix("").parts)
        if module in PRODUCERS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if called_name(node) in _REASON_NAMES:
                out.add(module)
    return out


CARRIED_BY = {
    "judgekit.integrations.pytest_plugin": "prints explain(), checked as 'explain (pytest plugin)'",
    "judgekit.results": "ResultLine.explain() is as_grade().explain(): 'explain (pytest plugin)'",
}
"""Modules that only pass on another path's reason, and the path that checks it."""


def test_every_module_producing_a_reason_is_in_the_registry() -> None:
    modules = _callers()
    registered = {module for module, _ in PATHS.values()}
    unregistered = modules - registered - set(CARRIED_BY)
    assert not unregistered, f"add these reason paths to PATHS in {__file__}: {sorted(unregistered)}"
    assert registered <= modules | PRODUCERS, "a registered path no longer produces a reason: update it"
