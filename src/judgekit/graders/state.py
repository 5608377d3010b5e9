"""End-state grader: the world the conversation left behind, against the case's expected state.

Three forms of expectation (:class:`~judgekit.cases.ExpectedState`):

* **snapshot** and **from_reference**: the final state must equal an expected state (a fixture, or the
  final state of the case's reference solution), compared in canonical form table by table (equal tables
  cost one dictionary comparison; only differing tables are diffed).
* **changes**: per table, rows that must be added (each a set of field predicates, matched one-to-one with
  the rows actually added as a maximum bipartite matching, never greedily), keys that must be removed, and
  rows whose fields must satisfy predicates afterwards.

A field predicate (:class:`~judgekit.cases.FieldPredicate`) holds when every operator in it holds;
:func:`predicate_failures` says which operators failed, with the operand and the value found, and that
record is in the evidence (``failures``) of each existing row that does not satisfy its predicates.

Every change from the initial state that the expectation does not cover is **collateral** and fails its
own gate, ``state:collateral``, listing each collateral row and field. With a snapshot, a difference on a
row the expected state also changes belongs to ``state``; a difference on a row the expected state leaves
as it was is collateral (without an initial state the two cannot be told apart and ``state`` reports
both). ``ignore_fields`` (names at any depth or dotted paths) are left out of every comparison.

Failure categories: an expected change that was not made at all is ``incomplete_execution``; one made with
the wrong values is ``invalid_arguments``; collateral changes are ``policy_violation``. Every failure
carries the structural diff (``StateDiff.to_data()`` and its readable ``lines()``), never a hash.

Missing inputs are explicit: no final state, no initial state in the changes form, an expected table that
exists in neither state, or an expectation about a row the initial state does not have gives ``error``
with the reason.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judgekit.cases import Case, ExpectedState, FieldPredicate, TableChange, spelled, value_kind
from judgekit.graders.context import LayerContext, trial_states
from judgekit.graders.contract import LayerInfo, describe_layer, first_few
from judgekit.graders.route import max_bipartite_matching
from judgekit.patterns import CompiledPattern, compile_pattern
from judgekit.state import RowChange, Snapshot, StateDiff, TableDiff, canonical, diff_records, diff_states
from judgekit.transcript import Capability, Transcript
from judgekit.verdict import CheckResult, Evidence, FailureCategory, Verdict

__all__ = [
    "COLLATERAL_CHECK",
    "INITIAL_CHECK",
    "LAYER",
    "STATE_CHECK",
    "PredicateFailure",
    "StateLayer",
    "check_state",
    "evaluate_predicate",
    "lookup_field",
    "predicate_failures",
]

LAYER = "state"
"""The layer name every check of this module reports."""

STATE_CHECK = "state"
"""Check id of the expected-outcome gate."""

COLLATERAL_CHECK = "state:collateral"
"""Check id of the no-collateral-changes gate."""

INITIAL_CHECK = "state:initial"
"""Check id of the error reported when the trial did not start from the case's fixture."""

_MAX_LINES = 50


# --------------------------------------------------------------------------- field predicates


def lookup_field(row: Any, path: str) -> tuple[bool, Any]:
    """Find a field in a row: the key itself when present, else a dotted path through mappings and lists.

    Returns:
        ``(True, value)`` when found, ``(False, None)`` otherwise.
    """
    if isinstance(row, dict) and path in row:
        return True, row[path]
    current = row
    for part in path.split("."):
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            return False, None
    return True, current


def _regex(pattern: str) -> CompiledPattern:
    """The predicate's pattern compiled for linear-time matching (cached in :mod:`judgekit.patterns`)."""
    return compile_pattern(pattern)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


def _not_a_number(value: Any) -> str:
    """``found string '7'``, ``found boolean true (booleans are not numbers)``, ``found null``."""
    if value is None:
        return "found null"
    note = " (booleans are not numbers)" if isinstance(value, bool) else ""
    return f"found {value_kind(value)} {spelled(value)}{note}"


@dataclass(frozen=True)
class PredicateFailure:
    """One operator of a field predicate that the found value does not satisfy.

    Attributes:
        predicate: The operator that failed (``equals``, ``approx``, ``one_of``, ``matches``, ``present``,
            ``absent``, ``gt``, ``ge``, ``lt``, ``le``, ``between``). A value operator on a field that
            does not exist reports ``present`` (the presence every value operator implies).
        expected: The operator's operand as written in the case (the bound, ``[lo, hi]``, the pattern;
            for ``present``/``absent``, the expected presence).
        found: The field's canonical value, or ``None`` when the field is absent.
        present: Whether the field exists in the row.
        message: What was expected and what was found, for people.
    """

    predicate: str
    expected: Any
    found: Any
    present: bool
    message: str

    def to_data(self) -> dict[str, Any]:
        """This failure as JSON-ready data (``found`` is ``None`` when the field is absent)."""
        return {
            "predicate": self.predicate,
            "expected": self.expected,
            "found": self.found,
            "present": self.present,
            "message": self.message,
        }


_ORDERING: dict[str, tuple[str, Callable[[Any, Any], bool]]] = {
    "gt": (">", operator.gt),
    "ge": (">=", operator.ge),
    "lt": ("<", operator.lt),
    "le": ("<=", operator.le),
}
"""Ordering operators: their sign in messages and the comparison that must hold (``value OP bound``)."""


def predicate_failures(pred: FieldPredicate, present: bool, value: Any) -> list[PredicateFailure]:
    """Check one field against every operator of its predicate (all must hold).

    ``present: false`` means the same as ``absent: true``, and ``absent: false`` the same as
    ``present: true``. Every value operator needs the field to exist; on a missing field they fail
    together, as one ``present`` failure. The numeric operators (``approx``, ``gt``, ``ge``, ``lt``,
    ``le``, ``between``) fail on a value that is not a number, naming its type (booleans are not
    numbers); ``between`` includes both ends.

    Args:
        pred: The predicate.
        present: Whether the field exists in the row.
        value: Its canonical value (ignored when absent).

    Returns:
        The failing operators in the order of :attr:`~judgekit.cases.FieldPredicate.KEYS`; empty when
        the predicate holds.

    Example:
        >>> from judgekit.cases import FieldPredicate
        >>> [f.message for f in predicate_failures(FieldPredicate(ge=1, lt=5), True, 7)]
        ['lt: expected < 5, found 7']
        >>> predicate_failures(FieldPredicate(between=(1, 5)), True, 5)
        []
    """
    out: list[PredicateFailure] = []
    ops = pred.operators
    for op in ops:
        if op in {"present", "absent"}:
            must_exist = bool(pred.present) if op == "present" else not pred.absent
            if present != must_exist:
                message = (
                    "expected the field to be present"
                    if must_exist
                    else f"expected no such field, found {value!r}"
                )
                out.append(
                    PredicateFailure(op, getattr(pred, op), value if present else None, present, message)
                )
    value_ops = [op for op in ops if op not in {"present", "absent"}]
    if not value_ops:
        return out
    if not present:
        out.append(
            PredicateFailure("present", True, None, False, f"expected {_describe(pred)}, the field is absent")
        )
        return out
    for op in value_ops:
        problem = _value_failure(pred, op, value)
        if problem is not None:
            out.append(PredicateFailure(op, _operand(pred, op), value, True, problem))
    return out


def _operand(pred: FieldPredicate, op: str) -> Any:
    if op == "between":
        return list(pred.between or ())
    if op == "one_of":
        return list(pred.one_of or ())
    if op == "approx":
        return {"approx": pred.approx, "tol": pred.tol}
    return getattr(pred, op)


def _value_failure(pred: FieldPredicate, op: str, value: Any) -> str | None:
    """Why ``value`` fails operator ``op`` of ``pred``, or ``None`` when it holds."""
    shown = repr(value)
    if op == "equals":
        return None if canonical(pred.equals) == value else f"expected {pred.equals!r}, found {shown}"
    if op == "one_of":
        options = [canonical(o) for o in pred.one_of or ()]
        return None if value in options else f"expected one of {list(pred.one_of or ())!r}, found {shown}"
    if op == "matches":
        pattern = pred.matches or ""
        return (
            None
            if _regex(pattern).search(_as_text(value))
            else f"expected a match for /{pattern}/, found {shown}"
        )
    if op == "approx":
        target = pred.approx
        if not _is_number(value):
            return f"expected a number within {pred.tol} of {target}, {_not_a_number(value)}"
        if target is None or not math.isfinite(float(value)):
            return f"expected a number within {pred.tol} of {target}, found {shown}"
        return (
            None
            if abs(float(value) - target) <= pred.tol
            else f"expected {target} ± {pred.tol}, found {shown}"
        )
    if op == "between":
        lo, hi = pred.between or (0, 0)
        wanted = f"{lo} <= value <= {hi} (inclusive)"
        if not _is_number(value):
            return f"between: expected a number with {wanted}, {_not_a_number(value)}"
        return None if lo <= value <= hi else f"between: expected {wanted}, found {shown}"
    sign, holds = _ORDERING[op]
    bound = getattr(pred, op)
    if not _is_number(value):
        return f"{op}: expected a number {sign} {bound}, {_not_a_number(value)}"
    return None if holds(value, bound) else f"{op}: expected {sign} {bound}, found {shown}"


def evaluate_predicate(pred: FieldPredicate, present: bool, value: Any) -> str | None:
    """Check one field against its predicate; every operator in it must hold.

    The same check as :func:`predicate_failures`, as one message.

    Args:
        pred: The predicate.
        present: Whether the field exists in the row.
        value: Its canonical value (ignored when absent).

    Returns:
        ``None`` when satisfied, else what was expected and what was found (the failing operators'
        messages joined with ``"; "``).

    Example:
        >>> from judgekit.cases import FieldPredicate
        >>> evaluate_predicate(FieldPredicate(gt=5), True, "7")
        "gt: expected a number > 5, found string '7'"
    """
    failures = predicate_failures(pred, present, value)
    return "; ".join(f.message for f in failures) if failures else None


def _describe_one(pred: FieldPredicate, op: str) -> str:
    if op == "equals":
        return repr(pred.equals)
    if op == "approx":
        return f"{pred.approx} ± {pred.tol}"
    if op == "one_of":
        return f"one of {list(pred.one_of or ())!r}"
    if op == "matches":
        return f"a match for /{pred.matches}/"
    if op == "between":
        lo, hi = pred.between or (0, 0)
        return f"between {lo} and {hi} (inclusive)"
    if op in _ORDERING:
        return f"{_ORDERING[op][0]} {getattr(pred, op)}"
    if op == "present":
        return "present" if pred.present else "absent"
    return "absent" if pred.absent else "present"


def _describe(pred: FieldPredicate) -> str:
    """The predicate in words: its operators joined with ``and`` (``>= 1 and < 5``)."""
    return " and ".join(_describe_one(pred, op) for op in pred.operators)


def _row_failures(row: Any, fields: Mapping[str, FieldPredicate]) -> list[str]:
    return [f"{name}: {f.message}" for name, f in _row_failure_records(row, fields)]


def _row_failure_records(
    row: Any, fields: Mapping[str, FieldPredicate]
) -> list[tuple[str, PredicateFailure]]:
    out: list[tuple[str, PredicateFailure]] = []
    for name, pred in fields.items():
        present, value = lookup_field(row, name)
        out.extend((name, f) for f in predicate_failures(pred, present, value))
    return out


def _failure_data(row: Any, fields: Mapping[str, FieldPredicate]) -> list[dict[str, Any]]:
    return [{"field": name, **f.to_data()} for name, f in _row_failure_records(row, fields)]


def _spec_text(fields: Mapping[str, FieldPredicate]) -> str:
    return "{" + ", ".join(f"{k}: {_describe(p)}" for k, p in fields.items()) + "}"


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class _Inputs:
    initial: Snapshot | None
    final: Snapshot | None
    expected: Snapshot | None


def _error(check_id: str, reason: str) -> CheckResult:
    return CheckResult(check_id=check_id, layer=LAYER, verdict=Verdict.ERROR, reason=reason)


def _pass(check_id: str, reason: str = "") -> CheckResult:
    return CheckResult(check_id=check_id, layer=LAYER, verdict=Verdict.PASS, reason=reason)


def _diff_evidence(diff: StateDiff, summary: str) -> Evidence:
    lines = diff.lines(limit=_MAX_LINES)
    return Evidence(kind="diff", summary=summary, data={"diff": diff.to_data(), "lines": lines})


def _collateral_result(collateral: StateDiff, *, note: str = "") -> CheckResult:
    if not collateral:
        return _pass(COLLATERAL_CHECK, note or "nothing changed beyond the expected changes")
    lines = collateral.lines(limit=_MAX_LINES)
    count = collateral.change_count()
    return CheckResult(
        check_id=COLLATERAL_CHECK,
        layer=LAYER,
        verdict=Verdict.FAIL,
        reason=f"{count} row(s) changed that the expected state does not cover: " + first_few(lines),
        category=FailureCategory.POLICY_VIOLATION,
        evidence=(_diff_evidence(collateral, "collateral changes (initial -> final)"),),
    )


def check_state(
    expected_state: ExpectedState | None,
    *,
    initial: Snapshot | None,
    final: Snapshot | None,
    expected: Snapshot | None = None,
    missing: Mapping[str, str] | None = None,
    changes: StateDiff | None = None,
) -> list[CheckResult]:
    """Grade the end state.

    Args:
        expected_state: The case's expectation, or ``None`` (the layer is then ``not_evaluated``).
        initial: The state before the conversation (required for ``changes``; used for ``snapshot`` and
            ``from_reference`` to tell expected differences from collateral ones).
        final: The state after the conversation.
        expected: The expected final state, for ``snapshot`` and ``from_reference``.
        missing: Why an input is ``None``, by name (``initial``, ``final``, ``expected``), for the
            reason of an ``error`` verdict.
        changes: ``diff_states(initial, final, ignore_fields=expected_state.ignore_fields)`` when the
            caller already has it (it is computed here otherwise).

    Returns:
        ``state`` and, when collateral changes can be told apart, ``state:collateral`` (both gates); or a
        single ``not_evaluated`` ``state`` check when there is no expectation.
    """
    if expected_state is None:
        return [
            CheckResult(
                check_id=STATE_CHECK,
                layer=LAYER,
                verdict=Verdict.NOT_EVALUATED,
                reason="the case has no expected_state",
            )
        ]
    why = dict(missing or {})
    if final is None:
        return [
            _error(
                STATE_CHECK,
                f"no final state to grade: {why.get('final', 'the transcript records no final_state')}",
            )
        ]
    if expected_state.changes is not None:
        if initial is None:
            return [
                _error(
                    STATE_CHECK,
                    "expected changes are relative to the initial state, and there is none: "
                    + why.get("initial", "neither the case nor the transcript names an initial_state"),
                )
            ]
        if changes is None:
            changes = diff_states(initial, final, ignore_fields=expected_state.ignore_fields)
        return _check_changes(expected_state.changes, initial, final, changes)
    if expected is None:
        form = "reference solution's final state" if expected_state.from_reference else "expected snapshot"
        return [_error(STATE_CHECK, f"no {form} to compare with: {why.get('expected', 'it is missing')}")]
    return _check_snapshot(expected_state, initial, final, expected)


# --------------------------------------------------------------------------- snapshot form


def _split_diff(diff: StateDiff, belongs: Mapping[str, set[str]]) -> tuple[StateDiff, StateDiff]:
    """Split a diff into rows listed in ``belongs`` (table -> keys) and the rest."""
    inside, outside = StateDiff(), StateDiff()
    for name, t in diff.tables.items():
        keys = belongs.get(name, set())
        a, b = TableDiff(), TableDiff()
        for attr in ("added", "removed", "modified"):
            for key, value in getattr(t, attr).items():
                getattr(a if key in keys else b, attr)[key] = value
        if t.table_added or t.table_removed:
            target = a if name in belongs else b
            target.table_added, target.table_removed = t.table_added, t.table_removed
        if a:
            inside.tables[name] = a
        if b:
            outside.tables[name] = b
    return inside, outside


def _changed_keys(diff: StateDiff) -> dict[str, set[str]]:
    return {name: set(t.added) | set(t.removed) | set(t.modified) for name, t in diff.tables.items()}


def _check_snapshot(
    spec: ExpectedState, initial: Snapshot | None, final: Snapshot, expected: Snapshot
) -> list[CheckResult]:
    ignore = spec.ignore_fields
    form = "the reference solution's final state" if spec.from_reference else "the expected snapshot"
    diff = diff_states(expected, final, ignore_fields=ignore)
    if initial is None:
        if not diff:
            return [_pass(STATE_CHECK, f"the final state equals {form}")]
        return [_snapshot_failure(diff, form, None, final, note=" (no initial state: collateral included)")]
    if not diff:
        return [_pass(STATE_CHECK, f"the final state equals {form}"), _collateral_result(StateDiff())]
    expected_changes = diff_states(initial, expected, ignore_fields=ignore, tables=list(diff.tables))
    intended, collateral_rows = _split_diff(diff, _changed_keys(expected_changes))
    results = [
        _snapshot_failure(intended, form, initial, final)
        if intended
        else _pass(STATE_CHECK, f"every row {form} changes matches it")
    ]
    # Rows the expected state leaves as they were but the final state changed: report them as
    # initial -> final changes, which is what the agent did.
    collateral_keys = _changed_keys(collateral_rows)
    collateral = diff_states(initial, final, ignore_fields=ignore, tables=list(collateral_keys))
    collateral, _ = _split_diff(collateral, collateral_keys)
    results.append(_collateral_result(collateral))
    return results


def _snapshot_failure(
    diff: StateDiff, form: str, initial: Snapshot | None, final: Snapshot, note: str = ""
) -> CheckResult:
    untouched = initial is not None and all(
        _row(initial, name, key) == _row(final, name, key)
        for name, keys in _changed_keys(diff).items()
        for key in keys
    )
    category = FailureCategory.INCOMPLETE_EXECUTION if untouched else FailureCategory.INVALID_ARGUMENTS
    lines = diff.lines(limit=_MAX_LINES)
    return CheckResult(
        check_id=STATE_CHECK,
        layer=LAYER,
        verdict=Verdict.FAIL,
        reason=f"the final state differs from {form}{note} in {diff.change_count()} row(s): "
        + first_few(lines),
        category=category,
        evidence=(_diff_evidence(diff, f"differences from {form} (expected -> actual)"),),
    )


_ABSENT = object()


def _row(snapshot: Snapshot, table: str, key: str) -> Any:
    rows = snapshot.tables.get(table)
    return _ABSENT if rows is None else rows.get(key, _ABSENT)


# --------------------------------------------------------------------------- changes form


@dataclass
class _Findings:
    missing: list[Evidence]
    wrong: list[Evidence]
    errors: list[str]
    covered: dict[str, dict[str, tuple[str, ...] | None]]  # table -> key -> covered field paths (None: all)


def _covered(path: str, fields: Iterable[str]) -> bool:
    return any(path == f or path.startswith(f + ".") for f in fields)


def _check_changes(
    changes: Mapping[str, TableChange], initial: Snapshot, final: Snapshot, actual: StateDiff
) -> list[CheckResult]:
    found = _Findings([], [], [], {})
    for table, spec in changes.items():
        _check_table(table, spec, initial, final, actual, found)
    if found.errors:
        state = _error(STATE_CHECK, "the expected changes do not fit the states: " + "; ".join(found.errors))
    elif found.missing or found.wrong:
        category = FailureCategory.INVALID_ARGUMENTS if found.wrong else FailureCategory.INCOMPLETE_EXECUTION
        problems = [e.summary for e in found.missing + found.wrong]
        state = CheckResult(
            check_id=STATE_CHECK,
            layer=LAYER,
            verdict=Verdict.FAIL,
            reason=f"{len(problems)} expected change(s) not made as expected: " + first_few(problems),
            category=category,
            evidence=tuple(found.missing + found.wrong),
        )
    else:
        state = _pass(STATE_CHECK, "every expected change was made")
    return [state, _collateral_result(_collateral(actual, found.covered))]


def _collateral(actual: StateDiff, covered: Mapping[str, Mapping[str, tuple[str, ...] | None]]) -> StateDiff:
    out = StateDiff()
    for name, t in actual.tables.items():
        cov = covered.get(name, {})
        td = TableDiff(table_added=t.table_added and name not in covered, table_removed=t.table_removed)
        for key, row in t.added.items():
            if key not in cov:
                td.added[key] = row
        for key, row in t.removed.items():
            if key not in cov:
                td.removed[key] = row
        for key, change in t.modified.items():
            fields = cov.get(key, ())
            if fields is None:
                continue
            rest = tuple(c for c in change.changes if not _covered(c.path, fields))
            if rest:
                td.modified[key] = RowChange(key, rest, change.before, change.after)
        if td:
            out.tables[name] = td
    return out


def _check_table(  # noqa: PLR0917
    table: str,
    spec: TableChange,
    initial: Snapshot,
    final: Snapshot,
    actual: StateDiff,
    found: _Findings,
) -> None:
    before = initial.tables.get(table)
    after = final.tables.get(table)
    if before is None and after is None:
        found.errors.append(
            f"table '{table}' is in neither the initial nor the final state (check the table name; "
            f"tables: {', '.join(sorted(set(initial.tables) | set(final.tables))) or 'none'})"
        )
        return
    diff = actual.tables.get(table, TableDiff())
    cov = found.covered.setdefault(table, {})
    if spec.added:
        _match_added(table, spec.added, diff, found, cov)
    for key in spec.removed:
        if before is None or key not in before:
            found.errors.append(
                f"{table}/{key}: expected to be removed, but the initial state has no such row"
            )
        elif key in diff.removed:
            cov[key] = None
        else:
            found.missing.append(
                Evidence(
                    kind="diff",
                    summary=f"{table}/{key}: expected to be removed, still present",
                    data={"table": table, "key": key, "expected": "removed"},
                )
            )
    for key, fields in spec.modified.items():
        now = after.get(key, _ABSENT) if after is not None else _ABSENT
        was = before.get(key, _ABSENT) if before is not None else _ABSENT
        if now is _ABSENT and was is _ABSENT:
            found.errors.append(f"{table}/{key}: an expected modification names a row in neither state")
            continue
        cov[key] = tuple(fields)
        if now is _ABSENT:
            found.wrong.append(
                Evidence(
                    kind="diff",
                    summary=f"{table}/{key}: expected to be modified, but it was removed",
                    data={"table": table, "key": key, "before": was},
                )
            )
            continue
        problems = _row_failures(now, fields)
        if problems:
            untouched = now == was
            evidence = Evidence(
                kind="diff",
                summary=f"{table}/{key}: "
                + "; ".join(problems)
                + (" (the row was not changed)" if untouched else ""),
                data={
                    "table": table,
                    "key": key,
                    "problems": problems,
                    "failures": _failure_data(now, fields),
                    "changes": [c.to_data() for c in diff_records(was, now)] if was is not _ABSENT else [],
                    "row": now,
                },
            )
            (found.missing if untouched else found.wrong).append(evidence)


def _match_added(
    table: str,
    specs: Sequence[Mapping[str, FieldPredicate]],
    diff: TableDiff,
    found: _Findings,
    cov: dict[str, tuple[str, ...] | None],
) -> None:
    keys = list(diff.added)
    rows = [diff.added[k] for k in keys]
    edges = [[j for j, row in enumerate(rows) if not _row_failures(row, spec)] for spec in specs]
    matching = max_bipartite_matching(edges, len(rows))
    for j in matching.values():
        cov[keys[j]] = None
    for i, spec in enumerate(specs):
        if i in matching:
            continue
        if not rows:
            found.missing.append(
                Evidence(
                    kind="diff",
                    summary=f"{table}: expected an added row {_spec_text(spec)}; no row was added",
                    data={"table": table, "expected_row": {k: _describe(p) for k, p in spec.items()}},
                )
            )
            continue
        # Explain with the added rows that come closest (fewest failing fields).
        scored = sorted(((len(_row_failures(r, spec)), keys[j]) for j, r in enumerate(rows)))[:3]
        near = {key: _row_failures(diff.added[key], spec) for _, key in scored}
        taken = [keys[j] for j in matching.values()]
        fully = [k for k in keys if not _row_failures(diff.added[k], spec)]
        hint = (
            f"; rows that would match ({', '.join(fully)}) are each needed by another expected row"
            if fully
            else ""
        )
        found.wrong.append(
            Evidence(
                kind="diff",
                summary=f"{table}: no added row satisfies {_spec_text(spec)}{hint}; closest: "
                + "; ".join(f"{k}: {', '.join(v)}" for k, v in near.items()),
                data={
                    "table": table,
                    "expected_row": {k: _describe(p) for k, p in spec.items()},
                    "closest": {
                        k: {
                            "problems": v,
                            "failures": _failure_data(diff.added[k], spec),
                            "row": diff.added[k],
                        }
                        for k, v in near.items()
                    },
                    "matched_elsewhere": taken,
                },
            )
        )


# --------------------------------------------------------------------------- the layer


class StateLayer:
    """The state layer: the trial's start (``state:initial``, when it goes wrong), then :func:`check_state`.

    The states are resolved once per trial (:func:`judgekit.graders.context.trial_states`) and shared with
    the rules layer.
    """

    info: LayerInfo = describe_layer(
        LAYER, (Capability.FINAL_STATE,), "the end state against the expected state"
    )

    def checks(self, case: Case, transcript: Transcript, context: LayerContext) -> list[CheckResult]:
        """``state:initial`` when the trial did not start from the fixture, then the state checks."""
        facts = context.shared(trial_states, case, transcript)
        out: list[CheckResult] = []
        initial, fixture = facts.initial, facts.fixture
        if initial is not None and isinstance(fixture, Snapshot) and fixture.tables != initial.tables:
            drift = diff_states(fixture, initial)
            out.append(
                CheckResult(
                    check_id=INITIAL_CHECK,
                    layer=LAYER,
                    verdict=Verdict.ERROR,
                    reason="the trial did not start from the case's initial_state (was the environment "
                    "reset?): " + "; ".join(drift.lines(limit=5)),
                    evidence=(
                        Evidence(
                            kind="diff",
                            summary="case fixture -> recorded initial state",
                            data=drift.to_data(),
                        ),
                    ),
                )
            )
        elif initial is not None and isinstance(fixture, str):
            out.append(_error(INITIAL_CHECK, fixture))
        spec = case.expected_state
        if spec is None:
            return [*out, *check_state(None, initial=None, final=None)]
        missing = dict(facts.missing)
        expected: Snapshot | None = None
        if spec.snapshot is not None or spec.from_reference:
            exp = context.states.expected(case)
            if isinstance(exp, str):
                missing["expected"] = exp
            else:
                expected = exp
        out.extend(
            check_state(
                spec,
                initial=initial,
                final=facts.final,
                expected=expected,
                missing=missing,
                changes=facts.changes,
            )
        )
        return out
