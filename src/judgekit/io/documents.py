"""Read YAML and JSON documents from disk and remember where every field came from.

A :class:`Document` holds the parsed data and can answer "on which line is ``expected.route.0.tool``?",
so that validation problems can be reported as ``file:line: field: message``. Reading never raises a
Python exception for a user's mistake: it raises :class:`~judgekit.errors.JudgekitError` naming the file
and line (malformed syntax, bytes that are not UTF-8, duplicate keys, an oversized file).

Every JSON and YAML judgekit reads from a file (case files, manifests, configurations, rubrics, label
tables, transcript and result lines, records) is parsed here, under the limits on hostile input of
``docs/reference/limits.md``: a size per document or line (:data:`MAX_DOCUMENT_BYTES`,
:data:`MAX_LINE_BYTES`), a nesting depth (:data:`MAX_NESTING_DEPTH`), a number length
(:data:`MAX_NUMBER_DIGITS`) and, for YAML, a bound on what aliases repeat (:data:`YAML_MAX_ALIAS_NODES`).
JSON's ``NaN`` and ``Infinity`` (not JSON) and numbers too large to store are refused too. Each refusal is
a located error that names the limit.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO, TypeVar

import jiter
import yaml

from judgekit.errors import JudgekitError, LocatedError, Problem

if TYPE_CHECKING:
    from pydantic import BaseModel

ModelT = TypeVar("ModelT", bound="BaseModel")

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "MAX_IMPORT_BYTES",
    "MAX_LINE_BYTES",
    "MAX_NESTING_DEPTH",
    "MAX_NUMBER_DIGITS",
    "YAML_MAX_ALIAS_NODES",
    "Document",
    "check_duplicate_keys",
    "check_json_bounds",
    "decode_utf8",
    "format_loc",
    "has_u_escape",
    "iter_lines",
    "iter_lines_at",
    "json_error_detail",
    "jsonl_lines",
    "line_too_long",
    "load_json_bounded",
    "load_json_model",
    "load_toml_bounded",
    "open_regular",
    "open_regular_text",
    "parse_text",
    "read_document",
    "read_documents",
    "read_input",
    "read_regular",
    "read_regular_text",
]

MAX_DOCUMENT_BYTES = 20 * 1024 * 1024
"""Largest case or configuration file judgekit will parse (20 MiB)."""

MAX_IMPORT_BYTES = 1024 * 1024 * 1024
"""Largest benchmark or trace export (one JSON document: tau-bench, OTLP) that ``import`` parses (1 GiB).

A full benchmark run is one JSON list and can be far larger than a case file; it is still parsed under the
depth and number limits."""

MAX_LINE_BYTES = 32 * 1024 * 1024
"""Longest line of a JSONL file (transcripts, results, JSONL cases, label tables) judgekit parses (32 MiB).

A longer line is reported at its line number and left out; it is never held in memory whole."""

MAX_NESTING_DEPTH = 100
"""Deepest nesting of lists and objects (mappings) in one JSON or YAML document or line (100 levels)."""

MAX_NUMBER_DIGITS = 100
"""Most digits in a row in one number of a JSON or YAML document (100): longer is not a measurement."""

YAML_MAX_ALIAS_NODES = 10_000
"""Most values YAML aliases (``*name``) and merge keys (``<<: *name``) may repeat in one document (10,000).

Bounds a "billion laughs" alias bomb: the repeated values are counted as they would be expanded."""

_LIMITS_DOC = "docs/reference/limits.md"

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

Loc = tuple[str | int, ...]


def jsonl_lines(text: str) -> list[str]:
    r"""The lines of JSONL text: split at ``\n`` only, a trailing ``\r`` removed from each.

    Not :meth:`str.splitlines`, which also breaks at U+2028, U+2029, U+0085 and other characters that
    JSON allows raw inside a string (a writer with ``ensure_ascii=False`` leaves them raw): that would cut a
    valid line in two and misnumber every line after it.

    Examples:
        >>> jsonl_lines('{"a": "one\u2028two"}\r\n{"b": 2}\n')
        ['{"a": "one\u2028two"}', '{"b": 2}', '']
    """
    return [line.removesuffix("\r") for line in text.split("\n")]


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
    from judgekit.io.filekind import check_input_file

    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise JudgekitError(f"{path}: no such file") from None
    check_input_file(path, what="file", refuse_folders=False)
    if size > max_bytes:
        raise JudgekitError(
            f"{path}: file is {size / 2**20:.1f} MiB; case and configuration files are limited to "
            f"{max_bytes / 2**20:.0f} MiB (limit MAX_DOCUMENT_BYTES, {_LIMITS_DOC}). A file this large "
            "is probably not a case file (move fixtures and exports out of the cases folder) or should be "
            "split."
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
            (``restore the file or run judgekit judge probe-bias again``); ``None`` adds nothing.

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
        data = load_json_bounded(text, source=source, max_bytes=MAX_DOCUMENT_BYTES, what="the file")
    except LocatedError as exc:
        hint = f"; {redo}" if redo else ""
        raise ProblemsError(
            [Problem(source, exc.problem.line, "", f"not a JSON {what}: {exc.problem.message}{hint}")]
        ) from None
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


def open_input(path: str | os.PathLike[str], what: str) -> BinaryIO:
    """Open an input file for reading in binary, refusing at once one that is not a regular file.

    The file is opened without waiting (``O_NONBLOCK``: opening a named pipe would otherwise wait for a
    writer forever) and examined on the open descriptor, so a FIFO, socket, device or folder is refused
    with exit code 2 before anything is read; a regular file is then read normally.

    Args:
        path: The file, as text or a path object (a symlink is followed).
        what: What the file is, for messages (``results``, ``transcripts``).

    Returns:
        The open file; the caller closes it.

    Raises:
        JudgekitError: (exit code 2) When the file cannot be opened (``cannot read <what>: <reason>``) or
            is not a regular file.
    """
    from judgekit.io.filekind import check_input_file, open_without_waiting

    def refuse(kind: str) -> JudgekitError:
        return JudgekitError(
            f"{path}: is {kind}, not a regular file; judgekit reads {what} only from a regular file "
            "(save the data to a file first)",
            exit_code=2,
        )

    try:
        return open_without_waiting(path, refuse)
    except OSError as exc:
        check_input_file(path, what=what)  # a socket cannot be opened at all: say what it is
        raise JudgekitError(f"{path}: cannot read {what}: {exc.strerror}", exit_code=2) from None


def open_regular(path: str | os.PathLike[str], what: str) -> BinaryIO:
    """Open a file for reading in binary like :meth:`pathlib.Path.open`, refusing one that is not regular.

    A drop-in for ``path.open("rb")`` where the caller already words its own messages for a missing or
    unreadable file: those still raise :class:`OSError` (a folder raises :class:`IsADirectoryError`, as
    reading one would), while a FIFO, socket or device is refused at once (opened without waiting, examined
    on the open descriptor) with exit code 2.

    Args:
        path: The file, as text or a path object (a symlink is followed).
        what: What the file is, for the refusal (``judge cassette``, ``label table``).

    Returns:
        The open file; the caller closes it.

    Raises:
        OSError: When the file cannot be opened, or is a folder.
        JudgekitError: (exit code 2) When it is a FIFO, socket or device, naming it and what it is.
    """
    import errno

    from judgekit.io.filekind import check_input_file, open_without_waiting

    def refuse(kind: str) -> BaseException:
        if kind == "a folder":  # as reading one would: the caller words it
            return IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
        return JudgekitError(
            f"{path}: is {kind}, not a regular file; judgekit reads the {what} only from a regular "
            "file (save the data to a file first)",
            exit_code=2,
        )

    try:
        return open_without_waiting(path, refuse)
    except IsADirectoryError:
        raise
    except OSError:
        check_input_file(path, what=what, refuse_folders=False)  # a socket cannot be opened: say what it is
        raise


def read_regular(path: str | os.PathLike[str], what: str) -> bytes:
    """Read a whole file like :meth:`pathlib.Path.read_bytes`, refusing at once one that is not regular.

    Args:
        path: The file, as text or a path object.
        what: What the file is, for the refusal.

    Raises:
        OSError: When the file cannot be read, or is a folder (the caller words these).
        JudgekitError: (exit code 2) When it is a FIFO, socket or device.
    """
    with open_regular(path, what) as handle:
        return handle.read()


def read_regular_text(
    path: str | os.PathLike[str], what: str, *, encoding: str = "utf-8", errors: str = "strict"
) -> str:
    r"""Read a whole text file like :meth:`pathlib.Path.read_text`, refusing at once one that is not regular.

    Line ends are translated as :meth:`~pathlib.Path.read_text` does (``\r\n`` and ``\r`` become ``\n``).

    Args:
        path: The file, as text or a path object.
        what: What the file is, for the refusal.
        encoding: The text's encoding.
        errors: What to do with bytes that do not decode (``strict`` raises :class:`UnicodeDecodeError`).

    Raises:
        OSError: When the file cannot be read, or is a folder (the caller words these).
        JudgekitError: (exit code 2) When it is a FIFO, socket or device.
    """
    with open_regular_text(path, what, encoding=encoding, errors=errors) as handle:
        return handle.read()


def open_regular_text(
    path: str | os.PathLike[str], what: str, *, encoding: str = "utf-8", errors: str = "strict"
) -> TextIO:
    """Open a text file for reading like :meth:`pathlib.Path.open`, refusing one that is not regular.

    Args:
        path: The file, as text or a path object.
        what: What the file is, for the refusal.
        encoding: The text's encoding.
        errors: What to do with bytes that do not decode.

    Returns:
        The open text stream (universal newlines); the caller closes it.

    Raises:
        OSError: When the file cannot be opened, or is a folder (the caller words these).
        JudgekitError: (exit code 2) When it is a FIFO, socket or device.
    """
    import io

    return io.TextIOWrapper(open_regular(path, what), encoding=encoding, errors=errors)


def read_input(path: str | os.PathLike[str], what: str) -> bytes:
    """Read a whole input file named on the command line, or raise an error that says what it was for.

    Args:
        path: The file, as text or a path object.
        what: What the file is for, as the user would say it ("label table", "baseline record").

    Raises:
        JudgekitError: When the file is missing, is a folder, or cannot be read.
    """
    from judgekit.io.filekind import check_input_file

    path = Path(path)
    check_input_file(path, what=what, refuse_folders=False)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise JudgekitError(f"{path}: {what} not found") from None
    except IsADirectoryError:
        raise JudgekitError(f"{path}: {what} is a directory, not a file") from None
    except OSError as exc:
        raise JudgekitError(f"{path}: cannot read the {what}: {exc.strerror}") from None


class _YamlWalk:
    """State of one YAML node walk: field lines, and the values aliases have repeated so far."""

    def __init__(self, path: Path, offset: int) -> None:
        self.path = path
        self.offset = offset
        self.lines: dict[Loc, int] = {}
        self.seen: set[int] = set()
        self.repeated = 0

    def refuse(self, node: yaml.Node, loc: Loc, message: str) -> LocatedError:
        """The located error for ``node``: its line, its field (a deep one's first levels), ``message``."""
        shown = loc if len(loc) <= 8 else (*loc[:8], "...")
        return LocatedError(
            Problem(self.path, node.start_mark.line + 1 + self.offset, format_loc(shown), message)
        )

    def walk(self, node: yaml.Node, loc: Loc, depth: int, ancestors: frozenset[int] = frozenset()) -> None:
        """Record the lines under ``node`` and enforce the limits (depth, numbers, alias repeats)."""
        if id(node) in ancestors:
            raise self.refuse(
                node, loc, "a YAML alias (*name) is used inside the value it names (recursive); write it out"
            )
        if id(node) in self.seen:
            self.repeated += 1
            if self.repeated > YAML_MAX_ALIAS_NODES:
                raise self.refuse(
                    node,
                    loc,
                    f"YAML aliases (*name) or merge keys (<<) repeat more than {YAML_MAX_ALIAS_NODES:,} "
                    f"values (limit YAML_MAX_ALIAS_NODES, {_LIMITS_DOC}); an alias bomb? Write the "
                    "values out, or repeat less",
                )
        else:
            self.seen.add(id(node))
        self.lines[loc] = node.start_mark.line + 1 + self.offset
        if isinstance(node, yaml.ScalarNode):
            self._check_scalar(node, loc)
            return
        if depth >= MAX_NESTING_DEPTH:
            raise self.refuse(node, loc, _depth_message())
        inside = ancestors | {id(node)}
        if isinstance(node, yaml.MappingNode):
            first: dict[str, int] = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    raise self.refuse(key_node, loc, "a key is a list or mapping; write keys as plain text")
                key = key_node.value
                key_line = key_node.start_mark.line + 1 + self.offset
                if key in first:
                    raise LocatedError(
                        Problem(
                            self.path,
                            key_line,
                            format_loc((*loc, key)),
                            f"duplicate key (first at line {first[key]}); keep one",
                        )
                    )
                first[key] = key_line
                self.walk(value_node, (*loc, key), depth + 1, inside)
                self.lines[(*loc, key)] = key_line
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                self.walk(item, (*loc, i), depth + 1, inside)

    def _check_scalar(self, node: yaml.ScalarNode, loc: Loc) -> None:
        tag = str(node.tag)
        value = str(node.value)
        if tag.endswith(":timestamp"):
            try:
                yaml.constructor.SafeConstructor().construct_yaml_timestamp(node)
            except (ValueError, OverflowError) as exc:
                raise self.refuse(
                    node, loc, f"'{value[:40]}' reads as a date or time but is not one ({exc}); quote it"
                ) from None
            return
        if not tag.endswith((":int", ":float")):
            return
        if len(_NOT_DIGITS.sub("", value)) > MAX_NUMBER_DIGITS:  # hexadecimal, 1_000 and 1:30 forms too
            raise self.refuse(node, loc, _digits_message())
        if tag.endswith(":float"):
            plain = value.replace("_", "").lower().lstrip("+-")
            if plain in (".nan", ".inf"):
                raise self.refuse(node, loc, _not_finite_message(value))
            try:
                number = float(value.replace("_", ""))
            except ValueError:
                return  # a sexagesimal or other YAML 1.1 form: the constructor decides
            if not math.isfinite(number):
                raise self.refuse(node, loc, _not_finite_message(value))


def _parse_yaml(text: str, path: Path, offset: int = 0) -> tuple[Any, dict[Loc, int]]:
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}
        walk = _YamlWalk(path, offset)
        walk.walk(node, (), 0)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 + offset if mark is not None else None
        what = exc.problem or exc.context or "malformed YAML"
        message = _depth_message() if "maximum nesting depth" in what else f"malformed YAML: {what}"
        raise LocatedError(Problem(path, line, "", message)) from None
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1 + offset
        character = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or " ")
        raise LocatedError(
            Problem(
                path,
                line,
                "",
                f"malformed YAML: control character 0x{character:02x} is not allowed; remove it",
            )
        ) from None
    except yaml.YAMLError as exc:
        raise LocatedError(Problem(path, None, "", f"malformed YAML: {exc}")) from None
    except (RecursionError, ValueError, OverflowError) as exc:
        # Not expected past the walk's limits; refused as input all the same, never a traceback.
        raise LocatedError(
            Problem(path, None, "", f"YAML judgekit cannot read ({type(exc).__name__}: {str(exc)[:200]})")
        ) from None
    finally:
        loader.dispose()
    return data, walk.lines


# --------------------------------------------------------------------------- bounded JSON

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_LONG_DIGITS = re.compile(f"[0-9]{{{MAX_NUMBER_DIGITS + 1}}}")
_NOT_DIGITS = re.compile(r"[^0-9A-Za-z]")
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_STRING_B = re.compile(_STRING.pattern.encode(), re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_INNERMOST_PAIR = re.compile(rb"\[\]|\{\}").sub
# Digits become 0, and E and + become e, so that a few substring tests find every long digit run and every
# exponent of three digits or more (``1E+400`` reads ``0eee000``); a false alarm only costs a full parse.
# ``{`` becomes ``[``, so that one count of ``[`` in the same bytes counts the opening brackets of both
# kinds (the tests above look for neither).
_DIGITS_TO_ZERO = bytes.maketrans(b"123456789E+{", b"000000000ee[")
_LONG_RUN = b"0" * (MAX_NUMBER_DIGITS + 1)
_U_ESCAPE = re.compile(rb"\\u").search
_BACKSLASHES_LOOKED_AT = 4
"""Backslashes :func:`has_u_escape` looks at one by one before it searches the rest in one pass."""


def has_u_escape(raw: bytes) -> bool:
    r"""Whether ``raw`` holds a backslash followed by ``u`` anywhere: ``b"\u" in raw``, faster.

    Most lines have no backslash, or a few: ``bytes.find`` of one byte is a ``memchr``, far cheaper than the
    two-byte search, whose candidates are every ``u``. Past a few backslashes, one regular-expression
    search (which looks for the backslash first) does the rest.

    Example:
        >>> has_u_escape(b'{"a": "x\\n\\"y\\""}'), has_u_escape(b'{"a": "\\u003a"}')
        (False, True)
        >>> has_u_escape(b'"\\\\u"'), has_u_escape(b'"' + b'\\n' * 9 + b'\\u"')  # as ``in``: any backslash-u
        (True, True)
    """
    i = raw.find(b"\\")
    for _ in range(_BACKSLASHES_LOOKED_AT):
        if i < 0:
            return False
        if raw[i + 1 : i + 2] == b"u":
            return True
        i = raw.find(b"\\", i + 1)
    return i >= 0 and _U_ESCAPE(raw, i) is not None


_SIZE_LIMITS = {MAX_LINE_BYTES: "MAX_LINE_BYTES", MAX_DOCUMENT_BYTES: "MAX_DOCUMENT_BYTES"}


def _depth_message() -> str:
    return (
        f"nested deeper than {MAX_NESTING_DEPTH} levels of lists and objects (limit MAX_NESTING_DEPTH, "
        f"{_LIMITS_DOC}); flatten the data, or store the deep part as a string"
    )


def _digits_message() -> str:
    return (
        f"a number has more than {MAX_NUMBER_DIGITS} digits (limit MAX_NUMBER_DIGITS, {_LIMITS_DOC}); "
        "write an identifier as a string (in quotes)"
    )


def _not_finite_message(value: str) -> str:
    shown = value if len(value) <= 40 else value[:37] + "..."
    return f"the number {shown} is not finite (NaN or infinite); write a finite number or null"


def _mib(size: int) -> str:
    return f"{size / 2**20:.1f} MiB"


class _JsonRefusal(ValueError):
    """A value the JSON parser's hooks refuse (a hook cannot know its line): ``token`` is its text."""

    def __init__(self, message: str, token: str = "") -> None:
        super().__init__(message)
        self.token = token


def _refuse_constant(name: str) -> Any:
    raise _JsonRefusal(f"{name} is not JSON; write a finite number or null", name)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _JsonRefusal(_not_finite_message(text), text)
    return value


def _outside_strings(text: str) -> str:
    """``text`` with every JSON string replaced by its newlines only.

    A search in it skips strings, and the newlines before a position in it still give the line in ``text``.
    """
    return _STRING.sub(lambda m: "\n" * m.group().count("\n"), text)


def _duplicate_line(text: str, line: int) -> int:
    """The line of the first repeated key in JSON ``text`` whose first line is ``line`` (jiter says where)."""
    try:
        jiter.from_json(text.encode("utf-8", "surrogatepass"), catch_duplicate_keys=True)
    except ValueError as exc:
        found = re.search(r" at line (\d+) column \d+\Z", str(exc))
        if found is not None and str(exc).startswith("Detected duplicate key"):
            return line + int(found.group(1)) - 1
    return line


def _toml_float(text: str) -> float:
    """A TOML float under the number limits: at most :data:`MAX_NUMBER_DIGITS` digits, and finite."""
    if sum(c.isdigit() for c in text) > MAX_NUMBER_DIGITS:
        raise _JsonRefusal(_digits_message(), text)
    value = float(text)
    if not math.isfinite(value):
        raise _JsonRefusal(_not_finite_message(text).replace(" or null", ""), text)  # TOML has no null
    return value


def _toml_line_of(text: str, token: str) -> int | None:
    """The line of the first value ``= token`` in TOML text (a parse hook is not told where it is)."""
    if not token:
        return None
    found = re.search(rf"=[ \t]*{re.escape(token)}(?![\w.])|[\[,][ \t]*{re.escape(token)}(?![\w.])", text)
    return text.count("\n", 0, found.start()) + 1 if found else None


def _line_at(text: str, position: int, line: int) -> int:
    return line + text.count("\n", 0, position)


def _too_deep_at(text: str) -> int | None:
    """The offset of the first bracket nested deeper than :data:`MAX_NESTING_DEPTH`, outside strings."""
    depth = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_NESTING_DEPTH:
                return match.start()
        elif token in "]}":
            depth -= 1
    return None


def _limit_error(source: Path | None, line: int | None, message: str) -> LocatedError:
    return LocatedError(Problem(source, line, "", message))


def _check_size(size: int, source: Path | None, line: int | None, max_bytes: int, what: str) -> None:
    if size > max_bytes:
        name = _SIZE_LIMITS.get(max_bytes, "max_bytes")
        raise _limit_error(
            source,
            line,
            f"{what} is {_mib(size)}, over the {_mib(max_bytes)} limit ({name}, {_LIMITS_DOC}); split it, "
            "or move what makes it this large out of it",
        )


def load_json_bounded(
    text: str | bytes,
    *,
    source: str | os.PathLike[str] | None,
    line: int = 1,
    max_bytes: int = MAX_LINE_BYTES,
    what: str = "the line",
) -> Any:
    """Parse one JSON document or JSONL line under the limits on hostile input, or raise a located error.

    The shared JSON reader of judgekit's files. It refuses, each with a message naming the limit: more than
    ``max_bytes`` (:data:`MAX_LINE_BYTES` or :data:`MAX_DOCUMENT_BYTES`), nesting deeper than
    :data:`MAX_NESTING_DEPTH`, a number longer than :data:`MAX_NUMBER_DIGITS` digits, ``NaN`` and
    ``Infinity`` (not JSON) and numbers too large to store, a key repeated in one object, bytes that are
    not UTF-8 and malformed JSON. Its time and memory are linear in the text's length.

    Args:
        text: The JSON text (bytes are decoded as UTF-8; a leading byte-order mark is allowed).
        source: The file it came from, for messages (``None`` when it came from no file).
        line: The 1-based line of the text's first character in ``source``.
        max_bytes: The size limit (:data:`MAX_LINE_BYTES` for a line, :data:`MAX_DOCUMENT_BYTES` for a
            whole file).
        what: What the text is, for the size message (``the line``, ``the file``).

    Returns:
        The parsed value.

    Raises:
        LocatedError: When a limit is exceeded or the text is not JSON, at ``source`` and the line.
    """
    path = Path(source) if source is not None else None
    _check_size(len(text), path, line, max_bytes, what)
    if isinstance(text, bytes):
        raw = text
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise _limit_error(
                path,
                line + raw[: exc.start].count(b"\n"),
                f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}); save the file as "
                "UTF-8",
            ) from None
    long_digits = _LONG_DIGITS.search(text)
    if long_digits is not None:
        blank = _outside_strings(text)
        outside = _LONG_DIGITS.search(blank)
        if outside is not None:
            raise _limit_error(path, _line_at(blank, outside.start(), line), _digits_message())
    if text.count("[") + text.count("{") > MAX_NESTING_DEPTH:
        deep = _too_deep_at(text)
        if deep is not None:
            raise _limit_error(path, _line_at(text, deep, line), _depth_message())
    try:
        return json.loads(
            text,
            object_pairs_hook=_reject_duplicates,
            parse_constant=_refuse_constant,
            parse_float=_finite_float,
        )
    except json.JSONDecodeError as exc:
        raise _limit_error(
            path, line + exc.lineno - 1, f"malformed JSON: {exc.msg} (column {exc.colno})"
        ) from None
    except _DuplicateKeyError as exc:
        raise _limit_error(
            path, _duplicate_line(text, line), f"duplicate key '{exc.key[:80]}' in one object; keep one"
        ) from None
    except _JsonRefusal as exc:
        blank = _outside_strings(text)
        at = blank.find(exc.token) if exc.token else -1
        raise _limit_error(path, _line_at(blank, at, line) if at >= 0 else line, str(exc)) from None
    except RecursionError:
        raise _limit_error(path, line, _depth_message()) from None
    except ValueError as exc:  # int() refusing a long number the digit check did not see
        raise _limit_error(path, line, f"{_digits_message()} ({exc})") from None


def _depth_of(value: Any) -> int:
    """The nesting depth of parsed data (lists and dicts), walked without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth + 1)
        if deepest > MAX_NESTING_DEPTH:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def load_toml_bounded(text: str, *, source: str | os.PathLike[str] | None) -> Any:
    """Parse TOML (a configuration file) under the same limits as JSON and YAML.

    Args:
        text: The decoded file.
        source: The file, for messages.

    Returns:
        The parsed table.

    Raises:
        LocatedError: (exit code 2) When the text is not TOML (``malformed TOML: ...`` at the line
            tomllib names), or when the file is larger than :data:`MAX_DOCUMENT_BYTES`, nests deeper than
            :data:`MAX_NESTING_DEPTH`, holds a number longer than :data:`MAX_NUMBER_DIGITS` digits or a
            float that is not finite (``inf``, ``nan``, or too large, such as ``1e400``).
    """
    import tomllib

    path = Path(source) if source is not None else None
    _check_size(len(text), path, None, MAX_DOCUMENT_BYTES, "the file")
    try:
        data = tomllib.loads(text, parse_float=_toml_float)
    except RecursionError:
        raise _limit_error(path, None, _depth_message()) from None
    except tomllib.TOMLDecodeError as exc:
        raise _toml_decode_error(path, exc) from None
    except _JsonRefusal as exc:  # a float too long, infinite or NaN
        raise _limit_error(path, _toml_line_of(text, exc.token), str(exc)) from None
    except ValueError:  # int() refusing a number longer than Python converts
        run = _LONG_DIGITS.search(text)
        raise _limit_error(path, _line_at(text, run.start(), 1) if run else None, _digits_message()) from None
    if _depth_of(data) > MAX_NESTING_DEPTH:
        raise _limit_error(path, None, _depth_message())
    return data


def _toml_decode_error(path: str | os.PathLike[str] | None, exc: ValueError) -> LocatedError:
    """A located ``malformed TOML`` error from :mod:`tomllib`'s decode error (its line, its words).

    Args:
        path: The file, for the message (``None``: text with no file).
        exc: The ``tomllib.TOMLDecodeError`` (a ``ValueError`` ending ``(at line N, column M)``).

    Returns:
        The error (exit code 2), at the line tomllib names, or at no line when it names none.
    """
    message = str(exc)
    match = re.search(r"\s*\(at line (\d+), column \d+\)$", message)
    line = int(match.group(1)) if match else None
    if match:
        message = message[: match.start()]
    return LocatedError(
        Problem(Path(path) if path is not None else None, line, "", f"malformed TOML: {message}"), exit_code=2
    )


def json_error_detail(message: str) -> str:
    """The short form of a :func:`load_json_bounded` message, for readers that say ``malformed JSON (...)``.

    Args:
        message: The located error's message.

    Returns:
        The decoder's complaint (``Expecting value``) for malformed JSON, ``not valid UTF-8`` for bytes
        that are not UTF-8, and the whole message for a limit (it names the limit).
    """
    if message.startswith("malformed JSON: "):
        return re.sub(r" \(column \d+\)$", "", message.removeprefix("malformed JSON: "))
    if message.startswith("not valid UTF-8"):
        return "not valid UTF-8"
    return message


def _shallow(raw: bytes) -> bool:
    """Whether JSON bytes nest at most :data:`MAX_NESTING_DEPTH` deep, at C speed.

    Strings are blanked, everything but brackets dropped, then innermost ``[]``/``{}`` pairs are peeled
    off one level a pass: a balanced text of depth ``d`` is empty after ``d`` passes. ``False`` (too deep,
    or unbalanced) sends the caller to the full parse, which names the problem.
    """
    brackets = _STRING_B.sub(b"", raw).translate(None, _NOT_BRACKETS)
    for _ in range(MAX_NESTING_DEPTH):
        if not brackets:
            return True
        # one pass of one pattern: two replaces in a row would peel {[]} (two levels) in one pass
        peeled = _INNERMOST_PAIR(b"", brackets)
        if len(peeled) == len(brackets):
            return False
        brackets = peeled
    return not brackets


def _suspect(data: bytes) -> bool:
    """Whether JSON bytes may break a limit on numbers or depth (``False`` proves they do not).

    Suspect: a digit run over the number limit, ``NaN``, ``Infinity``, a three-digit exponent, or more
    brackets than the depth limit that do not peel off within it.
    """
    zeroed = data.translate(_DIGITS_TO_ZERO)  # substring tests at C speed (a regex costs 10x more)
    return (
        _LONG_RUN in zeroed
        or b"e000" in zeroed
        or b"NaN" in zeroed
        or b"Infinity" in zeroed
        or (zeroed.count(b"[") > MAX_NESTING_DEPTH and not _shallow(data))
    )


def check_json_bounds(
    raw: str | bytes,
    *,
    source: str | os.PathLike[str] | None,
    line: int = 1,
    max_bytes: int = MAX_LINE_BYTES,
    what: str = "the line",
) -> None:
    """Refuse a JSONL line a fast parser (pydantic's ``model_validate_json``) should not be given.

    The same limits as :func:`load_json_bounded`, checked in a few passes at C speed: the size, then,
    only when a cheap test finds something to suspect (more brackets than the depth limit, a run of
    digits over the number limit, ``NaN``, ``Infinity`` or a three-digit exponent) in the line and again
    in the line with its strings emptied, the full bounded parse. Duplicate keys are not looked for (the
    full parse does that).

    Args:
        raw: The line (bytes, or text already decoded).
        source: The file, for messages (``None`` for text from no file).
        line: The line's 1-based number in ``source``.
        max_bytes: The size limit.
        what: What the text is, for the size message.

    Raises:
        LocatedError: When the line breaks a limit, at ``source:line``.
    """
    if len(raw) > max_bytes:
        _check_size(len(raw), Path(source) if source is not None else None, line, max_bytes, what)
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    # A false alarm is nearly always in a string (a hex hash holds "e123", a note says "NaN"): the same
    # tests again on the bytes outside strings (in JSON the parser accepts, the strings are exactly the
    # matches of one left-to-right pass of the string pattern, as _shallow already relies on).
    if _suspect(data) and _suspect(_STRING_B.sub(b'""', data)):
        try:
            load_json_bounded(raw, source=source, line=line, max_bytes=max_bytes, what=what)
        except LocatedError as exc:
            if not exc.problem.message.startswith(("malformed JSON", "duplicate key", "not valid UTF-8")):
                raise


def iter_lines(
    handle: BinaryIO, *, max_bytes: int = MAX_LINE_BYTES
) -> Iterator[tuple[int, bytes | None, bool]]:
    """Yield ``(line number, bytes, ends with newline)`` for each line of a binary file, bounded in memory.

    A line longer than ``max_bytes`` is read in pieces and dropped: it is yielded as ``None`` in place of
    its bytes (report it with :func:`line_too_long`), so a multi-gigabyte line never sits in memory.

    Args:
        handle: A file opened in binary mode (it needs ``readline(limit)``).
        max_bytes: The longest line kept (:data:`MAX_LINE_BYTES`).
    """
    for number, _, raw, complete in iter_lines_at(handle, max_bytes=max_bytes):
        yield number, raw, complete


def iter_lines_at(
    handle: BinaryIO, *, max_bytes: int = MAX_LINE_BYTES, start: int = 0
) -> Iterator[tuple[int, int, bytes | None, bool]]:
    r""":func:`iter_lines` with each line's byte offset: ``(line number, offset, bytes, ends with newline)``.

    Args:
        handle: A file opened in binary mode (it needs ``readline(limit)``), positioned at ``start``.
        max_bytes: The longest line kept (:data:`MAX_LINE_BYTES`); a longer one comes as ``None``.
        start: The offset of the handle's position in the file (a byte range's start), >= 0: the first
            line's offset.

    Example:
        >>> import io
        >>> list(iter_lines_at(io.BytesIO(b"ab\n\ncd"), start=10))
        [(1, 10, b'ab\n', True), (2, 13, b'\n', True), (3, 14, b'cd', False)]
    """
    number = 0
    offset = start
    while True:
        raw: bytes = handle.readline(max_bytes + 1)
        if not raw:
            return
        number += 1
        if len(raw) <= max_bytes or raw.endswith(b"\n"):
            yield number, offset, raw, raw.endswith(b"\n")
            offset += len(raw)
            continue
        at = offset
        piece = raw
        offset += len(raw)
        while piece and not piece.endswith(b"\n"):
            piece = handle.readline(1024 * 1024)
            offset += len(piece)
        yield number, at, None, piece.endswith(b"\n")


def line_too_long(
    source: str | os.PathLike[str] | None, line: int, max_bytes: int = MAX_LINE_BYTES
) -> Problem:
    """The problem for a line :func:`iter_lines` dropped as longer than ``max_bytes``.

    Args:
        source: The file.
        line: The line's 1-based number.
        max_bytes: The limit it broke.
    """
    name = _SIZE_LIMITS.get(max_bytes, "max_bytes")
    return Problem(
        Path(source) if source is not None else None,
        line,
        "",
        f"the line is longer than {_mib(max_bytes)} (limit {name}, {_LIMITS_DOC}); line left out. Split "
        "what makes it this large out of the line",
    )


_JITER_DUPLICATE = re.compile(r'Detected duplicate key "(.*)" at line \d+ column \d+\Z', re.DOTALL)


def check_duplicate_keys(raw: str | bytes, *, source: str | os.PathLike[str] | None, line: int = 1) -> None:
    """Refuse a JSON line that repeats a key in one object, which a fast parser reads as its last value.

    For lines a fast parser (pydantic's ``model_validate_json``) has already accepted: a repeated key
    (``{"verdict": "fail", "verdict": "pass"}``) is ambiguous, since readers differ on which value wins,
    so it is refused rather than read as either. Call it after :func:`check_json_bounds` (it assumes the
    depth and number limits hold).

    Args:
        raw: The line.
        source: The file, for messages (``None`` for text from no file).
        line: The line's 1-based number in ``source``.

    Raises:
        LocatedError: When an object repeats a key, at ``source:line``, naming the key.

    Examples:
        >>> check_duplicate_keys('{"verdict": "pass", "checks": [{"id": 1}]}', source=None)
        >>> check_duplicate_keys('{"verdict": "fail", "verdict": "pass"}', source="r.jsonl", line=3)
        Traceback (most recent call last):
        ...
        judgekit.errors.LocatedError: r.jsonl:3: duplicate key 'verdict' in one object; keep one
    """
    try:
        # jiter (Rust; pydantic's own JSON parser) finds a repeated key at a third of the cost of
        # json.loads with a Python hook on every object.
        jiter.from_json(
            raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw, catch_duplicate_keys=True
        )
    except ValueError as exc:
        found = _JITER_DUPLICATE.match(str(exc))
        if found is None:
            return  # not JSON the caller's parser accepted: its own error stands
        path = Path(source) if source is not None else None
        key = found.group(1)
        raise _limit_error(path, line, f"duplicate key '{key[:80]}' in one object; keep one") from None


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


def _parse_json(text: str, path: Path, offset: int = 0, *, max_bytes: int = MAX_DOCUMENT_BYTES) -> Document:
    what = "the line" if max_bytes == MAX_LINE_BYTES else "the file"
    try:
        data = load_json_bounded(text, source=path, line=1 + offset, max_bytes=max_bytes, what=what)
    except LocatedError as exc:
        if exc.problem.message.startswith("duplicate key"):
            # JSON is (nearly) YAML: the YAML walk locates the duplicate (both lines, full field path).
            try:
                _parse_yaml(text, path, offset)
            except LocatedError as located:
                if located.problem.message.startswith("duplicate key"):
                    raise LocatedError(located.problem) from None
            except JudgekitError:
                pass
        raise LocatedError(exc.problem) from None
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
    _check_size(len(text), path, None, MAX_DOCUMENT_BYTES, "the file")
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        for number, line in enumerate(jsonl_lines(text), start=1):
            if not line.strip():
                continue
            try:
                yield _parse_json(line, path, offset=number - 1, max_bytes=MAX_LINE_BYTES)
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
