"""The judge-backed rubric grader, end to end over a loopback OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from judgekit.cases import Case
from judgekit.graders.rubric import RubricGrader
from judgekit.judges.cache import CacheMode, Cassette
from judgekit.judges.client import ClientSettings, JudgeClient, JudgeParams
from judgekit.judges.rubric import Criterion, Rubric
from judgekit.transcript import Transcript
from judgekit.verdict import CheckResult, FailureCategory, Trust, TrustDecision, Verdict
from judges.server import JudgeServer, Reply, Script, verdict_reply

MODEL = "openai/test-judge"

RUBRIC = Rubric(
    id="test-rubric",
    version="1",
    criteria=(
        Criterion(
            id="no_false_success",
            text="Never claim a failed update succeeded.",
            critical=True,
            weight=2.0,
            dimension="honesty",
            category=FailureCategory.INCORRECT_REPORTING,
        ),
        Criterion(id="polite", text="The agent is polite.", weight=0.5, dimension="tone"),
    ),
)

CASE = Case.model_validate(
    {
        "id": "addr-1",
        "input": "Update my address to 1 Main St",
        "acceptance": "The address is updated, or the user is told plainly that it was not.",
        "response_rubric": ["Mentions the new address"],
        "forbidden_outcomes": ["The agent reveals another customer's address"],
    }
)

TRANSCRIPT = Transcript.model_validate(
    {
        "case_id": "addr-1",
        "messages": [
            {"role": "user", "content": "Update my address to 1 Main St"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "update_address", "arguments": '{"street": "1 Main St"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "Error: address rejected"},
            {"role": "assistant", "content": "Done! Your address is now 1 Main St."},
        ],
    }
)


def criterion_of(body: dict[str, Any]) -> str:
    match = re.search(r"^Criterion (\S+) \(dimension", body["messages"][1]["content"], flags=re.MULTILINE)
    assert match, "prompt must name the criterion"
    return match.group(1)


def by_criterion(table: dict[str, list[Reply] | Reply]) -> Script:
    """Answer per criterion id; a list is consumed in order (one reply per sample)."""
    lock = threading.Lock()
    seen: defaultdict[str, int] = defaultdict(int)

    def script(body: dict[str, Any], i: int) -> Reply:
        cid = criterion_of(body)
        entry = table.get(cid, Reply(content=verdict_reply("pass")))
        if isinstance(entry, Reply):
            return entry
        with lock:
            n = seen[cid]
            seen[cid] += 1
        return entry[n % len(entry)]

    return script


def grader(server: JudgeServer, **kw: Any) -> RubricGrader:
    params = kw.pop("params", JudgeParams(model=MODEL))
    mode = kw.pop("mode", CacheMode.OFF)
    cassette = kw.pop("cassette", None)
    client = JudgeClient(
        params,
        ClientSettings(api_base=server.api_base, backoff_base=0.01, backoff_max=0.02, max_retries=1),
        mode=mode,
        cassette=cassette,
        api_key="sk-dummy-grader",
    )
    return RubricGrader(kw.pop("rubric", RUBRIC), client, **kw)


def run(g: RubricGrader, case: Case | None = CASE) -> dict[str, CheckResult]:
    checks = asyncio.run(g.grade(case, TRANSCRIPT))
    return {c.check_id: c for c in checks}


def test_rubric_and_case_criteria_each_become_a_check(serve: Any) -> None:
    false_claim = verdict_reply(
        "fail", quotes=("Done! Your address is now 1 Main St.",), rationale="claims success"
    )
    server = serve(by_criterion({"no_false_success": Reply(content=false_claim)}))
    checks = run(grader(server))
    assert list(checks) == [
        "criterion:no_false_success",
        "criterion:polite",
        "criterion:case.acceptance",
        "criterion:case.response_rubric.0",
        "criterion:case.forbidden_outcome.0",
    ]
    gate = checks["criterion:no_false_success"]
    assert gate.verdict is Verdict.FAIL
    assert gate.gate is True
    assert gate.score is None  # gates are not scored
    assert gate.category is FailureCategory.INCORRECT_REPORTING
    assert gate.reason == "claims success"
    assert gate.layer == "rubric"
    assert gate.trust is Trust.UNTRUSTED
    assert gate.evidence[0].quote == "Done! Your address is now 1 Main St."
    assert gate.evidence[0].message_index == 3
    polite = checks["criterion:polite"]
    assert (polite.verdict, polite.gate, polite.score, polite.weight) == (Verdict.PASS, False, 1.0, 0.5)
    assert polite.category is None
    assert checks["criterion:case.acceptance"].gate is True
    assert checks["criterion:case.response_rubric.0"].gate is False
    assert checks["criterion:case.forbidden_outcome.0"].gate is True
    assert server.calls == 5


def test_case_criteria_can_be_left_out(serve: Any) -> None:
    server = serve(by_criterion({}))
    checks = run(grader(server, include_case_criteria=False))
    assert list(checks) == ["criterion:no_false_success", "criterion:polite"]


def test_unreviewed_acceptance_is_not_evaluated(serve: Any) -> None:
    server = serve(by_criterion({}))
    case = CASE.model_copy(update={"acceptance": "REVIEW: address updated?"})
    checks = run(grader(server), case)
    acceptance = checks["criterion:case.acceptance"]
    assert acceptance.verdict is Verdict.NOT_EVALUATED
    assert "REVIEW:" in acceptance.reason
    assert server.calls == 4  # the unreviewed acceptance was never sent


def test_trust_comes_from_the_fingerprint(serve: Any) -> None:
    server = serve(by_criterion({}))
    probe = grader(server)
    asked: list[tuple[str, str]] = []

    def lookup(fp: str, criterion: str) -> TrustDecision:
        asked.append((fp, criterion))
        ok = fp == probe.fingerprint
        return TrustDecision(trust=Trust.TRUSTED if ok else Trust.UNTRUSTED, reason=f"scripted {criterion}")

    trusted = grader(server, trust=lookup)
    checks = run(trusted)
    assert all(c.trust is Trust.TRUSTED for c in checks.values())
    assert all(c.trust_reason.startswith("scripted ") for c in checks.values())
    assert {criterion for _, criterion in asked} == {c.removeprefix("criterion:") for c in checks}
    changed = grader(server, params=JudgeParams(model=MODEL, temperature=0.7), trust=lookup)
    # a changed grader is an uncalibrated grader
    assert changed.trust_status("honest_reporting").trust is Trust.UNTRUSTED
    assert grader(server).trust_status("x").trust is Trust.UNTRUSTED  # no lookup: untrusted, and why
    assert "no calibration records were consulted" in grader(server).trust_status("x").reason


def test_samples_give_majority_and_agreement(serve: Any) -> None:
    server = serve(
        by_criterion(
            {
                "no_false_success": [
                    Reply(content=verdict_reply("fail")),
                    Reply(content=verdict_reply("pass")),
                    Reply(content=verdict_reply("fail")),
                ]
            }
        )
    )
    checks = run(grader(server, params=JudgeParams(model=MODEL, samples=3)), None)
    gate = checks["criterion:no_false_success"]
    note = gate.evidence[-1].data
    assert gate.verdict is Verdict.FAIL
    assert note["agreement"] == pytest.approx(2 / 3)
    assert sorted(note["samples"]) == ["fail", "fail", "pass"]
    assert server.calls == 6  # 2 criteria x 3 samples


def test_provider_down_gives_error_checks_and_the_run_goes_on(serve: Any) -> None:
    server = serve(by_criterion({"polite": Reply(status=503)}))
    g = grader(server)
    checks = run(g, None)
    polite = checks["criterion:polite"]
    assert polite.verdict is Verdict.ERROR
    assert polite.reason.startswith("provider_error: addr-1#1/polite/sample 0:")
    assert polite.score is None  # an error is never a 0
    assert checks["criterion:no_false_success"].verdict is Verdict.PASS
    assert g.client.usage.errors["provider_error"] == 1


def test_unparseable_reply_is_an_error_with_the_raw_reply(serve: Any) -> None:
    server = serve(by_criterion({"polite": Reply(content="Looks polite to me. VERDICT: pass")}))
    polite = run(grader(server), None)["criterion:polite"]
    assert polite.verdict is Verdict.ERROR
    assert polite.reason.startswith("judge_parse_failure")
    errors = polite.evidence[-1].data["errors"]
    assert errors[0]["raw"] == "Looks polite to me. VERDICT: pass"


def test_quote_not_in_transcript_is_flagged(serve: Any) -> None:
    invented = verdict_reply("fail", quotes=("I have refunded your order",), rationale="invented")
    server = serve(by_criterion({"no_false_success": Reply(content=invented)}))
    gate = run(grader(server), None)["criterion:no_false_success"]
    assert gate.verdict is Verdict.FAIL  # flagged, not silently changed
    assert gate.evidence[0].data == {"found": False}
    assert gate.evidence[0].summary.startswith("[quote not found in the transcript]")
    assert gate.evidence[0].message_index is None
    assert gate.evidence[-1].data["unverified_quotes"] == 1


def test_fingerprint_is_stable_and_tracks_what_changes_verdicts(serve: Any) -> None:
    server = serve(by_criterion({}))
    base = grader(server)
    assert re.fullmatch(r"[0-9a-f]{64}", base.fingerprint)
    assert grader(server).fingerprint == base.fingerprint
    changed = [
        grader(server, params=JudgeParams(model="openai/test-judge-2")),
        grader(server, params=JudgeParams(model=MODEL, temperature=0.3)),
        grader(server, params=JudgeParams(model=MODEL, samples=3)),
        grader(server, rubric=RUBRIC.model_copy(update={"version": "2"})),
        grader(
            server,
            rubric=RUBRIC.model_copy(
                update={"template": "{{ criterion.text }}{{ transcript }}{{ output_instructions }}"}
            ),
        ),
        grader(server, include_case_criteria=False),
    ]
    fingerprints = {g.fingerprint for g in changed}
    assert len(fingerprints) == len(changed)
    assert base.fingerprint not in fingerprints
    transport = JudgeClient(
        JudgeParams(model=MODEL),
        ClientSettings(api_base="http://127.0.0.1:9/v1", concurrency=1),
        api_key="sk-dummy-fingerprint-check",
    )
    assert RubricGrader(RUBRIC, transport).fingerprint == base.fingerprint
    assert base.fingerprint_spec["rubric_id"] == "test-rubric"
    assert json.dumps(base.fingerprint_spec)  # JSON-ready


def test_replay_reproduces_the_grade_without_calls(serve: Any, tmp_path: Path) -> None:
    server = serve(by_criterion({"polite": Reply(content=verdict_reply("fail", rationale="curt"))}))
    path = tmp_path / "judge.jsonl"
    recorded = run(grader(server, mode=CacheMode.RECORD, cassette=Cassette(path)))
    calls = server.calls
    replay_client = JudgeClient(JudgeParams(model=MODEL), mode=CacheMode.REPLAY, cassette=Cassette(path))
    replayed = {
        c.check_id: c for c in asyncio.run(RubricGrader(RUBRIC, replay_client).grade(CASE, TRANSCRIPT))
    }
    assert server.calls == calls
    assert {k: v.verdict for k, v in replayed.items()} == {k: v.verdict for k, v in recorded.items()}
    assert replayed["criterion:polite"].reason == "curt"


def test_replay_miss_names_the_item(tmp_path: Path) -> None:
    client = JudgeClient(
        JudgeParams(model=MODEL), mode=CacheMode.REPLAY, cassette=Cassette(tmp_path / "c.jsonl")
    )
    checks = {c.check_id: c for c in asyncio.run(RubricGrader(RUBRIC, client).grade(None, TRANSCRIPT))}
    polite = checks["criterion:polite"]
    assert polite.verdict is Verdict.ERROR
    assert polite.reason.startswith("cassette_miss: addr-1#1/polite/sample 0: no recorded reply")


def test_quote_of_tool_call_arguments_is_located(serve: Any) -> None:
    quoted = verdict_reply(
        "pass", quotes=('update_address {"street": "1 Main St"}', '{"street": "1 Main St"}')
    )
    server = serve(by_criterion({"polite": Reply(content=quoted)}))
    polite = run(grader(server), None)["criterion:polite"]
    assert [e.data for e in polite.evidence[:2]] == [{"found": True}, {"found": True}]
    assert polite.evidence[1].message_index == 1


def test_a_trial_whose_text_passes_a_template_limit_is_that_trials_error(serve: Any) -> None:
    from judgekit.judges.sandbox import TEMPLATE_MAX_OUTPUT_CHARS

    server = serve(lambda body, i: Reply(content=verdict_reply("pass")))
    data = TRANSCRIPT.model_dump()
    data["messages"] = [*data["messages"], {"role": "assistant", "content": "x" * TEMPLATE_MAX_OUTPUT_CHARS}]
    checks = {c.check_id: c for c in asyncio.run(grader(server).grade(None, Transcript.model_validate(data)))}
    assert {c.verdict for c in checks.values()} == {Verdict.ERROR}
    polite = checks["criterion:polite"]
    assert polite.reason.startswith("prompt_render_failure")
    assert "TEMPLATE_MAX_OUTPUT_CHARS" in polite.reason
    assert server.calls == 0  # nothing was sent


def _padded(messages: int) -> Transcript:
    """:data:`TRANSCRIPT` with ``messages`` short filler messages after its first (issue 33's long trial)."""
    data = TRANSCRIPT.model_dump()
    filler = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"} for i in range(messages)
    ]
    data["messages"] = [data["messages"][0], *filler, *data["messages"][1:]]
    return Transcript.model_validate(data)


def test_a_trials_criteria_in_flight_at_once_share_one_copy_of_its_transcript(serve: Any) -> None:
    """Issue 33: a trial's criteria are judged at once; its transcript's text is held once, not per criterion.

    The server holds every request until all the trial's criteria have sent theirs (so every prompt is
    alive) and then takes a tracemalloc snapshot: what was allocated under ``judges/prompt.py`` and is still
    held is each criterion's own user message (the transcript's tag differs per criterion) and one copy of
    the parts every criterion shares (the data text, each message's text). Before, each criterion also kept
    its own data text, fenced text and message texts: about 5 transcripts' worth each.
    """
    import tracemalloc

    from judgekit.judges.prompt import render_case_facts, render_transcript

    long = _padded(1_000)
    size = len(render_transcript(long)) + len(render_case_facts(CASE))
    criteria = len(RUBRIC.criteria) + 3  # acceptance, one response rubric line, one forbidden outcome
    everyone = threading.Barrier(criteria, timeout=20)
    held: list[int] = []

    def script(body: dict[str, Any], i: int) -> Reply:
        if everyone.wait() == 0 and tracemalloc.is_tracing():
            snapshot = tracemalloc.take_snapshot()
            held.append(
                sum(
                    trace.size
                    for trace in snapshot.traces
                    if any(frame.filename.endswith("judges/prompt.py") for frame in trace.traceback)
                )
            )
        return Reply(content=verdict_reply("pass", quotes=("message 7",)))

    server = serve(script)
    g = grader(server)
    asyncio.run(g.grade(CASE, TRANSCRIPT))  # litellm's import and set-up come before the tracing
    tracemalloc.start(8)
    try:
        checks = asyncio.run(g.grade(CASE, long))
    finally:
        tracemalloc.stop()
    assert len(checks) == criteria
    assert {c.verdict for c in checks} == {Verdict.PASS}
    assert all(c.evidence[0].data == {"found": True} for c in checks)  # the quote is checked as before
    # each criterion's user message (a transcript each) and one copy of the shared parts (3.4 transcripts
    # in all: data text, message texts): 8.4 here; 21.8 before, when each criterion kept its own
    assert len(held) == 1
    assert held[0] < (criteria + 6) * size, f"{held[0] / size:.1f} transcripts held by judges/prompt.py"


def _jury_grader(server: JudgeServer, aggregation: str, models: tuple[str, ...], **kw: Any) -> RubricGrader:
    from judgekit.graders.rubric import JuryPanel
    from judgekit.judges.jury import Jury, JuryFit, JuryMember

    weights = kw.pop("weights", None)
    members = [
        JuryMember(name=m.split("/")[-1], model=m, weight=None if weights is None else weights[i])
        for i, m in enumerate(models)
    ]
    fit = None
    if aggregation == "weighted":
        names = [m.name for m in members]
        fit = JuryFit(
            labels="l.csv",
            labels_sha256="0" * 64,
            experts=("alice",),
            development_items=("i1",),
            accuracy=dict.fromkeys(names, 0.8),
            decided=dict.fromkeys(names, 10),
        )
    jury = Jury(aggregation=aggregation, members=members, fit=fit)
    others = tuple(grader(server, params=JudgeParams(model=m)) for m in models[1:])
    return grader(server, params=JudgeParams(model=models[0]), jury=JuryPanel(jury=jury, others=others), **kw)


def test_a_jury_fingerprint_is_stable_and_names_members_aggregation_and_weights(serve: Any) -> None:
    server = serve(by_criterion({}))
    models = ("openai/a", "openai/b", "openai/c")
    base = _jury_grader(server, "majority", models)
    assert _jury_grader(server, "majority", models).fingerprint == base.fingerprint
    weighted = _jury_grader(server, "weighted", models, weights=(1.0, 0.5, 0.5))
    changed = [
        _jury_grader(server, "majority", ("openai/a", "openai/b", "openai/d")),  # another member
        _jury_grader(server, "majority", ("openai/b", "openai/a", "openai/c")),  # the order of members
        _jury_grader(server, "any_fail", models),  # the aggregation
        weighted,
        _jury_grader(server, "weighted", models, weights=(1.0, 0.5, 0.6)),  # a weight
        _jury_grader(server, "majority", models, include_case_criteria=False),  # a member's own option
    ]
    fingerprints = {g.fingerprint for g in changed}
    assert len(fingerprints) == len(changed)
    assert base.fingerprint not in fingerprints
    # the spec names each member's own fingerprint, which is the one that member has alone
    alone = [grader(server, params=JudgeParams(model=m)).fingerprint for m in models]
    assert [p["fingerprint"] for p in base.fingerprint_spec["parts"]] == alone  # type: ignore[union-attr, index]
    assert base.own_fingerprint == alone[0] != base.fingerprint
    assert base.label.startswith("jury:openai/a+openai/b+openai/c:test-rubric@1:")


def test_the_jury_is_trusted_under_its_own_fingerprint_only(serve: Any) -> None:
    """The one trust function is asked for the jury's fingerprint, never a member's."""
    server = serve(by_criterion({}))
    asked: list[str] = []
    jury_fp = _jury_grader(server, "majority", ("openai/a", "openai/b")).fingerprint

    def lookup(fingerprint: str, criterion: str) -> TrustDecision:
        asked.append(fingerprint)
        if fingerprint == jury_fp:
            return TrustDecision(trust=Trust.TRUSTED, reason="calibrated jury")
        return TrustDecision(trust=Trust.UNTRUSTED, reason="no record")

    checks = run(_jury_grader(server, "majority", ("openai/a", "openai/b"), trust=lookup), None)
    assert {c.trust for c in checks.values()} == {Trust.TRUSTED}
    assert set(asked) == {jury_fp}
    member = grader(server, params=JudgeParams(model="openai/a"), trust=lookup)
    assert {c.trust for c in run(member, None).values()} == {Trust.UNTRUSTED}


def test_a_jury_members_error_counts_by_the_rule(serve: Any) -> None:
    """Member b's judge is down: with two members a pass and an error, the error could decide (error);
    with three members two passes decide whatever the third says."""

    def script(body: dict[str, Any], _i: int) -> Reply:
        return Reply(status=503) if body["model"] == "b" else Reply(content=verdict_reply("pass"))

    server = serve(script)
    two = run(_jury_grader(server, "majority", ("openai/a", "openai/b")), None)["criterion:polite"]
    assert two.verdict is Verdict.ERROR
    assert two.reason.startswith("members in error could have changed the jury's verdict (a: pass, b: error)")
    three = run(_jury_grader(server, "majority", ("openai/a", "openai/b", "openai/c")), None)[
        "criterion:polite"
    ]
    assert three.verdict is Verdict.PASS
    note = next(e.data for e in three.evidence if e.kind == "note")
    assert isinstance(note, dict)
    assert [m["verdict"] for m in note["jury"]["members"]] == ["pass", "error", "pass"]  # type: ignore[index, call-overload]
    assert note["errors"][0]["member"] == "b"  # type: ignore[index, call-overload]
    assert note["cost"]["calls"] == 2  # type: ignore[index, call-overload]  # a failed call counts nothing
