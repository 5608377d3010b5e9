"""Write the recorded runs of two synthetic agent versions: runs/agent-v1.jsonl and runs/agent-v2.jsonl.

Run after make_fixtures.py (deterministic; rerunning rewrites the same bytes):

    .venv/bin/python examples/airdesk/tools/make_runs.py

Each version has four trials per case. A trial follows either the case's reference conversation or one
of its scripted failure variants (see ``v1``/``v2`` in airdesk_cases.py): refunding twice, refunding too
much, changing another customer's record, claiming success after a failed tool call, leaving out a
required mention, calling the wrong tool, acting before confirmation or on a guess. v2 fixes most of
v1's failures and breaks gs-cancelled-flight-refund; in GS-REG-0107 it leaves out a required mention
(reported by the text layer, but not a gate).

Final states: a trial that ends where the reference ends points at the reference's final state; one
that changes nothing points at its fixture; any other ends in its own file under runs/states/.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from airdesk_cases import SPECS
from airdesk_world import FIXTURES, to_sql
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


def render() -> tuple[dict[Path, str], list[str]]:
    """Every file this generator owns (absolute path -> text) and a summary line per version.

    A summary line starting with ``UNEXPECTED`` means a trial's outcome (by the generator's checker)
    differs from what its variant intends.
    """
    runs = ROOT / "runs"
    files: dict[Path, str] = {}
    notes: list[str] = []
    for version, info in VERSIONS.items():
        lines: list[str] = []
        summary: dict[str, int] = {"pass": 0, "fail": 0}
        for spec in SPECS:
            case = build_case(spec)
            reference = play(spec, "ref")
            plan = spec.v1 if version == "v1" else spec.v2
            for trial, name in enumerate(plan, start=1):
                convo = play(spec, name)
                world = convo.sim.world
                if world == FIXTURES[spec.fixture]:
                    final = f"../{fixture_path(spec.fixture)}"
                elif world == reference.sim.world:
                    final = f"../transcripts/{spec.id}/final.sql"
                else:
                    final = f"states/{spec.id}--{name}.sql"
                    files[runs / final] = to_sql(world)
                problems = check_all(spec, case, convo, reference)
                summary["fail" if problems else "pass"] += 1
                if bool(problems) != (name != "ref"):
                    notes.append(
                        f"UNEXPECTED {version} {spec.id} trial {trial} ({name}): {problems or 'passes'}"
                    )
                run = {
                    "agent_model": "synthetic/airdesk-agent",
                    "prompt_hash": info["prompt"],
                    "tool_definitions_hash": TOOLS_HASH,
                    "app_version": info["app_version"],
                    "fixture_version": FIXTURE_VERSION,
                    "config": {"temperature": 0.7, "max_turns": 12, "seed": trial},
                }
                lines.append(
                    transcript_line(
                        spec,
                        convo,
                        trial=trial,
                        initial=f"../{fixture_path(spec.fixture)}",
                        final=final,
                        run=run,
                        metadata={"agent_version": version, "scripted_variant": name},
                    )
                )
        files[runs / f"agent-{version}.jsonl"] = "".join(lines)
        notes.append(f"agent-{version}: {len(lines)} trials; by the independent checker {summary}")
    return files, notes


def main() -> int:
    files, notes = render()
    for path, text in files.items():
        write(path, text)
    for stale in (ROOT / "runs" / "states").glob("*.sql"):
        if stale not in files:
            stale.unlink()
    for line in notes:
        print(line)
    return 1 if any(line.startswith("UNEXPECTED") for line in notes) else 0


if __name__ == "__main__":
    sys.exit(main())
