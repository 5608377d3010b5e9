"""Formats: transcripts and results recorded by other harnesses, read into judgekit's models.

What lives here:

* :mod:`~judgekit.formats.adapters`: OpenAI chat and Anthropic messages conversations as transcripts.
* :mod:`~judgekit.formats.importers`: tau-bench results and OpenAI chat JSONL files as transcripts and
  result lines.
* :mod:`~judgekit.formats.inspect_logs`: Inspect AI samples (logged or live) as transcripts with fidelity
  reports, grades as Inspect scores, and scores written back on copies of Inspect logs (the ``inspect``
  extra).
* :mod:`~judgekit.formats.otel`: OpenTelemetry OTLP JSON traces as transcripts with fidelity reports, and
  verdicts out as evaluation events.

What may import it: the layers above it in the import contract (``caseset`` and ``state`` up to ``cli``).
It imports ``fidelity``, ``results``, ``transcript``, ``io`` and what lies below them, never a grader.
"""
