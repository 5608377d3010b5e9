"""Setting up the judge layer from a run configuration.

One place for ``judgekit grade``, ``judgekit judge probe-bias`` and the pytest plugin.

A run configuration is a YAML or JSON file (``--config`` of ``judgekit grade``, ``--judgekit-config`` of the
pytest plugin)::

    judge:
      model: openai/gpt-4o-mini      # litellm model; required for a judge layer
      api_base: http://127.0.0.1:8000/v1
      rubric: honest-reporting       # a built-in rubric id or a rubric file
      temperature: 0.0
      samples: 1
      structured_output: "off"       # auto, json_schema or off
      max_cost: 5.0                  # US dollars
      input_cost_per_token: 0.0000005   # US dollars per prompt token, for a model litellm cannot price
      output_cost_per_token: 0.0000015  # per completion token (give both or neither)
      cache: replay                  # record, replay or off (with a cassette)
      timeout: 60                    # seconds one judge attempt may take
      retries: 4                     # retries on 408, 409, 429, 5xx, 529, connection errors, timeouts
      backoff: 1.0                   # first backoff ceiling in seconds, doubled per retry
      transport: auto                # auto (lean HTTP for OpenAI/Anthropic) or litellm
      prompt_cache: auto             # auto (Anthropic cache_control breakpoints) or "off"
      accepted_models: [gpt-4o-2024-08-06]  # reply models accepted besides the requested one
      jury: jury.yaml                # several judges per criterion (judgekit.judges.jury); model may
                                     # then be left out: it is the jury's first member
    record:                          # free-form values recorded with the run
      ticket: EVAL-123

Every setting is part of the judge's fingerprint (except ``api_base``, ``max_cost``, the prices, ``cache``
and the transport settings ``timeout``, ``retries``, ``backoff``, ``transport``, ``prompt_cache`` and
``accepted_models``):
change one and the judge is uncalibrated again. Transport settings never change a verdict, so changing a
timeout never costs the judge its trust. The judge's trust comes from calibration records through
:class:`~judgekit.calibration.trust.TrustBook`, the one trust function.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgekit.errors import JudgekitError, unknown_names

if TYPE_CHECKING:
    from judgekit.calibration.trust import UnlabelledPolicy
    from judgekit.graders.rubric import CascadeRouting, RubricGrader, TrustLookup
    from judgekit.judges.client import ClientSettings, JudgeParams
    from judgekit.judges.jury import Jury
    from judgekit.judges.rubric import Rubric

__all__ = ["JUDGE_SETTINGS", "JudgeConfig", "build_rubric_grader", "load_rubric_setting", "load_run_config"]

JUDGE_SETTINGS: tuple[str, ...] = (
    "model",
    "api_base",
    "rubric",
    "temperature",
    "samples",
    "structured_output",
    "max_cost",
    "input_cost_per_token",
    "output_cost_per_token",
    "cache",
    "timeout",
    "retries",
    "backoff",
    "transport",
    "prompt_cache",
    "accepted_models",
    "jury",
    "canary",
)
"""The settings a run configuration's ``judge`` mapping may hold (``canary`` is the run's, not the judge's:
how many drift canaries ``judgekit grade`` re-asks first; :meth:`JudgeConfig.from_settings` leaves it out)."""


def load_run_config(path: str | os.PathLike[str] | None) -> dict[str, Any]:
    """Read a run configuration (``{}`` when ``path`` is ``None`` or the file is empty).

    Args:
        path: The file, as text or a path object.

    Raises:
        JudgekitError: When the file cannot be read or parsed (located), is not a mapping, or names an
            unknown setting (the allowed ones are listed).
    """
    path = Path(path) if path is not None else None
    if path is None:
        return {}
    from judgekit.io.documents import read_document

    doc = read_document(path)
    data = doc.data
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise JudgekitError(f"{path}: a run configuration must be a mapping of settings", exit_code=2)
    unknown = sorted(set(data) - {"judge", "record"})
    if unknown:
        raise JudgekitError(
            f"{path}: unknown setting(s) {', '.join(unknown)}; allowed: judge ({', '.join(JUDGE_SETTINGS)}), "
            "record (free-form values recorded with the run)",
            exit_code=2,
        )
    judge = data.get("judge", {})
    if not isinstance(judge, dict):
        raise JudgekitError(f"{path}: 'judge' must be a mapping", exit_code=2)
    bad = sorted(set(judge) - set(JUDGE_SETTINGS))
    if bad:
        raise JudgekitError(
            f"{path}: unknown judge setting(s) {unknown_names(bad, JUDGE_SETTINGS, quote=True)}; "
            f"allowed: {', '.join(sorted(JUDGE_SETTINGS))}",
            exit_code=2,
        )
    return data


@dataclass(frozen=True, kw_only=True)
class JudgeConfig:
    """One judge configuration: everything the judge layer is built from, checked when it is made.

    Keyword-only and frozen. The sampling settings (``model``, ``temperature``, ``samples``,
    ``structured_output``) and the rubric make the judge's fingerprint; every other field says how calls
    are sent, priced, cached or trusted and never changes the fingerprint (so changing a timeout never
    costs a judge its trust). :func:`build_rubric_grader` turns a configuration into the judge layer.

    Attributes:
        model: The litellm model (``openai/gpt-4o-mini``); required, not empty.
        rubric: A built-in rubric id, or a rubric file (``.yaml``/``.yml``); loaded when the judge is built.
        cassette: The judge cassette to record to or replay from, as text or a path object (``None``: no
            cassette).
        mode: The cassette's cache mode: ``record``, ``replay`` or ``off`` (``None``: ``record`` with a
            cassette, else ``off``). A mode other than ``off`` needs a cassette.
        api_base: An OpenAI-compatible base URL (``None``: the provider's own).
        max_cost: Judge budget in US dollars, >= 0 (``None``: no budget).
        temperature: Sampling temperature, >= 0 (``None``: the default, 0.0).
        samples: Samples per criterion, 1 to 99 (``None``: the default, 1).
        structured_output: ``auto``, ``json_schema`` or ``off`` (``None``: the default, ``auto``).
        concurrency: Judge requests in flight at once (values below 1 count as 1; at most 1024).
        records: Calibration records deciding trust, read into a
            :class:`~judgekit.calibration.trust.TrustBook` when the judge is built (``None`` with no
            ``trust``: every verdict untrusted), as text or a path object.
        trust: A trust lookup already built (a ``TrustBook`` the caller also consults), used instead of
            reading ``records`` again (``None``: read ``records``).
        unlabelled_criteria: What a verdict on a criterion text the calibration never labelled may do,
            when ``records`` are read: ``count`` (the default: it keeps the judge's trust, and reports
            count it) or ``withhold`` (it is untrusted); a ``trust`` given keeps its own.
        timeout: Seconds one judge attempt may take, > 0 (``None``: the client's default, 60).
        retries: Retries after a request's first attempt, >= 0 (``None``: the client's default, 4).
        backoff: First backoff ceiling in seconds, >= 0 (``None``: the client's default, 1.0).
        cascade: Route criteria through a judge cascade whose first stage is this judge (``None``: none).
        input_cost_per_token: Price in US dollars per prompt token, replacing litellm's (``None``:
            litellm's price, or unknown for a model it does not price). Give both prices or neither.
        output_cost_per_token: Price per completion token (``None``: as for the input price).
        transport: ``auto`` or ``litellm`` (``None``: the client's default, ``auto``).
        prompt_cache: ``auto`` or ``off`` (``None``: the client's default, ``auto``).
        accepted_models: Reply ``model`` names accepted besides the requested model and its dated
            versions (``None``: none).
        jury: Judge each criterion by a jury: a :class:`~judgekit.judges.jury.Jury`, or its file as text or
            a path object (``None``: one judge). ``model`` must be the jury's first member's model; every
            member shares the other settings, and ``max_cost`` is split equally among the members. Part of
            the fingerprint (the jury's members and aggregation).

    Raises:
        JudgekitError: When a field has a bad value (exit code 2): the message names the setting, the value
            and what to do.
    """

    model: str
    rubric: str = "honest-reporting"
    cassette: str | os.PathLike[str] | None = None
    mode: str | None = None
    api_base: str | None = None
    max_cost: float | None = None
    temperature: float | None = None
    samples: int | None = None
    structured_output: str | None = None
    concurrency: int = 8
    records: str | os.PathLike[str] | None = None
    trust: TrustLookup | None = None
    unlabelled_criteria: UnlabelledPolicy = "count"
    timeout: float | None = None
    retries: int | None = None
    backoff: float | None = None
    cascade: CascadeRouting | None = None
    input_cost_per_token: float | None = None
    output_cost_per_token: float | None = None
    transport: str | None = None
    prompt_cache: str | None = None
    accepted_models: tuple[str, ...] | list[str] | None = None
    jury: Jury | str | os.PathLike[str] | None = None

    def __post_init__(self) -> None:
        from judgekit.calibration.trust import unlabelled_policy

        unlabelled_policy(self.unlabelled_criteria)
        jury = self.the_jury
        if jury is not None and self.cascade is not None:
            raise JudgekitError(
                "judge settings jury and cascade: a criterion is routed through a cascade or asked of a "
                "jury, not both; remove one",
                exit_code=2,
            )
        if jury is not None and jury.members[0].model != self.model:
            raise JudgekitError(
                f"judge setting jury: the jury's first member {jury.members[0].name} judges with "
                f"{jury.members[0].model}, but the judge model is {self.model}; give that model (or leave "
                "judge.model out)",
                exit_code=2,
            )
        self.cache_mode  # noqa: B018 - each property checks its fields and raises on a bad value
        self.judge_params  # noqa: B018
        self.client_settings  # noqa: B018

    @classmethod
    def from_settings(cls, judge: Mapping[str, Any], **fields: Any) -> JudgeConfig:
        """A configuration from a run configuration's ``judge`` mapping (the names of :data:`JUDGE_SETTINGS`).

        Args:
            judge: Settings by their run-configuration name (``cache`` is the cache mode); a missing or
                ``None`` value means the default.
            **fields: Fields given by the caller (``cassette``, ``records``, ``trust``, ``concurrency``...),
                taking precedence over ``judge``.

        Raises:
            JudgekitError: As :class:`JudgeConfig` does.
        """
        values = {("mode" if name == "cache" else name): judge.get(name) for name in JUDGE_SETTINGS}
        values = {name: value for name, value in values.items() if value is not None and name != "canary"}
        merged = {**values, **fields}
        if merged.get("model") is None and merged.get("jury") is not None:
            merged["jury"] = jury = _jury_of(merged["jury"])
            merged["model"] = jury.members[0].model  # the jury's first member is the judge in force
        return cls(**merged)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], **fields: Any) -> JudgeConfig:
        r"""A configuration from a run configuration file's ``judge`` mapping (``judgekit grade --config``).

        Args:
            path: The run configuration (YAML or JSON), as text or a path object.
            **fields: Fields given by the caller (``cassette``, ``records``, ``concurrency``...), taking
                precedence over the file; paths are used as given (relative to the working folder).

        Raises:
            JudgekitError: When the file cannot be read, names an unknown setting, has no ``judge``
                mapping with a model and none is given, or a value is bad (naming the setting).

        Examples:
            >>> import pathlib, tempfile
            >>> folder = pathlib.Path(tempfile.mkdtemp())
            >>> text = "judge:\n  model: openai/gpt-4o-mini\n  cache: replay\n"
            >>> _ = (folder / "judge.yaml").write_text(text)
            >>> judge = JudgeConfig.from_file(folder / "judge.yaml", cassette=folder / "judge.jsonl")
            >>> judge.model, judge.rubric, judge.cache_mode
            ('openai/gpt-4o-mini', 'honest-reporting', 'replay')
        """
        judge = load_run_config(path).get("judge") or {}
        if "model" not in judge and "model" not in fields:
            raise JudgekitError(
                f"{path}: no judge model: add 'judge: {{model: ...}}' to the file or pass model=...",
                exit_code=2,
            )
        return cls.from_settings(judge, **fields)

    @property
    def the_jury(self) -> Jury | None:
        """The jury in force, read from its file when ``jury`` names one (``None``: one judge).

        Raises:
            JudgekitError: When the file cannot be read; ProblemsError when it is not a valid jury.
        """
        return _jury_of(self.jury) if self.jury is not None else None

    @property
    def cache_mode(self) -> str:
        """The cache mode in force: ``record``, ``replay`` or ``off``."""
        mode = self.mode or ("record" if self.cassette is not None else "off")
        if mode not in ("record", "replay", "off"):
            raise JudgekitError(
                f"judge setting cache: must be record, replay or off (got {mode!r}); "
                "fix the configuration or the option",
                exit_code=2,
            )
        return mode

    @property
    def judge_params(self) -> JudgeParams:
        """The sampling parameters (part of the fingerprint).

        Raises:
            JudgekitError: When one is out of range (exit code 2, naming it).
        """
        from pydantic import ValidationError

        from judgekit.judges.client import JudgeParams

        params: dict[str, Any] = {"model": self.model}
        for name, value in (
            ("temperature", self.temperature),
            ("samples", self.samples),
            ("structured_output", self.structured_output),
        ):
            if value is not None:
                params[name] = value
        try:
            return JudgeParams(**params)
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            field = ".".join(str(p) for p in err["loc"])
            raise JudgekitError(
                f"judge setting {field}: {err['msg']} (got {err.get('input')!r}); "
                "fix the configuration or the option",
                exit_code=2,
            ) from None

    @property
    def client_settings(self) -> ClientSettings:
        """How calls are sent, priced and bounded (never part of the fingerprint).

        Raises:
            JudgekitError: When one price is given without the other, or a setting is out of range (exit
                code 2, naming it).
        """
        from pydantic import ValidationError

        from judgekit.judges.client import ClientSettings

        if (self.input_cost_per_token is None) != (self.output_cost_per_token is None):
            given, missing = (
                ("input_cost_per_token", "output_cost_per_token")
                if self.output_cost_per_token is None
                else ("output_cost_per_token", "input_cost_per_token")
            )
            raise JudgekitError(
                f"judge setting {given} is set but {missing} is not: give both prices (US dollars per "
                "token) or neither",
                exit_code=2,
            )
        accepted = self.accepted_models
        sending: dict[str, Any] = {
            name: value
            for name, value in (
                ("timeout", self.timeout),
                ("max_retries", self.retries),
                ("backoff_base", self.backoff),
                ("transport", self.transport),
                ("prompt_cache", self.prompt_cache),
                ("accepted_models", tuple(accepted) if isinstance(accepted, list | tuple) else accepted),
            )
            if value is not None
        }
        try:
            return ClientSettings(
                api_base=self.api_base,
                concurrency=max(1, self.concurrency),
                max_cost=self.max_cost,
                input_cost_per_token=self.input_cost_per_token,
                output_cost_per_token=self.output_cost_per_token,
                **sending,
            )
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            name = str(err["loc"][0]) if err["loc"] else "transport"
            name = {"max_retries": "retries", "backoff_base": "backoff"}.get(name, name)
            raise JudgekitError(
                f"judge setting {name}: {err['msg']} (got {err.get('input')!r}); "
                "fix the configuration or the option",
                exit_code=2,
            ) from None


def load_rubric_setting(rubric: str | os.PathLike[str]) -> Rubric:
    """The rubric a ``rubric`` setting names: a rubric file (``.yaml``/``.yml``) or a built-in rubric id.

    Raises:
        JudgekitError: When the file cannot be loaded or no built-in rubric has that id.
    """
    from judgekit.judges.rubric import load_builtin_rubric, load_rubric

    path = Path(rubric)
    return load_rubric(path) if path.suffix in (".yaml", ".yml") else load_builtin_rubric(str(rubric))


def _jury_of(jury: Jury | str | os.PathLike[str]) -> Jury:
    """A jury given as a jury or as its file (read)."""
    from judgekit.judges.jury import Jury, load_jury

    return jury if isinstance(jury, Jury) else load_jury(jury)


def build_rubric_grader(config: JudgeConfig) -> RubricGrader:
    """The judge layer: a rubric grader over a judge client, trusted through ``config.records``.

    With a jury, one grader per member is built (the first is the one returned, holding the others), and
    a budget (``max_cost``) is the jury's: each member's client gets an equal share, so the members together
    never spend more than the budget.

    Args:
        config: The judge configuration (checked when it was made).

    Raises:
        JudgekitError: When the rubric cannot be loaded.
    """
    from dataclasses import replace

    from judgekit.graders.rubric import JuryPanel, RubricGrader
    from judgekit.judges.cache import CacheMode, Cassette
    from judgekit.judges.client import JudgeClient

    rubric_obj = load_rubric_setting(config.rubric)
    jury = config.the_jury
    if jury is not None and config.max_cost is not None:  # the budget is the jury's: an equal share each
        config = replace(config, max_cost=config.max_cost / len(jury.members))
    client = JudgeClient(
        config.judge_params,
        config.client_settings,
        cassette=Cassette(Path(config.cassette)) if config.cassette is not None else None,
        mode=CacheMode(config.cache_mode),
    )
    trust = config.trust
    if trust is None and config.records is not None:
        from judgekit.calibration.trust import TrustBook

        trust = TrustBook(Path(config.records), unlabelled_criteria=config.unlabelled_criteria)
    panel = None
    if jury is not None:
        others = tuple(
            build_rubric_grader(replace(config, model=m.model, jury=None, trust=trust, cascade=None))
            for m in jury.members[1:]
        )
        panel = JuryPanel(jury=jury, others=others)
    return RubricGrader(rubric_obj, client, trust=trust, cascade=config.cascade, jury=panel)
