from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.cases import Case
from judgekit.caseset import load_case_set
from judgekit.golden.coverage import Gap, compute_coverage


def _case(**fields: object) -> Case:
    return Case.model_validate({"id": "x", "input": "q", **fields})


def test_counts_mix_tools_and_sources(small_set: Path) -> None:
    case_set = load_case_set(small_set)
    cov = compute_coverage([c.case for c in case_set.reviewed()], tools=["LookupBalance", "FreezeCard"])
    assert cov.total == 3
    assert cov.by_category == {"normal": 1, "adversarial": 1, "(none)": 1}
    assert cov.by_slice["policy_edge"] == 1
    assert cov.by_tool["LookupBalance"] == 1
    assert cov.by_tool["FreezeCard"] == 1
    assert cov.by_source == {"Fees-2026": 2}
    assert cov.undeclared_tools == ["InitiateTransfer"]


def test_gap_named_for_declared_tool_without_cases() -> None:
    cov = compute_coverage([_case(expected={"route": [{"tool": "A"}]})], tools=["A", "B"], min_per_tool=1)
    assert cov.gaps == [Gap("tool", "B", 0, 1)]
    assert cov.gaps[0].describe() == "tool B: 0 cases (floor 1)"


def test_no_declared_lists_means_no_gaps() -> None:
    cov = compute_coverage([_case(tools=["A"])], min_per_tool=10, min_per_source=10)
    assert cov.gaps == []
    assert cov.by_tool == {"A": 1}


def test_source_gap_uses_policy_name_without_revision() -> None:
    cov = compute_coverage(
        [_case(policy_refs=["BIL-7 rev 2025-09"])], sources=["BIL-7", "ISA-Terms"], min_per_source=1
    )
    assert cov.by_source["BIL-7"] == 1
    assert [g.name for g in cov.gaps] == ["ISA-Terms"]


def test_negative_floor_refused() -> None:
    with pytest.raises(ValueError, match="floors must be >= 0"):
        compute_coverage([], min_per_tool=-1)
