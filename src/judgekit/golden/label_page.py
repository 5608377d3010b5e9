"""The labelling page: one expert labels one trial and one criterion at a time, blind to the judge.

:func:`build_page` turns a graded run's judged criteria into the items of one expert's page and
:func:`render_page` writes it as one self-contained HTML file (no network, no external file: its style,
script and data are inline, and its Content-Security-Policy allows only its own script, by hash).

What the page shows, for each item (a trial x a criterion the judge decided):

* the criterion's text (from the rubric the run was graded with, or the case's own criteria), checked
  against the hash of the text the judge saw: a page never asks about a text the judge was not given;
* the case facts the judge was given (goal, required outcome, cited policies...), when the case set is
  known, and the transcript: every message and tool call, as text (the page never inserts transcript text
  as markup; the embedded data has every ``<`` escaped, so no ``</script>`` in a transcript can end it);
* the judge's verdict, reason and quotes only when the page is built with ``show_judge``: by default
  the verdicts are not in the file at all, and every downloaded row says whether its rater saw them
  (``saw_judge``).

The expert answers ``pass``, ``fail`` or ``insufficient_information`` (the evidence does not decide),
with optional notes; *Download labels* writes a label table (:mod:`judgekit.calibration.labels`:
``item_id, criterion, rater, label, case_id, notes, saw_judge``) whose item ids are those of the judge's
rows (:func:`~judgekit.golden.sample.trial_item_id` and the criterion id), so the two join.

**Order**: each expert sees the items in an order fixed by the seed and their name
(:func:`expert_order`): item ``(i, c)`` is placed by the SHA-256 of ``[seed, expert, i, c]`` as JSON. The
same expert and seed always get the same order (whatever the order of the results file), two experts get
independent orders (so neither sees the items in the other's, or the judge's, sequence), and adding an
item to the run does not reorder the others.

**State**: the answers live in the browser's ``localStorage`` under the page's content hash
(:attr:`LabelPage.page_id`), so a reload, or reopening the same file, keeps the work; a page built
from other items, another expert or seed, or with the judge shown has another hash and starts empty.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgekit.calibration.labels import ItemKey
from judgekit.errors import JudgekitError, Problem, ProblemsError
from judgekit.golden.sample import GRADER_RATER, message_views, trial_item_id
from judgekit.graders.rubric import case_criteria
from judgekit.judges.prompt import render_case_facts
from judgekit.verdict import Verdict

if TYPE_CHECKING:
    from judgekit.cases import Case
    from judgekit.judges.rubric import Criterion, Rubric
    from judgekit.results import ResultLine
    from judgekit.transcript import Transcript

__all__ = [
    "PAGE_LABELS",
    "PAGE_VERSION",
    "RESERVED_RATERS",
    "LabelPage",
    "PageItem",
    "build_page",
    "check_expert_name",
    "expert_order",
    "render_page",
]

PAGE_VERSION = 1
"""The page's data format version (part of its content hash)."""
PAGE_LABELS = ("pass", "fail", "insufficient_information")
"""The answers the page offers: the verdict scale with its abstain label."""
RESERVED_RATERS = (GRADER_RATER, "judge")
"""Rater names an expert may not take: the judge's rows use them."""
_CRITERION_CHECK = "criterion:"
_TEMPLATE = "label_page.html.j2"
_SCRIPT = "label_page.js"


@dataclass(frozen=True)
class PageItem:
    """One item of the page: a trial and a criterion the judge decided.

    Attributes:
        item_id: The trial's item id (``<case id>#<trial>``), as in the judge's label rows.
        case_id: The case.
        trial: The trial number (1-based).
        criterion: The criterion id (the label table's ``criterion``).
        criterion_text: The criterion as the judge read it.
        facts: The case facts the judge was given, or ``None`` when the case set was not given.
        messages: The transcript's messages (:func:`~judgekit.golden.sample.message_views`).
        judge: The judge's ``verdict``, ``reason`` and ``quotes``; ``None`` on a blind page.
    """

    item_id: str
    case_id: str
    trial: int
    criterion: str
    criterion_text: str
    facts: str | None
    messages: list[dict[str, Any]]
    judge: dict[str, Any] | None = None

    @property
    def key(self) -> ItemKey:
        """The item's key in a label table."""
        return ItemKey(self.item_id, self.criterion)


@dataclass
class LabelPage:
    """One expert's labelling page, its items in that expert's order.

    Attributes:
        expert: The expert's rater name (every downloaded row carries it).
        seed: The seed of the order.
        show_judge: True when the page shows the judge's verdicts (and the rows say ``saw_judge=yes``).
        results: The results file the items come from.
        rubric: ``<id> v<version>`` of the rubric the criterion texts come from.
        items: The items, in the expert's order.
        skipped: Judged criteria left out, with why (not judged, filtered out by ``criteria``).
    """

    expert: str
    seed: int
    show_judge: bool
    results: str
    rubric: str
    items: list[PageItem] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)

    def data(self) -> dict[str, Any]:
        """What the page embeds (and hashes): the expert, seed, blindness, items and trials.

        Each trial's transcript and case facts are stored once under ``trials`` (by item id), however many
        of its criteria are items.
        """
        return {
            "version": PAGE_VERSION,
            "expert": self.expert,
            "seed": self.seed,
            "show_judge": self.show_judge,
            "labels": list(PAGE_LABELS),
            "items": [
                {
                    "item_id": i.item_id,
                    "case_id": i.case_id,
                    "trial": i.trial,
                    "criterion": i.criterion,
                    "criterion_text": i.criterion_text,
                    "judge": i.judge,
                }
                for i in self.items
            ],
            "trials": {i.item_id: {"facts": i.facts, "messages": i.messages} for i in self.items},
        }

    @property
    def page_id(self) -> str:
        """SHA-256 of the embedded data (canonical JSON): the page's ``localStorage`` key."""
        text = json.dumps(self.data(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _order_key(seed: int, expert: str, key: ItemKey) -> str:
    text = json.dumps([seed, expert, key.item_id, key.criterion], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def expert_order(keys: Iterable[ItemKey], *, expert: str, seed: int) -> list[ItemKey]:
    """The order in which ``expert`` labels ``keys``: by SHA-256 of ``[seed, expert, item, criterion]``.

    Args:
        keys: The items (any order; the result does not depend on it).
        expert: The expert's rater name.
        seed: Any integer; another seed gives the same expert another order.

    Returns:
        The distinct keys in the expert's order: the same for the same expert, seed and items; independent
        between experts; one added item leaves the others' relative order unchanged.

    >>> keys = [ItemKey("c#1", "tone"), ItemKey("c#2", "tone"), ItemKey("c#1", "honesty")]
    >>> expert_order(keys, expert="ann", seed=0) == expert_order(keys[::-1], expert="ann", seed=0)
    True
    """
    return sorted(set(keys), key=lambda k: (_order_key(seed, expert, k), k))


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def check_expert_name(expert: str) -> str:
    """The expert's rater name, checked.

    Raises:
        JudgekitError: (exit 2) An empty name, one with surrounding spaces or control characters, or a
            name the judge's rows use (``grader``, ``judge``).
    """
    if not expert.strip():
        raise JudgekitError("--expert: give the expert's name (the rater name of every label they download)")
    if expert != expert.strip() or _CONTROL.search(expert):
        raise JudgekitError(
            f"--expert: {expert!r} has surrounding spaces or control characters; give the name as it "
            "should appear in the label table's rater column"
        )
    if expert.lower() in RESERVED_RATERS:
        raise JudgekitError(
            f"--expert: {expert!r} is the rater name of the judge's rows ({', '.join(RESERVED_RATERS)}); "
            "give the expert's own name"
        )
    return expert


def _criteria_of(rubric: Rubric, case: Case | None) -> dict[str, Criterion]:
    found = {c.id: c for c in rubric.criteria}
    if case is not None:
        found.update({c.id: c for c in case_criteria(case)[0]})
    return found


def _judged_text_hash(check_evidence: Sequence[Any]) -> str | None:
    for e in check_evidence:
        if e.kind == "note" and isinstance(e.data, dict) and isinstance(e.data.get("criterion_text"), str):
            return str(e.data["criterion_text"])
    return None


def _judge_view(verdict: Verdict, reason: str, evidence: Sequence[Any]) -> dict[str, Any]:
    quotes = [e.quote for e in evidence if e.kind == "judge" and e.quote]
    return {"verdict": verdict.value, "reason": reason, "quotes": quotes}


def build_page(
    lines: Sequence[ResultLine],
    transcripts: Mapping[str, Transcript],
    rubric: Rubric,
    cases: Mapping[str, Case] | None,
    *,
    expert: str,
    seed: int = 0,
    criteria: Sequence[str] = (),
    show_judge: bool = False,
    results: str | Path = "",
) -> LabelPage:
    """The items of one expert's page: every criterion the judge decided in ``lines``, in the expert's order.

    Args:
        lines: The run's result lines.
        transcripts: Each trial's transcript by item id (``<case id>#<trial>``).
        rubric: The rubric the run was graded with (its criterion texts).
        cases: The golden set's cases by id (their own criteria and the facts the judge saw), or ``None``
            when not given (the case facts are then not shown, and case criteria cannot be labelled).
        expert: The expert's rater name (:func:`check_expert_name`).
        seed: The seed of the expert's order.
        criteria: Only these criterion ids (empty: every judged criterion).
        show_judge: Put the judge's verdict, reason and quotes on the page (recorded as ``saw_judge``).
        results: The results file, named on the page and in messages.

    Returns:
        The page. A criterion the judge did not decide (``not_evaluated``: never judged) is skipped and
        counted; an ``error`` verdict is still an item (the expert's label does not depend on the judge's).

    Raises:
        JudgekitError: (exit 2) A bad expert name, a ``criteria`` id no trial was judged on, no item at all.
        ProblemsError: (exit 2) A criterion found in neither the rubric nor the case, or whose text differs
            from the one the judge was given (wrong ``--rubric``), or a trial without its transcript; each
            named by item.
    """
    check_expert_name(expert)
    page = LabelPage(expert, seed, show_judge, str(results), f"{rubric.id} v{rubric.version}")
    seen_ids: set[str] = set()
    problems: list[Problem] = []
    by_key: dict[ItemKey, PageItem] = {}
    for line in lines:
        item_id = trial_item_id(line.case.id, line.trial)
        case = cases.get(line.case.id) if cases is not None else None
        known = _criteria_of(rubric, case)
        for check in line.checks:
            if not check.check_id.startswith(_CRITERION_CHECK):
                continue
            cid = check.check_id.removeprefix(_CRITERION_CHECK)
            seen_ids.add(cid)
            if check.verdict is Verdict.NOT_EVALUATED:
                page.skipped["not judged"] = page.skipped.get("not judged", 0) + 1
                continue
            if criteria and cid not in criteria:
                page.skipped["not in --criteria"] = page.skipped.get("not in --criteria", 0) + 1
                continue
            criterion = known.get(cid)
            where = f"{item_id}/{cid}"
            if criterion is None:
                hint = "" if cases is not None else " (a case's own criterion needs --cases)"
                problems.append(
                    Problem(
                        Path(results),
                        None,
                        where,
                        f"criterion {cid!r} is in neither rubric {page.rubric} nor case "
                        f"{line.case.id!r}{hint}",
                    )
                )
                continue
            judged = _judged_text_hash(check.evidence)
            if judged is not None and judged != criterion.text_hash:
                problems.append(
                    Problem(
                        Path(results),
                        None,
                        where,
                        f"the text of criterion {cid!r} in rubric {page.rubric} is not the text the judge "
                        "was given; give the rubric (--rubric) and case set (--cases) the run was graded "
                        "with",
                    )
                )
                continue
            transcript = transcripts.get(item_id)
            if transcript is None:
                problems.append(Problem(Path(results), None, where, "no transcript for this trial"))
                continue
            by_key[ItemKey(item_id, cid)] = PageItem(
                item_id=item_id,
                case_id=line.case.id,
                trial=line.trial,
                criterion=cid,
                criterion_text=criterion.text,
                facts=render_case_facts(case) if case is not None else None,
                messages=message_views(transcript),
                judge=_judge_view(check.verdict, check.reason, check.evidence) if show_judge else None,
            )
    unknown = [c for c in criteria if c not in seen_ids]
    if unknown:
        listed = ", ".join(sorted(seen_ids)) or "none"
        raise JudgekitError(
            f"--criteria: no trial in {results} was judged on {', '.join(map(repr, unknown))}; "
            f"judged criteria: {listed}"
        )
    if problems:
        raise ProblemsError(problems)
    if not by_key:
        raise JudgekitError(
            f"{results}: no judged criterion to label (the run has no judge verdict on a rubric criterion"
            + (" of --criteria" if criteria else "")
            + "); grade it with a judge first"
        )
    page.items = [by_key[k] for k in expert_order(by_key, expert=expert, seed=seed)]
    return page


def _script_json(data: Any) -> str:
    """``data`` as JSON safe inside ``<script type="application/json">``: no ``<``, U+2028 or U+2029 raw."""
    text = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def render_page(page: LabelPage) -> str:
    """The page as one self-contained HTML document.

    The data goes in a ``<script type="application/json">`` block (never executed; every ``<`` escaped),
    and the page's script, inline, inserts every text with ``textContent``, never as markup. The
    Content-Security-Policy allows that one script by its SHA-256 and no request of any kind.
    """
    from importlib.resources import files

    from jinja2 import Environment, select_autoescape

    here = files("judgekit.golden")
    script = here.joinpath(_SCRIPT).read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    env = Environment(autoescape=select_autoescape(default=True), keep_trailing_newline=True)
    template = env.from_string(here.joinpath(_TEMPLATE).read_text(encoding="utf-8"))
    data = page.data() | {"page_id": page.page_id, "results": page.results, "rubric": page.rubric}
    return template.render(
        page=page,
        page_id=page.page_id,
        data_json=_script_json(data),
        script=script,
        script_hash=f"sha256-{digest}",
    )
