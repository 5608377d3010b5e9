"""Contamination checks: a keyed hash index of the golden set, and scanners for training exports.

See ``docs/contamination.md``. What lives here:

* :mod:`~judgekit.contamination.normalise`: text folding (normalisation version 1).
* :mod:`~judgekit.contamination.index`: keyed hashing and the index file format.
* :mod:`~judgekit.contamination.keys`: a new key file (owner-only, never overwritten) and a set's canary.
* :mod:`~judgekit.contamination.build`: a golden set (or a file of case texts) indexed in one call.
* :mod:`~judgekit.contamination.scan`: the matcher and the streaming JSONL scanner.
* :mod:`~judgekit.contamination.kernels`: the compiled scanning kernels (numba, optional).
* :mod:`~judgekit.contamination.parallel`: files and byte ranges across processes.
* :mod:`~judgekit.contamination.arrow`: a pure function over Arrow record batches for distributed engines.
* :mod:`~judgekit.contamination.report`: the report model and its renderers.

What may import it: the layers above it in the import contract (``batch_grading`` up to ``cli``);
``reports``, ``golden``, ``runner`` and ``judge_setup`` are its siblings and do not. It may import
``calibration`` and below.
"""
