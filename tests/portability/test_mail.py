"""Mail import: an mbox split as it streams, each message a memory with its headers, threads linked,
attachments of supported types kept as memories of their own, and re-imports and resumed imports adding
nothing; bad mail (unknown charsets, tracking pixels, broken separators, bombs) reported, never a crash."""

from __future__ import annotations

import io
import tracemalloc
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

import pytest
from django.test import Client

from graph.models import MemoryLink
from graph.services import memory_links_refresh
from memories.models import Memory
from memories.parsers.mail import EMPTY_BODY, read_message, trim_reply
from memories.services import upload_files
from portability import services as portability
from portability.sources import ImportSourceError, open_source
from portability.sources import mail as mail_source
from tests.files import make_docx, make_docx_zip_bomb

pytestmark = pytest.mark.django_db

SAMPLES = Path(__file__).parent / "data" / "mail"
START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


def message(
    n: int,
    *,
    subject: str | None = "Budget review",
    body: str = "",
    reply_to: int | None = None,
    thread: list[int] = (),
    with_id: bool = True,
    attachments: list[tuple[str, str, bytes]] = (),
    html: str | None = None,
) -> bytes:
    msg = EmailMessage()
    msg["From"] = f"Person {n} <p{n}@example.org>"
    msg["To"] = "team@example.org"
    msg["Cc"] = "Boss <boss@example.org>"
    if subject is not None:
        msg["Subject"] = subject
    msg["Date"] = format_datetime(START + timedelta(hours=n))
    if with_id:
        msg["Message-ID"] = f"<m{n}@example.org>"
    if reply_to is not None:
        msg["In-Reply-To"] = f"<m{reply_to}@example.org>"
        msg["References"] = " ".join(f"<m{t}@example.org>" for t in thread)
    msg.set_content(body or f"Message number {n} says the budget line {n} moves to the next quarter.")
    if html is not None:
        msg.add_alternative(html, subtype="html")
    for name, kind, data in attachments:
        maintype, subtype = kind.split("/")
        msg.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    return bytes(msg)


def mbox(*messages: bytes, separator: bytes | None = None) -> bytes:
    out = b""
    for data in messages:
        escaped = b"\n".join(b">" + line if line.startswith(b"From ") else line for line in data.split(b"\n"))
        out += (separator or b"From sender@example.org Fri Mar  1 09:00:00 2024") + b"\n" + escaped + b"\n\n"
    return out


def run(owner, tmp_path, data: bytes, name: str = "mail.mbox", **kwargs) -> portability.ImportReport:
    path = tmp_path / name
    path.write_bytes(data)
    return portability.import_path(owner=owner, path=path, name=name, **kwargs)


def mails(owner):
    return Memory.objects.filter(owner=owner, metadata__mail__has_key="messageId").order_by("created_at")


# --- reading one message ---------------------------------------------------------------------------


def test_a_message_keeps_subject_headers_and_date():
    mail = read_message(message(1, reply_to=0, thread=[0]))
    assert mail.subject == "Budget review"
    assert mail.metadata["from"] == "Person 1 <p1@example.org>"
    assert mail.metadata["to"] == ["team@example.org"]
    assert mail.metadata["cc"] == ["Boss <boss@example.org>"]
    assert mail.metadata["messageId"] == "m1@example.org"
    assert mail.metadata["inReplyTo"] == "m0@example.org"
    assert mail.metadata["threadId"] == "m0@example.org"  # the thread's root, from References
    assert mail.date == START + timedelta(hours=1)


def test_an_encoded_subject_is_decoded():
    data = message(1, subject="Résumé für Jörg — 会议").replace(b"\r\n", b"\n")
    assert b"=?utf-8?" in data
    assert read_message(data).subject == "Résumé für Jörg — 会议"


def test_an_unknown_charset_is_read_with_a_fallback_and_a_notice():
    data = (
        b"From: =?x-martian?q?J=F6rg?= <j@example.org>\nTo: a@example.org\nSubject: =?x-martian?q?Gr=FC=DFe?=\n"
        b"Date: Tue, 1 Mar 2011 18:02:00 +0000\nMessage-ID: <x@y>\nContent-Type: text/plain; charset=x-martian\n\n"
        b"Gr\xfc\xdfe aus K\xf6ln\n"
    )
    mail = read_message(data)
    assert mail.subject == "Grüße"
    assert mail.metadata["from"] == "Jörg <j@example.org>"
    assert mail.text == "Grüße aus Köln"
    assert any("x-martian" in notice for notice in mail.notices)


def test_a_charset_is_read_as_its_superset_as_mail_readers_do():
    gbk = "镕基说".encode("gbk")  # 镕 is GBK, not GB2312
    data = b"From: a@example.org\nTo: b@example.org\nSubject: x\nContent-Type: text/plain; charset=gb2312\n\n" + gbk
    mail = read_message(data)
    assert (mail.text, mail.notices) == ("镕基说", [])


def test_a_few_invalid_bytes_keep_the_declared_charset():
    body = ("Сообщения и профиль " * 20).encode() + b"\xff"
    data = b"From: a@example.org\nTo: b@example.org\nSubject: x\nContent-Type: text/plain; charset=utf-8\n\n" + body
    mail = read_message(data)
    assert mail.text.startswith("Сообщения и профиль")
    assert mail.notices == ["a few bytes of the text are not valid utf-8 and were replaced"]


def test_a_binary_body_is_left_out_and_said_so():
    data = b"From: a@example.org\nTo: b@example.org\nSubject: x\n\n" + bytes(range(256)) * 4
    mail = read_message(data)
    assert mail.text == ""
    assert any("not text" in notice for notice in mail.notices)


def test_html_only_mail_is_read_as_text():
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "a@example.org", "b@example.org", "Newsletter"
    msg.set_content("<html><body><h1>Spring sale</h1><p>All <b>tents</b> half price.</p></body></html>", subtype="html")
    mail = read_message(bytes(msg))
    assert "Spring sale" in mail.text and "All tents half price." in mail.text
    assert "<b>" not in mail.text


def test_html_of_only_tracking_pixels_is_an_empty_body_said_so():
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "a@example.org", "b@example.org", "Pixels"
    msg.set_content(
        '<html><body><img src="https://t.example/p.gif" width="1" height="1"></body></html>', subtype="html"
    )
    mail = read_message(bytes(msg))
    assert mail.text == ""
    assert EMPTY_BODY in mail.notices


@pytest.mark.parametrize(
    ("body", "kept", "gone"),
    [
        (
            "Yes, Thursday works.\n\nOn Tue, Mar 1, 2011 at 7:07 PM, Ann <a@x.org> wrote:\n> Can we meet?\n> Ann\n",
            "Yes, Thursday works.",
            "Can we meet?",
        ),
        ("Agreed.\n\n-- \nBob Smith\nACME Corp\n", "Agreed.", "ACME Corp"),
        (
            "See below.\n\n-----Original Message-----\nFrom: Ann\nSent: Monday\nTo: Bob\n\nOld text\n",
            "See below.",
            "Old text",
        ),
        (
            "Fine by me.\n\nFrom: Ann Lee <a@x.org>\nSent: Monday, 1 March 2021 10:00\nTo: Bob\nSubject: Plan\n\nOld\n",
            "Fine by me.",
            "Old",
        ),
        (
            "Thanks!\n\nSent from my iPhone\n\nAm 01.03.2021 um 10:00 schrieb Ann <a@x.org>:\n> Hallo\n",
            "Thanks!",
            "Hallo",
        ),
    ],
)
def test_a_trailing_quote_and_signature_are_trimmed(body, kept, gone):
    text, trimmed = trim_reply(body)
    assert trimmed in ("the quoted message", "the signature", "the quoted message and the signature")
    assert kept in text
    assert gone not in text


def test_quotes_between_the_writers_answers_stay():
    body = "> Should we ship Friday?\nYes.\n> And the docs?\nDone on Thursday.\n"
    text, _ = trim_reply(body)
    assert "> Should we ship Friday?" in text and "Done on Thursday." in text


def test_a_message_that_is_only_a_quote_is_not_trimmed_to_nothing():
    body = "> everything quoted\n> nothing else"
    assert trim_reply(body) == (body, "")


def test_what_was_trimmed_is_said():
    assert trim_reply("Yes.\n\n-- \nBob")[1] == "the signature"
    assert trim_reply("Yes.\n-- \nBob\n\nOn Monday, Ann wrote:\n> Ok?")[1] == "the quoted message and the signature"
    assert trim_reply("Yes.\n\nOn Monday, Ann wrote:\n> Ok?")[1] == "the quoted message"


# --- the mbox splitter -----------------------------------------------------------------------------


def split(data: bytes) -> list[tuple[int, int, bytes | None]]:
    return list(mail_source.split_mbox(io.BytesIO(data)))


def test_the_splitter_finds_each_message_and_unescapes_from_lines():
    first = message(1, body="Line one\nFrom the start it was clear.\nEnd")
    data = mbox(first, message(2))
    parts = split(data)
    assert [n for n, _, _ in parts] == [1, 2]
    assert b"\nFrom the start it was clear." in parts[0][2]  # mboxrd's ">From" lost its ">"
    assert parts[1][1] == data.index(b"From sender", 10)  # each message's byte offset


def test_a_body_line_starting_with_from_after_a_blank_line_does_not_split():
    body = "Here is the quote:\n\nFrom what I recall, the plan was fine.\nIt was."
    raw = message(1, body=body).replace(b">From", b"From")
    data = b"From a@b Fri Mar  1 09:00:00 2024\n" + raw + b"\n"
    parts = split(data)
    assert len(parts) == 1
    assert b"From what I recall" in parts[0][2]


def test_a_broken_from_line_still_separates_messages():
    data = mbox(message(1)) + b"From \n" + message(2) + b"\n\n" + b"From - garbage ~~\n" + message(3)
    assert [read_message(d).metadata["messageId"] for _, _, d in split(data)] == [
        "m1@example.org",
        "m2@example.org",
        "m3@example.org",
    ]


def test_text_before_the_first_separator_is_left_out_unless_it_is_a_mail():
    assert len(split(b"junk that is not mail\n\n" + mbox(message(1)))) == 1
    assert len(split(message(0) + b"\n" + mbox(message(1)))) == 2


def test_a_message_over_the_limit_is_skipped_without_being_kept(monkeypatch):
    monkeypatch.setattr(mail_source, "MAX_MESSAGE_BYTES", 4000)
    data = mbox(message(1), message(2, body="x" * 10_000), message(3))
    parts = split(data)
    assert [d is None for _, _, d in parts] == [False, True, False]


def test_splitting_a_large_mbox_keeps_memory_bounded(tmp_path):
    path = tmp_path / "big.mbox"
    one = mbox(message(1, body="word " * 2000))
    with open(path, "wb") as handle:
        for _ in range(4000):  # ~40 MB
            handle.write(one)
    tracemalloc.start()
    with open(path, "rb") as handle:
        count = sum(1 for _ in mail_source.split_mbox(handle))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert count == 4000
    assert peak < 8 * 1024 * 1024  # a message and a line at a time, never the file
    assert mail_source.count_mbox(path) == 4000


# --- importing --------------------------------------------------------------------------------------


def test_an_mbox_imports_each_message_with_its_metadata(user, tmp_path):
    data = mbox(message(1), message(2, subject="Re: Budget review", reply_to=1, thread=[1]))
    report = run(user, tmp_path, data)
    assert (report.created, report.failed, report.total) == (2, 0, 2)
    first, second = mails(user)
    assert first.title == "Budget review" and second.title == "Re: Budget review"
    assert first.created_at == START + timedelta(hours=1)
    assert second.metadata["mail"]["inReplyTo"] == "m1@example.org"
    assert second.metadata["mail"]["threadId"] == "m1@example.org"
    assert second.metadata["mail"]["mailbox"] == "mail.mbox"
    assert first.content.startswith("From: Person 1 <p1@example.org>\nTo: team@example.org\nCc: Boss")
    assert "budget line 1 moves" in first.content


def test_a_second_import_adds_nothing(user, tmp_path):
    data = mbox(*(message(n) for n in range(5)), message(9, with_id=False))
    assert run(user, tmp_path, data).created == 6
    again = run(user, tmp_path, data)
    assert (again.created, again.duplicates, again.processed) == (0, 6, 6)
    assert Memory.objects.filter(owner=user).count() == 6


def test_the_same_message_twice_in_one_mbox_is_stored_once(user, tmp_path):
    report = run(user, tmp_path, mbox(message(1), message(2), message(1)))
    assert (report.created, report.duplicates) == (2, 1)


def test_two_messages_without_ids_that_differ_only_in_their_attachment_are_both_kept(user, tmp_path):
    first = message(1, with_id=False, attachments=[("a.csv", "text/csv", b"x,y\n1,2\n")])
    second = message(1, with_id=False, attachments=[("a.csv", "text/csv", b"x,y\n3,4\n")])
    report = run(user, tmp_path, mbox(first, second))
    assert report.duplicates == 0 and report.failed == 0
    assert (
        Memory.objects.filter(owner=user, metadata__mail__has_key="key")
        .exclude(metadata__mail__has_key="attachmentOf")
        .count()
        == 2
    )
    assert run(user, tmp_path, mbox(first, second)).created == 0


def test_the_same_message_in_another_account_is_that_accounts_own(user, other_user, tmp_path):
    run(user, tmp_path, mbox(message(1)))
    assert run(other_user, tmp_path, mbox(message(1))).created == 1


def test_an_import_stopped_mid_way_resumes_without_doubling(user, tmp_path):
    data = mbox(*(message(n) for n in range(10)))
    calls = 0

    def crash(report):
        nonlocal calls
        calls += 1
        # The second report: batches are pipelined, so the first is stored while the second embeds.
        if calls == 2:
            raise RuntimeError("worker killed")

    path = tmp_path / "mail.mbox"
    path.write_bytes(data)
    source = open_source(path)
    with pytest.raises(RuntimeError):
        portability.import_source(owner=user, source=source, progress=crash, batch_size=4)
    assert Memory.objects.filter(owner=user).count() == 4
    resumed = portability.import_path(owner=user, path=path)
    assert (resumed.created, resumed.duplicates) == (6, 4)
    assert Memory.objects.filter(owner=user).count() == 10


def test_a_reimport_does_not_read_again_the_messages_it_holds(user, tmp_path, monkeypatch):
    data = mbox(*(message(n) for n in range(4)), message(9, with_id=False))
    run(user, tmp_path, data)
    read = []
    original = mail_source.message_items
    monkeypatch.setattr(mail_source, "message_items", lambda d, **kw: read.append(1) or original(d, **kw))
    again = run(user, tmp_path, data)
    assert (again.created, again.duplicates, again.processed) == (0, 5, 5)
    assert len(read) == 1  # only the message without a Message-ID had to be read to be known


def test_a_message_whose_attachment_was_not_stored_yet_is_read_again(user, tmp_path):
    csv = b"region,amount\nnorth,120\n"
    data = mbox(message(1), message(2, attachments=[("figures.csv", "text/csv", csv)]), message(3))
    path = tmp_path / "mail.mbox"
    path.write_bytes(data)
    calls = 0

    def crash(report):
        nonlocal calls
        calls += 1
        # The second report: batches are pipelined, so the first is stored while the second embeds.
        if calls == 2:
            raise RuntimeError("worker killed")

    with pytest.raises(RuntimeError):  # the batch of two stores messages 1 and 2, not the attachment
        portability.import_source(owner=user, source=open_source(path), progress=crash, batch_size=2)
    assert not Memory.objects.filter(owner=user, metadata__mail__has_key="attachmentOf").exists()
    resumed = portability.import_path(owner=user, path=path)
    assert resumed.created == 2  # the attachment and message 3
    assert Memory.objects.filter(owner=user, metadata__mail__has_key="attachmentOf").count() == 1
    assert Memory.objects.filter(owner=user).count() == 4


def test_a_message_with_no_subject_gets_a_title_that_says_so(user, tmp_path):
    run(user, tmp_path, mbox(message(1, subject=None)))
    assert mails(user).get().title == "(no subject) from Person 1, 2024-03-01"


def test_a_tracking_pixel_mail_becomes_a_memory_of_its_headers_with_a_notice(user, tmp_path):
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "shop@example.org", "me@example.org", "You left something"
    msg["Message-ID"] = "<pixel@example.org>"
    msg.set_content('<img src="https://t.example/o.gif" width=1 height=1>', subtype="html")
    report = run(user, tmp_path, mbox(bytes(msg)))
    assert report.created == 1
    memory = mails(user).get()
    assert memory.content == "From: shop@example.org\nTo: me@example.org"
    assert EMPTY_BODY in memory.notices


def test_thread_replies_are_linked_to_the_message_they_answer(user, tmp_path):
    data = mbox(
        message(1, subject="Plan"),
        message(2, subject="Re: Plan", reply_to=1, thread=[1]),
        message(3, subject="Re: Plan", reply_to=2, thread=[1, 2]),
        message(4, subject="Other"),
    )
    run(user, tmp_path, data)
    memory_links_refresh(owner=user)
    by_id = {m.metadata["mail"]["messageId"]: m.pk for m in mails(user)}
    links = {
        (link.source_id, link.target_id)
        for link in MemoryLink.objects.filter(owner=user, reason=MemoryLink.Reason.MAIL_THREAD)
    }
    pair = lambda a, b: (min(by_id[a], by_id[b]), max(by_id[a], by_id[b]))  # noqa: E731
    assert links == {pair("m1@example.org", "m2@example.org"), pair("m2@example.org", "m3@example.org")}
    link = MemoryLink.objects.filter(reason=MemoryLink.Reason.MAIL_THREAD).first()
    assert link.explanation == "a reply in one mail thread"


def test_a_supported_attachment_becomes_a_linked_memory(user, tmp_path):
    csv = b"region,amount\nnorth,120\nsouth,95\n"
    data = mbox(
        message(
            1, attachments=[("figures.csv", "text/csv", csv), ("notes.docx", "application/octet-stream", make_docx())]
        )
    )
    report = run(user, tmp_path, data)
    assert (report.created, report.failed) == (3, 0)
    # Progress counts messages: the attachments come in with theirs.
    assert (report.processed, report.total) == (1, 1)
    msg = mails(user).get()
    files = Memory.objects.filter(owner=user, metadata__mail__has_key="attachmentOf")
    assert sorted(f.metadata["filename"] for f in files) == ["figures.csv", "notes.docx"]
    assert all(f.metadata["mail"]["attachmentOf"] == "m1@example.org" for f in files)
    assert all(f.created_at == msg.created_at for f in files)
    assert [a["filename"] for a in msg.metadata["mail"]["attachments"]] == ["figures.csv", "notes.docx"]
    memory_links_refresh(owner=user)
    linked = MemoryLink.objects.filter(owner=user, reason=MemoryLink.Reason.MAIL_ATTACHMENT)
    assert {frozenset((link.source_id, link.target_id)) for link in linked} == {
        frozenset((msg.pk, f.pk)) for f in files
    }
    assert run(user, tmp_path, data).created == 0


def test_a_zip_bomb_attachment_is_refused_and_its_message_kept(user, tmp_path):
    data = mbox(message(1, attachments=[("plan.docx", "application/octet-stream", make_docx_zip_bomb(80))]))
    report = run(user, tmp_path, data)
    assert report.created == 1 and report.failed == 1
    assert "plan.docx" in report.errors[0]["item"]
    assert "zip bomb" in report.errors[0]["error"] or "decompress" in report.errors[0]["error"]
    assert mails(user).count() == 1


def test_an_attachment_over_the_upload_limit_is_refused_with_its_size(user, tmp_path, settings):
    settings.KYBERNESIS_MAX_UPLOAD_BYTES = 2000
    data = mbox(message(1, attachments=[("big.csv", "text/csv", b"a,b\n" + b"1,2\n" * 2000)]))
    report = run(user, tmp_path, data)
    assert report.created == 1 and report.failed == 1
    assert "the limit is" in report.errors[0]["error"]


def test_attachments_no_upload_reads_are_named_on_the_message(user, tmp_path):
    data = mbox(message(1, attachments=[("setup.exe", "application/octet-stream", b"MZ\x90\x00" + bytes(300))]))
    report = run(user, tmp_path, data)
    assert (report.created, report.failed) == (1, 0)
    assert any("setup.exe (not a supported type)" in n for n in mails(user).get().notices)


def test_a_single_eml_imports(user, tmp_path):
    report = run(user, tmp_path, message(7), name="note.eml")
    assert report.created == 1
    assert mails(user).get().metadata["mail"]["messageId"] == "m7@example.org"


def test_a_thunderbird_folder_without_an_extension_is_found_by_its_content(user, tmp_path):
    report = run(user, tmp_path, mbox(message(1), message(2)), name="Inbox")
    assert report.created == 2


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"", "empty"),
        (b"just some words\nand more\n", "not an mbox"),
    ],
)
def test_a_file_that_is_no_mbox_is_refused_with_a_reason(tmp_path, data, said):
    path = tmp_path / "x.mbox"
    path.write_bytes(data)
    with pytest.raises(ImportSourceError, match=said):
        open_source(path)


def test_an_import_job_shows_total_and_progress(user, tmp_path, settings):
    from django.core.files.uploadedfile import SimpleUploadedFile

    settings.DATA_DIR = str(tmp_path)
    upload = SimpleUploadedFile("archive.mbox", mbox(*(message(n) for n in range(3))))
    job = portability.import_job_create(owner=user, upload=upload)
    done = portability.import_job_run(job_id=job.pk)
    assert (done.status, done.total, done.processed, done.created) == ("done", 3, 3, 3)


# --- the upload page's .eml ------------------------------------------------------------------------


class _Upload(io.BytesIO):
    def __init__(self, name: str, data: bytes):
        super().__init__(data)
        self.name, self.size = name, len(data)


def test_an_uploaded_eml_gets_its_subject_as_title(user):
    [result] = upload_files(owner=user, files=[_Upload("message.eml", message(3, subject="Quarterly numbers"))])
    assert result.status == "created", result.error
    assert result.memory.title == "Quarterly numbers"
    assert result.memory.metadata["mail"]["messageId"] == "m3@example.org"
    assert result.memory.content.startswith("From: Person 3")


def test_an_eml_of_two_headers_is_still_read_as_mail():
    from memories.parsers import extract

    result = extract("message.eml", b"From: alice@example.org\r\nSubject: Lunch\r\n\r\nShall we meet at noon?\r\n")
    assert (result.title, result.text) == ("Lunch", "From: alice@example.org\n\nShall we meet at noon?")
    assert result.metadata["mime"] == "message/rfc822"


def test_a_text_file_that_begins_with_mail_headers_is_read_as_mail_whatever_its_name():
    from memories.parsers import extract

    data = message(4, subject="Offsite agenda").replace(b"\n", b"\r\n")
    result = extract("agenda.txt", data)
    assert result.title == "Offsite agenda"
    assert result.notices[0] == "the file is named .txt but is really a .eml file, and was read as such"


def test_an_uploaded_eml_with_attachments_says_they_were_not_read(user):
    data = message(3, attachments=[("figures.csv", "text/csv", b"a,b\n1,2\n")])
    [result] = upload_files(owner=user, files=[_Upload("message.eml", data)])
    assert any("figures.csv" in notice for notice in result.memory.notices)


# --- real mail nobody on the team wrote (SpamScope/mail-parser's test mails, Apache-2.0) -------------


def test_real_public_test_mails_import_with_none_lost_or_doubled(user, tmp_path):
    samples = sorted(SAMPLES.glob("mail_*"))
    assert len(samples) >= 6
    data = mbox(*(p.read_bytes().replace(b"\r\n", b"\n") for p in samples))
    report = run(user, tmp_path, data, name="real.mbox")
    assert report.failed == 0, report.errors
    messages = Memory.objects.filter(owner=user, metadata__mail__has_key="key").exclude(
        metadata__mail__has_key="attachmentOf"
    )
    assert messages.count() == len(samples)
    assert len({m.metadata["mail"]["key"] for m in messages}) == len(samples)
    titles = set(Memory.objects.filter(owner=user).values_list("title", flat=True))
    assert "代开各地增值税发票" in titles  # GB2312, RFC 2047
    assert run(user, tmp_path, data, name="real.mbox").created == 0


# --- the memory page ----------------------------------------------------------------------------------


def test_the_memory_page_shows_the_headers_the_thread_and_the_attachments(user, logged_in_client, tmp_path):
    data = mbox(
        message(1, subject="Plan", attachments=[("figures.csv", "text/csv", b"region,amount\nnorth,120\n")]),
        message(2, subject="Re: Plan", reply_to=1, thread=[1]),
    )
    run(user, tmp_path, data)
    first, second = mails(user)
    page = logged_in_client.get(f"/memories/{second.pk}/").content.decode()
    assert "Thread · 2 messages" in page
    assert f'href="/memories/{first.pk}/"' in page and "Person 2 &lt;p2@example.org&gt;" in page
    page = logged_in_client.get(f"/memories/{first.pk}/").content.decode()
    attachment = Memory.objects.get(owner=user, metadata__mail__has_key="attachmentOf")
    assert f'href="/memories/{attachment.pk}/">figures.csv</a>' in page
    page = logged_in_client.get(f"/memories/{attachment.pk}/").content.decode()
    assert "Attached to" in page and f'href="/memories/{first.pk}/">Plan</a>' in page


def test_another_accounts_thread_is_not_shown(user, other_user, logged_in_client, tmp_path):
    run(other_user, tmp_path, mbox(message(1, subject="Theirs")))
    run(user, tmp_path, mbox(message(2, subject="Mine", reply_to=1, thread=[1])))
    page = logged_in_client.get(f"/memories/{mails(user).get().pk}/").content.decode()
    assert "Theirs" not in page and "Thread ·" not in page


def test_a_forwarded_message_is_read_into_the_text_and_a_signature_part_is_left_out(user, tmp_path):
    inner = EmailMessage()
    inner["From"], inner["To"], inner["Subject"] = "Ann <ann@example.org>", "bob@example.org", "Venue"
    inner.set_content("The venue is the old library on Quay Street.")
    outer = EmailMessage()
    outer["From"], outer["To"], outer["Subject"] = "bob@example.org", "cy@example.org", "Fwd: Venue"
    outer["Message-ID"] = "<fwd@example.org>"
    outer.set_content("See Ann's note below.")
    outer.add_attachment(inner)
    outer.add_attachment(
        b"-----BEGIN PGP SIGNATURE-----\nabc\n-----END PGP SIGNATURE-----\n",
        maintype="application",
        subtype="pgp-signature",
        filename="signature.asc",
    )
    report = run(user, tmp_path, mbox(bytes(outer)))
    assert (report.created, report.failed) == (1, 0)
    memory = mails(user).get()
    assert "See Ann's note below." in memory.content
    assert "--- Forwarded message: Venue ---\nFrom: Ann <ann@example.org>" in memory.content
    assert "old library on Quay Street" in memory.content
    assert not any("signature.asc" in n for n in memory.notices)


def test_the_api_takes_a_thunderbird_folder_without_an_extension(api, user, django_capture_on_commit_callbacks):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("Inbox", mbox(message(1), message(2)), content_type="application/octet-stream")
    with django_capture_on_commit_callbacks(execute=True):
        response = Client().post("/api/v1/import", {"file": upload}, HTTP_AUTHORIZATION=f"Bearer {api.token}")
    assert response.status_code == 202, response.content
    status = api.get(response.json()["statusUrl"]).json()
    assert (status["status"], status["total"], status["created"]) == ("done", 2, 2)


def test_the_api_still_refuses_a_file_without_an_extension_that_is_not_mail(api):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("Notes", b"just words\n")
    response = Client().post("/api/v1/import", {"file": upload}, HTTP_AUTHORIZATION=f"Bearer {api.token}")
    assert response.status_code == 422
    assert ".mbox" in response.json()["detail"]


def test_an_attachment_that_cannot_be_read_is_named_on_its_message_not_failed(user, tmp_path):
    data = mbox(
        message(
            1,
            attachments=[
                ("invoice.pdf", "application/pdf", b"MZ\x90\x00\x03\x00\x00\x00" * 64),
                ("att1.htm", "text/html", b"<html><body></body></html>"),
            ],
        )
    )
    report = run(user, tmp_path, data)
    assert (report.created, report.failed) == (1, 0)
    [notice] = [n for n in mails(user).get().notices if n.startswith("attachments not kept")]
    assert "invoice.pdf (" in notice and "att1.htm (no extractable text" in notice
