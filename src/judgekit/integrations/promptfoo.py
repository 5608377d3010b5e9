"""promptfoo: a Python assertion that grades a provider's output with judgekit's layers.

Point a promptfoo ``python`` assertion at this module (``file://`` path of this file, or of a one-line
file that re-exports :func:`get_assert`); promptfoo calls ``get_assert(output, context)`` with the
provider's output and its assertion context (``prompt``, ``vars``, ``test``, ``config``, ...).

What is graded:

* **the conversation**: ``output`` may be a conversation (JSON text or an already parsed object): a
  list of OpenAI chat or Anthropic messages, or ``{"messages": [...], "final_state": ..., ...}``; it is
  read by :func:`judgekit.formats.adapters.to_transcript` and refused, with what was expected, when it is in
  neither shape. Plain text is read as the agent's reply to ``context["prompt"]``.
* **the case**: the golden set named by ``config.cases`` (a folder or case file; relative paths resolve
  against promptfoo's working folder) and the case ``config.case_id``, else ``vars.case_id``. A holdout
  case (``split: holdout``) is graded only when the assertion names it in ``config.holdout`` (an id or a
  list of ids); otherwise the result is an ``ERROR`` saying so, as ``judgekit grade`` leaves holdouts out
  without ``--holdout`` (:func:`judgekit.caseset.select_cases`).
* **states**: ``final_state`` / ``initial_state`` from the conversation object, else ``vars``, else
  ``config`` (inline ``{table: {key: row}}`` data or a path).

The result has promptfoo's ``GradingResult`` shape:

* ``pass``: true only when the judgekit verdict is ``pass``;
* ``score``: the quality score when the case passed and something was scored, 1.0 for a pass without
  one, 0.0 otherwise;
* ``reason``: :func:`~judgekit.integrations.grading.explain` of the grade (failed gates, the state diff,
  the offending call with its index and arguments);
* ``componentResults``: one result per decided check (``pass``, ``score``, ``reason``);
* ``namedScores``: ``judgekit.<check id>`` per decided check and ``judgekit.quality`` when scored.

promptfoo knows only pass and fail. A judgekit ``insufficient_information``, ``error`` or
``not_evaluated`` verdict is therefore reported as ``pass: false`` whose ``reason`` starts
``UNDECIDED``, ``ERROR`` or ``NOT EVALUATED`` (never as a pass), with ``metadata.judgekit_verdict``
holding the real state, and undecided or errored checks are left out of ``namedScores`` (never counted
as 0 or 1). A configuration mistake (no case id, unknown case, unreadable case set) is reported the same
way, with what to do.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgekit.advice import advice_for
from judgekit.errors import JudgekitError, LocatedError, did_you_mean
from judgekit.io.documents import load_json_bounded
from judgekit.verdict import Grade, Verdict

if TYPE_CHECKING:
    from judgekit.cases import Case
    from judgekit.caseset import CaseSet
    from judgekit.transcript import Transcript

__all__ = ["get_assert", "grade_output", "grading_result"]

_LABEL = {
    Verdict.INSUFFICIENT_INFORMATION: "UNDECIDED",
    Verdict.ERROR: "ERROR",
    Verdict.NOT_EVALUATED: "NOT EVALUATED",
}


@lru_cache(maxsize=16)
def _load_cases(path: str) -> CaseSet:
    from judgekit.caseset import load_case_set

    case_set = load_case_set(Path(path))
    if case_set.problems:
        shown = "; ".join(str(p) for p in case_set.problems[:3])
        raise JudgekitError(
            f"the case set {path} has {len(case_set.problems)} problem(s): {shown}; "
            "run 'judgekit cases check' on it and fix them"
        )
    return case_set


def _lookup(name: str, context: Mapping[str, Any], conversation: Mapping[str, Any] | None) -> Any:
    for source in (conversation, context.get("vars"), context.get("config")):
        if isinstance(source, Mapping) and source.get(name) is not None:
            return source[name]
    return None


def _case(context: Mapping[str, Any]) -> tuple[Case, Path]:
    config = context.get("config") or {}
    variables = context.get("vars") or {}
    cases = config.get("cases") if isinstance(config, Mapping) else None
    if not cases:
        raise JudgekitError(
            "the judgekit assertion needs 'config: {cases: <golden set folder or case file>}' in promptfoo's "
            "assert entry"
        )
    case_id = (config.get("case_id") if isinstance(config, Mapping) else None) or (
        variables.get("case_id") if isinstance(variables, Mapping) else None
    )
    if not case_id:
        raise JudgekitError(
            "no judgekit case id: set 'case_id' in the test's vars or in the assertion's config"
        )
    from judgekit.caseset import select_cases

    holdout = config.get("holdout") if isinstance(config, Mapping) else None
    names = [str(holdout)] if isinstance(holdout, str | int) else [str(h) for h in holdout or ()]
    case_set = _load_cases(str(Path(str(cases)).resolve()))
    selection = select_cases(case_set, names, option="config.holdout")
    for case in selection.cases:
        if case.id == str(case_id):
            return case, case_set.root
    if str(case_id) in selection.left_out:
        raise JudgekitError(
            f"case '{case_id}' is a holdout case (split: holdout), kept out of routine runs; name it in the "
            f"assertion's config ('holdout: [{case_id}]') to grade it"
        )
    reviewed = sorted(c.case.id for c in case_set.cases if not c.candidate)
    hint = did_you_mean(str(case_id), reviewed)
    raise JudgekitError(
        f"no case '{case_id}' in {cases}{hint} (known: {', '.join(reviewed[:10])}); check the test's case_id"
    )


def _conversation(output: Any) -> Any:
    if isinstance(output, str):
        stripped = output.strip()
        if stripped[:1] in "[{":
            try:
                return load_json_bounded(stripped, source=None, what="the output")
            except LocatedError:
                return output
    return output


def _transcript(output: Any, context: Mapping[str, Any], case: Case) -> Transcript:
    from judgekit.formats.adapters import openai_chat_transcript, to_transcript

    data = _conversation(output)
    conversation = data if isinstance(data, Mapping) else None
    states = {
        name: value
        for name in ("initial_state", "final_state")
        if (value := _lookup(name, context, conversation)) is not None
    }
    if isinstance(data, str):
        prompt = context.get("prompt")
        messages: list[dict[str, Any]] = []
        if isinstance(prompt, str) and prompt:
            messages.append({"role": "user", "content": prompt})
        messages.append({"role": "assistant", "content": data})
        return openai_chat_transcript(messages, case_id=case.id, **states)
    if conversation is not None:
        extra = {k: v for k, v in conversation.items() if k not in {"initial_state", "final_state"}}
        return to_transcript(extra, case_id=case.id, **states)
    return to_transcript(data, case_id=case.id, **states)


def grade_output(output: Any, context: Mapping[str, Any], *, grader: object = None) -> Grade:
    """Grade one promptfoo output with judgekit (see the module docs for what is read from where).

    Args:
        output: The provider's output.
        context: promptfoo's assertion context.
        grader: Anything :func:`~judgekit.integrations.grading.as_grader` accepts (default: every
            deterministic layer with fixtures resolved against the case set's root).

    Raises:
        JudgekitError: On a configuration mistake or a conversation in an unknown shape.
    """
    from judgekit.api.grading import grade
    from judgekit.integrations.grading import as_grader

    case, root = _case(context)
    transcript = _transcript(output, context, case)
    with advice_for("promptfoo"):  # a reason's advice names the assertion's grader, not CLI flags
        return grade(case, transcript, grader=as_grader(grader, root=root))


def grading_result(grade: Grade) -> dict[str, Any]:
    """A judgekit grade in promptfoo's ``GradingResult`` shape (see the module docs)."""
    passed = grade.verdict is Verdict.PASS
    score = (grade.quality if grade.quality is not None else 1.0) if passed else 0.0
    reason = grade.explain()
    if grade.verdict in _LABEL:
        reason = f"{_LABEL[grade.verdict]} (judgekit could not decide; this is not a pass): {reason}"
    components: list[dict[str, Any]] = []
    named: dict[str, float] = {}
    for check in grade.checks:
        if check.verdict not in (Verdict.PASS, Verdict.FAIL):
            continue
        ok = check.verdict is Verdict.PASS
        value = check.score if check.score is not None else (1.0 if ok else 0.0)
        components.append(
            {
                "pass": ok,
                "score": value,
                "reason": f"{check.check_id}: {check.reason or ('passed' if ok else 'failed')}",
                "assertion": {"type": "python", "value": f"judgekit:{check.check_id}"},
            }
        )
        named[f"judgekit.{check.check_id}"] = value
    if grade.quality is not None:
        named["judgekit.quality"] = grade.quality
    return {
        "pass": passed,
        "score": score,
        "reason": reason,
        "componentResults": components,
        "namedScores": named,
        "metadata": {
            "judgekit_verdict": grade.verdict.value,
            "case_id": grade.case_id,
            "trial": grade.trial,
            "gate_counts": grade.metadata.get("gate_counts"),
        },
    }


def _configuration_error(message: str) -> dict[str, Any]:
    return {
        "pass": False,
        "score": 0.0,
        "reason": f"ERROR (judgekit could not grade; this is not a pass): {message}",
        "componentResults": [],
        "namedScores": {},
        "metadata": {"judgekit_verdict": Verdict.ERROR.value, "error": message},
    }


def get_assert(output: Any, context: Mapping[str, Any]) -> dict[str, Any]:
    """The entry point promptfoo calls: grade ``output`` and return a ``GradingResult`` dictionary."""
    try:
        grade = grade_output(output, context)
    except JudgekitError as exc:
        return _configuration_error(exc.message)
    return grading_result(grade)
