"""The jobs judgekit does, one function each: the service every path calls.

The command line, the demo and every integration (pytest, Inspect AI, promptfoo, Ray, tau-bench) call
these functions instead of wiring the pipeline themselves; ``judgekit``'s public names are taken from here.

What lives here:

* :mod:`~judgekit.api.grading`: grade one trial (``grade``, ``grade_async``, ``make_grader``).
* :mod:`~judgekit.api.runs`: grade a run to a results file (``grade_run``, ``RunOptions``, ``RunOutcome``).
* :mod:`~judgekit.api.reports`: report a results file and compare two runs (``report``, ``compare``).
* :mod:`~judgekit.api.calibration`: calibrate a label table (``calibrate``); trust (``trust_status``).
* :mod:`~judgekit.api.canary`: drift canaries: a record's canary set built from a results file, a
  check that re-asks the judge and tests for drift (``build_canary_set``, ``check_canaries``).
* :mod:`~judgekit.api.labels`: the checks of a label table before it certifies a judge; a results
  file's judge verdicts as the judge's label rows (``labels_from_results``).
* :mod:`~judgekit.api.label_import`: labels from annotation tools (Label Studio, Argilla, Langfuse,
  Phoenix) written as a label table (``import_labels``).
* :mod:`~judgekit.api.refine`: a judge's rubric refined on a development part, measured on a test part
  (``refine``).
* :mod:`~judgekit.api.expert_labels`: an expert's labelling page; two experts' label tables reconciled.
* :mod:`~judgekit.api.bias`: bias probes of a judge, live or from recorded judgments.
* :mod:`~judgekit.api.cases`: golden-set jobs that need run results (retiring saturated cases).
* :mod:`~judgekit.api.contamination`: index the cases, scan exports (``index_cases``, ``scan_exports``).
* :mod:`~judgekit.api.traces`: OpenTelemetry traces imported as transcripts.
* :mod:`~judgekit.api.inspect_logs`: Inspect AI logs imported as transcripts, verdicts written back as
  scores on copies of the logs.
* :mod:`~judgekit.api.viewer`: the viewer's reading of transcripts and case sets, and the folder written.

What may import it: ``cli``, ``commands``, ``demo`` and ``integrations`` (the layers above it); the
package ``judgekit`` re-exports its public names. It imports every layer below it.
"""
