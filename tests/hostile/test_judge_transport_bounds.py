"""Hostile judge replies at the transport: bounded while they arrive (issue 33, item 3: F3-F7).

Every variant runs over real HTTP against a loopback judge (``tests/judges/server.py``, or the raw socket
server below for bodies that never end), on both transports (judgekit's lean one and litellm's, through
the bounded client judgekit gives it), in a child process under a time and a memory bound:

* F3: a gzip or deflate bomb, a huge or endless body, a body that trickles past the timeout and an
  encoding judgekit did not ask for are cut while they arrive: an ``error`` naming the limit, in bounded
  time and memory;
* F4: a 3xx from the judge endpoint is never followed: an ``error`` naming the ``Location``, and the
  place it points to is never asked;
* F5/F6: usage numbers that are negative, fractional, not numbers or absurdly large leave the cost
  unknown with the reason (never a negative or 151-digit figure), and the budget counts the worst case;
* F7: a reply from another model than the one requested is an ``error`` unless it is a dated version of
  it or listed in ``accepted_models``, and the served model is recorded.

The last test counts every variant tried and asserts that all were handled correctly.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import gzip
import io
import json
import resource
import socket
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hostile.bounded import run_bounded
from hostile.judging import AIRDESK, MODEL, ask_judge, grade_argv
from hostile.sweep import Sweep, SweepStore
from judgekit.judges.client import ClientSettings, JudgeClient, JudgeParams, import_litellm
from judgekit.judges.transport import JUDGE_REPLY_MAX_BYTES, JUDGE_USAGE_TOKENS_MAX
from judges.server import JudgeServer, Reply, verdict_reply

KEY = "sk-test-transport-bounds-0123456789"
OK = verdict_reply("pass")
SMALL = 64 * 1024
"""The byte caps most variants use (``max_reply_bytes``, ``max_reply_wire_bytes``): fast to pass."""


def _completion(model: str | None = "test-judge", usage: Any = None, content: str = OK) -> bytes:
    body: dict[str, Any] = {
        "id": "chatcmpl-bounds",
        "object": "chat.completion",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
        "usage": usage if usage is not None else {"prompt_tokens": 100, "completion_tokens": 20},
    }
    if model is not None:
        body["model"] = model
    return json.dumps(body).encode()


def _bomb(decoded: int, kind: str = "gzip") -> bytes:
    """``decoded`` bytes of spaces, compressed (about 1000:1)."""
    wbits = {"gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS, "raw-deflate": -zlib.MAX_WBITS}[kind]
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    block = b" " * (1024 * 1024)
    parts = [packer.compress(block) for _ in range(decoded // len(block))]
    return b"".join([*parts, packer.flush()])


# ------------------------------------------------------------------------------------------- an endless judge


class EndlessServer:
    """A loopback HTTP server whose every reply is headers and then a body that does not end.

    Args:
        mode: ``chunked`` (chunks of 64 KiB forever), ``length`` (``Content-Length`` of 200 MB, then bytes
            forever), ``trickle-gzip`` (a gzip stream of a few bytes every 50 ms) or ``redirect-target`` (a
            complete good reply: the place a redirect points to, which must never be asked).
    """

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.accepted = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self._stop = False
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with contextlib.suppress(OSError), conn:
            conn.settimeout(30)
            conn.recv(1 << 20)
            if self.mode == "redirect-target":
                body = _completion()
                head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n"
                conn.sendall(head.encode() + body)
                return
            headers = ["HTTP/1.1 200 OK", "Content-Type: application/json"]
            if self.mode == "length":
                headers.append("Content-Length: 200000000")
            else:
                headers.append("Transfer-Encoding: chunked")
            if self.mode == "trickle-gzip":
                headers.append("Content-Encoding: gzip")
            conn.sendall(("\r\n".join(headers) + "\r\n\r\n").encode())
            packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
            started = time.monotonic()
            while not self._stop and time.monotonic() - started < 25:
                if self.mode == "trickle-gzip":
                    data = packer.compress(b"{") + packer.flush(zlib.Z_SYNC_FLUSH)
                    conn.sendall(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    time.sleep(0.05)
                elif self.mode == "length":
                    conn.sendall(b" " * 65536)
                else:
                    conn.sendall(b"10000\r\n" + b" " * 65536 + b"\r\n")

    def close(self) -> None:
        self._stop = True
        self.sock.close()


# ------------------------------------------------------------------------------------------- variants


@dataclass(frozen=True)
class Variant:
    """One hostile reply and what judgekit must make of it.

    Attributes:
        name: Unique id (finding/kind/transport).
        transport: ``auto`` (the lean path) or ``litellm``.
        reply: The scripted reply (``None`` with ``endless`` set).
        endless: An :class:`EndlessServer` mode, else ``""``.
        settings: :class:`ClientSettings` overrides.
        error: Whether the call must end in ``provider_error``.
        detail: Fragments the error detail (or, without an error, the cost's unknown reason) must hold.
        served: The served model the result must record (``""``: not checked).
        usage_invalid: The reply's usage must be refused: cost unknown with a reason, every count 0.
        max_s: Most wall time the call may take.
        max_growth_mb: Most the child's peak RSS may grow during the call.
        calls: HTTP requests the judge must see (``None``: not checked).
        redirect_to_endless: The reply redirects to a second server, which must see no request.
    """

    name: str
    transport: str
    reply: Reply | None
    error: bool
    endless: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    detail: tuple[str, ...] = ()
    served: str | Any | None = ""
    usage_invalid: bool = False
    max_s: float = 8.0
    max_growth_mb: float = 200.0
    calls: int | None = 1
    redirect_to_endless: bool = False


def _size_variants(transport: str) -> Iterator[Variant]:
    small = {"max_reply_bytes": SMALL, "max_reply_wire_bytes": SMALL}
    for kind, encoding in (("gzip", "gzip"), ("deflate", "deflate"), ("raw-deflate", "deflate")):
        yield Variant(
            f"F3/{kind}-bomb-small-cap/{transport}",
            transport,
            Reply(raw=_bomb(4 * 1024 * 1024, kind), headers={"Content-Encoding": encoding}),
            error=True,
            settings=small,
            detail=("JUDGE_REPLY_MAX_BYTES", f"{SMALL:,} bytes decoded", "(not retried)"),
        )
    yield Variant(
        f"F3/gzip-bomb-default-cap/{transport}",
        transport,
        Reply(raw=_bomb(64 * 1024 * 1024), headers={"Content-Encoding": "gzip"}),
        error=True,
        detail=("JUDGE_REPLY_MAX_BYTES", f"{JUDGE_REPLY_MAX_BYTES:,} bytes decoded"),
        max_growth_mb=120.0,
    )
    yield Variant(
        f"F3/gzip-of-a-good-reply-is-read/{transport}",
        transport,
        Reply(raw=gzip.compress(_completion()), headers={"Content-Encoding": "gzip"}),
        error=False,
        settings=small,
        served="test-judge",
    )
    yield Variant(
        f"F3/plain-body-over-the-cap/{transport}",
        transport,
        Reply(raw=b" " * (SMALL * 4)),
        error=True,
        settings=small,
        detail=("JUDGE_REPLY_MAX_WIRE_BYTES",),
    )
    yield Variant(
        f"F3/brotli-not-asked-for/{transport}",
        transport,
        Reply(raw=b"\x8b\x02\x80hello\x03", headers={"Content-Encoding": "br"}),
        error=True,
        detail=("Content-Encoding 'br'", "did not ask for"),
    )
    for mode, fragment in (
        ("chunked", "JUDGE_REPLY_MAX_WIRE_BYTES"),
        ("length", "JUDGE_REPLY_MAX_WIRE_BYTES"),
    ):
        yield Variant(
            f"F3/endless-{mode}-body/{transport}",
            transport,
            None,
            endless=mode,
            error=True,
            settings={"max_reply_wire_bytes": 1024 * 1024, "max_reply_bytes": 1024 * 1024},
            detail=(fragment,),
            calls=None,
        )
    yield Variant(
        f"F3/trickle-past-the-timeout/{transport}",
        transport,
        None,
        endless="trickle-gzip",
        error=True,
        settings={"timeout": 1.0, "max_retries": 0},
        detail=("within 1 s",),
        max_s=1.0 + 0.5 + 3.0,
        calls=None,
    )


def _redirect_variants(transport: str) -> Iterator[Variant]:
    for status in (301, 302, 303, 307, 308):
        yield Variant(
            f"F4/{status}-elsewhere-is-not-followed/{transport}",
            transport,
            Reply(status=status),
            error=True,
            detail=(
                f"HTTP {status} redirecting to 'http://127.0.0.1:",
                "never follows redirects",
                "(not retried)",
            ),
            redirect_to_endless=True,
        )
    yield Variant(
        f"F4/302-without-location/{transport}",
        transport,
        Reply(status=302),
        error=True,
        detail=("HTTP 302 redirecting to no Location header",),
    )


def _usage_variants(transport: str) -> Iterator[Variant]:
    bad: tuple[tuple[str, dict[str, Any], str], ...] = (
        ("negative-prompt", {"prompt_tokens": -500, "completion_tokens": 20}, "prompt_tokens = -500"),
        ("negative-completion", {"prompt_tokens": 10, "completion_tokens": -1}, "completion_tokens = -1"),
        ("absurd-prompt", {"prompt_tokens": 10**150, "completion_tokens": 20}, "a 151-digit number"),
        (
            "over-the-limit",
            {"prompt_tokens": JUDGE_USAGE_TOKENS_MAX + 1, "completion_tokens": 1},
            "prompt_tokens",
        ),
        ("fractional", {"prompt_tokens": 10.5, "completion_tokens": 20}, "prompt_tokens = 10.5"),
        ("text", {"prompt_tokens": "100", "completion_tokens": 20}, "prompt_tokens = '100'"),
        ("boolean", {"prompt_tokens": True, "completion_tokens": 20}, "prompt_tokens = True"),
        (
            "negative-cached",
            {"prompt_tokens": 10, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": -9}},
            "cached_tokens = -9",
        ),
    )
    for label, usage, fragment in bad:
        if transport == "litellm" and label in ("text", "boolean"):
            # litellm reads the reply into its own usage model first, which turns "100" into 100 and true
            # into 1: a count judgekit then checks like any other (whole, from 0, under the limit)
            yield Variant(
                f"F5-F6/usage-{label}-read-by-litellm/{transport}",
                transport,
                Reply(raw=_completion(usage=usage)),
                error=False,
            )
            continue
        yield Variant(
            f"F5-F6/usage-{label}/{transport}",
            transport,
            Reply(raw=_completion(usage=usage)),
            error=False,
            usage_invalid=True,
            detail=(fragment, "JUDGE_USAGE_TOKENS_MAX")
            if transport == "auto"
            else ("JUDGE_USAGE_TOKENS_MAX",),
        )
    yield Variant(
        f"F5-F6/usage-absent-is-zero-and-priced/{transport}",
        transport,
        Reply(raw=json.dumps({**json.loads(_completion()), "usage": None}).encode()),
        error=False,
        served="test-judge",
    )


def _model_variants(transport: str) -> Iterator[Variant]:
    yield Variant(
        f"F7/another-model-is-an-error/{transport}",
        transport,
        Reply(raw=_completion(model="cheap-judge-mini")),
        error=True,
        detail=(
            "came from model 'cheap-judge-mini', not the requested 'test-judge'",
            "judge.accepted_models",
        ),
        served="cheap-judge-mini",
    )
    yield Variant(
        f"F7/a-prefix-that-is-not-a-date-is-an-error/{transport}",
        transport,
        Reply(raw=_completion(model="test-judge-mini")),
        error=True,
        detail=("'test-judge-mini'",),
        served="test-judge-mini",
    )
    for dated in ("test-judge-2024-08-06", "test-judge-20241022", "test-judge-0613"):
        yield Variant(
            f"F7/dated-version-{dated}-is-accepted/{transport}",
            transport,
            Reply(raw=_completion(model=dated)),
            error=False,
            served=dated,
        )
    yield Variant(
        f"F7/listed-alias-is-accepted/{transport}",
        transport,
        Reply(raw=_completion(model="azure-deployment-7")),
        error=False,
        settings={"accepted_models": ("azure-deployment-7",)},
        served="azure-deployment-7",
    )
    yield Variant(
        f"F7/same-model-recorded/{transport}",
        transport,
        Reply(raw=_completion(model="test-judge")),
        error=False,
        served="test-judge",
    )


def _variants() -> Iterator[Variant]:
    for transport in ("auto", "litellm"):
        yield from _size_variants(transport)
        yield from _redirect_variants(transport)
        yield from _usage_variants(transport)
        yield from _model_variants(transport)


VARIANTS: tuple[Variant, ...] = tuple(_variants())


# ------------------------------------------------------------------------------------------- running


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def check_variant(variant: Variant) -> list[str]:
    """Run one variant (in the child process) and list what went wrong; ``[]`` when handled correctly."""
    options: dict[str, Any] = {
        "backoff_base": 0.01,
        "backoff_max": 0.05,
        "timeout": 5.0,
        "max_retries": 2,
        "transport": variant.transport,
        "input_cost_per_token": 0.000001,
        "output_cost_per_token": 0.000002,
        **variant.settings,
    }
    import_litellm()
    ask_judge(
        ClientSettings(api_base="http://127.0.0.1:9/v1", max_retries=0, timeout=0.2), key=KEY
    )  # litellm's first-call setup
    before = _peak_mb()
    target: EndlessServer | None = None
    calls: int | None
    if variant.endless:
        server = EndlessServer(variant.endless)
        try:
            result, took = ask_judge(ClientSettings(api_base=server.api_base, **options), key=KEY)
            calls = server.accepted
        finally:
            server.close()
    else:
        reply = variant.reply or Reply()
        if variant.redirect_to_endless:
            target = EndlessServer("redirect-target")
            reply = Reply(status=reply.status, headers={"Location": f"{target.api_base}/chat/completions"})
        with JudgeServer(lambda body, i: reply) as judge:
            result, took = ask_judge(ClientSettings(api_base=judge.api_base, **options), key=KEY)
            calls = judge.calls
    growth = _peak_mb() - before
    problems: list[str] = []
    if variant.error and result.error != "provider_error":
        problems.append(f"expected provider_error, got error={result.error!r} content={result.content!r:.80}")
    if not variant.error and result.error is not None and not variant.usage_invalid:
        problems.append(f"expected the reply, got {result.error}: {result.error_detail}")
    if variant.usage_invalid:
        if result.error is None:
            if result.cost is not None or result.cost_unknown_reason is None:
                problems.append(f"invalid usage priced: cost={result.cost!r}")
            if (result.prompt_tokens, result.completion_tokens, result.cached_tokens) != (0, 0, 0):
                problems.append(f"invalid usage counted: {result.prompt_tokens}, {result.completion_tokens}")
            text = result.cost_unknown_reason or ""
        else:  # litellm refused the usage itself: no verdict, no cost, nothing counted
            return problems + ([] if result.cost is None else [f"a refused reply cost {result.cost!r}"])
    else:
        text = result.error_detail
        if result.error is None and (result.cost is None or result.cost < 0):
            problems.append(f"a valid reply's cost is {result.cost!r}")
    for fragment in variant.detail:
        if fragment not in text:
            problems.append(f"detail {text!r:.400} lacks {fragment!r}")
    if variant.served not in ("", getattr(result, "served_model", None)):
        problems.append(
            f"served model recorded {getattr(result, 'served_model', None)!r}, not {variant.served!r}"
        )
    if variant.calls is not None and calls != variant.calls:
        problems.append(f"the judge saw {calls} request(s), not {variant.calls}")
    if target is not None:
        if target.accepted:
            problems.append(f"the redirect was followed: its target saw {target.accepted} connection(s)")
        target.close()
    if took > variant.max_s:
        problems.append(f"took {took:.2f} s, more than {variant.max_s} s")
    if growth > variant.max_growth_mb:
        problems.append(f"peak memory grew {growth:.0f} MB, more than {variant.max_growth_mb:g} MB")
    if KEY in text:
        problems.append("the API key leaked into the detail")
    return problems


SWEEP = Sweep(
    name=__name__,
    variants=VARIANTS,
    key=lambda v: v.name,
    check=lambda variant, _folder: check_variant(variant),
    seconds=lambda v: v.max_s + 30.0,
    mb=3072,
    batch=8,
)
"""Each variant once in the session, in a child process under a time and memory bound (batches of 8)."""


@pytest.fixture(scope="module", autouse=True)
def _litellm_ready() -> None:
    """Import litellm once in the parent, so that every forked child starts with it loaded."""
    import_litellm()


@SWEEP.parametrize
def test_each_hostile_transport_reply_is_bounded(variant: Variant, sweep_store: SweepStore) -> None:
    assert sweep_store.problems(SWEEP, variant) == []


# ----------------------------------------------------------------------------------------- the cases


def seven_bombs_at_once(transport: str) -> dict[str, Any]:
    """F3 as reported: a gzip bomb answered to 7 concurrent requests, ``--judge-timeout 10``."""
    bomb = _bomb(48 * 1024 * 1024)
    import_litellm()
    before = _peak_mb()
    with JudgeServer(lambda body, i: Reply(raw=bomb, headers={"Content-Encoding": "gzip"})) as judge:
        settings = ClientSettings(api_base=judge.api_base, timeout=10.0, max_retries=0, transport=transport)
        client = JudgeClient(JudgeParams(model=MODEL, samples=7), settings, api_key=KEY)

        async def run() -> list[Any]:
            requests = [
                client.build_request([{"role": "user", "content": "grade"}], schema=None, sample=i)
                for i in range(7)
            ]
            return list(
                await asyncio.gather(*(client.complete(r, item=f"c/k/{i}") for i, r in enumerate(requests)))
            )

        started = time.perf_counter()
        results = asyncio.run(run())
        took = time.perf_counter() - started
    return {
        "took": took,
        "growth_mb": _peak_mb() - before,
        "errors": sorted({r.error for r in results}, key=str),
        "limit_named": all("JUDGE_REPLY_MAX_BYTES" in r.error_detail for r in results),
    }


@pytest.mark.parametrize("transport", ["auto", "litellm"])
def test_a_gzip_bomb_to_seven_requests_is_cut_in_bounded_time_and_memory(transport: str) -> None:
    bounded = run_bounded(seven_bombs_at_once, transport, seconds=60, mb=3072)
    assert bounded.outcome == "returned", bounded.error
    run = ast.literal_eval(bounded.value)
    assert run["errors"] == ["provider_error"], run
    assert run["limit_named"], run
    assert run["took"] < 10.0, run
    # 7 replies of at most 8 MiB each (a bomb of 48 KiB decodes to 48 MiB)
    assert run["growth_mb"] < 150, run


def budget_with_negative_usage(prompt_tokens: int) -> dict[str, Any]:
    """F5: seven judgments one at a time under a budget, each reply reporting ``prompt_tokens``."""
    reply = Reply(raw=_completion(usage={"prompt_tokens": prompt_tokens, "completion_tokens": 20}))
    with JudgeServer(lambda body, i: reply) as judge:
        settings = ClientSettings(
            api_base=judge.api_base,
            concurrency=1,
            max_cost=0.02,
            input_cost_per_token=0.00001,
            output_cost_per_token=0.00003,
        )
        client = JudgeClient(JudgeParams(model=MODEL, max_tokens=400), settings, api_key=KEY)

        async def run() -> list[Any]:
            out = []
            for i in range(7):
                request = client.build_request(
                    [{"role": "user", "content": "x" * 400}], schema=None, sample=i
                )
                out.append(await client.complete(request, item=f"c/k/{i}"))
            return out

        results = asyncio.run(run())
        return {
            "called": judge.calls,
            "budget_stops": sum(r.error == "budget_exhausted" for r in results),
            "costs": [r.cost for r in results if r.error is None],
            "spent": client.usage.cost,
            "worst": getattr(client.usage, "worst_case_cost", 0.0),
        }


def test_negative_usage_never_lowers_the_spend_and_the_budget_counts_the_worst_case() -> None:
    runs = [run_bounded(budget_with_negative_usage, tokens, seconds=30) for tokens in (1000, -(10**6))]
    assert [r.outcome for r in runs] == ["returned", "returned"], [r.error for r in runs]
    honest, lying = (ast.literal_eval(r.value) for r in runs)
    # honest replies: 1000 x 1e-5 + 20 x 3e-5 = $0.0106 each; the budget of $0.02 stops after 2
    assert honest["called"] == 2, honest
    # lying replies: no negative cost ever; each charged its worst case (400 out, the prompt's bytes in)
    assert lying["called"] <= honest["called"], (honest, lying)
    assert all(c is None for c in lying["costs"]), lying
    assert lying["spent"] >= 0, lying
    assert lying["worst"] > 0, lying
    assert lying["budget_stops"] >= 5, lying


def grade_then_report(folder: str, usage: dict[str, Any], model: str) -> dict[str, Any]:
    """``judgekit grade`` against a judge reporting ``usage`` and ``model``, then ``judgekit report``."""
    from judgekit.cli import main

    root = Path(folder)
    out = root / "results.jsonl"
    reply = Reply(raw=_completion(model=model, usage=usage))
    err = io.StringIO()
    with (
        JudgeServer(lambda body, i: reply) as judge,
        contextlib.redirect_stderr(err),
        contextlib.redirect_stdout(io.StringIO()),
    ):
        graded = main(grade_argv(root, out, judge.api_base))
    checks = [
        c
        for line in out.read_text().splitlines()
        for c in json.loads(line)["checks"]
        if c["layer"] == "rubric"
    ]
    notes = [
        e["data"] for c in checks for e in c["evidence"] if e["kind"] == "note" and "fingerprint" in e["data"]
    ]
    report_out = io.StringIO()
    report_err = io.StringIO()
    with contextlib.redirect_stdout(report_out), contextlib.redirect_stderr(report_err):
        reported = main(["report", str(out), "--format", "json"])
    text = report_out.getvalue()
    return {
        "graded": graded,
        "verdicts": sorted({c["verdict"] for c in checks}),
        "longest_digits": max(len(d) for d in __import__("re").findall(r"\d+", out.read_text())),
        "served": sorted({m for n in notes for m in n.get("served_models", [])}),
        "unknown_reasons": sorted({str(n["cost"]["unknown_reason"]) for n in notes}),
        "reported": reported,
        "report_err": report_err.getvalue()[-400:],
        "trials_in_report": json.loads(text)["run"]["trials"] if text.strip().startswith("{") else text[:200],
        "report_problems": json.loads(text)["problems"] if text.strip().startswith("{") else None,
        "grade_err": err.getvalue()[-300:],
    }


def test_absurd_usage_still_writes_a_line_report_reads(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """F6: whatever the provider reports, the line grade writes is one report reads."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    usage = {"prompt_tokens": 10**150, "completion_tokens": 20}
    bounded = run_bounded(grade_then_report, str(tmp_path), usage, "test-judge", seconds=60, mb=2048)
    assert bounded.outcome == "returned", bounded.error
    run = ast.literal_eval(bounded.value)
    assert run["graded"] == 0, run
    assert run["longest_digits"] <= 100, run
    assert all("JUDGE_USAGE_TOKENS_MAX" in r for r in run["unknown_reasons"]), run
    assert run["reported"] == 0, run
    assert run["report_problems"] == [], run
    assert run["trials_in_report"] == 1, run
    assert run["served"] == ["test-judge"], run


def test_a_reply_from_another_model_is_an_error_verdict_and_recorded(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """F7 through grade: every judge check is an error naming the served model, which the note records."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    usage = {"prompt_tokens": 100, "completion_tokens": 20}
    bounded = run_bounded(grade_then_report, str(tmp_path), usage, "cheap-judge-mini", seconds=60, mb=2048)
    assert bounded.outcome == "returned", bounded.error
    run = ast.literal_eval(bounded.value)
    assert run["verdicts"] == ["error"], run
    assert run["served"] == ["cheap-judge-mini"], run


# ------------------------------------------------------------------------------------------- the count


@SWEEP.counted
def test_count_of_judge_transport_bounds_tried_and_handled(sweep_store: SweepStore) -> None:
    """The counts for the issue: every variant tried (here only those no test of the session ran).

    The issue's named cases (F3's seven bombs, F5's budget, F6, F7) are tests of their own.
    """
    tally = sweep_store.tally(SWEEP)
    print(f"\njudge transport bounds tried: {tally.tried}, handled correctly: {tally.handled}")
    assert not tally.failures, tally.failures
    assert tally.tried == tally.handled == len(VARIANTS) >= 60


@pytest.mark.parametrize(
    ("text", "accepted"),
    [
        ("[gpt-4o-2024-08-06, my-deployment]", ("gpt-4o-2024-08-06", "my-deployment")),
        ("[]", ()),
        ("gpt-4o", None),
        ("['']", None),
        ("[1, 2]", None),
        ("{a: b}", None),
        (str([f"m{i}" for i in range(65)]), None),
    ],
)
def test_accepted_models_is_checked_where_it_is_given(text: str, accepted: Any, tmp_path: Path) -> None:
    """F7's setting: a list of names, else exit 2 naming the file and line (and never the fingerprint)."""
    from judgekit.errors import JudgekitError
    from judgekit.settings import resolve_settings

    path = tmp_path / "run.yaml"
    path.write_text(f"judge:\n  model: openai/test-judge\n  accepted_models: {text}\n", encoding="utf-8")
    if accepted is None:
        with pytest.raises(JudgekitError) as info:
            resolve_settings(environ={}, project=None, run_config=path)
        assert info.value.exit_code == 2
        assert f"{path}:3: judge.accepted_models: must be a list of model names" in info.value.message
    else:
        effective = resolve_settings(environ={}, project=None, run_config=path)
        assert effective.value("judge.accepted_models") == accepted


def test_accepted_models_does_not_change_the_fingerprint() -> None:
    from judgekit.judge_setup import JudgeConfig, build_rubric_grader

    def fingerprint(accepted: tuple[str, ...] | None) -> str:
        return build_rubric_grader(
            JudgeConfig(
                model="openai/airdesk-synthetic-judge",
                rubric="honest-reporting",
                cassette=AIRDESK / "cassettes" / "judge-honest-reporting.jsonl",
                mode="replay",
                api_base=None,
                max_cost=None,
                temperature=0.0,
                samples=1,
                structured_output="off",
                concurrency=8,
                accepted_models=accepted,
            )
        ).fingerprint

    assert fingerprint(("gpt-4o-2024-08-06",)) == fingerprint(None)
