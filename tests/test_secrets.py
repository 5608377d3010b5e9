import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from judgekit.secrets import _PATTERNS as _SECRET_PATTERNS
from judgekit.secrets import REDACTED, Redactor, is_secret_name, redact, redact_text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        pytest.param(
            "key sk-proj-abcdefghijklmnop1234567890 used", "sk-proj-abcdefghijklmnop1234567890", id="openai"
        ),
        pytest.param("sk-ant-api03-AbCdEfGhIjKlMnOp", "sk-ant-api03-AbCdEfGhIjKlMnOp", id="anthropic"),
        pytest.param("aws AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE", id="aws"),
        pytest.param("ghp_0123456789abcdefghijABCDEFGHIJ", "ghp_0123456789abcdefghijABCDEFGHIJ", id="github"),
        pytest.param("Authorization: Bearer s3cr3t-t0ken-value", "s3cr3t-t0ken-value", id="auth_header"),
        pytest.param("authorization=Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA==", id="basic"),
        pytest.param("x-api-key: abcdef123456", "abcdef123456", id="x_api_key_header"),
        pytest.param("https://api.example.com/v1?api_key=AbC123xyz&x=1", "AbC123xyz", id="url_query_key"),
        pytest.param("https://h.example/p?x=1&token=tok_998877", "tok_998877", id="url_query_token"),
        pytest.param("https://h.example/p#access_token=frag0987", "frag0987", id="url_fragment_token"),
        pytest.param("https://alice:hunter2pw@db.example.com/x", "hunter2pw", id="url_userinfo"),
        pytest.param("eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4", "SflKxwRJSMeKKF2QT4", id="jwt"),
    ],
)
def test_shapes_are_redacted(text, secret):
    out = redact_text(text)
    assert secret not in out
    assert REDACTED in out


def test_url_keeps_its_harmless_parts():
    out = redact_text("https://api.example.com/v1/chat?model=gpt-4o&api_key=zzzzzzzz")
    assert out == f"https://api.example.com/v1/chat?model=gpt-4o&api_key={REDACTED}"


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("OPENAI_API_KEY", True),
        ("api_key", True),
        ("Authorization", True),
        ("GITHUB_TOKEN", True),
        ("db_password", True),
        ("x-api-key", True),
        ("client_secret", True),
        ("max_tokens", False),
        ("prompt_tokens", False),
        ("keyboard", False),
        ("monkey", False),
        ("tokenizer", False),
        ("temperature", False),
        ("judge.input_cost_per_token", False),  # a price, shown by judgekit config
        ("output_cost_per_token", False),
        ("refresh_token", True),
    ],
)
def test_secret_names(name, secret):
    assert is_secret_name(name) is secret


def test_known_values_from_environment_are_removed_anywhere():
    env = {"MY_SERVICE_TOKEN": "plainvalue-no-shape", "HOME": "/home/user", "SHORT_TOKEN": "ab"}
    r = Redactor(environ=env)
    assert r.known_count == 1
    assert r.text("prefix plainvalue-no-shape suffix") == f"prefix {REDACTED} suffix"
    assert r.text("/home/user stays") == "/home/user stays"
    assert r.text("ab stays: too short to be a known secret") == "ab stays: too short to be a known secret"


def test_data_redacts_by_key_name_and_keeps_structure():
    data = {
        "judge": {"api_base": "https://x.example/v1?key=abcdef123", "api_key": "anything at all", "n": 3},
        "headers": {"Authorization": "Bearer qwertyuiop123", "Accept": "json"},
        "max_tokens": 200,
        "list": ["sk-abcdefghijklmnopqrstuv", 1.5, None],
        "empty_token": None,
    }
    out = redact(data)
    text = json.dumps(out)
    for secret in ("abcdef123", "anything at all", "qwertyuiop123", "sk-abcdefghijklmnopqrstuv"):
        assert secret not in text
    assert out["max_tokens"] == 200
    assert out["judge"]["n"] == 3
    assert out["headers"]["Accept"] == "json"
    assert out["empty_token"] is None
    assert out["list"][1:] == [1.5, None]


def test_redacting_serialised_json_keeps_it_valid():
    payload = json.dumps(
        {"msg": 'Authorization: Bearer abcdefghij "quoted"', "u": "https://a:b1234@h/x?token=q1"}
    )
    out = redact_text(payload)
    parsed = json.loads(out)
    assert "abcdefghij" not in out
    assert "b1234" not in out
    assert parsed["u"].startswith("https://")


def test_longer_known_secret_removed_whole():
    r = Redactor(["abcdef", "abcdefghijkl"])
    assert r.text("x abcdefghijkl y") == f"x {REDACTED} y"


@given(st.text(max_size=200))
def test_redaction_is_idempotent_and_never_raises(text):
    once = redact_text(text)
    assert redact_text(once) == once


@given(st.from_regex(r"[A-Za-z0-9]{20,30}", fullmatch=True), st.text(max_size=40))
def test_an_openai_key_in_any_context_is_removed(body, context):
    key = "sk-" + body
    out = redact_text(context + " " + key + " " + context)
    assert key not in out


def test_json_line_equals_structured_redaction_and_stays_valid():
    r = Redactor(['quote"inside-secret', "plain-known-secret"])
    data = {
        "a": 'has quote"inside-secret here',
        "b": ["plain-known-secret", {"Authorization": "Bearer abcdefghijkl", "n": 1}],
        "c": "Authorization: Bearer qwertyuiopas and https://u:pw12345@h/x?token=t0k3n",
        "d": "ünïcödé stays",
    }
    line = r.json_line(data)
    assert json.loads(line) == r.data(data)
    for secret in (
        'quote"inside-secret',
        "plain-known-secret",
        "abcdefghijkl",
        "qwertyuiopas",
        "pw12345",
        "t0k3n",
    ):
        assert secret not in line
        assert secret not in json.loads(line).__repr__()
    assert r.known_count == 2


@given(st.dictionaries(st.text(max_size=12), st.text(max_size=60), max_size=6))
def test_json_line_matches_data_for_any_input(data):
    r = Redactor(["hunter2-secret"])
    assert json.loads(r.json_line(data)) == r.data(data)


def test_plain_prose_about_tokens_is_left_alone():
    text = "The token generation failed; a basic explanation follows. Bearer of bad news."
    assert redact_text(text) == text


def test_working_directory_variables_are_not_secrets() -> None:
    from judgekit.secrets import Redactor, is_secret_name

    assert not is_secret_name("PWD")
    assert not is_secret_name("OLDPWD")
    assert is_secret_name("DB_PWD")
    redactor = Redactor(environ={"PWD": "/home/alice/project", "DB_PWD": "hunter2-long-enough"})
    assert redactor.text("/home/alice/project/runs.jsonl") == "/home/alice/project/runs.jsonl"
    assert "hunter2-long-enough" not in redactor.text("saved hunter2-long-enough here")


def test_output_redactor_knows_registered_values_and_the_environment_as_it_is_now(monkeypatch):
    from judgekit.secrets import output_redactor, register_secret

    register_secret("registered-secret-value-1")
    register_secret("abc")  # too short: ignored
    monkeypatch.setenv("MY_SERVICE_PASSWORD", "env-password-value")
    text = output_redactor().payload("registered-secret-value-1 env-password-value abc")
    assert text == "[REDACTED] [REDACTED] abc"
    monkeypatch.delenv("MY_SERVICE_PASSWORD")
    assert output_redactor().payload("env-password-value") == "env-password-value"


def test_payload_leaves_escaped_literals_without_a_secret_byte_for_byte():
    from judgekit.secrets import Redactor

    text = 'x = {"a": "caf\\u00e9 \\/ <b>", "b": "\\u0041"};'
    assert Redactor().payload(text) == text


_FRAGMENTS = (
    "sk-",
    "SK-",
    "sk-ant-",
    "sk-proj-",
    "AKIA",
    "ASIA",
    "akia",
    "ghp_",
    "gho_",
    "github_pat_",
    "xoxb-",
    "xox",
    "AIza",
    "hf_",
    "eyJ",
    ".",
    "Bearer",
    "BASIC",
    "basic ",
    "bearer\t",
    "baſic",
    "BEARER ",
    " ",
    "-",
    "_",
    "=",
    "\n",
    "é",
    "İ",
    "\u212a",
    "x",
    "Q",
    "7",
    "AAAAAAAAAAAAAAAA",
    "a1b2c3d4e5f6g7h8i9j0",
    "Zz9-",
)


@given(st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=4)), max_size=40).map("".join))
def test_located_substitution_is_the_whole_text_substitution(text: str) -> None:
    """Trying each key-shape pattern only where its locator finds a start gives re.sub's exact result."""
    from judgekit.secrets import _PATTERNS, _sub_at

    located = [(pattern, replacement, locator) for _, pattern, replacement, locator in _PATTERNS if locator]
    assert len(located) == 10
    for pattern, replacement, locator in located:
        assert _sub_at(locator, pattern, replacement, text) == pattern.sub(replacement, text), pattern.pattern


_TRIGGERS = sorted({t for triggers, *_ in _SECRET_PATTERNS for t in triggers})


@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                [*_FRAGMENTS, *_TRIGGERS, *(t.upper() for t in _TRIGGERS), "\u0130", "s\u212aa", "\ud800"]
            ),
            st.text(max_size=4),
        ),
        max_size=40,
    ).map("".join)
)
def test_a_trigger_is_found_exactly_when_it_occurs_in_the_lower_cased_text(text: str) -> None:
    """The byte search answers ``trigger in text.lower()`` for each trigger, beyond ASCII and gated ones."""
    from judgekit.secrets import _TriggerSearch

    search = _TriggerSearch(text)
    lowered = text.lower()
    for trigger in _TRIGGERS:
        assert search(trigger) == (trigger in lowered), trigger


@pytest.mark.parametrize("trigger", _TRIGGERS)
def test_each_trigger_is_found_alone_in_any_case_and_inside_text(trigger: str) -> None:
    """Every trigger, its gate's text included, is found where it occurs (and not where it does not)."""
    from judgekit.secrets import _TRIGGER_GATES, _TriggerSearch

    assert set(_TRIGGER_GATES) <= set(_TRIGGERS)
    for text in (trigger, trigger.upper(), f"é—{trigger.title()} x"):
        assert _TriggerSearch(text)(trigger), text
    assert not _TriggerSearch(trigger[:-1] + "é")(trigger)


def test_the_two_characters_that_lower_case_to_ascii_are_the_only_ones() -> None:
    """Every other character beyond ASCII lower-cases to characters beyond ASCII (as the search needs)."""
    from judgekit.secrets import _LOWER_TO_ASCII

    found = tuple(
        chr(c)
        for c in range(0x80, 0x110000)
        if not 0xD800 <= c < 0xE000 and any(ord(x) < 0x80 for x in chr(c).lower())
    )
    assert found == _LOWER_TO_ASCII


def test_a_kelvin_sign_still_triggers_the_pattern_it_spells() -> None:
    """``coo\u212aie`` lower-cases to ``cookie``, so the header pattern runs (re matches K to k too)."""
    assert Redactor().text("Coo\u212aie: session=abc123") == "Coo\u212aie: [REDACTED]"
