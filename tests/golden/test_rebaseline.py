"""Contract changes without a version bump, found from Python and from ``judgekit cases diff``.

Every test builds a throwaway git repository under ``tmp_path``, commits a set, edits the working tree
and compares it with ``HEAD``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.cli import main
from judgekit.golden.rebaseline import compare_with_revision, find_unversioned_changes
from support import git, write


def _commit(repo: Path) -> None:
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")


def _state_case(root: Path, name: str, case_id: str, version: int = 1) -> Path:
    return write(
        root / "cases" / name,
        f"""
        id: {case_id}
        version: {version}
        input: "Refund the duplicate charge"
        initial_state: fixtures/db.sql
        expected_state: {{snapshot: fixtures/after.json}}
        acceptance: Refunds the duplicate charge once.
        """,
    )


@pytest.fixture
def state_set(tmp_path: Path) -> Path:
    """A committed set: two cases sharing an initial and an expected state, and one candidate."""
    root = tmp_path / "repo" / "golden"
    write(root / "judgekit-set.yaml", "name: states\nsynthetic: true\n")
    write(root / "fixtures" / "db.sql", "CREATE TABLE refunds(id TEXT PRIMARY KEY, amount REAL);\n")
    write(root / "fixtures" / "after.json", '{"refunds": [{"id": "R-1", "amount": 412.18}]}\n')
    _state_case(root, "a.yaml", "GS-1")
    _state_case(root, "b.yaml", "GS-2")
    write(
        root / "candidates" / "cand.yaml",
        """
        id: GS-CAND-1
        input: "Freeze it and send a new one"
        acceptance: "REVIEW: confirm FreezeCard must not fire"
        """,
    )
    _commit(root.parent)
    return root


def _only_a_names_after(root: Path) -> None:
    """Make GS-2 name its own expected state, so that ``after.json`` belongs to GS-1 alone (committed)."""
    write(root / "fixtures" / "after-b.json", '{"refunds": [{"id": "R-1", "amount": 412.18}]}\n')
    case = root / "cases" / "b.yaml"
    case.write_text(case.read_text(encoding="utf-8").replace("after.json", "after-b.json"), encoding="utf-8")
    git(root.parent, "add", ".")
    git(root.parent, "commit", "-qm", "b has its own expected state")


def _promote(root: Path) -> Path:
    """Move the candidate into the cases folder with its acceptance reviewed, as a reviewer does."""
    source = root / "candidates" / "cand.yaml"
    target = root / "cases" / "cand.yaml"
    text = source.read_text(encoding="utf-8")
    target.write_text(text.replace('"REVIEW: confirm FreezeCard must not fire"', "Never calls FreezeCard."))
    source.unlink()
    return target


def test_a_set_named_as_text_is_compared_with_a_revision(small_set: Path) -> None:
    _commit(small_set.parent)
    case = small_set / "cases" / "a.yaml"
    case.write_text(case.read_text(encoding="utf-8").replace("States the balance.", "States it."))
    [found] = find_unversioned_changes(str(small_set), "HEAD")
    assert (found.case_id, found.path, found.changed) == ("GS-1", case, ("acceptance",))
    assert found.old_hash != found.new_hash


def test_a_changed_expected_state_file_without_a_bump_is_flagged_naming_the_file(state_set: Path) -> None:
    _only_a_names_after(state_set)
    (state_set / "fixtures" / "after.json").write_text('{"refunds": [{"id": "R-1", "amount": 400.0}]}\n')
    [found] = find_unversioned_changes(state_set, "HEAD")
    assert (found.case_id, found.old_version, found.new_version) == ("GS-1", 1, 1)
    assert found.changed == ("fixture fixtures/after.json (expected_state.snapshot)",)
    assert found.old_hash != found.new_hash


def test_a_changed_fixture_file_with_a_version_bump_is_not_flagged(state_set: Path) -> None:
    _only_a_names_after(state_set)
    (state_set / "fixtures" / "after.json").write_text('{"refunds": [{"id": "R-1", "amount": 400.0}]}\n')
    _state_case(state_set, "a.yaml", "GS-1", version=2)
    assert find_unversioned_changes(state_set, "HEAD") == []


def test_a_promoted_candidate_is_a_promotion_not_a_change(state_set: Path) -> None:
    target = _promote(state_set)
    comparison = compare_with_revision(state_set, "HEAD")
    assert comparison.unversioned == []
    assert [(p.case_id, p.path, p.source, p.version) for p in comparison.promoted] == [
        ("GS-CAND-1", target, "candidate", 1)
    ]


def test_a_changed_expected_field_without_a_bump_is_flagged(state_set: Path) -> None:
    case = state_set / "cases" / "a.yaml"
    case.write_text(case.read_text(encoding="utf-8").replace("after.json", "after-b.json"), encoding="utf-8")
    [found] = find_unversioned_changes(state_set, "HEAD")
    assert (found.case_id, found.changed) == ("GS-1", ("expected_state",))


def test_a_changed_shared_fixture_flags_every_case_that_names_it(state_set: Path) -> None:
    (state_set / "fixtures" / "db.sql").write_text(
        "CREATE TABLE refunds(id TEXT PRIMARY KEY, amount REAL, currency TEXT);\n"
    )
    found = find_unversioned_changes(state_set, "HEAD")
    assert [(f.case_id, f.changed) for f in found] == [
        ("GS-1", ("fixture fixtures/db.sql (initial_state)",)),
        ("GS-2", ("fixture fixtures/db.sql (initial_state)",)),
    ]


def test_a_turns_expectation_change_needs_a_bump_but_its_wording_does_not(tmp_path: Path) -> None:
    root = tmp_path / "repo" / "golden"
    write(root / "judgekit-set.yaml", "name: turns\nsynthetic: true\n")
    case = write(
        root / "cases" / "t.yaml",
        """
        id: GS-T
        turns:
          - {user: "Freeze my card", expect_contains: [frozen]}
        acceptance: Freezes the card.
        """,
    )
    _commit(root.parent)
    case.write_text(case.read_text(encoding="utf-8").replace("Freeze my card", "Please freeze my card"))
    assert find_unversioned_changes(root, "HEAD") == []
    case.write_text(case.read_text(encoding="utf-8").replace("[frozen]", "[blocked]"))
    [found] = find_unversioned_changes(root, "HEAD")
    assert found.changed == ("turns.expect_contains",)


def test_golden_diff_names_the_fixture_and_lists_promotions(
    state_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _only_a_names_after(state_set)
    target = _promote(state_set)
    (state_set / "fixtures" / "after.json").write_text('{"refunds": [{"id": "R-1", "amount": 400.0}]}\n')
    code = main(["cases", "diff", "HEAD", "--set", str(state_set)])
    out = capsys.readouterr().out
    assert code == 1
    assert out.splitlines() == [
        f"{target}: GS-CAND-1: promoted since HEAD (a candidate at HEAD); nothing to compare",
        f"{state_set / 'cases' / 'a.yaml'}: GS-1: fixture fixtures/after.json (expected_state.snapshot) "
        "changed since HEAD but version stayed 1 (was 1); bump the version",
    ]


def test_golden_diff_lists_a_case_new_since_the_revision_as_promoted(
    state_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = _state_case(state_set, "c.yaml", "GS-3")
    code = main(["cases", "diff", "HEAD", "--set", str(state_set)])
    out = capsys.readouterr().out
    assert code == 0
    assert out.splitlines() == [
        f"{new}: GS-3: promoted since HEAD (not in the set at HEAD); nothing to compare",
        "no unversioned contract changes since HEAD",
    ]
