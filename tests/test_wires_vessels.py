"""Vessels are data: the built-in table and the user's TOML file."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

import pytest

import toolreplay
from toolreplay._config import default_vessel
from toolreplay._errors import ConfigError
from toolreplay._vessels import BUILTIN, get_vessel, load_vessels, vessels

EXPECTED = {
    "codex": "openai-responses",
    "grok": "openai-responses",
    "kimi": "openai-chat",
    "ollama": "ollama",
    "glm": "anthropic",
    "gemini": "gemini",
    "claude": "claude-prompt",
    "anthropic": "anthropic",
    "openai": "openai-chat",
    "openai-compatible": "openai-chat",
}


def test_the_issue_vessels_are_built_in() -> None:
    for name, wire in EXPECTED.items():
        assert BUILTIN[name].wire == wire
    assert get_vessel("codex").has("store_false") and get_vessel("codex").max_id_len == 64
    assert get_vessel("openai").max_id_len == 40
    assert get_vessel("kimi").id_policy == "kimi" and get_vessel("kimi").max_id_len is None
    assert get_vessel("kimi").has("tool_message_name")
    assert get_vessel("glm").base_url.startswith("https://api.z.ai/api/anthropic")
    assert get_vessel("ollama").key_env is None


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "vessels.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_user_file_adds_and_overrides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_path: Path
) -> None:
    path = write(
        tmp_path,
        """
[vessels.local-qwen]
wire = "openai-chat"
base_url = "http://127.0.0.1:8000/v1"
model = "Qwen/Qwen3-8B"
max_id_len = 40
flags = ["tool_message_name"]

[vessels.gemini]
model = "gemini-3-pro-preview"
""",
    )
    table = load_vessels(path)
    assert table["local-qwen"].model == "Qwen/Qwen3-8B" and table["local-qwen"].key_env is None
    assert table["gemini"].model == "gemini-3-pro-preview"
    assert table["gemini"].base_url == BUILTIN["gemini"].base_url  # untouched fields kept
    monkeypatch.setenv("TOOLREPLAY_VESSELS", str(path))
    assert [v.name for v in vessels()][-1] == "local-qwen"
    body = toolreplay.render(demo_path, "local-qwen")
    assert body["model"] == "Qwen/Qwen3-8B"
    assert any(m.get("name") == "coop" for m in body["messages"] if m["role"] == "tool")


def test_the_xdg_config_file_is_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    (cfg / "toolreplay").mkdir(parents=True)
    (cfg / "toolreplay" / "vessels.toml").write_text(
        '[vessels.openai]\nmodel = "gpt-5.1"\n', encoding="utf-8"
    )
    monkeypatch.setenv("XDG_CONFIG_HOME", str(cfg))
    assert get_vessel("openai").model == "gpt-5.1"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[vessels.x]\nwire = "openai-chat"\nbase_url = "u"\nmodel = "m"\ncolour = "red"\n',
            "unknown key(s) colour",
        ),
        ('[vessels.x]\nwire = "grpc"\nbase_url = "u"\nmodel = "m"\n', "wire 'grpc' is not one of"),
        ('[vessels.x]\nwire = "openai-chat"\n', "a new vessel needs base_url, model"),
        ('[vessels.openai]\nflags = ["fast"]\n', "unknown flag(s) fast"),
        ("[vessels.openai]\nmax_id_len = true\n", "max_id_len must be an integer"),
        ('[vessels.openai]\nid_policy = "short"\n', "id_policy must be"),
        ("[vessels.openai]\nmodel = 4\n", "model must be a string"),
        ("[vessels]\nopenai = 3\n", "[vessels.openai] must be a table"),
        ("[vessels.openai\n", "cannot read vessel file"),
    ],
)
def test_bad_files_name_the_file_and_the_vessel(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_vessels(path)
    message = str(err.value)
    assert str(path) in message and expected in message
    if "vessels." in text and "cannot read" not in expected:
        assert "[vessels." in message


def test_unknown_vessel_lists_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown vessel 'nope'; known vessels: codex, "):
        get_vessel("nope")


def _old(path: Path, seconds: int = 60) -> None:
    """Date ``path`` back: a read of a file changed just now is never kept (its edit may not move mtime)."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 1_000_000_000))


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []
    real = tomllib.loads

    def counting(text: str, **kw: Any) -> dict[str, Any]:
        reads.append(text)
        return real(text, **kw)

    monkeypatch.setattr(tomllib, "loads", counting)
    return reads


def test_the_vessel_file_is_read_once_while_it_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, 'default_vessel = "kimi"\n[vessels.openai]\nmodel = "gpt-5.1"\n')
    _old(path)
    monkeypatch.setenv("TOOLREPLAY_VESSELS", str(path))
    reads = _count_reads(monkeypatch)
    for _ in range(5):
        assert get_vessel("openai").model == "gpt-5.1" and get_vessel("kimi").wire == "openai-chat"
        assert default_vessel() == "kimi" and len(vessels()) == len(BUILTIN)
    assert len(reads) == 1


def test_an_edited_vessel_file_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, '[vessels.openai]\nmodel = "gpt-5.1"\n')
    _old(path, 120)
    monkeypatch.setenv("TOOLREPLAY_VESSELS", str(path))
    reads = _count_reads(monkeypatch)
    assert get_vessel("openai").model == "gpt-5.1"
    # the same size, written in place (same inode), dated back too: only its mtime moved
    path.write_text('[vessels.openai]\nmodel = "gpt-5.2"\n', encoding="utf-8")
    _old(path)
    assert get_vessel("openai").model == "gpt-5.2" and get_vessel("openai").model == "gpt-5.2"
    # replaced by a new file of another size, just now: read again, and again while it is fresh
    new = tmp_path / "new.toml"
    new.write_text('[vessels.openai]\nmodel = "gpt-5.3-long"\n', encoding="utf-8")
    new.replace(path)
    assert get_vessel("openai").model == "gpt-5.3-long"
    assert len(reads) == 3
    assert get_vessel("openai").model == "gpt-5.3-long" and len(reads) == 4


def test_the_vessel_file_rows_are_checked_once_while_it_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table built from a file is kept with its read (issue 23: a lookup checked every row of the
    user's file again, 85 µs with two rows); an edit is still seen, and its rows checked again."""
    import toolreplay._vessels as vessels_module

    path = write(tmp_path, '[vessels.openai]\nmodel = "gpt-5.1"\n[vessels.mine]\nwire = "ollama"\n'
                 'base_url = "http://127.0.0.1:11434"\nmodel = "qwen3"\n')  # fmt: skip
    _old(path)
    monkeypatch.setenv("TOOLREPLAY_VESSELS", str(path))
    built: list[str] = []
    real = vessels_module._vessel_from_toml

    def counting(name: str, *args: Any, **kw: Any) -> Any:
        built.append(name)
        return real(name, *args, **kw)

    monkeypatch.setattr(vessels_module, "_vessel_from_toml", counting)
    for _ in range(5):
        assert get_vessel("openai").model == "gpt-5.1" and get_vessel("mine").wire == "ollama"
    load_vessels()["openai"] = BUILTIN["kimi"]  # a caller's copy: the kept table is not changed
    assert get_vessel("openai").model == "gpt-5.1"
    assert built == ["openai", "mine"]
    path.write_text('[vessels.openai]\nmodel = "gpt-5.2"\n', encoding="utf-8")
    _old(path, 30)
    assert get_vessel("openai").model == "gpt-5.2" and "mine" not in load_vessels()
    assert built == ["openai", "mine", "openai"]


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"flags": ["tool_mesage_name"]}, r"\[vessels\.x\]: unknown flag\(s\) tool_mesage_name; known: "),
        ({"context_tokns": 10}, r"\[vessels\.x\]: unknown key\(s\) context_tokns"),
        ({"id_policy": "kimy"}, r"\[vessels\.x\]: id_policy must be"),
        ({"max_id_len": "64"}, r"\[vessels\.x\]: max_id_len"),
        ({"model": None}, r"\[vessels\.x\]: a new vessel needs model"),
    ],
)
def test_a_malformed_built_in_row_is_refused(row: dict[str, Any], expected: str) -> None:
    """The built-in rows are keyword data checked as a user's table is, when the module is imported."""
    from toolreplay._vessels import _TABLE, builtin_table

    assert builtin_table(_TABLE) == BUILTIN  # the table the module's vessels come from, checked
    good: dict[str, Any] = {"wire": "openai-chat", "base_url": "https://h.example/v1", "model": "m"}
    bad = {k: v for k, v in {**good, **row}.items() if v is not None}
    with pytest.raises(ConfigError, match="^the built-in vessel table: " + expected):
        builtin_table({"x": bad})
    assert builtin_table({"x": good})["x"].model == "m"


def test_the_built_in_rows_name_registered_wires() -> None:
    from toolreplay._vessels import checked_breakpoints
    from toolreplay.wires import wire_names

    assert {v.wire for v in BUILTIN.values()} <= set(wire_names())
    for v in BUILTIN.values():  # the check a user's row meets, which the table skips while it loads
        assert checked_breakpoints(v.cache_breakpoints, f"{v.name}: ") == v.cache_breakpoints
