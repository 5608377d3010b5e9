"""Provider batch jobs for the judge: collect a run's requests, submit them as one batch, read the answers.

A provider batch (OpenAI's files and batches API, and servers that copy it) answers many independent
requests within a day at about half the price. ``judgekit grade --batch``
(:func:`judgekit.batch_grading.grade_in_batch`) uses this module in three steps:

1. **collect**: the run is graded once with :attr:`JudgeClient.batch` set to a :class:`Collector`, which
   keeps every request the judge would send (exactly the request of a direct call, with the same
   :func:`~judgekit.judges.cache.request_key`) and answers none;
2. **submit**: the requests become a JSONL input file (one line per request, ``custom_id`` = its request
   key, ``body`` = the chat-completions body a direct call sends), uploaded with ``litellm.acreate_file``
   and submitted with ``litellm.acreate_batch``; then ``litellm.aretrieve_batch`` polls it;
3. **answer**: the output and error files (``litellm.afile_content``) become an :class:`AnswerBook`, set
   on the client while the run is graded again: each request gets its batch answer, read and priced like
   a direct reply (at the batch price), or a ``provider_error`` naming what the batch said.

Every step is recorded in a :class:`BatchState` file next to the results file (``OUT.batch.json``,
written atomically right after each provider call), so a run killed at any point and started again with
``--resume`` never uploads or submits twice. The state holds ids, statuses and request keys, never a key.

Only what litellm batches through the OpenAI-compatible files and batches API is accepted
(:func:`batch_target`): providers ``openai``, ``hosted_vllm`` and ``litellm_proxy``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from pydantic import ValidationError

from judgekit.errors import JudgekitError, LocatedError
from judgekit.io.atomic import write_atomic
from judgekit.io.documents import load_json_bounded
from judgekit.judges.cache import CacheMode
from judgekit.judges.client import CallResult, JudgeClient, import_litellm
from judgekit.judges.transport import Completion, LeanRoute, LeanTransport, RawReply, resolve_route
from judgekit.verdict import FrozenModel

__all__ = [
    "BATCHABLE_PROVIDERS",
    "BATCH_ENDPOINT",
    "FAILED_STATUSES",
    "MERGED_STATUS",
    "PARTIAL_STATUSES",
    "PENDING",
    "AnswerBook",
    "BatchState",
    "BatchTarget",
    "Collector",
    "batch_errors",
    "batch_price",
    "batch_target",
    "download",
    "ended_without_answers",
    "input_lines",
    "input_path",
    "keys_digest",
    "load_state",
    "now",
    "request_counts",
    "retrieve",
    "save_state",
    "state_path",
    "submit",
    "upload",
]

BATCHABLE_PROVIDERS = ("openai", "hosted_vllm", "litellm_proxy")
"""litellm providers whose batches go through the OpenAI-compatible files and batches API."""

BATCH_ENDPOINT = "/v1/chat/completions"
"""The endpoint every line of a judge batch calls."""

COMPLETION_WINDOW = "24h"
"""The completion window asked for (the only one the OpenAI batch API offers)."""

FAILED_STATUSES = frozenset({"failed", "expired", "cancelled"})
"""Batch statuses after which no more answers come. A failed batch answered nothing: the run stops with an
error; so does an expired or cancelled one without an output or error file."""

PARTIAL_STATUSES = frozenset({"expired", "cancelled"})
"""Batch statuses whose output and error files, when the provider gives them, hold the requests finished
before the batch ended: those answers are merged, the rest are judge errors."""


def ended_without_answers(state: BatchState) -> bool:
    """Whether a batch ended with nothing to merge: failed, or expired or cancelled without any file."""
    if state.status not in FAILED_STATUSES:
        return False
    return state.status not in PARTIAL_STATUSES or not (state.output_file_id or state.error_file_id)


DONE_STATUS = "completed"
"""The batch status after which its output and error files can be read."""

MERGED_STATUS = "merged"
"""The state file's status once the results file holds a line for every trial of the batch (the
provider's last status is then kept in :attr:`BatchState.ended`)."""

PENDING = "batch_pending"
"""The error of a request while it is being collected (it is answered later, from the batch)."""

STATE_VERSION = 1
"""Version of the batch state file's format."""


def state_path(out: str | os.PathLike[str]) -> Path:
    """The batch state file of a results file: ``OUT.batch.json`` beside it."""
    out = Path(out)
    return out.with_name(out.name + ".batch.json")


def input_path(out: str | os.PathLike[str]) -> Path:
    """The batch input file of a results file: ``OUT.batch-input.jsonl`` beside it (kept for review)."""
    out = Path(out)
    return out.with_name(out.name + ".batch-input.jsonl")


def now() -> str:
    """The current UTC time, ISO 8601 to the second (what the state file records)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


class BatchState(FrozenModel):
    """What has been done with a run's batch, as recorded in ``OUT.batch.json``.

    Attributes:
        version: The file's format version.
        model: The judge's litellm model.
        provider: litellm's provider for it (``openai``...).
        api_base: The base URL the batch was sent to (``None``: the provider's default); never a key.
        endpoint: The endpoint every request calls.
        requests: How many requests the batch holds.
        request_keys: The request keys (each line's ``custom_id``), sorted.
        input_sha256: SHA-256 of the input file's bytes.
        input_file_id: The uploaded input file's id, once uploaded.
        batch_id: The batch's id, once submitted.
        status: ``collected`` (input written, not submitted), then the provider's status
            (``validating``, ``in_progress``, ``finalizing``, ``completed``, ``failed``, ``expired``,
            ``cancelled``), then ``merged`` once the results file holds every answer.
        ended: The provider's last status (``completed``, or ``expired`` or ``cancelled`` for a batch
            merged with part of its answers), kept once :attr:`status` is ``merged``; ``None`` before.
        submitted_at: When the batch was submitted (UTC, ISO 8601).
        updated_at: When this file was last written.
        output_file_id: The provider's output file, once it has one.
        error_file_id: The provider's error file (requests it failed), when it has one.
        request_counts: The provider's counts (``total``, ``completed``, ``failed``), when it gives them.
        errors: The provider's batch-level error messages (a failed batch says why here).
        price: How each answer is priced (litellm's batch price, the regular price, or your prices).
    """

    version: int = STATE_VERSION
    model: str
    provider: str
    api_base: str | None = None
    endpoint: str = BATCH_ENDPOINT
    requests: int = 0
    request_keys: tuple[str, ...] = ()
    input_sha256: str = ""
    input_file_id: str | None = None
    batch_id: str | None = None
    status: str = "collected"
    ended: str | None = None
    submitted_at: str | None = None
    updated_at: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    request_counts: dict[str, int] | None = None
    errors: tuple[str, ...] = ()
    price: str = ""

    def record(self) -> dict[str, Any]:
        """What a result line's ``grading["batch"]`` records: ids, status, size and price, no keys.

        ``status`` is the provider's last status (``completed``; ``expired`` or ``cancelled`` when only
        part of the batch was answered): the status the answers were merged from.
        """
        return {
            "batch_id": self.batch_id,
            "status": self.ended or self.status,
            "input_file_id": self.input_file_id,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "provider": self.provider,
            "api_base": self.api_base,
            "requests": self.requests,
            "submitted_at": self.submitted_at,
            "price": self.price,
        }


def load_state(path: str | os.PathLike[str]) -> BatchState | None:
    """Read a batch state file, or ``None`` when there is none.

    Raises:
        JudgekitError: When the file is not a batch state judgekit can read (exit code 2).
    """
    path = Path(path)
    if not path.exists():
        return None
    try:
        from judgekit.io.documents import read_regular

        data = load_json_bounded(read_regular(path, "batch state file"), source=path)
        state = BatchState.model_validate(data)
    except LocatedError as exc:
        raise JudgekitError(
            f"{path}: not a batch state file ({exc.problem.message}); restore it or remove it to submit a "
            "new batch",
            exit_code=2,
        ) from None
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise JudgekitError(
            f"{path}: field {where}: {err['msg']}; restore the file or remove it to submit a new batch",
            exit_code=2,
        ) from None
    if state.version != STATE_VERSION:
        raise JudgekitError(
            f"{path}: batch state version {state.version}, this judgekit reads version {STATE_VERSION}; "
            "continue with the judgekit that wrote it",
            exit_code=2,
        )
    return state


def save_state(path: str | os.PathLike[str], state: BatchState) -> BatchState:
    """Write ``state`` atomically (stamped with the time), and return what was written."""
    stamped = state.model_copy(update={"updated_at": now()})
    write_atomic(path, json.dumps(stamped.model_dump(mode="json"), indent=2, sort_keys=True) + "\n")
    return stamped


# --------------------------------------------------------------------------- what can be batched


@dataclass(frozen=True)
class BatchTarget:
    """Where a client's batch goes.

    Attributes:
        model: The judge's litellm model (``openai/gpt-4o-mini``).
        provider: litellm's provider (one of :data:`BATCHABLE_PROVIDERS`).
        provider_model: The model name sent in each request body (the provider prefix removed).
        api_base: The configured base URL, or ``None`` for the provider's default.
        api_key: The key given to the client, or ``None`` for the provider's environment variable. Never
            stored.
    """

    model: str
    provider: str
    provider_model: str
    api_base: str | None
    api_key: str | None = field(default=None, repr=False)

    def litellm_args(self) -> dict[str, Any]:
        """The keyword arguments every litellm files and batches call takes for this target."""
        # no retry inside litellm (its OpenAI client retries a 5xx twice): a retried batch creation whose
        # first reply was lost creates a second batch; judgekit's --resume finds the first one instead
        args: dict[str, Any] = {"custom_llm_provider": self.provider, "max_retries": 0}
        if self.api_base is not None:
            args["api_base"] = self.api_base
        if self.api_key is not None:
            args["api_key"] = self.api_key
        return args


def batch_target(client: JudgeClient) -> BatchTarget:
    """Check that the client's requests can go in a provider batch, and say where.

    Args:
        client: The judge client (built with its usual preflight: model known, key present); its API key,
            if it was given one, is used for the batch calls too (else the provider's environment
            variable).

    Raises:
        JudgekitError: (exit code 2) With ``--cache-mode replay`` (nothing is sent); with a cost budget
            (a batch is submitted whole, so no budget can stop it half way); for a provider litellm does
            not batch through the OpenAI-compatible API; for a model whose parameters litellm rewrites
            (the batch file could not hold the request a direct call sends).
    """
    model = client.params.model
    api_key = client._api_key  # the same credentials as the client's direct calls; never stored
    if client.mode is CacheMode.REPLAY:
        raise JudgekitError(
            "--batch sends the judge requests to the provider and --cache-mode replay never calls it: drop "
            "one of them",
            exit_code=2,
        )
    if client.settings.max_cost is not None:
        raise JudgekitError(
            "--batch submits every judge request at once, so a cost budget (--max-cost or judge.max_cost) "
            "cannot stop it half way: drop the budget, or grade without --batch",
            exit_code=2,
        )
    litellm = import_litellm()
    name, provider, _, _ = litellm.get_llm_provider(model=model, api_base=client.settings.api_base)
    if provider not in BATCHABLE_PROVIDERS:
        raise JudgekitError(
            f"judge model {model!r} (provider {provider}) cannot be batched: judgekit batches through "
            f"litellm's OpenAI-compatible files and batches API ({', '.join(BATCHABLE_PROVIDERS)}); "
            "grade without --batch",
            exit_code=2,
        )
    route = resolve_route(
        litellm,
        model=model,
        api_base=client.settings.api_base,
        api_key=api_key or "batch-check",  # the key is checked by the client's preflight, not here
        sampling=client.sampling(),
    )
    if route is None or route.kind != "openai":
        raise JudgekitError(
            f"judge model {model!r}: litellm rewrites its parameters for the provider (o-series and similar "
            "models), so a batch file cannot hold the request a direct call sends; grade without --batch",
            exit_code=2,
        )
    return BatchTarget(
        model=model,
        provider=provider,
        provider_model=name,
        api_base=client.settings.api_base,
        api_key=api_key,
    )


def batch_price(client: JudgeClient) -> tuple[Callable[[Completion], float | None], str]:
    """How a batch answer is priced, and that rule in words (recorded in the state and every line).

    In order: the prices given in the judge settings (``input_cost_per_token``, ``output_cost_per_token``)
    as given; else litellm's batch prices for the model (``input_cost_per_token_batches``,
    ``output_cost_per_token_batches``); else litellm's regular prices (an upper bound: the provider's
    batch price is usually half); else unknown (``None``, with the client's usual reason).

    Returns:
        ``(price, basis)``: ``price`` maps a reply to US dollars (or ``None``); ``basis`` says which rule.
    """
    s = client.settings
    model = client.params.model
    if s.input_cost_per_token is not None and s.output_cost_per_token is not None:
        return (
            _per_token(s.input_cost_per_token, s.output_cost_per_token),
            "the judge settings' input_cost_per_token and output_cost_per_token, as given (set them to the "
            "provider's batch prices)",
        )
    try:
        info = import_litellm().get_model_info(model=model) or {}
    except Exception:
        info = {}
    for input_key, output_key, basis in _LITELLM_PRICES:
        prices = _listed_prices(info, input_key, output_key)
        if prices is not None:
            return _per_token(*prices), basis.format(model=model, p_in=prices[0], p_out=prices[1])
    return (lambda c: None, f"unknown: {client.unpriced_reason()}")


_LITELLM_PRICES: Final = (
    (
        "input_cost_per_token_batches",
        "output_cost_per_token_batches",
        "litellm's batch prices for {model} (input_cost_per_token_batches {p_in:g}, "
        "output_cost_per_token_batches {p_out:g} USD per token)",
    ),
    (
        "input_cost_per_token",
        "output_cost_per_token",
        "litellm has no batch price for {model}: its regular prices are recorded (input {p_in:g}, "
        "output {p_out:g} USD per token), an upper bound on what the batch costs",
    ),
)
"""litellm's per-token price keys a batch is priced by, in order (batch prices, then regular ones as an upper
bound), each with the basis recorded for it."""


def _listed_prices(info: Mapping[str, Any], input_key: str, output_key: str) -> tuple[float, float] | None:
    """The input and output USD per token litellm's model ``info`` lists under those keys (both numbers)."""
    p_in, p_out = info.get(input_key), info.get(output_key)
    if isinstance(p_in, int | float) and isinstance(p_out, int | float):
        return float(p_in), float(p_out)
    return None


def _per_token(p_in: float, p_out: float) -> Callable[[Completion], float | None]:
    """Price a reply at ``p_in`` USD per prompt token and ``p_out`` per completion token."""
    return lambda c: c.prompt_tokens * p_in + c.completion_tokens * p_out


# --------------------------------------------------------------------------- collect and answer


class Collector:
    """A :class:`~judgekit.judges.client.BatchAnswers` that keeps every request and answers none.

    Attributes:
        target: Where the batch goes (its ``provider_model`` is written in each body).
        requests: Request key -> the chat-completions body a direct call sends (the sample index left out,
            the provider's model name in ``model``), in the order first asked.
    """

    def __init__(self, target: BatchTarget) -> None:
        self.target = target
        self.requests: dict[str, dict[str, Any]] = {}

    def answer(self, client: JudgeClient, key: str, request: Mapping[str, Any], *, item: str) -> CallResult:
        """Keep the request and answer it with the :data:`PENDING` error (the collect run is thrown away)."""
        if key not in self.requests:
            body = {k: v for k, v in request.items() if k != "sample"}
            body["model"] = self.target.provider_model
            self.requests[key] = body
        return CallResult(error=PENDING, error_detail=f"{item}: collected for a provider batch")


def input_lines(requests: Mapping[str, Mapping[str, Any]]) -> bytes:
    """The batch input file: one line per request, sorted by key (the same requests give the same bytes)."""
    lines = [
        json.dumps(
            {"custom_id": key, "method": "POST", "url": BATCH_ENDPOINT, "body": requests[key]},
            sort_keys=True,
            ensure_ascii=False,
            separators=(",", ":"),
        )
        for key in sorted(requests)
    ]
    return "".join(line + "\n" for line in lines).encode("utf-8")


def _error_message(entry: Mapping[str, Any]) -> str:
    """What an output or error file line says went wrong (``HTTP 400: ...``), from either shape."""
    error = entry.get("error")
    if isinstance(error, Mapping):
        code = error.get("code")
        message = error.get("message") or "no message"
        return f"{code}: {message}" if code else str(message)
    response = entry.get("response")
    if isinstance(response, Mapping):
        status = response.get("status_code")
        body = response.get("body")
        inner = body.get("error") if isinstance(body, Mapping) else None
        message = inner.get("message") if isinstance(inner, Mapping) else None
        return f"HTTP {status}: {message or json.dumps(body)[:300]}"
    return "the line has neither a response nor an error"


@dataclass
class AnswerBook:
    """A :class:`~judgekit.judges.client.BatchAnswers` over a finished batch's output and error files.

    Attributes:
        state: The batch (its id and request keys).
        price: The batch price of a reply (:func:`batch_price`).
        replies: Request key -> the response body the batch gave (HTTP 200 lines of the output file).
        failures: Request key -> what the batch said went wrong (error file lines, non-200 output lines).
        reader: Reads a response body as a direct reply is read.
    """

    state: BatchState
    price: Callable[[Completion], float | None]
    replies: dict[str, Any] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    reader: LeanTransport | None = None

    def add_file(self, content: bytes, *, source: str) -> None:
        """Read one downloaded output or error file (JSONL) into :attr:`replies` and :attr:`failures`.

        Args:
            content: The file's bytes.
            source: What the file is, for the message of a line that cannot be read (``output file X``).
        """
        for number, raw in enumerate(content.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                entry = json.loads(raw)
            except ValueError:
                entry = None
            key = entry.get("custom_id") if isinstance(entry, dict) else None
            if not isinstance(entry, dict) or not isinstance(key, str):
                continue  # a line with no custom_id answers no request: its request gets "no answer"
            response = entry.get("response")
            status = response.get("status_code") if isinstance(response, dict) else None
            if entry.get("error") is None and status == 200 and isinstance(response, dict):
                self.replies[key] = response.get("body")
                self.failures.pop(key, None)
            elif key not in self.replies:
                self.failures[key] = f"{_error_message(entry)} ({source} line {number})"

    def answer(self, client: JudgeClient, key: str, request: Mapping[str, Any], *, item: str) -> CallResult:
        """The batch's answer to one request, or a ``provider_error`` saying why there is none."""
        batch = self.state.batch_id or "?"
        if key in self.replies:
            if self.reader is None:
                route = LeanRoute(
                    kind="openai", provider="openai", model=self.state.model, url="", headers={}
                )
                self.reader = LeanTransport(import_litellm(), route, pool=1)
            try:
                completion = self.reader.read(RawReply(self.replies[key]))
            except (AttributeError, IndexError, KeyError, TypeError, ValueError) as exc:
                return client.batch_failure(
                    f"{item}: batch {batch} gave a malformed completion ({type(exc).__name__}: {exc})"
                )
            return client.batch_reply(completion, batch_id=batch, price=self.price)
        if key in self.failures:
            return client.batch_failure(f"{item}: batch {batch} failed this request: {self.failures[key]}")
        if key not in set(self.state.request_keys):
            return client.batch_failure(
                f"{item}: this request is not in batch {batch} (the run changed since it was submitted); "
                "grade it without --batch"
            )
        if self.state.status in PARTIAL_STATUSES:
            return client.batch_failure(
                f"{item}: batch {batch} {self.state.status} before answering this request (it is in neither "
                "the output nor the error file)"
            )
        return client.batch_failure(
            f"{item}: batch {batch} returned no answer for this request (it is in neither the output nor the "
            "error file)"
        )


# --------------------------------------------------------------------------- provider calls


def _provider_error(what: str, target: BatchTarget, exc: BaseException) -> JudgekitError:
    text = str(exc).strip().splitlines()
    first = text[0] if text else type(exc).__name__
    if target.api_key:
        first = first.replace(target.api_key, "[REDACTED]")
    where = target.api_base or f"the {target.provider} API"
    return JudgekitError(
        f"{what} at {where} failed ({type(exc).__name__}: {first[:300]}); run the same command with --resume "
        "to try again (nothing is submitted twice)",
        exit_code=1,
    )


async def _provider_call(what: str, target: BatchTarget, call: Awaitable[Any]) -> Any:
    """The reply of a litellm files or batches ``call``; any failure is :func:`_provider_error` (exit 1)."""
    try:
        return await call
    except Exception as exc:
        raise _provider_error(what, target, exc) from None


def _as_dict(obj: Any) -> dict[str, Any]:
    if isinstance(obj, dict):
        return obj
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        data = dump()
        if isinstance(data, dict):
            return data
    return dict(vars(obj))


async def upload(target: BatchTarget, content: bytes, *, name: str) -> str:
    """Upload a batch input file (``litellm.acreate_file``, purpose ``batch``) and return its file id."""
    litellm = import_litellm()
    made = await _provider_call(
        "uploading the batch input file",
        target,
        litellm.acreate_file(file=(name, content), purpose="batch", **target.litellm_args()),
    )
    file_id = _as_dict(made).get("id")
    if not isinstance(file_id, str) or not file_id:
        raise JudgekitError("the provider's reply to the batch file upload has no file id", exit_code=1)
    return file_id


async def submit(target: BatchTarget, input_file_id: str) -> dict[str, Any]:
    """Create the batch (``litellm.acreate_batch``) over an uploaded input file; the provider's batch."""
    litellm = import_litellm()
    batch = await _provider_call(
        "creating the batch",
        target,
        litellm.acreate_batch(
            completion_window=COMPLETION_WINDOW,
            endpoint=BATCH_ENDPOINT,
            input_file_id=input_file_id,
            metadata={"created_by": "judgekit"},
            **target.litellm_args(),
        ),
    )
    data = _as_dict(batch)
    if not isinstance(data.get("id"), str) or not data["id"]:
        raise JudgekitError("the provider's reply to the batch creation has no batch id", exit_code=1)
    return data


LIST_PAGES_MAX = 20
"""Pages of 100 batches :func:`find_batch` reads at most (the newest 2,000 batches of the account)."""


async def find_batch(target: BatchTarget, input_file_id: str) -> dict[str, Any] | None:
    """The batch already created over ``input_file_id``, if any (``litellm.alist_batches``).

    A run killed after sending the batch creation and before recording the batch id (or whose creation
    reply was lost) has an uploaded input file and no batch id; the file id is unique to that upload, so a
    batch over it is that run's batch, and ``--resume`` adopts it instead of submitting a second one.

    Returns:
        The provider's batch (the newest one over the file), or ``None`` when none of the newest
        ``100 * LIST_PAGES_MAX`` batches uses the file.

    Raises:
        JudgekitError: When the provider cannot list batches (exit code 1; ``--resume`` tries again).
    """
    litellm = import_litellm()
    after: str | None = None
    for _ in range(LIST_PAGES_MAX):
        listed = litellm.alist_batches(after=after, limit=100, **target.litellm_args())
        page = _as_dict(await _provider_call("listing the batches", target, listed))
        data = page.get("data")
        batches = [_as_dict(b) for b in data] if isinstance(data, list) else []
        for batch in batches:
            if batch.get("input_file_id") == input_file_id and isinstance(batch.get("id"), str):
                return batch
        if not page.get("has_more") or not batches:
            return None
        last = batches[-1].get("id")
        after = last if isinstance(last, str) else None
        if after is None:
            return None
    return None


async def retrieve(target: BatchTarget, batch_id: str) -> dict[str, Any]:
    """The provider's batch (``litellm.aretrieve_batch``): status, file ids, counts, errors."""
    litellm = import_litellm()
    # without batch_ignore_default_logging, litellm's logging downloads a completed batch's output file
    # again in the background to price it (and prints a traceback when that download fails)
    batch = await _provider_call(
        f"reading batch {batch_id}",
        target,
        litellm.aretrieve_batch(
            batch_id=batch_id,
            litellm_metadata={"batch_ignore_default_logging": True},
            **target.litellm_args(),
        ),
    )
    return _as_dict(batch)


async def download(target: BatchTarget, file_id: str) -> bytes:
    """A file's bytes (``litellm.afile_content``)."""
    litellm = import_litellm()
    content = await _provider_call(
        f"downloading file {file_id}", target, litellm.afile_content(file_id=file_id, **target.litellm_args())
    )
    data = getattr(content, "content", content)
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, bytes | bytearray):
        return bytes(data)
    raise JudgekitError(
        f"the provider's file {file_id} came back as {type(data).__name__}, not bytes", exit_code=1
    )


def batch_errors(batch: Mapping[str, Any]) -> tuple[str, ...]:
    """The batch-level error messages of a provider batch (``errors.data[].message``), if any."""
    errors = batch.get("errors")
    data = errors.get("data") if isinstance(errors, Mapping) else None
    found: list[str] = []
    for entry in data if isinstance(data, Iterable) and not isinstance(data, str | bytes) else ():
        if isinstance(entry, Mapping):
            message = entry.get("message") or entry.get("code")
            line = entry.get("line")
            if message:
                found.append(f"{message}" + (f" (input line {line})" if line is not None else ""))
    return tuple(found)


def request_counts(batch: Mapping[str, Any]) -> dict[str, int] | None:
    """The provider's ``request_counts`` (total, completed, failed), or ``None`` when it gave none."""
    counts = batch.get("request_counts")
    if isinstance(counts, Mapping):
        return {str(k): int(v) for k, v in counts.items() if isinstance(v, int) and not isinstance(v, bool)}
    return None


def keys_digest(content: bytes) -> str:
    """SHA-256 (hex) of an input file's bytes."""
    return hashlib.sha256(content).hexdigest()
