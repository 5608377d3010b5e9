"""``grade --resume --retry-errors`` killed with SIGKILL at every step: one line per trial, always.

Three AirDesk trials are graded while their final states are missing (every line ends in error: a state
check that could not run), the states are put back, then ``judgekit grade --resume --retry-errors`` runs
in a child forked from the test, which an audit hook (:mod:`golden.killed`, nothing in judgekit) kills
with SIGKILL just before its k-th file-system step in the run's folder: the rewrite's temporary copy
created and opened, its rename over the results file, the results file opened to append. Every k is a
variant, and so is every step of a second retry killed after the first was killed at each step. After
each kill:

* the results file reads with no problem (no duplicate, no truncated line) and holds each trial at most
  once, every line either the old error line or a retried one;
* a third, uninterrupted ``--resume --retry-errors`` exits 0 and leaves one line per trial, none in
  error, the same verdicts as an uninterrupted retry, and no temporary file behind.

Each variant runs in a bounded child process (:func:`run_bounded`); the last test counts them.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from golden.killed import run_killed_forked
from hostile.sweep import Sweep, SweepStore, cli_in_process

ROOT = Path(__file__).resolve().parents[2]
AIRDESK = ROOT / "examples" / "airdesk"
RUNS = AIRDESK / "runs"
TRIALS = 3
STEPS = 4
"""File-system steps of an uninterrupted retry: the temporary copy created (mkstemp) and opened to be
written, renamed over the results file, the results file opened to append."""

pytestmark = pytest.mark.skipif(not (RUNS / "agent-v1.jsonl").is_file(), reason="airdesk example not present")


@dataclass(frozen=True)
class Variant:
    """One kill (and perhaps a second).

    Attributes:
        kill_at: The step of the first retry before which it is killed.
        again_at: The step of a second retry before which that is killed too (0: no second retry).
    """

    kill_at: int
    again_at: int = 0

    @property
    def name(self) -> str:
        """The variant's test id."""
        return f"retry-killed-at-step-{self.kill_at}" + (
            f"-again-at-{self.again_at}" if self.again_at else ""
        )


VARIANTS = [
    *(Variant(k) for k in range(1, STEPS + 1)),
    *(Variant(k, j) for k in range(1, STEPS + 1) for j in range(1, STEPS + 1)),
]


def _make_run(folder: Path) -> tuple[list[str], Path]:
    """Three trials graded with their final states missing (every line in error), the states put back.

    Returns:
        The retry's command line and the results file.
    """
    folder.mkdir(parents=True)
    rows = [json.loads(line) for line in (RUNS / "agent-v1.jsonl").read_text().splitlines()[:TRIALS]]
    finals = []
    for i, row in enumerate(rows):
        finals.append((RUNS / row["final_state"]).resolve())
        row["initial_state"] = str((RUNS / row["initial_state"]).resolve())
        row["final_state"] = str(folder / f"final-{i}.sql")
    transcripts = folder / "t.jsonl"
    transcripts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = folder / "r.jsonl"
    argv = ["grade", "--cases", str(AIRDESK), "--transcripts", str(transcripts), "--out", str(out)]
    argv.append("--no-progress")
    code, text = cli_in_process(argv)
    if code != 0:
        raise AssertionError(f"the first run failed ({code}): {text[-400:]}")
    for i, final in enumerate(finals):
        shutil.copy(final, folder / f"final-{i}.sql")
    return [*argv, "--resume", "--retry-errors"], out


def _lines(out: Path) -> tuple[dict[tuple[str, int], str], list[str]]:
    """The verdict of each trial in the file, and the problems reading it."""
    from judgekit.results import read_results

    if not out.exists():
        return {}, []
    results = read_results(out)
    return {line.key: line.verdict.value for line in results.lines}, [str(p) for p in results.problems]


def _errored(out: Path) -> set[tuple[str, int]]:
    from judgekit.results import read_results
    from judgekit.runner import ended_in_error

    return {line.key for line in read_results(out).lines if ended_in_error(line)}


def _after_kill(out: Path, when: str) -> list[str]:
    """What is wrong with the file a kill left."""
    verdicts, problems = _lines(out)
    found = [f"{when}: the file has problems: {problems}"] if problems else []
    if len(verdicts) > TRIALS:
        found.append(f"{when}: {len(verdicts)} trials in a run of {TRIALS}")
    return found


def check(variant: Variant) -> list[str]:
    """Run one variant; the problems found (``[]`` when the kill was handled correctly)."""
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="judgekit-retry-killed-") as tmp:
        folder = Path(tmp)
        reference_argv, reference_out = _make_run(folder / "reference")
        code, text = cli_in_process(reference_argv)
        if code != 0:
            return [f"the uninterrupted retry failed ({code}): {text[-400:]}"]
        expected, _ = _lines(reference_out)
        if len(expected) != TRIALS or _errored(reference_out):
            return [f"the uninterrupted retry left {expected}"]
        argv, out = _make_run(folder / "killed")
        killed = run_killed_forked(out.parent, argv, kill_at=variant.kill_at)
        if killed.returncode != -9:
            problems.append(
                f"not killed at step {variant.kill_at} (exit {killed.returncode}): {killed.steps}"
            )
        problems += _after_kill(out, f"killed at step {variant.kill_at}")
        if variant.again_at:
            again = run_killed_forked(out.parent, argv, kill_at=variant.again_at)
            # a retry with nothing left to rewrite makes fewer steps: it may finish before the step
            if again.returncode not in (-9, 0):
                problems.append(f"the second retry exited {again.returncode}")
            problems += _after_kill(out, f"second retry killed at step {variant.again_at}")
        code, text = cli_in_process(argv)
        if code != 0:
            problems.append(f"the last retry exited {code}: {text[-600:]}")
        verdicts, read_problems = _lines(out)
        if read_problems or verdicts != expected:
            problems.append(
                f"after the last retry: {verdicts} (problems {read_problems}), expected {expected}"
            )
        if _errored(out):
            problems.append(f"lines still in error: {sorted(_errored(out))}")
        leftovers = sorted(p.name for p in out.parent.iterdir() if p.name.startswith("."))
        if leftovers:
            problems.append(f"left behind: {leftovers}")
    return problems


SWEEP = Sweep(
    name=__name__,
    variants=VARIANTS,
    key=lambda v: v.name,
    check=lambda variant, _folder: check(variant),
    seconds=90.0,
    mb=2048,
    batch=4,
)
"""Each variant once in the session, in a child process under a time and memory bound (batches of 4)."""


@pytest.fixture(scope="module", autouse=True)
def _commands_loaded() -> None:
    """Import the command's modules once, so that every forked child starts with them loaded."""
    import judgekit.cli
    import judgekit.commands.runs
    import judgekit.results
    import judgekit.runner  # noqa: F401


@SWEEP.parametrize
def test_a_retry_killed_at_any_step_is_finished_by_the_next(
    variant: Variant, sweep_store: SweepStore
) -> None:
    assert sweep_store.problems(SWEEP, variant) == []


def test_the_variants_cover_every_step() -> None:
    # An uninterrupted retry makes exactly the steps the variants kill at (a new step needs a new variant).
    with tempfile.TemporaryDirectory(prefix="judgekit-retry-steps-") as tmp:
        argv, out = _make_run(Path(tmp) / "whole")
        whole = run_killed_forked(out.parent, argv, kill_at=0)
        assert whole.returncode == 0
        assert len(whole.steps) == STEPS, whole.steps
        assert whole.steps[2].startswith("os.rename "), whole.steps
        assert whole.steps[2].endswith(str(out)), whole.steps


@SWEEP.counted
def test_count_of_killed_retries_tried_and_handled(sweep_store: SweepStore) -> None:
    """The counts for the issue: every variant tried (here only those no test of the session ran)."""
    tally = sweep_store.tally(SWEEP)
    print(f"\n--retry-errors killed with SIGKILL: tried: {tally.tried}, handled correctly: {tally.handled}")
    assert not tally.failures, tally.failures
    assert tally.tried == tally.handled == len(VARIANTS)
