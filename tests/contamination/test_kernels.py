"""The compiled kernels agree with the numpy reference of hash scheme jk-c1, value for value."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contamination.conftest import ACCEPTANCE, KEY_BYTES, OPENING
from judgekit.contamination.index import (
    key_from_bytes,
    prefilter,
    sliding_window_values,
    token_prefix,
    token_spans,
    token_values,
)
from judgekit.contamination.kernels import (
    Workspace,
    fold_spans_and_values,
    scan_buffer,
    spans_and_values,
    window_candidates,
)
from judgekit.contamination.normalise import ASCII_FOLD_TABLE, fold_many

KEY = key_from_bytes(KEY_BYTES)

_text = st.lists(
    st.one_of(
        st.sampled_from(
            ["charged", "twice", "Straße", "ＦＵＬＬ", "東京都", "a" * 9, "b" * 17, "c" * 25, "42"]
        ),
        st.text(min_size=0, max_size=12),
        st.sampled_from([" ", "\n", "\r\n", "\u2028", " -- ", "\t"]),
    ),
    max_size=40,
).map("".join)


def _reference(buf: np.ndarray) -> tuple[object, np.ndarray, np.ndarray]:
    sp = token_spans(buf)
    values = token_values(buf, sp, KEY)
    return sp, values, token_prefix(values)


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(_text, max_size=8))
def test_spans_values_and_prefix_equal_the_reference(texts: list[str]) -> None:
    buf = np.frombuffer(fold_many(texts), dtype=np.uint8)
    ref_spans, ref_values, ref_prefix = _reference(buf)
    work = Workspace()
    for _ in range(2):  # a reused workspace gives the same result
        spans, values, prefix = spans_and_values(buf, KEY, work)
        for name in ("starts", "ends", "text_first", "line_first"):
            assert np.array_equal(getattr(spans, name), getattr(ref_spans, name)), name
        assert np.array_equal(values, ref_values)
        assert np.array_equal(prefix, ref_prefix)


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(_text, min_size=1, max_size=6),
    n=st.integers(min_value=4, max_value=16),
    seed=st.integers(0, 9),
)
def test_window_candidates_equal_the_reference_bitmap_probe(texts: list[str], n: int, seed: int) -> None:
    buf = np.frombuffer(fold_many([*texts, OPENING, ACCEPTANCE]), dtype=np.uint8)
    _, values, prefix = spans_and_values(buf, KEY)
    bits = 16
    shift = 32 - bits
    rng = np.random.default_rng(seed)
    bitmap = rng.integers(0, 256, size=1 << (bits - 3), dtype=np.uint8) & rng.integers(
        0, 256, size=1 << (bits - 3), dtype=np.uint8
    )
    first, pf = window_candidates(values, n, KEY, bitmap, shift)
    if len(values) < n:
        assert len(first) == 0
        return
    ref_pf = prefilter(sliding_window_values(prefix, n), KEY.win)
    top = ref_pf >> np.uint32(shift)
    hit = (bitmap[top >> np.uint32(3)] >> (top & np.uint32(7)).astype(np.uint8)) & 1
    expected = np.flatnonzero(hit)
    assert np.array_equal(first, expected)
    assert np.array_equal(pf, ref_pf[expected])


@pytest.mark.parametrize("texts", [[], [""], ["", ""], ["!!! ---"], ["\n\n"]])
def test_buffers_without_tokens(texts: list[str]) -> None:
    buf = np.frombuffer(fold_many(texts), dtype=np.uint8)
    spans, values, prefix = spans_and_values(buf, KEY)
    ref_spans, _, _ = _reference(buf)
    assert len(values) == 0
    assert list(prefix) == [0]
    assert np.array_equal(spans.text_first, ref_spans.text_first)
    assert np.array_equal(spans.line_first, ref_spans.line_first)
    assert len(window_candidates(values, 13, KEY, np.full(1 << 13, 255, dtype=np.uint8), 16)[0]) == 0


def test_a_pickled_workspace_is_empty_and_usable() -> None:
    import pickle

    buf = np.frombuffer(fold_many([OPENING * 50]), dtype=np.uint8)
    work = Workspace()
    spans_and_values(buf, KEY, work)
    assert work.edges.nbytes > len(buf)
    copy = pickle.loads(pickle.dumps(work))
    assert copy.edges.nbytes == 0
    assert np.array_equal(spans_and_values(buf, KEY, copy)[1], spans_and_values(buf, KEY, work)[1])


def test_without_numba_the_scan_finds_the_same_leaks(tmp_path) -> None:
    """numba is the optional ``fast`` extra: without it the numpy reference gives the same findings."""
    import json
    import subprocess
    import sys

    from judgekit.contamination import kernels

    assert kernels.COMPILED, "the dev group installs numba, so the compiled kernels are the ones tested here"
    script = f"""
import sys, json
if sys.argv[1] == "blocked":
    sys.modules["numba"] = None  # `import numba` now raises ImportError
import numpy as np
from judgekit.contamination import kernels
from judgekit.contamination.index import key_from_bytes
from judgekit.contamination.normalise import fold_many
key = key_from_bytes({KEY_BYTES!r})
buf = np.frombuffer(fold_many([{OPENING!r} * 3, "unrelated words here", {ACCEPTANCE!r}]), dtype=np.uint8)
spans, values, prefix = kernels.spans_and_values(buf, key)
bitmap = np.full(1 << 13, 0x5A, dtype=np.uint8)
first, pf = kernels.window_candidates(values, 13, key, bitmap, 16)
print(json.dumps([kernels.COMPILED, spans.starts.tolist(), values.tolist(), prefix.tolist(),
                  first.tolist(), pf.tolist()]))
"""
    runs = {
        mode: json.loads(
            subprocess.run(
                [sys.executable, "-c", script, mode], capture_output=True, text=True, check=True
            ).stdout
        )
        for mode in ("blocked", "compiled")
    }
    assert runs["blocked"][0] is False
    assert runs["compiled"][0] is True
    assert runs["blocked"][1:] == runs["compiled"][1:]
    assert runs["blocked"][4], "some windows are candidates"


_ascii_text = st.lists(
    st.one_of(
        st.text(alphabet=st.characters(min_codepoint=2, max_codepoint=127), max_size=12),
        st.sampled_from(["Charged TWICE", "a" * 9, "b" * 17, "\r\n", "\x0b", "\x1c", " -- ", "_x_"]),
    ),
    max_size=30,
).map("".join)


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(_ascii_text, min_size=1, max_size=8))
def test_kernel_folds_ascii_texts_as_fold_many_does(texts: list[str]) -> None:
    raw = np.frombuffer("\x01".join(texts).encode("ascii"), dtype=np.uint8)
    table = np.frombuffer(ASCII_FOLD_TABLE, dtype=np.uint8)
    expected = np.frombuffer(fold_many(texts), dtype=np.uint8)
    folded, spans, values, prefix = fold_spans_and_values(raw, table, KEY, Workspace())
    assert folded.tobytes() == expected.tobytes()
    ref_spans, ref_values, ref_prefix = _reference(expected)
    for name in ("starts", "ends", "text_first", "line_first"):
        assert np.array_equal(getattr(spans, name), getattr(ref_spans, name)), name
    assert np.array_equal(values, ref_values)
    assert np.array_equal(prefix, ref_prefix)


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(_text, min_size=1, max_size=6), n=st.integers(min_value=4, max_value=16))
def test_scan_buffer_gives_the_windows_of_window_candidates(texts: list[str], n: int) -> None:
    buf = np.frombuffer(fold_many([*texts, OPENING, ACCEPTANCE]), dtype=np.uint8)
    bitmap = np.random.default_rng(n).integers(0, 256, size=1 << 13, dtype=np.uint8)
    _, _, values, _, first, pf = scan_buffer(buf, np.arange(256, dtype=np.uint8), KEY, (n, bitmap, 16))
    ref_first, ref_pf = window_candidates(values.copy(), n, KEY, bitmap, 16)
    assert np.array_equal(first, ref_first)
    assert np.array_equal(pf, ref_pf)


def test_loading_the_kernels_leaves_scipy_linear_algebra_unimported() -> None:
    """numba's first load imports SciPy's linear algebra only to probe for BLAS; judgekit skips that."""
    import subprocess
    import sys

    script = """
import sys, numpy as np
from judgekit.contamination import kernels
from judgekit.contamination.index import key_from_bytes
kernels.scan_buffer(np.frombuffer(b"a b c d", dtype=np.uint8), kernels.IDENTITY, key_from_bytes(b"k" * 16))
assert "scipy.linalg.cython_blas" not in sys.modules, "the hiding entry must be removed again"
print("scipy.linalg" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@settings(max_examples=100, deadline=None)
@given(
    hay=st.lists(st.integers(0, 2**32 - 1), max_size=300),
    needles=st.lists(st.integers(0, 2**32 - 1), max_size=100),
    take=st.integers(0, 50),
)
def test_member_equals_searchsorted(hay: list[int], needles: list[int], take: int) -> None:
    from judgekit.contamination.kernels import member

    table = np.unique(np.array(hay, dtype=np.uint32))
    values = np.array(needles + hay[:take], dtype=np.uint32)
    expected = np.isin(values, table)
    assert member(values, table).tolist() == expected.tolist()


@settings(max_examples=100, deadline=None)
@given(
    hay=st.lists(st.integers(0, 2**32 - 1), max_size=300),
    needles=st.lists(st.integers(0, 2**32 - 1), max_size=100),
    take=st.integers(0, 50),
    per_bucket=st.sampled_from([1, 4, 64]),
)
def test_member_in_buckets_equals_isin(
    hay: list[int], needles: list[int], take: int, per_bucket: int
) -> None:
    from judgekit.contamination.kernels import bucket_starts, member

    table = np.unique(np.array(hay, dtype=np.uint32))
    # the first and last values of a bucket, and the values just outside the table, as needles too
    edges = [0, 2**32 - 1, *(v + d for v in hay[:take] for d in (-1, 1) if 0 <= v + d < 2**32)]
    values = np.array(needles + hay[:take] + edges, dtype=np.uint32)
    buckets = bucket_starts(table, per_bucket)
    starts, shift = buckets
    assert starts[0] == 0
    assert starts[-1] == len(table)
    assert all(((table[starts[b] : starts[b + 1]] >> shift) == b).all() for b in range(len(starts) - 1))
    assert member(values, table, buckets).tolist() == np.isin(values, table).tolist()


def test_powers_by_doubling_equal_cumprod() -> None:
    from judgekit.contamination.index import TOKEN_MULTIPLIER, _powers

    for m in (TOKEN_MULTIPLIER, pow(TOKEN_MULTIPLIER, -1, 1 << 64), 3):
        with np.errstate(over="ignore"):
            ref = np.full(1 << 12, m, dtype=np.uint64)
            ref[0] = 1
            ref = np.cumprod(ref, dtype=np.uint64)
        assert np.array_equal(_powers(m, 1 << 12), ref)
