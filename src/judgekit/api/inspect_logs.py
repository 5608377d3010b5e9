"""Inspect AI logs in, scores back: re-grade the runs a team already has, as two calls.

:func:`import_inspect_logs` reads ``.eval`` and ``.json`` logs with inspect_ai's own reader
(:func:`judgekit.formats.inspect_logs.read_inspect_logs`), writes one transcript per sample and epoch
(and, if asked, the fidelity reports) and says, per sample, what the log kept and which grader layers
cannot judge it, as the ``inspect_import`` document (:class:`InspectImportDocument`).

After ``judgekit grade`` on those transcripts, :func:`write_inspect_scores` writes each verdict as a score
on a copy of its log (:func:`judgekit.formats.inspect_logs.write_scores`): the value, explanation, unscored
reason and per-check trust judgekit's Inspect scorer gives, beside the scores the log had, so ``inspect
view`` shows both. The original logs are never written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from pydantic import Field

from judgekit.api.traces import OtelTrace, UnsupportedLayer
from judgekit.caseset import LocatedProblem
from judgekit.errors import JudgekitError, Problem, ProblemsError
from judgekit.io.atomic import write_atomic
from judgekit.results import read_results
from judgekit.transcript import read_transcripts
from judgekit.verdict import FrozenModel, Grade, WrittenFile

__all__ = [
    "InspectImportDocument",
    "InspectSample",
    "InspectScoresDocument",
    "LogCopy",
    "import_inspect_logs",
    "write_inspect_scores",
]


class InspectSample(FrozenModel):
    """One sample imported from an Inspect log.

    Attributes:
        log: The log file.
        sample_id: The sample's id, as text.
        epoch: Its epoch (1-based).
        uuid: Inspect's unique id of the sample run, or ``None`` when the log has none.
        case_id: The transcript's case.
        trial: Its trial (the epoch, unless the case's trials were renumbered).
        summary: One line saying what the log kept and lost.
        fidelity: The fidelity report, as data.
        unsupported_layers: The layers that cannot judge it (empty when nothing they need was lost).
    """

    log: str
    sample_id: str
    epoch: int
    uuid: str | None
    case_id: str
    trial: int
    summary: str
    fidelity: dict[str, object]
    unsupported_layers: list[UnsupportedLayer]


class InspectImportDocument(FrozenModel):
    """What an Inspect log import did (the ``inspect_import`` document).

    Attributes:
        logs: The logs read.
        imported: Transcripts written (one per sample and epoch).
        samples: One entry per sample imported.
        renumbered: Cases whose samples shared an epoch: their trials count 1..n in reading order.
        problems: The samples not imported, each located by log, sample id and epoch.
        written: The files written (transcripts, fidelity reports); empty when no sample was imported.
        exit_code: 0 when every sample was imported, else 2 (an input error; not printed).
    """

    logs: list[str]
    imported: int
    samples: list[InspectSample]
    renumbered: list[str]
    problems: list[LocatedProblem]
    written: list[WrittenFile]
    exit_code: int = Field(default=0, exclude=True)


def import_inspect_logs(
    logs: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    case_id_field: str | None = None,
    final_state_field: str = "final_state",
    initial_state_field: str = "initial_state",
    fidelity: str | os.PathLike[str] | None = None,
) -> InspectImportDocument:
    """Import Inspect logs as transcripts and write them.

    Every log is read before anything is written: a missing, malformed or truncated log refuses the whole
    import. A sample that cannot be mapped (no case id in the field named, an error in the Inspect run, no
    messages, messages that do not form a transcript) is listed with its location and the others are
    written; the document's exit code is then 2.

    Args:
        logs: ``.eval`` or ``.json`` logs written by ``inspect eval``, or folders of them.
        out: Where to write the transcripts (JSON Lines).
        case_id_field: Dotted sample-metadata field of the case id (``None``: ``case_id``, else the sample
            id, as judgekit's Inspect scorer finds it).
        final_state_field: Metadata field of the world after, when the store has no
            ``judgekit:final_state``.
        initial_state_field: Metadata field of the world before, when the store has no
            ``judgekit:initial_state``.
        fidelity: Where to write the fidelity reports (JSON, one per transcript), or ``None``.

    Returns:
        The import.

    Raises:
        JudgekitError: (exit 2) A log that cannot be read, no log given, or an unwritable output.
        ProblemsError: (exit 2) When no sample at all could be imported (every one named).
    """
    from judgekit.formats.inspect_logs import read_inspect_logs

    if not logs:
        raise JudgekitError("no Inspect log given: name one or more .eval or .json logs")
    result = read_inspect_logs(
        logs,
        case_id_field=case_id_field,
        initial_state_field=initial_state_field,
        final_state_field=final_state_field,
    )
    if not result.samples:
        raise ProblemsError(result.problems or [Problem(Path(logs[0]), None, "", "the logs hold no sample")])
    write_atomic(out, "".join(s.transcript.model_dump_json() + "\n" for s in result.samples))
    written = [WrittenFile(path=str(out), what="transcripts")]
    if fidelity is not None:
        reports = [s.fidelity.model_dump(mode="json") for s in result.samples]
        write_atomic(fidelity, json.dumps(reports, indent=2) + "\n")
        written.append(WrittenFile(path=str(fidelity), what="fidelity_reports"))
    samples = []
    for s in result.samples:
        entry = OtelTrace.of(s.transcript.case_id, s.transcript.trial, s.fidelity)
        samples.append(
            InspectSample(
                log=str(s.ref.log),
                sample_id=str(s.ref.sample_id),
                epoch=s.ref.epoch,
                uuid=s.ref.uuid,
                case_id=entry.case_id,
                trial=entry.trial,
                summary=f"{s.ref.log.name}: {s.ref} -> {entry.case_id}#{entry.trial}: "
                + entry.summary.partition("): ")[2],
                fidelity=entry.fidelity,
                unsupported_layers=entry.unsupported_layers,
            )
        )
    return InspectImportDocument(
        logs=[str(p) for p in result.logs],
        imported=len(result.samples),
        samples=samples,
        renumbered=result.renumbered,
        problems=[LocatedProblem.of(p) for p in result.problems],
        written=written,
        exit_code=2 if result.problems else 0,
    )


class LogCopy(FrozenModel):
    """A log and its copy with the judgekit scores.

    Attributes:
        original: The log read (never written).
        scored_copy: The copy written, with the judgekit scores.
        scored: Samples (sample and epoch) given a judgekit score in the copy.
    """

    original: str
    scored_copy: str
    scored: int


class InspectScoresDocument(FrozenModel):
    """Verdicts written back as scores on copies of Inspect logs (the ``inspect_scores`` document).

    Attributes:
        results: The results file read.
        transcripts: The transcripts file the import wrote (it says which sample each trial is).
        score_name: The name of the scores written.
        copies: One entry per log copied.
        not_graded: Samples of those logs no result graded (no new score), as ``log: sample 'id' epoch n``.
    """

    results: str
    transcripts: str
    score_name: str
    copies: list[LogCopy]
    not_graded: list[str]


def write_inspect_scores(
    results: str | os.PathLike[str],
    transcripts: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    score_name: str = "judgekit",
) -> InspectScoresDocument:
    """Write the verdicts of a results file as scores on a copy of each Inspect log its trials came from.

    Each trial is found by its case and trial in ``transcripts`` (written by :func:`import_inspect_logs`),
    whose metadata names the log, sample id and epoch. Nothing is written unless every trial is placed.

    Args:
        results: The results file ``judgekit grade`` wrote for ``transcripts``.
        transcripts: The transcripts file :func:`import_inspect_logs` wrote.
        out_dir: The folder for the copies (same file names; never a log's own folder).
        score_name: The name of the new scores (default ``judgekit``, as judgekit's Inspect scorer).

    Returns:
        What was written.

    Raises:
        JudgekitError: (exit 2) An unreadable results file or log, a log that already has a score of that
            name, or a copy that would overwrite its original.
        ProblemsError: (exit 2) Results lines that are malformed or name a trial the transcripts file does
            not hold, or a transcript that came from no Inspect log (every one named).
    """
    from judgekit.formats.inspect_logs import SOURCE_KEY, SampleRef, grade_of_result, write_scores

    run = read_results(results)
    problems = list(run.problems)
    where: dict[tuple[str, int], SampleRef] = {}
    for number, transcript in enumerate(read_transcripts(transcripts), start=1):
        source = transcript.metadata.get(SOURCE_KEY)
        if not isinstance(source, dict) or not {"log", "sample_id", "epoch"} <= source.keys():
            problems.append(
                Problem(Path(transcripts), number, "metadata.inspect", "not imported from an Inspect log")
            )
            continue
        sample_id = source["sample_id"]
        where[(transcript.case_id, transcript.trial)] = SampleRef(
            Path(str(source["log"])),
            sample_id if isinstance(sample_id, int) else str(sample_id),
            int(str(source["epoch"])),
            str(source["uuid"]) if source.get("uuid") else None,
        )
    graded: dict[SampleRef, tuple[Grade, str]] = {}
    for line in run.lines:
        ref = where.get((line.case.id, line.trial))
        if ref is None:
            problems.append(
                Problem(
                    Path(results),
                    None,
                    f"{line.case.id}#{line.trial}",
                    f"no transcript of this trial in {transcripts}: give the transcripts file graded",
                )
            )
            continue
        graded[ref] = (grade_of_result(line), f"judgekit grade: {Path(results).name}, run {line.run_id}")
    if problems:
        raise ProblemsError(problems)
    written = write_scores(graded, out_dir, score_name=score_name)
    return InspectScoresDocument(
        results=str(results),
        transcripts=str(transcripts),
        score_name=score_name,
        copies=[
            LogCopy(original=str(original), scored_copy=str(copy), scored=written.scored[str(copy)])
            for original, copy in written.copies
        ],
        not_graded=[f"{ref.log}: {ref}" for ref in written.not_graded],
    )
