"""The command line's commands, one module per area; :mod:`~judgekit.commands.tree` places them in groups.

Modules here import only typer at the top; everything heavy is imported inside the command functions so
that ``judgekit --help`` stays fast.
"""
