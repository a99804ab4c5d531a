"""The link rules (graph.linkrules), table by table: rarity, when a pair is linked, its score and how
the memory page says why."""

from __future__ import annotations

import pytest

from graph.linkrules import (
    COMMON_SHARE,
    MAX_SCORE,
    PairEvidence,
    details_explanation,
    link_details,
    link_verdict,
    rarity,
)


@pytest.mark.parametrize(
    ("df", "n", "expected"),
    [
        (2, 3, 1.0),  # only the pair carries it: as distinctive as a shared thing gets, at any size
        (2, 10_000, 1.0),
        (3, 3, 0.0),  # in every memory
        (30, 100, 0.0),  # in 30% of the collection: links nothing
        (3_000, 10_000, 0.0),
        (60, 100, 0.0),
    ],
)
def test_rarity_is_one_for_the_pair_alone_and_zero_from_common_share_up(df, n, expected):
    assert rarity(df, n) == expected


def test_rarity_falls_as_more_memories_carry_a_thing():
    weights = [rarity(df, 1_000) for df in range(2, int(COMMON_SHARE * 1_000) + 2)]
    assert weights == sorted(weights, reverse=True)
    assert 0 < rarity(20, 1_000) < 1 and weights[-1] == 0.0


def evidence(sim=0.1, standing=-0.1, overlap=0.0, entities=(), tags=(), filed=(), readable=True):
    return PairEvidence(
        similarity=sim,
        standing=standing,
        overlap=overlap,
        entities=list(entities),
        tags=list(tags),
        filed=list(filed),
        readable=readable,
    )


JIT_AND_SECURITY = evidence(
    sim=0.12,
    standing=-0.2,
    overlap=0.02,
    entities=[("Google Docs", 0.9), ("web browser", 0.3), ("USA", 0.0)],
)


@pytest.mark.parametrize(
    ("pair", "linked"),
    [
        # Meaning alone: close, and closer than either memory is to its usual neighbours.
        (evidence(sim=0.6, standing=0.15), "semantic"),
        # Close, but no closer than each memory is to everything else around it (a hub).
        (evidence(sim=0.6, standing=-0.1), None),
        # Standing out, but hardly similar at all.
        (evidence(sim=0.3, standing=0.2), None),
        # One rare name without meaning is not enough ...
        (evidence(sim=0.2, overlap=0.4, entities=[("Priya Nair", 1.0)]), None),
        # ... several rare ones are, when they are much of what the two are about.
        (evidence(sim=0.2, overlap=0.4, entities=[("Priya Nair", 1.0), ("Hetzner", 0.8)]), "shared_entities"),
        (evidence(sim=0.2, overlap=0.4, tags=[("sourdough", 1.0), ("rye", 0.7)]), "shared_tags"),
        # Two rare names among hundreds (two long papers): an accident of length.
        (evidence(sim=0.2, overlap=0.05, entities=[("Priya Nair", 1.0), ("Hetzner", 0.8)]), None),
        (evidence(sim=0.29, overlap=0.01, entities=[("Toronto", 1.0), ("wide range", 0.8), ("control", 0.8)]), None),
        # Two people of one band in two short notes that hardly share a word.
        (evidence(sim=0.24, overlap=0.09, entities=[("Megan Doyle", 1.0), ("Rosa Lindqvist", 0.8)]), "shared_entities"),
        # Common things link nothing, however many.
        (evidence(sim=0.2, overlap=0.1, entities=[("USA", 0.0), ("PDF", 0.0), ("Google", 0.1)]), None),
        # The example: a JIT compiler paper and a security note.
        (JIT_AND_SECURITY, None),
        # Two texts in a language the model does not read: alike because of the language ...
        (evidence(sim=0.6, standing=0.15, readable=False), None),
        # ... so only what they share rarely, or being the same text, links them.
        (
            evidence(sim=0.6, overlap=0.4, entities=[("Verbraucherzentrale", 1.0), ("Widerruf", 0.8)], readable=False),
            "shared_entities",
        ),
        (evidence(sim=0.97, standing=0.0, readable=False), "semantic"),
        # A rare tag the person gave both by hand is a filing they made.
        (evidence(sim=0.1, tags=[("project-x", 1.0)], filed=["project-x"]), "shared_tags"),
    ],
)
def test_a_link_needs_meaning_or_several_rare_shared_things(pair, linked):
    verdict = link_verdict(pair)
    assert (verdict.reason if verdict else None) == linked


@pytest.mark.parametrize(
    "pair",
    [
        evidence(sim=0.94, standing=0.5, overlap=0.9, entities=[("A", 1.0), ("B", 1.0)]),
        evidence(sim=0.3, overlap=1.0, entities=[("A", 1.0), ("B", 1.0), ("C", 1.0)]),
        evidence(sim=0.8, standing=0.3),
    ],
)
def test_the_score_stays_under_one_unless_near_duplicates(pair):
    verdict = link_verdict(pair)
    assert verdict is not None and 0 < verdict.score <= MAX_SCORE < 1
    assert 0.5 <= verdict.confidence < 1


def test_near_duplicates_score_one():
    verdict = link_verdict(evidence(sim=1.0, standing=0.0))
    assert verdict is not None and verdict.reason == "semantic" and verdict.score == 1.0


def test_the_page_says_which_rare_things_are_shared_and_how_close_the_meaning_is():
    pair = evidence(
        sim=0.7134,
        standing=0.2,
        overlap=0.3,
        entities=[("Y", 0.6), ("X", 0.8), ("Z", 0.55), ("W", 0.5)],
        tags=[("pgvector", 0.9)],
    )
    text = details_explanation(link_details(pair))
    assert text == (
        "shares 4 rare names: X (0.8), Y (0.6), Z (0.6) and 1 more; and 1 rare tag: pgvector (0.9); "
        "similar meaning 0.71"
    )


@pytest.mark.parametrize(
    ("details", "expected"),
    [
        ({"similarity": 0.52, "entities": [["Berlin", 0.3]]}, "shares 1 name: Berlin (0.3); similar meaning 0.52"),
        ({"similarity": 0.99, "nearDuplicate": True}, "nearly the same text (0.99)"),
        (
            {"similarity": 0.1, "tags": [["project-x", 1.0]], "filed": ["project-x"]},
            "shares 1 rare tag: project-x (1.0); both filed under #project-x; similar meaning 0.10",
        ),
    ],
)
def test_explanations_read_as_sentences(details, expected):
    assert details_explanation(details) == expected
