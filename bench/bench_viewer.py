"""Benchmark ``judgekit view`` on 50,000 trials: build time, output size, and the run page in a browser.

What one run measures, on the same generated results file and transcripts (like ``judgekit grade``
writes: a state check, a forbidden-call rule with its call evidence, a text check and a judged criterion
with a quote and its judge note, per trial; six messages with two tool calls per transcript):

1. **build**: ``read_results`` + :func:`judgekit.api.viewer.write_viewer` (every transcript read,
   every chunk written), wall seconds, and the folder's size (index and chunks).
2. **the viewer's run page** in headless Chromium (Debian's ``chromium``, through Playwright) from
   ``file://``: time to first render (navigation start to the table's first rows in the page, read as
   ``performance.now()`` once they are), then the time to apply a verdict filter and a search (from the
   event to the count updated and the next frame painted, measured inside the page).
3. **the baseline, same run, same browser**: a plain page reading the same ``data/index.js`` and rendering
   all 50,000 rows into one ``<table>`` (not virtualised), then filtering by rebuilding its body; the
   same three figures. The ratio baseline / viewer is printed for each.

Each browser figure is the median of ``--repeat`` fresh page loads. The pages run under their own
Content-Security-Policy; the bench context bypasses it only so that Playwright can read the timings.

``--memory`` measures instead the peak memory of ``judgekit view`` (issue 33, F12) on grade-shaped lines:
``judgekit demo`` is run once and its 104 result lines of ``agent-v1.jsonl`` (about 11 KB each, as
``judgekit grade`` writes them) are replicated to ``--trials`` lines (each copy a new case id, pointing at
its own copy of the transcript line, same sha256). The same command runs from this tree (after) and from a
``git worktree`` of ``--baseline`` (before, default ``c1b4447``, the viewer that held every line and
transcript) in child processes, in the same run; each figure is the child's peak RSS
(``ru_maxrss`` from ``wait4``) and wall time, and the ratio before / after is printed.

Run: ``.venv/bin/python bench/bench_viewer.py`` (``--trials 5000`` for a quick run);
``.venv/bin/python bench/bench_viewer.py --memory --trials 20000,200000``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from judgekit.api.viewer import write_viewer  # noqa: E402
from judgekit.results import (  # noqa: E402
    CaseRef,
    TrialSource,
    dump_result_line,
    make_result_line,
    read_results,
)
from judgekit.verdict import CheckResult, Evidence, FailureCategory, Grade, Trust, Verdict  # noqa: E402

CHROMIUM = os.environ.get("JUDGEKIT_CHROMIUM", "/usr/bin/chromium")
SLICES = ("real_failures", "high_volume", "policy_edge", "must_refuse", "regression")
SEVERITIES = ("critical", "high", "medium", "low")


def _transcript(case: str, trial: int, refund_twice: bool) -> dict[str, Any]:
    calls = [
        {
            "id": "c0",
            "type": "function",
            "function": {"name": "list_payments", "arguments": '{"booking": "QX7"}'},
        },
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "issue_refund", "arguments": '{"amount": 412.18}'},
        },
    ]
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": f"I was charged twice for booking QX7 ({case})."},
        {"role": "assistant", "content": None, "tool_calls": [calls[0]]},
        {"role": "tool", "tool_call_id": "c0", "content": '{"payments": [{"id": "P1"}, {"id": "P2"}]}'},
        {"role": "assistant", "content": None, "tool_calls": [calls[1]]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"refund_id": "RF-1", "status": "issued"}'},
        {
            "role": "assistant",
            "content": "I've refunded both charges of 412.18 to your card."
            if refund_twice
            else "I've refunded the duplicate charge of 412.18.",
        },
    ]
    return {"case_id": case, "trial": trial, "messages": messages}


def generate(folder: Path, trials: int, seed: int = 7) -> Path:
    """Write ``transcripts.jsonl`` and ``results.jsonl``: 8 trials per case, about a third failing."""
    import random

    rng = random.Random(seed)
    transcripts = folder / "transcripts.jsonl"
    results = folder / "results.jsonl"
    with transcripts.open("w", encoding="utf-8") as t_out, results.open("w", encoding="utf-8") as r_out:
        for n in range(trials):
            case, trial = f"case-{n // 8:05d}", n % 8 + 1
            fail = rng.random() < 0.33
            raw = json.dumps(_transcript(case, trial, fail))
            t_out.write(raw + "\n")
            rule = CheckResult(
                check_id="rule:1",
                layer="rules",
                verdict=Verdict.FAIL if fail else Verdict.PASS,
                reason="forbidden: issue_refund when calls > 1: broken 1 time(s)" if fail else "not broken",
                category=FailureCategory.POLICY_VIOLATION if fail else None,
                evidence=(
                    Evidence(
                        kind="call",
                        summary="call 1: issue_refund(calls=2) breaks 'calls > 1'",
                        call_index=1,
                        tool="issue_refund",
                        arguments={"amount": 412.18},
                        message_index=3,
                    ),
                )
                if fail
                else (),
            )
            judged = CheckResult(
                check_id="criterion:no_false_success",
                layer="rubric",
                verdict=Verdict.FAIL if fail else Verdict.PASS,
                reason="claims two refunds; one was made" if fail else "",
                category=FailureCategory.INCORRECT_REPORTING if fail else None,
                trust=Trust.TRUSTED,
                trust_reason="calibration record r.json passed its policy",
                evidence=(
                    Evidence(
                        kind="judge",
                        summary="claims two refunds",
                        quote="refunded both charges",
                        message_index=5,
                    ),
                    Evidence(
                        kind="note",
                        summary="judge rubric:x: 1/1 usable samples",
                        data={"fingerprint": "ab" * 32, "criterion": "no_false_success", "samples": ["fail"]},
                    ),
                )
                if fail
                else (),
            )
            checks = (
                CheckResult(check_id="state", layer="state", verdict=Verdict.PASS),
                rule,
                CheckResult(check_id="text", layer="text", verdict=Verdict.PASS),
                judged,
            )
            grade = Grade(
                case_id=case, trial=trial, verdict=Verdict.FAIL if fail else Verdict.PASS, checks=checks
            )
            line = make_result_line(
                run_id="bench",
                case=CaseRef(
                    id=case,
                    version=1,
                    slice=SLICES[(n // 8) % len(SLICES)],
                    severity=SEVERITIES[(n // 8) % len(SEVERITIES)],
                ),
                grade=grade,
                source=TrialSource(
                    file=str(transcripts), line=n + 1, sha256=hashlib.sha256(raw.encode()).hexdigest()
                ),
                cost_usd=0.0004 if n % 10 else None,
                cost_unknown_reason=None if n % 10 else "model openai/x has no price in the cost map",
            )
            r_out.write(dump_result_line(line) + "\n")
    return results


BASELINE_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'self'; style-src 'self'">
<title>baseline</title><link rel="stylesheet" href="viewer.css">
<script src="data/index.js"></script>
{rows}</head>
<body><p id="count"></p><table id="plain"><tbody></tbody></table>
<script src="baseline.js"></script></body></html>
"""

BASELINE_JS = """(function () {
  var D = window.JK_DATA, run = D.runs[0];
  if (!run.rows) { run.rows = [].concat.apply([], run.rows_parts); }
  function render(rows) {
    var body = document.createElement("tbody");
    for (var i = 0; i < rows.length; i++) {
      var row = rows[i], tr = document.createElement("tr");
      var cells = [D.cases[row[0]].id, row[1], row[2], row[3], row[4], row[5],
                   row[6] === null ? "unknown" : "$" + row[6].toFixed(4), row[8]];
      for (var c = 0; c < cells.length; c++) {
        var td = document.createElement("td"); td.textContent = String(cells[c]); tr.appendChild(td);
      }
      body.appendChild(tr);
    }
    var table = document.getElementById("plain");
    table.replaceChild(body, table.tBodies[0]);
    document.getElementById("count").textContent =
      "showing " + rows.length + " of " + run.rows.length + " trials";
  }
  window.BASELINE_FILTER = function (verdict, q) {
    render(run.rows.filter(function (row) {
      var text = (D.cases[row[0]].id + " " + row[8]).toLowerCase();
      return (!verdict || row[2] === verdict) && (!q || text.indexOf(q) >= 0);
    }));
  };
  render(run.rows);
})();
"""

MEASURE_VIEWER = """async ([kind, value]) => {
  const t0 = performance.now();
  if (kind === 'filter') {
    const s = document.getElementById('filter-verdict');
    s.value = value;
    s.dispatchEvent(new Event('change'));
  } else {
    const s = document.getElementById('search'); s.value = value; s.dispatchEvent(new Event('input'));
    await new Promise(resolve => {
      const o = new MutationObserver(() => { o.disconnect(); resolve(); });
      o.observe(document.getElementById('count'), {childList: true, characterData: true, subtree: true});
    });
  }
  const work = performance.now() - t0;
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return [work, performance.now() - t0, document.getElementById('count').textContent];
}"""

MEASURE_BASELINE = """async ([kind, value]) => {
  const t0 = performance.now();
  if (kind === 'filter') window.BASELINE_FILTER(value, ''); else window.BASELINE_FILTER('', value);
  const work = performance.now() - t0;
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return [work, performance.now() - t0, document.getElementById('count').textContent];
}"""


def run_row_files(out: Path) -> int:
    """How many ``data/run0/rows-K.js`` files the viewer in ``out`` wrote."""
    return len(list((out / "data" / "run0").glob("rows-*.js")))


#: The viewer's search waits 120 ms after the last keystroke before filtering (typing stays smooth).
SEARCH_DEBOUNCE_MS = 120


def _first_render(browser: Any, url: str, selector: str) -> float:
    context = browser.new_context(viewport={"width": 1400, "height": 900}, offline=True, bypass_csp=True)
    page = context.new_page()
    try:
        page.goto(url, wait_until="commit")
        page.wait_for_selector(selector, timeout=300_000)
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => r()))")
        return float(page.evaluate("() => performance.now()"))
    finally:
        context.close()


def _interact(
    browser: Any, url: str, selector: str, script: str, action: tuple[str, str]
) -> tuple[float, float, str]:
    context = browser.new_context(viewport={"width": 1400, "height": 900}, offline=True, bypass_csp=True)
    page = context.new_page()
    try:
        page.goto(url, wait_until="load")
        page.wait_for_selector(selector, timeout=300_000)
        work, painted, count = page.evaluate(script, list(action))
        return float(work), float(painted), str(count)
    finally:
        context.close()


def generate_from_demo(folder: Path, trials: int) -> Path:
    """Write ``results.jsonl`` and ``transcripts.jsonl``: the demo's result lines replicated to ``trials``."""
    demo = folder / "demo"
    if not (demo / "results" / "agent-v1.jsonl").is_file():
        subprocess.run(
            [sys.executable, "-c", _CLI, "-q", "demo", "--out", str(demo)],
            check=True,
            stdout=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        )
    base = [json.loads(raw) for raw in (demo / "results" / "agent-v1.jsonl").read_text("utf-8").splitlines()]
    sources: dict[str, list[str]] = {}
    for line in base:
        file = line["source"]["file"]
        if file not in sources:
            sources[file] = Path(file).read_text(encoding="utf-8").splitlines()
    transcripts, results = folder / "transcripts.jsonl", folder / "results.jsonl"
    with transcripts.open("w", encoding="utf-8") as t_out, results.open("w", encoding="utf-8") as r_out:
        for n in range(trials):
            line = base[n % len(base)]
            copy = dict(line)
            copy["case"] = {**line["case"], "id": f"{line['case']['id']}-r{n // len(base):05d}"}
            copy["source"] = {**line["source"], "file": str(transcripts), "line": n + 1}
            t_out.write(sources[line["source"]["file"]][line["source"]["line"] - 1] + "\n")
            r_out.write(json.dumps(copy, ensure_ascii=False, separators=(",", ":")) + "\n")
    return results


_CLI = "import sys; from judgekit.cli import main; sys.exit(main(sys.argv[1:]))"


def _view_peak(src: Path, results: Path, out: Path) -> tuple[float, float, int]:
    """``judgekit view RESULTS --out OUT`` from the tree ``src``: peak RSS in MB, wall seconds, exit code."""
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(src), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    t0 = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-c", _CLI, "view", str(results), "--out", str(out)],
        stdout=subprocess.DEVNULL,
        env=env,
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - t0
    shutil.rmtree(out, ignore_errors=True)
    return usage.ru_maxrss / 1024, wall, os.waitstatus_to_exitcode(status)


def memory(counts: list[int], baseline: str, keep: Path | None) -> None:
    """Peak RSS and wall time of ``judgekit view`` before (``baseline``) and after, per trial count."""
    folder = keep or Path(tempfile.mkdtemp(prefix="bench-viewer-memory-"))
    folder.mkdir(parents=True, exist_ok=True)
    old = folder / "baseline-tree"
    if not old.is_dir():
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(old), baseline],
            check=True,
            capture_output=True,
        )
    try:
        rows = []
        for trials in counts:
            work = folder / f"n{trials}"
            work.mkdir(exist_ok=True)
            t0 = time.perf_counter()
            results = generate_from_demo(work, trials)
            size = results.stat().st_size / 1e6
            print(
                f"{trials} grade-shaped lines ({size:.0f} MB) in {time.perf_counter() - t0:.0f} s", flush=True
            )
            before = _view_peak(old / "src", results, work / "viewer-before")
            print(
                f"  before ({baseline}): {before[0]:.0f} MB peak, {before[1]:.0f} s, exit {before[2]}",
                flush=True,
            )
            after = _view_peak(ROOT / "src", results, work / "viewer-after")
            print(f"  after: {after[0]:.0f} MB peak, {after[1]:.0f} s, exit {after[2]}", flush=True)
            rows.append((trials, before, after))
            if keep is None:
                shutil.rmtree(work, ignore_errors=True)
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)], check=False)
    print(f"\n{'trials':>8} {'before MB':>10} {'after MB':>9} {'ratio':>6} {'before s':>9} {'after s':>8}")
    for trials, before, after in rows:
        print(
            f"{trials:8d} {before[0]:10.0f} {after[0]:9.0f} {before[0] / after[0]:5.1f}x "
            f"{before[1]:9.0f} {after[1]:8.0f}"
        )


def main() -> None:
    """Generate, build, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=str, default="50000", help="Trials (with --memory: a comma list).")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="Write the inputs and the viewer here.")
    parser.add_argument("--memory", action="store_true", help="Peak memory before/after, no browser.")
    parser.add_argument("--baseline", default="c1b4447", help="The commit --memory compares against.")
    args = parser.parse_args()
    if args.memory:
        memory([int(n) for n in args.trials.split(",")], args.baseline, args.keep)
        return
    args.trials = int(args.trials)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bench-viewer-"))
    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    results = generate(folder, args.trials)
    print(f"generated {args.trials} trials in {time.perf_counter() - t0:.1f} s -> {results}")
    out = folder / "viewer"
    t0 = time.perf_counter()
    run = read_results(results)
    t_read = time.perf_counter() - t0
    built = write_viewer([run], out)
    t_build = time.perf_counter() - t0
    index_size = (out / "data" / "index.js").stat().st_size + sum(
        p.stat().st_size for p in (out / "data" / "run0").glob("rows-*.js")
    )
    chunk_sizes = [p.stat().st_size for p in (out / "data" / "run0").glob("chunk-*.js")]
    print(
        f"build: {t_build:.1f} s wall (read_results {t_read:.1f} s, viewer {t_build - t_read:.1f} s); "
        f"{len(built.files)} files, {built.bytes / 1e6:.1f} MB: index and rows {index_size / 1e6:.1f} MB, "
        f"{len(chunk_sizes)} chunks of {max(chunk_sizes) / 1e6:.2f} MB at most"
    )
    rows = "".join(f'<script src="data/run0/rows-{k}.js"></script>\n' for k in range(run_row_files(out)))
    (out / "baseline.html").write_text(BASELINE_HTML.replace("{rows}", rows), encoding="utf-8")
    (out / "baseline.js").write_text(BASELINE_JS, encoding="utf-8")

    from playwright.sync_api import sync_playwright

    viewer_url = (out / "index.html").as_uri()
    baseline_url = (out / "baseline.html").as_uri()
    figures: dict[str, dict[str, float]] = {"viewer": {}, "baseline": {}}
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox"], headless=True
        )
        try:
            for name, url, selector, script in (
                ("viewer", viewer_url, "#rows a.vrow", MEASURE_VIEWER),
                ("baseline", baseline_url, "#plain tbody tr", MEASURE_BASELINE),
            ):
                renders = [_first_render(browser, url, selector) for _ in range(args.repeat)]
                filters = [
                    _interact(browser, url, selector, script, ("filter", "fail")) for _ in range(args.repeat)
                ]
                searches = [
                    _interact(browser, url, selector, script, ("search", "case-0012"))
                    for _ in range(args.repeat)
                ]
                figures[name] = {
                    "first render ms": statistics.median(renders),
                    "filter ms (to painted)": statistics.median(f[1] for f in filters),
                    "search ms (to painted)": statistics.median(s[1] for s in searches),
                }
                print(f"{name}: filter -> '{filters[0][2]}', search -> '{searches[0][2]}'")
        finally:
            browser.close()
    print(f"\n{args.trials} trials, headless Chromium, median of {args.repeat} page loads each:")
    print(f"{'':26} {'viewer':>10} {'plain table':>12} {'ratio':>7}")
    for key in figures["viewer"]:
        v, b = figures["viewer"][key], figures["baseline"][key]
        print(f"{key:26} {v:10.0f} {b:12.0f} {b / v:6.1f}x")
    print(
        f"(the viewer's search figure includes its {SEARCH_DEBOUNCE_MS} ms debounce after the last "
        "keystroke; the plain table's does not)"
    )


if __name__ == "__main__":
    main()
