"""The one clean-text rule: which strings may reach the database, the embedder and the pages.

PostgreSQL cannot store a NUL byte in text or jsonb, and a lone surrogate (``\\ud800``, which
JSON's ``\\u`` escapes can carry) cannot be encoded as UTF-8 at all. Left alone, either would surface
as a 500 deep inside a query or the tokenizer; here they are refused up front with the field's name,
before any embedding work. Titles and other one-line labels also lose the characters that change how a
line is displayed rather than what it says: terminal escape sequences, other control characters and
the bidirectional overrides (``\\u202e``) used to disguise text, as upload file names already do.
JSON values (metadata) are refused with a NaN or an Infinity in them too: Python's json reads both,
jsonb cannot store either.
"""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any

from django.core.exceptions import ValidationError
from pydantic import AfterValidator, StringConstraints

# Characters that reorder or isolate text for display (Unicode's bidi formatting characters).
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# ANSI/VT escape sequences: CSI (ESC [ ... final byte), OSC (ESC ] ... BEL or ESC \), and two-byte ESC x.
_ESCAPE_SEQUENCE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?")
_SURROGATE = re.compile("[\ud800-\udfff]")
MAX_JSON_DEPTH = 32


class TextError(ValueError):
    """A string that cannot be stored. `field` names where it was found, e.g. ``metadata.author``."""

    def __init__(self, message: str, *, field: str | None = None):
        self.field = field
        super().__init__(f"{field}: {message}" if field else message)


def text_problem(value: str) -> str | None:
    """Why value cannot be stored, or None when it can."""
    if "\x00" in value:
        return "contains a NUL byte (\\u0000), which text cannot hold"
    if _SURROGATE.search(value):
        return "contains a lone surrogate (\\ud800-\\udfff), which is not valid Unicode"
    return None


def check_text(value: str, *, field: str | None = None) -> str:
    """value unchanged, or TextError naming field."""
    if isinstance(value, str) and (problem := text_problem(value)):
        raise TextError(problem, field=field)
    return value


def parse_json(raw: str | bytes) -> Any:
    """Untrusted JSON text as a value, or TextError saying why it is not JSON: malformed, nested
    deeper than Python can read (a RecursionError otherwise), or an integer too long to convert
    (Python's limit is 4,300 digits). The value is not checked further: see check_json."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise TextError(f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise TextError(f"not valid JSON here: it is nested more than {MAX_JSON_DEPTH} levels deep") from None
    except UnicodeDecodeError as exc:
        raise TextError(f"not valid JSON: not UTF-8 text (byte {exc.start})") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise TextError(f"not valid JSON here: {exc}".split("; use sys.")[0]) from None


def check_json(value: Any, *, field: str | None = None, depth: int = 0) -> Any:
    """Every key and string in a JSON value passes check_text, no number is NaN or infinite, and it
    nests at most MAX_JSON_DEPTH deep."""
    if depth > MAX_JSON_DEPTH:
        raise TextError(f"is nested more than {MAX_JSON_DEPTH} levels deep", field=field)
    if isinstance(value, str):
        check_text(value, field=field)
    elif isinstance(value, float) and not math.isfinite(value):
        # Python's json reads NaN and Infinity, but they are not JSON and jsonb refuses them.
        raise TextError(f"is {value}, which JSON cannot hold: give a finite number", field=field)
    elif isinstance(value, dict):
        for key, item in value.items():
            key = str(key)
            shown = key if text_problem(key) is None else ascii(key)  # the reply must itself be valid text
            name = f"{field}.{shown}" if field else shown
            check_text(key, field=name)
            check_json(item, field=name, depth=depth + 1)
    elif isinstance(value, (list, tuple)):
        for position, item in enumerate(value):
            check_json(item, field=f"{field}[{position}]" if field else f"[{position}]", depth=depth + 1)
    return value


def strip_display_controls(value: str) -> str:
    """A one-line label without escape sequences, control characters or bidi overrides; runs of
    whitespace become one space. Zero-width joiners stay: emoji sequences need them."""
    value = _ESCAPE_SEQUENCE.sub("", value)
    value = "".join(ch for ch in value if ch not in BIDI_CONTROLS and (ch in "\t\n\r" or not _is_control(ch)))
    return " ".join(value.split())


def _is_control(ch: str) -> bool:
    code = ord(ch)
    return code < 0x20 or 0x7F <= code < 0xA0


def _checked(value: str) -> str:
    if problem := text_problem(value):
        raise ValueError(problem)
    return value


def _checked_json(value: Any) -> Any:
    try:
        return check_json(value)
    except TextError as exc:
        raise ValueError(str(exc)) from None


def validate_clean_text(value) -> None:
    """For Django form fields: the same rule, shown on the field it belongs to. (A NUL byte is left
    to the CharField's own ProhibitNullCharactersValidator, so the field shows one message.)"""
    if isinstance(value, str) and "\x00" not in value and (problem := text_problem(value)):
        raise ValidationError(f"This {problem}.", code="unstorable_text")


# For ninja/pydantic schemas: a 422 whose `loc` names the field.
CleanStr = Annotated[str, AfterValidator(_checked)]


def clean_str(max_length: int):
    """CleanStr of at most max_length characters. The length is checked before the text rule, so the
    message counts characters, where a Field(max_length) beside an optional CleanStr would say "items"."""
    return Annotated[str, StringConstraints(max_length=max_length), AfterValidator(_checked)]


CleanDict = Annotated[dict[str, Any], AfterValidator(_checked_json)]
