"""The state provider: state files resolved against the golden set's root or the transcripts' folder."""

from __future__ import annotations

import json
from pathlib import Path

from judgekit.state.provider import StateProvider

WORLD = {"orders": {"O-1": {"status": "paid"}}}


def test_folders_named_as_text_resolve_state_files(tmp_path: Path) -> None:
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "world.json").write_text(json.dumps(WORLD))
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "final.json").write_text(json.dumps(WORLD))
    provider = StateProvider(str(tmp_path), transcript_dir=str(tmp_path / "runs"))
    assert (provider.root, provider.transcript_dir) == (tmp_path, tmp_path / "runs")
    fixture = provider.load("fixtures/world.json", str(tmp_path), "fixture")
    assert not isinstance(fixture, str), fixture
    other = provider.for_transcripts(str(tmp_path / "runs"))
    assert other.transcript_dir == tmp_path / "runs"
    final = other.load("final.json", str(tmp_path / "runs"), "final state")
    assert not isinstance(final, str), final
    assert final.digest() == fixture.digest()
    missing = provider.load("nope.json", str(tmp_path), "fixture")
    assert isinstance(missing, str)
    assert "fixture cannot be loaded" in missing
