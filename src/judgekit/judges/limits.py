"""The largest judge timeout, retry count, backoff and list of accepted models a configuration may ask for.

Apart from :mod:`judgekit.judges.client` (which enforces them, and imports asyncio and the transport) so
that reading the project configuration (:mod:`judgekit.settings`, which refuses a larger value with exit
code 2) costs no import of the judge client: ``judgekit report`` and the other commands that never call a
judge read the configuration too.
"""

from __future__ import annotations

__all__ = ["ACCEPTED_MODELS_MAX", "JUDGE_BACKOFF_MAX_S", "JUDGE_RETRIES_MAX", "JUDGE_TIMEOUT_MAX_S"]

JUDGE_TIMEOUT_MAX_S = 3600.0
"""Largest ``judge.timeout`` (seconds one judge attempt may take); a larger value is refused (exit 2)."""

JUDGE_RETRIES_MAX = 20
"""Largest ``judge.retries`` (retries after a judge request's first attempt); more is refused (exit 2)."""

JUDGE_BACKOFF_MAX_S = 60.0
"""Largest ``judge.backoff`` (first backoff ceiling in seconds); a larger value is refused (exit 2)."""

ACCEPTED_MODELS_MAX = 64
"""Most names ``judge.accepted_models`` may list; more is refused (exit 2)."""
