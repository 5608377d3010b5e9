"""Tests for judgekit.io.documents: parsing YAML/JSON/JSONL with field lines and located errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from judgekit.errors import JudgekitError, LocatedError, Problem
from judgekit.io.documents import (
    MAX_DOCUMENT_BYTES,
    Document,
    decode_utf8,
    format_loc,
    has_u_escape,
    read_document,
    read_documents,
)


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_format_loc_joins_keys_and_indices() -> None:
    assert format_loc(("expected", "route", 0, "tool")) == "expected.route.0.tool"
    assert format_loc(()) == ""


def test_yaml_field_lines(tmp_path: Path) -> None:
    path = write(
        tmp_path / "c.yaml",
        "id: A-1\nexpected:\n  route:\n    - tool: x\n      args:\n        n: 1\n  outcome: answer\n",
    )
    doc = read_document(path)
    assert doc.data["expected"]["route"][0]["tool"] == "x"
    assert doc.line_of(("id",)) == 1
    assert doc.line_of(("expected",)) == 2
    assert doc.line_of(("expected", "route", 0, "tool")) == 4
    assert doc.line_of(("expected", "route", 0, "args", "n")) == 6
    assert doc.line_of(("expected", "outcome")) == 7


def test_line_of_falls_back_to_nearest_parent(tmp_path: Path) -> None:
    doc = read_document(write(tmp_path / "c.yaml", "a: 1\nexpected:\n  x: 2\n"))
    assert doc.line_of(("expected", "missing_child")) == 2
    assert doc.line_of(("nowhere", "deeper")) == 1


def test_line_of_without_lines_uses_base_line() -> None:
    doc = Document(path=Path("x.json"), data={}, base_line=7)
    assert doc.line_of(("anything",)) == 7


def test_json_field_lines_are_found(tmp_path: Path) -> None:
    path = write(tmp_path / "c.json", '{\n  "id": "A",\n  "expected": {\n    "outcome": "answer"\n  }\n}\n')
    doc = read_document(path)
    assert doc.data == {"id": "A", "expected": {"outcome": "answer"}}
    assert doc.line_of(("id",)) == 2
    assert doc.line_of(("expected", "outcome")) == 4


def test_malformed_yaml_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.yaml", "id: A\ninput: ok\nexpected: {route: [\n")
    with pytest.raises(LocatedError) as info:
        read_document(path)
    problem = info.value.problem
    assert problem.file == path
    assert problem.line == 4
    assert problem.message.startswith("malformed YAML: ")
    assert str(info.value) == f"{path}:4: {problem.message}"


def test_malformed_yaml_indentation(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.yaml", "id: A\n  input: x\n   - y\n")
    with pytest.raises(LocatedError) as info:
        read_document(path)
    assert info.value.problem.line == 2
    assert "malformed YAML" in info.value.problem.message


def test_malformed_json_names_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.json", '{\n  "id": "A",\n  "version": 1,,\n}\n')
    with pytest.raises(LocatedError) as info:
        read_document(path)
    assert str(info.value) == (
        f"{path}:3: malformed JSON: Expecting property name enclosed in double quotes (column 16)"
    )


def test_duplicate_yaml_key_names_both_lines(tmp_path: Path) -> None:
    path = write(tmp_path / "dup.yaml", "id: A\ninput: x\nexpected:\n  outcome: answer\n  outcome: refuse\n")
    with pytest.raises(LocatedError) as info:
        read_document(path)
    assert str(info.value) == f"{path}:5: expected.outcome: duplicate key (first at line 4); keep one"


def test_duplicate_json_key(tmp_path: Path) -> None:
    path = write(tmp_path / "dup.json", '{\n  "id": "A",\n  "input": "x",\n  "id": "B"\n}\n')
    with pytest.raises(LocatedError) as info:
        read_document(path)
    assert str(info.value) == f"{path}:4: id: duplicate key (first at line 2); keep one"


def test_duplicate_nested_json_key_names_the_field_path(tmp_path: Path) -> None:
    path = write(tmp_path / "dup.json", '{"id": "A",\n "user": {"opening": "x",\n  "opening": "y"}}\n')
    with pytest.raises(LocatedError) as info:
        read_document(path)
    assert str(info.value) == f"{path}:3: user.opening: duplicate key (first at line 2); keep one"


def test_non_utf8_names_line_and_byte(tmp_path: Path) -> None:
    path = write(tmp_path / "latin1.yaml", b"id: A\ninput: ok\nnote: caf\xe9\n")
    with pytest.raises(LocatedError) as info:
        read_document(path)
    assert str(info.value) == f"{path}:3: not valid UTF-8 (byte 0xe9 at offset 25); save the file as UTF-8"


def test_decode_utf8_accepts_a_byte_order_mark() -> None:
    assert decode_utf8("\ufeffid: A".encode(), Path("x.yaml")) == "id: A"


def test_byte_order_mark_file_parses(tmp_path: Path) -> None:
    path = write(tmp_path / "bom.json", "\ufeff" + '{"id": "A"}')
    assert read_document(path).data == {"id": "A"}


def test_empty_yaml_file_is_none(tmp_path: Path) -> None:
    assert read_document(write(tmp_path / "empty.yaml", "")).data is None


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(JudgekitError, match=r"no such file$"):
        read_document(tmp_path / "absent.yaml")


def test_oversized_file_is_refused_quickly_with_its_size(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    with path.open("wb") as handle:
        handle.truncate(50 * 1024 * 1024)  # sparse: instant to create
    with pytest.raises(JudgekitError) as info:
        read_document(path)
    assert str(info.value).startswith(
        f"{path}: file is 50.0 MiB; case and configuration files are limited to 20 MiB"
    )
    assert MAX_DOCUMENT_BYTES < 50 * 1024 * 1024


def test_unreadable_path_is_a_user_error(tmp_path: Path) -> None:
    folder = tmp_path / "looks-like.yaml"
    folder.mkdir()
    with pytest.raises(JudgekitError) as info:
        read_document(folder)
    assert str(info.value) == f"{folder}: cannot read: Is a directory"


def test_max_bytes_can_be_lowered(tmp_path: Path) -> None:
    path = write(tmp_path / "c.yaml", "id: A\n")
    with pytest.raises(JudgekitError, match=r"file is 0\.0 MiB"):
        read_document(path, max_bytes=3)


def test_jsonl_yields_one_document_per_line_with_offsets(tmp_path: Path) -> None:
    path = write(tmp_path / "cases.jsonl", '{"id": "A"}\n\n{"id": "B",\n')
    items = list(read_documents(path))
    assert len(items) == 2
    first, second = items
    assert isinstance(first, Document)
    assert first.data == {"id": "A"}
    assert first.base_line == 1
    assert first.line_of(("id",)) == 1
    assert isinstance(second, Problem)
    assert second.line == 3
    assert second.message.startswith("malformed JSON: ")


def test_jsonl_keeps_reading_after_a_bad_line(tmp_path: Path) -> None:
    path = write(tmp_path / "cases.jsonl", 'not json\n{"id": "B"}\n')
    items = list(read_documents(path))
    assert isinstance(items[0], Problem)
    assert items[0].line == 1
    assert isinstance(items[1], Document)
    assert items[1].data == {"id": "B"}
    assert items[1].line_of(("id",)) == 2


def test_jsonl_duplicate_key_is_a_problem_on_its_line(tmp_path: Path) -> None:
    path = write(tmp_path / "cases.jsonl", '{"id": "A"}\n{"id": "B", "id": "C"}\n')
    items = list(read_documents(path))
    assert isinstance(items[1], Problem)
    assert str(items[1]) == f"{path}:2: id: duplicate key (first at line 2); keep one"


def test_read_documents_yaml_is_one_document(tmp_path: Path) -> None:
    items = list(read_documents(write(tmp_path / "c.yml", "- id: A\n- id: B\n")))
    assert len(items) == 1
    assert isinstance(items[0], Document)
    assert items[0].line_of((1, "id")) == 2


def test_files_named_as_text(tmp_path: Path) -> None:
    from pydantic import BaseModel

    from judgekit.io.documents import load_json_model, parse_text, read_input

    class Point(BaseModel):
        x: int

    yaml_file = write(tmp_path / "a.yaml", "x: 1\n")
    jsonl_file = write(tmp_path / "a.jsonl", '{"x": 1}\n{"x": 2}\n')
    assert read_document(str(yaml_file)).data == {"x": 1}
    assert read_document(str(yaml_file)).path == yaml_file
    documents = [d.data for d in read_documents(str(jsonl_file)) if isinstance(d, Document)]
    assert documents == [{"x": 1}, {"x": 2}]
    assert [d.data for d in parse_text("x: 3\n", str(yaml_file)) if isinstance(d, Document)] == [{"x": 3}]
    assert read_input(str(yaml_file), "settings file") == b"x: 1\n"
    assert decode_utf8(b"x: 1\n", str(yaml_file)) == "x: 1\n"
    with pytest.raises(LocatedError) as exc:
        decode_utf8(b"\xff", str(yaml_file))
    assert exc.value.problem.file == yaml_file
    assert load_json_model(Point, '{"x": 4}', source=str(yaml_file), what="point").x == 4
    with pytest.raises(JudgekitError, match=r"a\.yaml"):
        load_json_model(Point, '{"x": "no"}', source=str(yaml_file), what="point")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("x = inf", "the number inf is not finite", id="inf"),
        pytest.param("x = -nan", "the number -nan is not finite", id="nan"),
        pytest.param("x = 1e400", "the number 1e400 is not finite", id="overflows_to_inf"),
        pytest.param(
            "x = " + "1" * 5_000 + ".5", "more than 100 digits (limit MAX_NUMBER_DIGITS", id="long_float"
        ),
        pytest.param("x = " + "1" * 5_000, "more than 100 digits (limit MAX_NUMBER_DIGITS", id="long_int"),
    ],
)
def test_toml_refuses_numbers_that_are_not_measurements(text: str, message: str) -> None:
    from judgekit.io.documents import load_toml_bounded

    with pytest.raises(LocatedError) as caught:
        load_toml_bounded(text, source="judgekit.toml")
    assert str(caught.value).startswith("judgekit.toml:1: ")
    assert message in str(caught.value)


def test_toml_keeps_finite_floats() -> None:
    from judgekit.io.documents import load_toml_bounded

    assert load_toml_bounded("x = 1.5\ny = -2e3", source=None) == {"x": 1.5, "y": -2000.0}


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_jsonl_line_is_not_cut_at_a_unicode_line_separator_inside_a_string(
    tmp_path: Path, separator: str
) -> None:
    # JSON allows these raw inside a string (they are not control characters); str.splitlines breaks there.
    path = write(
        tmp_path / "cases.jsonl", f'{{"id": "GS-1", "input": "one{separator}two"}}\r\n{{"id": "GS-2"}}\n'
    )
    docs = list(read_documents(path))
    assert [d.data for d in docs] == [{"id": "GS-1", "input": f"one{separator}two"}, {"id": "GS-2"}]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        pytest.param(b"[\n1,\n" + b"7" * 101 + b"\n]", 3, "more than 100 digits", id="long_number"),
        pytest.param(b'[\n"a",\n{"x": 1,\n"x": 2}]', 4, "duplicate key 'x'", id="repeated_key"),
        pytest.param(b'{"s": "NaN",\n"v":\nNaN}', 3, "NaN is not JSON", id="nan_after_a_nan_string"),
        pytest.param(b'{"s": "1e400",\n"v":\n1e400}', 3, "1e400 is not finite", id="overflow"),
        pytest.param(b"[\n" + b"[" * 101 + b"]" * 101 + b"]", 2, "nested deeper than 100", id="depth"),
    ],
)
def test_a_limit_in_a_multi_line_document_names_the_line_it_is_on(
    text: bytes, line: int, message: str
) -> None:
    from judgekit.io.documents import MAX_IMPORT_BYTES, load_json_bounded

    with pytest.raises(LocatedError) as caught:
        load_json_bounded(text, source="raw.json", max_bytes=MAX_IMPORT_BYTES, what="the file")
    assert str(caught.value).startswith(f"raw.json:{line}: ")
    assert message in str(caught.value)


@given(st.lists(st.sampled_from([b"\\", b"u", b"a", b'"', b"n", b"\\u", b"x" * 40]), max_size=60))
def test_has_u_escape_is_the_two_byte_search(parts: list[bytes]) -> None:
    """Whatever the backslashes before it (none, a few, more than it looks at one by one)."""
    raw = b"".join(parts)
    assert has_u_escape(raw) == (b"\\u" in raw)


def test_check_json_bounds_refuses_alternating_brackets_nested_past_the_limit():
    # {"a":[{"a":[ ... ]}]}: peeling "[]" and then "{}" in one pass took two levels at once, so a line
    # nested up to twice the limit in alternating brackets passed the depth test
    from judgekit.errors import LocatedError
    from judgekit.io.documents import MAX_NESTING_DEPTH, check_json_bounds

    def nested(depth: int) -> str:
        opens = "".join('{"a":' if n % 2 == 0 else "[" for n in range(depth))
        return opens + "".join("}" if n % 2 == 0 else "]" for n in reversed(range(depth)))

    check_json_bounds(nested(MAX_NESTING_DEPTH), source=None)
    for depth in (MAX_NESTING_DEPTH + 1, MAX_NESTING_DEPTH + 50):
        with pytest.raises(LocatedError, match="nested deeper than 100"):
            check_json_bounds(nested(depth), source=None)


@given(
    st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=12),
    st.booleans(),
    st.integers(0, 1000),
)
def test_every_line_is_at_its_offset_long_lines_and_all(pieces: list[bytes], final: bool, start: int) -> None:
    """``iter_lines_at``'s offsets are where each line starts, after lines too long to keep too."""
    import io

    from judgekit.io.documents import iter_lines_at

    data = b"\n".join(pieces) + (b"\n" if final and pieces else b"")
    got = list(iter_lines_at(io.BytesIO(data), max_bytes=16, start=start))
    *ended, last = data.split(b"\n")
    wholes = [line + b"\n" for line in ended] + ([last] if last else [])  # only b"\n" ends a line
    expected_starts, at = [], 0
    for raw in wholes:
        expected_starts.append(start + at)
        at += len(raw)
    assert [offset for _, offset, _, _ in got] == expected_starts
    for (number, offset, raw, _), whole in zip(got, wholes, strict=True):
        assert number == len([s for s in expected_starts if s <= offset])
        kept = len(whole) <= 16 or (len(whole) == 17 and whole.endswith(b"\n"))  # its newline aside
        assert raw == (whole if kept else None)
