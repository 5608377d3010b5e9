"""Benchmark: ``judgekit lint --tau-bench`` on the shared gpt-4o airline run, rows compared as before and now.

Run: ``.venv/bin/python bench/bench_taubench_lint.py`` (``--repeat N`` runs each arm N times, alternating).

The data is the shared gpt-4o airline run (``../shared/data/tau-bench-airline``: 50 tasks, 200 replayed
trajectories, a database of 300 flights, 2,000 reservations and 500 users). The lint grades a do-nothing
agent on every task; its database gate compares the state the agent left (the initial database) with the
task's expected database, row by row, as tau-bench's hash would (:func:`~judgekit.integrations.
taubench_reward.same_db`). Two arms, in this one process, on the same loaded run:

- **before**: the comparison as it was until this benchmark's commit: both snapshots copied through JSON
  (``Snapshot.to_data()``), and every row that is not the same object on both sides rendered
  ``repr(to_hashable(row))``;
- **now**: :func:`~judgekit.integrations.taubench_lint.lint_tau_bench` as it is: the tables read as they
  were loaded, and a row whose plain ``repr`` equals the other's taken as the same without rendering.

Each arm's report is checked to be the same (every case's verdicts, checks and findings) before the
figures are printed: wall and CPU seconds per arm (the best of the repeats) and the ratio before / now.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

DATA = Path(os.environ.get("JUDGEKIT_SHARED_DATA", ROOT / ".." / "shared" / "data")) / "tau-bench-airline"


@contextmanager
def before() -> Iterator[None]:
    """The lint with the comparison as it was: JSON copies of both snapshots, every row rendered."""
    from judgekit.integrations import taubench, taubench_reward

    same_db = taubench_reward.same_db

    def same_db_before(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
        return same_db(_json_copy(a), _json_copy(b))  # what Snapshot.to_data() gave the comparison

    def same_row_before(a: Any, b: Any) -> bool:  # every row not shared as one object rendered
        return repr(taubench_reward.to_hashable(a)) == repr(taubench_reward.to_hashable(b))

    saved = taubench.same_db, taubench_reward._same_row
    taubench.same_db, taubench_reward._same_row = same_db_before, same_row_before
    try:
        yield
    finally:
        taubench.same_db, taubench_reward._same_row = saved


def _json_copy(value: Any) -> Any:
    import json

    return json.loads(json.dumps(value))


def _timed(run: Callable[[], Any]) -> tuple[float, float, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = run()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def _summary(report: Any) -> list[Any]:
    """What the two arms must agree on: every case's do-nothing verdict, checks and findings."""
    return [
        (
            case.case_id,
            case.do_nothing.verdict,
            [(c.check_id, c.verdict, c.reason) for c in case.do_nothing.checks],
            [(f.kind, f.subject, str(f.where), f.message, f.layers, f.expectations) for f in case.findings],
        )
        for case in report.cases
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=1, help="Runs of each arm, alternating (best kept).")
    args = parser.parse_args(argv)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from judgekit.integrations.taubench import load_run
    from judgekit.integrations.taubench_lint import do_nothing_reward_tasks, lint_tau_bench

    results = DATA / "gpt-4o-airline.raw.json"
    run = load_run(results, db=DATA / "db", replay=DATA / "gpt-4o-trajectories.jsonl")
    load = Path("/proc/loadavg").read_text(encoding="utf-8").split()[:3]
    print(f"load average at start: {' / '.join(load)}")
    best: dict[str, tuple[float, float]] = {}
    reports: dict[str, Any] = {}
    for _ in range(args.repeat):
        for arm in ("before", "now"):
            if arm == "before":
                with before():
                    wall, cpu, reports[arm] = _timed(lambda: lint_tau_bench(run, results=results))
            else:
                wall, cpu, reports[arm] = _timed(lambda: lint_tau_bench(run, results=results))
            old = best.get(arm)
            best[arm] = (wall, cpu) if old is None or cpu < old[1] else old
            print(f"{arm:>6}: {wall:7.2f} s wall, {cpu:7.2f} CPU-s", flush=True)
    if _summary(reports["before"]) != _summary(reports["now"]):
        raise SystemExit("the two arms' lint reports differ: no figures")
    free = do_nothing_reward_tasks(reports["now"])
    print(
        f"both arms: {len(reports['now'].cases)} tasks linted, reward 1 for a do-nothing agent on {len(free)}"
    )
    (wall_b, cpu_b), (wall_n, cpu_n) = best["before"], best["now"]
    print(f"best: before {cpu_b:.2f} CPU-s, now {cpu_n:.2f} CPU-s: before / now = {cpu_b / cpu_n:.1f}x")
    print(f"      (wall: {wall_b:.2f} s / {wall_n:.2f} s = {wall_b / wall_n:.1f}x)")


if __name__ == "__main__":
    main()
