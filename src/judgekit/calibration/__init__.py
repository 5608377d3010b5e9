"""Calibration: measure an LLM judge against experts before its verdicts are trusted.

* :mod:`~judgekit.calibration.labels`: label tables (item, rater, label) and their scales.
* :mod:`~judgekit.calibration.agreement`: agreement metrics with intervals.
* :mod:`~judgekit.calibration.gate`: the trust policy and the trust verdict.
* :mod:`~judgekit.calibration.records`: calibration records, keyed by the grader's fingerprint.
* :mod:`~judgekit.calibration.trust`: the one trust function (calibration records, bias reports and
  failure-mode records), :class:`~judgekit.calibration.trust.TrustBook`.
* :mod:`~judgekit.calibration.compare`: old vs new grader on the same labels.
* :mod:`~judgekit.calibration.beyond`: corrected failure rates and selective judging.
"""
