"""What kind of file a path is, and the refusal of inputs that are not regular files.

The bottom of ``io/``: :mod:`judgekit.io.documents` (every reader), :mod:`judgekit.io.paths` (input
expansion) and :mod:`judgekit.io.atomic` (every writer) ask the same two questions here, so one rule says
which files judgekit reads and writes. ``os.stat`` never blocks, so a named pipe or a device is refused at
once instead of waiting for a writer that never comes.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from os import PathLike
from typing import BinaryIO

from judgekit.errors import JudgekitError

__all__ = ["READ_BUFFER_BYTES", "check_input_file", "file_kind", "open_without_waiting", "read_at"]

READ_BUFFER_BYTES = 256 << 10
"""The read buffer of every input file judgekit opens (:func:`open_without_waiting`).

Python's default is the file system's block size, 4 KiB here, and a results or transcript line is
kilobytes long (12 KB in the bundled demo's results): ``readline`` then reads from the file several times
per line. Reading the lines of a 1 GiB results file took 0.65 CPU-s that way and 0.32 with 256 KiB (1 MiB
reads no faster); the buffer is allocated once per open file.
"""


def file_kind(mode: int) -> str | None:
    """What a file of this ``st_mode`` is, in words, or ``None`` for a regular file.

    Args:
        mode: ``os.stat(...).st_mode``.

    Returns:
        ``"a folder"``, ``"a character device"``, ``"a block device"``, ``"a named pipe (FIFO)"``,
        ``"a socket"`` or ``"not a regular file"``; ``None`` for a regular file.
    """
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"  # pragma: no cover - doors, whiteouts


def check_input_file(
    path: str | PathLike[str], *, what: str, option: str = "", refuse_folders: bool = True
) -> None:
    """Refuse an input that exists and is not a regular file (a FIFO, socket, device or folder).

    Reading a named pipe waits for a writer and a device may never end, so judgekit reads only regular
    files (no command takes ``-`` for standard input). ``os.stat`` never blocks, so the refusal comes at
    once. A path that does not exist is left to the caller's own message.

    Args:
        path: The input (a symlink is followed: what it points to is what would be read).
        what: What the file is, for the message (``transcript file``).
        option: The option it was given with (``--transcripts``); empty for none.
        refuse_folders: Refuse a folder too; ``False`` for a caller that says so in its own words.

    Raises:
        JudgekitError: (exit code 2) When ``path`` is not a regular file, naming it and what it is.
    """
    try:
        info = os.stat(path)
    except OSError:
        return
    kind = file_kind(info.st_mode)
    if kind is not None and (refuse_folders or kind != "a folder"):
        given = f"{option} " if option else ""
        raise JudgekitError(
            f"{given}{path}: is {kind}, not a regular file; judgekit reads a {what} only from a regular "
            "file (save the data to a file first)",
            exit_code=2,
        )


def open_without_waiting(path: str | PathLike[str], refuse: Callable[[str], BaseException]) -> BinaryIO:
    """Open ``path`` for reading in binary, refusing at once a file that is not regular.

    The file is opened without waiting (``O_NONBLOCK``: opening a named pipe would otherwise wait for a
    writer forever) and its kind is examined on the open descriptor, so what is checked is what would be
    read; a regular file is then switched back to blocking reads, with a read buffer of
    :data:`READ_BUFFER_BYTES`.

    Args:
        path: The file, as text or a path object (a symlink is followed).
        refuse: Makes the exception to raise for a file that is not regular, from what it is in words
            (:func:`file_kind`: ``"a named pipe (FIFO)"``, ``"a folder"``...); each caller words its own.

    Returns:
        The open file; the caller closes it.

    Raises:
        OSError: When the file cannot be opened (missing, no permission, a socket).
        BaseException: What ``refuse`` makes, when the file is not regular (the descriptor is closed).
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        kind = file_kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise refuse(kind)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=READ_BUFFER_BYTES)
    except BaseException:
        os.close(fd)
        raise


def read_at(handle: BinaryIO, offset: int, length: int) -> bytes:
    r"""``length`` bytes of an open file from ``offset`` (fewer at its end), past the handle's read buffer.

    For a line read again out of the file's order (a report's reasons, the viewer's transcript lines): a
    buffered ``seek`` and ``read`` would fill the whole read buffer (:data:`READ_BUFFER_BYTES`, 256 KiB)
    for each line of a few kilobytes, so the bytes are read where they are (``os.pread``, where the system
    has it), the handle's position and buffer left as they were.

    Args:
        handle: A file open for reading in binary (:func:`open_without_waiting`).
        offset: Where to start, in bytes from the file's start (0 or more).
        length: How many bytes to read (0 or more).

    Returns:
        The bytes: ``length`` of them, or fewer when the file ends first (``b""`` past its end).

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryFile() as handle:
        ...     _ = handle.write(b"first\nsecond\n")
        ...     handle.flush()
        ...     read_at(handle, 6, 6), read_at(handle, 10, 99)
        (b'second', b'nd\n')
    """
    if not hasattr(os, "pread"):  # pragma: no cover - systems without pread (Windows)
        handle.seek(offset)
        return handle.read(length)
    fd = handle.fileno()
    raw = os.pread(fd, length, offset)
    while 0 < len(raw) < length:  # a short read before the end (not seen on regular files): read on
        more = os.pread(fd, length - len(raw), offset + len(raw))
        if not more:
            break
        raw += more
    return raw
