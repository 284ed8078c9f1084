"""Untrusted chat templates render inside limits (issue 15, item 5): each hostile template below ends in
one line (a PromptTemplateError or ConfigError), quickly, without eating memory; no jinja2 is one line."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from toolreplay._audit import sandbox
from toolreplay._audit.templates import ChatTemplate, PromptTemplateError, render_prompt
from toolreplay._errors import ConfigError

BODY = {"messages": [{"role": "user", "content": "hi"}]}

HOSTILE = {
    "divide by zero": "{{ 1/0 }}",
    "float overflow": "{{ (10**400)|float }}",
    "huge range": "{{ range(10**9)|list|length }}",
    "recursive macro": "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
    "truncate(-1)": "{{ 'abcdef'|truncate(-1) }}",
    "string times a billion": "{{ 'a' * 10**9 }}",
    "list times a billion": "{{ ([1] * 10**9)|length }}",
    "huge power": "{{ 10 ** 100000000 }}",
    "huge power of a variable": "{% set n = 10 ** 8 %}{{ 7 ** n }}",
    "nested loops": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "output flood": "{% for i in range(100000) %}{% for j in range(1000) %}xxxxx{% endfor %}{% endfor %}",
    "center a billion": "{{ 'a'|center(10**9) }}",
}


@pytest.mark.slow
@pytest.mark.parametrize("source", list(HOSTILE.values()), ids=list(HOSTILE))
def test_hostile_templates_end_in_one_line(source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "TIME_LIMIT", 2.0)
    start = time.monotonic()
    with pytest.raises((PromptTemplateError, ConfigError)) as err:
        render_prompt(BODY, ChatTemplate(source, "evil.jinja", {}))
    assert time.monotonic() - start < 10
    text = str(err.value)
    assert text.startswith("evil.jinja: ") and "\n" not in text and len(text) < 300


def test_a_normal_template_still_renders() -> None:
    src = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
    assert render_prompt(BODY, ChatTemplate(src, "ok.jinja", {})) == "<user>hi"


def test_without_jinja2_it_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "jinja2", None)
    with pytest.raises(
        ConfigError, match=r"^chat templates need jinja2: pip install 'toolreplay\[templates\]'$"
    ):
        render_prompt(BODY, ChatTemplate("{{ 1 }}", "t.jinja", {}))
