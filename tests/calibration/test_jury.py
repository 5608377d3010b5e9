"""A jury against experts: effective votes, error correlations, fitted weights and the development split."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from judgekit.api.calibration import Calibration, CalibrationOptions, calibrate, fit_jury
from judgekit.calibration.jury import development_items, effective_votes
from judgekit.calibration.labels import parse_labels
from judgekit.errors import JudgekitError
from judgekit.judges.jury import Jury, JuryMember, load_jury


def table_text(wrong: dict[str, set[int]], n: int = 40, *, jury: bool = False) -> str:
    """Item i: truth pass when i is odd; alice and bob label the truth; each member errs on its set."""
    rows = ["item_id,criterion,case_id,rater,label"]
    for i in range(n):
        right = "pass" if i % 2 else "fail"
        other = "fail" if right == "pass" else "pass"
        rows += [f"i{i},g,c{i},alice,{right}", f"i{i},g,c{i},bob,{right}"]
        for member, errs in wrong.items():
            rows.append(f"i{i},g,c{i},{member},{other if i in errs else right}")
        if jury:  # the jury's majority of the members
            votes = [other if i in errs else right for errs in wrong.values()]
            rows.append(f"i{i},g,c{i},jury,{max(set(votes), key=votes.count)}")
    return "\n".join(rows) + "\n"


def calibrate_ab(labels: Path, records: Path, experts: tuple[str, ...] = ("alice", "bob")) -> Calibration:
    """Calibrate the rater ``jury`` as a majority jury of members ``a`` and ``b``."""
    jury = Jury(aggregation="majority", members=[JuryMember(name=m, model=f"x/{m}") for m in "ab"])
    return calibrate(
        labels, options=CalibrationOptions(judge="jury", experts=experts, records=records, jury=jury)
    )


@given(st.integers(min_value=1, max_value=50), st.floats(min_value=-1.0, max_value=1.0))
def test_effective_votes_lies_between_one_and_n(n: int, rho: float) -> None:
    value = effective_votes(n, rho)
    assert 1.0 - 1e-9 <= value <= n + 1e-9


def test_effective_votes_of_the_nine_judges_example() -> None:
    """Nine judges whose errors correlate at 0.5 are worth 1.8 independent votes: 9 / (1 + 8 * 0.5)."""
    assert effective_votes(9, 0.5) == pytest.approx(1.8)
    assert effective_votes(9, 0.0) == 9.0
    assert effective_votes(9, -0.2) == 9.0  # negative correlation counts as independence


def test_phi_matches_numpy_correlation_of_the_error_indicators(tmp_path: Path) -> None:
    wrong = {"a": {0, 1, 2, 3, 10}, "b": {0, 1, 2, 7, 11, 12}}
    labels = tmp_path / "labels.csv"
    labels.write_text(table_text({**wrong, "jury": wrong["a"]}))  # the jury's own rows: as member a
    result = calibrate_ab(labels, tmp_path)
    assert result.result.jury is not None
    (pair,) = result.result.jury.correlations
    x = np.array([i in wrong["a"] for i in range(40)], dtype=float)
    y = np.array([i in wrong["b"] for i in range(40)], dtype=float)
    assert pair.phi == pytest.approx(np.corrcoef(x, y)[0, 1])
    assert pair.both_wrong == 3
    assert result.result.jury.effective_votes == pytest.approx(2 / (1 + pair.phi))


def test_phi_is_undefined_when_a_member_is_never_wrong(tmp_path: Path) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_text(table_text({"a": set(), "b": {1, 2}, "jury": set()}))
    result = calibrate_ab(labels, tmp_path)
    jury = result.result.jury
    assert jury is not None
    (pair,) = jury.correlations
    assert pair.phi is None
    assert pair.reason == "a was never wrong on the shared items (its errors do not vary)"
    assert jury.effective_votes is None
    assert jury.effective_votes_reason == "no pair of members has a defined error correlation"


def _labels(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "labels.csv"
    path.write_text(text)
    return path


def test_weights_are_the_log_odds_of_smoothed_accuracy_on_development_items(tmp_path: Path) -> None:
    wrong = {"good": {0}, "fair": {0, 1, 2, 3, 4, 5, 6, 7}, "coin": set(range(0, 40, 2))}
    path = _labels(tmp_path, table_text(wrong))
    jury = fit_jury(
        path, [("good", "x/good"), ("fair", "x/fair"), ("coin", "x/coin")], experts=["alice", "bob"]
    )
    assert jury.aggregation == "weighted"
    assert jury.fit is not None
    table = parse_labels(path.read_bytes(), source=path)
    dev = development_items(table, share=0.5, seed=0)
    assert jury.fit.development_items == tuple(str(k) for k in dev)
    dev_ids = {int(k.item_id[1:]) for k in dev}
    for member in jury.members:
        agreed = len(dev_ids - wrong[member.name])
        a = (agreed + 0.5) / (len(dev_ids) + 1)
        assert member.weight == pytest.approx(max(0.0, math.log(a / (1 - a))))
        assert jury.fit.accuracy[member.name] == pytest.approx(agreed / len(dev_ids))
    weights = {m.name: m.weight for m in jury.members}
    assert weights["good"] > weights["fair"] > weights["coin"] >= 0.0
    # written and read back, it is a jury the grader accepts, and its record of what it was fitted on
    (tmp_path / "jury.json").write_text(jury.model_dump_json())
    assert load_jury(tmp_path / "jury.json") == jury


def test_calibrating_a_weighted_jury_leaves_its_development_items_out(tmp_path: Path) -> None:
    wrong = {"a": {0, 1}, "b": {2, 3}, "c": {4, 5}}
    path = _labels(tmp_path, table_text(wrong, jury=True))
    jury = fit_jury(path, [("a", "x/a"), ("b", "x/b"), ("c", "x/c")], experts=["alice", "bob"])
    notes: list[str] = []
    result = calibrate(
        path,
        options=CalibrationOptions(judge="jury", experts=["alice", "bob"], records=tmp_path, jury=jury),
        on_note=notes.append,
    )
    assert jury.fit is not None
    n_dev = len(jury.fit.development_items)
    assert 0 < n_dev < 40
    assert result.report.n_items == 40 - n_dev
    assert notes == [
        f"{n_dev} development item(s) that fitted the jury's weights were left out of this calibration "
        f"({40 - n_dev} items remain)"
    ]


def test_the_development_split_is_by_case_and_seeded(tmp_path: Path) -> None:
    rows = ["item_id,criterion,case_id,rater,label"] + [
        f"i{i}-{t},g,c{i},{r},pass" for i in range(30) for t in range(3) for r in ("alice", "m")
    ]
    table = parse_labels("\n".join(rows) + "\n", source=tmp_path / "labels.csv")
    dev = development_items(table, share=0.5, seed=3)
    cases = {k.item_id.split("-")[0] for k in dev}
    assert {k.item_id for k in dev} == {f"{c}-{t}" for c in cases for t in range(3)}  # whole cases
    assert dev == development_items(table, share=0.5, seed=3)
    assert dev != development_items(table, share=0.5, seed=4)


# --------------------------------------------------------------------------- refusals, one test each


def test_weighted_without_development_labels(tmp_path: Path) -> None:
    rows = "item_id,criterion,case_id,rater,label\n" + "".join(
        f"i{i},g,c{i},alice,pass\ni{i},g,c{i},a,insufficient_information\ni{i},g,c{i},b,insufficient_information\n"
        for i in range(10)
    )
    path = _labels(tmp_path, rows)
    with pytest.raises(JudgekitError) as info:
        fit_jury(path, [("a", "x/a"), ("b", "x/b")], experts=["alice"])
    assert info.value.exit_code == 2
    assert info.value.message.startswith(
        "aggregation weighted needs development labels: no development item has both an expert consensus "
        "and a member's pass or fail"
    )


def test_fit_a_one_member_jury(tmp_path: Path) -> None:
    path = _labels(tmp_path, table_text({"a": set()}))
    with pytest.raises(JudgekitError) as info:
        fit_jury(path, [("a", "x/a")], experts=["alice", "bob"])
    assert info.value.message.startswith("--member: a jury needs at least two members (got 1)")


def test_a_member_without_rows(tmp_path: Path) -> None:
    path = _labels(tmp_path, table_text({"a": set(), "b": set()}))
    with pytest.raises(JudgekitError) as info:
        fit_jury(path, [("a", "x/a"), ("zed", "x/zed")], experts=["alice", "bob"])
    assert info.value.message.startswith("jury: member(s) zed rated nothing in the label table")


def test_a_member_that_is_also_an_expert(tmp_path: Path) -> None:
    path = _labels(tmp_path, table_text({"a": set(), "b": set(), "jury": set()}))
    with pytest.raises(JudgekitError) as info:
        calibrate_ab(path, tmp_path, ("alice", "b"))
    assert info.value.message == "jury: member(s) b also named as the jury or an expert; a member is neither"


def test_a_development_share_out_of_range(tmp_path: Path) -> None:
    path = _labels(tmp_path, table_text({"a": set(), "b": set()}))
    with pytest.raises(
        JudgekitError, match=r"--development-share must be strictly between 0 and 1 \(got 1.0\)"
    ):
        fit_jury(path, [("a", "x/a"), ("b", "x/b")], experts=["alice", "bob"], development_share=1.0)


def test_every_member_no_better_than_chance(tmp_path: Path) -> None:
    path = _labels(tmp_path, table_text({"a": set(range(40)), "b": set(range(40))}))
    with pytest.raises(JudgekitError) as info:
        fit_jury(path, [("a", "x/a"), ("b", "x/b")], experts=["alice", "bob"])
    assert "no member agreed with the experts better than chance" in info.value.message
