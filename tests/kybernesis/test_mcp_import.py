"""MCP's import_start and import_status: a server-side path is imported only inside the folders an admin
allowed, and each job keeps to its owner."""

from __future__ import annotations

import json

import pytest

from memories.models import ImportJob, Memory

pytestmark = pytest.mark.django_db(transaction=True)

CHAT = [
    {
        "id": "conv-mcp",
        "title": "Bees",
        "create_time": 1_700_000_000.0,
        "current_node": "a",
        "mapping": {
            "u": {
                "id": "u",
                "parent": None,
                "children": ["a"],
                "message": {
                    "id": "u",
                    "author": {"role": "user"},
                    "create_time": 1_700_000_001.0,
                    "content": {"content_type": "text", "parts": ["Do bees sleep?"]},
                },
            },
            "a": {
                "id": "a",
                "parent": "u",
                "children": [],
                "message": {
                    "id": "a",
                    "author": {"role": "assistant"},
                    "create_time": 1_700_000_002.0,
                    "content": {"content_type": "text", "parts": ["Yes, in short spells."]},
                },
            },
        },
    }
]


def test_import_start_is_refused_while_no_folder_is_allowed(agent, tmp_path, settings):
    settings.KYBERNESIS_IMPORT_ALLOWED_DIRS = []
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(CHAT))
    message = agent.error("import_start", {"path": str(path)})
    assert message.endswith(
        "path: importing from a server-side path is turned off; an admin can allow folders "
        "with KYBERNESIS_IMPORT_ALLOWED_DIRS, or upload the file instead"
    )
    assert not ImportJob.objects.exists()


def test_import_start_imports_an_allowed_path_and_import_status_follows_it(
    agent, stranger_agent, owner, tmp_path, settings
):
    allowed = tmp_path / "drop"
    allowed.mkdir()
    settings.KYBERNESIS_IMPORT_ALLOWED_DIRS = [str(allowed)]
    (allowed / "conversations.json").write_text(json.dumps(CHAT))
    (tmp_path / "private.json").write_text(json.dumps(CHAT))
    assert "outside the folders" in agent.error("import_start", {"path": str(allowed / ".." / "private.json")})

    started = agent.ok("import_start", {"path": str(allowed / "conversations.json")})
    assert started["kind"] == "chatgpt" and started["statusUrl"] == f"/api/v1/import/{started['id']}"
    status = agent.ok("import_status", {"job_id": started["id"]})
    assert (status["status"], status["created"]) == ("done", 2)
    assert Memory.objects.filter(owner=owner, source="chat").count() == 2
    assert f"no import {started['id']}" in stranger_agent.error("import_status", {"job_id": started["id"]})
