"""The run service (``judgekit.api.runs``): one pipeline for every path that grades a run.

Every path that grades a run reaches it: ``judgekit grade`` (with and without ``--batch``), the demo, Ray
grading (its workers grade through :func:`~judgekit.api.runs.grade_trials`), the pytest plugin (its trials
are planned by :func:`~judgekit.api.runs.plan_run`) and the Python API.
:func:`test_every_path_reaches_the_one_service` holds that, with call counters wrapped around the service's
functions (each counter calls the real function). The behaviour is then tested once, here, on the service:
what a pass means (the scenarios of ``tests/test_grading_paths.py``, on a whole run), the outcome and its
document (the JSON ``judgekit grade`` prints), the options' refusals, a judge built from a
:class:`~judgekit.judge_setup.JudgeConfig` and its trust.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judgekit.api import runs
from judgekit.api.runs import RunOptions, RunOutcome, grade_run, grade_run_async
from judgekit.cases import Case
from judgekit.errors import JudgekitError
from judgekit.graders.contract import UntrustedPolicy
from judgekit.graders.rubric import RubricGrader
from judgekit.judge_setup import JudgeConfig
from judgekit.results import read_results
from judgekit.transcript import Transcript
from judgekit.verdict import Verdict
from judges.server import JudgeServer, Reply, verdict_reply
from support import airdesk_judge_run
from test_grading_paths import _case, _lossy, golden, judge, rubric_grader, transcript

__all__ = ["golden", "judge"]  # fixtures shared with tests/test_grading_paths.py

REPO = Path(__file__).resolve().parents[2]
AIRDESK = REPO / "examples" / "airdesk"
CASSETTE = AIRDESK / "cassettes" / "judge-honest-reporting.jsonl"

DOCUMENT_KEYS = [
    "run_id",
    "results",
    "cases",
    "planned",
    "graded",
    "already_graded",
    "retried",
    "seconds",
    "verdicts",
    "errors",
    "grader_errors",
    "cost_usd",
    "cost_known_usd",
    "unpriced_trials",
    "cost_unknown_reason",
    "judge",
    "batch",
    "trials_in_results",
    "undecided_policy",
    "pass_rates",
    "suites",
    "gate",
    "input_problems",
    "dropped_line",
    "holdouts_left_out",
    "exit_code",
    "canary",
]
"""The fields of the ``grade_summary`` document, in the order ``judgekit grade --format json`` prints them."""


def _rubric_file(work: Path) -> Path:
    """The rubric of the loopback judge (one criterion, ``polite``) as a file."""
    path = work / "paths.yaml"
    path.write_text(
        "id: paths\nversion: '1'\ncriteria:\n"
        "  - id: polite\n    text: The agent is polite.\n    critical: false\n"
    )
    return path


def _run(
    root: Path, case: Case, t: Transcript, rubric: RubricGrader | None, policy: UntrustedPolicy
) -> tuple[Verdict, str]:
    """One trial graded as a run by the service: the line's verdict and the reasons it shows a person."""
    work = root.parent / f"service-{case.id}-{policy}-{rubric is not None}"
    work.mkdir()
    (work / "t.jsonl").write_text(t.model_dump_json() + "\n")
    outcome = grade_run(
        root, [work / "t.jsonl"], work / "r.jsonl", judge=rubric, options=RunOptions(untrusted=policy)
    )
    assert (outcome.graded, outcome.exit_code) == (1, 0)
    (line,) = read_results(work / "r.jsonl").lines
    return line.verdict, line.reason + " " + " ".join(c.reason for c in line.checks)


# --------------------------------------------------------------------------- what a pass means, on a run


def test_a_plain_contract_without_a_judge_never_passes(golden: Path) -> None:
    verdict, text = _run(
        golden, _case(golden, "plain-address"), transcript("plain-address"), None, "withhold"
    )
    assert verdict is Verdict.NOT_EVALUATED
    assert "required outcome (The delivery address of customer c1" in text
    assert "give a judge (make_grader(judge=JudgeConfig(...)), or grade_run(judge=...))" in text  # Python's


def test_a_missing_required_mention_fails(golden: Path) -> None:
    t = transcript("mention-refund", reply="Sorry, I cannot see anything.")
    verdict, text = _run(golden, _case(golden, "mention-refund"), t, None, "withhold")
    assert verdict is Verdict.FAIL
    assert "refund of 412.18 was issued" in text


def test_a_wrong_end_state_fails(golden: Path) -> None:
    verdict, text = _run(
        golden, _case(golden, "state-address"), transcript("state-address"), None, "withhold"
    )
    assert verdict is Verdict.FAIL
    assert "13 Elm Street" in text


def test_an_uncalibrated_judge_decides_nothing_by_default(golden: Path, judge: JudgeServer) -> None:
    rubric = rubric_grader(judge, trusted=False)
    verdict, text = _run(
        golden, _case(golden, "plain-address"), transcript("plain-address"), rubric, "withhold"
    )
    assert verdict is Verdict.INSUFFICIENT_INFORMATION
    assert "untrusted" in text


def test_counting_an_uncalibrated_judge_is_an_explicit_opt_in(golden: Path, judge: JudgeServer) -> None:
    rubric = rubric_grader(judge, trusted=False)
    verdict, _ = _run(golden, _case(golden, "plain-address"), transcript("plain-address"), rubric, "count")
    assert verdict is Verdict.PASS


def test_a_calibrated_judge_decides(golden: Path, judge: JudgeServer) -> None:
    rubric = rubric_grader(judge, trusted=True)
    verdict, _ = _run(golden, _case(golden, "plain-address"), transcript("plain-address"), rubric, "withhold")
    assert verdict is Verdict.PASS


def test_a_lossy_trace_is_graded_only_by_the_layers_it_supports(golden: Path) -> None:
    t = _lossy(transcript("mention-refund", reply="Sorry, I cannot see anything."))
    verdict, text = _run(golden, _case(golden, "mention-refund"), t, None, "withhold")
    # the export lost spans, so the agent's messages may be incomplete: a missing mention decides nothing
    assert verdict is Verdict.INSUFFICIENT_INFORMATION
    assert "lossy trace" in text


# --------------------------------------------------------------------------- the outcome


def _transcripts(folder: Path, *rows: Transcript | str) -> Path:
    path = folder / "t.jsonl"
    path.write_text("".join((r if isinstance(r, str) else r.model_dump_json()) + "\n" for r in rows))
    return path


def test_the_outcome_counts_the_run_and_checks_the_thresholds(golden: Path) -> None:
    from judgekit.reports.run_gate import parse_thresholds

    files = _transcripts(
        golden.parent, transcript("mention-refund", reply="Sorry."), transcript("state-address")
    )
    notes: list[str] = []
    outcome = grade_run(
        golden,
        [files],
        golden.parent / "r.jsonl",
        options=RunOptions(thresholds=tuple(parse_thresholds(["0.5"], [], ["0"]))),
        say=notes.append,
    )
    assert list(outcome.document()) == DOCUMENT_KEYS
    assert (outcome.planned, outcome.graded, outcome.already_graded) == (2, 2, 0)
    assert outcome.verdicts == {
        "pass": 0,
        "fail": 2,
        "insufficient_information": 0,
        "error": 0,
        "not_evaluated": 0,
    }
    assert outcome.judge is None  # no judge layer
    assert outcome.trials_in_results == 2
    assert outcome.undecided_policy == "fail"
    assert outcome.report is not None
    assert outcome.summary.graded == 2
    assert outcome.gate.checked
    assert outcome.gate.passed is False
    assert [row["option"] for row in outcome.gate.thresholds] == ["--fail-under 0.5", "--max-errors 0"]
    assert [row["met"] for row in outcome.gate.thresholds] == [False, True]
    assert outcome.exit_code == 1
    assert notes == []


def test_input_problems_and_holdouts_are_said_and_exit_2(golden: Path) -> None:
    files = _transcripts(golden.parent, transcript("state-address"), "not json", transcript("no-such-case"))
    notes: list[str] = []
    outcome = grade_run(
        golden, [files], golden.parent / "r.jsonl", options=RunOptions(report=False), say=notes.append
    )
    assert outcome.graded == 1
    assert [(p.line, p.file) for p in outcome.input_problems] == [(2, str(files)), (3, str(files))]
    assert all(note.startswith("warning: ") for note in notes)
    assert len(notes) == 2
    assert outcome.notes == tuple(notes)
    assert outcome.trials_in_results is None
    assert outcome.report is None
    assert outcome.exit_code == 2


def test_a_trial_of_a_case_one_edit_away_gets_a_did_you_mean(golden: Path) -> None:
    # issue 35: every other unknown name had a did-you-mean; a mistyped case id in a transcript had none
    files = _transcripts(golden.parent, transcript("state-adress"))
    outcome = grade_run(golden, [files], golden.parent / "r.jsonl", options=RunOptions(report=False))
    (problem,) = outcome.input_problems
    assert problem.message.endswith(
        f"case 'state-adress' is not in the case set ({golden}); trial 1 left out; "
        "did you mean 'state-address'?"
    )


def test_resuming_grades_only_what_is_left_and_the_async_variant_is_the_same_run(golden: Path) -> None:
    files = _transcripts(golden.parent, transcript("state-address"))
    out = golden.parent / "r.jsonl"
    first = grade_run(golden, [files], out)
    again = asyncio.run(grade_run_async(golden, [files], out, options=RunOptions(resume=True)))
    assert (again.run_id, again.graded, again.already_graded) == (first.run_id, 0, 1)
    assert len(read_results(out).lines) == 1
    with pytest.raises(JudgekitError) as info:
        grade_run(golden, [files], out)
    assert info.value.exit_code == 2


@pytest.mark.parametrize(
    ("options", "message"),
    [
        pytest.param(
            {"retry_errors": True}, "--retry-errors re-grades the trials of an existing run", id="retry"
        ),
        pytest.param({"batch_poll": 1.0}, "--batch-poll is the polling interval of --batch", id="poll"),
        pytest.param(
            {"batch": True, "batch_poll": 0.0}, "--batch-poll must be more than 0 seconds", id="poll0"
        ),
        pytest.param(
            {"grounding": "nearby"}, "--grounding must be one of retrieved_or_cited", id="grounding"
        ),
    ],
)
def test_each_bad_option_is_refused_when_the_options_are_made(options: dict[str, Any], message: str) -> None:
    with pytest.raises(JudgekitError) as info:
        RunOptions(**options)
    assert info.value.exit_code == 2
    assert message in info.value.message


def test_a_judge_config_is_built_and_its_trust_decided_by_its_records(
    golden: Path, judge: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-service-test-0123456789")
    records = golden.parent / "records"
    records.mkdir()
    config = JudgeConfig(
        model="openai/paths-judge",
        api_base=judge.api_base,
        rubric=str(_rubric_file(golden.parent)),
        records=records,
        retries=0,
    )
    files = _transcripts(golden.parent, transcript("plain-address"))
    outcome = grade_run(golden, [files], golden.parent / "r.jsonl", judge=config)
    assert outcome.judge is not None
    assert (outcome.judge.model, outcome.judge.trust, outcome.judge.records) == (
        "openai/paths-judge",
        "untrusted",
        str(records),
    )
    # issue 35: the Python API's note names the policy and the opt-in as Python sets them, not as flags
    assert outcome.judge.untrusted_note == (
        "untrusted judge verdicts counted: 0 of 3 (untrusted='withhold': a verdict no calibration record "
        "trusts decides nothing; opt in with untrusted='count' (make_grader, or grade_run's RunOptions))"
    )
    assert outcome.verdicts["insufficient_information"] == 1
    with pytest.raises(JudgekitError) as info:
        grade_run(
            golden, [files], golden.parent / "r2.jsonl", judge=config, options=RunOptions(require_trust=True)
        )
    assert info.value.exit_code == 1  # an untrusted judge is a finding
    assert not (golden.parent / "r2.jsonl").exists()  # refused before anything was graded


def test_grade_prints_the_outcome_as_its_json_document(
    golden: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from judgekit.cli import main

    seen = _count(monkeypatch, "grade_run_async")
    files = _transcripts(golden.parent, transcript("state-address"))
    argv = [
        "grade",
        "--cases",
        str(golden),
        "--transcripts",
        str(files),
        "--out",
        str(golden.parent / "r.jsonl"),
    ]
    assert main([*argv, "--no-progress", "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    (outcome,) = seen.results
    assert printed == {"schema_version": 1, "kind": "grade_summary", **outcome.document()}


# --------------------------------------------------------------------------- every path reaches the service


class _Counter:
    """Calls of one service function (each call goes through to the real function)."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
        self.results: list[Any] = []


def _count(monkeypatch: pytest.MonkeyPatch, name: str) -> _Counter:
    """Wrap ``judgekit.api.runs.<name>`` in a counter, wherever a loaded judgekit module holds it."""
    real = getattr(runs, name)
    counter = _Counter()
    if asyncio.iscoroutinefunction(real):

        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            counter.calls.append((args, kwargs))
            result = await real(*args, **kwargs)
            counter.results.append(result)
            return result

    else:

        def wrapper(*args: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
            counter.calls.append((args, kwargs))
            result = real(*args, **kwargs)
            counter.results.append(result)
            return result

    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("judgekit") and getattr(module, name, None) is real:
            monkeypatch.setattr(module, name, wrapper)
    return counter


SERVICE = ("grade_run_async", "plan_run", "open_results", "grade_trials")
"""The service's functions a path may reach."""


def _cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, batch: bool) -> None:
    """``judgekit grade`` on one AirDesk trial with a loopback judge, live or as a provider batch."""
    from judgekit.cli import main

    server = JudgeServer(lambda body, i: Reply(content=verdict_reply("pass"))).start()
    try:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-service-cli-0123456789")
        monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        run = airdesk_judge_run(tmp_path, server.api_base, 1)
        argv = ["grade", "--cases", str(AIRDESK), "--transcripts", str(run["transcripts"])]
        argv += ["--out", str(tmp_path / "r.jsonl"), "--no-progress", "--judge-model", "openai/gpt-4o-mini"]
        argv += ["--config", str(run["config"]), "--untrusted", "count"]
        assert main([*argv, *(["--batch", "--batch-poll", "0.05"] if batch else [])]) == 0
    finally:
        server.stop()


def _demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's grading of a run (two trials of the bundled example, the judge replayed)."""
    from judgekit.calibration.trust import TrustBook
    from judgekit.caseset import load_case_set
    from judgekit.demo import _grade_run
    from judgekit.runner import RunPlan, plan_trials

    case_set = load_case_set(AIRDESK)
    plan = plan_trials(case_set, [AIRDESK / "runs" / "agent-v1.jsonl"])
    small = RunPlan(trials=plan.trials[:2])
    _grade_run(
        case_set,
        small,
        "agent-v1",
        tmp_path / "r.jsonl",
        cassette=CASSETTE,
        book=TrustBook(tmp_path),
        say=print,
    )


def _pytest_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pytest plugin's trials (``judgekit_trial``), planned as ``judgekit grade`` plans them."""
    from judgekit.caseset import load_case_set
    from judgekit.integrations.pytest_plugin import _trials

    values, ids = _trials(
        load_case_set(AIRDESK), [AIRDESK / "runs" / "agent-v1.jsonl"], (), "--judgekit-holdout"
    )
    assert len(values) == len(ids) > 0


def _ray(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ray worker's batch (the map_batches callable, run in process: no cluster needed)."""
    from judgekit.caseset import load_case_set
    from judgekit.integrations.ray_grading import TrialBatchGrader, trial_records
    from judgekit.runner import RunPlan, plan_trials

    case_set = load_case_set(AIRDESK)
    plan = plan_trials(case_set, [AIRDESK / "runs" / "agent-v1.jsonl"])
    small = RunPlan(trials=plan.trials[:2])
    worker = TrialBatchGrader([t.case for t in small.trials], AIRDESK, run_id="r")
    rows = worker.grade_records(trial_records(small))
    assert [row["verdict"] is not None for row in rows] == [True, True]


def _python_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``judgekit.api.runs.grade_run`` itself, as a harness calls it."""
    grade_run(
        AIRDESK, [AIRDESK / "runs" / "agent-v1.jsonl"], tmp_path / "r.jsonl", options=RunOptions(report=False)
    )


PATHS: dict[str, tuple[Callable[[Path, pytest.MonkeyPatch], None], tuple[str, ...]]] = {
    "cli grade": (lambda p, m: _cli(p, m, batch=False), SERVICE),
    "cli grade --batch": (lambda p, m: _cli(p, m, batch=True), SERVICE),
    "demo": (_demo, ("grade_run_async", "open_results", "grade_trials")),
    "pytest plugin": (_pytest_plugin, ("plan_run",)),
    "ray": (_ray, ("grade_trials",)),
    "python api": (_python_api, SERVICE),
    # grade --ray's shape: the deterministic layers checked elsewhere, the run graded by the service
    "python api, deterministic pass elsewhere": (
        lambda p, m: grade_run(
            AIRDESK,
            [AIRDESK / "runs" / "agent-v1.jsonl"],
            p / "r.jsonl",
            options=RunOptions(report=False, deterministic_pass=_ChecksOfAnotherGrader()),
        ),
        SERVICE,
    ),
}
"""Each path that grades a run -> how this test takes it, and the service functions it must reach."""


@pytest.mark.parametrize("path", PATHS)
def test_every_path_reaches_the_one_service(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    take, expected = PATHS[path]
    counters = {name: _count(monkeypatch, name) for name in SERVICE}
    take(tmp_path, monkeypatch)
    reached = tuple(name for name in SERVICE if counters[name].calls)
    assert reached == expected, path
    if "grade_trials" in expected:
        batch = path.endswith("--batch")
        assert [call[1]["options"].batch for call in counters["grade_trials"].calls] == [batch], path
    if path.startswith("cli"):  # the command's options reach the service as given
        options = counters["grade_run_async"].calls[0][1]["options"]
        assert (options.untrusted, options.report) == ("count", False)
        outcome = counters["grade_run_async"].results[0]
        assert isinstance(outcome, RunOutcome)
        assert outcome.judge is not None
        assert outcome.verdicts["error"] == 0


@pytest.fixture(autouse=True)
def _no_project_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Run from a folder without a project configuration, so only the options given count."""
    monkeypatch.chdir(tmp_path)


def test_the_headline_is_the_line_judgekit_grade_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from judgekit.cli import main

    example = Path(__file__).resolve().parents[2] / "examples" / "airdesk"
    run_file = example / "runs" / "agent-v1.jsonl"
    outcome = grade_run(example, [run_file], tmp_path / "api.jsonl")
    assert outcome.headline.startswith(f"run {outcome.run_id}: graded 104 trial(s) in ")
    counts = ", ".join(f"{n} {v}" for v, n in outcome.verdicts.items() if n)
    assert outcome.headline.endswith(f"s ({counts}) -> {tmp_path / 'api.jsonl'}")
    capsys.readouterr()
    argv = [
        "grade",
        "--cases",
        str(example),
        "--transcripts",
        str(run_file),
        "--out",
        str(tmp_path / "cli.jsonl"),
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out.splitlines()[0]
    assert printed.split(" in ")[1].split("s ", 1)[1] == outcome.headline.split(" in ")[1].split("s ", 1)[
        1
    ].replace("api.jsonl", "cli.jsonl")


# --------------------------------------------------------------------------- a deterministic pass elsewhere


class _ChecksOfAnotherGrader:
    """A deterministic pass: each trial's checks from a second grader of the run, as a cluster computes them.

    ``raising`` names trials whose layers "raised there" (the exception is what comes back).
    """

    def __init__(self, raising: dict[tuple[str, int], BaseException] | None = None) -> None:
        self.raising = raising or {}
        self.asked: list[tuple[str, int]] = []

    def checks(self, trials: Any, *, root: Path, grounding: Any, say: Callable[[str], None]) -> Any:
        from judgekit.runner import RunPlan

        elsewhere = runs.trial_grader(root, RunPlan(trials=list(trials)), grounding=grounding)
        try:
            self.asked = [t.key for t in trials]
            say(f"checked {len(trials)} trial(s) elsewhere")
            return {
                t.key: self.raising.get(t.key) or elsewhere.deterministic_checks(t.case, t.transcript)
                for t in trials
            }
        finally:
            elsewhere.close()


def _lines_but_run_id_and_duration(path: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        del row["run_id"], row["duration_s"]
    return rows


def test_a_deterministic_pass_elsewhere_gives_the_in_process_lines_in_order(tmp_path: Path) -> None:
    transcripts = [AIRDESK / "runs" / "agent-v1.jsonl"]
    here = grade_run(AIRDESK, transcripts, tmp_path / "here.jsonl", options=RunOptions(report=False))
    given = _ChecksOfAnotherGrader()
    elsewhere = grade_run(
        AIRDESK,
        transcripts,
        tmp_path / "elsewhere.jsonl",
        options=RunOptions(report=False, deterministic_pass=given),
    )
    assert len(given.asked) == 104
    assert elsewhere.notes[-1] == "checked 104 trial(s) elsewhere"
    assert elsewhere.verdicts == here.verdicts
    assert _lines_but_run_id_and_duration(tmp_path / "elsewhere.jsonl") == _lines_but_run_id_and_duration(
        tmp_path / "here.jsonl"
    )


def test_a_deterministic_pass_is_asked_only_for_the_trials_a_resume_has_left(tmp_path: Path) -> None:
    transcripts = [AIRDESK / "runs" / "agent-v1.jsonl"]
    out = tmp_path / "out.jsonl"
    grade_run(AIRDESK, transcripts, out, options=RunOptions(report=False))
    out.write_text("".join(out.read_text(encoding="utf-8").splitlines(keepends=True)[:100]), encoding="utf-8")
    given = _ChecksOfAnotherGrader()
    done = grade_run(
        AIRDESK, transcripts, out, options=RunOptions(report=False, resume=True, deterministic_pass=given)
    )
    assert len(given.asked) == done.graded == 4
    assert done.already_graded == 100


def test_layers_that_raised_elsewhere_make_the_trial_an_error_as_in_process(tmp_path: Path) -> None:
    from judgekit.caseset import load_case_set
    from judgekit.runner import plan_trials

    first = plan_trials(load_case_set(AIRDESK), [AIRDESK / "runs" / "agent-v1.jsonl"]).trials[0]
    given = _ChecksOfAnotherGrader({first.key: ValueError("page 7 of the state is torn")})
    done = grade_run(
        AIRDESK,
        [AIRDESK / "runs" / "agent-v1.jsonl"],
        tmp_path / "out.jsonl",
        options=RunOptions(report=False, deterministic_pass=given),
    )
    assert done.grader_errors == 1
    line = json.loads((tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert (line["case"]["id"], line["trial"]) == first.key
    assert line["verdict"] == "error"
    assert [c["reason"] for c in line["checks"]] == [
        "the grader raised ValueError: page 7 of the state is torn"
    ]
