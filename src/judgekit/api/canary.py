"""Drift canaries: build the canary set of a calibration record, and re-check a judge against it.

Two jobs, one function each (the rules and files are :mod:`judgekit.calibration.canary`'s, the test is
:mod:`judgekit.calibration.drift`'s):

- :func:`build_canary_set`: from a results file the judge graded (its verdicts and samples), the
  transcripts and the golden set it graded (which re-create each request exactly) and the calibration
  record (which items were labelled, and the experts' consensus), the record's canary set; written next to
  the record (``<records>/canaries/<record file name>``) by :func:`write_canary_set`.
- :func:`check_canaries`: re-ask ``n`` canary items (a seeded choice) through the judge's own client,
  never from the cassette; compare the replies with the recorded ones and with the labels; update the
  sequential test of the series; write the check to ``<records>/canary-history/``. A check that declares
  drift withdraws trust through the one trust function
  (:meth:`judgekit.calibration.trust.TrustBook.status`, source 4). ``judgekit grade --canary N`` runs it
  before grading and the run's verdicts are then decided by the records as the check left them;
  ``judgekit judge canary`` runs it alone (exit 1 on drift).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from judgekit.calibration.canary import (
    CANARY_DIR,
    CANARY_HISTORY_DIR,
    CanaryCheck,
    CanaryCost,
    CanaryItem,
    CanarySet,
    calibration_flip_rate,
    canary_check_filename,
    choose_items,
    evaluate_check,
    load_canary_set,
    reply_of,
)
from judgekit.calibration.drift import DEFAULT_ALPHA, DEFAULT_TOLERANCE
from judgekit.errors import JudgekitError
from judgekit.verdict import FrozenModel

if TYPE_CHECKING:
    from judgekit.caseset import CaseSet
    from judgekit.graders.rubric import RubricGrader
    from judgekit.judges.rubric import Rubric

__all__ = [
    "CanaryOutcome",
    "build_canary_set",
    "canary_set_path",
    "check_canaries",
    "check_canaries_async",
    "latest_record",
    "write_canary_set",
]


def canary_set_path(records: str | os.PathLike[str], record_file: str) -> Path:
    """Where the canary set of a calibration record lives: ``<records>/canaries/<record file name>``."""
    return Path(records) / CANARY_DIR / record_file


def _no_record(fingerprint: str, records: Path) -> JudgekitError:
    return JudgekitError(
        f"no calibration record for fingerprint {fingerprint[:12]} in {records}: a canary set is kept with "
        "the judge's latest calibration record; calibrate the judge first (judgekit calibrate)",
        exit_code=2,
    )


def latest_record(fingerprint: str, records: str | os.PathLike[str]) -> Path:
    """The file of the latest calibration record for ``fingerprint`` (the one the trust function reads).

    Raises:
        JudgekitError: When the folder holds none for it (exit code 2).
        ProblemsError: When a record there is broken (exit code 2).
    """
    from judgekit.calibration.trust import TrustBook

    folder = Path(records)
    name = TrustBook(folder).status(fingerprint).record_file
    if name is None:
        raise _no_record(fingerprint, folder)
    return folder / name


def _criterion_key(check_id: str) -> str:
    from judgekit.calibration.trust import criterion_key

    return criterion_key(check_id)


def _judged(
    line_checks: Sequence[object], fingerprint: str
) -> dict[str, tuple[str, tuple[str, ...], object]]:
    """``criterion id -> (verdict, samples, text_hash)`` of a result line's checks by ``fingerprint``."""
    from judgekit.verdict import CheckResult

    out: dict[str, tuple[str, tuple[str, ...], object]] = {}
    for check in line_checks:
        if not isinstance(check, CheckResult) or not check.check_id.startswith("criterion:"):
            continue
        notes = [e.data for e in check.evidence if e.kind == "note" and isinstance(e.data, dict)]
        note = next((d for d in notes if d.get("fingerprint") == fingerprint), None)
        if note is None:
            continue
        samples = note.get("samples")
        listed = tuple(str(s) for s in samples) if isinstance(samples, list) else ()
        out[_criterion_key(check.check_id)] = (check.verdict.value, listed, note.get("criterion_text"))
    return out


def build_canary_set(
    results: str | os.PathLike[str],
    *,
    rubric: Rubric,
    cases: CaseSet | str | os.PathLike[str],
    transcripts: Sequence[str | os.PathLike[str]],
    record: str | os.PathLike[str] | None = None,
    records: str | os.PathLike[str] | None = None,
    fingerprint: str | None = None,
    include_case_criteria: bool = True,
    tolerance: float = DEFAULT_TOLERANCE,
    alpha: float = DEFAULT_ALPHA,
    now: datetime | None = None,
) -> CanarySet:
    """The canary set of a calibration record, from the results file its judge graded.

    An item becomes a canary when the record labelled it (item ``case#trial`` and criterion, in its
    metrics' items), the results file holds the judge's decided verdict on it by the record's exact
    fingerprint on the criterion text the case states now (by hash), and its transcript is among
    ``transcripts`` (the request is re-rendered from the
    transcript, the case facts and the criterion, exactly as the judge was asked).

    Args:
        results: The results file (``judgekit grade --out``) graded by the judge the record calibrated.
        rubric: The judge's rubric: with the case's own criteria, what each canary's criterion is.
        cases: The golden set the results were graded against.
        transcripts: The transcript files (or patterns) the results were graded from.
        record: The calibration record's file (``None``: the judge's latest record in ``records``).
        records: The records folder holding the latest record, when ``record`` is ``None``.
        fingerprint: The judge's fingerprint: the record must be for it, and without ``record`` its latest
            record is taken (``None``: the record's own fingerprint; then ``record`` is needed).
        include_case_criteria: Whether the judge also judged the cases' own criteria (the grader's option).
        tolerance: The flip probability per item allowed under the null (0 < tolerance < 1).
        alpha: The false-alarm rate of the series (0 < alpha < 1).
        now: The set's time (UTC now when ``None``).

    Returns:
        The canary set (write it with :func:`write_canary_set`).

    Raises:
        JudgekitError: (exit code 2) When the record is for another fingerprint, neither a record nor a
            fingerprint and records folder is given, the tolerance or alpha is out of range, or no labelled
            item has a judge verdict and a transcript.
        ProblemsError: When the record, the results or the transcripts are broken (exit code 2).
    """
    from judgekit.calibration.records import load_record
    from judgekit.caseset import CaseSet, load_case_set
    from judgekit.golden.sample import trial_item_id
    from judgekit.graders.rubric import case_criteria
    from judgekit.io.documents import read_input
    from judgekit.io.paths import expand_input_paths
    from judgekit.judges.prompt import render_case_facts, render_transcript
    from judgekit.results import read_results
    from judgekit.runner import plan_trials

    for name, value in (("--tolerance", tolerance), ("--alpha", alpha)):
        if not 0.0 < value < 1.0:
            raise JudgekitError(f"{name} must be above 0 and below 1 (got {value:g})", exit_code=2)
    lines = read_results(results).lines  # the input named first is read first
    if record is None:
        if records is None or fingerprint is None:
            raise JudgekitError(
                "a canary set needs its calibration record: give the record's file, or the judge's "
                "fingerprint and the records folder",
                exit_code=2,
            )
        record = latest_record(fingerprint, records)
    data = read_input(record, "calibration record")
    calibration = load_record(data, source=record)
    if fingerprint is not None and calibration.fingerprint != fingerprint:
        raise JudgekitError(
            f"{record}: the record is for fingerprint {calibration.fingerprint[:12]}, the judge configured "
            f"is {fingerprint[:12]}: give the judge the record calibrated (its model, rubric and "
            "parameters)",
            exit_code=2,
        )
    labelled = {(i.item_id, _criterion_key(i.criterion)): i for i in calibration.metrics.items}
    case_set = cases if isinstance(cases, CaseSet) else load_case_set([Path(cases)])
    files = expand_input_paths(transcripts, what="transcript file", option="--transcripts")
    plan = plan_trials(case_set, files, holdout=(), option="--holdout")
    planned = {t.key: t for t in [*plan.trials, *plan.held_out]}
    items: list[CanaryItem] = []
    for line in lines:
        trial = planned.get((line.case.id, line.trial))
        if trial is None:
            continue
        judged = _judged(line.checks, calibration.fingerprint)
        own = case_criteria(trial.case)[0] if include_case_criteria else []
        criteria = {c.id: c for c in [*rubric.criteria, *own]}
        for criterion_id, (verdict, samples, text_hash) in sorted(judged.items()):
            item = labelled.get((trial_item_id(line.case.id, line.trial), criterion_id))
            criterion = criteria.get(criterion_id)
            if item is None or criterion is None or verdict not in ("pass", "fail"):
                continue
            if text_hash is not None and text_hash != criterion.text_hash:
                continue  # the case's criterion changed since it was judged: not the same question
            items.append(
                CanaryItem(
                    item_id=item.item_id,
                    case_id=line.case.id,
                    criterion=criterion,
                    consensus=item.consensus,
                    recorded=verdict,
                    recorded_samples=samples,
                    transcript_text=render_transcript(trial.transcript),
                    case_facts=render_case_facts(trial.case),
                )
            )
    if not items:
        raise JudgekitError(
            f"{results}: no item the record {Path(record).name} labelled has a pass or fail verdict of its "
            f"judge ({calibration.fingerprint[:12]}) in the results and a transcript among --transcripts: "
            "give the results file the labelled items were graded in (item ids are CASE#TRIAL)",
            exit_code=2,
        )
    items.sort(key=lambda i: (i.case_id, i.item_id, i.criterion.id))  # not the results' finishing order
    return CanarySet(
        fingerprint=calibration.fingerprint,
        record_file=Path(record).name,
        record_sha256=hashlib.sha256(data).hexdigest(),
        created_at=(now or datetime.now(UTC)).replace(microsecond=0),
        tolerance=tolerance,
        calibration_flip_rate=calibration_flip_rate(items),
        alpha=alpha,
        items=tuple(items),
    )


def write_canary_set(canaries: CanarySet, records: str | os.PathLike[str]) -> Path:
    """Write the canary set next to its record (``<records>/canaries/<record file name>``).

    Raises:
        JudgekitError: When it cannot be written (exit code 2).
    """
    from judgekit.io.atomic import write_atomic_making_folder

    path = canary_set_path(records, canaries.record_file)
    write_atomic_making_folder(path, canaries.model_dump_json(indent=2) + "\n", what="canary set")
    return path


class CanaryOutcome(FrozenModel):
    """What a canary check did (the ``canary_check`` document of ``judgekit judge canary``).

    Attributes:
        fingerprint: The judge's fingerprint.
        records: The records folder.
        canary_set: The canary set re-asked.
        items_in_set: Canaries in the set.
        null_rate: The null's flip probability per item.
        check: The check written to the history.
        history_file: Its file.
        detected: Whether drift is declared (then the judge is untrusted until re-calibrated).
        summary: One line saying so, with the cost.
    """

    fingerprint: str
    records: str
    canary_set: str
    items_in_set: int
    null_rate: float
    check: CanaryCheck
    history_file: str
    detected: bool
    summary: str


def _cost(costs: Sequence[object], calls: int) -> CanaryCost:
    from judgekit.graders.rubric import JudgmentCost

    spent = [c for c in costs if isinstance(c, JudgmentCost)]
    unknown = next((c.unknown_reason for c in spent if c.usd is None), None)
    return CanaryCost(
        calls=calls,
        prompt_tokens=sum(c.prompt_tokens for c in spent),
        completion_tokens=sum(c.completion_tokens for c in spent),
        usd=None if unknown is not None else round(sum(c.usd or 0.0 for c in spent), 10),
        unknown_reason=unknown,
    )


def _series(grader: RubricGrader, records: Path) -> tuple[CanarySet, CanaryCheck | None, str | None]:
    """The canary set of the judge's latest calibration record and the latest check of its series.

    Raises:
        JudgekitError: (exit code 2) Without a record, without a canary set, or with one whose record
            changed.
    """
    from judgekit.calibration.trust import TrustBook
    from judgekit.io.documents import read_input

    status = TrustBook(records).status(grader.fingerprint)
    if status.record_file is None:
        raise _no_record(grader.fingerprint, records)
    path = canary_set_path(records, status.record_file)
    if not path.is_file():
        raise JudgekitError(
            f"no canary set for calibration record {status.record_file} ({path} does not exist): build it "
            "from the results its judge graded with `judgekit judge canary-set RESULTS --transcripts FILE "
            f"--cases FOLDER --records {records}` (with the same judge options)",
            exit_code=2,
        )
    canaries = load_canary_set(read_input(path, "canary set"), source=path)
    digest = hashlib.sha256(read_input(records / status.record_file, "calibration record")).hexdigest()
    if canaries.record_sha256 != digest or canaries.fingerprint != grader.fingerprint:
        raise JudgekitError(
            f"{path}: the canary set was built for another version of {status.record_file} (its SHA-256 or "
            "fingerprint differs): build it again with `judgekit judge canary-set`",
            exit_code=2,
        )
    previous = status.canary_check
    if previous is None or previous.record_file != status.record_file:
        return canaries, None, None
    return canaries, previous, status.canary_check_file


async def check_canaries_async(
    grader: RubricGrader,
    n: int,
    *,
    records: str | os.PathLike[str] | None = None,
    seed: int = 0,
    now: datetime | None = None,
) -> CanaryOutcome:
    """Re-ask ``n`` canaries through the judge's client, test for drift and write the check.

    Args:
        grader: The judge (its fingerprint names the calibration record and its canary set).
        n: Canaries to re-ask (>= 1; more than the set holds re-asks them all).
        records: The records folder (``None``: the folder of the grader's trust book).
        seed: The seed of the choice (each check of a series chooses anew from it).
        now: The check's time (UTC now when ``None``).

    Returns:
        The outcome; its check is written to ``<records>/canary-history/``.

    Raises:
        JudgekitError: (exit code 2) When ``n`` is below 1, the judge is a cascade or a jury, the cache mode
            is replay, no records folder is known, or the record or its canary set is missing.
    """
    from judgekit.calibration.trust import TrustBook
    from judgekit.io.atomic import write_atomic_making_folder

    if n < 1:
        raise JudgekitError(f"--canary must be at least 1 (got {n})", exit_code=2)
    if grader.cascade is not None or getattr(grader, "jury", None) is not None:
        raise JudgekitError(
            "a canary check re-asks one judge; this judge is a cascade or a jury: check each member's own "
            "fingerprint instead",
            exit_code=2,
        )
    if records is None:
        if not isinstance(grader.trust, TrustBook):
            raise JudgekitError(
                "a canary check needs the calibration records folder (--records)", exit_code=2
            )
        records = grader.trust.records_dir
    folder = Path(records)
    canaries, previous, previous_file = _series(grader, folder)
    number = (previous.check if previous is not None else 0) + 1
    chosen = choose_items(canaries, n, seed=seed, check=number)
    answers = await asyncio.gather(
        *(
            grader.rejudge(i.criterion, i.transcript_text, i.case_facts, item=f"canary {i.key}")
            for i in chosen
        )
    )
    replies = []
    for item, (sampled, _cost_of) in zip(chosen, answers, strict=True):
        failed = next((s.reason for s in sampled.samples if s.verdict.value == "error"), None)
        replies.append(
            reply_of(item, sampled.verdict.value, failed if sampled.verdict.value == "error" else None)
        )
    cost = _cost([c for _, c in answers], len(chosen) * grader.client.params.samples)
    check = evaluate_check(
        canaries, previous, replies, seed=seed, cost=cost, now=now, previous_file=previous_file
    )
    name = canary_check_filename(check.fingerprint, check.created_at, check.check)
    path = folder / CANARY_HISTORY_DIR / name
    write_atomic_making_folder(path, check.model_dump_json(indent=2) + "\n", what="canary check")
    return CanaryOutcome(
        fingerprint=grader.fingerprint,
        records=str(folder),
        canary_set=str(canary_set_path(folder, canaries.record_file)),
        items_in_set=len(canaries.items),
        null_rate=canaries.null_rate,
        check=check,
        history_file=str(path),
        detected=check.detected,
        summary=_summary(check, path),
    )


def _summary(check: CanaryCheck, path: Path) -> str:
    cost = check.cost
    dollars = f"${cost.usd:.4f}" if cost.usd is not None else f"unknown ({cost.unknown_reason})"
    flipped = ", ".join(check.flipped_items) or "none"
    verdict = "DRIFT DETECTED: the judge is untrusted until re-calibrated" if check.detected else "no drift"
    return (
        f"canary check {check.check} of fingerprint {check.fingerprint[:12]}: {len(check.replies)} item(s) "
        f"re-asked, flipped: {flipped}; {check.errors} error(s); {check.test.summary}: {verdict}; cost "
        f"{cost.calls} call(s), {cost.prompt_tokens}+{cost.completion_tokens} tokens, {dollars} -> {path}"
    )


def check_canaries(
    grader: RubricGrader,
    n: int,
    *,
    records: str | os.PathLike[str] | None = None,
    seed: int = 0,
    now: datetime | None = None,
) -> CanaryOutcome:
    """:func:`check_canaries_async` from synchronous code (the same arguments)."""
    return asyncio.run(check_canaries_async(grader, n, records=records, seed=seed, now=now))
