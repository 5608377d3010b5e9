"""Redaction of secrets before anything is written: API keys, tokens inside URLs, authorisation headers.

judgekit writes results, run records, reports and caches that people commit and share. Nothing that can
authenticate to a service may end up in them. :class:`Redactor` removes three kinds of secret from any
JSON-like value or text:

* **Known values**: the literal values of environment variables whose names say they hold a secret
  (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``...), and any extra
  values a caller registers. These are replaced wherever they occur, whatever their shape.
* **Shapes**: well-known key formats (``sk-...``, ``sk-ant-...``, ``AKIA...``, ``ghp_...``, ``xox?-...``,
  ``AIza...``, JSON web tokens), ``Authorization:``/``Proxy-Authorization:``/``X-Api-Key:`` header lines,
  ``Bearer``/``Basic`` credentials, credentials in a URL's user-info (``https://user:pass@host``) and
  credential-like query parameters (``?api_key=``, ``token=``, ``access_token=``, ``sig=``...).
* **Field names**: in mappings, the value of a key named like a credential (``api_key``, ``authorization``,
  ``password``, ``secret``, ``token``, ``x-api-key``, ``cookie``...) is replaced whole.

The replacement is the fixed text ``[REDACTED]`` (JSON-safe, so redacting serialised JSON keeps it valid).
Redaction is a pure function of the input and the redactor's known values; it never raises on odd input.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = [
    "REDACTED",
    "Redactor",
    "is_secret_name",
    "output_redactor",
    "redact",
    "redact_text",
    "register_secret",
]

REDACTED = "[REDACTED]"
"""What every secret is replaced with."""

_SECRET_NAME = re.compile(
    r"(?:^|[_\-.])(?:api[_\-.]?key|apikey|access[_\-.]?key|secret(?:[_\-.]?key)?|client[_\-.]?secret|"
    r"password|passwd|pwd|token|access[_\-.]?token|refresh[_\-.]?token|id[_\-.]?token|auth[_\-.]?token|"
    r"session[_\-.]?token|bearer|authorization|proxy[_\-.]?authorization|cookie|set[_\-.]?cookie|"
    r"private[_\-.]?key|credentials?|signature|sig)(?:$|[_\-.])",
    re.IGNORECASE,
)
"""A field or variable name that says its value is a credential (matched on word-ish boundaries)."""

# Names that match the pattern above but hold no secret (counts, flags, budget fields).
_NOT_SECRET_NAMES = frozenset(
    {
        "max_tokens",
        "tokens",
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "token_count",
        "max_completion_tokens",
        # Shell variables for the working directory: "pwd" here means "print working directory".
        "pwd",
        "oldpwd",
    }
)

_PATTERNS: tuple[tuple[tuple[str, ...], re.Pattern[str], str, re.Pattern[str] | None], ...] = (
    # Each entry: lower-case triggers (the pattern runs only when one occurs in the text), pattern,
    # replacement, and a locator. The triggers keep redaction cheap on long texts that hold no secret. A
    # locator finds every place a match of the pattern can start (each match starts with what it finds),
    # so the pattern is tried there only (:func:`_sub_at`) instead of at every position of the text: a
    # pattern that opens with ``\b`` or ``(?i)`` gets no literal-prefix search from ``re`` and costs about
    # 30 ms per MB tried everywhere. ``None``: the pattern runs over the whole text.
    #
    # Header lines: "Authorization: Bearer abc", "x-api-key: abc" (value up to the end of line or a quote).
    (
        ("authorization", "api-key", "cookie"),
        re.compile(
            r"(?i)\b((?:proxy-)?authorization|x-api-key|api-key|x-goog-api-key|cookie|set-cookie)"
            r"(\s*[:=]\s*)(?:\\?\"?)([^\r\n\"\\]+)"
        ),
        r"\1\2" + REDACTED,
        None,
    ),
    # Bearer / Basic credentials anywhere; a credential has a digit or is long, so that "a basic
    # explanation" stays prose.
    (
        ("bearer", "basic"),
        re.compile(
            r"(?i)\b(bearer|basic)\s+"
            r"((?=[A-Za-z\-._~+/]*[0-9])[A-Za-z0-9\-._~+/]{8,}=*|[A-Za-z0-9\-._~+/]{20,}=*)"
        ),
        r"\1 " + REDACTED,
        re.compile(r"(?i)bearer|basic"),
    ),
    # Credentials in a URL's user-info: scheme://user:pass@host
    (
        ("://",),
        re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^\s/@:\"']+):([^\s/@\"']+)@"),
        r"\1" + REDACTED + "@",
        None,
    ),
    # Credential-like query or fragment parameters.
    (
        ("=",),
        re.compile(
            r"(?i)([?&#;](?:api[_\-]?key|apikey|key|token|access[_\-]?token|auth|auth[_\-]?token|sig|"
            r"signature|secret|password|pwd|client[_\-]?secret|code|x-amz-signature|x-amz-credential|"
            r"x-amz-security-token)=)([^&#\s\"'<>\\]+)"
        ),
        r"\1" + REDACTED,
        None,
    ),
    # Well-known key shapes.
    (("sk-ant-",), re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{10,}"), REDACTED, re.compile(r"sk-ant-")),
    (
        ("sk-",),
        re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}"),
        REDACTED,
        re.compile(r"sk-"),
    ),
    (("akia", "asia"), re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), REDACTED, re.compile(r"AKIA|ASIA")),
    (
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
        REDACTED,
        re.compile(r"gh[pousr]_"),
    ),
    (("github_pat_",), re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"), REDACTED, re.compile(r"github_pat_")),
    (("xox",), re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"), REDACTED, re.compile(r"xox[abposr]-")),
    (("aiza",), re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"), REDACTED, re.compile(r"AIza")),
    (("hf_",), re.compile(r"\bhf_[A-Za-z0-9]{20,}"), REDACTED, re.compile(r"hf_")),
    (
        ("eyj",),
        re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
        REDACTED,
        re.compile(r"eyJ"),
    ),
)


def _sub_at(locator: re.Pattern[str], pattern: re.Pattern[str], replacement: str, value: str) -> str:
    """``pattern.sub(replacement, value)``, trying the pattern only where ``locator`` finds a possible start.

    Every match of ``pattern`` must start at a place where ``locator`` matches; the places are searched one
    position after another (overlapping ones included), and matches are taken left to right without
    overlap, as ``re.sub`` takes them, so the result is the same string.
    """
    pieces: list[str] = []
    last = pos = 0
    while (found := locator.search(value, pos)) is not None:
        start = found.start()
        match = pattern.match(value, start)
        if match is None:
            pos = start + 1
            continue
        pieces += (value[last:start], match.expand(replacement))
        last = pos = match.end()
    if not pieces:
        return value
    pieces.append(value[last:])
    return "".join(pieces)


_TRIGGER_GATES: dict[str, str] = {
    "sk-ant-": "sk-",
    **dict.fromkeys(("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), "gh"),
}
"""A shorter text each of these triggers contains: when it does not occur, neither does the trigger (one
search instead of several)."""

_LOWER_TO_ASCII = ("\u0130", "\u212a")
"""The only characters beyond ASCII whose ``str.lower()`` holds an ASCII character (``İ`` gives ``i`` and a
combining dot, the Kelvin sign ``K`` gives ``k``); every other one lower-cases to characters beyond ASCII."""


class _TriggerSearch:
    """Whether a trigger occurs in a text lower-cased (``trigger in text.lower()``), answered cheaply.

    The triggers are ASCII, so only the text's ASCII characters can form one; beyond ASCII, every
    character lower-cases to characters beyond ASCII (but :data:`_LOWER_TO_ASCII`), which in UTF-8 are
    bytes above 127. The text's UTF-8 bytes with ``A-Z`` lower-cased therefore hold a trigger exactly when
    the lower-cased text does, and cost a tenth of ``str.lower()`` to make (a text that holds one of
    :data:`_LOWER_TO_ASCII` is lower-cased as text first). Each answer is kept, and a trigger whose
    :data:`_TRIGGER_GATES` text does not occur is answered without a search of its own.
    """

    __slots__ = ("_found", "_lowered")

    def __init__(self, value: str) -> None:
        if not value.isascii() and any(c in value for c in _LOWER_TO_ASCII):
            value = value.lower()
        self._lowered = value.encode("utf-8", "surrogatepass").lower()
        self._found: dict[str, bool] = {}

    def __call__(self, trigger: str) -> bool:
        found = self._found.get(trigger)
        if found is None:
            gate = _TRIGGER_GATES.get(trigger)
            found = (gate is None or self(gate)) and trigger.encode("ascii") in self._lowered
            self._found[trigger] = found
        return found


_MIN_KNOWN_LENGTH = 6
"""Known secret values shorter than this are ignored (replacing "1" everywhere would destroy data)."""


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """True when a field or environment variable name says its value is a credential.

    ``OPENAI_API_KEY``, ``api_key``, ``Authorization``, ``GITHUB_TOKEN``, ``db_password`` are; ``max_tokens``,
    ``prompt_tokens``, prices such as ``input_cost_per_token`` and ``keyboard`` are not.
    """
    lowered = name.lower()
    if lowered in _NOT_SECRET_NAMES or lowered.endswith(("_tokens", "cost_per_token")):
        return False
    return bool(_SECRET_NAME.search(lowered))


class Redactor:
    """Removes secrets from text and JSON-like data.

    Args:
        known: Literal secret values to remove wherever they occur (values shorter than 6 characters are
            ignored).
        environ: Environment to collect secret values from: every variable whose name
            :func:`is_secret_name` accepts. ``None`` reads nothing (use :meth:`from_environ` for the
            process environment).
    """

    def __init__(self, known: Iterable[str] = (), *, environ: Mapping[str, str] | None = None) -> None:
        values = {v for v in known if isinstance(v, str) and len(v) >= _MIN_KNOWN_LENGTH}
        if environ is not None:
            values.update(
                v for k, v in environ.items() if is_secret_name(k) and v and len(v) >= _MIN_KNOWN_LENGTH
            )
        # Also their JSON-escaped forms (as json.dumps writes them, and as a script-safe JSON in a JS file
        # writes them: ASCII-only, "/" as "\/", "<>&" as \u escapes), so serialised JSON can be redacted
        # as text. Longest first, so a secret that contains another is removed whole.
        self._count = len(values)
        escaped = {form for v in values for form in _escaped_forms(v)}
        self._known = tuple(sorted(values | escaped, key=len, reverse=True))
        self._known_re = re.compile("|".join(re.escape(v) for v in self._known)) if self._known else None

    @classmethod
    def from_environ(cls, known: Iterable[str] = ()) -> Redactor:
        """A redactor that knows the secret-named variables of this process's environment."""
        return cls(known, environ=os.environ)

    @property
    def known_count(self) -> int:
        """How many literal secret values this redactor removes."""
        return self._count

    def text(self, value: str) -> str:
        """Return ``value`` with every secret replaced by ``[REDACTED]``."""
        if self._known_re is not None:
            value = self._known_re.sub(REDACTED, value)
        occurs = _TriggerSearch(value)
        for triggers, pattern, replacement, locator in _PATTERNS:
            if any(occurs(t) for t in triggers):
                value = (
                    pattern.sub(replacement, value)
                    if locator is None
                    else _sub_at(locator, pattern, replacement, value)
                )
        return value

    def payload(self, value: str) -> str:
        r"""Return a whole document (a file's or standard output's text) with every secret replaced.

        :meth:`text`, plus the JSON string literals that hide a secret behind escapes (``\u002d``,
        ``\/``), as a JSON document or a JSON object embedded in a JS file (``window.X = {...}``) writes
        them: such a literal is decoded, redacted and written back escaped (ASCII-only, ``/`` as ``\/``,
        ``<>&`` as ``\u`` escapes) only when it held a secret; every other byte is left as it was.
        """
        value = self.text(value)
        if "\\u" not in value and "\\/" not in value:
            return value
        return _ESCAPED_LITERAL.sub(self._literal, value)

    def _literal(self, match: re.Match[str]) -> str:
        literal = match.group(0)
        if "\\u" not in literal and "\\/" not in literal:
            return literal
        try:
            decoded = json.loads(literal)
        except ValueError:
            return literal
        if not isinstance(decoded, str):  # pragma: no cover - a string literal always decodes to text
            return literal
        cleaned = self.text(decoded)
        if cleaned == decoded:
            return literal
        return _script_safe(cleaned)

    def data(self, value: Any) -> Any:
        """Return a copy of a JSON-like value with secrets removed.

        Strings are redacted with :meth:`text`; in mappings, the value of a credential-named key is
        replaced whole (when it is a string, number or a non-empty container) and keys themselves are
        kept. Tuples come back as lists; other values are returned unchanged.
        """
        return self._walk(value, self.text)

    def json_line(self, value: Any) -> str:
        """Serialise JSON-like data as one compact JSON line with every secret removed.

        Equivalent to ``json.dumps(self.data(value))`` but much faster on large values: credential-named
        keys are replaced in one walk that does not touch strings, then the serialised text is redacted in
        one pass per pattern (the patterns never cross a JSON string's quotes, and known values are also
        matched in their JSON-escaped form, so the result is valid JSON).
        """
        text = json.dumps(self._keys(value), ensure_ascii=False, separators=(",", ":"))
        return self.text(text)

    def _keys(self, value: Any) -> Any:
        return self._walk(value, None)

    def _walk(self, value: Any, text: Callable[[str], str] | None) -> Any:
        """Copy ``value``, replacing credential-named keys' values; strings go through ``text`` if given."""
        if isinstance(value, str):
            return text(value) if text is not None else value
        if isinstance(value, Mapping):
            out: dict[Any, Any] = {}
            for key, item in value.items():
                if isinstance(key, str) and is_secret_name(key) and item not in (None, "", [], {}, False):
                    out[key] = REDACTED
                else:
                    out[key] = self._walk(item, text)
            return out
        if isinstance(value, list | tuple):
            return [self._walk(item, text) for item in value]
        return value


_ESCAPED_LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"')
"""A JSON string literal on one line (quotes included)."""


def _script_safe(value: str) -> str:
    """``value`` as a JSON string literal that is also safe inside an HTML ``<script>`` element."""
    text = json.dumps(value, ensure_ascii=True)
    return text.replace("/", "\\/").replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _escaped_forms(value: str) -> set[str]:
    """The forms a secret value takes inside JSON string literals (quotes removed), itself excluded."""
    forms = {json.dumps(value, ensure_ascii=False)[1:-1], json.dumps(value)[1:-1], _script_safe(value)[1:-1]}
    forms |= {form.replace("/", "\\/") for form in forms}
    forms.discard(value)
    return forms


_DEFAULT = Redactor()

_REGISTERED: set[str] = set()
_OUTPUT: list[tuple[tuple[frozenset[str], frozenset[str]], Redactor]] = []
"""The output redactor and what it was built from (one entry at most; a list so no ``global`` is needed)."""


def register_secret(value: str | None) -> None:
    """Make :func:`output_redactor` remove ``value`` from everything judgekit writes from now on.

    Call it wherever a credential that is not in a secret-named environment variable is read (an API key
    given to a judge client, a key passed on a command line). Values shorter than 6 characters are ignored.

    Args:
        value: The secret; ``None`` or empty does nothing.
    """
    if isinstance(value, str) and len(value) >= _MIN_KNOWN_LENGTH:
        _REGISTERED.add(value)


def output_redactor() -> Redactor:
    """The one redactor every writer uses (files through :mod:`judgekit.io.atomic`, standard output).

    It knows the values of this process's secret-named environment variables as they are now, every value
    given to :func:`register_secret`, and every key shape. The redactor is rebuilt only when one of those
    changed since the last call.
    """
    env = frozenset(
        v for k, v in os.environ.items() if v and len(v) >= _MIN_KNOWN_LENGTH and is_secret_name(k)
    )
    key = (frozenset(_REGISTERED), env)
    if not _OUTPUT or _OUTPUT[0][0] != key:
        _OUTPUT[:] = [(key, Redactor(key[0] | key[1]))]
    return _OUTPUT[0][1]


def redact_text(value: str, redactor: Redactor | None = None) -> str:
    """Redact secrets from text with ``redactor`` (shape- and name-based only when none is given)."""
    return (redactor or _DEFAULT).text(value)


def redact(value: Any, redactor: Redactor | None = None) -> Any:
    """Redact secrets from JSON-like data with ``redactor`` (shape- and name-based when none is given)."""
    return (redactor or _DEFAULT).data(value)
