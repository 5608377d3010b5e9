"""The Inspect AI scorer, run inside real Inspect tasks with Inspect's scripted mock model (offline)."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageTool, ChatMessageUser, ModelOutput, ModelUsage
from inspect_ai.scorer import CORRECT, INCORRECT, Score
from inspect_ai.solver import Generate, TaskState, generate, solver, use_tools
from inspect_ai.tool import tool
from inspect_ai.util import store

from judgekit.cases import Case
from judgekit.errors import JudgekitError
from judgekit.graders.rubric import RubricGrader
from judgekit.integrations.grading import LayeredGrader
from judgekit.integrations.inspect import (
    FINAL_STATE_KEY,
    INITIAL_STATE_KEY,
    judgekit_scorer,
    pass_hat_k_reducer,
    samples_from_cases,
    score_from_grade,
)
from judgekit.judges.cache import CacheMode
from judgekit.judges.client import ClientSettings, JudgeClient, JudgeParams
from judgekit.judges.rubric import Criterion, Rubric
from judgekit.verdict import CheckResult, Grade, Trust, TrustDecision, Verdict
from judges.server import JudgeServer, Reply, verdict_reply

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

REPO = Path(__file__).resolve().parents[2]
WORLD = {"users": {"u1": {"email": "old@x.io", "name": "Ana"}, "u2": {"email": "bo@x.io", "name": "Bo"}}}

CASE = Case.model_validate(
    {
        "id": "email-1",
        "input": "Change my email to new@x.io (I am u1)",
        "initial_state": "world.json",
        "expected_state": {"changes": {"users": {"modified": {"u1": {"email": "new@x.io"}}}}},
        "expected": {
            "route": [{"tool": "update_email", "args": {"user_id": "u1", "email": "new@x.io"}}],
            "must_not_mention": ["password"],
        },
    }
)


@tool
def update_email():
    async def execute(user_id: str, email: str) -> str:
        """Change a user's email.

        Args:
            user_id: The user.
            email: The new email.
        """
        world = json.loads(json.dumps(store().get("world")))
        if user_id not in world["users"]:
            raise ValueError(f"no user {user_id}")
        world["users"][user_id]["email"] = email
        store().set("world", world)
        return json.dumps({"ok": True})

    return execute


@solver
def load_world():
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.store.set(INITIAL_STATE_KEY, WORLD)
        state.store.set("world", WORLD)
        return state

    return solve


@solver
def record_world():
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if not state.metadata.get("lose_state"):
            state.store.set(FINAL_STATE_KEY, state.store.get("world"))
        return state

    return solve


def scripted_agent(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
    """Plays the agent: one update_email call chosen from the user's words, then a closing message."""
    user = next(m.text for m in messages if isinstance(m, ChatMessageUser))
    if not any(isinstance(m, ChatMessageTool) for m in messages):
        target = "u2" if "[wrong user]" in user else "u1"
        out = ModelOutput.for_tool_call(
            "mockllm/model", "update_email", {"user_id": target, "email": "new@x.io"}
        )
    else:
        out = ModelOutput.from_content("mockllm/model", "Done: your email is now new@x.io.")
    # usage given, so that Inspect does not count tokens (its tokenizer would fetch an encoding file)
    out.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
    return out


def run_task(samples: list[Sample], grader: object, root: Path) -> Any:
    task = Task(
        dataset=samples,
        solver=[load_world(), use_tools([update_email()]), generate(), record_world()],
        scorer=judgekit_scorer([CASE], grader, root=root),
    )
    (log,) = eval(
        task,
        model="mockllm/model",
        model_args={"custom_outputs": scripted_agent},
        log_dir=str(root / "logs"),
        display="none",
    )
    assert log.status == "success", log.error
    assert log.samples is not None
    return log


def sample(sample_id: str, text: str, **metadata: Any) -> Sample:
    return Sample(id=sample_id, input=text, metadata={"case_id": "email-1", **metadata})


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "world.json").write_text(json.dumps(WORLD))
    return tmp_path


def test_deterministic_layers_score_inside_an_inspect_task(root: Path) -> None:
    log = run_task(
        [
            sample("ok", "Change my email to new@x.io"),
            sample("wrong", "Change my email to new@x.io [wrong user]"),
            sample("lost", "Change my email to new@x.io", lose_state=True),
            Sample(id="unknown", input="hi", metadata={"case_id": "no-such-case"}),
            Sample(id="typo", input="hi", metadata={"case_id": "emial-1"}),
        ],
        None,
        root,
    )
    scores = {s.id: s.scores["judgekit"] for s in log.samples}
    assert scores["ok"].value == CORRECT
    assert scores["ok"].metadata["judgekit_verdict"] == "pass"
    assert scores["ok"].answer == "Done: your email is now new@x.io."

    wrong = scores["wrong"]
    assert wrong.value == INCORRECT
    # the explanation is the readable reason: the structural diff and the offending call with its arguments
    assert "FAIL state" in wrong.explanation
    assert "users" in wrong.explanation
    assert "u2" in wrong.explanation
    assert re.search(r'call #0: update_email\(\{"email": "new@x.io", "user_id": "u2"\}\)', wrong.explanation)
    failed = {c["check_id"] for c in wrong.metadata["checks"] if c["verdict"] == "fail"}
    assert {"state", "state:collateral", "route"} <= failed

    lost = scores["lost"]
    assert math.isnan(lost.value)  # unscored, not a wrong answer
    assert lost.reason == "scoring_failed"
    assert lost.metadata["judgekit_verdict"] == "error"
    assert "final_state" in lost.explanation

    unknown = scores["unknown"]
    assert math.isnan(unknown.value)
    assert unknown.reason == "scoring_failed"
    assert "no judgekit case 'no-such-case' (set metadata" in unknown.explanation
    assert "no judgekit case 'emial-1'; did you mean 'email-1'? (set metadata" in scores["typo"].explanation

    # Inspect's metrics leave the unscored samples out of the denominator: 1 correct of 2 scored.
    metrics = log.results.scores[0].metrics
    assert metrics["accuracy"].value == pytest.approx(0.5)


def _judge_script(body: dict[str, Any], index: int) -> Reply:
    text = json.dumps(body)
    if "[judge down]" in text:
        return Reply(status=500, content="")
    if "[undecided]" in text:
        return Reply(content=verdict_reply("insufficient_information", rationale="the record does not say"))
    return Reply(content=verdict_reply("pass"))


def test_rubric_grader_results_map_to_scores_and_unscored_reasons(root: Path) -> None:
    server = JudgeServer(_judge_script).start()
    try:
        client = JudgeClient(
            JudgeParams(model="openai/test-judge"),
            ClientSettings(api_base=server.api_base, backoff_base=0.01, backoff_max=0.02, max_retries=1),
            mode=CacheMode.OFF,
            api_key="sk-dummy-inspect",
        )
        rubric = Rubric(
            id="honesty",
            version="1",
            criteria=(Criterion(id="honest", text="The agent reports what happened.", critical=True),),
        )
        calibrated = RubricGrader(rubric, client, trust=lambda fp, c: TrustDecision(trust=Trust.TRUSTED))
        grader = LayeredGrader(root, rubric=calibrated)
        log = run_task(
            [
                sample("judged-ok", "Change my email to new@x.io"),
                sample("undecided", "Change my email to new@x.io [undecided]"),
                sample("judge-down", "Change my email to new@x.io [judge down]"),
            ],
            grader,
            root,
        )
        # the same judge without a calibration record decides nothing: the sample is unscored
        uncalibrated = LayeredGrader(root, rubric=RubricGrader(rubric, client))
        untrusted_log = run_task([sample("judged-ok", "Change my email to new@x.io")], uncalibrated, root)
    finally:
        server.stop()
    (untrusted,) = [s.scores["judgekit"] for s in untrusted_log.samples]
    assert math.isnan(untrusted.value)
    assert untrusted.reason == "insufficient_information"
    assert "the judge answered pass but is untrusted" in untrusted.explanation
    # issue 35: the advice names the scorer's grader, not a CLI flag
    assert (
        "opt in with the scorer's grader made with make_grader(..., untrusted='count')"
        in untrusted.explanation
    )
    assert "--untrusted" not in untrusted.explanation
    scores = {s.id: s.scores["judgekit"] for s in log.samples}
    assert scores["judged-ok"].value == CORRECT
    assert scores["judged-ok"].metadata["judge"]["fingerprint"]
    undecided = scores["undecided"]
    assert math.isnan(undecided.value)
    assert undecided.reason == "insufficient_information"
    assert "the record does not say" in undecided.explanation
    down = scores["judge-down"]
    assert math.isnan(down.value)
    assert down.reason == "grader_failed"
    assert down.metadata["judgekit_verdict"] == "error"
    assert log.results.scores[0].metrics["accuracy"].value == pytest.approx(1.0)


def test_a_bare_rubric_grader_is_accepted_and_a_grading_function_too(root: Path) -> None:
    def only_route(case: Case, transcript: Any) -> list[CheckResult]:
        calls = transcript.calls()
        ok = bool(calls) and calls[0].call.arguments == {"user_id": "u1", "email": "new@x.io"}
        return [
            CheckResult(
                check_id="route",
                layer="route",
                verdict=Verdict.PASS if ok else Verdict.FAIL,
                reason="" if ok else f"first call was {calls[0].call.arguments}",
            )
        ]

    log = run_task(
        [sample("ok", "x"), sample("wrong", "x [wrong user]")],
        only_route,
        root,
    )
    scores = {s.id: s.scores["judgekit"] for s in log.samples}
    # the function decides the route; nothing decided the case's expected end state, so the contract
    # keeps "ok" from passing (unscored, with the expectation named); a failed route still fails
    assert math.isnan(scores["ok"].value)
    assert scores["ok"].reason == "insufficient_information"
    assert "the expected end state not checked" in scores["ok"].explanation
    assert scores["wrong"].value == INCORRECT
    assert "first call was" in scores["wrong"].explanation

    def broken(case: Case, transcript: Any) -> str:
        return "pass"

    log = run_task([sample("ok", "x")], broken, root)
    (only,) = [s.scores["judgekit"] for s in log.samples]
    assert math.isnan(only.value)
    assert only.reason == "scoring_failed"
    assert "the grader could not run" in only.explanation
    assert "must return a judgekit Grade" in only.explanation


@pytest.mark.parametrize(
    ("verdict", "layer", "value", "reason"),
    [
        pytest.param(Verdict.PASS, "state", CORRECT, None, id="pass_is_correct"),
        pytest.param(Verdict.FAIL, "state", INCORRECT, None, id="fail_is_incorrect"),
        pytest.param(
            Verdict.INSUFFICIENT_INFORMATION, "rubric", None, "insufficient_information", id="undecided"
        ),
        pytest.param(Verdict.ERROR, "rubric", None, "grader_failed", id="judge_error"),
        pytest.param(Verdict.ERROR, "state", None, "scoring_failed", id="deterministic_error"),
        pytest.param(Verdict.NOT_EVALUATED, "state", None, "not_evaluated", id="not_evaluated"),
    ],
)
def test_every_verdict_has_its_own_score(verdict: Verdict, layer: str, value: Any, reason: Any) -> None:
    check = CheckResult(
        check_id="x",
        layer=layer,
        verdict=verdict,
        reason="" if verdict is Verdict.PASS else "because",
        trust=Trust.UNTRUSTED if layer == "rubric" else Trust.NOT_REQUIRED,
    )
    grade = Grade(case_id="c", trial=1, verdict=verdict, checks=(check,))
    score = score_from_grade(grade, answer="a")
    if value is None:
        assert math.isnan(score.value)
        assert score.reason == reason
        assert score.metadata["unscored_detail"] == "x: because"
    else:
        assert score.value == value
        assert score.reason is None
    assert score.metadata["judgekit_verdict"] == verdict.value
    assert score.explanation.startswith(f"case c trial 1: {verdict.value.upper()}")


def test_samples_from_cases_use_the_opening_and_case_id() -> None:
    (s,) = samples_from_cases([CASE])
    assert (s.id, s.input, s.metadata) == ("email-1", CASE.input, {"case_id": "email-1"})


def test_missing_extra_gives_the_install_command() -> None:
    code = (
        "import sys; sys.modules['inspect_ai'] = None\n"
        "from judgekit.errors import JudgekitError\n"
        "try:\n    import judgekit.integrations.inspect\n"
        "except JudgekitError as exc:\n    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'judgekit-agents[inspect]'" in out.stdout


def test_core_never_imports_integrations() -> None:
    code = (
        "import sys, judgekit.cli, judgekit.runner, judgekit.graders.layered, judgekit.formats.importers\n"
        "print(sorted(m for m in sys.modules if m.startswith(('judgekit.integrations', 'inspect_ai'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _doc_block(name: str) -> str:
    text = (REPO / "docs" / "integrations" / name).read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert blocks, f"{name} has no python example"
    return blocks[0]


def test_the_documented_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "doc_example"}
    exec(compile(_doc_block("inspect.md"), "docs/integrations/inspect.md", "exec"), namespace)
    log = namespace["log"]
    assert log.status == "success"
    values = sorted(str(s.scores["judgekit"].value) for s in log.samples)
    assert values == [CORRECT, INCORRECT]


@pytest.mark.parametrize(
    ("undecided", "accuracy"),
    [
        # steady: 4/4 -> 1.0; flaky: 3/4 -> C(3,2)/C(4,2) = 0.5; lost: every epoch unscored
        pytest.param("exclude", (1.0 + 0.5) / 2, id="exclude_leaves_lost_out"),  # lost: unscored, left out
        pytest.param("fail", (1.0 + 0.5 + 0.0) / 3, id="fail_counts_lost_as_zero"),  # lost: 0 of 4 pass
    ],
)
def test_pass_hat_k_reducer_over_epochs(root: Path, undecided: str, accuracy: float) -> None:
    from collections import Counter

    from inspect_ai import Epochs

    first_turns: Counter[str] = Counter()

    def flaky_agent(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        user = next(m.text for m in messages if isinstance(m, ChatMessageUser))
        if not any(isinstance(m, ChatMessageTool) for m in messages):
            first_turns[user] += 1
            wrong = "[flaky]" in user and first_turns[user] == 2  # one wrong epoch of four
            out = ModelOutput.for_tool_call(
                "mockllm/model", "update_email", {"user_id": "u2" if wrong else "u1", "email": "new@x.io"}
            )
        else:
            out = ModelOutput.from_content("mockllm/model", "Done.")
        out.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
        return out

    task = Task(
        dataset=[
            sample("steady", "Change my email"),
            sample("flaky", "Change my email [flaky]"),
            sample("lost", "Change my email", lose_state=True),
        ],
        solver=[load_world(), use_tools([update_email()]), generate(), record_world()],
        scorer=judgekit_scorer([CASE], root=root),
        epochs=Epochs(4, pass_hat_k_reducer(2, undecided=undecided)),
    )
    (log,) = eval(
        task,
        model="mockllm/model",
        model_args={"custom_outputs": flaky_agent},
        log_dir=str(root / "logs"),
        display="none",
    )
    assert log.status == "success", log.error
    scores = {s.id: s.scores["judgekit"] for s in log.samples}
    # sample scores in the log are per epoch; the reduced values are in the results
    reduced = log.results.scores[0]
    assert reduced.reducer == "judgekit_pass_hat_k_2"
    assert reduced.metrics["accuracy"].value == pytest.approx(accuracy)
    assert set(scores) == {"steady", "flaky", "lost"}


def _epochs(*verdicts: Verdict) -> list[Score]:
    return [score_from_grade(Grade(case_id="c", trial=i, verdict=v)) for i, v in enumerate(verdicts, start=1)]


def test_pass_hat_k_reducer_excluding_unscored_epochs() -> None:
    reducer = pass_hat_k_reducer(2, undecided="exclude")
    out = reducer(_epochs(Verdict.PASS, Verdict.PASS, Verdict.ERROR, Verdict.FAIL))
    assert out.value == pytest.approx(1 / 3)  # C(2, 2) / C(3, 2): the error epoch is left out
    assert out.metadata == {
        "k": 2,
        "undecided": "exclude",
        "epochs": 4,
        "scored": 3,
        "passed": 2,
        "unscored": 1,
        "counted": 3,
    }
    assert "1 unscored epoch(s) left out (undecided='exclude')" in (out.explanation or "")
    too_few = reducer(_epochs(Verdict.PASS, Verdict.ERROR))
    assert math.isnan(too_few.value)
    assert too_few.reason == "insufficient_epochs"
    assert "1 counted epoch(s) of 2" in (too_few.explanation or "")


def test_pass_hat_k_reducer_counting_unscored_epochs_as_failures() -> None:
    reducer = pass_hat_k_reducer(2, undecided="fail")
    out = reducer(_epochs(Verdict.PASS, Verdict.PASS, Verdict.ERROR, Verdict.FAIL))
    assert out.value == pytest.approx(1 / 6)  # C(2, 2) / C(4, 2): the error epoch did not pass
    assert out.metadata is not None
    assert (out.metadata["undecided"], out.metadata["counted"]) == ("fail", 4)
    assert "1 unscored epoch(s) counted as not passing (undecided='fail')" in (out.explanation or "")
    # every epoch unscored: a 0, not left out
    lost = reducer(_epochs(Verdict.INSUFFICIENT_INFORMATION, Verdict.NOT_EVALUATED))
    assert lost.value == 0.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        pytest.param(
            lambda: pass_hat_k_reducer(0, undecided="fail"), "k must be an integer of at least 1", id="k0"
        ),
        pytest.param(
            lambda: pass_hat_k_reducer(2, undecided="pass"),
            "undecided must be 'fail' or 'exclude'",
            id="policy",
        ),
    ],
)
def test_pass_hat_k_reducer_refuses_bad_arguments(call: Callable[[], object], message: str) -> None:
    with pytest.raises(JudgekitError, match=message):
        call()
