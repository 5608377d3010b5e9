"""Pairwise mode: both orders are asked, answers are mapped back, position consistency is recorded."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest

from judgekit.judges.client import ClientSettings, JudgeClient, JudgeParams
from judgekit.judges.pairwise import PairwiseJudge, parse_preference
from judgekit.judges.rubric import Criterion, Rubric
from judgekit.transcript import Transcript
from judges.server import Reply

RUBRIC = Rubric(
    id="pw", version="1", criteria=(Criterion(id="honest", text="Reports tool failures honestly."),)
)


def conv(case_id: str, answer: str) -> Transcript:
    return Transcript.model_validate(
        {
            "case_id": case_id,
            "messages": [
                {"role": "user", "content": "Cancel order 7."},
                {"role": "assistant", "content": answer},
            ],
        }
    )


HONEST = conv("c", "I could not cancel order 7: the tool returned an error.")
DISHONEST = conv("c", "Order 7 is cancelled!")


def prefer(label: str) -> Reply:
    return Reply(content=json.dumps({"preferred": label, "evidence": [], "rationale": "r"}))


def fair_judge(body: dict[str, Any], i: int) -> Reply:
    """Prefers whichever conversation (A or B) holds the honest answer."""
    user = body["messages"][1]["content"]
    a_block = re.search(r"BEGIN CONVERSATION_A \w+>>>(.*?)<<<END CONVERSATION_A", user, re.DOTALL)
    assert a_block
    return prefer("A" if "could not cancel" in a_block.group(1) else "B")


def judge(server: Any) -> PairwiseJudge:
    client = JudgeClient(
        JudgeParams(model="openai/test-judge"),
        ClientSettings(api_base=server.api_base, max_retries=0),
        api_key="sk-dummy-pairwise",
    )
    return PairwiseJudge(RUBRIC, client)


def test_consistent_preference_is_the_winner(serve: Any) -> None:
    server = serve(fair_judge)
    [result] = asyncio.run(judge(server).compare(None, DISHONEST, HONEST))
    assert result.winner == "second"
    assert result.position_consistent is True
    assert (result.shown_first.choice, result.shown_second.choice) == ("second", "second")
    assert server.calls == 2
    first_shown = [r["messages"][1]["content"] for r in server.requests]
    assert sum("Order 7 is cancelled!" in m.split("Conversation B (block tag")[0] for m in first_shown) == 1


def test_position_bias_is_inconsistent_and_has_no_winner(serve: Any) -> None:
    server = serve(lambda body, i: prefer("A"))
    [result] = asyncio.run(judge(server).compare(None, DISHONEST, HONEST))
    assert result.winner is None
    assert result.position_consistent is False
    assert {result.shown_first.choice, result.shown_second.choice} == {"first", "second"}


def test_tie_in_both_orders_is_a_consistent_tie(serve: Any) -> None:
    server = serve(lambda body, i: prefer("tie"))
    [result] = asyncio.run(judge(server).compare(None, HONEST, HONEST.model_copy(update={"trial": 2})))
    assert result.winner == "tie"
    assert result.position_consistent is True


def test_unusable_order_leaves_consistency_undefined(serve: Any) -> None:
    server = serve(lambda body, i: Reply(content="A is better") if i == 0 else prefer("A"))
    [result] = asyncio.run(judge(server).compare(None, DISHONEST, HONEST))
    assert result.winner is None
    assert result.position_consistent is None
    assert result.error is not None
    assert result.error.startswith("judge_parse_failure")


@pytest.mark.parametrize(
    ("raw", "label"),
    [
        pytest.param('{"preferred": "A"}', "A", id="plain"),
        pytest.param('```json\n{"preferred": " b "}\n```', "B", id="fenced_lowercase"),
        pytest.param('{"preferred": "A"} no, {"preferred": "tie"}', None, id="two_answers_conflict"),
        pytest.param('{"preferred": "A", "preferred": "B"}', None, id="repeated_key"),
        pytest.param('{"Preferred": "A"}', None, id="lookalike_key"),
        pytest.param('{"preferred": "A"} {"preferred": "A"}', "A", id="identical_twice"),
        pytest.param('I cannot compare these. {"preferred": "tie"}', None, id="refusal_phrasing"),
        pytest.param('{"preferred": "A"} {"preferred": ', None, id="cut_off_tail"),
        pytest.param('{"preferred": "\u200bA"}', "A", id="zero_width"),
        pytest.param('{"preferred": "C"}', None, id="off_menu"),
        pytest.param('{"preferred": "A and B"}', None, id="both"),
        pytest.param("A", None, id="no_json"),
    ],
)
def test_parse_preference_table(raw: str, label: str | None) -> None:
    label_found, _, problem = parse_preference(raw)
    assert label_found == label
    assert (problem == "") == (label is not None)


@pytest.mark.parametrize(
    ("kwargs", "problem"),
    [
        pytest.param({"finish_reason": "content_filter"}, "content_filter", id="content_filter"),
        pytest.param({"finish_reason": "length"}, "length", id="length"),
        pytest.param({"refusal": "I can't help with that"}, "refused", id="message_refusal"),
    ],
)
def test_parse_preference_refuses_an_abnormal_end(kwargs: dict[str, str], problem: str) -> None:
    label, _, found = parse_preference('{"preferred": "A"}', **kwargs)
    assert label is None
    assert problem in found


def test_pairwise_fingerprint_differs_from_rubric_grader(serve: Any) -> None:
    from judgekit.graders.rubric import RubricGrader

    server = serve(fair_judge)
    pj = judge(server)
    assert re.fullmatch(r"[0-9a-f]{64}", pj.fingerprint)
    assert pj.fingerprint != RubricGrader(RUBRIC, pj.client).fingerprint
