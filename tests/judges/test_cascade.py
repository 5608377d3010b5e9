"""The cascade file and its routing, in the grader, over a loopback OpenAI-compatible server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from judgekit.calibration.selective import fit_cascade
from judgekit.errors import JudgekitError
from judgekit.graders.rubric import CascadeRouting, RubricGrader
from judgekit.judges.cache import CacheMode
from judgekit.judges.cascade import Cascade, CascadeStage, load_cascade
from judgekit.judges.client import ClientSettings, JudgeClient, JudgeParams
from judgekit.judges.rubric import Criterion, Rubric
from judgekit.transcript import Transcript
from judgekit.verdict import Verdict
from judges.server import JudgeServer, Reply, verdict_reply

RUBRIC = Rubric(id="r", version="1", criteria=(Criterion(id="polite", text="The agent is polite."),))
TRANSCRIPT = Transcript.model_validate(
    {
        "case_id": "c",
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
    }
)


def _stage(name: str, model: str, threshold: float | None) -> CascadeStage:
    return CascadeStage(
        name=name,
        model=model,
        threshold=threshold,
        delta=0.025,
        reached=50,
        kept=0,
        agreed=0,
        agreement_lower_bound=None,
        coverage=0.0,
    )


def _cascade(*stages: CascadeStage) -> Cascade:
    return Cascade(target=0.9, delta=0.05, calibration_items=50, human_share=1.0, stages=stages)


def _grader(server: JudgeServer, model: str, cascade: CascadeRouting | None = None) -> RubricGrader:
    client = JudgeClient(
        JudgeParams(model=model, samples=2, temperature=0.7),
        ClientSettings(api_base=server.api_base, backoff_base=0.01, backoff_max=0.02, max_retries=0),
        mode=CacheMode.OFF,
        api_key="sk-dummy-cascade",
    )
    return RubricGrader(RUBRIC, client, include_case_criteria=False, cascade=cascade)


def _serve(serve: Any, replies: dict[str, str]) -> JudgeServer:
    server: JudgeServer = serve(lambda body, i: Reply(content=replies[body["model"]]))
    return server


def test_a_fitted_cascade_round_trips_through_its_file(tmp_path: Path) -> None:
    cascade = fit_cascade([("a", [1.0] * 40, [True] * 40)], models={"a": "openai/a"})
    path = tmp_path / "cascade.json"
    path.write_text(cascade.model_dump_json())
    assert load_cascade(path) == cascade


def test_a_missing_cascade_file(tmp_path: Path) -> None:
    with pytest.raises(JudgekitError, match=r"cascade\.json: cascade file not found"):
        load_cascade(tmp_path / "cascade.json")


def test_a_cascade_file_that_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "cascade.json"
    path.write_text("{not json")
    with pytest.raises(
        JudgekitError, match=r"not a JSON cascade file: .*write it again with judgekit judge fit-cascade"
    ):
        load_cascade(path)


def test_the_routing_needs_a_grader_per_later_stage(serve: Any) -> None:
    server = _serve(serve, {})
    routing = CascadeRouting(
        cascade=_cascade(_stage("a", "openai/a", 1.0), _stage("b", "openai/b", 1.0)), escalate_to=()
    )
    with pytest.raises(ValueError, match="one grader for each stage after the first"):
        _grader(server, "openai/a", routing)


def test_a_tie_is_no_confidence_and_goes_on_to_a_human(serve: Any) -> None:
    # samples alternate pass/fail for "a" (a tie: insufficient_information), "b" has no threshold
    server: JudgeServer = serve(
        lambda body, i: Reply(content=verdict_reply("pass" if body["model"] == "b" or i % 2 else "fail"))
    )
    routing = CascadeRouting(
        cascade=_cascade(_stage("a", "openai/a", 0.5), _stage("b", "openai/b", None)),
        escalate_to=(_grader(server, "openai/b"),),
    )
    (check,) = asyncio.run(_grader(server, "openai/a", routing).grade(None, TRANSCRIPT))
    assert check.verdict is Verdict.INSUFFICIENT_INFORMATION
    assert check.reason == (
        "escalated to a human reviewer (stage b has no threshold: calibration showed no confidence it can be "
        "trusted at)"
    )
    route = check.evidence[-1].data["cascade"]  # type: ignore[index, call-overload]
    assert route["tried"][1] == {"stage": "b", "confidence": 1.0, "threshold": None, "kept": False}
    assert check.evidence[-1].summary == "cascade: decided by a human reviewer after 2 stage(s)"


def test_a_last_stage_without_a_verdict_goes_to_a_human(serve: Any) -> None:
    server = _serve(serve, {"a": verdict_reply("pass"), "b": verdict_reply("insufficient_information")})
    routing = CascadeRouting(
        cascade=_cascade(_stage("a", "openai/a", 1.1), _stage("b", "openai/b", 0.5)),
        escalate_to=(_grader(server, "openai/b"),),
    )
    (check,) = asyncio.run(_grader(server, "openai/a", routing).grade(None, TRANSCRIPT))
    assert check.reason == "escalated to a human reviewer (stage b gave no pass or fail verdict)"
    assert check.score is None  # an escalated criterion is never a 0 or a 1


def test_the_first_confident_stage_decides_and_later_ones_are_not_called(serve: Any) -> None:
    server = _serve(serve, {"a": verdict_reply("fail"), "b": verdict_reply("pass")})
    routing = CascadeRouting(
        cascade=_cascade(_stage("a", "openai/a", 1.0), _stage("b", "openai/b", 0.5)),
        escalate_to=(_grader(server, "openai/b"),),
    )
    (check,) = asyncio.run(_grader(server, "openai/a", routing).grade(None, TRANSCRIPT))
    assert check.verdict is Verdict.FAIL
    assert check.evidence[-1].data == {
        "cascade": {
            "tried": [{"stage": "a", "confidence": 1.0, "threshold": 1.0, "kept": True}],
            "decided_by": "a",
        }
    }
    assert [r["model"] for r in server.requests] == ["a", "a"]
