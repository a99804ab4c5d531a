"""Schemas every API router shares."""

from __future__ import annotations

from typing import Any

from ninja import Schema


class ErrorOut(Schema):
    detail: Any
    field: str | None = None
    index: int | None = None


ERRORS = {401: ErrorOut, 404: ErrorOut, 422: ErrorOut}
