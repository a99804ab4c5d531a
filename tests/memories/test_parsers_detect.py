"""Content chooses the format: signatures first, then a text sniff; the extension is only a hint."""

from __future__ import annotations

import gzip
import io

import pytest

from memories.parsers import ExtractionError, Format, Parsed, extract, registry
from memories.parsers import doc as doc_format
from memories.parsers import docx as docx_format
from memories.parsers import html as html_format
from memories.parsers import pdf as pdf_format
from memories.parsers import rtf as rtf_format
from memories.parsers import text as text_format
from memories.parsers.detect import DOC, DOCX, ENCRYPTED_OFFICE, EPUB, ODP, ODS, ODT, PDF, PPT, PPTX, XLS, XLSX, detect
from tests.files import make_docx, make_ole, make_pdf, make_zip

RTF_NOTE = rb"{\rtf1\ansi\deff0{\fonttbl{\f0 Times;}}\f0 Minutes of the board meeting.\par}"


def image(kind: str) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (8, 8), "white").save(out, kind)
    return out.getvalue()


# --- Signatures -------------------------------------------------------------------------------------


SIGNED = [
    (make_pdf(["x"]), PDF),
    (make_docx(), DOCX),
    (make_zip({"[Content_Types].xml": "<Types/>", "xl/workbook.xml": "<workbook/>"}), XLSX),
    (make_zip({"[Content_Types].xml": "<Types/>", "ppt/presentation.xml": "<p/>"}), PPTX),
    (make_zip({"mimetype": ODT, "content.xml": "<office/>"}, stored_first="mimetype"), ODT),
    (make_zip({"mimetype": ODS, "content.xml": "<office/>"}, stored_first="mimetype"), ODS),
    (make_zip({"mimetype": ODP, "content.xml": "<office/>"}, stored_first="mimetype"), ODP),
    (make_zip({"mimetype": EPUB, "META-INF/container.xml": "<container/>"}, stored_first="mimetype"), EPUB),
    (make_ole({"WordDocument": b"\xec\xa5", "1Table": b"t"}), DOC),
    (make_ole({"Workbook": b"w"}), XLS),
    (make_ole({"PowerPoint Document": b"p"}), PPT),
    (RTF_NOTE, "application/rtf"),
    (image("PNG"), "image/png"),
    (image("JPEG"), "image/jpeg"),
    (image("TIFF"), "image/tiff"),
    (image("WEBP"), "image/webp"),
    (image("GIF"), "image/gif"),
    (b"<!DOCTYPE html><html><body><p>Hello</p></body></html>", "text/html"),
    (b"\xef\xbb\xbf<?xml version='1.0'?>\n<!-- saved -->\n<html lang='en'><p>Hi</p></html>", "text/html"),
    (b"Just a few words of text.\n", "text/plain"),
]


@pytest.mark.parametrize(
    ("data", "media_type"), SIGNED, ids=[f"{i}-{m.rsplit('.', 1)[-1]}" for i, (_, m) in enumerate(SIGNED)]
)
def test_the_content_says_what_a_file_is(data, media_type):
    assert detect(data).media_type == media_type


def test_a_pdf_header_anywhere_in_the_first_kb_is_a_pdf_but_a_note_that_mentions_one_is_text():
    assert detect(b"\r\n\x00\x07" + make_pdf(["Invoice 42"])).media_type == PDF
    assert detect(b"x" * 1000 + make_pdf(["late header"])).media_type == PDF
    assert detect(b"x" * 1100 + make_pdf(["too late"])).media_type != PDF
    note = b"# PDF internals\n\nEvery file starts with %PDF-1.7 and a binary comment.\n"
    assert detect(note).media_type == "text/plain"


def test_encrypted_office_files_are_refused_as_password_protected_whatever_their_name():
    encrypted = make_ole({"EncryptionInfo": b"\x04\x00\x04\x00", "EncryptedPackage": b"\x00" * 64})
    for name in ("secret.docx", "budget.xlsx", "deck.pptx", "secret"):
        with pytest.raises(ExtractionError, match="password-protected"):
            extract(name, encrypted)
    assert ENCRYPTED_OFFICE.startswith("the file is password-protected")


def test_ole_stream_names_are_found_without_regard_to_case():
    assert detect(make_ole({"WORDDOCUMENT": b"w"})).media_type == DOC
    assert detect(make_ole({"CompObj": b"c"})).generic


# --- Extensions that lie ----------------------------------------------------------------------------


def test_a_pdf_named_docx_is_read_as_the_pdf_it_is_and_says_so():
    result = extract("contract.docx", make_pdf(["The parties agree."]))
    assert result.text == "The parties agree."
    assert result.metadata["mime"] == "application/pdf" and result.metadata["pageCount"] == 1
    assert result.metadata["extension"] == "docx" and result.metadata["filename"] == "contract.docx"
    assert result.notices == ["the file is named .docx but is really a PDF, and was read as such"]


def test_a_docx_named_pdf_is_read_as_a_word_document():
    result = extract("plan.pdf", make_docx())
    assert "# Quarterly plan" in result.text
    assert result.notices == ["the file is named .pdf but is really a Word document (.docx), and was read as such"]


def test_text_named_pdf_is_read_as_text():
    result = extract("notes.pdf", b"Not a PDF at all: these are meeting notes.")
    assert result.text == "Not a PDF at all: these are meeting notes."
    assert result.metadata["mime"] == "text/plain"
    assert result.notices == ["the file is named .pdf but is really plain text, and was read as such"]


def test_an_rtf_named_txt_is_read_as_rtf():
    result = extract("minutes.txt", RTF_NOTE)
    assert result.text.strip() == "Minutes of the board meeting."
    assert "really an RTF document" in result.notices[0]


def test_a_zip_that_is_a_docx_is_read_whatever_its_name():
    assert "Quarterly plan" in extract("download.zip", make_docx()).text
    assert "Quarterly plan" in extract("attachment", make_docx()).text


def test_the_extension_chooses_the_flavour_of_text():
    page = b"<!DOCTYPE html>\n<html><body><?php echo $title; ?><p>Hello</p></body></html>\n"
    assert extract("index.php", page).text == page.decode(), "a template stays source code"
    assert extract("page.txt", page).text == page.decode(), "a .txt file stays text"
    assert extract("saved-page", page).text == "Hello", "HTML without an extension is read as a page"
    assert extract("fragment.html", b"<p>only a <b>fragment</b></p>").text == "only a fragment"
    assert registry.choose("md", b"# Title")[0] is not text_format.FORMAT


def test_a_damaged_file_of_the_named_type_gets_that_formats_reason():
    with pytest.raises(ExtractionError, match="not a PDF"):
        extract("scan.pdf", b"\x00\x01\x02\x03" * 64)
    with pytest.raises(ExtractionError, match="damaged or cut short"):
        extract("report.docx", b"PK\x03\x04" + b"\x00" * 60)
    with pytest.raises(ExtractionError, match=r"no word/document\.xml inside"):
        extract("report.docx", make_zip({"readme.txt": "not a Word file"}))
    assert registry.choose("doc", make_ole({"CompObj": b"c"}))[0] is doc_format.FORMAT


# --- Text without a known extension -----------------------------------------------------------------

DEBIAN_COPYRIGHT = (
    "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
    "Upstream-Name: example\n\n"
    "Files: *\nCopyright: 1998-2024 The Example Authors <authors@example.org>\nLicense: GPL-2+\n"
    " This program is free software; you can redistribute it and/or modify it under the terms of\n"
    " the GNU General Public License as published by the Free Software Foundation.\n .\n"
)


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("README", b"Example project\n===============\n\nRun make to build it.\n"),
        ("LICENSE", b"MIT License\n\nPermission is hereby granted, free of charge...\n"),
        ("Makefile", b"all:\n\tcc -o app main.c\n"),
        ("COPYING", b"GNU GENERAL PUBLIC LICENSE\nVersion 2, June 1991\n"),
        ("copyright", (DEBIAN_COPYRIGHT * 400).encode()),
        ("server.log", b"2024-05-01 12:00:01 INFO started\n2024-05-01 12:00:02 WARN slow disk\n"),
        ("setup.cfg", b"[metadata]\nname = example\n"),
        ("pyproject.toml", b"[project]\nname = 'example'\n"),
        ("php.ini", b"[PHP]\nmemory_limit = 128M\n"),
        ("notes.2024", b"Notes for the year.\n"),
        (".bashrc", b"export PATH=$HOME/bin:$PATH\n"),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_text_without_a_known_extension_is_accepted(name, data):
    result = extract(name, data)
    assert result.text == data.decode().replace("\r\n", "\n") and result.notices == []


def test_the_116_kb_copyright_file_is_kept_whole():
    data = (DEBIAN_COPYRIGHT * 400).encode()
    assert len(data) > 116_000
    result = extract("copyright", data)
    assert len(result.text) == len(data) and result.metadata["mime"] == "text/plain"


def test_an_extensionless_readme_in_a_legacy_encoding_is_decoded():
    readme = "Установка: запустите make install, затем откройте файл настроек.\n"
    assert extract("README", readme.encode("cp1251")).text == readme


# --- Refusals ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["empty.txt", "README", "tool.exe", "photo.png", "noext", "report.pdf"])
def test_a_zero_byte_file_is_refused_as_empty_whatever_its_name(name):
    with pytest.raises(ExtractionError, match=r"^the file is empty$"):
        extract(name, b"")


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("binary.txt", bytes(range(256)) * 16, "this .txt file is not text: it looks like binary data"),
        ("notes.md", b"\x00\x01\x02\x03" * 100, "this .md file is not text: it looks like binary data"),
        (
            "archive.gz",
            gzip.compress(b"x" * 1000, mtime=0),
            ".gz is not a supported file type: it looks like binary data",
        ),
        ("blob", bytes(range(256)) * 16, "this file has no extension and is not a supported file type"),
        (
            "backup.zip",
            make_zip({"notes.txt": "hello"}),
            ".zip is not a supported file type: it looks like a zip archive",
        ),
        (
            "sheet.xls",
            make_ole({"Workbook": b"w"}),
            ".xls is not a supported file type: it looks like an Excel 97-2003",
        ),
        (
            "sheet.docx",
            make_ole({"Workbook": b"w"}),
            "this .docx file is really an Excel 97-2003 workbook (.xls), which",
        ),
    ],
    ids=lambda value: value if isinstance(value, str) and "." in value[:12] and len(value) < 12 else "",
)
def test_content_that_no_format_reads_is_refused_saying_what_it_is(name, data, reason):
    with pytest.raises(ExtractionError) as excinfo:
        extract(name, data)
    assert reason in str(excinfo.value)
    assert str(excinfo.value).endswith(registry.SUPPORTED)


def test_images_go_to_the_image_format_whatever_their_name():
    from memories.parsers import image as image_format

    for kind, ext in (("PNG", "png"), ("JPEG", "jpg"), ("TIFF", "tiff"), ("WEBP", "webp")):
        assert registry.choose(ext, image(kind))[0] is image_format.FORMAT
    fmt, media_type, notices = registry.choose("txt", image("PNG"))
    assert fmt is image_format.FORMAT and media_type == "image/png"
    assert notices == ["the file is named .txt but is really a PNG image, and was read as such"]


def test_an_image_no_format_reads_is_refused_saying_what_it_is():
    with pytest.raises(ExtractionError, match=r"^\.gif is not a supported file type: it looks like a GIF image"):
        extract("anim.gif", image("GIF"))


def test_binary_data_is_named_by_its_signature_when_known():
    with pytest.raises(ExtractionError, match=r"it looks like binary data \(.*GZIP"):
        extract("logs.gz", gzip.compress(b"log line\n" * 100, mtime=0))


def test_the_supported_list_names_every_format():
    assert registry.SUPPORTED.startswith("supported: ")
    for name in ("PDF", "Word .docx", "Word .doc", "RTF", "HTML", "Markdown", "text and source code"):
        assert name in registry.SUPPORTED


# --- The extension point ----------------------------------------------------------------------------


def test_a_format_unknown_to_detection_brings_its_own_sniff(monkeypatch):
    def parse(data, *, budget, max_inflated):
        return Parsed(text=data[4:].decode())

    custom = Format(extensions=frozenset({"kyb"}), parse=parse, sniff=lambda data: data.startswith(b"KYB1"))
    monkeypatch.setattr(registry, "FORMATS", (custom, *registry.FORMATS))
    assert extract("note.kyb", b"KYB1hello").text == "hello"
    renamed = extract("note.txt", b"KYB1hello")
    assert renamed.text == "hello" and renamed.notices == [
        "the file is named .txt but is really a .kyb file, and was read as such"
    ]


def test_each_detected_media_type_is_read_by_the_format_that_declares_it():
    assert registry._BY_MEDIA_TYPE[PDF] is pdf_format.FORMAT
    assert registry._BY_MEDIA_TYPE[DOCX] is docx_format.FORMAT
    assert registry._BY_MEDIA_TYPE[DOC] is doc_format.FORMAT
    assert registry._BY_MEDIA_TYPE["application/rtf"] is rtf_format.FORMAT
    assert registry._BY_MEDIA_TYPE["text/html"] is html_format.FORMAT
    assert registry._BY_MEDIA_TYPE["text/plain"] is text_format.FORMAT
