"""The demo's HTML reports opened in a real browser (headless Chromium from Debian's ``chromium`` package).

Each page must render (a title, a heading, visible text), log no console error or page error, make no
request that fails and no request to anything but the local file itself (the pages are self-contained),
and carry its figures as inline ``<svg>`` elements. A full-page screenshot of each page is kept as a test
artifact: under ``$JUDGEKIT_ARTIFACTS`` when set, else in the test's temporary folder; the paths are
printed.

Without Chromium the tests skip with the reason, except under CI (``CI=true``), where a missing browser
is a failure: CI installs it (``.ci/run``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from reports.chromium import artifacts_folder, chromium


@pytest.fixture(scope="module")
def browser(demo_pages):  # the demo runs first: playwright's sync API keeps an event loop running
    yield from chromium()


@dataclass
class DemoOutput:
    out: Path
    stdout: str


@pytest.fixture(scope="module")
def demo_pages(tmp_path_factory):
    """The demo run the way a user runs it: ``judgekit demo --out DIR`` in a fresh process."""
    out = tmp_path_factory.mktemp("demo") / "report"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(
        [sys.executable, "-m", "judgekit.cli", "demo", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"report: {out / 'index.html'}" in done.stdout
    return DemoOutput(out=out, stdout=done.stdout)


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> Path:
    return artifacts_folder(tmp_path_factory, "screenshots")


def _open(browser, page_path: Path, artifacts: Path, name: str):
    """Load a page; return (page, console errors, failed requests, foreign requests, screenshot)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, offline=True)
    page = context.new_page()
    errors: list[str] = []
    failed: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("requestfailed", lambda r: failed.append(f"{r.url}: {r.failure}"))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(page_path.as_uri(), wait_until="load")
    shot = artifacts / f"{name}.png"
    page.screenshot(path=str(shot), full_page=True)
    print(f"screenshot: {shot}")
    foreign = [u for u in requests if u != page_path.as_uri()]
    return context, page, errors, failed, foreign, shot


PAGES = {
    "index": ("index.html", "judgekit demo", 0),
    "run-v1": ("reports/agent-v1.html", "pass^k and pass@k", 1),
    "run-v2": ("reports/agent-v2.html", "Failure categories", 1),
    "comparison": ("reports/comparison.html", "Verdict:", 2),
    "calibration": ("reports/calibration.html", "Trust conditions", 3),
}


@pytest.mark.parametrize("name", list(PAGES))
def test_page_renders_without_errors_or_network(name, browser, demo_pages, artifacts):
    relative, expected_text, min_svgs = PAGES[name]
    path = demo_pages.out / relative
    context, page, errors, failed, foreign, shot = _open(browser, path, artifacts, name)
    try:
        assert page.title().strip()
        assert page.locator("h1").count() == 1
        body = page.inner_text("body")
        assert expected_text in body
        assert errors == []
        assert failed == []
        assert foreign == []  # self-contained: nothing but the page itself is requested
        assert page.locator("svg").count() >= min_svgs
        for i in range(page.locator("svg").count()):
            box = page.locator("svg").nth(i).bounding_box()
            assert box is not None
            assert box["width"] > 50
            assert box["height"] > 20
        assert shot.stat().st_size > 10_000
    finally:
        context.close()


def test_run_report_shows_pass_k_curves_and_failure_table(browser, demo_pages, artifacts):
    path = demo_pages.out / "reports" / "agent-v1.html"
    context, page, errors, failed, foreign, _ = _open(browser, path, artifacts, "run-v1-detail")
    try:
        chart = page.locator("svg", has=page.locator("title", has_text="pass^k and pass@k against k"))
        assert chart.count() == 1
        assert chart.locator("polyline").count() >= 2  # a pass^k and a pass@k curve per suite
        table = page.locator("h2:has-text('Failure categories') + table")
        assert table.count() == 1
        assert table.locator("tbody tr").count() >= 1
        assert "SYNTHETIC" in page.inner_text("body")
        assert errors == failed == foreign == []
    finally:
        context.close()


def test_calibration_report_shows_confusion_matrices_and_intervals(browser, demo_pages, artifacts):
    path = demo_pages.out / "reports" / "calibration.html"
    context, page, errors, failed, foreign, _ = _open(browser, path, artifacts, "calibration-detail")
    try:
        confusion = page.locator("svg[aria-label^='Judge vs']:has(rect)")
        assert confusion.count() >= 3  # vs consensus, and vs each of the two experts
        labels = [confusion.nth(i).get_attribute("aria-label") for i in range(confusion.count())]
        assert "Judge vs consensus" in labels
        assert confusion.first.locator("rect").count() >= 4  # at least a 2 x 2 matrix of cells
        intervals = page.locator("svg[aria-label*='ceiling']")
        assert intervals.count() == 1
        assert intervals.locator("circle").count() >= 5  # point estimates, each with its interval line
        assert intervals.locator("line[stroke='#1f4e9c']").count() >= 5
        assert "SYNTHETIC" in page.inner_text("body")
        assert errors == failed == foreign == []
    finally:
        context.close()


def test_index_links_every_report(browser, demo_pages, artifacts):
    path = demo_pages.out / "index.html"
    context, page, errors, failed, _, _ = _open(browser, path, artifacts, "index-links")
    try:
        hrefs = [a.get_attribute("href") for a in page.locator("a").all()]
        assert sorted(h for h in hrefs if h) == sorted(
            [
                "reports/agent-v1.html",
                "reports/agent-v2.html",
                "reports/comparison.html",
                "viewer/index.html",
                "reports/calibration.html",
            ]
        )
        for href in hrefs:
            assert (demo_pages.out / str(href)).is_file()
        page.click("a[href='reports/comparison.html']")
        page.wait_for_load_state("load")
        assert "Comparison" in page.title()
        assert errors == failed == []
    finally:
        context.close()
