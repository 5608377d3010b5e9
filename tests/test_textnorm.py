"""The text-normalisation profiles: outputs pinned on hostile strings, idempotence, stored keys unchanged.

The expected values were computed (under Unicode 14.0.0) by the code each profile replaced: the eight
modules that normalised on their own before ``judgekit.textnorm`` existed. A failing pin means a profile
now normalises some text differently, which changes stored keys (contamination index entries, few-shot
digests, canonical state hashes): make such a change only deliberately, bump the profile's version and
update the pins."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from judgekit import textnorm
from judgekit.calibration.guards import text_digest
from judgekit.contamination.index import IndexOptions, build_index, key_from_bytes, write_index
from judgekit.judges.cache import request_key
from judgekit.state import canonical_hash
from judgekit.textnorm import PROFILES, UNICODE_VERSION, Profile

HOSTILE: tuple[str, ...] = (
    "",
    "   ",
    "plain ascii, Hello World!",
    "  lead\ttab\nnewline\r\nend  ",
    "\ufb01nd my bag \ufb03",
    "\uff28\uff45\uff4c\uff4c\uff4f\u3000\uff37\uff4f\uff52\uff4c\uff44\uff01",
    "x\u00b2 \u2460 \u338f \u210c \u00bd \u216b \u2126 \u212b",
    "pa\u200bss a\u200db \u2060join\u00adt",
    "\ufeffREVIEW: ok",
    "\u3164REVIEW:",
    "\uff32\uff25\uff36\uff29\uff25\uff37\uff1a check",
    "e\u0301 \u00e9 A\u030a",
    "\u201cquoted\u201d \u2018single\u2019 it\u2019s \u201ehigh\u201f \u2032 \u2033",
    "a\u2013b\u2014c\u2212d\u2010e\u2011f\u2012g\u2015h",
    "MiXeD CaSe Stra\u00dfe \u03a3\u0391\u03a3 \u01c5",
    "\u01f0 \u1e96 \u0390",
    "\u0131 \u0130stanbul I i",
    "can\u2019t can\u02bct can`t can\uff07t can\u00b4t",
    " Insufficient-Information\u200b",
    "pass - fail  \u2014 under_score",
    "Hello, world! (test) [x] {y} #1 @me 50%",
    "a\x00b\x1fc\x1cd\x85e\u2028f\u2029g\x0bh\x0ci",
    "\u00a0nbsp\u2003em\u202fnarrow\u205f",
    "\u200e\u200fbidi\u202e\u2066x\u2069\u180e",
    "\U0001f469\u200d\U0001f4bb \U0001f44d\U0001f3fd",
    "p\u0430ss \u0440\u0435view",
    "\ud55c\uad6d\uc5b4 \u1100\u1161",
    "\ufefb \ufdfa",
    "\ud800 lone surrogate",
    "\ue000private \U000e0041tag",
    "line one\nline two\n\nline four",
    "\u2474 \u24b6 \u1d43 \u2090",
)
"""Strings that each normalisation treats differently: compatibility forms, fullwidth letters, ligatures,
zero-width characters and joiners, byte order marks, combining marks, typographic quotes and dashes,
mixed case, the Turkish dotless and dotted i, controls, line separators, a lone surrogate."""

EXPECTED: dict[str, tuple[str, ...]] = {
    "quote_matching": (
        "",
        "",
        "plain ascii, hello world!",
        "lead tab newline end",
        "find my bag ffi",
        "hello world!",
        "x2 1 kg h 1⁄2 xii ω å",
        "pass ab joint",
        "review: ok",
        "ᅠreview:",
        "review: check",
        "é é å",
        "“quoted” ‘single’ it’s „high‟ ′ ′′",
        "a–b—c−d‐e‐f‒g―h",
        "mixed case strasse σασ dž",
        "ǰ ẖ ΐ",
        "ı i̇stanbul i i",
        "can’t canʼt can`t can't can ́t",
        "insufficient-information",
        "pass - fail — under_score",
        "hello, world! (test) [x] {y} #1 @me 50%",
        "a\x00b c d e f g h i",
        "nbsp em narrow",
        "bidi\u202e\u2066x\u2069",
        "👩💻 👍🏽",
        "pаss реview",
        "한국어 가",
        "لا صلى الله عليه وسلم",
        "\ud800 lone surrogate",
        "\ue000private \U000e0041tag",
        "line one line two line four",
        "(1) a a a",
    ),
    "verdict_options": (
        "",
        "",
        "plain_ascii,_hello_world!",
        "lead_tab_newline_end",
        "find_my_bag_ffi",
        "ｈｅｌｌｏ_ｗｏｒｌｄ！",
        "x²_①_㎏_ℌ_½_ⅻ_ω_å",
        "pass_ab_joint",
        "review:_ok",
        "ㅤreview:",
        "ｒｅｖｉｅｗ：_check",
        "é_é_å",
        "“quoted”_‘single’_it’s_„high‟_′_″",
        "a–b—c−d‐e‑f‒g―h",
        "mixed_case_strasse_σασ_ǆ",
        "ǰ_ẖ_ΐ",
        "ı_i̇stanbul_i_i",
        "can’t_canʼt_can`t_can＇t_can´t",
        "insufficient_information",
        "pass_fail_—_under_score",
        "hello,_world!_(test)_[x]_{y}_#1_@me_50%",
        "a\x00b_c_d_e_f_g_h_i",
        "nbsp_em_narrow",
        "bidi\u202e\u2066x\u2069",
        "👩💻_👍🏽",
        "pаss_реview",
        "한국어_가",
        "ﻻ_ﷺ",
        "\ud800_lone_surrogate",
        "\ue000private_\U000e0041tag",
        "line_one_line_two_line_four",
        "⑴_ⓐ_ᵃ_ₐ",
    ),
    "reply_keys": (
        "",
        "",
        "plainascii,helloworld!",
        "leadtabnewlineend",
        "findmybagffi",
        "helloworld!",
        "x21kgh1⁄2xiiωå",
        "passabjoint",
        "review:ok",
        "ᅠreview:",
        "review:check",
        "ééå",
        "“quoted”‘single’it’s„high‟′′′",
        "a–b—c−d‐e‐f‒g―h",
        "mixedcasestrasseσασdž",
        "ǰẖΐ",
        "ıi̇stanbulii",
        "can’tcanʼtcan`tcan'tcańt",
        "insufficient-information",
        "pass-fail—under_score",
        "hello,world!(test)[x]{y}#1@me50%",
        "a\x00bcdefghi",
        "nbspemnarrow",
        "bidix",
        "👩💻👍🏽",
        "pаssреview",
        "한국어가",
        "لاصلىاللهعليهوسلم",
        "\ud800lonesurrogate",
        "\ue000privatetag",
        "lineonelinetwolinefour",
        "(1)aaa",
    ),
    "refusal_prose": (
        "",
        " ",
        "plain ascii, hello world!",
        " lead tab newline end ",
        "find my bag ffi",
        "hello world!",
        "x2 1 kg h 1⁄2 xii ω å",
        "pass ab joint",
        "review: ok",
        "ᅠreview:",
        "review: check",
        "é é å",
        "“quoted” 'single' it's „high‟ ' ''",
        "a–b—c−d‐e‐f‒g―h",
        "mixed case strasse σασ dž",
        "ǰ ẖ ΐ",
        "ı i̇stanbul i i",
        "can't can't can't can't can ́t",
        " insufficient-information",
        "pass - fail — under_score",
        "hello, world! (test) [x] {y} #1 @me 50%",
        "a\x00b c d e f g h i",
        " nbsp em narrow ",
        "bidix",
        "👩💻 👍🏽",
        "pаss реview",
        "한국어 가",
        "لا صلى الله عليه وسلم",
        "\ud800 lone surrogate",
        "\ue000private tag",
        "line one line two line four",
        "(1) a a a",
    ),
    "text_matching": (
        "",
        "",
        "plain ascii, hello world!",
        "lead tab newline end",
        "find my bag ffi",
        "hello world!",
        "x2 1 kg h 1⁄2 xii ω å",
        "pass ab joint",
        "review: ok",
        "ᅠreview:",
        "review: check",
        "é é å",
        "\"quoted\" 'single' it's \"high\" ' ''",
        "a-b-c-d-e-f-g-h",
        "mixed case strasse σασ dž",
        "ǰ ẖ ΐ",
        "ı i̇stanbul i i",
        "can't canʼt can`t can't can ́t",
        "insufficient-information",
        "pass - fail - under_score",
        "hello, world! (test) [x] {y} #1 @me 50%",
        "a\x00b c d e f g h i",
        "nbsp em narrow",
        "bidix",
        "👩💻 👍🏽",
        "pаss реview",
        "한국어 가",
        "لا صلى الله عليه وسلم",
        "\ud800 lone surrogate",
        "\ue000private tag",
        "line one line two line four",
        "(1) a a a",
    ),
    "text_patterns": (
        "",
        "",
        "plain ascii, Hello World!",
        "lead tab newline end",
        "find my bag ffi",
        "Hello World!",
        "x2 1 kg H 1⁄2 XII Ω Å",
        "pass ab joint",
        "REVIEW: ok",
        "ᅠREVIEW:",
        "REVIEW: check",
        "é é Å",
        "\"quoted\" 'single' it's \"high\" ' ''",
        "a-b-c-d-e-f-g-h",
        "MiXeD CaSe Straße ΣΑΣ Dž",
        "ǰ ẖ ΐ",
        "ı İstanbul I i",
        "can't canʼt can`t can't can ́t",
        "Insufficient-Information",
        "pass - fail - under_score",
        "Hello, world! (test) [x] {y} #1 @me 50%",
        "a\x00b c d e f g h i",
        "nbsp em narrow",
        "bidix",
        "👩💻 👍🏽",
        "pаss реview",
        "한국어 가",
        "لا صلى الله عليه وسلم",
        "\ud800 lone surrogate",
        "\ue000private tag",
        "line one line two line four",
        "(1) A a a",
    ),
    "words": (
        "",
        "",
        "plain ascii hello world",
        "lead tab newline end",
        "find my bag ffi",
        "hello world",
        "x2 1 kg h 1 2 xii ω å",
        "pa ss a b join t",
        "review ok",
        "ᅠreview",
        "review check",
        "é é å",
        "quoted single it s high",
        "a b c d e f g h",
        "mixed case strasse σασ dž",
        "j h ι",
        "ı i stanbul i i",
        "can t canʼt can t can t can t",
        "insufficient information",
        "pass fail under_score",
        "hello world test x y 1 me 50",
        "a b c d e f g h i",
        "nbsp em narrow",
        "bidi x",
        "",
        "pаss реview",
        "한국어 가",
        "لا صلى الله عليه وسلم",
        "lone surrogate",
        "private tag",
        "line one line two line four",
        "1 a a a",
    ),
    "text_digests": (
        "",
        "",
        "plain ascii, hello world!",
        "lead tab newline end",
        "find my bag ffi",
        "hello world!",
        "x2 1 kg h 1⁄2 xii ω å",
        "pa\u200bss a\u200db \u2060join\xadt",
        "\ufeffreview: ok",
        "ᅠreview:",
        "review: check",
        "é é å",
        "“quoted” ‘single’ it’s „high‟ ′ ′′",
        "a–b—c−d‐e‐f‒g―h",
        "mixed case strasse σασ dž",
        "ǰ ẖ ΐ",
        "ı i̇stanbul i i",
        "can’t canʼt can`t can't can ́t",
        "insufficient-information\u200b",
        "pass - fail — under_score",
        "hello, world! (test) [x] {y} #1 @me 50%",
        "a\x00b c d e f g h i",
        "nbsp em narrow",
        "\u200e\u200fbidi\u202e\u2066x\u2069\u180e",
        "👩\u200d💻 👍🏽",
        "pаss реview",
        "한국어 가",
        "لا صلى الله عليه وسلم",
        "\ud800 lone surrogate",
        "\ue000private \U000e0041tag",
        "line one line two line four",
        "(1) a a a",
    ),
    "state_text": (
        "",
        "   ",
        "plain ascii, Hello World!",
        "  lead\ttab\nnewline\r\nend  ",
        "ﬁnd my bag ﬃ",
        "Ｈｅｌｌｏ\u3000Ｗｏｒｌｄ！",
        "x² ① ㎏ ℌ ½ Ⅻ Ω Å",
        "pa\u200bss a\u200db \u2060join\xadt",
        "\ufeffREVIEW: ok",
        "ㅤREVIEW:",
        "ＲＥＶＩＥＷ： check",
        "é é Å",
        "“quoted” ‘single’ it’s „high‟ ′ ″",
        "a–b—c−d‐e‑f‒g―h",
        "MiXeD CaSe Straße ΣΑΣ ǅ",
        "ǰ ẖ ΐ",
        "ı İstanbul I i",
        "can’t canʼt can`t can＇t can´t",
        " Insufficient-Information\u200b",
        "pass - fail  — under_score",
        "Hello, world! (test) [x] {y} #1 @me 50%",
        "a\x00b\x1fc\x1cd\x85e\u2028f\u2029g\x0bh\x0ci",
        "\xa0nbsp\u2003em\u202fnarrow\u205f",
        "\u200e\u200fbidi\u202e\u2066x\u2069\u180e",
        "👩\u200d💻 👍🏽",
        "pаss реview",
        "한국어 가",
        "ﻻ ﷺ",
        "\ud800 lone surrogate",
        "\ue000private \U000e0041tag",
        "line one\nline two\n\nline four",
        "⑴ Ⓐ ᵃ ₐ",
    ),
    "review_guard": (
        "",
        "",
        "plain ascii, hello world!",
        "leadtabnewlineend  ",
        "find my bag ffi",
        "hello world!",
        "x2 1 kg h 1⁄2 xii ω a",
        "pass ab joint",
        "review: ok",
        "review:",
        "review: check",
        "e e a",
        "“quoted” ‘single’ it’s „high‟ ′ ′′",
        "a–b—c−d‐e‐f‒g―h",
        "mixed case strasse σασ dz",
        "j h ι",
        "ı istanbul i i",
        "can’t canʼt can`t can't can t",
        "insufficient-information",
        "pass - fail  — under_score",
        "hello, world! (test) [x] {y} #1 @me 50%",
        "abcdefghi",
        "nbsp em narrow ",
        "bidix",
        "👩💻 👍🏽",
        "pаss реview",
        "한국어 가",
        "لا صلى الله عليه وسلم",
        "lone surrogate",
        "private tag",
        "line oneline twoline four",
        "(1) a a a",
    ),
    "contamination": (
        "",
        "   ",
        "plain ascii  hello world ",
        "  lead tab\nnewline\n\nend  ",
        "find my bag ffi",
        "hello world ",
        "x2 1 kg h 1 2 xii ω å",
        "pa ss a b  join t",
        " review  ok",
        "ᅠreview ",
        "review  check",
        "é é å",
        " quoted   single  it s  high      ",
        "a b c d e f g h",
        "mixed case strasse σασ dž",
        "ǰ ẖ ΐ",
        "ı i stanbul i i",
        "can t canʼt can t can t can  t",
        " insufficient information ",
        "pass   fail    under score",
        "hello  world   test   x   y   1  me 50 ",
        "a b c\nd\ne\nf\ng\nh\ni",
        " nbsp em narrow ",
        "  bidi  x  ",
        "      ",
        "pаss реview",
        "한국어 가",
        "لا صلى الله عليه وسلم",
        "  lone surrogate",
        " private  tag",
        "line one\nline two\n\nline four",
        " 1  a a a",
    ),
    "lookalike_nfkc": (
        "",
        "   ",
        "plain ascii, Hello World!",
        "  lead\ttab\nnewline\r\nend  ",
        "find my bag ffi",
        "Hello World!",
        "x2 1 kg H 1⁄2 XII Ω Å",
        "pa\u200bss a\u200db \u2060join\xadt",
        "\ufeffREVIEW: ok",
        "ᅠREVIEW:",
        "REVIEW: check",
        "é é Å",
        "“quoted” ‘single’ it’s „high‟ ′ ′′",
        "a–b—c−d‐e‐f‒g―h",
        "MiXeD CaSe Straße ΣΑΣ Dž",
        "ǰ ẖ ΐ",
        "ı İstanbul I i",
        "can’t canʼt can`t can't can ́t",
        " Insufficient-Information\u200b",
        "pass - fail  — under_score",
        "Hello, world! (test) [x] {y} #1 @me 50%",
        "a\x00b\x1fc\x1cd\x85e\u2028f\u2029g\x0bh\x0ci",
        " nbsp em narrow ",
        "\u200e\u200fbidi\u202e\u2066x\u2069\u180e",
        "👩\u200d💻 👍🏽",
        "pаss реview",
        "한국어 가",
        "لا صلى الله عليه وسلم",
        "\ud800 lone surrogate",
        "\ue000private \U000e0041tag",
        "line one\nline two\n\nline four",
        "(1) A a a",
    ),
    "lookalike_nfkd": (
        "",
        "   ",
        "plain ascii, Hello World!",
        "  lead\ttab\nnewline\r\nend  ",
        "find my bag ffi",
        "Hello World!",
        "x2 1 kg H 1⁄2 XII Ω Å",
        "pa\u200bss a\u200db \u2060join\xadt",
        "\ufeffREVIEW: ok",
        "ᅠREVIEW:",
        "REVIEW: check",
        "é é Å",
        "“quoted” ‘single’ it’s „high‟ ′ ′′",
        "a–b—c−d‐e‐f‒g―h",
        "MiXeD CaSe Straße ΣΑΣ Dž",
        "ǰ ẖ ΐ",
        "ı İstanbul I i",
        "can’t canʼt can`t can't can ́t",
        " Insufficient-Information\u200b",
        "pass - fail  — under_score",
        "Hello, world! (test) [x] {y} #1 @me 50%",
        "a\x00b\x1fc\x1cd\x85e\u2028f\u2029g\x0bh\x0ci",
        " nbsp em narrow ",
        "\u200e\u200fbidi\u202e\u2066x\u2069\u180e",
        "👩\u200d💻 👍🏽",
        "pаss реview",
        "한국어 가",
        "لا صلى الله عليه وسلم",
        "\ud800 lone surrogate",
        "\ue000private \U000e0041tag",
        "line one\nline two\n\nline four",
        "(1) A a a",
    ),
    "criterion_text": (
        "",
        "",
        "plain ascii, Hello World!",
        "lead tab newline end",
        "ﬁnd my bag ﬃ",
        "Ｈｅｌｌｏ Ｗｏｒｌｄ！",
        "x² ① ㎏ ℌ ½ Ⅻ Ω Å",
        "pa\u200bss a\u200db \u2060join\xadt",
        "\ufeffREVIEW: ok",
        "ㅤREVIEW:",
        "ＲＥＶＩＥＷ： check",
        "é é Å",
        "“quoted” ‘single’ it’s „high‟ ′ ″",
        "a–b—c−d‐e‑f‒g―h",
        "MiXeD CaSe Straße ΣΑΣ ǅ",
        "ǰ ẖ ΐ",
        "ı İstanbul I i",
        "can’t canʼt can`t can＇t can´t",
        "Insufficient-Information\u200b",
        "pass - fail — under_score",
        "Hello, world! (test) [x] {y} #1 @me 50%",
        "a\x00b c d e f g h i",
        "nbsp em narrow",
        "\u200e\u200fbidi\u202e\u2066x\u2069\u180e",
        "👩\u200d💻 👍🏽",
        "pаss реview",
        "한국어 가",
        "ﻻ ﷺ",
        "\ud800 lone surrogate",
        "\ue000private \U000e0041tag",
        "line one line two line four",
        "⑴ Ⓐ ᵃ ₐ",
    ),
}
"""Each profile's output on :data:`HOSTILE`, as the code it replaced computed it."""


def test_every_profile_is_pinned() -> None:
    assert set(PROFILES) == set(EXPECTED)
    assert all(name == profile.name and profile.version.isdecimal() for name, profile in PROFILES.items())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_profile_output_is_unchanged_on_hostile_strings(name: str) -> None:
    profile = PROFILES[name]
    got = tuple(profile.apply(text) for text in HOSTILE)
    for text, want, have in zip(HOSTILE, EXPECTED[name], got, strict=True):
        assert have == want, f"{name} changed {text!r}: {want!r} became {have!r} (Unicode {UNICODE_VERSION})"


IDEMPOTENT = (
    "words",
    "text_digests",
    "state_text",
    "review_guard",
    "contamination",
    "lookalike_nfkc",
    "lookalike_nfkd",
)
"""The profiles whose replaced code was idempotent (checked on every code point in context and on random
text); the others were not, for the reason pinned in :func:`test_profile_is_not_idempotent`."""

_ALPHABET = st.one_of(
    st.characters(codec="utf-8"),
    st.sampled_from(sorted(set("".join(HOSTILE)) | set("\u200b\u0308\u0301\u00a8 \t-_aA"))),
)


@pytest.mark.parametrize("name", IDEMPOTENT)
@given(text=st.text(_ALPHABET, max_size=40))
def test_profile_is_idempotent(name: str, text: str) -> None:
    profile = PROFILES[name]
    once = profile.apply(text)
    assert profile.apply(once) == once


@pytest.mark.parametrize(
    ("name", "text", "once", "twice"),
    [
        pytest.param(name, "a\u200b\u0308", "a\u0308", "\u00e4", id=name)
        for name in (
            "quote_matching",
            "verdict_options",
            "reply_keys",
            "refusal_prose",
            "text_matching",
            "text_patterns",
        )
    ]
    + [pytest.param("reply_keys", "a \u0308", "a\u0308", "\u00e4", id="reply_keys_space")],
)
def test_profile_is_not_idempotent(name: str, text: str, once: str, twice: str) -> None:
    """Dropping a character between a letter and a combining mark leaves them to compose on a second pass."""
    profile = PROFILES[name]
    assert profile.apply(text) == once
    assert profile.apply(once) == twice


def _general_path(profile: Profile, text: str) -> str:
    for step in profile._unicode_steps:
        text = step(text)
    return text


@pytest.mark.parametrize("name", sorted(EXPECTED))
@given(text=st.text(st.characters(max_codepoint=127)))
def test_ascii_shortcut_equals_the_general_path(name: str, text: str) -> None:
    profile = PROFILES[name]
    assert profile.apply(text) == _general_path(profile, text)


def test_refold_without_casefold_is_refused() -> None:
    with pytest.raises(ValueError, match="refold needs casefold"):
        Profile(name="broken", version="1", form="NFKC", refold=True)


# ------------------------------------------------------------------------------ values stored as keys

_PINNED_TEXTS = [t for t in HOSTILE if not any(0xD800 <= ord(c) <= 0xDFFF for c in t)]
_JOINED = " ".join(_PINNED_TEXTS)


def test_contamination_index_file_is_unchanged(tmp_path: Path) -> None:
    key = key_from_bytes(b"judgekit-textnorm-pinned-key-0001")
    acceptance = "The refund of \u00a3412.18 was issued \u2014 \ufb01nal, Stra\u00dfe \u0130stanbul " * 3
    cases = [
        ("C-1", [("input", _JOINED), ("acceptance", acceptance)]),
        ("C-2", [(f"m{i}", t * 4) for i, t in enumerate(_PINNED_TEXTS)]),
    ]
    path = tmp_path / "index.jkci"
    write_index(build_index(cases, key, IndexOptions(shingle_size=4, min_text_tokens=1)), path, key)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == (
        "ac461ab72234a613e3d9274349600b1260d10f17c64ebbf30ffd0388a2ca417d"
    )


def test_few_shot_text_digest_is_unchanged() -> None:
    assert text_digest(_JOINED) == "aa0110092ac79d31b94f0c733ed1d9d6160e9856f9085650c412596e9bae17fb"


def test_canonical_state_hash_is_unchanged() -> None:
    value = {"n\u0301ame": ["e\u0301cole", "\ufb01le", "\u0130"], "k": "A\u030a"}
    assert canonical_hash(value) == "2133a0f22f44ee7d6c99ca85e0a0ab344350c3b914454ee745eedf4efaebcfa1"


def test_cassette_key_is_unchanged() -> None:
    request = {"model": "m", "messages": [{"role": "user", "content": _JOINED}], "temperature": 0}
    assert request_key(request) == "60173d05450a88e37c2864ede2e6761f84ce231711c2f82fc6e0036312332457"


def test_only_textnorm_normalises() -> None:
    """Every other module names a profile instead of calling :func:`unicodedata.normalize` itself."""
    src = Path(textnorm.__file__).parent
    calls = re.compile(r"\bunicodedata\.(?:normalize|is_normalized)\(|from unicodedata import")
    callers = {
        p.relative_to(src).as_posix()
        for p in src.rglob("*.py")
        if calls.search(p.read_text(encoding="utf-8"))
    }
    assert callers == {"textnorm.py"}


# --------------------------------------------------------------------------- excerpts (issue 35)

LONG = (
    "Thank you for waiting. I have requested the refill of your prescription RX-2231 for lisinopril "
    "and the pharmacy will text you when it is ready for collection at the counter."
)


def test_an_excerpt_is_cut_between_words_never_mid_word() -> None:
    # issue 35: a highlighted quote in the viewer was cut mid-word ("...e refill of your prescription R...")
    at = LONG.index("RX-2231")
    shown = textnorm.excerpt(LONG, at, at + len("RX-2231"), context=25)
    assert shown == "...of your prescription RX-2231 for lisinopril and the..."
    body = shown.removeprefix("...").removesuffix("...")
    start = LONG.index(body)
    assert LONG[start - 1] == " "
    assert LONG[start + len(body)] == " "


@pytest.mark.parametrize(
    ("text", "span", "context", "expected"),
    [
        pytest.param("short text", "short", 5, "short text", id="everything_fits"),
        pytest.param("x" * 40 + "NEEDLE" + "y" * 40, "NEEDLE", 4, "...xxxxNEEDLEyyyy...", id="one_long_word"),
        pytest.param(
            "e\u0301" * 10 + "NEEDLE" + "e\u0301" * 10,
            "NEEDLE",
            5,
            "...e\u0301e\u0301NEEDLEe\u0301e\u0301...",
            id="combining_marks_stay_with_their_letter",
        ),
        pytest.param(
            "\U0001f1eb\U0001f1f7" * 5 + "NEEDLE",
            "NEEDLE",
            5,
            "...\U0001f1eb\U0001f1f7\U0001f1eb\U0001f1f7NEEDLE",
            id="flags_stay_whole",
        ),
        pytest.param(
            "\U0001f469\u200d\U0001f4bb" * 4 + "NEEDLE",
            "NEEDLE",
            5,
            "...\U0001f469\u200d\U0001f4bbNEEDLE",
            id="zwj_sequences_stay_whole",
        ),
        pytest.param(
            "a\ud83d\ude00" * 4 + "NEEDLE", "NEEDLE", 4, "...a\ud83d\ude00NEEDLE", id="surrogate_pairs"
        ),
    ],
)
def test_an_excerpt_without_word_boundaries_splits_no_character(
    text: str, span: str, context: int, expected: str
) -> None:
    at = text.index(span)
    assert textnorm.excerpt(text, at, at + len(span), context=context) == expected


@given(st.text(alphabet=st.sampled_from("ab \u0301\u200d\U0001f1eb\n")), st.data())
def test_an_excerpt_cuts_only_between_words_or_whole_characters(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    context = data.draw(st.integers(0, 12))
    left, right = textnorm.excerpt_bounds(text, start, end, context=context)
    assert max(0, start - context) <= left <= start <= end <= right <= min(len(text), end + context)
    shown = textnorm.excerpt(text, start, end, context=context)
    assert shown == ("..." if left else "") + text[left:right] + ("..." if right < len(text) else "")
    word_before = any(text[i - 1].isspace() for i in range(max(1, start - context), start + 1))
    if 0 < left < start:
        assert (
            text[left - 1].isspace()
            if word_before and start - context > 0
            else textnorm._grapheme_break(text, left)
        )
    word_after = any(text[i].isspace() for i in range(end, min(len(text), end + context + 1)))
    if end < right < len(text):
        assert text[right].isspace() if word_after else textnorm._grapheme_break(text, right)
