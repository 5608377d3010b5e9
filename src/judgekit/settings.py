"""Project configuration (``[tool.judgekit]`` in ``pyproject.toml``, or ``judgekit.toml``) and environment.

One precedence for every setting, highest first:

1. a command-line flag (``--cases``, ``--judge-model``, ...);
2. an environment variable (:data:`ENV_VARS`: ``JUDGEKIT_JUDGE_MODEL``, ``JUDGEKIT_JUDGE_API_BASE``,
   ``JUDGEKIT_RECORDS``, ``JUDGEKIT_JUDGE_TIMEOUT``, ``JUDGEKIT_JUDGE_RETRIES``, ``JUDGEKIT_JUDGE_BACKOFF``;
   an empty value counts as unset; the judge transport settings are checked by :func:`check_transport`);
3. a file: first the run configuration named by ``grade --config`` (its ``judge:`` mapping, see
   :mod:`judgekit.judge_setup`), then the project configuration;
4. the built-in default (:data:`DEFAULTS`).

The project configuration is found by walking up from the working directory: in each folder a
``judgekit.toml`` (settings at its top level) wins over a ``pyproject.toml`` holding a ``[tool.judgekit]``
table (a ``pyproject.toml`` without one is passed over); the walk stops after a folder holding ``.git`` or
``.hg`` (the repository root). Relative paths in the file are relative to the file's folder, not the working
directory. The file is validated (unknown keys refused with a did-you-mean, values checked) and problems are
reported as ``file:line: field: message``. ``tomllib`` gives no positions, so lines are found by scanning
the text for table headers and ``key =`` lines; a key inside an inline table is reported at its table's line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judgekit.errors import JudgekitError, LocatedError, Problem, ProblemsError
from judgekit.judges.limits import (
    ACCEPTED_MODELS_MAX,
    JUDGE_BACKOFF_MAX_S,
    JUDGE_RETRIES_MAX,
    JUDGE_TIMEOUT_MAX_S,
)

__all__ = [
    "DEFAULTS",
    "ENV_VARS",
    "FLAGS",
    "JUDGE_BACKOFF_MAX_S",
    "JUDGE_RETRIES_MAX",
    "JUDGE_TIMEOUT_MAX_S",
    "PROJECT_FILES",
    "EffectiveSettings",
    "JudgeSettings",
    "ProjectConfig",
    "ProjectSettings",
    "Setting",
    "check_transport",
    "find_project_config",
    "load_project_config",
    "records_folder",
    "resolve_settings",
    "setting",
]

PROJECT_FILES: tuple[str, ...] = ("judgekit.toml", "pyproject.toml")
"""The project configuration files looked for in each folder, the winner first."""

_TOOL_TABLE: tuple[str, ...] = ("tool", "judgekit")


class JudgeSettings(BaseModel):
    """The judge layer's settings (the same names as a run configuration's ``judge:`` mapping).

    Attributes:
        model: litellm model of the judge; none: no judge layer.
        api_base: OpenAI-compatible base URL.
        rubric: Built-in rubric id or rubric file.
        temperature: Sampling temperature (>= 0).
        samples: Samples per criterion (1 to 99).
        structured_output: ``auto``, ``json_schema`` or ``off``.
        max_cost: Judge budget in US dollars (>= 0).
        cache: ``record``, ``replay`` or ``off`` (with a cassette).
        cassette: Judge cassette (JSONL) to record to or replay from.
        timeout: Seconds one judge attempt may take (> 0, at most :data:`JUDGE_TIMEOUT_MAX_S`); a transport
            setting, not part of the judge's fingerprint.
        retries: Retries after a judge request's first attempt (0 to :data:`JUDGE_RETRIES_MAX`).
        backoff: First backoff ceiling in seconds (> 0, at most :data:`JUDGE_BACKOFF_MAX_S`), doubled
            on each retry.
        input_cost_per_token: The judge's price in US dollars per prompt token (>= 0), for a model litellm
            has no price for (a self-hosted or custom name); with ``output_cost_per_token`` it replaces
            litellm's price. Not part of the judge's fingerprint: a price never changes a verdict.
        output_cost_per_token: The price per completion token (>= 0); give both or neither.
        transport: ``auto`` (judgekit's pooled HTTP client for OpenAI-compatible and Anthropic Messages
            calls, ``litellm.acompletion`` for the rest) or ``litellm`` (every call through litellm); a
            transport setting, not part of the judge's fingerprint.
        prompt_cache: ``auto`` (Anthropic prompt-cache breakpoints on the shared prefixes of judge
            prompts) or ``off`` (none); not part of the judge's fingerprint (the judge reads the same text).
        accepted_models: Names a reply's ``model`` may carry besides the requested model and its dated
            versions (:func:`judgekit.judges.client.model_matches`); a list of at most
            ``ACCEPTED_MODELS_MAX`` names. Not part of the judge's fingerprint: it decides whether a reply
            is believed to come from the configured judge, never what the judge says.
        jury: A jury file (YAML or JSON, :mod:`judgekit.judges.jury`): several judges on each criterion
            with a declared aggregation; the jury's fingerprint names its members and the aggregation.
        canary: Drift canaries re-asked at the start of each ``judgekit grade`` run (0 to 10000; 0 or
            unset: none): a seeded choice from the canary set kept with the judge's latest calibration
            record, re-asked without the cassette and tested for drift (docs/methods/drift-canaries.md).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = Field(default=None, min_length=1)
    api_base: str | None = Field(default=None, min_length=1)
    rubric: str | None = Field(default=None, min_length=1)
    temperature: float | None = Field(default=None, ge=0.0)
    samples: int | None = Field(default=None, ge=1, le=99)
    structured_output: Literal["auto", "json_schema", "off"] | None = None
    max_cost: float | None = Field(default=None, ge=0.0)
    input_cost_per_token: float | None = Field(default=None, ge=0.0)
    output_cost_per_token: float | None = Field(default=None, ge=0.0)
    cache: Literal["record", "replay", "off"] | None = None
    cassette: Path | None = None
    timeout: float | None = Field(None, gt=0, le=JUDGE_TIMEOUT_MAX_S, strict=True, allow_inf_nan=False)
    retries: int | None = Field(None, ge=0, le=JUDGE_RETRIES_MAX, strict=True)
    backoff: float | None = Field(None, gt=0, le=JUDGE_BACKOFF_MAX_S, strict=True, allow_inf_nan=False)
    transport: Literal["auto", "litellm"] | None = None
    prompt_cache: Literal["auto", "off"] | None = None
    accepted_models: list[str] | None = None
    jury: Path | None = None
    canary: int | None = Field(None, ge=0, le=10000, strict=True)


class ProjectSettings(BaseModel):
    """The settings of a project configuration (``[tool.judgekit]`` or ``judgekit.toml``).

    Attributes:
        cases: Golden-set folder.
        records: Calibration records folder.
        policy: Trust policy file (YAML or JSON) for ``calibrate``.
        concurrency: Trials graded at once (1 to 1024).
        untrusted: What an uncalibrated judge's verdict may do: ``withhold``, ``count``, ``fail_only``,
            ``advisory``.
        unlabelled_criteria: What a judge's verdict on a criterion text its calibration never labelled
            may do: ``count`` (it keeps the judge's trust; reports count it) or ``withhold`` (it is
            untrusted, so ``untrusted`` decides what it does).
        ray: The Ray cluster ``judgekit grade`` computes the deterministic layers on (``--ray``): ``auto``,
            ``HOST:PORT``, ``ray://HOST:PORT`` or ``local``; unset: in process.
        processes: Processes reading each results file of ``judgekit report`` and ``compare``, by byte
            ranges (``--processes``; 0 to 64): 1 one process, 0 one per CPU; unset: chosen by the file's
            size (:func:`judgekit.reports.run_parts.processes_for`).
        judge: The judge layer (a ``[tool.judgekit.judge]`` table).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    cases: Path | None = None
    records: Path | None = None
    policy: Path | None = None
    concurrency: int | None = Field(default=None, ge=1, le=1024)
    untrusted: Literal["withhold", "count", "fail_only", "advisory"] | None = None
    unlabelled_criteria: Literal["count", "withhold"] | None = None
    ray: str | None = Field(default=None, min_length=1, strict=True)
    processes: int | None = Field(default=None, ge=0, le=64)
    judge: JudgeSettings = Field(default_factory=JudgeSettings)


_PATH_SETTINGS = frozenset({"cases", "records", "policy", "judge.cassette", "judge.jury"})

DEFAULTS: dict[str, Any] = {
    "cases": None,
    "records": Path("calibration/records"),
    "policy": None,
    "concurrency": 8,
    "untrusted": "withhold",
    "unlabelled_criteria": "count",
    "ray": None,
    "processes": None,
    "judge.model": None,
    "judge.api_base": None,
    "judge.rubric": "honest-reporting",
    "judge.temperature": None,
    "judge.samples": None,
    "judge.structured_output": None,
    "judge.max_cost": None,
    "judge.input_cost_per_token": None,
    "judge.output_cost_per_token": None,
    "judge.cache": None,
    "judge.cassette": None,
    "judge.timeout": None,
    "judge.retries": None,
    "judge.backoff": None,
    "judge.transport": None,
    "judge.prompt_cache": None,
    "judge.accepted_models": None,
    "judge.jury": None,
    "judge.canary": None,
}
"""Every setting (dotted name) and its built-in default (``None``: unset, the command decides)."""

ENV_VARS: dict[str, str] = {
    "judge.model": "JUDGEKIT_JUDGE_MODEL",
    "judge.api_base": "JUDGEKIT_JUDGE_API_BASE",
    "records": "JUDGEKIT_RECORDS",
    "judge.timeout": "JUDGEKIT_JUDGE_TIMEOUT",
    "judge.retries": "JUDGEKIT_JUDGE_RETRIES",
    "judge.backoff": "JUDGEKIT_JUDGE_BACKOFF",
}
"""The settings an environment variable can give, and the variable."""

FLAGS: dict[str, str] = {
    "cases": "--cases",
    "records": "--records",
    "policy": "--policy",
    "concurrency": "--concurrency",
    "untrusted": "--untrusted",
    "unlabelled_criteria": "--unlabelled-criteria",
    "ray": "--ray",
    "processes": "--processes",
    "judge.model": "--judge-model",
    "judge.api_base": "--judge-api-base",
    "judge.rubric": "--rubric",
    "judge.max_cost": "--max-cost",
    "judge.cache": "--cache-mode",
    "judge.cassette": "--cassette",
    "judge.timeout": "--judge-timeout",
    "judge.retries": "--judge-retries",
    "judge.backoff": "--judge-backoff",
    "judge.jury": "--jury",
    "judge.canary": "--canary",
}
"""The command-line flag of each setting that has one."""


# --------------------------------------------------------------------------- finding and reading the file


def _mentions_tool_table(text: str) -> bool:
    return re.search(r"^\s*(\[\s*tool\s*\.\s*judgekit\b|tool\s*\.\s*judgekit\s*[.=])", text, re.M) is not None


def find_project_config(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The project configuration file that applies in ``start`` (default: the working directory).

    Walks up from ``start``: in each folder ``judgekit.toml`` wins over a ``pyproject.toml`` with a
    ``[tool.judgekit]`` table; the walk stops after a folder holding ``.git`` or ``.hg``.

    Args:
        start: The folder to start from, as text or a path object.

    Returns:
        The file, or ``None`` when no folder up to the repository root (or the file system root) has one.
    """
    start = Path(start) if start is not None else None
    here = (start if start is not None else Path.cwd()).resolve()
    for folder in (here, *here.parents):
        own = folder / "judgekit.toml"
        if own.is_file():
            return own
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            try:
                from judgekit.io.documents import read_regular_text

                text = read_regular_text(pyproject, "pyproject.toml", encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            if _mentions_tool_table(text):
                return pyproject
        if (folder / ".git").exists() or (folder / ".hg").exists():
            return None
    return None


_BARE_OR_QUOTED = r'(?:[A-Za-z0-9_-]+|"[^"\n]*"|\'[^\'\n]*\')'
_DOTTED = rf"{_BARE_OR_QUOTED}(?:\s*\.\s*{_BARE_OR_QUOTED})*"
_HEADER_RE = re.compile(rf"^\s*\[\[?\s*({_DOTTED})\s*\]\]?")
_KEY_RE = re.compile(rf"^\s*({_DOTTED})\s*=")
_PART_RE = re.compile(_BARE_OR_QUOTED)


def _parts(dotted: str) -> tuple[str, ...]:
    return tuple(p[1:-1] if p[0] in "\"'" else p for p in _PART_RE.findall(dotted))


def toml_key_lines(text: str) -> dict[tuple[str | int, ...], int]:
    """The 1-based line of every table header and ``key =`` line of a TOML text (by scanning it).

    Keys are full paths (``("tool", "judgekit", "judge", "model")``); the first occurrence wins. Lines
    inside multi-line strings are skipped; keys inside an inline table are not listed (their table's key
    is). This is a locator for messages, not a parser: ``tomllib`` has already accepted the text.
    """
    lines: dict[tuple[str | int, ...], int] = {}
    table: tuple[str, ...] = ()
    in_string: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if in_string is not None:
            if line.count(in_string) % 2 == 1:
                in_string = None
            continue
        header = _HEADER_RE.match(line)
        if header is not None:
            table = _parts(header.group(1))
            for depth in range(1, len(table) + 1):
                lines.setdefault(table[:depth], number)
            continue
        key = _KEY_RE.match(line)
        if key is not None:
            path = table + _parts(key.group(1))
            for depth in range(len(table) + 1, len(path) + 1):
                lines.setdefault(path[:depth], number)
        for quote in ('"""', "'''"):
            if line.count(quote) % 2 == 1:
                in_string = quote
                break
    return lines


@dataclass(frozen=True)
class ProjectConfig:
    """A validated project configuration file.

    Attributes:
        path: The file (``pyproject.toml`` or ``judgekit.toml``).
        settings: Its settings, relative paths already made relative to the file's folder.
        lines: The line of each setting given in the file (dotted names: ``judge.model``).
    """

    path: Path
    settings: ProjectSettings
    lines: dict[str, int] = field(default_factory=dict)

    def line_of(self, name: str) -> int:
        """The line of a setting, or of its nearest located parent (a key in an inline table)."""
        parts = name.split(".")
        while parts:
            line = self.lines.get(".".join(parts))
            if line is not None:
                return line
            parts.pop()
        return self.lines.get("", 1)

    @property
    def table(self) -> str:
        """Where the settings live in the file: ``[tool.judgekit]`` or the top level."""
        return "[tool.judgekit]" if self.path.name == "pyproject.toml" else "top level"

    def given(self) -> dict[str, Any]:
        """The settings the file gives (dotted names), relative paths resolved against its folder."""
        data = self.settings.model_dump(exclude_unset=True, exclude={"judge"})
        data.update({f"judge.{k}": v for k, v in self.settings.judge.model_dump(exclude_unset=True).items()})
        base = self.path.parent
        rubric = data.get("judge.rubric")
        if isinstance(rubric, str) and Path(rubric).suffix in (".yaml", ".yml"):
            data["judge.rubric"] = str(base / rubric)  # a rubric file, not a built-in rubric id
        return {
            name: (base / value if name in _PATH_SETTINGS and isinstance(value, Path) else value)
            for name, value in data.items()
        }


def _secret_hint(problem: Problem) -> Problem:
    """Say where credentials go when a configuration file tries to hold one (``api_key = ...``)."""
    from judgekit.secrets import is_secret_name

    if not is_secret_name(problem.field.rsplit(".", 1)[-1]):
        return problem
    name = problem.field.rsplit(".", 1)[-1]
    message = (
        f"unknown field '{name}': credentials never go in a configuration file; set the provider's "
        "environment variable (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...)"
    )
    return Problem(problem.file, problem.line, problem.field, message)


def load_project_config(path: str | os.PathLike[str]) -> ProjectConfig:
    """Read and validate a project configuration file.

    A ``pyproject.toml`` holds the settings in its ``[tool.judgekit]`` table (none: no settings); any other
    file (``judgekit.toml``) at its top level.

    Args:
        path: The file, as text or a path object.

    Raises:
        JudgekitError: When the file cannot be read or is not TOML (``file:line: malformed TOML: ...``),
            the table is not a table, or a setting is unknown or invalid (``file:line: field: message``,
            one line each); exit code 2.
    """
    path = Path(path)
    from judgekit.cases import problems_from_validation
    from judgekit.io.documents import Document, decode_utf8, load_toml_bounded

    try:
        from judgekit.io.documents import read_regular

        raw = read_regular(path, "settings file")
    except FileNotFoundError:
        raise JudgekitError(f"{path}: configuration file not found", exit_code=2) from None
    except OSError as exc:
        raise JudgekitError(f"{path}: cannot read the configuration: {exc.strerror}", exit_code=2) from None
    try:
        text = decode_utf8(raw, path)
    except LocatedError as exc:
        raise LocatedError(exc.problem, exit_code=2) from None
    data: Any = load_toml_bounded(text, source=path)
    prefix: tuple[str, ...] = _TOOL_TABLE if path.name == "pyproject.toml" else ()
    for part in prefix:
        data = data.get(part, {}) if isinstance(data, dict) else data
    all_lines = toml_key_lines(text)
    if not isinstance(data, dict):
        raise LocatedError(
            Problem(path, all_lines.get(prefix), ".".join(prefix), "must be a table of settings"), exit_code=2
        )
    doc = Document(path=path, data=data, base_line=all_lines.get(prefix, 1), lines=all_lines)
    try:
        settings = ProjectSettings.model_validate(data)
    except ValidationError as exc:
        problems = sorted(
            (_secret_hint(p) for p in problems_from_validation(exc, doc, ProjectSettings, prefix)),
            key=lambda p: (p.line or 0, p.field),
        )
        raise ProblemsError(problems, exit_code=2) from None
    named = {
        ".".join(str(p) for p in key[len(prefix) :]): line
        for key, line in all_lines.items()
        if key[: len(prefix)] == prefix
    }
    return ProjectConfig(path=path, settings=settings, lines=named)


# --------------------------------------------------------------------------- resolving


@dataclass(frozen=True)
class Setting:
    """One effective setting and where it came from.

    Attributes:
        name: Dotted name (``cases``, ``judge.model``).
        value: The value in force (``None``: unset).
        source: ``flag --judge-model``, ``env JUDGEKIT_JUDGE_MODEL``, ``FILE:LINE`` or ``default``.
    """

    name: str
    value: Any
    source: str


@dataclass(frozen=True)
class EffectiveSettings:
    """Every setting in force, with its source.

    Attributes:
        settings: Each setting by dotted name, in :data:`DEFAULTS` order.
        project: The project configuration that was read, if any.
        run_config: The run configuration (``grade --config``) as read, ``{}`` when none.
        run_config_path: The run configuration's file, if any.
    """

    settings: dict[str, Setting]
    project: ProjectConfig | None = None
    run_config: dict[str, Any] = field(default_factory=dict)
    run_config_path: Path | None = None

    def value(self, name: str) -> Any:
        """The value of a setting (``None``: unset)."""
        return self.settings[name].value

    def path(self, name: str) -> Path | None:
        """The value of a path setting as a :class:`~pathlib.Path` (``None``: unset)."""
        value = self.settings[name].value
        return Path(value) if value is not None else None

    def source(self, name: str) -> str:
        """Where a setting's value came from."""
        return self.settings[name].source

    def to_json(self) -> dict[str, Any]:
        """The settings as JSON-ready data (paths as strings); secrets are not removed here."""
        return {
            "schema_version": 1,
            "kind": "configuration",
            "project_config": str(self.project.path) if self.project is not None else None,
            "run_config": str(self.run_config_path) if self.run_config_path is not None else None,
            "settings": {
                s.name: {"value": str(s.value) if isinstance(s.value, Path) else s.value, "source": s.source}
                for s in self.settings.values()
            },
        }


_TRANSPORT_RULES: dict[str, tuple[str, float, str]] = {
    "judge.timeout": ("seconds", JUDGE_TIMEOUT_MAX_S, "JUDGE_TIMEOUT_MAX_S"),
    "judge.retries": ("retries", JUDGE_RETRIES_MAX, "JUDGE_RETRIES_MAX"),
    "judge.backoff": ("seconds", JUDGE_BACKOFF_MAX_S, "JUDGE_BACKOFF_MAX_S"),
}
"""The judge transport settings: what the number counts, its largest value and that limit's name."""

_JUDGE_CHOICES: dict[str, tuple[str, ...]] = {
    "judge.transport": ("auto", "litellm"),
    "judge.prompt_cache": ("auto", "off"),
}
"""The values of the judge settings that name a choice (``judge.transport``, ``judge.prompt_cache``)."""


def check_transport(setting: Setting) -> Setting:
    """A judge transport setting (``judge.timeout``, ``judge.retries``, ``judge.backoff``) checked and typed.

    Environment variables give text, a run configuration any YAML value and a flag a number, so each layer
    is checked here in one way: ``judge.timeout`` and ``judge.backoff`` are finite seconds greater than 0,
    ``judge.retries`` a whole number from 0, each at most its limit.

    Args:
        setting: The setting in force (an unset one, ``None``, is returned as it is).

    Returns:
        The setting with its value as a number (``float`` seconds, ``int`` retries).

    Raises:
        JudgekitError: When the value is not such a number, naming where it was given (the flag, the
            environment variable or ``file:line``) and what is allowed; exit code 2.
    """
    if setting.name == "judge.accepted_models":
        return _check_accepted_models(setting)
    if setting.name == "judge.canary":
        return _check_canary(setting)
    choices = _JUDGE_CHOICES.get(setting.name)
    if choices is not None and setting.value is not None:
        if isinstance(setting.value, str) and setting.value in choices:
            return setting
        where = setting.source.removeprefix("flag ").removeprefix("env ")
        where = where if setting.source.startswith(("flag ", "env ")) else f"{where}: {setting.name}"
        hint = ' (quote it: "off"; YAML reads a bare off as false)' if setting.value is False else ""
        raise JudgekitError(
            f"{where}: must be {' or '.join(choices)}; got {setting.value!r}{hint}", exit_code=2
        )
    if setting.name not in _TRANSPORT_RULES or setting.value is None:
        return setting
    unit, largest, limit = _TRANSPORT_RULES[setting.name]
    raw = setting.value
    value: float | int | None = None
    if isinstance(raw, str):
        try:
            value = int(raw.strip()) if unit == "retries" else float(raw.strip())
        except ValueError:
            value = None
    elif isinstance(raw, int | float) and not isinstance(raw, bool):
        value = raw if unit == "seconds" or isinstance(raw, int) else None  # 3.0 retries: not a count
    if unit == "retries":
        good = isinstance(value, int) and 0 <= value <= largest
        wanted = f"a whole number from 0 to {int(largest)} (limit {limit})"
    else:
        good = value is not None and 0 < value <= largest  # NaN fails both comparisons
        wanted = f"a number of seconds greater than 0 and at most {largest:g} (limit {limit})"
    if not good or value is None:
        where = setting.source.removeprefix("flag ").removeprefix("env ")
        where = where if setting.source.startswith(("flag ", "env ")) else f"{where}: {setting.name}"
        raise JudgekitError(f"{where}: must be {wanted}; got {raw!r}", exit_code=2)
    return Setting(setting.name, float(value) if unit == "seconds" else int(value), setting.source)


def _check_canary(setting: Setting) -> Setting:
    """``judge.canary`` checked: a whole number of drift canaries from 0 to 10000 (``None``: unset).

    Raises:
        JudgekitError: Naming where it was given and what is allowed; exit code 2.
    """
    value = setting.value
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 10000):
        return setting
    where = setting.source.removeprefix("flag ").removeprefix("env ")
    where = where if setting.source.startswith(("flag ", "env ")) else f"{where}: {setting.name}"
    raise JudgekitError(f"{where}: must be a whole number from 0 to 10000; got {value!r}", exit_code=2)


def _check_accepted_models(setting: Setting) -> Setting:
    """``judge.accepted_models`` checked: a list of model names, each non-empty text, at most the limit.

    Raises:
        JudgekitError: Naming where it was given and what is allowed; exit code 2.
    """
    value = setting.value
    if value is None:
        return setting
    names = list(value) if isinstance(value, list | tuple) else None
    good = (
        names is not None
        and len(names) <= ACCEPTED_MODELS_MAX
        and all(isinstance(n, str) and n.strip() and len(n) <= 200 for n in names)
    )
    if not good or names is None:
        where = setting.source if ":" in setting.source else setting.source.removeprefix("flag ")
        raise JudgekitError(
            f"{where}: judge.accepted_models: must be a list of model names (non-empty text of at most 200 "
            f"characters, at most {ACCEPTED_MODELS_MAX} names, limit ACCEPTED_MODELS_MAX), as a reply's "
            f"'model' field spells them; got {value!r:.200}",
            exit_code=2,
        )
    return Setting(setting.name, tuple(str(n) for n in names), setting.source)


def _run_config_layer(path: Path | None) -> tuple[dict[str, Any], dict[str, tuple[Any, str]]]:
    """The run configuration as read, and its judge settings with their ``file:line`` sources."""
    from judgekit.io.documents import read_document
    from judgekit.judge_setup import load_run_config

    data = load_run_config(path)
    if path is None or not data:
        return data, {}
    doc = read_document(path)
    judge = data.get("judge") or {}
    layer = {
        f"judge.{key}": (value, f"{path}:{doc.line_of(('judge', key))}")
        for key, value in judge.items()
        if value is not None
    }
    return data, layer


def resolve_settings(
    *,
    flags: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    project: ProjectConfig | Literal["find"] | None = "find",
    run_config: str | os.PathLike[str] | None = None,
) -> EffectiveSettings:
    """Every setting in force: flag > environment > file (run configuration, then project) > default.

    Args:
        flags: Values given on the command line, by dotted name (``None`` values: not given).
        environ: The environment to read :data:`ENV_VARS` from (``None``: the process environment).
        project: The project configuration; ``"find"`` looks for it from the working directory
            (:func:`find_project_config`), ``None`` uses none.
        run_config: The run configuration file of ``grade --config``, if any, as text or a path object.

    Raises:
        JudgekitError: When the project or run configuration is invalid (exit code 2).
    """
    run_config = Path(run_config) if run_config is not None else None
    flags = flags or {}
    unknown = sorted(set(flags) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"unknown setting(s) {', '.join(unknown)}")
    env = os.environ if environ is None else environ
    if project == "find":
        found = find_project_config()
        project = load_project_config(found) if found is not None else None
    given = project.given() if project is not None else {}
    run_data, run_layer = _run_config_layer(run_config)
    out: dict[str, Setting] = {}
    for name, default in DEFAULTS.items():
        var = ENV_VARS.get(name)
        if flags.get(name) is not None:
            setting = Setting(name, flags[name], f"flag {FLAGS.get(name, name)}")
        elif var is not None and env.get(var):
            value: Any = env[var]
            setting = Setting(name, Path(value) if name in _PATH_SETTINGS else value, f"env {var}")
        elif name in run_layer:
            setting = Setting(name, run_layer[name][0], run_layer[name][1])
        elif project is not None and name in given:
            setting = Setting(name, given[name], f"{project.path}:{project.line_of(name)}")
        else:
            setting = Setting(name, default, "default")
        out[name] = check_transport(setting)
    return EffectiveSettings(out, project=project, run_config=run_data, run_config_path=run_config)


def setting(name: str, flag_value: Any = None) -> Any:
    """One setting in force for a command: its flag's value, else the environment, the project, the default.

    Args:
        name: Dotted setting name (a key of :data:`DEFAULTS`).
        flag_value: The value given on the command line (``None``: not given).

    Raises:
        JudgekitError: When the project configuration is invalid (exit code 2).
    """
    return resolve_settings(flags={name: flag_value}).value(name)


def _given_where(source: str) -> str:
    """Where the records setting was given, for a message.

    Returns:
        ``--records``, ``JUDGEKIT_RECORDS`` or ``FILE:LINE: records``.
    """
    if source.startswith("flag "):
        return source.removeprefix("flag ")
    if source.startswith("env "):
        return source.removeprefix("env ")
    return f"{source}: records"


def records_folder(
    flag_value: str | os.PathLike[str] | None = None, *, effective: EffectiveSettings | None = None
) -> Path:
    """The calibration records folder in force, checked: a folder that was named must exist.

    The folder comes from ``--records``, else ``JUDGEKIT_RECORDS``, else the project configuration, else the
    default ``calibration/records``. The default may be absent (no records yet: no judge is trusted, and
    ``calibrate`` creates it); a folder named anywhere must exist, so that a misspelt name is reported
    instead of silently meaning "no calibration record".

    Args:
        flag_value: The ``--records`` value given on the command line, as text or a path object (``None``:
            not given). Ignored when ``effective`` is given.
        effective: Settings already resolved by the command (``grade``); ``None`` resolves them here.

    Returns:
        The folder (it may not exist only when it is the default).

    Raises:
        JudgekitError: When a named folder does not exist or is not a folder, naming where it was given
            (the flag, the environment variable or the configuration file and line); exit code 2. Also
            when the project configuration is invalid (exit code 2).
    """
    if effective is None:
        given = Path(flag_value) if flag_value is not None else None
        effective = resolve_settings(flags={"records": given})
    records = effective.settings["records"]
    folder = Path(records.value)
    if records.source == "default" or folder.is_dir():
        return folder
    what = "not a folder" if folder.exists() else "no such folder"
    raise JudgekitError(
        f"{_given_where(records.source)} {folder}: {what} (the default {DEFAULTS['records']} may be absent; "
        "a folder you name must exist)",
        exit_code=2,
    )
