"""Shared fixtures: users, API clients with bearer tokens, the fake embedder for unit tests and the
one real embedding model per session for the tests that need it."""

from __future__ import annotations

import os

import pytest
from django.test import Client

from core.auth import api_token_create
from tests.factories import UserFactory

# tests/scale drives live servers that .ci/test-scale starts (`make test-scale`); elsewhere it is not collected.
collect_ignore = [] if os.environ.get("KYBERNESIS_TEST_SCALE") else ["scale"]


def pytest_sessionstart(session):
    """The data directory the embedded database lives in (settings themselves write nothing); the
    database itself starts on the first connection, so tests that need none never start it."""
    from kybernesis.boot import prepare

    prepare(start_database=False)


@pytest.fixture(scope="session", autouse=True)
def _empty_tables_by_delete():
    """Transactional tests empty every table after each test. PostgreSQL's TRUNCATE of 41 tables costs
    about a tenth of a second (it swaps every table's files), a DELETE of the few rows a test wrote a
    millisecond or two; the result is the same here (no sequences are reset, no trigger fires on a delete, and
    Django's foreign keys are deferred to the end of the flush's transaction).

    The content types, permissions and the site that migrate made are kept: emptied, they would be
    made again by the post_migrate signal the flush sends, about a third of a second per test. Kept,
    the receivers that would make them again are left out of that signal (finding them all would
    still cost tens of milliseconds a flush, most of it create_permissions asking about each app's
    models); the project's own receivers, such as the schedules, still run."""
    from django.apps import apps
    from django.contrib.auth.management import create_permissions
    from django.contrib.contenttypes.management import create_contenttypes
    from django.contrib.sites.management import create_default_site
    from django.core.management.commands.flush import Command as Flush
    from django.db.backends.postgresql.operations import DatabaseOperations
    from django.db.models.signals import post_migrate

    truncate = DatabaseOperations.sql_flush
    kept = {"django_content_type", "auth_permission", "django_site"}
    # How each app connected its receiver (django/contrib/*/apps.py), so it can be disconnected alike.
    recreate = [
        (create_permissions, {"dispatch_uid": "django.contrib.auth.management.create_permissions"}),
        (create_contenttypes, {}),
        (create_default_site, {"sender": apps.get_app_config("sites")}),
    ]
    flush_handle = Flush.handle

    def handle_keeping(self, **options):
        for receiver, how in recreate:
            assert post_migrate.disconnect(receiver, **how), f"{receiver.__name__} was not connected as expected"
        try:
            return flush_handle(self, **options)
        finally:
            for receiver, how in recreate:
                post_migrate.connect(receiver, **how)

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if reset_sequences or allow_cascade or not tables:
            return truncate(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        deletes = [
            f"{style.SQL_KEYWORD('DELETE FROM')} {style.SQL_FIELD(self.quote_name(t))};"
            for t in tables
            if t not in kept
        ]
        return ["SET CONSTRAINTS ALL DEFERRED;", *deletes]

    DatabaseOperations.sql_flush = sql_flush
    Flush.handle = handle_keeping
    yield
    DatabaseOperations.sql_flush = truncate
    Flush.handle = flush_handle


@pytest.fixture(scope="session", autouse=True)
def _live_server_answers_without_nagle_delay():
    """The live test server writes a response's headers and body in two sends. On a kept-alive
    connection (httpx in the MCP client, requests.Session, chromium) the second waits for the
    client's delayed ACK, about 40 ms, under Nagle's algorithm, which makes a kept-alive call slower
    than one on a new connection. TCP_NODELAY sends at once, as gunicorn does in production."""
    from django.core.servers.basehttp import WSGIRequestHandler

    WSGIRequestHandler.disable_nagle_algorithm = True
    yield
    WSGIRequestHandler.disable_nagle_algorithm = False


@pytest.fixture(scope="session", autouse=True)
def _commits_without_waiting_for_the_disk():
    """Test data need not survive a power cut: commits return before the WAL reaches the disk
    (synchronous_commit off, set on each new connection; the database stays consistent). Nothing
    connects here, so tests that need no database still start none."""
    from django.db.backends.signals import connection_created

    def relaxed(sender, connection, **kwargs):
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET synchronous_commit TO off")

    connection_created.connect(relaxed, dispatch_uid="tests-synchronous-commit-off")
    yield
    connection_created.disconnect(dispatch_uid="tests-synchronous-commit-off")


# Files (or single tests, by node id) that need the real sentence-transformers model: retrieval
# quality and benchmarks. Tests elsewhere say so with @pytest.mark.real_embedder; browser tests
# (e2e) always use it. Every other test embeds with tests.fakes.embedder, deterministic and instant.
REAL_EMBEDDER: set[str] = {
    "tests/bench/test_bench_retrieval.py",
    "tests/memories/test_embedding.py",
    "tests/bench/test_bench_embed.py",
    # Ranking by meaning: questions below the notes they ask about, the relevance floor.
    "tests/memories/test_search_relevance.py",
    "tests/bench/test_bench_personal.py",
    # Links of memories close in meaning (paraphrases share few words).
    "tests/graph/test_links.py::test_close_meaning_links_memories",
}
# Slow for other reasons: spaCy extraction (the pipeline loads once, in seconds), forked workers,
# extra PostgreSQL servers, benchmarks, very large inputs. `make test` runs them; the fast set does not.
SLOW: set[str] = {
    "tests/graph/test_entities.py",
    "tests/graph/test_pipeline.py",
    "tests/graph/test_services.py",
    "tests/bench/test_bench_graph.py",
    "tests/graph/test_api.py",
    "tests/graph/test_pages.py",
    "tests/graph/test_links.py",
    "tests/sleep/test_pipeline.py",
    "tests/bench/test_bench_sleep.py",
    "tests/kybernesis/test_embedded_db.py",
    "tests/kybernesis/test_settings.py::test_the_embedded_engine_starts_the_server_on_the_first_connection",
    "tests/kybernesis/test_settings.py::test_manage_py_starts_the_embedded_server_itself_and_stops_it_on_exit",
    "tests/bench/test_bench_search.py::test_bench_search_builds_its_corpus_and_reports_percentiles",
    "tests/connectors/test_notion.py::test_a_page_with_ten_thousand_blocks_is_skipped_with_the_reason",
    "tests/kybernesis/test_serve.py",
    "tests/bench/test_bench_load.py",
    "tests/bench/test_bench_portability.py",
    # Benchmarks, simulations and fresh processes: the slowest of the fast set on one run
    # (`--durations=30`), each several seconds of CPU.
    "tests/bench/test_bench_organise.py",
    "tests/kybernesis/test_mcp_transport.py::test_the_stdio_bridge_serves_the_same_tools_as_one_user",
    "tests/kybernesis/test_mcp_transport.py::test_the_stdio_bridge_refuses_an_unknown_user",
    "tests/bench/test_simulation.py::test_unused_memories_cool_down_and_manual_tags_keep_them_out_of_the_archive",
    "tests/bench/test_simulation.py::test_opened_memories_stay_hot_and_new_ones_arrive",
    "tests/bench/test_simulation.py::test_the_command_prints_weekly_json_and_draws_a_chart",
    "tests/bench/test_simulation.py::test_ninety_days_of_use_give_a_plausible_picture",
    # Sweeps of every hostile string through every operation or page form: `make test` and
    # `make fuzz` run them; the fast set keeps the focused cases (tests/core/test_hostile_input.py).
    "tests/kybernesis/test_api_fuzz.py",
    "tests/kybernesis/test_pages_hostile.py",
    "tests/core/test_torchless.py",  # a fresh interpreter that loads spaCy
    "tests/kybernesis/test_deploy_settings.py::test_check_deploy_is_clean_under_the_documented_production_settings",
    "tests/kybernesis/test_deploy_settings.py::test_without_https_check_deploy_names_what_is_missing",
    "tests/kybernesis/test_deploy_settings.py::test_https_turns_on_the_secure_set_and_the_proxy_header_is_opt_in",
    "tests/bench/test_stress_edits.py",
}


def pytest_collection_modifyitems(config, items):
    """`slow` marks what `make test-fast` (-m "not slow") leaves out: the real model, spaCy, browsers."""
    root = config.rootpath
    for item in items:
        path = item.path.relative_to(root).as_posix()
        node = f"{path}::{item.name.split('[')[0]}"
        if path in REAL_EMBEDDER or node in REAL_EMBEDDER or "e2e" in item.keywords:
            item.add_marker(pytest.mark.real_embedder)
        if path in SLOW or node in SLOW or "real_embedder" in item.keywords:
            item.add_marker(pytest.mark.slow)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # Spread over workers (`make test`), the slow tests go first: a worker that runs out steals the
        # second half of what another has left, so the run ends on short tests and not on one long one.
        items.sort(key=lambda item: "slow" not in item.keywords)


@pytest.fixture(scope="session")
def embedding_model():
    """The real model through the configured backend (the ONNX file is built once into the data
    directory), loaded once per session, and only when a test asks for it."""
    from memories import embedding

    embedding.embed_query("warm up")
    return embedding.backend()


@pytest.fixture(autouse=True)
def _embedder(request, monkeypatch):
    """The fake embedder unless the test is marked real_embedder (then the one real model)."""
    from memories import embedding

    if request.node.get_closest_marker("real_embedder"):
        request.getfixturevalue("embedding_model")
        return
    from tests.fakes.embedder import FAKE_MODEL

    # The fake stands in for the torch model, whichever backend the settings name.
    monkeypatch.setattr(embedding, "get_model", lambda: FAKE_MODEL)
    monkeypatch.setattr(embedding, "_load_backend", lambda: "torch")


@pytest.fixture(scope="session", autouse=True)
def _originals_dir(tmp_path_factory):
    """Originals the suite keeps go to a throwaway directory, not the data directory's store."""
    from django.conf import settings

    previous = settings.KYBERNESIS_ORIGINALS_DIR
    settings.KYBERNESIS_ORIGINALS_DIR = tmp_path_factory.mktemp("originals")
    yield
    settings.KYBERNESIS_ORIGINALS_DIR = previous


@pytest.fixture(autouse=True)
def _no_workers_left():
    """Stop any worker pool a test forked: its children would hold, among the descriptors they
    inherit, the pipe to the Playwright driver, and the session could not shut the driver down."""
    yield
    from core import workers

    workers.shutdown(wait=True)


@pytest.fixture
def user(db):
    return UserFactory()


@pytest.fixture
def other_user(db):
    return UserFactory()


class ApiClient(Client):
    """A test client that speaks JSON to /api/v1 with a bearer token."""

    def __init__(self, token: str | None = None, **kwargs):
        super().__init__(**kwargs)
        self.token = token

    def _auth(self, extra: dict) -> dict:
        if self.token and "HTTP_AUTHORIZATION" not in extra:
            extra["HTTP_AUTHORIZATION"] = f"Bearer {self.token}"
        return extra

    def get(self, path, data=None, **extra):
        return super().get(path, data, **self._auth(extra))

    def delete(self, path, data="", **extra):
        return super().delete(path, data, **self._auth(extra))

    def post(self, path, data=None, content_type="application/json", **extra):
        return super().post(path, data, content_type=content_type, **self._auth(extra))

    def patch(self, path, data=None, content_type="application/json", **extra):
        return super().patch(path, data, content_type=content_type, **self._auth(extra))


@pytest.fixture
def api(user):
    _, key = api_token_create(user=user)
    return ApiClient(token=key)


@pytest.fixture
def other_api(other_user):
    _, key = api_token_create(user=other_user)
    return ApiClient(token=key)


@pytest.fixture
def logged_in_client(user):
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def store_dir(settings, tmp_path):
    """Originals are kept, in a store of this test's own (the tests of originals use it for all)."""
    settings.KYBERNESIS_ORIGINALS_DIR = tmp_path / "originals"
    settings.KYBERNESIS_KEEP_ORIGINALS = True
    return settings.KYBERNESIS_ORIGINALS_DIR
