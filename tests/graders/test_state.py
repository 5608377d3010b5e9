from __future__ import annotations

import copy
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graders._build import by_id
from judgekit.cases import ExpectedState, FieldPredicate
from judgekit.graders.state import check_state, evaluate_predicate, lookup_field
from judgekit.state import Snapshot, canonical, load_state, snapshot_from_data
from judgekit.verdict import FailureCategory, Verdict, combine_gate_verdicts


def changes(spec: dict[str, Any], **kw: Any) -> ExpectedState:
    return ExpectedState.model_validate({"changes": spec, **kw})


def verdict(checks: list[Any]) -> Verdict:
    return combine_gate_verdicts([c.verdict for c in checks])


# --------------------------------------------------------------------------- predicates


@pytest.mark.parametrize(
    ("pred", "present", "value", "ok"),
    [
        pytest.param({"equals": 412.18}, True, 412.18, True, id="equals"),
        pytest.param({"equals": 1}, True, 1.0, True, id="equals_int_float"),
        pytest.param({"equals": "x"}, True, "y", False, id="equals_differs"),
        pytest.param({"equals": {"a": [1, 2]}}, True, {"a": [1, 2]}, True, id="equals_mapping"),
        pytest.param({"equals": None}, True, None, True, id="equals_null"),
        pytest.param({"equals": None}, False, None, False, id="equals_absent"),
        pytest.param({"approx": 41.6, "tol": 0.005}, True, 41.604, True, id="approx_in"),
        pytest.param({"approx": 41.6, "tol": 0.005}, True, 41.61, False, id="approx_out"),
        pytest.param({"approx": 1.0}, True, "1.0", False, id="approx_text"),
        pytest.param({"approx": 1.0}, True, True, False, id="approx_bool"),
        pytest.param({"one_of": ["high", "urgent"]}, True, "urgent", True, id="one_of"),
        pytest.param({"one_of": ["high", "urgent"]}, True, "low", False, id="one_of_no"),
        pytest.param({"matches": "^PMT-\\d+$"}, True, "PMT-88213", True, id="matches"),
        pytest.param({"matches": "^\\d+$"}, True, 412, True, id="matches_number_as_text"),
        pytest.param({"matches": "x"}, True, "y", False, id="matches_no"),
        pytest.param({"present": True}, True, None, True, id="present"),
        pytest.param({"present": True}, False, None, False, id="present_missing"),
        pytest.param({"present": False}, False, None, True, id="present_false_means_absent"),
        pytest.param({"absent": True}, False, None, True, id="absent"),
        pytest.param({"absent": True}, True, 1, False, id="absent_there"),
        pytest.param({"absent": False}, True, 1, True, id="absent_false_means_present"),
    ],
)
def test_predicates(pred: dict[str, Any], present: bool, value: Any, ok: bool) -> None:
    problem = evaluate_predicate(FieldPredicate.model_validate(pred), present, canonical(value))
    assert (problem is None) is ok, problem


def test_lookup_field_reads_keys_then_dotted_paths() -> None:
    row = {"a.b": 1, "a": {"b": 2, "c": [{"d": 3}]}}
    assert lookup_field(row, "a.b") == (True, 1)
    assert lookup_field(row, "a.c.0.d") == (True, 3)
    assert lookup_field(row, "a.c.1.d") == (False, None)
    assert lookup_field(row, "z") == (False, None)


# --------------------------------------------------------------------------- changes form

INITIAL = snapshot_from_data(
    {
        "refunds": {},
        "payments": {
            "PMT-1": {"amount": 412.18, "status": "settled"},
            "PMT-2": {"amount": 99, "status": "settled"},
        },
        "customers": {
            "C-1": {"email": "a@example.com", "updated_at": "t0"},
            "C-2": {"email": "b@example.com", "updated_at": "t0"},
        },
    }
)


def with_rows(base: Snapshot, **tables: dict[str, Any]) -> Snapshot:
    data = {name: dict(rows) for name, rows in base.tables.items()}
    for name, rows in tables.items():
        data.setdefault(name, {}).update(rows)
    return snapshot_from_data(data)


def test_expected_added_row_passes() -> None:
    spec = ExpectedState.model_validate({"refunds": [{"payment_id": "PMT-1", "amount": 412.18}]})
    final = with_rows(INITIAL, refunds={"RF-1": {"payment_id": "PMT-1", "amount": 412.18, "method": "card"}})
    checks = by_id(check_state(spec, initial=INITIAL, final=final))
    assert checks["state"].verdict is Verdict.PASS
    assert checks["state:collateral"].verdict is Verdict.PASS


def test_missing_added_row_is_incomplete_execution() -> None:
    spec = ExpectedState.model_validate({"refunds": [{"payment_id": "PMT-1", "amount": 412.18}]})
    checks = by_id(check_state(spec, initial=INITIAL, final=INITIAL))
    state = checks["state"]
    assert state.verdict is Verdict.FAIL
    assert state.category is FailureCategory.INCOMPLETE_EXECUTION
    assert "no row was added" in state.reason
    assert checks["state:collateral"].verdict is Verdict.PASS


def test_wrong_added_row_is_invalid_arguments_with_closest_row() -> None:
    spec = ExpectedState.model_validate({"refunds": [{"payment_id": "PMT-1", "amount": 412.18}]})
    final = with_rows(INITIAL, refunds={"RF-1": {"payment_id": "PMT-1", "amount": 500}})
    checks = by_id(check_state(spec, initial=INITIAL, final=final))
    state = checks["state"]
    assert state.verdict is Verdict.FAIL
    assert state.category is FailureCategory.INVALID_ARGUMENTS
    (ev,) = state.evidence
    assert ev.data["closest"]["RF-1"]["problems"] == ["amount: expected 412.18, found 500"]
    # the unmatched added row is itself collateral
    assert checks["state:collateral"].verdict is Verdict.FAIL
    assert "refunds/RF-1: row added" in checks["state:collateral"].reason


def test_added_rows_are_matched_as_an_assignment_not_greedily() -> None:
    # In order, the first expected row would take RF-1 (10) and leave the second with nothing.
    spec = changes({"refunds": {"added": [{"amount": {"one_of": [10, 20]}}, {"amount": 10}]}})
    final = with_rows(INITIAL, refunds={"RF-1": {"amount": 10}, "RF-2": {"amount": 20}})
    checks = by_id(check_state(spec, initial=INITIAL, final=final))
    assert checks["state"].verdict is Verdict.PASS, checks["state"].reason
    assert checks["state:collateral"].verdict is Verdict.PASS


def test_two_identical_expected_rows_need_two_added_rows() -> None:
    spec = changes({"refunds": {"added": [{"amount": 10}, {"amount": 10}]}})
    final = with_rows(INITIAL, refunds={"RF-1": {"amount": 10}})
    state = by_id(check_state(spec, initial=INITIAL, final=final))["state"]
    assert state.verdict is Verdict.FAIL
    assert "each needed by another expected row" in state.reason


def test_modified_row_with_collateral_field_and_row() -> None:
    spec = changes({"customers": {"modified": {"C-1": {"email": "new@example.com"}}}})
    final = with_rows(
        INITIAL,
        customers={
            "C-1": {"email": "new@example.com", "updated_at": "t0", "phone": "+44"},
            "C-2": {"email": "new@example.com", "updated_at": "t0"},
        },
    )
    checks = by_id(check_state(spec, initial=INITIAL, final=final))
    assert checks["state"].verdict is Verdict.PASS
    collateral = checks["state:collateral"]
    assert collateral.verdict is Verdict.FAIL
    assert collateral.category is FailureCategory.POLICY_VIOLATION
    (ev,) = collateral.evidence
    assert ev.data["lines"] == [
        "customers/C-1: phone: (absent) -> '+44'",
        "customers/C-2: email: 'b@example.com' -> 'new@example.com'",
    ]
    assert set(ev.data["diff"]["customers"]["modified"]) == {"C-1", "C-2"}


def test_modified_row_not_changed_is_incomplete() -> None:
    spec = changes({"customers": {"modified": {"C-1": {"email": "new@example.com"}}}})
    state = by_id(check_state(spec, initial=INITIAL, final=INITIAL))["state"]
    assert state.verdict is Verdict.FAIL
    assert state.category is FailureCategory.INCOMPLETE_EXECUTION
    assert "(the row was not changed)" in state.reason


def test_ignore_fields_hides_churn_everywhere() -> None:
    spec = changes(
        {"customers": {"modified": {"C-1": {"email": "new@example.com"}}}}, ignore_fields=["updated_at"]
    )
    final = with_rows(
        INITIAL,
        customers={
            "C-1": {"email": "new@example.com", "updated_at": "t1"},
            "C-2": {"email": "b@example.com", "updated_at": "t9"},
        },
    )
    assert verdict(check_state(spec, initial=INITIAL, final=final)) is Verdict.PASS


def test_removed_rows() -> None:
    spec = changes({"payments": {"removed": ["PMT-2"]}})
    final = snapshot_from_data(
        {**INITIAL.to_data(), "payments": {"PMT-1": INITIAL.tables["payments"]["PMT-1"]}}
    )
    assert verdict(check_state(spec, initial=INITIAL, final=final)) is Verdict.PASS
    state = by_id(check_state(spec, initial=INITIAL, final=INITIAL))["state"]
    assert state.verdict is Verdict.FAIL
    assert "still present" in state.reason


def test_empty_changes_means_nothing_may_change() -> None:
    spec = changes({})
    final = with_rows(INITIAL, payments={"PMT-2": {"amount": 0, "status": "settled"}})
    checks = by_id(check_state(spec, initial=INITIAL, final=final))
    assert checks["state"].verdict is Verdict.PASS
    assert checks["state:collateral"].verdict is Verdict.FAIL
    assert "payments/PMT-2: amount: 99 -> 0" in checks["state:collateral"].reason


@pytest.mark.parametrize(
    ("spec", "final", "message"),
    [
        pytest.param(
            {"refund": {"added": [{"amount": 1}]}}, None, "table 'refund' is in neither", id="table"
        ),
        pytest.param({"payments": {"removed": ["PMT-9"]}}, None, "has no such row", id="removed_unknown"),
        pytest.param(
            {"payments": {"modified": {"PMT-9": {"amount": 1}}}},
            None,
            "in neither state",
            id="modified_unknown",
        ),
    ],
)
def test_expectations_that_do_not_fit_the_states_are_errors(
    spec: dict[str, Any], final: Any, message: str
) -> None:
    state = by_id(check_state(changes(spec), initial=INITIAL, final=INITIAL))["state"]
    assert state.verdict is Verdict.ERROR
    assert message in state.reason


def test_missing_inputs_are_errors_with_reasons() -> None:
    spec = changes({"refunds": {"added": [{"amount": 1}]}})
    (no_final,) = check_state(
        spec, initial=INITIAL, final=None, missing={"final": "the transcript records no final_state"}
    )
    assert no_final.verdict is Verdict.ERROR
    assert "records no final_state" in no_final.reason
    (no_initial,) = check_state(spec, initial=None, final=INITIAL)
    assert no_initial.verdict is Verdict.ERROR
    assert "initial" in no_initial.reason
    (no_expected,) = check_state(ExpectedState(snapshot="x.json"), initial=None, final=INITIAL)
    assert no_expected.verdict is Verdict.ERROR
    (absent,) = check_state(None, initial=None, final=None)
    assert absent.verdict is Verdict.NOT_EVALUATED


def test_a_table_created_by_the_conversation() -> None:
    spec = changes({"tasks": {"added": [{"queue": "refunds_manual"}]}})
    final = with_rows(INITIAL, tasks={"T-1": {"queue": "refunds_manual"}})
    assert verdict(check_state(spec, initial=INITIAL, final=final)) is Verdict.PASS


def test_graders_never_mutate_their_inputs() -> None:
    spec = changes(
        {"customers": {"modified": {"C-1": {"email": "x"}}}, "refunds": {"added": [{"amount": 1}]}}
    )
    final = with_rows(INITIAL, customers={"C-2": {"email": "z"}}, refunds={"R": {"amount": 2}})
    before = (copy.deepcopy(INITIAL.to_data()), copy.deepcopy(final.to_data()), spec.model_dump())
    check_state(spec, initial=INITIAL, final=final)
    check_state(ExpectedState(snapshot="s"), initial=INITIAL, final=final, expected=INITIAL)
    assert (INITIAL.to_data(), final.to_data(), spec.model_dump()) == before


# --------------------------------------------------------------------------- collateral in SQLite


def _sqlite(path: Path, statements: list[str]) -> Path:
    conn = sqlite3.connect(path)
    with conn:
        for sql in statements:
            conn.execute(sql)
    conn.close()
    return path


SCHEMA = [
    "CREATE TABLE orders (id TEXT PRIMARY KEY, customer_id TEXT, address TEXT, status TEXT)",
    "INSERT INTO orders VALUES ('O-1', 'C-1', '1 Main St', 'awaiting_dispatch')",
    "INSERT INTO orders VALUES ('O-2', 'C-2', '9 Elm Rd', 'awaiting_dispatch')",
    "CREATE TABLE audit (id INTEGER PRIMARY KEY, note TEXT)",
]


def test_collateral_change_caught_in_sqlite(tmp_path: Path) -> None:
    initial = load_state(_sqlite(tmp_path / "initial.sqlite", SCHEMA))
    final = load_state(
        _sqlite(
            tmp_path / "final.sqlite",
            [
                *SCHEMA,
                "UPDATE orders SET address = '5 New Rd' WHERE id = 'O-1'",
                "UPDATE orders SET address = '5 New Rd' WHERE id = 'O-2'",
                "INSERT INTO audit (note) VALUES ('address changed')",
            ],
        )
    )
    spec = changes({"orders": {"modified": {"O-1": {"address": "5 New Rd", "status": "awaiting_dispatch"}}}})
    checks = by_id(check_state(spec, initial=initial, final=final))
    assert checks["state"].verdict is Verdict.PASS
    collateral = checks["state:collateral"]
    assert collateral.verdict is Verdict.FAIL
    assert collateral.evidence[0].data["lines"] == [
        "audit/1: row added",
        "orders/O-2: address: '9 Elm Rd' -> '5 New Rd'",
    ]


def test_sqlite_snapshot_form_splits_intended_and_collateral(tmp_path: Path) -> None:
    initial = load_state(_sqlite(tmp_path / "i.db", SCHEMA))
    expected = load_state(
        _sqlite(tmp_path / "e.db", [*SCHEMA, "UPDATE orders SET address = 'A' WHERE id = 'O-1'"])
    )
    final = load_state(
        _sqlite(
            tmp_path / "f.db",
            [
                *SCHEMA,
                "UPDATE orders SET address = 'B' WHERE id = 'O-1'",
                "UPDATE orders SET status = 'x' WHERE id = 'O-2'",
            ],
        )
    )
    checks = by_id(
        check_state(ExpectedState(snapshot="e.db"), initial=initial, final=final, expected=expected)
    )
    assert checks["state"].verdict is Verdict.FAIL
    assert checks["state"].category is FailureCategory.INVALID_ARGUMENTS
    assert checks["state"].evidence[0].data["lines"] == ["orders/O-1: address: 'A' -> 'B'"]
    assert checks["state:collateral"].evidence[0].data["lines"] == [
        "orders/O-2: status: 'awaiting_dispatch' -> 'x'"
    ]


# ------------------------------------------------------------------ collateral in a JSON document store

TAU_SHAPED = {
    "users": {
        "mia_li_3668": {
            "user_id": "mia_li_3668",
            "payment_methods": {
                "certificate_1": {"id": "certificate_1", "source": "certificate", "amount": 250}
            },
            "reservations": ["NO6JO3"],
        },
        "omar_2": {
            "user_id": "omar_2",
            "payment_methods": {"gift_card_9": {"id": "gift_card_9", "source": "gift_card", "amount": 80}},
            "reservations": ["ZZ1"],
        },
    },
    "reservations": {
        "NO6JO3": {
            "reservation_id": "NO6JO3",
            "user_id": "mia_li_3668",
            "cabin": "economy",
            "passengers": [{"first_name": "Mia"}],
        },
        "ZZ1": {
            "reservation_id": "ZZ1",
            "user_id": "omar_2",
            "cabin": "business",
            "passengers": [{"first_name": "Omar"}],
        },
    },
}


def test_collateral_change_caught_in_a_json_document_store(tmp_path: Path) -> None:
    (tmp_path / "initial.json").write_text(json.dumps(TAU_SHAPED), encoding="utf-8")
    final_data = copy.deepcopy(TAU_SHAPED)
    final_data["reservations"]["NO6JO3"]["cabin"] = "business"
    final_data["users"]["omar_2"]["payment_methods"]["gift_card_9"]["amount"] = 0  # another user's money
    (tmp_path / "final.json").write_text(json.dumps(final_data), encoding="utf-8")
    initial = load_state(tmp_path / "initial.json")
    final = load_state(tmp_path / "final.json")
    spec = changes({"reservations": {"modified": {"NO6JO3": {"cabin": "business"}}}})
    checks = by_id(check_state(spec, initial=initial, final=final))
    assert checks["state"].verdict is Verdict.PASS
    collateral = checks["state:collateral"]
    assert collateral.verdict is Verdict.FAIL
    assert collateral.evidence[0].data["lines"] == [
        "users/omar_2: payment_methods.gift_card_9.amount: 80 -> 0"
    ]
    assert collateral.evidence[0].data["diff"] == {
        "users": {
            "modified": {"omar_2": [{"path": "payment_methods.gift_card_9.amount", "old": 80, "new": 0}]}
        }
    }


def test_nested_list_field_expected_by_dotted_path() -> None:
    initial = snapshot_from_data(TAU_SHAPED)
    data = copy.deepcopy(TAU_SHAPED)
    data["reservations"]["NO6JO3"]["passengers"][0]["first_name"] = "Maya"
    spec = changes(
        {"reservations": {"modified": {"NO6JO3": {"passengers": {"equals": [{"first_name": "Maya"}]}}}}}
    )
    assert verdict(check_state(spec, initial=initial, final=snapshot_from_data(data))) is Verdict.PASS


# --------------------------------------------------------------------------- snapshot form properties

ROWS = st.dictionaries(
    st.sampled_from(["a", "b", "c", "d"]), st.fixed_dictionaries({"v": st.integers(0, 3)}), max_size=4
)
STATES = st.fixed_dictionaries({"t1": ROWS, "t2": ROWS})


@settings(max_examples=200, deadline=None)
@given(initial=STATES, expected=STATES, final=STATES)
def test_snapshot_verdict_is_equality_and_the_two_checks_partition_the_differences(
    initial: dict[str, Any], expected: dict[str, Any], final: dict[str, Any]
) -> None:
    i, e, f = (snapshot_from_data(x) for x in (initial, expected, final))
    checks = by_id(check_state(ExpectedState(snapshot="s"), initial=i, final=f, expected=e))
    assert (verdict(list(checks.values())) is Verdict.PASS) == (expected == final)
    reported: set[tuple[str, str]] = set()
    for check in checks.values():
        for ev in check.evidence:
            for table, entry in ev.data["diff"].items():
                for kind in ("added", "removed", "modified"):
                    keys = {(table, k) for k in entry.get(kind, {})}
                    assert not keys & reported, "a row is reported by both checks"
                    reported |= keys
    differing = {
        (t, k)
        for t in ("t1", "t2")
        for k in set(expected[t]) | set(final[t])
        if expected[t].get(k) != final[t].get(k)
    }
    assert reported == differing


# --------------------------------------------------------------------------- tau-bench airline agreement


def _shared_data() -> Path:
    env = os.environ.get("JUDGEKIT_SHARED_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


TAU = _shared_data() / "tau-bench-airline"


def _apply(initial: Snapshot, diff: dict[str, Any]) -> Snapshot:
    """Apply a tau-bench replay diff (table -> id -> {op, changes: {dotted.path: {old, new}}, record})."""
    tables = dict(initial.tables)
    for name, rows in diff.items():
        table = dict(tables.get(name, {}))
        for key, entry in rows.items():
            if entry["op"] == "added":
                table[key] = canonical(entry["record"])
            elif entry["op"] == "removed":
                table.pop(key, None)
            else:
                record = copy.deepcopy(table[key])
                for path, change in sorted(entry["changes"].items()):
                    *parents, leaf = path.split(".")
                    node = record
                    for part in parents:
                        node = node.setdefault(part, {})
                    if "new" in change:
                        node[leaf] = change["new"]
                    else:
                        node.pop(leaf, None)
                table[key] = canonical(record)
        tables[name] = table
    return Snapshot(tables, "replayed")


@pytest.mark.skipif(
    not (TAU / "gpt-4o-trajectories.jsonl").is_file(), reason="shared tau-bench data not present"
)
def test_state_grader_agrees_with_tau_bench_db_match_on_all_trajectories() -> None:
    initial = load_state(TAU / "db")
    assert {name: len(rows) for name, rows in initial.tables.items()} == {
        "flights": 300,
        "reservations": 2000,
        "users": 500,
    }
    rows = [
        json.loads(line)
        for line in (TAU / "gpt-4o-trajectories.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert len(rows) == 200
    spec = ExpectedState(snapshot="expected")
    agree = 0
    for row in rows:
        final = _apply(initial, row["final_db_diff"])
        expected = _apply(initial, row["expected_db_diff"])
        checks = check_state(spec, initial=initial, final=final, expected=expected)
        passed = verdict(checks) is Verdict.PASS
        agree += passed == row["db_match"]
        if not passed:
            failing = [c for c in checks if c.verdict is Verdict.FAIL]
            assert failing
            assert all(c.category is not None and c.evidence and c.evidence[0].data["lines"] for c in failing)
    assert agree == 200
    assert sum(r["db_match"] for r in rows) == 88


@settings(max_examples=200, deadline=None)
@given(initial=STATES, final=STATES)
def test_diff_is_the_same_whether_rows_are_shared_or_copied(
    initial: dict[str, Any], final: dict[str, Any]
) -> None:
    i = snapshot_from_data(initial)
    copied = snapshot_from_data(copy.deepcopy(final))
    shared = Snapshot(
        {
            name: {k: (i.tables[name][k] if i.tables[name].get(k) == v else v) for k, v in rows.items()}
            for name, rows in copied.tables.items()
        }
    )
    from judgekit.state import diff_states

    assert diff_states(i, shared).to_data() == diff_states(i, copied).to_data()
    assert diff_states(shared, i).to_data() == diff_states(copied, i).to_data()
