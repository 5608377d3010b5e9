"""The lean judge transport: OpenAI-compatible and Anthropic Messages calls over a pooled aiohttp session.

``litellm.acompletion`` costs 9-12 ms of CPU per call (request transformation, logging objects, response
model building), and the event loop is one thread, so it caps a process at about 100-200 judgments a
second whatever the provider does. This module sends the two request shapes judges use most straight
over HTTP, at the network's pace, while litellm stays the provider layer:

* litellm resolves the provider and model (``litellm.get_llm_provider``), the base URL and the key (its
  usual environment variables), and the price (``litellm.cost_per_token``, from its local map);
* at set-up, ``litellm.get_optional_params`` is asked which parameters it would send for this model; the
  lean path is used only when they are exactly the judge's own (temperature, max_tokens, top_p, seed,
  response_format), so both paths send the same request body;
* an error status or an unreadable reply becomes litellm's own exception (``exception_type`` over the
  provider's error class), so retries and error messages are the same on both paths.

Routing (:func:`resolve_route`): provider ``openai`` (api.openai.com or any OpenAI-compatible
``api_base``) goes lean; provider ``anthropic`` goes lean when the request has no ``response_format`` and
no ``seed`` and its messages are plain text in the order Anthropic requires (else the per-call fallback is
litellm, which transforms them); every other provider, a model whose parameters litellm would change
(o-series, gpt-5...), and a client without an API key go through ``litellm.acompletion``.

Prompt caching (``ClientSettings.prompt_cache`` ``auto``, Anthropic only: OpenAI caches prefixes by
itself): the client passes the ends of the prompt's shared prefixes
(:attr:`judgekit.judges.prompt.RenderedPrompt.cache_breaks`), and both paths send the same Messages body
(:func:`anthropic_body` here, :func:`prompt_cache_messages` through litellm): the system text block and
each user text block that ends at a break carry ``"cache_control": {"type": "ephemeral"}``, the user
text cut into consecutive text blocks at the breaks (the model reads the same text). The request itself,
hence its cassette key, is unchanged.

The session (``aiohttp.ClientSession`` with a pooled connector) is one per event loop; it is closed when
the loop is shut down by ``asyncio.run`` (its async generators are finalised), or by
:meth:`LeanTransport.aclose`.

Replies are bounded while they arrive (:class:`ReplyLimits`, :class:`BodyReader`), on the lean path and,
for the OpenAI and Anthropic providers, on the litellm path too (:class:`BoundedHTTPXTransport`, the
httpx transport under the client judgekit gives litellm): at most :data:`JUDGE_REPLY_MAX_WIRE_BYTES` bytes
as received and :data:`JUDGE_REPLY_MAX_BYTES` bytes once decoded (gzip and deflate are decoded here, in
steps that never produce more than what is left under the cap; any other ``Content-Encoding`` is
refused), and the whole request (headers and body) within the attempt's timeout. Redirects are never
followed: a 3xx answer is :class:`ReplyRedirected`, naming its ``Location``. Each of these is a
:class:`ReplyRefused`, which the client never retries. Usage numbers are read by :func:`read_usage`:
each a non-negative integer of at most :data:`JUDGE_USAGE_TOKENS_MAX`, else the reply's usage is
invalid (:attr:`Completion.usage_problem`).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import zlib
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

__all__ = [
    "ANTHROPIC_MAX_BREAKPOINTS",
    "ANTHROPIC_VERSION",
    "EPHEMERAL",
    "JUDGE_REPLY_MAX_BYTES",
    "JUDGE_REPLY_MAX_WIRE_BYTES",
    "JUDGE_USAGE_TOKENS_MAX",
    "BodyReader",
    "BoundedHTTPXTransport",
    "Completion",
    "LeanRoute",
    "LeanTransport",
    "RawReply",
    "ReplyLimits",
    "ReplyRedirected",
    "ReplyRefused",
    "ReplyTooLarge",
    "ReplyTooSlow",
    "cache_blocks",
    "completion_from_litellm",
    "prompt_cache_messages",
    "read_usage",
    "resolve_route",
]

ANTHROPIC_MAX_BREAKPOINTS = 4
"""Most ``cache_control`` breakpoints Anthropic accepts in one request (system and messages together)."""

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
"""The ``cache_control`` value of a breakpoint (Anthropic's default five-minute cache)."""

ANTHROPIC_VERSION = "2023-06-01"
"""The ``anthropic-version`` header sent on Anthropic Messages calls (litellm's default)."""

_POOL_PER_HOST_MIN = 8
"""Fewest pooled connections per host, whatever the client's concurrency."""

_CONNECTION_ERROR = "Connection error."
"""What litellm's OpenAI and Anthropic handlers say when no connection could be made."""

_REPRESENTATIVE_SCHEMA: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {"name": "verdict", "schema": {"type": "object"}, "strict": True},
}
"""A ``response_format`` used at set-up to ask litellm whether it passes the schema through unchanged."""

JUDGE_REPLY_MAX_BYTES = 8 * 1024 * 1024
"""Most bytes of one judge reply's body once decoded (gzip, deflate); reading stops past it (an error)."""

JUDGE_REPLY_MAX_WIRE_BYTES = 8 * 1024 * 1024
"""Most bytes of one judge reply's body as received (before decoding); reading stops past it (an error)."""

JUDGE_USAGE_TOKENS_MAX = 1_000_000_000
"""Largest token count a reply's usage may report (each of prompt, completion, cached, cache-write);
a larger, negative, fractional or non-numeric one makes the reply's usage invalid and its cost unknown."""

ERROR_BODY_MAX_BYTES = 64 * 1024
"""Bytes of an error reply's body (status 400 and up) read for its message; the rest is not read."""

_ACCEPT_ENCODING = "gzip, deflate"
"""The encodings judgekit asks for and decodes itself, under :data:`JUDGE_REPLY_MAX_BYTES`."""

_SERVED_MODEL_MAX_CHARS = 200
"""Longest served-model name kept from a reply (a longer one is cut, and cannot match the request)."""


class ReplyRefused(Exception):
    """A judge reply judgekit stopped reading: too large, too slow, redirected or in an unknown encoding.

    Never retried (:func:`judgekit.judges.client.is_retryable` finds it in an exception's causes): the
    same provider would answer the same way, and every attempt costs the download again.
    """


class ReplyTooLarge(ReplyRefused):
    """The reply's body passed :data:`JUDGE_REPLY_MAX_WIRE_BYTES` or :data:`JUDGE_REPLY_MAX_BYTES`."""


class ReplyTooSlow(ReplyRefused, TimeoutError):
    """The whole request (headers and body) took longer than the attempt's timeout.

    A :class:`TimeoutError` too, so the client reports it as a judge that did not answer in time (and,
    like every timeout, retries it).
    """


class ReplyRedirected(ReplyRefused):
    """The judge endpoint answered 3xx: judgekit never follows a redirect.

    Followed, a 302 turns the request into a bodiless GET whose reply would be counted, and a 307 sends
    the whole prompt to another origin.
    """


@dataclass(frozen=True)
class ReplyLimits:
    """The bounds on one judge reply, enforced while it arrives.

    Attributes:
        max_wire_bytes: Most body bytes as received (> 0).
        max_bytes: Most body bytes once decoded (> 0).
        timeout: Seconds the whole request may take, headers and body (> 0).
    """

    max_wire_bytes: int = JUDGE_REPLY_MAX_WIRE_BYTES
    max_bytes: int = JUDGE_REPLY_MAX_BYTES
    timeout: float = 60.0


def _printable(text: str, limit: int = 200) -> str:
    """``text`` with control characters replaced and cut to ``limit`` characters (for messages)."""
    clean = "".join(c if c.isprintable() else "?" for c in text[: limit + 1])
    return clean if len(clean) <= limit else clean[:limit] + "..."


def redirect_error(status: int, location: str | None) -> ReplyRedirected:
    """The error for a 3xx answer, naming where it pointed."""
    where = repr(_printable(location)) if location else "no Location header"
    return ReplyRedirected(
        f"the judge endpoint answered HTTP {status} redirecting to {where}; judgekit never follows "
        "redirects (the prompt would go elsewhere): set judge.api_base to the endpoint itself"
    )


class BodyReader:
    """Read a reply's body chunk by chunk, decoding it, within :class:`ReplyLimits`.

    Args:
        encoding: The reply's ``Content-Encoding`` (``None``, ``identity``, ``gzip``, ``x-gzip`` or
            ``deflate``; any other is refused).
        limits: The bounds.
        started: ``time.monotonic()`` when the request was sent (the deadline counts from it).
        truncate: Keep the first bytes and stop quietly at the caps instead of raising (an error reply's
            message).

    Raises:
        ReplyRefused: At construction, for an encoding judgekit did not ask for.
    """

    def __init__(
        self, encoding: str | None, limits: ReplyLimits, *, started: float, truncate: bool = False
    ) -> None:
        self.limits = limits
        self.deadline = started + limits.timeout
        self.truncate = truncate
        self.wire = 0
        self.full = False
        self._parts: list[bytes] = []
        self._size = 0
        name = (encoding or "identity").strip().lower()
        self._decoder: Any = None
        if name in ("gzip", "x-gzip"):
            self._decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif name == "deflate":
            self._decoder = zlib.decompressobj(zlib.MAX_WBITS)
            self._raw_deflate_checked = False
        elif name not in ("identity", ""):
            raise ReplyRefused(
                f"the judge's reply is in Content-Encoding {_printable(name, 60)!r}, which judgekit did not "
                f"ask for ({_ACCEPT_ENCODING}) and does not decode"
            )
        self._name = name

    def check_length(self, declared: str | None) -> None:
        """Refuse a reply whose ``Content-Length`` already exceeds the wire cap (nothing is read)."""
        if self.truncate or declared is None:
            return
        try:
            length = int(declared)
        except ValueError:
            return
        if length > self.limits.max_wire_bytes:
            raise self._too_large("as sent", self.limits.max_wire_bytes, "JUDGE_REPLY_MAX_WIRE_BYTES")

    def _too_large(self, stage: str, cap: int, name: str) -> ReplyTooLarge:
        return ReplyTooLarge(
            f"the judge's reply is larger than {cap:,} bytes {stage} (limit {name}); it was not read further"
        )

    def feed(self, chunk: bytes) -> None:
        """Take the next chunk as received.

        Raises:
            ReplyTooLarge: Past a cap (unless ``truncate``).
            ReplyTooSlow: Past the deadline.
            ReplyRefused: When a compressed body cannot be decoded.
        """
        if time.monotonic() > self.deadline:
            raise ReplyTooSlow(
                f"the judge's reply did not arrive whole within {self.limits.timeout:g} s (headers and body)"
            )
        if self.full:
            return
        self.wire += len(chunk)
        if self.wire > self.limits.max_wire_bytes:
            if self.truncate:
                self.full = True
                chunk = chunk[: max(0, len(chunk) - (self.wire - self.limits.max_wire_bytes))]
            else:
                raise self._too_large("as sent", self.limits.max_wire_bytes, "JUDGE_REPLY_MAX_WIRE_BYTES")
        if self._decoder is None:
            self._keep(chunk)
            return
        data = chunk
        while data and not self.full:
            if self._decoder.eof:
                return  # bytes after the end of the compressed stream: counted, not kept
            room = self.limits.max_bytes - self._size
            try:
                out = self._decoder.decompress(data, room + 1)
            except zlib.error as exc:
                if self._name == "deflate" and not self._raw_deflate_checked and self.wire == len(chunk):
                    # some servers send raw deflate without the zlib header (as httpx also accepts)
                    self._decoder = zlib.decompressobj(-zlib.MAX_WBITS)
                    self._raw_deflate_checked = True
                    continue
                raise ReplyRefused(f"the judge's {self._name} reply could not be decoded ({exc})") from exc
            if self._name == "deflate":
                self._raw_deflate_checked = True
            self._keep(out)
            tail = self._decoder.unconsumed_tail
            if not out and tail == data:
                break
            data = tail

    def _keep(self, data: bytes) -> None:
        if not data:
            return
        if self._size + len(data) > self.limits.max_bytes:
            if not self.truncate:
                raise self._too_large("decoded", self.limits.max_bytes, "JUDGE_REPLY_MAX_BYTES")
            data = data[: self.limits.max_bytes - self._size]
            self.full = True
        self._parts.append(data)
        self._size += len(data)

    def body(self) -> bytes:
        """The decoded body read so far."""
        return b"".join(self._parts)


async def read_bounded(
    chunks: AsyncIterator[bytes],
    encoding: str | None,
    length: str | None,
    limits: ReplyLimits,
    *,
    started: float,
    truncate: bool = False,
) -> bytes:
    """Read a body from ``chunks`` under ``limits`` (see :class:`BodyReader`); its decoded bytes."""
    reader = BodyReader(encoding, limits, started=started, truncate=truncate)
    reader.check_length(length)
    async for chunk in chunks:
        reader.feed(chunk)
        if reader.full:
            break
    return reader.body()


def read_usage(fields: Mapping[str, Any]) -> tuple[dict[str, int], str | None]:
    """A reply's usage numbers as token counts, each checked.

    Args:
        fields: Usage field name -> the value the provider sent (``None``: absent).

    Returns:
        ``(counts, problem)``: each field as a count (absent or null: 0), and ``None``; or, when any value
        is not a whole number from 0 to :data:`JUDGE_USAGE_TOKENS_MAX` (negative, fractional, boolean,
        text, absurdly large), every count 0 and what was wrong, for people.
    """
    counts: dict[str, int] = {}
    for name, value in fields.items():
        if value is None:
            counts[name] = 0
            continue
        number: int | None = None
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, float) and value.is_integer():
            number = int(value)
        if number is None or not 0 <= number <= JUDGE_USAGE_TOKENS_MAX:
            shown = _printable(repr(value) if not isinstance(value, int) else str(value), 24)
            if isinstance(value, int) and not isinstance(value, bool) and len(str(value)) > 24:
                shown = f"a {len(str(abs(value)))}-digit number"
            return dict.fromkeys(fields, 0), (
                f"the provider reported {name} = {shown}, not a whole number from 0 to "
                f"{JUDGE_USAGE_TOKENS_MAX:,} (limit JUDGE_USAGE_TOKENS_MAX)"
            )
        counts[name] = number
    return counts, None


def served_model(value: Any) -> str | None:
    """The model a reply says served it (its ``model`` field), as text; ``None`` when it sent none."""
    if value is None or value == "":
        return None
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return _printable(text, _SERVED_MODEL_MAX_CHARS)


@dataclass(frozen=True)
class Completion:
    """One reply in the form the judge client reads, whichever path answered.

    Attributes:
        content: The reply text (text blocks joined, for Anthropic), or ``None`` when the provider sent
            none.
        refusal: The provider's ``message.refusal`` (OpenAI), or ``None``.
        finish_reason: The finish reason in OpenAI's vocabulary, mapped as litellm maps it
            (``end_turn`` -> ``stop``, ``max_tokens`` -> ``length``; none sent -> ``stop``).
        prompt_tokens: Prompt tokens reported (for Anthropic, cache writes and reads included, as litellm
            counts them).
        completion_tokens: Completion tokens reported.
        cache_creation_tokens: Anthropic prompt-cache write tokens (0 elsewhere), priced separately.
        cache_read_tokens: Prompt tokens the provider read from its prompt cache, included in
            ``prompt_tokens`` and priced at the provider's cached rate: OpenAI's
            ``usage.prompt_tokens_details.cached_tokens``, Anthropic's ``cache_read_input_tokens``; 0 when
            the provider reported none.
        response: The litellm ``ModelResponse`` when litellm answered (its cost is read from it);
            ``None`` on the lean path.
        model: The model the reply says served it (its ``model`` field, cut to 200 printable
            characters); ``None`` when it sent none.
        usage_problem: Why the reported usage was not believed (a count negative, fractional, not a
            number or above :data:`JUDGE_USAGE_TOKENS_MAX`; every count is then 0 and the cost unknown);
            ``None`` when it is valid or absent.
    """

    content: str | None
    refusal: Any
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    cache_creation_tokens: int = 0
    cache_read_tokens: int = 0
    response: Any = None
    model: str | None = None
    usage_problem: str | None = None


@dataclass(frozen=True)
class RawReply:
    """A lean reply, read into a :class:`Completion` by :meth:`LeanTransport.read`.

    Attributes:
        payload: The decoded OpenAI body (any JSON value; a malformed one fails in ``read``, as litellm's
            reply fails in the client), or the :class:`Completion` already read from an Anthropic body.
    """

    payload: Any


def completion_from_litellm(response: Any) -> Completion:
    """Read a litellm ``ModelResponse`` into a :class:`Completion`.

    Raises:
        AttributeError, IndexError, TypeError, ValueError: When the response has no choice or its
            message content is not text (a malformed completion).
    """
    choice = response.choices[0]
    content = choice.message.content
    if content is not None and not isinstance(content, str):
        raise TypeError(f"message content is {type(content).__name__}, not text")
    usage = getattr(response, "usage", None)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None)
    if cached is None:
        cached = getattr(usage, "cache_read_input_tokens", None)
    counts, problem = read_usage(
        {
            "prompt_tokens": getattr(usage, "prompt_tokens", None),
            "completion_tokens": getattr(usage, "completion_tokens", None),
            "cached_tokens": cached,
        }
    )
    return Completion(
        content=content,
        refusal=getattr(choice.message, "refusal", None),
        finish_reason=getattr(choice, "finish_reason", None),
        prompt_tokens=counts["prompt_tokens"],
        completion_tokens=counts["completion_tokens"],
        cache_read_tokens=counts["cached_tokens"],
        response=response,
        model=served_model(getattr(response, "model", None)),
        usage_problem=problem,
    )


@dataclass(frozen=True)
class LeanRoute:
    """Where and how a lean call is sent.

    Attributes:
        kind: ``openai`` (chat completions) or ``anthropic`` (Messages).
        provider: litellm's provider name (``openai``, ``anthropic``).
        model: The model name sent to the provider (the provider prefix removed).
        url: The full endpoint URL.
        headers: Request headers, credentials included (never stored or logged).
    """

    kind: Literal["openai", "anthropic"]
    provider: str
    model: str
    url: str
    headers: Mapping[str, str]


def _first_set(*values: str | None) -> str | None:
    for value in values:
        if value:
            return value
    return None


def _llm_provider(
    litellm: Any, model: str, api_base: str | None
) -> tuple[str, str, str | None, str | None] | None:
    """``litellm.get_llm_provider``'s model name, provider, derived key and derived base, or ``None``.

    ``None`` when litellm cannot resolve the model (any exception it raises): the caller then leaves the
    calls to litellm's own client.
    """
    try:
        name, provider, dynamic_key, dynamic_base = litellm.get_llm_provider(model=model, api_base=api_base)
    except Exception:
        return None
    return name, provider, dynamic_key, dynamic_base


def _openai_endpoint(
    litellm: Any, api_key: str | None, dynamic_key: str | None, api_base: str | None, dynamic_base: str | None
) -> tuple[str, str] | None:
    """The key and base URL litellm's OpenAI provider would use, resolved in litellm's order.

    Args:
        litellm: The litellm module.
        api_key: The key given to the client, or ``None``.
        dynamic_key: The key ``litellm.get_llm_provider`` derived from the model name, or ``None``.
        api_base: The configured base URL, or ``None``.
        dynamic_base: The base URL ``litellm.get_llm_provider`` derived, or ``None``.

    Returns:
        ``(key, base)``: the first set of the given key, the derived key, litellm's module-level keys and
        ``OPENAI_API_KEY``; the first set of the given base, the derived base, ``litellm.api_base``,
        ``OPENAI_BASE_URL``, ``OPENAI_API_BASE`` and OpenAI's own URL. ``None`` when no key is set.
    """
    key = _first_set(
        api_key,
        dynamic_key,
        getattr(litellm, "api_key", None),
        getattr(litellm, "openai_key", None),
        os.environ.get("OPENAI_API_KEY"),
    )
    base = _first_set(
        api_base,
        dynamic_base,
        getattr(litellm, "api_base", None),
        os.environ.get("OPENAI_BASE_URL"),
        os.environ.get("OPENAI_API_BASE"),
        "https://api.openai.com/v1",
    )
    if key is None or base is None:
        return None
    return key, base


def _anthropic_base(api_base: str | None, dynamic_base: str | None) -> str:
    """The base URL litellm's Anthropic provider would use.

    Returns:
        The first set of the configured base, the one ``litellm.get_llm_provider`` derived,
        ``ANTHROPIC_API_BASE``, ``ANTHROPIC_BASE_URL`` and Anthropic's own URL.
    """
    return (
        _first_set(
            api_base,
            dynamic_base,
            os.environ.get("ANTHROPIC_API_BASE"),
            os.environ.get("ANTHROPIC_BASE_URL"),
        )
        or "https://api.anthropic.com"
    )


def resolve_route(
    litellm: Any,
    *,
    model: str,
    api_base: str | None,
    api_key: str | None,
    sampling: Mapping[str, Any],
) -> LeanRoute | None:
    """The lean route for a judge model, or ``None`` when its calls must go through litellm.

    Args:
        litellm: The litellm module (from :func:`judgekit.judges.client.import_litellm`).
        model: The litellm model name (``openai/gpt-4o-mini``, ``anthropic/claude-...``).
        api_base: The configured base URL, or ``None`` for the provider's (or its environment variable).
        api_key: The key given to the client, or ``None`` for the provider's environment variable.
        sampling: The parameters every request carries (temperature, max_tokens, and top_p / seed when
            set), used to check that litellm would send them unchanged.

    Returns:
        The route, or ``None`` for another provider, a model whose parameters litellm rewrites, or no key.
    """
    resolved = _llm_provider(litellm, model, api_base)
    if resolved is None:
        return None
    name, provider, dynamic_key, dynamic_base = resolved
    if provider not in ("openai", "anthropic"):
        return None
    if not _litellm_sends_unchanged(litellm, name, provider, sampling):
        return None
    if provider == "openai":
        endpoint = _openai_endpoint(litellm, api_key, dynamic_key, api_base, dynamic_base)
        if endpoint is None:
            return None
        key, base = endpoint
        return LeanRoute(
            kind="openai",
            provider=provider,
            model=name,
            url=base.rstrip("/") + "/chat/completions",
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        )
    anthropic_key = _first_set(
        api_key,
        dynamic_key,
        getattr(litellm, "anthropic_key", None),
        os.environ.get("ANTHROPIC_API_KEY"),
    )
    if anthropic_key is None:
        return None
    url = _anthropic_base(api_base, dynamic_base).rstrip("/")
    if not url.endswith("/v1/messages"):
        url += "/v1/messages"
    return LeanRoute(
        kind="anthropic",
        provider=provider,
        model=name,
        url=url,
        headers={
            "x-api-key": anthropic_key,
            "anthropic-version": ANTHROPIC_VERSION,
            "accept": "application/json",
            "content-type": "application/json",
        },
    )


def _litellm_sends_unchanged(litellm: Any, name: str, provider: str, sampling: Mapping[str, Any]) -> bool:
    """Whether litellm would send ``sampling`` (and, for OpenAI, a response_format) exactly as given."""
    wanted = dict(sampling)
    if provider == "openai":
        wanted["response_format"] = _REPRESENTATIVE_SCHEMA
    try:
        sent = litellm.get_optional_params(model=name, custom_llm_provider=provider, **wanted)
    except Exception:
        return False
    sent = {k: v for k, v in dict(sent).items() if not (k == "stream" and v is False) and v != {}}
    return bool(sent == wanted)


def cache_blocks(text: str, breaks: tuple[int, ...]) -> list[dict[str, Any]]:
    """``text`` as consecutive text blocks cut at ``breaks``, each block that ends at a break marked.

    Args:
        text: The message text.
        breaks: Offsets in ``text`` where a shared prefix ends; those not strictly inside ``text`` or not
            after the previous one are ignored, and at most :data:`ANTHROPIC_MAX_BREAKPOINTS` are used.

    Returns:
        The blocks (``{"type": "text", "text": ...}``, with ``"cache_control": {"type": "ephemeral"}`` on
        each that ends at a break); joined, their texts are ``text``.
    """
    blocks: list[dict[str, Any]] = []
    start = 0
    for end in breaks:
        if len(blocks) == ANTHROPIC_MAX_BREAKPOINTS or not start < end < len(text):
            continue
        blocks.append({"type": "text", "text": text[start:end], "cache_control": dict(EPHEMERAL)})
        start = end
    blocks.append({"type": "text", "text": text[start:]})
    return blocks


def _cache_plan(
    messages: list[Mapping[str, Any]], breaks: tuple[int, ...]
) -> tuple[int | None, tuple[int, ...]]:
    """Which message's text gets the system breakpoint, and the breaks of the final user message.

    The last of the leading system messages (plain text) holds one breakpoint; the final message, when it
    is a user message of plain text, is cut at ``breaks``; no more than
    :data:`ANTHROPIC_MAX_BREAKPOINTS` in all (the first ones kept).

    Returns:
        The index of the system message to mark (``None``: none), and the user message's breaks to use.
    """
    system: int | None = None
    for i, message in enumerate(messages):
        if message.get("role") != "system":
            break
        if isinstance(message.get("content"), str) and message.get("content"):
            system = i
    last = messages[-1] if messages else {}
    user_breaks: tuple[int, ...] = ()
    if last.get("role") == "user" and isinstance(last.get("content"), str):
        text = str(last["content"])
        kept: list[int] = []
        for end in breaks:
            if (kept[-1] if kept else 0) < end < len(text):
                kept.append(end)
        room = ANTHROPIC_MAX_BREAKPOINTS - (1 if system is not None else 0)
        user_breaks = tuple(kept[:room])
    return system, user_breaks


def prompt_cache_messages(messages: list[Mapping[str, Any]], breaks: tuple[int, ...]) -> list[dict[str, Any]]:
    """Chat messages with Anthropic prompt-cache breakpoints, for ``litellm.acompletion``.

    litellm turns a content list with ``cache_control`` into the same Messages body that
    :func:`anthropic_body` builds with ``cache_breaks``: the last leading system message and the final
    user message become text-block lists (:func:`cache_blocks`); every other message is copied as it is.

    Args:
        messages: The request's messages (text content).
        breaks: Offsets in the final user message's text where a shared prefix ends.

    Returns:
        New messages; the request's own are not changed (its cassette key stays the same).
    """
    system, user_breaks = _cache_plan(messages, breaks)
    out = [dict(m) for m in messages]
    if system is not None:
        text = str(out[system]["content"])
        out[system]["content"] = [{"type": "text", "text": text, "cache_control": dict(EPHEMERAL)}]
    if user_breaks:
        out[-1]["content"] = cache_blocks(str(out[-1]["content"]), user_breaks)
    return out


def anthropic_body(
    route: LeanRoute, request: Mapping[str, Any], cache_breaks: tuple[int, ...] | None = None
) -> dict[str, Any] | None:
    """The Anthropic Messages body litellm would send for ``request``, or ``None`` to let litellm do it.

    Only plain-text requests are built here: leading system messages (sent as ``system`` text blocks),
    then non-empty user and assistant messages alternating from a user message (sent as text blocks),
    with no ``response_format`` and no ``seed``. Anything else returns ``None``.

    Args:
        route: The Anthropic route.
        request: The request (model, messages, sampling parameters, sample index).
        cache_breaks: ``None`` for no prompt-cache breakpoints; else the last system block is marked
            ``cache_control`` ephemeral and the final user message is cut into text blocks at these
            offsets, as :func:`prompt_cache_messages` gives litellm.
    """
    if "response_format" in request or "seed" in request:
        return None
    system: list[dict[str, Any]] = []
    messages: list[dict[str, Any]] = []
    for message in request["messages"]:
        role, content = message.get("role"), message.get("content")
        if not isinstance(content, str) or not content or set(message) != {"role", "content"}:
            return None
        if role == "system" and not messages:
            system.append({"type": "text", "text": content})
            continue
        expected = "user" if len(messages) % 2 == 0 else "assistant"
        if role != expected:
            return None
        messages.append({"role": role, "content": [{"type": "text", "text": content}]})
    if not messages or messages[-1]["role"] != "user":
        return None
    body: dict[str, Any] = {
        "model": route.model,
        "messages": messages,
        "max_tokens": request["max_tokens"],
        "temperature": request["temperature"],
    }
    if "top_p" in request:
        body["top_p"] = request["top_p"]
    if cache_breaks is not None:
        marked, user_breaks = _cache_plan(list(request["messages"]), cache_breaks)
        if marked is not None:
            system[-1]["cache_control"] = dict(EPHEMERAL)
        if user_breaks:
            messages[-1]["content"] = cache_blocks(messages[-1]["content"][0]["text"], user_breaks)
    if system:
        body["system"] = system
    return body


def openai_body(route: LeanRoute, request: Mapping[str, Any]) -> dict[str, Any]:
    """The chat-completions body for ``request``: the request itself, minus the sample index."""
    body = {k: v for k, v in request.items() if k != "sample"}
    body["model"] = route.model
    return body


def _env_proxy(url: str) -> tuple[Any, Any]:
    """The proxy URL and credentials the environment gives ``url`` (``(None, None)``: none, or bypassed)."""
    from aiohttp.helpers import get_env_proxy_for_url
    from yarl import URL

    try:
        return get_env_proxy_for_url(URL(url))
    except LookupError:
        return None, None


class LeanTransport:
    """Send judge requests over one pooled aiohttp session per event loop.

    Args:
        litellm: The litellm module (error classes, finish-reason map, prices).
        route: Where the calls go (from :func:`resolve_route`).
        pool: Most connections per host (at least 8; the client passes its concurrency).
    """

    def __init__(self, litellm: Any, route: LeanRoute, *, pool: int) -> None:
        self._litellm = litellm
        self.route = route
        self._pool = max(_POOL_PER_HOST_MIN, pool)
        self._session: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._keeper: AsyncGenerator[None, None] | None = None
        self._proxy: tuple[Any, Any] = (None, None)
        self.max_bytes = JUDGE_REPLY_MAX_BYTES
        """Most decoded body bytes of a reply (the client sets its own limit here)."""
        self.max_wire_bytes = JUDGE_REPLY_MAX_WIRE_BYTES
        """Most body bytes of a reply as received."""
        from litellm.litellm_core_utils.core_helpers import map_finish_reason
        from litellm.litellm_core_utils.exception_mapping_utils import exception_type

        self._map_finish_reason: Any = map_finish_reason
        self._exception_type: Any = exception_type
        if route.kind == "openai":
            from litellm.llms.openai.common_utils import OpenAIError

            self._error_class: Any = OpenAIError
        else:
            from litellm.llms.anthropic.common_utils import AnthropicError

            self._error_class = AnthropicError

    def body_for(
        self, request: Mapping[str, Any], cache_breaks: tuple[int, ...] | None = None
    ) -> dict[str, Any] | None:
        """The body to send for ``request``, or ``None`` when this request must go through litellm.

        Args:
            request: The request (from :meth:`judgekit.judges.client.JudgeClient.build_request`).
            cache_breaks: Anthropic prompt-cache breakpoints (see :func:`anthropic_body`); ignored on the
                OpenAI route (OpenAI caches prefixes by itself).
        """
        if self.route.kind == "openai":
            return openai_body(self.route, request)
        return anthropic_body(self.route, request, cache_breaks)

    async def _open(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._session is not None and self._loop is loop and not self._session.closed:
            return self._session
        import aiohttp

        connector = aiohttp.TCPConnector(limit=0, limit_per_host=self._pool, ttl_dns_cache=300)
        # the proxy environment (HTTPS_PROXY, NO_PROXY...) is read once here, as litellm's aiohttp transport
        # honours it; aiohttp's trust_env would read it (and ~/.netrc) in a thread on every request
        self._proxy = _env_proxy(self.route.url)
        # bodies are decoded by judgekit (BodyReader), in bounded steps, never by aiohttp all at once
        session = aiohttp.ClientSession(
            connector=connector, skip_auto_headers=("User-Agent",), auto_decompress=False
        )
        self._session, self._loop = session, loop

        async def keep() -> AsyncGenerator[None, None]:
            # finalised by the loop's shutdown_asyncgens (asyncio.run), which closes the session there
            try:
                yield
            finally:
                await session.close()

        self._keeper = keep()
        await self._keeper.__anext__()
        return session

    async def aclose(self) -> None:
        """Close the session of the running loop, if this transport opened one there."""
        if self._keeper is not None and self._loop is asyncio.get_running_loop():
            await self._keeper.aclose()
        self._session = self._keeper = self._loop = None

    def _error(
        self, status: int, message: str, headers: Any, cause: BaseException | None = None
    ) -> Exception:
        import httpx

        request = httpx.Request("POST", self.route.url)
        response = httpx.Response(status, headers=dict(headers or {}), request=request)
        if self.route.kind == "openai":
            original = self._error_class(
                status_code=status,
                message=message,
                headers=response.headers,
                response=response,
                request=request,
            )
        else:
            original = self._error_class(status_code=status, message=message, headers=response.headers)
        if cause is not None:
            original.__cause__ = cause
        mapped: Exception = self._exception_type(
            model=self.route.model, original_exception=original, custom_llm_provider=self.route.provider
        )
        return mapped

    async def send(self, body: Mapping[str, Any], *, timeout: float) -> RawReply:
        """Send one request and read its reply.

        Args:
            body: The provider request body (from :meth:`body_for`).
            timeout: Seconds the whole attempt may take.

        Returns:
            The decoded reply body (read it with :meth:`read`).

        Raises:
            TimeoutError: When no full reply came within ``timeout``.
            Exception: litellm's exception for an error status, an unreadable body or no connection
                (``RateLimitError``, ``InternalServerError``..., with ``status_code`` and the reply's
                headers on ``response``).
        """
        import aiohttp

        session = await self._open()
        data = json.dumps(body).encode()
        limits = ReplyLimits(self.max_wire_bytes, self.max_bytes, timeout)
        started = time.monotonic()
        try:
            async with session.post(
                self.route.url,
                data=data,
                headers={**self.route.headers, "Accept-Encoding": _ACCEPT_ENCODING},
                timeout=aiohttp.ClientTimeout(total=timeout),
                proxy=self._proxy[0],
                proxy_auth=self._proxy[1],
                allow_redirects=False,
            ) as reply:
                status, headers = reply.status, reply.headers
                if 300 <= status < 400:
                    raise redirect_error(status, headers.get("Location"))
                raw = await read_bounded(
                    reply.content.iter_any(),
                    headers.get("Content-Encoding"),
                    headers.get("Content-Length"),
                    limits
                    if status < 400
                    else ReplyLimits(ERROR_BODY_MAX_BYTES, ERROR_BODY_MAX_BYTES, timeout),
                    started=started,
                    truncate=status >= 400,
                )
        except (TimeoutError, ReplyRefused):
            raise
        except aiohttp.ClientError as exc:
            raise self._error(500, _CONNECTION_ERROR, None, exc) from exc
        if status >= 300:
            raise self._error(status, self._error_message(raw), headers)
        try:
            payload = json.loads(raw)
        except ValueError as exc:
            if self.route.kind == "anthropic":  # as litellm's Anthropic handler reports it
                text = raw.decode("utf-8", "replace")
                message = f"Unable to get json response - {exc}, Original Response: {text}"
                raise self._error(status, message, headers, exc) from exc
            raise self._error(500, str(exc), headers, exc) from exc
        if self.route.kind == "anthropic":
            # litellm reads an Anthropic reply inside the call: a body that is not a message is its
            # exception (APIConnectionError, retried), not a malformed completion
            try:
                return RawReply(self._read_anthropic(payload))
            except Exception as exc:
                mapped: Exception = self._exception_type(
                    model=self.route.model, original_exception=exc, custom_llm_provider=self.route.provider
                )
                raise mapped from exc
        return RawReply(payload)

    def read(self, reply: RawReply) -> Completion:
        """Read a reply body into a :class:`Completion`, as litellm reads it.

        Raises:
            KeyError, IndexError, TypeError, AttributeError, ValueError: When the body is not a
                completion (no choices, no content blocks, content that is not text).
        """
        if isinstance(reply.payload, Completion):  # an Anthropic reply, read in :meth:`send`
            return reply.payload
        return self._read_openai(reply.payload)

    def _error_message(self, raw: bytes) -> str:
        """The message litellm reports for an error body (OpenAI: ``error.message``; Anthropic: the body)."""
        text = raw.decode("utf-8", "replace")
        if self.route.kind == "anthropic":
            return text
        try:
            payload = json.loads(text)
        except ValueError:
            return text
        error = payload.get("error") if isinstance(payload, dict) else None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        return text

    def _finish(self, reason: Any) -> str:
        return str(self._map_finish_reason(reason)) if isinstance(reason, str) else "stop"

    def _read_openai(self, payload: Any) -> Completion:
        choice = payload["choices"][0]
        message = choice["message"]
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise TypeError(f"message content is {type(content).__name__}, not text")
        usage = payload.get("usage") or {}
        if not isinstance(usage, dict):
            usage = {"usage": usage}  # not a mapping: reported as an invalid usage below
        details = usage.get("prompt_tokens_details")
        counts, problem = read_usage(
            {
                **({"usage": usage["usage"]} if "usage" in usage else {}),
                "prompt_tokens": usage.get("prompt_tokens"),
                "completion_tokens": usage.get("completion_tokens"),
                "cached_tokens": details.get("cached_tokens") if isinstance(details, dict) else None,
            }
        )
        return Completion(
            content=content,
            refusal=message.get("refusal"),
            finish_reason=self._finish(choice.get("finish_reason")),
            prompt_tokens=counts["prompt_tokens"],
            completion_tokens=counts["completion_tokens"],
            cache_read_tokens=counts["cached_tokens"],
            model=served_model(payload.get("model")),
            usage_problem=problem,
        )

    def _read_anthropic(self, payload: Any) -> Completion:
        blocks = payload["content"]
        texts = [b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
        if any(not isinstance(t, str) for t in texts):
            raise TypeError("a text block's text is not text")
        usage = payload.get("usage") or {}
        if not isinstance(usage, dict):
            usage = {"usage": usage}
        counts, problem = read_usage(
            {
                **({"usage": usage["usage"]} if "usage" in usage else {}),
                "input_tokens": usage.get("input_tokens"),
                "output_tokens": usage.get("output_tokens"),
                "cache_creation_input_tokens": usage.get("cache_creation_input_tokens"),
                "cache_read_input_tokens": usage.get("cache_read_input_tokens"),
            }
        )
        created, read = counts["cache_creation_input_tokens"], counts["cache_read_input_tokens"]
        return Completion(
            content="".join(texts) if texts else None,
            refusal=None,
            finish_reason=self._finish(payload.get("stop_reason")),
            prompt_tokens=counts["input_tokens"] + created + read,
            completion_tokens=counts["output_tokens"],
            cache_creation_tokens=created,
            cache_read_tokens=read,
            model=served_model(payload.get("model")),
            usage_problem=problem,
        )

    def cost(self, model: str, completion: Completion) -> float | None:
        """The price litellm gives a lean reply (``None`` when litellm cannot price it).

        Args:
            model: The litellm model name the client was built with.
            completion: The reply.
        """
        try:
            prompt, output = self._litellm.cost_per_token(
                model=model,
                prompt_tokens=completion.prompt_tokens,
                completion_tokens=completion.completion_tokens,
                cache_creation_input_tokens=completion.cache_creation_tokens,
                cache_read_input_tokens=completion.cache_read_tokens,
            )
        except Exception:
            return None
        total = prompt + output
        return float(total) if isinstance(total, int | float) else None


class BoundedHTTPXTransport:
    """An httpx transport that bounds each reply (:class:`ReplyLimits`) and never lets a redirect through.

    It wraps httpx's own transport (the proxy the environment gives the endpoint, if any) under the client
    judgekit hands litellm for the OpenAI and Anthropic providers: it asks for ``gzip, deflate`` only,
    reads the whole body itself through a :class:`BodyReader` (decoding it, so httpx decodes nothing), and
    returns it with ``Content-Encoding`` removed. A 3xx answer raises :class:`ReplyRedirected`; an error
    status's body is read only up to :data:`ERROR_BODY_MAX_BYTES`.

    Args:
        url: The endpoint (for the environment's proxy).
        limits: The bounds; its ``timeout`` counts from when each request is sent.
    """

    def __init__(self, url: str, limits: ReplyLimits) -> None:
        import httpx

        proxy, _auth = _env_proxy(url)
        self._inner = httpx.AsyncHTTPTransport(proxy=str(proxy) if proxy is not None else None)
        self.limits = limits

    async def handle_async_request(self, request: Any) -> Any:
        """Send ``request`` and return its reply with the body read, decoded and bounded."""
        import httpx

        request.headers["Accept-Encoding"] = _ACCEPT_ENCODING
        started = time.monotonic()
        response = await self._inner.handle_async_request(request)
        try:
            status = response.status_code
            if 300 <= status < 400:
                raise redirect_error(status, response.headers.get("location"))
            limits = (
                self.limits
                if status < 400
                else ReplyLimits(ERROR_BODY_MAX_BYTES, ERROR_BODY_MAX_BYTES, self.limits.timeout)
            )
            body = await read_bounded(
                response.aiter_raw(),
                response.headers.get("content-encoding"),
                response.headers.get("content-length"),
                limits,
                started=started,
                truncate=status >= 400,
            )
        finally:
            await response.aclose()
        headers = [
            (k, v)
            for k, v in response.headers.multi_items()
            if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")
        ]
        return httpx.Response(
            status, headers=headers, content=body, request=request, extensions=response.extensions
        )

    async def aclose(self) -> None:
        """Close the wrapped transport's connections."""
        await self._inner.aclose()


def bounded_litellm_client(
    litellm: Any,
    *,
    model: str,
    api_base: str | None,
    api_key: str | None,
    limits: ReplyLimits,
) -> Any:
    """The ``client`` to give ``litellm.acompletion`` so that its reply is bounded, or ``None``.

    For litellm's OpenAI provider, an ``AsyncOpenAI`` client (the key and base URL resolved as
    :func:`resolve_route` resolves them, no retries of its own) over a :class:`BoundedHTTPXTransport`; for
    its Anthropic provider, litellm's ``AsyncHTTPHandler`` over one. Neither follows redirects.

    Returns:
        The client, or ``None`` for any other provider (litellm's own client is used: the reply is then
        bounded by the attempt's timeout only) or when the endpoint or key cannot be resolved.
    """
    import httpx

    resolved = _llm_provider(litellm, model, api_base)
    if resolved is None:
        return None
    _name, provider, dynamic_key, dynamic_base = resolved
    if provider == "openai":
        endpoint = _openai_endpoint(litellm, api_key, dynamic_key, api_base, dynamic_base)
        if endpoint is None:
            return None
        key, base = endpoint
        from openai import AsyncOpenAI

        http = httpx.AsyncClient(
            transport=BoundedHTTPXTransport(base, limits),  # type: ignore[arg-type]
            follow_redirects=False,
            trust_env=False,
            timeout=httpx.Timeout(limits.timeout),
        )
        # the OpenAI SDK accepts an httpx client as well as its own httpx2 one
        return AsyncOpenAI(api_key=key, base_url=base, http_client=cast(Any, http), max_retries=0)
    if provider == "anthropic":
        from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

        return AsyncHTTPHandler(
            timeout=limits.timeout,
            transport=BoundedHTTPXTransport(_anthropic_base(api_base, dynamic_base), limits),  # type: ignore[arg-type]
            follow_redirects=False,
        )
    return None
