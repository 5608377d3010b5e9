"""Grader layers: each turns one (case, transcript) into checks.

Deterministic layers (pure, synchronous, never mutate their inputs):

* :mod:`judgekit.graders.state`: the end state against the expected state, collateral changes;
* :mod:`judgekit.graders.rules`: forbidden trajectories (CEL conditions over calls, state rows, messages);
* :mod:`judgekit.graders.route`: the expected route, matched as an assignment problem;
* :mod:`judgekit.graders.text`: must-mention and must-not-mention over assistant messages;
* :mod:`judgekit.graders.layered`: all of them on one trial, and gates combined with a quality score;
* :mod:`judgekit.graders.contract`: the grading contract every path goes through (layers and what they
  need, the expectations a case states, when a case may pass, untrusted judges, grader specs).

Submodules are imported on demand (nothing heavy happens when this package is imported).
"""
