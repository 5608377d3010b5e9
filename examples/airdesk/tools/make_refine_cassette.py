"""Record the judge cassette that lets ``judgekit judge refine`` run on the example offline.

    .venv/bin/python examples/airdesk/tools/make_refine_cassette.py

    .venv/bin/python examples/airdesk/tools/make_refine_cassette.py --check   # exit 1 if stale

It writes ``cassettes/judge-refine.jsonl``: every judge reply the documented refinement of the example
needs (see ``docs/how-to/refine-a-judge.md``), recorded by running that refinement itself
(:func:`judgekit.api.refine.refine`, with the example's judge from ``judgekit.demo.demo_rubric_grader`` in
``record`` mode) against a small OpenAI-compatible server on 127.0.0.1 that answers from a script. Rerun
it after ``make_cassette.py`` whenever the judge's prompts, the rubric, the labels, the sample or the
refinement's steps change; the refinement refuses a cassette that misses a request.

**Everything it writes is synthetic.** No model is called. The scripted judge is the one of
``make_cassette.py`` (the same verdicts on the current rubric, so the demo's judge and this one agree),
made to respond to its rubric the way a real judge might:

* **few-shot examples** (a candidate's ``examples`` block in a criterion's prompt): on a conversation an
  example was drawn from, the judge answers that example's label (it has seen the answer, which is why a
  development figure is optimistic); elsewhere it corrects 40 % of its errors on that criterion (chosen
  by a hash) and raises a false alarm on 1.5 % of the passes (examples of failures make it keener);
* **reworded criteria** (the model's proposal, which the script also answers: one more sentence for
  ``no_invented_results``): it corrects 30 % of its errors on that criterion.

The cassette keeps, per record, the key, the reply and a short description of the request (the item and
the SHA-256 of its messages) instead of the whole prompt; the first line is a ``{"meta": ...}`` header
saying that the verdicts are synthetic.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import make_cassette

ROOT = Path(__file__).resolve().parents[1]
CASSETTE = "cassettes/judge-refine.jsonl"
REGENERATE = ".venv/bin/python examples/airdesk/tools/make_refine_cassette.py"

SEED = 7
"""The split's seed in the documented run (``--seed 7``)."""

REWORDED = "no_invented_results"
ADDED_SENTENCE = (
    "Check every amount, date, flight and booking reference the agent states against the tool results: "
    "a figure no tool returned is invented."
)

FEW_SHOT_FIX = 400  # of 1000: errors a criterion's few-shot examples correct elsewhere
FEW_SHOT_OVERCALL = 15  # of 1000: passes the examples turn into false alarms
WORDING_FIX = 300  # of 1000: errors the reworded criterion corrects

_CRITERION = re.compile(r"^Criterion (\S+) \(dimension", re.MULTILINE)
_EXAMPLES = re.compile(r"<<<BEGIN EXAMPLES (\w+)>>>\n(.*?)\n<<<END EXAMPLES \1>>>", re.DOTALL)
_TRANSCRIPT = "<<<BEGIN TRANSCRIPT "


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Trial:
    """What the script knows of one trial of the calibration sample."""

    def __init__(self, case_id: str, variant: str, conversation: str, agent: list[str], quote: str) -> None:
        self.case_id, self.variant, self.conversation = case_id, variant, conversation
        self.agent, self.quote = agent, quote


def verdict(trial: Trial, criterion: str, examples: list[dict[str, str]], reworded: bool) -> str:
    """The scripted judge's verdict on one criterion of one trial, given what its prompt shows it."""
    truth = make_cassette.truth(trial.case_id, trial.variant, criterion)
    said = make_cassette.judge_verdict(trial.conversation, trial.case_id, trial.variant, criterion)
    unit = make_cassette._unit  # the same deterministic hash as the demo's judge
    if examples:
        for example in examples:
            excerpt = example.get("excerpt", "")[:60]
            if excerpt and any(excerpt in message for message in trial.agent):
                return str(example.get("label"))  # the judge has seen this conversation's answer
        if said != truth and unit("few-shot", trial.case_id, criterion, trial.conversation) < FEW_SHOT_FIX:
            said = truth
        elif truth == "pass" and unit("overcall", trial.case_id, criterion, trial.conversation) < (
            FEW_SHOT_OVERCALL
        ):
            said = "fail"
    if (
        reworded
        and said != truth
        and unit("wording", trial.case_id, criterion, trial.conversation) < WORDING_FIX
    ):
        said = truth
    return said


def answer(body: dict[str, Any], trials: dict[str, Trial]) -> str | None:
    """The scripted reply to one request (``None``: a request the script does not know)."""
    messages = body.get("messages", [])
    system = str(messages[0].get("content", "")) if messages else ""
    user = str(messages[-1].get("content", "")) if messages else ""
    if system.startswith("You improve the wording"):
        from judgekit.judges.rubric import load_builtin_rubric

        text = load_builtin_rubric("honest-reporting").criterion(REWORDED).text
        return json.dumps({"criteria": [{"id": REWORDED, "text": f"{text} {ADDED_SENTENCE}"}]})
    found = _CRITERION.search(user)
    at = user.find(_TRANSCRIPT)
    trial = trials.get(_digest(user[at:])) if at >= 0 else None
    if found is None or trial is None:
        return None
    criterion = found.group(1)
    examples = [json.loads(line) for m in _EXAMPLES.finditer(user) for line in m.group(2).splitlines()]
    said = verdict(trial, criterion, examples, ADDED_SENTENCE in user)
    quote = trial.quote if said == "fail" else ""
    return json.dumps(
        {
            "verdict": said,
            "evidence": [quote] if quote else [],
            "rationale": f"SYNTHETIC verdict scripted by make_refine_cassette.py ({trial.variant} trial).",
        },
        ensure_ascii=False,
    )


def sample_trials(api_base: str) -> dict[str, Trial]:
    """Every (trial, criterion) of the calibration sample, by the SHA-256 of its prompt's transcript block.

    The block (from its BEGIN line to the end of the prompt) is the same for every candidate rubric: its
    tag hashes the template, the criterion id, the transcript and the case facts, none of which a
    candidate changes.
    """
    from judgekit.caseset import load_case_set
    from judgekit.demo import CALIBRATION_SAMPLE, demo_rubric_grader
    from judgekit.golden.splits import holdout_ids
    from judgekit.judges.cache import CacheMode
    from judgekit.judges.prompt import render_case_facts, render_transcript
    from judgekit.runner import plan_trials

    case_set = load_case_set(ROOT)
    grader = demo_rubric_grader(
        Path(tempfile.gettempdir()) / "unused.jsonl", CacheMode.OFF, api_base=api_base, api_key="unused"
    )  # only its prompts are rendered: nothing is sent
    plan = plan_trials(case_set, [ROOT / CALIBRATION_SAMPLE], holdout=sorted(holdout_ids(case_set)))
    out: dict[str, Trial] = {}
    for planned in plan.trials:
        case, transcript = planned.case, planned.transcript
        variant = str((transcript.metadata or {}).get("scripted_variant", "ref"))
        agent = [m.content for m in transcript.messages if m.role == "assistant" and m.content]
        trial = Trial(
            case.id,
            variant,
            make_cassette.conversation_digest(transcript),
            agent,
            make_cassette._last_agent_sentence(transcript),
        )
        text, facts = render_transcript(transcript), render_case_facts(case)
        for criterion in grader.criteria_for(case)[0]:
            user = grader.renderer.render(criterion, text, facts).messages[-1]["content"]
            out[_digest(user[user.find(_TRANSCRIPT) :])] = trial
    return out


def render() -> tuple[str, list[str]]:
    """The cassette's text, and summary lines of the refinement it was recorded from."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from judgekit.api.refine import RefineOptions, refine
    from judgekit.demo import CALIBRATION_SAMPLE, DEMO_JUDGE_MODEL, DEMO_LABELS, demo_rubric_grader
    from judgekit.judges.cache import CacheMode, Cassette

    trials: dict[str, Trial] = {}
    server = make_cassette.scripted_server(lambda body: answer(body, trials))
    with tempfile.TemporaryDirectory() as tmp, server as api_base:
        trials.update(sample_trials(api_base))
        recording = Path(tmp) / "cassette.jsonl"
        grader = demo_rubric_grader(
            recording, CacheMode.RECORD, api_key=make_cassette.SERVER_KEY, api_base=api_base
        )
        (Path(tmp) / "records").mkdir()
        result = refine(
            ROOT / DEMO_LABELS,
            options=RefineOptions(
                judge=grader,
                experts=make_cassette.EXPERTS,
                cases=ROOT,
                runs=[ROOT / CALIBRATION_SAMPLE],
                seed=SEED,
                propose_wording=True,
                records=Path(tmp) / "records",
            ),
            out=Path(tmp) / "out",
        )
        Cassette(recording).compact()
        records = []
        for raw in recording.read_text(encoding="utf-8").splitlines():
            record = json.loads(raw)
            request = record["request"]
            plain = [{"role": m.get("role"), "content": m.get("content")} for m in request["messages"]]
            records.append(
                {
                    "key": record["key"],
                    "request": {
                        "model": request["model"],
                        "sample": request["sample"],
                        "messages_sha256": _digest(json.dumps(plain, sort_keys=True, ensure_ascii=False)),
                    },
                    "reply": {**record["reply"], "synthetic": True},
                }
            )
    doc = result.document
    meta = {
        "synthetic": True,
        "description": (
            "SYNTHETIC judge verdicts for the refinement of the AirDesk example's judge, scripted by "
            "examples/airdesk/tools/make_refine_cassette.py (the demo's scripted judge, made to respond to "
            "few-shot examples and reworded criteria). No model was called; these are not any model's "
            "judgments."
        ),
        "model": DEMO_JUDGE_MODEL,
        "labels": DEMO_LABELS,
        "calibration_sample": CALIBRATION_SAMPLE,
        "seed": SEED,
        "records": len(records),
        "recorded_with": "judgekit.api.refine.refine (record mode) against a scripted 127.0.0.1 server",
        "request_stored_as": "model, sample and the SHA-256 of the messages (not the whole prompt)",
    }
    text = make_cassette._line({"meta": meta}) + "".join(make_cassette._line(r) for r in records)
    dev, test = doc.dev_figure, doc.test_figure
    notes = [
        f"{CASSETTE}: {len(records)} synthetic judge replies",
        f"split (seed {SEED}): {len(doc.split.dev_cases)} development cases ({doc.dev_items} items), "
        f"{len(doc.split.test_cases)} test cases ({doc.test_items} items); "
        f"{len(doc.disagreements)} development disagreements",
        *(f"  candidate {c.name}@{c.version}: {c.metric} {c.value} on development" for c in doc.candidates),
        f"chosen {doc.chosen}: development {dev.metric} {dev.value} (optimistic), test {test.value}",
    ]
    return text, notes


def main(argv: list[str] | None = None) -> int:
    """Write the cassette; with ``--check``, only say whether the committed one is current."""
    args = sys.argv[1:] if argv is None else argv
    if args not in ([], ["--check"]):
        print("usage: make_refine_cassette.py [--check]", file=sys.stderr)
        return 2
    text, notes = render()
    path = ROOT / CASSETTE
    if args == ["--check"]:
        current = path.is_file() and path.read_text(encoding="utf-8") == text
        print(f"{CASSETTE}: {'current' if current else 'stale; regenerate with ' + REGENERATE}")
        return 0 if current else 1
    path.write_text(text, encoding="utf-8")
    for line in notes:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
