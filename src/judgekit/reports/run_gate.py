"""Thresholds a CI job gates a run on: pass^1, pass^k and error counts, per suite.

``judgekit grade`` and ``judgekit report`` take ``--fail-under X`` (pass^1), ``--fail-under-k K=X`` (pass^k
at k) and ``--max-errors N`` (trials whose verdict is ``error``). Each may start with a suite,
``regression:`` or ``capability:``, to apply to that suite only. Without one, a pass^k threshold applies to
every suite of the run *separately* (the two suites are never blended into one figure, see
:mod:`judgekit.reports.run_model`) and ``--max-errors`` counts the error trials of the whole run.

The figures are the report's own: :func:`check_thresholds` reads them from a
:class:`~judgekit.reports.run_model.RunReport` (pass^k under the report's undecided policy), so a gate can
never disagree with the report a reader sees. A threshold whose figure is undefined (a suite with no task
in the run, a k beyond the trial count, no task with k counted trials) is *missed*, with the reason: a gate
that cannot be checked must not pass silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Literal

from judgekit.verdict import FrozenModel, Verdict

if TYPE_CHECKING:  # the report model (numpy, the calibration estimators) is not needed to parse a threshold
    from judgekit.reports.run_model import GroupSummary, RunReport

__all__ = [
    "SUITES",
    "Threshold",
    "check_thresholds",
    "parse_fail_under",
    "parse_fail_under_k",
    "parse_max_errors",
    "parse_thresholds",
    "with_thresholds",
]

Suite = Literal["capability", "regression"]

SUITES: tuple[Suite, ...] = ("capability", "regression")
"""The suites a threshold can name."""

_TOLERANCE = 1e-9
"""Floating-point slack: a figure equal to its threshold up to rounding meets it."""


class Threshold(FrozenModel):
    """One threshold a run must meet.

    Attributes:
        option: The option as the user wrote it (``--fail-under-k regression:3=0.8``), for messages.
        kind: ``pass_hat`` (pass^k at least ``minimum``) or ``max_errors`` (at most ``maximum`` error trials).
        suite: The suite it applies to, or ``None``: every suite separately for ``pass_hat``, the whole run
            for ``max_errors``.
        k: The k of pass^k (1 for ``--fail-under``); unused for ``max_errors``.
        minimum: The smallest acceptable pass^k, in [0, 1] (read for ``pass_hat`` only).
        maximum: The largest acceptable number of error trials, ``>= 0`` (read for ``max_errors`` only).
    """

    option: str
    kind: Literal["pass_hat", "max_errors"]
    suite: Suite | None = None
    k: int = 1
    minimum: float = 0.0
    maximum: int = 0


def _split_suite(text: str, option: str) -> tuple[Suite | None, str]:
    """``regression:0.9`` -> ``("regression", "0.9")``; ``0.9`` -> ``(None, "0.9")``."""
    head, sep, rest = text.partition(":")
    if not sep:
        return None, text.strip()
    name = head.strip().lower()
    for suite in SUITES:
        if name == suite:
            return suite, rest.strip()
    raise ValueError(
        f"'{text}': unknown suite '{head.strip()}'; name capability or regression before a colon "
        f"({option} regression:...), or no suite to apply the threshold to every suite"
    )


def _rate(text: str, whole: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 <= value <= 1.0:  # also refuses nan
        raise ValueError(f"'{whole}': the threshold must be a rate between 0 and 1, got '{text}'")
    return value


def _whole(text: str, whole: str, name: str, *, least: int) -> int:
    """``text`` as a whole number of at least ``least``, or a ValueError naming ``name`` in ``whole``."""
    try:
        value = int(text)
    except ValueError:
        value = least - 1
    if value < least:
        raise ValueError(f"'{whole}': {name} must be a whole number of at least {least}, got '{text}'")
    return value


def parse_fail_under(text: str) -> Threshold:
    """Parse a ``--fail-under`` value: ``X`` or ``SUITE:X``, pass^1 at least X.

    Args:
        text: The option's value.

    Returns:
        The threshold.

    Raises:
        ValueError: When the suite is unknown or X is not a number in [0, 1].

    Examples:
        >>> parse_fail_under("regression:1").suite
        'regression'
    """
    suite, rest = _split_suite(text, "--fail-under")
    return Threshold(
        option=f"--fail-under {text}",
        kind="pass_hat",
        suite=suite,
        k=1,
        minimum=_rate(rest, text),
    )


def parse_fail_under_k(text: str) -> Threshold:
    """Parse a ``--fail-under-k`` value: ``K=X`` or ``SUITE:K=X``, pass^K at least X.

    Args:
        text: The option's value.

    Returns:
        The threshold.

    Raises:
        ValueError: When the suite is unknown, the ``=`` is missing, K is not an integer of at least 1, or X
            is not a number in [0, 1].

    Examples:
        >>> t = parse_fail_under_k("3=0.8")
        >>> (t.k, t.minimum, t.suite)
        (3, 0.8, None)
    """
    suite, rest = _split_suite(text, "--fail-under-k")
    k_text, sep, rate_text = rest.partition("=")
    if not sep:
        raise ValueError(f"'{text}': write K=X (pass^K at least X), for example --fail-under-k 3=0.8")
    k = _whole(k_text, text, "K", least=1)
    return Threshold(
        option=f"--fail-under-k {text}",
        kind="pass_hat",
        suite=suite,
        k=k,
        minimum=_rate(rate_text.strip(), text),
    )


def parse_max_errors(text: str) -> Threshold:
    """Parse a ``--max-errors`` value: ``N`` or ``SUITE:N``, at most N trials with verdict ``error``.

    Args:
        text: The option's value.

    Returns:
        The threshold.

    Raises:
        ValueError: When the suite is unknown or N is not a whole number of at least 0.

    Examples:
        >>> parse_max_errors("0").maximum
        0
    """
    suite, rest = _split_suite(text, "--max-errors")
    n = _whole(rest, text, "N", least=0)
    return Threshold(option=f"--max-errors {text}", kind="max_errors", suite=suite, maximum=n)


def parse_thresholds(
    fail_under: Iterable[str] = (), fail_under_k: Iterable[str] = (), max_errors: Iterable[str] = ()
) -> tuple[Threshold, ...]:
    """Parse every threshold option of a command, in the order pass^1, pass^k, errors.

    Args:
        fail_under: ``--fail-under`` values.
        fail_under_k: ``--fail-under-k`` values.
        max_errors: ``--max-errors`` values.

    Returns:
        The thresholds.

    Raises:
        ValueError: At the first value that does not parse (the message quotes the value).
    """
    return (
        *(parse_fail_under(t) for t in fail_under),
        *(parse_fail_under_k(t) for t in fail_under_k),
        *(parse_max_errors(t) for t in max_errors),
    )


def _pass_hat_misses(threshold: Threshold, report: RunReport, policy_text: str) -> list[str]:
    suites = {s.name: s for s in report.suites}
    if threshold.suite is not None and threshold.suite not in suites:
        return [
            f"{threshold.option}: the {threshold.suite} suite has no task in this run, so its pass^"
            f"{threshold.k} cannot be checked"
        ]
    targets: Sequence[GroupSummary] = (
        [suites[threshold.suite]] if threshold.suite is not None else list(report.suites)
    )
    if not targets:
        return [f"{threshold.option}: the run has no task, so pass^{threshold.k} cannot be checked"]
    misses: list[str] = []
    for suite in targets:
        name = f"pass^{threshold.k} of the {suite.name} suite"
        if threshold.k > report.k_max:
            misses.append(
                f"{threshold.option}: {name} is undefined: its tasks have at most {report.k_max} "
                f"trial(s), and pass^k needs k trials of a task"
            )
            continue
        point = suite.pass_hat[threshold.k - 1]
        if point.value is None:
            misses.append(
                f"{threshold.option}: {name} is undefined: {point.reason or 'no task has k trials'}"
            )
        elif point.value < threshold.minimum - _TOLERANCE:
            misses.append(
                f"{threshold.option}: {name} is {point.value:.4f} over {point.tasks_used} task(s), below "
                f"{threshold.minimum:g} ({policy_text})"
            )
    return misses


def _error_misses(threshold: Threshold, report: RunReport) -> list[str]:
    if threshold.suite is None:
        errors, where = report.verdicts.get(Verdict.ERROR, 0), "the whole run (every suite)"
    else:
        suite = next((s for s in report.suites if s.name == threshold.suite), None)
        if suite is None:
            return [
                f"{threshold.option}: the {threshold.suite} suite has no task in this run, so its errors "
                "cannot be checked"
            ]
        errors, where = suite.verdicts.get(Verdict.ERROR, 0), f"the {suite.name} suite"
    if errors <= threshold.maximum:
        return []
    return [
        f"{threshold.option}: {errors} trial(s) with verdict error in {where}, more than {threshold.maximum} "
        "(an error is a grader that could not run: see the report's undecided cases)"
    ]


def check_thresholds(report: RunReport, thresholds: Iterable[Threshold]) -> tuple[str, ...]:
    """Check a run against thresholds: one message per missed threshold and suite, empty when all are met.

    Args:
        report: The run's report (its pass^k follows its undecided policy).
        thresholds: The thresholds, from the ``parse_*`` functions.

    Returns:
        One line per miss, naming the option, the suite, the figure and the threshold.
    """
    policy_text = (
        "undecided trials count as trials that did not pass"
        if report.undecided_policy == "fail"
        else "undecided trials left out"
    )
    misses: list[str] = []
    for threshold in thresholds:
        if threshold.kind == "pass_hat":
            misses.extend(_pass_hat_misses(threshold, report, policy_text))
        else:
            misses.extend(_error_misses(threshold, report))
    return tuple(misses)


def with_thresholds(report: RunReport, thresholds: Sequence[Threshold]) -> RunReport:
    """The report with its headline checked against the thresholds (the misses of :func:`check_thresholds`).

    The headline and the exit code of ``judgekit report`` come from this one check, so the verdict line a
    reader sees can never disagree with the gate.

    Args:
        report: The run's report.
        thresholds: The parsed thresholds; none leaves the headline ``unchecked``.

    Returns:
        A copy of the report whose ``headline`` names the thresholds and their misses.
    """
    from judgekit.reports.run_model import build_headline

    misses = check_thresholds(report, thresholds)
    headline = build_headline(report, tuple(t.option for t in thresholds), misses)
    return report.model_copy(update={"headline": headline})
