"""Markdown injection (issue 33, F9): transcript text in ``--format md`` output renders as text only.

``report --format md`` is written to ``$GITHUB_STEP_SUMMARY`` and ``report --short`` is posted as a
pull-request comment (docs/how-to/gate-a-run-in-ci.md). Before issue 33 an agent model, case id or judge
reason holding ``<img src=https://...>`` reached them as a tracking pixel, ``[click](https://...)`` as a
disguised link and a line break then ``# PASSED`` as a heading. Each payload below is put into every
untrusted field a renderer shows (agent model, app version, run id, case id, slice, judge reason, rater
and criterion names) and each renderer's Markdown is parsed by markdown-it (CommonMark with GitHub's
tables, strikethrough and linkify): its structure must be the structure of the same report with a plain
word in those fields (no HTML, link, image, heading or list more), and no bare URL, ``www.``, mention or
``#123`` may stay in plain text (GitHub would link it).
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from markdown_it.token import Token

from hostile.sweep import Sweep, SweepStore
from judgekit.cli import main
from judgekit.reports.calibration_report import result_markdown
from judgekit.reports.run_compare import compare_runs, digest_runs
from judgekit.reports.run_markdown import (
    render_comparison_markdown,
    render_run_markdown,
    render_short_markdown,
)
from judgekit.reports.run_model import report_run
from judgekit.results import CaseRef, RunResults, dump_result_line, make_result_line, read_results
from judgekit.transcript import RunRecord
from judgekit.verdict import CheckResult, FailureCategory, Grade, Verdict
from support import flatten_tokens, github_markdown

PAYLOADS: list[tuple[str, str]] = [
    ("img_pixel", "<img src=https://evil.example/pixel.png>"),
    ("img_no_scheme", "<img src=//evil.example/p.gif width=1>"),
    ("anchor", "<a href='https://evil.example'>details</a>"),
    ("script", "<script>alert(1)</script>"),
    ("html_comment", "<!-- hidden --> shown"),
    ("html_block_line", "x\n<div>\nblock\n</div>"),
    ("md_link", "[click here](https://evil.example/login)"),
    ("md_link_relative", "[click here](/settings/tokens)"),
    ("md_link_javascript", "[x](javascript:alert(1))"),
    ("md_image", "![pixel](https://evil.example/p.png)"),
    ("reference_definition", "[ok]: https://evil.example\n[ok]"),
    ("autolink", "<https://evil.example>"),
    ("bare_url", "see https://evil.example/x for details"),
    ("www", "visit www.evil.example today"),
    ("email", "mail alice@evil.example"),
    ("mention", "cc @octocat and @org/team"),
    ("issue_ref", "fixes #1 and org/repo#2"),
    ("heading_after_newline", "agent-x\n# PASSED: all checks green"),
    ("heading_at_start", "# PASSED"),
    ("setext_heading", "fine\n===="),
    ("quote_alert", "> [!NOTE]\n> trust me"),
    ("nested_list", "- item\n  - nested"),
    ("ordered_list", "1. first"),
    ("fence", "```\ncode\n```"),
    ("indented_code", "\n\n    code block"),
    ("emphasis", "**bold** and _em_ and ~~struck~~"),
    ("table_break", "a | b | c\n|---|---|"),
    ("math", "$$\\Huge\\text{PASSED}$$"),
    ("entity", "&lt;img src=x&gt;"),
    ("backslash_games", "\\<img src=x> \\[a\\](https://evil.example)"),
    ("task_box", "[x] done"),
    ("footnote", "[^1]\n[^1]: https://evil.example"),
]

PLAIN = "plainvalue"


MD = github_markdown()


def _structure(tokens: list[Token]) -> Counter[str]:
    skip = ("text", "code_inline", "inline", "softbreak")
    return Counter(f"{t.type}:{t.tag}" for t in flatten_tokens(tokens) if t.type not in skip)


_LINKABLE = re.compile(r"\S*(?:://|www\.|(?<!\w)@\w|(?<![\w/])#\d)\S*", re.IGNORECASE)


def _linkable(tokens: list[Token]) -> Counter[str]:
    """Words in plain text (not code) that GitHub would link or mention."""
    return Counter(
        m.group() for t in flatten_tokens(tokens) if t.type == "text" for m in _LINKABLE.finditer(t.content)
    )


def problems(rendered: str, neutral: str) -> list[str]:
    """What the payload made of the Markdown: structure the neutral rendering lacks, links, HTML."""
    tokens, base = MD.parse(rendered), MD.parse(neutral)
    found = [f"added {kind} x{n}" for kind, n in (_structure(tokens) - _structure(base)).items()]
    html = MD.renderer.render(tokens, MD.options, {}).lower()
    base_html = MD.renderer.render(base, MD.options, {}).lower()
    found += [
        f"html has {tag}" for tag in ("<img", "<a ", "<script") if html.count(tag) > base_html.count(tag)
    ]
    linkable = _linkable(tokens) - _linkable(base)
    found += [f"linkable text {snippet!r}" for snippet in linkable]
    return found


# --------------------------------------------------------------------------- results with the payload


def _line(case: str, trial: int, verdict: Verdict, value: str, *, app: str, run_id: str) -> str:
    check = CheckResult(
        check_id="criterion:x" if verdict is not Verdict.PASS else "state",
        layer="rubric" if verdict is not Verdict.PASS else "state",
        verdict=verdict,
        reason=f"the judge said: {value}" if verdict is not Verdict.PASS else "",
        category=FailureCategory.POLICY_VIOLATION if verdict is Verdict.FAIL else None,
    )
    grade = Grade(case_id=case, trial=trial, verdict=verdict, checks=(check,))
    line = make_result_line(
        run_id=run_id,
        case=CaseRef(id=case, version=1, slice=value),
        grade=grade,
        run=RunRecord(agent_model=value, app_version=app),
    )
    return dump_result_line(line) + "\n"


def _results(path: Path, value: str, *, app: str, flip: bool = False) -> RunResults:
    """A case named after the payload (4 passes, an error) and one failing four times with it as reason."""
    lines = [_line(value, t, Verdict.PASS, value, app=app, run_id=value) for t in (1, 2, 3, 4)]
    failing = Verdict.PASS if flip else Verdict.FAIL
    lines += [_line("task-b", t, failing, value, app=app, run_id=value) for t in (1, 2, 3, 4)]
    lines += [_line(value, 5, Verdict.ERROR, value, app=app, run_id=value)]
    path.write_text("".join(lines), encoding="utf-8")
    return read_results(path)


def _report_md(tmp: Path, value: str) -> str:
    history = [_results(tmp / f"h{i}.jsonl", value, app=f"{value} v{i}") for i in (1, 2)]
    report = report_run(
        _results(tmp / "r.jsonl", value, app=f"{value} v3"),
        undecided="fail",
        history=history,
        retire_min_trials=4,
    )[0]
    return render_run_markdown(report)


def _short_md(tmp: Path, value: str) -> str:
    report = report_run(_results(tmp / "r.jsonl", value, app="1.0"), undecided="fail")[0]
    return render_short_markdown(report, link="https://ci.example/run/1")


def _compare_md(tmp: Path, value: str) -> str:
    a = _results(tmp / "a.jsonl", "baseline", app="1.0")
    b = _results(tmp / "b.jsonl", value, app="2.0", flip=True)
    return render_comparison_markdown(compare_runs(*digest_runs(a, b)))


LABELS = Path(__file__).parent.parent / "calibration" / "data" / "labels_small.csv"


def _write_labels(path: Path, rename: dict[str, str]) -> None:
    """The small calibration label table with raters and criteria renamed."""
    with LABELS.open(encoding="utf-8", newline="") as src:
        rows = [
            {k: rename.get(v, v) if k in ("rater", "criterion") else v for k, v in row.items()}
            for row in csv.DictReader(src)
        ]
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _calibration_md(tmp: Path, value: str) -> str:
    """The calibration report of a label table whose judge, an expert and the criterion carry the payload."""
    from judgekit.calibration.gate import TrustPolicy
    from judgekit.calibration.labels import parse_labels
    from judgekit.calibration.pipeline import run_calibration

    rename = {"judge-v2": f"judge {value}", "alice": f"alice {value}", "goal": f"goal {value}"}
    path = tmp / "labels.csv"
    _write_labels(path, rename)
    table = parse_labels(path.read_bytes(), source=path)
    policy = TrustPolicy.model_validate({"min_items": 40, "bootstrap": {"resamples": 100}})
    result = run_calibration(
        table,
        judge=rename["judge-v2"],
        experts=[rename["alice"], "bob", "carol"],
        policy=policy,
        fingerprint=None,
        label_name="labels.csv",
    )
    return result_markdown(result)


def _jury_md(tmp: Path, value: str) -> str:
    """The calibration report of a jury whose members' names carry the payload (its Jury section)."""
    from judgekit.calibration.gate import TrustPolicy
    from judgekit.calibration.labels import parse_labels
    from judgekit.calibration.pipeline import run_calibration

    rename = {"judge-v1": f"member {value}", "carol": f"other {value}"}
    path = tmp / "labels.csv"
    _write_labels(path, rename)
    table = parse_labels(path.read_bytes(), source=path)
    policy = TrustPolicy.model_validate({"min_items": 40, "bootstrap": {"resamples": 100}})
    result = run_calibration(
        table,
        judge="judge-v2",
        experts=["alice", "bob"],
        policy=policy,
        fingerprint=None,
        label_name="labels.csv",
        jury_members=[rename["judge-v1"], rename["carol"]],
    )
    assert result.jury is not None
    return result_markdown(result)


def _refinement_md(tmp: Path, value: str) -> str:
    """A refinement report whose label file, item, criterion, experts, quote and paths carry the payload."""
    from datetime import UTC, datetime

    from judgekit.api.refine import HeldOutFigure, RefinementDocument, _markdown
    from judgekit.calibration.guards import LabelSplit, LabelUsage
    from judgekit.calibration.refine import CandidateScore, Disagreement
    from judgekit.verdict import WrittenFile

    split = LabelSplit(seed=1, dev_share=0.5, content_sha256="0" * 64, dev_cases=(value,), test_cases=("b",))
    score = CandidateScore(
        name="current", version=f"1 {value}", complexity=0, metric="kappa", value=0.5, n_items=4, agreements=3
    )
    usage = LabelUsage(
        label_sha256="0" * 64, label_name=value, candidates=("current@1",), recorded_at=datetime.now(UTC)
    )
    document = RefinementDocument(
        labels=f"labels {value}.csv",
        lineage="honest-reporting",
        split=split,
        dev_items=4,
        test_items=4,
        disagreements=(
            Disagreement(
                item_id=f"{value}#1",
                criterion=f"goal {value}",
                case_id=value,
                judge="pass",
                consensus="fail",
                experts={f"alice {value}": "fail", "bob": "fail"},
                evidence=(f"the agent said {value}",),
                reason=value,
            ),
        ),
        candidates=(score,),
        chosen="current",
        chosen_version=f"1 {value}",
        dev_figure=score,
        test_figure=HeldOutFigure(
            metric="kappa",
            value=0.4,
            n_items=4,
            agreements=3,
            fingerprint="f" * 64,
            trusted=False,
            record=str(tmp / f"record {value}.json"),
            report=str(tmp / f"calibration {value}.md"),
        ),
        usage=(usage, usage.model_copy(update={"purpose": "test"})),
        written=[WrittenFile(path=str(tmp / f"out {value}.md"), what="refinement_md")],
    )
    return _markdown(document).replace(str(tmp), "TMP")


RENDERERS: dict[str, Callable[[Path, str], str]] = {
    "report": _report_md,
    "short": _short_md,
    "compare": _compare_md,
    "calibration": _calibration_md,
    "jury": _jury_md,
    "refinement": _refinement_md,
}


def _check(renderer: str, value: str, tmp: Path) -> list[str]:
    (tmp / "value").mkdir(parents=True, exist_ok=True)
    (tmp / "plain").mkdir(parents=True, exist_ok=True)
    render = RENDERERS[renderer]
    return problems(render(tmp / "value", value), render(tmp / "plain", PLAIN))


VARIANTS = [(r, name, value) for r in RENDERERS for name, value in PAYLOADS]

SWEEP = Sweep(
    name=__name__,
    variants=VARIANTS,
    key=lambda v: f"{v[0]}-{v[1]}",
    check=lambda v, folder: _check(v[0], v[2], folder),
    bounded=False,
)
"""Each payload in each renderer once in the session, rendered in the asking process."""


@SWEEP.parametrize
def test_payload_renders_as_text(variant: tuple[str, str, str], sweep_store: SweepStore) -> None:
    assert sweep_store.problems(SWEEP, variant) == []


@SWEEP.counted
def test_count_of_markdown_injections_tried_and_neutralised(
    sweep_store: SweepStore, capsys: pytest.CaptureFixture[str]
) -> None:
    """The counts for the issue: every payload in every Markdown renderer, each rendered as text."""
    tally = sweep_store.tally(SWEEP)
    with capsys.disabled():
        print(
            f"\nmarkdown injections tried: {tally.tried}, handled correctly (rendered as text only): "
            f"{tally.handled}"
        )
    assert tally.failures == {}
    assert tally.tried == tally.handled == len(VARIANTS) >= 100


# --------------------------------------------------------------------------- the CLI, as CI runs it

F9_AGENT = "agent-x\n# PASSED <img src=https://evil.example/x.png> [click](https://evil.example)"


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out


def test_f9_cli_markdown_outputs_render_transcript_html_links_and_headings_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """F9: report --format md, --short, compare and calibrate's Markdown, run as the CI workflow does."""
    monkeypatch.chdir(tmp_path)
    _results(tmp_path / "a.jsonl", "baseline", app="1.0")
    _results(tmp_path / "b.jsonl", F9_AGENT, app="2.0", flip=True)
    _results(tmp_path / "plain.jsonl", PLAIN, app="2.0", flip=True)
    outputs = {
        "report": (["report", "b.jsonl", "--format", "md"], ["report", "plain.jsonl", "--format", "md"]),
        "short": (
            ["report", "b.jsonl", "--format", "md", "--short"],
            ["report", "plain.jsonl", "--format", "md", "--short"],
        ),
        "compare": (["compare", "a.jsonl", "b.jsonl"], ["compare", "a.jsonl", "plain.jsonl"]),
    }
    found = {}
    for name, (hostile, plain) in outputs.items():
        _, text = _cli(capsys, *hostile)
        _, base = _cli(capsys, *plain)
        assert "evil.example" in text  # the value is shown ...
        found[name] = problems(text.replace("b.jsonl", "plain.jsonl"), base)  # ... and only as text
    (tmp_path / "policy.yaml").write_text("min_items: 40\nbootstrap:\n  resamples: 100\n", encoding="utf-8")
    (tmp_path / "records").mkdir()
    texts = []
    for judge in (F9_AGENT.replace("\n", " "), "judge-v2"):
        _write_labels(tmp_path / "labels.csv", {"judge-v2": judge})
        args = ["calibrate", "labels.csv", "--judge", judge, "--experts", "alice,bob,carol"]
        texts.append(_cli(capsys, *args, "--policy", "policy.yaml", "--records", "records")[1])
    assert "evil.example" in texts[0]
    found["calibration"] = problems(texts[0], texts[1])
    assert found == {"report": [], "short": [], "compare": [], "calibration": []}
