"""A file's media type as a person names it ("PowerPoint presentation (.pptx)", not its MIME string)."""

from django import template

from memories.parsers.detect import LABELS

register = template.Library()

_ARTICLES = ("a ", "an ")


@register.filter
def media_type_name(media_type: str) -> str:
    """The label detection gives the type, without its article; the MIME type itself when it has none."""
    label = LABELS.get(media_type or "", "")
    for article in _ARTICLES:
        if label.startswith(article):
            return label[len(article) :]
    return label or media_type
