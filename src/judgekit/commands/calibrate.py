"""Calibration commands: ``calibrate`` (a judge against experts), ``judge trust``, ``judge failure-rate``.

``judgekit judge trust`` asks the one trust function (:meth:`judgekit.calibration.trust.TrustBook.decide`).

Only typer is imported at module top; numpy, scikit-learn, krippendorff and pydantic models load inside
the commands so that ``judgekit --help`` stays fast.

Exit codes of ``calibrate`` (docs/reference/exit-codes.md): 0 the judge is trusted under the policy; 1 it
is not, or a guard refused the labels (not a random sample, a development set reused); 2 a usage or input
error (a malformed label table, policy or baseline, a conflicting option, an output that cannot be
written).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from judgekit.commands.inputs import existing_inputs
from judgekit.commands.judge_options import records_option, unlabelled_criteria_option
from judgekit.commands.output import chosen_format, format_option, print_document

if TYPE_CHECKING:
    from judgekit.calibration.corrected import LeeCorrection, PPIResult
    from judgekit.results import ResultLine
    from judgekit.verdict import Verdict

__all__ = ["calibrate", "failure_rate", "trust"]

_FORMATS = ("json", "md", "html")


def _read(path: Path, what: str) -> bytes:
    from judgekit.io.documents import read_input

    return read_input(path, what)


@existing_inputs("labels", "policy", "baseline", "cases", "jury", "canary_results", "canary_transcripts")
def calibrate(
    labels: Path = typer.Argument(
        ...,
        help="Long label table (.csv, .tsv or .jsonl): item_id, rater, label [, criterion, case_id, ...].",
        show_default=False,
    ),
    *,
    judge: str = typer.Option(..., "--judge", help="The rater whose labels are the judge's verdicts."),
    experts: str | None = typer.Option(
        None,
        "--experts",
        help="Comma-separated expert raters (default: the one rater besides the judge; refused when there "
        "are several or it looks like a model).",
    ),
    policy: Path | None = typer.Option(
        None,
        "--policy",
        help="Trust policy (YAML or JSON); default: policy of the project configuration, else "
        "calibration/policy.default.yaml's values.",
    ),
    out: Path | None = typer.Option(
        None, "--out", help="Write the report (and a grader-change report) into this folder; else print it."
    ),
    fmt: str = format_option(default="md", choices=_FORMATS),
    baseline: Path | None = typer.Option(
        None, "--baseline", help="Calibration record of the old grader: report the grader change."
    ),
    fingerprint: str | None = typer.Option(
        None,
        "--fingerprint",
        help="The judge's fingerprint: the 12 characters judgekit prints, any prefix of 8 or more naming one "
        "known fingerprint (records, label table, configured judge), or all 64 (else the table's fingerprint "
        "column for the judge's rows). The record is keyed by the full fingerprint.",
    ),
    records: Path | None = records_option("Folder the calibration record is written to"),
    rubric: str | None = typer.Option(
        None,
        "--rubric",
        help="The judge's rubric (built-in id or file) whose texts the table's criterion ids name; the "
        "record lists the labelled texts by hash (default: the configured rubric, else honest-reporting).",
    ),
    cases: Path | None = typer.Option(
        None,
        "--cases",
        help="Golden set whose cases' own criteria (case.acceptance...) the table's rows name by case_id "
        "(default: the configured cases; without one their texts are recorded as unresolved).",
    ),
    no_record: bool = typer.Option(False, "--no-record", help="Do not write a calibration record."),
    scale: str | None = typer.Option(
        None,
        "--scale",
        help='Declare an ordered scale, lowest first ("1,2,3,4,5"); default: pass/fail verdicts.',
    ),
    level: str = typer.Option(
        "ordinal", "--level", help="Level of a declared scale: nominal, ordinal, interval."
    ),
    positive: str = typer.Option(
        "", "--positive", help="Comma-separated labels of a declared scale that count as failures."
    ),
    abstain: str | None = typer.Option(None, "--abstain", help="The abstain label of a declared scale."),
    annotator_kind: str | None = typer.Option(
        None,
        "--annotator-kind",
        help="Kind of the experts for the alternative-annotator test's epsilon: expert (0.2), skilled "
        "(0.15) or crowd (0.1), for all (crowd) or per expert (alice=expert,bob=crowd); overrides the "
        "policy's alt_test kinds.",
    ),
    alt_test_epsilon: float | None = typer.Option(
        None,
        "--alt-test-epsilon",
        help="One epsilon for every expert in the alternative-annotator test (0 to below 1); overrides "
        "the kinds and the policy.",
    ),
    jury: Path | None = typer.Option(
        None,
        "--jury",
        help="The judge is this jury (jury file): its members' rows (rater = member name) are measured too: "
        "each member's agreement, their error correlations, the effective votes and whether the jury pays; "
        "a weighted jury's development items are left out.",
    ),
    canary_results: Path | None = typer.Option(
        None,
        "--canary-results",
        help="Results file the judge graded (its replies): keep the record's drift canary set, built from "
        "its labelled items (with --canary-transcripts and --cases; see judgekit judge canary).",
    ),
    canary_transcripts: list[Path] = typer.Option(
        [], "--canary-transcripts", help="Transcript file(s) --canary-results was graded from (repeatable)."
    ),
) -> None:
    """Measure a judge against experts, apply the trust policy, and write a calibration record.

    Exit 0 when the judge is trusted, 1 when it is not (every failed condition is named).
    """
    from judgekit.api.calibration import CalibrationOptions, calibrate
    from judgekit.calibration.labels import parse_scale_option
    from judgekit.errors import JudgekitError

    chosen_format(fmt, _FORMATS)
    chosen_scale = (
        None if scale is None else parse_scale_option(scale, level=level, positive=positive, abstain=abstain)
    )
    if scale is None and (positive or abstain):
        raise JudgekitError("--positive and --abstain apply to a declared --scale", exit_code=2)
    kind, kinds = _annotator_kinds(annotator_kind)
    options = CalibrationOptions(
        judge=judge,
        experts=None if experts is None else experts.split(","),
        fingerprint=fingerprint,
        policy=policy,
        baseline=baseline,
        scale=chosen_scale,
        records=records,
        annotator_kind=kind,
        annotator_kinds=kinds,
        alt_test_epsilon=alt_test_epsilon,
        rubric=rubric,
        cases=cases,
        jury=jury,
        canary_results=canary_results,
        canary_transcripts=canary_transcripts,
    )
    result = calibrate(labels, options=options, on_note=lambda note: typer.echo(note, err=True))
    if out is not None:
        typer.echo(f"report: {result.write_report(out, fmt)}", err=True)
        change = result.write_change(out, fmt)
        if change is not None:
            typer.echo(f"grader change: {change}", err=True)
    else:
        typer.echo(result.render(fmt), nl=False)
    if result.record is None:
        typer.echo(
            "warning: no fingerprint (--fingerprint or a fingerprint column): no record written, "
            "so no grader becomes trusted",
            err=True,
        )
    elif no_record:
        typer.echo("no record written (--no-record)", err=True)
    else:
        written = result.write_record()
        typer.echo(f"record: {written}", err=True)
        if canary_results is not None:
            typer.echo(f"canary set: {result.write_canary_set(written)}", err=True)
    typer.echo(result.summary, err=True)
    if not result.trusted:
        raise typer.Exit(1)


def _annotator_kinds(text: str | None) -> tuple[str | None, dict[str, str]]:
    """``--annotator-kind`` split into the kind of every expert and the kinds of named experts.

    Args:
        text: Comma-separated ``KIND`` (every expert; the last one counts) or ``NAME=KIND`` entries, or
            ``None`` (not given). The kinds and names are checked by the calibration.

    Raises:
        JudgekitError: When no kind is given at all.
    """
    from judgekit.errors import JudgekitError

    if text is None:
        return None, {}
    entries = [e.strip() for e in text.split(",")]
    if not any(entries):
        raise JudgekitError("--annotator-kind: no kind given; use expert, skilled or crowd")
    default: str | None = None
    named: dict[str, str] = {}
    for entry in entries:
        name, sep, kind = entry.rpartition("=")
        if sep:
            named[name.strip()] = kind.strip()
        else:
            default = kind.strip()
    return default, named


def trust(
    fingerprint: str = typer.Argument(
        ...,
        help="The judge's fingerprint: the 12 characters judgekit prints, any prefix of 8 or more naming one "
        "known fingerprint (records, configured judge), or all 64.",
        show_default=False,
    ),
    *,
    criterion: str | None = typer.Option(
        None,
        "--criterion",
        help="A criterion id (honest_reporting, case.acceptance): also apply its failure-mode decision "
        "and say whether the calibration labelled it.",
    ),
    text: str | None = typer.Option(
        None,
        "--text",
        help="The criterion's text as the judge reads it: say whether that exact text was labelled (a "
        "case's acceptance differs from case to case under one id).",
    ),
    records: Path | None = typer.Option(
        None,
        "--records",
        help="Folder of calibration records (with its bias/ and failure-modes/ sub-folders; default: the "
        "configured records, else calibration/records; a folder you name must exist).",
    ),
    unlabelled_criteria: str | None = unlabelled_criteria_option(),
    fmt: str = format_option(),
) -> None:
    """Print whether a grader fingerprint is trusted (for a criterion), and why (exit 0 trusted, 1 not).

    A prefix is resolved to the one full fingerprint it starts (or refused, naming the candidates). Trusted
    needs a passing latest calibration record for that exact fingerprint; the latest bias report, the
    latest failure-mode record and the latest drift canary check can withdraw it. Prints
    `trusted: REASON` or `untrusted: REASON`.
    """
    from judgekit.api.calibration import trust_status

    as_json = chosen_format(fmt) == "json"
    status = trust_status(  # records None: the configured records
        fingerprint, records, criterion=criterion, text=text, unlabelled_criteria=unlabelled_criteria
    )
    if as_json:
        print_document(
            "trust_status",
            {
                "fingerprint": status.fingerprint,
                "criterion": criterion,
                "records": str(status.records_dir),
                "trusted": status.trusted,
                **status.decision.model_dump(mode="json"),
            },
        )
    else:
        typer.echo(f"{status.trust.value}: {status.reason}")
    if not status.trusted:
        raise typer.Exit(1)


@existing_inputs("record", "labels", "results")
def failure_rate(
    record: Path = typer.Argument(..., help="The judge's (trusted) calibration record.", show_default=False),
    *,
    flagged: int | None = typer.Option(
        None, "--flagged", min=0, help="Items the judge flagged as failures (else counted in --results)."
    ),
    total: int | None = typer.Option(
        None, "--total", min=1, help="Items the judge decided (else counted in --results)."
    ),
    undecided: int | None = typer.Option(
        None,
        "--undecided",
        min=0,
        help="Items the judge left undecided (else counted in --results): the corrected rates' bounds "
        "with all of them failing and all passing.",
    ),
    results: Path | None = typer.Option(
        None, "--results", help="`judgekit grade` results (JSONL): count --criterion's verdicts in them."
    ),
    criterion: str | None = typer.Option(
        None, "--criterion", help="The criterion id whose verdicts --results and --labels hold."
    ),
    labels: Path | None = typer.Option(
        None,
        "--labels",
        help="Label table with the judge's and experts' rows: add the PPI++ pass rate (needs --results).",
    ),
    judge: str | None = typer.Option(None, "--judge", help="The judge rater in --labels."),
    experts: str | None = typer.Option(
        None,
        "--experts",
        help="Comma-separated expert raters in --labels (default: the one rater besides --judge; refused "
        "when there are several or it looks like a model).",
    ),
    fmt: str = format_option(),
) -> None:
    """Correct the failure (and pass) rate a trusted judge reports on new data for its errors.

    Lee et al.'s correction with its adjusted Wald interval, which carries the uncertainty of the new
    counts and of the calibration. With --labels (and --results), also the PPI++ pass rate from the
    human labels and the judge's verdicts. Exit 0 with the corrected rate, 1 when it cannot be corrected
    (an untrusted record, or a correction that is undefined for these counts; the reason is given), 2 for
    impossible counts, a record without failure-detection counts, or a missing or conflicting option.
    """
    from judgekit.calibration.corrected import lee_from_record
    from judgekit.calibration.records import load_record
    from judgekit.errors import JudgekitError

    as_json = chosen_format(fmt) == "json"
    calibration = load_record(_read(record, "record"), source=record)
    lines = _result_lines(results) if results is not None else None
    if flagged is None and total is None and lines is not None:
        flagged, total = _count_flagged(lines, criterion, results)
        if undecided is None:
            undecided = _count_undecided(lines, criterion)
    if flagged is None or total is None:
        raise JudgekitError(
            "failure-rate: give --flagged and --total, or --results with --criterion to count them",
            exit_code=2,
        )
    ppi = None
    if labels is not None:
        if lines is None or criterion is None or judge is None:
            raise JudgekitError("--labels: PPI++ also needs --results, --criterion and --judge", exit_code=2)
        ppi = _ppi(labels, judge, experts, criterion, lines, confidence=calibration.policy.confidence)
    fields = _rate_fields(record, calibration.fingerprint, flagged, total)
    try:
        lee = lee_from_record(calibration, flagged=flagged, n=total)
    except JudgekitError as exc:
        if not as_json:
            raise
        print_document("failure_rate", fields | {"corrected": None, "reason": exc.message})
        raise typer.Exit(exc.exit_code) from None
    est = lee.failure_rate()
    bounds = _undecided_bounds(lee, flagged, total, undecided or 0)
    if as_json:
        print_document(
            "failure_rate",
            fields
            | {
                "undecided": undecided or 0,
                "undecided_bounds": bounds,
                "corrected": est.model_dump(mode="json"),
                "reason": est.undefined_reason,
                "pass_rate": lee.estimate.model_dump(mode="json"),
                "q0": lee.q0,
                "q1": lee.q1,
                "youden": lee.youden,
                "unreliable": lee.unreliable,
                "unreliable_reason": lee.unreliable_reason,
                "ppi": ppi.model_dump(mode="json") if ppi is not None else None,
            },
        )
    else:
        typer.echo("\n".join(_rate_text(flagged, total, lee, ppi, bounds, undecided or 0)))
    if est.value is None:
        raise typer.Exit(1)


def _rate_text(  # noqa: PLR0917 - private helper
    flagged: int,
    total: int,
    lee: LeeCorrection,
    ppi: PPIResult | None,
    bounds: dict[str, tuple[float, float]] | None,
    undecided: int,
) -> list[str]:
    """The text lines of ``failure-rate``: the Lee correction, its bounds, diagnostics and PPI++."""
    from judgekit.reports.calibration_report import fmt_estimate

    out = [
        f"observed {flagged}/{total} = {flagged / total:.3f}; corrected (Lee et al. adjusted Wald) "
        f"{fmt_estimate(lee.failure_rate())}",
        f"pass rate: observed {lee.observed:.3f}; corrected {fmt_estimate(lee.estimate)}",
    ]
    if bounds is not None:
        (f_low, f_high), (p_low, p_high) = bounds["failure_rate"], bounds["pass_rate"]
        out.append(
            f"bounds with the {undecided} undecided item(s) all failing / all passing: corrected failure "
            f"rate {f_low:.3f}–{f_high:.3f}, pass rate {p_low:.3f}–{p_high:.3f}"
        )
    if lee.youden is not None and lee.q0 is not None and lee.q1 is not None:
        out.append(f"judge: q0 (TPR) {lee.q0:.3f}, q1 (TNR) {lee.q1:.3f}, q0 + q1 - 1 = {lee.youden:.3f}")
    if lee.unreliable:
        out.append(f"warning: the correction is unreliable: {lee.unreliable_reason}")
    if ppi is not None:
        worth = "" if ppi.effective_labels is None else f", worth {ppi.effective_labels:.0f} human labels"
        lam = "undefined" if ppi.lam is None else f"{ppi.lam:.3f}"
        out.append(
            f"PPI++ pass rate {fmt_estimate(ppi.estimate)} (lambda {lam}; {ppi.n_labelled} labelled, "
            f"{ppi.n_unlabelled} judged only{worth}; lambda 0 is the human-only "
            f"{fmt_estimate(ppi.classical)})"
        )
    return out


def _result_lines(path: Path) -> list[ResultLine]:
    """The lines of a results file; any problem in it is an input error naming the file and line."""
    from judgekit.errors import ProblemsError
    from judgekit.results import read_results

    run = read_results(path)
    if run.problems:
        raise ProblemsError(run.problems)
    return run.lines


def _criterion_verdicts(lines: list[ResultLine], criterion: str | None) -> list[Verdict]:
    """Every verdict of ``--criterion``'s checks in the results, in file order."""
    wanted = f"criterion:{criterion}"
    return [c.verdict for line in lines for c in line.checks if c.check_id == wanted]


def _verdicts(lines: list[ResultLine], criterion: str | None, path: Path | None) -> list[bool]:
    """``--criterion``'s decided verdicts in the results (True = pass), in file order."""
    from judgekit.errors import JudgekitError
    from judgekit.verdict import Verdict

    if criterion is None:
        raise JudgekitError("--results: name the criterion to count with --criterion", exit_code=2)
    out = [
        v is Verdict.PASS for v in _criterion_verdicts(lines, criterion) if v in {Verdict.PASS, Verdict.FAIL}
    ]
    if not out:
        raise JudgekitError(
            f"{path}: no pass or fail verdict for criterion {criterion!r}; check --criterion", exit_code=2
        )
    return out


def _count_undecided(lines: list[ResultLine], criterion: str | None) -> int:
    """``--criterion``'s checks without a pass or fail verdict (insufficient information, error, ...)."""
    from judgekit.verdict import Verdict

    return sum(1 for v in _criterion_verdicts(lines, criterion) if v not in {Verdict.PASS, Verdict.FAIL})


def _undecided_bounds(
    lee: LeeCorrection, flagged: int, total: int, undecided: int
) -> dict[str, tuple[float, float]] | None:
    """The corrected rates with every undecided item failing and passing, or ``None`` (none undecided).

    Over all ``total + undecided`` items: the pass share ``passed / all`` (undecided failing) and
    ``(passed + undecided) / all`` (passing), each corrected with the same judge error rates; ``None`` too
    when the correction is undefined.
    """
    from judgekit.calibration.corrected import corrected_point

    if not undecided:
        return None
    passed, every = total - flagged, total + undecided
    low = corrected_point(passed / every, lee)
    high = corrected_point((passed + undecided) / every, lee)
    if low is None or high is None:
        return None
    return {"pass_rate": (low, high), "failure_rate": (1.0 - high, 1.0 - low)}


def _count_flagged(lines: list[ResultLine], criterion: str | None, path: Path | None) -> tuple[int, int]:
    verdicts = _verdicts(lines, criterion, path)
    return len(verdicts) - sum(verdicts), len(verdicts)


def _ppi(
    labels: Path,
    judge: str,
    experts: str | None,
    criterion: str,
    lines: list[ResultLine],
    *,
    confidence: float,
) -> PPIResult:
    """PPI++ pass rate: consensus and judge labels on the table's items, the judge alone on the rest."""
    from judgekit.calibration.corrected import ppi_plus_plus_mean
    from judgekit.calibration.labels import check_raters, parse_labels
    from judgekit.calibration.plan import expert_consensus
    from judgekit.errors import JudgekitError

    table = parse_labels(_read(labels, "label table"), source=labels)
    if judge not in table.raters:
        raise JudgekitError(f"{labels}: --judge {judge!r} has no rows in the label table", exit_code=2)
    names = [e.strip() for e in experts.split(",") if e.strip()] if experts is not None else None
    if names == []:
        raise JudgekitError("--experts: no expert named", exit_code=2)
    consensus = expert_consensus(table, check_raters(table, judge, names))
    human: list[float] = []
    said: list[float] = []
    for row in table.rows:
        if row.rater != judge or row.item.criterion not in {criterion, ""}:
            continue
        truth = consensus.get(row.item)
        if truth in {"pass", "fail"} and row.label in {"pass", "fail"}:
            human.append(float(truth == "pass"))
            said.append(float(row.label == "pass"))
    if not human:
        raise JudgekitError(
            f"{labels}: no item of criterion {criterion!r} has both a judge verdict and an expert consensus",
            exit_code=2,
        )
    unlabelled = [float(v) for v in _verdicts(lines, criterion, None)]
    return ppi_plus_plus_mean(human, said, unlabelled, confidence=confidence)


def _rate_fields(record: Path, fingerprint: str, flagged: int, total: int) -> dict[str, object]:
    """The fields of ``failure-rate``'s JSON document that do not depend on the correction.

    Args:
        record: The calibration record file.
        fingerprint: The judge's fingerprint in it.
        flagged: Items the judge flagged as failures.
        total: Items the judge decided.

    Returns:
        ``record``, ``fingerprint``, ``flagged``, ``total``, ``observed`` (``flagged / total``) and
        ``method`` (``lee_adjusted_wald``). The document adds ``corrected`` (the corrected failure rate:
        ``value``, ``n``, ``interval`` ``{low, high, confidence, method}``; ``null`` when the record cannot
        correct) and ``reason`` (why there is no corrected rate; ``null`` when there is one); when the
        record can correct, also ``pass_rate`` (1 − the failure rate, same shape), ``q0`` (TPR), ``q1``
        (TNR), ``youden`` (q0 + q1 − 1), ``unreliable`` and ``unreliable_reason``, and ``ppi`` (the PPI++
        pass rate with ``lam``, ``n_labelled``, ``n_unlabelled``, ``effective_labels``, ``classical``;
        ``null`` without ``--labels``).
    """
    return {
        "record": str(record),
        "fingerprint": fingerprint,
        "flagged": flagged,
        "total": total,
        "observed": flagged / total,
        "method": "lee_adjusted_wald",
    }
