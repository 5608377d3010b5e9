"""Every command that prints results can print them as one JSON document with a schema version.

The commands are walked from the application itself (as in ``test_cli_usage.py``): each one either offers
``--format json`` and has a real invocation in :data:`INVOCATIONS`, or is named in :data:`NO_JSON` with
the reason. A new command therefore has to choose, and a command cannot claim JSON output that does not
parse.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from judgekit.cli import app, main
from judgekit.commands.output import JSON_SCHEMA_VERSION
from support import refine_example_args

REPO = Path(__file__).resolve().parents[1]
AIRDESK = REPO / "examples" / "airdesk"
OTEL = REPO / "tests" / "formats" / "fixtures" / "otel"

#: Commands without ``--format json``, and why.
NO_JSON = {
    "export cases": "its --format names the export target (copilot-studio); what it writes is the result",
}


def _leaves(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    children = getattr(command, "commands", None)
    if children:
        for name, child in sorted(children.items()):
            if not child.hidden:  # an old name pointing to its new place
                yield from _leaves(child, (*path, name))
    else:
        yield " ".join(path), command


def _json_commands() -> dict[str, bool]:
    """Each leaf command, and whether its ``--format`` option offers ``json`` (per its help)."""
    import typer.main

    found: dict[str, bool] = {}
    for name, command in _leaves(typer.main.get_command(app)):
        option = next((p for p in command.params if "--format" in getattr(p, "opts", ())), None)
        found[name] = option is not None and "json" in (option.help or "")
    return found


COMMANDS = _json_commands()


@dataclass
class Workspace:
    """Inputs for every command, built once: the bundled set, the demo's outputs, keys and indexes."""

    root: Path
    labels: Path
    demo: Path
    record: Path
    fingerprint: str
    key: Path
    index: Path
    sheet: Path
    events: Path
    writer_api_base: str
    inspect_log: Path
    inspect_transcripts: Path
    inspect_results: Path

    @property
    def v1(self) -> str:
        return str(self.demo / "results" / "agent-v1.jsonl")

    @property
    def v2(self) -> str:
        return str(self.demo / "results" / "agent-v2.jsonl")

    @property
    def records(self) -> str:
        return str(self.demo / "calibration" / "records")

    def copy_set(self, tmp: Path) -> str:
        """A private copy of the bundled set, for a command that writes into it."""
        target = tmp / "airdesk"
        shutil.copytree(AIRDESK, target)
        return str(target)


def _folder(path: Path) -> str:
    """``path`` made (a records folder named on the command line must exist), as text."""
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


def _quiet_main(args: list[str]) -> int:
    code = main(args)
    assert code == 0, args
    return code


#: The model that drafts candidates, answered by a loopback server with a fixed generation.
WRITER_MODEL = "openai/test-writer"
GENERATION = json.dumps(
    {
        "should_trigger": ["Please refund my cancelled flight", "I want my money back for booking K2"],
        "must_not_trigger": ["What is the baggage allowance?", "Can I change my seat?"],
    }
)


@pytest.fixture(scope="module")
def writer() -> Iterator[str]:
    """A loopback OpenAI-compatible server that drafts candidates; yields its base URL."""
    from judges.server import JudgeServer, Reply

    server = JudgeServer(lambda body, index: Reply(content=GENERATION)).start()
    try:
        yield server.api_base
    finally:
        server.stop()


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory, writer: str, inspect_logs: Any) -> Workspace:
    root = tmp_path_factory.mktemp("json-workspace")
    inspect_transcripts, inspect_results = root / "inspect.jsonl", root / "inspect-results.jsonl"
    _quiet_main(["-q", "import", "inspect", str(inspect_logs.json_log), "--out", str(inspect_transcripts)])
    grade = ["grade", "--cases", str(inspect_logs.golden), "--transcripts", str(inspect_transcripts)]
    main(["-q", *grade, "--out", str(inspect_results), "--no-progress"])  # exit 1: a trial failed
    demo = root / "demo"
    _quiet_main(["-q", "demo", "--out", str(demo)])
    [record] = sorted((demo / "calibration" / "records").glob("*.json"))
    fingerprint = json.loads(record.read_text(encoding="utf-8"))["fingerprint"]
    key = root / "contamination.key"
    _quiet_main(["-q", "contamination", "keygen", "--out", str(key)])
    index = root / "airdesk.index"
    _quiet_main(["-q", "contamination", "index", str(AIRDESK), "--key-file", str(key), "--out", str(index)])
    review = root / "review"
    results = str(demo / "results" / "agent-v2.jsonl")
    _quiet_main(["-q", "labels", "sheet", results, "--passing", "2", "--failing", "2", "--out", str(review)])
    events = root / "verdicts.otlp.json"
    _quiet_main(["-q", "export", "otel", results, "--out", str(events)])
    return Workspace(
        root=root,
        labels=demo / "calibration" / "labels.csv",
        demo=demo,
        record=record,
        fingerprint=fingerprint,
        key=key,
        index=index,
        sheet=review / "review-sheet.md",
        events=events,
        writer_api_base=writer,
        inspect_log=inspect_logs.json_log,
        inspect_transcripts=inspect_transcripts,
        inspect_results=inspect_results,
    )


def _tau2_bench_file(tmp: Path) -> str:
    task = {
        "id": "0",
        "user_scenario": {"instructions": "Ask where order #1 is."},
        "evaluation_criteria": {
            "actions": [{"name": "get_order", "arguments": {"order_id": "#1"}}],
            "communicate_info": ["shipped"],
        },
    }
    simulation = {
        "task_id": "0",
        "trial": 0,
        "termination_reason": "user_stop",
        "reward_info": {"reward": 1.0, "db_check": {"db_match": True, "db_reward": 1.0}},
        "messages": [
            {"role": "user", "content": "where is order #1?"},
            {"role": "assistant", "content": "It has shipped."},
        ],
    }
    path = tmp / "tau2.json"
    path.write_text(json.dumps({"tasks": [task], "simulations": [simulation]}), encoding="utf-8")
    return str(path)


def _tau_bench_file(tmp: Path) -> str:
    episode = {
        "task_id": 0,
        "trial": 0,
        "reward": 1.0,
        "info": {"task": {"user_id": "u1", "instruction": "book", "actions": [], "outputs": []}},
        "traj": [
            {"role": "system", "content": "# Policy"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "done"},
        ],
    }
    path = tmp / "tau.json"
    path.write_text(json.dumps([episode]), encoding="utf-8")
    return str(path)


def _chat_file(tmp: Path, line: dict[str, Any]) -> str:
    path = tmp / "chats.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return str(path)


def _expert_table(tmp: Path, expert: str, label: str) -> str:
    """One expert's downloaded label table (as the labelling page writes it)."""
    path = tmp / f"labels-{expert}.csv"
    rows = "item_id,criterion,rater,label,case_id,notes,saw_judge\n"
    rows += f"c-1#1,tone,{expert},pass,c-1,,no\nc-1#1,honest,{expert},{label},c-1,why,no\n"
    path.write_text(rows, encoding="utf-8")
    return str(path)


def _cascade_labels(tmp: Path) -> str:
    """A label table with two judges' verdicts and confidences on 40 items two experts agree on."""
    rows = ["item_id,criterion,case_id,rater,label,confidence"]
    for i in range(40):
        rows += [
            f"i{i},g,c{i},{rater},pass,{conf}"
            for rater, conf in (("a", ""), ("b", ""), ("small", 1.0), ("large", 1.0))
        ]
    (tmp / "cascade-labels.csv").write_text("\n".join(rows) + "\n")
    return str(tmp / "cascade-labels.csv")


def _git_set(tmp: Path) -> str:
    copy = tmp / "repo"
    shutil.copytree(AIRDESK, copy / "airdesk")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=copy, check=True, capture_output=True, env=env)
    return str(copy / "airdesk")


Invocation = Callable[[Workspace, Path], list[str]]


def _canary_records(ws: Workspace, tmp: Path) -> str:
    """A records folder with a calibration record of the demo's judge on its v1 verdicts (``case#trial``
    items, two experts agreeing with it) and that record's drift canary set."""
    records = tmp / "canary-records"
    records.mkdir()
    rows = ["item_id,case_id,criterion,rater,label"]
    for raw in Path(ws.v1).read_text(encoding="utf-8").splitlines():
        line = json.loads(raw)
        for check in line["checks"]:
            if check["check_id"].startswith("criterion:") and check["verdict"] in ("pass", "fail"):
                item = f"{line['case']['id']}#{line['trial']},{line['case']['id']},{check['check_id'][10:]}"
                rows += [f"{item},{rater},{check['verdict']}" for rater in ("a", "b", "judge")]
    (tmp / "canary-labels.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    calibrate = ["calibrate", str(tmp / "canary-labels.csv"), "--judge", "judge", "--experts", "a,b"]
    main(["-q", *calibrate, "--fingerprint", ws.fingerprint, "--records", str(records)])
    _quiet_main(["-q", *_canary_set(ws, records)])
    return str(records)


def _canary_set(ws: Workspace, records: Path) -> list[str]:
    """``judge canary-set`` on the demo's v1 results with the demo's judge (replayed: nothing is asked)."""
    runs = str(AIRDESK / "runs" / "agent-v1.jsonl")
    return [
        "judge",
        "canary-set",
        ws.v1,
        "--transcripts",
        runs,
        "--cases",
        str(AIRDESK),
        "--records",
        str(records),
        "--config",
        str(AIRDESK / "judge.yaml"),
        "--cassette",
        str(_CASSETTE),
    ]


_LABELS_A = str(AIRDESK / "labels" / "expert-labels.csv")
#: The demo's two synthetic experts, named: its table holds the judge's rows and theirs.
DEMO_EXPERTS = "synthetic-expert-a,synthetic-expert-b"
_CASSETTE = AIRDESK / "cassettes" / "judge-honest-reporting.jsonl"

#: One real invocation per command that offers JSON, without ``--format json`` (the test adds it).
INVOCATIONS: dict[str, Invocation] = {
    "calibrate": lambda ws, tmp: [
        "calibrate",
        str(ws.labels),
        "--judge",
        "judge",
        "--experts",
        DEMO_EXPERTS,
        "--no-record",
    ],
    "labels check": lambda ws, tmp: ["labels", "check", str(ws.labels), "--records", ws.records],
    "labels plan": lambda ws, tmp: [
        "labels",
        "plan",
        str(ws.labels),
        "--judge",
        "judge",
        "--experts",
        DEMO_EXPERTS,
    ],
    "labels select": lambda ws, tmp: [
        "labels",
        "select",
        _LABELS_A,
        "--candidates",
        "fp-a,fp-b",
        "--chosen",
        "fp-a",
        "--records",
        str(tmp),
    ],
    "candidates generate": lambda ws, tmp: [
        "candidates",
        "generate",
        "--set",
        ws.copy_set(tmp),
        "--tool",
        "issue_refund",
        "--description",
        "Refunds a booking.",
        "--model",
        WRITER_MODEL,
        "--api-base",
        ws.writer_api_base,
        "--dry-run",
    ],
    "candidates promote": lambda ws, tmp: [
        "candidates",
        "promote",
        "GS-NONE-0000",
        "--set",
        ws.copy_set(tmp),
    ],
    "cassette compact": lambda ws, tmp: [
        "cassette",
        "compact",
        str(shutil.copy(_CASSETTE, tmp / "c.jsonl")),
    ],
    "cassette stats": lambda ws, tmp: ["cassette", "stats", str(_CASSETTE)],
    "cases check-references": lambda ws, tmp: ["cases", "check-references", str(AIRDESK)],
    "compare": lambda ws, tmp: ["compare", ws.v1, ws.v2],
    "config": lambda ws, tmp: ["config"],
    "contamination canary": lambda ws, tmp: [
        "contamination",
        "canary",
        "--key-file",
        str(ws.key),
        "--set-name",
        "airdesk",
    ],
    "contamination index": lambda ws, tmp: [
        "contamination",
        "index",
        str(AIRDESK),
        "--key-file",
        str(ws.key),
        "--out",
        str(tmp / "i.index"),
    ],
    "contamination keygen": lambda ws, tmp: ["contamination", "keygen", "--out", str(tmp / "k.key")],
    "contamination scan": lambda ws, tmp: [
        "contamination",
        "scan",
        ws.v2,
        "--index",
        str(ws.index),
        "--key-file",
        str(ws.key),
    ],
    "cases coverage": lambda ws, tmp: ["cases", "coverage", str(AIRDESK)],
    "demo": lambda ws, tmp: ["demo", "--out", str(tmp / "demo")],
    "export otel": lambda ws, tmp: ["export", "otel", ws.v2, "--out", str(tmp / "e.json")],
    "judge failure-modes": lambda ws, tmp: [
        "judge",
        "failure-modes",
        str(ws.labels),
        "--judge",
        "judge",
        "--experts",
        DEMO_EXPERTS,
        "--records",
        str(tmp),
    ],
    "judge refine": lambda ws, tmp: [
        *refine_example_args(),
        "--propose-wording",
        "--records",
        _folder(tmp / "records"),
        "--out",
        str(tmp / "refine"),
    ],
    "judge fit-cascade": lambda ws, tmp: [
        "judge",
        "fit-cascade",
        _cascade_labels(tmp),
        "--stage",
        "small=openai/small",
        "--stage",
        "large=openai/large",
        "--experts",
        "a,b",
        "--out",
        str(tmp / "cascade.json"),
    ],
    "judge fit-jury": lambda ws, tmp: [
        "judge",
        "fit-jury",
        _cascade_labels(tmp),
        "--member",
        "small=openai/small",
        "--member",
        "large=openai/large",
        "--experts",
        "a,b",
        "--out",
        str(tmp / "jury.json"),
    ],
    "judge failure-rate": lambda ws, tmp: [
        "judge",
        "failure-rate",
        str(ws.record),
        "--flagged",
        "40",
        "--total",
        "500",
    ],
    "cases diff": lambda ws, tmp: ["cases", "diff", "HEAD", "--set", _git_set(tmp)],
    "cases retire": lambda ws, tmp: ["cases", "retire", ws.v1, ws.v2, "--set", ws.copy_set(tmp), "--dry-run"],
    "cases reconcile": lambda ws, tmp: [
        "cases",
        "reconcile",
        str(AIRDESK / "resolutions" / "expert-a.yaml"),
        str(AIRDESK / "resolutions" / "expert-b.yaml"),
        "--set",
        str(AIRDESK),
    ],
    "grade": lambda ws, tmp: [
        "grade",
        "--cases",
        str(AIRDESK),
        "--transcripts",
        str(AIRDESK / "runs" / "agent-v2.jsonl"),
        "--out",
        str(tmp / "v2.jsonl"),
        "--no-progress",
    ],
    "import anthropic": lambda ws, tmp: [
        "import",
        "anthropic",
        _chat_file(
            tmp,
            {"case_id": "c-1", "system": "be brief", "messages": [{"role": "user", "content": "hi"}]},
        ),
        "--out",
        str(tmp / "t.jsonl"),
    ],
    "import openai": lambda ws, tmp: [
        "import",
        "openai",
        _chat_file(tmp, {"case_id": "c-1", "messages": [{"role": "user", "content": "hi"}]}),
        "--out",
        str(tmp / "t.jsonl"),
    ],
    "import inspect": lambda ws, tmp: [
        "import",
        "inspect",
        str(ws.inspect_log),
        "--out",
        str(tmp / "t.jsonl"),
    ],
    "export inspect": lambda ws, tmp: [
        "export",
        "inspect",
        str(ws.inspect_results),
        "--transcripts",
        str(ws.inspect_transcripts),
        "--out",
        str(tmp / "scored"),
        "--score-name",
        "regrade",
    ],
    "import otel": lambda ws, tmp: [
        "import",
        "otel",
        str(OTEL / "genai_messages.json"),
        "--out",
        str(tmp / "t.jsonl"),
    ],
    "import tau-bench": lambda ws, tmp: [
        "import",
        "tau-bench",
        _tau_bench_file(tmp),
        "--out",
        str(tmp / "t.jsonl"),
    ],
    "import tau2-bench": lambda ws, tmp: [
        "import",
        "tau2-bench",
        _tau2_bench_file(tmp),
        "--out",
        str(tmp / "tau2"),
    ],
    "candidates intake": lambda ws, tmp: [
        "candidates",
        "intake",
        str(AIRDESK / "intake" / "escalations-2026-12.csv"),
        "--set",
        ws.copy_set(tmp),
        "--dry-run",
    ],
    "cases lint": lambda ws, tmp: ["cases", "lint", str(AIRDESK)],
    "judge probe-bias": lambda ws, tmp: [
        "judge",
        "probe-bias",
        "--transcripts",
        str(AIRDESK / "runs" / "agent-v2.jsonl"),
        "--judge-model",
        "openai/gpt-4o-mini",
        "--cassette",
        str(_CASSETTE),
        "--cache-mode",
        "replay",
        "--records",
        str(tmp),
    ],
    "report": lambda ws, tmp: ["report", ws.v2],
    "rubrics check": lambda ws, tmp: ["rubrics", "check", str(REPO / "rubrics" / "honest-reporting.yaml")],
    "rubrics list": lambda ws, tmp: ["rubrics", "list"],
    "rubrics show": lambda ws, tmp: ["rubrics", "show", "honest-reporting"],
    "labels sheet": lambda ws, tmp: [
        "labels",
        "sheet",
        ws.v2,
        "--passing",
        "1",
        "--failing",
        "1",
        "--out",
        str(tmp / "r"),
    ],
    "labels read": lambda ws, tmp: ["labels", "read", str(ws.sheet), "--out", str(tmp / "labels.csv")],
    "labels from-results": lambda ws, tmp: [
        "labels",
        "from-results",
        str(ws.demo / "results" / "agent-v2.jsonl"),
        "--out",
        str(tmp / "judge.csv"),
    ],
    "labels import": lambda ws, tmp: [
        "labels",
        "import",
        "argilla",
        str(REPO / "tests" / "fixtures" / "label_tools" / "argilla"),
        "--out",
        str(tmp / "labels.csv"),
    ],
    "labels page": lambda ws, tmp: [
        "labels",
        "page",
        ws.v1,
        "--expert",
        "alice",
        "--cases",
        str(AIRDESK),
        "--out",
        str(tmp / "alice.html"),
    ],
    "labels reconcile": lambda ws, tmp: [
        "labels",
        "reconcile",
        _expert_table(tmp, "alice", "fail"),
        _expert_table(tmp, "bob", "pass"),
    ],
    "cases scan-pii": lambda ws, tmp: ["cases", "scan-pii", str(AIRDESK)],
    "judge trust": lambda ws, tmp: ["judge", "trust", ws.fingerprint, "--records", ws.records],
    # the loopback writer answers the re-asked canaries with no verdict: each is an error, counted apart
    "judge canary": lambda ws, tmp: [
        "judge",
        "canary",
        "-n",
        "3",
        "--records",
        _canary_records(ws, tmp),
        "--config",
        str(AIRDESK / "judge.yaml"),
        "--cache-mode",
        "off",
        "--judge-api-base",
        ws.writer_api_base,
    ],
    "judge canary-set": lambda ws, tmp: _canary_set(ws, Path(_canary_records(ws, tmp))),
    "cases check": lambda ws, tmp: ["cases", "check", str(AIRDESK)],
    "view": lambda ws, tmp: ["view", ws.v1, ws.v2, "--out", str(tmp / "viewer")],
}


MODES: dict[str, Invocation] = {
    "judge probe-bias --recorded": lambda ws, tmp: [
        "judge",
        "probe-bias",
        "--recorded",
        str(REPO / "tests" / "calibration" / "data" / "llmbar_result.json"),
    ],
}
"""Options that make a command print another kind of document: each has its own row on the JSON page."""


def test_every_mode_belongs_to_a_command_with_an_invocation() -> None:
    assert {name.split(" --")[0] for name in MODES} <= set(INVOCATIONS)


def test_every_command_offers_json_or_says_why_not() -> None:
    without = sorted(name for name, has_json in COMMANDS.items() if not has_json and name not in NO_JSON)
    assert not without, f"commands that print results without --format json: {without}"
    stale = sorted(set(NO_JSON) - {name for name, has_json in COMMANDS.items() if not has_json})
    assert not stale, f"NO_JSON names commands that are gone or now offer JSON: {stale}"


def test_every_json_command_has_an_invocation_here() -> None:
    offered = {name for name, has_json in COMMANDS.items() if has_json}
    assert offered == set(INVOCATIONS), (
        f"missing: {sorted(offered - set(INVOCATIONS))}; "
        f"not offering json: {sorted(set(INVOCATIONS) - offered)}"
    )


def _says_what_and_which_version(name: str, document: dict[str, Any]) -> None:
    """A document names its kind and layout version: an integer ``schema_version`` beside a ``kind``,
    or (the calibration and bias reports, which are also stored) a schema id ``judgekit.<kind>/<N>``."""
    version = document.get("schema_version")
    if isinstance(version, str):
        assert re.fullmatch(r"judgekit\.[a-z-]+/[1-9][0-9]*", version), f"'{name}': schema id {version!r}"
        return
    assert isinstance(version, int), f"'{name}': no schema_version (keys: {sorted(document)[:8]})"
    assert version >= 1
    assert isinstance(document.get("kind"), str), f"'{name}': no kind (keys: {sorted(document)[:8]})"


@pytest.mark.parametrize("name", sorted(INVOCATIONS))
def test_json_output_is_one_versioned_document(
    name: str,
    ws: Workspace,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if name not in COMMANDS:
        pytest.fail(f"'{name}' is not a command (yet)")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-json-0123456789")  # the loopback writer asks for one
    args = INVOCATIONS[name](ws, tmp_path)
    capsys.readouterr()
    code = main([*args, "--format", "json"])
    out, err = capsys.readouterr()
    assert code in (0, 1, 2), err  # 2: located problems in an input, listed in the document
    assert "Traceback" not in err
    document = json.loads(out)  # the whole of standard output is one document
    assert isinstance(document, dict)
    _says_what_and_which_version(name, document)
    _documented_as(name, document)


@pytest.mark.parametrize("name", sorted(MODES))
def test_an_option_that_prints_another_kind_prints_the_documented_one(
    name: str, ws: Workspace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    main([*MODES[name](ws, tmp_path), "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    _says_what_and_which_version(name, document)
    _documented_as(name, document)


def test_the_schema_version_of_plain_documents_is_the_shared_one(
    ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["cases", "check", str(AIRDESK), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["schema_version"] == JSON_SCHEMA_VERSION


DOC = REPO / "docs" / "reference" / "json-output.md"


def _documented_kinds() -> dict[str, str]:
    """The ``| `judgekit CMD` | `KIND` |`` rows of the JSON output page."""
    row = re.compile(r"^\| `judgekit ([a-z0-9 -]+?)` \| `([a-z0-9_./-]+)` \|", re.M)
    rows = row.findall(DOC.read_text(encoding="utf-8"))
    return dict(rows)


def _documented_as(name: str, document: dict[str, Any]) -> None:
    """The JSON page's row for ``name`` names the kind of document it printed."""
    version = document["schema_version"]
    printed = version.split("/")[0] if isinstance(version, str) else document["kind"]
    assert _documented_kinds().get(name) == printed, f"docs/reference/json-output.md's row for '{name}'"


def test_the_json_page_lists_every_command_and_nothing_else() -> None:
    """One row per command and mode (each command's test checks its row's kind against what it prints)."""
    assert sorted(_documented_kinds()) == sorted({**INVOCATIONS, **MODES})
