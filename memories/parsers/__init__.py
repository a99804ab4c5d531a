"""File bytes -> text, one module per format behind a registry (memories.parsers.registry); every public
name is importable from here."""

from memories.parsers.budget import MAX_INFLATED_BYTES, InflateBudget
from memories.parsers.doc import antiword_available
from memories.parsers.errors import DecompressionBombError, ExtractionError
from memories.parsers.filenames import KNOWN_NAMES, MAX_FILENAME_CHARS, clean_filename, file_extension
from memories.parsers.format import Format, Parsed
from memories.parsers.html import HTML_EXTENSIONS
from memories.parsers.registry import DOCUMENT_EXTENSIONS, FORMATS, SUPPORTED_EXTENSIONS, Extracted, extract
from memories.parsers.text import CODE_EXTENSIONS, TEXT_EXTENSIONS

__all__ = [
    "CODE_EXTENSIONS",
    "DOCUMENT_EXTENSIONS",
    "FORMATS",
    "HTML_EXTENSIONS",
    "KNOWN_NAMES",
    "MAX_FILENAME_CHARS",
    "MAX_INFLATED_BYTES",
    "SUPPORTED_EXTENSIONS",
    "TEXT_EXTENSIONS",
    "DecompressionBombError",
    "Extracted",
    "ExtractionError",
    "Format",
    "InflateBudget",
    "Parsed",
    "antiword_available",
    "clean_filename",
    "extract",
    "file_extension",
]
