"""tau-bench's reward per version: generated episodes scored by a reference written from tau-bench's code.

The reference below is written from sierra-research/tau-bench's published code, read for this test:

* ``tau_bench/envs/base.py`` ``Env.calculate_reward``: the historical logic (outputs when the task has
  outputs, else the database; the shape stored at commit 02ec2a6f515bb1ab93aed9bcf4870f9e44d60e3f, the
  logic of 7362a17 that graded the shared airline trajectories) and the current logic (database always,
  then outputs; commit 67e6b1233828ff112e6df52ff960d7112a0f06bb), with ``to_hashable`` and
  ``consistent_hash`` (``sha256(str(to_hashable(data)))``);
* ``tau_bench/agents/tool_calling_agent.py`` ``message_to_action``
  (commit 01ed5e313668c2f5e5a7079e223ebebb3b52fe6d):
  a message with a tool call is that tool's action, any other is ``respond`` with its content.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import random
import tempfile
from collections import Counter
from hashlib import sha256
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgekit.errors import JudgekitError
from judgekit.integrations.taubench import DB_CHECK, OUTPUTS_CHECK, load_run
from judgekit.integrations.taubench_reward import diff_db_match, output_said, same_db, to_hashable
from judgekit.verdict import Verdict

# --------------------------------------------------------------------------- the reference (tau-bench's code)


def ref_to_hashable(item: Any) -> Any:
    if isinstance(item, dict):
        return tuple((key, ref_to_hashable(value)) for key, value in sorted(item.items()))
    elif isinstance(item, list):
        return tuple(ref_to_hashable(element) for element in item)
    elif isinstance(item, set):
        return tuple(sorted(ref_to_hashable(element) for element in item))
    else:
        return item


def ref_hash(data: Any) -> str:
    return sha256(str(ref_to_hashable(data)).encode("utf-8")).hexdigest()


def ref_action(message: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    calls = message.get("tool_calls")
    if calls is not None and len(calls) > 0 and calls[0]["function"] is not None:
        return calls[0]["function"]["name"], json.loads(calls[0]["function"]["arguments"])
    return "respond", {"content": message["content"]}


def ref_reward(
    version: str, initial: dict[str, Any], task: dict[str, Any], traj: list[dict[str, Any]]
) -> float:
    """tau-bench's reward of a finished episode (an unfinished one gets 0: no reward is computed)."""
    data = copy.deepcopy(initial)
    actions: list[tuple[str, dict[str, Any]]] = []

    def step(name: str, kwargs: dict[str, Any]) -> None:
        actions.append((name, kwargs))
        if name in TOOLS:
            try:
                TOOLS[name](data=data, **kwargs)
            except Exception:  # tau-bench: observation = f"Error: {e}", the data as the tool left it
                return

    for message in traj:
        if message["role"] == "assistant":
            step(*ref_action(message))
    data_hash = ref_hash(data)
    reward = 1.0

    def db_ok() -> bool:
        nonlocal data
        data = copy.deepcopy(initial)
        for a in task["actions"]:
            step(a["name"], a["kwargs"])
        return data_hash == ref_hash(data)

    def outputs_ok() -> bool:
        return all(
            any(
                name == "respond" and o.lower() in kwargs["content"].lower().replace(",", "")
                for name, kwargs in actions
            )
            for o in task["outputs"]
        )

    if version == "7362a17":
        if len(task["outputs"]) > 0:
            if not outputs_ok():
                reward = 0.0
        elif not db_ok():
            reward = 0.0
    else:
        if not db_ok():
            reward = 0.0
        if len(task["outputs"]) > 0 and not outputs_ok():
            reward = 0.0
    return reward


# --------------------------------------------------------------------------- a small domain, both shapes

DB: dict[str, Any] = {
    "users": {
        "u1": {"email": "a@x.io", "balance": 100, "hours": 1.0},
        "u2": {"email": "b@x.io", "balance": 5, "hours": 2},
    }
}


def update_email(data: dict[str, Any], user_id: str, email: str) -> str:
    data["users"][user_id]["email"] = email
    return "ok"


def set_hours(data: dict[str, Any], user_id: str, hours: Any) -> str:
    data["users"][user_id]["hours"] = hours
    return "ok"


def get_user(data: dict[str, Any], user_id: str) -> str:
    return json.dumps(data["users"][user_id])


TOOLS: dict[str, Any] = {"update_email": update_email, "set_hours": set_hours, "get_user": get_user}

GT = [
    {"name": "update_email", "kwargs": {"user_id": "u1", "email": "new@x.io"}},
    {"name": "set_hours", "kwargs": {"user_id": "u2", "hours": 1}},
]
SHAPES: dict[str, dict[str, Any]] = {
    # airline-like: write actions, no outputs
    "airline-like": {"user_id": "u1", "instruction": "Change things.", "actions": GT, "outputs": []},
    # retail-like: write actions and outputs
    "retail-like": {
        "user_id": "u1",
        "instruction": "Change things, ask the balance and the time.",
        "actions": GT,
        "outputs": ["1000", "20 hours"],
    },
}
CALLS = [
    ("update_email", {"user_id": "u1", "email": "new@x.io"}),
    ("update_email", {"user_id": "u2", "email": "new@x.io"}),  # wrong user
    ("set_hours", {"user_id": "u2", "hours": 1}),
    ("set_hours", {"user_id": "u2", "hours": 1.0}),  # 1.0 where tau-bench expects 1
    ("set_hours", {"user_id": "u1", "hours": 1}),  # 1 where the stored 1.0 was untouched
    ("set_hours", {"user_id": "u9", "hours": 1}),  # a tool error changes nothing
    ("get_user", {"user_id": "u1"}),
]
TEXTS = [
    "Your balance is 1,000.",
    "Your balance is 1000 and it takes 20 hours.",
    "It takes 20\nhours.",
    "It takes 20 HOURS.",
    "Balance: 1 000.",
    "Done.",
]


def make_episode(
    shape: str, trial: int, calls: list[int], texts: list[tuple[int, bool]], finished: bool
) -> dict[str, Any]:
    """An episode: the chosen calls, each text as a plain reply or beside a tool call (``True``)."""
    traj: list[dict[str, Any]] = [
        {"role": "system", "content": "# Policy"},
        {"role": "user", "content": "Hi"},
    ]
    pending = list(texts)
    for i, index in enumerate(calls):
        name, args = CALLS[index]
        beside = next((t for t in pending if t[1]), None)
        content = None
        if beside is not None:
            pending.remove(beside)
            content = TEXTS[beside[0]]
        traj.append(
            {
                "role": "assistant",
                "content": content,
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                ],
            }
        )
        traj.append({"role": "tool", "tool_call_id": f"c{i}", "name": name, "content": "ok"})
    for index, _beside in pending:  # the texts that found no tool call to ride on are plain replies
        traj.append({"role": "assistant", "content": TEXTS[index]})
        traj.append({"role": "user", "content": "ok"})
    return {
        "task_id": shape,
        "trial": trial,
        "reward": 0.0,
        "info": {
            "task": SHAPES[shape],
            "source": "user",
            "reward_info": {"reward": 0.0, "info": {}} if finished else None,
        },
        "traj": traj,
        "_finished": finished,
    }


def score(episodes: list[dict[str, Any]], version: str) -> list[tuple[str, float, Verdict, str]]:
    """Store the reference reward on each episode, load and grade with judgekit: per episode the shape,
    the reference reward, judgekit's verdict and the failed gates."""
    for e in episodes:
        e["reward"] = ref_reward(version, DB, e["info"]["task"], e["traj"]) if e["_finished"] else 0.0
        if e["info"]["reward_info"] is not None:
            e["info"]["reward_info"]["reward"] = e["reward"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "db").mkdir()
        (folder / "db" / "users.json").write_text(json.dumps(DB["users"]))
        (folder / "results.json").write_text(
            json.dumps([{k: v for k, v in e.items() if k != "_finished"} for e in episodes])
        )
        run = load_run(folder / "results.json", db=folder / "db", tools=TOOLS, reward=version)  # type: ignore[arg-type]
        # the only problems are the replay notes of calls that fail (a tool error, as generated here)
        assert all("failed on replay" in p.message for p in run.problems), run.problems
        grades = asyncio.run(run.grade_all())
    out = []
    for e, g in zip(episodes, grades, strict=True):
        gates = sorted(f"{c.check_id}: {c.reason}" for c in g.checks if c.gate and c.verdict is Verdict.FAIL)
        out.append((str(e["task_id"]), float(e["reward"]), g.verdict, "; ".join(gates)))
    return out


def episodes_strategy() -> st.SearchStrategy[list[dict[str, Any]]]:
    one = st.tuples(
        st.sampled_from(sorted(SHAPES)),
        st.lists(st.integers(0, len(CALLS) - 1), max_size=5),
        st.lists(st.tuples(st.integers(0, len(TEXTS) - 1), st.booleans()), max_size=3),
        st.booleans(),
    )
    return st.lists(one, min_size=1, max_size=6).map(
        lambda items: [make_episode(s, i, c, t, f) for i, (s, c, t, f) in enumerate(items)]
    )


@pytest.mark.parametrize("version", ["7362a17", "current"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(episodes=episodes_strategy())
def test_generated_episodes_agree_with_tau_bench_s_reward(
    version: str, episodes: list[dict[str, Any]]
) -> None:
    rows = score(episodes, version)
    wrong = [r for r in rows if (r[2] is Verdict.PASS) != (r[1] == 1.0)]
    assert wrong == [], wrong


def _seeded_batch(n: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [
        make_episode(
            sorted(SHAPES)[i % 2],
            i,
            # half the episodes make the right changes (then maybe more), the rest any calls
            ([0, 2] if rng.random() < 0.5 else [])
            + [rng.randrange(len(CALLS)) for _ in range(rng.randrange(4))],
            # half say both outputs in a plain reply, the rest any texts, some beside a tool call
            ([(1, False)] if rng.random() < 0.5 else [])
            + [(rng.randrange(len(TEXTS)), rng.random() < 0.3) for _ in range(rng.randrange(3))],
            rng.random() < 0.9,
        )
        for i in range(n)
    ]


def test_agreement_table_per_version_and_domain_shape(capsys: pytest.CaptureFixture[str]) -> None:
    table: dict[tuple[str, str], Counter[str]] = {}
    for version in ("7362a17", "current"):
        for shape, reward, verdict, gates in score(_seeded_batch(240, 19), version):
            counts = table.setdefault((version, shape), Counter())
            counts["episodes"] += 1
            if (verdict is Verdict.PASS) == (reward == 1.0):
                counts["agree"] += 1
            else:
                counts["disagree"] += 1
                print(f"DISAGREE {version} {shape}: reward {reward}, verdict {verdict.value}: {gates}")
            counts[f"reward {reward:g}"] += 1
    with capsys.disabled():
        print("\nversion   shape         episodes  agree  disagree  reward 1  reward 0")
        for (version, shape), c in sorted(table.items()):
            print(
                f"{version:<9} {shape:<13} {c['episodes']:>8} {c['agree']:>6} {c['disagree']:>9}"
                f" {c['reward 1']:>9} {c['reward 0']:>9}"
            )
    assert all(c["disagree"] == 0 and c["episodes"] == 120 for c in table.values())
    # the batch holds the cases the versions differ on (both rewards occur in every cell)
    assert all(c["reward 1"] and c["reward 0"] for c in table.values())


# --------------------------------------------------------------------------- each difference, named


def _verdict_and_reward(
    shape: str, calls: list[int], texts: list[tuple[int, bool]], version: str
) -> tuple[Verdict, float, dict[str, Verdict]]:
    episode = make_episode(shape, 0, calls, texts, True)
    reward = ref_reward(version, DB, SHAPES[shape], episode["traj"])
    (row,) = score([episode], version)
    return row[2], reward, {}


@pytest.mark.parametrize(
    ("version", "expected"),
    [pytest.param("7362a17", 1.0, id="historical"), pytest.param("current", 0.0, id="current")],
)
def test_outputs_with_a_wrong_database_pass_only_the_historical_reward(version: str, expected: float) -> None:
    # retail-like: both outputs said, the wrong user's email changed
    verdict, reward, _ = _verdict_and_reward("retail-like", [1, 2], [(1, False)], version)
    assert reward == expected
    assert (verdict is Verdict.PASS) == (expected == 1.0)


def test_an_output_beside_a_tool_call_does_not_count() -> None:
    verdict, reward, _ = _verdict_and_reward("retail-like", [0, 2], [(1, True)], "7362a17")
    assert (verdict, reward) == (Verdict.FAIL, 0.0)
    episode = make_episode("retail-like", 0, [0, 2], [(1, True)], True)
    (row,) = score([episode], "7362a17")
    assert "said only in a message that also calls a tool" in row[3]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        pytest.param("It takes 20\nhours.", False, id="newline_is_not_a_space"),
        pytest.param("It takes 20 HOURS.", True, id="case"),
        pytest.param("It takes 2,0 hours.", True, id="commas_removed_from_the_reply"),
        pytest.param("It takes 20  hours.", False, id="double_space"),
    ],
)
def test_the_outputs_test_is_tau_bench_s(text: str, found: bool) -> None:
    assert output_said("20 hours", [text]) is found
    assert ("20 hours" in text.lower().replace(",", "")) is found


def test_an_output_holding_a_comma_is_never_found() -> None:
    assert not output_said("1,000", ["Your balance is 1,000."])


def test_the_database_comparison_keeps_types() -> None:
    assert not same_db({"t": {"a": {"n": 1}}}, {"t": {"a": {"n": 1.0}}})
    assert not same_db({"t": {"a": {"n": True}}}, {"t": {"a": {"n": 1}}})
    assert same_db({"t": {"a": {"n": 1}}}, {"t": {"a": {"n": 1}}})
    # as tau-bench's hash: a mapping and a list of its pairs hash alike
    assert same_db({"t": {"a": {"k": 1}}}, {"t": {"a": [["k", 1]]}})
    # 1.0 written where the stored 1.0 was untouched by the ground truth: equal, the stored type is kept
    initial = {"users": {"u1": {"hours": 1.0}}}
    set_to = {"users": {"u1": {"op": "modified", "changes": {"hours": {"old": 1.0, "new": 1.0}}}}}
    assert diff_db_match(initial, set_to, {})
    set_int = {"users": {"u1": {"op": "modified", "changes": {"hours": {"old": 1.0, "new": 1}}}}}
    assert not diff_db_match(initial, set_int, {})


_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([1.0, 0.5, -0.0]), st.text(max_size=3)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=8,
)
_TABLES = st.one_of(
    st.dictionaries(st.sampled_from("abc"), _VALUES, max_size=3), st.lists(_VALUES, max_size=3), _SCALARS
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from("xy"), _TABLES, max_size=2), st.data())
def test_the_database_comparison_is_the_whole_hash_comparison(a: dict[str, Any], data: Any) -> None:
    # b: a's tables with some rows shared as the same objects (as a copy-on-write replay shares them),
    # some replaced by drawn ones, and sometimes a whole drawn database
    b: dict[str, Any] = {}
    for name, table in a.items():
        if isinstance(table, dict) and data.draw(st.booleans()):
            b[name] = {k: (v if data.draw(st.booleans()) else data.draw(_VALUES)) for k, v in table.items()}
        else:
            b[name] = table if data.draw(st.booleans()) else data.draw(_TABLES)
    if data.draw(st.booleans()):
        b = data.draw(st.dictionaries(st.sampled_from("xy"), _TABLES, max_size=2))
    whole = str(to_hashable(a)) == str(to_hashable(b))
    assert same_db(a, b) is whole


def _reordered(value: Any) -> Any:
    """The same value with every mapping's keys in reverse order (same rendering, another ``repr``)."""
    if isinstance(value, dict):
        return {k: _reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reordered(v) for v in value]
    return value


@settings(max_examples=400, deadline=None)
@given(_VALUES, _VALUES, st.sampled_from(["copy", "reordered", "other"]))
def test_a_row_compares_as_tau_bench_renders_it(a: Any, other: Any, how: str) -> None:
    """Equal plain reprs answer at once; anything else is rendered as tau-bench renders it."""
    from judgekit.integrations.taubench_reward import _same_row

    b = {"copy": copy.deepcopy(a), "reordered": _reordered(a), "other": other}[how]
    assert _same_row(a, b) is (repr(ref_to_hashable(a)) == repr(ref_to_hashable(b)))


@pytest.mark.parametrize(
    ("a", "b"), [(1, "1"), (None, "None"), (True, "True"), ([1], ["1"]), ({"r": 1}, "(('r', 1),)")]
)
def test_a_table_that_is_not_an_object_keeps_its_type(a: Any, b: Any) -> None:
    """The hash renders a table with ``repr``: a number and the text of its digits are different tables."""
    assert str(to_hashable({"t": a})) != str(to_hashable({"t": b}))
    assert not same_db({"t": a}, {"t": b})
    assert not same_db({"t": b}, {"t": a})


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ({"n": 1}, {"n": 1.0}, False),
        ({"n": True}, {"n": 1}, False),
        ({"n": 0.0}, {"n": -0.0}, False),
        ({"k": 1, "j": [2]}, {"j": [2], "k": 1}, True),
        ({"k": 1}, [["k", 1]], True),
        ({"k": [1, 2]}, {"k": [2, 1]}, False),
    ],
)
def test_a_row_keeps_types_order_of_lists_and_not_of_keys(a: Any, b: Any, same: bool) -> None:
    from judgekit.integrations.taubench_reward import _same_row

    assert _same_row(a, b) is same
    assert same_db({"t": {"r": a}}, {"t": {"r": b}}) is same


def test_typed_database_condition_from_a_replay_file(tmp_path: Path) -> None:
    episode = make_episode("airline-like", 0, [0, 3], [], True)
    (tmp_path / "db").mkdir()
    (tmp_path / "db" / "users.json").write_text(json.dumps(DB["users"]))
    (tmp_path / "r.json").write_text(json.dumps([{k: v for k, v in episode.items() if k != "_finished"}]))
    change = lambda hours: {  # noqa: E731
        "users": {
            "u1": {"op": "modified", "changes": {"email": {"old": "a@x.io", "new": "new@x.io"}}},
            "u2": {"op": "modified", "changes": {"hours": {"old": 2, "new": hours}}},
        }
    }
    (tmp_path / "replay.jsonl").write_text(
        json.dumps(
            {
                "task_id": "airline-like",
                "trial": 0,
                "final_db_diff": change(1.0),
                "expected_db_diff": change(1),
            }
        )
        + "\n"
    )
    run = load_run(
        tmp_path / "r.json", db=tmp_path / "db", replay=tmp_path / "replay.jsonl", reward="7362a17"
    )
    (grade,) = asyncio.run(run.grade_all())
    checks = {c.check_id: c for c in grade.checks}
    assert checks[DB_CHECK].verdict is Verdict.FAIL
    assert all(c.verdict is Verdict.PASS for c in grade.checks if c.layer == "state")  # canonical: 1 == 1.0
    assert grade.verdict is Verdict.FAIL
    assert ref_reward("7362a17", DB, SHAPES["airline-like"], episode["traj"]) == 0.0


def test_auto_picks_the_version_the_stored_rewards_need() -> None:
    episode = make_episode("retail-like", 0, [1, 2], [(1, False)], True)
    for version in ("7362a17", "current"):
        rows = score([copy.deepcopy(episode)], version)
        assert rows[0][1] == (1.0 if version == "7362a17" else 0.0)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "db").mkdir()
        (folder / "db" / "users.json").write_text(json.dumps(DB["users"]))
        for version, stored in (("7362a17", 1.0), ("current", 0.0)):
            e = {k: v for k, v in episode.items() if k != "_finished"}
            e["reward"] = stored
            (folder / "r.json").write_text(json.dumps([e]))
            run = load_run(folder / "r.json", db=folder / "db", tools=TOOLS)
            assert run.reward == version, run.reward_note
        both = [dict(e, trial=0, reward=1.0), dict(e, trial=1, reward=0.0)]
        (folder / "r.json").write_text(json.dumps(both))
        with pytest.raises(JudgekitError, match="fit neither tau-bench reward version alone"):
            load_run(folder / "r.json", db=folder / "db", tools=TOOLS)


def test_an_unknown_reward_version_is_refused(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text("[]")
    with pytest.raises(JudgekitError, match=r"reward='v2' is not a tau-bench reward version; use one of"):
        load_run(tmp_path / "r.json", db=tmp_path, reward="v2")  # type: ignore[arg-type]


def _shared_data() -> Path:
    env = os.environ.get("JUDGEKIT_SHARED_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


TAU = _shared_data() / "tau-bench-airline"


@pytest.mark.skipif(
    not (TAU / "gpt-4o-trajectories.jsonl").is_file(), reason="shared tau-bench data not present"
)
def test_the_airline_run_is_graded_on_the_historical_logic_and_its_outputs_as_tau_bench_counts() -> None:
    run = load_run(TAU / "gpt-4o-airline.raw.json", db=TAU / "db", replay=TAU / "gpt-4o-trajectories.jsonl")
    assert run.reward == "7362a17"
    assert "no episode tells the versions apart" in run.reward_note
    rows = {
        (r["task_id"], r["trial"]): r
        for r in map(json.loads, (TAU / "gpt-4o-trajectories.jsonl").read_text().splitlines())
    }
    grades = asyncio.run(run.grade_all())
    for grade, trial in zip(grades, run.trials, strict=True):
        meta = trial.transcript.metadata
        checks = {c.check_id: c for c in grade.checks}
        # the typed database condition agrees with the replay's db_match on all 200
        assert (checks[DB_CHECK].verdict is Verdict.PASS) == rows[(meta["task_id"], meta["tau_bench_trial"])][
            "db_match"
        ]
        info = meta.get("reward_info") or {}
        if "outputs" in info:  # tau-bench's own per-output findings
            assert (checks[OUTPUTS_CHECK].verdict is Verdict.PASS) == all(info["outputs"].values())
