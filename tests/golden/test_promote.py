"""Promoting reviewed candidates into a golden set, called from Python."""

from __future__ import annotations

import errno
import os
import textwrap
from pathlib import Path

import pytest

from judgekit.caseset import load_case_set
from judgekit.cli import main
from judgekit.errors import JudgekitError, ProblemsError
from judgekit.golden.promote import promote_candidates
from support import write


def test_a_set_named_as_text_has_its_reviewed_candidate_promoted(small_set: Path) -> None:
    cand = small_set / "candidates" / "cand.yaml"
    cand.write_text(cand.read_text(encoding="utf-8").replace("REVIEW: confirm", "Confirms"), encoding="utf-8")
    [promotion] = promote_candidates(str(small_set), ["GS-CAND-1"])
    assert promotion.case_id == "GS-CAND-1"
    assert promotion.source == cand
    assert not cand.exists()
    assert promotion.destination.is_file()


def test_a_cases_dir_that_leads_outside_the_set_moves_nothing(small_set: Path) -> None:
    # The manifest names a cases folder outside the set: the load reports it, and promotion must not
    # write there (it used to resolve the folder without checking and move the candidate out of the set).
    manifest = small_set / "judgekit-set.yaml"
    manifest.write_text(manifest.read_text(encoding="utf-8") + "cases_dir: ../outside\n", encoding="utf-8")
    (small_set.parent / "outside").mkdir()
    cand = small_set / "candidates" / "cand.yaml"
    cand.write_text(cand.read_text(encoding="utf-8").replace("REVIEW: confirm", "Confirms"), encoding="utf-8")
    with pytest.raises(JudgekitError) as caught:
        promote_candidates(small_set, ["GS-CAND-1"])
    message = caught.value.message
    assert message.startswith(f"{manifest}: cases_dir: '../outside' resolves to ")
    assert message.endswith("; nothing was written")
    assert cand.is_file()
    assert list((small_set.parent / "outside").iterdir()) == []


def test_the_set_folder_of_a_plain_set_is_its_root_and_candidates(small_set: Path) -> None:
    case_set = load_case_set(small_set)
    assert case_set.folder("cases_dir") == small_set.resolve()
    assert case_set.folder("candidates_dir") == (small_set / "candidates").resolve()


# --------------------------------------------------------------------------- what must not enter the set


def _candidate(root: Path, name: str, case_id: str, body: str) -> Path:
    """Write a candidate file ``candidates/<name>`` holding ``id: <case_id>`` then ``body``."""
    return write(root / "candidates" / name, f"id: {case_id}\n" + textwrap.dedent(body).lstrip())


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every file and folder under ``root``, by relative path (folders map to ``b"/"``)."""
    return {str(p.relative_to(root)): b"/" if p.is_dir() else p.read_bytes() for p in sorted(root.rglob("*"))}


def _refusal(root: Path, ids: list[str]) -> list[str]:
    """Promote ``ids``, expect a refusal that moves nothing, and return its problems as lines."""
    before = _snapshot(root)
    with pytest.raises(ProblemsError) as caught:
        promote_candidates(root, ids)
    assert _snapshot(root) == before
    return [str(p) for p in caught.value.problems]


def test_a_candidate_without_acceptance_is_refused(small_set: Path) -> None:
    # Old behaviour: promoted (the file moved into the set with no acceptance at all).
    cand = _candidate(small_set, "bare.yaml", "GS-CAND-2", 'input: "Freeze my card"\n')
    assert _refusal(small_set, ["GS-CAND-2"]) == [
        f"{cand}:1: acceptance: missing: write the acceptance criterion a person and a judge can both "
        "apply, then promote"
    ]


@pytest.mark.parametrize("acceptance", ['""', '"   "', '"\\u200b\\t"'], ids=["empty", "spaces", "invisible"])
def test_a_candidate_whose_acceptance_is_blank_is_refused(small_set: Path, acceptance: str) -> None:
    # Old behaviour: promoted.
    cand = _candidate(
        small_set, "blank.yaml", "GS-CAND-2", f'input: "Freeze my card"\nacceptance: {acceptance}\n'
    )
    assert _refusal(small_set, ["GS-CAND-2"]) == [
        f"{cand}:3: acceptance: is empty: write the acceptance criterion a person and a judge can both "
        "apply, then promote"
    ]


@pytest.mark.parametrize(
    "acceptance", ["review: confirm", "  Review: confirm", "Review : confirm", "\u200bREVIEW: confirm"]
)
def test_the_review_marker_in_any_case_or_spacing_is_refused(small_set: Path, acceptance: str) -> None:
    # Reproduced first: the old code already refused these (Case.is_unreviewed reads the text through
    # starts_with_review_marker); kept so the guard cannot slip.
    cand = _candidate(
        small_set, "low.yaml", "GS-CAND-2", f'input: "Freeze my card"\nacceptance: "{acceptance}"\n'
    )
    assert _refusal(small_set, ["GS-CAND-2"]) == [
        f"{cand}:3: acceptance: still starts with 'REVIEW:': write or approve the acceptance criterion, "
        "then promote"
    ]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('required_outcome: "review: the card is frozen"\n', "required_outcome"),
        ('forbidden_outcomes: ["Freezes the card", "  REVIEW: what else"]\n', "forbidden_outcomes.1"),
        ('response_rubric: ["Review : names the card"]\n', "response_rubric.0"),
    ],
)
def test_a_judged_criterion_still_marked_for_review_is_refused(
    small_set: Path, body: str, field: str
) -> None:
    # Old behaviour: promoted (only the acceptance was checked for the marker).
    cand = _candidate(
        small_set, "crit.yaml", "GS-CAND-2", f'input: "Freeze my card"\nacceptance: Freezes it.\n{body}'
    )
    [problem] = _refusal(small_set, ["GS-CAND-2"])
    assert problem.startswith(f"{cand}:4: {field}: ")
    assert problem.endswith(": still starts with 'REVIEW:': write or approve the criterion, then promote")


def test_a_blank_required_outcome_is_refused(small_set: Path) -> None:
    # Old behaviour: promoted.
    cand = _candidate(
        small_set,
        "out.yaml",
        "GS-CAND-2",
        'input: "Freeze my card"\nacceptance: Freezes it.\nrequired_outcome: " "\n',
    )
    assert _refusal(small_set, ["GS-CAND-2"]) == [
        f"{cand}:4: required_outcome: is empty: write the outcome that counts as success, or remove the "
        "field, then promote"
    ]


def test_personal_data_in_a_candidate_is_refused(small_set: Path) -> None:
    # Old behaviour: promoted, carrying a real-looking address into the golden set.
    cand = _candidate(
        small_set,
        "pii.yaml",
        "GS-CAND-2",
        'input: "Mail jane.doe@gmail.com the receipt"\nacceptance: Sends it.\n',
    )
    [problem] = _refusal(small_set, ["GS-CAND-2"])
    assert problem.startswith(f"{cand}:2: input: personal data")
    assert "j***@gmail.com" in problem
    assert "jane.doe@gmail.com" not in problem


def test_a_value_the_manifest_declares_synthetic_does_not_block_promotion(small_set: Path) -> None:
    manifest = small_set / "judgekit-set.yaml"
    manifest.write_text(
        manifest.read_text(encoding="utf-8") + "synthetic_values: [jane.doe@gmail.com]\n", encoding="utf-8"
    )
    _candidate(
        small_set,
        "pii.yaml",
        "GS-CAND-2",
        'input: "Mail jane.doe@gmail.com the receipt"\nacceptance: Sends it.\n',
    )
    [promotion] = promote_candidates(small_set, ["GS-CAND-2"])
    assert promotion.destination == small_set.resolve() / "pii.yaml"
    assert promotion.destination.is_file()


def test_every_reason_of_every_candidate_is_listed_in_one_refusal(small_set: Path) -> None:
    # Old behaviour: GS-CAND-2 and GS-CAND-3 were promoted; only GS-CAND-1's marker was reported.
    two = _candidate(small_set, "two.yaml", "GS-CAND-2", 'input: "Call me on +44 7911 123456"\n')
    three = _candidate(small_set, "three.yaml", "GS-CAND-3", 'input: "Freeze it"\nacceptance: "\\t"\n')
    cand = small_set / "candidates" / "cand.yaml"
    lines = _refusal(small_set, ["GS-CAND-1", "GS-CAND-2", "GS-CAND-3"])
    assert [line.split(": ")[0:2] for line in lines] == [
        [f"{cand}:3", "acceptance"],
        [f"{two}:1", "acceptance"],
        [f"{two}:2", "input"],
        [f"{three}:3", "acceptance"],
    ]


def test_an_existing_destination_is_refused_before_anything_moves(small_set: Path) -> None:
    _candidate(small_set, "first.yaml", "GS-CAND-2", 'input: "Freeze it"\nacceptance: Freezes it.\n')
    taken = _candidate(small_set, "a.yaml", "GS-CAND-3", 'input: "Unfreeze it"\nacceptance: Unfreezes it.\n')
    write(small_set / "a.yaml", "# a file already in the set's cases folder\n")
    assert _refusal(small_set, ["GS-CAND-2", "GS-CAND-3"]) == [
        f"{taken}: {small_set.resolve() / 'a.yaml'} already exists; rename the candidate file"
    ]


def test_two_candidates_bound_for_one_destination_are_refused(small_set: Path) -> None:
    # Old behaviour: both were "promoted"; the second file silently overwrote the first.
    _candidate(small_set, "x/same.yaml", "GS-CAND-2", 'input: "Freeze it"\nacceptance: Freezes it.\n')
    second = _candidate(
        small_set, "y/same.yaml", "GS-CAND-3", 'input: "Unfreeze it"\nacceptance: Unfreezes it.\n'
    )
    assert _refusal(small_set, ["GS-CAND-2", "GS-CAND-3"]) == [
        f"{second}: candidate 'GS-CAND-2' would move to {small_set.resolve() / 'same.yaml'} too; rename one "
        "of the candidate files"
    ]


def test_an_id_named_twice_is_promoted_once(small_set: Path) -> None:
    # Old behaviour: the second move found no file and the command crashed with FileNotFoundError.
    _candidate(small_set, "once.yaml", "GS-CAND-2", 'input: "Freeze it"\nacceptance: Freezes it.\n')
    promotions = promote_candidates(small_set, ["GS-CAND-2", "GS-CAND-2"])
    assert [p.case_id for p in promotions] == ["GS-CAND-2"]
    assert (small_set / "once.yaml").is_file()


def _three_reviewed(root: Path) -> list[Path]:
    return [
        _candidate(root, f"r{i}.yaml", f"GS-CAND-R{i}", f'input: "Question {i}"\nacceptance: Answers {i}.\n')
        for i in (1, 2, 3)
    ]


def _replace_failing_at(monkeypatch: pytest.MonkeyPatch, *failing: int) -> list[tuple[str, str]]:
    """Make the ``failing`` moves by ``os.replace`` (1-based) raise a permission error; log every move.

    A move is a rename of a case file; the atomic write of the journal (a temporary file renamed into
    place) is not counted.
    """
    real = os.replace
    calls: list[tuple[str, str]] = []

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        if str(src).endswith(".tmp"):
            real(src, dst)
            return
        calls.append((str(src), str(dst)))
        if len(calls) in failing:
            raise PermissionError(errno.EACCES, "Permission denied")
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    return calls


def test_a_failed_move_moves_the_ones_before_it_back(
    small_set: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Old behaviour: r1.yaml stayed in the set, r2 and r3 stayed candidates, and the PermissionError
    # escaped as a traceback.
    first, second, _third = _three_reviewed(small_set)
    before = _snapshot(small_set)
    calls = _replace_failing_at(monkeypatch, 2)
    with pytest.raises(JudgekitError) as caught:
        promote_candidates(small_set, ["GS-CAND-R1", "GS-CAND-R2", "GS-CAND-R3"])
    root = small_set.resolve()
    assert caught.value.message == (
        f"{second}: cannot move it to {root / 'r2.yaml'}: Permission denied; the 1 file(s) already moved "
        "were moved back; nothing was promoted"
    )
    assert calls[-1] == (str(root / "r1.yaml"), str(first))
    assert _snapshot(small_set) == before


def test_a_file_that_cannot_be_moved_back_is_named(small_set: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second, _third = _three_reviewed(small_set)
    _replace_failing_at(monkeypatch, 2, 3)
    with pytest.raises(JudgekitError) as caught:
        promote_candidates(small_set, ["GS-CAND-R1", "GS-CAND-R2", "GS-CAND-R3"])
    root = small_set.resolve()
    assert caught.value.message == (
        f"{second}: cannot move it to {root / 'r2.yaml'}: Permission denied; {root / 'r1.yaml'} could not "
        f"be moved back to {first} (Permission denied): move it by hand; {root / '.judgekit-journal'} "
        "records the promotion: rerun it to finish it instead"
    )
    assert (root / "r1.yaml").is_file()
    # the journal stays (the set is half promoted): validate says so, and a rerun finishes the promotion
    monkeypatch.undo()
    assert main(["cases", "check", str(small_set)]) == 1
    promotions = promote_candidates(small_set, ["GS-CAND-R1", "GS-CAND-R2", "GS-CAND-R3"])
    assert [(p.case_id, p.resumed) for p in promotions] == [(f"GS-CAND-R{i}", True) for i in (1, 2, 3)]
    assert [(root / f"r{i}.yaml").is_file() for i in (1, 2, 3)] == [True] * 3
    assert not (root / ".judgekit-journal").exists()
    assert main(["cases", "check", str(small_set)]) == 0


def test_a_destination_that_appears_while_promoting_is_not_overwritten(
    small_set: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second, _third = _three_reviewed(small_set)
    root = small_set.resolve()
    real = os.replace

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        real(src, dst)
        if Path(src) == first:  # another process writes r2.yaml into the set meanwhile
            write(root / "r2.yaml", "# someone else's file\n")

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(JudgekitError) as caught:
        promote_candidates(small_set, ["GS-CAND-R1", "GS-CAND-R2", "GS-CAND-R3"])
    assert caught.value.message == (
        f"{second}: cannot move it to {root / 'r2.yaml'}: it exists already (it appeared while promoting); "
        "the 1 file(s) already moved were moved back; nothing was promoted"
    )
    assert (root / "r2.yaml").read_text(encoding="utf-8") == "# someone else's file\n"
    assert first.is_file()
    assert second.is_file()


def test_a_cases_folder_created_for_a_failed_promotion_is_removed(
    small_set: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = small_set / "judgekit-set.yaml"
    manifest.write_text(manifest.read_text(encoding="utf-8") + "cases_dir: reviewed\n", encoding="utf-8")
    _three_reviewed(small_set)
    before = _snapshot(small_set)
    _replace_failing_at(monkeypatch, 1)
    with pytest.raises(JudgekitError) as caught:
        promote_candidates(small_set, ["GS-CAND-R1", "GS-CAND-R2"])
    assert caught.value.message.endswith(": Permission denied; nothing was promoted")
    assert _snapshot(small_set) == before


def test_the_command_prints_one_line_per_problem_and_exits_2(
    small_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Old behaviour: exit 0, "promoted GS-CAND-2: ...".
    cand = _candidate(small_set, "bare.yaml", "GS-CAND-2", 'input: "Mail jane.doe@gmail.com the receipt"\n')
    code = main(["candidates", "promote", "GS-CAND-2", "--set", str(small_set)])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    lines = err.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"{cand}:1: acceptance: missing: ")
    assert lines[1].startswith(f"{cand}:2: input: personal data")
    assert cand.is_file()
