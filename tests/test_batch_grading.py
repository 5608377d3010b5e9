"""``judgekit.batch_grading`` from Python: what needs a judge answer before its next request is refused.

The command-line paths (happy path, kill -9 and resume, failed and partly failed batches, the other
refusals) are in ``tests/commands/test_grade_batch.py``.
"""

import asyncio
from pathlib import Path

import pytest

from judgekit.batch_grading import grade_in_batch
from judgekit.errors import JudgekitError
from judgekit.graders.rubric import CascadeRouting, RubricGrader
from judgekit.judges.cascade import Cascade, CascadeStage
from judgekit.judges.client import ClientSettings, JudgeClient, JudgeParams
from judgekit.judges.rubric import Criterion, Rubric
from judgekit.runner import LayeredTrialGrader, OutputState, RunPlan

RUBRIC = Rubric(id="b", version="1", criteria=(Criterion(id="polite", text="The agent is polite."),))


def _grader(model: str) -> RubricGrader:
    client = JudgeClient(
        JudgeParams(model=model),
        ClientSettings(api_base="http://127.0.0.1:9/v1"),
        api_key="sk-batch-0123456789",
    )
    return RubricGrader(RUBRIC, client)


def _stage(name: str, model: str) -> CascadeStage:
    return CascadeStage(
        name=name,
        model=model,
        threshold=0.9,
        delta=0.025,
        reached=50,
        kept=0,
        agreed=0,
        agreement_lower_bound=None,
        coverage=0.0,
    )


def test_a_judge_cascade_is_refused(tmp_path: Path) -> None:
    cascade = Cascade(
        target=0.9,
        delta=0.05,
        calibration_items=50,
        human_share=1.0,
        stages=(_stage("small", "openai/gpt-4o-mini"), _stage("large", "openai/gpt-4o")),
    )
    first = _grader("openai/gpt-4o-mini")
    routed = RubricGrader(
        RUBRIC, first.client, cascade=CascadeRouting(cascade=cascade, escalate_to=(_grader("openai/gpt-4o"),))
    )
    grader = LayeredTrialGrader(tmp_path, routed)
    try:
        with pytest.raises(JudgekitError) as caught:
            asyncio.run(
                grade_in_batch(RunPlan(), grader, out=tmp_path / "o.jsonl", state=OutputState(run_id="r"))
            )
    finally:
        grader.close()
    assert caught.value.exit_code == 2
    assert str(caught.value) == (
        "--batch cannot route through a judge cascade (--cascade): a later stage is asked only after the "
        "earlier stage's answer, which a batch gives a day later; drop one of them"
    )
    assert not (tmp_path / "o.jsonl.batch.json").exists()
