"""The request audit: what does a dumped request really carry of the earlier calls?

* :mod:`toolreplay.audit.body`: find the body in a request file and detect its wire;
* :mod:`toolreplay.audit.report`: every earlier call "as call", "as text" or "missing", and what the replay
  patched.
"""
