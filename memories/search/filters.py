"""What a search may ask for: the query, limit and score bounds of a request, and its hard filters
(SearchFilters, built by the one mapper every front door calls, search_filters), each checked with
the message the caller sees."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from datetime import time as day_time

from django.utils import timezone

from core.language import parse_language_code
from core.text import text_problem
from memories.models import Source, Tier
from memories.tag_rules import filter_tags

MAX_QUERY_CHARS = 2000
MAX_LIMIT = 100


class SearchError(ValueError):
    """A search request that cannot run; the message says why (HTTP 422)."""


@dataclass(frozen=True)
class SearchFilters:
    """The hard filters of a search, checked when built (SearchError says what is wrong)."""

    tags: tuple[str, ...] = ()
    tags_mode: str = "any"  # any | all
    sources: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ()
    min_priority: float | None = None
    max_priority: float | None = None
    # A datetime is used as it is (naive ones in the current time zone); a plain date means the
    # whole day, so `created_before=2025-03-01` still includes memories of the first of March.
    created_after: datetime | date | None = None
    created_before: datetime | date | None = None
    updated_after: datetime | date | None = None
    updated_before: datetime | date | None = None
    title_contains: str | None = None
    pinned: bool | None = None
    # A memory's language (core.language): an ISO 639-1 code, "und" for memories whose language is
    # unknown, or None for any.
    language: str | None = None
    # Memories whose chunks are not candidates: hybrid search's second look past a memory that filled
    # the candidate pool (memories.search.hybrid), not a filter a person sets.
    exclude_memory_ids: tuple[int, ...] = ()

    def __post_init__(self):
        for name in ("created_after", "created_before", "updated_after", "updated_before"):
            object.__setattr__(
                self, name, _date_bound(getattr(self, name), name=name, end_of_day=name.endswith("_before"))
            )
        if self.title_contains is not None and (problem := text_problem(self.title_contains)):
            raise SearchError(f"titleContains {problem}")
        for tag in self.tags:
            if isinstance(tag, str) and (problem := text_problem(tag)):
                raise SearchError(f"tags {problem}")
        object.__setattr__(self, "tags", filter_tags(self.tags))
        try:
            object.__setattr__(self, "language", parse_language_code(self.language))
        except ValueError as exc:
            raise SearchError(str(exc)) from None
        if self.tags_mode not in ("any", "all"):
            raise SearchError("tagsMode must be 'any' or 'all'")
        if unknown := set(self.sources) - set(Source.values):
            raise SearchError(f"unknown source(s): {', '.join(sorted(unknown))}")
        if unknown := set(self.tiers) - set(Tier.values):
            raise SearchError(f"unknown tier(s): {', '.join(sorted(unknown))}")
        for name in ("min_priority", "max_priority"):
            value = getattr(self, name)
            if value is not None and not 0 <= value <= 1:
                raise SearchError(f"{name} must be from 0 to 1")
        if self.min_priority is not None and self.max_priority is not None and self.min_priority > self.max_priority:
            raise SearchError("min_priority is above max_priority")

    def sql(self, params: dict) -> tuple[str, str]:
        """(conditions on chunk `c`, conditions on memory `m` or ""); the values go into params.

        Kept apart so that a search with no memory-level filter never joins the memory table on
        its candidate side, which keeps the HNSW and posting index scans cheap.
        """
        chunk = ["c.owner_id = %(owner)s"]
        if self.tiers and set(self.tiers) != set(Tier.values):
            chunk.append(tier_condition(self.tiers))
        if self.exclude_memory_ids:
            params["f_exclude"] = [int(pk) for pk in self.exclude_memory_ids]
            chunk.append("c.memory_id <> ALL(%(f_exclude)s)")
        memory = []
        if self.sources:
            params["f_sources"] = list(self.sources)
            memory.append("m.source = ANY(%(f_sources)s)")
        if self.tags:
            params["f_tags"] = list(self.tags)
            memory.append("m.tags " + ("&&" if self.tags_mode == "any" else "@>") + " %(f_tags)s::varchar[]")
        for name, column, op in (
            ("min_priority", "m.priority", ">="),
            ("max_priority", "m.priority", "<="),
            ("created_after", "m.created_at", ">="),
            ("created_before", "m.created_at", "<"),
            ("updated_after", "m.updated_at", ">="),
            ("updated_before", "m.updated_at", "<"),
        ):
            value = getattr(self, name)
            if value is not None:
                params[f"f_{name}"] = value
                memory.append(f"{column} {op} %(f_{name})s")
        if self.title_contains:
            params["f_title"] = "%" + re.sub(r"([\\%_])", r"\\\1", self.title_contains) + "%"
            memory.append("m.title ILIKE %(f_title)s")
        if self.pinned is not None:
            params["f_pinned"] = self.pinned
            memory.append("m.pinned = %(f_pinned)s")
        if self.language is not None:
            params["f_language"] = self.language
            memory.append("m.language = %(f_language)s")
        return " AND ".join(chunk), " AND ".join(memory)


def search_filters(
    *,
    tags=None,
    tags_mode: str = "any",
    source=None,
    tier=None,
    tiers=None,
    min_priority: float | None = None,
    max_priority: float | None = None,
    created_after: datetime | date | None = None,
    created_before: datetime | date | None = None,
    updated_after: datetime | date | None = None,
    updated_before: datetime | date | None = None,
    title_contains: str | None = None,
    pinned: bool | None = None,
    language: str | None = None,
) -> SearchFilters:
    """The filters a front door's parameters ask for: the one mapper the search page, the API and MCP
    call. `source` and `tier` are each one name or a list of names, and `tiers` adds more tiers; an
    empty or missing value filters nothing. Raises SearchError with the message the caller sees."""
    return SearchFilters(
        tags=tuple(tags or ()),
        tags_mode=tags_mode,
        sources=_names(source),
        tiers=_names(tier) + _names(tiers),
        min_priority=min_priority,
        max_priority=max_priority,
        created_after=created_after,
        created_before=created_before,
        updated_after=updated_after,
        updated_before=updated_before,
        title_contains=title_contains,
        pinned=pinned,
        language=language,
    )


def _names(value) -> tuple:
    """One name or a list of names, as a tuple; nothing for None or an empty value."""
    if not value:
        return ()
    return tuple(value) if isinstance(value, (list, tuple)) else (value,)


# Dates a filter may name. Wider than any memory's timestamps, and narrow enough that a day added for
# "end of day" or a time-zone shift never leaves Python's datetime range (year 1 to 9999).
MIN_FILTER_DATE = date(1000, 1, 1)
MAX_FILTER_DATE = date(9998, 12, 31)


def _date_bound(value, *, name: str, end_of_day: bool) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, (date, datetime)):
        raise SearchError(f"{_camel(name)} must be a date or a date and time")
    day = value.date() if isinstance(value, datetime) else value
    if not MIN_FILTER_DATE <= day <= MAX_FILTER_DATE:
        raise SearchError(
            f"a date must be between {MIN_FILTER_DATE.isoformat()} and {MAX_FILTER_DATE.isoformat()}; "
            f"got {day.isoformat()} ({_camel(name)})"
        )
    if not isinstance(value, datetime):
        value = datetime.combine(value + timedelta(days=1) if end_of_day else value, day_time.min)
    if timezone.is_naive(value):
        value = timezone.make_aware(value, timezone.get_current_timezone())
    # The same instant in UTC: Python takes offsets up to ±23:59, PostgreSQL only up to ±15:59, and
    # the years are bounded above, so this cannot leave the years datetime can hold.
    return value.astimezone(UTC)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def tier_condition(tiers) -> str:
    # Tier names are validated, and written as literals so that the planner can prove the condition
    # implies a partial index's predicate (a bound parameter would hide it).
    return "c.tier IN (" + ", ".join(f"'{Tier(t).value}'" for t in sorted(set(tiers))) + ")"


def validate_request(query, limit, min_score) -> str:
    """The query, stripped, once it, the limit and min_score are known to be usable."""
    if not isinstance(query, str) or not query.strip():
        raise SearchError("the query is empty")
    if problem := text_problem(query):
        raise SearchError(f"the query {problem}")
    if len(query) > MAX_QUERY_CHARS:
        raise SearchError(f"the query is {len(query):,} characters; the limit is {MAX_QUERY_CHARS:,}")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise SearchError(f"limit must be a whole number from 1 to {MAX_LIMIT}")
    if min_score is not None and (
        isinstance(min_score, bool) or not isinstance(min_score, (int, float)) or not 0 <= min_score <= 1
    ):
        raise SearchError("minScore must be a number from 0 to 1")
    return query.strip()
