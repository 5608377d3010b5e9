"""Tests for judgekit.state.snapshot: JSON document stores, SQLite files and SQL dumps."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
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


# --------------------------------------------------------------------------- standard SQLite dumps

# Every feature a standard dump carries: an AUTOINCREMENT table (so sqlite_sequence rows), quoted names
# with spaces and quotes, text holding ';', newlines, quotes and comment markers, NULLs, blobs, floats,
# a composite key, a table without a key, an index, a view, a trigger, and sqlite_stat1 (ANALYZE).
FEATURES = '''
CREATE TABLE "order items" (
    "item id" INTEGER PRIMARY KEY AUTOINCREMENT,
    "note text" TEXT,
    price REAL,
    photo BLOB,
    qty INTEGER
);
CREATE TABLE "seat ""map""" ("flight no" TEXT, seat TEXT, who TEXT, PRIMARY KEY ("flight no", seat));
CREATE TABLE audit (item INTEGER, what TEXT);
CREATE TABLE sqlite3_notes (id TEXT PRIMARY KEY, body TEXT);
CREATE TRIGGER "log item" AFTER INSERT ON "order items" BEGIN
    INSERT INTO audit VALUES (new."item id", 'added; ' || coalesce(new."note text", '-'));
    UPDATE "order items" SET qty = coalesce(qty, 0) WHERE "item id" = new."item id";
END;
INSERT INTO "order items" ("note text", price, photo, qty) VALUES
    ('refund; then close', 412.18, x'00ff3b0a', 1),
    ('line one
line two; -- not a comment /* nor this */', 0.30000000000000004, NULL, NULL),
    (NULL, 1e300, x'', -7),
    ('it''s "quoted"', -2.5e-10, x'3b3b', 9223372036854775807),
    ('gone', 0.0, NULL, 0),
    ('Chlo\u00e9 \u2014 caf\u00e9', NULL, x'e2809c', 3);
DELETE FROM "order items" WHERE "note text" = 'gone';
INSERT INTO "seat ""map""" VALUES ('SK 1', '12A', 'Ana'), ('SK 1', '12B', NULL), ('SK;2', '1A', 'Ben');
INSERT INTO sqlite3_notes VALUES ('n1', 'a table whose name starts with sqlite but is not internal');
CREATE INDEX "by price" ON "order items" (price);
CREATE UNIQUE INDEX seat_who ON "seat ""map""" (who);
CREATE VIEW "cheap items" AS SELECT "item id", price FROM "order items" WHERE price < 1;
ANALYZE;
'''

STATE_TABLES = ["audit", "order items", 'seat "map"', "sqlite3_notes"]


def feature_database(path: Path) -> Path:
    """A SQLite file built from FEATURES; checks that it really has every feature the dumps must carry."""
    make_sqlite(path, FEATURES)
    conn = sqlite3.connect(path)
    try:
        kinds = {(kind, name) for kind, name in conn.execute("SELECT type, name FROM sqlite_master")}
        sequence = conn.execute("SELECT seq FROM sqlite_sequence").fetchall()
    finally:
        conn.close()
    for kind, name in [
        ("view", "cheap items"),
        ("trigger", "log item"),
        ("index", "by price"),
        ("table", "sqlite_sequence"),
        ("table", "sqlite_stat1"),
    ]:
        assert (kind, name) in kinds
    assert sequence == [(6,)]  # the deleted row's id is still used up
    return path


def iterdump(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return "\n".join(conn.iterdump())
    finally:
        conn.close()


def test_iterdump_of_a_database_with_every_feature_loads_as_the_database(tmp_path: Path) -> None:
    database = feature_database(tmp_path / "source.sqlite")
    dump = tmp_path / "state.sql"
    dump.write_text(iterdump(database), encoding="utf-8")
    text = dump.read_text(encoding="utf-8")
    for part in ("BEGIN TRANSACTION;", 'DELETE FROM "sqlite_sequence";', "CREATE TRIGGER", "COMMIT;"):
        assert part in text

    loaded = load_state(dump)
    direct = snapshot_from_sqlite(database)

    assert sorted(loaded.tables) == STATE_TABLES  # no view, no sqlite_sequence, no sqlite_stat1
    assert loaded.tables == direct.tables
    assert loaded.digest() == direct.digest()
    items = loaded.tables["order items"]
    assert sorted(items) == ["1", "2", "3", "4", "6"]
    assert items["1"]["photo"] == {"$bytes": "00ff3b0a"}
    assert items["2"]["note text"] == "line one\nline two; -- not a comment /* nor this */"
    assert items["2"]["price"] == 0.30000000000000004
    assert items["3"] == {"item id": 3, "note text": None, "price": 1e300, "photo": {"$bytes": ""}, "qty": -7}
    assert items["4"]["qty"] == 9223372036854775807
    assert loaded.tables["audit"]["1"] == {"item": 1, "what": "added; refund; then close"}
    assert loaded.tables['seat "map"']['["SK;2", "1A"]'] == {"flight no": "SK;2", "seat": "1A", "who": "Ben"}


# The sqlite3 CLI's `.dump` of a small AUTOINCREMENT database, as sqlite3 3.40 prints it (text with a
# newline is written as replace(...)); written out by hand so the test runs without the CLI.
CLI_DUMP = "\n".join(
    [
        "PRAGMA foreign_keys=OFF;",
        "BEGIN TRANSACTION;",
        'CREATE TABLE IF NOT EXISTS "order items" ("item id" INTEGER PRIMARY KEY AUTOINCREMENT, '
        "note TEXT, price REAL, photo BLOB);",
        """INSERT INTO "order items" VALUES(1,replace('a; b\\nc','\\n',char(10)),0.3000000000000000444,"""
        "X'003b');",
        """INSERT INTO "order items" VALUES(2,NULL,1.0000000000000000047e+300,NULL);""",
        """INSERT INTO "order items" VALUES(3,'it''s',0.0,X'');""",
        "CREATE TABLE log(event TEXT);",
        "INSERT INTO log VALUES('y');",
        "INSERT INTO log VALUES('z');",
        "ANALYZE sqlite_schema;",
        "INSERT INTO sqlite_stat1 VALUES('log',NULL,'2');",
        "INSERT INTO sqlite_stat1 VALUES('order items','by price','3 1');",
        "DELETE FROM sqlite_sequence;",
        "INSERT INTO sqlite_sequence VALUES('order items',3);",
        """CREATE INDEX "by price" ON "order items"(price);""",
        """CREATE VIEW "cheap items" AS SELECT * FROM "order items" WHERE price < 1;""",
        """CREATE TRIGGER note_log AFTER INSERT ON "order items" BEGIN INSERT INTO log VALUES """
        "('added; ' || new.note); END;",
        "COMMIT;",
        "",
    ]
)


def test_sqlite3_cli_dump_format_loads(tmp_path: Path) -> None:
    path = tmp_path / "state.sql"
    path.write_text(CLI_DUMP, encoding="utf-8")
    state = load_state(path)
    assert state.tables == {
        "log": {"1": {"event": "y"}, "2": {"event": "z"}},
        "order items": {
            "1": {"item id": 1, "note": "a; b\nc", "price": 0.30000000000000004, "photo": {"$bytes": "003b"}},
            "2": {"item id": 2, "note": None, "price": 1e300, "photo": None},
            "3": {"item id": 3, "note": "it's", "price": 0, "photo": {"$bytes": ""}},
        },
    }


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="the sqlite3 command-line tool is not installed")
@pytest.mark.parametrize("command", [".dump", ".dump --preserve-rowids"])
def test_real_sqlite3_cli_dump_loads_as_the_database(tmp_path: Path, command: str) -> None:
    database = feature_database(tmp_path / "source.sqlite")
    if command == ".dump --preserve-rowids":
        make_sqlite(database, "DELETE FROM audit WHERE item = 1;")  # a rowid gap only this keeps
    run = subprocess.run(
        ["sqlite3", str(database), command], capture_output=True, text=True, encoding="utf-8", check=True
    )
    assert run.stdout.startswith("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n")
    assert run.stdout.endswith("COMMIT;\n")
    dump = tmp_path / "state.sql"
    dump.write_text(run.stdout, encoding="utf-8")
    loaded = load_state(dump)
    assert sorted(loaded.tables) == STATE_TABLES
    assert loaded.tables == snapshot_from_sqlite(database).tables


def test_trigger_in_a_dump_runs_on_later_inserts() -> None:
    state = snapshot_from_sql(
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);\n"
        "CREATE TABLE log (what TEXT);\n"
        "CREATE TRIGGER t_log AFTER INSERT ON t BEGIN\n"
        "  INSERT INTO log VALUES ('one; ' || new.v);\n"
        "  INSERT INTO log VALUES ('two');\n"
        "END;\n"
        "INSERT INTO t VALUES (1, 'x');\n"
    )
    assert state.tables["log"] == {"1": {"what": "one; x"}, "2": {"what": "two"}}


def test_semicolons_in_comments_quotes_and_empty_statements_are_not_ends() -> None:
    state = snapshot_from_sql(
        "-- header; with a semicolon\n"
        "/* a block; comment\n   over lines; */\n"
        'CREATE TABLE [odd;name] (`a;b` TEXT, "c;d" TEXT);;\n'
        "INSERT INTO [odd;name] VALUES ('x;y', 'it''s;'); INSERT INTO [odd;name] VALUES ('--', '/*');\n"
        ";\n"
        "-- trailing; comment\n"
        "/* trailing block */\n"
    )
    assert state.tables == {
        "odd;name": {"1": {"a;b": "x;y", "c;d": "it's;"}, "2": {"a;b": "--", "c;d": "/*"}}
    }


def test_hand_written_begin_without_commit_still_loads() -> None:
    state = snapshot_from_sql("BEGIN;\nCREATE TABLE t (id TEXT PRIMARY KEY);\nINSERT INTO t VALUES ('a');\n")
    assert state.tables == {"t": {"a": {"id": "a"}}}


def test_sqlite_internal_and_view_names_are_not_state_tables(tmp_path: Path) -> None:
    path = make_sqlite(
        tmp_path / "db.sqlite",
        "CREATE TABLE sqlite3_notes (id TEXT PRIMARY KEY); INSERT INTO sqlite3_notes VALUES ('n');"
        "CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT); INSERT INTO t VALUES (NULL);"
        "CREATE VIEW v AS SELECT * FROM t; CREATE INDEX t_id ON t (id); ANALYZE;",
    )
    assert sorted(snapshot_from_sqlite(path).tables) == ["sqlite3_notes", "t"]


def test_failing_statement_in_a_dump_names_its_line(tmp_path: Path) -> None:
    database = make_sqlite(
        tmp_path / "source.sqlite",
        "CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT);"
        "INSERT INTO t (v) VALUES ('two\nlines; here');"
        "CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; SELECT 2; END;",
    )
    lines = iterdump(database).splitlines()
    commit = lines.index("COMMIT;")
    lines.insert(commit, "INSERT INTO \"t\" VALUES(1,'again');")  # the dump's own row has id 1
    path = tmp_path / "broken.sql"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(JudgekitError) as info:
        load_state(path)
    assert str(info.value) == f"{path}:{commit + 1}: SQL statement failed: UNIQUE constraint failed: t.id"


def test_dump_cut_off_inside_a_trigger_names_the_trigger_line(tmp_path: Path) -> None:
    path = tmp_path / "cut.sql"
    path.write_text(
        "BEGIN TRANSACTION;\nCREATE TABLE t (v TEXT);\n"
        "CREATE TRIGGER tr AFTER INSERT ON t BEGIN\n  SELECT 1;\n  SELECT 2;\n",
        encoding="utf-8",
    )
    with pytest.raises(JudgekitError) as info:
        load_state(path)
    assert str(info.value) == f"{path}:3: SQL statement is not terminated with ';'"


def test_dump_with_an_unclosed_quote_names_the_statement_line() -> None:
    with pytest.raises(JudgekitError) as info:
        snapshot_from_sql(
            "CREATE TABLE t (v TEXT);\n\nINSERT INTO t VALUES ('open;\nINSERT INTO t VALUES ('b');\n",
            source="x.sql",
        )
    assert str(info.value) == "x.sql:3: SQL statement is not terminated with ';'"


def test_dump_that_rolls_back_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "failed.sql"
    path.write_text(
        "PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\nCREATE TABLE t (v TEXT);\n"
        "INSERT INTO t VALUES('a');\nROLLBACK; -- due to errors\n",
        encoding="utf-8",
    )
    with pytest.raises(JudgekitError) as info:
        load_state(path)
    assert str(info.value) == (
        f"{path}:5: ROLLBACK would throw away the dump's changes (the sqlite3 CLI writes "
        "'ROLLBACK; -- due to errors' when it could not read the database); dump the database again, "
        "or end the transaction with COMMIT"
    )


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


@pytest.mark.parametrize(
    "statement",
    [
        pytest.param("ATTACH DATABASE '{target}' AS other;", id="attach"),
        pytest.param("VACUUM INTO '{target}';", id="vacuum_into"),
    ],
)
def test_a_dump_may_not_open_a_file(tmp_path: Path, statement: str) -> None:
    # A .sql state is written by whoever edits the case set: loading it must not create or write a file.
    target = tmp_path / "written-by-the-dump.db"
    dump = tmp_path / "state.sql"
    dump.write_text(
        "CREATE TABLE t(id TEXT PRIMARY KEY);\n" + statement.format(target=target) + "\n", encoding="utf-8"
    )
    with pytest.raises(JudgekitError) as caught:
        load_state(dump)
    assert str(caught.value).startswith(f"{dump}:2: the statement opens the database file '{target}'")
    assert not target.exists()
