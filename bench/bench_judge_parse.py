"""Benchmark the judge-reply scanner: linear-time ``find_json_objects`` against the old quadratic one.

The baseline is the scanner judgekit used before issue 21, run in the same process on the same texts:
at every ``{`` it tried ``json.JSONDecoder.raw_decode``. Each failed try raises a ``JSONDecodeError``,
whose constructor counts the lines before the failure position, so a text of ``n`` braces costs O(n^2);
a deeply nested object makes the recursive decoder raise ``RecursionError``.

Measured (best of ``--repeat`` runs, wall seconds, ``time.perf_counter``):

1. hostile texts: ``'{' * n`` for growing ``n``, and other brace patterns at 160,000 characters;
2. ``'{"a":' * 100000`` (the baseline raises RecursionError);
3. an ordinary verdict reply with prose and a markdown fence (no regression allowed).

Run: ``.venv/bin/python bench/bench_judge_parse.py`` (``--quick`` skips the 160,000-brace baseline, about
10 s on a 2-core machine).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from typing import Any

from judgekit.judges.parse import find_json_objects, parse_verdict


def old_find_json_objects(text: str) -> list[dict[str, Any]]:
    """The scanner before issue 21 (quadratic on many braces, recursive on deep nesting)."""
    decoder = json.JSONDecoder()
    out: list[dict[str, Any]] = []
    i = text.find("{")
    while i != -1:
        try:
            value, end = decoder.raw_decode(text, i)
        except ValueError:
            i = text.find("{", i + 1)
            continue
        if isinstance(value, dict):
            out.append(value)
        i = text.find("{", end)
    return out


def best(func: Callable[[str], Any], text: str, repeat: int) -> tuple[float, str]:
    """The best wall time of ``repeat`` calls, and what the call did (``ok`` or the exception's name)."""
    times: list[float] = []
    what = "ok"
    for _ in range(repeat):
        started = time.perf_counter()
        try:
            func(text)
        except RecursionError:
            what = "RecursionError"
        times.append(time.perf_counter() - started)
    return min(times), what


def fmt(seconds: float) -> str:
    """A duration for the table: microseconds below 1 ms, milliseconds below 10 s, else seconds."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.1f} ms" if seconds < 10 else f"{seconds:.1f} s"


def row(name: str, text: str, repeat: int, *, baseline: bool = True) -> None:
    new, _ = best(find_json_objects, text, repeat)
    if not baseline:
        print(f"| {name} | {len(text):,} | {fmt(new)} | (skipped) | |")
        return
    old, what = best(old_find_json_objects, text, 1 if len(text) > 50_000 else repeat)
    note = f" ({what})" if what != "ok" else ""
    ratio = old / new
    shown = f"{ratio:,.0f}x" if ratio >= 10 else f"{ratio:.2f}x"
    print(f"| {name} | {len(text):,} | {fmt(new)} | {fmt(old)}{note} | {shown} |")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="skip the slowest baseline (160,000 braces)")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start")
    print("| text | characters | linear scan | old scan (baseline) | ratio |")
    print("|---|---|---|---|---|")
    for n in (10_000, 40_000, 160_000):
        row(f"'{{' * {n:,}", "{" * n, args.repeat, baseline=not (args.quick and n == 160_000))
    for unit in ('{"]', '{"}', '{""]', '{"\\"'):
        text = (unit * (160_000 // len(unit) + 1))[:160_000]
        row(f"{unit!r} repeated", text, args.repeat)
    row("'{\"a\":' * 100,000", '{"a":' * 100_000, args.repeat)
    reply = (
        "Here is my grade.\n```json\n"
        + json.dumps(
            {"verdict": "fail", "evidence": ["Done! Your order will arrive"], "rationale": "r" * 200}
        )
        + "\n```\nThanks."
    )
    row("ordinary verdict reply", reply, 200)
    started = time.perf_counter()
    parsed = parse_verdict("{" * 160_000, options=("pass", "fail"))
    elapsed = time.perf_counter() - started
    print(
        f"parse_verdict('{{' * 160,000): {elapsed * 1000:.2f} ms -> {parsed.verdict.value}: {parsed.detail}"
    )
    print(f"load average {os.getloadavg()[0]:.2f} at end")


if __name__ == "__main__":
    main()
