"""Chunk rows written by one binary COPY instead of an INSERT with a parameter per value.

Every path that stores chunks (a create, a batch create, an import, a re-chunk) writes them here. For
a chat import, Django's bulk_create spent more time building the INSERT (384 floats formatted as text
per vector, then parsed again by PostgreSQL) than PostgreSQL spent storing the rows. Binary COPY sends
each vector as pgvector's own wire format (a 4-byte header and 384 big-endian float32s), the other
columns in PostgreSQL's binary forms, and fires the same constraints and triggers as an INSERT.

The columns are read from the model, so a field added to MemoryChunk is written too; a field of a
type this module does not know how to send is a TypeError at the first write, not a silent default.
The rows' primary keys are not read back (no caller needs them)."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from functools import cache

import numpy as np
from django.db import connection, models
from pgvector.django import VectorField

from memories.models import MemoryChunk

AUTO_FIELDS = (models.AutoField, models.BigAutoField, models.SmallAutoField)

# The psycopg type each kind of field is sent as. A vector goes as "bytea": a bytea's binary form is
# its bytes as they are, and those bytes are the vector's binary form (pgvector's vector_recv reads them).
_TYPES: dict[type[models.Field], str] = {
    models.BigAutoField: "int8",
    models.BigIntegerField: "int8",
    models.PositiveIntegerField: "int4",
    models.IntegerField: "int4",
    models.TextField: "text",
    models.CharField: "text",
    models.BooleanField: "bool",
    models.FloatField: "float8",
    models.DateTimeField: "timestamptz",
    VectorField: "bytea",
}


def _type_of(field: models.Field) -> str:
    if isinstance(field, models.ForeignKey):
        return _type_of(field.target_field)
    for kind in type(field).__mro__:
        if kind in _TYPES:
            return _TYPES[kind]
    raise TypeError(f"chunk_copy cannot send {type(field).__name__} ({field.name}); add its type to _TYPES")


@cache
def _columns() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(attribute names, column names, psycopg types) of the fields a COPY writes: every concrete
    field but the generated ones and the auto primary key."""
    fields = [
        f
        for f in MemoryChunk._meta.concrete_fields
        if not getattr(f, "generated", False) and not isinstance(f, AUTO_FIELDS)
    ]
    return (
        tuple(f.attname for f in fields),
        tuple(connection.ops.quote_name(str(f.column)) for f in fields),
        tuple(_type_of(f) for f in fields),
    )


def vector_binary(vector) -> bytes:
    """A vector (numpy array, list or pgvector Vector) in pgvector's binary wire form. PostgreSQL checks
    it as it would a vector given as text: a NaN or a wrong dimension count is a DataError."""
    values = np.asarray(vector.to_numpy() if hasattr(vector, "to_numpy") else vector, dtype=">f4")
    if values.ndim != 1:
        raise ValueError(f"a chunk vector must be one-dimensional, not of shape {values.shape}")
    return struct.pack(">HH", values.shape[0], 0) + values.tobytes()


def chunks_insert(rows: Sequence[MemoryChunk]) -> None:
    """Store the rows (unsaved MemoryChunks) by one binary COPY, inside the caller's transaction."""
    if not rows:
        return
    names, columns, types = _columns()
    vector_index = names.index("embedding")
    # Errors come as Django's (IntegrityError, DataError), as from an INSERT.
    statement = f"COPY {MemoryChunk._meta.db_table} ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)"
    with connection.wrap_database_errors, connection.cursor() as cursor, cursor.copy(statement) as copy:
        copy.set_types(list(types))
        for row in rows:
            values = [getattr(row, name) for name in names]
            values[vector_index] = vector_binary(values[vector_index])
            copy.write_row(values)
