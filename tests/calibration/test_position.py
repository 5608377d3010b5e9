"""Position consistency from recorded two-order pairwise judgments (no judge is called)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.calibration.bias import load_bias_report
from judgekit.calibration.position import (
    Judgment,
    parse_judgments,
    parse_llmbar,
    position_consistency,
    read_recorded,
)
from judgekit.calibration.trust import TrustBook
from judgekit.errors import JudgekitError, ProblemsError

DATA = Path(__file__).parent / "data"
LLMBAR = DATA / "llmbar_result.json"
ORIGINAL = DATA / "recorded_original.csv"
SWAPPED = DATA / "recorded_swapped.csv"

#: A full judge fingerprint (64 hexadecimal characters), as judgekit writes them.
FP_1 = "f1" * 32


def run(capsys, *args: str) -> tuple[int, str, str]:
    from judgekit.cli import main  # imported here: the CLI loads every command module

    code = main(list(args))
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


# ------------------------------------------------------------------------------ the swapped-order mapping


def test_swapped_a_means_the_originally_second_output() -> None:
    rows = parse_judgments(
        "item_id,order,winner\nx,original,A\nx,swapped,A\ny,original,B\ny,swapped,A\n", source="j.csv"
    )
    assert [(j.item_id, j.order, j.winner) for j in rows] == [
        ("x", "original", "1"),
        ("x", "swapped", "2"),
        ("y", "original", "2"),
        ("y", "swapped", "2"),
    ]


def test_hand_computed_two_file_example() -> None:
    # q1 A/B, q2 B/A, q5 A/B: same output; q6 tie/tie: same; q3 A/A: first-shown both times;
    # q4 tie/A: a tie in one order only; q7 and q8 are judged in one order.
    report = position_consistency(read_recorded(ORIGINAL, SWAPPED))
    assert (report.items, report.paired, report.consistent, report.ties_both) == (8, 6, 4, 1)
    assert (report.first_both, report.second_both, report.tie_and_pick) == (1, 0, 1)
    assert report.consistency.value == pytest.approx(4 / 6)
    assert report.flip_rate.value == pytest.approx(2 / 6)
    assert report.consistency.interval is not None
    assert report.consistency.interval.method == "wilson"
    assert report.consistency.interval.low == pytest.approx(0.3000, abs=1e-3)  # Wilson 4/6
    assert report.position_effect.value == pytest.approx(1 / 6)
    assert report.only_one_order == (("q7", "original"), ("q8", "swapped"))
    assert report.verdict == "clear"


def test_llmbar_fixture() -> None:
    judgments = parse_llmbar(LLMBAR.read_bytes(), source=LLMBAR)
    report = position_consistency(judgments)
    assert (report.items, report.paired, report.consistent) == (9, 8, 4)
    assert (report.first_both, report.second_both, report.tie_and_pick) == (3, 1, 0)
    assert report.no_winner == (("#9", "original"),)
    assert report.sign_test_p == pytest.approx(0.625)
    assert report.first_position_share.value == pytest.approx(0.75)


def test_strong_first_position_preference_is_biased() -> None:
    judgments = [Judgment(f"i{k}", "original", "1", k, None) for k in range(30)]
    judgments += [Judgment(f"i{k}", "swapped", "2", k, None) for k in range(30)]
    report = position_consistency(judgments)
    assert report.verdict == "biased"
    assert report.position_effect.value == 1.0
    assert report.sign_test_p < 1e-6


def test_nothing_paired_is_an_error_not_clear() -> None:
    report = position_consistency([Judgment("a", "original", "1", 1, None)])
    assert report.verdict == "error"
    assert report.consistency.value is None
    assert report.consistency.undefined_reason == "no items judged in both orders to compute it on"


# ------------------------------------------------------------------------------ parse errors


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "item_id,order,winner\nx,original,first\n",
            "j.csv:2: winner: 'first' is not A, B or tie "
            "(A: the first-shown output, B: the second-shown one)",
            id="unknown_winner",
        ),
        pytest.param(
            "item_id,order,winner\nx,,A\n",
            "j.csv:2: order: required field is missing or empty; give original or swapped",
            id="missing_order",
        ),
        pytest.param(
            "item_id,order,winner\nx,reversed,A\n",
            "j.csv:2: order: 'reversed' is not original or swapped",
            id="unknown_order",
        ),
        pytest.param(
            "item_id,order,winner\n,original,A\n",
            "j.csv:2: item_id: required field is missing or empty; give the item's id",
            id="missing_item",
        ),
        pytest.param(
            "item_id,order,winner\nx,original,A\nx,original,B\n",
            "j.csv:3: item_id: item 'x' is judged in the original order on line 2 too; keep one judgment per "
            "item and order",
            id="duplicate_item",
        ),
        pytest.param(
            "item_id,side,winner\nx,original,A\n",
            "j.csv:1: side: unknown column; known columns: item_id, order, winner",
            id="unknown_column",
        ),
        pytest.param("item_id,order,winner\n", "j.csv: the file has no judgments", id="empty"),
    ],
)
def test_plain_format_errors(text: str, message: str) -> None:
    with pytest.raises(ProblemsError) as exc:
        parse_judgments(text, source="j.csv")
    assert str(exc.value) == message


def test_jsonl_unknown_field_named_with_line() -> None:
    with pytest.raises(ProblemsError) as exc:
        parse_judgments('{"item_id": "x", "order": "original", "winner": "A", "who": 1}\n', source="j.jsonl")
    assert str(exc.value) == "j.jsonl:1: who: unknown field; known fields: item_id, order, winner"


def test_row_of_the_other_order_in_a_one_order_file() -> None:
    with pytest.raises(ProblemsError) as exc:
        parse_judgments("item_id,order,winner\nx,original,A\n", source="s.csv", order="swapped")
    assert str(exc.value).startswith("s.csv:2: order: 'original' in a file of swapped-order judgments")


def test_llmbar_bad_winner_named_by_element() -> None:
    doc = [{"results": [{"swap = False": {"winner": "1"}, "swap = True": {"winner": "a"}}]}]
    with pytest.raises(ProblemsError) as exc:
        parse_llmbar(json.dumps(doc), source="r.json")
    assert str(exc.value) == 'r.json: [0].results[-1].swap = True.winner: \'a\' is not "1", "2" or null'


def test_llmbar_missing_order() -> None:
    doc = [{"results": [{"swap = False": {"winner": "1"}}]}]
    with pytest.raises(ProblemsError) as exc:
        parse_llmbar(json.dumps(doc), source="r.json")
    assert str(exc.value) == 'r.json: [0].results[-1].swap = True: missing, or has no "winner"'


def test_llmbar_not_an_array() -> None:
    with pytest.raises(ProblemsError) as exc:
        parse_llmbar("{}", source="r.json")
    assert "a non-empty JSON array of evaluated items" in str(exc.value)


def test_llmbar_with_swapped_is_refused() -> None:
    with pytest.raises(JudgekitError, match="holds both orders; drop --swapped"):
        read_recorded(LLMBAR, SWAPPED)


# ------------------------------------------------------------------------------ properties

_pick = st.sampled_from(["1", "2", "tie"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_pick, _pick), min_size=1, max_size=40))
def test_consistency_and_flip_rate_sum_to_one_and_ignore_file_roles(pairs: list[tuple[str, str]]) -> None:
    forward = [Judgment(f"i{k}", "original", a, k, None) for k, (a, _) in enumerate(pairs)]  # type: ignore[arg-type]
    forward += [Judgment(f"i{k}", "swapped", b, k, None) for k, (_, b) in enumerate(pairs)]  # type: ignore[arg-type]
    # Swapping the files' roles: what was shown second is now "original" (output labels swap too).
    relabel = {"1": "2", "2": "1", "tie": "tie"}
    backward = [Judgment(f"i{k}", "original", relabel[b], k, None) for k, (_, b) in enumerate(pairs)]  # type: ignore[arg-type]
    backward += [Judgment(f"i{k}", "swapped", relabel[a], k, None) for k, (a, _) in enumerate(pairs)]  # type: ignore[arg-type]
    one, two = position_consistency(forward), position_consistency(backward)
    assert one.consistency.value is not None
    assert one.flip_rate.value is not None
    assert one.consistency.value + one.flip_rate.value == pytest.approx(1.0)
    assert one.consistency == two.consistency
    assert (one.first_both, one.second_both) == (two.first_both, two.second_both)


# ------------------------------------------------------------------------------ CLI


def test_cli_text_on_llmbar(capsys) -> None:
    code, out, err = run(capsys, "judge", "probe-bias", "--recorded", str(LLMBAR))
    assert code == 0
    assert "position consistency: 0.500 [0.215, 0.785] (n=8)" in out
    assert "warning: 1 judgment(s) without a winner, their items not paired: #9 (original)" in err
    assert "no --fingerprint: no bias report written" in err


def test_cli_json_two_files(capsys) -> None:
    code, out, _ = run(
        capsys,
        "judge",
        "probe-bias",
        "--recorded",
        str(ORIGINAL),
        "--swapped",
        str(SWAPPED),
        "--format",
        "json",
    )
    assert code == 0
    doc = json.loads(out)
    assert doc["kind"] == "position_probe"
    assert doc["report"]["consistent"] == 4
    assert doc["report"]["only_one_order"] == [["q7", "original"], ["q8", "swapped"]]


def test_cli_biased_record_withholds_trust(capsys, tmp_path: Path) -> None:
    rows = ["item_id,order,winner"] + [f"i{k},{o},A" for k in range(20) for o in ("original", "swapped")]
    table = tmp_path / "always_a.csv"
    table.write_text("\n".join(rows) + "\n")
    records = tmp_path / "records"
    records.mkdir()
    code, _, err = run(
        capsys,
        "judge",
        "probe-bias",
        "--recorded",
        str(table),
        "--fingerprint",
        FP_1,
        "--records",
        str(records),
    )
    assert code == 1
    assert "position (recorded): NOT CLEAR: biased" in err
    (filed,) = (records / "bias").glob("*.json")
    bias = load_bias_report(filed.read_bytes(), source=filed)
    assert bias.blocks_trust
    assert bias.results[0].toward_pass == 20
    decision = TrustBook(records).decide(FP_1)
    assert decision.trust != "TRUSTED"
    assert "must-pass probe(s) not clear: position" in decision.reason


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ["--swapped", str(Path(__file__).parent / "data" / "recorded_swapped.csv")],
            "error: --swapped and --fingerprint apply to --recorded FILE",
            id="swapped_alone",
        ),
        pytest.param(
            [],
            "error: probe-bias needs --transcripts and --judge-model (live probes), or --recorded FILE",
            id="nothing",
        ),
    ],
)
def test_cli_usage_errors(capsys, args: list[str], message: str) -> None:
    code, _, err = run(capsys, "judge", "probe-bias", *args)
    assert code == 2
    assert err.startswith(message)


def test_cli_recorded_with_transcripts(capsys, tmp_path: Path) -> None:
    transcripts = tmp_path / "t.jsonl"
    transcripts.write_text("")
    code, _, err = run(
        capsys, "judge", "probe-bias", "--recorded", str(LLMBAR), "--transcripts", str(transcripts)
    )
    assert code == 2
    assert "drop --transcripts (it is for live probes)" in err


def test_cli_bad_row_is_located(capsys, tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,order,winner\nx,original,maybe\n")
    code, _, err = run(capsys, "judge", "probe-bias", "--recorded", str(bad))
    assert code == 2
    assert f"{bad}:2: winner: 'maybe' is not A, B or tie" in err
