"""The run report from a results file read once, line by line: memory flat in the number of trials.

:func:`judgekit.reports.run_model.build_run_report` takes a :class:`~judgekit.results.RunResults` whose
lines are all in memory (about 40 KB per trial for lines as ``judgekit grade`` writes them).
:func:`stream_run_report` gives exactly the same :class:`~judgekit.reports.run_model.RunReport`, problems
included, from the file itself: a :class:`RunAccumulator` is fed one validated line at a time and keeps
only what each section needs, never the lines.

What it keeps, and how it grows:

* per task (case id): its verdict counts, its first case reference, its case versions, its quality sum;
  per (case, release): the retirement tallies; per criterion and fingerprint: the judged-check counts;
  per case and per criterion: the judge cost. These grow with tasks, not trials.
* per trial: one ``(case id, trial)`` entry to find duplicates (:class:`~judgekit.results.ResultStream`)
  and one ``(run id, case id, trial)`` entry for retirement's repeated trials, about 200 bytes each.
* per trial that did not pass: its :class:`~judgekit.reports.run_model.TrialReason` (the report lists
  every one), a few hundred bytes each.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

import numpy as np

from judgekit.calibration.corrected import corrections_from_counts, count_judged_criteria, latest_records
from judgekit.calibration.records import CalibrationRecord
from judgekit.caseset import HOLDOUT_GRADING_KEY
from judgekit.errors import Problem
from judgekit.reports.retirement import DEFAULT_MIN_TRIALS, DEFAULT_RELEASES, RetirementTallies
from judgekit.reports.run_model import (
    _CODE,
    _STATES,
    DEFAULT_REGRESSION_SLICES,
    CostTally,
    FailureTally,
    RunInfo,
    RunReport,
    TrialReason,
    _fingerprint_text,
    _groups,
    _in_regression,
    _summarise,
    _Table,
    _undecided_cases,
    build_headline,
    in_capability_suite,
)
from judgekit.results import CaseRef, ResultLine, ResultStream, paused_gc
from judgekit.stats import UndecidedPolicy, check_undecided_policy
from judgekit.verdict import Verdict, deciding_check, verdict_reason

__all__ = ["RunAccumulator", "StreamedRun", "stream_history", "stream_run_report"]


@dataclass
class StreamedRun:
    """What reading one results file for its report found, besides the report's own figures.

    Attributes:
        path: The file read.
        problems: Its located problems, exactly those :func:`judgekit.results.read_results` reports.
        line_holdouts: Case ids its lines recorded as holdouts (``grading["holdouts"]``).
        cases: Every case id with a valid line, with its number of trials (holdouts included).
        dropped: Holdout case id to trials left out of the report (those in ``drop``).
    """

    path: Path
    problems: list[Problem] = field(default_factory=list)
    line_holdouts: set[str] = field(default_factory=set)
    cases: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)


class RunAccumulator:
    """Every figure of a run report, accumulated one result line at a time.

    Feed it the run's valid lines in file order with :meth:`add`, then call :meth:`report`. The report is
    the one :func:`~judgekit.reports.run_model.build_run_report` computes from the same lines.
    """

    def __init__(
        self,
        *,
        known_cases: Mapping[str, tuple[int, tuple[str, ...]]] | None,
        drop: frozenset[str],
        calibration_records: Sequence[CalibrationRecord],
        retirement: RetirementTallies,
    ) -> None:
        """Start an empty run.

        Args:
            known_cases: The case set's ``id -> (version, policy_refs)``, or ``None`` (no case set).
            drop: Case ids whose trials are left out entirely (holdouts not asked for).
            calibration_records: The records for the corrected criterion rates (empty: none).
            retirement: Retirement tallies, already fed the history runs (oldest first).
        """
        self.known = known_cases
        self.drop = drop
        self.records = calibration_records
        self.fingerprints = latest_records(calibration_records) if calibration_records else {}
        self.retirement = retirement
        self.seen = StreamedRun(path=Path())
        self.unknown: Counter[str] = Counter()
        self.stale: set[str] = set()
        self.index: dict[str, int] = {}
        self.cases: list[CaseRef] = []
        self.counts: list[list[int]] = []
        self.versions: list[set[int]] = []
        self.q_sum: list[float] = []
        self.q_n: list[int] = []
        self.trials = 0
        self.check_counts: Counter[Verdict] = Counter()
        self.distinct_fps: list[Mapping[str, object]] = []
        self.last_fp: Mapping[str, object] | None = None
        self.run_ids: dict[str, None] = {}
        self.jk_versions: set[str] = set()
        self.agent_models: set[str] = set()
        self.app_versions: set[str] = set()
        self.cost_total = 0.0
        self.cost_seen = False
        self.cost_unpriced = 0
        self.cost_reason: str | None = None
        self.untrusted_total = 0
        self.untrusted_trials = 0
        self.policies: set[str] = set()
        self.failures = FailureTally()
        self.costs = CostTally()
        self.criteria: dict[tuple[str, str], list[int]] = {}
        self.reasons: list[tuple[str, int, Verdict, str | None, str | None, str | None, str]] = []

    def add(self, line: ResultLine) -> None:
        """Count one valid result line (lines of dropped or unknown cases only as such)."""
        cid = line.case.id
        seen = self.seen
        seen.cases[cid] += 1
        holdouts = line.grading.get(HOLDOUT_GRADING_KEY)
        if isinstance(holdouts, list):
            seen.line_holdouts.update(str(v) for v in holdouts)
        if cid in self.drop:
            seen.dropped[cid] += 1
            return
        self.retirement.add(line)
        if self.known is not None:
            known = self.known.get(cid)
            if known is None:
                self.unknown[cid] += 1
                return
            if known[0] != line.case.version:
                self.stale.add(f"'{cid}' (results v{line.case.version}, set v{known[0]})")
        self._add_trial(line)

    def _add_trial(self, line: ResultLine) -> None:
        cid = line.case.id
        t = self.index.get(cid)
        if t is None:
            t = self.index[cid] = len(self.cases)
            self.cases.append(line.case)
            self.counts.append([0] * len(_STATES))
            self.versions.append(set())
            self.q_sum.append(0.0)
            self.q_n.append(0)
        self.counts[t][_CODE[line.verdict]] += 1
        self.versions[t].add(line.case.version)
        self.trials += 1
        if line.quality is not None:
            self.q_sum[t] += line.quality
            self.q_n[t] += 1
        for check in line.checks:
            self.check_counts[check.verdict] += 1
        fp = line.judge_fingerprint
        if fp is not None and fp is not self.last_fp and fp != self.last_fp:
            if all(fp != s for s in self.distinct_fps):
                self.distinct_fps.append(fp)
            self.last_fp = fp
        self.run_ids[line.run_id] = None
        self.jk_versions.add(line.judgekit_version)
        if line.run is not None:
            if line.run.agent_model:
                self.agent_models.add(line.run.agent_model)
            if line.run.app_version:
                self.app_versions.add(line.run.app_version)
        if line.cost_usd is not None:
            self.cost_total += line.cost_usd
            self.cost_seen = True
        elif line.cost_unknown_reason is not None:
            self.cost_unpriced += 1
            self.cost_reason = self.cost_reason or line.cost_unknown_reason
            self.cost_seen = True
        self.untrusted_total += line.untrusted_verdicts
        self.untrusted_trials += line.untrusted_verdicts > 0
        self.policies.add(line.untrusted_policy or "unknown")
        self.costs.add(line)
        if self.fingerprints:
            count_judged_criteria(self.criteria, line, self.fingerprints)
        if line.verdict is not Verdict.PASS:
            self.failures.add(line)
            decider = deciding_check(line.verdict, line.reason, line.checks)
            # a plain tuple per trial that did not pass (the TrialReason models are built at the end)
            self.reasons.append(
                (
                    cid,
                    line.trial,
                    line.verdict,
                    decider.check_id if decider is not None else None,
                    decider.layer if decider is not None else None,
                    decider.category.value if decider is not None and decider.category is not None else None,
                    verdict_reason(line.verdict, line.reason, line.checks) or "no reason recorded",
                )
            )

    def report(
        self,
        *,
        file: str,
        path: str | PathLike[str],
        problems_in: Sequence[Problem],
        policy: UndecidedPolicy,
        k: int | None,
        retire_after: int,
        retire_min_trials: int,
        regression_slices: Iterable[str],
        splits: Mapping[str, str],
    ) -> RunReport:
        """The report of the lines fed.

        Args:
            file: The results file's name, for the report's run information.
            path: The results file, for the problems' messages.
            problems_in: The file's own problems (they open the report's problems).
            policy: The undecided-trial policy.
            k: Largest k asked for, or ``None``.
            retire_after: R, distinct releases for retirement.
            retire_min_trials: Trials per release for it to count toward retirement; at least 1.
            regression_slices: Slice names that put a case in the regression suite.
            splits: Case id to its split, from the case set.

        Returns:
            The report, equal to :func:`~judgekit.reports.run_model.build_run_report`'s on the same lines.
        """
        path = Path(path)
        problems: list[str] = [str(p) for p in problems_in]
        notes: list[str] = []
        if self.unknown:
            shown = ", ".join(
                f"'{cid}' ({n} trial{'s' if n != 1 else ''})" for cid, n in sorted(self.unknown.items())
            )
            problems.append(
                f"{path}: trials of cases not in the case set are left out: {shown}; "
                "grade them with the set they belong to, or add the cases"
            )
        if self.known is not None and self.stale:
            notes.append(
                "some trials were graded against another version of their case: "
                + ", ".join(sorted(self.stale))
            )
        n_tasks = len(self.cases)
        ids = [case.id for case in self.cases]
        counts = (
            np.array(self.counts, dtype=np.int64) if n_tasks else np.zeros((0, len(_STATES)), dtype=np.int64)
        )
        table = _Table.from_counts(ids, counts)
        mixed = sorted(cid for cid, vs in zip(ids, self.versions, strict=True) if len(vs) > 1)
        if mixed:
            vmap = dict(zip(ids, self.versions, strict=True))
            problems.append(
                f"{path}: trials of one case were graded against different case versions: "
                + ", ".join(f"'{cid}' (v{', v'.join(str(v) for v in sorted(vmap[cid]))})" for cid in mixed)
                + "; re-grade them against one version"
            )
        n_per_task = counts.sum(axis=1) if n_tasks else np.zeros(0, dtype=np.int64)
        max_trials = int(n_per_task.max()) if n_tasks else 0
        min_trials = int(n_per_task.min()) if n_tasks else 0
        if k is not None and k < 1:
            problems.append(f"k must be at least 1 (got {k}); reporting k up to {max_trials}")
            k = None
        if k is not None and k > max_trials:
            problems.append(
                f"k={k} is larger than the trial count ({max_trials} trial{'s' if max_trials != 1 else ''} "
                f"per task at most): pass^k is undefined beyond it; reporting k up to {max_trials}"
            )
            k = max_trials
        k_max = k if k is not None else max_trials
        if min_trials < max_trials:
            notes.append(
                f"tasks have between {min_trials} and {max_trials} trials; at each k, tasks with fewer "
                "than k "
                + ("decided trials" if policy == "exclude" else "trials")
                + " are left out of pass^k and counted as excluded"
            )
        quality = (np.array(self.q_sum, dtype=np.float64), np.array(self.q_n, dtype=np.int64))
        reg_names = frozenset(s.lower() for s in regression_slices)
        suite_of = {cid: split for cid, split in splits.items() if split in ("capability", "regression")}
        is_reg = np.array([_in_regression(case, suite_of, reg_names) for case in self.cases], dtype=bool)
        suites = []
        for name, mask in (("capability", ~is_reg), ("regression", is_reg)):
            if mask.any():
                suites.append(_summarise(name, table, mask, k_max, quality, policy=policy))
        slices = _groups([c.slice or c.category for c in self.cases], table, k_max, quality, policy=policy)
        categories = _groups([c.category for c in self.cases], table, k_max, quality, policy=policy)
        severities = _groups([c.severity for c in self.cases], table, k_max, quality, policy=policy)
        per_state = counts.sum(axis=0) if n_tasks else np.zeros(len(_STATES), dtype=np.int64)
        fingerprints = sorted({_fingerprint_text(fp) for fp in self.distinct_fps})
        if len(fingerprints) > 1:
            notes.append(
                f"{len(fingerprints)} different judge fingerprints graded this run: its trials were not all "
                "graded the same way"
            )
        undecided_cases = _undecided_cases(table)
        undecided = sum(row.undecided for row in undecided_cases)
        if undecided:
            how = (
                "undecided='fail' counts each as a trial that did not pass (it stays in n)"
                if policy == "fail"
                else "undecided='exclude' leaves each out of its task's trials, so pass^k is over decided "
                "trials and a task with fewer than k decided trials is left out at that k"
            )
            notes.append(
                f"{undecided} trial(s) in {len(undecided_cases)} case(s) are undecided (error, insufficient "
                f"information or not evaluated): {how}; the bounds in parentheses count them all as failures "
                "or all as passes"
            )
        run = RunInfo(
            file=file,
            run_ids=tuple(self.run_ids),
            judgekit_versions=tuple(sorted(self.jk_versions)),
            agent_models=tuple(sorted(self.agent_models)),
            app_versions=tuple(sorted(self.app_versions)),
            judge_fingerprints=tuple(fingerprints),
            tasks=n_tasks,
            trials=self.trials,
            trials_per_task=(min_trials, max_trials),
            cost_usd=self.cost_total if self.cost_seen else None,
            cost_unpriced_trials=self.cost_unpriced,
            cost_unknown_reason=self.cost_reason,
            untrusted_verdicts=self.untrusted_total,
            trials_with_untrusted=self.untrusted_trials,
            untrusted_policies=tuple(sorted(self.policies)),
        )
        if self.untrusted_total:
            notes.append(
                f"{self.untrusted_total} verdict(s) in {self.untrusted_trials} trial(s) rest on a judge "
                "that no calibration record trusts (graded with --untrusted "
                f"{', '.join(sorted(self.policies))}): those trials' verdicts are not calibrated evidence"
            )
        known = self.known
        reasons = [
            TrialReason(
                case_id=cid,
                trial=trial,
                verdict=verdict,
                check_id=check_id,
                layer=layer,
                category=cat,
                reason=why,
            )
            for cid, trial, verdict, check_id, layer, cat, why in sorted(
                self.reasons, key=lambda r: (r[2] is not Verdict.FAIL, r[0], r[1])
            )
        ]
        report = RunReport(
            run=run,
            k_max=k_max,
            undecided_policy=policy,
            verdicts={state: int(per_state[_CODE[state]]) for state in _STATES},
            undecided_cases=undecided_cases,
            check_verdicts={state: self.check_counts[state] for state in _STATES},
            suites=tuple(suites),
            slices=slices,
            categories=categories,
            severities=severities,
            failures=self.failures.rows(),
            retirement=self.retirement.advice(
                is_capability=in_capability_suite(splits, reg_names),
                current_versions={cid: v for cid, (v, _) in known.items()} if known else None,
                required_releases=retire_after,
                min_trials=retire_min_trials,
            ),
            corrected=tuple(corrections_from_counts(self.criteria, self.records)) if self.records else (),
            cost=self.costs.summary(),
            problems=tuple(problems),
            notes=tuple(notes),
            trial_reasons=tuple(reasons),
        )
        return report.model_copy(update={"headline": build_headline(report)})


def stream_history(paths: Sequence[str | PathLike[str]]) -> tuple[RetirementTallies, list[list[Problem]]]:
    """Feed earlier runs (oldest first) to retirement tallies, one line at a time.

    Args:
        paths: The earlier results files.

    Returns:
        The tallies, and each file's problems (as :func:`judgekit.results.read_results` reports them).

    Raises:
        JudgekitError: When a file cannot be read at all.
    """
    tallies = RetirementTallies()
    problems: list[list[Problem]] = []
    with paused_gc():
        for path in paths:
            stream = ResultStream(path)
            for line in stream:
                tallies.add(line)
            problems.append(stream.problems)
    return tallies, problems


def stream_run_report(
    path: str | PathLike[str],
    *,
    undecided: UndecidedPolicy,
    k: int | None = None,
    retirement: RetirementTallies | None = None,
    retire_after: int = DEFAULT_RELEASES,
    retire_min_trials: int = DEFAULT_MIN_TRIALS,
    regression_slices: Iterable[str] = DEFAULT_REGRESSION_SLICES,
    known_cases: Mapping[str, tuple[int, tuple[str, ...]]] | None = None,
    splits: Mapping[str, str] | None = None,
    calibration_records: Sequence[CalibrationRecord] = (),
    drop: frozenset[str] = frozenset(),
) -> tuple[RunReport, StreamedRun]:
    """The report of a results file, read once and never held in memory.

    The report equals ``build_run_report(read_results(path), ...)`` with the same arguments (after the
    trials of the ``drop`` cases are left out of the results), byte for byte in every rendering.

    Args:
        path: The results file.
        undecided: The undecided-trial policy (see :func:`~judgekit.reports.run_model.build_run_report`).
        k: Largest k for pass^k and pass@k; default the largest trial count of a task.
        retirement: Retirement tallies already fed the earlier runs (:func:`stream_history`); default none.
        retire_after: R, distinct releases for retirement (``< 1`` disables it).
        retire_min_trials: Trials per release for it to count toward retirement; at least 1.
        regression_slices: Slice names that put a case in the regression suite.
        known_cases: The case set's ``id -> (version, policy_refs)``, when a case set is given.
        splits: Case id to its split, from the case set.
        calibration_records: Calibration records for the corrected criterion rates.
        drop: Case ids whose trials are left out (holdouts not asked for by name).

    Returns:
        The report, and what the reading found (problems, the holdouts the lines recorded, the trials
        per case, the trials dropped).

    Raises:
        JudgekitError: When the file cannot be read at all.
        ValueError: When ``undecided`` is not a policy (a programming error).
    """
    policy = check_undecided_policy(undecided)
    acc = RunAccumulator(
        known_cases=known_cases,
        drop=drop,
        calibration_records=calibration_records,
        retirement=retirement if retirement is not None else RetirementTallies(),
    )
    stream = ResultStream(path)
    with paused_gc():
        for line in stream:
            acc.add(line)
        seen = acc.seen
        seen.path = stream.path
        seen.problems = stream.problems
        report = acc.report(
            file=stream.path.name,
            path=stream.path,
            problems_in=stream.problems,
            policy=policy,
            k=k,
            retire_after=retire_after,
            retire_min_trials=retire_min_trials,
            regression_slices=regression_slices,
            splits=splits or {},
        )
    return report, seen
