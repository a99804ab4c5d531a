"""Office and e-book files made in the tests: .docx written part by part (text boxes, headers, footnotes,
Strict namespaces), .pptx and .xlsx by their libraries, OpenDocument and EPUB zips by hand, encrypted
packages by msoffcrypto-tool, and zip bombs of each."""

from __future__ import annotations

import io
import re
import zipfile

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
R_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"


def zipped(members: dict[str, bytes | str], *, stored_first: str | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        if stored_first is not None:
            archive.writestr(stored_first, members[stored_first], compress_type=zipfile.ZIP_STORED)
        for name, data in members.items():
            if name != stored_first:
                archive.writestr(name, data)
    return out.getvalue()


# --- .docx -------------------------------------------------------------------------------------

_DOCX_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
    "</Types>"
)


def _p(text: str, style: str | None = None, extra: str = "") -> str:
    props = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
    return f'<w:p>{props}<w:r><w:t xml:space="preserve">{text}</w:t></w:r>{extra}</w:p>'


def _text_box(text: str) -> str:
    """A text box as Word 2010 and later write it: a drawing in a choice, the same box in VML as the
    fallback, so an old reader shows it too."""
    return (
        '<w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wp:anchor><a:graphic><a:graphicData>'
        f"<wps:wsp><wps:txbx><w:txbxContent>{_p(text)}</w:txbxContent></wps:txbx></wps:wsp>"
        "</a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice>"
        f"<mc:Fallback><w:pict><v:shape><v:textbox><w:txbxContent>{_p(text)}</w:txbxContent></v:textbox>"
        "</v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r>"
    )


_NAMESPACES = (
    f'xmlns:w="{W_NS}" xmlns:r="{R_NS}" '
    'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
    'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
    'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
    'xmlns:v="urn:schemas-microsoft-com:vml"'
)
_STYLES = (
    f'<?xml version="1.0"?><w:styles xmlns:w="{W_NS}">'
    '<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style>'
    '<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/></w:style>'
    '<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style>'
    '<w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/></w:style>'
    '<w:style w:type="paragraph" w:styleId="Chapter"><w:name w:val="Chapter"/><w:basedOn w:val="Heading1"/>'
    "</w:style>"
    '<w:style w:type="paragraph" w:styleId="ListBullet"><w:name w:val="List Bullet"/></w:style>'
    "</w:styles>"
)


def make_docx(
    body: str,
    *,
    title: str | None = None,
    header: str | None = None,
    footer: str | None = None,
    footnote: str | None = None,
    endnote: str | None = None,
) -> bytes:
    """A .docx written part by part; `body` is the body's WordprocessingML (use docx_p and friends)."""
    rels = [f'<Relationship Id="rIdStyles" Type="{REL}/styles" Target="styles.xml"/>']
    parts: dict[str, bytes | str] = {"word/styles.xml": _STYLES}
    section = ""
    for kind, text, root in (("header", header, "hdr"), ("footer", footer, "ftr")):
        if text is not None:
            parts[f"word/{kind}1.xml"] = f"<w:{root} {_NAMESPACES}>{_p(text)}</w:{root}>"
            rels.append(f'<Relationship Id="rId{kind}" Type="{REL}/{kind}" Target="{kind}1.xml"/>')
            section += f'<w:{kind}Reference w:type="default" r:id="rId{kind}"/>'
    for kind, text in (("footnote", footnote), ("endnote", endnote)):
        if text is not None:
            parts[f"word/{kind}s.xml"] = (
                f"<w:{kind}s {_NAMESPACES}>"
                f'<w:{kind} w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:{kind}>'
                f'<w:{kind} w:id="1">{_p(text)}</w:{kind}></w:{kind}s>'
            )
            rels.append(f'<Relationship Id="rId{kind}s" Type="{REL}/{kind}s" Target="{kind}s.xml"/>')
    parts["word/document.xml"] = (
        f'<?xml version="1.0" encoding="UTF-8"?><w:document {_NAMESPACES}><w:body>{body}'
        f"<w:sectPr>{section}</w:sectPr></w:body></w:document>"
    )
    parts["word/_rels/document.xml.rels"] = f'<Relationships xmlns="{PKG_REL}">{"".join(rels)}</Relationships>'
    package_rels = [f'<Relationship Id="rId1" Type="{REL}/officeDocument" Target="word/document.xml"/>']
    if title is not None:
        parts["docProps/core.xml"] = (
            '<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
            f'xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{title}</dc:title></cp:coreProperties>'
        )
        package_rels.append(
            f'<Relationship Id="rId2" Type="{PKG_REL}/metadata/core-properties" Target="docProps/core.xml"/>'
        )
    parts["_rels/.rels"] = f'<Relationships xmlns="{PKG_REL}">{"".join(package_rels)}</Relationships>'
    parts["[Content_Types].xml"] = _DOCX_TYPES
    return zipped(parts)


docx_p = _p
docx_text_box = _text_box


def docx_table(rows: list[list[str]], merged_first: bool = False) -> str:
    """A table; `merged_first` makes the first cell of the first row span two columns."""
    out = []
    for index, row in enumerate(rows):
        cells = []
        for column, text in enumerate(row):
            span = '<w:tcPr><w:gridSpan w:val="2"/></w:tcPr>' if merged_first and index == 0 and column == 0 else ""
            cells.append(f"<w:tc>{span}{_p(text)}</w:tc>")
        out.append(f"<w:tr>{''.join(cells)}</w:tr>")
    return f"<w:tbl>{''.join(out)}</w:tbl>"


def strict(package: bytes) -> bytes:
    """The package in Strict Open XML's namespaces and relationship types, as Word's "Strict Open XML
    Document" saves it (content types and package relationships keep their names)."""

    def one(match: re.Match) -> bytes:
        group, name, rest = match.group(1), match.group(2), match.group(3) or b""
        renamed = {b"extended-properties": b"extendedProperties", b"custom-properties": b"customProperties"}
        return b"http://purl.oclc.org/ooxml/" + group + b"/" + renamed.get(name, name) + rest

    pattern = re.compile(
        rb"http://schemas\.openxmlformats\.org/(wordprocessingml|spreadsheetml|presentationml|drawingml|officeDocument)/2006/([\w-]+)(/[\w-]+)?"
    )
    with zipfile.ZipFile(io.BytesIO(package)) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    return zipped(
        {name: pattern.sub(one, data) if name.endswith((".xml", ".rels")) else data for name, data in members.items()}
    )


def encrypted(package: bytes, password: str = "open-sesame") -> bytes:
    """The package encrypted as Office does it with a password: an OLE file holding EncryptionInfo and
    EncryptedPackage."""
    from msoffcrypto.format.ooxml import OOXMLFile

    out = io.BytesIO()
    OOXMLFile(io.BytesIO(package)).encrypt(password, out)
    return out.getvalue()


# --- .pptx and .xlsx -----------------------------------------------------------------------------


def make_pptx(*, core_title: str | None = None) -> bytes:
    from pptx import Presentation
    from pptx.util import Inches

    presentation = Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[1])
    slide.shapes.title.text = "Roadmap 2027"
    slide.placeholders[1].text = "Ship the sync engine\nHire two engineers"
    slide.notes_slide.notes_text_frame.text = "Mention the budget freeze."
    second = presentation.slides.add_slide(presentation.slide_layouts[5])
    second.shapes.title.text = "Costs"
    table = second.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1)).table
    for (row, column), text in {(0, 0): "Item", (0, 1): "Cost", (1, 0): "Servers", (1, 1): "1200"}.items():
        table.cell(row, column).text = text
    group = second.shapes.add_group_shape()
    group.shapes.add_textbox(Inches(1), Inches(4), Inches(3), Inches(1)).text_frame.text = "Grouped remark"
    if core_title is not None:
        presentation.core_properties.title = core_title
    out = io.BytesIO()
    presentation.save(out)
    return out.getvalue()


def make_xlsx(sheets: dict[str, list[list[object]]], *, title: str | None = None) -> bytes:
    import openpyxl

    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for row in rows:
            sheet.append(row)
    if title is not None:
        workbook.properties.title = title
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


# --- OpenDocument ------------------------------------------------------------------------------

ODF_NAMESPACES = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
    'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" '
    'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" '
    'xmlns:dc="http://purl.org/dc/elements/1.1/" '
    'xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0"'
)
ODF_TYPES = {
    "text": "application/vnd.oasis.opendocument.text",
    "spreadsheet": "application/vnd.oasis.opendocument.spreadsheet",
    "presentation": "application/vnd.oasis.opendocument.presentation",
}


def make_odf(
    kind: str,
    body: str,
    *,
    title: str | None = None,
    styles: str = "",
    automatic_styles: str = "",
    encrypted_content: bool = False,
) -> bytes:
    """An OpenDocument file of `kind` ("text", "spreadsheet", "presentation") whose office:body holds
    `body`, written as LibreOffice writes one: the mimetype first and stored, then its parts."""
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {ODF_NAMESPACES} office:version="1.3">'
        f"<office:automatic-styles>{automatic_styles}</office:automatic-styles>"
        f"<office:body><office:{kind}>{body}</office:{kind}></office:body></office:document-content>"
    )
    encryption = (
        '<manifest:encryption-data manifest:checksum-type="SHA1/1K" manifest:checksum="x">'
        '<manifest:algorithm manifest:algorithm-name="Blowfish CFB" manifest:initialisation-vector="x"/>'
        "</manifest:encryption-data>"
        if encrypted_content
        else ""
    )
    members: dict[str, bytes | str] = {
        "mimetype": ODF_TYPES[kind],
        "content.xml": bytes(range(256)) * 4 if encrypted_content else content,
        "META-INF/manifest.xml": (
            '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
            f'<manifest:file-entry manifest:full-path="/" manifest:media-type="{ODF_TYPES[kind]}"/>'
            f'<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml">{encryption}'
            "</manifest:file-entry></manifest:manifest>"
        ),
    }
    if styles:
        members["styles.xml"] = f"<office:document-styles {ODF_NAMESPACES}>{styles}</office:document-styles>"
    if title is not None:
        members["meta.xml"] = (
            f"<office:document-meta {ODF_NAMESPACES}><office:meta><dc:title>{title}</dc:title>"
            "</office:meta></office:document-meta>"
        )
    return zipped(members, stored_first="mimetype")


# --- EPUB --------------------------------------------------------------------------------------


def chapter(title: str, text: str) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head>'
        f"<title>{title}</title></head><body><h1>{title}</h1><p>{text}</p></body></html>"
    )


def make_epub(
    chapters: dict[str, str],
    *,
    spine: list[str] | None = None,
    title: str | None = "A Tale of Two Tests",
    encryption: str | None = None,
    leave_out: tuple[str, ...] = (),
) -> bytes:
    """An EPUB 3 whose chapters (file name -> XHTML, under OEBPS/text/) are read in `spine` order (the
    manifest lists them in the order given), with a navigation document that is not in the spine."""
    spine = spine or list(chapters)
    manifest = "".join(
        f'<item id="c{index}" href="text/{name}" media-type="application/xhtml+xml"/>'
        for index, name in enumerate(chapters)
    )
    ids = {name: f"c{index}" for index, name in enumerate(chapters)}
    package = (
        '<?xml version="1.0" encoding="UTF-8"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" '
        'unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        '<dc:identifier id="id">urn:uuid:1</dc:identifier>'
        + (f"<dc:title>{title}</dc:title>" if title is not None else "")
        + "<dc:language>en</dc:language></metadata><manifest>"
        '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
        f"{manifest}</manifest><spine>"
        + "".join(f'<itemref idref="{ids[name]}"/>' for name in spine)
        + "</spine></package>"
    )
    members: dict[str, bytes | str] = {
        "mimetype": "application/epub+zip",
        "META-INF/container.xml": (
            '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
            '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>"
        ),
        "OEBPS/content.opf": package,
        "OEBPS/nav.xhtml": chapter("Contents", "Table of contents: every chapter listed"),
    }
    for name, xhtml in chapters.items():
        if name not in leave_out:
            members[f"OEBPS/text/{name}"] = xhtml
    if encryption is not None:
        members["META-INF/encryption.xml"] = encryption
    return zipped(members, stored_first="mimetype")


# --- bombs -------------------------------------------------------------------------------------


def with_bomb(package: bytes, member: str, *, inflated_mb: int = 30) -> bytes:
    """The package with `member` replaced by XML that inflates to about `inflated_mb` MB from a few
    hundred KB (its sizes declared honestly; the reader's tests cover headers that lie)."""
    block = b"<y>all work and no play makes jack a dull boy</y>" * 20_000
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(package)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for info in source.infolist():
            if info.filename != member:
                archive.writestr(info, source.read(info))
        bomb = zipfile.ZipInfo(member)
        bomb.compress_type = zipfile.ZIP_DEFLATED
        with archive.open(bomb, "w", force_zip64=True) as stream:
            stream.write(b'<?xml version="1.0"?><x>')
            for _ in range(inflated_mb * 1024 * 1024 // len(block)):
                stream.write(block)
            stream.write(b"</x>")
    return out.getvalue()
