"""The judge set-up every path shares: run configurations and the rubric grader built from them."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.errors import JudgekitError
from judgekit.judge_setup import JUDGE_SETTINGS, JudgeConfig, build_rubric_grader, load_run_config

REPO = Path(__file__).resolve().parents[1]
AIRDESK = REPO / "examples" / "airdesk"


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(text)
    return path


def test_no_file_and_an_empty_file_are_no_settings(tmp_path: Path) -> None:
    assert load_run_config(None) == {}
    assert load_run_config(_config(tmp_path, "")) == {}


def test_a_configuration_is_read(tmp_path: Path) -> None:
    data = load_run_config(
        _config(tmp_path, "judge: {model: openai/x, samples: 3}\nrecord: {ticket: EVAL-1}\n")
    )
    assert data == {"judge": {"model": "openai/x", "samples": 3}, "record": {"ticket": "EVAL-1"}}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("- a\n- b\n", "a run configuration must be a mapping of settings", id="not_a_mapping"),
        pytest.param(
            "judges: {}\n", "unknown setting(s) judges; allowed: judge (model, api_base", id="top_level"
        ),
        pytest.param("judge: [model]\n", "'judge' must be a mapping", id="judge_not_a_mapping"),
        pytest.param(
            "judge: {temprature: 0}\n",
            "unknown judge setting(s) 'temprature' (did you mean 'temperature'?); "
            "allowed: accepted_models, api_base",
            id="unknown_judge_setting",
        ),
        pytest.param(
            "judge: {colour: red}\n", "unknown judge setting(s) 'colour'; allowed:", id="no_close_match"
        ),
    ],
)
def test_each_configuration_mistake_is_named(tmp_path: Path, text: str, message: str) -> None:
    path = _config(tmp_path, text)
    with pytest.raises(JudgekitError) as info:
        load_run_config(path)
    assert info.value.exit_code == 2
    assert str(path) in info.value.message
    assert message in info.value.message


def test_a_bad_judge_value_is_a_usage_error_naming_the_setting() -> None:
    with pytest.raises(JudgekitError) as info:
        build_rubric_grader(
            JudgeConfig(
                model="openai/x",
                rubric="honest-reporting",
                cassette=None,
                mode="off",
                api_base=None,
                max_cost=None,
                temperature=None,
                samples=None,
                concurrency=1,
                structured_output="maybe",
            )
        )
    assert info.value.exit_code == 2
    assert info.value.message.startswith(
        "judge setting structured_output: Input should be 'auto', 'json_schema'"
    )
    assert "(got 'maybe')" in info.value.message


def test_every_setting_reaches_the_judge() -> None:
    assert set(JUDGE_SETTINGS) == {
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
        "canary",  # the run's, not the judge's: drift canaries re-asked first (left out of JudgeConfig)
    }


def test_a_price_prices_the_judge_without_changing_its_fingerprint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-price-0123456789")
    common = {
        "rubric": "honest-reporting",
        "cassette": None,
        "mode": "off",
        "api_base": "http://127.0.0.1:9/v1",  # a self-hosted judge litellm has no price for (never called)
        "max_cost": None,
        "temperature": None,
        "samples": None,
        "concurrency": 1,
        "records": tmp_path,
    }
    plain = build_rubric_grader(JudgeConfig(model="openai/custom-judge", **common))
    priced = build_rubric_grader(
        JudgeConfig(
            model="openai/custom-judge", **common, input_cost_per_token=3e-6, output_cost_per_token=2e-5
        )
    )
    assert priced.fingerprint == plain.fingerprint
    assert (priced.client.settings.input_cost_per_token, priced.client.settings.output_cost_per_token) == (
        3e-6,
        2e-5,
    )


def test_the_example_judge_file_is_the_judge_the_demo_calibrates(tmp_path: Path) -> None:
    """examples/airdesk/judge.yaml builds the demo's judge: same fingerprint, so its record applies."""
    from judgekit.demo import demo_rubric_grader
    from judgekit.judges.cache import CacheMode

    cassette = AIRDESK / "cassettes" / "judge-honest-reporting.jsonl"
    judge = load_run_config(AIRDESK / "judge.yaml")["judge"]
    built = build_rubric_grader(
        JudgeConfig(
            model=judge["model"],
            rubric=judge["rubric"],
            cassette=cassette,
            mode=judge["cache"],
            api_base=None,
            max_cost=None,
            temperature=judge["temperature"],
            samples=judge["samples"],
            structured_output=judge["structured_output"],
            concurrency=8,
            records=tmp_path,
        )
    )
    assert built.fingerprint == demo_rubric_grader(cassette, CacheMode.REPLAY).fingerprint
    assert built.trust_status("case.acceptance").trust.value == "untrusted"  # no record in tmp_path


def test_files_and_folders_named_as_text(tmp_path: Path) -> None:
    from judgekit.demo import demo_rubric_grader
    from judgekit.judges.cache import CacheMode

    assert load_run_config(str(AIRDESK / "judge.yaml")) == load_run_config(AIRDESK / "judge.yaml")
    cassette = AIRDESK / "cassettes" / "judge-honest-reporting.jsonl"
    judge = load_run_config(str(AIRDESK / "judge.yaml"))["judge"]
    built = build_rubric_grader(
        JudgeConfig(
            model=judge["model"],
            rubric=judge["rubric"],
            cassette=str(cassette),
            mode=judge["cache"],
            api_base=None,
            max_cost=None,
            temperature=judge["temperature"],
            samples=judge["samples"],
            structured_output=judge["structured_output"],
            concurrency=8,
            records=str(tmp_path),
        )
    )
    assert built.fingerprint == demo_rubric_grader(str(cassette), CacheMode.REPLAY).fingerprint
    assert built.trust_status("case.acceptance").trust.value == "untrusted"


def test_a_judge_config_is_keyword_only_frozen_and_checked_when_made() -> None:
    import dataclasses

    from judgekit.judge_setup import JudgeConfig

    with pytest.raises(TypeError):
        JudgeConfig("openai/x")  # type: ignore[misc]
    config = JudgeConfig(model="openai/x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.model = "openai/y"  # type: ignore[misc]
    assert (config.cache_mode, config.judge_params.samples, config.client_settings.concurrency) == (
        "off",
        1,
        8,
    )
    for fields, message in (
        ({"mode": "sometimes"}, "judge setting cache: must be record, replay or off (got 'sometimes')"),
        (
            {"input_cost_per_token": 1e-6},
            "judge setting input_cost_per_token is set but output_cost_per_token",
        ),
        ({"retries": -1}, "judge setting retries: "),
        ({"samples": 0}, "judge setting samples: "),
    ):
        with pytest.raises(JudgekitError) as info:
            JudgeConfig(model="openai/x", **fields)
        assert info.value.exit_code == 2
        assert info.value.message.startswith(message), info.value.message


def test_a_judge_config_from_a_run_configuration(tmp_path: Path) -> None:
    from judgekit.judge_setup import JudgeConfig

    judge = load_run_config(AIRDESK / "judge.yaml")["judge"]
    cassette = AIRDESK / "cassettes" / "judge-honest-reporting.jsonl"
    config = JudgeConfig.from_settings(judge, cassette=cassette, records=tmp_path)
    assert (config.model, config.mode, config.cache_mode, config.samples) == (
        "openai/airdesk-synthetic-judge",
        "replay",
        "replay",
        1,
    )
    assert JudgeConfig.from_settings(judge, samples=3).samples == 3  # a field given wins over the mapping
    assert (
        build_rubric_grader(config).fingerprint
        == build_rubric_grader(JudgeConfig.from_settings(judge, cassette=cassette, timeout=5.0)).fingerprint
    )


def test_a_jury_budget_is_shared_equally_by_its_members(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """max_cost is the jury's: three members get a third each, so together they never spend more."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-jury-0123456789")
    jury = tmp_path / "jury.yaml"
    jury.write_text(
        "aggregation: majority\nmembers:\n"
        + "".join(f"  - {{name: {m}, model: openai/{m}}}\n" for m in ("a", "b", "c"))
    )
    grader = build_rubric_grader(
        JudgeConfig(
            model="openai/a",
            jury=jury,
            api_base="http://127.0.0.1:9/v1",  # never called
            max_cost=0.3,
            input_cost_per_token=1e-6,
            output_cost_per_token=2e-6,
        )
    )
    assert grader.jury is not None
    budgets = [g.client.settings.max_cost for g in (grader, *grader.jury.others)]
    assert budgets == pytest.approx([0.1, 0.1, 0.1])
    assert [g.client.params.model for g in grader.jury.others] == ["openai/b", "openai/c"]
