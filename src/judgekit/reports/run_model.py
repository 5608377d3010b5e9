"""The run report: what one results file says about an agent, computed once, rendered many ways.

:func:`report_run` turns a results file (and, for retirement advice, earlier runs) into a
:class:`RunReport`, a versioned, JSON-serialisable model. Renderers (``run_markdown``, ``run_html``,
``run_json``) only format it; nothing here prints or reads files.

Rules the numbers follow (see ``docs/runs.md``):

* **Verdict states are never folded.** A trial counts as a success only when its verdict is ``pass``;
  ``fail`` is a failure; ``error``, ``insufficient_information`` and ``not_evaluated`` are *undecided*.
  How an undecided trial counts is the caller's explicit choice, :data:`judgekit.stats.UndecidedPolicy`
  (``undecided="fail"``: a trial that did not pass; ``"exclude"``: left out of the task's trials), recorded
  in :attr:`RunReport.undecided_policy`. Beside each pass^k and pass@k the report gives the bounds reached
  by counting every undecided trial as a failure (low) or as a pass (high), so the reader sees how much
  they could move it. Every state's count is shown, and every case with an undecided trial is listed with
  its counts (:attr:`RunReport.undecided_cases`).
* **pass^k** is the mean over tasks of C(c, k) / C(n, k) (c passes of n counted trials,
  :func:`judgekit.stats.pass_k_curve`); a task with fewer than k counted trials (fewer trials, or, under
  ``"exclude"``, fewer decided trials) is left out of pass^k at that k and counted as excluded. **pass@k**
  is Chen et al.'s unbiased estimator. k runs from 1 to the largest trial count (or the ``k`` asked for).
* **Intervals**: the Wilson 95 % interval of the trial pass rate (counted trials; trials of one task are
  correlated, so with several trials per task it is narrower than the task-level truth) and of the share of
  tasks that passed every counted trial (tasks are independent units). Both follow the undecided policy.
* **Suites**: a case whose ``split`` (given through ``splits``) is ``capability`` or ``regression`` goes to
  that suite; otherwise a task belongs to the *regression* suite when its case's category is
  ``regression`` or its slice is one of the regression slice names (default ``regression``,
  ``regressions``), and every other task is in the *capability* suite. The two are reported separately
  and never blended into one headline.
* **Retirement** (:mod:`judgekit.reports.retirement`): a capability task that passed every trial, at
  least ``retire_min_trials`` of them, in each of the last R distinct releases (agent versions from the
  run records of this run and the earlier runs given), graded against the case's current version, is
  suggested for the regression suite.
"""

from __future__ import annotations

import math
import operator
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any, BinaryIO, Literal, TypeAlias, cast, overload

import numpy as np
from pydantic import Field, GetCoreSchemaHandler
from pydantic_core import CoreSchema, core_schema

from judgekit.calibration.corrected import (
    CriterionCorrection,
    corrections_from_counts,
    count_judged_criteria,
    latest_records,
)
from judgekit.calibration.records import CalibrationRecord
from judgekit.caseset import HOLDOUT_GRADING_KEY
from judgekit.errors import Problem, did_you_mean
from judgekit.io.documents import open_input
from judgekit.reports.retirement import (
    DEFAULT_MIN_TRIALS,
    DEFAULT_RELEASES,
    RetirementAdvice,
    RetirementSuggestion,
    RetirementTallies,
)
from judgekit.reports.run_parts import processes_for, read_in_parts
from judgekit.results import (
    CaseRef,
    FastResultLine,
    LineLocation,
    ResultLine,
    ResultStream,
    RunResults,
    paused_gc,
    read_located_line,
)
from judgekit.stats import (
    Proportion,
    UndecidedPolicy,
    check_undecided_policy,
    counted_trials,
    pass_k_curve,
    wilson_mean_interval,
)
from judgekit.verdict import (
    REASON_SEPARATOR,
    FrozenModel,
    GateFinding,
    Verdict,
    deciding_gate,
    failed_gates,
    reason_parts,
)

__all__ = [
    "DEFAULT_REGRESSION_SLICES",
    "REPORT_SCHEMA_VERSION",
    "TOO_FEW_SHOWN",
    "CostRow",
    "CostSummary",
    "CostTally",
    "FailureRow",
    "FailureTally",
    "GroupSummary",
    "Headline",
    "KPoint",
    "ResultSource",
    "RetirementAdvice",
    "RetirementSuggestion",
    "RunAccumulator",
    "RunInfo",
    "RunReading",
    "RunReport",
    "TrialReason",
    "TrialReasons",
    "UndecidedCase",
    "build_headline",
    "cost_summary",
    "in_capability_suite",
    "outcomes_from_counts",
    "report_run",
    "source_lines",
    "task_outcomes",
    "task_rate",
    "trial_reason",
    "trial_reasons",
    "unlabelled_judge_verdicts",
]

REPORT_SCHEMA_VERSION = 6
"""Version of the :class:`RunReport` JSON schema (2: the undecided policy and the undecided cases; 3:
retirement counts distinct releases with a minimum of trials each; 4: every rate carries its bounds under
the undecided trials, ``undecided``, ``undecided_low`` and ``undecided_high``; 5: the ``headline``, each
trial's one-line reason in ``trial_reasons``, and each pass^k / pass@k point's interval, ``ci_low`` and
``ci_high``, and the tasks with too few trials, ``too_few_trials``; 6: each trial reason lists every gate
that did not pass with its own evidence, ``gates``, and the contract's part, ``contract_reason``, and its
``reason`` joins them all)."""

TOO_FEW_SHOWN = 10
"""Task ids a pass^k point names among the tasks left out for too few trials (all are counted)."""

DEFAULT_REGRESSION_SLICES = ("regression", "regressions")
"""Slice names that put a case in the regression suite (besides ``category: regression``)."""

_STATES: tuple[Verdict, ...] = tuple(Verdict)
_CODE = {v: i for i, v in enumerate(_STATES)}
_PASS = _CODE[Verdict.PASS]
_FAIL = _CODE[Verdict.FAIL]


def _interval(successes: int, n: int, *, what: str, bounds: tuple[int, int, int] | None = None) -> Proportion:
    """A Wilson interval, with the rate's bounds under the undecided trials when ``bounds`` is given.

    ``bounds`` is ``(certain, possible, total)``: the units (trials or tasks) that pass whatever the
    undecided trials turn out to be, those that would pass if every undecided trial passed, and all the
    units, undecided ones included. ``what`` names the units ``n`` counts, for the undefined reason.
    """
    if bounds is not None and bounds[2] > 0:
        certain, possible, total = bounds
        return Proportion.wilson(
            successes,
            n,
            what=what,
            undecided=possible - certain,
            undecided_low=certain / total,
            undecided_high=possible / total,
        )
    return Proportion.wilson(successes, n, what=what)


class KPoint(FrozenModel):
    """pass^k or pass@k at one k.

    Attributes:
        k: The number of trials (``>= 1``).
        value: The statistic in [0, 1] under the report's undecided policy, over the tasks with at least k
            counted trials, or ``None`` when no task has (see ``reason``).
        low: The value when every undecided trial counts as a failure (over tasks with at least k trials);
            equal to ``value`` under ``undecided="fail"``. ``None`` when no task has k trials.
        high: The value when every undecided trial counts as a pass (a sensitivity bound, never a policy).
            ``None`` when no task has k trials.
        tasks_used: Tasks with at least k counted trials (all trials under ``"fail"``, decided trials under
            ``"exclude"``).
        tasks_excluded: Tasks left out at this k because they have fewer than k counted trials (undefined
            there, never counted as 0 or 1).
        reason: Why ``value`` is ``None``, when it is.
        ci_low: Lower limit of the 95 % interval of ``value`` over the ``tasks_used`` tasks (the Wilson
            interval at ``value``, conservative for a mean of per-task values in [0, 1]:
            :func:`judgekit.stats.wilson_mean_interval`); ``None`` when ``value`` is.
        ci_high: Its upper limit; ``None`` when ``value`` is.
        too_few_trials: Up to :data:`TOO_FEW_SHOWN` ids of the tasks left out at this k because they have
            fewer than k counted trials (fewest first, then by id); ``tasks_excluded`` counts them all.
    """

    k: int
    value: float | None
    low: float | None
    high: float | None
    tasks_used: int
    tasks_excluded: int
    reason: str | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    too_few_trials: tuple[str, ...] = ()


class GroupSummary(FrozenModel):
    """Summary of a set of tasks (a suite, a slice, a category, a severity).

    Attributes:
        name: The group's name (``(none)`` for tasks without a value).
        tasks: Number of tasks.
        trials: Number of trials.
        verdicts: Trials by verdict state (every state present).
        undecided_trials: Trials whose verdict is undecided (``error``, ``insufficient_information``,
            ``not_evaluated``).
        trial_pass_rate: Passes over counted trials (all trials under ``undecided="fail"``, decided trials
            under ``"exclude"``), with its Wilson interval; undefined (``None``) when no trial counts.
        tasks_all_pass: Tasks whose every counted trial passed, over the tasks with at least one counted
            trial, with its Wilson interval.
        pass_hat: pass^k for k = 1..k_max.
        pass_at: pass@k for k = 1..k_max.
        mean_quality: Mean quality score of the trials that have one, or ``None``.
        quality_trials: How many trials have a quality score.
    """

    name: str
    tasks: int
    trials: int
    verdicts: dict[Verdict, int]
    undecided_trials: int
    trial_pass_rate: Proportion
    tasks_all_pass: Proportion
    pass_hat: tuple[KPoint, ...]
    pass_at: tuple[KPoint, ...]
    mean_quality: float | None
    quality_trials: int


class FailureRow(FrozenModel):
    """One failure category: the repair queue.

    Attributes:
        category: The failure category (``uncategorised`` for failed checks without one).
        failed_checks: Failed checks in this category.
        trials: Trials with at least one such failed check.
        tasks: Distinct tasks affected.
        example_tasks: Up to five affected task ids, most affected first.
    """

    category: str
    failed_checks: int
    trials: int
    tasks: int
    example_tasks: tuple[str, ...]


class TrialReason(FrozenModel):
    """Why one trial did not pass: every gate that did not pass, with its own evidence.

    Attributes:
        case_id: The case.
        trial: The trial number (1-based).
        verdict: The trial's verdict (``fail`` or an undecided state; never ``pass``).
        check_id: The check that decided the verdict (the first, most severe failed gate of a failed
            trial), or ``None`` when the grading contract's own reason does (an expectation nobody
            decided, an untrusted judge).
        layer: That check's layer, or ``None`` with ``check_id``.
        category: That check's failure category, or ``None``.
        reason: The line (:func:`judgekit.verdict.verdict_reason`): ``contract_reason`` when given, then
            each of ``gates``' lines, joined by `` | ``; never a newline. ``no reason recorded`` when
            nothing says why.
        contract_reason: The grading contract's reason when it is part of the explanation (an undecided
            trial's expectation nobody decided or untrusted judge withheld; a failed trial's only when no
            gate says why); ``""`` otherwise.
        gates: Every gate of the trial that did not pass, each with its own evidence, the ones that
            decided the verdict first (:func:`judgekit.verdict.failed_gates`); empty when none did.
    """

    case_id: str
    trial: int
    verdict: Verdict
    check_id: str | None
    layer: str | None
    category: str | None
    reason: str
    contract_reason: str = ""
    gates: tuple[GateFinding, ...] = ()

    def parts(self) -> tuple[str, ...]:
        """The reason's parts, one per line: the contract's reason (when given), then each gate's line.

        ``reason`` is these joined by :data:`judgekit.verdict.REASON_SEPARATOR`; a trial with nothing to
        say has the one part ``no reason recorded``.
        """
        return reason_parts(self.verdict, self.contract_reason, self.gates) or (self.reason,)


def trial_reason(line: ResultLine) -> TrialReason:
    """The :class:`TrialReason` of one result line that did not pass: the one place a report builds it.

    Args:
        line: The trial's result line (a :class:`~judgekit.results.ResultLine`, or the fast path's line
            with the same attributes); its verdict is not ``pass``.
    """
    policy = line.untrusted_policy
    gates = failed_gates(line.verdict, line.reason, line.checks, untrusted=policy)
    decider = deciding_gate(line.verdict, line.reason, gates)
    parts = reason_parts(line.verdict, line.reason, gates)
    return TrialReason(
        case_id=line.case.id,
        trial=line.trial,
        verdict=line.verdict,
        check_id=decider.check_id if decider is not None else None,
        layer=decider.layer if decider is not None else None,
        category=decider.category.value if decider is not None and decider.category is not None else None,
        reason=REASON_SEPARATOR.join(parts) or "no reason recorded",
        contract_reason=parts[0] if len(parts) > len(gates) else "",
        gates=gates,
    )


ReasonEntry: TypeAlias = (
    "tuple[bool, str, int, Verdict, TrialReason | ResultLine | FastResultLine | LineLocation]"
)
"""One trial of :class:`TrialReasons`: ``(not failed, case id, trial, verdict, where its reason comes from)``;
the first three are its place in the report's order."""


class TrialReasons(Sequence[TrialReason]):
    """Every trial of a run that did not pass, in the report's order, each reason made when it is read.

    A report of 400,000 lines has about 150,000 trials that did not pass, each with its failed gates and
    their evidence (kilobytes apiece): holding them all would be most of the report's memory, and most
    renderings show only the first few (the Markdown and HTML reports show the first groups; only
    ``--format json`` lists every one). So this keeps, per trial, its case id, trial number and verdict,
    and where its reason comes from: the reason itself, the result line in memory, or the line's place in
    the results file (:class:`~judgekit.results.LineLocation`, about 100 bytes), read again, checked and
    decoded when that reason is asked for (:func:`trial_reason` then makes it, the one rule). Reading a
    streamed report's reasons therefore needs its results file as it was: a line that changed since is a
    :class:`~judgekit.errors.LocatedError` naming it. ``tuple(reasons)`` holds them all in memory.

    It is an immutable sequence of :class:`TrialReason` (``len``, indexing, iteration, equality with
    another one or with a tuple of reasons); pydantic validates a sequence of reasons into one and
    writes it as a list of them.

    Args:
        entries: The trials (:data:`ReasonEntry`), already in the report's order.
        path: The results file the :class:`~judgekit.results.LineLocation` entries point into (``None``
            when there are none).

    Example:
        >>> reasons = TrialReasons.of([TrialReason(case_id="c", trial=1, verdict="fail", check_id=None,
        ...                                        layer=None, category=None, reason="no reason recorded")])
        >>> len(reasons), reasons[0].case_id, reasons == (reasons[0],)
        (1, 'c', True)
    """

    __slots__ = ("_entries", "_path")

    def __init__(self, entries: Sequence[ReasonEntry] = (), path: str | PathLike[str] | None = None) -> None:
        self._entries = tuple(entries)
        self._path = Path(path) if path is not None else None

    @classmethod
    def of(cls, reasons: Iterable[TrialReason]) -> TrialReasons:
        """Reasons already made, kept as they are, in the order given."""
        return cls(tuple((r.verdict is not Verdict.FAIL, r.case_id, r.trial, r.verdict, r) for r in reasons))

    def outline(self) -> Iterator[tuple[str, int, Verdict]]:
        """Each trial's ``(case id, trial, verdict)``, in order, without making a reason (lazily)."""
        return ((case, trial, verdict) for _, case, trial, verdict, _ in self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    @overload
    def __getitem__(self, index: int) -> TrialReason: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[TrialReason, ...]: ...

    def __getitem__(self, index: int | slice) -> TrialReason | tuple[TrialReason, ...]:
        if isinstance(index, slice):
            return tuple(self._made(self._entries[index]))
        return next(self._made((self._entries[index],)))

    def __iter__(self) -> Iterator[TrialReason]:
        return self._made(self._entries)

    def _made(self, entries: Sequence[ReasonEntry]) -> Iterator[TrialReason]:
        """The reasons of ``entries``, made one at a time (the results file opened once, when needed)."""
        handle: BinaryIO | None = None
        try:
            for *_, where in entries:
                if isinstance(where, TrialReason):
                    yield where
                    continue
                if isinstance(where, LineLocation):
                    if self._path is None:  # pragma: no cover - a located entry always comes with its file
                        raise ValueError("a trial reason's line location needs the results file")
                    if handle is None:
                        handle = open_input(self._path, "results")
                    yield trial_reason(cast(ResultLine, read_located_line(handle, self._path, where)))
                    continue
                yield trial_reason(cast(ResultLine, where))
        finally:
            if handle is not None:
                handle.close()

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if isinstance(other, TrialReasons | tuple | list):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"TrialReasons({len(self)} trial(s))"

    def __reduce__(self) -> tuple[type[TrialReasons], tuple[tuple[ReasonEntry, ...], Path | None]]:
        return (type(self), (self._entries, self._path))

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        """Validate a sequence of reasons (or a :class:`TrialReasons`); write it as a list of reasons."""
        items = core_schema.list_schema(handler.generate_schema(TrialReason))
        from_items = core_schema.no_info_after_validator_function(cls.of, items)
        return core_schema.json_or_python_schema(
            json_schema=from_items,
            python_schema=core_schema.union_schema([core_schema.is_instance_schema(cls), from_items]),
            serialization=core_schema.plain_serializer_function_ser_schema(list, return_schema=items),
        )


class Headline(FrozenModel):
    """The report's first line: the verdict a reader takes away, and the figures behind it.

    Attributes:
        status: ``met`` (every threshold given was met), ``missed`` (at least one was not), ``unchecked``
            (no threshold given), or ``no_trials``.
        verdict: The status in words (``Misses 1 of 2 threshold checks: ...``), the line's first sentence.
        text: The line itself, the same in every format: the verdict, each suite's pass^1 and pass^k
            (k = the report's largest) with their 95 % intervals and task counts, and how many trials were
            errors or otherwise undecided and how they were counted.
        thresholds: The thresholds checked, as the options were written (empty for ``unchecked``).
        misses: One line per missed threshold and suite (:func:`judgekit.reports.run_gate.check_thresholds`).
        input_problems: How many problems the input had (the rest is still reported; exit code 2).
    """

    status: Literal["met", "missed", "unchecked", "no_trials"]
    verdict: str
    text: str
    thresholds: tuple[str, ...] = ()
    misses: tuple[str, ...] = ()
    input_problems: int = 0


class UndecidedCase(FrozenModel):
    """One case with at least one undecided trial, and how its trials split.

    Attributes:
        case_id: The case.
        trials: All its trials.
        passed: Trials whose verdict is ``pass``.
        failed: Trials whose verdict is ``fail``.
        undecided: Trials with no decided verdict (the sum of the next three, ``>= 1``).
        error: Trials whose grader could not run.
        insufficient_information: Trials the evidence did not decide.
        not_evaluated: Trials whose layers were absent or skipped.
    """

    case_id: str
    trials: int
    passed: int
    failed: int
    undecided: int
    error: int
    insufficient_information: int
    not_evaluated: int


class RunInfo(FrozenModel):
    """What was run and graded.

    Attributes:
        file: The results file's name.
        run_ids: Run ids found in it.
        judgekit_versions: judgekit versions that graded its trials.
        agent_models: Agent models recorded in the run records.
        app_versions: Agent application versions recorded.
        judge_fingerprints: Distinct judge fingerprints (as JSON texts); more than one means mixed graders.
        tasks: Distinct tasks.
        trials: Trials reported.
        trials_per_task: Smallest and largest number of trials of a task.
        cost_usd: Total judge cost in US dollars of the trials whose cost is known, or ``None`` when no
            line recorded one; a partial total when ``cost_unpriced_trials`` > 0 (never shown alone then).
        cost_unpriced_trials: Trials whose judge cost is unknown (an unpriced judge model); >= 0.
        cost_unknown_reason: Why, from the first such trial; ``None`` when every recorded cost is known.
        untrusted_verdicts: Checks, over every trial, whose verdict counted although their judge is
            untrusted (only under an opt-in ``--untrusted count`` or ``fail_only``); >= 0.
        trials_with_untrusted: Trials with at least one such check.
        untrusted_policies: The untrusted-judge policies the trials were graded under (``unknown`` for
            lines that did not record one).
        unlabelled_verdicts: Judge verdicts (``pass`` or ``fail``), over every trial, on a criterion text
            the judge's calibration never labelled (:func:`unlabelled_judge_verdicts`); >= 0. Verdicts whose
            answer is unknown (a record that predates criterion hashes, a line graded before judgekit
            recorded it) are not counted.
        trials_with_unlabelled: Trials with at least one such verdict.
    """

    file: str
    run_ids: tuple[str, ...]
    judgekit_versions: tuple[str, ...]
    agent_models: tuple[str, ...]
    app_versions: tuple[str, ...]
    judge_fingerprints: tuple[str, ...]
    tasks: int
    trials: int
    trials_per_task: tuple[int, int]
    cost_usd: float | None
    cost_unpriced_trials: int = 0
    cost_unknown_reason: str | None = None
    untrusted_verdicts: int = 0
    trials_with_untrusted: int = 0
    untrusted_policies: tuple[str, ...] = ()
    unlabelled_verdicts: int = 0
    trials_with_unlabelled: int = 0


class CostRow(FrozenModel):
    """What the judgments of one group (the run, a case, a criterion) cost.

    Attributes:
        key: The case id or check id (``criterion:...``); ``run`` for the whole run.
        judgments: Judged criterion checks (each over all its samples and cascade stages); >= 0.
        prompt_tokens: Prompt tokens of their judge replies (replayed ones as recorded).
        completion_tokens: Completion tokens of their judge replies.
        usd: Their cost in US dollars; ``None`` when any one is unpriced (never a partial sum).
        known_usd: The cost of the priced judgments only (equal to ``usd`` when none is unpriced).
        unpriced: Judgments whose cost is unknown.
        replayed: Judge replies replayed from the cassette (they cost nothing now).
        cached_tokens: How many of ``prompt_tokens`` the provider read from its prompt cache (0 when it
            reported none, and for lines written before judgekit recorded them).
    """

    key: str
    judgments: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usd: float | None = 0.0
    known_usd: float = 0.0
    unpriced: int = 0
    replayed: int = 0
    cached_tokens: int = 0


class CostSummary(FrozenModel):
    """Judge tokens and cost per run, per case and per criterion, from the checks' judge notes.

    Attributes:
        run: The whole run.
        cases: Per case id, in id order.
        criteria: Per criterion check id, in id order.
        unknown_reason: Why a judgment's cost is unknown (the first one's reason); ``None`` when all are
            priced.
    """

    run: CostRow
    cases: tuple[CostRow, ...] = ()
    criteria: tuple[CostRow, ...] = ()
    unknown_reason: str | None = None


_EXACT_BITS = 1074
"""Every finite float is an integer multiple of ``2**-1074`` (the smallest subnormal)."""


def exact_units(value: float) -> int:
    """``value`` as an exact integer count of ``2**-1074``: integers sum exactly, in any order.

    Args:
        value: A finite float (or an int).

    Returns:
        ``value * 2**1074``, exactly.

    Examples:
        >>> exact_units(0.5) == 2**1073, exact_units(3) == 3 * 2**1074
        (True, True)
    """
    if type(value) is int:
        return value << _EXACT_BITS
    numerator, denominator = value.as_integer_ratio()
    return numerator << (_EXACT_BITS + 1 - denominator.bit_length())


def exact_float(units: int) -> float:
    """The float nearest to ``units * 2**-1074``: the exactly rounded sum (:func:`math.fsum`'s value).

    Args:
        units: A sum of :func:`exact_units` values.

    Returns:
        The correctly rounded float (Python's integer division rounds correctly); ``inf`` or ``-inf``
        beyond the largest float, as a running float sum would give.

    Examples:
        >>> exact_float(exact_units(0.1) + exact_units(0.2) + exact_units(0.3)) == math.fsum([0.1, 0.2, 0.3])
        True
    """
    try:
        return units / (1 << _EXACT_BITS)
    except OverflowError:
        return math.inf if units > 0 else -math.inf


class CostTally:
    """Judge tokens and cost per run, case and criterion, added one result line at a time.

    The one accumulation behind :func:`cost_summary` and the streamed report. Each judge note is added to
    its case's cell and to its criterion's cell; the run's totals are the criteria's summed at the end.
    A cell holds the counts (judgments, tokens, unpriced and replayed judgments) and the dollars, kept
    exactly as integer counts of ``2**-1074`` (:func:`exact_units`; every finite float is one) and
    rounded once at the end (:func:`exact_float`: the exactly rounded sum, :func:`math.fsum`'s value).
    Everything it holds is an integer, so the order of the additions cannot change a total: the same
    lines give the same totals whichever way they come (from memory or from the file, whole or in parts
    whose cells are added together field by field). It never keeps the lines.

    Attributes:
        cases: ``case id -> cell``, a cell being ``[judgments, prompt tokens, completion tokens,
            unpriced, replayed, cached tokens, priced dollars in units of 2**-1074]``.
        criteria: ``criterion check id -> cell``, the same cells per criterion.
        reason: The first unpriced judgment's reason in file order (``None``: none given).
    """

    def __init__(self) -> None:
        self.cases: dict[str, list[int]] = {}
        self.criteria: dict[str, list[int]] = {}
        self.reason: str | None = None

    def add(self, line: ResultLine) -> None:
        """Add the ``cost`` of every check's judge note of one line."""
        scan_checks(line, costs=self)

    def add_cost(self, cid: str, criterion: str, cost: Mapping[str, object]) -> None:
        """Add the ``cost`` of one judge note (check ``criterion`` of case ``cid``): tokens, dollars."""
        get = cost.get
        usd = get("usd")
        priced = type(usd) is float or type(usd) is int  # JSON data: no int or float subclass but bool
        if not priced and self.reason is None and isinstance(get("unknown_reason"), str):
            self.reason = str(cost["unknown_reason"])
        case = self.cases.get(cid)
        if case is None:
            case = self.cases[cid] = [0] * _COST_FIELDS
        each = self.criteria.get(criterion)
        if each is None:
            each = self.criteria[criterion] = [0] * _COST_FIELDS
        case[0] += 1
        each[0] += 1
        for name, index in _COST_COUNTS:
            value = get(name)
            if type(value) is int:
                case[index] += value
                each[index] += value
        if priced:
            if usd:
                units = exact_units(usd)  # type: ignore[arg-type]
                case[6] += units
                each[6] += units
        else:
            case[3] += 1
            each[3] += 1

    def merge(self, later: CostTally) -> None:
        """Add the tally of the lines that come after this one's (another part of the file): integers add."""
        for mine, theirs in ((self.cases, later.cases), (self.criteria, later.criteria)):
            for key, cell in theirs.items():
                have = mine.get(key)
                mine[key] = list(cell) if have is None else [a + b for a, b in zip(have, cell, strict=True)]
        if self.reason is None:
            self.reason = later.reason

    def summary(self) -> CostSummary | None:
        """The totals; ``None`` when no check recorded a cost."""
        if not self.cases:
            return None
        # column sums, integers: any grouping gives the same totals
        run = [sum(column) for column in zip(*self.criteria.values(), strict=True)]

        def make(key: str, t: list[int]) -> CostRow:
            usd = exact_float(t[6])
            # validated: pydantic 2's model_construct is slower than validating these nine plain fields
            # (4.2 against 3.0 us a row)
            return CostRow(
                key=key,
                judgments=t[0],
                prompt_tokens=t[1],
                completion_tokens=t[2],
                usd=None if t[3] else usd,
                known_usd=usd,
                unpriced=t[3],
                replayed=t[4],
                cached_tokens=t[5],
            )

        cases, criteria = self.cases, self.criteria
        return CostSummary(
            run=make("run", run),
            cases=tuple(make(k, cases[k]) for k in sorted(cases)),
            criteria=tuple(make(k, criteria[k]) for k in sorted(criteria)),
            unknown_reason=self.reason,
        )


_COST_FIELDS = 7
"""The fields of a :class:`CostTally` cell."""

_COST_COUNTS = (("prompt_tokens", 1), ("completion_tokens", 2), ("replayed", 4), ("cached_tokens", 5))
"""The integer counts of a judge note's ``cost`` and their places in a :class:`CostTally` cell."""


def cost_summary(lines: Sequence[ResultLine]) -> CostSummary | None:
    """Sum the ``cost`` of every check's judge note; ``None`` when no check recorded one.

    A judge note is a check's ``note`` evidence whose data has ``fingerprint``; its ``cost`` holds
    ``prompt_tokens``, ``completion_tokens``, ``usd`` (``None``: unpriced), ``unknown_reason`` and
    ``replayed``.
    """
    tally = CostTally()
    for line in lines:
        tally.add(line)
    return tally.summary()


def scan_checks(
    line: ResultLine, *, costs: CostTally | None = None, verdicts: Counter[Verdict] | None = None
) -> int:
    """One pass over a line's checks and their notes: what the report counts per check.

    The one place these rules live (the report reads each line's checks once):

    * each check's verdict is counted in ``verdicts``;
    * a check's judge note is its first ``note`` evidence whose data has ``fingerprint``; its ``cost`` (a
      dict) is added to ``costs`` (:meth:`CostTally.add_cost`);
    * a judge verdict on an unlabelled criterion is a ``rubric`` check with verdict ``pass`` or ``fail``
      and a ``note`` whose data says ``criterion_labelled: false``.

    Args:
        line: A result line (a :class:`~judgekit.results.FastResultLine` reads alike).
        costs: Receives the judge notes' costs (``None``: not counted).
        verdicts: Receives one count per check verdict (``None``: not counted).

    Returns:
        How many of the line's checks are judge verdicts on an unlabelled criterion, >= 0.
    """
    cid = line.case.id
    unlabelled = 0
    for check in line.checks:
        verdict = check.verdict
        if verdicts is not None:
            verdicts[verdict] += 1
        evidence = check.evidence
        if not evidence:
            continue
        judged = check.layer == "rubric" and (verdict is Verdict.PASS or verdict is Verdict.FAIL)
        noted = costs is None
        said = False
        for item in evidence:
            data = item.data
            if item.kind != "note" or not isinstance(data, dict):
                continue
            if not noted and "fingerprint" in data:
                noted = True
                cost = data.get("cost")
                if isinstance(cost, dict):
                    costs.add_cost(cid, check.check_id, cost)  # type: ignore[union-attr]
            if judged and data.get("criterion_labelled") is False:
                said = True
            if noted and (said or not judged):
                break
        unlabelled += said
    return unlabelled


def unlabelled_judge_verdicts(line: ResultLine) -> int:
    """A trial's judge verdicts (``pass`` or ``fail``) on a criterion text its calibration never labelled.

    A judged check's note (the ``note`` evidence with the judge's ``fingerprint``) says so with
    ``criterion_labelled: false`` (:mod:`judgekit.graders.rubric`); ``true`` or ``null`` (unknown: a
    record that predates criterion hashes) and lines graded before judgekit recorded it are not counted.

    Args:
        line: A result line (a :class:`~judgekit.results.FastResultLine` reads alike).

    Returns:
        How many of its checks are such verdicts, >= 0.
    """
    return scan_checks(line)


class RunReport(FrozenModel):
    """Everything a run report shows.

    Attributes:
        schema_version: :data:`REPORT_SCHEMA_VERSION`.
        kind: Always ``run_report``.
        run: What was run.
        k_max: Largest k reported.
        undecided_policy: How undecided trials count in pass^k, pass@k and every rate of the report
            (:data:`judgekit.stats.UndecidedPolicy`), as the caller chose it.
        verdicts: Trials by verdict state, every state present.
        undecided_cases: Every case with an undecided trial, most undecided trials first (then by id).
        check_verdicts: Checks by verdict state, every state present.
        suites: The capability and regression suites, separately (a suite with no tasks is left out).
        slices: Per slice.
        categories: Per case category.
        severities: Per severity.
        failures: Failure categories, most frequent first.
        retirement: Retirement advice.
        cost: Judge tokens and cost per run, case and criterion (:func:`cost_summary`); ``None`` when no
            check recorded a cost (no judge layer, or lines written before judgekit recorded it).
        corrected: Per judged criterion whose judge has a calibration record (when records were given):
            the judge's observed pass share and the pass rate corrected for its misses and false alarms
            (Lee et al.), with its interval and its bounds under the undecided checks; empty otherwise.
        problems: Problems found in the input, as ``file:line: message`` texts (the rest is still
            reported).
        notes: Things the reader should know about the numbers (mixed graders, excluded tasks).
        headline: The plain verdict line (:class:`Headline`); its thresholds are filled in by
            :func:`judgekit.reports.run_gate.with_thresholds`.
        trial_reasons: Every trial that did not pass with its one-line reason: failed trials first, then
            the undecided ones, each by case id and trial.
    """

    schema_version: int = REPORT_SCHEMA_VERSION
    kind: Literal["run_report"] = "run_report"
    run: RunInfo
    k_max: int
    undecided_policy: UndecidedPolicy
    verdicts: dict[Verdict, int]
    undecided_cases: tuple[UndecidedCase, ...] = ()
    check_verdicts: dict[Verdict, int]
    suites: tuple[GroupSummary, ...]
    slices: tuple[GroupSummary, ...]
    categories: tuple[GroupSummary, ...]
    severities: tuple[GroupSummary, ...]
    failures: tuple[FailureRow, ...]
    retirement: RetirementAdvice
    corrected: tuple[CriterionCorrection, ...] = ()
    cost: CostSummary | None = None
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = Field(default_factory=tuple)
    headline: Headline | None = None
    trial_reasons: TrialReasons = TrialReasons()


# --------------------------------------------------------------------------- columnar core


class _Table:
    """Per-task verdict counts: one row per task (in first-seen order), one column per verdict state."""

    def __init__(self, ids: list[str], counts: np.ndarray) -> None:
        self.ids = ids
        self.index = {cid: t for t, cid in enumerate(ids)}
        self.counts = counts

    @classmethod
    def from_counts(cls, ids: list[str], counts: np.ndarray) -> _Table:
        """A table of per-task verdict counts already made (rows in ``ids`` order)."""
        return cls(ids, counts)

    @property
    def n_tasks(self) -> int:
        return len(self.ids)


def _trial_counts(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per task: all trials, passes and undecided trials."""
    n_all = counts.sum(axis=1)
    passes = counts[:, _PASS]
    return n_all, passes, n_all - passes - counts[:, _FAIL]


def _ci(value: float | None, tasks: int) -> dict[str, float | None]:
    """The 95 % interval of a pass^k / pass@k value over its tasks (``None`` limits when undefined)."""
    if value is None or tasks < 1:
        return {"ci_low": None, "ci_high": None}
    low, high = wilson_mean_interval(min(1.0, max(0.0, value)), tasks)
    return {"ci_low": low, "ci_high": high}


def _too_few(counted: np.ndarray, ids: Sequence[str], k: int) -> tuple[str, ...]:
    """Ids of up to :data:`TOO_FEW_SHOWN` tasks with fewer than k counted trials, fewest first."""
    short = np.flatnonzero(counted < k)
    if not short.size:
        return ()
    ranked = sorted(short.tolist(), key=lambda t: (int(counted[t]), ids[t]))
    return tuple(ids[t] for t in ranked[:TOO_FEW_SHOWN])


def _k_points(
    counts: np.ndarray, k_max: int, policy: UndecidedPolicy, ids: Sequence[str] = ()
) -> tuple[tuple[KPoint, ...], tuple[KPoint, ...]]:
    """pass^k and pass@k for k = 1..k_max under the policy, with their undecided bounds and intervals.

    Every figure comes from :func:`judgekit.stats.pass_k_curve` (running products, O(k_max) vector steps
    per curve): the value under the policy, the low bound with every undecided trial a failure, the high
    bound with every undecided trial a pass. ``ids`` (the tasks' ids, in the rows' order) names the tasks
    with too few trials at each k; without it none is named (they are still counted).
    """
    if k_max < 1:
        return (), ()
    n_all, passes, undecided = _trial_counts(counts)
    counted, _ = counted_trials(n_all, passes, undecided_counts=undecided, undecided=policy)
    value = pass_k_curve(n_all, passes, k_max, undecided_counts=undecided, undecided=policy)
    low = (
        value
        if policy == "fail"
        else pass_k_curve(n_all, passes, k_max, undecided_counts=undecided, undecided="fail")
    )
    high = pass_k_curve(
        n_all, passes + undecided, k_max, undecided_counts=np.zeros_like(undecided), undecided="fail"
    )
    hats: list[KPoint] = []
    ats: list[KPoint] = []
    for v, lo, hi in zip(value, low, high, strict=True):
        common = {
            "k": v.k,
            "tasks_used": v.tasks_used,
            "tasks_excluded": v.tasks_left_out,
            "reason": v.reason,
            "too_few_trials": _too_few(counted, ids, v.k) if len(ids) and v.tasks_left_out else (),
        }
        hats.append(
            KPoint(
                value=v.pass_hat, low=lo.pass_hat, high=hi.pass_hat, **_ci(v.pass_hat, v.tasks_used), **common
            )
        )
        ats.append(
            KPoint(value=v.pass_at, low=lo.pass_at, high=hi.pass_at, **_ci(v.pass_at, v.tasks_used), **common)
        )
    return tuple(hats), tuple(ats)


def _summarise(
    name: str,
    table: _Table,
    task_mask: np.ndarray,
    k_max: int,
    quality: tuple[np.ndarray, np.ndarray],
    *,
    policy: UndecidedPolicy,
) -> GroupSummary:
    counts = table.counts[task_mask]
    per_state = counts.sum(axis=0)
    n_all, passes, undecided = _trial_counts(counts)
    n, c = counted_trials(n_all, passes, undecided_counts=undecided, undecided=policy)
    counted_tasks = n > 0
    all_pass = int(np.sum((c == n) & counted_tasks))
    ids = [table.ids[t] for t in np.flatnonzero(task_mask)]
    hats, ats = _k_points(counts, k_max, policy, ids)
    q_sum, q_n = quality
    q_total = float(q_sum[task_mask].sum())
    q_count = int(q_n[task_mask].sum())
    return GroupSummary(
        name=name,
        tasks=int(counts.shape[0]),
        trials=int(n_all.sum()),
        verdicts={state: int(per_state[_CODE[state]]) for state in _STATES},
        undecided_trials=int(undecided.sum()),
        trial_pass_rate=_interval(
            int(c.sum()),
            int(n.sum()),
            what="counted trials",
            bounds=(int(passes.sum()), int((passes + undecided).sum()), int(n_all.sum())),
        ),
        tasks_all_pass=_interval(
            all_pass,
            int(counted_tasks.sum()),
            what="tasks with a counted trial",
            bounds=(
                int(np.sum((passes == n_all) & (n_all > 0))),
                int(np.sum((passes + undecided == n_all) & (n_all > 0))),
                int(np.sum(n_all > 0)),
            ),
        ),
        pass_hat=hats,
        pass_at=ats,
        mean_quality=q_total / q_count if q_count else None,
        quality_trials=q_count,
    )


def _groups(
    values: list[str | None],
    table: _Table,
    k_max: int,
    quality: tuple[np.ndarray, np.ndarray],
    *,
    policy: UndecidedPolicy,
) -> tuple[GroupSummary, ...]:
    arr = np.array([v if v is not None else "(none)" for v in values], dtype=object)
    names = sorted({str(v) for v in arr}, key=lambda s: (s == "(none)", s))
    if names == ["(none)"]:
        return ()
    return tuple(_summarise(name, table, arr == name, k_max, quality, policy=policy) for name in names)


def _undecided_cases(table: _Table) -> tuple[UndecidedCase, ...]:
    if not table.n_tasks:
        return ()
    n_all, passes, undecided = _trial_counts(table.counts)
    rows = [
        UndecidedCase(
            case_id=table.ids[t],
            trials=int(n_all[t]),
            passed=int(passes[t]),
            failed=int(table.counts[t, _FAIL]),
            undecided=int(undecided[t]),
            error=int(table.counts[t, _CODE[Verdict.ERROR]]),
            insufficient_information=int(table.counts[t, _CODE[Verdict.INSUFFICIENT_INFORMATION]]),
            not_evaluated=int(table.counts[t, _CODE[Verdict.NOT_EVALUATED]]),
        )
        for t in np.flatnonzero(undecided > 0)
    ]
    rows.sort(key=lambda r: (-r.undecided, r.case_id))
    return tuple(rows)


# --------------------------------------------------------------------------- task outcomes


def task_outcomes(lines: Iterable[ResultLine]) -> dict[str, tuple[int, int, Verdict]]:
    """Per task: ``(passes, trials, outcome)``.

    The outcome follows the gate order: ``fail`` when any trial failed, else ``pass`` when every trial
    passed, else the most severe undecided state present (``error`` > ``insufficient_information`` >
    ``not_evaluated``). A task passing 5 of 8 trials is a ``fail``.
    """
    counts: dict[str, Counter[Verdict]] = defaultdict(Counter)
    for line in lines:
        counts[line.case.id][line.verdict] += 1
    return outcomes_from_counts(counts)


def outcomes_from_counts(counts: Mapping[str, Counter[Verdict]]) -> dict[str, tuple[int, int, Verdict]]:
    """:func:`task_outcomes` from each task's verdict counts (in the tasks' order)."""
    out: dict[str, tuple[int, int, Verdict]] = {}
    for case_id, c in counts.items():
        total = sum(c.values())
        if c[Verdict.FAIL]:
            outcome = Verdict.FAIL
        elif c[Verdict.PASS] == total:
            outcome = Verdict.PASS
        elif c[Verdict.ERROR]:
            outcome = Verdict.ERROR
        elif c[Verdict.INSUFFICIENT_INFORMATION]:
            outcome = Verdict.INSUFFICIENT_INFORMATION
        else:
            outcome = Verdict.NOT_EVALUATED
        out[case_id] = (c[Verdict.PASS], total, outcome)
    return out


# --------------------------------------------------------------------------- building the report


def task_rate(outcomes: Sequence[Verdict]) -> Proportion:
    """The share of tasks passing, over the decided ones, with its bounds under the undecided ones.

    Args:
        outcomes: Each task's outcome (:func:`task_outcomes`): ``pass``, ``fail`` or an undecided state.

    Returns:
        Passing tasks over decided tasks with its Wilson interval (undefined with no decided task), and
        ``undecided_low`` / ``undecided_high`` over every task with the undecided ones all failing / all
        passing (undefined with no task).

    Examples:
        >>> r = task_rate([Verdict.PASS, Verdict.FAIL, Verdict.ERROR, Verdict.PASS])
        >>> round(r.rate, 3), r.undecided, r.undecided_low, r.undecided_high
        (0.667, 1, 0.5, 0.75)
    """
    passed = sum(o is Verdict.PASS for o in outcomes)
    failed = sum(o is Verdict.FAIL for o in outcomes)
    total = len(outcomes)
    return _interval(passed, passed + failed, what="decided tasks", bounds=(passed, total - failed, total))


def _in_regression(case: CaseRef, suite_of: Mapping[str, str], regression_slices: frozenset[str]) -> bool:
    """True when a case is in the regression suite: by its split, else its category or slice."""
    if case.id in suite_of:
        return suite_of[case.id] == "regression"
    return case.category == "regression" or (
        case.slice is not None and case.slice.lower() in regression_slices
    )


def in_capability_suite(
    splits: Mapping[str, str], regression_slices: Iterable[str] = DEFAULT_REGRESSION_SLICES
) -> Callable[[CaseRef], bool]:
    """The report's suite rule as a predicate: is a case (as a result line names it) a capability task?

    The same rule :func:`report_run` splits suites by (a ``capability`` or ``regression`` split
    decides; otherwise ``category: regression`` or a regression slice name means regression); a case
    with a ``holdout`` split is in neither. ``judgekit cases retire`` uses it so that it retires exactly what
    ``judgekit report`` suggests.

    Args:
        splits: Case id to its split, from the case set.
        regression_slices: Slice names that put a case in the regression suite.

    Returns:
        A predicate on :class:`~judgekit.results.CaseRef`.

    Examples:
        >>> rule = in_capability_suite({"a": "regression", "h": "holdout"})
        >>> [rule(CaseRef(id=i, version=1, slice="policy_edge")) for i in ("a", "h", "b")]
        [False, False, True]
    """
    suite_of = {cid: split for cid, split in splits.items() if split in ("capability", "regression")}
    names = frozenset(s.lower() for s in regression_slices)
    return lambda case: splits.get(case.id) != "holdout" and not _in_regression(case, suite_of, names)


class FailureTally:
    """The failure-category table, added one result line at a time (the report's and the stream's)."""

    def __init__(self) -> None:
        self.checks: Counter[str] = Counter()
        self.trials: Counter[str] = Counter()
        self.tasks: dict[str, Counter[str]] = defaultdict(Counter)

    def add(self, line: ResultLine) -> None:
        """Count the failed checks of one trial that did not pass (a passing trial counts nothing)."""
        if line.verdict is Verdict.PASS:
            return
        seen: set[str] = set()
        for check in line.checks:
            if check.verdict is Verdict.FAIL:
                name = check.category.value if check.category is not None else "uncategorised"
                self.checks[name] += 1
                if name not in seen:
                    seen.add(name)
                    self.trials[name] += 1
                    self.tasks[name][line.case.id] += 1

    def merge(self, later: FailureTally) -> None:
        """Add the tally of the lines that come after this one's (another part of the file)."""
        self.checks.update(later.checks)
        self.trials.update(later.trials)
        for name, tasks in later.tasks.items():
            self.tasks[name].update(tasks)

    def rows(self) -> tuple[FailureRow, ...]:
        """The categories, most trials first (then most failed checks, then by name)."""
        rows = [
            FailureRow(
                category=name,
                failed_checks=self.checks[name],
                trials=self.trials[name],
                tasks=len(self.tasks[name]),
                example_tasks=tuple(
                    cid for cid, _ in sorted(self.tasks[name].items(), key=lambda kv: (-kv[1], kv[0]))[:5]
                ),
            )
            for name in self.checks
        ]
        rows.sort(key=lambda r: (-r.trials, -r.failed_checks, r.category))
        return tuple(rows)


@dataclass
class RunReading:
    """What reading one run's lines for its report found, besides the report's own figures.

    Attributes:
        path: The results file read.
        problems: Its located problems, exactly those :func:`judgekit.results.read_results` reports.
        line_holdouts: Case ids its lines recorded as holdouts (``grading["holdouts"]``).
        cases: Every case id with a valid line, with its number of trials (holdouts included).
        dropped: Holdout case id to trials left out of the report (those in ``drop``).
        history_problems: Each history run's problems, in the order given (empty without history).
    """

    path: Path
    problems: list[Problem] = field(default_factory=list)
    line_holdouts: set[str] = field(default_factory=set)
    cases: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    history_problems: list[list[Problem]] = field(default_factory=list)


_REPORT_ORDER = operator.itemgetter(0, 1, 2)
"""A :data:`ReasonEntry`'s place in the report: failed trials first, then by case id and trial."""


class RunAccumulator:
    """Every figure of a run report, accumulated one result line at a time.

    Feed it the run's valid lines in file order with :meth:`add`, then call :meth:`report`. It is the one
    aggregation of a run report: :func:`report_run` feeds it the lines of a
    :class:`~judgekit.results.RunResults` from memory, or of a file as they are read.

    What it keeps, and how it grows:

    * per task (case id): its verdict counts, its first case reference, its case versions, its quality sum;
      per (case, release): the retirement tallies; per criterion and fingerprint: the judged-check counts;
      per case and per criterion: the judge cost. These grow with tasks, not trials.
    * per trial: one ``(run id, case id, trial)`` entry for retirement's repeated trials, about 200 bytes
      (a streamed file's reader keeps one ``(case id, trial)`` entry more, to find duplicates).
    * per trial that did not pass: its :class:`TrialReason` with its failed gates (the report lists every
      one), a few hundred bytes to a few kilobytes each.

    Every sum it keeps is exact, so the lines' order cannot change a figure: counts are integers, and the
    sums of floats (each task's quality, the run's ``cost_usd``, the judge cost per run, case and
    criterion in :class:`CostTally`) are integer counts of ``2**-1074`` (:func:`exact_units`: every finite
    float is one, so the sum is exact), rounded once when the report is built (:func:`exact_float`: the
    exactly rounded sum, :func:`math.fsum`'s value). Accumulators fed the parts of a file, in any split,
    therefore hold what the whole gives once their integer fields are added together.
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
        self.seen = RunReading(path=Path())
        self.unknown: Counter[str] = Counter()
        self.stale: set[str] = set()
        self.index: dict[str, int] = {}
        self.cases: list[CaseRef] = []
        self.counts: list[list[int]] = []
        self.versions: list[set[int]] = []
        self.q_sum: list[int] = []
        self.q_n: list[int] = []
        self.trials = 0
        self.check_counts: Counter[Verdict] = Counter()
        self.distinct_fps: list[Mapping[str, object]] = []
        self.last_fp: Mapping[str, object] | None = None
        self.run_ids: dict[str, None] = {}
        self.jk_versions: set[str] = set()
        self.agent_models: set[str] = set()
        self.app_versions: set[str] = set()
        self.cost_total = 0
        self.cost_seen = False
        self.cost_unpriced = 0
        self.cost_reason: str | None = None
        self.untrusted_total = 0
        self.untrusted_trials = 0
        self.unlabelled_total = 0
        self.unlabelled_trials = 0
        self.policies: set[str] = set()
        self.failures = FailureTally()
        self.costs = CostTally()
        self.criteria: dict[tuple[str, str], list[int]] = {}
        self.reasons: list[ReasonEntry] = []
        self.locate: Callable[[], LineLocation] | None = None

    def add(self, valid: ResultLine | FastResultLine) -> None:
        """Count one valid result line (lines of dropped or unknown cases only as such).

        Args:
            valid: The line, a pydantic :class:`~judgekit.results.ResultLine` or the exact fast path's
                :class:`~judgekit.results.FastResultLine`. Only attributes are read, and the two have the
                same ones with the same values (``tests/test_results_fast.py`` holds them together).
        """
        line = cast(ResultLine, valid)
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
            self.q_sum.append(0)
            self.q_n.append(0)
        self.counts[t][_CODE[line.verdict]] += 1
        self.versions[t].add(line.case.version)
        self.trials += 1
        if line.quality is not None:
            self.q_sum[t] += exact_units(line.quality)
            self.q_n[t] += 1
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
            self.cost_total += exact_units(line.cost_usd)
            self.cost_seen = True
        elif line.cost_unknown_reason is not None:
            self.cost_unpriced += 1
            self.cost_reason = self.cost_reason or line.cost_unknown_reason
            self.cost_seen = True
        self.untrusted_total += line.untrusted_verdicts
        self.untrusted_trials += line.untrusted_verdicts > 0
        unlabelled = scan_checks(line, costs=self.costs, verdicts=self.check_counts)
        self.unlabelled_total += unlabelled
        self.unlabelled_trials += unlabelled > 0
        self.policies.add(line.untrusted_policy or "unknown")
        if self.fingerprints:
            count_judged_criteria(self.criteria, line, self.fingerprints)
        verdict = line.verdict
        if verdict is not Verdict.PASS:
            self.failures.add(line)
            # where the reason comes from, not the reason: it is made only when a renderer reads it
            where = line if self.locate is None else self.locate()
            self.reasons.append((verdict is not Verdict.FAIL, cid, line.trial, verdict, where))

    def shift_lines(self, before: int) -> None:
        """Add ``before`` to the line of every trial kept as its place in the file (:data:`ReasonEntry`).

        For a part whose reader numbered its range's lines from the range's first
        (:mod:`judgekit.reports.run_parts`): ``before`` is the lines of the ranges before it.
        """
        shifted: list[ReasonEntry] = []
        for failed, cid, trial, verdict, where in self.reasons:
            if isinstance(where, LineLocation):
                where = where._replace(number=where.number + before)
            shifted.append((failed, cid, trial, verdict, where))
        self.reasons = shifted

    def __getstate__(self) -> dict[str, object]:
        """The state to pickle (a part goes to and from a worker process), without its line locator.

        A part's trials that did not pass travel as their places in the file (:data:`ReasonEntry`), a
        hundred bytes or so each, not as reasons.
        """
        state = dict(vars(self))
        state["locate"] = None
        return state

    def part(self) -> RunAccumulator:
        """An empty accumulator for a later part of the same file (the same case set, drop, records).

        Its retirement tallies start with the trials this one's already hold, so a trial of the history
        runs given again counts as a repeat there as in one pass. Feed it the part's lines, then
        :meth:`merge` it into this one, parts in file order.
        """
        part = type(self)(
            known_cases=self.known, drop=self.drop, calibration_records=(), retirement=RetirementTallies()
        )
        part.records, part.fingerprints = self.records, self.fingerprints
        part.retirement.seen = set(self.retirement.seen)
        return part

    def merge(self, later: RunAccumulator) -> None:
        """Add what a later part of the file counted (made by :meth:`part`): as if its lines came next.

        Every figure comes out as one pass over the lines in file order gives it: counts and exact sums
        add (integers), first-seen orders (tasks, run ids, judge fingerprints) continue with the later
        part's new entries, the first of a "first" (a case reference, a cost reason) is kept and sets
        join. ``tests/reports/test_run_parts.py`` holds that every attribute is merged.
        """
        seen, other = self.seen, later.seen
        seen.cases.update(other.cases)
        seen.line_holdouts |= other.line_holdouts
        seen.dropped.update(other.dropped)
        self.retirement.merge(later.retirement)
        self.unknown.update(later.unknown)
        self.stale |= later.stale
        for t_later, case in enumerate(later.cases):
            t = self.index.get(case.id)
            if t is None:
                self.index[case.id] = len(self.cases)
                self.cases.append(case)
                self.counts.append(list(later.counts[t_later]))
                self.versions.append(set(later.versions[t_later]))
                self.q_sum.append(later.q_sum[t_later])
                self.q_n.append(later.q_n[t_later])
                continue
            for i, n in enumerate(later.counts[t_later]):
                self.counts[t][i] += n
            self.versions[t] |= later.versions[t_later]
            self.q_sum[t] += later.q_sum[t_later]
            self.q_n[t] += later.q_n[t_later]
        self.trials += later.trials
        self.check_counts.update(later.check_counts)
        for fp in later.distinct_fps:
            if all(fp != s for s in self.distinct_fps):
                self.distinct_fps.append(fp)
        self.last_fp = later.last_fp if later.last_fp is not None else self.last_fp
        self.run_ids.update(later.run_ids)
        self.jk_versions |= later.jk_versions
        self.agent_models |= later.agent_models
        self.app_versions |= later.app_versions
        self.cost_total += later.cost_total
        self.cost_seen = self.cost_seen or later.cost_seen
        self.cost_unpriced += later.cost_unpriced
        if later.cost_reason is not None and not self.cost_reason:  # as ``reason or next`` line by line
            self.cost_reason = later.cost_reason
        self.untrusted_total += later.untrusted_total
        self.untrusted_trials += later.untrusted_trials
        self.unlabelled_total += later.unlabelled_total
        self.unlabelled_trials += later.unlabelled_trials
        self.policies |= later.policies
        self.failures.merge(later.failures)
        self.costs.merge(later.costs)
        for key, tally in later.criteria.items():
            mine = self.criteria.setdefault(key, [0, 0, 0])
            for i, n in enumerate(tally):
                mine[i] += n
        self.reasons.extend(later.reasons)

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
            The report of the lines fed.
        """
        path = Path(path)
        problems: list[str] = [str(p) for p in problems_in]
        notes: list[str] = []
        if self.unknown:
            known_ids = list(self.known or ())
            shown = ", ".join(
                f"'{cid}' ({n} trial{'s' if n != 1 else ''}{did_you_mean(cid, known_ids)})"
                for cid, n in sorted(self.unknown.items())
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
        quality = (
            np.array([exact_float(units) for units in self.q_sum], dtype=np.float64),
            np.array(self.q_n, dtype=np.int64),
        )
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
            cost_usd=exact_float(self.cost_total) if self.cost_seen else None,
            cost_unpriced_trials=self.cost_unpriced,
            cost_unknown_reason=self.cost_reason,
            untrusted_verdicts=self.untrusted_total,
            trials_with_untrusted=self.untrusted_trials,
            untrusted_policies=tuple(sorted(self.policies)),
            unlabelled_verdicts=self.unlabelled_total,
            trials_with_unlabelled=self.unlabelled_trials,
        )
        if self.unlabelled_total:
            notes.append(
                f"{self.unlabelled_total} judge verdict(s) in {self.unlabelled_trials} trial(s) are on "
                "criterion texts the judge's calibration never labelled: they rest on its agreement on other "
                "criteria "
                "(see each check's trust reason; --unlabelled-criteria withhold makes them untrusted)"
            )
        if self.untrusted_total:
            notes.append(
                f"{self.untrusted_total} verdict(s) in {self.untrusted_trials} trial(s) rest on a judge "
                "that no calibration record trusts (graded with --untrusted "
                f"{', '.join(sorted(self.policies))}): those trials' verdicts are not calibrated evidence"
            )
        known = self.known
        reasons = TrialReasons(sorted(self.reasons, key=_REPORT_ORDER), path=path)
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
            trial_reasons=reasons,
        )
        return report.model_copy(update={"headline": build_headline(report)})


ResultSource: TypeAlias = RunResults | str | PathLike[str]
"""Where a report's result lines come from: a run read into memory
(:func:`judgekit.results.read_results`), or the path of a results file, read once line by line and never
held in memory (the lines the exact fast path is certain about come as
:class:`~judgekit.results.FastResultLine`, every other line through the full path, so the problems are
those :func:`~judgekit.results.read_results` reports)."""


def source_lines(
    source: ResultSource, *, fast: bool = True
) -> tuple[Path, Iterable[ResultLine | FastResultLine], Callable[[], list[Problem]]]:
    """The file, the valid lines in file order and the problems of a result source.

    Args:
        source: A run in memory, or a results file's path (read when the lines are iterated, once).
        fast: Whether a streamed file's lines may come as :class:`~judgekit.results.FastResultLine`
            (the exact fast path: same fields, same values); ``False`` gives every line as a
            :class:`~judgekit.results.ResultLine`.

    Returns:
        The file, its valid lines, and a function giving its problems (complete once the lines are
        consumed; those :func:`~judgekit.results.read_results` reports).
    """
    if isinstance(source, RunResults):
        return source.path, source.lines, lambda: source.problems
    stream = ResultStream(source)
    return stream.path, stream.report_lines() if fast else stream, lambda: stream.problems


def report_run(
    source: ResultSource,
    *,
    undecided: UndecidedPolicy,
    k: int | None = None,
    history: Sequence[ResultSource] = (),
    retire_after: int = DEFAULT_RELEASES,
    retire_min_trials: int = DEFAULT_MIN_TRIALS,
    regression_slices: Iterable[str] = DEFAULT_REGRESSION_SLICES,
    known_cases: Mapping[str, tuple[int, tuple[str, ...]]] | None = None,
    splits: Mapping[str, str] | None = None,
    calibration_records: Sequence[CalibrationRecord] = (),
    drop: frozenset[str] = frozenset(),
    processes: int | None = 1,
) -> tuple[RunReport, RunReading]:
    """Compute the report of one run: the one report engine, whatever the lines come from.

    Every source's lines are fed, one at a time in file order, to the same :class:`RunAccumulator`, so a
    run read into memory and the same file streamed give the same report, byte for byte in every
    rendering. A streamed file is read once and never held: memory grows with tasks, not trials (what is
    kept is listed on :class:`RunAccumulator`).

    Bad input never stops the report: lines for cases not in ``known_cases``, a ``k`` larger than the
    trial count, mixed case versions within the run and the results file's own problems are listed in
    ``problems`` or ``notes`` and everything else is reported.

    Args:
        source: The run's results: a :class:`~judgekit.results.RunResults` in memory, or a results file's
            path (streamed).
        undecided: How a trial with no decided verdict counts in pass^k, pass@k and the rates
            (:data:`judgekit.stats.UndecidedPolicy`: ``"fail"`` or ``"exclude"``); required, recorded in
            the report. ``judgekit report`` passes ``"fail"`` unless ``--undecided exclude`` is given.
        k: Largest k for pass^k and pass@k; default the largest trial count of a task. A larger k than
            that is reduced to it, with a problem saying so; a k below 1 is ignored, with a problem.
        history: Earlier runs, oldest first (in memory or paths, streamed), for retirement advice (their
            trials count by release: the same run given twice counts once, and runs of one agent version
            pool their trials).
        retire_after: R: distinct releases in a row in which a capability task must pass every trial
            (``< 1`` disables retirement).
        retire_min_trials: Trials per release (each a pass, at the case's current version) for that
            release to count toward retirement; at least 1.
        regression_slices: Slice names that put a case in the regression suite.
        known_cases: When given, the case set's ``id -> (version, policy_refs)``; trials of other cases
            are left out and listed, version mismatches are noted.
        splits: Case id to its split (``capability``, ``regression``, ``holdout``) from the case set; a case
            with a ``capability`` or ``regression`` split goes to that suite whatever its slice.
        calibration_records: Calibration records (:func:`judgekit.calibration.records.load_records`); each
            judged criterion whose judge fingerprint has one gets a corrected pass rate in ``corrected``
            (:func:`judgekit.calibration.corrected.corrected_criterion_rates`); empty: none.
        drop: Case ids whose trials are left out entirely (holdouts not asked for by name); counted in
            :attr:`RunReading.dropped`.
        processes: How many processes read a results file given by its path, by byte ranges
            (:mod:`judgekit.reports.run_parts`; the report is the same, byte for byte, whatever the
            count): 1 (the default) this process only, ``None`` chosen by the file's size
            (:func:`judgekit.reports.run_parts.processes_for`), 0 one per CPU. History runs and a run in
            memory are read by this process.

    Returns:
        The report, and what reading the lines found besides it (problems, the holdouts the lines
        recorded, the trials per case, the trials dropped, each history run's problems).

    Raises:
        JudgekitError: When a results file cannot be read at all.
        ValueError: When ``undecided`` is not a policy or ``retire_min_trials`` is below 1 (programming
            errors, not bad input: the CLI checks its options).
    """
    policy = check_undecided_policy(undecided)
    if retire_min_trials < 1:
        raise ValueError(f"min_trials must be at least 1 (got {retire_min_trials})")
    with paused_gc():
        tallies = RetirementTallies()
        history_problems: list[list[Problem]] = []
        for earlier in history:
            _, older, older_problems = source_lines(earlier)
            for old in older:
                tallies.add(cast(ResultLine, old))  # only attributes are read (see RunAccumulator.add)
            history_problems.append(older_problems())
        acc = RunAccumulator(
            known_cases=known_cases, drop=drop, calibration_records=calibration_records, retirement=tallies
        )
        if isinstance(source, RunResults):
            path, lines, problems = source_lines(source)
            for line in lines:
                acc.add(line)
        else:  # a file, by one range or several (the reader gives the accumulator its line locator)
            path = Path(source)
            count = processes_for(source, processes)
            parts, found, _ = read_in_parts(path, acc, acc.part, processes=count)
            for part in parts:
                acc.merge(part)
            problems = lambda: found  # noqa: E731
        reading = acc.seen
        reading.path = path
        reading.problems = problems()
        reading.history_problems = history_problems
        report = acc.report(
            file=path.name,
            path=path,
            problems_in=reading.problems,
            policy=policy,
            k=k,
            retire_after=retire_after,
            retire_min_trials=retire_min_trials,
            regression_slices=regression_slices,
            splits=splits or {},
        )
    return report, reading


def trial_reasons(lines: Iterable[ResultLine]) -> tuple[TrialReason, ...]:
    """Every trial that did not pass, with its one-line reason: failed first, then undecided, by case, trial.

    The reason is :func:`judgekit.verdict.verdict_reason`'s, the one the viewer, the demo and the
    integrations show.
    """
    rows = [trial_reason(line) for line in lines if line.verdict is not Verdict.PASS]
    rows.sort(key=lambda r: (r.verdict is not Verdict.FAIL, r.case_id, r.trial))
    return tuple(rows)


_UNDECIDED_WORDS = {
    Verdict.ERROR: "error",
    Verdict.INSUFFICIENT_INFORMATION: "insufficient information",
    Verdict.NOT_EVALUATED: "not evaluated",
}


def _fmt_point(name: str, point: KPoint) -> str:
    """``pass^4 0.310 [0.170, 0.497]``, or ``pass^4 undefined (reason)``."""
    if point.value is None or point.ci_low is None or point.ci_high is None:
        return f"{name} undefined ({point.reason or 'no task has enough trials'})"
    return f"{name} {point.value:.3f} [{point.ci_low:.3f}, {point.ci_high:.3f}]"


def _suite_phrase(suite: GroupSummary) -> str:
    parts = [_fmt_point("pass^1", suite.pass_hat[0])] if suite.pass_hat else ["pass^1 undefined (no trial)"]
    if len(suite.pass_hat) > 1:
        last = suite.pass_hat[-1]
        parts.append(_fmt_point(f"pass^{last.k}", last))
        if last.tasks_excluded:
            parts[-1] += f" ({last.tasks_excluded} task(s) with fewer than {last.k} trials left out)"
    return f"{suite.name} suite: {', '.join(parts)} over {suite.tasks} task(s)"


def build_headline(report: RunReport, thresholds: Sequence[str] = (), misses: Sequence[str] = ()) -> Headline:
    """The report's plain verdict line, from its own figures (and the thresholds, when checked).

    Args:
        report: The report (its suites, verdict counts, undecided policy and problems).
        thresholds: The thresholds checked, as written (``--fail-under 0.9``); empty when none was given.
        misses: The missed ones, one line per threshold and suite (empty when every one was met).

    Returns:
        The :class:`Headline`. Its text says the status, then each suite's pass^1 and pass^k (k the
        report's largest) with 95 % intervals over tasks, then the failed trials and the undecided ones by
        state with how the policy counted them, e.g. ``Misses 1 threshold check(s): ... . capability suite:
        pass^1 0.620 [0.482, 0.741], pass^3 0.410 [0.280, 0.553] over 16 task(s). 29 of 104 trials
        failed; 11 undecided (1 error, 10 insufficient information), counted as trials that did not
        pass.``
    """
    trials = report.run.trials
    if not trials:
        status: Literal["met", "missed", "unchecked", "no_trials"] = "no_trials"
        verdict = "No trials to report"
    elif misses:
        status = "missed"
        verdict = f"Misses {len(misses)} threshold check(s): {misses[0]}"
        if len(misses) > 1:
            verdict += f"; and {len(misses) - 1} more"
    elif thresholds:
        status = "met"
        verdict = f"Meets every threshold ({', '.join(thresholds)})"
    else:
        status = "unchecked"
        verdict = "Not gated: no threshold given"
    if report.problems:
        verdict = f"{verdict}; {len(report.problems)} input problem(s), listed in the report"
    sentences = [verdict]
    if report.suites:
        sentences.append("; ".join(_suite_phrase(s) for s in report.suites))
    undecided = {v: report.verdicts.get(v, 0) for v in _UNDECIDED_WORDS}
    total = sum(undecided.values())
    if trials:
        failed = f"{report.verdicts.get(Verdict.FAIL, 0)} of {trials} trials failed"
        if total:
            states = ", ".join(f"{n} {_UNDECIDED_WORDS[v]}" for v, n in undecided.items() if n)
            how = (
                "counted as trials that did not pass"
                if report.undecided_policy == "fail"
                else "left out of their tasks' trials"
            )
            sentences.append(f"{failed}; {total} undecided ({states}), {how}")
        else:
            sentences.append(f"{failed}; none undecided")
    return Headline(
        status=status,
        verdict=verdict,
        text=". ".join(sentences) + ".",
        thresholds=tuple(thresholds),
        misses=tuple(misses),
        input_problems=len(report.problems),
    )


def _fingerprint_text(fp: Mapping[str, object]) -> str:
    import json

    return json.dumps(fp, sort_keys=True, separators=(",", ":"), default=str)


def problems_text(problems: Iterable[Problem]) -> list[str]:
    """Problems as ``file:line: message`` texts."""
    return [str(p) for p in problems]
