"""One results file read by several processes, byte range by byte range, as one pass would read it.

``judgekit report`` and ``judgekit compare`` spend their time decoding and counting lines, one core's
worth. :func:`read_in_parts` cuts the file into byte ranges at line starts
(:func:`judgekit.io.ranges.line_ranges`); this process reads the first range into the accumulator it is
given while worker processes read the others, each into an empty *part* of the same kind (a
:class:`~judgekit.reports.run_model.RunAccumulator` or a :class:`~judgekit.reports.run_compare.RunDigest`);
the caller merges the parts in file order. What makes the merged result equal to one pass, byte for byte
in every rendering:

* **Line numbers**: each range's reader numbers its lines from the range's first, and counts them; the
  caller then adds the lines of the ranges before it (:meth:`PartRead.shifted`, and the part's own
  :meth:`LocatingPart.shift_lines`), so every problem names the line one pass names. No reader passes
  over the bytes before its range to count them (it did: 0.12-0.2 s of a worker's time at 1 GiB).
* **Duplicates** (the first is kept): each part returns the trials it read and the line of each. A trial
  read by two parts is a duplicate in the later one, which one pass would have left out; such a part is
  read again, knowing the trials of the parts before it (rare: only a file with a trial repeated far
  apart costs a second read of its later parts).
* **Problems** come in file order; the lines of another schema version are gathered over every part into
  the one problem per version that one pass gives, at the end.
* **Sums** are exact (:func:`judgekit.reports.run_model.add_exact`): the parts' sums merge without
  rounding, so the totals are the same floats whatever the split.

Worker processes are forked on Linux when this process has no other thread (they start in milliseconds,
judgekit already loaded), and spawned otherwise (a new interpreter: a fork of a process with threads can
deadlock), by the rule the contamination scan's workers follow (:func:`judgekit.io.ranges.start_method`).
A worker's error reaches the caller as the same error one process raises; a worker that dies is a
:class:`~judgekit.errors.JudgekitError` naming its byte range.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

from judgekit.errors import JudgekitError, Problem
from judgekit.io.ranges import start_method
from judgekit.results import (
    FastResultLine,
    LineLocation,
    ResultLine,
    ResultStream,
    other_version_problems,
    paused_gc,
)

__all__ = [
    "AUTO_PART_BYTES",
    "FIRST_RANGE_EXTRA",
    "FIRST_RANGE_SHARE",
    "PartRead",
    "ResultPart",
    "cpu_count",
    "processes_for",
    "read_in_parts",
    "read_ranges",
    "worker_main",
]

AUTO_PART_BYTES = 128 << 20
"""The smallest share of a file worth a process of its own when the count is chosen automatically.

Measured on real result lines (``docs/performance.md``, "Two processes over byte ranges"), with the
workers forked and the trials that did not pass sent as their lines' places: two processes took 0.56 of
one process's wall time on a 255 MB file (``compare`` of two such files: 0.60), and 0.58 at 1 GiB and
0.56 at 5 GB (eighth session; ``compare`` 0.56 and 0.57); so a second process is used from 256 MiB."""


FIRST_RANGE_EXTRA = 32 << 20
"""Bytes the first range (read by this process) gets beyond an equal share when the workers are spawned:
what this process reads while a worker starts its interpreter and imports judgekit (about 0.55 CPU-s; a
forked worker starts at once and this is not given), measured on real lines (``docs/performance.md``,
"Two processes over byte ranges")."""

FIRST_RANGE_SHARE = 32
"""The first range also gets ``1 / FIRST_RANGE_SHARE`` of the file's bytes more, forked or spawned: what a
worker spends beyond reading, growing with its range (pickling its part, about 3 % of its reading), while
this process reads. Timed on 1 GiB of real lines, ``judgekit report -j 2``, 6 alternated runs each (eighth
session): 1/16, 1/24, 1/32, 1/48 took 3.85, 3.74, 3.74, 3.72 s; with 1/16 this process read 0.2 s longer
than the worker needed to read and pickle its range. 1/16 had been chosen over 1/48 (sixth session) while
each worker also counted the newlines before its range, which it no longer does (seventh session)
(``docs/performance.md``, "Two processes over byte ranges")."""


class ResultPart(Protocol):
    """What reads a part of a results file: fed each valid line of its range, in file order."""

    def add(self, line: ResultLine | FastResultLine) -> None:
        """Count one valid line."""


class LocatingPart(ResultPart, Protocol):
    """A part that keeps some lines as their places in the file: it is given the reader's locator."""

    locate: Callable[[], LineLocation] | None
    """Where the line just added is (:meth:`~judgekit.results.ResultStream.location`), while it reads."""

    def shift_lines(self, before: int) -> None:
        """Add ``before`` (the lines before its range) to the line number of every place it keeps."""


PartT = TypeVar("PartT", bound=ResultPart)


@dataclass
class PartRead:
    """What reading one byte range found besides the part's own figures.

    Attributes:
        problems: The range's located problems, in line order (those of other schema versions apart).
        other_versions: Each other schema version found and its line numbers, in the order first found.
        seen: Each valid trial the range read and its line number (the trials known before it left out).
        truncated: True when the range ends the file with a line cut off mid-line.
        lines: The number of the range's last line as the range numbers it, blank lines counted
            (relative: the range's line count).
        relative: Whether its line numbers count from the range's first line (:meth:`shifted` makes them
            the file's).
    """

    problems: list[Problem] = field(default_factory=list)
    other_versions: dict[Any, list[int]] = field(default_factory=dict)
    seen: dict[tuple[str, int], int] = field(default_factory=dict)
    truncated: bool = False
    lines: int = 0
    relative: bool = False

    def shifted(self, before: int) -> PartRead:
        """The same read with the file's line numbers: ``before`` (the lines before its range) added.

        The message of a duplicate names its first line as the file's already
        (:class:`~judgekit.results.ResultStream`); only the problems' own line moves.
        """
        if not self.relative or not before:
            return replace(self, relative=False)
        return PartRead(
            [replace(p, line=p.line + before) if p.line is not None else p for p in self.problems],
            {version: [n + before for n in numbers] for version, numbers in self.other_versions.items()},
            {key: n + before for key, n in self.seen.items()},
            self.truncated,
            self.lines,
            relative=False,
        )


def cpu_count() -> int:
    """The CPUs this process may run on (its affinity where the system says, else every CPU), >= 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - systems without affinity (macOS, Windows)
        return max(1, os.cpu_count() or 1)


def processes_for(source: object, processes: int | None) -> int:
    """How many processes read ``source``: the count asked for, or one per :data:`AUTO_PART_BYTES`.

    Args:
        source: A results file's path, or a run already in memory (always read by this process).
        processes: The count asked for (``--processes``): ``None`` chooses (one process per
            :data:`AUTO_PART_BYTES` of the file, at most one per CPU), ``0`` means one per CPU, ``1``
            reads in this process only, more forces that many (at most one per line, and a file too
            small to split is read in this process).

    Returns:
        The count, >= 1; 1 for a run in memory, and for a file that cannot be examined (it is then read,
        and its problem reported, as one process does).
    """
    if not isinstance(source, str | os.PathLike):
        return 1
    if processes is not None and processes < 0:
        raise ValueError(f"processes must be at least 0 (got {processes})")
    if processes is not None and processes > 0:
        return processes
    if processes == 0:
        return cpu_count()
    try:
        size = os.stat(source).st_size
    except OSError:
        return 1
    return max(1, min(cpu_count(), size // AUTO_PART_BYTES))


def _read_range(
    path: Path,
    byte_range: tuple[int, int],
    part: PartT,
    prior: Mapping[tuple[str, int], int] | None,
) -> tuple[PartT, PartRead]:
    """Feed ``part`` the valid lines of one byte range; the worker processes' task (and this process's).

    A first reading (no ``prior``) numbers the range's lines from its first; a second one, knowing the
    trials before it, numbers them as the file does (:class:`PartRead` says which).
    """
    stream = ResultStream(path, byte_range=byte_range, prior=prior, relative=prior is None)
    locating = hasattr(part, "locate")
    if locating:  # it keeps some trials as their lines' places in the file (a run report's accumulator)
        cast(LocatingPart, part).locate = stream.location
    try:
        with paused_gc():
            for line in stream.report_lines():
                part.add(line)
    finally:
        if locating:
            cast(LocatingPart, part).locate = None
    seen = stream.seen if not prior else {k: n for k, n in stream.seen.items() if k not in prior}
    return part, PartRead(
        stream.problems, stream.other_versions, seen, stream.truncated, stream.lines, stream.relative
    )


def read_in_parts(
    path: str | os.PathLike[str], first: PartT, make_part: Callable[[], PartT], *, processes: int
) -> tuple[list[PartT], list[Problem], bool]:
    """Read a results file with ``processes`` processes; ``first`` is fed the first range here.

    Args:
        path: The results file.
        first: What reads the first range, in this process (the caller's own accumulator).
        make_part: Makes an empty part for each later range (sent to a worker process, so it pickles).
        processes: How many processes read (>= 1; fewer when the file has fewer lines to cut at): the
            file is cut into that many ranges of about equal bytes (:func:`~judgekit.io.ranges.line_ranges`).

    Returns:
        The later parts, in file order, for the caller to merge into ``first``; the file's problems, in
        the order one pass reports them; and whether its last line is truncated.

    Raises:
        JudgekitError: When the file cannot be read (exit code 2), as one process raises it.
    """
    from judgekit.io.documents import open_input
    from judgekit.io.ranges import line_ranges

    path = Path(path)
    method = start_method()
    with open_input(path, "results") as handle:
        size = os.fstat(handle.fileno()).st_size
        # a spawned worker first starts an interpreter; a forked one starts at once
        extra = (FIRST_RANGE_EXTRA if method == "spawn" else 0) + size // FIRST_RANGE_SHARE
        ranges = line_ranges(handle, size, max(1, processes), first_extra=extra)
    return read_ranges(path, ranges, first, make_part, method=method)


def read_ranges(
    path: str | os.PathLike[str],
    ranges: Sequence[tuple[int, int]],
    first: PartT,
    make_part: Callable[[], PartT],
    *,
    workers: bool = True,
    method: str | None = None,
) -> tuple[list[PartT], list[Problem], bool]:
    """Read a results file's byte ranges, the first into ``first`` here, each later one into a new part.

    Args:
        path: The results file.
        ranges: Adjacent ``[start, end)`` ranges covering the file, each cut at line starts, in file order
            (:func:`~judgekit.io.ranges.line_ranges`; any such cut gives the same merged result).
        first: What reads the first range, in this process.
        make_part: Makes an empty part for each later range.
        workers: Whether the later ranges are read by worker processes, one each, at the same time as
            this process reads the first; ``False`` reads them here one after the other, each part and
            its result passed through pickle as a worker's are (the same result, without processes).
        method: How the workers start, ``fork`` or ``spawn``; ``None`` chooses
            (:func:`~judgekit.io.ranges.start_method`).

    Returns:
        As :func:`read_in_parts`.

    Raises:
        JudgekitError: When the file cannot be read (exit code 2), as one process raises it.
    """
    path = Path(path)
    ranges = list(ranges)
    later = [make_part() for _ in ranges[1:]]
    if workers and later:
        reads = _read_by_workers(path, ranges, first, later, method=method)
    else:
        _, own = _read_range(path, ranges[0], first, None)
        done = [
            _read_here((path, byte_range, part, None))
            for byte_range, part in zip(ranges[1:], later, strict=True)
        ]
        later[:] = [part for part, _ in done]
        reads = [own, *(read for _, read in done)]
    # Each range's lines were numbered from its first: add the lines of the ranges before it.
    before = 0  # the lines of the ranges before this one
    for j, read in enumerate(reads):
        if read.relative:
            reads[j] = read.shifted(before)
            if before and hasattr(later[j - 1], "locate"):  # (the first range is never relative)
                cast(LocatingPart, later[j - 1]).shift_lines(before)
        before = (before if read.relative else 0) + read.lines
    # A trial read by two parts is a duplicate in the later one: read that part again knowing the earlier
    # parts' trials, as one pass would have (the parts before it are already right).
    earlier: dict[tuple[str, int], int] = {}
    again: list[tuple[int, dict[tuple[str, int], int]]] = []
    for j, read in enumerate(reads):
        if j and not earlier.keys().isdisjoint(read.seen):
            again.append((j, dict(earlier)))
        for key, number in read.seen.items():
            earlier.setdefault(key, number)
    for j, prior in again:
        later[j - 1], reads[j] = _read_range(path, ranges[j], make_part(), prior)
    problems: list[Problem] = []
    versions: dict[Any, list[int]] = {}
    for read in reads:
        problems.extend(read.problems)
        for version, numbers in read.other_versions.items():
            versions.setdefault(version, []).extend(numbers)
    problems.extend(other_version_problems(path, versions))
    return later, problems, any(read.truncated for read in reads)


def _read_here(task: tuple[Any, ...]) -> tuple[Any, PartRead]:
    """A worker's task done in this process, through pickle both ways as a worker process does it."""
    import pickle

    task = pickle.loads(pickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL))
    result = _read_range(*task)
    return cast(tuple[Any, PartRead], pickle.loads(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)))


def _read_by_workers(
    path: Path, ranges: list[tuple[int, int]], first: PartT, later: list[PartT], *, method: str | None = None
) -> list[PartRead]:
    """Read the first range here while worker processes read the others; every range's :class:`PartRead`.

    Every worker is started (forked or spawned, :func:`~judgekit.io.ranges.start_method`, decided once)
    before any thread that talks to one: a fork must find this process with its one thread.
    """
    method = method or start_method()
    workers = []
    try:
        for byte_range, part in zip(ranges[1:], later, strict=True):
            workers.append(_Worker((path, byte_range, part, None), method=method))
        for worker in workers:
            worker.start()
        _, own = _read_range(path, ranges[0], first, None)
        done = [worker.result() for worker in workers]
    except BaseException:  # an error here or in a worker, or Ctrl-C: no worker is left running
        for worker in workers:
            worker.stop()
        raise
    later[:] = [part for part, _ in done]
    return [own, *(read for _, read in done)]


_WORKER_CODE = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from judgekit.reports.run_parts import worker_main; worker_main()"
)


class _Worker:
    """One worker process reading one range, its result (pickled) read by a thread here meanwhile.

    ``fork``: a copy of this process (judgekit already imported, the task already in memory) that reads
    its range, writes its answer to a pipe and ends; it starts in milliseconds. ``spawn``: a new
    interpreter running :func:`worker_main` from this same judgekit (its folder goes first on the worker's
    path, so it works from any caller: a script without a ``__main__`` guard, a test, a notebook), the task
    sent pickled on its standard input and the answer read from its standard output; it first imports
    judgekit (about 0.55 CPU-s).

    Args:
        task: ``(path, byte range, part, prior)`` for :func:`_read_range`.
        method: ``fork`` or ``spawn``.
    """

    def __init__(self, task: tuple[Any, ...], *, method: str = "spawn") -> None:
        import threading

        self.path, self.byte_range = task[0], task[1]
        self.output = b""
        self.returncode: int | None = None
        self.pid = 0
        self.process: Any = None
        if method == "fork":
            self._fork(task)
        else:
            self._spawn(task)
        self.thread = threading.Thread(target=self._talk, daemon=True)

    def _fork(self, task: tuple[Any, ...]) -> None:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker: answer, then end at once (no atexit, no flush of this process's buffers)
            code = 1
            try:
                os.close(read_end)
                with os.fdopen(write_end, "wb") as out:
                    out.write(_answer(task))
                code = 0
            finally:
                os._exit(code)
        os.close(write_end)
        self.pid, self.read_end = pid, read_end

    def _spawn(self, task: tuple[Any, ...]) -> None:
        import pickle
        import subprocess
        import sys

        src = str(Path(__file__).resolve().parents[2])
        self.process = subprocess.Popen(
            [sys.executable, "-c", _WORKER_CODE, src], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        self.pid = self.process.pid
        self.payload = pickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL)

    def start(self) -> None:
        """Start moving the task and the answer (after every worker was started)."""
        self.thread.start()

    def _talk(self) -> None:
        if self.process is not None:
            self.output, _ = self.process.communicate(self.payload)
            self.returncode = self.process.returncode
            return
        with os.fdopen(self.read_end, "rb") as answer:
            self.output = answer.read()
        _, status = os.waitpid(self.pid, 0)
        self.returncode = os.waitstatus_to_exitcode(status)

    def stop(self) -> None:
        """End the worker (this process failed or was interrupted: its result is not wanted)."""
        if self.returncode is None:
            import signal

            with contextlib.suppress(ProcessLookupError):  # it has just ended
                os.kill(self.pid, signal.SIGKILL)
        if not self.thread.ident:  # never started: start it, to collect the ended process
            self.thread.start()
        self.thread.join()

    def result(self) -> tuple[Any, PartRead]:
        """The worker's part and :class:`PartRead`, once it is done; its error raised here, as it was."""
        import pickle

        if not self.thread.ident:
            self.thread.start()
        self.thread.join()
        code = self.returncode
        if code != 0 or not self.output:
            raise JudgekitError(_worker_died(self.path, self.byte_range, code))
        status, value = pickle.loads(self.output)
        if status == "error":
            raise value
        return cast(tuple[Any, PartRead], value)


def _worker_died(path: Path, byte_range: tuple[int, int], code: int | None) -> str:
    """Why a worker gave no result (it was killed, or its interpreter failed), and what to do."""
    how = f"ended with exit code {code}"
    if code is not None and code < 0:
        import signal

        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        how = f"was killed ({name}{', often the system out of memory' if name == 'SIGKILL' else ''})"
    return (
        f"{path}: the worker process reading bytes {byte_range[0]:,}-{byte_range[1]:,} {how} before it "
        "gave its part; nothing was written. Read the file in one process (--processes 1, or "
        "processes = 1 in judgekit.toml), or give the machine more memory"
    )


def _answer(task: tuple[Any, ...]) -> bytes:
    """A worker's answer, pickled: ``("ok", (part, PartRead))``, or ``("error", exception)``.

    An error reading the range goes back as raised (a :class:`~judgekit.errors.JudgekitError` arrives in
    the caller as raised here); an error that does not pickle, as its text.
    """
    import pickle

    try:
        result: tuple[str, object] = ("ok", _read_range(*task))
    except Exception as exc:  # every error goes back to the caller, which raises it
        result = ("error", exc)
    try:
        return pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # an error that does not pickle: its text
        return pickle.dumps(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))


def worker_main() -> None:
    """A spawned worker process's body: read the pickled task on stdin, write :func:`_answer` on stdout."""
    import pickle
    import sys

    task = pickle.load(sys.stdin.buffer)
    sys.stdout.buffer.write(_answer(task))
    sys.stdout.buffer.flush()
