"""Exit codes a CI job gates on: grade/report thresholds, compare's regression gate, the docs workflow.

The demo's two agent versions are graded once with the demo's calibrated judge (replayed, offline). Their
real pass^1 figures (undecided counted as fail) are: agent-v1 capability 0.5938, regression 0.8750;
agent-v2 capability 0.7917, regression 0.7500. So ``--fail-under 0.9`` fails both, and 0.7 is the threshold
that passes agent-v2 and fails agent-v1.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from judgekit.cli import main

REPO = Path(__file__).resolve().parents[2]
AIRDESK = REPO / "examples" / "airdesk"
RUNS = AIRDESK / "runs"
CI_PAGE = REPO / "docs" / "how-to" / "gate-a-run-in-ci.md"

pytestmark = pytest.mark.skipif(not (RUNS / "agent-v1.jsonl").is_file(), reason="airdesk example not present")


def _cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str]:
    capsys.readouterr()
    code = main([str(a) for a in args])
    return code, capsys.readouterr().err


def _judge(records: Path) -> list[object]:
    return [
        "--config",
        AIRDESK / "judge.yaml",
        "--cassette",
        AIRDESK / "cassettes" / "judge-honest-reporting.jsonl",
        "--records",
        records,
    ]


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The demo's calibration record, and both agent versions graded with its judge."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    root = tmp_path_factory.mktemp("thresholds")
    assert main(["demo", "--out", str(root / "demo")]) == 0
    records = root / "demo" / "calibration" / "records"
    out = {"records": records}
    for run in ("agent-v1", "agent-v2"):
        out[run] = root / f"{run}.jsonl"
        args = ["grade", "--cases", AIRDESK, "--transcripts", RUNS / f"{run}.jsonl", "--out", out[run]]
        assert main([str(a) for a in [*args, "--no-progress", *_judge(records)]]) == 0
    return out


def test_report_fail_under_0_9_fails_agent_v1(graded, capsys) -> None:
    code, err = _cli(capsys, "report", graded["agent-v1"], "--cases", AIRDESK, "--fail-under", "0.9")
    assert code == 1
    assert (
        "threshold missed: --fail-under 0.9: pass^1 of the capability suite is 0.5938 over 24 task(s)" in err
    )
    assert "pass^1 of the regression suite is 0.8750 over 2 task(s), below 0.9" in err


def test_report_agent_v2_is_below_0_9_too_and_passes_0_7(graded, capsys) -> None:
    # agent-v2 does not reach 0.9 (capability 0.7917, regression 0.7500): the honest gate that tells the
    # versions apart is 0.7
    code, err = _cli(capsys, "report", graded["agent-v2"], "--fail-under", "0.9")
    assert code == 1
    assert "capability suite is 0.7917" in err
    assert "regression suite is 0.7500" in err
    code, err = _cli(capsys, "report", graded["agent-v2"], "--fail-under", "0.7", "--max-errors", "0")
    assert code == 0, err
    assert "thresholds met: --fail-under 0.7, --max-errors 0" in err
    code, _ = _cli(capsys, "report", graded["agent-v1"], "--fail-under", "0.7")
    assert code == 1


def test_report_suite_prefix_and_pass_k(graded, capsys) -> None:
    code, err = _cli(
        capsys, "report", graded["agent-v1"], "--fail-under", "regression:0.85", "--fail-under-k", "4=0.5"
    )
    assert code == 1
    missed = [line for line in err.splitlines() if line.startswith("threshold missed:")]
    assert missed == [
        "threshold missed: --fail-under-k 4=0.5: pass^4 of the capability suite is 0.2500 over 24 task(s), "
        "below 0.5 (undecided trials count as trials that did not pass)"
    ]


def test_report_max_errors_names_the_count(graded, capsys) -> None:
    code, err = _cli(capsys, "report", graded["agent-v1"], "--max-errors", "0")
    assert code == 1
    assert "--max-errors 0: 1 trial(s) with verdict error in the whole run (every suite), more than 0" in err
    assert _cli(capsys, "report", graded["agent-v1"], "--max-errors", "regression:0")[0] == 0


def test_report_exclude_policy_changes_the_figure(graded, capsys) -> None:
    code, err = _cli(
        capsys, "report", graded["agent-v1"], "--undecided", "exclude", "--fail-under", "capability:0.9"
    )
    assert code == 1
    assert "(undecided trials left out)" in err


def test_grade_gates_on_the_results_it_wrote(graded, capsys, tmp_path) -> None:
    args = ["grade", "--cases", AIRDESK, "--transcripts", RUNS / "agent-v1.jsonl", "--no-progress"]
    code, err = _cli(
        capsys, *args, "--out", tmp_path / "a.jsonl", *_judge(graded["records"]), "--fail-under", "0.9"
    )
    assert code == 1
    assert "pass^1 of the capability suite is 0.5938" in err
    code, err = _cli(
        capsys, *args, "--out", tmp_path / "b.jsonl", *_judge(graded["records"]), "--fail-under", "0.5"
    )
    assert code == 0, err


def test_compare_exits_1_naming_the_lost_regression_task(graded, capsys) -> None:
    code, err = _cli(capsys, "compare", graded["agent-v1"], graded["agent-v2"], "--cases", AIRDESK)
    assert code == 1
    assert "verdict: real improvement" in err  # the sign test alone would pass it
    assert (
        "regression suite lost GS-REG-0107: pass (4/4) in agent-v1.jsonl, fail (2/4) in agent-v2.jsonl" in err
    )
    assert "regression: the regression suite lost 1 task(s): GS-REG-0107" in err


def test_compare_exits_1_on_a_significant_regression_and_says_so(graded, capsys) -> None:
    code, err = _cli(capsys, "compare", graded["agent-v2"], graded["agent-v1"])
    assert code == 1
    assert "regression: the sign test shows a significant regression: 12 task(s) broken and 2 fixed" in err
    # and both reasons are given: GS-REG-0113 passed 4/4 in agent-v2 and 3/4 in agent-v1
    assert (
        "regression suite lost GS-REG-0113: pass (4/4) in agent-v2.jsonl, fail (3/4) in agent-v1.jsonl" in err
    )


def test_compare_of_a_run_with_itself_exits_0(graded, capsys) -> None:
    assert _cli(capsys, "compare", graded["agent-v1"], graded["agent-v1"])[0] == 0


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        pytest.param("--fail-under", "1.5", "'1.5': the threshold must be a rate between 0 and 1", id="rate"),
        pytest.param("--fail-under", "smoke:0.5", "'smoke:0.5': unknown suite 'smoke'", id="suite"),
        pytest.param("--fail-under-k", "4", "'4': write K=X (pass^K at least X)", id="no_equals"),
        pytest.param("--fail-under-k", "x=0.5", "'x=0.5': K must be a whole number of at least 1", id="k"),
        pytest.param("--max-errors", "many", "'many': N must be a whole number of at least 0", id="errors"),
    ],
)
@pytest.mark.parametrize("command", ["grade", "report"])
def test_a_bad_threshold_is_one_usage_line_before_any_work(
    *, command: str, option: str, value: str, message: str, capsys, tmp_path
) -> None:
    args = (
        ["grade", "--cases", AIRDESK, "--transcripts", RUNS / "agent-v1.jsonl", "--out", tmp_path / "r.jsonl"]
        if command == "grade"
        else ["report", tmp_path / "absent.jsonl"]
    )
    code, err = _cli(capsys, *args, option, value)
    assert code == 2
    (line,) = err.splitlines()
    assert line.startswith(f"error: Invalid value for '{option}': {message}")
    assert not (tmp_path / "r.jsonl").exists()  # refused while parsing: nothing graded


def test_report_k_below_a_threshold_k_is_a_usage_error(graded, capsys) -> None:
    code, err = _cli(capsys, "report", graded["agent-v1"], "--k", "2", "--fail-under-k", "3=0.5")
    assert code == 2
    assert err.strip() == (
        "error: --fail-under-k 3=0.5 needs pass^3, but --k 2 stops the report at k=2: raise --k or "
        "leave it out"
    )


def test_a_k_beyond_the_trials_is_a_missed_threshold(graded, capsys) -> None:
    code, err = _cli(capsys, "report", graded["agent-v1"], "--fail-under-k", "regression:5=0")
    assert code == 1
    assert "pass^5 of the regression suite is undefined: its tasks have at most 4 trial(s)" in err


def test_input_problems_are_exit_2_even_with_thresholds_met(graded, capsys, tmp_path) -> None:
    cut = tmp_path / "cut.jsonl"
    text = graded["agent-v2"].read_text()
    cut.write_text(text + text.splitlines()[0][:40])
    code, err = _cli(capsys, "report", cut, "--fail-under", "0.5")
    assert code == 2
    assert "warning:" in err
    assert "thresholds met" in err
    code, err = _cli(capsys, "compare", graded["agent-v2"], cut)
    assert code == 2
    assert "truncated" in err
    code, err = _cli(capsys, "report", tmp_path / "absent.jsonl")
    assert code == 2
    assert err.startswith("error: ")


# --------------------------------------------------------------------------- the docs' workflow


def _workflow_steps() -> list[str]:
    """The ``run:`` scripts of the GitHub Actions example in docs/how-to/gate-a-run-in-ci.md."""
    page = CI_PAGE.read_text()
    block = re.search(r"```yaml\n(.*?)```", page, re.S)
    assert block is not None
    import yaml

    workflow = yaml.safe_load(block.group(1))
    return [step["run"] for step in workflow["jobs"]["grade"]["steps"] if "run" in step]


def test_the_docs_workflow_runs_on_the_bundled_example(tmp_path: Path) -> None:
    steps = _workflow_steps()
    assert steps[0] == "pip install judgekit-agents"
    (tmp_path / "examples").symlink_to(REPO / "examples")
    summary = tmp_path / "summary.md"
    summary.write_text("")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_STEP_SUMMARY": str(summary),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    codes = []
    for script in steps[1:]:  # judgekit is installed here already
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", script],
            check=False,
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert "Traceback" not in done.stderr
        codes.append((done.returncode, done.stderr))
    # demo, grade, report (agent-v2 meets every threshold), compare (GS-REG-0107 lost: the page says so)
    assert [c for c, _ in codes] == [0, 0, 0, 1], codes
    assert "regression suite lost GS-REG-0107" in codes[3][1]
    text = summary.read_text()
    assert "agent-v2.results.jsonl" in text
    assert "# Comparison" in text
    # the page's thresholds fail agent-v1, as it says
    report = steps[3].replace("agent-v2.results.jsonl", "agent-v1.results.jsonl")
    done = subprocess.run(
        ["bash", "-e", "-c", report], check=False, cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 1
    assert done.stderr.count("threshold missed:") == 3
