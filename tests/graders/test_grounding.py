"""Grounding: expected sources retrieved by a tool or cited in a reply."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.cases import Case
from judgekit.caseset import load_case_set
from judgekit.graders.grounding import check_grounding, find_source
from judgekit.transcript import read_transcripts
from judgekit.verdict import FailureCategory, Verdict

from ._build import by_id, make_case, make_transcript

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "airdesk"


def case(*sources: str) -> Case:
    return make_case(expected={"sources": list(sources)})


def test_cited_in_a_reply_passes_as_a_scored_check() -> None:
    t = make_transcript(texts=["Online check-in opens 24 hours before (policy CHK-1)."])
    [check] = check_grounding(case("CHK-1"), t)
    assert check.check_id == "grounding:CHK-1"
    assert check.verdict is Verdict.PASS
    assert check.reason == "CHK-1 was cited"
    assert check.gate is False
    assert check.score == 1.0
    assert check.evidence[0].message_index == 1
    assert "policy CHK-1" in (check.evidence[0].quote or "")


def test_retrieved_by_a_tool_result_or_answered_arguments() -> None:
    t = make_transcript(
        [("get_policy", {"doc_id": "BAG-2"}), ("search_kb", {"q": "refund"})],
        results=['{"text": "bags"}', '{"hits": [{"id": "REF-2", "title": "Refunds"}]}'],
    )
    checks = by_id(check_grounding(case("BAG-2", "REF-2"), t, mode="retrieved"))
    assert checks["grounding:BAG-2"].verdict is Verdict.PASS
    assert checks["grounding:BAG-2"].evidence[0].tool == "get_policy"
    assert checks["grounding:REF-2"].verdict is Verdict.PASS
    assert checks["grounding:REF-2"].evidence[0].call_index == 1


def test_an_error_result_is_not_a_retrieval() -> None:
    t = make_transcript([("get_policy", {"doc_id": "BAG-2"})], results=["Error: BAG-2 not found"])
    [check] = check_grounding(case("BAG-2"), t)
    assert check.verdict is Verdict.FAIL
    assert check.category is FailureCategory.INCORRECT_REPORTING
    assert check.score == 0.0
    assert check.reason == (
        "expected source BAG-2 was not retrieved by a tool or cited in a reply: it appears nowhere in the "
        "tool results or the replies"
    )


@pytest.mark.parametrize(
    ("text", "found"),
    [
        pytest.param("see BAG-2.", True, id="plain"),
        pytest.param("see bag 2 for details", True, id="space_and_case"),
        pytest.param("(BAG_2)", True, id="underscore_in_brackets"),
        pytest.param("see BAG\u20112", True, id="non_breaking_hyphen"),
        pytest.param("see BAG-20", False, id="longer_number"),
        pytest.param("see XBAG-2", False, id="longer_prefix"),
        pytest.param("see BAG-", False, id="incomplete"),
    ],
)
def test_source_ids_match_as_whole_tokens(text: str, found: bool) -> None:
    t = make_transcript(texts=[text])
    assert bool(find_source("BAG-2", t)) is found


def test_modes() -> None:
    retrieved_only = make_transcript([("get_policy", {"doc_id": "SSR-1"})], texts=["Done."])
    cited_only = make_transcript(texts=["Per SSR-1, the team decides."])
    both = make_transcript([("get_policy", {"doc_id": "SSR-1"})], texts=["Per SSR-1, the team decides."])
    c = case("SSR-1")
    verdicts = {
        (name, mode): check_grounding(c, t, mode=mode)[0].verdict
        for name, t in (("retrieved", retrieved_only), ("cited", cited_only), ("both", both))
        for mode in ("retrieved_or_cited", "retrieved", "cited", "retrieved_and_cited")
    }
    assert verdicts == {
        ("retrieved", "retrieved_or_cited"): Verdict.PASS,
        ("retrieved", "retrieved"): Verdict.PASS,
        ("retrieved", "cited"): Verdict.FAIL,
        ("retrieved", "retrieved_and_cited"): Verdict.FAIL,
        ("cited", "retrieved_or_cited"): Verdict.PASS,
        ("cited", "retrieved"): Verdict.FAIL,
        ("cited", "cited"): Verdict.PASS,
        ("cited", "retrieved_and_cited"): Verdict.FAIL,
        ("both", "retrieved_or_cited"): Verdict.PASS,
        ("both", "retrieved"): Verdict.PASS,
        ("both", "cited"): Verdict.PASS,
        ("both", "retrieved_and_cited"): Verdict.PASS,
    }
    fail = check_grounding(c, retrieved_only, mode="cited")[0]
    assert fail.reason.endswith("it was only retrieved, never cited")


def test_lossy_transcript_is_insufficient_information_not_fail() -> None:
    t = make_transcript([("search_kb", {"q": "bags"})], results=[None], texts=["You get one bag."])
    [check] = check_grounding(case("BAG-2"), t)
    assert check.verdict is Verdict.INSUFFICIENT_INFORMATION
    assert "1 tool call(s) have no recorded result (calls 0)" in check.reason
    assert check.score is None


def test_gate_option_and_no_sources() -> None:
    t = make_transcript(texts=["no source"])
    [check] = check_grounding(case("BAG-2"), t, gate=True)
    assert check.gate is True
    assert check.score is None
    assert check.verdict is Verdict.FAIL
    [none] = check_grounding(make_case(), t)
    assert none.verdict is Verdict.NOT_EVALUATED
    assert none.reason == "the case lists no expected sources"
    with pytest.raises(ValueError, match="unknown grounding mode"):
        check_grounding(make_case(), t, mode="quoted")  # type: ignore[arg-type]


def test_inputs_are_not_mutated() -> None:
    t = make_transcript(texts=["per BAG-2"])
    c = case("BAG-2")
    before = (t.model_dump(), c.model_dump())
    check_grounding(c, t)
    assert (t.model_dump(), c.model_dump()) == before


def test_airdesk_reference_solutions() -> None:
    """Half the example's references cite their source; the others answer without naming it."""
    case_set = load_case_set(EXAMPLE)
    verdicts: dict[str, Verdict] = {}
    for loaded in case_set.reviewed():
        c = loaded.case
        if not (c.expected and c.expected.sources and c.reference_solution):
            continue
        [ref] = [t for t in read_transcripts(EXAMPLE / c.reference_solution) if t.case_id == c.id]
        for check in check_grounding(c, ref):
            verdicts[check.check_id.replace("grounding:", c.id + ":")] = check.verdict
            assert check.verdict in (Verdict.PASS, Verdict.FAIL)
            assert check.evidence or check.verdict is Verdict.FAIL
    assert verdicts["GS-HV-0001:CHK-1"] is Verdict.PASS
    assert verdicts["GS-REG-0107:BAG-2"] is Verdict.PASS
    assert verdicts["GS-SEC-0001:PRV-1"] is Verdict.PASS
    assert verdicts["GS-POL-0005:DIS-4"] is Verdict.FAIL
    assert len(verdicts) == 10


def test_opt_in_through_the_layered_checks_and_grade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from judgekit.cli import main
    from judgekit.graders.layered import combine, deterministic_checks
    from judgekit.results import read_results
    from judgekit.state.provider import StateProvider

    c = case("BAG-2")
    t = make_transcript(texts=["One bag is included."])
    plain = deterministic_checks(c, t, states=StateProvider())
    assert not [x for x in plain if x.layer == "grounding"]
    grounded = deterministic_checks(c, t, states=StateProvider(), grounding="cited")
    [g] = [x for x in grounded if x.layer == "grounding"]
    assert g.verdict is Verdict.FAIL
    assert combine(c, 1, grounded).quality == 0.0  # scored: lowers quality, does not gate
    assert combine(c, 1, grounded).verdict is combine(c, 1, plain).verdict

    out = tmp_path / "r.jsonl"
    args = ["grade", "--cases", str(EXAMPLE), "--transcripts", str(EXAMPLE / "runs" / "agent-v2.jsonl")]
    assert main([*args, "--out", str(out), "--no-progress", "--grounding", "retrieved_or_cited"]) == 0
    lines = read_results(out).lines
    assert all(line.grading["grounding"] == "retrieved_or_cited" for line in lines)
    layers = {c.check_id for line in lines for c in line.checks if c.layer == "grounding"}
    assert "grounding:CHK-1" in layers
    capsys.readouterr()
    assert main([*args, "--out", str(tmp_path / "x.jsonl"), "--grounding", "quoted"]) == 2
    assert "--grounding must be one of" in capsys.readouterr().err


def test_the_quote_of_a_long_reply_is_cut_between_words() -> None:
    # issue 35: the quote was cut 60 characters either side of the source id, mid-word
    reply = (
        "Thank you for your patience while I looked this up for you in our published policies. Online "
        "check-in opens 24 hours before departure (policy CHK-1), and it closes one hour before for "
        "every international itinerary we sell."
    )
    [check] = check_grounding(case("CHK-1"), make_transcript(texts=[reply]))
    quote = check.evidence[0].quote or ""
    assert quote == (
        "...Online check-in opens 24 hours before departure (policy CHK-1), and it closes one hour before "
        "for every international..."
    )
    body = quote.removeprefix("...").removesuffix("...")
    at = reply.index(body)
    assert reply[at - 1] == " "
    assert reply[at + len(body)] == " "
