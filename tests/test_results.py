import gc
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from judgekit import __version__
from judgekit.results import (
    SCHEMA_VERSION,
    CaseRef,
    ResultStream,
    TrialSource,
    dump_result_line,
    failure_categories,
    make_result_line,
    paused_gc,
    read_results,
)
from judgekit.transcript import RunRecord
from judgekit.verdict import CheckResult, FailureCategory, Grade, Verdict


def _line(case_id="c1", trial=1, verdict=Verdict.PASS, **kw):
    checks = kw.pop("checks", (CheckResult(check_id="state", layer="state", verdict=verdict, reason="r"),))
    grade = Grade(case_id=case_id, trial=trial, verdict=verdict, checks=checks)
    return make_result_line(
        run_id="run-1", case=CaseRef(id=case_id, version=2, slice="policy_edge"), grade=grade, **kw
    )


def _write(path, lines):
    path.write_text("".join(dump_result_line(line) + "\n" for line in lines))


def test_round_trip_keeps_every_field(tmp_path):
    line = _line(
        run=RunRecord(agent_model="gpt-4o", prompt_hash="sha256:ab"),
        judge_fingerprint={"model": "openai/x", "rubric_id": "honest"},
        grading={"concurrency": 4},
        source=TrialSource(file="t.jsonl", line=3, sha256="0" * 64),
        cost_usd=0.25,
        duration_s=1.5,
    )
    path = tmp_path / "r.jsonl"
    _write(path, [line])
    back = read_results(path)
    assert back.problems == []
    assert back.lines == [line]
    data = json.loads(path.read_text())
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["judgekit_version"] == __version__
    assert data["case"] == {
        "id": "c1",
        "version": 2,
        "slice": "policy_edge",
        "category": None,
        "severity": None,
        "policy_refs": [],
    }


def test_failure_categories_are_distinct_and_ordered():
    checks = [
        CheckResult(
            check_id="a", layer="route", verdict=Verdict.FAIL, reason="x", category=FailureCategory.WRONG_TOOL
        ),
        CheckResult(check_id="b", layer="state", verdict=Verdict.PASS),
        CheckResult(
            check_id="c",
            layer="rules",
            verdict=Verdict.FAIL,
            reason="y",
            category=FailureCategory.POLICY_VIOLATION,
        ),
        CheckResult(
            check_id="d", layer="route", verdict=Verdict.FAIL, reason="z", category=FailureCategory.WRONG_TOOL
        ),
        CheckResult(
            check_id="e",
            layer="x",
            verdict=Verdict.ERROR,
            reason="z",
            category=FailureCategory.INVALID_ARGUMENTS,
        ),
    ]
    assert failure_categories(checks) == (FailureCategory.WRONG_TOOL, FailureCategory.POLICY_VIOLATION)


def test_other_schema_version_is_reported_and_rest_still_read(tmp_path):
    path = tmp_path / "r.jsonl"
    good = dump_result_line(_line("c1"))
    future = json.loads(dump_result_line(_line("c2")))
    future["schema_version"] = 99
    future["new_field"] = 1
    path.write_text(good + "\n" + json.dumps(future) + "\n" + dump_result_line(_line("c3")) + "\n")
    back = read_results(path)
    assert [line.case.id for line in back.lines] == ["c1", "c3"]
    assert len(back.problems) == 1
    problem = back.problems[0]
    assert problem.line == 2
    assert "schema version 99" in problem.message
    assert f"reads schema version {SCHEMA_VERSION}" in problem.message


def test_truncated_last_line_is_reported_as_interrupted(tmp_path):
    path = tmp_path / "r.jsonl"
    text = dump_result_line(_line("c1")) + "\n" + dump_result_line(_line("c2"))[:40]
    path.write_text(text)
    back = read_results(path)
    assert back.truncated
    assert [line.case.id for line in back.lines] == ["c1"]
    assert "truncated" in back.problems[0].message
    assert "--resume" in back.problems[0].message
    assert back.problems[0].line == 2


def test_malformed_middle_line_and_duplicates(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(
        dump_result_line(_line("c1"))
        + "\n{not json}\n"
        + dump_result_line(_line("c1", verdict=Verdict.FAIL))
        + "\n"
        + json.dumps({"schema_version": SCHEMA_VERSION, "run_id": "x"})
        + "\n"
    )
    back = read_results(path)
    assert [line.verdict for line in back.lines] == [Verdict.PASS]
    messages = [(p.line, p.message) for p in back.problems]
    assert messages[0][0] == 2
    assert "malformed JSON" in messages[0][1]
    assert messages[1][0] == 3
    assert "duplicate result for case 'c1' trial 1" in messages[1][1]
    assert messages[2][0] == 4
    assert "not a judgekit result line" in messages[2][1]
    assert not back.truncated


def test_secrets_never_serialised():
    line = _line(
        run=RunRecord(
            agent_model="m", config={"api_key": "abc123secret", "base": "https://h/x?token=tok123456"}
        ),
        grading={"headers": {"Authorization": "Bearer zzzzzzzzzzzz"}},
    )
    text = dump_result_line(line)
    for secret in ("abc123secret", "tok123456", "zzzzzzzzzzzz"):
        assert secret not in text
    assert json.loads(text)["run"]["agent_model"] == "m"


@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(1, 4), st.sampled_from(list(Verdict))),
        max_size=20,
        unique_by=lambda t: (t[0], t[1]),
    )
)
def test_read_back_equals_written(tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("r") / "r.jsonl"
    lines = [_line(c, t, v) for c, t, v in rows]
    _write(path, lines)
    back = read_results(path)
    assert back.lines == lines
    assert back.problems == []


def test_unreadable_file_is_a_user_error(tmp_path):
    from judgekit.errors import JudgekitError

    with pytest.raises(JudgekitError, match="cannot read results"):
        read_results(tmp_path / "absent.jsonl")


@pytest.mark.parametrize("where", ["first_verdict", "last_verdict"])
def test_a_repeated_key_is_refused_not_read_as_its_last_value(tmp_path, where):
    failing = dump_result_line(_line("c1", verdict=Verdict.FAIL))
    # A second "verdict" that pydantic (and json.loads) would read as the value: the line would pass.
    if where == "first_verdict":
        edited = failing.replace('"verdict":"fail"', '"verdict":"fail","verdict":"pass"', 1)
        assert edited.count('"verdict":') == failing.count('"verdict":') + 1
    else:
        edited = failing[::-1].replace('"liaf":"tcidrev"', '"ssap":"tcidrev","liaf":"tcidrev"', 1)[::-1]
    assert edited != failing
    path = tmp_path / "r.jsonl"
    path.write_text(dump_result_line(_line("c0")) + "\n" + edited + "\n")
    back = read_results(path)
    assert [line.case.id for line in back.lines] == ["c0"]
    [problem] = back.problems
    assert (problem.line, problem.message) == (
        2,
        "duplicate key 'verdict' in one object; keep one; line left out",
    )


def test_a_result_stream_yields_the_lines_read_results_keeps_and_the_same_problems(tmp_path):
    path = tmp_path / "r.jsonl"
    good = [dump_result_line(_line("c1", t)) for t in (1, 2)]
    text = "\n".join(
        [good[0], good[0], "{not json", good[1].replace('"schema_version":1', '"schema_version":9')]
    )
    path.write_text(text + "\n" + good[1][:30])  # a duplicate, a malformed line, another version, cut off
    stream = ResultStream(path)
    lines = list(stream)
    expected = read_results(path)
    assert lines == expected.lines
    assert [line.key for line in lines] == [("c1", 1)]
    assert stream.problems == expected.problems
    assert len(stream.problems) == 4
    assert stream.truncated is expected.truncated is True
    assert list(stream) == lines  # iterating again reads the file again, with fresh problems
    assert stream.problems == expected.problems


def test_a_run_iterates_its_valid_lines_in_file_order(tmp_path) -> None:
    from judgekit.results import RunResults

    run = RunResults(path=tmp_path / "r.jsonl")
    assert list(run) == []
    assert run  # a dataclass with no __len__: an empty run is still a run (truthiness unchanged)


def test_paused_gc_restores_the_collector_as_it_found_it():
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # an inner pause leaves the outer one paused
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()  # it was off: it stays off
    finally:
        gc.enable()


def test_a_located_line_is_read_where_it_is_not_through_the_read_buffer(tmp_path):
    """Reasons are read again in their own order: each read takes its line's bytes, not a buffer's worth."""
    from judgekit.io.documents import open_input
    from judgekit.results import read_located_line

    path = tmp_path / "results.jsonl"
    _write(path, [_line(f"c{n}") for n in range(40)])
    stream = ResultStream(path)
    located = []
    for _ in stream.report_lines():
        located.append(stream.location())
    with open_input(path, "results") as handle:
        for at in reversed(located):
            line = read_located_line(handle, path, at)
            assert line.case.id == f"c{at.number - 1}"
        assert handle.raw.tell() == 0  # nothing went through the buffer: its position never moved
