"""Judge trust at production scale: label planning, refusals, failure modes, bias probes, trace import.

Commands:

* ``judgekit labels plan [LABELS]``: labels per class still needed to certify a judge, and what to label
  next.
* ``judgekit labels check LABELS``: the refusals that protect calibration numbers (provenance, few-shot
  leakage, labels already used to choose a judge).
* ``judgekit labels select LABELS --candidates A,B``: record that labels chose between judges.
* ``judgekit judge failure-modes LABELS --judge J [--fingerprint FP]``: one gate per failure mode, with
  Holm's correction; with a fingerprint the decisions are recorded for the trust function.
* ``judgekit judge probe-bias``: placebo-controlled bias probes of a judge-backed grader.
* ``judgekit import otel TRACE.json --out transcripts.jsonl``: OTLP traces to transcripts.
* ``judgekit export otel RESULTS --transcripts T --out events.json``: verdicts as
  ``gen_ai.evaluation.result`` events.

Only typer is imported at module top. Exit codes (docs/reference/exit-codes.md): 0 success; 1 a check's
answer is no (a guard refusing labels, an untrusted or biased judge, a policy that can never be met); 2 a
usage or input error (a missing or malformed file, a trace that cannot be imported, an unwritable output).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from judgekit.commands.inputs import existing_inputs
from judgekit.commands.judge_options import (
    judge_backoff_option,
    judge_retries_option,
    judge_timeout_option,
    records_option,
)
from judgekit.commands.output import chosen_format, format_option, print_model

if TYPE_CHECKING:
    from collections.abc import Sequence

    from judgekit.api.bias import BiasProbeDocument, PositionProbeDocument
    from judgekit.api.inspect_logs import InspectSample
    from judgekit.api.traces import OtelTrace
    from judgekit.calibration.corrected import LeeAllocation
    from judgekit.calibration.gate import TrustPolicy
    from judgekit.calibration.labels import LabelTable
    from judgekit.calibration.plan import LabelPlan, PlanSettings
    from judgekit.caseset import LocatedProblem
    from judgekit.stats import Estimate

__all__ = [
    "calibrate_check",
    "calibrate_plan",
    "calibrate_select",
    "export_otel",
    "failure_modes",
    "import_otel",
    "probe_bias",
]

#: The formats of ``calibrate-plan`` and ``failure-modes``: a Markdown report or its JSON document.
MD_OR_JSON = ("md", "json")


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


# ------------------------------------------------------------------------------------------- plan


def _plan_markdown(plan: LabelPlan) -> str:
    from judgekit.markdown_text import md_text

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
                f"| {md_text(p.criterion) or 'overall'} | {n.rate.upper()} | {n.bound:g} | "
                f"{n.expected:.2f} | "
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
        None,
        "--experts",
        help="Comma-separated expert raters (default: the one rater besides --judge; refused when there "
        "are several or it looks like a model).",
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
    budget: int | None = typer.Option(
        None,
        "--budget",
        min=1,
        help="Total calibration labels (those in LABELS included): split them between known-pass and "
        "known-fail items by Lee et al.'s allocation (needs --pass-share).",
    ),
    pass_share: float | None = typer.Option(
        None, "--pass-share", help="The judge's pass share on the data to correct, in (0, 1), for --budget."
    ),
    fmt: str = format_option(default="md", choices=MD_OR_JSON),
) -> None:
    """How many expert labels per class are still needed to certify a judge, and what to label next.

    With --budget and --pass-share, also how to split a label budget between known-pass and known-fail
    items so the corrected pass rate's interval is narrowest (Lee et al., Algorithm 1; the labels in
    LABELS are the pilot). Exit 0 when the policy can be met at the expected accuracy, 1 when it can
    never be met.
    """
    from pydantic import ValidationError

    from judgekit.calibration.plan import PlanSettings, plan_labels
    from judgekit.errors import JudgekitError

    chosen_format(fmt, MD_OR_JSON)
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
        from judgekit.calibration.labels import default_experts

        chosen = list(default_experts(table, (judge,) if judge is not None else ()))
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
    allocation = _allocations(budget, pass_share, table, judge, chosen, beliefs=settings)
    if fmt == "json":
        from judgekit.calibration.plan import LabelPlanDocument

        print_model("label_plan", LabelPlanDocument.of(plan, allocation), ascii_only=True)
    else:
        typer.echo(_plan_markdown(plan), nl=False)
        if allocation is not None:
            typer.echo(_allocation_markdown(allocation), nl=False)
    if not plan.achievable:
        raise typer.Exit(1)


def _allocations(
    budget: int | None,
    pass_share: float | None,
    table: LabelTable | None,
    judge: str | None,
    experts: list[str] | None,
    *,
    beliefs: PlanSettings,
) -> list[tuple[str, LeeAllocation]] | None:
    """Lee et al.'s allocation of ``--budget`` per criterion, the table's judged items as the pilot.

    A criterion with no pilot item (no table, or none of its items both judged and decided by the
    experts) is split by the stated beliefs, ``--expected-tpr`` and ``--expected-tnr`` (else
    ``--expected-accuracy``), as Lee et al. do before any label.

    Args:
        budget: ``--budget`` (``None``: no allocation).
        pass_share: ``--pass-share``, the judge's pass share p̂ on the data to correct.
        table: The labels so far (random-sample items), or ``None`` to plan without a pilot.
        judge: The judge rater, whose verdicts on the pilot give q̃0 and q̃1.
        experts: The expert raters whose consensus is the reference label.
        beliefs: The planning assumptions: their expected TPR and TNR stand in for an empty pilot.

    Returns:
        ``(criterion, allocation)`` per criterion of the table (``""`` without criteria), or ``None``.

    Raises:
        JudgekitError: When only one of ``--budget`` and ``--pass-share`` is given, the table is given
            without ``--judge``, or the allocation's inputs are out of range.
    """
    from judgekit.calibration.corrected import lee_allocation
    from judgekit.calibration.plan import expert_consensus
    from judgekit.errors import JudgekitError

    if budget is None and pass_share is None:
        return None
    if budget is None or pass_share is None:
        raise JudgekitError("--budget and --pass-share go together: give both", exit_code=2)
    pilots: dict[str, list[int]] = {}
    if table is not None:
        if judge is None:
            raise JudgekitError(
                "--budget: name the --judge whose verdicts on LABELS are the pilot", exit_code=2
            )
        consensus = expert_consensus(table, experts if experts is not None else ())
        for crit in dict.fromkeys(row.item.criterion for row in table.rows):
            pilots[crit] = [0, 0, 0, 0]
        for row in table.rows:
            truth = consensus.get(row.item)
            if row.rater != judge or truth not in {"pass", "fail"} or row.label not in {"pass", "fail"}:
                continue
            tally = pilots[row.item.criterion]
            k = 0 if truth == "fail" else 2
            tally[k] += row.label == truth
            tally[k + 1] += 1
    out: list[tuple[str, LeeAllocation]] = []
    for crit, (h0, m0, h1, m1) in (pilots or {"": [0, 0, 0, 0]}).items():
        try:
            alloc = lee_allocation(
                budget,
                pass_share,
                pilot_q0_hits=h0,
                pilot_m0=m0,
                pilot_q1_hits=h1,
                pilot_m1=m1,
                expected_tpr=beliefs.expected_tpr,
                expected_tnr=beliefs.expected_tnr,
            )
        except ValueError as exc:
            where = f" (criterion {crit})" if crit else ""
            raise JudgekitError(f"--budget/--pass-share{where}: {exc}", exit_code=2) from None
        out.append((crit, alloc))
    return out


def _allocation_markdown(allocation: list[tuple[str, LeeAllocation]]) -> str:
    """The allocation section of ``calibrate-plan``'s Markdown report."""
    from judgekit.markdown_text import md_text

    first = allocation[0][1]
    lines = [
        "",
        f"## Label budget split (Lee et al., Algorithm 1): {first.budget} labels, judge pass share "
        f"{first.pass_share:.3f}",
        "",
        "| criterion | pilot fail / pass | q̃0 | q̃1 | κ̂ | known-fail m0 | known-pass m1 | label fail "
        "| label pass |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for crit, a in allocation:
        lines.append(
            f"| {md_text(crit) or '(all)'} | {a.pilot_m0} / {a.pilot_m1} | {a.q0_pilot:.3f} | "
            f"{a.q1_pilot:.3f} | "
            f"{a.kappa:.3f} | {a.m0} | {a.m1} | {a.label_fail} | {a.label_pass} |"
        )
    lines += [
        "",
        "Label *label fail* more items whose reference verdict is fail and *label pass* more whose reference "
        "verdict is pass (sample each class at random), so the corrected pass rate's interval is narrowest.",
    ]
    believed = [md_text(crit) or "(all)" for crit, a in allocation if a.basis == "beliefs"]
    if believed:
        b = next(a for _, a in allocation if a.basis == "beliefs")
        lines += [
            "",
            f"No pilot label yet for {', '.join(believed)}: that split comes from the stated beliefs (q̃0 = "
            f"expected TPR {b.q0_pilot:.3f}, q̃1 = expected TNR {b.q1_pilot:.3f}; --expected-tpr, "
            "--expected-tnr, --expected-accuracy), not from a pilot. Plan again once the first labels "
            "are in.",
        ]
    lines.append("")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------- guards


@existing_inputs("labels", "few_shot", "prompt", "transcripts")
def calibrate_check(  # noqa: PLR0917 - typer options
    labels: Path = typer.Argument(..., help="The labelled test set (.csv or .jsonl).", show_default=False),
    few_shot: Path | None = typer.Option(
        None, "--few-shot", help="The judge's few-shot examples (JSONL: item_id, case_id or text)."
    ),
    prompt: Path | None = typer.Option(
        None,
        "--prompt",
        help="The judge's prompt or template (raw text, any format): refused when it contains a labelled "
        "item's message text (needs --transcripts).",
    ),
    transcripts: Path | None = typer.Option(
        None, "--transcripts", help="Transcripts of the labelled items (JSONL), to compare few-shot texts."
    ),
    records: Path | None = records_option("Calibration records folder, holding the usage ledger"),
    fmt: str = format_option(),
) -> None:
    """Refuse labels that would inflate a judge's numbers; say what to collect instead.

    Checks: items carry a provenance and enough are random production samples; the judge's few-shot
    examples are not labelled test items, nor is a labelled item's message text found in its prompt
    (--prompt, any format, compared word by word ignoring case and punctuation); the labels were not
    already used to choose between judges.
    Exit 0 when every check passes, 1 on the first refusal, 2 when the input cannot be checked (an item
    without provenance among items with one, a malformed file); with --format json every check is run and
    reported, each with its status, and the exit code is the first refusal's.
    """
    from judgekit.api.labels import check_labels
    from judgekit.errors import JudgekitError

    as_json = chosen_format(fmt) == "json"
    document = check_labels(
        labels,
        few_shot=few_shot,
        prompt=prompt,
        transcripts=transcripts,
        records=records,
        every_check=as_json,
    )
    if as_json:
        print_model("label_check", document)
        if document.exit_code:
            # the code text mode exits with: its first refusal's (1 a guard refused, 2 an input error)
            raise typer.Exit(document.exit_code)
        return
    if document.provenance is None:  # text mode raised at the first refusal, so a summary is always there
        raise JudgekitError(f"{labels}: no provenance summary was produced", exit_code=1)
    typer.echo(f"{labels}: ok ({document.provenance.note})")


@existing_inputs("labels")
def calibrate_select(
    labels: Path = typer.Argument(..., help="The labels used to choose.", show_default=False),
    candidates: str = typer.Option(
        ..., "--candidates", help="Comma-separated judges (fingerprints) compared."
    ),
    chosen: str | None = typer.Option(None, "--chosen", help="The judge chosen."),
    records: Path | None = records_option("Calibration records folder"),
    fmt: str = format_option(),
) -> None:
    """Record that these labels were used to choose between judges: they become a development set."""
    from judgekit.calibration.guards import USAGE_FILE, SelectionDocument, record_selection
    from judgekit.settings import records_folder
    from judgekit.verdict import WrittenFile

    as_json = chosen_format(fmt) == "json"
    records = records_folder(records)  # flag > JUDGEKIT_RECORDS > project configuration > default
    raw = _read(labels, "label table")
    table = _labels(labels)
    names = [c.strip() for c in candidates.split(",") if c.strip()]
    usage = record_selection(
        records,
        label_sha256=table.sha256,
        label_name=labels.name,
        candidates=names,
        chosen=chosen,
        table=table,  # records the labels' content and items, not only the file hash
    )
    ledger = records / USAGE_FILE
    if as_json:
        written = [WrittenFile(path=str(ledger), what="label_usage_ledger")]
        document = SelectionDocument(
            labels=str(labels), bytes=len(raw), usage=usage, ledger=str(ledger), written=written
        )
        print_model("calibration_selection", document)
        return
    typer.echo(
        f"{labels.name} ({len(raw)} bytes) recorded as a development set in {ledger}; "
        "certify the chosen judge on fresh labels"
    )


# ------------------------------------------------------------------------------------------- families


@existing_inputs("labels", "policy")
def failure_modes(  # noqa: PLR0917 - typer options
    labels: Path = typer.Argument(..., help="Label table with a criterion column.", show_default=False),
    judge: str = typer.Option(..., "--judge", help="The judge rater."),
    experts: str | None = typer.Option(
        None,
        "--experts",
        help="Comma-separated expert raters (default: the one rater besides --judge; refused when there "
        "are several or it looks like a model).",
    ),
    policy: Path | None = typer.Option(None, "--policy", help="Trust policy for every failure mode."),
    fmt: str = format_option(default="md", choices=MD_OR_JSON),
    fingerprint: str | None = typer.Option(
        None,
        "--fingerprint",
        help="The judge's fingerprint (the 12 characters judgekit prints, a prefix of 8 or more naming one "
        "known fingerprint, or all 64): record the decisions for its full fingerprint in --records (else the "
        "table's fingerprint column for the judge's rows; neither: nothing is recorded).",
    ),
    records: Path | None = records_option(
        "Calibration records folder; the record goes to its failure-modes/ sub-folder"
    ),
) -> None:
    """Calibrate each failure mode (criterion) on its own and gate them together with Holm's correction.

    Only random-sample items count when the table records provenance. With a fingerprint the decisions are
    written as a failure-mode record, so that `judgekit judge trust FP --criterion ID` and graders withhold
    trust from the modes that were not trusted. Exit 0 when every failure mode is trusted, 1 otherwise (each
    untrusted mode is named).
    """
    from judgekit.api.calibration import known_fingerprints
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
    from judgekit.io.atomic import write_atomic_making_folder
    from judgekit.settings import records_folder

    chosen_format(fmt, MD_OR_JSON)
    records = records_folder(records)  # flag > JUDGEKIT_RECORDS > project configuration > default
    table, summary = random_sample_only(_labels(labels))
    typer.echo(summary.note, err=True)
    pol = _policy(policy)
    fp = resolve_fingerprint(table, judge, fingerprint, known_fingerprints(records))  # a prefix: its one full
    report = calibrate_families(table, judge=judge, experts=_experts(experts), policy=pol)
    if fmt == "json":
        print_model("failure_mode_report", report, ascii_only=True)
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
        write_atomic_making_folder(path, dump_failure_mode_record(record), what="failure-mode record")
        typer.echo(f"failure-mode record: {path}", err=True)
    if not report.trusted:
        typer.echo(f"not trusted: {', '.join(report.untrusted)}", err=True)
        raise typer.Exit(1)


# ------------------------------------------------------------------------------------------- bias


@existing_inputs("transcripts", "recorded", "swapped")
def probe_bias(  # noqa: PLR0917 - typer options
    transcripts: Path | None = typer.Option(
        None, "--transcripts", help="Transcripts (JSONL) to probe (live probes; not with --recorded)."
    ),
    judge_model: str | None = typer.Option(
        None, "--judge-model", help="litellm model of the judge (live probes; with --recorded, its label)."
    ),
    recorded: Path | None = typer.Option(
        None,
        "--recorded",
        help="Recorded pairwise judgments in both orders: LLMBar result.json, or .csv/.jsonl with item_id, "
        "order, winner (A/B/tie as shown); no judge is called.",
    ),
    swapped: Path | None = typer.Option(
        None, "--swapped", help="With --recorded: the swapped-order judgments (--recorded is the original)."
    ),
    fingerprint: str | None = typer.Option(
        None,
        "--fingerprint",
        help="With --recorded: the judge's fingerprint the bias report is for (the 12 characters judgekit "
        "prints, a prefix of 8 or more naming one known fingerprint, or all 64).",
    ),
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
    records: Path | None = records_option("Calibration records folder"),
    judge_timeout: float | None = judge_timeout_option(),
    judge_retries: int | None = judge_retries_option(),
    judge_backoff: float | None = judge_backoff_option(),
    no_record: bool = typer.Option(False, "--no-record", help="Do not write the bias report to --records."),
    out: Path | None = typer.Option(None, "--out", help="Also write the report (JSON) here."),
    fmt: str = format_option(),
) -> None:
    """Probe a judge for length, self-preference, sycophancy, distraction and position bias, with placebos.

    Each probe re-asks the judge on a perturbed transcript and on an unchanged one; the bias is the extra
    flip rate with a paired interval. The position probe pairs transcripts of the same case (the first two
    trials of each case). Exit 0 when no must-pass probe is biased or failed, 1 otherwise.
    """
    from judgekit.api.bias import probe_live, probe_recorded
    from judgekit.errors import JudgekitError

    as_json = chosen_format(fmt) == "json"
    if recorded is not None or swapped is not None or fingerprint is not None:
        if recorded is None:
            raise JudgekitError("--swapped and --fingerprint apply to --recorded FILE", exit_code=2)
        if transcripts is not None:
            raise JudgekitError(
                "--recorded reads judgments already made; drop --transcripts (it is for live probes)",
                exit_code=2,
            )
        position = probe_recorded(
            recorded,
            swapped,
            fingerprint=fingerprint,
            judge=judge_model,
            tolerance=tolerance,
            records=records,
            record=not no_record,
            out=out,
        )
        _print_position(position, as_json=as_json)
        return
    if transcripts is None or judge_model is None:
        raise JudgekitError(
            "probe-bias needs --transcripts and --judge-model (live probes), or --recorded FILE "
            "(judgments already given in both orders)",
            exit_code=2,
        )
    document = probe_live(
        transcripts,
        model=judge_model,
        rubric=rubric,
        api_base=judge_api_base,
        cassette=cassette,
        cache_mode=cache_mode,
        probes=probes,
        must_pass=must_pass,
        criteria=criteria,
        tolerance=tolerance,
        records=records,
        record=not no_record,
        out=out,
        transport_flags={
            "judge.timeout": judge_timeout,
            "judge.retries": judge_retries,
            "judge.backoff": judge_backoff,
        },
        warn=(lambda warning: None)
        if as_json
        else (lambda warning: typer.echo(f"warning: {warning}", err=True)),
    )
    _print_bias(document, as_json=as_json)


def _print_bias(document: BiasProbeDocument, *, as_json: bool) -> None:
    """Print live probes' report (text, or the ``bias_probe`` document); exit 1 when it blocks trust."""
    report = document.report
    if as_json:
        print_model("bias_probe", document)
    else:
        for r in report.results:
            typer.echo(r.message)
        for written in document.written:
            if written.what == "bias_record":
                typer.echo(f"bias report: {written.path}", err=True)
    if report.blocks_trust:
        if not as_json:
            names = ", ".join(f"{r.probe} ({r.verdict})" for r in report.blocking)
            typer.echo(f"judge {report.judge}: NOT TRUSTED: must-pass probe(s) not clear: {names}", err=True)
        raise typer.Exit(1)
    if not as_json:
        typer.echo(f"judge {report.judge}: bias probes clear", err=True)


def _print_position(document: PositionProbeDocument, *, as_json: bool) -> None:
    """Print ``probe-bias --recorded``'s report (text, or the ``position_probe`` document).

    Raises:
        typer.Exit: (1) When the verdict is not ``clear``.
    """
    report = document.report
    if as_json:
        print_model("position_probe", document)
    else:
        lines = [
            report.message,
            f"items: {report.items}; paired: {report.paired}",
            f"position consistency: {_est(report.consistency)}",
            f"flip rate: {_est(report.flip_rate)}",
            f"flips toward the first-shown position: {_est(report.first_position_share)} "
            f"(sign test p = {report.sign_test_p:.3g})",
            f"position effect (first - second): {_est(report.position_effect, signed=True)}",
        ]
        for line in lines:
            typer.echo(line)
        for warning in document.warnings:
            typer.echo(f"warning: {warning}", err=True)
        for written in document.written:
            typer.echo(f"{written.what.replace('_', ' ')}: {written.path}", err=True)
    if report.verdict != "clear":
        if not as_json:
            typer.echo(f"position (recorded): NOT CLEAR: {report.verdict}", err=True)
        raise typer.Exit(1)
    if not as_json:
        typer.echo("position (recorded): clear", err=True)


def _est(est: Estimate, *, signed: bool = False) -> str:
    """``0.750 [0.468, 0.911] (n=12)`` for a defined estimate, ``undefined: why`` otherwise."""
    if est.value is None:
        return f"undefined: {est.undefined_reason}"
    f = "+.3f" if signed else ".3f"
    iv = est.interval
    bounds = f" [{iv.low:{f}}, {iv.high:{f}}]" if iv is not None else ""
    return f"{est.value:{f}}{bounds} (n={est.n})"


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
    fmt: str = format_option(),
) -> None:
    """Import OpenTelemetry GenAI traces into transcripts, each with a fidelity report.

    Conventions: GenAI events and message attributes, execute_tool spans, OpenLLMetry, OpenInference.

    Exit 0 when every trace was imported, 2 when some were refused (cycles, unknown conventions; each is
    named and the other traces are still imported): a trace that cannot be imported is an input error.
    """
    from judgekit.api.traces import import_otel_traces

    as_json = chosen_format(fmt) == "json"
    document = import_otel_traces(trace, out, case_id=case_id, fidelity=fidelity, every_problem=as_json)
    if as_json:
        print_model("otel_import", document)
        if document.exit_code:
            raise typer.Exit(document.exit_code)
        return
    echo_imported(document.traces, document.imported, out, document.problems)
    if document.exit_code:
        raise typer.Exit(document.exit_code)


def echo_imported(
    entries: Sequence[OtelTrace | InspectSample],
    imported: int,
    out: Path,
    problems: Sequence[LocatedProblem],
    *,
    notes: Sequence[str] = (),
) -> None:
    """Print what an import of traces or Inspect samples kept, and what it refused.

    Standard output: per entry, its summary and each layer that cannot judge it; then ``notes``. Standard
    error: how many transcripts were written to ``out``, then each problem.
    """
    for entry in entries:
        typer.echo(entry.summary)
        for layer in entry.unsupported_layers:
            typer.echo(f"  {layer.layer}: insufficient_information ({layer.reason})")
    for note in notes:
        typer.echo(note)
    typer.echo(f"{imported} transcript(s) -> {out}", err=True)
    for problem in problems:
        typer.echo(f"error: {problem}", err=True)


@existing_inputs("results", "transcripts")
def export_otel(
    results: Path = typer.Argument(
        ..., help="Results file (JSONL) written by judgekit grade.", show_default=False
    ),
    out: Path = typer.Option(..., "--out", help="OTLP JSON logs file to write."),
    transcripts: Path | None = typer.Option(
        None, "--transcripts", help="Transcripts imported from OTLP, to parent each event to its trace."
    ),
    fmt: str = format_option(),
) -> None:
    """Export verdicts as gen_ai.evaluation.result events (OTLP JSON logs).

    Exit 0 when the events were written, 2 when the results file has no readable line (an input error;
    each problem named).
    """
    from judgekit.errors import ProblemsError
    from judgekit.formats.otel import export_evaluation_events

    as_json = chosen_format(fmt) == "json"
    document = export_evaluation_events(results, out, transcripts=transcripts)
    if not document.written:  # no readable line: nothing written
        unreadable = ProblemsError(list(document.problems))
        if not as_json:
            raise unreadable
        print_model("otel_export", document)
        raise typer.Exit(unreadable.exit_code)  # the code text mode exits with
    if as_json:
        print_model("otel_export", document)
        return
    typer.echo(f"{document.events} gen_ai.evaluation.result event(s) -> {out}", err=True)
