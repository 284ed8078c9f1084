"""Images and documents in the user's own messages (issue 12 item 5): the neutral model, both stores, every
importer that reads user content, and every wire's render (carried where the wire can, a short name and a
warning where it cannot)."""

from __future__ import annotations

import base64
import copy
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

import toolreplay
from scripted import Scripted
from store_fixtures import store, store_factory, store_url  # noqa: F401
from toolreplay._audit.body import load_request
from toolreplay._audit.report import audit_request, format_audit
from toolreplay._audit.validate import check_body, rule_problems
from toolreplay._budget import ContextBudget, body_counter
from toolreplay._cli import cli
from toolreplay._errors import HistoryError
from toolreplay._history import History, Message, history_from_dict, history_to_dict, load_history
from toolreplay._jsonenc import encode
from toolreplay._loop import TurnOptions, run_turn
from toolreplay._steps import Part, from_data_url, image_type, url_type, with_words
from toolreplay._store import Store
from toolreplay._store.sqlite import SQLiteStore
from toolreplay._tokens import (
    BYTES_PER_TOKEN,
    IMAGE_TOKENS,
    PAGE_TOKENS,
    byte_count,
    part_tokens,
    planning_size,
)
from toolreplay._vessels import BUILTIN, get_vessel
from toolreplay.testing import ProviderDouble
from toolreplay.wires import parse_request
from toolreplay.wires.anthropic.rules import IMAGE_TYPE
from toolreplay.wires.contract import first_refusal
from toolreplay.wires.reply import Reply
from wire_helpers import VESSELS, is_http, wire_url

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
PDF = "JVBERi0xLjQKMSAwIG9iago8PC9UeXBlL0NhdGFsb2c+PgplbmRvYmoKdHJhaWxlcgo8PC9Sb290IDEgMCBSPj4KJSVFT0YK"
IMAGE = Part("image", media_type="image/png", data=PNG)
DOC = Part("document", media_type="application/pdf", data=PDF, name="receipt.pdf")
PHOTO = Part("image", url="https://example.test/cat.jpg")

FILE_FORM: dict[str, Any] = {
    "id": "media",
    "messages": [
        {"id": "u1", "role": "user", "text": "What is on this receipt?",
         "parts": [{"kind": "image", "media_type": "image/png", "data": PNG},
                   {"kind": "text", "text": "What is on this receipt?"},
                   {"kind": "document", "media_type": "application/pdf", "data": PDF,
                    "name": "receipt.pdf"}]},
        {"id": "a1", "role": "assistant", "text": "A coffee, 3 EUR."},
        {"id": "u2", "role": "user", "parts": [{"kind": "image", "url": "https://example.test/cat.jpg"}]},
    ],
}  # fmt: skip


def media_history() -> History:
    return history_from_dict(copy.deepcopy(FILE_FORM))


# ------------------------------------------------------------------------------------------- the model


def test_the_file_form_keeps_parts_in_order_and_the_words_as_text() -> None:
    h = media_history()
    first, _, last = h.messages
    assert first.parts == (IMAGE, Part("text", text="What is on this receipt?"), DOC)
    assert first.text == "What is on this receipt?"
    assert (last.text, last.parts) == ("", (PHOTO,))
    assert load_history(history_to_dict(h)) == h


def test_text_beside_parts_without_words_goes_after_them() -> None:
    assert with_words("Describe it.", (IMAGE,)) == (
        "Describe it.",
        (IMAGE, Part("text", text="Describe it.")),
    )
    assert with_words("ignored", (Part("text", text="a"), IMAGE, Part("text", text="b"))) == (
        "a\n\nb",
        (Part("text", text="a"), IMAGE, Part("text", text="b")),
    )


def test_only_user_messages_carry_parts() -> None:
    bad = {
        "messages": [{"id": "a", "role": "assistant", "text": "x", "parts": [{"kind": "image", "url": "u"}]}]
    }
    with pytest.raises(HistoryError, match=r"message 0 \(id a\): parts: only user messages carry parts"):
        history_from_dict(bad)
    with pytest.raises(HistoryError, match=r"parts\[0\]\.kind"):
        history_from_dict({"messages": [{"id": "u", "role": "user", "parts": [{"kind": "audio"}]}]})


def test_a_data_url_is_split_into_its_type_and_data() -> None:
    assert from_data_url("image", f"data:image/png;base64,{PNG}") == IMAGE
    assert from_data_url("image", "https://example.test/cat.jpg") == PHOTO


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def test_an_image_type_is_read_from_its_first_bytes_and_a_riff_must_say_webp() -> None:
    webp, wav = b"RIFF\x24\x00\x00\x00WEBPVP8 ", b"RIFF\x24\x00\x00\x00WAVEfmt "
    assert [image_type(d) for d in (PNG, _b64(b"\xff\xd8\xff\xe0"), _b64(b"GIF89a"), _b64(webp))] == [
        "image/png", "image/jpeg", "image/gif", "image/webp",
    ]  # fmt: skip
    # WAV and AVI share WebP's RIFF container: the form type at bytes 8-11 tells them apart
    for other in (wav, b"RIFF\x24\x00\x00\x00AVI LIST", b"RIFF"):
        assert image_type(_b64(other)) == "", other
    assert image_type("UklGRg==") == "" and image_type("UklGR!!!") == ""  # too short; not base64
    # an Ollama request's images have no type of their own: the importer reads them the same way
    body = {"model": "m", "messages": [{"role": "user", "content": "x", "images": [_b64(webp), _b64(wav)]}]}
    types = [p.media_type for p in parse_request("ollama", body).messages[0].parts if p.kind == "image"]
    assert types == ["image/webp", ""]


# ------------------------------------------------------------------------------------------ the stores


def test_both_stores_keep_the_parts(store: Store) -> None:  # noqa: F811
    h = media_history()
    store.import_history(h)
    assert store.load(h.id) == h
    assert store.load_range(h.id, 0).messages == h.messages
    assert store.import_history(h).unchanged == 3  # the same parts: nothing to write


def test_a_stored_message_with_other_parts_is_a_conflict(store: Store) -> None:  # noqa: F811
    h = media_history()
    store.import_history(h)
    changed = list(h.messages)
    changed[2] = Message("u2", "user", "", parts=(IMAGE,))
    with pytest.raises(toolreplay.StoreError, match="different parts"):
        store.import_history(History(h.id, tuple(changed)))


def test_only_user_messages_are_stored_with_parts(store: Store) -> None:  # noqa: F811
    with pytest.raises(toolreplay.StoreError, match="only user messages carry parts"):
        store.append_message("c", Message("a", "assistant", "x", parts=(IMAGE,)))


# ------------------------------------------------------------------------------------------ the wires


def _messages(vessel: str, warnings: list[str] | None = None) -> list[Any]:
    # the blocks as the wire renders them, without Anthropic's prompt-cache markers (design 36)
    body = toolreplay.render(media_history(), vessel, warnings=warnings, cache_breakpoints=0)
    for key in ("messages", "input", "contents"):
        if key in body:
            return list(body[key])
    raise AssertionError(body)


def test_anthropic_sends_image_and_document_blocks() -> None:
    said: list[str] = []
    first, _, last = _messages("anthropic", said)
    assert first["content"] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "text", "text": "What is on this receipt?"},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
         "title": "receipt.pdf"},
    ]  # fmt: skip
    assert last == {
        "role": "user",
        "content": [{"type": "image", "source": {"type": "url", "url": PHOTO.url}}],
    }
    assert said == []


def test_anthropic_takes_an_image_jpg_label_as_jpeg() -> None:
    # "image/jpg" is a common label (Chat data URLs, .jpg names) that Anthropic's media_type refuses
    jpg = Part("image", media_type="image/jpg", data="/9j/4AAQSkZJRg==")
    h = History("c", (Message("u", "user", "", parts=(jpg,)),))
    said: list[str] = []
    body = toolreplay.render(h, "anthropic", warnings=said, cache_breakpoints=0)
    source = {"type": "base64", "media_type": "image/jpeg", "data": jpg.data}
    assert body["messages"] == [{"role": "user", "content": [{"type": "image", "source": source}]}]
    assert said == [] and rule_problems("anthropic", body) == []
    assert toolreplay.render(h, "openai")["messages"][0]["content"][0]["image_url"]["url"].startswith(
        "data:image/jpg;base64,"
    )  # other wires send the label as stored


def test_chat_sends_content_parts() -> None:
    said: list[str] = []
    first, _, last = _messages("openai", said)
    assert first["content"] == [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
        {"type": "text", "text": "What is on this receipt?"},
        {
            "type": "file",
            "file": {"filename": "receipt.pdf", "file_data": f"data:application/pdf;base64,{PDF}"},
        },
    ]
    assert last["content"] == [{"type": "image_url", "image_url": {"url": PHOTO.url}}]
    assert said == []


def test_chat_names_a_document_it_cannot_carry() -> None:
    pdf = "https://example.test/a.pdf"
    h = history_from_dict(
        {"messages": [{"id": "u", "role": "user", "parts": [{"kind": "document", "url": pdf}]}]}
    )
    said: list[str] = []
    body = toolreplay.render(h, "openai", warnings=said)
    assert body["messages"][0]["content"] == [{"type": "text", "text": f"[document (unknown type, {pdf})]"}]
    assert said == [
        f"message u: the user's document (unknown type, {pdf}) cannot travel on openai-chat: sent as its "
        "name in the message's text"
    ]


def test_responses_sends_input_image_and_input_file() -> None:
    first, _, last = _messages("openai-responses")
    assert first["content"] == [
        {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"},
        {"type": "input_text", "text": "What is on this receipt?"},
        {"type": "input_file", "file_data": f"data:application/pdf;base64,{PDF}", "filename": "receipt.pdf"},
    ]
    assert last["content"] == [{"type": "input_image", "image_url": PHOTO.url, "detail": "auto"}]


def test_gemini_sends_inline_data_and_file_data() -> None:
    first, _, last = _messages("gemini")
    assert first["parts"] == [
        {"inlineData": {"mimeType": "image/png", "data": PNG}},
        {"text": "What is on this receipt?"},
        {"inlineData": {"mimeType": "application/pdf", "data": PDF}},
    ]
    # the type a fileData names, from the URL when the part has none
    assert last == {"role": "user", "parts": [{"fileData": {"mimeType": "image/jpeg", "fileUri": PHOTO.url}}]}


def test_ollama_sends_inline_images_and_names_the_rest() -> None:
    said: list[str] = []
    first, _, last = _messages("ollama", said)
    assert first == {
        "role": "user",
        "content": "What is on this receipt?\n\n[document (application/pdf, 96 characters of base64)]",
        "images": [PNG],
    }
    assert last == {"role": "user", "content": f"[image (unknown type, {PHOTO.url})]"}
    assert len(said) == 2 and all("cannot travel on ollama" in w for w in said)


def test_claude_prompt_names_every_part() -> None:
    said: list[str] = []
    body = toolreplay.render(media_history(), "claude", warnings=said)
    assert body["prompt"].endswith(f"\n\n[image (unknown type, {PHOTO.url})]")
    assert (
        '"text":"[image (image/png, 96 characters of base64)]\\n\\nWhat is on this receipt?' in body["prompt"]
    )
    assert len(said) == 3 and all("cannot travel on claude-prompt" in w for w in said)


@pytest.mark.parametrize("vessel", VESSELS)
def test_bodies_with_user_media_pass_rules_and_specs(vessel: str, shared_dir: Path) -> None:
    report = check_body(vessel, toolreplay.render(media_history(), vessel), specs_dir=shared_dir / "specs")
    assert report.problems == ()


@pytest.mark.parametrize("mode", ["plain", "prose"])
def test_every_mode_sends_the_users_parts(mode: str) -> None:
    first = toolreplay.render(media_history(), "anthropic", mode=mode)["messages"][0]
    assert [b["type"] for b in first["content"]] == ["image", "text", "document"]


# ------------------------------------------------------------------------------------ the round trip


@pytest.mark.parametrize("vessel", ["anthropic", "openai", "openai-responses", "gemini"])
def test_a_body_read_back_gives_the_same_parts(vessel: str) -> None:
    h = media_history()
    body = toolreplay.render(h, vessel)
    again = parse_request(get_vessel(vessel).wire, body)
    users = [m for m in again.messages if m.role == "user"]
    sent = [m.parts for m in h.messages if m.role == "user"]
    if vessel == "gemini":  # a Gemini blob has no name; a fileData names its type
        sent = [
            tuple(replace(p, name="", media_type=p.media_type or url_type(p.url)) for p in ps) for ps in sent
        ]
    # how each part stood in the body (``sent``: the as-sent render's) is not what the test compares
    assert [tuple(replace(p, sent=None) for p in m.parts) for m in users] == sent
    assert [m.text for m in users] == [m.text for m in h.messages if m.role == "user"]
    assert again.warnings == ()


# ------------------------------------------------------------------------------------ the estimate


def big_image(n: int) -> Part:
    return Part("image", media_type="image/png", data=PNG[:12] + "A" * n)


def test_an_image_counts_as_an_image_not_as_its_base64() -> None:
    photo = big_image(4_000_000)  # a 3 MB photo
    h = History(
        "big", (Message("u1", "user", "Describe it.", parts=(photo, Part("text", text="Describe it."))),)
    )
    count = body_counter(byte_count)
    for vessel in ("anthropic", "openai", "openai-responses", "gemini", "ollama"):
        body = toolreplay.render(h, vessel)
        assert len(encode(body)) > 4_000_000
        tokens = count(body, h.messages)
        assert IMAGE_TOKENS < tokens < IMAGE_TOKENS + 200, vessel
    assert planning_size(h.messages[0])[0] >= IMAGE_TOKENS * BYTES_PER_TOKEN  # planned the same way


def test_a_document_counts_by_its_pages() -> None:
    three = base64.b64encode(b"%PDF-1.4 " + b"<< /Type /Page >> " * 3 + b"<< /Type /Pages >>").decode()
    assert part_tokens(Part("document", media_type="application/pdf", data=three)) == 3 * PAGE_TOKENS
    text = base64.b64encode(b"x" * 3_000).decode()
    assert part_tokens(Part("document", media_type="text/plain", data=text)) == 1_000
    assert part_tokens(Part("document", url="https://example.test/a.pdf")) > PAGE_TOKENS


def test_the_budget_keeps_a_turn_with_a_large_image() -> None:
    photo = big_image(3_000_000)
    h = History("big", (
        Message("u1", "user", "Hello."), Message("a1", "assistant", "Hi."),
        Message("u2", "user", "What is this?", parts=(photo, Part("text", text="What is this?"))),
    ))  # fmt: skip
    said: list[str] = []
    body = toolreplay.render(h, "anthropic", warnings=said, context=ContextBudget(max_tokens=8_000))
    assert len(body["messages"]) == 3  # nothing left out: the image is about 1,600 tokens, not a million
    assert not any("context budget" in w for w in said)


# ------------------------------------------------------------------------- history show, audit, doubles


def test_history_show_prints_a_part_as_a_short_line(tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    with SQLiteStore(db) as s:
        s.import_history(media_history())
    res = CliRunner().invoke(cli, ["history", "show", "media", "--db", db], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "[image (image/png, 96 characters of base64)]" in res.output
    assert "[document (application/pdf, 96 characters of base64)]" in res.output
    assert f"[image (unknown type, {PHOTO.url})]" in res.output
    assert PNG not in res.output


def test_audit_names_the_users_parts() -> None:
    report = audit_request(load_request(toolreplay.render(media_history(), "anthropic")))
    lines = format_audit(report)
    assert "note: messages[0] (user) holds an image (image/png, 96 characters of base64)" in lines
    assert "note: messages[0] (user) holds a document (application/pdf, 96 characters of base64)" in lines
    assert PNG not in lines


@pytest.mark.parametrize("vessel", sorted(n for n, v in BUILTIN.items() if is_http(v.wire)))
def test_the_doubles_take_user_media(vessel: str) -> None:
    body = toolreplay.render(media_history(), vessel)
    if BUILTIN[vessel].has("stream_only"):
        body["stream"] = True
    v = BUILTIN[vessel]
    with ProviderDouble() as d, httpx.Client(timeout=5) as client:
        resp = client.post(wire_url(d.base_url_for(vessel), v.wire, v.model), content=encode(body))
    assert resp.status_code == 200, resp.text


# ---------------------------------------------------------------------- what a part cannot hold is named


def _said(wire: str, body: dict[str, Any]) -> tuple[History, str]:
    h = parse_request(wire, body)
    return h, " | ".join(h.warnings)


def test_chat_names_what_it_does_not_keep() -> None:
    content = [
        {"type": "text", "text": "Look."},
        {"type": "image_url", "image_url": {"url": PHOTO.url, "detail": "low"}},
        {"type": "file", "file": {"file_id": "file-abc"}},
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
    ]
    h, said = _said("openai-chat", {"model": "gpt-4o", "messages": [{"role": "user", "content": content}]})
    detail = replace(PHOTO, sent={"openai-chat": {"inner": {"detail": "low"}}})  # for the as-sent render
    assert h.messages[0].parts == (Part("text", text="Look."), detail)
    assert "content[1]: detail 'low' is kept for an as-sent render only (others send auto)" in said
    assert "content[2]: a 'file' part without data or a URL (a file_id) is not kept" in said
    assert "content[3]: a 'input_audio' part is not kept" in said


def test_responses_names_a_file_kept_at_openai() -> None:
    image = {"type": "input_image", "image_url": PHOTO.url, "detail": "high"}
    item = {"role": "user", "content": [{"type": "input_file", "file_id": "file-abc"}, image]}
    h, said = _said("openai-responses", {"model": "gpt-5", "input": [item]})
    high = replace(PHOTO, sent={"openai-responses": {"type": "input_image", "extra": {"detail": "high"}}})
    assert h.messages[0].parts == (high,)  # its detail for the as-sent render
    assert "content[0]: an 'input_file' part given by file_id only" in said
    assert "content[1]: detail 'high' is kept for an as-sent render only (others send auto)" in said


def test_anthropic_names_a_text_source_and_drops_cache_markers() -> None:
    content = [
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "notes"}},
        {
            "type": "image",
            "source": {"type": "url", "url": PHOTO.url},
            "cache_control": {"type": "ephemeral"},
        },
    ]
    h, said = _said(
        "anthropic",
        {"model": "claude-x", "max_tokens": 9, "messages": [{"role": "user", "content": content}]},
    )
    assert h.messages[0].parts == (PHOTO,)
    assert "content[0]: the document block's 'text' source is not kept" in said
    # a prompt-cache marker is not content (design 36): the replay places its own, so nothing is lost
    assert not any("cache_control" in w for w in said)


def test_gemini_names_audio_and_keeps_snake_case_blobs() -> None:
    parts = [
        {"inline_data": {"mime_type": "image/png", "data": PNG}},
        {"inlineData": {"mimeType": "audio/wav", "data": "UklGRg=="}},
    ]
    h, said = _said("gemini", {"contents": [{"role": "user", "parts": parts}]})
    # the image is kept, its snake_case spelling recorded for the as-sent render (design 9, 38)
    assert h.messages[0].parts == (replace(IMAGE, sent={"gemini": {"snake": ["inlineData", "mimeType"]}}),)
    assert "parts[1]: a part of type 'audio/wav' is not kept" in said


# ------------------------------------------------------------------------------------- the turn loop


def test_a_turn_sends_and_stores_the_users_image(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-sent")
    t = Scripted(
        Reply(text="A coffee receipt.", finish_reason="stop"), Reply(text="3 EUR.", finish_reason="stop")
    )
    with SQLiteStore(tmp_path / "t.db") as s:
        bare = TurnOptions(cache_breakpoints=0)  # the blocks without prompt-cache markers (design 36)
        run_turn("c", "What is this?", "anthropic", store=s, transport=t, parts=(IMAGE,), options=bare)
        run_turn("c", "", "anthropic", store=s, transport=t, parts=(PHOTO,), options=bare)
        stored = s.load("c").messages
    assert (
        stored[0].parts == (IMAGE, Part("text", text="What is this?")) and stored[0].text == "What is this?"
    )
    assert stored[2].parts == (PHOTO,) and stored[2].text == ""
    first, second = (b["messages"] for b in t.bodies)
    assert first[0]["content"][0]["source"]["data"] == PNG
    assert second[:2] == first[:1] + second[1:2]  # the first turn's bytes stay as they were
    assert second[-1] == {
        "role": "user",
        "content": [{"type": "image", "source": {"type": "url", "url": PHOTO.url}}],
    }


def test_a_turn_without_words_or_media_is_refused(tmp_path: Path) -> None:
    with (
        SQLiteStore(tmp_path / "t.db") as s,
        pytest.raises(toolreplay.ConfigError, match="an image or a document"),
    ):
        run_turn("c", " ", "ollama", store=s, parts=(Part("text", text=" "),))


def test_anthropic_refuses_an_image_of_a_type_it_does_not_take() -> None:
    bmp = {"type": "image", "source": {"type": "base64", "media_type": "image/bmp", "data": "Qk0AAAA="}}
    body = {
        "model": BUILTIN["anthropic"].model,
        "max_tokens": 9,
        "messages": [{"role": "user", "content": [bmp]}],
    }
    said = IMAGE_TYPE.format(i=0, k=0)
    assert first_refusal(rule_problems("anthropic", body)) == said
    with ProviderDouble() as d, httpx.Client(timeout=5) as client:
        resp = client.post(d.base_url_for("anthropic") + "/v1/messages", content=encode(body))
    assert resp.status_code == 400 and resp.json()["error"]["message"] == said
