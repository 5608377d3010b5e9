"""Generated candidates over real HTTP against the loopback OpenAI-compatible server."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from judgekit.caseset import load_case_set
from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.golden.generate import (
    CandidateFile,
    generate_candidates,
    normalise_text,
    parse_generation,
    write_candidate_files,
)
from judgekit.judges.cache import CacheMode, Cassette
from judgekit.judges.client import ClientSettings, JudgeClient, JudgeParams
from judges.server import JudgeServer, Reply

from .conftest import write

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

MODEL = "openai/test-writer"
KEY = "sk-test-generate-0123456789"


def replying(content: str, **kw: Any) -> Callable[[dict[str, Any], int], Reply]:
    return lambda body, i: Reply(content=content, **kw)


def client_for(server: JudgeServer, **kw: Any) -> JudgeClient:
    return JudgeClient(
        JudgeParams(model=MODEL, temperature=0.9, max_tokens=2000),
        ClientSettings(api_base=server.api_base, backoff_base=0.01, backoff_max=0.02, max_retries=1),
        api_key=KEY,
        **kw,
    )


GOOD = json.dumps(
    {
        "should_trigger": ["Please freeze my debit card, I lost it", "Can you block my card right now?"],
        "must_not_trigger": [
            "What is my balance?",  # already GS-1's input in small_set
            "I think someone used my card, what should I do?",
            "I THINK someone used my card... what should I do",  # same after normalisation
            "Email me at jane.doe@gmail.com about my card",  # personal data
        ],
    }
)


def candidates(root: Path) -> list[Path]:
    return sorted((root / "candidates").glob("*.yaml"))


def test_generate_writes_reviewable_candidates(serve: Any, small_set: Path) -> None:
    server = serve(replying(GOOD))
    before = candidates(small_set)
    result = generate_candidates(
        load_case_set(small_set),
        tool="FreezeCard",
        description="Temporarily freezes a debit or credit card the caller owns.",
        n=4,
        client=client_for(server),
        owner="cards",
    )
    assert server.calls == 1
    body = server.requests[0]
    assert body["model"] == "test-writer"
    assert body["temperature"] == 0.9
    assert "FreezeCard" in body["messages"][1]["content"]
    assert "Write 4 realistic customer messages" in body["messages"][1]["content"]
    assert server.auth_headers == [f"Bearer {KEY}"]

    ids = [f.case_id for f in result.written]
    assert ids == [
        "GS-CAND-FreezeCard-T-01",
        "GS-CAND-FreezeCard-T-02",
        "GS-CAND-FreezeCard-N-01",
    ]
    assert [d[1] for d in result.duplicates] == ["GS-1", "this batch (must_not_trigger)"]
    assert len(result.personal_data) == 1
    assert "jane.doe" not in result.personal_data[0][0]
    assert "[EMAIL]" in result.personal_data[0][0]

    new = sorted(set(candidates(small_set)) - set(before))
    assert [p.name for p in new] == [f"{i}.yaml" for i in sorted(ids)]
    data = yaml.safe_load((small_set / "candidates" / "GS-CAND-FreezeCard-T-01.yaml").read_text())
    assert data["input"] == "Please freeze my debit card, I lost it"
    assert data["expected"]["route"] == [{"tool": "FreezeCard"}]
    assert data["acceptance"].startswith("REVIEW:")
    assert data["origin"] == {"type": "generated", "ref": MODEL}
    assert data["owner"] == "cards"
    neg = yaml.safe_load((small_set / "candidates" / "GS-CAND-FreezeCard-N-01.yaml").read_text())
    assert neg["category"] == "edge"
    assert neg["prohibited"][0]["tool"] == "FreezeCard"

    # The set stays valid; the new files are candidates that no gate reads.
    case_set = load_case_set(small_set)
    assert case_set.valid
    assert {c.case.id for c in case_set.candidates()} >= set(ids)
    assert not {c.case.id for c in case_set.reviewed()} & set(ids)


def test_second_generation_dedups_against_candidates_and_numbers_on(serve: Any, small_set: Path) -> None:
    server = serve(replying(GOOD))
    generate_candidates(
        load_case_set(small_set), tool="FreezeCard", description="d", n=4, client=client_for(server)
    )
    again = json.dumps(
        {
            "should_trigger": ["please freeze my debit card, I lost it!", "Freeze the card ending 12"],
            "must_not_trigger": [],
        }
    )
    server2 = serve(replying(again))
    result = generate_candidates(
        load_case_set(small_set), tool="FreezeCard", description="d", n=2, client=client_for(server2)
    )
    assert [f.case_id for f in result.written] == ["GS-CAND-FreezeCard-T-03"]
    assert result.duplicates == [("please freeze my debit card, I lost it!", "GS-CAND-FreezeCard-T-01")]


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        pytest.param(
            Reply(content="Sure! Here are some ideas: freeze my card."), "holds no JSON object", id="prose"
        ),
        pytest.param(Reply(content=""), "empty reply", id="empty"),
        pytest.param(
            Reply(content='{"should_trigger": ["a"]}'), "'must_not_trigger' is missing", id="missing_list"
        ),
        pytest.param(
            Reply(content='{"should_trigger": "freeze it", "must_not_trigger": []}'),
            "'should_trigger' must be a list of texts, got str",
            id="string_not_list",
        ),
        pytest.param(
            Reply(content='{"should_trigger": ["ok", 3], "must_not_trigger": []}'),
            "'should_trigger[1]' must be a text, got int",
            id="number_in_list",
        ),
        pytest.param(
            Reply(content='{"should_trigger": [" "], "must_not_trigger": []}'),
            "holds no utterance",
            id="blank",
        ),
        pytest.param(
            Reply(content='{"should_trigger": ["a", "b"', finish_reason="length"), "cut off", id="truncated"
        ),
        pytest.param(
            Reply(content='{"should_trigger": ["a"], "must_not_trigger": []} {"should_trigger": ["b"]}'),
            "2 JSON objects",
            id="two_objects",
        ),
        pytest.param(Reply(status=400), "the model call failed (provider_error)", id="bad_request"),
        pytest.param(Reply(status=500), "the model call failed (provider_error)", id="outage"),
    ],
)
def test_unusable_replies_write_nothing(serve: Any, small_set: Path, reply: Reply, message: str) -> None:
    server = serve(lambda body, i: reply)
    before = sorted(p.name for p in (small_set / "candidates").iterdir())
    with pytest.raises(
        JudgekitError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
    ) as raised:
        generate_candidates(
            load_case_set(small_set), tool="FreezeCard", description="d", n=2, client=client_for(server)
        )
    assert raised.value.exit_code == 1  # an outside service failing, not an input error
    assert sorted(p.name for p in (small_set / "candidates").iterdir()) == before


def test_all_duplicates_writes_nothing(serve: Any, small_set: Path) -> None:
    server = serve(replying(json.dumps({"should_trigger": ["what is my balance"], "must_not_trigger": []})))
    with pytest.raises(JudgekitError, match="every generated utterance duplicates the set"):
        generate_candidates(
            load_case_set(small_set), tool="FreezeCard", description="d", n=1, client=client_for(server)
        )
    assert [p.name for p in candidates(small_set)] == ["cand.yaml"]


def test_unknown_tool_is_refused_before_any_call(serve: Any, small_set: Path) -> None:
    server = serve(replying(GOOD))
    with pytest.raises(JudgekitError, match="'FreezeCrad' is not among the set's tools"):
        generate_candidates(
            load_case_set(small_set), tool="FreezeCrad", description="d", n=1, client=client_for(server)
        )
    assert server.calls == 0


def test_write_is_all_or_none(tmp_path: Path) -> None:
    folder = tmp_path / "candidates"
    write(folder / "B.yaml", "id: B\n")
    files = [
        CandidateFile("A", folder / "A.yaml", {"id": "A", "input": "a"}),
        CandidateFile("B", folder / "B.yaml", {"id": "B", "input": "b"}),
    ]
    with pytest.raises(JudgekitError, match=r"B\.yaml: already exist; nothing was written"):
        write_candidate_files(files)
    assert sorted(p.name for p in folder.iterdir()) == ["B.yaml"]
    write_candidate_files(files[:1])
    assert yaml.safe_load((folder / "A.yaml").read_text()) == {"id": "A", "input": "a"}
    assert sorted(p.name for p in folder.iterdir()) == ["A.yaml", "B.yaml"]  # no temporary folder left


def test_numbering_skips_a_stray_file_of_the_same_name(serve: Any, small_set: Path) -> None:
    write(
        small_set / "candidates" / "GS-CAND-FreezeCard-T-02.yaml",
        "id: X-2\ninput: q\nacceptance: 'REVIEW: x'\n",
    )
    server = serve(replying(GOOD))
    result = generate_candidates(
        load_case_set(small_set), tool="FreezeCard", description="d", n=4, client=client_for(server)
    )
    assert [f.case_id for f in result.written][:2] == ["GS-CAND-FreezeCard-T-01", "GS-CAND-FreezeCard-T-03"]


def test_cassette_records_then_replays_without_http(serve: Any, small_set: Path, tmp_path: Path) -> None:
    server = serve(replying(GOOD))
    cassette = tmp_path / "gen.jsonl"
    generate_candidates(
        load_case_set(small_set),
        tool="FreezeCard",
        description="d",
        n=4,
        client=client_for(server, cassette=Cassette(cassette), mode=CacheMode.RECORD),
        dry_run=True,
    )
    assert server.calls == 1
    assert KEY not in cassette.read_text()
    replay = JudgeClient(
        JudgeParams(model=MODEL, temperature=0.9, max_tokens=2000, structured_output="off"),
        ClientSettings(api_base=server.api_base),
        cassette=Cassette(cassette),
        mode=CacheMode.REPLAY,
    )
    # The replaying client decides structured output the same way the recording one did.
    replay.supports_schema = client_for(server).supports_schema
    result = generate_candidates(
        load_case_set(small_set), tool="FreezeCard", description="d", n=4, client=replay
    )
    assert server.calls == 1
    assert len(result.written) == 3


def test_parse_generation_accepts_fenced_json() -> None:
    text = 'Here you go:\n```json\n{"should_trigger": ["a "], "must_not_trigger": ["b"]}\n```'
    assert parse_generation(text) == {"should_trigger": ["a"], "must_not_trigger": ["b"]}


def test_normalisation() -> None:
    assert normalise_text("When can I  check-in ONLINE?") == normalise_text("when can i check in online")
    assert normalise_text("ﬁnd my bag") == "find my bag"


def test_command_generates_and_reports(
    serve: Any, small_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = serve(replying(GOOD))
    os.environ["OPENAI_API_KEY"] = KEY
    try:
        code = main(
            [
                "candidates",
                "generate",
                "--set",
                str(small_set),
                "--tool",
                "FreezeCard",
                "--description",
                "Freezes a card",
                "-n",
                "4",
                "--model",
                MODEL,
                "--api-base",
                server.api_base,
            ]
        )
    finally:
        del os.environ["OPENAI_API_KEY"]
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "GS-CAND-FreezeCard-T-01.yaml (GS-CAND-FreezeCard-T-01): Please freeze my debit card" in out
    assert "left out (already in the set as GS-1): What is my balance?" in out
    assert "wrote 3 candidate(s); left out 2 duplicate(s) and 1 with personal data." in out
    assert len(list((small_set / "candidates").glob("GS-CAND-FreezeCard-*.yaml"))) == 3


def _generate(small_set: Path, server: JudgeServer, *extra: str) -> int:
    """Run ``judgekit candidates generate`` against ``server`` and return its exit code."""
    os.environ["OPENAI_API_KEY"] = KEY
    try:
        return main(
            [
                "candidates",
                "generate",
                "--set",
                str(small_set),
                "--tool",
                "FreezeCard",
                "--description",
                "x",
                "--model",
                MODEL,
                "--api-base",
                server.api_base,
                *extra,
            ]
        )
    finally:
        del os.environ["OPENAI_API_KEY"]


def test_command_unusable_reply_is_an_error_without_traceback(
    serve: Any, small_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = _generate(small_set, serve(replying("no JSON here")))
    _out, err = capsys.readouterr()
    assert code == 1
    assert "error: the model's reply holds no JSON object" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        pytest.param(Reply(content=""), "the model returned an empty reply", id="empty"),
        pytest.param(
            Reply(content='{"should_trigger": ["a", "b"', finish_reason="length"), "was cut off", id="cut_off"
        ),
        pytest.param(
            Reply(content='{"should_trigger": ["a"], "must_not_trigger": []} {"should_trigger": ["b"]}'),
            "holds 2 JSON objects",
            id="two_objects",
        ),
        pytest.param(
            Reply(content='{"should_trigger": ["a"]}'), "'must_not_trigger' is missing", id="not_usable"
        ),
        pytest.param(
            Reply(content='{"should_trigger": [" "], "must_not_trigger": []}'),
            "holds no utterance",
            id="no_utterance",
        ),
        pytest.param(
            Reply(content=json.dumps({"should_trigger": ["what is my balance"], "must_not_trigger": []})),
            "every generated utterance duplicates the set",
            id="all_duplicates",
        ),
        pytest.param(Reply(status=400), "the model call failed (provider_error)", id="call_failed"),
    ],
)
def test_command_exits_1_when_the_model_gives_nothing_usable(
    serve: Any, small_set: Path, capsys: pytest.CaptureFixture[str], reply: Reply, message: str
) -> None:
    before = sorted(p.name for p in (small_set / "candidates").iterdir())
    code = _generate(small_set, serve(lambda body, i: reply))
    _out, err = capsys.readouterr()
    assert code == 1, err
    assert message in err
    assert "Traceback" not in err
    assert sorted(p.name for p in (small_set / "candidates").iterdir()) == before


def test_command_replay_without_a_recorded_reply_is_an_input_error(
    serve: Any, small_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = serve(replying(GOOD))
    cassette = tmp_path / "empty.jsonl"
    cassette.write_text("", encoding="utf-8")
    code = _generate(small_set, server, "--cassette", str(cassette), "--cache-mode", "replay")
    _out, err = capsys.readouterr()
    assert code == 2, err
    assert "the model call failed (cassette_miss)" in err
    assert server.calls == 0
