"""Benchmark the contamination scanner on two generated export shapes with planted leaks.

Shapes (each generated at two sizes, with the same 2,000 cases and one index):

* ``project`` - the project's chat export: system, user and assistant messages, ~2.1 KB a record.
  Planted kinds: ``exact`` (a message is a case text), ``normalised`` (case, punctuation and spacing
  changed), ``embedded`` (a whole case text between two unrelated sentences) and ``edited`` (three words
  of a 60-100-token reference answer replaced).
* ``long`` - the shape of issue 17 item 5: long multi-turn chats (7-17 messages, ~13 KB a record).
  Planted kinds: ``span`` (13 to 40 consecutive tokens of a case's reference answer inside a longer
  message) and ``neardup`` (40 consecutive words of a reference answer with 3 of them replaced, inside a
  message).

What one run measures, per shape, on the same file:

1. **Recall per planted kind** and **false alarms** (findings at clean lines, or naming the wrong case).
   The clean records are hard: every system prompt is the template text all cases share (the frequency
   guard must drop it), some messages quote the template, and 5% of user messages quote 8 to 11
   consecutive tokens of a case text (fewer than the 13 in a row that make the least evidence of a leak).
2. **Throughput** in MB per CPU-second (MB/s per core) of judgekit (1 process, and 2 processes on the
   ``project`` shape), next to the ceilings measured in the same run: reading the file alone, reading +
   ``json.loads`` of every line, + ``orjson.loads``, + ``jiter``, + msgspec decoding only the scanned
   fields (what the scanner uses), + ``pyarrow.json`` when pyarrow is installed; and the hashing stage
   alone, numpy reference against the compiled kernels (:mod:`judgekit.contamination.kernels`).
3. **Peak memory** - the peak resident set (``VmHWM``) of a fresh scanning process, for both file sizes
   (flat in the file size: the file is streamed).

The machine may be shared: the load average (``os.getloadavg()``) is printed when each scan starts, and
throughput is CPU time, not wall clock. Run: ``.venv/bin/python bench/bench_contamination.py``
(``--size-mb 200``; the second size is a quarter of it).

**One process against two** (``--processes-only``, issue 38): both shapes at each of ``--sizes`` (MB),
scanned in fresh processes by :func:`~judgekit.contamination.parallel.scan_files` with 1 and with 2
processes, by this tree and, with ``--before-src``, by an older tree's ``src`` (its 2-process runs split
files into 64 MiB ranges, as its own benchmark did; this tree plans its ranges itself), the variants
interleaved, ``--repeats`` times each. It prints the median wall time of the scan (index loaded, report
built), the CPU seconds of the scanning process and its workers, the load average before each scan, the
ratio one process / two processes, what the automatic plan (``processes=0``) chooses, and the SHA-256 of
the JSON report of every scan (all of this tree's must be equal). Generated files are deleted at the end::

    .venv/bin/python bench/bench_contamination.py --processes-only --sizes 8,32,200,1000 \
        --before-src /tmp/before/src
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LOAD0 = os.getloadavg()[0]
KEY = b"bench-contamination-key-0123456789abcdef"
TEMPLATE = (
    "You are the customer service assistant for Skylark Air. Follow the refund, baggage and rebooking "
    "policies exactly, never promise what the policy does not allow, and hand over to a person when asked."
)
KINDS = ("exact", "normalised", "embedded", "edited")
LONG_KINDS = ("span", "neardup")


# ------------------------------------------------------------------------------------------ generation


def _vocabulary(rng: random.Random, size: int = 30_000) -> tuple[list[str], list[float]]:
    common = re.findall(
        r"\w+",
        "the of and to a in is you that it for on was with as be this are have at not or by from but "
        "what can your will if my all we there so when one do which out up about more please thanks flight",
    )
    letters = "etaoinshrdlcumwfgypbvkjxqz"
    weights_l = [12, 9, 8, 8, 7, 7, 6, 6, 6, 4, 4, 3, 3, 2, 2, 2, 2, 2, 1.5, 1.5, 1, 0.8, 0.3, 0.2, 0.1, 0.1]
    words = list(common)
    seen = set(words)
    while len(words) < size:
        w = "".join(rng.choices(letters, weights_l, k=rng.choice((3, 4, 5, 5, 6, 6, 7, 8, 9, 10, 12))))
        if w not in seen:
            seen.add(w)
            words.append(w)
    weights = [1.0 / (i + 1) ** 1.05 for i in range(len(words))]
    return words, weights


class Words:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.words, weights = _vocabulary(rng)
        self.cum = list(itertools.accumulate(weights))

    def sentence(self, lo: int, hi: int) -> str:
        n = self.rng.randint(lo, hi)
        toks = self.rng.choices(self.words, cum_weights=self.cum, k=n)
        toks[0] = toks[0].capitalize()
        return " ".join(toks) + self.rng.choice((".", ".", ".", "?", "!"))


def make_cases(words: Words, n: int) -> list[dict[str, Any]]:
    cases = []
    for i in range(n):
        cases.append(
            {
                "id": f"gs-{i:05d}",
                "texts": [
                    {"field": "system", "text": TEMPLATE},
                    {"field": "user.opening", "text": " ".join(words.sentence(10, 18) for _ in range(2))},
                    {"field": "user.hidden_facts.0", "text": words.sentence(6, 11)},
                    {"field": "acceptance", "text": " ".join(words.sentence(10, 16) for _ in range(3))},
                    {"field": "reference_answer", "text": " ".join(words.sentence(12, 20) for _ in range(5))},
                ],
            }
        )
    return cases


def _normalised_variant(text: str, rng: random.Random) -> str:
    out = []
    for w in text.split():
        w = w.upper() if rng.random() < 0.5 else w.lower()
        out.append(w + rng.choice(("", "", ",", ";", " -", "...")))
    return ("  ".join(out) if rng.random() < 0.5 else " ".join(out)).replace(".", "!")


def _edited_variant(text: str, rng: random.Random) -> str:
    toks = text.split()
    for p in rng.sample(range(len(toks)), 3):
        toks[p] = "REPLACED"
    return " ".join(toks)


def plant(kind: str, case: dict[str, Any], words: Words, rng: random.Random) -> dict[str, Any]:
    texts = {t["field"]: t["text"] for t in case["texts"]}
    if kind == "exact":
        field = rng.choice(("user.opening", "user.hidden_facts.0", "acceptance", "reference_answer"))
        content = texts[field]
    elif kind == "normalised":
        field = rng.choice(("user.opening", "user.hidden_facts.0", "acceptance"))
        content = _normalised_variant(texts[field], rng)
    elif kind == "embedded":
        field = rng.choice(("user.opening", "acceptance", "reference_answer"))
        content = f"{words.sentence(15, 40)} {texts[field]} {words.sentence(15, 40)}"
    else:
        content = _edited_variant(texts["reference_answer"], rng)
    return {
        "messages": [
            {"role": "system", "content": TEMPLATE},
            {"role": "user", "content": content},
            {
                "role": "assistant",
                "content": " ".join(words.sentence(8, 20) for _ in range(rng.randint(2, 8))),
            },
        ]
    }


_WORD = re.compile(r"[a-z0-9]+")
Quote = tuple[list[str], int, int]


def _near_misses(cases: list[dict[str, Any]], rng: random.Random) -> list[Quote]:
    """Near misses that must not be flagged: 8 to 11 consecutive tokens of case texts (tokens, start, k)."""
    near = []
    for case in cases[:500]:
        toks = _WORD.findall(case["texts"][4]["text"].lower())
        k = rng.randint(8, 11)
        near.append((toks, rng.randint(0, len(toks) - k), k))
    return near


def _quote(before: str, near: list[Quote], pool: list[str], rng: random.Random) -> str:
    """``before``, a near-miss quote and a sentence, with fewer than 13 case tokens in a row.

    The ground truth must be right: a quote of 11 tokens followed by a sentence whose first two words
    happen to continue the case text is 13 consecutive tokens of the case, a real overlap. So the words
    on either side of the quote are chosen not to continue it.
    """
    prev = _WORD.findall(before.lower())[-1:]
    while True:
        toks, s, k = rng.choice(near)
        if s > 0 and prev == [toks[s - 1]]:
            continue
        after = rng.choice(pool)
        if s + k < len(toks) and _WORD.findall(after.lower())[:1] == [toks[s + k]]:
            continue
        return f"{before} {' '.join(toks[s : s + k])} {after}"


def generate(path: Path, size_mb: float, n_cases: int, per_kind: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    words = Words(rng)
    cases = make_cases(words, n_cases)
    pool = [words.sentence(6, 22) for _ in range(40_000)]
    near = _near_misses(cases, rng)
    target = int(size_mb * 1e6)
    est_records = max(50, target // 1900)
    planted_at = sorted(rng.sample(range(10, est_records), per_kind * len(KINDS)))
    kinds = [KINDS[i % len(KINDS)] for i in range(len(planted_at))]
    rng.shuffle(kinds)
    plan = dict(zip(planted_at, kinds, strict=True))
    planted: list[dict[str, Any]] = []
    written = 0
    line = 0
    with open(path, "w", encoding="utf-8", buffering=1 << 22) as f:
        while written < target or len(planted) < len(plan):
            line += 1
            kind = plan.get(line - 1)
            if kind is None and line - 1 > planted_at[-1] and len(planted) < len(plan):
                kind = KINDS[len(planted) % len(KINDS)]
            if kind is not None:
                case = rng.choice(cases)
                rec = plant(kind, case, words, rng)
                planted.append({"line": line, "kind": kind, "case_id": case["id"]})
            else:
                user = " ".join(rng.choices(pool, k=rng.randint(3, 12)))
                if rng.random() < 0.05:
                    user = _quote(user, near, pool, rng)
                rec = {
                    "messages": [
                        {"role": "system", "content": TEMPLATE},
                        {"role": "user", "content": user},
                        {"role": "assistant", "content": " ".join(rng.choices(pool, k=rng.randint(6, 22)))},
                    ]
                }
            s = json.dumps(rec) + "\n"
            f.write(s)
            written += len(s)
    return {"cases": cases, "planted": planted, "lines": line, "bytes": path.stat().st_size}


def generate_long(  # noqa: PLR0917 - the same parameters as generate()
    path: Path, size_mb: float, cases: list[dict[str, Any]], words: Words, per_kind: int, seed: int
) -> dict[str, Any]:
    """The long-chat shape: 7-17 messages a record, leaks planted as spans and near-duplicates."""
    rng = random.Random(seed)
    pool = [words.sentence(6, 22) for _ in range(40_000)]
    near = _near_misses(cases, rng)
    target = int(size_mb * 1e6)
    est_records = max(50, target // 13_000)
    planted_at = sorted(rng.sample(range(10, est_records), per_kind * len(LONG_KINDS)))
    kinds = [LONG_KINDS[i % len(LONG_KINDS)] for i in range(len(planted_at))]
    rng.shuffle(kinds)
    plan = dict(zip(planted_at, kinds, strict=True))
    planted: list[dict[str, Any]] = []
    written = 0
    line = 0
    with open(path, "w", encoding="utf-8", buffering=1 << 22) as f:
        while written < target or len(planted) < len(plan):
            line += 1
            messages = [{"role": "system", "content": TEMPLATE}]
            for t in range(rng.randint(6, 16)):
                content = " ".join(rng.choices(pool, k=rng.randint(3, 25)))
                if rng.random() < 0.05:
                    content = _quote(content, near, pool, rng)
                elif rng.random() < 0.02:
                    content = f"{rng.choice(pool)} {TEMPLATE} {content}"
                messages.append({"role": "user" if t % 2 == 0 else "assistant", "content": content})
            kind = plan.get(line - 1)
            if kind is None and line - 1 > planted_at[-1] and len(planted) < len(plan):
                kind = LONG_KINDS[len(planted) % len(LONG_KINDS)]
            if kind is not None:
                case = rng.choice(cases)
                toks = case["texts"][4]["text"].split()  # the 60-100-token reference answer
                if kind == "span":
                    k = rng.randint(13, 40)
                    s = rng.randint(0, len(toks) - k)
                    piece = toks[s : s + k]
                else:
                    s = rng.randint(0, len(toks) - 40)
                    piece = toks[s : s + 40]
                    for q in rng.sample(range(40), 3):
                        piece[q] = rng.choice(words.words[:2000])
                m = messages[rng.randrange(1, len(messages))]
                m["content"] = f"{m['content']} {' '.join(piece)} {rng.choice(pool)}"
                planted.append({"line": line, "kind": kind, "case_id": case["id"]})
            text = json.dumps({"messages": messages}) + "\n"
            f.write(text)
            written += len(text)
    return {"planted": planted, "lines": line, "bytes": path.stat().st_size}


# ------------------------------------------------------------------------------------------- baselines


def _blocks(path: Path) -> Iterator[bytes]:
    """The file in 4 MB blocks of whole lines (the scanner's reading pattern)."""
    carry = b""
    with open(path, "rb") as f:
        while True:
            chunk = f.read(4 << 20)
            if not chunk:
                break
            data = carry + chunk
            cut = data.rfind(b"\n") + 1
            carry = data[cut:]
            yield data[:cut]
    if carry:
        yield carry


def _ceiling_read(path: Path) -> None:
    for _ in _blocks(path):
        pass


def _ceiling_json(path: Path) -> None:
    loads = json.loads
    for block in _blocks(path):
        for line in block.decode("utf-8").split("\n"):
            if line:
                loads(line)


def _ceiling_orjson(path: Path) -> None:
    import orjson

    loads = orjson.loads
    for block in _blocks(path):
        for line in block.split(b"\n"):
            if line:
                loads(line)


def _ceiling_jiter(path: Path) -> None:
    import jiter

    loads = jiter.from_json
    for block in _blocks(path):
        for line in block.split(b"\n"):
            if line:
                loads(line)


def _ceiling_msgspec(path: Path) -> None:
    from judgekit.contamination.scan import _DECODE_DEFAULT  # the scanner's decoder of its default fields

    for block in _blocks(path):
        for line in block.decode("utf-8").split("\n"):
            if line:
                _DECODE_DEFAULT(line)


def _ceiling_arrow(path: Path) -> None:
    import pyarrow.json as pj

    with pj.open_json(path, read_options=pj.ReadOptions(block_size=4 << 20)) as reader:
        for _ in reader:
            pass


CEILINGS: dict[str, Callable[[Path], None]] = {
    "read only (4 MB blocks)": _ceiling_read,
    "read + json.loads": _ceiling_json,
    "read + orjson.loads": _ceiling_orjson,
    "read + jiter.from_json": _ceiling_jiter,
    "read + msgspec, scanned fields only": _ceiling_msgspec,
    "pyarrow.json streaming reader": _ceiling_arrow,
}


def ceilings(path: Path) -> dict[str, float | str]:
    """MB per CPU-second of each ceiling on the file (or why it could not run)."""
    import judgekit.contamination.scan  # noqa: F401 - imported outside the timing (msgspec's decoder)

    out: dict[str, float | str] = {}
    mb = path.stat().st_size / 1e6
    for name, fn in CEILINGS.items():
        t0 = time.process_time()
        try:
            fn(path)
        except ImportError as exc:
            out[name] = f"not installed ({exc.name})"
            continue
        except Exception as exc:
            out[name] = f"failed: {type(exc).__name__}: {str(exc)[:80]}"
            continue
        out[name] = mb / (time.process_time() - t0)
    return out


def hashing_stage(path: Path, index: Any, key: Any) -> dict[str, float]:
    """MB of folded text per CPU-second of the hashing stage alone: numpy reference against the kernels.

    Both compute the same candidate windows (token spans, token values, prefix sums, window prefilters,
    bitmap probe) over the folded texts of the file's first 40 MB.
    """
    import numpy as np

    from judgekit.contamination import index as jki
    from judgekit.contamination.kernels import Workspace, spans_and_values, window_candidates
    from judgekit.contamination.normalise import fold_many
    from judgekit.contamination.scan import Matcher

    matcher = Matcher(index, key)
    bitmap, shift, n = matcher._bitmap, matcher._shift, index.shingle_size
    buffers = []
    texts: list[str] = []
    size = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            texts.extend(m["content"] for m in json.loads(line)["messages"])
            size += len(line)
            if sum(len(t) for t in texts) > 2 << 20:
                buffers.append(np.frombuffer(fold_many(texts), dtype=np.uint8))
                texts = []
            if size > 40e6:
                break
    mb = sum(len(b) for b in buffers) / 1e6

    def numpy_reference() -> None:
        for buf in buffers:
            sp = jki.token_spans(buf)
            prefix = jki.token_prefix(jki.token_values(buf, sp, key))
            pf = jki.prefilter(jki.sliding_window_values(prefix, n), key.win)
            top = pf >> shift
            np.flatnonzero((bitmap[top >> np.uint32(3)] >> (top & np.uint32(7)).astype(np.uint8)) & 1)

    work = Workspace()

    def kernels() -> None:
        for buf in buffers:
            _, values, _ = spans_and_values(buf, key, work)
            window_candidates(values, n, key, bitmap, int(shift), work=work)

    kernels()  # compile or load the cached kernels outside the timing
    out = {}
    for name, fn in (("numpy reference", numpy_reference), ("compiled kernels", kernels)):
        t0 = time.process_time()
        fn()
        out[name] = mb / (time.process_time() - t0)
    return out


_TOKEN = re.compile(r"[a-z0-9]+")


def naive(path: Path, cases: list[dict[str, Any]], limit_bytes: int, n: int = 13) -> tuple[float, int, int]:
    """The naive pure-Python scanner; returns (CPU seconds, bytes scanned, lines flagged)."""
    grams: dict[int, str] = {}
    whole: set[str] = set()
    for case in cases:
        for t in case["texts"]:
            toks = _TOKEN.findall(t["text"].lower())
            whole.add(" ".join(toks))
            for i in range(len(toks) - n + 1):
                grams[hash(tuple(toks[i : i + n]))] = case["id"]
    t0 = time.process_time()
    done = 0
    flagged = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            done += len(line)
            rec = json.loads(line)
            hit = False
            for m in rec.get("messages", ()):
                toks = _TOKEN.findall(m["content"].lower())
                if " ".join(toks) in whole:
                    hit = True
                for i in range(len(toks) - n + 1):
                    if hash(tuple(toks[i : i + n])) in grams:
                        hit = True
            flagged += hit
            if done >= limit_bytes:
                break
    return time.process_time() - t0, done, flagged


# ------------------------------------------------------------------------------------------- judgekit

_RUNNER = r"""
import json, os, resource, sys, time
from pathlib import Path
from judgekit.contamination.index import key_from_bytes, read_index
from judgekit.contamination.parallel import scan_files
from judgekit.contamination.scan import ScanOptions
export, index_path, key, processes, split = sys.argv[1:6]
load = os.getloadavg()[0]
idx = read_index(Path(index_path), key_from_bytes(key.encode()))
def cpu(who):
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime
c0 = cpu(resource.RUSAGE_SELF)
t0 = time.perf_counter()
res = scan_files([Path(export)], idx, key_from_bytes(key.encode()), ScanOptions(max_locations=10**6),
                 processes=int(processes), split_bytes=int(split))
dt = time.perf_counter() - t0
# VmHWM is this process's own peak (ru_maxrss also counts the benchmark's memory at the fork).
hwm = [int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")]
found = [{"line": loc.line, "case_id": cid, "kind": loc.kind}
         for cid, cl in res.leaks.items() for loc in cl.locations]
json.dump({"seconds": dt, "found": found, "load": load,
           "cpu_seconds": cpu(resource.RUSAGE_SELF) - c0 + cpu(resource.RUSAGE_CHILDREN),
           "self_maxrss_kb": hwm[0] if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
           "children_maxrss_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
           "problems": len(res.problems)}, sys.stdout)
"""


def run_judgekit(export: Path, index_path: Path, processes: int, split_bytes: int) -> dict[str, Any]:
    """Scan in a fresh process; its CPU time includes loading the index and the compiled kernels."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            _RUNNER,
            str(export),
            str(index_path),
            KEY.decode(),
            str(processes),
            str(split_bytes),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def score(
    planted: list[dict[str, Any]], found: list[dict[str, Any]], kinds: tuple[str, ...]
) -> tuple[dict[str, tuple[int, int]], int]:
    """Found/planted per kind, and false alarms (findings at a clean line or naming another case)."""
    expected = {(p["line"], p["case_id"]) for p in planted}
    got = {(f["line"], f["case_id"]) for f in found}
    per_kind: dict[str, tuple[int, int]] = {}
    for kind in kinds:
        mine = [(p["line"], p["case_id"]) for p in planted if p["kind"] == kind]
        per_kind[kind] = (sum(1 for m in mine if m in got), len(mine))
    return per_kind, len(got - expected)


def _fmt(v: float | str) -> str:
    return f"{v:7.1f}" if isinstance(v, float) else v


_PROCESS_RUNNER = r"""
import hashlib, json, os, resource, sys, time
from pathlib import Path
from judgekit.contamination.index import key_from_bytes, read_index
from judgekit.contamination.parallel import scan_files
from judgekit.contamination.report import build_report, render_json
from judgekit.contamination.scan import ScanOptions

def cpu(who):
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime

def main():
    export, index_path, key, processes, split = sys.argv[1:6]
    k = key_from_bytes(key.encode())
    load = os.getloadavg()[0]
    c0 = cpu(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    idx = read_index(Path(index_path), k)
    plan = {"processes": int(processes)}
    if split != "auto":
        plan["split_bytes"] = int(split)
    res = scan_files([Path(export)], idx, k, ScanOptions(), **plan)
    text = render_json(build_report(res, idx, threshold=0.5))
    dt = time.perf_counter() - t0
    leaks = json.loads(text)["leaks"]
    chosen = None
    try:
        from judgekit.contamination.parallel import plan_scan
        chosen = plan_scan([Path(export)]).processes
    except ImportError:
        pass
    json.dump({"seconds": dt, "load": load, "auto": chosen,
               "cpu_seconds": cpu(resource.RUSAGE_SELF) - c0 + cpu(resource.RUSAGE_CHILDREN),
               "children_cpu_seconds": cpu(resource.RUSAGE_CHILDREN),
               "report": hashlib.sha256(text.encode()).hexdigest()[:16],
               "findings": hashlib.sha256(json.dumps(leaks).encode()).hexdigest()[:16]}, sys.stdout)

if __name__ == "__main__":
    main()
"""


def _children(pid: int) -> list[int]:
    """The child processes of ``pid`` (Linux ``/proc``), or none once it has gone."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def _cpu_of(pid: int) -> float | None:
    """CPU seconds (user + system) ``pid`` has used so far, or ``None`` once it has gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_processes(export: Path, index_path: Path, processes: int, split: str, src: Path) -> dict[str, Any]:
    """One scan in a fresh process whose ``judgekit`` comes from ``src``; timed from reading the index.

    While it runs, the CPU time of each of its worker processes is sampled every 20 ms from ``/proc``
    (the last sample of a worker before it exits, so up to 20 ms short): the busiest worker's CPU time
    plus the scanning process's own is the scan's *critical path*, the wall time it would take with a
    free core per process. It does not depend on the machine's load the way wall time does.
    """
    runner = export.parent / "process_runner.py"  # a file, not -c: spawned workers re-import __main__
    runner.write_text(_PROCESS_RUNNER, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(src)}
    argv = [sys.executable, str(runner), str(export), str(index_path), KEY.decode(), str(processes), split]
    worker_cpu: dict[int, float] = {}
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as proc:
        while proc.poll() is None:
            for child in _children(proc.pid):
                used = _cpu_of(child)
                if used is not None:
                    worker_cpu[child] = max(used, worker_cpu.get(child, 0.0))
            time.sleep(0.02)
        out, err = proc.communicate()
    if proc.returncode:
        raise RuntimeError(f"the scan failed ({proc.returncode}): {err[-2000:]}")
    result: dict[str, Any] = json.loads(out)
    # Workers doing real work (spawn also starts a resource tracker, which idles).
    busy = sorted(worker_cpu.values(), reverse=True)[: max(1, processes)]
    own = result["cpu_seconds"] - result["children_cpu_seconds"]
    result["critical_path"] = own + (busy[0] if processes > 1 and busy else 0.0)
    return result


def processes_only(args: argparse.Namespace, tmp: Path) -> None:
    """One process against two at each size, this tree and (``--before-src``) an older one."""
    from judgekit.contamination.index import IndexOptions, build_index, key_from_bytes, write_index

    sizes = [float(x) for x in args.sizes.split(",")]
    shapes = [x.strip() for x in args.shapes.split(",") if x.strip()]
    trees = [("after", ROOT / "src")] + ([("before", args.before_src)] if args.before_src else [])
    print(
        f"CPUs: {os.cpu_count()}; load average at start: {LOAD0:.1f}; trees: "
        + ", ".join(f"{name} = {src}" for name, src in trees)
    )
    index_path = tmp / "golden.jkc"
    for size in sizes:
        files = {}
        gen = generate(tmp / f"project-{size:g}.jsonl", size, args.cases, args.leaks_per_kind, args.seed)
        if not index_path.exists():
            key = key_from_bytes(KEY)
            items = [(c["id"], [(t["field"], t["text"]) for t in c["texts"]]) for c in gen["cases"]]
            write_index(build_index(items, key, IndexOptions()), index_path, key)
        files["project"] = tmp / f"project-{size:g}.jsonl"
        if "long" in shapes:
            files["long"] = tmp / f"long-{size:g}.jsonl"
            words = Words(random.Random(args.seed + 1))
            generate_long(files["long"], size, gen["cases"], words, args.leaks_per_kind, args.seed)
        for shape in shapes:
            path = files[shape]
            mb = path.stat().st_size / 1e6
            variants = [(tree, p) for tree, _ in trees for p in (1, 2)]
            runs: dict[tuple[str, int], list[dict[str, Any]]] = {v: [] for v in variants}
            for _ in range(args.repeats):
                for tree, p in variants:
                    src = dict(trees)[tree]
                    split = str(64 << 20) if (tree == "before" and p == 2) else "auto"
                    runs[tree, p].append(run_processes(path, index_path, p, split, src))
            print(
                f"\n=== {shape}, {mb:.0f} MB: median of {args.repeats} (wall s / CPU s; load before each) ==="
            )
            for tree, _ in trees:
                one, two = runs[tree, 1], runs[tree, 2]
                w1 = statistics.median(r["seconds"] for r in one)
                w2 = statistics.median(r["seconds"] for r in two)
                c1 = statistics.median(r["cpu_seconds"] for r in one)
                c2 = statistics.median(r["cpu_seconds"] for r in two)
                k1 = statistics.median(r["critical_path"] for r in one)
                k2 = statistics.median(r["critical_path"] for r in two)
                loads = "/".join(f"{r['load']:.1f}" for r in one + two)
                print(
                    f"  {tree:6s} 1 process {w1:6.2f} s / {c1:5.2f} CPU-s   2 processes {w2:6.2f} s / "
                    f"{c2:5.2f} CPU-s   wall ratio 1p/2p {w1 / w2:4.2f}x   CPU efficiency {c1 / c2:4.0%}\n"
                    f"         critical path (CPU-s): 1 process {k1:5.2f}, 2 processes {k2:5.2f}: "
                    f"ratio {k1 / k2:4.2f}x   loads {loads}"
                )
                reports = {r["report"] for r in one + two}
                findings = {r["findings"] for r in one + two}
                print(
                    f"         reports: {len(reports)} distinct ({', '.join(sorted(reports))}); "
                    f"findings: {len(findings)} distinct; automatic plan: {one[0]['auto'] or '-'} process(es)"
                )
            if len(trees) > 1:
                same = {r["findings"] for rs in runs.values() for r in rs}
                print(
                    f"  findings equal across trees and process counts: {'yes' if len(same) == 1 else 'NO'}"
                )
        for path in files.values():  # generated per size, deleted before the next (disk is shared)
            path.unlink()
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, default=200, help="export size in MB per shape (default 200)")
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--leaks-per-kind", type=int, default=50)
    ap.add_argument(
        "--baseline-mb", type=float, default=50, help="bytes the naive baseline scans (it is slow)"
    )
    ap.add_argument("--split-mb", type=float, default=64, help="byte-range size for the 2-process run")
    ap.add_argument("--repeats", type=int, default=3, help="1-process scans of the large file per shape")
    ap.add_argument("--shapes", default="project,long", help="comma-separated: project, long")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--dir", type=Path, default=None, help="working directory (default: a temporary one)")
    ap.add_argument("--processes-only", action="store_true", help="one process against two (see above)")
    ap.add_argument("--sizes", default="8,32,200,1000", help="--processes-only: export sizes in MB")
    ap.add_argument("--before-src", type=Path, default=None, help="--processes-only: an older tree's src")
    args = ap.parse_args()

    from judgekit.contamination.index import IndexOptions, build_index, key_from_bytes, write_index

    tmp = Path(args.dir or tempfile.mkdtemp(prefix="jk-bench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    if args.processes_only:
        try:
            processes_only(args, tmp)
        finally:
            if args.dir is None:
                shutil.rmtree(tmp, ignore_errors=True)
        return
    shapes = [x.strip() for x in args.shapes.split(",") if x.strip()]
    sizes = (args.size_mb, args.size_mb / 4)
    t0 = time.perf_counter()
    files: dict[tuple[str, float], tuple[Path, dict[str, Any]]] = {}
    cases: list[dict[str, Any]] = []
    for size in sizes:
        path = tmp / f"project-{size:g}.jsonl"
        gen = generate(path, size, args.cases, args.leaks_per_kind, args.seed)
        cases = gen["cases"]
        if "project" in shapes:
            files["project", size] = (path, gen)
        else:
            path.unlink()
    for size in sizes if "long" in shapes else ():
        path = tmp / f"long-{size:g}.jsonl"
        rng_words = Words(random.Random(args.seed + 1))
        files["long", size] = (
            path,
            generate_long(path, size, cases, rng_words, args.leaks_per_kind, args.seed),
        )
    print(
        f"generated {len(files)} exports in {time.perf_counter() - t0:.0f} s; CPUs: {os.cpu_count()}; "
        f"load average at start: {LOAD0:.1f}"
    )

    key = key_from_bytes(KEY)
    items = [(c["id"], [(t["field"], t["text"]) for t in c["texts"]]) for c in cases]
    index = build_index(items, key, IndexOptions())
    index_path = tmp / "golden.jkc"
    write_index(index, index_path, key)
    st = index.stats
    from judgekit.contamination.scan import HIT_WINDOW_TOKENS, min_shingle_hits

    print(
        f"index: {index.shingle_size}-token shingles (a leak needs {min_shingle_hits(index.shingle_size)} "
        f"distinct ones of a case text within {HIT_WINDOW_TOKENS} tokens of a record), "
        f"{st['cases']} cases, {st['shingle_entries']} shingle entries "
        f"({st['shingle_entries_dropped_shared']} dropped as shared: the template), "
        f"{st['text_entries']} whole "
        f"texts, {index_path.stat().st_size / 1e6:.1f} MB"
    )
    for shape in shapes:
        kinds = KINDS if shape == "project" else LONG_KINDS
        big, gen = files[shape, sizes[0]]
        small, gen_small = files[shape, sizes[1]]
        mb, mb_small = gen["bytes"] / 1e6, gen_small["bytes"] / 1e6
        print(
            f"\n=== shape {shape}: {mb:.0f} MB ({gen['lines']} records) and {mb_small:.0f} MB "
            f"({gen_small['lines']} records), {args.leaks_per_kind} leaks per kind in each ==="
        )
        ceil = ceilings(big)
        hashing = hashing_stage(big, index, key)
        ones = [run_judgekit(big, index_path, 1, 1 << 62) for _ in range(max(1, args.repeats))]
        small_run = run_judgekit(small, index_path, 1, 1 << 62)
        two = run_judgekit(big, index_path, 2, int(args.split_mb * (1 << 20)))
        speeds = sorted(mb / r["cpu_seconds"] for r in ones)
        cpu_big = statistics.median(r["cpu_seconds"] for r in ones)
        marginal = (mb - mb_small) / max(1e-9, cpu_big - small_run["cpu_seconds"])
        loads = ", ".join(f"{r['load']:.1f}" for r in ones)
        core = statistics.median(speeds)
        per_kind, alarms = score(gen["planted"], ones[0]["found"], kinds)
        per_kind_s, alarms_s = score(gen_small["planted"], small_run["found"], kinds)
        per_kind_2, alarms_2 = score(gen["planted"], two["found"], kinds)
        j = ceil["read + json.loads"]
        o = ceil["read + orjson.loads"]
        lines = [
            f"recall, {mb:.0f} MB, 1 process: "
            + ", ".join(f"{k} {f}/{n} ({f / n:.0%})" for k, (f, n) in per_kind.items()),
            f"recall, {mb_small:.0f} MB, 1 process: "
            + ", ".join(f"{k} {f}/{n}" for k, (f, n) in per_kind_s.items()),
            f"recall, {mb:.0f} MB, 2 processes: "
            + ", ".join(f"{k} {f}/{n}" for k, (f, n) in per_kind_2.items()),
            f"false alarms: {alarms} ({mb:.0f} MB), {alarms_s} ({mb_small:.0f} MB), "
            f"{alarms_2} (2 processes); "
            f"input problems: {ones[0]['problems']}",
            "MB per CPU-second (= MB/s per core), same file, same run:",
            *(f"  {name + ':':40s}{_fmt(v)}" for name, v in ceil.items()),
            f"  {'judgekit scan, 1 process:':40s}{core:7.1f}  (median of {len(speeds)}: "
            + ", ".join(f"{x:.1f}" for x in speeds)
            + f"; load average at their starts: {loads})",
        ]
        if isinstance(j, float):
            lines.append(f"  {'':40s}         {core / j:.2f}x read + json.loads")
        if isinstance(o, float):
            lines.append(f"  {'':40s}         {core / o:.2f}x read + orjson.loads")
        lines += [
            f"  {'judgekit scan, 2 processes:':40s}{mb / two['cpu_seconds']:7.1f}  "
            "(CPU efficiency of splitting "
            f"{statistics.median(r['cpu_seconds'] for r in ones) / two['cpu_seconds']:.0%})",
            f"  {f'judgekit scan, {mb_small:.0f} MB file:':40s}{mb_small / small_run['cpu_seconds']:7.1f}",
            f"  {'judgekit, marginal (both sizes):':40s}{marginal:7.1f}  (start-up, fixed: "
            f"{small_run['cpu_seconds'] - mb_small / marginal:.2f} CPU-s: imports, index, compiled kernels)",
            "hashing stage alone (MB of folded text per CPU-second):",
            *(f"  {name + ':':40s}{v:7.1f}" for name, v in hashing.items()),
        ]
        if shape == "project":
            t_naive, naive_bytes, _ = naive(big, cases, int(args.baseline_mb * 1e6))
            lines.append(
                f"  {f'naive 13-gram set ({naive_bytes / 1e6:.0f} MB):':40s}"
                f"{naive_bytes / 1e6 / t_naive:7.1f}"
            )
        rss = max(r["self_maxrss_kb"] for r in ones) / 1024
        lines += [
            f"peak RSS, 1 process: {rss:.0f} MB ({mb:.0f} MB file), "
            f"{small_run['self_maxrss_kb'] / 1024:.0f} MB "
            f"({mb_small:.0f} MB file); 2 processes: {two['self_maxrss_kb'] / 1024:.0f} MB parent + "
            f"{two['children_maxrss_kb'] / 1024:.0f} MB largest worker (ru_maxrss: an upper bound, it "
            "counts the parent's memory at the fork)",
            f"wall clock, 1 process: {statistics.median(r['seconds'] for r in ones):.1f} s; 2 processes: "
            f"{two['seconds']:.1f} s",
        ]
        ok = {
            ">= 100 MB/CPU-s": core >= 100,
            "recall 100% on every kind": all(f == n for f, n in per_kind.values()),
            "no false alarms": alarms == alarms_s == alarms_2 == 0,
            "memory flat (within 10%)": rss <= 1.1 * small_run["self_maxrss_kb"] / 1024,
        }
        lines.append("targets: " + ", ".join(f"{k} [{'met' if v else 'MISSED'}]" for k, v in ok.items()))
        print("\n".join(lines))
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
    if args.dir is None:
        for path, _ in files.values():
            path.unlink()


if __name__ == "__main__":
    main()
