"""Inspect AI logs read through inspect_ai's own reader: samples, epochs, sources, fidelity, refusals."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai.log import read_eval_log

from inspect_runs import INSPECT_EPOCHS, SAMPLES, InspectLogs
from judgekit.errors import JudgekitError
from judgekit.fidelity import lost_by
from judgekit.formats.inspect_logs import read_inspect_logs, read_log
from judgekit.integrations.inspect import transcript_from_state

CASES = {sid: case_id for sid, case_id, _, _ in SAMPLES}


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_every_sample_and_epoch_becomes_a_transcript_with_where_it_came_from(
    inspect_logs: InspectLogs, fmt: str
) -> None:
    log = inspect_logs.eval_log if fmt == "eval" else inspect_logs.json_log
    result = read_inspect_logs([log])
    assert result.problems == []
    assert result.renumbered == []
    assert len(result.samples) == len(SAMPLES) * INSPECT_EPOCHS
    seen = {(s.ref.sample_id, s.ref.epoch) for s in result.samples}
    assert seen == {(sid, e) for sid in CASES for e in range(1, INSPECT_EPOCHS + 1)}
    uuids = {s.uuid for s in read_eval_log(str(log)).samples or []}
    for imported in result.samples:
        t = imported.transcript
        assert t.case_id == CASES[str(imported.ref.sample_id)]  # metadata case_id
        assert t.trial == imported.ref.epoch  # epoch -> trial
        assert t.run is not None
        assert t.run.agent_model == "mockllm/model"
        source = t.metadata["inspect"]
        assert source["log"] == str(log.resolve())
        assert source["sample_id"] == imported.ref.sample_id
        assert source["epoch"] == imported.ref.epoch
        assert source["uuid"] in uuids
        assert source["sample_metadata"]["ticket"].startswith("T-")
        # the conversation: the user, a tool call with its arguments, its result, the closing answer
        roles = [m.role for m in t.messages]
        assert roles == ["user", "assistant", "tool", "assistant"]
        (call,) = t.calls()
        target = "u2" if imported.ref.sample_id == "wrong" else "u1"
        assert call.call.name == "update_email"
        assert call.call.arguments == {"user_id": target, "email": "new@x.io"}
        assert call.result == '{"ok": true}'
        assert t.initial_state is not None  # the store's judgekit:initial_state
        report = imported.fidelity
        assert report.conventions == ("inspect_ai",)
        assert (report.tool_calls, report.tool_results_missing) == (1, 0)
        assert (report.model_spans, report.tool_spans) == (2, 1)
        if imported.ref.sample_id == "lost":
            assert t.final_state is None
            (issue,) = report.issues
            assert issue.kind == "final_state_missing"
            assert "no store key 'judgekit:final_state', no metadata field 'final_state'" in issue.detail
        else:
            assert t.final_state is not None
            assert report.issues == ()
        assert lost_by(t) == {}  # nothing the conversation layers need was lost


def test_the_log_and_the_live_state_give_one_conversion(inspect_logs: InspectLogs) -> None:
    """A logged sample converts as judgekit's Inspect scorer converts the live task state."""
    from inspect_ai.solver import TaskState

    log = read_log(inspect_logs.eval_log)
    imported = {
        (s.ref.sample_id, s.ref.epoch): s.transcript
        for s in read_inspect_logs([inspect_logs.eval_log]).samples
    }
    for sample in log.samples or []:
        state = TaskState(
            model=log.eval.model,
            sample_id=sample.id,
            epoch=sample.epoch,
            input=sample.input,
            messages=sample.messages,
            metadata=sample.metadata,
            store=sample.store,
        )
        live = transcript_from_state(state)
        logged = imported[(sample.id, sample.epoch)]
        assert live.messages == logged.messages
        assert (live.case_id, live.trial, live.final_state, live.initial_state) == (
            logged.case_id,
            logged.trial,
            logged.final_state,
            logged.initial_state,
        )


def test_a_case_id_field_and_a_named_final_state_field(inspect_logs: InspectLogs) -> None:
    result = read_inspect_logs([inspect_logs.json_log], case_id_field="ticket", final_state_field="nowhere")
    assert {s.transcript.case_id for s in result.samples} == {"T-1", "T-2", "T-3"}
    # the store holds the final state, so the metadata field is only the fallback
    assert all(s.transcript.final_state is not None for s in result.samples if s.ref.sample_id != "lost")
    lost = next(s for s in result.samples if s.ref.sample_id == "lost")
    assert "'nowhere'" in lost.fidelity.issues[0].detail


def test_samples_without_the_case_id_field_are_located_and_the_others_imported(
    inspect_logs: InspectLogs, tmp_path: Path
) -> None:
    from inspect_ai.log import write_eval_log

    log = read_eval_log(str(inspect_logs.eval_log))
    for sample in log.samples or []:
        if sample.id == "lost":
            sample.metadata = {**(sample.metadata or {}), "alias": "email-3"}
    edited = tmp_path / "edited.eval"
    write_eval_log(log, str(edited))
    result = read_inspect_logs([edited], case_id_field="alias")
    assert {s.ref.sample_id for s in result.samples} == {"lost"}
    assert {s.transcript.case_id for s in result.samples} == {"email-3"}
    assert len(result.problems) == 2 * INSPECT_EPOCHS
    problem = next(p for p in result.problems if p.field == "sample 'ok' epoch 2")
    assert problem.file == edited
    assert "metadata has no field 'alias'" in problem.message
    assert str(problem).startswith(f"{edited}: sample 'ok' epoch 2: ")


def test_a_case_id_field_holding_a_boolean_is_refused_not_turned_into_case_true(
    inspect_logs: InspectLogs,
) -> None:
    result = read_inspect_logs([inspect_logs.eval_log], case_id_field="lose_state")  # True on 'lost' only
    assert result.samples == []
    problem = next(p for p in result.problems if p.field == "sample 'lost' epoch 1")
    assert problem.message == (
        "the sample's metadata field 'lose_state' (--case-id-field) is a bool (True), not a case id: set it "
        "to the judgekit case's id, a text"
    )


def test_two_logs_of_one_task_number_the_trials_of_each_case_in_reading_order(
    inspect_logs: InspectLogs,
) -> None:
    result = read_inspect_logs([inspect_logs.eval_log, inspect_logs.json_log])
    assert result.renumbered == ["email-1", "email-2", "email-3"]
    trials = sorted(s.transcript.trial for s in result.samples if s.transcript.case_id == "email-1")
    assert trials == list(range(1, 2 * INSPECT_EPOCHS + 1))
    epochs = [
        s.transcript.metadata["inspect"]["epoch"] for s in result.samples if s.transcript.case_id == "email-1"
    ]
    assert sorted(epochs) == sorted([*range(1, INSPECT_EPOCHS + 1)] * 2)


def _cut(source: Path, target: Path) -> Path:
    data = source.read_bytes()
    target.write_bytes(data[: len(data) // 2])
    return target


@pytest.mark.parametrize(
    ("name", "make", "expected"),
    [
        ("cut.eval", lambda logs, p: _cut(logs.eval_log, p), "EOCD"),
        ("cut.json", lambda logs, p: _cut(logs.json_log, p), "ValueError"),
        ("list.json", lambda logs, p: p.write_text("[1, 2]") and p, "ValidationError"),
        ("garbage.eval", lambda logs, p: p.write_text("not a zip") and p, "EOCD"),
    ],
)
def test_a_malformed_or_truncated_log_is_refused_with_its_location(
    inspect_logs: InspectLogs, tmp_path: Path, name: str, make: object, expected: str
) -> None:
    bad = make(inspect_logs, tmp_path / name)  # type: ignore[operator]
    good = tmp_path / inspect_logs.eval_log.name
    shutil.copy(inspect_logs.eval_log, good)
    with pytest.raises(JudgekitError) as err:
        read_inspect_logs([good, bad])
    assert err.value.message.startswith(f"{bad}: not a readable Inspect log (")
    assert expected in err.value.message
    assert "malformed or cut off" in err.value.message
    assert err.value.exit_code == 2


def test_a_missing_log_and_a_folder_without_logs_are_refused(tmp_path: Path) -> None:
    with pytest.raises(JudgekitError, match="the Inspect log does not exist"):
        read_inspect_logs([tmp_path / "none.eval"])
    (tmp_path / "notes.json").write_text("{}")
    with pytest.raises(
        JudgekitError, match=r"the folder holds no Inspect log \(\.eval or \.json\); name the logs"
    ):
        read_inspect_logs([tmp_path])


def test_a_log_folder_is_every_log_inspect_lists_in_it(inspect_logs: InspectLogs) -> None:
    # the golden set's JSON files beside the logs are no logs, and a log named again is read once
    result = read_inspect_logs([inspect_logs.folder, inspect_logs.eval_log])
    assert sorted({str(s.ref.log) for s in result.samples}) == sorted(
        [str(inspect_logs.eval_log), str(inspect_logs.json_log)]
    )
    assert len(result.samples) == 2 * len(SAMPLES) * INSPECT_EPOCHS


def test_what_a_log_did_not_record_is_reported_and_unmappable_samples_located(
    inspect_logs: InspectLogs, tmp_path: Path
) -> None:
    """Samples edited through inspect_ai's API: an errored run, no messages, a lost tool result, an image."""
    from inspect_ai.log import EvalError, write_eval_log
    from inspect_ai.model import ChatMessageTool, ChatMessageUser, ContentImage, ContentText

    log = read_log(inspect_logs.eval_log, resolve=False)
    samples = {(s.id, s.epoch): s for s in log.samples or []}
    samples[("ok", 1)].error = EvalError(message="sandbox died\nmore", traceback="", traceback_ansi="")
    samples[("ok", 2)].messages = []
    wrong = samples[("wrong", 1)]
    wrong.messages = [m for m in wrong.messages if not isinstance(m, ChatMessageTool)]
    pictured = samples[("wrong", 2)]
    pictured.messages[0] = ChatMessageUser(
        content=[
            ContentText(text="Change my email to new@x.io"),
            ContentImage(image="data:image/png;base64,AA=="),
        ]
    )
    edited = tmp_path / "edited.eval"
    write_eval_log(log, str(edited))

    result = read_inspect_logs([edited])
    problems = {p.field: p.message for p in result.problems}
    assert problems == {
        "sample 'ok' epoch 1": "the sample ended in an error in the Inspect run (sandbox died); not imported",
        "sample 'ok' epoch 2": "the sample has no messages",
    }
    assert all(p.file == edited for p in result.problems)
    imported = {(s.ref.sample_id, s.ref.epoch): s for s in result.samples}
    assert len(imported) == len(SAMPLES) * INSPECT_EPOCHS - 2
    lost_result = imported[("wrong", 1)]
    assert lost_result.fidelity.tool_results_missing == 1
    assert lost_result.fidelity.issues[0].kind == "tool_result_missing"
    assert "update_email" in lost_result.fidelity.issues[0].detail
    lost = lost_by(lost_result.transcript)
    assert set(lost) == {"tool_results", "conversation"}
    assert lost["tool_results"] == "1 tool call(s) have no result"
    (part,) = imported[("wrong", 2)].fidelity.issues
    assert part.kind == "unsupported_part"
    assert part.detail == "user message 0: image content not carried over"
    assert part.message_index == 0
    assert imported[("wrong", 2)].transcript.messages[0].content == "Change my email to new@x.io"


def test_texts_inspect_stored_as_attachments_are_read_whole(
    inspect_logs: InspectLogs, tmp_path: Path
) -> None:
    """Inspect keeps a long text once, as an attachment the message points to; the import resolves it."""
    from inspect_ai.log import write_eval_log

    log = read_log(inspect_logs.json_log, resolve=False)
    sample = next(s for s in log.samples or [] if s.id == "ok")
    long_answer = "Done: your email is now new@x.io. " * 20
    sample.attachments["a1b2"] = long_answer
    sample.messages[-1].content = "attachment://a1b2"
    edited = tmp_path / "attached.json"
    write_eval_log(log, str(edited))
    imported = next(s for s in read_inspect_logs([edited]).samples if s.ref.sample_id == "ok")
    assert imported.transcript.messages[-1].content == long_answer
