"""Write the recorded runs of two synthetic agent versions and the judge's calibration sample.

Run after make_fixtures.py (deterministic; rerunning rewrites the same bytes):

    .venv/bin/python examples/airdesk/tools/make_runs.py            # runs/ and calibration/
    .venv/bin/python examples/airdesk/tools/make_runs.py --check    # exit 1 if they are stale

(``make_cassette.py`` runs this too, then records the cassette and the expert labels: that one command
regenerates everything downstream of the cases.)

**The graded runs** (``runs/agent-v1.jsonl``, ``runs/agent-v2.jsonl``). Each version has four trials per
case. A trial follows either the case's reference conversation or one of its scripted failure variants
(see ``v1``/``v2`` in airdesk_cases.py): refunding twice, refunding too much, changing another customer's
record, claiming success after a failed tool call, leaving out a required mention, calling the wrong tool,
acting before confirmation or on a guess. v2 fixes most of v1's failures and breaks
gs-cancelled-flight-refund; in GS-REG-0107 it leaves out a required mention.

**The calibration sample** (``calibration/sample.jsonl``): the transcripts the two synthetic experts
label and the judge is calibrated on, never graded by the demo. They come from another agent version, the
pilot (``airdesk 1.3.2``, other seeds), four trials per case: trials 1 and 4 follow the reference and
trials 2 and 3 the case's failure variant (the variants of airdesk_cases.py, plus the two judge-only
failures of airdesk_calibration.py), so that both classes occur for every criterion the judge decides.
The pilot opens its first reply with a greeting that varies with the seed (:data:`PILOT_GREETINGS`), so no
calibration conversation is the same as any graded one, nor as another calibration trial: the demo checks
that the sample and the graded runs share no transcript content.

Final states: a trial that ends where the reference ends points at the reference's final state; one
that changes nothing points at its fixture; any other ends in its own file under ``runs/states/`` or
``calibration/states/``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from airdesk_calibration import CALIBRATION_VARIANTS
from airdesk_cases import SPECS, Spec
from airdesk_world import FIXTURES, Conversation, to_sql
from make_fixtures import (
    FIXTURE_VERSION,
    PROMPT_HASH,
    ROOT,
    TOOLS_HASH,
    build_case,
    check_all,
    fixture_path,
    play,
    sha,
    transcript_line,
    write,
)

VERSIONS = {
    "v1": {"app_version": "airdesk 1.4.0", "prompt": PROMPT_HASH},
    "v2": {"app_version": "airdesk 1.5.0", "prompt": sha("v2 prompt: confirm, then act; report tool errors")},
}

CALIBRATION_SAMPLE = "calibration/sample.jsonl"
"""The calibration sample, relative to the example's root (``judgekit.demo.CALIBRATION_SAMPLE``)."""

PILOT = {"app_version": "airdesk 1.3.2", "prompt": sha("pilot prompt: greet the customer, then help")}
PILOT_SEED = 9000
"""The pilot's trial ``n`` ran with seed ``PILOT_SEED + n`` (the graded runs use seeds 1-4)."""

PILOT_GREETINGS = (
    "Thanks for contacting Skylark Air. ",
    "Hello, and thank you for your patience. ",
    "Hi, AirDesk here for Skylark Air. ",
    "Thank you for reaching out to Skylark Air. ",
)
"""The pilot's opening words, by trial (it was sampled at temperature 0.7)."""

GENERATED_STATES = ("runs/states", "calibration/states")
"""The folders whose every ``*.sql`` this generator owns (stale ones are deleted)."""


def calibration_plan(spec: Spec) -> tuple[str, str, str, str]:
    """The pilot's four trials: a failure in trials 2 and 3, if the case has one."""
    failures = [*sorted(spec.variants), *sorted(n for (cid, n) in CALIBRATION_VARIANTS if cid == spec.id)]
    if not failures:
        return ("ref", "ref", "ref", "ref")
    return ("ref", failures[0], failures[-1], "ref")


def _play(spec: Spec, name: str) -> Conversation:
    script = CALIBRATION_VARIANTS.get((spec.id, name))
    if script is None:
        return play(spec, name)
    convo = Conversation(FIXTURES[spec.fixture])
    script(convo)
    return convo


def _greet(convo: Conversation, trial: int) -> None:
    """Open the pilot's first reply with its greeting for this trial (the conversation is the trial's own)."""
    greeting = PILOT_GREETINGS[(trial - 1) % len(PILOT_GREETINGS)]
    for i, message in enumerate(convo.messages):
        if message["role"] == "assistant" and message.get("content"):
            convo.messages[i] = {**message, "content": greeting + message["content"]}
            return


def _trials(
    folder: str,
    name: str,
    *,
    plans: Sequence[tuple[Spec, Sequence[str]]],
    info: dict[str, Any],
    files: dict[Path, str],
    notes: list[str],
    seed: int = 0,
    greet: bool = False,
) -> None:
    """Play every planned trial, write its final state when it is its own, and add the JSONL file."""
    lines: list[str] = []
    summary: dict[str, int] = {"pass": 0, "fail": 0}
    for spec, plan in plans:
        case = build_case(spec)
        reference = play(spec, "ref")
        for trial, variant in enumerate(plan, start=1):
            convo = _play(spec, variant)
            if greet:
                _greet(convo, trial)
            world = convo.sim.world
            if world == FIXTURES[spec.fixture]:
                final = f"../{fixture_path(spec.fixture)}"
            elif world == reference.sim.world:
                final = f"../transcripts/{spec.id}/final.sql"
            else:
                final = f"states/{spec.id}--{variant}.sql"
                files[ROOT / folder / final] = to_sql(world)
            problems = check_all(spec, case, convo, reference)
            summary["fail" if problems else "pass"] += 1
            caught = variant in spec.variants  # the judge-only variants pass every deterministic check
            if bool(problems) != caught:
                notes.append(f"UNEXPECTED {name} {spec.id} trial {trial} ({variant}): {problems or 'passes'}")
            run = {
                "agent_model": "synthetic/airdesk-agent",
                "prompt_hash": info["prompt"],
                "tool_definitions_hash": TOOLS_HASH,
                "app_version": info["app_version"],
                "fixture_version": FIXTURE_VERSION,
                "config": {"temperature": 0.7, "max_turns": 12, "seed": seed + trial},
            }
            lines.append(
                transcript_line(
                    spec,
                    convo,
                    trial=trial,
                    initial=f"../{fixture_path(spec.fixture)}",
                    final=final,
                    run=run,
                    metadata={"agent_version": info["agent_version"], "scripted_variant": variant},
                )
            )
    files[ROOT / folder / f"{name}.jsonl"] = "".join(lines)
    notes.append(f"{folder}/{name}.jsonl: {len(lines)} trials; by the independent checker {summary}")


def render() -> tuple[dict[Path, str], list[str]]:
    """Every file this generator owns (absolute path -> text) and a summary line per file.

    A summary line starting with ``UNEXPECTED`` means a trial's outcome (by the generator's checker)
    differs from what its variant intends.
    """
    files: dict[Path, str] = {}
    notes: list[str] = []
    for version, info in VERSIONS.items():
        plans = [(spec, spec.v1 if version == "v1" else spec.v2) for spec in SPECS]
        run_info = {**info, "agent_version": version}
        _trials("runs", f"agent-{version}", plans=plans, info=run_info, files=files, notes=notes)
    sample = Path(CALIBRATION_SAMPLE)
    _trials(
        str(sample.parent),
        sample.stem,
        plans=[(spec, calibration_plan(spec)) for spec in SPECS],
        info={**PILOT, "agent_version": "pilot"},
        files=files,
        notes=notes,
        seed=PILOT_SEED,
        greet=True,
    )
    return files, notes


def stale_files(files: dict[Path, str]) -> list[Path]:
    """Generated state files on disk that :func:`render` no longer writes."""
    return sorted(p for folder in GENERATED_STATES for p in (ROOT / folder).glob("*.sql") if p not in files)


def changed_files(files: dict[Path, str]) -> list[Path]:
    """Files whose text on disk differs from what :func:`render` writes, then the stale ones."""
    changed = [p for p, text in files.items() if not p.is_file() or p.read_text(encoding="utf-8") != text]
    return [*changed, *stale_files(files)]


def main(argv: list[str] | None = None) -> int:
    """Write the runs and the calibration sample; with ``--check``, only say whether they are current."""
    args = sys.argv[1:] if argv is None else argv
    if args not in ([], ["--check"]):
        print("usage: make_runs.py [--check]", file=sys.stderr)
        return 2
    files, notes = render()
    unexpected = any(line.startswith("UNEXPECTED") for line in notes)
    if args == ["--check"]:
        changed = changed_files(files)
        for path in changed:
            print(f"{path.relative_to(ROOT)}: stale; regenerate with make_runs.py", file=sys.stderr)
        if not changed:
            print("runs and calibration sample are current")
        return 1 if changed or unexpected else 0
    for path, text in files.items():
        write(path, text)
    for stale in stale_files(files):
        stale.unlink()
    for line in notes:
        print(line)
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
