"""Why a file cannot become a memory, as errors whose messages a person understands and whose status
the front doors return."""


class ExtractionError(ValueError):
    """The file cannot become a memory; the message says why, in words a person understands."""

    status = 422


class DecompressionBombError(ExtractionError):
    """The file would decompress to more than its budget allows (a likely zip bomb): 413."""

    status = 413
