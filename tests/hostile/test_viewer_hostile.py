"""Hostile input to ``judgekit view`` (issue 33, F1 and F10): secrets in every transcript field, Host headers.

* **Secrets**: each shape (an environment secret's value, one holding ``<`` and ``"``, ``sk-``,
  ``sk-ant-``, ``AKIA``, ``ghp_``, a ``Bearer`` header, a JSON web token, a URL's user-info password, a
  ``?api_key=`` parameter, a credential-named argument) in each transcript field (user text, assistant
  text, tool result, tool call arguments, unparseable raw arguments). Every variant is one trial of one
  results file; one ``judgekit view`` child process (with the secret in its environment) writes the folder,
  and each variant checks that no form of its secret (as is, JSON-escaped, ``<`` as ``\\u003c``) is in
  any file while the text around it is kept.
* **Host headers**: a ``judgekit view --serve`` child process is asked with each header a browser could
  send; only ``127.0.0.1``/``localhost`` (with the port served, or none) are answered, everything else 403.

The last test counts what was tried and handled correctly.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hostile.sweep import Sweep, SweepStore
from judgekit.results import CaseRef, TrialSource, dump_result_line, make_result_line
from judgekit.verdict import Grade, Verdict
from support import CLI_CHILD, child_env, one_trial_results, serving_viewer, status_for_host

ENV_NAME = "HOSTILE_VIEWER_API_KEY"
ENV_VALUE = "hv-7Qm2Lx9Wp4Rt8Zk"
ENV_ESCAPED = 'hv<"2\\Lx9Wp</script>4Rt'

SECRETS: dict[str, tuple[str, str]] = {
    # name: (text placed in the field, the secret that must not appear)
    "env-value": (f"token {ENV_VALUE} end", ENV_VALUE),
    "env-value-with-lt-quote": (f"token {ENV_ESCAPED} end", ENV_ESCAPED),
    "sk": ("key sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t end", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t"),
    "sk-ant": ("key sk-ant-api03-Zx8Cv7Bn6Mq5Wr4T end", "sk-ant-api03-Zx8Cv7Bn6Mq5Wr4T"),
    "akia": ("aws AKIAIOSFODNN7EXAMPLE end", "AKIAIOSFODNN7EXAMPLE"),
    "ghp": ("gh ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7 end", "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7"),
    "bearer": ("Authorization: Bearer eyQ7vX2mN9pL4kJ8hG3fD6sA1zW5", "eyQ7vX2mN9pL4kJ8hG3fD6sA1zW5"),
    "jwt": (
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N end",
        "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
    ),
    "url-userinfo": ("db https://admin:Pa55w0rdXyz@db.example/x end", "Pa55w0rdXyz"),
    "url-api-key": ("get https://api.example/v1?api_key=qk83hf72nd92 end", "qk83hf72nd92"),
}

FIELDS = ("user", "assistant", "tool_result", "arguments", "raw_arguments")


def _messages(field: str, text: str) -> list[dict[str, Any]]:
    arguments = json.dumps({"note": text}) if field == "arguments" else "{}"
    if field == "raw_arguments":
        arguments = "{not json " + text
    return [
        {"role": "user", "content": text if field == "user" else "hello"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "lookup", "arguments": arguments}}
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": text if field == "tool_result" else "ok"},
        {"role": "assistant", "content": text if field == "assistant" else "done"},
    ]


SECRET_VARIANTS = [(name, field) for name in SECRETS for field in FIELDS] + [("credential-key", "arguments")]

HOSTS: list[tuple[str, str | None, int]] = [
    # name, Host header ({port} replaced; None: no header), expected status
    ("ip-with-port", "127.0.0.1:{port}", 200),
    ("localhost-with-port", "localhost:{port}", 200),
    ("localhost-bare", "localhost", 200),
    ("ip-bare", "127.0.0.1", 200),
    ("localhost-upper", "LOCALHOST:{port}", 200),
    ("foreign", "evil.example", 403),
    ("foreign-with-port", "evil.example:{port}", 403),
    ("loopback-prefix", "127.0.0.1.evil.example:{port}", 403),
    ("localhost-prefix", "localhost.evil.example", 403),
    ("localhost-trailing-dot", "localhost.:{port}", 403),
    ("other-port", "127.0.0.1:1", 403),
    ("ipv6-loopback", "[::1]:{port}", 403),
    ("any-address", "0.0.0.0:{port}", 403),
    ("decimal-ip", "2130706433:{port}", 403),
    ("userinfo", "localhost@evil.example", 403),
    ("empty", "", 403),
    ("missing", None, 403),
    ("two-headers", "127.0.0.1:{port}\nevil.example", 403),
    ("space-inside", "local host", 403),
    ("port-garbage", "localhost:{port}x", 403),
]


def _forms(secret: str) -> set[str]:
    forms = {secret, json.dumps(secret, ensure_ascii=False)[1:-1], json.dumps(secret)[1:-1]}
    return forms | {f.replace("<", "\\u003c") for f in forms}


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One viewer of every secret variant (one trial each), written by ``judgekit view`` in a child."""
    folder = tmp_path_factory.mktemp("viewer-hostile")
    transcripts = folder / "transcripts.jsonl"
    lines = []
    with transcripts.open("w", encoding="utf-8") as out:
        for n, (name, field) in enumerate(SECRET_VARIANTS):
            if name == "credential-key":
                messages = _messages("user", "hello")
                messages[1]["tool_calls"][0]["function"]["arguments"] = json.dumps(
                    {"api_key": "plainvalue123"}
                )
            else:
                messages = _messages(field, SECRETS[name][0])
            raw = json.dumps({"case_id": f"c-{n}", "trial": 1, "messages": messages})
            out.write(raw + "\n")
            grade = Grade(case_id=f"c-{n}", trial=1, verdict=Verdict.FAIL, checks=())
            lines.append(
                make_result_line(
                    run_id="r",
                    case=CaseRef(id=f"c-{n}", version=1),
                    grade=grade,
                    source=TrialSource(
                        file=str(transcripts), line=n + 1, sha256=hashlib.sha256(raw.encode()).hexdigest()
                    ),
                )
            )
    results = folder / "results.jsonl"
    results.write_text("".join(dump_result_line(line) + "\n" for line in lines), encoding="utf-8")
    out = folder / "v"
    done = subprocess.run(
        [*CLI_CHILD, "view", str(results), "--out", str(out)],
        capture_output=True,
        text=True,
        env=child_env(**{ENV_NAME: ENV_VALUE, "HOSTILE_VIEWER_TOKEN": ENV_ESCAPED}),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    files = {str(p.relative_to(out)): p.read_text("utf-8") for p in out.rglob("*") if p.is_file()}
    chunk = json.loads(
        re.fullmatch(r"window\.JK_CHUNK\(0, 0, (.*)\);\n", files["data/run0/chunk-0.js"], re.S)[1]
    )
    return {"files": files, "details": chunk}


def _secret_outcome(viewer: dict[str, Any], n: int, name: str, field: str) -> tuple[bool, str]:
    secret = "plainvalue123" if name == "credential-key" else SECRETS[name][1]
    found = [
        f"{path}: {form}" for path, text in viewer["files"].items() for form in _forms(secret) if form in text
    ]
    if found:
        return False, f"leaked: {found}"
    detail = viewer["details"][n]
    if detail["messages"] is None:
        return False, f"transcript not shown: {detail['transcript_unavailable']}"
    shown = json.dumps(detail["messages"], ensure_ascii=False)
    if "[REDACTED]" not in shown:
        return False, "the secret is gone but no [REDACTED] marks where it was"
    return True, ""


def _secret_check(variant: tuple[str, str], _folder: Path, viewer: dict[str, Any]) -> list[str]:
    ok, what = _secret_outcome(viewer, SECRET_VARIANTS.index(variant), *variant)
    return [] if ok else [what]


SECRET_SWEEP = Sweep(
    name=f"{__name__}.secrets",
    variants=SECRET_VARIANTS,
    key=lambda v: f"secret/{v[0]}/{v[1]}",
    check=_secret_check,
    bounded=False,
    ids=lambda v: f"{v[0]}-in-{v[1]}",
)
"""Each secret in each field once in the session, looked for in the viewer's files."""


@SECRET_SWEEP.parametrize
def test_no_secret_of_any_shape_in_any_field_reaches_the_viewer(
    viewer: dict[str, Any], variant: tuple[str, str], sweep_store: SweepStore
) -> None:
    assert sweep_store.problems(SECRET_SWEEP, variant, viewer) == []


# --------------------------------------------------------------------------- Host headers


@pytest.fixture(scope="module")
def served(viewer: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The port of a ``judgekit view --serve`` child process."""
    folder = tmp_path_factory.mktemp("serve-hostile")
    with serving_viewer(one_trial_results(folder / "r.jsonl"), folder / "v") as port:
        yield port


def _host_check(variant: tuple[str, str | None, int], _folder: Path, served: int) -> list[str]:
    _, header, expected = variant
    status = status_for_host(
        served, None if header is None else header.replace("{port}", str(served)), "/data/index.js"
    )
    return [] if status == expected else [f"status {status}, not {expected}"]


HOST_SWEEP = Sweep(
    name=f"{__name__}.hosts",
    variants=HOSTS,
    key=lambda v: f"host/{v[0]}",
    check=_host_check,
    bounded=False,
    ids=lambda v: v[0],
)
"""Each Host header once in the session, sent to the served viewer."""


@HOST_SWEEP.parametrize
def test_only_loopback_host_headers_are_answered(
    served: int, variant: tuple[str, str | None, int], sweep_store: SweepStore
) -> None:
    assert sweep_store.problems(HOST_SWEEP, variant, served) == []


# --------------------------------------------------------------------------- the count


@SECRET_SWEEP.counted
@HOST_SWEEP.counted
def test_every_viewer_variant_tried_is_handled_correctly(
    viewer: dict[str, Any], served: int, sweep_store: SweepStore
) -> None:
    """Counts the secret and Host variants tried and handled correctly: the issue's "What to show"."""
    secrets, hosts = sweep_store.tally(SECRET_SWEEP, viewer), sweep_store.tally(HOST_SWEEP, served)
    tried, handled = secrets.tried + hosts.tried, secrets.handled + hosts.handled
    print(
        f"\nviewer: tried: {tried}, handled correctly: {handled} "
        f"({len(SECRET_VARIANTS)} secrets in transcript fields, {len(HOSTS)} Host headers)"
    )
    assert tried == len(SECRET_VARIANTS) + len(HOSTS) >= 70
    assert handled == tried, sorted([*secrets.failures, *hosts.failures])
