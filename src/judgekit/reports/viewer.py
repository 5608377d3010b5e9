"""The static trial viewer (``judgekit view``): one folder that opens from ``file://``, no network.

The folder holds ``index.html`` (the run page, the trial page and, given two runs, the comparison page,
chosen by the URL's hash: ``#run/0``, ``#trial/0/17``, ``#compare``), ``viewer.js`` and ``viewer.css``
(copied from this package), and the data as JavaScript files, because Chromium forbids ``fetch`` from
``file://``:

* ``data/index.js`` assigns ``window.JK_DATA``: every run's trials as compact rows (case, trial, verdict,
  failure categories, failing layers, trust, cost, one-line reason) with the reports' line on judge
  verdicts on never-labelled criterion texts (``unlabelled``, ``None`` without a judge layer), the cases
  (suite, slice, severity, and what ``--cases`` says about them) and the comparison of two runs;
* ``data/run<R>/chunk-<K>.js`` calls ``window.JK_CHUNK(R, K, [...])`` with the full detail of trials
  ``K * chunk_size`` to ``(K + 1) * chunk_size - 1`` of run ``R``: checks, evidence prepared for display,
  and the transcript (or why it is unavailable). A trial page loads only its chunk, so a run of 50,000
  trials does not load every transcript up front.

Everything read from a results or transcript file is untrusted: it is written as JSON data (``<``, U+2028
and U+2029 escaped, see :func:`js_assign`) and the page script only ever sets it as text. The page's
Content-Security-Policy allows scripts and styles from the folder only and nothing else (no network).
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from importlib import resources
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from judgekit.errors import JudgekitError, Problem
from judgekit.io.folders import StagedFolder, check_folder
from judgekit.reports.run_markdown import unlabelled_text
from judgekit.reports.run_model import (
    DEFAULT_REGRESSION_SLICES,
    in_capability_suite,
    source_lines,
    unlabelled_judge_verdicts,
)
from judgekit.results import ResultLine, RunResults
from judgekit.secrets import Redactor, redact
from judgekit.verdict import (
    CheckResult,
    Evidence,
    FrozenModel,
    Trust,
    Verdict,
    evidence_line,
    failed_gates,
    verdict_reason,
)

if TYPE_CHECKING:
    from judgekit.cases import Case
    from judgekit.transcript import Transcript

__all__ = [
    "CHUNK_SIZE",
    "MARKER",
    "ROWS_PER_FILE",
    "CaseInfo",
    "TranscriptLookup",
    "TranscriptSource",
    "UnavailableTranscripts",
    "ViewerBuild",
    "ViewerDocument",
    "ViewerRunSummary",
    "build_viewer",
    "case_info",
    "check_out_folder",
    "diff_rows",
    "display_messages",
    "display_path",
    "escaped_secrets",
    "js_assign",
    "locate_quote",
    "trial_detail",
    "trial_row",
    "trial_trust",
]

CHUNK_SIZE = 500
"""Trials per detail chunk file: a trial page loads one chunk (its trials' checks and transcripts)."""

ROWS_PER_FILE = 5000
"""Run-page rows per ``data/run<R>/rows-<K>.js`` file (written as they are read, never all held at once)."""

MARKER = ".judgekit-viewer"
"""The file that marks a folder as a viewer ``judgekit view`` wrote (and may therefore rewrite)."""

ASSETS = ("viewer.js", "viewer.css")
"""The static files copied from ``judgekit/reports/viewer_assets`` into the folder."""

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'"
)
"""The page's Content-Security-Policy: scripts and styles from the folder, no request anywhere else."""


# --------------------------------------------------------------------------- escaping


def js_assign(target: str, data: Any, *, redactor: Redactor | None = None) -> str:
    r"""A JavaScript statement handing ``data`` to the page, safe whatever text the data holds.

    The data is JSON with every ``<`` written ``\\u003c`` (so no ``</script>`` or ``<!--`` can appear
    whatever a transcript says) and U+2028 / U+2029 escaped (line terminators in JavaScript before ES2019).
    Given a redactor, every secret it knows is removed from the JSON text before that escaping, so a
    secret holding ``<`` cannot hide behind it.

    Args:
        target: What receives the data: ``window.JK_DATA = `` (an assignment) or ``window.JK_CHUNK(0, 3, ``
            (a call; the statement then ends with ``);``).
        data: What to hand over: JSON-ready values (text, numbers, lists, mappings).
        redactor: Removes secrets (known values in plain and JSON-escaped form, key shapes); ``None``
            removes nothing.

    Returns:
        The statement, one line ending with a newline.

    Examples:
        >>> js_assign("window.X = ", {"t": "</script><b>"})
        'window.X = {"t":"\\u003c/script>\\u003cb>"};\n'
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    if redactor is not None:
        text = redactor.text(text)
    text = text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    close = ");" if target.rstrip().endswith(("(", ",")) else ";"
    return f"{target}{text}{close}\n"


# --------------------------------------------------------------------------- one trial


def trial_trust(line: ResultLine) -> str:
    """The trust status of a trial: ``untrusted`` when any judged check is, else ``trusted`` when any is.

    Args:
        line: The trial's result line.

    Returns:
        ``untrusted``, ``trusted`` or ``not_required`` (no check rests on a judge).
    """
    statuses = {c.trust for c in line.checks}
    if Trust.UNTRUSTED in statuses:
        return Trust.UNTRUSTED.value
    if Trust.TRUSTED in statuses:
        return Trust.TRUSTED.value
    return Trust.NOT_REQUIRED.value


def _failing_layers(line: ResultLine) -> list[str]:
    """The layers whose checks gave the trial its verdict: failed checks, or checks of its undecided state."""
    if line.verdict is Verdict.PASS:
        return []
    wanted = Verdict.FAIL if line.verdict is Verdict.FAIL else line.verdict
    return list(dict.fromkeys(c.layer for c in line.checks if c.verdict is wanted))


def _cost(line: ResultLine) -> tuple[float | None, str | None]:
    """The trial's judge cost in dollars, or ``None`` with why it is unknown (never 0 for an unpriced one)."""
    if line.cost_unknown_reason:
        return None, line.cost_unknown_reason
    if line.cost_usd is None:
        return None, "no cost recorded in the result line"
    return line.cost_usd, None


def trial_row(line: ResultLine, case_index: int) -> list[Any]:
    """A trial as one row of the run page's table.

    Args:
        line: The trial's result line.
        case_index: The position of its case in the viewer's case table.

    Returns:
        ``[case index, trial, verdict, failure categories (comma-separated), failing layers
        (comma-separated), trust, cost in dollars or None, why the cost is unknown or None, one-line
        reason]``; the reason is :func:`~judgekit.verdict.verdict_reason` (every gate that did not pass).
    """
    cost, unknown = _cost(line)
    return [
        case_index,
        line.trial,
        line.verdict.value,
        ",".join(c.value for c in line.failure_categories),
        ",".join(_failing_layers(line)),
        trial_trust(line),
        cost,
        unknown,
        verdict_reason(line.verdict, line.reason, line.checks, untrusted=line.untrusted_policy),
    ]


def _pretty(value: Any) -> str:
    """``value`` as indented JSON text, the value of every credential-named key (``api_key``) removed."""
    return json.dumps(redact(value), indent=2, ensure_ascii=False, sort_keys=False, default=str)


def _cell(value: Any) -> str:
    """A value in a diff table: text as written, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def diff_rows(evidence: Evidence, check_id: str = "") -> list[dict[str, str]]:
    """A state diff as table rows: table, key, field, expected, found, and what the row is.

    Args:
        evidence: A ``diff`` evidence of the state layer.
        check_id: The check it belongs to; rows of ``state:collateral`` are changes nothing expected.

    Returns:
        One row per difference, each ``{"table", "key", "field", "expected", "found", "kind"}``; ``kind``
        is ``collateral`` (changed though no expectation covers it), ``missing`` (an expected change not
        made) or ``wrong`` (made, but not as expected). Empty for evidence carrying no diff data.
    """
    data = evidence.data if isinstance(evidence.data, dict) else {}
    rows: list[dict[str, str]] = []
    collateral = check_id.endswith("collateral")
    diff = data.get("diff")
    if isinstance(diff, dict):
        for table, entry in diff.items():
            if not isinstance(entry, dict):
                continue
            kind = "collateral" if collateral else "wrong"
            if entry.get("table_added"):
                rows.append(_row(table, "", "", "", "table added", kind=kind))
            if entry.get("table_removed"):
                rows.append(_row(table, "", "", "", "table removed", kind=kind))
            for key, row in _items(entry.get("added")):
                rows.append(_row(table, key, "", "(no row)", f"row added: {_cell(row)}", kind=kind))
            for key, row in _items(entry.get("removed")):
                rows.append(_row(table, key, "", _cell(row), "(row removed)", kind=kind))
            for key, changes in _items(entry.get("modified")):
                for change in changes if isinstance(changes, list) else []:
                    if isinstance(change, dict):
                        rows.append(
                            _row(
                                table,
                                key,
                                str(change.get("path", "")),
                                _cell(change["old"]) if "old" in change else "(absent)",
                                _cell(change["new"]) if "new" in change else "(absent)",
                                kind=kind,
                            )
                        )
        return rows
    table = str(data.get("table", ""))
    key = str(data.get("key", ""))
    if not table:
        return rows
    kind = (
        "missing"
        if "no row was added" in evidence.summary or "still present" in evidence.summary
        else "wrong"
    )
    if data.get("expected") == "removed":
        rows.append(_row(table, key, "", "row removed", "row still present", kind="missing"))
    expected_row = data.get("expected_row")
    if isinstance(expected_row, dict):
        closest = data.get("closest")
        if isinstance(closest, dict) and closest:
            for near_key, near in closest.items():
                for failure in _list(near.get("failures")) if isinstance(near, dict) else []:
                    rows.append(_failure_row(table, str(near_key), failure, kind="wrong"))
        else:
            for name, predicate in expected_row.items():
                rows.append(
                    _row(table, "(new row)", str(name), _cell(predicate), "(no row added)", kind=kind)
                )
    for failure in _list(data.get("failures")):
        rows.append(_failure_row(table, key, failure, kind=kind))
    if "before" in data and not data.get("failures"):
        rows.append(_row(table, key, "", "row modified", "(row removed)", kind="wrong"))
    return rows


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _items(value: Any) -> Iterable[tuple[str, Any]]:
    return ((str(k), v) for k, v in value.items()) if isinstance(value, dict) else ()


def _row(table: str, key: str, name: str, expected: str, found: str, *, kind: str) -> dict[str, str]:
    return {"table": table, "key": key, "field": name, "expected": expected, "found": found, "kind": kind}


def _failure_row(table: str, key: str, failure: Any, kind: str) -> dict[str, str]:
    if not isinstance(failure, dict):
        return _row(table, key, "", "", _cell(failure), kind=kind)
    predicate = str(failure.get("predicate", ""))
    expected = _cell(failure.get("expected"))
    found = _cell(failure.get("found")) if failure.get("present", True) else "(absent)"
    return _row(
        table, key, str(failure.get("field", "")), f"{predicate} {expected}".strip(), found, kind=kind
    )


def locate_quote(texts: Sequence[str | None], quote: str, message_index: int | None) -> dict[str, int] | None:
    """Where a judge's (or a text check's) quote is in the transcript.

    The message the evidence names is searched first, then every message in order. Leading and trailing
    ``...`` (an excerpt's ellipses) are ignored.

    Args:
        texts: Each message's text, in transcript order (``None`` for a message without text).
        quote: The quoted text.
        message_index: The message the evidence names, or ``None``.

    Returns:
        ``{"message_index", "start", "end"}`` (character offsets in that message's text), or ``None`` when
        the quote is in no message.

    Examples:
        >>> locate_quote(["hi", "I refunded 412.18 twice"], "refunded 412.18", 1)
        {'message_index': 1, 'start': 2, 'end': 17}
        >>> locate_quote(["hi"], "refunded", None) is None
        True
    """
    needle = quote.strip().removeprefix("...").removesuffix("...").strip()
    if not needle:
        return None
    order = list(range(len(texts)))
    if message_index is not None and 0 <= message_index < len(texts):
        order.remove(message_index)
        order.insert(0, message_index)
    for index in order:
        text = texts[index]
        if text:
            start = text.find(needle)
            if start >= 0:
                return {"message_index": index, "start": start, "end": start + len(needle)}
    return None


@dataclass(frozen=True)
class TranscriptLookup:
    """A trial's transcript as the viewer shows it, or why it cannot.

    Attributes:
        messages: The messages prepared for display (role, text, tool calls with pretty arguments, tool
            results), or ``None`` when the transcript is unavailable.
        calls: For each tool call in transcript order (its ``call_index``), the message holding it.
        unavailable: Why there is no transcript (file missing, line changed or unreadable), or ``None``.
        warning: A caveat on a transcript that is shown (its line changed since grading), or ``None``.
        file: The transcript file as pages name it (:func:`display_path`), or ``None`` (no source).
    """

    messages: list[dict[str, Any]] | None
    calls: list[int] = field(default_factory=list)
    unavailable: str | None = None
    warning: str | None = None
    file: str | None = None


def _check_detail(check: CheckResult, lookup: TranscriptLookup, judge_model: str | None) -> dict[str, Any]:
    texts = [m.get("content") for m in lookup.messages] if lookup.messages is not None else []
    evidence: list[dict[str, Any]] = []
    judge: dict[str, Any] | None = None
    for e in check.evidence:
        item: dict[str, Any] = {
            "kind": e.kind,
            "line": evidence_line(e),
            "summary": e.summary,
            "call_index": e.call_index,
            "tool": e.tool,
            "arguments": _pretty(e.arguments) if e.arguments is not None else None,
            "message_index": _message_of(e, lookup),
            "quote": e.quote,
        }
        if e.quote:
            item["quote_location"] = (
                locate_quote(texts, e.quote, e.message_index) if lookup.messages else None
            )
        if e.kind == "diff":
            item["diff_rows"] = diff_rows(e, check.check_id)
        data = e.data if isinstance(e.data, dict) else None
        if data is not None and "fingerprint" in data and "criterion" in data:
            cost = data.get("cost") if isinstance(data.get("cost"), dict) else {}
            unknown = cost.get("unknown_reason") if isinstance(cost, dict) else None
            usd = cost.get("usd") if isinstance(cost, dict) else None
            judge = {
                "criterion": data.get("criterion"),
                "fingerprint": data.get("fingerprint"),
                "model": judge_model,
                "samples": data.get("samples"),
                "agreement": data.get("agreement"),
                "unverified_quotes": data.get("unverified_quotes"),
                "errors": data.get("errors"),
                "cost_usd": None if unknown or not isinstance(usd, (int, float)) else usd,
                "cost_unknown_reason": unknown
                if unknown
                else (None if isinstance(usd, (int, float)) else "no cost recorded for this judgment"),
                "calls": cost.get("calls") if isinstance(cost, dict) else None,
                "prompt_tokens": cost.get("prompt_tokens") if isinstance(cost, dict) else None,
                "completion_tokens": cost.get("completion_tokens") if isinstance(cost, dict) else None,
                "replayed": cost.get("replayed") if isinstance(cost, dict) else None,
                "cached_tokens": cost.get("cached_tokens") if isinstance(cost, dict) else None,
            }
        elif data is not None and isinstance(data.get("cascade"), dict):
            item["route"] = _pretty(data["cascade"])  # the judge cascade's route: stages tried, who decided
        elif data is not None and e.kind != "diff":
            item["data"] = _pretty(data)
        evidence.append(item)
    return {
        "id": check.check_id,
        "layer": check.layer,
        "verdict": check.verdict.value,
        "gate": check.gate,
        "score": check.score,
        "weight": check.weight,
        "reason": check.reason,
        "category": check.category.value if check.category is not None else None,
        "trust": check.trust.value,
        "trust_reason": check.trust_reason,
        "evidence": evidence,
        "judge": judge,
    }


def _message_of(evidence: Evidence, lookup: TranscriptLookup) -> int | None:
    """The message an evidence points at: its own ``message_index``, else the message of its call."""
    if evidence.message_index is not None:
        return evidence.message_index
    if evidence.call_index is not None and 0 <= evidence.call_index < len(lookup.calls):
        return lookup.calls[evidence.call_index]
    return None


def trial_detail(line: ResultLine, lookup: TranscriptLookup) -> dict[str, Any]:
    """Everything the trial page shows about one trial.

    Args:
        line: The trial's result line.
        lookup: Its transcript, or why it is unavailable (:func:`read_transcripts_for`).

    Returns:
        ``case``, ``trial``, ``verdict``, ``reason`` (the one-line reason), ``contract_reason``, ``gates``
        (every gate that did not pass, each with its own evidence and whether it decided the verdict:
        :func:`~judgekit.verdict.failed_gates`, as the reports list them), ``quality``,
        ``cost_usd`` / ``cost_unknown_reason``, ``failure_categories``, ``trust``, ``run`` (the run record),
        ``judge`` (model, label, fingerprint), ``source``, ``messages`` (``None`` when unavailable),
        ``transcript_unavailable``, ``transcript_warning``, ``highlight`` (message and call indices the
        evidence points at) and ``checks`` (each with its evidence prepared: diff rows, located quotes,
        judge criterion, fingerprint, samples and cost).
    """
    spec = line.judge_fingerprint.get("spec") if line.judge_fingerprint else None
    model = spec.get("model") if isinstance(spec, dict) else None
    judge_model = model if isinstance(model, str) else None
    checks = [_check_detail(c, lookup, judge_model) for c in line.checks]
    messages: set[int] = set()
    calls: set[int] = set()
    for check in checks:
        if check["verdict"] == Verdict.PASS.value:
            continue
        for e in check["evidence"]:
            if e["call_index"] is not None:
                calls.add(e["call_index"])
            if e["message_index"] is not None:
                messages.add(e["message_index"])
    cost, unknown = _cost(line)
    fingerprint = line.judge_fingerprint or {}
    return {
        "case": line.case.id,
        "case_version": line.case.version,
        "trial": line.trial,
        "run_id": line.run_id,
        "verdict": line.verdict.value,
        "reason": verdict_reason(line.verdict, line.reason, line.checks, untrusted=line.untrusted_policy),
        "contract_reason": line.reason,
        "gates": [
            g.model_dump(mode="json")
            for g in failed_gates(line.verdict, line.reason, line.checks, untrusted=line.untrusted_policy)
        ],
        "quality": line.quality,
        "cost_usd": cost,
        "cost_unknown_reason": unknown,
        "failure_categories": [c.value for c in line.failure_categories],
        "trust": trial_trust(line),
        "run": line.run.model_dump(mode="json", exclude_none=True) if line.run is not None else None,
        "judge": {
            "model": judge_model,
            "label": fingerprint.get("label"),
            "fingerprint": fingerprint.get("hex"),
        }
        if line.judge_fingerprint
        else None,
        "source": _source(line, lookup),
        "messages": lookup.messages,
        "transcript_unavailable": lookup.unavailable,
        "transcript_warning": lookup.warning,
        "highlight": {"messages": sorted(messages), "calls": sorted(calls)},
        "checks": checks,
    }


_JS_ESCAPED = ("<", "\u2028", "\u2029")
"""The characters :func:`js_assign` writes as ``\\uXXXX`` escapes after the JSON encoding."""


def escaped_secrets(environ: Mapping[str, str] | None = None) -> Redactor | None:
    r"""A redactor for the secret values :func:`js_assign`'s escaping would hide from the writer's redaction.

    :func:`~judgekit.io.atomic.write_atomic` removes every known secret and key shape from what it writes,
    matching values as written and JSON-escaped; a value holding ``<`` (or U+2028/U+2029) appears in a
    viewer data file as ``\u003c`` and would not match. Such values are removed from the JSON text before
    the escaping.

    Args:
        environ: The environment; default this process's.

    Returns:
        A redactor knowing the secret-named variables' values that hold an escaped character, or ``None``
        when there is none (nothing more to do than the writer does).
    """
    from judgekit.secrets import is_secret_name

    env = os.environ if environ is None else environ
    values = [v for k, v in env.items() if is_secret_name(k) and any(c in v for c in _JS_ESCAPED)]
    return Redactor(values) if values else None


def _source(line: ResultLine, lookup: TranscriptLookup) -> dict[str, Any] | None:
    """The result line's transcript source, its file named as :func:`display_path` names it."""
    if line.source is None:
        return None
    source = line.source.model_dump(mode="json")
    source["file"] = lookup.file if lookup.file is not None else Path(line.source.file).name
    return source


# --------------------------------------------------------------------------- transcripts


def display_messages(transcript: Transcript) -> tuple[list[dict[str, Any]], list[int]]:
    """A :class:`~judgekit.transcript.Transcript`'s messages for display, and each call's message index."""
    calls_at: list[int] = []
    names: dict[str, tuple[int, str]] = {}
    out: list[dict[str, Any]] = []
    for m_index, message in enumerate(transcript.messages):
        calls = []
        for call in message.tool_calls:
            names[call.id] = (len(calls_at), call.name)
            calls.append(
                {
                    "index": len(calls_at),
                    "id": call.id,
                    "name": call.name,
                    "arguments": _pretty(call.arguments) if call.arguments is not None else None,
                    "arguments_error": call.arguments_error,
                    "raw_arguments": call.raw_arguments,
                }
            )
            calls_at.append(m_index)
        item: dict[str, Any] = {"role": message.role, "content": message.content, "calls": calls}
        if message.role == "tool":
            answered = names.get(message.tool_call_id or "")
            item["result_of"] = (
                {"index": answered[0], "name": answered[1]}
                if answered is not None
                else {"index": None, "name": message.name or message.tool_call_id}
            )
        out.append(item)
    return out, calls_at


def display_path(file: str | PathLike[str], results_folder: str | PathLike[str]) -> str:
    """How a shared page names a local file: relative to the results file's folder, never absolutely.

    A viewer folder is made to be shared, so it must not print where the files sit on this machine (a
    home folder, a user name). A file inside the results file's folder (or below it) is named relative to
    it; one recorded as a plain relative path (``runs/t.jsonl``, no ``..``) as recorded; any other by
    its file name alone.

    Args:
        file: The file, as recorded in a result line or as found.
        results_folder: The folder of the results file.

    Returns:
        The name to show, with ``/`` between folders.

    Examples:
        >>> display_path("/home/ana/runs/t/tr.jsonl", "/home/ana/runs")
        't/tr.jsonl'
        >>> display_path("/home/ana/private/tr.jsonl", "/home/ana/runs")
        'tr.jsonl'
        >>> display_path("runs/tr.jsonl", "/elsewhere")
        'runs/tr.jsonl'
    """
    path = Path(file)
    folder = Path(os.path.abspath(results_folder))
    if path.is_absolute():
        try:
            return Path(os.path.abspath(path)).relative_to(folder).as_posix()
        except ValueError:
            return path.name
    if ".." in path.parts:
        return path.name
    return path.as_posix()


# --------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class CaseInfo:
    """What ``--cases`` tells the viewer about one case.

    Attributes:
        split: The case's split (``capability``, ``regression``, ``holdout``) or ``None``.
        text: Labelled texts to show on the trial page (``input``, ``required outcome``, ``expected``).
    """

    split: str | None
    text: tuple[tuple[str, str], ...] = ()


def case_info(case: Case, where: str) -> CaseInfo:
    """What the viewer shows about one case: its split and what it expects, as labelled texts.

    Args:
        case: The case (reviewed, from a valid set).
        where: Its file and line as pages name them (``cases/refund.yaml:3``, see :func:`display_path`).

    Returns:
        Its :class:`CaseInfo`.
    """
    text: list[tuple[str, str]] = []
    if case.input:
        text.append(("input", case.input))
    if case.turns:
        text.append(
            ("turns", _pretty([t.model_dump(mode="json", exclude_defaults=True) for t in case.turns]))
        )
    if case.user is not None:
        text.append(("user simulation", _pretty(case.user.model_dump(mode="json", exclude_defaults=True))))
    for label, value in (("user goal", case.user_goal), ("required outcome", case.required_outcome)):
        if value:
            text.append((label, value))
    if case.expected is not None:
        text.append(("expected", _pretty(case.expected.model_dump(mode="json", exclude_defaults=True))))
    if case.expected_state is not None:
        state = case.expected_state.model_dump(mode="json", exclude_defaults=True)
        text.append(("expected state", _pretty(state)))
    if case.forbidden:
        text.append(
            ("forbidden", _pretty([r.model_dump(mode="json", exclude_none=True) for r in case.forbidden]))
        )
    text.append(("case file", where))
    return CaseInfo(split=case.split, text=tuple(text))


# --------------------------------------------------------------------------- the folder


@dataclass(frozen=True)
class ViewerBuild:
    """What :func:`build_viewer` wrote.

    Attributes:
        out: The viewer folder.
        index: Its ``index.html``.
        files: Every file written, relative to ``out``.
        runs: Per run: ``name``, ``file``, ``trials``, ``chunks``, ``transcripts_unavailable`` (trials whose
            transcript could not be read) and ``problems`` (located problems of the results file).
        cases: Distinct cases across the runs.
        compared: Whether a comparison page was built (two runs).
        bytes: Total size of the files written.
        unavailable_reasons: Distinct reasons transcripts were unavailable, each with its trial count.
    """

    out: Path
    index: Path
    files: tuple[str, ...]
    runs: tuple[dict[str, Any], ...]
    cases: int
    compared: bool
    bytes: int
    unavailable_reasons: tuple[tuple[str, int], ...] = ()


def check_out_folder(out: str | PathLike[str]) -> Path:
    """Refuse an output folder that holds anything but an earlier viewer.

    Args:
        out: The folder to write.

    Returns:
        The folder as a path (it may not exist yet).

    Raises:
        JudgekitError: (exit code 2) When it is a file, or a non-empty folder without the viewer marker.
    """
    return check_folder(out, marker=MARKER, command="judgekit view", kind="a viewer")


def _suite(case: Any, splits: Mapping[str, str], capability: Any) -> str:
    if splits.get(case.id) == "holdout":
        return "holdout"
    return "capability" if capability(case) else "regression"


def _comparison(
    digests: Sequence[Any],
    positions: Sequence[Mapping[str, list[int]]],
) -> dict[str, Any]:
    """The comparison page's data: compare_runs' verdict, and every case's change with both runs' trials.

    Each row says where the page lists it (``filed_under``): its task's change, ``changed`` when the task
    was fixed, broken or is undecided or any of its trials flipped, ``fixed`` and ``broken`` when one of
    its trials was (a trial that broke in a task that still fails is listed under ``broken`` too), and
    ``all``. The page only reads these lists; it classifies nothing itself, and shows each change in the
    comparison reports' words (``change_words``, :data:`~judgekit.reports.run_compare.CHANGE_WORDS`).
    """
    from judgekit.reports.run_compare import CHANGE_WORDS, compare_runs, task_changes

    da, db = digests
    result = compare_runs(da, db)
    lost = {c.case_id for c in result.regression_lost}
    flips = {case_id: (fixed, broken) for case_id, _, fixed, broken in result.trials_by_task()}
    out_a, out_b = da.outcomes(), db.outcomes()
    rows = []
    for case_id, change in task_changes(da, db):
        fixed, broken = flips.get(case_id, ((), ()))
        filed: list[str] = [change]
        if change in ("fixed", "broken", "undecided") or fixed or broken:
            filed.append("changed")
        filed.extend(k for k, trials in (("fixed", fixed), ("broken", broken)) if trials and k != change)
        rows.append(
            {
                "case": case_id,
                "change": change,
                "a": _outcome(out_a.get(case_id)),
                "b": _outcome(out_b.get(case_id)),
                "trials_a": positions[0].get(case_id, []),
                "trials_b": positions[1].get(case_id, []),
                "trials_fixed": list(fixed),
                "trials_broken": list(broken),
                "filed_under": [*filed, "all"],
                "regression_lost": case_id in lost,
            }
        )
    return {
        "a": result.a,
        "b": result.b,
        "verdict": result.verdict,
        "explanation": result.explanation,
        "counts": {
            "fixed": result.fixed,
            "broken": result.broken,
            "still_pass": result.unchanged_pass,
            "still_fail": result.unchanged_fail,
            "undecided": result.undecided,
        },
        "trials": {"pairs": result.trial_pairs, "fixed": result.trials_fixed, "broken": result.trials_broken},
        "notes": list(result.notes),
        "change_words": dict(CHANGE_WORDS),
        "rows": rows,
    }


def _outcome(entry: tuple[int, int, Verdict] | None) -> dict[str, Any] | None:
    if entry is None:
        return None
    return {"passes": entry[0], "trials": entry[1], "outcome": entry[2].value}


_INDEX_HTML = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>judgekit viewer</title>
<link rel="stylesheet" href="viewer.css">
<script src="data/index.js"></script>
{rows}</head>
<body>
<header id="top"><h1 id="title">judgekit viewer</h1><nav id="nav"></nav></header>
<main id="app"><noscript>The viewer needs JavaScript (it runs locally; nothing is fetched from the
network).</noscript></main>
<script src="viewer.js"></script>
</body>
</html>
"""


class TranscriptSource(Protocol):
    """The transcripts of a results file's lines, batch by batch (the loader one layer up reads them).

    :func:`build_viewer` opens one per run (given the results file's folder), asks it for each chunk's
    transcripts in results order, and closes it when the run is written.
    """

    def lookups(self, lines: Sequence[ResultLine]) -> list[TranscriptLookup]:
        """The transcript of each line, or why it is unavailable, in the order of ``lines``."""
        ...

    def close(self) -> None:
        """Release what it holds open."""
        ...


@dataclass
class _RunSource:
    """One run to show: its file, its result lines one at a time, and afterwards its problems."""

    path: Path
    lines: Iterable[ResultLine]
    problems: Callable[[], list[Problem]]


def _shown_problem(problem: Problem, results_folder: Path) -> str:
    """A problem as the run page lists it: its file named as :func:`display_path` names it."""
    if problem.file is None:
        return str(problem)
    return str(
        Problem(
            Path(display_path(problem.file, results_folder)), problem.line, problem.field, problem.message
        )
    )


class _Builder:
    """Writes a viewer's data files while the result lines stream past: one chunk of trials at a time.

    What it keeps grows with cases (the case table), run ids and, for two runs, one verdict and one
    position per trial for the comparison; never the result lines, their details or their transcripts.
    """

    def __init__(
        self,
        folder: StagedFolder,
        *,
        infos: Mapping[str, CaseInfo],
        regression: tuple[str, ...],
        chunk_size: int,
        compare: bool,
        redactor: Redactor | None,
    ) -> None:
        from judgekit.reports.run_compare import RunDigest

        self.folder = folder
        self.infos = infos
        self.regression = regression
        self.splits = {cid: info.split for cid, info in infos.items() if info.split}
        self.capability = in_capability_suite(self.splits, regression)
        self.chunk_size = chunk_size
        self.redactor = redactor
        self.case_index: dict[str, int] = {}
        self.case_rows: list[dict[str, Any]] = []
        self.run_docs: list[dict[str, Any]] = []
        self.summaries: list[dict[str, Any]] = []
        self.reasons: dict[str, int] = defaultdict(int)
        self.row_files: list[int] = []
        self.compare = compare
        self.digests: list[Any] = []
        self.positions: list[dict[str, list[int]]] = []
        self._digest = RunDigest

    def write(self, relative: str, target: str, data: Any) -> None:
        self.folder.write(relative, js_assign(target, data, redactor=self.redactor))

    def _case(self, line: ResultLine) -> int:
        index = self.case_index.get(line.case.id)
        if index is not None:
            return index
        index = self.case_index[line.case.id] = len(self.case_rows)
        info = self.infos.get(line.case.id)
        self.case_rows.append(
            {
                "id": line.case.id,
                "version": line.case.version,
                "slice": line.case.slice,
                "category": line.case.category,
                "severity": line.case.severity,
                "suite": _suite(line.case, self.splits, self.capability),
                "split": info.split if info is not None else None,
                "info": [list(t) for t in info.text] if info is not None else None,
            }
        )
        return index

    def add_run(self, r: int, source: _RunSource, reader: TranscriptSource) -> None:
        """Read one run's lines once, writing its chunks and row files as they fill."""
        folder = source.path.parent
        digest = None
        if self.compare:
            baseline = self.digests[0] if self.digests else None
            digest = self._digest(
                source.path.name,
                regression_slices=self.regression,
                splits=self.splits,
                keep_trials=baseline is None,
                baseline=baseline,
            )
        by_case: dict[str, list[int]] = defaultdict(list)
        run_ids: dict[str, None] = {}
        batch: list[ResultLine] = []
        rows: list[list[Any]] = []
        trials = chunks = parts = unavailable = unlabelled = with_unlabelled = 0
        judged = False
        with closing(reader):

            def flush_chunk() -> None:
                nonlocal chunks, unavailable
                details = []
                for line, lookup in zip(batch, reader.lookups(batch), strict=True):
                    if lookup.unavailable is not None:
                        unavailable += 1
                        self.reasons[lookup.unavailable] += 1
                    details.append(trial_detail(line, lookup))
                self.write(f"data/run{r}/chunk-{chunks}.js", f"window.JK_CHUNK({r}, {chunks}, ", details)
                chunks += 1
                batch.clear()

            def flush_rows() -> None:
                nonlocal parts
                self.write(
                    f"data/run{r}/rows-{parts}.js", f"window.JK_DATA.runs[{r}].rows_parts[{parts}] = ", rows
                )
                parts += 1
                rows.clear()

            for line in source.lines:
                rows.append(trial_row(line, self._case(line)))
                run_ids.setdefault(line.run_id)
                on_unlabelled = unlabelled_judge_verdicts(line)
                unlabelled += on_unlabelled
                with_unlabelled += on_unlabelled > 0
                judged = judged or line.judge_fingerprint is not None
                if digest is not None:
                    digest.add(line)
                    by_case[line.case.id].append(trials)
                trials += 1
                batch.append(line)
                if len(batch) >= self.chunk_size:
                    flush_chunk()
                if len(rows) >= ROWS_PER_FILE:
                    flush_rows()
            if batch:
                flush_chunk()
            if rows:
                flush_rows()
        if trials == 0:
            raise JudgekitError(
                f"{source.path}: no trial to show (no valid result line); give a results file judgekit grade "
                "wrote"
            )
        if digest is not None:
            self.digests.append(digest)
            self.positions.append(dict(by_case))
        self.row_files.append(parts)
        found = source.problems()
        problems = [str(p) for p in found]
        self.run_docs.append(
            {
                "name": source.path.name,
                "file": source.path.name,
                "run_ids": list(run_ids),
                "chunks": chunks,
                "problems": [_shown_problem(p, folder) for p in found],
                "unlabelled": unlabelled_text(unlabelled, with_unlabelled, judged=judged),
                "row_files": parts,
                "rows_parts": [],
            }
        )
        self.summaries.append(
            {
                "name": source.path.name,
                "file": str(source.path),
                "trials": trials,
                "chunks": chunks,
                "transcripts_unavailable": unavailable,
                "problems": problems,
            }
        )


def build_viewer(
    results: Sequence[RunResults | str | PathLike[str]],
    out: str | PathLike[str],
    *,
    transcripts: Callable[[Path], TranscriptSource],
    cases: Mapping[str, CaseInfo] | None = None,
    chunk_size: int = CHUNK_SIZE,
    regression_slices: Iterable[str] = DEFAULT_REGRESSION_SLICES,
    redactor: Redactor | None = None,
) -> ViewerBuild:
    """Write the viewer folder for one run, or two runs side by side, all at once or not at all.

    A results file given by its path is read once, line by line: each chunk of trials is written as soon
    as it is read (its details and transcripts, then dropped), and the run page's rows go to
    ``data/run<R>/rows-<K>.js`` files of :data:`ROWS_PER_FILE` rows, so memory does not grow with the
    trials. Every file is written into a staging folder beside ``out`` (:class:`~judgekit.io.folders.
    StagedFolder`) that replaces ``out`` only when all of it was written: a failure (a full disk, runs
    that cannot be compared) leaves ``out`` exactly as it was. Every data file has the secrets
    :func:`~judgekit.io.atomic.write_atomic` removes (the one redacting writer), values of credential-named
    argument keys (``api_key``) are removed as the arguments are prepared, and pages name local files
    relative to the results file's folder.

    Args:
        results: One or two runs: results files (read streaming) or runs read with
            :func:`~judgekit.results.read_results` (the first is the baseline when there are two).
        out: The folder to write (see :func:`check_out_folder`); an earlier viewer there is replaced.
        transcripts: Opens the transcripts of the results file in a folder
            (:class:`judgekit.api.viewer.TranscriptReader` reads them from the files the lines name).
        cases: What the case set says about each case (:func:`case_info`), or ``None`` for the results alone.
        chunk_size: Trials per detail chunk file.
        regression_slices: Slice names that form the regression suite (as in ``judgekit report``).
        redactor: Removes secrets from the data's JSON text before ``<`` and U+2028/U+2029 are escaped
            (which would hide a secret holding them from the writer's redaction); default one that knows
            the environment's secret values holding such a character (:func:`escaped_secrets`), or none.

    Returns:
        What was written.

    Raises:
        JudgekitError: (exit code 2) For more than two runs, a run without a trial, an output folder that
            is not a viewer or cannot be written (nothing in it is changed), or two runs ``judgekit
            compare`` refuses to compare.
    """
    if not 1 <= len(results) <= 2:
        raise JudgekitError(
            f"judgekit view shows one run, or two side by side; got {len(results)} results files"
        )
    if chunk_size < 1:
        raise JudgekitError(f"chunk size must be at least 1 (got {chunk_size})")
    for run in results:
        if isinstance(run, RunResults) and not run.lines:
            raise JudgekitError(
                f"{run.path}: no trial to show (no valid result line); give a results file judgekit grade "
                "wrote"
            )
    check_out_folder(out)
    sources = []
    for run in results:
        path, lines, problems = source_lines(run, fast=False)  # every line a ResultLine
        sources.append(_RunSource(path, cast(Iterable[ResultLine], lines), problems))
    with StagedFolder(
        out,
        marker=MARKER,
        marker_text="This folder was written by judgekit view; judgekit view may replace it.\n",
        command="judgekit view",
        kind="a viewer",
    ) as folder:
        builder = _Builder(
            folder,
            infos=dict(cases or {}),
            regression=tuple(regression_slices),
            chunk_size=chunk_size,
            compare=len(sources) == 2,
            redactor=redactor if redactor is not None else escaped_secrets(),
        )
        for r, source in enumerate(sources):
            builder.add_run(r, source, transcripts(source.path.parent))
        comparison = _comparison(builder.digests, builder.positions) if builder.compare else None
        document = {
            "schema_version": 1,
            "chunk_size": chunk_size,
            "runs": builder.run_docs,
            "cases": builder.case_rows,
            "compare": comparison,
            "with_cases": cases is not None,
        }
        builder.write("data/index.js", "window.JK_DATA = ", document)
        assets = resources.files("judgekit.reports").joinpath("viewer_assets")
        for name in ASSETS:
            folder.write(name, assets.joinpath(name).read_text(encoding="utf-8"))
        scripts = "".join(
            f'<script src="data/run{r}/rows-{k}.js"></script>\n'
            for r, parts in enumerate(builder.row_files)
            for k in range(parts)
        )
        folder.write("index.html", _INDEX_HTML.format(csp=CSP, rows=scripts))
    return ViewerBuild(
        out=Path(out),
        index=Path(out) / "index.html",
        files=tuple(folder.files),
        runs=tuple(builder.summaries),
        cases=len(builder.case_rows),
        compared=comparison is not None,
        bytes=folder.bytes,
        unavailable_reasons=tuple(sorted(builder.reasons.items(), key=lambda kv: -kv[1])),
    )


class ViewerRunSummary(FrozenModel):
    """One run a viewer shows, as its document lists it.

    Attributes:
        name: The results file's name.
        file: The results file.
        trials: Trials shown (>= 1).
        chunks: Files of trial pages written for it.
        transcripts_unavailable: Trials whose transcript could not be read.
        problems: Located problems of the results file, as text.
    """

    name: str
    file: str
    trials: int
    chunks: int
    transcripts_unavailable: int
    problems: list[str]


class UnavailableTranscripts(FrozenModel):
    """Trials shown without their transcript for one reason.

    Attributes:
        reason: Why their transcript could not be read.
        trials: How many trials (>= 1).
    """

    reason: str
    trials: int


class ViewerDocument(FrozenModel):
    """A viewer written (the ``viewer`` document ``judgekit view`` prints).

    Attributes:
        out: The viewer folder.
        index: Its ``index.html``.
        url: The ``file://`` address of ``index.html``.
        files: Files written.
        bytes: Their total size.
        runs: The runs shown.
        cases: Distinct cases across the runs.
        comparison: Whether a comparison page was built (two runs).
        transcripts_unavailable: Trials without a transcript, per reason.
        served: The ``http://127.0.0.1`` address the viewer is served at, ``None`` when it is not served.
    """

    out: str
    index: str
    url: str
    files: int
    bytes: int
    runs: list[ViewerRunSummary]
    cases: int
    comparison: bool
    transcripts_unavailable: list[UnavailableTranscripts]
    served: str | None = None

    @classmethod
    def of(cls, built: ViewerBuild) -> ViewerDocument:
        """The document of a viewer written (not served).

        Args:
            built: What :func:`build_viewer` wrote.

        Returns:
            The paths written and the counts.
        """
        return cls(
            out=str(built.out),
            index=str(built.index),
            url=built.index.resolve().as_uri(),
            files=len(built.files),
            bytes=built.bytes,
            runs=[ViewerRunSummary.model_validate(run) for run in built.runs],
            cases=built.cases,
            comparison=built.compared,
            transcripts_unavailable=[
                UnavailableTranscripts(reason=r, trials=n) for r, n in built.unavailable_reasons
            ],
        )
