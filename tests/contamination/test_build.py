"""contamination.build: the texts file reader, and index_cases behind ``judgekit contamination index``."""

from __future__ import annotations

from pathlib import Path

import pytest

from contamination.conftest import DENVER, KEY_BYTES, OPENING
from judgekit.contamination.build import IndexDocument, IndexRefusal, index_cases, read_texts_file
from judgekit.contamination.index import canary_for, load_key, read_index
from judgekit.errors import JudgekitError


def test_read_texts_file_names_each_text_by_its_field(tmp_path: Path) -> None:
    path = tmp_path / "texts.jsonl"
    path.write_text(
        '{"id": "a", "texts": ["one", {"field": "input", "text": "two"}, {"text": "three"}]}\n\n'
        '{"id": "b", "texts": []}\n',
        encoding="utf-8",
    )
    assert read_texts_file(path) == [
        ("a", [("texts.0", "one"), ("input", "two"), ("texts.2", "three")]),
        ("b", []),
    ]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": 1, "texts": []}', 'texts.jsonl:1: expected {"id": "...", "texts": [...]}'),
        ('{"id": "a", "texts": [3]}', 'texts.jsonl:1: texts.0 must be a string or {"field", "text"}'),
        ("not json", "; each line is one case"),
    ],
)
def test_read_texts_file_refuses_a_line_of_the_wrong_shape(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "texts.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(JudgekitError) as caught:
        read_texts_file(path)
    assert message in caught.value.message
    assert caught.value.exit_code == 2


def test_index_cases_writes_the_index_its_document_describes(tmp_path: Path) -> None:
    texts = tmp_path / "airdesk.jsonl"
    texts.write_text(f'{{"id": "gs-1", "texts": ["{OPENING}", "{DENVER}"]}}\n', encoding="utf-8")
    key = tmp_path / "key"
    key.write_bytes(KEY_BYTES)
    out = tmp_path / "golden.jkc"
    document = index_cases([], key_file=key, out=out, texts=texts, canaries=["EXTRA-CANARY"])
    assert isinstance(document, IndexDocument)
    assert document.set_name == "airdesk"  # the texts file's stem
    assert document.canary == canary_for(load_key(key), "airdesk")
    assert document.canaries == [document.canary, "EXTRA-CANARY"]
    assert document.stats["cases"] == 1
    assert [w.path for w in document.written] == [str(out)]
    assert read_index(out, load_key(key)).key_fingerprint == document.key_fingerprint


def test_index_cases_refuses_an_invalid_set_and_writes_nothing(tmp_path: Path) -> None:
    cases = tmp_path / "golden"
    cases.mkdir()
    (cases / "a.yaml").write_text("id: a\nunknown_field: 1\n", encoding="utf-8")
    key = tmp_path / "key"
    key.write_bytes(KEY_BYTES)
    out = tmp_path / "golden.jkc"
    document = index_cases([cases], key_file=key, out=out)
    assert isinstance(document, IndexRefusal)
    assert document.error.startswith(f"the case set has {len(document.problems)} problem(s); fix them first")
    assert any(p.field == "unknown_field" for p in document.problems)
    assert not out.exists()


def test_index_cases_takes_case_paths_or_a_texts_file_not_both(tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.write_bytes(KEY_BYTES)
    with pytest.raises(JudgekitError, match="give case paths or --texts, not both"):
        index_cases([tmp_path], key_file=key, out=tmp_path / "i.jkc", texts=tmp_path / "t.jsonl")
    with pytest.raises(JudgekitError, match="name the golden-set folders or case files to index"):
        index_cases([], key_file=key, out=tmp_path / "i.jkc")
