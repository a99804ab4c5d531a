"""Office and e-book uploads through the API: each format becomes a memory; a bomb, an encrypted file or
one whose name lies about it gets a 4xx with its reason and leaves nothing behind."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from memories.models import Memory
from tests.files import make_pdf
from tests.memories.office_files import chapter, encrypted, make_epub, make_odf, make_pptx, make_xlsx, with_bomb

pytestmark = pytest.mark.django_db


def post(api, files):
    uploads = [SimpleUploadedFile(name, data) for name, data in files]
    return Client().post("/api/v1/uploads", {"files": uploads}, HTTP_AUTHORIZATION=f"Bearer {api.token}")


def test_every_office_and_ebook_format_becomes_a_memory(api, user):
    files = [
        ("deck.pptx", make_pptx()),
        ("budget.xlsx", make_xlsx({"Budget": [["Servers", 1200]]})),
        ("budget.csv", b"item,cost\nservers,1200\n"),
        ("survey.odt", make_odf("text", "<text:p>River survey notes</text:p>")),
        (
            "plan.ods",
            make_odf(
                "spreadsheet",
                '<table:table table:name="P"><table:table-row><table:table-cell>'
                "<text:p>Plan cell</text:p></table:table-cell></table:table-row></table:table>",
            ),
        ),
        (
            "launch.odp",
            make_odf(
                "presentation",
                "<draw:page><draw:custom-shape><text:p>Launch slide</text:p></draw:custom-shape></draw:page>",
            ),
        ),
        ("tale.epub", make_epub({"one.xhtml": chapter("Start", "The best of tests.")})),
    ]
    response = post(api, files)
    assert response.status_code == 200, response.content
    assert [r["status"] for r in response.json()["results"]] == ["created"] * len(files)
    contents = " ".join(Memory.objects.filter(owner=user).values_list("content", flat=True))
    for phrase in (
        "Roadmap 2027",
        "Servers | 1200",
        "servers | 1200",
        "River survey",
        "Plan cell",
        "Launch slide",
        "best of tests",
    ):
        assert phrase in contents


BAD = [
    ("bomb.pptx", lambda: with_bomb(make_pptx(), "ppt/slides/slide1.xml"), 413, "zip bomb"),
    ("bomb.xlsx", lambda: with_bomb(make_xlsx({"S": [["a"]]}), "xl/worksheets/sheet1.xml"), 413, "zip bomb"),
    (
        "bomb.epub",
        lambda: with_bomb(make_epub({"one.xhtml": chapter("A", "b")}), "OEBPS/text/one.xhtml"),
        413,
        "zip bomb",
    ),
    ("locked.xlsx", lambda: encrypted(make_xlsx({"S": [["a"]]})), 422, "password-protected"),
    ("locked.pptx", lambda: encrypted(make_pptx()), 422, "password-protected"),
    ("cut.epub", lambda: make_epub({"one.xhtml": chapter("A", "b")})[:300], 422, "damaged or cut short"),
    ("empty.pptx", lambda: b"", 422, "the file is empty"),
]


@pytest.mark.parametrize(("name", "make", "status", "reason"), BAD, ids=[bad[0] for bad in BAD])
def test_a_bad_office_file_gets_a_4xx_with_its_reason_and_leaves_nothing(api, user, name, make, status, reason):
    response = post(api, [(name, make())])
    if status == 413:  # an upload of only bombs answers 413 as a whole
        assert response.status_code == 413 and reason in response.json()["detail"]
    else:  # one result per file, this one rejected with its reason (422 for the file)
        assert response.status_code == 200, response.content
        [result] = response.json()["results"]
        assert result["status"] == "rejected" and reason in result["error"]
    assert not Memory.objects.filter(owner=user).exists()


@pytest.mark.parametrize(
    ("name", "make", "really"),
    [
        ("liar.xlsx", lambda: make_pdf(["I am a PDF"]), "I am a PDF"),
        ("liar.docx", lambda: make_xlsx({"Sheet": [["Servers", 1200]]}), "Servers"),
        ("liar.odt", lambda: make_epub({"one.xhtml": chapter("Rivers", "The river survey.")}), "river survey"),
        ("liar.pptx", lambda: b"Just some notes, typed as text.", "Just some notes"),
    ],
    ids=lambda value: value if isinstance(value, str) and value.startswith("liar") else "",
)
def test_a_file_whose_name_lies_is_read_as_what_it_is_and_the_notice_says_so(api, user, name, make, really):
    response = post(api, [(name, make())])
    assert response.status_code == 200, response.content
    [result] = response.json()["results"]
    assert result["status"] == "created", result
    ext = name.rsplit(".", 1)[1]
    assert any(f"the file is named .{ext} but is really" in notice for notice in result["notices"])
    memory = Memory.objects.get(owner=user)
    assert really in memory.content and memory.notices == result["notices"]
