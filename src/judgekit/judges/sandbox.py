"""The Jinja sandbox rubric templates render in, with limits on time, loops, values and output.

A rubric's template is written by whoever edits the rubric and renders the agent's transcript, so it must
not be able to hang or exhaust memory: ``{% for i in range(100000) %}{% for j in range(100000) %}``,
``{{ 'a' * 10**9 }}``, ``{{ transcript * 100000000 }}`` or ``{{ (10**100000)|string }}`` are refused with a
:class:`TemplateLimitError` naming the template and the limit, never a hang, a blow-up or a traceback.
:class:`LimitedSandbox` is Jinja's :class:`~jinja2.sandbox.ImmutableSandboxedEnvironment` (no attribute
starting with ``_``, no mutating list, dict or set methods) with these limits, each per render:

* :data:`TEMPLATE_TIME_LIMIT_SECONDS`: wall-clock time, checked at every loop iteration, call, filter,
  operator and output chunk;
* :data:`TEMPLATE_MAX_ITERATIONS`: loop iterations, all loops together (recursive loops and macros
  included);
* :data:`TEMPLATE_MAX_RANGE`: items one ``range()`` may produce;
* :data:`TEMPLATE_MAX_ARGUMENT`: largest integer argument of a call or filter (padding widths, counts);
* :data:`TEMPLATE_MAX_INT_DIGITS`: digits of an integer made by ``*`` or ``**``;
* :data:`TEMPLATE_MAX_OUTPUT_CHARS`: characters of the output, and of any one string or list the template
  builds (by ``*``, ``+``, ``~``, ``%``, ``join``, ``replace``, ``indent``, ``format``, ...), checked
  before it is built;
* :data:`TEMPLATE_MAX_BUILT_CHARS`: characters (or items) of every value calls, filters and operators
  build, added up.

``lipsum`` (which generates arbitrary amounts of text) is not available.
"""

from __future__ import annotations

import contextvars
import functools
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from jinja2 import Template, nodes, pass_context
from jinja2.runtime import Context, LoopContext, Undefined
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.visitor import NodeTransformer

from judgekit.errors import JudgekitError

__all__ = [
    "TEMPLATE_MAX_ARGUMENT",
    "TEMPLATE_MAX_BUILT_CHARS",
    "TEMPLATE_MAX_INT_DIGITS",
    "TEMPLATE_MAX_ITERATIONS",
    "TEMPLATE_MAX_OUTPUT_CHARS",
    "TEMPLATE_MAX_RANGE",
    "TEMPLATE_TIME_LIMIT_SECONDS",
    "LimitedSandbox",
    "TemplateLimitError",
    "TemplateRenderError",
]

TEMPLATE_TIME_LIMIT_SECONDS = 2.0
"""Longest one render of a rubric template may take, in seconds."""

TEMPLATE_MAX_ITERATIONS = 100_000
"""Most loop iterations one render may run, all loops together."""

TEMPLATE_MAX_RANGE = 10_000
"""Most items one ``range()`` call in a template may produce."""

TEMPLATE_MAX_ARGUMENT = 100_000
"""Largest integer a template may pass to a call or filter (widths, counts, sizes)."""

TEMPLATE_MAX_INT_DIGITS = 1_000
"""Most decimal digits of an integer a template makes with ``*`` or ``**``."""

TEMPLATE_MAX_OUTPUT_CHARS = 8_000_000
"""Most characters of a rendered prompt, and of any one string (or items of a list) a template builds."""

TEMPLATE_MAX_BUILT_CHARS = 64_000_000
"""Most characters (or list items) all the values one render builds may add up to."""

_LOOP_FILTER = "_judgekit_loop"
_CONCAT_FILTER = "_judgekit_concat"
_OUTPUT_FILTER = "_judgekit_output"
_SLICE_FILTER = "_judgekit_slice"
_PERCENT_WIDTH = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\d+|\*)?(?:\.(\d+|\*))?")
_BRACE_WIDTH = re.compile(r"\{[^{}]*:[^{}]*?(\d+)[^{}]*\}")


class TemplateLimitError(JudgekitError):
    """A template went past one of the sandbox's limits; the message names the template and the limit."""


class TemplateRenderError(JudgekitError):
    """A template failed while rendering (a type error, a division by zero, too deep recursion, ...)."""


@dataclass
class _Budget:
    """What one render has used so far."""

    name: str
    started: float = field(default_factory=time.monotonic)
    iterations: int = 0
    built: int = 0

    def refuse(self, what: str, limit: str, value: object) -> TemplateLimitError:
        return TemplateLimitError(
            f"template {self.name}: {what} (limit {limit} = {value}); simplify the template"
        )

    def tick(self) -> None:
        if time.monotonic() - self.started > TEMPLATE_TIME_LIMIT_SECONDS:
            raise self.refuse(
                "rendering took too long", "TEMPLATE_TIME_LIMIT_SECONDS", f"{TEMPLATE_TIME_LIMIT_SECONDS:g} s"
            )

    def iterate(self) -> None:
        self.iterations += 1
        if self.iterations > TEMPLATE_MAX_ITERATIONS:
            raise self.refuse(
                f"loops ran more than {TEMPLATE_MAX_ITERATIONS:,} iterations",
                "TEMPLATE_MAX_ITERATIONS",
                f"{TEMPLATE_MAX_ITERATIONS:,}",
            )
        if self.iterations % 64 == 0:
            self.tick()

    def will_build(self, size: int, what: str) -> None:
        if size > TEMPLATE_MAX_OUTPUT_CHARS:
            raise self.refuse(
                f"{what} would make a value of {size:,} characters or items",
                "TEMPLATE_MAX_OUTPUT_CHARS",
                f"{TEMPLATE_MAX_OUTPUT_CHARS:,}",
            )

    def built_value(self, value: object) -> None:
        if isinstance(value, str | list | tuple | bytes):
            self.built += len(value)
            if self.built > TEMPLATE_MAX_BUILT_CHARS:
                raise self.refuse(
                    f"the values built add up to more than {TEMPLATE_MAX_BUILT_CHARS:,} characters",
                    "TEMPLATE_MAX_BUILT_CHARS",
                    f"{TEMPLATE_MAX_BUILT_CHARS:,}",
                )


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar(
    "judgekit_template_budget", default=None
)


def _budget() -> _Budget:
    """The running render's budget (a fresh one, limiting single operations, outside :meth:`render`)."""
    current = _BUDGET.get()
    return current if current is not None else _Budget("<template>")


def _size(value: object) -> int:
    return len(value) if isinstance(value, str | list | tuple | bytes | dict) else len(str(value))


def _digits(value: int) -> int:
    """Decimal digits of an integer, from its bit length (no conversion to text)."""
    return max(1, int(abs(value).bit_length() * 0.30103) + 1)


def _check_arguments(budget: _Budget, args: Iterable[Any], what: str) -> None:
    for arg in args:
        items = (
            list(arg.values())
            if isinstance(arg, dict)
            else list(arg)
            if isinstance(arg, list | tuple)
            else [arg]
        )
        for item in items[:1000]:
            if isinstance(item, int) and not isinstance(item, bool) and abs(item) > TEMPLATE_MAX_ARGUMENT:
                raise budget.refuse(
                    f"{what} was given the number {_short(item)}",
                    "TEMPLATE_MAX_ARGUMENT",
                    f"{TEMPLATE_MAX_ARGUMENT:,}",
                )


def _short(value: int) -> str:
    return f"{value:,}" if _digits(value) <= 30 else f"of about {_digits(value):,} digits"


def _check_format(budget: _Budget, text: str, style: str) -> None:
    widths = _PERCENT_WIDTH.finditer(text) if style == "%" else _BRACE_WIDTH.finditer(text)
    for match in widths:
        for group in match.groups():
            if group and group.isdigit() and (len(group) > 9 or int(group) > TEMPLATE_MAX_ARGUMENT):
                raise budget.refuse(
                    f"a format width of {group[:30]} was asked for",
                    "TEMPLATE_MAX_ARGUMENT",
                    f"{TEMPLATE_MAX_ARGUMENT:,}",
                )


def _text_length(value: object) -> int:
    return len(value) if isinstance(value, str) else len(str(value))


def _estimate(
    name: str, value: object, args: tuple[Any, ...], kwargs: Mapping[str, Any], *, method: bool = False
) -> int | None:
    """An upper bound of the size of what a growing filter or string method would build, or ``None``.

    Iterables among ``value`` and ``args`` must already be lists (:func:`_materialise`): estimating must
    not consume a generator.
    """
    if name == "replace" and isinstance(value, str) and len(args) + len(kwargs) >= 2:
        old = str(args[0] if args else kwargs.get("old", ""))
        new = str(args[1] if len(args) > 1 else kwargs.get("new", ""))
        count = value.count(old) if old else len(value) + 1
        return len(value) + count * max(0, len(new) - len(old))
    if name == "join":
        if method:  # str.join(iterable): the string is the separator
            items = args[0] if args and isinstance(args[0], list | tuple | str) else []
            sep: object = value
        else:
            items = (
                value if isinstance(value, list | tuple) else list(value) if isinstance(value, str) else []
            )
            sep = args[0] if args else kwargs.get("d", "")
        return sum(_text_length(i) for i in items[:TEMPLATE_MAX_OUTPUT_CHARS]) + _text_length(sep) * max(
            0, len(items) - 1
        )
    if name == "indent" and isinstance(value, str):
        width = args[0] if args else kwargs.get("width", 4)
        unit = _text_length(width) if isinstance(width, str) else int(width) if isinstance(width, int) else 4
        return len(value) + (value.count("\n") + 1) * unit
    if name == "wordwrap" and isinstance(value, str):
        wrap = args[2] if len(args) > 2 else kwargs.get("wrapstring", "\n")
        return len(value) + (len(value) + 1) * _text_length(wrap or "\n")
    if name == "expandtabs" and isinstance(value, str):
        size = args[0] if args else kwargs.get("tabsize", 8)
        return len(value) + value.count("\t") * (int(size) if isinstance(size, int) else 8)
    if name == "sum":
        start = args[1] if len(args) > 1 else kwargs.get("start", 0)
        if isinstance(start, list | tuple | str) and isinstance(value, list | tuple):
            return len(start) + sum(_size(i) for i in value[:TEMPLATE_MAX_OUTPUT_CHARS])
    return None


class LimitedSandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox with limits on time, loops, numbers, values and output (see the module).

    Args:
        **options: Passed to :class:`~jinja2.sandbox.ImmutableSandboxedEnvironment`.
    """

    intercepted_binops = frozenset({"*", "**", "+", "%", "//", "/", "-"})
    intercepted_unops = frozenset({"-", "+"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.globals.pop("lipsum", None)
        self.globals["range"] = _limited_range
        self.filters = {name: _guarded_filter(name, func) for name, func in self.filters.items()}
        self.filters[_LOOP_FILTER] = _loop_filter
        self.filters[_CONCAT_FILTER] = _concat_filter
        self.filters[_OUTPUT_FILTER] = _output_filter
        self.filters[_SLICE_FILTER] = _slice_filter

    def _generate(
        self, source: nodes.Template, name: str | None, filename: str | None, defer_init: bool = False
    ) -> str:
        """Route every loop's iterable, every ``~`` and every printed value through the limits."""
        _Guard().visit(source)
        return super()._generate(source, name, filename, defer_init=defer_init)

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        """Apply a binary operator after checking it cannot build a huge value or number."""
        budget = _budget()
        budget.tick()
        if operator == "**" and _is_int(left) and _is_int(right) and right > 0 and abs(left) > 1:
            digits = int(right * abs(left).bit_length() * 0.30103)
            if digits > TEMPLATE_MAX_INT_DIGITS:
                raise budget.refuse(
                    f"{_short(left)} ** {_short(right)} would have about {digits:,} digits",
                    "TEMPLATE_MAX_INT_DIGITS",
                    f"{TEMPLATE_MAX_INT_DIGITS:,}",
                )
        if operator == "*":
            if _is_int(left) and _is_int(right):
                digits = _digits(left) + _digits(right)
                if digits > TEMPLATE_MAX_INT_DIGITS:
                    raise budget.refuse(
                        f"a product would have about {digits:,} digits",
                        "TEMPLATE_MAX_INT_DIGITS",
                        f"{TEMPLATE_MAX_INT_DIGITS:,}",
                    )
            for seq, times in ((left, right), (right, left)):
                if isinstance(seq, str | list | tuple) and _is_int(times):
                    budget.will_build(len(seq) * max(0, times), "repeating a string or list")
        if operator == "+" and isinstance(left, str | list | tuple) and isinstance(right, str | list | tuple):
            budget.will_build(len(left) + len(right), "joining two values with +")
        if operator == "%" and isinstance(left, str):
            _check_format(budget, left, "%")
            _check_arguments(budget, [right], "a % format")
            budget.will_build(
                len(left) + sum(_size(v) for v in (right if isinstance(right, tuple) else (right,))),
                "a % format",
            )
        if (
            operator in {"**", "*", "//", "%"}
            and _is_int(left)
            and _is_int(right)
            and max(_digits(left), _digits(right)) > TEMPLATE_MAX_INT_DIGITS
        ):
            raise budget.refuse(
                "a number in the calculation has more digits than allowed",
                "TEMPLATE_MAX_INT_DIGITS",
                f"{TEMPLATE_MAX_INT_DIGITS:,}",
            )
        result = self.binop_table[operator](left, right)
        budget.built_value(result)
        return result

    def call_unop(self, context: Context, operator: str, arg: Any) -> Any:
        """Apply a unary operator (checked for time only)."""
        _budget().tick()
        return self.unop_table[operator](arg)

    def getitem(self, obj: Any, argument: Any) -> Any:
        """Subscript, counting a slice's copy against the built-values budget."""
        result = super().getitem(obj, argument)
        if isinstance(argument, slice):
            budget = _budget()
            budget.tick()
            budget.built_value(result)
        return result

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        """Call a function or method from the template after checking its arguments and time."""
        budget = _budget()
        budget.tick()
        if isinstance(__obj, Undefined):
            return super().call(__context, __obj, *args, **kwargs)
        if isinstance(__obj, LoopContext):
            budget.iterate()
        name = getattr(__obj, "__name__", "") or type(__obj).__name__
        _check_arguments(budget, [*args, *kwargs.values()], f"{name}()")
        owner = getattr(getattr(__obj, "__wrapped__", __obj), "__self__", None)
        if isinstance(owner, str):
            if name in {"format", "format_map"}:
                _check_format(budget, owner, "{}")
            if name == "join" and args and _is_iterator(args[0]):
                args = (list(args[0]), *args[1:])
            estimate = _estimate(name, owner, args, kwargs, method=True)
            if estimate is not None:
                budget.will_build(estimate, f"{name}()")
        if isinstance(__obj, LoopContext) and args:
            args = (_loop_filter(__context, args[0]), *args[1:])
        result = super().call(__context, __obj, *args, **kwargs)
        budget.built_value(result)
        return result

    def compile_limited(self, source: str, name: str) -> Template:
        """Compile a template, turning a hostile literal's plain error into a clean one.

        Args:
            source: The template text.
            name: How to name the template in errors.

        Returns:
            The compiled template.

        Raises:
            jinja2.exceptions.TemplateSyntaxError: When the template does not parse.
            TemplateRenderError: When compiling fails in another way (an integer literal too long to
                read, nesting too deep for the parser).
        """
        from jinja2.exceptions import TemplateError

        try:
            return self.from_string(source)
        except TemplateError:
            raise
        except RecursionError:
            raise TemplateRenderError(
                f"template {name} does not compile: it nests too deeply; simplify the template"
            ) from None
        except Exception as exc:
            raise TemplateRenderError(
                f"template {name} does not compile: {type(exc).__name__}: {str(exc)[:300]}"
            ) from None

    def render_limited(self, template: Any, name: str, /, **variables: Any) -> str:
        """Render ``template`` under the limits, one budget for the whole render.

        Args:
            template: A template compiled by this environment.
            name: How to name the template in errors (a rubric id and field, a file).
            **variables: The template's variables.

        Returns:
            The rendered text.

        Raises:
            TemplateLimitError: When a limit is reached (the message names the template and the limit).
            TemplateRenderError: When the template fails in another way (a type error, too deep
                recursion, a number too large for text, ...).
            jinja2.exceptions.UndefinedError: When the template uses an undefined variable or attribute.
            jinja2.exceptions.SecurityError: When the template tries to reach an unsafe attribute.
        """
        from jinja2.exceptions import TemplateError

        budget = _Budget(name)
        token = _BUDGET.set(budget)
        try:
            chunks: list[str] = []
            total = 0
            for chunk in template.generate(**variables):
                total += len(chunk)
                if total > TEMPLATE_MAX_OUTPUT_CHARS:
                    raise budget.refuse(
                        f"the output is longer than {TEMPLATE_MAX_OUTPUT_CHARS:,} characters",
                        "TEMPLATE_MAX_OUTPUT_CHARS",
                        f"{TEMPLATE_MAX_OUTPUT_CHARS:,}",
                    )
                chunks.append(chunk)
                budget.tick()
            return "".join(chunks)
        except (JudgekitError, TemplateError):
            raise
        except RecursionError:
            raise TemplateRenderError(
                f"template {name}: recursion too deep (a macro or recursive loop that calls itself without "
                "end); simplify the template"
            ) from None
        except MemoryError:
            raise TemplateRenderError(f"template {name}: ran out of memory; simplify the template") from None
        except Exception as exc:
            raise TemplateRenderError(
                f"template {name} could not be rendered: {type(exc).__name__}: {str(exc)[:300]}"
            ) from None
        finally:
            _BUDGET.reset(token)


def _is_iterator(value: object) -> bool:
    """Whether ``value`` is iterable but not a sized collection (a generator: iterating consumes it)."""
    return isinstance(value, Iterable) and not isinstance(value, str | bytes | list | tuple | dict | set)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _Guard(NodeTransformer):
    """Rewrites a parsed template so that loops, ``~`` and output pass through the budget's checks."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        if not (isinstance(node.iter, nodes.Filter) and node.iter.name == _LOOP_FILTER):
            node.iter = _filter(node.iter, _LOOP_FILTER)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return _filter(nodes.List(list(node.nodes), lineno=node.lineno), _CONCAT_FILTER)

    def visit_Getitem(self, node: nodes.Getitem) -> nodes.Node:
        self.generic_visit(node)
        if not isinstance(node.arg, nodes.Slice):
            return node  # compiled to environment.getitem, which the sandbox sees
        bounds = [
            b if b is not None else nodes.Const(None) for b in (node.arg.start, node.arg.stop, node.arg.step)
        ]
        return nodes.Filter(node.node, _SLICE_FILTER, bounds, [], None, None, lineno=node.lineno)

    def visit_Output(self, node: nodes.Output) -> nodes.Node:
        self.generic_visit(node)
        node.nodes = [
            child
            if isinstance(child, nodes.TemplateData)
            or (isinstance(child, nodes.Filter) and child.name == _OUTPUT_FILTER)
            else _filter(child, _OUTPUT_FILTER)
            for child in node.nodes
        ]
        return node


def _filter(expr: nodes.Node, name: str) -> nodes.Filter:
    return nodes.Filter(expr, name, [], [], None, None, lineno=expr.lineno)


def _limited_range(*args: int) -> range:
    budget = _budget()
    budget.tick()
    span = range(*args)
    if len(span) > TEMPLATE_MAX_RANGE:
        raise budget.refuse(
            f"range() of {len(span):,} items", "TEMPLATE_MAX_RANGE", f"{TEMPLATE_MAX_RANGE:,}"
        )
    return span


@pass_context
def _loop_filter(context: Context, iterable: Any) -> Iterator[Any]:
    """Every loop's iterable: counts each iteration and checks the time."""
    budget = _budget()

    def guarded() -> Iterator[Any]:
        for item in iterable:
            budget.iterate()
            yield item

    del context
    return guarded()


@pass_context
def _concat_filter(context: Context, parts: list[Any]) -> str:
    """``a ~ b``: checks the joined length before joining."""
    del context
    budget = _budget()
    budget.tick()
    texts = [p if isinstance(p, str) else str(p) for p in parts]
    budget.will_build(sum(len(t) for t in texts), "joining values with ~")
    result = "".join(texts)
    budget.built_value(result)
    return result


@pass_context
def _output_filter(context: Context, value: Any) -> str:
    """A printed value (``{{ ... }}``, also inside macros and captured blocks): counted as built text."""
    del context
    budget = _budget()
    budget.tick()
    text = value if isinstance(value, str) else str(value)
    budget.built_value(text)
    return text


@pass_context
def _slice_filter(context: Context, value: Any, start: Any, stop: Any, step: Any) -> Any:
    """``value[start:stop:step]`` (Jinja compiles slices to plain subscripts): the copy is counted."""
    del context
    budget = _budget()
    budget.tick()
    result = value[start:stop:step]
    budget.built_value(result)
    return result


def _guarded_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` checked for time, argument sizes, growth and built size (Jinja's pass-arg marks kept)."""

    @functools.wraps(func)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        budget = _budget()
        budget.tick()
        # Jinja passes the context, eval context or environment first for marked filters.
        skip = 1 if getattr(func, "jinja_pass_arg", None) is not None else 0
        if name in {"join", "sum"} and len(args) > skip and _is_iterator(args[skip]):
            args = (*args[:skip], list(args[skip]), *args[skip + 1 :])
        value = args[skip] if len(args) > skip else None
        _check_arguments(budget, [*args[skip + 1 :], *kwargs.values()], f"the filter {name}")
        if name == "format" and isinstance(value, str):
            _check_format(budget, value, "%")
        estimate = _estimate(name, value, tuple(args[skip + 1 :]), kwargs)
        if estimate is not None:
            budget.will_build(estimate, f"the filter {name}")
        result = func(*args, **kwargs)
        budget.built_value(result)
        return result

    return guarded
