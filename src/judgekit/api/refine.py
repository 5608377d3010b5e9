"""Refine a judge's rubric on labels; measure it on labels it was not tuned on (``judgekit judge refine``).

One function, :func:`refine`, runs the whole loop on a label table, the golden set and the transcripts of
the labelled trials, through the real judge client (a cassette in ``replay`` mode runs it offline):

1. the table is split **by case** into a development part and a test part
   (:func:`judgekit.calibration.refine.split_by_case`); before any judge call, the ledger refuses a test
   part that was a development set (:func:`~judgekit.calibration.guards.check_not_selection_set`) or was
   already the test part of a refinement of the same rubric lineage, the rubric id across versions
   (:func:`~judgekit.calibration.guards.check_test_unseen`);
2. the current rubric judges the development trials; the disagreements with the experts' consensus are
   listed with the judge's quotes and each expert's label;
3. candidate rubric versions are built: few-shot examples drawn from those disagreements and, with
   ``propose_wording``, criterion wording a model proposes through the same judge client (request and
   reply kept in full in the output folder); the few-shot leakage guard checks the examples against the
   test part;
4. each candidate judges the development trials and is scored there on the declared metric; the best is
   chosen, a tie going to the simpler candidate;
5. the ledger records the development part as a selection set and the test part as looked at, then the
   chosen candidate judges the test trials once and :func:`judgekit.api.calibration.calibrate` measures it
   on the test part alone and builds its calibration record. The development figure is reported beside
   it, marked optimistic.

Every file written is listed in :attr:`Refinement.written`.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from judgekit.calibration.guards import LabelSplit, LabelUsage
from judgekit.calibration.refine import CandidateScore, Disagreement, JudgeCall
from judgekit.errors import JudgekitError
from judgekit.verdict import FrozenModel, WrittenFile

if TYPE_CHECKING:
    from judgekit.api.calibration import Calibration
    from judgekit.calibration.gate import TrustPolicy
    from judgekit.calibration.labels import ItemKey, LabelTable
    from judgekit.calibration.refine import Candidate
    from judgekit.cases import Case
    from judgekit.caseset import CaseSet
    from judgekit.graders.rubric import RubricGrader
    from judgekit.judge_setup import JudgeConfig
    from judgekit.transcript import Transcript
    from judgekit.verdict import CheckResult

__all__ = ["REFINE_SCHEMA", "RefineOptions", "Refinement", "RefinementDocument", "refine"]

REFINE_SCHEMA: Final = "judgekit.refinement/1"

_TRIAL = re.compile(r"(?:#|:t)(\d+)\Z")
_EXCERPT_CHARS: Final = 400


@dataclass(frozen=True, kw_only=True)
class RefineOptions:
    """What to refine and how (``judgekit judge refine``'s options).

    Attributes:
        judge: The judge to refine: a rubric grader already built (its rubric, client and cassette are
            used) or a judge configuration (built by :func:`judgekit.judge_setup.build_rubric_grader`).
        experts: The expert raters of the label table (at least one; every other rater is ignored).
        cases: The golden set (a case set or its folder): the cases of the labelled trials.
        runs: The transcript files (JSONL) holding every labelled trial.
        seed: The split's seed (any integer).
        dev_share: The share of cases in the development part, strictly between 0 and 1.
        metric: The development metric candidates are chosen on: ``kappa``, ``agreement`` or
            ``balanced_accuracy`` (:data:`judgekit.calibration.refine.REFINE_METRICS`).
        examples_per_criterion: The most few-shot examples per criterion (0: no few-shot candidate).
        propose_wording: Ask the judge's model for new criterion wording (one more request, recorded in
            the cassette in ``record`` mode and kept in the output folder).
        records: The calibration records folder: its label-usage ledger is checked and written, and the
            record goes there (``None``: ``JUDGEKIT_RECORDS``, the project configuration, else
            ``calibration/records``).
        policy: The trust policy the test part is measured against (``None``: the setting, else defaults).
        judge_rater: The rater name the judge's verdicts get in the label rows written.
    """

    judge: RubricGrader | JudgeConfig
    experts: Sequence[str]
    cases: CaseSet | str | os.PathLike[str]
    runs: Sequence[str | os.PathLike[str]]
    seed: int = 0
    dev_share: float = 0.5
    metric: str = "kappa"
    examples_per_criterion: int = 3
    propose_wording: bool = False
    records: str | os.PathLike[str] | None = None
    policy: TrustPolicy | str | os.PathLike[str] | None = None
    judge_rater: str = "judge"


class HeldOutFigure(FrozenModel):
    """The chosen rubric measured once on the test part: what to believe.

    Attributes:
        metric: The development metric, computed the same way on the test part.
        value: Its value on the test part (``None`` when undefined there).
        n_items: Test items with an expert consensus.
        agreements: How many of them the judge matched.
        fingerprint: The chosen judge's fingerprint (the calibration record's key).
        trusted: Whether the test part's calibration passed the trust policy.
        record: The calibration record written (built from the test part alone).
        report: The calibration report of the test part (Markdown).
    """

    metric: str
    value: float | None
    n_items: int
    agreements: int
    fingerprint: str
    trusted: bool
    record: str
    report: str


class RefinementDocument(FrozenModel):
    """What a refinement did (the ``refinement`` JSON document and ``refinement.json``).

    Attributes:
        schema_version: Always :data:`REFINE_SCHEMA`.
        labels: The label table.
        lineage: The rubric id being refined (its lineage across versions).
        split: The split by case (seed, share, cases of each part, the table's content fingerprint).
        dev_items: Development items (trial x criterion) labelled by the experts.
        test_items: Test items.
        disagreements: The current rubric's development disagreements with the experts' consensus.
        candidates: Every candidate's development figure (optimistic), simplest first.
        chosen: The candidate chosen on the development part.
        chosen_version: Its rubric version.
        dev_figure: The chosen candidate's development figure: OPTIMISTIC (it was chosen, and shown its
            examples, on those labels).
        test_figure: The chosen candidate measured once on the test part: the figure to believe.
        usage: The two ledger lines written (the development part as a selection set, the test part).
        written: Every file written.
    """

    schema_version: Literal["judgekit.refinement/1"] = REFINE_SCHEMA
    labels: str
    lineage: str
    split: LabelSplit
    dev_items: int
    test_items: int
    disagreements: tuple[Disagreement, ...]
    candidates: tuple[CandidateScore, ...]
    chosen: str
    chosen_version: str
    dev_figure: CandidateScore
    test_figure: HeldOutFigure
    usage: tuple[LabelUsage, LabelUsage]
    written: list[WrittenFile]


@dataclass(frozen=True)
class Refinement:
    """A refinement's document and the test part's calibration (report, gate and record).

    Attributes:
        document: What was done and found (:class:`RefinementDocument`).
        calibration: The chosen judge measured on the test part alone.
    """

    document: RefinementDocument
    calibration: Calibration

    def render_markdown(self) -> str:
        """The refinement as Markdown: the split, the disagreements, the candidates, dev beside test."""
        return _markdown(self.document)


# ----------------------------------------------------------------------------------------- judging


def _trial_key(item_id: str, case_id: str) -> tuple[str, int] | None:
    """The (case, trial) a labelled item names: ``<case>#<trial>``, ``...:t<trial>``, or the case (trial 1).

    The case is the row's ``case_id``; ``None`` when the item id names no trial of it.
    """
    found = _TRIAL.search(item_id)
    if found is not None:
        return case_id, int(found.group(1))
    return (case_id, 1) if item_id == case_id else None


def _trials(
    table: LabelTable, case_set: CaseSet, runs: Sequence[str | os.PathLike[str]]
) -> dict[tuple[str, int], tuple[Case, Transcript]]:
    """The (case, transcript) of every labelled trial, by (case id, trial).

    Raises:
        JudgekitError: When a run has problems, or a labelled item's trial is in no run (the first few
            named, with what to give).
    """
    from judgekit.golden.splits import holdout_ids
    from judgekit.runner import plan_trials

    plan = plan_trials(case_set, list(runs), holdout=sorted(holdout_ids(case_set)))
    if plan.problems:
        listed = "\n".join(f"  {p}" for p in plan.problems[:10])
        raise JudgekitError(f"--runs: the transcripts have problems:\n{listed}")
    found = {(t.case.id, t.transcript.trial): (t.case, t.transcript) for t in plan.trials}
    wanted: dict[tuple[str, int], tuple[Case, Transcript]] = {}
    missing: list[str] = []
    for item, case_id in table.case_of().items():
        key = _trial_key(item.item_id, case_id)
        if key is None or key not in found:
            missing.append(item.item_id)
        else:
            wanted[key] = found[key]
    if missing:
        names = sorted(set(missing))
        shown = ", ".join(names[:5]) + (" ..." if len(names) > 5 else "")
        raise JudgekitError(
            f"{len(names)} labelled trial(s) are not in --runs ({shown}): give the transcript files of every "
            "labelled trial (an item id names its trial as <case>#<trial>, or ends in :t<trial>, with the "
            "case in the case_id column)"
        )
    return wanted


def _excerpt(transcript: Transcript) -> str:
    """The agent's last message (cut at a word), for a few-shot example the judge quoted nothing from."""
    from judgekit.textnorm import excerpt

    for message in reversed(transcript.messages):
        if message.role == "assistant" and message.content and message.content.strip():
            return excerpt(message.content.strip(), 0, 0, context=_EXCERPT_CHARS)
    return ""


def _judge(
    grader: RubricGrader, table: LabelTable, trials: Mapping[tuple[str, int], tuple[Case, Transcript]]
) -> dict[ItemKey, JudgeCall]:
    """The grader's verdict on every labelled item of ``table`` (its trials judged once each).

    Raises:
        JudgekitError: When a judge request has no recorded reply in replay mode, or the judge errs on an
            item (exit code 1: the judge could not answer); when labelled criteria are ones the judge does
            not decide (exit code 2, naming them).
    """
    from judgekit.judges.client import ERROR_CASSETTE_MISS
    from judgekit.verdict import Verdict

    by_trial: dict[tuple[str, int], list[ItemKey]] = {}
    for item, case_id in table.case_of().items():
        key = _trial_key(item.item_id, case_id)
        if key is not None:
            by_trial.setdefault(key, []).append(item)
    order = sorted(by_trial)

    async def judge_all() -> list[list[CheckResult]]:
        return list(await asyncio.gather(*(grader.grade(*trials[k]) for k in order)))

    misses_before = int(grader.client.usage.errors.get(ERROR_CASSETTE_MISS, 0))
    judged = asyncio.run(judge_all())
    out: dict[ItemKey, JudgeCall] = {}
    for key, checks in zip(order, judged, strict=True):
        wanted = {i.criterion: i for i in by_trial[key]}
        for check in checks:
            found = wanted.get(check.check_id.removeprefix("criterion:"))
            if found is None or check.verdict is Verdict.NOT_EVALUATED:
                continue
            item = found
            if check.verdict is Verdict.ERROR:
                misses = int(grader.client.usage.errors.get(ERROR_CASSETTE_MISS, 0)) - misses_before
                hint = (
                    f" ({misses} request(s) have no recorded reply in the cassette: record them with "
                    "--cache-mode record against the judge's server)"
                    if misses
                    else ""
                )
                raise JudgekitError(
                    f"the judge could not judge {item} (case {key[0]} trial {key[1]}): {check.reason}{hint}",
                    exit_code=1,
                )
            quotes = tuple(e.quote for e in check.evidence if e.kind == "judge" and e.quote)
            out[item] = JudgeCall(label=check.verdict.value, evidence=quotes, reason=check.reason)
    undecided = sorted({k.criterion for k in table.items if k not in out})
    if undecided:
        raise JudgekitError(
            f"the labels rate criteria the judge does not decide ({', '.join(undecided[:5])}): they are "
            f"neither criteria of rubric {grader.rubric.id!r} nor criteria the labelled cases send to the "
            "judge; remove their rows, or refine the rubric that has them (--rubric)"
        )
    return out


def _only_raters(table: LabelTable, raters: Sequence[str]) -> LabelTable:
    """The table's rows of ``raters`` only (the judge's own rows, if any, are not used: it is re-judged)."""
    from judgekit.calibration.labels import LabelTable

    keep = set(raters)
    rows = tuple(r for r in table.rows if r.rater in keep)
    return LabelTable(
        scale=table.scale, rows=rows, source=table.source, sha256=table.sha256, notes=table.notes
    )


def _check_items(table: LabelTable) -> None:
    """Refuse a table whose rows do not name a criterion, or a case apart from the trial.

    Raises:
        JudgekitError: When an item has no criterion (the judge decides one criterion at a time), or a row
            has no ``case_id`` while its item id names a trial (each trial would be split as a case of its
            own, and trials of one conversation could land in both parts); exit code 2.
    """
    first = {r.item: r for r in reversed(table.rows)}
    where = f"{table.source}: " if table.source is not None else ""
    bare = sorted(str(k) for k in first if not k.criterion)
    if bare:
        raise JudgekitError(
            f"{where}{len(bare)} labelled item(s) name no criterion ({', '.join(bare[:3])}, line "
            f"{first[next(k for k in first if not k.criterion)].line}): the judge decides one criterion at a "
            "time; add a criterion column (a rubric criterion id, or a case's case.* id)"
        )
    trials = [r for r in first.values() if r.case_id == r.item.item_id and _TRIAL.search(r.item.item_id)]
    if trials:
        row = min(trials, key=lambda r: r.line)
        raise JudgekitError(
            f"{where}line {row.line}: item {row.item.item_id!r} names a trial but the row has no case_id: a "
            "refinement splits the labels by case, so give each row its case in a case_id column"
        )


def _figure(value: float | None, reason: str = "") -> str:
    return f"{value:.3f}" if value is not None else f"undefined ({reason or 'no items'})"


def _cell(text: str) -> str:
    from judgekit.markdown_text import md_text

    return md_text(text)


def _markdown(doc: RefinementDocument) -> str:
    """The refinement report: the split, the development figure (optimistic) beside the test figure."""
    s, dev, test = doc.split, doc.dev_figure, doc.test_figure
    lines = [
        f"# Refinement of rubric {doc.lineage}",
        "",
        f"Labels: {_cell(doc.labels)}. Split by case (seed {s.seed}, development share {s.dev_share:g}): "
        f"{len(s.dev_cases)} development cases ({doc.dev_items} items), {len(s.test_cases)} test cases "
        f"({doc.test_items} items); no case is in both. The split is recorded in the label-usage ledger.",
        "",
        f"| figure ({dev.metric}) | value | items | judge matched |",
        "|---|---|---|---|",
        f"| development, chosen {doc.chosen} (version {_cell(doc.chosen_version)}): OPTIMISTIC, tuned on "
        f"these labels | {_figure(dev.value, dev.reason)} | {dev.n_items} | {dev.agreements} |",
        f"| test, measured once: the figure to believe | {_figure(test.value)} | {test.n_items} | "
        f"{test.agreements} |",
        "",
        f"The calibration record ({_cell(test.record)}, fingerprint {test.fingerprint[:12]}) is built from "
        f"the test part alone: {'TRUSTED' if test.trusted else 'NOT TRUSTED'} under the policy (report: "
        f"{_cell(test.report)}).",
        "",
        "## Candidates (development part only)",
        "",
        "| candidate | version | complexity | value | items | judge matched |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {c.name}{' (chosen)' if c.name == doc.chosen else ''} | {_cell(c.version)} | {c.complexity} | "
        f"{_figure(c.value, c.reason)} | {c.n_items} | {c.agreements} |"
        for c in doc.candidates
    ]
    lines += ["", f"## Development disagreements of the current rubric ({len(doc.disagreements)})", ""]
    if doc.disagreements:
        lines += [
            "| item | criterion | judge | consensus | experts | judge's evidence |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {_cell(d.item_id)} | {_cell(d.criterion)} | {d.judge or 'no verdict'} | {d.consensus} | "
            f"{_cell(', '.join(f'{e}: {lab}' for e, lab in d.experts.items()))} | "
            f"{_cell(' / '.join(d.evidence) or '(no quote)')} |"
            for d in doc.disagreements
        ]
    else:
        lines.append("None: the current rubric agrees with the consensus on every development item.")
    lines += ["", "## Files written", ""] + [f"- {_cell(w.path)} ({w.what})" for w in doc.written]
    return "\n".join(lines) + "\n"


def _grader(judge: RubricGrader | JudgeConfig) -> RubricGrader:
    from judgekit.graders.rubric import RubricGrader
    from judgekit.judge_setup import build_rubric_grader

    return judge if isinstance(judge, RubricGrader) else build_rubric_grader(judge)


def _with_rubric(grader: RubricGrader, candidate: Candidate) -> RubricGrader:
    """A grader like ``grader`` (same client and cassette, same case criteria) with the candidate's rubric."""
    from judgekit.graders.rubric import RubricGrader

    if candidate.rubric == grader.rubric:
        return grader
    return RubricGrader(candidate.rubric, grader.client, include_case_criteria=grader.include_case_criteria)


def _propose(
    grader: RubricGrader, disagreements: Sequence[Disagreement], out: Path, written: list[WrittenFile]
) -> dict[str, str]:
    """Ask the judge's model for new criterion wording; keep the request and reply in ``proposal.json``."""
    from judgekit.calibration.refine import parse_proposal, proposal_messages
    from judgekit.io.atomic import write_atomic_making_folder

    request = grader.client.build_request(proposal_messages(grader.rubric, disagreements), schema=None)
    result = asyncio.run(grader.client.complete(request, item=f"refine/{grader.rubric.id}/proposal"))
    kept = {
        "request": request,
        "reply": {"content": result.content, "error": result.error, "error_detail": result.error_detail},
    }
    path = write_atomic_making_folder(
        out / "proposal.json", json.dumps(kept, ensure_ascii=False, indent=1) + "\n", what="wording proposal"
    )
    written.append(WrittenFile(path=str(path), what="wording_proposal"))
    if result.error is not None:
        raise JudgekitError(
            f"the model could not propose wording: {result.error_detail or result.error} (request kept in "
            f"{path}); refine without --propose-wording or record the reply",
            exit_code=1,
        )
    return parse_proposal(result.content, grader.rubric)


def rubric_yaml(candidate: Candidate) -> str:
    """A candidate rubric as a rubric file (``judgekit rubrics check`` accepts it), with a header comment."""
    import yaml

    data = candidate.rubric.model_dump(mode="json", exclude_none=True)
    if not data.get("examples"):
        data.pop("examples", None)
    head = (
        f"# Candidate {candidate.name!r} of a judgekit refinement: {candidate.description}.\n"
        "# Measured on the development part only; see refinement.md for its held-out figure if chosen.\n"
    )
    return head + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def _label_rows(
    table: LabelTable,
    experts: Sequence[str],
    judged: Mapping[ItemKey, JudgeCall],
    *,
    rater: str,
    fingerprint: str,
) -> str:
    """The experts' rows of ``table`` and the judge's verdicts as one label table (CSV)."""
    columns = ["item_id", "criterion", "case_id", "rater", "label", "fingerprint"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in table.rows:
        if row.rater in experts:
            writer.writerow([row.item.item_id, row.item.criterion, row.case_id, row.rater, row.label, ""])
    case_of = table.case_of()
    for item in sorted(judged):
        writer.writerow([item.item_id, item.criterion, case_of[item], rater, judged[item].label, fingerprint])
    return buffer.getvalue()


def refine(
    labels: LabelTable | str | os.PathLike[str],
    *,
    options: RefineOptions,
    out: str | os.PathLike[str],
) -> Refinement:
    """Refine the judge's rubric on the development part of a label table; measure it once on the test part.

    See the module documentation for the steps. Writes into ``out`` (created): each candidate rubric
    (``rubrics/<id>-<version>.yaml``), ``proposal.json`` (with ``propose_wording``), the test part's label
    table with the chosen judge's verdicts (``test-labels.csv``), its calibration report
    (``calibration.md``), ``refinement.json`` and ``refinement.md``; into the records folder the ledger's
    two lines and the calibration record (built from the test part alone).

    Args:
        labels: The label table (a file, or a table already read): the experts' labels of the trials.
        options: What to refine and how (:class:`RefineOptions`).
        out: The output folder.

    Returns:
        The refinement: its document and the test part's calibration.

    Raises:
        JudgekitError: An input mistake (exit code 2): no expert, an unknown expert, a share outside
            (0, 1), fewer than two cases, an unknown metric, a labelled trial missing from the runs. A
            guard's refusal (exit code 1): the test part is a development set already, or was already
            the test part of a refinement of this rubric (label fresh test cases). The judge failing
            (exit code 1): a request without a recorded reply in replay mode, an unusable proposal.
    """
    from judgekit.api.calibration import CalibrationOptions, _label_table, calibrate
    from judgekit.calibration import refine as steps
    from judgekit.calibration.guards import (
        check_few_shot_overlap,
        check_not_selection_set,
        check_test_unseen,
        load_usage,
        random_sample_only,
        record_refinement,
    )
    from judgekit.calibration.labels import parse_labels
    from judgekit.caseset import CaseSet, load_case_set
    from judgekit.io.atomic import write_atomic_making_folder
    from judgekit.settings import records_folder

    folder = Path(out)
    records = records_folder(options.records)
    experts = [e.strip() for e in options.experts if e.strip()]
    if not experts:
        raise JudgekitError("--experts: name the expert raters whose consensus the judge is refined on")
    if options.metric not in steps.REFINE_METRICS:
        raise JudgekitError(
            f"--metric must be one of {', '.join(steps.REFINE_METRICS)} (got {options.metric!r})"
        )
    if options.examples_per_criterion < 0:
        raise JudgekitError("--examples-per-criterion must be at least 0")
    table, name = _label_table(labels, None)
    table, _provenance = random_sample_only(table)
    if options.judge_rater in experts:
        raise JudgekitError(
            f"--judge-rater {options.judge_rater!r} is one of --experts: name the judge's rows otherwise"
        )
    unknown = [e for e in experts if e not in table.raters]
    if unknown:
        raise JudgekitError(
            f"--experts: {', '.join(unknown)} not in the label table (raters: {', '.join(table.raters)})"
        )
    expert_rows = _only_raters(table, experts)
    _check_items(expert_rows)
    grader = _grader(options.judge)
    lineage = grader.rubric.id
    split = steps.split_by_case(expert_rows, seed=options.seed, dev_share=options.dev_share)
    dev, test = steps.split_parts(expert_rows, split)
    usage = load_usage(records)
    check_not_selection_set(test, usage)  # test labels that chose a judge cannot measure one
    check_test_unseen(test, lineage, usage)  # one look at the test part per rubric lineage
    case_set = (
        options.cases
        if isinstance(options.cases, CaseSet)
        else load_case_set([Path(options.cases)], check_files=False, compile_rules=False)
    )
    trials = _trials(expert_rows, case_set, options.runs)
    written: list[WrittenFile] = []
    consensus = steps.consensus_of(dev, experts)
    current = _judge(grader, dev, trials)
    disagreements = steps.find_disagreements(dev, experts, current)
    excerpts = {
        item: _excerpt(trials[key][1])
        for item, case_id in dev.case_of().items()
        if (key := _trial_key(item.item_id, case_id)) is not None
    }
    examples = steps.few_shot_examples(
        disagreements,
        per_criterion=options.examples_per_criterion,
        excerpts=excerpts,
        verdicts=grader.rubric.verdict.options,
    )
    check_few_shot_overlap(list(enumerate(examples, start=1)), test)  # no example is a test item
    wording = _propose(grader, disagreements, folder, written) if options.propose_wording else None
    candidates = steps.build_candidates(grader.rubric, examples, wording=wording)
    judged = {"current": current}
    scores = []
    for candidate in candidates:
        if candidate.name not in judged:
            judged[candidate.name] = _judge(_with_rubric(grader, candidate), dev, trials)
        verdicts = {k: v.label for k, v in judged[candidate.name].items()}
        scores.append(steps.score_candidate(candidate, verdicts, consensus, metric=options.metric))
        if candidate.name != "current":
            path = folder / "rubrics" / f"{candidate.rubric.id}-{candidate.rubric.version}.yaml"
            write_atomic_making_folder(path, rubric_yaml(candidate), what="candidate rubric")
            written.append(WrittenFile(path=str(path), what="candidate_rubric"))
    best = steps.choose_candidate(scores)
    chosen = next(c for c in candidates if c.name == best.name)
    chosen_grader = _with_rubric(grader, chosen)
    held_out = _judge(chosen_grader, test, trials)  # the one look at the test part
    # recorded once the test verdicts exist (a judge that failed on the test part showed nothing), and
    # before any figure of them is computed or shown
    usage_lines = record_refinement(
        records,
        dev=dev,
        test=test,
        split=split,
        lineage=lineage,
        label_name=name,
        candidates=[f"{c.name}@{c.rubric.version}" for c in candidates],
        chosen=f"{chosen.name}@{chosen.rubric.version}",
    )
    written.append(WrittenFile(path=str(records / "label-usage.jsonl"), what="label_usage_ledger"))
    text = _label_rows(
        test, experts, held_out, rater=options.judge_rater, fingerprint=chosen_grader.fingerprint
    )
    test_path = write_atomic_making_folder(folder / "test-labels.csv", text, what="test label table")
    written.append(WrittenFile(path=str(test_path), what="test_labels"))
    test_table = parse_labels(text.encode("utf-8"), source=test_path)
    calibration = calibrate(
        test_table,
        options=CalibrationOptions(
            judge=options.judge_rater,
            experts=experts,
            fingerprint=chosen_grader.fingerprint,
            policy=options.policy,
            records=records,
            rubric=chosen.rubric,
            cases=case_set,
        ),
    )
    record_path = calibration.write_record(records)
    written.append(WrittenFile(path=str(record_path), what="calibration_record"))
    report_path = calibration.write_report(folder, "md")
    written.append(WrittenFile(path=str(report_path), what="calibration_report"))
    test_score = steps.score_candidate(
        chosen,
        {k: v.label for k, v in held_out.items()},
        steps.consensus_of(test, experts),
        metric=options.metric,
    )
    for kind in ("json", "md"):
        written.append(WrittenFile(path=str(folder / f"refinement.{kind}"), what=f"refinement_{kind}"))
    document = RefinementDocument(
        labels=name,
        lineage=lineage,
        split=split,
        dev_items=len(dev.items),
        test_items=len(test.items),
        disagreements=disagreements,
        candidates=tuple(scores),
        chosen=chosen.name,
        chosen_version=chosen.rubric.version,
        dev_figure=best,
        test_figure=HeldOutFigure(
            metric=options.metric,
            value=test_score.value,
            n_items=test_score.n_items,
            agreements=test_score.agreements,
            fingerprint=chosen_grader.fingerprint,
            trusted=calibration.trusted,
            record=str(record_path),
            report=str(report_path),
        ),
        usage=usage_lines,
        written=written,
    )
    result = Refinement(document=document, calibration=calibration)
    write_atomic_making_folder(
        folder / "refinement.json", document.model_dump_json(indent=1) + "\n", what="refinement document"
    )
    write_atomic_making_folder(folder / "refinement.md", result.render_markdown(), what="refinement report")
    return result
