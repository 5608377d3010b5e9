"""File input and output: plain reading and writing of files, under the hostile-input limits.

What lives here:

* :mod:`~judgekit.io.documents`: YAML and JSON documents read with the location of every field, bounded.
* :mod:`~judgekit.io.atomic`: every file write: redacted, where the user meant, atomic or one whole line.
* :mod:`~judgekit.io.paths`: input paths, folders and glob patterns, expanded in one place.
* :mod:`~judgekit.io.folders`: output folders written whole (staged, then swapped in).
* :mod:`~judgekit.io.filekind`: what kind of file a path is; only regular files are read or written.
* :mod:`~judgekit.io.ranges`: byte ranges of a line file cut at line boundaries, for reading it in parts.

What may import it: every layer above it in the import contract (``transcript``, ``results``, ``cases``
and up to ``cli``). It imports only ``secrets``, ``errors`` and the standard library; formats of other
harnesses live in :mod:`judgekit.formats`.
"""
