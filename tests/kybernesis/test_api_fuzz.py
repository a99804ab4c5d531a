"""Property-based tests of the whole JSON API from its own OpenAPI schema (Schemathesis).

Every operation is called, authenticated with a bearer token, with inputs generated from the schema:
valid ones and, through Schemathesis' negative mode, invalid ones. The server must never answer
5xx, every answer must match the documented schema and status codes, and no memory may ever exist
without its chunks. The example budget is small so the suite stays fast; `make fuzz` runs the same
test with KYBERNESIS_FUZZ_EXAMPLES=200 and the coverage phase on.
"""

from __future__ import annotations

import os

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.db.models import Count
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    response_schema_conformance,
    status_code_conformance,
)

from core.auth import api_token_create
from kybernesis.api import api
from memories.models import Memory
from tests.factories import make_memory

EXAMPLES = int(os.environ.get("KYBERNESIS_FUZZ_EXAMPLES", "6"))
# Schemathesis' coverage phase (boundary values, wrong types, unexpected methods for every parameter)
# sends ~1,500 requests; `make fuzz` turns it on, the CI run keeps to the random examples.
COVERAGE = os.environ.get("KYBERNESIS_FUZZ_COVERAGE", "0") == "1"
CHECKS = [not_a_server_error, response_schema_conformance, status_code_conformance]


# The schema comes straight from the NinjaAPI object (no request, no database at collection), and the
# cases are sent in-process to Django's WSGI application: one test per operation.
schema = schemathesis.openapi.from_dict(api.get_openapi_schema())
schema.app = get_wsgi_application()
schema.config.phases.coverage.enabled = COVERAGE


@pytest.fixture(autouse=True)
def _keep_the_test_connection():
    """Django closes the database connection after each request; inside the test's transaction it
    must stay open, as Django's own test client arranges."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def bearer(db, user):
    make_memory(user, "Alice from Acme Corp met Bob in Berlin to review the quarterly budget.")  # something to find
    _, key = api_token_create(user=user)
    return {"Authorization": f"Bearer {key}"}


@schema.parametrize()
@settings(
    max_examples=EXAMPLES, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)
def test_every_operation_answers_within_its_schema_and_never_5xx(case, bearer):
    case.call_and_validate(headers=bearer, checks=CHECKS)
    orphans = Memory.objects.annotate(n=Count("chunks")).filter(n=0).values_list("pk", flat=True)
    assert not list(orphans), f"memories without chunks after {case.method} {case.path}: {list(orphans)}"
