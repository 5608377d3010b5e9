"""Report models and their renderers (HTML, Markdown, JSON).

Models compute once from results; renderers only format. Nothing here reads input files or prints
(the results files are read through :mod:`judgekit.results`, also by the worker processes of
:mod:`~judgekit.reports.run_parts`).

What lives here:

* :mod:`~judgekit.reports.run_model`: the run report, computed once from a results file.
* :mod:`~judgekit.reports.run_gate`: the thresholds a CI job gates a run on.
* :mod:`~judgekit.reports.run_compare`: two runs on the same tasks compared (sign test, McNemar).
* :mod:`~judgekit.reports.run_parts`: one results file read by several processes, by byte ranges, as one pass.
* :mod:`~judgekit.reports.run_json`: run reports and comparisons as versioned JSON documents.
* :mod:`~judgekit.reports.run_markdown`: run reports and comparisons as Markdown.
* :mod:`~judgekit.reports.run_html`: run reports as self-contained HTML.
* :mod:`~judgekit.reports.run_compare_html`: run comparisons as self-contained HTML.
* :mod:`~judgekit.reports.retirement`: which capability tasks have saturated.
* :mod:`~judgekit.reports.calibration_report`: calibration results and grader comparisons rendered.
* :mod:`~judgekit.reports.calibration_svg`: inline SVG figures for calibration reports.
* :mod:`~judgekit.reports.demo_index`: the index page of ``judgekit demo``'s report folder.
* :mod:`~judgekit.reports.viewer`: the static trial viewer (``judgekit view``).
* :mod:`~judgekit.reports.jinja`: the Jinja environment the HTML reports render their templates in.

What may import it: the layers above it in the import contract (``batch_grading`` up to ``cli``);
``golden``, ``runner``, ``contamination`` and ``judge_setup`` are its siblings and do not. It may import
``calibration`` and below.
"""
