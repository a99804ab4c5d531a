"""Fixtures of the MCP tests: two people, and an MCP agent with a token of each."""

import pytest

from tests.factories import UserFactory
from tests.kybernesis.mcp_client import agent_for


@pytest.fixture
def owner(db):
    return UserFactory()


@pytest.fixture
def stranger(db):
    return UserFactory()


@pytest.fixture
def agent(live_server, owner):
    yield from agent_for(live_server, owner)


@pytest.fixture
def stranger_agent(live_server, stranger):
    yield from agent_for(live_server, stranger)
