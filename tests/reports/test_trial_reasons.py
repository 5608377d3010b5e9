"""A report's trial reasons: kept as their lines' places, made when read, the same as made from memory."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import pytest

from judgekit.cli import main
from judgekit.errors import LocatedError
from judgekit.reports.run_json import render_run_json
from judgekit.reports.run_markdown import REASONS_SHOWN, reason_groups, render_run_markdown
from judgekit.reports.run_model import RunReport, TrialReason, TrialReasons, report_run, trial_reasons
from judgekit.results import LineLocation, read_results
from judgekit.verdict import Verdict

_OPTIONS = {"undecided": "fail"}


@pytest.fixture(scope="module")
def demo_lines(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's own graded lines of agent v1: 104 trials, failed, errored and undecided among them."""
    out = tmp_path_factory.mktemp("demo") / "demo"
    main(["-q", "demo", "--out", str(out)])
    return out / "results" / "agent-v1.jsonl"


@pytest.fixture
def real(tmp_path: Path, demo_lines: Path) -> Path:
    """A copy of the demo's lines, to change."""
    path = tmp_path / "results.jsonl"
    shutil.copyfile(demo_lines, path)
    return path


def test_a_streamed_reports_reasons_are_the_in_memory_reports(real: Path) -> None:
    streamed, _ = report_run(real, **_OPTIONS)
    in_memory, _ = report_run(read_results(real), **_OPTIONS)
    assert len(streamed.trial_reasons) > 10
    assert streamed.trial_reasons == in_memory.trial_reasons
    assert list(streamed.trial_reasons) == list(trial_reasons(read_results(real).lines))
    assert streamed == in_memory
    for render in (render_run_json, render_run_markdown):
        assert render(streamed) == render(in_memory)


def test_a_streamed_report_keeps_places_in_the_file_not_reasons(real: Path) -> None:
    report, _ = report_run(real, **_OPTIONS)
    entries = report.trial_reasons._entries
    assert entries
    assert all(isinstance(entry[-1], LineLocation) for entry in entries)
    # failed trials first, then by case id and trial
    order = [entry[:3] for entry in entries]  # (not failed, case id, trial)
    assert order == sorted(order)
    assert [v for *_, v, _ in entries].index(Verdict.FAIL) == 0
    # a place is a few small integers: the whole list pickles in far less than its reasons do
    assert len(pickle.dumps(report.trial_reasons)) * 4 < len(pickle.dumps(tuple(report.trial_reasons)))


def test_a_reason_read_after_its_line_changed_is_refused_with_the_line(real: Path) -> None:
    report, _ = report_run(real, **_OPTIONS)
    entry = report.trial_reasons._entries[0]
    at = entry[-1]
    assert isinstance(at, LineLocation)
    data = bytearray(real.read_bytes())
    first_e = data.index(b"e", at.offset)  # same length, other bytes: the CRC sees it
    data[first_e] = ord("E")
    real.write_bytes(bytes(data))
    with pytest.raises(LocatedError) as caught:
        _ = report.trial_reasons[0]
    assert caught.value.problem.line == at.number
    assert str(real) in str(caught.value)
    assert "the results file changed while its report was being made" in str(caught.value)
    assert "make the report again" in str(caught.value)
    real.write_bytes(real.read_bytes()[: at.offset])  # and a line no longer there at all
    with pytest.raises(LocatedError, match="changed while its report"):
        list(report.trial_reasons)


def test_markdown_reads_only_the_lines_of_the_reasons_it_shows(tmp_path: Path, demo_lines: Path) -> None:
    """The Markdown report shows the first groups: the other trials' lines are never read again."""
    path = tmp_path / "results.jsonl"
    lines = demo_lines.read_bytes().splitlines(keepends=True)
    # many copies, each its own cases: more groups than the Markdown shows
    with path.open("wb") as handle:
        for copy in range(8):
            for raw in lines:
                handle.write(raw.replace(b'"id":"', f'"id":"c{copy}-'.encode(), 1))
    report, _ = report_run(path, **_OPTIONS)
    reasons = report.trial_reasons
    assert len(reason_groups(report)) > REASONS_SHOWN
    shown = reason_groups(report, REASONS_SHOWN)
    assert shown == reason_groups(report)[:REASONS_SHOWN]
    expected = render_run_markdown(report)
    # spoil every line whose reason the Markdown does not show
    last_shown = max(i for i, (case, _, _) in enumerate(reasons.outline()) if case == shown[-1][0])
    data = bytearray(path.read_bytes())
    for *_, at in reasons._entries[last_shown + 1 :]:
        assert isinstance(at, LineLocation)
        data[at.offset + 1] = ord(" ")  # '{"' becomes '{ ': another line
    path.write_bytes(bytes(data))
    assert render_run_markdown(report) == expected
    with pytest.raises(LocatedError):
        render_run_json(report)


def test_the_reasons_validate_and_serialise_as_a_list_of_reasons(real: Path) -> None:
    report, _ = report_run(real, **_OPTIONS)
    dumped = report.model_dump(mode="json")
    assert isinstance(dumped["trial_reasons"], list)
    assert dumped["trial_reasons"][0] == report.trial_reasons[0].model_dump(mode="json")
    again = RunReport.model_validate(dumped)
    assert isinstance(again.trial_reasons, TrialReasons)
    assert again == report
    assert RunReport.model_validate_json(report.model_dump_json()) == report
    schema = RunReport.model_json_schema()
    assert schema["properties"]["trial_reasons"]["type"] == "array"
    given = report.model_copy(update={"trial_reasons": ()})
    assert len(given.trial_reasons) == 0
    made = RunReport.model_validate({**dumped, "trial_reasons": tuple(report.trial_reasons)[:2]})
    assert made.trial_reasons == tuple(report.trial_reasons)[:2]


def test_the_sequence_behaves_as_a_tuple_of_reasons() -> None:
    a = TrialReason(
        case_id="a", trial=1, verdict=Verdict.FAIL, check_id=None, layer=None, category=None, reason="x"
    )
    b = a.model_copy(update={"case_id": "b"})
    reasons = TrialReasons.of([a, b])
    assert len(reasons) == 2
    assert reasons[0] == a
    assert reasons[-1] == b
    assert reasons[:1] == (a,)
    assert reasons == (a, b)
    assert reasons == [a, b]
    assert reasons != (b, a)
    assert reasons != (a,)
    assert reasons == TrialReasons.of([a, b])
    assert hash(reasons) == hash(TrialReasons.of([a, b]))
    assert tuple(reasons.outline()) == (("a", 1, Verdict.FAIL), ("b", 1, Verdict.FAIL))
    assert not TrialReasons()
    assert repr(reasons) == "TrialReasons(2 trial(s))"
    assert pickle.loads(pickle.dumps(reasons)) == reasons
    with pytest.raises(IndexError):
        reasons[2]


def test_the_first_groups_are_whole_when_undecided_verdicts_alternate_within_a_case(real: Path) -> None:
    """A case's undecided trials of different verdicts alternate in the report's order: none is cut off."""
    report, _ = report_run(real, **_OPTIONS)

    def made(case: str, trial: int, verdict: Verdict, why: str) -> TrialReason:
        return TrialReason(
            case_id=case, trial=trial, verdict=verdict, check_id=None, layer=None, category=None, reason=why
        )

    error, unsure = Verdict.ERROR, Verdict.INSUFFICIENT_INFORMATION
    crafted = report.model_copy(
        update={
            "trial_reasons": TrialReasons.of(
                [
                    made("a", 1, error, "timeout"),
                    made("a", 2, unsure, "no quote"),
                    made("a", 3, error, "timeout"),
                    made("a", 4, unsure, "no quote"),
                    made("b", 1, error, "timeout"),
                ]
            )
        }
    )
    whole = reason_groups(crafted)
    assert [(case, verdict, trials) for case, verdict, _, trials in whole] == [
        ("a", error, (1, 3)),
        ("a", unsure, (2, 4)),
        ("b", error, (1,)),
    ]
    for limit in range(4):
        assert reason_groups(crafted, limit) == whole[:limit]
