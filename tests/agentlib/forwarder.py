"""A plain forwarder for the harness's own test of ``Middle``: ``forwarder.py PORT UPSTREAM`` passes each
POST's bytes to UPSTREAM + path and the answer back, nothing more (the proxy's stand-in)."""

from __future__ import annotations

import sys
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Forward(BaseHTTPRequestHandler):
    upstream = ""

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        data = self.rfile.read(int(self.headers.get("content-length") or 0))
        keep = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
        req = urllib.request.Request(self.upstream + self.path, data=data, headers=keep, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=30) as answer:
                status, body, ctype = answer.status, answer.read(), answer.headers.get("content-type", "")
        except urllib.error.HTTPError as exc:
            status, body, ctype = exc.code, exc.read(), exc.headers.get("content-type", "")
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def main(port: int, upstream: str) -> None:
    _Forward.upstream = upstream.rstrip("/")
    ThreadingHTTPServer(("127.0.0.1", port), _Forward).serve_forever()


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
