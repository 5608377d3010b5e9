"""``judgekit cases lint``: findings one a line, a summary, exit codes 0/1/2, JSON for machines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from judgekit.cli import main
from support import write

REPO = Path(__file__).resolve().parents[2]
AIRDESK = REPO / "examples" / "airdesk"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _shared_data() -> Path:
    env = os.environ.get("JUDGEKIT_SHARED_DATA")
    return Path(env) if env else REPO / ".." / "shared" / "data"


TAU = _shared_data() / "tau-bench-airline"

DB = {"refunds": {}, "payments": {"PMT-1": {"amount": 412.18}}}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["cases", "lint", *args])
    out, err = capsys.readouterr()
    return code, out, err


def make_set(root: Path, cases: dict[str, dict[str, Any]]) -> Path:
    write(root / "judgekit-set.yaml", "name: lint-cli\ntools: [issue_refund]\n")
    write(root / "fixtures" / "db.json", json.dumps(DB))
    for case_id, fields in cases.items():
        data = {
            "id": case_id,
            "input": "I was charged twice",
            "initial_state": "fixtures/db.json",
            "tools": ["issue_refund"],
            **fields,
        }
        write(root / "cases" / f"{case_id}.json", json.dumps(data, indent=2))
    return root


WEAK = {"expected_state": {"changes": {}}, "acceptance": "Explains the pending authorisation."}
STRONG = {"expected_state": {"refunds": [{"payment_id": "PMT-1", "amount": 412.18}]}}


def test_a_weak_case_exits_1_with_one_line_per_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_set(tmp_path, {"strong": STRONG, "weak": WEAK})
    code, out, _ = run(capsys, str(root))
    assert code == 1
    lines = out.splitlines()
    weak_file = root / "cases" / "weak.json"
    assert lines == [
        f"{weak_file}:1: weak: do-nothing agent accepted by: state; only judge criteria could fail it "
        "(acceptance). Add an expectation a do-nothing agent fails (an expected state change, a route, a "
        "must_mention), or declare why doing nothing is correct: do_nothing: {why: ..., decided_by: "
        "case.acceptance}",
        f"{weak_file}:1: weak: info: needs a judge: acceptance",
        "2 cases linted: 1 reported, 0 declared",
    ]


def test_a_clean_set_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, str(make_set(tmp_path, {"strong": STRONG})))
    assert (code, out, err) == (0, "1 case linted: 0 reported, 0 declared\n", "")


def test_a_declared_case_does_not_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    declared = {**WEAK, "do_nothing": {"why": "must refuse: nothing is due", "decided_by": "case.acceptance"}}
    code, out, _ = run(capsys, str(make_set(tmp_path, {"declared": declared})))
    assert code == 0
    assert "declared: declared: must refuse: nothing is due (rests on case.acceptance)" in out
    assert out.splitlines()[-1] == "1 case linted: 0 reported, 1 declared"


def test_json_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(make_set(tmp_path, {"strong": STRONG, "weak": WEAK})), "--format", "json")
    assert code == 1
    data = json.loads(out)
    assert data["summary"] == {
        "cases": 2,
        "reported": 1,
        "declared": 0,
        "rubric_problems": 0,
        "do_nothing_accepted": ["weak"],
    }
    assert sorted(r["rubric"] for r in data["rubrics"]) == [
        "clarifying-questions",
        "grounded-in-policy",
        "honest-reporting",
        "refusal-escalation",
    ]
    weak = next(c for c in data["cases"] if c["case"] == "weak")
    assert weak["status"] == "reported"
    assert [f["kind"] for f in weak["findings"]] == ["do_nothing_passes", "needs_judge"]
    assert weak["findings"][0]["line"] == 1


def test_an_empty_rubric_given_with_rubric_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rubric = write(tmp_path / "empty.yaml", "id: empty\nversion: 1\ncriteria: []\n")
    code, out, _ = run(capsys, str(make_set(tmp_path / "set", {"strong": STRONG})), "--rubric", str(rubric))
    assert code == 1
    assert out.splitlines() == [
        f"{rubric}:3: empty: the rubric has no criteria (criteria: []): a judge given it decides nothing; "
        "list at least one criterion",
        "1 case linted: 0 reported, 0 declared; 1 rubric problem",
    ]


def test_a_built_in_rubric_by_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    declared = {**WEAK, "do_nothing": {"why": "must refuse", "decided_by": "no_false_success"}}
    root = make_set(tmp_path, {"declared": declared})
    code, out, _ = run(capsys, str(root), "--rubric", "honest-reporting", "--format", "json")
    assert code == 0
    assert [r["rubric"] for r in json.loads(out)["rubrics"]] == ["honest-reporting"]
    code, out, _ = run(capsys, str(root), "--rubric", "refusal-escalation")
    assert code == 1
    assert "do_nothing.decided_by 'no_false_success' names no criterion of the rubrics linted with" in out


def test_an_invalid_set_is_an_input_error_with_its_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = {**WEAK, "do_nothing": {"why": "must refuse", "decided_by": "case.nothing"}}
    code, out, err = run(capsys, str(make_set(tmp_path, {"bad": bad})))
    assert code == 2
    assert out == ""
    assert "do_nothing: decided_by 'case.nothing' names no criterion of this case" in err
    assert err.splitlines()[-1] == "the set is invalid; fix it first (judgekit cases check)"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            [], "error: name a golden-set folder or case files (or --tau-bench RESULTS)", id="nothing"
        ),
        pytest.param(
            ["{root}", "--format", "xml"], "error: --format must be text or json (got 'xml')", id="format"
        ),
        pytest.param(
            ["{root}/nope"],
            "error: Invalid value for 'CASES': path '{root}/nope' does not exist.",
            id="missing_folder",
        ),
        pytest.param(["{root}/notes"], "error: {root}/notes: no case files found", id="no_case_files"),
        pytest.param(
            ["{root}", "--rubric", "nope"],
            "error: --rubric nope: no such file and no built-in rubric of that id (built-in: clarifying-",
            id="unknown_rubric",
        ),
        pytest.param(
            ["{root}", "--tau-bench", "{root}/fixtures/exists.json"],
            "error: give either golden-set CASES or --tau-bench RESULTS, not both",
            id="both",
        ),
        pytest.param(
            ["--tau-bench", "{root}/fixtures/exists.json", "--db", "{root}"],
            "error: --tau-bench needs --db (the initial database) and --replay (the replay file)",
            id="tau_without_replay",
        ),
        pytest.param(
            ["{root}", "--db", "{root}"], "error: --db and --replay go with --tau-bench", id="db_alone"
        ),
        pytest.param(
            ["--tau-bench", "{root}/r.json", "--db", "{root}", "--replay", "{root}"],
            "error: Invalid value for '--tau-bench': path '{root}/r.json' does not exist.",
            id="tau_missing_file",
        ),
    ],
)
def test_usage_errors_exit_2_with_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    root = make_set(tmp_path, {"strong": STRONG})
    write(root / "notes" / "readme.txt", "not a case\n")
    write(root / "fixtures" / "exists.json", "[]\n")
    code, out, err = run(capsys, *(a.format(root=root) for a in args))
    assert code == 2
    assert out == ""
    assert len(err.splitlines()) == 1
    assert err.startswith(message.format(root=root))


def test_the_bundled_example_lints_clean(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(AIRDESK))
    assert code == 0
    lines = out.splitlines()
    assert lines[-1] == "26 cases linted: 0 reported, 2 declared"
    declared = [line for line in lines if ": declared: " in line]
    assert [line.split(": ")[1] for line in declared] == ["GS-SEC-0001", "GS-SEC-0003"]
    assert all("(rests on case.acceptance)" in line for line in declared)


def test_help_does_not_import_the_graders() -> None:
    code = (
        "import sys\nfrom judgekit.cli import main\n"
        "try:\n    main(['cases', 'lint', '--help'])\nexcept SystemExit:\n    pass\n"
        "assert 'judgekit.graders.layered' not in sys.modules, 'lint --help imported the graders'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(
    not (TAU / "gpt-4o-airline.raw.json").is_file() and not IN_CI, reason="shared tau-bench data not present"
)
def test_tau_bench_tasks_a_do_nothing_agent_gets_reward_on(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys,
        "--tau-bench",
        str(TAU / "gpt-4o-airline.raw.json"),
        "--db",
        str(TAU / "db"),
        "--replay",
        str(TAU / "gpt-4o-trajectories.jsonl"),
    )
    assert code == 1
    assert err == ""
    lines = out.splitlines()
    free = [12, 13, 15, 17, 18, 21, 24, 29, 35, 36, 37, 38, 39, 40, 41, 42, 47, 48, 49]
    assert lines[-2] == (
        "a do-nothing agent gets tau-bench's reward 1 on 19 of 50 tasks: "
        + ", ".join(f"task-{n}" for n in free)
    )
    assert lines[-1] == "50 cases linted: 19 reported, 0 declared"
    first = lines[0]
    assert first.startswith(f"{TAU / 'gpt-4o-airline.raw.json'}:")
    assert (
        ": task-12: do-nothing agent accepted by: state, tau-bench; nothing in the case could fail it."
        in first
    )
