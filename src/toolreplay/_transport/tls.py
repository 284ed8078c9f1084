"""The verifying SSL context every HTTP client toolreplay makes shares (the transport's, the proxy's
upstream pool, the lab's preflight probe).

Loading the CA bundle costs about 25 ms of CPU, more than a request to a local server: it is paid once
per CA setting instead of once per client. The setting is httpx's default (certifi, or
``$SSL_CERT_FILE`` / ``$SSL_CERT_DIR`` as they are when a client is made), so a process that points
``$SSL_CERT_FILE`` elsewhere gets a context that trusts what it names from then on.
"""

from __future__ import annotations

import functools
import os
import ssl

import httpx


def ssl_context() -> ssl.SSLContext:
    """The shared verifying context for the CA setting of the environment now. Read-only: a caller that
    needs more (a client certificate) makes its own."""
    return _context_for(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _context_for(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    # the arguments are the cache key: httpx reads the same two variables itself
    del cafile, capath
    return httpx.create_ssl_context()


__all__ = ["ssl_context"]
