"""Fresh fixtures: each trial must start from the case's fixture, not from an earlier trial's world.

An agent must not inherit a completed task: if a previous trial already changed the order address, the
next one can look successful without doing anything. This deterministic check compares the state a trial
started from with the case's ``initial_state`` fixture by their canonical SHA-256 hashes
(:meth:`~judgekit.state.Snapshot.digest`: equal exactly when the states are equal in canonical form).

What the trial started from is read from the transcript: its recorded ``initial_state`` (inline data or a
state file), or, when a harness records only a hash, ``metadata["initial_state_sha256"]`` (the canonical
hash of the state, as :meth:`~judgekit.state.Snapshot.digest` computes it).

Verdicts (one check, ``fixture``, a gate):

* ``pass``: the hashes match;
* ``error`` when they differ: the trial did not start from the fixture, so its grade means nothing; it is
  never a pass and never a fail of the agent. The reason names both hashes and, when the state itself was
  recorded, the structural difference (tables, rows, fields), which is the explanation a hash cannot give;
* ``error`` when the fixture or the recorded state cannot be loaded;
* ``not_evaluated`` when the case names no fixture, or the transcript records nothing about its starting
  state (``require_record=True`` makes that an ``error``: a harness that must prove resets).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from judgekit.cases import Case
from judgekit.graders.contract import LayerInfo, describe_layer
from judgekit.state import Snapshot, diff_states
from judgekit.transcript import Transcript
from judgekit.verdict import CheckResult, Evidence, Verdict

if TYPE_CHECKING:
    from judgekit.graders.context import LayerContext
    from judgekit.state.provider import StateProvider

__all__ = ["CHECK_ID", "HASH_KEY", "LAYER", "FixtureLayer", "check_fixture", "check_fixture_state"]

LAYER = "fixture"
CHECK_ID = "fixture"
HASH_KEY = "initial_state_sha256"
"""The transcript metadata key a harness may record the starting state's canonical hash under."""


def _result(verdict: Verdict, reason: str, evidence: tuple[Evidence, ...] = ()) -> CheckResult:
    return CheckResult(
        check_id=CHECK_ID, layer=LAYER, verdict=verdict, gate=True, reason=reason, evidence=evidence
    )


def check_fixture_state(
    fixture: Snapshot | str | None,
    recorded: Snapshot | str | None,
    *,
    recorded_hash: str | None = None,
    require_record: bool = False,
) -> CheckResult:
    """Decide the fixture check from already-loaded states (pure).

    Args:
        fixture: The case's fixture, why it could not be loaded (text), or ``None`` when the case has none.
        recorded: The trial's recorded initial state, why it could not be loaded, or ``None`` when the
            transcript records no state.
        recorded_hash: The canonical hash the transcript records instead of (or beside) the state.
        require_record: Make "nothing recorded" an ``error`` instead of ``not_evaluated``.

    Returns:
        The ``fixture`` check.
    """
    if fixture is None:
        return _result(Verdict.NOT_EVALUATED, "the case names no initial_state fixture")
    if isinstance(fixture, str):
        return _result(Verdict.ERROR, f"cannot check the trial's starting state: {fixture}")
    if isinstance(recorded, str):
        return _result(Verdict.ERROR, f"cannot check the trial's starting state: {recorded}")
    expected = fixture.digest()
    if recorded is None and recorded_hash is None:
        reason = (
            "the transcript records no initial_state and no initial_state_sha256, so nothing shows the trial "
            "started from the case's fixture"
        )
        return _result(Verdict.ERROR if require_record else Verdict.NOT_EVALUATED, reason)
    fixture_note = Evidence(kind="note", summary=f"fixture {fixture.source}: sha256 {expected}")
    if recorded is not None:
        actual = recorded.digest()
        if actual == expected:
            return _result(
                Verdict.PASS,
                f"the trial started from the case's fixture (canonical sha256 {expected[:12]})",
                (fixture_note,),
            )
        drift = diff_states(fixture, recorded)
        lines = drift.lines(limit=5)
        return _result(
            Verdict.ERROR,
            f"the trial did not start from the case's fixture (canonical sha256 {actual[:12]}, fixture "
            f"{expected[:12]}); was the environment reset between trials? Differences: " + "; ".join(lines),
            (
                fixture_note,
                Evidence(kind="diff", summary="case fixture -> recorded initial state", data=drift.to_data()),
            ),
        )
    claimed = (recorded_hash or "").strip().lower().removeprefix("sha256:")
    if claimed == expected:
        return _result(
            Verdict.PASS,
            f"the recorded initial_state_sha256 matches the case's fixture ({expected[:12]})",
            (fixture_note,),
        )
    return _result(
        Verdict.ERROR,
        "the trial did not start from the case's fixture: it recorded initial_state_sha256 "
        f"{claimed[:12] or '(empty)'}, the fixture's canonical hash is {expected[:12]}; the transcript "
        "records only a hash, so no diff can say what differed: record initial_state to see it",
        (fixture_note,),
    )


def check_fixture(
    case: Case, transcript: Transcript, *, states: StateProvider, require_record: bool = False
) -> CheckResult:
    """Check that one trial started from its case's fixture (see the module docstring).

    Args:
        case: The case (its ``initial_state``, relative to the set's root).
        transcript: The trial (its ``initial_state`` and ``metadata``).
        states: Loads and caches the fixture and the recorded state.
        require_record: Make a transcript that records nothing about its start an ``error``.

    Returns:
        The ``fixture`` check; never raises for a missing or unreadable state.
    """
    if transcript.case_id != case.id:
        return _result(Verdict.ERROR, f"the transcript is for case '{transcript.case_id}', not '{case.id}'")
    fixture: Snapshot | str | None = None
    if case.initial_state:
        fixture = states.load(case.initial_state, states.root, "the case's initial_state")
    recorded: Snapshot | str | None = None
    if transcript.initial_state is not None and fixture is not None:
        recorded = states.state(transcript.initial_state, "the transcript's initial_state")
    raw_hash = transcript.metadata.get(HASH_KEY)
    recorded_hash = raw_hash if isinstance(raw_hash, str) else None
    return check_fixture_state(fixture, recorded, recorded_hash=recorded_hash, require_record=require_record)


class FixtureLayer:
    """The fixture layer: :func:`check_fixture`, left out when the state layer already reported the start.

    The state layer reports ``state:initial`` when the recorded start differs from the fixture or cannot be
    read; the same finding is then not repeated here.
    """

    info: LayerInfo = describe_layer(LAYER, (), "the trial started from the case's fixture", bookkeeping=True)

    def checks(self, case: Case, transcript: Transcript, context: LayerContext) -> list[CheckResult]:
        """The ``fixture`` check, or nothing when an earlier layer reported ``state:initial``."""
        if any(c.check_id == "state:initial" for c in context.earlier):
            return []
        return [
            check_fixture(
                case, transcript, states=context.states, require_record=context.require_fixture_record
            )
        ]
