"""Golden-set tooling: coverage, exports, candidate promotion, the re-baselining guard.

What lives here:

* :mod:`~judgekit.golden.splits`: capability, regression and holdout cases; holdouts kept out of routine work.
* :mod:`~judgekit.golden.coverage`: the mix of cases and the tools and sources they expect.
* :mod:`~judgekit.golden.lint`: do-nothing passes, expectations nobody checks, broken references.
* :mod:`~judgekit.golden.references`: every grader layer run on each case's own reference solution.
* :mod:`~judgekit.golden.pii`: a personal-data scanner for golden cases.
* :mod:`~judgekit.golden.export`: the golden set in other tools' test-set formats.
* :mod:`~judgekit.golden.generate`: generated candidate cases (a model writes, a person decides).
* :mod:`~judgekit.golden.intake`: an escalation or incident record becomes a sanitised regression candidate.
* :mod:`~judgekit.golden.promote`: reviewed candidates promoted into the golden set.
* :mod:`~judgekit.golden.retire`: saturated capability cases moved to the regression split.
* :mod:`~judgekit.golden.journal`: the journal that makes promote and retire all or nothing under ``kill -9``.
* :mod:`~judgekit.golden.rebaseline`: what a case's grading depends on must not change without a version bump.
* :mod:`~judgekit.golden.reconcile`: double resolution by two experts; every difference is a finding.
* :mod:`~judgekit.golden.review_labels`: a filled-in review sheet read back as a label table.
* :mod:`~judgekit.golden.label_page`: an expert's labelling page, one trial and one criterion at a time.
* :mod:`~judgekit.golden.label_reconcile`: two experts' label tables compared item by item.
* :mod:`~judgekit.golden.validation`: a loaded set's problems plus a half-done edit and personal data.
* :mod:`~judgekit.golden.sample`: seeded, stratified review samples of graded transcripts.

What may import it: the layers above it in the import contract (``batch_grading`` up to ``cli``);
``reports``, ``runner``, ``contamination`` and ``judge_setup`` are its siblings and do not. It may import
``calibration`` and below.
"""
