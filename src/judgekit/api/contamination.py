"""Keep golden cases out of training data: index the cases once, scan every export against the index.

Two jobs, one function each, behind ``judgekit contamination index`` and ``judgekit contamination scan``
(and :func:`new_key`, ``judgekit contamination keygen``, to make the secret key both need):

- :func:`index_cases` (:func:`judgekit.contamination.build.index_cases`): a keyed hash index of every
  text the golden cases carry. The index holds no text, so whoever scans an export never sees a case.
- :func:`scan_exports`: every export (JSONL, ``.gz``, ``.zst``, Parquet, or ``-`` for standard input)
  against the index, returning a :class:`~judgekit.contamination.report.ContaminationReport` whose
  ``status`` is ``leaked`` (exit 1), ``incomplete`` (exit 2) or ``clean`` (exit 0).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from judgekit.contamination.build import index_cases
from judgekit.contamination.keys import new_key

if TYPE_CHECKING:
    from judgekit.contamination.report import ContaminationReport
    from judgekit.contamination.scan import ScanOptions

__all__ = ["index_cases", "new_key", "scan_exports"]


def scan_exports(
    exports: Sequence[str | os.PathLike[str]],
    *,
    index: str | os.PathLike[str],
    key_file: str | os.PathLike[str],
    options: ScanOptions | None = None,
    processes: int = 0,
    split_mb: float | None = None,
) -> ContaminationReport:
    """Scan training exports for golden-set text, fast, without revealing the cases.

    Exports are checked before the key and index are read (a pipe, device or folder is refused at
    once), then the index's MAC is verified with the key before anything in it is used.

    Args:
        exports: Export files: ``.jsonl``, ``.jsonl.gz``, ``.jsonl.zst``, ``.parquet``; ``"-"`` (once)
            reads JSONL from standard input.
        index: The index file :func:`index_cases` wrote.
        key_file: The key the index was built with.
        options: What to scan and when a text counts as leaked (``None``: chat messages, prompt and
            completion and common text fields, threshold 0.5; see
            :class:`~judgekit.contamination.scan.ScanOptions`).
        processes: Processes, >= 0. ``0`` (the default) chooses from the input's size: one process
            below 16 MiB (:data:`~judgekit.contamination.parallel.TWO_PROCESS_BYTES`), then up to one per
            CPU as the size repays each (:func:`~judgekit.contamination.parallel.plan_scan`); 1 scans in
            this process; N uses N worker processes. The report is the same whatever the number.
        split_mb: Uncompressed JSONL files are split into byte ranges of this many MiB, > 0, for the
            workers; ``None`` (the default) chooses with the processes (8 to 64 MiB, an equal number of
            ranges per process).

    Returns:
        The report: ``status``, the leaked cases with their first locations, canaries found, files
        scanned, input problems, and ``exit_code`` (1 leaked, 2 incomplete, 0 clean).

    Raises:
        JudgekitError: (exit code 2) An export that is not a regular file, ``-`` given twice, a bad key,
            an index that does not verify with the key, or a bad option value.
    """
    from judgekit.contamination.index import load_key, read_index
    from judgekit.contamination.parallel import check_exports, scan_files
    from judgekit.contamination.report import build_report
    from judgekit.contamination.scan import ScanOptions
    from judgekit.errors import JudgekitError

    if split_mb is not None and not (math.isfinite(split_mb) and split_mb > 0):
        raise JudgekitError(f"split_mb (--split-mb) must be above 0 MiB (got {split_mb})", exit_code=2)
    if processes < 0:
        raise JudgekitError(f"processes (--processes) must be 0 or more (got {processes})", exit_code=2)
    chosen = options if options is not None else ScanOptions()
    check_exports(
        [e if isinstance(e, str) else Path(e) for e in exports]
    )  # before the key and index are read: nothing waits on a pipe or a device
    key = load_key(key_file)
    idx = read_index(index, key)  # verifies the index's MAC with the key before anything is used
    result = scan_files(
        [Path(e) for e in exports],
        idx,
        key,
        chosen,
        processes=processes,
        split_bytes=None if split_mb is None else max(1, int(split_mb * (1 << 20))),
    )
    return build_report(result, idx, threshold=chosen.threshold)
