"""tau-bench: tasks and trajectories as judgekit cases and transcripts, graded on judgekit's layers.

A tau-bench task (``sierra-research/tau-bench``: ``user_id``, ``instruction``, ground-truth ``actions``
and required ``outputs``) becomes a :class:`~judgekit.cases.Case` (:func:`task_case`):

* ``initial_state``: the domain database before the episode;
* ``expected_state``: a snapshot, the database after the ground-truth actions (tau-bench's own success
  condition is that the final database equals it);
* ``expected.must_mention``: each required output (:func:`output_pattern`: case-insensitive, commas
  between its characters allowed: ``"1,628"`` counts for ``1628``), reported by the text layer; tau-bench's
  own, stricter outputs condition is the ``tau-bench:outputs`` gate (below);
* optionally (``route=True``) ``expected.route``: the ground-truth actions with exact arguments. tau-bench
  does not grade the route, so it is off by default.

Trajectories are read with :func:`judgekit.formats.importers.read_tau_bench` (not duplicated here); each
transcript also gets ``ended_by``: ``user_stop``, ``terminate_tool`` (transfer to a human agent) or
``max_steps_or_error`` (tau-bench recorded no reward details: the episode never finished).

World states come from a replay, since tau-bench's results files do not store databases:

* ``replay=``: a JSONL file with one row per trajectory (``task_id``, ``trial``, ``final_db_diff`` and
  ``expected_db_diff``, each ``table -> id -> {op: added|removed|modified, changes: {dotted.path: {old,
  new}}, record}``), as made by replaying each trajectory's tool calls and the task's actions on fresh
  copies of the database with tau-bench's own tools (:func:`apply_diff` applies one);
* ``tools=``: the domain's tool functions, ``name -> callable(data, **kwargs)`` mutating the database in
  place (tau-bench's ``Tool.invoke`` has this signature); the trajectory's calls and the ground-truth
  actions are replayed here, copy-on-write (:class:`~judgekit.integrations.taubench_replay.Replayer`:
  every state is a delta over the one initial database). A call that raises or names an unknown tool is
  a replay note, in ``problems`` and in the transcript's ``metadata["replay_notes"]``, saying whether
  tau-bench had returned an error to the agent for it too.

Without either, cases have no ``expected_state`` and tau-bench's reward cannot be reproduced (the report
says so; nothing is guessed).

:class:`TauBenchGrader` runs every deterministic layer and gates on tau-bench's own reward conditions,
in the reward logic of the tau-bench version chosen with ``load_run(reward=...)``
(:mod:`judgekit.integrations.taubench_reward` quotes both):

* ``"7362a17"`` (historical): a task with outputs is graded on ``tau-bench:outputs`` only; a task without
  outputs on ``tau-bench:db``;
* ``"current"``: ``tau-bench:db`` always, and ``tau-bench:outputs`` too when the task has outputs;
* ``"auto"`` (the default): the version whose rewards reproduce the stored ones (see
  :func:`~judgekit.integrations.taubench_reward.detect_reward_version`), ``"7362a17"`` when no episode
  tells them apart; ``run.reward`` and ``run.reward_note`` say which and why.

``tau-bench:outputs`` counts an output as said when ``output.lower()`` occurs in a plain assistant reply
(a message without a tool call) lower-cased with its commas removed, nothing else normalised;
``tau-bench:db`` compares the final and expected databases as tau-bench's hash does, types kept (``1`` and
``1.0`` differ), from the databases as stored (a folder of JSON tables or a JSON file is read with
``json``); ``tau-bench:episode`` requires the episode to have finished. judgekit's own state layer
(canonical: ``1 == 1.0``) and the text layer's ``must_mention`` checks still run and are reported, but do
not gate. With states, a trial's verdict is ``pass`` exactly when the chosen version's reward is
1, and :func:`pass_hat_k_table` gives pass^k from judgekit's verdicts
(``undecided="fail"`` reproduces tau-bench's figures: tau-bench counts every reward other than 1 as a
failure). The reproduction covers tool-calling agents' trajectories (an action per assistant message);
trajectories of ReAct-style agents, whose replies are parsed from text, are not read that way.
"""

from __future__ import annotations

import copy
import os
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgekit.cases import Case, TextPattern
from judgekit.errors import JudgekitError, LocatedError, Problem
from judgekit.graders.contract import LayerInfo, describe_layer
from judgekit.graders.registry import register_layer
from judgekit.integrations.grading import LayeredGrader
from judgekit.integrations.taubench_replay import REPLAY_NOTES_KEY, Replayed, Replayer
from judgekit.integrations.taubench_reward import (
    CURRENT,
    DB_CHECK,
    DB_MATCH_KEY,
    HISTORICAL,
    RewardChoice,
    RewardVersion,
    apply_changes,
    check_reward_choice,
    db_check,
    detect_reward_version,
    diff_db_match,
    outputs_check,
    raw_database,
    same_db,
)
from judgekit.io.documents import load_json_bounded
from judgekit.state import Snapshot, canonical, load_state
from judgekit.state.provider import StateProvider
from judgekit.transcript import Capability
from judgekit.verdict import CheckResult, Evidence, FailureCategory, Grade, Verdict

if TYPE_CHECKING:
    from judgekit.formats.importers import ImportedTrial
    from judgekit.graders.context import LayerContext
    from judgekit.graders.rubric import RubricGrader
    from judgekit.stats import UndecidedPolicy
    from judgekit.transcript import Transcript

__all__ = [
    "DB_CHECK",
    "EPISODE_CHECK",
    "IMPORTED_LAYER",
    "LAYER",
    "OUTPUTS_CHECK",
    "TAU_BENCH_LAYER",
    "Action",
    "TauBenchGrader",
    "TauBenchLayer",
    "TauBenchRun",
    "TauBenchTask",
    "apply_diff",
    "load_run",
    "output_pattern",
    "pass_hat_k_table",
    "replay_actions",
    "task_case",
]

OUTPUTS_CHECK = "tau-bench:outputs"
"""Check id of the gate: every required output was said (in a plain assistant reply, as tau-bench counts)."""

LAYER = "tau-bench"
"""The layer name every tau-bench check reports."""

EPISODE_CHECK = "tau-bench:episode"
"""Check id of the gate: the episode finished (not cut off by the step limit or an error)."""

INITIAL_KEY = "tau-bench:db"
"""State key under which the initial database is preloaded in the run's state provider."""

UNFINISHED = "max_steps_or_error"
"""``ended_by`` of an episode tau-bench recorded no reward details for."""

_TRANSFER = "transfer_to_human_agents"


@dataclass(frozen=True)
class Action:
    """One ground-truth action: a tool name and its keyword arguments."""

    name: str
    kwargs: dict[str, Any]


@dataclass(frozen=True)
class TauBenchTask:
    """A tau-bench task.

    Attributes:
        task_id: The task's index or id.
        user_id: The simulated user's id (becomes the case identity).
        instruction: The simulated user's instruction.
        actions: The ground-truth actions.
        outputs: Texts the agent must say.
    """

    task_id: int | str
    user_id: str | None
    instruction: str
    actions: tuple[Action, ...]
    outputs: tuple[str, ...]

    @classmethod
    def from_data(cls, data: Any, *, task_id: int | str) -> TauBenchTask:
        """Read a tau-bench task object (``user_id``, ``instruction``, ``actions``, ``outputs``).

        Raises:
            JudgekitError: When a field has the wrong shape (the message names the task and the field).
        """
        where = f"tau-bench task {task_id}"
        if not isinstance(data, Mapping):
            raise JudgekitError(f"{where}: a task must be an object, found {type(data).__name__}")
        instruction = data.get("instruction")
        if not isinstance(instruction, str) or not instruction.strip():
            raise JudgekitError(f"{where}: 'instruction' must be non-empty text")
        actions: list[Action] = []
        for i, raw in enumerate(data.get("actions") or []):
            if (
                not isinstance(raw, Mapping)
                or not isinstance(raw.get("name"), str)
                or not isinstance(raw.get("kwargs", {}), Mapping)
            ):
                raise JudgekitError(
                    f"{where}: actions[{i}] must be {{name: text, kwargs: object}}, found {raw!r:.80}"
                )
            actions.append(Action(raw["name"], dict(raw.get("kwargs") or {})))
        outputs = data.get("outputs") or []
        if not isinstance(outputs, list) or not all(isinstance(o, str) for o in outputs):
            raise JudgekitError(f"{where}: 'outputs' must be a list of texts")
        user_id = data.get("user_id")
        return cls(
            task_id,
            str(user_id) if user_id is not None else None,
            instruction,
            tuple(actions),
            tuple(outputs),
        )


def output_pattern(output: str) -> TextPattern:
    """A text-layer pattern for a required output: case-insensitive, commas allowed between its characters.

    It approximates tau-bench's test (``output.lower()`` in a reply lowered with every comma removed) for
    the text layer, which searches every assistant text and normalises whitespace; tau-bench's exact
    test is the ``tau-bench:outputs`` gate (:func:`judgekit.integrations.taubench_reward.output_said`).
    """
    return TextPattern(pattern=",*".join(re.escape(ch) for ch in output.lower()), ignore_case=True)


def task_case(
    task: TauBenchTask,
    *,
    case_id: str,
    initial_state: str | None = INITIAL_KEY,
    expected_state: str | None = None,
    route: bool = False,
) -> Case:
    """The judgekit case of a tau-bench task.

    Args:
        task: The task.
        case_id: The case id (``task-<id>`` by convention).
        initial_state: State path or key of the database before the episode.
        expected_state: State path or key of the database after the ground-truth actions; ``None`` leaves
            the state layer out (tau-bench's reward then cannot be reproduced).
        route: Also expect the ground-truth actions as the route (exact arguments, any order, other
            calls allowed). tau-bench does not grade this.
    """
    expected: dict[str, Any] = {"must_mention": [output_pattern(o) for o in task.outputs]}
    if route and task.actions:
        counts = Counter(a.name for a in task.actions)
        expected["route"] = [
            {"tool": a.name, "args": canonical(a.kwargs), "max_calls": max(counts[a.name], 1)}
            for a in task.actions
        ]
        expected["route_match"] = "superset"
    data: dict[str, Any] = {
        "id": case_id,
        "user_goal": task.instruction,
        "origin": {"type": "tau-bench", "ref": f"task {task.task_id}"},
        "tools": sorted({a.name for a in task.actions}),
        "expected": expected,
    }
    if task.user_id:
        data["identity"] = {"user_id": task.user_id}
    if initial_state is not None:
        data["initial_state"] = initial_state
    if expected_state is not None:
        data["expected_state"] = {"snapshot": expected_state}
    return Case.model_validate(data)


# --------------------------------------------------------------------------- states


def apply_diff(initial: Snapshot, diff: Mapping[str, Any], *, source: str = "replayed") -> Snapshot:
    """Apply a replay diff to a snapshot, returning a new snapshot (the initial one is not changed).

    The diff is ``table -> id -> {op, changes, record}``: ``added`` rows take ``record``, ``removed`` rows
    go, ``modified`` rows get each ``changes`` entry (``dotted.path -> {old, new}``; without ``new`` the
    field is removed; lists are replaced whole). Unchanged tables and rows are shared with ``initial``.

    Raises:
        JudgekitError: When the diff is malformed or modifies a row the snapshot does not have.
    """
    tables = dict(initial.tables)
    for name, rows in diff.items():
        if not isinstance(rows, Mapping):
            raise JudgekitError(f"{source}: diff of table '{name}' must be an object of rows")
        table = dict(tables.get(name, {}))
        for key, entry in rows.items():
            op = entry.get("op") if isinstance(entry, Mapping) else None
            if op == "added":
                table[str(key)] = canonical(entry.get("record"))
            elif op == "removed":
                table.pop(str(key), None)
            elif op == "modified":
                if str(key) not in table:
                    raise JudgekitError(
                        f"{source}: diff modifies {name}/{key}, which the state does not have"
                    )
                table[str(key)] = canonical(apply_changes(table[str(key)], entry.get("changes", {})))
            else:
                raise JudgekitError(
                    f"{source}: {name}/{key}: 'op' must be added, removed or modified, got {op!r}"
                )
        tables[name] = table
    return Snapshot(tables, source)


def replay_actions(
    initial: Mapping[str, Any],
    actions: Iterable[tuple[str, Mapping[str, Any]]],
    tools: Mapping[str, Callable[..., Any]],
) -> tuple[dict[str, Any], list[str]]:
    """Run tool calls on a copy of a database, the way tau-bench's environment does.

    Each call is ``tools[name](data, **kwargs)`` on a deep copy of the whole database, in order. As in
    tau-bench, a call that raises, or names no known tool, changes nothing more (what the tool changed
    before raising stays) and the replay goes on; it is reported. :func:`load_run` replays with the
    copy-on-write :class:`~judgekit.integrations.taubench_replay.Replayer` instead, which gives the same
    states without copying the database.

    Returns:
        The database afterwards and one note per call that failed.
    """
    data = copy.deepcopy(dict(initial))
    notes: list[str] = []
    for i, (name, kwargs) in enumerate(actions):
        tool = tools.get(name)
        if tool is None:
            notes.append(f"call {i}: unknown tool '{name}'")
            continue
        try:
            tool(data, **dict(kwargs))
        except Exception as exc:  # a tool's own error is an episode fact, as in tau-bench
            notes.append(f"call {i}: {name}: {type(exc).__name__}: {exc}")
    return data, notes


# --------------------------------------------------------------------------- the run


def _ended_by(metadata: Mapping[str, Any]) -> str:
    if metadata.get("reward_info") is None:
        return UNFINISHED
    return "terminate_tool" if metadata.get("tau_bench_source") == _TRANSFER else "user_stop"


@dataclass
class TauBenchRun:
    """A tau-bench results file as judgekit cases, transcripts and states.

    Attributes:
        cases: Case id to case, one per task.
        trials: The imported trials (transcripts with ``ended_by`` and stored rewards), in file order.
        states: A state provider with the initial, expected and final databases preloaded.
        problems: Entries that could not be imported or replayed, located.
        has_states: Whether final and expected states are available (replay file or tools given).
        reward: The tau-bench reward logic the grader follows (``"7362a17"`` or ``"current"``).
        reward_note: How ``reward`` was chosen (given, or the evidence ``"auto"`` found).
    """

    cases: dict[str, Case]
    trials: list[ImportedTrial]
    states: StateProvider
    problems: list[Problem] = field(default_factory=list)
    has_states: bool = False
    reward: RewardVersion = HISTORICAL
    reward_note: str = ""

    def grader(self, *, rubric: RubricGrader | None = None) -> TauBenchGrader:
        """A grader over this run's states: every deterministic layer and the gates of ``reward``."""
        return TauBenchGrader(states=self.states, rubric=rubric, reward=self.reward)

    async def grade_all(self, grader: TauBenchGrader | None = None) -> list[Grade]:
        """Grade every trial, in file order."""
        g = grader or self.grader()
        return [await g.grade(self.cases[t.transcript.case_id], t.transcript) for t in self.trials]


def _final_key(transcript: Transcript) -> str:
    return f"tau-bench:final/{transcript.case_id}/{transcript.trial}"


def _expected_key(case_id: str) -> str:
    return f"tau-bench:expected/{case_id}"


def _read_replay(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    try:
        # Bytes split at newlines only: each line is decoded (and checked as UTF-8) by the bounded reader,
        # and a U+2028 inside a JSON string is no line break.
        from judgekit.io.documents import read_regular

        lines = read_regular(path, "tau-bench file").split(b"\n")
    except OSError as exc:
        raise JudgekitError(f"{path}: cannot read the replay file: {exc.strerror}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = load_json_bounded(line, source=path, line=number)
        except LocatedError as exc:
            raise JudgekitError(f"{exc.problem}; fix the replay file") from None
        if not isinstance(row, dict):
            raise JudgekitError(
                f"{path}:{number}: a replay line is a JSON object, not {type(row).__name__}; "
                "fix the replay file"
            )
        missing = [k for k in ("task_id", "trial", "final_db_diff", "expected_db_diff") if k not in row]
        if missing:
            raise JudgekitError(
                f"{path}:{number}: a replay row needs task_id, trial, final_db_diff and expected_db_diff; "
                f"missing {', '.join(missing)}"
            )
        rows[(str(row["task_id"]), int(row["trial"]))] = row
    return rows


def load_run(
    results: str | os.PathLike[str],
    *,
    db: Path | Snapshot,
    replay: str | os.PathLike[str] | None = None,
    tools: Mapping[str, Callable[..., Any]] | None = None,
    case_prefix: str = "task-",
    agent_model: str | None = None,
    route: bool = False,
    reward: RewardChoice = "auto",
) -> TauBenchRun:
    """Read a tau-bench results file into cases, transcripts and states.

    Args:
        results: The results file (JSON list or JSONL of episodes), as text or a path object.
        db: The domain database before any episode: a folder of ``<table>.json`` files (tau-bench's
            data folder), any state file, or a snapshot.
        replay: Replay diffs per trajectory (see the module docs), for final and expected states, as text or
            a path object.
        tools: The domain's tools, to replay trajectories and ground-truth actions here instead.
        case_prefix: Prefix of case ids (``task-`` gives ``task-0``).
        agent_model: The agent's model, for the run records.
        route: Also expect the ground-truth actions as the route (see :func:`task_case`).
        reward: The tau-bench reward logic the grader reproduces: ``"7362a17"`` (historical: a task with
            outputs is graded on its outputs only, any other on the database), ``"current"`` (the
            database always, and the outputs too), or ``"auto"``: the version whose rewards reproduce the
            stored ones, ``"7362a17"`` when no episode tells them apart (see
            :func:`judgekit.integrations.taubench_reward.detect_reward_version`). ``run.reward`` and
            ``run.reward_note`` say which was used and why.

    Returns:
        The run. Episodes that cannot be imported, tasks whose episodes disagree about the task, and
        trajectories the replay file lacks are listed in ``problems`` (those trials are left out).

    Raises:
        JudgekitError: When a file cannot be read, both ``replay`` and ``tools`` are given, ``reward``
            is not a version, or under ``"auto"`` the stored rewards fit neither version alone.
    """
    choice = check_reward_choice(reward)
    results = Path(results)
    replay = Path(replay) if replay is not None else None
    from judgekit.formats.importers import ImportedTrial, read_tau_bench
    from judgekit.transcript import StateRef

    if replay is not None and tools is not None:
        raise JudgekitError("give either replay= (diffs made with tau-bench's tools) or tools=, not both")
    initial = db if isinstance(db, Snapshot) else load_state(db)
    # tau-bench's database condition compares the databases with their stored types (1 and 1.0 differ)
    raw_initial = (
        raw_database(db if isinstance(db, Snapshot) else Path(db), initial)
        if replay is not None or tools is not None
        else {}
    )
    imported = read_tau_bench(results, case_prefix=case_prefix, agent_model=agent_model)
    problems = list(imported.problems)
    snapshots: dict[str, Snapshot] = {INITIAL_KEY: initial}
    tasks: dict[str, TauBenchTask] = {}
    task_data: dict[str, Any] = {}
    trials: list[ImportedTrial] = []
    replay_rows = _read_replay(replay) if replay is not None else None
    expected_diffs: dict[str, Any] = {}
    # copy-on-write replay: every state is a delta over the one initial database (see taubench_replay)
    replayer = Replayer(initial, tools, raw=raw_initial) if tools is not None else None
    expected_replays: dict[str, Replayed] = {}
    for trial in imported.trials:
        t = trial.transcript
        meta = t.metadata
        raw_task = {
            "user_id": meta.get("user_id"),
            "instruction": meta.get("instruction"),
            "actions": meta.get("expected_actions"),
            "outputs": meta.get("expected_outputs"),
        }
        try:
            task = TauBenchTask.from_data(raw_task, task_id=str(meta.get("task_id")))
        except JudgekitError as exc:
            problems.append(Problem(results, trial.line, "info.task", exc.message))
            continue
        if t.case_id in task_data and task_data[t.case_id] != raw_task:
            problems.append(
                Problem(
                    results,
                    trial.line,
                    "info.task",
                    f"{t.case_id}: this episode's task differs from an earlier one's",
                )
            )
            continue
        task_data[t.case_id] = raw_task
        tasks[t.case_id] = task
        transcript = t.model_copy(update={"ended_by": _ended_by(meta)})
        if replay_rows is not None:
            raw_trial = meta.get("tau_bench_trial")
            number = raw_trial if isinstance(raw_trial, int) else transcript.trial - 1
            row = replay_rows.get((str(meta.get("task_id")), number))
            if row is None:
                problems.append(
                    Problem(
                        results,
                        trial.line,
                        "",
                        f"{t.case_id} trial {t.trial}: not in the replay file {replay}",
                    )
                )
                continue
            try:
                snapshots[_final_key(transcript)] = apply_diff(
                    initial, row["final_db_diff"], source=f"{replay}"
                )
            except JudgekitError as exc:
                problems.append(Problem(replay, None, "final_db_diff", exc.message))
                continue
            previous = expected_diffs.setdefault(t.case_id, row["expected_db_diff"])
            if previous != row["expected_db_diff"]:
                problems.append(
                    Problem(
                        replay,
                        None,
                        "expected_db_diff",
                        f"{t.case_id}: trials disagree about the expected state",
                    )
                )
                continue
            db_match = diff_db_match(raw_initial, row["final_db_diff"], row["expected_db_diff"])
            transcript = transcript.model_copy(update={"metadata": {**meta, DB_MATCH_KEY: db_match}})
        elif replayer is not None:
            records = transcript.calls()
            where = f"{t.case_id} trial {t.trial}"
            final = replayer.replay(
                [(c.call.name, c.call.arguments or {}) for c in records],
                source=f"replay of {where}",
                recorded=[c.result for c in records],
            )
            if t.case_id not in expected_replays:
                expected = replayer.replay(
                    [(a.name, a.kwargs) for a in task.actions], source=f"ground-truth actions of {t.case_id}"
                )
                expected_replays[t.case_id] = expected
                problems.extend(
                    n.problem(results, trial.line, t.case_id, action=True) for n in expected.notes
                )
            problems.extend(n.problem(results, trial.line, where) for n in final.notes)
            db_match = final.same_db(expected_replays[t.case_id])
            notes = {REPLAY_NOTES_KEY: [n.to_data() for n in final.notes]} if final.notes else {}
            transcript = transcript.model_copy(update={"metadata": {**meta, DB_MATCH_KEY: db_match, **notes}})
            snapshots[_final_key(transcript)] = final.state
        if replay_rows is not None or tools is not None:
            transcript = transcript.model_copy(
                update={
                    "initial_state": StateRef(path=INITIAL_KEY),
                    "final_state": StateRef(path=_final_key(transcript)),
                }
            )
        trials.append(ImportedTrial(transcript, trial.reward, trial.line))
    has_states = replay_rows is not None or tools is not None
    cases: dict[str, Case] = {}
    for case_id, task in tasks.items():
        if replay_rows is not None and case_id in expected_diffs:
            snapshots[_expected_key(case_id)] = apply_diff(
                initial, expected_diffs[case_id], source=f"{replay}"
            )
        elif case_id in expected_replays:
            snapshots[_expected_key(case_id)] = expected_replays[case_id].state
        # The initial database is recorded on every transcript rather than named by the case: every
        # tau-bench episode starts from the same database by construction (the replay starts there), so
        # a per-trial "started from the fixture" check would only compare the database with itself.
        cases[case_id] = task_case(
            task,
            case_id=case_id,
            initial_state=None,
            expected_state=_expected_key(case_id) if has_states else None,
            route=route,
        )
    if choice == "auto":
        version, note = detect_reward_version(trials)
    else:
        version, note = choice, f"{choice}: given"
    return TauBenchRun(cases, trials, StateProvider(snapshots=snapshots), problems, has_states, version, note)


# --------------------------------------------------------------------------- grading


class TauBenchGrader(LayeredGrader):
    """Every deterministic layer, with tau-bench's reward conditions, in one version's logic, as the gates.

    ``tau-bench:outputs`` fails when a required output was never said in a plain assistant reply (as
    tau-bench counts it); ``tau-bench:db`` fails when the final database's tau-bench hash (types kept)
    differs from the expected one's; ``tau-bench:episode`` fails when the episode did not finish
    (``ended_by`` is ``max_steps_or_error``: tau-bench gives such an episode reward 0 whatever the
    database). Which of the first two gate follows ``reward`` (see
    :mod:`judgekit.integrations.taubench_reward`). The text layer's ``must_mention`` checks, and
    judgekit's state layer when ``tau-bench:db`` could compare the databases, are reported but do not
    gate, so with states a trial passes exactly when that version's reward is 1. Without a database
    comparison the state layer gates as on every other path.

    Args:
        reward: The tau-bench reward logic, ``"7362a17"`` or ``"current"``.
        **kwargs: As for :class:`~judgekit.graders.layered.LayeredGrader`.

    Raises:
        JudgekitError: When ``reward`` is not a version.
    """

    name = "tau-bench"

    def __init__(self, *args: Any, reward: RewardVersion = HISTORICAL, **kwargs: Any) -> None:
        choice = check_reward_choice(reward)
        if choice == "auto":
            raise JudgekitError("TauBenchGrader(reward=...) needs a version: '7362a17' or 'current'")
        super().__init__(*args, layers={LAYER: {"reward": choice}}, **kwargs)
        self.reward: RewardVersion = choice

    def checks(self, case: Case, transcript: Transcript) -> list[CheckResult]:
        """Every layer's checks, the tau-bench layer's last; state and ``must_mention`` do not gate here."""
        if DB_MATCH_KEY not in transcript.metadata:
            transcript = _with_snapshot_db_match(self, case, transcript)
        # tau-bench's own conditions replace judgekit's state gate only where they decide: with no
        # database comparison (an inline expected state, no replay) the state layer still gates, so a
        # wrong end state never passes on this path (the grading contract holds on every path)
        db_decided = transcript.metadata.get(DB_MATCH_KEY) is not None
        return [
            c.model_copy(update={"gate": False})
            if c.gate and ((c.layer == "state" and db_decided) or c.check_id.startswith("text:must_mention:"))
            else c
            for c in super().checks(case, transcript)
        ]


class TauBenchLayer:
    """tau-bench's own reward conditions as a layer (optional: it runs for a :class:`TauBenchGrader`).

    Its argument is the reward logic (``{"reward": "7362a17"}`` or ``"current"``). Its checks are
    ``tau-bench:outputs`` and ``tau-bench:db`` (which of them gates follows the reward logic; see
    :mod:`judgekit.integrations.taubench_reward`) and ``tau-bench:episode``. The transcript's
    ``DB_MATCH_KEY`` metadata carries the typed database comparison made at load time.
    """

    info: LayerInfo = describe_layer(
        LAYER,
        (Capability.ASSISTANT_TEXT,),
        "tau-bench's own reward conditions (required outputs said, episode finished)",
        optional=True,
    )

    def checks(self, case: Case, transcript: Transcript, context: LayerContext) -> list[CheckResult]:
        """The outputs, database and episode checks of one trial, under the grading's reward logic.

        A reward that is not a version (a grading configured by hand) is one ``error`` check saying so.
        """
        reward = context.args(self.info).get("reward")
        for version in (HISTORICAL, CURRENT):
            if reward == version:
                outputs = _task_outputs(case, transcript)
                return [
                    outputs_check(outputs, transcript, version),
                    _with_replay_notes(db_check(outputs, transcript, version), transcript),
                    _episode_check(transcript),
                ]
        return [
            CheckResult(
                check_id=LAYER,
                layer=LAYER,
                verdict=Verdict.ERROR,
                reason=f"the tau-bench layer's reward {reward!r} is not a version: give '7362a17' or "
                "'current'",
            )
        ]


TAU_BENCH_LAYER = TauBenchLayer()
"""The tau-bench layer, registered with :func:`judgekit.graders.registry.register_layer` by this module."""

IMPORTED_LAYER: LayerInfo = describe_layer(
    "imported", (), "the verdict stored by the harness the trial was imported from"
)
"""The layer of a stored reward turned into a result line (``judgekit import tau-bench``, check
``stored_reward``): a verdict the source harness recorded, graded by no judgekit layer."""

register_layer(TAU_BENCH_LAYER)
register_layer(IMPORTED_LAYER)


def _task_outputs(case: Case, transcript: Transcript) -> list[str]:
    """The task's required outputs: from the episode's task, else from the case's patterns."""
    raw = transcript.metadata.get("expected_outputs")
    if isinstance(raw, list) and all(isinstance(o, str) for o in raw):
        return [str(o) for o in raw]
    wanted = case.expected.must_mention if case.expected else ()
    return [
        re.sub(r"\\(.)", r"\1", w.pattern.replace(",*", "")) if isinstance(w, TextPattern) else str(w)
        for w in wanted
    ]


def _with_snapshot_db_match(grader: LayeredGrader, case: Case, transcript: Transcript) -> Transcript:
    """A transcript loaded without the typed comparison: compare the snapshots' values as tau-bench hashes."""
    snapshot = case.expected_state.snapshot if case.expected_state else None
    if transcript.final_state is None or transcript.final_state.path is None or snapshot is None:
        return transcript
    final = grader.states.load(transcript.final_state.path, None, "final state")
    expected = grader.states.load(str(snapshot), None, "expected state")
    if not isinstance(final, Snapshot) or not isinstance(expected, Snapshot):
        return transcript
    # the tables as read (canonical JSON values, never changed): to_data() would copy them to the same values
    match = same_db(final.tables, expected.tables)
    return transcript.model_copy(update={"metadata": {**transcript.metadata, DB_MATCH_KEY: match}})


def _with_replay_notes(check: CheckResult, transcript: Transcript) -> CheckResult:
    """The ``tau-bench:db`` check with the trial's replay notes as its evidence (unchanged without notes).

    The notes (a call that raised on replay, or named no tool) are also the run's problems
    (``run.problems``). A note does not change the verdict: a call that failed on replay as it failed in
    the episode leaves the replayed state faithful, and one judgekit could not replay as it happened is
    named here and in the problems so that a reader knows the database comparison rests on it.
    """
    notes = transcript.metadata.get(REPLAY_NOTES_KEY)
    if not isinstance(notes, list) or not notes:
        return check
    evidence = tuple(
        Evidence(
            kind="note",
            summary=f"replay: call {n.get('call')} ({n.get('tool')}): {n.get('error')}; {n.get('meaning')}",
        )
        for n in notes
        if isinstance(n, dict)
    )
    unfaithful = sum(1 for n in notes if isinstance(n, dict) and not n.get("episode_error"))
    extra = (
        f"; {unfaithful} call(s) could not be replayed as they happened, so the replayed database may "
        "differ from the episode's (see the evidence)"
        if unfaithful
        else f"; {len(notes)} call(s) failed on replay as in the episode"
    )
    return check.model_copy(update={"reason": check.reason + extra, "evidence": (*check.evidence, *evidence)})


def _episode_check(transcript: Transcript) -> CheckResult:
    if transcript.ended_by == UNFINISHED:
        return CheckResult(
            check_id=EPISODE_CHECK,
            layer="tau-bench",
            verdict=Verdict.FAIL,
            reason="the episode did not finish (step limit or error), so tau-bench gave it no reward",
            category=FailureCategory.INCOMPLETE_EXECUTION,
            evidence=(
                Evidence(
                    kind="note",
                    summary=f"{len(transcript.messages)} messages; last role {transcript.messages[-1].role}",
                )
                if transcript.messages
                else Evidence(kind="note", summary="no messages"),
            ),
        )
    if transcript.ended_by is None:
        return CheckResult(
            check_id=EPISODE_CHECK,
            layer="tau-bench",
            verdict=Verdict.NOT_EVALUATED,
            reason="the transcript does not record how the episode ended",
        )
    return CheckResult(
        check_id=EPISODE_CHECK,
        layer="tau-bench",
        verdict=Verdict.PASS,
        reason=f"ended by {transcript.ended_by}",
    )


def pass_hat_k_table(
    grades: Iterable[Grade], ks: Sequence[int] = (1, 2, 3, 4), *, undecided: UndecidedPolicy
) -> dict[int, float]:
    """pass^k from judgekit verdicts: per case, the trials that passed out of its counted trials.

    A trial counts as a success only when its verdict is ``pass``. An undecided trial (``error``,
    ``insufficient_information``, ``not_evaluated``) counts as the caller says
    (:data:`judgekit.stats.UndecidedPolicy`): under ``"fail"`` it is a trial that did not succeed, which is
    how tau-bench counts a reward other than 1, so tau-bench's published figures are reproduced with
    ``undecided="fail"``; under ``"exclude"`` it is left out of its case's trials.

    Args:
        grades: One grade per trial.
        ks: The k values, each ``>= 1``.
        undecided: How an undecided trial counts; required, so the choice is always visible.

    Returns:
        ``k -> pass^k`` in [0, 1], in the order of ``ks``.

    Raises:
        ValueError: On an unknown policy, no grades, or when a case has fewer than ``k`` counted trials
            (pass^k is undefined there; under ``"exclude"`` the message names the excluded trials).
    """
    from judgekit.stats import check_undecided_policy, pass_hat_k

    policy = check_undecided_policy(undecided)
    n: defaultdict[str, int] = defaultdict(int)
    c: defaultdict[str, int] = defaultdict(int)
    u: defaultdict[str, int] = defaultdict(int)
    for grade in grades:
        n[grade.case_id] += 1
        c[grade.case_id] += grade.verdict is Verdict.PASS
        u[grade.case_id] += grade.verdict not in (Verdict.PASS, Verdict.FAIL)
    ids = sorted(n)
    trials, passes, undecided_counts = [n[i] for i in ids], [c[i] for i in ids], [u[i] for i in ids]
    return {k: pass_hat_k(trials, passes, k, undecided_counts=undecided_counts, undecided=policy) for k in ks}
