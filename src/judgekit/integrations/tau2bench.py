"""tau2-bench: simulation results as judgekit cases and transcripts, its reward reproduced and audited.

A tau2-bench results file (``sierra-research/tau2-bench``: ``info``, ``tasks``, ``simulations``) is read
with :func:`load_run`. Each task becomes a :class:`~judgekit.cases.Case` (:func:`task_case`) whose id is
the task id escaped reversibly (:func:`case_id_for`, :func:`task_id_of`: telecom's
``[mobile_data_issue]data_mode_off|...`` is no case id as it stands):

* ``initial_state``: the domain database before the simulation, when the caller names one (``db.json``,
  or telecom's ``db.toml`` read by :func:`read_db` and written as JSON);
* ``expected.route``: the task's gold ``actions`` (``evaluation_criteria.actions``), each with the
  arguments tau2 compares (all of them, or its ``compare_args``), identical actions once (one tau2 call
  satisfies them all), other calls allowed: tau2's action checks. judgekit's route is stricter in two
  ways: a tool may be called at most as often as it has steps (``route:max_calls``; tau2 sets no limit),
  and a step's arguments are compared as the step names them (tau2 compares those the *call* passes);
* ``expected.must_mention``: each ``communicate_info`` string, found the way tau2 finds it
  (case-insensitive, in an assistant message once commas are removed);
* the ``nl_assertions`` as judge criteria: ``required_outcome`` (one critical criterion, every assertion
  must hold) when ``NL_ASSERTION`` is in the task's ``reward_basis``, else one scored
  ``response_rubric`` line per assertion (judged, never gating: tau2 judges them and does not count them).

Each simulation becomes one trial (trial ``trial + 1``: judgekit trials are 1-based) with its messages,
tool calls and tool results; ``ended_by`` is tau2's ``termination_reason``. The calls a simulated user makes
on its own device (tau2 telecom outside solo mode) are not the agent's: they and their results go to the
transcript's ``metadata.user_tool_calls``, and the gold actions whose ``requestor`` is ``user`` leave the
route. In solo mode the agent makes those calls itself, and they are its calls and route steps.

tau2's reward (``evaluator.py``, ``EvaluationType.ALL``) is reproduced per simulation
(:func:`reproduce_reward`): a simulation that ended other than by ``agent_stop`` or ``user_stop`` scores
0, a task without evaluation criteria 1.0, and otherwise the reward is the product of only the components
in the task's ``reward_basis``:

* ``DB``: the final database equals the one the gold actions produce. tau2's results files do not store
  databases, so this is either replayed here (``tools=``: the domain's tool functions, as for tau-bench) or
  taken from the simulation's stored ``reward_info.db_check`` (the report says which);
* ``ENV_ASSERTION``: from the stored ``reward_info.env_assertions`` (they call the domain's code);
* ``ACTION``: every gold action has a matching tool call of the assistant or the user (tau2's
  ``Action.compare_with_tool_call``: same name, and equal values on the compared arguments), recomputed;
* ``COMMUNICATE``: every ``communicate_info`` string is in an assistant text, recomputed;
* ``NL_ASSERTION``: every assertion met, from the verdicts of tau2's LLM judge stored in
  ``reward_info.nl_assertions`` (``None`` when it stored none: the reward then cannot be reproduced).

Recomputed checks that disagree with the stored ones are listed on the reproduction. :func:`criteria_findings`
lists, per task, what its criteria state and its reward does not check: every component tau2 computed that
is not in the ``reward_basis``, the DB check included (``not_in_reward``; with the simulations that scored
1.0 although such a check failed) and components in the basis with nothing to check, so that they score
1.0 whatever happens (``empty_scores_one``). An import that maps no simulation to a trial is an error.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError

from judgekit.cases import Case
from judgekit.errors import JudgekitError, LocatedError, Problem
from judgekit.integrations.taubench import output_pattern, replay_actions
from judgekit.integrations.taubench_reward import output_said
from judgekit.io.documents import MAX_IMPORT_BYTES, load_json_bounded
from judgekit.state import canonical

if TYPE_CHECKING:
    from judgekit.formats.importers import ImportedTrial

__all__ = [
    "CASES_FILE",
    "COMPONENTS",
    "DB_FIXTURE",
    "DB_FORMATS",
    "DEFAULT_REWARD_BASIS",
    "TRANSCRIPTS_FILE",
    "Tau2Action",
    "Tau2Finding",
    "Tau2Reward",
    "Tau2Run",
    "Tau2Task",
    "case_id_for",
    "criteria_findings",
    "finding_lines",
    "id_lines",
    "is_successful",
    "load_run",
    "read_db",
    "read_results",
    "reproduce_reward",
    "reward_lines",
    "rewards_pass_hat",
    "run_document",
    "task_case",
    "task_id_of",
    "write_run",
]

COMPONENTS = ("DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTION")
"""tau2's reward types (``RewardType``), in the order its evaluator multiplies them."""

DEFAULT_REWARD_BASIS = ("DB", "COMMUNICATE")
"""The ``reward_basis`` a task has when it names none (tau2's ``EvaluationCriteria`` default)."""

_FINISHED = frozenset({"agent_stop", "user_stop"})
"""Termination reasons after which tau2 evaluates a simulation (any other scores 0)."""

_CRITERIA = {
    "ACTION": "actions",
    "COMMUNICATE": "communicate_info",
    "NL_ASSERTION": "nl_assertions",
    "ENV_ASSERTION": "env_assertions",
}
"""Reward component -> the evaluation-criteria list it checks."""

Json = Any


# --------------------------------------------------------------------------- task ids and case ids

_ESCAPE = "."
"""The escape character of :func:`case_id_for`: itself and every character a case id may not hold are
written as ``.`` and two uppercase hexadecimal digits per UTF-8 byte."""

_PLAIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_:/-")
"""The characters a case id may hold (``cases._ID_PATTERN``) other than the escape character."""


def case_id_for(task_id: str, prefix: str = "task-") -> str:
    """The judgekit case id of a tau2 task id: the prefix, then the id with its other characters escaped.

    Letters, digits and ``_:/-`` are kept; ``.`` and every other character (tau2 telecom's ``[``, ``]``,
    ``|``, spaces, non-ASCII letters) become ``.`` and two uppercase hexadecimal digits per UTF-8 byte, as
    percent-encoding does with ``%``: ``[mobile_data_issue]data_mode_off`` gives
    ``task-.5Bmobile_data_issue.5Ddata_mode_off``. Ids of digits (retail, airline) are unchanged
    (``task-5``). The mapping is injective and :func:`task_id_of` reverses it, so two tau2 tasks never
    share a case and every case names its task.

    Args:
        task_id: tau2's task id, as text (any string).
        prefix: Put before the escaped id (``task-``); the empty prefix gives the escaped id alone.

    Returns:
        The case id. It is a valid case id when it starts with a letter or digit (always, with a prefix
        that does; with an empty prefix, when the task id itself does).
    """
    out = [prefix]
    for char in task_id:
        if char in _PLAIN:
            out.append(char)
        else:
            out.extend(f"{_ESCAPE}{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))
    return "".join(out)


def task_id_of(case_id: str, prefix: str = "task-") -> str | None:
    """The tau2 task id a case id was made from by :func:`case_id_for`, or ``None`` when it was not.

    Args:
        case_id: The case id.
        prefix: The prefix :func:`case_id_for` was given.

    Returns:
        The task id, or ``None`` when ``case_id`` does not start with ``prefix`` or is not an output of
        :func:`case_id_for` (an escape not followed by two uppercase hexadecimal digits, bytes that are not
        UTF-8, an escaped character that is written plain, or a character a case id may not hold).
    """
    if not case_id.startswith(prefix):
        return None
    rest = case_id[len(prefix) :]
    raw = bytearray()
    i = 0
    while i < len(rest):
        char = rest[i]
        if char == _ESCAPE:
            code = rest[i + 1 : i + 3]
            if len(code) != 2 or any(c not in "0123456789ABCDEF" for c in code):
                return None
            raw.append(int(code, 16))
            i += 3
        elif char in _PLAIN:
            raw.extend(char.encode("ascii"))
            i += 1
        else:
            return None
    try:
        task_id = raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None
    return task_id if case_id_for(task_id, prefix) == case_id else None


# --------------------------------------------------------------------------- tasks


@dataclass(frozen=True)
class Tau2Action:
    """One gold action of a task.

    Attributes:
        action_id: tau2's action id (``"5_0"``).
        name: The tool's name.
        arguments: The tool call's arguments.
        requestor: Who makes the call in tau2's environment: ``assistant`` or ``user``.
        compare_args: The argument names tau2 compares, or ``None`` for those of the actual call.
    """

    action_id: str | None
    name: str
    arguments: dict[str, Json]
    requestor: str = "assistant"
    compare_args: tuple[str, ...] | None = None

    def matches(self, name: str, arguments: Mapping[str, Json]) -> bool:
        """Whether a tool call matches this action, as tau2's ``Action.compare_with_tool_call`` decides.

        The names must be equal; then the arguments named by ``compare_args`` (when it is ``None``: the
        *call's* own argument names) must have equal values on both sides, so a call that passes no
        argument matches any action of its name.
        """
        if name != self.name:
            return False
        keys = set(arguments) if self.compare_args is None else set(self.compare_args)
        if not keys:
            return True
        mine = {k: v for k, v in self.arguments.items() if k in keys}
        theirs = {k: v for k, v in arguments.items() if k in keys}
        return bool(mine == theirs)


@dataclass(frozen=True)
class Tau2Task:
    """A tau2-bench task with its evaluation criteria.

    Attributes:
        task_id: The task's id (text, as tau2 stores it).
        instructions: The simulated user's scenario, in words (reason for call, known and unknown info,
            task instructions).
        has_criteria: Whether the task has ``evaluation_criteria`` at all (without, tau2 scores 1.0).
        actions: The gold actions (``None`` when the criteria leave the list out).
        communicate_info: Strings the assistant must say.
        nl_assertions: Natural-language assertions for tau2's LLM judge.
        env_assertions: How many environment assertions the criteria hold (``None``: no list).
        reward_basis: The components that multiply into the reward.
    """

    task_id: str
    instructions: str
    has_criteria: bool
    actions: tuple[Tau2Action, ...] | None
    communicate_info: tuple[str, ...]
    nl_assertions: tuple[str, ...]
    env_assertions: int | None
    reward_basis: tuple[str, ...]

    @classmethod
    def from_data(cls, data: Any, *, where: str) -> Tau2Task:
        """Read a tau2 task object (``id``, ``user_scenario``, ``evaluation_criteria``).

        Args:
            data: The parsed task.
            where: Where it is, for errors (``results.json: tasks[3]``).

        Raises:
            JudgekitError: When a field has the wrong shape; the message names the place and the field.
        """
        if not isinstance(data, Mapping):
            raise JudgekitError(f"{where}: a task must be an object, found {type(data).__name__}")
        task_id = data.get("id")
        if isinstance(task_id, bool) or not isinstance(task_id, str | int):
            raise JudgekitError(f"{where}: 'id' must be text or a number, got {task_id!r:.60}")
        where = f"{where} (task {task_id})"
        instructions = _instructions(data)
        if instructions is None:
            raise JudgekitError(
                f"{where}: 'user_scenario.instructions' must be the user's scenario (text, or an object "
                "with reason_for_call, known_info, unknown_info, task_instructions); the case needs the "
                "user's goal"
            )
        criteria = data.get("evaluation_criteria")
        if criteria is None:
            return cls(str(task_id), instructions, False, None, (), (), None, DEFAULT_REWARD_BASIS)
        if not isinstance(criteria, Mapping):
            raise JudgekitError(f"{where}: 'evaluation_criteria' must be an object or null")
        actions: list[Tau2Action] | None = None
        if criteria.get("actions") is not None:
            raw_actions = criteria["actions"]
            if not isinstance(raw_actions, list):
                raise JudgekitError(f"{where}: evaluation_criteria.actions must be a list or null")
            actions = [
                _action(raw, f"{where}: evaluation_criteria.actions[{i}]")
                for i, raw in enumerate(raw_actions)
            ]
        texts = {}
        for key in ("communicate_info", "nl_assertions"):
            value = criteria.get(key) or []
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise JudgekitError(f"{where}: evaluation_criteria.{key} must be a list of texts or null")
            texts[key] = tuple(value)
        env = criteria.get("env_assertions")
        if env is not None and not isinstance(env, list):
            raise JudgekitError(f"{where}: evaluation_criteria.env_assertions must be a list or null")
        basis = criteria.get("reward_basis", list(DEFAULT_REWARD_BASIS))
        if not isinstance(basis, list) or any(b not in COMPONENTS for b in basis):
            raise JudgekitError(
                f"{where}: evaluation_criteria.reward_basis must be a list of {', '.join(COMPONENTS)}; "
                f"got {basis!r:.80}"
            )
        return cls(
            str(task_id),
            instructions,
            True,
            tuple(actions) if actions is not None else None,
            texts["communicate_info"],
            texts["nl_assertions"],
            len(env) if env is not None else None,
            tuple(basis),
        )


def _action(raw: Any, where: str) -> Tau2Action:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("name"), str):
        raise JudgekitError(
            f"{where}: an action must be {{name: text, arguments: object}}, found {raw!r:.80}"
        )
    arguments = raw.get("arguments", {})
    if not isinstance(arguments, Mapping):
        raise JudgekitError(f"{where}: 'arguments' must be an object")
    compare = raw.get("compare_args")
    if compare is not None and (
        not isinstance(compare, list) or not all(isinstance(c, str) for c in compare)
    ):
        raise JudgekitError(f"{where}: 'compare_args' must be a list of argument names or null")
    action_id = raw.get("action_id")
    return Tau2Action(
        str(action_id) if action_id is not None else None,
        raw["name"],
        dict(arguments),
        str(raw.get("requestor") or "assistant"),
        tuple(compare) if compare is not None else None,
    )


def _instructions(data: Mapping[str, Any]) -> str | None:
    scenario = data.get("user_scenario")
    instructions = scenario.get("instructions") if isinstance(scenario, Mapping) else None
    if isinstance(instructions, str):
        return instructions.strip() or None
    if not isinstance(instructions, Mapping):
        return None
    parts = [
        f"{label}: {instructions[key].strip()}"
        for key, label in (
            ("reason_for_call", "Reason for call"),
            ("known_info", "Known info"),
            ("unknown_info", "Unknown info"),
            ("task_instructions", "Task instructions"),
        )
        if isinstance(instructions.get(key), str) and instructions[key].strip()
    ]
    return "\n".join(parts) or None


def task_case(
    task: Tau2Task, *, case_id: str, initial_state: str | None = None, users_act: bool = False
) -> Case:
    """The judgekit case of a tau2 task (see the module docs for what maps to what).

    Args:
        task: The task.
        case_id: The case id (by convention :func:`case_id_for` of the task id: ``task-5``).
        initial_state: Path of the database before the simulation, relative to the case set, or ``None``.
        users_act: Whether the simulated user makes the gold actions whose ``requestor`` is ``user`` (tau2
            telecom outside solo mode, where the user works its own device): they are left out of the
            route, which checks the agent. ``False`` (solo mode, and domains without user tools): the agent
            makes every gold action.
    """
    expected: dict[str, Any] = {"must_mention": [output_pattern(c) for c in task.communicate_info]}
    agents = [a for a in task.actions or () if not (users_act and a.requestor == "user")]
    if agents:
        # One tau2 tool call satisfies every gold action it matches, so identical gold actions are one step.
        steps: list[tuple[str, Any]] = []
        for a in agents:
            step = (a.name, canonical(_compared(a)))
            if step not in steps:
                steps.append(step)
        counts = Counter(name for name, _ in steps)
        expected["route"] = [{"tool": name, "args": args, "max_calls": counts[name]} for name, args in steps]
        expected["route_match"] = "superset"
    data: dict[str, Any] = {
        "id": case_id,
        "origin": {"type": "tau2-bench", "ref": f"task {task.task_id}"},
        "user_goal": task.instructions,
        "tools": sorted({a.name for a in agents}),
        "expected": expected,
    }
    if task.nl_assertions:
        if "NL_ASSERTION" in task.reward_basis:
            data["required_outcome"] = "All of these hold: " + "; ".join(task.nl_assertions)
        else:
            data["response_rubric"] = list(task.nl_assertions)
    if initial_state is not None:
        data["initial_state"] = initial_state
    return Case.model_validate(data)


def _compared(action: Tau2Action) -> dict[str, Json]:
    if action.compare_args is None:
        return dict(action.arguments)
    return {k: v for k, v in action.arguments.items() if k in action.compare_args}


# --------------------------------------------------------------------------- the reward


def is_successful(reward: float) -> bool:
    """tau2's success test: the reward is 1 within 1e-6."""
    return (1 - 1e-6) <= reward <= (1 + 1e-6)


def rewards_pass_hat(rewards_by_task: Mapping[str, Sequence[float]], k: int) -> float | None:
    """tau2's pass^k: the mean over tasks of ``C(successes, k) / C(trials, k)``, by judgekit's one formula.

    tau2 has no undecided trial (every simulation has a numeric reward; a reward other than 1 is a
    failure), so this is :func:`judgekit.stats.pass_hat_k` with ``undecided="fail"`` and no undecided
    trials.

    Returns:
        The figure, or ``None`` when some task has fewer than ``k`` trials (tau2 defines none then) or
        there are no tasks.
    """
    from judgekit.stats import pass_hat_k as _pass_hat_k

    if not rewards_by_task or k < 1 or any(len(r) < k for r in rewards_by_task.values()):
        return None
    rewards = list(rewards_by_task.values())
    return _pass_hat_k(
        [len(r) for r in rewards],
        [sum(is_successful(x) for x in r) for r in rewards],
        k,
        undecided_counts=[0] * len(rewards),
        undecided="fail",
    )


@dataclass(frozen=True)
class Tau2Reward:
    """tau2's reward of one simulation, reproduced from its components.

    Attributes:
        task_id: The task.
        trial: tau2's trial number (0-based).
        termination_reason: How the simulation ended (``user_stop``...).
        db_match: The DB check, or ``None`` when neither a replay nor a stored check gives it.
        db_source: ``replayed`` (here, with the domain's tools), ``stored`` (the simulation's
            ``reward_info.db_check``), ``no_actions`` (the criteria list neither actions nor environment
            assertions: tau2 passes the check without comparing) or ``None``.
        action_checks: Per gold action, whether a tool call matched it (recomputed).
        communicate_checks: Per ``communicate_info`` string, whether an assistant text said it (recomputed).
        nl_assertions: Per assertion, tau2's LLM judge's stored verdict; ``None`` when none was stored.
        components: Every component's value (1.0 or 0.0), ``None`` when it cannot be known.
        reward_basis: The components that multiply into the reward.
        reward: The reproduced reward; ``None`` when a component in the basis is unknown.
        stored_reward: The reward tau2 stored, or ``None``.
        note: Why the reward is what it is without components (``terminated: max_steps``, ``no evaluation
            criteria``), else ``None``.
        disagreements: Where a recomputed check differs from the stored one (empty when they agree).
        env_checks: Per environment assertion, tau2's stored ``met`` (they call the domain's code; empty
            when the task states none); ``None`` when it stored none for a task that states some.
    """

    task_id: str
    trial: int
    termination_reason: str | None
    db_match: bool | None
    db_source: Literal["replayed", "stored", "no_actions"] | None
    action_checks: tuple[bool, ...]
    communicate_checks: tuple[bool, ...]
    nl_assertions: tuple[bool, ...] | None
    components: dict[str, float | None]
    reward_basis: tuple[str, ...]
    reward: float | None
    stored_reward: float | None
    note: str | None = None
    disagreements: tuple[str, ...] = ()
    env_checks: tuple[bool, ...] | None = ()

    @property
    def breakdown(self) -> dict[str, float | None]:
        """The components in the reward basis with their values (tau2's ``reward_breakdown``)."""
        return {c: self.components[c] for c in COMPONENTS if c in self.reward_basis}

    @property
    def reproduced(self) -> bool:
        """Whether the reproduced reward equals the stored one (both known) and every check agrees."""
        return (
            self.reward is not None
            and self.stored_reward is not None
            and abs(self.reward - self.stored_reward) < 1e-9
            and not self.disagreements
        )


def _tool_calls(messages: Sequence[Any]) -> list[tuple[str, dict[str, Json]]]:
    """The assistant's and the user's tool calls, in order (tau2 replays and compares both)."""
    calls: list[tuple[str, dict[str, Json]]] = []
    for message in messages:
        if not isinstance(message, Mapping) or message.get("role") not in ("assistant", "user"):
            continue
        for call in message.get("tool_calls") or ():
            if isinstance(call, Mapping) and isinstance(call.get("name"), str):
                arguments = call.get("arguments")
                calls.append((call["name"], dict(arguments) if isinstance(arguments, Mapping) else {}))
    return calls


def _said(info: str, messages: Sequence[Any]) -> bool:
    """tau2's communicate check: ``info.lower()`` in an assistant text lowered with commas removed.

    The same test as tau-bench's outputs (:func:`~judgekit.integrations.taubench_reward.output_said`),
    over the assistant messages with text.
    """
    texts = [
        m["content"]
        for m in messages
        if isinstance(m, Mapping)
        and m.get("role") == "assistant"
        and isinstance(m.get("content"), str)
        and m["content"].strip()
    ]
    return output_said(info, texts)


def _all(checks: Sequence[bool]) -> float:
    return 1.0 if all(checks) else 0.0


def reproduce_reward(
    task: Tau2Task,
    simulation: Mapping[str, Any],
    *,
    db_match: bool | None = None,
) -> Tau2Reward:
    """Reproduce tau2's reward of one simulation (``evaluate_simulation`` with ``EvaluationType.ALL``).

    Args:
        task: The simulated task.
        simulation: The simulation as tau2 stores it (``task_id``, ``trial``, ``termination_reason``,
            ``messages``, ``reward_info``).
        db_match: The DB check replayed by the caller; ``None`` takes the stored ``reward_info.db_check``.

    Returns:
        The reproduction, with every component and the checks that disagree with the stored ones.
    """
    messages = simulation.get("messages") or []
    raw_info = simulation.get("reward_info")
    info: Mapping[str, Any] = raw_info if isinstance(raw_info, Mapping) else {}
    stored = info.get("reward")
    stored_reward = (
        float(stored) if isinstance(stored, int | float) and not isinstance(stored, bool) else None
    )
    trial = simulation.get("trial")
    reason = simulation.get("termination_reason")
    unscored = Tau2Reward(
        task_id=task.task_id,
        trial=trial if isinstance(trial, int) and not isinstance(trial, bool) else 0,
        termination_reason=reason if isinstance(reason, str) else None,
        db_match=None,
        db_source=None,
        action_checks=(),
        communicate_checks=(),
        nl_assertions=None,
        components=dict.fromkeys(COMPONENTS),
        reward_basis=task.reward_basis,
        reward=None,
        stored_reward=stored_reward,
    )
    if reason not in _FINISHED:
        return dataclasses.replace(unscored, reward=0.0, note=f"terminated: {reason}")
    if not task.has_criteria:
        return dataclasses.replace(unscored, reward=1.0, note="no evaluation criteria")
    calls = _tool_calls(messages)
    actions = tuple(any(a.matches(n, args) for n, args in calls) for a in task.actions or ())
    communicate = tuple(_said(s, messages) for s in task.communicate_info)
    disagreements: list[str] = []
    stored_actions = _stored_flags(info, "action_checks", "action_match")
    if stored_actions is not None and task.actions and stored_actions != actions:
        disagreements.append(f"action checks: recomputed {_flags(actions)}, stored {_flags(stored_actions)}")
    stored_comm = _stored_flags(info, "communicate_checks", "met")
    if stored_comm is not None and task.communicate_info and stored_comm != communicate:
        disagreements.append(
            f"communicate checks: recomputed {_flags(communicate)}, stored {_flags(stored_comm)}"
        )
    source: Literal["replayed", "stored", "no_actions"] | None = "replayed" if db_match is not None else None
    if db_match is None:
        check = info.get("db_check")
        if isinstance(check, Mapping) and isinstance(check.get("db_match"), bool):
            db_match, source = check["db_match"], "stored"
    else:
        check = info.get("db_check")
        stored_match = check.get("db_match") if isinstance(check, Mapping) else None
        if isinstance(stored_match, bool) and stored_match != db_match:
            disagreements.append(f"DB check: replayed {db_match}, stored {stored_match}")
    if task.actions is None and task.env_assertions is None:
        # tau2: "No expected actions or env assertions": the DB check passes without comparing anything.
        db_match, source = True, "no_actions"
    nl: tuple[bool, ...] | None = None
    if task.nl_assertions:
        nl = _stored_flags(info, "nl_assertions", "met")
        if nl is not None and len(nl) != len(task.nl_assertions):
            nl = None
    env = _stored_flags(info, "env_assertions", "met") if task.env_assertions else ()
    components: dict[str, float | None] = {
        "DB": None if db_match is None else float(db_match),
        "ENV_ASSERTION": _all(env) if env is not None else None,
        "ACTION": _all(actions),
        "COMMUNICATE": _all(communicate),
        "NL_ASSERTION": (_all(nl) if nl is not None else None) if task.nl_assertions else 1.0,
    }
    reward: float | None = 1.0
    for name in _product_terms(task.reward_basis):
        value = components[name]
        reward = None if reward is None or value is None else reward * value
    return dataclasses.replace(
        unscored,
        db_match=db_match,
        db_source=source,
        action_checks=actions,
        communicate_checks=communicate,
        nl_assertions=nl,
        components=components,
        reward=reward,
        disagreements=tuple(disagreements),
        env_checks=env,
    )


def _product_terms(basis: Sequence[str]) -> list[str]:
    """The components tau2 multiplies for a basis (its env evaluator gives DB and ENV_ASSERTION as one)."""
    return [c for c in COMPONENTS if c in basis]


def _stored_flags(info: Any, key: str, flag: str) -> tuple[bool, ...] | None:
    items = info.get(key) if isinstance(info, Mapping) else None
    if not isinstance(items, list) or not items:
        return None
    flags = [item.get(flag) for item in items if isinstance(item, Mapping)]
    if len(flags) != len(items) or not all(isinstance(f, bool) for f in flags):
        return None
    return tuple(bool(f) for f in flags)


def _flags(flags: Sequence[bool]) -> str:
    return f"{sum(flags)}/{len(flags)} met"


# --------------------------------------------------------------------------- findings


@dataclass(frozen=True)
class Tau2Finding:
    """Something a task's criteria state that its reward does not check.

    Attributes:
        task_id: The task.
        kind: ``not_in_reward`` (criteria whose component is not in the reward basis),
            ``empty_scores_one`` (a component in the basis with an empty criteria list: it scores 1.0
            whatever the simulation did) or ``never_met`` (a ``communicate_info`` string with a comma:
            tau2 removes commas from the message, not from the string, so it is never found).
        component: The component (``ACTION``, ``COMMUNICATE``, ``NL_ASSERTION``, ``ENV_ASSERTION``).
        criteria: How many criteria of that component the task states.
        unchecked_failures: For ``not_in_reward``: ``(trial, met, of)`` for each simulation that scored
            1.0 although not all of these criteria were met (by the recomputed or stored checks).
        message: The finding in words.
    """

    task_id: str
    kind: Literal["not_in_reward", "empty_scores_one", "never_met"]
    component: str
    criteria: int
    unchecked_failures: tuple[tuple[int, int, int], ...]
    message: str


def _checks_of(reward: Tau2Reward, component: str) -> tuple[bool, ...] | None:
    """A simulation's checks of one component (``DB``: its one check), ``None`` when unknown."""
    if component == "DB":
        return None if reward.db_match is None else (reward.db_match,)
    if component == "ENV_ASSERTION":
        return reward.env_checks
    if component == "ACTION":
        return reward.action_checks
    if component == "COMMUNICATE":
        return reward.communicate_checks
    return reward.nl_assertions


_CHECKED = {
    "DB": "the final database against the one the gold actions make",
    **_CRITERIA,
}
"""Reward component -> what its check compares, in words (the criteria list it checks)."""


def _computed(task: Tau2Task) -> dict[str, int]:
    """Per component, how many checks tau2 computes for the task (0: none, or it scores 1.0 trivially).

    tau2's environment evaluator runs the DB check whenever the criteria list actions or environment
    assertions (even empty lists), whatever the basis; the other components have one check per criterion.
    """
    return {
        "DB": int(task.actions is not None or task.env_assertions is not None),
        "ENV_ASSERTION": task.env_assertions or 0,
        "ACTION": len(task.actions or ()),
        "COMMUNICATE": len(task.communicate_info),
        "NL_ASSERTION": len(task.nl_assertions),
    }


def criteria_findings(task: Tau2Task, rewards: Sequence[Tau2Reward] = ()) -> list[Tau2Finding]:
    """What a task's criteria state and its reward composition does not check.

    Args:
        task: The task.
        rewards: Its simulations' reproductions, to name those that scored 1.0 with an unchecked failure.

    Returns:
        The findings, in tau2's component order: per component computed but not in the reward basis
        (``not_in_reward``: the DB check, environment assertions, actions, communicate strings, NL
        assertions), per component in the basis with nothing to check (``empty_scores_one``), then one per
        ``communicate_info`` string that can never be met.
    """
    if not task.has_criteria:
        return []
    out: list[Tau2Finding] = []
    basis = ", ".join(task.reward_basis)
    for component, size in _computed(task).items():
        if size and component not in task.reward_basis:
            failures = []
            for r in rewards:
                checks = _checks_of(r, component)
                if r.reward is not None and is_successful(r.reward) and checks and not all(checks):
                    failures.append((r.trial, sum(checks), len(checks)))
            if component == "DB":
                what = "DB check"
                detail = "".join(f"; trial {t} scored 1.0 with db_match false" for t, _, _ in failures)
            else:
                what = f"{size} {_CRITERIA[component]}"
                detail = "".join(
                    f"; trial {t} scored 1.0 with {met}/{of} {_CRITERIA[component]} met"
                    for t, met, of in failures
                )
            out.append(
                Tau2Finding(
                    task.task_id,
                    "not_in_reward",
                    component,
                    size,
                    tuple(failures),
                    f"task {task.task_id}: {what} computed, not in the reward basis [{basis}]{detail}",
                )
            )
        elif not size and component in task.reward_basis:
            empty = (
                "the criteria list neither actions nor env_assertions"
                if component == "DB"
                else f"{_CRITERIA[component]} is empty"
            )
            out.append(
                Tau2Finding(
                    task.task_id,
                    "empty_scores_one",
                    component,
                    0,
                    (),
                    f"task {task.task_id}: {component} is in the reward basis but {empty}, so it scores "
                    "1.0 whatever the agent says or does",
                )
            )
    for info in task.communicate_info:
        if "," in info:
            out.append(
                Tau2Finding(
                    task.task_id,
                    "never_met",
                    "COMMUNICATE",
                    1,
                    (),
                    f"task {task.task_id}: communicate_info {info!r} has a comma, and tau2 removes commas "
                    "from the message before looking, so this check can never be met",
                )
            )
    return out


# --------------------------------------------------------------------------- the run


@dataclass
class Tau2Run:
    """A tau2-bench results file as judgekit cases, transcripts and reproduced rewards.

    Attributes:
        source: The results file.
        cases: Case id to case, one per task that was simulated.
        trials: One imported trial per simulation, in file order.
        rewards: The reward reproduction of each imported simulation, in the same order.
        findings: Per task (in file order), what its criteria state and its reward does not check.
        problems: Simulations or tasks that could not be imported, located (they are left out).
        task_ids: Case id to the tau2 task id it was made from (:func:`case_id_for`), one per case.
    """

    source: Path
    cases: dict[str, Case]
    trials: list[ImportedTrial]
    rewards: list[Tau2Reward]
    findings: list[Tau2Finding] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    task_ids: dict[str, str] = field(default_factory=dict)

    def pass_hat(self, k: int) -> float | None:
        """pass^k from the reproduced rewards (``None`` when undefined or a reward is unknown)."""
        by_task: dict[str, list[float]] = {}
        for r in self.rewards:
            if r.reward is None:
                return None
            by_task.setdefault(r.task_id, []).append(r.reward)
        return rewards_pass_hat(by_task, k)

    def escaped_ids(self) -> dict[str, str]:
        """Case id -> ``tau2 task <id>``, for each case whose task id :func:`case_id_for` escaped."""
        return {
            case_id: f"tau2 task {task_id}"
            for case_id, task_id in self.task_ids.items()
            if case_id_for(task_id, "") != task_id
        }

    @property
    def max_k(self) -> int:
        """The largest k pass^k is defined for: the fewest simulations of any task (0 when there are none).

        tau2's ``max_k`` is the same (it also warns when a task has fewer trials than ``num_trials``).
        """
        counts = Counter(r.task_id for r in self.rewards)
        return min(counts.values(), default=0)

    def pass_hats(self) -> dict[int, float | None]:
        """pass^k for every k from 1 to :attr:`max_k` (tau2's ``pass_hat_ks``), in order of k.

        A value is ``None`` when a reproduced reward is unknown; the dict is empty when there are no rewards.
        """
        return {k: self.pass_hat(k) for k in range(1, self.max_k + 1)}


def read_results(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a tau2 results file (at most :data:`~judgekit.io.documents.MAX_IMPORT_BYTES`).

    Raises:
        JudgekitError: When the file cannot be read, is not JSON, breaks a limit, or is not an object with
            a ``simulations`` list (the message names the file, and the line for JSON errors).
    """
    path = Path(path)
    data = _read_json(path, "results file")
    if not isinstance(data, dict) or not isinstance(data.get("simulations"), list):
        found = (
            type(data).__name__ if not isinstance(data, dict) else "an object without a 'simulations' list"
        )
        raise JudgekitError(
            f"{path}: a tau2 results file is an object with 'tasks' and 'simulations' lists, found {found}"
        )
    return data


def _read_json(path: Path, what: str) -> Any:
    try:
        from judgekit.io.documents import read_regular

        raw = read_regular(path, "tau2-bench file")
    except OSError as exc:
        raise JudgekitError(f"{path}: cannot read the {what}: {exc.strerror}") from None
    try:
        return load_json_bounded(raw, source=path, max_bytes=MAX_IMPORT_BYTES, what=f"the {what}")
    except LocatedError as exc:
        raise JudgekitError(f"{exc.problem}; nothing imported") from None


@dataclass
class _Tasks:
    """The tasks an import reads, and those it could not.

    Attributes:
        tasks: Task id to task, for every task that reads and makes a valid case.
        rejected: Task id to where the task is (``tasks[3]``), for each task with a readable id that was
            rejected (its problem is in ``problems``).
        problems: One per rejected task.
        origin: Where the tasks came from, in words (``the tasks file tasks.json``).
        from_file: Whether they came from a tasks file the caller gave.
    """

    tasks: dict[str, Tau2Task]
    rejected: dict[str, str]
    problems: list[Problem]
    origin: str
    from_file: bool


DB_FORMATS = (".json", ".toml")
"""The database files :func:`read_db` reads: tau2's ``db.json`` (retail, airline) and ``db.toml``
(telecom, whose ``user_db.toml`` is the user's device)."""


def read_db(path: str | os.PathLike[str]) -> dict[str, Json]:
    """Read a tau2 domain database, JSON or TOML (by its suffix), as plain data.

    TOML dates and times become text as tau2 hashes them (``str(value)``: ``2025-01-15``), so the data is
    JSON and compares as tau2's database hash does.

    Args:
        path: ``db.json`` or ``db.toml``, as text or a path object.

    Returns:
        The database: a table of the domain's collections.

    Raises:
        JudgekitError: (exit 2) When the file cannot be read, is neither ``.json`` nor ``.toml``, does not
            parse (the message names the line), breaks a size or nesting limit, or is not a table.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in DB_FORMATS:
        raise JudgekitError(
            f"{path}: a tau2 database is db.json or db.toml (read by its suffix), not '{path.suffix}'; "
            "give the domain's database file as tau2 ships it"
        )
    if suffix == ".json":
        data = _read_json(path, "database")
    else:
        from judgekit.io.documents import decode_utf8, load_toml_bounded, read_regular

        try:
            text = decode_utf8(read_regular(path, "tau2-bench database"), path)
        except OSError as exc:
            raise JudgekitError(f"{path}: cannot read the database: {exc.strerror}") from None
        data = json.loads(json.dumps(load_toml_bounded(text, source=path), default=str))
    if not isinstance(data, dict):
        raise JudgekitError(
            f"{path}: a tau2 database is a table of the domain's collections, found {type(data).__name__}"
        )
    return data


def _read_tasks(data: Any, source: Path, case_prefix: str, *, from_file: bool) -> _Tasks:
    """The tasks of a list, by id; a task that does not read (or makes no valid case) is a problem."""
    if not isinstance(data, list):
        raise JudgekitError(f"{source}: tasks must be a list of tasks, found {type(data).__name__}")
    origin = f"the tasks file {source}" if from_file else f"the tasks of the results file {source}"
    found = _Tasks({}, {}, [], origin, from_file)
    for i, raw in enumerate(data):
        where = f"tasks[{i}]"
        raw_id = raw.get("id") if isinstance(raw, Mapping) else None
        try:
            task = Tau2Task.from_data(raw, where=where)
            task_case(task, case_id=case_id_for(task.task_id, case_prefix))
        except JudgekitError as exc:
            message = exc.message
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            loc = ".".join(str(p) for p in err["loc"])
            message = f"{where} (task {task.task_id}): makes no valid case: {loc}: {err['msg']}"
            if loc == "id":
                message += (
                    f" (case id {case_id_for(task.task_id, case_prefix)!r}; give a case prefix that starts "
                    "with a letter or digit)"
                )
        else:
            found.tasks.setdefault(task.task_id, task)
            continue
        found.problems.append(Problem(source, None, "", message))
        if isinstance(raw_id, str | int) and not isinstance(raw_id, bool):
            found.rejected.setdefault(str(raw_id), where)
    return found


def load_run(
    results: str | os.PathLike[str],
    *,
    tasks: str | os.PathLike[str] | None = None,
    db: str | os.PathLike[str] | None = None,
    tools: Mapping[str, Callable[..., Any]] | None = None,
    case_prefix: str = "task-",
    initial_state: str | None = None,
    agent_model: str | None = None,
) -> Tau2Run:
    """Read a tau2 results file into cases, transcripts, reward reproductions and criteria findings.

    Args:
        results: The results file (``Results``: ``info``, ``tasks``, ``simulations``).
        tasks: A ``tasks.json`` to take the tasks from instead of the results file's own ``tasks``.
        db: The domain's database (``db.json`` or ``db.toml``, :func:`read_db`), needed with ``tools``.
        tools: The domain's tool functions (``name -> callable(data, **kwargs)``, mutating the database in
            place) to replay the DB check: the simulation's calls on one copy of ``db``, the gold actions
            on another, compared as tau2 compares their hashes (the JSON text with sorted keys, so types
            count: ``1`` is not ``1.0``). Without them the stored ``db_check`` is used.
        case_prefix: Prefix of case ids (``task-`` gives ``task-5``; the rest is :func:`case_id_for`'s).
        initial_state: The cases' ``initial_state`` path (where the caller puts ``db.json``), or ``None``.
        agent_model: The agent's model for the run records (default: the file's ``info.agent_info.llm``).

    Returns:
        The run. Simulations whose task is unknown or whose messages do not import, and tasks that do not
        read, are listed in ``problems`` and left out (the simulations of a rejected task as one problem).

    Raises:
        JudgekitError: (exit 2) When a file cannot be read or is not a tau2 file at all, ``tools`` is given
            without ``db``, or no simulation imports (the message says why and lists every problem).
    """
    source = Path(results)
    data = read_results(source)
    if tools is not None and db is None:
        raise JudgekitError("replaying the DB check with tools= needs db= (the domain's db.json or db.toml)")
    if tasks is not None:
        found = _read_tasks(_read_json(Path(tasks), "tasks file"), Path(tasks), case_prefix, from_file=True)
    else:
        found = _read_tasks(data.get("tasks", []), source, case_prefix, from_file=False)
    problems = list(found.problems)
    initial = read_db(db) if tools is not None and db is not None else None
    info = data.get("info") if isinstance(data.get("info"), Mapping) else {}
    agent_info = info.get("agent_info") if isinstance(info, Mapping) else None
    model = agent_model or (agent_info.get("llm") if isinstance(agent_info, Mapping) else None)
    trials: list[ImportedTrial] = []
    rewards: list[Tau2Reward] = []
    used: dict[str, Tau2Task] = {}
    seen: set[tuple[str, int]] = set()
    left_out: dict[str, list[int]] = {}
    for i, sim in enumerate(data["simulations"]):
        rejected = _rejected_task(sim, found)
        if rejected is not None:
            left_out.setdefault(rejected, []).append(i)
            continue
        imported = _simulation(
            sim,
            where=f"simulations[{i}]",
            source=source,
            entry=i + 1,
            tasks=found,
            case_prefix=case_prefix,
            model=model,
            seen=seen,
        )
        if isinstance(imported, Problem):
            problems.append(imported)
            continue
        trial, task = imported
        db_match = None
        if tools is not None and initial is not None:
            db_match = _replay_db(initial, task, sim.get("messages") or [], tools)
        rewards.append(reproduce_reward(task, sim, db_match=db_match))
        trials.append(trial)
        used.setdefault(task.task_id, task)
    problems.extend(
        Problem(
            source,
            None,
            f"simulations[{', '.join(map(str, indices))}]",
            f"left out: task {task_id} was rejected ({found.rejected[task_id]} of {found.origin}, above)",
        )
        for task_id, indices in left_out.items()
    )
    if not trials:
        raise JudgekitError(_nothing_imported(source, len(data["simulations"]), found, problems))
    task_ids = {case_id_for(tid, case_prefix): tid for tid in used}
    users_act = any(t.transcript.metadata.get("user_tool_calls") for t in trials)
    cases = {
        cid: task_case(used[tid], case_id=cid, initial_state=initial_state, users_act=users_act)
        for cid, tid in task_ids.items()
    }
    findings = [
        f for tid, t in used.items() for f in criteria_findings(t, [r for r in rewards if r.task_id == tid])
    ]
    return Tau2Run(source, cases, trials, rewards, findings, problems, task_ids)


def _rejected_task(sim: Any, found: _Tasks) -> str | None:
    """The id of the simulation's task when that task was rejected (its problem is already listed)."""
    task_id = sim.get("task_id") if isinstance(sim, Mapping) else None
    if isinstance(task_id, bool) or not isinstance(task_id, str | int):
        return None
    key = str(task_id)
    return key if key in found.rejected and key not in found.tasks else None


def _nothing_imported(source: Path, simulations: int, found: _Tasks, problems: Sequence[Problem]) -> str:
    """Why an import mapped no simulation to a trial, with every problem it met (one a line)."""
    if not simulations:
        why = "the results file holds no simulations"
    elif not found.tasks and found.problems:
        why = (
            f"every task of {found.origin} was rejected ({len(found.problems)} task problem(s) below), "
            f"so none of the {simulations} simulation(s) has a case"
        )
    elif not found.tasks:
        why = f"{found.origin} hold no task, so none of the {simulations} simulation(s) has a case"
    else:
        why = f"none of the {simulations} simulation(s) could be imported (problems below)"
    lines = [f"{source}: nothing imported: {why}; no file was written"]
    lines.extend(f"  {p}" for p in problems)
    return "\n".join(lines)


def _replay_db(
    initial: Any, task: Tau2Task, messages: Sequence[Any], tools: Mapping[str, Callable[..., Any]]
) -> bool:
    if task.actions is None and task.env_assertions is None:
        return True
    predicted = _replay(initial, _tool_calls(messages), tools)
    gold = _replay(initial, [(a.name, a.arguments) for a in task.actions or ()], tools)
    return _db_text(predicted) == _db_text(gold)


def _db_text(data: Any) -> str:
    """The text tau2 hashes to compare databases (``get_dict_hash``), so that types count: 1 is not 1.0.

    tau2 compares ``sha256(json.dumps(db.model_dump(), sort_keys=True, default=str))``; equal texts are
    equal hashes. Key order does not count, list order does, and so does a key's presence: the tools
    should keep the data in the shape of tau2's model dump (its floats as floats).
    """
    return json.dumps(data, sort_keys=True, default=str)


def _replay(
    initial: Any, calls: Sequence[tuple[str, Mapping[str, Json]]], tools: Mapping[str, Callable[..., Any]]
) -> Any:
    """Run tool calls on a copy of the database, as tau2's environment does (tau-bench's replay).

    A call that names no known tool changes nothing; one that raises keeps what it changed before raising
    (tau2 answers both with an error message and does not roll back); the replay goes on.
    """
    return replay_actions(initial, calls, tools)[0]


def _simulation(
    sim: Any,
    *,
    where: str,
    source: Path,
    entry: int,
    tasks: _Tasks,
    case_prefix: str,
    model: str | None,
    seen: set[tuple[str, int]],
) -> tuple[ImportedTrial, Tau2Task] | Problem:
    from judgekit.formats.importers import ImportedTrial
    from judgekit.transcript import RunRecord, Transcript

    if not isinstance(sim, Mapping):
        return Problem(source, None, where, f"a simulation must be an object, found {type(sim).__name__}")
    task_id = sim.get("task_id")
    if isinstance(task_id, bool) or not isinstance(task_id, str | int):
        return Problem(
            source, None, f"{where}.task_id", f"task_id must be text or a number, got {task_id!r:.60}"
        )
    task = tasks.tasks.get(str(task_id))
    if task is None:
        hint = "" if tasks.from_file else "; give the tasks file that holds it (--tasks)"
        return Problem(source, None, f"{where}.task_id", f"task {task_id} is not in {tasks.origin}{hint}")
    trial = sim.get("trial", 0)
    if isinstance(trial, bool) or not isinstance(trial, int) or trial < 0:
        return Problem(
            source, None, f"{where}.trial", f"trial must be a non-negative integer, got {trial!r:.60}"
        )
    if (str(task_id), trial) in seen:
        return Problem(source, None, where, f"task {task_id} trial {trial} appears twice; the first is kept")
    raw_messages = sim.get("messages")
    if not isinstance(raw_messages, list):
        return Problem(source, None, f"{where}.messages", "messages must be a list of tau2 messages")
    messages: list[dict[str, Any]] = []
    device: dict[str, dict[str, Any]] = {}
    for j, m in enumerate(raw_messages):
        if isinstance(m, Mapping) and m.get("role") == "tool" and m.get("id") in device:
            device[m["id"]]["result"] = m.get("content")
            continue
        user_calls = isinstance(m, Mapping) and m.get("role") == "user" and bool(m.get("tool_calls"))
        converted = _message(m, users_act=user_calls)
        if isinstance(converted, str):
            return Problem(source, None, f"{where}.messages[{j}]", converted)
        for k, call in enumerate(converted.pop("user_tool_calls", ())):
            device[call.get("id") or f"{where}.messages[{j}].tool_calls[{k}]"] = call
        if converted["role"] != "user" or converted.get("content") or not user_calls:
            messages.append(converted)
    info = sim.get("reward_info") if isinstance(sim.get("reward_info"), Mapping) else {}
    stored = info.get("reward") if isinstance(info, Mapping) else None
    reward = float(stored) if isinstance(stored, int | float) and not isinstance(stored, bool) else None
    metadata: dict[str, Any] = {
        "source_format": "tau2-bench",
        "task_id": str(task_id),
        "tau2_trial": trial,
        "reward": reward,
        "reward_basis": list(task.reward_basis),
        "reward_breakdown": info.get("reward_breakdown") if isinstance(info, Mapping) else None,
        "simulation_id": sim.get("id"),
        "user_tool_calls": list(device.values()) or None,
    }
    try:
        transcript = Transcript.model_validate(
            {
                "case_id": case_id_for(str(task_id), case_prefix),
                "trial": trial + 1,
                "messages": messages,
                "ended_by": sim.get("termination_reason")
                if isinstance(sim.get("termination_reason"), str)
                else None,
                "run": RunRecord(agent_model=model, config={"source_format": "tau2-bench"}),
                "metadata": {k: v for k, v in metadata.items() if v is not None},
            }
        )
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        loc = ".".join(str(p) for p in err["loc"])
        return Problem(source, None, where, f"task {task_id} trial {trial}: {loc}: {err['msg']}")
    seen.add((str(task_id), trial))
    return ImportedTrial(transcript, reward, entry), task


def _message(m: Any, *, users_act: bool = False) -> dict[str, Any] | str:
    """A tau2 message as a judgekit message, or what is wrong with it.

    With ``users_act``, a user message's tool calls (tau2 telecom's user working its device) are not the
    agent's: they come back under ``user_tool_calls``, for the transcript's metadata, not as calls.
    """
    if not isinstance(m, Mapping):
        return f"a message must be an object, found {type(m).__name__}"
    role = m.get("role")
    content = m.get("content")
    if content is not None and not isinstance(content, str):
        return f"'content' must be text or null, found {type(content).__name__}"
    if role == "tool":
        call_id = m.get("id")
        if not isinstance(call_id, str):
            return "a tool message needs the 'id' of the call it answers"
        return {"role": "tool", "tool_call_id": call_id, "content": content}
    if role not in ("assistant", "user", "system"):
        return f"'role' must be assistant, user, tool or system, got {role!r:.40}"
    out: dict[str, Any] = {"role": role, "content": content}
    calls = m.get("tool_calls")
    if calls:
        if not isinstance(calls, list):
            return "'tool_calls' must be a list"
        if role != "assistant" and not (users_act and role == "user"):
            return f"a {role} message with tool calls is not supported (only the assistant and the user call)"
        converted = []
        for k, call in enumerate(calls):
            if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
                return f"tool_calls[{k}] must be {{id, name, arguments}}"
            arguments = call.get("arguments")
            if arguments is not None and not isinstance(arguments, Mapping):
                return f"tool_calls[{k}].arguments must be an object"
            item: dict[str, Any] = {"name": call["name"], "arguments": dict(arguments or {})}
            if isinstance(call.get("id"), str):
                item["id"] = call["id"]
            converted.append(item)
        out["user_tool_calls" if role == "user" else "tool_calls"] = converted
    return out


# --------------------------------------------------------------------------- writing and reporting

CASES_FILE = "cases.jsonl"
"""Where :func:`write_run` writes the cases, one a line, inside the output folder."""

TRANSCRIPTS_FILE = "transcripts/tau2-bench.jsonl"
"""Where :func:`write_run` writes the transcripts, one a line, inside the output folder."""

DB_FIXTURE = "fixtures/db.json"
"""Where :func:`write_run` writes the database (with ``db``, as JSON), and the cases' ``initial_state``."""


def write_run(
    run: Tau2Run,
    out: str | os.PathLike[str],
    *,
    db: str | os.PathLike[str] | None = None,
    redact: Callable[[str], str] = str,
) -> dict[str, Path]:
    """Write a run's cases and transcripts into a folder (a case set ``judgekit grade`` can read).

    Args:
        run: The run (its cases should have been made with ``initial_state=DB_FIXTURE`` when ``db`` is
            given).
        out: The output folder; created when absent.
        db: The domain database (``db.json``, copied once it reads, or ``db.toml``, converted to JSON by
            :func:`read_db`) to write as ``fixtures/db.json``, or ``None``.
        redact: Applied to every line written (secrets out of the files).

    Returns:
        What was written: ``cases``, ``transcripts`` and, with ``db``, ``db``.

    Raises:
        JudgekitError: When the database does not read (nothing is written then), or the folder or a file
            cannot be written.
    """
    from judgekit.formats.importers import transcript_lines
    from judgekit.io.atomic import write_atomic

    folder = Path(out)
    db_text = _db_fixture(Path(db)) if db is not None else None
    written = {"cases": folder / CASES_FILE, "transcripts": folder / TRANSCRIPTS_FILE}
    if db_text is not None:
        written["db"] = folder / DB_FIXTURE
    try:
        for path in written.values():
            path.parent.mkdir(parents=True, exist_ok=True)
        cases = [
            redact(c.model_dump_json(exclude_defaults=True, exclude_none=True)) for c in run.cases.values()
        ]
        write_atomic(written["cases"], "".join(line + "\n" for line in cases))
        lines = [redact(line) for line in transcript_lines(run.trials)]
        write_atomic(written["transcripts"], "".join(line + "\n" for line in lines))
        if db_text is not None:
            write_atomic(written["db"], db_text)
    except OSError as exc:
        raise JudgekitError(f"{exc.filename or out}: cannot write the import: {exc.strerror}") from None
    return written


def _db_fixture(db: Path) -> bytes | str:
    """What :func:`write_run` writes as ``fixtures/db.json``, read before anything is written.

    A JSON database's own bytes (once they read as a database), a TOML database converted to JSON
    (:func:`read_db`).
    """
    data = read_db(db)
    if db.suffix.lower() == ".json":
        from judgekit.io.documents import read_regular

        try:
            return read_regular(db, "tau2-bench database")
        except OSError as exc:
            raise JudgekitError(f"{db}: cannot read the database: {exc.strerror}") from None
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _value(value: float | None) -> str:
    return "unknown" if value is None else f"{value:g}"


def reward_lines(run: Tau2Run) -> list[str]:
    """The reward reproduction in words: one line per simulation, then the totals.

    Each line reads ``task 36 trial 0: reward 0 (stored 0) DB 0 COMMUNICATE 1 | actions 0/1,
    communicate 2/2, DB check stored``; a reproduction that differs from the stored reward, or whose
    recomputed checks differ from the stored ones, ends with ``MISMATCH`` and the reasons.
    """
    lines = []
    for r in run.rewards:
        parts = " ".join(f"{c} {_value(v)}" for c, v in r.breakdown.items())
        checks = (
            f"actions {sum(r.action_checks)}/{len(r.action_checks)}, "
            f"communicate {sum(r.communicate_checks)}/{len(r.communicate_checks)}"
        )
        if r.nl_assertions is not None:
            checks += f", NL assertions {sum(r.nl_assertions)}/{len(r.nl_assertions)} (stored judge)"
        if r.env_checks:
            checks += f", env assertions {sum(r.env_checks)}/{len(r.env_checks)} (stored)"
        if r.db_source is not None:
            checks += f", DB check {r.db_source}"
            if "DB" not in r.reward_basis and r.db_match is not None:
                checks += f" (db_match {str(r.db_match).lower()}, not in the reward basis)"
        line = (
            f"task {r.task_id} trial {r.trial}: reward {_value(r.reward)} (stored {_value(r.stored_reward)})"
            f" {r.note or parts} | {checks}"
        )
        if not r.reproduced:
            line += " MISMATCH" + "".join(f"; {d}" for d in r.disagreements)
        lines.append(line)
    counts = Counter(_value(r.reward) for r in run.rewards)
    same = sum(r.reproduced for r in run.rewards)
    figures = ", ".join(
        f"pass^{k} {'undefined' if v is None else f'{v:.3f}'}" for k, v in run.pass_hats().items()
    )
    lines.append(
        f"reproduced {same}/{len(run.rewards)} stored rewards; rewards: "
        + ", ".join(f"{n} at {v}" for v, n in sorted(counts.items(), reverse=True))
        + f"; {figures or 'pass^k undefined'}"
    )
    return lines


def id_lines(run: Tau2Run) -> list[str]:
    """Which case each tau2 task became, one line per task whose id :func:`case_id_for` escaped."""
    return [f"case {case_id} is {name}" for case_id, name in run.escaped_ids().items()]


def finding_lines(run: Tau2Run) -> list[str]:
    """The criteria findings in words: a summary per kind and component, then one line per finding."""
    groups: dict[tuple[str, str], list[Tau2Finding]] = {}
    for f in run.findings:
        groups.setdefault((f.kind, f.component), []).append(f)
    lines = []
    for (kind, component), found in groups.items():
        what = {
            "not_in_reward": f"{component} computed, not in the reward basis ({_CHECKED[component]})",
            "empty_scores_one": f"{component} in the reward basis with nothing to check (scores 1.0)",
            "never_met": "communicate_info with a comma, which tau2's check never finds",
        }[kind]
        lines.append(f"{len(found)} task(s): {what}: {', '.join(f.task_id for f in found)}")
        passed = [f.task_id for f in found if f.unchecked_failures]
        if passed:
            simulations = sum(len(f.unchecked_failures) for f in found)
            lines.append(
                f"  scored 1.0 although one of these checks failed: {', '.join(passed)} "
                f"({simulations} simulation(s))"
            )
    lines.extend(f.message for f in run.findings)
    return lines


def run_document(run: Tau2Run) -> dict[str, Any]:
    """The run's reproduction and findings as plain data (the ``tau2_import`` JSON document's body)."""
    return {
        "simulations": [
            {
                "task_id": r.task_id,
                "trial": r.trial,
                "termination_reason": r.termination_reason,
                "reward": r.reward,
                "stored_reward": r.stored_reward,
                "reproduced": r.reproduced,
                "reward_basis": list(r.reward_basis),
                "components": r.components,
                "db_match": r.db_match,
                "db_source": r.db_source,
                "action_checks": list(r.action_checks),
                "communicate_checks": list(r.communicate_checks),
                "nl_assertions": list(r.nl_assertions) if r.nl_assertions is not None else None,
                "env_assertions": list(r.env_checks) if r.env_checks is not None else None,
                "note": r.note,
                "disagreements": list(r.disagreements),
            }
            for r in run.rewards
        ],
        "case_ids": dict(run.task_ids),
        "reproduced": sum(r.reproduced for r in run.rewards),
        "rewards": dict(Counter(_value(r.reward) for r in run.rewards)),
        "pass_hat_1": run.pass_hat(1),
        "pass_hat_k": {str(k): v for k, v in run.pass_hats().items()},
        "findings": [
            {
                "task_id": f.task_id,
                "kind": f.kind,
                "component": f.component,
                "criteria": f.criteria,
                "unchecked_failures": [
                    {"trial": t, "met": met, "of": of} for t, met, of in f.unchecked_failures
                ],
                "message": f.message,
            }
            for f in run.findings
        ],
    }
