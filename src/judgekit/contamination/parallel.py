"""Scanning many files, and big files by byte range, across processes.

A scan is cut into *work units*: a whole compressed or Parquet file (a compressed stream cannot be
entered in the middle), or a byte range of an uncompressed JSONL file. A byte-range unit owns exactly
the lines that *start* inside its range: it skips to the first line start at or after its first byte,
and finishes the line that crosses its last byte. Each unit counts its lines, so that the parent can
turn unit-local line numbers into file line numbers by adding the line counts of the units before it.
Results are merged in input order, so first locations are the same whatever the number of processes.

Standard input (the export ``-``, named ``<stdin>`` in findings) is one unit read by the parent process
itself, while the worker processes scan the other units: a stream cannot be shared or split.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from judgekit.contamination.index import ContaminationIndex, Key
from judgekit.contamination.scan import (
    STDIN,
    STDIN_NAME,
    FileStats,
    Matcher,
    ScanOptions,
    ScanResult,
    detect_format,
    not_regular_export,
    open_export,
    open_pieces,
    scan_stream,
    stdin_pieces,
)
from judgekit.errors import JudgekitError

__all__ = ["WorkUnit", "check_exports", "plan_units", "scan_files", "scan_unit"]

_NAMES = {"gz": "gzip", "zst": "zstd", "jsonl": "JSONL", "stdin": "JSONL"}


def check_exports(paths: Sequence[Path | str]) -> None:
    """Refuse at once exports that could block or never end, before any work starts.

    ``os.stat`` never blocks, so a named pipe without a writer (``<(...)`` is one: ``/dev/fd/N``), a
    socket, a device or a folder is refused instead of waited on or read forever. ``-`` (standard input)
    may be given once. A missing file is left to the scan, which reports it as unreadable.

    Raises:
        JudgekitError: (exit code 2) ``-`` given twice, or an export that is not a regular file, naming
            it, what it is, and the pipe into ``-`` to use instead.
    """
    from judgekit.io.filekind import file_kind

    if sum(str(p) == STDIN for p in paths) > 1:
        raise JudgekitError(
            "`-` (standard input) is given more than once; standard input can be read only once per scan",
            exit_code=2,
        )
    for p in paths:
        if str(p) == STDIN:
            continue
        try:
            mode = os.stat(p).st_mode
        except OSError:
            continue
        kind = file_kind(mode)
        if kind is not None:
            raise not_regular_export(p, kind)


@dataclass(frozen=True)
class WorkUnit:
    """One piece of work: a whole file, or a byte range ``[start, end)`` of an uncompressed JSONL file.

    Attributes:
        path: The file.
        fmt: ``jsonl``, ``gz``, ``zst`` or ``parquet``.
        start: First byte of the range (0 for whole files).
        end: One past the last byte of the range, or ``None`` for the end of the file.
    """

    path: str
    fmt: str
    start: int = 0
    end: int | None = None


def plan_units(paths: Sequence[Path], *, split_bytes: int) -> list[WorkUnit]:
    """Cut the input into work units, in input order.

    Uncompressed JSONL files larger than ``split_bytes`` become ranges of about ``split_bytes`` each;
    everything else is one unit per file. Missing files become a unit too, and are reported when scanned.
    ``-`` becomes the unit ``<stdin>`` (format ``stdin``).
    """
    units: list[WorkUnit] = []
    for p in paths:
        if str(p) == STDIN:
            units.append(WorkUnit(STDIN_NAME, "stdin"))
            continue
        fmt = detect_format(p)
        try:
            size = p.stat().st_size
        except OSError:
            size = 0
        if fmt == "jsonl" and split_bytes > 0 and size > split_bytes:
            parts = -(-size // split_bytes)
            step = -(-size // parts)
            for k in range(parts):
                end = min(size, (k + 1) * step)
                units.append(WorkUnit(str(p), fmt, k * step, None if end >= size else end))
        else:
            units.append(WorkUnit(str(p), fmt))
    return units


def _align(f: BinaryIO, start: int) -> int:
    """Return the offset of the first line that starts at or after ``start``."""
    if start == 0:
        return 0
    f.seek(start - 1)
    pos = start - 1
    while True:
        chunk = f.read(1 << 16)
        if not chunk:
            return pos
        nl = chunk.find(b"\n")
        if nl != -1:
            return pos + nl + 1
        pos += len(chunk)


def scan_unit(unit: WorkUnit, matcher: Matcher, options: ScanOptions) -> tuple[ScanResult, int]:
    """Scan one unit in this process.

    Returns:
        The unit's result (line numbers local to the unit) and the number of lines the unit owns.
    """
    path = Path(unit.path)
    if unit.fmt == "stdin":
        result = scan_stream(stdin_pieces(options.read_bytes), matcher, options, unit.path, what="JSONL")
        return result, result.files[unit.path].lines
    if unit.fmt == "parquet":
        from judgekit.contamination.arrow import scan_parquet

        return scan_parquet(path, matcher, options), 0
    try:
        if unit.start == 0 and unit.end is None:
            read, close = open_pieces(path, unit.fmt, options.read_bytes)
            budget = None
        else:
            f = open_export(path)
            first = _align(f, unit.start)
            f.seek(first)
            budget = (unit.end - first) if unit.end is not None else None

            def read() -> bytes:
                return f.read(options.read_bytes)

            close = f.close
    except OSError as exc:
        result = ScanResult()
        stats = FileStats(file=unit.path, complete=False)
        stats.problem_counts["unreadable"] += 1
        result.files[unit.path] = stats
        from judgekit.contamination.scan import InputIssue

        result.problems.append(
            InputIssue(unit.path, None, None, "unreadable", f"cannot open the file ({exc.strerror or exc})")
        )
        return result, 0
    try:
        result = scan_stream(read, matcher, options, unit.path, what=_NAMES[unit.fmt], budget=budget)
    finally:
        close()
    return result, result.files[unit.path].lines


_WORKER_MATCHER: Matcher | None = None


def _init_worker(index: ContaminationIndex, key: Key) -> None:
    global _WORKER_MATCHER  # noqa: PLW0603 - one matcher per worker process, built once
    _WORKER_MATCHER = Matcher(index, key)


def _run(unit: WorkUnit, options: ScanOptions) -> tuple[ScanResult, int]:
    if _WORKER_MATCHER is None:  # pragma: no cover - the initializer always runs first
        raise RuntimeError("worker not initialised")
    return scan_unit(unit, _WORKER_MATCHER, options)


def scan_files(
    paths: Sequence[Path],
    index: ContaminationIndex,
    key: Key,
    options: ScanOptions,
    *,
    processes: int = 1,
    split_bytes: int = 256 << 20,
) -> ScanResult:
    """Scan files (JSONL, ``.gz``, ``.zst``, Parquet) with ``processes`` worker processes.

    Args:
        paths: Export files, in the order their findings should be reported; ``-`` (once) is standard
            input, scanned by this process.
        index: The index.
        key: Its key (checked against the index's fingerprint before any work starts).
        options: Scan options.
        processes: Worker processes; 1 scans in this process. ``0`` means one per CPU.
        split_bytes: Uncompressed JSONL files larger than this are split into byte ranges of about this
            size, so that one big file uses every process.

    Returns:
        The merged result, with file line numbers.

    Raises:
        JudgekitError: Wrong key, Parquet input without pyarrow installed, ``-`` twice, an export that is not
            a regular file (a pipe, device or folder), or compressed standard input (exit code 2).
    """
    check_exports(paths)
    matcher = Matcher(index, key)
    units = plan_units(paths, split_bytes=split_bytes)
    if any(u.fmt == "parquet" for u in units):
        try:
            import pyarrow.parquet  # noqa: F401
        except ImportError:
            raise JudgekitError(
                "scanning Parquet needs pyarrow, which is not installed; install it with "
                "`pip install judgekit-agents[parquet]`",
                exit_code=2,
            ) from None
    if processes <= 0:
        processes = os.cpu_count() or 1
    processes = min(processes, len(units)) or 1
    if processes == 1:
        outcomes = [scan_unit(u, matcher, options) for u in units]
    else:
        # Standard input is read here (a stream cannot go to a worker) while the workers scan the rest.
        pooled = [u for u in units if u.fmt != "stdin"]
        workers = max(1, min(processes - (len(pooled) < len(units)), len(pooled)))
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(
            workers, mp_context=ctx, initializer=_init_worker, initargs=(index, key)
        ) as ex:
            pending = ex.map(_run, pooled, [options] * len(pooled))  # submitted at once
            own = [scan_unit(u, matcher, options) for u in units if u.fmt == "stdin"]
            done = iter(list(pending))
        mine = iter(own)
        outcomes = [next(mine) if u.fmt == "stdin" else next(done) for u in units]
    merged = ScanResult()
    lines_before: dict[str, int] = {}
    for unit, (result, lines) in zip(units, outcomes, strict=True):
        result.shift_lines(lines_before.get(unit.path, 0))
        lines_before[unit.path] = lines_before.get(unit.path, 0) + lines
        merged.merge(result, max_locations=options.max_locations, max_problems=options.max_problems)
    return merged
