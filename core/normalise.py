"""Text normalisation: the one step every memory's text passes, whichever door it came in by.

`normalise_text` turns what a parser, a connector, an import, the API or a chat message brings into
the text that is stored, chunked, embedded, tagged and shown. Each rule is a pure function here, and
the rules are chosen so that clean text in any language comes through unchanged, and so that
normalising twice changes nothing more than normalising once:

1. Line breaks: CR LF, CR, vertical tab and U+2028 become a newline; a form feed (a page break) and
   U+2029 become a blank line.
2. Mojibake: ftfy repairs UTF-8 read as a Windows or Latin code page ("cafÃ©" -> "café"); text in a
   Cyrillic, Greek, Hebrew or Arabic code page read as Windows-1252 ("Êîìïàíèÿ" -> "Компания") is
   decoded again, with the code page charset-normalizer finds most plausible.
3. Invisible characters: terminal escape sequences, C0 and C1 controls (but tab and newline) and
   format characters go: zero-width spaces, byte-order marks, soft hyphens (one at a line end is a
   hyphenation point and becomes "-"), bidi marks. Kept: zero-width (non-)joiners between two visible
   characters (emoji sequences, Persian and Indic spelling) and emoji tag sequences (flags).
4. Compatibility forms (NFKC): ligatures ("ﬁ" -> "fi"), full-width and half-width forms, Arabic
   presentation forms, styled letters ("𝐁" -> "B"). Forms whose shape is their meaning are left as
   written: superscripts and subscripts (m², H₂O, nº, ™), fractions (½), circled and squared forms
   (①, ㎡), the ellipsis, the ideographic space and spacing accents ("´").
5. Not text: runs of PDF glyph names ("/g145/g144/g3", "/uni0041"), "(cid:12)" codes, replacement
   characters (U+FFFD, bytes that could not be decoded) and long runs of varied symbols with no
   letter are dropped, and a notice says how many characters of each kind went.
6. Words hyphenated across a line break are joined when the second part starts in lower case
   ("com-\\npile" -> "compile"), unless the text itself writes the hyphenated form more often than
   the joined one ("well-known" elsewhere keeps "well-\\nknown" as "well-known").
7. Whitespace: lines of only spaces and tabs become empty and runs of blank lines become one. Runs
   of spaces inside a line become one space, except in text with layout (indented lines, tabs,
   Markdown tables, code fences, aligned columns), where spacing is alignment. Line ends are left as they are: a
   final newline, Markdown's two-space line break.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from functools import cache

# ANSI/VT escape sequences (the same as core.text's rule for labels).
_ESCAPE_SEQUENCE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?")


@dataclass(frozen=True)
class Normalised:
    """Normalised text and the notices that say what was repaired or dropped (empty when nothing was)."""

    text: str
    notices: list[str] = field(default_factory=list)


def normalise_text(value: str) -> Normalised:
    """The stored form of a memory's text (see the module docstring for each rule)."""
    repaired: list[str] = []
    dropped: Counter = Counter()
    text = value
    # Once more when something changed: one rule's result can be what an earlier rule repairs
    # (spaces collapsed around "Ã" make the "Ã " of a lost no-break space), and the stored text must
    # come back unchanged when normalised again.
    for _ in range(3):
        before = text
        text = normalise_line_breaks(text)
        text, notice = _characters(text)
        if notice and notice not in repaired:
            repaired.append(notice)
        text, cut = drop_not_text(text)
        dropped.update(cut)
        text = collapse_whitespace(join_hyphenated(text))
        if text == before:
            break
    return Normalised(text=text, notices=[*repaired, *([not_text_notice(dropped)] if dropped else [])])


def normalise_label(value: str) -> str:
    """A one-line label (a title) with the character rules of the text: mojibake repaired, invisible
    characters dropped, compatibility forms mapped. Line breaks and spacing are left to the caller."""
    text, _ = _characters(value)
    return text


def _characters(text: str) -> tuple[str, str]:
    """The character-level rules (2-4)."""
    text, notice = repair_mojibake(text)
    return compatibility_forms(strip_invisible(text)), notice


# --- 1. Line breaks ------------------------------------------------------------------------------

_LINE_BREAKS = re.compile("\r\n?|[\x0b\x0c\u2028\u2029]")
_BREAK_AS = {"\x0c": "\n\n", "\u2029": "\n\n"}


def normalise_line_breaks(text: str) -> str:
    """Every line break as "\\n"; a page break (form feed) and a paragraph separator as a blank line.
    (NEL, U+0085, is a C1 control: mojibake for "…" to the mojibake rule, else dropped.)"""
    if not _LINE_BREAKS.search(text):
        return text
    return _LINE_BREAKS.sub(lambda m: _BREAK_AS.get(m.group(), "\n"), text)


# --- 2. Mojibake ---------------------------------------------------------------------------------


@cache
def _ftfy_config():
    import ftfy

    # Only the encoding repairs: the other fixes are rules of their own here (NFKC, controls, line
    # breaks) or would change what a person typed (curly quotes, "&amp;" in code, C1 as cp1252).
    return ftfy.TextFixerConfig(
        unescape_html=False,
        remove_terminal_escapes=False,
        fix_c1_controls=False,
        fix_latin_ligatures=False,
        fix_character_width=False,
        uncurl_quotes=False,
        fix_line_breaks=False,
        fix_surrogates=False,
        remove_control_chars=False,
        normalization=None,
        explain=False,
    )


# Characters a Cyrillic, Greek, Hebrew or Arabic code page's letters become when the bytes are read as
# Windows-1252: À-ÿ, and the few letters those code pages keep at 0xA1-0xBF (Ё ё Є є Ї ї І і Ґ ґ Ў ў).
_LEGACY_LETTERS = "\u00c0-\u00ff\u00a1\u00a2\u00a5\u00a8\u00aa\u00af\u00b2\u00b3\u00b4\u00b8\u00ba\u00bf"
_LEGACY_RUN = re.compile(f"[{_LEGACY_LETTERS}]+")
# A word of at least four such characters and nothing else: what makes a line worth a closer look.
_LEGACY_WORD = re.compile(rf"(?<![^\W\d_])(?<![{_LEGACY_LETTERS}])[{_LEGACY_LETTERS}]{{4,}}(?![^\W\d_])")
_WORDLIKE = re.compile(rf"(?:[^\W\d_]|[{_LEGACY_LETTERS}])+")
# Tried in this order; the first wins a tie (short texts often fit several equally well).
_LEGACY_CODE_PAGES = ("cp1251", "cp1253", "cp1256", "cp1255")
_CODE_PAGE_NAMES = {"cp1251": "Cyrillic", "cp1253": "Greek", "cp1256": "Arabic", "cp1255": "Hebrew"}
MOJIBAKE_NOTICE = "Repaired text that had been read with the wrong character set (mojibake such as “Ã©” for “é”)."


def repair_mojibake(text: str) -> tuple[str, str]:
    """Text with mojibake repaired, and a notice when something was (else "")."""
    fixed = _repair_utf8_mojibake(text)
    notice = MOJIBAKE_NOTICE if fixed != text else ""
    fixed, code_page = _repair_legacy_code_page(fixed)
    if code_page:
        notice = (
            f"Repaired {_CODE_PAGE_NAMES[code_page]} text that had been read with the wrong character set "
            f"(Windows-{code_page[2:]} read as Windows-1252)."
        )
    return fixed, notice


@cache
def _utf8_mojibake() -> re.Pattern:
    """What UTF-8 looks like read with one of the code pages ftfy knows: a lead byte's character then a
    continuation byte's (or "Ã " and "Â ", where a no-break space was lost). Only lines with one are given
    to ftfy, which then decides; ftfy's own check of every line is the slow part."""
    import ftfy.bad_codecs  # noqa: F401  (registers the "sloppy" code pages)
    from ftfy.chardata import CHARMAP_ENCODINGS

    classes = []
    for encoding in CHARMAP_ENCODINGS:
        leads = _leads(encoding)
        follows = bytes(range(0x80, 0xC0)).decode(encoding, errors="ignore")
        classes.append(f"[{re.escape(leads)}][{re.escape(follows)}]")
    leads = "".join(sorted({ch for encoding in CHARMAP_ENCODINGS for ch in _leads(encoding)}))
    # The lookahead first: most characters are no lead in any of them.
    return re.compile(f"(?=[{re.escape(leads)}])(?:" + "|".join([*classes, "[\u00c2\u00c3] "]) + ")")


def _leads(encoding: str) -> str:
    return bytes(range(0xC2, 0xF5)).decode(encoding, errors="ignore")


def _repair_utf8_mojibake(text: str) -> str:
    if text.isascii() or not _utf8_mojibake().search(text):
        return text
    import ftfy

    lines = text.split("\n")
    for i, line in enumerate(lines):
        if not line.isascii() and _utf8_mojibake().search(line):
            lines[i] = ftfy.fix_text(line, _ftfy_config())
    return "\n".join(lines)


def _is_legacy_line(line: str) -> bool:
    """Whether a line reads as a Cyrillic (Greek, ...) code page taken for Windows-1252: most of its
    letters are in words made only of accented Latin-1 letters, one of them at least 4 long. A real
    Western European word of four accented letters and nothing else hardly exists ("été" has a t)."""
    words = _WORDLIKE.findall(line)
    letters = sum(len(w) for w in words)
    legacy = [w for w in words if _LEGACY_RUN.fullmatch(w)]
    return bool(legacy) and max(map(len, legacy)) >= 4 and sum(len(w) for w in legacy) >= 0.6 * letters


def _repair_legacy_code_page(text: str) -> tuple[str, str]:
    if text.isascii() or not _LEGACY_WORD.search(text):
        return text, ""
    lines = text.split("\n")
    chosen = [i for i, line in enumerate(lines) if _LEGACY_WORD.search(line) and _is_legacy_line(line)]
    if not chosen:
        return text, ""
    sample = " ".join(run for i in chosen for run in _LEGACY_RUN.findall(lines[i])).encode("latin-1")
    code_page = _best_code_page(sample)
    if code_page is None:
        return text, ""

    def decode(match: re.Match) -> str:
        return match.group().encode("latin-1").decode(code_page)

    for i in chosen:
        lines[i] = _LEGACY_RUN.sub(decode, lines[i])
    return "\n".join(lines), code_page


def _best_code_page(sample: bytes) -> str | None:
    """The legacy code page that reads `sample` best (least chaos, then most coherence), or None when
    none decodes it."""
    from charset_normalizer import from_bytes

    readable = [cp for cp in _LEGACY_CODE_PAGES if _decodes(sample, cp)]
    if not readable:
        return None
    scores = {match.encoding: (match.chaos, -match.coherence) for match in from_bytes(sample, cp_isolation=readable)}
    ranked = sorted(readable, key=lambda cp: (*scores.get(cp, (1.0, 0.0)), readable.index(cp)))
    return ranked[0]


def _decodes(sample: bytes, code_page: str) -> bool:
    try:
        sample.decode(code_page)
    except UnicodeDecodeError:
        return False
    return True


# --- 3. Invisible characters ---------------------------------------------------------------------

# Format characters that are part of what a text says: Arabic and Syriac signs that span numbers.
_VISIBLE_FORMAT = frozenset("\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd")
_JOINERS = frozenset("\u200c\u200d")
_TAGS = range(0xE0020, 0xE0080)
_SOFT_HYPHEN_AT_LINE_END = re.compile("\u00ad[ \t]*(?=\n)")


def _invisible(ch: str) -> bool:
    if ch in "\n\t":
        return False
    category = unicodedata.category(ch)
    if category == "Cc":
        return True
    if category == "Cf":
        return ch not in _VISIBLE_FORMAT
    # Noncharacters (U+FDD0-U+FDEF and the last two of each plane) are never text.
    code = ord(ch)
    return 0xFDD0 <= code <= 0xFDEF or (code & 0xFFFE) == 0xFFFE


def strip_invisible(text: str) -> str:
    """Text without escape sequences, control characters (but tab and newline) and format characters;
    see the module docstring for what is kept."""
    if text.isascii() and text.isprintable():
        return text
    found = [ch for ch in set(text) if _invisible(ch)]
    if not found:
        return text
    text = _ESCAPE_SEQUENCE.sub("", text)
    text = _SOFT_HYPHEN_AT_LINE_END.sub("-", text)

    def keep(match: re.Match) -> str:
        ch, start, whole = match.group(), match.start(), match.string
        before = whole[start - 1] if start else ""
        if ch in _JOINERS:
            after = whole[start + 1] if start + 1 < len(whole) else ""
            return ch if before and after and _visible(before) and _visible(after) else ""
        # An emoji tag sequence: U+1F3F4 (black flag), tag letters, then U+E007F (cancel tag).
        if ord(ch) in _TAGS and before and (before == "\U0001f3f4" or ord(before) in _TAGS):
            return ch
        return ""

    return re.sub("[" + "".join(re.escape(ch) for ch in found) + "]", keep, text)


def _visible(ch: str) -> bool:
    return not ch.isspace() and not _invisible(ch)


# --- 4. Compatibility forms ----------------------------------------------------------------------

_KEPT_TAGS = ("<super>", "<sub>", "<fraction>", "<circle>", "<square>")


@cache
def kept_form(ch: str) -> bool:
    """Whether NFKC would change `ch` but it is left as written (see the module docstring)."""
    if ch in "\u3000\u2026":
        return True
    decomposition = unicodedata.decomposition(ch)
    if not decomposition.startswith("<"):
        return False
    if decomposition.startswith(_KEPT_TAGS):
        return True
    mapped = unicodedata.normalize("NFKC", ch)
    # Spacing accents ("´", "¨") would become a space and a combining mark.
    return len(mapped) > 1 and mapped[0] == " " and unicodedata.combining(mapped[1]) > 0


def compatibility_forms(text: str) -> str:
    """NFKC, except for the forms listed in the module docstring, which keep their shape."""
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text
    kept = [ch for ch in set(text) if not ch.isascii() and kept_form(ch)]
    if not kept:
        return unicodedata.normalize("NFKC", text)
    pieces = re.split("([" + "".join(re.escape(ch) for ch in kept) + "])", text)
    # split() with a group alternates text and kept characters: normalise the text between them.
    return "".join(piece if i % 2 else unicodedata.normalize("NFKC", piece) for i, piece in enumerate(pieces))


# --- 5. Not text ---------------------------------------------------------------------------------

_GLYPH_NAME = r"/(?:g|G|gid|glyph|cid|index)\d{1,5}(?![0-9A-Za-z])|/uni[0-9A-Fa-f]{4}(?:[0-9A-Fa-f]{4})*(?![0-9A-Za-z])"
_GLYPH_RUN = re.compile(rf"(?:(?:{_GLYPH_NAME})[ \t]*){{3,}}")
_GLYPH_ANY = re.compile(rf"(?:(?:{_GLYPH_NAME})[ \t]*)+")
_CID = re.compile(r"(?:\(cid:\d{1,6}\)[ \t]*)+")
_REPLACEMENT = re.compile("\ufffd+[ \t]*")
# A long stretch of a line with no letter: checked further by _is_symbol_noise.
# (Starting only where such a stretch starts: a retry inside each run would make it quadratic.)
_NO_LETTER_RUN = re.compile(r"(?<![^\w\n])(?<![\d_])(?:[^\w\n]|[\d_]){64,}")
NOT_TEXT_KINDS = {
    "glyphs": "glyph names from a PDF",
    "cid": "(cid:…) codes from a PDF",
    "undecodable": "characters that could not be decoded (�)",
    "symbols": "runs of symbols with no letters",
}


def _is_symbol_noise(run: str) -> bool:
    """Font garbage, not a table of figures, a separator line, box drawing or a row of emoji: at least
    32 visible characters, 10 of them different, mostly neither digits nor pictographs."""
    visible = [ch for ch in run if not ch.isspace()]
    if len(visible) < 32 or len(set(visible)) < 10:
        return False
    digits = sum(ch.isdigit() for ch in visible)
    pictographs = sum(0x1F000 <= ord(ch) <= 0x1FAFF or 0x2600 <= ord(ch) <= 0x27BF for ch in visible)
    return digits + pictographs < len(visible) / 2


def drop_not_text(text: str) -> tuple[str, Counter]:
    """Text without what is not text (rule 5), and how many characters of each kind were dropped."""
    dropped: Counter = Counter()

    def cut(kind: str):
        def replace(match: re.Match) -> str:
            dropped[kind] += sum(not ch.isspace() for ch in match.group())
            # Between two visible characters a gap stays, so the words either side do not merge.
            start, end = match.start(), match.end()
            before = match.string[start - 1] if start else " "
            after = match.string[end] if end < len(match.string) else " "
            return "" if before.isspace() or after.isspace() else " "

        return replace

    for _ in range(3):  # a cut can bring two halves of a run together
        before = text
        if "/" in text and _GLYPH_RUN.search(text):
            # Once the text holds a run of them, a lone glyph name in it is one as well.
            text = _GLYPH_ANY.sub(cut("glyphs"), text)
        if "(cid:" in text:
            text = _CID.sub(cut("cid"), text)
        if "\ufffd" in text:
            text = _REPLACEMENT.sub(cut("undecodable"), text)
        if not text.isalnum():
            text = _NO_LETTER_RUN.sub(
                lambda m: cut("symbols")(m) if _is_symbol_noise(m.group()) else m.group(),
                text,
            )
        if text == before:
            break
    return text, dropped


def not_text_notice(dropped: Counter) -> str:
    """ "Dropped 12,345 characters that were not text: glyph names from a PDF (12,000), ..." """
    total = sum(dropped.values())
    parts = ", ".join(f"{NOT_TEXT_KINDS[kind]} ({count:,})" for kind, count in dropped.most_common())
    return f"Dropped {total:,} character{'s' if total != 1 else ''} that were not text: {parts}."


# --- 6. Hyphenation ------------------------------------------------------------------------------

# From the hyphen (after two letters) to the end of the second part and what sticks to it.
_HYPHENATED = re.compile(r"(?<=[^\W\d_]{2})[-\u2010][ \t]*\n[ \t]*([^\W\d_]+)(\S*)[ \t]*")
_COMPOUND = re.compile(r"[^\W\d_]+(?:[-\u2010][^\W\d_]+)*")


def join_hyphenated(text: str) -> str:
    """Words broken by a hyphen at a line end made whole again (rule 6). The rest of the second line
    stays on a line of its own, so the text keeps its lines."""
    if "\n" not in text or not _HYPHENATED.search(text):
        return text
    words: Counter | None = None

    def join(match: re.Match) -> str:
        nonlocal words
        right, tail = match.groups()
        if not right[0].islower():
            return match.group()
        whole, start = match.string, match.start()
        left_start = start
        while left_start and whole[left_start - 1].isalpha():
            left_start -= 1
        left = whole[left_start:start]
        if words is None:
            words = Counter(w.lower().replace("\u2010", "-") for w in _COMPOUND.findall(whole))
        keep = words[f"{left}-{right}".lower()] > words[(left + right).lower()]
        end = match.end()
        rest_follows = end < len(whole) and whole[end] != "\n"
        return ("-" if keep else "") + right + tail + ("\n" if rest_follows else "")

    for _ in range(5):  # "a-\nb-\nc": each join can bring the next line end into reach
        joined_text = _HYPHENATED.sub(join, text)
        if joined_text == text:
            break
        text, words = joined_text, None
    return text


# --- 7. Whitespace -------------------------------------------------------------------------------

_INNER_SPACES = re.compile(r"(?<=\S) {2,}(?=\S)")
_BLANK_LINES = re.compile(r"\n{3,}")
_TABLE_OR_FENCE = re.compile(r"^\s*(?:\||```|~~~)")


def collapse_whitespace(text: str) -> str:
    """Rule 7: lines of only whitespace emptied, runs of blank lines made one, and (outside layout)
    runs of spaces inside a line made one space."""
    lines = [line if line.strip() else "" for line in text.split("\n")]
    if not _has_layout(lines):
        lines = [_INNER_SPACES.sub(" ", line) for line in lines]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines))


def _has_layout(lines: list[str]) -> bool:
    """Whether spacing inside lines is alignment: some lines indented (a twentieth of them at least),
    a tab, a Markdown table, a code fence, or columns (two lines in a row with a run of spaces ending
    at the same place)."""
    lines = [line for line in lines if line.strip()]
    indented = sum(line[:1] in " \t" for line in lines)
    if indented and indented * 20 >= len(lines):
        return True
    if any("\t" in line or _TABLE_OR_FENCE.match(line) for line in lines):
        return True
    previous: set[int] = set()
    for line in lines:
        columns = {match.end() for match in _INNER_SPACES.finditer(line)}
        if columns & previous:
            return True
        previous = columns
    return False
