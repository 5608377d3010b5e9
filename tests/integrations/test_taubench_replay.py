"""Copy-on-write replay for tau-bench's tools=: the same states as a deep-copy replay, notes that reach
the run, and the shared airline run replayed with tools."""

from __future__ import annotations

import asyncio
import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from judgekit.integrations.taubench import apply_diff, load_run, pass_hat_k_table, replay_actions
from judgekit.integrations.taubench_replay import REPLAY_NOTES_KEY, CowTable, Replayer
from judgekit.integrations.taubench_reward import DB_MATCH_KEY, same_db
from judgekit.state import canonical_json, snapshot_from_data
from judgekit.verdict import Verdict
from support import load_file

REPO = Path(__file__).resolve().parents[2]


def _shared_data() -> Path:
    env = os.environ.get("JUDGEKIT_SHARED_DATA")
    if env:
        return Path(env)
    return REPO / ".." / "shared" / "data"


TAU = _shared_data() / "tau-bench-airline"
HAS_TAU = (TAU / "gpt-4o-airline.raw.json").is_file() and (TAU / "gpt-4o-trajectories.jsonl").is_file()

# --------------------------------------------------------------------------- a small database and tools

RAW: dict[str, Any] = {
    "users": {
        "u1": {"n": 1, "score": 1.0, "meta": {"n": 2.0, "ok": True}, "tags": ["a"]},
        "u2": {"n": 5, "score": 2.5, "meta": {"n": 0, "ok": False}, "tags": []},
        "u3": {"n": 0, "score": 0.0, "meta": {}, "tags": ["x", "y"]},
    },
    "orders": {"o1": {"user": "u1", "total": 10.0, "lines": [{"sku": "k", "qty": 1}]}},
}


def set_field(data: dict[str, Any], table: str, key: str, field: str, value: Any) -> str:
    data[table][key][field] = value
    return "ok"


def set_nested(data: dict[str, Any], table: str, key: str, value: Any) -> str:
    data[table][key].setdefault("meta", {})["n"] = value
    return "ok"


def append(data: dict[str, Any], table: str, key: str, value: Any) -> str:
    data[table][key].setdefault("tags", []).append(value)
    return "ok"


def put(data: dict[str, Any], table: str, key: str, record: Any) -> str:
    data[table][key] = record
    return "ok"


def delete(data: dict[str, Any], table: str, key: str) -> str:
    del data[table][key]
    return "ok"


def pop(data: dict[str, Any], table: str, key: str) -> str:
    return json.dumps(data[table].pop(key))


def bump_all(data: dict[str, Any], table: str) -> str:
    for record in data[table].values():
        if isinstance(record, dict):
            record["n"] = record.get("n", 0) + 1
    return "ok"


def alias(data: dict[str, Any], table: str, source: str, target: str) -> str:
    data[table][target] = data[table][source]  # both rows are then one object, as in a dict
    return "ok"


def keep_part(data: dict[str, Any], table: str, source: str, target: str) -> str:
    data[table][target] = {"copied_from": source, "meta": data[table][source]["meta"]}
    return "ok"


def fail_after_write(data: dict[str, Any], table: str, key: str) -> str:
    data[table][key]["n"] = -1
    raise ValueError(f"boom on {key}")


def read(data: dict[str, Any], table: str, key: str) -> str:
    return json.dumps(data[table][key])


def replace_table(data: dict[str, Any], table: str) -> str:
    data[table] = {"z": {"n": 1.0}}
    return "ok"


def new_table(data: dict[str, Any]) -> str:
    data.setdefault("extra", {})["e1"] = {"n": 1}
    return "ok"


TOOLS = {
    f.__name__: f
    for f in (
        set_field,
        set_nested,
        append,
        put,
        delete,
        pop,
        bump_all,
        alias,
        keep_part,
        fail_after_write,
        read,
        replace_table,
        new_table,
    )
}

TABLES = st.sampled_from(["users", "orders", "nope"])
KEYS = st.sampled_from(["u1", "u2", "u3", "o1", "n1"])
VALUES = st.one_of(
    st.integers(-3, 3),
    st.sampled_from([1.0, 2.0, 0.5, -0.0, True, False, None, "s", "1"]),
    st.lists(st.integers(0, 2), max_size=2),
)
RECORDS = st.dictionaries(st.sampled_from(["n", "meta", "tags", "x"]), VALUES, max_size=3)

CALLS = st.one_of(
    st.tuples(
        st.just("set_field"),
        st.fixed_dictionaries(
            {"table": TABLES, "key": KEYS, "field": st.sampled_from(["n", "score", "x"]), "value": VALUES}
        ),
    ),
    st.tuples(st.just("set_nested"), st.fixed_dictionaries({"table": TABLES, "key": KEYS, "value": VALUES})),
    st.tuples(st.just("append"), st.fixed_dictionaries({"table": TABLES, "key": KEYS, "value": VALUES})),
    st.tuples(st.just("put"), st.fixed_dictionaries({"table": TABLES, "key": KEYS, "record": RECORDS})),
    st.tuples(
        st.sampled_from(["delete", "pop", "read", "fail_after_write"]),
        st.fixed_dictionaries({"table": TABLES, "key": KEYS}),
    ),
    st.tuples(st.sampled_from(["bump_all", "replace_table"]), st.fixed_dictionaries({"table": TABLES})),
    st.tuples(
        st.sampled_from(["alias", "keep_part"]),
        st.fixed_dictionaries({"table": TABLES, "source": KEYS, "target": KEYS}),
    ),
    st.tuples(st.sampled_from(["new_table", "unknown_tool"]), st.just({})),
)
SEQUENCES = st.lists(CALLS, max_size=8)


def _deep_copy_replay(calls: list[tuple[str, dict[str, Any]]]) -> tuple[dict[str, Any], list[str]]:
    """The plain replay: a deep copy of the whole database per sequence (what load_run did before)."""
    return replay_actions(RAW, copy.deepcopy(calls), TOOLS)


def _shape(tables: Any) -> list[tuple[str, list[str]]]:
    return [(name, list(rows)) for name, rows in tables.items()]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=SEQUENCES, second=SEQUENCES)
# a row made from part of another, which a later replay changes in place
@example(
    first=[("keep_part", {"table": "users", "source": "u1", "target": "n1"})],
    second=[("set_nested", {"table": "users", "key": "u1", "value": 5})],
)
def test_copy_on_write_replay_makes_exactly_the_deep_copy_states(
    first: list[tuple[str, dict[str, Any]]], second: list[tuple[str, dict[str, Any]]]
) -> None:
    raw = copy.deepcopy(RAW)
    pristine = repr(raw)  # types (1, 1.0, True), values and key order
    initial = snapshot_from_data(copy.deepcopy(RAW))
    replayer = Replayer(initial, TOOLS, raw=raw)
    a, b = replayer.replay(first, source="a"), replayer.replay(second, source="b")
    for calls, out in ((first, a), (second, b)):
        expected_data, expected_notes = _deep_copy_replay(calls)
        expected = snapshot_from_data(expected_data)
        # same tables, rows, row order and canonical values (types included)
        assert _shape(out.state.tables) == _shape(expected.tables)
        assert canonical_json(out.state.tables) == canonical_json(expected.tables)
        assert out.state.digest() == expected.digest()
        # the same calls failed, with the same errors
        assert [f"call {n.index}: {n.tool}: {n.error}" for n in out.notes if n.error != "unknown tool"] == [
            n for n in expected_notes if "unknown tool" not in n
        ]
        assert [n.index for n in out.notes] == [int(n.split()[1].rstrip(":")) for n in expected_notes]
    # tau-bench's typed database comparison gives the deep-copy answer
    assert a.same_db(b) is same_db(_deep_copy_replay(first)[0], _deep_copy_replay(second)[0])
    assert a.same_db(a)
    # a later replay leaves earlier results alone: the first sequence again gives the same database
    again = replayer.replay(first, source="again")
    assert again.same_db(a)
    assert a.same_db(again)
    assert again.state.digest() == a.state.digest()
    # the shared database is as it was, and so is the initial snapshot
    assert repr(raw) == pristine
    assert canonical_json(initial.tables) == canonical_json(snapshot_from_data(RAW).tables)


def test_untouched_tables_and_records_are_shared_with_the_initial_database() -> None:
    initial = snapshot_from_data(copy.deepcopy(RAW))
    replayer = Replayer(initial, TOOLS, raw=copy.deepcopy(RAW))
    out = replayer.replay(
        [
            ("read", {"table": "orders", "key": "o1"}),
            ("set_field", {"table": "users", "key": "u2", "field": "n", "value": 9}),
        ],
        source="s",
    )
    assert out.notes == ()
    assert out.state.tables["orders"] is initial.tables["orders"]  # read only: the initial table itself
    users = out.state.tables["users"]
    assert users is not initial.tables["users"]
    assert users["u1"] is initial.tables["users"]["u1"]  # unchanged rows are the initial records
    assert users["u2"]["n"] == 9
    assert initial.tables["users"]["u2"]["n"] == 5


def test_a_table_view_behaves_as_a_mapping_of_the_rows() -> None:
    data = copy.deepcopy(RAW)
    initial = snapshot_from_data(copy.deepcopy(RAW))
    seen: dict[str, Any] = {}

    def inspect_table(data: dict[str, Any]) -> str:
        users = data["users"]
        seen["type"] = type(users)
        seen["keys"] = list(users)
        seen["same"] = users["u1"] is users["u1"]
        del users["u1"]
        users["u1"] = {"n": 0}
        seen["after"] = (list(users), len(users), "u1" in users, users.get("u9"))
        return "ok"

    out = Replayer(initial, {"inspect": inspect_table}, raw=data).replay([("inspect", {})], source="s")
    assert seen == {
        "type": CowTable,
        "keys": ["u1", "u2", "u3"],
        "same": True,
        "after": (["u2", "u3", "u1"], 3, True, None),  # a deleted then added row goes last, as in a dict
    }
    assert list(out.state.tables["users"]) == ["u2", "u3", "u1"]


# --------------------------------------------------------------------------- notes reach the run


def update_email(data: dict[str, Any], user_id: str, email: str) -> str:
    data["users"][user_id]["email"] = email  # raises KeyError for an unknown user
    return "ok"


NOTE_TOOLS = {"update_email": update_email}
TASK = {
    "user_id": "u1",
    "instruction": "You are u1. Change your email to new@x.io.",
    "actions": [{"name": "update_email", "kwargs": {"user_id": "u1", "email": "new@x.io"}}],
    "outputs": [],
}


def _episode(
    trial: int, calls: list[tuple[str, dict[str, Any], str]], task: dict[str, Any] = TASK
) -> dict[str, Any]:
    traj: list[dict[str, Any]] = [
        {"role": "system", "content": "# Policy"},
        {"role": "user", "content": "Hi"},
    ]
    for i, (name, args, result) in enumerate(calls):
        call = {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        traj.append({"role": "assistant", "content": None, "tool_calls": [call]})
        traj.append({"role": "tool", "tool_call_id": f"c{i}", "name": name, "content": result})
    traj.append({"role": "assistant", "content": "Done."})
    return {
        "task_id": 3,
        "trial": trial,
        "reward": 0.0,
        "info": {"task": task, "source": "user", "reward_info": {"reward": 0.0, "info": {}}},
        "traj": traj,
    }


def _write_run(tmp_path: Path, episodes: list[dict[str, Any]]) -> Path:
    (tmp_path / "db").mkdir()
    (tmp_path / "db" / "users.json").write_text(json.dumps({"u1": {"email": "old@x.io"}}))
    path = tmp_path / "results.json"
    path.write_text(json.dumps(episodes))
    return path


def test_failing_and_unknown_calls_are_located_problems_and_trial_metadata(tmp_path: Path) -> None:
    ok = ("update_email", {"user_id": "u1", "email": "new@x.io"}, "ok")
    results = _write_run(
        tmp_path,
        [
            # the agent named a tool the domain lacks; tau-bench told it so
            _episode(0, [("lookup_mail", {"user_id": "u1"}, "Unknown action lookup_mail"), ok]),
            # a call that raises on replay; tau-bench had returned the error to the agent as well
            _episode(1, [("update_email", {"user_id": "u9", "email": "x"}, "Error: 'u9'"), ok]),
            # a call that raises on replay although the episode recorded a normal result
            _episode(2, [ok, ("update_email", {"user": "u1"}, '{"status": "updated"}')]),
        ],
    )
    run = load_run(results, db=tmp_path / "db", tools=NOTE_TOOLS)
    assert [(p.file, p.line, p.field) for p in run.problems] == [
        (results, 1, "traj"),
        (results, 2, "traj"),
        (results, 3, "traj"),
    ]
    messages = [p.message for p in run.problems]
    assert messages[0] == (
        "task-3 trial 1: call 0 (lookup_mail) failed on replay: unknown tool; "
        "tau-bench also returned an error to the agent for this call"
    )
    assert messages[1] == (
        "task-3 trial 2: call 0 (update_email) failed on replay: KeyError: 'u9'; "
        "tau-bench also returned an error to the agent for this call"
    )
    assert messages[2].startswith("task-3 trial 3: call 1 (update_email) failed on replay: TypeError: ")
    assert messages[2].endswith(
        "; judgekit could not replay this call as it happened; the replayed state may differ"
    )
    notes = [t.transcript.metadata.get(REPLAY_NOTES_KEY) for t in run.trials]
    assert notes[0] == [
        {
            "call": 0,
            "tool": "lookup_mail",
            "error": "unknown tool",
            "episode_error": True,
            "meaning": "tau-bench also returned an error to the agent for this call",
        }
    ]
    assert notes[2][0]["episode_error"] is False
    # the failing calls changed nothing: every trial's database matches the ground truth's
    assert [t.transcript.metadata[DB_MATCH_KEY] for t in run.trials] == [True, True, True]
    grades = asyncio.run(run.grade_all())
    assert [g.verdict for g in grades] == [Verdict.PASS] * 3
    # the notes reach each graded trial's tau-bench:db check, as evidence
    db_checks = [next(c for c in g.checks if c.check_id == "tau-bench:db") for g in grades]
    assert db_checks[0].reason.endswith("; 1 call(s) failed on replay as in the episode")
    assert db_checks[0].evidence[-1].summary == (
        "replay: call 0 (lookup_mail): unknown tool; tau-bench also returned an error to the agent for "
        "this call"
    )
    assert "1 call(s) could not be replayed as they happened" in db_checks[2].reason


def test_a_failing_ground_truth_action_is_a_problem_of_the_task(tmp_path: Path) -> None:
    task = {**TASK, "actions": [{"name": "update_email", "kwargs": {"user_id": "nobody", "email": "e"}}]}
    results = _write_run(tmp_path, [_episode(0, [], task), _episode(1, [], task)])
    run = load_run(results, db=tmp_path / "db", tools=NOTE_TOOLS)
    assert [str(p) for p in run.problems] == [
        f"{results}:1: info.task.actions: task-3: ground-truth action 0 (update_email) failed on replay: "
        "KeyError: 'nobody'; judgekit could not replay this call as it happened; "
        "the replayed state may differ"
    ]
    assert all(REPLAY_NOTES_KEY not in t.transcript.metadata for t in run.trials)


def test_without_notes_the_run_has_no_problems_and_no_note_metadata(tmp_path: Path) -> None:
    results = _write_run(
        tmp_path, [_episode(0, [("update_email", {"user_id": "u1", "email": "new@x.io"}, "ok")])]
    )
    run = load_run(results, db=tmp_path / "db", tools=NOTE_TOOLS)
    assert run.problems == []
    assert REPLAY_NOTES_KEY not in run.trials[0].transcript.metadata


# --------------------------------------------------------------------------- the shared airline run


def _pruned(value: Any) -> Any:
    """Without empty objects: the replay file's diffs give a removed nested object as the removal of
    each of its fields, so :func:`apply_diff` leaves ``{}`` where tau-bench's tools deleted a key (a
    certificate spent on a booking)."""
    if isinstance(value, dict):
        return {k: _pruned(v) for k, v in value.items() if v != {}}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


def _same_tables(a: Any, b: Any) -> bool:
    """Equal tables, row by row (rows shared with the initial database compare at once), up to ``{}``."""
    if list(a) != list(b):
        return False
    return all(
        a[t].get(k) == b[t].get(k) or _pruned(a[t].get(k)) == _pruned(b[t].get(k))
        for t in a
        for k in {*a[t], *b[t]}
    )


def _airline_tools() -> dict[str, Any]:
    module = load_file(REPO / "bench" / "bench_taubench_replay.py", "bench_taubench_replay")
    return dict(module.AIRLINE_TOOLS)


@pytest.mark.skipif(not HAS_TAU, reason="shared tau-bench data not present")
def test_airline_run_replayed_with_tools_reproduces_the_replay_file_and_the_figures() -> None:
    run = load_run(TAU / "gpt-4o-airline.raw.json", db=TAU / "db", tools=_airline_tools())
    assert run.problems == []
    assert (len(run.cases), len(run.trials)) == (50, 200)
    rows = {
        (r["task_id"], r["trial"]): r
        for r in map(json.loads, (TAU / "gpt-4o-trajectories.jsonl").read_text().splitlines())
    }
    initial = snapshot_from_data(
        {f.stem: json.loads(f.read_text()) for f in sorted((TAU / "db").glob("*.json"))}
    )
    for trial in run.trials:
        t = trial.transcript
        row = rows[(t.metadata["task_id"], t.metadata["tau_bench_trial"])]
        # each final state is the one tau-bench's own tools made (the replay file's diff)
        final = run.states.final(t)
        assert not isinstance(final, str)
        assert _same_tables(final.tables, apply_diff(initial, row["final_db_diff"]).tables), t.case_id
        assert t.metadata[DB_MATCH_KEY] is row["db_match"]
    for case_id, case in run.cases.items():
        expected = run.states.expected(case)
        assert not isinstance(expected, str)
        row = next(r for r in rows.values() if f"task-{r['task_id']}" == case_id)
        assert _same_tables(expected.tables, apply_diff(initial, row["expected_db_diff"]).tables), case_id
    grades = asyncio.run(run.grade_all())
    table = pass_hat_k_table(grades, undecided="fail")
    assert [round(table[k], 3) for k in (1, 2, 3, 4)] == [0.420, 0.273, 0.220, 0.200]
    assert (
        sum((g.verdict is Verdict.PASS) == (t.reward == 1.0) for g, t in zip(grades, run.trials, strict=True))
        == 200
    )
