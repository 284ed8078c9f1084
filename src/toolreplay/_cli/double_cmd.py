"""``toolreplay double``: the command is :func:`toolreplay.testing._command.double`, kept with the provider
doubles it serves so ``python -m toolreplay.testing`` runs it without ``testing/`` importing the CLI."""

from toolreplay.testing._command import double

__all__ = ["double"]
