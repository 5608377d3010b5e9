"""A jury of judges on one criterion: the jury file, its members and the declared aggregation.

A jury is several judges (its *members*, each a model) asked the same criterion with the same rubric, and
one *aggregation* turning their verdicts into the jury's verdict. The jury is graded, calibrated and
trusted like one judge: its fingerprint names every member's fingerprint and the aggregation (with its
weights), so a calibration record trusts exactly this panel (:mod:`judgekit.graders.rubric` computes it).

Each member's verdict is its own samples reduced as for a single judge (majority over samples); then the
jury counts, with ``p`` members saying pass, ``f`` fail, ``u`` insufficient information and ``e`` error out
of ``n``:

* ``majority``: pass when ``p > n / 2``, fail when ``f > n / 2`` (an absolute majority of the whole jury,
  so an abstaining or failing member never counts for either side). Otherwise ``error`` when the members
  in error could have made a majority (``p + e > n / 2`` or ``f + e > n / 2``), else
  ``insufficient_information``: a tie (two against two) or too many abstentions go to a human.
* ``any_fail`` (for gating criteria): fail when any member fails (``f >= 1``), whatever the others say;
  pass only when every member passes (``p == n``); otherwise ``error`` when a member is in error, else
  ``insufficient_information``.
* ``weighted``: each member votes +w (pass) or -w (fail) with its fitted weight ``w >= 0``; members that
  abstain vote 0. With ``s`` the sum and ``m`` the total weight of the members in error: pass when
  ``s > m``, fail when ``s < -m`` (the missing votes could not change the sign); otherwise ``error`` when
  ``m > 0``, else (``s == 0``) ``insufficient_information``. Weights are fitted on development labels only
  (:func:`judgekit.calibration.jury.fit_jury_weights`) and recorded in the file with what they were fitted on.

The jury file (YAML or JSON; the ``jury`` setting of the judge configuration or ``judgekit grade --jury``)::

    aggregation: majority          # majority, any_fail or weighted
    members:
      - {name: small, model: openai/gpt-4o-mini}
      - {name: claude, model: anthropic/claude-3-5-haiku-latest}
      - {name: llama, model: together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo}

Every member shares the rest of the judge configuration (rubric, temperature, samples, api base, cassette).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Final, Literal

from pydantic import Field, field_validator, model_validator

from judgekit.errors import JudgekitError
from judgekit.verdict import FrozenModel, Verdict

__all__ = [
    "AGGREGATIONS",
    "JURY_SCHEMA",
    "Jury",
    "JuryFit",
    "JuryMember",
    "aggregate",
    "load_jury",
]

JURY_SCHEMA: Final = "judgekit.jury/1"

AGGREGATIONS: Final = ("majority", "any_fail", "weighted")
"""The aggregations a jury may declare (see the module documentation for each rule)."""


class JuryMember(FrozenModel):
    """One judge of the jury.

    Attributes:
        name: The member's name: its rater name in label tables and in reports (unique in the jury).
        model: The litellm model that judges (``openai/gpt-4o-mini``).
        weight: The member's vote weight, >= 0, for the ``weighted`` aggregation only (fitted on
            development labels); ``None`` for the other aggregations.
    """

    name: str = Field(min_length=1, max_length=200)
    model: str = Field(min_length=1, max_length=200)
    weight: float | None = Field(default=None, ge=0.0, allow_inf_nan=False)


class JuryFit(FrozenModel):
    """What a weighted jury's weights were fitted on: recorded so the fit can be checked and not reused.

    Attributes:
        method: ``log_odds_accuracy``: ``w = max(0, log(a / (1 - a)))`` with ``a`` the member's smoothed
            accuracy ``(agreed + 0.5) / (decided + 1)`` against the experts' consensus (the optimal weights
            for independent voters, Nitzan and Paroush 1982).
        labels: The label table's name.
        labels_sha256: The label table's SHA-256.
        experts: The expert raters whose consensus the members were scored against.
        development_items: The items (``item_id`` or ``item_id/criterion``) the weights were fitted on;
            they must not certify the jury (calibration leaves them out).
        accuracy: Each member's raw accuracy on the development items it decided, in [0, 1] (``None``:
            it decided none of them).
        decided: How many development items each member gave pass or fail on.
    """

    method: Literal["log_odds_accuracy"] = "log_odds_accuracy"
    labels: str
    labels_sha256: str
    experts: tuple[str, ...] = Field(min_length=1)
    development_items: tuple[str, ...] = Field(min_length=1)
    accuracy: dict[str, float | None]
    decided: dict[str, int]


class Jury(FrozenModel):
    """A jury: at least two members and the declared aggregation.

    Attributes:
        schema_version: Always :data:`JURY_SCHEMA` (may be left out of a hand-written file).
        aggregation: ``majority``, ``any_fail`` or ``weighted`` (see the module documentation).
        members: The members, in order (at least two, unique names).
        fit: For ``weighted``: how the weights were fitted (required then; ``None`` otherwise).
    """

    schema_version: Literal["judgekit.jury/1"] = JURY_SCHEMA
    aggregation: str
    members: tuple[JuryMember, ...]
    fit: JuryFit | None = None

    @field_validator("aggregation")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in AGGREGATIONS:
            raise ValueError(f"unknown aggregation {value!r}: use one of {', '.join(AGGREGATIONS)}")
        return value

    @field_validator("members")
    @classmethod
    def _several(cls, value: tuple[JuryMember, ...]) -> tuple[JuryMember, ...]:
        if len(value) < 2:
            raise ValueError(
                f"a jury needs at least two members (got {len(value)}); for one judge, leave the jury out "
                "and set judge.model"
            )
        names = [m.name for m in value]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"member name(s) {', '.join(twice)} given twice; give each member its own name")
        return value

    @model_validator(mode="after")
    def _weights(self) -> Jury:
        weighted = [m.name for m in self.members if m.weight is not None]
        if self.aggregation == "weighted":
            if self.fit is None or len(weighted) != len(self.members):
                raise ValueError(
                    "aggregation weighted needs each member's weight fitted on development labels, and the "
                    "fit recorded: write the file with judgekit judge fit-jury (or "
                    "judgekit.calibration.jury.fit_jury_weights)"
                )
            if sum(m.weight or 0.0 for m in self.members) <= 0.0:
                raise ValueError(
                    "every weight is 0: no member agreed with the experts better than chance on the "
                    "development labels; this jury cannot vote"
                )
        elif weighted or self.fit is not None:
            raise ValueError(
                f"weights and fit are for aggregation weighted; aggregation {self.aggregation} takes none "
                f"(remove them from {', '.join(weighted) or 'the file'})"
            )
        return self

    @property
    def names(self) -> tuple[str, ...]:
        """The members' names, in order."""
        return tuple(m.name for m in self.members)


def aggregate(jury: Jury, verdicts: Sequence[Verdict]) -> Verdict:
    """The jury's verdict from its members' verdicts (one per member, in the jury's order).

    Args:
        jury: The jury (its aggregation and, for ``weighted``, its weights).
        verdicts: Each member's verdict; ``not_evaluated`` counts as ``insufficient_information``.

    Returns:
        ``pass``, ``fail``, ``insufficient_information`` or ``error``, by the module documentation's rule.

    Raises:
        ValueError: When there is not one verdict per member.

    Examples:
        >>> jury = Jury(aggregation="majority", members=[JuryMember(name=n, model=n) for n in "abcd"])
        >>> P, F = Verdict.PASS, Verdict.FAIL
        >>> aggregate(jury, [P, P, P, F]).value, aggregate(jury, [P, P, F, F]).value
        ('pass', 'insufficient_information')
        >>> aggregate(jury.model_copy(update={"aggregation": "any_fail"}), [P, P, P, F]).value
        'fail'
    """
    if len(verdicts) != len(jury.members):
        raise ValueError(f"{len(verdicts)} verdicts for a jury of {len(jury.members)}")
    decided = {Verdict.PASS: 1.0, Verdict.FAIL: -1.0}
    if jury.aggregation == "weighted":
        weights = [m.weight or 0.0 for m in jury.members]
    else:
        weights = [1.0] * len(jury.members)
    score = sum(w * decided.get(v, 0.0) for w, v in zip(weights, verdicts, strict=True))
    missing = sum(w for w, v in zip(weights, verdicts, strict=True) if v is Verdict.ERROR)
    if jury.aggregation == "any_fail":
        if Verdict.FAIL in verdicts:
            return Verdict.FAIL
        if all(v is Verdict.PASS for v in verdicts):
            return Verdict.PASS
        return Verdict.ERROR if missing else Verdict.INSUFFICIENT_INFORMATION
    if jury.aggregation == "majority":
        half = len(verdicts) / 2
        passes = sum(v is Verdict.PASS for v in verdicts)
        fails = sum(v is Verdict.FAIL for v in verdicts)
        if passes > half:
            return Verdict.PASS
        if fails > half:
            return Verdict.FAIL
        if missing and (passes + missing > half or fails + missing > half):
            return Verdict.ERROR
        return Verdict.INSUFFICIENT_INFORMATION
    if score > missing and not math.isclose(score, missing):
        return Verdict.PASS
    if score < -missing and not math.isclose(score, -missing):
        return Verdict.FAIL
    return Verdict.ERROR if missing else Verdict.INSUFFICIENT_INFORMATION


def load_jury(path: str | os.PathLike[str]) -> Jury:
    """Read a jury file (YAML or JSON).

    Args:
        path: The file, as text or a path object.

    Raises:
        JudgekitError: When the file cannot be read or parsed (located).
        ProblemsError: When a field is missing, unknown or invalid (an unknown aggregation, one member, a
            weighted jury without fitted weights...), one located problem each.
    """
    from pydantic import ValidationError

    from judgekit.cases import problems_from_validation
    from judgekit.errors import ProblemsError
    from judgekit.io.documents import read_document

    doc = read_document(Path(path))
    if not isinstance(doc.data, dict):
        raise JudgekitError(
            f"{path}: a jury file must be a mapping with aggregation and members", exit_code=2
        )
    try:
        return Jury.model_validate(doc.data)
    except ValidationError as exc:
        raise ProblemsError(problems_from_validation(exc, doc, Jury)) from None
