"""The squashed migrations build the same schema as the chains they replace, and upgrade databases
migrated by those chains (fully or part way) to that schema.

Each database is migrated by `manage.py migrate` in its own process against a database of its own
in the test cluster; the old chains are the same migration files without the squashes, loaded
through MIGRATION_MODULES from a copy.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
SQUASHED_APPS = ("memories", "graph")

pytestmark = pytest.mark.slow

# Everything a migration can create in the public schema, one row per object, in a stable order.
CATALOG = {
    "extensions": "SELECT extname, extversion FROM pg_extension ORDER BY 1",
    "tables": """SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = 'public' AND c.relkind IN ('r', 'v', 'm', 'S', 'p') ORDER BY 1""",
    # Columns in table order (by rank: a column dropped by the old chain leaves a gap in attnum).
    "columns": """SELECT c.relname, rank() OVER (PARTITION BY c.oid ORDER BY a.attnum), a.attname,
                         format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attgenerated,
                         pg_get_expr(d.adbin, d.adrelid)
                  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
                  JOIN pg_namespace n ON n.oid = c.relnamespace
                  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                  WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
                  ORDER BY 1, 2""",
    # indexdef carries the method (hnsw, gin, btree), operator classes, INCLUDE and WHERE.
    "indexes": "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1, 2",
    "constraints": """SELECT c.relname, k.conname, k.contype, pg_get_constraintdef(k.oid), k.condeferrable,
                             k.condeferred
                      FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
                      JOIN pg_namespace n ON n.oid = c.relnamespace
                      WHERE n.nspname = 'public' ORDER BY 1, 2""",
    "functions": """SELECT p.proname, pg_get_function_identity_arguments(p.oid), md5(pg_get_functiondef(p.oid))
                    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                    WHERE n.nspname = 'public' AND p.prokind IN ('f', 'p') ORDER BY 1, 2""",
    "triggers": """SELECT c.relname, t.tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t
                   JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                   WHERE n.nspname = 'public' AND NOT t.tgisinternal ORDER BY 1, 2""",
}


def schema(params: dict, dbname: str) -> dict[str, list[tuple]]:
    with psycopg.connect(**{**params, "dbname": dbname}) as conn:
        return {part: conn.execute(sql).fetchall() for part, sql in CATALOG.items()}


def applied(params: dict, dbname: str) -> set[tuple[str, str]]:
    with psycopg.connect(**{**params, "dbname": dbname}) as conn:
        return set(conn.execute("SELECT app, name FROM django_migrations").fetchall())


@pytest.fixture(scope="module")
def cluster(django_db_setup, django_db_blocker):
    """Connection parameters of the test cluster, and a maker of empty databases in it (dropped at the end)."""
    # The parameters only: a connection opened here outlived the tests that followed and kept the
    # test database from being dropped at the end of the session.
    with django_db_blocker.unblock():
        params = {
            k: v for k, v in connection.get_connection_params().items() if k in ("user", "password", "host", "port")
        }
    made: list[str] = []

    def make() -> str:
        name = f"kyb_migrations_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(**params, dbname="postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        made.append(name)
        return name

    yield params, make
    with psycopg.connect(**params, dbname="postgres", autocommit=True) as conn:
        for name in made:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def database_url(params: dict, dbname: str) -> str:
    auth = quote(params.get("user") or "")
    if params.get("password"):
        auth += ":" + quote(params["password"])
    host, port = params.get("host") or "", params.get("port") or ""
    if host.startswith("/"):
        netloc, query = f"{auth}@" + (f":{port}" if port else ""), f"?host={quote(host, safe='')}"
    else:
        netloc, query = f"{auth}@{host}" + (f":{port}" if port else ""), ""
    return f"postgresql://{netloc}/{dbname}{query}"


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    """Settings modules for three migration trees: the old chains (no squashes), this tree, and this
    tree plus a throwaway memories migration that depends on 0015 (as the first one after the squash did)."""
    base = tmp_path_factory.mktemp("trees")
    package = base / "migration_trees"
    package.mkdir()
    (package / "__init__.py").write_text("")
    modules = {"old": {}, "next": {}}
    for app in SQUASHED_APPS:
        source = ROOT / app / "migrations"
        old = package / f"old_{app}"
        shutil.copytree(source, old, ignore=shutil.ignore_patterns("__pycache__", "*_squashed_*"))
        modules["old"][app] = f"migration_trees.old_{app}"
    shutil.copytree(
        ROOT / "memories" / "migrations", package / "next_memories", ignore=shutil.ignore_patterns("__pycache__")
    )
    # It names 0015 (a replaced node) and, to stay the one leaf, the newest real migration too.
    newest = max(p.stem for p in (ROOT / "memories" / "migrations").glob("[0-9][0-9][0-9][0-9]_*.py"))
    dependencies = sorted({"0015_reset_accesses_counted_by_search", newest})
    (package / "next_memories" / "9999_throwaway.py").write_text(
        "from django.db import migrations, models\n\n\n"
        "class Migration(migrations.Migration):\n"
        f"    dependencies = {[('memories', name) for name in dependencies]!r}\n"
        "    operations = [\n"
        '        migrations.AddField("memory", "throwaway", models.IntegerField(null=True)),\n'
        "    ]\n"
    )
    modules["next"]["memories"] = "migration_trees.next_memories"
    settings = {"new": "kybernesis.settings_test"}
    for tree, mapping in modules.items():
        (base / f"settings_{tree}.py").write_text(
            f"from kybernesis.settings_test import *  # noqa\nMIGRATION_MODULES = {mapping!r}\n"
        )
        settings[tree] = f"settings_{tree}"
    return base, settings


@pytest.fixture(scope="module")
def migrate(cluster, trees):
    params, _ = cluster
    base, settings = trees

    def run(tree: str, dbname: str, *targets: str) -> str:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", "/tmp"),
            "PYTHONPATH": f"{base}{os.pathsep}{ROOT}",
            "DJANGO_SETTINGS_MODULE": settings[tree],
            "DATABASE_URL": database_url(params, dbname),
            "KYBERNESIS_DATA_DIR": str(base / "data"),
        }
        for name in ("KYBERNESIS_EMBEDDING_CACHE_DIR",):
            if name in os.environ:
                env[name] = os.environ[name]
        done = subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", *targets],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
        return done.stdout

    return run


@pytest.fixture(scope="module")
def old_schema(cluster, migrate):
    params, make = cluster
    db = make()
    migrate("old", db)
    return db, schema(params, db)


@pytest.fixture(scope="module")
def squashed_schema(cluster, migrate):
    params, make = cluster
    db = make()
    output = migrate("new", db)
    return db, schema(params, db), output


def test_a_fresh_database_is_built_by_the_squashes(cluster, squashed_schema):
    params, _ = cluster
    db, _, output = squashed_schema
    names = applied(params, db)
    assert ("memories", "0001_squashed_0009_graph_extracted_hash") in names
    assert ("memories", "0010_squashed_0015_reset_accesses_counted_by_search") in names
    assert ("graph", "0001_squashed_0006_memorylink_evidence") in names
    assert "0003_lexical_index" not in output and "0004_memory_extraction" not in output


@pytest.mark.parametrize("part", sorted(CATALOG))
def test_the_squashes_build_the_schema_of_the_old_chains(old_schema, squashed_schema, part):
    old, new = old_schema[1][part], squashed_schema[1][part]
    if part != "triggers":  # the project defines none; the part is there to catch one added by RunSQL
        assert old, f"no {part} found: the catalog query is wrong"
    assert new == old


def test_the_partial_hnsw_and_covering_indexes_survive_the_squash(squashed_schema):
    indexes = {name: definition for _, name, definition in squashed_schema[1]["indexes"]}
    assert "USING hnsw (embedding vector_cosine_ops)" in indexes["memorychunk_hnsw_active"]
    assert "WHERE" in indexes["memorychunk_hnsw_active"] and "WHERE" in indexes["memorychunk_hnsw_archive"]
    assert "INCLUDE (chunk_id)" in indexes["chunkterm_owner_lexeme_impact"]
    assert "WHERE (NOT (aliases = '{}'" in indexes["entity_owner_aliased"]
    assert "memorychunk_embedding_hnsw" not in indexes and "entity_aliases_gin" not in indexes
    assert "memorychunk_search_gin" not in indexes  # dropped by memories 0021: no query read it


def test_a_database_migrated_by_the_old_chains_is_up_to_date(cluster, migrate, old_schema, squashed_schema):
    params, _ = cluster
    db, before = old_schema
    output = migrate("new", db)
    assert "No migrations to apply" in output
    assert schema(params, db) == before == squashed_schema[1]


OLDER_POINTS = {
    # Where a release of that time stood: memories 0009 came with graph 0003, before core existed.
    "memories 0009 with graph 0003": [
        ("memories", "0009_graph_extracted_hash"),
        ("graph", "0003_entity_aliased_partial_index"),
    ],
    # graph 0004 runs before memories 0010 and copies the extraction hashes on the way.
    "memories 0012 with graph 0004": [("memories", "0012_import_jobs"), ("graph", "0004_memory_extraction")],
    # Only memories, part way through the first squash.
    "memories 0005 alone": [("memories", "0005_bm25_parameters")],
}


@pytest.mark.parametrize("point", sorted(OLDER_POINTS))
def test_a_database_at_an_older_point_upgrades_to_the_same_schema(cluster, migrate, squashed_schema, point):
    params, make = cluster
    db = make()
    migrate("old", db, "django_q")  # the schedules set up after every migrate live there
    for app, name in OLDER_POINTS[point]:
        migrate("old", db, app, name)
    with psycopg.connect(**params, dbname=db) as conn:
        # A user with a memory whose graph was extracted, so the upgrade has rows to carry.
        user_id = conn.execute(
            "INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email, is_staff,"
            " is_active, date_joined) VALUES ('', false, 'old', '', '', '', false, true, now()) RETURNING id"
        ).fetchone()[0]
        columns = {
            row[0]
            for row in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'memories_memory'"
            )
        }
        values = {
            "title": "'Kept'",
            "content": "'kept content'",
            "summary": "''",
            "source": "'upload'",
            "metadata": "'{}'",
            "priority": "0.5",
            "tier": "'hot'",
            "pinned": "false",
            "decay_score": "0",
            "access_count": "3",
            "last_accessed_at": "now()",
            "created_at": "now()",
            "updated_at": "now()",
            "content_hash": "'h'",
            "manual_tags": "'{}'",
            "auto_tags": "'[]'",
            "tags": "'{}'",
            "owner_id": str(user_id),
            "auto_tagged_hash": "''",
            "tier_reason": "''",
            "preview": "''",
            "summarized_hash": "''",
            "graph_extracted_hash": "'h'",
        }
        chosen = [name for name in values if name in columns]
        conn.execute(
            f"INSERT INTO memories_memory ({', '.join(chosen)}) VALUES ({', '.join(values[c] for c in chosen)})"
        )
    migrate("new", db)
    assert schema(params, db) == squashed_schema[1]
    with psycopg.connect(**params, dbname=db) as conn:
        assert conn.execute("SELECT title, access_count FROM memories_memory").fetchall() == [("Kept", 0)]
        if ("graph", "0003_entity_aliased_partial_index") in OLDER_POINTS[point]:
            # The hash reached graph before memories 0010 dropped the column.
            assert conn.execute("SELECT content_hash FROM graph_memoryextraction").fetchall() == [("h",)]


@pytest.mark.parametrize("start", ["fresh", "memories 0012"])
def test_a_new_migration_on_0015_follows_the_squash(cluster, migrate, start):
    """Django points a dependency on a replaced migration at the squash that replaces it (or keeps it
    on the old file while the squash cannot be used)."""
    params, make = cluster
    db = make()
    if start != "fresh":
        migrate("old", db, "django_q")
        migrate("old", db, "memories", "0012_import_jobs")
    output = migrate("next", db)
    assert "memories.9999_throwaway... OK" in output
    with psycopg.connect(**params, dbname=db) as conn:
        columns = {
            row[0]
            for row in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'memories_memory'"
            )
        }
    assert "throwaway" in columns
    squash_used = ("memories", "0010_squashed_0015_reset_accesses_counted_by_search") in applied(params, db)
    assert "Applying memories.0013_memory_edited_at" in output if start != "fresh" else squash_used
