"""The judge client: judge calls with judgekit's own concurrency, retries, timeouts, cost and cassette.

Every model call in judgekit goes through :class:`JudgeClient`:

* ``ClientSettings.transport`` ``auto`` (the default) sends OpenAI-compatible and Anthropic Messages
  calls over :mod:`judgekit.judges.transport` (a pooled aiohttp session; litellm still resolves the
  provider, URL, key and price, and maps errors) and everything else through ``litellm.acompletion``;
  ``litellm`` sends every call through litellm. Both give the same requests, replies, errors, cassette
  keys and cost.

* ``litellm.acompletion`` is imported lazily (about 4 s), with ``LITELLM_LOCAL_MODEL_COST_MAP=True`` set
  first so that no price map is fetched, and with litellm's own retries turned off (``num_retries=0`` and
  ``max_retries=0`` on every call, so neither litellm nor the OpenAI SDK under it retries): judgekit
  retries, and :func:`is_retryable` is the one place that decides.
* Concurrency is bounded by an :class:`asyncio.Semaphore` (``ClientSettings.concurrency``) held only
  while a request is in flight, never while backing off.
* HTTP 408, 409, 429, 500, 502, 503, 504 and 529 (:data:`RETRY_STATUSES`), connection errors and
  timeouts are retried with exponential backoff and full jitter, up to ``max_retries`` times; a
  ``Retry-After`` header (seconds or an HTTP date; or ``retry-after-ms``), when sent, is a lower bound on
  the wait, capped at :data:`RETRY_AFTER_MAX_S`. Every other status (400, 401, 403, 404, 422...) is not
  retried. Each attempt has its own timeout (``ClientSettings.timeout``): a judge that does not answer
  within it is cut off ("the judge did not answer within N s") and, like a connection error, retried;
  so one request waits at most ``(max_retries + 1) * timeout`` plus the backoff waits.
* A call that still fails is **not raised**: it comes back as a :class:`CallResult` with ``error`` set, so
  the grader turns it into an ``error`` verdict with the reason and the run goes on. The
  :class:`UsageSummary` counts these.
* Cost and tokens are recorded per call and in total (litellm's local price map, or the prices given in
  :class:`ClientSettings`). With ``max_cost`` set, no new call starts once the spent cost plus the
  expected cost of the calls in flight reaches the budget; those items get ``budget_exhausted``.
* Preflight (at construction, before any work): an unknown model or a missing API key is a
  :class:`~judgekit.errors.JudgekitError` with a message saying what to do. Replay mode needs neither.
* API keys never enter a request key, a cassette or a result: they are passed to litellm or put in the
  lean request's auth header only, and every stored string is masked against them.
* Replies are bounded while they arrive (:mod:`judgekit.judges.transport`: bytes as received, bytes
  decoded, the whole request within the timeout) and redirects are never followed; such a reply is a
  ``provider_error`` naming the limit or the ``Location``, not retried (a reply too slow is a timeout,
  retried as every timeout). Usage numbers are checked (:func:`~judgekit.judges.transport.read_usage`):
  an invalid one leaves the reply's cost unknown with the reason, and the budget charges it the worst
  case (``max_tokens`` and one prompt token per byte of the request's messages, at the model's price).
  The model a reply says served it is kept (:attr:`CallResult.served_model`); one that is not the
  requested model (:func:`model_matches`) is a ``provider_error`` whose verdict never counts.
"""

from __future__ import annotations

import asyncio
import datetime
import email.utils
import gc
import json
import math
import os
import random
import re
import socket
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import Field

from judgekit.errors import JudgekitError
from judgekit.judges.cache import REDACTED, CacheMode, Cassette, request_key
from judgekit.judges.limits import (
    ACCEPTED_MODELS_MAX,
    JUDGE_BACKOFF_MAX_S,
    JUDGE_RETRIES_MAX,
    JUDGE_TIMEOUT_MAX_S,
)
from judgekit.judges.transport import (
    JUDGE_REPLY_MAX_BYTES,
    JUDGE_REPLY_MAX_WIRE_BYTES,
    Completion,
    LeanTransport,
    RawReply,
    ReplyLimits,
    ReplyRefused,
    bounded_litellm_client,
    completion_from_litellm,
    prompt_cache_messages,
    read_usage,
    resolve_route,
)
from judgekit.secrets import register_secret
from judgekit.verdict import FrozenModel

__all__ = [
    "JUDGE_BACKOFF_MAX_S",
    "JUDGE_RETRIES_MAX",
    "JUDGE_TIMEOUT_MAX_S",
    "RETRY_AFTER_MAX_S",
    "RETRY_STATUSES",
    "BatchAnswers",
    "CallResult",
    "ClientSettings",
    "JudgeClient",
    "JudgeParams",
    "UsageSummary",
    "import_litellm",
    "is_retryable",
    "model_matches",
    "retry_after_seconds",
]


_DATED = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4})")
"""A version suffix providers add to a model name: ``-2024-08-06``, ``-20241022`` or ``-0613``."""


def model_matches(served: str, requested: str, accepted: tuple[str, ...] = ()) -> bool:
    """Whether a reply that says ``served`` answered a request for ``requested``.

    The rule: the same name; or the requested name followed by a dated version, as providers answer an
    alias (``gpt-4o`` -> ``gpt-4o-2024-08-06``, ``claude-3-5-sonnet`` -> ``claude-3-5-sonnet-20241022``,
    ``gpt-4`` -> ``gpt-4-0613``); or a name the
    configuration lists in ``judge.accepted_models``. Case matters; nothing else is accepted.

    Args:
        served: The reply's ``model``.
        requested: The model name sent to the provider (the litellm provider prefix removed).
        accepted: Other names accepted as the requested model (``judge.accepted_models``).
    """
    if served == requested or served in accepted:
        return True
    return served.startswith(requested) and _DATED.fullmatch(served[len(requested) :]) is not None


ERROR_PROVIDER = "provider_error"
ERROR_BUDGET = "budget_exhausted"
ERROR_CASSETTE_MISS = "cassette_miss"

RETRY_STATUSES: frozenset[int] = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
"""HTTP statuses worth another attempt: request timeout, conflict, rate limit, server error, bad gateway,
unavailable, gateway timeout and overloaded (529). Any other status is final."""

RETRY_AFTER_MAX_S = 60.0
"""Longest wait a ``Retry-After`` header can impose; a longer one is waited this long, then retried."""

ADMISSION_FACTOR = 2
"""Judgments a client admits at once (rendered or in flight), per request slot (``concurrency``)."""

TIMEOUT_GRACE_S = 0.5
"""Seconds past ``ClientSettings.timeout`` before judgekit itself cancels an attempt (litellm's own timeout
normally ends it first; this bounds a server that trickles bytes). litellm's one-off setup in a process's
first call blocks the event loop for a second or so, so that first attempt can run past a short timeout."""


def import_litellm() -> Any:
    """Import litellm configured for judgekit: local price map, no debug banners, no telemetry.

    The first import also collects garbage once and then freezes every object alive (``gc.freeze``):
    litellm leaves about 375,000 objects that the cyclic collector would otherwise walk in each full
    collection (0.27 s each, stalling the event loop and every request in flight); frozen, they are never
    walked again. Objects that become garbage later are freed as before.
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    fresh = "litellm" not in sys.modules
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    litellm.turn_off_message_logging = True
    if fresh:
        gc.collect()
        gc.freeze()
    return litellm


class JudgeParams(FrozenModel):
    """Everything about a judge call that can change its verdicts (all of it enters the fingerprint).

    Attributes:
        model: litellm model name (``openai/gpt-4o-mini``, ``anthropic/claude-...``, ``openai/x`` for an
            OpenAI-compatible server).
        temperature: Sampling temperature (>= 0).
        max_tokens: Most tokens in a reply (a reply cut at this limit is a parse failure).
        top_p: Nucleus sampling, or ``None`` for the provider's default.
        seed: Sampling seed where the provider honours one.
        samples: Judgments per criterion (>= 1); with more than one, the majority verdict and the
            agreement fraction are recorded.
        structured_output: ``auto`` uses a JSON-schema ``response_format`` when litellm says the model
            supports it and JSON in text otherwise; ``json_schema`` always sends the schema; ``off`` never.
    """

    model: str = Field(min_length=1)
    temperature: float = Field(default=0.0, ge=0.0)
    max_tokens: int = Field(default=800, ge=16)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    seed: int | None = None
    samples: int = Field(default=1, ge=1, le=99)
    structured_output: Literal["auto", "json_schema", "off"] = "auto"


class ClientSettings(FrozenModel):
    """How calls are made; none of it changes a verdict, so none of it enters the fingerprint.

    Attributes:
        api_base: Base URL of the provider or an OpenAI-compatible server (``http://127.0.0.1:8000/v1``).
        concurrency: Most requests in flight at once (>= 1).
        timeout: Seconds allowed for one attempt (> 0, at most ``JUDGE_TIMEOUT_MAX_S``).
        max_retries: Retries after the first attempt on :data:`RETRY_STATUSES`, connection errors and
            timeouts (0 to ``JUDGE_RETRIES_MAX``).
        backoff_base: First backoff ceiling in seconds; attempt ``k`` sleeps a uniform random time in
            ``[0, min(backoff_max, backoff_base * 2**k)]`` (full jitter).
        backoff_max: Largest backoff ceiling in seconds.
        max_cost: Budget in US dollars for calls made by this client; ``None`` for no budget.
        input_cost_per_token: Price override (USD per prompt token) for models litellm cannot price.
        output_cost_per_token: Price override (USD per completion token).
        transport: ``auto`` sends OpenAI-compatible and Anthropic Messages calls over judgekit's own pooled
            HTTP client (litellm still resolves the provider, URL, key and price) and anything else
            through ``litellm.acompletion``; ``litellm`` sends every call through ``litellm.acompletion``.
            Both send the same request and give the same reply, errors, retries, timeouts, cassette keys
            and cost, so it never enters the fingerprint.
        prompt_cache: ``auto`` marks Anthropic prompt-cache breakpoints (``cache_control`` on the system
            message and at the ends of the prompt's shared prefixes, on both transports), so repeated
            prefixes are billed at the cache-read price; ``off`` sends none. OpenAI-compatible providers
            cache by themselves and get nothing either way. The judge reads the same text, and the request
            (its cassette key) is the same, so it never enters the fingerprint.
        accepted_models: Served-model names accepted as the requested model besides the rule of
            :func:`model_matches` (an Azure deployment's model, a proxy's name); at most
            :data:`ACCEPTED_MODELS_MAX`. It decides only whether a reply is believed to come from the
            configured judge, never what the judge says, so it is not in the fingerprint.
        max_reply_bytes: Most bytes of a reply's body once decoded (1024 to
            :data:`~judgekit.judges.transport.JUDGE_REPLY_MAX_BYTES`, the default).
        max_reply_wire_bytes: Most bytes of a reply's body as received (1024 to
            :data:`~judgekit.judges.transport.JUDGE_REPLY_MAX_WIRE_BYTES`, the default).
    """

    api_base: str | None = None
    concurrency: int = Field(default=8, ge=1, le=1024)
    timeout: float = Field(default=60.0, gt=0.0, le=JUDGE_TIMEOUT_MAX_S, allow_inf_nan=False)
    max_retries: int = Field(default=4, ge=0, le=JUDGE_RETRIES_MAX)
    backoff_base: float = Field(default=1.0, ge=0.0)
    backoff_max: float = Field(default=30.0, ge=0.0)
    max_cost: float | None = Field(default=None, ge=0.0)
    input_cost_per_token: float | None = Field(default=None, ge=0.0)
    output_cost_per_token: float | None = Field(default=None, ge=0.0)
    transport: Literal["auto", "litellm"] = "auto"
    prompt_cache: Literal["auto", "off"] = "auto"
    accepted_models: tuple[str, ...] = Field(default=(), max_length=ACCEPTED_MODELS_MAX)
    max_reply_bytes: int = Field(default=JUDGE_REPLY_MAX_BYTES, ge=1024, le=JUDGE_REPLY_MAX_BYTES)
    max_reply_wire_bytes: int = Field(
        default=JUDGE_REPLY_MAX_WIRE_BYTES, ge=1024, le=JUDGE_REPLY_MAX_WIRE_BYTES
    )


class CallResult(FrozenModel):
    """The outcome of one judge request.

    Attributes:
        content: The reply text, or ``None`` when the call failed.
        finish_reason: The provider's finish reason (``stop``, ``length``, ``content_filter``...), when
            known; ``refusal`` whenever the provider set ``message.refusal``, whatever its own finish
            reason, so that every reader of the reply treats it as not ending normally.
        refusal: The provider's ``message.refusal`` text (API keys masked), or ``None`` when it set none.
        prompt_tokens: Prompt tokens reported (0 when unknown or failed).
        completion_tokens: Completion tokens reported.
        cached_tokens: How many of ``prompt_tokens`` the provider read from its prompt cache (OpenAI's
            ``prompt_tokens_details.cached_tokens``, Anthropic's ``cache_read_input_tokens``); 0 when it
            reported none. A replayed reply's as recorded.
        cost: Cost in USD of this call (0.0 for a cassette hit: a replayed reply costs nothing now);
            ``None`` when the model has no price.
        cost_unknown_reason: Why ``cost`` is ``None`` for a reply the provider sent (litellm has no price
            for the model); ``None`` when the cost is known or no reply came.
        cached: True when the reply came from the cassette.
        attempts: HTTP attempts made (0 for a cassette hit or a call that never started).
        error: ``None`` on success; else ``provider_error``, ``budget_exhausted`` or ``cassette_miss``.
        error_detail: What went wrong, for people (never contains an API key).
        latency_s: Wall seconds spent on the call, including retries and backoff.
        batch_id: The provider batch that answered this request (``judgekit grade --batch``): ``cost`` is
            then its batch price; ``None`` for a direct call or a cassette hit.
        served_model: The model the reply says served it (its ``model`` field); ``None`` when it sent
            none, when no reply came, and for a replayed reply recorded before judgekit kept it.
    """

    content: str | None = None
    finish_reason: str | None = None
    refusal: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost: float | None = None
    cost_unknown_reason: str | None = None
    cached: bool = False
    attempts: int = 0
    error: str | None = None
    error_detail: str = ""
    latency_s: float = 0.0
    batch_id: str | None = None
    served_model: str | None = None


class BatchAnswers(Protocol):
    """Answers a client's requests from a provider batch instead of calling the provider.

    Set on :attr:`JudgeClient.batch` by :mod:`judgekit.judges.batch`: while collecting, it keeps each
    request and answers none; once the batch is done, it gives each request the batch's answer (through
    :meth:`JudgeClient.batch_reply`) or the batch's failure (:meth:`JudgeClient.batch_failure`).
    """

    def answer(self, client: JudgeClient, key: str, request: Mapping[str, Any], *, item: str) -> CallResult:
        """The result for one request (``key`` is its :func:`~judgekit.judges.cache.request_key`)."""
        ...


@dataclass
class UsageSummary:
    """Running totals for one client.

    Attributes:
        http_calls: HTTP attempts made (retries included).
        completed: Requests answered by the provider.
        cache_hits: Requests answered from the cassette.
        retries: Attempts beyond the first.
        errors: Failed requests by reason.
        prompt_tokens: Total prompt tokens of provider replies.
        completion_tokens: Total completion tokens of provider replies.
        cached_tokens: How many of ``prompt_tokens`` the provider read from its prompt cache.
        cost: Total cost in USD of priced provider replies.
        unpriced: Provider replies whose cost is unknown (not counted in ``cost``).
        invalid_usage: Provider replies whose usage numbers were invalid (counted in ``unpriced``).
        worst_case_cost: What the budget charged those replies instead (US dollars): ``max_tokens`` and
            one prompt token per byte of the request's messages, at the model's price.
    """

    http_calls: int = 0
    completed: int = 0
    cache_hits: int = 0
    retries: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost: float = 0.0
    unpriced: int = 0
    invalid_usage: int = 0
    worst_case_cost: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready copy."""
        return {
            "http_calls": self.http_calls,
            "completed": self.completed,
            "cache_hits": self.cache_hits,
            "retries": self.retries,
            "errors": dict(self.errors),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_tokens": self.cached_tokens,
            "cost": self.cost,
            "unpriced": self.unpriced,
            "invalid_usage": self.invalid_usage,
            "worst_case_cost": self.worst_case_cost,
        }


def _status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def _transient_types(litellm: Any) -> tuple[type[BaseException], ...]:
    """Exception types of a failure without an HTTP status that is worth another attempt."""
    found: list[type[BaseException]] = [TimeoutError, ConnectionError]
    for name in ("Timeout", "APIConnectionError"):
        kind = getattr(litellm, name, None)
        if isinstance(kind, type) and issubclass(kind, BaseException):
            found.append(kind)
    return tuple(found)


def _connection_failure(exc: BaseException) -> OSError | None:
    """The socket error behind a failure (litellm reports a refused connection as HTTP 500), if any."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    found: OSError | None = None
    while cause is not None and id(cause) not in seen and len(seen) < 16:
        seen.add(id(cause))
        if isinstance(cause, ConnectionError | socket.gaierror):
            found = cause
        cause = cause.__cause__ or cause.__context__
    return found


def is_retryable(exc: BaseException, litellm: Any = None) -> bool:
    """Whether a failed attempt is worth another: the one place in judgekit that decides.

    litellm maps provider errors to its own exceptions (``RateLimitError`` 429, ``BadGatewayError`` 502,
    a plain ``APIError`` for 409 and 529, ``Timeout`` 408 and 504, ``InternalServerError`` 500 also for a
    refused connection), each with ``status_code``. The status decides when there is one: retried when
    in :data:`RETRY_STATUSES`, final otherwise (400, 401, 403, 404, 422...). Without a status, timeouts and
    connection errors are retried and anything else is not.

    Args:
        exc: What the attempt raised.
        litellm: The litellm module, whose ``Timeout`` and ``APIConnectionError`` count as transient
            (``None``: only the built-in ``TimeoutError`` and ``ConnectionError``).

    Returns:
        True when the request should be tried again.
    """
    refused = _refusal(exc)
    if refused is not None:
        return isinstance(refused, TimeoutError)  # too slow is a timeout; too large or redirected is final
    status = _status_of(exc)
    if status is not None:
        return status in RETRY_STATUSES
    return isinstance(exc, _transient_types(litellm)) or _connection_failure(exc) is not None


def _refusal(exc: BaseException) -> ReplyRefused | None:
    """The bounded reader's refusal behind a failure (litellm and the OpenAI SDK wrap it), if any."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen and len(seen) < 16:
        seen.add(id(cause))
        if isinstance(cause, ReplyRefused):
            return cause
        cause = cause.__cause__ or cause.__context__
    return None


def retry_after_seconds(headers: Any, *, now: float | None = None) -> float | None:
    """The wait a reply asks for before the next attempt, from its headers.

    ``retry-after-ms`` (milliseconds, sent by OpenAI and Azure) wins over ``Retry-After``, which is either
    seconds or an HTTP date (a date in the past means no wait).

    Args:
        headers: The reply's headers (anything with a case-insensitive ``get``).
        now: The current POSIX time, for an HTTP date (``None``: the clock).

    Returns:
        The wait in seconds (>= 0), uncapped; ``None`` when no usable header was sent (absent, malformed,
        negative or not finite).
    """
    try:
        millis = headers.get("retry-after-ms")
        value = headers.get("retry-after")
    except Exception:  # a mock or odd header object: no hint
        return None
    if millis is not None:
        try:
            seconds = float(str(millis).strip()) / 1000.0
        except ValueError:
            seconds = math.nan
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
    if value is None:
        return None
    text = str(value).strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=datetime.UTC)
        seconds = max(0.0, when.timestamp() - (time.time() if now is None else now))
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _retry_after(exc: BaseException) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    return retry_after_seconds(headers) if headers is not None else None


class JudgeClient:
    """Make judge requests through litellm, with a cassette, limits, retries and accounting.

    Args:
        params: The judge parameters (model and sampling).
        settings: Transport settings.
        cassette: The cassette; required for ``record`` and ``replay``.
        mode: Cache mode.
        api_key: API key passed to litellm; ``None`` lets litellm read the provider's usual environment
            variable (``OPENAI_API_KEY``...). Never stored.

    Raises:
        JudgekitError: Before any work, when the model is unknown, an API key is missing, the mode needs a
            cassette and has none, or a budget is set for a model that cannot be priced.
    """

    def __init__(
        self,
        params: JudgeParams,
        settings: ClientSettings | None = None,
        *,
        cassette: Cassette | None = None,
        mode: CacheMode = CacheMode.OFF,
        api_key: str | None = None,
    ) -> None:
        self.params = params
        self.settings = settings or ClientSettings()
        self.cassette = cassette
        self.mode = CacheMode(mode)
        self._api_key = api_key
        # Every file and stream judgekit writes leaves this key out, wherever the key came from.
        register_secret(api_key)
        self.usage = UsageSummary()
        self._sem: asyncio.Semaphore | None = None
        self._sem_loop: asyncio.AbstractEventLoop | None = None
        self._admit: asyncio.Semaphore | None = None
        self._inflight: dict[str, asyncio.Future[CallResult]] = {}
        self._in_flight_calls = 0
        self._litellm: Any = None
        self._priced = False
        self._secret_cache: tuple[str, ...] | None = None
        self._lean: LeanTransport | None = None
        self._provider: str | None = None
        self._sent_model: str | None = None
        self._bounded: dict[int, Any] = {}
        self.lean_calls = 0
        """HTTP attempts sent over the lean transport (the rest went through ``litellm.acompletion``)."""
        self.supports_schema = False
        self.batch: BatchAnswers | None = None
        """Where requests are answered instead of the provider (``judgekit grade --batch``), or ``None``."""
        if self.mode is not CacheMode.OFF and cassette is None:
            raise JudgekitError(
                f"cache mode {self.mode.value!r} needs a cassette file; pass one or use mode 'off'"
            )
        self._preflight()

    # ------------------------------------------------------------------ preflight

    def _preflight(self) -> None:
        model = self.params.model
        if self.mode is CacheMode.REPLAY:
            # Replay never calls a provider: no key, no provider resolution needed. Structured output in
            # 'auto' mode must still be decided the same way as when recording, so ask litellm's map.
            if self.params.structured_output == "auto":
                self._litellm = import_litellm()
                self.supports_schema = self._model_supports_schema()
            else:
                self.supports_schema = self.params.structured_output == "json_schema"
            return
        litellm = self._litellm = import_litellm()
        try:
            _, provider, _, _ = litellm.get_llm_provider(model=model, api_base=self.settings.api_base)
        except Exception as exc:
            raise JudgekitError(
                f"unknown judge model {model!r}: litellm cannot tell its provider ({_first_line(exc)}); "
                "write it as provider/model, e.g. openai/gpt-4o-mini or anthropic/claude-3-5-haiku-latest"
            ) from None
        self._provider = provider
        try:
            self._sent_model = str(litellm.get_llm_provider(model=model, api_base=self.settings.api_base)[0])
        except Exception:  # pragma: no cover - it answered just above
            self._sent_model = model
        in_map = self._in_price_map(model)
        if not in_map and self.settings.api_base is None:
            raise JudgekitError(
                f"unknown judge model {model!r}: it is not in litellm's model map. Check the name, or give "
                "api_base for a self-hosted OpenAI-compatible server (with prices if you set a budget)"
            )
        env = litellm.validate_environment(
            model=model, api_key=self._api_key, api_base=self.settings.api_base
        )
        missing = [k for k in env.get("missing_keys", []) if k]
        if missing:
            raise JudgekitError(
                f"judge model {model!r} ({provider}) needs {', '.join(missing)}: set "
                f"{'it' if len(missing) == 1 else 'them'} in the environment or pass an API key; "
                "nothing was run"
            )
        self._priced = in_map or (
            self.settings.input_cost_per_token is not None and self.settings.output_cost_per_token is not None
        )
        if self.settings.max_cost is not None and not self._priced:
            raise JudgekitError(
                f"a cost budget is set but judge model {model!r} has no price in litellm's map; give "
                "input_cost_per_token and output_cost_per_token, or drop the budget"
            )
        if self.params.structured_output == "auto":
            self.supports_schema = self._model_supports_schema()
        else:
            self.supports_schema = self.params.structured_output == "json_schema"
        if self.settings.transport == "auto":
            route = resolve_route(
                litellm,
                model=model,
                api_base=self.settings.api_base,
                api_key=self._api_key,
                sampling=self.sampling(),
            )
            if route is not None:
                self._lean = LeanTransport(litellm, route, pool=self.settings.concurrency)
                self._lean.max_bytes = self.settings.max_reply_bytes
                self._lean.max_wire_bytes = self.settings.max_reply_wire_bytes

    def _limits(self) -> ReplyLimits:
        """The bounds on each reply: the settings' byte caps, the whole request within the timeout."""
        s = self.settings
        return ReplyLimits(s.max_reply_wire_bytes, s.max_reply_bytes, s.timeout)

    def _bounded_client(self) -> Any:
        """The bounded client given to ``litellm.acompletion`` on this loop (``None``: litellm's own).

        One per event loop (an httpx client's connections belong to the loop that opened them).
        """
        loop = id(asyncio.get_running_loop())
        if loop not in self._bounded:
            if len(self._bounded) > 8:
                self._bounded.clear()
            self._bounded[loop] = bounded_litellm_client(
                self._litellm,
                model=self.params.model,
                api_base=self.settings.api_base,
                api_key=self._api_key,
                limits=self._limits(),
            )
        return self._bounded[loop]

    @property
    def route(self) -> str:
        """Where calls go: ``lean-openai``, ``lean-anthropic`` or ``litellm`` (and ``replay``)."""
        if self.mode is CacheMode.REPLAY:
            return "replay"
        return f"lean-{self._lean.route.kind}" if self._lean is not None else "litellm"

    def sampling(self) -> dict[str, Any]:
        """The sampling parameters every request of this client carries (as :meth:`build_request` sets).

        ``temperature`` and ``max_tokens`` always; ``top_p`` and ``seed`` when the judge parameters set them.
        """
        p = self.params
        sampling: dict[str, Any] = {"temperature": p.temperature, "max_tokens": p.max_tokens}
        if p.top_p is not None:
            sampling["top_p"] = p.top_p
        if p.seed is not None:
            sampling["seed"] = p.seed
        return sampling

    async def aclose(self) -> None:
        """Close the lean transport's connection pool on the running loop (``asyncio.run`` also does)."""
        if self._lean is not None:
            await self._lean.aclose()

    def _in_price_map(self, model: str) -> bool:
        try:
            info = self._litellm.get_model_info(model=model)
        except Exception:
            return False
        return bool(info) and info.get("input_cost_per_token") is not None

    def _model_supports_schema(self) -> bool:
        try:
            return bool(self._litellm.supports_response_schema(model=self.params.model))
        except Exception:
            return False

    # ------------------------------------------------------------------ requests

    def build_request(
        self,
        messages: tuple[Mapping[str, str], ...] | list[Mapping[str, str]],
        *,
        schema: dict[str, Any] | None,
        sample: int = 0,
    ) -> dict[str, Any]:
        """The full request for one sample: what the cassette key is computed from.

        Args:
            messages: Chat messages.
            schema: The ``response_format`` to send when structured output is on (ignored otherwise).
            sample: The sample index (0-based); part of the key so that ``n`` samples are ``n`` requests.

        Returns:
            A JSON-ready mapping: model, messages, sampling parameters, response format and sample index.
        """
        p = self.params
        request: dict[str, Any] = {
            "model": p.model,
            "messages": [dict(m) for m in messages],
            "temperature": p.temperature,
            "max_tokens": p.max_tokens,
            "sample": sample,
        }
        if p.top_p is not None:
            request["top_p"] = p.top_p
        if p.seed is not None:
            request["seed"] = p.seed
        if schema is not None and self.supports_schema:
            request["response_format"] = schema
        return request

    def _secrets(self) -> tuple[str, ...]:
        if self._secret_cache is None:
            self._secret_cache = self._find_secrets()
        return self._secret_cache

    def _find_secrets(self) -> tuple[str, ...]:
        found = [self._api_key] if self._api_key else []
        for name, value in os.environ.items():
            upper = name.upper()
            if ("API_KEY" in upper or upper.endswith("_TOKEN") or "SECRET" in upper) and len(value) >= 8:
                found.append(value)
        return tuple(found)

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._sem is None or self._sem_loop is not loop:
            self._sem = asyncio.Semaphore(self.settings.concurrency)
            self._admit = asyncio.Semaphore(ADMISSION_FACTOR * self.settings.concurrency)
            self._sem_loop = loop
            self._inflight = {}
        return self._sem

    def admission(self) -> asyncio.Semaphore:
        """The bound on judgments being prepared or in flight at once: ``ADMISSION_FACTOR x concurrency``.

        A grader holds it from rendering a prompt until the judgment's calls are done, so that a run of a
        thousand judgments renders a few ahead of the free request slots instead of rendering them all
        before the first request is sent (the event loop is one thread: rendering everything first
        delays every request by the whole rendering time). It bounds work, never changes a verdict.
        """
        self._semaphore()
        if self._admit is None:  # pragma: no cover - _semaphore always sets it
            raise RuntimeError("no admission semaphore")
        return self._admit

    async def complete(
        self,
        request: Mapping[str, Any],
        *,
        item: str,
        cache_breaks: tuple[int, ...] | None = None,
        fresh: bool = False,
    ) -> CallResult:
        """Answer one request from the cassette or the provider; never raises for provider trouble.

        Identical requests in flight at the same time share one call.

        Args:
            request: A request from :meth:`build_request`.
            item: A name for the item (``case/criterion/sample``), used in error messages.
            cache_breaks: Where shared prefixes end in the final user message's text
                (:attr:`judgekit.judges.prompt.RenderedPrompt.cache_breaks`), for Anthropic prompt-cache
                breakpoints; ``None`` marks none. Not part of the request: the cassette key, a provider
                batch and OpenAI-compatible calls never see it.
            fresh: Ask the provider even when the cassette holds a reply, and record nothing (a drift
                canary re-asks a question whose recorded reply it compares with the new one).

        Returns:
            The call's result; on failure ``error`` says why and ``content`` is ``None``.

        Raises:
            JudgekitError: When ``fresh`` is asked in replay mode, which never calls the model (exit code 2).
        """
        self._semaphore()
        key = request_key(request)
        if fresh:
            if self.mode is CacheMode.REPLAY:
                raise JudgekitError(
                    "a canary check re-asks the judge, and cache mode 'replay' never calls the model: use "
                    "--cache-mode record or off",
                    exit_code=2,
                )
            return await self._call(request, item=item, cache_breaks=cache_breaks)
        if self.mode is not CacheMode.OFF and self.cassette is not None:
            hit = self.cassette.get(key)
            if hit is not None:
                self.usage.cache_hits += 1
                # a hand-edited cassette's counts are checked as a provider's are (0 when invalid)
                counts, _problem = read_usage(
                    {name: hit.get(name) for name in ("prompt_tokens", "completion_tokens", "cached_tokens")}
                )
                served = hit.get("model")
                return CallResult(
                    content=hit.get("content"),
                    finish_reason=hit.get("finish_reason"),
                    refusal=hit.get("refusal") if isinstance(hit.get("refusal"), str) else None,
                    prompt_tokens=counts["prompt_tokens"],
                    completion_tokens=counts["completion_tokens"],
                    cached_tokens=counts["cached_tokens"],
                    cost=0.0,
                    cached=True,
                    served_model=served[:200] if isinstance(served, str) and served else None,
                )
            if self.mode is CacheMode.REPLAY:
                self.usage.errors[ERROR_CASSETTE_MISS] += 1
                return CallResult(
                    error=ERROR_CASSETTE_MISS,
                    error_detail=(
                        f"{item}: no recorded reply in {self.cassette.path} (replay mode never calls the "
                        "model); record it with mode 'record'"
                    ),
                )
        pending = self._inflight.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[CallResult] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            if self.batch is not None:
                result = self.batch.answer(self, key, request, item=item)
            else:
                result = await self._call(request, item=item, cache_breaks=cache_breaks)
            if result.error is None and self.mode is CacheMode.RECORD and self.cassette is not None:
                self.cassette.put(
                    key,
                    request,
                    {
                        "content": result.content,
                        "finish_reason": result.finish_reason,
                        "prompt_tokens": result.prompt_tokens,
                        "completion_tokens": result.completion_tokens,
                        "cost": result.cost,
                        **({"refusal": result.refusal} if result.refusal is not None else {}),
                        **({"cached_tokens": result.cached_tokens} if result.cached_tokens else {}),
                        **({"model": result.served_model} if result.served_model is not None else {}),
                    },
                    secrets=self._secrets(),
                )
            future.set_result(result)
            return result
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it themselves
            raise
        finally:
            self._inflight.pop(key, None)

    def _budget_left(self) -> bool:
        budget = self.settings.max_cost
        if budget is None:
            return True
        done = max(self.usage.completed, 1)
        spent = self.usage.cost + self.usage.worst_case_cost
        expected_in_flight = self._in_flight_calls * (spent / done)
        return spent + expected_in_flight < budget

    async def _call(
        self, request: Mapping[str, Any], *, item: str, cache_breaks: tuple[int, ...] | None = None
    ) -> CallResult:
        litellm = self._litellm
        if litellm is None:  # pragma: no cover - replay mode never reaches here
            raise RuntimeError("client has no litellm (replay mode)")
        timeouts = (TimeoutError, litellm.Timeout)
        kwargs: dict[str, Any] = {k: v for k, v in request.items() if k != "sample"}
        breaks = self._prompt_cache_breaks(cache_breaks)
        if breaks is not None:
            kwargs["messages"] = prompt_cache_messages(list(request["messages"]), breaks)
        if self.settings.api_base is not None:
            kwargs["api_base"] = self.settings.api_base
        if self._api_key is not None:
            kwargs["api_key"] = self._api_key
        s = self.settings
        lean = self._lean
        body = lean.body_for(request, breaks) if lean is not None else None
        started = time.perf_counter()
        attempts = 0
        last_detail = ""
        secrets = self._secrets()
        for attempt in range(s.max_retries + 1):
            try:
                async with self._semaphore():
                    if not self._budget_left():
                        self.usage.errors[ERROR_BUDGET] += 1
                        return CallResult(
                            error=ERROR_BUDGET,
                            error_detail=(
                                f"{item}: cost budget of ${s.max_cost:.4f} spent "
                                f"(${self.usage.cost + self.usage.worst_case_cost:.4f}"
                                + (
                                    f", of which ${self.usage.worst_case_cost:.4f} charged at worst case for "
                                    f"{self.usage.invalid_usage} repl(ies) with invalid usage"
                                    if self.usage.invalid_usage
                                    else ""
                                )
                                + "); not called"
                            ),
                            attempts=attempts,
                            latency_s=time.perf_counter() - started,
                        )
                    attempts += 1
                    self.usage.http_calls += 1
                    if attempt:
                        self.usage.retries += 1
                    self._in_flight_calls += 1
                    attempt_started = time.perf_counter()
                    try:
                        if lean is not None and body is not None:
                            self.lean_calls += 1
                            response: Any = await lean.send(body, timeout=s.timeout)
                        else:
                            # litellm's own retries off: judgekit retries, and is_retryable decides;
                            # the reply read through judgekit's bounded client where litellm takes one
                            bounded = self._bounded_client()
                            if bounded is not None:
                                kwargs["client"] = bounded
                            response = await asyncio.wait_for(
                                litellm.acompletion(
                                    **kwargs, timeout=s.timeout, max_retries=0, num_retries=0
                                ),
                                timeout=s.timeout + TIMEOUT_GRACE_S,
                            )
                    finally:
                        self._in_flight_calls -= 1
            except Exception as exc:
                refusal = _refusal(exc)
                if refusal is not None and not isinstance(refusal, TimeoutError):
                    return self._provider_error(
                        f"{item}: {_describe(refusal, secrets)} (not retried)", attempts, started
                    )
                if not is_retryable(exc, litellm):
                    return self._provider_error(
                        f"{item}: {_describe(exc, secrets)} (not retried)", attempts, started
                    )
                hung = refusal is not None or (
                    isinstance(exc, timeouts) and time.perf_counter() - attempt_started >= s.timeout * 0.9
                )
                refused = _connection_failure(exc)
                if hung:
                    last_detail = f"the judge did not answer within {s.timeout:g} s"
                elif refused is not None:
                    last_detail = "could not connect to the judge: " + _describe(refused, secrets)
                else:
                    last_detail = _describe(exc, secrets)
                if attempt == s.max_retries:
                    break
                ceiling = min(s.backoff_max, s.backoff_base * (2**attempt))
                delay = random.uniform(0.0, ceiling)
                hint = _retry_after(exc)
                if hint is not None:
                    delay = max(delay, min(hint, RETRY_AFTER_MAX_S))
                await asyncio.sleep(delay)
                continue
            try:
                if isinstance(response, RawReply) and lean is not None:
                    completion = lean.read(response)
                else:
                    completion = completion_from_litellm(response)
                return self._success(completion, attempts, started, request=request, item=item)
            except (AttributeError, IndexError, KeyError, TypeError, ValueError) as exc:
                return self._provider_error(
                    f"{item}: malformed completion ({type(exc).__name__}: {exc})", attempts, started
                )
        return self._provider_error(
            f"{item}: {last_detail} (gave up after {attempts} attempts)", attempts, started
        )

    def _prompt_cache_breaks(self, cache_breaks: tuple[int, ...] | None) -> tuple[int, ...] | None:
        """The breakpoints to send: ``cache_breaks`` for an Anthropic judge with ``prompt_cache`` auto.

        ``None`` (no ``cache_control`` at all) with ``prompt_cache`` off, for any other provider (OpenAI
        caches prefixes by itself) and when the caller gave none.
        """
        if cache_breaks is None or self.settings.prompt_cache == "off" or self._provider != "anthropic":
            return None
        return cache_breaks

    def _provider_error(
        self, detail: str, attempts: int, started: float, *, served_model: str | None = None
    ) -> CallResult:
        """Count a provider error and say what it was (``detail``), after ``attempts`` since ``started``."""
        self.usage.errors[ERROR_PROVIDER] += 1
        return CallResult(
            error=ERROR_PROVIDER,
            error_detail=detail,
            attempts=attempts,
            latency_s=time.perf_counter() - started,
            served_model=served_model,
        )

    def batch_reply(
        self, completion: Completion, *, batch_id: str, price: Callable[[Completion], float | None]
    ) -> CallResult:
        """A request's answer from a provider batch, read exactly as a direct reply is.

        Args:
            completion: The reply the batch gave (its output file's response body).
            batch_id: The batch's id, recorded in the result.
            price: The batch price of a reply in US dollars, or ``None`` when it is unknown.
        """
        return self._success(completion, 0, time.perf_counter(), price=price, batch_id=batch_id)

    def batch_failure(self, detail: str) -> CallResult:
        """A request the provider batch did not answer: a ``provider_error`` saying why (``detail``)."""
        return self._provider_error(detail, 0, time.perf_counter())

    def _success(
        self,
        completion: Completion,
        attempts: int,
        started: float,
        *,
        price: Callable[[Completion], float | None] | None = None,
        batch_id: str | None = None,
        request: Mapping[str, Any] | None = None,
        item: str = "",
    ) -> CallResult:
        content = completion.content
        if content:
            for secret in self._secrets():
                content = content.replace(secret, REDACTED)
        refusal = completion.refusal
        if refusal is not None and not isinstance(refusal, str):
            refusal = str(refusal)
        if refusal is not None and not refusal.strip():
            refusal = None  # an empty refusal field is no refusal
        if refusal:
            for secret in self._secrets():
                refusal = refusal.replace(secret, REDACTED)
        prompt_tokens = completion.prompt_tokens
        completion_tokens = completion.completion_tokens
        if completion.usage_problem is not None:
            cost: float | None = None
            unknown_reason: str | None = (
                f"{completion.usage_problem}; the reply's cost is unknown and the budget counts its "
                "worst case"
            )
            self.usage.invalid_usage += 1
            self.usage.worst_case_cost += self._worst_case_cost(request)
        else:
            cost = self._cost(completion) if price is None else price(completion)
            if cost is not None and not (math.isfinite(cost) and cost >= 0):
                unknown_reason = f"the price of this reply came out as {cost!r}, not a cost; it is unknown"
                cost = None
            else:
                unknown_reason = None if cost is not None else self.unpriced_reason()
        self.usage.completed += 1
        self.usage.prompt_tokens += prompt_tokens
        self.usage.completion_tokens += completion_tokens
        self.usage.cached_tokens += completion.cache_read_tokens
        if cost is None:
            self.usage.unpriced += 1
        else:
            self.usage.cost += cost
        served = completion.model
        requested = self._sent_model
        if (
            served is not None
            and requested is not None
            and not model_matches(served, requested, self.settings.accepted_models)
        ):
            return self._provider_error(
                f"{item + ': ' if item else ''}the reply says it came from model {served!r}, not the "
                f"requested {requested!r}, so its verdict is not counted; if {served!r} is the same "
                "model under another name, list it in judge.accepted_models",
                attempts,
                started,
                served_model=served,
            )
        return CallResult(
            content=content,
            finish_reason="refusal" if refusal is not None else completion.finish_reason,
            refusal=refusal,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cached_tokens=completion.cache_read_tokens,
            cost=cost,
            cost_unknown_reason=unknown_reason,
            attempts=attempts,
            latency_s=time.perf_counter() - started,
            batch_id=batch_id,
            served_model=served,
        )

    def _worst_case_cost(self, request: Mapping[str, Any] | None) -> float:
        """What a reply with invalid usage is charged against the budget, in US dollars.

        ``max_tokens`` completion tokens and one prompt token per UTF-8 byte of the request's messages (a
        token covers at least one byte), at the model's price; 0.0 when the model has no price (then no
        budget can be set).
        """
        messages = request.get("messages", ()) if request is not None else ()
        prompt = len(json.dumps(messages, ensure_ascii=False, default=str).encode())
        worst = Completion(
            content=None,
            refusal=None,
            finish_reason=None,
            prompt_tokens=prompt,
            completion_tokens=self.params.max_tokens,
        )
        s = self.settings
        if s.input_cost_per_token is not None and s.output_cost_per_token is not None:
            return prompt * s.input_cost_per_token + self.params.max_tokens * s.output_cost_per_token
        if not self._priced or self._litellm is None:
            return 0.0
        try:
            prices = self._litellm.cost_per_token(
                model=self.params.model,
                prompt_tokens=worst.prompt_tokens,
                completion_tokens=worst.completion_tokens,
            )
            total = float(prices[0]) + float(prices[1])
        except Exception:
            return 0.0
        return total if math.isfinite(total) and total >= 0 else 0.0

    def unpriced_reason(self) -> str:
        """Why a reply of this client's model has no cost: what the user sees and what to do."""
        return (
            f"litellm has no price for model {self.params.model}; set judge.input_cost_per_token and "
            "judge.output_cost_per_token (US dollars per token) in the run or project configuration"
        )

    def _cost(self, completion: Completion) -> float | None:
        s = self.settings
        prompt_tokens, completion_tokens = completion.prompt_tokens, completion.completion_tokens
        if s.input_cost_per_token is not None and s.output_cost_per_token is not None:
            return prompt_tokens * s.input_cost_per_token + completion_tokens * s.output_cost_per_token
        if not self._priced:
            return None  # not in litellm's map and no prices given: unknown, never guessed
        response = completion.response
        if response is None and self._lean is not None:
            return self._lean.cost(self.params.model, completion)
        hidden = getattr(response, "_hidden_params", None) or {}
        cost = hidden.get("response_cost") if isinstance(hidden, dict) else None
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            return float(cost)
        try:
            value = self._litellm.completion_cost(completion_response=response, model=self.params.model)
        except Exception:
            return None
        return float(value) if isinstance(value, int | float) else None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _describe(exc: BaseException, secrets: tuple[str, ...]) -> str:
    status = _status_of(exc)
    text = f"{type(exc).__name__}" + (f" (HTTP {status})" if status else "") + f": {_first_line(exc)}"
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text[:500]
