"""A jury against experts: each member's agreement, their correlated errors, effective votes, fitted weights.

A jury (:mod:`judgekit.judges.jury`) is calibrated like one judge: its verdicts are one rater of the label
table, measured against the experts' consensus and trusted by a record keyed by the jury's fingerprint.
This module adds what only a jury has, from its members' own rows in the same table:

* **each member's agreement** with the experts' consensus (percent agreement, Cohen's kappa, TPR and TNR
  with intervals), measured exactly as a judge is (:func:`judgekit.calibration.agreement.compute_agreement`);
* **the pairwise correlation of members' errors**: for two members, the phi coefficient (Pearson's r of
  two 0/1 variables) of their error indicators ``1[member's label != consensus]`` over the items both
  labelled pass or fail and the experts agreed on. ``None`` with the reason when one member's indicator
  is constant (it was never or always wrong there) or fewer than two items are shared;
* **the effective number of independent votes**: with ``n`` members and ``rho`` the mean of the defined
  pairwise error correlations, ``n_eff = n / (1 + (n - 1) * max(rho, 0))``: the number of independent
  votes whose mean has the same variance as the mean of ``n`` votes with that equal error correlation
  (Kish's design effect for equicorrelated units, Kish 1965, *Survey Sampling*; the panel reading is
  that of "Nine Judges, Two Effective Votes", arXiv 2605.29800). It is ``n`` for independent errors
  (``rho = 0``) and 1 for identical errors (``rho = 1``); negative correlations are counted as
  independence (``n_eff`` is never above ``n``). ``None`` when no pair's correlation is defined;
* **whether the jury pays**: the jury pays only when the lower end of its kappa's interval is above the
  best member's kappa (the member with the highest kappa point value). Otherwise the report says plainly
  that the jury was not shown better than its best member, so that member alone would do at a fraction of
  the cost;
* **weights for the weighted aggregation** (:func:`fit_jury_weights`), fitted on development items only
  (:func:`development_items`), with what they were fitted on recorded in the jury.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from judgekit.calibration.agreement import AgreementReport, PairAgreement, compute_agreement
from judgekit.calibration.labels import ItemKey, LabelTable
from judgekit.calibration.refine import split_by_case
from judgekit.errors import JudgekitError
from judgekit.judges.jury import Jury, JuryFit, JuryMember
from judgekit.verdict import FrozenModel

__all__ = [
    "PAYS_RULE",
    "ErrorCorrelation",
    "JuryAgreement",
    "MemberAgreement",
    "development_items",
    "effective_votes",
    "fit_jury_weights",
    "jury_agreement",
]

PAYS_RULE: Final = (
    "the jury pays when the lower end of its kappa's interval is above the best member's kappa; otherwise "
    "it is not shown better than that member alone"
)


class MemberAgreement(FrozenModel):
    """One member of a jury against the experts' consensus.

    Attributes:
        name: The member's rater name.
        agreement: Percent agreement, kappa, alpha, confusion and TPR/TNR against the consensus, with
            intervals (as a judge's ``judge_vs_consensus``).
        decided: Items with a consensus the member labelled pass or fail.
        wrong: Those of them where the member's label differs from the consensus.
    """

    name: str
    agreement: PairAgreement
    decided: int
    wrong: int


class ErrorCorrelation(FrozenModel):
    """The correlation of two members' errors against the consensus.

    Attributes:
        a: One member.
        b: The other member.
        n: Items with a consensus both labelled pass or fail.
        both_wrong: Items both got wrong.
        phi: Phi coefficient of the two error indicators, in [-1, 1] (1: they err on the same items);
            ``None`` when undefined (``reason`` says why).
        reason: Why ``phi`` is undefined; ``None`` when it is defined.
    """

    a: str
    b: str
    n: int
    both_wrong: int
    phi: float | None
    reason: str | None = None


class JuryAgreement(FrozenModel):
    """What a jury's calibration adds to a judge's: its members, their correlated errors, whether it pays.

    Attributes:
        jury: The jury's rater name in the label table.
        members: Each member against the consensus, in the order given.
        correlations: Each pair of members' error correlation.
        mean_error_correlation: ``rho``, the mean of the defined pairwise phi values; ``None`` when none is
            defined.
        effective_votes: ``n / (1 + (n - 1) * max(rho, 0))``, in [1, n]; ``None`` when ``rho`` is.
        effective_votes_reason: Why ``effective_votes`` is undefined; ``None`` when it is defined.
        best_member: The member with the highest kappa (``none`` weighting) point value, the first in the
            jury's order among equals; ``None`` when no member's kappa is defined.
        pays: Whether the jury's kappa interval lies above the best member's kappa (:data:`PAYS_RULE`).
        finding: One plain sentence saying whether the jury pays and why.
    """

    jury: str
    members: tuple[MemberAgreement, ...]
    correlations: tuple[ErrorCorrelation, ...]
    mean_error_correlation: float | None
    effective_votes: float | None
    effective_votes_reason: str | None = None
    best_member: str | None
    pays: bool
    finding: str


def effective_votes(n: int, rho: float) -> float:
    """The effective number of independent votes of ``n`` voters with mean pairwise error correlation ``rho``.

    Args:
        n: Members, at least 1.
        rho: Mean pairwise correlation of their errors, in [-1, 1]; values below 0 count as 0.

    Returns:
        ``n / (1 + (n - 1) * max(rho, 0))``, in [1, n].

    Examples:
        >>> effective_votes(3, 0.0), effective_votes(3, 1.0), round(effective_votes(9, 0.4), 2)
        (3.0, 1.0, 2.14)
    """
    return n / (1.0 + (n - 1) * max(rho, 0.0))


def _errors(report: AgreementReport, substantive: Sequence[str]) -> dict[ItemKey, bool]:
    """Each item with a consensus the rated rater labelled substantively: whether it got it wrong."""
    return {
        item.key: item.judge != item.consensus
        for item in report.items
        if item.consensus is not None and item.judge in substantive
    }


def _phi(a: str, b: str, errors_a: dict[ItemKey, bool], errors_b: dict[ItemKey, bool]) -> ErrorCorrelation:
    shared = sorted(set(errors_a) & set(errors_b))
    x = [float(errors_a[k]) for k in shared]
    y = [float(errors_b[k]) for k in shared]
    both = sum(1 for k in shared if errors_a[k] and errors_b[k])
    if len(shared) < 2:
        return ErrorCorrelation(
            a=a, b=b, n=len(shared), both_wrong=both, phi=None, reason="fewer than two shared items"
        )
    constant = [name for name, v in ((a, x), (b, y)) if min(v) == max(v)]
    if constant:
        how = "never" if not any(x if constant[0] == a else y) else "always"
        return ErrorCorrelation(
            a=a,
            b=b,
            n=len(shared),
            both_wrong=both,
            phi=None,
            reason=f"{constant[0]} was {how} wrong on the shared items (its errors do not vary)",
        )
    mx, my = sum(x) / len(x), sum(y) / len(y)
    cov = sum((u - mx) * (v - my) for u, v in zip(x, y, strict=True))
    var = math.sqrt(sum((u - mx) ** 2 for u in x) * sum((v - my) ** 2 for v in y))
    return ErrorCorrelation(a=a, b=b, n=len(shared), both_wrong=both, phi=cov / var)


def _check_members(
    table: LabelTable, jury: str | None, members: Sequence[str], experts: Sequence[str]
) -> None:
    if len(members) < 2:
        raise JudgekitError(
            f"jury: a jury needs at least two members (got {len(members)}: {', '.join(members) or 'none'})",
            exit_code=2,
        )
    missing = [m for m in members if m not in table.raters]
    if missing:
        raise JudgekitError(
            f"jury: member(s) {', '.join(missing)} rated nothing in the label table; add their rows "
            f"(rater = the member's name); raters in it: "
            f"{', '.join(table.raters)}",
            exit_code=2,
        )
    clash = [m for m in members if m in experts or m == jury]
    if clash:
        raise JudgekitError(
            f"jury: member(s) {', '.join(clash)} also named as the jury or an expert; a member is neither",
            exit_code=2,
        )


def jury_agreement(
    table: LabelTable,
    report: AgreementReport,
    *,
    members: Sequence[str],
    resamples: int,
    seed: int,
) -> JuryAgreement:
    """A jury's own calibration: members' agreement, error correlations, effective votes, whether it pays.

    Args:
        table: The label table holding the jury's rows (rater ``report.judge``), each member's rows and the
            experts'.
        report: The jury's agreement report against the experts (its ``judge`` is the jury rater).
        members: The members' rater names (at least two; neither the jury nor an expert).
        resamples: Bootstrap resamples for each member's intervals (as the jury's).
        seed: Bootstrap seed.

    Raises:
        JudgekitError: (exit code 2) Fewer than two members, a member with no rows, a member that is also
            the jury or an expert.
    """
    _check_members(table, report.judge, members, report.experts)
    substantive = report.scale.values
    own: list[MemberAgreement] = []
    errors: dict[str, dict[ItemKey, bool]] = {}
    for name in members:
        member_report = compute_agreement(
            table,
            judge=name,
            experts=report.experts,
            confidence=report.confidence,
            resamples=resamples,
            seed=seed,
        )
        errors[name] = _errors(member_report, substantive)
        own.append(
            MemberAgreement(
                name=name,
                agreement=member_report.judge_vs_consensus,
                decided=len(errors[name]),
                wrong=sum(errors[name].values()),
            )
        )
    pairs = tuple(_phi(a, b, errors[a], errors[b]) for i, a in enumerate(members) for b in members[i + 1 :])
    defined = [p.phi for p in pairs if p.phi is not None]
    rho = sum(defined) / len(defined) if defined else None
    n_eff = effective_votes(len(members), rho) if rho is not None else None
    kappas = {m.name: k for m in own if (k := m.agreement.kappa["none"].value) is not None}
    best = max(kappas, key=lambda name: kappas[name]) if kappas else None  # the first of equals
    jury_kappa = report.judge_vs_consensus.kappa["none"]
    low = jury_kappa.interval.low if jury_kappa.interval is not None else None
    pays = best is not None and low is not None and low > kappas[best]
    if best is None or jury_kappa.value is None:
        finding = "whether the jury pays is undefined: its kappa or every member's kappa is undefined"
    elif pays:
        finding = (
            f"the jury pays: its kappa {jury_kappa.value:.3f} (interval from {low:.3f}) is above its best "
            f"member {best}'s {kappas[best]:.3f}"
        )
    else:
        finding = (
            f"the jury is no better than its best member {best}: its kappa {jury_kappa.value:.3f}"
            + (f" (interval from {low:.3f})" if low is not None else " (no interval)")
            + f" is not above {best}'s {kappas[best]:.3f}; {best} alone would do at a fraction of the cost"
        )
    return JuryAgreement(
        jury=report.judge,
        members=tuple(own),
        correlations=pairs,
        mean_error_correlation=rho,
        effective_votes=n_eff,
        effective_votes_reason=None
        if n_eff is not None
        else "no pair of members has a defined error correlation",
        best_member=best,
        pays=pays,
        finding=finding,
    )


def development_items(table: LabelTable, *, share: float, seed: int = 0) -> tuple[ItemKey, ...]:
    """The development part of a label table: the items of a share of its cases, chosen by a seeded hash.

    The split is the refinement's (:func:`judgekit.calibration.refine.split_by_case`): a case's items
    all go to one part (items of a case are not independent), the cases are ordered by a hash of the seed
    and their id so the split does not depend on row order, and ``round(share x cases)`` of them (at least
    one, at most all but one) are the development part.

    Args:
        table: The label table.
        share: The share of cases in the development part, strictly between 0 and 1.
        seed: Changes which cases are drawn.

    Raises:
        JudgekitError: (exit code 2) When ``share`` is not strictly between 0 and 1, or the table has
            fewer than two cases.
    """
    if not 0.0 < share < 1.0:
        raise JudgekitError(
            f"--development-share must be strictly between 0 and 1 (got {share})", exit_code=2
        )
    dev_cases = set(split_by_case(table, seed=seed, dev_share=share).dev_cases)
    return tuple(sorted(item for item, case in table.case_of().items() if case in dev_cases))


def fit_jury_weights(
    table: LabelTable,
    jury: Jury,
    *,
    experts: Sequence[str],
    development: Sequence[ItemKey],
    labels_name: str,
) -> Jury:
    """Fit a weighted jury's weights on development items: ``w = max(0, log(a / (1 - a)))``.

    ``a`` is the member's smoothed accuracy ``(agreed + 0.5) / (decided + 1)`` against the experts'
    majority label on the development items it labelled pass or fail (a tie among experts leaves an item
    out); the smoothing keeps a perfect member's weight finite. These are the optimal weights of a
    weighted majority of independent voters (Nitzan and Paroush 1982); a member no better than chance gets
    weight 0.

    Args:
        table: The label table: rows of each member (rater = the member's name) and of the experts.
        jury: The jury to fit (its members; the weights and fit it has are replaced).
        experts: The expert raters.
        development: The development items (:func:`development_items`); the jury must later be calibrated
            on the other items only.
        labels_name: The label table's name, recorded.

    Returns:
        The jury with aggregation ``weighted``, each member's weight and the fit recorded.

    Raises:
        JudgekitError: (exit code 2) No expert, a member with no rows, or no development item with an
            expert consensus that the members labelled (weighted needs development labels).
    """
    names = [m.name for m in jury.members]
    if not experts:
        raise JudgekitError("--experts: no expert named", exit_code=2)
    _check_members(table, None, names, experts)
    dev = set(development)
    consensus: dict[ItemKey, str] = {}
    for item in sorted(dev):
        votes = [table.label(item, e) for e in experts]
        counts = {v: votes.count(v) for v in set(votes) if v in table.scale.values}
        if counts:
            top = max(counts.values())
            winners = [v for v, c in counts.items() if c == top]
            if len(winners) == 1:
                consensus[item] = winners[0]
    accuracy: dict[str, float | None] = {}
    decided: dict[str, int] = {}
    members: list[JuryMember] = []
    for name in names:
        labels = {k: table.label(k, name) for k in consensus}
        judged = {k: v for k, v in labels.items() if v in table.scale.values}
        agreed = sum(1 for k, v in judged.items() if v == consensus[k])
        decided[name] = len(judged)
        accuracy[name] = agreed / len(judged) if judged else None
        smoothed = (agreed + 0.5) / (len(judged) + 1)
        members.append(
            next(m for m in jury.members if m.name == name).model_copy(
                update={"weight": max(0.0, math.log(smoothed / (1.0 - smoothed)))}
            )
        )
    if not any(decided.values()):
        raise JudgekitError(
            "aggregation weighted needs development labels: no development item has both an expert "
            "consensus and a member's pass or fail; label more items, or raise --development-share",
            exit_code=2,
        )
    if not any(m.weight for m in members):
        raise JudgekitError(
            "aggregation weighted: no member agreed with the experts better than chance on the development "
            f"labels (accuracy: {accuracy}), so every weight is 0 and the jury cannot vote",
            exit_code=2,
        )
    fit = JuryFit(
        labels=labels_name,
        labels_sha256=table.sha256,
        experts=tuple(experts),
        development_items=tuple(str(k) for k in sorted(dev)),
        accuracy=accuracy,
        decided=decided,
    )
    return Jury.model_validate(
        {"aggregation": "weighted", "members": [m.model_dump() for m in members], "fit": fit.model_dump()}
    )
