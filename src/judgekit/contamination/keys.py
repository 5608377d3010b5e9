"""A contamination key and a set's canary, as the ``keygen`` and ``canary`` commands give them.

:func:`new_key` writes a new random 256-bit key (hex, readable only by its owner) and returns the
``contamination_key`` document (:class:`KeyDocument`), which names the key's public fingerprint, never the
key. :func:`canary_document` returns the ``canary`` document (:class:`CanaryDocument`): the canary string
a set's case files embed so that a scan reports it verbatim.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from judgekit.contamination.index import Key, canary_for, key_from_bytes
from judgekit.errors import JudgekitError
from judgekit.io.atomic import create_new
from judgekit.verdict import FrozenModel, WrittenFile

__all__ = ["KEY_WARNING", "CanaryDocument", "KeyDocument", "canary_document", "new_key"]

#: What the holder of a key must know (printed by ``keygen``).
KEY_WARNING = "keep it secret: anyone with it and the index can test guesses of case text"


class KeyDocument(FrozenModel):
    """A new key written (the ``contamination_key`` document).

    Attributes:
        path: The key file.
        key_fingerprint: The key's public fingerprint (:attr:`judgekit.contamination.index.Key.fingerprint`).
        bits: The key's length in bits (256).
        written: The files written (the key file).
        warning: :data:`KEY_WARNING`.
    """

    path: str
    key_fingerprint: str
    bits: int
    written: list[WrittenFile]
    warning: str = KEY_WARNING


def new_key(out: str | os.PathLike[str]) -> KeyDocument:
    """Write a new random 256-bit key (64 hex digits and a newline), readable only by its owner.

    Args:
        out: The key file; it must not exist.

    Returns:
        The document naming the file and the key's fingerprint (never the key).

    Raises:
        JudgekitError: (exit 1) When ``out`` exists: a key is never overwritten.
    """
    path = Path(out)
    secret = secrets.token_hex(32)
    try:
        # redact=False: the file IS the secret the user asked for (random hex, owner-only, never shared).
        create_new(path, secret + "\n", mode=0o600, redact=False)
    except FileExistsError:
        raise JudgekitError(
            f"{path}: already exists; a key is never overwritten (choose another --out)"
        ) from None
    return KeyDocument(
        path=str(path),
        key_fingerprint=key_from_bytes(secret.encode("ascii")).fingerprint,
        bits=256,
        written=[WrittenFile(path=str(path), what="contamination_key")],
    )


class CanaryDocument(FrozenModel):
    """A set's canary (the ``canary`` document).

    Attributes:
        set_name: The set's name, as given to ``contamination index``.
        canary: The canary string.
        key_fingerprint: The fingerprint of the key it was made with.
    """

    set_name: str
    canary: str
    key_fingerprint: str


def canary_document(key: Key, set_name: str) -> CanaryDocument:
    """The canary of the set called ``set_name`` under ``key`` (see ``contamination.index.canary_for``).

    Args:
        key: The contamination key.
        set_name: The set's name.

    Returns:
        The document.
    """
    return CanaryDocument(
        set_name=set_name, canary=canary_for(key, set_name), key_fingerprint=key.fingerprint
    )
