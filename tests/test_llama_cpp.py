"""Against a real llama.cpp server (``tests/llama_server.py``): our prompt is the server's, for every chat
template the project tests with and every replay mode; the template audit agrees with what the server
renders (design 42, 43).

Each template is given to its own server as the override (1-3 s to start on 2 cores); the model is
SmolLM2-135M-Instruct whatever the template, so the special tokens are SmolLM2's (``/props``), and our side
reads them from the same tokenizer_config.json the test writes.
"""

from __future__ import annotations

import json
import os
import time
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from conftest import NO_SHARED, SHARED
from helpers_cli import run
from llama_server import LlamaServer, llama_server, unavailable

pytestmark = pytest.mark.slow

DATA = Path(__file__).parent / "data" / "templates"
MODES = ("plain", "prose", "native")
#: The 12 real open-model templates of the shared material (tests/test_templates.py reads them too).
SHARED_TEMPLATES = (
    "GLM-4.6.jinja",
    "Qwen-Qwen3-0.6B.hf-7e4ae267.jinja",
    "Qwen-Qwen3-0.6B.jinja",
    "Qwen3.5-4B.jinja",
    "deepseek-ai-DeepSeek-V3.1.jinja",
    "google-gemma-4-31B-it.jinja",
    "meta-llama-Llama-3.3-70B-Instruct.jinja",
    "mistralai-Mistral-Nemo-Instruct-2407.jinja",
    "moonshotai-Kimi-K2-Instruct.jinja",
    "moonshotai-Kimi-K2-Thinking.jinja",
    "openai-gpt-oss-120b.jinja",
    "zai-org-GLM-4.5.jinja",
)
#: SmolLM2's own template (the GGUF's), the tests' own ChatML one with tools, then the shared ones.
TEMPLATES = ("smollm2 (its own)", "chatml-tools.jinja", *SHARED_TEMPLATES)


def require_server() -> None:
    reason = unavailable()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI runs the llama.cpp server tests, but {reason}")
    pytest.skip(reason)


def template_source(name: str) -> str | None:
    if name.startswith("smollm2"):
        return None  # the GGUF's own
    if name == "chatml-tools.jinja":
        return (DATA / name).read_text(encoding="utf-8")
    if SHARED is None:
        pytest.skip(NO_SHARED)
    return (SHARED / "specs" / "templates" / name).read_text(encoding="utf-8")


def marked(body: dict[str, Any]) -> dict[str, Any]:
    """The body with each call's arguments replaced by one unique marker: found in a prompt only if the
    template kept that call."""
    out: dict[str, Any] = json.loads(json.dumps(body))
    n = 0
    for m in out["messages"]:
        for call in m.get("tool_calls") or []:
            call["function"]["arguments"] = json.dumps({"action": f"zqmark{n}q"})
            n += 1
    return out


def ours_and_theirs(
    server: LlamaServer, tmp: Path, config: Path, body: dict[str, Any], name: str
) -> tuple[Any, tuple[int, dict[str, Any]]]:
    """Our `render`/`audit` output and the server's /apply-template answer for ``body``, on one day (the
    date both sides print: rendered again if midnight passed in between)."""
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    while True:
        day = date.today()
        theirs = server.post("/apply-template", body)
        ours = run("audit", str(path), "--prompt-template", str(config), "--server", "llama.cpp", "--json")
        if date.today() == day:
            return ours, theirs


def check_template(name: str, server: LlamaServer, tmp: Path, demo: Path) -> dict[str, str]:
    config = server.tokenizer_config(tmp, "template")
    results: dict[str, str] = {}
    for mode in MODES:
        body_out = run("render", str(demo), "-v", "openai-compatible", "--mode", mode)
        assert body_out.exit_code == 0, body_out.output
        body = json.loads(body_out.stdout_bytes)
        day = date.today()
        status, theirs = server.post("/apply-template", body)
        ours = run("render", str(demo), "-v", "openai-compatible", "--mode", mode,
                   "--prompt-template", str(config), "--server", "llama.cpp")  # fmt: skip
        if date.today() != day:  # midnight passed: both sides print the date
            return check_template(name, server, tmp, demo)
        if status == 200:
            assert ours.exit_code == 0, (name, mode, ours.output)
            assert ours.stdout_bytes.decode("utf-8") == theirs["prompt"], (name, mode)
            results[mode] = "equal"
        else:  # the template refuses the body on both sides, for the same reason
            assert ours.exit_code == 1, (name, mode, status)
            reason = ours.stderr.strip().splitlines()[-1].split(": ", 2)[-1]
            assert reason in theirs["error"]["message"], (name, mode, reason, theirs)
            results[mode] = f"both refuse ({reason})"
        check_audit(name, mode, server, tmp, config, body, status == 200)
    return results


def check_audit(
    name: str, mode: str, server: LlamaServer, tmp: Path, config: Path, body: dict[str, Any], renders: bool
) -> None:
    """The audit says which calls and whether the tools reach the prompt, as the server renders it."""
    probe = marked(body)
    ours, (status, theirs) = ours_and_theirs(server, tmp, config, probe, f"{mode}-probe")
    assert ours.exit_code == 0, ours.output
    tpl = json.loads(ours.stdout)["template"]
    if not renders:
        assert tpl["error"] and status != 200, (name, mode)
        return
    prompt = theirs["prompt"]
    kept = [f"zqmark{c['index']}q" in prompt for c in tpl["calls"]]
    said = [c["fate"] != "dropped" for c in tpl["calls"]]
    assert said == kept, (name, mode, tpl["calls"])
    in_prompt = "The shared todo board." in prompt  # the coop tool's description
    assert tpl["tools"] == ("in the prompt" if in_prompt else "dropped"), (name, mode)
    # llama.cpp's own capabilities say the same
    assert server.props["chat_template_caps"]["supports_tools"] == in_prompt, (name, mode)


@pytest.mark.parametrize("name", TEMPLATES)
def test_our_prompt_is_llama_cpps(name: str, tmp_path: Path, demo_path: Path) -> None:
    require_server()
    source = template_source(name)
    with llama_server(source) as server:
        results = check_template(name, server, tmp_path, demo_path)
    print(f"{name}: started in {server.started_in:.2f} s; {results}")
    assert set(results) == set(MODES)


# ---------------------------------------------------------------- the lab against the real server


#: A short history (a small prompt: SmolLM2 reads a few hundred tokens a second on 2 busy cores).
SHORT = Path(__file__).resolve().parent.parent / "examples" / "conv-1.json"


def lab_args(url: str, out: Path, demo: Path = SHORT) -> list[str]:
    return ["lab", str(demo), "--at", "m3", "-v", "openai-compatible", "-u", url + "/v1",
            "--modes", "plain,native", "--trials", "2", "--concurrency", "1", "--expect", "coop:close",
            "--out", str(out), "--no-chart"]  # fmt: skip


def test_the_lab_runs_resumes_and_classifies_real_answers(tmp_path: Path, demo_path: Path) -> None:
    """SmolLM2 offered the tools (the tests' ChatML template with tools): far too small to call them on
    purpose, but its real answers, llama.cpp's own tool-call parser and prompt cache go through the lab."""
    from toolreplay._lab.classify import PLAIN_REASONS, TRIAL_CLASSES

    require_server()
    out = tmp_path / "run"
    with llama_server((DATA / "chatml-tools.jinja").read_text(encoding="utf-8")) as server:
        t0 = time.monotonic()
        first = run(*lab_args(server.url, out))
        took = time.monotonic() - t0
        again = run(*lab_args(server.url, out))
    print(f"lab: 4 trials in {took:.1f} s")
    assert first.exit_code == 0, first.output
    records = [json.loads(x) for x in (out / "trials.jsonl").read_text().splitlines()]
    assert len(records) == 4
    for r in records:
        assert r["class"] in TRIAL_CLASSES and r["model"], r
        assert r["reason"] in (PLAIN_REASONS[r["class"]], "cut off", "faked the tool's answer"), r
        assert bool(r["calls"]) == (r["class"] in ("called", "other_tool")), r
        assert (r["reason"] == "cut off") == (
            (r["finish_reason"] == "length" and r["class"] != "called")
            or any(not isinstance(c["input"], dict) for c in r["calls"])
        ), r
    # the table and summary.json count what the records say, class by class
    summary = json.loads((out / "summary.json").read_text())
    for cell in summary["cells"]:
        mine = [r["class"] for r in records if r["mode"] == cell["mode"]]
        assert cell["counts"] == {c: mine.count(c) for c in TRIAL_CLASSES}, cell
        assert f"{mine.count('called')} of 2 called" in first.stdout
    # the rerun sends nothing: every trial is resumed
    assert again.exit_code == 0, again.output
    assert "resumed: 4 trials were already in" in again.stdout
    assert len((out / "trials.jsonl").read_text().splitlines()) == 4


def test_the_lab_names_a_template_that_drops_the_tools(tmp_path: Path, demo_path: Path) -> None:
    """SmolLM2's own template never reads tools: llama.cpp's /props says so, and nothing is sent."""
    require_server()
    with llama_server() as server:
        res = run(*lab_args(server.url, tmp_path / "run"))
        assert server.props["chat_template_caps"]["supports_tools"] is False
    assert res.exit_code == 1
    line = res.stderr.strip().splitlines()[-1]
    assert "--vessel openai-compatible: the server drops the tools: its chat template never reads" in line
    assert "nothing was sent" in line and not (tmp_path / "run" / "trials.jsonl").exists()
