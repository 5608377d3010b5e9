"""Grading the deterministic layers of many trials past one machine, on Ray Data.

The work is the runner's, cut into batches that Ray Data's ``map_batches`` runs on the workers of a
cluster:

1. the driver plans the run with :func:`judgekit.runner.plan_trials` (same input problems, same holdout
   rule, same first-kept duplicates as ``judgekit grade``) and turns each planned trial into a record
   (:func:`trial_records`, columns :data:`RECORD_COLUMNS`);
2. each worker builds one :class:`TrialBatchGrader` (the cases are pickled once into its constructor, not
   into every batch) and grades each batch of records with :func:`judgekit.api.runs.grade_trials` and
   :class:`judgekit.runner.LayeredTrialGrader`, the very code ``judgekit grade`` runs: the same checks,
   verdicts, redaction and :func:`~judgekit.results.make_result_line`/
   :func:`~judgekit.results.dump_result_line` lines;
3. the driver sorts the lines by (case, trial) on the cluster and writes them to one results file (or
   returns them).

Only the deterministic layers run on Ray; the judge layer is not distributed (its concurrency is the
provider's rate limit, not CPUs): grade with a judge through ``judgekit grade``.

States are read on the workers: case fixtures resolve against ``root`` and transcript state paths against
each record's ``state_dir`` (the transcript file's folder, resolved on the driver), so those paths must be
the same on every worker (a shared filesystem). Ray is optional: ``pip install 'judgekit-agents[ray]'``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from judgekit.api.runs import RunOptions, grade_trials, open_results
from judgekit.errors import JudgekitError, Problem, did_you_mean
from judgekit.integrations.grading import require_extra
from judgekit.results import TrialSource
from judgekit.runner import (
    LayeredTrialGrader,
    OutputState,
    PlannedTrial,
    RunPlan,
    parse_transcript_line,
)
from judgekit.secrets import Redactor
from judgekit.verdict import Verdict

if TYPE_CHECKING:
    from judgekit.cases import Case
    from judgekit.graders.grounding import GroundingMode
    from judgekit.provenance import Provenance

__all__ = [
    "OUTPUT_COLUMNS",
    "RECORD_COLUMNS",
    "RayRun",
    "TrialBatchGrader",
    "grade_dataset",
    "grade_on_ray",
    "trial_records",
]

RECORD_COLUMNS = ("case_id", "trial", "transcript", "file", "line", "sha256", "state_dir")
"""Columns of a trial record: ``case_id`` and ``trial`` (the trial's key), ``transcript`` (the trial as one
JSONL transcript line, ``docs/transcripts.md``), ``file``, ``line`` and ``sha256`` (where it came from, as
results record it in ``source``) and ``state_dir`` (the folder relative state paths resolve against; the
same path on every worker)."""

OUTPUT_COLUMNS = ("case_id", "trial", "verdict", "result", "file", "line", "field", "problem")
"""Columns :class:`TrialBatchGrader` returns, one row per record: the key, the verdict (``None`` for a
record that could not be graded), ``result`` (the result line as ``judgekit grade`` writes it; ``None``
when the record was left out), the record's ``file`` and ``line``, and for a record left out the
``field`` concerned (``""`` for the whole line) and the ``problem`` (what is wrong; ``None`` when
graded)."""


def _ray() -> Any:
    return require_extra("ray", "ray")


def trial_records(plan: RunPlan) -> list[dict[str, Any]]:
    """The planned trials as records for a Ray Dataset (``ray.data.from_items``), in plan order.

    Args:
        plan: From :func:`judgekit.runner.plan_trials`.

    Returns:
        One dictionary per trial with :data:`RECORD_COLUMNS`; ``state_dir`` is the transcript file's
        folder, resolved as ``judgekit grade`` resolves it.
    """
    return [
        {
            "case_id": t.transcript.case_id,
            "trial": t.transcript.trial,
            "transcript": t.transcript.model_dump_json(),
            "file": t.source.file,
            "line": t.source.line,
            "sha256": t.source.sha256,
            "state_dir": str(Path(t.source.file).resolve().parent),
        }
        for t in plan.trials
    ]


class TrialBatchGrader:
    """Grades batches of trial records on the deterministic layers: a Ray Data ``map_batches`` callable.

    One instance per worker (Ray builds it once per actor): the cases and options are shipped once, and
    the state cache lives across batches. Each batch goes through :func:`judgekit.api.runs.grade_trials`
    (the grading step of ``judgekit grade``) with a :class:`judgekit.runner.LayeredTrialGrader` without a
    judge, so a line is exactly what ``judgekit grade`` writes for that trial (a grader that raises gives
    the trial an ``error`` verdict, as there).

    Args:
        cases: The cases the records may name (every reviewed case the plan graded).
        root: The golden set's root on the workers (case fixtures resolve against it).
        run_id: The run id written in every line.
        grounding: Also check expected sources, in this mode (``--grounding``).
        grading: judgekit's configuration recorded in every line (``grading``; already free of secrets).
        holdouts: The holdout cases named for the run (recorded in ``grading["holdouts"]``).
        provenance: The run's provenance, recorded in every line; ``None`` leaves it out.
        redactor: Removes secrets from every line (built on the driver, so the driver's environment
            decides what is secret); ``None`` uses a shape-based one.
    """

    def __init__(
        self,
        cases: Sequence[Case],
        root: str | os.PathLike[str],
        *,
        run_id: str,
        grounding: GroundingMode | None = None,
        grading: Mapping[str, JsonValue] | None = None,
        holdouts: Sequence[str] = (),
        provenance: Provenance | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        self.cases = {case.id: case for case in cases}
        self.run_id = run_id
        self.grading = dict(grading or {})
        self.holdouts = tuple(holdouts)
        self.provenance = provenance
        self.redactor = redactor or Redactor()
        self.grader = LayeredTrialGrader(Path(root), None, "withhold", grounding)

    def grade_records(self, records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Grade trial records (:data:`RECORD_COLUMNS`); one output row (:data:`OUTPUT_COLUMNS`) each.

        A record that is not a transcript, or names a case that was not shipped, gives a row with its
        ``problem`` (the message :func:`judgekit.runner.plan_trials` gives for such a line) and no line.
        """
        out: list[dict[str, Any]] = []
        trials: list[PlannedTrial] = []
        sources: dict[tuple[str, int], Path] = {}
        for record in records:
            file, number = str(record["file"]), int(record["line"])
            problems: list[Problem] = []
            try:
                transcript = parse_transcript_line(file, number, str(record["transcript"]).encode(), problems)
            except JudgekitError as exc:  # a raw chat conversation: the message names the import command
                message = str(exc).removeprefix(f"{file}:{number}: ")
                problems.append(Problem(Path(file), number, "", message))
                transcript = None
            case = self.cases.get(transcript.case_id) if transcript is not None else None
            if transcript is not None and case is None:
                problems.append(
                    Problem(
                        Path(file),
                        number,
                        "case_id",
                        f"case '{transcript.case_id}' is not among the cases shipped to the workers; "
                        f"trial {transcript.trial} left out{did_you_mean(transcript.case_id, self.cases)}",
                    )
                )
            if transcript is None or case is None:
                out.append(
                    {
                        "case_id": str(record.get("case_id") or ""),
                        "trial": int(record.get("trial") or 0),
                        "verdict": None,
                        "result": None,
                        "file": file,
                        "line": number,
                        "field": problems[0].field,
                        "problem": problems[0].message,
                    }
                )
                continue
            source = TrialSource(file=file, line=number, sha256=str(record["sha256"]))
            trials.append(PlannedTrial(case, transcript, source))
            sources[(transcript.case_id, transcript.trial)] = Path(str(record["state_dir"]))
        if trials:
            self.grader.set_sources(sources)
            out.extend(self._run(trials))
        return out

    def _run(self, trials: list[PlannedTrial]) -> list[dict[str, Any]]:
        plan = RunPlan(trials=trials, holdouts=self.holdouts)
        with tempfile.TemporaryDirectory(prefix="judgekit-ray-") as folder:
            part = Path(folder) / "part.jsonl"
            asyncio.run(
                grade_trials(
                    plan,
                    self.grader,
                    part,
                    state=OutputState(run_id=self.run_id),
                    options=RunOptions(concurrency=1, redactor=self.redactor),
                    grading=self.grading,
                    provenance=self.provenance,
                )
            )
            from judgekit.io.documents import read_regular_text

            lines = read_regular_text(part, "results part", encoding="utf-8").splitlines()
        rows: list[dict[str, Any]] = []
        for text in lines:
            data = json.loads(text)
            rows.append(
                {
                    "case_id": data["case"]["id"],
                    "trial": data["trial"],
                    "verdict": data["verdict"],
                    "result": text,
                    "file": data["source"]["file"],
                    "line": data["source"]["line"],
                    "field": None,
                    "problem": None,
                }
            )
        return rows

    def __call__(self, batch: Any) -> Any:
        """Ray Data ``map_batches`` entry point: a ``pyarrow.Table`` of records in, a table of rows out."""
        import pyarrow as pa

        rows = self.grade_records(batch.to_pylist())
        return pa.Table.from_pylist(rows, schema=_output_schema())


def _output_schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            ("case_id", pa.string()),
            ("trial", pa.int64()),
            ("verdict", pa.string()),
            ("result", pa.string()),
            ("file", pa.string()),
            ("line", pa.int64()),
            ("field", pa.string()),
            ("problem", pa.string()),
        ]
    )


@dataclass
class RayRun:
    """What a grading run on Ray did.

    Attributes:
        run_id: The run id written in every line.
        graded: Trials graded (lines written or returned).
        verdicts: Trials by verdict.
        problems: Input problems: the plan's, then records the workers left out.
        lines: The result lines sorted by (case, trial), when no ``out`` file was given; else empty.
        out: The results file written, or ``None``.
        seconds: Wall time of the grading on the cluster.
    """

    run_id: str
    graded: int
    verdicts: dict[Verdict, int]
    problems: list[Problem] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    out: Path | None = None
    seconds: float = 0.0


def grade_dataset(
    dataset: Any,
    cases: Sequence[Case],
    *,
    root: str | os.PathLike[str],
    run_id: str,
    grounding: GroundingMode | None = None,
    grading: Mapping[str, JsonValue] | None = None,
    holdouts: Sequence[str] = (),
    provenance: Provenance | None = None,
    redactor: Redactor | None = None,
    batch_size: int = 32,
    concurrency: int = 2,
) -> Any:
    """Grade a Ray Dataset of trial records on the deterministic layers; lazily, sorted by (case, trial).

    Args:
        dataset: A ``ray.data.Dataset`` with :data:`RECORD_COLUMNS` (from :func:`trial_records`, or read
            from Parquet or JSON files holding such records).
        cases: The cases the records name (shipped once to each worker).
        root: The golden set's root, the same path on every worker.
        run_id: The run id written in every line.
        grounding: Also check expected sources, in this mode.
        grading: judgekit's configuration recorded in every line.
        holdouts: The holdout cases named for the run.
        provenance: The run's provenance, recorded in every line.
        redactor: Removes secrets from every line (``Redactor.from_environ()`` of the driver when ``None``).
        batch_size: Records per batch.
        concurrency: Worker actors (each holds the cases and a state cache).

    Returns:
        A ``ray.data.Dataset`` with :data:`OUTPUT_COLUMNS`, sorted by ``case_id`` then ``trial``.

    Raises:
        JudgekitError: When Ray is not installed (the message gives the install command), the dataset
            lacks a record column, or ``batch_size`` or ``concurrency`` is below 1.
    """
    ray = _ray()
    if batch_size < 1 or concurrency < 1:
        raise JudgekitError(
            f"batch_size and concurrency must be at least 1 (got {batch_size} and {concurrency})",
            exit_code=2,
        )
    missing = [c for c in RECORD_COLUMNS if c not in dataset.columns()]
    if missing:
        raise JudgekitError(
            f"the dataset has no column {', '.join(missing)}: trial records need {', '.join(RECORD_COLUMNS)} "
            "(build them with judgekit.integrations.ray_grading.trial_records)",
            exit_code=2,
        )
    graded = dataset.map_batches(
        TrialBatchGrader,
        fn_constructor_kwargs={
            "cases": list(cases),
            "root": str(root),
            "run_id": run_id,
            "grounding": grounding,
            "grading": dict(grading or {}),
            "holdouts": tuple(holdouts),
            "provenance": provenance,
            "redactor": redactor or Redactor.from_environ(),
        },
        batch_format="pyarrow",
        batch_size=batch_size,
        compute=ray.data.ActorPoolStrategy(size=concurrency),
    )
    return graded.sort(["case_id", "trial"])


def grade_on_ray(
    plan: RunPlan,
    *,
    root: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    run_id: str | None = None,
    grounding: GroundingMode | None = None,
    grading: Mapping[str, JsonValue] | None = None,
    provenance: Provenance | None = None,
    redactor: Redactor | None = None,
    batch_size: int = 32,
    concurrency: int = 2,
) -> RayRun:
    """Grade a plan's trials on the deterministic layers on the Ray cluster ``ray.init`` connected to.

    Args:
        plan: From :func:`judgekit.runner.plan_trials` (its problems are reported, its held-out trials
            are not graded, its named holdouts are recorded in every line).
        root: The golden set's root (``case_set.root``), the same path on every worker.
        out: A results file to write, sorted by (case, trial); it must not exist or be empty (there is no
            resume on Ray: grade again into a new file). ``None`` returns the lines in :attr:`RayRun.lines`.
        run_id: The run id to write; a fresh one when ``None``.
        grounding: Also check expected sources, in this mode.
        grading: judgekit's configuration recorded in every line.
        provenance: The run's provenance, recorded in every line.
        redactor: Removes secrets from every line (``Redactor.from_environ()`` of the driver when ``None``).
        batch_size: Trials per batch.
        concurrency: Worker actors.

    Returns:
        What the run did; lines sorted by (case, trial) are identical to the lines ``judgekit grade``
        writes for the same trials with the same run id, grading record and provenance, except
        ``duration_s`` (each trial's grading time).

    Raises:
        JudgekitError: When Ray is not installed, ``out`` already holds results or its folder does not
            exist, or ``batch_size`` or ``concurrency`` is below 1 (exit code 2).
    """
    from judgekit.io.atomic import LineAppender
    from judgekit.runner import new_run_id

    ray = _ray()
    if out is not None:
        run_id = run_id or open_results(out, plan).run_id
    run_id = run_id or new_run_id()
    started = time.perf_counter()
    run = RayRun(run_id=run_id, graded=0, verdicts=dict.fromkeys(Verdict, 0), problems=list(plan.problems))
    cases = list({t.case.id: t.case for t in plan.trials}.values())
    rows: Iterable[Mapping[str, Any]] = ()
    if plan.trials:
        dataset = ray.data.from_items(trial_records(plan))
        rows = grade_dataset(
            dataset,
            cases,
            root=root,
            run_id=run_id,
            grounding=grounding,
            grading=grading,
            holdouts=plan.holdouts,
            provenance=provenance,
            redactor=redactor,
            batch_size=batch_size,
            concurrency=concurrency,
        ).iter_rows()
    with contextlib.ExitStack() as stack:
        appender = stack.enter_context(LineAppender(Path(out))) if out is not None else None
        for row in rows:
            if row["result"] is None:
                run.problems.append(
                    Problem(Path(str(row["file"])), int(row["line"]), str(row["field"]), str(row["problem"]))
                )
                continue
            run.graded += 1
            run.verdicts[Verdict(row["verdict"])] += 1
            if appender is not None:
                appender.write_line(str(row["result"]))
            else:
                run.lines.append(str(row["result"]))
    run.out = Path(out) if out is not None else None
    run.seconds = time.perf_counter() - started
    return run
