"""Headless Chromium for the browser tests (Debian's ``chromium`` driven by Playwright) and their artifacts.

Browsers cannot be downloaded here, so Playwright launches the system Chromium by its executable path
(``$JUDGEKIT_CHROMIUM``, default ``/usr/bin/chromium``). Without it the browser tests skip with the reason,
except under CI (``CI=true``), where a missing browser is a failure: ``.ci/run`` installs it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

__all__ = ["ARGS", "CHROMIUM", "IN_CI", "artifacts_folder", "chromium", "missing"]

CHROMIUM = os.environ.get("JUDGEKIT_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def missing() -> str | None:
    """Why the browser cannot be used, or ``None`` when it can."""
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)) and shutil.which(CHROMIUM) is None:
        return f"headless Chromium not found at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (dev dependency group)"
    return None


def chromium() -> Iterator[Any]:
    """Launch the browser for a module-scoped fixture (``yield from chromium()``); skip or fail without it.

    Start it after anything that runs its own event loop (the demo): Playwright's sync API keeps one running.
    """
    why = missing()
    if why is not None:
        if IN_CI:
            pytest.fail(f"CI=true but {why}: .ci/run installs Chromium before the tests")
        pytest.skip(why)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def artifacts_folder(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """Where screenshots go: ``$JUDGEKIT_ARTIFACTS`` when set, else a temporary folder named ``name``."""
    folder = os.environ.get("JUDGEKIT_ARTIFACTS")
    path = Path(folder) if folder else tmp_path_factory.mktemp(name)
    path.mkdir(parents=True, exist_ok=True)
    return path
