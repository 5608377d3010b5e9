"""Hostile providers: every fault is retried or not as it should be, and nothing hangs (issue 21, item 7).

Every variant comes from a generator below and carries the outcome it must have, and every one runs over
real HTTP against the loopback server of ``tests/judges/server.py`` (or a socket that refuses or drops
connections), in a child process under a time and a memory bound (:func:`run_bounded`):

* each status of :data:`RETRY_STATUSES` (408, 409, 429, 500, 502, 503, 504, 529) is retried and then
  answered; a steady outage of each gives up after ``retries + 1`` attempts;
* 400, 401, 403, 404, 422 (and 405, 413, 501) are tried exactly once;
* ``Retry-After`` (seconds, an HTTP date, ``retry-after-ms``, too long, malformed) is waited at least as
  long as it asks (within a tolerance) and never more than :data:`RETRY_AFTER_MAX_S`;
* a hanging judge ends as an error "the judge did not answer within N s" after about the timeout per
  attempt; a refused or dropped connection is retried, then an error;
* the transport settings (``judge.timeout``, ``judge.retries``, ``judge.backoff``) are checked in every
  layer (flag, environment, project file, run configuration) with a clear error and exit 2, and never
  change the judge's fingerprint.

The last test counts every variant tried and asserts that all were handled correctly.
"""

from __future__ import annotations

import ast
import contextlib
import email.utils
import io
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hostile.bounded import run_bounded
from hostile.judging import AIRDESK, ask_judge, grade_argv, one_trial_transcripts
from hostile.sweep import Sweep, SweepStore
from judgekit.errors import JudgekitError
from judgekit.judges import client as client_module
from judgekit.judges.client import (
    RETRY_AFTER_MAX_S,
    RETRY_STATUSES,
    ClientSettings,
    import_litellm,
    is_retryable,
    retry_after_seconds,
)
from judgekit.settings import (
    JUDGE_BACKOFF_MAX_S,
    JUDGE_RETRIES_MAX,
    JUDGE_TIMEOUT_MAX_S,
    load_project_config,
    resolve_settings,
)
from judges.server import JudgeServer, Reply, verdict_reply

KEY = "sk-test-provider-faults-0123456789"
FINAL_STATUSES = (400, 401, 403, 404, 422, 405, 413, 501)
"""Statuses that must be tried once: the five the issue names, and three more that are not transient."""
OK = verdict_reply("pass")
SLACK_S = 2.5
"""Tolerance on upper time bounds: process start-up, litellm's one-off first-call setup, a loaded machine."""


# ------------------------------------------------------------------------------------------- variants


@dataclass(frozen=True)
class Fault:
    """One hostile provider behaviour and the outcome it must have.

    Attributes:
        name: Unique id (category/detail).
        script: Replies in order (the last one repeats); ``None`` with ``endpoint`` set.
        endpoint: ``refused`` (nothing listens) or ``dropped`` (connections closed unanswered), else ``""``.
        settings: :class:`ClientSettings` overrides.
        error: Whether the request must end in an error (``provider_error``) rather than a reply.
        calls: HTTP requests (or connections) the provider must see.
        detail: Fragments the error detail must hold.
        min_s: Least wall time the request must take (a ``Retry-After`` honoured).
        max_s: Most wall time it may take (nothing hangs).
        retry_after_cap: Overrides :data:`RETRY_AFTER_MAX_S` in the child (to test the cap quickly).
        date_ahead_s: Sends the first reply a ``Retry-After`` HTTP date this many seconds after the moment
            the fault runs (not when the variants were generated).
    """

    name: str
    script: tuple[Reply, ...] | None
    error: bool
    calls: int
    endpoint: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    detail: tuple[str, ...] = ()
    min_s: float = 0.0
    max_s: float = 6.0
    retry_after_cap: float | None = None
    date_ahead_s: float | None = None


def _status_faults() -> Iterator[Fault]:
    for status in sorted(RETRY_STATUSES):
        yield Fault(
            f"retried/{status}-twice-then-answer",
            (Reply(status=status), Reply(status=status), Reply(content=OK)),
            error=False,
            calls=3,
            settings={"max_retries": 3},
        )
        yield Fault(
            f"retried/{status}-outage-gives-up",
            (Reply(status=status),),
            error=True,
            calls=3,
            settings={"max_retries": 2},
            detail=(f"HTTP {status}", "gave up after 3 attempts"),
        )
        yield Fault(
            f"retried/{status}-html-body-then-answer",
            (Reply(status=status, raw=b"<html><body>upstream trouble</body></html>"), Reply(content=OK)),
            error=False,
            calls=2,
            settings={"max_retries": 1},
        )
    for status in FINAL_STATUSES:
        yield Fault(
            f"final/{status}-tried-once",
            (Reply(status=status), Reply(content=OK)),
            error=True,
            calls=1,
            settings={"max_retries": 4},
            detail=(f"HTTP {status}", "(not retried)"),
        )
        yield Fault(
            f"final/{status}-with-retry-after-still-once",
            (Reply(status=status, headers={"Retry-After": "0"}), Reply(content=OK)),
            error=True,
            calls=1,
            settings={"max_retries": 4},
            detail=(f"HTTP {status}", "(not retried)"),
        )


def _http_date(seconds_from_now: float) -> str:
    return email.utils.formatdate(time.time() + seconds_from_now, usegmt=True)


def _retry_after_faults() -> Iterator[Fault]:
    def after(status: int, headers: dict[str, str]) -> tuple[Reply, ...]:
        return (Reply(status=status, headers=headers), Reply(content=OK))

    for status in (429, 503, 529):
        yield Fault(
            f"retry-after/{status}-seconds-0.6",
            after(status, {"Retry-After": "0.6"}),
            error=False,
            calls=2,
            min_s=0.55,
        )
        yield Fault(
            f"retry-after/{status}-whole-seconds-1",
            after(status, {"Retry-After": "1"}),
            error=False,
            calls=2,
            min_s=0.95,
        )
        yield Fault(
            f"retry-after/{status}-ms-700",
            after(status, {"retry-after-ms": "700", "Retry-After": "30"}),
            error=False,
            calls=2,
            min_s=0.65,
            max_s=6.0,
        )
    # an HTTP date has whole seconds: two seconds ahead is a wait of more than one second
    yield Fault(
        "retry-after/http-date-2s-ahead",
        after(429, {}),
        error=False,
        calls=2,
        min_s=0.95,
        date_ahead_s=2.0,
    )
    yield Fault(
        "retry-after/http-date-in-the-past-no-wait",
        after(429, {"Retry-After": _http_date(-3600.0)}),
        error=False,
        calls=2,
        max_s=3.0,
    )
    yield Fault(
        "retry-after/too-long-is-capped",
        after(429, {"Retry-After": "3600"}),
        error=False,
        calls=2,
        min_s=0.35,
        max_s=4.0,
        retry_after_cap=0.4,
    )
    yield Fault(
        "retry-after/huge-date-is-capped",
        after(503, {"Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT"}),
        error=False,
        calls=2,
        min_s=0.35,
        max_s=4.0,
        retry_after_cap=0.4,
    )
    for label, value in (
        ("words", "soon"),
        ("negative", "-5"),
        ("nan", "nan"),
        ("inf", "inf"),
        ("empty", ""),
        ("garbage-date", "Mon, 99 Foo 2026 25:61:61 GMT"),
        ("huge-number", "1e400"),
    ):
        yield Fault(
            f"retry-after/malformed-{label}-ignored",
            after(429, {"Retry-After": value}),
            error=False,
            calls=2,
            max_s=3.0,
            settings={"backoff_base": 0.01, "backoff_max": 0.05},
        )


def _hang_faults() -> Iterator[Fault]:
    for retries in (0, 1, 2):
        timeout = 0.6
        yield Fault(
            f"hang/no-answer-retries-{retries}",
            (Reply(content=OK, delay=4.0),),
            error=True,
            calls=retries + 1,
            settings={"timeout": timeout, "max_retries": retries},
            detail=(f"the judge did not answer within {timeout:g} s (gave up after {retries + 1} attempts)",),
            min_s=timeout * (retries + 1) * 0.9,
            max_s=(timeout + client_module.TIMEOUT_GRACE_S) * (retries + 1) + SLACK_S,
        )
    yield Fault(
        "hang/once-then-answer",
        (Reply(content=OK, delay=4.0), Reply(content=OK)),
        error=False,
        calls=2,
        settings={"timeout": 0.6, "max_retries": 1},
        max_s=0.6 + client_module.TIMEOUT_GRACE_S + SLACK_S,
    )
    yield Fault(
        "hang/slow-but-in-time",
        (Reply(content=OK, delay=0.3),),
        error=False,
        calls=1,
        settings={"timeout": 5.0, "max_retries": 0},
    )
    yield Fault(
        "hang/504-gateway-timeout-then-hang",
        (Reply(status=504), Reply(content=OK, delay=4.0)),
        error=True,
        calls=2,
        settings={"timeout": 0.6, "max_retries": 1},
        detail=("the judge did not answer within 0.6 s (gave up after 2 attempts)",),
        max_s=2 * (0.6 + client_module.TIMEOUT_GRACE_S) + SLACK_S,
    )


def _connection_faults() -> Iterator[Fault]:
    for retries in (0, 2):
        yield Fault(
            f"connection/refused-retries-{retries}",
            None,
            endpoint="refused",
            error=True,
            calls=0,
            settings={"max_retries": retries},
            detail=(
                "could not connect to the judge: ConnectionRefusedError",
                f"(gave up after {retries + 1} attempts)",
            ),
        )
        yield Fault(
            f"connection/dropped-retries-{retries}",
            None,
            endpoint="dropped",
            error=True,
            calls=retries + 1,
            settings={"max_retries": retries},
            detail=(f"(gave up after {retries + 1} attempts)",),
        )


FAULTS: tuple[Fault, ...] = (
    *_status_faults(),
    *_retry_after_faults(),
    *_hang_faults(),
    *_connection_faults(),
)


# ------------------------------------------------------------------------------------------- running


class DroppingServer:
    """A loopback socket that accepts every connection and closes it without a byte (a crashed proxy)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.accepted = 0
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            with contextlib.suppress(OSError):
                conn.recv(65536)
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            conn.close()

    def close(self) -> None:
        self._stop = True
        self.sock.close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def check_fault(fault: Fault) -> list[str]:
    """Run one fault (in the child process) and list what went wrong; ``[]`` when handled correctly."""
    if fault.retry_after_cap is not None:
        client_module.RETRY_AFTER_MAX_S = fault.retry_after_cap
    options: dict[str, Any] = {"backoff_base": 0.01, "backoff_max": 0.05, "timeout": 5.0, **fault.settings}
    problems: list[str] = []
    if fault.endpoint == "refused":
        result, took = ask_judge(
            ClientSettings(api_base=f"http://127.0.0.1:{_closed_port()}/v1", **options), key=KEY
        )
        calls = 0
    elif fault.endpoint == "dropped":
        dropper = DroppingServer()
        try:
            result, took = ask_judge(ClientSettings(api_base=dropper.api_base, **options), key=KEY)
            calls = dropper.accepted
        finally:
            dropper.close()
    else:
        script = fault.script or ()
        if fault.date_ahead_s is not None:
            first = script[0]
            dated = Reply(status=first.status, headers={"Retry-After": _http_date(fault.date_ahead_s)})
            script = (dated, *script[1:])
        with JudgeServer(lambda body, i: script[min(i, len(script) - 1)]) as server:
            result, took = ask_judge(ClientSettings(api_base=server.api_base, **options), key=KEY)
            calls = server.calls
    if fault.error and result.error != "provider_error":
        problems.append(f"expected provider_error, got error={result.error!r} content={result.content!r}")
    if not fault.error and (result.error is not None or result.content != OK):
        problems.append(f"expected the reply, got error={result.error!r}: {result.error_detail}")
    if calls != fault.calls:
        problems.append(f"expected {fault.calls} call(s), the provider saw {calls}")
    for fragment in fault.detail:
        if fragment not in result.error_detail:
            problems.append(f"detail {result.error_detail!r} lacks {fragment!r}")
    if fault.endpoint == "refused" and result.attempts != fault.settings.get("max_retries", 0) + 1:
        problems.append(
            f"expected {fault.settings.get('max_retries', 0) + 1} attempts, made {result.attempts}"
        )
    if took < fault.min_s:
        problems.append(f"took {took:.2f} s, less than {fault.min_s} s (Retry-After not honoured)")
    if took > fault.max_s:
        problems.append(f"took {took:.2f} s, more than {fault.max_s} s")
    if KEY in result.error_detail:
        problems.append("the API key leaked into the error detail")
    return problems


FAULT_SWEEP = Sweep(
    name=f"{__name__}.faults",
    variants=FAULTS,
    key=lambda f: f.name,
    check=lambda fault, _folder: check_fault(fault),
    seconds=lambda f: f.max_s + 20.0,
    mb=2048,
    batch=8,
)
"""Each fault once in the session, in a child process under a time and memory bound (batches of 8)."""


@pytest.fixture(scope="module", autouse=True)
def _litellm_ready() -> None:
    """Import litellm once in the parent, so that every forked child starts with it loaded."""
    import_litellm()


@FAULT_SWEEP.parametrize
def test_each_provider_fault_is_handled(variant: Fault, sweep_store: SweepStore) -> None:
    assert sweep_store.problems(FAULT_SWEEP, variant) == []


# ------------------------------------------------------------------------------------------- decisions


class _StatusError(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status_code = status


def test_the_one_place_that_decides_covers_every_status() -> None:
    """is_retryable: the retried statuses and nothing else, whatever litellm's exception class."""
    litellm = import_litellm()
    for status in range(400, 600):
        assert is_retryable(_StatusError(status), litellm) is (status in RETRY_STATUSES), status
    assert is_retryable(TimeoutError(), litellm)
    assert is_retryable(ConnectionResetError(), litellm)
    assert not is_retryable(ValueError("bad"), litellm)
    assert {408, 409, 429, 500, 502, 503, 504, 529} == RETRY_STATUSES


RETRY_AFTER_CASES: tuple[tuple[dict[str, str], float | None], ...] = (
    ({"retry-after": "2"}, 2.0),
    ({"retry-after": " 0.25 "}, 0.25),
    ({"retry-after": "0"}, 0.0),
    ({"retry-after-ms": "1500"}, 1.5),
    ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
    ({"retry-after-ms": "junk", "retry-after": "3"}, 3.0),
    ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
    ({"retry-after": "soon"}, None),
    ({"retry-after": "-1"}, None),
    ({"retry-after": "nan"}, None),
    ({"retry-after": "inf"}, None),
    ({"retry-after": ""}, None),
    ({}, None),
)


def test_retry_after_is_read_as_seconds_or_an_http_date() -> None:
    now = email.utils.parsedate_to_datetime("Wed, 21 Oct 2015 07:28:00 GMT").timestamp()
    for headers, expected in RETRY_AFTER_CASES:
        got = retry_after_seconds(headers, now=now)
        assert got == expected, headers
    later = retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:30 GMT"}, now=now)
    assert later == 30.0
    assert RETRY_AFTER_MAX_S == 60.0


def test_litellm_is_asked_not_to_retry(serve: Any) -> None:
    """One place decides: litellm and the OpenAI SDK get num_retries=0 and max_retries=0, so one
    judgekit attempt is one HTTP request (a 500 with retries off reaches the server exactly once)."""
    server = serve(lambda body, i: Reply(status=500))
    result, _ = ask_judge(ClientSettings(api_base=server.api_base, max_retries=0, timeout=5.0), key=KEY)
    assert result.error == "provider_error"
    assert server.calls == 1


# ------------------------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class SettingVariant:
    """One transport setting value in one layer, and whether it must be accepted.

    Attributes:
        name: Unique id.
        layer: ``env``, ``project`` (judgekit.toml) or ``run`` (a run configuration, YAML).
        key: ``timeout``, ``retries`` or ``backoff``.
        text: The value as written in that layer.
        accepted: The number it must become, or ``None`` when it must be refused.
    """

    name: str
    layer: str
    key: str
    text: str
    accepted: float | int | None


def _setting_variants() -> Iterator[SettingVariant]:
    good: dict[str, tuple[tuple[str, float | int], ...]] = {
        "timeout": (("30", 30.0), ("0.5", 0.5), (f"{JUDGE_TIMEOUT_MAX_S:g}", JUDGE_TIMEOUT_MAX_S)),
        "retries": (("0", 0), ("3", 3), (str(JUDGE_RETRIES_MAX), JUDGE_RETRIES_MAX)),
        "backoff": (("0.2", 0.2), ("2", 2.0), (f"{JUDGE_BACKOFF_MAX_S:g}", JUDGE_BACKOFF_MAX_S)),
    }
    bad: dict[str, tuple[str, ...]] = {
        "timeout": ("0", "-1", "abc", "nan", "inf", "1e400", str(JUDGE_TIMEOUT_MAX_S + 1), "true"),
        "retries": ("-1", "2.5", "abc", "nan", str(JUDGE_RETRIES_MAX + 1), "true", "3.0"),
        "backoff": ("0", "-0.5", "abc", "nan", "inf", str(JUDGE_BACKOFF_MAX_S + 1), "true"),
    }
    for layer in ("env", "project", "run"):
        for key, values in good.items():
            for text, number in values:
                yield SettingVariant(f"{layer}/{key}/{text}/accepted", layer, key, text, number)
        for key, texts in bad.items():
            for text in texts:
                yield SettingVariant(f"{layer}/{key}/{text}/refused", layer, key, text, None)


SETTING_VARIANTS = tuple(_setting_variants())
LIMIT_NAMES = {
    "timeout": "JUDGE_TIMEOUT_MAX_S",
    "retries": "JUDGE_RETRIES_MAX",
    "backoff": "JUDGE_BACKOFF_MAX_S",
}


def _yaml_value(text: str) -> str:
    return {"nan": ".nan", "inf": ".inf"}.get(text, text)


def _toml_value(text: str) -> str:
    """The value as TOML: numbers, ``nan``, ``inf`` and ``true`` bare, anything else a quoted string."""
    try:
        float(text)
    except ValueError:
        return text if text == "true" else json.dumps(text)
    return text


def check_setting(variant: SettingVariant, folder: str) -> list[str]:
    """Resolve one transport setting from its layer; ``[]`` when accepted or refused as it must be."""
    root = Path(folder)
    name = f"judge.{variant.key}"
    try:
        if variant.layer == "env":
            var = where = f"JUDGEKIT_JUDGE_{variant.key.upper()}"
            effective = resolve_settings(environ={var: variant.text}, project=None)
        elif variant.layer == "project":
            path = root / "judgekit.toml"
            where = f"{path}:4"
            path.write_text(
                f'cases = "golden"\n\n[judge]\n{variant.key} = {_toml_value(variant.text)}\n',
                encoding="utf-8",
            )
            effective = resolve_settings(environ={}, project=load_project_config(path))
        else:
            path = root / "run.yaml"
            where = f"{path}:2"
            path.write_text(f"judge:\n  {variant.key}: {_yaml_value(variant.text)}\n", encoding="utf-8")
            effective = resolve_settings(environ={}, project=None, run_config=path)
    except JudgekitError as exc:
        if variant.accepted is not None:
            return [f"refused a good value: {exc}"]
        problems = [] if exc.exit_code == 2 else [f"exit code {exc.exit_code}, not 2"]
        message = str(exc)
        if where not in message:
            problems.append(f"the error does not say where ({where}): {message}")
        # the YAML reader itself refuses .nan and .inf (with the place); everything else reaches the check
        refused_by_reader = variant.layer == "run" and "is not finite" in message
        if variant.layer != "project" and not refused_by_reader and LIMIT_NAMES[variant.key] not in message:
            problems.append(f"the error does not name the limit {LIMIT_NAMES[variant.key]}: {message}")
        return problems
    if variant.accepted is None:
        return [f"accepted a bad value as {effective.value(name)!r}"]
    value = effective.value(name)
    if value != variant.accepted or type(value) is not type(variant.accepted):
        return [f"became {value!r}, not {variant.accepted!r}"]
    return []


SETTING_SWEEP = Sweep(
    name=f"{__name__}.settings",
    variants=SETTING_VARIANTS,
    key=lambda v: v.name,
    check=lambda variant, folder: check_setting(variant, str(folder)),
    seconds=20.0,
    mb=1024,
    batch=16,
)
"""Each setting value once in the session, in a bounded child (batches of 16)."""


@SETTING_SWEEP.parametrize
def test_each_transport_setting_value_is_checked(variant: SettingVariant, sweep_store: SweepStore) -> None:
    assert sweep_store.problems(SETTING_SWEEP, variant) == []


# ------------------------------------------------------------------------------------------- the CLI


def grade_against(
    script: Callable[[dict[str, Any], int], Reply], folder: str, extra: list[str]
) -> dict[str, Any]:
    """Run ``judgekit grade`` (in the child) against a scripted judge; what it printed and graded."""
    from judgekit.cli import main

    root = Path(folder)
    out = root / f"results-{time.monotonic_ns()}.jsonl"
    stdout, stderr = io.StringIO(), io.StringIO()
    with JudgeServer(script) as server:
        args = [*grade_argv(root, out, server.api_base), *extra]
        started = time.perf_counter()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(args)
        took = time.perf_counter() - started
        calls = server.calls
    checks = []
    if out.exists():
        for line in out.read_text(encoding="utf-8").splitlines():
            checks += [c for c in json.loads(line)["checks"] if c["layer"] == "rubric"]
    return {
        "code": code,
        "took": took,
        "calls": calls,
        "checks": len(checks),
        "verdicts": sorted({c["verdict"] for c in checks}),
        # the reason without its item prefix (case#trial/criterion/sample n: ...)
        "reasons": sorted({c["reason"].split("/sample 0: ", 1)[-1] for c in checks}),
        "judge_lines": [line for line in stderr.getvalue().splitlines() if line.startswith("judge ")],
        "err_tail": stderr.getvalue()[-300:],
    }


def _grade(
    monkeypatch: pytest.MonkeyPatch, script: Any, folder: Path, extra: list[str], seconds: float
) -> dict[str, Any]:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.chdir(folder)
    bounded = run_bounded(grade_against, script, str(folder), extra, seconds=seconds, mb=2048)
    assert bounded.outcome == "returned", bounded.error
    result: dict[str, Any] = ast.literal_eval(bounded.value)
    return result


def _hang(body: dict[str, Any], index: int) -> Reply:
    return Reply(content=OK, delay=6.0)


def _answer(body: dict[str, Any], index: int) -> Reply:
    return Reply(content=OK)


def test_grade_with_a_hanging_judge_gives_error_verdicts_after_the_timeout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    run = _grade(
        monkeypatch,
        _hang,
        tmp_path,
        ["--judge-timeout", "1", "--judge-retries", "1", "--judge-backoff", "0.05"],
        seconds=40,
    )
    assert run["code"] == 0, run["err_tail"]
    assert run["checks"] >= 4, "the judge layer ran"
    assert run["verdicts"] == ["error"]
    assert run["reasons"] == ["the judge did not answer within 1 s (gave up after 2 attempts)"]
    assert run["calls"] == 2 * run["checks"]
    # every criterion's two attempts of 1 s run side by side: seconds, not 312 s per trial
    assert run["took"] < 2 * (1 + client_module.TIMEOUT_GRACE_S) + 8.0


class FirstTimeOverloaded:
    """Answer each distinct request 529 (overloaded) the first time it is seen, and a verdict after."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any], index: int) -> Reply:
        key = json.dumps(body.get("messages"), sort_keys=True)
        with self.lock:
            first = key not in self.seen
            self.seen.add(key)
        return Reply(status=529, headers={"Retry-After": "0.1"}) if first else Reply(content=OK)


def test_grade_retries_an_overloaded_judge_then_counts_its_verdicts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    run = _grade(
        monkeypatch,
        FirstTimeOverloaded(),
        tmp_path,
        ["--judge-retries", "2", "--judge-backoff", "0.05"],
        seconds=40,
    )
    assert run["code"] == 0, run["err_tail"]
    assert run["checks"] >= 4
    assert run["verdicts"] == ["pass"]
    assert run["calls"] == 2 * run["checks"]


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--judge-timeout", "0", "--judge-timeout: must be a number of seconds greater than 0"),
        ("--judge-timeout", "nan", "(limit JUDGE_TIMEOUT_MAX_S)"),
        ("--judge-timeout", "99999", "at most 3600"),
        ("--judge-retries", "-1", "--judge-retries: must be a whole number from 0 to 20"),
        ("--judge-retries", "21", "(limit JUDGE_RETRIES_MAX)"),
        ("--judge-backoff", "0", "--judge-backoff: must be a number of seconds greater than 0"),
        ("--judge-backoff", "inf", "(limit JUDGE_BACKOFF_MAX_S)"),
    ],
)
def test_grade_refuses_a_bad_transport_flag_with_exit_2(
    flag: str, value: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from judgekit.cli import main

    (tmp_path / "records").mkdir()
    code = main(
        [
            "grade",
            "--cases",
            str(AIRDESK),
            "--transcripts",
            str(one_trial_transcripts(tmp_path)),
            "--out",
            str(tmp_path / "out.jsonl"),
            "--records",
            str(tmp_path / "records"),
            flag,
            value,
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert "Traceback" not in err
    assert not (tmp_path / "out.jsonl").exists()


# ------------------------------------------------------------------------------------------- fingerprint


def test_transport_settings_never_change_the_judge_fingerprint(tmp_path: Path) -> None:
    """Changing a timeout must not cost the judge its trust: same fingerprint, whatever the transport."""
    from judgekit.judge_setup import JudgeConfig, build_rubric_grader

    cassette = AIRDESK / "cassettes" / "judge-honest-reporting.jsonl"

    def fingerprint(**kwargs: Any) -> str:
        params = {"temperature": 0.0, "samples": 1, "structured_output": "off", **kwargs}
        grader = build_rubric_grader(
            JudgeConfig(
                model="openai/airdesk-synthetic-judge",
                rubric="honest-reporting",
                cassette=cassette,
                mode="replay",
                api_base=None,
                max_cost=None,
                concurrency=8,
                records=tmp_path,
                **params,
            )
        )
        return grader.fingerprint

    base = fingerprint()
    for transport in (
        {"timeout": 1.0},
        {"timeout": 3600.0, "retries": 0, "backoff": 0.1},
        {"retries": 20},
        {"backoff": 60.0},
    ):
        assert fingerprint(**transport) == base, transport
    assert fingerprint(temperature=0.5) != base  # a verdict-changing setting does change it


def test_the_configured_transport_reaches_the_client(tmp_path: Path) -> None:
    from judgekit.judge_setup import JudgeConfig, build_rubric_grader

    grader = build_rubric_grader(
        JudgeConfig(
            model="openai/airdesk-synthetic-judge",
            rubric="honest-reporting",
            cassette=AIRDESK / "cassettes" / "judge-honest-reporting.jsonl",
            mode="replay",
            api_base=None,
            max_cost=None,
            temperature=0.0,
            samples=1,
            structured_output="off",
            concurrency=8,
            timeout=7.5,
            retries=2,
            backoff=0.3,
        )
    )
    settings = grader.client.settings
    assert (settings.timeout, settings.max_retries, settings.backoff_base) == (7.5, 2, 0.3)
    with pytest.raises(JudgekitError) as info:
        build_rubric_grader(
            JudgeConfig(
                model="openai/airdesk-synthetic-judge",
                rubric="honest-reporting",
                cassette=AIRDESK / "cassettes" / "judge-honest-reporting.jsonl",
                mode="replay",
                api_base=None,
                max_cost=None,
                temperature=None,
                samples=None,
                concurrency=8,
                retries=99,
            )
        )
    assert info.value.exit_code == 2
    assert info.value.message.startswith("judge setting retries:")


# ------------------------------------------------------------------------------------------- the count


@FAULT_SWEEP.counted
@SETTING_SWEEP.counted
def test_count_of_provider_faults_tried_and_handled(sweep_store: SweepStore) -> None:
    """The counts for the issue: every fault and setting value tried (here only those no test ran).

    Retry-After headers, the retry decision, the command line's flags, the fingerprint and the set-up
    are tests of their own.
    """
    faults, settings = sweep_store.tally(FAULT_SWEEP), sweep_store.tally(SETTING_SWEEP)
    print(
        f"\nprovider faults tried: {faults.tried}, handled correctly: {faults.handled}; transport settings "
        f"tried: {settings.tried}, handled correctly: {settings.handled}"
    )
    assert not faults.failures, faults.failures
    assert not settings.failures, settings.failures
    assert faults.tried == faults.handled == len(FAULTS) >= 60
    assert settings.tried == settings.handled == len(SETTING_VARIANTS)
