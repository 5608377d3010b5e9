"""Inspect AI logs written by a real ``inspect eval`` run (a session fixture, registered by conftest.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

INSPECT_EPOCHS = 3
"""Epochs of the Inspect run (each becomes a judgekit trial)."""

ORIGINAL_SCORER = "includes"
"""The Inspect scorer the run scored with before judgekit: the scores the logs had."""


SAMPLES: tuple[tuple[str, str, str, dict[str, object]], ...] = (
    ("ok", "email-1", "Change my email to new@x.io", {"ticket": "T-1"}),
    ("wrong", "email-2", "Change my email to new@x.io [wrong user]", {"ticket": "T-2"}),
    ("lost", "email-3", "Change my email to new@x.io", {"ticket": "T-3", "lose_state": True}),
)
"""The samples: id, case id, what the user says, metadata besides ``case_id``. Each case is a copy of the
Inspect scorer tests' ``email-1`` case (``email-2``: the agent changes the wrong user; ``email-3``: the run
does not record the final state)."""


@dataclass(frozen=True)
class InspectLogs:
    """An Inspect run's logs, one in each of Inspect's formats, and the golden set its samples belong to.

    Attributes:
        folder: The folder holding both logs.
        eval_log: The ``.eval`` log (a zip).
        json_log: The ``.json`` log.
        golden: A golden-set folder holding the cases of the samples (``email-1`` to ``email-3``).
    """

    folder: Path
    eval_log: Path
    json_log: Path
    golden: Path


def write_golden(golden: Path) -> list[Any]:
    """Write the golden set of the samples' cases into ``golden``; return the cases."""
    from integrations.test_inspect import CASE, WORLD
    from support import write

    write(golden / "judgekit-set.yaml", "name: inspect-logs\nsynthetic: true\n")
    write(golden / "fixtures" / "world.json", json.dumps(WORLD))
    (golden / "cases").mkdir()
    cases = [
        CASE.model_copy(update={"id": case_id, "initial_state": "fixtures/world.json"})
        for _, case_id, _, _ in SAMPLES
    ]
    for case in cases:
        (golden / "cases" / f"{case.id}.yaml").write_text(case.model_dump_json(exclude_defaults=True))
    return cases


def run_inspect_eval(
    log_dir: Path, scorers: list[Any], *, fmt: str = "eval", epochs: int = INSPECT_EPOCHS
) -> Path:
    """Run the task (:data:`SAMPLES`, the ``update_email`` tool, the scripted agent) and return its log.

    Args:
        log_dir: Where Inspect writes the log.
        scorers: The Inspect scorers.
        fmt: The log format, ``eval`` or ``json``.
        epochs: Epochs of every sample.
    """
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import generate, use_tools

    from integrations.test_inspect import load_world, record_world, scripted_agent, update_email

    task = Task(
        name="email",
        dataset=[
            Sample(id=sid, input=text, target="new@x.io", metadata={"case_id": case_id, **extra})
            for sid, case_id, text, extra in SAMPLES
        ],
        solver=[load_world(), use_tools([update_email()]), generate(), record_world()],
        scorer=scorers,
        epochs=epochs,
    )
    (log,) = eval(
        task,
        model="mockllm/model",
        model_args={"custom_outputs": scripted_agent},
        log_dir=str(log_dir),
        log_format=fmt,
        display="none",
    )
    assert log.status == "success", log.error
    return Path(log.location)


@pytest.fixture(scope="session")
def inspect_logs(tmp_path_factory: pytest.TempPathFactory) -> InspectLogs:
    """Run a small Inspect task twice with a scripted model (offline), once per log format.

    The task has a tool (``update_email``), three samples (``ok``: the right user; ``wrong``: the wrong
    user; ``lost``: the final state is not recorded in the store), sample metadata (``case_id``, ``ticket``)
    and :data:`INSPECT_EPOCHS` epochs. It is scored by Inspect's ``includes`` scorer (the scores a team's
    log already has) and by judgekit's own Inspect scorer (what a re-grade must reproduce).
    """
    pytest.importorskip("inspect_ai")
    from inspect_ai.scorer import includes

    from judgekit.integrations.inspect import judgekit_scorer

    folder = tmp_path_factory.mktemp("inspect-logs")
    golden = folder / "golden"
    cases = write_golden(golden)
    logs = {
        fmt: run_inspect_eval(folder / fmt, [includes(), judgekit_scorer(cases, root=golden)], fmt=fmt)
        for fmt in ("eval", "json")
    }
    return InspectLogs(folder=folder, eval_log=logs["eval"], json_log=logs["json"], golden=golden)
