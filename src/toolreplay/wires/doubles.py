"""What every wire's loopback double is built of: the answer before any wire shape, stream cuts,
signatures, the server-side rules a double holds a request to, and the prompt-cache count.

Each wire's double (``toolreplay.wires.<wire>.double``) turns an :class:`Answer` into its whole bodies,
stream events and error bodies, in the real shapes; the contract's
:class:`~toolreplay.wires.contract.Double` is typed with these. They live in ``wires/`` so a wire and the
contract import nothing from :mod:`toolreplay.testing`, which serves the doubles and only consumes these.

Pure functions of an :class:`Answer` (a scripted item made concrete: ids, signatures, usage).
Stream events are ``(event name or None, payload)`` pairs; a payload is a dict (sent as JSON) or a
string sent as is (Chat's ``[DONE]``). Ollama's events are NDJSON objects (the name is None).
"""

from __future__ import annotations

import base64
import binascii
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from toolreplay import jsonenc
from toolreplay.wires.reply import Usage

if TYPE_CHECKING:
    from toolreplay.wires.vessel import VesselProfile

Event = tuple[str | None, Any]
#: Cuts a text into stream deltas (tests pass any cut to check that every split parses the same).
Splitter = Callable[[str], list[str]]


@dataclass(frozen=True, slots=True)
class AnswerCall:
    """A call as sent: ``args`` is an object, or a string for broken arguments."""

    name: str
    args: Mapping[str, Any] | str
    call_id: str | None
    signature: str | None

    @property
    def arguments(self) -> str:
        """The arguments as JSON text (broken arguments as they are)."""
        return self.args if isinstance(self.args, str) else jsonenc.dumps(self.args)


@dataclass(frozen=True, slots=True)
class Answer:
    """What the double says to one request, before any wire shape."""

    seq: int
    model: str
    text: str
    calls: tuple[AnswerCall, ...]
    reasoning: str | None
    usage: Usage
    #: The request body it answers: what real answers echo (Responses' tools, tool_choice) or obey
    #: (Chat's ``stream_options.include_usage``).
    request: Mapping[str, Any] = field(default_factory=lambda: {})
    #: How stream deltas are cut (the script's or the double's chunking).
    cut: Splitter | None = None


def pieces(text: str, size: int = 12) -> list[str]:
    """``text`` cut into stream deltas of ``size`` characters."""
    return [text[i : i + size] for i in range(0, len(text), size)]


# Word pieces of up to 8 letters, numbers of up to 3 digits, one or two marks, runs of blanks, each with
# one leading space where there is one; the last branch takes any other single character, so the pieces
# always join back into the text.
_TOKEN = re.compile(r" ?[^\W\d_]{1,8}| ?\d{1,3}| ?[^\s\w]{1,2}|\s+|.", re.DOTALL)


def token_pieces(text: str) -> list[str]:
    """``text`` cut the way real streams cut it: token-sized pieces of 1 to about 9 characters
    (``{"a":1234}`` -> ``{"``, ``a``, ``":``, ``123``, ``4``, ``}``)."""
    return _TOKEN.findall(text)


def whole(text: str) -> list[str]:
    """``text`` as one delta (Groq, xAI and most local servers send a call's arguments at once)."""
    return [text] if text else []


def empty_first(text: str) -> list[str]:
    """An empty delta, then token-sized pieces (some servers open each piece of content with ``""``)."""
    return ["", *token_pieces(text)]


def seeded(seed: int) -> Splitter:
    """Each text cut by a cut chosen at random (from ``seed``): token pieces, whole, empty first, or
    pieces of 1 to 16 characters."""
    rng = random.Random(seed)

    def cut(text: str) -> list[str]:
        choice = rng.randrange(4)
        if choice == 3:
            return pieces(text, rng.randint(1, 16))
        return (token_pieces, whole, empty_first)[choice](text)

    return cut


#: The argument cuts a script or a double may ask for by name.
CHUNKINGS: dict[str, Splitter] = {
    "tokens": token_pieces,
    "whole": whole,
    "empty_first": empty_first,
}


def usage_counts(usage: Usage) -> tuple[int, int, int]:
    return usage.input_tokens or 0, usage.output_tokens or 0, usage.cached_tokens or 0


# The doubles sign what their models "wrote" (thought signatures, thinking blocks) with the model that
# wrote it, so the rules can tell whose a signature is; a real provider's signatures are opaque.
_DOUBLE_SIGNED = "toolreplay-double"


def signature_for(seq: int, index: int, model: str) -> str:
    """A stable, opaque-looking thought signature that names the model it comes from (the doubles refuse
    a signature another model issued, as Gemini does): answer ``seq``'s piece ``index``."""
    return base64.b64encode(f"{_DOUBLE_SIGNED}:{seq}:{index}:{model}".encode()).decode("ascii")


def signature_issuer(signature: str) -> str | None:
    """The model that issued a provider double's signature (:func:`signature_for`); None for any other
    (opaque) signature."""
    try:
        text = base64.b64decode(signature.encode("ascii"), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeError, ValueError):
        return None
    head, _, rest = text.partition(":")
    parts = rest.split(":", 2)
    return parts[2] if head == _DOUBLE_SIGNED and len(parts) == 3 else None


# -- errors ---------------------------------------------------------------------------------------------

_DEFAULT_MESSAGES = {
    400: "Invalid request.",
    401: "Incorrect API key provided.",
    403: "You do not have access to this resource.",
    404: "The model does not exist or you do not have access to it.",
    408: "Request timed out.",
    422: "Unprocessable request.",
    429: "Rate limit reached for requests. Please try again later.",
    500: "The server had an error while processing your request. Sorry about that!",
    502: "Bad gateway.",
    503: "The engine is currently overloaded, please try again later.",
    529: "Overloaded",
}
#: StreamError kinds -> (HTTP status for a non-streamed request, OpenAI type, Anthropic type, Google status)
ERROR_KINDS = {
    "overloaded": (503, "server_error", "overloaded_error", "UNAVAILABLE"),
    "rate_limit": (429, "rate_limit_exceeded", "rate_limit_error", "RESOURCE_EXHAUSTED"),
    "invalid_request": (400, "invalid_request_error", "invalid_request_error", "INVALID_ARGUMENT"),
}


def default_message(status: int) -> str:
    """The usual text for ``status``."""
    return _DEFAULT_MESSAGES.get(status, "Internal server error." if status >= 500 else "Request failed.")


@dataclass(frozen=True, slots=True)
class Rules:
    """Vessel-dependent rules of the doubles' own checks: the id limit of a request that names no vessel
    (OpenAI's own server: 40), Codex's stream/store demands, Gemini 3's thought signatures; the vessel
    the request names (the wire's rules it is held to depend on whose server it is: Moonshot's reasoning
    rule) and the model the URL names (Gemini's signatures)."""

    max_id_len: int | None = 40
    codex: bool = False
    require_signatures: bool = True
    vessel: VesselProfile | None = None
    model: str | None = None


def as_list(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list) else ()


def as_map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True, slots=True)
class PromptCount:
    """A request's prompt as the simulated cache saw it, in estimated tokens."""

    prompt_tokens: int
    cached_tokens: int
    written: int | None = None
    """What the request wrote to the cache, when a wire's own rule says (Anthropic's: up to its last
    marker); None: everything it did not read."""

    @property
    def written_tokens(self) -> int:
        """What the request adds to the cache."""
        return self.prompt_tokens - self.cached_tokens if self.written is None else self.written


class PromptCacheRule(Protocol):
    """A wire whose provider caches by its own rules (Anthropic: only up to a marked block) counts with
    one of these (``Double.prompt_cache`` makes it) instead of the longest common prefix."""

    def count(self, model: str, body: Mapping[str, Any]) -> PromptCount: ...

    def clear(self) -> None: ...


__all__ = [
    "CHUNKINGS",
    "ERROR_KINDS",
    "Answer",
    "AnswerCall",
    "Event",
    "PromptCacheRule",
    "PromptCount",
    "Rules",
    "Splitter",
    "as_list",
    "as_map",
    "default_message",
    "empty_first",
    "pieces",
    "seeded",
    "signature_for",
    "signature_issuer",
    "token_pieces",
    "usage_counts",
    "whole",
]
