"""Plain text, markup read as text, and source code: bytes of unknown encoding decoded (legacy code pages
detected), binary refused; also the text sniff that content detection uses."""

from __future__ import annotations

import codecs
import re
import unicodedata
from functools import lru_cache

from memories.parsers.budget import InflateBudget
from memories.parsers.errors import ExtractionError
from memories.parsers.format import Format, Parsed
from memories.parsers.titles import opening_heading

# Prose: what these hold is written for people to read, so a heading line it opens with is its title.
PROSE_EXTENSIONS = frozenset({"txt", "text"})
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

# Encodings by how often people's files use them: among the candidates charset-normalizer finds equally
# plausible (short texts fit several single-byte code pages), the more common one wins.
_COMMON_ENCODINGS = (
    "cp1252",
    "cp1251",
    "cp1250",
    "shift_jis",
    "cp932",
    "euc_jp",
    "euc_jis_2004",
    "gb18030",
    "gbk",
    "gb2312",
    "big5",
    "cp949",
    "euc_kr",
    "cp1256",
    "cp1253",
    "cp1254",
    "cp1255",
    "cp1257",
    "cp1258",
    "cp874",
    "koi8_r",
    "koi8_u",
    "iso8859_2",
    "iso8859_5",
    "iso8859_7",
    "iso8859_15",
    "latin_1",
)
# A candidate whose chaos is at most this much above the best one is still considered.
_CHAOS_TOLERANCE = 0.1
_SNIFF_BYTES = 65536
_WORD = re.compile(r"[^\W\d_]+")
# A symbol between two letters ("Z³oty", "¿ó³w"): what a wrong code page makes of letters.
_SYMBOL_IN_WORD = re.compile(r"(?<=[^\W\d_])[\u0080-\u2fff](?<![^\W\d_])(?=[^\W\d_])")
# Letters of one language only (Icelandic), and what cp1252 makes of Turkish ş and ğ.
_RARE_LETTERS = frozenset("þðÞÐ")


def decode(data: bytes) -> str:
    """Decode text of unknown encoding; refuse bytes that are not text at all."""
    text = _decode(data)
    if _control_characters(text[:_SNIFF_BYTES]) > max(8, len(text[:_SNIFF_BYTES]) // 100):
        raise ExtractionError("the file looks binary, not text (too many control characters)")
    return text


def looks_like_text(data: bytes) -> bool:
    """The text sniff: whether the start of `data` decodes as text with few control characters."""
    sample = data[:_SNIFF_BYTES]
    if len(data) > len(sample):
        try:
            # Valid UTF-8 up to a character cut at the edge of the sample.
            text = codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
        except UnicodeDecodeError:
            pass
        else:
            return _control_characters(text) <= max(8, len(text) // 100)
    try:
        decode(sample)
    except ExtractionError:
        return False
    return True


def _decode(data: bytes) -> str:
    for bom, encoding in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            return data.decode(encoding, errors="replace")
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise ExtractionError("the file looks binary, not text (it contains NUL bytes)")
    if b"\x1b$B" in data[:4096] or b"\x1b$@" in data[:4096]:
        # ISO-2022-JP (Japanese mail) is 7-bit, so it would pass as ASCII with escape codes in it.
        try:
            return data.decode("iso2022_jp")
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    return data.decode(_legacy_encoding(data), errors="replace")


def _legacy_encoding(data: bytes) -> str:
    """The encoding of bytes that are not UTF-8: charset-normalizer's candidates, the ones that make
    implausible words of the text left out, then the most coherent and the most common."""
    from charset_normalizer import from_bytes

    matches = list(from_bytes(data[:1_000_000]))
    if not matches:
        raise ExtractionError("the file looks binary, not text (no text encoding fits it)")
    best = matches[0].chaos
    sample = data[:16384]

    def preference(match) -> tuple:
        rank = (
            _COMMON_ENCODINGS.index(match.encoding) if match.encoding in _COMMON_ENCODINGS else len(_COMMON_ENCODINGS)
        )
        oddity = _oddity(sample.decode(match.encoding, errors="replace"))
        return (round(oddity, 2), -round(match.coherence, 1), rank)

    return min((m for m in matches if m.chaos <= best + _CHAOS_TOLERANCE), key=preference).encoding


def _oddity(text: str) -> float:
    """How implausible the words of a decoded text are, per letter: words mixing scripts (Latin with
    Cyrillic, Hangul with Han), Latin words with no ASCII letter at all, lone Hangul jamo, symbols
    inside words and letters of one rare language only."""
    odd = 0.0
    letters = 0
    for match in _WORD.finditer(text):
        word = match.group()
        letters += len(word)
        scripts = {_script(ch) for ch in word} - {""}
        mixed = len(scripts) > 1 or "JAMO" in scripts
        if mixed or (scripts == {"LATIN"} and len(word) >= 3 and not any(ch.isascii() for ch in word)):
            odd += len(word)
        odd += 0.5 * sum(ch in _RARE_LETTERS for ch in word)
    odd += 2 * len(_SYMBOL_IN_WORD.findall(text))
    return odd / max(1, letters)


@lru_cache(maxsize=8192)
def _script(ch: str) -> str:
    """The script of a letter, from its Unicode name. Han and kana count as one (Japanese mixes them);
    half-width katakana does not, so a word of it mixed with Han reads as a wrong code page."""
    name = unicodedata.name(ch, "")
    if name.startswith(("HANGUL COMPATIBILITY JAMO", "HANGUL LETTER", "HALFWIDTH HANGUL")):
        return "JAMO"
    if name.startswith(("CJK", "HIRAGANA", "KATAKANA")):
        return "CJK"
    return name.split(" ", 1)[0]


def _control_characters(text: str) -> int:
    return sum(1 for ch in text if ord(ch) < 32 and ch not in "\n\r\t\f\v")


def parse(data: bytes, *, budget: InflateBudget, max_inflated: int) -> Parsed:
    return Parsed(text=decode(data))


def parse_prose(data: bytes, *, budget: InflateBudget, max_inflated: int) -> Parsed:
    text = decode(data)
    return Parsed(text=text, title=opening_heading(text))


FORMAT = Format(
    # Markdown is read by memories.parsers.markdown, which also takes its title; XML by memories.parsers.feed.
    extensions=frozenset((TEXT_EXTENSIONS - {"md", "markdown", "xml"} - PROSE_EXTENSIONS) | CODE_EXTENSIONS),
    parse=parse,
    media_types={
        "txt": "text/plain",
        "rst": "text/x-rst",
        "ts": "text/x-typescript",
        "tsx": "text/x-typescript",
        "go": "text/x-go",
        "rs": "text/x-rust",
        "yaml": "application/yaml",
        "yml": "application/yaml",
        "toml": "application/toml",
    },
    name="text and source code",
)

# Plain prose by its extension. Text that detection finds under another name or none is read by
# FORMAT (listed first for text/plain): a source file's first line ("#!/bin/sh", "import os") is no title.
PROSE = Format(
    extensions=PROSE_EXTENSIONS,
    parse=parse_prose,
    media_types={"txt": "text/plain"},
    name="text and source code",
)
