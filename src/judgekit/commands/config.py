"""``judgekit config``: the configuration in force and where each value came from.

Precedence, highest first: flag > environment variable > file (``grade --config``'s run configuration, then
the project configuration: ``judgekit.toml``, or ``[tool.judgekit]`` in ``pyproject.toml``) > default. See
:mod:`judgekit.settings` and ``docs/configuration.md``. Secrets never reach the output: every value and source
goes through :class:`~judgekit.secrets.Redactor` (API keys in the environment, tokens in URLs).

Exit codes: 0 printed; 2 a usage error or an invalid configuration file (``file:line: field: message``).
"""

from __future__ import annotations

from pathlib import Path

import typer

from judgekit.commands.inputs import existing_inputs
from judgekit.commands.output import chosen_format, format_option

__all__ = ["config"]


@existing_inputs("run_config")
def config(
    run_config: Path | None = typer.Option(
        None,
        "--config",
        help="Also apply this run configuration (YAML/JSON), as judgekit grade --config does.",
    ),
    output_format: str = format_option(),
) -> None:
    """Print the configuration in force and where each value came from (env, file:line or default).

    The project configuration is found by walking up from the working directory: judgekit.toml wins over
    a pyproject.toml with a tool.judgekit table. Flags given to a command override every value shown.
    No secret is printed (API keys and tokens in URLs are redacted).
    """
    import json

    from judgekit.secrets import Redactor
    from judgekit.settings import ENV_VARS, resolve_settings

    output_format = chosen_format(output_format)
    effective = resolve_settings(run_config=run_config)
    data = Redactor.from_environ().data(effective.to_json())
    if output_format == "json":
        typer.echo(json.dumps(data, indent=2))
        return
    project = effective.project
    typer.echo(
        f"project configuration: {project.path} ({project.table})"
        if project is not None
        else f"project configuration: none found from {Path.cwd()} (judgekit.toml, or [tool.judgekit] in "
        "pyproject.toml)"
    )
    if effective.run_config_path is not None:
        typer.echo(f"run configuration: {effective.run_config_path}")
    typer.echo(f"environment: {', '.join(sorted(ENV_VARS.values()))}")
    rows = [
        (name, "(unset)" if item["value"] is None else str(item["value"]), str(item["source"]))
        for name, item in data["settings"].items()
    ]
    width = max(len(name) for name, _, _ in rows)
    value_width = min(max(len(value) for _, value, _ in rows), 60)
    for name, value, source in rows:
        typer.echo(f"  {name:<{width}}  {value:<{value_width}}  {source}")
