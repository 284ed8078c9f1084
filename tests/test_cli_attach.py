"""``toolreplay turn --attach PATH``: a file read into an image or document part and sent on the vessel's
wire (design 34); a file that cannot go is refused before anything is stored, naming the file."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from helpers_cli import conversations, invoke, run
from toolreplay._cli._attach import MAX_BYTES, read_attachment
from toolreplay._steps import Part
from toolreplay._store.sqlite import SQLiteStore
from toolreplay.testing import ProviderDouble, Text

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
)
PDF = b"%PDF-1.4\n1 0 obj\n<</Type/Catalog>>\nendobj\ntrailer\n<</Root 1 0 R>>\n%%EOF\n"


@pytest.fixture(scope="module")
def _server() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


@pytest.fixture
def double(_server: ProviderDouble) -> ProviderDouble:
    _server.clear()
    return _server


def _turn(double: ProviderDouble, db: Path, vessel: str, *args: str) -> None:
    res = run("turn", *args, "-v", vessel, "--cid", "c", "--db", str(db), "-u", double.base_url_for(vessel))
    assert res.exit_code == 0, res.output


def test_an_image_goes_as_an_anthropic_image_block(double: ProviderDouble, tmp_path: Path) -> None:
    (tmp_path / "dot.png").write_bytes(PNG)
    _turn(double, tmp_path / "t.db", "anthropic", "What is this?", "--attach", str(tmp_path / "dot.png"))
    content = double.requests[-1].body["messages"][-1]["content"]
    assert content[0] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(PNG).decode()},
    }
    assert content[-1]["text"] == "What is this?"
    with SQLiteStore(tmp_path / "t.db") as s:
        user = s.load("c").messages[0]
    assert user.parts[0] == Part("image", media_type="image/png", data=base64.b64encode(PNG).decode())


def test_files_alone_go_as_chat_parts_in_order(double: ProviderDouble, tmp_path: Path) -> None:
    # a photo saved as .jpg goes as the PNG its bytes are; no TEXT: the files are the whole message
    (tmp_path / "photo.jpg").write_bytes(PNG)
    (tmp_path / "receipt.pdf").write_bytes(PDF)
    _turn(
        double, tmp_path / "t.db", "kimi",
        "--attach", str(tmp_path / "photo.jpg"), "--attach", str(tmp_path / "receipt.pdf"),
    )  # fmt: skip
    content = double.requests[-1].body["messages"][-1]["content"]
    assert content[0] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()},
    }
    assert content[1]["type"] == "file" and content[1]["file"]["filename"] == "receipt.pdf"
    assert len(content) == 2  # no words given, none invented


def test_a_webp_is_known_by_its_form_type(tmp_path: Path) -> None:
    (tmp_path / "pic").write_bytes(b"RIFF\x24\x00\x00\x00WEBPVP8 ")
    assert read_attachment(tmp_path / "pic").media_type == "image/webp"


def test_a_text_file_is_a_document(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("héllo\n", encoding="utf-8")
    part = read_attachment(tmp_path / "notes.txt")
    assert (part.kind, part.media_type, part.name) == ("document", "text/plain", "notes.txt")
    assert base64.b64decode(part.data).decode() == "héllo\n"


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("gone.png", None, "gone.png: no such file"),
        ("empty.png", b"", "empty.png: the file is empty"),
        (
            "song.mp3",
            b"ID3\x03\x00",
            "song.mp3: not a type any wire takes; accepted: PNG, JPEG, GIF and WebP",
        ),
        ("sound.wav", b"RIFF\x24\x00\x00\x00WAVEfmt ", "sound.wav: not a type any wire takes; accepted:"),
        ("data.bin", b"\x00\x01\x02", "data.bin: not a type any wire takes; accepted:"),
        ("fake.png", b"not a png", "fake.png: named image/png by its extension, but its first bytes are not"),
        ("latin.txt", "café".encode("latin-1"), "latin.txt: a .txt file that is not UTF-8"),
    ],
)
def test_a_file_that_cannot_go_is_refused_before_storing(
    tmp_path: Path, name: str, content: bytes | None, problem: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    db = tmp_path / "t.db"
    res = run("turn", "hi", "--attach", str(path), "-v", "kimi", "--db", str(db), "-u", "http://127.0.0.1:9")
    assert res.exit_code == 2, res.output
    assert "Invalid value for '--attach'" in res.stderr and problem in " ".join(res.stderr.split())
    assert not db.exists() or conversations(db) == []


def test_a_directory_and_a_file_too_large_are_refused(tmp_path: Path) -> None:
    with pytest.raises(click.BadParameter, match="a directory, not a file"):
        read_attachment(tmp_path)
    big = tmp_path / "big.png"
    with big.open("wb") as f:  # sparse: the size is checked before a byte is read
        f.truncate(MAX_BYTES + 1)
    with pytest.raises(
        click.BadParameter, match=r"big.png: 20,971,521 bytes, more than the 20,971,520 --attach takes"
    ):
        read_attachment(big)


def test_without_text_or_a_file_the_turn_still_asks_for_text(tmp_path: Path) -> None:
    res = run("turn", "-v", "kimi", "--db", str(tmp_path / "t.db"), "-u", "http://127.0.0.1:9")
    assert res.exit_code == 2 and "the prompt read from stdin is empty" in res.stderr


# ------------------------------------------------------------------------------------ /attach in chat


def _chat(double: ProviderDouble, db: Path, vessel: str, lines: str) -> str:
    url = double.base_url_for(vessel)
    res = invoke("chat", "-v", vessel, "--cid", "c", "--db", str(db), "-u", url, input=lines)
    assert res.exit_code == 0, res.output
    assert "Traceback" not in res.output
    return " ".join(res.output.split())


def test_chat_attach_queues_files_for_the_next_message_only(double: ProviderDouble, tmp_path: Path) -> None:
    (tmp_path / "dot.png").write_bytes(PNG)
    (tmp_path / "receipt.pdf").write_bytes(PDF)
    (tmp_path / "sound.wav").write_bytes(b"RIFF\x24\x00\x00\x00WAVEfmt ")
    double.script(Text("one"), Text("two"))
    lines = (
        f"/attach\n/attach {tmp_path / 'dot.png'}\n/attach {tmp_path / 'sound.wav'}\n"
        f"/attach {tmp_path / 'gone.png'}\n/attach {tmp_path / 'receipt.pdf'}\n/attach\n"
        "What is this?\nand now?\n/help\n/exit\n"
    )
    out = _chat(double, tmp_path / "t.db", "anthropic", lines)
    assert "(no files attached; /attach PATH adds one)" in out
    # a file that cannot go is one line, and the chat goes on with the files already queued
    assert "error: sound.wav: not a type any wire takes; accepted:" in out.replace(str(tmp_path) + "/", "")
    assert "error: gone.png: no such file" in out.replace(str(tmp_path) + "/", "")
    listed = "attached to your next message: dot.png (image/png), receipt.pdf (application/pdf)"
    assert out.count(listed) == 2  # once when added, once when /attach alone lists them
    assert "/attach PATH (a file for the next message" in out  # /help names it
    first, second = (r.body["messages"] for r in double.requests)
    assert [b["type"] for b in first[-1]["content"]] == ["image", "document", "text"]
    assert first[-1]["content"][0]["source"]["data"] == base64.b64encode(PNG).decode()
    # the queue went with the first message only (a list here for the prompt-cache marker, design 36)
    assert [(b["type"], b["text"]) for b in second[-1]["content"]] == [("text", "and now?")]
    assert [b["type"] for b in second[0]["content"]] == ["image", "document", "text"]  # replayed as stored
    with SQLiteStore(tmp_path / "t.db") as s:
        messages = s.load("c").messages
    assert [p.kind for p in messages[0].parts] == ["image", "document", "text"] and messages[2].parts == ()


def test_chat_detach_drops_the_queue(double: ProviderDouble, tmp_path: Path) -> None:
    (tmp_path / "dot.png").write_bytes(PNG)
    double.script(Text("one"))
    out = _chat(
        double, tmp_path / "t.db", "kimi", f"/attach {tmp_path / 'dot.png'}\n/detach\n/detach\nhi\n/exit\n"
    )
    assert "(dropped 1 file(s))" in out and "(no files attached)" in out
    assert double.requests[-1].body["messages"][-1]["content"] == "hi"
