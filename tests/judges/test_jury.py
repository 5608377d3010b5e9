"""The jury file and the declared aggregations (majority, any_fail, weighted), with each refusal."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from judgekit.errors import ProblemsError
from judgekit.judges.jury import Jury, JuryMember, aggregate, load_jury
from judgekit.verdict import Verdict

P, F, U, E = Verdict.PASS, Verdict.FAIL, Verdict.INSUFFICIENT_INFORMATION, Verdict.ERROR
FIT = {
    "labels": "labels.csv",
    "labels_sha256": "0" * 64,
    "experts": ["alice"],
    "development_items": ["i1"],
    "accuracy": {"a": 0.9, "b": 0.6, "c": 0.6},
    "decided": {"a": 10, "b": 10, "c": 10},
}


def jury(aggregation: str, n: int = 3, weights: tuple[float, ...] | None = None) -> Jury:
    members = [
        JuryMember(name=name, model=f"openai/{name}", weight=None if weights is None else weights[i])
        for i, name in enumerate("abcde"[:n])
    ]
    fit = FIT if aggregation == "weighted" else None
    return Jury.model_validate({"aggregation": aggregation, "members": members, "fit": fit})


@pytest.mark.parametrize(
    ("votes", "expected"),
    [
        pytest.param((P, P, F), P, id="two_of_three_pass"),
        pytest.param((F, F, P), F, id="two_of_three_fail"),
        pytest.param((P, F, U), U, id="no_absolute_majority"),
        pytest.param((P, U, U), U, id="abstentions_do_not_make_a_majority"),
        pytest.param((P, F, E), E, id="the_error_could_have_decided"),
        pytest.param((P, P, E), P, id="the_error_could_not_change_it"),
        pytest.param((U, U, E), U, id="the_error_could_not_make_a_majority"),
    ],
)
def test_majority(votes: tuple[Verdict, ...], expected: Verdict) -> None:
    assert aggregate(jury("majority"), votes) is expected


def test_majority_tie_goes_to_a_human() -> None:
    assert aggregate(jury("majority", 4), (P, P, F, F)) is U


@pytest.mark.parametrize(
    ("votes", "expected"),
    [
        pytest.param((P, P, F), F, id="one_fail_fails"),
        pytest.param((E, U, F), F, id="a_fail_fails_whatever_else"),
        pytest.param((P, P, P), P, id="all_pass"),
        pytest.param((P, P, U), U, id="an_abstention_keeps_it_open"),
        pytest.param((P, P, E), E, id="an_error_keeps_it_open"),
    ],
)
def test_any_fail(votes: tuple[Verdict, ...], expected: Verdict) -> None:
    assert aggregate(jury("any_fail"), votes) is expected


@pytest.mark.parametrize(
    ("votes", "expected"),
    [
        pytest.param((P, F, F), P, id="a_heavy_member_outvotes_two_light_ones"),
        pytest.param((F, P, P), F, id="and_the_reverse"),
        pytest.param((U, P, F), U, id="equal_weights_cancel"),
        pytest.param((E, P, E), E, id="missing_weight_could_flip_it"),
        pytest.param((P, F, E), P, id="missing_weight_too_small_to_flip_it"),
    ],
)
def test_weighted(votes: tuple[Verdict, ...], expected: Verdict) -> None:
    assert aggregate(jury("weighted", weights=(2.2, 0.4, 0.4)), votes) is expected


@given(st.lists(st.sampled_from([P, F, U, E]), min_size=3, max_size=3))
def test_weighted_with_equal_weights_agrees_with_majority_when_every_member_decides(
    votes: list[Verdict],
) -> None:
    """With equal weights and no abstention or error, the weighted vote is the majority vote."""
    if any(v in (U, E) for v in votes):
        return
    assert aggregate(jury("weighted", weights=(1.0, 1.0, 1.0)), votes) is aggregate(jury("majority"), votes)


def test_the_verdict_does_not_depend_on_member_order_for_majority_and_any_fail() -> None:
    for aggregation in ("majority", "any_fail"):
        for votes in itertools.product((P, F, U, E), repeat=3):
            results = {aggregate(jury(aggregation), perm) for perm in itertools.permutations(votes)}
            assert len(results) == 1, (aggregation, votes)


def test_one_verdict_per_member() -> None:
    with pytest.raises(ValueError, match="2 verdicts for a jury of 3"):
        aggregate(jury("majority"), (P, P))


# --------------------------------------------------------------------------- the jury file


def _load(tmp_path: Path, text: str) -> Jury:
    path = tmp_path / "jury.yaml"
    path.write_text(text)
    return load_jury(path)


def _problem(tmp_path: Path, text: str) -> str:
    with pytest.raises(ProblemsError) as info:
        _load(tmp_path, text)
    assert info.value.exit_code == 2
    return str(info.value)


def test_a_jury_file_reads(tmp_path: Path) -> None:
    loaded = _load(
        tmp_path,
        "aggregation: any_fail\nmembers:\n  - {name: a, model: openai/a}\n  - {name: b, model: openai/b}\n",
    )
    assert loaded.names == ("a", "b")
    assert loaded.aggregation == "any_fail"


def test_unknown_aggregation(tmp_path: Path) -> None:
    message = _problem(
        tmp_path,
        "aggregation: mean\nmembers:\n  - {name: a, model: openai/a}\n  - {name: b, model: openai/b}\n",
    )
    assert (
        "jury.yaml:1: aggregation: unknown aggregation 'mean': use one of majority, any_fail, weighted"
        in (message)
    )


def test_one_member_jury(tmp_path: Path) -> None:
    message = _problem(tmp_path, "aggregation: majority\nmembers:\n  - {name: a, model: openai/a}\n")
    assert (
        "a jury needs at least two members (got 1); for one judge, leave the jury out and set judge.model"
        in (message)
    )


def test_a_member_named_twice(tmp_path: Path) -> None:
    message = _problem(
        tmp_path,
        "aggregation: majority\nmembers:\n  - {name: a, model: openai/a}\n  - {name: a, model: openai/b}\n",
    )
    assert "member name(s) a given twice" in message


def test_weighted_without_fitted_weights(tmp_path: Path) -> None:
    message = _problem(
        tmp_path,
        "aggregation: weighted\nmembers:\n  - {name: a, model: openai/a}\n  - {name: b, model: openai/b}\n",
    )
    assert "aggregation weighted needs each member's weight fitted on development labels" in message
    assert "judgekit judge fit-jury" in message


def test_weights_on_a_majority_jury(tmp_path: Path) -> None:
    message = _problem(
        tmp_path,
        "aggregation: majority\nmembers:\n  - {name: a, model: openai/a, weight: 1.0}\n"
        "  - {name: b, model: openai/b}\n",
    )
    assert (
        "weights and fit are for aggregation weighted; aggregation majority takes none (remove them from a)"
        in (message)
    )


def test_an_unknown_field_is_named(tmp_path: Path) -> None:
    message = _problem(
        tmp_path,
        "aggregation: majority\nmembers:\n  - {name: a, modle: openai/a}\n  - {name: b, model: openai/b}\n",
    )
    assert "unknown field 'modle'" in message


def test_a_jury_file_that_is_not_a_mapping(tmp_path: Path) -> None:
    from judgekit.errors import JudgekitError

    with pytest.raises(JudgekitError, match="a jury file must be a mapping with aggregation and members"):
        _load(tmp_path, "- a\n- b\n")
