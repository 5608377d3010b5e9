"""Comparing two runs on the same tasks: fixed and broken tasks, exact sign test, McNemar, a plain verdict.

Only tasks whose result changed carry information about the difference between two versions (seed 000):
if the new version fixes 10 tasks and breaks 1, the two-sided sign test gives p ≈ 0.012, a real
improvement; 6 fixed and 3 broken gives p ≈ 0.51, noise however good the headline looks.

Definitions (see ``docs/runs.md``):

* A task's **outcome** in a run follows the gate order over its trials: ``fail`` when any trial failed,
  ``pass`` when every trial passed, otherwise undecided (an error, insufficient information or not
  evaluated, and no failure). A task that passes 5 of 8 trials is failing.
* **Fixed**: ``fail`` in A, ``pass`` in B. **Broken**: ``pass`` in A, ``fail`` in B. Tasks undecided in either
  run are left out of the test and listed.
* **Sign test**: exact two-sided binomial test on fixed vs broken (ties left out).
* **McNemar**: exact test on paired trials (same case, same trial number, decided in both runs). Trials of
  one task are correlated, so this is supporting detail; the verdict rests on the task-level sign test.
* **Fixed and broken trials**: every paired trial that failed in A and passed in B (fixed) or passed in A
  and failed in B (broken), by case id and trial number (:attr:`Comparison.trial_changes`), each with its
  task's change. A trial can break in a task that still fails (another trial failed in A already), so a
  broken trial is listed as broken whatever its task's change.
* **Verdict**: ``real improvement`` when p < alpha and more fixed than broken; ``regression`` when p < alpha
  and more broken than fixed; ``no detectable change`` otherwise.
* **Regression suite lost**: a task of the regression suite (same rule as the run report's suites: its
  ``split`` from the case set, else ``category: regression`` or a regression slice) that passed every trial
  in A and does not pass every trial in B (broken, or undecided in B). The regression suite is the part of
  the set that must keep passing, so one such task is a regression whatever the sign test says
  (:attr:`Comparison.regression_lost`, and ``judgekit compare`` exits 1).

Runs made on different case versions or policy revisions measure different things: :func:`compare_runs`
refuses them and names every case that differs.

The one comparison: :func:`digest_runs` reads the two runs (in memory, or files streamed line by line)
into :class:`RunDigest` s, and :func:`compare_runs` compares the digests; the viewer feeds its own digests
as it streams the lines and labels every task with the same :func:`task_changes`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal

from judgekit.errors import JudgekitError, Problem
from judgekit.reports.run_model import (
    DEFAULT_REGRESSION_SLICES,
    ResultSource,
    outcomes_from_counts,
    source_lines,
    task_rate,
)
from judgekit.reports.run_parts import processes_for, read_in_parts
from judgekit.results import FastResultLine, ResultLine, paused_gc
from judgekit.stats import Proportion, mcnemar_exact, sign_test
from judgekit.verdict import FrozenModel, Verdict

__all__ = [
    "CHANGE_WORDS",
    "COMPARE_SCHEMA_VERSION",
    "Change",
    "Comparison",
    "RunDigest",
    "TaskChange",
    "TrialChange",
    "compare_runs",
    "digest_runs",
    "task_changes",
]

COMPARE_SCHEMA_VERSION = 4
"""Version of the :class:`Comparison` JSON schema (2: ``regression_lost``; 3: ``task_pass_a`` and
``task_pass_b``, each run's task pass rate with its Wilson interval and its bounds under the undecided
tasks; 4: ``trial_changes``, every fixed and broken trial by case id and trial number)."""

PlainVerdict = Literal["real improvement", "no detectable change", "regression"]

Change = Literal["fixed", "broken", "still_pass", "still_fail", "undecided", "only_in_a", "only_in_b"]
"""A task's change from run A to run B: ``fixed`` (fail to pass), ``broken`` (pass to fail),
``still_pass``, ``still_fail``, ``undecided`` (undecided in either run), or in one run only."""

BothRunsChange = Literal["fixed", "broken", "still_pass", "still_fail", "undecided"]
"""A :data:`Change` of a task in both runs (not ``only_in_a`` or ``only_in_b``)."""

CHANGE_WORDS: Mapping[Change, str] = {
    "fixed": "fixed",
    "broken": "broken",
    "still_pass": "still passing",
    "still_fail": "still failing",
    "undecided": "undecided",
    "only_in_a": "only in A",
    "only_in_b": "only in B",
}
"""Every :data:`Change` in words, as the Markdown and HTML comparisons and the viewer's comparison page show
it; the JSON keeps the values (``still_fail``)."""


class TaskChange(FrozenModel):
    """One task's outcome in both runs.

    Attributes:
        case_id: The task.
        change: ``fixed``, ``broken``, ``still_pass``, ``still_fail`` or ``undecided``.
        a: Outcome in run A, with ``passes/trials``.
        b: Outcome in run B, with ``passes/trials``.
    """

    case_id: str
    change: BothRunsChange
    a: str
    b: str


class TrialChange(FrozenModel):
    """One paired trial (same case id and trial number in both runs) whose decided verdict flipped.

    Attributes:
        case_id: The trial's task.
        trial: The trial's number within its task (the result line's ``trial``, from 1).
        change: ``fixed`` (fail in A, pass in B) or ``broken`` (pass in A, fail in B).
        task_change: Its task's change (:data:`Change`): a trial can break in a task that still fails, or be
            fixed in a task that still fails because another of its trials does.
    """

    case_id: str
    trial: int
    change: Literal["fixed", "broken"]
    task_change: BothRunsChange


class Comparison(FrozenModel):
    """The comparison of run B (new) against run A (baseline).

    Attributes:
        schema_version: :data:`COMPARE_SCHEMA_VERSION`.
        kind: Always ``run_comparison``.
        a: Run A's file name.
        b: Run B's file name.
        tasks_compared: Tasks in both runs.
        fixed: Tasks failing in A and passing in B.
        broken: Tasks passing in A and failing in B.
        unchanged_pass: Tasks passing in both.
        unchanged_fail: Tasks failing in both.
        undecided: Tasks undecided in either run (left out of the test).
        only_in_a: Tasks only in A.
        only_in_b: Tasks only in B.
        sign_test_p: Two-sided exact sign test p-value on fixed vs broken (1.0 with none).
        trial_pairs: Paired trials decided in both runs.
        trials_fixed: Paired trials failing in A and passing in B (each listed in ``trial_changes``).
        trials_broken: Paired trials passing in A and failing in B (each listed in ``trial_changes``).
        mcnemar_p: Exact McNemar p-value on the paired trials (1.0 with no discordant pair).
        alpha: Significance level of the verdict.
        verdict: The plain verdict.
        explanation: One sentence saying why.
        pass_rate_a: Share of compared tasks passing in A (decided tasks only), or ``None``.
        pass_rate_b: Share of compared tasks passing in B, or ``None``.
        task_pass_a: The same share with its Wilson interval over A's decided tasks, and its bounds over
            every compared task with A's undecided tasks all failing (``undecided_low``) or all passing
            (``undecided_high``).
        task_pass_b: The same for B.
        changes: Every task whose outcome changed or is undecided, fixed first, then broken.
        notes: Caveats (different judges, different agent models).
        regression_lost: Tasks of the regression suite that passed every trial in A and do not in B
            (broken, or undecided in B), by id; any one is a regression whatever the sign test says.
        trial_changes: Every paired trial whose verdict flipped, by id: the fixed trials first, then the
            broken ones, each by case id and trial number; empty when no paired trial flipped.
    """

    schema_version: int = COMPARE_SCHEMA_VERSION
    kind: Literal["run_comparison"] = "run_comparison"
    a: str
    b: str
    tasks_compared: int
    fixed: int
    broken: int
    unchanged_pass: int
    unchanged_fail: int
    undecided: int
    only_in_a: tuple[str, ...]
    only_in_b: tuple[str, ...]
    sign_test_p: float
    trial_pairs: int
    trials_fixed: int
    trials_broken: int
    mcnemar_p: float
    alpha: float
    verdict: PlainVerdict
    explanation: str
    pass_rate_a: float | None
    pass_rate_b: float | None
    task_pass_a: Proportion
    task_pass_b: Proportion
    changes: tuple[TaskChange, ...]
    notes: tuple[str, ...] = ()
    regression_lost: tuple[TaskChange, ...] = ()
    trial_changes: tuple[TrialChange, ...] = ()

    def trials_by_task(self) -> list[tuple[str, BothRunsChange, tuple[int, ...], tuple[int, ...]]]:
        """The flipped trials grouped by task, in case id order, as the reports list them.

        Returns:
            Per task with a fixed or broken trial: ``(case id, the task's change, its fixed trial numbers,
            its broken trial numbers)``; empty when no paired trial flipped.

        Examples:
            >>> broke = TrialChange(case_id="t1", trial=2, change="broken", task_change="still_fail")
            >>> Comparison.model_construct(trial_changes=(broke,)).trials_by_task()
            [('t1', 'still_fail', (), (2,))]
        """
        rows: dict[str, tuple[BothRunsChange, list[int], list[int]]] = {}
        for t in self.trial_changes:
            row = rows.setdefault(t.case_id, (t.task_change, [], []))
            (row[1] if t.change == "fixed" else row[2]).append(t.trial)
        return [
            (case_id, change, tuple(fixed), tuple(broken))
            for case_id, (change, fixed, broken) in sorted(rows.items())
        ]


def _check_comparable(a: RunDigest, b: RunDigest) -> None:
    info_a, info_b = a.info, b.info
    differences: list[str] = []
    for case_id in sorted(info_a.keys() & info_b.keys()):
        (va, pa), (vb, pb) = info_a[case_id], info_b[case_id]
        if va != vb:
            differences.append(f"case '{case_id}': version {va} in {a.name}, version {vb} in {b.name}")
        if pa != pb:
            differences.append(
                f"case '{case_id}': policy revisions [{', '.join(pa) or 'none'}] in {a.name}, "
                f"[{', '.join(pb) or 'none'}] in {b.name}"
            )
    if differences:
        shown = differences[:20]
        more = f"\n  ... and {len(differences) - 20} more" if len(differences) > 20 else ""
        raise JudgekitError(
            f"cannot compare {a.name} with {b.name}: they were graded on different case versions or policy "
            "revisions, so their scores are not comparable:\n  "
            + "\n  ".join(shown)
            + more
            + "\nRe-grade both runs against the same version of the golden set."
        )


def _label(entry: tuple[int, int, Verdict] | None) -> str:
    if entry is None:
        return "absent"
    passes, total, outcome = entry
    return f"{outcome.value} ({passes}/{total})"


class RunDigest:
    """What a comparison needs from one run, fed one result line at a time (the lines are not kept).

    Per task: its first case version and policy revisions, its verdict counts, whether it is in the
    regression suite; the run's judge fingerprints and agent models. The baseline (``keep_trials``) also
    keeps each trial's verdict, one entry per trial; the new run, given the baseline, counts the paired
    trials as it goes (so the baseline must be fed first).

    Attributes:
        name: The run's name (its file's name).
        path: The results file (:func:`digest_runs` sets it; otherwise ``name`` as a path).
        problems: The file's problems, as :func:`~judgekit.results.read_results` reports them
            (:func:`digest_runs` sets them; otherwise none).
    """

    def __init__(
        self,
        name: str,
        *,
        regression_slices: Iterable[str],
        splits: Mapping[str, str],
        keep_trials: bool = False,
        baseline: RunDigest | None = None,
    ) -> None:
        """Start an empty digest of the run called ``name`` (its file's name)."""
        self.name = name
        self.path = Path(name)
        self.problems: list[Problem] = []
        self.splits = splits
        self.names = frozenset(s.lower() for s in regression_slices)
        self.keep_trials = keep_trials
        self.baseline = baseline
        self.info: dict[str, tuple[int, tuple[str, ...]]] = {}
        self.counts: dict[str, Counter[Verdict]] = defaultdict(Counter)
        self.regression: set[str] = set()
        self.fingerprints: set[str] = set()
        self.models: set[str] = set()
        self.trials: dict[tuple[str, int], Verdict] = {}
        self.pairs = self.trials_fixed = self.trials_broken = 0
        self.flipped: list[tuple[tuple[str, int], Literal["fixed", "broken"]]] = []

    def add(self, line: ResultLine | FastResultLine) -> None:
        """Count one result line (read by the full path, or by the exact fast path: the same values)."""
        case = line.case
        if case.id not in self.info:
            self.info[case.id] = (case.version, tuple(sorted(case.policy_refs)))
        self.counts[case.id][line.verdict] += 1
        split = self.splits.get(case.id)
        if split in ("capability", "regression"):
            member = split == "regression"
        else:
            member = case.category == "regression" or (
                case.slice is not None and case.slice.lower() in self.names
            )
        if member:
            self.regression.add(case.id)
        self.fingerprints.add(str(line.judge_fingerprint))
        if line.run and line.run.agent_model:
            self.models.add(line.run.agent_model)
        if self.keep_trials:
            self.trials[line.key] = line.verdict
        if self.baseline is not None:
            self._pair(self.baseline, line.key, line.verdict)

    def _pair(self, baseline: RunDigest, key: tuple[str, int], verdict: Verdict) -> None:
        """Count one trial of this run against the baseline's same trial (when both are decided)."""
        va = baseline.trials.get(key)
        if va is None or va not in _DECIDED or verdict not in _DECIDED:
            return
        self.pairs += 1
        if va is Verdict.FAIL and verdict is Verdict.PASS:
            self.trials_fixed += 1
            self.flipped.append((key, "fixed"))
        elif va is Verdict.PASS and verdict is Verdict.FAIL:
            self.trials_broken += 1
            self.flipped.append((key, "broken"))

    def merge(self, later: RunDigest) -> None:
        """Add the digest of a later part of the same file, fed as this one was but with no baseline.

        Counts add, first case versions and the first-seen order of tasks are kept, sets join and the
        kept trials continue in file order: the digest of one pass over both parts. With a baseline, the
        later part's trials (it must keep them) are paired here, in file order.
        """
        for case_id, info in later.info.items():
            self.info.setdefault(case_id, info)
        for case_id, counts in later.counts.items():
            self.counts[case_id].update(counts)
        self.regression |= later.regression
        self.fingerprints |= later.fingerprints
        self.models |= later.models
        if self.baseline is not None:
            for key, verdict in later.trials.items():
                self._pair(self.baseline, key, verdict)
        if self.keep_trials:
            self.trials.update(later.trials)

    def part(self) -> RunDigest:
        """An empty digest for a later part of the file: no baseline, its trials kept for :meth:`merge`."""
        return RunDigest(
            self.name,
            regression_slices=self.names,
            splits=self.splits,
            keep_trials=self.keep_trials or self.baseline is not None,
        )

    def outcomes(self) -> dict[str, tuple[int, int, Verdict]]:
        """Per task ``(passes, trials, outcome)``, as :func:`~judgekit.reports.run_model.task_outcomes`."""
        return outcomes_from_counts(self.counts)


_DECIDED = frozenset({Verdict.PASS, Verdict.FAIL})


def task_changes(a: RunDigest, b: RunDigest) -> list[tuple[str, Change]]:
    """Every task of either run with its change from A to B, by case id.

    A task's outcome follows the gate order over its trials (see the module); tasks in one run only are
    ``only_in_a`` or ``only_in_b``.
    """
    return _task_changes(a.outcomes(), b.outcomes())


def _task_changes(
    out_a: Mapping[str, tuple[int, int, Verdict]], out_b: Mapping[str, tuple[int, int, Verdict]]
) -> list[tuple[str, Change]]:
    """:func:`task_changes` from the two runs' task outcomes (:meth:`RunDigest.outcomes`)."""
    rows: list[tuple[str, Change]] = []
    for case_id in sorted(out_a.keys() | out_b.keys()):
        change: Change
        if case_id not in out_b:
            change = "only_in_a"
        elif case_id not in out_a:
            change = "only_in_b"
        else:
            oa, ob = out_a[case_id][2], out_b[case_id][2]
            if oa not in _DECIDED or ob not in _DECIDED:
                change = "undecided"
            elif oa is Verdict.FAIL and ob is Verdict.PASS:
                change = "fixed"
            elif oa is Verdict.PASS and ob is Verdict.FAIL:
                change = "broken"
            elif oa is Verdict.PASS:
                change = "still_pass"
            else:
                change = "still_fail"
        rows.append((case_id, change))
    return rows


def compare_runs(a: RunDigest, b: RunDigest, *, alpha: float = 0.05) -> Comparison:
    """Compare run B (the new version) with run A (the baseline) on the tasks both ran.

    Args:
        a: The baseline run's digest (:func:`digest_runs`).
        b: The new run's digest, fed after ``a`` with ``a`` as its baseline.
        alpha: Significance level for the plain verdict, in (0, 1).

    Returns:
        The comparison.

    Raises:
        JudgekitError: When the runs share no task, or were graded on different case versions or policy
            revisions (every differing case is named), or ``alpha`` is outside (0, 1).
    """
    if not 0.0 < alpha < 1.0:
        raise JudgekitError(f"--alpha must be strictly between 0 and 1, got {alpha}")
    _check_comparable(a, b)
    out_a, out_b = a.outcomes(), b.outcomes()
    common = sorted(out_a.keys() & out_b.keys())
    if not common:
        raise JudgekitError(
            f"{a.name} and {b.name} share no task: nothing to compare "
            "(were they graded on the same golden set?)"
        )
    changes: list[TaskChange] = []
    counts = {"fixed": 0, "broken": 0, "still_pass": 0, "still_fail": 0, "undecided": 0}
    of_task: dict[str, Change] = {}
    for case_id, change in _task_changes(out_a, out_b):
        if change in {"only_in_a", "only_in_b"}:
            continue
        of_task[case_id] = change
        counts[change] += 1
        if change in ("fixed", "broken", "undecided"):
            changes.append(
                TaskChange(
                    case_id=case_id,
                    change=change,
                    a=_label(out_a[case_id]),
                    b=_label(out_b[case_id]),
                )
            )
    order = {"fixed": 0, "broken": 1, "undecided": 2}
    changes.sort(key=lambda c: (order[c.change], c.case_id))
    flipped = sorted(b.flipped, key=lambda f: (order[f[1]], f[0]))
    trials = tuple(
        TrialChange(case_id=case_id, trial=trial, change=change, task_change=of_task[case_id])
        for (case_id, trial), change in flipped
    )
    regression = a.regression | b.regression
    lost = tuple(
        c
        for c in changes
        if c.case_id in regression
        and out_a[c.case_id][2] is Verdict.PASS
        and out_b[c.case_id][2] is not Verdict.PASS
    )
    fixed, broken = counts["fixed"], counts["broken"]
    p_sign = sign_test(fixed, broken)
    pairs, trials_fixed, trials_broken = b.pairs, b.trials_fixed, b.trials_broken
    p_mcnemar = mcnemar_exact(trials_broken, trials_fixed)
    verdict: PlainVerdict
    if p_sign < alpha and fixed > broken:
        verdict = "real improvement"
        explanation = f"{fixed} task(s) fixed and {broken} broken: sign test p = {p_sign:.3g} < {alpha:g}"
    elif p_sign < alpha and broken > fixed:
        verdict = "regression"
        explanation = f"{broken} task(s) broken and {fixed} fixed: sign test p = {p_sign:.3g} < {alpha:g}"
    else:
        verdict = "no detectable change"
        explanation = (
            f"{fixed} task(s) fixed and {broken} broken: sign test p = {p_sign:.3g}, not below {alpha:g}; "
            "the difference is within noise"
        )
    decided_tasks = len(common) - counts["undecided"]

    def rate(outcomes: dict[str, tuple[int, int, Verdict]]) -> Proportion:
        return task_rate([outcomes[c][2] for c in common])

    task_a, task_b = rate(out_a), rate(out_b)
    notes: list[str] = []
    if a.fingerprints != b.fingerprints:
        notes.append(
            "the runs were graded by different judge fingerprints: "
            "part of any change may come from the grader"
        )
    models_a, models_b = a.models, b.models
    if models_a != models_b and models_a and models_b:
        notes.append(f"agent models: {', '.join(sorted(models_a))} in A; {', '.join(sorted(models_b))} in B")
    if counts["undecided"]:
        notes.append(
            f"{counts['undecided']} task(s) are undecided in at least one run and left out of the sign test"
        )
    if decided_tasks == 0:
        notes.append("no task is decided in both runs: the sign test has nothing to count")
    return Comparison(
        a=a.name,
        b=b.name,
        tasks_compared=len(common),
        fixed=fixed,
        broken=broken,
        unchanged_pass=counts["still_pass"],
        unchanged_fail=counts["still_fail"],
        undecided=counts["undecided"],
        only_in_a=tuple(sorted(out_a.keys() - out_b.keys())),
        only_in_b=tuple(sorted(out_b.keys() - out_a.keys())),
        sign_test_p=p_sign,
        trial_pairs=pairs,
        trials_fixed=trials_fixed,
        trials_broken=trials_broken,
        mcnemar_p=p_mcnemar,
        alpha=alpha,
        verdict=verdict,
        explanation=explanation,
        pass_rate_a=task_a.rate,
        pass_rate_b=task_b.rate,
        task_pass_a=task_a,
        task_pass_b=task_b,
        changes=tuple(changes),
        notes=tuple(notes),
        regression_lost=lost,
        trial_changes=trials,
    )


def digest_runs(
    baseline: ResultSource,
    candidate: ResultSource,
    *,
    regression_slices: Iterable[str] = DEFAULT_REGRESSION_SLICES,
    splits: Mapping[str, str] | None = None,
    processes: int | None = 1,
) -> tuple[RunDigest, RunDigest]:
    """Read two runs, the baseline first, into the digests :func:`compare_runs` compares.

    A results file given by its path is read once, line by line, and never held (one verdict per baseline
    trial is kept to pair the trials); a run in memory is fed from its lines. Each digest carries its
    file's problems.

    Args:
        baseline: Run A: a :class:`~judgekit.results.RunResults` or a results file's path.
        candidate: Run B, the same way.
        regression_slices: Slice names that put a case in the regression suite (as in the run report).
        splits: Case id to its split from the case set; a ``capability`` or ``regression`` split decides
            the case's suite whatever its slice.
        processes: How many processes read each file given by its path, by byte ranges
            (:mod:`judgekit.reports.run_parts`; the digests are the same whatever the count): 1 (the
            default) this process only, ``None`` chosen by each file's size, 0 one per CPU.

    Returns:
        The two digests, ``b`` fed with ``a`` as its baseline.

    Raises:
        JudgekitError: When a file cannot be read at all.
    """
    names = tuple(regression_slices)
    digests: list[RunDigest] = []
    with paused_gc():
        for source in (baseline, candidate):
            path, lines, problems = source_lines(source)
            digest = RunDigest(
                path.name,
                regression_slices=names,
                splits=splits or {},
                keep_trials=not digests,
                baseline=digests[0] if digests else None,
            )
            count = processes_for(source, processes)
            if count > 1:
                parts, found, _ = read_in_parts(path, digest, digest.part, processes=count)
                for part in parts:
                    digest.merge(part)
                digest.path, digest.problems = path, found
            else:
                for line in lines:
                    digest.add(line)
                digest.path, digest.problems = path, problems()
            digests.append(digest)
    return digests[0], digests[1]
