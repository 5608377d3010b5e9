"""The wording of advice in a grade's reasons, for the path the user is on.

A reason the grading contract gives ("required outcome not checked: give a judge (...) whose calibration
record trusts its fingerprint") is made in one place (:mod:`judgekit.graders.contract`); only the names of
the settings it advises change with the path: a flag on the command line, an argument in Python, a
scorer's grader in Inspect, an option of the pytest plugin, the grader of a promptfoo assertion. The path
is set around grading with :func:`advice_for` (a context variable, so the tasks a run starts inherit it);
the command line sets ``cli`` for its whole run, and grading from Python outside every path is ``python``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal

__all__ = ["ADVICE", "Advice", "AdvicePath", "advice_for", "current_advice"]


@dataclass(frozen=True)
class Advice:
    """How the user of one path gives the two settings the contract's reasons advise.

    A reason such as "required outcome not checked: give a judge (...) whose calibration record trusts its
    fingerprint" is one text; only these names change with the path the user is on (a flag on the command
    line, an argument in Python, a scorer's grader in Inspect), so that the advice is one they can follow.

    Attributes:
        judge: How to give a judge (``--judge-model``).
        count_untrusted: How to let an untrusted judge's verdicts count (``--untrusted count``).
        policy: How the untrusted policy in force is named, ``{}`` standing for its value
            (``--untrusted {}``).
        calibrate: How to calibrate the judge against expert labels so that a record trusts it, ``{}``
            standing for its full fingerprint (``judgekit calibrate LABELS --judge RATER --fingerprint {}``).
            The pytest plugin has no calibration option, so its users are told the command line's.
    """

    judge: str
    count_untrusted: str
    policy: str
    calibrate: str

    def policy_named(self, policy: str) -> str:
        """The untrusted policy ``policy`` as this path's user sets it (``--untrusted withhold``)."""
        return self.policy.format(policy)

    def calibrate_named(self, fingerprint: str) -> str:
        """How this path's user calibrates the judge of ``fingerprint`` (its full 64 characters)."""
        return self.calibrate.format(fingerprint)


_CLI_CALIBRATE = "judgekit calibrate LABELS --judge RATER --fingerprint {}"
_PYTHON_CALIBRATE = (
    "judgekit.api.calibrate(LABELS, options=CalibrationOptions(judge=RATER, fingerprint='{}'))"
)

AdvicePath = Literal["cli", "python", "inspect", "pytest", "promptfoo"]
"""A path a user grades through: the command line, the Python API, or one of the integrations."""

ADVICE: Mapping[AdvicePath, Advice] = {
    "cli": Advice(
        judge="--judge-model",
        count_untrusted="--untrusted count",
        policy="--untrusted {}",
        calibrate=_CLI_CALIBRATE,
    ),
    "python": Advice(
        judge="make_grader(judge=JudgeConfig(...)), or grade_run(judge=...)",
        count_untrusted="untrusted='count' (make_grader, or grade_run's RunOptions)",
        policy="untrusted='{}'",
        calibrate=_PYTHON_CALIBRATE,
    ),
    "inspect": Advice(
        judge="judgekit_scorer(cases, grader=make_grader(judge=JudgeConfig(...)))",
        count_untrusted="the scorer's grader made with make_grader(..., untrusted='count')",
        policy="untrusted='{}'",
        calibrate=_PYTHON_CALIBRATE,
    ),
    "pytest": Advice(
        judge="--judgekit-config FILE with a judge mapping, or the judgekit_config ini key",
        count_untrusted="--judgekit-untrusted count",
        policy="--judgekit-untrusted {}",
        calibrate=_CLI_CALIBRATE,
    ),
    "promptfoo": Advice(
        judge="grade_output(output, context, grader=make_grader(judge=JudgeConfig(...)))",
        count_untrusted="the grader made with make_grader(..., untrusted='count')",
        policy="untrusted='{}'",
        calibrate=_PYTHON_CALIBRATE,
    ),
}
"""The wording of the advice on each path (:func:`advice_for` chooses it)."""

_ADVICE_PATH: ContextVar[AdvicePath] = ContextVar("judgekit_advice_path", default="python")


@contextlib.contextmanager
def advice_for(path: AdvicePath) -> Iterator[Advice]:
    """Word the contract's advice for ``path`` while grading inside the block (and the tasks it starts).

    The command line sets ``cli`` for its whole run, each integration its own name around its grading;
    grading from Python outside any of them gets ``python``.

    Args:
        path: The path the user is on.

    Yields:
        The advice in force inside the block.
    """
    token = _ADVICE_PATH.set(path)
    try:
        yield ADVICE[path]
    finally:
        _ADVICE_PATH.reset(token)


def current_advice() -> Advice:
    """The advice wording in force (:func:`advice_for`; ``python`` outside every path's block)."""
    return ADVICE[_ADVICE_PATH.get()]
