"""The layered verdict: every deterministic layer on one trial, and gates combined with a quality score.

:func:`deterministic_checks` runs every registered layer (:mod:`judgekit.graders.registry`: the end state,
the forbidden rules, the expected route, the texts, the fixture, then the optional and registered ones) on
one (case, transcript) pair and returns their :class:`~judgekit.verdict.CheckResult` list.
The judge-backed rubric layer (:mod:`judgekit.graders.rubric`, async) returns checks of the same type; the
runner hands both lists to :func:`combine`, which decides the case verdict from the **gates** only (state,
collateral changes, forbidden rules, route, must-not-mention, critical turns, critical rubric criteria: every
check with ``gate=True``) through :func:`~judgekit.verdict.combine_gate_verdicts`, and computes the
**quality** score as the weighted mean of the scored checks that do not gate. Quality never offsets a
gate: a case with a failed gate fails at any quality.

States are resolved by a :class:`~judgekit.state.provider.StateProvider` passed in by the caller (graders
read no files): fixture paths in cases are relative to the golden set's root, state paths in transcripts
relative to the transcript file's folder. A state that cannot be loaded never raises here: the checks that
need it report ``error`` with the reason.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from judgekit.cases import Case
from judgekit.errors import JudgekitError
from judgekit.graders.context import LayerContext
from judgekit.graders.contract import (
    CONTRACT_VERSION,
    GraderSpec,
    Layer,
    UntrustedPolicy,
    effective_verdict,
    settle,
    stated_expectations,
)
from judgekit.graders.grounding import GroundingMode
from judgekit.graders.registry import (
    layer_info,
    layer_specs,
    registered_layers,
    restrict_to_supported,
    running_layers,
)
from judgekit.graders.unavailable import diagnose_unavailable_data
from judgekit.state.provider import StateProvider
from judgekit.transcript import Transcript
from judgekit.verdict import (
    CheckResult,
    Grade,
    Trust,
    Verdict,
    combine_gate_verdicts,
    count_verdicts,
)

if TYPE_CHECKING:
    from judgekit.graders.rubric import RubricGrader

GivenChecks = Mapping[tuple[str, int], Sequence[CheckResult] | BaseException]
"""Deterministic checks computed elsewhere (``judgekit grade --ray``), by trial key ``(case id, trial)``: the
checks the deterministic layers gave that trial, or the exception they raised there (raised again here, so
the trial is an ``error`` as in process)."""

__all__ = [
    "GivenChecks",
    "LayeredGrader",
    "UntrustedPolicy",
    "combine",
    "deterministic_checks",
    "grade",
    "reference_checks",
]


# --------------------------------------------------------------------------- deterministic layers


def _options(
    grounding: GroundingMode | None, layers: Mapping[str, Mapping[str, JsonValue]] | None
) -> dict[str, Mapping[str, JsonValue]]:
    """The optional layers a grading asks for, by name, with their arguments."""
    options: dict[str, Mapping[str, JsonValue]] = (
        {} if grounding is None else {"grounding": {"mode": grounding}}
    )
    options.update(layers or {})
    return options


def deterministic_checks(
    case: Case,
    transcript: Transcript,
    *,
    states: StateProvider,
    grounding: GroundingMode | None = None,
    require_fixture_record: bool = False,
    layers: Mapping[str, Mapping[str, JsonValue]] | None = None,
) -> list[CheckResult]:
    """Run every registered layer that grades (:func:`judgekit.graders.registry.running_layers`) on one trial.

    Pure with respect to its inputs: the case, the transcript and the snapshots are never modified. Bad
    input never raises: a missing or unreadable state, arguments that are not valid JSON or a rule that
    does not compile become ``error`` checks with the reason.

    Args:
        case: The case.
        transcript: The trial to grade.
        states: Resolves the initial, final, expected and reference states.
        grounding: When given, also check that the case's expected sources were retrieved or cited
            (:func:`judgekit.graders.grounding.check_grounding`, scored) in this mode.
        require_fixture_record: Make a trial that records nothing about its starting state an ``error``
            of the fixture check (:func:`judgekit.graders.fixture.check_fixture`).
        layers: The optional registered layers to run too, by name, with their arguments (tau-bench's
            ``{"tau-bench": {"reward": "current"}}``); ``None`` runs none.

    Returns:
        The checks of every layer, in registry order: state, rules, route, text, fixture, grounding, then
        the registered layers. A layer the case does not use appears as one ``not_evaluated`` check. The
        fixture check is left out when the state layer already reported the trial's start
        (``state:initial``). A transcript of another case is one ``case`` error check.
    """
    if transcript.case_id != case.id:
        return [
            CheckResult(
                check_id="case",
                layer="case",
                verdict=Verdict.ERROR,
                reason=f"the transcript is for case '{transcript.case_id}', not '{case.id}'",
            )
        ]
    context = LayerContext(
        states=states, options=_options(grounding, layers), require_fixture_record=require_fixture_record
    )
    out: list[CheckResult] = []
    for layer in running_layers(context):
        out.extend(layer.checks(case, transcript, context.after(tuple(out))))
    return out


# --------------------------------------------------------------------------- combining


def combine(
    case: Case,
    trial: int,
    checks: Sequence[CheckResult],
    *,
    untrusted: UntrustedPolicy = "withhold",
    grounding: bool = False,
    transcript: Transcript | None = None,
) -> Grade:
    """Combine checks of every layer (deterministic and rubric) into the trial's grade, by the contract.

    The gates decide first (:func:`~judgekit.verdict.combine_gate_verdicts` over each gate's effective
    verdict under ``untrusted``: fail > error > insufficient_information > pass; not_evaluated gates are
    ignored); then the grading contract (:func:`judgekit.graders.contract.settle`) keeps a case from
    passing unless every expectation it states was decided. The quality score is the weighted mean of
    ``score`` over checks that do not gate and have a score; checks in ``error`` or without a score are
    left out of it (never counted as 0 or 1) and counted in ``metadata``. It is ``None`` when nothing was
    scored, and it never changes the verdict. Given the transcript, a failed trial whose agent went on
    after a tool answered with an error or no record gets the ``unavailable_data`` diagnosis check
    (:func:`judgekit.graders.unavailable.diagnose_unavailable_data`: no gate, no score, after the verdict).

    Args:
        case: The case graded.
        trial: The trial number (1-based).
        checks: Every check of the trial.
        untrusted: What a verdict of an untrusted judge (no calibration record trusting its exact
            fingerprint) may do (:data:`~judgekit.graders.contract.UntrustedPolicy`); by default
            (``withhold``) it decides nothing.
        grounding: Whether grounding was checked (then the case's expected sources are expectations).
        transcript: The trial, for the ``unavailable_data`` diagnosis; ``None`` makes none.

    Returns:
        The grade, with ``reason`` saying why the contract withheld a pass, and ``metadata`` holding
        ``gate_counts``, ``quality_basis``, ``untrusted_policy``, ``untrusted_gates`` (gates whose judge is
        untrusted), ``untrusted_verdicts`` (checks whose verdict counted although their judge is
        untrusted: non-zero only under ``count`` and ``fail_only``) and ``expectations`` (stated, decided,
        undecided keys).
    """
    gates = [c for c in checks if c.gate]
    effective = [effective_verdict(c, untrusted) for c in gates]
    expectations = stated_expectations(case, grounding=grounding)
    settled = settle(combine_gate_verdicts(effective), expectations, checks, untrusted=untrusted)
    diagnosis = diagnose_unavailable_data(settled.verdict, transcript) if transcript is not None else None
    if diagnosis is not None:
        checks = [*checks, diagnosis]
    scored = [c for c in checks if not c.gate and c.score is not None and c.weight > 0]
    if untrusted != "count":
        scored = [c for c in scored if c.trust is not Trust.UNTRUSTED]
    scored_ids = {id(c) for c in scored}
    total = sum(c.weight for c in scored)
    quality = sum(c.weight * (c.score or 0.0) for c in scored) / total if total > 0 else None
    unscored = [c.check_id for c in checks if not c.gate and id(c) not in scored_ids]
    counted_untrusted = [
        c.check_id
        for c in checks
        if c.trust is Trust.UNTRUSTED
        and c.verdict in (Verdict.PASS, Verdict.FAIL)
        and effective_verdict(c, untrusted) is c.verdict
        and (c.gate or id(c) in scored_ids)
    ]
    metadata: dict[str, Any] = {
        "gate_counts": {str(k): v for k, v in count_verdicts(effective).items()},
        "quality_basis": {"scored": len(scored), "weight": total, "unscored": unscored},
        "untrusted_policy": untrusted,
        "untrusted_gates": [c.check_id for c in gates if c.trust is Trust.UNTRUSTED],
        "untrusted_verdicts": counted_untrusted,
        "expectations": {
            "stated": settled.stated,
            "decided": settled.decided,
            "undecided": list(settled.undecided),
        },
    }
    return Grade(
        case_id=case.id,
        trial=trial,
        verdict=settled.verdict,
        reason=settled.reason,
        quality=quality,
        checks=tuple(checks),
        metadata=metadata,
    )


def grade(case: Case, transcript: Transcript, *, states: StateProvider) -> Grade:
    """Grade one trial on the deterministic layers alone (``combine(deterministic_checks(...))``)."""
    from judgekit.fidelity import lost_by

    checks = restrict_to_supported(deterministic_checks(case, transcript, states=states), lost_by(transcript))
    return combine(case, transcript.trial, checks, transcript=transcript)


class LayeredGrader:
    """Every registered layer, plus the rubric layer when one is given, combined into one grade.

    This is the one place the layers are put together: the runner (``judgekit grade``), the demo and the
    integrations (Inspect AI, pytest, promptfoo, tau-bench) all grade through it. A trial imported from a
    lossy trace is graded only by the layers the trace supports; the other layers' verdicts become
    ``insufficient_information`` (see :func:`judgekit.graders.registry.restrict_to_supported`). It
    implements :class:`judgekit.graders.contract.Grader`.

    Args:
        root: The golden set's root: case fixture paths (``initial_state``, ``expected_state.snapshot``,
            ``reference_solution``) resolve against it. Ignored when ``states`` is given.
        states: A ready state provider (for snapshots already in memory, or a shared cache).
        transcript_dir: Folder that relative state paths inside transcripts resolve against.
        rubric: The judge-backed rubric grader, or ``None`` for the deterministic layers alone.
        deterministic: Run the deterministic layers (turn off to grade with the rubric layer alone).
        untrusted: What a verdict of an untrusted judge may do (see :func:`combine`); by default it
            decides nothing.
        grounding: Also check expected sources, in this mode (see :mod:`judgekit.graders.grounding`).
        layers: The optional registered layers to run too, by name, with their arguments (tau-bench's
            ``{"tau-bench": {"reward": "current"}}``); they are part of the spec.
        executor: Run the deterministic layers there (one worker: the state provider is not thread-safe),
            concurrently with the rubric layer's HTTP calls; ``None`` runs them inline.
        given_checks: The deterministic layers' checks already computed elsewhere for some trials (a Ray
            cluster's): a trial found there is not checked again here; ``None`` or a trial not in it is
            checked here.

    Raises:
        JudgekitError: When neither layer is enabled, or ``layers`` names a layer that is not a registered
            optional layer.
    """

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        states: StateProvider | None = None,
        transcript_dir: str | os.PathLike[str] | None = None,
        rubric: RubricGrader | None = None,
        deterministic: bool = True,
        untrusted: UntrustedPolicy = "withhold",
        grounding: GroundingMode | None = None,
        layers: Mapping[str, Mapping[str, JsonValue]] | None = None,
        executor: Executor | None = None,
        given_checks: GivenChecks | None = None,
    ) -> None:
        root = Path(root) if root is not None else None
        transcript_dir = Path(transcript_dir) if transcript_dir is not None else None
        if not deterministic and rubric is None:
            raise JudgekitError(
                "a grader with neither the deterministic layers nor a rubric grades nothing: "
                "keep deterministic=True or pass rubric=RubricGrader(...)"
            )
        for name in layers or {}:
            info = layer_info(name)
            if info is None or not info.optional or name == Layer.GROUNDING:
                known = [i.name for i in registered_layers() if i.optional and i.name != Layer.GROUNDING]
                raise JudgekitError(
                    f"layers={{{name!r}: ...}}: '{name}' is not a registered optional layer (grounding takes "
                    f"grounding=MODE); name one of: {', '.join(known) or 'none is registered'}"
                )
        self.states = states if states is not None else StateProvider(root, transcript_dir=transcript_dir)
        self.rubric = rubric
        self.deterministic = deterministic
        self.untrusted: UntrustedPolicy = untrusted
        self.grounding: GroundingMode | None = grounding
        self.layers: dict[str, Mapping[str, JsonValue]] = dict(layers or {})
        self.executor = executor
        self.given_checks = given_checks

    def checks(self, case: Case, transcript: Transcript) -> list[CheckResult]:
        """The deterministic layers' checks (empty when they are turned off; given ones when given).

        Raises:
            BaseException: The exception the deterministic layers raised where the given checks were
                computed.
        """
        if not self.deterministic:
            return []
        given = self.given_checks.get((case.id, transcript.trial)) if self.given_checks is not None else None
        if isinstance(given, BaseException):
            raise given
        if given is not None:
            return list(given)
        return deterministic_checks(
            case, transcript, states=self.states, grounding=self.grounding, layers=self.layers
        )

    @property
    def spec(self) -> GraderSpec:
        """What identifies this grader: the contract, each layer it runs, the judge's fingerprint.

        The parts are in registry order (:func:`judgekit.graders.registry.layer_specs`), the judge's at the
        ``rubric`` layer's place.
        """
        context = LayerContext(
            states=self.states, judge=self.rubric, options=_options(self.grounding, self.layers)
        )
        parts = layer_specs(context, deterministic=self.deterministic)
        return GraderSpec(
            name=self.name,
            version=CONTRACT_VERSION,
            args={"untrusted": self.untrusted, "deterministic": self.deterministic},
            parts=tuple(parts),
        )

    @property
    def judge_fingerprint(self) -> str | None:
        """The judge's fingerprint (SHA-256 hex): what a calibration record must name to trust this judge.

        ``None`` when the grader has no judge (the deterministic layers alone).
        """
        return self.rubric.fingerprint if self.rubric is not None else None

    name = "layered"
    """The spec name of this grader class (subclasses that add checks name themselves)."""

    async def grade(self, case: Case, transcript: Transcript) -> Grade:
        """Grade one trial on every enabled layer, settled by the grading contract."""
        import asyncio

        from judgekit.fidelity import lost_by
        from judgekit.graders.rubric import JudgmentCost

        cost = JudgmentCost()
        if self.rubric is None:
            checks = self.checks(case, transcript)
        elif self.executor is not None:
            loop = asyncio.get_running_loop()
            det, (judged, cost) = await asyncio.gather(
                loop.run_in_executor(self.executor, self.checks, case, transcript),
                self.rubric.assess(case, transcript),
            )
            checks = [*det, *judged]
        else:
            judged, cost = await self.rubric.assess(case, transcript)
            checks = [*self.checks(case, transcript), *judged]
        checks = restrict_to_supported(checks, lost_by(transcript))
        result = combine(
            case,
            transcript.trial,
            checks,
            untrusted=self.untrusted,
            grounding=self.grounding is not None,
            transcript=transcript,
        )
        metadata = {**result.metadata, "cost_usd": cost.usd}
        if cost.unknown_reason is not None:
            metadata["cost_unknown_reason"] = cost.unknown_reason
        if self.rubric is not None:
            metadata["judge"] = {"fingerprint": self.rubric.fingerprint, "label": self.rubric.label}
        return result.model_copy(update={"metadata": metadata})


def reference_checks(case: Case, *, states: StateProvider) -> tuple[Transcript | None, list[CheckResult]]:
    """Run every deterministic layer on a case's reference solution.

    Returns:
        ``(reference transcript, checks)``; when the reference cannot be read, ``(None, [error check])``.
    """
    ref = states.reference(case)
    if isinstance(ref, str):
        return None, [CheckResult(check_id="reference", layer="reference", verdict=Verdict.ERROR, reason=ref)]
    return ref, deterministic_checks(case, ref, states=states.reference_provider(case))
