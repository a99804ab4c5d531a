"""The sped-up spaCy pipeline annotates exactly as the stock one does."""

from __future__ import annotations

import pytest

from graph.extraction import pipeline as spacy_pipeline

TEXTS = [
    "Alice works with the Product Team in San Francisco.",
    "Python was created by Guido van Rossum at CWI in Amsterdam, and Django uses it.",
    # The attribute ruler's exceptions: multi-token patterns, dependency-based ones, spaces.
    "I ain't gonna do it, y'all. Let's go! C'mon, you gotta see it.",
    "But it rains. There is a cat.  \n\n  Two  spaces and\ttabs. He gets it, she got it, it does.",
    "Aberrant activation of Wnt signalling (β-catenin) was seen in 35% of HCC patients (n = 120).",
    "Ça va? 東京 is large 🎉 — déjà vu.",
    "",
    "   ",
    "x",
]


def _annotations(docs):
    return [
        [
            (t.text, t.tag_, t.pos_, str(t.morph), t.lemma_, t.dep_, t.head.i, t.ent_type_, t.ent_iob_, t.is_sent_start)
            for t in doc
        ]
        for doc in docs
    ]


@pytest.fixture(scope="module")
def stock():
    return spacy_pipeline.load_pipeline(fast=False)


def test_the_fast_pipeline_replaces_the_slow_parts():
    nlp = spacy_pipeline.get_nlp()
    assert isinstance(nlp.get_pipe("attribute_ruler"), spacy_pipeline.CompiledAttributeRuler)
    assert type(nlp.get_pipe("tok2vec").model.ops).__name__ == "NumpyGemmOps"


def test_fast_pipeline_gives_the_stock_annotations(stock):
    fast = list(spacy_pipeline.pipe(TEXTS * 3, batch_size=7))  # batches and step groups of mixed lengths
    assert _annotations(fast) == _annotations(stock.pipe(TEXTS * 3))


def test_pipe_keeps_the_input_order():
    docs = list(
        spacy_pipeline.pipe(["short", "a much longer text than the first one, with words", "mid text"], batch_size=2)
    )
    assert [doc.text for doc in docs] == ["short", "a much longer text than the first one, with words", "mid text"]


def test_an_attribute_ruler_it_cannot_compile_is_refused(stock):
    ruler = stock.get_pipe("attribute_ruler")
    odd = type(
        "Ruler",
        (),
        {
            "attrs": ruler.attrs[:1],
            "indices": [0],
            "patterns": [{"patterns": [[{"SHAPE": "Xxxx"}]], "attrs": {}, "index": 0}],
        },
    )()
    with pytest.raises(spacy_pipeline.Unsupported):
        spacy_pipeline.CompiledAttributeRuler(stock.vocab).load(odd)


def test_the_never_nouns_list_is_kept_in_a_file_and_derived_again_when_that_is_unreadable(settings, tmp_path):
    from graph.extraction import lexicon

    settings.DATA_DIR = tmp_path
    derived = lexicon.words_never_nouns()
    kept = lexicon._never_nouns_file()
    assert kept.is_file() and kept.parent == tmp_path / "cache"
    assert {"naive", "linear"} <= derived and "budget" not in derived
    assert lexicon.words_never_nouns() == derived  # read back from the file
    kept.write_text("[not json", encoding="utf-8")
    assert lexicon.words_never_nouns() == derived
    assert lexicon.words_never_nouns() == derived and kept.read_text(encoding="utf-8").startswith('["')
