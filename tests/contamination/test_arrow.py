"""The pure Arrow-batch function, Parquet files, and the distributed-engine entry points."""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contamination.conftest import CLEAN_TEXTS, DENVER, KEY_BYTES, OPENING, chat
from judgekit.contamination import arrow
from judgekit.contamination.arrow import (
    ArrowScanner,
    findings_schema,
    scan_parquet,
    scan_record_batch,
    summarise_findings,
)
from judgekit.contamination.index import ContaminationIndex, Key, write_index
from judgekit.contamination.scan import Matcher, ScanOptions
from judgekit.errors import JudgekitError


def _chat_batch() -> pa.RecordBatch:
    records = [
        chat(CLEAN_TEXTS[0]),
        chat("sys", f"see: {OPENING}"),
        chat(DENVER),
        chat("JUDGEKIT-CANARY-TESTSET"),
    ]
    ids = ["r-a", "r-b", "r-c", "r-d"]
    return pa.RecordBatch.from_pylist([{"id": i, **r} for i, r in zip(ids, records, strict=True)])


def test_scan_record_batch_returns_one_row_per_finding(index: ContaminationIndex, key: Key) -> None:
    batch = _chat_batch()
    assert pa.types.is_list(batch.schema.field("messages").type)
    out = scan_record_batch(batch, Matcher(index, key), row_offset=100, id_column="id")
    assert out.schema == findings_schema()
    rows = out.to_pylist()
    assert [(r["row"], r["record_id"], r["kind"], r["case_id"]) for r in rows] == [
        (102, "r-b", "shingle", "gs-031"),
        (103, "r-c", "exact", "gs-044"),
        (104, "r-d", "canary", None),
    ]
    assert rows[0]["field"] == "messages[1].content"
    assert rows[0]["case_field"] == "user.opening"
    assert rows[2]["canary"] == "JUDGEKIT-CANARY-TESTSET"
    assert all(r["new_record"] for r in rows)


def test_two_texts_of_a_case_in_one_record_are_one_new_record(index: ContaminationIndex, key: Key) -> None:
    from contamination.conftest import ACCEPTANCE

    batch = pa.RecordBatch.from_pylist([chat(OPENING, ACCEPTANCE)])
    rows = scan_record_batch(batch, Matcher(index, key)).to_pylist()
    assert [(r["case_field"], r["new_record"]) for r in rows] == [
        ("user.opening", True),
        ("acceptance", False),
    ]
    assert (
        summarise_findings([pa.Table.from_pylist(rows, schema=findings_schema())]).leaks["gs-031"].records
        == 1
    )


def test_scan_record_batch_is_pure(index: ContaminationIndex, key: Key) -> None:
    m = Matcher(index, key)
    batch = _chat_batch()
    assert scan_record_batch(batch, m).equals(scan_record_batch(batch, m))


def test_prompt_completion_columns_and_clean_batch(index: ContaminationIndex, key: Key) -> None:
    m = Matcher(index, key)
    clean = pa.table({"prompt": CLEAN_TEXTS, "completion": ["ok"] * 4})
    assert scan_record_batch(clean, m).num_rows == 0
    dirty = pa.table({"prompt": ["q", "q"], "completion": ["fine", DENVER]})
    (row,) = scan_record_batch(dirty, m, ScanOptions(fields=("completion",))).to_pylist()
    assert (row["row"], row["field"]) == (2, "completion")


def test_summarise_findings_combines_worker_outputs(index: ContaminationIndex, key: Key) -> None:
    m = Matcher(index, key)
    parts = [scan_record_batch(_chat_batch(), m, id_column="id") for _ in range(3)]
    result = summarise_findings(parts)
    assert result.leaks["gs-031"].records == 3
    rebatched = pa.Table.from_batches(parts).combine_chunks().to_batches(max_chunksize=1)
    again = summarise_findings(rebatched)
    assert again.leaks["gs-031"].records == 3
    assert again.canaries["JUDGEKIT-CANARY-TESTSET"].records == 3
    assert result.canaries["JUDGEKIT-CANARY-TESTSET"].records == 3
    assert result.leaks["gs-044"].locations[0].file == "r-c"


def test_arrow_scanner_entry_points(tmp_path: Path, index: ContaminationIndex, key: Key) -> None:
    path = tmp_path / "i.jkc"
    write_index(index, path, key)
    key_file = tmp_path / "key"
    key_file.write_bytes(KEY_BYTES)
    scanner = ArrowScanner(str(path), str(key_file), id_column="id")
    table = pa.Table.from_batches([_chat_batch()])
    ray_style = scanner(table)
    assert isinstance(ray_style, pa.Table)
    assert ray_style.num_rows == 3
    spark_style = list(scanner.map_in_arrow(iter(table.to_batches(max_chunksize=2))))
    assert sum(b.num_rows for b in spark_style) == 3
    assert arrow.FINDINGS_DDL.count(",") == len(findings_schema()) - 1


def test_parquet_file_is_scanned_with_row_numbers(
    tmp_path: Path, index: ContaminationIndex, key: Key
) -> None:
    rows = [chat(CLEAN_TEXTS[i % 4]) for i in range(5000)]
    rows[4321] = chat("hello", OPENING)
    path = tmp_path / "e.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=1000)
    result = scan_parquet(path, Matcher(index, key), ScanOptions(), batch_rows=700)
    loc = result.leaks["gs-031"].locations[0]
    assert (loc.row, loc.line, loc.field) == (4322, None, "messages[1].content")
    assert result.files[str(path)].records == 5000
    assert result.files[str(path)].complete


def test_corrupt_parquet_is_reported(tmp_path: Path, index: ContaminationIndex, key: Key) -> None:
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.Table.from_pylist([chat(CLEAN_TEXTS[0])] * 100), path)
    data = path.read_bytes()
    path.write_bytes(data[:4] + b"\0" * 64 + data[68:])
    result = scan_parquet(path, Matcher(index, key), ScanOptions())
    assert result.problems[0].kind == "parquet"
    assert not result.files[str(path)].complete


def test_missing_pyarrow_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def fake_import(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "pyarrow" or name.startswith("pyarrow."):
            raise ImportError("no pyarrow")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(JudgekitError, match=r"pip install judgekit-agents\[parquet\]") as err:
        arrow.findings_schema()
    assert err.value.exit_code == 2


def test_parquet_file_named_as_text(tmp_path: Path, index: ContaminationIndex, key: Key) -> None:
    path = tmp_path / "e.parquet"
    pq.write_table(pa.Table.from_pylist([chat("hello", OPENING), chat(CLEAN_TEXTS[0])]), path)
    result = scan_parquet(str(path), Matcher(index, key), ScanOptions())
    assert result.leaks["gs-031"].locations[0].row == 1
    assert result.files[str(path)].records == 2
