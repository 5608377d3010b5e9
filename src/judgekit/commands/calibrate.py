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

from pathlib import Path

import typer

from judgekit.commands.inputs import existing_inputs
from judgekit.commands.output import chosen_format, format_option, print_document

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


@existing_inputs("record")
def failure_rate(
    record: Path = typer.Argument(..., help="The judge's (trusted) calibration record.", show_default=False),
    *,
    flagged: int = typer.Option(..., "--flagged", min=0, help="Items the judge flagged as failures."),
    total: int = typer.Option(..., "--total", min=1, help="Items the judge decided."),
    fmt: str = format_option(),
) -> None:
    """Correct the failure rate a trusted judge flags on new data for its misses and false alarms.

    Exit 0 with the corrected rate, 1 when it cannot be corrected (an untrusted record, or a correction
    that is undefined for these counts; the reason is given), 2 for impossible counts or a record without
    failure-detection counts.
    """
    from judgekit.calibration.records import corrected_failure_rate, load_record
    from judgekit.errors import JudgekitError
    from judgekit.reports.calibration_report import fmt_estimate

    as_json = chosen_format(fmt) == "json"
    calibration = load_record(_read(record, "record"), source=record)
    try:
        est = corrected_failure_rate(calibration, flagged=flagged, n=total)
    except JudgekitError as exc:
        if not as_json:
            raise
        fields = _rate_fields(record, calibration.fingerprint, flagged, total)
        print_document("failure_rate", fields | {"corrected": None, "reason": exc.message})
        raise typer.Exit(exc.exit_code) from None
    if as_json:
        print_document(
            "failure_rate",
            _rate_fields(record, calibration.fingerprint, flagged, total)
            | {"corrected": est.model_dump(mode="json"), "reason": est.undefined_reason},
        )
    else:
        observed = f"observed {flagged}/{total} = {flagged / total:.3f}"
        typer.echo(f"{observed}; corrected (Rogan-Gladen) {fmt_estimate(est)}")
    if est.value is None:
        raise typer.Exit(1)


def _rate_fields(record: Path, fingerprint: str, flagged: int, total: int) -> dict[str, object]:
    """The fields of ``failure-rate``'s JSON document that do not depend on the correction.

    Args:
        record: The calibration record file.
        fingerprint: The judge's fingerprint in it.
        flagged: Items the judge flagged as failures.
        total: Items the judge decided.

    Returns:
        ``record``, ``fingerprint``, ``flagged``, ``total``, ``observed`` (``flagged / total``) and
        ``method`` (``rogan_gladen``). The document adds ``corrected`` (the corrected rate: ``value``,
        ``n``, ``interval`` ``{low, high, confidence, method}``; ``null`` when the record cannot correct)
        and ``reason`` (why there is no corrected rate; ``null`` when there is one).
    """
    return {
        "record": str(record),
        "fingerprint": fingerprint,
        "flagged": flagged,
        "total": total,
        "observed": flagged / total,
        "method": "rogan_gladen",
    }


def register(app: typer.Typer) -> None:
    """Add ``calibrate``, ``trust`` and ``failure-rate`` to the ``judgekit`` application."""
    app.command("calibrate")(calibrate)
    app.command("trust")(trust)
    app.command("failure-rate")(failure_rate)
