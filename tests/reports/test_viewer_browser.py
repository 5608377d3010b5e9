"""The trial viewer (``judgekit view``) driven in a real browser: Debian's ``chromium`` through Playwright.

The demo's two runs are viewed side by side from ``file://``: the run page is filtered to failures, a
trial is opened (gs-double-charge trial 2 of agent-v1: its ``rule:1`` evidence is call 2, issue_refund,
which must be highlighted), its evidence is checked, and the comparison page's links lead to both runs'
trials. Every page must log no console error and request nothing but files inside the viewer folder.
A screenshot of each page is kept under ``$JUDGEKIT_ARTIFACTS`` (else the test's temporary folder).

Without Chromium the tests skip with the reason, except under CI (``CI=true``), where a missing browser
is a failure.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from judgekit.cli import main
from reports.chromium import artifacts_folder, chromium
from reports.test_run_compare import write_runs as write_flipped_runs

HOSTILE = '</script><script>window.PWNED=1</script><img src=x onerror="window.PWNED=2"> \u2028 done'


@dataclass
class Viewers:
    demo: Path
    hostile: Path


def _hostile_run(tmp: Path) -> Path:
    """A results file whose transcript and judge quote carry markup and script."""
    from judgekit.results import CaseRef, TrialSource, dump_result_line, make_result_line
    from judgekit.verdict import CheckResult, Evidence, Grade, Verdict

    raw = json.dumps(
        {
            "case_id": "c-<b>x</b>",
            "trial": 1,
            "messages": [
                {"role": "user", "content": HOSTILE},
                {"role": "assistant", "content": f"Reply: {HOSTILE}"},
            ],
        }
    )
    (tmp / "t.jsonl").write_text(raw + "\n", encoding="utf-8")
    check = CheckResult(
        check_id="criterion:<i>q</i>",
        layer="rubric",
        verdict=Verdict.FAIL,
        reason=HOSTILE,
        evidence=(Evidence(kind="judge", summary=HOSTILE, quote=HOSTILE, message_index=1),),
    )
    line = make_result_line(
        run_id="r",
        case=CaseRef(id="c-1", version=1),
        grade=Grade(case_id="c-1", trial=1, verdict=Verdict.FAIL, checks=(check,)),
        source=TrialSource(
            file=str(tmp / "t.jsonl"), line=1, sha256=hashlib.sha256(raw.encode()).hexdigest()
        ),
        cost_unknown_reason="model openai/x has no price in the cost map",
    )
    results = tmp / "hostile.jsonl"
    results.write_text(dump_result_line(line) + "\n", encoding="utf-8")
    return results


@pytest.fixture(scope="module")
def viewers(tmp_path_factory: pytest.TempPathFactory) -> Viewers:
    """Built before the browser starts: playwright's sync API keeps an event loop running."""
    root = tmp_path_factory.mktemp("viewer-browser")
    assert main(["-q", "demo", "--out", str(root / "demo")]) in (0, None)
    results = root / "demo" / "results"
    args = ["-q", "view", str(results / "agent-v1.jsonl"), str(results / "agent-v2.jsonl")]
    assert main([*args, "--cases", "examples/airdesk", "--out", str(root / "viewer")]) == 0
    hostile = _hostile_run(root)
    assert main(["-q", "view", str(hostile), "--out", str(root / "hostile")]) == 0
    return Viewers(demo=root / "viewer", hostile=root / "hostile")


@pytest.fixture(scope="module")
def browser(viewers: Viewers) -> Iterator[Any]:  # the viewers are built first (the demo runs an event loop)
    yield from chromium()


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return artifacts_folder(tmp_path_factory, "viewer-screenshots")


@dataclass
class Watched:
    """A page with everything it logged and requested."""

    page: Any
    folder: Path
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def outside(self) -> list[str]:
        """Requests for anything but a file inside the viewer folder."""
        inside = self.folder.resolve().as_uri() + "/"
        return [u for u in self.requests if not u.startswith(inside)]

    def shot(self, artifacts: Path, name: str) -> Path:
        path = artifacts / f"viewer-{name}.png"
        self.page.screenshot(path=str(path), full_page=False)
        print(f"screenshot: {path}")
        return path


@pytest.fixture
def watched(browser: Any, viewers: Viewers) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": 1400, "height": 900}, offline=True)
    page = context.new_page()
    seen = Watched(page=page, folder=viewers.demo)
    page.on("console", lambda m: seen.errors.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: seen.errors.append(str(e)))
    page.on("request", lambda r: seen.requests.append(r.url))
    page.on("dialog", lambda d: (seen.dialogs.append(d.message), d.dismiss()))
    try:
        yield seen
    finally:
        context.close()


def _count(page: Any) -> str:
    return str(page.inner_text("#count"))


def _expect_count(page: Any, text: str) -> None:
    """Wait until the count says ``text`` (CSP-safe: no script is evaluated from a string)."""
    from playwright.sync_api import expect

    expect(page.locator("#count")).to_have_text(text)


def test_run_page_filter_trial_evidence_and_comparison(
    watched: Watched, viewers: Viewers, artifacts: Path
) -> None:
    page = watched.page
    page.goto((viewers.demo / "index.html").as_uri(), wait_until="load")
    page.wait_for_selector("#rows a.vrow")
    assert _count(page) == "showing 104 of 104 trials"
    assert "agent-v1.jsonl" in page.title()
    # a judge graded the demo: the run summary says its verdicts on never-labelled criteria as the reports do
    from judgekit.reports.run_markdown import run_unlabelled_text
    from judgekit.reports.run_model import report_run

    report = report_run(viewers.demo.parent / "demo" / "results" / "agent-v1.jsonl", undecided="fail")[0]
    said = run_unlabelled_text(report)
    assert said is not None
    assert said.startswith("Judge verdicts on criterion texts never labelled in calibration: ")
    assert page.inner_text("#run-unlabelled") == said
    watched.shot(artifacts, "run")
    # filter to failures
    page.select_option("#filter-verdict", "fail")
    _expect_count(page, "showing 29 of 104 trials")
    assert _count(page) == "showing 29 of 104 trials"
    verdicts = page.locator("#rows a.vrow .c-verdict").all_inner_texts()
    assert verdicts
    assert set(verdicts) == {"fail"}
    watched.shot(artifacts, "run-failures")
    # open gs-double-charge trial 2
    row = page.locator("#rows a.vrow", has=page.locator(".c-case", has_text="gs-double-charge")).filter(
        has=page.locator(".c-trial", has_text="2")
    )
    row.first.click()
    page.wait_for_selector("#checks")
    assert page.inner_text("#trial-head h2").startswith("gs-double-charge (v3) trial 2")
    # both gates that failed it, each with its own evidence and as deciding the verdict (issue 35, trap 3)
    gates = page.locator("#trial-gates li").all_inner_texts()
    assert [g.split("\n")[0] for g in gates] == [
        "fail state:collateral state decided the verdict",
        "fail rule:1 rules decided the verdict",
    ]
    assert "refunds/RF-7002: row added" in gates[0]
    assert "call 2 issue_refund" in gates[1]
    offending = page.locator("#call-2")
    assert "offending" in str(offending.get_attribute("class"))
    assert "call 2: issue_refund" in offending.inner_text()
    assert page.locator(".call.offending").count() == 1
    rule = page.locator("[id='check-rule:1']")
    assert "call index 2 (issue_refund)" in rule.inner_text()
    assert "forbidden: issue_refund when calls > 1" in rule.inner_text()
    collateral = page.locator("[id='check-state:collateral'] table.diff tr.d-collateral")
    assert collateral.count() == 1
    assert "RF-7002" in collateral.inner_text()
    judged = page.locator("[id='check-criterion:case.response_rubric.0']")
    assert "found in message 8" in judged.inner_text()
    assert "openai/airdesk-synthetic-judge" in judged.inner_text()
    # the demo replays its judge: a judgment costs nothing now, and says why
    assert "$0.0000 (0 tokens in, 0 out; 1 of 1 replies replayed from the cassette)" in judged.inner_text()
    mark = page.locator("#msg-8 mark.quote")
    assert mark.inner_text() == "I've refunded both charges of 412.18 to the card ending 4417"
    assert "$0.0000" in page.inner_text("#trial-cost")
    watched.shot(artifacts, "trial")
    offending.scroll_into_view_if_needed()
    watched.shot(artifacts, "trial-offending-call")
    # Back returns to the filtered run page
    page.go_back()
    page.wait_for_selector("#rows a.vrow")
    assert _count(page) == "showing 29 of 104 trials"
    # the comparison: a flip links to both runs' trials
    page.click("#nav-compare")
    page.wait_for_selector("#compare-table")
    assert page.inner_text("#compare-verdict").startswith("Verdict: ")
    flip = page.locator("#compare-table tbody tr.ch-fixed, #compare-table tbody tr.ch-broken").first
    case = str(flip.get_attribute("data-case"))
    watched.shot(artifacts, "comparison")
    flip.locator("td").nth(4).locator("a").first.click()
    page.wait_for_selector("#checks")
    assert page.inner_text("#trial-head h2").startswith(case)
    assert "agent-v1.jsonl" in page.inner_text("#trial-head")
    page.go_back()
    page.wait_for_selector("#compare-table")
    page.locator(f"#compare-table tbody tr[data-case='{case}'] td").nth(5).locator("a").first.click()
    page.wait_for_selector("#checks")
    assert page.inner_text("#trial-head h2").startswith(case)
    assert "agent-v2.jsonl" in page.inner_text("#trial-head")
    watched.shot(artifacts, "comparison-trial-b")
    assert watched.errors == []
    assert watched.outside() == []
    assert any("/data/run1/chunk-0.js" in u for u in watched.requests)  # loaded on demand


def test_sort_and_search_render_only_the_visible_rows(watched: Watched, viewers: Viewers) -> None:
    page = watched.page
    page.goto((viewers.demo / "index.html").as_uri() + "#run/1", wait_until="load")
    page.wait_for_selector("#rows a.vrow")
    drawn = page.locator("#rows a.vrow").count()
    assert 0 < drawn < 104  # virtualised: the rows out of view are not in the page
    page.fill("#search", "gs-double-charge")
    _expect_count(page, "showing 4 of 104 trials")
    page.fill("#search", "")
    _expect_count(page, "showing 104 of 104 trials")
    page.click("button[data-sort='verdict']")
    first = page.locator("#rows a.vrow .c-verdict").first.inner_text()
    page.click("button[data-sort='verdict']")
    last = page.locator("#rows a.vrow .c-verdict").first.inner_text()
    assert (first, last) == ("fail", "pass")  # the gate order: fail, error, undecided states, pass
    assert watched.errors == []
    assert watched.outside() == []


def test_hostile_text_is_shown_as_text_and_runs_nothing(
    watched: Watched, viewers: Viewers, artifacts: Path
) -> None:
    watched.folder = viewers.hostile
    page = watched.page
    page.goto((viewers.hostile / "index.html").as_uri() + "#trial/0/0", wait_until="load")
    page.wait_for_selector("#checks")
    assert page.evaluate("window.PWNED === undefined")
    assert page.locator("#app img").count() == 0
    assert page.locator("#app script").count() == 0
    assert "<img src=x onerror=" in page.inner_text("#msg-0")
    assert "<script>window.PWNED=1</script>" in page.inner_text("#msg-1 mark.quote")
    assert "unknown (model openai/x has no price in the cost map)" in page.inner_text("#trial-cost")
    watched.shot(artifacts, "hostile")
    page.goto((viewers.hostile / "index.html").as_uri() + "#run/0", wait_until="load")
    page.wait_for_selector("#run-summary")
    assert page.locator("#run-unlabelled").count() == 0  # no judge fingerprint: no judge layer to speak of
    assert watched.dialogs == []
    assert watched.errors == []
    assert watched.outside() == []


@pytest.fixture(scope="module")
def flipped_viewer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs where trial 2 of refill-broke broke while its task still fails (issue 35)."""
    root = tmp_path_factory.mktemp("viewer-flipped")
    a, b = write_flipped_runs(root)
    assert main(["-q", "view", str(a), str(b), "--out", str(root / "viewer")]) in (0, None)
    return root / "viewer"


def test_the_change_tab_lists_a_trial_that_broke_in_a_still_failing_task_under_broken(
    flipped_viewer: Path, watched: Watched, artifacts: Path
) -> None:
    watched.folder = flipped_viewer
    page = watched.page
    page.goto((flipped_viewer / "index.html").as_uri() + "#compare", wait_until="load")
    page.wait_for_selector("#compare-table")
    assert page.inner_text("#compare-trials") == "paired trials: 9 (4 fixed, 1 broken)"
    assert page.inner_text("#show-broken") == "broken (1)"
    page.click("#show-broken")
    page.wait_for_selector("#show-broken.active")
    rows = page.locator("#compare-table tbody tr")
    assert rows.count() == 1
    assert rows.first.get_attribute("data-case") == "refill-broke"
    # the task's change in the comparison reports' words (CHANGE_WORDS), never its value (still_fail)
    assert rows.first.locator("td").nth(1).inner_text() == "still failing; trial 2 broke"
    assert page.inner_text("#show-still_fail") == "still failing (2)"
    flagged = rows.first.locator("td").nth(5).locator("a.flip-broken")
    assert flagged.inner_text() == "2"
    watched.shot(artifacts, "comparison-broken-trial")
    page.click("#show-fixed")
    page.wait_for_selector("#show-fixed.active")
    shown = page.locator("#compare-table tbody tr").evaluate_all("rs => rs.map(r => r.dataset.case)")
    assert sorted(shown) == ["refill-fixed", "renew-fixed", "renew-mixed"]
    assert watched.errors == []
    assert watched.outside() == []
