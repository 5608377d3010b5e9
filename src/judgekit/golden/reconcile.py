"""Double resolution: two experts resolve the same cases independently; every difference is a finding.

Engineers build fixtures; the people who do the work write the expected outcomes. Two of them resolve
each case on their own, then compare. Their disagreements are findings, not friction: they expose an
ambiguous policy or a step that lives only in someone's head. This module compares two **resolution
files** and lists every field where they differ; nothing is written until they agree.

A resolution file (YAML or JSON) holds one expert's answers::

    expert: refunds-supervisor          # who resolved
    set: airdesk                        # optional: the golden set's name (must match the other file's)
    notes: free text                    # optional, never compared
    cases:
      gs-double-charge:                 # case id
        version: 2                      # optional: the case version resolved
        expected_state: {refunds: [{payment_id: PMT-50104, amount: 412.18, method: original_card}]}
        forbidden: [{tool: issue_refund, when: "amount > 412.18"}]
        acceptance: States the refund amount and the card it returns to.
        notes: why I decided so          # optional, never compared

The contract fields are those of a case (:class:`~judgekit.cases.Case`), validated the same way:
``expected_state``, ``expected``, ``forbidden``, ``prohibited``, ``forbidden_outcomes``,
``required_outcome``, ``acceptance`` and ``response_rubric``. A field one expert leaves out means
"none", so it differs from the other expert's value.

Comparison semantics: numbers compare by value (``412.18 == 412.180``, ``1 == 1.0``); texts compare
with runs of whitespace collapsed (line wrapping is not a disagreement); lists compare as multisets
(two forbidden rules in another order agree) except ``expected.route``, which is ordered; when exactly one
list item differs on each side and both are mappings, the finding names the differing field inside it.

Two files that do not resolve the same cases (different case ids, different set names, a case version
other than the set's) are not compared at all: the mismatch is named and nothing else is reported.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator

from judgekit.cases import (
    Expected,
    ExpectedState,
    ForbiddenRule,
    NonEmptyStr,
    problems_from_validation,
)
from judgekit.errors import JudgekitError, Problem, ProblemsError, unknown_names
from judgekit.verdict import FrozenModel

__all__ = [
    "CONTRACT_FIELDS",
    "CaseResolution",
    "Finding",
    "FindingDocument",
    "Reconciliation",
    "ReconciliationDocument",
    "ResolutionFile",
    "agreed_resolution",
    "compare_resolutions",
    "read_resolution",
    "reconcile",
    "reconciliation_document",
]

CONTRACT_FIELDS = (
    "expected_state",
    "expected",
    "forbidden",
    "prohibited",
    "forbidden_outcomes",
    "required_outcome",
    "acceptance",
    "response_rubric",
)
"""The fields two experts must agree on (``version`` is checked apart; ``notes`` never compared)."""

_ORDERED_LISTS = frozenset({"expected.route"})


class CaseResolution(FrozenModel):
    """One expert's answer for one case: the expected outcome, forbidden rules and acceptance.

    Attributes:
        version: The case version the expert resolved (checked against the other file and the set).
        expected_state: The expected end state (as in a case).
        expected: Expected route and texts (as in a case).
        forbidden: Forbidden tool-call rules.
        prohibited: Prohibited actions or disclosures.
        forbidden_outcomes: Outcomes that must not happen.
        required_outcome: The outcome that counts as success.
        acceptance: The acceptance criterion.
        response_rubric: Criteria for the reply.
        notes: The expert's reasoning; kept, never compared.
    """

    version: int | None = Field(default=None, ge=1)
    expected_state: ExpectedState | None = None
    expected: Expected | None = None
    forbidden: tuple[ForbiddenRule, ...] = ()
    prohibited: tuple[str | ForbiddenRule, ...] = ()
    forbidden_outcomes: tuple[str, ...] = ()
    required_outcome: str | None = None
    acceptance: str | None = None
    response_rubric: tuple[str, ...] = ()
    notes: str | None = None

    def contract(self) -> dict[str, Any]:
        """The compared fields as plain JSON data; values equal to their defaults are left out.

        Leaving defaults out makes a field an expert wrote with its default value (``outcome: answer``,
        ``route_match: superset``) agree with the same field left out.
        """
        data = self.model_dump(mode="json", exclude_defaults=True)
        return {name: data.get(name) for name in CONTRACT_FIELDS}


class ResolutionFile(FrozenModel):
    """One expert's resolution file.

    Attributes:
        expert: Who resolved the cases.
        set: The golden set's name, when given.
        notes: Anything else; never compared.
        cases: Case id to resolution (at least one).
    """

    expert: NonEmptyStr
    set: str | None = None
    notes: str | None = None
    cases: dict[str, CaseResolution] = Field(min_length=1)

    @field_validator("cases", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return {} if value is None else value


@dataclass(frozen=True)
class Finding:
    """One field where the two experts differ.

    Attributes:
        case_id: The case.
        field: Dotted path of the field (``expected_state.changes.refunds.added.0.amount``).
        a: Expert A's value (``None`` when absent), or the items only A has for a list.
        b: Expert B's value, or the items only B has.
        kind: ``value`` (the values differ) or ``items`` (a list whose items differ; ``a``/``b`` hold the
            items only that expert has).
    """

    case_id: str
    field: str
    a: Any
    b: Any
    kind: str = "value"

    def describe(self, a_name: str, b_name: str) -> str:
        """One readable line."""
        if self.kind == "items":
            only_a, only_b = _show(self.a), _show(self.b)
            return f"{self.case_id}: {self.field}: only {a_name}: {only_a}; only {b_name}: {only_b}"
        return f"{self.case_id}: {self.field}: {a_name} {_show(self.a)} | {b_name} {_show(self.b)}"

    def document(self) -> FindingDocument:
        """The finding as a field of the ``reconciliation`` document."""
        return FindingDocument(case=self.case_id, field=self.field, kind=self.kind, a=self.a, b=self.b)


@dataclass
class Reconciliation:
    """The comparison of two resolution files.

    Attributes:
        a: Expert A's file.
        b: Expert B's file.
        a_path: Where it was read from.
        b_path: Where it was read from.
        findings: Every differing field, by case in id order.
        agreed: Ids of the cases on which the experts agree entirely.
        set_updates: When the experts agree and the set was given: every field where a case in the set
            differs from the agreed resolution (``a`` is the set's value, ``b`` the agreed one). These
            cases need updating, with a version bump.
    """

    a: ResolutionFile
    b: ResolutionFile
    a_path: Path
    b_path: Path
    findings: list[Finding] = field(default_factory=list)
    agreed: list[str] = field(default_factory=list)
    set_updates: list[Finding] = field(default_factory=list)

    @property
    def agree(self) -> bool:
        """True when there is no finding."""
        return not self.findings

    def disputed(self) -> list[str]:
        """Ids of the cases with at least one finding."""
        return list(dict.fromkeys(f.case_id for f in self.findings))


def _show(value: Any) -> str:
    if value is None:
        return "(absent)"
    if value == []:
        return "(none)"
    text = (
        json.dumps(value, ensure_ascii=False, sort_keys=True) if not isinstance(value, str) else repr(value)
    )
    return text if len(text) <= 240 else text[:237] + "..."


def read_resolution(path: str | os.PathLike[str]) -> ResolutionFile:
    """Read and validate a resolution file (YAML or JSON).

    Args:
        path: The file, as text or a path object.

    Raises:
        ProblemsError: Every invalid field, located (file, line, field), with a did-you-mean for
            unknown names.
        JudgekitError: When the file cannot be read or parsed.
    """
    path = Path(path)
    from judgekit.io.documents import read_document

    if not path.is_file():
        raise JudgekitError(f"{path}: no such resolution file")
    doc = read_document(path)
    if not isinstance(doc.data, dict):
        raise ProblemsError(
            [Problem(path, doc.line_of(()), "", "a resolution file is a mapping with expert and cases")]
        )
    try:
        return ResolutionFile.model_validate(doc.data)
    except ValidationError as exc:
        raise ProblemsError(problems_from_validation(exc, doc, ResolutionFile)) from None


# --------------------------------------------------------------------------- comparison

_WS = re.compile(r"\s+")


def _norm(value: Any) -> Any:
    """Canonical form for comparison: numbers by value, whitespace collapsed in texts."""
    from judgekit.state.canonical import canonical

    value = canonical(value)
    if isinstance(value, str):
        return _WS.sub(" ", value).strip()
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_norm(v) for v in value]
    return value


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _unmatched(items: list[Any], others: list[Any]) -> list[Any]:
    """The items left over, in order, once each is paired with an equal one (by ``_key``) of ``others``."""
    left = Counter(_key(v) for v in others)
    out: list[Any] = []
    for v in items:
        k = _key(v)
        if left[k]:
            left[k] -= 1
        else:
            out.append(v)
    return out


def _diff(case_id: str, path: str, a: Any, b: Any, out: list[Finding]) -> None:
    if a == b:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            _diff(case_id, f"{path}.{key}" if path else key, a.get(key), b.get(key), out)
        return
    if isinstance(a, list) and isinstance(b, list):
        if path in _ORDERED_LISTS:
            for i in range(max(len(a), len(b))):
                _diff(case_id, f"{path}.{i}", a[i] if i < len(a) else None, b[i] if i < len(b) else None, out)
            return
        only_a, only_b = _unmatched(a, b), _unmatched(b, a)
        if not only_a and not only_b:
            return  # the same items in another order
        if (
            len(only_a) == 1
            and len(only_b) == 1
            and isinstance(only_a[0], dict)
            and isinstance(only_b[0], dict)
        ):
            index = next(i for i, v in enumerate(a) if _key(v) == _key(only_a[0]))
            _diff(case_id, f"{path}.{index}", only_a[0], only_b[0], out)
            return
        out.append(Finding(case_id, path, only_a, only_b, "items"))
        return
    if a in (None, [], {}) and b in (None, [], {}):
        return
    out.append(Finding(case_id, path, a, b))


def compare_resolutions(
    a: ResolutionFile,
    b: ResolutionFile,
    *,
    a_path: str | os.PathLike[str],
    b_path: str | os.PathLike[str],
    set_versions: dict[str, int] | None = None,
    set_name: str | None = None,
) -> Reconciliation:
    """Compare two experts' resolutions of the same cases.

    Args:
        a: Expert A's resolutions.
        b: Expert B's resolutions.
        a_path: A's file, for messages, as text or a path object.
        b_path: B's file, for messages, as text or a path object.
        set_versions: Case id to version of the golden set the resolutions belong to, when known: every
            resolved id must be in it, and a resolved version must equal the set's.
        set_name: The set's name (its manifest's), when known.

    Returns:
        The reconciliation: every finding, and the cases agreed on.

    Raises:
        ProblemsError: When the files do not resolve the same cases (ids only in one file, different set
            names, the same expert twice, a version that differs between the files or from the set): each
            mismatch is named, and no field is compared.
    """
    a_path = Path(a_path)
    b_path = Path(b_path)
    problems: list[Problem] = []
    if a.expert == b.expert:
        problems.append(
            Problem(
                b_path, None, "expert", f"both files are by {a.expert!r}; double resolution needs two experts"
            )
        )
    if a.set and b.set and a.set != b.set:
        problems.append(
            Problem(b_path, None, "set", f"resolves set {b.set!r} but {a_path} resolves set {a.set!r}")
        )
    for name, path in ((a.set, a_path), (b.set, b_path)):
        if set_name and name and name != set_name:
            problems.append(
                Problem(path, None, "set", f"resolves set {name!r}, not the set given ({set_name!r})")
            )
    only_a = sorted(set(a.cases) - set(b.cases))
    only_b = sorted(set(b.cases) - set(a.cases))
    if only_a or only_b:
        msg = "the two files do not resolve the same cases"
        if only_a:
            msg += f"; only in {a_path} ({a.expert}): {', '.join(only_a)}"
        if only_b:
            msg += f"; only in {b_path} ({b.expert}): {', '.join(only_b)}"
        problems.append(Problem(a_path, None, "cases", msg + ". Both experts resolve the same cases"))
    for case_id in sorted(set(a.cases) & set(b.cases)):
        va, vb = a.cases[case_id].version, b.cases[case_id].version
        if va is not None and vb is not None and va != vb:
            problems.append(
                Problem(
                    b_path,
                    None,
                    f"cases.{case_id}.version",
                    f"{a.expert} resolved version {va}, {b.expert} version {vb}: not the same case",
                )
            )
    if set_versions is not None:
        for res, path in ((a, a_path), (b, b_path)):
            unknown = sorted(set(res.cases) - set(set_versions))
            if unknown:
                shown = unknown_names(unknown, set_versions)
                problems.append(Problem(path, None, "cases", f"cases not in the golden set: {shown}"))
            for case_id, r in sorted(res.cases.items()):
                current = set_versions.get(case_id)
                if r.version is not None and current is not None and r.version != current:
                    problems.append(
                        Problem(
                            path,
                            None,
                            f"cases.{case_id}.version",
                            f"resolves version {r.version} but the set has version {current}; "
                            "resolve the current version",
                        )
                    )
    if problems:
        raise ProblemsError(problems)
    result = Reconciliation(a, b, a_path, b_path)
    for case_id in sorted(a.cases):
        before = len(result.findings)
        _diff(
            case_id,
            "",
            _norm(a.cases[case_id].contract()),
            _norm(b.cases[case_id].contract()),
            result.findings,
        )
        if len(result.findings) == before:
            result.agreed.append(case_id)
    return result


def _case_contract(case: Any) -> dict[str, Any]:
    """A case's contract fields in the form :meth:`CaseResolution.contract` gives (defaults left out)."""
    return CaseResolution(**{name: getattr(case, name) for name in CONTRACT_FIELDS}).contract()


def agreed_resolution(result: Reconciliation) -> dict[str, Any]:
    """The agreed resolutions as plain data, ready to write (only when the experts agree).

    Raises:
        JudgekitError: When there are findings (exit code 1: the experts do not agree).
    """
    if not result.agree:
        raise JudgekitError(
            f"{len(result.findings)} finding(s) in {len(result.disputed())} case(s) are not settled; "
            "nothing was written",
            exit_code=1,  # the comparison ran and found disagreements, as `golden reconcile` exits
        )
    cases: dict[str, Any] = {}
    for case_id in sorted(result.a.cases):
        ra, rb = result.a.cases[case_id], result.b.cases[case_id]
        entry: dict[str, Any] = {}
        if ra.version is not None or rb.version is not None:
            entry["version"] = ra.version or rb.version
        data = ra.model_dump(mode="json", exclude_defaults=True, exclude={"version", "notes"})
        entry.update(data)
        notes = {n: r.notes for n, r in ((result.a.expert, ra), (result.b.expert, rb)) if r.notes}
        if notes:
            entry["notes"] = notes
        cases[case_id] = entry
    out: dict[str, Any] = {"resolved_by": [result.a.expert, result.b.expert]}
    if result.a.set or result.b.set:
        out["set"] = result.a.set or result.b.set
    out["cases"] = cases
    return out


def reconcile(
    a_path: str | os.PathLike[str],
    b_path: str | os.PathLike[str],
    *,
    set_path: str | os.PathLike[str] | None = None,
    out: str | os.PathLike[str] | None = None,
) -> Reconciliation:
    """Read two resolution files, compare them, and write the agreed resolution when they agree.

    Args:
        a_path: Expert A's file, as text or a path object.
        b_path: Expert B's file, as text or a path object.
        set_path: The golden set the cases belong to (ids and versions are checked against it), as text or a
            path object.
        out: Where to write the agreed resolution (YAML), only when there is no finding, as text or a path
            object.

    Raises:
        ProblemsError: For invalid files or files that do not resolve the same cases.
    """
    a_path = Path(a_path)
    b_path = Path(b_path)
    set_path = Path(set_path) if set_path is not None else None
    out = Path(out) if out is not None else None
    problems: list[Problem] = []
    files: list[ResolutionFile] = []
    for path in (a_path, b_path):
        try:
            files.append(read_resolution(path))
        except ProblemsError as exc:
            problems.extend(exc.problems)
    if problems:
        raise ProblemsError(problems)
    set_versions = None
    set_name = None
    set_cases: dict[str, Any] = {}
    if set_path is not None:
        from judgekit.caseset import load_case_set

        case_set = load_case_set([set_path])
        case_set.raise_if_invalid()
        set_versions = {c.case.id: c.case.version for c in case_set.cases}
        set_name = case_set.manifest.name if case_set.manifest else None
        set_cases = {c.case.id: c.case for c in case_set.cases}
    result = compare_resolutions(
        files[0], files[1], a_path=a_path, b_path=b_path, set_versions=set_versions, set_name=set_name
    )
    if result.agree and set_cases:
        for case_id in sorted(result.a.cases):
            current = _case_contract(set_cases[case_id])
            agreed = result.a.cases[case_id].contract()
            _diff(case_id, "", _norm(current), _norm(agreed), result.set_updates)
    if out is not None and result.agree:
        import yaml

        from judgekit.io.atomic import write_atomic

        text = yaml.safe_dump(agreed_resolution(result), sort_keys=False, allow_unicode=True, width=100)
        write_atomic(out, text)
    return result


class FindingDocument(FrozenModel):
    """One field where two resolutions differ, as printed (:class:`Finding`).

    Attributes:
        case: The case.
        field: Dotted path of the field.
        kind: ``value`` (the values differ) or ``items`` (a list whose items differ).
        a: The first side's value (``None`` when absent), or the items only it has.
        b: The second side's value, or the items only it has.
    """

    case: str
    field: str
    kind: str
    a: Any
    b: Any


class ReconciliationDocument(FrozenModel):
    """Two experts' resolutions compared (the ``reconciliation`` document of ``cases reconcile``).

    Attributes:
        experts: Expert A's and expert B's names.
        cases: Cases A resolved.
        agreed: Ids of the cases the experts agree on entirely.
        disputed: Ids of the cases with at least one finding.
        findings: Every field the experts differ on.
        set_updates: When they agree and the set was given, every field where the set differs from the
            agreed resolution (``a`` the set's value, ``b`` the agreed one).
        written: The agreed resolution's file, or ``None`` when nothing was written.
    """

    experts: list[str]
    cases: int
    agreed: list[str]
    disputed: list[str]
    findings: list[FindingDocument]
    set_updates: list[FindingDocument]
    written: str | None


def reconciliation_document(
    result: Reconciliation, out: str | os.PathLike[str] | None
) -> ReconciliationDocument:
    """The ``reconciliation`` document of a comparison.

    Args:
        result: The comparison.
        out: Where the agreed resolution was to be written (``None``: nowhere); it is written only when
            the experts agree; as text or a path object.

    Returns:
        The document.
    """
    out = Path(out) if out is not None else None
    return ReconciliationDocument(
        experts=[result.a.expert, result.b.expert],
        cases=len(result.a.cases),
        agreed=result.agreed,
        disputed=result.disputed(),
        findings=[f.document() for f in result.findings],
        set_updates=[f.document() for f in result.set_updates],
        written=str(out) if out is not None and result.agree else None,
    )
