"""Expected route: the tool calls the agent should make, matched as an assignment problem.

The bank case's ``expected.route`` lists :class:`~judgekit.cases.ExpectedCall` entries (a tool, argument
matchers, ``requires_confirmation``, ``max_calls``); ``expected.route_match`` says how the transcript's
calls are matched to them:

* ``superset`` (the default): every expected call is made; other calls may be made too;
* ``subset``: every call made is expected; expected calls may be missing;
* ``unordered``: both (the same calls, in any order);
* ``strict``: the same calls in the same order.

An expected call with ``max_calls: n`` may absorb up to ``n`` actual calls (retries) but needs at least
one. Matching is solved exactly, never greedily. ``superset`` is a maximum bipartite matching of entries
to calls (augmenting paths, :func:`max_bipartite_matching`); ``subset`` a maximum matching of calls to
entry slots (each entry repeated ``max_calls`` times); ``unordered`` needs both, and by the
Mendelsohn-Dulmage theorem a matching covering every entry and one covering every call imply one
covering both, so the two decide it exactly. ``strict`` is a dynamic programme over (route position,
call position). A greedy first-fit fails routes such as "expected ``A(any x)`` then ``A(x=1)``, actual
``A(x=1)``, ``A(x=2)``": giving the first call to the first entry leaves the second without a partner.

Arguments are compared per name (``arg_match``): ``exact`` (canonical equality: ``1 == 1.0``),
``ignore``, ``subset`` (the actual value is contained in the expected one: a mapping's items, a list's
elements counted with multiplicity; scalars must be equal) or ``superset`` (the reverse). Arguments
not named in ``args`` are not checked. A call whose arguments are not valid JSON matches only entries that
check no argument.

Checks produced (all gates): ``route`` (the matching; an empty route means no tool may fire),
``route:max_calls`` (no tool called more often than its entries allow) and ``route:confirmation`` (a tool
that requires confirmation was called only after the user affirmed a proposal naming it, see
:func:`~judgekit.graders.text.confirmation_before`; ``insufficient_information`` when the rule cannot
decide a call and no call fails). A case without a route gives one ``not_evaluated``
``route`` check.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from judgekit.cases import Case, ExpectedCall
from judgekit.graders.context import LayerContext, trial_calls
from judgekit.graders.contract import LayerInfo, describe_layer, first_few
from judgekit.graders.text import confirmation_before
from judgekit.state import canonical
from judgekit.transcript import CallRecord, Capability, Transcript
from judgekit.verdict import CheckResult, Evidence, FailureCategory, Verdict

__all__ = [
    "LAYER",
    "ActualCall",
    "RouteLayer",
    "RouteMatch",
    "argument_problems",
    "check_route",
    "match_route",
    "max_bipartite_matching",
]

LAYER = "route"
"""The layer name every check of this module reports."""

Mode = Literal["strict", "unordered", "subset", "superset"]


# --------------------------------------------------------------------------- bipartite matching


def max_bipartite_matching(edges: Sequence[Sequence[int]], n_right: int) -> dict[int, int]:
    """A maximum matching of a bipartite graph (augmenting paths, Kuhn's algorithm; exact, not greedy).

    Args:
        edges: For each left vertex, the right vertices (``0 <= j < n_right``) it may be matched to.
        n_right: Number of right vertices.

    Returns:
        ``left -> right`` for the matched pairs; no matching has more pairs.
    """
    match_right: list[int] = [-1] * n_right
    match_left: dict[int, int] = {}
    for root in range(len(edges)):
        if not edges[root]:
            continue
        # Iterative depth-first search for an augmenting path from ``root``. A frame is
        # [left vertex, next option to try, right vertex through which the search reached it].
        seen: set[int] = set()
        stack: list[list[int]] = [[root, 0, -1]]
        while stack:
            frame = stack[-1]
            options = edges[frame[0]]
            moved = False
            while frame[1] < len(options):
                right = options[frame[1]]
                frame[1] += 1
                if right in seen:
                    continue
                seen.add(right)
                moved = True
                if match_right[right] < 0:
                    # Augment: flip every edge along the path held by the stack.
                    while stack:
                        left, _, via = stack.pop()
                        match_right[right] = left
                        match_left[left] = right
                        right = via
                else:
                    stack.append([match_right[right], 0, right])
                break
            if not moved:
                stack.pop()
    return match_left


# --------------------------------------------------------------------------- argument matching


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _contains(big: Any, small: Any) -> bool:
    """Whether ``small`` is contained in ``big`` (mapping items, list elements with multiplicity)."""
    if isinstance(big, dict) and isinstance(small, dict):
        return all(k in big and big[k] == v for k, v in small.items())
    if isinstance(big, list) and isinstance(small, list):
        have = Counter(_key(v) for v in big)
        need = Counter(_key(v) for v in small)
        return all(have[k] >= n for k, n in need.items())
    return bool(big == small)


_RELATION = {"exact": "expected", "subset": "expected within", "superset": "expected to contain"}


def _arg_spec(expected: ExpectedCall) -> list[tuple[str, Any, str, Any]]:
    """``(name, expected value, mode, canonical expected value)`` of every checked argument."""
    return [
        (name, value, expected.arg_match.get(name, "exact"), canonical(value))
        for name, value in expected.args.items()
        if expected.arg_match.get(name) != "ignore"
    ]


def _spec_problems(spec: list[tuple[str, Any, str, Any]], arguments: Mapping[str, Any] | None) -> list[str]:
    if not spec:
        return []
    if arguments is None:
        return ["the arguments are not valid JSON"]
    problems = []
    for name, value, mode, want in spec:
        if name not in arguments:
            problems.append(f"{name}: missing (expected {value!r})")
            continue
        got = canonical(arguments[name])
        if mode == "exact":
            ok = want == got
        elif mode == "subset":
            ok = _contains(want, got)
        else:
            ok = _contains(got, want)
        if not ok:
            problems.append(f"{name}: {_RELATION[mode]} {value!r}, got {got!r}")
    return problems


def argument_problems(expected: ExpectedCall, arguments: Mapping[str, Any] | None) -> list[str]:
    """Why a call's arguments do not satisfy an expected call (empty when they do).

    Args:
        expected: The expected call.
        arguments: The call's arguments (compared in canonical form), or ``None`` when they are not
            valid JSON.
    """
    return _spec_problems(_arg_spec(expected), arguments)


# --------------------------------------------------------------------------- route matching


@dataclass(frozen=True, slots=True)
class ActualCall:
    """A call as the route matcher sees it.

    Attributes:
        tool: The tool's name.
        arguments: The arguments, or ``None`` when they are not valid JSON.
    """

    tool: str
    arguments: Mapping[str, Any] | None


@dataclass
class RouteMatch:
    """The result of matching calls against a route.

    Attributes:
        ok: Whether the calls satisfy the route in the given mode.
        pairs: ``(route index, call index)`` of every matched pair.
        unmatched_expected: Route entries that needed a call and got none.
        unexpected_calls: Calls matched to no entry (a failure in ``subset``, ``unordered`` and ``strict``).
        strict_mismatch: For ``strict``: ``(route index, call index)`` where the order first breaks.
    """

    ok: bool
    pairs: list[tuple[int, int]] = field(default_factory=list)
    unmatched_expected: list[int] = field(default_factory=list)
    unexpected_calls: list[int] = field(default_factory=list)
    strict_mismatch: tuple[int, int] | None = None


def _compatible(route: Sequence[ExpectedCall], calls: Sequence[ActualCall]) -> list[list[bool]]:
    out = []
    for entry in route:
        spec = _arg_spec(entry)
        out.append([call.tool == entry.tool and not _spec_problems(spec, call.arguments) for call in calls])
    return out


def match_route(route: Sequence[ExpectedCall], calls: Sequence[ActualCall], mode: Mode) -> RouteMatch:
    """Match calls to a route in one mode (see the module docstring); exact, never greedy.

    Args:
        route: The expected calls.
        calls: The actual calls, in order.
        mode: ``strict``, ``unordered``, ``subset`` or ``superset``.

    Returns:
        The matching and whether it satisfies the mode.
    """
    ok_matrix = _compatible(route, calls)
    if mode == "strict":
        return _match_strict(route, calls, ok_matrix)
    n_calls = len(calls)
    need_all_expected = mode in ("superset", "unordered")
    need_all_calls = mode in ("subset", "unordered")
    # Every entry needs one call (its required slot); an entry with max_calls n may take n - 1 more.
    required = max_bipartite_matching([[j for j in range(n_calls) if row[j]] for row in ok_matrix], n_calls)
    pairs = [(i, j) for i, j in required.items()]
    unmatched_expected = [i for i in range(len(route)) if i not in required]
    unexpected: list[int] = []
    if need_all_calls:
        tool_counts = Counter(c.tool for c in calls)
        slots: list[int] = []
        for i, entry in enumerate(route):
            slots.extend([i] * max(1, min(entry.max_calls, tool_counts.get(entry.tool, 0))))
        by_call = max_bipartite_matching(
            [[s for s, i in enumerate(slots) if ok_matrix[i][j]] for j in range(n_calls)], len(slots)
        )
        unexpected = [j for j in range(n_calls) if j not in by_call]
        if not need_all_expected:
            pairs = [(slots[s], j) for j, s in by_call.items()]
    # A matching that covers every entry and one that covers every call imply one that covers both
    # (Mendelsohn-Dulmage), so checking the two separately decides ``unordered`` exactly.
    ok = (not need_all_expected or not unmatched_expected) and (not need_all_calls or not unexpected)
    return RouteMatch(
        ok=ok,
        pairs=sorted(pairs, key=lambda p: p[1]),
        unmatched_expected=unmatched_expected if need_all_expected else [],
        unexpected_calls=unexpected,
    )


def _match_strict(
    route: Sequence[ExpectedCall], calls: Sequence[ActualCall], ok_matrix: list[list[bool]]
) -> RouteMatch:
    """Strict order: entry ``i`` consumes 1..max_calls consecutive calls it accepts, in route order."""
    n, m = len(route), len(calls)
    # reach[i][j]: the first i entries can consume exactly the first j calls; back[i][j] = calls used by i-1.
    reach = [[False] * (m + 1) for _ in range(n + 1)]
    back = [[0] * (m + 1) for _ in range(n + 1)]
    reach[0][0] = True
    for i in range(n):
        limit = route[i].max_calls
        for j in range(m + 1):
            if not reach[i][j]:
                continue
            for r in range(1, limit + 1):
                k = j + r - 1
                if k >= m or not ok_matrix[i][k]:
                    break
                if not reach[i + 1][j + r]:
                    reach[i + 1][j + r] = True
                    back[i + 1][j + r] = r
    if reach[n][m]:
        pairs: list[tuple[int, int]] = []
        j = m
        for i in range(n, 0, -1):
            r = back[i][j]
            pairs.extend((i - 1, k) for k in range(j - r, j))
            j -= r
        return RouteMatch(ok=True, pairs=sorted(pairs, key=lambda p: p[1]))
    # Where does it break? The furthest call position reachable, and the entry that was due there.
    best_i, best_j = 0, 0
    for i in range(n + 1):
        for j in range(m + 1):
            if reach[i][j] and (j, i) > (best_j, best_i):
                best_i, best_j = i, j
    unmatched = list(range(best_i, n))
    unexpected = list(range(best_j, m))
    return RouteMatch(
        ok=False,
        unmatched_expected=unmatched,
        unexpected_calls=unexpected,
        strict_mismatch=(best_i, best_j),
    )


# --------------------------------------------------------------------------- the check


def _call_text(tool: str, arguments: Mapping[str, Any] | None) -> str:
    if arguments is None:
        return f"{tool}(<invalid JSON>)"
    inner = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
    if len(inner) > 160:
        inner = inner[:157] + "..."
    return f"{tool}({inner})"


def _entry_text(entry: ExpectedCall) -> str:
    inner = ", ".join(
        f"{k}={'<any>' if entry.arg_match.get(k) == 'ignore' else repr(v)}" for k, v in entry.args.items()
    )
    return f"{entry.tool}({inner})"


def _call_evidence(record: CallRecord, summary: str) -> Evidence:
    return Evidence(
        kind="call",
        summary=summary,
        call_index=record.index,
        tool=record.call.name,
        arguments=record.call.arguments,
        message_index=record.message_index,
        data={"raw_arguments": record.call.raw_arguments, "arguments_error": record.call.arguments_error}
        if record.call.arguments is None
        else None,
    )


def check_route(
    route: Sequence[ExpectedCall] | None,
    mode: Mode,
    transcript: Transcript,
    *,
    calls: Sequence[CallRecord] | None = None,
) -> list[CheckResult]:
    """Check a transcript's tool calls against an expected route.

    Args:
        route: ``expected.route``: ``None`` when the route is not checked, ``[]`` when no tool may fire.
        mode: ``expected.route_match``.
        transcript: The trial.
        calls: ``transcript.calls()`` when the caller already has it.

    Returns:
        ``route`` and, when relevant, ``route:max_calls`` and ``route:confirmation`` (all gates).
    """
    if route is None:
        return [
            CheckResult(
                check_id="route",
                layer=LAYER,
                verdict=Verdict.NOT_EVALUATED,
                reason="the case has no expected route",
            )
        ]
    records = list(calls) if calls is not None else transcript.calls()
    actual = [ActualCall(r.call.name, r.call.arguments) for r in records]
    if not route:
        if not records:
            return [CheckResult(check_id="route", layer=LAYER, verdict=Verdict.PASS, reason="no tool fired")]
        return [
            CheckResult(
                check_id="route",
                layer=LAYER,
                verdict=Verdict.FAIL,
                reason=f"no tool may fire, but {len(records)} call(s) were made: "
                + ", ".join(_call_text(a.tool, a.arguments) for a in actual[:5]),
                category=FailureCategory.WRONG_TOOL,
                evidence=tuple(
                    _call_evidence(r, f"call {r.index}: {_call_text(a.tool, a.arguments)}; no tool may fire")
                    for r, a in zip(records[:20], actual[:20], strict=True)
                ),
            )
        ]
    result = match_route(route, actual, mode)
    out = [_route_result(route, mode, records, actual, result)]
    out.append(_max_calls_result(route, records, actual))
    if any(entry.requires_confirmation for entry in route):
        out.append(_confirmation_result(route, transcript, records, actual))
    return out


def _route_result(
    route: Sequence[ExpectedCall],
    mode: Mode,
    records: Sequence[CallRecord],
    actual: Sequence[ActualCall],
    result: RouteMatch,
) -> CheckResult:
    if result.ok:
        return CheckResult(
            check_id="route",
            layer=LAYER,
            verdict=Verdict.PASS,
            reason=f"{mode}: {len(route)} expected call(s) matched by {len(result.pairs)} call(s) "
            f"of {len(actual)}",
        )
    evidence: list[Evidence] = []
    problems: list[str] = []
    wrong_args = False
    if result.strict_mismatch is not None:
        i, j = result.strict_mismatch
        due = _entry_text(route[i]) if i < len(route) else "no further call"
        got = _call_text(actual[j].tool, actual[j].arguments) if j < len(actual) else "no further call"
        problems.append(f"strict order breaks at call {j}: expected {due}, got {got}")
        if i < len(route) and j < len(actual) and actual[j].tool == route[i].tool:
            wrong_args = True
            detail = "; ".join(argument_problems(route[i], actual[j].arguments))
            problems[-1] += f" ({detail})" if detail else " (more calls than max_calls allows)"
        if j < len(records):
            evidence.append(_call_evidence(records[j], problems[-1]))
        else:
            evidence.append(Evidence(kind="note", summary=problems[-1]))
    else:
        for i in result.unmatched_expected:
            entry = route[i]
            same_tool = [j for j, a in enumerate(actual) if a.tool == entry.tool]
            if not same_tool:
                text = f"expected {_entry_text(entry)}: {entry.tool} was never called"
                problems.append(text)
                evidence.append(Evidence(kind="note", summary=text, tool=entry.tool))
                continue
            wrong_args = True
            closest = min(same_tool, key=lambda j: (len(argument_problems(entry, actual[j].arguments)), j))
            detail = "; ".join(argument_problems(entry, actual[closest].arguments)) or (
                "a matching call exists but another expected call needs it"
            )
            text = f"expected {_entry_text(entry)}: not matched; closest is call {closest} ({detail})"
            problems.append(text)
            evidence.append(_call_evidence(records[closest], text))
        for j in result.unexpected_calls:
            text = f"call {j}: {_call_text(actual[j].tool, actual[j].arguments)} is not in the expected route"
            problems.append(text)
            evidence.append(_call_evidence(records[j], text))
    unexpected_tool = any(actual[j].tool not in {e.tool for e in route} for j in result.unexpected_calls)
    if unexpected_tool or (result.unexpected_calls and not wrong_args):
        category = FailureCategory.WRONG_TOOL
    elif wrong_args:
        category = FailureCategory.INVALID_ARGUMENTS
    else:
        category = FailureCategory.INCOMPLETE_EXECUTION
    return CheckResult(
        check_id="route",
        layer=LAYER,
        verdict=Verdict.FAIL,
        reason=f"{mode} route not followed: " + first_few(problems),
        category=category,
        evidence=tuple(evidence[:20]),
    )


def _max_calls_result(
    route: Sequence[ExpectedCall], records: Sequence[CallRecord], actual: Sequence[ActualCall]
) -> CheckResult:
    allowed: dict[str, int] = {}
    for entry in route:
        allowed[entry.tool] = allowed.get(entry.tool, 0) + entry.max_calls
    seen: Counter[str] = Counter()
    evidence: list[Evidence] = []
    over: Counter[str] = Counter()
    for record, call in zip(records, actual, strict=True):
        if call.tool not in allowed:
            continue
        seen[call.tool] += 1
        if seen[call.tool] > allowed[call.tool]:
            over[call.tool] += 1
            if len(evidence) < 20:
                evidence.append(
                    _call_evidence(
                        record,
                        f"call {record.index}: {call.tool} call number {seen[call.tool]}; at most "
                        f"{allowed[call.tool]} allowed",
                    )
                )
    if not over:
        return CheckResult(
            check_id="route:max_calls",
            layer=LAYER,
            verdict=Verdict.PASS,
            reason="no expected tool was called more often than allowed",
        )
    return CheckResult(
        check_id="route:max_calls",
        layer=LAYER,
        verdict=Verdict.FAIL,
        reason="called too often: "
        + ", ".join(f"{tool} {seen[tool]} times (at most {allowed[tool]})" for tool in sorted(over)),
        category=FailureCategory.POLICY_VIOLATION,
        evidence=tuple(evidence),
    )


def _confirmation_result(
    route: Sequence[ExpectedCall],
    transcript: Transcript,
    records: Sequence[CallRecord],
    actual: Sequence[ActualCall],
) -> CheckResult:
    tools = {entry.tool for entry in route if entry.requires_confirmation}
    evidence = []
    undecided = []
    checked = 0
    for record, call in zip(records, actual, strict=True):
        if call.tool not in tools:
            continue
        checked += 1
        found = confirmation_before(transcript, record.message_index, call.tool, call.arguments)
        if found.status == "confirmed":
            continue
        text = f"call {record.index}: {_call_text(call.tool, call.arguments)}"
        if found.status == "undecided":
            undecided.append(
                _call_evidence(record, f"{text}: cannot tell whether the user confirmed it ({found.reason})")
            )
        else:
            evidence.append(
                _call_evidence(record, f"{text} was made without the user affirming first ({found.reason})")
            )
    if not evidence and undecided:
        return CheckResult(
            check_id="route:confirmation",
            layer=LAYER,
            verdict=Verdict.INSUFFICIENT_INFORMATION,
            reason=f"{len(undecided)} of {checked} call(s) needing confirmation cannot be decided: "
            + "; ".join(e.summary for e in undecided[:3]),
            evidence=tuple(undecided[:20]),
        )
    if not evidence:
        return CheckResult(
            check_id="route:confirmation",
            layer=LAYER,
            verdict=Verdict.PASS,
            reason=f"{checked} call(s) needing confirmation, each after the user affirmed"
            if checked
            else f"no call of {', '.join(sorted(tools))} was made",
        )
    return CheckResult(
        check_id="route:confirmation",
        layer=LAYER,
        verdict=Verdict.FAIL,
        reason=f"{len(evidence)} call(s) made without confirmation: "
        + "; ".join(e.summary for e in evidence[:3]),
        category=FailureCategory.POLICY_VIOLATION,
        evidence=tuple(evidence[:20]),
    )


# --------------------------------------------------------------------------- the layer


class RouteLayer:
    """The route layer: :func:`check_route` on the case's ``expected.route`` in its ``route_match`` mode."""

    info: LayerInfo = describe_layer(
        LAYER, (Capability.TOOL_CALLS,), "the expected route, matched as an assignment"
    )

    def checks(self, case: Case, transcript: Transcript, context: LayerContext) -> list[CheckResult]:
        """The route checks (one ``not_evaluated`` check when the case states no route)."""
        expected = case.expected
        return check_route(
            expected.route if expected else None,
            expected.route_match if expected else "superset",
            transcript,
            calls=context.shared(trial_calls, case, transcript),
        )
