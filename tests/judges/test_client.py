"""The judge client over real HTTP against a loopback OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judgekit.errors import JudgekitError
from judgekit.judges.cache import CacheMode, Cassette
from judgekit.judges.client import ClientSettings, JudgeClient, JudgeParams
from judgekit.judges.parse import verdict_json_schema
from judges.server import Reply, verdict_reply

MODEL = "openai/test-judge"
KEY = "sk-test-DO-NOT-LEAK-0123456789"


@pytest.fixture(params=["auto", "litellm"], ids=["lean", "litellm"])
def transport(request: pytest.FixtureRequest) -> str:
    """Every client test runs on both transports: judgekit's lean HTTP client and litellm.acompletion."""
    return str(request.param)


@pytest.fixture
def client_for(transport: str) -> Callable[..., JudgeClient]:
    def make(server: Any, **settings: Any) -> JudgeClient:
        params = settings.pop("params", None) or JudgeParams(model=MODEL)
        mode = settings.pop("mode", CacheMode.OFF)
        cassette = settings.pop("cassette", None)
        base = {
            "api_base": server.api_base,
            "backoff_base": 0.01,
            "backoff_max": 0.05,
            "timeout": 5.0,
            "transport": transport,
        }
        base.update(settings)
        client = JudgeClient(params, ClientSettings(**base), cassette=cassette, mode=mode, api_key=KEY)
        assert client.route == ("lean-openai" if transport == "auto" else "litellm")
        return client

    return make


def ask(client: JudgeClient, prompts: list[str], *, schema: dict[str, Any] | None = None) -> list[Any]:
    async def run() -> list[Any]:
        requests = [client.build_request([{"role": "user", "content": p}], schema=schema) for p in prompts]
        return await asyncio.gather(*(client.complete(r, item=f"item-{i}") for i, r in enumerate(requests)))

    return asyncio.run(run())


def test_success_records_content_tokens_and_cost(client_for: Any, serve: Any) -> None:
    server = serve(
        lambda body, i: Reply(content=verdict_reply("pass"), prompt_tokens=120, completion_tokens=30)
    )
    client = client_for(server, input_cost_per_token=1e-6, output_cost_per_token=2e-6)
    [result] = ask(client, ["hello"])
    assert result.error is None
    assert json.loads(result.content)["verdict"] == "pass"
    assert (result.prompt_tokens, result.completion_tokens) == (120, 30)
    assert result.cost == pytest.approx(120e-6 + 60e-6)
    assert client.usage.cost == pytest.approx(180e-6)
    assert client.usage.http_calls == 1
    assert server.calls == 1
    assert server.auth_headers == [f"Bearer {KEY}"]


@pytest.mark.parametrize("status", [429, 500, 503], ids=["rate_limited", "server_error", "unavailable"])
def test_transient_errors_are_retried(client_for: Any, serve: Any, status: int) -> None:
    script = [Reply(status=status), Reply(status=status), Reply(content=verdict_reply("fail"))]
    server = serve(lambda body, i: script[i])
    client = client_for(server, max_retries=3)
    [result] = ask(client, ["x"])
    assert result.error is None
    assert result.attempts == 3
    assert server.calls == 3
    assert client.usage.retries == 2


def test_retry_after_header_is_a_lower_bound(client_for: Any, serve: Any) -> None:
    script = [Reply(status=429, headers={"Retry-After": "0.3"}), Reply(content=verdict_reply("pass"))]
    server = serve(lambda body, i: script[i])
    client = client_for(server, max_retries=2, backoff_max=5.0)
    started = time.perf_counter()
    [result] = ask(client, ["x"])
    assert result.error is None
    assert time.perf_counter() - started >= 0.3


def test_outage_gives_error_after_retries_and_run_goes_on(client_for: Any, serve: Any) -> None:
    server = serve(lambda body, i: Reply(status=500))
    client = client_for(server, max_retries=2)
    results = ask(client, ["a", "b"])
    assert [r.error for r in results] == ["provider_error", "provider_error"]
    assert all("gave up after 3 attempts" in r.error_detail for r in results)
    assert "item-0" in results[0].error_detail
    assert server.calls == 6
    assert client.usage.errors["provider_error"] == 2


def test_timeout_is_per_attempt_and_retried(client_for: Any, serve: Any) -> None:
    script = [Reply(delay=1.5, content=verdict_reply("pass")), Reply(content=verdict_reply("fail"))]
    server = serve(lambda body, i: script[i])
    client = client_for(server, timeout=0.4, max_retries=1)
    started = time.perf_counter()
    [result] = ask(client, ["x"])
    assert result.error is None
    assert json.loads(result.content)["verdict"] == "fail"
    assert result.attempts == 2
    assert time.perf_counter() - started < 1.4


@pytest.mark.parametrize("status", [400, 401, 404], ids=["bad_request", "unauthorised", "not_found"])
def test_client_errors_are_not_retried(client_for: Any, serve: Any, status: int) -> None:
    server = serve(lambda body, i: Reply(status=status))
    client = client_for(server, max_retries=3)
    [result] = ask(client, ["x"])
    assert result.error == "provider_error"
    assert "not retried" in result.error_detail
    assert server.calls == 1


def test_malformed_json_body_is_an_error_not_a_crash(client_for: Any, serve: Any) -> None:
    server = serve(lambda body, i: Reply(raw=b'{"choices": [ {"message": '))
    client = client_for(server, max_retries=1)
    [result] = ask(client, ["x"])
    assert result.error == "provider_error"
    assert server.calls == 2


def test_completion_without_choices_is_an_error(client_for: Any, serve: Any) -> None:
    server = serve(lambda body, i: Reply(raw=b'{"id": "x", "object": "chat.completion", "choices": []}'))
    client = client_for(server, max_retries=0)
    [result] = ask(client, ["x"])
    assert result.error == "provider_error"
    assert "malformed completion" in result.error_detail


def test_concurrency_limit_is_respected(client_for: Any, serve: Any) -> None:
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def script(body: dict[str, Any], i: int) -> Reply:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.2)
        with lock:
            state["now"] -= 1
        return Reply(content=verdict_reply("pass"))

    server = serve(script)
    client = client_for(server, concurrency=3)
    results = ask(client, [f"p{i}" for i in range(12)])
    assert all(r.error is None for r in results)
    assert server.calls == 12
    assert state["peak"] == 3


def test_identical_concurrent_requests_share_one_call(client_for: Any, serve: Any) -> None:
    server = serve(lambda body, i: Reply(content=verdict_reply("pass"), delay=0.05))
    client = client_for(server)
    results = ask(client, ["same"] * 5)
    assert all(r.error is None for r in results)
    assert server.calls == 1


def test_budget_stops_new_calls_cleanly(client_for: Any, serve: Any) -> None:
    server = serve(
        lambda body, i: Reply(content=verdict_reply("pass"), prompt_tokens=1000, completion_tokens=0)
    )
    # each call costs 1000 * 1e-6 = $0.001; a $0.0035 budget allows four calls at concurrency 1
    client = client_for(
        server, concurrency=1, max_cost=0.0035, input_cost_per_token=1e-6, output_cost_per_token=1e-6
    )
    results = ask(client, [f"p{i}" for i in range(10)])
    done = [r for r in results if r.error is None]
    stopped = [r for r in results if r.error == "budget_exhausted"]
    assert len(done) == 4
    assert len(stopped) == 6
    assert server.calls == 4
    assert client.usage.cost == pytest.approx(0.004)
    assert "cost budget" in stopped[0].error_detail


def test_structured_output_sends_the_schema(client_for: Any, serve: Any) -> None:
    server = serve(lambda body, i: Reply(content=verdict_reply("pass")))
    client = client_for(server, params=JudgeParams(model=MODEL, structured_output="json_schema"))
    schema = verdict_json_schema(["pass", "fail"], 2)
    ask(client, ["x"], schema=schema)
    sent = server.requests[0]["response_format"]
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["schema"]["properties"]["verdict"]["enum"] == ["pass", "fail"]


def test_structured_output_off_sends_no_schema(client_for: Any, serve: Any) -> None:
    server = serve(lambda body, i: Reply(content=verdict_reply("pass")))
    client = client_for(server, params=JudgeParams(model=MODEL, structured_output="off"))
    ask(client, ["x"], schema=verdict_json_schema(["pass", "fail"], 2))
    assert "response_format" not in server.requests[0]


def test_auto_structured_output_follows_litellm_model_map(client_for: Any, serve: Any) -> None:
    server = serve(lambda body, i: Reply(content=verdict_reply("pass")))
    unmapped = client_for(server)
    mapped = client_for(server, params=JudgeParams(model="openai/gpt-4o-mini"))
    assert unmapped.supports_schema is False
    assert mapped.supports_schema is True


# ------------------------------------------------------------------ preflight


def test_unknown_provider_fails_before_any_call(serve: Any) -> None:
    server = serve(lambda body, i: Reply(content="x"))
    with pytest.raises(JudgekitError, match="unknown judge model 'no-such-model-xyz'"):
        JudgeClient(JudgeParams(model="no-such-model-xyz"), api_key=KEY)
    assert server.calls == 0


def test_unmapped_model_without_api_base_is_unknown() -> None:
    with pytest.raises(JudgekitError, match="not in litellm's model map"):
        JudgeClient(JudgeParams(model="openai/gpt-nonexistent-77"), api_key=KEY)


def test_missing_api_key_fails_before_any_work(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(JudgekitError, match="needs OPENAI_API_KEY"):
        JudgeClient(JudgeParams(model="openai/gpt-4o-mini"))


def test_budget_on_unpriced_model_is_refused(client_for: Any, serve: Any) -> None:
    server = serve(lambda body, i: Reply(content="x"))
    with pytest.raises(JudgekitError, match="no price"):
        client_for(server, max_cost=1.0)


def test_record_and_replay_modes_need_a_cassette() -> None:
    with pytest.raises(JudgekitError, match="needs a cassette"):
        JudgeClient(JudgeParams(model=MODEL), mode=CacheMode.REPLAY)


# ------------------------------------------------------------------ cassette


def test_cassette_round_trip_makes_zero_calls_on_replay(client_for: Any, serve: Any, tmp_path: Path) -> None:
    server = serve(lambda body, i: Reply(content=verdict_reply("pass" if i % 2 else "fail")))
    path = tmp_path / "judge.jsonl"
    recorder = client_for(server, mode=CacheMode.RECORD, cassette=Cassette(path))
    first = ask(recorder, [f"p{i}" for i in range(6)])
    assert server.calls == 6
    again = ask(recorder, [f"p{i}" for i in range(6)])
    assert server.calls == 6
    assert recorder.usage.cache_hits == 6
    assert [r.content for r in again] == [r.content for r in first]

    replay = JudgeClient(JudgeParams(model=MODEL), mode=CacheMode.REPLAY, cassette=Cassette(path))
    replayed = ask(replay, [f"p{i}" for i in range(6)])
    assert server.calls == 6
    assert [r.content for r in replayed] == [r.content for r in first]
    assert all(r.cached and r.cost == 0.0 for r in replayed)


def test_replay_miss_is_an_error_naming_the_item(serve: Any, tmp_path: Path) -> None:
    server = serve(lambda body, i: Reply(content=verdict_reply("pass")))
    replay = JudgeClient(
        JudgeParams(model=MODEL), mode=CacheMode.REPLAY, cassette=Cassette(tmp_path / "c.jsonl")
    )
    [result] = ask(replay, ["never recorded"])
    assert result.error == "cassette_miss"
    assert result.error_detail.startswith("item-0:")
    assert server.calls == 0
    assert replay.usage.errors["cassette_miss"] == 1


def test_cassette_key_covers_the_whole_request(client_for: Any, serve: Any, tmp_path: Path) -> None:
    server = serve(lambda body, i: Reply(content=verdict_reply("pass")))
    path = tmp_path / "c.jsonl"
    ask(client_for(server, mode=CacheMode.RECORD, cassette=Cassette(path)), ["p"])
    for params in (
        JudgeParams(model=MODEL, temperature=0.5),
        JudgeParams(model=MODEL, max_tokens=100),
        JudgeParams(model=MODEL, seed=7),
        JudgeParams(model="openai/test-judge-2"),
    ):
        other = client_for(server, params=params, mode=CacheMode.RECORD, cassette=Cassette(path))
        ask(other, ["p"])
    assert server.calls == 5


def test_api_key_never_reaches_the_cassette_or_results(client_for: Any, serve: Any, tmp_path: Path) -> None:
    # a hostile server echoes the Authorization header back in the reply
    server = serve(lambda body, i: Reply(content=verdict_reply("pass", rationale="echo")))

    def echo(body: dict[str, Any], i: int) -> Reply:
        return Reply(content=json.dumps({"verdict": "pass", "rationale": server.auth_headers[i]}))

    server.script = echo
    path = tmp_path / "c.jsonl"
    client = client_for(server, mode=CacheMode.RECORD, cassette=Cassette(path))
    [result] = ask(client, ["p"])
    assert KEY not in result.content
    assert "[REDACTED]" in result.content
    text = path.read_text(encoding="utf-8")
    assert KEY not in text
    assert "[REDACTED]" in text
    assert "api_key" not in text
    assert server.api_base not in text


def test_unpriced_model_cost_is_unknown_not_zero(client_for: Any, serve: Any) -> None:
    server = serve(lambda body, i: Reply(content=verdict_reply("pass")))
    client = client_for(server)
    [result] = ask(client, ["x"])
    assert result.cost is None
    assert client.usage.unpriced == 1
    assert client.usage.cost == 0.0


def test_mapped_model_is_priced_from_litellms_local_map(client_for: Any, serve: Any) -> None:
    server = serve(
        lambda body, i: Reply(content=verdict_reply("pass"), prompt_tokens=1_000_000, completion_tokens=0)
    )
    client = client_for(server, params=JudgeParams(model="openai/gpt-4o-mini"))
    [result] = ask(client, ["x"])
    import litellm

    expected = litellm.get_model_info("gpt-4o-mini")["input_cost_per_token"] * 1_000_000
    assert result.cost == pytest.approx(expected)
    assert client.usage.unpriced == 0


# ------------------------------------------------------------------ pacing


def test_admission_bounds_judgments_prepared_at_once(client_for: Any, serve: Any) -> None:
    client = client_for(serve(lambda body, i: Reply(content="x")), concurrency=3)

    async def run() -> bool:
        admission = client.admission()
        for _ in range(6):  # twice the concurrency are admitted at once
            await asyncio.wait_for(admission.acquire(), timeout=1.0)
        try:
            await asyncio.wait_for(admission.acquire(), timeout=0.05)
        except TimeoutError:
            return False
        return True

    assert asyncio.run(run()) is False


def test_importing_litellm_freezes_its_objects_out_of_the_collector() -> None:
    import subprocess
    import sys

    code = (
        "import gc; from judgekit.judges.client import import_litellm; import_litellm(); "
        "print(gc.get_freeze_count() > 100_000)"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "True"


def test_a_key_given_to_the_client_is_left_out_of_every_file_written_after(tmp_path: Path) -> None:
    """An API key passed in code (not from a secret-named variable) is still redacted from outputs."""
    from judgekit.io.atomic import write_atomic

    key = "k3y-given-in-code-7Qm2Zp9Lx4"
    JudgeClient(JudgeParams(model="openai/gpt-4o-mini"), api_key=key)
    target = tmp_path / "report.md"
    write_atomic(target, f"the transcript quoted {key} and went on")
    assert key not in target.read_text(encoding="utf-8")
    assert "[REDACTED]" in target.read_text(encoding="utf-8")
