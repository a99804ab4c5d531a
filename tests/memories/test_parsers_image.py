"""Images as a format: PNG, JPEG, TIFF and WebP are accepted for OCR by their bytes, within the pixel
limit; damaged and lying files are refused with a reason (memories.parsers.image)."""

from __future__ import annotations

import io

import pytest

from memories.parsers import DecompressionBombError, ExtractionError, extract
from tests.memories import scans


@scans.needs_tesseract
@pytest.mark.parametrize(("name", "fmt"), [("a.png", "PNG"), ("b.jpg", "JPEG"), ("c.tiff", "TIFF"), ("d.webp", "WEBP")])
def test_each_image_format_waits_for_ocr(name, fmt):
    extracted = extract(name, scans.image_bytes([scans.PHRASE], fmt), defer_ocr=True)
    assert extracted.ocr_pages == [1]
    assert extracted.metadata["imageFormat"] == fmt
    assert extracted.metadata["pages"] == [{"first": 1, "last": 1, "text": "pending", "reason": "an image"}]


@scans.needs_tesseract
def test_each_frame_of_a_tiff_is_a_page():
    frames = [scans.text_image([scans.PHRASE]), scans.text_image([scans.SECOND])]
    out = io.BytesIO()
    frames[0].save(out, format="TIFF", save_all=True, append_images=frames[1:])
    extracted = extract("fax.tif", out.getvalue(), defer_ocr=True)
    assert extracted.ocr_pages == [1, 2]
    assert extracted.metadata["pageCount"] == 2


def test_an_image_of_30000_by_30000_pixels_is_refused_with_its_size():
    with pytest.raises(DecompressionBombError, match="30,000 × 30,000 pixels") as caught:
        extract("bomb.png", scans.huge_png_header())
    assert caught.value.status == 413


def test_a_truncated_jpeg_is_refused_as_damaged():
    data = scans.image_bytes([scans.PHRASE], "JPEG")
    with pytest.raises(ExtractionError, match="damaged or truncated"):
        extract("cut.jpg", data[: len(data) // 3])


def test_a_truncated_png_is_refused_as_damaged():
    data = scans.image_bytes([scans.PHRASE], "PNG")
    with pytest.raises(ExtractionError, match="damaged or truncated"):
        extract("cut.png", data[: len(data) // 2])


def test_text_named_png_is_read_as_the_text_it_is():
    extracted = extract("notes.png", b"just some notes, not pixels")
    assert extracted.text == "just some notes, not pixels"
    assert extracted.notices == ["the file is named .png but is really plain text, and was read as such"]


def test_a_zero_byte_image_is_empty():
    with pytest.raises(ExtractionError, match="the file is empty"):
        extract("empty.jpg", b"")
