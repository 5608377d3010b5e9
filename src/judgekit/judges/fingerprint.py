"""Fingerprints of judge-backed graders: a changed grader is an uncalibrated grader.

A fingerprint is the SHA-256 (hex, 64 characters) of the canonical JSON of the grader's *spec*: the
grader kind, the model and every parameter that can change a verdict, the rubric's id, version and
content hash, the prompt template hash, the verdict-parser version and judgekit's version. Transport
settings (API base, concurrency, timeouts, retries, budget) are not part of it: they do not change what
the judge is asked or how its answer is read.

Calibration records are keyed by :attr:`Fingerprint.hex`; reports print :attr:`Fingerprint.label`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import JsonValue

from judgekit.judges.client import JudgeParams
from judgekit.judges.rubric import Rubric
from judgekit.verdict import FrozenModel
from judgekit.version import __version__

__all__ = ["PARSER_VERSION", "Fingerprint", "composite_fingerprint", "judge_fingerprint"]

PARSER_VERSION = "3"
"""Version of the verdict parser's rules (:mod:`judgekit.judges.parse`); bump when they change."""


class Fingerprint(FrozenModel):
    """A judge-backed grader's identity.

    Attributes:
        spec: The canonical components (JSON-ready), recorded in reports and calibration records.
        hex: SHA-256 (hex) of ``spec``'s canonical JSON; equal specs give equal hex strings.
    """

    spec: dict[str, JsonValue]
    hex: str

    @property
    def label(self) -> str:
        """A short human label: ``kind:model:rubric@version:hex12``."""
        s = self.spec
        return (
            f"{s.get('kind')}:{s.get('model')}:{s.get('rubric_id')}@{s.get('rubric_version')}:{self.hex[:12]}"
        )

    def __str__(self) -> str:
        return self.hex


def judge_fingerprint(
    *,
    kind: str,
    params: JudgeParams,
    rubric: Rubric,
    template_hash: str,
    extra: dict[str, Any] | None = None,
    judgekit_version: str = __version__,
) -> Fingerprint:
    """Compute the fingerprint of a judge-backed grader.

    Args:
        kind: The grader kind (``rubric``, ``pairwise``).
        params: Model and sampling parameters.
        rubric: The rubric applied (its id, version and content hash enter the spec).
        template_hash: Hash of the fixed prompt parts (see :class:`judgekit.judges.prompt.PromptRenderer`).
        extra: Further verdict-changing options of the grader (JSON-ready), such as whether a case's own
            criteria are added.
        judgekit_version: judgekit's version (a new release may judge differently).

    Returns:
        The fingerprint.
    """
    spec: dict[str, Any] = {
        "kind": kind,
        "model": params.model,
        "params": params.model_dump(mode="json", exclude={"model"}),
        "rubric_id": rubric.id,
        "rubric_version": rubric.version,
        "rubric_hash": rubric.content_hash,
        "template_hash": template_hash,
        "parser_version": PARSER_VERSION,
        "judgekit_version": judgekit_version,
        "extra": dict(sorted((extra or {}).items())),
    }
    return _fingerprint_of(spec)


def _fingerprint_of(spec: dict[str, Any]) -> Fingerprint:
    canonical = json.dumps(spec, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return Fingerprint(spec=json.loads(canonical), hex=hashlib.sha256(canonical.encode("utf-8")).hexdigest())


def composite_fingerprint(
    *,
    kind: str,
    parts: list[dict[str, Any]],
    rubric: Rubric,
    rule: dict[str, Any],
) -> Fingerprint:
    """The fingerprint of several judges deciding together: a cascade or a jury.

    The spec names each part's own fingerprint (which already holds its model, parameters, rubric,
    template, parser and judgekit versions) and the rule that combines them, so changing any judge, a
    threshold, the aggregation or a weight changes the fingerprint, and a calibration record of one judge
    never trusts a panel it is part of (nor the reverse).

    Args:
        kind: ``cascade`` or ``jury``.
        parts: One JSON-ready mapping per judge, in order, each with its ``fingerprint`` (hex) and what
            the rule gives it (a stage's ``name`` and ``threshold``, a member's ``name`` and ``weight``).
        rubric: The rubric every part applies (its id and version name the fingerprint's label).
        rule: The combining rule's other settings (a cascade's target, delta and confidence; a jury's
            aggregation), JSON-ready.

    Returns:
        The fingerprint; its label reads ``kind:model+model+...:rubric@version:hex12``.
    """
    spec: dict[str, Any] = {
        "kind": kind,
        "model": "+".join(str(p.get("model")) for p in parts),
        "rubric_id": rubric.id,
        "rubric_version": rubric.version,
        "parts": parts,
        "rule": dict(sorted(rule.items())),
    }
    return _fingerprint_of(spec)
