"""Scanning many files, and big files by byte range, across processes.

A scan is cut into *work units*: a whole compressed or Parquet file (a compressed stream cannot be
entered in the middle), or a byte range of an uncompressed JSONL file. A byte-range unit owns exactly
the lines that *start* inside its range: it skips to the first line start at or after its first byte,
and finishes the line that crosses its last byte. Each unit counts its lines, so that the parent can
turn unit-local line numbers into file line numbers by adding the line counts of the units before it.
Results are merged in input order, so first locations are the same whatever the number of processes.

Standard input (the export ``-``, named ``<stdin>`` in findings) is one unit read by the parent process
itself, while the worker processes scan the other units: a stream cannot be shared or split.

How many processes: :func:`plan_scan`. Asked for ``0`` (the default), a scan uses one process below
:data:`TWO_PROCESS_BYTES` of input and more only as the input's size repays each one (a fixed cost per
worker against the per-byte cost it takes off the others, :func:`auto_processes`); any other count is
used as given. On Linux, when no other thread runs, workers are forked after the index is loaded, the
matcher built and the compiled kernels loaded, so that they share them copy-on-write and start in a few
milliseconds; elsewhere they are spawned and each loads them itself (docs/performance.md, *Contamination
scan*).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from judgekit.contamination.index import ContaminationIndex, Key
from judgekit.contamination.kernels import load_kernels
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
from judgekit.io.ranges import next_line_start, start_method

__all__ = [
    "MAX_AUTO_SPLIT_BYTES",
    "MIN_AUTO_SPLIT_BYTES",
    "TWO_PROCESS_BYTES",
    "ScanPlan",
    "WorkUnit",
    "auto_processes",
    "available_cpus",
    "check_exports",
    "plan_scan",
    "plan_units",
    "scan_files",
    "scan_unit",
    "start_method",
]

TWO_PROCESS_BYTES = 16 << 20
"""Input size (bytes on disk) from which an automatic scan uses a second process: 16 MiB.

Measured with ``bench/bench_contamination.py --processes-only --sizes 8,16,32,64`` (docs/performance.md,
*Contamination scan*, 2026-12-06, 2 CPUs, both export shapes, median of 3): the critical path of two
forked processes (the time with a free core each) against one was 0.76-1.37x at 8-9 MB (break-even
within the noise), 1.15-1.17x at 16-18 MB, 1.20-1.61x at 32-35 MB. A second worker adds a fixed
0.06-0.14 CPU-s (fork, copy-on-write faults, the pool, its results), which a file below this size does not
take back."""

MIN_AUTO_SPLIT_BYTES = 8 << 20
"""Smallest byte range an automatic plan cuts a JSONL file into (8 MiB)."""

MAX_AUTO_SPLIT_BYTES = 64 << 20
"""Largest byte range an automatic plan cuts a JSONL file into (64 MiB): small enough that a worker
slowed down by another program leaves at most one range for the others to wait on."""

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


def _size(path: Path) -> int:
    """The file's size in bytes; 0 for standard input or a file that cannot be read (reported later)."""
    if str(path) == STDIN:
        return 0
    try:
        return path.stat().st_size
    except OSError:
        return 0


def plan_units(paths: Sequence[Path], *, split_bytes: int, parts_multiple: int = 1) -> list[WorkUnit]:
    """Cut the input into work units, in input order.

    Uncompressed JSONL files larger than ``split_bytes`` become ranges of at most about ``split_bytes``
    each; everything else is one unit per file. Missing files become a unit too, and are reported when
    scanned. ``-`` becomes the unit ``<stdin>`` (format ``stdin``).

    Args:
        paths: The exports, in input order.
        split_bytes: Range size in bytes; ``0`` or less never splits.
        parts_multiple: The number of ranges of a split file is rounded up to a multiple of this (the
            number of workers), so that the workers get equal shares of it; 1 or less rounds nothing.
    """
    units: list[WorkUnit] = []
    for p in paths:
        if str(p) == STDIN:
            units.append(WorkUnit(STDIN_NAME, "stdin"))
            continue
        fmt = detect_format(p)
        size = _size(p)
        if fmt == "jsonl" and split_bytes > 0 and size > split_bytes:
            parts = -(-size // split_bytes)
            if parts_multiple > 1:
                parts = -(-parts // parts_multiple) * parts_multiple
            step = -(-size // parts)
            for k in range(parts):
                end = min(size, (k + 1) * step)
                units.append(WorkUnit(str(p), fmt, k * step, None if end >= size else end))
        else:
            units.append(WorkUnit(str(p), fmt))
    return units


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the system has one), at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)  # pragma: no cover - platforms without an affinity mask


def auto_processes(input_bytes: int, cpus: int) -> int:
    """How many processes an automatic scan of ``input_bytes`` uses on ``cpus`` CPUs.

    The model: a scan of ``b`` bytes with ``w`` processes costs about ``F + (w - 1) * f + b * c / w``
    of wall time, ``f`` being a worker's fixed cost and ``c`` the time per byte. Going from ``w - 1`` to
    ``w`` processes pays when ``b > f / c * w * (w - 1)``; with :data:`TWO_PROCESS_BYTES` ``= 2 * f / c``
    (where a second process starts to pay), ``w`` processes need ``TWO_PROCESS_BYTES * w * (w - 1) / 2``
    bytes: 1 below 16 MiB, 2 from 16 MiB, 3 from 48 MiB, 4 from 96 MiB.

    Args:
        input_bytes: The bytes workers would scan (0 or more).
        cpus: CPUs available (at least 1).

    Returns:
        A process count from 1 to ``cpus``.
    """
    workers = 1
    while workers < cpus and input_bytes >= TWO_PROCESS_BYTES * (workers + 1) * workers // 2:
        workers += 1
    return workers


@dataclass(frozen=True)
class ScanPlan:
    """How a scan runs: the work units in input order and the processes that scan them.

    Attributes:
        processes: Processes scanning the units, at least 1; 1 scans them all in the calling process.
        units: The work units, in input order (:func:`plan_units`).
        input_bytes: Bytes on disk of the files the workers may scan (standard input not counted).
        automatic: Whether ``processes`` was chosen from the input's size (``processes=0`` asked).
    """

    processes: int
    units: list[WorkUnit]
    input_bytes: int
    automatic: bool


def plan_scan(
    paths: Sequence[Path], *, processes: int = 0, split_bytes: int | None = None, cpus: int | None = None
) -> ScanPlan:
    """Choose the number of processes and cut the input into work units.

    Args:
        paths: The exports, in input order (``-`` is standard input).
        processes: ``0`` chooses from the input's size (:func:`auto_processes`: one process below
            :data:`TWO_PROCESS_BYTES`); 1 or more is used as given, but never more than there are units.
        split_bytes: Byte-range size for uncompressed JSONL files, > 0; ``None`` chooses it: with one
            process nothing is split, with ``w`` processes ranges of a quarter of a worker's share
            (between :data:`MIN_AUTO_SPLIT_BYTES` and :data:`MAX_AUTO_SPLIT_BYTES`), their number in a
            file rounded up to a multiple of ``w``.
        cpus: CPUs available; ``None`` asks the system (:func:`available_cpus`).

    Returns:
        The plan. Compressed and Parquet files count by their size on disk, and each is one unit.
    """
    total = sum(_size(p) for p in paths)
    automatic = processes <= 0
    workers = auto_processes(total, cpus or available_cpus()) if automatic else processes
    if split_bytes is None:
        share = total // (4 * workers)
        split = 0 if workers == 1 else min(MAX_AUTO_SPLIT_BYTES, max(MIN_AUTO_SPLIT_BYTES, share))
        units = plan_units(paths, split_bytes=split, parts_multiple=workers)
    else:
        units = plan_units(paths, split_bytes=split_bytes)
    return ScanPlan(max(1, min(workers, len(units))), units, total, automatic)


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
    owned: Callable[[], int] | None = None  # the bytes of the lines a range owns
    try:
        if unit.start == 0 and unit.end is None:
            read, close = open_pieces(path, unit.fmt, options.read_bytes)
            budget = None
        else:
            f = open_export(path)
            first = next_line_start(f, unit.start)
            f.seek(first)
            budget = (unit.end - first) if unit.end is not None else None
            if unit.end is not None:
                end = unit.end

                def owned() -> int:  # up to where the next range starts, found as that range finds it
                    return next_line_start(f, end) - first

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
        stats = result.files[unit.path]
        if owned is not None:
            # A range reads past its last line (a whole block); it counts only the bytes it owns, so that
            # the bytes read of a file are its size whatever the split and the number of processes.
            stats.bytes_read = min(stats.bytes_read, owned())
    finally:
        close()
    return result, stats.lines


_WORKER_MATCHER: Matcher | None = None


def _init_worker(matcher: Matcher | tuple[ContaminationIndex, Key]) -> None:
    """Set this worker's matcher: the parent's own when forked, else built here from the index and key."""
    global _WORKER_MATCHER  # noqa: PLW0603 - one matcher per worker process, built once
    _WORKER_MATCHER = matcher if isinstance(matcher, Matcher) else Matcher(*matcher)


def _run(unit: WorkUnit, options: ScanOptions) -> tuple[ScanResult, int]:
    if _WORKER_MATCHER is None:  # pragma: no cover - the initializer always runs first
        raise RuntimeError("worker not initialised")
    return scan_unit(unit, _WORKER_MATCHER, options)


def _scan_pooled(
    units: list[WorkUnit], matcher: Matcher, options: ScanOptions, workers: int, method: str
) -> list[tuple[ScanResult, int]]:
    """Scan ``units`` with ``workers`` processes, while this process reads standard input if it is one."""
    pooled = [u for u in units if u.fmt != "stdin"]
    workers = max(1, min(workers - (len(pooled) < len(units)), len(pooled)))
    if method == "fork":
        load_kernels()  # before the fork, so that every worker inherits them loaded
        initarg: Matcher | tuple[ContaminationIndex, Key] = matcher
    else:
        initarg = (matcher.index, matcher.key)
    ctx = multiprocessing.get_context(method)
    with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker, initargs=(initarg,)) as ex:
        pending = ex.map(_run, pooled, [options] * len(pooled))  # submitted at once
        own = [scan_unit(u, matcher, options) for u in units if u.fmt == "stdin"]
        done = iter(list(pending))
    mine = iter(own)
    return [next(mine) if u.fmt == "stdin" else next(done) for u in units]


def scan_files(
    paths: Sequence[Path],
    index: ContaminationIndex,
    key: Key,
    options: ScanOptions,
    *,
    processes: int = 0,
    split_bytes: int | None = None,
    method: str | None = None,
) -> ScanResult:
    """Scan files (JSONL, ``.gz``, ``.zst``, Parquet), in this process or with worker processes.

    Args:
        paths: Export files, in the order their findings should be reported; ``-`` (once) is standard
            input, scanned by this process.
        index: The index.
        key: Its key (checked against the index's fingerprint before any work starts).
        options: Scan options.
        processes: ``0`` (the default) chooses from the input's size (:func:`plan_scan`: one process below
            :data:`TWO_PROCESS_BYTES`); 1 scans in this process; more uses that many worker processes (at
            most one per unit).
        split_bytes: Uncompressed JSONL files larger than this are split into byte ranges of about this
            size, so that one big file uses every process; ``None`` chooses (:func:`plan_scan`).
        method: How workers start, ``fork`` or ``spawn``; ``None`` chooses (:func:`start_method`).

    Returns:
        The merged result, with file line numbers; the same for any number of processes, split and start
        method.

    Raises:
        JudgekitError: Wrong key, Parquet input without pyarrow installed, ``-`` twice, an export that is not
            a regular file (a pipe, device or folder), or compressed standard input (exit code 2).
    """
    check_exports(paths)
    matcher = Matcher(index, key)
    plan = plan_scan(paths, processes=processes, split_bytes=split_bytes)
    units = plan.units
    if any(u.fmt == "parquet" for u in units):
        try:
            import pyarrow.parquet  # noqa: F401
        except ImportError:
            raise JudgekitError(
                "scanning Parquet needs pyarrow, which is not installed; install it with "
                "`pip install judgekit-agents[parquet]`",
                exit_code=2,
            ) from None
    if plan.processes == 1:
        outcomes = [scan_unit(u, matcher, options) for u in units]
    else:
        outcomes = _scan_pooled(units, matcher, options, plan.processes, method or start_method())
    merged = ScanResult()
    lines_before: dict[str, int] = {}
    for unit, (result, lines) in zip(units, outcomes, strict=True):
        result.shift_lines(lines_before.get(unit.path, 0))
        lines_before[unit.path] = lines_before.get(unit.path, 0) + lines
        merged.merge(result, max_locations=options.max_locations, max_problems=options.max_problems)
    return merged
