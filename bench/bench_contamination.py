"""Benchmark the contamination scanner on a generated chat export with planted leaks.

What one run measures (each against its baseline, on the same file):

1. **Recall per planted kind** - leaks planted at known lines: ``exact`` (a message is a case text),
   ``normalised`` (case, punctuation and spacing changed), ``embedded`` (a case text inside a longer
   message) and ``edited`` (a long case text with a few words replaced). Targets: 100% for exact,
   normalised and embedded.
2. **False alarms** - findings at lines where nothing was planted, or naming the wrong case. The clean
   records are built to be hard: every system prompt carries the template text all cases share (which
   the frequency guard must drop), and many messages quote 8 to 11 consecutive tokens of a case text
   (below the 13-token shingle). Target: none.
3. **Throughput** - MB/s of judgekit with 1 process (per core) and with 2 processes, against the practical
   ceiling (reading the file and ``json.loads`` of every line, nothing else) and a naive pure-Python
   baseline (per line: ``json.loads``, lower-case, regex tokenise, every 13-gram looked up in a Python
   set of case 13-grams, whole messages in a set of case texts). Targets: >= 60 MB/s per core and >= 3x
   the naive baseline.
4. **Peak memory** - maximum resident set of the scanning process and of its largest worker (each scan
   runs in a fresh subprocess). Target: < 1 GB whatever the file size.

Run: ``.venv/bin/python bench/bench_contamination.py`` (1 GB; ``--size-mb 200`` for a quick run).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
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


def generate(path: Path, size_mb: float, n_cases: int, per_kind: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    words = Words(rng)
    cases = make_cases(words, n_cases)
    pool = [words.sentence(6, 22) for _ in range(40_000)]
    near = []  # 8 to 11 consecutive tokens of case texts: near misses that must not be flagged
    for case in cases[:500]:
        toks = case["texts"][4]["text"].split()
        k = rng.randint(8, 11)
        s = rng.randint(0, len(toks) - k)
        near.append(" ".join(toks[s : s + k]))
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
                    user = f"{user} {rng.choice(near)} {rng.choice(pool)}"
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


# ------------------------------------------------------------------------------------------- baselines


def ceiling(path: Path) -> float:
    """CPU seconds to read the file in 4 MB blocks and json.loads every line (nothing else)."""
    t0 = time.process_time()
    loads = json.loads
    carry = b""
    with open(path, "rb") as f:
        while True:
            chunk = f.read(4 << 20)
            if not chunk:
                break
            data = carry + chunk
            cut = data.rfind(b"\n") + 1
            carry = data[cut:]
            for line in data[:cut].decode("utf-8").split("\n"):
                if line:
                    loads(line)
    return time.process_time() - t0


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
import json, resource, sys, time
from pathlib import Path
from judgekit.contamination.index import key_from_bytes, read_index
from judgekit.contamination.parallel import scan_files
from judgekit.contamination.scan import ScanOptions
export, index_path, key, processes, split = sys.argv[1:6]
idx = read_index(Path(index_path), key_from_bytes(key.encode()))
def cpu(who):
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime
c0 = cpu(resource.RUSAGE_SELF)
t0 = time.perf_counter()
res = scan_files([Path(export)], idx, key_from_bytes(key.encode()), ScanOptions(max_locations=10**6),
                 processes=int(processes), split_bytes=int(split))
dt = time.perf_counter() - t0
found = [{"line": loc.line, "case_id": cid, "kind": loc.kind}
         for cid, cl in res.leaks.items() for loc in cl.locations]
json.dump({"seconds": dt, "found": found,
           "cpu_seconds": cpu(resource.RUSAGE_SELF) - c0 + cpu(resource.RUSAGE_CHILDREN),
           "self_maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
           "children_maxrss_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
           "problems": len(res.problems)}, sys.stdout)
"""


def run_judgekit(export: Path, index_path: Path, processes: int, split_bytes: int) -> dict[str, Any]:
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
    planted: list[dict[str, Any]], found: list[dict[str, Any]]
) -> tuple[dict[str, tuple[int, int]], int]:
    expected = {(p["line"], p["case_id"]) for p in planted}
    got = {(f["line"], f["case_id"]) for f in found}
    per_kind: dict[str, tuple[int, int]] = {}
    for kind in KINDS:
        mine = [(p["line"], p["case_id"]) for p in planted if p["kind"] == kind]
        per_kind[kind] = (sum(1 for m in mine if m in got), len(mine))
    return per_kind, len(got - expected)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, default=1024, help="export size in MB (default 1024)")
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--leaks-per-kind", type=int, default=100)
    ap.add_argument(
        "--baseline-mb", type=float, default=200, help="bytes the naive baseline scans (it is slow)"
    )
    ap.add_argument("--split-mb", type=float, default=64, help="byte-range size for the 2-process run")
    ap.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="alternate the 1- and 2-process scans this many times (wall-clock medians)",
    )
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--dir", type=Path, default=None, help="working directory (default: a temporary one)")
    args = ap.parse_args()

    from judgekit.contamination.index import IndexOptions, build_index, key_from_bytes, write_index

    tmp = Path(args.dir or tempfile.mkdtemp(prefix="jk-bench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    export = tmp / "export.jsonl"
    meta = tmp / "meta.json"
    params = [args.size_mb, args.cases, args.leaks_per_kind, args.seed]
    t0 = time.perf_counter()
    if (
        args.dir is not None
        and export.exists()
        and meta.exists()
        and json.loads(meta.read_text())["params"] == params
    ):
        gen = json.loads(meta.read_text())["gen"]
        print("reusing the export in", tmp)
    else:
        gen = generate(export, args.size_mb, args.cases, args.leaks_per_kind, args.seed)
        if args.dir is not None:
            meta.write_text(json.dumps({"params": params, "gen": gen}))
    size = gen["bytes"]
    mb = size / 1e6
    print(
        f"generated {mb:.0f} MB, {gen['lines']} records, {len(gen['planted'])} planted leaks in "
        f"{time.perf_counter() - t0:.0f} s"
    )

    key = key_from_bytes(KEY)
    t0 = time.perf_counter()
    items = [(c["id"], [(t["field"], t["text"]) for t in c["texts"]]) for c in gen["cases"]]
    index = build_index(items, key, IndexOptions())
    index_path = tmp / "golden.jkc"
    write_index(index, index_path, key)
    st = index.stats
    print(
        f"index: {st['cases']} cases, {st['shingle_entries']} shingle entries "
        f"({st['shingle_entries_dropped_shared']} dropped as shared), {st['text_entries']} whole texts, "
        f"{index_path.stat().st_size / 1e6:.1f} MB, built in {time.perf_counter() - t0:.1f} s"
    )

    t_ceiling = ceiling(export)
    t_naive, naive_bytes, _ = naive(export, gen["cases"], int(args.baseline_mb * 1e6))
    ones, twos = [], []
    for _ in range(max(1, args.repeats)):
        ones.append(run_judgekit(export, index_path, 1, 1 << 62))
        twos.append(run_judgekit(export, index_path, 2, int(args.split_mb * (1 << 20))))
    one, two = ones[0], twos[0]

    per_kind, false_alarms = score(gen["planted"], one["found"])
    per_kind2, false_alarms2 = score(gen["planted"], two["found"])
    core_one = mb / one["cpu_seconds"]
    core_two = mb / two["cpu_seconds"]
    core_naive = naive_bytes / 1e6 / t_naive
    core_ceiling = mb / t_ceiling
    worst_rss = max(one["self_maxrss_kb"], two["self_maxrss_kb"], two["children_maxrss_kb"]) / 1024
    g = {
        k: "met" if ok else "MISSED"
        for k, ok in {
            "core": core_one >= 60,
            "naive": core_one >= 3 * core_naive,
            "recall": all(per_kind[k][0] == per_kind[k][1] for k in KINDS[:3]),
            "alarms": false_alarms == false_alarms2 == 0,
            "memory": worst_rss < 1024,
        }.items()
    }
    rss1, rss2, rssw = (
        x / 1024 for x in (one["self_maxrss_kb"], two["self_maxrss_kb"], two["children_maxrss_kb"])
    )
    wall1 = statistics.median(r["seconds"] for r in ones)
    wall2 = statistics.median(r["seconds"] for r in twos)
    pairs = ", ".join(f"{a['seconds']:.1f}/{b['seconds']:.1f}" for a, b in zip(ones, twos, strict=True))
    lines = [
        f"export: {mb:.0f} MB, {gen['lines']} records, {len(gen['planted'])} planted leaks; "
        f"cases: {args.cases}; CPUs: {os.cpu_count()}; load average at start: {LOAD0:.1f}",
        "recall, 1 process: " + ", ".join(f"{k} {f}/{n} ({f / n:.0%})" for k, (f, n) in per_kind.items()),
        "recall, 2 processes: " + ", ".join(f"{k} {f}/{n}" for k, (f, n) in per_kind2.items()),
        f"false alarms: {false_alarms} (1 process), {false_alarms2} (2 processes); "
        f"input problems: {one['problems']}",
        "MB per CPU-second (= MB/s per core; wall clock is shared with other work on this machine):",
        f"  ceiling, read + json.loads:        {core_ceiling:7.1f}",
        f"  naive 13-gram set ({naive_bytes / 1e6:.0f} MB):       {core_naive:7.1f}",
        f"  judgekit, 1 process:               {core_one:7.1f}  ({core_one / core_naive:.1f}x naive, "
        f"{core_one / core_ceiling:.0%} of the ceiling)",
        f"  judgekit, 2 processes:             {core_two:7.1f}  (CPU efficiency of splitting: "
        f"{one['cpu_seconds'] / two['cpu_seconds']:.0%})",
        f"wall clock: 1 process {wall1:.1f} s ({mb / wall1:.1f} MB/s), 2 processes {wall2:.1f} s "
        f"({mb / wall2:.1f} MB/s), speed-up {wall1 / wall2:.2f}x (medians of {len(ones)}; "
        f"1/2-process pairs in s: {pairs})",
        f"peak RSS: 1 process {rss1:.0f} MB; 2 processes {rss2:.0f} MB parent + {rssw:.0f} MB largest worker",
        f"targets: >= 60 MB/s per core [{g['core']}], >= 3x naive [{g['naive']}], "
        "100% exact/normalised/embedded "
        f"[{g['recall']}], no false alarms [{g['alarms']}], peak memory < 1 GB [{g['memory']}]",
    ]
    print()
    print("\n".join(lines))
    if args.dir is None:
        export.unlink()


if __name__ == "__main__":
    main()
