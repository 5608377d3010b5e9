"""``.pre-commit-hooks.yaml``: every hook runs a real judgekit command, and does its job on the example."""

from __future__ import annotations

import shlex
import subprocess
import textwrap
from pathlib import Path

import pytest
import yaml

from judgekit.cli import main

REPO = Path(__file__).resolve().parents[1]
AIRDESK = REPO / "examples" / "airdesk"
HOOKS = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
BY_ID = {h["id"]: h for h in HOOKS}


def _entry(hook_id: str) -> list[str]:
    words = shlex.split(BY_ID[hook_id]["entry"])
    assert words[0] == "judgekit"
    return words[1:]


def test_the_three_hooks_are_declared_with_pre_commit_fields():
    assert sorted(BY_ID) == ["judgekit-contamination-scan", "judgekit-golden-diff", "judgekit-validate"]
    for hook in HOOKS:
        assert set(hook) >= {"id", "name", "entry", "language", "files", "pass_filenames"}
        assert hook["language"] in ("python", "system")


@pytest.mark.parametrize("hook_id", sorted(BY_ID))
def test_every_entry_is_a_judgekit_command(hook_id, capsys):
    assert main([*_entry(hook_id), "--help"]) == 0
    assert "Usage: judgekit" in capsys.readouterr().out


def test_validate_hook_on_a_valid_and_an_invalid_set(tmp_path, capsys):
    assert main([*_entry("judgekit-validate"), str(AIRDESK)]) == 0
    bad = tmp_path / "set"
    bad.mkdir()
    (bad / "a.yaml").write_text("id: A\ninput: hi\nunknown_field: 1\n")
    assert main([*_entry("judgekit-validate"), str(bad)]) == 1
    shown = capsys.readouterr()
    assert "a.yaml:3: unknown_field" in shown.out + shown.err


def test_golden_diff_hook_flags_a_contract_change_without_a_version_bump(tmp_path, capsys):
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    case = tmp_path / "cases" / "a.yaml"
    case.parent.mkdir()
    case.write_text("id: A\nversion: 1\ninput: hi\nacceptance: Says hello.\n")
    git("init", "-q")
    git("-c", "user.email=t@example.com", "-c", "user.name=t", "add", ".")
    git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "one")
    assert main([*_entry("judgekit-golden-diff"), "HEAD", "--set", str(tmp_path)]) == 0
    case.write_text("id: A\nversion: 1\ninput: hi\nacceptance: Says goodbye.\n")
    assert main([*_entry("judgekit-golden-diff"), "HEAD", "--set", str(tmp_path)]) == 1
    shown = capsys.readouterr()
    assert "A" in shown.out + shown.err


def test_contamination_scan_hook_passes_a_clean_export_and_fails_a_leak(tmp_path, capsys):
    key, index = tmp_path / "key", tmp_path / "golden.idx"
    assert main(["contamination", "keygen", "--out", str(key)]) == 0
    assert main(["contamination", "index", str(AIRDESK), "--key-file", str(key), "--out", str(index)]) == 0
    clean = tmp_path / "clean.jsonl"
    clean.write_text('{"messages": [{"role": "user", "content": "What is the capital of France?"}]}\n')
    args = [*_entry("judgekit-contamination-scan"), "--index", str(index), "--key-file", str(key)]
    assert main([*args, str(clean)]) == 0
    reference = (AIRDESK / "transcripts" / "gs-double-charge" / "reference.jsonl").read_text()
    leaked = tmp_path / "leaked.jsonl"
    leaked.write_text(reference.splitlines()[0] + "\n")
    assert main([*args, str(leaked)]) == 1
    capsys.readouterr()


def test_the_docs_example_config_uses_these_hook_ids():
    text = (REPO / "docs" / "how-to" / "pre-commit.md").read_text(encoding="utf-8")
    start = text.index("```yaml") + len("```yaml")
    config = yaml.safe_load(textwrap.dedent(text[start : text.index("```", start)]))
    ids = {h["id"] for repo in config["repos"] for h in repo["hooks"]}
    assert ids == set(BY_ID)
