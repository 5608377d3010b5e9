"""Generated candidate cases: a model writes utterances, a person decides what is correct.

A model given a tool's name and description writes realistic requests that **should** trigger the tool
and adjacent ones that **must not** (vague worries, other intents, two intents in one message). Each
becomes a candidate case in the set's candidates folder, with an acceptance criterion that starts with
``REVIEW:``; no gate reads a candidate, and promotion refuses one until a person has written or approved
its acceptance (the model knows the documents, not what the organisation considers correct).

The pipeline is strict about what it writes:

* the model is called through :class:`~judgekit.judges.client.JudgeClient` (retries, cassette, cost), so
  a generation can be recorded once and replayed offline;
* its reply must be one JSON object ``{"should_trigger": [...], "must_not_trigger": [...]}`` of
  non-empty strings; anything else (prose, a truncated reply, a missing list, a number where a string
  belongs, nothing usable) is a :class:`~judgekit.errors.JudgekitError` naming what was wrong, and
  nothing is written;
* utterances are de-duplicated against every question already in the set (reviewed cases and
  candidates: inputs, paraphrases, turns, openings, goals) and against each other, by normalised text
  (Unicode NFKC, case folded, punctuation dropped, spaces collapsed);
* an utterance holding personal data (see :mod:`judgekit.golden.pii`) is left out, not written;
* every candidate is validated as a :class:`~judgekit.cases.Case` before anything is written, and the
  files are written all or none (:func:`write_candidate_files`).
"""

from __future__ import annotations

import contextlib
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from judgekit.cases import REVIEW_PREFIX, Case
from judgekit.caseset import CaseSet, LocatedProblem
from judgekit.errors import JudgekitError
from judgekit.io.atomic import move_file, write_atomic
from judgekit.textnorm import WORDS
from judgekit.verdict import FrozenModel

if TYPE_CHECKING:
    from judgekit.judges.client import JudgeClient

__all__ = [
    "GENERATION_SCHEMA",
    "CandidateCounts",
    "CandidateFile",
    "CandidatesDocument",
    "GeneratedCandidate",
    "GenerationResult",
    "LeftOutDuplicate",
    "LeftOutPersonalData",
    "build_candidates",
    "build_prompt",
    "candidates_dir",
    "candidates_document",
    "existing_questions",
    "generate_candidates",
    "normalise_text",
    "parse_generation",
    "write_candidate_files",
]

PROMPT_VERSION = "1"

SYSTEM = (
    "You write test utterances for evaluating a customer-service AI agent. You invent realistic customers; "
    "you never use real names, email addresses, phone numbers, card numbers or account numbers. Reply with "
    "one JSON object and nothing else."
)

USER_TEMPLATE = """Tool under test: {tool}
What the tool does: {description}

Write {n} realistic customer messages that should make the agent call {tool}, and {n} adjacent messages \
that must NOT make it call {tool}: vague worries, related but different intents, two intents in one \
message, requests the tool cannot serve. Vary wording, length and tone; do not repeat a message.

Return exactly this JSON shape: {{"should_trigger": ["..."], "must_not_trigger": ["..."]}}"""

GENERATION_SCHEMA: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {
        "name": "candidate_utterances",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {
                "should_trigger": {"type": "array", "items": {"type": "string"}},
                "must_not_trigger": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["should_trigger", "must_not_trigger"],
            "additionalProperties": False,
        },
    },
}
"""The ``response_format`` sent when the model supports structured output."""

_KINDS = ("should_trigger", "must_not_trigger")

#: Exit code of a model reply that cannot be used, or a model call that failed after its retries: 1, an
#: outside service failing (the exit-code table), not a mistake in the user's input (2).
_UNUSABLE_REPLY = 1


def normalise_text(text: str) -> str:
    """The form utterances are compared in: NFKC, case folded, punctuation dropped, spaces collapsed.

    ``"When can I check in online?"`` and ``"when can i  check-in online"`` both become
    ``"when can i check in online"``. The profile :data:`judgekit.textnorm.WORDS`.
    """
    return WORDS.apply(text)


@dataclass(frozen=True)
class CandidateFile:
    """One candidate case to be written.

    Attributes:
        case_id: The candidate's id.
        path: Where it will be written (inside the candidates folder).
        data: The case as plain data (validated as a :class:`~judgekit.cases.Case`).
        header: Comment lines written above the YAML.
    """

    case_id: str
    path: Path
    data: dict[str, Any]
    header: str = ""

    def text(self) -> str:
        """The YAML file's content."""
        import yaml

        body = yaml.safe_dump(self.data, sort_keys=False, allow_unicode=True, width=100)
        return self.header + body


@dataclass
class GenerationResult:
    """What a generation produced and what it left out.

    Attributes:
        written: The candidate files written.
        duplicates: ``(utterance, what it duplicates)``: left out as already in the set or the batch.
        personal_data: ``(utterance with the values replaced, what was found)``: left out for holding
            personal data.
        usage: The judge client's usage totals (calls, tokens, cost).
    """

    written: list[CandidateFile] = field(default_factory=list)
    duplicates: list[tuple[str, str]] = field(default_factory=list)
    personal_data: list[tuple[str, str]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)


def build_prompt(tool: str, description: str, n: int) -> list[dict[str, str]]:
    """The chat messages asking for ``n`` utterances of each kind."""
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": USER_TEMPLATE.format(tool=tool, description=description.strip(), n=n)},
    ]


def parse_generation(content: str | None, *, finish_reason: str | None = None) -> dict[str, list[str]]:
    """Read the model's reply strictly.

    Args:
        content: The reply text.
        finish_reason: The provider's finish reason; ``length`` means the reply was cut off.

    Returns:
        ``{"should_trigger": [...], "must_not_trigger": [...]}`` with stripped, non-empty strings.

    Raises:
        JudgekitError: When the reply is empty, cut off, not one JSON object, lacks a list, holds
            something other than text in a list, or has no utterance at all (exit code 1: the model's
            reply is unusable).
    """
    from judgekit.judges.parse import find_json_objects

    if finish_reason == "length":
        raise JudgekitError(
            "the model's reply was cut off at the token limit (finish_reason 'length'); raise --max-tokens "
            "or ask for fewer utterances (-n); nothing was written",
            exit_code=_UNUSABLE_REPLY,
        )
    if content is None or not content.strip():
        raise JudgekitError(
            "the model returned an empty reply; nothing was written", exit_code=_UNUSABLE_REPLY
        )
    objects = [o for o in find_json_objects(content) if set(_KINDS) & set(o)]
    if not objects:
        preview = content.strip().replace("\n", " ")[:120]
        raise JudgekitError(
            f"the model's reply holds no JSON object with should_trigger and must_not_trigger "
            f"(it began: {preview!r}); nothing was written",
            exit_code=_UNUSABLE_REPLY,
        )
    if len(objects) > 1:
        raise JudgekitError(
            f"the model's reply holds {len(objects)} JSON objects with utterance lists; expected exactly "
            "one; nothing was written",
            exit_code=_UNUSABLE_REPLY,
        )
    obj = objects[0]
    out: dict[str, list[str]] = {}
    problems: list[str] = []
    for kind in _KINDS:
        value = obj.get(kind)
        if value is None:
            problems.append(f"'{kind}' is missing")
            continue
        if not isinstance(value, list):
            problems.append(f"'{kind}' must be a list of texts, got {type(value).__name__}")
            continue
        texts: list[str] = []
        for i, item in enumerate(value):
            if not isinstance(item, str):
                problems.append(f"'{kind}[{i}]' must be a text, got {type(item).__name__}")
            elif item.strip():
                texts.append(item.strip())
        out[kind] = texts
    extra = sorted(set(obj) - set(_KINDS))
    if extra:
        problems.append(f"unexpected key(s): {', '.join(extra)}")
    if problems:
        raise JudgekitError(
            "the model's reply is not usable: " + "; ".join(problems) + "; nothing was written",
            exit_code=_UNUSABLE_REPLY,
        )
    if not any(out.values()):
        raise JudgekitError(
            "the model's reply holds no utterance; nothing was written", exit_code=_UNUSABLE_REPLY
        )
    return out


def existing_questions(case_set: CaseSet) -> dict[str, str]:
    """Every user text already in the set, normalised, mapped to the case id it belongs to.

    Covers inputs, paraphrases, every user turn, ``user.opening`` and ``user_goal`` of reviewed cases and
    candidates alike (a candidate awaiting review is a duplicate too).
    """
    out: dict[str, str] = {}
    for loaded in case_set.cases:
        case = loaded.case
        texts = list(case.questions()) + [t.user for t in case.turns]
        if case.user and case.user.opening:
            texts.append(case.user.opening)
        if case.user_goal:
            texts.append(case.user_goal)
        for text in texts:
            out.setdefault(normalise_text(text), case.id)
    return out


def candidates_dir(case_set: CaseSet) -> Path:
    """The set's candidates folder (the manifest's ``candidates_dir``, default ``candidates``).

    Raises:
        JudgekitError: When the manifest's folder resolves outside the set's root, or a promote or retire
            killed half way is pending there (its journal names the command that finishes it).
    """
    from judgekit.golden.journal import refuse_if_pending

    refuse_if_pending(case_set.root, "write candidates into the set")
    return case_set.folder("candidates_dir")


def _id_part(text: str) -> str:
    part = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._")
    return part or "tool"


def _next_numbers(prefix: str, taken_ids: Iterable[str], folder: Path, count: int) -> list[int]:
    taken = set(taken_ids)
    numbers: list[int] = []
    n = 1
    while len(numbers) < count:
        case_id = f"{prefix}-{n:02d}"
        if case_id not in taken and not (folder / f"{case_id}.yaml").exists():
            numbers.append(n)
        n += 1
    return numbers


def build_candidates(
    utterances: Mapping[str, Sequence[str]],
    *,
    tool: str,
    description: str,
    case_set: CaseSet,
    model: str,
    id_prefix: str = "GS-CAND",
    owner: str | None = None,
    result: GenerationResult | None = None,
) -> tuple[list[CandidateFile], GenerationResult]:
    """Turn parsed utterances into validated candidate files (nothing is written here).

    Utterances already in the set or earlier in the batch are recorded in ``result.duplicates``; those
    holding personal data in ``result.personal_data``; the rest become candidates. Should-trigger
    utterances expect a call of ``tool``; must-not-trigger ones forbid it.

    Raises:
        JudgekitError: When no utterance is left (exit code 1: the reply gave nothing new), or a
            candidate does not validate as a case (exit code 2).
    """
    from judgekit.golden.pii import redact_personal_data

    res = result if result is not None else GenerationResult()
    seen = existing_questions(case_set)
    folder = candidates_dir(case_set)
    allow = case_set.manifest.synthetic_values if case_set.manifest else ()
    kept: dict[str, list[str]] = {kind: [] for kind in _KINDS}
    for kind in _KINDS:
        for text in utterances.get(kind, ()):
            key = normalise_text(text)
            if not key:
                continue
            if key in seen:
                res.duplicates.append((text, seen[key]))
                continue
            redacted, found = redact_personal_data(text, allow=allow)
            if found:
                res.personal_data.append((redacted, ", ".join(f.describe() for f in found)))
                continue
            seen[key] = f"this batch ({kind})"
            kept[kind].append(text)
    if not any(kept.values()):
        raise JudgekitError(
            "every generated utterance duplicates the set or holds personal data; nothing was written",
            exit_code=_UNUSABLE_REPLY,  # the reply was read, but the model gave nothing new to keep
        )
    tool_part = _id_part(tool)
    existing_ids = [c.case.id for c in case_set.cases]
    files: list[CandidateFile] = []
    header = (
        f"# Candidate generated by {model} for tool {tool} (judgekit candidates generate, prompt v"
        f"{PROMPT_VERSION}).\n# No gate reads it. Review it, write the acceptance criterion, then: "
        "judgekit candidates promote <id>\n"
    )
    for kind, short, category in (("should_trigger", "T", "normal"), ("must_not_trigger", "N", "edge")):
        texts = kept[kind]
        if not texts:
            continue
        prefix = f"{id_prefix}-{tool_part}-{short}"
        for number, text in zip(_next_numbers(prefix, existing_ids, folder, len(texts)), texts, strict=True):
            case_id = f"{prefix}-{number:02d}"
            data: dict[str, Any] = {"id": case_id, "version": 1, "category": category}
            if owner:
                data["owner"] = owner
            data["origin"] = {"type": "generated", "ref": model}
            data["tools"] = [tool]
            data["input"] = text
            if kind == "should_trigger":
                data["expected"] = {"route": [{"tool": tool}], "route_match": "superset"}
                data["acceptance"] = (
                    f"{REVIEW_PREFIX} confirm that {tool} must be called for this request "
                    f"({description.strip()}), add its expected arguments, and describe the correct reply."
                )
            else:
                data["prohibited"] = [{"tool": tool, "description": f"{tool} must not fire for this request"}]
                data["acceptance"] = (
                    f"{REVIEW_PREFIX} confirm that {tool} must not be called here, and describe the correct "
                    "response (answer, clarifying question, other tool or hand-off)."
                )
            try:
                Case.model_validate(data)
            except Exception as exc:  # a pydantic ValidationError; reported, never written
                raise JudgekitError(f"generated candidate {case_id} is not a valid case: {exc}") from None
            files.append(CandidateFile(case_id, folder / f"{case_id}.yaml", data, header))
    return files, res


def write_candidate_files(files: Sequence[CandidateFile]) -> None:
    """Write candidate files all or none.

    Every file is first written to a temporary folder beside the candidates, then moved into place; if
    a target already exists nothing is written, and if a move fails the files already moved are removed.

    Raises:
        JudgekitError: When a target exists or the folder cannot be written.
    """
    if not files:
        return
    clashes = [str(f.path) for f in files if f.path.exists()]
    if clashes:
        raise JudgekitError(f"{', '.join(clashes)}: already exist; nothing was written")
    folder = files[0].path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=folder, prefix=".candidates-") as tmp:
            staged: list[tuple[Path, Path]] = []
            for f in files:
                tmp_path = Path(tmp) / f.path.name
                write_atomic(tmp_path, f.text(), fsync=False)
                staged.append((tmp_path, f.path))
            moved: list[Path] = []
            try:
                for tmp_path, final in staged:
                    final.parent.mkdir(parents=True, exist_ok=True)
                    move_file(tmp_path, final, overwrite=True)
                    moved.append(final)
            except OSError:
                for path in moved:
                    with contextlib.suppress(OSError):
                        path.unlink()
                raise
    except OSError as exc:
        raise JudgekitError(
            f"{folder}: cannot write candidates: {exc.strerror}; nothing was written"
        ) from None


async def _ask(client: JudgeClient, messages: list[dict[str, str]]) -> tuple[str | None, str | None]:
    from judgekit.judges.client import ERROR_CASSETTE_MISS

    request = client.build_request(tuple(messages), schema=GENERATION_SCHEMA)
    result = await client.complete(request, item="candidates generate")
    if result.error is not None:
        # A replay that finds no recorded reply is a cassette that does not match the request: an input
        # error (2). A provider error or an exhausted budget is the outside service failing (1).
        raise JudgekitError(
            f"the model call failed ({result.error}): {result.error_detail}; nothing was written",
            exit_code=2 if result.error == ERROR_CASSETTE_MISS else _UNUSABLE_REPLY,
        )
    return result.content, result.finish_reason


def generate_candidates(
    case_set: CaseSet,
    *,
    tool: str,
    description: str,
    n: int,
    client: JudgeClient,
    id_prefix: str = "GS-CAND",
    owner: str | None = None,
    dry_run: bool = False,
) -> GenerationResult:
    """Ask the model for utterances and write them as candidate cases.

    Args:
        case_set: The (valid) golden set; candidates go to its candidates folder.
        tool: The tool under test (its name as the agent knows it).
        description: What the tool does, in a sentence.
        n: Utterances of each kind to ask for (1 to 50).
        client: The judge client that makes the call.
        id_prefix: Candidate ids start with this (``GS-CAND-<tool>-T-01`` for should-trigger,
            ``...-N-01`` for must-not-trigger).
        owner: The owner written into each candidate.
        dry_run: Build and validate the candidates but write nothing.

    Returns:
        What was written and what was left out.

    Raises:
        JudgekitError: For a bad argument or a cassette with no recorded reply (exit code 2), a
            failed call, an unusable reply or nothing left to write (exit code 1); nothing is written
            then.
    """
    import asyncio

    if not tool.strip():
        raise JudgekitError("--tool is empty: name the tool under test")
    if not description.strip():
        raise JudgekitError("--description is empty: say in a sentence what the tool does")
    if not 1 <= n <= 50:
        raise JudgekitError(f"-n must be between 1 and 50 (got {n})")
    if case_set.manifest and case_set.manifest.tools and tool not in case_set.manifest.tools:
        raise JudgekitError(
            f"--tool {tool!r} is not among the set's tools ({', '.join(case_set.manifest.tools)}); "
            "check the name or add it to judgekit-set.yaml"
        )
    content, finish = asyncio.run(_ask(client, build_prompt(tool, description, n)))
    utterances = parse_generation(content, finish_reason=finish)
    files, result = build_candidates(
        utterances,
        tool=tool,
        description=description,
        case_set=case_set,
        model=client.params.model,
        id_prefix=id_prefix,
        owner=owner,
    )
    if not dry_run:
        write_candidate_files(files)
    result.written = files
    result.usage = client.usage.as_dict()
    return result


class GeneratedCandidate(FrozenModel):
    """One candidate written (or, with ``--dry-run``, that would be).

    Attributes:
        id: The candidate's case id.
        file: Its file.
        input: The utterance (the case's ``input``).
    """

    id: str
    file: str
    input: Any


class LeftOutDuplicate(FrozenModel):
    """An utterance left out because the set or the batch already holds it.

    Attributes:
        utterance: The utterance.
        duplicates: What it duplicates (a case id, or the batch).
    """

    utterance: str
    duplicates: str


class LeftOutPersonalData(FrozenModel):
    """An utterance left out for holding personal data.

    Attributes:
        utterance: The utterance, its values replaced by placeholders.
        found: What was found.
    """

    utterance: str
    found: str


class CandidateCounts(FrozenModel):
    """How many utterances were written and left out (each >= 0).

    Attributes:
        written: Candidates written.
        duplicates: Utterances left out as duplicates.
        personal_data: Utterances left out for personal data.
    """

    written: int = 0
    duplicates: int = 0
    personal_data: int = 0


class CandidatesDocument(FrozenModel):
    """A generation (the ``candidates`` document ``judgekit candidates generate`` prints).

    Attributes:
        tool: The tool under test.
        model: The model that wrote the utterances.
        dry_run: Whether nothing was written.
        written: The candidates written, in order.
        duplicates: The utterances left out as duplicates.
        personal_data: The utterances left out for personal data.
        counts: The lengths of the three lists.
        usage: The judge client's usage totals (calls, tokens, cost); empty when nothing was asked.
        problems: Why the set was refused (empty when it was not; nothing is generated then).
    """

    tool: str
    model: str
    dry_run: bool
    written: list[GeneratedCandidate] = Field(default_factory=list)
    duplicates: list[LeftOutDuplicate] = Field(default_factory=list)
    personal_data: list[LeftOutPersonalData] = Field(default_factory=list)
    counts: CandidateCounts = CandidateCounts()
    usage: dict[str, Any] = Field(default_factory=dict)
    problems: list[LocatedProblem] = Field(default_factory=list)


def candidates_document(
    result: GenerationResult, *, tool: str, model: str, dry_run: bool
) -> CandidatesDocument:
    """The ``candidates`` document of a generation.

    Args:
        result: What the generation produced and left out.
        tool: The tool under test.
        model: The model that wrote the utterances.
        dry_run: Whether nothing was written.

    Returns:
        The document (no problems: a refused set never reaches a generation).
    """
    return CandidatesDocument(
        tool=tool,
        model=model,
        dry_run=dry_run,
        written=[
            GeneratedCandidate(id=f.case_id, file=str(f.path), input=f.data["input"]) for f in result.written
        ],
        duplicates=[LeftOutDuplicate(utterance=u, duplicates=d) for u, d in result.duplicates],
        personal_data=[LeftOutPersonalData(utterance=u, found=d) for u, d in result.personal_data],
        counts=CandidateCounts(
            written=len(result.written),
            duplicates=len(result.duplicates),
            personal_data=len(result.personal_data),
        ),
        usage=result.usage,
    )
