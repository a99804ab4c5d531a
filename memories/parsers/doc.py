"""Legacy Word .doc: read by the antiword program, when the server has it."""

from __future__ import annotations

import shutil
import subprocess

from memories.parsers.budget import InflateBudget
from memories.parsers.errors import ExtractionError
from memories.parsers.format import Format, Parsed

ANTIWORD_TIMEOUT_S = 60


def antiword_available() -> bool:
    return shutil.which("antiword") is not None


def parse(data: bytes, *, budget: InflateBudget, max_inflated: int) -> Parsed:
    if not data.startswith(b"\xd0\xcf\x11\xe0"):
        raise ExtractionError("this is not a legacy Word .doc file")
    if not antiword_available():
        raise ExtractionError(
            "legacy Word .doc files need the 'antiword' program, which is not installed "
            "on this server (apt-get install antiword); save it as .docx instead"
        )
    try:
        done = subprocess.run(
            ["antiword", "-w", "0", "-"], input=data, capture_output=True, timeout=ANTIWORD_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise ExtractionError("reading the .doc file took too long") from exc
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()[:1]
        raise ExtractionError("the .doc file cannot be read" + (f": {reason[0]}" if reason else ""))
    return Parsed(text=done.stdout.decode("utf-8", "replace"))


FORMAT = Format(extensions=frozenset({"doc"}), parse=parse, media_types={"doc": "application/msword"})
