"""Project configuration: discovery, validation with located errors, and one precedence for every setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.errors import JudgekitError
from judgekit.settings import (
    DEFAULTS,
    ENV_VARS,
    FLAGS,
    JudgeSettings,
    ProjectSettings,
    find_project_config,
    load_project_config,
    resolve_settings,
    setting,
    toml_key_lines,
)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


PYPROJECT = """\
[project]
name = "agent"

[tool.judgekit]
cases = "golden"
records = "cal/records"
concurrency = 3

[tool.judgekit.judge]
model = "openai/from-file"
api_base = "http://127.0.0.1:9/v1"
temperature = 0.5
"""


# --------------------------------------------------------------------------- discovery


def test_pyproject_with_the_table_is_found_walking_up(tmp_path, monkeypatch):
    config = _write(tmp_path / "pyproject.toml", PYPROJECT)
    (tmp_path / "a" / "b").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "a" / "b")
    assert find_project_config() == config


def test_judgekit_toml_wins_over_pyproject_in_the_same_folder(tmp_path):
    _write(tmp_path / "pyproject.toml", PYPROJECT)
    own = _write(tmp_path / "judgekit.toml", 'cases = "other"\n')
    assert find_project_config(tmp_path) == own


def test_the_nearest_folder_wins(tmp_path):
    _write(tmp_path / "judgekit.toml", 'cases = "outer"\n')
    inner = _write(tmp_path / "sub" / "pyproject.toml", PYPROJECT)
    assert find_project_config(tmp_path / "sub") == inner


def test_a_pyproject_without_the_table_is_passed_over(tmp_path):
    outer = _write(tmp_path / "judgekit.toml", 'cases = "outer"\n')
    _write(tmp_path / "sub" / "pyproject.toml", '[project]\nname = "x"\n[tool.ruff]\nline-length = 99\n')
    assert find_project_config(tmp_path / "sub") == outer


def test_the_walk_stops_at_the_repository_root(tmp_path):
    _write(tmp_path / "judgekit.toml", 'cases = "outside the repository"\n')
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "src").mkdir()
    assert find_project_config(tmp_path / "repo" / "src") is None


# --------------------------------------------------------------------------- reading


def test_relative_paths_are_relative_to_the_file(tmp_path):
    config = load_project_config(_write(tmp_path / "pyproject.toml", PYPROJECT))
    given = config.given()
    assert given["cases"] == tmp_path / "golden"
    assert given["records"] == tmp_path / "cal" / "records"
    assert given["judge.model"] == "openai/from-file"
    assert config.line_of("cases") == 5
    assert config.line_of("judge.temperature") == 12
    assert config.table == "[tool.judgekit]"


def test_a_rubric_file_is_relative_to_the_file_and_a_rubric_id_is_kept(tmp_path):
    own = load_project_config(_write(tmp_path / "judgekit.toml", 'judge = { rubric = "r/mine.yaml" }\n'))
    assert own.given()["judge.rubric"] == str(tmp_path / "r" / "mine.yaml")
    assert own.line_of("judge.rubric") == 1  # inside an inline table: its table's line
    builtin = load_project_config(
        _write(tmp_path / "judgekit.toml", '[judge]\nrubric = "honest-reporting"\n')
    )
    assert builtin.given()["judge.rubric"] == "honest-reporting"


def test_an_empty_judgekit_toml_and_a_pyproject_without_the_table_give_nothing(tmp_path):
    assert load_project_config(_write(tmp_path / "judgekit.toml", "")).given() == {}
    assert load_project_config(_write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n')).given() == {}


def test_key_lines_skip_multiline_strings_and_follow_dotted_keys():
    text = (
        '[tool.judgekit]\nnote = """\ncases = 1\n"""\njudge.model = "m"\n\n'
        "[tool.judgekit.judge]\nsamples = 2\n"
    )
    lines = toml_key_lines(text)
    assert ("tool", "judgekit", "cases") not in lines
    assert lines[("tool", "judgekit", "judge", "model")] == 5
    assert lines[("tool", "judgekit", "judge", "samples")] == 8
    assert lines[("tool", "judgekit")] == 1


# one test per error message
@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        pytest.param(
            "pyproject.toml",
            "[tool.judgekit]\nconcurency = 4\n",
            "pyproject.toml:2: tool.judgekit.concurency: unknown field 'concurency'; "
            "did you mean 'concurrency'?",
            id="unknown_key_did_you_mean",
        ),
        pytest.param(
            "pyproject.toml",
            "[tool.judgekit]\ncases = 'c'\n\n[tool.judgekit.judge]\ntemprature = 0.2\n",
            "pyproject.toml:5: tool.judgekit.judge.temprature: unknown field 'temprature'; did you mean "
            "'temperature'?",
            id="unknown_judge_key_did_you_mean",
        ),
        pytest.param(
            "judgekit.toml",
            "colour = 'red'\n",
            "judgekit.toml:1: colour: unknown field 'colour'; allowed here: cases, records, policy, "
            "concurrency, untrusted, unlabelled_criteria, ray, processes, judge",
            id="unknown_key_listed",
        ),
        pytest.param(
            "judgekit.toml",
            "\nuntrusted = 'maybe'\n",
            "judgekit.toml:2: untrusted: must be 'withhold', 'count', 'fail_only' or 'advisory' "
            "(got 'maybe')",
            id="bad_choice",
        ),
        pytest.param(
            "judgekit.toml",
            "concurrency = 0\n",
            "judgekit.toml:1: concurrency: Input should be greater than or equal to 1 (got 0)",
            id="out_of_range",
        ),
        pytest.param(
            "judgekit.toml",
            "judge = { samples = 'three' }\n",
            "judgekit.toml:1: judge.samples: Input should be a valid integer, unable to parse string as an "
            "integer (got 'three')",
            id="bad_type_in_inline_table",
        ),
        pytest.param(
            "judgekit.toml",
            "[judge]\nmodel = 'm'\napi_key = 'sk-live-123456'\n",
            "judgekit.toml:3: judge.api_key: unknown field 'api_key': credentials never go in a "
            "configuration file; set the provider's environment variable (OPENAI_API_KEY, "
            "ANTHROPIC_API_KEY, ...)",
            id="secret_refused_with_where_it_goes",
        ),
        pytest.param(
            "judgekit.toml",
            "cases = 'a'\njudge = \n",
            "judgekit.toml:2: malformed TOML: Invalid value",
            id="malformed_toml",
        ),
        pytest.param(
            "pyproject.toml",
            "[tool]\njudgekit = 'yes'\n",
            "pyproject.toml:2: tool.judgekit: must be a table of settings",
            id="not_a_table",
        ),
        pytest.param(
            "judgekit.toml",
            b"cases = '\xff'\n",
            "judgekit.toml:1: not valid UTF-8",
            id="not_utf8",
        ),
    ],
)
def test_every_configuration_error_is_located_and_exit_2(tmp_path, name, text, message):
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(JudgekitError) as info:
        load_project_config(path)
    assert info.value.exit_code == 2
    assert f"{tmp_path}/{message}" in info.value.message
    assert "sk-live-123456" not in info.value.message


def test_several_problems_are_reported_together_in_line_order(tmp_path):
    path = _write(tmp_path / "judgekit.toml", "concurrency = 0\nuntrusted = 'maybe'\n[judge]\nsamples = 0\n")
    with pytest.raises(JudgekitError) as info:
        load_project_config(path)
    lines = info.value.message.splitlines()
    assert [line.split(":")[1] for line in lines] == ["1", "2", "4"]


def test_a_missing_configuration_file(tmp_path):
    with pytest.raises(JudgekitError, match=r"judgekit.toml: configuration file not found") as info:
        load_project_config(tmp_path / "judgekit.toml")
    assert info.value.exit_code == 2


# --------------------------------------------------------------------------- precedence


@pytest.fixture
def project(tmp_path):
    return load_project_config(_write(tmp_path / "pyproject.toml", PYPROJECT))


@pytest.fixture
def run_config(tmp_path):
    return _write(tmp_path / "run.yaml", "judge:\n  model: openai/from-run-config\n  samples: 3\n")


# (flag, environment, with --config, expected value, expected source)
PRECEDENCE = {
    "flag_beats_all": ("openai/flag", "openai/env", True, "openai/flag", "flag --judge-model"),
    "env_beats_files": (None, "openai/env", True, "openai/env", "env JUDGEKIT_JUDGE_MODEL"),
    "empty_env_is_unset": (None, "", True, "openai/from-run-config", "run.yaml:2"),
    "run_config_beats_project": (None, None, True, "openai/from-run-config", "run.yaml:2"),
    "project_file": (None, None, False, "openai/from-file", "pyproject.toml:10"),
}


@pytest.mark.parametrize("row", PRECEDENCE.values(), ids=PRECEDENCE.keys())
def test_precedence_flag_env_file_default(project, run_config, row):
    flag, env, use_run_config, expected, source = row
    environ = {"JUDGEKIT_JUDGE_MODEL": env} if env is not None else {}
    effective = resolve_settings(
        flags={"judge.model": flag},
        environ=environ,
        project=project,
        run_config=run_config if use_run_config else None,
    )
    assert effective.value("judge.model") == expected
    assert effective.source("judge.model").endswith(source)


def test_defaults_apply_when_nothing_is_given():
    effective = resolve_settings(environ={}, project=None)
    assert {name: s.value for name, s in effective.settings.items()} == DEFAULTS
    assert {s.source for s in effective.settings.values()} == {"default"}


def test_each_layer_gives_what_it_holds(project, run_config):
    effective = resolve_settings(
        flags={"concurrency": 2},
        environ={"JUDGEKIT_RECORDS": "env/records", "JUDGEKIT_JUDGE_API_BASE": "http://env/v1"},
        project=project,
        run_config=run_config,
    )
    assert effective.value("concurrency") == 2
    assert effective.value("records") == Path("env/records")
    assert effective.source("records") == "env JUDGEKIT_RECORDS"
    assert effective.value("judge.api_base") == "http://env/v1"
    assert effective.value("judge.samples") == 3  # the run configuration
    assert effective.value("judge.temperature") == 0.5  # the project file
    assert effective.value("judge.rubric") == "honest-reporting"  # the default
    assert effective.source("judge.rubric") == "default"
    assert effective.run_config == {"judge": {"model": "openai/from-run-config", "samples": 3}}


def test_project_is_found_from_the_working_directory(tmp_path, monkeypatch):
    _write(tmp_path / "judgekit.toml", "concurrency = 5\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JUDGEKIT_RECORDS", raising=False)
    assert setting("concurrency") == 5
    assert setting("concurrency", 7) == 7


def test_an_unknown_flag_name_is_a_programming_error():
    with pytest.raises(ValueError, match="unknown setting"):
        resolve_settings(flags={"judge.colour": "red"}, environ={}, project=None)


def test_the_tables_name_only_real_settings():
    names = set(DEFAULTS)
    model_names = {n for n in ProjectSettings.model_fields if n != "judge"} | {
        f"judge.{n}" for n in JudgeSettings.model_fields
    }
    assert names == model_names
    assert set(ENV_VARS) <= names
    assert set(FLAGS) <= names


def test_the_untrusted_choices_match_the_graders():
    from typing import get_args

    from judgekit.graders.contract import UNTRUSTED_POLICIES

    annotation = ProjectSettings.model_fields["untrusted"].annotation
    literal = next(a for a in get_args(annotation) if a is not type(None))
    assert get_args(literal) == UNTRUSTED_POLICIES


def test_files_and_folders_named_as_text(tmp_path, run_config):
    config = _write(tmp_path / "judgekit.toml", 'cases = "golden"\n')
    assert find_project_config(str(tmp_path)) == config
    loaded = load_project_config(str(config))
    assert loaded.path == config
    assert loaded.given()["cases"] == tmp_path / "golden"
    effective = resolve_settings(environ={}, project=loaded, run_config=str(run_config))
    assert effective.run_config_path == run_config
    assert effective.source("judge.model") == f"{run_config}:2"
