"""The HTTP boundary: one place that sends, streams, retries and translates errors.

* :mod:`.client`: the async-first client and its one sync wrapper;
* :mod:`.request`: the request a vessel's wire sends (URL, headers, body);
* :mod:`.errors`: provider answers and network faults turned into :mod:`toolreplay` errors;
* :mod:`.dump`: ``--dump-requests`` files, keys redacted.
"""
