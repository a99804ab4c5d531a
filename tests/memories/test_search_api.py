"""POST/GET /api/v1/search and the /search page."""

from __future__ import annotations

import json

import pytest

from tests.factories import make_memory

pytestmark = pytest.mark.django_db

RESULT_KEYS = {
    "memoryId",
    "chunkId",
    "title",
    "snippet",
    "hybridScore",
    "goodMatch",
    "vectorScore",
    "metadataScore",
    "tier",
    "source",
    "tags",
    "createdAt",
    "chunkIndex",
    "url",
    "kind",
    "charStart",
    "charEnd",
    "passageCount",
    "morePassages",
}


@pytest.fixture
def notes(user):
    make_memory(user, title="Garage", content="The vehicle repair at the garage cost 400 euros.", manual_tags=["cars"])
    make_memory(user, title="Bread", content="Bake the sourdough loaf at 230 degrees.")


def test_post_search_returns_the_score_breakdown(api, notes):
    response = api.post("/api/v1/search", {"query": "vehicle repair", "limit": 5})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["tookMs"] >= 0
    first = body["results"][0]
    assert set(first) == RESULT_KEYS and first["title"] == "Garage"
    assert first["hybridScore"] == pytest.approx(0.7 * first["vectorScore"] + 0.3 * first["metadataScore"])


def test_post_search_with_filters_and_grouping(api, notes):
    body = api.post(
        "/api/v1/search",
        {
            "query": "baking",
            "groupBy": "memory",
            "minScore": 0,
            "filters": {
                "tags": ["Cars"],
                "tiers": ["hot"],
                "source": "upload",
                "createdAfter": "2020-01-01T00:00:00Z",
                "minPriority": 0,
                "titleContains": "gar",
                "pinned": False,
            },
        },
    ).json()
    assert [r["title"] for r in body["results"]] == ["Garage"]


def test_get_search_for_simple_clients(api, notes):
    body = api.get("/api/v1/search", {"q": "sourdough", "limit": 1}).json()
    assert [r["title"] for r in body["results"]] == ["Bread"]
    filtered = api.get("/api/v1/search", {"q": "sourdough", "tag": "cars", "minScore": 0}).json()
    assert [r["title"] for r in filtered["results"]] == ["Garage"]


def test_search_never_shows_another_users_memories(api, other_user, notes):
    make_memory(other_user, title="Their garage", content="Vehicle repair secrets.")
    titles = [
        r["title"]
        for r in api.post("/api/v1/search", {"query": "vehicle repair garage", "limit": 100}).json()["results"]
    ]
    assert "Their garage" not in titles


@pytest.mark.parametrize(
    "body",
    [
        {"query": ""},
        {"query": "   "},
        {"query": "x" * 2001},
        {"query": "ok", "limit": 0},
        {"query": "ok", "limit": -3},
        {"query": "ok", "limit": 101},
        {"query": "ok", "filters": {"colour": "red"}},
        {"query": "ok", "filters": {"createdAfter": "last tuesday"}},
        {"query": "ok", "filters": {"tiers": ["cold"]}},
        {"query": "ok", "groupBy": "tag"},
        {"query": "ok", "filters": {"minPriority": 3}},
        {"limit": 5},
        {"query": "ok", "unknown": 1},
    ],
)
def test_bad_search_requests_are_422(api, body):
    response = api.post("/api/v1/search", body)
    assert response.status_code == 422, response.content
    assert response.json()["detail"]


@pytest.mark.parametrize(
    "params", [{"q": ""}, {"q": "ok", "limit": 0}, {"q": "ok", "createdAfter": "soon"}, {"q": "ok", "tier": "cold"}, {}]
)
def test_bad_get_searches_are_422(api, params):
    assert api.get("/api/v1/search", params).status_code == 422


@pytest.mark.parametrize(
    "bound", ["2020-01-01T00:00:00+16:00", "1000-01-01T00:00:00-23:59", "9998-12-31T23:59:59-23:59"]
)
def test_a_time_zone_offset_postgresql_cannot_hold_is_the_same_instant_in_utc(api, notes, bound):
    # Python takes offsets up to ±23:59 and PostgreSQL only up to ±15:59: the bound is compared in UTC.
    for method, body in (
        (api.post, {"query": "vehicle", "filters": {"createdAfter": bound}}),
        (api.get, {"q": "vehicle", "createdBefore": bound}),
    ):
        response = method("/api/v1/search", body)
        assert response.status_code == 200, response.content


def test_tsquery_and_sql_syntax_is_simply_searched(api, notes):
    for query in ["& | ! : * ( ) ' \" \\ -- ;", "garage'); DROP TABLE memories_memory; --"]:
        response = api.post("/api/v1/search", {"query": query})
        assert response.status_code == 200, response.content


def test_the_search_page_shows_results_with_highlights_and_score_bars(logged_in_client, notes):
    empty = logged_in_client.get("/search/")
    assert empty.status_code == 200 and "Search everything you know" in empty.content.decode()
    html = logged_in_client.get("/search/", {"q": "vehicle repair"}).content.decode()
    assert "<mark>vehicle</mark>" in html and html.count('class="score-row"') >= 3
    assert '<span class="badge tag-manual">cars</span>' in html and '<span class="badge tag-auto">upload</span>' in html
    partial = logged_in_client.get("/search/", {"q": "vehicle"}, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in partial and 'id="results"' in partial


def test_the_search_page_reports_no_results_and_bad_input(logged_in_client, notes):
    none = logged_in_client.get("/search/", {"q": "garage", "source": "chat"}).content.decode()
    assert "No memories match" in none
    bad = logged_in_client.get("/search/", {"q": "ok", "min_priority": "7"})
    assert bad.status_code == 422 and "less than or equal to 1" in bad.content.decode()
    backwards = logged_in_client.get(
        "/search/", {"q": "ok", "created_after": "2025-02-01", "created_before": "2025-01-01"}
    )
    assert backwards.status_code == 422


def test_opening_a_memory_records_an_access(logged_in_client, user):
    memory = make_memory(user, content="Opened once.")
    logged_in_client.get(f"/memories/{memory.pk}/")
    memory.refresh_from_db()
    assert memory.access_count == 1 and memory.last_accessed_at is not None


@pytest.mark.parametrize(
    ("params", "filtered"),
    [
        ({"min_priority": "0.99"}, True),
        ({"created_after": "2999-01-01"}, True),
        ({"created_before": "1999-01-01"}, True),
        ({"tag": "no-such-tag"}, True),
        ({"min_priority": "0"}, False),
    ],
)
def test_no_results_says_when_the_filters_may_be_why(logged_in_client, notes, params, filtered):
    """With only a priority or date filter, "Nothing in your memories is a good match for 'vehicle
    repair'" would be wrong: the garage note is one, and the filters left it out."""
    html = logged_in_client.get("/search/", {"q": "zebra migration patterns", **params}).content.decode()
    assert "No memories match" in html
    assert ("with these filters" in html) is filtered


def test_a_title_filter_too_long_counts_characters(api):
    """In characters, not pydantic's "Value should have at most 500 items after validation, not 501"."""
    for response in (
        api.post("/api/v1/search", {"query": "ok", "filters": {"titleContains": "x" * 501}}),
        api.get("/api/v1/search", {"q": "ok", "titleContains": "x" * 501}),
    ):
        assert response.status_code == 422
        assert "at most 500 characters" in json.dumps(response.json())


def test_an_api_search_makes_five_statements(api, notes, settings, django_assert_num_queries):
    settings.KYBERNESIS_API_RATE = "600/m"  # the tests' settings turn the limits off
    # The token with the address's wrong-token count, the rate counters, the owner's chunk count, the
    # search statement (its SET LOCALs in the same round trip) and the returned passages' texts.
    api.post("/api/v1/search", {"query": "garage repair"})  # the token's last use is written once a minute
    with django_assert_num_queries(5):
        response = api.post("/api/v1/search", {"query": "garage repair"})
    assert response.status_code == 200
    assert [r["title"] for r in response.json()["results"]] == ["Garage"]
