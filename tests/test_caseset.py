"""Tests for judgekit.caseset: the golden-set loader takes any path type and imports no grader.

The set-level rules (unique ids, candidates, referenced files, rule compilation) are tested in
tests/test_cases.py, where they were written before the loader left judgekit.cases.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from judgekit.caseset import CaseSet, LoadedCase, load_case_set
from judgekit.errors import JudgekitError
from judgekit.expressions import RuleCompileError, compile_case_rules

HERE = Path(__file__).resolve().parent
SEEDS = HERE / "fixtures" / "seed_shapes"
EXAMPLE = HERE.parent / "examples" / "airdesk"


def _ids(case_set: CaseSet) -> list[str]:
    return sorted(c.case.id for c in case_set.cases)


@pytest.mark.parametrize(
    "as_given",
    [
        pytest.param(lambda p: p, id="path"),
        pytest.param(str, id="str"),
        pytest.param(lambda p: [str(p)], id="list_of_str"),
        pytest.param(lambda p: (p,), id="tuple_of_path"),
    ],
)
def test_a_set_loads_from_any_path_type(as_given: object) -> None:
    expected = _ids(load_case_set(SEEDS))
    assert expected
    case_set = load_case_set(as_given(SEEDS))  # type: ignore[operator]
    assert case_set.problems == []
    assert _ids(case_set) == expected
    assert case_set.root == SEEDS


def test_a_str_file_path_loads_one_file() -> None:
    case_set = load_case_set(str(SEEDS / "pol-0117.json"))
    assert [type(c) for c in case_set.cases] == [LoadedCase]
    assert case_set.files == [SEEDS / "pol-0117.json"]


def test_a_str_is_one_path_not_a_sequence_of_characters(tmp_path: Path) -> None:
    with pytest.raises(JudgekitError, match="no such file or folder") as info:
        load_case_set(str(tmp_path / "absent"))
    assert str(tmp_path / "absent") in info.value.message


def test_mixed_path_types_load_together() -> None:
    files = [str(SEEDS / "pol-0117.json"), SEEDS / "GS-REG-0311.yaml"]
    assert _ids(load_case_set(files)) == sorted(
        c.case.id for f in files for c in load_case_set(Path(f)).cases
    )


def test_loading_a_set_imports_no_grader() -> None:
    code = (
        "import sys\n"
        "from judgekit.caseset import load_case_set\n"
        f"case_set = load_case_set({str(EXAMPLE)!r})\n"
        "assert case_set.cases and not case_set.problems, case_set.problems\n"
        "print(sorted(m for m in sys.modules if m.startswith(('judgekit.graders', 'judgekit.judges'))))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_the_compiler_locates_problems_through_any_case_source(tmp_path: Path) -> None:
    path = tmp_path / "case.yaml"
    path.write_text(
        "id: C-1\ninput: Refund me\nforbidden:\n  - tool: issue_refund\n    when: 'amount >'\n",
        encoding="utf-8",
    )
    case_set = load_case_set(tmp_path, compile_rules=False)
    assert case_set.problems == []
    (loaded,) = case_set.cases
    with pytest.raises(RuleCompileError) as info:
        compile_case_rules(loaded.case, source=loaded)
    (problem,) = info.value.problems
    assert (problem.file, problem.line, problem.field) == (path, 5, "forbidden.0.when")
