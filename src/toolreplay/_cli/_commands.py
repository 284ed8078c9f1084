"""The command table: each ``toolreplay`` command's module, attribute and one-line help, the top help's
summary and epilog. Read by the entry point (:mod:`toolreplay._cli`), the click group
(:mod:`toolreplay._cli._group`) and the click-free top help (:mod:`toolreplay._cli._help`), so none of
those imports another to find it.
"""

from __future__ import annotations

SUMMARY = "Replay an agent's earlier tool calls as calls, in each provider's own wire shape."

# command name -> (module, attribute, one-line help shown by --help without importing the module)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "demo": ("toolreplay._cli.demo", "demo", "Show the bundled conversation replayed plain vs native."),
    "import": ("toolreplay._cli.import_cmd", "import_cmd", "Store a history file (any known format)."),
    "history": ("toolreplay._cli.history_cmd", "history", "List, show or remove stored conversations."),
    "stats": ("toolreplay._cli.stats_cmd", "stats_cmd", "Prompt-cache hit rate per turn and in total."),
    "replay": ("toolreplay._cli.replay_cmd", "replay", "Print the prepared turn messages as JSON."),
    "render": ("toolreplay._cli.render_cmd", "render_cmd", "Print the exact request body for a vessel."),
    "vessels": ("toolreplay._cli.render_cmd", "vessels_cmd", "List the vessels (providers) and their wires."),
    "turn": ("toolreplay._cli.turn_cmd", "turn", "Run one turn of a conversation on a vessel."),
    "chat": ("toolreplay._cli.chat_cmd", "chat", "Chat with a vessel; tool calls are stored and replayed."),
    "check": ("toolreplay._cli.check_cmd", "check", "Check that each vessel accepts replayed calls."),
    "coop": ("toolreplay._cli.coop_cmd", "coop", "The coop todo board, by hand."),
    "mcp": ("toolreplay._cli.coop_cmd", "mcp_cmd", "Serve the tools over MCP (stdio)."),
    "lab": ("toolreplay._cli.lab_cmd", "lab", "Run the next turn many times per replay mode; count calls."),
    "audit": ("toolreplay._cli.audit_cmd", "audit", "Say how a dumped request carries each earlier call."),
    "cache-diff": ("toolreplay._cli.audit_cmd", "cache_diff", "Compare two requests' shared prefix."),
    "default": ("toolreplay._cli.settings_cmd", "default", "Set or show the vessel used without --vessel."),
    "keys": ("toolreplay._cli.settings_cmd", "keys", "Store provider keys in a file only you can read."),
    "double": ("toolreplay._cli.double_cmd", "double", "Serve every wire's provider double on 127.0.0.1."),
    "proxy": ("toolreplay._cli.proxy_cmd", "proxy", "Stand between a coding agent and its provider; record."),
}


# The habits every command shares, named once where a newcomer looks first.
EPILOG = (
    "Short options, the same wherever they appear: -v vessel, -m model, -s system prompt, -T tools, -u base "
    "URL, -c continue the most recent conversation (--cid ID names one), -p the double's port. Without -v "
    "a command uses the conversation's last vessel, then `toolreplay default`. A turn reads its prompt from "
    "stdin when it is - or piped. No key? Start `toolreplay double` and pass -u its URL."
)


def available(name: str) -> bool:
    """The command's module is there (a trimmed install may leave one out): only those are listed."""
    import importlib.util

    return importlib.util.find_spec(COMMANDS[name][0]) is not None


__all__ = ["COMMANDS", "EPILOG", "SUMMARY", "available"]
