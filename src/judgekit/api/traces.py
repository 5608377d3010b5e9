"""OpenTelemetry traces imported as transcripts, as one call.

:func:`import_otel_traces` reads an OTLP JSON file (:func:`judgekit.formats.otel.read_otlp_file`), writes
the transcripts (and, if asked, the fidelity reports) and says, per trace, what it kept and which grader
layers cannot judge it (:func:`judgekit.graders.registry.unsupported_layers`), as the ``otel_import``
document (:class:`OtelImportDocument`).
"""

from __future__ import annotations

import json
import os
from typing import Any

from pydantic import Field

from judgekit.caseset import LocatedProblem
from judgekit.errors import ProblemsError
from judgekit.fidelity import FidelityReport, lost_capabilities
from judgekit.formats.otel import check_problems, read_otlp_file
from judgekit.graders.registry import unsupported_layers
from judgekit.io.atomic import write_atomic
from judgekit.verdict import FrozenModel, WrittenFile

__all__ = ["OtelImportDocument", "OtelTrace", "UnsupportedLayer", "import_otel_traces"]


class UnsupportedLayer(FrozenModel):
    """A grader layer that cannot judge a trace: its verdict will be ``insufficient_information``.

    Attributes:
        layer: The layer's name.
        verdict: Always ``insufficient_information``.
        reason: What the trace lost that the layer needs.
    """

    layer: str
    verdict: str = "insufficient_information"
    reason: str


class OtelTrace(FrozenModel):
    """One trace imported.

    Attributes:
        case_id: The transcript's case.
        trial: Its trial number.
        summary: One line saying what the trace kept and lost.
        fidelity: The fidelity report, as data.
        unsupported_layers: The layers that cannot judge it.
    """

    case_id: str
    trial: int
    summary: str
    fidelity: dict[str, Any]
    unsupported_layers: list[UnsupportedLayer]

    @classmethod
    def of(cls, case_id: str, trial: int, report: FidelityReport) -> OtelTrace:
        """The entry of a trace imported as ``case_id`` trial ``trial``, with its fidelity report."""
        lost = unsupported_layers(lost_capabilities(report))
        return cls(
            case_id=case_id,
            trial=trial,
            summary=report.summary(),
            fidelity=report.model_dump(mode="json"),
            unsupported_layers=[
                UnsupportedLayer(layer=str(layer), reason=why) for layer, why in lost.items()
            ],
        )


class OtelImportDocument(FrozenModel):
    """What an OTLP import did (the ``otel_import`` document).

    Attributes:
        trace_file: The OTLP JSON file read.
        imported: Transcripts imported (0 when every trace was refused, or when some were and
            ``keep_going`` was false).
        traces: One entry per trace imported.
        problems: The traces refused, each located.
        written: The files written (transcripts, fidelity reports); empty when a trace was refused.
        exit_code: 0 when every trace was imported, else the code a refusal exits with (2; not printed).
    """

    trace_file: str
    imported: int
    traces: list[OtelTrace]
    problems: list[LocatedProblem]
    written: list[WrittenFile]
    exit_code: int = Field(default=0, exclude=True)


def import_otel_traces(
    trace: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    case_id: str | None = None,
    fidelity: str | os.PathLike[str] | None = None,
    every_problem: bool = True,
) -> OtelImportDocument:
    """Import OTLP traces as transcripts and write them, unless a trace is refused.

    Args:
        trace: The OTLP JSON file.
        out: Where to write the transcripts (JSON Lines).
        case_id: The case every trace belongs to (``None``: each trace's own attribute).
        fidelity: Where to write the fidelity reports (JSON), or ``None``.
        every_problem: Report refused traces in the document (``False``: raise them).

    Returns:
        The import; nothing is written when a trace was refused (``problems`` lists each).

    Raises:
        JudgekitError: (exit 2) An unreadable or malformed file, or an unwritable output.
        ProblemsError: (exit 2) With ``every_problem`` false, the refused traces.
    """
    result = read_otlp_file(trace, case_id=case_id)
    written: list[WrittenFile] = []
    exit_code = 2 if result.problems else 0  # traces refused while others were imported: unusable input
    try:
        check_problems(result)
    except ProblemsError as exc:
        if not every_problem:
            raise
        exit_code = exc.exit_code  # every trace refused: the code text mode exits with
    else:
        write_atomic(out, "\n".join(t.model_dump_json() for t in result.transcripts) + "\n")
        written.append(WrittenFile(path=str(out), what="transcripts"))
        if fidelity is not None:
            reports = [r.model_dump(mode="json") for r in result.reports]
            write_atomic(fidelity, json.dumps(reports, indent=2) + "\n")
            written.append(WrittenFile(path=str(fidelity), what="fidelity_reports"))
    return OtelImportDocument(
        trace_file=str(trace),
        imported=len(result.transcripts),
        traces=[
            OtelTrace.of(t.case_id, t.trial, report)
            for t, report in zip(result.transcripts, result.reports, strict=True)
        ],
        problems=[LocatedProblem.of(p) for p in result.problems],
        written=written,
        exit_code=exit_code,
    )
