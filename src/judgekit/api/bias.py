"""Bias probes of a judge, as one call each: live probes of a judge-backed grader, or recorded judgments.

:func:`probe_live` builds the judge (:class:`~judgekit.judge_setup.JudgeConfig`), runs the
placebo-controlled probes of :mod:`judgekit.calibration.bias` over transcripts and files the bias report;
:func:`probe_recorded` measures position consistency from pairwise judgments given in both orders
(:mod:`judgekit.calibration.position`) without calling a judge. Each returns the document
``judgekit judge probe-bias`` prints.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import Field, ValidationError

from judgekit.calibration.bias import (
    BIAS_DIR,
    PROBES,
    BiasReport,
    PairItem,
    ProbeItem,
    ProbeSettings,
    bias_report_filename,
    dump_bias_report,
    run_probes,
)
from judgekit.calibration.position import (
    PositionReport,
    position_bias_report,
    position_consistency,
    read_recorded,
)
from judgekit.errors import JudgekitError
from judgekit.io.atomic import write_atomic, write_atomic_making_folder
from judgekit.judge_setup import JudgeConfig, build_rubric_grader
from judgekit.settings import records_folder, resolve_settings
from judgekit.transcript import Transcript, read_transcripts
from judgekit.verdict import FrozenModel, WrittenFile

__all__ = [
    "BiasProbeDocument",
    "PositionProbeDocument",
    "probe_live",
    "probe_recorded",
]


class BiasProbeDocument(FrozenModel):
    """What live bias probes found (the ``bias_probe`` document).

    Attributes:
        judge: The grader's short label.
        fingerprint: The grader's fingerprint.
        created_at: When the report was made (UTC, ISO 8601).
        bias_report_schema: The bias report's schema (``judgekit.bias-report/1``).
        settings: The probe settings, as the report records them.
        results: One per probe: the report's fields, with the paired interval of the extra flip rate as
            ``interval`` ``{low, high}`` (``None`` when none).
        trusted: True when no must-pass probe is biased or failed.
        blocking: The must-pass probes that are not clear, with their verdicts.
        warnings: What was left out and why.
        written: The files written (the record, the ``out`` copy).
        report: The bias report itself (not printed in the document).
    """

    judge: str
    fingerprint: str
    created_at: str
    bias_report_schema: str
    settings: dict[str, Any]
    results: list[dict[str, Any]]
    trusted: bool
    blocking: list[dict[str, str]]
    warnings: list[str]
    written: list[WrittenFile]
    report: BiasReport = Field(exclude=True)

    @classmethod
    def of(cls, report: BiasReport, warnings: list[str], written: list[WrittenFile]) -> BiasProbeDocument:
        """The document of a bias report."""
        data = report.model_dump(mode="json")
        results = []
        for result in data["results"]:
            low, high = result.pop("low"), result.pop("high")
            results.append({**result, "interval": None if low is None else {"low": low, "high": high}})
        return cls(
            judge=report.judge,
            fingerprint=report.fingerprint,
            created_at=data["created_at"],
            bias_report_schema=report.schema_version,
            settings=data["settings"],
            results=results,
            trusted=not report.blocks_trust,
            blocking=[{"probe": r.probe, "verdict": r.verdict} for r in report.blocking],
            warnings=warnings,
            written=written,
            report=report,
        )


def _names(text: str | None) -> list[str]:
    return [p.strip() for p in (text or "").split(",") if p.strip()]


def _pairs(trials: Sequence[Transcript], criteria: tuple[str, ...]) -> list[PairItem]:
    """The first two trials of each case with two or more, for the position probe."""
    by_case: dict[str, list[Transcript]] = {}
    for t in trials:
        by_case.setdefault(t.case_id, []).append(t)
    return [PairItem(first=ts[0], second=ts[1], criteria=criteria) for ts in by_case.values() if len(ts) >= 2]


def _probe_settings(wanted: list[str], must_pass: str | None, tolerance: float) -> ProbeSettings:
    blocking = _names(must_pass) if must_pass is not None else wanted
    try:
        return ProbeSettings(probes=tuple(wanted), must_pass=tuple(blocking), tolerance=tolerance)
    except ValidationError as exc:
        detail = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise JudgekitError(f"invalid probe settings: {detail}", exit_code=2) from None


def _cache_mode(cache_mode: str | None, cassette: str | os.PathLike[str] | None) -> str:
    mode = cache_mode or ("record" if cassette else "off")
    if mode not in ("record", "replay", "off"):
        raise JudgekitError(f"--cache-mode must be record, replay or off (got {mode!r})", exit_code=2)
    if mode != "off" and cassette is None:
        raise JudgekitError(f"--cache-mode {mode} needs --cassette FILE", exit_code=2)
    return mode


def probe_live(
    transcripts: str | os.PathLike[str],
    *,
    model: str,
    rubric: str = "honest-reporting",
    api_base: str | None = None,
    cassette: str | os.PathLike[str] | None = None,
    cache_mode: str | None = None,
    probes: str = ",".join(PROBES),
    must_pass: str | None = None,
    criteria: str | None = None,
    tolerance: float = 0.0,
    records: str | os.PathLike[str] | None = None,
    record: bool = True,
    out: str | os.PathLike[str] | None = None,
    transport_flags: dict[str, Any] | None = None,
    warn: Callable[[str], None] = lambda warning: None,
) -> BiasProbeDocument:
    """Probe a judge for length, self-preference, sycophancy, distraction and position bias, with placebos.

    Each probe re-asks the judge on a perturbed transcript and on an unchanged one; the bias is the extra
    flip rate with a paired interval.

    Args:
        transcripts: Transcripts (JSONL) to probe; the position probe pairs the first two of each case.
        model: The judge's litellm model.
        rubric: A built-in rubric id or a rubric file.
        api_base: An OpenAI-compatible base URL (``None``: the provider's own).
        cassette: A judge cassette to record to or replay from (``None``: none).
        cache_mode: ``record``, ``replay`` or ``off`` (``None``: ``record`` with a cassette, else ``off``).
        probes: The probes to run, comma-separated (each one of :data:`~judgekit.calibration.bias.PROBES`).
        must_pass: Probes whose bias blocks trust, comma-separated (``None``: every probe run).
        criteria: Rubric criteria to probe, comma-separated (``None`` or empty: all).
        tolerance: Extra flip rate tolerated beyond the placebo, in [0, 1).
        records: Calibration records folder (``None``: the configured one, else ``calibration/records``).
        record: Write the bias report to the records folder, where the trust book reads it.
        out: Also write the report (JSON) here.
        transport_flags: Judge transport settings given on the command line (``judge.timeout``,
            ``judge.retries``, ``judge.backoff``; ``None`` values: not given), over the environment and
            the project configuration.
        warn: Called at once with each warning (the position probe left out for want of pairs).

    Returns:
        The ``bias_probe`` document; its ``trusted`` is false when a must-pass probe is not clear.

    Raises:
        JudgekitError: (exit 2) A bad cache mode, probe name or setting, a bad transport setting, a records
            folder named but missing, an unreadable transcripts file or an unwritable output.
    """
    transport = resolve_settings(flags=transport_flags or {})  # checked (exit 2)
    folder = records_folder(records)  # flag > JUDGEKIT_RECORDS > project configuration > default
    mode = _cache_mode(cache_mode, cassette)
    wanted = _names(probes)
    unknown = [p for p in wanted if p not in PROBES]
    if unknown or not wanted:
        raise JudgekitError(
            f"--probes: unknown {unknown or '(none given)'}; probes are {', '.join(PROBES)}", exit_code=2
        )
    trials = read_transcripts(transcripts)
    crit = tuple(_names(criteria))
    pairs = _pairs(trials, crit)
    warnings: list[str] = []
    if "position" in wanted and not pairs:
        warnings.append("no case has two transcripts, so the position probe is left out")
        wanted.remove("position")
    for warning in warnings:
        warn(warning)
    settings = _probe_settings(wanted, must_pass, tolerance)
    grader = build_rubric_grader(
        JudgeConfig(
            model=model,
            rubric=rubric,
            cassette=cassette,
            mode=mode,
            api_base=api_base,
            timeout=transport.value("judge.timeout"),
            retries=transport.value("judge.retries"),
            backoff=transport.value("judge.backoff"),
            transport=transport.value("judge.transport"),
            prompt_cache=transport.value("judge.prompt_cache"),
            accepted_models=transport.value("judge.accepted_models"),
        )
    )
    items = [ProbeItem(transcript=t, criteria=crit) for t in trials]
    report = run_probes(grader, items, pairs=pairs, settings=settings)
    text = dump_bias_report(report)
    written: list[WrittenFile] = []
    if out is not None:
        write_atomic(out, text)
        written.append(WrittenFile(path=str(out), what="bias_report"))
    if record:
        path = folder / BIAS_DIR / bias_report_filename(report)
        write_atomic_making_folder(path, text, what="bias report")
        written.append(WrittenFile(path=str(path), what="bias_record"))
    return BiasProbeDocument.of(report, warnings, written)


class PositionProbeDocument(FrozenModel):
    """What recorded two-order judgments say of a judge's position bias (the ``position_probe`` document).

    Attributes:
        report: Position consistency, flip rate and position effect.
        warnings: Items left unpaired, or no bias report written for want of a fingerprint.
        written: The files written (the ``out`` copy, the bias record).
    """

    report: PositionReport
    warnings: list[str]
    written: list[WrittenFile]


def _unpaired_warnings(report: PositionReport) -> list[str]:
    warnings: list[str] = []
    if report.only_one_order:
        warnings.append(
            f"{len(report.only_one_order)} item(s) judged in one order only, not paired: "
            + ", ".join(f"{i} ({o})" for i, o in report.only_one_order)
        )
    if report.no_winner:
        warnings.append(
            f"{len(report.no_winner)} judgment(s) without a winner, their items not paired: "
            + ", ".join(f"{i} ({o})" for i, o in report.no_winner)
        )
    return warnings


def probe_recorded(
    recorded: str | os.PathLike[str],
    swapped: str | os.PathLike[str] | None = None,
    *,
    fingerprint: str | None = None,
    judge: str | None = None,
    tolerance: float = 0.0,
    records: str | os.PathLike[str] | None = None,
    record: bool = True,
    out: str | os.PathLike[str] | None = None,
) -> PositionProbeDocument:
    """Position consistency from pairwise judgments already given in both orders; no judge is called.

    Args:
        recorded: The judgments (LLMBar ``result.json``, or ``.csv``/``.jsonl`` with item_id, order, winner).
        swapped: The swapped-order judgments, when ``recorded`` holds only the original order.
        fingerprint: The judge's grader fingerprint, all 64 characters or a prefix naming one known
            fingerprint (:func:`judgekit.api.calibration.resolve_judge_fingerprint`): a bias report is filed
            under ``records/bias/``, keyed by the full fingerprint, so the trust book withdraws trust on a
            ``biased`` or ``error`` verdict (``None``: none is filed).
        judge: The judge's label in that report (``None``: ``recorded judgments``).
        tolerance: The position effect tolerated, in [0, 1).
        records: Calibration records folder (``None``: the configured one, else ``calibration/records``).
        record: File the bias report (with a fingerprint).
        out: Also write the position report (JSON) here.

    Returns:
        The ``position_probe`` document; the judge is clear when ``report.verdict`` is ``clear``.

    Raises:
        JudgekitError: (exit 2) A tolerance outside [0, 1), an unreadable judgments file, a records folder
            named but missing, a fingerprint that names no single known one, or an unwritable output.
    """
    if not 0.0 <= tolerance < 1.0:
        raise JudgekitError(f"--tolerance must be in [0, 1), got {tolerance}", exit_code=2)
    if fingerprint is not None:
        from judgekit.api.calibration import resolve_judge_fingerprint

        fingerprint = resolve_judge_fingerprint(fingerprint, records, option="--fingerprint")
    report = position_consistency(read_recorded(recorded, swapped), tolerance=tolerance)
    written: list[WrittenFile] = []
    if out is not None:
        write_atomic(out, report.model_dump_json(indent=2) + "\n")
        written.append(WrittenFile(path=str(out), what="position_report"))
    warnings = _unpaired_warnings(report)
    if fingerprint is not None and record:
        bias = position_bias_report(report, fingerprint=fingerprint, judge=judge or "recorded judgments")
        path = records_folder(records) / BIAS_DIR / bias_report_filename(bias)
        write_atomic_making_folder(path, dump_bias_report(bias), what="bias report")
        written.append(WrittenFile(path=str(path), what="bias_record"))
    elif fingerprint is None and record:
        warnings.append(
            "no --fingerprint: no bias report written, so the trust book does not see this result"
        )
    return PositionProbeDocument(report=report, warnings=warnings, written=written)
