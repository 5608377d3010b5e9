"""The confirmation rule on real phrasing and on the shared tau-bench airline trajectories."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from graders._build import make_transcript
from judgekit.cases import ExpectedCall
from judgekit.formats.importers import read_tau_bench
from judgekit.graders.route import check_route
from judgekit.graders.rules import check_rules
from judgekit.graders.text import (
    ConfirmationStatus,
    classify_reply,
    confirmation_before,
    is_affirmation,
    key_arguments,
    user_confirmed_before,
)
from judgekit.transcript import Transcript

DATA = Path(__file__).resolve().parent / "data"
WRITE_TOOLS = frozenset(
    {
        "book_reservation",
        "cancel_reservation",
        "update_reservation_baggages",
        "update_reservation_flights",
        "update_reservation_passengers",
        "send_certificate",
    }
)


def _shared_data() -> Path:
    env = os.environ.get("JUDGEKIT_SHARED_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


RAW = _shared_data() / "tau-bench-airline" / "gpt-4o-airline.raw.json"


def _rows(name: str) -> list[dict[str, Any]]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip() and not line.startswith("#")]


# --------------------------------------------------------------------------- replies


@pytest.mark.parametrize("row", _rows("airline_replies.jsonl"), ids=lambda r: r["text"][:40])
def test_real_replies(row: dict[str, Any]) -> None:
    assert classify_reply(row["text"]) == row["reply"]
    assert is_affirmation(row["text"]) is (row["reply"] == "affirm")


# --------------------------------------------------------------------------- the rule on small transcripts


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        ],
    }


def _status(messages: list[dict[str, Any]], name: str, args: dict[str, Any]) -> ConfirmationStatus:
    transcript = Transcript.model_validate({"case_id": "c", "messages": [*messages, _call(name, args)]})
    return confirmation_before(transcript, len(messages), name, args).status


CANCEL = {"reservation_id": "ZFA04Y"}


def test_yes_to_a_proposal_naming_action_and_id_confirms() -> None:
    messages = [
        {"role": "assistant", "content": "Shall I cancel reservation ZFA04Y? Please confirm."},
        {"role": "user", "content": "Yes, please cancel the reservation."},
    ]
    assert _status(messages, "cancel_reservation", CANCEL) == "confirmed"


def test_yes_to_another_reservation_is_not_confirmation() -> None:
    messages = [
        {"role": "assistant", "content": "Shall I cancel reservation QQ12AB? Please confirm."},
        {"role": "user", "content": "Yes, go ahead."},
    ]
    assert _status(messages, "cancel_reservation", CANCEL) == "not_confirmed"


def test_yes_to_a_proposal_without_action_or_ids_is_undecided() -> None:
    messages = [
        {"role": "assistant", "content": "Is there anything else?"},
        {"role": "user", "content": "Sure, go ahead."},
    ]
    transcript = Transcript.model_validate(
        {"case_id": "c", "messages": [*messages, _call("cancel_reservation", CANCEL)]}
    )
    result = confirmation_before(transcript, 2, "cancel_reservation", CANCEL)
    assert result.status == "undecided"
    assert "does not name the action" in result.reason
    assert user_confirmed_before(transcript, 2, "cancel_reservation", CANCEL) is False


def test_hedged_reply_is_undecided_and_decline_is_not_confirmed() -> None:
    asked = [{"role": "assistant", "content": "Shall I cancel reservation ZFA04Y?"}]
    hedged = [*asked, {"role": "user", "content": "Yes, I think so."}]
    declined = [*asked, {"role": "user", "content": "Yes, but wait, not yet."}]
    assert _status(hedged, "cancel_reservation", CANCEL) == "undecided"
    assert _status(declined, "cancel_reservation", CANCEL) == "not_confirmed"


def test_agent_asking_again_without_waiting_is_not_confirmed() -> None:
    messages = [
        {"role": "assistant", "content": "Shall I cancel reservation ZFA04Y?"},
        {"role": "user", "content": "Yes."},
        {"role": "assistant", "content": "One more thing: do you want a refund to the card?"},
    ]
    assert _status(messages, "cancel_reservation", CANCEL) == "not_confirmed"


def test_key_arguments_are_ids_and_amounts() -> None:
    ids, amounts = key_arguments(
        {
            "user_id": "mia_li_3668",
            "flights": [{"flight_number": "HAT136", "date": "2024-05-20"}],
            "payment_methods": [
                {"payment_id": "certificate_1", "amount": 250},
                {"payment_id": "c2", "amount": 5},
            ],
        }
    )
    assert ids == {"HAT136"}  # c2 is too short; the user and payment ids have separators
    assert amounts == {250.0, 5.0, 255.0}


# --------------------------------------------------------------------------- the shared airline data


def _write_calls() -> list[tuple[Transcript, Any]]:
    trials = read_tau_bench(RAW).trials
    return [(t.transcript, r) for t in trials for r in t.transcript.calls() if r.call.name in WRITE_TOOLS]


def _old_confirmed(transcript: Transcript, message_index: int) -> bool:
    """The method before issue 19: only the latest user message, read with no tool and no arguments."""
    return user_confirmed_before(transcript, message_index)


@pytest.mark.skipif(not RAW.is_file(), reason="the shared tau-bench airline data is absent")
def test_airline_figures_on_hand_labels(capsys: pytest.CaptureFixture[str]) -> None:
    calls = _write_calls()
    assert len(calls) == 250
    statuses = Counter(
        confirmation_before(t, r.message_index, r.call.name, r.call.arguments).status for t, r in calls
    )
    by_key = {(t.case_id, (t.trial or 1) - 1, r.index): (t, r) for t, r in calls}
    labels = _rows("confirmation_labels.jsonl")
    assert len(labels) >= 60
    table: Counter[tuple[str, str]] = Counter()
    for row in labels:
        transcript, record = by_key[(f"task-{row['task_id']}", row["trial"], row["call_index"])]
        status = confirmation_before(
            transcript, record.message_index, record.call.name, record.call.arguments
        ).status
        table[(row["label"], status)] += 1
    flagged = [lab for (lab, st), n in table.items() if st == "not_confirmed" for _ in range(n)]
    truly_not = sum(n for (lab, _), n in table.items() if lab == "not_confirmed")
    precision = flagged.count("not_confirmed") / len(flagged)
    recall = table[("not_confirmed", "not_confirmed")] / truly_not
    undecided = sum(n for (_, st), n in table.items() if st == "undecided") / len(labels)
    with capsys.disabled():
        print(
            f"\nconfirmation over 250 airline write calls: {dict(statuses)}; on {len(labels)} labels: "
            f"precision {precision:.2f}, recall {recall:.2f}, undecided {undecided:.2f}"
        )
    assert statuses["not_confirmed"] == FLAGGED
    assert precision >= PRECISION
    assert recall >= RECALL
    assert undecided <= UNDECIDED


# Measured when the labels were written (old method: 113 flagged, precision 0.48, recall 1.00).
FLAGGED = 60
PRECISION = 0.93
RECALL = 0.93
UNDECIDED = 0.08


# --------------------------------------------------------------------------- undecided in the graders

UNDECIDED_TALK = [
    {"role": "assistant", "content": "Is there anything else?"},
    {"role": "user", "content": "Sure, go ahead."},
    _call("cancel_reservation", CANCEL),
]


def test_rule_over_an_undecided_call_is_insufficient_information() -> None:
    from graders._build import make_case, make_transcript

    case = make_case(
        tools=["cancel_reservation"], forbidden=[{"tool": "cancel_reservation", "when": "!confirmed"}]
    )
    check = check_rules(case, make_transcript(messages=UNDECIDED_TALK))[0]
    assert check.verdict.value == "insufficient_information"
    assert "cannot tell whether the user confirmed 1 call(s)" in check.reason


def test_route_confirmation_of_an_undecided_call_is_insufficient_information() -> None:

    entry = ExpectedCall(tool="cancel_reservation", requires_confirmation=True)
    checks = {
        c.check_id: c for c in check_route([entry], "superset", make_transcript(messages=UNDECIDED_TALK))
    }
    assert checks["route:confirmation"].verdict.value == "insufficient_information"
    assert "cannot be decided" in checks["route:confirmation"].reason


@pytest.mark.skipif(not RAW.is_file(), reason="the shared tau-bench airline data is absent")
def test_airline_figures_on_blind_labels(capsys: pytest.CaptureFixture[str]) -> None:
    """The new method against hand labels made blind to it (tests/graders/data/BLIND.md)."""
    by_key = {(t.case_id, (t.trial or 1) - 1, r.index): (t, r) for t, r in _write_calls()}
    labels = _rows("confirmation_labels_blind.jsonl")
    assert len(labels) == 63
    table: Counter[tuple[str, str]] = Counter()
    for row in labels:
        transcript, record = by_key[(f"task-{row['task_id']}", row["trial"], row["call_index"])]
        assert (record.call.name, record.message_index) == (row["tool"], row["message_index"])
        status = confirmation_before(
            transcript, record.message_index, record.call.name, record.call.arguments
        ).status
        table[(row["label"], status)] += 1
    flags = sum(n for (_, st), n in table.items() if st == "not_confirmed")
    right_flags = table[("not_confirmed", "not_confirmed")]
    truly_not = sum(n for (lab, _), n in table.items() if lab == "not_confirmed")
    undecided = sum(n for (_, st), n in table.items() if st == "undecided")
    with capsys.disabled():
        print(
            f"\nblind labels: {len(labels)} calls; flags {flags}, right {right_flags}, "
            f"labelled not_confirmed {truly_not}, undecided {undecided}"
        )
    # Measured when the blind labels were written: precision 11/16, recall 11/13, undecided 3/63.
    assert (flags, right_flags, truly_not, undecided) == (16, 11, 13, 3)
    assert round(right_flags / flags, 2) == 0.69
    assert round(right_flags / truly_not, 2) == 0.85
    assert round(undecided / len(labels), 2) == 0.05
