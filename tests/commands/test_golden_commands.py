from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from judgekit.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_validate_accepts_a_valid_set(small_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "validate", str(small_set))
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
    code, _out, err = run(capsys, "validate", str(bad))
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


def test_validate_duplicate_ids_across_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.yaml").write_text("id: SAME\ninput: a\n", encoding="utf-8")
    (tmp_path / "b.yaml").write_text("id: SAME\ninput: b\n", encoding="utf-8")
    code, _out, err = run(capsys, "validate", str(tmp_path))
    assert code == 1
    assert (
        f"{tmp_path}/b.yaml:1: id: duplicate id 'SAME' (also at {tmp_path}/a.yaml:1); ids must be unique"
        in err
    )


def test_validate_empty_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "validate", str(tmp_path))
    assert code == 1
    assert f"error: {tmp_path}: no case files found" in err


def test_validate_missing_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "validate", str(tmp_path / "nope"))
    assert code == 2
    assert f"path '{tmp_path / 'nope'}' does not exist" in err


def test_coverage_passes_with_manifest_floors(small_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(capsys, "coverage", str(small_set))
    assert code == 0
    assert "3 cases" in out
    assert "cases per tool: FreezeCard 1, InitiateTransfer 1, LookupBalance 1" in out
    assert out.strip().endswith("no coverage gaps")


def test_coverage_names_gaps_and_exits_1(small_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(
        capsys, "coverage", str(small_set), "--tools", "LookupBalance,SubmitDispute", "--min-per-tool", "1"
    )
    assert code == 1
    assert "COVERAGE GAP tool SubmitDispute: 0 cases (floor 1)" in out


def test_export_command_lists_left_out(
    small_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "exports"
    code, out, _err = run(
        capsys, "export", str(small_set), "--format", "copilot-studio", "--out", str(out_dir)
    )
    assert code == 0
    assert f"wrote {out_dir}/cards-1.csv (3 rows)" in out
    assert "left out 1 multi-turn case(s): GS-2" in out
    assert "left out 1 case(s) with no reference answer" in out


def test_export_unknown_format(small_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "export", str(small_set), "--format", "excel", "--out", str(tmp_path))
    assert code == 1
    assert "unknown export format" in err


def test_promote_refuses_review_acceptance(small_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "candidates", "promote", "GS-CAND-1", "--set", str(small_set))
    assert code == 1
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
    code, out, _ = run(capsys, "validate", str(small_set))
    assert out.strip() == "4 cases valid"


def test_promote_unknown_and_existing_ids(small_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "candidates", "promote", "NOPE", "GS-1", "--set", str(small_set))
    assert code == 1
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
    code, out, _err = run(capsys, "golden", "diff", "HEAD", "--set", str(repo_set))
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
    code, out, _err = run(capsys, "golden", "diff", "HEAD", "--set", str(repo_set))
    assert code == 0
    assert "no unversioned contract changes since HEAD" in out


def test_golden_diff_flags_forbidden_rule_change(repo_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = repo_set / "cases" / "b.yaml"
    case.write_text(case.read_text(encoding="utf-8").replace("calls > 1", "calls > 2"), encoding="utf-8")
    code, out, _err = run(capsys, "golden", "diff", "HEAD", "--set", str(repo_set))
    assert code == 1
    assert "GS-2: prohibited changed" in out


def test_golden_diff_unknown_revision(repo_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "golden", "diff", "no-such-rev", "--set", str(repo_set))
    assert code == 1
    assert err.startswith("error: git rev-parse")


def test_help_lists_commands_without_importing_heavy_modules() -> None:
    code = (
        "import sys; from judgekit.cli import main; rc = main(['--help']);"
        "heavy = [m for m in ('litellm', 'sklearn', 'pydantic', 'numpy') if m in sys.modules];"
        "print('HEAVY', heavy)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "validate" in done.stdout
    assert "HEAVY []" in done.stdout


def test_validate_compiles_forbidden_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "r.yaml").write_text(
        "id: R1\ninput: hi\ntools: [issue_refund]\nforbidden:\n"
        '  - {tool: issue_refund, when: "amount >"}\n'
        "  - {tool: issue_refnd}\n",
        encoding="utf-8",
    )
    code, _out, err = run(capsys, "validate", str(tmp_path))
    assert code == 1
    assert f"{tmp_path}/r.yaml:5: forbidden.0.when: case 'R1': not a valid CEL expression" in err
    assert (
        f"{tmp_path}/r.yaml:6: forbidden.1.tool: case 'R1': rule is about tool 'issue_refnd', which is not "
        "among the known tools (issue_refund)"
    ) in err
