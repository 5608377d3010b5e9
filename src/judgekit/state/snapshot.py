"""State snapshots: the world as tables of records keyed by id, read from JSON, SQLite or SQL dumps.

A :class:`Snapshot` maps table name to ``{row key: record}``. Every source becomes this one shape:

* **JSON document stores** (the shape tau-bench's airline and retail databases use): an object of
  tables, each an object of records keyed by id, or a list of records (keyed by their ``id`` field, or
  by position when they have none). A folder of ``<table>.json`` files is one state.
* **SQLite files**: one table per SQLite table; rows keyed by the primary key (several key columns are
  joined as a JSON list), or by ``rowid`` when the table has none. Views and SQLite's own tables
  (``sqlite_sequence``, ``sqlite_stat1``, ...) are not part of the state.
* **SQL dumps** (hand-written, ``sqlite3 DB .dump`` or ``Connection.iterdump()``): executed statement by
  statement into an in-memory SQLite database, then read as above.

Values are put in canonical form (:mod:`judgekit.state.canonical`) when the snapshot is made.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

from judgekit.errors import JudgekitError
from judgekit.io.documents import MAX_DOCUMENT_BYTES, decode_utf8, load_json_bounded
from judgekit.state.canonical import canonical, canonical_hash

__all__ = [
    "SQLITE_SUFFIXES",
    "Snapshot",
    "load_state",
    "snapshot_from_data",
    "snapshot_from_sql",
    "snapshot_from_sqlite",
]

SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")


@dataclass(frozen=True)
class Snapshot:
    """A world state in canonical form.

    Attributes:
        tables: Table name to ``{row key: record}``; records are canonical JSON-like values (usually
            mappings of field to value). Treat as read-only.
        source: Where it was read from (a path or ``"inline"``), for messages.
    """

    tables: Mapping[str, Mapping[str, Any]]
    source: str = "inline"

    def table(self, name: str) -> Mapping[str, Any] | None:
        """The rows of a table, or ``None`` when the state has no such table."""
        return self.tables.get(name)

    def row_count(self) -> int:
        """Total number of rows over all tables."""
        return sum(len(rows) for rows in self.tables.values())

    def digest(self) -> str:
        """SHA-256 of the canonical JSON form: equal for equal states, for identity checks only.

        Computed once per snapshot and remembered (a snapshot's tables are read-only), so that checking
        many trials against one cached fixture hashes the fixture once.
        """
        cached = self.__dict__.get("_digest")
        if cached is None:
            cached = canonical_hash(self.tables)
            self.__dict__["_digest"] = cached  # not a field: equality and repr are unaffected
        return str(cached)

    def to_data(self) -> dict[str, dict[str, Any]]:
        """Plain nested dicts (a copy), e.g. for writing the state as JSON."""
        return json.loads(json.dumps(self.tables))  # type: ignore[no-any-return]


def _rows_of(name: str, value: Any, source: str) -> dict[str, Any]:
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        if value and all(isinstance(r, dict) and "id" in r for r in value):
            rows = {str(r["id"]): canonical(r) for r in value}
            if len(rows) != len(value):
                raise JudgekitError(
                    f"{source}: table '{name}' has records with the same id; ids must be unique"
                )
            return rows
        return {str(i): canonical(r) for i, r in enumerate(value)}
    raise JudgekitError(
        f"{source}: table '{name}' must be an object of records keyed by id or a list of records, "
        f"found {type(value).__name__}"
    )


def snapshot_from_data(data: Any, *, source: str = "inline") -> Snapshot:
    """Make a snapshot from a JSON document store (an object of tables).

    Raises:
        JudgekitError: When the data is not an object of tables.
    """
    if not isinstance(data, dict):
        raise JudgekitError(f"{source}: a state must be an object of tables, found {type(data).__name__}")
    return Snapshot({str(name): _rows_of(str(name), rows, source) for name, rows in data.items()}, source)


def _sql_value(value: Any) -> Any:
    return {"$bytes": bytes(value).hex()} if isinstance(value, bytes | memoryview) else value


def _read_connection(conn: sqlite3.Connection, source: str) -> Snapshot:
    tables: dict[str, dict[str, Any]] = {}
    names = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
            "ORDER BY name"
        )
    ]
    for name in names:
        quoted = '"' + name.replace('"', '""') + '"'
        info = conn.execute(f"PRAGMA table_info({quoted})").fetchall()
        columns = [row[1] for row in info]
        pk = [row[1] for row in sorted((r for r in info if r[5]), key=lambda r: r[5])]
        if pk:
            select = f"SELECT * FROM {quoted}"
            pk_idx = [columns.index(c) for c in pk]
            cursor = conn.execute(select)
            rows: dict[str, Any] = {}
            for row in cursor:
                key_parts = [row[i] for i in pk_idx]
                key = str(key_parts[0]) if len(key_parts) == 1 else json.dumps(key_parts)
                rows[key] = canonical({c: _sql_value(v) for c, v in zip(columns, row, strict=True)})
        else:
            cursor = conn.execute(f"SELECT rowid, * FROM {quoted}")
            rows = {
                str(row[0]): canonical({c: _sql_value(v) for c, v in zip(columns, row[1:], strict=True)})
                for row in cursor
            }
        tables[name] = rows
    return Snapshot(tables, source)


def snapshot_from_sqlite(path: str | PathLike[str]) -> Snapshot:
    """Read a SQLite database file (opened read-only; the file is never modified).

    Args:
        path: The database file, as text or a path object.

    Raises:
        JudgekitError: When the file is missing or not a SQLite database.
    """
    path = Path(path)
    if not path.is_file():
        raise JudgekitError(f"{path}: no such SQLite file")
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise JudgekitError(f"{path}: cannot open as SQLite: {exc}") from None
    try:
        return _read_connection(conn, str(path))
    except sqlite3.DatabaseError as exc:
        raise JudgekitError(f"{path}: not a readable SQLite database ({exc})") from None
    finally:
        conn.close()


# The parts of SQL text that can hide a ';' (quoted strings and names, comments), and ';' itself. An
# unterminated string or comment runs to the end of the text, as in SQLite's own tokenizer.
_SQL_SPECIAL = re.compile(
    r"'[^']*(?:''[^']*)*'?"  # 'text', with '' inside
    r'|"[^"]*(?:""[^"]*)*"?'  # "name", with "" inside
    r"|`[^`]*(?:``[^`]*)*`?"  # `name`
    r"|\[[^\]]*\]?"  # [name]
    r"|--[^\n]*"  # -- comment to the end of the line
    r"|/\*.*?(?:\*/|\Z)"  # /* comment */
    r"|;",
    re.DOTALL,
)
_ROLLBACK = re.compile(r"ROLLBACK(?:\s+TRANSACTION)?\s*;", re.IGNORECASE)


def _sql_statements(text: str, source: str) -> Iterator[tuple[int, str]]:
    """Split SQL text into single statements, in order.

    A statement ends at a ``;`` outside quotes and comments at which SQLite deems it complete, so that a
    ``CREATE TRIGGER ... BEGIN ...; ...; END;`` is one statement and a ``;`` inside text is not an end.

    Args:
        text: The whole SQL text.
        source: Where the text came from, for messages.

    Yields:
        ``(line, statement)``: the 1-based line the statement's first word is on, and the statement's
        text from that word to its closing ``;``. Empty statements (a lone ``;``) are skipped.

    Raises:
        JudgekitError: When text other than comments follows the last complete statement.
    """
    line = 1  # the line of position `counted`
    counted = 0
    start = -1  # where the current statement's first word is, or -1 before it
    position = 0  # the end of the last match
    for match in _SQL_SPECIAL.finditer(text):
        if start < 0:
            gap = text[position : match.start()]
            if gap.strip():
                start = position + len(gap) - len(gap.lstrip())
        position = match.end()
        token = match.group()
        if token.startswith(("--", "/*")):
            continue
        if token != ";":
            if start < 0:
                start = match.start()
            continue
        if start < 0:
            continue  # an empty statement
        statement = text[start:position]
        if sqlite3.complete_statement(statement):
            line += text.count("\n", counted, start)
            counted = start
            yield line, statement
            start = -1
    if start < 0 and text[position:].strip():
        start = position + len(text[position:]) - len(text[position:].lstrip())
    if start >= 0:
        line += text.count("\n", counted, start)
        raise JudgekitError(f"{source}:{line}: SQL statement is not terminated with ';'")


def snapshot_from_sql(text: str, *, source: str = "inline") -> Snapshot:
    """Execute a SQL dump into an in-memory SQLite database and read it.

    Reads hand-written dumps and the dumps of ``sqlite3 DB .dump`` and Python's
    ``sqlite3.Connection.iterdump()``: statements run one at a time, exactly as written, so the dump's
    own ``BEGIN TRANSACTION;`` ... ``COMMIT;`` work, as do ``PRAGMA`` statements, triggers (whose
    bodies hold ``;``), views, indexes and the ``sqlite_sequence`` rows of ``AUTOINCREMENT`` tables.
    What is read is what :func:`snapshot_from_sqlite` reads: tables only, without views or SQLite's
    own tables.

    Args:
        text: The SQL text.
        source: Where it came from (a path or ``"inline"``), for messages and the snapshot's ``source``.

    Raises:
        JudgekitError: When a statement fails or is not terminated, naming the line the statement
            starts on; or when the dump rolls its transaction back (the ``sqlite3`` CLI writes
            ``ROLLBACK; -- due to errors`` when it could not read the database), which would leave
            no state.
    """
    conn = sqlite3.connect(":memory:", isolation_level=None)  # no implicit BEGIN or COMMIT
    files: list[str] = []
    conn.set_authorizer(_no_files(files))
    try:
        for line, statement in _sql_statements(text, source):
            if _ROLLBACK.fullmatch(statement):
                raise JudgekitError(
                    f"{source}:{line}: ROLLBACK would throw away the dump's changes (the sqlite3 CLI "
                    "writes 'ROLLBACK; -- due to errors' when it could not read the database); dump "
                    "the database again, or end the transaction with COMMIT"
                )
            try:
                conn.execute(statement).close()
            except sqlite3.Error as exc:
                if files:
                    raise JudgekitError(
                        f"{source}:{line}: the statement opens the database file {files[0]!r} (ATTACH or "
                        "VACUUM INTO); a state dump is loaded in memory and may not read or write files: "
                        "remove the statement"
                    ) from None
                raise JudgekitError(f"{source}:{line}: SQL statement failed: {exc}") from None
        return _read_connection(conn, source)
    finally:
        conn.close()


def _no_files(denied: list[str]) -> Callable[[int, str | None, str | None, str | None, str | None], int]:
    """A SQLite authorizer that refuses ``ATTACH`` (and ``VACUUM INTO``, authorised as one), noting the file.

    A ``.sql`` state comes from a case file whoever edits the set wrote: loading it must not create, read
    or overwrite a file on disk.
    """

    def authorize(
        action: int, arg1: str | None, arg2: str | None, db: str | None, trigger: str | None
    ) -> int:
        if action == sqlite3.SQLITE_ATTACH:
            denied.append(arg1 or "")
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    return authorize


def load_state(path: str | PathLike[str]) -> Snapshot:
    """Read a state from a file or folder, by its kind.

    ``.json``: a document store; a folder: one ``<table>.json`` per table; ``.sqlite``/``.sqlite3``/
    ``.db``: a SQLite file; ``.sql``: a SQL dump.

    Args:
        path: The file or folder, as text or a path object.

    Raises:
        JudgekitError: When the path is missing, of an unknown kind, or unreadable.
    """
    path = Path(path)
    if path.is_dir():
        files = sorted(path.glob("*.json"))
        if not files:
            raise JudgekitError(f"{path}: a state folder needs one <table>.json file per table; found none")
        tables: dict[str, Any] = {}
        for file in files:
            tables[file.stem] = _load_json(file)
        return snapshot_from_data(tables, source=str(path))
    if not path.exists():
        raise JudgekitError(f"{path}: no such state file")
    suffix = path.suffix.lower()
    if suffix == ".json":
        return snapshot_from_data(_load_json(path), source=str(path))
    if suffix in SQLITE_SUFFIXES:
        return snapshot_from_sqlite(path)
    if suffix == ".sql":
        from judgekit.io.documents import read_regular

        return snapshot_from_sql(decode_utf8(read_regular(path, "state file"), path), source=str(path))
    raise JudgekitError(
        f"{path}: unknown state format '{suffix}'; use .json, a folder of .json tables, "
        f"{', '.join(SQLITE_SUFFIXES)} or .sql"
    )


def _load_json(path: Path) -> Any:
    from judgekit.io.documents import read_regular

    return load_json_bounded(
        decode_utf8(read_regular(path, "state file"), path),
        source=path,
        max_bytes=MAX_DOCUMENT_BYTES,
        what="the state file",
    )
