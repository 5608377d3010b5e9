"""Grade one trial: a grader built once from a judge configuration, then a grade per (case, transcript).

This is the front door to :class:`~judgekit.graders.layered.LayeredGrader`, the one place the layers are
combined. ``judgekit grade``, the demo and every integration grade through the same class; these
functions only build it from a :class:`~judgekit.judge_setup.JudgeConfig` and run it from synchronous
or asynchronous code.

Examples:
    >>> import judgekit
    >>> case = judgekit.Case.model_validate({"id": "refund-1", "input": "Refund order 7",
    ...     "expected": {"route": [{"tool": "refund", "args": {"order_id": "7"}}]}})
    >>> transcript = judgekit.to_transcript([
    ...     {"role": "user", "content": "Refund order 7"},
    ...     {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
    ...       "function": {"name": "refund", "arguments": '{"order_id": "8"}'}}]},
    ...     {"role": "tool", "tool_call_id": "c1", "content": "refunded"}], case_id="refund-1")
    >>> grade = judgekit.grade(case, transcript)
    >>> grade.verdict.value
    'fail'
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING

from judgekit.errors import JudgekitError
from judgekit.graders.layered import LayeredGrader

if TYPE_CHECKING:
    from judgekit.cases import Case
    from judgekit.graders.contract import Grader, UntrustedPolicy
    from judgekit.graders.grounding import GroundingMode
    from judgekit.judge_setup import JudgeConfig
    from judgekit.transcript import Transcript
    from judgekit.verdict import Grade

__all__ = ["grade", "grade_async", "make_grader"]


def make_grader(
    *,
    root: str | os.PathLike[str] | None = None,
    judge: JudgeConfig | None = None,
    untrusted: UntrustedPolicy = "withhold",
    grounding: GroundingMode | None = None,
    transcript_dir: str | os.PathLike[str] | None = None,
) -> LayeredGrader:
    """The grader ``judgekit grade`` uses: every deterministic layer, plus the judge when one is given.

    Build it once and grade many trials with it: the judge's client, cassette and trust records are
    opened here, not per trial.

    Args:
        root: The golden set's root, which case fixture paths (``initial_state``,
            ``expected_state.snapshot``) resolve against (``None``: the working folder).
        judge: The judge configuration for the rubric layer (``None``: the deterministic layers alone).
            Its verdicts count only when ``judge.records`` holds a calibration record that trusts the
            judge's exact fingerprint.
        untrusted: What an untrusted judge's verdict may do: ``withhold`` (decides nothing; the default),
            or the other policies of :func:`judgekit.graders.layered.combine`.
        grounding: Also check expected sources, in this mode (``None``: not checked).
        transcript_dir: Folder that relative state paths inside transcripts resolve against.

    Returns:
        A :class:`~judgekit.graders.layered.LayeredGrader`; ``await grader.grade(case, transcript)``, and
        ``grader.judge_fingerprint`` is what a calibration record must name to trust its judge.

    Raises:
        JudgekitError: When the judge's rubric cannot be loaded.
    """
    rubric = None
    if judge is not None:
        from judgekit.judge_setup import build_rubric_grader

        rubric = build_rubric_grader(judge)
    return LayeredGrader(
        root, transcript_dir=transcript_dir, rubric=rubric, untrusted=untrusted, grounding=grounding
    )


async def grade_async(
    case: Case,
    transcript: Transcript,
    *,
    grader: Grader | None = None,
    root: str | os.PathLike[str] | None = None,
    transcript_dir: str | os.PathLike[str] | None = None,
) -> Grade:
    """Grade one trial from asynchronous code (an Inspect AI scorer, an agent loop).

    Args:
        case: The golden case.
        transcript: The trial's transcript (:func:`judgekit.read_transcripts`,
            :func:`judgekit.to_transcript`).
        grader: The grader (:func:`make_grader`, or any object with ``async grade(case, transcript)``);
            ``None`` builds the deterministic layers over ``root``.
        root: The golden set's root, used when ``grader`` is ``None``.
        transcript_dir: Folder that relative state paths inside the transcript resolve against (the
            transcripts file's folder, for transcripts read with :func:`judgekit.read_transcripts`); used
            when ``grader`` is ``None``.

    Returns:
        The :class:`~judgekit.verdict.Grade`; ``grade.explain()`` says why.
    """
    used = grader if grader is not None else make_grader(root=root, transcript_dir=transcript_dir)
    return await used.grade(case, transcript)


def grade(
    case: Case,
    transcript: Transcript,
    *,
    grader: Grader | None = None,
    root: str | os.PathLike[str] | None = None,
    transcript_dir: str | os.PathLike[str] | None = None,
) -> Grade:
    """Grade one trial from synchronous code (a pytest test, a script); see :func:`grade_async`.

    Raises:
        JudgekitError: When called inside a running event loop (use ``await grade_async(...)`` there).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(
            grade_async(case, transcript, grader=grader, root=root, transcript_dir=transcript_dir)
        )
    raise JudgekitError(
        "judgekit.grade() was called inside a running event loop; use 'await judgekit.grade_async(...)'"
    )
