"""Promote and retire killed with SIGKILL at every step: the set is never left half edited unnoticed (F11).

``judgekit candidates promote`` of three candidates and ``judgekit cases retire`` of three cases run the real
command line in a child forked from the test, which an audit hook (:mod:`golden.killed`, nothing in
judgekit) kills with SIGKILL just before its k-th file-system step under the set: every file created,
renamed, removed, every folder made or removed. Every k from the first step to the last is a variant, and
so is every step of the rerun that finishes an edit killed after its first move (the finishing run
itself killed). After each kill:

* without a journal, the set's case files are exactly as before the command or exactly as after it;
* with one, ``judgekit cases check`` fails with a problem located at the journal;
* a rerun of the same command exits 0 and leaves the case files byte for byte as an uninterrupted run
  does, every case promoted or retired once, no journal, staging folder or temporary file left, and
  ``validate`` passes.

Each variant runs in a bounded child process (:func:`run_bounded`); the last test counts them.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from golden.killed import run_killed_forked
from hostile.sweep import Sweep, SweepStore, cli_in_process
from judgekit.verdict import Verdict
from support import results_file, write

JOURNAL = ".judgekit-journal"
STEPS = {"promote": 6, "retire": 14}
"""File-system steps of an uninterrupted run. Promotion of three candidates: the journal's temporary file
created and renamed into place, three moves, the journal removed. Retirement of three cases: the staging
folder made, three edited copies created and renamed, the journal created and renamed, three renames, the
staging folder and the journal removed."""
FINISH_STEPS = {"promote": 3, "retire": 4}
"""Of a rerun finishing an edit killed just before its second move: two renames, (the staging folder and)
the journal removed."""
SECOND_MOVE = {"promote": 4, "retire": 11}
"""The step of an uninterrupted run that is its second move."""


@dataclass(frozen=True)
class Variant:
    """One kill.

    Attributes:
        command: ``promote`` or ``retire``.
        kill_at: The step of the first run before which it is killed.
        rerun_kill_at: The step of the finishing rerun before which that is killed too (0: not killed).
    """

    command: str
    kill_at: int
    rerun_kill_at: int = 0

    @property
    def name(self) -> str:
        """The variant's test id."""
        rerun = f"-rerun-killed-at-{self.rerun_kill_at}" if self.rerun_kill_at else ""
        return f"{self.command}-killed-at-step-{self.kill_at}{rerun}"


VARIANTS = [
    *(Variant(command, k) for command in ("promote", "retire") for k in range(1, STEPS[command] + 1)),
    # killed just before its second move, then the finishing rerun killed at each of its steps
    *(
        Variant(command, SECOND_MOVE[command], j)
        for command in ("promote", "retire")
        for j in range(1, FINISH_STEPS[command] + 1)
    ),
]


def _make_set(folder: Path, command: str) -> tuple[Path, list[str]]:
    """A set with three candidates ready to promote, or three cases saturated over three releases."""
    if command == "promote":
        root = folder / "golden"
        write(root / "judgekit-set.yaml", "name: s\n")
        write(root / "cases" / "a.yaml", "id: GS-1\ninput: Hello\nacceptance: Greets.\n")
        for i in (1, 2, 3):
            write(root / "candidates" / f"r{i}.yaml", f"id: GS-CAND-R{i}\ninput: Q{i}\nacceptance: A{i}.\n")
        ids = [f"GS-CAND-R{i}" for i in (1, 2, 3)]
        return root, ["candidates", "promote", *ids, "--set", str(root)]
    root = folder / "set"
    write(root / "judgekit-set.yaml", "name: s\ncases_dir: cases\n")
    for n in "abc":
        write(root / "cases" / f"{n}.yaml", f"id: {n}\nversion: 1\ninput: Ask {n}\nacceptance: Ok.\n")
    files = [
        str(results_file(folder / f"r{v}.jsonl", v, {k: [Verdict.PASS] * 8 for k in "abc"}))
        for v in ("1.4", "1.5", "1.6")
    ]
    return root, ["cases", "retire", *files, "--set", str(root)]


def _files(root: Path) -> dict[str, bytes]:
    """Every file under the set, by relative path."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _cases(root: Path) -> dict[str, bytes]:
    """The case files (what the edit changes): no journal, staging copies or temporary files."""
    return {
        k: v
        for k, v in _files(root).items()
        if not k.startswith(".") and not Path(k).name.startswith(".") and k.endswith(".yaml")
    }


def _half_edited(root: Path, before: dict[str, bytes], after: dict[str, bytes], when: str) -> list[str]:
    """What is wrong with the set a kill left: half edited and unnoticed."""
    now = _cases(root)
    if not (root / JOURNAL).exists():
        if now in (before, after):
            return []
        return [f"{when}: half edited and no journal: {sorted(k for k in now if now[k] != after.get(k))}"]
    code, text = cli_in_process(["cases", "check", str(root)])
    if code != 1 or f"{root.resolve() / JOURNAL}: " not in text:
        return [f"{when}: a journal is pending but validate exited {code}: {text[-400:]}"]
    return []


def check(variant: Variant) -> list[str]:
    """Run one variant; the problems found (``[]`` when the kill was handled correctly)."""
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="judgekit-killed-") as tmp:
        folder = Path(tmp)
        reference_root, reference_argv = _make_set(folder / "reference", variant.command)
        root, argv = _make_set(folder / "killed", variant.command)
        before = _cases(root)
        code, text = cli_in_process(reference_argv)
        if code != 0:
            return [f"the uninterrupted run failed ({code}): {text[-400:]}"]
        after = _cases(reference_root)
        killed = run_killed_forked(root, argv, kill_at=variant.kill_at)
        if killed.returncode != -9:
            problems.append(
                f"not killed at step {variant.kill_at} (exit {killed.returncode}): {killed.steps}"
            )
        problems += _half_edited(root, before, after, f"killed at step {variant.kill_at}")
        if variant.rerun_kill_at:
            rerun = run_killed_forked(root, argv, kill_at=variant.rerun_kill_at)
            if rerun.returncode != -9:
                problems.append(f"rerun not killed at step {variant.rerun_kill_at} (exit {rerun.returncode})")
            problems += _half_edited(root, before, after, f"rerun killed at step {variant.rerun_kill_at}")
        if (root / JOURNAL).exists() or _cases(root) != after:  # else it died once all was done
            code, text = cli_in_process(argv)
            if code != 0:
                problems.append(f"the rerun exited {code}: {text[-600:]}")
        if _cases(root) != after:
            problems.append(
                f"after the rerun the case files differ from an uninterrupted run's: {text[-600:]}"
            )
        leftovers = sorted(set(_files(root)) - set(_files(reference_root)))
        leftovers += sorted(p.name for p in root.iterdir() if p.name.startswith(".judgekit"))
        if leftovers:
            problems.append(f"left behind: {leftovers}")
        code, text = cli_in_process(["cases", "check", str(root)])
        if code != 0:
            problems.append(f"validate after the rerun exited {code}: {text[-400:]}")
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
    """Import the commands' modules once, so that every forked child starts with them loaded."""
    import judgekit.cli
    import judgekit.golden.promote
    import judgekit.golden.retire
    import judgekit.reports.retirement
    import judgekit.reports.run_model
    import judgekit.results  # noqa: F401


@SWEEP.parametrize
def test_a_kill_at_every_step_is_finished_by_a_rerun(variant: Variant, sweep_store: SweepStore) -> None:
    assert sweep_store.problems(SWEEP, variant) == []


def test_the_variants_cover_every_step() -> None:
    # An uninterrupted run makes exactly the steps the variants kill at (a new step needs a new variant).
    for command in ("promote", "retire"):
        with tempfile.TemporaryDirectory(prefix="judgekit-steps-") as tmp:
            root, argv = _make_set(Path(tmp) / "whole", command)
            whole = run_killed_forked(root, argv, kill_at=0)
            assert whole.returncode == 0, command
            assert len(whole.steps) == STEPS[command], whole.steps
            assert whole.steps[SECOND_MOVE[command] - 1].endswith("2.yaml") or whole.steps[
                SECOND_MOVE[command] - 1
            ].endswith("b.yaml"), whole.steps
            root, argv = _make_set(Path(tmp) / "finish", command)
            first = run_killed_forked(root, argv, kill_at=SECOND_MOVE[command])
            assert first.returncode == -9
            finish = run_killed_forked(root, argv, kill_at=0)
            assert finish.returncode == 0
            assert len(finish.steps) == FINISH_STEPS[command], finish.steps


@SWEEP.counted
def test_count_of_killed_set_edits_tried_and_handled(sweep_store: SweepStore) -> None:
    """The counts for the issue: every variant tried (here only those no test of the session ran)."""
    tally = sweep_store.tally(SWEEP)
    print(f"\nset edits killed with SIGKILL: tried: {tally.tried}, handled correctly: {tally.handled}")
    assert not tally.failures, tally.failures
    assert tally.tried == tally.handled == len(VARIANTS)
