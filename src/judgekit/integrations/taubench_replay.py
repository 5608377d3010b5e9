"""Copy-on-write replay of tool calls over one shared database, for tau-bench's ``tools=`` replay.

tau-bench's tools take the whole database (``table -> id -> record``) and mutate it in place. Replaying a
trajectory on a deep copy of the database costs a copy of every record per trajectory, although a
trajectory reads a few records and writes fewer. :class:`Replayer` replays on a copy-on-write view
instead:

* each table is a :class:`CowTable`, a mutable mapping over the shared initial table. Rows assigned,
  added or deleted are kept beside the shared table. A record looked up is the stored record itself
  (tools change records in place, and most only read them); its serialised form (pickle: types, values
  and key order) is made before it is handed out, and when the replay ends each record handed out is
  compared with it: a changed record is copied into the replay's delta and the stored one is replaced by
  a fresh copy of the initial record. Between replays the shared tables are always the initial ones;
* the state after the replay is built as a delta over the shared initial snapshot: a table nobody changed
  *is* the initial table (the same object), and a changed table is a new mapping whose unchanged records
  are the initial records (the same objects). A record counts as unchanged only when its serialised form
  is byte-identical to the initial record's, so the state is exactly what a deep-copy replay would have
  made;
* nothing of the view is kept after the replay: the snapshots held by a run are the initial database plus
  one delta per trajectory and per task, and tau-bench's typed database comparison
  (:meth:`Replayed.same_db`) looks only at the rows either replay touched.

What the tools see differs from a deep copy in two ways: a table is a mutable mapping (``in``, ``[]``,
``get``, ``keys``, ``values``, ``items``, assignment, ``del``, ``pop``), not a ``dict`` (records are plain
dicts and lists), so a tool that needs a table to be a ``dict`` (``isinstance(table, dict)``,
``json.dumps`` of a whole table) raises, and the replay says so in a note; and changing a table while
iterating over it does not raise ``RuntimeError`` as a dict would.

A call that raises, or names no known tool, is a :class:`ReplayNote`. Whatever the tool had changed
before it raised stays changed, as in tau-bench (its environment catches the error and returns
``"Error: ..."`` to the agent; nothing is rolled back).
"""

from __future__ import annotations

import copy
import os
import pickle
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgekit.errors import Problem
from judgekit.state import Snapshot, canonical, snapshot_from_data

__all__ = ["REPLAY_NOTES_KEY", "CowTable", "ReplayNote", "Replayed", "Replayer", "recorded_error"]

REPLAY_NOTES_KEY = "replay_notes"
"""Transcript metadata key of a replayed trajectory's notes (a list of :meth:`ReplayNote.to_data`)."""


class _Originals:
    """One initial table as stored and in canonical form, with each record's serialised form made once.

    Shared by every replay of a :class:`Replayer`. A replay hands the tools the stored records
    themselves and, once it is over, puts a fresh copy back in place of any record a tool changed, so
    between replays the table is always the initial one.
    """

    def __init__(self, raw: dict[str, Any], rows: Mapping[str, Any]) -> None:
        self.raw = raw
        self.rows = rows
        self._pickled: dict[str, bytes] = {}

    def pristine(self, key: str) -> bytes:
        """The initial record's serialised form (made the first time the record is handed out)."""
        data = self._pickled.get(key)
        if data is None:
            data = pickle.dumps(self.raw[key], protocol=pickle.HIGHEST_PROTOCOL)
            self._pickled[key] = data
        return data

    def restore(self, key: str) -> None:
        """Put a fresh copy of the initial record back in place (after a tool changed it)."""
        self.raw[key] = pickle.loads(self.pristine(key))  # bytes made here, from the initial record


def _dumps(value: Any) -> bytes | None:
    """The serialised form of a value (types, values and key order), or ``None`` when it has none."""
    try:
        return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # a value pickle cannot take (an object a tool made); canonical() judges it later
        return None


def _own(value: Any, serialised: bytes | None = None) -> Any:
    """A deep copy of a value that shares nothing with the tables or the tools' arguments."""
    data = serialised if serialised is not None else _dumps(value)
    return pickle.loads(data) if data is not None else copy.deepcopy(value)


@dataclass(frozen=True)
class _TableDelta:
    """One table after a replay, as changes over the initial table (types as the tools left them).

    Attributes:
        originals: The initial table.
        changed: Initial rows whose record changed, to their new record.
        gone: Initial rows deleted (a row added again under the same key is in ``added``).
        added: Rows not in the initial table (or deleted and added again), in the order added.
    """

    originals: _Originals
    changed: Mapping[str, Any]
    gone: frozenset[str]
    added: Mapping[str, Any]

    def lookup(self, key: str) -> tuple[bool, Any]:
        """``(present, record)`` of a row after the replay."""
        if key in self.added:
            return True, self.added[key]
        if key in self.gone or key not in self.originals.raw:
            return False, None
        return True, self.changed.get(key, self.originals.raw[key])

    def touched(self) -> set[str]:
        """The rows this replay changed, deleted or added."""
        return {*self.changed, *self.gone, *self.added}

    def untouched(self) -> bool:
        return not self.changed and not self.gone and not self.added

    def materialise(self) -> dict[str, Any]:
        """The whole table as a plain dict (initial records shared)."""
        out = {
            key: self.changed.get(key, record)
            for key, record in self.originals.raw.items()
            if key not in self.gone
        }
        out.update(self.added)
        return out

    def canonical_rows(self) -> Mapping[str, Any]:
        """The table in canonical form, sharing every unchanged canonical record.

        The initial canonical table itself when nothing changed, else a new mapping.
        """
        if self.untouched():
            return self.originals.rows
        out: dict[str, Any] = {}
        for key, record in self.originals.rows.items():
            if key in self.gone:
                continue
            out[key] = canonical(self.changed[key]) if key in self.changed else record
        for key, value in self.added.items():
            out[str(key)] = canonical(value)
        return out


class CowTable(MutableMapping[str, Any]):
    """A copy-on-write view of one table for one replay.

    Looking a record up hands out the stored record itself, as a dict would (later lookups return the
    same object, and a tool may change it in place); assigning, deleting and adding rows change only the
    view. When the replay ends (:meth:`delta`), every record handed out is compared with its initial
    serialised form: a changed one is copied into the delta and the stored record is replaced with a
    fresh copy of the initial one. Iteration order is a dict's: the initial rows in their order (minus
    deleted ones), then rows added in the order they were added.
    """

    def __init__(self, originals: _Originals) -> None:
        self._originals = originals
        self._base = originals.raw
        self._handed: set[str] = set()  # initial records handed to the tools
        self._assigned: dict[str, Any] = {}  # initial rows given a new record
        self._hidden: set[str] = set()  # initial rows deleted (a row added again lives in _added)
        self._added: dict[str, Any] = {}

    def _visible(self, key: object) -> bool:
        return key in self._base and key not in self._hidden

    def __getitem__(self, key: str) -> Any:
        if key in self._added:
            return self._added[key]
        if not self._visible(key):
            raise KeyError(key)
        if key in self._assigned:
            return self._assigned[key]
        if key not in self._handed:
            self._originals.pristine(key)  # before any tool can change it
            self._handed.add(key)
        return self._base[key]

    def __setitem__(self, key: str, value: Any) -> None:
        if self._visible(key):
            self._assigned[key] = value
        else:
            self._added[key] = value

    def __delitem__(self, key: str) -> None:
        if key in self._added:
            del self._added[key]
        elif self._visible(key):
            self._hidden.add(key)
            self._assigned.pop(key, None)
        else:
            raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        return key in self._added or self._visible(key)

    def __iter__(self) -> Iterator[str]:
        hidden = self._hidden
        for key in list(self._base):
            if key not in hidden:
                yield key
        yield from list(self._added)

    def __len__(self) -> int:
        return len(self._base) - len(self._hidden) + len(self._added)

    def __repr__(self) -> str:
        return f"CowTable({len(self)} rows, {len(self._handed)} looked up, {len(self._added)} added)"

    def delta(self) -> _TableDelta:
        """End the replay: the changes it made, with the initial table put back as it was.

        Only records that differ from the initial ones count as changed; every record of the delta is a
        private copy (nothing in it is shared with the table or with a tool's arguments).
        """
        originals = self._originals
        changed: dict[str, Any] = {}
        for key in self._handed:
            pristine = originals.pristine(key)
            now = _dumps(self._base[key])
            if now == pristine:
                continue
            record = _own(self._base[key], now)
            originals.restore(key)
            if key not in self._assigned and key not in self._hidden:
                changed[key] = record
        for key, value in self._assigned.items():
            now = _dumps(value)
            if now != originals.pristine(key):
                changed[key] = _own(value, now)
        added = {key: _own(value) for key, value in self._added.items()}
        self._handed.clear()
        return _TableDelta(originals, changed, frozenset(self._hidden), added)


@dataclass(frozen=True)
class ReplayNote:
    """A call the replay could not run as the tool was meant to: it raised, or no tool has its name.

    Attributes:
        index: The call's 0-based position in the replayed sequence (the transcript's call index for a
            trajectory; the action's index for the ground-truth actions).
        tool: The tool name called.
        error: What went wrong: ``unknown tool`` or ``<ExceptionType>: <message>``.
        episode_error: ``True`` when the episode's own record shows tau-bench returned an error to the
            agent for this call too (the replay agrees with the episode: the call changed nothing there
            either, apart from what a tool changes before raising); ``False`` when the episode recorded a
            normal result, or no result, so judgekit could not replay this call as it happened and the
            replayed state may differ from the episode's.
    """

    index: int
    tool: str
    error: str
    episode_error: bool

    @property
    def meaning(self) -> str:
        """What the note means for the replayed state, in words."""
        if self.episode_error:
            return "tau-bench also returned an error to the agent for this call"
        return "judgekit could not replay this call as it happened; the replayed state may differ"

    def problem(
        self, file: str | os.PathLike[str] | None, line: int | None, where: str, *, action: bool = False
    ) -> Problem:
        """The note as a located problem.

        Args:
            file: The results file.
            line: The episode's line in it (for an action: the line of the task's first episode).
            where: Whose replay it was (``task-3 trial 2``, or the case id for the ground-truth actions).
            action: The call is a ground-truth action rather than a trajectory's call.
        """
        what = "ground-truth action" if action else "call"
        return Problem(
            Path(file) if file is not None else None,
            line,
            "info.task.actions" if action else "traj",
            f"{where}: {what} {self.index} ({self.tool}) failed on replay: {self.error}; {self.meaning}",
        )

    def to_data(self) -> dict[str, Any]:
        """The note as a JSON object (``call``, ``tool``, ``error``, ``episode_error``, ``meaning``)."""
        return {
            "call": self.index,
            "tool": self.tool,
            "error": self.error,
            "episode_error": self.episode_error,
            "meaning": self.meaning,
        }


def recorded_error(result: str | None) -> bool:
    """Whether a recorded tool result is tau-bench's answer to a failed call.

    tau-bench answers a call to an unknown tool with ``Unknown action <name>`` and a tool that raised
    with ``Error: <message>``; tools themselves answer a refused request with ``Error: ...``.
    """
    if result is None:
        return False
    text = result.lstrip()
    return text[:5].lower() == "error" or text.startswith("Unknown action")


@dataclass(frozen=True)
class Replayed:
    """The result of one replay.

    Attributes:
        state: The database after the calls in canonical form, a delta over the replayer's initial
            snapshot (unchanged tables and records are the initial ones).
        notes: One note per call that raised or named no known tool, in call order.
    """

    state: Snapshot
    notes: tuple[ReplayNote, ...]
    _tables: Mapping[str, _TableDelta | Any] = field(repr=False, compare=False)

    def same_db(self, other: Replayed) -> bool:
        """Whether this database and ``other`` have the same tau-bench hash (types kept: ``1 != 1.0``).

        Gives the answer of :func:`judgekit.integrations.taubench_reward.same_db` on the two whole
        databases, comparing only the rows either replay touched (every other row is the same initial
        record on both sides).
        """
        from judgekit.integrations.taubench_reward import to_hashable

        def text(value: Any) -> str:
            return str(to_hashable(value))

        if sorted(self._tables) != sorted(other._tables):
            return False
        for name, mine in self._tables.items():
            theirs = other._tables[name]
            if (
                isinstance(mine, _TableDelta)
                and isinstance(theirs, _TableDelta)
                and mine.originals is theirs.originals
            ):
                for key in mine.touched() | theirs.touched():
                    a, b = mine.lookup(key), theirs.lookup(key)
                    if a[0] != b[0] or (a[0] and text(a[1]) != text(b[1])):
                        return False
                continue
            whole = [t.materialise() if isinstance(t, _TableDelta) else t for t in (mine, theirs)]
            if text(whole[0]) != text(whole[1]):
                return False
        return True


class Replayer:
    """Replays call sequences with a domain's tools, each on a copy-on-write view of one initial database.

    One replay at a time (not thread-safe): during a replay the tools change the stored records in place,
    and the replay puts them back when it ends.

    Args:
        initial: The database before any call, in canonical form (its tables and records are shared by
            every state made, never changed).
        tools: ``name -> callable(data, **kwargs)``, mutating ``data`` in place (tau-bench's
            ``Tool.invoke``).
        raw: The same database with the types as stored (tau-bench's loader keeps ``1.0`` a float), which
            the tools see. The replayer takes it over (its records are handed to the tools, and put back
            after each replay): pass a database nothing else uses. ``None`` gives the tools a copy of the
            canonical records.
    """

    def __init__(
        self,
        initial: Snapshot,
        tools: Mapping[str, Callable[..., Any]],
        *,
        raw: Mapping[str, Any] | None = None,
    ) -> None:
        self.initial = initial
        self.tools = tools
        self._originals: dict[str, _Originals | Any] = {}
        for name, rows in (raw if raw is not None else initial.to_data()).items():
            if isinstance(rows, dict) and all(isinstance(k, str) for k in rows):
                known = initial.tables.get(str(name))
                canonical_rows: Mapping[str, Any] = (
                    known
                    if known is not None and len(known) == len(rows) and all(k in known for k in rows)
                    else {k: canonical(v) for k, v in rows.items()}
                )
                self._originals[name] = _Originals(rows, canonical_rows)
            else:  # not a table of keyed records: each replay gets a deep copy of it
                self._originals[name] = rows

    def replay(
        self,
        calls: Iterable[tuple[str, Mapping[str, Any]]],
        *,
        source: str,
        recorded: Iterable[str | None] | None = None,
    ) -> Replayed:
        """Run the calls in order on a fresh copy-on-write view of the initial database.

        Args:
            calls: ``(tool name, keyword arguments)`` pairs. The arguments are copied before the call, so a
                tool that changes or keeps them cannot change the caller's objects.
            source: Where the state came from, for messages (``replay of task-3 trial 2``).
            recorded: The result the episode recorded for each call (``None`` when none was recorded), to
                tell a failure tau-bench also had from one only the replay has; ``None`` when there is no
                episode (ground-truth actions): every failure is then the replay's own.

        Returns:
            The state after the calls and the notes.
        """
        data: dict[str, Any] = {
            name: CowTable(o) if isinstance(o, _Originals) else _fresh(o)
            for name, o in self._originals.items()
        }
        views = [view for view in data.values() if isinstance(view, CowTable)]
        results = list(recorded) if recorded is not None else None
        notes: list[ReplayNote] = []
        try:
            for index, (name, kwargs) in enumerate(calls):
                result = results[index] if results is not None and index < len(results) else None
                tool = self.tools.get(name)
                if tool is None:
                    notes.append(ReplayNote(index, name, "unknown tool", recorded_error(result)))
                    continue
                try:
                    tool(data, **_fresh(dict(kwargs)))
                except Exception as exc:  # a tool's own error is an episode fact, as in tau-bench
                    error = f"{type(exc).__name__}: {exc}"
                    notes.append(ReplayNote(index, name, error, recorded_error(result)))
        finally:  # the initial tables are put back whatever happened
            deltas = {id(view): view.delta() for view in views}
        tables: dict[str, _TableDelta | Any] = {
            str(name): deltas.get(id(value), value) for name, value in data.items()
        }
        return Replayed(self._state(tables, source), tuple(notes), tables)

    def _state(self, tables: Mapping[str, _TableDelta | Any], source: str) -> Snapshot:
        rows: dict[str, Mapping[str, Any]] = {}
        for name, value in tables.items():
            if isinstance(value, _TableDelta):
                rows[name] = value.canonical_rows()
            else:  # a tool replaced the whole table, or it is not keyed: read it as a state reads a table
                rows.update(snapshot_from_data({name: value}, source=source).tables)
        return Snapshot(rows, source)


def _fresh(value: Any) -> Any:
    """A copy of a JSON-like value: new dicts and lists, shared leaves."""
    if isinstance(value, dict):
        return {k: _fresh(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_fresh(v) for v in value]
    return value
