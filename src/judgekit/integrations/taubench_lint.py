"""Lint tau-bench tasks as golden cases: which tasks would a do-nothing agent get reward 1 on?

tau-bench's reward is 1 when the final database equals the database after the ground-truth actions and
every required output was said (and the episode finished). An agent that does nothing leaves the
database as it was and says nothing in particular, so it gets reward 1 exactly on the tasks whose
ground-truth actions change nothing and which require no output: those tasks measure nothing a
deterministic grader can see. :func:`lint_tau_bench` runs :func:`judgekit.golden.lint.lint_case` on every
task of a :class:`~judgekit.integrations.taubench.TauBenchRun` with tau-bench's own gates
(:class:`~judgekit.integrations.taubench.TauBenchGrader`), the do-nothing trial starting and ending in the
run's initial database and ending by ``user_stop`` (the simulated user gives up, as tau-bench records);
:func:`do_nothing_reward_tasks` lists the tasks it would pass. Under these gates a trial passes exactly
when tau-bench's reward is 1, so the list is the tasks with a free reward.

    >>> from judgekit.integrations.taubench import load_run  # doctest: +SKIP
    >>> run = load_run(results, db=db, replay=replay)  # doctest: +SKIP
    >>> do_nothing_reward_tasks(lint_tau_bench(run, results=results))  # doctest: +SKIP
    ['task-12', 'task-13', ...]
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from judgekit.golden.lint import CaseLint, LintReport, Location, lint_case
from judgekit.integrations.taubench import INITIAL_KEY, TauBenchGrader, TauBenchRun
from judgekit.transcript import StateRef
from judgekit.verdict import Verdict

__all__ = ["do_nothing_reward_tasks", "lint_tau_bench"]


def _task_order(case_id: str) -> tuple[int, int | str]:
    """Sort ``task-12`` by its number, other ids after the numbered ones, by text."""
    tail = case_id.rsplit("-", 1)[-1]
    return (0, int(tail)) if tail.isdigit() else (1, case_id)


def _entry_lines(results: Path) -> Callable[[int], int | None]:
    """Map a results file's 1-based entry number to its line (JSONL: the same; JSON list: located)."""
    if results.suffix.lower() == ".jsonl":
        return lambda entry: entry
    from judgekit.errors import JudgekitError
    from judgekit.io.documents import read_document

    try:
        doc = read_document(results)
    except JudgekitError:
        return lambda entry: None
    return lambda entry: doc.line_of((entry - 1,))


def lint_tau_bench(run: TauBenchRun, *, results: str | os.PathLike[str] | None = None) -> LintReport:
    """Lint every task of a tau-bench run as a golden case (see the module docstring).

    Args:
        run: The run (:func:`judgekit.integrations.taubench.load_run`). Without states (no replay file
            or tools), the cases have no expected state, the do-nothing trial records no database, and
            only the required outputs can fail it.
        results: The results file the run was read from, so each finding points at the line where the
            task's first episode starts there; ``None`` leaves findings unlocated, as text or a path object.

    Returns:
        The report, one case per task in task order; tau-bench cases have no reference solution and no
        judge criteria.
    """
    results = Path(results) if results is not None else None
    grader = TauBenchGrader(states=run.states)
    first_entry: dict[str, int] = {}
    for trial in run.trials:
        first_entry.setdefault(trial.transcript.case_id, trial.line)
    line_of = _entry_lines(results) if results is not None else None
    start = StateRef(path=INITIAL_KEY) if run.has_states else None
    out: list[CaseLint] = []
    for case_id in sorted(run.cases, key=_task_order):
        case = run.cases[case_id]
        out.append(
            lint_case(
                case,
                states=run.states,
                start=start,
                where=Location(
                    results,
                    line_of(first_entry[case_id]) if line_of is not None and case_id in first_entry else None,
                ),
                checks=grader.checks,
                ended_by="user_stop",
            )
        )
    return LintReport(tuple(out))


def do_nothing_reward_tasks(report: LintReport) -> list[str]:
    """The case ids on which a do-nothing agent passes every gate (under tau-bench's gates: reward 1).

    Returns:
        The ids, in the report's order.
    """
    return [c.case_id for c in report.cases if c.do_nothing.verdict is Verdict.PASS]
