"""Export a golden set to other tools' test-set formats.

``copilot-studio``: CSV files with the columns ``Question`` and ``Expected response``, at most 100 rows a
file (Copilot Studio's limit per test set), one group of files per case owner. Each paraphrase is a row
of its own, since drift often shows first on a wording nobody demoed. Multi-turn cases cannot be
expressed as single questions and are listed as left out; questions over 1,000 characters are named and
left out (the platform rejects them).
"""

from __future__ import annotations

import csv
import io
import os
import re
import tempfile
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from judgekit.cases import QUESTION_CHAR_LIMIT, Case
from judgekit.errors import JudgekitError

__all__ = ["EXPORT_FORMATS", "ExportResult", "copilot_studio_rows", "export_copilot_studio"]

EXPORT_FORMATS = ("copilot-studio",)
ROWS_PER_FILE = 100


@dataclass
class ExportResult:
    """What an export wrote and what it left out.

    Attributes:
        files: The files written, with their row counts.
        multi_turn: Ids of multi-turn cases left out.
        too_long: ``(case id, which question, length)`` of questions left out for length.
        no_expected: Ids of cases left out for having no expected response text.
    """

    files: list[tuple[Path, int]] = field(default_factory=list)
    multi_turn: list[str] = field(default_factory=list)
    too_long: list[tuple[str, str, int]] = field(default_factory=list)
    no_expected: list[str] = field(default_factory=list)


def _expected_response(case: Case) -> str | None:
    if case.expected and case.expected.reference_answer:
        return case.expected.reference_answer
    return case.acceptance or case.required_outcome


def _safe_name(owner: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", owner).strip("-") or "unowned"


def copilot_studio_rows(cases: Iterable[Case], result: ExportResult) -> dict[str, list[tuple[str, str]]]:
    """Group export rows by owner, recording what is left out in ``result``."""
    groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for case in cases:
        if case.is_multi_turn:
            result.multi_turn.append(case.id)
            continue
        expected = _expected_response(case)
        if not expected:
            result.no_expected.append(case.id)
            continue
        for i, question in enumerate(case.questions()):
            if len(question) > QUESTION_CHAR_LIMIT:
                which = "question" if i == 0 else f"paraphrases.{i - 1}"
                result.too_long.append((case.id, which, len(question)))
                continue
            groups[case.owner or "unowned"].append((question, expected))
    return groups


def export_copilot_studio(cases: Iterable[Case], out_dir: str | os.PathLike[str]) -> ExportResult:
    """Write Copilot Studio test-set CSV files into ``out_dir``.

    Files are named ``<owner>-<n>.csv``. Everything is written to a temporary folder first and moved
    into place only when complete, so an interrupted export never leaves half a file.

    ``out_dir`` may be given as text or a path object.

    Raises:
        JudgekitError: When ``out_dir`` exists and is not a folder, or cannot be written.
    """
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise JudgekitError(f"{out_dir}: exists and is not a folder; choose another --out")
    result = ExportResult()
    groups = copilot_studio_rows(cases, result)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=out_dir, prefix=".export-") as tmp:
            staged: list[tuple[Path, Path, int]] = []
            for owner in sorted(groups):
                rows = groups[owner]
                for n, start in enumerate(range(0, len(rows), ROWS_PER_FILE), start=1):
                    chunk = rows[start : start + ROWS_PER_FILE]
                    buffer = io.StringIO()
                    writer = csv.writer(buffer, lineterminator="\r\n")
                    writer.writerow(["Question", "Expected response"])
                    writer.writerows(chunk)
                    name = f"{_safe_name(owner)}-{n}.csv"
                    tmp_path = Path(tmp) / name
                    tmp_path.write_text(buffer.getvalue(), encoding="utf-8", newline="")
                    staged.append((tmp_path, out_dir / name, len(chunk)))
            for tmp_path, final, count in staged:
                os.replace(tmp_path, final)
                result.files.append((final, count))
    except OSError as exc:
        raise JudgekitError(f"{out_dir}: cannot write the export: {exc.strerror}") from None
    return result
