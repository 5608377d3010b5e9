"""Retirement: which capability tasks have saturated and belong in the regression suite.

A capability task is *saturated* when the agent passed every one of its trials in each of the last R
distinct **releases**, with at least ``min_trials`` trials per release, all graded against the case's
current version. The rules, and why each one is there:

* **A release is an agent, not a file.** The release of a trial is what its run record
  (:class:`judgekit.transcript.RunRecord`) says the agent was: its ``app_version``, ``agent_model``,
  ``prompt_hash`` and ``tool_definitions_hash`` together. Results files of one release pool their trials;
  the same results file given twice (the same run id and trial) counts once. A trial whose run record
  names none of the four belongs to no release and counts toward none: the advice says how many.
* **A version bump restarts the count.** Only trials graded against the case's current version count
  (the case set's version when the report is given the set, otherwise the newest version in the runs);
  a release whose trials of the case were all graded against an older version breaks the streak.
* **Enough trials per release** (default 8, as the seed recommends): one pass of one trial says little
  about a stochastic agent. A release with fewer counted trials breaks the streak, and a task held back
  only by that is listed apart (:attr:`RetirementAdvice.undersampled`) so the team can run more trials.
* **Every trial passes.** An undecided trial (error, insufficient information, not evaluated) is not a
  pass, so it breaks the streak like a failure.
* **The last R releases.** Releases are ordered by their first appearance in the runs given (earlier
  files first); a task not run in one of the last R releases is not saturated.

:func:`retirement_advice` computes it; ``judgekit report`` shows it and ``judgekit cases retire`` moves the
saturated cases to the regression split.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from judgekit.results import CaseRef, ResultLine, RunResults
from judgekit.transcript import RunRecord
from judgekit.verdict import FrozenModel, Verdict

__all__ = [
    "DEFAULT_MIN_TRIALS",
    "DEFAULT_RELEASES",
    "ReleaseTally",
    "RetirementAdvice",
    "RetirementSuggestion",
    "RetirementTallies",
    "release_key",
    "retirement_advice",
    "retirement_lines",
]

DEFAULT_RELEASES = 3
"""R: distinct releases in a row in which a capability task must pass every trial to be retired."""

DEFAULT_MIN_TRIALS = 8
"""Trials per release a capability task needs (each a pass) for that release to count toward retirement."""

ReleaseKey = tuple[str | None, str | None, str | None, str | None]
"""``(app_version, agent_model, prompt_hash, tool_definitions_hash)`` of a run record."""


class ReleaseTally(FrozenModel):
    """One task in one release, as far as retirement is concerned.

    Attributes:
        release: The release's label (its app version, or what its run record names).
        passes: Trials of the task in that release, graded against its current version, that passed.
        trials: Trials of the task in that release graded against its current version (0 or more).
        counts: True when this release counts toward retirement (``trials >= min_trials`` and every one
            passed).
        why_not: Why it does not count (``"fewer than 8 trials at v2"``, ``"7/8 passed"``, ``"not run"``,
            ``"graded against v1 only (the case is v2: ...)"``); ``None`` when it counts.
    """

    release: str
    passes: int
    trials: int
    counts: bool
    why_not: str | None = None

    @property
    def text(self) -> str:
        """``"1.4.0: 8/8"``, ``"1.4.0: 7/8"``, ``"1.4.0: 5/5, too few trials"``, ``"1.4.0: not run"``..."""
        if self.counts or (self.trials and self.passes < self.trials):
            return f"{self.release}: {self.passes}/{self.trials}"
        if self.trials:  # every trial passed, but too few of them
            return f"{self.release}: {self.passes}/{self.trials}, too few trials"
        return f"{self.release}: {self.why_not}"


class RetirementSuggestion(FrozenModel):
    """A capability task, with its record over the last R releases.

    Attributes:
        case_id: The task.
        version: The case version whose trials counted.
        history: Per release considered (oldest first), ``"release: passes/trials"`` or why it did not count.
        releases: The last R releases, oldest first, with the task's tally in each.
        reason: One sentence: why the task is (or is not yet) saturated. ``judgekit cases retire`` writes
            it into the case file.
    """

    case_id: str
    version: int
    history: tuple[str, ...]
    releases: tuple[ReleaseTally, ...]
    reason: str


class RetirementAdvice(FrozenModel):
    """Which capability tasks to move to the regression suite, and on what evidence.

    Attributes:
        required_releases: R: distinct releases in a row in which a task must pass every trial (``< 1``:
            retirement disabled).
        min_trials: Trials per release a task needs for that release to count.
        releases: The distinct releases in the runs given, oldest first (labels).
        runs: Distinct runs (run ids) given, this one included.
        suggestions: Saturated capability tasks, by id.
        undersampled: Capability tasks that passed every counted trial in each of the last R releases but
            had fewer than ``min_trials`` trials in at least one: run more trials before retiring them.
        blocked: Only when the cases were asked for by id: each asked-for capability task that is neither
            saturated nor undersampled, with the release that stopped it.
        notes: What limits the advice: too few releases, trials with no release, runs given twice.
    """

    required_releases: int
    min_trials: int
    releases: tuple[str, ...] = ()
    runs: int = 0
    suggestions: tuple[RetirementSuggestion, ...] = ()
    undersampled: tuple[RetirementSuggestion, ...] = ()
    blocked: tuple[RetirementSuggestion, ...] = ()
    notes: tuple[str, ...] = ()


def release_key(run: RunRecord | None) -> ReleaseKey | None:
    """The release a trial's agent belongs to, from its run record; ``None`` when it names nothing.

    >>> release_key(RunRecord(app_version="1.4.0", agent_model="gpt-4o"))
    ('1.4.0', 'gpt-4o', None, None)
    >>> release_key(RunRecord()) is None
    True
    """
    if run is None:
        return None
    key = (
        run.app_version or None,
        run.agent_model or None,
        run.prompt_hash or None,
        run.tool_definitions_hash or None,
    )
    return None if key == (None, None, None, None) else key


def _labels(keys: Sequence[ReleaseKey]) -> dict[ReleaseKey, str]:
    """A short label per release: its app version when that alone tells it apart, else every field named."""
    by_version: dict[str | None, int] = defaultdict(int)
    for key in keys:
        by_version[key[0]] += 1
    out: dict[ReleaseKey, str] = {}
    for key in keys:
        app, model, prompt, tools = key
        if app is not None and by_version[app] == 1:
            out[key] = app
            continue
        parts = [app] if app else []
        parts += [
            f"{name} {value[:12]}"
            for name, value in (("model", model), ("prompt", prompt), ("tools", tools))
            if value
        ]
        out[key] = ", ".join(parts)
    return out


@dataclass
class _Tally:
    """Trials of one case in one release, by the case version they were graded against."""

    passes: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    trials: dict[int, int] = field(default_factory=lambda: defaultdict(int))


def retirement_advice(
    runs: Sequence[RunResults],
    *,
    is_capability: Callable[[CaseRef], bool],
    current_versions: Mapping[str, int] | None = None,
    required_releases: int = DEFAULT_RELEASES,
    min_trials: int = DEFAULT_MIN_TRIALS,
    cases: Iterable[str] | None = None,
) -> RetirementAdvice:
    """Find the saturated capability tasks in a series of runs.

    Args:
        runs: Results files, oldest first (the run being reported last). Trials given more than once (the
            same run id, case and trial) count once.
        is_capability: Whether a case (its newest reference in the runs) is in the capability suite; only
            those can be retired.
        current_versions: Case id to its current version (the case set's); default the newest version of
            each case in the runs.
        required_releases: R (``< 1`` disables retirement: no suggestions, a note says so).
        min_trials: Trials per release (each must pass) for a release to count; at least 1.
        cases: Only these case ids (default every capability case in the runs); the tasks among them that
            are not saturated are listed in ``blocked`` with their tallies, and an asked-for id that is not
            a capability task in the runs is named in ``notes``.

    Returns:
        The advice. Never raises on the runs' content; what limits it is in ``notes``.

    Raises:
        ValueError: When ``min_trials`` is below 1 (a programming error; the CLI checks its option).
    """
    if min_trials < 1:
        raise ValueError(f"min_trials must be at least 1 (got {min_trials})")
    tallies = RetirementTallies()
    for results in runs:
        for line in results.lines:
            tallies.add(line)
    return tallies.advice(
        is_capability=is_capability,
        current_versions=current_versions,
        required_releases=required_releases,
        min_trials=min_trials,
        cases=cases,
    )


class RetirementTallies:
    """What retirement advice needs from result lines, fed one line at a time (oldest run first).

    Keeps, per case and release, the trials and passes by case version, and one ``(run id, case id,
    trial)`` entry per trial (a trial given twice counts once): :func:`retirement_advice` is this fed
    every line of its runs, then :meth:`advice`.
    """

    def __init__(self) -> None:
        """Start with no trials."""
        self.seen: set[tuple[str, str, int]] = set()
        self.repeated = 0
        # each run id and release key maps to its first copy, which every later trial's entry shares:
        # a worker's tallies pickle each once (pickle writes an object it has written as a reference)
        self.run_ids: dict[str, str] = {}
        self.order: dict[ReleaseKey, ReleaseKey] = {}
        self.tallies: dict[tuple[str, ReleaseKey], _Tally] = defaultdict(_Tally)
        self.newest: dict[str, CaseRef] = {}
        self.no_release: dict[str, int] = defaultdict(int)

    def add(self, line: ResultLine) -> None:
        """Count one trial (a repeat of a trial already counted only raises the repeat count)."""
        run_id = line.run_id
        run_id = self.run_ids.get(run_id, run_id)
        ident = (run_id, line.case.id, line.trial)
        if ident in self.seen:
            self.repeated += 1
            return
        self.seen.add(ident)
        self.run_ids.setdefault(run_id, run_id)
        self.newest[line.case.id] = line.case
        key = release_key(line.run)
        if key is None:
            self.no_release[run_id] += 1
            return
        key = self.order.setdefault(key, key)
        _count(self.tallies[(line.case.id, key)], line)

    def merge(self, later: RetirementTallies) -> None:
        """Add the tallies of lines that come after this one's, counted from a copy of this one's ``seen``.

        The later tallies must have started with (a copy of) this one's ``seen`` set, so that they counted
        a trial seen here as a repeat: then the merged tallies are those of one pass over both.
        """
        self.seen |= later.seen
        self.repeated += later.repeated
        for run_id in later.run_ids:
            self.run_ids.setdefault(run_id, run_id)
        for key in later.order:
            self.order.setdefault(key, key)
        for cell, tally in later.tallies.items():
            mine = self.tallies[cell]
            for version, n in tally.trials.items():
                mine.trials[version] += n
            for version, n in tally.passes.items():
                mine.passes[version] += n
        self.newest.update(later.newest)
        for run_id, n in later.no_release.items():
            self.no_release[run_id] += n

    def advice(
        self,
        *,
        is_capability: Callable[[CaseRef], bool],
        current_versions: Mapping[str, int] | None = None,
        required_releases: int = DEFAULT_RELEASES,
        min_trials: int = DEFAULT_MIN_TRIALS,
        cases: Iterable[str] | None = None,
    ) -> RetirementAdvice:
        """The advice from the trials counted (the arguments are :func:`retirement_advice`'s).

        Raises:
            ValueError: When ``min_trials`` is below 1 (a programming error; the CLI checks its option).
        """
        if min_trials < 1:
            raise ValueError(f"min_trials must be at least 1 (got {min_trials})")
        return _advice(
            self,
            is_capability=is_capability,
            current_versions=current_versions,
            required_releases=required_releases,
            min_trials=min_trials,
            cases=cases,
        )


def _advice(
    counted: RetirementTallies,
    *,
    is_capability: Callable[[CaseRef], bool],
    current_versions: Mapping[str, int] | None,
    required_releases: int,
    min_trials: int,
    cases: Iterable[str] | None,
) -> RetirementAdvice:
    repeated, run_ids, order = counted.repeated, counted.run_ids, counted.order
    tallies, newest, no_release = counted.tallies, counted.newest, counted.no_release
    releases = list(order)
    labels = _labels(releases)
    notes: list[str] = []
    if repeated:
        notes.append(
            f"{repeated} trial(s) were given more than once (the same run id, case and trial, e.g. one "
            "results file passed twice) and counted once"
        )
    if no_release:
        shown = ", ".join(f"{rid} ({n})" for rid, n in sorted(no_release.items()))
        notes.append(
            f"{sum(no_release.values())} trial(s) record no agent version (their run record names no "
            "app_version, agent_model, prompt_hash or tool_definitions_hash) and count toward no "
            f"release: {shown}"
        )
    base = {
        "required_releases": required_releases,
        "min_trials": min_trials,
        "releases": tuple(labels[k] for k in releases),
        "runs": len(run_ids),
    }
    if required_releases < 1:
        return RetirementAdvice(**base, notes=(*notes, "retirement disabled"))
    if len(releases) < required_releases:
        shown = ", ".join(labels[k] for k in releases) or "none"
        notes.append(
            f"retirement needs {required_releases} distinct releases (agent versions in the run records); "
            f"the runs given show {len(releases)} ({shown}): give results of earlier releases with --history"
        )
        return RetirementAdvice(**base, notes=tuple(notes))
    last = releases[-required_releases:]
    wanted = set(cases) if cases is not None else None
    suggestions: list[RetirementSuggestion] = []
    undersampled: list[RetirementSuggestion] = []
    blocked: list[RetirementSuggestion] = []
    if wanted is not None:
        missing = sorted(c for c in wanted if c not in newest or not is_capability(newest[c]))
        if missing:
            notes.append(
                "not capability tasks of the runs given (not run, or in the regression suite): "
                + ", ".join(missing)
            )
    for case_id in sorted(newest):
        if (wanted is not None and case_id not in wanted) or not is_capability(newest[case_id]):
            continue
        version = (current_versions or {}).get(case_id, newest[case_id].version)
        row = tuple(_release_tally(labels[k], tallies.get((case_id, k)), version, min_trials) for k in last)
        history = tuple(t.text for t in row)
        shown = "; ".join(history)
        if all(t.counts for t in row):
            reason = (
                f"saturated: passed every trial in each of the last {required_releases} releases at "
                f"v{version} ({shown}; at least {min_trials} trials each)"
            )
            into = suggestions
        elif all(t.counts or (t.trials and t.passes == t.trials) for t in row):
            reason = f"passed every trial, but with fewer than {min_trials} trials in a release ({shown})"
            into = undersampled
        elif wanted is not None:
            stop = next(t for t in reversed(row) if not t.counts)
            reason = f"not saturated: {stop.text} ({shown})"
            into = blocked
        else:
            continue
        into.append(
            RetirementSuggestion(
                case_id=case_id, version=version, history=history, releases=row, reason=reason
            )
        )
    return RetirementAdvice(
        **base,
        suggestions=tuple(suggestions),
        undersampled=tuple(undersampled),
        blocked=tuple(blocked),
        notes=tuple(notes),
    )


def _count(tally: _Tally, line: ResultLine) -> None:
    tally.trials[line.case.version] += 1
    if line.verdict is Verdict.PASS:
        tally.passes[line.case.version] += 1


def _release_tally(label: str, tally: _Tally | None, version: int, min_trials: int) -> ReleaseTally:
    """How one release counts for a case at ``version``."""
    if tally is None:
        return ReleaseTally(release=label, passes=0, trials=0, counts=False, why_not="not run")
    trials, passes = tally.trials.get(version, 0), tally.passes.get(version, 0)
    if trials == 0:
        others = ", ".join(f"v{v}" for v in sorted(tally.trials))
        return ReleaseTally(
            release=label,
            passes=0,
            trials=0,
            counts=False,
            why_not=f"graded against {others} only (the case is v{version}: a version bump restarts "
            "the count)",
        )
    if passes < trials:
        return ReleaseTally(
            release=label, passes=passes, trials=trials, counts=False, why_not=f"{passes}/{trials} passed"
        )
    if trials < min_trials:
        return ReleaseTally(
            release=label,
            passes=passes,
            trials=trials,
            counts=False,
            why_not=f"fewer than {min_trials} trials at v{version}",
        )
    return ReleaseTally(release=label, passes=passes, trials=trials, counts=True)


def retirement_lines(advice: RetirementAdvice) -> list[str]:
    """The advice as plain lines (paragraphs, and ``"- "`` list items), for every renderer.

    A blank string separates paragraphs. The text says what counted (releases, trials per release) so a
    reader can tell "not saturated" from "not enough evidence".
    """
    releases = ", ".join(advice.releases[-advice.required_releases :]) if advice.required_releases > 0 else ""
    out: list[str] = []
    if advice.suggestions:
        out.append(
            f"Capability tasks that passed every trial (at least {advice.min_trials} per release) in each of "
            f"the last {advice.required_releases} releases ({releases}); move them to the regression suite "
            "with judgekit cases retire and replace them with fresh failures:"
        )
        out.append("")
        out.extend(f"- {s.case_id}: {' · '.join(s.history)}" for s in advice.suggestions)
    elif advice.required_releases > 0 and len(advice.releases) >= advice.required_releases:
        out.append(
            f"No capability task passed every trial (at least {advice.min_trials} per release) in each of "
            f"the last {advice.required_releases} releases ({releases})."
        )
    if advice.undersampled:
        out += [
            "",
            f"Passed every trial, but with fewer than {advice.min_trials} trials in a release (run "
            "more trials before retiring them):",
            "",
        ]
        out.extend(f"- {s.case_id}: {' · '.join(s.history)}" for s in advice.undersampled)
    if advice.notes:
        if out:
            out.append("")
        out.extend(f"- {note}" for note in advice.notes)
    return out
