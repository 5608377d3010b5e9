"""The ``judgekit contamination`` commands: keygen, index, canary, scan and their exit codes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from contamination.conftest import CLEAN_TEXTS, DENVER, KEY_BYTES, OPENING, OTHER_KEY_BYTES, chat
from judgekit.cli import main
from judgekit.contamination.index import DEFAULT_SHINGLE_SIZE

CASE_A = f"""id: gs-031
input: "{OPENING}"
acceptance: Refunds exactly one of the two November payments to the original card and gives the posting
  window.
"""
CASE_B = f"""id: gs-044
input: "{DENVER}"
acceptance: Rebooks the passenger on the earliest flight with free seats and does not charge a change fee.
"""


@pytest.fixture
def setup(tmp_path: Path) -> dict[str, Path]:
    cases = tmp_path / "golden"
    cases.mkdir()
    (cases / "a.yaml").write_text(CASE_A, encoding="utf-8")
    (cases / "b.yaml").write_text(CASE_B, encoding="utf-8")
    key = tmp_path / "key"
    key.write_bytes(KEY_BYTES)
    other = tmp_path / "other-key"
    other.write_bytes(OTHER_KEY_BYTES)
    return {"cases": cases, "key": key, "other": other, "index": tmp_path / "golden.jkc", "tmp": tmp_path}


def _export(tmp: Path, name: str, *texts: str) -> Path:
    path = tmp / name
    path.write_text("".join(json.dumps(chat(t)) + "\n" for t in texts), encoding="utf-8")
    return path


def _index(p: dict[str, Path]) -> None:
    assert (
        main(
            ["contamination", "index", str(p["cases"]), "--key-file", str(p["key"]), "--out", str(p["index"])]
        )
        == 0
    )


def test_index_then_scan_exit_codes(setup: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _index(setup)
    out = capsys.readouterr().out
    assert "indexed 2 cases" in out
    assert "JUDGEKIT-CANARY-" in out
    clean = _export(setup["tmp"], "clean.jsonl", *CLEAN_TEXTS)
    leaked = _export(setup["tmp"], "leaked.jsonl", CLEAN_TEXTS[0], f"please answer: {DENVER.upper()}")
    base = ["contamination", "scan", "--index", str(setup["index"]), "--key-file", str(setup["key"])]
    assert main([*base, str(clean)]) == 0
    assert "CLEAN" in capsys.readouterr().out
    assert main([*base, str(clean), str(leaked), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "leaked"
    (leak,) = report["leaks"]
    assert leak["case_id"] == "gs-044"
    assert leak["first_locations"][0]["file"] == str(leaked)
    assert leak["first_locations"][0]["line"] == 2
    assert leak["first_locations"][0]["case_field"] == "input"


def test_scan_with_another_key_exits_2(setup: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _index(setup)
    export = _export(setup["tmp"], "e.jsonl", DENVER)
    code = main(
        [
            "contamination",
            "scan",
            str(export),
            "--index",
            str(setup["index"]),
            "--key-file",
            str(setup["other"]),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "does not verify with this key" in err
    assert "built with another key" in err
    assert "Traceback" not in err


def test_incomplete_scan_exits_2(setup: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _index(setup)
    bad = setup["tmp"] / "bad.jsonl.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage")
    out = setup["tmp"] / "report.md"
    argv = [
        "contamination",
        "scan",
        str(bad),
        "--index",
        str(setup["index"]),
        "--key-file",
        str(setup["key"]),
    ]
    assert main([*argv, "--out", str(out)]) == 2
    assert "INCOMPLETE" in out.read_text(encoding="utf-8")
    assert "decompression" in out.read_text(encoding="utf-8")


def test_canary_command_matches_the_index_and_is_found(
    setup: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _index(setup)
    capsys.readouterr()
    assert main(["contamination", "canary", "--key-file", str(setup["key"]), "--set-name", "golden"]) == 0
    canary = capsys.readouterr().out.strip()
    assert canary.startswith("JUDGEKIT-CANARY-")
    export = _export(setup["tmp"], "c.jsonl", "x", f"# {canary}\nid: gs-999")
    argv = [
        "contamination",
        "scan",
        str(export),
        "--index",
        str(setup["index"]),
        "--key-file",
        str(setup["key"]),
    ]
    assert main([*argv, "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["canaries"][0]["canary"] == canary
    assert report["canaries"][0]["first_locations"][0]["line"] == 2


def test_index_from_texts_jsonl(setup: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    texts = setup["tmp"] / "texts.jsonl"
    texts.write_text(
        json.dumps({"id": "t1", "texts": [OPENING, {"field": "answer", "text": DENVER}]}) + "\n",
        encoding="utf-8",
    )
    argv = [
        "contamination",
        "index",
        "--texts",
        str(texts),
        "--key-file",
        str(setup["key"]),
        "--out",
        str(setup["index"]),
    ]
    assert main(argv) == 0
    export = _export(setup["tmp"], "e.jsonl", DENVER)
    scan = [
        "contamination",
        "scan",
        str(export),
        "--index",
        str(setup["index"]),
        "--key-file",
        str(setup["key"]),
    ]
    assert main([*scan, "--format", "json"]) == 1
    out = capsys.readouterr().out
    report = json.loads(out[out.index("{") :])
    assert report["leaks"][0]["case_fields"] == {"answer": 1}


def test_index_refuses_an_invalid_case_set(
    setup: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    (setup["cases"] / "broken.yaml").write_text("id: x\nunknown_field: 1\n", encoding="utf-8")
    argv = [
        "contamination",
        "index",
        str(setup["cases"]),
        "--key-file",
        str(setup["key"]),
        "--out",
        str(setup["index"]),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "fix them first" in err
    assert not setup["index"].exists()


def test_keygen_writes_a_private_key_and_never_overwrites(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = tmp_path / "new.key"
    assert main(["contamination", "keygen", "--out", str(key)]) == 0
    assert len(key.read_text(encoding="utf-8").strip()) == 64
    if os.name == "posix":
        assert key.stat().st_mode & 0o077 == 0
    before = key.read_bytes()
    assert main(["contamination", "keygen", "--out", str(key)]) == 2
    assert "never overwritten" in capsys.readouterr().err
    assert key.read_bytes() == before


def test_bad_format_and_missing_index(setup: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    export = _export(setup["tmp"], "e.jsonl", "x")
    base = ["contamination", "scan", str(export), "--key-file", str(setup["key"])]
    assert main([*base, "--index", str(setup["tmp"] / "missing.jkc")]) == 2
    assert f"path '{setup['tmp'] / 'missing.jkc'}' does not exist" in capsys.readouterr().err
    _index(setup)
    assert main([*base, "--index", str(setup["index"]), "--format", "xml"]) == 2
    assert "error: --format must be md or json (got 'xml')" in capsys.readouterr().err


def test_scan_mixed_formats_with_two_processes(
    setup: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    import zstandard

    _index(setup)
    capsys.readouterr()
    tmp = setup["tmp"]
    pq.write_table(pa.Table.from_pylist([chat(CLEAN_TEXTS[0]), chat("q", OPENING)]), tmp / "a.parquet")
    body = "".join(json.dumps(chat(t)) + "\n" for t in [*CLEAN_TEXTS, DENVER])
    (tmp / "b.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(body.encode()))
    big = _export(tmp, "c.jsonl", *(CLEAN_TEXTS * 300), DENVER)
    argv = ["contamination", "scan", str(tmp / "a.parquet"), str(tmp / "b.jsonl.zst"), str(big)]
    argv += ["--index", str(setup["index"]), "--key-file", str(setup["key"]), "--format", "json", "-j", "2"]
    assert main([*argv, "--split-mb", "0.05"]) == 1
    report = json.loads(capsys.readouterr().out)
    found = {lc["case_id"]: lc for lc in report["leaks"]}
    assert found["gs-031"]["first_locations"][0]["row"] == 2
    denver = [(loc["file"], loc["line"]) for loc in found["gs-044"]["first_locations"]]
    assert denver == [(str(tmp / "b.jsonl.zst"), 5), (str(big), 1201)]
    assert all(f["complete"] for f in report["files"])


def test_index_cannot_write(setup: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    blocker = setup["tmp"] / "a-file"
    blocker.write_text("not a folder\n")
    out = blocker / "x.jkc"  # its folder is a file: no index can be written there
    argv = ["contamination", "index", str(setup["cases"]), "--key-file", str(setup["key"]), "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{blocker}: cannot create the folder for {out}" in err
    assert "give an output path in a folder that exists or can be created" in err
    assert blocker.read_text() == "not a folder\n"


def test_index_into_a_folder_not_made_yet_makes_it(setup: dict[str, Path]) -> None:
    out = setup["tmp"] / "no-such-dir" / "x.jkc"
    argv = ["contamination", "index", str(setup["cases"]), "--key-file", str(setup["key"]), "--out", str(out)]
    assert main(argv) == 0
    assert out.stat().st_size > 0


REFERENCE_REPLY = (
    "I have refunded the duplicate November payment of 412.18 to the card you paid with; under billing "
    "policy BIL-7 it posts within five business days, and I cannot promise it sooner."
)


def test_reference_transcripts_are_indexed_unless_turned_off(
    setup: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    cases = setup["cases"]
    (cases / "transcripts").mkdir()
    line = {
        "case_id": "gs-031",
        "trial": 1,
        "messages": [
            {"role": "system", "content": "You are a billing agent."},
            {"role": "user", "content": OPENING},
            {"role": "assistant", "content": REFERENCE_REPLY},
        ],
    }
    (cases / "transcripts" / "gs-031.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    (cases / "a.yaml").write_text(CASE_A + "reference_solution: transcripts/gs-031.jsonl\n", encoding="utf-8")
    export = _export(setup["tmp"], "e.jsonl", CLEAN_TEXTS[0], f"Agent said: {REFERENCE_REPLY}")
    scan = [
        "contamination",
        "scan",
        str(export),
        "--index",
        str(setup["index"]),
        "--key-file",
        str(setup["key"]),
    ]

    _index(setup)
    capsys.readouterr()
    assert main([*scan, "--format", "json"]) == 1
    (leak,) = json.loads(capsys.readouterr().out)["leaks"]
    assert leak["case_fields"] == {"reference_solution.messages.2.content": 1}

    argv = [
        "contamination",
        "index",
        str(cases),
        "--key-file",
        str(setup["key"]),
        "--out",
        str(setup["index"]),
    ]
    assert main([*argv, "--no-reference-transcripts"]) == 0
    assert main(scan) == 0


# ------------------------------------------------------------------------------------- --format json

AIRDESK = Path(__file__).parents[2] / "examples" / "airdesk"


def _document(out: str, kind: str) -> dict[str, object]:
    """Standard output parsed as the one JSON document of ``kind`` (nothing else may be printed)."""
    data = json.loads(out)
    assert (data["schema_version"], data["kind"]) == (1, kind)
    return data


def test_keygen_as_json_gives_the_fingerprint_never_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from judgekit.contamination.index import load_key

    key = tmp_path / "new.key"
    assert main(["contamination", "keygen", "--out", str(key), "--format", "json"]) == 0
    captured = capsys.readouterr()
    doc = _document(captured.out, "contamination_key")
    secret = key.read_text(encoding="utf-8").strip()
    assert secret not in captured.out + captured.err
    assert doc["path"] == str(key)
    assert doc["key_fingerprint"] == load_key(key).fingerprint
    assert doc["written"] == [{"path": str(key), "what": "contamination_key"}]


def test_index_and_canary_of_the_bundled_set_as_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from judgekit.caseset import load_case_set

    key = tmp_path / "key"
    key.write_bytes(KEY_BYTES)
    out = tmp_path / "airdesk.jkc"
    argv = ["contamination", "index", str(AIRDESK), "--key-file", str(key), "--out", str(out)]
    assert main([*argv, "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    doc = _document(captured.out, "contamination_index")
    assert doc["set_name"] == "airdesk"  # the manifest's name
    stats = doc["stats"]
    assert isinstance(stats, dict)
    assert stats["cases"] == len(load_case_set([AIRDESK]).cases)
    assert stats["shingle_entries"] > 0
    assert doc["shingle_size"] == DEFAULT_SHINGLE_SIZE == 7
    assert doc["problems"] == []
    assert doc["written"] == [{"path": str(out), "what": "contamination_index"}]
    canary_argv = ["contamination", "canary", "--key-file", str(key), "--set-name", "airdesk"]
    assert main([*canary_argv, "--format", "json"]) == 0
    canary = _document(capsys.readouterr().out, "canary")
    assert canary["set_name"] == "airdesk"
    assert canary["canary"] == doc["canary"]
    assert canary["key_fingerprint"] == doc["key_fingerprint"]
    assert main(canary_argv) == 0
    assert capsys.readouterr().out == f"{doc['canary']}\n"


def test_index_as_json_names_the_problems_of_an_invalid_case_set(
    setup: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    broken = setup["cases"] / "broken.yaml"
    broken.write_text("id: x\nunknown_field: 1\n", encoding="utf-8")
    argv = ["contamination", "index", str(setup["cases"]), "--key-file", str(setup["key"])]
    assert main([*argv, "--out", str(setup["index"]), "--format", "json"]) == 2
    captured = capsys.readouterr()
    assert captured.err == ""
    doc = _document(captured.out, "contamination_index")
    assert doc["written"] == []
    assert "fix them first (judgekit cases check)" in str(doc["error"])
    problems = doc["problems"]
    assert isinstance(problems, list)
    assert problems
    assert {p["file"] for p in problems} == {str(broken)}
    assert any(p["field"] == "unknown_field" for p in problems)
    assert not setup["index"].exists()
