"""Judge cost that adds up: per judgment, per result line and per report, over real loopback HTTP."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from judgekit.graders.rubric import JudgmentCost, RubricGrader, _total_cost
from judgekit.judges.cache import CacheMode, Cassette
from judgekit.judges.client import ClientSettings, JudgeClient, JudgeParams
from judgekit.judges.rubric import Criterion, Rubric
from judgekit.transcript import Transcript
from judgekit.verdict import CheckResult
from judges.server import JudgeServer, Reply, verdict_reply

RUBRIC = Rubric(
    id="cost-rubric",
    version="1",
    criteria=(
        Criterion(id="honest", text="Never claim a failed update succeeded."),
        Criterion(id="polite", text="The agent is polite."),
    ),
)
TRANSCRIPT = Transcript.model_validate(
    {
        "case_id": "c1",
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
    }
)
UNPRICED_REASON = (
    "litellm has no price for model openai/cost-judge; set judge.input_cost_per_token and "
    "judge.output_cost_per_token (US dollars per token) in the run or project configuration"
)
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "airdesk"


@pytest.fixture(params=["auto", "litellm"], ids=["lean", "litellm"])
def transport(request: pytest.FixtureRequest) -> str:
    """Each cost test runs on both judge transports (judgekit's lean HTTP client and litellm)."""
    return str(request.param)


def _reply(body: dict[str, Any], i: int) -> Reply:
    return Reply(content=verdict_reply("pass"), prompt_tokens=1000, completion_tokens=50)


def _grader(server: JudgeServer, transport: str, *, price: bool, samples: int = 1, **kw: Any) -> RubricGrader:
    prices = {"input_cost_per_token": 2e-6, "output_cost_per_token": 1e-5} if price else {}
    client = JudgeClient(
        JudgeParams(model="openai/cost-judge", samples=samples),
        ClientSettings(api_base=server.api_base, max_retries=0, transport=transport, **prices),
        api_key="sk-cost",
        **kw,
    )
    return RubricGrader(RUBRIC, client)


def _note_cost(check: CheckResult) -> dict[str, Any]:
    (note,) = [
        e for e in check.evidence if e.kind == "note" and isinstance(e.data, dict) and "fingerprint" in e.data
    ]
    assert isinstance(note.data, dict)
    cost = note.data["cost"]
    assert isinstance(cost, dict)
    return cost


def test_a_priced_judge_costs_tokens_times_price_per_judgment_and_per_trial(
    transport: str, serve: Any
) -> None:
    g = _grader(serve(_reply), transport, price=True, samples=3)
    checks, total = asyncio.run(g.assess(None, TRANSCRIPT))
    per_judgment = 3 * (1000 * 2e-6 + 50 * 1e-5)  # three samples of 1000 in, 50 out
    for check in checks:
        cost = _note_cost(check)
        assert cost["calls"] == 3
        assert cost["prompt_tokens"] == 3000
        assert cost["completion_tokens"] == 150
        assert cost["usd"] == pytest.approx(per_judgment)
        assert cost["unknown_reason"] is None
    assert total.usd == pytest.approx(2 * per_judgment)
    assert total.unknown_reason is None


def test_an_unpriced_judge_is_unknown_with_the_reason_never_zero(transport: str, serve: Any) -> None:
    g = _grader(serve(_reply), transport, price=False)
    checks, total = asyncio.run(g.assess(None, TRANSCRIPT))
    for check in checks:
        cost = _note_cost(check)
        assert cost["usd"] is None
        assert cost["unknown_reason"] == UNPRICED_REASON
        assert cost["prompt_tokens"] == 1000
        assert cost["completion_tokens"] == 50
    assert total.usd is None
    assert total.unknown_reason == UNPRICED_REASON


def test_a_sum_with_one_unknown_part_is_unknown() -> None:
    known = JudgmentCost(calls=1, prompt_tokens=10, completion_tokens=2, usd=0.5)
    unknown = JudgmentCost(calls=1, prompt_tokens=5, completion_tokens=1, usd=None, unknown_reason="why")
    total = _total_cost([known, unknown, known])
    assert total.usd is None
    assert total.unknown_reason == "why"
    assert (total.calls, total.prompt_tokens, total.completion_tokens) == (3, 25, 5)
    assert _total_cost([known, known]).usd == 1.0
    assert _total_cost([]).usd == 0.0


def test_a_replayed_judgment_costs_nothing_now_and_keeps_its_tokens(
    transport: str, serve: Any, tmp_path: Path
) -> None:
    server = serve(_reply)
    path = tmp_path / "c.jsonl"
    asyncio.run(
        _grader(server, transport, price=True, cassette=Cassette(path), mode=CacheMode.RECORD).assess(
            None, TRANSCRIPT
        )
    )
    calls = server.calls
    checks, total = asyncio.run(
        _grader(server, transport, price=True, cassette=Cassette(path), mode=CacheMode.REPLAY).assess(
            None, TRANSCRIPT
        )
    )
    assert server.calls == calls
    cost = _note_cost(checks[0])
    assert cost["usd"] == 0.0
    assert cost["replayed"] == 1
    assert cost["prompt_tokens"] == 1000
    assert total.usd == 0.0
    assert total.replayed == 2


def _grade_and_report(
    tmp_path: Path,
    server: JudgeServer,
    model: str,
    transport: str,
    prices: dict[str, float] | None = None,
) -> tuple[list[dict[str, Any]], str, Any]:
    from judgekit.cli import main

    transcripts = tmp_path / "t.jsonl"
    transcripts.write_text(
        "".join(
            (EXAMPLES / "transcripts" / c / "reference.jsonl").read_text()
            for c in ("gs-double-charge", "hv-add-bag")
        )
    )
    (tmp_path / "run.yaml").write_text(
        json.dumps({"judge": {"api_base": server.api_base, "transport": transport, **(prices or {})}})
    )
    out = tmp_path / "r.jsonl"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("OPENAI_API_KEY", "sk-cost-cli")
        args = [
            "grade",
            "--cases",
            str(EXAMPLES / "cases"),
            "--transcripts",
            str(transcripts),
            "--out",
            str(out),
        ]
        main([*args, "--judge-model", model, "--config", str(tmp_path / "run.yaml"), "--no-progress"])
    lines = [json.loads(t) for t in out.read_text().splitlines()]
    md, js = tmp_path / "r.md", tmp_path / "r.json"
    main(["report", str(out), "-o", str(md)])
    main(["report", str(out), "--format", "json", "-o", str(js)])
    main(["report", str(out), "--format", "html", "-o", str(tmp_path / "r.html")])
    return lines, md.read_text(), json.loads(js.read_text())


def test_grade_and_report_total_a_litellm_priced_judge(transport: str, serve: Any, tmp_path: Path) -> None:
    import litellm

    info = litellm.model_cost["gpt-4o-mini"]
    each = 1000 * info["input_cost_per_token"] + 50 * info["output_cost_per_token"]
    lines, md, report = _grade_and_report(tmp_path, serve(_reply), "openai/gpt-4o-mini", transport)
    judged = 0
    for line in lines:
        n = sum(1 for c in line["checks"] if c["layer"] == "rubric" and c["verdict"] != "not_evaluated")
        judged += n
        assert line["cost_usd"] == pytest.approx(n * each)
        assert line["cost_unknown_reason"] is None
    run = report["cost"]["run"]
    assert run["judgments"] == judged
    assert run["unpriced"] == 0
    assert run["usd"] == pytest.approx(judged * each)
    assert report["run"]["cost_usd"] == pytest.approx(judged * each)
    assert f"- Judge cost: ${judged * each:.6f}" in md
    assert f"| total | {judged} | {judged * 1000} | {judged * 50} | ${judged * each:.6f} |" in md


def test_prompt_cache_reads_reach_the_line_the_cassette_and_the_report(
    transport: str, serve: Any, tmp_path: Path
) -> None:
    """Tokens a provider read from its prompt cache: in each judgment's cost, priced at the cached rate,
    summed per trial, run, case and criterion, shown by the report, and kept by a cassette replay."""
    import litellm

    info = litellm.model_cost["gpt-4o-mini"]
    each = 232 * info["input_cost_per_token"] + 768 * info["cache_read_input_token_cost"]
    each += 50 * info["output_cost_per_token"]

    def cached(body: dict[str, Any], i: int) -> Reply:
        return Reply(
            content=verdict_reply("pass"), prompt_tokens=1000, completion_tokens=50, cached_tokens=768
        )

    lines, md, report = _grade_and_report(tmp_path, serve(cached), "openai/gpt-4o-mini", transport)
    judged = 0
    for line in lines:
        rubric = [c for c in line["checks"] if c["layer"] == "rubric" and c["verdict"] != "not_evaluated"]
        judged += len(rubric)
        for check in rubric:
            cost = _note_cost(CheckResult.model_validate(check))
            assert (cost["prompt_tokens"], cost["cached_tokens"]) == (1000, 768)
        assert line["cost_usd"] == pytest.approx(len(rubric) * each)
    assert judged > 0
    run = report["cost"]["run"]
    assert (run["prompt_tokens"], run["cached_tokens"]) == (judged * 1000, judged * 768)
    assert all(row["cached_tokens"] == row["judgments"] * 768 for row in report["cost"]["criteria"])
    assert (
        f"- Judge cost: ${judged * each:.6f}; {judged * 768} of {judged * 1000} prompt tokens (77%) read "
        "from the provider's prompt cache" in md
    )
    assert f"| total | {judged} | {judged * 1000} ({judged * 768} cached) | {judged * 50} |" in md

    path = tmp_path / "c.jsonl"
    server = serve(cached)
    asyncio.run(
        _grader(server, transport, price=True, cassette=Cassette(path), mode=CacheMode.RECORD).assess(
            None, TRANSCRIPT
        )
    )
    checks, total = asyncio.run(
        _grader(server, transport, price=True, cassette=Cassette(path), mode=CacheMode.REPLAY).assess(
            None, TRANSCRIPT
        )
    )
    assert (total.replayed, total.cached_tokens, total.usd) == (2, 2 * 768, 0.0)
    assert _note_cost(checks[0])["cached_tokens"] == 768


def test_a_configured_price_prices_a_model_litellm_cannot(transport: str, serve: Any, tmp_path: Path) -> None:
    prices = {"input_cost_per_token": 3e-6, "output_cost_per_token": 2e-5}
    lines, md, report = _grade_and_report(tmp_path, serve(_reply), "openai/cost-judge", transport, prices)
    each = 1000 * 3e-6 + 50 * 2e-5  # the loopback judge's usage: 1000 prompt and 50 completion tokens
    judged = 0
    for line in lines:
        n = sum(1 for c in line["checks"] if c["layer"] == "rubric" and c["verdict"] != "not_evaluated")
        judged += n
        assert line["cost_usd"] == pytest.approx(n * each)
        assert line.get("cost_unknown_reason") is None
    assert report["cost"]["run"]["usd"] == pytest.approx(judged * each)
    assert f"Judge cost: ${judged * each:.6f}" in md


def test_one_price_without_the_other_is_refused(serve: Any, tmp_path: Path, capsys: Any) -> None:
    from judgekit.cli import main

    (tmp_path / "run.yaml").write_text(json.dumps({"judge": {"input_cost_per_token": 3e-6}}))
    code = main(
        [
            "grade",
            "--cases",
            str(EXAMPLES / "cases"),
            "--transcripts",
            str(EXAMPLES / "runs" / "agent-v1.jsonl"),
            "--out",
            str(tmp_path / "r.jsonl"),
            "--judge-model",
            "openai/cost-judge",
            "--config",
            str(tmp_path / "run.yaml"),
            "--no-progress",
        ]
    )
    assert code == 2
    assert (
        "judge setting input_cost_per_token is set but output_cost_per_token is not"
        in capsys.readouterr().err
    )
    assert not (tmp_path / "r.jsonl").exists()


def test_grade_and_report_say_unknown_for_an_unpriced_judge(
    transport: str, serve: Any, tmp_path: Path
) -> None:
    lines, md, report = _grade_and_report(tmp_path, serve(_reply), "openai/cost-judge", transport)
    reason = UNPRICED_REASON
    assert all(line["cost_usd"] is None and line["cost_unknown_reason"] == reason for line in lines)
    run = report["cost"]["run"]
    assert run["usd"] is None
    assert run["unpriced"] == run["judgments"] > 0
    assert report["run"]["cost_unpriced_trials"] == len(lines)
    assert f"judgments unpriced, in {len(lines)} of {len(lines)} trials: {reason})" in md
    assert f"| total | {run['judgments']} |" in md
    assert f"unknown ({run['judgments']} unpriced) |" in md
    assert "$0.0000" not in md
    html = (tmp_path / "r.html").read_text()
    assert "<h2>Judge cost</h2>" in html
    assert f"<td>total</td><td>{run['judgments']}</td>" in html
    assert f"<td>unknown ({run['judgments']} unpriced)</td>" in html
