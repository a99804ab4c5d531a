"""Images (PNG, JPEG, TIFF, WebP): photos and scans of text, read by OCR (memories.parsers.ocr); each
frame of a multi-page TIFF is a page. Pillow reads them, within its decompression-bomb pixel limit."""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator

from memories.parsers.budget import InflateBudget
from memories.parsers.errors import DecompressionBombError, ExtractionError
from memories.parsers.format import Format, PageImage, Parsed
from memories.parsers.pages import PageText

# Magic bytes of the image formats read, and their Pillow names.
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "PNG"),
    (b"\xff\xd8\xff", "JPEG"),
    (b"II*\x00", "TIFF"),
    (b"MM\x00*", "TIFF"),
)
# OCR needs no more than a 300 dpi A4 page gives; larger photos are scaled down to this first.
OCR_MAX_PIXELS = 4 * 2480 * 3508


def kind(data: bytes) -> str | None:
    """The image format the bytes start with (PNG, JPEG, TIFF, WEBP), or None."""
    for magic, name in _MAGIC:
        if data.startswith(magic):
            return name
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WEBP"
    return None


def looks_like(data: bytes) -> bool:
    return kind(data) is not None


def _max_pixels() -> int:
    from memories.parsers.ocr import OcrConfig

    return OcrConfig.current().max_pixels


def _open(data: bytes, *, max_pixels: int):
    from PIL import Image, UnidentifiedImageError

    found = kind(data)
    if found is None:
        raise ExtractionError("this is not a PNG, JPEG, TIFF or WebP image")
    try:
        with warnings.catch_warnings():
            # The size is checked below against our own limit, with a reason the person understands
            # (Pillow's own check would refuse without the size, in words meant for a programmer).
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            saved, Image.MAX_IMAGE_PIXELS = Image.MAX_IMAGE_PIXELS, None
            try:
                image = Image.open(io.BytesIO(data), formats=[found])
            finally:
                Image.MAX_IMAGE_PIXELS = saved
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise ExtractionError(f"the {found} image is damaged or truncated and cannot be read") from exc
    width, height = image.size
    if width * height > max_pixels:
        image.close()
        raise DecompressionBombError(
            f"the image is {width:,} × {height:,} pixels ({width * height / 1e6:,.0f} megapixels); images over "
            f"{max_pixels / 1e6:,.0f} megapixels are refused as a likely decompression bomb"
        )
    return image


def parse(data: bytes, *, budget: InflateBudget, max_inflated: int) -> Parsed:
    max_pixels = _max_pixels()
    image = _open(data, max_pixels=max_pixels)
    try:
        frames = getattr(image, "n_frames", 1) or 1
        metadata = {"imageFormat": image.format, "width": image.size[0], "height": image.size[1]}
        _check_decodes(image)
    finally:
        image.close()
    pages = [PageText(number=n, text="", state="pending", reason="image") for n in range(1, frames + 1)]
    parsed = Parsed.from_pages(pages)
    parsed.metadata.update(metadata)
    return parsed


def _check_decodes(image) -> None:
    """Decode the first frame cheaply so a truncated or damaged file is refused now, not in the worker:
    JPEG at 1/8 scale, the rest in full (their size is within the pixel limit)."""
    try:
        if image.format == "JPEG":
            image.draft("L", (max(1, image.size[0] // 8), max(1, image.size[1] // 8)))
        image.load()
    except (OSError, ValueError, SyntaxError, EOFError) as exc:
        raise ExtractionError(f"the {image.format} image is damaged or truncated and cannot be read") from exc


def render(data: bytes, numbers: list[int], *, dpi: int, max_pixels: int) -> Iterator[PageImage]:
    """Each asked frame (1-based) upright (EXIF orientation) and greyscale, scaled down past OCR_MAX_PIXELS."""
    from PIL import ImageOps

    image = _open(data, max_pixels=max_pixels)
    try:
        for number in numbers:
            try:
                image.seek(number - 1)
                frame = ImageOps.exif_transpose(image).convert("L")
            except (OSError, ValueError, EOFError, SyntaxError):
                yield PageImage(number=number, image=None, error="the image is damaged or truncated here")
                continue
            if frame.width * frame.height > OCR_MAX_PIXELS:
                ratio = (OCR_MAX_PIXELS / (frame.width * frame.height)) ** 0.5
                frame = frame.resize((max(1, int(frame.width * ratio)), max(1, int(frame.height * ratio))))
            yield PageImage(number=number, image=frame)
    finally:
        image.close()


FORMAT = Format(
    extensions=frozenset({"png", "jpg", "jpeg", "tif", "tiff", "webp"}),
    parse=parse,
    media_types={
        "png": "image/png",
        "jpg": "image/jpeg",
        "jpeg": "image/jpeg",
        "tif": "image/tiff",
        "tiff": "image/tiff",
        "webp": "image/webp",
    },
    render=render,
    what="image",
)
