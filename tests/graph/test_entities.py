"""Extraction (pure): entity types, normalisation, relation rules, and bad input that must not crash."""

from __future__ import annotations

import pytest

from graph.extraction import canonical_key, display_name, extract_texts
from graph.vocabulary import ENTITY_TYPES


def relations(text: str) -> set[tuple[str, str, str]]:
    graph = extract_texts([text])[0]
    return {(r.source_key, r.relation_type, r.target_key) for r in graph.relations}


def mentions(text: str) -> dict[str, str]:
    return {m.name: m.type for m in extract_texts([text])[0].mentions}


@pytest.mark.parametrize(
    "text",
    [
        "Alice works with the Product Team, which is based in San Francisco.",
        "Alice works with the Product Team in San Francisco.",
        "The Product Team is located in San Francisco. Alice works closely with the Product Team.",
    ],
)
def test_spec_example_and_its_rephrasings_give_the_spec_graph(text):
    found = mentions(text)
    assert found["Alice"] == "person"
    assert found["Product Team"] == "organization"
    assert found["San Francisco"] == "location"
    edges = relations(text)
    assert ("alice", "works_with", "product team") in edges
    assert ("product team", "located_in", "san francisco") in edges


@pytest.mark.parametrize(
    "variant", ["Acme Corp", "Acme Corp.", "ACME CORP", "the Acme Corp", "Acme Corp's", "  acme   corp  "]
)
def test_company_name_variants_share_one_key(variant):
    assert canonical_key(variant, "organization") == canonical_key("Acme Corp", "organization") == "acme"


def test_normalisation_handles_articles_possessives_plurals_and_whitespace():
    assert display_name("the  Product Team's") == "Product Team"
    assert canonical_key("APIs", "technology") == canonical_key("API", "technology") == "api"
    assert canonical_key("neural networks", "concept") == "neural network"
    assert canonical_key("United States", "location") == "united states"  # names keep their plural


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Guido van Rossum created Python.", ("guido van rossum", "created", "python")),
        ("Python was created by Guido van Rossum.", ("guido van rossum", "created", "python")),
        ("The Search Team is part of Acme Corp.", ("search team", "part_of", "acme")),
        ("Bob joined the Design Team.", ("bob", "member_of", "design team")),
        ("The Data Team uses PostgreSQL for analytics.", ("data team", "uses", "postgresql")),
    ],
)
def test_verbs_and_dependency_paths_name_the_relation(text, edge):
    assert edge in relations(text)


def test_technical_terms_are_technology_entities():
    found = mentions("The service uses Django, PostgreSQL and the Stripe API.")
    assert found["Django"] == found["PostgreSQL"] == "technology"
    assert found["Stripe API"] == "technology"


def test_generic_words_do_not_become_entities():
    assert extract_texts(["This is a thing that happened some time ago, in a way."])[0].mentions == []


def test_dependency_evidence_is_more_confident_than_co_occurrence():
    graph = extract_texts(
        [
            "Alice works with the Product Team. Meanwhile, Bob and Carol visited Berlin and Paris "
            "on a long trip that the Product Team funded while Alice stayed in London."
        ]
    )[0]
    by_pair = {(r.source_key, r.target_key): r.confidence for r in graph.relations}
    assert by_pair[("alice", "product team")] > min(by_pair.values())


def test_every_type_produced_is_a_documented_type():
    graph = extract_texts(
        [
            "Alice from the Product Team flew to Berlin for PyCon with Django developers and "
            "American engineers to discuss the iPhone and machine learning."
        ]
    )[0]
    assert {m.type for m in graph.mentions} <= set(ENTITY_TYPES)


# --- Bad input: none of these crash or stall ---------------------------------------------------------


def test_text_without_entities_gives_an_empty_graph():
    graph = extract_texts(["   ", "1 2 3 4 5 ... !!!", "and then it was so."])
    assert all(not g.mentions and not g.relations for g in graph)


def test_a_one_megabyte_chunk_is_read_in_bounded_pieces():
    text = ("Alice works with the Product Team in San Francisco. " * 20_000)[:1_000_000]
    graph = extract_texts([text], max_chars=20_000)[0]
    assert graph.mentions
    assert max(m.end for m in graph.mentions) <= 20_000
    assert all(text[m.start : m.end].strip() for m in graph.mentions)


def test_offsets_point_at_the_names_in_the_original_text():
    text = "Intro.\n\nAlice works with the Product Team, which is based in San Francisco."
    mentions = extract_texts([text])[0].mentions
    assert {"Alice", "San Francisco"} <= {m.name for m in mentions}
    for m in mentions:
        assert display_name(text[m.start : m.end]) == m.name


def test_non_english_text_emoji_and_control_characters_do_not_crash():
    texts = [
        "Der schnelle braune Fuchs springt über den faulen Hund in Berlin.",
        "東京は日本の首都です。",
        "Alice 😀🚀 works\x00 with\x07 the \x1bProduct Team\u200b in San Francisco.",
        "\x01\x02\x03",
    ]
    graphs = extract_texts(texts)
    assert len(graphs) == 4
    for graph in graphs:
        for m in graph.mentions:
            assert "\x00" not in m.name and "😀" not in m.name and m.name.strip()


def test_ten_thousand_copies_of_one_name_stay_one_entity_and_bounded():
    graph = extract_texts(["Alice. " * 10_000, "Alice met Bob. " * 5_000], max_chars=100_000)
    # A lone "Alice." is no evidence of anything; a person who acts is one entity, however often.
    assert {m.key for m in graph[0].mentions} <= {"alice"} and len(graph[0].mentions) <= 400
    graph = graph[1]
    assert {m.key for m in graph.mentions if m.type == "person"} == {"alice", "bob"}  # Bob is met
    assert 0 < len(graph.mentions) <= 400
    assert len({(r.source_key, r.target_key) for r in graph.relations}) <= 1


def test_a_call_in_a_code_file_is_no_entity():
    """An identifier with its call ("golden_ratio(n)") is code, not the concept "golden_ratio n"."""
    code = "def golden_ratio(n):\n    return fib(n + 1) / fib(n)\n\nprint(golden_ratio(30))\n"
    names = {m.name for m in extract_texts([code])[0].mentions}
    assert not any("golden_ratio" in name or "(" in name for name in names), names


@pytest.mark.parametrize(
    "text, name, expected",
    [
        ("Priya is giving the talk on operators.", "Priya", "person"),  # no English word, first in its sentence
        ("Lunch with Sam on Friday.", "Sam", "person"),  # a given name that is a word, inside a sentence
        ("Rose early and walked to the station.", "Rose", None),  # a sentence's first word is no name
        # The model's organisation, for a given name that acts as someone (Hiroshi: romanised Japanese
        # given names are known since Faker's ja_JP lists were added).
        ("Coffee with Anjali and Hiroshi next week.", "Hiroshi", "person"),
        ("Call Hiroshi about the Osaka trip.", "Hiroshi", "person"),  # "Call" is no part of the name
        ("Email Priya the slides before Friday.", "Priya", "person"),
        ("Mercedes service booked for Tuesday.", "Mercedes", "organization"),  # no one acts here
        ("Dinner with my Uncle Bob.", "Uncle Bob", "person"),  # kin, not a thing one owns
        ("Lunch with Zeynep on Friday.", "Zeynep", "person"),  # the model's place
        ("Holiday in Florence next spring.", "Florence", "location"),
        ("Hiroshi moved the cluster to Hetzner last week.", "Hiroshi", "person"),  # the one who moves it
    ],
)
def test_a_lone_given_name_is_a_person(text, name, expected):
    found = {m.name: m.type for m in extract_texts([text])[0].mentions}
    assert found.get(name) == expected, found


@pytest.mark.parametrize(
    ("text", "name", "not_names"),
    [
        ("Finished Project Hail Mary by Andy Weir last night.", "Project Hail Mary", ["Finished Project Hail Mary"]),
        ("Booked Lisbon flights for the offsite.", "Lisbon", ["Booked Lisbon flights", "Booked Lisbon"]),
        ("Dialled in the grinder, then Ordered AeroPress filters from Amazon.", "Amazon", []),
    ],
)
def test_a_note_that_opens_with_its_verb_does_not_name_the_verb(text, name, not_names):
    """Notes leave out who did it ("Finished X", "Booked Y"); the model reads the capitalised verb as
    the start of the name after it."""
    found = mentions(text)
    assert name in found, found
    assert not set(not_names) & set(found), found


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        ("Finally got an AeroPress for the office.", "AeroPress", "product"),  # one has one of it
        ("Bought a Kindle Paperwhite for the commute.", "Kindle Paperwhite", "product"),
        ("Read three chapters on my Kindle during the flight.", "Kindle", "product"),
        ("She is an American who lives in Leeds.", "American", "group"),  # a noun after "an": no thing
        ("Tom recommended Project Hail Mary, the new Andy Weir novel.", "Project Hail Mary", "work"),
        ("Listened to Hard Fork, the podcast, on the run.", "Hard Fork", "work"),
        # A word no dictionary knows, used through a preposition: a service, not a person or an idea.
        ("Signed up for Strava to track the long runs.", "Strava", "organization"),
        ("Started the Andrew Ng course on Coursera.", "Coursera", "organization"),
        ("Spent the weekend in Tromsø.", "Tromsø", "location"),
        # Where data or a service moved to is a provider: one moves servers to a company, not a town.
        ("Moved the side project to Hetzner last month.", "Hetzner", "organization"),
        ("Migrated our photos from Flickr to Backblaze.", "Backblaze", "organization"),
        ("Moved the family to Kirkwall in June.", "Kirkwall", "location"),  # the model's organisation
        ("Hiroshi moved to Google in March.", "Google", "organization"),  # a known one stays
    ],
)
def test_what_a_name_is_one_of_types_it(text, name, expected):
    """An article or a possessive before a name makes it a thing one has; a work noun in apposition
    makes it a work; a service is used through a preposition."""
    assert mentions(text).get(name) == expected, mentions(text)


@pytest.mark.parametrize(
    "text", ["Dentist appointment with Dr Okafor moved to 3pm.", "Landlord replied about the boiler."]
)
def test_a_role_that_opens_a_sentence_is_no_name(text):
    assert not {"Dentist", "Landlord"} & set(mentions(text)), mentions(text)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Call Centre staff were helpful.", "Call Centre"),  # "Call" before no given name stays
        ("United Airlines lost my bag again.", "United Airlines"),  # another verb: "United" is the name's
        ("Jared Lewis Smith called about the lease.", "Jared Lewis Smith"),
    ],
)
def test_a_name_that_opens_with_a_past_form_keeps_it(text, name):
    assert name in mentions(text)


def test_a_paragraph_in_another_language_is_read_by_its_own_rules():
    """A bilingual document read as English (udhr-eng-spa.docx of unstructured's test files): the
    English model made a name of every run of Spanish words ("Todos los", "los otros" as an
    organisation)."""
    english = (
        "All human beings are born free and equal in dignity and rights. They are endowed with reason "
        "and conscience and should act towards one another in a spirit of brotherhood. "
    )
    spanish = (
        '"Todos los seres humanos nacen libres e iguales en dignidad y derechos y, dotados como están de '
        'razón y conciencia, deben comportarse fraternalmente los unos con los otros."'
    )
    text = f"{english * 2}\n\n{spanish}\n\n{english}Eleanor Roosevelt chaired the drafting committee."
    found = mentions(text)
    assert "Eleanor Roosevelt" in found, found
    assert not {"Todos los", "los otros", "los unos", "humanos nacen", "derechos y"} & set(found), found


def test_a_product_of_joined_words_keeps_its_type_when_retyped():
    """The re-typing pass reads names alone: "AeroPress" is code by shape, but a product the
    sentence said one has ("got an AeroPress") stays one; a name of code stays a concept."""
    from graph.extraction import type_for_name

    assert mentions("Finally got an AeroPress for the office.")["AeroPress"] == "product"
    assert type_for_name("AeroPress", "aeropress", "product") == "product"
    assert type_for_name("AeroPress", "aeropress", "organization") == "concept"
    assert type_for_name("golden_ratio", "golden_ratio", "product") == "concept"


@pytest.mark.parametrize(
    ("name", "entity_type", "expected"),
    [
        ("Dimanche", "location", None),  # a weekday in French (CLDR's names)
        ("Juillet", "concept", None),
        ("Montag", "organization", None),
        ("Julio", "person", "person"),  # also a given name
        ("Limited", "work", None),  # a legal form alone ends a company's name
        ("Phone", "organization", None),  # a form's label
        ("US", "organization", "location"),
        ("Gandhi Marg", "person", "location"),  # an address in India ("marg": road)
        ("Paris Cedex", "person", "location"),
        ("P. Marcel", "organization", "person"),  # initials and a name: a person cited
        ("E. Pitoura", "concept", "person"),
        ("J. Crew", "organization", "organization"),  # a word, not a name
    ],
)
def test_what_a_name_alone_settles(name, entity_type, expected):
    from graph.extraction import type_for_name

    assert type_for_name(name, canonical_key(name, entity_type), entity_type) == expected


def test_a_country_written_short_is_one_place():
    keys = {canonical_key(name, "location") for name in ("US", "U.S.", "USA", "United States", "UNITED STATES")}
    assert keys == {"united states"}
    assert canonical_key("us", "location") == "us"  # a pronoun, written so
