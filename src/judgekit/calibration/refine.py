"""Judge refinement on labels the judge was not tuned on: the pure steps.

A refinement (``judgekit judge refine``, :func:`judgekit.api.refine.refine`) improves a judge's rubric on
part of a label table and measures the result on the rest:

1. :func:`split_by_case` splits the table **by case** into a development part and a test part (seeded,
   deterministic, independent of row order; no case is in both), and :func:`split_parts` cuts the table.
2. :func:`find_disagreements` lists the development items where the judge and the experts' consensus
   differ, with the judge's quoted evidence and each expert's label.
3. :func:`few_shot_examples` turns development disagreements into few-shot examples (the experts' verdict
   and an excerpt); :func:`build_candidates` builds the candidate rubric versions: the current one, the
   one with those examples, and (when a model proposed new criterion wording, :func:`proposal_messages`,
   :func:`parse_proposal`) the reworded one with and without them, each with a version bump.
4. :func:`score_candidate` scores a candidate's development verdicts against the consensus on a declared
   metric (:data:`REFINE_METRICS`); :func:`choose_candidate` takes the best, ties going to the simpler
   candidate.
5. The chosen candidate is measured once on the test part by the calibration pipeline (elsewhere: this
   module never judges, reads or writes).

The development figure of the chosen candidate is optimistic (it was chosen, and shown examples, on
those very labels); only the test figure estimates how it does on labels it was not tuned on.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Final, Literal

from judgekit.calibration.agreement import MISSING, build_ratings, cohen_kappa, consensus_codes
from judgekit.calibration.guards import LabelSplit, label_content_sha256
from judgekit.calibration.labels import ItemKey, LabelTable
from judgekit.errors import JudgekitError
from judgekit.judges.rubric import FewShotExample, Rubric
from judgekit.verdict import FrozenModel

__all__ = [
    "REFINE_METRICS",
    "Candidate",
    "CandidateScore",
    "Disagreement",
    "JudgeCall",
    "RefineMetric",
    "build_candidates",
    "bump_version",
    "choose_candidate",
    "consensus_of",
    "few_shot_examples",
    "find_disagreements",
    "parse_proposal",
    "proposal_messages",
    "score_candidate",
    "split_by_case",
    "split_parts",
]

RefineMetric = Literal["kappa", "agreement", "balanced_accuracy"]

REFINE_METRICS: Final[tuple[str, ...]] = ("kappa", "agreement", "balanced_accuracy")
"""The metrics a candidate is scored on, judge against the experts' consensus, higher is better:
``kappa`` (Cohen's kappa), ``agreement`` (share of items where the judge's label is the consensus) and
``balanced_accuracy`` (the mean of the true-positive rate on ``fail`` and the true-negative rate on
``pass``). An item the judge gave no verdict on counts as a disagreement."""

_NO_VERDICT: Final = "(no verdict)"


# --------------------------------------------------------------------------------------------- the split


def _case_order(seed: int, case_id: str) -> str:
    return hashlib.sha256(f"judgekit.refine-split/1\x1f{seed}\x1f{case_id}".encode()).hexdigest()


def split_by_case(table: LabelTable, *, seed: int, dev_share: float) -> LabelSplit:
    """Split a label table's cases into a development part and a test part.

    Each case is ordered by a SHA-256 of the seed and its id; the first ``round(dev_share x cases)``
    (at least one, at most all but one) go to the development part. The split depends only on the seed,
    the share and the set of cases: not on row order, file format or the other columns, and a case keeps
    its part when other cases are added (unless the count moves the boundary past it).

    Args:
        table: The label table (its ``case_id`` per row, else its ``item_id``).
        seed: Any integer; the same seed gives the same split.
        dev_share: The share of cases in the development part, strictly between 0 and 1.

    Returns:
        The split, with the table's order-free fingerprint.

    Raises:
        JudgekitError: When the share is not strictly between 0 and 1, or the table has fewer than two
            cases (exit code 2).
    """
    if not 0.0 < dev_share < 1.0:
        raise JudgekitError(
            f"--dev-share must be strictly between 0 and 1 (got {dev_share:g}): the share of cases used to "
            "choose the rubric; the rest is the test part"
        )
    cases = sorted(set(table.case_of().values()))
    if len(cases) < 2:
        where = f"{table.source}: " if table.source is not None else ""
        raise JudgekitError(
            f"{where}the labels cover {len(cases)} case(s); splitting them by case into a development part "
            "and a test part needs at least two (label items of more cases)"
        )
    ordered = sorted(cases, key=lambda c: (_case_order(seed, c), c))
    n_dev = min(max(round(dev_share * len(cases)), 1), len(cases) - 1)
    return LabelSplit(
        seed=seed,
        dev_share=dev_share,
        content_sha256=label_content_sha256(table),
        dev_cases=tuple(sorted(ordered[:n_dev])),
        test_cases=tuple(sorted(ordered[n_dev:])),
    )


def split_parts(table: LabelTable, split: LabelSplit) -> tuple[LabelTable, LabelTable]:
    """The development part and the test part of a table, as tables of their own.

    Each part keeps the rows of its cases (every rater's), the table's scale, source and notes; its
    ``sha256`` is its own order-free fingerprint (:func:`~judgekit.calibration.guards.label_content_sha256`),
    so the ledger tells the parts apart.

    Raises:
        JudgekitError: When the split was made on another table (its fingerprint differs).
    """
    if split.content_sha256 != label_content_sha256(table):
        raise JudgekitError(
            "the split was made on other labels (its content fingerprint differs); split this table again"
        )
    parts: list[LabelTable] = []
    for cases in (set(split.dev_cases), set(split.test_cases)):
        part = LabelTable(
            scale=table.scale,
            rows=tuple(r for r in table.rows if r.case_id in cases),
            source=table.source,
            notes=table.notes,
        )
        parts.append(
            LabelTable(
                scale=part.scale,
                rows=part.rows,
                source=part.source,
                sha256=label_content_sha256(part),
                notes=part.notes,
            )
        )
    return parts[0], parts[1]


# ------------------------------------------------------------------------------------------ disagreements


class JudgeCall(FrozenModel):
    """The judge's verdict on one labelled item.

    Attributes:
        label: The verdict (``pass``, ``fail``, ``insufficient_information``).
        evidence: The judge's quotes from the transcript, in its order (may be empty).
        reason: The judge's rationale, as the grader reports it.
    """

    label: str
    evidence: tuple[str, ...] = ()
    reason: str = ""


class Disagreement(FrozenModel):
    """A development item where the judge's verdict is not the experts' consensus.

    Attributes:
        item_id: The case x trial.
        criterion: The criterion (``""`` when the table has none).
        case_id: The case.
        judge: The judge's verdict, or ``None`` when it gave none.
        consensus: The experts' consensus (the unique most frequent expert label).
        experts: Each expert's label.
        evidence: The judge's quoted evidence.
        reason: The judge's rationale.
    """

    item_id: str
    criterion: str = ""
    case_id: str
    judge: str | None
    consensus: str
    experts: dict[str, str]
    evidence: tuple[str, ...] = ()
    reason: str = ""

    @property
    def key(self) -> ItemKey:
        """The item's key in the label table."""
        return ItemKey(self.item_id, self.criterion)


def consensus_of(table: LabelTable, experts: Sequence[str]) -> dict[ItemKey, str | None]:
    """The experts' consensus on every item they labelled: the calibration report's rule.

    The unique most frequent expert label (an abstention counts as a label); ``None`` on a tie
    (:func:`judgekit.calibration.agreement.consensus_codes`).
    """
    ratings = build_ratings(table, list(experts))
    codes, _split, _n = consensus_codes(ratings.codes, ratings.n_values)
    scale = table.scale
    out: dict[ItemKey, str | None] = {}
    for item, code in zip(ratings.items, codes.tolist(), strict=True):
        if code == MISSING:
            out[item] = None
        elif code < 0:
            out[item] = scale.abstain
        else:
            out[item] = scale.values[code]
    return out


def find_disagreements(
    table: LabelTable, experts: Sequence[str], judged: Mapping[ItemKey, JudgeCall]
) -> tuple[Disagreement, ...]:
    """The items where the judge's verdict differs from the experts' consensus, sorted by case and item.

    Items without a consensus (the experts tie) are left out, as the calibration report leaves them out.

    Args:
        table: The labels (a development part).
        experts: The expert raters.
        judged: The judge's verdict per item (an item missing here is a disagreement with ``judge=None``).
    """
    case_of = table.case_of()
    out: list[Disagreement] = []
    for item, consensus in consensus_of(table, experts).items():
        if consensus is None:
            continue
        call = judged.get(item)
        if call is not None and call.label == consensus:
            continue
        labels = {e: lab for e in experts if (lab := table.label(item, e)) is not None}
        out.append(
            Disagreement(
                item_id=item.item_id,
                criterion=item.criterion,
                case_id=case_of[item],
                judge=None if call is None else call.label,
                consensus=consensus,
                experts=labels,
                evidence=() if call is None else call.evidence,
                reason="" if call is None else call.reason,
            )
        )
    return tuple(sorted(out, key=lambda d: (d.case_id, d.item_id, d.criterion)))


# ------------------------------------------------------------------------------------------- candidates


def few_shot_examples(
    disagreements: Sequence[Disagreement],
    *,
    per_criterion: int,
    excerpts: Mapping[ItemKey, str] | None = None,
    verdicts: Sequence[str] = ("pass", "fail"),
) -> tuple[FewShotExample, ...]:
    """Few-shot examples drawn from development disagreements: the experts' verdict and an excerpt.

    The excerpt is the judge's first quoted evidence, else ``excerpts[item]`` (what the caller shows for
    an item the judge quoted nothing from, such as the agent's last message); a disagreement with neither
    gives no example. Examples are taken in case and item order, at most ``per_criterion`` per criterion,
    and only for a consensus in ``verdicts``.

    Args:
        disagreements: From :func:`find_disagreements`.
        per_criterion: The most examples per criterion, at least 0 (0: none).
        excerpts: An excerpt per item, for disagreements without a quote.
        verdicts: The consensus labels an example may show (the rubric's menu).

    Returns:
        The examples, each naming its item, case, criterion, label and text.
    """
    taken: dict[str, int] = {}
    out: list[FewShotExample] = []
    for d in disagreements:
        if d.consensus not in verdicts or not d.criterion:
            continue
        text = d.evidence[0] if d.evidence and d.evidence[0].strip() else (excerpts or {}).get(d.key, "")
        if not text.strip() or taken.get(d.criterion, 0) >= per_criterion:
            continue
        taken[d.criterion] = taken.get(d.criterion, 0) + 1
        out.append(
            FewShotExample(
                item_id=d.item_id, case_id=d.case_id, text=text, label=d.consensus, criterion=d.criterion
            )
        )
    return tuple(out)


def bump_version(version: str, suffix: str = "") -> str:
    """The next version of a rubric: an integer plus one, else ``version.1``; ``-suffix`` appended if given.

    >>> bump_version("3"), bump_version("2.1", "few-shot")
    ('4', '2.1.1-few-shot')
    """
    base = str(int(version) + 1) if version.isdigit() else f"{version}.1"
    return f"{base}-{suffix}" if suffix else base


class Candidate(FrozenModel):
    """One candidate rubric version of a refinement.

    Attributes:
        name: ``current``, ``few-shot``, ``wording`` or ``wording+few-shot``.
        rubric: The rubric (the current one, or a version bump of it).
        complexity: How far it departs from the current rubric: 0 for the current one, 1 for one change
            (examples or wording), 2 for both; a tie on the metric goes to the lower.
        description: One line for the report.
    """

    name: str
    rubric: Rubric
    complexity: int
    description: str


def build_candidates(
    rubric: Rubric,
    examples: Sequence[FewShotExample],
    *,
    wording: Mapping[str, str] | None = None,
) -> tuple[Candidate, ...]:
    """The candidate rubric versions: the current one, and each change built from the development part.

    Args:
        rubric: The current rubric (its few-shot examples, if any, are kept in every candidate).
        examples: Few-shot examples to add (:func:`few_shot_examples`); none: no ``few-shot`` candidate.
        wording: New text per criterion id (a model's proposal, :func:`parse_proposal`); ``None`` or
            empty: no ``wording`` candidates.

    Returns:
        The candidates, simplest first; each version bump says what changed (``4-few-shot``).
    """
    out = [Candidate(name="current", rubric=rubric, complexity=0, description="the rubric as it is")]
    reworded: Rubric | None = None
    if wording:
        criteria = [c.model_copy(update={"text": wording.get(c.id, c.text)}) for c in rubric.criteria]
        reworded = Rubric.model_validate(
            {
                **rubric.model_dump(),
                "criteria": [c.model_dump() for c in criteria],
                "version": bump_version(rubric.version, "wording"),
            }
        )
        changed = ", ".join(sorted(k for k in wording if k in {c.id for c in rubric.criteria}))
        out.append(
            Candidate(
                name="wording",
                rubric=reworded,
                complexity=1,
                description=f"criterion wording proposed by the model ({changed})",
            )
        )
    if examples:
        shown = f"{len(examples)} few-shot example(s) from development disagreements"
        for name, base, complexity in (("few-shot", rubric, 1), ("wording+few-shot", reworded, 2)):
            if base is None:
                continue
            data = base.model_dump()
            data["examples"] = [*data.get("examples", ()), *(e.model_dump() for e in examples)]
            data["version"] = bump_version(rubric.version, name.replace("+", "-"))
            out.append(
                Candidate(
                    name=name,
                    rubric=Rubric.model_validate(data),
                    complexity=complexity,
                    description=shown + (" and the model's wording" if name != "few-shot" else ""),
                )
            )
    return tuple(sorted(out, key=lambda c: c.complexity))


# ------------------------------------------------------------------------------------------- scoring


class CandidateScore(FrozenModel):
    """A candidate's figure on the development part (optimistic: it was tuned there).

    Attributes:
        name: The candidate's name.
        version: Its rubric version.
        complexity: As :attr:`Candidate.complexity`.
        metric: The metric (:data:`REFINE_METRICS`).
        value: The metric, higher is better; ``None`` when undefined (no item with a consensus, or kappa
            with one label only), with ``reason``.
        n_items: The items with a consensus it was scored on.
        agreements: How many of them the judge matched.
        reason: Why ``value`` is undefined, else ``""``.
    """

    name: str
    version: str
    complexity: int
    metric: str
    value: float | None
    n_items: int
    agreements: int
    reason: str = ""


def score_candidate(
    candidate: Candidate,
    judged: Mapping[ItemKey, str],
    consensus: Mapping[ItemKey, str | None],
    *,
    metric: str,
) -> CandidateScore:
    """Score a candidate's verdicts against the experts' consensus on the items that have one.

    Args:
        candidate: The candidate.
        judged: Its verdict per item (an item missing here counts as a disagreement).
        consensus: The consensus per item (:func:`consensus_of`); ``None`` items are left out.
        metric: One of :data:`REFINE_METRICS`.

    Raises:
        JudgekitError: For an unknown metric (exit code 2).
    """
    if metric not in REFINE_METRICS:
        raise JudgekitError(f"--metric must be one of {', '.join(REFINE_METRICS)} (got {metric!r})")
    keys = sorted(k for k, v in consensus.items() if v is not None)
    truth = [str(consensus[k]) for k in keys]
    said = [judged.get(k, _NO_VERDICT) for k in keys]
    hits = sum(a == b for a, b in zip(truth, said, strict=True))
    value: float | None = None
    reason = ""
    if not keys:
        reason = "no item with an expert consensus"
    elif metric == "agreement":
        value = hits / len(keys)
    elif metric == "kappa":
        domain = sorted({*truth, *said})
        estimate = cohen_kappa(truth, said, labels=domain)
        value, reason = (
            estimate.value,
            "" if estimate.value is not None else (estimate.undefined_reason or "undefined"),
        )
    else:
        rates = [
            sum(s == t for t, s in zip(truth, said, strict=True) if t == cls) / n
            for cls in ("fail", "pass")
            if (n := truth.count(cls))
        ]
        if len(rates) == 2:
            value = sum(rates) / 2
        else:
            reason = "balanced accuracy needs items whose consensus is fail and items whose consensus is pass"
    return CandidateScore(
        name=candidate.name,
        version=candidate.rubric.version,
        complexity=candidate.complexity,
        metric=metric,
        value=value,
        n_items=len(keys),
        agreements=hits,
        reason=reason,
    )


def choose_candidate(scores: Sequence[CandidateScore]) -> CandidateScore:
    """The best-scoring candidate; a tie (within 1e-12) goes to the simpler one, then to the name.

    A candidate with an undefined figure is chosen only when every figure is undefined (then the
    simplest: the current rubric).

    Raises:
        ValueError: When ``scores`` is empty.
    """
    if not scores:
        raise ValueError("no candidate to choose from")
    defined = [s for s in scores if s.value is not None]
    if not defined:
        return min(scores, key=lambda s: (s.complexity, s.name))
    best = max(float(s.value) for s in defined if s.value is not None)
    tied = [s for s in defined if s.value is not None and best - float(s.value) <= 1e-12]
    return min(tied, key=lambda s: (s.complexity, s.name))


# ------------------------------------------------------------------------------------ proposed wording

_PROPOSAL_SYSTEM = (
    "You improve the wording of the criteria of an LLM judge's rubric. You are shown each criterion and "
    "items where the judge's verdict differed from expert reviewers, with the judge's quoted evidence. "
    "Propose clearer criterion texts that would lead a careful judge to the experts' verdicts. Keep each "
    "criterion's meaning; do not mention specific conversations. Reply with one JSON object and nothing "
    'else: {"criteria": [{"id": "<criterion id>", "text": "<new text>"}]}, listing only the criteria you '
    "change."
)


def proposal_messages(
    rubric: Rubric, disagreements: Sequence[Disagreement], *, limit: int = 40
) -> tuple[dict[str, str], ...]:
    """The chat messages asking a model for new criterion wording (sent through the judge's client).

    Only the rubric's own criteria are offered for rewording (a case's criteria belong to the case). The
    disagreements shown are the first ``limit`` on those criteria, as JSON.
    """
    own = {c.id for c in rubric.criteria}
    shown = [
        {
            "criterion": d.criterion,
            "judge": d.judge,
            "experts": d.consensus,
            "judge_evidence": list(d.evidence),
            "judge_reason": d.reason,
        }
        for d in disagreements
        if d.criterion in own
    ][:limit]
    body = {
        "rubric": rubric.id,
        "criteria": [{"id": c.id, "text": c.text} for c in rubric.criteria],
        "disagreements": shown,
    }
    user = "Rubric and development disagreements (JSON):\n" + json.dumps(body, ensure_ascii=False, indent=1)
    return ({"role": "system", "content": _PROPOSAL_SYSTEM}, {"role": "user", "content": user})


def parse_proposal(content: str | None, rubric: Rubric) -> dict[str, str]:
    """The new criterion texts a model proposed, by criterion id (only the rubric's own criteria).

    A fenced JSON block is accepted. Unknown ids, blank texts and unchanged texts are dropped.

    Raises:
        JudgekitError: When the reply is empty or not the JSON object asked for (exit code 1: the model's
            answer is unusable; the request and reply are kept in the output folder).
    """
    text = (content or "").strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    entries = data.get("criteria") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise JudgekitError(
            "the model's wording proposal is not the JSON object asked for "
            '({"criteria": [{"id": ..., "text": ...}]}); see the request and reply kept in the output '
            "folder, or refine without --propose-wording",
            exit_code=1,
        )
    own = {c.id: c.text for c in rubric.criteria}
    out: dict[str, str] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        cid, new = entry.get("id"), entry.get("text")
        if isinstance(cid, str) and cid in own and isinstance(new, str) and new.strip() not in ("", own[cid]):
            out[cid] = new.strip()
    return out
