"""What every integration shares: one grader interface, a readable explanation, and extras.

:class:`LayeredGrader` grades one (case, transcript) pair the way ``judgekit grade`` does: every
deterministic layer (state, rules, route, text) and, when given, the judge-backed rubric layer, combined
by :func:`~judgekit.graders.layered.combine` (gates decide the verdict, quality is scored). Integrations
accept it, a bare :class:`~judgekit.graders.rubric.RubricGrader` (the rubric layer alone), or any
function ``(case, transcript) -> Grade | list[CheckResult]`` (plain or async), normalised by
:func:`as_grader`.

:func:`explain` turns a :class:`~judgekit.verdict.Grade` into the text a person reads when a case fails:
each failed, errored or undecided check with its reason, the structural diff lines, the offending call
with its index and arguments, and the quoted evidence.
"""

from __future__ import annotations

import asyncio
import inspect as _pyinspect
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from judgekit.errors import JudgekitError
from judgekit.graders.contract import CONTRACT_VERSION, Grader, GraderSpec
from judgekit.graders.layered import LayeredGrader
from judgekit.verdict import CheckResult, Evidence, Grade, Verdict, verdict_reason

if TYPE_CHECKING:
    from judgekit.cases import Case
    from judgekit.graders.rubric import RubricGrader
    from judgekit.transcript import Transcript

__all__ = [
    "Grader",
    "LayeredGrader",
    "as_grader",
    "explain",
    "explain_check",
    "first_reason",
    "grade_now",
    "require_extra",
]

PACKAGE = "judgekit-agents"
"""The distribution name used in install commands."""


def require_extra(module: str, extra: str) -> ModuleType:
    """Import an optional dependency, or say how to install it.

    Args:
        module: The module to import (``inspect_ai``).
        extra: The judgekit extra that brings it (``inspect``).

    Returns:
        The imported module.

    Raises:
        JudgekitError: When the module is not installed; the message gives the install command.
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] != module.split(".", maxsplit=1)[0]:
            raise
        raise JudgekitError(
            f"this integration needs the '{module}' package, which is not installed; "
            f"install it with: pip install '{PACKAGE}[{extra}]'"
        ) from None


class _FunctionGrader:
    def __init__(self, function: Callable[..., object]) -> None:
        self.function = function

    @property
    def spec(self) -> GraderSpec:
        name = getattr(self.function, "__qualname__", type(self.function).__name__)
        module = getattr(self.function, "__module__", "")
        return GraderSpec(name=f"function:{module}.{name}", version=CONTRACT_VERSION)

    async def grade(self, case: Case, transcript: Transcript) -> Grade:
        from judgekit.graders.layered import combine

        out = self.function(case, transcript)
        if _pyinspect.isawaitable(out):
            out = await out
        if isinstance(out, Grade):
            return out
        if isinstance(out, Sequence) and all(isinstance(c, CheckResult) for c in out):
            return combine(case, transcript.trial, list(out))
        raise JudgekitError(
            f"the grading function {getattr(self.function, '__name__', self.function)!r} returned "
            f"{type(out).__name__}; it must return a judgekit Grade or a list of CheckResult"
        )


class _ObjectGrader:
    """A user's object with ``async grade`` but no ``spec``: named by its class."""

    def __init__(self, obj: object) -> None:
        self._obj = obj

    @property
    def spec(self) -> GraderSpec:
        cls = type(self._obj)
        return GraderSpec(name=f"object:{cls.__module__}.{cls.__qualname__}", version=CONTRACT_VERSION)

    async def grade(self, case: Case, transcript: Transcript) -> Grade:
        out = await self._obj.grade(case, transcript)  # type: ignore[attr-defined]
        if not isinstance(out, Grade):
            raise JudgekitError(
                f"{type(self._obj).__name__}.grade() returned {type(out).__name__}; "
                "it must return a judgekit Grade"
            )
        return out


class _RubricOnly:
    def __init__(self, rubric: RubricGrader) -> None:
        self._layered = LayeredGrader(rubric=rubric, deterministic=False)

    @property
    def spec(self) -> GraderSpec:
        return self._layered.spec

    async def grade(self, case: Case, transcript: Transcript) -> Grade:
        return await self._layered.grade(case, transcript)


def as_grader(grader: object = None, *, root: str | os.PathLike[str] | None = None) -> Grader:
    """Normalise what a user passes as a grader.

    Args:
        grader: ``None`` (the deterministic layers, resolving fixtures against ``root``), a
            :class:`LayeredGrader` or any object with ``async grade(case, transcript) -> Grade``, a
            :class:`~judgekit.graders.rubric.RubricGrader` (the rubric layer alone; wrap it in
            ``LayeredGrader(rubric=...)`` for every layer), or a function ``(case, transcript)`` returning
            a :class:`~judgekit.verdict.Grade` or a list of :class:`~judgekit.verdict.CheckResult`
            (plain or async).
        root: The golden set's root, used when ``grader`` is ``None``, as text or a path object.

    Raises:
        JudgekitError: When ``grader`` is none of these.
    """
    root = Path(root) if root is not None else None
    from judgekit.graders.rubric import RubricGrader

    if grader is None:
        return LayeredGrader(root)
    if isinstance(grader, RubricGrader):
        return _RubricOnly(grader)
    grade_method = getattr(grader, "grade", None)
    if grade_method is not None and _pyinspect.iscoroutinefunction(grade_method):
        if isinstance(grader, Grader):
            return grader
        return _ObjectGrader(grader)
    if callable(grader):
        return _FunctionGrader(grader)
    raise JudgekitError(
        f"cannot grade with a {type(grader).__name__}: pass a LayeredGrader, a RubricGrader, an object "
        "with 'async def grade(case, transcript)', or a function (case, transcript) -> Grade"
    )


def grade_now(grader: Grader, case: Case, transcript: Transcript) -> Grade:
    """Grade from synchronous code (pytest tests, promptfoo assertions).

    Raises:
        JudgekitError: When called from inside a running event loop (``await grader.grade(...)`` there).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(grader.grade(case, transcript))
    raise JudgekitError(
        "grade_now() was called inside a running event loop; use 'await grader.grade(case, transcript)'"
    )


# --------------------------------------------------------------------------- explanations

_MARK = {
    Verdict.FAIL: "FAIL",
    Verdict.ERROR: "ERROR",
    Verdict.INSUFFICIENT_INFORMATION: "UNDECIDED",
    Verdict.NOT_EVALUATED: "SKIPPED",
    Verdict.PASS: "PASS",
}


def _short(value: object, limit: int = 200) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _evidence_lines(evidence: Evidence, *, max_lines: int) -> list[str]:
    out: list[str] = []
    if evidence.kind == "call" or evidence.call_index is not None:
        args = "" if evidence.arguments is None else _short(evidence.arguments)
        where = f"call #{evidence.call_index}" if evidence.call_index is not None else "call"
        out.append(f"{where}: {evidence.tool or '?'}({args})")
        if evidence.summary:
            out.append(evidence.summary)
    elif evidence.kind == "diff":
        out.append(evidence.summary)
        data = evidence.data
        lines = data.get("lines") if isinstance(data, dict) else None
        if isinstance(lines, list):
            shown = [str(x) for x in lines[:max_lines]]
            out.extend(f"  {line}" for line in shown)
            if len(lines) > max_lines:
                out.append(f"  ... {len(lines) - max_lines} more line(s)")
    elif evidence.summary:
        out.append(evidence.summary)
    if evidence.quote:
        where = f" (message {evidence.message_index})" if evidence.message_index is not None else ""
        out.append(f'quote{where}: "{evidence.quote}"')
    return out


def explain_check(check: CheckResult, *, max_lines: int = 20) -> str:
    """One check as readable lines: verdict, id, gate and category, reason, then its evidence."""
    tags = ["gate" if check.gate else "scored"]
    if check.category is not None:
        tags.append(check.category.value)
    if check.trust.value != "not_required":
        tags.append(check.trust.value)
    head = f"{_MARK[check.verdict]} {check.check_id} [{', '.join(tags)}]"
    if check.reason:
        head += f": {check.reason}"
    lines = [head]
    for evidence in check.evidence:
        lines.extend(f"    {line}" for line in _evidence_lines(evidence, max_lines=max_lines))
    return "\n".join(lines)


def explain(grade: Grade, *, max_lines: int = 20, show_passed: bool = True) -> str:
    """A grade as the text a person reads: why the case has its verdict, with the evidence.

    Failed gates come first, then errors, undecided checks and failed scored checks; passed and skipped
    checks are listed by id only.

    Args:
        grade: The grade.
        max_lines: Most diff lines shown per piece of evidence (the rest is counted).
        show_passed: List the ids of passed and skipped checks at the end.

    Returns:
        Several lines of text, starting ``case <id> trial <n>: <VERDICT>``, then (unless it passed)
        ``  why: <reason>`` with :func:`first_reason`'s one line.
    """
    quality = "" if grade.quality is None else f" (quality {grade.quality:.2f})"
    lines = [f"case {grade.case_id} trial {grade.trial}: {grade.verdict.value.upper()}{quality}"]
    why = first_reason(grade)  # the one-line reason every report, viewer and integration shows
    if why:
        lines.append(f"  why: {why}")
    counted = grade.metadata.get("untrusted_verdicts")
    if counted:
        lines.append(
            f"  untrusted: {len(counted)} verdict(s) counted from a judge no calibration record trusts "
            f"({', '.join(counted)}; --untrusted {grade.metadata.get('untrusted_policy')})"
        )
    order = (Verdict.FAIL, Verdict.ERROR, Verdict.INSUFFICIENT_INFORMATION)
    shown = sorted(
        (c for c in grade.checks if c.verdict in order),
        key=lambda c: (not c.gate, order.index(c.verdict)),
    )
    lines.extend("  " + explain_check(c, max_lines=max_lines).replace("\n", "\n  ") for c in shown)
    if show_passed:
        passed = [c.check_id for c in grade.checks if c.verdict is Verdict.PASS]
        skipped = [c.check_id for c in grade.checks if c.verdict is Verdict.NOT_EVALUATED]
        if passed:
            lines.append("  passed: " + ", ".join(passed))
        if skipped:
            lines.append("  not evaluated: " + ", ".join(skipped))
    return "\n".join(lines)


def first_reason(grade: Grade) -> str:
    """Why the case has its verdict, in one line, or ``""`` (:func:`judgekit.verdict.verdict_reason`).

    A failed case: its first failed gate with the evidence; a case the grading contract kept from passing
    (an expectation nobody decided, an untrusted judge): the contract's reason; else the check that
    decided the verdict.
    """
    return verdict_reason(grade.verdict, grade.reason, grade.checks)
