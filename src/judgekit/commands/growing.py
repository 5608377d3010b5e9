"""Commands that grow and guard the golden set.

``candidates generate`` (model-written candidates), ``candidates intake`` (an incident record becomes a
sanitised regression candidate), ``cases scan-pii`` (personal data in any file), ``cases reconcile`` (two
experts' resolutions compared), ``labels sheet`` (a seeded, stratified review sheet of graded transcripts)
``labels read`` (a filled-in sheet read back as a calibration label table) and ``labels from-results``
(a results file's judge verdicts as the judge's label rows); their places in the tree are in
:mod:`judgekit.commands.tree`.

Only typer is imported at module level; everything else loads inside the commands.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from judgekit.commands.golden import problems_in_document
from judgekit.commands.inputs import existing_inputs
from judgekit.commands.output import chosen_format, format_option, print_model

__all__ = [
    "candidates_generate",
    "golden_reconcile",
    "intake",
    "labels_from_results",
    "sample",
    "sample_labels",
    "scan_pii",
]


def _valid_set(path: Path) -> Any:
    from judgekit.caseset import load_case_set

    case_set = load_case_set([path])
    case_set.raise_if_invalid()
    return case_set


# --------------------------------------------------------------------------- candidates generate


@existing_inputs("set_path")
def candidates_generate(  # noqa: PLR0917 - typer options
    tool: str = typer.Option(..., "--tool", help="The tool under test, as the agent names it."),
    description: str = typer.Option(..., "--description", help="What the tool does, in a sentence."),
    n: int = typer.Option(8, "-n", help="Utterances of each kind (should trigger / must not), 1 to 50."),
    set_path: Path = typer.Option(Path("."), "--set", help="The golden set's root folder."),
    model: str = typer.Option(..., "--model", help="litellm model that writes the utterances."),
    api_base: str | None = typer.Option(None, "--api-base", help="OpenAI-compatible base URL."),
    cassette: Path | None = typer.Option(None, "--cassette", help="Cassette (JSONL) to record or replay."),
    cache_mode: str | None = typer.Option(
        None, "--cache-mode", help="record (default with --cassette), replay (never call) or off."
    ),
    temperature: float = typer.Option(0.9, "--temperature", min=0.0, help="Sampling temperature (variety)."),
    max_tokens: int = typer.Option(2000, "--max-tokens", min=16, help="Longest reply."),
    id_prefix: str = typer.Option("GS-CAND", "--id-prefix", help="Candidate ids start with this."),
    owner: str | None = typer.Option(None, "--owner", help="Owner written into each candidate."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would be written; write nothing."),
    output_format: str = format_option(),
) -> None:
    """Ask a model for utterances that should and must not trigger a tool; write them as candidates.

    Candidates land in the set's candidates folder with an acceptance starting with REVIEW:, which no
    gate reads and promotion refuses until a person writes it. Utterances already in the set (by
    normalised text) or holding personal data are left out. An unusable reply writes nothing.
    """
    from judgekit.errors import JudgekitError
    from judgekit.golden.generate import CandidatesDocument, candidates_document, generate_candidates
    from judgekit.judges.cache import CacheMode, Cassette
    from judgekit.judges.client import ClientSettings, JudgeClient, JudgeParams

    output_format = chosen_format(output_format)
    mode = cache_mode or ("record" if cassette else "off")
    if mode not in ("record", "replay", "off"):
        raise JudgekitError(f"--cache-mode must be record, replay or off (got '{mode}')", exit_code=2)
    if mode != "off" and cassette is None:
        raise JudgekitError(f"--cache-mode {mode} needs --cassette FILE", exit_code=2)
    empty = CandidatesDocument(tool=tool, model=model, dry_run=dry_run).model_dump(mode="json")
    with problems_in_document(output_format, "candidates", empty):
        case_set = _valid_set(set_path)
    client = JudgeClient(
        JudgeParams(model=model, temperature=temperature, max_tokens=max_tokens),
        ClientSettings(api_base=api_base, concurrency=1),
        cassette=Cassette(cassette) if cassette is not None else None,
        mode=CacheMode(mode),
    )
    result = generate_candidates(
        case_set,
        tool=tool,
        description=description,
        n=n,
        client=client,
        id_prefix=id_prefix,
        owner=owner,
        dry_run=dry_run,
    )
    if output_format == "json":
        print_model("candidates", candidates_document(result, tool=tool, model=model, dry_run=dry_run))
        return
    verb = "would write" if dry_run else "wrote"
    for f in result.written:
        typer.echo(f"{verb} {f.path} ({f.case_id}): {f.data['input']}")
    for text, dup in result.duplicates:
        typer.echo(f"left out (already in the set as {dup}): {text}")
    for text, found in result.personal_data:
        typer.echo(f"left out (personal data: {found}): {text}")
    typer.echo(
        f"{verb} {len(result.written)} candidate(s); left out {len(result.duplicates)} duplicate(s) and "
        f"{len(result.personal_data)} with personal data. Review each, write its acceptance, then "
        "`judgekit candidates promote ID`"
    )


# --------------------------------------------------------------------------- intake and personal data


@existing_inputs("records", "set_path")
def intake(  # noqa: PLR0917 - typer options
    records: Path = typer.Argument(..., help="Incident records: a .json or .csv file.", show_default=False),
    set_path: Path = typer.Option(Path("."), "--set", help="The golden set's root folder."),
    redact: list[str] = typer.Option(
        [],
        "--redact",
        help="A literal value to remove as well (repeatable); names the guard finds are removed anyway.",
    ),
    id_prefix: str = typer.Option("REG-CAND", "--id-prefix", help="Candidate ids start with this."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would be written; write nothing."),
    output_format: str = format_option(),
) -> None:
    """Turn incident or escalation records into sanitised regression candidates linked to their incident.

    Emails, phone numbers, card, IBAN and account numbers, national ids, person names, postal
    addresses, postcodes, dates of birth, sort codes and secrets are replaced by placeholders, and so
    is every --redact value. A record with a missing or malformed field stops the
    intake with its file, line and field; nothing is written then.
    """
    from judgekit.golden.intake import IntakeDocument, intake_document, intake_incidents

    output_format = chosen_format(output_format)
    empty = IntakeDocument(dry_run=dry_run).model_dump(mode="json")
    with problems_in_document(output_format, "intake", empty):
        case_set = _valid_set(set_path)
        result = intake_incidents(
            records, case_set, redact_names=redact, id_prefix=id_prefix, dry_run=dry_run
        )
    if output_format == "json":
        print_model("intake", intake_document(result, dry_run=dry_run))
        return
    verb = "would write" if dry_run else "wrote"
    for f in result.written:
        typer.echo(f"{verb} {f.path} ({f.case_id}, source_incident {f.data['source_incident']})")
    for ref, case_id in result.skipped:
        typer.echo(f"skipped {ref}: already linked from case {case_id}")
    replaced = ", ".join(f"{n} {kind}" for kind, n in sorted(result.redactions.items()))
    typer.echo(
        f"{verb} {len(result.written)} regression candidate(s); replaced {replaced or 'nothing'}. Check "
        "each for names and details no pattern can find, write its acceptance, then "
        "`judgekit candidates promote ID`"
    )


@existing_inputs("paths")
def scan_pii(
    paths: list[Path] = typer.Argument(..., help="Files or folders to scan.", show_default=False),
    allow: list[str] = typer.Option([], "--allow", help="A value known to be synthetic (repeatable)."),
    output_format: str = format_option(),
) -> None:
    """Scan any files (cases, fixtures, transcripts, exports) for personal data; exit 1 when any is found.

    YAML and JSON files are scanned field by field, other text files line by line. Values are shown
    masked (last four characters). The synthetic_values of the golden set holding the first path (its
    judgekit-set.yaml, found upwards) are not reported.
    """
    from judgekit.golden.pii import pii_scan

    output_format = chosen_format(output_format)
    document = pii_scan(paths, allow=allow)
    if output_format == "json":
        print_model("pii_scan", document)
    else:
        for problem in document.findings:
            typer.echo(str(problem))
        typer.echo(f"{document.values} personal-data value(s) in {document.files_scanned} file(s) scanned")
    if document.findings:
        raise typer.Exit(1)


# --------------------------------------------------------------------------- golden reconcile


@existing_inputs("a", "b", "set_path")
def golden_reconcile(
    a: Path = typer.Argument(..., help="Expert A's resolution file (YAML or JSON).", show_default=False),
    b: Path = typer.Argument(..., help="Expert B's resolution file.", show_default=False),
    set_path: Path | None = typer.Option(
        None, "--set", help="The golden set: resolved ids and versions are checked against it."
    ),
    out: Path | None = typer.Option(
        None, "--out", help="Write the agreed resolution here (YAML), only when the experts agree."
    ),
    output_format: str = format_option(),
) -> None:
    """Compare two experts' independent resolutions of the same cases; list every field they differ on.

    Exit 0 when they agree (and --out is written), 1 when there are findings to settle (nothing is
    written). Files that do not resolve the same cases are named and not compared.
    """
    from judgekit.golden.reconcile import reconcile, reconciliation_document

    output_format = chosen_format(output_format)
    result = reconcile(a, b, set_path=set_path, out=out)
    a_name, b_name = result.a.expert, result.b.expert
    if output_format == "json":
        print_model("reconciliation", reconciliation_document(result, out))
    else:
        for finding in result.findings:
            typer.echo(finding.describe(a_name, b_name))
        typer.echo(
            f"{a_name} vs {b_name}: {len(result.a.cases)} case(s), {len(result.agreed)} agreed, "
            f"{len(result.disputed())} disputed, {len(result.findings)} finding(s)"
        )
        if result.agree:
            typer.echo(f"the experts agree; wrote {out}" if out is not None else "the experts agree")
            for update in result.set_updates:
                typer.echo("set differs from the agreed resolution: " + update.describe("set", "agreed"))
            if result.set_updates:
                cases = sorted({u.case_id for u in result.set_updates})
                typer.echo(
                    f"update {len(cases)} case(s) in the set to the agreed resolution and bump their "
                    "versions: " + ", ".join(cases)
                )
        else:
            typer.echo(
                "settle each finding (make the policy explicit, or expect a clarifying question), update the "
                "resolution files, and run again; nothing was written"
            )
    if not result.agree:
        raise typer.Exit(1)


# --------------------------------------------------------------------------- review samples


@existing_inputs("results", "transcripts")
def sample(  # noqa: PLR0917 - typer options
    results: Path = typer.Argument(
        ..., help="Results file (JSONL) written by judgekit grade.", show_default=False
    ),
    passing: int = typer.Option(0, "--passing", min=0, help="Passing trials to draw."),
    failing: int = typer.Option(0, "--failing", min=0, help="Failing trials to draw."),
    seed: int = typer.Option(0, "--seed", help="Seed of the draw (same results and seed, same sheet)."),
    out: Path = typer.Option(..., "--out", help="Folder for review-sheet.md and review-sheet.html."),
    transcripts: list[Path] = typer.Option(
        [], "--transcripts", help="Transcript files to take the trials from (default: each result's source)."
    ),
    output_format: str = format_option(),
) -> None:
    """Draw a seeded sample of passing and failing trials, stratified by slice, as a review sheet.

    The sheet (Markdown and HTML) shows each transcript, its grade and every check, with a place for the
    reviewer's verdict; `judgekit labels read` reads a filled-in sheet back as a label table for
    `judgekit calibrate`. An existing sheet is never overwritten.
    """
    from judgekit.caseset import LocatedProblem
    from judgekit.errors import JudgekitError
    from judgekit.golden.sample import (
        SampleDocument,
        draw_sample,
        render_html,
        render_markdown,
        resolve_transcripts,
        sample_document,
    )
    from judgekit.io.atomic import write_atomic
    from judgekit.results import read_results

    output_format = chosen_format(output_format)
    run = read_results(results)
    if output_format == "text":
        for problem in run.problems:
            typer.echo(f"warning: {problem}", err=True)
    empty = SampleDocument(
        sample_id=None,
        seed=seed,
        results=str(results),
        run_ids=run.run_ids,
        requested={"passing": passing, "failing": failing},
        warnings=[LocatedProblem.of(p) for p in run.problems],
    ).model_dump(mode="json")
    with problems_in_document(output_format, "sample", empty):
        drawn = resolve_transcripts(
            draw_sample(run, passing=passing, failing=failing, seed=seed), transcripts=transcripts
        )
    md_path, html_path = out / "review-sheet.md", out / "review-sheet.html"
    existing = [str(p) for p in (md_path, html_path) if p.exists()]
    if existing:
        raise JudgekitError(
            f"{', '.join(existing)} already exist(s); a filled-in sheet is never overwritten: choose "
            "another --out"
        )
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(md_path, render_markdown(drawn))
    write_atomic(html_path, render_html(drawn))
    if output_format == "json":
        print_model("sample", sample_document(drawn, [md_path, html_path], run.problems))
        return
    for pool in ("passing", "failing"):
        strata = drawn.strata.get(pool, {})
        detail = ", ".join(f"{s} {d}/{n}" for s, (n, d) in strata.items() if n)
        typer.echo(
            f"{pool}: drew {sum(d for _, d in strata.values())} of {drawn.pool_sizes.get(pool, 0)}"
            + (f" ({detail})" if detail else "")
        )
    if drawn.not_drawable:
        typer.echo("not drawn: " + ", ".join(f"{n} {v}" for v, n in drawn.not_drawable.items()))
    for note in drawn.notes:
        typer.echo(f"note: {note}")
    typer.echo(f"wrote {md_path} and {html_path} (sample {drawn.sample_id}, seed {seed})")


@existing_inputs("sheet")
def sample_labels(
    sheet: Path = typer.Argument(..., help="A filled-in review-sheet.md.", show_default=False),
    out: Path = typer.Option(..., "--out", help="Label table to write (CSV)."),
    rater: str | None = typer.Option(
        None, "--rater", help="Reviewer name (default: the sheet's Reviewer line)."
    ),
    output_format: str = format_option(),
) -> None:
    """Read a filled-in review sheet back as a label table (grader and reviewer rows) for calibration."""
    from judgekit.golden.review_labels import LabelSampleDocument, read_sheet_file, write_label_table

    output_format = chosen_format(output_format)
    empty = LabelSampleDocument(sheet=str(sheet), reviewer=rater).model_dump(mode="json")
    with problems_in_document(output_format, "label_sample", empty):
        labels = read_sheet_file(sheet, rater=rater)
    document = write_label_table(labels, sheet=sheet, out=out)
    if output_format == "json":
        print_model("label_sample", document)
        return
    typer.echo(
        f"wrote {out}: {document.labelled} labelled item(s) by {document.reviewer}, "
        f"{len(document.unlabelled)} left unlabelled; the reviewer agrees with the grader on "
        f"{document.agree_with_grader} of {document.labelled}. Next: {document.next}"
    )


@existing_inputs("results", "join")
def labels_from_results(  # noqa: PLR0917 - typer options
    results: Path = typer.Argument(..., help="A judgekit grade results file (JSONL).", show_default=False),
    out: Path = typer.Option(..., "--out", help="Label table to write (CSV)."),
    rater: str | None = typer.Option(
        None,
        "--rater",
        help="The judge's rater name (default: judge- and the first 12 characters of its fingerprint).",
    ),
    criteria: str | None = typer.Option(
        None, "--criteria", help="Comma-separated criterion ids to write (default: every judged criterion)."
    ),
    join: Path | None = typer.Option(
        None,
        "--join",
        help="The experts' label table: write its rows and the judge's verdicts on its items and criteria "
        "only, one table for judgekit calibrate.",
    ),
    output_format: str = format_option(),
) -> None:
    """Write a results file's judge verdicts as the judge's rows of a label table, for calibration.

    One row per judged criterion of each trial (item_id case#trial, as the review sheet and the labelling
    page write it), the verdict as the label (insufficient_information when the judge abstained) and the
    judge's full fingerprint. Verdicts untrusted when graded are kept; skipped criteria and judge errors
    are left out and counted.
    """
    from judgekit.api.labels import labels_from_results as write_judge_labels
    from judgekit.errors import JudgekitError

    output_format = chosen_format(output_format)
    wanted = None if criteria is None else [c.strip() for c in criteria.split(",") if c.strip()]
    if wanted == []:
        raise JudgekitError("--criteria: no criterion named", exit_code=2)
    document = write_judge_labels(results, out=out, rater=rater, criteria=wanted, join=join)
    if output_format == "json":
        print_model("judge_labels", document)
        return
    labels = ", ".join(f"{n} {label}" for label, n in document.by_label.items())
    left = ", ".join(f"{n} {reason}" for reason, n in document.left_out.items()) or "nothing"
    joined = f" after the {document.joined_rows} row(s) of {document.joined}" if document.joined else ""
    judges = ", ".join(document.raters.values())
    typer.echo(
        f"wrote {out}: {document.rows} judge label row(s) ({labels}) by {judges} "
        f"on {len(document.criteria)} criteria{joined}; {document.untrusted} untrusted when graded (kept: "
        f"calibration measures what the judge said); left out: {left}"
    )
    if document.unmatched:
        typer.echo(f"note: {document.unmatched} labelled item(s) of {document.joined} have no judge verdict")
    typer.echo(f"Next: {document.next}")
