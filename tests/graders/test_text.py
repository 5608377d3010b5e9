from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graders._build import by_id, make_case, make_transcript
from judgekit.cases import TextPattern
from judgekit.graders.text import check_text, find_text, is_affirmation, normalise
from judgekit.verdict import FailureCategory, Verdict


@pytest.mark.parametrize(
    ("needle", "text", "found"),
    [
        pytest.param("lost card", "Report a LOST CARD here", True, id="case"),
        pytest.param("lost card", "report a lost\n\t  card", True, id="whitespace"),
        pytest.param("lost card", "report a lost\u00a0card", True, id="nbsp"),
        pytest.param("fraud", "fr\u200baud team", True, id="zero_width_space"),
        pytest.param("fraud", "f\u200dr\u2060aud", True, id="zero_width_joiners"),
        pytest.param("fraud", "\ufeffFRAUD", True, id="bom"),
        pytest.param("Fixed-Rate ISA", "the fixed\u2011rate isa pays", True, id="non_breaking_hyphen"),
        pytest.param("Fixed-Rate ISA", "the Fixed\u2013Rate ISA pays", True, id="en_dash"),
        pytest.param("don't", "I don\u2019t know", True, id="curly_apostrophe"),
        pytest.param("0800", "call \uff10\uff18\uff10\uff10 now", True, id="fullwidth_digits"),
        pytest.param("café", "cafe\u0301 open", True, id="combining_accent"),
        pytest.param("STRASSE", "straße", True, id="casefold_eszett"),
        pytest.param("fraud", "defrauded", True, id="substring"),
        pytest.param("fraud", "fra ud", False, id="split_word"),
        pytest.param("   ", "anything", False, id="blank_literal_never_matches"),
    ],
)
def test_literal_normalisation(needle: str, text: str, found: bool) -> None:
    assert (find_text(needle, text) is not None) is found


def test_patterns_use_word_boundaries_and_case_option() -> None:
    word = TextPattern(pattern=r"\bfraud\b")
    assert find_text(word, "defrauded") is None
    assert find_text(word, "Fraud team") == "Fraud"
    strict = TextPattern(pattern=r"ISA", ignore_case=False)
    assert find_text(strict, "isa") is None
    assert find_text(strict, "Fixed\u200b ISA") == "ISA"


@given(st.text())
def test_normalise_is_idempotent(text: str) -> None:
    once = normalise(text)
    assert normalise(once) == once


@pytest.mark.parametrize(
    ("text", "affirms"),
    [
        ("Yes", True),
        ("yes, go ahead", True),
        ("Sure, do it.", True),
        ("OK", True),
        ("Please proceed", True),
        ("That's right", True),
        ("Confirmed", True),
        ("\u201cYes\u201d", True),
        ("No", False),
        ("Yes but don't refund yet", False),
        ("yes... wait", False),
        ("I guess", False),
        ("Yesterday I flew", False),
        ("", False),
    ],
)
def test_affirmations(text: str, affirms: bool) -> None:
    assert is_affirmation(text) is affirms


CASE = {
    "expected": {
        "must_mention": ["Fixed-Rate ISA", {"pattern": r"\b4\.1\d?%"}],
        "must_not_mention": ["fraud", "lost card", "0800"],
    }
}


def test_clean_answer_passes_every_text_check() -> None:
    t = make_transcript(texts=["The Fixed\u2011Rate ISA pays 4.15% (ISA-Terms-2026)."])
    checks = by_id(check_text(make_case(**CASE), t))
    assert {c.verdict for c in checks.values()} == {Verdict.PASS}
    assert checks["text:must_mention:0"].gate is True
    assert checks["text:must_mention:0"].score is None
    assert checks["text:must_not_mention:0"].gate is True


def test_must_not_mention_is_a_gate_with_the_quote() -> None:
    t = make_transcript(texts=["Hello.", "For a lost card call our Fr\u200baud line on 0800 123."])
    checks = by_id(check_text(make_case(**CASE), t))
    fraud = checks["text:must_not_mention:0"]
    assert fraud.verdict is Verdict.FAIL
    assert fraud.gate
    assert fraud.category is FailureCategory.POLICY_VIOLATION
    (ev,) = fraud.evidence
    assert ev.message_index == 2
    assert ev.data == {"matched": "fraud"}
    assert "Fraud line" in (ev.quote or "")
    assert checks["text:must_not_mention:1"].verdict is Verdict.FAIL
    assert checks["text:must_not_mention:2"].verdict is Verdict.FAIL


def test_a_missing_mention_gates() -> None:
    checks = by_id(check_text(make_case(**CASE), make_transcript(texts=["We have savings accounts."])))
    missing = checks["text:must_mention:0"]
    assert missing.verdict is Verdict.FAIL
    assert missing.gate is True
    assert missing.score is None
    assert missing.category is FailureCategory.INCORRECT_REPORTING


@pytest.mark.parametrize(
    "item",
    [{"text": "4.15%", "scored": True}, {"pattern": r"4\.15\s*%", "scored": True}],
    ids=["literal", "pattern"],
)
def test_a_mention_marked_scored_only_lowers_quality(item: dict[str, Any]) -> None:
    case = make_case(expected={"must_mention": [item]})
    (missing,) = check_text(case, make_transcript(texts=["We have savings accounts."]))
    assert (missing.verdict, missing.gate, missing.score) == (Verdict.FAIL, False, 0.0)
    (found,) = check_text(case, make_transcript(texts=["It pays 4.15%."]))
    assert (found.verdict, found.gate, found.score) == (Verdict.PASS, False, 1.0)


def test_scored_is_ignored_for_must_not_mention() -> None:
    case = make_case(expected={"must_not_mention": [{"text": "fraud", "scored": True}]})
    (check,) = check_text(case, make_transcript(texts=["Call the fraud line."]))
    assert (check.verdict, check.gate) == (Verdict.FAIL, True)


def test_no_assistant_text_says_so() -> None:
    missing = by_id(check_text(make_case(**CASE), make_transcript()))["text:must_mention:0"]
    assert "wrote no text" in missing.reason


def test_no_text_expectations_is_not_evaluated() -> None:
    (check,) = check_text(make_case(), make_transcript(texts=["hi"]))
    assert check.verdict is Verdict.NOT_EVALUATED


def _turns_transcript(replies: list[list[str]]) -> Any:
    messages: list[dict[str, Any]] = []
    for i, texts in enumerate(replies):
        if i:
            messages.append({"role": "user", "content": f"turn {i + 1}"})
        messages.extend({"role": "assistant", "content": t} for t in texts)
    return make_transcript(user="turn 1", messages=messages)


TURN_CASE = {
    "input": None,
    "turns": [
        {"user": "Freeze my card", "expect_contains": ["frozen"]},
        {"user": "And my colleague's?", "expect_contains": ["cannot"], "critical": False},
    ],
}


def test_turn_expectations_follow_the_conversation() -> None:
    case = make_case(**TURN_CASE)
    good = by_id(check_text(case, _turns_transcript([["Your card is frozen."], ["I cannot do that."]])))
    assert good["text:turn:0:0"].verdict is Verdict.PASS
    assert good["text:turn:0:0"].gate
    assert good["text:turn:1:0"].score == 1.0
    assert not good["text:turn:1:0"].gate
    # "frozen" said in turn 2 does not satisfy turn 1
    late = by_id(check_text(case, _turns_transcript([["Done."], ["It is frozen; I cannot help further."]])))
    assert late["text:turn:0:0"].verdict is Verdict.FAIL
    assert late["text:turn:0:0"].category is FailureCategory.INCORRECT_REPORTING


def test_turn_never_played_is_an_error() -> None:
    checks = by_id(check_text(make_case(**TURN_CASE), _turns_transcript([["Your card is frozen."]])))
    assert checks["text:turn:1:0"].verdict is Verdict.ERROR
    assert "never played" in checks["text:turn:1:0"].reason


def test_the_quote_of_a_long_message_is_cut_between_words() -> None:
    # issue 35: the quote (and so the viewer's highlight) was cut 40 characters either side, mid-word
    reply = (
        "Thank you for waiting so patiently. For a lost card please call our fraud line straight away, "
        "and we will block the card and send a replacement to your registered address."
    )
    checks = by_id(check_text(make_case(**CASE), make_transcript(texts=[reply])))
    quote = checks["text:must_not_mention:0"].evidence[0].quote or ""
    assert quote == "...For a lost card please call our fraud line straight away, and we will block..."
    body = quote.removeprefix("...").removesuffix("...")
    at = reply.index(body)
    assert reply[at - 1] == " "
    assert reply[at + len(body)] == " "
