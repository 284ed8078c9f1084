"""Run inside a fresh network namespace: start the provider double (and a middle program, such as the
proxy), run one agent against it, write what happened to a JSON file.

    unshare -n python tests/agentlib/runner.py SPEC.json

The namespace has only loopback, brought up here; every port is free in it, so the double listens on
the fixed :data:`DOUBLE_PORT` and the agent's configuration can be written before the run. The kernel
counts, per namespace, every packet it could not route (``OutNoRoutes`` in ``/proc/net/snmp`` and
``snmp6``): with only loopback, each attempt to reach any other address (a DNS query to the machine's
resolver included) adds one, and fails at once, so the counts after the run say whether the agent tried.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import importlib
import json
import os
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

DOUBLE_PORT = 18080
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1


def loopback_up() -> None:
    """``ip link set lo up`` without iproute2: the interface flags by ioctl."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifreq = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s, _SIOCGIFFLAGS, ifreq))[1]
        fcntl.ioctl(s, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))


def _snmp(path: str) -> dict[str, int]:
    try:
        lines = Path(path).read_text().splitlines()
    except OSError:
        return {}
    out: dict[str, int] = {}
    if path.endswith("6"):
        for line in lines:
            name, _, value = line.partition(" ")
            with contextlib.suppress(ValueError):
                out[name] = int(value.strip())
        return out
    for head, values in zip(lines[::2], lines[1::2], strict=False):
        group, *names = head.split()
        for name, value in zip(names, values.split()[1:], strict=False):
            out[group + name] = int(value)
    return out


def net_counts() -> dict[str, int]:
    """The namespace's counters that tell an attempt to leave loopback (and loopback ports refused)."""
    v4, v6 = _snmp("/proc/net/snmp"), _snmp("/proc/net/snmp6")
    keys = {"Ip:OutNoRoutes": v4, "Ip6OutNoRoutes": v6, "Udp:NoPorts": v4, "Tcp:AttemptFails": v4}
    return {k: table.get(k, 0) for k, table in keys.items()}


def _wait_port(port: int, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.05)
    return False


def _record(r: Any) -> dict[str, Any]:
    return {
        "method": r.method,
        "path": r.path,
        "wire": r.wire,
        "headers": dict(r.headers),
        "raw": base64.b64encode(r.raw).decode("ascii"),
        "stream": r.stream,
        "status": r.status,
        "rejected": r.rejected,
    }


def _record_other_methods() -> None:
    """The double serves POSTs and records only them; an agent's GET or HEAD (a model list, a probe) is
    recorded here too, with the double's own answer (404 for GET; HEAD, which it does not serve, 501)."""
    from toolreplay._transport.dump import redact_headers
    from toolreplay.testing import RecordedRequest, server

    def recording(method: str, answer: Any) -> Any:
        def handle(self: Any) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            headers = redact_headers({k.lower(): v for k, v in self.headers.items()})
            req = RecordedRequest(0, method, self.path, None, None, headers, None, raw, False)
            req = self.double._record(req)
            self.double._update(req, status=404 if method == "GET" else 501)
            answer(self)

        return handle

    handler = server._Handler
    handler.do_GET = recording("GET", handler.do_GET)  # type: ignore[method-assign]
    handler.do_HEAD = recording("HEAD", lambda self: self.send_error(501))  # type: ignore[attr-defined]


def _drop(spec: dict[str, Any]) -> None:
    """Started by root through sudo for a user: the namespace is made; run the rest as that user."""
    ids = spec.get("drop_to")
    if ids:
        os.setgroups([])
        os.setresgid(ids[1], ids[1], ids[1])
        os.setresuid(ids[0], ids[0], ids[0])


def _run(spec: dict[str, Any], out: dict[str, Any]) -> None:
    from toolreplay.testing import ProviderDouble

    _record_other_methods()
    module, _, attr = spec["responder"].partition(":")
    responder = getattr(importlib.import_module(module), attr)(*spec.get("responder_args", []))
    kind: Any = ProviderDouble
    if hasattr(responder, "number"):  # it numbers the answers itself (agentlib.routed.NumberedDouble)
        kind = importlib.import_module("agentlib.routed").NumberedDouble
    with kind(responder=responder, default=None, port=DOUBLE_PORT) as double:
        middle = None
        log = Path(spec["result"]).with_name("middle.log")
        if spec.get("via"):
            # its output to a file: a pipe nobody reads while the agent runs would fill and stall it
            with log.open("wb") as sink:
                env = {**os.environ, **spec.get("via_env", {})}
                middle = subprocess.Popen(spec["via"], env=env, stdout=sink, stderr=subprocess.STDOUT)
            if not _wait_port(int(spec["via_port"]), 20.0):
                out["via_error"] = f"the middle program did not listen on {spec['via_port']} in 20 s"
        start = time.monotonic()
        try:
            done = subprocess.run(
                spec["argv"],
                cwd=spec["cwd"],
                env=spec["env"],
                capture_output=True,
                timeout=spec["timeout"],
                stdin=subprocess.DEVNULL,
            )
            out.update(
                exit=done.returncode,
                stdout=done.stdout.decode("utf-8", "replace"),
                stderr=done.stderr.decode("utf-8", "replace"),
            )
        except subprocess.TimeoutExpired as exc:
            out.update(
                exit=None,
                timed_out=True,
                stdout=(exc.stdout or b"").decode("utf-8", "replace"),
                stderr=(exc.stderr or b"").decode("utf-8", "replace"),
            )
        out["seconds"] = round(time.monotonic() - start, 3)
        if middle is not None:
            middle.terminate()
            middle.wait(timeout=10)
            out["via_output"] = log.read_text(encoding="utf-8", errors="replace")
        out["requests"] = [_record(r) for r in double.requests]
        out["responder_log"] = [list(e) for e in getattr(responder, "log", None) or []]


def main(spec_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text())
    loopback_up()
    _drop(spec)
    sys.path[:0] = spec.get("sys_path", [])
    out: dict[str, Any] = {"net_before": net_counts()}
    try:
        _run(spec, out)
    finally:
        out["net_after"] = net_counts()
        Path(spec["result"]).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
