"""Crash-safe writing: whole files replaced atomically, and result lines appended one whole line at a time.

Two guarantees, both for a process that may be killed at any instant (``kill -9``, power loss aside):

* :func:`write_atomic` writes a whole file (a report) to a temporary file in the same folder, flushes it
  to disk and renames it over the target: readers see the old file or the new one, never half of one.
* :class:`LineAppender` appends JSON lines to a results file. Each line is encoded first and handed to the
  kernel in one ``write`` on a file opened with ``O_APPEND`` (a short write is completed in a loop), so a
  kill leaves at most the line being written incomplete; :func:`repair_tail` finds such a truncated last
  line and cuts it off before appending resumes. An exclusive advisory lock (``flock``) refuses a second
  writer on the same file instead of interleaving two runs.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from types import TracebackType

from judgekit.errors import JudgekitError

__all__ = ["LineAppender", "TailRepair", "repair_tail", "write_atomic"]


def write_atomic(path: str | os.PathLike[str], data: bytes | str, *, fsync: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically (temporary file in the same folder, then rename).

    Args:
        path: The file to write; its folder must exist, as text or a path object.
        data: The content; text is encoded as UTF-8.
        fsync: Flush the file and its folder to disk before returning.

    Raises:
        JudgekitError: When the folder does not exist or the file cannot be written.
    """
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise JudgekitError(f"{path}: folder {folder} does not exist; create it or choose another path")
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise JudgekitError(f"{path}: cannot write: {exc.strerror}") from None
    try:
        # mkstemp creates the file owner-only (0600); give it the mode a plain open() would (or keep the
        # mode of the file it replaces), so shared reports stay readable by others.
        os.fchmod(fd, _mode_for(path))
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            if fsync:
                os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise JudgekitError(f"{path}: cannot write: {exc.strerror}") from None
    if fsync:
        _fsync_dir(folder)


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


def _mode_for(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_UMASK


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


class TailRepair:
    """What :func:`repair_tail` found at the end of a line file.

    Attributes:
        dropped: The bytes of the incomplete last line that were cut off (empty when the file was whole).
        line: 1-based number of that line, or ``None`` when nothing was dropped.
    """

    __slots__ = ("dropped", "line")

    def __init__(self, dropped: bytes, line: int | None) -> None:
        self.dropped = dropped
        self.line = line

    def __bool__(self) -> bool:
        return bool(self.dropped)


def repair_tail(path: str | os.PathLike[str]) -> TailRepair:
    """Cut off an incomplete last line (one not ending in a newline) so that appending can resume.

    A line is complete exactly when it ends with a newline: the appender writes the newline in the same
    ``write`` as the line, so a line without one was interrupted. A file that does not exist is left alone.

    Args:
        path: The line file, as text or a path object.

    Returns:
        What was dropped (falsy when the file ended cleanly).

    Raises:
        JudgekitError: When the file cannot be read or truncated.
    """
    path = Path(path)
    try:
        with path.open("r+b") as handle:
            size = handle.seek(0, os.SEEK_END)
            if size == 0:
                return TailRepair(b"", None)
            handle.seek(size - 1)
            if handle.read(1) == b"\n":
                return TailRepair(b"", None)
            # Walk back to the previous newline in blocks.
            pos = size
            block = 65536
            cut = 0
            while pos > 0:
                start = max(0, pos - block)
                handle.seek(start)
                chunk = handle.read(pos - start)
                idx = chunk.rfind(b"\n")
                if idx >= 0:
                    cut = start + idx + 1
                    break
                pos = start
            handle.seek(cut)
            dropped = handle.read(size - cut)
            handle.seek(0)
            line = handle.read(cut).count(b"\n") + 1
            handle.truncate(cut)
            handle.flush()
            os.fsync(handle.fileno())
            return TailRepair(dropped, line)
    except FileNotFoundError:
        return TailRepair(b"", None)
    except OSError as exc:
        raise JudgekitError(f"{path}: cannot repair the last line: {exc.strerror}") from None


class LineAppender:
    """Append whole lines to a file, one ``write`` per line, under an exclusive lock.

    Use as a context manager. Lines are flushed to the operating system as they are written (a killed
    process loses nothing already written); ``fsync=True`` also forces each line to disk.

    Args:
        path: The file; created when absent.
        fsync: Force every line to disk (slower; protects against power loss as well as kills).

    Raises:
        JudgekitError: When the file cannot be opened, or another process holds its lock (two runs must not
            write the same results file).
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False) -> None:
        path = Path(path)
        self.path = path
        self.fsync = fsync
        self._fd: int | None = None
        self.lines_written = 0

    def __enter__(self) -> LineAppender:
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise JudgekitError(f"{self.path}: cannot open for writing: {exc.strerror}") from None
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # pragma: no cover - not POSIX
            pass
        except OSError:
            os.close(fd)
            raise JudgekitError(
                f"{self.path}: another process is writing this file; wait for it to finish or choose "
                "another --out"
            ) from None
        self._fd = fd
        return self

    def write_line(self, line: str | bytes) -> None:
        """Append one line; a trailing newline is added when missing.

        Raises:
            ValueError: When the line contains a newline before its end (it would become two lines).
            JudgekitError: When the write fails (disk full).
        """
        if self._fd is None:
            raise RuntimeError("LineAppender used outside its context")
        payload = line.encode("utf-8") if isinstance(line, str) else line
        if payload.endswith(b"\n"):
            payload = payload[:-1]
        if b"\n" in payload:
            raise ValueError("a line must not contain a newline")
        payload += b"\n"
        view = memoryview(payload)
        try:
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            if self.fsync:
                os.fsync(self._fd)
        except OSError as exc:
            raise JudgekitError(f"{self.path}: cannot append a line: {exc.strerror}") from None
        self.lines_written += 1

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.fsync(self._fd)
            os.close(self._fd)
            self._fd = None
