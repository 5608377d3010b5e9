"""Scanning exports: planted leaks found, clean exports clean, locations, fields, never the text."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contamination.conftest import (
    ACCEPTANCE,
    CLEAN_TEXTS,
    DENVER,
    HIDDEN_FACT,
    OPENING,
    OTHER_KEY_BYTES,
    chat,
)
from judgekit.contamination.index import DEFAULT_SHINGLE_SIZE, ContaminationIndex, Key, key_from_bytes
from judgekit.contamination.parallel import scan_files
from judgekit.contamination.report import build_report, render_json, render_markdown
from judgekit.contamination.scan import (
    HIT_WINDOW_TOKENS,
    Matcher,
    ScanOptions,
    ScanResult,
    best_stretch,
    extract_texts,
    min_shingle_hits,
    parse_field_path,
)
from judgekit.errors import JudgekitError

Writer = Callable[..., Path]


def _scan(path: Path, index: ContaminationIndex, key: Key, **opts: object) -> ScanResult:
    return scan_files([path], index, key, ScanOptions(**opts))  # type: ignore[arg-type]


def _lightly_edit(text: str) -> str:
    words = text.split()
    words[len(words) // 2] = "REDACTED"
    words[len(words) // 4] = "something"
    return " ".join(words)


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        pytest.param(OPENING, "exact", id="exact_copy"),
        pytest.param(
            OPENING.upper().replace(",", " ;; ").replace(".", "!"), "exact", id="case_and_punctuation"
        ),
        pytest.param(
            f"Here is a customer message: {OPENING} Please draft a reply.", "shingle", id="embedded"
        ),
        pytest.param(_lightly_edit(ACCEPTANCE), "shingle", id="lightly_edited"),
        pytest.param(f"Notes:\n{HIDDEN_FACT}\nEnd of notes.", "exact", id="short_text_on_its_own_line"),
        pytest.param(DENVER.replace(" ", "  ").replace("Denver", "DENVER"), "exact", id="whitespace"),
    ],
)
def test_planted_leak_is_found(
    content: str, kind: str, index: ContaminationIndex, key: Key, write_jsonl: Writer
) -> None:
    records = [chat(t) for t in CLEAN_TEXTS] + [chat("You are helpful.", content)] + [chat(CLEAN_TEXTS[0])]
    result = _scan(write_jsonl(records), index, key)
    assert len(result.leaks) == 1
    (case_id, leak), *_ = result.leaks.items()
    assert case_id in {"gs-031", "gs-044"}
    assert leak.records == 1
    assert dict(leak.kinds) == {kind: 1}
    loc = leak.locations[0]
    assert (loc.line, loc.field) == (len(CLEAN_TEXTS) + 1, "messages[1].content")


def test_clean_export_is_clean(index: ContaminationIndex, key: Key, write_jsonl: Writer) -> None:
    # Shares many words with the cases, but never 13 tokens in a row nor a whole text.
    near = [
        "I got charged twice for my gym membership and I want to cancel it.",
        "The second payment was made yesterday, please check the card.",
        "My flight to Denver was delayed and I missed the wedding.",
    ]
    records = [chat(t) for t in CLEAN_TEXTS + near] * 3
    result = _scan(write_jsonl(records), index, key)
    assert result.leaks == {}
    assert result.canaries == {}
    report = build_report(result, index, threshold=0.5)
    assert report.status == "clean"
    assert report.exit_code == 0


def test_coverage_is_capped_at_two_shingles_so_a_span_of_a_long_text_counts(
    index: ContaminationIndex, key: Key, write_jsonl: Writer
) -> None:
    # The first 14 tokens of a 33-token text: 14/33 = 42% of the text, but 14/26 = 54% of two shingles.
    fragment = " ".join(ACCEPTANCE.split()[:14])
    path = write_jsonl([chat(f"prefix words here {fragment} and then something else entirely")])
    found = _scan(path, index, key, threshold=0.5).leaks
    assert list(found) == ["gs-031"]
    assert found["gs-031"].locations[0].coverage == round(14 / 26, 4)
    assert _scan(path, index, key, threshold=0.6).leaks == {}


def test_counts_records_and_keeps_first_locations(
    index: ContaminationIndex, key: Key, write_jsonl: Writer
) -> None:
    records = [chat(CLEAN_TEXTS[i % 4]) if i % 3 else chat(OPENING) for i in range(30)]
    result = _scan(write_jsonl(records), index, key, max_locations=3)
    leak = result.leaks["gs-031"]
    assert leak.records == 10
    assert [loc.line for loc in leak.locations] == [1, 4, 7]


def test_two_texts_of_one_case_in_one_record_count_once(
    index: ContaminationIndex, key: Key, write_jsonl: Writer
) -> None:
    result = _scan(write_jsonl([chat(OPENING, ACCEPTANCE)]), index, key)
    leak = result.leaks["gs-031"]
    assert leak.records == 1
    assert set(leak.case_fields) == {"user.opening", "acceptance"}


def test_prompt_completion_and_content_parts(
    index: ContaminationIndex, key: Key, write_jsonl: Writer
) -> None:
    records = [
        {"prompt": "Question: " + CLEAN_TEXTS[0], "completion": DENVER},
        {"messages": [{"role": "user", "content": [{"type": "text", "text": OPENING}]}]},
    ]
    result = _scan(write_jsonl(records), index, key)
    assert result.leaks["gs-044"].locations[0].field == "completion"
    assert result.leaks["gs-031"].locations[0].field == "messages[0].content"


def test_configured_field_paths_limit_the_scan(
    index: ContaminationIndex, key: Key, write_jsonl: Writer
) -> None:
    path = write_jsonl([{"meta": {"notes": DENVER}, "messages": [{"role": "user", "content": "hi"}]}])
    assert _scan(path, index, key).leaks == {}
    found = _scan(path, index, key, fields=("meta.notes",))
    assert found.leaks["gs-044"].locations[0].field == "meta.notes"


def test_unknown_shape_falls_back_to_every_string(
    index: ContaminationIndex, key: Key, write_jsonl: Writer
) -> None:
    path = write_jsonl([{"dialogue": [{"speaker": "a", "utterance": DENVER}]}])
    result = _scan(path, index, key)
    assert result.leaks["gs-044"].locations[0].field == "dialogue[0].utterance"


def test_canary_is_reported_verbatim(index: ContaminationIndex, key: Key, write_jsonl: Writer) -> None:
    path = write_jsonl([chat("a"), chat("copied case file ... JUDGEKIT-CANARY-TESTSET ... end")])
    result = _scan(path, index, key)
    assert result.leaks == {}
    canary = result.canaries["JUDGEKIT-CANARY-TESTSET"]
    assert canary.records == 1
    assert canary.locations[0].line == 2
    report = build_report(result, index, threshold=0.5)
    assert report.status == "leaked"
    assert "JUDGEKIT-CANARY-TESTSET" in render_markdown(report)


def test_report_never_contains_case_text(index: ContaminationIndex, key: Key, write_jsonl: Writer) -> None:
    path = write_jsonl([chat(OPENING), chat(f"xx {ACCEPTANCE} yy"), chat(HIDDEN_FACT)])
    report = build_report(_scan(path, index, key), index, threshold=0.5)
    assert {lc.case_id for lc in report.leaks} == {"gs-031"}
    for rendered in (render_json(report), render_markdown(report)):
        for text in (OPENING, ACCEPTANCE, HIDDEN_FACT):
            for i in range(0, len(text.split()) - 3):
                assert " ".join(text.split()[i : i + 4]) not in rendered


def test_key_mismatch_is_refused(index: ContaminationIndex) -> None:
    with pytest.raises(JudgekitError, match="not the key this index was built with") as err:
        Matcher(index, key_from_bytes(OTHER_KEY_BYTES))
    assert err.value.exit_code == 2


def test_matcher_hits_point_to_text_and_offset(index: ContaminationIndex, key: Key) -> None:
    m = Matcher(index, key)
    hits = m.match(["nothing here", f"a b c {DENVER}"])
    assert hits
    assert {h.text for h in hits} == {1}
    denver_ref = next(i for i, r in enumerate(index.texts) if r.field == "input")
    offsets = sorted(h.offset for h in hits if h.ref == denver_ref)
    assert offsets == list(range(index.texts[denver_ref].n_tokens - index.shingle_size + 1))


def test_shingles_do_not_cross_texts(index: ContaminationIndex, key: Key) -> None:
    words = DENVER.split()
    half = len(words) // 2
    m = Matcher(index, key)
    split = m.match([" ".join(words[:half]), " ".join(words[half:])])
    assert all(h.offset not in range(half - index.shingle_size + 1, half) for h in split)


def test_extract_texts_labels() -> None:
    paths = [parse_field_path("messages[].content"), parse_field_path("prompt")]
    rec = {"prompt": "p", "messages": [{"content": "a"}, {"content": [{"text": "b"}, "c"]}, {"role": "x"}]}
    assert extract_texts(rec, paths, fallback=True) == [
        ("messages[0].content", "a"),
        ("messages[1].content", "b"),
        ("messages[1].content", "c"),
        ("prompt", "p"),
    ]


@pytest.mark.parametrize("bad", ["", "a..b", "a[0].b", "[]", "a[]x"])
def test_malformed_field_path_is_refused(bad: str) -> None:
    with pytest.raises(JudgekitError, match="malformed"):
        parse_field_path(bad)


def test_threshold_out_of_range_is_refused() -> None:
    with pytest.raises(JudgekitError, match="out of range"):
        ScanOptions(threshold=0.0)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(["messages", "content", "prompt", "text", "x", "value"]), children, max_size=4
        )
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(_json)
def test_fast_extractor_agrees_with_labelled_extraction(record: object) -> None:
    from judgekit.contamination.scan import DEFAULT_FIELDS, compile_paths

    paths = [parse_field_path(p) for p in (*DEFAULT_FIELDS, "x.value", "x[].content")]
    fast: list[str] = []
    compile_paths(paths)(record, fast)
    assert fast == [t for _, t in extract_texts(record, paths, fallback=False)]


_record = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "messages",
                    "content",
                    "tool_calls",
                    "function",
                    "arguments",
                    "prompt",
                    "text",
                    "type",
                    "conversations",
                    "value",
                    "input",
                    "response",
                    "x",
                ]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=16,
)


@settings(max_examples=300, deadline=None)
@given(record=_record)
def test_msgspec_default_fields_give_the_texts_of_the_general_path(record: object) -> None:
    # The scanner decodes lines with msgspec into the default fields; whatever it accepts must yield the
    # texts (and their order) of json.loads and the compiled field paths, the labels' reference.
    from judgekit.contamination.scan import _DECODE_DEFAULT, _DECODE_FAILURES, DEFAULT_FIELDS, _default_texts

    line = json.dumps(record)
    paths = [parse_field_path(p) for p in DEFAULT_FIELDS]
    expected = [t for _, t in extract_texts(json.loads(line), paths, fallback=False)]
    try:
        typed = _DECODE_DEFAULT(line)
    except _DECODE_FAILURES:
        return  # the scanner takes the general path for this line
    got: list[str] = []
    _default_texts(typed, got)
    assert got == expected


def test_lines_msgspec_refuses_are_scanned_by_the_general_path(
    index: ContaminationIndex, key: Key, write_jsonl: Writer, tmp_path: Path
) -> None:
    # NaN is JSON only to json.loads; messages as a dict is not the typed shape; a record with no
    # default field has every string scanned.
    path = tmp_path / "odd.jsonl"
    path.write_text(
        "\n".join(
            [
                '{"score": NaN, "messages": [{"role": "user", "content": "OPENING"}]}',
                '{"messages": {"content": "x"}, "prompt": "OPENING"}',
                '{"meta": {"note": "OPENING"}}',
            ]
        ).replace("OPENING", OPENING)
        + "\n",
        encoding="utf-8",
    )
    leak = _scan(path, index, key).leaks["gs-031"]
    assert [(loc.line, loc.field) for loc in leak.locations] == [
        (1, "messages[0].content"),
        (2, "prompt"),
        (3, "meta.note"),
    ]


def test_exact_wins_over_shingle_within_a_record(
    index: ContaminationIndex, key: Key, write_jsonl: Writer
) -> None:
    # The opening embedded (a shingle match, first case text) and the hidden fact as a whole message (exact).
    result = _scan(write_jsonl([chat(f"see {OPENING} thanks", HIDDEN_FACT)]), index, key)
    leak = result.leaks["gs-031"]
    assert dict(leak.kinds) == {"exact": 1}
    assert leak.locations[0].case_field == "user.hidden_facts.0"
    assert set(leak.case_fields) == {"user.opening", "user.hidden_facts.0"}


_word = st.from_regex(r"[A-Za-z]{2,9}|[0-9]{1,4}|[À-ÖØ-öø-ÿ]{1,5}|[\u4e00-\u4e40]{1,3}", fullmatch=True)
_sep = st.sampled_from([" ", ", ", " - ", "\n", "... ", "  ", "\t", "; ", " (", ") "])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(_word, min_size=13, max_size=40),
    st.lists(_word, max_size=20),
    st.lists(_word, max_size=20),
    st.lists(st.booleans(), min_size=40, max_size=40),
    st.lists(_sep, min_size=40, max_size=40),
)
def test_a_case_text_is_found_whatever_its_case_punctuation_and_surroundings(
    words: list[str], before: list[str], after: list[str], upper: list[bool], seps: list[str]
) -> None:
    from judgekit.contamination.index import build_index

    key = key_from_bytes(b"property-test-key-0123456789")
    text = " ".join(words)
    index = build_index([("case", [("input", text)])], key)
    variant = "".join(
        (w.upper() if up else w.lower()) + sep for w, up, sep in zip(words, upper, seps, strict=False)
    ).strip()
    m = Matcher(index, key)
    n_tokens = index.texts[0].n_tokens
    embedded = " ".join(before) + " : " + variant + " ; " + " ".join(after)
    offsets = {h.offset for h in m.match(["unrelated", embedded]) if h.ref == 0}
    assert set(range(n_tokens - index.shingle_size + 1)) <= offsets
    assert any(h.offset == -1 for h in m.match([variant]))


def test_tool_call_arguments_are_scanned_by_default(
    index: ContaminationIndex, key: Key, write_jsonl: Writer
) -> None:
    call = {
        "type": "function",
        "function": {"name": "send_message", "arguments": json.dumps({"body": DENVER})},
    }
    rec = {
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
        ]
    }
    result = _scan(write_jsonl([rec]), index, key)
    assert result.leaks["gs-044"].locations[0].field == "messages[1].tool_calls[0].function.arguments"


def test_detect_format_takes_a_file_named_as_text(tmp_path: Path) -> None:
    from judgekit.contamination.scan import detect_format

    gz = tmp_path / "export.bin"
    gz.write_bytes(b"\x1f\x8b\x08\x00")
    plain = tmp_path / "export.jsonl"
    plain.write_text("{}\n")
    assert detect_format(str(gz)) == "gz"
    assert detect_format(str(plain)) == "jsonl"


# ------------------------------------------------------------------ sensitivity: spans and near-duplicates

_VOCAB = [f"w{i:04d}" for i in range(5000)]


def _words(seed: int, n: int) -> list[str]:
    import random

    rng = random.Random(seed)
    return [rng.choice(_VOCAB) for _ in range(n)]


LONG_TEXT = " ".join(_words(1, 300))
"""A 300-token case text (a long reference answer): a 13-token span of it is 4% of its tokens."""
FORTY = " ".join(_words(2, 40))
TEMPLATE_TEXT = " ".join(_words(3, 30))
"""Text every case shares (a system prompt template): the frequency guard must drop its shingles."""


@pytest.fixture
def long_index(key: Key) -> ContaminationIndex:
    from judgekit.contamination.index import build_index

    cases: list[tuple[str, list[tuple[str, str]]]] = [
        ("long", [("reference_answer", LONG_TEXT), ("system", TEMPLATE_TEXT)]),
        ("forty", [("acceptance", FORTY), ("system", TEMPLATE_TEXT)]),
    ]
    cases += [
        (f"other-{i}", [("input", " ".join(_words(100 + i, 40))), ("system", TEMPLATE_TEXT)])
        for i in range(8)
    ]
    return build_index(cases, key)


def _long_chat(seed: int, inner: str = "") -> dict[str, object]:
    """A 12-turn chat of unrelated text, with ``inner`` embedded in the middle of turn 7."""
    turns = [" ".join(_words(10_000 + seed * 100 + t, 120)) for t in range(12)]
    if inner:
        half = turns[7].split()
        turns[7] = " ".join([*half[:60], inner, *half[60:]])
    return chat(TEMPLATE_TEXT, *turns)


@pytest.mark.parametrize("length", [13, 20, 40])
def test_embedded_span_of_a_long_case_text_is_a_leak(
    length: int, long_index: ContaminationIndex, key: Key, write_jsonl: Writer
) -> None:
    # Before coverage was capped, a 13-token span of a 300-token text scored 13/300 and was missed.
    toks = LONG_TEXT.split()
    span = " ".join(toks[150 : 150 + length])
    path = write_jsonl([_long_chat(1), _long_chat(2, span), _long_chat(3)])
    found = _scan(path, long_index, key).leaks
    assert list(found) == ["long"]
    assert [loc.line for loc in found["long"].locations] == [2]
    assert found["long"].locations[0].coverage == round(min(1.0, length / 26), 4)


def test_span_of_twelve_tokens_is_not_a_leak(
    long_index: ContaminationIndex, key: Key, write_jsonl: Writer
) -> None:
    span = " ".join(LONG_TEXT.split()[40:52])
    path = write_jsonl([_long_chat(2, span)])
    assert _scan(path, long_index, key).leaks == {}


def test_threshold_one_asks_for_two_shingles_of_covered_tokens(
    long_index: ContaminationIndex, key: Key, write_jsonl: Writer
) -> None:
    toks = LONG_TEXT.split()
    path = write_jsonl([_long_chat(2, " ".join(toks[10:35])), _long_chat(3, " ".join(toks[100:126]))])
    found = _scan(path, long_index, key, threshold=1.0).leaks
    assert [loc.line for loc in found["long"].locations] == [2]


def test_shared_template_and_unrelated_long_chats_raise_no_alarm(
    long_index: ContaminationIndex, key: Key, write_jsonl: Writer
) -> None:
    assert long_index.stats["shingle_entries_dropped_shared"] > 0
    records = [_long_chat(s) for s in range(10, 40)]
    records.append(_long_chat(41, TEMPLATE_TEXT))  # the template inside a message, too
    assert _scan(write_jsonl(records), long_index, key).leaks == {}


def _surviving_shingles(edits: tuple[int, ...], words: int = 40, size: int = DEFAULT_SHINGLE_SIZE) -> int:
    """Shingles of a ``words``-token text that contain none of the edited positions."""
    return sum(1 for j in range(words - size + 1) if not any(j <= e < j + size for e in edits))


def test_three_edits_in_forty_words_always_leave_the_shingles_a_leak_needs() -> None:
    # The arithmetic, over all C(40, 3) = 9880 placements: 34 seven-token shingles, an edit breaks at
    # most 7 of them, so at least 34 - 21 = 13 survive, against the 7 a 13-token run holds.
    placements = list(itertools.combinations(range(40), 3))
    counts = [_surviving_shingles(p) for p in placements]
    assert len(placements) == 9880
    assert min(counts) == 13
    assert min_shingle_hits(DEFAULT_SHINGLE_SIZE) == 7
    # With 13-token shingles the same edits left no shingle at all in 3.7% of the placements.
    no_run = sum(1 for p in placements if _surviving_shingles(p, size=13) == 0)
    assert no_run == 364
    # A quotation of 12 tokens or fewer holds 6 shingles or fewer: under the 7 needed.
    assert _surviving_shingles((), words=12) == 6
    assert _surviving_shingles((), words=13) == 7


def test_near_duplicate_with_three_of_forty_words_replaced_is_found_wherever_the_edits_are(
    long_index: ContaminationIndex, key: Key, write_jsonl: Writer
) -> None:
    # Every placement of 3 edits in the 40-word case text, one record each, inside unrelated text.
    records = []
    for n, edits in enumerate(itertools.combinations(range(40), 3)):
        toks = FORTY.split()
        for e in edits:
            toks[e] = "replaced"
        around = _words(50_000 + n, 40)
        records.append(chat(" ".join([*around[:20], *toks, *around[20:]])))
    found = _scan(write_jsonl(records), long_index, key, max_locations=10**5).leaks
    assert list(found) == ["forty"]
    assert found["forty"].records == 9880
    assert [loc.line for loc in found["forty"].locations] == list(range(1, 9881))
    assert min(loc.coverage or 0 for loc in found["forty"].locations) >= 19 / 26


def test_two_eleven_token_quotes_far_apart_in_one_record_are_not_a_leak(
    long_index: ContaminationIndex, key: Key, write_jsonl: Writer
) -> None:
    toks = LONG_TEXT.split()
    far = " ".join([*toks[10:21], *_words(7, HIT_WINDOW_TOKENS), *toks[200:211]])
    assert _scan(write_jsonl([_long_chat(2, far)]), long_index, key).leaks == {}


def test_two_eleven_token_quotes_close_together_are_a_leak(
    long_index: ContaminationIndex, key: Key, write_jsonl: Writer
) -> None:
    # 22 tokens of one case text within a few tokens of each other: 10 distinct shingles in one stretch.
    toks = LONG_TEXT.split()
    near = " ".join([*toks[10:21], *_words(7, 5), *toks[200:211]])
    found = _scan(write_jsonl([_long_chat(2, near)]), long_index, key).leaks
    assert list(found) == ["long"]
    assert found["long"].locations[0].coverage == round(22 / 26, 4)


def test_a_phrase_repeated_in_a_record_counts_as_one_shingle(
    long_index: ContaminationIndex, key: Key, write_jsonl: Writer
) -> None:
    phrase = " ".join(LONG_TEXT.split()[20:27])
    path = write_jsonl([_long_chat(2, " ".join([phrase] * 10))])
    assert _scan(path, long_index, key).leaks == {}


def _stretch_brute_force(hits: list[tuple[int, int]], size: int, window: int) -> tuple[int, int]:
    best = (0, 0)
    for p0, _ in hits:
        inside = {(p, o) for p, o in hits if p0 <= p < p0 + window}
        covered = set().union(*(range(o, o + size) for _, o in inside))
        best = max(best, (min(len({p for p, _ in inside}), len({o for _, o in inside})), len(covered)))
    return best


@settings(max_examples=200, deadline=None)
@given(
    hits=st.lists(st.tuples(st.integers(0, 200), st.integers(0, 60)), max_size=30),
    size=st.integers(4, 13),
    window=st.integers(1, 80),
)
def test_best_stretch_is_the_best_of_every_window(
    hits: list[tuple[int, int]], size: int, window: int
) -> None:
    assert best_stretch(hits, size, window) == _stretch_brute_force(hits, size, window)


def test_texts_holding_the_separator_byte_match_as_fold_many_folds_them(
    long_index: ContaminationIndex, key: Key
) -> None:
    # The in-kernel ASCII fold keeps byte 1 as the text separator; a text that holds it takes fold_many.
    from judgekit.contamination.normalise import fold_many

    m = Matcher(long_index, key)
    span = " ".join(LONG_TEXT.split()[40:60])
    texts = ["a\x01b", f"x {span}\x01y", FORTY]
    assert m.match(texts) == m.match_folded(fold_many(texts))
    assert {h.ref for h in m.match(texts)} == {0, 2}


def _batch_findings(
    m: Matcher, records: list[list[str]], *, pruned: bool
) -> tuple[list[tuple[int, str, object]], int]:
    from judgekit.contamination.scan import TextBatch, record_findings

    batch = TextBatch()
    for number, texts in enumerate(records, start=1):
        batch.add_record(number, texts, [f"messages[{k}].content" for k in range(len(texts))])
    hits = m.match(batch.texts, batch.record_first if pruned else None)
    found = record_findings(hits, batch, m.index, threshold=0.5, file="x.jsonl", by_row=False)
    return [(rec, cid, loc) for rec, cid, loc in found], len(hits)


def test_confirming_only_records_that_can_leak_gives_the_same_findings(
    long_index: ContaminationIndex, key: Key
) -> None:
    m = Matcher(long_index, key)
    toks = LONG_TEXT.split()
    quote = " ".join(toks[100:109])  # 9 tokens: 3 shingles, never a leak alone
    records = [
        # An isolated quote in the first message and a 20-token span in the third: the finding names
        # the first message (the first text with a hit of the case), as the full search does.
        [quote, " ".join(_words(20, 30)), " ".join([*_words(21, 10), *toks[10:30], *_words(22, 10)])],
        # Two 11-token quotes far apart, and a lone quote: hits, but no stretch with 7 of them.
        [" ".join([*toks[10:21], *_words(7, HIT_WINDOW_TOKENS), *toks[200:211]])],
        [" ".join(_words(24, 70)), quote],
        [" ".join(_words(23, 50))],
        [FORTY, " ".join(_words(25, 70)), quote],  # an exact text and, far from it, a quote of another case
    ]
    full, n_full = _batch_findings(m, records, pruned=False)
    pruned, n_pruned = _batch_findings(m, records, pruned=True)
    assert pruned == full
    assert [(rec, cid, loc.field) for rec, cid, loc in full] == [  # type: ignore[attr-defined]
        (0, "long", "messages[0].content"),
        (4, "forty", "messages[0].content"),
    ]
    assert n_pruned < n_full  # the hits of the second and third records were not confirmed


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    pieces=st.lists(
        st.lists(
            st.tuples(st.sampled_from(["long", "forty", "noise"]), st.integers(0, 290), st.integers(1, 30)),
            min_size=1,
            max_size=6,
        ),
        min_size=1,
        max_size=8,
    ),
    seed=st.integers(0, 10**6),
)
def test_pruned_and_full_searches_agree_on_random_batches(
    pieces: list[list[tuple[str, int, int]]], seed: int, long_index: ContaminationIndex, key: Key
) -> None:
    m = Matcher(long_index, key)
    sources = {"long": LONG_TEXT.split(), "forty": FORTY.split()}
    records: list[list[str]] = []
    for r, rec in enumerate(pieces):
        texts = []
        for k, (src, start, length) in enumerate(rec):
            words = sources.get(src) or _words(seed + 31 * r + k, 40)
            texts.append(" ".join(words[start % len(words) : start % len(words) + length]))
        records.append(texts)
    assert _batch_findings(m, records, pruned=True)[0] == _batch_findings(m, records, pruned=False)[0]


def test_count_lines_counts_line_feeds() -> None:
    from judgekit.contamination.scan import count_lines

    for block in (b"", b"a", b"a\nb\n", b"\n" * 5000, (b"x" * 100 + b"\n") * 100 + b"tail"):
        assert count_lines(block) == block.count(b"\n")
