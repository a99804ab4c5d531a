"""Tags a person gives: trimmed, lowercased and hyphenated; refused with a reason; 64 characters at most."""

from __future__ import annotations

import pytest

from memories.tag_rules import TagError, normalize_tag


@pytest.mark.parametrize(("raw", "expected"), [("  Project X ", "project-x"), ("A\tB", "a-b"), ("ok", "ok")])
def test_tags_are_trimmed_lowercased_and_hyphenated(raw, expected):
    assert normalize_tag(raw) == expected


@pytest.mark.parametrize("raw", ["", "   ", "x" * 65, "bad\x01tag", 3])
def test_bad_tags_are_refused_with_a_reason(raw):
    with pytest.raises(TagError):
        normalize_tag(raw)


def test_sixty_four_characters_is_the_longest_tag():
    assert normalize_tag("x" * 64) == "x" * 64
