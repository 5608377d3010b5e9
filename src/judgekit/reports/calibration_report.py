"""Render calibration results and grader comparisons as JSON, Markdown and self-contained HTML.

Rendering never computes a metric: it formats what :mod:`judgekit.calibration` measured. The HTML is one
file with inline CSS and inline SVG figures (confusion matrices, metric intervals); nothing is fetched.
Templates live in ``reports/templates/calibration_*.j2`` and render with autoescaping. In the Markdown,
every name or label that comes from the label table, the records or the policy (judge and rater names,
fingerprints, labels, item ids, criteria, notes) goes through
:func:`~judgekit.markdown_text.md_text` (or :func:`~judgekit.markdown_text.md_code` where
it is shown in backticks); judgekit's own text and figures are written as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from jinja2 import Environment
from markupsafe import Markup

from judgekit.calibration.agreement import PairAgreement
from judgekit.calibration.alttest import AltTestResult
from judgekit.calibration.ceiling import HumanCeiling
from judgekit.calibration.compare import GraderComparison
from judgekit.calibration.correlation import MEASURE_NAMES, ScoredAgreement, correlation_table
from judgekit.calibration.jury import JuryAgreement
from judgekit.calibration.pipeline import CalibrationResult
from judgekit.markdown_text import md_code, md_text
from judgekit.reports.calibration_svg import IntervalRow, confusion_svg, intervals_svg
from judgekit.reports.jinja import TEMPLATES, template_environment
from judgekit.stats import Estimate

__all__ = [
    "base_rate_text",
    "comparison_base_rate",
    "comparison_json",
    "comparison_markdown",
    "correlation_intro",
    "criteria_text",
    "fmt_estimate",
    "render_calibration",
    "render_comparison",
    "result_html",
    "result_json",
    "result_markdown",
]


def _env() -> Environment:
    env = template_environment(keep_trailing_newline=True)
    env.filters["est"] = fmt_estimate
    env.filters["num"] = _num
    env.globals["cond_num"] = _cond_num
    env.globals["comparison_base_rate"] = comparison_base_rate
    return env


def _num(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _cond_num(name: str, value: float | None) -> str:
    """Counts (``min_items``) print as integers, everything else with three decimals."""
    if value is not None and name == "min_items":
        return str(int(value))
    return _num(value)


def fmt_estimate(est: Estimate | None, digits: int = 3) -> str:
    """``0.734 [0.613, 0.847]``, ``0.734`` without an interval, or ``undefined (reason)``."""
    if est is None:
        return "not computed"
    if est.value is None:
        return f"undefined ({est.undefined_reason})"
    text = f"{est.value:.{digits}f}"
    if est.interval is not None:
        text += f" [{est.interval.low:.{digits}f}, {est.interval.high:.{digits}f}]"
    return text


def _md_cell(text: object) -> str:
    """Text judgekit writes itself (figures, fixed names) in a table cell; untrusted text uses ``md_text``."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _base_rate_phrase(b: Estimate | None) -> str:
    """``consensus base rate 0.375``, ``... undefined: REASON`` or ``... not computed`` (``None``)."""
    if b is None:
        return "consensus base rate not computed"
    if b.value is None:
        return f"consensus base rate undefined: {b.undefined_reason}"
    return f"consensus base rate {b.value:.3f}"


def comparison_base_rate(cmp: GraderComparison) -> str:
    """``consensus base rate 0.375`` on the compared items, or why it is undefined."""
    return _base_rate_phrase(cmp.base_rate)


def base_rate_text(result: CalibrationResult) -> str:
    """``consensus base rate 0.375`` (the share of failures kappa is printed with), or why it is undefined."""
    ceiling = result.ceiling
    if ceiling is not None and ceiling.base_rate.value is None and ceiling.consensus_shares:
        # no failing labels: the class shares are what kappa's chance term reads
        shares = ", ".join(f"{v} {share:.3f}" for v, share in ceiling.consensus_shares.items())
        return f"consensus shares {shares}"
    return _base_rate_phrase(ceiling.base_rate if ceiling is not None else None)


def criteria_text(result: CalibrationResult) -> str | None:
    """One sentence on the labelled criterion texts the record lists, or ``None`` when none were recorded.

    It names the labelled criterion ids, how many distinct texts were hashed, and the ids whose texts were
    not found (then whether a verdict's text was labelled is unknown, so the sentence says how to fix it).
    """
    listed = result.criteria
    if listed is None:
        return None
    if not listed.ids:
        return (
            "Criterion texts: the label table has no criterion column, so the record cannot say which "
            "criterion texts were labelled"
        )
    text = (
        f"Criterion texts labelled: {len(listed.text_hashes)} distinct text(s) of {', '.join(listed.ids)}, "
        "recorded by hash (a verdict on any other text is said to rest on agreement elsewhere)"
    )
    missing = [k for k in listed.unresolved if k]
    if missing:
        text += (
            f"; texts not found for {', '.join(missing)}: give the judge's rubric (--rubric) and the golden "
            "set (--cases)"
        )
    return text


def _metric_rows(pair: PairAgreement, base: str | None = None) -> list[tuple[str, Estimate]]:
    rows: list[tuple[str, Estimate]] = [("percent agreement", pair.percent_agreement)]
    for w, e in pair.kappa.items():
        note = f"; {base}" if base else ""
        rows.append((f"Cohen's kappa ({'unweighted' if w == 'none' else w}{note})", e))
    for level, e in pair.alpha.items():
        rows.append((f"Krippendorff's alpha ({level})", e))
    rows.append(("Gwet's AC1", pair.ac1))
    if pair.binary is not None:
        b = pair.binary
        rows += [
            ("TPR (failures caught)", b.tpr),
            ("TNR", b.tnr),
            ("precision", b.precision),
            ("F1", b.f1),
            ("base rate (failures)", b.base_rate),
        ]
    return rows


def result_json(result: CalibrationResult) -> str:
    """The whole result as indented JSON (schema ``judgekit.calibration-report/1``; ``jury`` for juries)."""
    return result.model_dump_json(indent=2, exclude={"jury"} if result.jury is None else None) + "\n"


def comparison_json(comparison: GraderComparison) -> str:
    """A grader comparison as indented JSON."""
    return comparison.model_dump_json(indent=2) + "\n"


def _confusion_md(pair: PairAgreement) -> list[str]:
    m = pair.confusion
    out = [
        f"| {md_text(m.reference)} \\ {md_text(m.rated)} | "
        + " | ".join(md_text(x) for x in m.labels)
        + " |",
        "|---|" + "---:|" * len(m.labels),
    ]
    for lab, row in zip(m.labels, m.counts, strict=True):
        out.append(f"| {md_text(lab)} | " + " | ".join(str(c) for c in row) + " |")
    return out


def result_markdown(result: CalibrationResult) -> str:
    """The result as Markdown: verdict and conditions first, then metrics, splits and notes."""
    r = result.report
    lines: list[str] = []
    verdict = "TRUSTED" if result.gate.trusted else "NOT TRUSTED"
    lines.append(
        f"# Calibration of judge {md_code(r.judge)} against {', '.join(md_code(e) for e in r.experts)}"
    )
    lines.append("")
    fp = (
        md_code(result.fingerprint)
        if result.fingerprint
        else "none given (no record; the judge stays untrusted)"
    )
    lines.append(f"**Verdict: {verdict}** · fingerprint: {fp}")
    lines.append("")
    lines.append(
        f"Labels: {md_code(result.label_table.name)} (sha256 `{result.label_table.sha256[:16]}…`, "
        f"{result.label_table.rows} ratings) · {r.n_items} items in {r.n_cases} cases · "
        f"scale {md_code(r.scale.name)} "
        f"({r.scale.level}: {', '.join(md_text(v) for v in r.scale.values)}"
        + (f"; abstain {md_code(r.scale.abstain)}" if r.scale.abstain else "")
        + f") · {r.confidence:.0%} intervals, {r.resamples} case-bootstrap resamples (seed {r.seed})"
    )
    lines.append("")
    criteria = criteria_text(result)
    if criteria is not None:
        lines += [md_text(criteria) + ".", ""]
    lines.append("## Trust conditions")
    lines.append("")
    lines.append("| condition | result | required | observed | detail |")
    lines.append("|---|---|---:|---:|---|")
    for c in result.gate.conditions:
        status = "disabled" if c.passed is None else ("pass" if c.passed else "**FAIL**")
        lines.append(
            f"| {c.name} | {status} | {_cond_num(c.name, c.threshold)} | {_cond_num(c.name, c.observed)} | "
            f"{md_text(c.message)} |"
        )
    lines.append("")
    if result.comparison is not None:
        lines += comparison_markdown(result.comparison, heading="##").rstrip("\n").split("\n")
        lines.append("")
    jc = r.judge_vs_consensus
    lines.append(f"## Judge vs expert consensus ({jc.n} items both decided)")
    lines.append("")
    lines.append("| metric | value [interval] | n |")
    lines.append("|---|---|---:|")
    base = base_rate_text(result)
    for name, e in _metric_rows(jc, base):
        lines.append(f"| {md_text(name)} | {_md_cell(fmt_estimate(e))} | {e.n} |")
    if jc.binary_reason:
        lines.append(f"\nBinary metrics: {md_text(jc.binary_reason)}.")
    lines.append("")
    lines.append("Confusion matrix (rows: consensus, columns: judge):")
    lines.append("")
    lines += _confusion_md(jc)
    lines.append("")
    a = r.abstention
    lines.append("## Abstention")
    lines.append("")
    lines.append("| measure | value [interval] |")
    lines.append("|---|---|")
    for name, e in [
        ("coverage (judge decided)", a.coverage),
        ("abstention", a.abstention),
        ("agreement on judged items", a.agreement_on_judged),
        ("abstention where experts split", a.abstention_where_experts_split),
        ("abstention where experts agree", a.abstention_where_experts_agree),
        ("abstention on consensus failures", a.abstention_on_positive),
        ("abstention on consensus non-failures", a.abstention_on_negative),
    ]:
        lines.append(f"| {name} | {_md_cell(fmt_estimate(e))} |")
    lines.append(
        f"| items decided where the experts' consensus was to abstain | {a.decided_where_experts_abstained} |"
    )
    lines.append("")
    lines.append("## Judge vs each expert")
    lines.append("")
    lines.append(f"| expert | n | agreement | kappa ({md_text(base)}) | alpha | AC1 | TPR | TNR |")
    lines.append("|---|---:|---|---|---|---|---|---|")
    level = r.scale.level
    for p in r.judge_vs_experts:
        b = p.binary
        lines.append(
            f"| {md_text(p.a)} | {p.n} | {_md_cell(fmt_estimate(p.percent_agreement))} | "
            f"{_md_cell(fmt_estimate(p.kappa['none']))} | {_md_cell(fmt_estimate(p.alpha.get(level)))} | "
            f"{_md_cell(fmt_estimate(p.ac1))} | {_md_cell(fmt_estimate(b.tpr) if b else '—')} | "
            f"{_md_cell(fmt_estimate(b.tnr) if b else '—')} |"
        )
    lines.append("")
    g = r.expert_group
    lines.append("## Experts vs each other (the human ceiling)")
    lines.append("")
    lines.append("| measure | value [interval] |")
    lines.append("|---|---|")
    for lv, e in g.alpha.items():
        lines.append(f"| Krippendorff's alpha ({lv}), all experts | {_md_cell(fmt_estimate(e))} |")
    lines.append(f"| Fleiss' kappa ({md_text(base)}) | {_md_cell(fmt_estimate(g.fleiss_kappa))} |")
    lines.append(f"| Gwet's AC1 (multi-rater) | {_md_cell(fmt_estimate(g.ac1))} |")
    for k, e in g.mean_pairwise.items():
        note = f" ({md_text(base)})" if k == "cohen_kappa" else ""
        lines.append(f"| mean pairwise {k}{note} | {_md_cell(fmt_estimate(e))} |")
    lines.append("")
    if r.expert_pairs:
        lines.append(f"| pair | n | agreement | kappa ({md_text(base)}) | alpha | AC1 |")
        lines.append("|---|---:|---|---|---|---|")
        for p in r.expert_pairs:
            lines.append(
                f"| {md_text(p.a)} / {md_text(p.b)} | {p.n} | "
                f"{_md_cell(fmt_estimate(p.percent_agreement))} | "
                f"{_md_cell(fmt_estimate(p.kappa['none']))} | {_md_cell(fmt_estimate(p.alpha.get(level)))} | "
                f"{_md_cell(fmt_estimate(p.ac1))} |"
            )
        lines.append("")
    if result.correlations is not None:
        lines += _correlations_md(result.correlations)
    if result.ceiling is not None:
        lines += _ceiling_md(result.ceiling, base)
    if result.alt_test is not None:
        lines += _alt_md(result.alt_test)
    lines.append(f"## Where the experts split ({len(r.splits)} items)")
    lines.append("")
    if r.splits:
        lines.append(
            "Fix these cases or turn them into ask-a-question cases: the experts themselves do not agree."
        )
        lines.append("")
        lines.append("| item | criterion | experts | consensus | judge |")
        lines.append("|---|---|---|---|---|")
        for s in r.splits:
            labels = ", ".join(f"{k}: {v}" for k, v in s.experts.items())
            lines.append(
                f"| {md_text(s.item_id)} | {md_text(s.criterion or '—')} | {md_text(labels)} | "
                f"{md_text(s.consensus or 'tie')} | {md_text(s.judge or '—')} |"
            )
    else:
        lines.append("The experts agreed on every item they shared.")
    lines.append("")
    if result.selective is not None:
        sel = result.selective
        lines.append("## Selective judging")
        lines.append("")
        if sel.threshold is None:
            lines.append(f"No threshold qualifies: {md_text(str(sel.reason))}.")
        else:
            low = sel.agreement.interval.low if sel.agreement.interval is not None else None
            lines.append(
                f"Judge only items with confidence ≥ **{sel.threshold:g}**: coverage "
                f"{fmt_estimate(sel.coverage)}, agreement {_num(sel.agreement.value)} on "
                f"{sel.agreement.n} items (exact one-sided {1 - sel.delta:.0%} lower bound {_num(low)}; "
                f"target {sel.target_agreement:g}, fixed-sequence testing at δ = {sel.delta:g})."
            )
        lines.append("")
    if result.jury is not None:
        lines += _jury_md(result.jury)
    if r.notes:
        lines.append("## Notes")
        lines.append("")
        lines += [f"- {md_text(n)}" for n in r.notes]
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def _jury_md(jury: JuryAgreement) -> list[str]:
    """The jury section: each member against the consensus, their error correlations, effective votes."""
    n = len(jury.members)
    lines = [
        "## Jury",
        "",
        f"**{md_text(jury.finding[0].upper() + jury.finding[1:])}.**",
        "",
        "| member | items | wrong | agreement | kappa | TPR | TNR |",
        "|---|---:|---:|---|---|---|---|",
    ]
    for m in jury.members:
        a = m.agreement
        tpr = fmt_estimate(a.binary.tpr) if a.binary is not None else "—"
        tnr = fmt_estimate(a.binary.tnr) if a.binary is not None else "—"
        lines.append(
            f"| {md_code(m.name)} | {m.decided} | {m.wrong} | {fmt_estimate(a.percent_agreement)} | "
            f"{fmt_estimate(a.kappa['none'])} | {tpr} | {tnr} |"
        )
    lines += [
        "",
        "Pairwise correlation of the members' errors (phi of the indicators \"label differs from the "
        "experts' consensus\", on the items both labelled pass or fail):",
        "",
        "| members | items | both wrong | phi |",
        "|---|---:|---:|---|",
    ]
    for c in jury.correlations:
        phi = _num(c.phi) if c.phi is not None else f"undefined ({md_text(c.reason or '')})"
        lines.append(f"| {md_code(c.a)} · {md_code(c.b)} | {c.n} | {c.both_wrong} | {phi} |")
    if jury.effective_votes is not None and jury.mean_error_correlation is not None:
        votes = (
            f"Effective independent votes: **{jury.effective_votes:.2f}** of {n} "
            "(n / (1 + (n − 1) · max(ρ, 0)) with mean error correlation "
            f"ρ = {jury.mean_error_correlation:.3f})."
        )
    else:
        votes = f"Effective independent votes: undefined ({md_text(jury.effective_votes_reason or '')})."
    return [*lines, "", votes, ""]


def correlation_intro(scored: ScoredAgreement) -> str:
    """The sentence above the correlation table: what the consensus is and what the intervals are."""
    return (
        f"How closely the judge's scores follow the experts'. Consensus: {scored.consensus}. Each value is "
        "in [-1, 1] (1: the same order); intervals are percentile intervals of the same case bootstrap; "
        "an undefined value says why."
    )


def _correlations_md(scored: ScoredAgreement) -> list[str]:
    lines = [f"## Scored judges: correlations ({scored.level} scale)", "", correlation_intro(scored), ""]
    lines.append("| pair | n | " + " | ".join(MEASURE_NAMES.values()) + " |")
    lines.append("|---|---:|" + "---|" * len(MEASURE_NAMES))
    for label, n, ests in correlation_table(scored):
        cells = " | ".join(_md_cell(fmt_estimate(e)) for e in ests.values())
        lines.append(f"| {md_text(label)} | {n} | {cells} |")
    lines.append("")
    return lines


def _ceiling_md(c: HumanCeiling, base: str) -> list[str]:
    lines = ["## The human ceiling as a test", ""]
    lines.append(
        f"The judge's mean {c.metric} with each expert against the experts' mean {c.metric} with each "
        f"other; the difference has a paired case-bootstrap interval ({md_text(base)})."
    )
    lines.append("")
    lines.append("| measure | value [interval] |")
    lines.append("|---|---|")
    lines.append(f"| judge vs experts, mean {c.metric} | {_md_cell(fmt_estimate(c.judge))} |")
    lines.append(f"| experts vs each other, mean {c.metric} | {_md_cell(fmt_estimate(c.experts))} |")
    lines.append(f"| difference (judge − experts) | {_md_cell(fmt_estimate(c.difference))} |")
    lines.append(f"| consensus base rate (failures) | {_md_cell(fmt_estimate(c.base_rate))} |")
    lines.append("")
    return lines


def _alt_md(a: AltTestResult) -> list[str]:
    lines = ["## Alternative-annotator test", ""]
    lines.append(
        "Could the judge replace one of the experts? Each expert is left out in turn; the judge wins when "
        "it represents the others at least as well as the left-out expert, up to epsilon "
        f"(one-sided t-test, Benjamini–Yekutieli at {a.alpha:g}; scoring: {a.scoring})."
    )
    lines.append("")
    if a.annotators:
        lines.append("| expert | kind | ε | n | ρ judge | ρ expert | p | BY-adjusted p | judge wins |")
        lines.append("|---|---|---:|---:|---:|---:|---:|---:|---|")
        for c in a.annotators:
            lines.append(
                f"| {md_text(c.annotator)} | {c.kind} | {c.epsilon:g} | {c.n} | {_num(c.judge_advantage)} | "
                f"{_num(c.annotator_advantage)} | {c.p_value:.4g} | {c.p_adjusted:.4g} | "
                f"{'yes' if c.rejected else 'no'} |"
            )
        lines.append("")
    if a.winning_rate is None:
        lines.append(f"Undefined: {md_text(str(a.undefined_reason))}.")
    else:
        verdict = "PASSES" if a.passed else "FAILS"
        lines.append(
            f"Winning rate ω = {a.winning_rate:.3f}, advantage probability ρ = "
            f"{_num(a.advantage_probability)}: the judge **{verdict}** (passes when ω ≥ 0.5)."
        )
    lines += [f"- skipped {md_text(s)}" for s in a.skipped]
    lines.append("")
    return lines


def comparison_markdown(cmp: GraderComparison, *, heading: str = "#") -> str:
    """A grader comparison as Markdown, fit for a pull-request comment."""
    new = md_code(cmp.new_fingerprint or "(new grader)")
    lines = [
        f"{heading} Grader change: {md_code(cmp.old_fingerprint)} → {new}",
        "",
    ]
    m = cmp.mcnemar
    lines.append(
        f"{cmp.common_items} items compared against the current expert consensus. Correct with both: "
        f"{m.both_correct}; fixed: {m.new_only}; broken: {m.old_only}; wrong with both: {m.both_wrong}. "
        f"Exact McNemar p = {m.p_value:.4g}."
    )
    lines.append("")
    lines.append("| metric | old | new | change [interval] |")
    lines.append("|---|---:|---:|---|")
    for d in cmp.deltas:
        metric = f"{d.metric} ({comparison_base_rate(cmp)})" if d.metric == "cohen_kappa" else d.metric
        lines.append(
            f"| {md_text(metric)} | {_num(d.old)} | {_num(d.new)} | {_md_cell(fmt_estimate(d.delta))} |"
        )
    lines.append("")
    lines.append(f"{heading}# Flipped items ({len(cmp.flipped)})")
    lines.append("")
    if cmp.flipped:
        lines.append("| item | criterion | old | new | consensus | experts | change |")
        lines.append("|---|---|---|---|---|---|---|")
        for f in cmp.flipped:
            experts = ", ".join(f"{k}: {v}" for k, v in f.experts.items())
            lines.append(
                f"| {md_text(f.item_id)} | {md_text(f.criterion or '—')} | {md_text(f.old)} | "
                f"{md_text(f.new)} | {md_text(f.consensus or 'tie')} | {md_text(experts)} | {f.change} |"
            )
    else:
        lines.append("No verdict changed.")
    if cmp.notes:
        lines.append("")
        lines += [f"- {md_text(n)}" for n in cmp.notes]
    return "\n".join(lines) + "\n"


def _figures(result: CalibrationResult) -> dict[str, Any]:
    r = result.report
    policy = result.policy
    jc = r.judge_vs_consensus
    thresholds = {
        "TPR (failures caught)": policy.tpr_lower_bound,
        "TNR": policy.tnr_lower_bound,
        f"Krippendorff's alpha ({r.scale.level})": policy.alpha_lower_bound,
    }
    rows = [IntervalRow(name, e, thresholds.get(name)) for name, e in _metric_rows(jc)]
    if result.correlations is not None:
        gated = policy.correlation
        for m, name in MEASURE_NAMES.items():
            e = result.correlations.judge_vs_consensus.measure(m)
            if e.defined:
                rows.append(IntervalRow(name, e, gated.lower_bound if gated.measure == m else None))
    rows += [IntervalRow(f"experts: alpha ({lv})", e) for lv, e in r.expert_group.alpha.items()]
    rows.append(IntervalRow("experts: Fleiss' kappa", r.expert_group.fleiss_kappa))
    figs: dict[str, Any] = {
        "intervals": Markup(intervals_svg(rows, title="Judge vs consensus, and the experts' ceiling")),
        "confusion": Markup(confusion_svg(jc.confusion, title="Judge vs consensus")),
        "expert_confusions": [
            Markup(confusion_svg(p.confusion, title=f"Judge vs {p.a}")) for p in r.judge_vs_experts
        ],
    }
    if result.comparison is not None:
        figs["comparison"] = _comparison_figures(result.comparison)
    return figs


def _comparison_figures(cmp: GraderComparison) -> dict[str, Any]:
    return {
        "deltas": Markup(
            intervals_svg(
                [IntervalRow(d.metric, d.delta) for d in cmp.deltas],
                title="Change (new − old) with paired bootstrap intervals",
                zero_line=True,
            )
        ),
        "old": Markup(confusion_svg(cmp.old_confusion, title="Old grader vs consensus")),
        "new": Markup(confusion_svg(cmp.new_confusion, title="New grader vs consensus")),
    }


def result_html(result: CalibrationResult) -> str:
    """The result as one self-contained HTML page with inline SVG figures."""
    template = _env().get_template("calibration_report.html.j2")
    return template.render(
        result=result,
        r=result.report,
        figures=_figures(result),
        metric_rows=_metric_rows,
        base=base_rate_text(result),
        criteria=criteria_text(result),
        correlation_intro=correlation_intro(result.correlations) if result.correlations else "",
        correlation_rows=correlation_table(result.correlations) if result.correlations else [],
        measure_names=MEASURE_NAMES,
        css=_css(),
    )


def comparison_html(cmp: GraderComparison) -> str:
    """A grader comparison as one self-contained HTML page."""
    template = _env().get_template("calibration_comparison.html.j2")
    return template.render(cmp=cmp, figures=_comparison_figures(cmp), css=_css(), standalone=True)


def _css() -> Markup:
    return Markup((TEMPLATES / "calibration_style.css.j2").read_text(encoding="utf-8"))


def render_calibration(result: CalibrationResult, fmt: str) -> str:
    """Render a result as ``json``, ``md`` or ``html``.

    Raises:
        ValueError: For any other format.
    """
    return _renderer(_RESULT_RENDERERS, fmt)(result)


def render_comparison(cmp: GraderComparison, fmt: str) -> str:
    """Render a grader comparison as ``json``, ``md`` or ``html``.

    Raises:
        ValueError: For any other format.
    """
    return _renderer(_COMPARISON_RENDERERS, fmt)(cmp)


_T = TypeVar("_T")

_RESULT_RENDERERS: dict[str, Callable[[CalibrationResult], str]] = {
    "json": result_json,
    "md": result_markdown,
    "html": result_html,
}
_COMPARISON_RENDERERS: dict[str, Callable[[GraderComparison], str]] = {
    "json": comparison_json,
    "md": comparison_markdown,
    "html": comparison_html,
}


def _renderer(renderers: dict[str, Callable[[_T], str]], fmt: str) -> Callable[[_T], str]:
    """The renderer of format ``fmt`` (``json``, ``md`` or ``html``).

    Raises:
        ValueError: For any other format.
    """
    renderer = renderers.get(fmt)
    if renderer is None:
        raise ValueError(f"unknown format {fmt!r}; use json, md or html")
    return renderer
