"""The labelling page (``judgekit labels page``) in a real browser: Debian's ``chromium`` via Playwright.

Two experts get their own page for the same run (:mod:`golden.label_run`: six items, one transcript
carrying ``</script>`` and markup). Each page is checked blind (no judge verdict in the file or on
screen), in that expert's seeded order; every item is answered, by clicks for some and by keys for the
others, the page is reloaded half-way (the answers and position survive), the labels are downloaded,
the downloads parse as label tables, and ``labels reconcile`` lists where the two experts disagree. A
page with ``--show-judge`` shows the verdicts and its rows say so. Screenshots go to
``$JUDGEKIT_ARTIFACTS`` (else the test's temporary folder).

Without Chromium the tests skip with the reason, except under CI (``CI=true``), where it is a failure.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from golden.label_run import JUDGE_MARK, LabelledRun, write_labelled_run
from judgekit.calibration.labels import ItemKey, parse_labels
from judgekit.cli import main
from judgekit.golden.label_page import expert_order
from reports.chromium import artifacts_folder, chromium

KEYS = [ItemKey(f"{c}#{t}", k) for c, t in (("c-1", 1), ("c-1", 2), ("c-2", 1)) for k in ("tone", "honest")]
ANSWERS = {
    "ann": {k: ("pass" if k.criterion == "tone" else "fail") for k in KEYS},
    "bob": {k: ("pass" if k.criterion == "tone" else "fail") for k in KEYS}
    | {ItemKey("c-2#1", "tone"): "fail", ItemKey("c-1#2", "honest"): "insufficient_information"},
}
KEY_OF = {"pass": "p", "fail": "f", "insufficient_information": "i"}


@dataclass
class Pages:
    run: LabelledRun
    folder: Path
    pages: dict[str, Path] = field(default_factory=dict)


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Pages:
    folder = tmp_path_factory.mktemp("label-page")
    run = write_labelled_run(folder / "run")
    out = Pages(run, folder)
    for expert, extra in (("ann", []), ("bob", []), ("cy", ["--show-judge"])):
        page = folder / f"{expert}.html"
        args = ["-q", "labels", "page", str(run.results), "--expert", expert, "--rubric", str(run.rubric)]
        assert main([*args, "--out", str(page), *extra]) in (0, None)
        out.pages[expert] = page
    return out


@pytest.fixture(scope="module")
def browser(pages: Pages) -> Iterator[Any]:
    yield from chromium()


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return artifacts_folder(tmp_path_factory, "label-page-screenshots")


@dataclass
class Opened:
    page: Any
    url: str
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    ctx = browser.new_context(viewport={"width": 1300, "height": 900}, offline=True, accept_downloads=True)
    try:
        yield ctx
    finally:
        ctx.close()


def _open(context: Any, path: Path) -> Opened:
    page = context.new_page()
    opened = Opened(page, path.resolve().as_uri())
    page.on("console", lambda m: opened.errors.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: opened.errors.append(str(e)))
    page.on("request", lambda r: opened.requests.append(r.url))
    page.goto(opened.url)
    return opened


def _current(page: Any) -> ItemKey:
    trial = page.inner_text("#trial")  # "case c-1, trial 2"
    case_id, number = trial.removeprefix("case ").split(", trial ")
    return ItemKey(f"{case_id}#{number}", page.inner_text("#criterion-id"))


def _walk_order(page: Any) -> list[ItemKey]:
    seen = [_current(page)]
    for _ in range(len(KEYS) - 1):
        page.click("#next")
        seen.append(_current(page))
    for _ in range(len(KEYS) - 1):
        page.keyboard.press("ArrowLeft")
    assert _current(page) == seen[0]
    return seen


def _answer_all(opened: Opened, expert: str, artifacts: Path) -> Path:
    """Answer half by clicks (with notes), reload, answer the rest by keys, download; return the CSV."""
    page = opened.page
    answers = ANSWERS[expert]
    for n in range(3):
        key = _current(page)
        page.check(f"#answer-{answers[key]}")
        page.fill("#notes", f"{expert} on {key}: <b>kept</b>, with a comma")
        page.click("#next")
        assert page.inner_text("#progress") == f"Item {n + 2} of 6"
    page.screenshot(path=str(artifacts / f"label-page-{expert}.png"))
    # Chromium hands a page's localStorage writes to the browser process asynchronously; a reload within
    # milliseconds of the last write can read the store before it arrived (1 run in 6 here), and on a
    # loaded machine half a second was once not enough (the CI run of 69bafff, three test workers on two
    # cores). A person reloads later than that: give the write that time, reloading until the page shows
    # the position saved last (loading the page writes nothing, so a reload that came too early cannot
    # overwrite the write on its way); a position never saved still fails, after 15 s.
    deadline = time.monotonic() + 15
    page.wait_for_timeout(500)
    page.reload()
    while page.inner_text("#progress") != "Item 4 of 6" and time.monotonic() < deadline:
        page.wait_for_timeout(500)
        page.reload()
    assert page.inner_text("#progress") == "Item 4 of 6"  # the position survived the reload
    assert page.inner_text("#answered") == "3 of 6 answered"
    page.keyboard.press("b")
    key = _current(page)
    assert page.is_checked(f"#answer-{answers[key]}")
    assert page.input_value("#notes") == f"{expert} on {key}: <b>kept</b>, with a comma"
    page.keyboard.press("n")
    for n in range(3):
        key = _current(page)
        page.keyboard.press(KEY_OF[answers[key]])
        assert page.is_checked(f"#answer-{answers[key]}")
        if n < 2:
            page.keyboard.press("ArrowRight")
    assert page.inner_text("#answered") == "6 of 6 answered"
    with page.expect_download() as info:
        page.click("#download")
    target = artifacts / f"labels-{expert}.csv"
    info.value.save_as(str(target))
    assert "downloaded 6 label(s); 0 item(s) unanswered" in page.inner_text("#status")
    return target


def test_two_experts_label_blind_in_their_own_order_and_reconcile(
    pages: Pages, context: Any, artifacts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    downloads = {}
    orders = {}
    for expert in ("ann", "bob"):
        html = pages.pages[expert].read_text(encoding="utf-8")
        assert JUDGE_MARK not in html  # blind: the judge's verdicts are not in the file at all
        opened = _open(context, pages.pages[expert])
        page = opened.page
        assert page.is_hidden("#judge-box")
        assert JUDGE_MARK not in page.inner_text("body")
        orders[expert] = _walk_order(page)
        assert orders[expert] == expert_order(KEYS, expert=expert, seed=0)
        downloads[expert] = _answer_all(opened, expert, artifacts)
        assert opened.errors == []
        assert {u for u in opened.requests if not u.startswith("blob:")} == {opened.url}
    assert orders["ann"] != orders["bob"]
    tables = {e: parse_labels(p.read_bytes(), source=p) for e, p in downloads.items()}
    for expert, table in tables.items():
        assert table.raters == (expert,)
        assert {r.item: r.label for r in table.rows} == ANSWERS[expert]
        assert all(r.saw_judge is False for r in table.rows)
        assert sum(1 for r in table.rows if r.notes and "<b>kept</b>, with a comma" in r.notes) == 3
        assert {r.case_id for r in table.rows} == {"c-1", "c-2"}
    sheet = pages.folder / "disputed.csv"
    agreed = pages.folder / "agreed.csv"
    capsys.readouterr()
    code = main(
        [
            "labels",
            "reconcile",
            str(downloads["ann"]),
            str(downloads["bob"]),
            "--out",
            str(agreed),
            "--sheet",
            str(sheet),
        ]
    )
    out = capsys.readouterr().out
    print(out)
    assert code == 1
    assert "c-2#1/tone: ann pass" in out
    assert "| bob fail" in out
    assert "ann vs bob: 4 agreed, 2 disputed, 0 only ann, 0 only bob" in out
    assert not agreed.exists()
    assert sheet.read_text(encoding="utf-8").count("\n") == 3  # header and the two disputed items


def test_the_hostile_transcript_is_text_and_runs_nothing(pages: Pages, context: Any) -> None:
    opened = _open(context, pages.pages["ann"])
    page = opened.page
    for _ in range(len(KEYS)):
        if _current(page).item_id == "c-1#1":
            break
        page.keyboard.press("n")
    text = page.inner_text("#transcript")
    assert "</script><script>window.PWNED=1</script><img src=x" in text
    assert page.locator("#transcript img, #transcript script, #transcript b").count() == 0
    assert page.evaluate("typeof window.PWNED") == "undefined"
    assert opened.errors == []


def test_show_judge_reveals_the_verdicts_and_the_rows_record_it(
    pages: Pages, context: Any, artifacts: Path
) -> None:
    opened = _open(context, pages.pages["cy"])
    page = opened.page
    assert page.is_visible("#judge-box")
    assert JUDGE_MARK in page.inner_text("#judge-box")
    page.screenshot(path=str(artifacts / "label-page-cy-show-judge.png"))
    page.keyboard.press("p")
    with page.expect_download() as info:
        page.click("#download")
    target = artifacts / "labels-cy.csv"
    info.value.save_as(str(target))
    [row] = parse_labels(target.read_bytes(), source=target).rows
    assert (row.rater, row.label, row.saw_judge) == ("cy", "pass", True)
    assert opened.errors == []
