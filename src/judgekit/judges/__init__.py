"""LLM judges: rubric files, safe prompts, strict verdict parsing, the litellm client and its cassette.

Importing this package is cheap: litellm (about 4 s to import) is imported only when a
:class:`~judgekit.judges.client.JudgeClient` is built for calls that may reach a provider.

What lives here:

* :mod:`~judgekit.judges.rubric`: rubric files (criteria, prompt template, verdict menu).
* :mod:`~judgekit.judges.sandbox`: the Jinja sandbox rubric templates render in, with limits.
* :mod:`~judgekit.judges.prompt`: prompts rendered safely (untrusted text as fenced data).
* :mod:`~judgekit.judges.lookalikes`: which characters can draw a fence bracket, derived from Unicode data.
* :mod:`~judgekit.judges._lookalike_table`: the generated table of those characters (do not edit).
* :mod:`~judgekit.judges.parse`: strict parsing of judge replies, and several samples reduced to one.
* :mod:`~judgekit.judges.client`: judge calls with concurrency, retries, timeouts, cost and cassette.
* :mod:`~judgekit.judges.limits`: the largest timeout, retries, backoff, accepted models allowed.
* :mod:`~judgekit.judges.transport`: the lean OpenAI-compatible and Anthropic Messages transport.
* :mod:`~judgekit.judges.cache`: the persistent judge cache that doubles as a cassette.
* :mod:`~judgekit.judges.batch`: provider batch jobs for a run's judge requests.
* :mod:`~judgekit.judges.fingerprint`: fingerprints of judge-backed graders.
* :mod:`~judgekit.judges.pairwise`: pairwise judging, asked in both orders.
* :mod:`~judgekit.judges.cascade`: a cascade of judges (cheap to strong) with a human queue at the end.
* :mod:`~judgekit.judges.jury`: a jury of judges on one criterion and its declared aggregation.

What may import it: the layers above it in the import contract (``graders`` up to ``cli``). It may import
``caseset``, ``state`` and below, never a grader.
"""

PROVIDER_LIBRARIES: tuple[str, ...] = (
    "litellm",
    "openai",
    "anthropic",
    "httpx",
    "httpcore",
    "aiohttp",
    "requests",
    "urllib3",
    "tiktoken",
    "tokenizers",
    "huggingface_hub",
)
"""The libraries a judge reaches a provider with (litellm and what it imports: provider SDKs, HTTP clients,
tokenizers), as top-level module names. They are imported only when a judge that may call a provider is
set up: grading without a judge, ``judgekit --help`` and a report never import one
(``tests/test_startup_imports.py`` holds this)."""
