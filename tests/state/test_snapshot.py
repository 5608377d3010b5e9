"""Tests for judgekit.state.snapshot: JSON document stores, SQLite files and SQL dumps."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from judgekit.errors import JudgekitError, LocatedError
from judgekit.state import load_state, snapshot_from_data, snapshot_from_sql, snapshot_from_sqlite

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "airdesk"

# The shape of tau-bench's airline database: tables keyed by id, records with nested objects and lists.
TAU_AIRLINE: dict[str, Any] = {
    "users": {
        "mia_li_3668": {
            "user_id": "mia_li_3668",
            "name": {"first_name": "Mia", "last_name": "Li"},
            "address": {"address1": "975 Sunset Drive", "city": "Austin", "country": "USA"},
            "payment_methods": {
                "credit_card_4421486": {"source": "credit_card", "brand": "visa", "last_four": "7447"},
                "certificate_7504069": {"source": "certificate", "amount": 250.0},
            },
            "saved_passengers": [{"first_name": "Amelia", "last_name": "Ahmed", "dob": "1957-03-21"}],
            "membership": "gold",
            "reservations": ["NO6JO3", "AIXC49"],
        }
    },
    "reservations": {
        "NO6JO3": {
            "reservation_id": "NO6JO3",
            "user_id": "mia_li_3668",
            "origin": "DFW",
            "destination": "LAX",
            "flights": [{"flight_number": "HAT170", "date": "2024-05-22", "price": 109}],
            "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
            "payment_history": [{"payment_id": "credit_card_4421486", "amount": 218.0}],
            "total_baggages": 1,
            "insurance": "no",
        }
    },
    "flights": {
        "HAT170": {
            "flight_number": "HAT170",
            "origin": "DFW",
            "destination": "LAX",
            "dates": {"2024-05-22": {"status": "available", "available_seats": {"economy": 12}}},
        }
    },
}


# --------------------------------------------------------------------------- JSON document stores


def test_tau_bench_shaped_document_store(tmp_path: Path) -> None:
    path = tmp_path / "db.json"
    path.write_text(json.dumps(TAU_AIRLINE), encoding="utf-8")
    state = load_state(path)
    assert sorted(state.tables) == ["flights", "reservations", "users"]
    user = state.tables["users"]["mia_li_3668"]
    assert user["name"] == {"first_name": "Mia", "last_name": "Li"}
    assert user["payment_methods"]["certificate_7504069"]["amount"] == 250
    assert type(user["payment_methods"]["certificate_7504069"]["amount"]) is int
    assert state.tables["reservations"]["NO6JO3"]["flights"][0]["flight_number"] == "HAT170"
    assert state.row_count() == 3
    assert state.source == str(path)
    assert state.to_data() == json.loads(json.dumps(state.tables))


def test_tau_bench_folder_of_tables(tmp_path: Path) -> None:
    folder = tmp_path / "db"
    folder.mkdir()
    for name, rows in TAU_AIRLINE.items():
        (folder / f"{name}.json").write_text(json.dumps(rows), encoding="utf-8")
    from_folder = load_state(folder)
    assert from_folder.digest() == snapshot_from_data(TAU_AIRLINE).digest()


def test_list_tables_are_keyed_by_id_or_position() -> None:
    state = snapshot_from_data(
        {"users": [{"id": "U-9", "n": 1}, {"id": "U-7", "n": 2}], "log": [{"event": "a"}, {"event": "b"}]}
    )
    assert state.tables["users"] == {"U-9": {"id": "U-9", "n": 1}, "U-7": {"id": "U-7", "n": 2}}
    assert state.tables["log"] == {"0": {"event": "a"}, "1": {"event": "b"}}


def test_numeric_ids_become_text_keys() -> None:
    state = snapshot_from_data({"t": [{"id": 1}, {"id": 2}]})
    assert list(state.tables["t"]) == ["1", "2"]


def test_duplicate_ids_in_a_list_table_are_refused() -> None:
    with pytest.raises(JudgekitError) as info:
        snapshot_from_data({"users": [{"id": "U-1"}, {"id": "U-1"}]}, source="db.json")
    assert str(info.value) == "db.json: table 'users' has records with the same id; ids must be unique"


def test_state_must_be_an_object_of_tables() -> None:
    with pytest.raises(JudgekitError) as info:
        snapshot_from_data([1, 2], source="db.json")
    assert str(info.value) == "db.json: a state must be an object of tables, found list"
    with pytest.raises(JudgekitError) as info:
        snapshot_from_data({"users": "nobody"}, source="db.json")
    assert str(info.value) == (
        "db.json: table 'users' must be an object of records keyed by id or a list of records, found str"
    )


def test_malformed_json_state_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "db.json"
    path.write_text('{\n  "users": {\n    "U-1": {"name": "A",}\n  }\n}\n', encoding="utf-8")
    with pytest.raises(JudgekitError) as info:
        load_state(path)
    assert str(info.value).startswith(f"{path}:3: malformed JSON: ")


def test_empty_state_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(JudgekitError, match=r"a state folder needs one <table>\.json file per table"):
        load_state(tmp_path)


# --------------------------------------------------------------------------- SQLite


def make_sqlite(path: Path, script: str) -> Path:
    conn = sqlite3.connect(path)
    try:
        conn.executescript(script)
        conn.commit()
    finally:
        conn.close()
    return path


def test_sqlite_rows_are_keyed_by_primary_key(tmp_path: Path) -> None:
    path = make_sqlite(
        tmp_path / "db.sqlite",
        "CREATE TABLE customers (customer_id TEXT PRIMARY KEY, name TEXT, tier TEXT);"
        "INSERT INTO customers VALUES ('C-2', 'Ben', 'gold'), ('C-1', 'Ana', NULL);",
    )
    state = load_state(path)
    assert state.tables["customers"] == {
        "C-1": {"customer_id": "C-1", "name": "Ana", "tier": None},
        "C-2": {"customer_id": "C-2", "name": "Ben", "tier": "gold"},
    }


def test_sqlite_composite_key_is_a_json_list_in_key_order(tmp_path: Path) -> None:
    path = make_sqlite(
        tmp_path / "db.db",
        "CREATE TABLE seats (seat TEXT, flight TEXT, date TEXT, who TEXT, PRIMARY KEY (flight, date, seat));"
        "INSERT INTO seats VALUES ('12A', 'SK1', '2026-12-01', 'Ana');",
    )
    state = load_state(path)
    assert list(state.tables["seats"]) == ['["SK1", "2026-12-01", "12A"]']


def test_sqlite_integer_primary_key_is_the_key(tmp_path: Path) -> None:
    path = make_sqlite(
        tmp_path / "db.sqlite3",
        "CREATE TABLE refunds (refund_id INTEGER PRIMARY KEY, amount REAL);"
        "INSERT INTO refunds VALUES (7, 412.18), (9, 35.0);",
    )
    state = load_state(path)
    assert state.tables["refunds"] == {
        "7": {"refund_id": 7, "amount": 412.18},
        "9": {"refund_id": 9, "amount": 35},
    }


def test_sqlite_table_without_key_uses_rowid(tmp_path: Path) -> None:
    path = make_sqlite(
        tmp_path / "db.sqlite",
        "CREATE TABLE log (event TEXT, payload BLOB);"
        "INSERT INTO log VALUES ('a', x'00ff'), ('b', NULL);"
        "DELETE FROM log WHERE event = 'a';"
        "INSERT INTO log VALUES ('c', NULL);",
    )
    state = load_state(path)
    assert state.tables["log"] == {"2": {"event": "b", "payload": None}, "3": {"event": "c", "payload": None}}


def test_sqlite_blobs_are_hex(tmp_path: Path) -> None:
    path = make_sqlite(
        tmp_path / "db.sqlite",
        "CREATE TABLE files (name TEXT PRIMARY KEY, data BLOB); INSERT INTO files VALUES ('f', x'00ff');",
    )
    assert load_state(path).tables["files"]["f"]["data"] == {"$bytes": "00ff"}


def test_sqlite_file_is_opened_read_only(tmp_path: Path) -> None:
    path = make_sqlite(
        tmp_path / "db.sqlite", "CREATE TABLE t (id TEXT PRIMARY KEY); INSERT INTO t VALUES ('x');"
    )
    before = path.read_bytes()
    snapshot_from_sqlite(path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db.sqlite"]


def test_not_a_sqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    path.write_text("this is not a database, just text that is long enough" * 20, encoding="utf-8")
    with pytest.raises(JudgekitError) as info:
        load_state(path)
    assert str(info.value).startswith(f"{path}: not a readable SQLite database (")


def test_missing_sqlite_file(tmp_path: Path) -> None:
    with pytest.raises(JudgekitError, match="no such SQLite file"):
        snapshot_from_sqlite(tmp_path / "absent.sqlite")


# --------------------------------------------------------------------------- SQL dumps


def test_sql_dump_equals_the_sqlite_file(tmp_path: Path) -> None:
    script = (
        "-- a comment\n"
        "CREATE TABLE t (\n  id TEXT PRIMARY KEY,\n  v REAL\n);\n\n"
        "INSERT INTO t VALUES ('a', 1.0);\nINSERT INTO t VALUES ('b', 2.5);\n"
        "-- trailing comment\n"
    )
    dump = snapshot_from_sql(script, source="dump.sql")
    assert dump.tables == {"t": {"a": {"id": "a", "v": 1}, "b": {"id": "b", "v": 2.5}}}
    assert dump.digest() == load_state(make_sqlite(tmp_path / "db.sqlite", script)).digest()


def test_sql_dump_error_names_the_statement_line(tmp_path: Path) -> None:
    path = tmp_path / "db.sql"
    path.write_text(
        "CREATE TABLE t (id TEXT PRIMARY KEY);\n"
        "INSERT INTO t VALUES ('a');\n"
        "\n"
        "INSERT INTO t\n"
        "  VALUES ('a');\n",
        encoding="utf-8",
    )
    with pytest.raises(JudgekitError) as info:
        load_state(path)
    assert str(info.value) == f"{path}:4: SQL statement failed: UNIQUE constraint failed: t.id"


def test_sql_dump_syntax_error_names_the_line() -> None:
    with pytest.raises(JudgekitError) as info:
        snapshot_from_sql("CREATE TABLE t (id TEXT);\nINSRT INTO t VALUES ('a');\n", source="x.sql")
    assert str(info.value) == 'x.sql:2: SQL statement failed: near "INSRT": syntax error'


def test_unterminated_sql_statement() -> None:
    with pytest.raises(JudgekitError) as info:
        snapshot_from_sql("CREATE TABLE t (id TEXT);\nINSERT INTO t VALUES ('a')\n", source="x.sql")
    assert str(info.value) == "x.sql:2: SQL statement is not terminated with ';'"


def test_sql_dump_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "db.sql"
    path.write_bytes(b"CREATE TABLE t (v TEXT);\nINSERT INTO t VALUES ('caf\xe9');\n")
    with pytest.raises(LocatedError) as info:
        load_state(path)
    assert info.value.problem.line == 2


def test_example_fixtures_load() -> None:
    base = load_state(EXAMPLE / "fixtures" / "base.sql")
    assert sorted(base.tables) == ["bookings", "customers", "flights", "payments", "refunds", "tasks"]
    assert base.tables["customers"]["C-1003"]["name"] == "Chlo\u00e9 Martin"
    assert base.tables["payments"]["PMT-50101"]["amount"] == 412.18
    assert base.tables["refunds"] == {}


# --------------------------------------------------------------------------- dispatch


def test_unknown_state_format(tmp_path: Path) -> None:
    path = tmp_path / "state.csv"
    path.write_text("a,b\n", encoding="utf-8")
    with pytest.raises(JudgekitError) as info:
        load_state(path)
    assert str(info.value) == (
        f"{path}: unknown state format '.csv'; use .json, a folder of .json tables, "
        ".sqlite, .sqlite3, .db or .sql"
    )


def test_missing_state_file(tmp_path: Path) -> None:
    with pytest.raises(JudgekitError) as info:
        load_state(tmp_path / "absent.json")
    assert str(info.value) == f"{tmp_path / 'absent.json'}: no such state file"


def test_snapshot_accessors() -> None:
    state = snapshot_from_data({"t": {"1": {"v": 1}}})
    assert state.table("t") == {"1": {"v": 1}}
    assert state.table("absent") is None
    assert state.source == "inline"
    assert state.digest() == snapshot_from_data({"t": {"1": {"v": 1.0}}}).digest()
