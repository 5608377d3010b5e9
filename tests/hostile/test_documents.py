"""Hostile files: every reader of JSON, YAML and TOML files judgekit has, and the CLI, under bounds.

Issue 21, part 2. Case, transcript and results files nested 100,000 deep or holding a 5,000-digit number
gave tracebacks, and a YAML alias bomb ran past 180 s and 6 GB. Every variant below (made by a generator)
is fed to each file kind's real reader in a child process bounded in time and memory
(:func:`tests.hostile.bounded.run_bounded`), and a few through the command line (``judgekit cases check``,
``judgekit grade --transcripts``, ``judgekit report``). The correct outcome is either a clean result
(the variant is within the limits) or one located problem (``file:line: ...``) that names what is wrong:
the limit (``MAX_NESTING_DEPTH``...) for a limit, or the malformation. The last test counts them all.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pytest

from hostile.bounded import run_bounded
from hostile.sweep import Sweep, SweepStore
from judgekit.io.documents import (
    MAX_DOCUMENT_BYTES,
    MAX_LINE_BYTES,
    MAX_NESTING_DEPTH,
    MAX_NUMBER_DIGITS,
    YAML_MAX_ALIAS_NODES,
    check_json_bounds,
    load_json_bounded,
)

SECONDS = 20.0
MB = 1536

DEPTH = "MAX_NESTING_DEPTH"
DIGITS = "MAX_NUMBER_DIGITS"
LINE = "MAX_LINE_BYTES"
DOC = "MAX_DOCUMENT_BYTES"
ALIASES = "YAML_MAX_ALIAS_NODES"
NOT_FINITE = "not finite"
NOT_JSON = "is not JSON"
DUPLICATE = "duplicate key"
UTF8 = "UTF-8"
MALFORMED_JSON = "malformed JSON"
MALFORMED_YAML = "malformed YAML"
OK = None  # within the limits: read without a parse error

#: What no accepted variant's outcome may contain (a parse refusal of any kind).
REFUSALS = (DEPTH, DIGITS, LINE, DOC, ALIASES, NOT_FINITE, NOT_JSON, DUPLICATE, UTF8, "malformed", "Invalid")


@dataclass(frozen=True)
class Variant:
    """One hostile (or control) input.

    Attributes:
        name: Its id.
        make: Makes the text put in the file kind's slot (a JSON or YAML value), or the whole line or
            file when ``whole`` is true.
        expect: A text the located problem must contain (the limit's name, the malformation), or ``OK``.
        whole: The value replaces the whole line/file instead of filling the slot.
    """

    name: str
    make: Callable[[], bytes]
    expect: str | None
    whole: bool = False

    @property
    def value(self) -> bytes:
        """The input's bytes, made when asked (the suite's largest inputs are 64 MiB)."""
        return self.make()


# --------------------------------------------------------------------------- generators


def deep_arrays(n: int) -> bytes:
    """``n`` nested JSON arrays."""
    return b"[" * n + b"]" * n


def deep_objects(n: int) -> bytes:
    """``n`` nested JSON objects."""
    return b'{"a":' * n + b"1" + b"}" * n


def deep_mixed(n: int) -> bytes:
    """Arrays and objects alternating, ``n`` levels."""
    return b'[{"a":' * (n // 2) + b"0" + b"}]" * (n // 2)


def flow_maps(n: int) -> bytes:
    """``n`` nested YAML flow mappings."""
    return b"{a: " * n + b"1" + b"}" * n


def block_seqs(n: int) -> bytes:
    """``n`` nested YAML block sequences on one line (``- - - x``), on the line after the key."""
    return b"\n  " + b"- " * n + b"x"


def long_number(digits: int, *, sign: bytes = b"", tail: bytes = b"") -> bytes:
    """A number literal with ``digits`` digits in a row."""
    return sign + b"7" * digits + tail


def json_value_variants() -> Iterator[Variant]:
    """Hostile and control JSON values for a slot in a JSON document or JSONL line."""
    for n in (MAX_NESTING_DEPTH + 1, 1_000, 100_000, 1_000_000):
        yield Variant(f"deep_arrays_{n}", partial(deep_arrays, n), DEPTH)
        yield Variant(f"deep_objects_{n}", partial(deep_objects, n), DEPTH)
    yield Variant("deep_mixed_500", lambda: deep_mixed(500), DEPTH)
    yield Variant("unclosed_arrays_160000", lambda: b"[" * 160_000, DEPTH)
    yield Variant("unclosed_objects_160000", lambda: b'{"a":' * 160_000, DEPTH)
    yield Variant("shallow_arrays_20", lambda: deep_arrays(20), OK)
    yield Variant("brackets_in_a_string", lambda: b'"' + b"[{" * 50_000 + b'"', OK)
    for digits in (MAX_NUMBER_DIGITS + 1, 4_300, 4_301, 5_000, 1_000_000):
        yield Variant(f"int_{digits}_digits", partial(long_number, digits), DIGITS)
    yield Variant("negative_int_5000", lambda: long_number(5_000, sign=b"-"), DIGITS)
    yield Variant("float_5000_digits", lambda: long_number(5_000, tail=b".5"), DIGITS)
    yield Variant("fraction_5000_digits", lambda: b"0." + long_number(5_000), DIGITS)
    yield Variant("exponent_200_digits", lambda: b"1e" + long_number(200), DIGITS)
    yield Variant("int_100_digits", lambda: long_number(MAX_NUMBER_DIGITS), OK)
    yield Variant("digits_in_a_string", lambda: b'"' + long_number(5_000) + b'"', OK)
    for text in (b"1e400", b"-1e400", b"1.5e999", b"123e4567"):
        yield Variant(f"overflow_{text.decode()}", partial(bytes, text), NOT_FINITE)
    for text in (b"NaN", b"Infinity", b"-Infinity"):
        yield Variant(f"constant_{text.decode()}", partial(bytes, text), NOT_JSON)
    yield Variant("nan_in_a_string", lambda: b'"NaN Infinity 1e400"', OK)
    yield Variant("duplicate_keys", lambda: b'{"a":1,"a":2}', DUPLICATE)
    yield Variant("duplicate_keys_nested", lambda: b'{"b":{"c":[{"a":1,"a":1}]}}', DUPLICATE)
    yield Variant("nul_in_a_string", lambda: b'"a\x00b"', MALFORMED_JSON)
    yield Variant("nul_outside", lambda: b"\x00", MALFORMED_JSON)
    yield Variant("control_char_in_a_string", lambda: b'"a\x1fb"', MALFORMED_JSON)
    yield Variant("unterminated_string", lambda: b'"abc', MALFORMED_JSON)
    yield Variant("single_quotes", lambda: b"{'a': 1}", MALFORMED_JSON)
    yield Variant("trailing_comma", lambda: b"[1,2,]", MALFORMED_JSON)
    yield Variant("invalid_utf8_ff", lambda: b'"\xff"', UTF8)
    yield Variant("invalid_utf8_overlong", lambda: b'"\xc0\xaf"', UTF8)
    yield Variant("invalid_utf8_surrogate_bytes", lambda: b'"\xed\xa0\x80"', UTF8)
    yield Variant("invalid_utf8_truncated", lambda: b'"\xe2\x82"', UTF8)
    yield Variant("bom_inside", lambda: b"\xef\xbb\xbf1", MALFORMED_JSON)
    yield Variant("long_key", lambda: b'{"' + b"k" * 100_000 + b'":1}', OK)
    yield Variant(
        "many_keys", lambda: b"{" + b",".join(b'"k%d":%d' % (i, i) for i in range(50_000)) + b"}", OK
    )
    yield Variant("wide_array", lambda: b"[" + b",".join([b"0"] * 500_000) + b"]", OK)
    yield Variant("escaped_unicode", lambda: b'"\\u00e9\\u4e2d\\ud83d\\ude00"', OK)


def json_line_variants(template: bytes) -> Iterator[Variant]:
    """Whole-line hostile inputs for a JSONL kind whose good line is ``template``."""
    yield Variant("line_64_mib", lambda: b'{"x":"' + b"a" * (64 * 2**20) + b'"}', LINE, whole=True)
    yield Variant("line_of_only_brackets", lambda: b"[" * (2 * 2**20), DEPTH, whole=True)
    yield Variant("bom_at_line_start", lambda: b"\xef\xbb\xbf" + template, OK, whole=True)
    yield Variant("crlf_line", lambda: template + b"\r", OK, whole=True)
    yield Variant(
        "line_cut_in_half", lambda: template[: len(template) // 2] + b"\n" + template, MALFORMED_JSON, True
    )
    yield Variant("line_of_nul_bytes", lambda: b"\x00" * 1_000, MALFORMED_JSON, whole=True)
    yield Variant("line_of_ff_bytes", lambda: b"\xff" * 1_000, UTF8, whole=True)


def yaml_value_variants() -> Iterator[Variant]:
    """Hostile and control YAML values for a slot in a YAML document (after ``slot: ``)."""
    for n in (MAX_NESTING_DEPTH + 1, 999, 1_001, 100_000):
        yield Variant(f"flow_seq_{n}", partial(deep_arrays, n), DEPTH)
        yield Variant(f"flow_map_{n}", partial(flow_maps, n), DEPTH)
    for n in (MAX_NESTING_DEPTH + 1, 5_000):
        yield Variant(f"block_seq_one_line_{n}", partial(block_seqs, n), DEPTH)
    yield Variant(
        "block_map_indented_150",
        lambda: b"\n" + b"".join(b"  " * (i + 1) + b"k:\n" for i in range(150)),
        DEPTH,
    )
    yield Variant("flow_seq_20", lambda: deep_arrays(20), OK)
    for digits in (MAX_NUMBER_DIGITS + 1, 4_301, 5_000, 1_000_000):
        yield Variant(f"int_{digits}_digits", partial(long_number, digits), DIGITS)
    yield Variant("negative_int_5000", lambda: long_number(5_000, sign=b"-"), DIGITS)
    yield Variant("float_5000_digits", lambda: long_number(5_000, tail=b".5"), DIGITS)
    yield Variant("hex_int_5000", lambda: b"0x" + b"f" * 5_000, DIGITS)
    yield Variant("hex_int_5000_digits", lambda: b"0x" + long_number(5_000), DIGITS)
    yield Variant("octal_int_5000", lambda: b"0o" + b"7" * 5_000, OK)  # YAML 1.1 has no 0o: a string
    yield Variant("underscored_int", lambda: b"_".join([b"123456789"] * 600), DIGITS)
    yield Variant("quoted_digits", lambda: b'"' + long_number(5_000) + b'"', OK)
    for text in (b".nan", b".NaN", b".inf", b"-.inf", b"+.INF", b"1.0e+400", b"-1.5e+999"):
        yield Variant(f"float_{text.decode()}", partial(bytes, text), NOT_FINITE)
    yield Variant("int_100_digits", lambda: long_number(MAX_NUMBER_DIGITS), OK)
    yield Variant("bad_timestamp", lambda: b"2026-13-45", "is not one")
    yield Variant("e_notation_is_a_string", lambda: b"1e400", OK)  # YAML 1.1 floats need a dot
    yield Variant("sexagesimal_int_long", lambda: b":".join([b"59"] * 60), DIGITS)
    yield Variant("python_object_tag", lambda: b"!!python/object/apply:os.system ['true']", MALFORMED_YAML)
    yield Variant("unknown_tag", lambda: b"!custom x", MALFORMED_YAML)
    yield Variant("binary_tag_garbage", lambda: b"!!binary '@@@'", OK)  # decodes to b"": a schema question
    yield Variant("undefined_alias", lambda: b"*nowhere", MALFORMED_YAML)
    yield Variant("nul_byte", lambda: b"a\x00b", MALFORMED_YAML)
    yield Variant("invalid_utf8", lambda: b"\xff\xfe", UTF8)
    yield Variant("tab_indent", lambda: b"\n\t- x", MALFORMED_YAML)
    yield Variant("long_plain_string", lambda: b"x" * (5 * 2**20), OK)
    yield Variant("complex_key", lambda: b"\n  ? [a, b]\n  : 1", "a key is a list or mapping")
    yield Variant(
        "complex_key_alias_bomb",
        lambda: b"\n  ? &k [" + b",".join([b"x"] * 50) + b"]\n  : 1",
        "a key is a list",
    )


def yaml_document_variants(good: bytes) -> Iterator[Variant]:
    """Whole-file hostile YAML documents (``good`` is a valid document of the kind)."""
    yield Variant("billion_laughs", lambda: billion_laughs(9, 9) + good, ALIASES, whole=True)
    yield Variant("laughs_in_a_mapping", lambda: laughs_mapping(8, 10) + good, ALIASES, whole=True)
    yield Variant("merge_key_bomb", lambda: merge_bomb(30) + good, ALIASES, whole=True)
    yield Variant(
        "flat_alias_list",
        lambda: b"a: &a [1, 2]\nb: [" + b", ".join([b"*a"] * 6_000) + b"]\n" + good,
        ALIASES,
        True,
    )
    yield Variant("recursive_alias", lambda: b"a: &a [*a]\n" + good, "recursive", whole=True)
    yield Variant("recursive_mapping_alias", lambda: b"a: &a {b: *a}\n" + good, "recursive", whole=True)
    yield Variant("a_few_aliases", lambda: b"a: &a [1, 2]\nb: [*a, *a, *a]\n" + good, OK, whole=True)
    yield Variant("merge_key_once", lambda: b"a: &a {x: 1}\nb: {<<: *a, y: 2}\n" + good, OK, whole=True)
    yield Variant("duplicate_key", lambda: good + b"dup: 1\ndup: 2\n", DUPLICATE, whole=True)
    yield Variant(
        "duplicate_merge_key", lambda: b"a: &a {x: 1}\nb: {<<: *a, <<: *a}\n" + good, DUPLICATE, True
    )
    yield Variant("bom_at_start", lambda: b"\xef\xbb\xbf" + good, OK, whole=True)
    yield Variant("two_documents", lambda: good + b"---\n" + good, MALFORMED_YAML, whole=True)
    yield Variant(
        "oversized_file", lambda: good + b"# " + b"x" * (MAX_DOCUMENT_BYTES + 1) + b"\n", DOC, whole=True
    )
    yield Variant("nul_bytes_only", lambda: b"\x00" * 100, MALFORMED_YAML, whole=True)
    yield Variant("ff_bytes_only", lambda: b"\xff" * 100, UTF8, whole=True)
    yield Variant("utf16_file", lambda: good.decode().encode("utf-16"), UTF8, whole=True)


def billion_laughs(levels: int, width: int) -> bytes:
    """The classic alias bomb: each level a list of ``width`` aliases of the level below."""
    lines = [b"l0: &l0 [" + b",".join([b"lol"] * width) + b"]"]
    for i in range(1, levels):
        lines.append(b"l%d: &l%d [" % (i, i) + b",".join([b"*l%d" % (i - 1)] * width) + b"]")
    return b"\n".join(lines) + b"\n"


def laughs_mapping(levels: int, width: int) -> bytes:
    """An alias bomb through mappings (each key's value an alias of the level below)."""
    lines = [b"m0: &m0 {a: lol}"]
    for i in range(1, levels):
        keys = b", ".join(b"k%d: *m%d" % (j, i - 1) for j in range(width))
        lines.append(b"m%d: &m%d {%s}" % (i, i, keys))
    return b"\n".join(lines) + b"\n"


def merge_bomb(levels: int) -> bytes:
    """Merge-key abuse: each mapping merges the one before it twice (the merged lists double a level)."""
    lines = [b"g0: &g0 {x: 1, y: 2}"]
    for i in range(1, levels):
        lines.append(b"g%d: &g%d {<<: [*g%d, *g%d], z%d: 1}" % (i, i, i - 1, i - 1, i))
    return b"\n".join(lines) + b"\n"


# --------------------------------------------------------------------------- readers

GOOD_TRANSCRIPT = (
    b'{"case_id":"c1","trial":1,"messages":[{"role":"user","content":"hi"}],"metadata":{"x":SLOT}}'
)
GOOD_CASE_YAML = b"id: c1\nversion: 1\nslice: s\ninput: hello\n"
GOOD_CASE_JSON = b'{"id":"c1","version":1,"slice":"s","input":"hello","expected":{"x":SLOT}}'


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _fill(template: bytes, variant: Variant) -> bytes:
    return variant.value if variant.whole else template.replace(b"SLOT", variant.value)


def _case_set_outcome(root: Path) -> str:
    from judgekit.caseset import load_case_set
    from judgekit.errors import JudgekitError

    try:
        case_set = load_case_set(root)
    except JudgekitError as exc:
        return f"error: {exc.message}"
    return "\n".join(str(p) for p in case_set.problems) or "ok"


def read_case_yaml(work: str, variant: Variant) -> str:
    """A case file (``.yaml``), read by ``load_case_set``; the slot is a case field's value."""
    data = variant.value if variant.whole else GOOD_CASE_YAML + b"expected: " + variant.value + b"\n"
    _write(Path(work) / "set" / "c.yaml", data)
    return _case_set_outcome(Path(work) / "set")


def read_manifest(work: str, variant: Variant) -> str:
    """The set manifest ``judgekit-set.yaml``, read by ``load_case_set``."""
    root = Path(work) / "set"
    _write(root / "c.yaml", GOOD_CASE_YAML)
    data = variant.value if variant.whole else b"name: s\ndescription: " + variant.value + b"\n"
    _write(root / "judgekit-set.yaml", data)
    return _case_set_outcome(root)


def read_case_json(work: str, variant: Variant) -> str:
    """A case file (``.json``), read by ``load_case_set``."""
    _write(Path(work) / "set" / "c.json", _fill(GOOD_CASE_JSON, variant))
    return _case_set_outcome(Path(work) / "set")


def read_case_jsonl(work: str, variant: Variant) -> str:
    """A case file (``.jsonl``, one case a line), read by ``load_case_set``."""
    line = _fill(GOOD_CASE_JSON, variant)
    _write(Path(work) / "set" / "c.jsonl", line + b"\n")
    return _case_set_outcome(Path(work) / "set")


def read_transcripts_plan(work: str, variant: Variant) -> str:
    """A transcript file, read by ``plan_trials`` (what ``judgekit grade --transcripts`` does)."""
    from judgekit.caseset import load_case_set
    from judgekit.runner import plan_trials

    root = Path(work) / "set"
    _write(root / "c1.yaml", GOOD_CASE_YAML)
    path = _write(Path(work) / "t.jsonl", _fill(GOOD_TRANSCRIPT, variant) + b"\n")
    plan = plan_trials(load_case_set(root), path)
    return "\n".join(str(p) for p in plan.problems) or "ok"


def read_transcripts_iter(work: str, variant: Variant) -> str:
    """A transcript file, read by ``iter_transcripts`` (the library reader)."""
    from judgekit.errors import Problem
    from judgekit.transcript import iter_transcripts

    path = _write(Path(work) / "t.jsonl", _fill(GOOD_TRANSCRIPT, variant) + b"\n")
    return "\n".join(str(p) for p in iter_transcripts(path) if isinstance(p, Problem)) or "ok"


def _good_result_line() -> bytes:
    from judgekit.results import ResultLine, dump_result_line

    line = ResultLine.model_validate(
        {
            "schema_version": 1,
            "run_id": "r1",
            "case": {"id": "c1", "version": 1, "slice": "s"},
            "trial": 1,
            "verdict": "pass",
            "reason": "",
            "checks": [],
            "judgekit_version": "0.1.0",
        }
    )
    return dump_result_line(line).encode()


def read_results_file(work: str, variant: Variant) -> str:
    """A results file, read by ``read_results`` (what ``judgekit report`` does); the slot is ``reason``."""
    from judgekit.results import read_results

    template = _good_result_line()
    # The slot is where a string is expected: a hostile value is refused before the schema is asked.
    data = variant.value if variant.whole else template.replace(b'"reason":""', b'"reason":' + variant.value)
    path = _write(Path(work) / "r.jsonl", data + b"\n")
    return "\n".join(str(p) for p in read_results(path).problems) or "ok"


def read_label_table(work: str, variant: Variant) -> str:
    """A label table (JSONL), read by ``parse_labels``."""
    from judgekit.calibration.labels import parse_labels
    from judgekit.errors import JudgekitError

    template = b'{"item_id":"i1","rater":"expert","label":"pass","note":SLOT}'
    path = _write(Path(work) / "labels.jsonl", _fill(template, variant) + b"\n")
    try:
        parse_labels(path.read_bytes(), source=path)
    except JudgekitError as exc:
        return exc.message
    return "ok"


def read_jury_file(work: str, variant: Variant) -> str:
    """A jury file (YAML), read by ``load_jury``."""
    from judgekit.errors import JudgekitError
    from judgekit.judges.jury import load_jury

    data = variant.value if variant.whole else b"aggregation: majority\nmembers: " + variant.value + b"\n"
    path = _write(Path(work) / "jury.yaml", data)
    try:
        load_jury(path)
    except JudgekitError as exc:
        return exc.message
    return "ok"


def read_rubric_file(work: str, variant: Variant) -> str:
    """A rubric file (YAML), read by ``load_rubric``."""
    from judgekit.errors import JudgekitError
    from judgekit.judges.rubric import load_rubric

    data = variant.value if variant.whole else b"id: r\ncriteria: " + variant.value + b"\n"
    path = _write(Path(work) / "rubric.yaml", data)
    try:
        load_rubric(path)
    except JudgekitError as exc:
        return exc.message
    return "ok"


def read_run_config(work: str, variant: Variant) -> str:
    """A run configuration (YAML), read by ``load_run_config``."""
    from judgekit.errors import JudgekitError
    from judgekit.judge_setup import load_run_config

    data = variant.value if variant.whole else b"judge:\n  model: " + variant.value + b"\n"
    path = _write(Path(work) / "run.yaml", data)
    try:
        load_run_config(path)
    except JudgekitError as exc:
        return exc.message
    return "ok"


def read_state_json(work: str, variant: Variant) -> str:
    """A state snapshot (``.json``), read by ``load_state`` (a case's ``initial_state``)."""
    from judgekit.errors import JudgekitError
    from judgekit.state.snapshot import load_state

    template = b'{"bookings":[{"id":"b1","value":SLOT}]}'
    path = _write(Path(work) / "state.json", _fill(template, variant))
    try:
        load_state(path)
    except JudgekitError as exc:
        return exc.message
    return "ok"


def read_calibration_record(work: str, variant: Variant) -> str:
    """A calibration record (JSON), read by ``load_record``."""
    from judgekit.calibration.records import load_record
    from judgekit.errors import JudgekitError

    path = _write(Path(work) / "record.json", _fill(b'{"schema_version":1,"x":SLOT}', variant))
    try:
        load_record(path.read_bytes(), source=path)
    except JudgekitError as exc:
        return exc.message
    return "ok"


def read_project_toml(work: str, variant: Variant) -> str:
    """A project configuration (``judgekit.toml``), read by ``load_project_config``."""
    from judgekit.errors import JudgekitError
    from judgekit.settings import load_project_config

    path = _write(Path(work) / "judgekit.toml", variant.value)
    try:
        load_project_config(path)
    except JudgekitError as exc:
        return exc.message
    return "ok"


# The importers and the other JSON readers that now go through ``load_json_bounded``.

GOOD_OPENAI_CHAT = (
    b'{"case_id":"c1","trial":1,"model":"gpt-4o","messages":[{"role":"system","content":"You are AirDesk."},'
    b'{"role":"user","content":"hi"},{"role":"assistant","content":"done"}],"metadata":{"x":SLOT}}'
)
GOOD_ANTHROPIC = (
    b'{"case_id":"c1","trial":1,"model":"claude-sonnet-4-5",'
    b'"system":[{"type":"text","text":"You are AirDesk."}],'
    b'"tools":[{"name":"lookup_booking","input_schema":{"type":"object"}}],"messages":['
    b'{"role":"user","content":"I was charged twice."},'
    b'{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"lookup_booking",'
    b'"input":{"ref":"QX7P2L"}}]},'
    b'{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"{}"}]},'
    b'{"role":"assistant","content":[{"type":"text","text":"Refunded."}]}],"metadata":{"x":SLOT}}'
)
#: One tau-bench episode (the shape of ``tests/formats/test_importers.py``); the slot is ``info.source``.
GOOD_TAU_EPISODE = (
    b'{"task_id":3,"trial":0,"reward":1.0,"info":{"task":{"user_id":"u1","instruction":"book",'
    b'"actions":[],"outputs":["42"]},"source":SLOT},"traj":[{"role":"system","content":"# Policy"},'
    b'{"role":"user","content":"hi"},{"role":"assistant","content":"done"}]}'
)
GOOD_OTLP = (
    b'{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"agent"}}]},'
    b'"scopeSpans":[{"scope":{"name":"fixture"},"spans":[{"traceId":"5cf92f3577b34da6a3ce929d0e0e4737",'
    b'"spanId":"b100000000000001","parentSpanId":"","name":"chat example-model","kind":1,'
    b'"startTimeUnixNano":"1767225600010000000","endTimeUnixNano":"1767225600100000000","attributes":['
    b'{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},'
    b'{"key":"judgekit.case_id","value":{"stringValue":"c1"}},'
    b'{"key":"gen_ai.input.messages","value":{"stringValue":INPUT}},'
    b'{"key":"gen_ai.output.messages","value":{"stringValue":OUTPUT}}],'
    b'"events":[],"status":{},"x":SLOT}]}]}]}'
)
GOOD_OTLP_INPUT = b'[{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]'
GOOD_OTLP_OUTPUT = b'[{"role": "assistant", "parts": [{"type": "text", "content": "done"}]}]'


def _otlp_template(input_messages: bytes = GOOD_OTLP_INPUT) -> bytes:
    """The OTLP export with its chat span's ``gen_ai.input.messages`` attribute (a JSON string) set."""
    return GOOD_OTLP.replace(b"INPUT", json.dumps(input_messages.decode()).encode()).replace(
        b"OUTPUT", json.dumps(GOOD_OTLP_OUTPUT.decode()).encode()
    )


GOOD_REPLAY = b'{"task_id":7,"trial":0,"final_db_diff":{},"expected_db_diff":{},"x":SLOT}'
GOOD_CASSETTE = b'{"key":"k1","reply":{"content":"pass","x":SLOT}}'
GOOD_TEXTS = b'{"id":"c1","texts":["hello",{"field":"input","text":"world"}],"x":SLOT}'


def _import_outcome(read: Callable[[Path], object], path: Path) -> str:
    """What an importer made of ``path``: its problems, ``ok``, or the error that stopped it."""
    from judgekit.errors import JudgekitError

    try:
        result = read(path)
    except JudgekitError as exc:
        return f"error: {exc.message}"
    problems = getattr(result, "problems", [])
    trials = getattr(result, "trials", [])
    if not problems and not trials:
        return "nothing imported and no problem"
    return "\n".join(str(p) for p in problems) or "ok"


GOOD_LABEL_STUDIO_TASK = (
    b'{"id":1,"data":{"item_id":"C-1#0","x":SLOT},"annotations":[{"id":2,"completed_by":3,'
    b'"result":[{"from_name":"q","to_name":"t","type":"choices","value":{"choices":["pass"]}}]}]}'
)


def _label_tool_outcome(tool: str, path: Path, work: str) -> str:
    """What ``judgekit labels import`` (``import_labels``) made of one tool's export at ``path``."""
    from judgekit.api.label_import import import_labels
    from judgekit.errors import JudgekitError

    try:
        document = import_labels(tool, path, out=Path(work) / "labels.csv")
    except JudgekitError as exc:
        return f"error: {exc.message}"
    return "\n".join(str(p) for p in document.problems) or ("ok" if document.written else "nothing written")


def read_label_studio_export(work: str, variant: Variant) -> str:
    """A Label Studio JSON export (a list of tasks), read by ``judgekit labels import``'s ``import_labels``.

    The slot is a task's ``data`` value; a document that breaks a limit stops the import (``file:line:
    ...``); any record it cannot map is a located problem.
    """
    path = _write(Path(work) / "export.json", b"[" + _fill(GOOD_LABEL_STUDIO_TASK, variant) + b"]\n")
    return _label_tool_outcome("label-studio", path, work)


GOOD_LANGFUSE_SCORE = (
    b'{"id":"s1","name":"q","value":1,"stringValue":"pass","dataType":"CATEGORICAL","source":"ANNOTATION",'
    b'"authorUserId":"u1","traceId":"C-1#0","metadata":{"x":SLOT}}'
)


def read_langfuse_scores(work: str, variant: Variant) -> str:
    """Langfuse scores as JSON Lines (one score a line), read by ``import_labels``; the slot is metadata."""
    path = _write(Path(work) / "scores.jsonl", _fill(GOOD_LANGFUSE_SCORE, variant) + b"\n")
    return _label_tool_outcome("langfuse", path, work)


GOOD_PHOENIX_ANNOTATION = (
    b'{"span_id":"s1","name":"q","annotator_kind":"HUMAN","result":{"label":"pass"},"user_id":"u1",'
    b'"metadata":{"item_id":"C-1#0","x":SLOT}}'
)


def read_phoenix_annotations(work: str, variant: Variant) -> str:
    """Phoenix span annotations as the REST page (``{"data": [...]}``), read by ``import_labels``."""
    body = b'{"data":[' + _fill(GOOD_PHOENIX_ANNOTATION, variant) + b"]}\n"
    return _label_tool_outcome("phoenix", _write(Path(work) / "annotations.json", body), work)


def read_openai_chat_file(work: str, variant: Variant) -> str:
    """An OpenAI chat JSONL export, read by ``read_openai_chat``; the slot is a ``metadata`` value."""
    from judgekit.formats.importers import read_openai_chat

    path = _write(Path(work) / "chat.jsonl", _fill(GOOD_OPENAI_CHAT, variant) + b"\n")
    return _import_outcome(read_openai_chat, path)


def read_anthropic_file(work: str, variant: Variant) -> str:
    """An Anthropic messages JSONL export, read by ``read_anthropic``; the slot is a ``metadata`` value."""
    from judgekit.formats.adapters import read_anthropic

    path = _write(Path(work) / "claude.jsonl", _fill(GOOD_ANTHROPIC, variant) + b"\n")
    return _import_outcome(read_anthropic, path)


def read_tau_bench_list(work: str, variant: Variant) -> str:
    """A tau-bench results file (one JSON list of episodes), read by ``read_tau_bench``.

    The slot is an episode's ``info.source``; a list that breaks a limit stops the import
    (``file:line: ...; nothing imported``).
    """
    from judgekit.formats.importers import read_tau_bench

    data = (
        b"[\n"
        + GOOD_TAU_EPISODE.replace(b"SLOT", b'"user"')
        + b",\n"
        + _fill(GOOD_TAU_EPISODE.replace(b'"trial":0', b'"trial":1'), variant)
        + b"\n]\n"
    )
    path = _write(Path(work) / "raw.json", data)
    return _import_outcome(read_tau_bench, path)


def read_tau_bench_jsonl(work: str, variant: Variant) -> str:
    """A tau-bench results file as JSONL (one episode a line), read by ``read_tau_bench``."""
    from judgekit.formats.importers import read_tau_bench

    path = _write(Path(work) / "raw.jsonl", _fill(GOOD_TAU_EPISODE, variant) + b"\n")
    return _import_outcome(read_tau_bench, path)


def read_otlp_export(work: str, variant: Variant) -> str:
    """An OTLP JSON trace export, read by ``read_otlp_file``; the slot is a span's (unread) ``x`` field."""
    from judgekit.errors import JudgekitError
    from judgekit.formats.otel import read_otlp_file

    path = _write(Path(work) / "trace.json", _fill(_otlp_template(), variant))
    try:
        result = read_otlp_file(path)
    except JudgekitError as exc:
        return f"error: {exc.message}"
    if not result.transcripts:
        return "no transcript: " + "\n".join(str(p) for p in result.problems)
    return "\n".join(str(p) for p in result.problems) or "ok"


def read_otlp_attribute(work: str, variant: Variant) -> str:
    """An OTLP export whose chat span's ``gen_ai.input.messages`` (a JSON string attribute) is the variant.

    The attribute's text is the variant, written as a JSON string (escaped), so the export itself is
    valid: a limit or malformation in the attribute is a fidelity note on the transcript (``attribute ...
    on span ... is not usable JSON (<the refusal>)``), never a crash, and the trace is still imported. The
    outcome is every note of the report (or ``ok``); the notes name the attribute and its span, not a file
    line (the attribute is one string of the export), hence ``UNLOCATED``.
    """
    from judgekit.errors import JudgekitError
    from judgekit.formats.otel import read_otlp_file

    raw = variant.value
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", "surrogateescape")  # JSON-escaped as \udcxx: text, no longer bytes
    export = _otlp_template(b"ATTRIBUTE").replace(b"SLOT", b"1")
    path = _write(Path(work) / "trace.json", export.replace(b'"ATTRIBUTE"', json.dumps(text).encode()))
    try:
        result = read_otlp_file(path)
    except JudgekitError as exc:
        return f"error: {exc.message}"
    if len(result.transcripts) != 1 or result.problems:
        return f"the trace was not imported: {[str(p) for p in result.problems]}"
    notes = [issue.detail for report in result.reports for issue in report.issues]
    usable = [n for n in notes if "is not usable JSON" in n]
    if usable and not all("gen_ai.input.messages on span b100000000000001" in n for n in usable):
        return f"a note does not name the attribute and its span: {usable}"
    return "\n".join(notes) or "ok"


def read_taubench_replay(work: str, variant: Variant) -> str:
    """A tau-bench replay file (JSONL of database diffs), read by ``_read_replay`` (``load_run``'s)."""
    from judgekit.errors import JudgekitError
    from judgekit.integrations.taubench import _read_replay

    path = _write(Path(work) / "replay.jsonl", _fill(GOOD_REPLAY, variant) + b"\n")
    try:
        rows = _read_replay(path)
    except JudgekitError as exc:
        return f"error: {exc.message}"
    return "ok" if ("7", 0) in rows else f"the good row was not read: {sorted(rows)}"


CASSETTE_SKIPPED = "line skipped, counted"


def read_cassette(work: str, variant: Variant) -> str:
    """A judge cassette (JSONL of recorded replies), read by ``Cassette``.

    A cassette skips a line it cannot use by design, silently, and counts it in ``skipped_lines`` (a torn
    write must not stop a run); it says neither where nor why. So the outcome this reader reports is what
    the cassette did: ``ok`` when no line was skipped and the good record was read, and
    ``cassette.jsonl: line skipped, counted (skipped_lines == 1)`` when exactly the hostile line was
    skipped (and, for a cut line, the good line after it still read). Anything else (two skipped lines, the
    good record lost, a record read from a hostile line) is reported as it is and fails. ``WORDING`` maps
    every refusal of this kind to :data:`CASSETTE_SKIPPED` and ``UNLOCATED`` lets it go without a line.
    """
    from judgekit.judges.cache import Cassette

    path = _write(Path(work) / "cassette.jsonl", _fill(GOOD_CASSETTE, variant) + b"\n")
    cassette = Cassette(path)
    # The good record is read from a control line, and from a cut line's second half.
    good_read = "k1" in cassette and (cassette.get("k1") is not None)
    expect = EXCEPTIONS.get(("cassette", variant.name), variant.expect)
    cut = variant.name == "line_cut_in_half"
    if cassette.skipped_lines == 0 and good_read:
        return "ok"
    if cassette.skipped_lines == 1 and (good_read == cut) and expect is not None:
        return f"{path.name}: {CASSETTE_SKIPPED} (skipped_lines == 1)"
    return f"{path.name}: skipped_lines == {cassette.skipped_lines}, records {len(cassette)}"


def read_contamination_texts(work: str, variant: Variant) -> str:
    """A contamination text file (JSONL, one case's ``id`` and ``texts`` a line): ``read_texts_file``."""
    from judgekit.contamination.build import read_texts_file
    from judgekit.errors import JudgekitError

    path = _write(Path(work) / "texts.jsonl", _fill(GOOD_TEXTS, variant) + b"\n")
    try:
        items = read_texts_file(path)
    except JudgekitError as exc:
        return f"error: {exc.message}"
    return "ok" if items and items[-1][0] == "c1" else f"the good case was not read: {items!r}"[:400]


def toml_variants() -> Iterator[Variant]:
    """Hostile TOML configurations (whole files)."""
    yield Variant("deep_array_100000", lambda: b"cases = " + deep_arrays(100_000) + b"\n", DEPTH, whole=True)
    yield Variant("deep_array_150", lambda: b"cases = " + deep_arrays(150) + b"\n", DEPTH, whole=True)
    deep_table = b"cases = " + b"{a = " * 3_000 + b"1" + b"}" * 3_000 + b"\n"
    yield Variant("deep_inline_table_3000", lambda: deep_table, DEPTH, whole=True)
    yield Variant(
        "int_5000_digits", lambda: b"concurrency = " + long_number(5_000) + b"\n", DIGITS, whole=True
    )
    yield Variant("oversized", lambda: b"# " + b"x" * (MAX_DOCUMENT_BYTES + 1) + b"\n", DOC, whole=True)
    yield Variant("not_toml", lambda: b"cases = [\n", "malformed TOML", whole=True)
    yield Variant("invalid_utf8", lambda: b"cases = '\xff'\n", UTF8, whole=True)
    yield Variant(
        "float_5000_digits", lambda: b"[judge]\ntimeout = " + long_number(5_000) + b".5\n", DIGITS, whole=True
    )
    yield Variant("float_inf", lambda: b"[judge]\ntimeout = inf\n", NOT_FINITE, whole=True)
    yield Variant("float_minus_inf", lambda: b"[judge]\nbackoff = -inf\n", NOT_FINITE, whole=True)
    yield Variant("float_nan", lambda: b"[judge]\ntimeout = nan\n", NOT_FINITE, whole=True)
    yield Variant("float_1e400", lambda: b"[judge]\ntimeout = 1e400\n", NOT_FINITE, whole=True)
    yield Variant("float_in_an_array", lambda: b"thresholds = [0.5, inf]\n", NOT_FINITE, whole=True)
    yield Variant("plain", lambda: b"concurrency = 4\n", OK, whole=True)


Reader = Callable[[str, Variant], str]

#: The file kinds, their readers and the variants each gets.
KINDS: list[tuple[str, Reader, Callable[[], Iterator[Variant]]]] = [
    (
        "case_yaml",
        read_case_yaml,
        lambda: iter([*yaml_value_variants(), *yaml_document_variants(GOOD_CASE_YAML)]),
    ),
    (
        "manifest",
        read_manifest,
        lambda: iter([*yaml_value_variants(), *yaml_document_variants(b"name: s\n")]),
    ),
    ("rubric", read_rubric_file, lambda: iter(list(yaml_document_variants(b"id: r\n")))),
    ("jury", read_jury_file, lambda: iter(list(yaml_document_variants(b"aggregation: majority\n")))),
    ("run_config", read_run_config, lambda: iter(list(yaml_document_variants(b"judge: {}\n")))),
    ("case_json", read_case_json, json_value_variants),
    (
        "case_jsonl",
        read_case_jsonl,
        lambda: iter([*json_value_variants(), *json_line_variants(GOOD_CASE_JSON.replace(b"SLOT", b"1"))]),
    ),
    (
        "transcripts_grade",
        read_transcripts_plan,
        lambda: iter([*json_value_variants(), *json_line_variants(GOOD_TRANSCRIPT.replace(b"SLOT", b"1"))]),
    ),
    (
        "transcripts_library",
        read_transcripts_iter,
        lambda: iter([*json_value_variants(), *json_line_variants(GOOD_TRANSCRIPT.replace(b"SLOT", b"1"))]),
    ),
    ("results", read_results_file, lambda: iter([*json_value_variants(), *json_line_variants(b"{}")])),
    ("labels", read_label_table, json_value_variants),
    ("state_json", read_state_json, json_value_variants),
    ("calibration_record", read_calibration_record, json_value_variants),
    ("project_toml", read_project_toml, toml_variants),
    (
        "openai_chat",
        read_openai_chat_file,
        lambda: iter([*json_value_variants(), *json_line_variants(GOOD_OPENAI_CHAT.replace(b"SLOT", b"1"))]),
    ),
    (
        "anthropic",
        read_anthropic_file,
        lambda: iter([*json_value_variants(), *json_line_variants(GOOD_ANTHROPIC.replace(b"SLOT", b"1"))]),
    ),
    ("tau_bench", read_tau_bench_list, json_value_variants),
    ("label_studio", read_label_studio_export, json_value_variants),
    (
        "langfuse_jsonl",
        read_langfuse_scores,
        lambda: iter(
            [*json_value_variants(), *json_line_variants(GOOD_LANGFUSE_SCORE.replace(b"SLOT", b"1"))]
        ),
    ),
    ("phoenix", read_phoenix_annotations, json_value_variants),
    (
        "tau_bench_jsonl",
        read_tau_bench_jsonl,
        lambda: iter([*json_value_variants(), *json_line_variants(GOOD_TAU_EPISODE.replace(b"SLOT", b"1"))]),
    ),
    ("otlp", read_otlp_export, json_value_variants),
    ("otlp_attribute", read_otlp_attribute, json_value_variants),
    (
        "taubench_replay",
        read_taubench_replay,
        lambda: iter([*json_value_variants(), *json_line_variants(GOOD_REPLAY.replace(b"SLOT", b"1"))]),
    ),
    (
        "cassette",
        read_cassette,
        lambda: iter([*json_value_variants(), *json_line_variants(GOOD_CASSETTE.replace(b"SLOT", b"1"))]),
    ),
    (
        "contamination_texts",
        read_contamination_texts,
        lambda: iter([*json_value_variants(), *json_line_variants(GOOD_TEXTS.replace(b"SLOT", b"1"))]),
    ),
]

#: Variants a kind cannot see as the generator says, and the outcome it correctly gives instead.
EXCEPTIONS: dict[tuple[str, str], str | None] = {
    # The results template's slot is ``reason`` (a string): a valid non-string is a schema problem.
    ("results", "shallow_arrays_20"): "reason",
    ("results", "int_100_digits"): "reason",
    ("results", "long_key"): "reason",
    ("results", "many_keys"): "reason",
    ("results", "wide_array"): "reason",
    # Its whole-line template is ``{}``: read, and left out as a line of no schema version.
    ("results", "bom_at_line_start"): "no schema_version",
    ("results", "crlf_line"): "no schema_version",
    # The rubric and run configuration get whole documents only; their good document is no full rubric.
    ("rubric", "a_few_aliases"): "rubric",
    ("rubric", "merge_key_once"): "rubric",
    ("rubric", "bom_at_start"): "rubric",
    ("run_config", "a_few_aliases"): OK,
    ("run_config", "merge_key_once"): OK,
    # A 64 MiB JSONL case file is refused whole: case files are limited to 20 MiB.
    ("case_jsonl", "line_64_mib"): DOC,
    # An OTLP attribute is a JSON string of a UTF-8 export: bytes that are not UTF-8 cannot be in it. Its
    # reader writes them escaped (``\udcff``), which is text: read, and noted as "not a list", no refusal.
    ("otlp_attribute", "invalid_utf8_ff"): OK,
    ("otlp_attribute", "invalid_utf8_overlong"): OK,
    ("otlp_attribute", "invalid_utf8_surrogate_bytes"): OK,
    ("otlp_attribute", "invalid_utf8_truncated"): OK,
}

#: How a kind words a malformation (its messages predate this suite and are kept).
WORDING: dict[str, dict[str, str]] = {
    "labels": {MALFORMED_JSON: "not valid JSON", UTF8: "is not UTF-8 text"},
    # A cassette skips an unusable line by design and counts it (see ``read_cassette``).
    "cassette": dict.fromkeys(
        (DEPTH, DIGITS, LINE, NOT_FINITE, NOT_JSON, DUPLICATE, UTF8, MALFORMED_JSON), CASSETTE_SKIPPED
    ),
}

#: Refusals a kind makes for the whole file (named, without a line).
FILE_LEVEL = {DOC, "is not UTF-8 text"}

#: Kinds whose correct outcome has no file line by design: the cassette counts a line it skips and says
#: neither where nor why; an OTLP attribute's note names the attribute and its span (see their readers).
UNLOCATED = {"cassette", "otlp_attribute"}


def all_cases() -> list[tuple[str, Reader, Variant]]:
    """Every (kind, reader, variant) the suite tries."""
    return [(kind, reader, variant) for kind, reader, make in KINDS for variant in make()]


CASES = all_cases()

_LOCATED = re.compile(r"[\w.-]+:\d+:")


def judge_outcome(kind: str, variant: Variant, text: str) -> tuple[bool, str]:
    """Whether the reader's outcome ``text`` (its return value's ``repr``) is the correct one, and it."""
    expect = EXCEPTIONS.get((kind, variant.name), variant.expect)
    expect = WORDING.get(kind, {}).get(expect or "", expect)
    if expect is None:
        refused = [r for r in REFUSALS if r in text]
        return not refused, text[:400]
    # A whole-file refusal (its size, TOML's limits) names the file; every other names the line too.
    located = (
        _LOCATED.search(text) is not None
        or kind == "project_toml"
        or expect in FILE_LEVEL
        or kind in UNLOCATED
    )
    return (expect in text and located and "Traceback" not in text), text[:400]


def check_case(case: tuple[str, Reader, Variant], work: Path) -> list[str]:
    """Read one case's file with its kind's reader (in the sweep's bounded child): what went wrong."""
    kind, reader, variant = case
    handled, what = judge_outcome(kind, variant, repr(reader(str(work), variant))[:2000])
    return [] if handled else [what]


SWEEP = Sweep(
    name=__name__,
    variants=CASES,
    key=lambda case: f"{case[0]}-{case[2].name}",
    check=check_case,
    seconds=SECONDS,
    mb=MB,
    batch=32,
)
"""Each (kind, variant) once in the session, in a bounded child process (batches of 32)."""


@SWEEP.parametrize
def test_every_hostile_file_is_a_clean_located_result(
    variant: tuple[str, Reader, Variant], sweep_store: SweepStore
) -> None:
    assert sweep_store.problems(SWEEP, variant) == []


# --------------------------------------------------------------------------- the shared reader itself


def test_the_limits_are_named_in_the_messages() -> None:
    from judgekit.errors import LocatedError

    cases = [
        (deep_arrays(MAX_NESTING_DEPTH + 1), DEPTH),
        (long_number(MAX_NUMBER_DIGITS + 1), DIGITS),
        (b'"' + b"x" * 100 + b'"', LINE),
    ]
    for text, limit in cases:
        with pytest.raises(LocatedError) as info:
            load_json_bounded(
                text, source="f.jsonl", line=7, max_bytes=MAX_LINE_BYTES if limit != LINE else 50
            )
        assert info.value.problem.line == 7
        assert limit in info.value.problem.message or limit == LINE
        assert "docs/reference/limits.md" in info.value.problem.message or limit == LINE
    assert load_json_bounded(deep_arrays(MAX_NESTING_DEPTH), source=None) is not None


def test_depth_error_names_the_line_of_a_multi_line_document() -> None:
    from judgekit.errors import LocatedError

    text = "{\n" + '"a": 1,\n' * 5 + '"deep": ' + "[" * 200 + "]" * 200 + "\n}"
    with pytest.raises(LocatedError) as info:
        load_json_bounded(text, source="c.json", max_bytes=MAX_DOCUMENT_BYTES)
    assert info.value.problem.line == 7


def test_check_json_bounds_passes_good_lines_and_leaves_malformed_ones_to_the_parser() -> None:
    check_json_bounds(b'{"a": [1, 2, {"b": "NaN 1e400"}]}', source="x.jsonl")
    check_json_bounds(b'{"a": ', source="x.jsonl")  # malformed: the parser after it says so
    check_json_bounds('{"a": "' + "[" * 500 + '"}', source=None)  # brackets only inside a string


def test_pydantic_rejects_deep_json_cleanly_but_the_bound_comes_first() -> None:
    """``model_validate_json`` does not recurse without bound (its own limit is about 200 levels)."""
    from pydantic import BaseModel, ValidationError

    class Any1(BaseModel):
        a: object = None

    with pytest.raises(ValidationError, match="recursion limit"):
        Any1.model_validate_json(b'{"a":' + deep_arrays(100_000) + b"}")
    with pytest.raises(ValidationError, match="number out of range"):
        Any1.model_validate_json(b'{"a":' + long_number(5_000) + b"}")
    # Python's own parser does not: RecursionError and ValueError, the tracebacks of the issue.
    with pytest.raises(RecursionError):
        json.loads(deep_arrays(100_000))
    with pytest.raises(ValueError, match="4300"):
        json.loads(long_number(5_000))
    assert MAX_NESTING_DEPTH < 200


def test_alias_repeats_under_the_limit_are_read() -> None:
    from judgekit.io.documents import parse_text

    text = "a: &a [1]\nb: [" + ", ".join(["*a"] * (YAML_MAX_ALIAS_NODES // 3)) + "]\n"
    (doc,) = list(parse_text(text, "x.yaml"))
    assert len(doc.data["b"]) == YAML_MAX_ALIAS_NODES // 3  # type: ignore[union-attr]


# --------------------------------------------------------------------------- the command line


def cli(args: list[str]) -> tuple[int, str]:
    """Run ``judgekit`` in this process with its output captured: (exit code, standard error + output)."""
    from judgekit.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    # Only the lines that matter, short enough for the child's 2,000-character report.
    marks = ("error", "warning", "Traceback", "failed unexpectedly", ".jsonl:", ".yaml:", ".json:")
    lines = [
        line[:300] for line in (err.getvalue() + out.getvalue()).splitlines() if any(m in line for m in marks)
    ]
    return code, "\n".join(lines[:5])


CLI_VARIANTS = [
    Variant("deep_objects_100000", lambda: deep_objects(100_000), DEPTH),
    Variant("deep_arrays_100000", lambda: deep_arrays(100_000), DEPTH),
    Variant("int_5000_digits", lambda: long_number(5_000), DIGITS),
    Variant("float_5000_digits", lambda: long_number(5_000, tail=b".5"), DIGITS),
    Variant("constant_NaN", lambda: b"NaN", NOT_JSON),
    Variant("overflow_1e400", lambda: b"1e400", NOT_FINITE),
]


def _cli_outcome(code: int, output: str, path: Path, expect: str, exit_code: int) -> None:
    assert code == exit_code, output
    assert "Traceback" not in output, output
    assert "failed unexpectedly" not in output, output
    located = [
        line
        for line in output.splitlines()
        if line.split(": ")[0].endswith(f"{path.name}:1") or f"{path.name}:1:" in line
    ]
    assert len(located) == 1, output
    assert expect in located[0], output


@pytest.mark.parametrize("variant", CLI_VARIANTS, ids=[v.name for v in CLI_VARIANTS])
def test_grade_refuses_a_hostile_transcript_line_with_exit_2(variant: Variant, tmp_path: Path) -> None:
    _write(tmp_path / "set" / "c1.yaml", GOOD_CASE_YAML)
    path = _write(tmp_path / "t.jsonl", _fill(GOOD_TRANSCRIPT, variant) + b"\n")
    args = [
        "grade",
        "--cases",
        str(tmp_path / "set"),
        "--transcripts",
        str(path),
        "--out",
        str(tmp_path / "r.jsonl"),
    ]
    bounded = run_bounded(cli, args, seconds=SECONDS, mb=MB)
    assert bounded.outcome == "returned", bounded.error
    code, output = ast.literal_eval(bounded.value)  # the repr of (int, str) from the child
    _cli_outcome(code, output, path, variant.expect or "", 2)


@pytest.mark.parametrize("variant", CLI_VARIANTS, ids=[v.name for v in CLI_VARIANTS])
def test_report_refuses_a_hostile_results_line_with_exit_2(variant: Variant, tmp_path: Path) -> None:
    line = _good_result_line().replace(b'"reason":""', b'"reason":' + variant.value)
    path = _write(
        tmp_path / "r.jsonl", _good_result_line().replace(b'"trial":1', b'"trial":2') + b"\n" + line + b"\n"
    )
    bounded = run_bounded(cli, ["report", str(path)], seconds=SECONDS, mb=MB)
    assert bounded.outcome == "returned", bounded.error
    code, output = ast.literal_eval(bounded.value)
    located = [
        ln for ln in output.splitlines() if f"{path.name}:2:" in ln
    ]  # the warning, and the report's list
    assert code == 2, output
    assert "Traceback" not in output
    assert "failed unexpectedly" not in output
    assert located, output
    assert variant.expect, variant
    assert all(variant.expect in ln for ln in located), output


CLI_CASE_VARIANTS = [
    ("c.yaml", GOOD_CASE_YAML + b"expected: " + deep_arrays(100_000) + b"\n", DEPTH),
    ("c.yaml", GOOD_CASE_YAML + b"expected: " + long_number(5_000) + b"\n", DIGITS),
    ("c.yaml", billion_laughs(9, 9) + GOOD_CASE_YAML, ALIASES),
    ("c.yaml", merge_bomb(30) + GOOD_CASE_YAML, ALIASES),
    ("c.json", GOOD_CASE_JSON.replace(b"SLOT", deep_objects(100_000)), DEPTH),
    ("c.json", GOOD_CASE_JSON.replace(b"SLOT", long_number(5_000)), DIGITS),
    ("c.jsonl", GOOD_CASE_JSON.replace(b"SLOT", deep_objects(100_000)) + b"\n", DEPTH),
    ("c.jsonl", GOOD_CASE_JSON.replace(b"SLOT", b"NaN") + b"\n", NOT_JSON),
]


@pytest.mark.parametrize(
    ("name", "data", "expect"),
    CLI_CASE_VARIANTS,
    ids=[f"{n}-{e}-{i}" for i, (n, _, e) in enumerate(CLI_CASE_VARIANTS)],
)
def test_validate_reports_a_hostile_case_file_as_one_located_problem(
    name: str, data: bytes, expect: str, tmp_path: Path
) -> None:
    path = _write(tmp_path / "set" / name, data)
    bounded = run_bounded(cli, ["cases", "check", str(tmp_path / "set")], seconds=SECONDS, mb=MB)
    assert bounded.outcome == "returned", bounded.error
    code, output = ast.literal_eval(bounded.value)
    # validate's contract (docs/reference/exit-codes.md): invalid cases are exit 1, one line per problem.
    assert code == 1, output
    assert "Traceback" not in output
    assert "failed unexpectedly" not in output
    located = [ln for ln in output.splitlines() if re.match(rf".*{re.escape(path.name)}:\d+: ", ln)]
    assert len(located) == 1, output
    assert expect in located[0], output


# --------------------------------------------------------------------------- the count


@SWEEP.counted
def test_the_count_every_variant_tried_is_handled_correctly(sweep_store: SweepStore) -> None:
    """Counts the (file kind, variant) pairs tried and handled correctly: the issue's "What to show"."""
    tally = sweep_store.tally(SWEEP)
    print(
        f"\nhostile files: {tally.tried} tried, {tally.handled} handled correctly "
        f"({len({k for k, _, _ in CASES})} kinds)"
    )
    assert tally.tried == len(CASES) >= 190
    assert tally.handled == tally.tried, tally.failures
