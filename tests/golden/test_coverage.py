from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgekit.cases import Case
from judgekit.caseset import load_case_set
from judgekit.cli import main
from judgekit.golden.coverage import INVALID_SET_NOTE, Gap, compute_coverage, coverage_report

from .conftest import write


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
    assert cov.gaps[0].describe() == "tool B: 0 cases expect it (floor 1)"


def test_no_declared_lists_means_no_gaps() -> None:
    cov = compute_coverage([_case(tools=["A"])], min_per_tool=10, min_per_source=10)
    assert cov.gaps == []
    assert cov.by_tool == {"A": 0}
    assert cov.listed_only == {"A": 1}


def test_source_gap_uses_policy_name_without_revision() -> None:
    cov = compute_coverage(
        [_case(policy_refs=["BIL-7 rev 2025-09"])], sources=["BIL-7", "ISA-Terms"], min_per_source=1
    )
    assert cov.by_source["BIL-7"] == 1
    assert [g.name for g in cov.gaps] == ["ISA-Terms"]


def test_negative_floor_refused() -> None:
    with pytest.raises(ValueError, match="floors must be >= 0"):
        compute_coverage([], min_per_tool=-1)


def test_a_tool_only_listed_is_not_covered(small_set: Path) -> None:
    # GS-3 lists InitiateTransfer among its tools but nothing expects it: no route, no rule.
    case_set = load_case_set(small_set)
    cov = compute_coverage([c.case for c in case_set.reviewed()], tools=["InitiateTransfer"], min_per_tool=1)
    assert cov.by_tool["InitiateTransfer"] == 0
    assert cov.listed_only["InitiateTransfer"] == 1
    assert cov.gaps == [Gap("tool", "InitiateTransfer", 0, 1, listed=1)]


def test_a_forbidden_rule_covers_its_tool_and_a_route_covers_its_tools() -> None:
    # A case testing that FreezeCard is not misused covers it; the merely listed LookupBalance does not.
    cases = [
        _case(
            tools=["FreezeCard", "LookupBalance"], prohibited=[{"tool": "FreezeCard", "when": "calls > 1"}]
        ),
        _case(forbidden=[{"tool": "InitiateTransfer"}]),
        _case(expected={"route": [{"tool": "LookupBalance"}, {"tool": "LookupBalance"}]}),
    ]
    cov = compute_coverage(cases, tools=["FreezeCard", "LookupBalance", "InitiateTransfer"], min_per_tool=1)
    assert cov.by_tool == {"FreezeCard": 1, "InitiateTransfer": 1, "LookupBalance": 1}
    assert +cov.listed_only == {"LookupBalance": 1}
    assert cov.untested_tools() == []
    assert cov.gaps == []


def test_gap_describes_a_listed_only_tool_plainly() -> None:
    cases = [_case(tools=["InitiateTransfer"]) for _ in range(3)]
    cov = compute_coverage(cases, tools=["InitiateTransfer"], min_per_tool=5)
    assert cov.untested_tools() == ["InitiateTransfer"]
    [gap] = cov.gaps
    assert gap.describe() == (
        "tool InitiateTransfer: 0 cases expect it (floor 5); listed in 3 cases that do not expect it"
    )
    assert Gap("tool", "T", 1, 2, listed=1).describe() == (
        "tool T: 1 case expects it (floor 2); listed in 1 case that does not expect it"
    )


def test_slice_category_and_severity_floors() -> None:
    cases = [
        _case(slice="policy_edge", category="normal", severity="critical"),
        _case(slice="policy_edge", category="normal", severity="low"),
        _case(slice="high_volume"),
    ]
    cov = compute_coverage(
        cases, min_per_tool=0, min_per_source=0, min_per_slice=2, min_per_category=1, min_per_severity=1
    )
    assert cov.gaps == [
        Gap("slice", "high_volume", 1, 2),
        Gap("category", "adversarial", 0, 1),
        Gap("category", "edge", 0, 1),
        Gap("category", "regression", 0, 1),
        Gap("severity", "high", 0, 1),
        Gap("severity", "medium", 0, 1),
    ]
    assert cov.gaps[0].describe() == "slice high_volume: 1 case (floor 2)"
    assert cov.gaps[-1].describe() == "severity medium: 0 cases (floor 1)"
    assert cov.floors["slice"] == 2


def test_slice_category_and_severity_have_no_floor_by_default() -> None:
    cov = compute_coverage([_case(slice="policy_edge")], min_per_tool=0, min_per_source=0)
    assert cov.gaps == []
    assert (cov.floors["slice"], cov.floors["category"], cov.floors["severity"]) == (0, 0, 0)


def test_negative_slice_floor_refused() -> None:
    with pytest.raises(ValueError, match="floors must be >= 0"):
        compute_coverage([], min_per_slice=-1)


def test_coverage_command_shows_listed_only_and_exits_1(
    small_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["cases", "coverage", str(small_set)])
    out, _err = capsys.readouterr()
    assert code == 1
    assert "cases per tool (expecting it): FreezeCard 1, LookupBalance 1, InitiateTransfer 0" in out
    assert "listed only (not counted): InitiateTransfer 1" in out
    assert (
        "COVERAGE GAP tool InitiateTransfer: 0 cases expect it (floor 1); listed in 1 case that does not "
        "expect it"
    ) in out
    assert "no coverage gaps" not in out


def test_coverage_command_warns_of_an_untested_tool_without_a_tool_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "a.yaml", "id: A\ninput: send money\ntools: [InitiateTransfer]\n")
    code = main(["cases", "coverage", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0
    assert "warning: tool InitiateTransfer: 0 cases expect it (listed in 1)" in err
    assert "no coverage gaps" in out


def test_coverage_command_takes_mix_floors_from_the_manifest(
    small_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = small_set / "judgekit-set.yaml"
    manifest.write_text(
        manifest.read_text(encoding="utf-8") + "min_per_slice: 2\nmin_per_severity: 1\n", encoding="utf-8"
    )
    write(
        small_set / "cases" / "d.yaml", "id: GS-4\ninput: go\nexpected: {route: [{tool: InitiateTransfer}]}\n"
    )
    code = main(["cases", "coverage", str(small_set)])
    out, _err = capsys.readouterr()
    assert code == 1
    assert "COVERAGE GAP slice adversarial: 1 case (floor 2)" in out
    assert "COVERAGE GAP severity high: 0 cases (floor 1)" in out
    assert "category" not in out.split("COVERAGE GAP", 1)[1]


def test_coverage_flags_override_the_manifest_floors(
    small_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        small_set / "cases" / "d.yaml", "id: GS-4\ninput: go\nexpected: {route: [{tool: InitiateTransfer}]}\n"
    )
    code = main(["cases", "coverage", str(small_set), "--min-per-category", "1", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    assert doc["floors"]["category"] == 1
    assert doc["listed_only"] == {"InitiateTransfer": 1}
    assert doc["gaps"] == [
        {
            "what": "category",
            "name": name,
            "count": 0,
            "floor": 1,
            "listed_only": 0,
            "message": f"category {name}: 0 cases (floor 1)",
        }
        for name in ("edge", "regression")
    ]


def test_coverage_json_names_a_listed_only_tool(small_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["cases", "coverage", str(small_set), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    assert doc["tools"]["InitiateTransfer"] == 0
    assert doc["gaps"] == [
        {
            "what": "tool",
            "name": "InitiateTransfer",
            "count": 0,
            "floor": 1,
            "listed_only": 1,
            "message": (
                "tool InitiateTransfer: 0 cases expect it (floor 1); listed in 1 case that does not expect it"
            ),
        }
    ]


def test_negative_manifest_floor_is_refused_with_its_line(
    small_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = small_set / "judgekit-set.yaml"
    manifest.write_text(manifest.read_text(encoding="utf-8") + "min_per_severity: -1\n", encoding="utf-8")
    assert main(["cases", "coverage", str(small_set)]) == 1
    err = capsys.readouterr().err
    assert f"{manifest}:7: min_per_severity: Input should be greater than or equal to 0 (got -1)" in err


def test_coverage_report_fills_from_the_manifest_and_ranks_each_count(small_set: Path) -> None:
    report = coverage_report(load_case_set(small_set), floors={"tool": 2, "severity": None})
    assert report.valid
    assert report.declared == {
        "tools": ["LookupBalance", "FreezeCard", "InitiateTransfer"],
        "sources": ["Fees-2026"],
        "dimensions": [],
    }
    assert report.floors == {"tool": 2, "source": 1, "slice": 0, "category": 0, "severity": 0, "dimension": 5}
    assert report.tools is not None
    tools = report.tools or {}
    assert list(tools) == sorted(tools, key=lambda t: (-tools[t], t))
    assert report.untested_tools() == ["InitiateTransfer"]
    gaps = [(g.what, g.name, g.count, g.floor) for g in report.gaps or []]
    assert ("tool", "InitiateTransfer", 0, 2) in gaps
    assert report.notes == []


def test_coverage_report_of_an_invalid_set_counts_nothing(small_set: Path) -> None:
    write(small_set / "cases" / "bad.yaml", "id: GS-9\nunknown_field: 1\n")
    report = coverage_report(load_case_set(small_set), tools=["A"])
    assert not report.valid
    assert [p.file for p in report.problems] == [str(small_set / "cases" / "bad.yaml")] * len(report.problems)
    assert (report.total, report.tools, report.gaps, report.floors) == (None, None, None, None)
    assert report.notes == [INVALID_SET_NOTE]
    assert report.untested_tools() == []
