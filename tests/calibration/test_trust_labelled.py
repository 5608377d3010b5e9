"""Which criterion texts a calibration labelled: the record's list, the trust reason and the policy."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from judgekit.calibration.labels import parse_labels
from judgekit.calibration.pipeline import labelled_criteria
from judgekit.calibration.records import LabelledCriteria, dump_record, load_record
from judgekit.calibration.trust import TrustBook, criterion_labelled
from judgekit.errors import JudgekitError
from judgekit.judges.rubric import CRITERION_HASH_SCHEME, criterion_text_hash
from judgekit.verdict import Trust

from .test_trust import FP, UNKNOWN, calibration

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
ACCEPTANCE = "The refund was issued."
TEXTS = {("r1", "case.acceptance"): ACCEPTANCE, ("r2", "case.acceptance"): "The seat was changed."}


def with_criteria(reports, criteria: LabelledCriteria | None):
    return calibration(reports, "good").model_copy(update={"criteria": criteria})


def table(rows: list[str], header: str = "item_id,case_id,criterion,rater,label"):
    return parse_labels("\n".join([header, *rows]) + "\n", source="labels.csv")


# ------------------------------------------------------------------------------------------- hashing


def test_the_hash_is_pinned() -> None:
    # a changed profile or scheme must be a new scheme version: these stored values would stop matching
    assert CRITERION_HASH_SCHEME == "judgekit.criterion-text-sha256/1"
    pinned = "2f12868ede19c9507bc43b21a59e1af2332f3e3d8797c716bfe332ff891ffea6"
    assert criterion_text_hash(ACCEPTANCE) == criterion_text_hash(" The refund  was\nissued. ") == pinned
    assert criterion_text_hash("x") == "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"


words = st.lists(
    st.text(st.characters(blacklist_categories=("Zs", "Zl", "Zp", "Cc")), min_size=1), min_size=1
)
space = st.sampled_from([" ", "  ", "\n", "\t", "\r\n", "\u00a0", "\u2003"])


@given(words, st.lists(space, min_size=1), space, space)
def test_the_hash_is_stable_under_white_space_and_composition(
    parts: list[str], gaps: list[str], lead: str, tail: str
) -> None:
    import unicodedata

    spaced = lead + "".join(p + gaps[i % len(gaps)] for i, p in enumerate(parts[:-1])) + parts[-1] + tail
    plain = " ".join(parts)
    assert criterion_text_hash(spaced) == criterion_text_hash(plain)
    assert criterion_text_hash(unicodedata.normalize("NFD", plain)) == criterion_text_hash(plain)


@given(st.text(min_size=1))
def test_a_changed_word_is_another_text(text: str) -> None:
    assert criterion_text_hash(text + " not") != criterion_text_hash(text)


# ------------------------------------------------------------------------------------------- the record


def test_labelled_criteria_lists_ids_hashes_and_what_was_not_found() -> None:
    rows = [
        f"{item},{case},{criterion},{rater},pass"
        for item, case, criterion in (
            ("r1#1", "r1", "case.acceptance"),
            ("r2#1", "r2", "case.acceptance"),
            ("r3#1", "r3", "case.acceptance"),
            ("r1#1", "r1", "criterion:tone"),
        )
        for rater in ("e1", "judge")
    ]
    listed = labelled_criteria(table(rows), lambda case, criterion: TEXTS.get((case, criterion)))
    assert listed == LabelledCriteria(
        ids=("case.acceptance", "tone"),
        text_hashes=tuple(sorted(criterion_text_hash(t) for t in TEXTS.values())),
        unresolved=("case.acceptance", "tone"),  # r3 is not in the set; no text for tone
    )
    no_column = labelled_criteria(table(["i1,e1,pass", "i1,judge,pass"], "item_id,rater,label"), TEXTS.get)
    assert no_column == LabelledCriteria(unresolved=("",))


def test_a_record_written_before_the_hashes_loads_and_says_unknown(reports) -> None:
    data = json.loads(dump_record(with_criteria(reports, LabelledCriteria())))
    del data["criteria"]  # as judgekit wrote records before this field
    old = load_record(json.dumps(data), source="old.json")
    assert old.criteria is None
    for policy in ("count", "withhold"):  # unknown never withholds
        book = TrustBook.from_records("records", calibrations=[old], unlabelled_criteria=policy)  # type: ignore[arg-type]
        status = book.status(FP, "case.acceptance", text=ACCEPTANCE)
        assert (status.trust, status.criterion_labelled) == (Trust.TRUSTED, None)
        assert status.reason.endswith(f"; {UNKNOWN}")
        assert "never labelled" not in status.reason
        assert "is among" not in status.reason


# ------------------------------------------------------------------------------------------- the reason


@pytest.mark.parametrize(
    ("criterion", "text", "labelled", "says"),
    [
        ("case.acceptance", ACCEPTANCE, True, "its text ({h}) is among the calibration's 1 labelled text"),
        ("case.acceptance", "Something else.", False, "its text ({h}) was never labelled"),
        ("case.acceptance", None, True, "criterion 'case.acceptance' was labelled in the calibration (by id"),
        ("never_labelled", None, False, "criterion 'never_labelled' was never labelled in the calibration"),
        (
            "tone",
            "The agent is kind.",
            None,
            "whether its text ({h}) was labelled is unknown (the calibration",
        ),
        ("", None, None, ""),
    ],
)
def test_the_reason_says_whether_the_criterion_was_labelled(
    reports, criterion: str, text: str | None, labelled: bool | None, says: str
) -> None:
    listed = LabelledCriteria(
        ids=("case.acceptance", "tone"), text_hashes=(criterion_text_hash(ACCEPTANCE),), unresolved=("tone",)
    )
    got, clause = criterion_labelled(labelled_record := with_criteria(reports, listed), criterion, text)
    assert got is labelled
    assert says.format(h=criterion_text_hash(text or "")[:12]) in clause
    decision = TrustBook.from_records("r", calibrations=[labelled_record]).decide(FP, criterion, text=text)
    assert (decision.trust, decision.criterion_labelled) == (Trust.TRUSTED, labelled)
    assert decision.reason.endswith(clause)


def test_another_hash_scheme_is_never_compared(reports) -> None:
    listed = LabelledCriteria(scheme="judgekit.criterion-text-sha256/0", text_hashes=("x",))
    got, clause = criterion_labelled(with_criteria(reports, listed), "case.acceptance", ACCEPTANCE)
    assert got is None
    assert clause.startswith("criterion text: unknown (the record hashed its labelled texts by ")


def test_withhold_makes_only_a_never_labelled_text_untrusted(reports) -> None:
    listed = LabelledCriteria(ids=("case.acceptance",), text_hashes=(criterion_text_hash(ACCEPTANCE),))
    book = TrustBook.from_records(
        "r", calibrations=[with_criteria(reports, listed)], unlabelled_criteria="withhold"
    )
    assert book.decide(FP, "case.acceptance", text=ACCEPTANCE).trust is Trust.TRUSTED
    status = book.status(FP, "case.acceptance", text="A new acceptance.")
    assert (status.trust, status.withheld_by) == (Trust.UNTRUSTED, ("unlabelled_criterion",))
    assert status.reason.endswith("(withheld: unlabelled_criteria is withhold)")
    assert book.decide(FP).trust is Trust.TRUSTED  # the judge as a whole
    assert book.decide_text(FP, "case.acceptance", "A new acceptance.") == status.decision


def test_an_unknown_policy_is_refused(tmp_path) -> None:
    with pytest.raises(JudgekitError, match=r"must be one of count, withhold \(got 'always'\)") as info:
        TrustBook(tmp_path, unlabelled_criteria="always")  # type: ignore[arg-type]
    assert info.value.exit_code == 2
