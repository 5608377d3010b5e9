from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from judgekit.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_validate_accepts_a_valid_set(small_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "cases", "check", str(small_set))
    assert code == 0, err
    assert out.strip() == "3 cases valid (+1 candidates)"


def test_validate_reports_each_problem_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "one.yaml").write_text("id: A\ninput: hi\nacceptence: typo\n", encoding="utf-8")
    (bad / "two.yaml").write_text("id: A\ninput: hi\nversion: -2\n", encoding="utf-8")
    (bad / "three.json").write_text('{"id": "B", "input": "x",}\n', encoding="utf-8")
    (bad / "four.yaml").write_text("id: C\ninput: hi\nacceptance: 'REVIEW: later'\n", encoding="utf-8")
    code, _out, err = run(capsys, "cases", "check", str(bad))
    assert code == 1
    lines = err.strip().splitlines()
    assert f"{bad}/one.yaml:3: acceptence: unknown field 'acceptence'; did you mean 'acceptance'?" in lines
    assert f"{bad}/two.yaml:3: version: must be a positive integer (got -2); versions start at 1" in lines
    assert any(line.startswith(f"{bad}/three.json:1: malformed JSON:") for line in lines)
    assert any(
        line.startswith(f"{bad}/four.yaml:3: acceptance: acceptance still starts with 'REVIEW:'")
        for line in lines
    )
    assert lines[-1].startswith("4 problems in 4 files")
    assert "Traceback" not in err


def test_a_case_with_a_missing_fixture_is_not_counted_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # issue 35: a missing fixture read "1 problem in 1 file; 6 valid case(s) in 6 file(s)"
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "db.json").write_text("{}", encoding="utf-8")
    (tmp_path / "a.yaml").write_text("id: A\ninput: a\ninitial_state: fixtures/db.json\n", encoding="utf-8")
    (tmp_path / "b.yaml").write_text("id: B\ninput: b\ninitial_state: fixtures/gone.json\n", encoding="utf-8")
    (tmp_path / "many.yaml").write_text(
        "- id: C\n  input: c\n"
        "- id: D\n  input: d\n  initial_state: fixtures/gone.json\n"
        "- id: E\n  input: e\n",
        encoding="utf-8",
    )
    code, _out, err = run(capsys, "cases", "check", str(tmp_path))
    assert code == 1
    lines = err.strip().splitlines()
    assert lines[0] == (
        f"{tmp_path}/b.yaml:3: initial_state: file 'fixtures/gone.json' not found: nothing at "
        f"{tmp_path / 'fixtures' / 'gone.json'} (a case's paths are relative to the set's root, {tmp_path}); "
        "put the file there, or correct initial_state to name it"
    )
    assert lines[-1] == "2 problems in 2 files; 3 valid case(s) in 3 file(s); not valid: B, D"
    code, doc, _ = run_json(capsys, "cases", "check", str(tmp_path))
    assert (doc["cases"], doc["cases_with_problems"], doc["valid_cases"]) == (5, ["B", "D"], 3)


def test_validate_duplicate_ids_across_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.yaml").write_text("id: SAME\ninput: a\n", encoding="utf-8")
    (tmp_path / "b.yaml").write_text("id: SAME\ninput: b\n", encoding="utf-8")
    code, _out, err = run(capsys, "cases", "check", str(tmp_path))
    assert code == 1
    assert (
        f"{tmp_path}/b.yaml:1: id: duplicate id 'SAME' (also at {tmp_path}/a.yaml:1); ids must be unique"
        in err
    )


def test_validate_empty_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "cases", "check", str(tmp_path))
    assert code == 2
    assert f"error: {tmp_path}: no case files found" in err


def test_validate_missing_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "cases", "check", str(tmp_path / "nope"))
    assert code == 2
    assert f"path '{tmp_path / 'nope'}' does not exist" in err


def test_coverage_passes_with_manifest_floors(small_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GS-3 only lists InitiateTransfer; a fourth case expecting it meets the manifest's floor of 1.
    (small_set / "cases" / "d.yaml").write_text(
        "id: GS-4\ninput: send it\nexpected: {route: [{tool: InitiateTransfer}]}\n", encoding="utf-8"
    )
    code, out, _err = run(capsys, "cases", "coverage", str(small_set))
    assert code == 0
    assert "4 cases" in out
    assert "cases per tool (expecting it): FreezeCard 1, InitiateTransfer 1, LookupBalance 1" in out
    assert out.strip().endswith("no coverage gaps")


def test_coverage_names_gaps_and_exits_1(small_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(
        capsys,
        "cases",
        "coverage",
        str(small_set),
        "--tools",
        "LookupBalance,SubmitDispute",
        "--min-per-tool",
        "1",
    )
    assert code == 1
    assert "COVERAGE GAP tool SubmitDispute: 0 cases expect it (floor 1)" in out


def test_export_command_lists_left_out(
    small_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "exports"
    code, out, _err = run(
        capsys, "export", "cases", str(small_set), "--format", "copilot-studio", "--out", str(out_dir)
    )
    assert code == 0
    assert f"wrote {out_dir}/cards-1.csv (3 rows)" in out
    assert "left out 1 multi-turn case(s): GS-2" in out
    assert "left out 1 case(s) with no reference answer" in out


def test_export_refuses_owners_sharing_a_file_name_and_writes_nothing(
    small_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = (small_set / "cases" / "a.yaml").read_text(encoding="utf-8")
    (small_set / "cases" / "c.yaml").write_text(
        case.replace("GS-1", "GS-9").replace("owner: cards", "owner: Cards"), encoding="utf-8"
    )
    out_dir = tmp_path / "exports"
    code, out, err = run(
        capsys, "export", "cases", str(small_set), "--format", "copilot-studio", "--out", str(out_dir)
    )
    assert code == 2
    assert out == ""
    assert (
        err.strip()
        .splitlines()[-1]
        .endswith(
            "owners 'Cards' (case GS-9) and 'cards' (case GS-1) would be exported as Cards-1.csv and "
            "cards-1.csv, which differ only in letter case (file names keep only letters, digits, '.', '_' "
            "and '-', and letter case does not tell files apart); give one of them a different owner in its "
            "case files. Nothing was written"
        )
    )
    assert "Traceback" not in err
    assert not out_dir.exists()


def test_export_removes_the_earlier_exports_files(
    small_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "exports"
    args = ["export", "cases", str(small_set), "--format", "copilot-studio", "--out", str(out_dir)]
    assert run(capsys, *args)[0] == 0
    case_file = small_set / "cases" / "a.yaml"
    case_file.write_text(
        case_file.read_text(encoding="utf-8").replace("owner: cards", "owner: payments"), encoding="utf-8"
    )
    code, out, _err = run(capsys, *args)
    assert code == 0
    assert f"wrote {out_dir}/payments-1.csv (3 rows)" in out
    assert f"removed {out_dir}/cards-1.csv (written by the earlier export, no longer exported)" in out
    assert sorted(p.name for p in out_dir.iterdir()) == ["judgekit-export.json", "payments-1.csv"]


def test_export_unknown_format(small_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(
        capsys, "export", "cases", str(small_set), "--format", "excel", "--out", str(tmp_path)
    )
    assert code == 2
    assert "unknown export format" in err


def test_export_refuses_an_invalid_set_as_an_input_error(
    small_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (small_set / "broken.yaml").write_text("id: x\nunknown_field: 1\n", encoding="utf-8")
    out_dir = tmp_path / "exp"
    code, out, err = run(
        capsys, "export", "cases", str(small_set), "--format", "copilot-studio", "--out", str(out_dir)
    )
    assert code == 2
    assert out == ""
    assert "unknown_field" in err
    assert "the set is invalid; fix it first (judgekit cases check)" in err
    assert not out_dir.exists()


def test_promote_refuses_review_acceptance(small_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "candidates", "promote", "GS-CAND-1", "--set", str(small_set))
    assert code == 2
    assert "acceptance: still starts with 'REVIEW:'" in err
    assert (small_set / "candidates" / "cand.yaml").exists()


def test_promote_moves_reviewed_candidate(small_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cand = small_set / "candidates" / "cand.yaml"
    cand.write_text(cand.read_text(encoding="utf-8").replace("REVIEW: confirm", "Confirms"), encoding="utf-8")
    code, out, err = run(capsys, "candidates", "promote", "GS-CAND-1", "--set", str(small_set))
    assert code == 0, err
    assert "promoted GS-CAND-1" in out
    assert not cand.exists()
    assert (small_set / "cand.yaml").exists()
    code, out, _ = run(capsys, "cases", "check", str(small_set))
    assert out.strip() == "4 cases valid"


def test_promote_unknown_and_existing_ids(small_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "candidates", "promote", "NOPE", "GS-1", "--set", str(small_set))
    assert code == 2
    assert "NOPE: not a candidate (no case has this id)" in err
    assert "GS-1: not a candidate (it is already in the set)" in err


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo_set(small_set: Path) -> Path:
    repo = small_set.parent
    _git(repo, "init", "-q")
    _git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "add", ".")
    _git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "base")
    return small_set


def test_golden_diff_flags_changed_acceptance_without_bump(
    repo_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = repo_set / "cases" / "a.yaml"
    case.write_text(
        case.read_text(encoding="utf-8").replace("States the balance.", "States it."), encoding="utf-8"
    )
    code, out, _err = run(capsys, "cases", "diff", "HEAD", "--set", str(repo_set))
    assert code == 1
    assert (
        f"{case}: GS-1: acceptance changed since HEAD but version stayed 1 (was 1); bump the version" in out
    )


def test_golden_diff_accepts_bumped_version_and_unchanged(
    repo_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = repo_set / "cases" / "a.yaml"
    text = case.read_text(encoding="utf-8").replace("States the balance.", "States it.")
    case.write_text(text.replace("version: 1", "version: 2"), encoding="utf-8")
    # A wording change outside the contract (a paraphrase) needs no bump.
    other = repo_set / "cases" / "b.yaml"
    other.write_text(
        other.read_text(encoding="utf-8").replace("Freeze my card", "Please freeze my card"), encoding="utf-8"
    )
    code, out, _err = run(capsys, "cases", "diff", "HEAD", "--set", str(repo_set))
    assert code == 0
    assert "no unversioned contract changes since HEAD" in out


def test_golden_diff_flags_forbidden_rule_change(repo_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = repo_set / "cases" / "b.yaml"
    case.write_text(case.read_text(encoding="utf-8").replace("calls > 1", "calls > 2"), encoding="utf-8")
    code, out, _err = run(capsys, "cases", "diff", "HEAD", "--set", str(repo_set))
    assert code == 1
    assert "GS-2: prohibited changed" in out


def test_golden_diff_unknown_revision(repo_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "cases", "diff", "no-such-rev", "--set", str(repo_set))
    assert code == 2
    assert err.startswith("error: git rev-parse")


def test_validate_compiles_forbidden_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "r.yaml").write_text(
        "id: R1\ninput: hi\ntools: [issue_refund]\nforbidden:\n"
        '  - {tool: issue_refund, when: "amount >"}\n'
        "  - {tool: issue_refnd}\n",
        encoding="utf-8",
    )
    code, _out, err = run(capsys, "cases", "check", str(tmp_path))
    assert code == 1
    assert f"{tmp_path}/r.yaml:5: forbidden.0.when: case 'R1': not a valid CEL expression" in err
    assert (
        f"{tmp_path}/r.yaml:6: forbidden.1.tool: case 'R1': rule is about tool 'issue_refnd', which is not "
        "among the known tools (issue_refund)"
    ) in err


# --------------------------------------------------------------------------- --format json

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "airdesk"


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    """Run a command with ``--format json``; standard output must be exactly one JSON document."""
    code, out, err = run(capsys, *args, "--format", "json")
    return code, json.loads(out), err


def test_validate_json_on_the_bundled_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, text, _ = run(capsys, "cases", "check", str(EXAMPLE))
    assert code == 0
    code, doc, err = run_json(capsys, "cases", "check", str(EXAMPLE))
    assert code == 0, err
    assert (doc["schema_version"], doc["kind"]) == (1, "validation")
    assert doc["valid"] is True
    assert text.strip() == f"{doc['cases']} cases valid"  # the same count the text shows
    assert doc["candidates"] == 0
    assert doc["files"] == doc["cases"]  # one case per file in the example
    assert doc["problems"] == []
    assert doc["warnings"] == []


def test_validate_json_counts_cases_candidates_and_warnings(
    small_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (small_set / "candidates" / "e.yaml").write_text(
        "id: GS-CAND-2\ninput: 'call +44 7911 123456'\nacceptance: 'REVIEW: x'\n", encoding="utf-8"
    )
    code, doc, err = run_json(capsys, "cases", "check", str(small_set))
    assert code == 0
    assert err == ""  # the warning is in the document, not on the screen
    assert (doc["valid"], doc["cases"], doc["candidates"], doc["files"]) == (True, 3, 2, 5)
    assert doc["problems"] == []
    [warning] = doc["warnings"]
    assert warning["file"] == str(small_set / "candidates" / "e.yaml")
    assert (warning["line"], warning["field"]) == (2, "input")
    assert "personal data in a candidate: phone number" in warning["message"]


def test_validate_json_lists_problems_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "one.yaml").write_text("id: A\ninput: hi\nacceptence: typo\n", encoding="utf-8")
    (bad / "two.yaml").write_text("id: B\ninput: hi\n", encoding="utf-8")
    code, doc, err = run_json(capsys, "cases", "check", str(bad))
    assert code == 1
    assert err == ""
    assert doc["kind"] == "validation"
    assert (doc["valid"], doc["cases"], doc["files"], doc["files_with_problems"]) == (False, 1, 2, 1)
    assert doc["problems"] == [
        {
            "file": str(bad / "one.yaml"),
            "line": 3,
            "field": "acceptence",
            "message": "unknown field 'acceptence'; did you mean 'acceptance'?",
        }
    ]


def test_coverage_json_carries_counts_floors_and_no_gaps(
    small_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (small_set / "cases" / "d.yaml").write_text(
        "id: GS-4\ninput: send it\nexpected: {route: [{tool: InitiateTransfer}]}\n", encoding="utf-8"
    )
    code, doc, err = run_json(capsys, "cases", "coverage", str(small_set))
    assert code == 0, err
    assert (doc["schema_version"], doc["kind"], doc["valid"]) == (1, "coverage", True)
    assert doc["total"] == 4
    assert doc["mix"]["severity"] == {"(none)": 2, "critical": 1, "low": 1}
    assert doc["mix"]["slice"] == {"(none)": 1, "adversarial": 1, "normal": 1, "policy_edge": 1}
    assert doc["tools"] == {"FreezeCard": 1, "InitiateTransfer": 1, "LookupBalance": 1}
    assert doc["listed_only"] == {"InitiateTransfer": 1}
    assert doc["sources"] == {"Fees-2026": 2}
    assert doc["dimensions"] == {"correct": 1}
    assert doc["declared"]["tools"] == ["LookupBalance", "FreezeCard", "InitiateTransfer"]
    assert doc["floors"] == {
        "tool": 1,
        "source": 1,
        "slice": 0,
        "category": 0,
        "severity": 0,
        "dimension": 5,
    }
    assert doc["gaps"] == []
    assert doc["undeclared"] == {"tools": [], "sources": [], "dimensions": []}


def test_coverage_json_names_gaps_and_undeclared_names(
    small_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, doc, err = run_json(
        capsys,
        "cases",
        "coverage",
        str(small_set),
        "--tools",
        "LookupBalance,SubmitDispute",
        "--min-per-tool",
        "2",
    )
    assert code == 1
    assert err == ""  # the undeclared tools are in the document
    assert doc["floors"]["tool"] == 2
    assert doc["gaps"] == [
        {
            "what": "tool",
            "name": "SubmitDispute",
            "count": 0,
            "floor": 2,
            "listed_only": 0,
            "message": "tool SubmitDispute: 0 cases expect it (floor 2)",
        },
        {
            "what": "tool",
            "name": "LookupBalance",
            "count": 1,
            "floor": 2,
            "listed_only": 0,
            "message": "tool LookupBalance: 1 case expects it (floor 2)",
        },
    ]
    assert doc["tools"]["SubmitDispute"] == 0
    assert doc["undeclared"]["tools"] == ["FreezeCard", "InitiateTransfer"]


def test_coverage_json_of_an_invalid_set(small_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (small_set / "cases" / "d.yaml").write_text("id: GS-1\ninput: again\n", encoding="utf-8")
    code, doc, _err = run_json(capsys, "cases", "coverage", str(small_set))
    assert code == 1
    assert doc["kind"] == "coverage"
    assert doc["valid"] is False
    assert doc["total"] is None
    assert doc["gaps"] is None
    [problem] = doc["problems"]
    assert (problem["file"], problem["field"]) == (str(small_set / "cases" / "d.yaml"), "id")
    assert "duplicate id 'GS-1'" in problem["message"]


def test_promote_json_lists_the_moves(small_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cand = small_set / "candidates" / "cand.yaml"
    cand.write_text(cand.read_text(encoding="utf-8").replace("REVIEW: confirm", "Confirms"), encoding="utf-8")
    code, doc, err = run_json(capsys, "candidates", "promote", "GS-CAND-1", "--set", str(small_set))
    assert code == 0, err
    assert (doc["schema_version"], doc["kind"]) == (1, "promotion")
    [step] = doc["promoted"]
    assert step["id"] == "GS-CAND-1"
    assert Path(step["from"]).resolve() == cand.resolve()
    assert Path(step["to"]).resolve() == (small_set / "cand.yaml").resolve()
    assert Path(step["to"]).is_file()
    assert not cand.exists()
    assert doc["problems"] == []


def test_promote_json_refusal_lists_problems(small_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, doc, err = run_json(capsys, "candidates", "promote", "NOPE", "GS-1", "--set", str(small_set))
    assert code == 2
    assert err == ""
    assert doc["kind"] == "promotion"
    assert doc["promoted"] == []
    assert doc["problems"] == [
        {"file": None, "line": None, "field": "NOPE", "message": "not a candidate (no case has this id)"},
        {
            "file": None,
            "line": None,
            "field": "GS-1",
            "message": "not a candidate (it is already in the set)",
        },
    ]


def test_golden_diff_json_lists_unversioned_changes(
    repo_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, doc, _err = run_json(capsys, "cases", "diff", "HEAD", "--set", str(repo_set))
    assert code == 0
    assert (doc["schema_version"], doc["kind"], doc["revision"], doc["unversioned"]) == (
        1,
        "golden_diff",
        "HEAD",
        [],
    )
    case = repo_set / "cases" / "a.yaml"
    case.write_text(
        case.read_text(encoding="utf-8").replace("States the balance.", "States it."), encoding="utf-8"
    )
    code, doc, _err = run_json(capsys, "cases", "diff", "HEAD", "--set", str(repo_set))
    assert code == 1
    assert doc["unversioned"] == [
        {"id": "GS-1", "file": str(case), "changed": ["acceptance"], "old_version": 1, "new_version": 1}
    ]


def test_an_unknown_format_is_one_error_line_and_exit_2(
    small_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "cases", "check", str(small_set), "--format", "yaml")
    assert code == 2
    assert out == ""
    assert err == "error: --format must be text or json (got 'yaml')\n"
