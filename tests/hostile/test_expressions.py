"""Hostile regular expressions, templates and CEL rules: each ends in the right result, within a bound.

Three families, each from generators (functions producing the variants):

* regular expressions written in cases (``message_pattern``, a state predicate's ``matches``, text
  patterns): catastrophic-backtracking shapes searched in the text that makes them explode must finish in
  milliseconds with the right answer; constructs RE2 cannot run are refused at load, naming the construct;
* rubric templates that loop, multiply, pad, format or recurse without bound: refused with a
  ``TemplateLimitError`` naming the limit (or a clean render error), never a hang or a blow-up, both when
  the rubric is checked and when a prompt is rendered;
* CEL rules over hostile agent data (thousands of items, nested comprehensions, huge strings): a clean
  verdict or ``error`` with the reason naming the limit, never a hang.

Every variant runs in a child process under :func:`hostile.bounded.run_bounded` (``SECONDS`` s,
``MB`` MiB). The last test counts the variants tried and asserts that every one was handled correctly.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hostile.bounded import run_bounded
from hostile.sweep import Sweep, SweepStore

SECONDS = 5.0
MB = 1536

# --------------------------------------------------------------------------- generators: regexes

ATTACK_LENGTH = 50_000


@dataclass(frozen=True)
class RegexVariant:
    """A hostile pattern, the text that makes a backtracking engine explode on it, and the right answer."""

    name: str
    pattern: str
    text: str
    matches: bool


def catastrophic_regexes() -> Iterator[RegexVariant]:
    """Nested quantifiers, overlapping alternations and their many spellings, each with its attack text."""
    n = ATTACK_LENGTH
    bad = "a" * n + "!"
    for inner in ("a+", "a*", "a?a*", "(?:a|a)+", "(?:aa|a)+", "a{1,5}", "[a]+", "(?:a+)?"):
        for outer in ("+", "*", "{2,}"):
            yield RegexVariant(f"nested ({inner}){outer}$", f"^(?:{inner}){outer}$", bad, False)
            yield RegexVariant(f"unanchored ({inner}){outer}!$", f"(?:{inner}){outer}!$", bad, True)
    for alt in ("a|a", "a|aa", "a|ab|aab", "\\w|a", "[a-z]|a", "a|[^!]", "(?:a|a?)+"):
        yield RegexVariant(f"alternation ({alt})*$", f"^(?:{alt})*$", bad, False)
        yield RegexVariant(f"alternation ({alt})*!", f"(?:{alt})*!", bad, True)
    yield RegexVariant("email-like", r"^([a-zA-Z0-9])(([\-.]|[_]+)?([a-zA-Z0-9]+))*(@)", "a" * n + "!", False)
    yield RegexVariant("repeated groups", r"^(a+)+(b+)+(c+)+$", "a" * n + "bc!", False)
    yield RegexVariant("dot star chain", r"(.*a){12}$", "a" * 5000 + "!", False)
    yield RegexVariant("spaces", r"^(\s*,?\s*)*$", " " * n + "x", False)
    yield RegexVariant("digits", r"^(\d+)*$", "1" * n + "x", False)
    yield RegexVariant("words", r"^(\w+\s?)*$", "word " * (n // 5) + "!", False)
    yield RegexVariant("quoted", r'"(?:[^"\\]|\\.)*"', '"' + "\\a" * (n // 2), False)
    yield RegexVariant("found after attack", r"(a+)+b", "a" * n + "b", True)
    yield RegexVariant("case folded", r"(?i)(A+)+$", "a" * n + "!", False)
    yield RegexVariant("unicode letters", r"(\pL+)+$", "é" * n + "1", False)


def unsupported_regexes() -> Iterator[tuple[str, str]]:
    """Constructs RE2 does not run, with the name the refusal must use."""
    yield r"(?=a)b", "lookahead"
    yield r"a(?!b)", "lookahead"
    yield r"(?<=a)b", "lookbehind"
    yield r"(?<!a)b", "lookbehind"
    yield r"(a)\1", "backreference"
    yield r"(?P<x>a)(?P=x)", "backreference"
    yield r"(?>a+)b", "atomic group"
    yield r"a++b", "possessive quantifier"
    yield r"a*+", "possessive quantifier"
    yield r"(a)?(?(1)b|c)", "conditional"
    yield r"^(?=.*\d)(?=.*[a-z]).{8,}$", "lookahead"
    yield r"(\w+)\s+\1", "backreference"


def invalid_regexes() -> Iterator[tuple[str, str]]:
    """Patterns that are wrong or too large, with a phrase the refusal must contain."""
    yield "(", "not a valid regular expression"
    yield "[a-", "not a valid regular expression"
    yield "a{1001}", "at most 1000"
    yield "((a{100}){100}){100}", "at most 1000"
    yield "x" * 6000, "PATTERN_MAX_CHARS"
    yield "a\\Z", "\\z"
    yield "\\", "not a valid regular expression"


# --------------------------------------------------------------------------- child-process calls


def search_message_pattern(pattern: str, text: str) -> str:
    """Grade a forbidden ``message_pattern`` rule on one assistant message; the verdict."""
    from graders._build import make_case, make_transcript
    from judgekit.graders.rules import check_rules

    case = make_case(forbidden=[{"message_pattern": pattern}])
    (check,) = check_rules(case, make_transcript(texts=[text]))
    return check.verdict.value


def search_state_matches(pattern: str, text: str) -> bool:
    """Evaluate a state predicate ``matches``; whether it holds."""
    from judgekit.cases import FieldPredicate
    from judgekit.graders.state import evaluate_predicate

    return evaluate_predicate(FieldPredicate.model_validate({"matches": pattern}), True, text) is None


def search_text_pattern(pattern: str, text: str) -> str:
    """Grade a ``must_not_mention`` text pattern; the verdict."""
    from graders._build import make_case, make_transcript
    from judgekit.graders.text import check_text

    case = make_case(expected={"must_not_mention": [{"pattern": pattern, "ignore_case": False}]})
    checks = [c for c in check_text(case, make_transcript(texts=[text])) if "must_not_mention" in c.check_id]
    return checks[0].verdict.value


def load_problems(folder: str) -> list[str]:
    """Load a case set; its problems as text."""
    from judgekit.caseset import load_case_set

    return [str(p) for p in load_case_set(Path(folder)).problems]


# --------------------------------------------------------------------------- regex tests

REGEX_VARIANTS = list(catastrophic_regexes())


def _regex_check(variant: RegexVariant, _folder: Path) -> list[str]:
    """The three places a pattern is searched, each with the right answer (in the sweep's bounded child)."""
    verdict = "fail" if variant.matches else "pass"
    got = {
        "message_pattern": search_message_pattern(variant.pattern, variant.text),
        "matches": search_state_matches(variant.pattern, variant.text),
        "pattern": search_text_pattern(variant.pattern, variant.text),
    }
    want = {"message_pattern": verdict, "matches": variant.matches, "pattern": verdict}
    return [f"{place}: {got[place]!r}, not {want[place]!r}" for place in got if got[place] != want[place]]


REGEX_SWEEP = Sweep(
    name=f"{__name__}.regex",
    variants=REGEX_VARIANTS,
    key=lambda v: v.name,
    check=_regex_check,
    seconds=SECONDS,
    mb=MB,
)
"""Each catastrophic pattern once in the session, its three searches in a bounded child (batches of 16)."""


@REGEX_SWEEP.parametrize
def test_catastrophic_regex_is_linear_in_every_place_patterns_are_searched(
    variant: RegexVariant, sweep_store: SweepStore
) -> None:
    assert sweep_store.problems(REGEX_SWEEP, variant) == []


def test_message_pattern_on_a_long_input_takes_milliseconds() -> None:
    import time

    from judgekit.patterns import compile_pattern

    pattern = compile_pattern(r"(a+)+$")
    started = time.process_time()  # CPU time: linear is milliseconds, backtracking would be hours
    assert pattern.search("a" * 100_000 + "b") is None
    assert time.process_time() - started < 0.1


def _case_yaml(pattern_field: str, pattern: str) -> str:
    quoted = pattern.replace("'", "''")
    if pattern_field == "message_pattern":
        return f"id: GS-1\ninput: help me\nforbidden:\n  - message_pattern: '{quoted}'\n"
    if pattern_field == "matches":
        return (
            "id: GS-1\ninput: help me\nexpected_state:\n  changes:\n    orders:\n      modified:\n"
            f"        O-1:\n          status:\n            matches: '{quoted}'\n"
        )
    return f"id: GS-1\ninput: help me\nexpected:\n  must_mention:\n    - pattern: '{quoted}'\n"


PATTERN_FIELDS = ("message_pattern", "matches", "pattern")


def _unsupported_check(variant: tuple[str, str, str], folder: Path) -> list[str]:
    """Load a case using an unsupported construct (in the sweep's bounded child): one located refusal."""
    pattern_field, pattern, construct = variant
    (folder / "case.yaml").write_text(_case_yaml(pattern_field, pattern), encoding="utf-8")
    problems = load_problems(str(folder))
    text = " ".join(problems)
    ok = len(problems) == 1 and re.search(r"case\.yaml:\d+: ", problems[0]) is not None
    ok = ok and f"this pattern uses a{'n' if construct[0] in 'aeiou' else ''} {construct}" in text
    ok = ok and "linear-time engine (RE2) does not run; rewrite it without it" in text
    return [] if ok else [f"not one located refusal naming the {construct}: {problems}"]


UNSUPPORTED_SWEEP = Sweep(
    name=f"{__name__}.unsupported",
    variants=[(field, p, c) for field in PATTERN_FIELDS for p, c in unsupported_regexes()],
    key="-".join,
    check=_unsupported_check,
    seconds=SECONDS,
    mb=MB,
)
"""Each unsupported construct in each pattern field, once in the session, in a bounded child."""


@UNSUPPORTED_SWEEP.parametrize
def test_unsupported_construct_is_refused_at_load_with_file_line_and_name(
    variant: tuple[str, str, str], sweep_store: SweepStore
) -> None:
    assert sweep_store.problems(UNSUPPORTED_SWEEP, variant) == []


def _invalid_check(variant: tuple[str, str], folder: Path) -> list[str]:
    """Load a case with a wrong or oversized pattern (in the sweep's bounded child): refused, named."""
    pattern, phrase = variant
    (folder / "case.yaml").write_text(_case_yaml("message_pattern", pattern), encoding="utf-8")
    said = repr(load_problems(str(folder)))
    ok = phrase in said and "message_pattern" in said
    return [] if ok else [f"the refusal does not say {phrase!r} of message_pattern: {said}"]


INVALID_SWEEP = Sweep(
    name=f"{__name__}.invalid",
    variants=list(invalid_regexes()),
    key="-".join,
    check=_invalid_check,
    seconds=SECONDS,
    mb=MB,
)
"""Each wrong or oversized pattern once in the session, in a bounded child."""


@INVALID_SWEEP.parametrize
def test_invalid_or_oversized_pattern_is_refused_at_load(
    variant: tuple[str, str], sweep_store: SweepStore
) -> None:
    assert sweep_store.problems(INVALID_SWEEP, variant) == []


# --------------------------------------------------------------------------- generators: templates

REQUIRED = "{{ criterion.text }}{{ transcript }}{{ output_instructions }}"


def hostile_templates() -> Iterator[tuple[str, str, str]]:
    """(name, template body, the limit or error the refusal must name)."""
    yield (
        "nested range 100000",
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        "TEMPLATE_MAX_RANGE",
    )
    yield (
        "nested range 10000",
        "{% for i in range(10000) %}{% for j in range(10000) %}x{% endfor %}{% endfor %}",
        "TEMPLATE_MAX_",
    )
    yield (
        "triple range 1000",
        "{% for i in range(1000) %}{% for j in range(1000) %}"
        "{% for k in range(1000) %}{% endfor %}{% endfor %}{% endfor %}",
        "TEMPLATE_MAX_ITERATIONS",
    )
    yield "string times 10**9", "{{ 'a' * 10**9 }}", "TEMPLATE_MAX_OUTPUT_CHARS"
    yield "string times huge", "{{ 'a' * 99999999999999999999 }}", "TEMPLATE_MAX_OUTPUT_CHARS"
    yield "transcript times 1e8", "{{ transcript * 1e8 }}", "TypeError"
    yield "transcript times 10**8", "{{ transcript * 100000000 }}", "TEMPLATE_MAX_OUTPUT_CHARS"
    yield "int times string", "{{ 100000000 * transcript }}", "TEMPLATE_MAX_OUTPUT_CHARS"
    yield "list times 10**9", "{{ [1] * 10**9 }}", "TEMPLATE_MAX_OUTPUT_CHARS"
    yield "huge power to string", "{{ (10**100000)|string }}", "TEMPLATE_MAX_INT_DIGITS"
    yield "power tower", "{{ 9**9**9**9**9 }}", "TEMPLATE_MAX_INT_DIGITS"
    yield "power via variable", "{% set n = 100000 %}{{ 7 ** n }}", "TEMPLATE_MAX_INT_DIGITS"
    yield (
        "squaring loop",
        "{% set ns = namespace(x=3) %}{% for i in range(40) %}"
        "{% set ns.x = ns.x * ns.x %}{% endfor %}{{ ns.x }}",
        "TEMPLATE_MAX_INT_DIGITS",
    )
    yield (
        "doubling ~",
        "{% set ns = namespace(s='ab') %}{% for i in range(60) %}"
        "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
        "TEMPLATE_MAX_OUTPUT_CHARS",
    )
    yield (
        "doubling +",
        "{% set ns = namespace(s='ab') %}{% for i in range(60) %}"
        "{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s }}",
        "TEMPLATE_MAX_OUTPUT_CHARS",
    )
    yield (
        "doubling list",
        "{% set ns = namespace(s=[1]) %}{% for i in range(60) %}"
        "{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }}",
        "TEMPLATE_MAX_OUTPUT_CHARS",
    )
    yield "replace empty method", "{{ transcript.replace('', transcript) }}", "TEMPLATE_MAX_OUTPUT_CHARS"
    yield "replace empty filter", "{{ transcript|replace('', transcript) }}", "TEMPLATE_MAX_OUTPUT_CHARS"
    yield "join self method", "{{ transcript.join(transcript) }}", "TEMPLATE_MAX_OUTPUT_CHARS"
    yield "join self filter", "{{ transcript|join(transcript) }}", "TEMPLATE_MAX_OUTPUT_CHARS"
    yield "join repeated list", "{{ ([transcript] * 10000)|join }}", "TEMPLATE_MAX_OUTPUT_CHARS"
    yield "join generator", "{{ range(5000)|map('string')|join(transcript) }}", "TEMPLATE_MAX_OUTPUT_CHARS"
    yield "center 10**9", "{{ 'a'|center(10**9) }}", "TEMPLATE_MAX_ARGUMENT"
    yield "ljust method", "{{ 'a'.ljust(10**9) }}", "TEMPLATE_MAX_ARGUMENT"
    yield "zfill method", "{{ '1'.zfill(999999999) }}", "TEMPLATE_MAX_ARGUMENT"
    yield "expandtabs", "{{ ('\t' * 1000).expandtabs(99999) }}", "TEMPLATE_MAX_"
    yield "indent huge", "{{ transcript|indent(10**9) }}", "TEMPLATE_MAX_ARGUMENT"
    yield "indent by transcript", "{{ ('\n' * 100000)|indent(transcript) }}", "TEMPLATE_MAX_OUTPUT_CHARS"
    yield "wordwrap", "{{ transcript|wordwrap(1, wrapstring=transcript) }}", "TEMPLATE_MAX_OUTPUT_CHARS"
    yield "percent width", "{{ '%0999999999d' % 1 }}", "TEMPLATE_MAX_ARGUMENT"
    yield "percent star width", "{{ '%*d' % (999999999, 1) }}", "TEMPLATE_MAX_ARGUMENT"
    yield "format filter width", "{{ '%999999999s'|format('a') }}", "TEMPLATE_MAX_ARGUMENT"
    yield "str.format width", "{{ '{:>999999999}'.format('a') }}", "TEMPLATE_MAX_ARGUMENT"
    yield "str.format nested width", "{{ '{0:{1}}'.format('a', 999999999) }}", "TEMPLATE_MAX_ARGUMENT"
    yield "slice batch", "{{ transcript|slice(10**9)|list|length }}", "TEMPLATE_MAX_ARGUMENT"
    yield (
        "sum of lists",
        "{{ ([range(5000)|list] * 5000)|sum(start=[])|length }}",
        "TEMPLATE_MAX_OUTPUT_CHARS",
    )
    yield "infinite macro", "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}", "recursion too deep"
    yield (
        "exponential macro",
        "{% macro f(n) %}{% if n > 0 %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}{% endmacro %}{{ f(60) }}",
        "TEMPLATE_",
    )
    yield (
        "recursive loop",
        "{% for x in transcript recursive %}{{ loop(x) }}{% endfor %}",
        "recursion too deep",
    )
    yield (
        "loop over transcript squared",
        "{% for a in transcript %}{% for b in transcript %}{% endfor %}{% endfor %}",
        "TEMPLATE_MAX_ITERATIONS",
    )
    yield (
        "captured block",
        "{% set x %}{% for i in range(10000) %}{{ transcript }}{% endfor %}{% endset %}{{ x|length }}",
        "TEMPLATE_MAX_BUILT_CHARS",
    )
    yield (
        "macro output",
        "{% macro m() %}{% for i in range(10000) %}"
        "{{ transcript }}{% endfor %}{% endmacro %}{{ m()|length }}",
        "TEMPLATE_MAX_BUILT_CHARS",
    )
    yield (
        "filter block",
        "{% filter upper %}{% for i in range(10000) %}{{ transcript }}{% endfor %}{% endfilter %}",
        "TEMPLATE_MAX_BUILT_CHARS",
    )
    yield "output cap", "{% for i in range(9) %}{{ transcript }}{% endfor %}", "TEMPLATE_MAX_OUTPUT_CHARS"
    yield (
        "slices kept",
        "{% set ns = namespace(l=[]) %}{% for i in range(5000) %}"
        "{% set ns.l = ns.l + [transcript[1:]] %}{% endfor %}",
        "TEMPLATE_",
    )
    yield (
        "upper kept",
        "{% set ns = namespace(l=[]) %}{% for i in range(5000) %}"
        "{% set ns.l = ns.l + [transcript|upper] %}{% endfor %}",
        "TEMPLATE_MAX_BUILT_CHARS",
    )
    yield "lipsum", "{{ lipsum(n=10**6) }}", "lipsum"
    yield "list append", "{% set l = [] %}{% for i in range(100) %}{{ l.append(l) }}{% endfor %}", "unsafe"
    yield "dict update", "{% set d = {} %}{{ d.update(a=1) }}", "unsafe"
    yield "dunder", "{{ criterion.__class__.__mro__ }}", "unsafe"
    yield "division by zero", "{{ 1 // 0 }}", "ZeroDivisionError"
    yield "float overflow", "{{ 10.0 ** 400 }}", "OverflowError"
    yield "negative huge", "{{ -(10 ** 5000) }}", "TEMPLATE_MAX_INT_DIGITS"
    yield "deep nesting", "{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}", "nests too deeply"
    yield "huge literal", "{{ " + "9" * 6000 + " }}", "does not compile"


FAKE_TRANSCRIPT = "x" * 1_000_000


def check_template(body: str) -> list[str]:
    """``rubric_from_data`` on a rubric with this template: the problems (empty when accepted)."""
    from judgekit.errors import ProblemsError
    from judgekit.judges.rubric import rubric_from_data

    data = {"id": "r", "version": 1, "criteria": [{"id": "c", "text": "t"}], "template": REQUIRED + body}
    try:
        rubric_from_data(data)
    except ProblemsError as exc:
        return [p.message for p in exc.problems]
    return []


def render_template(body: str) -> str:
    """Render a prompt with a 1 MB transcript through :class:`PromptRenderer` (bypassing the check)."""
    from judgekit.judges.prompt import PromptRenderer
    from judgekit.judges.rubric import Criterion, Rubric

    rubric = Rubric.model_construct(
        id="r",
        version="1",
        title="",
        description="",
        criteria=(Criterion(id="c", text="t"),),
        verdict=Rubric.model_fields["verdict"].default,
        template=REQUIRED + body,
    )
    try:
        renderer = PromptRenderer(rubric)
        prompt = renderer.render(rubric.criteria[0], FAKE_TRANSCRIPT, "facts")
    except Exception as exc:  # the kind of error is what the test looks at
        return f"{type(exc).__name__}: {exc}"
    return f"rendered {len(prompt.messages[1]['content'])}"


CLEAN_RENDER_ERRORS = ("TemplateLimitError", "TemplateRenderError", "SecurityError", "UndefinedError")

TEMPLATE_VARIANTS = list(hostile_templates())


def _template_check(variant: tuple[str, str, str], _folder: Path) -> list[str]:
    """``rubrics check``'s trial render of a hostile template (in the sweep's bounded child)."""
    _, body, limit = variant
    said = repr(check_template(body))
    # The trial render uses a short transcript: limits that need a long one are not reached there, but
    # nothing may hang, crash or give a traceback.
    needs_long_transcript = "transcript" in body and limit not in {
        "TypeError",
        "unsafe",
        "recursion too deep",
    }
    return [] if needs_long_transcript or limit in said else [f"does not name {limit!r}: {said}"]


def _render_check(variant: tuple[str, str, str], _folder: Path) -> list[str]:
    """Rendering a hostile template (in the sweep's bounded child): a clean error naming the limit."""
    _, body, limit = variant
    said = render_template(body)
    ok = any(said.startswith(f"{e}: ") for e in CLEAN_RENDER_ERRORS)
    ok = ok and (limit in said or limit in {"does not compile", "nests too deeply", "lipsum"})
    return [] if ok else [f"not a clean error naming {limit!r}: {said[:500]}"]


TEMPLATE_CHECK_SWEEP, TEMPLATE_RENDER_SWEEP = (
    Sweep(
        name=f"{__name__}.{what}",
        variants=TEMPLATE_VARIANTS,
        key=lambda v: v[0],
        check=check,
        seconds=SECONDS,
        mb=MB,
    )
    for what, check in (("template-check", _template_check), ("template-render", _render_check))
)
"""Each hostile template once in the session, checked and rendered in bounded children."""


@TEMPLATE_CHECK_SWEEP.parametrize
def test_hostile_template_is_refused_by_rubric_check(
    variant: tuple[str, str, str], sweep_store: SweepStore
) -> None:
    assert sweep_store.problems(TEMPLATE_CHECK_SWEEP, variant) == []


@TEMPLATE_RENDER_SWEEP.parametrize
def test_hostile_template_is_refused_when_rendering(
    variant: tuple[str, str, str], sweep_store: SweepStore
) -> None:
    assert sweep_store.problems(TEMPLATE_RENDER_SWEEP, variant) == []


def test_limit_errors_name_the_template_and_the_limit() -> None:
    message = render_template("{{ 'a' * 10**9 }}")
    assert message.startswith("TemplateLimitError: template of rubric r: ")
    assert "(limit TEMPLATE_MAX_OUTPUT_CHARS = 8,000,000)" in message


def test_ordinary_templates_still_render() -> None:
    body = (
        "{% for o in verdict_options %}{{ loop.index }}"
        ". {{ o|upper }}{% endfor %}{{ 'ab' ~ nonce }}{{ 3 * 4 }}"
    )
    assert check_template(body) == []
    assert render_template(body).startswith("rendered ")


def test_rubrics_check_reports_a_hostile_template_without_a_traceback(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from judgekit.cli import app

    path = tmp_path / "r.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            id: hostile
            version: 1
            criteria:
              - id: c1
                text: something
            template: |
              {{ criterion.text }} {{ transcript }} {{ output_instructions }} {{ (10**100000)|string }}
            """
        ),
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["rubrics", "check", str(path)])
    assert result.exit_code == 1, result.output
    assert "TEMPLATE_MAX_INT_DIGITS" in result.output
    assert "failed unexpectedly" not in result.output


# --------------------------------------------------------------------------- generators: CEL


def hostile_cel() -> Iterator[tuple[str, str, Callable[[], Any], str]]:
    """(name, condition over ``args``, a factory of hostile arguments, the expected verdict ``error``/...)."""
    many = lambda n: lambda: {"items": list(range(n))}  # noqa: E731
    yield "two-deep all over 3000", "items.all(a, items.all(b, a != b || a == b))", many(3000), "error"
    yield "two-deep exists over 3000", "items.exists(a, items.exists(b, a == -1))", many(3000), "error"
    yield (
        "exists with in over 3000",
        "items.exists(a, items.exists(b, b in items && a < 0))",
        many(3000),
        "error",
    )
    yield "one-deep exists with in over 20000", "items.exists(a, a in items && a < 0)", many(20000), "error"
    yield "map building lists", "size(items.map(a, items)) > 0", many(1000), "error"
    yield "nested map", "size(items.map(a, items.map(b, a + b))) > 0", many(1000), "error"
    yield (
        "nested filter",
        "size(items.filter(a, items.filter(b, a == b).size() > 0)) > 0",
        many(1000),
        "error",
    )
    yield "map of strings", "size(items.map(a, string(a) + string(a))) < 0", many(5000), "error"
    yield (
        "nested lists",
        "items.all(a, a.all(b, b >= 0))",
        lambda: {"items": [list(range(300))] * 300},
        "error",
    )
    yield (
        "map of maps",
        "items.all(a, items.exists(b, a.k == b.k))",
        lambda: {"items": [{"k": i} for i in range(2000)]},
        "error",
    )
    yield (
        "huge string in loop",
        "items.all(a, items.all(b, s.contains('zz')))",
        lambda: {"items": list(range(10)), "s": "x" * 10_000_000},
        "error",
    )
    yield "small two-deep all is evaluated", "items.all(a, items.all(b, a != b || a == b))", many(100), "fail"
    yield "small map is evaluated", "size(items.map(a, a * 2)) == 50", many(50), "fail"
    yield "linear over 200000", "size(items) > 5", many(200_000), "fail"
    yield "linear matches on a huge string", "s.matches('(x+)+y')", lambda: {"s": "x" * 1_000_000}, "pass"
    yield "type error", "items > 3", many(10), "error"
    yield "missing key", "nothing.field == 1", many(10), "error"
    yield "deep json", "size(items) > 0", lambda: {"items": _deep(90)}, "fail"
    yield "too deep json", "size(items) > 0", lambda: {"items": _deep(500)}, "error"


def _deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def cel_verdict(condition: str, make_args: Callable[[], Any], calls: int) -> tuple[str, str]:
    """Grade ``calls`` calls of ``t`` with these arguments against ``when`` = condition: (verdict, reason)."""
    from graders._build import make_case, make_transcript
    from judgekit.graders.rules import check_rules

    case = make_case(forbidden=[{"tool": "t", "when": condition}])
    args = make_args()
    transcript = make_transcript([("t", args)] * calls)
    (check,) = check_rules(case, transcript)
    return check.verdict.value, check.reason


CEL_VARIANTS = list(hostile_cel())


def _cel_check(variant: tuple[str, str, Callable[[], Any], str], _folder: Path) -> list[str]:
    """A hostile CEL condition over hostile agent data (in the sweep's bounded child): the right verdict."""
    name, condition, make_args, expected = variant
    said = repr(cel_verdict(condition, make_args, 1))
    ok = said.startswith(f"('{expected}'")
    if expected == "error" and "CEL_MAX_COST" not in said:
        ok = ok and name in {"type error", "missing key", "too deep json"}
    return [] if ok else [f"not {expected!r} (or not for the cost limit): {said[:500]}"]


CEL_SWEEP = Sweep(
    name=f"{__name__}.cel",
    variants=CEL_VARIANTS,
    key=lambda v: v[0],
    check=_cel_check,
    seconds=SECONDS,
    mb=MB,
)
"""Each hostile CEL variant once in the session, in a bounded child."""


@CEL_SWEEP.parametrize
def test_hostile_cel_over_agent_data_ends_in_the_right_verdict(
    variant: tuple[str, str, Callable[[], Any], str], sweep_store: SweepStore
) -> None:
    assert sweep_store.problems(CEL_SWEEP, variant) == []


def test_many_costly_calls_stop_at_the_rule_time_limit() -> None:
    # Each call is just under the cost limit; together they would take far longer than the time limit.
    got = run_bounded(
        cel_verdict,
        "items.exists(a, items.exists(b, b in items && a < 0))",
        lambda: {"items": list(range(200))},
        400,
        seconds=SECONDS + 3,
        mb=MB,
    )
    ok = got.outcome == "returned" and "'error'" in got.value and "CEL_TIME_LIMIT_SECONDS" in got.value
    assert ok, got


# --------------------------------------------------------------------------- the count


FAMILIES = {
    "regex": (REGEX_SWEEP, UNSUPPORTED_SWEEP, INVALID_SWEEP),
    "template": (TEMPLATE_CHECK_SWEEP, TEMPLATE_RENDER_SWEEP),
    "cel": (CEL_SWEEP,),
}


@REGEX_SWEEP.counted
@UNSUPPORTED_SWEEP.counted
@INVALID_SWEEP.counted
@TEMPLATE_CHECK_SWEEP.counted
@TEMPLATE_RENDER_SWEEP.counted
@CEL_SWEEP.counted
def test_every_hostile_variant_was_handled_correctly(sweep_store: SweepStore) -> None:
    """The tally of this module (the lead quotes it): variants tried and handled correctly, per family.

    A regex variant is searched in the three places patterns are; the named cases (a long input, the
    ``rubrics check`` command, many costly CEL calls) are tests of their own.
    """
    tallies = {family: [sweep_store.tally(s) for s in sweeps] for family, sweeps in FAMILIES.items()}
    tried = {family: sum(t.tried for t in found) for family, found in tallies.items()}
    handled = {family: sum(t.handled for t in found) for family, found in tallies.items()}
    print(f"\nhostile expressions and templates: tried {tried}, handled correctly {handled}")
    assert handled == tried, [t.failures for found in tallies.values() for t in found]
    assert sum(tried.values()) > 93
