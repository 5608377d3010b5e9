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

``judgekit grade --ray ADDRESS`` (:class:`RayChecks`) splits the work differently: the workers
(:class:`CheckBatch`) compute only each trial's deterministic checks, and the run service grades the run on
the driver with them (:class:`judgekit.api.runs.DeterministicPass`): the judge, the verdicts, resume and the
lines are those of the run in process, so its results file is the in-process one but for ``run_id`` and
``duration_s``.

States are read on the workers: case fixtures resolve against ``root`` and transcript state paths against
each record's ``state_dir`` (the transcript file's folder, resolved on the driver), so those paths must be
the same on every worker (a shared filesystem). Ray is optional: ``pip install 'judgekit-agents[ray]'``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import tempfile
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue, TypeAdapter

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
from judgekit.verdict import CheckResult, Verdict

if TYPE_CHECKING:
    from judgekit.cases import Case
    from judgekit.graders.grounding import GroundingMode
    from judgekit.provenance import Provenance

__all__ = [
    "CHECK_COLUMNS",
    "OUTPUT_COLUMNS",
    "RECORD_COLUMNS",
    "CheckBatch",
    "RayChecks",
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


def _read_records(
    records: Iterable[Mapping[str, Any]], cases: Mapping[str, Case]
) -> tuple[list[PlannedTrial], dict[tuple[str, int], Path], list[tuple[Mapping[str, Any], Problem]]]:
    """Trial records read back on a worker, as :func:`judgekit.runner.plan_trials` reads their lines.

    Returns:
        The planned trials, the folder each trial's states resolve against, and each record left out with
        its problem (not a transcript, or naming a case not in ``cases``).
    """
    trials: list[PlannedTrial] = []
    sources: dict[tuple[str, int], Path] = {}
    left_out: list[tuple[Mapping[str, Any], Problem]] = []
    for record in records:
        file, number = str(record["file"]), int(record["line"])
        problems: list[Problem] = []
        try:
            transcript = parse_transcript_line(file, number, str(record["transcript"]).encode(), problems)
        except JudgekitError as exc:  # a raw chat conversation: the message names the import command
            message = str(exc).removeprefix(f"{file}:{number}: ")
            problems.append(Problem(Path(file), number, "", message))
            transcript = None
        case = cases.get(transcript.case_id) if transcript is not None else None
        if transcript is not None and case is None:
            problems.append(
                Problem(
                    Path(file),
                    number,
                    "case_id",
                    f"case '{transcript.case_id}' is not among the cases shipped to the workers; "
                    f"trial {transcript.trial} left out{did_you_mean(transcript.case_id, cases)}",
                )
            )
        if transcript is None or case is None:
            left_out.append((record, problems[0]))
            continue
        trials.append(
            PlannedTrial(case, transcript, TrialSource(file=file, line=number, sha256=str(record["sha256"])))
        )
        sources[(transcript.case_id, transcript.trial)] = Path(str(record["state_dir"]))
    return trials, sources, left_out


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
        trials, sources, left_out = _read_records(records, self.cases)
        out = [
            {
                "case_id": str(record.get("case_id") or ""),
                "trial": int(record.get("trial") or 0),
                "verdict": None,
                "result": None,
                "file": str(record["file"]),
                "line": int(record["line"]),
                "field": problem.field,
                "problem": problem.message,
            }
            for record, problem in left_out
        ]
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


# --------------------------------------------------------------------------- judgekit grade --ray

CHECK_COLUMNS = ("case_id", "trial", "checks", "error_type", "error")
"""Columns :class:`CheckBatch` returns, one row per record: the trial's key, ``checks`` (the deterministic
layers' checks as a JSON array of check results; ``None`` when they raised) and, when they raised, the
exception's type name and message (``None`` otherwise)."""

_CHECKS = TypeAdapter(list[CheckResult])


class CheckBatch:
    """Computes the deterministic layers' checks of batches of trial records: ``grade --ray``'s workers.

    One instance per worker actor (the cases are shipped once); each record's checks are what
    :meth:`judgekit.runner.LayeredTrialGrader.deterministic_checks` gives in process, with the states read
    on the worker (case fixtures against ``root``, transcript states against the record's ``state_dir``).

    Args:
        cases: The cases the records name.
        root: The golden set's root on the workers.
        grounding: The run's grounding mode (``None``: no grounding check).
    """

    def __init__(
        self, cases: Sequence[Case], root: str | os.PathLike[str], grounding: GroundingMode | None = None
    ) -> None:
        self.cases = {case.id: case for case in cases}
        self.grader = LayeredTrialGrader(Path(root), None, "withhold", grounding)

    def check_records(self, records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """One row (:data:`CHECK_COLUMNS`) per record; a record that cannot be read is an error row."""
        trials, sources, left_out = _read_records(records, self.cases)
        rows = [
            _check_row(str(record.get("case_id") or ""), int(record.get("trial") or 0), None, problem)
            for record, problem in left_out
        ]
        self.grader.set_sources(sources)
        for t in trials:
            try:
                checks = self.grader.deterministic_checks(t.case, t.transcript)
            except Exception as exc:  # the in-process run makes it an error trial: so does the driver
                rows.append(_check_row(t.case.id, t.transcript.trial, None, exc))
            else:
                rows.append(_check_row(t.case.id, t.transcript.trial, checks, None))
        return rows

    def __call__(self, batch: Any) -> Any:
        """Ray Data ``map_batches`` entry point: a ``pyarrow.Table`` of records in, of check rows out."""
        import pyarrow as pa

        schema = pa.schema(
            [
                ("case_id", pa.string()),
                ("trial", pa.int64()),
                ("checks", pa.string()),
                ("error_type", pa.string()),
                ("error", pa.string()),
            ]
        )
        return pa.Table.from_pylist(self.check_records(batch.to_pylist()), schema=schema)


def _check_row(
    case_id: str, trial: int, checks: list[CheckResult] | None, error: BaseException | Problem | None
) -> dict[str, Any]:
    error_type: str | None = None
    message: str | None = None
    if isinstance(error, Problem):  # a record the worker could not read (never one the driver planned)
        error_type, message = "JudgekitError", f"the trial record could not be read on the worker: {error}"
    elif error is not None:
        error_type, message = type(error).__name__, str(error)
    return {
        "case_id": case_id,
        "trial": trial,
        "checks": _CHECKS.dump_json(checks).decode() if checks is not None else None,
        "error_type": error_type,
        "error": message,
    }


def _given(row: Mapping[str, Any]) -> list[CheckResult] | BaseException:
    """A check row back on the driver: the checks, or an exception with the worker's type name and message.

    The run names a grader's exception by its type and message (``the grader raised TYPE: MESSAGE``), so
    the one rebuilt here gives the trial the very line the in-process run writes.
    """
    if row["checks"] is not None:
        return _CHECKS.validate_json(str(row["checks"]))
    raised: type[Exception] = type(str(row["error_type"]), (Exception,), {"__module__": __name__})
    return raised(str(row["error"]))


@dataclass(frozen=True)
class RayChecks:
    """``judgekit grade --ray ADDRESS``: the deterministic layers computed on a Ray cluster, on Ray Data.

    A :class:`judgekit.api.runs.DeterministicPass`: give it as ``RunOptions(deterministic_pass=...)``. The
    run then goes on as in process on the driver (judge, combination into the verdict, one line per trial
    in plan order, resume, secrets redaction), so the results file is the in-process run's.

    Attributes:
        address: The cluster: ``auto`` (the cluster this machine is a node of, or ``RAY_ADDRESS``),
            ``HOST:PORT`` (the head's GCS port, 6379 by default), ``ray://HOST:PORT`` (Ray Client, 10001
            by default), or ``local`` (start a one-machine cluster in this process). When this process is
            already connected (``ray.init`` was called) that connection is used and kept.
        concurrency: Worker actors; ``None``: one per CPU of the cluster but one (at least one).
        batch_size: Trials per batch (at least 1).
        connect_timeout: Seconds to wait for the head's port to answer before giving up (more than 0).

    Raises:
        JudgekitError: (exit code 2) When made without Ray installed (the message gives the install
            command), with an empty address, or with an argument out of range.
    """

    address: str = "auto"
    concurrency: int | None = None
    batch_size: int = 32
    connect_timeout: float = 10.0

    def __post_init__(self) -> None:
        if not self.address.strip():
            raise JudgekitError(
                "--ray needs the cluster's address: auto, HOST:PORT, ray://HOST:PORT or local", exit_code=2
            )
        if self.batch_size < 1 or (self.concurrency is not None and self.concurrency < 1):
            raise JudgekitError(
                f"batch_size and concurrency must be at least 1 "
                f"(got {self.batch_size} and {self.concurrency})",
                exit_code=2,
            )
        if not self.connect_timeout > 0:
            raise JudgekitError(
                f"connect_timeout must be more than 0 (got {self.connect_timeout})", exit_code=2
            )
        _ray_for_cli()  # Ray absent: refused before anything is graded, judged or paid for

    def checks(
        self,
        trials: Sequence[PlannedTrial],
        *,
        root: str | os.PathLike[str],
        grounding: GroundingMode | None,
        say: Callable[[str], None],
    ) -> dict[tuple[str, int], list[CheckResult] | BaseException]:
        """The deterministic layers' checks of ``trials`` by key, computed on the cluster.

        Raises:
            JudgekitError: (exit code 2) When Ray is not installed (the message gives the install command)
                or the cluster cannot be reached.
        """
        if not trials:
            return {}
        ray = _ray_for_cli()
        started = time.perf_counter()
        connected = _connect(ray, self.address, self.connect_timeout)
        try:
            cpus = int(ray.cluster_resources().get("CPU", 1))
            nodes = sum(1 for node in ray.nodes() if node.get("Alive"))
            size = self.concurrency or max(1, cpus - 1)
            cases = list({t.case.id: t.case for t in trials}.values())
            ray.data.DataContext.get_current().enable_progress_bars = False
            logging.getLogger("ray.data").setLevel(logging.WARNING)  # the notes are this run's, on stderr
            logging.getLogger("ray.data._internal.progress").setLevel(logging.ERROR)  # "bars disabled"
            with warnings.catch_warnings():  # Ray's documented way to turn restarts off is deprecated
                warnings.filterwarnings("ignore", message=r".*ray_remote_args.* is deprecated")
                rows = ray.data.from_items(trial_records(RunPlan(trials=list(trials)))).map_batches(
                    CheckBatch,
                    fn_constructor_kwargs={"cases": cases, "root": str(root), "grounding": grounding},
                    batch_format="pyarrow",
                    batch_size=self.batch_size,
                    compute=ray.data.ActorPoolStrategy(size=size),
                    max_restarts=0,  # a worker lost fails the pass (nothing is written yet): grade again
                )
            try:
                given = {(str(row["case_id"]), int(row["trial"])): _given(row) for row in rows.iter_rows()}
            except Exception as exc:  # the cluster failed (a node lost, a worker killed): not the trials
                reason = _last_line(exc)
                raise JudgekitError(
                    f"--ray {self.address}: the cluster failed while checking the trials ({reason}); no "
                    "line was written for them: grade again (with --resume if the results file holds "
                    "earlier lines)",
                    exit_code=2,
                ) from None
        finally:
            if connected:
                ray.shutdown()
        say(
            f"ray: the deterministic layers of {len(given)} trial(s) checked on {nodes} node(s) "
            f"({cpus} CPU(s), {size} worker(s)) at {self.address} in {time.perf_counter() - started:.1f}s"
        )
        return given


def _ray_for_cli() -> Any:
    """Ray, or the install command (exit code 2: the run cannot start without it)."""
    try:
        return _ray()
    except JudgekitError as exc:
        exc.exit_code = 2
        raise


_DEFAULT_PORTS = {"ray://": 10001, "": 6379}


def _connect(ray: Any, address: str, timeout: float) -> bool:
    """Connect to the cluster at ``address``; whether this call connected (and so must disconnect).

    A ``HOST:PORT`` or ``ray://HOST:PORT`` address is probed first: Ray itself retries an unreachable head
    for minutes.

    Raises:
        JudgekitError: (exit code 2) When the head does not answer within ``timeout`` seconds or Ray
            refuses the connection (the message says which, and what to do).
    """
    if ray.is_initialized():
        return False
    what = (
        "start one with 'ray start --head' and give its address (HOST:6379, ray://HOST:10001, or auto on "
        "one of its nodes)"
    )
    if address not in ("auto", "local"):
        scheme = "ray://" if address.startswith("ray://") else ""
        host, _, port = address.removeprefix(scheme).rpartition(":")
        if not host or not port.isdigit():
            host, port = address.removeprefix(scheme), str(_DEFAULT_PORTS[scheme])
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
        except OSError as exc:
            raise JudgekitError(
                f"--ray {address}: no Ray cluster answers at {host}:{port} within {timeout:g}s "
                f"({exc.strerror or type(exc).__name__}); {what}",
                exit_code=2,
            ) from None
    try:
        ray.init(
            address=address,  # "local" starts a new one-machine cluster even where one runs
            log_to_driver=False,
            configure_logging=False,
            **({"include_dashboard": False} if address == "local" else {}),
        )
    except Exception as exc:  # Ray's own errors: no cluster for auto, a refused token, a version mismatch
        reason = "; ".join(_last_line(e) for e in (exc, exc.__cause__) if e is not None)
        raise JudgekitError(
            f"--ray {address}: could not connect to the Ray cluster: {reason}; check the address, that this "
            "machine has the cluster's Ray and Python versions, and with token authentication "
            "RAY_AUTH_MODE=token and the cluster's token",
            exit_code=2,
        ) from None
    return True


def _last_line(exc: BaseException) -> str:
    """An exception of Ray's in one line: its message's last line (Ray's own messages end with the reason)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return (lines[-1] if lines else type(exc).__name__)[:1000]
