"""File bytes -> text, one module per format behind a registry; every public name is importable from here."""

from memories.parsers.registry import (
    CODE_EXTENSIONS,
    DOCUMENT_EXTENSIONS,
    HTML_EXTENSIONS,
    KNOWN_NAMES,
    MAX_FILENAME_CHARS,
    MAX_INFLATED_BYTES,
    SUPPORTED_EXTENSIONS,
    TEXT_EXTENSIONS,
    DecompressionBombError,
    Extracted,
    ExtractionError,
    InflateBudget,
    antiword_available,
    clean_filename,
    extract,
    file_extension,
)

__all__ = [
    "CODE_EXTENSIONS",
    "DOCUMENT_EXTENSIONS",
    "HTML_EXTENSIONS",
    "KNOWN_NAMES",
    "MAX_FILENAME_CHARS",
    "MAX_INFLATED_BYTES",
    "SUPPORTED_EXTENSIONS",
    "TEXT_EXTENSIONS",
    "DecompressionBombError",
    "Extracted",
    "ExtractionError",
    "InflateBudget",
    "antiword_available",
    "clean_filename",
    "extract",
    "file_extension",
]
