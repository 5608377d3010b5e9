"""State snapshots: the world as tables of records keyed by id, read from JSON, SQLite or SQL dumps.

A :class:`Snapshot` maps table name to ``{row key: record}``. Every source becomes this one shape:

* **JSON document stores** (the shape tau-bench's airline and retail databases use): an object of
  tables, each an object of records keyed by id, or a list of records (keyed by their ``id`` field, or
  by position when they have none). A folder of ``<table>.json`` files is one state.
* **SQLite files**: one table per SQLite table; rows keyed by the primary key (several key columns are
  joined as a JSON list), or by ``rowid`` when the table has none.
* **SQL dumps**: executed into an in-memory SQLite database, then read as above.

Values are put in canonical form (:mod:`judgekit.state.canonical`) when the snapshot is made.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
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
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
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


def snapshot_from_sql(text: str, *, source: str = "inline") -> Snapshot:
    """Execute a SQL dump into an in-memory SQLite database and read it.

    Statements run one at a time so that an error names the line its statement starts on.

    Raises:
        JudgekitError: When a statement fails, with its line.
    """
    conn = sqlite3.connect(":memory:")
    try:
        pending: list[str] = []
        start_line = 1
        for number, line in enumerate(text.splitlines(keepends=True), start=1):
            if not pending:
                if not line.strip():
                    continue
                start_line = number
            pending.append(line)
            statement = "".join(pending)
            if sqlite3.complete_statement(statement):
                pending = []
                try:
                    conn.executescript(statement)
                except sqlite3.Error as exc:
                    raise JudgekitError(f"{source}:{start_line}: SQL statement failed: {exc}") from None
        leftover = "".join(pending).strip()
        if leftover and not all(
            part.strip().startswith("--") for part in leftover.splitlines() if part.strip()
        ):
            raise JudgekitError(f"{source}:{start_line}: SQL statement is not terminated with ';'")
        return _read_connection(conn, source)
    finally:
        conn.close()


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
        return snapshot_from_sql(decode_utf8(path.read_bytes(), path), source=str(path))
    raise JudgekitError(
        f"{path}: unknown state format '{suffix}'; use .json, a folder of .json tables, "
        f"{', '.join(SQLITE_SUFFIXES)} or .sql"
    )


def _load_json(path: Path) -> Any:
    return load_json_bounded(
        decode_utf8(path.read_bytes(), path), source=path, max_bytes=MAX_DOCUMENT_BYTES, what="the state file"
    )
