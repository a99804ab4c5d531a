"""Entity quality on real documents: running headers and footers, structure words, broken names,
name-like people, the kinds the sentence settles, a bounded number of entities per document,
aliases across the account, and salience by how many memories name an entity."""

from __future__ import annotations

import pytest

from graph.extraction import extract_texts
from graph.extraction.documents import MAX_ENTITIES_PER_DOCUMENT, mask_running_lines, running_lines, salient_keys
from graph.extraction.keys import display_name, is_document_structure, is_meaningful, names_a_page
from graph.extraction.layout import mask_header_rows, mask_markup
from graph.models import Entity, EntityMention
from graph.services import graph_extract_memories
from tests.factories import make_memory


def types_of(text: str) -> dict[str, str]:
    (graph,) = extract_texts([text])
    return {m.key: m.type for m in graph.mentions}


_BODY = [
    "The widget tests went well and the housing held at {n} newtons.",
    "Tolerances were checked twice; batch {n} needed a second polish.",
    "Readings drifted after lunch, so the rig was recalibrated before run {n}.",
    "Nothing unusual happened on this page; the log for day {n} is attached.",
]


def _pages(count: int, header: str = "Journal of Applied Widgets, Vol. 12 (2024)", lines: int = 1) -> list[str]:
    """A document's chunks, one page each: the header and its page number on every page, and body
    text that differs from page to page."""
    return [
        f"{header}\nPage {n} of {count}\n"
        + "\n".join(_BODY[(n + i) % len(_BODY)].format(n=n * 7 + i) + f" Item {n}-{i}." for i in range(lines))
        + "\n"
        for n in range(1, count + 1)
    ]


# --- Running headers and footers ------------------------------------------------------------------


def test_a_header_on_every_page_of_a_500_page_document_is_a_running_line():
    chunks = _pages(500)
    keys = running_lines(chunks)
    assert keys == {"journal of applied widgets, vol. # (#)", "page # of #"}
    masked = mask_running_lines(chunks)
    assert all(len(a) == len(b) for a, b in zip(chunks, masked, strict=True))  # offsets hold
    assert "Journal" not in masked[0] and "Item 1-0" in masked[0]


def test_lines_repeated_within_a_chunk_are_content_not_headers():
    # A transcript's speaker labels and a table's repeated cells come back line after line.
    words = ["tea", "coffee", "water", "juice", "soup", "milk"]
    chunks = [f"Alice:\nsome {w}\nAlice:\nmore {w}, please\nAlice:\nno {w}\n" for w in words]
    assert running_lines(chunks) == frozenset()


def test_a_short_document_has_no_running_lines():
    assert running_lines(_pages(2)) == frozenset()


@pytest.mark.django_db
def test_a_running_header_is_no_entity_of_the_document(user):
    from memories.models import MemoryChunk

    memory = make_memory(user, "\n\n".join(_pages(12, "Acme Widget Corporation Annual Report", lines=12)))
    assert MemoryChunk.objects.filter(memory=memory).count() >= 3
    graph_extract_memories(memory_ids=[memory.pk])
    names = set(Entity.objects.filter(owner=user).values_list("key", flat=True))
    assert not any("acme" in key for key in names)


# --- Structure words and broken names -------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [
        "figure",
        "figure 3",
        "table 2a",
        "table of contents",
        "abstract",
        "ii",
        "xiv",
        "section iv",
        "vol",
        "pp",
        "pdf",
        "md",
        "page 3 of 10",
        "appendix b",
        "seite 2",
        "tabelle 4",
        "capítulo iii",
        "страница 5",
    ],
)
def test_document_structure_is_never_an_entity(key):
    assert is_document_structure(key) and not is_meaningful(key, key)


@pytest.mark.parametrize("key", ["llm", "csv", "dc", "figure skating", "tableau", "lisa", "civil war", "notes"])
def test_names_that_only_look_like_structure_stay(key):
    assert not is_document_structure(key)


def test_a_name_broken_by_a_line_break_hyphen_is_joined():
    assert display_name("Trace- Monkey") == "TraceMonkey"
    assert display_name("inter-\n preter") == "interpreter"
    assert display_name("pre- and post-war") == "pre- and post-war"


def test_figures_tables_and_roman_numerals_in_a_paper_are_not_entities():
    found = types_of(
        "As Figure 3 shows, the TraceMonkey tracer beats the inter- preter. Table 2 lists the runs. "
        "Section II describes Mozilla's engine; see Abstract and Appendix B."
    )
    assert not {"figure 3", "figure", "table 2", "table", "ii", "section ii", "abstract", "appendix b"} & set(found)
    assert "inter- preter" not in found and "inter" not in found


@pytest.mark.parametrize(
    ("key", "entity_type", "expected"),
    [
        ("account activity page", "organization", True),
        ("rechnung seite", "concept", True),
        ("home page", "concept", True),
        ("larry page", "person", False),
        ("page", "concept", False),  # one word: is_document_structure's part
        ("pager duty", "organization", False),
        ("rechnung nr", "concept", True),
        ("invoice no", "organization", True),
    ],
)
def test_a_name_ending_in_a_page_word_names_a_page(key, entity_type, expected):
    assert names_a_page(key, entity_type) is expected


def test_a_page_of_a_site_and_ordinary_words_as_headings_are_not_entities():
    found = types_of(
        "Size 3.94 MB\nThe file size grows with each page.\nDetail\nThe details of your bill and your "
        "account history are available on the Account Activity Page.\n"
        "The Handbook does not present a full statement of the law.\n"
        "## Slide 1: Code 600: Sciences and Exploration Directorate\n"
        "\u2610\n\nIndicate by check mark whether the registrant filed all reports.\n"
        "Larry Page founded Google with Sergey Brin."
    )
    assert not {"size", "detail", "account activity page", "handbook", "slide", "indicate"} & set(found)
    assert found.get("larry page") == "person"


def test_markup_in_a_feed_is_no_entity():
    feed = (
        '<?xml version="1.0" encoding="utf-8"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n'
        '<channel rdf:about="http://example.org/">\n<title>Notes from Berlin</title>\n'
        "<description>Angela Merkel visited the Charité hospital in Berlin.</description>\n</channel>\n</rdf:RDF>\n"
    )
    found = types_of(feed)
    assert not {"xml", "rdf", "rdf:rdf", "channel", "description"} & set(found)
    assert found.get("angela merkel") == "person"


def test_markup_masking_keeps_offsets_and_leaves_a_quoted_tag():
    feed = '<?xml version="1.0"?>\n<feed>\n<entry a="1\n2">Hello</entry>\n</feed>'
    masked = mask_markup(feed)
    assert len(masked) == len(feed) and masked.count("\n") == feed.count("\n")
    assert "Hello" in masked and "<" not in masked
    prose = "In HTML, write <b> for bold; if a < b and c > d the test fails."
    assert mask_markup(prose) == prose


@pytest.mark.parametrize(
    ("line", "header"),
    [
        ("Pos. Menge Beschreibung Rabatt % VK-Preis", True),
        ("Artikel Aantal Prijs per stuk BTW Prijs incl. BTW", True),
        ("Datum Rechnungsnummer Kundennummer Seite", True),
        ("Die Deutsche Bahn erhöht ab Dezember die Preise", False),
        ("Anna Schmidt Peter Müller Klaus Weber", False),  # people, not labels
        ("Coolblue B.V. Weena 664 Rotterdam", False),  # figures: an address or an item row
        ("Bundesministerium der Justiz und für Verbraucherschutz", False),
        ("Rechnung Seite 1", False),
        ("Total:", False),
    ],
)
def test_a_tables_header_row_is_told_from_a_line_of_names(line, header):
    masked = mask_header_rows(f"Rechnung\n{line}\nweiter")
    assert (line.strip() not in masked) is header


def test_a_german_invoices_column_headers_are_no_entities():
    (graph,) = extract_texts(
        [
            "Rechnung Nr. 2019-0042 der QualityHosting AG in Gelnhausen.\n"
            "Pos. Menge Beschreibung Rabatt % VK-Preis\n"
            "1 1 Small Business StandardExchange 2010 3,89 3,89\n"
            "Vielen Dank für Ihren Auftrag. Mit freundlichen Grüßen, Ihre QualityHosting AG."
        ]
    )
    keys = {m.key for m in graph.mentions}
    assert not any("beschreibung" in key or "rechnung" in key for key in keys)
    assert "qualityhosting" in keys  # "AG" is one of German's stop-words, yet it ends the name


def test_a_forms_field_labels_are_not_entities():
    found = types_of(
        "DATES:\nComments must be received by May 1.\nKey Title: Reviews of Environmental Contamination\n"
        "Alice: see you at the Hilton\n"
    )
    assert "key title" not in found and "date" not in found


def test_a_heading_of_english_words_is_not_an_entity_and_a_name_on_its_own_line_is():
    found = types_of(
        "Item 1B. Unresolved Staff Comments\n\nSamsung Electronics reported its revenue.\n"
        "2.3 Practice Tips\nFile the report on time.\n\nKind regards,\nMargaret Hughes\n"
        "Invoice Summary\nInvoice Number: 42183017\n"
    )
    assert not {"unresolved staff comments", "practice tips", "invoice summary", "invoice number"} & set(found), found
    assert found.get("margaret hughes") == "person" and "samsung electronics" in found


# --- A person needs a name-like form --------------------------------------------------------------


@pytest.mark.parametrize(
    "text, name",
    [
        ("Vr.Date Vr.No Vr.Type Particulars Dr.Amt Cr.Amt Balance", "amt cr"),
        (
            "Key Title: Reviews of Environmental Contamination. Rev Environ Contam Toxicol 12: 33-40.",
            "rev environ contam",
        ),
        ("C. Drawing Robots\nPatrick Tresset and Frederic Fol Leymarie built robots that draw.", None),
        ("The meeting moved to Santa Ana on Friday, then San Ramon.", "santa ana"),
        ("Unrepresented Employee: Anjali Kausar Unrepresented Staff.", None),
    ],
)
def test_a_person_needs_a_name_like_form(text, name):
    found = types_of(text)
    people = {key for key, kind in found.items() if kind == "person"}
    assert not any(key in people for key in (name, "key title", "c drawing robots patrick tresset"))
    assert not any(key.endswith("unrepresented") or key.startswith("san ") for key in people), found


@pytest.mark.parametrize(
    "text, key",
    [
        ("The appeal was heard by Judge Fairbanks in Leeds.", "fairbanks"),
        ("The IR is booked by Chen Wei's group until Wednesday.", "chen wei"),
        ("Superintendent Wendy Gudalewicz opened the session.", "superintendent wendy gudalewicz"),
    ],
)
def test_people_with_a_name_like_form_stay_people(text, key):
    assert types_of(text).get(key) == "person"


# --- The sentence settles the kind ----------------------------------------------------------------


@pytest.mark.parametrize(
    "text, key, expected",
    [
        ("I finally read Project Hail Mary on the train.", "project hail mary", "work"),
        (
            'Her talk drew on "Designing Data-Intensive Applications" throughout.',
            "designing data-intensive applications",
            "work",
        ),
        ("We met at KubeCon Europe in Amsterdam.", "kubecon europe", "event"),
        ("It is hosted on Hetzner now, after we left Linode.", "hetzner", "organization"),
        ("I read the paper on my Kindle.", "kindle", "product"),
        ("The coffee from my AeroPress is better.", "aeropress", "product"),
    ],
)
def test_the_sentence_settles_what_kind_of_thing_a_name_is(text, key, expected):
    found = types_of(text)
    assert found.get(key) == expected, found


def test_kin_and_modifiers_after_a_possessive_are_not_products():
    found = types_of("My Monzo card was declined, so my Mum paid.")
    assert found.get("monzo") != "product"


# --- A bounded number of entities per document ----------------------------------------------------


def test_a_document_keeps_at_most_the_limit_known_names_first():
    mentions = [(f"name {n}", "person") for n in range(100)] + [("name 99", "person")] * 3
    kept = salient_keys(mentions, known={"name 50"})
    assert len(kept) == MAX_ENTITIES_PER_DOCUMENT
    assert {"name 50", "name 99", "name 0"} <= kept and "name 98" not in kept


def test_a_short_document_keeps_every_entity():
    mentions = [("alice smith", "person"), ("acme", "organization")]
    assert salient_keys(mentions, known=set()) == {"alice smith", "acme"}


@pytest.mark.django_db
def test_a_note_naming_2000_people_keeps_a_bounded_number(user):
    from graph.extraction.typing import first_names

    given = sorted(name.title() for name in first_names() if name.isalpha())[:50]
    family = ["Hughes", "Okoro", "Lewis", "Nair", "Tanaka", "Kowalski", "Garcia", "Moreau", "Jensen", "Rossi"]
    names = [f"{g} {f}" for g in given for f in family] * 4
    memory = make_memory(user, "Guests: " + ", ".join(names[:2000]) + ".")
    graph_extract_memories(memory_ids=[memory.pk])
    kept = EntityMention.objects.filter(memory=memory).order_by().values("entity_id").distinct().count()
    assert 0 < kept <= MAX_ENTITIES_PER_DOCUMENT


@pytest.mark.django_db
def test_an_all_numbers_memory_makes_no_entities(user):
    rows = "\n".join(f"2024-03-{d:02d} 4,{d}21.50 -{d * 3}.20 18,{d}44.07" for d in range(1, 29))
    memory = make_memory(user, rows)
    graph_extract_memories(memory_ids=[memory.pk])
    assert not Entity.objects.filter(owner=user).exists()


# --- Aliases across the account ------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    "full, short",
    [
        ("Daniel Kahneman wrote about two systems of thinking.", "Kahneman argues that intuition misleads."),
        ("Priya Nair runs the platform team.", "Priya suggested we move the cron jobs."),
        ("Hiroshi Tanaka reviewed the design.", "Hiroshi approved the migration plan."),
        # A paper cites its author by initials (the OLAP paper of the real documents).
        ("Patrick Marcel wrote the survey.", "As shown by P. Marcel, logs can be summarised."),
    ],
)
def test_a_lone_name_merges_into_the_one_full_name_that_carries_it(user, full, short):
    first = make_memory(user, full)
    second = make_memory(user, short)
    graph_extract_memories(memory_ids=[first.pk])
    graph_extract_memories(memory_ids=[second.pk])
    person = Entity.objects.get(owner=user, key=" ".join(full.split()[:2]).lower())
    assert person.type == "person"
    assert person.memory_count == 2, list(Entity.objects.filter(owner=user).values_list("key", "type"))


@pytest.mark.django_db
def test_a_surname_shared_by_two_full_names_stays_apart(user):
    for text in ("Daniel Kahneman wrote it.", "Sarah Kahneman edited it.", "Kahneman argues the opposite."):
        graph_extract_memories(memory_ids=[make_memory(user, text).pk])
    assert Entity.objects.filter(owner=user, key="daniel kahneman", memory_count=1).exists()
    for text in ("Dora Kahneman wrote it.", "As D. Kahneman showed, it holds."):
        graph_extract_memories(memory_ids=[make_memory(user, text).pk])
    assert Entity.objects.filter(owner=user, key="d kahneman").exists()  # Daniel or Dora


# --- Salience ------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_salience_weighs_memories_over_repetition_in_one_document(user):
    long = make_memory(user, " ".join(["The PDP-11 manual says Zork ran well."] * 40))
    notes = [make_memory(user, f"Alice Smith met the team on day {n}.") for n in range(3)]
    graph_extract_memories(memory_ids=[long.pk, *[n.pk for n in notes]])
    alice = Entity.objects.get(owner=user, key="alice smith")
    zork = Entity.objects.get(owner=user, key="zork")
    assert zork.mention_count > alice.mention_count and alice.salience > zork.salience
