"""judgekit.api.inspect_logs: Inspect logs imported and scores written back, from Python."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from inspect_runs import INSPECT_EPOCHS, SAMPLES, InspectLogs
from judgekit.api.inspect_logs import import_inspect_logs, write_inspect_scores
from judgekit.errors import JudgekitError, ProblemsError
from judgekit.transcript import read_transcripts


def test_the_import_writes_transcripts_and_says_what_each_sample_kept(
    inspect_logs: InspectLogs, tmp_path: Path
) -> None:
    out = tmp_path / "t.jsonl"
    document = import_inspect_logs([inspect_logs.eval_log, inspect_logs.json_log], out)
    assert document.imported == 2 * len(SAMPLES) * INSPECT_EPOCHS
    assert document.renumbered == ["email-1", "email-2", "email-3"]
    assert document.exit_code == 0
    assert [w.what for w in document.written] == ["transcripts"]
    assert len(read_transcripts(out)) == document.imported
    lost = [s for s in document.samples if s.sample_id == "lost"]
    assert all("final_state_missing" in json.dumps(s.fidelity) for s in lost)
    assert all(s.unsupported_layers == [] for s in document.samples)


def test_no_log_given_is_an_error() -> None:
    with pytest.raises(JudgekitError, match="no Inspect log given"):
        import_inspect_logs([], "t.jsonl")


def test_transcripts_not_imported_from_inspect_are_refused_by_line(tmp_path: Path) -> None:
    transcripts = tmp_path / "t.jsonl"
    transcripts.write_text(
        json.dumps({"case_id": "c-1", "trial": 1, "messages": [{"role": "user", "content": "hi"}]}) + "\n"
    )
    results = tmp_path / "r.jsonl"
    results.write_text("")
    with pytest.raises(ProblemsError) as err:
        write_inspect_scores(results, transcripts, tmp_path / "scored")
    assert f"{transcripts}:1: metadata.inspect: not imported from an Inspect log" in str(err.value)
    assert not (tmp_path / "scored").exists()
