"""Legacy Word .doc through antiword: UTF-8 out, and the 8-bit text of a Word 6 or 95 file recoded from
the code page its fonts declare (a Russian Word 95 file otherwise reads "Êîìïàíèÿ")."""

from __future__ import annotations

import struct
import subprocess

import pytest

from memories.parsers import ExtractionError, antiword_available, extract, ole
from memories.parsers import doc as doc_format
from tests.files import make_docx
from tests.memories.office_files import encrypted


def word95_stream(fonts: list[tuple[int, str]]) -> bytes:
    """The start of a Word 95 WordDocument stream: its FIB (nFib 104) and its font table at the
    offset the FIB gives, each entry laid out as Word 6 and 95 write them."""
    entries = b""
    for charset, name in fonts:
        body = bytes([0x26]) + struct.pack("<H", 400) + bytes([charset, 0]) + name.encode("latin-1") + b"\0"
        entries += bytes([len(body)]) + body
    table = struct.pack("<H", len(entries) + 2) + entries
    fib = bytearray(0x200)
    struct.pack_into("<HH", fib, 0, 0xA5DC, 104)
    struct.pack_into("<II", fib, 0xD0, len(fib), len(table))
    return bytes(fib) + table


def test_the_code_page_is_the_one_the_fonts_declare():
    fonts = [(0, "Times New Roman"), (2, "Symbol"), (0, "Arial"), (204, "Times New Roman Cyr")]
    assert doc_format.legacy_codepage(word95_stream(fonts)) == "cp1251"
    assert doc_format.legacy_codepage(word95_stream([(238, "Arial CE"), (0, "Arial")])) == "cp1250"
    assert doc_format.legacy_codepage(word95_stream([(0, "Arial"), (2, "Symbol")])) is None


def test_text_read_as_windows_1252_is_read_again_in_its_code_page():
    mojibake = "Компания Аскат – «вина»".encode("cp1251").decode("cp1252")
    assert mojibake.startswith("Êîìïàíèÿ Àñêàò")
    assert doc_format.recode(mojibake, "cp1251") == "Компания Аскат – «вина»"
    assert doc_format.recode("plain ASCII | table", "cp1251") == "plain ASCII | table"
    # A double-byte code page needs whole runs, ASCII bytes included (the second byte of many a kanji).
    character_of = {byte: ch for ch, byte in doc_format._BYTES_OF.items()}
    as_antiword_reads_it = "".join(character_of[byte] for byte in "東京の会議 at 10".encode("cp932"))
    assert doc_format.recode(as_antiword_reads_it, "cp932") == "東京の会議 at 10"


def test_a_word_95_file_is_read_as_utf_8_and_recoded(monkeypatch):
    stream = word95_stream([(0, "Times New Roman"), (204, "Times New Roman Cyr")])
    calls = []

    def antiword(args, **kwargs):
        calls.append(args)
        out = "Êîìïàíèÿ Àñêàò Ì\n".encode()  # what antiword prints for the file's cp1251 bytes
        return subprocess.CompletedProcess(args, 0, stdout=out, stderr=b"")

    monkeypatch.setattr(doc_format, "antiword_available", lambda: True)
    monkeypatch.setattr(ole, "stream_names", lambda data: {"worddocument"})
    monkeypatch.setattr(doc_format, "_word_stream", lambda data: stream)
    monkeypatch.setattr(subprocess, "run", antiword)
    assert extract("ru.doc", ole.OLE_MAGIC + bytes(600)).text == "Компания Аскат М\n"
    assert calls[0][:3] == ["antiword", "-m", "UTF-8.txt"]


def test_an_encrypted_word_97_file_is_password_protected(monkeypatch):
    fib = bytearray(0x200)
    struct.pack_into("<HHHHHH", fib, 0, 0xA5EC, 193, 0, 0x409, 0, 0x0100)  # fEncrypted
    monkeypatch.setattr(ole, "stream_names", lambda data: {"worddocument", "1table"})
    monkeypatch.setattr(doc_format, "_word_stream", lambda data: bytes(fib))
    with pytest.raises(ExtractionError, match="password-protected"):
        extract("locked.doc", ole.OLE_MAGIC + bytes(600))


def test_an_encrypted_docx_named_doc_is_password_protected():
    with pytest.raises(ExtractionError, match="password-protected"):
        extract("locked.doc", encrypted(make_docx()))


@pytest.mark.skipif(not antiword_available(), reason="antiword is not installed")
def test_a_damaged_doc_names_no_program_internals():
    with pytest.raises(ExtractionError) as caught:
        extract("broken.doc", ole.OLE_MAGIC + bytes(2000))
    assert "- is" not in str(caught.value) and "Error" not in str(caught.value)


class _Summary:
    def __init__(self, title, codepage):
        self.title, self.codepage = title, codepage


class _Reader:
    def __init__(self, meta):
        self.meta = meta

    def get_metadata(self):
        return self.meta

    def close(self):
        pass


@pytest.mark.parametrize(
    ("title", "codepage", "expected"),
    [
        ("Годовой отчёт".encode("cp1251"), 1251, "Годовой отчёт"),
        (b"Quarterly plan\x00", 1252, "Quarterly plan"),
        ("Plan ü".encode(), 65001, "Plan ü"),
        (b"Document1", 1252, None),  # a placeholder Word writes is no title
        (None, 1252, None),
    ],
)
def test_a_doc_takes_its_title_from_its_summary_information(monkeypatch, title, codepage, expected):
    monkeypatch.setattr(ole, "open_ole", lambda data: _Reader(_Summary(title, codepage)))
    assert doc_format._summary_title(b"") == expected
