"""A jury of three scripted judges over real HTTP: ``grade --jury``, ``calibrate --jury``, trust, resume.

One loopback OpenAI-compatible server answers for three model names. Each of 60 cases has one trial
whose reply says ``T<i>``; the truth is pass for odd ``i``. Each member errs on a set of cases: with
*correlated* errors the three err on (nearly) the same cases, with *uncorrelated* errors on disjoint ones.
The results file's judge notes give the members' and the jury's verdicts; with two experts who label the
truth they make a label table (the documented long format) that ``calibrate --jury`` measures.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judgekit.cli import main
from judges.server import JudgeServer, Reply, verdict_reply

N = 60
MODELS = ("judge-a", "judge-b", "judge-c")
RUBRIC = """\
id: jury-test
version: '1'
criteria:
  - id: polite
    text: The agent is polite.
    critical: false
"""
POLICY = """\
min_items: 50
bootstrap: {resamples: 200, seed: 0}
"""

# the cases each member gets wrong
UNCORRELATED = {
    "judge-a": set(range(0, N, 10)),
    "judge-b": set(range(3, N, 10)),
    "judge-c": set(range(6, N, 10)),
}
CORRELATED = {
    "judge-a": set(range(0, N, 10)),
    "judge-b": set(range(0, N, 10)),
    "judge-c": set(range(0, N, 10)) | {5},
}


def truth(i: int) -> str:
    return "pass" if i % 2 else "fail"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code or 0, out.out, out.err


def script(wrong: dict[str, set[int]]) -> Callable[[dict[str, Any], int], Reply]:
    def answer(body: dict[str, Any], _i: int) -> Reply:
        match = re.search(r"REPLY-T(\d+)-", json.dumps(body["messages"]))
        assert match, "the transcript reaches the judge"
        i = int(match.group(1))
        right = truth(i)
        said = ("fail" if right == "pass" else "pass") if i in wrong[body["model"]] else right
        return Reply(content=verdict_reply(said))

    return answer


def workspace(tmp_path: Path, server: JudgeServer, aggregation: str = "majority") -> Path:
    cases = tmp_path / "golden" / "cases"
    cases.mkdir(parents=True)
    for i in range(N):
        (cases / f"c{i}.yaml").write_text(f"id: c{i}\nversion: 1\ninput: Hello {i}\n")
    (tmp_path / "rubric.yaml").write_text(RUBRIC)
    (tmp_path / "policy.yaml").write_text(POLICY)
    (tmp_path / "run.yaml").write_text(json.dumps({"judge": {"api_base": server.api_base}}))
    write_jury(tmp_path / "jury.yaml", aggregation)
    rows = [
        {
            "case_id": f"c{i}",
            "trial": 1,
            "messages": [
                {"role": "user", "content": f"Hello {i}"},
                {"role": "assistant", "content": f"REPLY-T{i}- Hello."},
            ],
        }
        for i in range(N)
    ]
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "records").mkdir()
    return tmp_path


def write_jury(path: Path, aggregation: str, models: tuple[str, ...] = MODELS) -> None:
    members = "".join(f"  - {{name: {m}, model: openai/{m}}}\n" for m in models)
    path.write_text(f"aggregation: {aggregation}\nmembers:\n{members}")


def grade(
    capsys: pytest.CaptureFixture[str], ws: Path, *extra: str, jury: bool = True
) -> tuple[int, str, str]:
    """``judgekit grade`` on the workspace, with ``--jury jury.yaml`` unless ``jury`` is false."""
    return run(
        capsys,
        "grade",
        "--cases",
        str(ws / "golden"),
        "--transcripts",
        str(ws / "t.jsonl"),
        "--out",
        str(ws / "r.jsonl"),
        "--config",
        str(ws / "run.yaml"),
        "--rubric",
        str(ws / "rubric.yaml"),
        "--records",
        str(ws / "records"),
        "--no-progress",
        *(("--jury", str(ws / "jury.yaml")) if jury else ()),
        *extra,
    )


def polite_notes(ws: Path) -> dict[str, dict[str, Any]]:
    """Each case's judge note on the polite criterion (the note holding the fingerprint)."""
    notes = {}
    for text in (ws / "r.jsonl").read_text().splitlines():
        line = json.loads(text)
        (check,) = [c for c in line["checks"] if c["check_id"] == "criterion:polite"]
        notes[line["case"]["id"]] = next(
            e["data"] for e in check["evidence"] if e["kind"] == "note" and "fingerprint" in e["data"]
        )
        notes[line["case"]["id"]]["verdict"] = check["verdict"]
    return notes


def label_table(ws: Path) -> Path:
    """The jury's, each member's and two experts' labels, in the long format calibrate reads."""
    path = ws / "labels.csv"
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["item_id", "criterion", "case_id", "rater", "label", "fingerprint"])
        for case, note in sorted(polite_notes(ws).items()):
            i = int(case[1:])
            out.writerow([case, "polite", case, "jury", note["verdict"], note["fingerprint"]])
            for member in note["jury"]["members"]:
                out.writerow([case, "polite", case, member["name"], member["verdict"], member["fingerprint"]])
            for expert in ("alice", "bob"):
                out.writerow([case, "polite", case, expert, truth(i), ""])
    return path


def calibrate_args(ws: Path) -> list[str]:
    """``judgekit calibrate`` of the rater ``jury`` as the workspace's jury, against alice and bob."""
    return [
        "calibrate",
        str(label_table(ws)),
        "--judge",
        "jury",
        "--jury",
        str(ws / "jury.yaml"),
        "--experts",
        "alice,bob",
        "--policy",
        str(ws / "policy.yaml"),
    ]


def calibrate(capsys: pytest.CaptureFixture[str], ws: Path) -> tuple[int, dict[str, Any], str]:
    code, out, err = run(capsys, *calibrate_args(ws), "--records", str(ws / "records"), "--format", "json")
    return code, json.loads(out), err


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-jury-test")


def test_uncorrelated_members_give_three_effective_votes_and_a_jury_that_pays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], serve: Any
) -> None:
    server = serve(script(UNCORRELATED))
    ws = workspace(tmp_path, server)
    code, _, err = grade(capsys, ws)
    assert code in (0, 1), err
    assert sorted({r["model"] for r in server.requests}) == sorted(MODELS)
    assert len(server.requests) == 3 * N  # every member asked once per criterion
    notes = polite_notes(ws)
    # the majority never errs: no two members are wrong on the same case
    assert all(n["verdict"] == truth(int(c[1:])) for c, n in notes.items())
    code, report, err = calibrate(capsys, ws)
    assert code == 0, err  # the jury is trusted under its own fingerprint
    jury = report["jury"]
    assert [m["name"] for m in jury["members"]] == list(MODELS)
    # judge-a and judge-c err on even cases (fails missed), judge-b on odd ones (passes called fails)
    rates = {"judge-a": (0.8, 1.0), "judge-b": (1.0, 0.8), "judge-c": (0.8, 1.0)}
    for member in jury["members"]:
        assert (member["decided"], member["wrong"]) == (N, 6)
        assert member["agreement"]["percent_agreement"]["value"] == pytest.approx(0.9)
        binary = member["agreement"]["binary"]
        assert (binary["tpr"]["value"], binary["tnr"]["value"]) == pytest.approx(rates[member["name"]])
    assert report["report"]["judge_vs_consensus"]["percent_agreement"]["value"] == 1.0
    # disjoint errors: phi = -p^2 / (p (1 - p)) = -1/9 for p = 0.1; negative counts as independence
    assert all(c["phi"] == pytest.approx(-1 / 9) for c in jury["correlations"])
    assert jury["effective_votes"] == pytest.approx(3.0)
    assert jury["pays"] is True
    assert jury["finding"].startswith("the jury pays: its kappa 1.000")


def test_correlated_members_give_one_effective_vote_and_a_jury_no_better_than_its_best_member(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], serve: Any
) -> None:
    server = serve(script(CORRELATED))
    ws = workspace(tmp_path, server)
    code, _, err = grade(capsys, ws)
    assert code in (0, 1), err
    code, report, err = calibrate(capsys, ws)
    jury = report["jury"]
    phis = {(c["a"], c["b"]): c["phi"] for c in jury["correlations"]}
    assert phis[("judge-a", "judge-b")] == pytest.approx(1.0)
    # judge-c errs on judge-a's 6 cases and one more: phi = (6 * 53 - 0 * 1) / sqrt(6 * 54 * 7 * 53)
    phi = 318 / (6 * 54 * 7 * 53) ** 0.5
    assert phis[("judge-a", "judge-c")] == pytest.approx(phi)
    assert phis[("judge-b", "judge-c")] == pytest.approx(phi)
    rho = (1.0 + 2 * phi) / 3
    assert jury["mean_error_correlation"] == pytest.approx(rho)
    assert jury["effective_votes"] == pytest.approx(3 / (1 + 2 * rho))
    assert jury["effective_votes"] < 1.05
    assert report["report"]["judge_vs_consensus"]["percent_agreement"]["value"] == pytest.approx(0.9)
    assert jury["pays"] is False
    assert jury["best_member"] == "judge-a"  # judge-a and judge-b tie: the first in the jury's order
    assert jury["finding"] == (
        "the jury is no better than its best member judge-a: its kappa 0.800 (interval from 0.615) is not "
        "above judge-a's 0.800; judge-a alone would do at a fraction of the cost"
    )
    assert code == 1, err  # agreement 0.9: the lower bound of TPR is below 0.8
    assert "rater(s) not used" not in json.dumps(report["report"]["notes"])


def test_the_markdown_report_has_the_jury_section(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], serve: Any
) -> None:
    ws = workspace(tmp_path, serve(script(CORRELATED)))
    assert grade(capsys, ws)[0] in (0, 1)
    code = main([*calibrate_args(ws), "--no-record"])
    out = capsys.readouterr().out
    assert code == 1  # 0.9 agreement: TPR's lower bound is below 0.8
    assert "## Jury" in out
    assert "| `judge-a` | 60 | 6 |" in out
    assert "| `judge-a` · `judge-b` | 60 | 6 | 1.000 |" in out
    assert "Effective independent votes: **1.0" in out
    assert "**The jury is no better than its best member judge-a" in out
    assert "rater(s) not used" not in out


def test_the_jury_fingerprint_is_what_trust_asks_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], serve: Any
) -> None:
    """A record for the jury trusts the jury and nothing else: not a member alone, not another jury."""
    server = serve(script(UNCORRELATED))
    ws = workspace(tmp_path, server)
    assert grade(capsys, ws)[0] in (0, 1)
    notes = polite_notes(ws)
    jury_fp = notes["c0"]["fingerprint"]
    member_fps = [m["fingerprint"] for m in notes["c0"]["jury"]["members"]]
    assert len({jury_fp, *member_fps}) == 4
    assert calibrate(capsys, ws)[0] == 0
    code, out, _ = run(capsys, "judge", "trust", jury_fp, "--records", str(ws / "records"))
    assert (code, out.split(":")[0]) == (0, "trusted")
    for member in member_fps:
        code, out, _ = run(capsys, "judge", "trust", member, "--records", str(ws / "records"))
        assert code == 1
        assert out.startswith("untrusted: no calibration record for fingerprint")
    # grading again with the same jury: every verdict is trusted by that record
    (ws / "r.jsonl").unlink()
    code, _, err = grade(capsys, ws)
    assert f"judge {jury_fp[:12]}: trusted" in err
    assert all(json.loads(x)["checks"] for x in (ws / "r.jsonl").read_text().splitlines())
    trusts = {
        c["trust"]
        for x in (ws / "r.jsonl").read_text().splitlines()
        for c in json.loads(x)["checks"]
        if c["check_id"] == "criterion:polite"
    }
    assert trusts == {"trusted"}
    # the same members under any_fail are another jury: the record does not trust it
    write_jury(ws / "jury.yaml", "any_fail")
    (ws / "r.jsonl").unlink()
    code, _, err = grade(capsys, ws)
    assert re.search(r"judge [0-9a-f]{12}: untrusted", err)
    assert f"judge {jury_fp[:12]}" not in err


def test_resume_notices_a_changed_jury(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], serve: Any
) -> None:
    server = serve(script(UNCORRELATED))
    ws = workspace(tmp_path, server)
    assert grade(capsys, ws)[0] in (0, 1)
    calls = len(server.requests)
    write_jury(ws / "jury.yaml", "majority", ("judge-a", "judge-b", "judge-d"))
    code, _, err = grade(capsys, ws, "--resume")
    assert code == 2
    assert "it was graded differently from this run" in err
    assert "graded by another judge fingerprint" in err
    assert len(server.requests) == calls
    write_jury(ws / "jury.yaml", "majority")  # the same jury again: nothing left to grade
    code, _, err = grade(capsys, ws, "--resume")
    assert code in (0, 1), err
    assert len(server.requests) == calls


def test_the_first_member_is_the_judge_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], serve: Any
) -> None:
    ws = workspace(tmp_path, serve(script(UNCORRELATED)))
    code, _, err = grade(capsys, ws, "--judge-model", "openai/judge-b")
    assert code == 2
    assert (
        "judge setting jury: the jury's first member judge-a judges with openai/judge-a, but the judge model "
        "is openai/judge-b" in err
    )


def test_a_jury_and_a_cascade_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], serve: Any
) -> None:
    ws = workspace(tmp_path, serve(script(UNCORRELATED)))
    cascade = {
        "target": 0.9,
        "delta": 0.05,
        "calibration_items": 1,
        "human_share": 0.0,
        "stages": [
            {
                "name": "a",
                "model": "openai/judge-a",
                "threshold": 1.0,
                "delta": 0.05,
                "reached": 1,
                "kept": 1,
                "agreed": 1,
                "agreement_lower_bound": 0.5,
                "coverage": 1.0,
            }
        ],
    }
    (ws / "cascade.json").write_text(json.dumps(cascade))
    code, _, err = grade(capsys, ws, "--cascade", str(ws / "cascade.json"))
    assert code == 2
    assert "a criterion is routed through a cascade or asked of a jury, not both" in err


def test_a_jury_in_the_run_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], serve: Any
) -> None:
    """``judge.jury`` in the run configuration, without judge.model: the first member is the judge."""
    server = serve(script(UNCORRELATED))
    ws = workspace(tmp_path, server, "any_fail")
    (ws / "run.yaml").write_text(
        json.dumps({"judge": {"api_base": server.api_base, "jury": str(ws / "jury.yaml")}})
    )
    code, _, err = grade(capsys, ws, jury=False)
    assert code in (0, 1), err
    notes = polite_notes(ws)
    assert {n["jury"]["aggregation"] for n in notes.values()} == {"any_fail"}
    # any_fail: a pass needs all three; every case one member gets wrong on a pass becomes a fail
    wrong = set().union(*UNCORRELATED.values())
    for case, note in notes.items():
        i = int(case[1:])
        expected = "fail" if truth(i) == "fail" or i in wrong else "pass"
        assert note["verdict"] == expected, case


def test_a_configured_jury_is_a_known_fingerprint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A jury in the project configuration (no judge.model) is the configured judge a prefix can name."""
    from judgekit.judge_setup import JudgeConfig, build_rubric_grader

    write_jury(tmp_path / "jury.yaml", "any_fail")
    base = "http://127.0.0.1:9/v1"  # never called: the judge is only built for its fingerprint
    (tmp_path / "judgekit.toml").write_text(f'[judge]\njury = "jury.yaml"\napi_base = "{base}"\n')
    monkeypatch.chdir(tmp_path)
    config = JudgeConfig(model="openai/judge-a", jury=tmp_path / "jury.yaml", api_base=base)
    jury_fp = build_rubric_grader(config).fingerprint
    code, out, err = run(capsys, "judge", "trust", jury_fp[:12])
    assert code == 1, err
    assert out.startswith(f"untrusted: no calibration record for fingerprint {jury_fp[:12]}")
    code, _, err = run(capsys, "judge", "trust", "0123456789ab")
    assert code == 2
    assert f"the configured judge jury {tmp_path / 'jury.yaml'} (" in err


def test_the_html_report_has_the_jury_section(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], serve: Any
) -> None:
    ws = workspace(tmp_path, serve(script(UNCORRELATED)))
    assert grade(capsys, ws)[0] in (0, 1)
    code = main([*calibrate_args(ws), "--no-record", "--format", "html"])
    out = capsys.readouterr().out
    assert code == 0
    assert "<h2>Jury</h2>" in out
    assert "<strong>The jury pays: its kappa 1.000" in out
    assert '<tr><td>judge-a</td><td class="num">60</td><td class="num">6</td>' in out
    assert "Effective independent votes: <strong>3.00</strong> of 3" in out


def test_labels_from_results_writes_each_members_rows_for_calibrate_jury(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], serve: Any
) -> None:
    """The documented path: grade with the jury, labels from-results --join the experts, calibrate --jury."""
    ws = workspace(tmp_path, serve(script(CORRELATED)))
    assert grade(capsys, ws)[0] in (0, 1)
    experts = ws / "experts.csv"
    experts.write_text(
        "item_id,criterion,case_id,rater,label\n"
        + "".join(f"c{i}#1,polite,c{i},{e},{truth(i)}\n" for i in range(N) for e in ("alice", "bob"))
    )
    out = ws / "table.csv"
    code, text, err = run(
        capsys, "labels", "from-results", str(ws / "r.jsonl"), "--out", str(out), "--join", str(experts)
    )
    assert code == 0, err
    jury_fp = polite_notes(ws)["c0"]["fingerprint"]
    raters = {row["rater"] for row in csv.DictReader(out.open())}
    assert raters == {f"judge-{jury_fp[:12]}", *MODELS, "alice", "bob"}
    code, text, err = run(
        capsys,
        "labels",
        "from-results",
        str(ws / "r.jsonl"),
        "--out",
        str(out),
        "--join",
        str(experts),
        "--format",
        "json",
    )
    document = json.loads(text)
    assert (document["rows"], document["members"]) == (N, dict.fromkeys(MODELS, N))
    assert "--jury JURY_FILE" in document["next"]
    code, text, err = run(
        capsys,
        "calibrate",
        str(out),
        "--judge",
        f"judge-{jury_fp[:12]}",
        "--jury",
        str(ws / "jury.yaml"),
        "--experts",
        "alice,bob",
        "--policy",
        str(ws / "policy.yaml"),
        "--no-record",
        "--format",
        "json",
    )
    report = json.loads(text)
    assert report["fingerprint"] == jury_fp  # from the table's fingerprint column
    assert [m["name"] for m in report["jury"]["members"]] == list(MODELS)
    assert report["jury"]["effective_votes"] < 1.05
