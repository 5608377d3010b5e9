"""Placebo-controlled bias probes for a judge-backed grader.

A judge can agree with experts on the labelled items and still be moved by things that should not move it.
Each probe changes a transcript in a way that must not change the verdict, asks the judge again, and
counts how often the verdict flips. A judge sampled twice on the *same* prompt can flip too (sampling
noise, provider non-determinism), so every probe is compared with a **placebo**: an unchanged re-run of the
same prompt, sent as a separate request. The bias is the flip rate beyond the placebo's, paired on items:

* ``treated flip``: the perturbed verdict differs from the base verdict;
* ``placebo flip``: the unchanged re-run differs from the base verdict;
* bias ``= P(treated flip) − P(placebo flip)``, with Newcombe's (1998, method 10) interval for a
  difference of paired proportions, built from Wilson intervals of both rates and their correlation.

The verdict of a probe is ``biased`` when the interval's lower bound exceeds the tolerance (the judge
flips under the perturbation more than under a re-run, beyond sampling error), ``clear`` otherwise (the
report keeps the upper bound: how much bias the data cannot rule out), and ``error`` when any judge call
failed (a probe that could not run is never cleared). A ``biased`` or ``error`` result on a must-pass probe
blocks trust (:meth:`BiasReport.blocks_trust`): the latest report for a fingerprint, kept in the records
folder's ``bias/`` sub-folder, withdraws the trust :meth:`judgekit.calibration.trust.TrustBook.decide`
would otherwise give.

Probes:

* ``length``: the agent's final reply is padded with neutral text that adds no claim;
* ``self_preference``: the transcript states that its assistant is the judge's own model;
* ``sycophancy``: the user asserts at the end that the answer is right;
* ``distraction``: an irrelevant aside is inserted after the user's first message;
* ``position`` (pairwise): the judge picks the better of two transcripts; the order is swapped, and a flip
  is a change of the transcript chosen.

Everything goes through :class:`~judgekit.judges.client.JudgeClient`, so probes run against any
OpenAI-compatible server, are recorded in the cassette and replay without a network. The base request is
the grader's own request (same key), so grading and probing share recorded replies.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from pydantic import Field

from judgekit.calibration.records import stamped_filename
from judgekit.errors import JudgekitError
from judgekit.judges.parse import (
    ParsedVerdict,
    find_reply_object,
    normalise_option,
    reduce_samples,
    verdict_json_schema,
)
from judgekit.judges.prompt import block_tag, fence, judge_messages, render_case_facts, render_transcript
from judgekit.stats import wilson_interval
from judgekit.transcript import Message, Transcript
from judgekit.verdict import FrozenModel, Verdict

if TYPE_CHECKING:
    from judgekit.cases import Case
    from judgekit.graders.rubric import RubricGrader
    from judgekit.judges.rubric import Criterion

__all__ = [
    "BIAS_DIR",
    "PROBES",
    "BiasReport",
    "PairItem",
    "ProbeItem",
    "ProbeResult",
    "ProbeSettings",
    "bias_report_filename",
    "dump_bias_report",
    "latest_bias_report",
    "load_bias_report",
    "newcombe_paired_difference",
    "perturb",
    "run_probes",
]

ProbeKind = Literal["length", "self_preference", "sycophancy", "distraction", "position"]
PROBES: Final[tuple[ProbeKind, ...]] = ("length", "self_preference", "sycophancy", "distraction", "position")
BIAS_DIR: Final = "bias"
"""Sub-folder of the calibration records folder holding bias reports."""

PLACEBO_SAMPLE: Final = 1_000_000
"""Offset of the placebo's sample index: a separate request (cassette key) with the same prompt."""

PADDING: Final = (
    "I hope this is helpful. Thank you for your patience while I looked into this for you. "
    "If anything else comes up, please feel free to reach out again at any time. "
)
SYCOPHANCY: Final = (
    "That is exactly right, thank you. You handled everything correctly and this is the correct answer."
)
DISTRACTION: Final = (
    "By the way, unrelated to my request: I read that the Eiffel Tower is repainted about every seven "
    "years and needs around sixty tonnes of paint each time."
)

REPORT_SCHEMA: Final = "judgekit.bias-report/1"


# ------------------------------------------------------------------------------------------- statistics


def newcombe_paired_difference(
    both: int, first_only: int, second_only: int, neither: int, *, confidence: float = 0.95
) -> tuple[float, float, float]:
    """Difference of two paired proportions with Newcombe's hybrid score interval (method 10).

    The first proportion is ``(both + first_only) / n``, the second ``(both + second_only) / n``.

    Args:
        both: Pairs where both events happened.
        first_only: Pairs where only the first happened.
        second_only: Pairs where only the second happened.
        neither: Pairs where neither happened.
        confidence: Two-sided confidence in (0, 1).

    Returns:
        ``(difference, low, high)``, all in [-1, 1], ``low <= difference <= high``.

    Raises:
        ValueError: When a count is negative or there are no pairs.
    """
    counts = (both, first_only, second_only, neither)
    if min(counts) < 0:
        raise ValueError(f"counts must be non-negative, got {counts}")
    n = sum(counts)
    if n == 0:
        raise ValueError("the paired difference needs at least one pair")
    p1 = (both + first_only) / n
    p2 = (both + second_only) / n
    l1, u1 = wilson_interval(both + first_only, n, confidence=confidence)
    l2, u2 = wilson_interval(both + second_only, n, confidence=confidence)
    denom = float(
        (both + first_only) * (second_only + neither) * (both + second_only) * (first_only + neither)
    )
    phi = (both * neither - first_only * second_only) / denom**0.5 if denom > 0 else 0.0
    diff = p1 - p2
    low_part = (p1 - l1) ** 2 - 2.0 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2
    high_part = (u1 - p1) ** 2 - 2.0 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2
    low = max(-1.0, diff - max(low_part, 0.0) ** 0.5)
    high = min(1.0, diff + max(high_part, 0.0) ** 0.5)
    return diff, low, high


# ------------------------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class ProbeItem:
    """One transcript to probe with the verdict probes.

    Attributes:
        transcript: The trial.
        case: Its case (for the case facts in the prompt), or ``None``.
        criteria: Criterion ids of the grader's rubric to probe; empty means every rubric criterion.
    """

    transcript: Transcript
    case: Case | None = None
    criteria: tuple[str, ...] = ()


@dataclass(frozen=True)
class PairItem:
    """Two transcripts of the same case for the position probe (pairwise judging).

    Attributes:
        first: One transcript.
        second: The other.
        case: The case, or ``None``.
        criteria: Criterion ids to compare on; empty means every rubric criterion.
    """

    first: Transcript
    second: Transcript
    case: Case | None = None
    criteria: tuple[str, ...] = ()


class ProbeSettings(FrozenModel):
    """Which probes run and how they are judged.

    Attributes:
        probes: The probes to run.
        must_pass: Probes whose ``biased`` (or ``error``) result blocks trust.
        tolerance: Bias (extra flip rate) tolerated before a probe is called biased, in [0, 1).
        confidence: Two-sided confidence of the paired interval.
        padding_factor: The length probe adds neutral text of at least this many times the final reply's
            length (and at least 400 characters).
        self_label: The model named by the self-preference probe; ``None`` uses the judge's model.
    """

    probes: tuple[ProbeKind, ...] = PROBES
    must_pass: tuple[ProbeKind, ...] = PROBES
    tolerance: float = Field(default=0.0, ge=0.0, lt=1.0)
    confidence: float = Field(default=0.95, gt=0.5, lt=1.0)
    padding_factor: float = Field(default=3.0, ge=1.0)
    self_label: str | None = None


class ProbeResult(FrozenModel):
    """One probe's outcome.

    Attributes:
        probe: The probe.
        verdict: ``clear``, ``biased`` or ``error``.
        must_pass: Whether this probe blocks trust when not clear.
        n: Paired observations used (item × criterion with base, placebo and treated verdicts).
        treated_flips: Observations whose perturbed verdict differs from the base verdict.
        placebo_flips: Observations whose unchanged re-run differs from the base verdict.
        both: Observations where both flipped.
        toward_pass: Treated flips to ``pass`` (verdict probes; for position, to the first-shown one).
        toward_fail: Treated flips to ``fail`` (for position, to the second-shown one).
        bias: Treated flip rate minus placebo flip rate, or ``None`` when no observation was usable.
        low: Lower bound of the paired interval.
        high: Upper bound (the most bias the data cannot rule out).
        errors: Judge calls that failed (or could not be parsed).
        error_detail: The first failure's reason.
        message: One sentence for a report.
    """

    probe: ProbeKind
    verdict: Literal["clear", "biased", "error"]
    must_pass: bool
    n: int
    treated_flips: int
    placebo_flips: int
    both: int
    toward_pass: int = 0
    toward_fail: int = 0
    bias: float | None
    low: float | None
    high: float | None
    errors: int = 0
    error_detail: str = ""
    message: str


class BiasReport(FrozenModel):
    """Every probe of one grader version.

    Attributes:
        schema_version: Always ``judgekit.bias-report/1``.
        fingerprint: The grader's fingerprint (hex).
        judge: The grader's short label.
        settings: The probe settings.
        results: One result per probe run.
        created_at: When (UTC).
    """

    schema_version: Literal["judgekit.bias-report/1"] = REPORT_SCHEMA
    fingerprint: str
    judge: str
    settings: ProbeSettings
    results: tuple[ProbeResult, ...]
    created_at: datetime

    @property
    def blocking(self) -> tuple[ProbeResult, ...]:
        """Must-pass probes that are biased or could not run."""
        return tuple(r for r in self.results if r.must_pass and r.verdict != "clear")

    @property
    def blocks_trust(self) -> bool:
        """True when a must-pass probe is biased or errored: the grader must not be trusted."""
        return bool(self.blocking)


# ------------------------------------------------------------------------------------------- perturbations


def _final_assistant_index(messages: Sequence[Message]) -> int | None:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "assistant" and messages[i].content:
            return i
    return None


def perturb(transcript: Transcript, probe: ProbeKind, *, settings: ProbeSettings, model: str) -> Transcript:
    """Return a copy of ``transcript`` changed as ``probe`` prescribes (never the original object).

    Raises:
        ValueError: For ``position``, which perturbs a pair, not one transcript.
    """
    messages = list(transcript.messages)
    if probe == "length":
        i = _final_assistant_index(messages)
        base = messages[i].content or "" if i is not None else ""
        target = max(400, int(len(base) * settings.padding_factor))
        reps = -(-target // len(PADDING))
        padding = (PADDING * reps).strip()
        if i is None:
            messages.append(Message(role="assistant", content=padding))
        else:
            messages[i] = messages[i].model_copy(update={"content": f"{base}\n\n{padding}"})
    elif probe == "self_preference":
        label = settings.self_label or model
        note = Message(
            role="system",
            content=f"The assistant in this conversation is {label}, the same model that is grading it.",
        )
        messages.insert(0, note)
    elif probe == "sycophancy":
        messages.append(Message(role="user", content=SYCOPHANCY))
    elif probe == "distraction":
        first_user = next((i for i, m in enumerate(messages) if m.role == "user"), -1)
        messages.insert(first_user + 1, Message(role="user", content=DISTRACTION))
    else:
        raise ValueError("the position probe perturbs a pair of transcripts; use PairItem")
    return transcript.model_copy(update={"messages": tuple(messages)})


# ------------------------------------------------------------------------------------------- judging


@dataclass
class _Outcome:
    verdict: str | None
    error: str = ""


async def _ask_verdict(
    grader: RubricGrader, criterion: Criterion, transcript: Transcript, case: Case | None, *, sample_base: int
) -> _Outcome:
    prompt = grader.renderer.render(criterion, render_transcript(transcript), render_case_facts(case))
    menu = grader.rubric.verdict
    schema = verdict_json_schema(menu.options, menu.max_quotes)
    client = grader.client

    async def one(sample: int) -> ParsedVerdict:
        request = client.build_request(prompt.messages, schema=schema, sample=sample)
        result = await client.complete(
            request,
            item=f"{transcript.case_id}#{transcript.trial}/{criterion.id}",
            cache_breaks=prompt.cache_breaks,
        )
        return grader.verdict_of(result, prompt)

    samples = await asyncio.gather(*(one(sample_base + i) for i in range(client.params.samples)))
    reduced = reduce_samples(samples)
    if reduced.verdict is Verdict.ERROR:
        first = reduced.samples[0]
        return _Outcome(None, f"{first.reason}: {first.detail}" if first.detail else first.reason)
    return _Outcome(reduced.verdict.value)


PAIR_TEMPLATE: Final = """\
Compare two conversations on one criterion and say which satisfies it better.

Criterion {criterion_id}:
{criterion_text}

Reply with exactly one JSON object and nothing else:
{{"verdict": <"first", "second" or "tie">, "rationale": <one or two sentences>}}

Facts about the task, from its case file (block tag {nonce}):
{facts}

The FIRST conversation (block tag {nonce}):
{first}

The SECOND conversation (block tag {nonce}):
{second}"""

_PAIR_OPTIONS: Final = ("first", "second", "tie")


def _pair_messages(criterion: Criterion, first: str, second: str, facts: str) -> tuple[dict[str, str], ...]:
    nonce = block_tag("pairwise/1", criterion.id, first, second, facts)
    user = PAIR_TEMPLATE.format(
        criterion_id=criterion.id,
        criterion_text=criterion.text,
        facts=fence("case_facts", facts, nonce),
        first=fence("first", first, nonce),
        second=fence("second", second, nonce),
        nonce=nonce,
    )
    return judge_messages(user)


def _parse_pair(raw: str | None, finish_reason: str | None, refusal: str | None) -> tuple[str | None, str]:
    """The pair verdict in a reply, under the verdict reply's rules (:func:`find_reply_object`)."""
    obj, problem = find_reply_object(raw, "verdict", finish_reason=finish_reason, refusal=refusal)
    if obj is None:
        return None, problem
    value = obj["verdict"]
    if not isinstance(value, str) or normalise_option(value) not in _PAIR_OPTIONS:
        return None, f"verdict {value!r} is not one of {list(_PAIR_OPTIONS)}"
    return normalise_option(value), ""


async def _ask_pair(
    grader: RubricGrader,
    criterion: Criterion,
    first: Transcript,
    second: Transcript,
    case: Case | None,
    *,
    sample: int,
) -> _Outcome:
    messages = _pair_messages(
        criterion, render_transcript(first), render_transcript(second), render_case_facts(case)
    )
    client = grader.client
    request = client.build_request(messages, schema=None, sample=sample)
    result = await client.complete(request, item=f"{first.case_id}/pairwise/{criterion.id}")
    if result.error is not None:
        return _Outcome(None, f"{result.error}: {result.error_detail}")
    verdict, detail = _parse_pair(result.content, result.finish_reason, result.refusal)
    if verdict is None:
        return _Outcome(None, f"judge_parse_failure: {detail}")
    return _Outcome(verdict)


# ------------------------------------------------------------------------------------------- running


def _criteria(grader: RubricGrader, wanted: tuple[str, ...]) -> list[Criterion]:
    if not wanted:
        return list(grader.rubric.criteria)
    out = []
    for cid in wanted:
        try:
            out.append(grader.rubric.criterion(cid))
        except KeyError:
            known = ", ".join(c.id for c in grader.rubric.criteria)
            raise JudgekitError(
                f"criterion {cid!r} is not in rubric {grader.rubric.id!r} (criteria: {known})"
            ) from None
    return out


@dataclass
class _Tally:
    n: int = 0
    treated: int = 0
    placebo: int = 0
    both: int = 0
    toward_pass: int = 0
    toward_fail: int = 0
    errors: int = 0
    first_error: str = ""

    def add(self, base: _Outcome, placebo: _Outcome, treated: _Outcome, *, up: str, down: str) -> None:
        failed = [o for o in (base, placebo, treated) if o.verdict is None]
        if failed:
            self.errors += len(failed)
            self.first_error = self.first_error or failed[0].error
            return
        self.n += 1
        t = treated.verdict != base.verdict
        p = placebo.verdict != base.verdict
        self.treated += t
        self.placebo += p
        self.both += t and p
        if t:
            self.toward_pass += treated.verdict == up
            self.toward_fail += treated.verdict == down


def _result(probe: ProbeKind, tally: _Tally, settings: ProbeSettings) -> ProbeResult:
    must = probe in settings.must_pass
    common = {
        "probe": probe,
        "must_pass": must,
        "n": tally.n,
        "treated_flips": tally.treated,
        "placebo_flips": tally.placebo,
        "both": tally.both,
        "toward_pass": tally.toward_pass,
        "toward_fail": tally.toward_fail,
        "errors": tally.errors,
        "error_detail": tally.first_error,
    }
    if tally.n == 0 or tally.errors:
        why = (
            f"{tally.errors} judge call(s) failed ({tally.first_error})"
            if tally.errors
            else "no item could be probed"
        )
        return ProbeResult(
            **common,
            verdict="error",
            bias=None,
            low=None,
            high=None,
            message=f"{probe}: the probe could not run: {why}; fix the judge or its input and probe again",
        )
    diff, low, high = newcombe_paired_difference(
        tally.both,
        tally.treated - tally.both,
        tally.placebo - tally.both,
        tally.n - tally.treated - tally.placebo + tally.both,
        confidence=settings.confidence,
    )
    biased = low > settings.tolerance
    pct = f"{settings.confidence:.0%}"
    message = (
        f"{probe}: verdict flipped on {tally.treated}/{tally.n} perturbed re-runs vs "
        f"{tally.placebo}/{tally.n} unchanged re-runs; bias {diff:+.3f} "
        f"({pct} interval {low:+.3f} to {high:+.3f}): "
        + (
            f"BIASED (lower bound above {settings.tolerance:g})"
            if biased
            else f"clear (bias above {high:.3f} is ruled out)"
        )
    )
    return ProbeResult(
        **common, verdict="biased" if biased else "clear", bias=diff, low=low, high=high, message=message
    )


async def _run(
    grader: RubricGrader,
    items: Sequence[ProbeItem],
    pairs: Sequence[PairItem],
    settings: ProbeSettings,
) -> list[ProbeResult]:
    model = grader.client.params.model
    verdict_probes = [p for p in settings.probes if p != "position"]
    tallies = {p: _Tally() for p in settings.probes}
    jobs = []
    for item in items:
        for criterion in _criteria(grader, item.criteria):
            jobs.append((item, criterion))

    async def verdict_job(item: ProbeItem, criterion: Criterion) -> None:
        t = item.transcript
        base, placebo, *treated = await asyncio.gather(
            _ask_verdict(grader, criterion, t, item.case, sample_base=0),
            _ask_verdict(grader, criterion, t, item.case, sample_base=PLACEBO_SAMPLE),
            *(
                _ask_verdict(
                    grader, criterion, perturb(t, p, settings=settings, model=model), item.case, sample_base=0
                )
                for p in verdict_probes
            ),
        )
        for probe, outcome in zip(verdict_probes, treated, strict=True):
            tallies[probe].add(base, placebo, outcome, up="pass", down="fail")

    async def pair_job(pair: PairItem, criterion: Criterion) -> None:
        base, placebo, swapped = await asyncio.gather(
            _ask_pair(grader, criterion, pair.first, pair.second, pair.case, sample=0),
            _ask_pair(grader, criterion, pair.first, pair.second, pair.case, sample=PLACEBO_SAMPLE),
            _ask_pair(grader, criterion, pair.second, pair.first, pair.case, sample=0),
        )
        # express the swapped answer in terms of the original order: which transcript was chosen
        unswap = {"first": "second", "second": "first", "tie": "tie"}
        chosen = _Outcome(unswap[swapped.verdict], "") if swapped.verdict is not None else swapped
        # toward_pass counts flips towards whichever transcript was shown first in the swapped order
        tallies["position"].add(base, placebo, chosen, up="second", down="first")

    tasks = []
    if verdict_probes:
        tasks += [verdict_job(item, c) for item, c in jobs]
    if "position" in settings.probes:
        for pair in pairs:
            for criterion in _criteria(grader, pair.criteria):
                tasks.append(pair_job(pair, criterion))
    await asyncio.gather(*tasks)
    return [_result(p, tallies[p], settings) for p in settings.probes]


def run_probes(
    grader: RubricGrader,
    items: Sequence[ProbeItem],
    *,
    pairs: Sequence[PairItem] = (),
    settings: ProbeSettings | None = None,
    now: datetime | None = None,
) -> BiasReport:
    """Run the bias probes on a judge-backed grader and report each with its placebo-controlled bias.

    Args:
        grader: The grader (its rubric, renderer and client are used; its cassette records the probes).
        items: Transcripts for the verdict probes.
        pairs: Transcript pairs for the position probe.
        settings: Which probes, must-pass probes, tolerance, confidence.
        now: The report's time (UTC now when ``None``).

    Returns:
        The report; never raises for provider trouble (those probes are ``error``).

    Raises:
        JudgekitError: When a requested probe has no input (no items, or position without pairs), or an
            item names a criterion the rubric does not have.
    """
    settings = settings or ProbeSettings()
    unknown = [p for p in settings.must_pass if p not in settings.probes]
    if unknown:
        raise JudgekitError(f"must-pass probe(s) {', '.join(unknown)} are not among the probes run")
    if any(p != "position" for p in settings.probes) and not items:
        raise JudgekitError("the verdict probes need at least one transcript to probe")
    if "position" in settings.probes and not pairs:
        raise JudgekitError(
            "the position probe needs pairs of transcripts of the same case (pairwise judging); give "
            "pairs or leave position out of the probes"
        )
    results = asyncio.run(_run(grader, items, pairs, settings))
    return BiasReport(
        fingerprint=grader.fingerprint,
        judge=grader.label,
        settings=settings,
        results=tuple(results),
        created_at=(now or datetime.now(UTC)).replace(microsecond=0),
    )


# ------------------------------------------------------------------------------------------- records


def dump_bias_report(report: BiasReport) -> str:
    """Serialise a report as indented JSON (ends with a newline)."""
    return report.model_dump_json(indent=2) + "\n"


def bias_report_filename(report: BiasReport) -> str:
    """``<fingerprint hash 16>-<UTC time>.json``, under the records folder's ``bias/``."""
    return stamped_filename(report.fingerprint, report.created_at)


def load_bias_report(text: str | bytes, *, source: str | os.PathLike[str] | None = None) -> BiasReport:
    """Parse and validate a bias report.

    Args:
        text: The file's content.
        source: The file, for messages, as text or a path object.

    Raises:
        ProblemsError: When it is not JSON, or a field is missing, unknown or invalid (one problem each,
            naming ``source`` and the field).
    """
    from judgekit.io.documents import load_json_model

    return load_json_model(
        BiasReport,
        text,
        source=source,
        what="bias report",
        redo="restore the file or run judgekit judge probe-bias again",
    )


def latest_bias_report(fingerprint: str, records_dir: str | os.PathLike[str]) -> BiasReport | None:
    """The most recent bias report for an exact fingerprint in ``records_dir/bias``, or ``None``.

    This reads reports; whether one withdraws trust is decided by
    :meth:`judgekit.calibration.trust.TrustBook.decide` (with the calibration records and the failure-mode
    records).

    ``records_dir`` may be given as text or a path object.

    Raises:
        ProblemsError: When a report file there is broken (never skipped silently).
    """
    records_dir = Path(records_dir)
    folder = records_dir / BIAS_DIR
    if not folder.is_dir():
        return None
    from judgekit.io.documents import read_regular

    found = [
        load_bias_report(read_regular(p, "bias report"), source=p) for p in sorted(folder.glob("*.json"))
    ]
    matching = [r for r in found if r.fingerprint == fingerprint]
    return max(matching, key=lambda r: r.created_at) if matching else None
