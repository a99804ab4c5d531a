"""One pagination for every list in the API: `limit` and `offset` in, `items/count/limit/offset` out."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Field, Schema
from ninja.pagination import PaginationBase

from core.schemas import MAX_OFFSET


class LimitOffset(PaginationBase):
    """ninja's limit/offset pagination, keeping the JSON shape clients already read: the page's
    `limit` and `offset` are echoed beside `count`. Each list sets its own default and largest limit,
    and the offset is bounded, so a huge one is a 422 rather than a database error."""

    class Output(Schema):
        items: list[Any]
        count: int
        limit: int
        offset: int

    def __init__(self, *, default: int = 50, maximum: int = 500, **kwargs: Any) -> None:
        super().__init__(**kwargs)

        class Input(PaginationBase.Input):
            limit: int = Field(default=default, ge=1, le=maximum, description=f"Items per page, 1 to {maximum}.")
            offset: int = Field(default=0, ge=0, le=MAX_OFFSET, description="Items to skip.")

        self.Input = Input

    def paginate_queryset(self, queryset: QuerySet, pagination: Any, request: HttpRequest, **params: Any) -> Any:
        offset, limit = pagination.offset, pagination.limit
        return {
            "items": queryset[offset : offset + limit],
            "count": self._items_count(queryset),
            "limit": limit,
            "offset": offset,
        }
