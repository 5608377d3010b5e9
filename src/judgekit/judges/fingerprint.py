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

__all__ = ["PARSER_VERSION", "Fingerprint", "judge_fingerprint"]

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
    canonical = json.dumps(spec, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return Fingerprint(spec=json.loads(canonical), hex=hashlib.sha256(canonical.encode("utf-8")).hexdigest())
