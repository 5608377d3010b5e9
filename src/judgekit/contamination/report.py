"""The contamination report: what a scan found, and its JSON and Markdown renderings.

A report never contains golden-set text: leaked cases are named by id, matches are described by kind
(``exact``, ``shingle`` with its coverage, ``canary``), count and location (file, line or row, field).
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import Field

from judgekit.contamination.index import FORMAT_VERSION, ContaminationIndex
from judgekit.contamination.normalise import UNICODE_VERSION
from judgekit.contamination.scan import Location, ScanResult
from judgekit.markdown_text import md_code, md_text
from judgekit.verdict import FrozenModel

__all__ = [
    "REPORT_SCHEMA_VERSION",
    "CanaryFinding",
    "ContaminationReport",
    "FileSummary",
    "FoundAt",
    "IndexSummary",
    "InputProblem",
    "LeakedCase",
    "build_report",
    "render_json",
    "render_markdown",
]

REPORT_SCHEMA_VERSION = 1


class FoundAt(FrozenModel):
    """One place a leak was found.

    Attributes:
        file: The export file.
        line: 1-based line (JSONL), or ``None``.
        row: 1-based row (Parquet), or ``None``.
        field: The export field that matched (``messages[1].content``); for a shingle match spread over
            several fields, the first.
        case_field: The case's field whose text matched (``user.opening``).
        kind: ``exact``, ``shingle`` or ``canary``.
        coverage: The case text's shingle coverage in this record, the value compared with the
            threshold: tokens covered by the shingles matched in one stretch of the record divided by the
            text's token count capped at ``COVERAGE_SPAN_TOKENS`` (26); 1.0 for exact matches, ``None``
            for canaries.
    """

    file: str
    line: int | None = None
    row: int | None = None
    field: str = ""
    case_field: str = ""
    kind: str
    coverage: float | None = None


class LeakedCase(FrozenModel):
    """A golden case found in the export.

    Attributes:
        case_id: The case.
        records: Number of export records (lines or rows) containing it.
        kinds: Records per kind of match (``exact`` wins over ``shingle`` within a record).
        case_fields: Case fields that matched, with how often.
        first_locations: The first places it was found, in input order.
    """

    case_id: str
    records: int
    kinds: dict[str, int]
    case_fields: dict[str, int]
    first_locations: list[FoundAt]


class CanaryFinding(FrozenModel):
    """A canary string found verbatim (canaries are public markers, so they are quoted)."""

    canary: str
    occurrences: int
    first_locations: list[FoundAt]


class InputProblem(FrozenModel):
    """Something wrong with the input, where it is, and what the scan did about it."""

    file: str
    line: int | None = None
    row: int | None = None
    kind: str
    message: str


class FileSummary(FrozenModel):
    """What the scan read from one file, and whether all of it was scanned."""

    file: str
    bytes_read: int
    records: int
    texts: int
    records_without_fields: int
    complete: bool
    problems: dict[str, int]


class IndexSummary(FrozenModel):
    """The index a scan used (no case text, only identifiers and parameters)."""

    key_fingerprint: str
    format_version: int
    shingle_size: int
    cases: int
    unicode_version: str
    scanner_unicode_version: str


class ContaminationReport(FrozenModel):
    """The result of a contamination scan.

    Attributes:
        schema_version: Version of this document's layout (:data:`REPORT_SCHEMA_VERSION`).
        kind: Always ``contamination_report``: what the document is, as every JSON output says.
        status: ``leaked`` (a case or canary was found: exit 1), ``incomplete`` (nothing found, but some
            input could not be scanned: exit 2), or ``clean`` (everything scanned, nothing found: exit 0).
        threshold: Shingle coverage at or above which a case text counts as leaked.
        leaks: Leaked cases, most records first.
        canaries: Canaries found.
        files: Per-file summaries.
        problems: The first input problems of each file (``files[].problems`` has the full counts).
        notes: Anything the reader should know (for example a Unicode version mismatch).
    """

    schema_version: int = REPORT_SCHEMA_VERSION
    kind: Literal["contamination_report"] = "contamination_report"
    status: Literal["leaked", "incomplete", "clean"]
    index: IndexSummary
    threshold: float
    leaks: list[LeakedCase] = Field(default_factory=list)
    canaries: list[CanaryFinding] = Field(default_factory=list)
    files: list[FileSummary] = Field(default_factory=list)
    problems: list[InputProblem] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """1 when leaked, 2 when incomplete, 0 when clean."""
        return {"leaked": 1, "incomplete": 2, "clean": 0}[self.status]


def _found(loc: Location) -> FoundAt:
    return FoundAt(
        file=loc.file,
        line=loc.line,
        row=loc.row,
        field=loc.field,
        case_field=loc.case_field,
        kind=loc.kind,
        coverage=loc.coverage,
    )


def build_report(
    result: ScanResult, index: ContaminationIndex, *, threshold: float, notes: list[str] | None = None
) -> ContaminationReport:
    """Turn a merged scan result into a report."""
    leaks = [
        LeakedCase(
            case_id=cid,
            records=cl.records,
            kinds=dict(sorted(cl.kinds.items())),
            case_fields=dict(sorted(cl.case_fields.items())),
            first_locations=[_found(loc) for loc in cl.locations],
        )
        for cid, cl in result.leaks.items()
    ]
    leaks.sort(key=lambda lc: (-lc.records, lc.case_id))
    canaries = [
        CanaryFinding(canary=c, occurrences=cl.records, first_locations=[_found(loc) for loc in cl.locations])
        for c, cl in sorted(result.canaries.items())
    ]
    files = [
        FileSummary(
            file=fs.file,
            bytes_read=fs.bytes_read,
            records=fs.records,
            texts=fs.texts,
            records_without_fields=fs.records_without_fields,
            complete=fs.complete,
            problems=dict(sorted(fs.problem_counts.items())),
        )
        for fs in result.files.values()
    ]
    order = {name: i for i, name in enumerate(result.files)}
    issues = sorted(result.problems, key=lambda p: (order.get(p.file, len(order)), p.line or 0, p.row or 0))
    problems = [
        InputProblem(file=p.file, line=p.line, row=p.row, kind=p.kind, message=p.message) for p in issues
    ]
    all_notes = list(notes or [])
    if index.unicode_version != UNICODE_VERSION:
        all_notes.append(
            f"the index was built with Unicode {index.unicode_version} and this scan runs Unicode "
            f"{UNICODE_VERSION}: text using characters new in the later version may normalise differently"
        )
    for fs in files:
        if fs.records_without_fields:
            all_notes.append(
                f"{fs.file}: {fs.records_without_fields} record(s) had none of the scanned "
                "fields and no text was taken from them; check --field"
            )
    if leaks or canaries:
        status: Literal["leaked", "incomplete", "clean"] = "leaked"
    elif any(not f.complete for f in files):
        status = "incomplete"
    else:
        status = "clean"
    return ContaminationReport(
        status=status,
        index=IndexSummary(
            key_fingerprint=index.key_fingerprint,
            format_version=FORMAT_VERSION,
            shingle_size=index.shingle_size,
            cases=len(index.case_ids),
            unicode_version=index.unicode_version,
            scanner_unicode_version=UNICODE_VERSION,
        ),
        threshold=threshold,
        leaks=leaks,
        canaries=canaries,
        files=files,
        problems=problems,
        notes=all_notes,
    )


def render_json(report: ContaminationReport) -> str:
    """The report as indented JSON."""
    return json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


def _where(loc: FoundAt | InputProblem) -> str:
    if loc.line is not None:
        return f"{loc.file}:{loc.line}"
    if loc.row is not None:
        return f"{loc.file} row {loc.row}"
    return loc.file


def _cell(text: str) -> str:
    """Text from the scanned export or the golden set (file names, fields, case ids) in Markdown."""
    return md_text(text)


def render_markdown(report: ContaminationReport) -> str:
    """The report as Markdown: a status line, leaked cases, canaries, files and input problems."""
    verdict = {
        "leaked": "LEAKED: golden-set text was found in the export",
        "incomplete": "INCOMPLETE: nothing found, but part of the input could not be scanned",
        "clean": "CLEAN: no golden-set text found",
    }[report.status]
    out = [
        "# Contamination scan",
        "",
        f"**{verdict}** (exit {report.exit_code})",
        "",
        f"Index: {report.index.cases} cases, {report.index.shingle_size}-token shingles, key fingerprint "
        f"`{report.index.key_fingerprint}`; leak threshold: shingle coverage >= {report.threshold:g}.",
        "",
    ]
    if report.leaks:
        out += ["## Leaked cases", "", "| case | records | matched as | case fields | first locations |"]
        out += ["|---|---:|---|---|---|"]
        for lc in report.leaks:
            kinds = ", ".join(f"{k} x{v}" for k, v in lc.kinds.items())
            fields = ", ".join(lc.case_fields)
            locs = "; ".join(
                f"{md_text(_where(loc))} {md_code(loc.field, table=True)} ({loc.kind}"
                + (f" {loc.coverage:.0%}" if loc.kind == "shingle" and loc.coverage is not None else "")
                + ")"
                for loc in lc.first_locations
            )
            out.append(
                f"| {md_code(lc.case_id, table=True)} | {lc.records} | {kinds} | {_cell(fields)} | {locs} |"
            )
        out.append("")
    if report.canaries:
        out += ["## Canaries", "", "| canary | occurrences | first locations |", "|---|---:|---|"]
        for c in report.canaries:
            locs = "; ".join(md_text(_where(loc)) for loc in c.first_locations)
            out.append(f"| {md_code(c.canary, table=True)} | {c.occurrences} | {locs} |")
        out.append("")
    out += ["## Files", "", "| file | bytes | records | complete | problems |", "|---|---:|---:|---|---|"]
    for f in report.files:
        probs = ", ".join(f"{k} x{v}" for k, v in f.problems.items()) or "none"
        out.append(
            f"| {_cell(f.file)} | {f.bytes_read} | {f.records} | {'yes' if f.complete else 'NO'} | {probs} |"
        )
    out.append("")
    if report.problems:
        out += ["## Input problems", ""]
        out += [f"- {_cell(_where(p))}: {p.kind}: {_cell(p.message)}" for p in report.problems]
        out.append("")
    if report.notes:
        out += ["## Notes", ""]
        out += [f"- {_cell(n)}" for n in report.notes]
        out.append("")
    return "\n".join(out)
