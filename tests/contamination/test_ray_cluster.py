"""The Arrow-batch scanning core on a real (local) Ray cluster, as a multi-terabyte scan would run it.

Ray Data's ``map_batches`` runs :class:`~judgekit.contamination.arrow.ArrowScanner` in worker processes of
a local cluster started by the test; the combined findings must equal an in-process scan of the same
records. Ray is a development dependency (and the ``ray`` extra); outside CI the test skips without it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from contamination.conftest import CLEAN_TEXTS, DENVER, KEY_BYTES, OPENING, chat
from judgekit.contamination.arrow import ArrowScanner, scan_record_batch, summarise_findings
from judgekit.contamination.index import ContaminationIndex, Key, write_index
from judgekit.contamination.scan import Matcher
from support import local_ray_cluster

if os.environ.get("CI") == "true":
    import ray
else:
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'judgekit-agents[ray]')")


@pytest.fixture(scope="module")
def local_cluster() -> Iterator[Any]:
    with local_ray_cluster(ray) as cluster:
        yield cluster


def _records() -> list[dict[str, Any]]:
    rows = [{"id": f"r{i:05d}", **chat(CLEAN_TEXTS[i % 4])} for i in range(3000)]
    rows[17] = {"id": "r00017", **chat("sys", f"quoting a customer: {OPENING} -- end")}
    rows[1501] = {"id": "r01501", **chat(DENVER)}
    rows[2999] = {"id": "r02999", **chat("JUDGEKIT-CANARY-TESTSET")}
    return rows


def _summary(result: Any) -> dict[str, Any]:
    return {
        "leaks": {
            cid: (cl.records, sorted(loc.file for loc in cl.locations)) for cid, cl in result.leaks.items()
        },
        "canaries": {c: cl.records for c, cl in result.canaries.items()},
    }


def test_map_batches_on_a_local_ray_cluster_equals_the_in_process_scan(
    tmp_path: Path, index: ContaminationIndex, key: Key, local_cluster: Any
) -> None:
    index_path = tmp_path / "golden.jkc"
    write_index(index, index_path, key)
    key_file = tmp_path / "key"
    key_file.write_bytes(KEY_BYTES)
    table = pa.Table.from_pylist(_records())

    dataset = local_cluster.data.from_arrow(table).repartition(6)
    findings = dataset.map_batches(
        ArrowScanner,
        fn_constructor_kwargs={"index_path": str(index_path), "key_file": str(key_file), "id_column": "id"},
        batch_format="pyarrow",
        batch_size=250,
        concurrency=2,
    )
    distributed = summarise_findings(local_cluster.get(findings.to_arrow_refs()))

    local = summarise_findings([scan_record_batch(table, Matcher(index, key), id_column="id")])
    assert _summary(distributed) == _summary(local)
    assert _summary(distributed) == {
        "leaks": {"gs-031": (1, ["r00017"]), "gs-044": (1, ["r01501"])},
        "canaries": {"JUDGEKIT-CANARY-TESTSET": 1},
    }
    assert distributed.leaks["gs-031"].kinds["shingle"] == 1
    assert distributed.leaks["gs-044"].kinds["exact"] == 1
