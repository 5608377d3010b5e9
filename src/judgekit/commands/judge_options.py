"""The judge transport options (``--judge-timeout``, ``--judge-retries``, ``--judge-backoff``) in one place.

Every command that calls a judge (``grade``, ``probe-bias``) takes them with the same names, help and
meaning. None of them changes a verdict, so none enters the judge's fingerprint; their ranges are checked
by :func:`judgekit.settings.resolve_settings` (limits in ``docs/reference/limits.md``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["judge_backoff_option", "judge_retries_option", "judge_timeout_option"]


def judge_timeout_option() -> Any:
    """``--judge-timeout``: seconds one judge attempt may take (``None``: the configured value, else 60)."""
    import typer

    return typer.Option(
        None,
        "--judge-timeout",
        help="Seconds one judge attempt may take (default: 60); a judge that does not answer in time is cut "
        "off and retried, then the criterion is an error verdict. Not part of the judge's fingerprint.",
    )


def judge_retries_option() -> Any:
    """``--judge-retries``: retries after the first attempt (``None``: the configured value, else 4)."""
    import typer

    return typer.Option(
        None,
        "--judge-retries",
        help="Retries of a judge request on HTTP 408, 409, 429, 500, 502, 503, 504, 529, connection errors "
        "and timeouts (default: 4; 0: none).",
    )


def judge_backoff_option() -> Any:
    """``--judge-backoff``: first backoff ceiling in seconds (``None``: the configured value, else 1.0)."""
    import typer

    return typer.Option(
        None,
        "--judge-backoff",
        help="First backoff ceiling in seconds, doubled on each retry, with jitter (default: 1.0); a "
        "Retry-After header is waited at least.",
    )
