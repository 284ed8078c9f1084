"""``--dump-requests DIR`` shared by parallel runs: every attempt gets its own files, none is overwritten
(issue 15, item 2). Each process used to number its files once at start, so parallel runs wrote the same
names and a request was left paired with another run's answer."""

from __future__ import annotations

import multiprocessing
import re
from pathlib import Path

from toolreplay._transport.dump import RequestDump


def test_two_dumps_opened_on_one_directory_never_share_a_file(tmp_path: Path) -> None:
    a, b = RequestDump(tmp_path), RequestDump(tmp_path)  # two runs that both looked before either wrote
    na = a.request("kimi", b'{"from":"a"}')
    nb = b.request("kimi", b'{"from":"b"}')
    a.response(na, "kimi", b'{"answer":"a"}')
    b.response(nb, "kimi", b'{"answer":"b"}')
    assert na != nb
    assert a.path(na, "kimi", "request.json").read_bytes() == b'{"from":"a"}'
    assert b.path(nb, "kimi", "request.json").read_bytes() == b'{"from":"b"}'
    assert b.path(nb, "kimi", "response.json").read_bytes() == b'{"answer":"b"}'


def test_one_run_numbers_every_vessel_in_one_sequence(tmp_path: Path) -> None:
    dump = RequestDump(tmp_path)
    assert [dump.request(v, b"{}") for v in ("kimi", "gemini", "kimi")] == [1, 2, 3]
    assert RequestDump(tmp_path).request("kimi", b"{}") == 4  # a later run continues after them


def _writer(directory: str, tag: int, count: int) -> None:
    dump = RequestDump(directory)
    for i in range(count):
        n = dump.request("kimi", f'{{"run":{tag},"i":{i}}}'.encode())
        dump.response(n, "kimi", f'{{"run":{tag},"i":{i}}}'.encode())


def test_parallel_processes_keep_every_request_paired_with_its_answer(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), tag, 10)) for tag in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    requests = sorted(tmp_path.glob("*-request.json"))
    assert len(requests) == 80
    for req in requests:
        prefix = re.sub(r"-request\.json$", "", req.name)
        assert (tmp_path / f"{prefix}-response.json").read_bytes() == req.read_bytes()
