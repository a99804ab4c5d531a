"""The MCP search and list tools' language argument."""

from __future__ import annotations

import pytest

from tests.factories import make_memory
from tests.languages import ENGLISH, GERMAN

pytestmark = pytest.mark.django_db(transaction=True)


def test_memory_search_and_memory_list_keep_one_language(agent, owner):
    make_memory(owner, GERMAN, title="Umzug")
    make_memory(owner, ENGLISH, title="Move")
    found = agent.ok("memory_search", {"query": "database server", "language": "de", "min_score": 0})
    assert {r["title"] for r in found["results"]} == {"Umzug"}
    by_filter = agent.ok("memory_search", {"query": "database server", "filters": {"language": "en"}, "min_score": 0})
    assert {r["title"] for r in by_filter["results"]} == {"Move"}
    listed = agent.ok("memory_list", {"language": "de"})
    assert [m["title"] for m in listed["items"]] == ["Umzug"] and listed["items"][0]["language"] == "de"


def test_an_unknown_language_is_a_tool_error_that_says_why(agent, owner):
    assert "not a language code" in agent.error("memory_search", {"query": "server", "language": "xx"})
    assert "two letters" in agent.error("memory_list", {"language": "deutsch"})
