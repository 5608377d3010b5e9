"""Integrations: judgekit's graders inside other harnesses.

Each integration lives in its own module and is imported only when asked for; judgekit's core never
imports this package. What lives here:

* :mod:`~judgekit.integrations.grading`: what every integration shares: :class:`~.grading.LayeredGrader`
  (the deterministic layers, optionally with the judge-backed rubric layer, combined into one
  :class:`~judgekit.verdict.Grade`) and :func:`~.grading.explain` (a grade as readable text).
* :mod:`~judgekit.integrations.inspect`: an Inspect AI scorer (extra ``judgekit-agents[inspect]``).
* :mod:`~judgekit.integrations.pytest_plugin`: a pytest plugin (``assert_grade``, fixtures, golden cases
  as parametrised tests), registered through the ``pytest11`` entry point.
* :mod:`~judgekit.integrations.promptfoo`: a promptfoo Python assertion (``get_assert``).
* :mod:`~judgekit.integrations.taubench`: tau-bench tasks and trajectories as judgekit cases and
  transcripts, graded on judgekit's layers.
* :mod:`~judgekit.integrations.taubench_reward`: tau-bench's reward, exactly, per version of tau-bench.
* :mod:`~judgekit.integrations.taubench_replay`: copy-on-write replay of tool calls over one database.
* :mod:`~judgekit.integrations.taubench_lint`: which tau-bench tasks a do-nothing agent gets reward 1 on.
* :mod:`~judgekit.integrations.tau2bench`: tau2-bench results as cases and transcripts, its reward
  reproduced and audited.
* :mod:`~judgekit.integrations.ray_grading`: the deterministic layers of many trials checked on a Ray
  cluster (Ray Data) for ``judgekit grade --ray``, or graded there into lines, line for line what
  ``judgekit grade`` writes (extra ``judgekit-agents[ray]``).

What may import it: ``cli``, ``commands`` and ``demo`` (the layers above it). It may import ``api`` and
everything below.
"""

from __future__ import annotations

__all__: list[str] = []
