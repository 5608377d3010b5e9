"""Drift canaries: the canary set kept with a calibration record, and the history of its checks.

A **canary set** is a sidecar of one calibration record: ``<records>/canaries/<record file name>``, bound to
the record by the record file's SHA-256 and the judge's fingerprint. Each item is a labelled item of the
calibration (item, criterion, the experts' consensus) with the judge's recorded verdict (and its samples)
and what re-creates the judge's request exactly: the criterion as the rubric states it, the transcript
block and the case facts the judge was shown. A grader with the same fingerprint (same model, parameters,
template and rubric) renders the same request from them, so a re-asked canary is the question the judge
answered at calibration time. It is a sidecar rather than a field of the record because it holds whole
transcripts (a record stays small and readable) and because it can be built for a record already written
without changing that record's bytes or date.

A **canary check** (:class:`CanaryCheck`) is one file in ``<records>/canary-history/``: the items
re-asked, their recorded and new verdicts, the series' cumulative counts, the sequential test
(:mod:`judgekit.calibration.drift`) and what the check cost. The latest check of a fingerprint (by
``created_at``, then file name) is the trust function's fourth source
(:class:`judgekit.calibration.trust.TrustBook`): it withdraws trust while it declares drift *and* was made
against the latest calibration record of that fingerprint; a newer calibration record starts a new series
and lifts it.

This module is pure: it builds, chooses, evaluates and parses; the API (:mod:`judgekit.api.canary`) reads
and writes the files and asks the judge.
"""

from __future__ import annotations

import hashlib
import os
import random
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Final, Literal

from judgekit.calibration.drift import DEFAULT_ALPHA, DriftTest, drift_test
from judgekit.errors import JudgekitError
from judgekit.judges.rubric import Criterion
from judgekit.verdict import FrozenModel

__all__ = [
    "CANARY_DIR",
    "CANARY_HISTORY_DIR",
    "CanaryCheck",
    "CanaryCost",
    "CanaryItem",
    "CanaryReply",
    "CanarySet",
    "calibration_flip_rate",
    "canary_check_filename",
    "choose_items",
    "evaluate_check",
    "load_canary_check",
    "load_canary_set",
    "reply_of",
]

CANARY_DIR: Final = "canaries"
"""Sub-folder of the records folder holding one canary set per calibration record (same file name)."""

CANARY_HISTORY_DIR: Final = "canary-history"
"""Sub-folder of the records folder holding one file per canary check."""

_DECIDED: Final = ("pass", "fail")


class CanaryItem(FrozenModel):
    """One canary: a labelled item with the judge's recorded reply and what re-creates its request.

    Attributes:
        item_id: The label table's item (``case#trial``).
        case_id: The case.
        criterion: The criterion as the judge read it (id, text, guidance): re-rendered as is.
        consensus: The experts' consensus label (``pass``, ``fail``, ...), or ``None`` when they tied.
        recorded: The judge's verdict at calibration time (``pass``, ``fail``, ``insufficient_information``).
        recorded_samples: Each sample's verdict at calibration time (one per sample).
        transcript_text: The transcript block the judge was shown
            (:func:`judgekit.judges.prompt.render_transcript`).
        case_facts: The case facts the judge was shown (:func:`judgekit.judges.prompt.render_case_facts`).
    """

    item_id: str
    case_id: str
    criterion: Criterion
    consensus: str | None
    recorded: str
    recorded_samples: tuple[str, ...] = ()
    transcript_text: str
    case_facts: str

    @property
    def key(self) -> str:
        """``item_id/criterion id``: how a check names the item."""
        return f"{self.item_id}/{self.criterion.id}"


class CanarySet(FrozenModel):
    """The canary set of one calibration record.

    Attributes:
        schema_version: Always ``judgekit.canary-set/1``.
        fingerprint: The judge's exact fingerprint (the record's).
        record_file: The calibration record's file name.
        record_sha256: SHA-256 of the record file's bytes: a set whose record changed is refused.
        created_at: When the set was built (UTC).
        tolerance: The flip probability per item allowed under the null (0 < tolerance < 1).
        calibration_flip_rate: Share of the judge's samples at calibration that differed from its recorded
            verdict (0 to 1); ``None`` when every item had one sample.
        alpha: The false-alarm rate of the series (0 < alpha < 1).
        items: The canaries (at least one), in a stable order.
    """

    schema_version: Literal["judgekit.canary-set/1"] = "judgekit.canary-set/1"
    fingerprint: str
    record_file: str
    record_sha256: str
    created_at: datetime
    tolerance: float
    calibration_flip_rate: float | None = None
    alpha: float = DEFAULT_ALPHA
    items: tuple[CanaryItem, ...]

    @property
    def null_rate(self) -> float:
        """The null's flip probability (:func:`judgekit.calibration.drift.null_rate`)."""
        from judgekit.calibration.drift import null_rate

        return null_rate(self.tolerance, self.calibration_flip_rate)


def calibration_flip_rate(items: Sequence[CanaryItem]) -> float | None:
    """The share of samples at calibration that differ from their item's recorded verdict.

    ``None`` when no item has more than one sample (a single sample shows no instability).

    >>> from judgekit.judges.rubric import Criterion
    >>> c = Criterion(id="c", text="t")
    >>> item = CanaryItem(item_id="a#1", case_id="a", criterion=c, consensus="pass", recorded="pass",
    ...     recorded_samples=("pass", "pass", "fail"), transcript_text="", case_facts="")
    >>> round(calibration_flip_rate([item]), 4)
    0.3333
    """
    multi = [i for i in items if len(i.recorded_samples) > 1]
    if not multi:
        return None
    total = sum(len(i.recorded_samples) for i in multi)
    return sum(s != i.recorded for i in multi for s in i.recorded_samples) / total


class CanaryReply(FrozenModel):
    """One re-asked canary.

    Attributes:
        item: The item's key (``item_id/criterion``).
        consensus: The experts' consensus, or ``None``.
        recorded: The recorded verdict.
        rejudged: The new verdict (``error`` when the call failed: counted in neither stream).
        flipped: Whether the new verdict differs from the recorded one (``False`` on ``error``).
        error: Why the call failed, or ``None``.
    """

    item: str
    consensus: str | None
    recorded: str
    rejudged: str
    flipped: bool
    error: str | None = None


class CanaryCost(FrozenModel):
    """What a check cost, as the judge client counts it.

    Attributes:
        calls: Judge calls made (samples included; never answered from a cassette).
        prompt_tokens: Prompt tokens reported.
        completion_tokens: Completion tokens reported.
        usd: Cost in US dollars; ``None`` when a call's price is unknown.
        unknown_reason: Why ``usd`` is ``None``.
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usd: float | None = 0.0
    unknown_reason: str | None = None


class CanaryCheck(FrozenModel):
    """One canary check: a file of the canary history, and the trust function's fourth source.

    Attributes:
        schema_version: Always ``judgekit.canary-check/1``.
        fingerprint: The judge's exact fingerprint.
        created_at: When the check was made (UTC).
        record_file: The calibration record whose canary set was re-asked (the series it belongs to).
        check: This check's number in the series (1 for the first check against the record).
        seed: The seed of the items' choice.
        replies: Every re-asked item.
        rejudged: Items answered over the series (errors left out).
        flips: Flips over the series.
        right_before: Items answered over the series whose recorded verdict agreed with the consensus.
        new_errors: Of those, items whose new verdict does not.
        errors: Calls that failed in this check.
        test: The sequential test on the series' counts.
        detected: Whether drift is declared: by this check's test, or by an earlier check of the series
            (an alarm stands until a new calibration record).
        first_detected: The file name of the check that first declared drift in the series, or ``None``.
        cost: What this check cost.
    """

    schema_version: Literal["judgekit.canary-check/1"] = "judgekit.canary-check/1"
    fingerprint: str
    created_at: datetime
    record_file: str
    check: int
    seed: int
    replies: tuple[CanaryReply, ...]
    rejudged: int
    flips: int
    right_before: int
    new_errors: int
    errors: int
    test: DriftTest
    detected: bool
    first_detected: str | None = None
    cost: CanaryCost = CanaryCost()

    @property
    def flipped_items(self) -> list[str]:
        """The items of this check whose verdict flipped."""
        return [r.item for r in self.replies if r.flipped]


def canary_check_filename(fingerprint: str, created_at: datetime, check: int) -> str:
    """``<sha256(fingerprint)[:16]>-<UTC time>-c<check, 6 digits>.json``: names of a series sort by check.

    >>> canary_check_filename("ab" * 32, datetime(2026, 12, 5, 21, 0, tzinfo=UTC), 3)[-30:]
    '-20261205T210000Z-c000003.json'
    """
    digest = hashlib.sha256(fingerprint.encode("utf-8")).hexdigest()[:16]
    return f"{digest}-{created_at.astimezone(UTC).strftime('%Y%m%dT%H%M%SZ')}-c{check:06d}.json"


def choose_items(canaries: CanarySet, n: int, *, seed: int, check: int) -> list[CanaryItem]:
    """The ``n`` distinct items a check re-asks: a seeded choice, different for each check of the series.

    Args:
        canaries: The canary set.
        n: How many (>= 1); more than the set holds takes them all.
        seed: The seed (the same seed and check number choose the same items).
        check: The check's number in the series.

    Raises:
        JudgekitError: When ``n`` is below 1 (exit code 2).
    """
    if n < 1:
        raise JudgekitError(f"--canary must be at least 1 (got {n})", exit_code=2)
    rng = random.Random(f"judgekit-canary:{seed}:{check}")
    chosen = rng.sample(range(len(canaries.items)), min(n, len(canaries.items)))
    return [canaries.items[i] for i in sorted(chosen)]


def evaluate_check(
    canaries: CanarySet,
    previous: CanaryCheck | None,
    replies: Sequence[CanaryReply],
    *,
    seed: int,
    cost: CanaryCost,
    now: datetime | None = None,
    previous_file: str | None = None,
) -> CanaryCheck:
    """The check after ``replies``: the series' counts updated and the sequential test applied.

    Args:
        canaries: The canary set re-asked.
        previous: The latest earlier check of the same series (same fingerprint and record), or ``None``.
        replies: This check's replies.
        seed: The seed of the items' choice.
        cost: What the check cost.
        now: The check's time (UTC now when ``None``).
        previous_file: ``previous``'s file name (named when it first declared drift).

    Returns:
        The check, ready to be written to the history.
    """
    answered = [r for r in replies if r.error is None]
    right = [r for r in answered if r.consensus is not None and r.recorded == r.consensus]
    base = previous
    rejudged = (base.rejudged if base else 0) + len(answered)
    flips = (base.flips if base else 0) + sum(r.flipped for r in answered)
    right_before = (base.right_before if base else 0) + len(right)
    new_errors = (base.new_errors if base else 0) + sum(r.rejudged != r.consensus for r in right)
    test = drift_test(
        flips=flips,
        rejudged=rejudged,
        new_errors=new_errors,
        right_before=right_before,
        null_rate=canaries.null_rate,
        alpha=canaries.alpha,
    )
    when = (now or datetime.now(UTC)).replace(microsecond=0)
    number = (base.check if base else 0) + 1
    first = base.first_detected if base and base.detected else None
    if first is None and base is not None and base.detected:
        first = previous_file
    if first is None and test.detected:
        first = canary_check_filename(canaries.fingerprint, when, number)
    return CanaryCheck(
        fingerprint=canaries.fingerprint,
        created_at=when,
        record_file=canaries.record_file,
        check=number,
        seed=seed,
        replies=tuple(replies),
        rejudged=rejudged,
        flips=flips,
        right_before=right_before,
        new_errors=new_errors,
        errors=len(replies) - len(answered),
        test=test,
        detected=test.detected or bool(base and base.detected),
        first_detected=first,
        cost=cost,
    )


def reply_of(item: CanaryItem, verdict: str, error: str | None) -> CanaryReply:
    """The reply of one re-asked item (``verdict`` ``error`` with ``error`` set when the call failed)."""
    failed = error is not None or verdict == "error"
    return CanaryReply(
        item=item.key,
        consensus=item.consensus,
        recorded=item.recorded,
        rejudged=verdict,
        flipped=not failed and verdict != item.recorded,
        error=(error or "the judge's reply was an error") if failed else None,
    )


def load_canary_set(text: str | bytes, *, source: str | os.PathLike[str] | None = None) -> CanarySet:
    """Parse and validate a canary set.

    Raises:
        ProblemsError: When it is not JSON, or a field is missing, unknown or invalid.
    """
    from judgekit.io.documents import load_json_model

    return load_json_model(CanarySet, text, source=source, what="canary set")


def load_canary_check(text: str | bytes, *, source: str | os.PathLike[str] | None = None) -> CanaryCheck:
    """Parse and validate a canary check (a file of the canary history).

    Raises:
        ProblemsError: When it is not JSON, or a field is missing, unknown or invalid.
    """
    from judgekit.io.documents import load_json_model

    return load_json_model(CanaryCheck, text, source=source, what="canary check")
