"""pytest plugin: grade agent transcripts in tests, and collect golden cases as parametrised tests.

Installed with judgekit and registered through the ``pytest11`` entry point (name ``judgekit``; turn it
off with ``-p no:judgekit``). Importing it costs nothing: judgekit's models load on first use.

* :func:`assert_grade` grades one trial (every deterministic layer by default) and fails the test with
  the readable explanation when the verdict is not the expected one: the failed gates, the structural
  state diff, the offending call with its index and arguments, the quoted evidence. Usable anywhere,
  also as a fixture of the same name bound to the configured golden set.
* ``--judgekit-cases PATH`` (ini ``judgekit_cases``) names a golden set. A test that takes the
  ``judgekit_case`` argument runs once per reviewed case (ids are case ids); ``judgekit_reference``
  gives that case's reference solution as a :class:`Trial`.
* ``--judgekit-transcripts FILE`` (ini ``judgekit_transcripts``, several allowed) names recorded runs. A
  test that takes ``judgekit_trial`` runs once per transcript line (ids ``<case>#<trial>``); a line that
  cannot be read, or names a case the set does not have, becomes a failing test that says where and why.
* Holdout cases (``split: holdout``) and their trials are not collected unless named with
  ``--judgekit-holdout ID`` (repeatable; ini ``judgekit_holdout``, one id a line), as ``judgekit grade``
  leaves them out without ``--holdout`` (:func:`judgekit.caseset.select_cases`).
* ``--judgekit-config FILE`` (a run configuration with a ``judge`` mapping, as ``judgekit grade
  --config``), ``--judgekit-cassette FILE``, ``--judgekit-records DIR``, ``--judgekit-untrusted
  POLICY`` and ``--judgekit-unlabelled-criteria POLICY`` add the judge layer; each has an ini key of the
  same name with ``_`` (``judgekit_config``...). The judge is trusted only through a calibration record for
  its exact fingerprint, and an untrusted judge decides nothing unless ``--judgekit-untrusted count``; with
  ``--judgekit-unlabelled-criteria withhold`` a verdict on a criterion text the calibration never
  labelled is untrusted too.
* Fixtures ``judgekit_case_set`` (the loaded set) and ``judgekit_grader`` (a
  :class:`~judgekit.integrations.grading.LayeredGrader` on the set's root, with the judge layer when
  configured).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from judgekit.cases import Case
    from judgekit.caseset import CaseSet
    from judgekit.errors import Problem
    from judgekit.integrations.grading import Grader, LayeredGrader
    from judgekit.transcript import Transcript
    from judgekit.verdict import Grade, Verdict

__all__ = ["GradeAssertionError", "Trial", "assert_grade", "golden_cases"]


class GradeAssertionError(AssertionError):
    """A trial's verdict was not the expected one; the message is judgekit's explanation.

    Attributes:
        grade: The grade.
    """

    def __init__(self, message: str, grade: Grade) -> None:
        super().__init__(message)
        self.grade = grade


@dataclass(frozen=True)
class Trial:
    """A transcript with its case, and the folder its state paths are relative to.

    Attributes:
        case: The case.
        transcript: The trial.
        folder: The transcript file's folder (``None`` when state paths are absolute or inline).
        where: Where it was read (``file:line``), for messages.
    """

    case: Case
    transcript: Transcript
    folder: Path | None = None
    where: str = ""


def assert_grade(
    case: Case | Trial,
    transcript: Transcript | None = None,
    *,
    grader: object = None,
    root: Path | str | None = None,
    transcript_dir: str | os.PathLike[str] | None = None,
    expect: Verdict | str = "pass",
) -> Grade:
    """Grade one trial and fail with the readable explanation unless the verdict is ``expect``.

    Args:
        case: The case, or a :class:`Trial` (then ``transcript`` is left out).
        transcript: The trial to grade.
        grader: Anything :func:`~judgekit.integrations.grading.as_grader` accepts; default: every
            deterministic layer, fixtures resolved against ``root``.
        root: The golden set's root (for case fixture paths) when ``grader`` is not given.
        transcript_dir: The folder that state paths in the transcript are relative to, as text or a path
            object.
        expect: The verdict the trial must get (``pass`` by default; ``fail`` to pin down a known
            failure).

    Returns:
        The grade, when the verdict is the expected one.

    Raises:
        GradeAssertionError: When it is not; the message is :func:`~judgekit.integrations.grading.explain`
            of the grade.
        JudgekitError: When the arguments are unusable (a grader of an unknown kind, an unknown verdict).
    """
    transcript_dir = Path(transcript_dir) if transcript_dir is not None else None
    __tracebackhide__ = True
    from judgekit.advice import advice_for
    from judgekit.api.grading import grade as grade_trial
    from judgekit.errors import JudgekitError
    from judgekit.integrations.grading import LayeredGrader, as_grader
    from judgekit.verdict import Verdict

    if isinstance(case, Trial):
        if transcript is not None:
            raise JudgekitError("assert_grade(trial) takes no transcript: the trial carries its own")
        trial = case
    elif transcript is None:
        raise JudgekitError("assert_grade(case, transcript): the transcript is missing")
    else:
        trial = Trial(case, transcript, transcript_dir)
    try:
        wanted = Verdict(expect)
    except ValueError:
        raise JudgekitError(
            f"expect={expect!r} is not a verdict; use one of {', '.join(v.value for v in Verdict)}"
        ) from None
    if grader is None:
        base = Path(root) if root is not None else None
        the_grader: Grader = LayeredGrader(base, transcript_dir=trial.folder)
    else:
        the_grader = as_grader(grader)
    if isinstance(the_grader, LayeredGrader) and trial.folder is not None:
        the_grader = _for_folder(the_grader, trial.folder)
    with advice_for("pytest"):  # a reason's advice names the plugin's options, not judgekit grade's flags
        grade = grade_trial(trial.case, trial.transcript, grader=the_grader)
    if grade.verdict is not wanted:
        where = f" ({trial.where})" if trial.where else ""
        raise GradeAssertionError(
            f"expected {wanted.value}, got {grade.verdict.value}{where}\n" + grade.explain(), grade
        )
    return grade


def _for_folder(grader: LayeredGrader, folder: Path) -> LayeredGrader:
    """The same grader with transcript state paths resolved against ``folder`` (sharing the cache)."""
    from judgekit.integrations.grading import LayeredGrader

    if grader.states.transcript_dir == folder:
        return grader
    return LayeredGrader(
        states=grader.states.for_transcripts(folder),
        rubric=grader.rubric,
        deterministic=grader.deterministic,
        untrusted=grader.untrusted,
        grounding=grader.grounding,
    )


def golden_cases(path: Path | str, *, holdout: str | Sequence[str] = ()) -> list[Any]:
    """``pytest.param(case, id=case.id)`` for every reviewed case of a golden set, holdouts left out.

    For ``@pytest.mark.parametrize("case", golden_cases("golden/"))`` in projects that prefer explicit
    parametrisation to the ``judgekit_case`` argument.

    Args:
        path: The golden set (folder or case file).
        holdout: Ids of the holdout cases to include too; every other holdout case is left out.

    Raises:
        JudgekitError: When the set cannot be loaded or has problems (they are listed), or a ``holdout``
            name is not a holdout case of the set.
    """
    from judgekit.caseset import select_cases

    selection = select_cases(_load_set(Path(path)), holdout, option="holdout")
    return [pytest.param(case, id=case.id) for case in selection.cases]


# --------------------------------------------------------------------------- configuration


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register ``--judgekit-cases`` and ``--judgekit-transcripts`` (and their ini keys)."""
    group = parser.getgroup("judgekit", "judgekit: grade agent transcripts")
    group.addoption(
        "--judgekit-cases",
        action="store",
        default=None,
        metavar="PATH",
        help="golden set (folder or case file) whose cases parametrise tests taking 'judgekit_case'",
    )
    group.addoption(
        "--judgekit-transcripts",
        action="append",
        default=None,
        metavar="FILE",
        help="JSONL transcripts whose trials parametrise tests taking 'judgekit_trial' (repeatable)",
    )
    group.addoption(
        "--judgekit-config",
        action="store",
        default=None,
        metavar="FILE",
        help="run configuration with a 'judge' mapping (as judgekit grade --config): adds the judge layer",
    )
    group.addoption(
        "--judgekit-cassette",
        action="store",
        default=None,
        metavar="FILE",
        help="judge cassette to replay or record (the configuration's judge.cache says which)",
    )
    group.addoption(
        "--judgekit-records",
        action="store",
        default=None,
        metavar="DIR",
        help="calibration records deciding the judge's trust (default: calibration/records under rootdir)",
    )
    group.addoption(
        "--judgekit-untrusted",
        action="store",
        default=None,
        metavar="POLICY",
        help="what an uncalibrated judge's verdict may do: withhold (default), count, fail_only, advisory",
    )
    group.addoption(
        "--judgekit-unlabelled-criteria",
        action="store",
        default=None,
        metavar="POLICY",
        help="what a verdict on a criterion text the judge's calibration never labelled may do: count "
        "(default: it keeps the judge's trust) or withhold (it is untrusted)",
    )
    group.addoption(
        "--judgekit-holdout",
        action="append",
        default=None,
        metavar="ID",
        help="also collect this holdout case and its trials (by id; repeatable); holdouts are left out "
        "otherwise",
    )
    parser.addini("judgekit_cases", "golden set for judgekit_case / judgekit_trial", default="")
    parser.addini(
        "judgekit_holdout", "holdout case ids to collect too (one a line)", type="linelist", default=[]
    )
    parser.addini("judgekit_transcripts", "transcript files for judgekit_trial", type="paths", default=[])
    parser.addini("judgekit_config", "run configuration with a 'judge' mapping", default="")
    parser.addini("judgekit_cassette", "judge cassette to replay or record", default="")
    parser.addini("judgekit_records", "calibration records deciding the judge's trust", default="")
    parser.addini("judgekit_untrusted", "untrusted-judge policy", default="")
    parser.addini(
        "judgekit_unlabelled_criteria", "policy for verdicts on never-labelled criterion texts", default=""
    )


def _load_set(path: Path) -> CaseSet:
    from judgekit.caseset import load_case_set
    from judgekit.errors import JudgekitError

    case_set = load_case_set(path)
    if case_set.problems:
        shown = "\n".join(f"  {p}" for p in case_set.problems[:20])
        more = len(case_set.problems) - 20
        raise JudgekitError(
            f"the golden set {path} has {len(case_set.problems)} problem(s); fix them first "
            f"('judgekit cases check {path}' lists them):\n{shown}"
            + (f"\n  ... {more} more" if more > 0 else "")
        )
    return case_set


def _cases_path(config: pytest.Config) -> Path | None:
    option = config.getoption("--judgekit-cases")
    if option:
        return Path(option).resolve()
    ini = str(config.getini("judgekit_cases") or "")
    if ini:
        return (config.rootpath / ini).resolve()
    return None


def _holdout_names(config: pytest.Config) -> tuple[list[str], str]:
    """The holdout ids named for the session and how they were given (for an error message)."""
    option = config.getoption("--judgekit-holdout")
    if option:
        return list(option), "--judgekit-holdout"
    return [str(v) for v in config.getini("judgekit_holdout")], "judgekit_holdout (ini)"


def _transcript_paths(config: pytest.Config) -> list[Path]:
    option = config.getoption("--judgekit-transcripts")
    if option:
        return [Path(p).resolve() for p in option]
    return [Path(p) for p in config.getini("judgekit_transcripts")]


_SET_KEY = pytest.StashKey[Any]()


def _configured_set(config: pytest.Config) -> CaseSet:
    from judgekit.errors import JudgekitError

    cached = config.stash.get(_SET_KEY, None)
    if cached is not None:
        if isinstance(cached, JudgekitError):
            raise cached
        return cached  # type: ignore[no-any-return]
    path = _cases_path(config)
    if path is None:
        error = JudgekitError(
            "no golden set configured: pass --judgekit-cases PATH or set 'judgekit_cases' in the pytest ini"
        )
        config.stash[_SET_KEY] = error
        raise error
    try:
        case_set = _load_set(path)
    except JudgekitError as exc:
        config.stash[_SET_KEY] = exc
        raise
    config.stash[_SET_KEY] = case_set
    return case_set


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrise ``judgekit_case`` over the golden set and ``judgekit_trial`` over recorded trials."""
    from judgekit.errors import JudgekitError

    wants_case = "judgekit_case" in metafunc.fixturenames
    wants_trial = "judgekit_trial" in metafunc.fixturenames
    if not (wants_case or wants_trial):
        return
    try:
        case_set = _configured_set(metafunc.config)
    except JudgekitError as exc:
        raise pytest.UsageError(f"judgekit: {exc.message}") from None
    from judgekit.caseset import select_cases

    holdout, option = _holdout_names(metafunc.config)
    if wants_case:
        try:
            cases = list(select_cases(case_set, holdout, option=option).cases)
        except JudgekitError as exc:
            raise pytest.UsageError(f"judgekit: {exc.message}") from None
        metafunc.parametrize("judgekit_case", cases, ids=[c.id for c in cases])
    if wants_trial:
        files = _transcript_paths(metafunc.config)
        if not files:
            raise pytest.UsageError(
                "judgekit: tests taking 'judgekit_trial' need transcripts: pass --judgekit-transcripts FILE "
                "or set 'judgekit_transcripts' in the pytest ini"
            )
        values, ids = _trials(case_set, files, holdout, option)
        metafunc.parametrize("judgekit_trial", values, ids=ids, indirect=True)


def _trials(
    case_set: CaseSet, files: list[Path], holdout: Sequence[str], option: str
) -> tuple[list[Trial | Problem], list[str]]:
    from judgekit.api.runs import plan_run
    from judgekit.errors import JudgekitError

    try:  # the trials `judgekit grade` would grade: the run service's planning step
        _, plan = plan_run(case_set, files, holdout=holdout, holdout_option=option, transcripts_option="")
    except JudgekitError as exc:
        raise pytest.UsageError(f"judgekit: {exc.message}") from None
    values: list[Trial | Problem] = []
    ids: list[str] = []
    for planned in plan.trials:
        source = Path(planned.source.file)
        values.append(
            Trial(
                planned.case,
                planned.transcript,
                source.parent,
                f"{planned.source.file}:{planned.source.line}",
            )
        )
        ids.append(f"{planned.transcript.case_id}#{planned.transcript.trial}")
    for problem in plan.problems:
        values.append(problem)
        name = problem.file.name if problem.file is not None else "input"
        ids.append(f"problem:{name}:{problem.line}")
    return values, ids


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def judgekit_case_set(pytestconfig: pytest.Config) -> CaseSet:
    """The golden set named by ``--judgekit-cases`` (or the ``judgekit_cases`` ini key)."""
    from judgekit.errors import JudgekitError

    try:
        return _configured_set(pytestconfig)
    except JudgekitError as exc:
        pytest.fail(f"judgekit: {exc.message}", pytrace=False)


def _option(config: pytest.Config, name: str) -> str | None:
    value = config.getoption(f"--judgekit-{name}")
    if value:
        return str(value)
    ini = str(config.getini(f"judgekit_{name.replace('-', '_')}") or "")
    return ini or None


def _configured_grader(config: pytest.Config, root: Path) -> LayeredGrader:
    """The layered grader the options describe: the judge layer when a configuration names a model."""
    from typing import cast

    from judgekit.errors import JudgekitError
    from judgekit.graders.contract import UNTRUSTED_POLICIES, UntrustedPolicy
    from judgekit.integrations.grading import LayeredGrader
    from judgekit.judge_setup import JudgeConfig, build_rubric_grader, load_run_config

    policy = _option(config, "untrusted") or "withhold"
    if policy not in UNTRUSTED_POLICIES:
        raise JudgekitError(
            f"--judgekit-untrusted must be one of {', '.join(UNTRUSTED_POLICIES)} (got {policy!r})"
        )
    settings_path = _option(config, "config")
    cassette = _option(config, "cassette")
    if settings_path is None:
        if cassette is not None:
            raise JudgekitError("--judgekit-cassette is for the judge layer: give --judgekit-config too")
        return LayeredGrader(root, untrusted=cast(UntrustedPolicy, policy))
    judge = dict(load_run_config(Path(settings_path)).get("judge", {}))
    if not judge.get("model"):
        raise JudgekitError(
            f"{settings_path}: the judge mapping names no model; add 'model: <litellm model>'"
        )
    mode = str(judge.get("cache") or ("record" if cassette else "off"))
    if mode != "off" and cassette is None:
        raise JudgekitError(f"{settings_path}: judge.cache is {mode!r}, which needs --judgekit-cassette FILE")
    records = _option(config, "records")
    rubric = build_rubric_grader(
        JudgeConfig.from_settings(
            judge,
            model=str(judge["model"]),
            rubric=str(judge.get("rubric", "honest-reporting")),
            cassette=Path(cassette) if cassette is not None else None,
            mode=mode,
            records=Path(records) if records is not None else config.rootpath / "calibration" / "records",
            unlabelled_criteria=_option(config, "unlabelled-criteria") or "count",
        )
    )
    return LayeredGrader(root, rubric=rubric, untrusted=cast(UntrustedPolicy, policy))


@pytest.fixture(scope="session")
def judgekit_grader(pytestconfig: pytest.Config) -> LayeredGrader:
    """The layers the options ask for, fixtures resolved against the configured set's root (else rootdir).

    Every deterministic layer, plus the judge layer when ``--judgekit-config`` names a judge model; the
    judge is trusted only through a calibration record for its exact fingerprint in ``--judgekit-records``
    (default ``calibration/records`` under rootdir), and an untrusted judge decides nothing unless
    ``--judgekit-untrusted count``.
    """
    from judgekit.errors import JudgekitError

    try:
        path = _cases_path(pytestconfig)
        root = pytestconfig.rootpath if path is None else _configured_set(pytestconfig).root
        return _configured_grader(pytestconfig, root)
    except JudgekitError as exc:
        pytest.fail(f"judgekit: {exc.message}", pytrace=False)


@pytest.fixture(name="assert_grade")
def assert_grade_fixture(judgekit_grader: LayeredGrader) -> Callable[..., Grade]:
    """:func:`assert_grade` bound to ``judgekit_grader`` (pass ``grader=`` to use another)."""

    def bound(case: Any, transcript: Any = None, **kwargs: Any) -> Grade:
        __tracebackhide__ = True
        kwargs.setdefault("grader", judgekit_grader)
        return assert_grade(case, transcript, **kwargs)

    return bound


@pytest.fixture
def judgekit_trial(request: pytest.FixtureRequest) -> Trial:
    """One recorded trial (parametrised over ``--judgekit-transcripts``)."""
    from judgekit.errors import Problem

    value = getattr(request, "param", None)
    if value is None:
        pytest.fail("judgekit: judgekit_trial is parametrised by the plugin; do not request it indirectly")
    if isinstance(value, Problem):
        pytest.fail(f"judgekit: this transcript line cannot be graded: {value}", pytrace=False)
    return value  # type: ignore[no-any-return]


@pytest.fixture
def judgekit_reference(judgekit_case: Case, judgekit_grader: LayeredGrader) -> Trial:
    """The reference solution of ``judgekit_case``; the test is skipped when the case has none."""
    if not judgekit_case.reference_solution:
        pytest.skip(f"case {judgekit_case.id} has no reference_solution")
    states = judgekit_grader.states
    ref = states.reference(judgekit_case)
    if isinstance(ref, str):
        pytest.fail(f"judgekit: case {judgekit_case.id}: {ref}", pytrace=False)
    provider = states.reference_provider(judgekit_case)
    return Trial(judgekit_case, ref, provider.transcript_dir, str(judgekit_case.reference_solution))
