"""Grader layers: each turns one (case, transcript) into checks.

What lives here. Deterministic layers (pure, synchronous, never mutate their inputs):

* :mod:`judgekit.graders.state`: the end state against the expected state, collateral changes;
* :mod:`judgekit.graders.rules`: forbidden trajectories (CEL conditions over calls, state rows, messages);
* :mod:`judgekit.graders.route`: the expected route, matched as an assignment problem;
* :mod:`judgekit.graders.text`: must-mention and must-not-mention over assistant messages;
* :mod:`judgekit.graders.fixture`: each trial starts from the case's fixture, not an earlier trial's world;
* :mod:`judgekit.graders.grounding`: the case's expected sources were retrieved or cited.

The judge-backed layer and what combines the layers:

* :mod:`judgekit.graders.rubric`: one check per rubric criterion, asked of a judge, with trust;
* :mod:`judgekit.graders.layered`: all of them on one trial, and gates combined with a quality score;
* :mod:`judgekit.graders.unavailable`: the ``unavailable_data`` diagnosis ``layered`` adds to a failed trial
  whose agent went on after a tool answered with an error or no record;
* :mod:`judgekit.graders.context`: the one protocol of a layer and the context one trial's layers share;
* :mod:`judgekit.graders.registry`: which layers exist, in which order, and what each needs;
* :mod:`judgekit.graders.contract`: the grading contract every path goes through (layers and what they
  need, the expectations a case states, when a case may pass, untrusted judges, grader specs).

Submodules are imported on demand (nothing heavy happens when this package is imported).

What may import it: the layers above it in the import contract (``calibration`` up to ``cli``). It may
import ``judges`` and below; a grader never imports another grader (the ``graders`` contract).
"""
