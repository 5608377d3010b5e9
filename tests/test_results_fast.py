"""The exact fast path of reading result lines: the same lines and the same problems as the full path.

:func:`judgekit.results.fast_result_line` decodes a line with a typed msgspec mirror of the schema, and
declines (``None``) whenever it cannot be certain the full path (hostile-input checks, pydantic, the
duplicate-key check) accepts the line with the same values. These tests hold the mirror to the pydantic
models, and the fast reader (:meth:`ResultStream.report_lines`) to the full one on generated files full of
hostile lines.
"""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, JsonValue

from judgekit.provenance import Provenance
from judgekit.results import (
    SCHEMA_VERSION,
    CaseRef,
    FastResultLine,
    ResultLine,
    ResultStream,
    TrialSource,
    dump_result_line,
    failure_categories,
    fast_result_line,
)
from judgekit.transcript import RunRecord
from judgekit.verdict import CheckResult, Evidence, FailureCategory, Trust, Verdict

MIRROR: dict[type[BaseModel], type[msgspec.Struct]] = {
    ResultLine: FastResultLine,
    CaseRef: typing.get_type_hints(FastResultLine)["case"],
    CheckResult: typing.get_args(typing.get_type_hints(FastResultLine)["checks"])[0],
    RunRecord: typing.get_args(typing.get_type_hints(FastResultLine)["run"])[0],
    TrialSource: typing.get_args(typing.get_type_hints(FastResultLine)["source"])[0],
    Provenance: typing.get_args(typing.get_type_hints(FastResultLine)["provenance"])[0],
}
MIRROR[Evidence] = typing.get_args(typing.get_type_hints(MIRROR[CheckResult])["evidence"])[0]


def _shape(tp: Any) -> str:
    """A type written out, pydantic models named by their mirror, ``JsonValue`` as ``Any``."""
    if tp is JsonValue or tp is Any:
        return "Any"
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return MIRROR[tp].__name__
    if isinstance(tp, type):
        return tp.__name__
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _shape(typing.get_args(tp)[0])
    args = ", ".join(_shape(a) if a is not Ellipsis else "..." for a in typing.get_args(tp))
    name = "Union" if origin in (typing.Union, __import__("types").UnionType) else origin.__name__
    return f"{name}[{args}]"


def _pydantic_bounds(info: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in info.metadata:
        for attr in ("ge", "le", "gt", "lt", "min_length", "max_length"):
            if getattr(item, attr, None) is not None:
                out[attr] = getattr(item, attr)
    return out


def _mirror_bounds(tp: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    stack = [tp]
    while stack:
        t = stack.pop()
        if typing.get_origin(t) is typing.Annotated:
            for meta in typing.get_args(t)[1:]:
                if isinstance(meta, msgspec.Meta):
                    for attr in ("ge", "le", "gt", "lt", "min_length", "max_length"):
                        if getattr(meta, attr) is not None:
                            out[attr] = getattr(meta, attr)
            stack.append(typing.get_args(t)[0])
        else:
            stack.extend(typing.get_args(t))
    return out


@pytest.mark.parametrize("model", list(MIRROR), ids=lambda m: m.__name__)
def test_the_mirror_has_every_field_of_the_model_in_order_with_its_type_and_bounds(model):
    struct = MIRROR[model]
    hints = typing.get_type_hints(struct, include_extras=True)
    assert list(struct.__struct_fields__) == list(model.model_fields)
    assert struct.__struct_defaults__ == ()  # every field required: what the key count relies on
    assert struct.__struct_config__.forbid_unknown_fields
    for name, info in model.model_fields.items():
        assert _shape(hints[name]) == _shape(info.annotation), name
        assert _mirror_bounds(hints[name]) == _pydantic_bounds(info), name


# --------------------------------------------------------------------------- generated lines

PLAIN = st.lists(st.sampled_from([*'ab :"\\{}[],é😀', '":']), max_size=6).map("".join)
"""Strings the fast path can take: quotes, colons, backslashes and brackets, but nothing escaped as \\u."""
TEXT = st.lists(
    st.sampled_from([*'ab :"\\{}[],é😀\x01\t\u2028', "NaN", "e000", "1e+100", '":']), max_size=6
).map("".join)
"""Strings that also hold what sends a line the full way (control characters, U+2028, NaN, e000)."""


def jsonish(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    return st.recursive(
        st.none()
        | st.booleans()
        | st.integers(-(10**30), 10**30)
        | st.floats(allow_nan=False, allow_infinity=False)
        | text,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
        max_leaves=5,
    )


@st.composite
def result_lines(draw, text: st.SearchStrategy[str] | None = None) -> ResultLine:
    # two lines in three have only plain strings, so the fast path takes them unless made hostile
    words = text if text is not None else draw(st.sampled_from([PLAIN, PLAIN, TEXT]))
    values = jsonish(words)
    checks = []
    for _ in range(draw(st.integers(0, 2))):
        verdict = draw(st.sampled_from(list(Verdict)))
        evidence = tuple(
            Evidence(
                kind=draw(st.sampled_from(["note", "call"])),
                summary=draw(words),
                call_index=draw(st.none() | st.integers(0, 5)),
                arguments=draw(st.none() | st.dictionaries(words, values, max_size=2)),
                quote=draw(st.none() | words),
                data=draw(values),
            )
            for _ in range(draw(st.integers(0, 2)))
        )
        checks.append(
            CheckResult(
                check_id=draw(st.sampled_from(["state", "criterion:goal"])),
                layer="rubric",
                verdict=verdict,
                reason=draw(words),
                category=draw(st.none() | st.sampled_from(list(FailureCategory))),
                evidence=evidence,
                trust=draw(st.sampled_from(list(Trust))),
                score=draw(st.none() | st.floats(0, 1)),
                weight=draw(st.floats(0, 3)),
            )
        )
    return ResultLine(
        schema_version=SCHEMA_VERSION,
        run_id=draw(words),
        case=CaseRef(id=draw(st.sampled_from(["a", "b", "c:d"])), version=draw(st.integers(1, 3))),
        trial=draw(st.integers(1, 3)),
        verdict=draw(st.sampled_from(list(Verdict))),
        reason=draw(words),
        quality=draw(st.none() | st.floats(0, 1)),
        checks=tuple(checks),
        failure_categories=failure_categories(checks),
        run=draw(
            st.none()
            | st.builds(RunRecord, agent_model=words, config=st.dictionaries(words, values, max_size=2))
        ),
        judge_fingerprint=draw(st.none() | st.dictionaries(words, values, max_size=2)),
        grading=draw(st.dictionaries(words, values, max_size=2)),
        judgekit_version="1.0.0",
        source=draw(st.none() | st.builds(TrialSource, file=words, line=st.integers(1, 9), sha256=words)),
        cost_usd=draw(st.none() | st.floats(0, 1)),
        provenance=draw(
            st.none()
            | st.builds(
                Provenance, method=st.just("grade"), thresholds=st.dictionaries(words, values, max_size=2)
            )
        ),
    )


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _into_free_form(good: str, text: str, draw: Any) -> str:
    """``good`` with ``text`` (members ending in a comma) put first in one of its free-form objects."""
    places = [p for p in ('"grading":{', '"arguments":{', '"config":{') if p in good]
    place = draw(st.sampled_from(places))  # grading is always there
    at = good.index(place) + len(place)
    if good[at] == "}":  # an empty object: no comma after the last member
        text = text[:-1]
    return good[:at] + text + good[at:]


def _hostile(kind: str, good: str, draw: Any) -> str:
    """A variation of a valid line that the full reader may refuse, or read another way.

    The values put in are of the right type, so what decides is the hostile part itself.
    """
    body = good[:-1]
    if kind == "duplicate_key":
        where = draw(st.sampled_from(["top", "case", "check", "free"]))
        if where == "top":
            return body + draw(st.sampled_from([',"verdict":"pass"', ',"trial":2', ',"reason":"x"'])) + "}"
        if where == "check" and '"checks":[{' in good:
            return good.replace('"checks":[{', '"checks":[{"check_id":"dup",', 1)
        if where == "case":
            return good.replace('"case":{', '"case":{"id":"z",', 1)
        return _into_free_form(good, '"k":1,"k":2,', draw)
    if kind == "deep":
        depth = draw(st.sampled_from([90, 97, 98, 99, 110]))  # grading's members sit at depth 2
        return _into_free_form(good, '"g":' + _nested(depth) + ",", draw)
    if kind == "huge_int":
        return _into_free_form(good, '"n":' + "9" * draw(st.sampled_from([19, 100, 101, 130])) + ",", draw)
    if kind == "long_float":
        zeros = draw(st.sampled_from([98, 99, 120]))  # 0.000...1 has zeros + 2 digits; the limit is 100
        return _into_free_form(good, '"f":0.' + "0" * zeros + "1,", draw)
    if kind == "big_exponent":
        return _into_free_form(good, '"f":1e999,', draw)
    if kind == "nan":
        return _into_free_form(good, '"f":NaN,', draw)
    if kind == "wrong_type":
        field = draw(st.sampled_from(['"trial":', '"untrusted_verdicts":', '"judgekit_version":']))
        value = draw(st.sampled_from(['"1"', "1.0", "true", "null", "[]", "2"]))
        return good.replace(field, f"{field}{value},{field[:-1]}_old:", 1)
    if kind == "extra_field":
        return body + ',"extra":1}'
    if kind == "missing_field":
        data = json.loads(good)
        data.pop(draw(st.sampled_from(["reason", "grader", "provenance", "quality"])), None)
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    if kind == "whitespace":
        return json.dumps(json.loads(good), ensure_ascii=False, indent=draw(st.sampled_from([None, 1])))
    if kind == "escaped":
        return json.dumps(json.loads(good), ensure_ascii=True, separators=(",", ":"))
    if kind == "escaped_duplicate":  # a repeated key hidden by an escape
        return body + ',"verd\\u0069ct":"pass"}'
    if kind == "escaped_colon":  # a repeated key, and a colon written \\u003a that evens the colon count
        start = good.index('"reason":') + len('"reason":')  # the line's own reason, before its checks
        end = json.JSONDecoder().raw_decode(good, start)[1]
        reason = good[:start] + '"\\u003a"' + good[end:]
        return reason[:-1] + ',"verdict":"pass"}'
    if kind == "raw_control":  # a control character not escaped in a string: not JSON
        return good.replace('"run_id":"', '"run_id":"\x01', 1)
    if kind == "other_version":
        return good.replace(f'"schema_version":{SCHEMA_VERSION}', '"schema_version":2', 1)
    if kind == "truncated":
        return good[: len(good) // 2]
    return "[1,2]"


HOSTILE = [
    "duplicate_key",
    "deep",
    "huge_int",
    "long_float",
    "big_exponent",
    "nan",
    "wrong_type",
    "extra_field",
    "missing_field",
    "whitespace",
    "escaped",
    "escaped_duplicate",
    "escaped_colon",
    "raw_control",
    "other_version",
    "truncated",
    "not_object",
]


@st.composite
def hostile_files(draw) -> bytes:
    rows = []
    for _ in range(draw(st.integers(1, 6))):
        good = dump_result_line(draw(result_lines()))
        rows.append(_hostile(draw(st.sampled_from(HOSTILE)), good, draw) if draw(st.booleans()) else good)
    text = "\n".join(rows)
    return (text + "\n" if draw(st.booleans()) else text).encode()


def _values(line: ResultLine | FastResultLine) -> Any:
    """The line's values as plain JSON-like data (lists for tuples), whichever path read it."""
    value = line.model_dump(mode="json") if isinstance(line, ResultLine) else line
    return json.loads(msgspec.json.encode(value))


@settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=hostile_files())
def test_the_fast_reader_gives_the_full_readers_lines_and_problems(tmp_path, data):
    path = tmp_path / "results.jsonl"
    path.write_bytes(data)
    full = ResultStream(path)
    slow = [_values(line) for line in full]
    fast_stream = ResultStream(path)
    fast = [_values(line) for line in fast_stream.report_lines()]
    assert fast == slow
    assert [str(p) for p in fast_stream.problems] == [str(p) for p in full.problems]
    assert fast_stream.truncated == full.truncated


@settings(max_examples=100, deadline=None, derandomize=True)
@given(line=result_lines())
def test_a_line_as_judgekit_writes_it_takes_the_fast_path_with_the_same_values(line):
    raw = dump_result_line(line).encode()
    fast = fast_result_line(raw + b"\n")
    if b"\\u" in raw:
        # an escape (a control character, U+2028): the colon count cannot tell, so the line goes the full
        # way; text that looks like a huge exponent ("e000", as in a hex hash) no longer does
        assert fast is None
        return
    assert fast is not None
    assert _values(fast) == _values(line)
    assert fast.key == line.key


GOOD = dump_result_line(
    ResultLine(
        schema_version=SCHEMA_VERSION,
        run_id="r",
        case=CaseRef(id="a", version=1),
        trial=1,
        verdict=Verdict.PASS,
        checks=(
            CheckResult(
                check_id="c",
                layer="rules",
                verdict=Verdict.PASS,
                evidence=(Evidence(kind="note", summary="s"),),
            ),
        ),
        judgekit_version="1",
    )
)


@pytest.mark.parametrize(
    ("kind", "line"),
    [
        ("repeated top-level key", GOOD[:-1] + ',"verdict":"fail"}'),
        ("repeated key in free-form data", GOOD.replace('"data":null', '"data":{"a":1,"a":2}')),
        ("repeated key hidden by an escape", GOOD[:-1] + ',"verd\\u0069ct":"fail"}'),
        ("integer over the digit limit", GOOD.replace('"grading":{', '"grading":{"n":' + "9" * 101 + ",")),
        ("float over the digit limit", GOOD.replace('"grading":{', '"grading":{"n":0.' + "0" * 101 + "1,")),
        ("deeper than the limit", GOOD.replace('"data":null', '"data":' + _nested(96))),
        ("a field left out", GOOD.replace(',"reason":""', "", 1)),
        ("an unknown field", GOOD[:-1] + ',"extra":1}'),
        ("an integer field given 1.0", GOOD.replace('"trial":1', '"trial":1.0')),
        ("another schema version", GOOD.replace('"schema_version":1', '"schema_version":2')),
    ],
)
def test_the_fast_path_declines_what_it_cannot_be_sure_of(kind, line):
    assert fast_result_line(GOOD.encode()) is not None
    assert fast_result_line(line.encode()) is None, kind


def test_the_fast_path_takes_a_line_nested_deeper_than_its_bracket_count_allows_when_the_schema_bounds_it():
    # 94 brackets under the evidence data (depth 5) plus the line's other brackets make 103, over the
    # limit of 100; but 8 of them are the line's typed objects and arrays, and the one left (grading's
    # {}) is counted as if nested under the data: 5 + 94 + 1 = 100, within the limit
    line = GOOD.replace('"data":null', '"data":' + _nested(94))
    assert line.count("[") + line.count("{") > 100
    assert fast_result_line(line.encode()) is not None


# --------------------------------------------------------------------------- real lines

REAL = (Path(__file__).parent / "fixtures" / "results" / "graded-demo-lines.jsonl").read_bytes().splitlines()
"""Three lines ``judgekit demo`` graded (a pass, a fail, a fail with its diagnosis): judge notes, quotes,
fingerprints, costs, and hex hashes holding ``e`` and three digits (``...e123...``), which sent every real
line the full way before."""


def _read_both(tmp_path: Path, lines: list[bytes]) -> tuple[list[Any], list[str], list[Any], list[str]]:
    """The values and problems of the full reader and of the fast reader on a file of ``lines``."""
    path = tmp_path / "results.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    full, fast = ResultStream(path), ResultStream(path)
    slow_values = [_values(line) for line in full]
    fast_values = [_values(line) for line in fast.report_lines()]
    return slow_values, [p.message for p in full.problems], fast_values, [p.message for p in fast.problems]


def test_the_fixture_lines_are_what_judgekit_grade_writes():
    for raw in REAL:
        assert dump_result_line(ResultLine.model_validate_json(raw)) == raw.decode()
    assert all(b"e000" in raw.translate(bytes.maketrans(b"123456789", b"000000000")) for raw in REAL)


@pytest.mark.parametrize("raw", REAL, ids=["pass", "fail", "diagnosis"])
def test_a_real_graded_line_takes_the_fast_path_with_the_full_paths_values(raw):
    fast = fast_result_line(raw)
    assert fast is not None
    assert _values(fast) == _values(ResultLine.model_validate_json(raw))


def _in_grading(raw: bytes, member: bytes) -> bytes:
    """``raw`` with ``member`` (``"key":value``) put first in its free-form ``grading`` object."""
    assert raw.count(b'"grading":{') == 1
    return raw.replace(b'"grading":{', b'"grading":{' + member + b",", 1)


REFUSALS = {
    "duplicate top-level key": (lambda raw: raw[:-1] + b',"verdict":"pass"}', "duplicate key 'verdict'"),
    "duplicate key in a check": (
        lambda raw: raw.replace(b'"checks":[{', b'"checks":[{"layer":"x",', 1),
        "duplicate key 'layer'",
    ),
    "duplicate key in free-form data": (lambda raw: _in_grading(raw, b'"k":1,"k":2'), "duplicate key 'k'"),
    "duplicate key hidden by an escape": (
        lambda raw: raw[:-1] + b',"verd\\u0069ct":"pass"}',
        "duplicate key 'verdict'",
    ),
    "too deep": (lambda raw: _in_grading(raw, b'"g":' + b"[" * 120 + b"]" * 120), "nested deeper than 100"),
    "long integer": (lambda raw: _in_grading(raw, b'"n":' + b"7" * 101), "more than 100 digits"),
    "long float": (lambda raw: _in_grading(raw, b'"n":0.' + b"0" * 100 + b"1"), "more than 100 digits"),
    "NaN": (lambda raw: _in_grading(raw, b'"n":NaN'), "NaN is not JSON"),
    "Infinity": (lambda raw: _in_grading(raw, b'"n":-Infinity'), "-Infinity is not JSON"),
    "not finite": (lambda raw: _in_grading(raw, b'"n":1e400'), "is not finite"),
    "not finite in a typed field": (
        lambda raw: raw.replace(b'"duration_s":', b'"duration_s":-1E+309,"old":', 1),
        "is not finite",
    ),
}


@pytest.mark.parametrize("kind", list(REFUSALS))
def test_a_real_line_made_hostile_is_refused_the_same_way_by_both_readers(tmp_path, kind):
    spoil, message = REFUSALS[kind]
    bad = spoil(REAL[1])
    assert fast_result_line(bad) is None, kind
    slow, slow_problems, fast, fast_problems = _read_both(tmp_path, [REAL[0], bad, REAL[2]])
    assert fast == slow == [_values(ResultLine.model_validate_json(raw)) for raw in (REAL[0], REAL[2])]
    assert fast_problems == slow_problems
    assert len(slow_problems) == 1
    assert message in slow_problems[0], slow_problems


EXPONENTS = st.builds(
    lambda mantissa, point, exponent, sign: f"{mantissa}{point}e{sign}{exponent}",
    st.integers(0, 99_999),
    st.sampled_from(["", ".5", ".000123"]),
    st.integers(0, 450),
    st.sampled_from(["", "-", "+"]),
)
"""Numbers with any exponent up to three digits: finite, subnormal, rounding to 0, or too large."""


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(number=EXPONENTS, where=st.sampled_from(["grading", "quality", "cost_usd"]))
def test_an_exponent_of_any_size_reads_the_same_on_both_paths(tmp_path, number, where):
    raw = REAL[0]
    if where == "grading":
        line = _in_grading(raw, b'"x":' + number.encode())
    else:  # the top-level field: quality is the first of its name, cost_usd the last
        found = list(re.finditer(f'"{where}":[^,]+,'.encode(), raw))[0 if where == "quality" else -1]
        line = raw[: found.start()] + f'"{where}":{number},'.encode() + raw[found.end() :]
    slow, slow_problems, fast, fast_problems = _read_both(tmp_path, [line])
    assert (fast, fast_problems) == (slow, slow_problems)
    if fast_result_line(line) is not None:
        assert _values(fast_result_line(line)) == _values(ResultLine.model_validate_json(line))


def test_a_line_not_written_as_judgekit_writes_it_is_proved_free_of_repeated_keys_by_its_colons():
    # json.dumps' default separators (", ", ": "): not the re-encoding byte for byte, so the colon count
    # decides; a repeated key leaves the re-encoding one colon short
    spaced = json.dumps(json.loads(REAL[1]), ensure_ascii=False).encode()
    fast = fast_result_line(spaced)
    assert fast is not None
    assert _values(fast) == _values(ResultLine.model_validate_json(REAL[1]))
    assert fast_result_line(spaced[:-1] + b', "reason": "x"}') is None


def _judge_heavy(raw: bytes) -> bytes:
    """A real line with only its judged criteria, three times over: far more brackets than the limit."""
    line = ResultLine.model_validate_json(raw)
    judged = [c for c in line.checks if c.layer == "rubric"]
    checks = tuple(c.model_copy(update={"check_id": f"{c.check_id}/{n}"}) for n in range(3) for c in judged)
    return dump_result_line(line.model_copy(update={"checks": checks})).encode()


def test_a_judge_heavy_line_is_measured_for_depth_and_takes_the_fast_path():
    raw = _judge_heavy(REAL[0])
    assert raw.count(b"[") + raw.count(b"{") > 200  # the cheap bracket bound cannot clear it
    fast = fast_result_line(raw)
    assert fast is not None
    assert _values(fast) == _values(ResultLine.model_validate_json(raw))


@pytest.mark.parametrize(("depth", "accepted"), [(95, True), (96, False)])
def test_a_judge_heavy_line_nested_past_the_limit_is_refused_by_both_readers(tmp_path, depth, accepted):
    # a note's data sits at depth 5: 5 + 95 is the limit of 100; one more bracket is over it
    raw = _judge_heavy(REAL[0])
    at = raw.index(b'"data":{') + len(b'"data":{')
    deep = raw[:at] + b'"deep":' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"," + raw[at:]
    assert (fast_result_line(deep) is not None) is accepted
    slow, slow_problems, fast, fast_problems = _read_both(tmp_path, [deep])
    assert (fast, fast_problems) == (slow, slow_problems)
    assert bool(slow) is accepted
    assert accepted or "nested deeper than 100" in slow_problems[0]
