"""The lab: freeze a history, ask for the next turn many times per replay mode, count who acts.

* :mod:`toolreplay._lab.classify`: the trial classes and the "said without doing" heuristic (also used by
  the turn loop on every live reply);
* :mod:`toolreplay._lab.stats`: Wilson intervals and Fisher's exact test;
* :mod:`toolreplay._lab.plan`: the frozen history and the one request per vessel and mode;
* :mod:`toolreplay._lab.runner`: the trials themselves (concurrent, resumable) and the files they write;
* :mod:`toolreplay._lab.summary`: the table, the intervals and the tests;
* :mod:`toolreplay._lab.chart`: the PNG chart (matplotlib, imported only there);
* :mod:`toolreplay._lab.scripted`: the scripted stand-in model (:mod:`toolreplay.testing.stand_in`).

Import the submodules directly; this package imports nothing on its own so ``import toolreplay`` stays light.
"""
