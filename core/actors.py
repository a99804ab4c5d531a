"""Who is acting: the person, API token, MCP client, sleep agent, connector, import or admin behind a change.

Every door that changes memories says who it acts for, once, where it starts: the request middleware for
pages (a person), bearer authentication for the API (a token), the MCP transport, the sleep agent, a
connector sync, an import run, Django admin. The services below read `current_actor()` when they
record a version or an activity entry, so no service takes an `actor=` argument and no door can forget
to pass one. Outside any door (a shell, a test) the actor is `SYSTEM`.

The value lives in a context variable, so it follows a request through `sync_to_async` and back, and a
worker thread that starts its own `acting()` block does not see another thread's actor.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar, Token
from dataclasses import dataclass


class ActorKind:
    PERSON = "person"
    TOKEN = "token"
    MCP = "mcp"
    SLEEP = "sleep"
    CONNECTOR = "connector"
    IMPORT = "import"
    ADMIN = "admin"
    SYSTEM = "system"

    ALL = (PERSON, TOKEN, MCP, SLEEP, CONNECTOR, IMPORT, ADMIN, SYSTEM)


@dataclass(frozen=True)
class Actor:
    """`kind` is one of ActorKind; `label` is what a person reads ("API token 'laptop'", "Google Drive");
    `user_id` is the account member who acted, when one did; `token_id` the ApiToken used, if any."""

    kind: str
    label: str = ""
    user_id: int | None = None
    token_id: int | None = None

    @property
    def display(self) -> str:
        return self.label or self.kind

    @classmethod
    def person(cls, user) -> Actor:
        return cls(ActorKind.PERSON, label=user.get_username(), user_id=user.pk)

    @classmethod
    def admin(cls, user) -> Actor:
        return cls(ActorKind.ADMIN, label=f"admin {user.get_username()}", user_id=user.pk)

    @classmethod
    def api_token(cls, token, *, via_mcp: bool = False) -> Actor:
        name = token.name or token.prefix
        if via_mcp:
            return cls(ActorKind.MCP, label=f"MCP with token '{name}'", user_id=token.user_id, token_id=token.pk)
        return cls(ActorKind.TOKEN, label=f"API token '{name}'", user_id=token.user_id, token_id=token.pk)

    @classmethod
    def connector(cls, name: str) -> Actor:
        return cls(ActorKind.CONNECTOR, label=name)

    @classmethod
    def importer(cls, what: str = "import") -> Actor:
        return cls(ActorKind.IMPORT, label=what)

    def as_dict(self) -> dict:
        return {"kind": self.kind, "label": self.display, "userId": self.user_id, "tokenId": self.token_id}


SYSTEM = Actor(ActorKind.SYSTEM, label="system")
SLEEP_AGENT = Actor(ActorKind.SLEEP, label="sleep agent")

# Either an Actor, or a callable that makes one on first use (a page request's person is only looked up
# when something is written, so reads never touch the session for this).
_current: ContextVar[Actor | Callable[[], Actor] | None] = ContextVar("kybernesis_actor", default=None)


def current_actor() -> Actor:
    value = _current.get()
    if value is None:
        return SYSTEM
    if callable(value):
        value = value()
        _current.set(value)
    return value


def set_actor(actor: Actor | Callable[[], Actor]) -> Token:
    """Make `actor` current until the returned token is reset (`reset_actor`): for a door whose end is
    not a `with` block, such as a request that authentication identifies half-way."""
    return _current.set(actor)


def reset_actor(token: Token) -> None:
    _current.reset(token)


@contextlib.contextmanager
def acting(actor: Actor | Callable[[], Actor]) -> Iterator[None]:
    token = _current.set(actor)
    try:
        yield
    finally:
        _current.reset(token)


class ActorMiddleware:
    """A page request acts for its signed-in person (Django admin pages: as an admin). The API's bearer
    authentication replaces this with the token (core.auth). The actor is reset when the response is
    made, so nothing carries over to the next request served by the same thread."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        token = _current.set(lambda: _request_actor(request))
        try:
            return self.get_response(request)
        finally:
            _current.reset(token)


def _request_actor(request) -> Actor:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return SYSTEM
    if request.path_info.startswith("/admin/"):
        return Actor.admin(user)
    return Actor.person(user)
