"""Every grading path holds the one grading contract (src/judgekit/graders/contract.py).

The paths that grade one trial are enumerated in :data:`PATHS`: the Python API, the pytest plugin,
Inspect AI, promptfoo and tau-bench. The paths that grade a run (``judgekit grade`` with or without
``--batch``, the demo, Ray, the pytest plugin's trials, the Python API's ``grade_run``) all reach one run
service, ``judgekit.api.runs``: ``tests/api/test_runs.py`` holds that every one of them reaches it, and
checks the same scenarios there once, on the service. The structural test below checks that no module
builds a verdict of its own. Each scenario states what a pass means and checks it on every path:

* a plain task contract graded without a judge is never ``pass`` (its required outcome was not checked);
* a missing required mention fails the case;
* an uncalibrated judge that answers ``pass`` does not pass the case by default, and does with
  ``untrusted="count"``;
* a calibrated judge decides;
* a trial from a lossy trace is graded only by the layers whose needs it records.

A new grading path is one entry in :data:`PATHS`; a module that builds a ``Grade`` outside the contract
fails :func:`test_no_module_decides_a_verdict_outside_the_contract`.
"""

from __future__ import annotations

import ast
import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from judgekit.advice import ADVICE, AdvicePath
from judgekit.cases import Case
from judgekit.caseset import load_case_set
from judgekit.graders.contract import UntrustedPolicy
from judgekit.graders.layered import LayeredGrader
from judgekit.graders.rubric import RubricGrader
from judgekit.judges.client import CacheMode, ClientSettings, JudgeClient, JudgeParams
from judgekit.judges.rubric import Criterion, Rubric
from judgekit.transcript import Transcript
from judgekit.verdict import Trust, TrustDecision, Verdict
from judges.server import JudgeServer, Reply, verdict_reply

SRC = Path(__file__).resolve().parents[1] / "src" / "judgekit"

WORLD = {"customers": {"c1": {"name": "Ada Lovelace", "address": "1 Old Road"}}}
WRONG = {"customers": {"c1": {"name": "Ada Byron", "address": "13 Elm Street"}}}

PLAIN = """\
id: plain-address
version: 1
initial_state: fixtures/world.json
user_goal: Change my delivery address to 12 Elm Street.
required_outcome: The delivery address of customer c1 is 12 Elm Street and nothing else changed.
forbidden_outcomes:
  - The customer's name is changed
"""

MENTION = """\
id: mention-refund
version: 1
input: Where is my refund?
expected:
  must_mention: ["refund of 412.18 was issued"]
"""

STATE = """\
id: state-address
version: 1
initial_state: fixtures/world.json
input: Change my delivery address to 12 Elm Street.
expected_state:
  changes:
    customers:
      modified:
        c1: {address: "12 Elm Street"}
expected:
  must_mention: ["12 Elm Street"]
"""


def _messages(reply: str, *, with_call: bool = True) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": "Change my delivery address to 12 Elm Street."}]
    if with_call:
        out.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {
                            "name": "update_customer",
                            "arguments": json.dumps(
                                {"id": "c1", "address": "13 Elm Street", "name": "Ada Byron"}
                            ),
                        },
                    }
                ],
            }
        )
        out.append({"role": "tool", "tool_call_id": "c1", "content": '{"status": "ok"}'})
    out.append({"role": "assistant", "content": reply})
    return out


def transcript(
    case_id: str, reply: str = "Done: your address is now 12 Elm Street.", **extra: Any
) -> Transcript:
    data: dict[str, Any] = {
        "case_id": case_id,
        "trial": 1,
        "messages": _messages(reply),
        "initial_state": {"data": WORLD},
        "final_state": {"data": WRONG},
        **extra,
    }
    return Transcript.model_validate(data)


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    root = tmp_path / "golden"
    root.mkdir()
    (root / "fixtures").mkdir()
    (root / "fixtures" / "world.json").write_text(json.dumps(WORLD))
    (root / "cases").mkdir()
    for name, text in (("plain", PLAIN), ("mention", MENTION), ("state", STATE)):
        (root / "cases" / f"{name}.yaml").write_text(text)
    load_case_set(root).raise_if_invalid()
    return root


def _case(root: Path, case_id: str) -> Case:
    return load_case_set(root).by_id()[case_id].case


# --------------------------------------------------------------------------- the judge


@pytest.fixture
def judge() -> Iterator[JudgeServer]:
    """A loopback OpenAI-compatible judge that answers pass to every criterion."""
    server = JudgeServer(lambda body, i: Reply(content=verdict_reply("pass"))).start()
    yield server
    server.stop()


EMPTY_RUBRIC = Rubric(
    id="paths",
    version="1",
    criteria=(Criterion(id="polite", text="The agent is polite.", critical=False),),
)


def rubric_grader(server: JudgeServer, *, trusted: bool) -> RubricGrader:
    client = JudgeClient(
        JudgeParams(model="openai/paths-judge"),
        ClientSettings(api_base=server.api_base, backoff_base=0.01, backoff_max=0.02, max_retries=0),
        mode=CacheMode.OFF,
        api_key="sk-paths",
    )

    def trust(fingerprint: str, criterion: str) -> TrustDecision:
        if trusted:
            return TrustDecision(trust=Trust.TRUSTED, reason="calibration record paths.json")
        return TrustDecision(trust=Trust.UNTRUSTED, reason=f"no calibration record for {fingerprint[:8]}")

    return RubricGrader(EMPTY_RUBRIC, client, trust=trust)


# --------------------------------------------------------------------------- the paths

Outcome = tuple[Verdict, str]
"""A path's answer: the case verdict and the text it shows a person."""

Path_ = Callable[[Path, Case, Transcript, "RubricGrader | None", UntrustedPolicy], Outcome]


def via_api(
    root: Path, case: Case, t: Transcript, rubric: RubricGrader | None, policy: UntrustedPolicy
) -> Outcome:
    from judgekit.api.grading import grade as grade_trial

    grade = grade_trial(case, t, grader=LayeredGrader(root, rubric=rubric, untrusted=policy))
    return grade.verdict, grade.explain()


def via_pytest(
    root: Path, case: Case, t: Transcript, rubric: RubricGrader | None, policy: UntrustedPolicy
) -> Outcome:
    from judgekit.integrations.pytest_plugin import GradeAssertionError, assert_grade

    try:
        grade = assert_grade(case, t, grader=LayeredGrader(root, rubric=rubric, untrusted=policy))
    except GradeAssertionError as exc:
        return exc.grade.verdict, str(exc)
    return grade.verdict, ""


def via_inspect(
    root: Path, case: Case, t: Transcript, rubric: RubricGrader | None, policy: UntrustedPolicy
) -> Outcome:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelName
    from inspect_ai.scorer import CORRECT, INCORRECT, Target
    from inspect_ai.solver import TaskState

    from judgekit.integrations.inspect import FINAL_STATE_KEY, INITIAL_STATE_KEY, judgekit_scorer

    scorer = judgekit_scorer([case], LayeredGrader(root, rubric=rubric, untrusted=policy), root=root)
    messages: list[Any] = [ChatMessageUser(content=t.messages[0].content or "")]
    messages.append(ChatMessageAssistant(content=t.messages[-1].content or ""))
    state = TaskState(
        model=ModelName("mockllm/model"),
        sample_id="s",
        epoch=1,
        input=t.messages[0].content or "",
        messages=messages,
        metadata={"case_id": case.id},
        store={INITIAL_STATE_KEY: WORLD, FINAL_STATE_KEY: WRONG},
    )
    score = asyncio.run(scorer(state, Target("")))
    assert score is not None
    verdict = {CORRECT: Verdict.PASS, INCORRECT: Verdict.FAIL}.get(score.value)  # type: ignore[call-overload]
    if verdict is None:
        verdict = Verdict(score.metadata["judgekit_verdict"]) if score.metadata else Verdict.ERROR
    return verdict, score.explanation or ""


def via_promptfoo(
    root: Path, case: Case, t: Transcript, rubric: RubricGrader | None, policy: UntrustedPolicy
) -> Outcome:
    from judgekit.integrations.promptfoo import grade_output, grading_result

    output = json.dumps({"messages": [m.model_dump(mode="json", exclude_none=True) for m in t.messages]})
    context = {
        "vars": {"case_id": case.id, "initial_state": {"data": WORLD}, "final_state": {"data": WRONG}},
        "config": {"cases": str(root)},
    }
    grade = grade_output(output, context, grader=LayeredGrader(root, rubric=rubric, untrusted=policy))
    result = grading_result(grade)
    assert result["pass"] is (grade.verdict is Verdict.PASS)
    return grade.verdict, result["reason"] + grade.explain()


def via_taubench(
    root: Path, case: Case, t: Transcript, rubric: RubricGrader | None, policy: UntrustedPolicy
) -> Outcome:
    from judgekit.api.grading import grade as grade_trial
    from judgekit.integrations.taubench import TauBenchGrader

    grade = grade_trial(case, t, grader=TauBenchGrader(root, rubric=rubric, untrusted=policy))
    return grade.verdict, grade.explain()


PATHS: dict[str, Path_] = {
    "api": via_api,
    "pytest": via_pytest,
    "inspect": via_inspect,
    "promptfoo": via_promptfoo,
    "tau-bench": via_taubench,
}
ADVICE_OF_PATH: dict[str, AdvicePath] = {
    "api": "python",
    "pytest": "pytest",
    "inspect": "inspect",
    "promptfoo": "promptfoo",
    "tau-bench": "python",
}
"""The wording of advice each path's reasons use (:data:`judgekit.advice.ADVICE`)."""


# --------------------------------------------------------------------------- scenarios


@pytest.mark.parametrize("path", PATHS)
def test_a_plain_contract_without_a_judge_never_passes(golden: Path, path: str) -> None:
    verdict, text = PATHS[path](
        golden, _case(golden, "plain-address"), transcript("plain-address"), None, "withhold"
    )
    assert verdict is Verdict.NOT_EVALUATED
    assert "required outcome (The delivery address of customer c1" in text
    # issue 35: the advice names how a judge is given on this path (a CLI flag only on the command line)
    advice = ADVICE[ADVICE_OF_PATH[path]]
    assert f"give a judge ({advice.judge}) whose calibration record trusts its fingerprint" in text
    assert "--judge-model" not in text


@pytest.mark.parametrize("path", PATHS)
def test_a_missing_required_mention_fails(golden: Path, path: str) -> None:
    t = transcript("mention-refund", reply="Sorry, I cannot see anything.")
    verdict, text = PATHS[path](golden, _case(golden, "mention-refund"), t, None, "withhold")
    assert verdict is Verdict.FAIL
    assert "refund of 412.18 was issued" in text


@pytest.mark.parametrize("path", PATHS)
def test_a_wrong_end_state_fails(golden: Path, path: str) -> None:
    verdict, text = PATHS[path](
        golden, _case(golden, "state-address"), transcript("state-address"), None, "withhold"
    )
    assert verdict is Verdict.FAIL
    assert "13 Elm Street" in text


@pytest.mark.parametrize("path", PATHS)
def test_an_uncalibrated_judge_decides_nothing_by_default(
    golden: Path, judge: JudgeServer, path: str
) -> None:
    case = _case(golden, "plain-address")
    verdict, text = PATHS[path](
        golden, case, transcript("plain-address"), rubric_grader(judge, trusted=False), "withhold"
    )
    assert verdict is Verdict.INSUFFICIENT_INFORMATION
    assert "untrusted" in text


@pytest.mark.parametrize("path", PATHS)
def test_counting_an_uncalibrated_judge_is_an_explicit_opt_in(
    golden: Path, judge: JudgeServer, path: str
) -> None:
    case = _case(golden, "plain-address")
    verdict, _ = PATHS[path](
        golden, case, transcript("plain-address"), rubric_grader(judge, trusted=False), "count"
    )
    assert verdict is Verdict.PASS


# `judgekit grade` takes trust from calibration records only: tests/commands/test_contract_cli.py
# calibrates the judge with `judgekit calibrate` and shows the command then lets it decide.
@pytest.mark.parametrize("path", PATHS)
def test_a_calibrated_judge_decides(golden: Path, judge: JudgeServer, path: str) -> None:
    case = _case(golden, "plain-address")
    verdict, _ = PATHS[path](
        golden, case, transcript("plain-address"), rubric_grader(judge, trusted=True), "withhold"
    )
    assert verdict is Verdict.PASS


LOSSY_PATHS = ("api", "pytest", "tau-bench")
"""The paths that take a transcript as recorded; Inspect and promptfoo build theirs from their own state,
which is never an imported trace."""


def _lossy(t: Transcript) -> Transcript:
    from judgekit.fidelity import FidelityReport

    report = FidelityReport(
        trace_id="t1",
        conventions=("genai-events",),
        spans=3,
        model_spans=2,
        tool_spans=1,
        messages=len(t.messages),
        tool_calls=1,
        missing_parents=1,
    )
    return t.model_copy(update={"metadata": {**t.metadata, "fidelity": report.model_dump(mode="json")}})


@pytest.mark.parametrize("path", LOSSY_PATHS)
def test_a_lossy_trace_is_graded_only_by_the_layers_it_supports(golden: Path, path: str) -> None:
    t = _lossy(transcript("mention-refund", reply="Sorry, I cannot see anything."))
    verdict, text = PATHS[path](golden, _case(golden, "mention-refund"), t, None, "withhold")
    # the export lost spans, so the agent's messages may be incomplete: a missing mention decides nothing
    assert verdict is Verdict.INSUFFICIENT_INFORMATION
    assert "lossy trace" in text


@pytest.mark.parametrize("grader_kind", ["layered", "tau-bench", "runner"])
def test_every_check_names_a_contract_layer(golden: Path, judge: JudgeServer, grader_kind: str) -> None:
    """Every check any grading path produces belongs to a layer the contract classifies."""
    from judgekit.api.grading import grade as grade_trial
    from judgekit.graders.registry import layer_of
    from judgekit.integrations.taubench import TauBenchGrader
    from judgekit.runner import LayeredTrialGrader

    rubric = rubric_grader(judge, trusted=True)
    for case_id in ("plain-address", "mention-refund", "state-address"):
        case = _case(golden, case_id)
        for t in (transcript(case_id), _lossy(transcript(case_id)), transcript("someone-else")):
            if grader_kind == "layered":
                grade = grade_trial(case, t, grader=LayeredGrader(golden, rubric=rubric))
            elif grader_kind == "tau-bench":
                grade = grade_trial(case, t, grader=TauBenchGrader(golden, rubric=rubric))
            else:
                runner = LayeredTrialGrader(golden, rubric)
                try:
                    grade = asyncio.run(runner.grade(case, t))
                finally:
                    runner.close()
            assert grade.checks
            assert all(layer_of(c) is not None for c in grade.checks), [c.layer for c in grade.checks]


def test_every_lossy_path_is_a_path() -> None:
    assert set(LOSSY_PATHS) <= set(PATHS)


# --------------------------------------------------------------------------- structure


ALLOWED_GRADE_BUILDERS = {
    # the contract's own assembly point
    ("graders/layered.py", "combine"),
    # a grader that raised: an error verdict, never a pass
    ("runner.py", "_error_grade"),
    # the verdicts another harness stored (tau-bench's reward), kept apart as layer "imported"
    ("formats/importers.py", "reward_result_lines"),
    # a result line read back as the grade it records (verdict and reason copied, nothing decided)
    ("results.py", "as_grade"),
}


def _grade_builders() -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(func):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id in {"Grade", "combine_gate_verdicts"}
                ):
                    found.add((path.relative_to(SRC).as_posix(), func.name))
    return found


def test_no_module_decides_a_verdict_outside_the_contract() -> None:
    builders = _grade_builders()
    builders.discard(("verdict.py", "combine_gate_verdicts"))
    builders.discard(("graders/contract.py", "settle"))
    assert builders <= ALLOWED_GRADE_BUILDERS, sorted(builders - ALLOWED_GRADE_BUILDERS)


def test_every_grading_path_grades_through_the_layered_grader() -> None:
    """The integrations, the runner, the run service and Ray grading build their graders from LayeredGrader.

    The demo grades its runs through the run service (``tests/api/test_runs.py`` holds that it reaches
    it). Ray grading (``integrations/ray_grading.py``) runs the service's ``grade_trials`` with a
    ``LayeredTrialGrader`` on the workers; ``tests/integrations/test_ray_grading.py`` checks that its lines
    equal what ``judgekit grade`` writes for the same trials (the scenarios here would each start a Ray
    cluster, so they are not repeated on it).
    """
    modules = (
        "runner.py",
        "api/runs.py",
        "integrations/grading.py",
        "integrations/taubench.py",
        "integrations/ray_grading.py",
    )
    for module in modules:
        text = (SRC / module).read_text(encoding="utf-8")
        assert "LayeredGrader" in text or "LayeredTrialGrader" in text, module
