"""Label tables for calibration: their checks, and the judge's rows taken from a results file.

:func:`check_labels` is ``judgekit labels check`` as one call: provenance (enough random production
samples), the selection set (labels already used to choose between judges) and few-shot leakage (the
judge's few-shot examples or its prompt holding a labelled item), built on
:mod:`judgekit.calibration.guards`, returning a :class:`LabelCheckDocument`.

:func:`labels_from_results` is ``judgekit labels from-results``: a results file's judge verdicts as the
judge's label rows, item ids spelled as the review sheet and the labelling page spell them, optionally
joined with the experts' table (:class:`JudgeLabelsDocument`).
"""

from __future__ import annotations

import csv
import io
import os
from collections import Counter
from collections.abc import Sequence
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
from judgekit.golden.review_labels import trial_item_id
from judgekit.graders.contract import Layer
from judgekit.io.atomic import write_atomic
from judgekit.io.documents import read_input
from judgekit.judges.prompt import render_transcript
from judgekit.results import RunResults, read_results
from judgekit.settings import records_folder
from judgekit.transcript import read_transcripts
from judgekit.verdict import Evidence, FrozenModel, Trust, Verdict

__all__ = [
    "JUDGE_RATER_PREFIX",
    "JudgeLabelsDocument",
    "LabelCheck",
    "LabelCheckDocument",
    "check_labels",
    "labels_from_results",
]


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


# ------------------------------------------------------------------------------- the judge's label rows

JUDGE_RATER_PREFIX = "judge-"
"""A results file's judge is named ``judge-`` and its fingerprint's first 12 characters by default."""

_JUDGE_COLUMNS = ("item_id", "criterion", "rater", "label", "case_id", "fingerprint")
_MEMBER = "_member"  # marks a jury member's row in memory (removed before the table is written)
_MEMBER_LABELS = (Verdict.PASS.value, Verdict.FAIL.value, Verdict.INSUFFICIENT_INFORMATION.value)
_CRITERION_CHECK = "criterion:"


class JudgeLabelsDocument(FrozenModel):
    """A results file's judge verdicts written as label rows (the ``judge_labels`` document).

    Attributes:
        results: The results file read.
        written: The label table written (empty when nothing was).
        raters: The judge's rater name per full judge fingerprint (one entry per judge in the results).
        criteria: The criteria written, in order of first appearance.
        rows: Judge label rows written.
        by_label: Rows written per label (``pass``, ``fail``, ``insufficient_information``: the judge
            abstained, the label table's abstain label).
        untrusted: Rows written whose verdict no calibration record trusted when graded. They are kept:
            calibration measures what the judge said, not whether it was trusted.
        left_out: Judge verdicts not written, per reason: ``not_evaluated`` (the criterion was skipped
            for the case), ``error`` (the judge gave no verdict), ``not_in_criteria`` (left out by
            ``--criteria``), ``not_in_join`` (an item and criterion the ``--join`` table does not hold).
        joined: The ``--join`` label table whose rows were written too (``None`` without ``--join``).
        joined_rows: Its rows written (0 without ``--join``).
        unmatched: Its (item, criterion) pairs with no judge verdict written (0 without ``--join``).
        members: For a jury's verdicts: rows written for each member's own verdict (rater = the member's
            name in the jury file, ``fingerprint`` = its own), by member, so ``judgekit calibrate --jury``
            can measure the members too; a member's error is left out. Empty without a jury.
        next: The command that calibrates the judge on the table.
    """

    results: str
    written: list[str] = Field(default_factory=list)
    raters: dict[str, str] = Field(default_factory=dict)
    criteria: list[str] = Field(default_factory=list)
    rows: int = 0
    by_label: dict[str, int] = Field(default_factory=dict)
    untrusted: int = 0
    left_out: dict[str, int] = Field(default_factory=dict)
    joined: str | None = None
    joined_rows: int = 0
    unmatched: int = 0
    members: dict[str, int] = Field(default_factory=dict)
    next: str | None = None


def _judge_rows(
    run: RunResults, rater: str | None, criteria: Sequence[str] | None
) -> tuple[list[dict[str, str]], JudgeLabelsDocument]:
    """Every judge verdict of ``run`` as a label row, and the summary of what was written and left out."""
    rows: list[dict[str, str]] = []
    raters: dict[str, str] = {}
    left: Counter[str] = Counter()
    untrusted = 0
    seen: dict[str, None] = {}
    for line in run.lines:
        fingerprint = line.judge_fingerprint.get("hex") if line.judge_fingerprint else None
        for check in line.checks:
            if check.layer != Layer.RUBRIC or not check.check_id.startswith(_CRITERION_CHECK):
                continue
            criterion = check.check_id.removeprefix(_CRITERION_CHECK)
            seen.setdefault(criterion)
            if check.verdict in {Verdict.NOT_EVALUATED, Verdict.ERROR}:
                left[check.verdict.value] += 1
                continue
            if criteria is not None and criterion not in criteria:
                left["not_in_criteria"] += 1
                continue
            fp = str(fingerprint) if fingerprint is not None else ""
            name = raters.setdefault(fp, rater or f"{JUDGE_RATER_PREFIX}{fp[:12] or 'unknown'}")
            untrusted += check.trust is Trust.UNTRUSTED
            row = [
                trial_item_id(line.case.id, line.trial),
                criterion,
                name,
                check.verdict.value,
                line.case.id,
                fp,
            ]
            rows.append(dict(zip(_JUDGE_COLUMNS, row, strict=True)))
            rows += _member_rows(check.evidence, row[:2], line.case.id)
    where = str(run.path)
    if criteria is not None:
        unknown = [c for c in criteria if c not in seen]
        if unknown:
            raise JudgekitError(
                f"--criteria: {', '.join(map(repr, unknown))} not judged in {where}; its judge's criteria: "
                f"{', '.join(seen) or '(none)'}"
            )
    if not raters and not left:
        raise JudgekitError(
            f"{where}: no judge verdict in the results (no rubric criterion checks); grade with a judge "
            "(judgekit grade --config FILE, or --judge-model and --rubric) first"
        )
    if not rows:
        counts = ", ".join(f"{n} {reason}" for reason, n in sorted(left.items()))
        raise JudgekitError(f"{where}: no judge verdict to write as a label ({counts})")
    if rater is not None and len(raters) > 1:
        raise JudgekitError(
            f"{where}: the results hold the verdicts of {len(raters)} judges (fingerprints "
            f"{', '.join(fp[:12] for fp in raters)}); --rater names one judge: leave it out to name each by "
            "its fingerprint"
        )
    summary = JudgeLabelsDocument(
        results=where,
        raters=raters,
        criteria=list(dict.fromkeys(r["criterion"] for r in rows)),
        untrusted=untrusted,
        left_out=dict(sorted(left.items())),
    )
    return rows, summary


def _member_rows(evidence: Sequence[Evidence], item: list[str], case_id: str) -> list[dict[str, str]]:
    """A jury's check: each member's own pass, fail or abstention as a row (its judge note's ``jury``)."""
    note = next(
        (e.data for e in evidence if isinstance(e.data, dict) and isinstance(e.data.get("jury"), dict)), None
    )
    jury = note.get("jury") if isinstance(note, dict) else None
    members = jury.get("members") if isinstance(jury, dict) else None
    rows = []
    for m in members if isinstance(members, list) else []:
        if isinstance(m, dict) and m.get("verdict") in _MEMBER_LABELS:
            row = [*item, str(m.get("name")), str(m.get("verdict")), case_id, str(m.get("fingerprint") or "")]
            rows.append({**dict(zip(_JUDGE_COLUMNS, row, strict=True)), _MEMBER: "1"})
    return rows


def _table_rows(table: LabelTable) -> list[dict[str, str]]:
    """A validated label table's rows as CSV fields (the columns :func:`parse_labels` reads)."""
    out = []
    for r in table.rows:
        fields = {
            "item_id": r.item.item_id,
            "criterion": r.item.criterion,
            "rater": r.rater,
            "label": r.label,
        }
        fields |= {"case_id": r.case_id, "fingerprint": r.fingerprint or "", "provenance": r.provenance or ""}
        fields |= {"confidence": "" if r.confidence is None else repr(r.confidence), "notes": r.notes or ""}
        fields["saw_judge"] = "" if r.saw_judge is None else ("yes" if r.saw_judge else "no")
        out.append(fields)
    return out


def _label_csv(rows: Sequence[dict[str, str]]) -> str:
    """Rows as a CSV label table: the judge's columns, then any other column some row fills."""
    columns = [*_JUDGE_COLUMNS]
    columns += [
        c
        for c in dict.fromkeys(k for r in rows for k in r)
        if c not in columns and any(r.get(c) for r in rows)
    ]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def labels_from_results(
    results: str | os.PathLike[str],
    *,
    out: str | os.PathLike[str],
    rater: str | None = None,
    criteria: Sequence[str] | None = None,
    join: str | os.PathLike[str] | None = None,
) -> JudgeLabelsDocument:
    """Write a results file's judge verdicts as the judge's rows of a label table, for calibration.

    One row per judged criterion of each trial: ``item_id`` as the review sheet and the labelling page
    name the trial (:func:`judgekit.golden.review_labels.trial_item_id`, ``case#trial``), ``criterion``
    the rubric criterion's id, ``label`` the judge's verdict (``pass``, ``fail``, or
    ``insufficient_information`` when it abstained: the abstain label), ``case_id``, and the judge's full
    ``fingerprint`` (so ``judgekit calibrate`` keys the record by it without ``--fingerprint``). A verdict
    no record trusted when graded is written all the same (counted in ``untrusted``); a skipped criterion
    (``not_evaluated``) or a judge error is left out and counted in ``left_out``.

    With ``join``, the experts' label table: only the judge's verdicts on the (item, criterion) pairs it
    holds are written, after its own rows, so ``out`` is one table for ``judgekit calibrate``.

    Args:
        results: A ``judgekit grade`` results file (JSONL).
        out: The label table to write (CSV).
        rater: The judge's rater name (``None``: ``judge-`` and the first 12 characters of its fingerprint,
            one name per judge when the results hold several).
        criteria: Write only these criteria (``None``: every judged criterion).
        join: The experts' label table (``.csv``, ``.tsv`` or ``.jsonl``, verdict scale), or ``None``.

    Returns:
        What was written and what was left out.

    Raises:
        JudgekitError: (exit 2) An unreadable results file or one with broken lines (each located), no
            judge verdict in it, an unknown criterion, ``rater`` with several judges, a ``join`` table that
            is malformed, already holds the judge's rater or shares no item and criterion with the results,
            or a table that would not read back.
    """
    run = read_results(results)
    if run.problems:
        raise ProblemsError(run.problems)
    rows, summary = _judge_rows(run, rater, criteria)
    table = None
    if join is not None:
        path = Path(join)
        table = parse_labels(read_input(path, "label table"), source=path)
        names = {*summary.raters.values(), *(r["rater"] for r in rows if _MEMBER in r)}
        clash = sorted(names & set(table.raters))
        if clash:
            raise JudgekitError(
                f"{path}: already holds rater {', '.join(map(repr, clash))}; name the judge with --rater"
            )
        wanted = {(k.item_id, k.criterion) for k in table.items}
        kept = [r for r in rows if (r["item_id"], r["criterion"]) in wanted]
        matched = {(r["item_id"], r["criterion"]) for r in kept}
        judged = sum(1 for r in rows if _MEMBER not in r) - sum(1 for r in kept if _MEMBER not in r)
        left = dict(summary.left_out) | {"not_in_join": judged}
        if not kept:
            raise JudgekitError(
                f"{path}: no (item_id, criterion) of it has a judge verdict in {results}; item ids are "
                "case#trial (as labels sheet and the labelling page write them) and criteria the rubric's ids"
            )
        rows = kept
        summary = summary.model_copy(
            update={
                "left_out": {k: v for k, v in sorted(left.items()) if v},
                "joined": str(path),
                "joined_rows": len(table.rows),
                "unmatched": len(wanted) - len(matched),
                "criteria": list(dict.fromkeys(r["criterion"] for r in rows)),
            }
        )
    plain = [{k: v for k, v in r.items() if k != _MEMBER} for r in rows]  # the marker is not a column
    text = _label_csv([*(_table_rows(table) if table is not None else []), *plain])
    parse_labels(text, source=Path(out), fmt="csv")  # the table calibrate will read: checked before writing
    write_atomic(out, text)
    judges = " or ".join(dict.fromkeys(summary.raters.values()))
    own = [r for r in rows if _MEMBER not in r]
    members = Counter(r["rater"] for r in rows if _MEMBER in r)
    return summary.model_copy(
        update={
            "written": [str(out)],
            "rows": len(own),
            "by_label": dict(Counter(r["label"] for r in own).most_common()),
            "members": dict(members),
            "next": f"judgekit calibrate {out} --judge {judges} "
            + ("--jury JURY_FILE " if members else "")
            + "--experts "
            + (
                ",".join(table.raters)
                if table is not None
                else "NAME[,NAME...] (add the experts' rows first, or use --join)"
            ),
        }
    )
