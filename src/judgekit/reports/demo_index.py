"""The index page of ``judgekit demo``'s report folder: what was run, and a link to every report.

One self-contained HTML file (inline CSS, no script, nothing fetched) rendered with autoescaping. The page
shows figures the demo computed (:class:`DemoFacts`); it computes none itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from judgekit.reports.jinja import template_environment

__all__ = ["DemoFacts", "DemoPage", "DemoRunFacts", "render_demo_index"]


@dataclass(frozen=True)
class DemoPage:
    """One report linked from the index.

    Attributes:
        title: The link text.
        href: Path relative to the index.
        summary: One line saying what the page shows.
    """

    title: str
    href: str
    summary: str


@dataclass(frozen=True)
class DemoRunFacts:
    """What one graded run showed about trust and the grading contract (the demo prints the same lines).

    Attributes:
        name: The run (``agent-v1``).
        trials: Trials graded.
        verdicts: The trials by verdict state, as one line.
        judge: The judge's checks by trust and the verdicts resting on untrusted judges, as one line.
        untrusted_verdicts: Checks whose verdict counted although their judge was untrusted.
        undecided_summary: How many trials were neither pass nor fail, and by which state.
        undecided: The most common reasons for those (``n x case (state): reason``), most frequent first.
    """

    name: str
    trials: int
    verdicts: str
    judge: str
    untrusted_verdicts: int
    undecided_summary: str
    undecided: tuple[str, ...] = ()


@dataclass(frozen=True)
class DemoFacts:
    """Which transcripts calibrated the judge, which were graded, and how far the judge was trusted.

    Attributes:
        calibration: The calibration sample (labelled items, where from, not graded).
        graded: The graded runs and their separation from the calibration sample.
        trust: The trust decision for the judge's fingerprint, with its reason.
        runs: Per graded run, what the contract did.
    """

    calibration: str
    graded: str
    trust: str
    runs: tuple[DemoRunFacts, ...] = ()


def render_demo_index(
    pages: Sequence[DemoPage],
    *,
    problems: Sequence[str] = (),
    synthetic_note: str = "",
    facts: DemoFacts | None = None,
) -> str:
    """Render the report folder's ``index.html``.

    Args:
        pages: The reports, in the order to list them.
        problems: Findings of the demo's checks (coverage gaps, broken references), shown first.
        synthetic_note: What in the data is synthetic.
        facts: Calibration sample, graded runs, trust and the contract's undecided trials; ``None`` leaves
            the section out.
    """
    from judgekit.version import __version__

    env = template_environment()
    return env.get_template("demo_index.html.j2").render(
        pages=pages, problems=problems, synthetic_note=synthetic_note, facts=facts, version=__version__
    )
