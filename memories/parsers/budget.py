"""Decompression within a byte budget: each file has its own limit, and one budget can be shared by
all the files of a request."""

from __future__ import annotations

from memories.parsers.errors import DecompressionBombError

# Compressed formats (a .docx is a zip; PDF streams are deflated) are decompressed with a byte budget
# while they are read, never trusting the sizes the file declares: a file may inflate to at most
# MAX_INFLATED_BYTES (the uploads service passes KYBERNESIS_MAX_INFLATED_BYTES, and a budget shared by
# all the files of one request).
MAX_INFLATED_BYTES = 64 * 1024 * 1024


class InflateBudget:
    """How many bytes decompressing may still produce. One budget can be shared by all the files of a
    request, so that many small bombs cannot add up; each file also has its own limit."""

    def __init__(self, total: int):
        self.total = total
        self.remaining = total
        self.left_at_file_start = total

    def file_limit(self, per_file: int = MAX_INFLATED_BYTES) -> int:
        """The limit of the next file: its own, or what is left of the request's when that is less."""
        self.left_at_file_start = self.remaining
        return max(0, min(per_file, self.remaining))

    def charge(self, produced: int) -> None:
        self.remaining -= produced

    def refuse(self, what: str, per_file: int) -> DecompressionBombError:
        """The error for a file that went past its limit: the request's, when less was left of it than
        the per-file limit, else the file's own."""
        if self.left_at_file_start < per_file:
            return DecompressionBombError(
                f"{what} would decompress past what is left of this upload's limit of "
                f"{self.total:,} decompressed bytes; send fewer files at once"
            )
        return DecompressionBombError(
            f"{what} decompresses to more than {per_file:,} bytes, which is refused as a likely zip bomb"
        )
