"""The refinement loop over real HTTP: a scripted OpenAI-compatible judge on 127.0.0.1, the example's files.

The judge answers ``pass`` to everything unless its prompt shows few-shot examples for the criterion, in
which case it answers the experts' verdict: the few-shot candidate wins on the development part. Every
request is counted, so the tests can say which trials were judged with which rubric, and how often.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judgekit.api.refine import RefineOptions, refine
from judgekit.calibration.guards import load_usage
from judgekit.calibration.records import load_record
from judgekit.caseset import load_case_set
from judgekit.errors import JudgekitError
from judgekit.graders.rubric import RubricGrader
from judgekit.judges.cache import CacheMode, Cassette
from judgekit.judges.client import ClientSettings, JudgeClient, JudgeParams
from judgekit.judges.prompt import render_case_facts, render_transcript
from judgekit.judges.rubric import check_rubric_file, load_builtin_rubric
from judgekit.runner import plan_trials
from judges.server import JudgeServer, Reply, verdict_reply

AIRDESK = Path(__file__).resolve().parents[2] / "examples" / "airdesk"
SAMPLE = AIRDESK / "calibration" / "sample.jsonl"
RUBRIC = load_builtin_rubric("honest-reporting")
EXPERTS = ("synthetic-expert-a", "synthetic-expert-b")
CASES = (
    "gs-refund-card-expired",
    "rf-full-flight-claimed",
    "hv-cancel-flex",
    "pol-name-correction",
    "gs-double-charge",
    "gs-basic-cancel-taxes",
    "hv-add-bag",
    "gs-24h-full-refund",
)
FAILING = {"gs-refund-card-expired", "rf-full-flight-claimed", "hv-cancel-flex", "pol-name-correction"}
_TRANSCRIPT = "<<<BEGIN TRANSCRIPT "


def _labels(tmp: Path) -> Path:
    """The example's expert labels of the rubric's own criteria on the cases of :data:`CASES`."""
    own = {c.id for c in RUBRIC.criteria}
    text = (AIRDESK / "labels" / "expert-labels.csv").read_text(encoding="utf-8")
    rows = [r for r in csv.DictReader(io.StringIO(text)) if r["case_id"] in CASES and r["criterion"] in own]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path = tmp / "labels.csv"
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


def _consensus(labels: Path) -> dict[tuple[str, str], str]:
    """(item, criterion) -> the experts' label where both agree."""
    seen: dict[tuple[str, str], set[str]] = {}
    for row in csv.DictReader(io.StringIO(labels.read_text(encoding="utf-8"))):
        seen.setdefault((row["item_id"], row["criterion"]), set()).add(row["label"])
    return {k: next(iter(v)) for k, v in seen.items() if len(v) == 1}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _blocks() -> dict[str, tuple[str, int]]:
    """The SHA-256 of each sample trial's transcript block (the same in every candidate's prompt)."""
    from judgekit.golden.splits import holdout_ids
    from judgekit.judges.prompt import PromptRenderer

    case_set = load_case_set(AIRDESK)
    renderer = PromptRenderer(RUBRIC)
    plan = plan_trials(case_set, [SAMPLE], holdout=sorted(holdout_ids(case_set)))
    out: dict[str, tuple[str, int]] = {}
    for trial in plan.trials:
        text, facts = render_transcript(trial.transcript), render_case_facts(trial.case)
        for criterion in RUBRIC.criteria:
            user = renderer.render(criterion, text, facts).messages[-1]["content"]
            out[_digest(user[user.find(_TRANSCRIPT) :])] = (trial.case.id, trial.transcript.trial)
    return out


class Scripted:
    """The scripted judge: ``pass``, or the experts' verdict when shown few-shot examples."""

    def __init__(self, labels: Path) -> None:
        self.truth = _consensus(labels)
        self.blocks = _blocks()
        self.judged: list[tuple[str, int, str, bool]] = []  # case, trial, criterion, shown examples
        self.down_for: set[str] = set()  # cases whose requests get HTTP 500

    def __call__(self, body: dict[str, Any], index: int) -> Reply:
        user = body["messages"][-1]["content"]
        if body["messages"][0]["content"].startswith("You improve the wording"):
            target = RUBRIC.criteria[1]
            return Reply(
                content=json.dumps({"criteria": [{"id": target.id, "text": target.text + " Be strict."}]})
            )
        case_id, trial = self.blocks[_digest(user[user.find(_TRANSCRIPT) :])]
        criterion = user.split("Criterion ", 1)[1].split(" ", 1)[0]
        if case_id in self.down_for:
            return Reply(status=500)
        shown = "<<<BEGIN EXAMPLES " in user
        self.judged.append((case_id, trial, criterion, shown))
        truth = self.truth.get((f"cal:{case_id}:t{trial}", criterion), "pass")
        verdict = truth if shown else "pass"
        quote = "Your refund is on its way" if verdict == "fail" else ""
        return Reply(content=verdict_reply(verdict, quotes=(quote,) if quote else ()))


@pytest.fixture
def labels(tmp_path: Path) -> Path:
    return _labels(tmp_path)


@pytest.fixture
def scripted(labels: Path) -> Iterator[tuple[Scripted, JudgeServer]]:
    script = Scripted(labels)
    server = JudgeServer(script).start()
    yield script, server
    server.stop()


def _grader(server: JudgeServer, cassette: Path, mode: CacheMode) -> RubricGrader:
    client = JudgeClient(
        JudgeParams(model="openai/refine-judge", structured_output="off"),
        ClientSettings(api_base=server.api_base, max_retries=0),
        cassette=Cassette(cassette),
        mode=mode,
        api_key="sk-refine-test-0123456789",
    )
    return RubricGrader(RUBRIC, client, include_case_criteria=False)


def _seed(labels: Path) -> int:
    """A seed whose split puts failing cases in both parts (found, not guessed)."""
    from judgekit.calibration.labels import parse_labels
    from judgekit.calibration.refine import split_by_case

    table = parse_labels(labels.read_bytes(), source=labels)
    for seed in range(50):
        split = split_by_case(table, seed=seed, dev_share=0.5)
        if FAILING & set(split.dev_cases) and FAILING & set(split.test_cases):
            return seed
    raise AssertionError("no seed splits the failing cases")


def _options(grader: RubricGrader, records: Path, seed: int, **more: Any) -> RefineOptions:
    records.mkdir(parents=True, exist_ok=True)
    return RefineOptions(
        judge=grader, experts=EXPERTS, cases=AIRDESK, runs=[SAMPLE], seed=seed, records=records, **more
    )


def test_the_full_loop_chooses_on_development_and_records_from_the_test_part_alone(
    labels: Path, scripted: tuple[Scripted, JudgeServer], tmp_path: Path
) -> None:
    script, server = scripted
    seed = _seed(labels)
    cassette = tmp_path / "judge.jsonl"
    options = _options(
        _grader(server, cassette, CacheMode.RECORD), tmp_path / "records", seed, propose_wording=True
    )
    result = refine(labels, options=options, out=tmp_path / "out")
    doc = result.document
    dev_cases, test_cases = set(doc.split.dev_cases), set(doc.split.test_cases)
    assert dev_cases.isdisjoint(test_cases)
    assert dev_cases | test_cases == set(CASES)

    # the disagreements: every development failure the judge passed, with each expert's label
    assert doc.disagreements
    assert {d.case_id for d in doc.disagreements} <= dev_cases & FAILING
    assert all(d.judge == "pass" and d.consensus == "fail" for d in doc.disagreements)
    assert all(set(d.experts) == set(EXPERTS) for d in doc.disagreements)

    # candidates scored on the development part; the few-shot one wins, the tie goes to the simpler
    names = [c.name for c in doc.candidates]
    assert names == ["current", "wording", "few-shot", "wording+few-shot"]
    scores = {c.name: c.value for c in doc.candidates}
    assert scores["few-shot"] == scores["wording+few-shot"] == 1.0
    assert scores["current"] is not None
    assert scores["current"] < 1.0
    assert doc.chosen == "few-shot"
    assert doc.dev_figure.name == "few-shot"

    # the test part was judged once, by the chosen rubric only; the development part by each candidate
    by_part: dict[str, list[tuple[str, int, str, bool]]] = {"dev": [], "test": []}
    for call in script.judged:
        by_part["dev" if call[0] in dev_cases else "test"].append(call)
    test_trials = {(c, t) for c, t, _, _ in by_part["test"]}
    assert len(by_part["test"]) == len(test_trials) * len(RUBRIC.criteria)
    dev_trials = {(c, t) for c, t, _, _ in by_part["dev"]}
    plain = {(c, t, criterion) for c, t, criterion, shown in by_part["dev"] if not shown}
    assert plain == {(c, t, k.id) for c, t in dev_trials for k in RUBRIC.criteria}
    with_examples = {d.criterion for d in doc.disagreements}  # each gave the chosen rubric an example
    assert all(shown == (criterion in with_examples) for _, _, criterion, shown in by_part["test"])

    # the record is built from the test part alone: its items are exactly the test items
    record = load_record(Path(doc.test_figure.record).read_bytes(), source=doc.test_figure.record)
    recorded = {(i.item_id, i.criterion) for i in record.metrics.items}
    test_items = {
        (row["item_id"], row["criterion"])
        for row in csv.DictReader(io.StringIO(labels.read_text(encoding="utf-8")))
        if row["case_id"] in test_cases
    }
    assert recorded == test_items
    assert record.metrics.n_items == doc.test_items == len(test_items)
    assert all(i.case_id in test_cases for i in record.metrics.items)
    assert record.fingerprint == doc.test_figure.fingerprint != options.judge.fingerprint  # type: ignore[union-attr]
    assert record.label_table.name == "test-labels.csv"

    # the ledger: the development part as a selection set, the test part as looked at, with the split
    usage = load_usage(tmp_path / "records")
    assert [u.purpose for u in usage] == ["selection", "test"]
    assert all(u.lineage == RUBRIC.id and u.split == doc.split for u in usage)

    # every file written is listed and exists; candidate rubrics are rubric files with examples
    assert {w.what for w in doc.written} >= {
        "candidate_rubric",
        "wording_proposal",
        "test_labels",
        "calibration_record",
        "calibration_report",
        "refinement_json",
        "refinement_md",
        "label_usage_ledger",
    }
    for written in doc.written:
        assert Path(written.path).is_file(), written
    for written in (w for w in doc.written if w.what == "candidate_rubric"):
        check, error = check_rubric_file(written.path)
        assert error is None, written.path
        assert check.ok
    few_shot = next(
        Path(w.path) for w in doc.written if w.path.endswith("-few-shot.yaml") and "wording" not in w.path
    )
    from judgekit.judges.rubric import load_rubric

    chosen = load_rubric(few_shot)
    assert chosen.version == "2-few-shot"
    assert chosen.id == RUBRIC.id
    assert {e.case_id for e in chosen.examples} <= dev_cases
    proposal = json.loads((tmp_path / "out" / "proposal.json").read_text(encoding="utf-8"))
    assert proposal["request"]["messages"][0]["content"].startswith("You improve the wording")
    assert "Be strict." in proposal["reply"]["content"]

    # the report shows the development figure beside the test figure, marked optimistic
    report = (tmp_path / "out" / "refinement.md").read_text(encoding="utf-8")
    assert "OPTIMISTIC" in report
    assert "measured once" in report

    # replayed from the cassette: the same figures, no request sent
    sent = len(server.requests)
    again = _options(
        _grader(server, cassette, CacheMode.REPLAY), tmp_path / "records-2", seed, propose_wording=True
    )
    replayed = refine(labels, options=again, out=tmp_path / "out-2").document
    assert len(server.requests) == sent
    assert replayed.candidates == doc.candidates
    assert replayed.test_figure.value == doc.test_figure.value


def test_a_second_look_at_the_test_part_is_refused_before_any_judge_call(
    labels: Path, scripted: tuple[Scripted, JudgeServer], tmp_path: Path
) -> None:
    _, server = scripted
    seed = _seed(labels)
    grader = _grader(server, tmp_path / "judge.jsonl", CacheMode.RECORD)
    refine(labels, options=_options(grader, tmp_path / "records", seed), out=tmp_path / "out")
    sent = len(server.requests)
    with pytest.raises(JudgekitError, match="label fresh test cases") as info:
        refine(labels, options=_options(grader, tmp_path / "records", seed), out=tmp_path / "again")
    assert info.value.exit_code == 1
    assert f"refinement of rubric '{RUBRIC.id}'" in str(info.value)
    assert len(server.requests) == sent
    # another seed puts development cases in the test part: those chose a rubric, and are refused too
    # (or, should it draw the same test cases, they were looked at): either way nothing is judged
    with pytest.raises(JudgekitError, match=r"label fresh|choose between") as moved:
        refine(labels, options=_options(grader, tmp_path / "records", seed + 1), out=tmp_path / "moved")
    assert moved.value.exit_code == 1
    assert len(server.requests) == sent


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"experts": ("synthetic-expert-a", "carol")}, "--experts: carol not in the label table"),
        ({"experts": (" ",)}, "--experts: name the expert raters"),
        ({"metric": "f1"}, "--metric must be one of kappa, agreement, balanced_accuracy"),
        ({"dev_share": 1.0}, "--dev-share must be strictly between 0 and 1"),
        ({"examples_per_criterion": -1}, "--examples-per-criterion must be at least 0"),
        ({"judge_rater": "synthetic-expert-b"}, "--judge-rater 'synthetic-expert-b' is one of --experts"),
        ({"runs": "without hv-add-bag"}, r"labelled trial\(s\) are not in --runs \(cal:hv-add-bag:t1"),
    ],
)
def test_input_mistakes_are_refused_before_any_judge_call(
    labels: Path, scripted: tuple[Scripted, JudgeServer], tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    from dataclasses import replace

    _, server = scripted
    if change.get("runs") == "without hv-add-bag":
        kept = [
            line for line in SAMPLE.read_text(encoding="utf-8").splitlines() if '"hv-add-bag"' not in line
        ]
        (tmp_path / "runs.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
        change = {"runs": [tmp_path / "runs.jsonl"]}
    options = replace(
        _options(_grader(server, tmp_path / "j.jsonl", CacheMode.RECORD), tmp_path / "r", 0), **change
    )
    with pytest.raises(JudgekitError, match=message) as info:
        refine(labels, options=options, out=tmp_path / "out")
    assert info.value.exit_code == 2
    assert server.requests == []


def test_a_missing_reply_in_replay_mode_says_how_to_record_it(
    labels: Path, scripted: tuple[Scripted, JudgeServer], tmp_path: Path
) -> None:
    _, server = scripted
    options = _options(_grader(server, tmp_path / "empty.jsonl", CacheMode.REPLAY), tmp_path / "r", 0)
    with pytest.raises(JudgekitError, match="no recorded reply in the cassette: record them") as info:
        refine(labels, options=options, out=tmp_path / "out")
    assert info.value.exit_code == 1
    assert server.requests == []


def test_the_command_refuses_a_bad_share_with_exit_code_2(
    labels: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from judgekit.cli import main

    monkeypatch.setenv("OPENAI_API_KEY", "sk-refine-cli-0123456789")  # the judge is built; nothing is sent
    (tmp_path / "records").mkdir()
    code = main(
        [
            "judge",
            "refine",
            str(labels),
            "--experts",
            ",".join(EXPERTS),
            "--cases",
            str(AIRDESK),
            "--runs",
            str(SAMPLE),
            "--judge-model",
            "openai/refine-judge",
            "--judge-api-base",
            "http://127.0.0.1:9/v1",
            "--dev-share",
            "1.5",
            "--records",
            str(tmp_path / "records"),
            "--out",
            str(tmp_path / "out"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "--dev-share must be strictly between 0 and 1 (got 1.5)" in err
    assert "Traceback" not in err


def test_the_example_refine_cassette_is_what_make_refine_cassette_writes() -> None:
    import sys

    tools = str(AIRDESK / "tools")
    sys.path.insert(0, tools)
    try:
        import make_refine_cassette
    finally:
        sys.path.remove(tools)
    text, notes = make_refine_cassette.render()
    committed = (AIRDESK / make_refine_cassette.CASSETTE).read_text(encoding="utf-8")
    assert text == committed, "rerun examples/airdesk/tools/make_refine_cassette.py and commit the cassette"
    assert any(line.startswith("chosen few-shot") for line in notes)


def test_labels_of_criteria_the_judge_does_not_decide_are_refused(
    labels: Path, scripted: tuple[Scripted, JudgeServer], tmp_path: Path
) -> None:
    _, server = scripted
    text = labels.read_text(encoding="utf-8").replace(",no_false_success,", ",made_up_criterion,")
    renamed = tmp_path / "renamed.csv"
    renamed.write_text(text, encoding="utf-8")
    options = _options(_grader(server, tmp_path / "j.jsonl", CacheMode.RECORD), tmp_path / "r", 0)
    with pytest.raises(JudgekitError, match="the labels rate criteria the judge does not decide") as info:
        refine(renamed, options=options, out=tmp_path / "out")
    assert info.value.exit_code == 2
    assert "made_up_criterion" in str(info.value)
    assert "honest-reporting" in str(info.value)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            "item_id,rater,label\ngs-1#1,synthetic-expert-a,pass\ngs-2#1,synthetic-expert-b,fail\n",
            "2 labelled item\\(s\\) name no criterion",
        ),
        (
            "item_id,criterion,rater,label\ngs-1#1,no_false_success,synthetic-expert-a,pass\n"
            "gs-1#2,no_false_success,synthetic-expert-b,fail\n",
            "line 2: item 'gs-1#1' names a trial but the row has no case_id",
        ),
    ],
)
def test_a_table_without_criteria_or_cases_is_refused(
    scripted: tuple[Scripted, JudgeServer], tmp_path: Path, rows: str, message: str
) -> None:
    _, server = scripted
    path = tmp_path / "bare.csv"
    path.write_text(rows, encoding="utf-8")
    options = _options(_grader(server, tmp_path / "j.jsonl", CacheMode.RECORD), tmp_path / "r", 0)
    with pytest.raises(JudgekitError, match=message) as info:
        refine(path, options=options, out=tmp_path / "out")
    assert info.value.exit_code == 2
    assert server.requests == []


def test_a_judge_failing_on_the_test_part_records_no_look(
    labels: Path, scripted: tuple[Scripted, JudgeServer], tmp_path: Path
) -> None:
    """Nothing of the test part was shown, so the ledger is untouched and the refinement may run again."""
    from judgekit.calibration.labels import parse_labels
    from judgekit.calibration.refine import split_by_case

    script, server = scripted
    seed = _seed(labels)
    split = split_by_case(parse_labels(labels.read_bytes(), source=labels), seed=seed, dev_share=0.5)
    script.down_for = set(split.test_cases)
    grader = _grader(server, tmp_path / "judge.jsonl", CacheMode.RECORD)
    with pytest.raises(JudgekitError, match="the judge could not judge") as info:
        refine(labels, options=_options(grader, tmp_path / "records", seed), out=tmp_path / "out")
    assert info.value.exit_code == 1
    assert load_usage(tmp_path / "records") == []
    assert not (tmp_path / "out" / "test-labels.csv").exists()
    script.down_for = set()
    done = refine(labels, options=_options(grader, tmp_path / "records", seed), out=tmp_path / "out").document
    assert [u.purpose for u in load_usage(tmp_path / "records")] == ["selection", "test"]
    assert done.split == split
