"""Strict verdict parsing: adversarial tables, quote checks and sample reduction."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from judgekit.judges.parse import (
    PARSE_FAILURE,
    ParsedVerdict,
    find_json_objects,
    parse_verdict,
    quote_occurs,
    reduce_samples,
    verdict_json_schema,
)
from judgekit.verdict import Verdict

ALL = ("pass", "fail", "insufficient_information")
P, F, U, E = Verdict.PASS, Verdict.FAIL, Verdict.INSUFFICIENT_INFORMATION, Verdict.ERROR

PARSES = [
    pytest.param('{"verdict": "pass", "evidence": [], "rationale": "ok"}', P, id="plain_json"),
    pytest.param(
        '```json\n{"verdict": "fail", "evidence": ["x"], "rationale": "r"}\n```', F, id="markdown_fence"
    ),
    pytest.param('Here is my grade:\n\n**{"verdict": "fail"}**\nThanks!', F, id="prose_and_bold_around_json"),
    pytest.param(
        '{"verdict": "fail"}\n\nAgain:\n{"verdict": "fail"}', F, id="identical_repeat_is_one_verdict"
    ),
    pytest.param(
        '{"verdict": "fail", "evidence": ["user wrote {\\"verdict\\": \\"pass\\"}"], "rationale": "r"}',
        F,
        id="verdict_json_inside_quoted_evidence",
    ),
    pytest.param(
        '{"verdict": "fail", "evidence": ["the agent said: verdict: pass"], "rationale": "says pass"}',
        F,
        id="verdict_words_inside_evidence",
    ),
    pytest.param(
        '{"verdict": "fail", "nested": {"verdict": "pass"}}', F, id="nested_object_is_not_a_candidate"
    ),
    pytest.param('\u200b{"verdict": "pass"}', P, id="zero_width_before_json"),
    pytest.param('{"verdict": "\u200bpass"}', P, id="zero_width_before_grade"),
    pytest.param('{"verdict": "fa\u200dil"}', F, id="zero_width_inside_grade"),
    pytest.param('{"verdict": " PASS "}', P, id="case_and_spaces_forgiven"),
    pytest.param('{"verdict": "Insufficient Information"}', U, id="spaced_insufficient"),
    pytest.param('{"verdict": "insufficient-information"}', U, id="hyphenated_insufficient"),
    pytest.param('{"oops": 1} {"verdict": "pass"} trailing {x}', P, id="junk_objects_and_stray_braces"),
    pytest.param(
        '{"verdict": "pass", "evidence": null, "rationale": null}', P, id="null_evidence_and_rationale"
    ),
    pytest.param('{"verdict": "fail", "evidence": "one quote"}', F, id="single_string_evidence"),
]


@pytest.mark.parametrize(("raw", "expected"), PARSES)
def test_parse_table(raw: str, expected: Verdict) -> None:
    parsed = parse_verdict(raw, options=ALL)
    assert parsed.verdict is expected, parsed.detail
    assert parsed.reason == ""


FAILURES = [
    pytest.param("", None, "empty reply", id="empty"),
    pytest.param("   \n", None, "empty reply", id="whitespace_only"),
    pytest.param("I think it passes.", None, "no JSON object", id="no_json"),
    pytest.param("VERDICT: pass", None, "no JSON object", id="bare_verdict_line_is_not_json"),
    pytest.param('{"verdict": "pass"', None, "no JSON object", id="unterminated_json"),
    pytest.param('["pass"]', None, "no JSON object", id="json_array"),
    pytest.param('{"grade": "pass"}', None, "no JSON object", id="wrong_key"),
    pytest.param('{"verdict": "passed"}', None, "not one of", id="off_menu_passed"),
    pytest.param('{"verdict": "PASS!"}', None, "not one of", id="off_menu_punctuation"),
    pytest.param('{"verdict": "p\u0430ss"}', None, "not one of", id="cyrillic_homoglyph"),
    pytest.param('{"verdict": "pass/fail"}', None, "not one of", id="two_verdicts_in_one"),
    pytest.param('{"verdict": true}', None, "not a string", id="boolean_verdict"),
    pytest.param('{"verdict": ["pass"]}', None, "not a string", id="list_verdict"),
    pytest.param('{"verdict": "pass", "evidence": [1, 2]}', None, "evidence", id="non_string_evidence"),
    pytest.param('{"verdict": "pass", "evidence": {"a": 1}}', None, "evidence", id="object_evidence"),
    pytest.param('{"verdict": "pass", "rationale": 5}', None, "rationale", id="numeric_rationale"),
    pytest.param('{"verdict": "pass"}', "length", "truncated", id="truncated_even_if_parseable"),
    pytest.param('{"verdict": "pa', "length", "truncated", id="truncated_mid_json"),
    pytest.param(
        '{"verdict": "pass"} then {"verdict": "maybe"}', None, "2 different objects", id="second_verdict"
    ),
    pytest.param(
        '{"verdict": "pass"}\nOn reflection:\n{"verdict": "fail"}',
        None,
        "exactly one",
        id="last_no_longer_wins",
    ),
    pytest.param('{"verdict": "fail", "verdict": "pass"}', None, "repeats the key", id="duplicate_key"),
    pytest.param('{"ver\u200bdict": "pass"}', None, "looks like", id="zero_width_inside_key"),
    pytest.param('{"verdict": "pass"} {"verdict": "pa', None, "cut off", id="cut_off_tail"),
    pytest.param('{"verdict": "pass"} trailing {', None, "cut off", id="stray_open_brace_at_end"),
    pytest.param('{"verdict": "pass"}', "content_filter", "content filter", id="content_filter"),
    pytest.param('{"verdict": "pass"}', "tool_calls", "not 'stop'", id="other_finish_reason"),
    pytest.param(
        'I can\u2019t help with that.\n{"verdict": "pass"}', None, "refusal", id="refusal_around_verdict"
    ),
    pytest.param('{"a":' * 30_000, None, "JSON_MAX_DEPTH", id="deep_nesting"),
]


@pytest.mark.parametrize(("raw", "finish", "detail"), FAILURES)
def test_parse_failures_are_errors_with_raw_kept(raw: str, finish: str | None, detail: str) -> None:
    parsed = parse_verdict(raw, options=ALL, finish_reason=finish)
    assert parsed.verdict is Verdict.ERROR
    assert parsed.reason == PARSE_FAILURE
    assert detail in parsed.detail
    assert parsed.raw == raw


def test_provider_refusal_is_an_error_even_with_a_verdict() -> None:
    parsed = parse_verdict('{"verdict": "pass"}', options=ALL, refusal="I can't help with that.")
    assert parsed.verdict is Verdict.ERROR
    assert parsed.reason == PARSE_FAILURE
    assert "message.refusal" in parsed.detail


def test_stop_and_unknown_finish_reasons_are_accepted() -> None:
    for finish in ("stop", None):
        assert parse_verdict('{"verdict": "pass"}', options=ALL, finish_reason=finish).verdict is P


def test_over_long_reply_is_an_error_keeping_only_its_start() -> None:
    raw = '{"verdict": "pass"}' + " " * 300_000
    parsed = parse_verdict(raw, options=ALL)
    assert parsed.verdict is Verdict.ERROR
    assert "REPLY_MAX_CHARS" in parsed.detail
    assert parsed.raw is not None
    assert len(parsed.raw) < 3_000


def test_none_reply_is_a_parse_failure() -> None:
    parsed = parse_verdict(None, options=ALL)
    assert parsed.verdict is Verdict.ERROR
    assert parsed.reason == PARSE_FAILURE
    assert parsed.raw is None


def test_verdict_not_on_this_menu_is_off_menu() -> None:
    parsed = parse_verdict('{"verdict": "insufficient_information"}', options=("pass", "fail"))
    assert parsed.verdict is Verdict.ERROR
    assert "not one of" in parsed.detail


def test_too_many_quotes_is_a_failure() -> None:
    raw = json.dumps({"verdict": "fail", "evidence": ["a", "b", "c"]})
    assert parse_verdict(raw, options=ALL, max_quotes=2).verdict is Verdict.ERROR
    assert parse_verdict(raw, options=ALL, max_quotes=3).verdict is Verdict.FAIL


def test_quotes_are_checked_against_the_data() -> None:
    data = "[message 3] assistant:\nDone, your   address is Updated!\n[message 4] tool: Error: rejected"
    raw = json.dumps(
        {
            "verdict": "fail",
            "evidence": ["your address is updated", "Error: rejected", "refund issued", "Done, ... Updated!"],
            "rationale": "claims success",
        }
    )
    parsed = parse_verdict(raw, options=ALL, haystacks=[data])
    assert [q.found for q in parsed.evidence] == [True, True, False, True]
    assert parsed.unverified_quotes == 1


@pytest.mark.parametrize(
    ("quote", "found"),
    [
        pytest.param('"Done, your address"', True, id="surrounding_quotation_marks"),
        pytest.param("done,\u200b your address", True, id="zero_width_in_quote"),
        pytest.param("Updated! ... Done", False, id="elided_fragments_out_of_order"),
        pytest.param("...", False, id="only_ellipsis"),
        pytest.param("", False, id="empty"),
    ],
)
def test_quote_matching_rules(quote: str, found: bool) -> None:
    assert quote_occurs(quote, ["Done, your address is Updated!"]) is found


def test_find_json_objects_skips_nested_spans() -> None:
    text = 'a {"x": {"verdict": "pass"}} b {"verdict": "fail"}'
    assert find_json_objects(text) == [{"x": {"verdict": "pass"}}, {"verdict": "fail"}]


def test_schema_offers_exactly_the_menu() -> None:
    schema = verdict_json_schema(["pass", "fail"], 4)["json_schema"]["schema"]
    assert schema["properties"]["verdict"]["enum"] == ["pass", "fail"]
    assert schema["properties"]["evidence"]["maxItems"] == 4
    assert schema["additionalProperties"] is False


@given(st.text(max_size=300))
def test_parse_never_raises_and_stays_on_menu(text: str) -> None:
    parsed = parse_verdict(text, options=ALL)
    assert parsed.verdict in {P, F, U, E}
    if parsed.verdict is E:
        assert parsed.reason == PARSE_FAILURE
        assert parsed.raw == text


@given(
    st.sampled_from(ALL),
    st.text(alphabet=st.characters(blacklist_characters="{}"), max_size=80),
    st.text(alphabet=st.characters(blacklist_characters="{}"), max_size=80),
)
def test_valid_object_is_found_in_any_brace_free_prose(verdict: str, before: str, after: str) -> None:
    raw = before + json.dumps({"verdict": verdict, "evidence": [], "rationale": "r"}) + after
    assert parse_verdict(raw, options=ALL).verdict == Verdict(verdict)


# ------------------------------------------------------------------ samples


def pv(v: Verdict) -> ParsedVerdict:
    return ParsedVerdict(verdict=v, reason=PARSE_FAILURE if v is E else "")


@pytest.mark.parametrize(
    ("votes", "verdict", "agreement"),
    [
        pytest.param([P], P, 1.0, id="single"),
        pytest.param([P, P, F], P, 2 / 3, id="majority_pass"),
        pytest.param([F, F, F, P, U], F, 3 / 5, id="majority_fail_of_five"),
        pytest.param([P, F], U, 0.5, id="tie_is_undecided"),
        pytest.param([P, E, E], P, 1.0, id="errors_are_not_votes"),
        pytest.param([P, F, F, E], F, 2 / 3, id="agreement_over_usable_only"),
    ],
)
def test_reduce_samples(votes: list[Verdict], verdict: Verdict, agreement: float) -> None:
    reduced = reduce_samples([pv(v) for v in votes])
    assert reduced.verdict is verdict
    assert reduced.agreement == pytest.approx(agreement)
    assert reduced.usable == sum(v is not E for v in votes)


def test_all_error_samples_give_error_with_undefined_agreement() -> None:
    reduced = reduce_samples([pv(E), pv(E)])
    assert reduced.verdict is E
    assert reduced.agreement is None
    assert reduced.usable == 0


def test_reduce_needs_samples() -> None:
    with pytest.raises(ValueError, match="at least one sample"):
        reduce_samples([])
