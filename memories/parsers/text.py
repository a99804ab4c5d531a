"""Plain text, markup read as text, and source code: bytes of unknown encoding decoded, binary refused."""

from __future__ import annotations

import codecs

from memories.parsers.budget import InflateBudget
from memories.parsers.errors import ExtractionError
from memories.parsers.format import Format, Parsed

TEXT_EXTENSIONS = {"txt", "text", "md", "markdown", "rst", "json", "xml", "log", "tex", "org", "adoc"}
# Source code and configuration: stored as text, and shown in a monospace font (memories.views).
CODE_EXTENSIONS = {
    "py",
    "pyi",
    "js",
    "mjs",
    "cjs",
    "ts",
    "tsx",
    "jsx",
    "java",
    "go",
    "rs",
    "c",
    "h",
    "cpp",
    "cc",
    "cxx",
    "hpp",
    "hh",
    "cs",
    "rb",
    "php",
    "swift",
    "kt",
    "kts",
    "scala",
    "sh",
    "bash",
    "zsh",
    "fish",
    "ps1",
    "sql",
    "yaml",
    "yml",
    "toml",
    "ini",
    "cfg",
    "conf",
    "env",
    "css",
    "scss",
    "sass",
    "less",
    "vue",
    "svelte",
    "lua",
    "pl",
    "pm",
    "r",
    "jl",
    "dart",
    "ex",
    "exs",
    "erl",
    "hs",
    "ml",
    "mli",
    "clj",
    "cljs",
    "groovy",
    "gradle",
    "m",
    "mm",
    "f90",
    "proto",
    "graphql",
    "gql",
    "dockerfile",
    "makefile",
    "cmake",
    "bat",
    "vb",
    "fs",
    "elm",
    "nim",
    "zig",
    "v",
    "sol",
    "tf",
    "hcl",
}

_PREFERRED_LEGACY = ("cp1252", "iso8859_15", "latin_1")


def decode(data: bytes) -> str:
    """Decode text of unknown encoding; refuse bytes that are not text at all."""
    if data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        for bom, encoding in (
            (codecs.BOM_UTF8, "utf-8-sig"),
            (codecs.BOM_UTF16_LE, "utf-16"),
            (codecs.BOM_UTF16_BE, "utf-16"),
        ):
            if data.startswith(bom):
                return data.decode(encoding, errors="replace")
    sample = data[:65536]
    if b"\x00" in sample:
        raise ExtractionError("the file looks binary, not text (it contains NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        from charset_normalizer import from_bytes

        matches = list(from_bytes(data[:1_000_000]))
        if not matches:
            raise ExtractionError("the file looks binary, not text (no text encoding fits it)") from None
        encoding = matches[0].encoding
        # Single-byte code pages are hard to tell apart on short texts; when Windows-1252 (by far the
        # most common legacy encoding) reads the bytes nearly as cleanly as the top guess, prefer it.
        for match in matches:
            if match.encoding in _PREFERRED_LEGACY and match.chaos <= matches[0].chaos + 0.15:
                encoding = match.encoding
                break
        text = data.decode(encoding, errors="replace")
    controls = sum(1 for ch in text[:65536] if ord(ch) < 32 and ch not in "\n\r\t\f\v")
    if controls > max(8, len(text[:65536]) // 100):
        raise ExtractionError("the file looks binary, not text (too many control characters)")
    return text


def parse(data: bytes, *, budget: InflateBudget, max_inflated: int) -> Parsed:
    return Parsed(text=decode(data))


FORMAT = Format(
    extensions=frozenset(TEXT_EXTENSIONS | CODE_EXTENSIONS),
    parse=parse,
    media_types={
        "md": "text/markdown",
        "markdown": "text/markdown",
        "rst": "text/x-rst",
        "ts": "text/x-typescript",
        "tsx": "text/x-typescript",
        "go": "text/x-go",
        "rs": "text/x-rust",
        "yaml": "application/yaml",
        "yml": "application/yaml",
        "toml": "application/toml",
    },
)
