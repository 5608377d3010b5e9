"""Grade a run with its judge requests sent as one provider batch: ``judgekit grade --batch``.

:func:`grade_in_batch` is :func:`judgekit.runner.run_trials` with the judge's answers coming from a
provider batch (:mod:`judgekit.judges.batch`) instead of one HTTP call each:

1. **collect**: every trial without a result line is graded once with the judge in collect mode (its
   requests kept, none answered, no line written);
2. **submit**: the requests are written to ``OUT.batch-input.jsonl``, uploaded and submitted; the state
   file ``OUT.batch.json`` is written after each step (input file id, then batch id), so that a run killed
   at any point and started again with ``--resume`` never uploads or submits twice (``--resume`` collects
   again first, and refuses a run whose requests the batch does not all hold);
3. **poll** the batch every ``poll_s`` seconds until it is ``completed`` (or ``failed``, ``expired``,
   ``cancelled``: an error, exit code 1, recorded in the state file; except that a batch which expired or
   was cancelled with an output or error file is merged: the requests it finished are answered, the rest
   are judge errors);
4. **merge**: the output and error files are read and the run is graded again through the one grading
   path (:func:`~judgekit.runner.run_trials`), each judge request answered from the batch: verdicts,
   parsing, fingerprints and cost are those of a direct run, the cost at the batch price, and every line's
   ``grading["batch"]`` names the batch. A request the batch failed is a judge ``provider_error`` for that
   judgment (the trial undecided, the batch's message in the reason), never a pass.

``--resume --retry-errors`` (:attr:`~judgekit.runner.OutputState.retry`) grades again the trials whose
line ended in error. Once the recorded batch is merged, their judge requests go in a new batch (its state
replaces the merged one in ``OUT.batch.json``; the old batch stays named in the lines it answered); a batch
not yet merged is merged first, as ``--resume`` does, so a retry before its merge is answered by it.
Each retried trial's error line is replaced when the answers are merged (see
:func:`~judgekit.runner.run_trials`): a kill before then leaves the file as it was.

What needs a judge answer before deciding its next request cannot be batched and is refused: a judge
cascade (a stage is asked only when the previous one is unsure).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from judgekit.errors import JudgekitError
from judgekit.judges import batch as jb
from judgekit.runner import LayeredTrialGrader, OutputState, Progress, RunPlan, RunSummary, run_trials
from judgekit.secrets import Redactor

if TYPE_CHECKING:
    from judgekit.judges.client import JudgeClient
    from judgekit.provenance import Provenance

__all__ = ["BatchRun", "check_poll_interval", "grade_in_batch"]

POLL_DEFAULT_S = 30.0
"""Seconds between two looks at a batch's status (``--batch-poll``)."""

POLL_FAILURES_MAX = 5
"""Consecutive failed looks at a batch's status before the run stops (``--resume`` goes on polling)."""


def check_poll_interval(poll_s: float) -> None:
    """Refuse a polling interval that is not a positive number of seconds (``--batch-poll``).

    Raises:
        JudgekitError: When ``poll_s`` is 0, negative or NaN (exit code 2).
    """
    if not poll_s > 0:
        raise JudgekitError(f"--batch-poll must be more than 0 seconds (got {poll_s:g})", exit_code=2)


@dataclass(frozen=True)
class BatchRun:
    """What :func:`grade_in_batch` did.

    Attributes:
        summary: The merge's run summary (what :func:`~judgekit.runner.run_trials` returns).
        state: The batch state as last written (``None`` when no request needed the batch: every one was
            in the cassette, or no trial was left to grade).
        state_file: Where the batch state is kept (``OUT.batch.json``).
    """

    summary: RunSummary
    state: jb.BatchState | None
    state_file: Path


def _client(grader: LayeredTrialGrader) -> JudgeClient:
    rubric = grader.rubric_grader
    if rubric is None:
        raise JudgekitError(
            "--batch sends the judge layer's requests as a provider batch, and this run has no judge: give "
            "--judge-model too",
            exit_code=2,
        )
    if rubric.cascade is not None:
        raise JudgekitError(
            "--batch cannot route through a judge cascade (--cascade): a later stage is asked only after "
            "the earlier stage's answer, which a batch gives a day later; drop one of them",
            exit_code=2,
        )
    if rubric.jury is not None:
        raise JudgekitError(
            "--batch cannot ask a jury (--jury or judge.jury): a batch goes to one model and the jury's "
            "members are several; grade the jury without --batch",
            exit_code=2,
        )
    return rubric.client


async def _collect(
    plan: RunPlan, grader: LayeredTrialGrader, state: OutputState, collector: jb.Collector, concurrency: int
) -> None:
    """Grade every trial without a line once, with the judge collecting its requests (nothing written)."""
    client = _client(grader)
    todo = [t for t in plan.trials if t.key not in state.done]
    limit = asyncio.Semaphore(max(1, concurrency))

    async def one(index: int) -> None:
        trial = todo[index]
        async with limit:
            await grader.grade(trial.case, trial.transcript)

    client.batch = collector
    try:
        await asyncio.gather(*(one(i) for i in range(len(todo))))
    finally:
        client.batch = None


def _check_same_judge(path: Path, saved: jb.BatchState, target: jb.BatchTarget) -> None:
    if saved.model != target.model or saved.api_base != target.api_base:
        raise JudgekitError(
            f"{path}: batch {saved.batch_id or '(not submitted)'} was made for judge {saved.model} at "
            f"{saved.api_base or 'the provider default'}, this run's judge is {target.model} at "
            f"{target.api_base or 'the provider default'}; grade with the same judge, or use another --out",
            exit_code=2,
        )


def _check_in_batch(path: Path, saved: jb.BatchState, collector: jb.Collector) -> None:
    """Refuse to merge a submitted batch into a run whose judge requests are not all in it."""
    outside = set(collector.requests) - set(saved.request_keys)
    if outside:
        raise JudgekitError(
            f"{path}: {len(outside)} of the {len(collector.requests)} judge request(s) this run has left to "
            f"answer are not in batch {saved.batch_id} (the cases, transcripts, rubric or judge settings "
            "changed since it was submitted), so the batch cannot answer them; grade with what was "
            f"submitted, or remove {path} to submit a new batch (it is billed again)",
            exit_code=2,
        )


def _failed(path: Path, saved: jb.BatchState) -> JudgekitError:
    why = "; ".join(saved.errors) if saved.errors else "the provider gave no reason"
    return JudgekitError(
        f"batch {saved.batch_id} {saved.status} ({why}); {path} records it. Nothing was merged: remove "
        f"{path} and grade with --batch --resume to submit a new batch (it is billed again), or grade "
        "with --resume without --batch",
        exit_code=1,
    )


async def _poll(
    path: Path,
    saved: jb.BatchState,
    target: jb.BatchTarget,
    *,
    poll_s: float,
    echo: Callable[[str], None],
) -> jb.BatchState:
    """Look at the batch every ``poll_s`` seconds until it is done; the state file follows each change."""
    batch_id = saved.batch_id or ""
    failures = 0
    shown = ""
    while True:
        try:
            batch = await jb.retrieve(target, batch_id)
            failures = 0
        except JudgekitError:
            failures += 1
            if failures >= POLL_FAILURES_MAX:
                raise
            await asyncio.sleep(poll_s)
            continue
        status = str(batch.get("status") or "unknown")
        update = {
            "status": status,
            "output_file_id": batch.get("output_file_id") or saved.output_file_id,
            "error_file_id": batch.get("error_file_id") or saved.error_file_id,
            "request_counts": jb.request_counts(batch),
            "errors": jb.batch_errors(batch),
        }
        changed = {k: v for k, v in update.items() if getattr(saved, k) != v}
        if changed:
            saved = jb.save_state(path, saved.model_copy(update=changed))
        counts = saved.request_counts or {}
        text = f"batch {batch_id}: {status}" + (
            f" ({counts.get('completed', 0)}/{counts.get('total', saved.requests)} done, "
            f"{counts.get('failed', 0)} failed)"
            if counts
            else ""
        )
        if text != shown:
            echo(text)
            shown = text
        if status == jb.DONE_STATUS or status in jb.FAILED_STATUSES:
            return saved
        await asyncio.sleep(poll_s)


async def grade_in_batch(
    plan: RunPlan,
    grader: LayeredTrialGrader,
    *,
    out: str | os.PathLike[str],
    state: OutputState,
    resume: bool = False,
    concurrency: int = 8,
    grading: Mapping[str, JsonValue] | None = None,
    redactor: Redactor | None = None,
    progress: Progress | None = None,
    fsync: bool = False,
    provenance: Provenance | None = None,
    poll_s: float = POLL_DEFAULT_S,
    echo: Callable[[str], None] = lambda text: None,
) -> BatchRun:
    """Grade every planned trial that has no line yet, with the judge's requests sent as one batch.

    Args:
        plan: The trials.
        grader: The runner's grader; its judge layer is batched (it must have one, without a cascade).
        out: The results file (appended to). The batch state goes to ``OUT.batch.json`` and the batch input
            to ``OUT.batch-input.jsonl`` beside it.
        state: From :func:`~judgekit.runner.prepare_output`.
        resume: Continue the batch recorded in ``OUT.batch.json`` (``--resume``); without it, an existing
            batch state file is refused.
        concurrency: Trials graded at once, collecting and merging.
        grading: judgekit's configuration for the run, recorded in every line (``batch`` is added: the
            batch's ids, size and price rule).
        redactor: Removes secrets from every line written.
        progress: Receives the merge's progress events.
        fsync: Force every line to disk.
        provenance: The run's provenance, recorded in every line.
        poll_s: Seconds between two looks at the batch's status (> 0).
        echo: Receives one line of text per step (submitted, each status change), for standard error.

    Returns:
        What was done.

    Raises:
        JudgekitError: (exit code 2) For what cannot be batched (no judge, a cascade, replay mode, a cost
            budget, a provider litellm does not batch), a batch state file left by another run without
            ``--resume``, or one made for another judge; on ``--resume``, a run with judge requests the
            batch does not hold (the cases, transcripts, rubric or judge settings changed). (exit code 1)
            When the provider's batch failed, or expired or was cancelled without an output or error file,
            or a files or batches call failed (``--resume`` tries again without submitting twice).
    """
    out = Path(out)
    check_poll_interval(poll_s)

    async def grade_left(recorded: Mapping[str, JsonValue] | None) -> RunSummary:
        """Grade the trials without a line, as an ordinary run, with ``recorded`` in every line."""
        return await run_trials(
            plan,
            grader,
            out=out,
            state=state,
            concurrency=concurrency,
            grading=recorded,
            redactor=redactor,
            progress=progress,
            fsync=fsync,
            provenance=provenance,
        )

    client = _client(grader)
    target = jb.batch_target(client)
    path = jb.state_path(out)
    saved = jb.load_state(path)
    if saved is not None and not resume:
        raise JudgekitError(
            f"{path}: this --out already has a batch ({saved.batch_id or 'not submitted'}, "
            f"{saved.status}); pass --resume to continue it, or remove {path} to start again",
            exit_code=2,
        )
    if saved is not None:
        _check_same_judge(path, saved, target)
        if jb.ended_without_answers(saved):
            raise _failed(path, saved)
        if saved.status == jb.MERGED_STATUS and all(t.key in state.done for t in plan.trials):
            echo(
                f"batch {saved.batch_id}: merged into {out} already ({saved.ended}); nothing is left to grade"
            )
            summary = await run_trials(plan, grader, out=out, state=state)
            return BatchRun(summary=summary, state=saved, state_file=path)
        if saved.status == jb.MERGED_STATUS and state.retry:
            # --retry-errors after the merge: the merged batch's answers are what ended in error, so the
            # trials left go in a new batch, whose state replaces this one once it is collected
            left = sum(1 for t in plan.trials if t.key not in state.done)
            echo(
                f"batch {saved.batch_id}: merged into {out} already ({saved.ended}); the {left} trial(s) "
                "left to grade go in a new batch"
            )
            saved = None
    price, basis = jb.batch_price(client)
    collector = jb.Collector(target)
    await _collect(plan, grader, state, collector, concurrency)
    if saved is not None and saved.batch_id is not None:
        _check_in_batch(path, saved, collector)
    else:
        if not collector.requests and saved is None:
            # every request was in the cassette, or nothing is left: no batch, an ordinary run
            summary = await grade_left(grading)
            echo("batch: no judge request to send (every one is in the cassette); graded directly")
            return BatchRun(summary=summary, state=None, state_file=path)
        content = jb.input_lines(collector.requests)
        digest = jb.keys_digest(content)
        if saved is not None and saved.input_sha256 != digest:
            raise JudgekitError(
                f"{path}: the judge requests of this run differ from those collected before the interruption "
                f"(input file {saved.input_file_id or 'not uploaded'}); remove {path} to start again",
                exit_code=2,
            )
        from judgekit.io.atomic import write_atomic

        write_atomic(jb.input_path(out), content)
        if saved is None:
            saved = jb.save_state(
                path,
                jb.BatchState(
                    model=target.model,
                    provider=target.provider,
                    api_base=target.api_base,
                    requests=len(collector.requests),
                    request_keys=tuple(sorted(collector.requests)),
                    input_sha256=digest,
                    price=basis,
                ),
            )
        found: dict[str, Any] | None = None
        if saved.input_file_id is None:
            file_id = await jb.upload(target, content, name=jb.input_path(out).name)
            saved = jb.save_state(path, saved.model_copy(update={"input_file_id": file_id}))
        else:
            # uploaded before an interruption: the batch may exist although its id was never recorded
            found = await jb.find_batch(target, saved.input_file_id)
            if found is not None:
                echo(
                    f"batch {found['id']}: found the batch created over {saved.input_file_id} before the "
                    "interruption; not submitting again"
                )
        created = found if found is not None else await jb.submit(target, saved.input_file_id or "")
        saved = jb.save_state(
            path,
            saved.model_copy(
                update={
                    "batch_id": created["id"],
                    "status": str(created.get("status") or "validating"),
                    "submitted_at": jb.now(),
                }
            ),
        )
        echo(
            f"batch {saved.batch_id}: submitted {saved.requests} judge request(s) to "
            f"{target.api_base or target.provider} (state: {path})"
        )
    saved = await _poll(path, saved, target, poll_s=poll_s, echo=echo)
    if jb.ended_without_answers(saved):
        raise _failed(path, saved)
    book = jb.AnswerBook(state=saved, price=price)
    if saved.output_file_id:
        book.add_file(
            await jb.download(target, saved.output_file_id), source=f"output file {saved.output_file_id}"
        )
    if saved.error_file_id:
        book.add_file(
            await jb.download(target, saved.error_file_id), source=f"error file {saved.error_file_id}"
        )
    record = dict(grading or {})
    record["batch"] = saved.record()
    client.batch = book
    try:
        summary = await grade_left(record)
    finally:
        client.batch = None
    if saved.status in jb.PARTIAL_STATUSES:
        answered = len(set(book.replies) & set(saved.request_keys))
        echo(
            f"batch {saved.batch_id}: {saved.status} with {answered} of {saved.requests} judge request(s) "
            f"answered: those were merged; the other {saved.requests - answered} are judge errors "
            "(provider_error) in their trials' lines. To judge them, grade again with --resume "
            "--retry-errors (a new batch)"
        )
    saved = jb.save_state(path, saved.model_copy(update={"status": jb.MERGED_STATUS, "ended": saved.status}))
    return BatchRun(summary=summary, state=saved, state_file=path)
