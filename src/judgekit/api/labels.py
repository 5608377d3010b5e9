"""Checks of a label table before it certifies a judge: the refusals that protect calibration numbers.

:func:`check_labels` is ``judgekit labels check`` as one call: provenance (enough random production
samples), the selection set (labels already used to choose between judges) and few-shot leakage (the
judge's few-shot examples or its prompt holding a labelled item), built on
:mod:`judgekit.calibration.guards`, returning a :class:`LabelCheckDocument`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field

from judgekit.calibration.guards import (
    FewShotExample,
    ProvenanceSummary,
    check_few_shot_overlap,
    check_not_selection_set,
    check_prompt_overlap,
    load_usage,
    parse_few_shot,
    random_sample_only,
)
from judgekit.calibration.labels import LabelTable, parse_labels
from judgekit.caseset import LocatedProblem
from judgekit.errors import JudgekitError, LocatedError, ProblemsError
from judgekit.io.documents import read_input
from judgekit.judges.prompt import render_transcript
from judgekit.settings import records_folder
from judgekit.transcript import read_transcripts
from judgekit.verdict import FrozenModel

__all__ = ["LabelCheck", "LabelCheckDocument", "check_labels"]


class LabelCheck(FrozenModel):
    """One check of a label table.

    Attributes:
        check: ``provenance``, ``selection_set`` or ``few_shot``.
        status: ``passed``, ``refused`` or ``skipped`` (a check whose input was not given).
        message: What the check found; for a refusal, the whole refusal (what is wrong, what to do).
        problems: The refusal's located problems (empty when none is located).
    """

    check: str
    status: Literal["passed", "refused", "skipped"]
    message: str
    problems: list[LocatedProblem] = Field(default_factory=list)

    @classmethod
    def refused(cls, name: str, error: JudgekitError) -> LabelCheck:
        """The check ``name`` refused by ``error``, with its located problems."""
        if isinstance(error, ProblemsError):
            problems = [LocatedProblem.of(p) for p in error.problems]
        elif isinstance(error, LocatedError):
            problems = [LocatedProblem.of(error.problem)]
        else:
            problems = []
        return cls(check=name, status="refused", message=error.message, problems=problems)


class LabelCheckDocument(FrozenModel):
    """Every check of a label table (the ``label_check`` document).

    Attributes:
        labels: The label table's path, as given.
        ok: True when no check refused.
        provenance: How the items split by provenance (``None`` when the provenance check refused).
        checks: The checks in order: ``provenance``, ``selection_set``, ``few_shot``.
        exit_code: The first refusal's exit code (1 a guard refused, 2 an input error), 0 when none
            refused (not printed in the document).
    """

    labels: str
    ok: bool
    provenance: ProvenanceSummary | None
    checks: list[LabelCheck]
    exit_code: int = Field(default=0, exclude=True)


def _transcript_texts(path: Path) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Each transcript's rendered text and its messages' contents, by ``case#trial`` and by case."""
    texts: dict[str, str] = {}
    messages: dict[str, list[str]] = {}
    for t in read_transcripts(path):
        texts[f"{t.case_id}#{t.trial}"] = render_transcript(t)
        texts.setdefault(t.case_id, render_transcript(t))
        contents = [m.content for m in t.messages if m.content]
        messages[f"{t.case_id}#{t.trial}"] = contents
        messages.setdefault(t.case_id, contents)
    return texts, messages


def _few_shot_check(
    table: LabelTable,
    examples: list[tuple[int, FewShotExample]],
    *,
    texts: dict[str, str] | None,
    messages: dict[str, list[str]],
    few_shot: Path | None,
    prompt: Path | None,
) -> LabelCheck:
    """The few-shot leakage check of examples already read; raises its refusal."""
    if few_shot is not None:
        check_few_shot_overlap(examples, table, item_texts=texts, source=few_shot)
    if prompt is not None:
        raw_prompt = read_input(prompt, "prompt file").decode("utf-8", "replace")
        check_prompt_overlap(raw_prompt, table, messages, source=prompt)
    found = [f"{len(examples)} few-shot example(s)"] if few_shot is not None else []
    found += ["the prompt"] if prompt is not None else []
    return LabelCheck(
        check="few_shot", status="passed", message=f"no labelled item is in {' or '.join(found)}"
    )


def check_labels(
    labels: str | os.PathLike[str],
    *,
    few_shot: str | os.PathLike[str] | None = None,
    prompt: str | os.PathLike[str] | None = None,
    transcripts: str | os.PathLike[str] | None = None,
    records: str | os.PathLike[str] | None = None,
    every_check: bool = True,
) -> LabelCheckDocument:
    """Refuse labels that would inflate a judge's numbers.

    Checks: items carry a provenance and enough are random production samples; the labels were not
    already used to choose between judges (the usage ledger in the records folder); the judge's few-shot
    examples are not labelled test items, nor is a labelled item's message text found in its prompt
    (compared word by word ignoring case and punctuation).

    Args:
        labels: The labelled test set (``.csv`` or ``.jsonl``).
        few_shot: The judge's few-shot examples (JSONL: item_id, case_id or text), or ``None``.
        prompt: The judge's prompt or template (raw text, any format), or ``None``; needs ``transcripts``.
        transcripts: Transcripts of the labelled items (JSONL), to compare few-shot and prompt texts.
        records: Calibration records folder (``None``: the configured one, else ``calibration/records``).
        every_check: Run every check and report each refusal (``False``: raise the first refusal).

    Returns:
        Every check with its status; ``ok`` is false and ``exit_code`` the first refusal's when one refused.

    Raises:
        JudgekitError: (exit 2) An unreadable or malformed input, ``prompt`` without ``transcripts``, a
            records folder named but missing; with ``every_check`` false, also the first refusal (exit 1).
    """
    folder = records_folder(records)  # flag > JUDGEKIT_RECORDS > project configuration > default
    table = parse_labels(read_input(labels, "label table"), source=Path(labels))
    checks: list[LabelCheck] = []
    refusals: list[JudgekitError] = []  # in check order
    summary: ProvenanceSummary | None = None

    def refuse(name: str, exc: JudgekitError) -> None:
        if not every_check:
            raise exc
        refusals.append(exc)
        checks.append(LabelCheck.refused(name, exc))

    try:
        _, summary = random_sample_only(table)
        checks.append(LabelCheck(check="provenance", status="passed", message=summary.note))
    except JudgekitError as exc:
        refuse("provenance", exc)
    usage = load_usage(folder)
    try:
        check_not_selection_set(table, usage)
        message = "the labels were never used to choose between judges"
        checks.append(LabelCheck(check="selection_set", status="passed", message=message))
    except JudgekitError as exc:
        refuse("selection_set", exc)
    if prompt is not None and transcripts is None:
        raise JudgekitError(
            f"--prompt {prompt}: give --transcripts too (the labelled items' transcripts), so their texts "
            "can be looked for in the prompt",
            exit_code=2,
        )
    if few_shot is None and prompt is None:
        checks.append(
            LabelCheck(check="few_shot", status="skipped", message="no --few-shot or --prompt file given")
        )
    else:
        texts, messages = _transcript_texts(Path(transcripts)) if transcripts is not None else (None, {})
        shots = Path(few_shot) if few_shot is not None else None
        examples = (
            parse_few_shot(read_input(shots, "few-shot file"), source=shots) if shots is not None else []
        )
        try:
            prompt_path = Path(prompt) if prompt is not None else None
            few_shot_check = _few_shot_check(
                table, examples, texts=texts, messages=messages, few_shot=shots, prompt=prompt_path
            )
            checks.append(few_shot_check)
        except JudgekitError as exc:
            refuse("few_shot", exc)
    exit_code = refusals[0].exit_code if refusals else 0
    return LabelCheckDocument(
        labels=str(labels), ok=not refusals, provenance=summary, checks=checks, exit_code=exit_code
    )
