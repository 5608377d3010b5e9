"""Coverage of a golden set: the mix of cases and the tools and sources they exercise.

A set of 300 cases with nothing on the riskiest tool has zero coverage of it; coverage makes that
visible by counting cases per tool and per knowledge source against a floor.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from judgekit.cases import Case

__all__ = ["Coverage", "Gap", "compute_coverage"]


@dataclass(frozen=True)
class Gap:
    """A tool, source or quality dimension with fewer cases than the floor.

    Attributes:
        kind: ``tool``, ``source`` or ``dimension``.
        name: The tool, source or dimension.
        count: Cases exercising it (>= 0).
        floor: The minimum required.
    """

    kind: str
    name: str
    count: int
    floor: int

    def describe(self) -> str:
        """One readable line."""
        return (
            f"{self.kind} {self.name}: {self.count} case{'s' if self.count != 1 else ''} (floor {self.floor})"
        )


@dataclass
class Coverage:
    """What a set covers.

    Attributes:
        total: Number of cases counted.
        by_slice: Cases per slice (or category when no slice); ``(none)`` for neither.
        by_category: Cases per category; ``(none)`` when absent.
        by_severity: Cases per severity; ``(none)`` when absent.
        by_dimension: Cases per quality dimension tested.
        by_tool: Cases per tool exercised (see :meth:`judgekit.cases.Case.covered_tools`); declared
            tools with no case appear with 0.
        by_source: Cases per knowledge source (expected sources and policy names); declared sources
            with no case appear with 0.
        undeclared_tools: Tools cases use that the declared tool list lacks (likely a typo or a list
            out of date); empty when no list was declared.
        undeclared_sources: Likewise for sources.
        undeclared_dimensions: Dimensions cases name that the declared dimension list lacks; empty when
            no list was declared.
        gaps: Declared tools, sources and dimensions below their floor.
    """

    total: int
    by_slice: Counter[str] = field(default_factory=Counter)
    by_category: Counter[str] = field(default_factory=Counter)
    by_severity: Counter[str] = field(default_factory=Counter)
    by_dimension: Counter[str] = field(default_factory=Counter)
    by_tool: Counter[str] = field(default_factory=Counter)
    by_source: Counter[str] = field(default_factory=Counter)
    undeclared_tools: list[str] = field(default_factory=list)
    undeclared_sources: list[str] = field(default_factory=list)
    undeclared_dimensions: list[str] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)


def compute_coverage(
    cases: Iterable[Case],
    *,
    tools: Sequence[str] = (),
    sources: Sequence[str] = (),
    min_per_tool: int = 5,
    min_per_source: int = 5,
    dimensions: Sequence[str] = (),
    min_per_dimension: int = 5,
) -> Coverage:
    """Count a set's mix and its coverage of tools and sources.

    Args:
        cases: The cases to count (candidates are normally left out by the caller).
        tools: Every tool the agent has. Gaps are only named for declared tools; when empty, the
            tools seen in the cases are counted and no tool gap can be named.
        sources: Every knowledge source; as for ``tools``.
        min_per_tool: Fewest cases a declared tool needs (>= 0).
        min_per_source: Fewest cases a declared source needs (>= 0).
        dimensions: Every quality dimension the set should test (``correct``, ``grounded``, ``useful``,
            ``action-accurate``, ``safe``...); as for ``tools``, gaps are named only for declared ones.
        min_per_dimension: Fewest cases a declared dimension needs (>= 0).

    Returns:
        The coverage, with gaps sorted by kind, then count, then name.

    Raises:
        ValueError: When a floor is negative.
    """
    if min_per_tool < 0 or min_per_source < 0 or min_per_dimension < 0:
        raise ValueError("coverage floors must be >= 0")
    case_list = list(cases)
    cov = Coverage(total=len(case_list))
    for case in case_list:
        cov.by_slice[case.slice_name or "(none)"] += 1
        cov.by_category[case.category or "(none)"] += 1
        cov.by_severity[case.severity or "(none)"] += 1
        cov.by_dimension.update(set(case.dimensions))
        cov.by_tool.update(case.covered_tools())
        cov.by_source.update(case.covered_sources())
    for name in tools:
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
    gaps = [
        Gap("tool", t, cov.by_tool[t], min_per_tool)
        for t in dict.fromkeys(tools)
        if cov.by_tool[t] < min_per_tool
    ]
    gaps += [
        Gap("source", s, cov.by_source[s], min_per_source)
        for s in dict.fromkeys(sources)
        if cov.by_source[s] < min_per_source
    ]
    gaps += [
        Gap("dimension", d, cov.by_dimension[d], min_per_dimension)
        for d in dict.fromkeys(dimensions)
        if cov.by_dimension[d] < min_per_dimension
    ]
    kind_order = {"tool": 0, "source": 1, "dimension": 2}
    cov.gaps = sorted(gaps, key=lambda g: (kind_order.get(g.kind, 3), g.count, g.name))
    return cov
