"""The layered verdict: every deterministic layer on one trial, and gates combined with a quality score.

:func:`deterministic_checks` runs the end-state grader, the forbidden rules, the expected route and the
text checks on one (case, transcript) pair and returns their :class:`~judgekit.verdict.CheckResult` list.
The judge-backed rubric layer (:mod:`judgekit.graders.rubric`, async) returns checks of the same type; the
runner hands both lists to :func:`combine`, which decides the case verdict from the **gates** only (state,
collateral changes, forbidden rules, route, must-not-mention, critical turns, critical rubric criteria: every
check with ``gate=True``) through :func:`~judgekit.verdict.combine_gate_verdicts`, and computes the
**quality** score as the weighted mean of the scored checks that do not gate. Quality never offsets a
gate: a case with a failed gate fails at any quality.

States are resolved by a :class:`StateProvider`, the only part of this module that reads files: fixture
paths in cases are relative to the golden set's root, state paths in transcripts relative to the
transcript file's folder; loaded snapshots are cached by path. A state that cannot be loaded never raises
here: the checks that need it report ``error`` with the reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Executor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from judgekit.cases import Case
from judgekit.errors import JudgekitError
from judgekit.graders.fixture import check_fixture
from judgekit.graders.grounding import GroundingMode, check_grounding
from judgekit.graders.route import check_route
from judgekit.graders.rules import RuleCompileError, check_rules, compile_case_rules
from judgekit.graders.state import check_state
from judgekit.graders.text import check_text
from judgekit.state import Snapshot, StateDiff, diff_states, load_state, snapshot_from_data
from judgekit.transcript import StateRef, Transcript
from judgekit.verdict import (
    CheckResult,
    Evidence,
    Grade,
    Trust,
    Verdict,
    combine_gate_verdicts,
    count_verdicts,
)

if TYPE_CHECKING:
    from judgekit.graders.rubric import RubricGrader

__all__ = [
    "LayeredGrader",
    "StateProvider",
    "UntrustedPolicy",
    "combine",
    "deterministic_checks",
    "grade",
    "reference_checks",
]

UntrustedPolicy = Literal["count", "fail_only", "advisory"]
"""What a gate's verdict may do when its trust is ``untrusted`` (see :func:`combine`)."""


class StateProvider:
    """Resolves state references to snapshots, with a cache of everything loaded.

    Args:
        root: The golden set's root; case fixture paths (``initial_state``, ``expected_state.snapshot``,
            ``reference_solution``) are relative to it.
        transcript_dir: The folder of the transcript file being graded; transcript state paths are
            relative to it (absolute paths are used as they are).
        snapshots: Snapshots already in memory, by path as written or as resolved (tests, benchmarks,
            callers that loaded states themselves).

    Use :meth:`for_transcripts` to grade transcripts from another folder with the same cache. Not
    thread-safe; one provider per thread.
    """

    def __init__(
        self,
        root: Path | None = None,
        *,
        transcript_dir: Path | None = None,
        snapshots: Mapping[str, Snapshot] | None = None,
    ) -> None:
        self.root = root
        self.transcript_dir = transcript_dir
        self._preloaded: dict[str, Snapshot] = dict(snapshots or {})
        self._cache: dict[str, Snapshot | str] = {}
        self._references: dict[str, Transcript | str] = {}

    def for_transcripts(self, transcript_dir: Path) -> StateProvider:
        """A provider for transcripts in another folder, sharing this one's cache."""
        other = StateProvider(self.root, transcript_dir=transcript_dir)
        other._preloaded = self._preloaded
        other._cache = self._cache
        other._references = self._references
        return other

    # ------------------------------------------------------------------ loading

    def load(self, written: str, base: Path | None, what: str) -> Snapshot | str:
        """Load a state file, cached; return the snapshot or why it could not be loaded."""
        if written in self._preloaded:
            return self._preloaded[written]
        path = Path(written)
        if not path.is_absolute():
            if base is None:
                return f"{what} '{written}' is a relative path and no folder is known to resolve it against"
            path = base / path
        key = str(path.resolve())
        if key in self._preloaded:
            return self._preloaded[key]
        if key not in self._cache:
            try:
                self._cache[key] = load_state(path)
            except JudgekitError as exc:
                self._cache[key] = f"{what} cannot be loaded: {exc.message}"
            except OSError as exc:
                self._cache[key] = f"{what} cannot be loaded: {path}: {exc.strerror}"
        return self._cache[key]

    def state(self, ref: StateRef, what: str) -> Snapshot | str:
        """Resolve a transcript's state reference (inline data, or a path relative to its folder)."""
        if ref.data is not None:
            try:
                return snapshot_from_data(ref.data, source=f"inline {what}")
            except JudgekitError as exc:
                return f"{what} is not a valid state: {exc.message}"
        return self.load(ref.path or "", self.transcript_dir, what)

    def initial(self, case: Case, transcript: Transcript) -> tuple[Snapshot | None, Snapshot | str | None]:
        """The trial's initial state, and the case fixture's when it differs in source.

        Returns:
            ``(state used, case fixture)``: the transcript's recorded initial state when it has one, else
            the case's fixture; the second item is the case fixture (or why it failed to load) when the
            transcript also recorded one, so the caller can check the trial started from it.
        """
        fixture: Snapshot | str | None = None
        if case.initial_state:
            fixture = self.load(case.initial_state, self.root, "the case's initial_state")
        if transcript.initial_state is not None:
            recorded = self.state(transcript.initial_state, "the transcript's initial_state")
            if isinstance(recorded, str):
                return None, recorded
            return recorded, fixture
        if isinstance(fixture, Snapshot):
            return fixture, None
        return None, fixture

    def final(self, transcript: Transcript) -> Snapshot | str:
        """The trial's final state, or why there is none."""
        if transcript.final_state is None:
            return "the transcript records no final_state"
        return self.state(transcript.final_state, "the transcript's final_state")

    def expected(self, case: Case) -> Snapshot | str:
        """The expected final state of a snapshot or from_reference case, or why there is none."""
        spec = case.expected_state
        if spec is None:
            return "the case has no expected_state"
        if spec.snapshot is not None:
            return self.load(spec.snapshot, self.root, "the expected snapshot")
        if spec.from_reference:
            ref = self.reference(case)
            if isinstance(ref, str):
                return ref
            if ref.final_state is None:
                return "the reference solution records no final_state"
            return self._reference_provider(case).state(
                ref.final_state, "the reference solution's final_state"
            )
        return "the case expects changes, not a snapshot"

    def _reference_path(self, case: Case) -> Path | None:
        if not case.reference_solution:
            return None
        path = Path(case.reference_solution)
        if not path.is_absolute() and self.root is not None:
            path = self.root / path
        return path

    def _reference_provider(self, case: Case) -> StateProvider:
        path = self._reference_path(case)
        return self.for_transcripts(path.parent) if path is not None else self

    def reference(self, case: Case) -> Transcript | str:
        """The case's reference solution transcript, or why it cannot be read."""
        path = self._reference_path(case)
        if path is None:
            return "the case has no reference_solution"
        key = f"{path.resolve()}#{case.id}"
        if key not in self._references:
            self._references[key] = _read_reference(path, case.id)
        return self._references[key]

    def reference_provider(self, case: Case) -> StateProvider:
        """A provider resolving the reference transcript's state paths (relative to its folder)."""
        return self._reference_provider(case)


def _read_reference(path: Path, case_id: str) -> Transcript | str:
    from judgekit.transcript import read_transcripts

    try:
        transcripts = read_transcripts(path)
    except JudgekitError as exc:
        return f"the reference solution cannot be read: {exc.message}"
    mine = [t for t in transcripts if t.case_id == case_id]
    if mine:
        return mine[0]
    if not transcripts:
        return f"the reference solution {path} holds no transcript"
    ids = ", ".join(sorted({t.case_id for t in transcripts}))
    return f"the reference solution {path} holds no transcript for case '{case_id}' (it has: {ids})"


# --------------------------------------------------------------------------- deterministic layers


def _state_error(check_id: str, reason: str, evidence: Iterable[Evidence] = ()) -> CheckResult:
    return CheckResult(
        check_id=check_id, layer="state", verdict=Verdict.ERROR, reason=reason, evidence=tuple(evidence)
    )


def deterministic_checks(
    case: Case,
    transcript: Transcript,
    *,
    states: StateProvider,
    grounding: GroundingMode | None = None,
    require_fixture_record: bool = False,
) -> list[CheckResult]:
    """Run every deterministic layer (state, rules, route, text, fixture; grounding on request) on one trial.

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

    Returns:
        The checks of every layer, in the order state, rules, route, text, fixture, grounding. A layer the
        case does not use appears as one ``not_evaluated`` check. The fixture check is left out when the
        state layer already reported the trial's start (``state:initial``).
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
    out: list[CheckResult] = []
    calls = transcript.calls()
    compiled = None
    rules_error: str | None = None
    try:
        compiled = compile_case_rules(case)
    except RuleCompileError as exc:
        rules_error = "; ".join(p.message for p in exc.problems)

    spec = case.expected_state
    ignore = spec.ignore_fields if spec is not None else ()
    needs_state_rules = compiled is not None and compiled.needs_state
    initial: Snapshot | None = None
    final: Snapshot | None = None
    missing: dict[str, str] = {}
    changes: StateDiff | None = None
    if spec is not None or needs_state_rules:
        final_or_reason = states.final(transcript)
        if isinstance(final_or_reason, str):
            missing["final"] = final_or_reason
        else:
            final = final_or_reason
        initial, fixture = states.initial(case, transcript)
        if initial is None:
            missing["initial"] = (
                fixture
                if isinstance(fixture, str)
                else "neither the case nor the transcript names an initial_state"
            )
        elif isinstance(fixture, Snapshot) and fixture.tables != initial.tables:
            drift = diff_states(fixture, initial)
            out.append(
                _state_error(
                    "state:initial",
                    "the trial did not start from the case's initial_state (was the environment reset?): "
                    + "; ".join(drift.lines(limit=5)),
                    (
                        Evidence(
                            kind="diff",
                            summary="case fixture -> recorded initial state",
                            data=drift.to_data(),
                        ),
                    ),
                )
            )
        elif isinstance(fixture, str):
            out.append(_state_error("state:initial", fixture))
        if (
            initial is not None
            and final is not None
            and (needs_state_rules or (spec is not None and spec.changes is not None))
        ):
            changes = diff_states(initial, final, ignore_fields=ignore)
    if spec is not None:
        expected: Snapshot | None = None
        if spec.snapshot is not None or spec.from_reference:
            exp = states.expected(case)
            if isinstance(exp, str):
                missing["expected"] = exp
            else:
                expected = exp
        out.extend(
            check_state(
                spec, initial=initial, final=final, expected=expected, missing=missing, changes=changes
            )
        )
    else:
        out.extend(check_state(None, initial=None, final=None))

    if compiled is None:
        out.append(
            CheckResult(
                check_id="rules",
                layer="rules",
                verdict=Verdict.ERROR,
                reason=f"the case's rules do not compile: {rules_error}",
            )
        )
    else:
        unavailable = None
        if changes is None and needs_state_rules:
            unavailable = missing.get("final") or missing.get("initial") or "no state changes"
        out.extend(
            check_rules(
                case,
                transcript,
                compiled=compiled,
                state_changes=changes,
                state_unavailable=unavailable,
                calls=calls,
            )
        )
    expected_block = case.expected
    out.extend(
        check_route(
            expected_block.route if expected_block else None,
            expected_block.route_match if expected_block else "superset",
            transcript,
            calls=calls,
        )
    )
    out.extend(check_text(case, transcript))
    if not any(c.check_id == "state:initial" for c in out):
        out.append(check_fixture(case, transcript, states=states, require_record=require_fixture_record))
    if grounding is not None:
        out.extend(check_grounding(case, transcript, mode=grounding))
    return out


# --------------------------------------------------------------------------- combining


def _effective(check: CheckResult, untrusted: UntrustedPolicy) -> Verdict:
    if check.trust is not Trust.UNTRUSTED or untrusted == "count":
        return check.verdict
    if untrusted == "advisory":
        return Verdict.NOT_EVALUATED
    # fail_only: an uncalibrated judge may fail a gate but cannot certify it.
    return Verdict.INSUFFICIENT_INFORMATION if check.verdict is Verdict.PASS else check.verdict


def combine(
    case: Case,
    trial: int,
    checks: Sequence[CheckResult],
    *,
    untrusted: UntrustedPolicy = "count",
) -> Grade:
    """Combine checks of every layer (deterministic and rubric) into the trial's grade.

    The verdict comes from the gates alone (:func:`~judgekit.verdict.combine_gate_verdicts`: fail >
    error > insufficient_information > pass; not_evaluated gates are ignored). The quality score is the
    weighted mean of ``score`` over checks that do not gate and have a score; checks in ``error`` or
    without a score are left out of it (never counted as 0 or 1) and counted in ``metadata``. It is
    ``None`` when nothing was scored, and it never changes the verdict.

    Args:
        case: The case graded.
        trial: The trial number (1-based).
        checks: Every check of the trial.
        untrusted: What an untrusted gate (a judge-backed check without a calibration record for its
            fingerprint) may do: ``count`` (its verdict counts as it is; the default), ``fail_only`` (it
            may fail the case, but its pass counts as ``insufficient_information``) or ``advisory`` (it
            does not decide). The gates affected are listed in ``metadata["untrusted_gates"]``.

    Returns:
        The grade, with ``metadata`` holding ``gate_counts``, ``quality_basis``, ``untrusted_gates`` and
        ``untrusted_policy``.
    """
    gates = [c for c in checks if c.gate]
    effective = [_effective(c, untrusted) for c in gates]
    verdict = combine_gate_verdicts(effective)
    scored = [c for c in checks if not c.gate and c.score is not None and c.weight > 0]
    total = sum(c.weight for c in scored)
    quality = sum(c.weight * (c.score or 0.0) for c in scored) / total if total > 0 else None
    unscored = [c.check_id for c in checks if not c.gate and c.score is None]
    metadata: dict[str, Any] = {
        "gate_counts": {str(k): v for k, v in count_verdicts(effective).items()},
        "quality_basis": {"scored": len(scored), "weight": total, "unscored": unscored},
        "untrusted_policy": untrusted,
        "untrusted_gates": [c.check_id for c in gates if c.trust is Trust.UNTRUSTED],
    }
    return Grade(
        case_id=case.id,
        trial=trial,
        verdict=verdict,
        quality=quality,
        checks=tuple(checks),
        metadata=metadata,
    )


def grade(case: Case, transcript: Transcript, *, states: StateProvider) -> Grade:
    """Grade one trial on the deterministic layers alone (``combine(deterministic_checks(...))``)."""
    return combine(case, transcript.trial, deterministic_checks(case, transcript, states=states))


class LayeredGrader:
    """Every deterministic layer, plus the rubric layer when one is given, combined into one grade.

    This is the one place the layers are put together: the runner (``judgekit grade``), the demo and the
    integrations (Inspect AI, pytest, promptfoo, tau-bench) all grade through it. A trial imported from a
    lossy trace is graded only by the layers the trace supports; the other layers' verdicts become
    ``insufficient_information`` (see :func:`judgekit.io.otel.restrict_to_supported`).

    Args:
        root: The golden set's root: case fixture paths (``initial_state``, ``expected_state.snapshot``,
            ``reference_solution``) resolve against it. Ignored when ``states`` is given.
        states: A ready state provider (for snapshots already in memory, or a shared cache).
        transcript_dir: Folder that relative state paths inside transcripts resolve against.
        rubric: The judge-backed rubric grader, or ``None`` for the deterministic layers alone.
        deterministic: Run the deterministic layers (turn off to grade with the rubric layer alone).
        untrusted: What an untrusted judge gate may do (see :func:`combine`).
        grounding: Also check expected sources, in this mode (see :mod:`judgekit.graders.grounding`).
        executor: Run the deterministic layers there (one worker: the state provider is not thread-safe),
            concurrently with the rubric layer's HTTP calls; ``None`` runs them inline.

    Raises:
        JudgekitError: When neither layer is enabled.
    """

    def __init__(
        self,
        root: Path | None = None,
        *,
        states: StateProvider | None = None,
        transcript_dir: Path | None = None,
        rubric: RubricGrader | None = None,
        deterministic: bool = True,
        untrusted: UntrustedPolicy = "count",
        grounding: GroundingMode | None = None,
        executor: Executor | None = None,
    ) -> None:
        if not deterministic and rubric is None:
            raise JudgekitError(
                "a grader with neither the deterministic layers nor a rubric grades nothing: "
                "keep deterministic=True or pass rubric=RubricGrader(...)"
            )
        self.states = states if states is not None else StateProvider(root, transcript_dir=transcript_dir)
        self.rubric = rubric
        self.deterministic = deterministic
        self.untrusted: UntrustedPolicy = untrusted
        self.grounding: GroundingMode | None = grounding
        self.executor = executor

    def checks(self, case: Case, transcript: Transcript) -> list[CheckResult]:
        """The deterministic layers' checks (empty when they are turned off)."""
        if not self.deterministic:
            return []
        return deterministic_checks(case, transcript, states=self.states, grounding=self.grounding)

    async def grade(self, case: Case, transcript: Transcript) -> Grade:
        """Grade one trial on every enabled layer."""
        import asyncio

        from judgekit.io.otel import fidelity_of, restrict_to_supported

        if self.rubric is None:
            checks = self.checks(case, transcript)
        elif self.executor is not None:
            loop = asyncio.get_running_loop()
            det, judged = await asyncio.gather(
                loop.run_in_executor(self.executor, self.checks, case, transcript),
                self.rubric.grade(case, transcript),
            )
            checks = [*det, *judged]
        else:
            checks = [*self.checks(case, transcript), *await self.rubric.grade(case, transcript)]
        checks = restrict_to_supported(checks, fidelity_of(transcript))
        result = combine(case, transcript.trial, checks, untrusted=self.untrusted)
        if self.rubric is not None:
            metadata = {
                **result.metadata,
                "judge": {"fingerprint": self.rubric.fingerprint, "label": self.rubric.label},
            }
            result = result.model_copy(update={"metadata": metadata})
        return result


def reference_checks(case: Case, *, states: StateProvider) -> tuple[Transcript | None, list[CheckResult]]:
    """Run every deterministic layer on a case's reference solution.

    Returns:
        ``(reference transcript, checks)``; when the reference cannot be read, ``(None, [error check])``.
    """
    ref = states.reference(case)
    if isinstance(ref, str):
        return None, [CheckResult(check_id="reference", layer="reference", verdict=Verdict.ERROR, reason=ref)]
    return ref, deterministic_checks(case, ref, states=states.reference_provider(case))
