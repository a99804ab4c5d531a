"""PDF: the text layer of every page, page breaks as paragraph breaks, within the decompression budget."""

from __future__ import annotations

import io

from memories.parsers.budget import InflateBudget
from memories.parsers.errors import DecompressionBombError, ExtractionError
from memories.parsers.format import Format, Parsed

# One PDF content stream holds one page's drawing operators, a few hundred KB even for dense text.
MAX_PDF_STREAM_BYTES = 16 * 1024 * 1024
NO_TEXT_HINT = " (is it a scanned PDF without a text layer?)"


def parse(data: bytes, *, budget: InflateBudget, max_inflated: int) -> Parsed:
    from pypdf import PdfReader, apply_configuration
    from pypdf.errors import LimitReachedError, PyPdfError

    if not data.lstrip()[:5].startswith(b"%PDF"):
        raise ExtractionError("this is not a PDF file (it does not start with %PDF)")
    limit = budget.file_limit(max_inflated)
    # pypdf decompresses each stream with an output limit; it gets this file's budget, and the text
    # read so far is charged against it page by page.
    stream_limits = {
        name: min(limit, MAX_PDF_STREAM_BYTES)
        for name in (
            "zlib_maximum_output_length",
            "lzw_maximum_output_length",
            "run_length_maximum_output_length",
            "brotli_maximum_output_length",
            "jbig2_maximum_output_length",
            "array_based_stream_maximum_output_length",
            "maximum_declared_stream_length",
            "stream_decoding_work_maximum_length",
            "image_maximum_buffer_size",
            "xmp_maximum_input_length",
            "xfa_decoding_work_maximum_length",
        )
    }
    try:
        with apply_configuration(**stream_limits):
            pages = _pages(
                PdfReader(io.BytesIO(data), strict=False), budget=budget, limit=limit, max_inflated=max_inflated
            )
    except LimitReachedError as exc:
        raise DecompressionBombError(
            f"a stream inside this PDF decompresses to more than "
            f"{min(limit, MAX_PDF_STREAM_BYTES):,} bytes, which is refused as a likely "
            "zip bomb"
        ) from exc
    except ExtractionError:
        raise
    except (
        PyPdfError,
        ValueError,
        KeyError,
        TypeError,
        AttributeError,
        IndexError,
        OSError,
        RecursionError,
        AssertionError,
        ZeroDivisionError,
    ) as exc:
        raise ExtractionError(f"the PDF is damaged or truncated and cannot be read ({type(exc).__name__})") from exc
    # Page breaks become paragraph breaks, so chunks prefer to end at a page.
    return Parsed(text="\n\n".join(page.strip() for page in pages if page.strip()), pages=len(pages))


def _pages(reader, *, budget: InflateBudget, limit: int, max_inflated: int) -> list[str]:
    if reader.is_encrypted:
        try:
            opened = reader.decrypt("")
        except Exception:  # noqa: BLE001 - any decrypt failure means we cannot read it
            opened = 0
        if not opened:
            raise ExtractionError("the PDF is encrypted with a password")
    pages: list[str] = []
    produced = 0
    for page in reader.pages:
        text = page.extract_text() or ""
        size = len(text.encode("utf-8", "surrogatepass"))
        produced += size
        budget.charge(size)
        if produced > limit:
            raise budget.refuse("this PDF", max_inflated)
        pages.append(text)
    return pages


FORMAT = Format(
    extensions=frozenset({"pdf"}), parse=parse, media_types={"pdf": "application/pdf"}, no_text_hint=NO_TEXT_HINT
)
