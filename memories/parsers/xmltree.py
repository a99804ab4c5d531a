"""XML parts of documents parsed safely (no entities expanded, no DTD or network, libxml2's size and depth
limits kept), refusing a part that is not well-formed with a reason a person understands."""

from __future__ import annotations

from lxml import etree

from memories.parsers.errors import ExtractionError


def parse_xml(data: bytes, *, what: str, part: str) -> etree._Element:
    """The root element of one part (`part` names it in the message, `what` the format)."""
    parser = etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
        collect_ids=False,
    )
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise ExtractionError(f"this {what} is damaged ({part} inside it is not well-formed XML)") from exc
    if root is None:
        raise ExtractionError(f"this {what} is damaged ({part} inside it is empty)")
    return root


def local_name(element) -> str:
    """An element's name without its namespace; "" for comments, entities and the like."""
    tag = element.tag
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""
