"""The good-match rule (memories.search.relevance) and one result per memory for long documents
(memories.search.results.group_by_memory): table-driven rules, then hybrid search end to end."""

from __future__ import annotations

import pytest
from django.test import override_settings

from memories.search import SearchResult, hybrid_search
from memories.search.relevance import describe, passes, thresholds
from memories.search.results import group_by_memory
from tests.factories import make_memory

# --- The rule --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hybrid", "vector", "idf_share", "good"),
    [
        (0.23, 0.34, 0.0, True),  # a paraphrase: close in meaning, no word shared
        (0.23, 0.3399, 0.0, False),
        (0.3999, 0.30, 0.60, False),  # a partial keyword match with little meaning
        (0.40, 0.20, 0.50, True),  # meaning and words together
        (0.28, 0.15, 1.0, True),  # every word of the query found
        (0.2799, 0.15, 1.0, False),  # every word, but nothing else to it
        (0.33, 0.12, 1.0, False),  # every word, met by chance in a reference list: meaning under chance
        (0.39, 0.20, 0.998, False),  # one of the words missing (a rare one carries the IDF)
        (0.0, 0.0, 0.0, False),
        (1.0, 1.0, 1.0, True),
    ],
)
def test_a_result_is_a_good_match_when_close_in_meaning_scoring_well_or_it_has_every_word(
    hybrid, vector, idf_share, good
):
    assert passes(hybrid=hybrid, vector=vector, idf_share=idf_share, limits=(0.34, 0.40, 0.28)) is good


def test_the_thresholds_come_from_the_settings_and_the_rule_says_them():
    assert thresholds() == (0.34, 0.40, 0.28)
    with override_settings(
        KYBERNESIS_SEARCH_MIN_VECTOR_SCORE=0.5, KYBERNESIS_SEARCH_MIN_SCORE=0.6, KYBERNESIS_SEARCH_MIN_KEYWORD_SCORE=0.4
    ):
        assert thresholds() == (0.5, 0.6, 0.4)
        assert not passes(hybrid=0.45, vector=0.45, idf_share=0.0)
        assert passes(hybrid=0.45, vector=0.45, idf_share=1.0)
        # Every word, found by chance in a passage that means nothing like the query: no match.
        assert not passes(hybrid=0.45, vector=0.12, idf_share=1.0)
        assert describe() == (
            "vectorScore ≥ 0.50, or hybridScore ≥ 0.60, or every word of the query found, hybridScore ≥ 0.40 and "
            "vectorScore ≥ 0.15; "
            "outside English: hybridScore ≥ 0.60, or most of the query's words found"
        )


# --- A memory's score: its best passage, and at most a small bonus -------------------------------


def _result(memory_id: int, chunk_id: int, score: float, *, good: bool = True) -> SearchResult:
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
        good_match=good,
    )


def test_a_memory_scores_its_best_passage_alone_and_counts_its_other_good_ones():
    long_document = [_result(1, 10 + i, 0.60 - i / 100) for i in range(40)]  # 40 good passages
    note = [_result(2, 1, 0.62)]
    ranked = group_by_memory(sorted(long_document + note, key=lambda r: -r.hybrid_score), good=lambda r: r.good_match)
    assert [r.memory_id for r in ranked] == [2, 1], "many passages do not outweigh the better note"
    by_memory = {r.memory_id: r for r in ranked}
    assert by_memory[1].chunk_id == 10 and by_memory[1].hybrid_score == 0.60
    assert by_memory[1].parts["goodPassages"] == 39 and by_memory[2].parts["goodPassages"] == 0


def test_passages_that_are_not_good_matches_are_not_counted():
    tail = [_result(1, 1, 0.5), _result(1, 2, 0.2, good=False), _result(1, 3, 0.45)]
    (result,) = group_by_memory(tail, good=lambda r: r.good_match)
    assert result.hybrid_score == 0.5 and result.parts["goodPassages"] == 1


# --- End to end ----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_an_enormous_document_does_not_outrank_the_short_note_that_answers_best(user):
    pages = "\n\n".join(
        f"Page {n}. The garden committee met again; compost, hedges and the tool shed were discussed at length."
        for n in range(1, 400)
    )
    make_memory(user, title="Garden committee minutes", content=pages)
    make_memory(user, title="Hedge trimmer", content="The hedge trimmer blade is blunt; sharpen it before May.")
    note_first = hybrid_search(user.pk, "hedge trimmer blade", limit=5, group_by="memory", min_score=0)
    assert [r.title for r in note_first.results][:2] == ["Hedge trimmer", "Garden committee minutes"]
    document = note_first.results[1]
    assert document.hybrid_score < note_first.results[0].hybrid_score and document.parts["goodPassages"] >= 0
    # The document still wins what it answers best, once.
    minutes = hybrid_search(user.pk, "garden committee compost tool shed", limit=5, group_by="memory", min_score=0)
    assert minutes.results[0].title == "Garden committee minutes"
    assert len({r.memory_id for r in minutes.results}) == len(minutes.results)


@pytest.mark.django_db
def test_a_query_whose_only_match_is_a_title_is_a_good_match(user):
    make_memory(user, title="Zorblax consultancy", content="Invoice due on the fifth of June, 400 euros.")
    make_memory(user, title="Sourdough", content="Bake the loaf at 230 degrees for forty minutes.")
    response = hybrid_search(user.pk, "zorblax")
    assert [r.title for r in response.results] == ["Zorblax consultancy"]
    assert response.results[0].good_match and response.min_score is None
    assert response.floor == describe()


@pytest.mark.django_db
def test_a_caller_floor_replaces_the_rule_and_marks_what_is_not_a_good_match(user):
    make_memory(user, title="Sourdough", content="Bake the loaf at 230 degrees for forty minutes.")
    assert hybrid_search(user.pk, "loaf oven temperature").results == []  # part of the words only
    everything = hybrid_search(user.pk, "loaf oven temperature", min_score=0)
    assert [r.title for r in everything.results] == ["Sourdough"] and not everything.results[0].good_match
    assert everything.min_score == 0 and everything.floor == "hybridScore ≥ 0.00"
