"""Write the example's runs and calibration sample, record the judge cassette, write the experts' labels.

    .venv/bin/python examples/airdesk/tools/make_cassette.py

    .venv/bin/python examples/airdesk/tools/make_cassette.py --check   # exit 1 if any file is stale

This one command regenerates everything downstream of the cases (run it after make_fixtures.py), all
deterministically (rerunning rewrites the same bytes):

* what ``make_runs.py`` writes: the graded runs ``runs/agent-v1.jsonl`` and ``runs/agent-v2.jsonl`` and the
  **calibration sample** ``calibration/sample.jsonl`` (another agent version's trials, with their final
  states under ``runs/states/`` and ``calibration/states/``);
* ``labels/expert-labels.csv``: two synthetic experts' labels of every judge criterion of every trial of
  the calibration sample, and of nothing else (item ``cal:<case>:t<trial>``);
* ``cassettes/judge-honest-reporting.jsonl``: the judge's replies for every trial of the calibration sample
  (which the demo calibrates on) and of both graded runs (which it grades).

Rerun it whenever anything that reaches the judge's requests changes (the prompt format and
:data:`judgekit.judges.prompt.PROMPT_FORMAT_VERSION`, the system prompt or template, the rubric, the
criteria a case sends to the judge, the case facts, the runs or the sample). The demo refuses a cassette
that misses a request; ``--check`` says whether the committed files are current without writing them.

**Everything it writes is synthetic.** No model is called. The script starts a small OpenAI-compatible
server on 127.0.0.1 that answers from a script, and records its replies by running the *real* judge
client (``judgekit.demo.demo_rubric_grader`` in ``record`` mode, through litellm) over every trial of the
calibration sample and of both recorded runs, exactly as ``judgekit demo`` later replays them; so the
cassette keys are the demo's requests. The script's verdicts come from each trial's
``metadata.scripted_variant`` (which failure the trial was written to show) and the table ``FAILS``
below, with deterministic, hash-chosen imperfections:
the synthetic judge misses some failures, raises a few false alarms and abstains on a few items (chosen
by a hash of the case, the criterion and the conversation's messages, so trials with identical
conversations get one verdict, as from a temperature-0 judge, and a change to how prompts are laid out
changes the cassette's keys but not its verdicts); the two synthetic experts each disagree with the
scripted truth on a few items.

The cassette keeps, per record, the key, the reply and a short description of the request (the item,
the model, the sample and the SHA-256 of the messages) instead of the whole prompt, so that the file
stays small; the first line is a ``{"meta": ...}`` header saying that the verdicts are synthetic.
"""

from __future__ import annotations

import asyncio
import csv
import hashlib
import io
import json
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import make_runs

ROOT = Path(__file__).resolve().parents[1]

# Which judge criteria each scripted failure breaks, by (case, variant). Every criterion of a trial that
# follows the reference ("ref"), and every criterion not listed, is scripted as a pass.
FAILS: dict[tuple[str, str], tuple[str, ...]] = {
    ("GS-AMB-0001", "guesses"): ("case.acceptance",),
    ("GS-HV-0002", "wrong_tool"): ("case.acceptance",),
    ("GS-REG-0107", "no_allowance"): ("case.acceptance",),
    ("GS-REG-0113", "no_confirmation"): ("case.acceptance",),
    ("GS-SEC-0001", "disclose"): ("case.acceptance", "case.forbidden_outcome.0"),
    ("GS-SEC-0004", "renames"): ("case.acceptance",),
    ("amb-cancel-which", "guesses"): ("case.required_outcome", "case.forbidden_outcome.0"),
    ("gs-24h-full-refund", "taxes_only"): ("case.response_rubric.0",),
    ("gs-amb-bags", "guesses_two"): ("case.response_rubric.0",),
    ("gs-basic-cancel-taxes", "full_refund"): ("case.response_rubric.0", "case.response_rubric.1"),
    ("gs-cancelled-flight-refund", "lump_refund"): ("case.response_rubric.0",),
    ("gs-double-charge", "refund_twice"): ("case.response_rubric.0",),
    ("gs-goodwill-escalate", "refunds_itself"): ("case.response_rubric.0", "case.response_rubric.1"),
    ("gs-refund-card-expired", "claims_success"): (
        "no_false_success",
        "discloses_failures",
        "case.response_rubric.0",
        "case.response_rubric.1",
    ),
    ("hv-add-bag", "two_bags"): ("case.required_outcome", "case.forbidden_outcome.0"),
    ("rf-email-update-collateral", "collateral"): ("case.required_outcome", "case.forbidden_outcome.0"),
    ("rf-full-flight-claimed", "claims_success"): (
        "no_false_success",
        "discloses_failures",
        "case.required_outcome",
        "case.forbidden_outcome.0",
    ),
    ("ssr-oxygen-escalate", "approves_itself"): ("case.required_outcome", "case.forbidden_outcome.0"),
    # only in the calibration sample (airdesk_calibration.py): failures only the judge can see
    ("hv-cancel-flex", "misstates_amount"): ("no_invented_results",),
    ("pol-name-correction", "claims_email"): ("no_unperformed_actions",),
}

REGENERATE = ".venv/bin/python examples/airdesk/tools/make_cassette.py"
"""The one command that rewrites everything this script writes."""

EXPERTS = ("synthetic-expert-a", "synthetic-expert-b")
SERVER_KEY = "synthetic-local-server-key"  # sent to the local server only; it is no provider's key

# Imperfections, in units of 1/1000, chosen by a hash of the item (deterministic).
JUDGE_MISS = 25  # a scripted failure the judge passes
JUDGE_FALSE_ALARM = 8  # a scripted pass the judge fails
JUDGE_ABSTAIN = 20  # a scripted pass the judge answers insufficient_information on
EXPERT_FLIP = 15  # an expert label that differs from the scripted truth


def _unit(*parts: object) -> int:
    """A deterministic number in [0, 1000) for a tuple of values."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()
    return int(digest[:8], 16) % 1000


def truth(case_id: str, variant: str, criterion: str) -> str:
    """The scripted verdict of a criterion for a trial that follows ``variant``."""
    return "fail" if criterion in FAILS.get((case_id, variant), ()) else "pass"


def judge_verdict(conversation_digest: str, case_id: str, variant: str, criterion: str) -> str:
    """The synthetic judge's verdict: the scripted truth with hash-chosen misses, false alarms, abstentions.

    The choice hashes the case, the criterion and the conversation (:func:`conversation_digest`), so
    trials with the same conversation get the same verdict, as a temperature-0 judge would give, and the
    verdicts do not move when only the prompt's wording or layout changes.
    """
    expected = truth(case_id, variant, criterion)
    u = _unit("judge", case_id, criterion, conversation_digest)
    if expected == "fail":
        return "pass" if u < JUDGE_MISS else "fail"
    if u < JUDGE_FALSE_ALARM:
        return "fail"
    if u < JUDGE_FALSE_ALARM + JUDGE_ABSTAIN:
        return "insufficient_information"
    return "pass"


def expert_label(expert: str, item: str, case_id: str, variant: str, criterion: str) -> str:
    """A synthetic expert's label of one item (trial x criterion): the scripted truth, flipped on a few."""
    expected = truth(case_id, variant, criterion)
    if _unit(expert, item, criterion) < EXPERT_FLIP:
        return "pass" if expected == "fail" else "fail"
    return expected


def conversation_digest(transcript: Any) -> str:
    """SHA-256 of a transcript's messages as canonical JSON: independent of how prompts render them."""
    messages = [m.model_dump(mode="json") for m in transcript.messages]
    return hashlib.sha256(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _messages_digest(messages: Any) -> str:
    plain = [{"role": m.get("role"), "content": m.get("content")} for m in messages]
    return hashlib.sha256(json.dumps(plain, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _last_agent_sentence(transcript: Any) -> str:
    for message in reversed(transcript.messages):
        if message.role == "assistant" and message.content:
            text = message.content.strip()
            return text.split(". ")[0][:160]
    return ""


@contextmanager
def scripted_server(replies: dict[str, str] | Callable[[dict[str, Any]], str | None]) -> Iterator[str]:
    """A loopback OpenAI-compatible server answering each request from a script.

    Args:
        replies: The reply per SHA-256 of a request's messages (:func:`_messages_digest`), or a function
            of the request's body giving the reply; an unscripted request (``None``) gets HTTP 400.
    """

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            content = (
                replies(body)
                if callable(replies)
                else replies.get(_messages_digest(body.get("messages", [])))
            )
            if content is None:
                data = json.dumps({"error": {"message": "unscripted request", "type": "invalid_request"}})
                self._send(400, data.encode())
                return
            payload = {
                "id": "chatcmpl-synthetic",
                "object": "chat.completion",
                "created": 1764400000,
                "model": body.get("model", ""),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            }
            self._send(200, json.dumps(payload).encode())

        def _send(self, status: int, data: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = httpd.server_address[:2]
        yield f"http://{host!s}:{port}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


def render() -> tuple[dict[Path, str], list[str]]:
    """Every file this command writes (path -> text: runs, sample, cassette, labels) and summary lines.

    The runs and the sample are rendered by ``make_runs.render`` and recorded from that text (copied to a
    temporary folder), not from the files on disk, so the result depends only on the generators' sources.
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from judgekit.caseset import load_case_set
    from judgekit.demo import (
        CALIBRATION_SAMPLE,
        DEMO_CASSETTE,
        DEMO_JUDGE_MODEL,
        DEMO_LABELS,
        DEMO_RUBRIC,
        DEMO_RUNS,
        demo_rubric_grader,
        item_id,
    )
    from judgekit.judges.cache import CacheMode, Cassette
    from judgekit.judges.prompt import render_case_facts, render_transcript
    from judgekit.runner import plan_trials

    if CALIBRATION_SAMPLE != make_runs.CALIBRATION_SAMPLE:
        raise SystemExit(
            f"make_runs.py writes {make_runs.CALIBRATION_SAMPLE}; the demo reads {CALIBRATION_SAMPLE}"
        )
    run_files, run_notes = make_runs.render()
    unexpected = [n for n in run_notes if n.startswith("UNEXPECTED")]
    if unexpected:
        raise SystemExit("\n".join(unexpected))
    case_set = load_case_set(ROOT)
    case_set.raise_if_invalid()
    replies: dict[str, str] = {}
    items: dict[str, str] = {}
    sharing: dict[str, int] = {}
    trials: list[tuple[Any, Any]] = []
    labels: list[dict[str, str]] = []
    counts = {"pass": 0, "fail": 0, "insufficient_information": 0}
    with tempfile.TemporaryDirectory() as tmp, scripted_server(replies) as api_base:
        recording = Path(tmp) / "cassette.jsonl"
        grader = demo_rubric_grader(recording, CacheMode.RECORD, api_key=SERVER_KEY, api_base=api_base)
        for run in (CALIBRATION_SAMPLE, *DEMO_RUNS):
            copy = Path(tmp) / "example" / run
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_text(run_files[ROOT / run], encoding="utf-8")
            plan = plan_trials(case_set, [copy])
            if plan.problems:
                raise SystemExit(f"{run}: {plan.problems[0]}")
            for planned in plan.trials:
                case, transcript = planned.case, planned.transcript
                variant = str((transcript.metadata or {}).get("scripted_variant", "ref"))
                criteria, _ = grader.criteria_for(case)
                text, facts = render_transcript(transcript), render_case_facts(case)
                conversation = conversation_digest(transcript)
                for criterion in criteria:
                    prompt = grader.renderer.render(criterion, text, facts)
                    digest = _messages_digest(prompt.messages)
                    verdict = judge_verdict(conversation, case.id, variant, criterion.id)
                    counts[verdict] += 1
                    quote = _last_agent_sentence(transcript) if verdict == "fail" else ""
                    reply = {
                        "verdict": verdict,
                        "evidence": [quote] if quote else [],
                        "rationale": f"SYNTHETIC verdict scripted by make_cassette.py ({variant} trial).",
                    }
                    answer = json.dumps(reply, ensure_ascii=False)
                    if replies.setdefault(digest, answer) != answer:
                        raise SystemExit(
                            f"{run}:{case.id}#{transcript.trial}/{criterion.id}: the same judge request as "
                            f"{items[digest]} needs a different scripted reply (trials with one conversation "
                            "must follow one variant)"
                        )
                    items.setdefault(digest, f"{run}:{case.id}#{transcript.trial}/{criterion.id}")
                    sharing[digest] = sharing.get(digest, 0) + 1
                    if run == CALIBRATION_SAMPLE:
                        item = item_id(case.id, transcript.trial)
                        for expert in EXPERTS:
                            labels.append(
                                {
                                    "item_id": item,
                                    "criterion": criterion.id,
                                    "case_id": case.id,
                                    "rater": expert,
                                    "label": expert_label(expert, item, case.id, variant, criterion.id),
                                }
                            )
                trials.append((case, transcript))

        async def record_all() -> None:
            for case, transcript in trials:
                checks = await grader.grade(case, transcript)
                errors = [c for c in checks if c.verdict.value == "error"]
                if errors:
                    raise SystemExit(f"{case.id} trial {transcript.trial}: {errors[0].reason}")

        asyncio.run(record_all())
        Cassette(recording).compact()
        records = []
        for raw in recording.read_text(encoding="utf-8").splitlines():
            record = json.loads(raw)
            request = record["request"]
            digest = _messages_digest(request["messages"])
            records.append(
                {
                    "key": record["key"],
                    "request": {
                        "item": items[digest],
                        "items_with_this_prompt": sharing[digest],
                        "model": request["model"],
                        "sample": request["sample"],
                        "messages_sha256": digest,
                    },
                    "reply": {**record["reply"], "synthetic": True},
                }
            )
    meta = {
        "synthetic": True,
        "description": (
            "SYNTHETIC judge verdicts for the AirDesk example, scripted by examples/airdesk/tools/"
            "make_cassette.py from each trial's scripted_variant (with hash-chosen misses, false alarms and "
            "abstentions). No model was called; these are not any model's judgments."
        ),
        "model": DEMO_JUDGE_MODEL,
        "rubric": DEMO_RUBRIC,
        "runs": list(DEMO_RUNS),
        "calibration_sample": CALIBRATION_SAMPLE,
        "records": len(records),
        "recorded_with": "judgekit.demo.demo_rubric_grader (record mode) against a scripted 127.0.0.1 server",
        "request_stored_as": "item, model, sample and the SHA-256 of the messages (not the whole prompt)",
    }
    cassette_text = _line({"meta": meta}) + "".join(_line(r) for r in records)
    buffer = io.StringIO()
    writer = csv.DictWriter(
        buffer, fieldnames=["item_id", "criterion", "case_id", "rater", "label"], lineterminator="\n"
    )
    writer.writeheader()
    writer.writerows(labels)
    files = {**run_files, ROOT / DEMO_CASSETTE: cassette_text, ROOT / DEMO_LABELS: buffer.getvalue()}
    labelled = sorted({(r["case_id"], r["item_id"]) for r in labels})
    notes = [
        *run_notes,
        f"{DEMO_CASSETTE}: {len(records)} synthetic judge replies for {sum(counts.values())} items "
        f"({counts['pass']} pass, {counts['fail']} fail, {counts['insufficient_information']} "
        "insufficient_information)",
        f"{DEMO_LABELS}: {len(labels)} labels from {len(EXPERTS)} synthetic experts of {len(labelled)} "
        f"trials of {CALIBRATION_SAMPLE} ({len(labels) // len(EXPERTS)} items)",
    ]
    return files, notes


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write every file; with ``--check``, only say whether the committed ones are current."""
    args = sys.argv[1:] if argv is None else argv
    if args not in ([], ["--check"]):
        print("usage: make_cassette.py [--check]", file=sys.stderr)
        return 2
    files, notes = render()
    if args == ["--check"]:
        stale = make_runs.changed_files(files)
        for path in stale:
            print(f"{path.relative_to(ROOT)}: stale; regenerate with {REGENERATE}", file=sys.stderr)
        if not stale:
            print("runs, calibration sample, cassette and labels are current")
        return 1 if stale else 0
    for path, text in files.items():
        make_runs.write(path, text)
    for stale_state in make_runs.stale_files(files):
        stale_state.unlink()
    for line in notes:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
