"""The original file's type as the memory page names it."""

import pytest

from memories.templatetags.media_types import media_type_name


@pytest.mark.parametrize(
    ("media_type", "name"),
    [
        (
            "application/vnd.openxmlformats-officedocument.presentationml.presentation",
            "PowerPoint presentation (.pptx)",
        ),
        ("application/pdf", "PDF"),
        ("image/png", "PNG image"),
        ("text/plain", "plain text"),
        ("text/x-python", "text/x-python"),  # no label: the MIME type, short enough to read
        ("", ""),
    ],
)
def test_a_known_type_is_named_and_an_unknown_one_keeps_its_mime_type(media_type, name):
    assert media_type_name(media_type) == name
