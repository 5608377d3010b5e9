"""Contamination checks: a keyed hash index of the golden set, and scanners for training exports.

See ``docs/contamination.md``. The modules: :mod:`.normalise` (text folding), :mod:`.index` (keyed
hashing and the index file format), :mod:`.scan` (the matcher and the streaming JSONL scanner),
:mod:`.parallel` (files and byte ranges across processes), :mod:`.arrow` (a pure function over Arrow
record batches for distributed engines) and :mod:`.report` (the report model and its renderers).
"""
