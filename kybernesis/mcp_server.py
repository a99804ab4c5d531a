"""The MCP server: tools and the memory:// resource, thin doors over the memories, graph and sleep services.

Each tool runs as the user the transport authenticated (`acting_as`): the HTTP view at /mcp
(kybernesis.mcp_http) sets it from the bearer token, `manage.py mcp_stdio` from its --token or --user.
A token's scopes decide which tools it may call: a tool annotated readOnlyHint=True needs `read`,
every other tool (one nobody classified included) needs `write`; the refusal is the tool's error.
The tools are async only to fit the SDK; their bodies are plain Django code run by `_db`, which
under the WSGI view is the request's own thread (asgiref's thread-sensitive executor), so database
connections are opened and closed the way Django does for any request.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from typing import Annotated, Any, Literal

from asgiref.sync import sync_to_async
from django.db import transaction
from django.http import Http404
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from core.actors import Actor, ActorKind, acting
from core.language import parse_language_code
from core.models import TokenScope
from core.schemas import MAX_BIGINT, MAX_OFFSET
from core.text import CleanStr, clean_str
from graph import selectors as graph_selectors
from graph.schemas import EntityOut, RelationshipOut
from graph.selectors import GraphQueryError
from memories import history, search, selectors, services
from memories.schemas import (
    KindName,
    MemoryDetailOut,
    MemoryOut,
    SearchFiltersIn,
    SearchOut,
    SourceName,
    TierName,
    TrashedMemoryOut,
    VersionDetailOut,
    VersionOut,
)
from memories.search import SearchError
from memories.services import MemoryInputError
from portability import services as portability
from portability.schemas import ImportJobOut
from sleep import selectors as sleep_selectors
from sleep.models import SleepRun
from sleep.pipeline import sleep_run_request
from sleep.schemas import SleepRunOut


# The tools answer with the API's own Out schemas, so a tool's JSON is the API's JSON.
def _dump(schema, obj, **context) -> dict[str, Any]:
    return schema.model_validate(obj, context=context or None).model_dump(by_alias=True, mode="json")


def memory_out(memory, *, with_content: bool = False) -> dict[str, Any]:
    return _dump(MemoryDetailOut if with_content else MemoryOut, memory)


def entity_out(entity) -> dict[str, Any]:
    return _dump(EntityOut, entity)


def relationship_out(relationship) -> dict[str, Any]:
    return _dump(RelationshipOut, relationship)


def search_out(response) -> dict[str, Any]:
    return _dump(SearchOut, response)


def sleep_run_out(run, *, user) -> dict[str, Any]:
    # The schema shows a run's details to whom the API would: it reads the user from the request.
    return _dump(SleepRunOut, run, request=_Caller(user))


class _Caller:
    def __init__(self, user):
        self.auth = self.user = user


_user: contextvars.ContextVar = contextvars.ContextVar("kybernesis_mcp_user", default=None)
# The API token the transport authenticated, and whether to read it again before each call (a stdio
# session lasts for hours: a revoke or an expiry must take effect in it too). None: no token, as for
# `mcp_stdio --user`, which the person at the server's console started with their account's full rights.
_token: contextvars.ContextVar = contextvars.ContextVar("kybernesis_mcp_token", default=None)
_recheck: contextvars.ContextVar = contextvars.ContextVar("kybernesis_mcp_recheck", default=False)
# Why this request's arguments cannot be used, when the transport found out before the SDK parsed them
# (kybernesis.mcp_http: a lone surrogate, which the SDK's JSON parser refuses for the whole message).
_refusal: contextvars.ContextVar = contextvars.ContextVar("kybernesis_mcp_refusal", default=None)

# How the tools are classified for token scopes: the MCP annotations clients also read.
READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
OVERWRITES = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)
# A tool that writes only for some arguments: it needs `write` only when this says they write.
_WRITES_WHEN: dict[str, Any] = {"sleep_run": lambda arguments: arguments.get("action", "status") != "status"}


def tool_scope(tool, arguments: dict[str, Any]) -> str:
    """The scope calling `tool` with `arguments` needs: `read` for a tool annotated read-only, or one
    whose arguments say it only reads this time; `write` for everything else."""
    annotations = getattr(tool, "annotations", None)
    if annotations is not None and annotations.read_only_hint is True:
        return TokenScope.READ
    writes_when = _WRITES_WHEN.get(tool.name)
    if writes_when is not None and not writes_when(arguments):
        return TokenScope.READ
    return TokenScope.WRITE


def _token_refusal(scope: str, what: str) -> str | None:
    """Why the token of this call may not do `what`, or None when it may (or there is no token)."""
    token = _token.get()
    if token is None:
        return None
    if (reason := token.refusal()) is not None:
        return reason
    if not token.allows(scope):
        has = ", ".join(token.scopes) or "none"
        return f"this API token lacks the '{scope}' scope that {what} needs (its scopes: {has})"
    return None


async def _token_refreshed() -> None:
    token = _token.get()
    if token is not None and _recheck.get():
        await sync_to_async(token.refresh_from_db, thread_sensitive=True)(fields=["scopes", "expires_at", "revoked_at"])


class ScopedMCPServer(MCPServer):
    """The SDK's server, with each tool call and resource read checked against the token's scopes first."""

    async def call_tool(self, name, arguments, context=None):
        tool = self._tool_manager.get_tool(name)
        if tool is not None:  # an unknown tool: the SDK's own error says so
            await _token_refreshed()
            if (reason := _token_refusal(tool_scope(tool, arguments or {}), f"the tool {name}")) is not None:
                raise ToolError(reason)
        return await super().call_tool(name, arguments, context)

    async def read_resource(self, uri, context=None):
        await _token_refreshed()
        if (reason := _token_refusal(TokenScope.READ, "reading a resource")) is not None:
            raise ResourceError(reason)
        return await super().read_resource(uri, context)


server = ScopedMCPServer(
    name="kybernesis",
    title="Kybernesis memory",
    version="1",
    log_level="WARNING",
    instructions=(
        "Long-term memory. Search before answering from memory (memory_search), store what is worth "
        "keeping (memory_add), and read a memory in full with memory_get or the memory://{id} resource."
    ),
)


@contextlib.contextmanager
def acting_as(user, token=None, *, recheck: bool = False):
    """Run the tools inside this block as `user`, through `token` (an ApiToken, whose scopes then apply
    and who is then the actor of every change), or with the account's full rights when there is none.
    With `recheck` the token is read again before each call, so a revoke ends a long session too."""
    if token is not None:
        actor = Actor.api_token(token, via_mcp=True)
    else:
        actor = Actor(ActorKind.MCP, label=f"MCP as {user.get_username()}", user_id=user.pk)
    marks = (_user.set(user), _token.set(token), _recheck.set(recheck))
    try:
        with acting(actor):
            yield
    finally:
        for var, mark in zip((_user, _token, _recheck), marks, strict=True):
            var.reset(mark)


@contextlib.contextmanager
def arguments_refused(message: str | None):
    """Inside this block every tool answers `message` as its error: the argument it names cannot be
    stored, whatever the tool would have done with it."""
    token = _refusal.set(message)
    try:
        yield
    finally:
        _refusal.reset(token)


def _owner():
    user = _user.get()
    if user is None:  # a transport that did not authenticate: never answer for nobody
        raise ToolError("not authenticated")
    return user


def _db(fn):
    """Run a synchronous body with Django's rules for async callers, and turn the errors a front door
    answers with 4xx into tool errors that name the argument, as the API's 422 bodies do."""

    @functools.wraps(fn)
    def guarded(*args, **kwargs):
        if refusal := _refusal.get():
            raise ToolError(refusal)
        try:
            return fn(*args, **kwargs)
        except MemoryInputError as exc:
            raise ToolError(exc.named) from None
        except (SearchError, GraphQueryError) as exc:
            raise ToolError(str(exc)) from None

    return sync_to_async(guarded, thread_sensitive=True)


def _memory(user, memory_id: int):
    try:
        return selectors.memory_get(user=user, memory_id=memory_id)
    except Http404:
        # Another user's memory reads exactly like one that does not exist.
        raise ToolError(f"memory_id: no memory {memory_id}") from None


MemoryId = Annotated[int, Field(description="The memory's id, as memory_add, memory_list and memory_search give it.")]
Tags = Annotated[list[str] | None, Field(description="Manual tags; trimmed, lowercased, spaces become hyphens.")]


# --- Memories ------------------------------------------------------------------------------------


@server.tool(
    description="Store a new memory. It is chunked and embedded at once; tags and a tier follow.", annotations=WRITES
)
async def memory_add(
    content: Annotated[str, Field(description="The text to remember.")],
    title: Annotated[str | None, Field(description="Empty or missing: the first line of the content.")] = None,
    tags: Tags = None,
    priority: Annotated[float | None, Field(description="0 to 1; omitted means the default.")] = None,
    metadata: Annotated[dict[str, Any] | None, Field(description="Any JSON object kept with the memory.")] = None,
    source: SourceName = "upload",
    kind: Annotated[
        KindName | None,
        Field(
            description="For a chat message (source 'chat'): 'question' or 'note'. Omitted: the question rule "
            "decides whether it asks something."
        ),
    ] = None,
) -> dict[str, Any]:
    def body():
        memory = services.memory_create(
            owner=_owner(),
            title=title,
            content=content,
            source=source,
            priority=priority,
            metadata=metadata or {},
            manual_tags=tags or [],
            kind=kind,
        )
        return memory_out(memory, with_content=True)

    return await _db(body)()


@server.tool(
    description=(
        "Hybrid search over your memories. One result per memory by default: its best passage with a snippet, "
        "hybridScore = 0.7·vectorScore + 0.3·metadataScore, passageCount and up to two morePassages of it. filters takes the API's keys: tags, tagsMode, source, tier, tiers, minPriority, "
        "maxPriority, createdAfter, createdBefore, updatedAfter, updatedBefore, titleContains, pinned, language. "
        "language (also an argument of its own) keeps memories written in one language: an ISO 639-1 code, or "
        "'und' for those whose language is unknown."
    ),
    annotations=READS,
)
async def memory_search(
    query: Annotated[str, Field(description="What to look for, in words.")],
    limit: Annotated[int, Field(description="How many results, 1 to 100.")] = 10,
    filters: SearchFiltersIn | None = None,
    language: Annotated[
        str | None,
        Field(description="An ISO 639-1 code (en, de, ja...): only memories written in it; 'und': unknown language."),
    ] = None,
    group_by: Annotated[
        Literal["memory", "chunk"],
        Field(
            description="'memory' (default): one result per memory, its best passage and up to two more; "
            "'chunk': every matching passage is a result."
        ),
    ] = "memory",
    min_score: Annotated[
        float | None,
        Field(
            ge=0,
            le=1,
            description=(
                "A floor on hybridScore; omitted: the server's good-match rule (close in meaning, or every "
                "word found), 0: every candidate."
            ),
        ),
    ] = None,
) -> dict[str, Any]:
    def body():
        given = filters or SearchFiltersIn()
        if language is not None:
            given = given.model_copy(update={"language": language})
        response = search.hybrid_search(
            _owner().pk,
            query,
            limit=limit,
            filters=given.as_search_filters(),
            group_by=group_by,
            min_score=min_score,
        )
        return search_out(response)

    return await _db(body)()


@server.tool(
    description="Read one memory in full, with its content and tier history. Counts as an access.", annotations=READS
)
async def memory_get(memory_id: MemoryId) -> dict[str, Any]:
    def body():
        memory = _memory(_owner(), memory_id)
        return memory_out(services.memory_open(memory=memory), with_content=True)

    return await _db(body)()


@server.tool(
    description=(
        "A memory's version history (read only). Without `version`: its kept versions, newest first, each "
        "with who made it and which fields it changed. With `version`: that version in full, with a line "
        "and word diff from the version before (or from `diff_from`)."
    ),
    annotations=READS,
)
async def memory_versions(
    memory_id: MemoryId,
    version: Annotated[int | None, Field(description="A version number, from 1.")] = None,
    diff_from: Annotated[int | None, Field(description="Count the changes from this version.")] = None,
    limit: Annotated[int, Field(ge=1, le=200)] = 20,
    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET)] = 0,
) -> dict[str, Any]:
    def body():
        user = _owner()
        memory = _memory(user, memory_id)
        try:
            if version is not None:
                detail = history.memory_version_detail(
                    user=user, memory_id=memory.pk, number=version, diff_from=diff_from
                )
                return _dump(VersionDetailOut, detail)
            versions = history.memory_version_list(user=user, memory_id=memory.pk)
            page = versions[offset : offset + limit]
            return {
                "items": [_dump(VersionOut, row) for row in page],
                "count": versions.count(),
                "limit": limit,
                "offset": offset,
            }
        except Http404 as exc:
            raise ToolError(f"version: {exc}") from None

    return await _db(body)()


@server.tool(
    description=(
        "Your memories, newest first; optionally only one tier, source or language (an ISO 639-1 code, 'und' "
        "for unknown), or those carrying every tag given."
    ),
    annotations=READS,
)
async def memory_list(
    tier: TierName | None = None,
    tags: Annotated[list[CleanStr] | None, Field(description="A memory must carry every tag given.")] = None,
    source: SourceName | None = None,
    limit: Annotated[int, Field(ge=1, le=500)] = 20,
    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET)] = 0,
    language: Annotated[str | None, Field(description="An ISO 639-1 code, or 'und' for unknown.")] = None,
) -> dict[str, Any]:
    def body():
        try:
            wanted = parse_language_code(language)
        except ValueError as exc:
            raise ToolError(f"language: {exc}") from None
        qs = selectors.memory_list(user=_owner(), tier=tier, source=source, tags=tags or [], language=wanted)
        page = list(qs[offset : offset + limit])
        return {"items": [memory_out(m) for m in page], "count": qs.count(), "limit": limit, "offset": offset}

    return await _db(body)()


@server.tool(
    description=(
        "Change a memory: only the arguments given change. New content is re-chunked and re-embedded; "
        "tags replaces the manual tags."
    ),
    annotations=OVERWRITES,
)
async def memory_update(
    memory_id: MemoryId,
    title: str | None = None,
    content: str | None = None,
    tags: Tags = None,
    source: SourceName | None = None,
    priority: Annotated[float | None, Field(description="0 to 1.")] = None,
    metadata: dict[str, Any] | None = None,
    kind: Annotated[
        Literal["question", "note", "auto"] | None,
        Field(
            description="A chat message's kind: 'question', 'note' (kept when the text changes later), or "
            "'auto' to let the question rule decide again."
        ),
    ] = None,
) -> dict[str, Any]:
    given = {
        name: value
        for name, value in (
            ("title", title),
            ("content", content),
            ("manual_tags", tags),
            ("source", source),
            ("priority", priority),
            ("metadata", metadata),
            ("kind", kind),
        )
        if value is not None
    }
    if given.get("kind") == "auto":
        given["kind"] = None

    def body():
        memory = _memory(_owner(), memory_id)
        if not given:
            raise ToolError("give at least one of title, content, tags, source, priority, metadata, kind")
        return memory_out(services.memory_update(memory=memory, **given), with_content=True)

    return await _db(body)()


@server.tool(
    description=(
        "Delete a memory: it moves to the trash, leaves search and lists at once, and keeps everything it had. "
        "The person restores it from the Trash page (or the API) until it is purged after KYBERNESIS_TRASH_DAYS."
    ),
    annotations=WRITES,
)
async def memory_delete(memory_id: MemoryId) -> dict[str, Any]:
    def body():
        services.memory_delete(memory=_memory(_owner(), memory_id))
        return {"deleted": memory_id, "trashed": True}

    return await _db(body)()


@server.tool(
    description="The memories in your trash, most recently deleted first, with when each is purged.",
    annotations=READS,
)
async def trash_list(
    limit: Annotated[int, Field(ge=1, le=500)] = 20,
    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET)] = 0,
) -> dict[str, Any]:
    def body():
        qs = selectors.trash_list(user=_owner())
        page = list(qs[offset : offset + limit])
        return {
            "items": [_dump(TrashedMemoryOut, m) for m in page],
            "count": qs.count(),
            "limit": limit,
            "offset": offset,
        }

    return await _db(body)()


@server.tool(
    description="Add and/or remove manual tags. Auto tags belong to the system and cannot be removed.",
    annotations=WRITES,
)
async def memory_tag(
    memory_id: MemoryId,
    add: Annotated[list[CleanStr], Field(description="Manual tags to add.")] = [],  # noqa: B006 (schema default)
    remove: Annotated[list[CleanStr], Field(description="Manual tags to remove.")] = [],  # noqa: B006
) -> dict[str, Any]:
    def body():
        memory = _memory(_owner(), memory_id)
        if not add and not remove:
            raise ToolError("give tags to add or to remove")
        with transaction.atomic():  # a tag that cannot be removed leaves the added ones unadded too
            if add:
                memory = services.memory_tags_add(memory=memory, tags=add)
            for tag in remove:
                memory = services.memory_tag_remove(memory=memory, tag=tag)
        return memory_out(memory, with_content=True)

    return await _db(body)()


@server.tool(
    description="Pin a memory (it moves to hot at once and stays there) or unpin it (pinned=false).",
    annotations=ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    ),
)
async def memory_pin(memory_id: MemoryId, pinned: bool = True) -> dict[str, Any]:
    def body():
        return memory_out(services.memory_pin(memory=_memory(_owner(), memory_id), pinned=pinned), with_content=True)

    return await _db(body)()


# --- Graph ---------------------------------------------------------------------------------------


@server.tool(
    description="Find entities (people, organisations, places, ...) by name or alias, most salient first.",
    annotations=READS,
)
async def entity_search(
    query: Annotated[CleanStr, Field(description="Part of a name or alias; empty lists all.", max_length=200)] = "",
    types: Annotated[list[CleanStr], Field(description="Only these entity types, e.g. person, org.")] = [],  # noqa: B006
    limit: Annotated[int, Field(ge=1, le=200)] = 20,
    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET)] = 0,
) -> dict[str, Any]:
    def body():
        qs = graph_selectors.entity_list(user=_owner(), q=query, types=graph_selectors.entity_types_clean(types))
        page = list(qs[offset : offset + limit])
        return {"items": [entity_out(e) for e in page], "count": qs.count(), "limit": limit, "offset": offset}

    return await _db(body)()


@server.tool(
    description="An entity's relationships and the memories that mention it. Give entity_id or name.",
    annotations=READS,
)
async def entity_neighbors(
    entity_id: Annotated[int | None, Field(description="The entity's id, from entity_search.")] = None,
    name: Annotated[clean_str(200) | None, Field(description="A name or alias; the best match is used.")] = None,
) -> dict[str, Any]:
    def body():
        user = _owner()
        if entity_id is not None:
            try:
                entity = graph_selectors.entity_get(user=user, entity_id=entity_id)
            except Http404:
                raise ToolError(f"entity_id: no entity {entity_id}") from None
        elif name and name.strip():
            entity = graph_selectors.entity_find(user=user, q=name)
            if entity is None:
                raise ToolError(f"name: no entity matches {name!r}")
        else:
            raise ToolError("entity_id or name: give one of them")
        memories = [
            {
                "memoryId": item["memory"].pk,
                "title": item["memory"].title,
                "mentions": item["mentions"],
                "snippet": "".join(item["snippet"].values()) if item["snippet"] else None,
            }
            for item in graph_selectors.entity_memories(entity=entity)
        ]
        return {
            **entity_out(entity),
            "memories": memories,
            "relationships": [relationship_out(r) for r in graph_selectors.entity_relationships(entity=entity)],
        }

    return await _db(body)()


# --- Sleep ---------------------------------------------------------------------------------------


@server.tool(
    description=(
        "The sleep agent tags, links, summarises and re-tiers your memories. action='start' starts a cycle "
        "(or returns the one already running); action='status' reports the latest run (a read)."
    ),
    annotations=WRITES,  # only action='start' writes (_WRITES_WHEN)
)
async def sleep_run(action: Literal["start", "status"] = "status") -> dict[str, Any]:
    def body():
        user = _owner()
        if action == "start":
            run, created = sleep_run_request(trigger=SleepRun.Trigger.MANUAL, owner=user)
            run = sleep_selectors.sleep_run_get(user=user, run_id=run.pk)
            return {"started": created, "run": sleep_run_out(run, user=user)}
        run = sleep_selectors.sleep_run_list(user=user).first()
        return {"started": False, "run": sleep_run_out(run, user=user) if run else None}

    return await _db(body)()


# --- Import --------------------------------------------------------------------------------------


def import_job_out(job) -> dict[str, Any]:
    return _dump(ImportJobOut, job)


@server.tool(
    description=(
        "Import a file or folder that is on the server: a ChatGPT or Claude export (its zip or "
        "conversations.json), mail, a Kybernesis export, or Markdown notes, told apart by their content. "
        "Only paths inside the folders an admin allowed (KYBERNESIS_IMPORT_ALLOWED_DIRS) are read; the "
        "import runs in the background: follow it with import_status."
    ),
    annotations=WRITES,
)
async def import_start(
    path: Annotated[str, Field(description="The absolute path of the file or folder on the server.", max_length=4096)],
) -> dict[str, Any]:
    def body():
        return import_job_out(portability.import_job_create_from_path(owner=_owner(), path=path))

    return await _db(body)()


@server.tool(
    description="Progress and report of an import: counts, the items that failed and why, and notices.",
    annotations=READS,
)
async def import_status(
    job_id: Annotated[int, Field(description="The job's id, as import_start gave it.", ge=1, le=MAX_BIGINT)],
) -> dict[str, Any]:
    def body():
        try:
            job = selectors.import_job_get(user=_owner(), job_id=job_id)
        except Http404:
            raise ToolError(f"job_id: no import {job_id}") from None
        return import_job_out(job)

    return await _db(body)()


# --- Resources -----------------------------------------------------------------------------------


@server.resource(
    "memory://{memory_id}",
    name="memory",
    title="A memory's content",
    mime_type="text/markdown",
    description="The full text of one of your memories, titled. Reading it counts as an access.",
)
async def memory_resource(memory_id: str) -> str:
    # The id comes from the URI as text: read here, so that memory://abc is an error that says why
    # (the SDK's own conversion answers "Error creating resource from template memory://abc").
    if not memory_id.isascii() or not memory_id.isdigit():
        raise ResourceError(f"memory://{memory_id[:40]}: a memory's id is a whole number, as memory_list gives it")
    if len(memory_id) > len(str(MAX_BIGINT)):  # no id is that long (and int() stops at 4,300 digits)
        raise ResourceError(f"no memory {memory_id[:40]}…")

    def body():
        try:
            memory = selectors.memory_get(user=_owner(), memory_id=int(memory_id))
        except Http404:
            raise ResourceError(f"no memory {memory_id}") from None
        except ToolError as exc:
            raise ResourceError(str(exc)) from None
        services.memory_open(memory=memory)
        return f"# {memory.title}\n\n{memory.content}"

    return await sync_to_async(body, thread_sensitive=True)()
