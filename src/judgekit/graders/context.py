"""The one protocol of a grader layer, and the context every layer of one trial's grading shares.

A layer is an object with an ``info`` (:class:`~judgekit.graders.contract.LayerInfo`: its name, what it
needs, whether it is optional) and one method, ``checks(case, transcript, context)``, returning its
:class:`~judgekit.verdict.CheckResult` list (:class:`GraderLayer`). The registry
(:mod:`judgekit.graders.registry`) runs the registered layers in order, each with a
:class:`LayerContext`: the state provider, the judge when one grades too, the arguments of the optional
layers asked for, and the checks of the layers before it.

Facts several layers need (the case's compiled rules, the resolved states and their diff, the tool calls)
are computed once per trial through :meth:`LayerContext.shared` (:func:`trial_states`,
:func:`trial_calls`), so splitting the grading into layers costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol, TypeVar, cast

from pydantic import JsonValue

from judgekit.expressions import CompiledRules, RuleCompileError, compile_case_rules
from judgekit.state import Snapshot, StateDiff, diff_states

if TYPE_CHECKING:
    from judgekit.cases import Case
    from judgekit.graders.contract import GraderSpec, LayerInfo
    from judgekit.state.provider import StateProvider
    from judgekit.transcript import CallRecord, Transcript
    from judgekit.verdict import CheckResult

__all__ = ["GraderLayer", "Judge", "LayerContext", "TrialStates", "trial_calls", "trial_states"]

T = TypeVar("T")


class Judge(Protocol):
    """The judge-backed grader of a grading, as the layers see it (the rubric grader is one)."""

    @property
    def spec(self) -> GraderSpec:
        """What identifies the judge (its fingerprint is part of the grader's)."""
        ...


@dataclass(frozen=True)
class LayerContext:
    """What the layers grading one trial share.

    Attributes:
        states: Resolves the initial, final, expected and reference states (graders read no files).
        judge: The judge that grades the trial too, or ``None`` when the deterministic layers grade alone.
        options: The optional layers this grading runs, by name, each with its arguments (the grounding
            layer's ``{"mode": "cited"}``, tau-bench's ``{"reward": "current"}``); a layer that is not
            optional runs whatever this says. The arguments are part of the layer's spec.
        require_fixture_record: Make a trial that records nothing about its starting state an ``error``
            of the fixture check.
        earlier: The checks of the layers that ran before this one on the trial, in order.
    """

    states: StateProvider
    judge: Judge | None = None
    options: Mapping[str, Mapping[str, JsonValue]] = field(default_factory=dict)
    require_fixture_record: bool = False
    earlier: tuple[CheckResult, ...] = ()
    _shared: dict[object, tuple[object, object, object]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def runs(self, info: LayerInfo) -> bool:
        """Whether the layer runs in this grading: every layer that is not optional, and those asked for."""
        return not info.optional or info.name in self.options

    def args(self, info: LayerInfo) -> dict[str, JsonValue]:
        """The arguments the grading gives the layer (``{}`` when it gives none)."""
        return dict(self.options.get(info.name, {}))

    def after(self, earlier: tuple[CheckResult, ...]) -> LayerContext:
        """The same context for the next layer, which sees ``earlier`` (facts already computed are kept)."""
        return replace(self, earlier=earlier)

    def shared(
        self, compute: Callable[[Case, Transcript, LayerContext], T], case: Case, transcript: Transcript
    ) -> T:
        """``compute(case, transcript, self)``, computed once for this trial whichever layer asks first.

        Args:
            compute: A pure function of the trial (and of this context's states and options).
            case: The case.
            transcript: The trial.

        Returns:
            The value; a later call with the same function and the same case and transcript objects
            returns it again without computing it.
        """
        seen = self._shared.get(compute)
        if seen is not None and seen[0] is case and seen[1] is transcript:
            return cast(T, seen[2])
        value = compute(case, transcript, self)
        self._shared[compute] = (case, transcript, value)
        return value


class GraderLayer(Protocol):
    """A grader layer: what the registry runs on every trial (or on those that ask for it, when optional).

    A layer is pure: it never modifies the case, the transcript or a snapshot, and bad input is a
    verdict (an ``error`` check with the reason), never an exception. A layer the case gives nothing to
    check reports one ``not_evaluated`` check saying so.
    """

    @property
    def info(self) -> LayerInfo:
        """The layer's name, needs, version and whether it is optional."""
        ...

    def checks(self, case: Case, transcript: Transcript, context: LayerContext) -> list[CheckResult]:
        """The layer's checks on one trial, in a stable order."""
        ...


# --------------------------------------------------------------------------- facts several layers need


@dataclass(frozen=True)
class TrialStates:
    """The case's rules and the trial's states, resolved once for the state and rules layers.

    Attributes:
        compiled: The case's compiled rules, or ``None`` when they do not compile.
        rules_error: Why the rules do not compile (``None`` when they do).
        needs_state: True when a compiled rule reads state changes.
        resolved: True when the states were resolved (the case has an ``expected_state`` or a rule
            reads state changes); every other field below is then empty.
        initial: The state the trial started from, or ``None`` when unknown.
        fixture: What the case's fixture is: the snapshot, why it cannot be read, or ``None`` when the
            case names none.
        final: The trial's final state, or ``None`` when it cannot be read.
        missing: Why a state is missing, by role (``final``, ``initial``).
        changes: The diff from the initial to the final state (``ignore_fields`` left out), computed only
            when a rule or ``expected_state.changes`` needs it and both states are known.
    """

    compiled: CompiledRules | None
    rules_error: str | None
    needs_state: bool
    resolved: bool = False
    initial: Snapshot | None = None
    fixture: Snapshot | str | None = None
    final: Snapshot | None = None
    missing: Mapping[str, str] = field(default_factory=dict)
    changes: StateDiff | None = None


def trial_states(case: Case, transcript: Transcript, context: LayerContext) -> TrialStates:
    """Compile the case's rules and resolve the trial's states (a fact for :meth:`LayerContext.shared`).

    A state that cannot be loaded never raises: it is named in ``missing`` and the checks that need it
    report ``error``.
    """
    compiled: CompiledRules | None = None
    rules_error: str | None = None
    try:
        compiled = compile_case_rules(case)
    except RuleCompileError as exc:
        rules_error = "; ".join(p.message for p in exc.problems)
    spec = case.expected_state
    needs_state = compiled is not None and compiled.needs_state
    if spec is None and not needs_state:
        return TrialStates(compiled, rules_error, needs_state)
    missing: dict[str, str] = {}
    final: Snapshot | None = None
    final_or_reason = context.states.final(transcript)
    if isinstance(final_or_reason, str):
        missing["final"] = final_or_reason
    else:
        final = final_or_reason
    initial, fixture = context.states.initial(case, transcript)
    if initial is None:
        missing["initial"] = (
            fixture
            if isinstance(fixture, str)
            else "neither the case nor the transcript names an initial_state"
        )
    changes: StateDiff | None = None
    if (
        initial is not None
        and final is not None
        and (needs_state or (spec is not None and spec.changes is not None))
    ):
        changes = diff_states(initial, final, ignore_fields=spec.ignore_fields if spec is not None else ())
    return TrialStates(compiled, rules_error, needs_state, True, initial, fixture, final, missing, changes)


def trial_calls(case: Case, transcript: Transcript, context: LayerContext) -> list[CallRecord]:
    """The trial's tool calls with their results (a fact for :meth:`LayerContext.shared`)."""
    del case, context  # the calls are the transcript's alone
    return transcript.calls()
