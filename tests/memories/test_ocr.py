"""OCR with the real engine (tesseract) on small images and PDFs made here: what it reads, the notices
and page accounting it leaves, and its bounds: on/off, unavailable, pages and pixels (memories.parsers.ocr)."""

from __future__ import annotations

import io

import pytest

from memories.parsers import ExtractionError, extract
from memories.parsers import ocr as ocr_module
from memories.parsers.ocr import OcrCancelled
from tests.files import make_pdf
from tests.memories import scans

pytestmark = scans.needs_tesseract


def _words(text: str) -> str:
    return " ".join(text.split()).lower()


def test_ocr_reads_the_text_of_a_photo():
    extracted = extract("note.png", scans.image_bytes([scans.PHRASE]))
    assert scans.PHRASE.lower() in _words(extracted.text)
    assert extracted.notices == ["the image: read by OCR"]
    assert extracted.metadata["pages"] == [{"first": 1, "last": 1, "text": "ocr", "reason": "an image"}]


def test_ocr_reads_german_words_with_their_umlauts():
    extracted = extract("brief.jpg", scans.image_bytes(["Grüße aus Köln über Straßenbahnen"], "JPEG", quality=90))
    assert "grüße aus köln über straßenbahnen" in _words(extracted.text)


def test_a_scanned_pdf_is_read_page_by_page_with_progress():
    seen = []
    extracted = extract(
        "scan.pdf", scans.scanned_pdf([[scans.PHRASE], [scans.SECOND]]), progress=lambda d, n: seen.append((d, n))
    )
    assert scans.PHRASE.lower() in _words(extracted.text) and scans.SECOND.lower() in _words(extracted.text)
    assert extracted.notices == ["pages 1–2: no text layer, read by OCR"]
    assert seen == [(0, 2), (1, 2), (2, 2)]


def test_a_mixed_pdf_keeps_its_text_layer_and_reads_only_the_scanned_pages():
    extracted = extract("mixed.pdf", scans.mixed_pdf(["Typed page about anchors"], [[scans.PHRASE]]))
    assert extracted.text.startswith("Typed page about anchors")
    assert scans.PHRASE.lower() in _words(extracted.text)
    assert extracted.metadata["pages"] == [
        {"first": 1, "last": 1, "text": "layer"},
        {"first": 2, "last": 2, "text": "ocr", "reason": "no text layer"},
    ]
    assert extracted.notices == ["page 2: no text layer, read by OCR"]


def test_with_ocr_off_a_scan_is_refused_saying_so(settings):
    settings.KYBERNESIS_OCR = False
    with pytest.raises(ExtractionError, match=r"OCR is off on this server \(KYBERNESIS_OCR=off\)"):
        extract("scan.pdf", scans.scanned_pdf([[scans.PHRASE]]), defer_ocr=True)
    with pytest.raises(ExtractionError, match="OCR is off"):
        extract("photo.png", scans.image_bytes([scans.PHRASE]))


def test_with_ocr_off_a_mixed_pdf_keeps_its_text_and_says_which_pages_were_left_out(settings):
    settings.KYBERNESIS_OCR = False
    extracted = extract("mixed.pdf", scans.mixed_pdf(["Typed page about anchors"], [[scans.PHRASE]]), defer_ocr=True)
    assert extracted.ocr_pages == []
    assert "anchors" in extracted.text
    assert extracted.notices == ["page 2: no text layer, not read: OCR is off on this server (KYBERNESIS_OCR=off)"]
    assert extracted.metadata["pages"][1]["text"] == "dropped"


def test_without_tesseract_the_reason_says_ocr_is_unavailable(monkeypatch):
    monkeypatch.setattr(ocr_module, "_binary", lambda: None)
    with pytest.raises(ExtractionError, match="OCR is unavailable: the tesseract program is not installed"):
        extract("photo.png", scans.image_bytes([scans.PHRASE]), defer_ocr=True)


def test_languages_that_are_not_installed_make_ocr_unavailable(settings):
    settings.KYBERNESIS_OCR_LANGUAGES = "xxx"
    assert "none of the languages xxx" in ocr_module.ocr_unavailable()


def test_pages_past_the_page_limit_are_left_out_with_a_notice(settings):
    settings.KYBERNESIS_OCR_MAX_PAGES = 1
    extracted = extract("scan.pdf", scans.scanned_pdf([[scans.PHRASE], [scans.SECOND]]))
    assert scans.PHRASE.lower() in _words(extracted.text)
    assert scans.SECOND.lower() not in _words(extracted.text)
    assert "page 2: no text layer, not read: over the limit of 1 pages read by OCR" in extracted.notices[1]


def test_a_pdf_page_holding_an_image_over_the_pixel_limit_is_not_rendered(settings):
    data = scans.scanned_pdf([[scans.PHRASE]])
    settings.KYBERNESIS_OCR_MAX_PIXELS = 10_000
    with pytest.raises(ExtractionError, match=r"it holds an image of 1,400 × \d+ pixels, over the limit of 10,000"):
        extract("scan.pdf", data)


def test_a_stop_asked_for_between_pages_cancels_the_read():
    with pytest.raises(OcrCancelled):
        extract("scan.pdf", scans.scanned_pdf([[scans.PHRASE], [scans.SECOND]]), should_stop=lambda: True)


def test_a_phone_photo_stored_sideways_is_read_upright():
    from PIL import Image

    sideways = scans.text_image([scans.PHRASE]).rotate(90, expand=True)
    exif = Image.Exif()
    exif[0x0112] = 6  # Orientation: turn 90° clockwise to view, as a camera held sideways writes it
    out = io.BytesIO()
    sideways.save(out, format="JPEG", quality=90, exif=exif)
    assert scans.PHRASE.lower() in _words(extract("photo.jpg", out.getvalue()).text)


def test_a_scan_with_a_few_stray_words_in_its_text_layer_is_read_whole():
    from pypdf import PdfReader, PdfWriter

    # A page tall enough (as a letter page is) for the caption's line near its top.
    page_lines = [scans.PHRASE, scans.SECOND] + [""] * 18
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(scans.scanned_pdf([page_lines]))))
    writer.pages[0].merge_page(PdfReader(io.BytesIO(make_pdf(["Background"]))).pages[0])
    out = io.BytesIO()
    writer.write(out)
    extracted = extract("scan.pdf", out.getvalue())
    assert scans.SECOND.lower() in _words(extracted.text)
    assert extracted.notices == ["page 1: scanned pages, read by OCR"]
