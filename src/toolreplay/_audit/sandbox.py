"""The sandbox chat templates render in: jinja2's immutable sandbox plus limits for untrusted templates.

A chat template is code from a model's repository. jinja2's ``ImmutableSandboxedEnvironment`` keeps it
away from Python's internals (no attribute escapes, no mutation of the values it gets, ranges of at most
100,000). On top of that, every render here has:

* a time limit (:data:`TIME_LIMIT` seconds): checked at every piece of output, and on the main thread
  also by a timer signal, so loops that print nothing stop too;
* an output limit (:data:`MAX_OUTPUT` characters);
* size limits on what could take memory in one step: ``*`` on strings and lists, ``**`` on numbers, and
  the width given to a padding method or filter (``center(10**9)``), at most :data:`MAX_SIZE`;
* every failure (a division by zero, an overflow, runaway recursion, a limit) as one line.

It does not protect against a template that allocates just under every limit many times within the
time limit, nor, off the main thread, against one slow step without output; see SECURITY.md.
"""

from __future__ import annotations

import contextlib
import functools
import json
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from toolreplay._errors import ConfigError

#: Seconds one render may take.
TIME_LIMIT = 10.0
#: Characters one render may produce.
MAX_OUTPUT = 20_000_000
#: The largest string, list or number one step may build, or width a padding call may take.
MAX_SIZE = 10_000_000
#: String methods and filters whose integer arguments size what they build ('a'|center(10**9)).
_SIZING = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs", "indent", "wordwrap", "truncate"})


class TemplateLimit(Exception):
    """A render went beyond one of the sandbox's limits (the message says which)."""


def require_jinja() -> Any:
    """The jinja2 module, or a one-line ConfigError saying how to install it."""
    try:
        import jinja2
    except ImportError:
        raise ConfigError("chat templates need jinja2: pip install 'toolreplay[templates]'") from None
    return jinja2


def _check_size(value: Any, what: str) -> None:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_SIZE:
        raise TemplateLimit(f"{what} larger than {MAX_SIZE:,} is not allowed in a template")


def _binop(operator: str, left: Any, right: Any) -> Any:
    if operator == "*":
        for seq, n in ((left, right), (right, left)):
            if isinstance(seq, str | list | tuple) and isinstance(n, int) and len(seq) * n > MAX_SIZE:
                raise TemplateLimit(f"a sequence of more than {MAX_SIZE:,} items is not allowed")
        return left * right
    big = isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1
    if big and right * abs(left).bit_length() > MAX_SIZE:  # the result's size in bits, at least
        raise TemplateLimit(f"a number of more than {MAX_SIZE:,} bits is not allowed")
    return left**right


def _sized(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """Filter ``fn`` refusing a width beyond :data:`MAX_SIZE` ('a'|center(10**9) builds a gigabyte)."""

    @functools.wraps(fn)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        for v in (*args[1:], *kwargs.values()):
            _check_size(v, f"an argument of {name}")
        return fn(*args, **kwargs)

    return guarded


def environment() -> Any:
    """The environment transformers compiles chat templates in, with the limits above."""
    require_jinja()
    import jinja2
    import jinja2.ext
    from jinja2 import nodes
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class GenerationTag(jinja2.ext.Extension):
        """``{% generation %}...{% endgeneration %}``: rendered as its body (transformers marks it)."""

        tags = {"generation"}  # noqa: RUF012 (jinja's own class attribute)

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return nodes.Scope(body).set_lineno(lineno)

    class Limited(ImmutableSandboxedEnvironment):
        intercepted_binops = frozenset({"*", "**"})

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            return _binop(operator, left, right)

        def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
            name = getattr(__obj, "__name__", "")
            if name in _SIZING and isinstance(getattr(__obj, "__self__", None), str):
                for v in (*args, *kwargs.values()):
                    _check_size(v, f"an argument of {name}")
            return super().call(__context, __obj, *args, **kwargs)

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(
        x: Any,
        ensure_ascii: bool = False,
        indent: int | None = None,
        separators: tuple[str, str] | None = None,
        sort_keys: bool = False,
    ) -> str:
        # transformers' own filter: jinja's escapes HTML characters, which no chat template wants.
        return json.dumps(
            x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
        )

    env = Limited(trim_blocks=True, lstrip_blocks=True, extensions=[GenerationTag, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    for name in _SIZING & set(env.filters):
        env.filters[name] = _sized(name, env.filters[name])
    env.globals["raise_exception"] = raise_exception
    return env


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    """On the main thread, interrupt whatever runs after ``seconds`` (a loop that prints nothing)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def ring(signum: int, frame: Any) -> None:
        raise TemplateLimit(f"rendering took longer than {TIME_LIMIT:g} s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def render_limited(generate: Callable[[], Iterator[str]]) -> str:
    """Join what ``generate()`` yields within the time and output limits; TemplateLimit beyond them."""
    deadline = time.monotonic() + TIME_LIMIT
    pieces: list[str] = []
    size = 0
    with _alarm(TIME_LIMIT):
        for piece in generate():
            size += len(piece)
            if size > MAX_OUTPUT:
                raise TemplateLimit(f"the prompt is longer than {MAX_OUTPUT:,} characters")
            if time.monotonic() > deadline:
                raise TemplateLimit(f"rendering took longer than {TIME_LIMIT:g} s")
            pieces.append(piece)
    return "".join(pieces)


__all__ = [
    "MAX_OUTPUT",
    "MAX_SIZE",
    "TIME_LIMIT",
    "TemplateLimit",
    "environment",
    "render_limited",
    "require_jinja",
]
