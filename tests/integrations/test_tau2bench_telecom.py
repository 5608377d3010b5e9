"""tau2-bench telecom through the command line: bracketed and piped task ids, ENV_ASSERTION, solo mode, TOML.

``tau2_telecom/results.json`` is a telecom-shaped tau2 results file written for these tests from
tau2-bench's published formats (``Results``: ``info``, ``tasks``, ``simulations``; ``RewardInfo`` with
``db_check``, ``env_assertions``, ``action_checks``): five solo-mode tasks (the agent works the user's
device tools itself, ``llm_agent_solo`` with ``dummy_user``, and stops with ``done``), four trials each,
``reward_basis: [ENV_ASSERTION]``. Four tasks pass every trial, one fails every trial (pass^1..4 = 0.80);
eight simulations score 1.0 with ``db_match`` false (the DB check tau2 computes and leaves out of that
basis). ``tau2_telecom/db.toml`` is a telecom-shaped database in TOML, as tau2 ships telecom's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.caseset import load_case_set
from judgekit.cli import main
from judgekit.state.snapshot import load_state
from judgekit.transcript import read_transcripts

TELECOM = Path(__file__).parent / "tau2_telecom"
RESULTS = TELECOM / "results.json"
DB_TOML = TELECOM / "db.toml"
DATA_OFF = "[mobile_data_issue]data_mode_off|data_usage_exceeded[PERSONA:None]"
EXCEEDED = "[mobile_data_issue]data_usage_exceeded[PERSONA:None]"
CASE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]*$")  # the case contract's id shape (docs: case ids)


def _results() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(RESULTS.read_text(encoding="utf-8"))
    return data


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


# --------------------------------------------------------------------------- the fixture through the CLI


def test_telecom_solo_run_imports_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, rewards = tmp_path / "import", tmp_path / "rewards.jsonl"
    code, stdout, stderr = _run(
        [
            "import",
            "tau2-bench",
            str(RESULTS),
            "--out",
            str(out),
            "--db",
            str(DB_TOML),
            "--rewards-out",
            str(rewards),
        ],
        capsys,
    )
    assert code == 0, stderr
    assert "warning" not in stderr
    assert f"imported 5 case(s) and 20 tau2-bench trial(s) -> {out}" in stderr
    # every task id is a case, named in the import's output
    assert (
        "case task-.5Bmobile_data_issue.5Ddata_mode_off.7Cdata_usage_exceeded.5BPERSONA:None.5D is "
        f"tau2 task {DATA_OFF}" in stdout
    )
    assert stdout.count(" is tau2 task [") == 5
    # the simulations' own rewards reproduced; pass^k for every k four trials allow
    assert (
        "reproduced 20/20 stored rewards; rewards: 16 at 1, 4 at 0; "
        "pass^1 0.800, pass^2 0.800, pass^3 0.800, pass^4 0.800"
    ) in stdout
    assert (
        f"task {DATA_OFF} trial 2: reward 1 (stored 1) ENV_ASSERTION 1 | actions 1/2, communicate 0/0, "
        "env assertions 2/2 (stored), DB check stored (db_match false, not in the reward basis)"
    ) in stdout
    # the DB check tau2 computed and left out of the basis, and the eight simulations it would have failed
    assert "5 task(s): DB computed, not in the reward basis (the final database against" in stdout
    assert re.search(r"scored 1\.0 although one of these checks failed: .*\(8 simulation\(s\)\)", stdout)
    assert (
        f"task {DATA_OFF}: DB check computed, not in the reward basis [ENV_ASSERTION]; trial 2 scored 1.0 "
        "with db_match false; trial 3 scored 1.0 with db_match false"
    ) in stdout
    assert f"task {DATA_OFF}: 2 actions computed, not in the reward basis [ENV_ASSERTION]; trial 2" in stdout

    case_set = load_case_set(out)
    assert case_set.problems == []
    origins = {c.case.id: c.case.origin.ref for c in case_set.cases if c.case.origin is not None}
    assert sorted(origins.values()) == sorted(f"task {t['id']}" for t in _results()["tasks"])
    assert all(CASE_ID.match(case_id) for case_id in origins)
    transcripts = read_transcripts(out / "transcripts" / "tau2-bench.jsonl")
    assert len(transcripts) == 20
    roaming = next(t for t in transcripts if "roaming" in t.metadata["task_id"] and t.trial == 3)
    # solo mode: no user turns; the agent itself works the user's device (toggle_roaming) and stops with done
    assert all(m.role != "user" for m in roaming.messages)
    assert [c.call.name for c in roaming.calls()] == [
        "get_customer_by_phone",
        "check_status_bar",
        "toggle_roaming",
        "run_speed_test",
        "done",
    ]
    assert origins[roaming.case_id] == f"task {roaming.metadata['task_id']}"

    # the TOML database is read, not copied: fixtures/db.json is JSON, with TOML dates as tau2 hashes them
    fixture = json.loads((out / "fixtures" / "db.json").read_text(encoding="utf-8"))
    assert fixture["customers"][0]["date_of_birth"] == "1985-06-15"
    assert fixture["customers"][0]["created_at"] == "2021-03-02 09:30:00"
    assert fixture["lines"][0]["data_used_gb"] == 15.1
    assert sorted(load_state(out / "fixtures" / "db.json").tables) == ["bills", "customers", "lines", "plans"]

    # the stored rewards as a results file: 20 lines, and a report that names the failing tau2 task
    assert len(rewards.read_text(encoding="utf-8").splitlines()) == 20
    code, report, _ = _run(["report", str(rewards)], capsys)
    assert "Every trial passed" not in report
    assert f"stored reward 0 is below 1 (tau2 task {EXCEEDED})" in report
    assert "pass^4" in report


def test_telecom_json_document_reproduces_each_stored_reward(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, stdout, _ = _run(
        ["import", "tau2-bench", str(RESULTS), "--out", str(tmp_path / "o"), "--format", "json"], capsys
    )
    assert code == 0
    doc = json.loads(stdout)
    stored = {(s["task_id"], s["trial"]): s["reward_info"]["reward"] for s in _results()["simulations"]}
    assert {(s["task_id"], s["trial"]): s["reward"] for s in doc["simulations"]} == stored
    assert all(s["reproduced"] for s in doc["simulations"])
    assert doc["pass_hat_k"] == {"1": 0.8, "2": 0.8, "3": 0.8, "4": 0.8}
    assert sorted(doc["case_ids"].values()) == sorted(t["id"] for t in _results()["tasks"])
    db = [f for f in doc["findings"] if f["component"] == "DB"]
    assert len(db) == 5
    assert all(f["kind"] == "not_in_reward" for f in db)
    assert sum(len(f["unchecked_failures"]) for f in db) == 8


# --------------------------------------------------------------------------- ids


@pytest.mark.parametrize(
    ("task_id", "case_id"),
    [
        ("5", "task-5"),  # retail and airline ids are unchanged
        ("create_task_1", "task-create_task_1"),
        (DATA_OFF, "task-.5Bmobile_data_issue.5Ddata_mode_off.7Cdata_usage_exceeded.5BPERSONA:None.5D"),
        ("1.5", "task-1.2E5"),  # the escape character itself is escaped
        ("a b", "task-a.20b"),
        ("é", "task-.C3.A9"),
    ],
)
def test_case_id_for_escapes_what_a_case_id_may_not_hold(task_id: str, case_id: str) -> None:
    from judgekit.integrations.tau2bench import case_id_for, task_id_of

    assert case_id_for(task_id) == case_id
    assert task_id_of(case_id) == task_id


_ID_CHARS = st.sampled_from([*"[]|:._-/ ()#,é", "PERSONA", "None", "mobile_data_issue", "C1001", "1"])
_TAU2_IDS = st.one_of(st.text(), st.lists(_ID_CHARS, max_size=12).map("".join))


@settings(max_examples=400, deadline=None)
@given(task_id=_TAU2_IDS, prefix=st.sampled_from(["task-", "t2/", "telecom:", "x"]))
def test_case_ids_round_trip_and_are_valid(task_id: str, prefix: str) -> None:
    from judgekit.integrations.tau2bench import case_id_for, task_id_of

    case_id = case_id_for(task_id, prefix)
    assert CASE_ID.match(case_id)
    assert task_id_of(case_id, prefix) == task_id


@settings(max_examples=400, deadline=None)
@given(a=_TAU2_IDS, b=_TAU2_IDS)
def test_two_distinct_task_ids_never_share_a_case_id(a: str, b: str) -> None:
    from judgekit.integrations.tau2bench import case_id_for

    assert (case_id_for(a) == case_id_for(b)) == (a == b)


@settings(max_examples=400, deadline=None)
@given(case_id=st.text(alphabet="task-.5BCDE0123456789abz:/_", max_size=20))
def test_task_id_of_accepts_only_what_case_id_for_makes(case_id: str) -> None:
    from judgekit.integrations.tau2bench import case_id_for, task_id_of

    task_id = task_id_of(case_id)
    if task_id is not None:
        assert case_id_for(task_id) == case_id


# --------------------------------------------------------------------------- an import that maps nothing


def _write(tmp_path: Path, tasks: list[Any], sims: list[Any]) -> Path:
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"info": _results()["info"], "tasks": tasks, "simulations": sims}))
    return path


def test_an_import_of_nothing_is_an_error_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _results()
    path = _write(tmp_path, data["tasks"], data["simulations"])
    out, rewards = tmp_path / "o", tmp_path / "rewards.jsonl"
    code, _, err = _run(
        [
            "import",
            "tau2-bench",
            str(path),
            "--out",
            str(out),
            "--rewards-out",
            str(rewards),
            "--case-prefix",
            "",
        ],
        capsys,
    )
    assert code == 2
    assert (
        f"{path}: nothing imported: every task of the tasks of the results file {path} was rejected "
        "(5 task problem(s) below), so none of the 20 simulation(s) has a case"
    ) in err
    assert "give a case prefix that starts with a letter or digit" in err
    assert "give the tasks file" not in err
    assert not out.exists()
    assert not rewards.exists()


def test_an_empty_run_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, _results()["tasks"], [])
    code, _, err = _run(["import", "tau2-bench", str(path), "--out", str(tmp_path / "o")], capsys)
    assert code == 2
    assert f"{path}: nothing imported: the results file holds no simulations; no file was written" in err


def test_a_tasks_file_that_lacks_the_tasks_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _results()
    path = _write(tmp_path, [], data["simulations"][:2])
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps(data["tasks"][1:]))
    code, _, err = _run(
        ["import", "tau2-bench", str(path), "--out", str(tmp_path / "o"), "--tasks", str(tasks)], capsys
    )
    assert code == 2
    assert f"simulations[0].task_id: task {DATA_OFF} is not in the tasks file {tasks}" in err
    assert "none of the 2 simulation(s) could be imported" in err
    assert "give the tasks file" not in err  # it was given


def test_simulations_of_a_rejected_task_are_one_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _results()
    broken = {**data["tasks"][0], "evaluation_criteria": {**data["tasks"][0]["evaluation_criteria"]}}
    broken["evaluation_criteria"]["reward_basis"] = ["ENV"]
    path = _write(tmp_path, [broken, *data["tasks"][1:]], data["simulations"])
    code, stdout, err = _run(["import", "tau2-bench", str(path), "--out", str(tmp_path / "o")], capsys)
    assert code == 2
    assert f"warning: {path}: tasks[0] (task {DATA_OFF}): evaluation_criteria.reward_basis must be" in err
    assert (
        f"warning: {path}: simulations[0, 1, 2, 3]: left out: task {DATA_OFF} was rejected (tasks[0] of the "
        f"tasks of the results file {path}, above)"
    ) in err
    assert err.count("warning:") == 2
    assert "give the tasks file" not in err
    assert "imported 4 case(s) and 16 tau2-bench trial(s)" in err
    assert "pass^4 0.750" in stdout


# --------------------------------------------------------------------------- databases


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("db.toml", "[[lines]]\nline_id = \n", "db.toml:2: malformed TOML: Invalid value"),
        ("db.json", '{"lines": [}', "db.json:1: malformed JSON"),
        ("db.json", "[1, 2]", "db.json: a tau2 database is a table of the domain's collections, found list"),
        (
            "db.yaml",
            "lines: []\n",
            "db.yaml: a tau2 database is db.json or db.toml (read by its suffix), not '.yaml'",
        ),
    ],
)
def test_a_database_that_does_not_read_is_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, message: str
) -> None:
    db = tmp_path / name
    db.write_text(text)
    out = tmp_path / "o"
    code, _, err = _run(["import", "tau2-bench", str(RESULTS), "--out", str(out), "--db", str(db)], capsys)
    assert code == 2
    assert message in err
    assert not out.exists()


def test_the_toml_database_replays_the_db_check(tmp_path: Path) -> None:
    from judgekit.integrations.tau2bench import load_run, read_db

    def refuel_data(db: dict[str, Any], *, customer_id: str, line_id: str, gb_amount: float) -> None:
        line = next(x for x in db["lines"] if x["line_id"] == line_id)
        line["data_refueling_gb"] += gb_amount

    run = load_run(RESULTS, db=DB_TOML, tools={"refuel_data": refuel_data})
    by = {(r.task_id, r.trial): r for r in run.rewards}
    assert by[DATA_OFF, 0].db_source == "replayed"
    # the device tools are not given, so only the agent database is replayed: refuel 3.0 GB differs
    assert [by[DATA_OFF, t].db_match for t in range(4)] == [True, True, False, False]
    assert read_db(DB_TOML)["bills"][0]["line_items"][0]["date"] == "2026-10-01"


# --------------------------------------------------------------------------- outside solo mode


def _user_works_the_device(sim: dict[str, Any]) -> dict[str, Any]:
    """The simulation as tau2 records it outside solo mode: the user makes the device calls and talks."""
    device = {"check_status_bar", "toggle_roaming", "run_speed_test"}
    messages: list[dict[str, Any]] = [{"role": "assistant", "content": "Hi! How can I help you today?"}]
    messages.append({"role": "user", "content": "My mobile data does not work here in France."})
    for m in sim["messages"]:
        calls = m.get("tool_calls") or []
        if any(c["name"] in device for c in calls):
            user_calls = [{**c, "requestor": "user"} for c in calls]
            messages.append({"role": "assistant", "content": f"Please run {calls[0]['name']} on your phone."})
            messages.append({"role": "user", "content": None, "tool_calls": user_calls})
        elif m["role"] == "tool" and m["id"] in {
            c["id"] for x in messages for c in x.get("tool_calls") or []
        }:
            user_ids = {c["id"] for x in messages if x["role"] == "user" for c in x.get("tool_calls") or []}
            messages.append({**m, "requestor": "user" if m["id"] in user_ids else "assistant"})
        elif calls and calls[0]["name"] == "done":
            messages.append({"role": "assistant", "content": "Roaming is on again; you are all set."})
        else:
            messages.append(m)
    messages.append({"role": "user", "content": "Thanks, it works. ###STOP###"})
    return {**sim, "messages": messages, "termination_reason": "user_stop"}


def test_outside_solo_mode_the_users_device_calls_are_kept_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _results()
    task = data["tasks"][1]  # [mobile_data_issue]user_abroad_roaming_enabled_off: toggle_roaming by the user
    sims = [_user_works_the_device(s) for s in data["simulations"] if s["task_id"] == task["id"]]
    out = tmp_path / "o"
    code, stdout, err = _run(
        ["import", "tau2-bench", str(_write(tmp_path, [task], sims)), "--out", str(out)], capsys
    )
    assert code == 0, err
    assert "reproduced 4/4 stored rewards; rewards: 4 at 1; pass^1 1.000" in stdout
    (loaded,) = load_case_set(out).cases
    # the user's own action is not the agent's to make: it is left out of the route the grade checks
    assert loaded.case.expected is None or not loaded.case.expected.route
    transcript = read_transcripts(out / "transcripts" / "tau2-bench.jsonl")[0]
    assert [c.call.name for c in transcript.calls()] == ["get_customer_by_phone", "refuel_data"]
    assert [(c["name"], c["result"]) for c in transcript.metadata["user_tool_calls"]] == [
        ("check_status_bar", "Status Bar: 📶 No Signal | 🔋 80%"),
        ("toggle_roaming", "Data Roaming is now ON."),
        ("run_speed_test", "Speed test result: 245.0 Mbps (excellent)"),
    ]
    # the results of the user's calls went with them: every tool message answers one of the agent's calls
    answered = {m.tool_call_id for m in transcript.messages if m.role == "tool"}
    assert answered == {c.call.id for c in transcript.calls()}
