"""Every management command of the project loads and builds its argument parser.

Benchmarks are not run by the suite (they are slow by design), so a module that no longer imports
after a refactor would otherwise only be found by the next person who runs it."""

import pytest
from django.conf import settings
from django.core.management import get_commands, load_command_class

PROJECT_APPS = {"core", "memories", "graph", "connectors", "portability", "sleep", "kybernesis", "bench"}
COMMANDS = sorted((app, name) for name, app in get_commands().items() if app in PROJECT_APPS)


def test_the_project_has_its_commands():
    names = {name for _, name in COMMANDS}
    assert {"bench_search", "bench_portability", "export_memories", "sleep", "mcp_stdio"} <= names
    assert set(settings.INSTALLED_APPS) >= PROJECT_APPS


@pytest.mark.parametrize(("app", "name"), COMMANDS, ids=[name for _, name in COMMANDS])
def test_command_loads_and_parses_help(app, name):
    command = load_command_class(app, name)
    parser = command.create_parser("manage.py", name)
    assert parser.format_help().startswith("usage: manage.py " + name)
