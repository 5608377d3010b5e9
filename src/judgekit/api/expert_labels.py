"""Labels from experts: a labelling page per expert, and two experts' downloads reconciled.

:func:`label_page` is ``judgekit labels page`` as one call: it reads a graded run, its transcripts, the
rubric (and optionally the case set) it was graded with, and writes one expert's self-contained HTML page
(:mod:`judgekit.golden.label_page`); :func:`reconcile_labels` is ``judgekit labels reconcile``: two
experts' downloaded label tables compared (:mod:`judgekit.golden.label_reconcile`), the agreed table and
the resolution sheet written.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from pydantic import Field

from judgekit.calibration.labels import LabelTable, parse_labels
from judgekit.errors import JudgekitError
from judgekit.golden.label_page import LabelPage, build_page, render_page
from judgekit.golden.label_reconcile import (
    ItemComparison,
    LabelReconciliation,
    agreed_csv,
    compare_label_tables,
    resolution_csv,
)
from judgekit.golden.sample import ReviewItem, Sample, resolve_transcripts, trial_item_id
from judgekit.io.atomic import write_atomic
from judgekit.io.documents import read_input
from judgekit.judge_setup import load_rubric_setting
from judgekit.results import read_results
from judgekit.verdict import FrozenModel

__all__ = [
    "LabelPageDocument",
    "LabelReconciliationDocument",
    "label_page",
    "reconcile_labels",
]


class LabelPageDocument(FrozenModel):
    """One expert's labelling page as written (the ``label_page`` document).

    Attributes:
        page: The HTML file written.
        page_id: The page's content hash (its answers' ``localStorage`` key in the browser).
        expert: The expert's rater name.
        seed: The seed of the expert's order.
        show_judge: True when the page shows the judge's verdicts.
        results: The results file read.
        rubric: ``<id> v<version>`` of the rubric the criterion texts came from.
        items: Items on the page (trial x criterion), >= 1.
        trials: Distinct trials among them.
        criteria: Per criterion id, its items on the page.
        skipped: Judged criteria left out, by reason, with their count.
        order: The first items in the expert's order (``<item id>/<criterion>``), at most ten.
        warnings: Problems in the results file (lines left out), as ``file:line: message``.
    """

    page: str
    page_id: str
    expert: str
    seed: int
    show_judge: bool
    results: str
    rubric: str
    items: int
    trials: int
    criteria: dict[str, int]
    skipped: dict[str, int] = Field(default_factory=dict)
    order: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


def _document(page: LabelPage, out: Path, warnings: list[str]) -> LabelPageDocument:
    criteria: dict[str, int] = {}
    for item in page.items:
        criteria[item.criterion] = criteria.get(item.criterion, 0) + 1
    return LabelPageDocument(
        page=str(out),
        page_id=page.page_id,
        expert=page.expert,
        seed=page.seed,
        show_judge=page.show_judge,
        results=page.results,
        rubric=page.rubric,
        items=len(page.items),
        trials=len({i.item_id for i in page.items}),
        criteria=dict(sorted(criteria.items())),
        skipped=page.skipped,
        order=[str(i.key) for i in page.items[:10]],
        warnings=warnings,
    )


def label_page(
    results: str | os.PathLike[str],
    *,
    expert: str,
    out: str | os.PathLike[str],
    seed: int = 0,
    criteria: Sequence[str] = (),
    show_judge: bool = False,
    rubric: str | os.PathLike[str] = "honest-reporting",
    cases: str | os.PathLike[str] | None = None,
    transcripts: Sequence[str | os.PathLike[str]] = (),
) -> LabelPageDocument:
    """Write one expert's labelling page for the judged criteria of a graded run.

    Args:
        results: The results file (JSONL) written by ``judgekit grade`` with a judge.
        expert: The expert's rater name: every label they download carries it.
        out: The HTML file to write (replaced when it exists: the expert's answers live in their browser).
        seed: The seed of the expert's order (same expert and seed, same order).
        criteria: Only these criterion ids (empty: every judged criterion).
        show_judge: Show the judge's verdicts (default blind); the downloaded rows then say ``saw_judge=yes``.
        rubric: The built-in rubric id or rubric file the run was graded with (its criterion texts).
        cases: The golden set the run was graded on (case facts and the cases' own criteria), or ``None``.
        transcripts: Transcript files to take the trials from (default: each result line's source).

    Returns:
        What was written.

    Raises:
        JudgekitError: (exit 2) An unreadable results file, rubric or case set, a bad expert name, an
            unknown ``criteria`` id, nothing to label, an output that cannot be written.
        ProblemsError: (exit 2) Trials whose transcript cannot be found or changed since grading,
            criteria whose text is not the one the judge was given; each located.
    """
    run = read_results(results)
    judged = [ln for ln in run.lines if any(c.check_id.startswith("criterion:") for c in ln.checks)]
    if not judged:
        raise JudgekitError(
            f"{results}: no trial has a judge verdict on a rubric criterion; grade it with a judge first"
            + (f" ({len(run.problems)} line(s) could not be read: {run.problems[0]})" if run.problems else "")
        )
    loaded_rubric = load_rubric_setting(rubric)
    case_map = None
    if cases is not None:
        from judgekit.caseset import load_case_set

        case_set = load_case_set([cases])
        case_set.raise_if_invalid()
        case_map = {c.case.id: c.case for c in case_set.cases}
    sample = Sample(results=Path(results), run_ids=run.run_ids, seed=seed)
    sample.items = [ReviewItem(trial_item_id(ln.case.id, ln.trial), "all", "", ln) for ln in judged]
    found = resolve_transcripts(sample, transcripts=[Path(t) for t in transcripts])
    by_item = {i.item_id: i.transcript for i in found.items if i.transcript is not None}
    page = build_page(
        judged,
        by_item,
        loaded_rubric,
        case_map,
        expert=expert,
        seed=seed,
        criteria=criteria,
        show_judge=show_judge,
        results=str(results),
    )
    write_atomic(out, render_page(page), what="labelling page")
    return _document(page, Path(out), [str(p) for p in run.problems])


class LabelReconciliationDocument(FrozenModel):
    """Two experts' label tables compared (the ``label_reconciliation`` document).

    Attributes:
        experts: Expert A's and expert B's rater names.
        tables: The two tables read, A's first.
        agreed: Items both labelled alike.
        disputed: Items both labelled, differently, with each one's label and notes.
        only_a: Items only expert A labelled.
        only_b: Items only expert B labelled.
        saw_judge: Per expert, labels given seeing the judge's verdict (0 when every label was blind).
        settled: True when nothing is disputed and both labelled every item (exit 0; else exit 1).
        written: The agreed label table written (``None``: not asked for, or not settled).
        sheet: The resolution sheet written (``None``: not asked for, or nothing to settle).
    """

    experts: list[str]
    tables: list[str]
    agreed: list[ItemComparison]
    disputed: list[ItemComparison]
    only_a: list[ItemComparison]
    only_b: list[ItemComparison]
    saw_judge: dict[str, int]
    settled: bool
    written: str | None = None
    sheet: str | None = None


def _read_table(path: str | os.PathLike[str]) -> LabelTable:
    return parse_labels(read_input(path, "label table"), source=path)


def reconcile_labels(
    a: str | os.PathLike[str],
    b: str | os.PathLike[str],
    *,
    out: str | os.PathLike[str] | None = None,
    sheet: str | os.PathLike[str] | None = None,
) -> LabelReconciliationDocument:
    """Compare two experts' label tables; write the agreed table when settled, else the resolution sheet.

    Args:
        a: Expert A's label table (one rater, as the labelling page downloads it).
        b: Expert B's label table.
        out: Where to write both experts' rows as one label table, only when everything is settled.
        sheet: Where to write the resolution sheet of the unsettled items, only when there are some.

    Returns:
        The comparison; ``settled`` False means disagreements remain (``labels reconcile`` exits 1).

    Raises:
        JudgekitError: (exit 2) A table that cannot be read, holds several raters, or both tables by one
            rater; an output that cannot be written.
        ProblemsError: (exit 2) A malformed label table, each problem located.
    """
    table_a, table_b = _read_table(a), _read_table(b)
    result: LabelReconciliation = compare_label_tables(table_a, table_b)
    written = sheet_written = None
    if out is not None and result.settled:
        write_atomic(out, agreed_csv(result, table_a, table_b), what="label table")
        written = str(out)
    if sheet is not None and not result.settled:
        write_atomic(sheet, resolution_csv(result), what="resolution sheet")
        sheet_written = str(sheet)
    return LabelReconciliationDocument(
        experts=list(result.experts),
        tables=[str(a), str(b)],
        agreed=result.agreed,
        disputed=result.disputed,
        only_a=result.only_a,
        only_b=result.only_b,
        saw_judge=result.saw_judge,
        settled=result.settled,
        written=written,
        sheet=sheet_written,
    )
