"""Hybrid search: keyword-only and meaning-only matches, scores, filters, grouping, owners, access tracking."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memories.models import ChunkTerm, CorpusStat, Memory, TermStat
from memories.search import SearchError, SearchFilters, hybrid_search, lexical, make_snippet, search_filters
from memories.services import memory_delete, memory_update
from tests.factories import make_memory

pytestmark = pytest.mark.django_db

CORPUS = {
    "Zorblax invoice": "Invoice ZX-99 from the Zorblax consultancy is due on the fifth of June.",
    "Car trouble": "My automobile broke down on the motorway and needed a tow truck to the garage.",
    "Vehicle repair costs": "The vehicle repair after the breakdown cost 400 euros at the garage.",
    "Sourdough": "Bake the sourdough loaf at 230 degrees for forty minutes with steam.",
    "Team offsite": "The product team offsite in Lisbon covered the roadmap and hiring plans.",
}


@pytest.fixture
def corpus(user):
    return {title: make_memory(user, title=title, content=text) for title, text in CORPUS.items()}


def titles(response):
    return [r.title for r in response.results]


def test_a_keyword_only_match_is_found(user, corpus):
    # "ZX-99" and "Zorblax" mean nothing to the embedding model; BM25 finds them.
    assert titles(hybrid_search(user.pk, "Zorblax ZX-99"))[0] == "Zorblax invoice"


def test_a_meaning_only_match_is_found(user, corpus):
    # No word of the query appears in "Car trouble", yet it is about exactly that. (The fake embedder
    # knows no meaning, so its scores do not reach the good-match rule: test_search_relevance tests
    # the rule with the real model; here the floor is off.)
    response = hybrid_search(user.pk, "vehicle failure on the highway, needed towing", limit=3, min_score=0)
    assert "Car trouble" in titles(response)


def test_a_match_on_both_ranks_first(user, corpus):
    response = hybrid_search(user.pk, "vehicle repair at the garage")
    first = response.results[0]
    assert first.title == "Vehicle repair costs"
    assert first.vector_score > 0 and first.parts["lexical"] == 1.0


def test_scores_are_in_0_1_and_hybrid_is_the_weighted_sum(user, corpus):
    response = hybrid_search(user.pk, "garage repair bread", limit=10, min_score=0)
    assert response.results
    for r in response.results:
        for score in (r.hybrid_score, r.vector_score, r.metadata_score):
            assert 0.0 <= score <= 1.0
        assert r.hybrid_score == pytest.approx(0.7 * r.vector_score + 0.3 * r.metadata_score, abs=1e-9)
    assert [r.hybrid_score for r in response.results] == sorted(
        (r.hybrid_score for r in response.results), reverse=True
    )


def test_weights_come_from_settings(user, corpus, settings):
    settings.KYBERNESIS_SEARCH_VECTOR_WEIGHT, settings.KYBERNESIS_SEARCH_METADATA_WEIGHT = 0.5, 0.5
    r = hybrid_search(user.pk, "garage").results[0]
    assert r.hybrid_score == pytest.approx(0.5 * r.vector_score + 0.5 * r.metadata_score, abs=1e-9)


def test_the_title_and_tags_count_in_the_metadata_score(user):
    tagged = make_memory(user, title="Notes", content="Meeting about numbers.", manual_tags=["budget"])
    titled = make_memory(user, title="Budget", content="Meeting about numbers.")
    plain = make_memory(user, title="Notes", content="Meeting about numbers.  ")
    by_id = {r.memory_id: r for r in hybrid_search(user.pk, "budget", limit=10, min_score=0).results}
    # The title is a lexical field (BM25F): "budget" in the title is a full keyword match.
    assert by_id[titled.pk].parts["lexical"] == 1.0 and by_id[tagged.pk].parts["tags"] == 1.0
    assert by_id[plain.pk].parts["lexical"] == 0.0
    assert by_id[titled.pk].metadata_score > by_id[plain.pk].metadata_score
    assert by_id[tagged.pk].metadata_score > by_id[plain.pk].metadata_score


def test_group_by_memory_returns_one_result_per_memory(user):
    long = "\n\n".join(f"Paragraph {i} about the garage and the repair of the vehicle. " * 6 for i in range(6))
    make_memory(user, title="Long garage log", content=long)
    make_memory(user, title="Short", content="Garage visit.")
    chunks = hybrid_search(user.pk, "garage repair", limit=20)
    grouped = hybrid_search(user.pk, "garage repair", limit=20, group_by="memory")
    assert len({r.memory_id for r in chunks.results}) < len(chunks.results)
    assert len({r.memory_id for r in grouped.results}) == len(grouped.results) == 2


def test_another_users_chunks_never_appear(user, other_user, corpus):
    make_memory(other_user, title="Their garage", content="Garage repair of the vehicle, Zorblax ZX-99.")
    for query in ("garage repair", "Zorblax ZX-99", "anything at all"):
        for filters in (SearchFilters(), SearchFilters(tiers=("hot",)), SearchFilters(sources=("upload",))):
            response = hybrid_search(user.pk, query, limit=100, filters=filters, min_score=0)
            assert all(r.memory_id in {m.pk for m in corpus.values()} for r in response.results)


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (SearchFilters(tags=("cars",)), {"Car trouble", "Vehicle repair costs"}),
        (SearchFilters(tags=("cars", "money"), tags_mode="all"), {"Vehicle repair costs"}),
        (
            SearchFilters(tags=("cars", "money"), tags_mode="any"),
            {"Car trouble", "Vehicle repair costs", "Zorblax invoice"},
        ),
        (SearchFilters(sources=("chat",)), {"Sourdough"}),
        (SearchFilters(tiers=("archive",)), {"Team offsite"}),
        (SearchFilters(tiers=("hot", "warm")), set(CORPUS) - {"Team offsite"}),
        (SearchFilters(min_priority=0.8), {"Zorblax invoice"}),
        (SearchFilters(max_priority=0.2), {"Sourdough"}),
        (SearchFilters(title_contains="REPAIR"), {"Vehicle repair costs"}),
        (SearchFilters(title_contains="100%_"), set()),
        (SearchFilters(pinned=True), {"Car trouble"}),
    ],
)
def test_every_filter_excludes_what_it_should(user, filters, expected):
    for title, text in CORPUS.items():
        tags = {"Car trouble": ["cars"], "Vehicle repair costs": ["cars", "money"], "Zorblax invoice": ["money"]}.get(
            title, []
        )
        make_memory(
            user,
            title=title,
            content=text,
            manual_tags=tags,
            priority={"Zorblax invoice": 0.9, "Sourdough": 0.1}.get(title, 0.5),
            source="chat" if title == "Sourdough" else "upload",
        )
    Memory.objects.filter(title="Team offsite").update(tier="archive")
    Memory.objects.filter(title="Team offsite").first().chunks.update(tier="archive")
    Memory.objects.filter(title="Car trouble").update(pinned=True)
    # min_score=0: this test is about filters, not about the relevance floor.
    response = hybrid_search(user.pk, "garage invoice bread roadmap vehicle", limit=100, filters=filters, min_score=0)
    assert set(titles(response)) == expected


def test_date_filters(user, corpus):
    old = corpus["Sourdough"]
    Memory.objects.filter(pk=old.pk).update(
        created_at=timezone.now() - timedelta(days=30), updated_at=timezone.now() - timedelta(days=30)
    )
    week_ago = timezone.now() - timedelta(days=7)
    everything = "garage invoice bread roadmap vehicle"
    assert titles(
        hybrid_search(user.pk, everything, limit=100, filters=SearchFilters(created_before=week_ago), min_score=0)
    ) == ["Sourdough"]
    assert "Sourdough" not in titles(
        hybrid_search(user.pk, everything, limit=100, filters=SearchFilters(created_after=week_ago))
    )
    assert titles(
        hybrid_search(user.pk, everything, limit=100, filters=SearchFilters(updated_before=week_ago), min_score=0)
    ) == ["Sourdough"]
    assert "Sourdough" not in titles(
        hybrid_search(user.pk, everything, limit=100, filters=SearchFilters(updated_after=week_ago))
    )


def test_appearing_in_search_results_is_not_an_access(user, corpus):
    response = hybrid_search(user.pk, "Zorblax", limit=2)
    assert response.results
    for memory in Memory.objects.filter(owner=user):
        assert memory.access_count == 0 and memory.last_accessed_at is None


@pytest.mark.parametrize(
    "query",
    [
        "& | ! : * ( ) ' \" \\ -- ;",
        "Zorblax & (ZX-99 | !x) :* 'a' \"b\" \\ -- ; DROP",
        "<script>alert(1)</script>",
        "🎉 東京 Ünïcödé",
    ],
)
def test_query_syntax_characters_are_just_searched(user, corpus, query):
    response = hybrid_search(user.pk, query, limit=5)
    assert isinstance(response.results, list)


@pytest.mark.parametrize(
    ("query", "limit"), [("", 10), ("   ", 10), ("x" * 2001, 10), ("ok", 0), ("ok", -1), ("ok", 101), ("ok", True)]
)
def test_bad_queries_are_refused(user, query, limit):
    with pytest.raises(SearchError):
        hybrid_search(user.pk, query, limit=limit)


def test_search_takes_the_owners_id_not_the_user(user):
    with pytest.raises(TypeError, match="owner's id"):
        hybrid_search(user, "garage")


def test_bad_filters_are_refused():
    for kwargs in (
        {"tags_mode": "some"},
        {"sources": ("fax",)},
        {"tiers": ("cold",)},
        {"min_priority": 2},
        {"min_priority": 0.8, "max_priority": 0.2},
    ):
        with pytest.raises(SearchError):
            SearchFilters(**kwargs)


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, SearchFilters()),
        ({"source": "", "tier": [], "tiers": None, "tags": None}, SearchFilters()),
        ({"source": "chat", "tier": "hot", "tiers": ["warm"]}, SearchFilters(sources=("chat",), tiers=("hot", "warm"))),
        (
            {"source": ["chat", "upload"], "tier": ["archive"]},
            SearchFilters(sources=("chat", "upload"), tiers=("archive",)),
        ),
        (
            {"tags": ["Cars"], "tags_mode": "all", "pinned": False},
            SearchFilters(tags=("cars",), tags_mode="all", pinned=False),
        ),
    ],
)
def test_the_one_filter_mapper_takes_a_name_or_a_list(params, expected):
    assert search_filters(**params) == expected


def test_the_filter_mapper_refuses_what_search_filters_refuse():
    with pytest.raises(SearchError, match=r"unknown tier\(s\): cold"):
        search_filters(tier="cold")
    with pytest.raises(SearchError, match="min_priority is above max_priority"):
        search_filters(min_priority=0.8, max_priority=0.2)


def test_the_lexical_index_follows_every_write(user):
    memory = make_memory(user, title="t", content="Alpha beta gamma.")
    assert set(TermStat.objects.filter(owner=user, df__gt=0).values_list("lexeme", flat=True)) == {
        "alpha",
        "beta",
        "gamma",
    }
    memory = memory_update(memory=memory, content="Alpha delta.")
    assert dict(TermStat.objects.filter(owner=user, df__gt=0).values_list("lexeme", "df")) == {"alpha": 1, "delta": 1}
    assert CorpusStat.objects.get(owner=user).chunk_count == 1
    memory_delete(memory=memory)
    assert not TermStat.objects.filter(owner=user, df__gt=0).exists()
    assert not ChunkTerm.objects.exists() and CorpusStat.objects.get(owner=user).chunk_count == 0


def test_a_queryset_delete_also_unindexes(user):
    make_memory(user, title="t", content="Epsilon zeta.")
    Memory.objects.filter(owner=user).delete()
    assert not TermStat.objects.filter(owner=user, df__gt=0).exists() and not ChunkTerm.objects.exists()


def _index_of(owner) -> tuple[dict, dict, tuple]:
    corpus = CorpusStat.objects.filter(owner=owner).values_list("chunk_count", "total_length").first()
    return _impacts(owner), dict(TermStat.objects.filter(owner=owner, df__gt=0).values_list("lexeme", "df")), corpus


def test_a_deletion_of_many_unindexes_them_together_and_exactly_as_one_by_one(user, other_user):
    """A queryset delete unindexes its memories in batches at its first memory, and the index left
    is the one that deleting them one by one leaves: the kept memories' postings, df and totals."""
    kept = make_memory(user, title="Kept", content="Alpha beta and a kept note.")
    gone = [make_memory(user, title=f"Gone {i}", content=f"Alpha gamma number {i} goes.") for i in range(6)]
    make_memory(other_user, title="Other", content="Alpha of another account.")
    trashed = make_memory(user, title="Trashed", content="Alpha delta in the trash.")
    memory_delete(memory=trashed)  # unindexed when trashed; the deletion must not take it out twice
    one_by_one_other = _index_of(other_user)
    # What one-by-one deletion leaves, computed on a copy of the rows: delete, read, roll back.
    with transaction.atomic():
        for memory in gone:
            lexical.unindex_memories(memory_ids=[memory.pk])
        one_by_one_user = _index_of(user)
        transaction.set_rollback(True)
    with CaptureQueriesContext(connection) as queries:
        Memory.all_objects.filter(pk__in=[m.pk for m in gone] + [trashed.pk]).delete()
    unindexes = [q["sql"] for q in queries.captured_queries if "DELETE FROM memories_chunkterm t" in q["sql"]]
    assert len(unindexes) == 1  # one statement for the six, none for the trashed one
    assert _index_of(user) == one_by_one_user
    assert _index_of(other_user) == one_by_one_other
    assert Memory.objects.filter(owner=user).get() == kept


def test_deleting_an_account_unindexes_its_memories_and_no_one_elses(user, other_user):
    for i in range(3):
        make_memory(user, title=f"Mine {i}", content=f"Omega theta {i}.")
    make_memory(other_user, title="Theirs", content="Omega of another account.")
    theirs = _index_of(other_user)
    type(user).objects.filter(pk=user.pk).delete()
    assert not ChunkTerm.objects.filter(owner_id=user.pk).exists()
    assert _index_of(other_user) == theirs
    other_user.delete()
    assert not ChunkTerm.objects.exists()


def test_a_deletion_retried_after_a_rollback_unindexes_again(user):
    """The mark that a deletion's memories were unindexed goes with a rolled-back savepoint (here the
    inner atomic block inside the test's transaction): the same queryset deleted again unindexes again."""
    make_memory(user, title="t", content="Kappa lambda.")
    deletion = Memory.objects.filter(owner=user)
    with pytest.raises(RuntimeError), transaction.atomic():
        deletion.delete()
        raise RuntimeError("rolled back")
    assert ChunkTerm.objects.filter(owner=user).exists()  # the rollback put the postings back
    deletion.delete()
    assert not ChunkTerm.objects.filter(owner=user).exists()
    assert not TermStat.objects.filter(owner=user, df__gt=0).exists()
    assert CorpusStat.objects.get(owner=user).chunk_count == 0


def _impacts(user) -> dict[tuple[int, str], float]:
    return {(t.chunk_id, t.lexeme): t.impact for t in ChunkTerm.objects.filter(owner=user)}


def test_a_first_memory_is_weighed_against_its_own_length_not_the_prior(user):
    # One chunk of 12 distinct words: the average chunk length is its own, so a word seen once has
    # BM25's neutral weight (k1 + 1) / (1 + k1) = 1, whatever DEFAULT_AVG_LENGTH says.
    # (The text opens with the title, so the title adds no field of its own.)
    make_memory(
        user, title="Alpha bravo", content="Alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima"
    )
    impacts = set(_impacts(user).values())
    assert len(impacts) == 1 and impacts.pop() == pytest.approx(1.0)


def test_reindex_all_weighs_every_chunk_against_the_final_average_length(user, other_user):
    texts = {
        user: ["Alpha bravo.", "Alpha charlie delta echo foxtrot golf.", "Hotel india juliet kilo."],
        other_user: ["Alpha golf hotel india juliet kilo lima mike november."],
    }
    for owner, owned in texts.items():
        for text in owned:
            make_memory(owner, title=text, content=text)
    lexical.reindex_all(batch=1)
    one_by_one = _impacts(user)
    lexical.reindex_all()
    assert _impacts(user) == pytest.approx(one_by_one)  # the batch size changes no weight
    stat = CorpusStat.objects.get(owner=user)
    assert stat.chunk_count == 3
    # The shortest chunk weighs a word it has once above 1, the longest below 1 (the average is between).
    by_chunk = {}
    for (chunk_id, lexeme), impact in one_by_one.items():
        by_chunk.setdefault(chunk_id, {})[lexeme] = impact
    shortest = min(by_chunk.values(), key=len)
    longest = max(by_chunk.values(), key=len)
    assert shortest["alpha"] > 1.0 > longest["alpha"]


def test_reindex_owner_rebuilds_one_owner_as_reindex_all_does_and_leaves_the_others(user, other_user):
    for owner, text in ((user, "Alpha bravo charlie."), (user, "Delta echo alpha."), (other_user, "Golf hotel.")):
        make_memory(owner, title=text, content=text)
    lexical.reindex_all()
    mine, theirs = _impacts(user), _impacts(other_user)
    stats = {(s.owner_id, s.lexeme): s.df for s in TermStat.objects.all()}
    ChunkTerm.objects.filter(owner=user).delete()  # as after a bulk load: no postings yet
    lexical.reindex_owner(user.pk, batch=1)
    assert _impacts(user) == pytest.approx(mine) and _impacts(other_user) == theirs
    assert {(s.owner_id, s.lexeme): s.df for s in TermStat.objects.all()} == stats
    assert CorpusStat.objects.get(owner=user).chunk_count == 2


def test_bm25_idf_is_never_negative():
    assert lexical.idf(df=10, n=10) > 0 and lexical.idf(df=1, n=1000) > lexical.idf(df=500, n=1000)


def test_snippets_highlight_the_matched_words_and_escape_html():
    text = "Intro. " * 60 + "The <b>garage</b> repaired the vehicles quickly. " + "Outro. " * 60
    plain, marked = make_snippet(text, ["garag", "vehicl"])
    assert "garage" in plain and len(plain) <= 250
    assert "<mark>garage</mark>" in marked and "<mark>vehicles</mark>" in marked and "&lt;b&gt;" in marked


def test_tag_filters_are_normalised_like_stored_tags(user, api):
    make_memory(user, title="Plan", content="Launch plan for spring.", manual_tags=["Launch Plan"])
    filters = SearchFilters(tags=("  LAUNCH plan ", ""))
    assert filters.tags == ("launch-plan",)
    assert titles(hybrid_search(user.pk, "spring", filters=filters)) == ["Plan"]
    listed = api.get("/api/v1/memories", {"tag": "Launch Plan"}).json()
    assert [m["title"] for m in listed["items"]] == ["Plan"]


@pytest.mark.parametrize(
    ("terms", "tags", "expected"),
    [
        (["budget", "review"], ["budget-review", "finance"], {"budget", "review"}),
        (["budget", "review"], ["budgeting"], {"budget"}),  # a word that starts with the term
        (["view"], ["review", "over-view"], {"view"}),  # "over view": a word of its own after the dash
        (["view"], ["review"], set()),  # inside a word is no match
        (["python", "の本"], ["pythonの本"], {"python", "の本"}),  # Latin ends where CJK begins
        (["週末", "python"], ["週末", "java"], {"週末"}),
        (["rev"], [], set()),
    ],
)
def test_tags_count_each_query_term_once_that_some_tag_word_starts_with(terms, tags, expected):
    """The tags part of metadataScore reads each tag once per search (TagShare) and says the same as
    term_share over all the tags as one text."""
    from memories.search.scoring import TagShare, matched_terms, term_share

    share = TagShare(terms)
    assert share(tags) == len(expected) / len(terms)
    assert share(tags) == term_share(terms, " ".join(tags).replace("-", " "))  # again, from what it knows
    assert set().union(*(matched_terms(terms, t.replace("-", " ")) for t in tags)) == expected


def test_a_letter_alone_is_no_word_to_find_beside_longer_ones(user):
    """Search runs as a person types: "hot loops in a d" found every passage with a stray "d", and as
    the rarest term the letter outweighed the words asked for."""
    make_memory(user, title="Tracing", content="Hot loops are recorded as traces and compiled to machine code.")
    make_memory(user, title="Vitamins", content="Vitamin d and vitamin c: the d form comes from sunlight.")
    typed = hybrid_search(user.pk, "hot loops in a d", min_score=0)
    assert typed.query_terms == ["hot", "loop"]
    assert [r.title for r in typed.results][:1] == ["Tracing"]
    assert hybrid_search(user.pk, "d", min_score=0).query_terms == ["d"]  # all the query says
    assert "d" in hybrid_search(user.pk, "vitamin D", min_score=0).query_terms  # a capital is meant


def test_a_one_letter_term_marks_that_letter_alone():
    _, marked = make_snippet("The C compiler and the Cargo build, in C.", ["c"])
    assert marked.count("<mark>") == 2 and "<mark>C</mark> compiler" in marked


@pytest.mark.parametrize(
    ("text", "terms", "marked"),
    [
        # A term marks the whole word it starts, and nothing inside a word.
        ("Reinduction is not induction.", ["induct"], ["induction"]),
        # A hyphenated term (English reads "pre-miRNA" as one lexeme too) marks across its hyphen; a
        # word after a hyphen starts a word.
        ("cleave pre-miRNA, zx-ab", ["pre-mirna", "pre", "ab"], ["pre-miRNA", "ab"]),
        ("1/2000 in UK", ["1/2000", "uk"], ["1/2000", "UK"]),
        # A letter alone, not the word it begins.
        ("c-sections in C", ["c"], ["c", "C"]),
        ("Cargo", ["c"], []),
        # A Latin word ends where Japanese begins; pairs are found wherever they stand.
        ("週末にPythonの本", ["python", "週末", "の本"], ["週末", "Python", "の本"]),
        ("Мюнхене и гимназии", ["мюнхен", "гимназ"], ["Мюнхене", "гимназии"]),
    ],
)
def test_terms_mark_the_words_they_start(text, terms, marked):
    """TermMatcher finds words by plain strings and patterns compiled once (a pattern of each query's
    terms with the CJK ranges in it cost some 7 ms a search)."""
    from memories.search.scoring import term_matcher

    assert [text[start:end] for start, end in term_matcher(terms).spans(text)] == marked
