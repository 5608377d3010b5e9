"""``judgekit cases retire``: saturated capability cases move to the regression split; cases diff shows it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgekit.cli import main
from judgekit.verdict import Verdict
from support import git, results_file

P, F = Verdict.PASS, Verdict.FAIL
CASE_A = "id: a\nversion: 1\nslice: policy_edge\ninput: Cancel it\nacceptance: Cancels it.\n"
CASE_B = "id: b\nversion: 1\nslice: policy_edge\ninput: Refund it\nacceptance: Refunds it.\n"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "set"
    (root / "cases").mkdir(parents=True)
    (root / "judgekit-set.yaml").write_text("name: s\ncases_dir: cases\n", encoding="utf-8")
    (root / "cases" / "a.yaml").write_text(CASE_A, encoding="utf-8")
    (root / "cases" / "b.yaml").write_text(CASE_B, encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "base")
    return root


def _results(path: Path, release: str, verdicts: dict[str, list[Verdict]], version: int = 1) -> Path:
    return results_file(path, release, verdicts, version=version)


def _three_releases(tmp_path: Path, b_middle: list[Verdict] | None = None) -> list[str]:
    return [
        str(
            _results(
                tmp_path / f"r{v}.jsonl",
                v,
                {"a": [P] * 8, "b": b_middle if v == "1.5" and b_middle else [P] * 8},
            )
        )
        for v in ("1.4", "1.5", "1.6")
    ]


def test_the_same_results_file_three_times_retires_nothing(repo, tmp_path, capsys):
    one = str(_results(tmp_path / "r.jsonl", "1.4", {"a": [P] * 8}))
    code, out, err = run(capsys, "cases", "retire", one, one, one, "--set", str(repo))
    assert code == 0, err
    assert "no capability case is saturated" in out
    assert "needs 3 distinct releases" in err
    assert "show 1 (1.4)" in err
    assert "given more than once" in err
    assert (repo / "cases" / "a.yaml").read_text(encoding="utf-8") == CASE_A


def test_saturated_cases_move_and_golden_diff_shows_the_move(repo, tmp_path, capsys):
    files = _three_releases(tmp_path, b_middle=[P] * 7 + [F])
    code, out, err = run(capsys, "cases", "retire", *files, "--set", str(repo), "--reason", "reviewed by QA")
    assert code == 0, err
    assert out.splitlines()[0].startswith(
        f"retired a ({repo}/cases/a.yaml:1): split (none) -> regression: saturated: passed every trial in "
        "each of the last 3 releases at v1 (1.4: 8/8; 1.5: 8/8; 1.6: 8/8; at least 8 trials each); "
        "reviewed by QA"
    )
    assert "1 case(s) moved to the regression split" in out
    assert (repo / "cases" / "b.yaml").read_text(encoding="utf-8") == CASE_B  # 7/8 in 1.5
    text = (repo / "cases" / "a.yaml").read_text(encoding="utf-8")
    assert text.startswith("id: a\nversion: 1\n" + "split: regression\nretired:\n  reason: ")
    code, out, err = run(capsys, "cases", "diff", "HEAD", "--set", str(repo))
    assert code == 0, err  # a move is not a contract change
    assert (
        f"{repo}/cases/a.yaml: a: moved from split (none) to regression since HEAD (retired: saturated:"
        in out
    )
    assert "not a contract change" in out
    code, out, _ = run(capsys, "cases", "diff", "HEAD", "--set", str(repo), "--format", "json")
    moved = json.loads(out)["moved"]
    assert [(m["id"], m["from"], m["to"]) for m in moved] == [("a", None, "regression")]
    assert moved[0]["reason"].endswith("reviewed by QA")
    # the report now counts a in the regression suite, and retire finds nothing left to move
    code, out, _ = run(
        capsys,
        "report",
        files[-1],
        "--history",
        files[0],
        "--history",
        files[1],
        "--cases",
        str(repo),
        "--format",
        "json",
    )
    suites = {s["name"]: s["tasks"] for s in json.loads(out)["suites"]}
    assert suites == {"capability": 1, "regression": 1}
    code, out, _ = run(capsys, "cases", "retire", *files, "--set", str(repo))
    assert code == 0
    assert "no capability case is saturated" in out


def test_a_version_bump_mid_streak_retires_nothing(repo, tmp_path, capsys):
    (repo / "cases" / "a.yaml").write_text(CASE_A.replace("version: 1", "version: 2"), encoding="utf-8")
    files = [
        str(_results(tmp_path / "r1.jsonl", "1.4", {"a": [P] * 8}, version=1)),
        str(_results(tmp_path / "r2.jsonl", "1.5", {"a": [P] * 8}, version=1)),
        str(_results(tmp_path / "r3.jsonl", "1.6", {"a": [P] * 8}, version=2)),
    ]
    code, out, err = run(capsys, "cases", "retire", *files, "--set", str(repo))
    assert code == 0, err
    assert "no capability case is saturated" in out
    code, _out, err = run(capsys, "cases", "retire", *files, "--set", str(repo), "--case", "a")
    assert code == 2
    assert "a: not retired: not saturated: 1.5: graded against v1 only (the case is v2" in err


def test_one_trial_per_release_is_not_enough(repo, tmp_path, capsys):
    files = [str(_results(tmp_path / f"r{v}.jsonl", v, {"a": [P]})) for v in ("1.4", "1.5", "1.6")]
    code, out, _ = run(capsys, "cases", "retire", *files, "--set", str(repo))
    assert code == 0
    assert "not yet a: passed every trial, but with fewer than 8 trials in a release" in out
    assert "split" not in (repo / "cases" / "a.yaml").read_text(encoding="utf-8")


def test_a_named_case_that_is_not_saturated_is_refused_and_nothing_is_written(repo, tmp_path, capsys):
    files = _three_releases(tmp_path, b_middle=[P] * 7 + [F])
    code, _out, err = run(capsys, "cases", "retire", *files, "--set", str(repo), "--case", "a", "--case", "b")
    assert code == 2
    assert "b: not retired: not saturated: 1.5: 7/8" in err
    assert "Traceback" not in err
    assert (repo / "cases" / "a.yaml").read_text(encoding="utf-8") == CASE_A


def test_dry_run_and_json(repo, tmp_path, capsys):
    files = _three_releases(tmp_path)
    code, out, err = run(
        capsys, "cases", "retire", *files, "--set", str(repo), "--dry-run", "--format", "json"
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["kind"] == "retirement"
    assert doc["dry_run"] is True
    assert doc["releases"] == ["1.4", "1.5", "1.6"]
    assert [r["id"] for r in doc["retired"]] == ["a", "b"]
    assert (repo / "cases" / "a.yaml").read_text(encoding="utf-8") == CASE_A


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--min-trials", "0"], "--min-trials must be at least 1 (got 0); the seed recommends 8"),
        (["--releases", "0"], "--releases must be at least 1 (got 0)"),
    ],
)
def test_bad_values_are_usage_errors(repo, tmp_path, capsys, args, message):
    files = _three_releases(tmp_path)
    code, _out, err = run(capsys, "cases", "retire", *files, "--set", str(repo), *args)
    assert code == 2
    assert message in err


def test_report_refuses_a_minimum_below_one(tmp_path, capsys):
    one = str(_results(tmp_path / "r.jsonl", "1.4", {"a": [P] * 8}))
    code, _out, err = run(capsys, "report", one, "--retire-min-trials", "0")
    assert code == 2
    assert "--retire-min-trials must be at least 1 (got 0); the seed recommends 8" in err


def test_a_missing_results_file_is_named(repo, tmp_path, capsys):
    code, _out, err = run(capsys, "cases", "retire", str(tmp_path / "nope.jsonl"), "--set", str(repo))
    assert code == 2
    assert "nope.jsonl" in err
    assert "Traceback" not in err


def test_the_set_decides_the_suite_not_the_results(repo, tmp_path, capsys):
    # the results say slice policy_edge (capability); the set has since moved b to the regression slice
    (repo / "cases" / "b.yaml").write_text(
        CASE_B.replace("slice: policy_edge", "slice: regression"), encoding="utf-8"
    )
    files = _three_releases(tmp_path)
    code, out, err = run(
        capsys, "cases", "retire", *files, "--set", str(repo), "--dry-run", "--format", "json"
    )
    assert code == 0, err
    assert [r["id"] for r in json.loads(out)["retired"]] == ["a"]
