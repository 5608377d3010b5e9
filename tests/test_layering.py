"""Imports go one way: the import-linter contracts in pyproject.toml hold, and no module is in a cycle.

``python3 dev.py test`` runs ``lint-imports`` and the cycle check before pytest; these tests run the same
contracts and the same cycle script so that pytest alone also catches a violation.
"""

from __future__ import annotations

import copy
import os
import re
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import grimp
import pytest
from importlinter import api
from importlinter.contracts.layers import LayersContract

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"


def _config() -> dict[str, Any]:
    return api.read_configuration(str(PYPROJECT))


def _contracts() -> list[LayersContract]:
    config = _config()
    contracts = []
    for options in config["contracts_options"]:
        assert options["type"] == "layers", f"{options['id']}: only layers contracts are expected here"
        contracts.append(LayersContract(options["name"], config["session_options"], options))
    return contracts


def _contract(contract_id: str) -> LayersContract:
    config = _config()
    (options,) = [o for o in config["contracts_options"] if o["id"] == contract_id]
    return LayersContract(options["name"], config["session_options"], options)


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("judgekit", include_external_packages=False, cache_dir=None)


def _broken(check: Any) -> str:
    lines = []
    for dependency in check.metadata.get("invalid_dependencies", []):
        lines.append(f"{dependency['importer']} is not allowed to import {dependency['imported']}:")
        for route in dependency["routes"]:
            for link in route["chain"]:
                where = ", ".join(f"l.{n}" for n in link["line_numbers"] if n is not None)
                lines.append(f"    {link['importer']} -> {link['imported']} ({where})")
    lines.extend(f"not placed in a layer: {m}" for m in sorted(check.metadata.get("undeclared_modules", ())))
    return "\n".join(lines)


def _layer_modules(contract: LayersContract) -> list[list[str]]:
    """The contract's layers, top first, as full module names."""
    containers = [str(c) for c in contract.containers or []]
    out = []
    for layer in contract.layers:  # type: ignore[attr-defined]
        out.append(sorted(f"{c}.{tail.name}" for c in containers for tail in layer.module_tails))
    return out


def test_the_contracts_are_all_layers_contracts_with_ids() -> None:
    ids = [o["id"] for o in _config()["contracts_options"]]
    assert ids == ["layers", "io", "graders"]


@pytest.mark.parametrize("contract_id", ["layers", "io", "graders"])
def test_contract_is_kept(graph: grimp.ImportGraph, contract_id: str) -> None:
    check = _contract(contract_id).check(copy.deepcopy(graph), verbose=False)
    assert check.kept, _broken(check)


def test_the_main_contract_runs_from_the_command_line_down_to_verdicts() -> None:
    layers = _layer_modules(_contract("layers"))
    assert layers[0] == ["judgekit.cli"]
    assert layers[1] == ["judgekit.commands"]
    assert layers[-1] == [
        "judgekit.errors",
        "judgekit.stats",
        "judgekit.textnorm",
        "judgekit.verdict",
        "judgekit.version",
    ]


def test_every_module_is_placed_in_a_layer(graph: grimp.ImportGraph) -> None:
    placed = [m for layer in _layer_modules(_contract("layers")) for m in layer]
    unplaced = sorted(
        m
        for m in graph.modules
        if m != "judgekit" and not any(m == p or m.startswith(f"{p}.") for p in placed)
    )
    # A package split across layers (io/) is itself in none: its __init__ must then import nothing.
    split = {m for m in unplaced if any(p.startswith(f"{m}.") for p in placed)}
    assert sorted(set(unplaced) - split) == []
    for package in sorted(split):
        imported = sorted(graph.find_modules_directly_imported_by(package))
        assert imported == [], f"{package} is split across layers, so its __init__ may import nothing"


def test_every_io_and_grader_module_is_in_its_package_contract(graph: grimp.ImportGraph) -> None:
    for contract_id, package in [("io", "judgekit.io"), ("graders", "judgekit.graders")]:
        listed = {m for layer in _layer_modules(_contract(contract_id)) for m in layer}
        assert listed == set(graph.find_children(package)), contract_id
    main = {m for layer in _layer_modules(_contract("layers")) for m in layer}
    io_modules = {m for layer in _layer_modules(_contract("io")) for m in layer}
    assert io_modules <= main, "every io module must also be placed in the main contract"


@pytest.mark.parametrize(
    ("importer", "imported", "line"),
    [
        pytest.param(
            "judgekit.cases",
            "judgekit.graders.rules",
            "from judgekit.graders.rules import check_rules",
            id="function_level_import_of_a_grader_from_cases",
        ),
        pytest.param(
            "judgekit.demo",
            "judgekit.commands.runs",
            "from judgekit.commands.runs import grade",
            id="demo_to_cmd",
        ),
        pytest.param(
            "judgekit.io.documents",
            "judgekit.transcript",
            "from judgekit.transcript import T",
            id="io_low_to_model",
        ),
        pytest.param(
            "judgekit.verdict",
            "judgekit.errors",
            "from judgekit.errors import Problem",
            id="independent_siblings",
        ),
    ],
)
def test_an_upward_import_breaks_the_main_contract(
    graph: grimp.ImportGraph, importer: str, imported: str, line: str
) -> None:
    broken = copy.deepcopy(graph)
    broken.add_import(importer=importer, imported=imported, line_number=7, line_contents=line)
    check = _contract("layers").check(broken, verbose=False)
    assert not check.kept
    assert f"{importer} is not allowed to import" in _broken(check)


def test_a_grader_importing_another_grader_breaks_the_graders_contract(graph: grimp.ImportGraph) -> None:
    broken = copy.deepcopy(graph)
    broken.add_import(
        importer="judgekit.graders.state",
        imported="judgekit.graders.rules",
        line_number=1,
        line_contents="from judgekit.graders.rules import check_rules",
    )
    assert not _contract("graders").check(broken, verbose=False).kept


def test_a_new_top_level_module_must_be_placed(graph: grimp.ImportGraph) -> None:
    grown = copy.deepcopy(graph)
    grown.add_module("judgekit.unplaced")
    check = _contract("layers").check(grown, verbose=False)
    assert not check.kept
    assert "judgekit.unplaced" in _broken(check)


# --------------------------------------------------------------------------- cycles


def _cycles_script() -> str:
    script = runpy.run_path(str(ROOT / "dev.py"))["CYCLES_SCRIPT"]
    assert isinstance(script, str)
    return script


def _list_cycles(package: str, *, path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = None if path is None else {**os.environ, "PYTHONPATH": str(path)}
    return subprocess.run(
        [sys.executable, "-c", _cycles_script(), package],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        encoding="utf-8",
    )


def test_judgekit_has_no_import_cycle() -> None:
    result = _list_cycles("judgekit")
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.fullmatch(r"0 import cycle\(s\) among \d+ judgekit modules", result.stdout.strip())


def test_the_cycle_listing_names_every_cycle_with_its_import_lines(tmp_path: Path) -> None:
    package = tmp_path / "cycpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from cycpkg import b\n")
    (package / "b.py").write_text("def f():\n    from cycpkg import c\n")  # function-level imports count
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from cycpkg import a\n"
    )
    (package / "d.py").write_text("import cycpkg.e\n")
    (package / "e.py").write_text("import cycpkg.d\n")
    (package / "f.py").write_text("import cycpkg.a\n")  # imports into a cycle, is not in one
    result = _list_cycles("cycpkg", path=tmp_path)
    assert result.returncode == 1
    lines = result.stdout.strip().splitlines()
    assert lines[0] == "cycle 1: cycpkg.a → cycpkg.b → cycpkg.c → cycpkg.a"
    assert "    cycpkg.b:2: from cycpkg import c" in lines
    assert "cycle 2: cycpkg.d → cycpkg.e → cycpkg.d" in lines
    assert lines[-1] == "2 import cycle(s) among 7 cycpkg modules"
    assert "cycpkg.f" not in result.stdout


# --------------------------------------------------------------------------- CI


def test_dev_test_runs_the_import_checks_after_mypy_and_before_pytest() -> None:
    source = (ROOT / "dev.py").read_text(encoding="utf-8")
    body = source[source.index('elif command == "test":') :]
    mypy = body.index('_run(_bin("mypy"))')
    lint = body.index('_run(_bin("lint-imports")')
    cycles = body.index("CYCLES_SCRIPT)")
    pytest_at = body.index('"-m", "pytest"')
    assert mypy < lint < cycles < pytest_at


def test_import_linter_is_a_locked_dev_dependency() -> None:
    lock = (ROOT / "requirements" / "lock.txt").read_text(encoding="utf-8")
    assert re.search(r"^import-linter==", lock, flags=re.M)
    assert re.search(r"^grimp==", lock, flags=re.M)


def _architecture_layers() -> list[str]:
    """The layers as ``docs/architecture.md``'s table lists them, in the contract's own spelling."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    layers = []
    for line in text.splitlines():
        match = re.match(r"\|\s*(\d+)\s*\|(.*?)\|[^|]*\|\s*$", line.replace("\\|", "\x00"))
        if match:
            cell = match.group(2).replace("\x00", "|").replace("`", "").strip()
            layers.append(re.sub(r"\s+", " ", cell))
    return layers


def test_the_architecture_page_lists_the_layers_of_the_contract_in_order() -> None:
    """docs/architecture.md's table is the ``layers`` contract, row for row, so the map matches the house."""
    (options,) = [o for o in _config()["contracts_options"] if o["id"] == "layers"]
    contract = [re.sub(r"\s+", " ", layer.strip()) for layer in options["layers"]]
    assert _architecture_layers() == contract
