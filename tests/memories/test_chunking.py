"""The chunker: at most 1200 characters, ~120 shared between neighbours, cut at natural boundaries."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memories.chunking import chunk_text

MAX, OVERLAP = 1200, 120


def assert_chunk_invariants(text: str, chunks) -> None:
    assert [c.position for c in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        assert 0 < len(chunk.text) <= MAX
        assert text[chunk.char_start : chunk.char_end] == chunk.text
        assert chunk.text == chunk.text.strip()
    for left, right in zip(chunks, chunks[1:]):
        assert right.char_start > left.char_start, "every chunk moves forward"
        assert right.char_start < left.char_end, "neighbours overlap"
    # Nothing is lost: every non-space character lies in some chunk.
    covered = set()
    for chunk in chunks:
        covered.update(range(chunk.char_start, chunk.char_end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())


def sentences(n: int) -> str:
    return " ".join(f"Sentence {i} talks about the roadmap and its budget in some detail." for i in range(n))


def test_empty_and_whitespace_only_input_give_no_chunks():
    assert chunk_text("") == []
    assert chunk_text(" \n\t \n ") == []


def test_one_character_input_is_one_chunk():
    [chunk] = chunk_text("x")
    assert (chunk.text, chunk.char_start, chunk.char_end) == ("x", 0, 1)


def test_text_within_the_limit_is_one_trimmed_chunk():
    text = "\n  " + "a" * MAX + "  \n"
    [chunk] = chunk_text(text)
    assert chunk.text == "a" * MAX and chunk.char_start == 3


def test_no_chunk_is_longer_than_1200_characters_and_neighbours_share_about_120():
    text = sentences(200)
    chunks = chunk_text(text)
    assert len(chunks) > 5
    assert_chunk_invariants(text, chunks)
    for left, right in zip(chunks, chunks[1:]):
        assert 60 <= left.char_end - right.char_start <= 180


def test_chunks_end_at_sentence_ends_when_the_text_has_sentences():
    text = sentences(200)
    chunks = chunk_text(text)
    assert all(chunk.text.endswith(".") for chunk in chunks)
    # and the overlap starts at a word, never in the middle of one
    assert all(text[c.char_start - 1] == " " for c in chunks[1:])


def test_paragraph_breaks_win_over_sentence_breaks():
    paragraphs = [sentences(9) for _ in range(6)]  # ~630 characters each
    text = "\n\n".join(paragraphs)
    chunks = chunk_text(text)
    assert_chunk_invariants(text, chunks)
    paragraph_ends = {m.start() for m in re.finditer(r"\n\n", text)}
    assert all(c.char_end in paragraph_ends for c in chunks[:-1])


def test_a_long_text_without_spaces_is_cut_hard_with_exact_overlap():
    text = "x" * 5000
    chunks = chunk_text(text)
    assert_chunk_invariants(text, chunks)
    assert [len(c.text) for c in chunks[:-1]] == [MAX] * (len(chunks) - 1)
    assert all(left.char_end - right.char_start == OVERLAP for left, right in zip(chunks, chunks[1:]))


def test_unicode_text_is_split_on_characters_not_bytes():
    text = ("Über café naïve résumé 東京は晴れです。絵文字 🎉🚀 で祝う。 " * 200).strip()
    chunks = chunk_text(text)
    assert_chunk_invariants(text, chunks)
    assert "🎉" in chunks[0].text


def test_cjk_sentences_without_spaces_still_break_at_sentence_ends():
    text = "東京は晴れです。" * 400
    chunks = chunk_text(text)
    assert_chunk_invariants(text, chunks)
    assert all(c.text.endswith("。") for c in chunks)


def test_one_megabyte_input_is_chunked_completely():
    text = (sentences(40) + "\n\n") * 400
    assert len(text) > 1_000_000
    chunks = chunk_text(text)
    assert_chunk_invariants(text, chunks)
    assert len(chunks) > 900


def test_other_sizes_can_be_configured_and_bad_ones_are_refused():
    chunks = chunk_text(sentences(30), max_chars=300, overlap=30)
    assert all(len(c.text) <= 300 for c in chunks)
    with pytest.raises(ValueError):
        chunk_text("text", max_chars=100, overlap=60)
    with pytest.raises(ValueError):
        chunk_text("text", max_chars=1)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab .\n\t!?é東🎉")), max_size=6000))
def test_invariants_hold_for_arbitrary_text(text):
    assert_chunk_invariants(text, chunk_text(text))


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=10, max_value=400), st.data())
def test_invariants_hold_for_any_size_and_overlap(max_chars, data):
    overlap = data.draw(st.integers(min_value=0, max_value=max_chars // 2 - 1))
    text = data.draw(st.text(alphabet=st.sampled_from(list("abc .\n")), max_size=3000))
    chunks = chunk_text(text, max_chars=max_chars, overlap=overlap)
    for chunk in chunks:
        assert 0 < len(chunk.text) <= max_chars
        assert text[chunk.char_start : chunk.char_end] == chunk.text
