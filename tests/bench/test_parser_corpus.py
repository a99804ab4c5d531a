"""The parser benchmark's measures: 3-gram recall, junk characters by kind, title and phrase folding, and
the reference readers that do not need a tool installed."""

from __future__ import annotations

import io
import zipfile

import pytest

from bench import parser_corpus as pc
from tests.files import make_docx


def test_recall_counts_the_references_letter_trigrams_found_whatever_the_layout():
    assert pc.recall("Compost bins arrive in May.", "compost-\nbins   ARRIVE in may") == 1.0
    assert pc.recall("abcdef", "abc") == pytest.approx(1 / 4)
    # Counted with multiplicity: one page of a repeated text is not all of it.
    assert pc.recall("ferry " * 10, "ferry") == pytest.approx(3 / 48)
    assert pc.recall("日本語のテキスト", "日本語のテキスト") == 1.0
    assert pc.recall("-- 1 --", "anything") is None
    # Ligatures and full-width forms compare as their plain letters.
    assert pc.recall("configuration", "conﬁguration") == 1.0
    assert pc.recall("Компания Аскат", "Êîìïàíèÿ Àñêàò") == 0.0


@pytest.mark.parametrize(
    ("text", "kind", "count"),
    [
        ("conﬁguration and ﬂow", "ligature", 2),
        ("page\x0cbreak\x01", "control", 2),
        ("bad \ufffd char", "replacement", 1),
        ("symbol \uf076 font", "private_use", 1),
        ("/g145/g144/g3 (cid:12)", "glyph_name", 21),
        ("cafÃ© and itâ€™s", "mojibake", 5),
        ("Êîìïàíèÿ Àñêàò", "mojibake", 13),
        ("0123456789abcdef" * 2 + "\n" + ("0123456789abcdef" * 2 + "\n") * 3, "hex_dump", 132),
    ],
)
def test_junk_counts_each_kind_in_characters(text, kind, count):
    found = pc.junk(text)
    assert found[kind] == count and found["total"] == count


def test_junk_leaves_real_text_in_any_script_alone():
    text = "Café, Straße, été, Ærø, naïve résumé; Привет мир; مرحبا; 日本語; sha256 e3b0c44298fc1c149afbf4c8996fb924\n\tend"
    assert pc.junk(text)["total"] == 0


def test_titles_and_phrases_compare_after_case_space_and_compatibility_folding():
    assert pc.title_matches("  the WASTE\nland ", ["The Waste Land"])
    assert pc.title_matches("“Free Culture”", ["Free Culture"])
    assert not pc.title_matches("wasteland", ["The Waste Land"]) and not pc.title_matches(None, ["x"])
    assert pc.phrases_found("see （ＧＨＱ） and the\nferry   leaves", ["(GHQ)", "ferry leaves", "absent"]) == 2


def _entry(tmp_path, name, data, fmt, **extra):
    path = tmp_path / name
    path.write_bytes(data)
    return pc.Entry(path=path, format=fmt, language="en", **extra)


def test_text_and_office_references_need_no_tool(tmp_path):
    entry = _entry(tmp_path, "r.txt", "Привет".encode("cp866"), "txt", reference={"kind": "text", "encoding": "cp866"})
    assert pc.reference_for(entry, entry.path.read_bytes(), tmp_path).text == "Привет"
    docx = _entry(tmp_path, "plan.docx", make_docx(), "docx")
    text = pc.reference_for(docx, docx.path.read_bytes(), tmp_path).text
    assert "Quarterly plan" in text and "Servers" in text and "Closing remarks after the table." in text
    missing = _entry(tmp_path, "x.doc", b"\xd0\xcf\x11\xe0", "doc")
    assert pc.reference_for(missing, b"", tmp_path).missing == "no reference text in the manifest"


def test_a_word_text_box_stored_twice_counts_once_in_the_reference(tmp_path):
    box = "<w:p><w:r><w:t>Boxed words</w:t></w:r></w:p>"
    body = (
        '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
        'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"><w:body><w:p><w:r>'
        f"<mc:AlternateContent><mc:Choice>{box}</mc:Choice><mc:Fallback>{box}</mc:Fallback></mc:AlternateContent>"
        "</w:r></w:p></w:body></w:document>"
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("word/document.xml", body)
    entry = _entry(tmp_path, "box.docx", out.getvalue(), "docx")
    assert pc.reference_for(entry, out.getvalue(), tmp_path).text.count("Boxed words") == 1


def test_the_manifest_reads_titles_as_lists_and_defaults_the_rest(tmp_path):
    (tmp_path / "manifest.json").write_text(
        '{"files": [{"file": "files/a.md", "format": "md", "title": "A"}, {"file": "files/b.txt", "format": "txt"}]}'
    )
    first, second = pc.load_manifest(tmp_path)
    assert first.titles == ["A"] and second.titles == [] and second.language == "und" and second.expect == "store"
