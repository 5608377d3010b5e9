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
        Example("Check a golden set", f"judgekit cases check {_SET}"),
        Example("Find weak cases in it", f"judgekit cases lint {_SET}"),
    ),
    "calibrate": (
        Example(
            "Measure judge rater 'judge' against the experts alice and bob",
            "judgekit calibrate labels.csv --judge judge --experts alice,bob",
        ),
        Example(
            "Report the change from the old grader too",
            "judgekit calibrate labels.csv --judge judge --experts alice,bob --baseline old-record.json",
        ),
        Example(
            "Could the judge replace one of three annotators? (alternative-annotator test, crowd epsilon)",
            "judgekit calibrate labels.csv --judge judge --experts alice,bob,carol --annotator-kind crowd",
        ),
    ),
    "labels check": (
        Example("Check a labelled test set before calibrating", "judgekit labels check labels.csv"),
        Example(
            "Also check the judge's few-shot examples",
            "judgekit labels check labels.csv --few-shot few-shot.jsonl --transcripts transcripts.jsonl",
        ),
        Example(
            "Run every check and report each as JSON",
            f"judgekit labels check {_SET}/labels/expert-labels.csv --format json",
        ),
    ),
    "labels plan": (
        Example("Plan the labels to collect from scratch", "judgekit labels plan"),
        Example(
            "Plan from the labels collected so far, as JSON",
            "judgekit labels plan labels.csv --judge judge --experts alice,bob --format json",
        ),
        Example(
            "Split a budget of 300 labels between known-pass and known-fail items",
            "judgekit labels plan labels.csv --judge judge --experts alice,bob --budget 300 --pass-share 0.8",
        ),
        Example(
            "Split a budget of 200 before any label, from beliefs about the judge (TPR 0.7, TNR 0.9)",
            "judgekit labels plan --budget 200 --pass-share 0.4 --expected-tpr 0.7 --expected-tnr 0.9",
        ),
    ),
    "labels select": (
        Example(
            "Record that labels.csv chose between two judges",
            "judgekit labels select labels.csv --candidates fp-a,fp-b --chosen fp-a",
        ),
        Example(
            "Record it and print the ledger entry as JSON",
            "judgekit labels select labels.csv --candidates fp-a,fp-b --format json",
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
        Example(
            "Draft them and list what was written as JSON",
            "judgekit candidates generate --tool refund --description 'Refunds a booking.' "
            "--model openai/gpt-4o-mini --format json",
        ),
    ),
    "candidates promote": (
        Example("Promote two reviewed candidates", f"judgekit candidates promote c-001 c-002 --set {_SET}"),
        Example(
            "Promote one, listing the move as JSON",
            f"judgekit candidates promote c-001 --set {_SET} --format json",
        ),
    ),
    "cassette": (Example("Show what a cassette holds", "judgekit cassette stats judge.cassette.jsonl"),),
    "cassette compact": (
        Example("Drop superseded replies", "judgekit cassette compact judge.cassette.jsonl"),
        Example(
            "Compact and print the line counts as JSON",
            "judgekit cassette compact judge.cassette.jsonl --format json",
        ),
    ),
    "cassette stats": (
        Example("Show what a cassette holds", "judgekit cassette stats judge.cassette.jsonl"),
        Example(
            "Count its replies per model, as JSON",
            "judgekit cassette stats judge.cassette.jsonl --format json",
        ),
    ),
    "cases check-references": (
        Example("Run each reference solution through its case", f"judgekit cases check-references {_SET}"),
        Example(
            "Also check candidates, as JSON",
            f"judgekit cases check-references {_SET} --candidates --format json",
        ),
        Example(
            "Also run the configured judge's criteria on each reference",
            f"judgekit cases check-references {_SET} --judge",
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
        Example(
            "Print it with the key's fingerprint, as JSON",
            "judgekit contamination canary --key-file contamination.key --set-name airdesk --format json",
        ),
    ),
    "contamination index": (
        Example(
            "Index the golden set with a secret key",
            f"judgekit contamination index {_SET} --key-file contamination.key --out airdesk.index",
        ),
        Example(
            "Index it and report the counts and the canary as JSON",
            f"judgekit contamination index {_SET} --key-file contamination.key --out airdesk.index "
            "--format json",
        ),
    ),
    "contamination keygen": (
        Example("Make a secret key", "judgekit contamination keygen --out contamination.key"),
        Example(
            "Make one and print its public fingerprint as JSON",
            "judgekit contamination keygen --out contamination.key --format json",
        ),
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
    "cases coverage": (
        Example("Show the set's mix", f"judgekit cases coverage {_SET}"),
        Example(
            "Require three cases per tool",
            f"judgekit cases coverage {_SET} --tools lookup_booking,refund --min-per-tool 3",
        ),
        Example("Counts, floors and gaps as JSON", f"judgekit cases coverage {_SET} --format json"),
    ),
    "demo": (
        Example("Run the demo, reports in ./judgekit-report", "judgekit demo"),
        Example("Write the reports elsewhere", "judgekit demo --out /tmp/judgekit-demo"),
        Example(
            "Print the files written and the headline figures as JSON (progress on stderr)",
            "judgekit demo --out /tmp/judgekit-demo --format json",
        ),
    ),
    "export cases": (
        Example(
            "Export to Copilot Studio test sets",
            f"judgekit export cases {_SET} --format copilot-studio --out export/",
        ),
    ),
    "export inspect": (
        Example(
            "Write the verdicts as scores on copies of the Inspect logs",
            "judgekit export inspect results.jsonl --transcripts transcripts.jsonl --out scored-logs",
        ),
        Example(
            "Under another score name, as JSON",
            "judgekit export inspect results.jsonl --transcripts transcripts.jsonl --out scored-logs "
            "--score-name judgekit_v2 --format json",
        ),
    ),
    "export otel": (
        Example(
            "Export verdicts as OpenTelemetry events",
            "judgekit export otel results.jsonl --out verdicts.otlp.json",
        ),
        Example(
            "Export them and count the events as JSON",
            "judgekit export otel results.jsonl --transcripts transcripts.jsonl --out verdicts.otlp.json "
            "--format json",
        ),
    ),
    "judge": (
        Example("Is this judge trusted?", "judgekit judge trust 3f2a9c1e"),
        Example(
            "Calibrate each criterion on its own",
            "judgekit judge failure-modes labels.csv --judge judge --experts alice,bob",
        ),
    ),
    "labels": (
        Example(
            "Draw a review sheet of 10 passing and 10 failing trials",
            "judgekit labels sheet v2.jsonl --passing 10 --failing 10 --out review/",
        ),
        Example(
            "Read the filled-in sheet back", "judgekit labels read review/review-sheet.md --out labels.csv"
        ),
        Example("Check the labels before calibrating", "judgekit labels check labels.csv"),
    ),
    "export": (
        Example(
            "Export the reviewed cases for Copilot Studio",
            f"judgekit export cases {_SET} --format copilot-studio --out export/",
        ),
        Example(
            "Export verdicts as OpenTelemetry events",
            "judgekit export otel results.jsonl --out verdicts.otlp.json",
        ),
    ),
    "judge failure-modes": (
        Example(
            "Calibrate each criterion on its own",
            "judgekit judge failure-modes labels.csv --judge judge --experts alice,bob",
        ),
    ),
    "judge fit-cascade": (
        Example(
            "Fit a two-judge cascade on labels with confidences",
            "judgekit judge fit-cascade labels.csv --stage small=openai/gpt-4o-mini "
            "--stage large=openai/gpt-4o --experts alice,bob --out cascade.json",
        ),
        Example(
            "The same, promising 95% agreement and printing the thresholds as JSON",
            "judgekit judge fit-cascade labels.csv --stage small=openai/gpt-4o-mini "
            "--stage large=openai/gpt-4o --experts alice,bob --out cascade.json --target 0.95 --format json",
        ),
    ),
    "judge fit-jury": (
        Example(
            "Fit a three-member weighted jury on half the cases' labels",
            "judgekit judge fit-jury labels.csv --member mini=openai/gpt-4o-mini "
            "--member haiku=anthropic/claude-3-5-haiku-latest --member llama=ollama/llama3.1 "
            "--experts alice,bob --out jury.json",
        ),
        Example(
            "The same with a quarter of the cases for development, printing the weights as JSON",
            "judgekit judge fit-jury labels.csv --member mini=openai/gpt-4o-mini --member "
            "haiku=anthropic/claude-3-5-haiku-latest --experts alice,bob --out jury.json "
            "--development-share 0.25 --format json",
        ),
    ),
    "judge refine": (
        Example(
            "Refine the bundled example's judge offline, recording on held-out cases",
            "judgekit judge refine examples/airdesk/labels/expert-labels.csv "
            "--experts synthetic-expert-a,synthetic-expert-b --cases examples/airdesk "
            "--runs examples/airdesk/calibration/sample.jsonl --config examples/airdesk/judge.yaml "
            "--cassette examples/airdesk/cassettes/judge-refine.jsonl --seed 7 --propose-wording "
            "--records refine-records --out refine-out",
        ),
        Example(
            "Refine on a third of the cases, chosen on balanced accuracy, as JSON",
            "judgekit judge refine labels.csv --experts alice,bob --cases golden/ --runs runs/v3.jsonl "
            "--judge-model openai/gpt-4o-mini --dev-share 0.33 --metric balanced_accuracy --out refine "
            "--format json",
        ),
    ),
    "judge canary": (
        Example(
            "Re-ask 20 drift canaries (from cron or CI); exit 1 on drift",
            "judgekit judge canary -n 20 --judge-model openai/gpt-4o-mini --records calibration/records",
        ),
        Example(
            "The same with another seed, as JSON (cost included)",
            "judgekit judge canary -n 40 --seed 3 --judge-model openai/gpt-4o-mini --format json",
        ),
    ),
    "judge canary-set": (
        Example(
            "Keep a canary set with the judge's latest calibration record",
            "judgekit judge canary-set v2.jsonl --transcripts runs/v2.jsonl --cases golden/ "
            "--judge-model openai/gpt-4o-mini",
        ),
        Example(
            "A looser null (5% flips) and a stricter false-alarm rate",
            "judgekit judge canary-set v2.jsonl --transcripts runs/v2.jsonl --cases golden/ "
            "--judge-model openai/gpt-4o-mini --tolerance 0.05 --alpha 0.001",
        ),
    ),
    "judge failure-rate": (
        Example(
            "Correct 40 flagged failures out of 500 decided items",
            "judgekit judge failure-rate calibration/records/judge.json --flagged 40 --total 500",
        ),
        Example(
            "The same, with the interval as JSON",
            "judgekit judge failure-rate calibration/records/judge.json --flagged 40 --total 500 "
            "--format json",
        ),
        Example(
            "Count one criterion's verdicts in a run and add the PPI++ pass rate from expert labels",
            "judgekit judge failure-rate calibration/records/judge.json --results results.jsonl --criterion "
            "honest_reporting --labels labels.csv --judge judge",
        ),
    ),
    "cases": (
        Example("Check a golden set", f"judgekit cases check {_SET}"),
        Example("Find weak cases in it", f"judgekit cases lint {_SET}"),
        Example("Cases changed since main without a version bump", f"judgekit cases diff main --set {_SET}"),
    ),
    "cases diff": (
        Example("Cases changed since main without a version bump", f"judgekit cases diff main --set {_SET}"),
        Example("The same, as JSON", f"judgekit cases diff main --set {_SET} --format json"),
    ),
    "cases reconcile": (
        Example(
            "Merge two experts' resolutions",
            f"judgekit cases reconcile alice.yaml bob.yaml --set {_SET} --out agreed.yaml",
        ),
        Example("List the findings as JSON", "judgekit cases reconcile alice.yaml bob.yaml --format json"),
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
            "Give up on a hanging judge after 20 s per attempt and 2 retries",
            f"judgekit grade --cases {_SET} --transcripts {_RUN} --out v2.jsonl "
            "--judge-model openai/gpt-4o-mini --judge-timeout 20 --judge-retries 2 --judge-backoff 0.5",
        ),
        Example(
            "Re-ask 20 drift canaries before grading (drift makes the judge untrusted for the run)",
            f"judgekit grade --cases {_SET} --transcripts {_RUN} --out v2.jsonl "
            "--judge-model openai/gpt-4o-mini --canary 20",
        ),
        Example(
            "Escalate unsure verdicts from a cheap judge to a strong one, then to a human",
            f"judgekit grade --cases {_SET} --transcripts {_RUN} --out v2.jsonl "
            "--judge-model openai/gpt-4o-mini --cascade cascade.json",
        ),
        Example(
            "Send the judge requests as one provider batch (about half the price), looking every 60 s",
            f"judgekit grade --cases {_SET} --transcripts {_RUN} --out v2.jsonl "
            "--judge-model openai/gpt-4o-mini --batch --batch-poll 60",
        ),
        Example(
            "Continue an interrupted run",
            f"judgekit grade --cases {_SET} --transcripts {_RUN} --out v2.jsonl --resume",
        ),
        Example(
            "Gate a CI job on pass^1 and print the summary as JSON",
            f"judgekit grade --cases {_SET} --transcripts {_RUN} --out v2.jsonl --fail-under 0.8 "
            "--no-progress --format json",
        ),
    ),
    "import": (
        Example("Import OpenAI chat logs", "judgekit import openai chats.jsonl --out transcripts.jsonl"),
        Example(
            "Import Anthropic messages logs", "judgekit import anthropic claude.jsonl --out transcripts.jsonl"
        ),
    ),
    "import anthropic": (
        Example(
            "Import Anthropic messages logs", "judgekit import anthropic claude.jsonl --out transcripts.jsonl"
        ),
        Example(
            "Take the case id from a metadata field, and print a JSON summary",
            "judgekit import anthropic claude.jsonl --out transcripts.jsonl --case-id-field metadata.task "
            "--format json",
        ),
    ),
    "import openai": (
        Example("Import OpenAI chat logs", "judgekit import openai chats.jsonl --out transcripts.jsonl"),
        Example(
            "Take the case id from a metadata field",
            "judgekit import openai chats.jsonl --out transcripts.jsonl --case-id-field metadata.task",
        ),
    ),
    "import inspect": (
        Example("Import Inspect AI logs", "judgekit import inspect logs/*.eval --out transcripts.jsonl"),
        Example(
            "Take the case id from a metadata field and keep the fidelity reports",
            "judgekit import inspect run.eval --out transcripts.jsonl --case-id-field task_id "
            "--fidelity fidelity.json",
        ),
    ),
    "import otel": (
        Example("Import OTLP traces", "judgekit import otel traces.json --out transcripts.jsonl"),
        Example(
            "Import them and report each trace's fidelity as JSON",
            "judgekit import otel traces.json --out transcripts.jsonl --format json",
        ),
    ),
    "import tau-bench": (
        Example(
            "Import tau-bench episodes and their rewards",
            "judgekit import tau-bench results.json --out transcripts.jsonl --rewards-out rewards.jsonl",
        ),
    ),
    "import tau2-bench": (
        Example(
            "Import tau2-bench simulations with the retail database; check its reward",
            "judgekit import tau2-bench results.json --db db.json --out tau2-import",
        ),
    ),
    "candidates intake": (
        Example(
            "Preview candidates from incidents, removing a name",
            f"judgekit candidates intake incidents.csv --set {_SET} --redact 'Jane Doe' --dry-run",
        ),
        Example(
            "Write the candidates and list them as JSON",
            f"judgekit candidates intake incidents.csv --set {_SET} --redact 'Jane Doe' --format json",
        ),
    ),
    "cases lint": (
        Example("Find weak golden cases", f"judgekit cases lint {_SET}"),
        Example(
            "Lint as JSON, with a rubric",
            f"judgekit cases lint {_SET} --rubric honest-reporting --format json",
        ),
    ),
    "judge probe-bias": (
        Example(
            "Probe a judge replayed from a cassette",
            f"judgekit judge probe-bias --transcripts {_RUN} --judge-model openai/gpt-4o-mini "
            "--cassette judge.cassette.jsonl --cache-mode replay",
        ),
        Example(
            "Probe for sycophancy and length bias, report as JSON",
            f"judgekit judge probe-bias --transcripts {_RUN} --judge-model openai/gpt-4o-mini "
            "--cassette judge.cassette.jsonl --probes sycophancy,length --format json",
        ),
        Example(
            "Position consistency from judgments already given in both orders (LLMBar result.json)",
            "judgekit judge probe-bias --recorded result.json --fingerprint 3f2a9c1e --format json",
        ),
    ),
    "cases retire": (
        Example(
            "Move cases saturated over the last three releases to the regression split",
            f"judgekit cases retire runs/v1.4.jsonl runs/v1.5.jsonl runs/v1.6.jsonl --set {_SET}",
        ),
        Example(
            "Show what would move, as JSON, writing nothing",
            f"judgekit cases retire runs/v1.5.jsonl runs/v1.6.jsonl --set {_SET} --releases 2 --dry-run "
            "--format json",
        ),
    ),
    "report": (
        Example("Report a run in Markdown", "judgekit report v2.jsonl"),
        Example("Write an HTML report", "judgekit report v2.jsonl --format html -o report.html"),
        Example(
            "Report with a regression suite, as JSON",
            "judgekit report v2.jsonl --regression-slice regression --format json",
        ),
        Example(
            "A pull-request comment: the verdict line, the suites and the top 10 reasons",
            "judgekit report v2.jsonl --short --fail-under 0.8 --link https://ci.example/42/report.html",
        ),
    ),
    "rubrics": (Example("List the built-in rubrics", "judgekit rubrics list"),),
    "rubrics check": (
        Example("Validate rubric files", "judgekit rubrics check my-rubric.yaml"),
        Example("Validate them, problems as JSON", "judgekit rubrics check my-rubric.yaml --format json"),
    ),
    "rubrics list": (
        Example("List the built-in rubrics", "judgekit rubrics list"),
        Example("List them as JSON", "judgekit rubrics list --format json"),
    ),
    "rubrics show": (
        Example("Show a built-in rubric as JSON", "judgekit rubrics show honest-reporting --format json"),
    ),
    "labels sheet": (
        Example(
            "Draw 10 passing and 10 failing trials for review",
            "judgekit labels sheet v2.jsonl --passing 10 --failing 10 --seed 7 --out review/",
        ),
        Example(
            "Draw them and describe the draw as JSON",
            "judgekit labels sheet v2.jsonl --passing 10 --failing 10 --out review/ --format json",
        ),
    ),
    "labels page": (
        Example(
            "A blind labelling page for one expert",
            f"judgekit labels page v2.jsonl --expert alice --cases {_SET} --out alice.html",
        ),
        Example(
            "Only one criterion, another seed, with the judge's verdicts shown",
            "judgekit labels page v2.jsonl --expert bob --criteria no_false_success --seed 3 --show-judge "
            "--out bob.html",
        ),
    ),
    "labels reconcile": (
        Example(
            "Compare two experts' downloads; write the resolution sheet",
            "judgekit labels reconcile labels-alice.csv labels-bob.csv --sheet disputed.csv",
        ),
        Example(
            "Write both experts' labels as one table once they agree",
            "judgekit labels reconcile labels-alice.csv labels-bob.csv --out expert-labels.csv",
        ),
    ),
    "labels read": (
        Example(
            "Read a filled-in sheet back as labels",
            "judgekit labels read review/review-sheet.md --out labels.csv",
        ),
        Example(
            "Read it back, listing the labels as JSON",
            "judgekit labels read review/review-sheet.md --out labels.csv --format json",
        ),
    ),
    "labels from-results": (
        Example(
            "The judge's verdicts joined with the experts' labels, for calibrate",
            "judgekit labels from-results v2.jsonl --join expert-labels.csv --out labels.csv",
        ),
        Example(
            "Two criteria only, the judge named, as JSON",
            "judgekit labels from-results v2.jsonl --out judge-labels.csv --criteria honest,polite "
            "--rater judge --format json",
        ),
    ),
    "labels import": (
        Example(
            "Label Studio export: Yes/No as pass/fail, predictions as the judge",
            "judgekit labels import label-studio export.json --out labels.csv --map Yes=pass,No=fail "
            "--model-rater judge",
        ),
        Example(
            "An Argilla Dataset.to_disk folder, a user id renamed",
            "judgekit labels import argilla review-dataset/ --out labels.csv --rater-name 7c1a6f3e=alice",
        ),
        Example(
            "Langfuse annotation scores, item ids from their metadata",
            "judgekit labels import langfuse scores.json --out labels.csv --item-field item_id "
            "--map True=pass,False=fail",
        ),
        Example(
            "Phoenix span annotations on a 1-5 scale, writing what mapped",
            "judgekit labels import phoenix annotations.json --out labels.csv --scale 1,2,3,4,5 "
            "--accept-skipped",
        ),
    ),
    "cases scan-pii": (
        Example("Scan the set and its fixtures for personal data", f"judgekit cases scan-pii {_SET}"),
        Example(
            "Allow a known synthetic address", f"judgekit cases scan-pii {_SET} --allow jane@example.com"
        ),
        Example("List the findings as JSON", f"judgekit cases scan-pii {_SET} --format json"),
    ),
    "judge trust": (
        Example("Is this judge trusted?", "judgekit judge trust 3f2a9c1e"),
        Example(
            "For one criterion, as JSON-free text",
            "judgekit judge trust 3f2a9c1e --criterion honest_reporting",
        ),
        Example(
            "For one criterion, as JSON",
            "judgekit judge trust 3f2a9c1e --criterion honest_reporting --format json",
        ),
    ),
    "view": (
        Example(
            "Browse a run's trials in a browser (open viewer/index.html)",
            "judgekit view v1.jsonl --out viewer",
        ),
        Example(
            "Two runs side by side, with each case's expectations",
            f"judgekit view v1.jsonl v2.jsonl --cases {_SET} --out viewer",
        ),
        Example(
            "Serve it on 127.0.0.1 instead of opening the file", "judgekit view v1.jsonl --serve --port 8765"
        ),
    ),
    "cases check": (
        Example("Check a golden set", f"judgekit cases check {_SET}"),
        Example("Check two case files", "judgekit cases check cases/refund-01.yaml cases/refund-02.yaml"),
        Example("Problems and counts as JSON", f"judgekit cases check {_SET} --format json"),
    ),
}
