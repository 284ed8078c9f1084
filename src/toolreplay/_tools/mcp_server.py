"""Serve a tool registry over MCP (stdio), so MCP clients (Claude Code among them) can use ``coop``.

Built on the official ``mcp`` SDK (the ``mcp`` extra, version 2), imported only here. The server lists
the registry's tools with their JSON schemas and runs each ``tools/call`` through
:meth:`ToolRegistry.call`, so a call answered with an error (a bad todo id, an unknown action) comes back
as a result with ``is_error`` set, which the model can read and correct, not as a protocol error.

The server records nothing in any conversation: the client that made the call (the turn loop driving the
Claude Code CLI) stores it, named as the client saw it (``mcp__coop__coop``); the replay renames it to
``coop``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolreplay._errors import ConfigError
from toolreplay._tools.core import ToolRegistry
from toolreplay._version import __version__

if TYPE_CHECKING:
    from mcp.server import Server

#: The server key used in the MCP configuration handed to Claude Code: tools arrive as ``mcp__coop__<tool>``.
SERVER_NAME = "coop"


def _sdk() -> Any:
    try:
        import mcp.server  # noqa: F401
        import mcp.types as types
    except ImportError:
        raise ConfigError("toolreplay mcp needs the mcp SDK: pip install 'toolreplay[mcp]'") from None
    return types


def build_server(registry: ToolRegistry, *, dry: bool = False, name: str = "toolreplay") -> Server[Any]:
    """An MCP ``Server`` that lists and runs ``registry``'s tools (dry: answered, never executed)."""
    types = _sdk()
    from mcp.server import Server

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=s.name, description=s.description, input_schema=dict(s.parameters))
                for s in registry.specs()
            ]
        )

    async def call_tool(ctx: Any, params: Any) -> Any:
        arguments: Mapping[str, Any] = params.arguments or {}
        outcome = await registry.call(params.name, dict(arguments), dry=dry)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=outcome.answer)], is_error=outcome.is_error
        )

    return Server(
        name,
        version=__version__,
        instructions="toolreplay tools; coop is the shared todo board.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


class _Unanswered:
    """The requests received and not answered yet (by JSON-RPC id), so the end of input can wait for
    them: the SDK's loop cancels every call still running when its input ends, and a client that sends
    its calls and then closes (500 pipelined ``coop add``: 500 todos made, 261 answers) would lose the
    answers of calls that ran."""

    def __init__(self) -> None:
        import anyio

        self.ids: set[str] = set()
        self.empty = anyio.Event()
        self.empty.set()

    def update(self, message: Any, *, incoming: bool) -> None:
        types = _sdk()
        if incoming and isinstance(message, types.JSONRPCRequest):
            self.ids.add(repr(message.id))
        elif incoming and isinstance(message, types.JSONRPCNotification):
            if message.method == "notifications/cancelled":  # a cancelled call is never answered
                self.ids.discard(repr((message.params or {}).get("requestId")))
        elif not incoming and isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)):
            self.ids.discard(repr(message.id))
        if self.ids and self.empty.is_set():
            import anyio

            self.empty = anyio.Event()
        elif not self.ids:
            self.empty.set()


async def serve_stdio(registry: ToolRegistry, *, dry: bool = False) -> None:
    """Serve ``registry`` over this process's stdin/stdout until the client closes the stream, then
    answer every call received before exiting."""
    _sdk()
    import anyio
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    server = build_server(registry, dry=dry)
    pending = _Unanswered()
    to_server, server_in = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    server_out, from_server = anyio.create_memory_object_stream[SessionMessage](0)
    async with stdio_server() as (read_stream, write_stream):
        reading = anyio.CancelScope()

        async def relay_in() -> None:
            with reading:
                async with to_server:
                    async for item in read_stream:
                        if isinstance(item, SessionMessage):
                            pending.update(item.message, incoming=True)
                        await to_server.send(item)
                    await pending.empty.wait()  # the end of input reaches the server once all is answered

        async def relay_out() -> None:
            async with write_stream:
                async for message in from_server:
                    pending.update(message.message, incoming=False)
                    await write_stream.send(message)

        async with anyio.create_task_group() as tg:
            tg.start_soon(relay_in)
            tg.start_soon(relay_out)
            await server.run(server_in, server_out, server.create_initialization_options())
            reading.cancel()  # the server stopped by itself: stop reading; its last answers still go out


def mcp_config(
    command: list[str], *, env: Mapping[str, str] | None = None, server: str = SERVER_NAME
) -> dict[str, Any]:
    """The ``--mcp-config`` JSON for Claude Code that starts ``command`` (e.g. ``toolreplay mcp ...``)."""
    entry: dict[str, Any] = {"type": "stdio", "command": command[0], "args": list(command[1:])}
    if env:
        entry["env"] = dict(env)
    return {"mcpServers": {server: entry}}


__all__ = ["SERVER_NAME", "build_server", "mcp_config", "serve_stdio"]
