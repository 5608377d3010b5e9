"""Fresh fixtures: a trial that did not start from its case's fixture is an error, never a pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.cases import Case
from judgekit.graders.fixture import HASH_KEY, check_fixture, check_fixture_state
from judgekit.state import snapshot_from_data
from judgekit.state.provider import StateProvider
from judgekit.transcript import Transcript, read_transcripts
from judgekit.verdict import Verdict

from ._build import make_case, make_transcript

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "airdesk"
WORLD = {"orders": {"O-1": {"address": "1 Old Road", "status": "awaiting_dispatch"}}}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "world.sql").write_text(
        "CREATE TABLE orders(id TEXT PRIMARY KEY, address TEXT, status TEXT);\n"
        "INSERT INTO orders VALUES ('O-1', '1 Old Road', 'awaiting_dispatch');\n",
        encoding="utf-8",
    )
    return tmp_path


def case_with_fixture() -> Case:
    return make_case(initial_state="fixtures/world.sql")


def test_fresh_trial_passes(root: Path) -> None:
    t = make_transcript(initial_state={"orders": {"O-1": {"id": "O-1", **WORLD["orders"]["O-1"]}}})
    check = check_fixture(case_with_fixture(), t, states=StateProvider(root))
    assert check.verdict is Verdict.PASS
    assert check.gate is True
    assert check.reason.startswith("the trial started from the case's fixture (canonical sha256 ")


def test_inherited_world_is_an_error_with_a_diff(root: Path) -> None:
    # The previous trial already changed the address: this one would look successful for nothing.
    inherited = {"orders": {"O-1": {"id": "O-1", "address": "9 New Street", "status": "awaiting_dispatch"}}}
    t = make_transcript(initial_state=inherited)
    check = check_fixture(case_with_fixture(), t, states=StateProvider(root))
    assert check.verdict is Verdict.ERROR
    assert "did not start from the case's fixture" in check.reason
    assert "was the environment reset between trials?" in check.reason
    assert "orders/O-1: address: '1 Old Road' -> '9 New Street'" in check.reason
    diff = next(e for e in check.evidence if e.kind == "diff")
    assert diff.data == {
        "orders": {"modified": {"O-1": [{"path": "address", "old": "1 Old Road", "new": "9 New Street"}]}}
    }


def test_canonical_form_decides_equality() -> None:
    fixture = snapshot_from_data({"t": {"1": {"n": 1, "name": "e\u0301"}}})
    same = snapshot_from_data({"t": {"1": {"name": "\u00e9", "n": 1.0}}})  # key order, 1.0, NFC
    assert check_fixture_state(fixture, same).verdict is Verdict.PASS


def test_recorded_hash_instead_of_state(root: Path) -> None:
    provider = StateProvider(root)
    fixture = provider.load("fixtures/world.sql", root, "fixture")
    assert not isinstance(fixture, str)
    digest = fixture.digest()
    ok = Transcript.model_validate({"case_id": "case-1", "metadata": {HASH_KEY: f"sha256:{digest}"}})
    assert check_fixture(case_with_fixture(), ok, states=provider).verdict is Verdict.PASS
    bad = Transcript.model_validate({"case_id": "case-1", "metadata": {HASH_KEY: "0" * 64}})
    check = check_fixture(case_with_fixture(), bad, states=provider)
    assert check.verdict is Verdict.ERROR
    assert "records only a hash, so no diff can say what differed" in check.reason


def test_nothing_recorded_is_not_evaluated_unless_required(root: Path) -> None:
    t = make_transcript()
    provider = StateProvider(root)
    c = case_with_fixture()
    assert check_fixture(c, t, states=provider).verdict is Verdict.NOT_EVALUATED
    strict = check_fixture(c, t, states=provider, require_record=True)
    assert strict.verdict is Verdict.ERROR
    assert "nothing shows the trial started from the case's fixture" in strict.reason


def test_case_without_fixture_and_unreadable_states(root: Path) -> None:
    provider = StateProvider(root)
    t = make_transcript(initial_state=WORLD)
    none = check_fixture(make_case(), t, states=provider)
    assert none.verdict is Verdict.NOT_EVALUATED
    assert none.reason == "the case names no initial_state fixture"
    missing = check_fixture(make_case(initial_state="fixtures/nope.sql"), t, states=provider)
    assert missing.verdict is Verdict.ERROR
    assert (
        "cannot check the trial's starting state: the case's initial_state cannot be loaded" in missing.reason
    )
    bad_state = make_transcript(initial_state="does/not/exist.json")
    unreadable = check_fixture(case_with_fixture(), bad_state, states=provider.for_transcripts(root))
    assert unreadable.verdict is Verdict.ERROR
    other = make_transcript(case_id="other", initial_state=WORLD)
    assert check_fixture(case_with_fixture(), other, states=provider).verdict is Verdict.ERROR


def test_airdesk_runs_start_from_their_fixtures() -> None:
    from judgekit.caseset import load_case_set

    case_set = load_case_set(EXAMPLE)
    cases = {c.case.id: c.case for c in case_set.reviewed()}
    provider = StateProvider(case_set.root).for_transcripts(EXAMPLE / "runs")
    verdicts = [
        check_fixture(cases[t.case_id], t, states=provider).verdict
        for t in read_transcripts(EXAMPLE / "runs" / "agent-v1.jsonl")
    ]
    assert len(verdicts) == 104
    assert set(verdicts) == {Verdict.PASS}


def test_wired_into_the_layered_verdict(root: Path) -> None:
    from judgekit.graders.layered import combine, deterministic_checks

    # A case with a fixture but no expected state: only the fixture check can notice an unreset world.
    c = make_case(initial_state="fixtures/world.sql", expected={"must_mention": ["address"]})
    fresh = make_transcript(
        texts=["Your address is updated."],
        initial_state={"orders": {"O-1": {"id": "O-1", **WORLD["orders"]["O-1"]}}},
    )
    checks = deterministic_checks(c, fresh, states=StateProvider(root))
    assert [x.verdict for x in checks if x.check_id == "fixture"] == [Verdict.PASS]
    assert combine(c, 1, checks).verdict is Verdict.PASS
    stale = make_transcript(
        texts=["Your address is updated."],
        initial_state={
            "orders": {"O-1": {"id": "O-1", "address": "9 New Street", "status": "awaiting_dispatch"}}
        },
    )
    grade = combine(c, 1, deterministic_checks(c, stale, states=StateProvider(root)))
    assert grade.verdict is Verdict.ERROR  # never a pass
    strict = deterministic_checks(
        c, make_transcript(texts=["ok address"]), states=StateProvider(root), require_fixture_record=True
    )
    assert combine(c, 1, strict).verdict is Verdict.ERROR


def test_not_doubled_when_the_state_layer_already_reports_the_start(root: Path) -> None:
    from judgekit.graders.layered import deterministic_checks

    c = make_case(initial_state="fixtures/world.sql", expected_state={"changes": {}})
    stale = make_transcript(
        initial_state={"orders": {"O-1": {"id": "O-1", "address": "9 New Street", "status": "x"}}},
        final_state={"orders": {"O-1": {"id": "O-1", "address": "9 New Street", "status": "x"}}},
    )
    ids = [x.check_id for x in deterministic_checks(c, stale, states=StateProvider(root))]
    assert "state:initial" in ids
    assert "fixture" not in ids
