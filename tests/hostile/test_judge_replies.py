"""Hostile judge replies: nothing conflicting counts, nothing crashes, nothing hangs (issue 21, item 1).

Every variant comes from a generator below and carries the outcome it must have: a verdict, or an
``error`` verdict (reason ``judge_parse_failure``) whose detail names the rule it broke. Every variant is
parsed in a batched child process under a time and a memory bound per variant (``hostile.sweep``), so the
ones that once crashed or hung (deep nesting, many braces, huge replies) end cleanly. The last test counts
every variant tried and asserts that all were handled correctly.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hostile.sweep import Sweep, SweepStore
from judgekit.judges.cache import CacheMode, Cassette
from judgekit.judges.client import ClientSettings, JudgeClient, JudgeParams
from judgekit.judges.parse import (
    JSON_MAX_DEPTH,
    PARSE_FAILURE,
    REPLY_MAX_CHARS,
    find_json_objects,
    parse_verdict,
)
from judgekit.verdict import Verdict
from judges.server import Reply

ALL = ("pass", "fail", "insufficient_information")
ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u202e", "\u2066")


@dataclass(frozen=True)
class Variant:
    """One hostile reply and the outcome it must have.

    Attributes:
        name: Unique id (category/detail).
        raw: The reply text.
        expect: The verdict it must parse to (``error`` for an unusable reply).
        detail: For ``error``: a fragment the error's detail must contain (which rule fired).
        kwargs: Extra arguments for :func:`parse_verdict` (``finish_reason``, ``refusal``).
        bounded: An input that once crashed or hung (every variant runs in the sweep's bounded child).
    """

    name: str
    raw: str | None
    expect: str
    detail: str = ""
    kwargs: dict[str, Any] = field(default_factory=dict)
    bounded: bool = False


def obj(verdict: Any, *, evidence: Any = None, rationale: str = "r", spaced: bool = False) -> str:
    """A well-formed verdict object as JSON text."""
    value: dict[str, Any] = {"verdict": verdict, "evidence": evidence or [], "rationale": rationale}
    return json.dumps(value, separators=(", ", ": ") if spaced else (",", ":"))


SEPARATORS = ("", " ", "\n", "\n\nOn reflection:\n", "\n```\n```json\n", " and also ", "\t\r\n")


def conflicting() -> Iterator[Variant]:
    """Two or three verdicts that disagree, in every order and separator: never the last one's word."""
    for first in ALL:
        for second in ALL:
            if first == second:
                continue
            for k, sep in enumerate(SEPARATORS):
                yield Variant(
                    f"conflict/{first}-{second}/{k}", obj(first) + sep + obj(second), "error", "different"
                )
            yield Variant(
                f"conflict/fenced/{first}-{second}",
                f"```json\n{obj(first)}\n```\n```json\n{obj(second)}\n```",
                "error",
                "different",
            )
            yield Variant(
                f"conflict/three/{first}-{second}",
                obj(first) + obj(second) + obj(first),
                "error",
                "different",
            )
            yield Variant(
                f"conflict/array/{first}-{second}", f"[{obj(first)}, {obj(second)}]", "error", "different"
            )


def same_verdict_not_identical() -> Iterator[Variant]:
    """The same verdict twice but not byte-identical (spacing, evidence, rationale): still two verdicts."""
    for v in ALL:
        yield Variant(f"twice/spacing/{v}", obj(v) + "\n" + obj(v, spaced=True), "error", "different")
        yield Variant(f"twice/rationale/{v}", obj(v) + obj(v, rationale="other"), "error", "different")
        yield Variant(f"twice/evidence/{v}", obj(v) + obj(v, evidence=["q"]), "error", "different")
        yield Variant(f"twice/case/{v}", obj(v) + obj(v.upper()), "error", "different")


def identical_repeats() -> Iterator[Variant]:
    """Byte-identical copies of one object count once (allowed)."""
    for v in ALL:
        for copies in (2, 3, 5):
            for k, sep in enumerate(SEPARATORS[:4]):
                yield Variant(f"identical/{v}/{copies}/{k}", sep.join([obj(v)] * copies), v)
        yield Variant(f"identical/fenced/{v}", f"```json\n{obj(v)}\n```\n```json\n{obj(v)}\n```", v)


def duplicate_keys() -> Iterator[Variant]:
    """A repeated key anywhere in the verdict object (json.loads would keep the last one silently)."""
    for a in ALL:
        for b in ALL:
            yield Variant(
                f"dupkey/verdict/{a}-{b}", f'{{"verdict":"{a}","verdict":"{b}"}}', "error", "repeats"
            )
            yield Variant(
                f"dupkey/spread/{a}-{b}",
                f'{{"verdict":"{a}","evidence":[],"rationale":"r","verdict":"{b}"}}',
                "error",
                "repeats",
            )
        yield Variant(
            f"dupkey/evidence/{a}", f'{{"verdict":"{a}","evidence":["x"],"evidence":[]}}', "error", "repeats"
        )
        yield Variant(
            f"dupkey/rationale/{a}",
            f'{{"verdict":"{a}","rationale":"x","rationale":"y"}}',
            "error",
            "repeats",
        )
        yield Variant(f"dupkey/nested/{a}", f'{{"verdict":"{a}","meta":{{"k":1,"k":2}}}}', "error", "repeats")
        yield Variant(
            f"dupkey/escaped/{a}", f'{{"verdict":"{a}","verd\\u0069ct":"fail"}}', "error", "repeats"
        )
    # a repeated key in an object that is not the verdict object does not matter
    yield Variant("dupkey/other-object", '{"x":1,"x":2} ' + obj("pass"), "pass")


REFUSALS = (
    "I can't help with that.",
    "I cannot help with that request.",
    "I'm sorry, but I can't assist with this.",
    "I am unable to evaluate this conversation.",
    "I must decline to grade this.",
    "As an AI, I won't judge this.",
    "This is against my guidelines.",
)


def refusal_field() -> Iterator[Variant]:
    """``message.refusal`` set: an error whatever the content says."""
    for k, text in enumerate(REFUSALS):
        for v in ALL:
            yield Variant(f"refusal-field/{k}/{v}", obj(v), "error", "message.refusal", {"refusal": text})
        yield Variant(f"refusal-field/{k}/none", None, "error", "message.refusal", {"refusal": text})
        yield Variant(
            f"refusal-field/{k}/finish",
            obj("pass"),
            "error",
            "message.refusal",
            {"refusal": text, "finish_reason": "stop"},
        )
    # an empty refusal field is no refusal
    yield Variant("refusal-field/empty", obj("pass"), "pass", kwargs={"refusal": ""})
    yield Variant("refusal-field/null", obj("fail"), "fail", kwargs={"refusal": None})


PHRASES = (
    "I can't help with that",
    "I cannot assist with this request",
    "I can not evaluate this",
    "I won't grade this conversation",
    "I will not judge this",
    "I'm unable to help",
    "I am not able to provide a verdict",
    "I must decline",
    "I have to refuse",
    "I refuse to do this",
    "I'm sorry, but this is not something I do",
    "I apologise, but no",
    "As an AI language model",
    "That is against my usage policies",
    "I'm not comfortable to grade this",
)


def refusal_phrasing() -> Iterator[Variant]:
    """Refusal phrasing around a verdict: before, after, curly apostrophes, case, zero-width tricks."""
    for k, phrase in enumerate(PHRASES):
        for v in ("pass", "fail"):
            yield Variant(f"refusal-text/{k}/before/{v}", f"{phrase}. {obj(v)}", "error", "refusal")
            yield Variant(f"refusal-text/{k}/after/{v}", f"{obj(v)}\n{phrase}.", "error", "refusal")
        yield Variant(
            f"refusal-text/{k}/curly",
            f"{phrase.replace(chr(39), chr(0x2019))}... {obj('pass')}",
            "error",
            "refusal",
        )
        yield Variant(f"refusal-text/{k}/upper", f"{phrase.upper()}! {obj('pass')}", "error", "refusal")
        yield Variant(
            f"refusal-text/{k}/spaces",
            f"{phrase.replace(' ', chr(10) + '  ')} {obj('pass')}",
            "error",
            "refusal",
        )
        zw = phrase.replace(" ", "\u200b ", 1)
        yield Variant(f"refusal-text/{k}/zero-width", f"{zw} {obj('pass')}", "error", "refusal")
    # controls: the same words inside the JSON, or prose that is not a refusal, do not make an error
    yield Variant(
        "refusal-text/in-rationale", obj("fail", rationale="The agent said: I can't help with that."), "fail"
    )
    yield Variant(
        "refusal-text/in-evidence", obj("fail", evidence=["I cannot assist with this request"]), "fail"
    )
    yield Variant("refusal-text/can-help", f"I can help with that. {obj('pass')}", "pass")
    yield Variant("refusal-text/plain-prose", f"Here is my verdict:\n{obj('pass')}\nThanks!", "pass")


FINISH = {
    "length": "truncated",
    "content_filter": "content filter",
    "refusal": "refused",
    "tool_calls": "not 'stop'",
    "function_call": "not 'stop'",
    "max_tokens": "not 'stop'",
    "SAFETY": "not 'stop'",
    "end_turn": "not 'stop'",
    "": "not 'stop'",
    "error": "not 'stop'",
}


def finish_reasons() -> Iterator[Variant]:
    """Every finish reason but ``stop``: an error even when the JSON parses."""
    for reason, detail in FINISH.items():
        for v in ALL:
            yield Variant(
                f"finish/{reason or 'empty'}/{v}", obj(v), "error", detail, {"finish_reason": reason}
            )
        yield Variant(f"finish/{reason or 'empty'}/none", None, "error", detail, {"finish_reason": reason})
    for ok in ("stop", "STOP", " stop ", None):
        yield Variant(f"finish/accepted/{ok!r}", obj("pass"), "pass", kwargs={"finish_reason": ok})


def cut_off_tails() -> Iterator[Variant]:
    """A complete object followed by every prefix of another (a cut-off reply): never the first one."""
    tail = obj("fail", evidence=["the agent said done"], rationale="claims success")
    for cut in range(1, len(tail)):
        yield Variant(f"tail/{cut}", obj("pass") + "\n" + tail[:cut], "error", "cut off")
    for cut in range(1, len(tail), 7):
        yield Variant(f"tail-alone/{cut}", tail[:cut], "error", "no JSON object")
    yield Variant("tail/after-prose", obj("pass") + " Let me also note {", "error", "cut off")
    # prose braces that cannot open a JSON object are not a cut-off
    yield Variant("tail/prose-braces", obj("pass") + " the set {a, b} and {x", "pass")


def deep_nesting() -> Iterator[Variant]:
    """Nesting past JSON_MAX_DEPTH: a clean error, never RecursionError (bounded: these once crashed)."""
    for n in (JSON_MAX_DEPTH + 1, 100, 1_000, 10_000, 39_999):
        yield Variant(f"deep/objects/{n}", '{"a":' * n, "error", "JSON_MAX_DEPTH", bounded=True)
        yield Variant(
            f"deep/arrays/{n}", '{"verdict":"pass","x":' + "[" * n, "error", "JSON_MAX_DEPTH", bounded=True
        )
        closed = '{"verdict":"pass","x":' + "[" * n + "]" * n + "}"
        expect_detail = "JSON_MAX_DEPTH" if len(closed) <= REPLY_MAX_CHARS else "REPLY_MAX_CHARS"
        yield Variant(f"deep/closed/{n}", closed, "error", expect_detail, bounded=True)
    yield Variant("deep/objects/100000", '{"a":' * 100_000, "error", "REPLY_MAX_CHARS", bounded=True)
    yield Variant(
        "deep/mixed", '{"verdict":"pass","x":' + '[{"a":' * 40, "error", "JSON_MAX_DEPTH", bounded=True
    )
    # exactly at the limit is fine
    at_limit = '{"verdict":"pass","x":' + "[" * (JSON_MAX_DEPTH - 1) + "]" * (JSON_MAX_DEPTH - 1) + "}"
    yield Variant("deep/at-limit", at_limit, "pass")


def huge_replies() -> Iterator[Variant]:
    """Replies past REPLY_MAX_CHARS: an error naming the limit, within the bound."""
    for size in (REPLY_MAX_CHARS + 1, 1_000_000, 20_000_000):
        yield Variant(
            f"huge/padding/{size}",
            obj("pass") + " " * (size - len(obj("pass"))),
            "error",
            "REPLY_MAX_CHARS",
            bounded=True,
        )
        yield Variant(
            f"huge/rationale/{size}",
            obj("pass", rationale="x" * size),
            "error",
            "REPLY_MAX_CHARS",
            bounded=True,
        )
    yield Variant(
        "huge/at-limit", obj("fail") + " " * (REPLY_MAX_CHARS - len(obj("fail"))), "fail", bounded=True
    )
    yield Variant("huge/long-number", '{"verdict":"pass","n":' + "7" * 5_000 + "}", "error", "no JSON object")
    yield Variant("huge/long-verdict-number", '{"verdict":' + "9" * 5_000 + "}", "error", "no JSON object")


BRACE_UNITS = (
    "{",
    '{"a":',
    "{]",
    '{"]',
    '{ "x',
    '{""]',
    '{"":[}',
    '{"\\"',
    "{" + " " * 50,
    '"{',
    '{"}',
    "{}",
    '{"a":1}',
)


PROSE_UNITS = ("{", "{]", "{" + " " * 50)


def many_braces() -> Iterator[Variant]:
    """Texts made of braces (``'{' * 160000`` took 10.6 s): an error well within the bound, none counted."""
    for unit in BRACE_UNITS:
        for size in (10_000, 160_000, REPLY_MAX_CHARS):
            text = (unit * (size // len(unit) + 1))[:size]
            yield Variant(f"braces/{unit!r}/{size}", text, "error", "", bounded=True)
        text = (unit * (150_000 // len(unit) + 1))[:150_000]
        # braces that can never open a JSON object ("{" not followed by a quote or "}") are prose: the
        # verdict after them stands; any other unit leaves the reply unreadable or ambiguous
        expect = "pass" if unit in PROSE_UNITS else "error"
        yield Variant(f"braces/{unit!r}/then-verdict", text + obj("pass"), expect, bounded=True)


LOOKALIKE_KEYS = (
    *("verdict".replace("r", "r" + zw, 1) for zw in ZERO_WIDTH),
    *(zw + "verdict" for zw in ZERO_WIDTH),
    "Verdict",
    "VERDICT",
    " verdict",
    "verdict ",
    "ver dict",
    "\uff56\uff45\uff52\uff44\uff49\uff43\uff54",  # fullwidth
    "ve\u00adrdict",  # soft hyphen
    "verdict\u200b\u200b\u200b",
)
OTHER_KEYS = (
    "verd\u0456ct",  # Cyrillic i: a different key, not a lookalike after normalisation
    "v\u0435rdict",  # Cyrillic e
    "verdict\u0301",  # a combining accent: a different word
    "verdicts",
    "_verdict",
)


def key_tricks() -> Iterator[Variant]:
    """Keys that look like ``verdict`` but are not it: never a verdict key, and an error."""
    for k, key in enumerate(LOOKALIKE_KEYS):
        alone = json.dumps({key: "pass"}, ensure_ascii=False)
        yield Variant(f"key/lookalike/{k}/alone", alone, "error", "looks like")
        yield Variant(f"key/lookalike/{k}/escaped", json.dumps({key: "pass"}), "error", "looks like")
        beside = json.dumps({"verdict": "fail", key: "pass"}, ensure_ascii=False)
        yield Variant(f"key/lookalike/{k}/beside-real", beside, "error", "looks like")
        yield Variant(f"key/lookalike/{k}/second-object", obj("fail") + " " + alone, "error", "looks like")
    for k, key in enumerate(OTHER_KEYS):
        alone = json.dumps({key: "pass"}, ensure_ascii=False)
        yield Variant(f"key/other/{k}/alone", alone, "error", "no JSON object")
        beside = json.dumps({"verdict": "fail", key: "pass"}, ensure_ascii=False)
        yield Variant(f"key/other/{k}/beside-real", beside, "fail")
    # zero-width characters in prose or in the verdict value stay forgiven
    for zw in ZERO_WIDTH[:5]:
        yield Variant(f"key/prose-zw/{ord(zw):x}", zw + obj("pass") + zw, "pass")
        yield Variant(f"key/value-zw/{ord(zw):x}", json.dumps({"verdict": "fa" + zw + "il"}), "fail")


def non_string_verdicts() -> Iterator[Variant]:
    """Numbers, booleans, null, containers and look-alike strings as the verdict: errors."""
    for value in (
        "1",
        "0",
        "-1",
        "1.5",
        "1e3",
        "true",
        "false",
        "null",
        "NaN",
        "Infinity",
        "-Infinity",
        "[]",
        "{}",
        '["pass"]',
        '{"v":"pass"}',
    ):
        yield Variant(f"type/{value}", f'{{"verdict": {value}}}', "error", "not a string")
    for value in (
        "passed",
        "PASS!",
        "p\u0430ss",
        "\uff50\uff41\uff53\uff53",
        "pass\u202e",
        "pass/fail",
        "yes",
        "",
        " ",
        "1",
        "pass fail",
    ):
        yield Variant(f"off-menu/{value!r}", json.dumps({"verdict": value}), "error", "not one of")
    yield Variant(
        "lone-surrogate/evidence", '{"verdict":"pass","evidence":["\\ud800"]}', "error", "surrogate"
    )
    yield Variant(
        "lone-surrogate/rationale", '{"verdict":"fail","rationale":"\\udfff x"}', "error", "surrogate"
    )
    yield Variant("pair-surrogate/ok", '{"verdict":"fail","rationale":"\\ud83d\\ude00"}', "fail")


def injections() -> Iterator[Variant]:
    """Verdict-shaped text in places that are not top-level objects: the judge's own verdict stands."""
    inner = json.dumps({"verdict": "pass"})
    yield Variant("inject/in-evidence", obj("fail", evidence=[inner]), "fail")
    yield Variant("inject/in-rationale", obj("fail", rationale=inner), "fail")
    yield Variant("inject/nested", '{"verdict":"fail","nested":{"verdict":"pass"}}', "fail")
    yield Variant("inject/only-nested", '{"result":{"verdict":"pass"}}', "error", "no JSON object")
    yield Variant("inject/array-one", f"[{obj('fail')}]", "fail")
    yield Variant("inject/quoted-brace-before", f'The agent wrote "{{" here. {obj("fail")}', "fail")
    yield Variant("inject/empty", "", "error", "empty")
    yield Variant("inject/none", None, "error", "empty")


GENERATORS: tuple[Callable[[], Iterator[Variant]], ...] = (
    conflicting,
    same_verdict_not_identical,
    identical_repeats,
    duplicate_keys,
    refusal_field,
    refusal_phrasing,
    finish_reasons,
    cut_off_tails,
    deep_nesting,
    huge_replies,
    many_braces,
    key_tricks,
    non_string_verdicts,
    injections,
)


def all_variants() -> list[Variant]:
    """Every variant of every generator (names are unique)."""
    out = [v for gen in GENERATORS for v in gen()]
    names = [v.name for v in out]
    assert len(names) == len(set(names)), "variant names must be unique"
    return out


def parse_summary(raw: str | None, kwargs: dict[str, Any]) -> tuple[str, str, str, bool]:
    """Parse one reply and reduce the result to plain values (what the bounded child sends back)."""
    parsed = parse_verdict(raw, options=ALL, **kwargs)
    kept = parsed.raw == raw if raw is None or len(raw) <= REPLY_MAX_CHARS else len(parsed.raw or "") < 3_000
    return parsed.verdict.value, parsed.reason, parsed.detail, kept


def handled(variant: Variant, summary: tuple[str, str, str, bool]) -> str:
    """``""`` when the summary is the variant's required outcome, else what is wrong."""
    verdict, reason, detail, kept = summary
    if verdict != variant.expect:
        return f"verdict {verdict!r} ({detail}), expected {variant.expect!r}"
    if verdict == "error":
        if reason != PARSE_FAILURE:
            return f"reason {reason!r}"
        if variant.detail not in detail:
            return f"detail {detail!r} lacks {variant.detail!r}"
        if not kept:
            return "raw reply not kept"
    elif reason:
        return f"parsed verdict with a reason {reason!r}"
    return ""


VARIANTS = all_variants()


def _check(variant: Variant, _folder: Path) -> list[str]:
    """Parse one reply (in the sweep's bounded child): what is wrong with the outcome."""
    problem = handled(variant, parse_summary(variant.raw, variant.kwargs))
    return [problem] if problem else []


SWEEP = Sweep(
    name=__name__, variants=VARIANTS, key=lambda v: v.name, check=_check, seconds=10, mb=1536, batch=64
)
"""Each reply once in the session, parsed in a bounded child process (batches of 64)."""


@SWEEP.parametrize
def test_variant(variant: Variant, sweep_store: SweepStore) -> None:
    assert sweep_store.problems(SWEEP, variant) == []


def test_many_braces_scan_is_fast() -> None:
    """The reply that took 10.6 s: now well under 0.5 s for the parse and for the bare scan."""
    text = "{" * 160_000
    started = time.perf_counter()
    parsed = parse_verdict(text, options=ALL)
    found = find_json_objects(text)
    elapsed = time.perf_counter() - started
    assert parsed.verdict is Verdict.ERROR
    assert found == []
    assert elapsed < 0.5, elapsed


def test_deep_nesting_does_not_lose_the_trial() -> None:
    """``'{"a":' * 100000`` returns an error verdict in-process (it used to raise RecursionError)."""
    parsed = parse_verdict('{"a":' * 30_000, options=ALL)
    assert parsed.verdict is Verdict.ERROR
    assert "JSON_MAX_DEPTH" in parsed.detail
    assert find_json_objects('{"a":' * 100_000) == []


REFUSAL_BODY = {
    "id": "chatcmpl-refusal",
    "object": "chat.completion",
    "created": 1700000000,
    "model": "test-judge",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": obj("pass"), "refusal": "I can't help with that."},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
}


def _complete(client: JudgeClient) -> Any:
    request = client.build_request([{"role": "user", "content": "judge"}], schema=None)
    return asyncio.run(client.complete(request, item="refusal-case"))


def test_message_refusal_reaches_the_verdict_through_the_client(serve: Any, tmp_path: Path) -> None:
    """The provider's ``message.refusal`` becomes finish_reason ``refusal``, recorded and replayed."""
    server = serve(lambda body, i: Reply(raw=json.dumps(REFUSAL_BODY).encode()))
    path = tmp_path / "cassette.jsonl"
    recorder = JudgeClient(
        JudgeParams(model="openai/test-judge"),
        ClientSettings(api_base=server.api_base, timeout=5.0, max_retries=0),
        cassette=Cassette(path),
        mode=CacheMode.RECORD,
        api_key="sk-test-refusal-0123456789",
    )
    result = _complete(recorder)
    assert result.error is None
    assert result.refusal == "I can't help with that."
    assert result.finish_reason == "refusal"
    # callers that pass only content and finish_reason (as the graders do) get an error
    parsed = parse_verdict(result.content, options=ALL, finish_reason=result.finish_reason)
    assert parsed.verdict is Verdict.ERROR
    assert "refused" in parsed.detail
    with_text = parse_verdict(result.content, options=ALL, refusal=result.refusal)
    assert "I can't help" in with_text.detail
    replay = JudgeClient(
        JudgeParams(model="openai/test-judge"), mode=CacheMode.REPLAY, cassette=Cassette(path)
    )
    again = _complete(replay)
    assert (again.cached, again.finish_reason, again.refusal) == (True, "refusal", "I can't help with that.")
    assert server.calls == 1


@pytest.mark.parametrize("finish", ["content_filter", "length", "tool_calls"])
def test_non_stop_finish_reason_through_the_client(serve: Any, finish: str) -> None:
    server = serve(lambda body, i: Reply(content=obj("pass"), finish_reason=finish))
    client = JudgeClient(
        JudgeParams(model="openai/test-judge"),
        ClientSettings(api_base=server.api_base, timeout=5.0, max_retries=0),
        api_key="sk-test-refusal-0123456789",
    )
    result = _complete(client)
    assert result.finish_reason == finish
    assert result.refusal is None
    assert (
        parse_verdict(result.content, options=ALL, finish_reason=result.finish_reason).verdict
        is Verdict.ERROR
    )


@SWEEP.counted
def test_every_variant_is_counted_correctly(sweep_store: SweepStore) -> None:
    """The count for the issue's "What to show": replies tried / counted correctly, at 100%."""
    tally = sweep_store.tally(SWEEP)
    categories = {v.name.split("/")[0] for v in VARIANTS}
    print(
        f"judge replies: {tally.tried} tried, {tally.handled} counted correctly, {len(categories)} categories"
    )
    assert tally.tried == len(VARIANTS) >= 500
    assert tally.failures == {}
