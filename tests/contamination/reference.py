"""An independent, pure-Python implementation of hash scheme jk-c1 (docs/contamination.md).

It follows the written specification one integer at a time, without numpy, so that the vectorised
production code and the golden vectors are checked against a second reading of the spec.
"""

from __future__ import annotations

import hashlib
import hmac
import unicodedata

M64 = (1 << 64) - 1
CHUNK_MULTIPLIER = 0x9E3779B97F4A7C15
TOKEN_MULTIPLIER = 0xA0761D6478BD642F


def fmix64(x: int) -> int:
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & M64
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) & M64
    x ^= x >> 33
    return x


def derive(raw: bytes) -> dict[str, object]:
    raw = raw.strip()
    master = hashlib.blake2b(raw, digest_size=32, person=b"jk-c1-master").digest()
    fp = hashlib.blake2b(b"key fingerprint", key=master, digest_size=16, person=b"jk-c1-keyfp").hexdigest()
    sub = hashlib.blake2b(b"fast subkeys", key=master, digest_size=24, person=b"jk-c1-subkeys").digest()
    return {
        "master": master,
        "fingerprint": fp,
        "tok": int.from_bytes(sub[0:8], "little"),
        "win": int.from_bytes(sub[8:16], "little"),
        "txt": int.from_bytes(sub[16:24], "little"),
    }


def tokens(text: str) -> list[str]:
    s = unicodedata.normalize("NFKC", text).casefold()
    s = unicodedata.normalize("NFKC", s)
    return "".join(ch if ch.isalnum() else " " for ch in s).split()


def token_value(token: str, tok_key: int) -> int:
    b = token.encode("utf-8")
    acc = 0
    for i in range(0, len(b), 8):
        chunk = int.from_bytes(b[i : i + 8].ljust(8, b"\0"), "little")
        acc = (acc + fmix64(chunk ^ (((i // 8 + 1) * CHUNK_MULTIPLIER) & M64))) & M64
    return fmix64(acc ^ len(b) ^ tok_key)


def run_value(values: list[int]) -> int:
    out = 0
    for j, v in enumerate(values):
        out = (out + v * pow(TOKEN_MULTIPLIER, j, 1 << 64)) & M64
    return out


def prefilter(value: int, subkey: int) -> int:
    return fmix64(value ^ subkey) >> 32


def shingle_digest(master: bytes, toks: list[str]) -> int:
    d = hashlib.blake2b(" ".join(toks).encode("utf-8"), key=master, digest_size=8, person=b"jk-c1-shingle")
    return int.from_bytes(d.digest(), "little")


def text_digest(master: bytes, toks: list[str]) -> int:
    d = hashlib.blake2b(" ".join(toks).encode("utf-8"), key=master, digest_size=8, person=b"jk-c1-text")
    return int.from_bytes(d.digest(), "little")


def index_mac_key(master: bytes) -> bytes:
    """The index MAC key of format version 2: HMAC-SHA256 of "judgekit index mac v1" keyed with master."""
    return hmac.new(master, b"judgekit index mac v1", hashlib.sha256).digest()


def index_tag(master: bytes, file_bytes: bytes) -> bytes:
    """The tag an index file must end with: HMAC-SHA256 over every byte before the last 32."""
    return hmac.new(index_mac_key(master), file_bytes[:-32], hashlib.sha256).digest()


def canary(master: bytes, set_name: str) -> str:
    d = hashlib.blake2b(set_name.encode("utf-8"), key=master, digest_size=16, person=b"jk-c1-canary")
    return "JUDGEKIT-CANARY-" + d.hexdigest().upper()


def entries(text: str, raw_key: bytes, n: int) -> dict[str, object]:
    k = derive(raw_key)
    toks = tokens(text)
    vals = [token_value(t, k["tok"]) for t in toks]  # type: ignore[arg-type]
    shingles = []
    for i in range(len(toks) - n + 1):
        shingles.append(
            {
                "offset": i,
                "digest": f"{shingle_digest(k['master'], toks[i : i + n]):016x}",  # type: ignore[arg-type]
                "prefilter": prefilter(run_value(vals[i : i + n]), k["win"]),  # type: ignore[arg-type]
            }
        )
    return {
        "text": text,
        "canonical": " ".join(toks),
        "tokens": toks,
        "token_values": [f"{v:016x}" for v in vals],
        "text_digest": f"{text_digest(k['master'], toks):016x}",  # type: ignore[arg-type]
        "text_prefilter": prefilter(run_value(vals), k["txt"]),  # type: ignore[arg-type]
        "shingles": shingles,
    }
