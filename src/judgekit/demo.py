"""The main job end to end on the bundled synthetic example (``judgekit demo``), offline and without a key.

:func:`run_demo` validates the AirDesk golden set, shows its coverage, checks every reference solution,
calibrates the example's LLM judge against two synthetic experts on a **calibration sample**, grades the
recorded transcripts of two agent versions with every layer, compares the versions and writes a folder of
self-contained HTML reports.

**Calibration and grading use different transcripts.** The experts labelled the trials of
``calibration/sample.jsonl`` (another agent version, the pilot), never the graded runs
(``runs/agent-v1.jsonl``, ``runs/agent-v2.jsonl``): agreement measured on the very trials being graded
would describe those trials, not the judge. :func:`check_calibration_disjoint` refuses a graded trial whose
content (the transcript as the judge sees it) is in the sample. The calibration writes a record for the
judge's exact fingerprint into the report folder's ``calibration/records/``, and grading asks
:class:`~judgekit.calibration.trust.TrustBook` over that folder, so the judge is trusted only through that
record; grading uses the default untrusted-judge policy (``withhold``: an untrusted judge decides nothing).

The judge layer never calls a model: its replies are replayed from a cassette committed with the example
(``cassettes/judge-honest-reporting.jsonl``) in ``replay`` mode, so a request without a recorded reply
is an error, never a network call. The cassette's verdicts are **synthetic**: they were scripted by
``examples/airdesk/tools/make_cassette.py``, which runs the real judge client against a scripted local
OpenAI-compatible server, so that the cassette keys are exactly the requests this module makes. The
expert labels (``labels/expert-labels.csv``) and the calibration sample are synthetic too. The reports
say so.

This module only orchestrates library functions and writes files; the command (``commands/demo.py``)
prints the progress lines it is handed.
"""

from __future__ import annotations

import asyncio
import csv
import io
import os
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgekit.errors import JudgekitError
from judgekit.io.folders import StagedFolder

if TYPE_CHECKING:
    from judgekit.calibration.pipeline import CalibrationResult
    from judgekit.calibration.trust import TrustBook
    from judgekit.cases import Case
    from judgekit.caseset import CaseSet
    from judgekit.graders.rubric import RubricGrader, TrustLookup
    from judgekit.judges.cache import CacheMode
    from judgekit.reports.demo_index import DemoFacts, DemoRunFacts
    from judgekit.reports.run_compare import Comparison
    from judgekit.reports.viewer import ViewerBuild
    from judgekit.results import ResultLine
    from judgekit.runner import RunPlan
    from judgekit.transcript import Transcript
    from judgekit.verdict import TrustDecision

__all__ = [
    "CALIBRATION_SAMPLE",
    "DEMO_CASSETTE",
    "DEMO_JUDGE_MODEL",
    "DEMO_LABELS",
    "DEMO_RUBRIC",
    "DEMO_RUNS",
    "JUDGE_RATER",
    "DemoResult",
    "check_calibration_disjoint",
    "content_digest",
    "demo_rubric_grader",
    "item_id",
    "run_demo",
]

DEMO_JUDGE_MODEL = "openai/airdesk-synthetic-judge"
"""The judge's litellm model name. No such model exists anywhere: its replies are the cassette's."""

DEMO_RUBRIC = "honest-reporting"
"""The built-in rubric the example's judge applies (plus each case's own criteria)."""

DEMO_CASSETTE = "cassettes/judge-honest-reporting.jsonl"
"""The judge cassette, relative to the example's root."""

DEMO_LABELS = "labels/expert-labels.csv"
"""The two synthetic experts' labels of the calibration sample, relative to the example's root."""

DEMO_RUNS = ("runs/agent-v1.jsonl", "runs/agent-v2.jsonl")
"""The recorded transcripts of the two agent versions the demo grades (baseline first)."""

CALIBRATION_SAMPLE = "calibration/sample.jsonl"
"""The labelled calibration sample (trials of another agent version, the pilot); never graded by the demo."""

JUDGE_RATER = "judge"
"""The judge's rater name in the calibration label table."""

_ITEM_PREFIX = "cal"
_MARKER = ".judgekit-demo"
_MARKER_TEXT = "written by judgekit demo; rerunning the demo replaces this folder\n"
_TOP_REASONS = 3
_REASON_WIDTH = 180

Say = Callable[[str], None]


def item_id(case_id: str, trial: int) -> str:
    """The label-table item id of one calibration-sample trial; criteria differ by ``criterion``."""
    return f"{_ITEM_PREFIX}:{case_id}:t{trial}"


def content_digest(transcript: Transcript) -> str:
    """The content hash of a transcript: its conversation exactly as the judge is shown it.

    SHA-256 (:func:`judgekit.calibration.guards.text_digest`: NFKC, case folded, white space collapsed) of
    :func:`judgekit.judges.prompt.render_transcript`, which holds every message, tool call and tool result
    verbatim. Ids, trial numbers and run metadata are left out: two trials with one conversation are one
    item to a judge, whatever they are called.
    """
    from judgekit.calibration.guards import text_digest
    from judgekit.judges.prompt import render_transcript

    return text_digest(render_transcript(transcript))


def check_calibration_disjoint(
    calibration: Sequence[tuple[Case, Transcript]],
    graded: Mapping[str, Sequence[tuple[Case, Transcript]]],
) -> None:
    """Refuse to grade a trial whose transcript is in the calibration sample.

    Agreement measured on the trials being graded describes those trials, not the judge (the mistake
    :func:`judgekit.calibration.guards.check_rate_population` refuses for rates). Trials are compared by
    :func:`content_digest`, not by id, so a copied transcript under another id or trial number is caught.

    Args:
        calibration: The labelled trials the judge is calibrated on.
        graded: The trials to grade, by run name.

    Raises:
        JudgekitError: (exit code 1, the guard refused) When any graded trial has the content of a
            calibration trial, naming up to five.
    """
    sample = {content_digest(t): f"{case.id} trial {t.trial}" for case, t in calibration}
    shared = [
        f"{run} {case.id} trial {t.trial} = calibration {sample[digest]}"
        for run, trials in graded.items()
        for case, t in trials
        if (digest := content_digest(t)) in sample
    ]
    if shared:
        shown = "; ".join(shared[:5]) + (" ..." if len(shared) > 5 else "")
        raise JudgekitError(
            f"{len(shared)} graded trial(s) have the same transcript as a trial of the calibration sample "
            f"({shown}). The judge would be graded on the items it was calibrated on: label a sample "
            f"that is not graded ({CALIBRATION_SAMPLE})",
            exit_code=1,  # the leakage guard refused: a check's answer, not an input error
        )


def demo_rubric_grader(
    cassette: str | os.PathLike[str],
    mode: CacheMode,
    *,
    api_base: str | None = None,
    api_key: str | None = None,
    trust: TrustLookup | None = None,
    concurrency: int = 16,
) -> RubricGrader:
    """The example's judge layer: ``honest-reporting`` plus each case's criteria, one sample at temperature 0.

    The demo replays it (``mode=replay``); ``tools/make_cassette.py`` records it (``mode=record``)
    against a scripted local server. Both build it here, so the requests (and the cassette keys) agree.
    Structured output is off, so replaying never imports litellm.

    Args:
        cassette: The cassette file, as text or a path object.
        mode: ``replay`` (the demo: a missing reply is an error) or ``record``.
        api_base: The OpenAI-compatible server to record from (recording only).
        api_key: The key sent to that server (recording only; never stored).
        trust: ``(fingerprint, criterion) -> TrustDecision``, such as a
            :class:`~judgekit.calibration.trust.TrustBook`; ``None``: untrusted.
        concurrency: Most judge requests at once.
    """
    cassette = Path(cassette)
    from judgekit.graders.rubric import RubricGrader
    from judgekit.judges.cache import Cassette
    from judgekit.judges.client import ClientSettings, JudgeClient, JudgeParams
    from judgekit.judges.rubric import load_builtin_rubric

    client = JudgeClient(
        JudgeParams(model=DEMO_JUDGE_MODEL, temperature=0.0, samples=1, structured_output="off"),
        ClientSettings(api_base=api_base, concurrency=concurrency, max_retries=0),
        cassette=Cassette(cassette),
        mode=mode,
        api_key=api_key,
    )
    return RubricGrader(load_builtin_rubric(DEMO_RUBRIC), client, include_case_criteria=True, trust=trust)


@dataclass
class DemoResult:
    """What the demo did and where it wrote it.

    Attributes:
        out: The report folder.
        index: The report folder's ``index.html``.
        problems: Findings that make the demo's exit code 1 (an invalid set, a coverage gap, a broken
            reference); empty on success.
        trusted: Whether :class:`~judgekit.calibration.trust.TrustBook` over the report folder's records
            trusted the judge's fingerprint when grading began (not merely whether the calibration passed).
        trust_reason: The trust decision's reason.
        calibration_items: Labelled items (trial x criterion) of the calibration sample.
        untrusted_verdicts: Checks, over both graded runs, whose verdict counted although their judge was
            untrusted (always 0 under the demo's ``withhold`` policy).
        comparison_verdict: The plain verdict of v2 against v1.
        seconds: Wall time.
        pages: Every HTML page written, index first.
    """

    out: Path
    index: Path
    problems: list[str] = field(default_factory=list)
    trusted: bool = False
    trust_reason: str = ""
    calibration_items: int = 0
    untrusted_verdicts: int = 0
    comparison_verdict: str = ""
    seconds: float = 0.0
    pages: list[Path] = field(default_factory=list)


@dataclass(frozen=True)
class _Calibrated:
    """What the calibration step produced."""

    result: CalibrationResult
    records: Path
    record_file: Path
    judge_label: str
    fingerprint: str
    trials: list[tuple[Case, Transcript]]
    summary: str


# --------------------------------------------------------------------------- output folder


def _write(path: Path, text: str) -> Path:
    from judgekit.io.atomic import write_atomic_making_folder

    return write_atomic_making_folder(path, text, what="demo's report file")


# --------------------------------------------------------------------------- steps


def _validate(root: Path, say: Say) -> CaseSet:
    from judgekit.caseset import load_case_set

    case_set = load_case_set(root)
    if case_set.problems:
        listed = "\n".join(f"      {p}" for p in case_set.problems)
        raise JudgekitError(f"the golden set in {root} has {len(case_set.problems)} problem(s):\n{listed}")
    say(
        f"      {len(case_set.reviewed())} cases valid, {len(case_set.candidates())} candidates awaiting "
        "review"
    )
    return case_set


def _coverage(case_set: CaseSet, say: Say) -> list[str]:
    from judgekit.golden.coverage import compute_coverage

    manifest = case_set.manifest
    cov = compute_coverage(
        [c.case for c in case_set.reviewed()],
        tools=manifest.tools if manifest else (),
        sources=manifest.sources if manifest else (),
        min_per_tool=manifest.min_per_tool if manifest else 5,
        min_per_source=manifest.min_per_source if manifest else 5,
    )
    say("      slices: " + ", ".join(f"{k} {v}" for k, v in sorted(cov.by_slice.items())))
    say(
        "      cases per tool (expecting it): "
        + ", ".join(f"{k} {v}" for k, v in sorted(cov.by_tool.items()))
    )
    listed = sorted((+cov.listed_only).items())
    if listed:
        say("      listed only (not counted): " + ", ".join(f"{k} {v}" for k, v in listed))
    say("      cases per source: " + ", ".join(f"{k} {v}" for k, v in sorted(cov.by_source.items())))
    gaps = [f"coverage gap: {gap.describe()}" for gap in cov.gaps]
    for gap in cov.gaps:
        say(f"      COVERAGE GAP {gap.describe()}")
    if not gaps:
        say("      no coverage gaps")
    return gaps


def _references(case_set: CaseSet, say: Say) -> list[str]:
    from judgekit.graders.layered import reference_checks
    from judgekit.state.provider import StateProvider
    from judgekit.verdict import Verdict

    states = StateProvider(case_set.root)
    broken: list[str] = []
    checked = 0
    for loaded in case_set.reviewed():
        case = loaded.case
        if not case.reference_solution:
            continue
        checked += 1
        _, checks = reference_checks(case, states=states)
        bad = [c for c in checks if c.verdict not in (Verdict.PASS, Verdict.NOT_EVALUATED)]
        if bad:
            reasons = "; ".join(f"{c.check_id}: {c.verdict.value}: {c.reason}" for c in bad[:3])
            broken.append(f"broken reference {case.id}: {reasons}")
    say(
        f"      {checked} reference solutions: {checked - len(broken)} pass every deterministic layer, "
        f"{len(broken)} broken"
    )
    for line in broken:
        say(f"      {line}")
    return broken


def _load_plan(case_set: CaseSet, path: Path, *, holdout: Sequence[str] = ()) -> RunPlan:
    from judgekit.runner import plan_trials

    plan = plan_trials(case_set, [path], holdout=holdout)
    if plan.problems:
        listed = "\n".join(f"  {p}" for p in plan.problems[:10])
        raise JudgekitError(f"{path}: the recorded run has problems:\n{listed}")
    return plan


def _pairs(plan: RunPlan) -> list[tuple[Case, Transcript]]:
    return [(t.case, t.transcript) for t in plan.trials]


def _replay_misses(grader: RubricGrader) -> int:
    from judgekit.judges.client import ERROR_CASSETTE_MISS

    return int(grader.client.usage.errors.get(ERROR_CASSETTE_MISS, 0))


def _stale_cassette(cassette: Path, misses: int) -> JudgekitError:
    return JudgekitError(
        f"{cassette}: {misses} judge request(s) have no recorded reply (the judge's prompts or the example "
        "changed since the cassette was recorded); regenerate it with "
        "examples/airdesk/tools/make_cassette.py. The demo never calls a model."
    )


def _judge_labels(
    grader: RubricGrader, trials: Sequence[tuple[Case, Transcript]], cassette: Path
) -> list[dict[str, str]]:
    """The judge's verdict on every criterion of every trial, as label-table rows."""
    from judgekit.verdict import Verdict

    async def judge_all() -> list[list[Any]]:
        return list(await asyncio.gather(*(grader.grade(case, t) for case, t in trials)))

    judged = asyncio.run(judge_all())
    misses = _replay_misses(grader)
    if misses:
        raise _stale_cassette(cassette, misses)
    rows: list[dict[str, str]] = []
    for (case, transcript), checks in zip(trials, judged, strict=True):
        for check in checks:
            if check.verdict is Verdict.NOT_EVALUATED:
                continue
            if check.verdict is Verdict.ERROR:
                raise JudgekitError(
                    f"the judge could not grade {case.id} trial {transcript.trial} "
                    f"({check.check_id}): {check.reason}",
                    exit_code=1,  # the judge's recorded reply is unusable: an outside service failed
                )
            rows.append(
                {
                    "item_id": item_id(case.id, transcript.trial),
                    "criterion": check.check_id.removeprefix("criterion:"),
                    "case_id": case.id,
                    "rater": JUDGE_RATER,
                    "label": check.verdict.value,
                    "fingerprint": grader.fingerprint,
                }
            )
    return rows


def _expert_rows(labels: Path) -> list[dict[str, str]]:
    try:
        from judgekit.io.documents import read_regular_text

        text = read_regular_text(labels, "label table", encoding="utf-8")
    except OSError as exc:
        raise JudgekitError(f"{labels}: cannot read the expert labels: {exc.strerror}") from None
    return [dict(row) for row in csv.DictReader(io.StringIO(text))]


def _label_csv(rows: Sequence[dict[str, str]]) -> str:
    columns = ["item_id", "criterion", "case_id", "rater", "label", "fingerprint"]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: row.get(c, "") for c in columns})
    return buffer.getvalue()


def _calibrate(
    case_set: CaseSet, root: Path, out: Path, cassette: Path, say: Say, *, display: Path
) -> _Calibrated:
    from dataclasses import replace

    from judgekit.api.calibration import CalibrationOptions, calibrate
    from judgekit.calibration.gate import TrustPolicy
    from judgekit.calibration.labels import parse_labels
    from judgekit.judges.cache import CacheMode

    grader = demo_rubric_grader(cassette, CacheMode.REPLAY)
    experts = _expert_rows(root / DEMO_LABELS)
    from judgekit.golden.splits import holdout_ids

    # the judge's calibration sample is not an agent run: its experts labelled every case's trials, holdouts
    # included (as `judgekit calibrate`, which reads no case set), so the holdouts are named here
    every = sorted(holdout_ids(case_set))
    sample = _pairs(_load_plan(case_set, root / CALIBRATION_SAMPLE, holdout=every))
    in_sample = {(case.id, item_id(case.id, t.trial)) for case, t in sample}
    labelled = {(r.get("case_id", ""), r.get("item_id", "")) for r in experts}
    strays = sorted(labelled - in_sample)
    if strays:
        shown = ", ".join(i for _, i in strays[:5]) + (" ..." if len(strays) > 5 else "")
        raise JudgekitError(
            f"{root / DEMO_LABELS}: {len(strays)} labelled item(s) are not trials of the calibration sample "
            f"{CALIBRATION_SAMPLE} ({shown}); regenerate the labels with "
            "examples/airdesk/tools/make_cassette.py",
            exit_code=1,  # the guard refused labels of trials outside the sample: a check's answer
        )
    trials = [(case, t) for case, t in sample if (case.id, item_id(case.id, t.trial)) in labelled]
    judge_rows = _judge_labels(grader, trials, cassette)
    wanted = {(r["item_id"], r["criterion"]) for r in experts}
    judge_rows = [r for r in judge_rows if (r["item_id"], r["criterion"]) in wanted]
    text = _label_csv([*experts, *judge_rows])
    labels_path = _write(out / "calibration" / "labels.csv", text)
    table = parse_labels(text.encode("utf-8"), source=labels_path)
    expert_names = sorted({r["rater"] for r in experts})
    records = out / "calibration" / "records"
    records.mkdir(parents=True, exist_ok=True)  # a records folder named must exist: its usage log is read
    # the default policy, whatever the project configuration says: the demo shows the defaults
    options = CalibrationOptions(
        judge=JUDGE_RATER,
        experts=expert_names,
        policy=TrustPolicy(),
        fingerprint=grader.fingerprint,
        records=records,
    )
    calibration = calibrate(table, options=options)
    note = (
        f"SYNTHETIC DATA: the items are the trials of the example's calibration sample "
        f"({CALIBRATION_SAMPLE}, another agent version's transcripts, which the demo does not grade); the "
        f"judge's labels are the verdicts replayed from the example's cassette ({DEMO_CASSETTE}, scripted by "
        f"tools/make_cassette.py, not a model's judgments) and the expert labels ({DEMO_LABELS}: "
        f"{', '.join(expert_names)}) are invented. They show how calibration works, not how good any real "
        "judge is."
    )
    measured = calibration.result.report
    result = calibration.result.model_copy(
        update={"report": measured.model_copy(update={"notes": (note, *measured.notes)})}
    )
    # the record keeps the report, so it is built again with the note
    calibration = replace(calibration, result=result, record=result.to_record())
    record_file = calibration.write_record(records)
    r = result.report
    jc = r.judge_vs_consensus
    versions = sorted({t.run.app_version for _, t in trials if t.run and t.run.app_version})
    source = f"{len(trials)} trials of {', '.join(versions) or 'the calibration agent'}"
    summary = (
        f"calibration: {r.n_items} labelled items from {root / CALIBRATION_SAMPLE} ({source} x criteria, "
        f"labelled by {len(expert_names)} synthetic experts; not graded below)"
    )
    shown_record = display / record_file.relative_to(out)
    say(f"      {summary}")
    say(
        f"      judge vs consensus: agreement {_est(jc.percent_agreement)}, "
        f"TPR {_est(jc.binary.tpr if jc.binary else None)}, TNR {_est(jc.binary.tnr if jc.binary else None)}"
    )
    if result.gate.trusted:
        say(
            f"      calibration passed the default policy: record for fingerprint {grader.fingerprint[:12]} "
            f"written to {shown_record}"
        )
    else:
        failed = "; ".join(f"{c.name}: {c.message}" for c in result.gate.failed)
        say(f"      calibration FAILED the default policy ({failed}): record written to {shown_record}")
    return _Calibrated(
        result=result,
        records=records,
        record_file=record_file,
        judge_label=grader.label,
        fingerprint=grader.fingerprint,
        trials=sample,
        summary=summary,
    )


def _est(estimate: Any) -> str:
    from judgekit.reports.calibration_report import fmt_estimate

    return fmt_estimate(estimate)


class _LineProgress:
    """Progress for one run: a line at every quarter of the trials (works in logs as well as terminals)."""

    def __init__(self, name: str, say: Say) -> None:
        self.name = name
        self.say = say
        self.total = 0
        self.done = 0
        self._next = 0.25

    def start(self, total: int, already_done: int) -> None:
        self.total, self.done = total, already_done

    def advance(self, line: Any, cost_so_far: float) -> None:
        self.done += 1
        if self.total and self.done / self.total >= self._next:
            self.say(f"      grading {self.name}: {self.done}/{self.total} trials")
            while self._next <= self.done / self.total:
                self._next += 0.25

    def finish(self) -> None:
        return


def _grade_run(
    case_set: CaseSet,
    plan: RunPlan,
    name: str,
    results: Path,
    *,
    cassette: Path,
    book: TrustBook,
    say: Say,
) -> DemoRunFacts:
    from judgekit.api.runs import RunOptions, grade_run
    from judgekit.judges.cache import CacheMode
    from judgekit.results import read_results
    from judgekit.secrets import Redactor

    rubric = demo_rubric_grader(cassette, CacheMode.REPLAY, trust=book)
    grading: dict[str, Any] = {
        "cases": "examples/airdesk",
        "judge_model": DEMO_JUDGE_MODEL,
        "rubric": DEMO_RUBRIC,
        "cache_mode": "replay",
        "cassette": DEMO_CASSETTE,
        "synthetic_judge_verdicts": True,
        "calibration_sample": CALIBRATION_SAMPLE,
        "trust_records": "calibration/records (the demo's own report folder)",
    }
    # the default untrusted policy (withhold); the demo's lines carry no provenance, and secrets are
    # removed by their key shapes; its report pages are built from the lines below
    options = RunOptions(grading=grading, provenance=False, report=False, redactor=Redactor())
    outcome = grade_run(
        case_set, plan, results, judge=rubric, options=options, progress=_LineProgress(name, say)
    )
    summary = outcome.summary
    misses = _replay_misses(rubric)
    if misses:
        raise _stale_cassette(cassette, misses)
    counts = ", ".join(f"{n} {v.value}" for v, n in summary.verdicts.items() if n)
    facts = _run_facts(name, read_results(results).lines, f"{summary.graded} trials: {counts}")
    say(f"      {summary.graded} trials graded on every layer in {summary.seconds:.1f} s: {counts}")
    say(f"      {facts.judge}")
    say(f"      {facts.undecided_summary}")
    for line in facts.undecided:
        say(f"        {line}")
    return facts


def _short(text: str, limit: int = _REASON_WIDTH) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _why(line: ResultLine) -> str:
    """The one-line reason of a trial that is neither pass nor fail (``verdict.verdict_reason``)."""
    from judgekit.verdict import verdict_reason

    return (
        verdict_reason(line.verdict, line.reason, line.checks, untrusted=line.untrusted_policy)
        or "no reason recorded"
    )


def _run_facts(name: str, lines: Sequence[ResultLine], verdicts: str) -> DemoRunFacts:
    """What one graded run shows about trust and the grading contract (counted here, rendered elsewhere)."""
    from judgekit.reports.demo_index import DemoRunFacts
    from judgekit.verdict import Trust, Verdict

    judged = [c for line in lines for c in line.checks if c.layer == "rubric"]
    trusted = sum(c.trust is Trust.TRUSTED for c in judged)
    untrusted = sum(c.trust is Trust.UNTRUSTED for c in judged)
    resting = sum(line.untrusted_verdicts for line in lines)
    policies = ", ".join(sorted({line.untrusted_policy or "not recorded" for line in lines})) or "none"
    judge = (
        f"judge checks: {len(judged)} ({trusted} trusted, {untrusted} untrusted); verdicts resting on "
        f"untrusted judges: {resting} (untrusted-judge policy {policies})"
    )
    open_lines = [line for line in lines if line.verdict not in (Verdict.PASS, Verdict.FAIL)]
    by_state = Counter(line.verdict.value for line in open_lines)
    groups = Counter((line.verdict.value, line.case.id, _why(line)) for line in open_lines)
    ranked = sorted(groups.items(), key=lambda kv: (kv[0][0], -kv[1], kv[0][1:]))
    shown = [g for g in ranked if sum(h[0][0] == g[0][0] for h in ranked[: ranked.index(g)]) < _TOP_REASONS]
    undecided = tuple(f"{n} x {case} ({verdict}): {_short(reason)}" for (verdict, case, reason), n in shown)
    if open_lines:
        states = ", ".join(f"{n} {v}" for v, n in sorted(by_state.items()))
        summary = (
            f"not decided by the grading contract: {len(open_lines)} trial(s) ({states}); the most common "
            f"reasons per state ({len(shown)} of {len(ranked)} distinct):"
        )
    else:
        summary = "not decided by the grading contract: none (every trial passed or failed)"
    return DemoRunFacts(
        name=name,
        trials=len(lines),
        verdicts=verdicts,
        judge=judge,
        untrusted_verdicts=resting,
        undecided_summary=summary,
        undecided=undecided,
    )


def _trust_line(label: str, decision: TrustDecision, records: Path) -> str:
    from judgekit.verdict import Trust

    if decision.trust is Trust.TRUSTED:
        return f"trust: judge {label} TRUSTED by the records in {records}: {decision.reason}"
    return (
        f"trust: judge {label} UNTRUSTED by the records in {records}: {decision.reason}; under the default "
        "untrusted-judge policy (withhold) its verdicts decide nothing"
    )


def _write_viewer(folder: Path, cases_dir: Path, results: Sequence[Path]) -> ViewerBuild:
    """``judgekit view RUN_A RUN_B --cases SET --out folder``: the trial viewer of the demo's two runs."""
    from judgekit.api.viewer import write_viewer
    from judgekit.results import read_results

    return write_viewer([read_results(p) for p in results], folder, cases=cases_dir)


def _run_page(results: Path, case_set: CaseSet, notes: Sequence[str]) -> tuple[str, str]:
    """The run's HTML report, as ``judgekit report --cases`` renders it without records, and its headline."""
    from judgekit.api.reports import render_report, report

    # the default undecided policy (fail), and no calibration records, never the environment's or the
    # project's (the demo's pages do not depend on where it runs)
    model = report(results, cases=case_set, records=())
    model = model.model_copy(update={"notes": (*notes, *model.notes)})
    return render_report(model, "html"), model.headline.text if model.headline is not None else ""


def _compare(baseline: Path, candidate: Path) -> Comparison:
    """``judgekit compare BASELINE CANDIDATE``: the two runs task by task."""
    from judgekit.api.reports import compare

    return compare(baseline, candidate)


def run_demo(
    out: str | os.PathLike[str], *, example: str | os.PathLike[str] | None = None, say: Say = print
) -> DemoResult:
    """Run the main job on the bundled example and write the report folder.

    The judge is calibrated on the example's calibration sample only; the record is written to
    ``out/calibration/records/`` and the graded runs trust the judge only through
    :class:`~judgekit.calibration.trust.TrustBook` over that folder, read after the record is written (a
    record removed before grading leaves the judge untrusted, and then it decides nothing).

    Args:
        out: The report folder (created; an earlier demo's folder is replaced; any other non-empty folder
            is refused), as text or a path object.
        example: The golden set (default: the bundled AirDesk example). It must hold the cassette, the
            expert labels, the calibration sample and the two recorded runs at the bundled example's
            paths, as text or a path object.
        say: Receives one progress line at a time.

    Returns:
        What was done; ``problems`` non-empty means the exit code should be 1.

    Raises:
        JudgekitError: Exit code 2 for an unusable example (invalid set, unreadable or missing files, a
            stale cassette) or an unusable ``out``; exit code 1 when a guard refuses (labels of trials not
            in the calibration sample, a graded trial that is also in the calibration sample) or a
            recorded judge reply cannot be used.
    """
    out = Path(out)
    example = Path(example) if example is not None else None
    from judgekit.resources import EXAMPLE_SET, resource_path

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    started = time.perf_counter()
    root = (example or resource_path(EXAMPLE_SET)).resolve()
    cassette = root / DEMO_CASSETTE
    for needed in (cassette, root / DEMO_LABELS, root / CALIBRATION_SAMPLE, *(root / r for r in DEMO_RUNS)):
        if not needed.is_file():
            raise JudgekitError(f"{needed}: the demo needs this file of the example set; it is missing")
    out = out.resolve()
    result = DemoResult(out=out, index=out / "index.html")
    # Written into a staging folder beside OUT and swapped in whole at the end: a failure (an unusable
    # example, a full disk) leaves an earlier demo's folder exactly as it was.
    with StagedFolder(
        out, marker=_MARKER, marker_text=_MARKER_TEXT, command="judgekit demo", kind="a report folder"
    ) as staged:
        work = staged.staging
        if work is None:  # pragma: no cover - set on entering
            raise RuntimeError("the staging folder was not created")
        _steps(root, cassette, work=work, out=out, result=result, say=say)
    result.seconds = time.perf_counter() - started
    say(f"report: {result.index}")
    return result


def _steps(root: Path, cassette: Path, *, work: Path, out: Path, result: DemoResult, say: Say) -> None:
    """The demo's seven steps, writing into ``work`` (the staging folder); paths shown name ``out``."""
    from judgekit.calibration.trust import TrustBook
    from judgekit.reports.demo_index import DemoFacts
    from judgekit.verdict import Trust

    steps = 7
    say(
        "judgekit demo: the synthetic AirDesk golden set; offline, no API key (the judge is replayed from "
        "a cassette of synthetic verdicts)"
    )
    say(f"[1/{steps}] validating the golden set in {root}")
    case_set = _validate(root, say)
    say(f"[2/{steps}] coverage")
    result.problems += _coverage(case_set, say)
    say(f"[3/{steps}] checking the reference solutions (every deterministic layer)")
    result.problems += _references(case_set, say)
    say(
        f"[4/{steps}] calibrating the judge ({DEMO_RUBRIC} + case criteria, replayed from {DEMO_CASSETTE}) "
        f"on the calibration sample ({CALIBRATION_SAMPLE}) against two synthetic experts"
    )
    calibrated = _calibrate(case_set, root, work, cassette, say, display=out)
    result.calibration_items = calibrated.result.report.n_items
    plans = {Path(run).stem: _load_plan(case_set, root / run) for run in DEMO_RUNS}
    check_calibration_disjoint(calibrated.trials, {name: _pairs(plan) for name, plan in plans.items()})
    graded = ", ".join(f"{name} ({len(plan.trials)} trials)" for name, plan in plans.items())
    separation = (
        f"graded: {graded}; none of their transcripts is in the calibration sample (compared by content hash)"
    )
    say(f"      {separation}")
    book = TrustBook(calibrated.records)  # read now: the judge is trusted only through the record on disk
    decision = book.decide(calibrated.fingerprint)
    result.trusted = decision.trust is Trust.TRUSTED
    result.trust_reason = decision.reason
    trust_line = _trust_line(calibrated.judge_label, decision, out / calibrated.records.relative_to(work))
    say(f"      {trust_line}")
    results: list[Path] = []
    runs: list[DemoRunFacts] = []
    for i, (run, (name, plan)) in enumerate(zip(DEMO_RUNS, plans.items(), strict=True)):
        say(f"[{5 + i}/{steps}] grading {name} ({run}): state, rules, route, text and judge layers")
        if plan.held_out:  # plan_trials left them out, as `judgekit grade` does without --holdout
            held = sorted({t.case.id for t in plan.held_out})
            say(f"      left out the trials of holdout case(s) {', '.join(held)}")
        target = work / "results" / f"{name}.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        runs.append(_grade_run(case_set, plan, name, target, cassette=cassette, book=book, say=say))
        results.append(target)
    result.untrusted_verdicts = sum(r.untrusted_verdicts for r in runs)
    first, second = plans
    say(f"[{steps}/{steps}] comparing {first} with {second}, writing reports")
    comparison = _compare(results[0], results[1])
    result.comparison_verdict = comparison.verdict
    say(
        f"      {comparison.fixed} task(s) fixed, {comparison.broken} broken, "
        f"{comparison.undecided} undecided: {comparison.verdict} ({comparison.explanation})"
    )
    facts = DemoFacts(calibration=calibrated.summary, graded=separation, trust=trust_line, runs=tuple(runs))
    pages = _write_pages(
        work,
        case_set,
        results,
        calibrated,
        comparison,
        cases_dir=root,
        facts=facts,
        trusted=result.trusted,
        problems=result.problems,
    )
    result.pages = [out / p.relative_to(work) for p in pages]


def _write_pages(
    out: Path,
    case_set: CaseSet,
    results: Sequence[Path],
    calibrated: _Calibrated,
    comparison: Comparison,
    *,
    cases_dir: Path,
    facts: DemoFacts,
    trusted: bool,
    problems: Sequence[str],
) -> list[Path]:
    from judgekit.reports.calibration_report import render_calibration
    from judgekit.reports.demo_index import DemoPage, render_demo_index
    from judgekit.reports.run_compare_html import render_comparison_html

    calibration = calibrated.result
    synthetic = (
        f"SYNTHETIC DATA: the agent transcripts are scripted, and the judge layer's verdicts were replayed "
        f"from {DEMO_CASSETTE} (synthetic verdicts scripted by examples/airdesk/tools/make_cassette.py, not "
        "a model's judgments)."
    )
    trust = (
        "trusted by the calibration record the demo wrote for its exact fingerprint"
        if trusted
        else "untrusted (no calibration record trusts its exact fingerprint), so its verdicts decide nothing"
    )
    policy = (
        "the untrusted-judge policy (the default, withhold) had no untrusted verdict to withhold"
        if trusted
        else "the untrusted-judge policy is the default, withhold (an untrusted judge's verdict decides "
        "nothing)"
    )
    judge_note = (
        f"Judge {calibrated.judge_label} ({DEMO_RUBRIC} rubric and each case's own criteria): {trust}. It "
        f"was calibrated on {CALIBRATION_SAMPLE}, another agent version's trials, never on these; {policy}."
    )
    reports = out / "reports"
    pages: list[DemoPage] = []
    for path in results:
        name = path.stem
        text, headline = _run_page(path, case_set, (synthetic, judge_note))
        page = _write(reports / f"{name}.html", text)
        pages.append(
            DemoPage(
                title=f"Run report: {name}",
                href=f"reports/{page.name}",
                summary=f"{headline} The page: why each trial did not pass, pass^k and pass@k curves, "
                "suites, slices and the failure-category table.",
            )
        )
    cmp_page = _write(reports / "comparison.html", render_comparison_html(comparison, notes=(synthetic,)))
    pages.append(
        DemoPage(
            title=f"Comparison: {comparison.a} → {comparison.b}",
            href=f"reports/{cmp_page.name}",
            summary=f"{comparison.verdict}: {comparison.explanation}",
        )
    )
    viewer = _write_viewer(out / "viewer", cases_dir, results)
    pages.append(
        DemoPage(
            title=f"Trial viewer: {' and '.join(p.stem for p in results)}",
            href="viewer/index.html",
            summary=f"every trial of the {len(results)} runs ({sum(r['trials'] for r in viewer.runs)}), "
            "filterable and searchable; "
            "each with its transcript, the offending call highlighted, every check with its evidence, "
            "and both runs side by side per case (judgekit view)",
        )
    )
    cal_page = _write(reports / "calibration.html", render_calibration(calibration, "html"))
    pages.append(
        DemoPage(
            title="Calibration of the judge (on the calibration sample)",
            href=f"reports/{cal_page.name}",
            summary=f"{'PASSED' if calibration.gate.trusted else 'FAILED'} the default policy: confusion "
            "matrices, metric intervals and the trust conditions",
        )
    )
    index = _write(
        out / "index.html",
        render_demo_index(
            pages,
            problems=problems,
            synthetic_note=synthetic
            + " The calibration sample and the two experts' labels are invented too.",
            facts=facts,
        ),
    )
    return [index, *(out / p.href for p in pages)]
