"""Read YAML and JSON documents from disk and remember where every field came from.

A :class:`Document` holds the parsed data and can answer "on which line is ``expected.route.0.tool``?",
so that validation problems can be reported as ``file:line: field: message``. Reading never raises a
Python exception for a user's mistake: it raises :class:`~judgekit.errors.JudgekitError` naming the file
and line (malformed syntax, bytes that are not UTF-8, duplicate keys, an oversized file).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml

from judgekit.errors import JudgekitError, LocatedError, Problem

if TYPE_CHECKING:
    from pydantic import BaseModel

ModelT = TypeVar("ModelT", bound="BaseModel")

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "Document",
    "decode_utf8",
    "format_loc",
    "load_json_model",
    "parse_text",
    "read_document",
    "read_documents",
    "read_input",
]

MAX_DOCUMENT_BYTES = 20 * 1024 * 1024
"""Largest case or configuration file judgekit will parse (20 MiB)."""

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

Loc = tuple[str | int, ...]


def format_loc(loc: Loc) -> str:
    """Render a location tuple such as ``("expected", "route", 0, "tool")`` as ``expected.route.0.tool``."""
    return ".".join(str(p) for p in loc)


@dataclass
class Document:
    """Parsed content of one file (or one line of a JSONL file) with the lines of its fields.

    Attributes:
        path: The file it came from.
        data: The parsed value (usually a mapping).
        base_line: 1-based line of the document's start inside ``path``.
        lines: Map from a field's location tuple to its 1-based line in ``path``.
    """

    path: Path
    data: Any
    base_line: int = 1
    lines: dict[Loc, int] = field(default_factory=dict)

    def line_of(self, loc: Loc) -> int:
        """Return the line of the field at ``loc``, or of its nearest located parent.

        Args:
            loc: Location tuple of the field (keys and list indices).

        Returns:
            A 1-based line number in :attr:`path`; the document's first line when nothing closer is
            known.
        """
        probe = tuple(loc)
        while probe:
            if probe in self.lines:
                return self.lines[probe]
            probe = probe[:-1]
        return self.lines.get((), self.base_line)


def decode_utf8(raw: bytes, path: str | os.PathLike[str]) -> str:
    """Decode bytes as UTF-8 (a leading byte-order mark is allowed) or raise a located error.

    ``path`` may be given as text or a path object.

    Raises:
        JudgekitError: When the bytes are not UTF-8, naming the line and the offending byte.
    """
    path = Path(path)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise LocatedError(
            Problem(
                path,
                line,
                "",
                f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset "
                f"{exc.start}); save the file as UTF-8",
            )
        ) from None


def _read_bytes(path: Path, max_bytes: int) -> bytes:
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise JudgekitError(f"{path}: no such file") from None
    if size > max_bytes:
        raise JudgekitError(
            f"{path}: file is {size / 2**20:.1f} MiB; case and configuration files are limited to "
            f"{max_bytes / 2**20:.0f} MiB. A file this large is probably not a case file (move fixtures "
            "and exports out of the cases folder) or should be split."
        )
    try:
        return path.read_bytes()
    except OSError as exc:
        raise JudgekitError(f"{path}: cannot read: {exc.strerror}") from None


def load_json_model(
    model: type[ModelT],
    text: str | bytes,
    *,
    source: str | os.PathLike[str] | None,
    what: str,
    redo: str | None = None,
) -> ModelT:
    """Parse a JSON file written by judgekit (a record, a report) into its model, with located problems.

    Args:
        model: The pydantic model the file holds.
        text: The file's content.
        source: The file, for messages (``None`` when the text did not come from a file), as text or a path
            object.
        what: What the file is, for messages (``calibration record``, ``bias report``).
        redo: How to get a good file again, appended to the message when the file is not JSON
            (``restore the file or run judgekit probe-bias again``); ``None`` adds nothing.

    Returns:
        The validated model.

    Raises:
        ProblemsError: When it is not JSON (``not a JSON <what>: ...`` at the failing line), or a field is
            missing, unknown or invalid (``<field>: not a <what>: <why>``, one problem each, at most 20).
    """
    source = Path(source) if source is not None else None
    from pydantic import ValidationError

    from judgekit.errors import ProblemsError

    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        hint = f"; {redo}" if redo else ""
        raise ProblemsError([Problem(source, line, "", f"not a JSON {what}: {exc}{hint}")]) from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ProblemsError(
            [
                Problem(
                    source,
                    None,
                    ".".join(str(p) for p in e["loc"]),
                    f"not a {what}: {'unknown field' if e['type'] == 'extra_forbidden' else e['msg']}",
                )
                for e in exc.errors()[:20]
            ]
        ) from None


def read_input(path: str | os.PathLike[str], what: str) -> bytes:
    """Read a whole input file named on the command line, or raise an error that says what it was for.

    Args:
        path: The file, as text or a path object.
        what: What the file is for, as the user would say it ("label table", "baseline record").

    Raises:
        JudgekitError: When the file is missing, is a folder, or cannot be read.
    """
    path = Path(path)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise JudgekitError(f"{path}: {what} not found") from None
    except IsADirectoryError:
        raise JudgekitError(f"{path}: {what} is a directory, not a file") from None
    except OSError as exc:
        raise JudgekitError(f"{path}: cannot read the {what}: {exc.strerror}") from None


def _walk_yaml(node: yaml.Node, loc: Loc, lines: dict[Loc, int], path: Path, offset: int) -> None:
    lines[loc] = node.start_mark.line + 1 + offset
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.value)
            key_line = key_node.start_mark.line + 1 + offset
            if key in seen:
                raise LocatedError(
                    Problem(
                        path,
                        key_line,
                        format_loc((*loc, key)),
                        f"duplicate key (first at line {seen[key]}); keep one",
                    )
                )
            seen[key] = key_line
            _walk_yaml(value_node, (*loc, key), lines, path, offset)
            lines[(*loc, key)] = key_line
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk_yaml(item, (*loc, i), lines, path, offset)


def _parse_yaml(text: str, path: Path, offset: int = 0) -> tuple[Any, dict[Loc, int]]:
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}
        lines: dict[Loc, int] = {}
        _walk_yaml(node, (), lines, path, offset)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 + offset if mark is not None else None
        what = exc.problem or exc.context or "malformed YAML"
        raise LocatedError(Problem(path, line, "", f"malformed YAML: {what}")) from None
    except yaml.YAMLError as exc:
        raise LocatedError(Problem(path, None, "", f"malformed YAML: {exc}")) from None
    finally:
        loader.dispose()
    return data, lines


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKeyError(key)
        out[key] = value
    return out


class _DuplicateKeyError(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _json_lines(text: str, path: Path, offset: int) -> dict[Loc, int]:
    """Best-effort field lines for JSON text: JSON is (nearly) YAML, so reuse the YAML node walk."""
    try:
        return _parse_yaml(text, path, offset)[1]
    except JudgekitError:
        return {}


def _parse_json(text: str, path: Path, offset: int = 0) -> Document:
    try:
        data = json.loads(text, object_pairs_hook=_reject_duplicates)
    except json.JSONDecodeError as exc:
        raise LocatedError(
            Problem(path, exc.lineno + offset, "", f"malformed JSON: {exc.msg} (column {exc.colno})")
        ) from None
    except _DuplicateKeyError as exc:
        # JSON is (nearly) YAML: the YAML walk locates the duplicate (both lines, full field path).
        try:
            _parse_yaml(text, path, offset)
        except LocatedError as located:
            if located.problem.message.startswith("duplicate key"):
                raise LocatedError(located.problem) from None
        except JudgekitError:
            pass
        raise LocatedError(Problem(path, None, exc.key, "duplicate key; keep one")) from None
    return Document(path=path, data=data, base_line=1 + offset, lines=_LazyLines(text, path, offset))


class _LazyLines(dict[Loc, int]):
    """Line map computed on first use: JSON parsing is fast, locating fields only matters on error."""

    def __init__(self, text: str, path: Path, offset: int) -> None:
        super().__init__()
        self._source: tuple[str, Path, int] | None = (text, path, offset)

    def _fill(self) -> None:
        if self._source is not None:
            text, path, offset = self._source
            self._source = None
            self.update(_json_lines(text, path, offset))

    def __contains__(self, key: object) -> bool:
        self._fill()
        return super().__contains__(key)

    def __getitem__(self, key: Loc) -> int:
        self._fill()
        return super().__getitem__(key)

    def get(self, key: Loc, default: Any = None) -> Any:
        self._fill()
        return super().get(key, default)


def parse_text(text: str, path: str | os.PathLike[str]) -> Iterator[Document | Problem]:
    """Parse already-decoded text as the documents of a file named ``path`` (by its suffix).

    Used for content that is not on disk (a file at an earlier git revision). Behaves like
    :func:`read_documents`.

    ``path`` may be given as text or a path object.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                yield _parse_json(line, path, offset=number - 1)
            except LocatedError as exc:
                yield exc.problem
    elif suffix == ".json":
        yield _parse_json(text, path)
    else:
        data, lines = _parse_yaml(text, path)
        yield Document(path=path, data=data, base_line=1, lines=lines)


def read_document(path: str | os.PathLike[str], *, max_bytes: int = MAX_DOCUMENT_BYTES) -> Document:
    """Read one YAML (``.yaml``, ``.yml``) or JSON (``.json``) file.

    Args:
        path: The file to read, as text or a path object.
        max_bytes: Refuse files larger than this many bytes.

    Returns:
        The parsed document with field lines.

    Raises:
        JudgekitError: For an unreadable, oversized, non-UTF-8 or malformed file, or duplicate keys.
    """
    path = Path(path)
    text = decode_utf8(_read_bytes(path, max_bytes), path)
    if path.suffix.lower() == ".json":
        return _parse_json(text, path)
    data, lines = _parse_yaml(text, path)
    return Document(path=path, data=data, base_line=1, lines=lines)


def read_documents(
    path: str | os.PathLike[str], *, max_bytes: int = MAX_DOCUMENT_BYTES
) -> Iterator[Document | Problem]:
    """Yield the documents of a file: one for YAML/JSON, one per non-blank line for ``.jsonl``.

    A malformed JSONL line is yielded as a :class:`~judgekit.errors.Problem` and reading goes on, so
    one bad line does not hide the others.

    ``path`` may be given as text or a path object.

    Raises:
        JudgekitError: When the file as a whole cannot be read (missing, oversized, not UTF-8), or a
            YAML/JSON file is malformed.
    """
    path = Path(path)
    yield from parse_text(decode_utf8(_read_bytes(path, max_bytes), path), path)
