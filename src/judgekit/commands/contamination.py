"""Contamination commands: ``keygen``, ``index``, ``canary``, ``scan``.

Exit codes of ``scan``: 0 clean (everything scanned, nothing found), 1 a golden case or canary was
found, 2 the scan could not run or not all input could be scanned (wrong key, unreadable index, corrupt
or truncated file, over-long line).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from judgekit.commands.inputs import existing_inputs
from judgekit.commands.output import chosen_format, format_option, print_model

if TYPE_CHECKING:
    from judgekit.contamination.index import Key

__all__ = ["canary", "index", "keygen", "scan"]


def _key(path: Path) -> Key:
    from judgekit.contamination.index import load_key

    return load_key(path)


def keygen(
    out: Path = typer.Option(
        ..., "--out", help="Where to write the new key (refuses to overwrite).", show_default=False
    ),
    fmt: str = format_option(),
) -> None:
    """Write a new random 256-bit contamination key (hex), readable only by you.

    With --format json the document gives the key file and the key's public fingerprint, never the key.
    """
    from judgekit.contamination.keys import new_key

    as_json = chosen_format(fmt) == "json"
    document = new_key(out)
    if as_json:
        print_model("contamination_key", document)
        return
    typer.echo(f"wrote {out}; {document.warning}")


@existing_inputs("cases", "key_file", "texts", "boilerplate")
def index(  # noqa: PLR0917 - typer options
    cases: list[Path] = typer.Argument(None, help="Golden-set folders or case files.", show_default=False),
    key_file: Path = typer.Option(..., "--key-file", help="The secret key file.", show_default=False),
    out: Path = typer.Option(..., "--out", help="Index file to write.", show_default=False),
    texts: Path | None = typer.Option(
        None,
        "--texts",
        help='Index a JSONL of {"id", "texts": [...]} instead of case files.',
        show_default=False,
    ),
    shingle_size: int = typer.Option(7, "--shingle-size", min=4, max=64, help="Tokens per shingle."),
    min_text_tokens: int = typer.Option(
        4,
        "--min-text-tokens",
        min=1,
        help="Shorter texts get no whole-text entry (they match everyday phrases).",
    ),
    max_cases: int | None = typer.Option(
        None,
        "--max-cases",
        min=1,
        help="Drop shingles found in more than this many cases (default: max(2, 2% of the cases)).",
    ),
    boilerplate: list[Path] = typer.Option(
        None,
        "--boilerplate",
        help="Text file whose lines (templated prompts, policy text) are never flagged.",
    ),
    set_name: str | None = typer.Option(
        None,
        "--set-name",
        help="Name for the set's canary (default: the manifest's name, else the folder name).",
    ),
    canary: list[str] = typer.Option(
        None, "--canary", help="Extra canary string to report verbatim (repeatable)."
    ),
    reference_transcripts: bool = typer.Option(
        True,
        "--reference-transcripts/--no-reference-transcripts",
        help="Also index the user and assistant messages of each case's reference_solution transcript.",
    ),
    fmt: str = format_option(),
) -> None:
    """Build a keyed hash index of every text the golden cases carry (no text is stored).

    Exit 0 when the index was written, 2 when the case set has problems (each named; nothing is written).
    """
    from judgekit.contamination.build import IndexRefusal, index_cases
    from judgekit.errors import JudgekitError

    as_json = chosen_format(fmt) == "json"
    document = index_cases(
        cases or [],
        key_file=key_file,
        out=out,
        texts=texts,
        shingle_size=shingle_size,
        min_text_tokens=min_text_tokens,
        max_cases=max_cases,
        boilerplate=boilerplate or [],
        set_name=set_name,
        canaries=canary or [],
        reference_transcripts=reference_transcripts,
    )
    if as_json:
        print_model("contamination_index", document)
        if isinstance(document, IndexRefusal):
            raise typer.Exit(2)  # an invalid set to index is an input error, as in text mode
        return
    if isinstance(document, IndexRefusal):
        for p in document.problems:
            typer.echo(str(p), err=True)
        raise JudgekitError(document.error)
    s = document.stats
    typer.echo(
        f"indexed {s['cases']} cases, {s['texts']} texts: {s['shingle_entries']} shingle entries "
        f"({s['shingle_entries_dropped_shared']} dropped as shared by more than {document.max_cases} cases, "
        f"{s['shingle_entries_dropped_boilerplate']} as boilerplate), {s['text_entries']} whole-text "
        f"entries; "
        f"key fingerprint {document.key_fingerprint}; wrote {out}"
    )
    typer.echo(f"canary for set {document.set_name!r}: {document.canary}")


@existing_inputs("key_file")
def canary(
    key_file: Path = typer.Option(..., "--key-file", help="The secret key file.", show_default=False),
    set_name: str = typer.Option(
        ..., "--set-name", help="The set's name (as given to index).", show_default=False
    ),
    fmt: str = format_option(),
) -> None:
    """Print the set's canary string, to embed in its case files (a scan reports it verbatim)."""
    from judgekit.contamination.keys import canary_document

    as_json = chosen_format(fmt) == "json"
    document = canary_document(_key(key_file), set_name)
    if as_json:
        print_model("canary", document)
        return
    typer.echo(document.canary)


@existing_inputs("exports", "index_path", "key_file")
def scan(  # noqa: PLR0917 - typer options
    # str, not Path: typer compares the coerced Path("-") with "-" and would call `-` a missing file.
    exports: list[str] = typer.Argument(
        ...,
        help="Export files: .jsonl, .jsonl.gz, .jsonl.zst, .parquet; `-` reads JSONL from standard input "
        "(once), e.g. `zcat export.jsonl.gz | judgekit contamination scan - ...`. Only regular files "
        "are opened: a named pipe, `<(...)`, a device or a folder is refused (pipe it into `-`).",
        show_default=False,
        allow_dash=True,
    ),
    index_path: Path = typer.Option(
        ..., "--index", help="Index file from `contamination index`.", show_default=False
    ),
    key_file: Path = typer.Option(
        ..., "--key-file", help="The key the index was built with.", show_default=False
    ),
    fmt: str = format_option(default="md", choices=("md", "json")),
    out: Path | None = typer.Option(None, "--out", help="Write the report here instead of standard output."),
    fields: list[str] = typer.Option(
        None,
        "--field",
        help="Field path to scan, e.g. messages[].content or meta.notes (repeatable). "
        "Default: chat messages, prompt/completion and common text fields, else every string.",
    ),
    threshold: float = typer.Option(
        0.5, "--threshold", help="Shingle coverage of a case text that counts as a leak."
    ),
    processes: int = typer.Option(
        0,
        "--processes",
        "-j",
        min=0,
        help="Processes: 0 chooses from the input's size (one below 16 MiB, then up to one per CPU as the "
        "size repays each); N uses N.",
    ),
    split_mb: float | None = typer.Option(
        None,
        "--split-mb",
        help="Split uncompressed JSONL files into ranges of this many MiB (default: chosen with the "
        "processes, 8 to 64 MiB).",
        show_default=False,
    ),
    max_line_mb: float = typer.Option(
        32,
        "--max-line-mb",
        help="Longest line scanned, in MiB; a longer line is reported with its line and length and makes the "
        "scan incomplete (exit 2).",
    ),
    max_locations: int = typer.Option(
        5, "--max-locations", min=1, help="First locations kept per leaked case."
    ),
) -> None:
    """Scan training exports for golden-set text; exit 1 on a leak, 0 when clean, 2 when incomplete.

    `-` scans JSONL piped to standard input (findings name it `<stdin>`, with line numbers as for a file):
    the way to scan a decompressed or generated export.
    """
    from judgekit.api.contamination import scan_exports
    from judgekit.contamination.report import render_json, render_markdown
    from judgekit.contamination.scan import ScanOptions, max_line_bytes_from_mb
    from judgekit.errors import JudgekitError

    chosen_format(fmt, ("md", "json"))
    try:
        options = ScanOptions(
            fields=tuple(fields) if fields else None,
            threshold=threshold,
            max_locations=max_locations,
            max_line_bytes=max_line_bytes_from_mb(max_line_mb),
        )
    except JudgekitError as exc:
        raise JudgekitError(exc.message, exit_code=2) from None
    report = scan_exports(
        exports, index=index_path, key_file=key_file, options=options, processes=processes, split_mb=split_mb
    )
    text = render_json(report) if fmt == "json" else render_markdown(report)
    if out is not None:
        from judgekit.io.atomic import write_atomic

        write_atomic(out, text)
        typer.echo(f"{report.status}: {len(report.leaks)} leaked case(s); report written to {out}", err=True)
    else:
        typer.echo(text, nl=False)
    if report.exit_code:
        raise typer.Exit(report.exit_code)
