"""Helpers shared by the hostile sweeps that talk to a loopback judge (``tests/judges/server.py``)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from judgekit.judges.client import ClientSettings, JudgeClient, JudgeParams

__all__ = ["AIRDESK", "MODEL", "ask_judge", "grade_argv", "one_trial_transcripts"]

AIRDESK = Path(__file__).resolve().parents[2] / "examples" / "airdesk"
MODEL = "openai/test-judge"
"""The judge model the sweeps ask for (the loopback server answers as ``test-judge``)."""


def ask_judge(settings: ClientSettings, *, key: str) -> tuple[Any, float]:
    """One judgment of ``grade this`` by :data:`MODEL` with ``settings`` and the API key ``key``.

    Returns:
        The client's result (item ``case/criterion/0``) and the seconds it took.
    """
    client = JudgeClient(JudgeParams(model=MODEL), settings, api_key=key)

    async def run() -> Any:
        request = client.build_request([{"role": "user", "content": "grade this"}], schema=None)
        return await client.complete(request, item="case/criterion/0")

    started = time.perf_counter()
    result = asyncio.run(run())
    return result, time.perf_counter() - started


def one_trial_transcripts(folder: Path) -> Path:
    """A transcripts file in ``folder`` holding the first AirDesk trial of ``agent-v2``: its path."""
    path = folder / "one-trial.jsonl"
    first = (AIRDESK / "runs" / "agent-v2.jsonl").read_text(encoding="utf-8").splitlines()[0]
    path.write_text(first + "\n", encoding="utf-8")
    return path


def grade_argv(root: Path, out: Path, api_base: str) -> list[str]:
    """The command line of ``judgekit grade`` of one AirDesk trial judged by :data:`MODEL` at ``api_base``.

    The trial's transcripts file is written under ``root``; results go to ``out``, judge records to
    ``root/records`` (made here); untrusted text is counted; no progress bar.
    """
    (root / "records").mkdir(exist_ok=True)
    return [
        "grade",
        "--cases",
        str(AIRDESK),
        "--transcripts",
        str(one_trial_transcripts(root)),
        "--out",
        str(out),
        "--judge-model",
        MODEL,
        "--judge-api-base",
        api_base,
        "--records",
        str(root / "records"),
        "--untrusted",
        "count",
        "--no-progress",
    ]
