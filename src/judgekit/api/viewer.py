"""The viewer's reading, one layer above the reports: transcripts, case sets, and the folder written.

:mod:`judgekit.reports.viewer` renders only what it is given; this module reads what it shows. A
transcript is read from the file and line its result line names (each file front to back, a few kept
open, memory flat in trials: :class:`TranscriptReader`); a case set gives each case's split and what it
expects (:func:`case_infos`); :func:`write_viewer` is ``judgekit view``'s one call.

What may import it: ``demo``, ``integrations``, ``commands`` and ``cli`` (the layers above ``api``).
"""

from __future__ import annotations

import hashlib
from array import array
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Sequence
from os import PathLike
from pathlib import Path
from typing import Any, BinaryIO

from judgekit.errors import JudgekitError
from judgekit.reports.run_model import DEFAULT_REGRESSION_SLICES, ResultSource
from judgekit.reports.viewer import (
    CHUNK_SIZE,
    CaseInfo,
    TranscriptLookup,
    ViewerBuild,
    build_viewer,
    case_info,
    display_messages,
    display_path,
)
from judgekit.results import ResultLine
from judgekit.secrets import Redactor

__all__ = ["TranscriptReader", "case_infos", "read_transcripts_for", "write_viewer"]


def write_viewer(
    results: Sequence[ResultSource],
    out: str | PathLike[str],
    *,
    cases: str | PathLike[str] | None = None,
    chunk_size: int = CHUNK_SIZE,
    regression_slices: Iterable[str] = DEFAULT_REGRESSION_SLICES,
    redactor: Redactor | None = None,
) -> ViewerBuild:
    """Write the viewer folder of one run, or two side by side, reading its transcripts and case set.

    Args:
        results: One or two runs: results files (read streaming) or runs read with
            :func:`~judgekit.results.read_results` (the first is the baseline when there are two).
        out: The folder to write (:func:`~judgekit.reports.viewer.check_out_folder`); an earlier viewer
            there is replaced, all at once or not at all.
        cases: The golden set's folder (:func:`case_infos`), or ``None`` for the results alone.
        chunk_size: Trials per detail chunk file; at least 1.
        regression_slices: Slice names that form the regression suite (as in ``judgekit report``).
        redactor: See :func:`~judgekit.reports.viewer.build_viewer`.

    Returns:
        What was written.

    Raises:
        JudgekitError: (exit code 2) As :func:`~judgekit.reports.viewer.build_viewer`, and for a case set
            that is not valid.
    """
    return build_viewer(
        results,
        out,
        transcripts=TranscriptReader,
        cases=case_infos(cases) if cases is not None else None,
        chunk_size=chunk_size,
        regression_slices=regression_slices,
        redactor=redactor,
    )


def case_infos(cases: str | PathLike[str]) -> dict[str, CaseInfo]:
    """Read a case set for the viewer: each reviewed case's split and what it expects.

    Args:
        cases: The golden set's folder.

    Returns:
        Case id -> its :class:`~judgekit.reports.viewer.CaseInfo`.

    Raises:
        JudgekitError: (exit code 2) When the set is not valid (every problem listed).
    """
    from judgekit.caseset import load_case_set

    case_set = load_case_set([Path(cases)])
    try:
        case_set.raise_if_invalid()
    except JudgekitError as exc:
        exc.exit_code = 2
        raise
    return {
        loaded.case.id: case_info(loaded.case, f"{display_path(loaded.path, cases)}:{loaded.line}")
        for loaded in case_set.reviewed()
    }


# --------------------------------------------------------------------------- transcripts


def _resolve_source(file: str, results_folder: Path) -> Path | None:
    path = Path(file)
    if path.is_absolute():
        return path if path.is_file() else None
    for candidate in (Path.cwd() / path, results_folder / path):
        if candidate.is_file():
            return candidate
    return None


_OPEN_FILES = 8
"""Transcript files kept open (with their line offsets) at once while the viewer reads chunk by chunk."""


class _TranscriptFile:
    """One transcript file read on demand: the byte offset of every line seen so far, and its handle.

    Lines asked for in order are read front to back once; a line before the furthest one read is found
    again by its offset (8 bytes kept per line, never the lines).
    """

    def __init__(self, recorded: str, results_folder: Path) -> None:
        self.recorded = recorded
        self.path = _resolve_source(recorded, results_folder)
        self.shown = display_path(self.path if self.path is not None else recorded, results_folder)
        self.offsets = array("q")
        self.next = 0
        self.ended = False
        self.handle: BinaryIO | None = None
        self.error: str | None = None
        if self.path is None:
            shown = display_path(recorded, results_folder)
            self.error = f"transcript file {shown} not found (moved or deleted since grading)"
            return
        try:
            from judgekit.io.documents import open_regular

            self.handle = open_regular(self.path, "transcript file")
        except OSError as exc:
            self.error = f"transcript file {self.shown} cannot be read: {exc.strerror}"

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None

    def _read_at(self, offset: int) -> tuple[bytes | None, int]:
        """The line at ``offset`` (``None`` when too long, ``b""`` at the end) and the next line's offset."""
        from judgekit.io.documents import MAX_LINE_BYTES

        handle = self.handle
        if handle is None:
            return b"", offset
        handle.seek(offset)
        raw: bytes = handle.readline(MAX_LINE_BYTES + 1)
        if len(raw) <= MAX_LINE_BYTES or raw.endswith(b"\n"):
            return raw, offset + len(raw)
        piece = raw
        while piece and not piece.endswith(b"\n"):
            piece = handle.readline(1024 * 1024)
        return None, handle.tell()

    def _read_seen(self, number: int) -> bytes | None:
        """Line ``number`` (1-based, already seen) read again where it is, or ``None`` when too long.

        Its length is known (the next line's offset, or where reading stopped), so it is read with
        :func:`~judgekit.io.filekind.read_at`, past the handle's read buffer: a buffered ``seek`` back
        would refill the whole buffer (256 KiB) for each line of a few kilobytes.
        """
        from judgekit.io.documents import MAX_LINE_BYTES
        from judgekit.io.filekind import read_at

        if self.handle is None:  # pragma: no cover - a file that cannot be read has no line seen
            return b""
        start = self.offsets[number - 1]
        end = self.offsets[number] if number < len(self.offsets) else self.next
        if end - start > MAX_LINE_BYTES + 1:
            return None
        raw = read_at(self.handle, start, end - start)
        return raw if len(raw) <= MAX_LINE_BYTES or raw.endswith(b"\n") else None

    def line(self, number: int) -> tuple[bool, bytes | None]:
        """Whether the file has line ``number`` (1-based), and its bytes (``None`` when too long)."""
        if number <= len(self.offsets):
            return True, self._read_seen(number)
        raw: bytes | None = b""
        while not self.ended and len(self.offsets) < number:
            raw, end = self._read_at(self.next)
            if raw == b"":
                self.ended = True
                break
            self.offsets.append(self.next)
            self.next = end
        if len(self.offsets) < number:
            return False, None
        return True, raw


class TranscriptReader:
    """Reads the transcripts of result lines batch by batch, keeping a few files open (memory flat).

    Args:
        results_folder: The folder of the results file (relative sources are looked up from the working
            folder, then from it; pages name files relative to it:
            :func:`~judgekit.reports.viewer.display_path`).
    """

    def __init__(self, results_folder: str | PathLike[str]) -> None:
        """Prepare to read transcripts for the results file in ``results_folder``."""
        self.folder = Path(results_folder)
        self._files: OrderedDict[str, _TranscriptFile] = OrderedDict()

    def __enter__(self) -> TranscriptReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close every transcript file still open."""
        for file in self._files.values():
            file.close()
        self._files.clear()

    def _file(self, recorded: str) -> _TranscriptFile:
        file = self._files.get(recorded)
        if file is not None:
            self._files.move_to_end(recorded)
            return file
        file = _TranscriptFile(recorded, self.folder)
        self._files[recorded] = file
        while len(self._files) > _OPEN_FILES:
            self._files.popitem(last=False)[1].close()
        return file

    def lookups(self, lines: Sequence[ResultLine]) -> list[TranscriptLookup]:
        """The transcript of each line (or why it is unavailable), in the order of ``lines``.

        A transcript line several result lines name is parsed once; its sha256 is compared with the first
        of them.
        """
        from judgekit.io.documents import load_json_bounded

        out: list[TranscriptLookup | None] = [None] * len(lines)
        wanted: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
        for position, line in enumerate(lines):
            if line.source is None:
                out[position] = TranscriptLookup(
                    None, unavailable="the result line names no transcript source"
                )
            else:
                wanted[line.source.file][line.source.line].append(position)
        for recorded, by_line in wanted.items():
            file = self._file(recorded)
            for number in sorted(by_line):
                graded = by_line[number]
                if file.error is not None:
                    lookup = TranscriptLookup(None, unavailable=file.error, file=file.shown)
                else:
                    present, raw = file.line(number)
                    if present:
                        lookup = _transcript_at(file, number, raw, lines[graded[0]], load_json_bounded)
                    else:
                        lookup = TranscriptLookup(
                            None,
                            unavailable=f"{file.shown} has no line {number} (the file was shortened)",
                            file=file.shown,
                        )
                for position in graded:
                    out[position] = lookup
        return [lookup if lookup is not None else TranscriptLookup(None) for lookup in out]


def read_transcripts_for(
    lines: Sequence[ResultLine], results_folder: str | PathLike[str]
) -> dict[int, TranscriptLookup]:
    """Read the transcript of every trial from the file and line its result line names.

    Each transcript file is read front to back (a line before the furthest read is found by its offset);
    only the lines the results name are parsed. A relative source path is looked up from the working
    folder, then from the results file's folder.

    Args:
        lines: The result lines, in results order.
        results_folder: The folder of the results file.

    Returns:
        Position of each trial in ``lines`` -> its transcript, or why it is unavailable (no source in
        the result line, the file missing or unreadable, the line gone or not a transcript); a line
        whose sha256 differs from the one graded is shown with a warning. Files are named as
        :func:`~judgekit.reports.viewer.display_path` names them.
    """
    with TranscriptReader(results_folder) as reader:
        return dict(enumerate(reader.lookups(lines)))


def _transcript_at(
    file: _TranscriptFile, number: int, raw: bytes | None, first: ResultLine, load: Any
) -> TranscriptLookup:
    """The transcript on one line of a transcript file, or why it cannot be shown."""
    from pydantic import ValidationError

    from judgekit.errors import LocatedError
    from judgekit.transcript import Transcript

    where = f"{file.shown}:{number}"
    if raw is None:
        return TranscriptLookup(None, unavailable=f"{where}: the line is too long to read", file=file.shown)
    digest = hashlib.sha256(raw.rstrip(b"\r\n")).hexdigest()
    warning = None
    if first.source is not None and first.source.sha256 and first.source.sha256 != digest:
        warning = (
            f"{where} changed since it was graded (sha256 differs): the transcript shown may not be the "
            "one graded"
        )
    try:
        data = load(raw.decode("utf-8-sig"), source=file.shown, line=number)
        transcript = Transcript.model_validate(data)
    except UnicodeDecodeError as exc:
        return TranscriptLookup(
            None, unavailable=f"{where}: not valid UTF-8 (byte offset {exc.start})", file=file.shown
        )
    except LocatedError as exc:
        return TranscriptLookup(None, unavailable=f"{where}: {exc.problem.message}", file=file.shown)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        return TranscriptLookup(None, unavailable=f"{where}: not a transcript: {err['msg']}", file=file.shown)
    messages, calls = display_messages(transcript)
    return TranscriptLookup(messages, calls, warning=warning, file=file.shown)
