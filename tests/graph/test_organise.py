"""Self-organisation a person agrees with: entity types, aliases, re-typing, link reasons and
relative thresholds, readable tags and sentence-true previews."""

from __future__ import annotations

import pytest
from django.utils import timezone

from graph.extraction import extract_texts
from graph.models import Entity, EntityMention, MemoryLink
from graph.services import graph_extract_memories, graph_owner_retype, memory_links_refresh
from memories.auto_tags import content_keywords, keyword_tag, prose
from sleep.summarizer import is_prose_sentence, split_sentences, summarize
from tests.factories import make_memory


def types_of(text: str) -> dict[str, str]:
    (graph,) = extract_texts([text])
    return {m.key: m.type for m in graph.mentions}


def test_the_technology_gazetteer_and_its_aliases_win_over_the_models_guess():
    found = types_of(
        "We moved from MySQL to Postgres, then to PostgreSQL 16, deployed on k8s with Helm and "
        "Kubernetes. The JS build uses Vite; JavaScript tests run in Vitest."
    )
    for key in ("mysql", "postgresql", "kubernetes", "helm", "javascript", "vite", "vitest"):
        assert found.get(key) == "technology", key
    assert "postgres" not in found and "k8s" not in found and "js" not in found


@pytest.mark.parametrize(
    "text, name",
    [
        ("Autovacuum was falling behind on the embeddings table.", "autovacuum"),
        ("Cook the pasta for nine minutes.", "cook"),
        ("Meeting with the vendor went well. The meeting notes are in the drive.", "meeting"),
        ("On Tuesday the payments pods went into CrashLoopBackOff after the deploy.", "crashloopbackoff"),
        ("Two worker nodes reported Node NotReady overnight.", "node notready"),
        ("# Grinder Burr\nThe grinder burrs are worn after a year of daily espresso.", "grinder burr"),
        ("Take the Shinkansen to Kyoto, then two Shinkansen tickets back.", "shinkansen"),
        ("Monetise the app before the summer.", "monetise"),
        ("Fibonacci with memoisation is linear.", "fibonacci"),
    ],
)
def test_common_words_code_and_lone_words_are_not_people(text, name):
    found = types_of(text)
    assert found.get(name) != "person", found


@pytest.mark.parametrize(
    "text, name",
    [
        ("Priya Raman suggested we keep the setting per query.", "priya raman"),
        ("Dr. Patel moved the check-up to Thursday.", "patel"),
        ("The offsite is organised by Alice Chen in Lisbon.", "alice chen"),
        ("Tom said the venue is booked.", "tom"),
    ],
)
def test_people_are_still_people(text, name):
    assert types_of(text).get(name) == "person"


def test_event_and_place_words_settle_the_type_and_currencies_are_no_entities():
    found = types_of("Sixteen weeks to the Berlin Marathon. Buy tickets at Tokyo Station. The cleaning costs 85 EUR.")
    assert found.get("berlin marathon") == "event"
    assert found.get("tokyo station") == "location"
    assert "eur" not in found


def test_names_run_together_by_a_preposition_are_two_names():
    found = types_of("First fixture away at Kingsmeadow against Ashford Town on 2 March.")
    assert "kingsmeadow against ashford town" not in found
    assert found.get("kingsmeadow") == "location" and found.get("ashford town") == "location"
    found = types_of("The choir sings Handel's Messiah at St Mary's Church on 14 December.")
    assert found.get("st mary's church") == "location"
    assert types_of("We drove to Southend-on-Sea on Sunday.").get("southend-on-sea") != "person"
    assert "wonderland" not in types_of('We read "Alice in Wonderland" to the children.')


def test_a_lone_first_name_beside_the_full_name_is_that_person():
    found = types_of("A quote from Piotr Nowak, a local tiler. Piotr can start after Easter.")
    assert found == {**found, "piotr nowak": "person"} and "piotr" not in found


def test_business_and_club_words_make_an_organisation():
    found = types_of("Quotes from Brook & Sons and from Okoro & Partners. Riverside Rovers won on Sunday.")
    assert found.get("riverside rovers") == "organization"
    assert found.get("brook & sons") == "organization"


def test_a_rust_project_names_its_tools_as_technologies():
    found = types_of(
        "The ferrite CLI parses its TOML config with serde. The sync loop moves to tokio, reqwest "
        "replaces ureq, Clippy flagged a clone, and v0.5.0 goes to crates.io today."
    )
    for key in ("toml", "serde", "tokio", "reqwest", "ureq", "clippy", "crates io"):
        assert found.get(key) == "technology", key


def test_an_acronym_and_its_long_form_are_one_entity():
    found = types_of("A Large Language Model answers better with context. The LLM is told to cite passages.")
    assert "llm" in found and "large language model" not in found


@pytest.mark.parametrize(
    "text",
    [
        "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n\nclass Cache:\n    pass\n",
        "3.14 2.71 1.41 42 1,000,000 12:30 2024-05-01 +44 20 7946 0958",
        "Alice Alice Alice Alice Alice Alice Alice Alice Alice Alice",
        "Der Hund läuft morgen über die Straße. 東京の天気は晴れです。 Le chat dort sur le canapé.",
        "Gestern habe ich mit Frau Schneider über die Steuererklärung gesprochen. Das Finanzamt in München "
        "verlangt die Belege bis Ende Juli. Mein Steuerberater meint, dass die Fahrtkosten absetzbar sind.",
        "Nous avons visité le musée du Louvre à Paris avec Marie Dubois. Le lendemain, nous avons pris le "
        "train pour Lyon. La réservation de l'hôtel était confirmée par courriel.",
        "use std::collections::HashMap;\nfn main() {\n    let mut s: HashMap<String, u32> = HashMap::new();\n"
        '    s.insert(String::from("Blue"), 10);\n    println!("{:?}", s);\n}\n',
        "SELECT id, name FROM users WHERE created_at > NOW() - INTERVAL '7 days' ORDER BY name;",
        "12 34 56 78 90 3.5 7.25 1e10 0x1F 2026-01-05 15:30 £1,200 €45 99% 1/2",
        "Margaret Margaret Margaret Margaret Margaret Margaret Margaret Margaret",
        "",
        "\x00\x01\u200b",
    ],
)
def test_odd_text_yields_no_nonsense_entities_and_never_crashes(text):
    (graph,) = extract_texts([text])
    for mention in graph.mentions:
        assert mention.name in text or mention.name.lower() in text.lower()
        assert not any(ch in mention.name for ch in "(){}=:<>")
        # The only people are the repeated given names and the one the French note names in full.
        assert mention.type != "person" or mention.key in ("alice", "margaret", "marie dubois")
        assert len(mention.name.split()) <= 3
    # At most the four names the French note holds (Louvre, Paris, Marie Dubois, Lyon).
    assert len({m.key for m in graph.mentions}) <= 4


@pytest.mark.django_db
def test_the_retyping_pass_fixes_entities_stored_by_older_rules(user):
    now = timezone.now()
    memory = make_memory(user, "Postgres and PostgreSQL notes. Autovacuum settings. 85 EUR.")
    chunk = memory.chunks.get()

    def stored(key, name, entity_type):
        start = memory.content.find(name) if name in memory.content else 0
        entity = Entity.objects.create(
            owner=user,
            key=key,
            name=name,
            type=entity_type,
            first_seen=now,
            last_seen=now,
            mention_count=1,
            memory_count=1,
        )
        EntityMention.objects.create(
            owner=user,
            entity=entity,
            memory=memory,
            chunk=chunk,
            start=start,
            end=start + len(name),
            type=entity_type,
            surface=name,
        )
        return entity

    stored("postgres", "Postgres", "organization")
    canonical = stored("postgresql", "PostgreSQL", "technology")
    stored("autovacuum", "Autovacuum", "person")
    stored("eur", "EUR", "organization")
    result = graph_owner_retype(owner_id=user.pk)
    assert result["merged"] == 1 and result["dropped"] == 1
    keys = dict(Entity.objects.filter(owner=user).values_list("key", "type"))
    assert keys == {"postgresql": "technology", "autovacuum": "technology"}
    canonical.refresh_from_db()
    assert "postgres" in canonical.aliases and canonical.mention_count == 2
    assert graph_owner_retype(owner_id=user.pk)["retyped"] == 0  # idempotent


@pytest.mark.django_db
def test_links_form_in_a_small_collection_and_say_why(user, logged_in_client):
    a = make_memory(user, "Project Phoenix stores embeddings in PostgreSQL with the pgvector extension.")
    b = make_memory(user, "Moving Phoenix from MySQL to Postgres, because we need pgvector.")
    others = [
        make_memory(user, text)
        for text in (
            "Sourdough: 500 g flour, 350 g water, an overnight proof.",
            "Tomatoes on the balcony need daily water.",
            "The Berlin Marathon is in September; the long run is on Sunday.",
            "Dentist on Thursday at nine.",
            "Packing list for Japan: shoes, cash and a pocket Wi-Fi.",
            "The monthly budget has rent and savings.",
            "Notes on Thinking, Fast and Slow by Daniel Kahneman.",
            "Espresso shots ran sour; grind finer.",
        )
    ]
    ids = [a.pk, b.pk, *[m.pk for m in others]]
    graph_extract_memories(memory_ids=ids)
    memory_links_refresh(owner=user, memory_ids=ids)
    link = MemoryLink.objects.get(source_id=min(a.pk, b.pk), target_id=max(a.pk, b.pk), reason="shared_entities")
    assert link.explanation.startswith("shares 2 rare names: ") and "pgvector (1.0)" in link.explanation
    assert "PostgreSQL (1.0)" in link.explanation and "similar meaning" in link.explanation
    panel = logged_in_client.get(f"/graph/memories/{a.pk}/panel/").content.decode()
    assert "Shares 2 rare names" in panel and b.title in panel


@pytest.mark.django_db
def test_a_name_every_memory_shares_links_none_of_them(user):
    memories = [
        make_memory(user, f"Kubernetes note {word}: the {word} dashboard is slow.")
        for word in ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india")
    ]
    graph_extract_memories(memory_ids=[m.pk for m in memories])
    memory_links_refresh(owner=user)
    assert not MemoryLink.objects.filter(owner=user, reason="shared_entities", evidence__in=["Kubernetes"]).exists()


def test_link_explanations_read_as_sentences():
    """Links scored before their evidence was kept say what their evidence text can."""
    assert (
        MemoryLink(reason="shared_tags", evidence="project-phoenix", score=0.9).explanation
        == "shared tag project-phoenix"
    )
    assert (
        MemoryLink(reason="shared_entities", evidence="PostgreSQL|pgvector|HNSW", score=1).explanation
        == "both mention PostgreSQL, pgvector and HNSW"
    )
    assert MemoryLink(reason="semantic", evidence="", score=0.7134).explanation == "close in meaning (0.71)"


@pytest.mark.parametrize(
    "phrase", ["tuesday", "april meeting", "minutes", "sixteen", "def fib", "falling", "suggested", "eur", "fast", "42"]
)
def test_dates_numbers_units_and_lone_verbs_or_adjectives_are_no_tags(phrase):
    assert keyword_tag(phrase) is None


def test_tags_prefer_noun_phrases_and_the_canonical_name():
    assert keyword_tag("needed redis") == "redis"
    assert keyword_tag("kubernetes restarted") == "kubernetes"
    assert keyword_tag("postgres") == "postgresql"  # the graph registers its aliases
    assert keyword_tag("k8s") == "kubernetes"


def test_keywords_never_cross_code():
    text = (
        "The naive recursive Fibonacci takes exponential time.\n\n    def fib(n):\n        return n\n\n"
        "Call golden_ratio() or fibCache.get to reuse memoisation."
    )
    assert "def" not in prose(text) and "golden_ratio" not in prose(text)
    tags = [item["tag"] for item in content_keywords(text, limit=6)]
    assert tags and not any(part in tag for tag in tags for part in ("def", "fib-n", "golden", "fibcache"))


def test_previews_and_summaries_cut_at_real_sentence_boundaries():
    text = (
        "Dr. Patel moved the check-up to Thursday 14 March at 9.30 a.m. at the Elm Street clinic. "
        "Bring the X-ray results from last year. J. R. R. Tolkien wrote it in 1954."
    )
    assert split_sentences(text) == [
        "Dr. Patel moved the check-up to Thursday 14 March at 9.30 a.m. at the Elm Street clinic.",
        "Bring the X-ray results from last year.",
        "J. R. R. Tolkien wrote it in 1954.",
    ]
    _summary, preview = summarize(text)
    assert preview.startswith("Dr. Patel moved") and preview.endswith("clinic.")


@pytest.mark.parametrize(
    ("sentence", "is_prose"),
    [
        ("Mozilla produces many products such as the Firefox web browser and Thunderbird.", True),
        ("Der Reporter Claas Relotius hat den SPIEGEL mit gefälschten Artikeln in eine Krise gestürzt.", True),
        ("肉をくわえたイヌが、橋を渡っていました。", True),
        ("Artikel Aantal Prijs per stuk BTW Prijs incl.", False),  # a table's header row
        ("TRANSITION REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934", False),
        ("## Slide 1: Code 600: Sciences and Exploration Directorate (SED).", False),
        ("35 RUE du logiciel libre de Lattre Alexis Adresse email de contact Numéro de ligne", False),
        ("福娘童話集 > きょうのイソップ童話", False),
        ("Form", False),
        # Footnotes: the AWS invoice of the real documents was summed up by its small print.
        ("*** Check the GST statement attached at the end of this Invoice for details.", False),
        ("† Usage and recurring charges for this statement period will be charged on your next billing date.", False),
        ("[2] See the attached statement for the charges of this period.", False),
    ],
)
def test_prose_is_what_a_summary_is_chosen_from(sentence, is_prose):
    assert is_prose_sentence(sentence) is is_prose


def test_a_summary_skips_a_figures_labels_laid_out_in_short_lines():
    text = (
        "The recorder traces hot loops and compiles them to native code. Each trace is a single path "
        "through the loop, and side exits return to the interpreter.\n\n"
        "Interpret Bytecodes\nMonitor\nRecord LIR Trace\nExecute Compiled Trace\nhot loop/exit\n"
        "abort recording\nfinish at loop header.\n\n"
        "Nested loops are traced as trees, and the outer loop calls the inner loop's tree."
    )
    summary, _preview = summarize(text)
    assert "Interpret Bytecodes" not in summary and "outer loop calls" in summary


def test_a_summary_skips_a_letterhead_and_a_mails_header_lines():
    invoice = (
        "QualityHosting AG - Uferweg 40-42 - D-63571 Gelnhausen Rechnungsdatum\n\n"
        "Artikel Aantal Prijs per stuk BTW Prijs incl.\n\n"
        "Einwände gegen die berechneten Leistungen sind schriftlich innerhalb von vier Wochen anzuzeigen. "
        "Die Rechnung ist ohne Abzug zahlbar. Vielen Dank für Ihren Auftrag bei uns."
    )
    _summary, preview = summarize(invoice)
    assert preview.startswith("Einwände gegen")
    mail = (
        "From: Mallori Harrell <mallori@example.com>\nTo: All <all@example.com>\nDate: 2022-12-21 16:28 UTC\n\n"
        "Get excited for our first annual family day! There will be face painting and a petting zoo."
    )
    assert summarize(mail)[1] == "Get excited for our first annual family day!"


PAPER = (
    "Trace-based Just-in-Time Type Specialization for Dynamic Languages\n"
    "Andreas Gal, Brendan Eich, Mike Shaver\nMozilla Corporation\n"
    "Abstract\n"
    "Dynamic languages such as JavaScript are more difficult to compile than statically typed ones.\n"
    "Since no concrete type information is available, traditional compilers need to emit generic code.\n"
    "We present an alternative compilation technique for dynamically-typed languages.\n"
    "Categories and Subject Descriptors D.3.4 [Programming Languages]: Processors\n"
    "1. Introduction\n"
    + "When the outer loop reaches the inner loop header, the system calls the trace tree of the inner loop. "
    * 30
)


def test_a_paper_is_summed_up_by_its_abstract():
    """TraceMonkey's summary was a sentence of section 4, the TAM review's a questionnaire's item twice:
    an author's abstract says what a paper is about."""
    summary, preview = summarize(PAPER)
    assert summary.startswith("Dynamic languages such as JavaScript") and "We present" in summary
    assert "Categories" not in summary and "outer loop" not in summary
    assert preview.startswith("Dynamic languages")
    french = "Titre\nRésumé. Une façon d’assister l’analyse repose sur les logs. Nous proposons une méthode.\n\n1 Introduction\nTexte."
    assert summarize(french)[0].startswith("Une façon d’assister")
    # An invoice's "Summary" heading over figures is no abstract: it holds no sentences.
    from sleep.summarizer import abstract_of

    assert abstract_of("Summary\nTotal 4.11 USD\nVAT 0.00\nPaid by card.\n") == []
    assert abstract_of(PAPER)[0].startswith("Dynamic languages")


def test_a_summary_says_a_sentence_once():
    items = "I find the electronic mail system easy to use. " * 4
    text = items + "Overall, the mail system was judged useful by most of the staff. " + items
    summary, _ = summarize(text)
    assert summary.count("I find the electronic mail system easy to use.") == 1


@pytest.mark.django_db
def test_a_new_memory_is_linked_by_the_graph_task_that_follows_its_save(user, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        old = make_memory(user, "Autovacuum tuning for PostgreSQL: pgvector tables bloat after bulk loads.")
    for text in (
        "Bread needs flour and water.",
        "The marathon is in September.",
        "Tomatoes need sun.",
        "Book the ryokan in Kyoto.",
        "Rent goes up in May.",
    ):
        with django_capture_on_commit_callbacks(execute=True):
            make_memory(user, text)
    with django_capture_on_commit_callbacks(execute=True):
        new = make_memory(user, "The pgvector index on PostgreSQL needs autovacuum after every bulk load.")
    assert MemoryLink.objects.filter(source_id=old.pk, target_id=new.pk).exists()


def test_an_acronym_defined_in_the_text_files_its_long_form_under_it():
    first, second = extract_texts(
        [
            "We track the Service Level Objective (SLO) weekly; the SLO was missed.",
            "The SLO for checkout is 99.9 percent.",
        ]
    )
    assert {m.key for m in first.mentions if m.name.lower().startswith(("slo", "service"))} == {"slo"}
    assert "slo" in {m.key for m in second.mentions}


def test_a_defined_acronym_is_what_its_long_form_is():
    """In a real review of TAM, "TRA" and "TPB" were organisations by the model's guess, and their long
    forms, filed under them, with them."""
    (graph,) = extract_texts(
        ["Davis compared TAM with the Theory of Reasoned Action (TRA) by Fishbein. TRA explains intentions."]
    )
    assert {(m.name, m.type) for m in graph.mentions if m.key == "tra"} == {
        ("Theory of Reasoned Action", "concept"),
        ("TRA", "concept"),
    }


def test_a_name_the_model_ran_into_its_acronyms_bracket_is_still_found():
    """The model read "The World Health Organization (WHO" as one name, which no rule kept: the
    organisation was lost from every text that introduces it with its acronym."""
    (graph,) = extract_texts(["The World Health Organization (WHO) said on Monday that the outbreak was over."])
    assert ("World Health Organization", "organization") in {(m.name, m.type) for m in graph.mentions}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Theory of Planned Behavior", "concept"),
        ("Game Theory", "concept"),
        ("Riemann Hypothesis", "concept"),
        ("Principle of Least Privilege", "concept"),
        ("Federal Rules of Bankruptcy Procedure", "work"),  # a law's "Rules of", wherever it stands
        ("Code of Conduct", "work"),
        ("Bank of England", "organization"),
    ],
)
def test_an_ideas_or_a_laws_words_settle_its_type(name, expected):
    from graph.extraction import canonical_key, type_for_name

    assert type_for_name(name, canonical_key(name, "organization"), "organization") == expected


@pytest.mark.django_db
def test_the_sleep_cycle_retypes_entities_extracted_by_older_rules(user, monkeypatch):
    """Better rules reach old entities: a memory extracted by an older rules version is read again by
    the next cycle's Link step, even though its content did not change."""
    from graph.models import MemoryExtraction
    from graph.vocabulary import EXTRACTION_RULES_VERSION
    from sleep import pipeline
    from sleep.models import SleepRun

    monkeypatch.setattr("django_q.tasks.async_task", lambda *args, **kwargs: None)

    def cycle():
        run, _ = pipeline.sleep_run_request(trigger=SleepRun.Trigger.MANUAL, owner=user)
        pipeline.sleep_run_execute(run_id=run.pk)
        return {s.step: s.metrics for s in run.steps.all()}

    memory = make_memory(user, content="Final hearing before Employment Judge Harcourt in Bristol next week.")
    cycle()
    judge = Entity.objects.get(owner=user, key="harcourt")
    assert judge.type == "person"
    assert MemoryExtraction.objects.get(memory=memory).rules_version == EXTRACTION_RULES_VERSION
    assert cycle()["link"]["processed"] == 0  # nothing changed, nothing read again

    # As the older rules left it: a concept, extracted by version 1.
    EntityMention.objects.filter(entity=judge).update(type="concept")
    Entity.objects.filter(pk=judge.pk).update(type="concept")
    MemoryExtraction.objects.filter(memory=memory).update(rules_version=EXTRACTION_RULES_VERSION - 1)
    link = cycle()["link"]
    assert link["processed"] == 1 and link["extracted"] == 1
    assert Entity.objects.get(owner=user, key="harcourt").type == "person"
    assert MemoryExtraction.objects.get(memory=memory).rules_version == EXTRACTION_RULES_VERSION


@pytest.mark.parametrize(
    "text, key, expected",
    [
        # A title before the name makes a person, whatever the model's label.
        ("The ward round is led by Sister Joan Whitfield on Mondays.", "joan whitfield", "person"),
        ("The appeal was heard by Judge Fairbanks in Leeds.", "fairbanks", "person"),
        ("Ask Mr Okonkwo about the new timetable.", "okonkwo", "person"),
        # A known given name opens a person's full name; a given name before a head word stays a person.
        ("Lunch with Ingrid Halvorsen went well.", "ingrid halvorsen", "person"),
        ("Emma Stone and Jack Wood signed the lease.", "jack wood", "person"),
        # A role in apposition says what the name is.
        ("The new shirts come from the supplier, Boxwell, next week.", "boxwell", "organization"),
        # What something was bought or booked from is a seller.
        ("We ordered the replacement hinges from Hartley Fixings last week.", "hartley fixings", "organization"),
        # Name heads: a legal partnership, a coach firm, a nature reserve, a law with its year.
        ("The contract was drafted by Penrose Adler LLP.", "penrose adler", "organization"),
        ("The coach from Greenway Coaches leaves at eight.", "greenway coaches", "organization"),
        ("We walked round Holme Marshes at dawn.", "holme marshes", "location"),
        ("The claim rests on the Equality Act 2010 and its guidance.", "equality act 2010", "work"),
        # Everyday software is technology.
        ("Send the photos on WhatsApp and put the rota in Trello.", "whatsapp", "technology"),
    ],
)
def test_general_rules_type_names_a_person_agrees_with(text, key, expected):
    found = types_of(text)
    assert found.get(key) == expected, found


@pytest.mark.parametrize(
    "text, name",
    [
        ("We saw a Spotted Flycatcher and a Reed Bunting by the hide.", "reed bunting"),
        ("Rehearse Evening Hymn before the concert.", "evening hymn"),
    ],
)
def test_names_made_only_of_common_words_are_not_people(text, name):
    assert types_of(text).get(name) != "person"


def _spans_with(text: str, labelled: list[tuple[str, str]]) -> dict[str, str]:
    """The extractor's names and types for a text whose model labels are set by hand."""
    from spacy.tokens import Span

    from graph.extraction.pipeline import get_nlp
    from graph.extraction.spans import _spans

    doc = get_nlp()(text)
    ents = []
    for surface, label in labelled:
        start = text.index(surface)
        ents.append(doc.char_span(start, start + len(surface), label=label))
    doc.ents = [Span(doc, e.start, e.end, label=e.label_) for e in ents]
    return {f.key: f.type for f in _spans(doc)}


def test_a_name_the_model_ran_into_a_place_after_at_is_a_place():
    found = _spans_with(
        "Counted 30 Golden Plover at Snettisham on the rising tide.", [("Golden Plover at Snettisham", "ORG")]
    )
    assert found.get("snettisham") == "location", found


def test_a_name_in_front_of_common_nouns_is_found_with_the_kind_the_noun_gives():
    found = _spans_with("Dates are entered in the Clarion app by the Wildfowl volunteer team.", [])
    assert found.get("clarion") == "technology", found
    assert found.get("wildfowl") == "organization", found


@pytest.mark.django_db
@pytest.mark.parametrize(
    "content",
    [
        "def parse(path):\n    with open(path) as fh:\n        return [line.split(',') for line in fh]\n",
        "12 34 56 78 90 3.5 7.25 1e10 0x1F 2026-01-05 15:30 £1,200 €45 99% 1/2",
        "Harriet Harriet Harriet Harriet Harriet Harriet Harriet Harriet",
        "Gestern habe ich mit Frau Schneider über die Steuererklärung gesprochen. Das Finanzamt in München "
        "verlangt die Belege bis Ende Juli.",
        "Nous avons pris le train pour Lyon avec Marie Dubois. La réservation de l'hôtel était confirmée.",
    ],
)
def test_bad_input_through_the_api_yields_no_nonsense_entities(api, content):
    response = api.post("/api/v1/memories", {"title": "odd", "content": content})
    assert response.status_code == 201, response.content
    graph = api.get("/api/v1/graph", {"view": "entities"})
    assert graph.status_code == 200, graph.content
    entities = api.get("/api/v1/entities", {"limit": 100})
    assert entities.status_code == 200, entities.content
    items = entities.json()["items"]
    assert len(items) <= 3, items
    for item in items:
        assert item["name"].lower() in content.lower()
        assert not any(ch in item["name"] for ch in "(){}=:<>,")
        assert item["type"] != "person" or item["name"] in ("Harriet", "Marie Dubois", "Frau Schneider")


@pytest.mark.parametrize(
    "name, entity_type",
    [("Ofsted", "concept"), ("Barclays", "concept"), ("HMRC", "person"), ("Royal Mail", "location")],
)
def test_well_known_organisations_are_organisations_whatever_the_model_said(name, entity_type):
    from graph.extraction import canonical_key, type_for_name

    assert type_for_name(name, canonical_key(name, entity_type), entity_type) == "organization"


def test_the_organisation_list_leaves_everyday_words_alone():
    from graph.extraction import canonical_key, type_for_name

    for name in ("apple", "Apple", "amazon", "mind"):  # "Mind" the charity, but not "mind"
        assert type_for_name(name, canonical_key(name, "concept"), "concept") == "concept", name


@pytest.mark.django_db
def test_the_long_form_of_a_defined_acronym_finds_its_entity(user, api):
    memory = make_memory(
        user, content="The outreach team from the Intensive Treatment Unit (ITU) runs the session. The ITU is busy."
    )
    graph_extract_memories(memory_ids=[memory.pk])
    itu = Entity.objects.get(owner=user, key="itu")
    assert "intensive treatment unit" in itu.aliases
    found = api.get("/api/v1/entities", {"q": "Intensive Treatment Unit"}).json()["items"]
    assert [item["id"] for item in found] == [itu.pk]
    graph_extract_memories(memory_ids=[memory.pk])  # again: the alias is kept once
    assert Entity.objects.get(pk=itu.pk).aliases.count("intensive treatment unit") == 1
