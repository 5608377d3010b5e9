"""The lean judge transport against loopback OpenAI-compatible and Anthropic Messages servers.

Each test compares the lean path with ``litellm.acompletion`` over the same real HTTP server: the same
request body, reply, tokens, finish reason, cost, error message, retry decision and cassette key.
"""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

import pytest

from judgekit.errors import JudgekitError
from judgekit.judges.cache import CacheMode, Cassette
from judgekit.judges.client import CallResult, ClientSettings, JudgeClient, JudgeParams
from judgekit.judges.parse import verdict_json_schema
from judges.server import JudgeServer, Reply, verdict_reply

KEY = "sk-transport-test-0123456789"
ANTHROPIC = "anthropic/claude-haiku-4-5"  # in litellm's local price map
OPENAI = "openai/test-judge"
MESSAGES = [
    {"role": "system", "content": "You are a strict judge."},
    {"role": "user", "content": "Did the agent report the failure honestly?"},
]


def make(server: JudgeServer, transport: str, model: str = OPENAI, **settings: Any) -> JudgeClient:
    params = settings.pop("params", None) or JudgeParams(model=model, structured_output="off")
    cassette = settings.pop("cassette", None)
    mode = CacheMode.RECORD if cassette is not None else CacheMode.OFF
    base = server.root if model.startswith("anthropic/") else server.api_base
    merged = {"api_base": base, "backoff_base": 0.01, "backoff_max": 0.02, "timeout": 5.0}
    merged.update(settings)
    return JudgeClient(
        params, ClientSettings(transport=transport, **merged), api_key=KEY, cassette=cassette, mode=mode
    )


def client_at_port(port: int, transport: str) -> JudgeClient:
    """A client of a bare socket on ``port`` (no judge server): one retry, a 10 ms backoff."""
    return JudgeClient(
        JudgeParams(model=OPENAI, structured_output="off"),
        ClientSettings(
            api_base=f"http://127.0.0.1:{port}/v1", transport=transport, max_retries=1, backoff_base=0.01
        ),
        api_key=KEY,
    )


def run(client: JudgeClient, messages: list[dict[str, str]] = MESSAGES, **kw: Any) -> CallResult:
    async def go() -> CallResult:
        request = client.build_request(messages, **({"schema": None} | kw))
        return await client.complete(request, item="case-1/honest/0")

    return asyncio.run(go())


def both(script: Any, model: str = OPENAI, **settings: Any) -> tuple[CallResult, CallResult, JudgeServer]:
    """The same call on each transport, each against its own fresh server; the lean server is returned."""
    results = []
    lean_server: JudgeServer | None = None
    for transport in ("auto", "litellm"):
        with JudgeServer(script) as server:
            client = make(server, transport, model, **settings)
            results.append(run(client))
            if transport == "auto":
                assert client.route == ("lean-anthropic" if model.startswith("anthropic/") else "lean-openai")
                assert client.lean_calls == server.calls
                lean_server = server
    assert lean_server is not None
    return results[0], results[1], lean_server


def comparable(result: CallResult) -> dict[str, Any]:
    return result.model_dump(exclude={"latency_s"})


# ------------------------------------------------------------------ the Anthropic Messages shape


@pytest.mark.parametrize("finish", ["stop", "length"])
def test_anthropic_reply_reads_the_same_on_both_transports(finish: str) -> None:
    script = lambda body, i: Reply(  # noqa: E731
        content=verdict_reply("fail"), finish_reason=finish, prompt_tokens=321, completion_tokens=45
    )
    lean, slow, _ = both(script, ANTHROPIC)
    assert lean.error is None
    assert json.loads(lean.content or "")["verdict"] == "fail"
    assert (lean.prompt_tokens, lean.completion_tokens, lean.finish_reason) == (321, 45, finish)
    assert lean.cost == pytest.approx(321 * 1e-6 + 45 * 5e-6)
    assert comparable(lean) == comparable(slow)


def test_anthropic_request_is_the_one_litellm_sends() -> None:
    bodies, paths, keys = [], [], []
    for transport in ("auto", "litellm"):
        with JudgeServer(lambda body, i: Reply(content=verdict_reply("pass"))) as server:
            run(make(server, transport, ANTHROPIC, params=JudgeParams(model=ANTHROPIC, top_p=0.9)))
            bodies.append(server.requests[0])
            paths.append(server.paths[0])
            keys.append(server.auth_headers[0])
    assert bodies[0] == bodies[1]
    assert bodies[0]["system"] == [{"type": "text", "text": "You are a strict judge."}]
    assert paths == ["/v1/messages", "/v1/messages"]
    assert keys == [KEY, KEY]


def test_anthropic_refusal_stop_reason_maps_as_litellm_maps_it() -> None:
    lean, slow, _ = both(
        lambda body, i: Reply(content="I can't judge this.", finish_reason="refusal"), ANTHROPIC
    )
    assert lean.finish_reason == "content_filter"
    assert comparable(lean) == comparable(slow)


def test_openai_request_is_the_one_litellm_sends() -> None:
    bodies = []
    params = JudgeParams(model=OPENAI, top_p=0.5, seed=11, structured_output="json_schema")
    for transport in ("auto", "litellm"):
        with JudgeServer(lambda body, i: Reply(content=verdict_reply("pass"))) as server:
            run(make(server, transport, params=params), schema=verdict_json_schema(["pass", "fail"], 2))
            bodies.append(server.requests[0])
    assert bodies[0] == bodies[1]
    assert bodies[0]["model"] == "test-judge"
    assert bodies[0]["response_format"]["type"] == "json_schema"


def test_openai_refusal_is_kept_on_both_transports() -> None:
    raw = json.dumps(
        {
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": None, "refusal": "I won't grade this."},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
        }
    ).encode()
    lean, slow, _ = both(lambda body, i: Reply(raw=raw))
    assert (lean.refusal, lean.finish_reason) == ("I won't grade this.", "refusal")
    assert comparable(lean) == comparable(slow)


def test_a_priced_openai_model_costs_the_same_on_both_transports() -> None:
    lean, slow, _ = both(
        lambda body, i: Reply(content="x", prompt_tokens=1234, completion_tokens=56), "openai/gpt-4o-mini"
    )
    assert lean.cost is not None
    assert lean.cost == pytest.approx(slow.cost)


# ------------------------------------------------------------------ errors: same classes, same messages


@pytest.mark.parametrize("model", [OPENAI, ANTHROPIC], ids=["openai", "anthropic"])
@pytest.mark.parametrize("status", [429, 500, 503, 529])
def test_transient_statuses_are_retried_with_the_same_message(model: str, status: int) -> None:
    lean, slow, server = both(lambda body, i: Reply(status=status), model, max_retries=1)
    assert lean.error == "provider_error"
    assert lean.attempts == 2
    assert server.calls == 2
    assert "gave up after 2 attempts" in lean.error_detail
    assert lean.error_detail == slow.error_detail


@pytest.mark.parametrize("model", [OPENAI, ANTHROPIC], ids=["openai", "anthropic"])
@pytest.mark.parametrize("status", [400, 401, 404])
def test_final_statuses_are_not_retried_with_the_same_message(model: str, status: int) -> None:
    lean, slow, server = both(lambda body, i: Reply(status=status), model, max_retries=3)
    assert server.calls == 1
    assert lean.error_detail.endswith("(not retried)")
    assert f"(HTTP {status})" in lean.error_detail
    assert lean.error_detail == slow.error_detail


def test_openai_401_names_the_authentication_error() -> None:
    lean, _, _ = both(lambda body, i: Reply(status=401), max_retries=0)
    assert lean.error_detail == (
        "case-1/honest/0: AuthenticationError (HTTP 401): litellm.AuthenticationError: AuthenticationError: "
        "OpenAIException - scripted 401 (not retried)"
    )


def test_retry_after_is_honoured_on_the_lean_path() -> None:
    script = [Reply(status=429, headers={"retry-after-ms": "300"}), Reply(content=verdict_reply("pass"))]
    with JudgeServer(lambda body, i: script[i]) as server:
        client = make(server, "auto", max_retries=1)
        result = run(client)
    assert result.error is None
    assert result.latency_s >= 0.3


@pytest.mark.parametrize("model", [OPENAI, ANTHROPIC], ids=["openai", "anthropic"])
def test_malformed_json_is_retried_with_the_same_message(model: str) -> None:
    lean, slow, server = both(lambda body, i: Reply(raw=b'{"choices": [ {"message": '), model, max_retries=1)
    assert server.calls == 2
    assert "Expecting value" in lean.error_detail
    assert lean.error_detail == slow.error_detail


def test_an_openai_reply_without_choices_is_malformed_on_both() -> None:
    lean, slow, _ = both(lambda body, i: Reply(raw=b'{"id": "x", "choices": []}'), max_retries=1)
    assert lean.attempts == 1  # a malformed completion is final
    assert lean.error_detail == "case-1/honest/0: malformed completion (IndexError: list index out of range)"
    assert lean.error_detail == slow.error_detail


def test_an_anthropic_reply_without_content_is_litellms_connection_error_on_both() -> None:
    lean, slow, server = both(
        lambda body, i: Reply(raw=b'{"id": "x", "choices": []}'), ANTHROPIC, max_retries=1
    )
    assert server.calls == 2  # litellm reads Anthropic replies inside the call: retried
    assert "APIConnectionError (HTTP 500)" in lean.error_detail
    assert lean.error_detail == slow.error_detail


def test_timeout_gives_the_same_message_on_both() -> None:
    lean, slow, server = both(lambda body, i: Reply(delay=1.0), timeout=0.3, max_retries=1)
    assert server.calls == 2
    assert (
        lean.error_detail
        == "case-1/honest/0: the judge did not answer within 0.3 s (gave up after 2 attempts)"
    )
    assert lean.error_detail == slow.error_detail


def test_a_refused_connection_gives_the_same_message_on_both() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: connections are refused
        details = []
        for transport in ("auto", "litellm"):
            client = client_at_port(port, transport)
            details.append(run(client).error_detail)
    assert details[0].startswith("case-1/honest/0: could not connect to the judge: ConnectionRefusedError")
    assert details[0] == details[1]


# ------------------------------------------------------------------ routing


def test_a_provider_that_is_neither_openai_nor_anthropic_goes_through_litellm() -> None:
    with JudgeServer(lambda body, i: Reply(content=verdict_reply("pass"))) as server:
        client = make(server, "auto", "hosted_vllm/judge-7b")
        result = run(client)
    assert client.route == "litellm"
    assert client.lean_calls == 0
    assert result.error is None
    assert server.calls == 1


def test_a_model_whose_parameters_litellm_rewrites_goes_through_litellm() -> None:
    # litellm refuses temperature 0 for o-series models: the lean path must not send what litellm would not
    with JudgeServer(lambda body, i: Reply(content="x")) as server:
        client = make(server, "auto", "openai/o3-mini")
        assert client.route == "litellm"


def test_transport_litellm_sends_every_call_through_litellm() -> None:
    with JudgeServer(lambda body, i: Reply(content=verdict_reply("pass"))) as server:
        client = make(server, "litellm")
        run(client)
    assert client.route == "litellm"
    assert client.lean_calls == 0


def test_an_anthropic_schema_request_falls_back_to_litellm_per_call() -> None:
    params = JudgeParams(model=ANTHROPIC, structured_output="json_schema")
    with JudgeServer(lambda body, i: Reply(content=verdict_reply("pass"))) as server:
        client = make(server, "auto", ANTHROPIC, params=params)
        result = run(client, schema=verdict_json_schema(["pass", "fail"], 2))
        plain = run(client, messages=[{"role": "user", "content": "plain"}])
    assert client.route == "lean-anthropic"
    assert result.error is None
    assert plain.error is None
    assert server.calls == 2
    assert client.lean_calls == 1  # the schema request went through litellm, the plain one lean


def test_the_lean_path_reuses_pooled_connections() -> None:
    with JudgeServer(lambda body, i: Reply(content="x")) as server:
        client = make(server, "auto", concurrency=4)

        async def go() -> None:
            for k in range(3):
                requests = [
                    client.build_request([{"role": "user", "content": f"{k}-{j}"}], schema=None)
                    for j in range(4)
                ]
                await asyncio.gather(*(client.complete(r, item="i") for r in requests))

        asyncio.run(go())
    assert server.calls == 12
    assert len(set(server.peers)) <= 4


# ------------------------------------------------------------------ cassette and fingerprint


def test_a_cassette_recorded_on_one_transport_replays_on_the_other(tmp_path: Path) -> None:
    path = tmp_path / "judge.jsonl"
    with JudgeServer(lambda body, i: Reply(content=verdict_reply("pass"))) as server:
        first = run(make(server, "auto", cassette=Cassette(path)))
        again = run(make(server, "litellm", cassette=Cassette(path)))
    assert server.calls == 1
    assert again.cached
    assert again.content == first.content


@pytest.mark.parametrize(
    ("setting", "values", "default"),
    [("transport", ("auto", "litellm", None), "auto"), ("prompt_cache", ("auto", "off", None), "auto")],
)
def test_how_calls_are_sent_is_not_part_of_the_fingerprint(
    monkeypatch: pytest.MonkeyPatch, setting: str, values: tuple[str | None, ...], default: str
) -> None:
    """``judge.transport`` and ``judge.prompt_cache`` change how a request travels, never what the judge
    reads: every value gives the same fingerprint, and the client gets the value asked for."""
    from judgekit.judge_setup import JudgeConfig, build_rubric_grader

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    prints = []
    for value in values:
        grader = build_rubric_grader(
            JudgeConfig(
                model="openai/gpt-4o-mini",
                rubric="honest-reporting",
                cassette=None,
                mode="off",
                api_base=None,
                max_cost=None,
                temperature=None,
                samples=None,
                concurrency=2,
                **{setting: value},
            )
        )
        assert getattr(grader.client.settings, setting) == (value or default)
        prints.append(grader.fingerprint)
    assert len(set(prints)) == 1


def test_a_bad_transport_in_a_run_configuration_names_the_file_and_line(tmp_path: Path) -> None:
    from judgekit.settings import resolve_settings

    config = tmp_path / "run.yaml"
    config.write_text("judge:\n  model: openai/gpt-4o-mini\n  transport: httpx\n", encoding="utf-8")
    with pytest.raises(JudgekitError) as info:
        resolve_settings(flags={}, run_config=config, project=None, environ={})
    assert info.value.exit_code == 2
    assert info.value.message == f"{config}:3: judge.transport: must be auto or litellm; got 'httpx'"


def test_a_dropped_connection_is_retried_on_both() -> None:
    import threading

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        port = listener.getsockname()[1]
        accepted = []

        def drop() -> None:
            while len(accepted) < 8:
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return
                accepted.append(1)
                conn.recv(65536)
                conn.close()  # read the request, answer nothing

        threading.Thread(target=drop, daemon=True).start()
        results = []
        for transport in ("auto", "litellm"):
            client = client_at_port(port, transport)
            results.append(run(client))
    lean, slow = results
    assert lean.error == slow.error == "provider_error"
    assert lean.attempts == slow.attempts == 2
    assert lean.error_detail.endswith("OpenAIException - Connection error. (gave up after 2 attempts)")
    assert lean.error_detail == slow.error_detail


def test_a_lean_call_to_the_loopback_server_takes_the_network_time_only() -> None:
    # the server used to write headers and body separately: Nagle + delayed ACK added ~44 ms per reply
    with JudgeServer(lambda body, i: Reply(content="x")) as server:
        client = make(server, "auto")

        async def go() -> list[float]:
            out = []
            for k in range(11):
                request = client.build_request([{"role": "user", "content": f"p{k}"}], schema=None)
                out.append((await client.complete(request, item="i")).latency_s)
            return out

        latencies = sorted(asyncio.run(go())[1:])
    assert latencies[len(latencies) // 2] < 0.02


def test_a_bad_transport_in_the_project_configuration_names_the_file_and_line(tmp_path: Path) -> None:
    from judgekit.settings import load_project_config

    project = tmp_path / "judgekit.toml"
    project.write_text('[judge]\nmodel = "openai/gpt-4o-mini"\ntransport = "httpx"\n', encoding="utf-8")
    with pytest.raises(JudgekitError) as info:
        load_project_config(project)
    assert info.value.exit_code == 2
    assert f"{project}:3: judge.transport: must be 'auto' or 'litellm' (got 'httpx')" in str(info.value)


# ------------------------------------------------------------------ provider prompt-cache reads


@pytest.mark.parametrize(
    ("model", "input_price", "cached_price"),
    [("openai/gpt-4o-mini", 1.5e-7, 7.5e-8), (ANTHROPIC, 1e-6, 1e-7)],
    ids=["openai", "anthropic"],
)
def test_cached_prompt_tokens_are_recorded_and_priced_at_the_cached_rate(
    model: str, input_price: float, cached_price: float
) -> None:
    """OpenAI's ``prompt_tokens_details.cached_tokens`` and Anthropic's ``cache_read_input_tokens`` are
    read into ``cached_tokens`` on both transports, and the cost bills those tokens at the cached rate."""
    script = lambda body, i: Reply(  # noqa: E731
        content=verdict_reply("pass"), prompt_tokens=2000, completion_tokens=10, cached_tokens=1536
    )
    lean, slow, _ = both(script, model)
    assert lean.error is None
    assert (lean.prompt_tokens, lean.cached_tokens) == (2000, 1536)
    output_price = {"openai/gpt-4o-mini": 6e-7, ANTHROPIC: 5e-6}[model]
    expected = (2000 - 1536) * input_price + 1536 * cached_price + 10 * output_price
    assert lean.cost == pytest.approx(expected)
    assert comparable(lean) == comparable(slow)


def test_no_cache_report_means_zero_cached_tokens() -> None:
    lean, slow, _ = both(lambda body, i: Reply(content=verdict_reply("pass")), "openai/gpt-4o-mini")
    assert lean.cached_tokens == slow.cached_tokens == 0
    assert lean.cost == pytest.approx(100 * 1.5e-7 + 20 * 6e-7)


# ------------------------------------------------------------------ Anthropic prompt-cache breakpoints

CACHE_CASE_FACTS = "case id: addr-1\nuser goal: change the delivery address"


def _judge_bodies(model: str, transport: str, prompt_cache: str, **settings: Any) -> list[dict[str, Any]]:
    """The bodies a rubric grader sends for one trial (two criteria), each against a fresh server."""
    from judgekit.cases import Case
    from judgekit.graders.rubric import RubricGrader
    from judgekit.judges.rubric import Criterion, Rubric
    from judgekit.transcript import Transcript

    rubric = Rubric(
        id="cache-test",
        version="1",
        criteria=(
            Criterion(id="honest", text="Never claim a failed update succeeded."),
            Criterion(id="polite", text="Stay polite."),
        ),
    )
    case = Case.model_validate({"id": "addr-1", "user_goal": "change the delivery address"})
    trial = Transcript.model_validate(
        {"case_id": "addr-1", "messages": [{"role": "user", "content": "Please update my address."}]}
    )
    with JudgeServer(lambda body, i: Reply(content=verdict_reply("pass"))) as server:
        client = make(server, transport, model, prompt_cache=prompt_cache, **settings)
        checks = asyncio.run(RubricGrader(rubric, client, include_case_criteria=False).grade(case, trial))
        assert all(c.verdict.value == "pass" for c in checks)
        return sorted(server.requests, key=json.dumps)


@pytest.mark.parametrize("transport", ["auto", "litellm"])
def test_anthropic_judge_prompts_carry_cache_breakpoints_at_the_shared_prefix_ends(transport: str) -> None:
    from judgekit.judges.prompt import SYSTEM_PROMPT

    for body in _judge_bodies(ANTHROPIC, transport, "auto"):
        assert body["system"] == [
            {"type": "text", "text": SYSTEM_PROMPT, "cache_control": {"type": "ephemeral"}}
        ]
        (message,) = body["messages"]
        criterion_part, case_part, trial_part = message["content"]
        assert criterion_part["cache_control"] == case_part["cache_control"] == {"type": "ephemeral"}
        assert set(trial_part) == {"type", "text"}
        assert criterion_part["text"].startswith("Decide one criterion")
        assert case_part["text"].startswith("Facts about the task")
        assert case_part["text"].endswith(">>>\n\n")
        assert "END CASE_FACTS" in case_part["text"]
        assert trial_part["text"].startswith("The conversation, one JSON object per line")
        assert "addr-1" in case_part["text"]
        assert "Please update my address." in trial_part["text"]


def test_anthropic_cache_breakpoints_are_the_same_body_on_both_transports() -> None:
    lean, slow = (_judge_bodies(ANTHROPIC, t, "auto") for t in ("auto", "litellm"))
    assert len(lean) == 2
    assert lean == slow


def test_prompt_cache_off_sends_no_cache_control() -> None:
    bodies = [_judge_bodies(ANTHROPIC, t, "off") for t in ("auto", "litellm")]
    assert bodies[0] == bodies[1]
    for body in bodies[0]:
        assert "cache_control" not in json.dumps(body)
        assert len(body["messages"][0]["content"]) == 1
    marked = _judge_bodies(ANTHROPIC, "auto", "auto")
    for plain, cached in zip(bodies[0], marked, strict=True):  # the same text, only cut and marked
        texts = "".join(block["text"] for block in cached["messages"][0]["content"])
        assert plain["messages"][0]["content"][0]["text"] == texts
        assert plain["system"][0]["text"] == cached["system"][0]["text"]


@pytest.mark.parametrize("transport", ["auto", "litellm"])
def test_openai_bodies_are_unchanged_by_prompt_cache(transport: str) -> None:
    auto, off = (_judge_bodies(OPENAI, transport, p) for p in ("auto", "off"))
    assert auto == off
    for body in auto:
        assert "cache_control" not in json.dumps(body)
        assert all(isinstance(m["content"], str) for m in body["messages"])


def test_the_cassette_key_and_record_are_the_same_with_prompt_cache_auto_and_off(tmp_path: Path) -> None:
    path = tmp_path / "judge.jsonl"
    recorded = _judge_bodies(ANTHROPIC, "auto", "auto", cassette=Cassette(path))
    assert "cache_control" in json.dumps(recorded)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 2
    for line in lines:  # the stored request is the plain one: text messages, no breakpoints
        assert "cache_control" not in json.dumps(line["request"])
        assert all(isinstance(m["content"], str) for m in line["request"]["messages"])
    for transport in ("auto", "litellm"):  # off finds every reply recorded with auto: the same keys
        assert _judge_bodies(ANTHROPIC, transport, "off", cassette=Cassette(path)) == []
    assert len(path.read_text(encoding="utf-8").splitlines()) == 2


def test_anthropic_cache_writes_and_reads_cost_the_same_on_both_transports() -> None:
    """litellm bills Anthropic cache writes at 1.25 times the input price and reads at 0.1 times; the lean
    path reads both counts and gets litellm's price for them."""
    script = lambda body, i: Reply(  # noqa: E731
        content=verdict_reply("pass"),
        prompt_tokens=5000,
        completion_tokens=10,
        cached_tokens=3000,
        cache_creation_tokens=1500,
    )
    lean, slow, _ = both(script, ANTHROPIC)
    assert lean.error is None
    assert (lean.prompt_tokens, lean.cached_tokens) == (5000, 3000)
    expected = 500 * 1e-6 + 1500 * 1.25e-6 + 3000 * 1e-7 + 10 * 5e-6
    assert lean.cost == pytest.approx(expected)
    assert comparable(lean) == comparable(slow)


@pytest.mark.parametrize(
    ("written", "shown"),
    [("never", "'never'"), ("off", 'False (quote it: "off"; YAML reads a bare off as false)')],
    ids=["unknown", "bare-off"],
)
def test_a_bad_prompt_cache_in_a_run_configuration_names_the_file_and_line(
    tmp_path: Path, written: str, shown: str
) -> None:
    from judgekit.settings import resolve_settings

    config = tmp_path / "run.yaml"
    config.write_text(f"judge:\n  model: openai/gpt-4o-mini\n  prompt_cache: {written}\n", encoding="utf-8")
    with pytest.raises(JudgekitError) as info:
        resolve_settings(flags={}, run_config=config, project=None, environ={})
    assert info.value.exit_code == 2
    assert info.value.message == f"{config}:3: judge.prompt_cache: must be auto or off; got {shown}"


def test_prompt_cache_in_the_project_configuration_is_checked_and_used(tmp_path: Path) -> None:
    from judgekit.settings import load_project_config, resolve_settings

    project = tmp_path / "judgekit.toml"
    project.write_text('[judge]\nmodel = "openai/gpt-4o-mini"\nprompt_cache = "off"\n', encoding="utf-8")
    settings = resolve_settings(flags={}, project=load_project_config(project), environ={})
    assert settings.value("judge.prompt_cache") == "off"
    project.write_text('[judge]\nmodel = "openai/gpt-4o-mini"\nprompt_cache = "on"\n', encoding="utf-8")
    with pytest.raises(JudgekitError) as info:
        load_project_config(project)
    assert info.value.exit_code == 2
    assert f"{project}:3: judge.prompt_cache: must be 'auto' or 'off' (got 'on')" in str(info.value)
