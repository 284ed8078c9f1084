"""`toolreplay double` and `python -m toolreplay.testing`: script files, the echo, the command itself."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from helpers_common import HTTP
from toolreplay.testing import Call, Calls, CutStream, Error, Hang, ProviderDouble, Text
from toolreplay.testing.playbook import Echo, Playbook, ScriptError, load_script

COOP_TOOL = {"type": "function", "function": {"name": "coop", "parameters": {"type": "object"}}}


def test_script_file_toml_and_json_read_the_same(tmp_path: Path) -> None:
    toml = tmp_path / "s.toml"
    toml.write_text(
        '[[answers]]\ncalls = [{name = "coop", input = {action = "close", id = 1}}]\n'
        '[[answers]]\ntext = "Closed #1."\n[[answers]]\nerror = 429\nretry_after = 1\n'
        '[[answers]]\nfault = "cut"\n[[answers]]\nfault = "hang"\nseconds = 2\n',
        encoding="utf-8",
    )
    items = load_script(toml)
    assert items == [
        Calls([Call("coop", {"action": "close", "id": 1})]),
        Text("Closed #1."),
        Error(429, None, 1),
        CutStream(after_events=1),
        Hang(seconds=2.0),
    ]
    js = tmp_path / "s.json"
    js.write_text(json.dumps([{"calls": [{"name": "coop", "input": {"action": "close", "id": 1}}]}]))
    assert load_script(js) == items[:1]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"answers": [{"txt": "x"}]}', r"s.json: answers\[0\]: unknown field\(s\) txt"),
        ('[{"error": 200}]', r"answers\[0\]: error must be an HTTP status"),
        ('[{"fault": "melt"}]', r"answers\[0\]: fault 'melt' is not one of"),
        ('[{"calls": [{"input": {}}]}]', r"answers\[0\]: calls\[0\]: a call needs a name"),
        ("{oops", r"s.json: not valid JSON"),
        ('{"answers": 3}', r"s.json: expected a list of answers"),
    ],
)
def test_script_file_errors_name_the_file_and_field(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ScriptError, match=message):
        load_script(path)


def test_echo_repeats_calls_when_asked_and_reports_the_answer() -> None:
    with ProviderDouble(responder=Playbook.of([Text("scripted first")])) as double:
        url = double.base_url_for("openai-chat") + "/chat/completions"

        def ask(messages: list[dict[str, object]]) -> dict[str, object]:
            body = {"model": "m", "messages": messages, "tools": [COOP_TOOL]}
            answer: dict[str, object] = HTTP.post(url, json=body).json()["choices"][0]["message"]
            return answer

        assert ask([{"role": "user", "content": "hi"}])["content"] == "scripted first"
        assert ask([{"role": "user", "content": "hi"}])["content"] == "echo: hi"
        said = ask([{"role": "user", "content": 'please call coop {"action": "list"} now'}])
        call = said["tool_calls"][0]  # type: ignore[index]
        assert call["function"] == {"name": "coop", "arguments": '{"action":"list"}'}
        done = ask(
            [
                {"role": "user", "content": "call coop"},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": call["id"], "content": "no open todos"},
            ]
        )
        assert done["content"] == "coop answered: no open todos"
        # A tool the request does not declare is not called: the echo just repeats.
        assert ask([{"role": "user", "content": "call rm -rf"}])["content"] == "echo: call rm -rf"


def test_echo_reads_every_wire() -> None:
    echo = Echo()
    with ProviderDouble(responder=echo) as double:
        root = double.url
        out = HTTP.post(
            root + "/v1/messages",
            json={"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hey"}]},
        ).json()
        assert out["content"][0]["text"] == "echo: hey"
        out = HTTP.post(
            root + "/v1beta/models/g:generateContent",
            json={"contents": [{"role": "user", "parts": [{"text": "yo"}]}]},
        ).json()
        assert out["candidates"][0]["content"]["parts"][0]["text"] == "echo: yo"


@contextmanager
def running_double(*args: str, env: dict[str, str] | None = None) -> Iterator[tuple[str, str]]:
    """A `toolreplay double` process; yields (its base URL, its banner)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolreplay", "double", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        found = re.search(r"on (http://127\.0\.0\.1:\d+)$", first.strip())
        assert found, first + (proc.stderr.read() if proc.stderr else "")
        banner = first
        for line in proc.stdout:
            banner += line
            if line.startswith("Ctrl-C"):
                break
        yield found.group(1), banner
    finally:
        proc.terminate()
        proc.communicate(timeout=10)  # also closes the pipes


@pytest.mark.slow
def test_double_command_serves_a_turn_from_a_script(tmp_path: Path) -> None:
    script = tmp_path / "s.toml"
    script.write_text(
        '[[answers]]\ncalls = [{name = "coop", input = {action = "list"}}]\n'
        '[[answers]]\ntext = "Nothing open."\n',
        encoding="utf-8",
    )
    env = {**os.environ, "TOOLREPLAY_DB": str(tmp_path / "t.db")}
    with running_double("--script", str(script), env=env) as (url, banner):
        assert "kimi" in banner and f"{url}/vessel/kimi/v1" in banner
        assert f"answers: {script} (2 answers), then the echo" in banner
        cmd = [sys.executable, "-m", "toolreplay", "turn", "list them", "--vessel", "gemini"]
        cmd += ["--conversation", "c", "--tools", "coop", "--base-url", url]
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "Nothing open.\n"
        assert '⚙ coop {"action":"list"}' in done.stderr


def test_double_refuses_a_port_in_use_and_a_bad_script(tmp_path: Path) -> None:
    with ProviderDouble() as busy:
        port = busy.url.rsplit(":", 1)[1]
        done = subprocess.run(
            [sys.executable, "-m", "toolreplay.testing", "--port", port],
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert done.returncode == 1
    assert f"Error: 127.0.0.1:{port}: cannot listen" in done.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("[1]", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "toolreplay", "double", "--script", str(bad)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 1
    assert done.stderr.strip() == f"Error: {bad}: answers[0]: must be an object, not int"
