r"""tau-bench's reward, exactly, per version of tau-bench.

tau-bench (``sierra-research/tau-bench``) computes a finished episode's reward in
``tau_bench/envs/base.py`` (``Env.calculate_reward``). Two versions of that function are in use:

* ``"7362a17"``, the historical logic (the commit the published gpt-4o airline and retail trajectories
  were graded on): when the task has required ``outputs``, the reward is 1 exactly when every output
  was said, and **the database is not checked**; when the task has no outputs, the reward is 1 exactly
  when the final database equals the database after the task's ground-truth actions.
* ``"current"``, the later logic (sierra-research/tau-bench at 67e6b12, the newest version read): the
  database is always checked, and when the task has outputs every output must be said too.

In both versions, and this module reproduces them exactly:

* an output counts as said when ``output.lower()`` occurs in ``content.lower().replace(",", "")`` of a
  ``respond`` action: in a tool-calling agent's trajectory that is an assistant message **without** a
  tool call (``message_to_action`` turns a message with a tool call into that tool's action, whatever
  text it carries). Nothing else is normalised: ``"20\nhours"`` does not contain ``"20 hours"``; an
  output that itself holds a comma is never found, since commas are removed from the reply only;
* the databases are compared as tau-bench hashes them: ``sha256(str(to_hashable(data)))``, where
  ``to_hashable`` turns mappings into tuples of ``(key, value)`` pairs sorted by key and lists into
  tuples. The comparison keeps types (``1`` and ``1.0``, ``True`` and ``1``, ``0.0`` and ``-0.0`` differ;
  Unicode text is compared as stored, not normalised) and, as tau-bench's hash does, cannot tell a
  mapping from a list of ``[key, value]`` pairs. judgekit's canonical state comparison
  (:mod:`judgekit.state.canonical`, ``1 == 1.0``) is unchanged; this typed comparison is used only for
  tau-bench's own database condition.

An episode that did not finish (step limit or error) has no reward details and reward 0 in both.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from judgekit.errors import JudgekitError
from judgekit.verdict import CheckResult, Evidence, FailureCategory, Verdict

if TYPE_CHECKING:
    from judgekit.formats.importers import ImportedTrial
    from judgekit.state import Snapshot
    from judgekit.transcript import Transcript

__all__ = [
    "CURRENT",
    "DB_CHECK",
    "DB_MATCH_KEY",
    "HISTORICAL",
    "RewardChoice",
    "RewardVersion",
    "apply_changes",
    "check_reward_choice",
    "db_check",
    "db_fingerprint",
    "detect_reward_version",
    "diff_db_match",
    "output_said",
    "outputs_check",
    "raw_database",
    "replies",
    "same_db",
    "to_hashable",
]

RewardVersion = Literal["7362a17", "current"]
"""A tau-bench reward logic: ``"7362a17"`` (historical: outputs *or* database) or ``"current"`` (both)."""

RewardChoice = Literal["7362a17", "current", "auto"]
"""``load_run(reward=...)``: a version, or ``"auto"`` (chosen from the stored rewards)."""

HISTORICAL: RewardVersion = "7362a17"
"""The historical reward logic: a task with outputs is graded on its outputs only, others on the database."""

CURRENT: RewardVersion = "current"
"""The later reward logic: the database always, and the outputs too when the task has any."""

DB_CHECK = "tau-bench:db"
"""Check id of tau-bench's database condition (typed comparison with the expected database)."""

DB_MATCH_KEY = "tau_bench_db_match"
"""Transcript metadata key: ``True``/``False`` from the typed database comparison, absent when unknown."""

_OUTPUTS_CHECK = "tau-bench:outputs"


def check_reward_choice(reward: object) -> RewardChoice:
    """Validate a ``reward=`` argument.

    Raises:
        JudgekitError: When it is not ``"7362a17"``, ``"current"`` or ``"auto"``.
    """
    choices = get_args(RewardChoice)
    if reward not in choices:
        raise JudgekitError(
            f"reward={reward!r} is not a tau-bench reward version; use one of "
            + ", ".join(repr(c) for c in choices)
        )
    return reward  # type: ignore[return-value]  # checked against the Literal's values just above


# --------------------------------------------------------------------------- the database, typed


def to_hashable(item: Any) -> Any:
    """tau-bench's ``to_hashable``: mappings to key-sorted ``(key, value)`` tuples, lists to tuples.

    Sets become sorted tuples; every other value is kept as it is (so its type stays).
    """
    if isinstance(item, dict):
        return tuple((key, to_hashable(value)) for key, value in sorted(item.items()))
    if isinstance(item, list):
        return tuple(to_hashable(element) for element in item)
    if isinstance(item, set):
        return tuple(sorted(to_hashable(element) for element in item))
    return item


def db_fingerprint(data: Any) -> str:
    """tau-bench's database hash: ``sha256(str(to_hashable(data)))`` as hex."""
    return hashlib.sha256(str(to_hashable(data)).encode("utf-8")).hexdigest()


def same_db(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two databases (objects of tables) have the same tau-bench hash.

    Compared table by table (a table that is the same object on both sides is not rendered), which
    gives the same answer as comparing the two whole-database hashes.
    """
    if sorted(a) != sorted(b):
        return False
    return all(_same_table(a[t], b[t]) for t in a)


def _same_table(a: Any, b: Any) -> bool:
    """Whether two tables render the same inside tau-bench's database hash, row by row where both are objects.

    The hash renders the database as ``str`` of a tuple of ``(name, table)`` pairs, so each table as
    ``repr(to_hashable(table))``: a table that is not an object on both sides is compared as
    :func:`_same_row` compares a row (``1`` and ``"1"`` differ, as they do in the hash). A table that is
    an object renders as its ``(key, row)`` pairs in key order, each pair's text complete and bracketed,
    joined by ``", "``: with the same keys the two texts are equal exactly when each row's is, and a row
    that is the same object on both sides (a copy-on-write replay shares every row it did not change) is
    not rendered at all.
    """
    if a is b:
        return True
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return _same_row(a, b)
    if sorted(a) != sorted(b):
        return False
    return all(a[k] is b[k] or _same_row(a[k], b[k]) for k in a)


def _same_row(a: Any, b: Any) -> bool:
    """Whether two rows render the same ``repr(to_hashable(...))``; equal plain reprs answer at once.

    ``repr`` of a row made of dicts, lists, text and numbers (what a JSON database holds) is written by
    C and names every value with its type, every key and every element in order, so two rows with the
    same ``repr`` hold the same values of the same types in the same order, and ``to_hashable`` (a
    function of exactly those) renders them the same. Rows whose keys are in another order, or that
    differ, are rendered as tau-bench renders them.
    """
    return repr(a) == repr(b) or repr(to_hashable(a)) == repr(to_hashable(b))


def _apply_raw(row: Any, entry: Mapping[str, Any]) -> tuple[bool, Any]:
    """One row after a diff entry, types kept: ``(present, value)``."""
    op = entry.get("op")
    if op == "added":
        return True, entry.get("record")
    if op == "removed":
        return False, None
    return True, apply_changes(row, entry.get("changes", {}))


def apply_changes(row: Any, changes: Mapping[str, Any]) -> Any:
    """A copy of a record with a diff entry's ``changes`` applied (``{dotted.path: {old, new}}``).

    A change with a ``new`` value sets it (creating missing parent objects); one without removes the key.
    The record passed in is not changed.
    """
    record = copy.deepcopy(row)
    for path, change in sorted(changes.items()):
        *parents, leaf = str(path).split(".")
        node = record
        for part in parents:
            node = node.setdefault(part, {})
        if isinstance(change, Mapping) and "new" in change:
            node[leaf] = change["new"]
        else:
            node.pop(leaf, None)
    return record


def diff_db_match(
    initial: Mapping[str, Any], final_diff: Mapping[str, Any], expected_diff: Mapping[str, Any]
) -> bool:
    """Whether two replay diffs of the same initial database give databases with the same tau-bench hash.

    Only the rows either diff touches are built (types kept, as read from the diff's JSON); every other
    row is the initial database's on both sides. Diffs are those of :func:`judgekit.integrations.
    taubench.apply_diff` (already validated there).

    Args:
        initial: The initial database, types as stored (see :func:`raw_database`).
        final_diff: The agent's changes.
        expected_diff: The ground-truth actions' changes.
    """
    names_final = set(initial) | set(final_diff)
    names_expected = set(initial) | set(expected_diff)
    if names_final != names_expected:
        return False
    for table in set(final_diff) | set(expected_diff):
        rows = initial.get(table, {})
        f_rows, e_rows = final_diff.get(table, {}), expected_diff.get(table, {})
        for key in set(f_rows) | set(e_rows):
            base = (str(key) in rows, rows.get(str(key)))
            f = _apply_raw(base[1], f_rows[key]) if key in f_rows else base
            e = _apply_raw(base[1], e_rows[key]) if key in e_rows else base
            if f[0] != e[0] or (f[0] and str(to_hashable(f[1])) != str(to_hashable(e[1]))):
                return False
    return True


def raw_database(db: Path | Snapshot, initial: Snapshot) -> dict[str, Any]:
    """The initial database with the types tau-bench's loader sees.

    tau-bench loads each table with ``json.load``, so ``1.0`` stays a float: a folder of
    ``<table>.json`` files and a ``.json`` file are read that way. Other sources (a snapshot, SQLite, a
    SQL dump) carry no JSON number types; their snapshot's values are used.

    Args:
        db: What ``load_run(db=...)`` was given.
        initial: The snapshot already read from it.
    """
    if isinstance(db, Path):
        try:
            if db.is_dir():
                from judgekit.io.documents import read_regular

                return {
                    f.stem: json.loads(read_regular(f, "tau-bench database"))
                    for f in sorted(db.glob("*.json"))
                }
            if db.suffix.lower() == ".json":
                from judgekit.io.documents import read_regular

                data = json.loads(read_regular(db, "tau-bench database"))
                if isinstance(data, dict):
                    return data
        except (OSError, ValueError) as exc:
            raise JudgekitError(f"{db}: cannot read the database as tau-bench does: {exc}") from None
    return initial.to_data()


# --------------------------------------------------------------------------- outputs


def replies(transcript: Transcript) -> list[str]:
    """The texts tau-bench searches for outputs: assistant messages without a tool call, in order.

    A message with no text gives ``""``.
    """
    return [m.content or "" for m in transcript.messages if m.role == "assistant" and not m.tool_calls]


def output_said(output: str, texts: Iterable[str]) -> bool:
    """tau-bench's test: ``output.lower()`` occurs in some ``text.lower().replace(",", "")``."""
    wanted = output.lower()
    return any(wanted in text.lower().replace(",", "") for text in texts)


# --------------------------------------------------------------------------- the checks


def outputs_check(outputs: Sequence[str], transcript: Transcript, version: RewardVersion) -> CheckResult:
    """tau-bench's outputs condition (``tau-bench:outputs``), a gate in both versions.

    Args:
        outputs: The task's required outputs.
        transcript: The episode.
        version: The reward logic. Both search the plain assistant replies the same way; ``"current"``
            also searches the task's ground-truth ``respond`` actions, which it steps before the test.
    """
    if not outputs:
        return CheckResult(
            check_id=_OUTPUTS_CHECK,
            layer="tau-bench",
            verdict=Verdict.PASS,
            reason="the task requires no output",
        )
    texts = replies(transcript)
    if version == CURRENT:
        # The current logic replays the ground-truth actions through ``step`` before the outputs test,
        # so a ground-truth ``respond`` action joins the searched actions.
        actions = transcript.metadata.get("expected_actions")
        for a in actions if isinstance(actions, list) else []:
            kwargs = a.get("kwargs") if isinstance(a, dict) else None
            if isinstance(a, dict) and a.get("name") == "respond" and isinstance(kwargs, dict):
                texts.append(str(kwargs.get("content") or ""))
    missing = [o for o in outputs if not output_said(o, texts)]
    if not missing:
        return CheckResult(
            check_id=_OUTPUTS_CHECK,
            layer="tau-bench",
            verdict=Verdict.PASS,
            reason=f"every required output said in a plain assistant reply ({version} reward)",
        )
    with_calls = [
        o
        for o in missing
        if output_said(o, [m.content or "" for m in transcript.messages if m.role == "assistant"])
    ]
    note = (
        "; said only in a message that also calls a tool (tau-bench does not count it): "
        + ", ".join(repr(o) for o in with_calls)
        if with_calls
        else ""
    )
    return CheckResult(
        check_id=_OUTPUTS_CHECK,
        layer="tau-bench",
        verdict=Verdict.FAIL,
        reason="required output(s) never said: " + ", ".join(repr(o) for o in missing) + note,
        category=FailureCategory.INCORRECT_REPORTING,
        evidence=(
            Evidence(
                kind="note",
                summary=f"{len(texts)} plain assistant replies searched, lower-cased, commas removed",
            ),
        ),
    )


def db_check(outputs: Sequence[str], transcript: Transcript, version: RewardVersion) -> CheckResult:
    """tau-bench's database condition (``tau-bench:db``), from the typed comparison made at load time.

    A gate under ``"current"``, and under ``"7362a17"`` for a task without outputs; under ``"7362a17"``
    a task with outputs is not graded on its database, so the check is reported but does not gate.

    Args:
        outputs: The task's required outputs.
        transcript: The episode; ``metadata[DB_MATCH_KEY]`` holds the comparison's result.
        version: The reward logic.
    """
    gate = version == CURRENT or not outputs
    match = transcript.metadata.get(DB_MATCH_KEY)
    scope = (
        "7362a17 grades a task with outputs on its outputs only; the database is reported, not gated"
        if not gate
        else f"{version} reward"
    )
    category: FailureCategory | None = None
    if match is None:
        verdict, reason = Verdict.NOT_EVALUATED, "no final or expected database (give replay= or tools=)"
    elif match is True:
        verdict = Verdict.PASS
        reason = f"the final database has the expected database's tau-bench hash ({scope})"
    else:
        verdict, category = Verdict.FAIL, FailureCategory.INCOMPLETE_EXECUTION
        reason = (
            "the final database's tau-bench hash differs from the expected database's "
            f"(types kept: 1 and 1.0 differ; see the state layer for the diff) ({scope})"
        )
    return CheckResult(
        check_id=DB_CHECK, layer="tau-bench", verdict=verdict, gate=gate, reason=reason, category=category
    )


# --------------------------------------------------------------------------- which version


def _version_reward(
    version: RewardVersion, outputs_ok: bool, db_ok: bool | None, has_outputs: bool
) -> float | None:
    if version == HISTORICAL and has_outputs:
        return 1.0 if outputs_ok else 0.0
    if db_ok is None:
        return None
    return 1.0 if db_ok and outputs_ok else 0.0


def detect_reward_version(trials: Sequence[ImportedTrial]) -> tuple[RewardVersion, str]:
    """The reward version whose rewards reproduce the stored ones, and how it was decided.

    The two versions differ only on a finished episode of a task with outputs that said every output
    (as tau-bench counts them) while its database differs from the expected one: ``"7362a17"`` gives 1,
    ``"current"`` gives 0. Such episodes decide: the stored reward names the version. Reward details
    with ``r_outputs`` 1 on a reward of 0 also name ``"current"`` (only the database can have failed).
    When no episode decides, both versions give every episode of the file the same reward, and
    ``"7362a17"`` is chosen (the historical results' logic).

    Args:
        trials: The imported trials, with ``metadata[DB_MATCH_KEY]`` set when states are known.

    Returns:
        The version and a one-line account of the evidence.

    Raises:
        JudgekitError: When some stored rewards fit only one version and others only the other (pass
            ``reward=`` explicitly).
    """
    fits: dict[RewardVersion, list[str]] = {HISTORICAL: [], CURRENT: []}
    for trial in trials:
        t = trial.transcript
        meta = t.metadata
        raw_outputs = meta.get("expected_outputs")
        outputs = [o for o in raw_outputs if isinstance(o, str)] if isinstance(raw_outputs, list) else []
        info = meta.get("reward_info")
        if not outputs or info is None or trial.reward is None:
            continue
        where = f"task {meta.get('task_id')} trial {meta.get('tau_bench_trial')}"
        if isinstance(info, Mapping) and info.get("r_outputs") == 1.0 and trial.reward != 1.0:
            fits[CURRENT].append(where)
            continue
        db_ok = meta.get(DB_MATCH_KEY)
        if db_ok is not False:
            continue
        said = all(output_said(o, replies(t)) for o in outputs)
        if not said:
            continue
        for version in (HISTORICAL, CURRENT):
            if _version_reward(version, said, False, True) == trial.reward:
                fits[version].append(where)
    if fits[HISTORICAL] and fits[CURRENT]:
        raise JudgekitError(
            "the stored rewards fit neither tau-bench reward version alone: "
            f"{fits[HISTORICAL][0]} fits 7362a17, {fits[CURRENT][0]} fits current; "
            "pass reward='7362a17' or reward='current'"
        )
    if fits[CURRENT]:
        return CURRENT, (
            f"current: {len(fits[CURRENT])} episode(s) of tasks with outputs lost their reward on the "
            f"database alone (first: {fits[CURRENT][0]})"
        )
    if fits[HISTORICAL]:
        return HISTORICAL, (
            f"7362a17: {len(fits[HISTORICAL])} episode(s) of tasks with outputs were rewarded with a "
            f"wrong database (first: {fits[HISTORICAL][0]})"
        )
    return HISTORICAL, (
        "7362a17 by default: no episode tells the versions apart (both give every episode here the "
        "same reward)"
    )
