"""The hostile-input suite: every variant in CI or with ``JUDGEKIT_HOSTILE=full``, else a fixed sample.

Each sweep's variants run once per session, in batches in bounded child processes, whichever of its tests
asks first (``hostile/sweep.py``; the ``sweep_store`` fixture below is the session's outcomes). CI
(``CI=true``) runs all of them and the count tests, so every variant holds on every change. A local run
without ``CI`` keeps every ``SAMPLE_EVERY``-th variant test of each parametrised test (always the first, so
every family and every variant the issue names first in its family is kept) and leaves out the count
tests, which would run every variant: about a quarter of the time. ``JUDGEKIT_HOSTILE=full`` asks for the
whole sweep locally, ``JUDGEKIT_HOSTILE=sample`` for the sample in CI. The sample is fixed (by position,
not random), so a failure reproduces.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

import pytest

from hostile.sweep import MARKER, SweepStore, wanted_by

#: Keep one variant in this many when the full sweep is not asked for.
SAMPLE_EVERY = 4

#: The count tests: each tallies its whole sweep (running the variants no test of the session ran).
COUNT_TESTS = frozenset(
    {
        "test_count_of_hostile_case_inputs_tried_and_handled",
        "test_the_count_every_variant_tried_is_handled_correctly",
        "test_every_hostile_variant_was_handled_correctly",
        "test_every_variant_tried_is_neutralised_and_the_counts_are_reported",
        "test_count_of_tamperings_tried_and_detected",
        "test_every_variant_is_counted_correctly",
        "test_count_of_provider_faults_tried_and_handled",
        "test_count_of_markdown_injections_tried_and_neutralised",
        "test_count_of_hostile_paths_tried_and_handled",
        "test_every_viewer_variant_tried_is_handled_correctly",
        "test_count_of_judge_transport_bounds_tried_and_handled",
        "test_count_of_killed_set_edits_tried_and_handled",
        "test_count_of_killed_retries_tried_and_handled",
        "test_count_of_hostile_inspect_logs_tried_and_handled",
    }
)


def full_sweep() -> bool:
    """Whether every hostile variant runs: ``JUDGEKIT_HOSTILE=full``, or ``CI=true`` unless ``=sample``."""
    asked = os.environ.get("JUDGEKIT_HOSTILE", "")
    if asked in {"full", "sample"}:
        return asked == "full"
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker of a sweep's tests (``hostile_sweep(name)``, see ``hostile/sweep.py``)."""
    config.addinivalue_line("markers", f"{MARKER}(name): a test of the hostile sweep ``name``")


@pytest.fixture(scope="session")
def sweep_store(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> SweepStore:
    """The session's hostile outcomes, in a folder every pytest-xdist worker of the session shares.

    Under xdist each worker's temporary root is ``<session root>/popen-gwN``: their parent is the
    session's and no other session's. Without xdist the session's own root serves.
    """
    base = tmp_path_factory.getbasetemp()
    root: Path = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", "single")
    return SweepStore(root / f"sweeps-{run[:8]}", wanted_by(request.session.items))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep a fixed sample of the hostile sweep unless the full sweep is asked for."""
    if full_sweep():
        return
    seen: dict[str, int] = defaultdict(int)
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        if "tests/hostile/" not in item.nodeid:
            kept.append(item)
            continue
        function = item.nodeid.split("::")[-1].split("[")[0]
        if function in COUNT_TESTS:
            dropped.append(item)
            continue
        if "[" in item.nodeid:
            position = seen[item.nodeid.split("[")[0]]
            seen[item.nodeid.split("[")[0]] += 1
            if position % SAMPLE_EVERY:
                dropped.append(item)
                continue
        kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
