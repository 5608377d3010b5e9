"""The judge options and the judge's set-up, in one place for every command that grades with a judge.

The transport options (``--judge-timeout``, ``--judge-retries``, ``--judge-backoff``) are taken by every
command that calls a judge (``grade``, ``probe-bias``, ``check-references --judge``) with the same names,
help and meaning. None of them changes a verdict, so none enters the judge's fingerprint; their ranges are
checked by :func:`judgekit.settings.resolve_settings` (limits in ``docs/reference/limits.md``).

The grading options (``--judge-model``, ``--judge-api-base``, ``--rubric``, ``--cassette``, ``--cache-mode``,
``--max-cost``, ``--records``, ``--untrusted``, ``--require-trust``, ``--config``) are shared by ``grade``
and ``check-references``, and :func:`setup_judge` turns their values into a judge the same way for both:
settings resolved (flag > environment > file > default), the untrusted policy and the cache mode checked,
the calibration records read once, the rubric grader built and its overall trust said on standard error
(or refused under ``--require-trust``).

Only typer is imported at module level of the command modules; everything here imports inside the
functions so that ``judgekit --help`` stays fast.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judgekit.graders.contract import UntrustedPolicy
    from judgekit.graders.rubric import CascadeRouting, RubricGrader
    from judgekit.settings import EffectiveSettings
    from judgekit.verdict import TrustDecision

__all__ = [
    "JudgeFlags",
    "JudgeSetup",
    "cache_mode_option",
    "cassette_option",
    "config_option",
    "judge_api_base_option",
    "judge_backoff_option",
    "judge_model_option",
    "judge_retries_option",
    "judge_timeout_option",
    "max_cost_option",
    "records_option",
    "require_trust_option",
    "rubric_option",
    "setup_judge",
    "unlabelled_criteria_option",
    "untrusted_option",
]


def judge_timeout_option() -> Any:
    """``--judge-timeout``: seconds one judge attempt may take (``None``: the configured value, else 60)."""
    import typer

    return typer.Option(
        None,
        "--judge-timeout",
        help="Seconds one judge attempt may take (default: 60); a judge that does not answer in time is cut "
        "off and retried, then the criterion is an error verdict. Not part of the judge's fingerprint.",
    )


def judge_retries_option() -> Any:
    """``--judge-retries``: retries after the first attempt (``None``: the configured value, else 4)."""
    import typer

    return typer.Option(
        None,
        "--judge-retries",
        help="Retries of a judge request on HTTP 408, 409, 429, 500, 502, 503, 504, 529, connection errors "
        "and timeouts (default: 4; 0: none).",
    )


def judge_backoff_option() -> Any:
    """``--judge-backoff``: first backoff ceiling in seconds (``None``: the configured value, else 1.0)."""
    import typer

    return typer.Option(
        None,
        "--judge-backoff",
        help="First backoff ceiling in seconds, doubled on each retry, with jitter (default: 1.0); a "
        "Retry-After header is waited at least.",
    )


def judge_model_option() -> Any:
    """``--judge-model``: the judge layer's litellm model (``None``: the configured one, else no judge)."""
    import typer

    return typer.Option(
        None, "--judge-model", help="litellm model for the judge layer (openai/gpt-4o-mini); none: no judge."
    )


def judge_api_base_option() -> Any:
    """``--judge-api-base``: an OpenAI-compatible base URL (``None``: the configured one, else litellm's)."""
    import typer

    return typer.Option(None, "--judge-api-base", help="OpenAI-compatible base URL.")


def rubric_option() -> Any:
    """``--rubric``: a built-in rubric id or rubric file (``None``: the configured one, else the default)."""
    import typer

    return typer.Option(
        None, "--rubric", help="Built-in rubric id or rubric file (default: honest-reporting)."
    )


def cassette_option() -> Any:
    """``--cassette``: the judge cassette (JSONL) to record to or replay from (``None``: none)."""
    import typer

    return typer.Option(None, "--cassette", help="Judge cassette (JSONL) to record/replay.")


def cache_mode_option() -> Any:
    """``--cache-mode``: ``record``, ``replay`` or ``off`` (``None``: record with a cassette, else off)."""
    import typer

    return typer.Option(
        None, "--cache-mode", help="record (default with --cassette), replay (never call) or off."
    )


def max_cost_option() -> Any:
    """``--max-cost``: the judge budget in US dollars (``None``: the configured one, else no budget)."""
    import typer

    return typer.Option(None, "--max-cost", help="Judge budget in US dollars.")


def config_option() -> Any:
    """``--config``: a run configuration file, YAML or JSON (``None``: none; the project's still applies)."""
    import typer

    return typer.Option(None, "--config", help="Run configuration file (YAML/JSON).")


def untrusted_option() -> Any:
    """``--untrusted``: what an untrusted judge decides (``None``: the configured policy, else withhold)."""
    import typer

    return typer.Option(
        None,
        "--untrusted",
        help="What a verdict of an uncalibrated judge may do: withhold (default: it decides nothing; the "
        "case is insufficient_information on its account), count (opt in; every output counts such "
        "verdicts), fail_only, advisory.",
    )


def unlabelled_criteria_option() -> Any:
    """``--unlabelled-criteria``: what a verdict on a never-labelled text may do (``None``: configured)."""
    import typer

    return typer.Option(
        None,
        "--unlabelled-criteria",
        help="What a judge's verdict on a criterion text its calibration never labelled may do: count "
        "(default: it keeps the judge's trust; the trust reason says so and reports count it) or withhold "
        "(it is untrusted, so --untrusted decides what it does).",
    )


def records_option(
    purpose: str = "Calibration records deciding whether the judge (by its exact fingerprint) is trusted",
) -> Any:
    """``--records``: the calibration records (``None``: the configured folder, else calibration/records).

    Args:
        purpose: The help's first words: what the command reads or writes there; the help goes on with
            where the folder defaults to.

    Returns:
        A typer option for the command's signature.
    """
    import typer

    return typer.Option(
        None,
        "--records",
        help=f"{purpose} (default: the configured records, else calibration/records; a folder you name must "
        "exist).",
    )


def require_trust_option() -> Any:
    """``--require-trust``: refuse to grade with a judge that no passing calibration record trusts."""
    import typer

    return typer.Option(
        False,
        "--require-trust",
        help="Refuse to grade with a judge that no passing calibration record trusts.",
    )


@dataclass(frozen=True)
class JudgeFlags:
    """The judge options as given on the command line (``None``: not given; the settings decide).

    Attributes:
        model: ``--judge-model``.
        api_base: ``--judge-api-base``.
        rubric: ``--rubric``.
        cassette: ``--cassette``.
        cache_mode: ``--cache-mode``.
        max_cost: ``--max-cost``.
        timeout: ``--judge-timeout``.
        retries: ``--judge-retries``.
        backoff: ``--judge-backoff``.
        records: ``--records``.
        untrusted: ``--untrusted``.
        unlabelled_criteria: ``--unlabelled-criteria``.
        require_trust: ``--require-trust`` (refuse an untrusted judge).
        config: ``--config``, the run configuration file.
        cascade: ``--cascade``, a judge cascade file (``judgekit judge fit-cascade``) to route criteria
            through.
        jury: ``--jury``, a jury file (:mod:`judgekit.judges.jury`): several judges on each criterion.
    """

    model: str | None = None
    api_base: str | None = None
    rubric: str | None = None
    cassette: Path | None = None
    cache_mode: str | None = None
    max_cost: float | None = None
    timeout: float | None = None
    retries: int | None = None
    backoff: float | None = None
    records: Path | None = None
    untrusted: str | None = None
    unlabelled_criteria: str | None = None
    require_trust: bool = False
    config: Path | None = None
    cascade: Path | None = None
    jury: Path | None = None


@dataclass(frozen=True)
class JudgeSetup:
    """The judge a command grades with, and the settings it was built from.

    Attributes:
        effective: Every setting in force, with its source (:func:`judgekit.settings.resolve_settings`).
        records: The calibration records folder that decided the judge's trust (it may be absent only when
            it is the default: then no judge is trusted).
        untrusted: The untrusted-judge policy in force (``withhold``, ``count``, ``fail_only``,
            ``advisory``).
        model: The judge's litellm model; ``None``: no judge (``grader`` and ``trust`` are ``None`` too).
        api_base: The judge's base URL (``None``: litellm's default for the model).
        rubric: The rubric in force (a built-in id or a rubric file).
        max_cost: The judge budget in US dollars (``None``: no budget).
        mode: The cache mode: ``record``, ``replay`` or ``off``.
        cassette: The judge cassette, if any.
        concurrency: The ``concurrency`` setting in force (judge requests in flight at once).
        grader: The rubric grader, or ``None`` without a judge.
        trust: The judge's overall trust decision (no criterion named), or ``None`` without a judge.
    """

    effective: EffectiveSettings
    records: Path
    untrusted: UntrustedPolicy
    model: str | None
    api_base: str | None
    rubric: str
    max_cost: float | None
    mode: str
    cassette: Path | None
    concurrency: int
    grader: RubricGrader | None
    trust: TrustDecision | None


def _cascade_routing(path: Path, model: str, build: Callable[[str], RubricGrader]) -> CascadeRouting:
    """The cascade in ``path`` with a grader for each stage after the first (built by ``build``).

    Raises:
        JudgekitError: When the file is unusable, a stage has no model, or the first stage's model is not
            the judge model in force (exit code 2).
    """
    from judgekit.errors import JudgekitError
    from judgekit.graders.rubric import CascadeRouting
    from judgekit.judges.cascade import load_cascade

    cascade = load_cascade(path)
    missing = [s.name for s in cascade.stages if s.model is None]
    if missing:
        raise JudgekitError(
            f"{path}: stage(s) {', '.join(missing)} name no model; fit the cascade again with "
            "judgekit judge fit-cascade --stage RATER=MODEL",
            exit_code=2,
        )
    first = cascade.stages[0]
    if first.model != model:
        raise JudgekitError(
            f"{path}: the cascade's first stage {first.name} judges with {first.model}, but the judge "
            f"model is {model}; give --judge-model {first.model}",
            exit_code=2,
        )
    return CascadeRouting(cascade=cascade, escalate_to=tuple(build(str(s.model)) for s in cascade.stages[1:]))


def _jury_model(jury: Path | None) -> str | None:
    """The model of the jury's first member: the judge in force when no model is set (``None``: no jury)."""
    from judgekit.judges.jury import load_jury

    return load_jury(jury).members[0].model if jury is not None else None


def _effective_settings(flags: JudgeFlags, settings: Mapping[str, Any] | None) -> EffectiveSettings:
    """The settings in force: flag > environment > file (--config, then the project configuration) > default.

    See docs/configuration.md; ``settings`` are the command's other flags, by dotted name.
    """
    from judgekit.settings import resolve_settings

    return resolve_settings(
        flags={
            **(settings or {}),
            "records": flags.records,
            "untrusted": flags.untrusted,
            "unlabelled_criteria": flags.unlabelled_criteria,
            "judge.model": flags.model,
            "judge.api_base": flags.api_base,
            "judge.rubric": flags.rubric,
            "judge.max_cost": flags.max_cost,
            "judge.cache": flags.cache_mode,
            "judge.cassette": flags.cassette,
            "judge.timeout": flags.timeout,
            "judge.retries": flags.retries,
            "judge.backoff": flags.backoff,
            "judge.jury": flags.jury,
        },
        run_config=flags.config,
    )


def _build_judge(
    effective: EffectiveSettings,
    flags: JudgeFlags,
    *,
    records: Path,
    rubric: str,
    cassette: Path | None,
    mode: str,
    model: str,
) -> tuple[RubricGrader, TrustDecision]:
    """Build the judge in force (and its cascade) and decide its trust, saying so on standard error.

    The records are read once into a :class:`~judgekit.calibration.trust.TrustBook`; with
    ``--require-trust`` an untrusted judge is refused (exit code 1).
    """
    import typer

    from judgekit.calibration.trust import TrustBook, unlabelled_policy
    from judgekit.errors import JudgekitError
    from judgekit.judge_setup import JUDGE_SETTINGS, JudgeConfig, build_rubric_grader

    # read once: it decides the judge's trust and the line printed below
    book = TrustBook(records, unlabelled_criteria=unlabelled_policy(effective.value("unlabelled_criteria")))
    judge = {name: effective.value(f"judge.{name}") for name in JUDGE_SETTINGS}
    concurrency = int(effective.value("concurrency"))

    def build(stage_model: str, routing: CascadeRouting | None = None) -> RubricGrader:
        return build_rubric_grader(
            JudgeConfig.from_settings(
                {**judge, "jury": effective.path("judge.jury") if stage_model == model else None},
                model=stage_model,
                rubric=rubric,
                cassette=cassette,
                mode=mode,
                concurrency=concurrency,
                trust=book,
                cascade=routing,
            )
        )

    grader = build(model, _cascade_routing(flags.cascade, model, build) if flags.cascade else None)
    try:
        overall = (book.require if flags.require_trust else book.decide)(grader.fingerprint)
    except JudgekitError as exc:  # --require-trust refused the judge
        exc.exit_code = 1
        raise
    typer.echo(
        f"judge {grader.fingerprint[:12]}: {overall.trust.value} "
        f"(calibration records: {records}): {overall.reason}",
        err=True,
    )
    return grader, overall


def setup_judge(
    flags: JudgeFlags,
    *,
    settings: Mapping[str, Any] | None = None,
    need_model: str | None = None,
) -> JudgeSetup:
    """Resolve the settings and build the judge, the one way ``grade`` and ``check-references`` do it.

    In order: the settings are resolved (flag > environment > ``--config`` > project configuration >
    default; a note names the project configuration on standard error); the records folder is checked (a
    folder that was named must exist); the untrusted policy, the cache mode and the cassette are checked;
    then, when a judge model is in force, the records are read once into a
    :class:`~judgekit.calibration.trust.TrustBook`, the rubric grader is built through
    :func:`judgekit.judge_setup.build_rubric_grader`, and one line on standard error says the judge's
    fingerprint (first 12 characters), its trust, the records folder and the reason.

    Args:
        flags: The judge options as given.
        settings: The command's other settings given on its command line, by dotted name (``grade``:
            ``cases``, ``concurrency``; ``None`` values: not given).
        need_model: When given, a judge is required: with no judge model in force anywhere this message is
            the error (exit code 2). ``None``: no model means no judge.

    Returns:
        The judge set-up; ``grader`` is ``None`` when no judge model is in force.

    Raises:
        JudgekitError: On a bad setting (an unknown untrusted policy or cache mode, a cache mode without a
            cassette, a cassette without a judge, a named records folder that does not exist, a bad judge
            setting or rubric; exit code 2), when ``need_model`` is given and no model is in force (exit code
            2), or when ``--require-trust`` refuses the judge (exit code 1 on every command: an untrusted
            judge is a finding, as ``docs/reference/exit-codes.md`` says).
    """
    from typing import cast

    import typer

    from judgekit.errors import JudgekitError
    from judgekit.graders.contract import UNTRUSTED_POLICIES, unlabelled_policy
    from judgekit.settings import records_folder

    effective = _effective_settings(flags, settings)
    if effective.project is not None:
        typer.echo(f"note: configuration from {effective.project.path} (see judgekit config)", err=True)
    records = records_folder(effective=effective)  # a folder that was named must exist (exit 2)
    concurrency = int(effective.value("concurrency"))
    untrusted = str(effective.value("untrusted"))
    model = effective.value("judge.model") or _jury_model(effective.path("judge.jury"))
    api_base = effective.value("judge.api_base")
    rubric = str(effective.value("judge.rubric"))
    max_cost = effective.value("judge.max_cost")
    cassette = effective.path("judge.cassette")
    if untrusted not in UNTRUSTED_POLICIES:
        raise JudgekitError(
            f"--untrusted must be one of {', '.join(UNTRUSTED_POLICIES)} (got '{untrusted}')", exit_code=2
        )
    unlabelled_policy(effective.value("unlabelled_criteria"))  # checked before any judge is built
    mode = effective.value("judge.cache") or ("record" if cassette else "off")
    if mode not in ("record", "replay", "off"):
        raise JudgekitError(f"--cache-mode must be record, replay or off (got '{mode}')", exit_code=2)
    if mode != "off" and cassette is None:
        raise JudgekitError(f"--cache-mode {mode} needs --cassette FILE", exit_code=2)
    if model is None and need_model is not None:
        raise JudgekitError(need_model, exit_code=2)
    if cassette is not None and model is None:
        raise JudgekitError("--cassette is for the judge layer: give --judge-model too", exit_code=2)
    if flags.cascade is not None and model is None:
        raise JudgekitError(
            "--cascade routes the judge layer's criteria: give --judge-model too", exit_code=2
        )
    grader: RubricGrader | None = None
    overall: TrustDecision | None = None
    if model is not None:
        grader, overall = _build_judge(
            effective, flags, records=records, rubric=rubric, cassette=cassette, mode=mode, model=str(model)
        )
    return JudgeSetup(
        effective=effective,
        records=records,
        untrusted=cast("UntrustedPolicy", untrusted),  # checked against the allowed values above
        model=model,
        api_base=api_base,
        rubric=rubric,
        max_cost=max_cost,
        mode=mode,
        cassette=cassette,
        concurrency=concurrency,
        grader=grader,
        trust=overall,
    )
