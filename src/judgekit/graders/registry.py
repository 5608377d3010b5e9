"""The layer registry: which grader layers exist, in which order, and what each needs.

Every layer that grades is one object with one protocol (:class:`~judgekit.graders.context.GraderLayer`:
an ``info`` and ``checks(case, transcript, context)``). The core layers are listed here, in the order
their checks and specs have always had: ``state``, ``rules``, ``route``, ``text``, ``fixture``, then
``grounding`` (optional: it runs when a grading gives its mode). Layers whose checks other code records
are known by their :class:`~judgekit.graders.contract.LayerInfo` alone: ``rubric`` (the judge, graded
asynchronously beside the deterministic layers), ``case``, ``reference`` and ``runner`` (bookkeeping).

A layer from outside the core (tau-bench's reward conditions and the verdicts an imported harness stored,
from :mod:`judgekit.integrations.taubench`; a user's own layer) is one file plus one
:func:`register_layer` call. From then on every grading runs it after the core layers (an optional one
only in the gradings that ask for it by name), its checks gate and score like any other, its spec is part
of the grader's fingerprint, a lossy trace restricts it by its needs (:func:`restrict_to_supported`), and
reports show it under its name. Result lines store a layer as its name, so lines naming a layer this
process has not registered still read: :func:`layer_of` is then ``None`` and the check counts like any
other gate or scored check.

Order: checks come in registry order (:func:`running_layers`), the judge's last (they are produced
concurrently with the deterministic layers); specs come in registry order with the judge's at the
``rubric`` layer's place (:func:`layer_specs`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from judgekit.errors import JudgekitError
from judgekit.graders.context import GraderLayer, LayerContext
from judgekit.graders.contract import GraderSpec, Layer, LayerInfo, describe_layer, layer_spec
from judgekit.graders.fixture import FixtureLayer
from judgekit.graders.grounding import GroundingLayer
from judgekit.graders.route import RouteLayer
from judgekit.graders.rules import RulesLayer
from judgekit.graders.state import StateLayer
from judgekit.graders.text import TextLayer
from judgekit.transcript import Capability
from judgekit.verdict import CheckResult, Evidence, Verdict

__all__ = [
    "CORE_LAYERS",
    "RECORDED_LAYERS",
    "graded_layers",
    "layer_info",
    "layer_of",
    "layer_specs",
    "register_layer",
    "registered_layers",
    "restrict_to_supported",
    "running_layers",
    "unregister_layer",
    "unsupported_layers",
]

CORE_LAYERS: tuple[GraderLayer, ...] = (
    StateLayer(),
    RulesLayer(),
    RouteLayer(),
    TextLayer(),
    FixtureLayer(),
    GroundingLayer(),
)
"""The core layers that grade, in order (the order of their checks and of their specs)."""

RECORDED_LAYERS: tuple[LayerInfo, ...] = (
    describe_layer(
        Layer.RUBRIC.value,
        (Capability.CONVERSATION,),
        "rubric criteria judged by an LLM",
        judge=True,
    ),
    describe_layer(Layer.CASE.value, (), "the transcript belongs to the case", bookkeeping=True),
    describe_layer(
        Layer.REFERENCE.value, (), "the case's reference solution could be read", bookkeeping=True
    ),
    describe_layer(Layer.RUNNER.value, (), "the grader ran without raising", bookkeeping=True),
)
"""The core layers whose checks other code records (the judge; bookkeeping of the grading machinery)."""

_registered: list[GraderLayer | LayerInfo] = []
"""The layers registered from outside the core, in registration order."""


def _info(entry: GraderLayer | LayerInfo) -> LayerInfo:
    return entry if isinstance(entry, LayerInfo) else entry.info


def register_layer(layer: GraderLayer | LayerInfo) -> None:
    """Register a layer from outside the core: a layer that grades, or the info of checks recorded elsewhere.

    Registering the same object again does nothing (a module that registers its layer may be imported
    twice).

    Args:
        layer: A :class:`~judgekit.graders.context.GraderLayer` (it runs after the core layers, in
            registration order: in every grading, or when optional in those that ask for it by name), or
            the :class:`~judgekit.graders.contract.LayerInfo` of a layer whose checks other code records
            (a harness's stored verdicts).

    Raises:
        JudgekitError: When the name is empty or holds a comma (reports list layers comma-separated), or
            another layer already has it.
    """
    info = _info(layer)
    if not info.name.strip() or "," in info.name:
        raise JudgekitError(f"layer name {info.name!r}: give a non-empty name without commas")
    if info.version < 1:
        raise JudgekitError(f"layer '{info.name}': version {info.version} is not a version (1 or more)")
    if any(entry is layer for entry in _registered):
        return
    taken = layer_info(info.name)
    if taken is not None:
        raise JudgekitError(
            f"a layer named '{info.name}' is already registered ({taken.summary}); give yours another name"
        )
    _registered.append(layer)


def unregister_layer(name: str) -> None:
    """Remove a layer registered with :func:`register_layer`; later gradings no longer run or know it.

    Raises:
        JudgekitError: When no layer registered from outside the core has that name (core layers cannot be
            removed).
    """
    kept = [entry for entry in _registered if _info(entry).name != name]
    if len(kept) == len(_registered):
        raise JudgekitError(f"no layer named '{name}' was registered (core layers cannot be unregistered)")
    _registered[:] = kept


def graded_layers() -> tuple[GraderLayer, ...]:
    """Every layer that grades, in order: the core layers, then the registered ones."""
    return (*CORE_LAYERS, *(entry for entry in _registered if not isinstance(entry, LayerInfo)))


def registered_layers() -> tuple[LayerInfo, ...]:
    """Every known layer, in order: the core layers that grade, those recorded elsewhere, then the rest."""
    return (
        *(layer.info for layer in CORE_LAYERS),
        *RECORDED_LAYERS,
        *(_info(entry) for entry in _registered),
    )


def layer_info(name: str) -> LayerInfo | None:
    """The info of the layer with this name, or ``None`` when no layer of that name is registered."""
    return next((info for info in registered_layers() if info.name == name), None)


def layer_of(check: CheckResult) -> LayerInfo | None:
    """The info of a check's layer, or ``None`` for a layer name nobody registered.

    A user's own grading function may report any layer name, and a result line may name a layer this
    process has not registered; such checks are graded like any other gate or scored check but no
    lossy-trace restriction applies to them.
    """
    return layer_info(check.layer)


def running_layers(context: LayerContext) -> tuple[GraderLayer, ...]:
    """The layers that grade in this grading, in order (optional ones only when the context asks for them)."""
    return tuple(layer for layer in graded_layers() if context.runs(layer.info))


def layer_specs(context: LayerContext, *, deterministic: bool = True) -> list[GraderSpec]:
    """The specs of the layers a grading runs, in registry order, with the judge's at the ``rubric`` place.

    Args:
        context: The grading's context (its judge and the optional layers it asks for, with their
            arguments, which are part of each layer's spec).
        deterministic: False when the layers that grade are turned off (the judge alone).

    Returns:
        One spec per running layer (name, version, arguments), and the judge's spec when it has one.
    """
    graded = {layer.info.name: layer for layer in graded_layers()} if deterministic else {}
    out: list[GraderSpec] = []
    for info in registered_layers():
        if info.name == Layer.RUBRIC:
            if context.judge is not None:
                out.append(context.judge.spec)
        elif info.name in graded and context.runs(info):
            out.append(layer_spec(info, **context.args(info)))
    return out


def unsupported_layers(lost: Mapping[Capability, str]) -> dict[str, str]:
    """The layers a trace cannot support, by name, with the reason, given what the trace lost.

    Args:
        lost: What the trace failed to record, by capability, with why (see
            :func:`judgekit.fidelity.lost_by`).

    Returns:
        Each registered layer one of whose needs is lost, in registry order, with the reasons joined;
        layers missing from the result are supported.
    """
    out: dict[str, str] = {}
    for info in registered_layers():
        reasons = [lost[need] for need in sorted(info.needs) if need in lost]
        if reasons:
            out[info.name] = "; ".join(dict.fromkeys(reasons))
    return out


def restrict_to_supported(
    checks: Sequence[CheckResult], lost: Mapping[Capability, str] | None
) -> list[CheckResult]:
    """Turn the verdicts of layers a lossy trace cannot support into ``insufficient_information``.

    A ``pass`` or ``fail`` from such a layer becomes ``insufficient_information`` (never ``pass``), with the
    reason and the original verdict kept as evidence. ``error``, ``not_evaluated`` and
    ``insufficient_information`` stay as they are, and so does every check of a supported layer or of a
    layer nobody registered.

    Args:
        checks: The checks of one trial.
        lost: What the trial's transcript failed to record (``None`` or empty: nothing was lost; the
            checks are returned as they are).

    Returns:
        New checks (inputs are never modified).
    """
    if not lost:
        return list(checks)
    unsupported = unsupported_layers(lost)
    out: list[CheckResult] = []
    for check in checks:
        why = unsupported.get(check.layer)
        if why is None or check.verdict not in (Verdict.PASS, Verdict.FAIL):
            out.append(check)
            continue
        note = Evidence(
            kind="note",
            summary=(
                f"the trace cannot support the {check.layer} layer; its {check.verdict.value} is not counted"
            ),
            data={"original_verdict": check.verdict.value, "original_reason": check.reason, "fidelity": why},
        )
        out.append(
            check.model_copy(
                update={
                    "verdict": Verdict.INSUFFICIENT_INFORMATION,
                    "reason": f"lossy trace: {why}",
                    "category": None,
                    "score": None,
                    "evidence": (*check.evidence, note),
                }
            )
        )
    return out
