"""Against a real llama.cpp server (``tests/llama_server.py``): our prompt is the server's, for every chat
template the project tests with and every replay mode; the template audit agrees with what the server
renders (design 37, 38).

Each template is given to its own server as the override (1-3 s to start on 2 cores); the model is
SmolLM2-135M-Instruct whatever the template, so the special tokens are SmolLM2's (``/props``), and our side
reads them from the same tokenizer_config.json the test writes.
"""

from __future__ import annotations

import json
import os
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
