"""What a command imports at start: only what it uses (no timing here; bench/bench_startup.py times it).

Each command runs in a fresh interpreter, as the installed ``judgekit`` script runs it, and reports the
modules it ended with. Grading the bundled example without a judge imports no provider library
(:data:`judgekit.judges.PROVIDER_LIBRARIES`), no SciPy, scikit-learn or Jinja, and not the ``cel``
package's REPL; ``judgekit --help`` imports none of those, nor pydantic, numpy or YAML, and builds only
the top-level commands; ``judgekit grade --help`` builds ``grade`` alone; ``judgekit report`` reads the
configuration without importing the judge client (or asyncio); ``judgekit compare`` imports no SciPy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from judgekit.judges import PROVIDER_LIBRARIES

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "airdesk"
_RUN = """
import json, sys
from judgekit.cli import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w") as handle:
    json.dump({"code": code, "modules": sorted(sys.modules)}, handle)
"""
#: Libraries no command below needs: statistics, machine learning, templates, the cel package's REPL.
HEAVY = ("scipy", "sklearn", "jinja2", "prompt_toolkit", "krippendorff")


def _modules(tmp_path: Path, *args: str) -> tuple[int, set[str]]:
    """Run ``judgekit ARGS`` in a fresh interpreter; its exit code and every module it had imported."""
    report = tmp_path / "modules.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUDGEKIT_")}
    subprocess.run(
        [sys.executable, "-c", _RUN, str(report), *args],
        cwd=tmp_path,
        env=env,
        check=False,
        capture_output=True,
        timeout=300,
    )
    found = json.loads(report.read_text(encoding="utf-8"))
    return found["code"], set(found["modules"])


def _grade_example(tmp_path: Path, out: Path, *options: str) -> tuple[int, set[str]]:
    """``judgekit grade`` of the bundled example's second run into ``out``, without a judge."""
    transcripts = str(EXAMPLE / "runs" / "agent-v2.jsonl")
    grade = ("grade", "--cases", str(EXAMPLE), "--transcripts", transcripts, "--out", str(out))
    return _modules(tmp_path, *grade, *options)


def _tops(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


def test_the_provider_list_names_what_the_judge_client_imports() -> None:
    client = (ROOT / "src" / "judgekit" / "judges" / "client.py").read_text(encoding="utf-8")
    transport = (ROOT / "src" / "judgekit" / "judges" / "transport.py").read_text(encoding="utf-8")
    assert "import litellm" in client
    for library in ("httpx", "aiohttp"):
        assert f"import {library}" in transport
    assert {"litellm", "httpx", "aiohttp", "openai", "tiktoken"} <= set(PROVIDER_LIBRARIES)


@pytest.mark.parametrize("gate", [(), ("--fail-under", "0.1")], ids=["plain", "gated"])
def test_grading_without_a_judge_imports_no_provider_library(tmp_path: Path, gate: tuple[str, ...]) -> None:
    out = tmp_path / "results.jsonl"
    code, modules = _grade_example(tmp_path, out, *gate)
    assert code in (0, 1)
    assert len(out.read_text(encoding="utf-8").splitlines()) == 104  # every trial was graded
    assert "judgekit.expressions" in modules  # the example's rules were compiled with cel
    assert not _tops(modules) & {*PROVIDER_LIBRARIES, *HEAVY}, sorted(
        _tops(modules) & {*PROVIDER_LIBRARIES, *HEAVY}
    )
    assert "typer.rich_utils" not in modules  # help rendering is not loaded to run a command
    assert "judgekit.calibration.trust" not in modules  # no judge: no calibration records to read
    if not gate:  # numpy waits for a report of the run (a gate reads the run back)
        assert "numpy" not in _tops(modules)


def test_reporting_a_run_imports_no_judge_client(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    code, _ = _grade_example(tmp_path, results)
    assert code in (0, 1)
    code, modules = _modules(tmp_path, "report", str(results), "--output", str(tmp_path / "report.md"))
    assert code == 0
    assert (tmp_path / "report.md").read_text(encoding="utf-8").startswith("#")
    assert "judgekit.settings" in modules  # the configuration was read: its judge limits come without
    assert not {"judgekit.judges.client", "judgekit.judges.transport", "asyncio"} & modules
    assert not _tops(modules) & {*PROVIDER_LIBRARIES, *HEAVY}


def test_comparing_two_runs_imports_no_scipy(tmp_path: Path) -> None:
    # the sign test and McNemar's are exact binomial tests computed here (judgekit.stats), not SciPy's
    runs = []
    for name in ("agent-v1.jsonl", "agent-v2.jsonl"):
        out = tmp_path / name
        transcripts = str(EXAMPLE / "runs" / name)
        code, _ = _modules(
            tmp_path, "grade", "--cases", str(EXAMPLE), "--transcripts", transcripts, "--out", str(out)
        )
        assert code in (0, 1)
        runs.append(str(out))
    code, modules = _modules(tmp_path, "compare", *runs, "--output", str(tmp_path / "compare.md"))
    assert code in (0, 1)
    assert "sign test p" in (tmp_path / "compare.md").read_text(encoding="utf-8")
    assert "judgekit.stats" in modules
    assert not _tops(modules) & {*PROVIDER_LIBRARIES, *HEAVY}, sorted(
        _tops(modules) & {*PROVIDER_LIBRARIES, *HEAVY}
    )


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_imports_only_the_command_line(tmp_path: Path, flag: str) -> None:
    code, modules = _modules(tmp_path, flag)
    assert code == 0
    assert not _tops(modules) & {*PROVIDER_LIBRARIES, *HEAVY, "numpy", "pydantic", "yaml", "cel"}
    built = {name.rsplit(".", 1)[1] for name in modules if name.startswith("judgekit.commands.")}
    # the top-level commands' modules (runs, view, calibrate, demo, config), not the groups' commands
    assert {"runs", "view", "calibrate", "demo", "config"} <= built
    assert not built & {"golden", "growing", "trust", "contamination", "canary", "refine", "jury", "lint"}


def test_a_command_s_help_builds_that_command_alone(tmp_path: Path) -> None:
    code, modules = _modules(tmp_path, "grade", "--help")
    assert code == 0
    commands = {name.rsplit(".", 1)[1] for name in modules if name.startswith("judgekit.commands.")}
    assert "runs" in commands
    assert not commands & {"calibrate", "golden", "growing", "trust", "view", "demo", "contamination"}
    assert not _tops(modules) & {*PROVIDER_LIBRARIES, *HEAVY}
