"""A cascade of judges (cheap to strong) with a human queue at the end: the fitted file and its routing.

Trust or Escalate (Jung, Brahman and Choi, ICLR 2025): a criterion is judged by the first stage; when that
stage's confidence is below its threshold the criterion goes to the next stage, and so on; below the last
threshold it goes to a human reviewer. Each stage's threshold is fitted on calibration labels
(:func:`judgekit.calibration.selective.fit_cascade`) so that the judge's agreement with experts on the items
it keeps is at least the target with probability at least ``1 - delta / k`` for ``k`` stages; by the union
bound the whole cascade keeps the promise with probability at least ``1 - delta``.

This module holds only the data (the cascade file ``judgekit judge fit-cascade`` writes and ``judgekit grade
--cascade`` reads) and the routing rule, so that the graders can route without importing the calibration
code. Higher confidence means more confident, on any real scale (a share of samples, a stated confidence,
a log-probability); the confidence must be computed at grade time the way it was at calibration.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final, Literal

from pydantic import Field

from judgekit.verdict import FrozenModel

__all__ = [
    "CASCADE_SCHEMA",
    "HUMAN",
    "Cascade",
    "CascadeStage",
    "Route",
    "RouteStep",
    "load_cascade",
    "route",
]

CASCADE_SCHEMA: Final = "judgekit.cascade/1"

HUMAN: Final = "human"
"""The route's last stop: no judge kept the item, so a human reviewer decides it."""


class CascadeStage(FrozenModel):
    """One judge of the cascade and the threshold fitted for it.

    Attributes:
        name: The judge's rater name in the label table the cascade was fitted on.
        model: The litellm model that judges at grade time (``None``: not given when fitting; such a
            cascade can route confidences but ``judgekit grade`` cannot call it).
        threshold: The judge decides an item when its confidence is at or above this; ``None`` when no
            threshold could be shown to reach the target (the stage decides nothing and passes every item
            on).
        delta: This stage's share of the cascade's ``delta`` (``delta / k``).
        reached: Calibration items that reached this stage (not kept by an earlier one).
        kept: Calibration items this stage kept.
        agreed: Kept calibration items where the judge equals the expert consensus.
        agreement_lower_bound: Exact one-sided ``1 - delta`` lower bound of the agreement on kept items
            (``None`` when the stage keeps nothing).
        coverage: Share of all calibration items this stage decided, in [0, 1].
    """

    name: str = Field(min_length=1)
    model: str | None = None
    threshold: float | None
    delta: float = Field(gt=0.0, lt=1.0)
    reached: int = Field(ge=0)
    kept: int = Field(ge=0)
    agreed: int = Field(ge=0)
    agreement_lower_bound: float | None
    coverage: float = Field(ge=0.0, le=1.0)

    def keeps(self, confidence: float | None) -> bool:
        """Whether this stage decides an item with this confidence (``None``: no usable verdict: never)."""
        return self.threshold is not None and confidence is not None and confidence >= self.threshold


class Cascade(FrozenModel):
    """A fitted cascade: the stages in order (cheap to strong), then the human queue.

    Attributes:
        schema_version: Always :data:`CASCADE_SCHEMA`.
        target: The agreement with experts promised on the items the judges decide, in (0, 1).
        delta: Probability that the promise fails for the cascade as a whole, in (0, 1).
        confidence: How a stage's confidence is computed; ``sample_agreement`` (the share of the judge's
            samples that gave the majority verdict) is what ``judgekit grade`` computes.
        calibration_items: Calibration items the cascade was fitted on.
        human_share: Share of the calibration items no stage kept (they went to the human queue).
        stages: The stages, cheap to strong (at least one).
    """

    schema_version: Literal["judgekit.cascade/1"] = CASCADE_SCHEMA
    target: float = Field(gt=0.0, lt=1.0)
    delta: float = Field(gt=0.0, lt=1.0)
    confidence: Literal["sample_agreement"] = "sample_agreement"
    calibration_items: int = Field(ge=0)
    human_share: float = Field(ge=0.0, le=1.0)
    stages: tuple[CascadeStage, ...] = Field(min_length=1)


class RouteStep(FrozenModel):
    """One stage an item was shown to.

    Attributes:
        stage: The stage's name.
        confidence: Its confidence on the item (``None``: it gave no usable verdict).
        threshold: Its threshold (``None``: it decides nothing).
        kept: Whether it decided the item.
    """

    stage: str
    confidence: float | None
    threshold: float | None
    kept: bool


class Route(FrozenModel):
    """Where one item went: the stages tried in order and who decided.

    Attributes:
        tried: Every stage the item was shown to, in order, up to the deciding one.
        decided_by: The deciding stage's name, or :data:`HUMAN`.
    """

    tried: tuple[RouteStep, ...]
    decided_by: str


def route(cascade: Cascade, confidences: Mapping[str, float | None]) -> Route:
    """Route one item: the first stage whose confidence is at or above its threshold decides it.

    Args:
        cascade: The fitted cascade.
        confidences: Each stage's confidence on the item, by stage name. Only the stages up to the deciding
            one are needed; a stage missing from the mapping (or ``None``) does not keep the item.

    Returns:
        The route; ``decided_by`` is :data:`HUMAN` when no stage kept the item.
    """
    tried: list[RouteStep] = []
    for stage in cascade.stages:
        conf = confidences.get(stage.name)
        kept = stage.keeps(conf)
        tried.append(RouteStep(stage=stage.name, confidence=conf, threshold=stage.threshold, kept=kept))
        if kept:
            return Route(tried=tuple(tried), decided_by=stage.name)
    return Route(tried=tuple(tried), decided_by=HUMAN)


def load_cascade(path: str | os.PathLike[str]) -> Cascade:
    """Read a cascade file written by ``judgekit judge fit-cascade``.

    Args:
        path: The file, as text or a path object.

    Raises:
        JudgekitError: When the file cannot be read, is not JSON, or a field is missing, unknown or invalid
            (one located problem each).
    """
    from judgekit.io.documents import load_json_model, read_input

    path = Path(path)
    return load_json_model(
        Cascade,
        read_input(path, "cascade file"),
        source=path,
        what="cascade file",
        redo="write it again with judgekit judge fit-cascade",
    )
