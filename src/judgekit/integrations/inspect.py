"""Inspect AI: a scorer that grades each sample's conversation with judgekit's layers.

:func:`judgekit_scorer` wraps any judgekit grader (the deterministic layers by default, a
:class:`~judgekit.graders.rubric.RubricGrader`, a :class:`~judgekit.integrations.grading.LayeredGrader`
with both, or a grading function) into an Inspect scorer. For each sample it

1. finds the judgekit case: ``metadata["case_id"]`` of the sample, else the sample id;
2. turns the sample's messages (system, user, assistant with tool calls, tool results; a tool error is
   recorded as a result starting ``Error:``) into a judgekit transcript, trial = the epoch;
3. attaches the world states the sample recorded: ``store`` keys :data:`INITIAL_STATE_KEY` and
   :data:`FINAL_STATE_KEY` (inline ``{table: {key: row}}`` data, or a path), else the sample metadata's
   ``initial_state`` and ``final_state``;
4. grades, and returns an Inspect :class:`~inspect_ai.scorer.Score`.

Verdicts map to scores without folding any state into another:

* ``pass`` is ``CORRECT`` and ``fail`` is ``INCORRECT``, with :func:`~.grading.explain` as the explanation
  (the failed gates, the structural diff, the offending call and its arguments);
* ``insufficient_information``, ``error`` and ``not_evaluated`` are **unscored** (``Score.unscored``: a
  NaN value that Inspect's metrics and reducers leave out of their denominators) with a reason:
  ``insufficient_information``; ``grader_failed`` when a judge-backed check errored (unreachable judge,
  unparseable reply), ``scoring_failed`` when a deterministic check could not run (a missing state, an
  unknown case); ``not_evaluated``. The explanation says why.

Every score's metadata holds the judgekit verdict, the quality score, the gate counts and one entry per
check (id, layer, verdict, gate, reason, category, trust), so nothing is lost in the mapping.

Needs the ``inspect`` extra: ``pip install 'judgekit-agents[inspect]'``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from judgekit.integrations.grading import Grader, as_grader, require_extra

require_extra("inspect_ai", "inspect")

from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.scorer import (  # noqa: E402
    CORRECT,
    Score,
    Scorer,
    ScoreReducer,
    Target,
    accuracy,
    score_reducer,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState  # noqa: E402

from judgekit.advice import advice_for  # noqa: E402
from judgekit.errors import JudgekitError, did_you_mean  # noqa: E402
from judgekit.formats.inspect_logs import (  # noqa: E402
    FINAL_STATE_KEY,
    INITIAL_STATE_KEY,
    inspect_transcript,
    score_from_grade,
)
from judgekit.verdict import Verdict  # noqa: E402

if TYPE_CHECKING:
    from judgekit.cases import Case
    from judgekit.caseset import CaseSet
    from judgekit.stats import UndecidedPolicy
    from judgekit.transcript import Transcript

__all__ = [
    "FINAL_STATE_KEY",
    "INITIAL_STATE_KEY",
    "judgekit_scorer",
    "pass_hat_k_reducer",
    "samples_from_cases",
    "score_from_grade",
    "transcript_from_state",
]


def transcript_from_state(state: TaskState, *, case_id: str | None = None) -> Transcript:
    """The judgekit transcript of one Inspect sample (its messages, states and epoch).

    Args:
        state: The sample's task state after the solvers ran.
        case_id: The case id (default: ``metadata["case_id"]``, else the sample id).

    Raises:
        JudgekitError: When the messages do not form a valid transcript.
    """
    model = str(state.model) if getattr(state, "model", None) is not None else None
    return inspect_transcript(
        state.messages,
        case_id=case_id if case_id is not None else _case_id(state),
        epoch=state.epoch,
        sample_id=state.sample_id,
        store=state.store,
        metadata=state.metadata or {},
        model=model,
    )


def _case_id(state: TaskState) -> str:
    value = state.metadata.get("case_id") if state.metadata else None
    return str(value) if value is not None else str(state.sample_id)


# --------------------------------------------------------------------------- scores


def _case_map(
    cases: CaseSet | Mapping[str, Case] | Iterable[Case], holdout: str | Sequence[str]
) -> tuple[dict[str, Case], tuple[str, ...]]:
    """Case id (or mapping key) to case, holdouts not named left out; and the ids left out."""
    from judgekit.cases import Case
    from judgekit.caseset import CaseSet, select_cases

    if isinstance(cases, CaseSet):
        selection = select_cases(cases, holdout, option="holdout")
        return {case.id: case for case in selection.cases}, selection.left_out
    given = dict(cases) if isinstance(cases, Mapping) else {getattr(c, "id", ""): c for c in cases}
    for case in given.values():
        if not isinstance(case, Case):
            raise JudgekitError(
                f"judgekit_scorer: cases must be judgekit Case objects, got {type(case).__name__}"
            )
    selection = select_cases(given.values(), holdout, option="holdout")
    return {k: c for k, c in given.items() if c.id not in selection.left_out}, selection.left_out


def _error_score(case_id: str, trial: int, reason: str, answer: str | None) -> Score:
    return Score.unscored(
        reason="scoring_failed",
        answer=answer,
        explanation=f"case {case_id} trial {trial}: ERROR\n  {reason}",
        metadata={"judgekit_verdict": Verdict.ERROR.value, "case_id": case_id, "unscored_detail": reason},
    )


@scorer(metrics=[accuracy(), stderr()], name="judgekit")
def judgekit_scorer(
    cases: CaseSet | Mapping[str, Case] | Iterable[Case],
    grader: object = None,
    *,
    root: str | Path | None = None,
    transcript: Callable[[TaskState], Transcript] | None = None,
    holdout: str | Sequence[str] = (),
) -> Scorer:
    """An Inspect scorer that grades each sample with judgekit.

    Args:
        cases: The golden cases: a loaded :class:`~judgekit.caseset.CaseSet`, a mapping from case id to
            case, or an iterable of cases.
        grader: What grades: ``None`` for every deterministic layer, a
            :class:`~judgekit.graders.rubric.RubricGrader` (rubric layer alone), a
            :class:`~judgekit.integrations.grading.LayeredGrader` (both), or a grading function.
        root: The golden set's root, for fixture paths in cases (default: the case set's root).
        transcript: Builds the transcript from a task state, when the default
            (:func:`transcript_from_state`) does not fit the harness.
        holdout: Ids of the holdout cases (``split: holdout``) to score too; a sample of any other
            holdout case is unscored (``scoring_failed``, saying how to name it).

    Returns:
        The scorer (metrics: accuracy and its standard error over the scored samples).

    Raises:
        JudgekitError: When a ``holdout`` name is not a holdout case given.
    """
    from judgekit.caseset import CaseSet

    by_id, left_out = _case_map(cases, holdout)
    base = Path(root) if root is not None else (cases.root if isinstance(cases, CaseSet) else None)
    the_grader: Grader = as_grader(grader, root=base)
    build = transcript or transcript_from_state

    async def score(state: TaskState, target: Target) -> Score:
        answer = state.output.completion if state.output is not None else None
        cid = _case_id(state)
        trial = max(1, int(state.epoch))
        case = by_id.get(cid)
        if case is None and cid in left_out:
            return _error_score(
                cid,
                trial,
                f"'{cid}' is a holdout case, kept out of routine runs; name it with "
                f"judgekit_scorer(..., holdout=['{cid}']) to score it",
                answer,
            )
        if case is None:
            known = ", ".join(sorted(by_id)[:10])
            return _error_score(
                cid,
                trial,
                f"no judgekit case '{cid}'{did_you_mean(cid, by_id)} (set metadata case_id on the sample; "
                f"known: {known})",
                answer,
            )
        try:
            trial_transcript = build(state)
        except JudgekitError as exc:
            return _error_score(
                cid, trial, f"the sample's conversation is not a transcript: {exc.message}", answer
            )
        try:
            with advice_for("inspect"):  # a reason's advice names the scorer's settings, not CLI flags
                grade = await the_grader.grade(case, trial_transcript)
        except JudgekitError as exc:
            return _error_score(cid, trial, f"the grader could not run: {exc.message}", answer)
        return score_from_grade(grade, answer=answer)

    return score


def samples_from_cases(
    cases: CaseSet | Mapping[str, Case] | Iterable[Case], *, holdout: str | Sequence[str] = ()
) -> list[Sample]:
    """Inspect samples for golden cases: the opening user message as input, the case id as id and metadata.

    Multi-turn cases give their first turn as input (later turns need a solver that plays the user).
    Cases without anything a user says are skipped (the case contract forbids them anyway). Holdout
    cases (``split: holdout``) are left out unless named in ``holdout``, as ``judgekit grade`` leaves them
    out without ``--holdout``.

    Args:
        cases: The golden cases: a loaded set (its reviewed cases), a mapping from id to case, or cases.
        holdout: Ids of the holdout cases to make samples of too.

    Raises:
        JudgekitError: When a ``holdout`` name is not a holdout case given.
    """
    out: list[Sample] = []
    for case in _case_map(cases, holdout)[0].values():
        opening = case.opening()
        if not opening:
            continue
        target = case.expected.reference_answer if case.expected and case.expected.reference_answer else ""
        out.append(Sample(input=opening, target=target, id=case.id, metadata={"case_id": case.id}))
    return out


def _is_unscored(value: object) -> bool:
    import math

    return isinstance(value, float) and math.isnan(value)


@score_reducer(name="judgekit_pass_hat_k")
def pass_hat_k_reducer(k: int, *, undecided: UndecidedPolicy) -> ScoreReducer:
    """An epoch reducer: pass^k of one sample over its epochs (the chance that k fresh epochs all pass).

    An epoch is a trial; an **unscored** epoch (its grading was ``insufficient_information``, ``error`` or
    ``not_evaluated``, see :func:`score_from_grade`) is an undecided trial, and ``undecided`` says how it
    counts (:data:`judgekit.stats.UndecidedPolicy`, the same policy as ``judgekit report --undecided`` and
    :func:`judgekit.integrations.taubench.pass_hat_k_table`):

    * ``"fail"``: an epoch that did not pass: ``n`` is every epoch, ``c`` the ``CORRECT`` ones;
    * ``"exclude"``: left out of ``n``, as Inspect's own metrics leave unscored values out.

    The value is ``C(c, k) / C(n, k)`` (:func:`judgekit.stats.pass_hat_k_per_task`); Inspect's ``accuracy``
    over samples then gives the task's pass^k. With fewer than ``k`` counted epochs the sample is unscored
    (``insufficient_epochs``), never a 0 or a 1, so Inspect leaves it out of the mean as the run report
    leaves out a task with fewer than k counted trials. The reduced score's metadata holds ``k``, the policy
    and the epoch counts (``epochs``, ``scored``, ``passed``, ``unscored``, ``counted``).

    Args:
        k: Epochs that must all pass (``>= 1``).
        undecided: How an unscored epoch counts; required, so the choice is always visible.

    Raises:
        JudgekitError: When ``k < 1`` or ``undecided`` is not a policy.
    """
    from judgekit.stats import check_undecided_policy, pass_hat_k_per_task

    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise JudgekitError(f"pass_hat_k_reducer(k={k!r}): k must be an integer of at least 1")
    try:
        policy = check_undecided_policy(undecided)
    except ValueError as exc:
        raise JudgekitError(f"pass_hat_k_reducer: {exc}") from None

    def reduce(scores: list[Score]) -> Score:
        scored = [s for s in scores if not _is_unscored(s.value)]
        passed = sum(1 for s in scored if s.value == CORRECT)
        unscored = len(scores) - len(scored)
        counted = len(scores) if policy == "fail" else len(scored)
        metadata = {
            "k": k,
            "undecided": policy,
            "epochs": len(scores),
            "scored": len(scored),
            "passed": passed,
            "unscored": unscored,
            "counted": counted,
        }
        how = (
            f"{unscored} unscored epoch(s) counted as not passing (undecided='fail')"
            if policy == "fail"
            else f"{unscored} unscored epoch(s) left out (undecided='exclude')"
        )
        if counted < k:
            return Score.unscored(
                reason="insufficient_epochs",
                explanation=(
                    f"{counted} counted epoch(s) of {len(scores)} ({how}); pass^{k} needs at least {k}"
                ),
                metadata=metadata,
            )
        value = float(
            pass_hat_k_per_task([len(scores)], [passed], k, undecided_counts=[unscored], undecided=policy)[0]
        )
        return Score(
            value=value,
            explanation=f"pass^{k} = C({passed}, {k}) / C({counted}, {k}) = {value:.3f} ({how})",
            metadata=metadata,
        )

    return reduce
