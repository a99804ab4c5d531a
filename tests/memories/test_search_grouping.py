"""One result per memory by default (the page, the API, MCP): the memory's best passage with up to two
more of its passages beneath; groupBy=chunk keeps one result per passage."""

from __future__ import annotations

import pytest

from memories.models import MemoryChunk
from memories.search import hybrid_search
from memories.search.results import SearchResult, group_by_memory
from tests.factories import make_memory

pytestmark = pytest.mark.django_db


def _result(memory_id: int, chunk_id: int, score: float) -> SearchResult:
    return SearchResult(
        memory_id=memory_id,
        chunk_id=chunk_id,
        chunk_index=chunk_id,
        title="",
        text="",
        snippet="",
        snippet_html="",
        hybrid_score=score,
        vector_score=score,
        metadata_score=0.0,
        tier="hot",
        source="upload",
        tags=[],
        manual_tags=[],
        created_at=None,
    )


def test_grouping_keeps_each_memorys_best_chunk_counts_its_matches_and_lists_two_more():
    ranked = [_result(1, 10, 0.9), _result(2, 20, 0.8), _result(1, 11, 0.7), _result(1, 12, 0.6)]
    ranked += [_result(1, 13, 0.5), _result(2, 21, 0.2), _result(3, 30, 0.1)]
    grouped = group_by_memory(ranked, good=lambda r: r.hybrid_score >= 0.3)
    assert [(r.memory_id, r.chunk_id) for r in grouped] == [(1, 10), (2, 20), (3, 30)]
    first, second, third = grouped
    assert (first.passage_count, first.more_count, first.unlisted_count) == (4, 3, 1)
    assert [p.chunk_id for p in first.more_passages] == [11, 12], "the next best two, best first"
    assert (second.passage_count, second.more_passages) == (1, []), "a chunk under the floor is no passage"
    assert (third.passage_count, third.more_passages) == (1, []), "the floor drops it later, not here"


def test_a_memory_is_headed_by_its_best_good_passage_when_a_higher_one_is_not_good():
    # A Japanese feed: the passage that names the query's words in full (good) scores under one that
    # holds half of them with a closer vector (not good); the memory is a good match all the same.
    good_ids = {11, 12}
    ranked = [_result(1, 10, 0.30), _result(2, 20, 0.29), _result(1, 11, 0.28), _result(1, 12, 0.27)]
    grouped = group_by_memory(ranked, good=lambda r: r.chunk_id in good_ids)
    assert [(r.memory_id, r.chunk_id) for r in grouped] == [(1, 11), (2, 20)]
    assert grouped[0].passage_count == 2
    assert [p.chunk_id for p in grouped[0].more_passages] == [12]


@pytest.fixture
def long_document(user):
    sections = [
        f"Section {i}. The lighthouse keeper logged the fog signal at dawn, then rewound the clockwork lamp."
        + " Routine maintenance of the lens and the brass fittings followed." * 8
        for i in range(12)
    ]
    return make_memory(user, "\n\n".join(sections), title="Lighthouse keeper's log")


def test_by_default_the_api_gives_one_result_per_memory_with_its_passages_and_char_ranges(api, user, long_document):
    make_memory(user, "The lighthouse on the point was painted red in 1998.", title="Lighthouse paint")
    body = api.post("/api/v1/search", {"query": "lighthouse keeper fog signal lamp", "minScore": 0}).json()
    ids = [r["memoryId"] for r in body["results"]]
    assert len(ids) == len(set(ids)) == 2, "one entry per memory"
    log = body["results"][ids.index(long_document.pk)]
    chunks = {c.position: c for c in MemoryChunk.objects.filter(memory=long_document)}
    assert len(chunks) >= 4
    assert log["passageCount"] == len(chunks) and len(log["morePassages"]) == 2
    for passage in [log, *log["morePassages"]]:
        chunk = chunks[passage["chunkIndex"]]
        assert (passage["charStart"], passage["charEnd"]) == (chunk.char_start, chunk.char_end)
        assert passage["url"] == f"/memories/{long_document.pk}/open?chunk={passage['chunkIndex']}"
    scores = [log["hybridScore"], *(p["hybridScore"] for p in log["morePassages"])]
    assert scores == sorted(scores, reverse=True)
    assert len({log["chunkIndex"], *(p["chunkIndex"] for p in log["morePassages"])}) == 3


def test_group_by_chunk_keeps_the_per_passage_mode_and_a_bad_value_names_the_allowed_ones(api, long_document):
    body = api.post("/api/v1/search", {"query": "lighthouse keeper", "groupBy": "chunk", "minScore": 0}).json()
    assert len(body["results"]) == 10 and {r["memoryId"] for r in body["results"]} == {long_document.pk}
    assert all(r["passageCount"] == 1 and r["morePassages"] == [] for r in body["results"])
    got = api.get("/api/v1/search", {"q": "lighthouse keeper", "groupBy": "chunk", "minScore": 0}).json()
    assert len(got["results"]) == 10
    for bad in (
        api.post("/api/v1/search", {"query": "lighthouse", "groupBy": "tag"}),
        api.get("/api/v1/search", {"q": "lighthouse", "groupBy": "passage"}),
    ):
        assert bad.status_code == 422
        assert "'memory' or 'chunk'" in str(bad.json()["detail"])


def test_the_limit_counts_memories(api, user):
    for n in range(4):
        make_memory(user, "\n\n".join(f"Kayak trip {n}, day {d}: paddled the estuary." * 20 for d in range(5)))
    body = api.post("/api/v1/search", {"query": "kayak estuary", "limit": 3, "minScore": 0}).json()
    assert len(body["results"]) == 3 and len({r["memoryId"] for r in body["results"]}) == 3
    assert all(r["passageCount"] >= 2 for r in body["results"])


def test_one_enormous_document_does_not_hide_the_short_note(user, api, settings):
    """The document's 150 chunks fill every side of the candidate pool; the note still comes back."""
    section = "Zorblax invoice ledger: zorblax invoice totals, zorblax invoice dates, zorblax invoice numbers. "
    document = make_memory(user, "\n\n".join(f"Part {i}. " + section * 11 for i in range(150)), title="Ledger")
    assert document.chunk_count >= 120
    note = make_memory(user, "Paid the zorblax invoice on Friday; the receipt is in the blue folder.", title="Paid")
    per_chunk = hybrid_search(user.pk, "zorblax invoice", group_by="chunk", min_score=0).results
    assert {r.memory_id for r in per_chunk} == {document.pk}, "the document floods the per-chunk page"
    grouped = api.post("/api/v1/search", {"query": "zorblax invoice", "minScore": 0}).json()["results"]
    assert sorted(r["memoryId"] for r in grouped) == sorted([document.pk, note.pk])
    assert next(r for r in grouped if r["memoryId"] == document.pk)["passageCount"] >= 100


def test_a_query_of_2000_characters_is_searched_and_one_more_is_a_422(api, long_document):
    query = ("lighthouse keeper fog signal " * 80)[:2000]
    ok = api.post("/api/v1/search", {"query": query, "minScore": 0})
    assert ok.status_code == 200 and [r["memoryId"] for r in ok.json()["results"]] == [long_document.pk]
    assert len(ok.json()["results"][0]["snippet"]) < 400
    assert api.post("/api/v1/search", {"query": query + "x"}).status_code == 422
    assert api.get("/api/v1/search", {"q": query}).status_code == 200


def test_the_search_page_groups_by_default_and_expands_more_passages(logged_in_client, long_document):
    n = long_document.chunk_count
    page = logged_in_client.get("/search/", {"q": "lighthouse keeper fog", "weaker": "1"}).content.decode()
    assert page.count('class="title"') == 1 and page.count('class="passage-link"') == 2, "the best and two more"
    assert f"{n - 1} more passages in this memory" in page and "<details" in page
    assert f"for the other {n - 3}" in page
    every = logged_in_client.get("/search/", {"q": "lighthouse keeper fog", "group": "chunk", "weaker": "1"})
    assert "more passages in this memory" not in every.content.decode()
    assert every.content.decode().count('class="title"') == n
    old = logged_in_client.get("/search/", {"q": "lighthouse keeper fog", "group": "on", "weaker": "1"})
    assert old.status_code == 200 and f"{n - 1} more passages" in old.content.decode(), "the old checkbox's URL"
    bad = logged_in_client.get("/search/", {"q": "lighthouse", "group": "tags"})
    assert bad.status_code == 422 and "grouped by" in bad.content.decode()


def test_mcp_search_is_grouped_by_default(user, long_document):
    from asgiref.sync import async_to_sync

    from kybernesis import mcp_server

    with mcp_server.acting_as(user):
        grouped = async_to_sync(mcp_server.memory_search)(query="lighthouse keeper fog", min_score=0)
        per_chunk = async_to_sync(mcp_server.memory_search)(
            query="lighthouse keeper fog", group_by="chunk", min_score=0
        )
    assert len(grouped["results"]) == 1 and grouped["results"][0]["passageCount"] == long_document.chunk_count
    assert len(grouped["results"][0]["morePassages"]) == 2
    assert len(per_chunk["results"]) == 10


def test_a_query_whose_only_match_is_a_title_finds_that_memory_once(api, user, long_document):
    make_memory(
        user, "Depart 07:40 from the north pier, return 18:10; bring the printed tickets.", title="Zanzibar ferry"
    )
    body = api.post("/api/v1/search", {"query": "zanzibar"}).json()
    assert [r["title"] for r in body["results"]] == ["Zanzibar ferry"]
    assert body["results"][0]["passageCount"] == 1 and body["results"][0]["morePassages"] == []


def test_a_small_collection_whose_every_chunk_is_a_candidate_takes_no_second_look(user, long_document, monkeypatch):
    from memories.search import hybrid

    make_memory(user, "The lighthouse on the point was painted red in 1998.", title="Lighthouse paint")
    statements = []
    real = hybrid.search_candidates
    monkeypatch.setattr(hybrid, "search_candidates", lambda *a, **k: statements.append(1) or real(*a, **k))
    results = hybrid_search(user.pk, "lighthouse keeper", group_by="memory", min_score=0).results
    assert len(results) == 2 and len(statements) == 1
