"""The examples that end each command's help: one table, keyed by the command's path below ``judgekit``.

Each example is what it does and the command line that does it. :mod:`judgekit.commands.helptext`
appends them to the commands' help; ``tests/test_cli_help.py`` checks that every command has examples
and that every example parses against its command (so an example cannot outlive an option it uses).
Paths in the examples follow the bundled example (``examples/airdesk``) and the default folders.
"""

from __future__ import annotations

from typing import NamedTuple


class Example(NamedTuple):
    """One example of a command's use.

    Attributes:
        what: What the example does, as a short phrase.
        command: The whole command line, starting with ``judgekit``.
    """

    what: str
    command: str


_SET = "examples/airdesk"
_RUN = f"{_SET}/runs/agent-v2.jsonl"

EXAMPLES: dict[str, tuple[Example, ...]] = {
    "": (
        Example("Run everything on the bundled example, offline", "judgekit demo"),
        Example("Check a golden set", f"judgekit validate {_SET}"),
        Example("Find weak cases in it", f"judgekit lint {_SET}"),
    ),
    "calibrate": (
        Example(
            "Measure judge rater 'judge' against every other rater",
            "judgekit calibrate labels.csv --judge judge",
        ),
        Example(
            "Name the experts and report the change from the old grader",
            "judgekit calibrate labels.csv --judge judge --experts alice,bob --baseline old-record.json",
        ),
    ),
    "calibrate-check": (
        Example("Check a labelled test set before calibrating", "judgekit calibrate-check labels.csv"),
        Example(
            "Also check the judge's few-shot examples",
            "judgekit calibrate-check labels.csv --few-shot few-shot.jsonl --transcripts transcripts.jsonl",
        ),
    ),
    "calibrate-plan": (
        Example("Plan the labels to collect from scratch", "judgekit calibrate-plan"),
        Example(
            "Plan from the labels collected so far, as JSON",
            "judgekit calibrate-plan labels.csv --judge judge --format json",
        ),
    ),
    "calibrate-select": (
        Example(
            "Record that labels.csv chose between two judges",
            "judgekit calibrate-select labels.csv --candidates fp-a,fp-b --chosen fp-a",
        ),
    ),
    "candidates": (
        Example("Promote two reviewed candidates", f"judgekit candidates promote c-001 c-002 --set {_SET}"),
    ),
    "candidates generate": (
        Example(
            "Draft trigger and non-trigger utterances for a tool, without writing",
            "judgekit candidates generate --tool refund --description 'Refunds a booking.' "
            "--model openai/gpt-4o-mini --dry-run",
        ),
    ),
    "candidates promote": (
        Example("Promote two reviewed candidates", f"judgekit candidates promote c-001 c-002 --set {_SET}"),
    ),
    "cassette": (Example("Show what a cassette holds", "judgekit cassette stats judge.cassette.jsonl"),),
    "cassette compact": (
        Example("Drop superseded replies", "judgekit cassette compact judge.cassette.jsonl"),
    ),
    "cassette stats": (
        Example("Show what a cassette holds", "judgekit cassette stats judge.cassette.jsonl"),
    ),
    "check-references": (
        Example("Run each reference solution through its case", f"judgekit check-references {_SET}"),
        Example(
            "Also check candidates, as JSON", f"judgekit check-references {_SET} --candidates --format json"
        ),
    ),
    "compare": (
        Example("Compare two runs", "judgekit compare v1.jsonl v2.jsonl"),
        Example(
            "Write the comparison as JSON", "judgekit compare v1.jsonl v2.jsonl --format json -o compare.json"
        ),
    ),
    "config": (
        Example("Show the configuration in force and where each value came from", "judgekit config"),
        Example(
            "As JSON, with a run configuration applied", "judgekit config --config run.yaml --format json"
        ),
    ),
    "contamination": (
        Example(
            "Make a key, index the set, scan an export",
            "judgekit contamination keygen --out contamination.key",
        ),
    ),
    "contamination canary": (
        Example(
            "Print the set's canary string",
            "judgekit contamination canary --key-file contamination.key --set-name airdesk",
        ),
    ),
    "contamination index": (
        Example(
            "Index the golden set with a secret key",
            f"judgekit contamination index {_SET} --key-file contamination.key --out airdesk.index",
        ),
    ),
    "contamination keygen": (
        Example("Make a secret key", "judgekit contamination keygen --out contamination.key"),
    ),
    "contamination scan": (
        Example(
            "Scan a training export for golden cases",
            "judgekit contamination scan export.jsonl.gz --index airdesk.index --key-file contamination.key",
        ),
        Example(
            "Scan with four processes, report as JSON",
            "judgekit contamination scan export.jsonl --index airdesk.index --key-file contamination.key "
            "-j 4 --format json --out leaks.json",
        ),
    ),
    "coverage": (
        Example("Show the set's mix", f"judgekit coverage {_SET}"),
        Example(
            "Require three cases per tool",
            f"judgekit coverage {_SET} --tools lookup_booking,refund --min-per-tool 3",
        ),
    ),
    "demo": (
        Example("Run the demo, reports in ./judgekit-report", "judgekit demo"),
        Example("Write the reports elsewhere", "judgekit demo --out /tmp/judgekit-demo"),
    ),
    "export": (
        Example(
            "Export to Copilot Studio test sets",
            f"judgekit export {_SET} --format copilot-studio --out export/",
        ),
    ),
    "export-otel": (
        Example(
            "Export verdicts as OpenTelemetry events",
            "judgekit export-otel results.jsonl --out verdicts.otlp.json",
        ),
    ),
    "failure-modes": (
        Example("Calibrate each criterion on its own", "judgekit failure-modes labels.csv --judge judge"),
    ),
    "failure-rate": (
        Example(
            "Correct 40 flagged failures out of 500 decided items",
            "judgekit failure-rate calibration/records/judge.json --flagged 40 --total 500",
        ),
    ),
    "golden": (
        Example("Cases changed since main without a version bump", f"judgekit golden diff main --set {_SET}"),
    ),
    "golden diff": (
        Example("Cases changed since main without a version bump", f"judgekit golden diff main --set {_SET}"),
    ),
    "golden reconcile": (
        Example(
            "Merge two experts' resolutions",
            f"judgekit golden reconcile alice.yaml bob.yaml --set {_SET} --out agreed.yaml",
        ),
    ),
    "grade": (
        Example(
            "Grade a run on the deterministic layers",
            f"judgekit grade --cases {_SET} --transcripts {_RUN} --out v2.jsonl",
        ),
        Example(
            "Grade with a judge replayed from a cassette",
            f"judgekit grade --cases {_SET} --transcripts {_RUN} --out v2.jsonl "
            "--judge-model openai/gpt-4o-mini --cassette judge.cassette.jsonl --cache-mode replay",
        ),
        Example(
            "Continue an interrupted run",
            f"judgekit grade --cases {_SET} --transcripts {_RUN} --out v2.jsonl --resume",
        ),
    ),
    "import": (
        Example("Import OpenAI chat logs", "judgekit import openai chats.jsonl --out transcripts.jsonl"),
    ),
    "import openai": (
        Example("Import OpenAI chat logs", "judgekit import openai chats.jsonl --out transcripts.jsonl"),
        Example(
            "Take the case id from a metadata field",
            "judgekit import openai chats.jsonl --out transcripts.jsonl --case-id-field metadata.task",
        ),
    ),
    "import otel": (
        Example("Import OTLP traces", "judgekit import otel traces.json --out transcripts.jsonl"),
    ),
    "import tau-bench": (
        Example(
            "Import tau-bench episodes and their rewards",
            "judgekit import tau-bench results.json --out transcripts.jsonl --rewards-out rewards.jsonl",
        ),
    ),
    "intake": (
        Example(
            "Preview candidates from incidents, removing a name",
            f"judgekit intake incidents.csv --set {_SET} --redact 'Jane Doe' --dry-run",
        ),
    ),
    "lint": (
        Example("Find weak golden cases", f"judgekit lint {_SET}"),
        Example(
            "Lint as JSON, with a rubric", f"judgekit lint {_SET} --rubric honest-reporting --format json"
        ),
    ),
    "probe-bias": (
        Example(
            "Probe a judge replayed from a cassette",
            f"judgekit probe-bias --transcripts {_RUN} --judge-model openai/gpt-4o-mini "
            "--cassette judge.cassette.jsonl --cache-mode replay",
        ),
    ),
    "report": (
        Example("Report a run in Markdown", "judgekit report v2.jsonl"),
        Example("Write an HTML report", "judgekit report v2.jsonl --format html -o report.html"),
        Example(
            "Report with a regression suite, as JSON",
            "judgekit report v2.jsonl --regression-slice regression --format json",
        ),
    ),
    "rubrics": (Example("List the built-in rubrics", "judgekit rubrics list"),),
    "rubrics check": (Example("Validate rubric files", "judgekit rubrics check my-rubric.yaml"),),
    "rubrics list": (Example("List the built-in rubrics", "judgekit rubrics list"),),
    "rubrics show": (
        Example("Show a built-in rubric as JSON", "judgekit rubrics show honest-reporting --format json"),
    ),
    "sample": (
        Example(
            "Draw 10 passing and 10 failing trials for review",
            "judgekit sample v2.jsonl --passing 10 --failing 10 --seed 7 --out review/",
        ),
    ),
    "sample-labels": (
        Example(
            "Read a filled-in sheet back as labels",
            "judgekit sample-labels review/review-sheet.md --out labels.csv",
        ),
    ),
    "scan-pii": (
        Example("Scan the set and its fixtures for personal data", f"judgekit scan-pii {_SET}"),
        Example("Allow a known synthetic address", f"judgekit scan-pii {_SET} --allow jane@example.com"),
    ),
    "trust": (
        Example("Is this judge trusted?", "judgekit trust 3f2a9c1e"),
        Example(
            "For one criterion, as JSON-free text", "judgekit trust 3f2a9c1e --criterion honest_reporting"
        ),
    ),
    "validate": (
        Example("Check a golden set", f"judgekit validate {_SET}"),
        Example("Check two case files", "judgekit validate cases/refund-01.yaml cases/refund-02.yaml"),
    ),
}
