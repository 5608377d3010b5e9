"""Rule conditions: compiling CEL expressions and checking every name they use, when a case loads.

A forbidden rule (:class:`~judgekit.cases.ForbiddenRule`) may carry a ``when`` condition over one tool call
and a ``state_when`` condition over one changed state row. Conditions are `CEL <https://cel.dev>`_
expressions, compiled by the Rust ``cel`` package (``common-expression-language``): not Turing-complete, no
attribute access into Python objects, no imports, no I/O; nothing is ever passed to Python's ``eval``.
Before a condition reaches the CEL parser it must be at most :data:`MAX_CONDITION_CHARS` characters, nest
brackets at most :data:`MAX_NESTING` deep and nest comprehension macros (``all``, ``exists``,
``exists_one``, ``map``, ``filter``) at most :data:`MAX_COMPREHENSION_NESTING` deep: this bounds parse depth
(the parser overflows its stack on very long operator chains) and evaluation time (at most data size
squared).

This module is the compiler only; evaluating compiled rules against a transcript is the grader's job
(:func:`judgekit.graders.rules.check_rules`). It sits below the graders so that the case-set loader
(:func:`judgekit.caseset.load_case_set`) can refuse a broken rule at load time without importing a grader:
a syntax error, a rule over a tool the case or set does not list, a call to an unknown function or a name
that cannot be resolved is a load problem naming the case and the rule (:func:`compile_case_rules`,
:func:`validate_case_rules`). Names a condition may use are listed in :data:`CALL_NAMES` and
:data:`STATE_NAMES` (and in ``docs/graders.md``); any other identifier in a ``when`` condition is an
argument of the call (an error at load time when the tool's argument names are known and it is not one of
them).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import re
import sys
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from judgekit.cases import Case, ForbiddenRule
from judgekit.errors import JudgekitError, Problem
from judgekit.patterns import CompiledPattern, PatternError, compile_pattern

__all__ = [
    "CALL_NAMES",
    "CEL_FUNCTIONS",
    "CEL_MAX_COST",
    "CEL_STRING_UNIT",
    "CEL_TIME_LIMIT_SECONDS",
    "MAX_COMPREHENSION_NESTING",
    "MAX_CONDITION_CHARS",
    "MAX_NESTING",
    "STATE_NAMES",
    "CaseSource",
    "CompiledCondition",
    "CompiledRule",
    "CompiledRules",
    "ConditionError",
    "RuleCompileError",
    "compile_case_rules",
    "compile_condition",
    "rule_locations",
    "validate_case_rules",
]

MAX_CONDITION_CHARS = 2000
"""Longest condition accepted, in characters."""

MAX_NESTING = 32
"""Deepest nesting of ``()``, ``[]`` and ``{}`` accepted in a condition."""

MAX_COMPREHENSION_NESTING = 2
"""Deepest nesting of comprehension macros (``all``, ``exists``, ``exists_one``, ``map``, ``filter``)."""

CEL_MAX_COST = 10_000_000
"""Most estimated steps one evaluation of a condition may take: the size of the data it reads raised to
the power (comprehension nesting + 1), or + 2 when it builds lists with ``map`` or ``filter``. The CEL
package has no cost limit of its own, so the estimate is checked before each evaluation; a call or row
over it makes the rule ``error`` with the reason."""

CEL_STRING_UNIT = 1024
"""Characters of a string that count as one element when the size of a condition's data is estimated."""

CEL_TIME_LIMIT_SECONDS = 2.0
"""Most time the evaluations of one rule may take for one trial; the calls or rows left are not
evaluated and the rule is ``error`` with the reason."""

CALL_NAMES: dict[str, str] = {
    "args": "map: the call's arguments by name (use args['name'] for names that are not identifiers or "
    "that collide with a name in this table; has(args.name) tests presence)",
    "tool": "string: the called tool's name",
    "index": "int: 0-based position of the call among all tool calls of the transcript",
    "position": "int: 1-based position of the call among all tool calls (index + 1)",
    "calls": "int: number of calls of this tool so far, this one included (1 for the first call)",
    "result": "string: the tool's result text ('' when no result message answered the call)",
    "result_data": "any: the result parsed as JSON (null when there is no result or it is not JSON)",
    "answered": "bool: whether a result message answered the call",
    "error": "bool: whether the result reports an error (text starting 'Error' or a JSON object with an "
    "'error' key)",
    "confirmed": "bool: whether the user confirmed this call: the latest user message affirms a proposal "
    "naming the tool's action and its ids or amounts (see judgekit.graders.text.confirmation_before); "
    "when that rule cannot decide, a condition whose truth depends on it makes the rule "
    "insufficient_information",
    "total": "map: per argument name, the sum of its numeric values over this tool's calls so far, this "
    "one included (total.amount)",
    "total_before": "map: the same sums over this tool's earlier calls only (has(total_before.amount) is "
    "false before the first call with an amount)",
    "before": "list of string: tools called before this call, each once, in order of first call "
    "('verify_identity' in before)",
    "after": "list of string: tools called after this call, each once, in order of first call",
    "identity": "map: the case's identity (the test persona: identity.customer_id)",
}
"""Names a ``when`` condition may use, with their meaning. Any other identifier is a call argument."""

STATE_NAMES: dict[str, str] = {
    "table": "string: the changed row's table",
    "key": "string: the changed row's key",
    "op": "string: 'added', 'removed' or 'modified'",
    "row": "any: the row after the change (for a removed row, the row as it was)",
    "old": "any: the row before the change (null for an added row)",
    "changed": "list of string: dotted paths of the fields that changed (every top-level field for an "
    "added or removed row)",
    "identity": "map: the case's identity (the test persona)",
}
"""Names a ``state_when`` condition may use (no others)."""

CEL_FUNCTIONS = frozenset(
    {
        "size",
        "contains",
        "startsWith",
        "endsWith",
        "matches",
        "int",
        "uint",
        "double",
        "string",
        "bytes",
        "bool",
        "timestamp",
        "duration",
        "dyn",
        "type",
        "getFullYear",
        "getMonth",
        "getDate",
        "getDayOfMonth",
        "getDayOfWeek",
        "getDayOfYear",
        "getHours",
        "getMinutes",
        "getSeconds",
        "getMilliseconds",
    }
)
"""Functions a condition may call (CEL's standard library as the ``cel`` package implements it); operators
and the macros ``has``, ``all``, ``exists``, ``exists_one``, ``map`` and ``filter`` are always allowed."""

_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
_FUNCTION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_MACRO_VAR = re.compile(r"\.\s*(all|exists|exists_one|map|filter)\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*,")
_STRING = re.compile(
    r"""[rR]?(?:'''(?:.|\n)*?'''|\"\"\"(?:.|\n)*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")"""
)


class ConditionError(ValueError):
    """A condition that cannot be compiled: what is wrong, in words meant for the case's author."""


class RuleCompileError(JudgekitError):
    """A case's rules failed to compile; ``problems`` names the case and each rule."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


@dataclass(frozen=True, slots=True)
class CompiledCondition:
    """A compiled CEL condition and the names it references.

    Attributes:
        source: The condition as written.
        program: The compiled program (reused for every evaluation).
        names: Free identifiers it references (macro-bound variables excluded).
        arguments: The subset of ``names`` that resolve to call arguments (not reserved names).
        projections: For map-valued names the condition only selects fields of (``row.status``,
            ``total.amount``), those fields; names it uses whole are absent.
    """

    source: str
    program: Any
    names: frozenset[str]
    arguments: frozenset[str]
    projections: Mapping[str, frozenset[str] | None] = field(default_factory=dict)
    comprehension_depth: int = 0
    builds_lists: bool = False

    def cost_problem(self, context: Mapping[str, Any]) -> str | None:
        """Why evaluating over ``context`` would cost too much (see :data:`CEL_MAX_COST`), or ``None``.

        Args:
            context: The values bound for the evaluation.

        Returns:
            ``None`` when the estimated cost is within the limit, else the reason, naming the limit.
        """
        if self.comprehension_depth == 0:
            return None  # no comprehension: time linear in the data, which is already in memory
        power = self.comprehension_depth + (2 if self.builds_lists else 1)
        most = int(CEL_MAX_COST ** (1 / power)) + 1
        size = _data_size(context.values(), most)
        if size < most and size**power <= CEL_MAX_COST:
            return None
        macros = "map/filter" if self.builds_lists else "all/exists"
        return (
            f"the condition's comprehensions ({macros}, nested {self.comprehension_depth} deep) over data of "
            f"{'at least ' if size >= most else ''}{size:,} elements would take about {size:,}^{power} "
            f"steps, more than {CEL_MAX_COST:,} (limit CEL_MAX_COST); not evaluated"
        )

    def bind(self, name: str, value: Any) -> Any:
        """The value to hand to CEL for ``name``: the selected fields only, or the whole value.

        When the condition only selects fields of it (``row.status``), only those are passed: converting
        data into CEL costs time per element, and a projection changes no result (a missing field is
        missing either way).
        """
        fields = self.projections.get(name)
        if fields is None or not isinstance(value, dict):
            return value
        return {k: value[k] for k in fields if k in value}


@dataclass(frozen=True, slots=True)
class CompiledRule:
    """One forbidden rule ready to check.

    Attributes:
        index: The rule's position in :meth:`~judgekit.cases.Case.rules` (its check id is ``rule:<index>``).
        field: Where it is written in the case (``forbidden.0``, ``prohibited.2``).
        rule: The rule.
        when: Its compiled call condition, if any.
        state_when: Its compiled state condition, if any.
        message_pattern: Its compiled message pattern (linear-time, :mod:`judgekit.patterns`), if any.
    """

    index: int
    field: str
    rule: ForbiddenRule
    when: CompiledCondition | None
    state_when: CompiledCondition | None
    message_pattern: CompiledPattern | None

    @property
    def check_id(self) -> str:
        """The check id this rule reports under."""
        return f"rule:{self.index}"

    def describe(self) -> str:
        """A short human description (``issue_refund when amount > 412.18``)."""
        r = self.rule
        parts = []
        if r.tool:
            parts.append(f"{r.tool}" + (f" when {r.when}" if r.when else " (never call it)"))
        elif r.when:
            parts.append(f"any call when {r.when}")
        if r.state_when:
            parts.append(f"state change when {r.state_when}")
        if r.message_pattern:
            parts.append(f"message matching /{r.message_pattern}/")
        text = "; ".join(parts)
        return f"{text} ({r.description})" if r.description else text


@dataclass(frozen=True)
class CompiledRules:
    """Every rule of a case, compiled.

    Attributes:
        rules: The compiled rules, in :meth:`~judgekit.cases.Case.rules` order.
        call_names: Union of the names the call conditions use (decides what per-call context to build).
    """

    rules: tuple[CompiledRule, ...]
    call_names: frozenset[str] = field(default_factory=frozenset)

    @property
    def needs_state(self) -> bool:
        """Whether any rule has a ``state_when`` condition."""
        return any(r.state_when is not None for r in self.rules)


class CaseSource(Protocol):
    """A case with where it was read from (:class:`judgekit.caseset.LoadedCase` is one).

    Declared here, rather than importing the loader's type, so that the compiler stays below the loader:
    the loader calls the compiler, never the other way round.
    """

    @property
    def case(self) -> Case:
        """The validated case."""
        ...

    @property
    def path(self) -> Path:
        """The file the case was read from."""
        ...

    def line_of(self, field_path: str) -> int:
        """1-based line of a field such as ``forbidden.0.when`` in that file."""
        ...


# --------------------------------------------------------------------------- compiling


def _strip_strings(source: str) -> str:
    return _STRING.sub(lambda m: '""', source)


def _data_size(values: Any, most: int) -> int:
    """How many elements the data has, counted up to ``most``.

    List items, map entries and scalars count one each; a string counts one more per
    :data:`CEL_STRING_UNIT` characters.
    """
    total = 0
    stack = list(values)
    while stack and total < most:
        value = stack.pop()
        total += 1
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list | tuple):
            stack.extend(value)
        elif isinstance(value, str | bytes):
            total += len(value) // CEL_STRING_UNIT
    return min(total, most) if stack else total


def _check_shape(source: str) -> tuple[int, bool]:
    """Refuse conditions that are too long or too deeply nested before the CEL parser sees them.

    Returns:
        The deepest nesting of comprehension macros, and whether ``map`` or ``filter`` is used.
    """
    if not source.strip():
        raise ConditionError("the condition is empty")
    if len(source) > MAX_CONDITION_CHARS:
        raise ConditionError(
            f"the condition is {len(source)} characters long; at most {MAX_CONDITION_CHARS} are allowed"
        )
    if "\x00" in source:
        raise ConditionError("the condition contains a NUL character")
    code = _strip_strings(source)
    depth = 0
    macro_depths: list[int] = []
    deepest = 0
    builds = False
    i = 0
    while i < len(code):
        ch = code[i]
        if ch in "([{":
            depth += 1
            if depth > MAX_NESTING:
                raise ConditionError(f"brackets nest more than {MAX_NESTING} deep")
            if ch == "(":
                m = re.search(r"\.\s*([A-Za-z_][A-Za-z0-9_]*)\s*$", code[max(0, i - 40) : i])
                if m is not None and m.group(1) in _MACROS:
                    macro_depths.append(depth)
                    deepest = max(deepest, len(macro_depths))
                    builds = builds or m.group(1) in {"map", "filter"}
                    if len(macro_depths) > MAX_COMPREHENSION_NESTING:
                        raise ConditionError(
                            f"comprehension macros ({', '.join(sorted(_MACROS))}) nest more than "
                            f"{MAX_COMPREHENSION_NESTING} deep"
                        )
        elif ch in ")]}":
            if macro_depths and macro_depths[-1] == depth:
                macro_depths.pop()
            depth = max(0, depth - 1)
        i += 1
    return deepest, builds


@lru_cache(maxsize=1)
def cel_engine() -> Any:
    """The ``cel`` package's compiled engine (``cel.cel``), loaded without the package's command-line REPL.

    ``import cel`` runs the package's ``__init__``, which imports its interactive shell (prompt_toolkit,
    pygments, rich, typer: about 0.2 CPU-seconds, a fifth of a grading run's start) before the Rust
    extension that does the work. judgekit only compiles and evaluates conditions (``compile``, and the
    programs it returns), which the extension alone provides; the package's optional Python function
    library (``cel.stdlib``) is opt-in and never used here. So the extension is loaded as the package
    would load it (same module name, registered in ``sys.modules`` so a later ``import cel`` reuses it),
    and when it cannot be found that way (another layout of the package) ``import cel`` is used instead.

    Returns:
        The module whose ``compile`` compiles a CEL expression.
    """
    if "cel.cel" in sys.modules:
        return sys.modules["cel.cel"]
    package = importlib.util.find_spec("cel")  # finds the package without running its __init__
    locations = package.submodule_search_locations if package is not None else None
    spec = importlib.machinery.PathFinder.find_spec("cel.cel", list(locations or []))
    if (
        spec is None
        or spec.loader is None
        or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader)
    ):
        import cel

        return cel
    engine = importlib.util.module_from_spec(spec)
    sys.modules["cel.cel"] = engine
    spec.loader.exec_module(engine)
    return engine


def _cel_compile(source: str) -> Any:
    try:
        return cel_engine().compile(source)
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as exc:  # the Rust parser reports errors as ValueError, rarely as a panic
        message = str(exc).replace("\n", " ").strip()
        message = re.sub(r"^Failed to parse expression '.*?': ", "", message, flags=re.DOTALL)
        raise ConditionError(f"not a valid CEL expression: {message[:300]}") from None


_PROJECTABLE = frozenset({"args", "total", "total_before", "identity", "row", "old", "result_data"})


def _projections(source: str, free: frozenset[str], bound: set[str]) -> dict[str, frozenset[str] | None]:
    """For each map-valued name used only as ``name.field`` (never whole, nor ``name.f(``): the fields."""
    code = _strip_strings(source)
    out: dict[str, frozenset[str] | None] = {}
    for name in (free & _PROJECTABLE) - bound:
        fields: set[str] = set()
        whole = False
        for m in re.finditer(rf"(?<![\w.]){name}(?!\w)", code):
            sel = re.match(r"\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\()?", code[m.end() :])
            if sel is None or sel.group(2) is not None:
                whole = True
                break
            fields.add(sel.group(1))
        if not whole:
            out[name] = frozenset(fields)
    return out


def compile_condition(
    source: str,
    *,
    names: Collection[str],
    arguments: bool,
    known_arguments: Collection[str] | None = None,
) -> CompiledCondition:
    """Compile a condition, checking every name and function it uses.

    Args:
        source: The CEL expression.
        names: The reserved names it may use (:data:`CALL_NAMES` or :data:`STATE_NAMES`).
        arguments: Whether other identifiers are call arguments (``when``) or errors (``state_when``).
        known_arguments: When the tool's argument names are known, the only arguments allowed.

    Returns:
        The compiled condition.

    Raises:
        ConditionError: For a syntax error, a too long or too deeply nested condition, an unknown
            function or an unknown name.
    """
    depth, builds = _check_shape(source)
    program = _cel_compile(source)
    bound = {m.group(2) for m in _MACRO_VAR.finditer(_strip_strings(source))}
    free = frozenset(program.variables()) - bound
    # Operators are reported as overload names such as ``_+_``, ``!_`` or ``@in``: never identifiers.
    unknown_functions = sorted(
        f for f in program.functions() if _FUNCTION_NAME.fullmatch(f) and f not in CEL_FUNCTIONS
    )
    if unknown_functions:
        raise ConditionError(
            f"unknown function {', '.join(repr(f) for f in unknown_functions)}; conditions may call "
            f"{', '.join(sorted(CEL_FUNCTIONS))} and the macros has, all, exists, exists_one, map, filter"
        )
    reserved = frozenset(names)
    extra = free - reserved
    if extra and not arguments:
        raise ConditionError(
            f"unknown name {', '.join(repr(n) for n in sorted(extra))}; a state condition may use "
            f"{', '.join(sorted(reserved))}"
        )
    if extra and known_arguments is not None:
        bad = sorted(extra - frozenset(known_arguments))
        if bad:
            raise ConditionError(
                f"unknown name {', '.join(repr(n) for n in bad)}: neither a rule name "
                f"({', '.join(sorted(reserved))}) nor an argument of the tool "
                f"({', '.join(sorted(known_arguments)) or 'it takes none'})"
            )
    projections = _projections(source, free, bound)
    return CompiledCondition(source, program, free, extra, projections, depth, builds)


def rule_locations(case: Case) -> list[tuple[str, ForbiddenRule]]:
    """Every machine-checkable rule with the field it is written in, in :meth:`Case.rules` order."""
    out: list[tuple[str, ForbiddenRule]] = [(f"forbidden.{i}", r) for i, r in enumerate(case.forbidden)]
    out.extend((f"prohibited.{i}", p) for i, p in enumerate(case.prohibited) if isinstance(p, ForbiddenRule))
    return out


@lru_cache(maxsize=1024)
def _compile_rules_cached(
    case_id: str,
    located: tuple[tuple[str, ForbiddenRule], ...],
    tools: frozenset[str],
    tool_arguments: tuple[tuple[str, frozenset[str]], ...],
) -> CompiledRules | tuple[tuple[str, str], ...]:
    known_args = dict(tool_arguments)
    compiled: list[CompiledRule] = []
    errors: list[tuple[str, str]] = []
    call_names: set[str] = set()
    for index, (where, rule) in enumerate(located):
        when = state_when = None
        pattern = None
        if rule.tool is not None and tools and rule.tool not in tools:
            errors.append(
                (
                    f"{where}.tool",
                    f"rule is about tool '{rule.tool}', which is not among the known tools "
                    f"({', '.join(sorted(tools))}); check the spelling or add it to tools",
                )
            )
        if rule.when is not None:
            try:
                when = compile_condition(
                    rule.when,
                    names=CALL_NAMES,
                    arguments=True,
                    known_arguments=known_args.get(rule.tool) if rule.tool is not None else None,
                )
                call_names.update(when.names)
            except ConditionError as exc:
                errors.append((f"{where}.when", str(exc)))
        if rule.state_when is not None:
            try:
                state_when = compile_condition(rule.state_when, names=STATE_NAMES, arguments=False)
            except ConditionError as exc:
                errors.append((f"{where}.state_when", str(exc)))
        if rule.message_pattern is not None:
            try:
                pattern = compile_pattern(rule.message_pattern)
            except PatternError as exc:
                errors.append((f"{where}.message_pattern", str(exc)))
        compiled.append(CompiledRule(index, where, rule, when, state_when, pattern))
    if errors:
        return tuple(errors)
    return CompiledRules(tuple(compiled), frozenset(call_names))


def compile_case_rules(
    case: Case,
    *,
    tools: Collection[str] = (),
    tool_arguments: Mapping[str, Collection[str]] | None = None,
    source: CaseSource | None = None,
) -> CompiledRules:
    """Compile every rule of a case (cached: compiling the same rules again costs a dictionary lookup).

    Args:
        case: The case.
        tools: Tools known beyond ``case.tools`` (the set manifest's tools). A rule over a tool outside
            ``case.tools`` and ``tools`` is an error, unless both are empty (nothing to check against).
        tool_arguments: Argument names per tool, when the tools' schemas are known; a ``when`` condition
            naming anything else is then an error.
        source: Where the case was read from, so problems carry file and line.

    Returns:
        The compiled rules.

    Raises:
        RuleCompileError: Naming the case and each rule that does not compile.
    """
    known_tools = frozenset(case.tools) | frozenset(tools)
    args_key = tuple(sorted((t, frozenset(a)) for t, a in (tool_arguments or {}).items()))
    result = _compile_rules_cached(case.id, tuple(rule_locations(case)), known_tools, args_key)
    if isinstance(result, CompiledRules):
        return result
    path = source.path if source is not None else None
    problems = [
        Problem(
            path,
            source.line_of(where) if source is not None else None,
            where,
            f"case '{case.id}': {message}",
        )
        for where, message in result
    ]
    raise RuleCompileError(problems)


def validate_case_rules(
    cases: Sequence[CaseSource],
    *,
    tools: Collection[str] = (),
    tool_arguments: Mapping[str, Collection[str]] | None = None,
) -> list[Problem]:
    """Compile the rules of every loaded case and return the problems (empty when all compile).

    Call this right after :func:`~judgekit.caseset.load_case_set` (which does, unless told not to), so that
    a broken rule is a load error.
    """
    problems: list[Problem] = []
    for loaded in cases:
        try:
            compile_case_rules(loaded.case, tools=tools, tool_arguments=tool_arguments, source=loaded)
        except RuleCompileError as exc:
            problems.extend(exc.problems)
    return problems
