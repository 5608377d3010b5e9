"""Calibration commands: ``judgekit calibrate`` (measure a judge against experts) and ``judgekit trust``.

``judgekit trust`` asks the one trust function (:meth:`judgekit.calibration.trust.TrustBook.decide`).

Only typer is imported at module top; numpy, scikit-learn, krippendorff and pydantic models load inside
the commands so that ``judgekit --help`` stays fast.

Exit codes of ``calibrate`` (docs/reference/exit-codes.md): 0 the judge is trusted under the policy; 1 it
is not, or a guard refused the labels (not a random sample, a development set reused); 2 a usage or input
error (a malformed label table, policy or baseline, a conflicting option, an output that cannot be
written).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from judgekit.commands.inputs import existing_inputs
from judgekit.commands.output import chosen_format, format_option, print_document

if TYPE_CHECKING:
    from judgekit.calibration.corrected import LeeCorrection, PPIResult
    from judgekit.calibration.gate import TrustPolicy
    from judgekit.results import ResultLine
    from judgekit.verdict import Verdict

__all__ = ["register"]

_FORMATS = ("json", "md", "html")
_SUFFIX = {"json": "json", "md": "md", "html": "html"}


def _read(path: Path, what: str) -> bytes:
    from judgekit.io.documents import read_input

    return read_input(path, what)


def _write(path: Path, text: str, what: str) -> None:
    from judgekit.errors import JudgekitError
    from judgekit.io.atomic import write_atomic

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text)
    except OSError as exc:
        raise JudgekitError(f"{path}: cannot write the {what}: {exc.strerror or exc}") from None


@existing_inputs("labels", "policy", "baseline")
def calibrate(
    labels: Path = typer.Argument(
        ...,
        help="Long label table (.csv, .tsv or .jsonl): item_id, rater, label [, criterion, case_id, ...].",
        show_default=False,
    ),
    *,
    judge: str = typer.Option(..., "--judge", help="The rater whose labels are the judge's verdicts."),
    experts: str | None = typer.Option(
        None, "--experts", help="Comma-separated expert raters (default: every rater but the judge)."
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
        help="The judge's grader fingerprint (else the table's fingerprint column for the judge's rows).",
    ),
    records: Path | None = typer.Option(
        None,
        "--records",
        help="Folder the calibration record is written to (default: the configured records, else "
        "calibration/records; a folder you name must exist).",
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
) -> None:
    """Measure a judge against experts, apply the trust policy, and write a calibration record.

    Exit 0 when the judge is trusted, 1 when it is not (every failed condition is named).
    """
    from judgekit.calibration.gate import TrustPolicy, parse_policy
    from judgekit.calibration.labels import VERDICT_SCALE, parse_labels, parse_scale_option
    from judgekit.calibration.pipeline import resolve_fingerprint, run_calibration
    from judgekit.calibration.records import build_record, dump_record, load_record, record_filename
    from judgekit.errors import JudgekitError
    from judgekit.reports.calibration_report import render_calibration, render_comparison

    chosen_format(fmt, _FORMATS)
    from judgekit.settings import records_folder, setting

    records = records_folder(records)  # flag > JUDGEKIT_RECORDS > project configuration > default
    policy = setting("policy", policy)
    chosen_scale = (
        VERDICT_SCALE
        if scale is None
        else parse_scale_option(scale, level=level, positive=positive, abstain=abstain)
    )
    if scale is None and (positive or abstain):
        raise JudgekitError("--positive and --abstain apply to a declared --scale", exit_code=2)
    table = parse_labels(_read(labels, "label table"), source=labels, scale=chosen_scale)
    from judgekit.calibration.guards import check_not_selection_set, load_usage, random_sample_only

    table, provenance = random_sample_only(table)  # rates and gates use the random-sample items only
    if provenance.random:
        typer.echo(provenance.note, err=True)
    check_not_selection_set(table, load_usage(records))  # labels that chose a judge cannot certify it
    if policy is not None:
        from judgekit.io.documents import read_document

        doc = read_document(policy)
        trust_policy = parse_policy(doc.data, source=policy, line_of=doc.line_of)
    else:
        trust_policy = TrustPolicy()
    trust_policy = _alt_test_options(trust_policy, annotator_kind, alt_test_epsilon, table.raters, judge)
    expert_list = None
    if experts is not None:
        expert_list = [e.strip() for e in experts.split(",") if e.strip()]
        if not expert_list:
            raise JudgekitError("--experts: no expert named", exit_code=2)
    old = load_record(_read(baseline, "baseline record"), source=baseline) if baseline is not None else None
    fp = resolve_fingerprint(table, judge, fingerprint)
    result = run_calibration(
        table,
        judge=judge,
        experts=expert_list,
        policy=trust_policy,
        fingerprint=fp,
        label_name=labels.name,
        baseline=old,
    )
    rendered = render_calibration(result, fmt)
    if out is not None:
        target = out / f"calibration.{_SUFFIX[fmt]}"
        _write(target, rendered, "report")
        typer.echo(f"report: {target}", err=True)
        if result.comparison is not None:
            change = out / f"grader-change.{_SUFFIX[fmt]}"
            _write(change, render_comparison(result.comparison, fmt), "grader-change report")
            typer.echo(f"grader change: {change}", err=True)
    else:
        typer.echo(rendered, nl=False)
    if fp is None:
        typer.echo(
            "warning: no fingerprint (--fingerprint or a fingerprint column): no record written, "
            "so no grader becomes trusted",
            err=True,
        )
    elif no_record:
        typer.echo("no record written (--no-record)", err=True)
    else:
        record = build_record(
            fingerprint=fp,
            report=result.report,
            gate=result.gate,
            policy=result.policy,
            label_table=result.label_table,
            selective=result.selective,
            ceiling=result.ceiling,
            alt_test=result.alt_test,
        )
        path = records / record_filename(record)
        _write(path, dump_record(record), "calibration record")
        typer.echo(f"record: {path}", err=True)
    if result.gate.trusted:
        typer.echo(f"judge {judge!r}: TRUSTED", err=True)
        return
    failed = "; ".join(f"{c.name}: {c.message}" for c in result.gate.failed)
    typer.echo(f"judge {judge!r}: NOT TRUSTED: {failed}", err=True)
    raise typer.Exit(1)


def _alt_test_options(
    policy: TrustPolicy, kinds: str | None, epsilon: float | None, raters: Sequence[str], judge: str
) -> TrustPolicy:
    """The policy with ``--annotator-kind`` and ``--alt-test-epsilon`` applied to its ``alt_test``.

    Args:
        policy: The policy read from ``--policy`` (or the defaults).
        kinds: ``--annotator-kind``: comma-separated ``KIND`` (every expert) or ``NAME=KIND`` entries.
        epsilon: ``--alt-test-epsilon``.
        raters: The label table's raters (a named expert must be one of them).
        judge: The judge (it has no kind).

    Raises:
        JudgekitError: For an unknown kind, an unknown or judge rater, an empty entry, or an epsilon
            outside [0, 1).
    """
    from judgekit.calibration.alttest import AnnotatorKind
    from judgekit.errors import JudgekitError

    known: dict[str, AnnotatorKind] = {"expert": "expert", "skilled": "skilled", "crowd": "crowd"}
    settings = policy.alt_test
    update: dict[str, object] = {}
    if epsilon is not None:
        if not 0.0 <= epsilon < 1.0:
            raise JudgekitError(f"--alt-test-epsilon must be at least 0 and below 1 (got {epsilon:g})")
        update["epsilon"] = epsilon
    if kinds is not None:
        named = dict(settings.annotator_kinds)
        default = settings.annotator_kind
        entries = [e.strip() for e in kinds.split(",")]
        if not any(entries):
            raise JudgekitError("--annotator-kind: no kind given; use expert, skilled or crowd")
        for entry in entries:
            name, sep, text = entry.rpartition("=")
            name = name.strip()
            kind = known.get(text.strip())
            if kind is None:
                raise JudgekitError(
                    f"--annotator-kind: {text.strip()!r} is not a kind of annotator; "
                    "use expert, skilled or crowd"
                )
            if not sep:
                default = kind
            elif name not in raters or name == judge:
                raise JudgekitError(
                    f"--annotator-kind: {name!r} is not an expert in the label table "
                    f"(raters: {', '.join(r for r in raters if r != judge)})"
                )
            else:
                named[name] = kind
        update["annotator_kind"] = default
        update["annotator_kinds"] = named
    if not update:
        return policy
    return policy.model_copy(update={"alt_test": settings.model_copy(update=update)})


def trust(
    fingerprint: str = typer.Argument(..., help="The grader fingerprint to look up.", show_default=False),
    criterion: str | None = typer.Option(
        None,
        "--criterion",
        help="A criterion id (honest_reporting, case.acceptance): also apply its failure-mode decision.",
    ),
    records: Path | None = typer.Option(
        None,
        "--records",
        help="Folder of calibration records (with its bias/ and failure-modes/ sub-folders; default: the "
        "configured records, else calibration/records; a folder you name must exist).",
    ),
    fmt: str = format_option(),
) -> None:
    """Print whether a grader fingerprint is trusted (for a criterion), and why (exit 0 trusted, 1 not).

    Trusted needs a passing latest calibration record for the exact fingerprint; the latest bias report
    and the latest failure-mode record can withdraw it. Prints `trusted: REASON` or `untrusted: REASON`.
    """
    from judgekit.calibration.trust import TrustBook
    from judgekit.settings import records_folder
    from judgekit.verdict import Trust

    as_json = chosen_format(fmt) == "json"
    records = records_folder(records)  # flag > JUDGEKIT_RECORDS > project configuration > default
    decision = TrustBook(records).decide(fingerprint, criterion)
    if as_json:
        print_document(
            "trust_status",
            {
                "fingerprint": fingerprint,
                "criterion": criterion,
                "records": str(records),
                "trusted": decision.trust is Trust.TRUSTED,
                **decision.model_dump(mode="json"),
            },
        )
    else:
        typer.echo(f"{decision.trust.value}: {decision.reason}")
    if decision.trust is not Trust.TRUSTED:
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
        help="Comma-separated expert raters in --labels (default: every rater but --judge).",
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
    from judgekit.calibration.labels import parse_labels
    from judgekit.calibration.plan import expert_consensus
    from judgekit.errors import JudgekitError

    table = parse_labels(_read(labels, "label table"), source=labels)
    if judge not in table.raters:
        raise JudgekitError(f"{labels}: --judge {judge!r} has no rows in the label table", exit_code=2)
    names = [e.strip() for e in experts.split(",") if e.strip()] if experts is not None else None
    chosen = names if names else [r for r in table.raters if r != judge]
    consensus = expert_consensus(table, chosen)
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


def register(app: typer.Typer) -> None:
    """Add ``calibrate``, ``trust`` and ``failure-rate`` to the ``judgekit`` application."""
    app.command("calibrate")(calibrate)
    app.command("trust")(trust)
    app.command("failure-rate")(failure_rate)
