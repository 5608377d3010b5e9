"""``judgekit judge fit-cascade`` and ``judgekit grade --cascade`` end to end, over a loopback judge."""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from judgekit.cli import main
from judges.server import JudgeServer, Reply, verdict_reply

CASE = """\
id: refund
version: 1
input: Where is my refund?
acceptance: The agent says when the refund arrives.
"""

RUBRIC = """\
id: cascade-test
version: '1'
criteria:
  - id: polite
    text: The agent is polite.
    critical: false
"""


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code or 0, out.out, out.err


def labels(path: Path) -> Path:
    """Stage ``small`` is right at confidence 1 and wrong at 2/3; stage ``large`` is right at confidence 1."""
    rows = ["item_id,criterion,case_id,rater,label,confidence"]
    for i in range(80):
        truth = "pass" if i % 2 else "fail"
        wrong = "fail" if truth == "pass" else "pass"
        item = f"c{i}-t1,acceptance,c{i}"
        rows += [f"{item},alice,{truth},", f"{item},bob,{truth},"]
        rows.append(f"{item},small,{truth},1.0" if i < 40 else f"{item},small,{wrong},0.6667")
        rows.append(f"{item},large,{truth},1.0")
    path.write_text("\n".join(rows) + "\n")
    return path


def fit(capsys: pytest.CaptureFixture[str], tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    return run(
        capsys,
        "judge",
        "fit-cascade",
        str(labels(tmp_path / "labels.csv")),
        "--stage",
        "small=openai/small-judge",
        "--stage",
        "large=openai/large-judge",
        "--experts",
        "alice,bob",
        "--out",
        str(tmp_path / "cascade.json"),
        *extra,
    )


def test_fit_cascade_writes_the_thresholds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = fit(capsys, tmp_path)
    assert code == 0, err
    data = json.loads((tmp_path / "cascade.json").read_text())
    assert data["schema_version"] == "judgekit.cascade/1"
    small, large = data["stages"]
    assert (small["name"], small["model"], small["threshold"], small["kept"]) == (
        "small",
        "openai/small-judge",
        1.0,
        40,
    )
    assert (large["threshold"], large["reached"], large["kept"]) == (1.0, 40, 40)
    assert small["delta"] == pytest.approx(0.025)
    assert data["human_share"] == 0.0
    assert "small (openai/small-judge): threshold 1; keeps 40/80" in out


def test_fit_cascade_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = fit(capsys, tmp_path, "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["kind"] == "cascade"
    assert [s["threshold"] for s in doc["cascade"]["stages"]] == [1.0, 1.0]
    assert doc["out"].endswith("cascade.json")


def test_fit_cascade_needs_rater_equals_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(
        capsys, "judge", "fit-cascade", str(labels(tmp_path / "l.csv")), "--stage", "small", "--out", "c.json"
    )
    assert code == 2
    assert "--stage 'small': give RATER=MODEL" in err


def test_fit_cascade_unknown_stage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = labels(tmp_path / "l.csv")
    code, _, err = run(
        capsys, "judge", "fit-cascade", str(table), "--stage", "tiny=openai/x", "--out", "c.json"
    )
    assert code == 2
    assert f"{table}: stage rater(s) tiny not in the label table" in err


def test_fit_cascade_stage_without_confidence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "l.csv"
    table.write_text(
        "item_id,criterion,case_id,rater,label,confidence\n"
        + "".join(f"i{i},g,c{i},alice,pass,\ni{i},g,c{i},small,pass,\n" for i in range(5))
    )
    code, _, err = run(
        capsys, "judge", "fit-cascade", str(table), "--stage", "small=openai/x", "--out", "c.json"
    )
    assert code == 2
    assert "the rows of stage small carry no confidence; add a confidence column" in err


# --------------------------------------------------------------------------- grade --cascade


def _script() -> Any:
    """small: unanimous on polite, 2 of 3 on acceptance; large: unanimous, except 2 of 3 on a HARD reply."""
    seen: dict[tuple[str, str], int] = defaultdict(int)
    lock = threading.Lock()

    def script(body: dict[str, Any], _i: int) -> Reply:
        text = json.dumps(body["messages"])
        criterion = "acceptance" if "refund arrives" in text.split("criterion", 1)[-1] else "polite"
        split = (body["model"] == "small-judge" and criterion == "acceptance") or (
            body["model"] == "large-judge" and "HARD" in text
        )
        with lock:
            seen[body["model"], text] += 1
            n = seen[body["model"], text]
        return Reply(content=verdict_reply("fail" if split and n == 3 else "pass"))

    return script


def _grade(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, server: JudgeServer, *extra: str
) -> tuple[int, str, str]:
    (tmp_path / "golden" / "cases").mkdir(parents=True)
    (tmp_path / "golden" / "cases" / "refund.yaml").write_text(CASE)
    (tmp_path / "rubric.yaml").write_text(RUBRIC)
    (tmp_path / "run.yaml").write_text(json.dumps({"judge": {"api_base": server.api_base, "samples": 3}}))
    (tmp_path / "records").mkdir()
    rows = [
        {"case_id": "refund", "trial": t, "messages": [{"role": "user", "content": "Where is my refund?"}, m]}
        for t, m in (
            (1, {"role": "assistant", "content": "It arrives Friday."}),
            (2, {"role": "assistant", "content": "It arrives HARD Friday."}),
        )
    ]
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return _regrade(capsys, tmp_path, *extra)


def _regrade(capsys: pytest.CaptureFixture[str], tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    """``judgekit grade`` on the files :func:`_grade` wrote."""
    return run(
        capsys,
        "grade",
        "--cases",
        str(tmp_path / "golden"),
        "--transcripts",
        str(tmp_path / "t.jsonl"),
        "--out",
        str(tmp_path / "r.jsonl"),
        "--judge-model",
        "openai/small-judge",
        "--config",
        str(tmp_path / "run.yaml"),
        "--rubric",
        str(tmp_path / "rubric.yaml"),
        "--records",
        str(tmp_path / "records"),
        "--no-progress",
        *extra,
    )


def _check(line: dict[str, Any], check_id: str) -> dict[str, Any]:
    return next(c for c in line["checks"] if c["check_id"] == check_id)


def _route(check: dict[str, Any]) -> dict[str, Any]:
    (data,) = [
        e["data"]["cascade"]
        for e in check["evidence"]
        if isinstance(e["data"], dict) and "cascade" in e["data"]
    ]
    return data


def test_grade_routes_each_criterion_through_the_cascade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-cascade-test")
    assert fit(capsys, tmp_path)[0] == 0
    server = serve(_script())
    code, _, err = _grade(capsys, tmp_path, server, "--cascade", str(tmp_path / "cascade.json"))
    assert code in (0, 1), err
    lines = {json.loads(x)["trial"]: json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()}
    # polite: the small judge is unanimous (confidence 1 >= 1), it decides
    polite = _check(lines[1], "criterion:polite")
    assert polite["verdict"] == "pass"
    assert _route(polite) == {
        "tried": [{"stage": "small", "confidence": 1.0, "threshold": 1.0, "kept": True}],
        "decided_by": "small",
    }
    # acceptance: small says pass 2 of 3 (below its threshold), large is unanimous and decides
    easy = _check(lines[1], "criterion:case.acceptance")
    assert easy["verdict"] == "pass"
    route = _route(easy)
    assert route["decided_by"] == "large"
    assert [(s["stage"], s["kept"]) for s in route["tried"]] == [("small", False), ("large", True)]
    assert route["tried"][0]["confidence"] == pytest.approx(2 / 3)
    # a HARD reply: large splits too, so a human reviews it
    hard = _check(lines[2], "criterion:case.acceptance")
    assert hard["verdict"] == "insufficient_information"
    assert hard["reason"] == (
        "escalated to a human reviewer (confidence 0.666667 below threshold 1 of stage large)"
    )
    assert _route(hard)["decided_by"] == "human"
    # small: 3 samples x 2 criteria x 2 trials; large: 3 samples x the 2 acceptance checks it was sent
    models = [r["model"] for r in server.requests]
    assert models.count("small-judge") == 12
    assert models.count("large-judge") == 6


def test_grade_cascade_first_stage_must_be_the_judge_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-cascade-test")
    assert fit(capsys, tmp_path)[0] == 0
    cascade = tmp_path / "cascade.json"
    data = json.loads(cascade.read_text())
    data["stages"][0]["model"] = "openai/other"
    cascade.write_text(json.dumps(data))
    code, _, err = _grade(capsys, tmp_path, serve(_script()), "--cascade", str(cascade))
    assert code == 2
    assert (
        "the cascade's first stage small judges with openai/other, but the judge model is openai/small-judge"
        in err
    )


def test_grade_cascade_file_that_is_not_a_cascade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-cascade-test")
    bad = tmp_path / "cascade.json"
    bad.write_text(json.dumps({"target": 0.9}))
    code, _, err = _grade(capsys, tmp_path, serve(_script()), "--cascade", str(bad))
    assert code == 2
    assert f"{bad}: delta: not a cascade file: Field required" in err


def test_grade_cascade_stage_without_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-cascade-test")
    assert fit(capsys, tmp_path)[0] == 0
    cascade = tmp_path / "cascade.json"
    data = json.loads(cascade.read_text())
    data["stages"][1]["model"] = None
    cascade.write_text(json.dumps(data))
    code, _, err = _grade(capsys, tmp_path, serve(_script()), "--cascade", str(cascade))
    assert code == 2
    assert "stage(s) large name no model" in err


def test_grade_cascade_needs_a_judge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "golden" / "cases").mkdir(parents=True)
    (tmp_path / "golden" / "cases" / "refund.yaml").write_text(CASE)
    (tmp_path / "t.jsonl").write_text("")
    (tmp_path / "c.json").write_text("{}")
    code, _, err = run(
        capsys,
        "grade",
        "--cases",
        str(tmp_path / "golden"),
        "--transcripts",
        str(tmp_path / "t.jsonl"),
        "--out",
        str(tmp_path / "r.jsonl"),
        "--cascade",
        str(tmp_path / "c.json"),
    )
    assert code == 2
    assert "--cascade routes the judge layer's criteria: give --judge-model too" in err


# --------------------------------------------------------------------------- the cascade in the fingerprint


def _judge_fingerprint(path: Path) -> dict[str, Any]:
    (fp,) = {json.dumps(json.loads(x)["judge_fingerprint"]) for x in path.read_text().splitlines()}
    return dict(json.loads(fp))


def test_resume_refuses_a_run_graded_through_another_cascade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A changed threshold changes the cascade's fingerprint, so --resume does not mix the two runs."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-cascade-test")
    assert fit(capsys, tmp_path)[0] == 0
    server = serve(_script())
    cascade = tmp_path / "cascade.json"
    code, _, err = _grade(capsys, tmp_path, server, "--cascade", str(cascade))
    assert code in (0, 1), err
    first = _judge_fingerprint(tmp_path / "r.jsonl")
    data = json.loads(cascade.read_text())
    data["stages"][1]["threshold"] = 0.5
    cascade.write_text(json.dumps(data))
    calls = len(server.requests)
    code, _, err = _regrade(capsys, tmp_path, "--cascade", str(cascade), "--resume")
    assert code == 2
    assert f"cannot resume {tmp_path / 'r.jsonl'}: it was graded differently from this run" in err
    assert f"graded by another judge fingerprint (judge {first['hex'][:12]} vs judge " in err
    assert len(server.requests) == calls  # nothing was judged again


def test_the_cascade_fingerprint_names_stages_and_thresholds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fingerprint graded under is the cascade's (each stage's own fingerprint beside it in the note);
    without --cascade the same judge keeps its single-judge fingerprint."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-cascade-test")
    assert fit(capsys, tmp_path)[0] == 0
    server = serve(_script())
    code, _, err = _grade(capsys, tmp_path, server, "--cascade", str(tmp_path / "cascade.json"))
    assert code in (0, 1), err
    cascade_fp = _judge_fingerprint(tmp_path / "r.jsonl")
    assert f"judge {cascade_fp['hex'][:12]}: untrusted" in err
    stage_fps = [p["fingerprint"] for p in cascade_fp["spec"]["parts"]]
    assert [p["threshold"] for p in cascade_fp["spec"]["parts"]] == [1.0, 1.0]
    assert cascade_fp["spec"]["rule"] == {"confidence": "sample_agreement", "delta": 0.05, "target": 0.9}
    line = json.loads((tmp_path / "r.jsonl").read_text().splitlines()[0])
    notes = [e["data"] for e in _check(line, "criterion:case.acceptance")["evidence"] if e["kind"] == "note"]
    judge_note = next(n for n in notes if "fingerprint" in n)
    assert judge_note["fingerprint"] == cascade_fp["hex"]
    assert judge_note["judge_fingerprint"] == stage_fps[1]  # decided by the large stage
    (tmp_path / "r.jsonl").unlink()
    for made in ("golden", "records"):
        (tmp_path / made).rename(tmp_path / f"{made}-1")
    code, _, err = _grade(capsys, tmp_path, server)
    assert code in (0, 1), err
    alone = _judge_fingerprint(tmp_path / "r.jsonl")
    assert alone["spec"]["kind"] == "rubric"
    assert alone["hex"] == stage_fps[0] != cascade_fp["hex"]
