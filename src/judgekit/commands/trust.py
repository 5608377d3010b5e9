"""Judge trust at production scale: label planning, refusals, failure modes, bias probes, trace import.

Commands:

* ``judgekit calibrate-plan [LABELS]``: labels per class still needed to certify a judge, and what to label
  next. (``calibrate`` is a single command, not a group, so the planner cannot be ``calibrate plan``
  without changing how ``calibrate LABELS`` parses; it is a sibling command instead.)
* ``judgekit calibrate-check LABELS``: the refusals that protect calibration numbers (provenance, few-shot
  leakage, labels already used to choose a judge).
* ``judgekit calibrate-select LABELS --candidates A,B``: record that labels chose between judges.
* ``judgekit failure-modes LABELS --judge J [--fingerprint FP]``: one gate per failure mode, with Holm's
  correction; with a fingerprint the decisions are recorded for the trust function.
* ``judgekit probe-bias``: placebo-controlled bias probes of a judge-backed grader.
* ``judgekit import otel TRACE.json --out transcripts.jsonl``: OTLP traces to transcripts (joins the
  ``import`` group of :mod:`judgekit.commands.runs`).
* ``judgekit export-otel RESULTS --transcripts T --out events.json``: verdicts as
  ``gen_ai.evaluation.result`` events.

Only typer is imported at module top. Exit codes: 0 success; 1 a refusal, an untrusted or biased judge, a
policy that can never be met, or unusable input; 2 a usage error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from judgekit.commands.inputs import existing_inputs

if TYPE_CHECKING:
    from judgekit.calibration.gate import TrustPolicy
    from judgekit.calibration.labels import LabelTable
    from judgekit.calibration.plan import LabelPlan

__all__ = ["register"]


def _read(path: Path, what: str) -> bytes:
    from judgekit.io.documents import read_input

    return read_input(path, what)


def _policy(path: Path | None) -> TrustPolicy:
    from judgekit.calibration.gate import TrustPolicy, parse_policy

    if path is None:
        return TrustPolicy()
    from judgekit.io.documents import read_document

    doc = read_document(path)
    return parse_policy(doc.data, source=path, line_of=doc.line_of)


def _experts(text: str | None) -> list[str] | None:
    from judgekit.errors import JudgekitError

    if text is None:
        return None
    names = [e.strip() for e in text.split(",") if e.strip()]
    if not names:
        raise JudgekitError("--experts: no expert named", exit_code=2)
    return names


def _labels(path: Path) -> LabelTable:
    from judgekit.calibration.labels import parse_labels

    return parse_labels(_read(path, "label table"), source=path)


def _format(fmt: str, allowed: tuple[str, ...]) -> str:
    from judgekit.errors import JudgekitError

    if fmt not in allowed:
        raise JudgekitError(f"--format: {fmt!r} is not one of {', '.join(allowed)}", exit_code=2)
    return fmt


# ------------------------------------------------------------------------------------------- plan


def _plan_markdown(plan: LabelPlan) -> str:
    s = plan.settings
    lines = [
        "# Label plan",
        "",
        f"Confidence {plan.confidence:.0%} (two-sided Wilson lower bounds, as the trust gate); expected TPR "
        f"{s.expected_tpr:.2f}, TNR {s.expected_tnr:.2f}, coverage {s.expected_coverage:.2f}, failure rate "
        f"{s.failure_rate:.0%}"
        + (
            f", assurance {s.assurance:.0%}" if s.assurance is not None else ", planned at the expected count"
        ),
        "",
        "| scope | rate | bound | expected | required | have | still needed |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for p in (plan.overall, *plan.criteria):
        for n in p.needs:
            lines.append(
                f"| {p.criterion or 'overall'} | {n.rate.upper()} | {n.bound:g} | {n.expected:.2f} | "
                f"{n.required if n.required is not None else 'never'} | {n.have} | "
                f"{n.still_needed if n.still_needed is not None else 'never'} |"
            )
    lines += ["", "## Next", ""]
    lines += [f"- {step}" for step in plan.next_steps]
    return "\n".join(lines) + "\n"


@existing_inputs("labels", "policy")
def calibrate_plan(  # noqa: PLR0917 - typer options
    labels: Path | None = typer.Argument(
        None, help="Labels collected so far (.csv or .jsonl); omit to plan from scratch.", show_default=False
    ),
    experts: str | None = typer.Option(
        None, "--experts", help="Comma-separated expert raters (default: every rater but --judge)."
    ),
    judge: str | None = typer.Option(
        None, "--judge", help="The judge rater in LABELS (left out of experts)."
    ),
    policy: Path | None = typer.Option(None, "--policy", help="Trust policy (YAML or JSON); default values."),
    expected_accuracy: float = typer.Option(
        0.95, "--expected-accuracy", help="Expected judge accuracy on each class (TPR and TNR)."
    ),
    expected_tpr: float | None = typer.Option(None, "--expected-tpr", help="Expected TPR (overrides)."),
    expected_tnr: float | None = typer.Option(None, "--expected-tnr", help="Expected TNR (overrides)."),
    coverage: float = typer.Option(
        1.0, "--coverage", help="Share of items the judge decides (not abstains)."
    ),
    failure_rate: float = typer.Option(0.2, "--failure-rate", help="Expected failure rate in production."),
    assurance: float | None = typer.Option(
        None, "--assurance", help="Plan so the judge clears the bound with this probability (e.g. 0.8)."
    ),
    fmt: str = typer.Option("md", "--format", help="md or json."),
) -> None:
    """How many expert labels per class are still needed to certify a judge, and what to label next.

    Exit 0 when the policy can be met at the expected accuracy, 1 when it can never be met.
    """
    from pydantic import ValidationError

    from judgekit.calibration.plan import PlanSettings, plan_labels
    from judgekit.errors import JudgekitError

    _format(fmt, ("md", "json"))
    pol = _policy(policy)
    try:
        settings = PlanSettings(
            expected_tpr=expected_accuracy if expected_tpr is None else expected_tpr,
            expected_tnr=expected_accuracy if expected_tnr is None else expected_tnr,
            expected_coverage=coverage,
            failure_rate=failure_rate,
            assurance=assurance,
        )
    except ValidationError as exc:
        detail = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise JudgekitError(f"invalid planning assumption: {detail}", exit_code=2) from None
    table = _labels(labels) if labels is not None else None
    chosen = _experts(experts)
    if table is not None and chosen is None:
        chosen = [r for r in table.raters if r != judge]
    if table is not None:
        from judgekit.calibration.guards import random_sample_only

        table, summary = random_sample_only(table)
        typer.echo(summary.note, err=True)
    plan = plan_labels(
        tpr_bound=pol.tpr_lower_bound,
        tnr_bound=pol.tnr_lower_bound,
        confidence=pol.confidence,
        min_items=pol.min_items,
        settings=settings,
        table=table,
        experts=chosen,
    )
    if fmt == "json":
        from judgekit.commands.output import versioned

        typer.echo(json.dumps(versioned("label_plan", plan.model_dump(mode="json")), indent=2))
    else:
        typer.echo(_plan_markdown(plan), nl=False)
    if not plan.achievable:
        raise typer.Exit(1)


# ------------------------------------------------------------------------------------------- guards


@existing_inputs("labels", "few_shot", "transcripts")
def calibrate_check(
    labels: Path = typer.Argument(..., help="The labelled test set (.csv or .jsonl).", show_default=False),
    few_shot: Path | None = typer.Option(
        None, "--few-shot", help="The judge's few-shot examples (JSONL: item_id, case_id or text)."
    ),
    transcripts: Path | None = typer.Option(
        None, "--transcripts", help="Transcripts of the labelled items (JSONL), to compare few-shot texts."
    ),
    records: Path = typer.Option(
        Path("calibration/records"), "--records", help="Calibration records folder (holds the usage ledger)."
    ),
) -> None:
    """Refuse labels that would inflate a judge's numbers; say what to collect instead.

    Checks: items carry a provenance and enough are random production samples; the judge's few-shot
    examples are not labelled test items; the labels were not already used to choose between judges.
    Exit 0 when every check passes, 1 on the first refusal.
    """
    from judgekit.calibration.guards import (
        check_few_shot_overlap,
        check_not_selection_set,
        load_usage,
        parse_few_shot,
        random_sample_only,
    )

    table = _labels(labels)
    _, summary = random_sample_only(table)
    check_not_selection_set(table, load_usage(records))
    if few_shot is not None:
        texts: dict[str, str] | None = None
        if transcripts is not None:
            from judgekit.judges.prompt import render_transcript
            from judgekit.transcript import read_transcripts

            texts = {}
            for t in read_transcripts(transcripts):
                texts[f"{t.case_id}#{t.trial}"] = render_transcript(t)
                texts.setdefault(t.case_id, render_transcript(t))
        examples = parse_few_shot(_read(few_shot, "few-shot file"), source=few_shot)
        check_few_shot_overlap(examples, table, item_texts=texts, source=few_shot)
    typer.echo(f"{labels}: ok ({summary.note})")


@existing_inputs("labels")
def calibrate_select(
    labels: Path = typer.Argument(..., help="The labels used to choose.", show_default=False),
    candidates: str = typer.Option(
        ..., "--candidates", help="Comma-separated judges (fingerprints) compared."
    ),
    chosen: str | None = typer.Option(None, "--chosen", help="The judge chosen."),
    records: Path = typer.Option(
        Path("calibration/records"), "--records", help="Calibration records folder."
    ),
) -> None:
    """Record that these labels were used to choose between judges: they become a development set."""
    from judgekit.calibration.guards import USAGE_FILE, record_selection

    raw = _read(labels, "label table")
    table = _labels(labels)
    names = [c.strip() for c in candidates.split(",") if c.strip()]
    record_selection(
        records, label_sha256=table.sha256, label_name=labels.name, candidates=names, chosen=chosen
    )
    typer.echo(
        f"{labels.name} ({len(raw)} bytes) recorded as a development set in {records / USAGE_FILE}; "
        "certify the chosen judge on fresh labels"
    )


# ------------------------------------------------------------------------------------------- families


@existing_inputs("labels", "policy")
def failure_modes(  # noqa: PLR0917 - typer options
    labels: Path = typer.Argument(..., help="Label table with a criterion column.", show_default=False),
    judge: str = typer.Option(..., "--judge", help="The judge rater."),
    experts: str | None = typer.Option(None, "--experts", help="Comma-separated expert raters."),
    policy: Path | None = typer.Option(None, "--policy", help="Trust policy for every failure mode."),
    fmt: str = typer.Option("md", "--format", help="md or json."),
    fingerprint: str | None = typer.Option(
        None,
        "--fingerprint",
        help="The judge's grader fingerprint: record the decisions for it in --records (else the table's "
        "fingerprint column for the judge's rows; neither: nothing is recorded).",
    ),
    records: Path = typer.Option(
        Path("calibration/records"),
        "--records",
        help="Calibration records folder; the record goes to its failure-modes/ sub-folder.",
    ),
) -> None:
    """Calibrate each failure mode (criterion) on its own and gate them together with Holm's correction.

    Only random-sample items count when the table records provenance. With a fingerprint the decisions are
    written as a failure-mode record, so that `judgekit trust FP --criterion ID` and graders withhold trust
    from the modes that were not trusted. Exit 0 when every failure mode is trusted, 1 otherwise (each
    untrusted mode is named).
    """
    from judgekit.calibration.families import (
        FAILURE_MODES_DIR,
        build_failure_mode_record,
        calibrate_families,
        dump_failure_mode_record,
        failure_mode_record_filename,
        render_families_markdown,
    )
    from judgekit.calibration.guards import random_sample_only
    from judgekit.calibration.pipeline import resolve_fingerprint
    from judgekit.calibration.records import LabelTableInfo

    _format(fmt, ("md", "json"))
    table, summary = random_sample_only(_labels(labels))
    typer.echo(summary.note, err=True)
    pol = _policy(policy)
    fp = resolve_fingerprint(table, judge, fingerprint)
    report = calibrate_families(table, judge=judge, experts=_experts(experts), policy=pol)
    if fmt == "json":
        from judgekit.commands.output import versioned

        typer.echo(json.dumps(versioned("failure_mode_report", report.model_dump(mode="json")), indent=2))
    else:
        typer.echo(render_families_markdown(report))
    if fp is None:
        typer.echo(
            "note: no fingerprint (--fingerprint or a fingerprint column): the decisions are not recorded, "
            "so they do not withhold trust",
            err=True,
        )
    else:
        record = build_failure_mode_record(
            report,
            fingerprint=fp,
            policy=pol,
            label_table=LabelTableInfo(sha256=table.sha256, name=labels.name, rows=len(table.rows)),
        )
        path = records / FAILURE_MODES_DIR / failure_mode_record_filename(record)
        _write_record(path, dump_failure_mode_record(record), "failure-mode record")
        typer.echo(f"failure-mode record: {path}", err=True)
    if not report.trusted:
        typer.echo(f"not trusted: {', '.join(report.untrusted)}", err=True)
        raise typer.Exit(1)


def _write_record(path: Path, text: str, what: str) -> None:
    from judgekit.errors import JudgekitError
    from judgekit.io.atomic import write_atomic

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise JudgekitError(
            f"{path.parent}: cannot create the folder for the {what}: {exc.strerror or exc}"
        ) from None
    write_atomic(path, text)


# ------------------------------------------------------------------------------------------- bias


@existing_inputs("transcripts")
def probe_bias(  # noqa: PLR0917 - typer options
    transcripts: Path = typer.Option(..., "--transcripts", help="Transcripts (JSONL) to probe."),
    judge_model: str = typer.Option(..., "--judge-model", help="litellm model of the judge."),
    rubric: str = typer.Option("honest-reporting", "--rubric", help="Built-in rubric id or rubric file."),
    judge_api_base: str | None = typer.Option(None, "--judge-api-base", help="OpenAI-compatible base URL."),
    cassette: Path | None = typer.Option(None, "--cassette", help="Cassette (JSONL) to record or replay."),
    cache_mode: str | None = typer.Option(
        None, "--cache-mode", help="record (default with --cassette), replay (never call) or off."
    ),
    probes: str = typer.Option(
        "length,self_preference,sycophancy,distraction,position", "--probes", help="Probes to run."
    ),
    must_pass: str | None = typer.Option(
        None, "--must-pass", help="Probes whose bias blocks trust (default: every probe run)."
    ),
    criteria: str | None = typer.Option(None, "--criteria", help="Rubric criteria to probe (default: all)."),
    tolerance: float = typer.Option(0.0, "--tolerance", help="Extra flip rate tolerated beyond the placebo."),
    records: Path = typer.Option(
        Path("calibration/records"), "--records", help="Calibration records folder."
    ),
    no_record: bool = typer.Option(False, "--no-record", help="Do not write the bias report to --records."),
    out: Path | None = typer.Option(None, "--out", help="Also write the report (JSON) here."),
) -> None:
    """Probe a judge for length, self-preference, sycophancy, distraction and position bias, with placebos.

    Each probe re-asks the judge on a perturbed transcript and on an unchanged one; the bias is the extra
    flip rate with a paired interval. The position probe pairs transcripts of the same case (the first two
    trials of each case). Exit 0 when no must-pass probe is biased or failed, 1 otherwise.
    """
    from pydantic import ValidationError

    from judgekit.calibration.bias import (
        BIAS_DIR,
        PROBES,
        PairItem,
        ProbeItem,
        ProbeSettings,
        bias_report_filename,
        dump_bias_report,
        run_probes,
    )
    from judgekit.errors import JudgekitError
    from judgekit.io.atomic import write_atomic
    from judgekit.transcript import read_transcripts

    mode = cache_mode or ("record" if cassette else "off")
    if mode not in ("record", "replay", "off"):
        raise JudgekitError(f"--cache-mode must be record, replay or off (got {mode!r})", exit_code=2)
    if mode != "off" and cassette is None:
        raise JudgekitError(f"--cache-mode {mode} needs --cassette FILE", exit_code=2)
    wanted = [p.strip() for p in probes.split(",") if p.strip()]
    unknown = [p for p in wanted if p not in PROBES]
    if unknown or not wanted:
        raise JudgekitError(
            f"--probes: unknown {unknown or '(none given)'}; probes are {', '.join(PROBES)}", exit_code=2
        )
    trials = read_transcripts(transcripts)
    by_case: dict[str, list[Any]] = {}
    for t in trials:
        by_case.setdefault(t.case_id, []).append(t)
    crit = tuple(c.strip() for c in criteria.split(",") if c.strip()) if criteria else ()
    pairs = [PairItem(first=ts[0], second=ts[1], criteria=crit) for ts in by_case.values() if len(ts) >= 2]
    if "position" in wanted and not pairs:
        typer.echo("warning: no case has two transcripts, so the position probe is left out", err=True)
        wanted.remove("position")
    blocking = [p.strip() for p in must_pass.split(",") if p.strip()] if must_pass is not None else wanted
    try:
        settings = ProbeSettings(probes=tuple(wanted), must_pass=tuple(blocking), tolerance=tolerance)
    except ValidationError as exc:
        detail = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise JudgekitError(f"invalid probe settings: {detail}", exit_code=2) from None
    from judgekit.judge_setup import build_rubric_grader

    grader = build_rubric_grader(
        judge_model,
        rubric=rubric,
        cassette=cassette,
        mode=mode,
        api_base=judge_api_base,
        max_cost=None,
        temperature=None,
        samples=None,
        concurrency=8,
    )
    items = [ProbeItem(transcript=t, criteria=crit) for t in trials]
    report = run_probes(grader, items, pairs=pairs, settings=settings)
    for r in report.results:
        typer.echo(r.message)
    text = dump_bias_report(report)
    if out is not None:
        write_atomic(out, text)
    if not no_record:
        path = records / BIAS_DIR / bias_report_filename(report)
        _write_record(path, text, "bias report")
        typer.echo(f"bias report: {path}", err=True)
    if report.blocks_trust:
        names = ", ".join(f"{r.probe} ({r.verdict})" for r in report.blocking)
        typer.echo(f"judge {report.judge}: NOT TRUSTED: must-pass probe(s) not clear: {names}", err=True)
        raise typer.Exit(1)
    typer.echo(f"judge {report.judge}: bias probes clear", err=True)


# ------------------------------------------------------------------------------------------- traces


@existing_inputs("trace")
def import_otel(
    trace: Path = typer.Argument(..., help="OTLP JSON export (resourceSpans).", show_default=False),
    out: Path = typer.Option(..., "--out", help="Transcripts file (JSONL) to write."),
    case_id: str | None = typer.Option(
        None,
        "--case-id",
        help="Case of every trace when spans carry no judgekit.case_id (else the trace id).",
    ),
    fidelity: Path | None = typer.Option(None, "--fidelity", help="Also write the fidelity reports (JSON)."),
) -> None:
    """Import OpenTelemetry GenAI traces into transcripts, each with a fidelity report.

    Conventions: GenAI events and message attributes, execute_tool spans, OpenLLMetry, OpenInference.

    Exit 0 when every trace was imported, 1 when some were refused (cycles, unknown conventions; named).
    """
    from judgekit.graders.contract import unsupported_layers
    from judgekit.io.atomic import write_atomic
    from judgekit.io.otel import check_problems, lost_capabilities, read_otlp_file

    result = read_otlp_file(trace, case_id=case_id)
    check_problems(result)
    lines = [t.model_dump_json() for t in result.transcripts]
    write_atomic(out, "\n".join(lines) + "\n")
    for report in result.reports:
        typer.echo(report.summary())
        for layer, why in unsupported_layers(lost_capabilities(report)).items():
            typer.echo(f"  {layer}: insufficient_information ({why})")
    if fidelity is not None:
        write_atomic(
            fidelity, json.dumps([r.model_dump(mode="json") for r in result.reports], indent=2) + "\n"
        )
    typer.echo(f"{len(result.transcripts)} transcript(s) -> {out}", err=True)
    for problem in result.problems:
        typer.echo(f"error: {problem}", err=True)
    if result.problems:
        raise typer.Exit(1)


@existing_inputs("results", "transcripts")
def export_otel(
    results: Path = typer.Argument(
        ..., help="Results file (JSONL) written by judgekit grade.", show_default=False
    ),
    out: Path = typer.Option(..., "--out", help="OTLP JSON logs file to write."),
    transcripts: Path | None = typer.Option(
        None, "--transcripts", help="Transcripts imported from OTLP, to parent each event to its trace."
    ),
) -> None:
    """Export verdicts as gen_ai.evaluation.result events (OTLP JSON logs)."""
    from judgekit.errors import ProblemsError
    from judgekit.io.atomic import write_atomic
    from judgekit.io.otel import evaluation_events, trace_refs
    from judgekit.results import read_results
    from judgekit.transcript import read_transcripts

    read = read_results(results)
    if read.problems and not read.lines:
        raise ProblemsError(read.problems)
    refs = trace_refs(read_transcripts(transcripts)) if transcripts is not None else {}
    doc = evaluation_events(read.lines, traces=refs)
    write_atomic(out, json.dumps(doc, indent=1) + "\n")
    count = len(doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"])
    typer.echo(f"{count} gen_ai.evaluation.result event(s) -> {out}", err=True)


def register(app: typer.Typer) -> None:
    """Add the trust-at-scale commands; ``otel`` joins the ``import`` group of the run commands."""
    from judgekit.commands.runs import import_app

    app.command("calibrate-plan")(calibrate_plan)
    app.command("calibrate-check")(calibrate_check)
    app.command("calibrate-select")(calibrate_select)
    app.command("failure-modes")(failure_modes)
    app.command("probe-bias")(probe_bias)
    app.command("export-otel")(export_otel)
    import_app.command("otel")(import_otel)
