"""``judgekit view --serve`` answers only its own loopback names (issue 33, F10: DNS rebinding).

A real server in a child process (``judgekit view --serve``), asked over ``http.client`` with the Host
header a browser would send from each origin.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from judgekit.commands.view import allowed_host
from judgekit.results import CaseRef, dump_result_line, make_result_line
from judgekit.verdict import Grade, Verdict
from support import one_trial_results, serving_viewer, status_for_host


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The port of ``judgekit view RESULTS --serve`` running in a child process."""
    folder = tmp_path_factory.mktemp("serve")
    with serving_viewer(one_trial_results(folder / "r.jsonl"), folder / "v") as port:
        yield port


def test_a_foreign_host_header_is_refused_403(served: int) -> None:
    """F10: the old server answered ``Host: evil.example`` with 200 (the transcripts to any site)."""
    assert status_for_host(served, "evil.example") == 403
    assert status_for_host(served, f"evil.example:{served}") == 403
    assert status_for_host(served, f"127.0.0.1.evil.example:{served}", "/data/index.js") == 403
    assert status_for_host(served, None) == 403
    assert status_for_host(served, "evil.example", method="HEAD") == 403


def test_the_loopback_names_are_answered(served: int) -> None:
    assert status_for_host(served, f"127.0.0.1:{served}") == 200
    assert status_for_host(served, f"localhost:{served}", "/data/index.js") == 200
    assert status_for_host(served, "localhost") == 200
    assert status_for_host(served, f"LocalHost:{served}", method="HEAD") == 200


@pytest.mark.parametrize(
    ("header", "ok"),
    [
        ("127.0.0.1:8000", True),
        ("localhost", True),
        ("LOCALHOST:8000", True),
        ("127.0.0.1:8001", False),
        ("localhost.", False),
        ("[::1]:8000", False),
        ("0.0.0.0:8000", False),
        ("localhost@evil.example", False),
        ("evil.example", False),
        ("", False),
        (None, False),
    ],
)
def test_allowed_host(header: str | None, ok: bool) -> None:
    assert allowed_host(header, 8000) is ok


def test_no_local_path_in_the_page_for_a_relative_results_file(tmp_path: Path) -> None:
    """The run page names the results file by its name, not by the path given on the command line."""
    from judgekit.cli import main

    grade = Grade(case_id="c-1", trial=1, verdict=Verdict.PASS, checks=())
    line = make_result_line(run_id="r", case=CaseRef(id="c-1", version=1), grade=grade)
    results = tmp_path / "deep" / "r.jsonl"
    results.parent.mkdir()
    results.write_text(dump_result_line(line) + "\n", encoding="utf-8")
    assert main(["view", str(results), "--out", str(tmp_path / "v")]) == 0
    index = (tmp_path / "v" / "data" / "index.js").read_text(encoding="utf-8")
    assert str(tmp_path) not in index
    assert '"file":"r.jsonl"' in index
