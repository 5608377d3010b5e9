"""Setting up the judge layer from a run configuration.

One place for ``judgekit grade``, ``judgekit probe-bias`` and the pytest plugin.

A run configuration is a YAML or JSON file (``--config`` of ``judgekit grade``, ``--judgekit-config`` of the
pytest plugin)::

    judge:
      model: openai/gpt-4o-mini      # litellm model; required for a judge layer
      api_base: http://127.0.0.1:8000/v1
      rubric: honest-reporting       # a built-in rubric id or a rubric file
      temperature: 0.0
      samples: 1
      structured_output: "off"       # auto, json_schema or off
      max_cost: 5.0                  # US dollars
      input_cost_per_token: 0.0000005   # US dollars per prompt token, for a model litellm cannot price
      output_cost_per_token: 0.0000015  # per completion token (give both or neither)
      cache: replay                  # record, replay or off (with a cassette)
      timeout: 60                    # seconds one judge attempt may take
      retries: 4                     # retries on 408, 409, 429, 5xx, 529, connection errors, timeouts
      backoff: 1.0                   # first backoff ceiling in seconds, doubled per retry
      transport: auto                # auto (lean HTTP for OpenAI/Anthropic) or litellm
      prompt_cache: auto             # auto (Anthropic cache_control breakpoints) or "off"
      accepted_models: [gpt-4o-2024-08-06]  # reply models accepted besides the requested one
    record:                          # free-form values recorded with the run
      ticket: EVAL-123

Every setting is part of the judge's fingerprint (except ``api_base``, ``max_cost``, the prices, ``cache``
and the transport settings ``timeout``, ``retries``, ``backoff``, ``transport``, ``prompt_cache`` and
``accepted_models``):
change one and the judge is uncalibrated again. Transport settings never change a verdict, so changing a
timeout never costs the judge its trust. The judge's trust comes from calibration records through
:class:`~judgekit.calibration.trust.TrustBook`, the one trust function.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgekit.errors import JudgekitError

if TYPE_CHECKING:
    from judgekit.graders.rubric import CascadeRouting, RubricGrader, TrustLookup

__all__ = ["JUDGE_SETTINGS", "build_rubric_grader", "load_run_config"]

JUDGE_SETTINGS: tuple[str, ...] = (
    "model",
    "api_base",
    "rubric",
    "temperature",
    "samples",
    "structured_output",
    "max_cost",
    "input_cost_per_token",
    "output_cost_per_token",
    "cache",
    "timeout",
    "retries",
    "backoff",
    "transport",
    "prompt_cache",
    "accepted_models",
)
"""The settings a run configuration's ``judge`` mapping may hold."""


def load_run_config(path: str | os.PathLike[str] | None) -> dict[str, Any]:
    """Read a run configuration (``{}`` when ``path`` is ``None`` or the file is empty).

    Args:
        path: The file, as text or a path object.

    Raises:
        JudgekitError: When the file cannot be read or parsed (located), is not a mapping, or names an
            unknown setting (the allowed ones are listed).
    """
    path = Path(path) if path is not None else None
    if path is None:
        return {}
    from judgekit.io.documents import read_document

    doc = read_document(path)
    data = doc.data
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise JudgekitError(f"{path}: a run configuration must be a mapping of settings", exit_code=2)
    unknown = sorted(set(data) - {"judge", "record"})
    if unknown:
        raise JudgekitError(
            f"{path}: unknown setting(s) {', '.join(unknown)}; allowed: judge ({', '.join(JUDGE_SETTINGS)}), "
            "record (free-form values recorded with the run)",
            exit_code=2,
        )
    judge = data.get("judge", {})
    if not isinstance(judge, dict):
        raise JudgekitError(f"{path}: 'judge' must be a mapping", exit_code=2)
    bad = sorted(set(judge) - set(JUDGE_SETTINGS))
    if bad:
        import difflib

        hints = [
            f"'{name}' (did you mean '{close[0]}'?)"
            if (close := difflib.get_close_matches(name, JUDGE_SETTINGS, 1))
            else f"'{name}'"
            for name in bad
        ]
        raise JudgekitError(
            f"{path}: unknown judge setting(s) {', '.join(hints)}; "
            f"allowed: {', '.join(sorted(JUDGE_SETTINGS))}",
            exit_code=2,
        )
    return data


def build_rubric_grader(
    model: str,
    *,
    rubric: str,
    cassette: str | os.PathLike[str] | None,
    mode: str,
    api_base: str | None,
    max_cost: float | None,
    temperature: float | None,
    samples: int | None,
    concurrency: int,
    records: str | os.PathLike[str] | None = None,
    structured_output: str | None = None,
    trust: TrustLookup | None = None,
    timeout: float | None = None,
    retries: int | None = None,
    backoff: float | None = None,
    cascade: CascadeRouting | None = None,
    input_cost_per_token: float | None = None,
    output_cost_per_token: float | None = None,
    transport: str | None = None,
    prompt_cache: str | None = None,
    accepted_models: tuple[str, ...] | list[str] | None = None,
) -> RubricGrader:
    """The judge layer: a rubric grader over a litellm client, trusted through ``records``.

    Args:
        model: The litellm model.
        rubric: A built-in rubric id, or a rubric file (``.yaml``/``.yml``).
        cassette: The judge cassette to record to or replay from, if any, as text or a path object.
        mode: ``record``, ``replay`` or ``off``.
        api_base: An OpenAI-compatible base URL.
        max_cost: Judge budget in US dollars (``None``: no budget).
        temperature: Sampling temperature (``None``: the default).
        samples: Samples per criterion (``None``: the default).
        concurrency: Requests in flight at once (>= 1).
        records: Calibration records deciding trust, read into a
            :class:`~judgekit.calibration.trust.TrustBook` (``None`` with no ``trust``: every verdict
            untrusted), as text or a path object.
        structured_output: ``auto``, ``json_schema`` or ``off`` (``None``: the default).
        trust: A trust lookup already built (a ``TrustBook`` the caller also consults), used instead of
            reading ``records`` again.
        timeout: Seconds one judge attempt may take (``None``: the client's default, 60).
        retries: Retries after a request's first attempt (``None``: the client's default, 4).
        backoff: First backoff ceiling in seconds (``None``: the client's default, 1.0). None of the
            three enters the fingerprint.
        cascade: Route criteria through a judge cascade whose first stage is this grader (``None``: none).
        input_cost_per_token: Price in US dollars per prompt token, replacing litellm's (``None``: litellm's
            price, or unknown for a model it does not price). Give both prices or neither.
        output_cost_per_token: Price per completion token.
        transport: ``auto`` or ``litellm`` (``None``: the client's default, ``auto``); how calls are sent,
            never part of the fingerprint.
        prompt_cache: ``auto`` or ``off`` (``None``: the client's default, ``auto``); whether Anthropic
            prompt-cache breakpoints are sent, never part of the fingerprint.
        accepted_models: Reply ``model`` names accepted besides the requested model and its dated
            versions (``None``: none); never part of the fingerprint.

    Raises:
        JudgekitError: When a setting has a bad value (exit code 2, naming the setting) or the rubric
            cannot be loaded.
    """
    cassette = Path(cassette) if cassette is not None else None
    records = Path(records) if records is not None else None
    from pydantic import ValidationError

    from judgekit.graders.rubric import RubricGrader
    from judgekit.judges.cache import CacheMode, Cassette
    from judgekit.judges.client import ClientSettings, JudgeClient, JudgeParams
    from judgekit.judges.rubric import load_builtin_rubric, load_rubric

    rubric_obj = (
        load_rubric(Path(rubric)) if Path(rubric).suffix in (".yaml", ".yml") else load_builtin_rubric(rubric)
    )
    params: dict[str, Any] = {"model": model}
    for name, value in (
        ("temperature", temperature),
        ("samples", samples),
        ("structured_output", structured_output),
    ):
        if value is not None:
            params[name] = value
    try:
        judge_params = JudgeParams(**params)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        field = ".".join(str(p) for p in err["loc"])
        raise JudgekitError(
            f"judge setting {field}: {err['msg']} (got {err.get('input')!r}); "
            "fix the configuration or the option",
            exit_code=2,
        ) from None
    if (input_cost_per_token is None) != (output_cost_per_token is None):
        given, missing = (
            ("input_cost_per_token", "output_cost_per_token")
            if output_cost_per_token is None
            else ("output_cost_per_token", "input_cost_per_token")
        )
        raise JudgekitError(
            f"judge setting {given} is set but {missing} is not: give both prices (US dollars per token) "
            "or neither",
            exit_code=2,
        )
    sending: dict[str, Any] = {
        name: value
        for name, value in (
            ("timeout", timeout),
            ("max_retries", retries),
            ("backoff_base", backoff),
            ("transport", transport),
            ("prompt_cache", prompt_cache),
            (
                "accepted_models",
                tuple(accepted_models) if isinstance(accepted_models, list | tuple) else accepted_models,
            ),
        )
        if value is not None
    }
    try:
        client_settings = ClientSettings(
            api_base=api_base,
            concurrency=max(1, concurrency),
            max_cost=max_cost,
            input_cost_per_token=input_cost_per_token,
            output_cost_per_token=output_cost_per_token,
            **sending,
        )
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        name = str(err["loc"][0]) if err["loc"] else "transport"
        name = {"max_retries": "retries", "backoff_base": "backoff"}.get(name, name)
        raise JudgekitError(
            f"judge setting {name}: {err['msg']} (got {err.get('input')!r}); "
            "fix the configuration or the option",
            exit_code=2,
        ) from None
    client = JudgeClient(
        judge_params,
        client_settings,
        cassette=Cassette(cassette) if cassette is not None else None,
        mode=CacheMode(mode),
    )
    if trust is None and records is not None:
        from judgekit.calibration.trust import TrustBook

        trust = TrustBook(records)
    return RubricGrader(rubric_obj, client, trust=trust, cascade=cascade)
