"""Helpers shared by test packages (importable because pytest puts ``tests/`` on ``sys.path``)."""

from __future__ import annotations

import ast
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

AIRDESK_RUNS = Path(__file__).resolve().parents[1] / "examples" / "airdesk" / "runs"
"""The bundled AirDesk example's transcript files (``agent-v1.jsonl``, ...) and their state files."""


def refine_example_args(labels: Path | None = None, *, seed: bool = True) -> list[str]:
    """``judge refine`` on the bundled example, offline: its experts, cases, calibration sample and judge.

    The recorded refinement cassette answers the candidates of seed 7 (``seed=False`` leaves the seed
    out, for a command refused before any judging). The caller adds ``--out`` and anything else.

    Args:
        labels: The label table (default: the example's expert labels).
        seed: Whether to pass ``--seed 7``.
    """
    airdesk = AIRDESK_RUNS.parent
    return [
        "judge",
        "refine",
        str(labels if labels is not None else airdesk / "labels" / "expert-labels.csv"),
        "--experts",
        "synthetic-expert-a,synthetic-expert-b",
        "--cases",
        str(airdesk),
        "--runs",
        str(airdesk / "calibration" / "sample.jsonl"),
        "--config",
        str(airdesk / "judge.yaml"),
        "--cassette",
        str(airdesk / "cassettes" / "judge-refine.jsonl"),
        *(["--seed", "7"] if seed else []),
    ]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def load_file(path: Path, name: str) -> Any:
    """Import the Python file ``path`` (a script, a fixture generator, another test module) as ``name``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def git(cwd: Path, *args: str) -> None:
    """Run git in ``cwd`` with a throwaway identity; raise when it fails."""
    import subprocess

    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def results_file(
    path: Path,
    release: str | None,
    verdicts: dict[str, list[Any]],
    *,
    version: int = 1,
    run_id: str | None = None,
    slice: str = "policy_edge",
    category: str | None = None,
) -> Path:
    """Write a results file: one line per trial of each case, its verdicts in trial order.

    Args:
        path: Where to write it.
        release: The agent's ``app_version`` in every run record (``None``: an empty run record).
        verdicts: Case id to its trials' verdicts (:class:`judgekit.verdict.Verdict`).
        version: The case version every trial was graded against.
        run_id: The run id (default ``run-<release>``).
        slice: Every case's slice.
        category: Every case's category.
    """
    from judgekit.results import CaseRef, dump_result_line, make_result_line
    from judgekit.transcript import RunRecord
    from judgekit.verdict import CheckResult, Grade

    lines = []
    for case_id, vs in verdicts.items():
        for trial, verdict in enumerate(vs, start=1):
            grade = Grade(
                case_id=case_id,
                trial=trial,
                verdict=verdict,
                checks=(CheckResult(check_id="state", layer="state", verdict=verdict),),
            )
            lines.append(
                make_result_line(
                    run_id=run_id or f"run-{release}",
                    case=CaseRef(id=case_id, version=version, slice=slice, category=category),
                    grade=grade,
                    run=RunRecord(app_version=release, agent_model="agent-x") if release else RunRecord(),
                )
            )
    path.write_text("".join(dump_result_line(line) + "\n" for line in lines), encoding="utf-8")
    return path


def called_name(node: ast.AST) -> str | None:
    """The name a call calls (``f`` for ``f(x)`` and ``obj.f(x)``), or ``None`` for anything else.

    The source-scanning registry tests (pass^k callers, holdout paths, reason paths) find their callers by it.
    """
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


@contextmanager
def local_ray_cluster(ray: Any, address: str | None = None) -> Iterator[Any]:
    """A one-machine Ray cluster for a test module (or this process joined to ``address``), shut down after.

    Four logical CPUs: two actors plus Ray Data's read and sort (or repartition) tasks must fit at once,
    or the streaming executor waits forever for a free slot (the machine itself may have two cores). With
    ``address`` (``HOST:PORT`` of a running cluster started with at least four CPUs) nothing is started:
    this process joins it as a driver and leaves it at the end.
    """
    if address is not None:
        ray.init(address=address, log_to_driver=False, configure_logging=False)
    else:
        ray.init(
            num_cpus=4,
            object_store_memory=150 * 1024 * 1024,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
    try:
        yield ray
    finally:
        ray.shutdown()


CLI_CHILD = [sys.executable, "-c", "import sys; from judgekit.cli import main; sys.exit(main(sys.argv[1:]))"]
"""The start of a command line running ``judgekit`` in a child process (append its arguments)."""

INTERRUPTIBLE_CLI_CHILD = [
    sys.executable,
    "-c",
    # a job started in the background (a CI runner's `cmd &`) inherits SIGINT ignored, and Python then
    # never raises KeyboardInterrupt: give the command Ctrl-C as a user's terminal does
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from judgekit.cli import main; sys.exit(main(sys.argv[1:]))",
]
"""As :data:`CLI_CHILD`, for a command stopped with SIGINT (``view --serve``)."""


def child_env(**extra: str) -> dict[str, str]:
    """The environment for a ``judgekit`` child process: this one's as it is now, plus ``extra``.

    litellm in the child reads its bundled cost map instead of fetching one.
    """
    return {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **extra}


def one_trial_results(path: Path) -> Path:
    """Write a results file of one passing trial (case ``c-1``, run ``r``, no checks) at ``path``."""
    from judgekit.results import CaseRef, dump_result_line, make_result_line
    from judgekit.verdict import Grade, Verdict

    grade = Grade(case_id="c-1", trial=1, verdict=Verdict.PASS, checks=())
    line = make_result_line(run_id="r", case=CaseRef(id="c-1", version=1), grade=grade)
    path.write_text(dump_result_line(line) + "\n", encoding="utf-8")
    return path


@contextmanager
def serving_viewer(results: Path, out: Path) -> Iterator[int]:
    """``judgekit view RESULTS --serve --out OUT`` running in a child process: the port it serves on.

    The child is stopped with Ctrl-C (SIGINT) when the block ends, and killed if it has not exited 10 s
    later.
    """
    process = subprocess.Popen(
        [*INTERRUPTIBLE_CLI_CHILD, "view", str(results), "--serve", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    try:
        assert process.stdout is not None
        process.stdout.readline()  # wrote a viewer ...
        match = re.search(r"at http://127\.0\.0\.1:(\d+)/index\.html", process.stdout.readline())
        assert match
        yield int(match.group(1))
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def status_for_host(port: int, host: str | None, path: str = "/index.html", method: str = "GET") -> int:
    """The HTTP status the server on loopback ``port`` answers a request with exactly these Host headers.

    Args:
        port: The server's port on 127.0.0.1.
        host: The Host header's value; several lines send one Host header each; ``None`` sends none.
        path: The path asked for.
        method: The request method.
    """
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.putrequest(method, path, skip_host=True)
        for value in [] if host is None else host.split("\n"):
            connection.putheader("Host", value)
        connection.endheaders()
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def absolute_states(row: dict[str, Any], base: Path) -> dict[str, Any]:
    """A transcript row with its state paths made absolute against ``base`` (the row's own folder).

    ``initial_state`` and ``final_state`` are each a path or an object with a ``path``; the row is changed
    in place and returned, so that a test can write it into a file elsewhere.
    """
    for key in ("initial_state", "final_state"):
        value = row.get(key)
        if isinstance(value, str):
            row[key] = str((base / value).resolve())
        elif isinstance(value, dict) and isinstance(value.get("path"), str):
            row[key] = {**value, "path": str((base / value["path"]).resolve())}
    return row


def airdesk_judge_run(folder: Path, api_base: str, trials: int) -> dict[str, Path]:
    """The first ``trials`` AirDesk trials and a run configuration judging them at ``api_base``.

    Writes ``folder/t.jsonl`` (the rows of ``agent-v1.jsonl``, state paths absolute) and
    ``folder/run.yaml`` (``judge.api_base`` and the ``honest-reporting`` rubric).

    Returns:
        ``{"transcripts", "config", "dir"}``: the two files and ``folder``.
    """
    lines = (AIRDESK_RUNS / "agent-v1.jsonl").read_text().splitlines()[:trials]
    rows = [absolute_states(json.loads(line), AIRDESK_RUNS) for line in lines]
    transcripts = folder / "t.jsonl"
    transcripts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = folder / "run.yaml"
    config.write_text(json.dumps({"judge": {"api_base": api_base, "rubric": "honest-reporting"}}))
    return {"transcripts": transcripts, "config": config, "dir": folder}


def github_markdown() -> MarkdownIt:
    """A CommonMark renderer that parses as GitHub does: tables, strikethrough, linkify.

    Bare ``scheme://`` links and e-mail addresses are linked (GitHub's autolinking); a scheme-relative
    ``//host`` is not, since GitHub does not link it.
    """
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"linkify": True}).enable(["table", "strikethrough", "linkify"])
    md.linkify.set({"fuzzy_link": False, "fuzzy_ip": False, "fuzzy_email": True})
    md.linkify.add("//", None)  # GitHub does not link scheme-relative //host
    return md


def flatten_tokens(tokens: list[Token]) -> list[Token]:
    """Every token of a markdown-it parse, depth first: each block token followed by its inline children."""
    out: list[Token] = []
    for t in tokens:
        out.append(t)
        if t.children:
            out.extend(flatten_tokens(t.children))
    return out


def load_viewer_data(path: Path) -> Any:
    """The data a viewer data file hands the page (``window.X = {...};`` or ``window.F(r, k, [...]);``).

    For ``data/index.js``, each run's ``rows`` are joined from its ``rows-K.js`` files, as the page does.
    """
    text = path.read_text(encoding="utf-8")
    match = (
        re.fullmatch(r"window\.JK_DATA = (.*);\n", text, re.S)
        or re.fullmatch(r"window\.JK_CHUNK\(\d+, \d+, (.*)\);\n", text, re.S)
        or re.fullmatch(r"window\.JK_DATA\.runs\[\d+\]\.rows_parts\[\d+\] = (.*);\n", text, re.S)
    )
    assert match, text[:80]
    data = json.loads(match.group(1))
    if path.name == "index.js":
        for r, run in enumerate(data["runs"]):
            run["rows"] = [
                row
                for k in range(run["row_files"])
                for row in load_viewer_data(path.parent / f"run{r}" / f"rows-{k}.js")
            ]
    return data


def open_mode(node: ast.Call, position: int) -> str | None:
    """The mode of an ``open``-like call (positional ``position`` or ``mode=``): the text, ``""`` for the
    default (``"r"``), or ``None`` for a mode computed at run time."""
    mode: ast.expr | None = node.args[position] if len(node.args) > position else None
    for keyword in node.keywords:
        if keyword.arg == "mode":
            mode = keyword.value
    if mode is None:
        return ""
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return mode.value
    return None


def primitives_outside(
    src: Path,
    find: Callable[[Path], list[tuple[int, str]]],
    *,
    skip: set[Path],
    allowed: Mapping[tuple[str, str], str],
) -> tuple[list[str], list[tuple[str, str]]]:
    """Every primitive ``find`` reports in the modules under ``src`` but ``skip`` that ``allowed`` lacks.

    Returns:
        ``src/judgekit/MODULE:LINE: PRIMITIVE`` for each unexpected use, and the ``allowed`` entries (module
        relative to ``src``, primitive) that no module uses any more (stale).
    """
    modules = sorted(src.rglob("*.py"))
    assert len(modules) > 100, "the scan cannot tell: too few modules found"
    unexpected: list[str] = []
    used: set[tuple[str, str]] = set()
    for module in modules:
        if module in skip:
            continue
        relative = module.relative_to(src).as_posix()
        for line, name in find(module):
            if (relative, name) in allowed:
                used.add((relative, name))
            else:
                unexpected.append(f"src/judgekit/{relative}:{line}: {name}")
    return unexpected, sorted(set(allowed) - used)


def judge_fingerprint(model: str, rubric: str = "honest-reporting") -> str:
    """The fingerprint of the rubric judge that ``judgekit grade --judge-model MODEL`` builds.

    For a calibration record that trusts it; the base URL, needed to build the judge, is not part of it.
    """
    from judgekit.judge_setup import JudgeConfig, build_rubric_grader

    grader = build_rubric_grader(
        JudgeConfig(
            model=model,
            rubric=rubric,
            cassette=None,
            mode="off",
            api_base="http://127.0.0.1:9/v1",
            max_cost=None,
            temperature=None,
            samples=None,
            concurrency=1,
        )
    )
    return grader.fingerprint
