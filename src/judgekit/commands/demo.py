"""``judgekit demo``: the main job on the bundled synthetic example, offline and without an API key."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from judgekit.commands.inputs import existing_inputs
from judgekit.commands.output import chosen_format, format_option, print_document

if TYPE_CHECKING:
    from judgekit.demo import DemoResult

__all__ = ["demo"]


@existing_inputs("example")
def demo(
    out: Path = typer.Option(
        Path("judgekit-report"), "--out", help="Folder for the HTML reports (an earlier demo's is replaced)."
    ),
    example: Path | None = typer.Option(
        None, "--example", help="Golden set to run on (default: the bundled synthetic example)."
    ),
    output_format: str = format_option(),
) -> None:
    """Run judgekit end to end on the bundled synthetic AirDesk example, offline, with no API key.

    Validates the golden set, shows its coverage, checks the reference solutions, calibrates the example's
    judge against two synthetic experts, grades the recorded trials of two agent versions with every layer
    (the judge replayed from a cassette of synthetic verdicts: a missing reply is an error, never a network
    call), compares the versions and writes self-contained HTML reports under --out. Exit 1 when the set
    has a coverage gap or a broken reference solution. With --format json the progress lines go to
    standard error and standard output holds one document (kind demo): the folder, every file written,
    the verdicts of each run, the calibration, the judge's trust and the comparison.
    """
    import os

    output_format = chosen_format(output_format)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from judgekit.demo import run_demo

    if output_format == "json":
        result = run_demo(out, example=example, say=lambda line: typer.echo(line, err=True))
        print_document("demo", _document(result))
    else:
        result = run_demo(out, example=example, say=typer.echo)
        for page in result.pages[1:]:
            typer.echo(f"        {page}")
        typer.echo(f"demo finished in {result.seconds:.1f} s; open {result.index} in a browser")
    if result.problems:
        typer.echo(f"the example has {len(result.problems)} problem(s) (listed above)", err=True)
        raise typer.Exit(1)


def _document(result: DemoResult) -> dict[str, Any]:
    """The fields of the ``demo`` document, read from the result and the files the demo wrote.

    Args:
        result: What :func:`judgekit.demo.run_demo` returned.

    Returns:
        ``ok`` (no problem found), ``problems``, ``seconds``, ``out`` and ``index`` (the report folder and its
        ``index.html``), ``files`` (every file written, by role, and all of them in ``all``), ``runs`` (per
        graded run: its results file, trials and trials by verdict state), ``calibration`` (the record the
        demo wrote: items, whether the gate passed, agreement, TPR, TNR, the gate's conditions), ``judge``
        (whether it was trusted when grading began, why, and the verdicts resting on an untrusted judge)
        and ``comparison`` (the second run against the first, as ``judgekit compare --format json``).
    """
    from judgekit.calibration.records import load_records
    from judgekit.demo import DEMO_RUNS
    from judgekit.reports.run_compare import compare_runs, digest_runs
    from judgekit.results import read_results
    from judgekit.verdict import Verdict

    out = result.out
    results = [out / "results" / f"{Path(run).stem}.jsonl" for run in DEMO_RUNS]
    read = [read_results(path) for path in results]
    runs = [
        {
            "name": path.stem,
            "results": str(path),
            "report": str(out / "reports" / f"{path.stem}.html"),
            "trials": len(run.lines),
            "verdicts": {v.value: sum(line.verdict is v for line in run.lines) for v in Verdict},
        }
        for path, run in zip(results, read, strict=True)
    ]
    records_dir = out / "calibration" / "records"
    calibration: dict[str, Any] = {"items": result.calibration_items, "records": str(records_dir)}
    records = load_records(records_dir)
    if records:
        record = records[-1]
        pair = record.metrics.judge_vs_consensus
        calibration |= {
            "fingerprint": record.fingerprint,
            "passed": record.gate.trusted,
            "experts": list(record.experts),
            "agreement": pair.percent_agreement.model_dump(mode="json"),
            "tpr": pair.binary.tpr.model_dump(mode="json") if pair.binary else None,
            "tnr": pair.binary.tnr.model_dump(mode="json") if pair.binary else None,
            "conditions": [c.model_dump(mode="json") for c in record.gate.conditions],
        }
    every = sorted(str(p) for p in out.rglob("*") if p.is_file())
    return {
        "ok": not result.problems,
        "problems": list(result.problems),
        "seconds": round(result.seconds, 3),
        "out": str(out),
        "index": str(result.index),
        "files": {
            "index": str(result.index),
            "reports": [str(p) for p in result.pages[1:] if p.parent.name == "reports"],
            "viewer": str(out / "viewer" / "index.html"),
            "results": [str(p) for p in results],
            "calibration_labels": str(out / "calibration" / "labels.csv"),
            "calibration_records": sorted(str(p) for p in records_dir.glob("*.json")),
            "all": every,
        },
        "runs": runs,
        "calibration": calibration,
        "judge": {
            "trusted": result.trusted,
            "reason": result.trust_reason,
            "untrusted_verdicts": result.untrusted_verdicts,
        },
        "comparison": compare_runs(*digest_runs(read[0], read[1])).model_dump(mode="json"),
    }
