from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from judgekit import __version__
from judgekit.provenance import (
    NOT_INSTALLED,
    Provenance,
    collect_provenance,
    dependency_versions,
    git_revision,
)
from judgekit.results import CaseRef, dump_result_line, make_result_line, read_results
from judgekit.verdict import Grade, Verdict

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "c1.yaml").write_text("id: c1\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "cases")
    return cases


@needs_git
def test_revision_of_a_clean_then_dirty_case_set(repo: Path):
    commit, dirty, note = git_revision(repo)
    assert re.fullmatch(r"[0-9a-f]{40}", commit or "")
    assert commit == git(repo, "rev-parse", "HEAD")
    assert dirty is False
    assert note is None
    (repo / "c2.yaml").write_text("id: c2\n")
    assert git_revision(repo)[1] is True


@needs_git
def test_outside_git_is_explained(tmp_path: Path):
    folder = tmp_path / "plain"
    folder.mkdir()
    commit, dirty, note = git_revision(folder)
    assert commit is None
    assert dirty is None
    assert "not in a git repository" in (note or "")
    assert "does not exist" in (git_revision(tmp_path / "missing")[2] or "")


def test_dependency_versions_record_missing_ones():
    versions = dependency_versions(["pydantic", "surely-not-a-real-distribution-xyz"])
    assert versions["surely-not-a-real-distribution-xyz"] == NOT_INSTALLED
    import pydantic

    assert versions["pydantic"] == pydantic.VERSION


@needs_git
def test_collect_and_carry_in_a_result_line(repo: Path, tmp_path: Path):
    prov = collect_provenance(
        method="layered:state,rules,route,text",
        seed=7,
        case_set=repo,
        thresholds={"tpr_lower_bound": 0.8, "untrusted": "fail_only"},
    )
    assert prov.judgekit_version == __version__
    assert prov.case_set_revision == git(repo, "rev-parse", "HEAD")
    assert set(prov.dependencies) >= {"numpy", "litellm", "pydantic"}
    line = make_result_line(
        run_id="r1",
        case=CaseRef(id="c1", version=1),
        grade=Grade(case_id="c1", trial=1, verdict=Verdict.PASS),
        provenance=prov,
    )
    out = tmp_path / "results.jsonl"
    out.write_text(dump_result_line(line) + "\n")
    read = read_results(out)
    assert read.problems == []
    assert read.lines[0].provenance == prov
    assert json.loads(out.read_text())["provenance"]["seed"] == 7


def test_lines_without_provenance_still_read(tmp_path: Path):
    line = make_result_line(
        run_id="r1",
        case=CaseRef(id="c1", version=1),
        grade=Grade(case_id="c1", trial=1, verdict=Verdict.FAIL),
    )
    data = json.loads(dump_result_line(line))
    data.pop("provenance", None)
    out = tmp_path / "old.jsonl"
    out.write_text(json.dumps(data) + "\n")
    read = read_results(out)
    assert read.problems == []
    assert read.lines[0].provenance is None


def test_no_case_set_is_noted():
    prov = collect_provenance(method="m", dependencies=[])
    assert prov.case_set_revision is None
    assert prov.case_set_revision_note == "no case set was given"
    assert prov.dependencies == {}


def test_unknown_fields_are_refused():
    with pytest.raises(ValueError, match="extra"):
        Provenance.model_validate({"method": "m", "colour": "red"})


def test_the_runner_records_provenance_in_every_line(tmp_path: Path):
    import asyncio

    from judgekit.caseset import load_case_set
    from judgekit.graders.contract import GraderSpec
    from judgekit.runner import plan_trials, prepare_output, run_trials

    root = tmp_path / "set"
    root.mkdir()
    for cid in ("c1", "c2"):
        (root / f"{cid}.yaml").write_text(f"id: {cid}\nversion: 1\nslice: s\ninput: hello {cid}\n")
    case_set = load_case_set(root)
    transcripts = tmp_path / "t.jsonl"
    transcripts.write_text(
        "".join(
            json.dumps({"case_id": c, "trial": t, "messages": []}) + "\n"
            for c in ("c1", "c2")
            for t in (1, 2)
        )
    )
    plan = plan_trials(case_set, [transcripts])

    class Grader:
        spec = GraderSpec(name="always-pass")

        async def grade(self, case, transcript):
            return Grade(case_id=case.id, trial=transcript.trial, verdict=Verdict.PASS)

    out = tmp_path / "r.jsonl"
    state = prepare_output(out, plan, resume=False, judge_fingerprint=None)
    prov = collect_provenance(
        method="layered:state,rules,route,text", seed=3, case_set=root, dependencies=["numpy"]
    )
    asyncio.run(run_trials(plan, Grader(), out=out, state=state, provenance=prov))
    lines = read_results(out).lines
    assert len(lines) == 4
    assert all(line.provenance == prov for line in lines)


@needs_git
def test_a_case_set_named_as_text(repo: Path):
    assert git_revision(str(repo))[0] == git(repo, "rev-parse", "HEAD")
    prov = collect_provenance(method="m", case_set=str(repo), dependencies=[])
    assert prov.case_set_revision == git(repo, "rev-parse", "HEAD")
