"""The jobs judgekit does, one function each: the service every path calls.

What lives here: the functions behind ``judgekit``'s public names (grade a trial, grade a run to a results
file, report and compare results, calibrate a label table, ask whether a judge is trusted, index and scan
for contamination). The command line, the demo and every integration (pytest, Inspect AI, promptfoo, Ray,
tau-bench) call these functions instead of wiring the pipeline themselves.

What may import it: ``cli``, ``commands``, ``demo`` and ``integrations`` (the layers above it). It imports
everything below it (settings, runner, reports, calibration, graders, judges, io...).
"""
