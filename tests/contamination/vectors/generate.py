"""Regenerate ``jk-c1.json``: the golden vectors of hash scheme jk-c1 and index format version 3.

Hashes come from the independent pure-Python reference (``tests/contamination/reference.py``); the index
file hash comes from judgekit itself. Run it only when introducing a new scheme or format version (and
bump the version): the point of the vectors is that they never change for an existing version.

    .venv/bin/python tests/contamination/vectors/generate.py
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
import unicodedata
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent.parent))

from contamination import reference  # noqa: E402
from judgekit.contamination.index import (  # noqa: E402
    IndexOptions,
    build_index,
    canary_for,
    key_from_bytes,
    write_index,
)

KEY = b"judgekit-contamination-test-vector-key-v1"
SHINGLE_SIZE = 13
TEXTS = [
    "I got charged twice for November and I want the money back today, please: it's urgent!",
    "Ｆｕｌｌ-width ＡＢＣ and the ﬁle: Straße, ÉCOLE naïve café—über 42.5% ½ Ⅻ İstanbul ΟΔΥΣΣΕΥΣ snake_case",
    "pneumonoultramicroscopicsilicovolcanoconiosis antidisestablishmentarianism is long; "
    "日本語のテキストも処理します "
    "and 0123456789abcdef0123 with tabs\tand\r\nCRLF lines\u2028and separators, one two three four five",
    "Wants the refund on the card, not a credit",
]
CASES = [
    ("vec-1", [("input", TEXTS[0]), ("user.hidden_facts.0", TEXTS[3])]),
    ("vec-2", [("input", TEXTS[1]), ("acceptance", TEXTS[2]), ("paraphrases.0", "   ...   ")]),
]


def main() -> None:
    k = reference.derive(KEY)
    key = key_from_bytes(KEY)
    opts = IndexOptions(shingle_size=SHINGLE_SIZE, canaries=(canary_for(key, "vectors"),))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "vectors.jkc"
        write_index(build_index(CASES, key, opts), path, key)
        data = path.read_bytes()
    out = {
        "hash_scheme": "jk-c1",
        "format_version": 3,
        "normalisation_version": 1,
        "unicode_version": unicodedata.unidata_version,
        "key": KEY.decode(),
        "key_fingerprint": k["fingerprint"],
        "index_mac_key": reference.index_mac_key(k["master"]).hex(),  # type: ignore[arg-type]
        "canary": {"set_name": "vectors", "canary": reference.canary(k["master"], "vectors")},  # type: ignore[arg-type]
        "shingle_size": SHINGLE_SIZE,
        "texts": [reference.entries(t, KEY, SHINGLE_SIZE) for t in TEXTS],
        "index": {
            "cases": CASES,
            "canaries": ["vectors"],
            "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data),
        },
    }
    (HERE / "jk-c1.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
