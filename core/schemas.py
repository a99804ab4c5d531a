"""Schemas every API router shares: the error shape and bounded ids, offsets and limits."""

from __future__ import annotations

from typing import Annotated, Any

from ninja import Schema
from pydantic import AliasGenerator, ConfigDict, Field
from pydantic.alias_generators import to_camel

# PostgreSQL's bigint: an id or offset past it is a 422 at the front door, not "bigint out of range".
MAX_BIGINT = 2**63 - 1
MAX_OFFSET = 1_000_000_000

Id = Annotated[int, Field(ge=1, le=MAX_BIGINT)]


class ErrorOut(Schema):
    detail: Any
    field: str | None = None
    index: int | None = None


ERRORS = {401: ErrorOut, 404: ErrorOut, 422: ErrorOut}


class OutSchema(Schema):
    """Base of every Out schema: fields are named like the model's attributes (read directly, with
    `from_attributes`) and appear in JSON in camelCase (`hybridScore`), as the spec writes them.
    Routers serialise by alias (``Router(by_alias=True)``)."""

    model_config = ConfigDict(from_attributes=True, alias_generator=AliasGenerator(serialization_alias=to_camel))
