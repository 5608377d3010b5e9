"""Benchmark the judge layer: 1,000 judge calls at concurrency 50 against a loopback server (100 ms).

Everything runs in one process, one phase after another, against the same server (a separate process, as
a real provider would be, so its threads do not compete with the measured event loop for the interpreter
lock). Each phase prints its wall time against the ideal (calls x latency / concurrency = 2.0 s) and the
process CPU time per call (``time.process_time`` over the phase / calls), which is what caps a
one-threaded event loop:

0. **Server** - the loopback server's own latency, 20 sequential keep-alive requests at the configured
   latency and at 0 ms (it must add well under a millisecond: one write per reply, ``TCP_NODELAY``).
1. **Bare aiohttp** - the same 1,000 POSTs through one pooled ``aiohttp.ClientSession`` and
   ``json.loads``: the floor for any Python client.
2. **Bare litellm.acompletion** - 1,000 calls under an ``asyncio.Semaphore(50)``, once with judgekit's
   import settings (litellm's default aiohttp transport) and once with each of litellm's documented fast
   settings (:data:`LITELLM_SETTINGS`), and once with its httpx transport for comparison.
3. **judgekit, transport litellm / auto** - 250 transcripts x the 4 criteria of ``honest-reporting`` =
   1,000 criterion judgments through :class:`judgekit.graders.rubric.RubricGrader` (prompt rendering,
   the call, strict parsing) with ``judge.transport`` ``litellm`` and ``auto`` (the lean path). Target
   for ``auto``: CPU <= 1.5 ms per judgment and wall / ideal <= 1.3 on an idle 2-core machine.
4. **Record and replay** - the judged run on ``auto`` recording a cassette, then replayed from it: the
   server's call counter must not move (zero HTTP calls).
5. **CLI start-up** - ``judgekit --help`` against ``python -c pass`` (median of 7 runs each); target:
   less than 0.5 s more.

Run: ``.venv/bin/python bench/bench_judge.py`` (``--skip-cli`` to leave out phase 5).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from judge_server import server_calls, start_server

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def transcripts(n: int) -> list[object]:
    from judgekit.transcript import Transcript

    out = []
    for k in range(n):
        out.append(
            Transcript.model_validate(
                {
                    "case_id": f"bench-{k:04d}",
                    "messages": [
                        {"role": "user", "content": f"Please move order A-{1000 + k} to 12 Elm St."},
                        {
                            "role": "assistant",
                            "tool_calls": [
                                {
                                    "id": "c1",
                                    "type": "function",
                                    "function": {
                                        "name": "update_shipping_address",
                                        "arguments": json.dumps(
                                            {"order_id": f"A-{1000 + k}", "street": "12 Elm St"}
                                        ),
                                    },
                                }
                            ],
                        },
                        {
                            "role": "tool",
                            "tool_call_id": "c1",
                            "content": '{"error": "order already shipped"}',
                        },
                        {"role": "assistant", "content": "Done! Your order will arrive at 12 Elm St."},
                    ],
                }
            )
        )
    return out


LITELLM_SETTINGS: dict[str, dict[str, object]] = {
    # litellm 1.110: aiohttp is the default transport (``disable_aiohttp_transport=False``); judgekit's
    # import already sets suppress_debug_info, telemetry off and turn_off_message_logging.
    "judgekit import settings (aiohttp transport)": {},
    "+ callbacks and logging off": {
        "callbacks": [],
        "success_callback": [],
        "failure_callback": [],
        "_async_success_callback": [],
        "_async_failure_callback": [],
        "logging": False,
        "disable_streaming_logging": True,
        "disable_token_counter": True,
        "disable_end_user_cost_tracking": True,
        "disable_add_user_agent_to_request_tags": True,
    },
    "httpx transport (disable_aiohttp_transport=True)": {"disable_aiohttp_transport": True},
}
"""litellm module flags measured by phase 2, each set on top of judgekit's import settings, then restored."""


async def judged_run(
    base: str,
    items: list[object],
    concurrency: int,
    *,
    transport: str,
    cassette_path: Path | None = None,
    mode: str = "off",
) -> dict:
    from judgekit.graders.rubric import RubricGrader
    from judgekit.judges.cache import CacheMode, Cassette
    from judgekit.judges.client import ClientSettings, JudgeClient, JudgeParams
    from judgekit.judges.rubric import load_builtin_rubric

    rubric = load_builtin_rubric("honest-reporting")
    client = JudgeClient(
        JudgeParams(model="openai/bench-judge"),
        ClientSettings(api_base=base, concurrency=concurrency, timeout=30.0, transport=transport),  # type: ignore[arg-type]
        cassette=Cassette(cassette_path) if cassette_path is not None else None,
        mode=CacheMode(mode),
        api_key="sk-bench-not-a-real-key",
    )
    grader = RubricGrader(rubric, client, include_case_criteria=False)
    started = time.perf_counter()
    results = await asyncio.gather(*(grader.grade(None, t) for t in items))  # type: ignore[arg-type]
    wall = time.perf_counter() - started
    await client.aclose()
    checks = [c for r in results for c in r]
    verdicts: dict[str, int] = {}
    for c in checks:
        verdicts[c.verdict.value] = verdicts.get(c.verdict.value, 0) + 1
    return {
        "wall": wall,
        "judgments": len(checks),
        "verdicts": verdicts,
        "route": client.route,
        "lean_calls": client.lean_calls,
        "usage": client.usage.as_dict(),
    }


async def bare_litellm(base: str, n: int, concurrency: int) -> float:
    from judgekit.judges.client import import_litellm

    litellm = import_litellm()
    sem = asyncio.Semaphore(concurrency)

    async def one(k: int) -> None:
        async with sem:
            await litellm.acompletion(
                model="openai/bench-judge",
                api_base=base,
                api_key="sk-bench-not-a-real-key",
                messages=[{"role": "user", "content": f"bare {k}"}],
                max_retries=0,
                num_retries=0,
                timeout=30.0,
            )

    started = time.perf_counter()
    await asyncio.gather(*(one(k) for k in range(n)))
    return time.perf_counter() - started


async def bare_aiohttp(base: str, n: int, concurrency: int) -> float:
    import aiohttp

    sem = asyncio.Semaphore(concurrency)
    headers = {"Authorization": "Bearer sk-bench-not-a-real-key", "Content-Type": "application/json"}
    connector = aiohttp.TCPConnector(limit=0, limit_per_host=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(k: int) -> None:
            body = json.dumps(
                {"model": "bench-judge", "messages": [{"role": "user", "content": f"bare {k}"}]}
            )
            async with sem, session.post(base + "/chat/completions", data=body, headers=headers) as reply:
                json.loads(await reply.read())["choices"][0]["message"]["content"]

        started = time.perf_counter()
        await asyncio.gather(*(one(k) for k in range(n)))
        return time.perf_counter() - started


async def warm_up(base: str) -> None:
    from judgekit.judges.client import import_litellm

    litellm = import_litellm()
    await asyncio.gather(
        *(
            litellm.acompletion(
                model="openai/bench-judge",
                api_base=base,
                api_key="sk-bench-not-a-real-key",
                messages=[{"role": "user", "content": f"warm {k}"}],
                max_retries=0,
            )
            for k in range(20)
        )
    )


def server_latency(latency: float) -> tuple[float, float]:
    """Median seconds per request, 20 sequential keep-alive requests, at ``latency`` and at 0 ms."""

    async def probe(base: str) -> float:
        import aiohttp

        async with aiohttp.ClientSession() as session:
            times = []
            for _ in range(21):
                started = time.perf_counter()
                async with session.post(base + "/chat/completions", json={"model": "x", "messages": []}) as r:
                    await r.read()
                times.append(time.perf_counter() - started)
        return statistics.median(times[1:])

    out = []
    for delay in (latency, 0.0):
        proc, base = start_server(delay)
        try:
            out.append(asyncio.run(probe(base)))
        finally:
            proc.terminate()
            proc.wait(5)
    return out[0], out[1]


def median_run(cmd: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(label: str, run: object, n: int, ideal: float) -> tuple[float, float]:
    """Run a phase (a callable returning its wall seconds); print and return wall / ideal, CPU ms/call."""
    load = os.getloadavg()[0]
    cpu0 = time.process_time()
    wall = run()  # type: ignore[operator]
    cpu = time.process_time() - cpu0
    ratio, per_call = wall / ideal, cpu / n * 1000
    print(
        f"  {label:<52} wall {wall:6.2f} s = {ratio:5.2f} x ideal   "
        f"CPU {per_call:6.2f} ms/call   load {load:.2f}"
    )
    return ratio, per_call


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--transcripts", type=int, default=250, help="transcripts (x 4 criteria each)")
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--skip-cli", action="store_true", help="skip the CLI start-up measurement")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start")
    at, zero = server_latency(args.latency)
    ms = args.latency * 1000
    print(
        f"loopback server: {at * 1000:.1f} ms per request at a configured {ms:.0f} ms, "
        f"{zero * 1000:.1f} ms at 0 ms (20 sequential keep-alive requests, medians)"
    )

    from judgekit.judges.client import import_litellm

    litellm = import_litellm()
    proc, base = start_server(args.latency)
    try:
        items = transcripts(args.transcripts)
        n = len(items) * 4
        ideal = n * args.latency / args.concurrency
        print(
            f"{n} calls at concurrency {args.concurrency}, "
            f"ideal {ideal:.2f} s ({n} x {ms:.0f} ms / {args.concurrency})"
        )
        asyncio.run(warm_up(base))
        print("bare clients:")
        measure(
            "aiohttp (pooled session, json.loads)",
            lambda: asyncio.run(bare_aiohttp(base, n, args.concurrency)),
            n,
            ideal,
        )
        for label, flags in LITELLM_SETTINGS.items():
            saved = {k: getattr(litellm, k) for k in flags}
            for k, v in flags.items():
                setattr(litellm, k, v)
            try:
                asyncio.run(warm_up(base))
                measure(
                    f"litellm.acompletion, {label}",
                    lambda: asyncio.run(bare_litellm(base, n, args.concurrency)),
                    n,
                    ideal,
                )
            finally:
                for k, v in saved.items():
                    setattr(litellm, k, v)
        print("judgekit (RubricGrader: render, call, strict parse; cache off):")
        for transport in ("litellm", "auto"):
            box: dict = {}

            def judged(transport: str = transport, box: dict = box) -> float:
                box.update(asyncio.run(judged_run(base, items, args.concurrency, transport=transport)))
                return float(box["wall"])

            calls0 = server_calls(base)
            ratio, per_call = measure(f"judge.transport = {transport}", judged, n, ideal)
            calls = server_calls(base) - calls0
            print(
                f"    route {box['route']}, {calls} HTTP calls ({box['lean_calls']} lean), {box['verdicts']}"
            )
            if transport == "auto":
                ok = per_call <= 1.5 and ratio <= 1.3
                print(f"    target CPU <= 1.5 ms and wall / ideal <= 1.3: {'met' if ok else 'NOT met'}")
        with tempfile.TemporaryDirectory() as tmp:
            cassette = Path(tmp) / "bench.jsonl"
            box = {}

            def record() -> float:
                box.update(
                    asyncio.run(
                        judged_run(
                            base,
                            items,
                            args.concurrency,
                            transport="auto",
                            cassette_path=cassette,
                            mode="record",
                        )
                    )
                )
                return float(box["wall"])

            print("record and replay (transport auto):")
            measure("record a cassette", record, n, ideal)
            calls2 = server_calls(base)
            second = asyncio.run(
                judged_run(
                    base, items, args.concurrency, transport="auto", cassette_path=cassette, mode="replay"
                )
            )
            calls3 = server_calls(base)
            lines = sum(1 for _ in cassette.open(encoding="utf-8"))
            size = cassette.stat().st_size / 1e6
            print(
                f"  replay from the cassette ({lines} records, {size:.1f} MB): {calls3 - calls2} HTTP calls"
            )
            print(f"    wall {second['wall']:.2f} s, {second['verdicts']}")
            if calls3 != calls2:
                raise SystemExit("replay made HTTP calls")
    finally:
        proc.terminate()
        proc.wait(5)

    if not args.skip_cli:
        exe = str(Path(sys.executable).with_name("judgekit"))
        python = median_run([sys.executable, "-c", "pass"], 7)
        cli = median_run([exe, "--help"], 7)
        print(f"judgekit --help {cli:.3f} s, python -c pass {python:.3f} s (medians of 7)")
        print(f"  difference +{cli - python:.3f} s (target < 0.5 s)")
    print(f"load average {os.getloadavg()[0]:.2f} at end")


if __name__ == "__main__":
    main()
