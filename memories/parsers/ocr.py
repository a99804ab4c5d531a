"""OCR: the pages of a scan or a photo read by tesseract (Debian's tesseract-ocr), bounded in pages,
pixels and time, and the accounting of which pages it read, which it could not and why.

tesseract was chosen by measurement over RapidOCR on onnxruntime: higher word recall on English and
German scans, in less time and memory per page (docs/decisions/0012-tesseract-for-ocr.md)."""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

from memories.parsers.errors import ExtractionError
from memories.parsers.format import Format, Parsed
from memories.parsers.pages import page_metadata, page_notices

logger = logging.getLogger(__name__)

INSTALL_HINT = "apt-get install tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu"
# Pillow's own decompression-bomb limit (Image.MAX_IMAGE_PIXELS): a larger image is refused.
DEFAULT_MAX_PIXELS = 89_478_485

Progress = Callable[[int, int], None]  # (pages done, pages to do)
ShouldStop = Callable[[], bool]


class OcrCancelled(Exception):
    """The job asked OCR to stop (cancelled); nothing is stored."""


@dataclass(frozen=True)
class OcrConfig:
    """How OCR runs: the KYBERNESIS_OCR* settings (docs/configuration.md)."""

    enabled: bool = True
    languages: str = "eng+deu"
    dpi: int = 300
    max_pages: int = 200
    max_pixels: int = DEFAULT_MAX_PIXELS
    page_timeout: float = 120.0
    time_limit: float = 1800.0
    threads: int = 1

    @classmethod
    def current(cls) -> OcrConfig:
        from django.conf import settings

        default = cls()
        return cls(
            enabled=getattr(settings, "KYBERNESIS_OCR", default.enabled),
            languages=getattr(settings, "KYBERNESIS_OCR_LANGUAGES", default.languages),
            dpi=getattr(settings, "KYBERNESIS_OCR_DPI", default.dpi),
            max_pages=getattr(settings, "KYBERNESIS_OCR_MAX_PAGES", default.max_pages),
            max_pixels=getattr(settings, "KYBERNESIS_OCR_MAX_PIXELS", default.max_pixels),
            page_timeout=getattr(settings, "KYBERNESIS_OCR_PAGE_TIMEOUT", default.page_timeout),
            time_limit=getattr(settings, "KYBERNESIS_OCR_TIME_LIMIT", default.time_limit),
            threads=getattr(settings, "KYBERNESIS_OCR_THREADS", default.threads),
        )


@functools.cache
def _installed_languages(binary: str) -> frozenset[str]:
    try:
        done = subprocess.run([binary, "--list-langs"], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    lines = done.stdout.decode("utf-8", "replace").splitlines()
    return frozenset(line.strip() for line in lines[1:] if line.strip() and line.strip() != "osd")


def _binary() -> str | None:
    return shutil.which("tesseract")


def ocr_unavailable(config: OcrConfig | None = None) -> str:
    """Why OCR cannot run on this server, in words for the person (empty when it can)."""
    config = config or OcrConfig.current()
    if not config.enabled:
        return "OCR is off on this server (KYBERNESIS_OCR=off)"
    binary = _binary()
    if binary is None:
        return f"OCR is unavailable: the tesseract program is not installed on this server ({INSTALL_HINT})"
    if not _languages(config):
        installed = ", ".join(sorted(_installed_languages(binary))) or "none"
        return (
            f"OCR is unavailable: none of the languages {config.languages} (KYBERNESIS_OCR_LANGUAGES) is "
            f"installed for tesseract (installed: {installed})"
        )
    return ""


def _languages(config: OcrConfig) -> str:
    """The configured languages that tesseract has, in their order ("eng+deu")."""
    binary = _binary()
    if binary is None:
        return ""
    installed = _installed_languages(binary)
    wanted = [lang.strip() for lang in config.languages.replace(",", "+").split("+") if lang.strip()]
    missing = [lang for lang in wanted if lang not in installed]
    if missing:
        logger.warning("OCR languages not installed for tesseract: %s", ", ".join(missing))
    return "+".join(lang for lang in wanted if lang in installed)


def recognise(image, *, config: OcrConfig) -> str:
    """The text tesseract reads on one greyscale image. Raises ExtractionError when it fails."""
    binary = _binary()
    if binary is None:
        raise ExtractionError(ocr_unavailable(config))
    import io

    buffer = io.BytesIO()
    image.save(buffer, format="PPM")  # uncompressed: no time spent encoding what tesseract decodes
    # One thread per tesseract: OpenMP's second thread costs more than it gives on a shared machine.
    env = {**os.environ, "OMP_THREAD_LIMIT": str(max(1, config.threads))}
    try:
        done = subprocess.run(
            [binary, "stdin", "stdout", "-l", _languages(config), "--psm", "3"],
            input=buffer.getvalue(),
            capture_output=True,
            timeout=config.page_timeout,
            check=False,
            env=env,
        )
    except subprocess.TimeoutExpired as exc:
        raise ExtractionError(f"OCR took longer than {config.page_timeout:g} s on this page") from exc
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no reason given"]
        raise ExtractionError(f"OCR failed: {reason[0]}")
    return done.stdout.decode("utf-8", "replace").replace("\f", "\n")


def pages_finish(
    fmt: Format,
    data: bytes,
    parsed: Parsed,
    *,
    defer: bool = False,
    config: OcrConfig | None = None,
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
) -> Parsed:
    """Read the pending pages of a paged file by OCR (or, with `defer`, leave them pending for a worker
    when OCR can run), then record each page's state in parsed.metadata["pages"] and a notice for
    every page that was read by OCR or lost. `progress(done, total)` is called after each page;
    `should_stop()` true stops with OcrCancelled."""
    config = config or OcrConfig.current()
    pages = parsed.page_texts or []
    pending = [p for p in pages if p.state == "pending"]
    if pending and fmt.render is not None:
        unavailable = ocr_unavailable(config)
        if unavailable:
            for page in pending:
                _drop(page, unavailable)
        elif not defer:
            _read(fmt, data, pending, config=config, progress=progress, should_stop=should_stop)
    elif pending:
        for page in pending:
            _drop(page, "this format cannot be read by OCR")
    parsed.join_pages()
    parsed.metadata["pages"] = page_metadata(pages)
    parsed.notices = [*parsed.notices, *page_notices(pages, what=fmt.what)]
    if not parsed.text.strip() and not parsed.pending_pages:
        raise ExtractionError(_nothing_read(fmt, pages))
    return parsed


def _read(fmt: Format, data: bytes, pending, *, config: OcrConfig, progress, should_stop) -> None:
    allowed, over = pending[: config.max_pages], pending[config.max_pages :]
    for page in over:
        _drop(page, f"over the limit of {config.max_pages} pages read by OCR (KYBERNESIS_OCR_MAX_PAGES)")
    by_number = {page.number: page for page in allowed}
    started = time.monotonic()
    done = 0
    if progress:
        progress(0, len(allowed))
    assert fmt.render is not None  # pages_finish reads only formats that render
    images = fmt.render(data, [p.number for p in allowed], dpi=config.dpi, max_pixels=config.max_pixels)
    try:
        for rendered in images:
            if should_stop and should_stop():
                raise OcrCancelled()
            page = by_number[rendered.number]
            if time.monotonic() - started > config.time_limit:
                _drop(page, f"OCR ran out of time ({config.time_limit:g} s, KYBERNESIS_OCR_TIME_LIMIT)")
            elif rendered.image is None:
                _drop(page, rendered.error or "it could not be rendered")
            else:
                _recognise_page(page, rendered.image, config=config)
            done += 1
            if progress:
                progress(done, len(allowed))
    finally:
        close = getattr(images, "close", None)
        if close:
            close()


def _recognise_page(page, image, *, config: OcrConfig) -> None:
    try:
        text = recognise(image, config=config)
    except ExtractionError as exc:
        _drop(page, str(exc))
        return
    finally:
        image.close()
    if text.strip():
        page.text, page.state = text, "ocr"
    elif page.reason == "drawing":
        page.state = "blank"  # lines and shapes, no letters among them: nothing was lost
    else:
        _drop(page, "OCR found no text on it")


def _drop(page, why: str) -> None:
    # A scanned page keeps the few words of its own text layer when OCR cannot read the rest.
    page.state, page.why = "dropped", why
    page.text = page.layer if page.reason == "scanned" else ""


def _nothing_read(fmt: Format, pages) -> str:
    dropped = [p for p in pages if p.state == "dropped"]
    if not dropped:
        return "no extractable text" + fmt.no_text_hint
    whys = list(dict.fromkeys(p.why for p in dropped))
    if fmt.what == "image":
        return f"no text could be read from the image: {whys[0]}"
    return f"no extractable text: this {fmt.what} has no usable text layer, and {'; '.join(whys)}"
