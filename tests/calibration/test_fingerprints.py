"""The one rule that turns a typed fingerprint (full, or a prefix) into exactly one full fingerprint."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from judgekit.calibration.fingerprints import (
    FULL_LENGTH,
    MIN_PREFIX,
    SHORT_LENGTH,
    KnownFingerprints,
    resolve_fingerprint,
)
from judgekit.errors import JudgekitError

A = "86b6bb71d425" + "a" * 52
B = "86b6bb71d425" + "b" * 52
C = "0123456789ab" + "c" * 52


def known(*fingerprints: str) -> KnownFingerprints:
    out = KnownFingerprints(searched=["the records in recs (n fingerprint(s))"])
    for n, fp in enumerate(fingerprints):
        out.add(fp, f"calibration record r{n}.json")
    return out


def refused(typed: str, book: KnownFingerprints) -> str:
    with pytest.raises(JudgekitError) as info:
        resolve_fingerprint(typed, book, option="--fingerprint")
    assert info.value.exit_code == 2
    return str(info.value)


def test_the_printed_short_form_and_any_longer_prefix_name_the_one_full_fingerprint() -> None:
    book = known(A, C)
    assert resolve_fingerprint(C[:SHORT_LENGTH], book) == C
    assert resolve_fingerprint(C[:MIN_PREFIX], book) == C
    assert resolve_fingerprint(f"  {C[:20].upper()}\n", book) == C  # spaces dropped, read in lower case
    assert resolve_fingerprint(A[:13], known(A, B)) == A


def test_a_full_fingerprint_is_taken_as_is_without_reading_any_source() -> None:
    book = known()
    book.pending.append(lambda k: pytest.fail("a full fingerprint needs no source"))
    assert resolve_fingerprint(A.upper(), book) == A
    assert len(A) == FULL_LENGTH


def test_sources_are_read_only_for_a_prefix_and_only_once() -> None:
    reads: list[int] = []
    book = known()
    book.pending.append(lambda k: (reads.append(1), k.add(C, "the configured judge j"))[0])
    assert resolve_fingerprint(C[:12], book) == C
    assert resolve_fingerprint(C[:10], book) == C
    assert reads == [1]


def test_a_key_that_is_not_a_full_fingerprint_is_no_candidate() -> None:
    book = known("86b6bb71d425", "fp-v2")
    assert book.found == {}


def test_an_empty_fingerprint_is_refused() -> None:
    assert refused("  ", known(A)) == (
        "--fingerprint: the fingerprint is empty; give the judge's fingerprint (the 12 characters judgekit "
        "prints, as in `judge 86b6bb71d425: untrusted`, or all 64)"
    )


def test_text_that_is_not_hexadecimal_is_refused_naming_the_characters() -> None:
    message = refused("rubric:gpt:86b6bb71d425", known(A))
    assert message.startswith(
        "--fingerprint: 'rubric:gpt:86b6bb71d425' is not a fingerprint: a fingerprint is "
    )
    assert "hexadecimal (0-9, a-f) and ':', 'g', 'i', 'p', 'r' are not;" in message
    assert "'z' is not;" in refused("86b6bb71d42z", known(A))


def test_text_longer_than_a_fingerprint_is_refused() -> None:
    assert refused(A + "0", known(A)) == f"--fingerprint: '{A}0' has 65 characters; a fingerprint has 64"


def test_a_prefix_below_eight_characters_is_refused_even_when_it_would_match() -> None:
    assert refused(A[:7], known(A)) == (
        "--fingerprint: '86b6bb7' is too short to name one judge: give at least 8 characters of the "
        "fingerprint (judgekit prints 12, which always work)"
    )


def test_an_ambiguous_prefix_is_refused_naming_every_candidate_and_where_it_was_seen() -> None:
    assert refused("86b6bb71", known(A, B, C)) == (
        f"--fingerprint: 86b6bb71 is the start of 2 fingerprints: {A} (calibration record r0.json); {B} "
        "(calibration record r1.json); give more characters (or the full fingerprint) to choose one"
    )


def test_a_prefix_of_nothing_known_says_what_was_searched_and_what_to_do() -> None:
    message = refused("ffffffffffff", known(A))
    assert message.startswith(
        "--fingerprint: no known fingerprint starts with ffffffffffff (searched: the records in recs "
        "(n fingerprint(s))); give the judge's full 64-character fingerprint (`judge_fingerprint.hex` in "
    )
    assert "or configure the judge (judge.model in judgekit.toml)" in message
    assert "nothing (no records, no label table, no configured judge)" in refused(
        "ffffffff", KnownFingerprints()
    )


def test_a_record_keyed_by_a_prefix_is_named_when_nothing_matched() -> None:
    book = known()
    book.prefix_keyed.append(("86b6bb71d425", "the calibration record old.json is keyed by '86b6bb71d425'"))
    book.prefix_keyed.append(("0123456789ab", "the calibration record other.json is keyed by '0123456789ab'"))
    message = refused("86b6bb71d425", book)
    assert "); the calibration record old.json is keyed by '86b6bb71d425'; give the judge's full" in message
    assert "other.json" not in message


@given(st.text(alphabet="0123456789abcdef", min_size=MIN_PREFIX, max_size=FULL_LENGTH))
def test_every_prefix_of_a_known_fingerprint_resolves_to_it(prefix: str) -> None:
    full = (prefix + "0" * FULL_LENGTH)[:FULL_LENGTH]
    assert resolve_fingerprint(prefix, known(full)) == full


def test_the_start_of_a_record_file_name_is_told_apart_from_a_fingerprint() -> None:
    from datetime import UTC, datetime

    from judgekit.calibration.records import stamped_filename

    name = stamped_filename(A, datetime(2026, 12, 5, 19, 23, 10, tzinfo=UTC))
    assert not A.startswith(name[:SHORT_LENGTH])  # the name is a hash of the fingerprint, not the fingerprint
    book = known(A)
    book.file_names.append((name, A))
    message = refused(name[:SHORT_LENGTH], book)
    assert f"starts the file name {name}" in message
    assert "a hash of its fingerprint, not the fingerprint" in message
    assert f"that record is for judge {A[:SHORT_LENGTH]}" in message
