"""Auto tags: sources, extensions, providers and content keywords; at most six; re-tag rule."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memories.auto_tags import (
    MAX_AUTO_TAGS,
    auto_tags_for,
    content_keywords,
    keyword_tag,
    needs_retag,
    prose,
)

BUDGET = (
    "Q4 budget analysis. The quarterly financial budget shows revenue growth and rising costs. "
    "The budget analysis covers financial planning for the sales team and the marketing budget."
)


def test_auto_tags_come_from_source_extension_provider_then_keywords():
    tags = auto_tags_for(
        source="connector", metadata={"filename": "Q4_Budget_Analysis.pdf", "provider": "google_drive"}, content=BUDGET
    )
    names = [t["tag"] for t in tags]
    assert names[:3] == ["connector", "pdf", "google-drive"]
    assert "budget" in names[3:] or "budget-analysis" in names[3:]
    assert all(0 < t["confidence"] <= 1 for t in tags)


def test_never_more_than_six_auto_tags():
    long_text = " ".join(f"Topic{i} discussion about subject{i} and matter{i}." for i in range(200))
    tags = auto_tags_for(source="upload", metadata={"filename": "x.md", "provider": "notion"}, content=long_text)
    assert len(tags) <= MAX_AUTO_TAGS == 6


def test_keywords_come_from_the_summary_when_there_is_one():
    tags = auto_tags_for(
        source="chat", metadata={}, content=BUDGET, summary="Kubernetes cluster upgrade plan for the platform team."
    )
    names = [t["tag"] for t in tags]
    assert "budget" not in names
    assert any("kubernetes" in n or "cluster" in n for n in names)


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("Product Team", "product-team"),
        ("the budget", "budget"),
        ("budget of", "budget"),
        ("2025", None),
        ("Q4 2025", None),
        ("and", None),
        ("x", None),
        ("Café Crème", "café-crème"),
        ("node.js", "node.js"),
        ("a" * 70, None),
    ],
)
def test_keyword_normalisation_drops_stop_words_and_numbers(phrase, expected):
    assert keyword_tag(phrase) == expected


def test_keyword_confidence_is_highest_for_the_best_keyword():
    keywords = content_keywords(BUDGET, limit=4)
    confidences = [k["confidence"] for k in keywords]
    assert confidences[0] == max(confidences) == 0.95
    assert len({k["tag"] for k in keywords}) == len(keywords)


@pytest.mark.parametrize("text", ["", "   ", "12 34 56", "🙂🙂🙂", "\x00\x01\x02"])
def test_texts_without_keywords_give_no_keyword_tags(text):
    assert content_keywords(text, limit=4) == []


NOW = datetime(2026, 11, 29, tzinfo=UTC)


@pytest.mark.parametrize(
    ("tagged_days_ago", "same_hash", "due"),
    [
        (None, True, True),
        (6.9, True, False),
        (7, True, False),
        (7.01, True, True),
        (1, False, True),
    ],
)
def test_retag_is_due_after_seven_days_or_a_content_change(tagged_days_ago, same_hash, due):
    tagged_at = None if tagged_days_ago is None else NOW - timedelta(days=tagged_days_ago)
    assert (
        needs_retag(auto_tagged_at=tagged_at, auto_tagged_hash="h", content_hash="h" if same_hash else "other", now=NOW)
        is due
    )


def test_non_english_text_gets_keywords_in_its_own_script():
    keywords = [
        k["tag"]
        for k in content_keywords(
            "La réunion budgétaire de l'équipe produit à Montréal. Le budget de l'équipe produit augmente.", limit=3
        )
    ]
    assert keywords and all(k == k.lower() and " " not in k for k in keywords)
    assert [k["tag"] for k in content_keywords("日本語 テキスト", limit=2)]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Call fib(n) then use golden_ratio here", "Call  .  then use  .  here"),
        ("node.js and camelCase and a/b and x=1 and a->b", " .  and  .  and  .  and  .  and  . "),
        ("plain words stay as they are", "plain words stay as they are"),
        ("a" * 12_000, "a" * 12_000),  # one long run with no mark: left alone (and read once, not per start)
        ("x" * 12_000 + " foo_bar baz", "x" * 12_000 + "  .  baz"),
    ],
)
def test_prose_breaks_sentences_at_code_tokens_only(line, expected):
    assert prose(line) == expected


@pytest.mark.parametrize(
    ("phrase", "fragment"),
    [
        ("Amazon Web", True),  # always "Amazon Web Services"
        ("Université François", True),  # of "Université François Rabelais"
        ("Jean-Baptiste Poquelin", False),  # a heading in capitals marks no name
        ("United States", False),
        ("States", False),  # once on its own, opening a sentence
        ("Priya Nair", False),  # "Call Priya Nair": the word before opens the sentence
        ("runbook", False),
        ("Web Services", True),  # found over a line of several spaces and a tab as well
        ("Node.js", True),  # not a run of word characters: found by a pattern
        ("node.js", True),
        ("Express", False),
    ],
)
def test_a_keyword_that_is_only_part_of_a_longer_name_is_no_tag(phrase, fragment):
    """A walk-through found the tags amazon-web and université-françois on real documents."""
    from memories.auto_tags import name_fragment

    text = (
        "Invoice from Amazon Web Services for May. The United States office pays it. Elsa Negre, "
        "Université François Rabelais Tours.\nJEAN-BAPTISTE POQUELIN MOLIÈRE\n"
        "Priya Nair sent the runbook. Call Priya Nair tomorrow. States differ.\n"
        "Billed by Amazon Web  \tServices. We run Node.js Express on Node.js Cluster."
    )
    assert name_fragment(phrase, text) is fragment


def test_german_nouns_are_no_name_fragments():
    from memories.auto_tags import name_fragment

    assert not name_fragment("Thema Verbraucherschutz", "Das Thema Verbraucherschutz Heute.", language="de")
