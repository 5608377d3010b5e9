"""Coverage per quality dimension: declared dimensions, floors, gaps and undeclared names."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.cases import Case
from judgekit.cli import main
from judgekit.golden.coverage import Gap, compute_coverage

from .conftest import write


def _case(case_id: str, *dims: str) -> Case:
    return Case.model_validate({"id": case_id, "input": "q", "dimensions": list(dims)})


def test_dimension_gaps_name_each_declared_dimension_below_the_floor() -> None:
    cases = [_case("a", "correct", "grounded"), _case("b", "correct"), _case("c", "safe", "correct")]
    cov = compute_coverage(cases, dimensions=["correct", "grounded", "useful", "safe"], min_per_dimension=2)
    assert cov.by_dimension == {"correct": 3, "grounded": 1, "safe": 1, "useful": 0}
    assert cov.gaps == [
        Gap("dimension", "useful", 0, 2),
        Gap("dimension", "grounded", 1, 2),
        Gap("dimension", "safe", 1, 2),
    ]
    assert cov.gaps[0].describe() == "dimension useful: 0 cases (floor 2)"


def test_undeclared_dimension_is_listed_and_no_list_means_no_gap() -> None:
    cases = [_case("a", "corect")]
    cov = compute_coverage(cases, dimensions=["correct"], min_per_dimension=1)
    assert cov.undeclared_dimensions == ["corect"]
    assert [g.name for g in cov.gaps] == ["correct"]
    assert compute_coverage(cases, min_per_dimension=9).gaps == []


def test_dimension_gaps_sort_after_tools_and_sources() -> None:
    cov = compute_coverage(
        [_case("a")],
        tools=["T"],
        sources=["S"],
        dimensions=["safe"],
        min_per_tool=1,
        min_per_source=1,
        min_per_dimension=1,
    )
    assert [g.kind for g in cov.gaps] == ["tool", "source", "dimension"]


def test_negative_dimension_floor_refused() -> None:
    with pytest.raises(ValueError, match="floors must be >= 0"):
        compute_coverage([], min_per_dimension=-1)


def test_coverage_command_uses_the_manifest_dimensions(
    small_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = small_set / "judgekit-set.yaml"
    manifest.write_text(
        manifest.read_text(encoding="utf-8") + "dimensions: [correct, safe]\nmin_per_dimension: 1\n",
        encoding="utf-8",
    )
    code = main(["cases", "coverage", str(small_set)])
    out, _err = capsys.readouterr()
    assert code == 1
    assert "dimension: correct 1, safe 0" in out
    assert "COVERAGE GAP dimension safe: 0 cases (floor 1)" in out
    write(
        small_set / "cases" / "d.yaml",
        "id: GS-9\ninput: hi\ndimensions: [safe]\nexpected: {route: [{tool: InitiateTransfer}]}\n",
    )
    assert main(["cases", "coverage", str(small_set)]) == 0
    assert "no coverage gaps" in capsys.readouterr().out
