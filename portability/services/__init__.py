"""Export and import of a user's whole memory: a streamed zip out, and the same zip (or JSON Lines, or
Markdown notes) back in, one transaction per memory, idempotent by content hash.

By concern: export (the zip, written as it downloads), records (an export line checked and turned into
an unsaved memory), import_ (storing the items of a source, with the report), import_jobs (the API's and
the page's queued imports) and vectors (which model made a vector and whether an import may reuse it).
Reading what people bring (zips, JSON Lines, notes) safely is portability.sources.
"""

from portability.services.export import (
    EXPORT_BATCH,
    export_filename,
    export_to_file,
    export_zip_stream,
    memory_record,
    original_entry,
    original_record,
)
from portability.services.import_ import (
    IMPORT_BATCH,
    MAX_REPORTED_ERRORS,
    ImportReport,
    import_path,
    import_source,
)
from portability.services.import_jobs import (
    ACCEPTED_SUFFIXES,
    import_allowed_dirs,
    import_job_create,
    import_job_create_from_path,
    import_job_run,
    import_path_check,
)
from portability.services.vectors import VectorReuse, embedding_model_id

__all__ = [
    "ACCEPTED_SUFFIXES",
    "EXPORT_BATCH",
    "IMPORT_BATCH",
    "MAX_REPORTED_ERRORS",
    "ImportReport",
    "VectorReuse",
    "embedding_model_id",
    "export_filename",
    "export_to_file",
    "export_zip_stream",
    "import_allowed_dirs",
    "import_job_create",
    "import_job_create_from_path",
    "import_job_run",
    "import_path",
    "import_path_check",
    "import_source",
    "memory_record",
    "original_entry",
    "original_record",
]
