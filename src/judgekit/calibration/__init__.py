"""Calibration: measure an LLM judge against experts before its verdicts are trusted.

What lives here:

* :mod:`~judgekit.calibration.labels`: label tables (item, rater, label) and their scales.
* :mod:`~judgekit.calibration.tool_labels`: annotation tools' exports (Label Studio, Argilla, Langfuse,
  Phoenix) as label rows under each annotator, every unmappable record located.
* :mod:`~judgekit.calibration.guards`: refusals that protect the numbers (development sets, picked items).
* :mod:`~judgekit.calibration.plan`: how many expert labels per class are still needed, and which next.
* :mod:`~judgekit.calibration.agreement`: agreement metrics with intervals (judge vs experts, among experts).
* :mod:`~judgekit.calibration.ceiling`: the human ceiling: is the judge within reach of the experts?
* :mod:`~judgekit.calibration.correlation`: scored judges: Spearman, Kendall's tau-b and Pearson with
  case-bootstrap intervals, judge vs the experts' median, each expert, and among the experts.
* :mod:`~judgekit.calibration.alttest`: the alternative-annotator test: could the judge replace an expert?
* :mod:`~judgekit.calibration.pipeline`: one calibration run, from a label table to a result to render.
* :mod:`~judgekit.calibration.refine`: refinement's pure steps: split by case, disagreements, candidates.
* :mod:`~judgekit.calibration.gate`: the trust policy and the trust verdict.
* :mod:`~judgekit.calibration.records`: calibration records, keyed by the grader's fingerprint.
* :mod:`~judgekit.calibration.fingerprints`: a typed fingerprint or prefix resolved to one full fingerprint.
* :mod:`~judgekit.calibration.families`: one gate per failure mode, with a family-wise correction.
* :mod:`~judgekit.calibration.bias`: placebo-controlled bias probes of a judge-backed grader.
* :mod:`~judgekit.calibration.position`: position consistency of a pairwise judge.
* :mod:`~judgekit.calibration.trust`: the one trust function (calibration records, bias reports,
  failure-mode records and canary checks), :class:`~judgekit.calibration.trust.TrustBook`.
* :mod:`~judgekit.calibration.canary`: drift canaries: the canary set kept with a record, the checks.
* :mod:`~judgekit.calibration.drift`: the canaries' always-valid sequential test (e-values, Ville).
* :mod:`~judgekit.calibration.compare`: old vs new grader on the same labels.
* :mod:`~judgekit.calibration.corrected`: pass rates carrying the test and calibration uncertainty.
* :mod:`~judgekit.calibration.beyond`: corrected failure rates and selective judging.
* :mod:`~judgekit.calibration.selective`: judge only where the judge agrees with experts, escalate the rest.
* :mod:`~judgekit.calibration.jury`: a jury's members, correlated errors, effective votes, weights.

What may import it: the layers above it in the import contract (``reports``, ``golden``, ``runner``,
``contamination``, ``judge_setup`` and up to ``cli``). It may import ``graders``, ``judges`` and below; it
never prints.
"""
