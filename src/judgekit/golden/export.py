"""Export a golden set to other tools' test-set formats.

``copilot-studio``: CSV files for Copilot Studio's test-set import, one group of files per case owner,
named ``<owner>-<n>.csv``. The format written (and checked after writing, before anything in the output
folder changes):

* UTF-8 without a byte-order mark, records ending in CRLF, fields quoted only when they must be;
* a header of exactly the two columns ``Question`` and ``Expected response``, then one row per question;
* every row has exactly those two fields, neither blank; a question has at most
  :data:`~judgekit.cases.QUESTION_CHAR_LIMIT` (1,000) characters;
* at most :data:`COPILOT_STUDIO_MAX_ROWS` (100) rows a file (Copilot Studio's limit per test set) and at
  least one.

Each paraphrase is a row of its own, since drift often shows first on a wording nobody demoed. Multi-turn
cases cannot be expressed as single questions and are listed as left out; questions over the limit and
blank questions are named and left out (the platform rejects them).

The export is atomic: every file is written to a temporary folder inside the output folder, re-read and
checked there, and only then moved into place; if anything fails, the output folder is left exactly as it
was. Each export writes a manifest, :data:`MANIFEST_NAME`, recording the files it wrote and their SHA-256
digests; the next export into the same folder removes the files of the earlier one that are unchanged
and no longer written, and never touches a file no manifest records.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from judgekit.cases import QUESTION_CHAR_LIMIT, Case
from judgekit.errors import JudgekitError
from judgekit.io.atomic import WriteFailed, move_file, write_atomic

__all__ = [
    "COPILOT_STUDIO_HEADER",
    "COPILOT_STUDIO_MAX_ROWS",
    "EXPORT_FORMATS",
    "MANIFEST_NAME",
    "ExportResult",
    "check_copilot_studio_csv",
    "copilot_studio_rows",
    "export_copilot_studio",
]

EXPORT_FORMATS = ("copilot-studio",)
COPILOT_STUDIO_HEADER = ("Question", "Expected response")
"""The header row of a Copilot Studio test-set CSV file, exactly."""
COPILOT_STUDIO_MAX_ROWS = 100
"""Most test cases (rows after the header) Copilot Studio accepts in one test set."""
ROWS_PER_FILE = COPILOT_STUDIO_MAX_ROWS
"""How many rows the exporter puts in a file before starting the owner's next one."""
MANIFEST_NAME = "judgekit-export.json"
"""The file each export writes into the output folder, naming the files it wrote."""
WRITTEN_BY = "judgekit export"
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
"""A larger manifest is refused unread (an export of 100-row files never comes near it)."""

_EXPORT_FILE_NAME = re.compile(r"[A-Za-z0-9._-]+-[1-9][0-9]*\.csv")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_STAGING_PREFIX = ".judgekit-export-"


@dataclass
class ExportResult:
    """What an export wrote, removed and left out.

    Attributes:
        files: The files written, with their row counts.
        multi_turn: Ids of multi-turn cases left out.
        too_long: ``(case id, which question, length)`` of questions left out for length.
        blank: ``(case id, which question)`` of questions left out for being empty or only whitespace.
        no_expected: Ids of cases left out for having no expected response text.
        removed: Files of the earlier export (recorded in its manifest, unchanged since) that this export
            no longer writes, and so removed.
        kept: ``(file, why)`` of files in the output folder that look like an earlier export's but were
            left in place: changed since that export, or recorded by no manifest.
    """

    files: list[tuple[Path, int]] = field(default_factory=list)
    multi_turn: list[str] = field(default_factory=list)
    too_long: list[tuple[str, str, int]] = field(default_factory=list)
    blank: list[tuple[str, str]] = field(default_factory=list)
    no_expected: list[str] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)
    kept: list[tuple[Path, str]] = field(default_factory=list)


class _RollbackFailed(JudgekitError):
    """An export failed midway and the previous files could not all be put back."""


@dataclass(frozen=True)
class _Planned:
    """One file the export will write: its name, the owner and first case behind it, rows and bytes."""

    name: str
    owner: str
    case_id: str
    rows: list[tuple[str, str]]
    data: bytes


def _expected_response(case: Case) -> str | None:
    if case.expected and case.expected.reference_answer:
        return case.expected.reference_answer
    return case.acceptance or case.required_outcome


def _safe_name(owner: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", owner).strip("-") or "unowned"


def _require_utf8(case_id: str, which: str, text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise JudgekitError(
            f"case {case_id}: {which}: character {exc.start + 1} ({text[exc.start]!r}) cannot be written as "
            "UTF-8 (a lone surrogate); fix the text in the case file"
        ) from None


def copilot_studio_rows(cases: Iterable[Case], result: ExportResult) -> dict[str, list[tuple[str, str, str]]]:
    """Group export rows by owner, recording what is left out in ``result``.

    Returns:
        For each owner (``"unowned"`` for cases with none), its rows as ``(question, expected response,
        case id)`` in case order.

    Raises:
        JudgekitError: When a question or expected response cannot be encoded as UTF-8.
    """
    groups: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for case in cases:
        if case.is_multi_turn:
            result.multi_turn.append(case.id)
            continue
        expected = _expected_response(case)
        if not expected or not expected.strip():
            result.no_expected.append(case.id)
            continue
        _require_utf8(case.id, "expected response", expected)
        for i, question in enumerate(case.questions()):
            which = "question" if i == 0 else f"paraphrases.{i - 1}"
            if not question.strip():
                result.blank.append((case.id, which))
                continue
            if len(question) > QUESTION_CHAR_LIMIT:
                result.too_long.append((case.id, which, len(question)))
                continue
            _require_utf8(case.id, which, question)
            groups[case.owner or "unowned"].append((question, expected, case.id))
    return groups


def _csv_bytes(rows: Sequence[tuple[str, str]]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(COPILOT_STUDIO_HEADER)
    writer.writerows(rows)
    return buffer.getvalue().encode("utf-8")


def _plan(groups: dict[str, list[tuple[str, str, str]]]) -> list[_Planned]:
    """Split each owner's rows into files, refusing two owners whose file names coincide."""
    from judgekit.secrets import output_redactor

    redactor = output_redactor()  # the rows as written (and checked after writing): secrets removed
    planned: list[_Planned] = []
    claimed: dict[str, tuple[str, str, str]] = {}  # casefolded base name -> (owner, a case id, base name)
    for owner in sorted(groups):
        rows = groups[owner]
        base = _safe_name(owner)
        other = claimed.get(base.casefold())
        if other is not None:
            names = (
                f"both be exported as {base}-1.csv"
                if other[2] == base
                else f"be exported as {other[2]}-1.csv and {base}-1.csv, which differ only in letter case"
            )
            raise JudgekitError(
                f"owners {other[0]!r} (case {other[1]}) and {owner!r} (case {rows[0][2]}) would {names} "
                "(file names keep only letters, digits, '.', '_' and '-', and letter case does not tell "
                "files apart); give one of them a different owner in its case files. Nothing was written"
            )
        claimed[base.casefold()] = (owner, rows[0][2], base)
        for n, start in enumerate(range(0, len(rows), ROWS_PER_FILE), start=1):
            chunk = [(redactor.text(q), redactor.text(e)) for q, e, _ in rows[start : start + ROWS_PER_FILE]]
            planned.append(_Planned(f"{base}-{n}.csv", owner, rows[start][2], chunk, _csv_bytes(chunk)))
    return planned


def check_copilot_studio_csv(
    path: str | os.PathLike[str], rows: Sequence[tuple[str, str]] | None = None
) -> list[str]:
    """Check one file against the Copilot Studio test-set format the exporter writes.

    Args:
        path: The CSV file to read back.
        rows: The ``(question, expected response)`` rows the file should hold, in order; ``None`` checks
            the format only.

    Returns:
        One message per violation, each starting with the file (and line where there is one); empty when
        the file conforms; a file that cannot be read is one violation.
    """
    path = Path(path)
    try:
        from judgekit.io.documents import read_regular

        raw = read_regular(path, "export file")
    except OSError as exc:
        return [f"{path}: cannot read: {exc.strerror}"]
    if raw.startswith(b"\xef\xbb\xbf"):
        return [f"{path}: starts with a UTF-8 byte-order mark; the import expects plain UTF-8"]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [f"{path}: byte {exc.start + 1} is not UTF-8; the import expects UTF-8"]
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        records = list(reader)
    except csv.Error as exc:
        return [f"{path}: line {reader.line_num}: not readable as CSV ({exc})"]
    if not records or tuple(records[0]) != COPILOT_STUDIO_HEADER:
        found = ", ".join(repr(c) for c in records[0]) if records else "nothing"
        return [f"{path}: line 1: the header must be exactly 'Question', 'Expected response' (found {found})"]
    problems: list[str] = []
    body = records[1:]
    if not body:
        problems.append(f"{path}: holds no rows after the header; a test set needs at least one")
    if len(body) > COPILOT_STUDIO_MAX_ROWS:
        problems.append(f"{path}: holds {len(body)} rows; a test set holds at most {COPILOT_STUDIO_MAX_ROWS}")
    for number, record in enumerate(body, start=2):
        if len(record) != len(COPILOT_STUDIO_HEADER):
            problems.append(f"{path}: row {number}: has {len(record)} fields; every row has exactly 2")
            continue
        question, expected = record
        if not question.strip():
            problems.append(f"{path}: row {number}: the question is blank")
        elif len(question) > QUESTION_CHAR_LIMIT:
            problems.append(
                f"{path}: row {number}: the question has {len(question)} characters; the limit is "
                f"{QUESTION_CHAR_LIMIT}"
            )
        if not expected.strip():
            problems.append(f"{path}: row {number}: the expected response is blank")
    if rows is not None and not problems:
        if len(body) != len(rows):
            problems.append(f"{path}: holds {len(body)} rows where {len(rows)} were written")
        else:
            for number, (record, want) in enumerate(zip(body, rows, strict=True), start=2):
                if tuple(record) != tuple(want):
                    problems.append(f"{path}: row {number}: reads back differently from what was written")
                    break
    return problems


def _sha256(path: Path) -> str:
    from judgekit.io.documents import read_regular

    return hashlib.sha256(read_regular(path, "export file")).hexdigest()


def _read_manifest(out_dir: Path) -> dict[str, str]:
    """The files an earlier export recorded in ``out_dir``, name to SHA-256 (empty without a manifest)."""
    path = out_dir / MANIFEST_NAME
    if not path.exists() and not path.is_symlink():
        return {}
    what_to_do = "delete it if no export of yours needs it, or choose another --out. Nothing was written"
    if path.is_symlink() or not path.is_file():
        raise JudgekitError(f"{path}: is not a regular file; {what_to_do}")
    if path.stat().st_size > MAX_MANIFEST_BYTES:
        raise JudgekitError(
            f"{path}: larger than {MAX_MANIFEST_BYTES // (1024 * 1024)} MiB (MAX_MANIFEST_BYTES), not an "
            f"export manifest; {what_to_do}"
        )
    try:
        from judgekit.io.documents import read_regular

        doc = json.loads(read_regular(path, "export manifest").decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise JudgekitError(
            f"{path}: not a manifest judgekit export cases wrote ({exc}); {what_to_do}"
        ) from None
    files = doc.get("files") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or doc.get("written_by") != WRITTEN_BY or not isinstance(files, dict):
        raise JudgekitError(f"{path}: not a manifest judgekit export cases wrote; {what_to_do}")
    recorded: dict[str, str] = {}
    for name, entry in files.items():
        digest = entry.get("sha256") if isinstance(entry, dict) else None
        if (
            not _EXPORT_FILE_NAME.fullmatch(name)
            or not isinstance(digest, str)
            or not _SHA256.fullmatch(digest)
        ):
            raise JudgekitError(
                f"{path}: files: {name!r} is not an export file with its sha256; the manifest was edited or "
                f"damaged; {what_to_do}"
            )
        recorded[name] = digest
    return recorded


def _manifest_bytes(planned: Sequence[_Planned]) -> bytes:
    doc = {
        "written_by": WRITTEN_BY,
        "format": "copilot-studio",
        "files": {
            p.name: {"owner": p.owner, "rows": len(p.rows), "sha256": hashlib.sha256(p.data).hexdigest()}
            for p in planned
        },
    }
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _is_ours(path: Path, recorded: dict[str, str]) -> bool:
    """Whether ``path`` is a regular file the earlier manifest records, unchanged since."""
    digest = recorded.get(path.name)
    return digest is not None and path.is_file() and not path.is_symlink() and _sha256(path) == digest


def _looks_like_export(path: Path) -> bool:
    """A CSV named like an export file whose first line is exactly the export header."""
    if not _EXPORT_FILE_NAME.fullmatch(path.name) or path.is_symlink() or not path.is_file():
        return False
    from judgekit.io.documents import open_regular

    with open_regular(path, "export file") as fh:
        first = fh.readline(256)
    return first == _csv_bytes([])


def _sweep(
    out_dir: Path, planned: Sequence[_Planned], recorded: dict[str, str], result: ExportResult
) -> list[str]:
    """Names of the earlier export's files to remove; refuses to overwrite a file that is not ours."""
    writing = {p.name for p in planned}
    for name in sorted(writing):
        target = out_dir / name
        if (target.exists() or target.is_symlink()) and not _is_ours(target, recorded):
            why = (
                "changed since the last export"
                if name in recorded
                else f"not recorded by {MANIFEST_NAME} (your own file, or an export by a judgekit that "
                "wrote no manifest)"
            )
            raise JudgekitError(
                f"{target}: already in --out and {why}; this export would overwrite it: move or delete it, "
                "or choose another --out. Nothing was written"
            )
    remove: list[str] = []
    for name in sorted(recorded.keys() - writing):
        target = out_dir / name
        if _is_ours(target, recorded):
            remove.append(name)
        elif target.exists() or target.is_symlink():
            result.kept.append((target, "changed since the last export; delete it if it is stale"))
    for path in sorted(out_dir.iterdir()):
        if path.name not in writing and path.name not in recorded and _looks_like_export(path):
            result.kept.append(
                (
                    path,
                    f"looks like an export but {MANIFEST_NAME} does not record it; delete it if it is stale",
                )
            )
    return remove


def _make_dirs(out_dir: Path) -> list[Path]:
    """Create ``out_dir`` and its missing parents; return the folders created, outermost first."""
    missing: list[Path] = []
    here = out_dir
    while not here.exists():
        missing.append(here)
        here = here.parent
    missing.reverse()
    for folder in missing:
        folder.mkdir()
    return missing


def _remove_dirs(created: list[Path]) -> None:
    for folder in reversed(created):
        try:
            folder.rmdir()
        except OSError:
            return


def _commit(out_dir: Path, staging: Path, names: list[str], remove: list[str]) -> None:
    """Move the staged files into ``out_dir`` and remove ``remove``; on failure put everything back.

    Every file this replaces or removes is first moved into ``staging/previous``; when a move fails, the
    new files already placed are taken out and the previous ones moved back.

    Raises:
        OSError: When a move failed and everything was put back.
        _RollbackFailed: When a move failed and putting back failed too (naming where the previous files
            are).
    """
    backup = staging / "previous"
    backup.mkdir()
    moved_away: list[str] = []
    placed: list[str] = []
    try:
        for name in [*names, *remove]:
            target = out_dir / name
            if target.exists() or target.is_symlink():
                move_file(target, backup / name, overwrite=True)
                moved_away.append(name)
        for name in names:
            move_file(staging / name, out_dir / name, overwrite=True)
            placed.append(name)
    except OSError:
        try:
            for name in reversed(placed):
                move_file(out_dir / name, staging / name, overwrite=True)
            for name in reversed(moved_away):
                move_file(backup / name, out_dir / name, overwrite=True)
        except OSError as undo:
            raise _RollbackFailed(
                f"{out_dir}: the export failed and putting the previous files back failed too "
                f"({undo.strerror}); they are in {backup}: move them back into {out_dir}"
            ) from None
        raise


def export_copilot_studio(cases: Iterable[Case], out_dir: str | os.PathLike[str]) -> ExportResult:
    """Write Copilot Studio test-set CSV files into ``out_dir``, atomically.

    Files are named ``<owner>-<n>.csv`` and listed in ``judgekit-export.json``. Everything is written to a
    temporary folder inside ``out_dir`` first, re-read and checked against the format there
    (:func:`check_copilot_studio_csv`), and moved into place only when all of it is complete; the earlier
    export's files that this one no longer writes are removed at the same time. If anything fails,
    ``out_dir`` is left as it was (a folder that did not exist is not left behind).

    ``out_dir`` may be given as text or a path object.

    Raises:
        JudgekitError: When ``out_dir`` exists and is not a folder or cannot be written; when two owners
            would share a file name; when a file this export would overwrite is not one the earlier export
            wrote (or was changed since); when the manifest there is not one an export wrote; when a text
            cannot be written as UTF-8; or when a written file fails the format check. In every case
            nothing in ``out_dir`` has changed.
    """
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise JudgekitError(f"{out_dir}: exists and is not a folder; choose another --out")
    result = ExportResult()
    planned = _plan(copilot_studio_rows(cases, result))
    created: list[Path] = []
    staging: Path | None = None
    try:
        recorded = _read_manifest(out_dir) if out_dir.exists() else {}
        remove = _sweep(out_dir, planned, recorded, result) if out_dir.exists() else []
        created = _make_dirs(out_dir)
        staging = Path(tempfile.mkdtemp(dir=out_dir, prefix=_STAGING_PREFIX))
        for p in planned:
            write_atomic(staging / p.name, p.data, fsync=False)
        write_atomic(staging / MANIFEST_NAME, _manifest_bytes(planned), fsync=False)
        problems = [msg for p in planned for msg in check_copilot_studio_csv(staging / p.name, p.rows)]
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise JudgekitError(
                f"the export does not match the Copilot Studio format: {problems[0]}{more}; this is a "
                f"judgekit bug, please report it. Nothing in {out_dir} was changed"
            )
        _commit(out_dir, staging, [*(p.name for p in planned), MANIFEST_NAME], remove)
    except OSError as exc:
        _discard(staging, created)
        raise JudgekitError(
            f"{out_dir}: cannot write the export: {exc.strerror or exc}; nothing in it was changed"
        ) from None
    except WriteFailed as exc:
        _discard(staging, created)
        raise JudgekitError(
            f"{out_dir}: cannot write the export: {exc.reason}; nothing in it was changed"
        ) from None
    except _RollbackFailed:
        raise  # the staging folder holds the previous files: keep it
    except JudgekitError:
        _discard(staging, created)
        raise
    shutil.rmtree(staging, ignore_errors=True)
    result.files = [(out_dir / p.name, len(p.rows)) for p in planned]
    result.removed = [out_dir / name for name in remove]
    return result


def _discard(staging: Path | None, created: list[Path]) -> None:
    if staging is not None:
        shutil.rmtree(staging, ignore_errors=True)
    _remove_dirs(created)
