"""The one place judgekit writes files: redacted, where the user meant, atomically or one line at a time.

Three guarantees, for a process that may be killed at any instant (``kill -9``, power loss aside):

* **Redacted.** Every text payload (and every byte payload that decodes as UTF-8) passes through the
  process-wide redactor (:func:`judgekit.secrets.output_redactor`: secret-named environment variables,
  registered credentials, every known key shape, also inside escaped JSON strings in JS files) before it
  reaches the disk. A genuinely binary format opts out with ``redact=False`` and says why at the call.
  ``tests/io/test_writers.py`` scans the package so that no other module writes files with raw
  primitives.
* **Where the user meant.** An output path that is a symlink is followed and its target replaced (the
  link stays); a folder, device, named pipe or socket is refused (:func:`output_target`), never replaced.
  A folder of the path that does not exist yet is created (:func:`make_parent_folder`), as ``mkdir -p``
  would, so ``--out results/run.jsonl`` works in a fresh clone.
* **Atomic.** :func:`write_atomic` writes a whole file (a report) to a temporary file in the same folder,
  flushes it to disk and renames it over the target: readers see the old file or the new one, never half
  of one. :class:`LineAppender` appends JSON lines to a results file. Each line is encoded first and
  handed to the kernel in one ``write`` on a file opened with ``O_APPEND`` (a short write is completed in
  a loop), so a kill leaves at most the line being written incomplete; :func:`repair_tail` finds such a
  truncated last line and cuts it off before appending resumes. An exclusive advisory lock (``flock``)
  refuses a second writer on the same file instead of interleaving two runs.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType

from judgekit.errors import JudgekitError
from judgekit.io.filekind import file_kind

__all__ = [
    "LineAppender",
    "TailRepair",
    "WriteFailed",
    "append_whole",
    "create_new",
    "fsync_folder",
    "make_parent_folder",
    "move_file",
    "output_target",
    "redacted_bytes",
    "remove_made_folders",
    "repair_tail",
    "write_atomic",
    "write_atomic_making_folder",
    "write_atomic_pieces",
    "write_temporary",
]

_DEFAULT_HINT = (
    "give the path of a regular file (to see the output instead, leave the option out where the command "
    "prints it on standard output, and redirect with >)"
)


class WriteFailed(JudgekitError):
    """A file could not be written (disk full, permissions, an I/O error); exit code 2.

    Args:
        path: The file, as the caller gave it.
        reason: What the operating system said (``No space left on device``).

    Attributes:
        path: The file.
        reason: What the operating system said.
    """

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        super().__init__(f"{path}: cannot write: {reason}", exit_code=2)
        self.path = Path(path)
        self.reason = reason


def output_target(path: str | os.PathLike[str], *, hint: str | None = None) -> Path:
    """The regular file that writing ``path`` replaces; refuse a path that must never be replaced.

    A symlink (to a regular file, or to a path that does not exist yet) is followed: its final target is
    what gets written, and the link stays. A folder, device, named pipe or socket is refused, so that
    ``-o /dev/full`` or ``-o /dev/stdout`` never replaces a device node with a regular file. Call it
    before doing expensive work to fail early; :func:`write_atomic` calls it again.

    Args:
        path: The output path the user gave.
        hint: What to do instead, for the error message (a command-specific alternative); a generic
            sentence when ``None``.

    Returns:
        The path to replace: ``path`` itself, or the final target of a symlink.

    Raises:
        JudgekitError: (exit code 2) When ``path`` is not a regular file or a new one, naming the path and
            what it is, or when it cannot be examined (a symlink loop, a permission).
    """
    path = Path(path)
    try:
        info = os.stat(path)  # follows symlinks
    except (FileNotFoundError, NotADirectoryError):  # a new file (a file in its folder's way: see the write)
        return Path(os.path.realpath(path)) if os.path.islink(path) else path
    except OSError as exc:
        raise JudgekitError(f"{path}: cannot write: {exc.strerror}", exit_code=2) from None
    kind = file_kind(info.st_mode)
    if kind is not None:
        link = f" (a symlink to {os.path.realpath(path)})" if os.path.islink(path) else ""
        raise JudgekitError(
            f"{path}{link}: is {kind}, not a regular file; judgekit writes an output by replacing a regular "
            f"file whole and never writes to {kind}: {hint or _DEFAULT_HINT}",
            exit_code=2,
        )
    return Path(os.path.realpath(path)) if os.path.islink(path) else path


def redacted_bytes(data: bytes | str, *, redact: bool = True) -> bytes:
    """A payload as the bytes to write: text encoded as UTF-8, secrets removed unless ``redact`` is false.

    Bytes that do not decode as UTF-8 are a binary format and are returned unchanged.

    Args:
        data: The payload.
        redact: Pass it through :func:`judgekit.secrets.output_redactor` (text, and bytes that are UTF-8).

    Returns:
        The bytes to write.
    """
    if not redact:
        return data.encode("utf-8") if isinstance(data, str) else bytes(data)
    from judgekit.secrets import output_redactor

    if isinstance(data, str):
        return output_redactor().payload(data).encode("utf-8")
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        return bytes(data)
    cleaned = output_redactor().payload(text)
    return bytes(data) if cleaned == text else cleaned.encode("utf-8")


def write_atomic(
    path: str | os.PathLike[str],
    data: bytes | str | Sequence[bytes],
    *,
    fsync: bool = True,
    redact: bool = True,
    hint: str | None = None,
    what: str | None = None,
) -> None:
    """Replace ``path`` with ``data`` atomically (temporary file in the same folder, then rename).

    The payload is redacted first (see :func:`redacted_bytes`). A symlink is followed and its target
    replaced; a folder, device, named pipe or socket is refused (:func:`output_target`). A folder of the
    path that does not exist yet is created (:func:`make_parent_folder`), and removed again when the write
    fails.

    Args:
        path: The file to write, as text or a path object.
        data: The content: text (encoded as UTF-8), bytes, or a sequence of byte blocks written one after
            the other (a large binary file, without joining the blocks in memory when ``redact`` is false).
        fsync: Flush the file and its folder to disk before returning.
        redact: Remove secrets from the payload. Only a genuinely binary format passes ``False``, with its
            reason stated at the call.
        hint: What to do instead when ``path`` is refused (see :func:`output_target`).
        what: What the file is, for the message when its folder cannot be created (``report``); ``None``
            names the file's path instead.

    Raises:
        JudgekitError: (exit code 2) When the folder cannot be created, the path is not a regular file, or
            the file cannot be written (disk full, permissions).
    """
    given = Path(path)
    target = output_target(given, hint=hint)
    if isinstance(data, bytes | bytearray | memoryview | str):
        blocks: Sequence[bytes] = (
            redacted_bytes(bytes(data) if not isinstance(data, str) else data, redact=redact),
        )
    elif redact:
        blocks = (redacted_bytes(b"".join(data)),)
    else:
        blocks = data
    _replace_with(given, target, blocks, fsync=fsync, what=what)


def write_atomic_pieces(
    path: str | os.PathLike[str],
    pieces: Iterable[str],
    *,
    fsync: bool = True,
    hint: str | None = None,
    what: str | None = None,
) -> None:
    """:func:`write_atomic` for a text made in pieces: each redacted and written as it comes, never joined.

    The file is the pieces' text with secrets removed, as :func:`write_atomic` of the joined text would
    write it, provided no secret straddles two pieces: the caller cuts only where none can (between two
    entries of a JSON list, :func:`judgekit.reports.run_json.run_json_pieces`). Each piece passes once
    through :func:`redacted_bytes`. The target is replaced only after the last piece was written; when
    making a piece fails (any exception), the temporary file is removed and the exception propagates.

    Args:
        path: The file to write, as text or a path object.
        pieces: The text in order (each encoded as UTF-8); consumed once.
        fsync: Flush the file and its folder to disk before returning.
        hint: What to do instead when ``path`` is refused (see :func:`output_target`).
        what: What the file is, for the message when its folder cannot be created; ``None`` names the path.

    Raises:
        JudgekitError: (exit code 2) When the folder cannot be created, the path is not a regular file, or
            the file cannot be written (disk full, permissions).
    """
    given = Path(path)
    target = output_target(given, hint=hint)
    _replace_with(given, target, (redacted_bytes(piece) for piece in pieces), fsync=fsync, what=what)


def _replace_with(
    given: Path, target: Path, blocks: Iterable[bytes], *, fsync: bool, what: str | None
) -> None:
    """Write ``blocks`` to a temporary file beside ``target`` and rename it over ``target`` (see above)."""
    folder = target.parent if str(target.parent) else Path(".")
    made = make_parent_folder(target, what=what)
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        remove_made_folders(made)
        raise WriteFailed(given, exc.strerror or str(exc)) from None
    try:
        # mkstemp creates the file owner-only (0600); give it the mode a plain open() would (or keep the
        # mode of the file it replaces), so shared reports stay readable by others.
        os.fchmod(fd, _mode_for(target))
        with os.fdopen(fd, "wb") as handle:
            for block in blocks:
                handle.write(block)
            handle.flush()
            if fsync:
                os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        remove_made_folders(made)
        raise WriteFailed(given, exc.strerror or str(exc)) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        remove_made_folders(made)
        raise
    if fsync:
        fsync_folder(folder)


def write_atomic_making_folder(path: str | os.PathLike[str], data: bytes | str, *, what: str) -> Path:
    """:func:`write_atomic` for a named kind of file, returning its path (a record, a report page).

    Args:
        path: The file to write, as text or a path object; missing folders are created.
        data: The content (text is encoded as UTF-8; secrets are removed, see :func:`redacted_bytes`).
        what: What the file is, for the message (``calibration record``, ``bias report``).

    Returns:
        ``path`` as a path object.

    Raises:
        JudgekitError: (exit code 2) When the folder cannot be created (``FOLDER: cannot create the folder
            for the WHAT: reason``), or the file cannot be written (:class:`WriteFailed`).
    """
    write_atomic(path, data, what=what)
    return Path(path)


def make_parent_folder(path: str | os.PathLike[str], *, what: str | None = None) -> tuple[Path, ...]:
    """Create the folder of ``path`` and its missing parents, as ``mkdir -p`` does, for an output file.

    Every output path a user gives may name a folder that does not exist yet (``--out results/x.jsonl``
    in a fresh clone): the writers create it rather than refuse.

    Args:
        path: The file about to be written, as text or a path object.
        what: What the file is, for the message (``report``); ``None`` names ``path`` instead.

    Returns:
        The folders created, outermost first (empty when the folder existed), for
        :func:`remove_made_folders` when the write then fails.

    Raises:
        JudgekitError: (exit code 2) When a folder cannot be created (a file stands in the way, no
            permission): ``FOLDER: cannot create the folder for WHAT: reason; what to do``.
    """
    folder = Path(path).parent
    missing: list[Path] = []
    probe = folder
    while str(probe) not in ("", ".") and not probe.is_dir() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    if not missing:
        return ()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        named = f"the {what}" if what else str(path)
        raise JudgekitError(
            f"{folder}: cannot create the folder for {named}: {exc.strerror or exc}; give an output path in "
            "a folder that exists or can be created",
            exit_code=2,
        ) from None
    return tuple(reversed(missing))


def remove_made_folders(made: Sequence[Path]) -> None:
    """Remove the folders :func:`make_parent_folder` created, innermost first, where they are still empty.

    Best effort: a folder something else has written into meanwhile stays.

    Args:
        made: The folders created, outermost first.
    """
    for folder in reversed(made):
        with contextlib.suppress(OSError):
            folder.rmdir()


def create_new(
    path: str | os.PathLike[str], data: bytes | str, *, mode: int = 0o600, redact: bool = True
) -> None:
    """Create ``path`` with ``data``; never overwrite (a key file, which must not replace another).

    The file is created with ``O_EXCL`` and ``mode`` (owner-only by default), written, flushed to disk; a
    failed write removes it.

    Args:
        path: The new file; its folder is created when missing (:func:`make_parent_folder`).
        data: The content (text encoded as UTF-8).
        mode: The new file's permission bits (before the umask).
        redact: Remove secrets from the payload (see :func:`redacted_bytes`); a file that IS a secret the
            user asked for passes ``False`` with its reason stated at the call.

    Raises:
        FileExistsError: When ``path`` exists (a symlink counts, even a dangling one); the caller says
            what to do.
        JudgekitError: (exit code 2) When it cannot be created or written.
    """
    payload = redacted_bytes(data, redact=redact)
    made = make_parent_folder(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
    except FileExistsError:
        raise
    except OSError as exc:
        remove_made_folders(made)
        raise JudgekitError(f"{path}: cannot create: {exc.strerror}", exit_code=2) from None
    try:
        _write_all(fd, payload)
        os.fsync(fd)
    except OSError as exc:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise WriteFailed(path, exc.strerror or str(exc)) from None
    os.close(fd)


def write_temporary(data: bytes | str, *, prefix: str, suffix: str) -> Path:
    """Write ``data``, redacted, to a new file in the system's temporary folder and return its path.

    Args:
        data: The content (text encoded as UTF-8).
        prefix: The start of the file's name (``judgekit-error-``).
        suffix: The end of the file's name (``.txt``).

    Returns:
        The new file (owner-only: it may hold local paths and data from a failed run).

    Raises:
        OSError: When the temporary folder cannot be written (the caller reports it its own way).
    """
    payload = redacted_bytes(data)
    fd, name = tempfile.mkstemp(prefix=prefix, suffix=suffix)
    try:
        _write_all(fd, payload)
    finally:
        os.close(fd)
    return Path(name)


def append_whole(path: str | os.PathLike[str], data: bytes | str, *, redact: bool = True) -> None:
    """Append ``data`` to ``path`` in one ``write`` on an ``O_APPEND`` file (made with its folder if absent).

    For a caller that holds its own lock (the judge cassette): concurrent appenders never interleave
    within one call's data. The payload is redacted first (see :func:`redacted_bytes`); a path that exists
    and is not a regular file is refused.

    Args:
        path: The file.
        data: What to append (text encoded as UTF-8).
        redact: Remove secrets from the payload.

    Raises:
        JudgekitError: (exit code 2) When the file is not a regular file or cannot be written.
    """
    _refuse_special(Path(path))
    make_parent_folder(path)
    payload = redacted_bytes(data, redact=redact)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as exc:
        raise JudgekitError(f"{path}: cannot open for writing: {exc.strerror}", exit_code=2) from None
    try:
        _write_all(fd, payload)
    except OSError as exc:
        raise JudgekitError(f"{path}: cannot append: {exc.strerror}", exit_code=2) from None
    finally:
        os.close(fd)


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _refuse_special(path: Path) -> None:
    """Refuse an existing path that is not a regular file (opening a FIFO for writing would block)."""
    try:
        info = os.stat(path)
    except OSError:
        return  # absent (created by the open) or unreadable (the open says why)
    kind = file_kind(info.st_mode)
    if kind is not None:
        raise JudgekitError(
            f"{path}: is {kind}, not a regular file; judgekit appends only to regular files: give the path "
            "of a regular file",
            exit_code=2,
        )


def move_file(
    source: str | os.PathLike[str], destination: str | os.PathLike[str], *, overwrite: bool = False
) -> None:
    """Rename ``source`` to ``destination`` in one step, then flush both folders to disk.

    The rename is atomic (same file system): a reader, or a process killed at any instant, sees the file
    at one name or the other, never both and never half of it.

    Args:
        source: The file to move, as text or a path object.
        destination: Its new path; its folder must exist.
        overwrite: Replace a file already at ``destination`` (``False``: refuse it).

    Raises:
        FileExistsError: When ``destination`` exists and ``overwrite`` is false (nothing is moved).
        OSError: When the system refuses the rename (nothing is moved); callers turn it into a message.
    """
    source, destination = Path(source), Path(destination)
    if not overwrite and os.path.lexists(destination):
        raise FileExistsError(errno.EEXIST, "it exists already", str(destination))
    os.replace(source, destination)
    fsync_folder(destination.parent)
    if source.parent != destination.parent:
        fsync_folder(source.parent)


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


def fsync_folder(folder: str | os.PathLike[str]) -> None:
    """Flush a folder's entries (a file created, renamed or removed in it) to disk.

    Best effort: a folder that cannot be opened or synced (a file system without directory fsync, a
    folder already gone) is passed over silently, since the data files themselves were already synced.

    Args:
        folder: The folder whose entries to flush.
    """
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
    _refuse_special(path)  # opening a named pipe would wait for a reader forever
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
        path: The file; created when absent (with its folder, :func:`make_parent_folder`).
        fsync: Force every line to disk (slower; protects against power loss as well as kills).
        redact: Pass every line through the process-wide redactor (see :func:`redacted_bytes`).

    Raises:
        JudgekitError: When the file is not a regular file, cannot be opened, or another process holds its
            lock (two runs must not write the same results file).
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False, redact: bool = True) -> None:
        path = Path(path)
        self.path = path
        self.fsync = fsync
        self.redact = redact
        self._fd: int | None = None
        self.lines_written = 0

    def __enter__(self) -> LineAppender:
        _refuse_special(self.path)
        make_parent_folder(self.path)
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
        payload = redacted_bytes(line, redact=self.redact)
        if payload.endswith(b"\n"):
            payload = payload[:-1]
        if b"\n" in payload:
            raise ValueError("a line must not contain a newline")
        payload += b"\n"
        try:
            _write_all(self._fd, payload)
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
