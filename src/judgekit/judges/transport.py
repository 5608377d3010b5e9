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
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "ANTHROPIC_MAX_BREAKPOINTS",
    "ANTHROPIC_VERSION",
    "EPHEMERAL",
    "Completion",
    "LeanRoute",
    "LeanTransport",
    "RawReply",
    "cache_blocks",
    "completion_from_litellm",
    "prompt_cache_messages",
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
    """

    content: str | None
    refusal: Any
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    cache_creation_tokens: int = 0
    cache_read_tokens: int = 0
    response: Any = None


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
    cached = getattr(details, "cached_tokens", None) or getattr(usage, "cache_read_input_tokens", None)
    return Completion(
        content=content,
        refusal=getattr(choice.message, "refusal", None),
        finish_reason=getattr(choice, "finish_reason", None),
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        cache_read_tokens=_count(cached),
        response=response,
    )


def _count(value: Any) -> int:
    """A token count a provider reported: a non-negative integer, else 0 (absent, null or malformed)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


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
    try:
        name, provider, dynamic_key, dynamic_base = litellm.get_llm_provider(model=model, api_base=api_base)
    except Exception:
        return None
    if provider not in ("openai", "anthropic"):
        return None
    if not _litellm_sends_unchanged(litellm, name, provider, sampling):
        return None
    if provider == "openai":
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
        return LeanRoute(
            kind="openai",
            provider=provider,
            model=name,
            url=base.rstrip("/") + "/chat/completions",
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        )
    key = _first_set(
        api_key,
        dynamic_key,
        getattr(litellm, "anthropic_key", None),
        os.environ.get("ANTHROPIC_API_KEY"),
    )
    base = _first_set(
        api_base,
        dynamic_base,
        os.environ.get("ANTHROPIC_API_BASE"),
        os.environ.get("ANTHROPIC_BASE_URL"),
        "https://api.anthropic.com",
    )
    if key is None or base is None:
        return None
    url = base.rstrip("/")
    if not url.endswith("/v1/messages"):
        url += "/v1/messages"
    return LeanRoute(
        kind="anthropic",
        provider=provider,
        model=name,
        url=url,
        headers={
            "x-api-key": key,
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
        session = aiohttp.ClientSession(connector=connector, skip_auto_headers=("User-Agent",))
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
        try:
            async with session.post(
                self.route.url,
                data=data,
                headers=self.route.headers,
                timeout=aiohttp.ClientTimeout(total=timeout),
                proxy=self._proxy[0],
                proxy_auth=self._proxy[1],
            ) as reply:
                raw = await reply.read()
                status, headers = reply.status, reply.headers
        except TimeoutError:
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
        details = usage.get("prompt_tokens_details") if isinstance(usage, dict) else None
        return Completion(
            content=content,
            refusal=message.get("refusal"),
            finish_reason=self._finish(choice.get("finish_reason")),
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            cache_read_tokens=_count(details.get("cached_tokens")) if isinstance(details, dict) else 0,
        )

    def _read_anthropic(self, payload: Any) -> Completion:
        blocks = payload["content"]
        texts = [b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
        if any(not isinstance(t, str) for t in texts):
            raise TypeError("a text block's text is not text")
        usage = payload.get("usage") or {}
        created = int(usage.get("cache_creation_input_tokens") or 0)
        read = int(usage.get("cache_read_input_tokens") or 0)
        return Completion(
            content="".join(texts) if texts else None,
            refusal=None,
            finish_reason=self._finish(payload.get("stop_reason")),
            prompt_tokens=int(usage.get("input_tokens") or 0) + created + read,
            completion_tokens=int(usage.get("output_tokens") or 0),
            cache_creation_tokens=created,
            cache_read_tokens=read,
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
