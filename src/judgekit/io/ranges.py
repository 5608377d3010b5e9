"""Byte ranges of a line file, cut at line boundaries, so that several processes can read one file.

A file of lines is cut into ``[start, end)`` ranges whose ends are line starts: every line lies wholly in
one range, and reading the ranges in order gives exactly the lines of one pass. A reader of a range
knows the number of its first line by counting the newlines before it (:func:`count_newlines`), so the
line numbers it reports are those of one pass over the whole file.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
from typing import BinaryIO

__all__ = [
    "CHUNK_BYTES",
    "LINE_START_CHUNK",
    "RangeReader",
    "count_newlines",
    "line_ranges",
    "next_line_start",
    "start_method",
]

CHUNK_BYTES = 4 << 20
"""Bytes read at a time when counting newlines (memory stays this flat)."""


LINE_START_CHUNK = 1 << 16
"""Bytes read at a time when looking for the next line start (a line is found in the first read unless it
is longer)."""


def next_line_start(handle: BinaryIO, offset: int, size: int | None = None) -> int:
    r"""The first line start at or after ``offset``: where the reader of a range beginning there starts.

    Offset 0 is a line start; any other offset is one when the byte before it is a newline. The one rule
    for every range reader (the reports' byte ranges, the contamination scan's), so two ranges that meet
    at a cut agree on which lines each owns.

    Args:
        handle: The file, open in binary (its position is moved).
        offset: Where to start looking (<= 0: the file's start).
        size: The file's size in bytes, or ``None`` to read up to the end of the file.

    Returns:
        The line start; ``size`` (the file's end) when no line starts at ``offset`` or later.

    Examples:
        >>> import io
        >>> data = io.BytesIO(b"ab\ncd\nef")
        >>> [next_line_start(data, n) for n in range(10)]
        [0, 3, 3, 3, 6, 6, 6, 8, 8, 8]
    """
    if offset <= 0:
        return 0
    if size is None:
        size = handle.seek(0, os.SEEK_END)
    handle.seek(offset - 1)
    position = offset - 1
    while position < size:
        chunk = handle.read(min(LINE_START_CHUNK, size - position))
        if not chunk:
            break
        found = chunk.find(b"\n")
        if found >= 0:
            return position + found + 1
        position += len(chunk)
    return size


def line_ranges(handle: BinaryIO, size: int, parts: int, *, first_extra: int = 0) -> list[tuple[int, int]]:
    """Cut the first ``size`` bytes of a file into at most ``parts`` ranges of whole lines, in file order.

    Each cut is moved forward from its share's end to the next line start, so the ranges hold about
    equal bytes (the first ``first_extra`` more); a range that would be empty (one line longer than a
    share) is left out.

    Args:
        handle: The file, open in binary (it is read from, and its position moved).
        size: The file's size in bytes (>= 0).
        parts: How many ranges to aim for (>= 1).
        first_extra: Bytes the first range gets beyond an equal share (>= 0; at most half a share is
            used), for a first reader that starts earlier than the others.

    Returns:
        ``[(start, end), ...]``, non-empty, adjacent and covering ``[0, size)``; ``[(0, 0)]`` for an
        empty file.
    """
    parts = max(1, parts)
    extra = min(max(first_extra, 0), size // parts // 2) if parts > 1 else 0
    cuts = [0]
    for i in range(1, parts):
        cut = next_line_start(handle, extra + (size - extra) * i // parts, size)
        if cut > cuts[-1] and cut < size:
            cuts.append(cut)
    cuts.append(size)
    return [(a, b) for a, b in itertools.pairwise(cuts) if b > a] or [(0, 0)]


def count_newlines(handle: BinaryIO, start: int, end: int) -> int:
    """How many newline bytes the file has in ``[start, end)`` (read in chunks of :data:`CHUNK_BYTES`).

    Args:
        handle: The file, open in binary (its position is moved).
        start: First byte (>= 0).
        end: One past the last byte (``end <= start``: none).
    """
    handle.seek(start)
    count = 0
    left = end - start
    buffer = bytearray(min(CHUNK_BYTES, max(left, 0)))
    view = memoryview(buffer)
    find = buffer.find
    while left > 0:
        got = handle.readinto(view[: min(len(buffer), left)])  # type: ignore[attr-defined]
        if not got:
            break
        # Result lines are kilobytes long: jumping from one newline to the next (``find`` of one byte is a
        # memchr) is about three times faster than ``count``, which looks at every byte. A chunk with more
        # than one newline per kilobyte on average is counted whole instead.
        most = got >> _BYTES_PER_FIND_BITS
        found = 0
        at = find(b"\n", 0, got)
        while at >= 0 and found <= most:
            found += 1
            at = find(b"\n", at + 1, got)
        count += found if at < 0 else buffer.count(b"\n", 0, got)
        left -= got
    return count


_BYTES_PER_FIND_BITS = 10
""":func:`count_newlines` finds newlines one by one while they average at least ``2**10`` bytes apart."""


class RangeReader:
    """A binary file seen as its bytes ``[start, end)`` only, for :func:`judgekit.io.documents.iter_lines`.

    ``readline(limit)`` never reads past ``end``; at ``end`` it returns ``b""`` (the end of the range).
    """

    def __init__(self, handle: BinaryIO, start: int, end: int) -> None:
        """View ``handle`` (open in binary) from ``start`` to ``end``; the position is moved to ``start``."""
        handle.seek(start)
        self.handle = handle
        self.position = start
        self.end = end

    def readline(self, limit: int = -1) -> bytes:
        """The next line of the range, at most ``limit`` bytes (``-1``: up to the range's end)."""
        left = self.end - self.position
        if left <= 0:
            return b""
        raw = self.handle.readline(left if limit < 0 else min(limit, left))
        self.position += len(raw)
        return raw


def start_method() -> str:
    """How worker processes are started here: ``fork`` on Linux when this is the only thread, else ``spawn``.

    The one rule for every judgekit worker (the contamination scan's, the reports' byte ranges). A forked
    worker inherits what this process has loaded (judgekit's modules, an index, compiled kernels:
    copy-on-write) and starts in milliseconds; a spawned one is a new interpreter that imports judgekit
    (about 0.55 CPU-s) and receives what it needs. Forking a process in which other threads run could
    copy a lock one of them holds, so such a process spawns.
    """
    if sys.platform == "linux" and threading.active_count() == 1:
        return "fork"
    return "spawn"
