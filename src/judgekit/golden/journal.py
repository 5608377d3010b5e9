"""A journal that makes ``candidates promote`` and ``retire`` all or nothing under ``kill -9``.

Promotion moves candidate files into the set; retirement replaces case files with edited copies. Each is a
series of renames, and a process killed between two of them would leave the set half edited. So, once
every check has passed and before the first rename, the command writes the whole plan to
:data:`JOURNAL_NAME` at the set's root (atomically, flushed to disk): each rename's source and destination
(relative to the root), the SHA-256 of the file it moves, the SHA-256 of the file it replaces (retire) and
the cases it concerns. Then it renames, one file at a time, and deletes the journal. Retirement first
writes the edited copies into :data:`STAGING_DIR` (a folder the case walker skips), so every step after the
journal is a rename.

A journal found at the root means an edit was interrupted after all its checks passed. The next run of
the same command **finishes it** rather than rolling it back: the user asked for the whole edit, every
step was validated before the journal was written, and finishing needs only renames of files already on
disk. Each rename is in one of three states, told apart by which of its files exists:

* done: the source is gone and the destination is there;
* to do: the source is there, unchanged (same SHA-256), and the destination is absent (promote) or still
  the file the rename was planned to replace (retire);
* a conflict (a file edited, removed or added since): nothing is done, and the problem names the file and
  what to do.

A failure the running command sees itself (a permission error, a full disk) is different: it is still
alive, so it undoes the renames already made and deletes the journal (see :mod:`.promote`, :mod:`.retire`).

``judgekit cases check`` reports a pending journal as a located problem naming it and the command that
finishes it (:func:`pending_problems`); the commands that write candidates into the set refuse while one
is pending (:func:`refuse_if_pending`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import Field, ValidationError

from judgekit.cases import confine_path
from judgekit.caseset import CASE_FILE_SUFFIXES, MANIFEST_NAME
from judgekit.errors import JudgekitError, Problem, ProblemsError
from judgekit.io.atomic import move_file, write_atomic
from judgekit.verdict import FrozenModel

__all__ = [
    "JOURNAL_MAX_BYTES",
    "JOURNAL_NAME",
    "STAGING_DIR",
    "Journal",
    "JournalCase",
    "JournalMove",
    "MoveState",
    "begin",
    "clear_staging",
    "digest",
    "end",
    "finish_command",
    "finish_pending",
    "journal_path",
    "move_states",
    "pending_problems",
    "read_journal",
    "refuse_if_pending",
    "relative",
]

JOURNAL_NAME = ".judgekit-journal"
"""The journal's file name, at the set's root (no case-file ending: the case walker never reads it)."""

STAGING_DIR = ".judgekit-staging"
"""Folder at the set's root where retirement writes its edited copies before renaming them into place."""

JOURNAL_MAX_BYTES = 16 * 1024 * 1024
"""A journal larger than this (16 MiB) is refused unread: judgekit's journals hold paths, digests and
case ids, a few hundred bytes per file."""

Operation = Literal["promote", "retire"]
"""The edits a journal records."""

_COMMANDS: dict[str, str] = {"promote": "judgekit candidates promote", "retire": "judgekit cases retire"}


class JournalCase(FrozenModel):
    """A case a rename concerns, with what the command reports about it when the edit is finished.

    Attributes:
        id: The case's id.
        line: 1-based line of the case in its file (retire), 1 when not recorded.
        moved_from: The case's split before retirement, ``None`` when it had none (retire only).
        reason: The ``retired.reason`` written (retire only; empty for promote).
    """

    id: str
    line: int = Field(default=1, ge=1)
    moved_from: str | None = None
    reason: str = ""


class JournalMove(FrozenModel):
    """One rename of the edit.

    Attributes:
        source: The file moved, relative to the set's root (``/``-separated).
        destination: Where it goes, relative to the set's root: a case file.
        sha256: Hex SHA-256 of the source file's bytes when the journal was written.
        replaces: Hex SHA-256 of the file at ``destination`` the rename replaces (retire); ``None`` when
            the destination must not exist (promote).
        cases: The cases in the moved file that the edit concerns.
    """

    source: str
    destination: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    replaces: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    cases: tuple[JournalCase, ...] = ()


class Journal(FrozenModel):
    """A pending edit of a golden set's files.

    Attributes:
        journal: Marks the file as judgekit's (always ``judgekit set edit``).
        version: The journal format (1).
        operation: ``promote`` or ``retire``.
        moves: The renames, in the order they are made (at least one).
    """

    journal: Literal["judgekit set edit"] = "judgekit set edit"
    version: Literal[1] = 1
    operation: Operation
    moves: tuple[JournalMove, ...] = Field(min_length=1)

    @property
    def case_ids(self) -> list[str]:
        """Every case the edit concerns, in the order of its renames."""
        return [case.id for move in self.moves for case in move.cases]


@dataclass(frozen=True)
class MoveState:
    """Where one rename of a pending journal stands.

    Attributes:
        move: The rename as journaled.
        source: Its source, resolved against the set's root.
        destination: Its destination, resolved against the set's root.
        done: True when the source is gone and the destination is there.
        conflict: Why the rename can neither be counted done nor made now (a file changed, removed or
            added since the journal was written); ``None`` when it can.
    """

    move: JournalMove
    source: Path
    destination: Path
    done: bool
    conflict: str | None = None


def journal_path(root: str | os.PathLike[str]) -> Path:
    """The journal file of the set whose root is ``root`` (it need not exist)."""
    return Path(root) / JOURNAL_NAME


def digest(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of a file's bytes.

    Raises:
        OSError: When the file cannot be read.
    """
    sha = hashlib.sha256()
    from judgekit.io.documents import open_regular

    with open_regular(path, "golden file") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def relative(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> str:
    """``path`` (a file inside the set) relative to the set's ``root``, ``/``-separated, for the journal.

    The file's folder is resolved (symbolic links followed) and its name kept, so a candidate that is a
    link is moved as the link, as before.

    Raises:
        JudgekitError: When the file is not inside the root.
    """
    root, path = Path(root), Path(path)
    folder = Path(os.path.abspath(path.parent)).resolve()
    try:
        inside = folder.relative_to(Path(os.path.abspath(root)).resolve())
    except ValueError:
        raise JudgekitError(f"{path}: is not inside the set's root {root}; nothing was changed") from None
    return (PurePosixPath(*inside.parts) / path.name).as_posix()


def _locate(root: Path, written: str, *, case_file: bool) -> Path:
    """A journaled path resolved inside ``root``.

    Raises:
        ValueError: When it is absolute, climbs with ``..``, leaves the root, names the manifest or the
            journal, or (``case_file``) does not end like a case file.
    """
    pure = PurePosixPath(written)
    if not written or pure.is_absolute() or any(part in {"..", ""} for part in pure.parts):
        raise ValueError(f"'{written}' is not a path inside the set")
    if pure.name in {MANIFEST_NAME, JOURNAL_NAME} or (
        case_file and pure.suffix.lower() not in CASE_FILE_SUFFIXES
    ):
        raise ValueError(f"'{written}' is not a case file")
    folder = confine_path(str(pure.parent), root)
    return folder / pure.name


def read_journal(root: str | os.PathLike[str]) -> Journal | None:
    """The pending journal of the set at ``root``, or ``None`` when there is none.

    Raises:
        JudgekitError: (exit code 2) When the file is not a journal this judgekit wrote: unreadable, too
            large, not valid, or naming a path outside the set or a file that is not a case file.
    """
    root = Path(root)
    path = journal_path(root)
    if not os.path.lexists(path):
        return None

    def refuse(why: str) -> JudgekitError:
        return JudgekitError(
            f"{path}: cannot be read as a judgekit journal ({why}); it is not one judgekit wrote, or it was "
            f"edited. Nothing was changed: check the set with git status, put right what an interrupted "
            f"promote or retire left, then delete {path}",
            exit_code=2,
        )

    try:
        if not path.is_file():
            raise refuse("it is not a regular file")
        if path.stat().st_size > JOURNAL_MAX_BYTES:
            raise refuse(f"it is larger than {JOURNAL_MAX_BYTES:,} bytes")
        from judgekit.io.documents import read_regular

        raw = read_regular(path, "golden journal")
    except OSError as exc:
        raise refuse(exc.strerror or str(exc)) from None
    try:
        journal = Journal.model_validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the file"
        raise refuse(f"{where}: {first['msg']}") from None
    for i, move in enumerate(journal.moves):
        try:
            _locate(root, move.source, case_file=journal.operation == "promote")
            _locate(root, move.destination, case_file=True)
        except ValueError as exc:
            raise refuse(f"moves.{i}: {exc}") from None
    return journal


def _state(root: Path, move: JournalMove, operation: Operation) -> MoveState:
    source = _locate(root, move.source, case_file=operation == "promote")
    destination = _locate(root, move.destination, case_file=True)

    def state(done: bool, conflict: str | None = None) -> MoveState:
        return MoveState(move, source, destination, done, conflict)

    if not os.path.lexists(source):
        if os.path.lexists(destination):
            return state(True)
        return state(False, f"neither {source} nor {destination} exists: a file was removed since")
    try:
        if digest(source) != move.sha256:
            return state(False, f"{source} changed since the interrupted command checked it")
        if move.replaces is None:
            if os.path.lexists(destination):
                return state(False, f"{destination} exists now (it appeared since), so {source} cannot move")
        elif not os.path.lexists(destination):
            return state(False, f"{destination} was removed since")
        elif digest(destination) != move.replaces:
            return state(False, f"{destination} changed since the interrupted command read it")
    except OSError as exc:
        return state(False, f"cannot read {exc.filename or source} ({exc.strerror or exc})")
    return state(False)


def move_states(root: str | os.PathLike[str], journal: Journal) -> list[MoveState]:
    """Where each rename of ``journal`` stands, in journal order (see :class:`MoveState`)."""
    states: list[MoveState] = []
    for move in journal.moves:
        try:
            states.append(_state(Path(root), move, journal.operation))
        except ValueError as exc:  # a folder on the way became a link leading out of the set since
            where = Path(root) / PurePosixPath(move.destination)
            states.append(MoveState(move, Path(root) / PurePosixPath(move.source), where, False, str(exc)))
    return states


def finish_command(root: str | os.PathLike[str], journal: Journal) -> str:
    """The command line that finishes ``journal`` (promote names its ids; retire needs its results)."""
    if journal.operation == "promote":
        return f"judgekit candidates promote --set {root} {' '.join(journal.case_ids)}"
    return f"judgekit cases retire RESULTS... --set {root} (the same results files)"


def _progress(journal: Journal, states: Sequence[MoveState]) -> str:
    done = [c.id for s in states if s.done for c in s.move.cases]
    left = [c.id for s in states if not s.done for c in s.move.cases]
    word, waiting = (
        ("promoted", "still candidates") if journal.operation == "promote" else ("retired", "not yet")
    )
    parts = [f"{word}: {', '.join(done)}" if done else f"none {word}"]
    if left:
        parts.append(f"{waiting}: {', '.join(left)}")
    count = sum(s.done for s in states)
    unit = "moves" if journal.operation == "promote" else "file edits"
    return f"{count} of {len(states)} {unit} done ({'; '.join(parts)})"


def pending_problems(root: str | os.PathLike[str]) -> list[Problem]:
    """What ``judgekit cases check`` reports about an interrupted edit of the set at ``root``.

    Returns:
        Empty when no journal is pending. Otherwise one problem located at the journal saying what was
        interrupted, how far it got and the command that finishes it, then one per rename that cannot be
        finished (what changed); or a single problem when the journal cannot be read.
    """
    root = Path(root)
    path = journal_path(root)
    try:
        journal = read_journal(root)
    except JudgekitError as exc:
        return [Problem(path, None, "", exc.message.removeprefix(f"{path}: "))]
    if journal is None:
        return []
    states = move_states(root, journal)
    command = _COMMANDS[journal.operation]
    problems = [
        Problem(
            path,
            None,
            "",
            f"an interrupted '{command}' left the set half done: {_progress(journal, states)}; run "
            f"{finish_command(root, journal)} to finish it (it finishes this edit before anything else)",
        )
    ]
    problems.extend(_conflict_problems(path, journal, states))
    return problems


def _conflict_problems(path: Path, journal: Journal, states: Sequence[MoveState]) -> list[Problem]:
    command = _COMMANDS[journal.operation]
    return [
        Problem(
            path,
            None,
            "",
            f"cannot finish the interrupted '{command}': {s.conflict}. Put that file back as it was and "
            "rerun; or, to give the edit up, restore the set with git (git status shows what it changed) "
            f"and delete {path}",
        )
        for s in states
        if s.conflict is not None
    ]


def refuse_if_pending(root: str | os.PathLike[str], doing: str) -> None:
    """Refuse to write into the set at ``root`` while an interrupted promote or retire is pending.

    Args:
        root: The set's root folder.
        doing: What the caller was about to do, for the message (``write candidates``).

    Raises:
        JudgekitError: (exit code 2) When a journal is there; the message names it and what to run.
    """
    path = journal_path(root)
    if not os.path.lexists(path):
        return
    try:
        journal = read_journal(root)
    except JudgekitError as exc:
        raise JudgekitError(f"cannot {doing}: {exc.message}", exit_code=2) from None
    if journal is not None:
        raise JudgekitError(
            f"{path}: an interrupted '{_COMMANDS[journal.operation]}' is not finished; cannot {doing} until "
            f"it is: run {finish_command(root, journal)}",
            exit_code=2,
        )


def begin(root: str | os.PathLike[str], journal: Journal) -> None:
    """Write ``journal`` at the set's root, before the first rename (refused when one is pending).

    Raises:
        JudgekitError: When a journal is already there (another edit was interrupted, or is running), or
            the journal cannot be written (nothing was changed).
    """
    root = Path(root)
    refuse_if_pending(root, f"start '{_COMMANDS[journal.operation]}'")
    for stale in root.glob(f".{JOURNAL_NAME}.*.tmp"):  # a run killed while writing its journal left it
        with contextlib.suppress(OSError):
            stale.unlink()
    # a journal is paths, digests and case ids that were read from the set: nothing to redact, and a
    # redacted id would not match its case
    write_atomic(journal_path(root), journal.model_dump_json(indent=1) + "\n", redact=False)


def end(root: str | os.PathLike[str]) -> None:
    """Delete the empty staging folder, then the journal, once every rename is made (or undone).

    The journal goes last: a kill before it leaves a journal whose renames are all done, which the next
    run finishes by deleting what is left.
    """
    root = Path(root)
    staging = root / STAGING_DIR
    if staging.is_dir():
        with contextlib.suppress(OSError):
            staging.rmdir()
    with contextlib.suppress(FileNotFoundError):
        journal_path(root).unlink()


def clear_staging(root: str | os.PathLike[str]) -> Path:
    """The staging folder, created, emptied of copies a run killed before its journal left there.

    Only call when no journal is pending: the copies of a pending journal are what finishes it.

    Returns:
        The staging folder.

    Raises:
        JudgekitError: When the folder cannot be created.
    """
    root = Path(root)
    folder = root / STAGING_DIR
    try:
        folder.mkdir(exist_ok=True)
        for child in folder.iterdir():
            if child.is_file() or child.is_symlink():
                child.unlink()
    except OSError as exc:
        raise JudgekitError(f"{folder}: cannot prepare the staging folder: {exc.strerror}") from None
    return folder


def finish_pending(root: str | os.PathLike[str], operation: Operation) -> Journal | None:
    """Finish an interrupted ``operation`` of the set at ``root``: make the renames not yet made.

    Every rename is checked before any is made; a conflict anywhere changes nothing.

    Args:
        root: The set's root folder.
        operation: The command finishing it (``promote`` or ``retire``).

    Returns:
        The journal that was finished (now deleted), or ``None`` when none was pending.

    Raises:
        JudgekitError: (exit code 2) When the pending journal is another command's (the message says which
            command finishes it) or cannot be read; (exit code 1) when a rename fails (the journal stays).
        ProblemsError: (exit code 2) One problem per rename that cannot be made (a file changed, removed
            or added since); nothing is changed.
    """
    root = Path(root)
    journal = read_journal(root)
    if journal is None:
        return None
    path = journal_path(root)
    if journal.operation != operation:
        raise JudgekitError(
            f"{path}: an interrupted '{_COMMANDS[journal.operation]}' is not finished; finish it first: run "
            f"{finish_command(root, journal)}",
            exit_code=2,
        )
    states = move_states(root, journal)
    conflicts = _conflict_problems(path, journal, states)
    if conflicts:
        raise ProblemsError(conflicts)
    for state in states:
        if state.done:
            continue
        try:
            if not state.destination.parent.is_dir():  # a cases folder removed since
                state.destination.parent.mkdir(parents=True)
            move_file(state.source, state.destination, overwrite=state.move.replaces is not None)
        except OSError as exc:
            raise JudgekitError(
                f"{path}: cannot finish the interrupted '{_COMMANDS[operation]}': {state.source} -> "
                f"{state.destination}: {exc.strerror or exc}; the journal stays: fix that and rerun",
                exit_code=1,
            ) from None
    end(root)
    return journal
