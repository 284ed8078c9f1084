"""The request audit: what does a dumped request really carry of the earlier calls?

* :mod:`toolreplay._audit.body`: find the body in a request file and detect its wire;
* :mod:`toolreplay._audit.report`: every earlier call "as call", "as text" or "missing", and what the replay
  patched.
"""
