"""Whole output folders written all at once: staged, then swapped in, or left exactly as they were.

A command that writes a folder of many files (``judgekit view --out``) must not leave half a folder when
it fails midway (a full disk, a file-size limit, an error in the input found late, Ctrl-C). A
:class:`StagedFolder` writes every file into a staging folder beside the target (``.NAME.judgekit-
staging-PID-XXXX`` in the same parent, so the swap is a rename on one file system) and, only when the
whole body of the ``with`` block has succeeded, swaps it in:

* the previous folder (when there is one) is renamed aside, the staging folder renamed to the target, and
  the previous folder removed; if the second rename fails the previous folder is renamed back;
* on any failure the staging folder is removed and the target is untouched: the same files, the same
  bytes. An ``OSError`` (``ENOSPC``, ``EFBIG``, ``EACCES``...) becomes a :class:`~judgekit.errors.
  JudgekitError` (exit code 2) naming the folder and the operating system's error.

Only a folder the same command wrote (it holds the command's marker file), an empty folder or a new path
is replaced: anything else is refused before anything is written (:func:`check_folder`). A symlink to a
folder is written through (the folder it points at is replaced, the link kept). A target that is a mount
point, or whose parent cannot be written, is staged inside itself instead and swapped file by file (each
move a rename, undone when one fails).

Every file goes through :func:`judgekit.io.atomic.write_atomic`, the one writer every output shares.
A process killed between the two renames leaves the previous folder beside the target
(``.NAME.judgekit-previous-PID-XXXX``); the next run removes such leftovers of processes no longer alive.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from types import TracebackType

from judgekit.errors import JudgekitError
from judgekit.io.atomic import WriteFailed, fsync_folder, write_atomic
from judgekit.io.filekind import file_kind

__all__ = ["StagedFolder", "check_folder"]

_STAGING = "judgekit-staging"
_PREVIOUS = "judgekit-previous"


def _target(out: str | os.PathLike[str]) -> Path:
    """The folder to replace: ``out`` made absolute, a symlink followed to the folder it names."""
    path = Path(os.path.abspath(out))
    if path.is_symlink() and path.is_dir():
        return path.resolve()
    return path


def check_folder(
    out: str | os.PathLike[str], *, marker: str, command: str, kind: str = "an output", option: str = "--out"
) -> Path:
    """Refuse an output folder that holds anything but an earlier output of ``command``.

    Args:
        out: The folder to write (it may not exist yet).
        marker: The name of the file that marks a folder ``command`` wrote.
        command: The command, for messages (``judgekit view``).
        kind: What the command writes, for messages (``a viewer``).
        option: The option that named the folder, for messages.

    Returns:
        The folder as given, as a path.

    Raises:
        JudgekitError: (exit code 2) When it is a file or another non-folder, a symlink to nothing, or a
            non-empty folder without ``marker``: nothing is written.
    """
    path = Path(out)
    if path.is_symlink() and not path.exists():
        raise JudgekitError(
            f"{option} {path}: is a symlink to nothing ({os.readlink(path)}); name a folder for the output",
            exit_code=2,
        )
    if path.exists() and not path.is_dir():
        raise JudgekitError(
            f"{option} {path}: is {file_kind(path.stat().st_mode) or 'a file'}, not a folder; name a new "
            "folder for the output",
            exit_code=2,
        )
    if path.is_dir():
        try:
            has_entries = any(path.iterdir())
        except OSError as exc:
            raise JudgekitError(
                f"{option} {path}: cannot read the folder: {exc.strerror}", exit_code=2
            ) from None
        if has_entries and not (path / marker).is_file():
            raise JudgekitError(
                f"{option} {path}: the folder is not empty and is not {kind} {command} wrote; nothing was "
                "written, so nothing already there is lost: name a new or empty folder",
                exit_code=2,
            )
    return path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _default_mode() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o777 & ~mask


class StagedFolder:
    """Write a whole folder, swapped in only when every file was written (see the module docstring).

    Use as a context manager; write each file with :meth:`write`::

        with StagedFolder(out, marker=".judgekit-viewer", marker_text="...", command="judgekit view") as f:
            f.write("index.html", html)

    Args:
        out: The folder to write or replace (checked with :func:`check_folder` on entering).
        marker: The file that marks the folder as written by ``command`` (written first, so a leftover
            staging folder is recognisably ours too).
        marker_text: The marker file's text.
        command: The command, for messages.
        kind: What the command writes, for messages.
        option: The option that named the folder, for messages.

    Attributes:
        out: The folder as given.
        target: The folder replaced (absolute; a symlink's folder).
        staging: The staging folder while inside the ``with`` block.
        bytes: Total bytes of the files written so far.
        files: Every file written, relative to the folder, in order.
    """

    def __init__(
        self,
        out: str | os.PathLike[str],
        *,
        marker: str,
        marker_text: str,
        command: str,
        kind: str = "an output",
        option: str = "--out",
    ) -> None:
        """Prepare to write ``out`` (nothing is touched before entering)."""
        self.out = Path(out)
        self.target = _target(out)
        self.marker = marker
        self.marker_text = marker_text
        self.command = command
        self.kind = kind
        self.option = option
        self.staging: Path | None = None
        self.bytes = 0
        self.files: list[str] = []
        self._inside = False
        self._created: list[Path] = []

    # ----------------------------------------------------------------- entering

    def __enter__(self) -> StagedFolder:
        check_folder(self.out, marker=self.marker, command=self.command, kind=self.kind, option=self.option)
        target = self.target
        parent = target.parent
        try:
            _make_parents(parent, self._created)
            self._inside = target.is_dir() and (
                os.path.ismount(target) or not os.access(parent, os.W_OK | os.X_OK)
            )
            home = target if self._inside else parent
            self._sweep(home)
            staging = Path(tempfile.mkdtemp(dir=home, prefix=self._prefix(_STAGING)))
            self.staging = staging
            mode = (target.stat().st_mode & 0o7777) if target.is_dir() else _default_mode()
            os.chmod(staging, mode)
        except OSError as exc:
            self._discard()
            raise self._failure(exc.strerror or str(exc)) from None
        self.write(self.marker, self.marker_text)
        return self

    def _prefix(self, kind: str) -> str:
        name = "" if self._inside else f".{self.target.name}"
        return f"{name}.{kind}-{os.getpid()}-"

    def _sweep(self, home: Path) -> None:
        """Remove what an earlier, killed run left beside the target (its processes no longer alive)."""
        name = "" if self._inside else f".{self.target.name}"
        for kind in (_STAGING, _PREVIOUS):
            for entry in home.glob(f"{name}.{kind}-*-*"):
                pid_text = entry.name[len(f"{name}.{kind}-") :].split("-", 1)[0]
                if not pid_text.isdigit() or _alive(int(pid_text)) or entry.is_symlink():
                    continue
                if entry.is_dir() and (entry / self.marker).is_file():
                    shutil.rmtree(entry, ignore_errors=True)

    # ----------------------------------------------------------------- writing

    def write(self, relative: str, data: str | bytes) -> int:
        """Write one file of the folder (through :func:`~judgekit.io.atomic.write_atomic`).

        Args:
            relative: Its path inside the folder, with ``/`` between parts (no ``..``).
            data: Its content (text is UTF-8).

        Returns:
            The bytes written.

        Raises:
            JudgekitError: (exit code 2) When it cannot be written: nothing in the target is changed.
        """
        if self.staging is None:
            raise RuntimeError("StagedFolder.write used outside its with block")
        parts = Path(relative).parts
        if not parts or ".." in parts or Path(relative).is_absolute():
            raise ValueError(f"not a path inside the folder: {relative!r}")
        path = self.staging.joinpath(*parts)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, data, fsync=False)
            size = path.stat().st_size
        except OSError as exc:
            raise self._failure(f"{relative}: {exc.strerror or exc}") from None
        except JudgekitError as exc:
            detail = str(exc).rsplit(": cannot write: ", 1)[-1]
            raise self._failure(f"{relative}: {detail}") from None
        self.files.append(relative)
        self.bytes += size
        return size

    # ----------------------------------------------------------------- leaving

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is not None:
            staging = self.staging
            self._discard()
            if isinstance(exc, OSError):
                raise self._failure(exc.strerror or str(exc)) from None
            if staging is not None and isinstance(exc, JudgekitError):
                raise self._staged_error(exc, staging) from None
            return
        try:
            self._sync()
            if self._inside:
                self._swap_contents()
            else:
                self._swap()
        except OSError as failure:
            self._discard()
            raise self._failure(failure.strerror or str(failure)) from None

    def _sync(self) -> None:
        """Flush every staged file and folder to disk before the swap makes them the output."""
        if self.staging is None:
            return
        for folder, _, names in os.walk(self.staging):
            for name in names:
                fd = os.open(os.path.join(folder, name), os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            fsync_folder(folder)

    def _swap(self) -> None:
        staging, target = self.staging, self.target
        if staging is None:
            return
        if not target.is_dir():
            os.rename(staging, target)
        else:
            previous = Path(tempfile.mkdtemp(dir=target.parent, prefix=self._prefix(_PREVIOUS)))
            os.rename(target, previous / "old")  # the target moved aside (a rename on one file system)
            try:
                os.rename(staging, target)
            except OSError:
                os.rename(previous / "old", target)
                shutil.rmtree(previous, ignore_errors=True)
                raise
            shutil.rmtree(previous, ignore_errors=True)
        self.staging = None
        fsync_folder(target.parent)

    def _swap_contents(self) -> None:
        """Swap file by file inside a target that cannot itself be renamed (a mount point)."""
        staging, target = self.staging, self.target
        if staging is None:
            return
        previous = Path(tempfile.mkdtemp(dir=target, prefix=self._prefix(_PREVIOUS)))
        own = {staging.name, previous.name}
        moved: list[str] = []
        placed: list[str] = []
        try:
            for entry in sorted(target.iterdir()):
                if entry.name not in own:
                    os.rename(entry, previous / entry.name)
                    moved.append(entry.name)
            for entry in sorted(staging.iterdir()):
                os.rename(entry, target / entry.name)
                placed.append(entry.name)
        except OSError:
            with contextlib.suppress(OSError):
                for name in reversed(placed):
                    os.rename(target / name, staging / name)
                for name in reversed(moved):
                    os.rename(previous / name, target / name)
            shutil.rmtree(previous, ignore_errors=True)
            raise
        shutil.rmtree(previous, ignore_errors=True)
        shutil.rmtree(staging, ignore_errors=True)
        self.staging = None
        fsync_folder(target)

    def _discard(self) -> None:
        """Remove the staging folder and any parent folder this created: the target is as it was."""
        if self.staging is not None:
            shutil.rmtree(self.staging, ignore_errors=True)
            self.staging = None
        for folder in reversed(self._created):
            with contextlib.suppress(OSError):
                folder.rmdir()
        self._created = []

    def _staged_error(self, exc: JudgekitError, staging: Path) -> JudgekitError:
        """The error a write inside the block raised, said of the output folder, never the staging folder.

        A failed write (:class:`~judgekit.io.atomic.WriteFailed`) under the staging folder becomes this
        folder's failure (naming the file inside it and the operating system's reason); any other error
        that names a staged path names the same path in the output folder instead, with its exit code.
        """
        try:
            relative = exc.path.relative_to(staging) if isinstance(exc, WriteFailed) else None
        except ValueError:
            relative = None
        if isinstance(exc, WriteFailed) and relative is not None:
            return self._failure(f"{relative.as_posix()}: {exc.reason}")
        message = str(exc).replace(str(staging), str(self.out))
        return exc if message == str(exc) else JudgekitError(message, exit_code=exc.exit_code)

    def _failure(self, detail: str) -> JudgekitError:
        return JudgekitError(
            f"{self.option} {self.out}: cannot write the folder: {detail}; nothing in {self.out} was "
            "changed (the partial output was removed): free space or fix the cause, then run again",
            exit_code=2,
        )


def _make_parents(parent: Path, created: list[Path]) -> None:
    """Create ``parent`` and its missing ancestors, outermost first, adding each to ``created``."""
    missing: list[Path] = []
    folder = parent
    while not folder.exists():
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    for folder in reversed(missing):
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        created.append(folder)
