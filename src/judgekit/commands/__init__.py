"""Command-line command groups, one module per area, each exposing ``register(app)``.

Modules here import only typer at the top; everything heavy is imported inside the command functions so
that ``judgekit --help`` stays fast.
"""
