"""The labelling page: the experts' order, blindness, escaping of untrusted text, and every refusal."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from golden.label_run import HOSTILE, JUDGE_MARK, TEXTS, write_labelled_run
from judgekit.api.expert_labels import label_page
from judgekit.calibration.labels import ItemKey
from judgekit.cli import main
from judgekit.errors import JudgekitError, ProblemsError
from judgekit.golden.label_page import check_expert_name, expert_order

KEYS = [ItemKey(f"c-{c}#{t}", k) for c in range(1, 6) for t in (1, 2) for k in ("tone", "honest", "safe")]


def test_the_same_expert_and_seed_get_the_same_order_whatever_the_input_order() -> None:
    first = expert_order(KEYS, expert="ann", seed=7)
    assert first == expert_order(list(reversed(KEYS)), expert="ann", seed=7)
    assert sorted(first) == sorted(KEYS)  # a permutation: every item once


def test_two_experts_and_two_seeds_get_different_orders() -> None:
    ann = expert_order(KEYS, expert="ann", seed=0)
    assert ann != expert_order(KEYS, expert="bob", seed=0)
    assert ann != expert_order(KEYS, expert="ann", seed=1)


def test_the_order_is_pinned() -> None:
    """The documented rule: sorted by SHA-256 of [seed, expert, item_id, criterion] as JSON."""
    keys = [ItemKey("a#1", "x"), ItemKey("a#1", "y"), ItemKey("b#1", "x")]

    def digest(k: ItemKey) -> str:
        return hashlib.sha256(json.dumps([3, "ann", k.item_id, k.criterion]).encode()).hexdigest()

    assert expert_order(keys, expert="ann", seed=3) == sorted(keys, key=digest)


@given(st.sets(st.tuples(st.integers(0, 50), st.sampled_from("xyz")), min_size=2, max_size=30), st.integers())
def test_adding_an_item_keeps_the_others_in_their_order(pairs: set[tuple[int, str]], seed: int) -> None:
    keys = [ItemKey(f"c#{n}", c) for n, c in pairs]
    new = ItemKey("new#1", "x")
    with_new = expert_order([*keys, new], expert="e", seed=seed)
    assert [k for k in with_new if k != new] == expert_order(keys, expert="e", seed=seed)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        pytest.param("", "--expert: give the expert's name", id="empty"),
        pytest.param("  ", "--expert: give the expert's name", id="blank"),
        pytest.param(" ann", "has surrounding spaces or control characters", id="spaces"),
        pytest.param("an\nn", "has surrounding spaces or control characters", id="newline"),
        pytest.param("judge", "is the rater name of the judge's rows", id="judge"),
        pytest.param("Grader", "is the rater name of the judge's rows", id="grader"),
    ],
)
def test_each_bad_expert_name_is_refused(name: str, message: str) -> None:
    with pytest.raises(JudgekitError, match=re.escape(message)):
        check_expert_name(name)


def _data_block(html: str) -> dict[str, object]:
    match = re.search(r'<script type="application/json" id="jk-data">(.*?)</script>', html, re.S)
    assert match is not None
    return json.loads(match.group(1))


def test_the_page_is_blind_by_default_and_its_data_reads_back(tmp_path: Path) -> None:
    run = write_labelled_run(tmp_path / "run")
    doc = label_page(run.results, expert="ann", out=tmp_path / "ann.html", rubric=run.rubric, seed=4)
    html = (tmp_path / "ann.html").read_text(encoding="utf-8")
    assert JUDGE_MARK not in html
    data = _data_block(html)
    assert data["page_id"] == doc.page_id
    items = data["items"]
    assert isinstance(items, list)
    assert [f"{i['item_id']}/{i['criterion']}" for i in items] == [
        str(k)
        for k in expert_order([ItemKey(i["item_id"], i["criterion"]) for i in items], expert="ann", seed=4)
    ]
    assert {i["criterion_text"] for i in items} == set(TEXTS.values())
    assert all(i["judge"] is None for i in items)
    assert (doc.items, doc.trials, doc.criteria) == (6, 3, {"honest": 3, "tone": 3})


def test_show_judge_puts_the_verdicts_in_and_changes_the_page_id(tmp_path: Path) -> None:
    run = write_labelled_run(tmp_path / "run")
    blind = label_page(run.results, expert="ann", out=tmp_path / "a.html", rubric=run.rubric)
    shown = label_page(run.results, expert="ann", out=tmp_path / "b.html", rubric=run.rubric, show_judge=True)
    other = label_page(run.results, expert="bob", out=tmp_path / "c.html", rubric=run.rubric)
    assert len({blind.page_id, shown.page_id, other.page_id}) == 3
    data = _data_block((tmp_path / "b.html").read_text(encoding="utf-8"))
    judged = {(i["item_id"], i["criterion"]): i["judge"]["verdict"] for i in data["items"]}  # type: ignore[index,union-attr]
    assert judged[("c-2#1", "honest")] == "insufficient_information"
    assert data["show_judge"] is True


def test_a_transcript_holding_script_and_markup_stays_data(tmp_path: Path) -> None:
    run = write_labelled_run(tmp_path / "run")
    label_page(run.results, expert="ann", out=tmp_path / "ann.html", rubric=run.rubric)
    html = (tmp_path / "ann.html").read_text(encoding="utf-8")
    assert html.count("<script") == 2  # the data block and the page's own script, nothing injected
    assert html.count("</script>") == 2
    assert "<img" not in html
    assert "\u2028" not in html
    data = _data_block(html)
    contents = [m["content"] for t in data["trials"].values() for m in t["messages"]]  # type: ignore[union-attr,index]
    assert HOSTILE in contents  # escaped in the file, exact once parsed


def test_the_content_security_policy_allows_exactly_the_pages_script(tmp_path: Path) -> None:
    run = write_labelled_run(tmp_path / "run")
    label_page(run.results, expert="ann", out=tmp_path / "ann.html", rubric=run.rubric)
    html = (tmp_path / "ann.html").read_text(encoding="utf-8")
    policy = re.search(r"script-src '(sha256-[^']+)'", html)
    script = re.search(r"<script>(.*?)</script>", html, re.S)
    assert policy is not None
    assert script is not None
    digest = base64.b64encode(hashlib.sha256(script.group(1).encode()).digest()).decode()
    assert policy.group(1) == f"sha256-{digest}"
    assert "default-src 'none'" in html
    assert "connect-src 'none'" in html


def test_criteria_limits_the_items_and_counts_the_rest(tmp_path: Path) -> None:
    run = write_labelled_run(tmp_path / "run")
    doc = label_page(run.results, expert="ann", out=tmp_path / "a.html", rubric=run.rubric, criteria=["tone"])
    assert (doc.items, doc.criteria, doc.skipped) == (3, {"tone": 3}, {"not in --criteria": 3})


def test_an_unknown_criteria_id_is_refused_listing_the_judged_ones(tmp_path: Path) -> None:
    run = write_labelled_run(tmp_path / "run")
    with pytest.raises(
        JudgekitError, match=r"no trial in .* was judged on 'tone2'; judged criteria: honest, tone"
    ):
        label_page(run.results, expert="ann", out=tmp_path / "a.html", rubric=run.rubric, criteria=["tone2"])


def test_a_rubric_whose_text_differs_from_the_judged_one_is_refused(tmp_path: Path) -> None:
    run = write_labelled_run(tmp_path / "run", texts={"tone": "The agent is cheerful."})
    with pytest.raises(ProblemsError) as info:
        label_page(run.results, expert="ann", out=tmp_path / "a.html", rubric=run.rubric)
    messages = [str(p) for p in info.value.problems]
    assert len(messages) == 3
    assert (
        "c-1#1/tone: the text of criterion 'tone' in rubric page-test v3 is not the text the judge"
        in messages[0]
    )
    assert not (tmp_path / "a.html").exists()


def test_a_criterion_in_neither_rubric_nor_case_is_refused(tmp_path: Path) -> None:
    run = write_labelled_run(tmp_path / "run")
    with pytest.raises(ProblemsError) as info:
        label_page(run.results, expert="ann", out=tmp_path / "a.html")  # the default rubric: honest-reporting
    assert (
        "criterion 'tone' is in neither rubric honest-reporting v1 nor case 'c-1' (a case's own criterion "
        "needs --cases)" in str(info.value.problems[0])
    )


def test_a_changed_transcript_is_refused(tmp_path: Path) -> None:
    run = write_labelled_run(tmp_path / "run")
    run.transcripts.write_text(
        run.transcripts.read_text(encoding="utf-8").replace("Lyon", "Nice"), encoding="utf-8"
    )
    with pytest.raises(ProblemsError, match="the transcript changed since it was graded"):
        label_page(run.results, expert="ann", out=tmp_path / "a.html", rubric=run.rubric)


def test_a_run_without_judge_verdicts_is_refused(tmp_path: Path) -> None:
    run = write_labelled_run(tmp_path / "run")
    lines = run.results.read_text(encoding="utf-8").replace('"criterion:', '"state:')
    run.results.write_text(lines, encoding="utf-8")
    with pytest.raises(
        JudgekitError, match="no trial has a judge verdict on a rubric criterion; grade it with a judge"
    ):
        label_page(run.results, expert="ann", out=tmp_path / "a.html", rubric=run.rubric)


def test_the_command_takes_criteria_comma_separated_or_repeated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = write_labelled_run(tmp_path / "run")
    base = ["labels", "page", str(run.results), "--expert", "ann", "--rubric", str(run.rubric)]
    for n, options in enumerate(
        (["--criteria", "tone,honest"], ["--criteria", "tone", "--criteria", "honest"])
    ):
        assert main([*base, *options, "--out", str(tmp_path / f"{n}.html"), "--format", "json"]) == 0
        assert json.loads(capsys.readouterr().out)["criteria"] == {"honest": 3, "tone": 3}
    assert main([*base, "--criteria", "tone", "--out", str(tmp_path / "t.html")]) == 0
    assert (
        "3 item(s) from 3 trial(s) (tone 3); seed 0; blind to the judge; left out: 3 not in --criteria"
        in (capsys.readouterr().out)
    )
