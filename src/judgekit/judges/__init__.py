"""LLM judges: rubric files, safe prompts, strict verdict parsing, the litellm client and its cassette.

Importing this package is cheap: litellm (about 4 s to import) is imported only when a
:class:`~judgekit.judges.client.JudgeClient` is built for calls that may reach a provider.
"""
