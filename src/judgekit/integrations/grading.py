"""What every integration shares: one grader interface and optional extras.

:class:`LayeredGrader` grades one (case, transcript) pair the way ``judgekit grade`` does: every
deterministic layer (state, rules, route, text) and, when given, the judge-backed rubric layer, combined
by :func:`~judgekit.graders.layered.combine` (gates decide the verdict, quality is scored). Integrations
accept it, a bare :class:`~judgekit.graders.rubric.RubricGrader` (the rubric layer alone), or any
function ``(case, transcript) -> Grade | list[CheckResult]`` (plain or async), normalised by
:func:`as_grader`.

A grade explains itself: :meth:`judgekit.verdict.Grade.explain` is the text a person reads when a case
fails, and :meth:`judgekit.verdict.Grade.why` its one line.
"""

from __future__ import annotations

import inspect as _pyinspect
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from judgekit.errors import JudgekitError, require_extra
from judgekit.graders.contract import CONTRACT_VERSION, Grader, GraderSpec
from judgekit.graders.layered import LayeredGrader
from judgekit.verdict import CheckResult, Grade

if TYPE_CHECKING:
    from judgekit.cases import Case
    from judgekit.graders.rubric import RubricGrader
    from judgekit.transcript import Transcript

__all__ = [
    "Grader",
    "LayeredGrader",
    "as_grader",
    "require_extra",
]


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
            return combine(case, transcript.trial, list(out), transcript=transcript)
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
