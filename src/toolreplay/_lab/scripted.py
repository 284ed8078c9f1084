"""The lab's scripted stand-in model, :class:`~toolreplay.testing.stand_in.ScriptedAgent`: it lives with
the provider doubles it answers for (``toolreplay double --stand-in`` serves it), so ``testing/`` needs
nothing of the lab; the lab's runs, tests and docs import it from here as before."""

from toolreplay.testing.stand_in import ScriptedAgent

__all__ = ["ScriptedAgent"]
