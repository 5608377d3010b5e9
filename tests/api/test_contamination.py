"""The contamination service: index the cases, scan exports, the same report as the command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contamination.conftest import CLEAN_TEXTS, DENVER, KEY_BYTES, OPENING, chat
from judgekit.api.contamination import index_cases, scan_exports
from judgekit.cli import main
from judgekit.contamination.report import render_json
from judgekit.contamination.scan import ScanOptions
from judgekit.errors import JudgekitError

CASES = {
    "a.yaml": f'id: gs-031\ninput: "{OPENING}"\n',
    "b.yaml": f'id: gs-044\ninput: "{DENVER}"\n',
}


@pytest.fixture
def indexed(tmp_path: Path) -> dict[str, Path]:
    golden = tmp_path / "golden"
    golden.mkdir()
    for name, text in CASES.items():
        (golden / name).write_text(text, encoding="utf-8")
    key = tmp_path / "key"
    key.write_bytes(KEY_BYTES)
    index = tmp_path / "golden.jkc"
    document = index_cases([golden], key_file=key, out=index)
    assert document.model_dump()["stats"]["cases"] == 2
    return {"key": key, "index": index, "tmp": tmp_path}


def _export(tmp: Path, name: str, *texts: str) -> Path:
    path = tmp / name
    path.write_text("".join(json.dumps(chat(t)) + "\n" for t in texts), encoding="utf-8")
    return path


def test_a_leaked_case_is_found_and_a_clean_export_is_clean(indexed: dict[str, Path]) -> None:
    leaked = _export(indexed["tmp"], "leaked.jsonl", CLEAN_TEXTS[0], f"please answer: {DENVER.upper()}")
    clean = _export(indexed["tmp"], "clean.jsonl", *CLEAN_TEXTS)
    report = scan_exports([leaked], index=indexed["index"], key_file=indexed["key"])
    assert (report.status, report.exit_code, [c.case_id for c in report.leaks]) == ("leaked", 1, ["gs-044"])
    report = scan_exports([clean], index=indexed["index"], key_file=indexed["key"])
    assert (report.status, report.exit_code, report.leaks) == ("clean", 0, [])


def test_the_command_prints_the_report_the_service_returns(
    indexed: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    leaked = _export(indexed["tmp"], "leaked.jsonl", f"{OPENING}")
    options = ScanOptions(threshold=0.5)
    report = scan_exports([leaked], index=indexed["index"], key_file=indexed["key"], options=options)
    argv = ["contamination", "scan", str(leaked), "--index", str(indexed["index"])]
    assert main([*argv, "--key-file", str(indexed["key"]), "--format", "json"]) == report.exit_code == 1
    assert json.loads(capsys.readouterr().out) == json.loads(render_json(report))


def test_a_split_size_of_zero_is_refused_naming_the_option(indexed: dict[str, Path]) -> None:
    export = _export(indexed["tmp"], "e.jsonl", *CLEAN_TEXTS)
    with pytest.raises(JudgekitError, match=r"split_mb \(--split-mb\) must be above 0 MiB \(got 0\)") as info:
        scan_exports([export], index=indexed["index"], key_file=indexed["key"], split_mb=0)
    assert info.value.exit_code == 2


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        ({"split_mb": float("inf")}, r"split_mb \(--split-mb\) must be above 0 MiB \(got inf\)"),
        ({"split_mb": float("nan")}, r"split_mb \(--split-mb\) must be above 0 MiB \(got nan\)"),
        ({"processes": -1}, r"processes \(--processes\) must be 0 or more \(got -1\)"),
    ],
)
def test_a_split_size_or_process_count_out_of_range_is_refused(
    indexed: dict[str, Path], plan: dict[str, float], message: str
) -> None:
    # an infinite split size used to escape as an OverflowError (int(inf)), a traceback instead of exit 2
    export = _export(indexed["tmp"], "e.jsonl", *CLEAN_TEXTS)
    with pytest.raises(JudgekitError, match=message) as info:
        scan_exports([export], index=indexed["index"], key_file=indexed["key"], **plan)  # type: ignore[arg-type]
    assert info.value.exit_code == 2


def test_new_key_writes_an_owner_only_key_and_never_overwrites_one(tmp_path: Path) -> None:
    import stat

    from judgekit.api.contamination import new_key
    from judgekit.contamination.index import load_key

    key = tmp_path / "contamination.key"
    document = new_key(key)
    text = key.read_text(encoding="ascii")
    assert len(text) == 65
    assert text.endswith("\n")
    assert int(text, 16) >= 0  # hex digits
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert document.key_fingerprint == load_key(key).fingerprint
    assert text.strip() not in document.model_dump_json()  # the document never carries the key
    with pytest.raises(JudgekitError, match=r"contamination.key: already exists; a key is never overwritten"):
        new_key(key)
    assert key.read_text(encoding="ascii") == text
