"""Review samples: a seeded, stratified sample of graded transcripts for people to read.

A grader that passes the agent for the wrong reason is invisible in aggregate scores; someone should read
a sample of passing and failing runs after every grader change. This module draws that sample from a
results file and renders it as a **review sheet** (Markdown and self-contained HTML) with each trial's
transcript, its grade and every check, and a place for the reviewer's verdict. A filled-in Markdown sheet
(or the CSV the HTML sheet downloads) is read back as a **label table** for calibration
(:mod:`judgekit.calibration.labels`): one row for the grader's verdict and one for the reviewer's, per
item, so ``judgekit calibrate labels.csv --judge grader`` measures the grader against the reviewer.

Sampling (:func:`draw_sample`):

* the pools are the trials whose verdict is ``pass`` and those whose verdict is ``fail``; trials in
  ``error``, ``insufficient_information`` or ``not_evaluated`` are counted and never drawn;
* each pool is stratified by the case's slice: when ``n`` is at least the number of slices every slice
  gets one trial, the rest is allocated in proportion to the slices' sizes (largest remainder); with
  fewer trials than slices, the largest slices are drawn first;
* inside a slice the draw prefers distinct cases (a second trial of a case only when every case of the
  slice has one), in an order fixed by the seed;
* the draw depends only on the results' content and the seed, never on file order: the same results and
  seed give the same sheet.

Item ids are ``<case id>#<trial>``; the label table's ``case_id`` column keeps trials of one case together
for case-bootstrap intervals.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from judgekit.caseset import LocatedProblem
from judgekit.errors import JudgekitError, LocatedError, Problem, ProblemsError
from judgekit.io.documents import load_json_bounded
from judgekit.markdown_text import md_code, md_text
from judgekit.verdict import FrozenModel, Verdict

if TYPE_CHECKING:
    from judgekit.results import ResultLine, RunResults
    from judgekit.transcript import Transcript

__all__ = [
    "GRADER_RATER",
    "SHEET_VERSION",
    "PoolCounts",
    "ReviewItem",
    "Sample",
    "SampleDocument",
    "SampledTrial",
    "StratumCounts",
    "allocate",
    "draw_sample",
    "labels_csv",
    "message_views",
    "read_review_sheet",
    "render_html",
    "render_markdown",
    "resolve_transcripts",
    "sample_document",
    "trial_item_id",
]

SHEET_VERSION = 1
GRADER_RATER = "grader"
"""The rater name the grader's verdicts get in the label table."""

REVIEW_LABELS = ("pass", "fail", "insufficient_information")
_ITEM_MARK = re.compile(r"^<!-- judgekit:item (\{.*\}) -->\s*$")
_SHEET_MARK = re.compile(r"^<!-- judgekit:review-sheet (\{.*\}) -->\s*$")
_VERDICT_LINE = re.compile(r"^Reviewer verdict \[(?P<item>[^\]]+)\]:[ \t]*(?P<label>.*?)\s*$")
_NOTES_LINE = re.compile(r"^Reviewer notes \[(?P<item>[^\]]+)\]:[ \t]*(?P<notes>.*?)\s*$")
_REVIEWER_LINE = re.compile(r"^Reviewer:[ \t]*(?P<name>.*?)\s*$")
_FENCE = re.compile(r"^(`{3,})")


def trial_item_id(case_id: str, trial: int) -> str:
    """The label table's ``item_id`` of one trial: ``<case id>#<trial>`` (``gs-refund#2``).

    The judge's rows (a rubric check of ``case`` trial 2 is item ``gs-refund#2`` with its criterion in the
    ``criterion`` column), the review sheet's and the labelling page's rows all use it, so their labels join.

    Args:
        case_id: The case id.
        trial: The trial number (1-based).
    """
    return f"{case_id}#{trial}"


@dataclass(frozen=True)
class ReviewItem:
    """One sampled trial.

    Attributes:
        item_id: ``<case id>#<trial>``.
        pool: ``passing`` or ``failing``.
        stratum: The case's slice (``(none)`` when it has none).
        line: The trial's result line.
        transcript: The transcript, once resolved (``None`` before).
    """

    item_id: str
    pool: str
    stratum: str
    line: ResultLine
    transcript: Transcript | None = None


@dataclass
class Sample:
    """A drawn sample and how it was drawn.

    Attributes:
        results: The results file.
        run_ids: The run ids in it.
        seed: The seed.
        items: The sampled trials, passing first, then failing, each in stratum then draw order.
        pool_sizes: Trials available per pool (``passing``, ``failing``).
        strata: Per pool, trials available and drawn per stratum: ``{pool: {stratum: (available, drawn)}}``.
        not_drawable: Trials of other verdicts by verdict (never drawn).
        requested: Trials asked for per pool.
        notes: Things a reader should know (a pool smaller than asked for).
    """

    results: Path
    run_ids: list[str]
    seed: int
    items: list[ReviewItem] = field(default_factory=list)
    pool_sizes: dict[str, int] = field(default_factory=dict)
    strata: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)
    not_drawable: dict[str, int] = field(default_factory=dict)
    requested: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def sample_id(self) -> str:
        """A short hash of what was drawn (the same for the same results, counts and seed)."""
        text = json.dumps([self.seed, [i.item_id for i in self.items]])
        return hashlib.sha256(text.encode()).hexdigest()[:12]


def allocate(sizes: dict[str, int], n: int, rng: random.Random) -> dict[str, int]:
    """Split ``n`` draws among strata of the given sizes (see the module docstring).

    Args:
        sizes: Trials available per stratum (> 0 each).
        n: Draws wanted (>= 0); at most ``sum(sizes)`` are allocated.
        rng: The seeded generator (breaks ties between equal strata).

    Returns:
        Draws per stratum; every value is at most the stratum's size, and they sum to
        ``min(n, sum(sizes))``.
    """
    names = sorted(sizes)
    rng.shuffle(names)
    names.sort(key=lambda s: -sizes[s])  # stable: ties keep the seeded order
    total = sum(sizes.values())
    n = min(n, total)
    out = dict.fromkeys(names, 0)
    if n == 0:
        return out
    if n < len(names):
        for name in names[:n]:
            out[name] = 1
        return out
    for name in names:
        out[name] = 1
    left = n - len(names)
    spare = {s: sizes[s] - 1 for s in names}
    spare_total = sum(spare.values())
    if left and spare_total:
        quotas = {s: left * spare[s] / spare_total for s in names}
        floors = {s: int(q) for s, q in quotas.items()}
        for s in names:
            out[s] += floors[s]
        remaining = left - sum(floors.values())
        by_remainder = sorted(names, key=lambda s: -(quotas[s] - floors[s]))
        for s in by_remainder:
            if remaining == 0:
                break
            if out[s] < sizes[s]:
                out[s] += 1
                remaining -= 1
    return out


def _spread(lines: list[ResultLine], k: int, rng: random.Random) -> list[ResultLine]:
    """Draw ``k`` lines preferring distinct cases, in a seeded order."""
    by_case: dict[str, list[ResultLine]] = defaultdict(list)
    for line in sorted(lines, key=lambda r: (r.case.id, r.trial)):
        by_case[line.case.id].append(line)
    cases = sorted(by_case)
    rng.shuffle(cases)
    for case_id in cases:
        rng.shuffle(by_case[case_id])
    out: list[ResultLine] = []
    depth = 0
    while len(out) < k:
        for case_id in cases:
            if depth < len(by_case[case_id]) and len(out) < k:
                out.append(by_case[case_id][depth])
        depth += 1
    return out


def draw_sample(run: RunResults, *, passing: int, failing: int, seed: int = 0) -> Sample:
    """Draw a seeded, stratified sample of passing and failing trials.

    Args:
        run: The results (as read by :func:`judgekit.results.read_results`).
        passing: Passing trials wanted (>= 0).
        failing: Failing trials wanted (>= 0).
        seed: The seed; the same results and seed give the same sample.

    Returns:
        The sample (transcripts not yet resolved).

    Raises:
        JudgekitError: For negative counts, nothing asked for, or results without a trial to draw.
    """
    if passing < 0 or failing < 0:
        raise JudgekitError("--passing and --failing must be >= 0")
    if passing + failing == 0:
        raise JudgekitError("ask for at least one trial: --passing N and/or --failing N")
    if not run.lines:
        raise JudgekitError(f"{run.path}: no result lines to sample from")
    sample = Sample(results=run.path, run_ids=run.run_ids, seed=seed)
    sample.requested = {"passing": passing, "failing": failing}
    pools: dict[str, list[ResultLine]] = {"passing": [], "failing": []}
    other: Counter[str] = Counter()
    for line in run.lines:
        if line.verdict is Verdict.PASS:
            pools["passing"].append(line)
        elif line.verdict is Verdict.FAIL:
            pools["failing"].append(line)
        else:
            other[line.verdict.value] += 1
    sample.not_drawable = dict(sorted(other.items()))
    for pool, wanted in (("passing", passing), ("failing", failing)):
        lines = pools[pool]
        sample.pool_sizes[pool] = len(lines)
        if wanted > len(lines):
            sample.notes.append(
                f"{wanted} {pool} trial(s) asked for but only {len(lines)} exist: all are drawn"
            )
        rng = random.Random(f"{seed}:{pool}")
        by_stratum: dict[str, list[ResultLine]] = defaultdict(list)
        for line in lines:
            by_stratum[line.case.slice or "(none)"].append(line)
        counts = allocate({s: len(v) for s, v in by_stratum.items()}, wanted, rng)
        sample.strata[pool] = {s: (len(by_stratum[s]), counts[s]) for s in sorted(by_stratum)}
        for stratum in sorted(by_stratum):
            for line in _spread(by_stratum[stratum], counts[stratum], rng):
                sample.items.append(ReviewItem(trial_item_id(line.case.id, line.trial), pool, stratum, line))
    return sample


# --------------------------------------------------------------------------- transcripts


def _candidate_paths(file: str, results_dir: Path) -> list[Path]:
    p = Path(file)
    if p.is_absolute():
        return [p]
    return [p, results_dir / p, results_dir / p.name]


def resolve_transcripts(sample: Sample, *, transcripts: Sequence[Path] = ()) -> Sample:
    """Attach each sampled trial's transcript.

    A trial's transcript is read from the file and line its result line records (as given when grading,
    tried relative to the working folder, then to the results file's folder), and its SHA-256 must still
    match; with ``transcripts`` given, those files are searched by case id and trial instead.

    Raises:
        ProblemsError: Naming every sampled trial whose transcript cannot be found, changed since it was
            graded, or is not a valid transcript.
    """
    from judgekit.transcript import Transcript, iter_transcripts

    problems: list[Problem] = []
    found: dict[str, Transcript] = {}
    if transcripts:
        wanted = {(i.line.case.id, i.line.trial): i.item_id for i in sample.items}
        for path in transcripts:
            for item in iter_transcripts(path):
                if isinstance(item, Transcript):
                    key = (item.case_id, item.trial)
                    if key in wanted and wanted[key] not in found:
                        found[wanted[key]] = item
    else:
        cache: dict[Path, list[bytes]] = {}
        for it in sample.items:
            src = it.line.source
            if src is None:
                problems.append(
                    Problem(
                        sample.results,
                        None,
                        it.item_id,
                        "the result line records no transcript source; give --transcripts",
                    )
                )
                continue
            located = [p for p in _candidate_paths(src.file, sample.results.parent) if p.is_file()]
            if not located:
                problems.append(
                    Problem(
                        sample.results,
                        None,
                        it.item_id,
                        f"transcript file {src.file!r} not found (from here or beside the results)"
                        + ("; its recorded path was redacted" if "[REDACTED]" in src.file else "")
                        + "; give --transcripts",
                    )
                )
                continue
            path = located[0]
            if path not in cache:
                from judgekit.io.documents import read_regular

                cache[path] = read_regular(path, "results file").splitlines(keepends=True)
            raw_lines = cache[path]
            if src.line > len(raw_lines):
                problems.append(Problem(path, src.line, it.item_id, "the file has no such line any more"))
                continue
            raw = raw_lines[src.line - 1]
            if (
                hashlib.sha256(raw).hexdigest() != src.sha256
                and hashlib.sha256(raw.rstrip(b"\r\n")).hexdigest() != src.sha256
            ):
                problems.append(
                    Problem(
                        path,
                        src.line,
                        it.item_id,
                        "the transcript changed since it was graded (SHA-256 differs); re-grade, or give "
                        "--transcripts",
                    )
                )
                continue
            try:
                found[it.item_id] = Transcript.model_validate_json(raw)
            except ValueError as exc:
                problems.append(Problem(path, src.line, it.item_id, f"not a valid transcript: {exc}"))
    for it in sample.items:
        if it.item_id not in found and not any(p.field == it.item_id for p in problems):
            problems.append(
                Problem(None, None, it.item_id, "no transcript with this case id and trial in --transcripts")
            )
    if problems:
        raise ProblemsError(problems)
    sample.items = [ReviewItem(i.item_id, i.pool, i.stratum, i.line, found[i.item_id]) for i in sample.items]
    return sample


# --------------------------------------------------------------------------- rendering


def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def message_views(transcript: Transcript) -> list[dict[str, Any]]:
    """Each message of a transcript as shown to a reviewer (raw text: the page or template escapes it).

    Returns:
        Per message ``index`` (0-based), ``role``, ``content`` (``""`` when none), ``calls`` (per tool call
        ``name``, ``id`` and ``arguments``: JSON with sorted keys, or the raw text and why it is not JSON)
        and ``call_id`` (the call a tool message answers, ``None`` otherwise).
    """
    out: list[dict[str, Any]] = []
    for i, m in enumerate(transcript.messages):
        calls = []
        for c in m.tool_calls:
            args = (
                json.dumps(c.arguments, ensure_ascii=False, sort_keys=True)
                if c.arguments is not None
                else f"{c.raw_arguments}  [{c.arguments_error}]"
            )
            calls.append({"name": c.name, "id": c.id, "arguments": args})
        out.append(
            {
                "index": i,
                "role": m.role,
                "content": m.content or "",
                "calls": calls,
                "call_id": m.tool_call_id,
            }
        )
    return out


def _item_view(it: ReviewItem) -> dict[str, Any]:
    line = it.line
    fp = line.judge_fingerprint or {}
    return {
        "item_id": it.item_id,
        "pool": it.pool,
        "stratum": it.stratum,
        "case_id": line.case.id,
        "case_version": line.case.version,
        "trial": line.trial,
        "verdict": line.verdict.value,
        "quality": line.quality,
        "categories": [c.value for c in line.failure_categories],
        "fingerprint": fp.get("hex") if isinstance(fp, dict) else None,
        "checks": [
            {
                "id": c.check_id,
                "layer": c.layer,
                "verdict": c.verdict.value,
                "gate": c.gate,
                "trust": c.trust.value,
                "reason": c.reason,
                "evidence": [e.summary for e in c.evidence[:5]],
            }
            for c in line.checks
        ],
        "messages": message_views(it.transcript) if it.transcript is not None else [],
    }


def _meta(sample: Sample) -> dict[str, Any]:
    return {
        "version": SHEET_VERSION,
        "results": str(sample.results),
        "run_ids": sample.run_ids,
        "seed": sample.seed,
        "sample_id": sample.sample_id,
    }


_PLAIN_ITEM = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/-]*#[0-9]+")
"""An item id written as it is in a verdict line: a case id of the case-file shape, ``#``, the trial."""


def _item_key(item_id: str) -> str:
    """How a verdict line names an item: the id itself when plain, else a code span holding it.

    A plain id (:data:`_PLAIN_ITEM`, without ``://`` or ``www.``) cannot be Markdown or a link; any other
    (a results line may carry any case id) is shown as code, which :func:`_unkey` reads back.
    """
    plain = _PLAIN_ITEM.fullmatch(item_id) and "://" not in item_id and "www." not in item_id.lower()
    return item_id if plain else md_code(item_id)


def _unkey(key: str) -> str:
    """The item id a verdict line names (:func:`_item_key` reversed)."""
    m = re.fullmatch(r"(`+)(.*?)\1", key)
    if m is None:
        return key
    inner = m.group(2)
    if len(inner) >= 2 and inner[0] == " " and inner[-1] == " " and inner.strip(" "):
        inner = inner[1:-1]
    return inner


def _comment_json(value: dict[str, Any]) -> str:
    """JSON for an HTML comment: ``<``, ``>`` and ``&`` as JSON's u-escapes (``-->`` cannot end it)."""
    text = json.dumps(value, sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_markdown(sample: Sample) -> str:
    """The review sheet as Markdown: fill in ``Reviewer:`` and each ``Reviewer verdict [...]:`` line.

    Transcript text is inside code fences longer than any backtick run it contains, so nothing in a
    transcript can end its fence or imitate a verdict line. Every other value from the results (case ids,
    run ids, slices, reasons, notes) goes through :func:`~judgekit.markdown_text.md_text`, the item marks'
    JSON has ``<``, ``>`` and ``&`` as JSON's u-escapes (a case id cannot close the HTML comment), and an
    item id that is not a plain case id (letters, digits, ``._:/-``) and trial is a code span in its
    verdict lines (:func:`_item_key`).
    """
    out: list[str] = []
    runs = ", ".join(md_text(r) for r in sample.run_ids) or "?"
    out.append(f"<!-- judgekit:review-sheet {_comment_json(_meta(sample))} -->")
    out.append(f"# Review sheet {md_text(sample.sample_id)}")
    out.append("")
    out.append(
        f"Results {md_code(str(sample.results))} (run {runs}); seed {sample.seed}; "
        f"{sum(i.pool == 'passing' for i in sample.items)} passing and "
        f"{sum(i.pool == 'failing' for i in sample.items)} failing trial(s), stratified by slice."
    )
    for note in sample.notes:
        out.append(f"\n> Note: {md_text(note)}")
    if sample.not_drawable:
        other = ", ".join(f"{n} {v}" for v, n in sample.not_drawable.items())
        out.append(f"\n> Not drawn (neither pass nor fail): {other}.")
    out.append("")
    out.append(
        "Read each transcript before its grade. For each trial write your own verdict after the colon:"
    )
    out.append("`pass`, `fail` or `insufficient_information`; leave it empty to skip the trial. Then run")
    out.append(
        "`judgekit labels read THIS_FILE --out labels.csv` and calibrate the grader against your labels."
    )
    out.append("")
    out.append("Reviewer: ")
    out.append("")
    for n, it in enumerate(sample.items, start=1):
        v = _item_view(it)
        out.append("---")
        out.append("")
        out.append(
            f"## {n}. {md_text(v['case_id'])} trial {v['trial']} "
            f"({v['pool']}, slice {md_text(str(v['stratum']))})"
        )
        mark = {k: v[k] for k in ("item_id", "case_id", "trial", "verdict", "fingerprint", "pool")}
        out.append(f"<!-- judgekit:item {_comment_json(mark)} -->")
        out.append("")
        out.append("### Transcript")
        out.append("")
        for m in v["messages"]:
            who = md_text(m["role"]) + (f" (result of {md_text(m['call_id'])})" if m["call_id"] else "")
            out.append(f"**{m['index']}. {who}**")
            body = m["content"]
            for c in m["calls"]:
                body += f"\n-> call {c['name']} {c['arguments']} ({c['id']})"
            body = body.strip("\n") or "(empty)"
            fence = _fence(body)
            out.append(f"{fence}text")
            out.append(body)
            out.append(fence)
            out.append("")
        out.append("### Grade")
        out.append("")
        quality = "none" if v["quality"] is None else f"{v['quality']:.2f}"
        cats = ", ".join(md_text(c) for c in v["categories"]) or "none"
        out.append(f"Grader verdict: **{v['verdict']}**; quality {quality}; failure categories: {cats}.")
        out.append("")
        out.append("| check | layer | verdict | gate | reason |")
        out.append("|---|---|---|---|---|")
        for c in v["checks"]:
            out.append(
                f"| {md_text(c['id'])} | {md_text(c['layer'])} | {c['verdict']} | "
                f"{'yes' if c['gate'] else 'no'} | {md_text(c['reason'])} |"
            )
        out.append("")
        out.append(f"Reviewer verdict [{_item_key(v['item_id'])}]: ")
        out.append(f"Reviewer notes [{_item_key(v['item_id'])}]: ")
        out.append("")
    return "\n".join(out) + "\n"


_HTML_TEMPLATE = "review_sheet.html.j2"
"""The HTML sheet's Jinja2 template, beside this module (autoescaped)."""


def render_html(sample: Sample) -> str:
    """The review sheet as one self-contained HTML page (escaped; no external resources).

    Its *Download labels* button writes a CSV label table (grader and reviewer rows per chosen item).
    """
    from importlib.resources import files

    from jinja2 import Environment, select_autoescape

    template = files("judgekit.golden").joinpath(_HTML_TEMPLATE).read_text(encoding="utf-8")
    env = Environment(autoescape=select_autoescape(default=True), keep_trailing_newline=True)
    items = [_item_view(i) for i in sample.items]
    meta = _meta(sample)
    meta_json = json.dumps(meta, sort_keys=True).replace("<", "\\u003c")
    return env.from_string(template).render(
        meta=meta,
        meta_json=meta_json,
        items=items,
        notes=sample.notes,
        labels=REVIEW_LABELS,
        passing=sum(i.pool == "passing" for i in sample.items),
        failing=sum(i.pool == "failing" for i in sample.items),
    )


# --------------------------------------------------------------------------- reading back


@dataclass
class SheetLabels:
    """Labels read back from a review sheet.

    Attributes:
        reviewer: The reviewer's name.
        rows: ``(item id, case id, grader verdict, grader fingerprint, reviewer label, notes)``.
        unlabelled: Item ids left without a verdict.
    """

    reviewer: str
    rows: list[tuple[str, str, str, str | None, str, str]] = field(default_factory=list)
    unlabelled: list[str] = field(default_factory=list)


def read_review_sheet(text: str, *, source: str | os.PathLike[str], rater: str | None = None) -> SheetLabels:
    """Read a filled-in Markdown review sheet.

    Args:
        text: The sheet's text.
        source: Its path, for messages, as text or a path object.
        rater: The reviewer's name; overrides (or supplies) the sheet's ``Reviewer:`` line.

    Raises:
        ProblemsError: For a verdict outside ``pass``/``fail``/``insufficient_information``, a verdict line
            for an item the sheet does not hold, an item given two verdicts, no reviewer name, or a text
            that is not a judgekit review sheet. Every problem names its line.
    """
    source = Path(source)
    problems: list[Problem] = []
    items: dict[str, dict[str, Any]] = {}
    verdicts: dict[str, tuple[str, int]] = {}
    notes: dict[str, str] = {}
    reviewer = ""
    header_seen = False
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        m_fence = _FENCE.match(line)
        if fence is not None:
            if m_fence and line.strip() == fence:
                fence = None
            continue
        if m_fence:
            fence = m_fence.group(1)
            continue
        if _SHEET_MARK.match(line):
            header_seen = True
            continue
        m = _ITEM_MARK.match(line)
        if m:
            try:
                data = load_json_bounded(m.group(1), source=source, line=number)
                items[str(data["item_id"])] = data
            except (LocatedError, KeyError, TypeError):
                problems.append(
                    Problem(source, number, "", "a damaged item marker; restore it from the original sheet")
                )
            continue
        m = _REVIEWER_LINE.match(line)
        if m:
            reviewer = m.group("name")
            continue
        m = _VERDICT_LINE.match(line)
        if m:
            item, label = (
                _unkey(m.group("item")),
                m.group("label").strip().strip("`*_").lower().replace(" ", "_"),
            )
            if item not in items:
                problems.append(Problem(source, number, item, "verdict for an item this sheet does not hold"))
                continue
            if item in verdicts:
                problems.append(
                    Problem(
                        source,
                        number,
                        item,
                        f"second verdict line for this item (first on line {verdicts[item][1]})",
                    )
                )
                continue
            if label and label not in REVIEW_LABELS:
                problems.append(
                    Problem(
                        source,
                        number,
                        item,
                        f"verdict {m.group('label')!r} is not one of {', '.join(REVIEW_LABELS)}",
                    )
                )
                continue
            verdicts[item] = (label, number)
            continue
        m = _NOTES_LINE.match(line)
        if m:
            notes[_unkey(m.group("item"))] = m.group("notes")
    if not header_seen:
        raise ProblemsError(
            [
                Problem(
                    source,
                    None,
                    "",
                    "not a judgekit review sheet (no review-sheet marker); write one with "
                    "judgekit labels sheet",
                )
            ]
        )
    name = (rater or reviewer).strip()
    if not name:
        problems.append(
            Problem(
                source, None, "Reviewer", "no reviewer name: fill in the 'Reviewer:' line or give --rater"
            )
        )
    elif name == GRADER_RATER:
        problems.append(
            Problem(
                source,
                None,
                "Reviewer",
                f"the reviewer cannot be called {GRADER_RATER!r} (the grader's rater name)",
            )
        )
    if problems:
        raise ProblemsError(problems)
    out = SheetLabels(reviewer=name)
    for item_id, data in items.items():
        label = verdicts.get(item_id, ("", 0))[0]
        if not label:
            out.unlabelled.append(item_id)
            continue
        out.rows.append(
            (
                item_id,
                str(data.get("case_id", item_id)),
                str(data["verdict"]),
                data.get("fingerprint"),
                label,
                notes.get(item_id, ""),
            )
        )
    return out


def labels_csv(labels: SheetLabels) -> str:
    """The label table (CSV): per labelled item, one ``grader`` row and one reviewer row.

    Columns ``item_id, rater, label, case_id, fingerprint``; the result parses with
    :func:`judgekit.calibration.labels.parse_labels` on the verdict scale. Items the grader did not
    decide as pass, fail or insufficient_information get only the reviewer's row.
    """
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["item_id", "rater", "label", "case_id", "fingerprint"])
    for item_id, case_id, grader_verdict, fingerprint, label, _notes in labels.rows:
        if grader_verdict in REVIEW_LABELS:
            writer.writerow([item_id, GRADER_RATER, grader_verdict, case_id, fingerprint or ""])
        writer.writerow([item_id, labels.reviewer, label, case_id, ""])
    return buffer.getvalue()


class StratumCounts(FrozenModel):
    """Trials of one stratum of a pool.

    Attributes:
        available: Trials in the stratum (>= 0).
        drawn: Trials drawn from it (0 to ``available``).
    """

    available: int
    drawn: int


class PoolCounts(FrozenModel):
    """Trials of one pool (``passing`` or ``failing``).

    Attributes:
        available: Trials in the pool (>= 0).
        drawn: Trials drawn from it (0 to ``available``).
        strata: Both counts per stratum, in draw order.
    """

    available: int
    drawn: int
    strata: dict[str, StratumCounts]


class SampledTrial(FrozenModel):
    """One trial in a review sample.

    Attributes:
        item_id: ``<case id>#<trial>``.
        pool: ``passing`` or ``failing``.
        stratum: The case's slice (``(none)`` when it has none).
        case_id: The case.
        trial: The trial number.
        verdict: The trial's verdict.
    """

    item_id: str
    pool: str
    stratum: str
    case_id: str
    trial: int
    verdict: str


class SampleDocument(FrozenModel):
    """A review sample drawn and written (the ``sample`` document ``judgekit labels sheet`` prints).

    Attributes:
        sample_id: The sample's id, ``None`` when nothing was drawn.
        seed: The seed of the draw.
        results: The results file.
        run_ids: The run ids in it.
        requested: Trials asked for per pool.
        pools: Per pool (``passing``, ``failing``): trials available and drawn, and both per stratum;
            empty when nothing was drawn.
        not_drawable: Trials of other verdicts, by verdict.
        items: The sampled trials, in sheet order.
        notes: Things a reader should know (a pool smaller than asked for).
        written: The review sheets written (Markdown, then HTML).
        warnings: Lines of the results file that could not be read.
        problems: Why nothing was drawn (empty when the sample was written).
    """

    sample_id: str | None
    seed: int
    results: str
    run_ids: list[str]
    requested: dict[str, int]
    pools: dict[str, PoolCounts] = Field(default_factory=dict)
    not_drawable: dict[str, int] = Field(default_factory=dict)
    items: list[SampledTrial] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    written: list[str] = Field(default_factory=list)
    warnings: list[LocatedProblem] = Field(default_factory=list)
    problems: list[LocatedProblem] = Field(default_factory=list)


def sample_document(drawn: Sample, written: Sequence[Path], warnings: Sequence[Problem]) -> SampleDocument:
    """The ``sample`` document: how the sample was drawn, what it holds and the files written.

    Args:
        drawn: The sample drawn (its transcripts resolved).
        written: The review sheets written (Markdown, then HTML).
        warnings: Problems of the results file (lines that could not be read).

    Returns:
        The document (no problems: a refusal writes nothing).
    """
    pools = {}
    for pool in ("passing", "failing"):
        strata = drawn.strata.get(pool, {})
        pools[pool] = PoolCounts(
            available=drawn.pool_sizes.get(pool, 0),
            drawn=sum(d for _, d in strata.values()),
            strata={stratum: StratumCounts(available=n, drawn=d) for stratum, (n, d) in strata.items()},
        )
    return SampleDocument(
        sample_id=drawn.sample_id,
        seed=drawn.seed,
        results=str(drawn.results),
        run_ids=drawn.run_ids,
        requested=drawn.requested,
        pools=pools,
        not_drawable=drawn.not_drawable,
        items=[
            SampledTrial(
                item_id=item.item_id,
                pool=item.pool,
                stratum=item.stratum,
                case_id=item.line.case.id,
                trial=item.line.trial,
                verdict=item.line.verdict.value,
            )
            for item in drawn.items
        ],
        notes=drawn.notes,
        written=[str(path) for path in written],
        warnings=[LocatedProblem.of(p) for p in warnings],
    )
