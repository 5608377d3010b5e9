"""A filled-in review sheet read back as a label table for calibration.

:func:`read_sheet_file` reads the reviewer's verdicts from a review sheet
(:func:`judgekit.golden.sample.read_review_sheet`); :func:`write_label_table` writes them as the label
table ``judgekit calibrate`` reads (grader and reviewer rows, checked by
:func:`judgekit.calibration.labels.parse_labels` before writing) and returns the ``label_sample``
document (:class:`LabelSampleDocument`).
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field

from judgekit.calibration.labels import parse_labels
from judgekit.caseset import LocatedProblem
from judgekit.errors import JudgekitError
from judgekit.golden.sample import GRADER_RATER, SheetLabels, labels_csv, read_review_sheet, trial_item_id
from judgekit.io.atomic import write_atomic
from judgekit.io.documents import decode_utf8, read_regular
from judgekit.verdict import FrozenModel

__all__ = ["LabelRow", "LabelSampleDocument", "read_sheet_file", "trial_item_id", "write_label_table"]


class LabelRow(FrozenModel):
    """One labelled item of a review sheet.

    Attributes:
        item_id: The item (``case#trial``).
        case_id: Its case.
        grader_verdict: What the grader said.
        grader_fingerprint: The grader's fingerprint (``None`` when the sheet does not name it).
        reviewer_label: What the reviewer said.
        notes: The reviewer's notes (empty when none).
    """

    item_id: str
    case_id: str
    grader_verdict: str
    grader_fingerprint: str | None
    reviewer_label: str
    notes: str


class LabelSampleDocument(FrozenModel):
    """A review sheet written as a label table (the ``label_sample`` document).

    Attributes:
        sheet: The review sheet read.
        reviewer: The reviewer's name (``None`` before the sheet is read).
        written: The label table written (empty when nothing was).
        labelled: Items with a reviewer's verdict.
        unlabelled: Item ids left without one.
        agree_with_grader: Labelled items where the reviewer and the grader agree.
        rows: The labelled items.
        next: The command that calibrates the grader on the table (``None`` when nothing was written).
        problems: Why the sheet could not be read (empty when it was).
    """

    sheet: str
    reviewer: str | None
    written: list[str] = Field(default_factory=list)
    labelled: int = 0
    unlabelled: list[str] = Field(default_factory=list)
    agree_with_grader: int = 0
    rows: list[LabelRow] = Field(default_factory=list)
    next: str | None = None
    problems: list[LocatedProblem] = Field(default_factory=list)


def read_sheet_file(sheet: str | os.PathLike[str], *, rater: str | None = None) -> SheetLabels:
    """Read the reviewer's verdicts from a filled-in review sheet.

    Args:
        sheet: The review sheet (Markdown, UTF-8).
        rater: The reviewer's name (``None``: the name the sheet gives).

    Returns:
        The labelled rows and the items left unlabelled.

    Raises:
        JudgekitError: (exit 2) No such sheet, or one that is not UTF-8 text.
        ProblemsError: (exit 2) Verdicts the sheet spells wrongly, each located.
    """
    path = Path(sheet)
    if not path.is_file():
        raise JudgekitError(f"{sheet}: no such review sheet")
    return read_review_sheet(decode_utf8(read_regular(path, "review sheet"), path), source=path, rater=rater)


def write_label_table(
    labels: SheetLabels, *, sheet: str | os.PathLike[str], out: str | os.PathLike[str]
) -> LabelSampleDocument:
    """Write a review sheet's labels as a label table (grader and reviewer rows) for calibration.

    Args:
        labels: The labels read from the sheet.
        sheet: The sheet they were read from (named in the document).
        out: The label table to write (CSV).

    Returns:
        What was written: the rows, how many agree with the grader, and the calibration to run next.

    Raises:
        JudgekitError: (exit 2) When no verdict is filled in yet (nothing is written), the table would not
            read back as a label table, or it cannot be written.
    """
    if not labels.rows:
        raise JudgekitError(f"{sheet}: no verdict filled in yet; nothing was written")
    text = labels_csv(labels)
    parse_labels(text, source=Path(out).with_suffix(".csv"))  # the table calibrate will read: checked first
    write_atomic(out, text)
    return LabelSampleDocument(
        sheet=str(sheet),
        reviewer=labels.reviewer,
        written=[str(out)],
        labelled=len(labels.rows),
        unlabelled=labels.unlabelled,
        agree_with_grader=sum(1 for r in labels.rows if r[2] == r[4]),
        rows=[
            LabelRow(
                item_id=item_id,
                case_id=case_id,
                grader_verdict=grader,
                grader_fingerprint=fingerprint,
                reviewer_label=label,
                notes=notes,
            )
            for item_id, case_id, grader, fingerprint, label, notes in labels.rows
        ],
        next=f"judgekit calibrate {out} --judge {GRADER_RATER}",
    )
