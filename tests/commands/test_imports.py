"""The import commands end to end: ``import anthropic`` feeds ``grade``; each import prints JSON if asked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judgekit.cli import main
from judgekit.results import read_results

REPO = Path(__file__).resolve().parents[2]
AIRDESK = REPO / "examples" / "airdesk"
RUN = AIRDESK / "runs" / "agent-v2.jsonl"

pytestmark = pytest.mark.skipif(not RUN.is_file(), reason="airdesk example not present")


def _run(capsys: pytest.CaptureFixture[str], *args: Any) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _airdesk_trial(case_id: str) -> dict[str, Any]:
    """The bundled run's first trial of ``case_id``, its state paths made absolute."""
    for raw in RUN.read_text(encoding="utf-8").splitlines():
        data = json.loads(raw)
        if data["case_id"] == case_id and data["trial"] == 1:
            for key in ("initial_state", "final_state"):
                if isinstance(data.get(key), str):
                    data[key] = str((RUN.parent / data[key]).resolve())
            return data
    raise AssertionError(f"{case_id} is not in {RUN}")


def _as_anthropic(trial: dict[str, Any]) -> dict[str, Any]:
    """The same conversation as an Anthropic messages line: tool_use and tool_result blocks."""
    system = next(m["content"] for m in trial["messages"] if m["role"] == "system")
    messages: list[dict[str, Any]] = []
    for m in trial["messages"]:
        if m["role"] == "assistant":
            blocks: list[dict[str, Any]] = (
                [{"type": "text", "text": m["content"]}] if m.get("content") else []
            )
            for call in m.get("tool_calls") or []:
                arguments = call["function"]["arguments"]
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call["id"],
                        "name": call["function"]["name"],
                        "input": json.loads(arguments) if isinstance(arguments, str) else arguments,
                    }
                )
            messages.append({"role": "assistant", "content": blocks})
        elif m["role"] == "tool":
            result = {"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": m["content"]}
            if messages[-1]["role"] == "user" and isinstance(messages[-1]["content"], list):
                messages[-1]["content"].append(result)
            else:
                messages.append({"role": "user", "content": [result]})
        elif m["role"] == "user":
            messages.append({"role": "user", "content": m["content"]})
    return {
        "metadata": {"case_id": trial["case_id"], **trial["metadata"]},
        "model": trial["run"]["agent_model"],
        "system": [{"type": "text", "text": system}],
        "tools": [{"name": "lookup_booking", "input_schema": {"type": "object"}}],
        "messages": messages,
        "initial_state": trial["initial_state"],
        "final_state": trial["final_state"],
        "ended_by": trial["ended_by"],
    }


def _verdicts(path: Path) -> list[tuple[str, int, str, list[tuple[str, str]]]]:
    return [
        (line.case.id, line.trial, line.verdict.value, [(c.check_id, c.verdict.value) for c in line.checks])
        for line in read_results(path).lines
    ]


def test_import_anthropic_then_grade_gives_the_verdicts_of_the_original(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = _airdesk_trial("gs-double-charge")
    assert any(m.get("tool_calls") for m in original["messages"]), "the trial should exercise tool calls"
    source = tmp_path / "claude.jsonl"
    source.write_text(json.dumps(_as_anthropic(original)) + "\n", encoding="utf-8")
    out = tmp_path / "claude.transcripts.jsonl"
    code, stdout, err = _run(capsys, "import", "anthropic", source, "--out", out)
    assert code == 0, err
    assert stdout == ""
    assert err == f"imported 1 Anthropic messages trial(s) -> {out}\n"
    (imported,) = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert (imported["case_id"], imported["trial"]) == ("gs-double-charge", 1)
    assert imported["run"]["agent_model"] == original["run"]["agent_model"]
    assert imported["run"]["tool_definitions_hash"].startswith("sha256:")
    # grade accepts the imported file, and grades it as it grades the original conversation
    code, stdout, err = _run(
        capsys,
        "grade",
        "--cases",
        AIRDESK,
        "--transcripts",
        out,
        "--out",
        tmp_path / "r.jsonl",
        "--no-progress",
    )
    assert code == 0, err
    assert "graded 1 trial(s)" in stdout
    reference = tmp_path / "original.jsonl"
    reference.write_text(json.dumps(original) + "\n", encoding="utf-8")
    code, _, err = _run(
        capsys,
        "grade",
        "--cases",
        AIRDESK,
        "--transcripts",
        reference,
        "--out",
        tmp_path / "o.jsonl",
        "--no-progress",
    )
    assert code == 0, err
    got, expected = _verdicts(tmp_path / "r.jsonl"), _verdicts(tmp_path / "o.jsonl")
    assert got == expected
    assert got[0][2] != "error", got


# --------------------------------------------------------------------------- --format json


def _tau_bench(tmp: Path) -> Path:
    episode = {
        "task_id": 7,
        "trial": 0,
        "reward": 1.0,
        "info": {},
        "traj": [{"role": "system", "content": "p"}, {"role": "user", "content": "hi"}],
    }
    path = tmp / "raw.json"
    path.write_text(json.dumps([episode, {**episode, "trial": 1, "reward": 0.0}, {"task_id": 8}]))
    return path


def _openai(tmp: Path) -> Path:
    path = tmp / "chat.jsonl"
    rows = [
        {"messages": [{"role": "user", "content": "x"}], "case_id": "c1"},
        {"messages": [{"role": "user", "content": "y"}], "case_id": "c2", "metadata": {"reward": 1}},
        {"messages": [{"role": "user", "content": "z"}], "case_id": "c1"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _anthropic(tmp: Path) -> Path:
    path = tmp / "claude.jsonl"
    rows = [
        {"case_id": "c1", "system": "s", "messages": [{"role": "user", "content": "x"}]},
        {"metadata": {"case_id": "c1"}, "messages": [{"role": "bot", "content": "x"}]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "{broken\n")
    return path


CASES = {
    "tau-bench": (
        _tau_bench,
        2,
        {"source_format": "tau-bench", "transcripts_written": 2, "cases": 1},
        [(3, "reward")],
    ),
    "openai": (_openai, 0, {"source_format": "openai-chat", "transcripts_written": 3, "cases": 2}, []),
    "anthropic": (
        _anthropic,
        2,
        {"source_format": "anthropic-messages", "transcripts_written": 1, "cases": 1},
        [(2, ""), (3, "")],
    ),
}


@pytest.mark.parametrize("command", sorted(CASES))
def test_each_import_prints_one_import_document_with_json(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write, exit_code, counts, problems = CASES[command]
    source = write(tmp_path)
    out, rewards = tmp_path / "t.jsonl", tmp_path / "rewards.jsonl"
    args = ["import", command, source, "--out", out, "--rewards-out", rewards, "--run-id", "r1"]
    code, stdout, err = _run(capsys, *args, "--format", "json")
    assert code == exit_code, err
    assert err == ""  # problems are fields of the document, not warnings
    document = json.loads(stdout)  # the whole of standard output is the document
    assert list(document)[:2] == ["schema_version", "kind"]
    assert document["schema_version"] == 1
    assert document["kind"] == "import"
    assert document["source"] == str(source)
    assert document["out"] == str(out)
    assert {k: document[k] for k in counts} == counts
    assert document["rewards_file"] == str(rewards)
    assert document["rewards_run_id"] == "r1"
    assert [(p["line"], p["field"]) for p in document["problems"]] == problems
    for problem in document["problems"]:
        assert problem["file"] == str(source)
        assert problem["message"]
    # the files are the ones text mode writes
    assert len(out.read_text().splitlines()) == counts["transcripts_written"]
    assert {line.run_id for line in read_results(rewards).lines} == {"r1"}
    text_out = tmp_path / "text.jsonl"
    code, stdout, err = _run(capsys, "import", command, source, "--out", text_out)
    assert code == exit_code
    assert stdout == ""
    assert "trial(s) ->" in err
    assert text_out.read_text() == out.read_text()


def test_import_json_without_rewards_says_none_were_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, stdout, _ = _run(
        capsys, "import", "anthropic", _anthropic(tmp_path), "--out", tmp_path / "t.jsonl", "--format", "json"
    )
    assert code == 2  # lines left out: an input error
    document = json.loads(stdout)
    assert (document["rewards_file"], document["rewards_run_id"]) == (None, None)
    messages = [p["message"] for p in document["problems"]]
    assert "found role 'bot'" in messages[0]
    assert "malformed JSON" in messages[1]


@pytest.mark.parametrize("command", sorted(CASES))
def test_an_unknown_format_is_a_usage_error_before_anything_is_written(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "t.jsonl"
    code, stdout, err = _run(
        capsys, "import", command, CASES[command][0](tmp_path), "--out", out, "--format", "yaml"
    )
    assert code == 2
    assert stdout == ""
    assert "--format must be text or json (got 'yaml')" in err
    assert not out.exists()
