"""OLE compound files (legacy Office files, and the wrapper Office puts around an encrypted .docx, .xlsx
or .pptx): which streams one holds, read with olefile."""

from __future__ import annotations

import io

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def is_ole(data: bytes) -> bool:
    return data.startswith(OLE_MAGIC)


def open_ole(data: bytes):
    """The olefile reader of the bytes, or None when they are not a readable compound file."""
    import olefile

    try:
        # A file object, never the bytes themselves: olefile takes short bytes for a file name.
        return olefile.OleFileIO(io.BytesIO(data))
    except Exception:  # noqa: BLE001 - olefile raises many kinds on damaged input; all mean unreadable
        return None


def stream_names(data: bytes) -> set[str]:
    """The lower-cased names of the file's top-level streams ("worddocument", "encryptedpackage")."""
    ole = open_ole(data)
    if ole is None:
        return set()
    try:
        return {entry[0].lower() for entry in ole.listdir(streams=True, storages=True) if entry}
    except Exception:  # noqa: BLE001 - as above
        return set()
    finally:
        ole.close()


def is_encrypted_office(names: set[str]) -> bool:
    """An encrypted .docx, .xlsx or .pptx: Office stores the encrypted zip in an OLE file."""
    return "encryptedpackage" in names or "encryptioninfo" in names
