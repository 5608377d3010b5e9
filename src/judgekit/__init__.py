"""judgekit: layered grading for tool-using agents, with LLM judges that must earn trust.

The distribution is published as ``judgekit-agents``; the import name and command are ``judgekit``.

The names below are the public API, one or two per job; everything else lives in submodules that the API
reference lists as advanced. The names are imported when first used, so ``import judgekit`` stays fast.

* Cases and transcripts: :func:`load_cases`, :class:`Case`, :class:`CaseSet`, :func:`read_transcripts`,
  :func:`to_transcript`, :class:`Transcript`.
* The judge: :class:`JudgeConfig`, one object for every judge setting.
* One trial: :func:`grade`, :func:`grade_async`, :func:`make_grader`, giving a :class:`Grade` whose
  :meth:`~Grade.explain` says why.
* A run: :func:`grade_run`, :func:`grade_run_async`, :class:`RunOptions`, :class:`RunOutcome`.
* Results: :func:`read_results`, :func:`report`, :func:`compare`.
* Calibration and trust: :func:`calibrate`, :class:`CalibrationOptions`, :class:`Calibration`,
  :func:`trust_status`; experts' labels from annotation tools: :func:`import_labels`, or from a
  labelling page per expert: :func:`label_page`, two experts' tables compared: :func:`reconcile_labels`;
  a results file's judge verdicts as label rows: :func:`labels_from_results`; a judge's rubric refined on
  some labels and measured on others: :func:`refine`, :class:`RefineOptions`; a weighted jury's weights
  fitted on development labels: :func:`fit_jury`.
* Contamination: :func:`index_cases`, :func:`scan_exports`.

Examples:
    >>> import judgekit
    >>> sorted(judgekit.__all__)[:3]
    ['Calibration', 'CalibrationOptions', 'Case']
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from judgekit.version import __version__

_PUBLIC: dict[str, str] = {
    # cases and transcripts
    "Case": "judgekit.cases",
    "CaseSet": "judgekit.caseset",
    "load_cases": "judgekit.caseset:load_case_set",
    "Transcript": "judgekit.transcript",
    "read_transcripts": "judgekit.transcript",
    "to_transcript": "judgekit.formats.adapters",
    # verdicts
    "Verdict": "judgekit.verdict",
    "Trust": "judgekit.verdict",
    "CheckResult": "judgekit.verdict",
    "Grade": "judgekit.verdict",
    "JudgekitError": "judgekit.errors",
    # the judge
    "JudgeConfig": "judgekit.judge_setup",
    # one trial
    "grade": "judgekit.api.grading",
    "grade_async": "judgekit.api.grading",
    "make_grader": "judgekit.api.grading",
    # a run
    "grade_run": "judgekit.api.runs",
    "grade_run_async": "judgekit.api.runs",
    "RunOptions": "judgekit.api.runs",
    "RunOutcome": "judgekit.api.runs",
    # calibration and trust
    "calibrate": "judgekit.api.calibration",
    "CalibrationOptions": "judgekit.api.calibration",
    "Calibration": "judgekit.api.calibration",
    "trust_status": "judgekit.api.calibration",
    "import_labels": "judgekit.api.label_import",
    "label_page": "judgekit.api.expert_labels",
    "reconcile_labels": "judgekit.api.expert_labels",
    "labels_from_results": "judgekit.api.labels",
    "refine": "judgekit.api.refine",
    "RefineOptions": "judgekit.api.refine",
    "fit_jury": "judgekit.api.calibration",
    # results
    "read_results": "judgekit.results",
    "report": "judgekit.api.reports",
    "compare": "judgekit.api.reports",
    # contamination
    "index_cases": "judgekit.api.contamination",
    "scan_exports": "judgekit.api.contamination",
}
"""Public name -> ``module`` (the same name there) or ``module:name``."""

__all__ = [
    "Calibration",
    "CalibrationOptions",
    "Case",
    "CaseSet",
    "CheckResult",
    "Grade",
    "JudgeConfig",
    "JudgekitError",
    "RefineOptions",
    "RunOptions",
    "RunOutcome",
    "Transcript",
    "Trust",
    "Verdict",
    "__version__",
    "calibrate",
    "compare",
    "fit_jury",
    "grade",
    "grade_async",
    "grade_run",
    "grade_run_async",
    "import_labels",
    "index_cases",
    "label_page",
    "labels_from_results",
    "load_cases",
    "make_grader",
    "read_results",
    "read_transcripts",
    "reconcile_labels",
    "refine",
    "report",
    "scan_exports",
    "to_transcript",
    "trust_status",
]
"""The public names: ``__version__`` and every key of :data:`_PUBLIC` (a test holds them equal)."""

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time each name is imported on first use
    from judgekit.api.calibration import Calibration, CalibrationOptions, calibrate, fit_jury, trust_status
    from judgekit.api.contamination import index_cases, scan_exports
    from judgekit.api.expert_labels import label_page, reconcile_labels
    from judgekit.api.grading import grade, grade_async, make_grader
    from judgekit.api.label_import import import_labels
    from judgekit.api.labels import labels_from_results
    from judgekit.api.refine import RefineOptions, refine
    from judgekit.api.reports import compare, report
    from judgekit.api.runs import RunOptions, RunOutcome, grade_run, grade_run_async
    from judgekit.cases import Case
    from judgekit.caseset import CaseSet
    from judgekit.caseset import load_case_set as load_cases
    from judgekit.errors import JudgekitError
    from judgekit.formats.adapters import to_transcript
    from judgekit.judge_setup import JudgeConfig
    from judgekit.results import read_results
    from judgekit.transcript import Transcript, read_transcripts
    from judgekit.verdict import CheckResult, Grade, Trust, Verdict


def __getattr__(name: str) -> Any:
    """Import a public name on first use (PEP 562), so that ``import judgekit`` loads nothing heavy."""
    where = _PUBLIC.get(name)
    if where is None:
        raise AttributeError(f"module 'judgekit' has no attribute '{name}'")
    module, _, attribute = where.partition(":")
    value = getattr(importlib.import_module(module), attribute or name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})
