"""Coverage of a golden set: the mix of cases and the tools and sources they expect.

A set of 300 cases with nothing on the riskiest tool has zero coverage of it; coverage makes that
visible by counting, per tool, the cases that **expect** something of it, against a floor. A case
expects a tool when its expected route calls it or a forbidden (or prohibited) rule names it: a case
testing that the tool is *not* misused covers it too. A tool merely listed in a case's ``tools`` (the
tools the agent has in that case) is not tested by the case; it is counted apart, as *listed only*.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import get_args

from pydantic import Field

from judgekit.cases import Case
from judgekit.caseset import CaseSet, LocatedProblem, SetManifest
from judgekit.verdict import FrozenModel

__all__ = [
    "CATEGORIES",
    "FLOOR_KINDS",
    "GAP_KINDS",
    "INVALID_SET_NOTE",
    "NO_TOOLS_NOTE",
    "SEVERITIES",
    "Coverage",
    "CoverageGap",
    "CoverageReport",
    "Gap",
    "compute_coverage",
    "coverage_report",
    "expected_tools",
]


def _literal_values(field_name: str) -> tuple[str, ...]:
    """The text values a ``Literal[...] | None`` field of :class:`Case` allows, in declaration order."""
    annotation = Case.model_fields[field_name].annotation
    return tuple(v for arm in get_args(annotation) for v in get_args(arm) if isinstance(v, str))


CATEGORIES: tuple[str, ...] = _literal_values("category")
"""Every category a case may name; each one is checked against the category floor."""

SEVERITIES: tuple[str, ...] = _literal_values("severity")
"""Every severity a case may name; each one is checked against the severity floor."""

GAP_KINDS: tuple[str, ...] = ("tool", "source", "slice", "category", "severity", "dimension")
"""What a floor can be set on, in the order gaps are reported."""


def _cases(count: int) -> str:
    return f"{count} case{'s' if count != 1 else ''}"


@dataclass(frozen=True)
class Gap:
    """A tool, source, slice, category, severity or quality dimension with fewer cases than its floor.

    Attributes:
        kind: One of :data:`GAP_KINDS`: ``tool``, ``source``, ``slice``, ``category``, ``severity`` or
            ``dimension``.
        name: The tool, source, slice, category, severity or dimension.
        count: Cases covering it (>= 0); for a tool, the cases that expect it.
        floor: The minimum required (>= 1).
        listed: For a tool, the further cases that list it in ``tools`` without expecting it (they do
            not count towards the floor); 0 for every other kind.
    """

    kind: str
    name: str
    count: int
    floor: int
    listed: int = 0

    def describe(self) -> str:
        """One readable line naming the kind, the value, the count and the floor.

        Examples:
            >>> Gap("tool", "InitiateTransfer", 0, 5, listed=3).describe()
            'tool InitiateTransfer: 0 cases expect it (floor 5); listed in 3 cases that do not expect it'
            >>> Gap("severity", "critical", 1, 2).describe()
            'severity critical: 1 case (floor 2)'
        """
        if self.kind != "tool":
            return f"{self.kind} {self.name}: {_cases(self.count)} (floor {self.floor})"
        verb = "expects" if self.count == 1 else "expect"
        line = f"tool {self.name}: {_cases(self.count)} {verb} it (floor {self.floor})"
        if self.listed:
            tail = "does" if self.listed == 1 else "do"
            line += f"; listed in {_cases(self.listed)} that {tail} not expect it"
        return line


@dataclass
class Coverage:
    """What a set covers.

    Attributes:
        total: Number of cases counted.
        by_slice: Cases per slice (or category when no slice); ``(none)`` for neither.
        by_category: Cases per category; ``(none)`` when absent. A category no case names is absent
            (its count reads 0).
        by_severity: Cases per severity; ``(none)`` when absent; as for ``by_category``.
        by_dimension: Cases per quality dimension tested.
        by_tool: Cases that expect each tool (see :func:`expected_tools`); tools only listed, and declared
            tools, appear with 0 when no case expects them.
        listed_only: Per tool, the cases that list it in ``tools`` but do not expect it; a tool absent
            here (or 0) is listed by no such case. These cases do not count as coverage.
        by_source: Cases per knowledge source (expected sources and policy names); declared sources
            with no case appear with 0.
        undeclared_tools: Tools cases expect or list that the declared tool list lacks (likely a typo or
            a list out of date); empty when no list was declared.
        undeclared_sources: Likewise for sources.
        undeclared_dimensions: Dimensions cases name that the declared dimension list lacks; empty when
            no list was declared.
        floors: The floor applied per kind (:data:`GAP_KINDS`); 0 means no floor.
        gaps: Everything below its floor (see :func:`compute_coverage` for what is checked).
    """

    total: int
    by_slice: Counter[str] = field(default_factory=Counter)
    by_category: Counter[str] = field(default_factory=Counter)
    by_severity: Counter[str] = field(default_factory=Counter)
    by_dimension: Counter[str] = field(default_factory=Counter)
    by_tool: Counter[str] = field(default_factory=Counter)
    listed_only: Counter[str] = field(default_factory=Counter)
    by_source: Counter[str] = field(default_factory=Counter)
    undeclared_tools: list[str] = field(default_factory=list)
    undeclared_sources: list[str] = field(default_factory=list)
    undeclared_dimensions: list[str] = field(default_factory=list)
    floors: dict[str, int] = field(default_factory=dict)
    gaps: list[Gap] = field(default_factory=list)

    def untested_tools(self) -> list[str]:
        """Tools some case lists but no case expects, sorted: the agent has them and nothing tests them."""
        return sorted(t for t, n in self.listed_only.items() if n and not self.by_tool[t])


def expected_tools(case: Case) -> set[str]:
    """The tools a case expects something of: its expected route's tools and its rules' tools.

    A forbidden or prohibited rule naming a tool counts: the case tests that the tool is not misused.
    The case's ``tools`` list (what the agent has available) does not count.

    Args:
        case: The case.

    Returns:
        The tool names (empty when the case expects nothing of any tool).
    """
    out: set[str] = set()
    if case.expected and case.expected.route:
        out.update(call.tool for call in case.expected.route)
    out.update(rule.tool for rule in case.rules() if rule.tool)
    return out


def compute_coverage(
    cases: Iterable[Case],
    *,
    tools: Sequence[str] = (),
    sources: Sequence[str] = (),
    min_per_tool: int = 5,
    min_per_source: int = 5,
    dimensions: Sequence[str] = (),
    min_per_dimension: int = 5,
    min_per_slice: int = 0,
    min_per_category: int = 0,
    min_per_severity: int = 0,
) -> Coverage:
    """Count a set's mix and the cases that expect each tool and source, and name what is below a floor.

    What each floor is checked against: declared tools, sources and dimensions (none when the list is
    empty); every slice some case names (a slice no case names is unknown, so it cannot be named); every
    category in :data:`CATEGORIES` and every severity in :data:`SEVERITIES`, named or not. Cases with no
    slice, category or severity (``(none)``) are never checked. A floor of 0 checks nothing.

    Args:
        cases: The cases to count (candidates are normally left out by the caller).
        tools: Every tool the agent has. Gaps are only named for declared tools; when empty, the
            tools seen in the cases are counted and no tool gap can be named.
        sources: Every knowledge source; as for ``tools``.
        min_per_tool: Fewest cases that must expect each declared tool (>= 0).
        min_per_source: Fewest cases per declared source (>= 0).
        dimensions: Every quality dimension the set should test (``correct``, ``grounded``, ``useful``,
            ``action-accurate``, ``safe``...); as for ``tools``, gaps are named only for declared ones.
        min_per_dimension: Fewest cases per declared dimension (>= 0).
        min_per_slice: Fewest cases per slice (>= 0; 0, the default, is no floor).
        min_per_category: Fewest cases per category (>= 0; 0, the default, is no floor).
        min_per_severity: Fewest cases per severity (>= 0; 0, the default, is no floor).

    Returns:
        The coverage, with gaps sorted by kind (:data:`GAP_KINDS` order), then count, then name.

    Raises:
        ValueError: When a floor is negative.
    """
    floors = dict(
        zip(
            GAP_KINDS,
            (
                min_per_tool,
                min_per_source,
                min_per_slice,
                min_per_category,
                min_per_severity,
                min_per_dimension,
            ),
            strict=True,
        )
    )
    if any(floor < 0 for floor in floors.values()):
        raise ValueError("coverage floors must be >= 0")
    case_list = list(cases)
    cov = Coverage(total=len(case_list), floors=floors)
    for case in case_list:
        cov.by_slice[case.slice_name or "(none)"] += 1
        cov.by_category[case.category or "(none)"] += 1
        cov.by_severity[case.severity or "(none)"] += 1
        cov.by_dimension.update(set(case.dimensions))
        expected = expected_tools(case)
        cov.by_tool.update(expected)
        cov.listed_only.update(set(case.tools) - expected)
        cov.by_source.update(case.covered_sources())
    for name in [*tools, *cov.listed_only]:
        cov.by_tool.setdefault(name, 0)
    for name in sources:
        cov.by_source.setdefault(name, 0)
    for name in dimensions:
        cov.by_dimension.setdefault(name, 0)
    if tools:
        cov.undeclared_tools = sorted(set(cov.by_tool) - set(tools))
    if sources:
        cov.undeclared_sources = sorted(set(cov.by_source) - set(sources))
    if dimensions:
        cov.undeclared_dimensions = sorted(set(cov.by_dimension) - set(dimensions))
    checked: dict[str, tuple[Counter[str], Iterable[str]]] = {
        "tool": (cov.by_tool, tools),
        "source": (cov.by_source, sources),
        "slice": (cov.by_slice, [s for s in cov.by_slice if s != "(none)"]),
        "category": (cov.by_category, CATEGORIES),
        "severity": (cov.by_severity, SEVERITIES),
        "dimension": (cov.by_dimension, dimensions),
    }
    gaps = [
        Gap(kind, name, counts[name], floors[kind], cov.listed_only[name] if kind == "tool" else 0)
        for kind, (counts, names) in checked.items()
        for name in dict.fromkeys(names)
        if counts[name] < floors[kind]
    ]
    cov.gaps = sorted(gaps, key=lambda g: (GAP_KINDS.index(g.kind), g.count, g.name))
    return cov


#: The coverage floors in the order the ``coverage`` document lists them.
FLOOR_KINDS = ("tool", "source", "slice", "category", "severity", "dimension")

#: The note of a coverage report of an invalid set (nothing was counted).
INVALID_SET_NOTE = "the set is invalid; fix it first (judgekit cases check)"

#: The note of a coverage report with no declared tool list.
NO_TOOLS_NOTE = "no tool list declared (--tools or the manifest), so no tool gap can be named"


class CoverageGap(FrozenModel):
    """One :class:`Gap` as a row of the ``coverage`` document.

    Attributes:
        what: The gap's kind (one of :data:`GAP_KINDS`).
        name: The tool, source, slice, category, severity or dimension.
        count: Cases covering it (>= 0).
        floor: The minimum required (>= 1).
        listed_only: For a tool, the cases listing it without expecting it; 0 otherwise.
        message: The gap as one readable line (:meth:`Gap.describe`).
    """

    what: str
    name: str
    count: int
    floor: int
    listed_only: int
    message: str


def _ranked(counts: Mapping[str, int]) -> dict[str, int]:
    """Counts in the order the text shows them: most cases first, then by name."""
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


class CoverageReport(FrozenModel):
    """What ``judgekit cases coverage`` prints: a set's mix, its cases per tool and source, and its gaps.

    Every count map is ranked (most cases first, then by name). When the set is invalid nothing is
    counted: ``valid`` is false, ``problems`` lists why and every count field is ``None``.

    Attributes:
        valid: Whether the set loaded without problems.
        problems: The set's problems (empty when valid).
        warnings: The set's warnings.
        total: Reviewed cases counted.
        mix: Cases per ``slice``, ``category`` and ``severity``.
        tools: Cases expecting each tool (declared tools with none at 0).
        listed_only: Cases listing a tool without expecting it (positive counts only).
        sources: Cases per knowledge source.
        dimensions: Cases per quality dimension.
        declared: The declared ``tools``, ``sources`` and ``dimensions`` (options, else the manifest's).
        floors: The floor of each kind (:data:`FLOOR_KINDS`), options first, else the manifest's.
        gaps: Every value below its floor, in :data:`GAP_KINDS` order, then count, then name.
        undeclared: Tools, sources and dimensions the cases use but the declared lists leave out.
        notes: Why something could not be checked.
    """

    valid: bool
    problems: list[LocatedProblem]
    warnings: list[LocatedProblem]
    total: int | None = None
    mix: dict[str, dict[str, int]] | None = None
    tools: dict[str, int] | None = None
    listed_only: dict[str, int] | None = None
    sources: dict[str, int] | None = None
    dimensions: dict[str, int] | None = None
    declared: dict[str, list[str]] | None = None
    floors: dict[str, int] | None = None
    gaps: list[CoverageGap] | None = None
    undeclared: dict[str, list[str]] | None = None
    notes: list[str] = Field(default_factory=list)

    def untested_tools(self) -> list[str]:
        """Tools some case lists but no case expects, sorted (empty for an invalid set)."""
        tools = self.tools or {}
        return sorted(t for t in self.listed_only or {} if not tools.get(t))


def coverage_report(
    case_set: CaseSet,
    *,
    tools: Sequence[str] = (),
    sources: Sequence[str] = (),
    dimensions: Sequence[str] = (),
    floors: Mapping[str, int | None] | None = None,
) -> CoverageReport:
    """The coverage of a loaded set's reviewed cases, with the manifest filling what is not given.

    Args:
        case_set: The loaded set; when it has problems nothing is counted.
        tools: Every tool the agent has; empty takes the manifest's list.
        sources: Every knowledge source; empty takes the manifest's list.
        dimensions: Every quality dimension; empty takes the manifest's list.
        floors: A floor per kind of :data:`FLOOR_KINDS` (each >= 0); a kind missing or ``None`` takes the
            manifest's floor, else the manifest's default.

    Returns:
        The report; its ``gaps`` are empty when every floor is met.
    """
    warnings = [LocatedProblem.of(w) for w in case_set.warnings]
    if case_set.problems:
        problems = [LocatedProblem.of(p) for p in case_set.problems]
        return CoverageReport(valid=False, problems=problems, warnings=warnings, notes=[INVALID_SET_NOTE])
    manifest = case_set.manifest or SetManifest()
    tool_list = list(tools) or list(manifest.tools)
    source_list = list(sources) or list(manifest.sources)
    dimension_list = list(dimensions) or list(manifest.dimensions)
    given = floors or {}
    floor = {
        kind: value if (value := given.get(kind)) is not None else getattr(manifest, f"min_per_{kind}")
        for kind in FLOOR_KINDS
    }
    cov = compute_coverage(
        (c.case for c in case_set.reviewed()),
        tools=tool_list,
        sources=source_list,
        dimensions=dimension_list,
        min_per_tool=floor["tool"],
        min_per_source=floor["source"],
        min_per_slice=floor["slice"],
        min_per_category=floor["category"],
        min_per_severity=floor["severity"],
        min_per_dimension=floor["dimension"],
    )
    return CoverageReport(
        valid=True,
        problems=[],
        warnings=warnings,
        total=cov.total,
        mix={
            "slice": _ranked(cov.by_slice),
            "category": _ranked(cov.by_category),
            "severity": _ranked(cov.by_severity),
        },
        tools=_ranked(cov.by_tool),
        listed_only=_ranked(+cov.listed_only),
        sources=_ranked(cov.by_source),
        dimensions=_ranked(cov.by_dimension),
        declared={"tools": tool_list, "sources": source_list, "dimensions": dimension_list},
        floors=floor,
        gaps=[
            CoverageGap(
                what=g.kind,
                name=g.name,
                count=g.count,
                floor=g.floor,
                listed_only=g.listed,
                message=g.describe(),
            )
            for g in cov.gaps
        ],
        undeclared={
            "tools": cov.undeclared_tools,
            "sources": cov.undeclared_sources,
            "dimensions": cov.undeclared_dimensions,
        },
        notes=[] if tool_list else [NO_TOOLS_NOTE],
    )
