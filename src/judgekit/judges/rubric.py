"""Rubric files: the criteria a judge applies, the prompt template it is asked with, and its verdict menu.

A rubric is a YAML file (``rubrics/*.yaml`` ships in the wheel as ``judgekit/_data/rubrics``)::

    id: honest-reporting          # letters, digits, ``-`` and ``_``
    version: 3                    # bump on every change of meaning; part of the grader fingerprint
    title: Honest reporting of tool outcomes
    description: ...
    criteria:
      - id: no_false_success
        text: The agent never claims that an action succeeded when the tool result shows it failed ...
        critical: true            # a fail here fails the case whatever the quality score
        weight: 2.0               # weight in the quality score (>= 0)
        dimension: honesty        # the quality dimension it tests
        category: incorrect_reporting   # failure category reported on fail (optional)
        insufficient_when: The transcript has no tool results to compare the claims with.
    examples:                     # optional few-shot examples, shown with their criterion's prompt
      - criterion: no_false_success
        label: fail               # the experts' verdict
        text: Your refund is done.    # the excerpt the verdict is about (shown as data)
        case_id: gs-refund        # where it came from (checked against labelled test items)
        item_id: gs-refund#2
    verdict:
      options: [pass, fail, insufficient_information]
      max_quotes: 3
    template: |                   # optional Jinja2 template of the judge's user message
      ...

Loading validates everything up front (unknown fields, duplicate criterion ids, a template that does not
compile or names variables judgekit does not provide) and reports each problem as ``file:line: field:
message``. Nothing here calls a model.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Final, Literal

from pydantic import AfterValidator, Field, ValidationError, field_validator, model_validator

from judgekit.errors import JudgekitError, LocatedError, Problem, ProblemsError
from judgekit.textnorm import CRITERION_TEXT
from judgekit.verdict import FailureCategory, FrozenModel

if TYPE_CHECKING:
    from judgekit.judges.sandbox import LimitedSandbox

__all__ = [
    "CRITERION_HASH_SCHEME",
    "TEMPLATE_VARIABLES",
    "Criterion",
    "FewShotExample",
    "Rubric",
    "RubricCheck",
    "RubricChecks",
    "RubricDocument",
    "RubricList",
    "RubricProblem",
    "RubricSummary",
    "VerdictMenu",
    "builtin_rubric_dir",
    "builtin_rubric_ids",
    "check_rubric_file",
    "check_rubric_files",
    "criterion_text_hash",
    "load_builtin_rubric",
    "load_rubric",
    "rubric_from_data",
    "rubric_list",
]

VerdictOption = Literal["pass", "fail", "insufficient_information"]

TEMPLATE_VARIABLES = frozenset(
    {
        "criterion",
        "transcript",
        "case_facts",
        "verdict_options",
        "insufficient_guidance",
        "output_instructions",
        "nonce",
        "case_facts_nonce",
        "max_quotes",
    }
)
"""Every variable a rubric template may use. ``transcript`` and ``criterion`` are required."""

_REQUIRED_TEMPLATE_VARIABLES = frozenset({"criterion", "transcript", "output_instructions"})

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}\Z")


def _id_shape(value: str) -> str:
    """``value`` if 1-128 letters, digits, ``_ . -`` starting with a letter or digit; else ValueError."""
    if not _ID.match(value):
        raise ValueError("must be 1-128 letters, digits, '_', '.' or '-', starting with a letter or digit")
    return value


_Id = Annotated[str, AfterValidator(_id_shape)]
"""A criterion's or rubric's id (validated by :func:`_id_shape`)."""


class Criterion(FrozenModel):
    """One thing a judge decides about a transcript.

    Attributes:
        id: Identifier, unique within the rubric (letters, digits, ``_ . -``).
        text: The criterion, stated so that a person and a judge can both apply it. It is trusted
            configuration (written by rubric or case authors), never agent output.
        critical: True when a ``fail`` fails the whole case (a gate); false for scored quality criteria.
        weight: Weight of the criterion's score in the quality score (>= 0).
        dimension: The quality dimension tested (``honesty``, ``grounding``, ``safety``, ...).
        category: The failure category reported when the criterion fails; ``None`` leaves it unset.
        insufficient_when: When the judge should answer ``insufficient_information`` rather than guess;
            ``None`` uses the generic guidance.
    """

    id: _Id
    text: str = Field(min_length=1)
    critical: bool = False
    weight: float = Field(default=1.0, ge=0.0)
    dimension: str = Field(default="quality", min_length=1)
    category: FailureCategory | None = None
    insufficient_when: str | None = None

    @field_validator("text", "insufficient_when")
    @classmethod
    def _strip(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip()
        if not value:
            raise ValueError("must not be blank")
        return value

    @property
    def text_hash(self) -> str:
        """The hash of :attr:`text` (:func:`criterion_text_hash`): what a calibration record lists."""
        return criterion_text_hash(self.text)


CRITERION_HASH_SCHEME: Final = "judgekit.criterion-text-sha256/1"
"""How :func:`criterion_text_hash` hashes a criterion text; recorded with every list of hashes. A change to
the scheme or to :data:`judgekit.textnorm.CRITERION_TEXT` is a new scheme version, and hashes of another
version are never compared."""


def criterion_text_hash(text: str) -> str:
    r"""The hash of a criterion text as the judge reads it, under :data:`CRITERION_HASH_SCHEME`.

    The text is normalised by :data:`judgekit.textnorm.CRITERION_TEXT` (NFC, white space collapsed and
    stripped), encoded as UTF-8 (a lone surrogate as itself) and hashed with SHA-256.

    Args:
        text: The criterion text exactly as it is rendered into the judge's prompt (a case's acceptance as
            written; a required outcome or a prohibition in the sentence that states it).

    Returns:
        64 lower-case hex digits; texts that differ only in what the profile removes hash alike.

    >>> criterion_text_hash("Refund issued.") == criterion_text_hash("  Refund\n issued. ")
    True
    >>> criterion_text_hash("Refund issued.") == criterion_text_hash("refund issued.")
    False
    """
    normal = CRITERION_TEXT.apply(text)
    return hashlib.sha256(normal.encode("utf-8", "surrogatepass")).hexdigest()


class FewShotExample(FrozenModel):
    """One example shown to the judge in its prompt (a rubric's ``examples``, or a few-shot file's line).

    Attributes:
        item_id: The labelled item (case and trial) the example was taken from, when known.
        case_id: The case the example was taken from, when known.
        text: The example's transcript text (an excerpt), when known; in a rubric it is what the judge is
            shown, fenced as data. Compared with labelled items after normalisation.
        label: The verdict the example shows, if any (not used for overlap; required in a rubric).
        criterion: The criterion the example illustrates, if any (required in a rubric: the example is
            shown only in that criterion's prompt).
    """

    item_id: str | None = None
    case_id: str | None = None
    text: str | None = None
    label: str | None = None
    criterion: str | None = None


class VerdictMenu(FrozenModel):
    """The verdicts a judge may give and how much evidence it may quote.

    Attributes:
        options: The offered verdicts; must include ``pass`` and ``fail``. Leaving out
            ``insufficient_information`` forces the judge to decide (its answer is then off-menu if it
            still says it cannot).
        max_quotes: The most evidence quotes the judge may give per criterion (1-20).
    """

    options: tuple[VerdictOption, ...] = ("pass", "fail", "insufficient_information")
    max_quotes: int = Field(default=3, ge=1, le=20)

    @field_validator("options")
    @classmethod
    def _options(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if "pass" not in value or "fail" not in value:
            raise ValueError("must include both 'pass' and 'fail'")
        if len(set(value)) != len(value):
            raise ValueError("lists a verdict twice")
        return value


class Rubric(FrozenModel):
    """A versioned set of criteria with its prompt template and verdict menu.

    Attributes:
        id: Identifier (letters, digits, ``_ . -``).
        version: Version string (an integer in YAML is accepted); part of every fingerprint.
        title: Short human title.
        description: What the rubric is for and when to use it.
        criteria: The criteria, in order; ids are unique.
        verdict: The verdict menu.
        template: Jinja2 template of the judge's user message; ``None`` uses judgekit's default
            (:data:`judgekit.judges.prompt.DEFAULT_TEMPLATE`).
        examples: Few-shot examples, each shown (fenced as data) after the text of the criterion it names
            in that criterion's prompt only; each names a criterion of the rubric (or a case's own,
            ``case.*``), a verdict of the menu and a non-blank text. Empty: none (the prompt and the
            content hash are those of a rubric without the field).
    """

    id: _Id
    version: str
    title: str = ""
    description: str = ""
    criteria: tuple[Criterion, ...] = Field(min_length=1)
    verdict: VerdictMenu = VerdictMenu()
    template: str | None = None
    examples: tuple[FewShotExample, ...] = ()

    @field_validator("version", mode="before")
    @classmethod
    def _version(cls, value: object) -> object:
        if isinstance(value, bool):
            raise ValueError("must be a string or an integer")
        if isinstance(value, int):
            return str(value)
        if isinstance(value, str) and not value.strip():
            raise ValueError("must not be empty")
        return value

    @model_validator(mode="after")
    def _unique_criteria(self) -> Rubric:
        seen: set[str] = set()
        for c in self.criteria:
            if c.id in seen:
                raise ValueError(f"criterion id {c.id!r} appears twice")
            seen.add(c.id)
        for n, ex in enumerate(self.examples):
            if ex.criterion is None or not (ex.criterion in seen or ex.criterion.startswith("case.")):
                raise ValueError(
                    f"examples.{n}: names criterion {ex.criterion!r}, which the rubric does not have; name "
                    "one of its criteria (or a case's own, case.*)"
                )
            if ex.label not in self.verdict.options:
                raise ValueError(
                    f"examples.{n}: label {ex.label!r} is not a verdict of the menu "
                    f"({', '.join(self.verdict.options)})"
                )
            if not (ex.text or "").strip():
                raise ValueError(f"examples.{n}: an example shown to the judge needs its text")
        return self

    def examples_for(self, criterion_id: str) -> tuple[FewShotExample, ...]:
        """The few-shot examples shown in the prompt of this criterion, in rubric order."""
        return tuple(ex for ex in self.examples if ex.criterion == criterion_id)

    @property
    def content_hash(self) -> str:
        """SHA-256 (hex) of the canonical JSON; any change of criteria, menu, template or examples changes it.

        A rubric without examples hashes as one written before the field existed (the field is left out).
        """
        data = self.model_dump(mode="json")
        if not self.examples:
            data.pop("examples")
        canonical = json.dumps(data, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def criterion(self, criterion_id: str) -> Criterion:
        """Return the criterion with this id.

        Raises:
            KeyError: When the rubric has no such criterion.
        """
        for c in self.criteria:
            if c.id == criterion_id:
                return c
        raise KeyError(criterion_id)

    def with_criteria(self, extra: Iterable[Criterion]) -> Rubric:
        """Return a copy with ``extra`` criteria appended (for a case's own criteria).

        Raises:
            ValueError: When an extra criterion's id collides with an existing one.
        """
        return Rubric.model_validate({**self.model_dump(), "criteria": [*self.criteria, *extra]})


_TRIAL_TRANSCRIPT = '{"index": 0, "role": "user", "content": "Hello"}'
"""The transcript a template is trial-rendered with when a rubric is checked."""


def _template_problems(template: str) -> list[str]:
    """Compile a template in the sandbox, check its variables and trial-render it; return problems.

    The trial render uses small sample data under the sandbox's limits
    (:class:`judgekit.judges.sandbox.LimitedSandbox`), so a template that loops, multiplies or pads past a
    limit, or fails on any transcript (a type error, an undefined attribute), is refused when the rubric
    loads instead of when a trial is graded.
    """
    from jinja2 import StrictUndefined, TemplateSyntaxError, meta

    from judgekit.judges.sandbox import LimitedSandbox

    env = LimitedSandbox(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)
    try:
        ast = env.parse(template)
        used = meta.find_undeclared_variables(ast)
    except TemplateSyntaxError as exc:
        return [f"does not compile (template line {exc.lineno}): {exc.message}"]
    except RecursionError:
        return ["does not compile: it nests too deeply; simplify the template"]
    except Exception as exc:  # the lexer and the constant folder raise plain errors on hostile literals
        return [f"does not compile: {type(exc).__name__}: {str(exc)[:300]}"]
    out: list[str] = []
    unknown = sorted(used - TEMPLATE_VARIABLES)
    if unknown:
        out.append(f"uses unknown variables {unknown}; available: {sorted(TEMPLATE_VARIABLES)}")
    missing = sorted(_REQUIRED_TEMPLATE_VARIABLES - used)
    if missing:
        out.append(f"must use {missing} (the data, the criterion and the answer format)")
    if out:
        return out
    trial = _trial_render(env, template)
    return [trial] if trial is not None else []


def _trial_render(env: LimitedSandbox, template: str) -> str | None:
    """Render ``template`` once with sample values; the problem found, or ``None``."""
    from jinja2 import TemplateError

    try:
        compiled = env.compile_limited(template, "of this rubric")
        env.render_limited(
            compiled,
            "of this rubric (rendered with sample data)",
            criterion={
                "id": "sample",
                "text": "A sample criterion.",
                "dimension": "general",
                "critical": True,
            },
            transcript=_TRIAL_TRANSCRIPT,
            case_facts="(no case facts)",
            verdict_options=["pass", "fail", "insufficient_information"],
            insufficient_guidance="Answer insufficient_information when the transcript cannot decide it.",
            output_instructions='Reply with exactly one JSON object: {"verdict": ...}',
            nonce="0123456789abcdef",
            case_facts_nonce="fedcba9876543210",
            max_quotes=3,
        )
    except JudgekitError as exc:
        return exc.message
    except TemplateError as exc:
        return f"fails when rendered with sample data: {type(exc).__name__}: {exc.message or exc}"
    except RecursionError:
        return "does not compile: it nests too deeply; simplify the template"
    except Exception as exc:  # compiling folds constants, which can fail on hostile literals
        return f"does not compile: {type(exc).__name__}: {str(exc)[:300]}"
    return None


def rubric_from_data(
    data: object, *, source: str | os.PathLike[str] | None = None, line_of: object = None
) -> Rubric:
    """Validate parsed YAML/JSON data as a rubric.

    Args:
        data: The parsed document.
        source: The file it came from, for messages, as text or a path object.
        line_of: Optional callable ``loc tuple -> line`` locating fields in ``source``.

    Returns:
        The validated rubric.

    Raises:
        ProblemsError: Listing every problem found, each located as precisely as possible.
    """
    source = Path(source) if source is not None else None

    def locate(loc: tuple[str | int, ...]) -> int | None:
        if callable(line_of):
            line = line_of(loc)
            return int(line) if isinstance(line, int) else None
        return None

    try:
        rubric = Rubric.model_validate(data)
    except ValidationError as exc:
        problems = [
            Problem(
                source,
                locate(tuple(err["loc"])),
                ".".join(str(p) for p in err["loc"]),
                err["msg"].removeprefix("Value error, "),
            )
            for err in exc.errors()
        ]
        raise ProblemsError(problems) from None
    if rubric.template is not None:
        found = _template_problems(rubric.template)
        if found:
            raise ProblemsError([Problem(source, locate(("template",)), "template", p) for p in found])
    return rubric


def load_rubric(path: Path | str) -> Rubric:
    """Read and validate one rubric file (YAML or JSON).

    Raises:
        JudgekitError: When the file cannot be read or parsed (with its file and line).
        ProblemsError: When the content is not a valid rubric.
    """
    from judgekit.io.documents import read_document

    doc = read_document(Path(path))
    return rubric_from_data(doc.data, source=doc.path, line_of=doc.line_of)


def builtin_rubric_dir() -> Path:
    """The directory holding the rubrics that ship with judgekit.

    Installed, they live in the package as ``judgekit/_data/rubrics``; in a source checkout, in
    ``rubrics/`` at the repository's top. The installed location wins when both exist.

    Raises:
        JudgekitError: When neither location exists (a broken installation).
    """
    packaged = resources.files("judgekit").joinpath("_data", "rubrics")
    if packaged.is_dir():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parents[3] / "rubrics"
    if checkout.is_dir():
        return checkout
    raise JudgekitError(
        "the built-in rubrics are missing: neither judgekit/_data/rubrics (installed) nor rubrics/ "
        "(source checkout) exists; reinstall judgekit"
    )


def builtin_rubric_ids() -> list[str]:
    """Ids (file stems) of the shipped rubrics, sorted."""
    return sorted(p.stem for p in builtin_rubric_dir().glob("*.yaml"))


def load_builtin_rubric(rubric_id: str) -> Rubric:
    """Load a shipped rubric by id.

    Raises:
        JudgekitError: When no shipped rubric has that id (the message lists those that exist).
    """
    path = builtin_rubric_dir() / f"{rubric_id}.yaml"
    if not _ID.match(rubric_id) or not path.is_file():
        raise JudgekitError(
            f"no built-in rubric {rubric_id!r}; available: {', '.join(builtin_rubric_ids()) or '(none)'}"
        )
    return load_rubric(path)


class RubricSummary(FrozenModel):
    """One shipped rubric in the ``rubric_list`` document.

    Attributes:
        id: The rubric's id.
        version: Its version.
        title: Its title (``""`` when it has none).
        criteria: How many criteria it has (at least 1).
        gates: How many of them are gates (``critical``), 0 to ``criteria``.
        content_hash: :attr:`Rubric.content_hash`.
    """

    id: str
    version: str
    title: str
    criteria: int
    gates: int
    content_hash: str


class RubricList(FrozenModel):
    """The rubrics that ship with judgekit (the ``rubric_list`` document ``judgekit rubrics list`` prints).

    Attributes:
        rubrics: One summary per shipped rubric, sorted by id; empty when none ships.
    """

    rubrics: list[RubricSummary]


def rubric_list() -> RubricList:
    """Summarise every shipped rubric (id, version, title, criteria, gates, content hash).

    Returns:
        The list, sorted by id.
    """
    summaries = []
    for rubric_id in builtin_rubric_ids():
        rubric = load_builtin_rubric(rubric_id)
        summaries.append(
            RubricSummary(
                id=rubric.id,
                version=rubric.version,
                title=rubric.title,
                criteria=len(rubric.criteria),
                gates=sum(1 for c in rubric.criteria if c.critical),
                content_hash=rubric.content_hash,
            )
        )
    return RubricList(rubrics=summaries)


class RubricDocument(FrozenModel):
    """A rubric with its hashes (the ``rubric`` document ``judgekit rubrics show`` prints).

    The fields are :class:`Rubric`'s, in its order, followed by the two hashes.

    Attributes:
        id: The rubric's id.
        version: Its version.
        title: Its title (``""`` when none).
        description: Its description (``""`` when none).
        criteria: Its criteria, in order.
        verdict: Its verdict menu.
        template: Its custom user-message template, or ``None`` for the default one.
        examples: Its few-shot examples (empty when none).
        content_hash: :attr:`Rubric.content_hash`.
        template_hash: The hash of the prompt template the judge is given
            (:attr:`judgekit.judges.prompt.PromptRenderer.template_hash`).
    """

    id: str
    version: str
    title: str
    description: str
    criteria: tuple[Criterion, ...]
    verdict: VerdictMenu
    template: str | None
    examples: tuple[FewShotExample, ...] = ()
    content_hash: str
    template_hash: str

    @classmethod
    def of(cls, rubric: Rubric, template_hash: str) -> RubricDocument:
        """The document of ``rubric``.

        Args:
            rubric: The rubric shown.
            template_hash: The hash of its rendered prompt template.

        Returns:
            Its fields and both hashes.
        """
        return cls(**dict(rubric), content_hash=rubric.content_hash, template_hash=template_hash)


class RubricProblem(FrozenModel):
    """One thing wrong with a rubric file.

    Attributes:
        file: The file the problem is in.
        line: Its line (1-based), or ``None`` when unknown.
        field: The dotted field, ``""`` for the whole file.
        message: What is wrong.
        text: The line the text output prints (file, line, field and message).
    """

    file: str
    line: int | None
    field: str
    message: str
    text: str


class RubricCheck(FrozenModel):
    """Whether one rubric file is valid.

    Attributes:
        file: The file checked.
        ok: True when it loaded.
        id: The rubric's id, ``None`` when it did not load.
        version: Its version, ``None`` when it did not load.
        criteria: How many criteria it has, ``None`` when it did not load.
        problems: What is wrong, empty when ``ok``.
    """

    file: str
    ok: bool
    id: str | None
    version: str | None
    criteria: int | None
    problems: list[RubricProblem]


class RubricChecks(FrozenModel):
    """Rubric files checked (the ``rubric_check`` document ``judgekit rubrics check`` prints).

    Attributes:
        checked: Files checked.
        valid: Files that loaded.
        invalid: Files that did not (``checked - valid``).
        files: One check per file, in the order given.
    """

    checked: int
    valid: int
    invalid: int
    files: list[RubricCheck]


def _problems(path: Path, exc: JudgekitError) -> list[RubricProblem]:
    if isinstance(exc, ProblemsError):
        problems = exc.problems
    elif isinstance(exc, LocatedError):
        problems = [exc.problem]
    else:
        return [RubricProblem(file=str(path), line=None, field="", message=exc.message, text=exc.message)]
    return [
        RubricProblem(
            file=str(p.file) if p.file is not None else str(path),
            line=p.line,
            field=p.field,
            message=p.message,
            text=str(p),
        )
        for p in problems
    ]


def check_rubric_file(path: str | os.PathLike[str]) -> tuple[RubricCheck, JudgekitError | None]:
    """Load one rubric file and say whether it is valid.

    Args:
        path: The rubric file (YAML or JSON), as text or a path object.

    Returns:
        The check, and the error that made the file invalid (``None`` when it loaded).
    """
    path = Path(path)
    try:
        rubric = load_rubric(path)
    except JudgekitError as exc:
        check = RubricCheck(
            file=str(path), ok=False, id=None, version=None, criteria=None, problems=_problems(path, exc)
        )
        return check, exc
    check = RubricCheck(
        file=str(path),
        ok=True,
        id=rubric.id,
        version=rubric.version,
        criteria=len(rubric.criteria),
        problems=[],
    )
    return check, None


def check_rubric_files(checks: list[RubricCheck]) -> RubricChecks:
    """Count the checks of several rubric files.

    Args:
        checks: One check per file (:func:`check_rubric_file`).

    Returns:
        The ``rubric_check`` document.
    """
    bad = sum(not check.ok for check in checks)
    return RubricChecks(checked=len(checks), valid=len(checks) - bad, invalid=bad, files=checks)
