"""Benchmark ``judgekit report`` and ``compare`` on real ``judgekit grade`` lines against parse floors.

The lines are real: the bundled example's own results (``judgekit demo`` grades the recorded trials of
two agent versions, ``results/agent-v1.jsonl`` and ``results/agent-v2.jsonl``: about 12 KB a line, with
the judge's notes, quotes, fingerprints and costs), replicated to N lines with distinct case ids
(``gs-double-charge~000017``; or distinct trial numbers with ``--distinct trials``), everything else
byte for byte as graded, so the run record, the grader and the provenance stay those of the one run. Two
variants:

* ``real``: the lines as graded;
* ``judge-heavy``: each line's judged criteria (its ``rubric`` checks, with their quotes and the judge's
  notes) three times over, ids suffixed, and nothing else: lines dominated by judged criteria;
* ``synthetic`` (secondary, ``--variant synthetic``): the earlier hand-written template, 14 checks a line.

File A is agent v1's lines, file B agent v2's (``compare`` compares B with A). Before any figure, the
first 200 lines of each file are checked to be what ``judgekit grade`` writes (``dump_result_line`` of
the line read back gives the same bytes).

Each measurement is its own subprocess (a fresh interpreter, so its import cost, CPU and peak RSS are its
own: the child's ``ru_utime + ru_stime`` and ``ru_maxrss`` from ``os.wait4``), with the 1-minute load
average printed before it:

* floors: ``read`` (read the file and split it into lines), ``orjson`` (``orjson.loads`` of each line),
  ``jiter`` (``jiter.from_json(line, catch_duplicate_keys=True)``: jiter can refuse a repeated key, so
  this floor does), ``msgspec`` (the typed decode of the whole schema: the fast path's mirror,
  ``judgekit.results._FAST_DECODE``, of this checkout);
* ``report``: ``judgekit report A --format json``; ``report md``: the default format, ``judgekit report A``
  (Markdown); ``compare``: ``judgekit compare A B --format json``;
  each as ``after`` (this checkout) and, with ``--before-src``, ``before`` (that ``src`` directory first
  on ``PYTHONPATH``, e.g. ``git worktree add /tmp/old f8a1885`` then ``--before-src /tmp/old/src``), on
  files of at most ``--before-max-lines`` lines (40,000: the old code takes minutes a file).

After the ``after`` reports, two more rows: ``json writing alone`` (a child that reads the JSON report just
written, then redacts its text in the report's own 1 MiB pieces and encodes its trial entries 64 at a
time with msgspec, indented; only those CPU seconds are counted), and ``floor of report (json)``: the
Markdown report's CPU plus that. The JSON report reads and counts what the Markdown one does and then
encodes and redacts every entry, so no JSON report of this format can cost less, but for the rendering
of the Markdown itself, which the sum includes (about 1 % of the Markdown report: 0.04 of 4.6 s at 1 GiB).
Its wall and peak memory are not measured (``nan``).

``before`` and ``after`` must write the same report and comparison bytes (SHA-256 compared; the run
stops otherwise). The ratio printed is the command's CPU over the orjson floor of the same file(s)
(``compare``: over the sum of both files' orjson floors).

Run: ``.venv/bin/python bench/bench_report.py --lines 40000 --before-src /tmp/old/src`` (400,000 real
lines are about 4.8 GB a file; the files go under ``--tmp`` and are deleted after each size).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compiled import compiled_env

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

FLOORS = {
    "read": "for raw in handle:\n    n += 1",
    "orjson": "import orjson\nloads = orjson.loads\nfor raw in handle:\n    loads(raw); n += 1",
    "jiter": "import jiter\nload = jiter.from_json\nfor raw in handle:\n"
    "    load(raw, catch_duplicate_keys=True); n += 1",
    "msgspec": "from judgekit.results import _FAST_DECODE as decode\nfor raw in handle:\n"
    "    decode(raw); n += 1",
}
"""Each floor's loop over the lines of ``handle`` (a file opened in binary mode), counting them in ``n``."""

CASE_ID = "@@bench-case-id@@"
TRIAL = 987_654_321


# --------------------------------------------------------------------------- the real lines


def demo_results(folder: Path | None, tmp: Path) -> tuple[Path, Path]:
    """The demo's two results files: from ``folder`` (an earlier ``judgekit demo --out``) or a fresh demo."""
    if folder is None:
        folder = tmp / "demo"
        subprocess.run(
            [sys.executable, "-c", "from judgekit.cli import main; main()", "demo", "--out", str(folder)],
            check=True,
            stdout=subprocess.DEVNULL,
            env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        )
    return folder / "results" / "agent-v1.jsonl", folder / "results" / "agent-v2.jsonl"


def _judge_heavy(line: Any) -> Any:
    """The line with only its judged criteria, each three times (ids suffixed), or ``None`` without any."""
    from judgekit.results import failure_categories

    judged = [c for c in line.checks if c.layer == "rubric"]
    if not judged:
        return None
    checks = tuple(
        c.model_copy(update={"check_id": c.check_id if n == 0 else f"{c.check_id}/{n + 1}"})
        for n in range(3)
        for c in judged
    )
    return line.model_copy(update={"checks": checks, "failure_categories": failure_categories(checks)})


def templates(path: Path, variant: str) -> list[tuple[str, str, int]]:
    """The lines of a demo results file as ``(template text, case id, trial)``.

    The template is the line exactly as ``judgekit grade`` writes it (``dump_result_line``), with the case
    id and the trial replaced by placeholders that :func:`replicate` fills in.
    """
    from judgekit.results import ResultLine, dump_result_line

    out = []
    for raw in path.read_bytes().splitlines():
        line = ResultLine.model_validate_json(raw)
        if variant == "judge-heavy":
            line = _judge_heavy(line)
            if line is None:
                continue
        marked = line.model_copy(
            update={"case": line.case.model_copy(update={"id": CASE_ID}), "trial": TRIAL}
        )
        text = dump_result_line(marked)
        if text.count(CASE_ID) != 1 or text.count(f'"trial":{TRIAL},') != 1:
            raise SystemExit(f"cannot place the case id and trial in a line of {path}")
        out.append((text, line.case.id, line.trial))
    return out


def replicate(rows: list[tuple[str, str, int]], target: Path, lines: int, distinct: str) -> None:
    """Write ``lines`` lines: copy ``j`` of the demo's lines has case ids ``id~j`` (or trials ``t + j*T``)."""
    max_trial = max(t for _, _, t in rows)
    parts = [
        (text.replace(f'"trial":{TRIAL},', '"trial":{trial},').replace(CASE_ID, "{case}"), case, trial)
        for text, case, trial in rows
    ]
    # escape the template's own braces, then restore the two fields
    parts = [
        (
            t.replace("{", "{{")
            .replace("}", "}}")
            .replace("{{trial}}", "{trial}")
            .replace("{{case}}", "{case}"),
            c,
            n,
        )
        for t, c, n in parts
    ]
    written = 0
    copy = 0
    with target.open("w", encoding="utf-8") as handle:
        while written < lines:
            for template, case, trial in parts:
                if written == lines:
                    break
                if distinct == "cases":
                    case_id = json.dumps(f"{case}~{copy:06d}", ensure_ascii=False)[1:-1]
                    handle.write(template.format(case=case_id, trial=trial) + "\n")
                else:
                    handle.write(template.format(case=case, trial=trial + copy * max_trial) + "\n")
                written += 1
            copy += 1


def synthetic(target: Path, lines: int) -> None:
    """The earlier hand-written template (``bench_report_synthetic``), kept as a secondary variant."""
    from bench_report_synthetic import generate

    generate(target, lines)


def check_grade_shaped(path: Path, lines: int = 200) -> None:
    """Refuse to measure unless the first lines are byte for byte what ``judgekit grade`` writes."""
    from judgekit.results import ResultLine, dump_result_line

    with path.open("rb") as handle:
        for _, raw in zip(range(lines), handle, strict=False):
            if dump_result_line(ResultLine.model_validate_json(raw)) + "\n" != raw.decode():
                raise SystemExit(f"the lines of {path} are not what judgekit grade writes")


# --------------------------------------------------------------------------- measuring


def measure(argv: list[str], env: dict[str, str], stdout: Path | None = None) -> dict[str, Any]:
    """Run ``argv`` in a child; its CPU seconds, wall seconds, peak RSS (MB) and the load before it."""
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    # standard error to a file, not a pipe: compare writes a line per lost task, more than a pipe holds
    with open(stdout or os.devnull, "wb") as out, tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=errors)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        errors.seek(0)
        err = errors.read().decode(errors="replace")
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):  # compare exits 1 on a regression
        raise SystemExit(f"{' '.join(argv[:6])} ... exited {code}: {err[-2000:]}")
    return {
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "wall_s": wall,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "load": load,
        "stderr_tail": err[-2000:],
    }


def floor(name: str, path: Path, env: dict[str, str]) -> dict[str, Any]:
    """One floor over one file in a fresh interpreter."""
    code = f"n = 0\nwith open({str(path)!r}, 'rb') as handle:\n" + "".join(
        f"    {row}\n" for row in FLOORS[name].splitlines()
    )
    return measure([sys.executable, "-c", code], env)


def command(args: list[str], env: dict[str, str], out: Path) -> dict[str, Any]:
    """One ``judgekit`` command in a fresh interpreter; its figures and the SHA-256 of what it wrote."""
    result = measure(
        [sys.executable, "-c", "from judgekit.cli import main; main()", *args, "-o", str(out)], env
    )
    if not out.exists():
        raise SystemExit(f"judgekit {' '.join(args[:4])} ... wrote nothing: {result['stderr_tail']}")
    result["sha256"] = hashlib.sha256(out.read_bytes()).hexdigest()
    return result


_JSON_WRITING = """
import json, sys, time
import msgspec
from judgekit.secrets import output_redactor
text = open(sys.argv[1], encoding="utf-8").read()
pieces, at = [], 0
while at < len(text):  # cut after the line at each 1 MiB, as the report's own pieces are cut
    end = text.find("\\n", at + (1 << 20))
    end = len(text) if end < 0 else end + 1
    pieces.append(text[at:end])
    at = end
entries = json.loads(text)["trial_reasons"]
del text
redactor, encode = output_redactor(), msgspec.json.Encoder(order="sorted").encode
start = time.process_time()
for piece in pieces:
    redactor.payload(piece)
for i in range(0, len(entries), 64):
    msgspec.json.format(encode(entries[i : i + 64]), indent=2)
print(time.process_time() - start)
"""
"""A child's timed work: redact the JSON report's text in the report's 1 MiB pieces and encode its trial
entries 64 at a time (msgspec, indented): what writing the JSON costs beyond what the Markdown report
does, with the entries already made. Printed: those CPU seconds only (reading the file is not counted)."""


def json_writing(report_json: Path, env: dict[str, str], tmp: Path) -> dict[str, Any]:
    """The CPU of redacting and encoding a JSON report's text alone (:data:`_JSON_WRITING`), in a child."""
    out = tmp / "json-writing.txt"
    result = measure([sys.executable, "-c", _JSON_WRITING, str(report_json)], env, stdout=out)
    result["cpu_s"] = float(out.read_text())
    return result


def bench(
    a: Path, b: Path, lines: int, args: argparse.Namespace, tmp: Path
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every floor and command on one pair of files, one row at a time; stops if before and after differ."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("PYTHONPATH", None)
    trees = [ROOT / "src", *([Path(args.before_src)] if args.before_src else [])]
    env = compiled_env(env, tmp / "pycache", *trees)  # judgekit read byte-compiled, as installed
    codes = [("after", env)]
    if args.before_src and lines <= args.before_max_lines:
        codes.insert(0, ("before", {**env, "PYTHONPATH": args.before_src}))
    orjson = {}
    for name in FLOORS:
        row = floor(name, a, env)
        orjson["a"] = row["cpu_s"] if name == "orjson" else orjson.get("a", 0.0)
        yield f"floor {name} (A)", row
    row = floor("orjson", b, env)
    orjson["b"] = row["cpu_s"]
    yield "floor orjson (B)", row
    hashes: dict[str, set[str]] = {"report": set(), "report md": set(), "compare": set()}
    for code, code_env in codes:
        # a before without run_parts (f8a1885, 1a4d11f) reads in one process and has no --processes
        source = Path(args.before_src) if code == "before" else ROOT / "src"
        has_option = (source / "judgekit" / "reports" / "run_parts.py").is_file()
        one = ["--processes", str(args.processes)] if has_option and args.processes else []
        for fmt, what in (("json", "report"), ("md", "report md")):
            report = command(
                ["report", str(a), "--format", fmt, *one], code_env, tmp / f"report-{code}.{fmt}"
            )
            report["ratio"] = report["cpu_s"] / orjson["a"]
            hashes[what].add(report["sha256"])
            yield f"{what} ({code})", report
        if code == "after":
            # the JSON report does what the Markdown one does, then makes, encodes and redacts every entry:
            # the Markdown's CPU plus the encoding and redaction alone is a floor for the JSON's
            writing = json_writing(tmp / "report-after.json", code_env, tmp)
            writing["ratio"] = writing["cpu_s"] / orjson["a"]
            yield "json writing alone: encode + redact (after)", writing
            yield (
                "floor of report (json): report md + json writing (after)",
                {
                    **writing,
                    "cpu_s": report["cpu_s"] + writing["cpu_s"],
                    "wall_s": math.nan,  # a sum of CPU, not a run
                    "peak_rss_mb": math.nan,
                    "ratio": report["ratio"] + writing["ratio"],
                },
            )
        comparison = command(
            ["compare", str(a), str(b), "--format", "json", *one], code_env, tmp / f"compare-{code}.json"
        )
        comparison["ratio"] = comparison["cpu_s"] / (orjson["a"] + orjson["b"])
        hashes["compare"].add(comparison["sha256"])
        yield f"compare ({code})", comparison
    for what, seen in hashes.items():
        if len(seen) != 1:
            raise SystemExit(f"{what}: before and after wrote different bytes on {lines:,} lines")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[40_000, 400_000], help="Lines a file.")
    parser.add_argument(
        "--variant", nargs="+", choices=("real", "judge-heavy", "synthetic"), default=["real", "judge-heavy"]
    )
    parser.add_argument(
        "--distinct", choices=("cases", "trials"), default="cases", help="What replicas vary."
    )
    parser.add_argument("--before-src", help="A src directory to measure as 'before' (e.g. of f8a1885).")
    parser.add_argument(
        "--before-max-lines", type=int, default=40_000, help="Measure 'before' only on files this small."
    )
    parser.add_argument(
        "--processes",
        type=int,
        help="Pass --processes N to the commands that have it (1: one process; default: theirs).",
    )
    parser.add_argument(
        "--demo", type=Path, help="An earlier `judgekit demo --out` folder (default: run it)."
    )
    parser.add_argument("--tmp", type=Path, help="Where the generated files go (default: a new /tmp folder).")
    args = parser.parse_args(argv)
    if args.tmp is not None:
        args.tmp.mkdir(parents=True, exist_ok=True)  # a folder of its own is made inside it, and removed
    tmp = Path(tempfile.mkdtemp(prefix="bench-report-", dir=args.tmp))
    try:
        v1, v2 = demo_results(args.demo, tmp)
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        print(f"{os.cpu_count()} CPUs; {when}; lines from {v1.parent}")
        print("| variant | lines | MB a file | what | CPU s | wall s | peak RSS MB | x orjson | load |")
        print("|---|---|---|---|---|---|---|---|---|")
        for variant in args.variant:
            rows_a = rows_b = None
            if variant != "synthetic":
                rows_a, rows_b = templates(v1, variant), templates(v2, variant)
            for lines in args.lines:
                a, b = tmp / "a.jsonl", tmp / "b.jsonl"
                if rows_a is None or rows_b is None:
                    synthetic(a, lines)
                    shutil.copyfile(a, b)
                else:
                    replicate(rows_a, a, lines, args.distinct)
                    replicate(rows_b, b, lines, args.distinct)
                check_grade_shaped(a)
                check_grade_shaped(b)
                size = a.stat().st_size / 1e6
                for what, r in bench(a, b, lines, args, tmp):
                    ratio = f"{r['ratio']:.2f}" if "ratio" in r else ""
                    figures = f"{r['cpu_s']:.1f} | {r['wall_s']:.1f} | {r['peak_rss_mb']:,.0f} | {ratio}"
                    print(
                        f"| {variant} | {lines:,} | {size:,.0f} | {what} | {figures} | {r['load']:.2f} |",
                        flush=True,
                    )
                a.unlink()
                b.unlink()
        if args.before_src:
            print("before and after wrote the same report and comparison bytes (SHA-256) on every file")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
