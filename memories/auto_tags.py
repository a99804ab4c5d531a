"""Auto tags: system-generated {tag, confidence} pairs, at most six per memory.

They come, in this order, from the source type, the file extension, the provider, and content
keywords. Keywords are extracted with YAKE from the summary when there is one, else from the
content (why YAKE rather than embedding-ranked n-grams: docs/decisions/0010-yake-auto-tags.md). YAKE
runs as the Rust implementation (`yake-rust`): the same algorithm and stop-words as the Python
package, with the same scores to four places on SciFact abstracts, at a fraction of its cost.

The text's language (core.language) chooses the stop-words: YAKE's English list for English and for
text whose language cannot be told, and for another language that language's list from the
stopwords-iso collection (with YAKE's own for it where there is one). Filler text (Lorem ipsum) gets
no keyword tags, and scripts written without spaces (Japanese, Chinese) get their keywords from
runs of one script instead of YAKE's space-separated words (docs/features/languages.md). Keywords of
Russian text are read in the nominative (core.inflection), so "близ Милана" and "в Милане" are both
the tag милан.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import lru_cache

from django.db.models import F, Q

from core import workers
from core.inflection import lemma, nominative_phrase
from core.language import LOREM_WORDS, calendar_words, detect_language, is_filler, language_mix
from memories.parsers.mail import without_mail_header
from memories.tag_rules import MAX_TAG_CHARS

logger = logging.getLogger(__name__)

MAX_AUTO_TAGS = 6
RETAG_AFTER = timedelta(days=7)
# YAKE's cost grows with the text; the opening of a document carries its topic, so a long memory is
# read up to this many characters.
KEYWORD_SOURCE_CHARS = 12_000

_PROVIDER_TAGS = {
    "google-drive": "google-drive",
    "google_drive": "google-drive",
    "gdrive": "google-drive",
    "notion": "notion",
}


def structural_auto_tags(*, source: str, metadata: dict) -> list[dict]:
    """Tags that follow from where a memory came from: source type, file extension, provider."""
    candidates: list[str] = [source]
    extension = str(metadata.get("extension") or "").lower().lstrip(".")
    if not extension and metadata.get("filename"):
        name = str(metadata["filename"])
        if "." in name.strip("."):
            extension = name.rsplit(".", 1)[1].lower()
    if extension and re.fullmatch(r"[a-z0-9]{1,10}", extension):
        candidates.append(extension)
    provider = str(metadata.get("provider") or "").lower()
    if provider:
        candidates.append(_PROVIDER_TAGS.get(provider, provider))
    tags: list[dict] = []
    for tag in candidates:
        if tag and tag not in (t["tag"] for t in tags):
            tags.append({"tag": tag, "confidence": 1.0})
    return tags[:MAX_AUTO_TAGS]


# --- Content keywords --------------------------------------------------------------------------


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    """YAKE's English stop-words (574 words)."""
    return frozenset(w.strip().lower() for w in _extractor().stopwords if w.strip())


KEYWORD_CANDIDATES = 20
# Languages whose YAKE stop-word list yake-rust ships (it cannot be asked which without failing).
YAKE_LANGUAGES = frozenset(
    "ar bg br da de el en es et fa fi fr hi hr hu hy id it ja lt lv nl no pl pt ro ru sk sl sv tr uk zh".split()
)
# Scripts written without spaces between words: a space-separated "word" there is a whole sentence.
NO_SPACE_LANGUAGES = frozenset({"ja", "zh", "th", "lo", "km", "my"})
# A language read in at least this share of a text's letters adds its stop-words to the text's.
STOPWORD_LANGUAGE_SHARE = 0.1


@lru_cache(maxsize=1)
def _extractor():
    import yake_rust

    # Two-word keywords at most: longer YAKE phrases read as fragments, not tags.
    return yake_rust.Yake(language="en", ngrams=2, deduplication_threshold=0.7)


@lru_cache(maxsize=64)
def language_stopwords(language: str) -> frozenset[str]:
    """A language's stop-words: YAKE's English list for English or an unknown language; else that
    language's stopwords-iso list with YAKE's own for it, where either exists."""
    if not language or language == "en":
        return stopwords()
    import stopwordsiso
    import yake_rust

    words: set[str] = set()
    if stopwordsiso.has_lang(language):
        words |= {w.lower() for w in stopwordsiso.stopwords(language)}
    if language in YAKE_LANGUAGES:
        words |= {w.strip().lower() for w in yake_rust.Yake(language=language).stopwords if w.strip()}
    return frozenset(words)


def text_stopwords(languages: tuple[str, ...]) -> frozenset[str]:
    """The stop-words of every language a text is written in, English's always among them (code and
    quoted English appear in text of any language)."""
    words = set(stopwords())
    for language in languages:
        words |= language_stopwords(language)
    return frozenset(words)


@lru_cache(maxsize=16)
def _language_extractor(languages: tuple[str, ...]):
    if languages in ((), ("en",)):
        return _extractor()
    import yake_rust

    return yake_rust.Yake(stopwords=set(text_stopwords(languages)), ngrams=2, deduplication_threshold=0.7)


# A word starts with a letter in any script and may carry the marks of technical terms (c++, c#, node.js).
_WORD = re.compile(r"[^\W\d_](?:[\w+#.'-]*[\w+#])?")


# Words that make a poor tag anywhere in it: dates and times, units and currencies, say nothing
# about what a memory is about ("tuesday", "minutes", "eur").
TIME_AND_UNIT_WORDS = frozenset(
    """
monday tuesday wednesday thursday friday saturday sunday january february march april may june july august
september october november december today tomorrow yesterday tonight morning evening afternoon night
weekend weekday week weeks day days month months year years hour hours minute minutes second seconds
time times ago daily weekly monthly yearly annual quarter eur usd gbp jpy chf kg km mb gb ms per cent
percent one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen
seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million
billion dozen once twice
""".split()
)
# Words that are no tag on their own: generic verbs, adjectives and adverbs a keyword extractor keeps
# because they are rare in the text, not because they say what it is about.
GENERIC_WORDS = frozenset(
    """
fast slow quick quickly new old good bad big small large little high low great better best worse worst
easy hard simple full empty next last first second third early late long short main real right wrong
true false open close closed free cheap sure able likely quiet ready heavy light strong weak whole
instant instead anyway also still just really maybe perhaps often always never sometimes already
make makes made making take takes took taken taking get gets got getting give gives gave go goes went
going come comes came keep keeps kept put puts set sets run runs ran use uses used using need needs
needed want wants wanted try tries tried see sees saw seen look looks looked find finds found work works
worked show shows showed tell tells told ask asks asked call calls called move moves moved start starts
started stop stops stopped check checks checked add adds added drop drops dropped fix fixes fixed
deploy deploys deployed plan plans planned book books booked win wins won cost costs offer offers
describe describes described suggest suggests suggested include includes included reach reaches
happen happens happened seem seems seemed become becomes became stay stays stayed turn turns turned
leave leaves left bring brings brought hold holds held write writes wrote read reads thing things stuff
way ways lot lots kind sort part parts point points case cases fact place example end result results
problem issue idea question bit area side level number numbers rest edge top bottom front back half
""".split()
)
# Keywords of programming languages: a tag with one is a fragment of code ("def-fib", "return-n").
CODE_WORDS = frozenset(
    "def elif lambda self cls none null nil true false return import func fn const var let "
    "println printf endif elsif args kwargs init str int bool async await".split()
)
# A run of characters that belongs to code: a call, snake_case, camelCase, a dotted or path name,
# an operator; keywords are never taken across one ("def-golden", "fib-n").
_CODE_MARK = re.compile(r"\w\(|_|[a-z][A-Z]|\w\.\w|::|->|=|[{}\[\];<>]|/\w")
# A token is a run without spaces and outside the scripts written without them, so a Japanese
# sentence with "PostgreSQL" in it loses that word, not the whole sentence.
_TOKEN = re.compile(r"[^\s\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]+")
_CODE_LINE = re.compile(
    r"^(?:\s{4,}|\t)\S|^\s*(?:def|class|import|from|return|function|const|let|var|if|for|while)\b.*[:({;=]\s*$"
)


def _prose_token(match: re.Match) -> str:
    return " . " if _CODE_MARK.search(match.group()) else match.group()


def prose(text: str) -> str:
    """The text with its code left out: fenced and indented blocks and code-looking lines are
    dropped, and identifiers inside sentences become sentence breaks, so a keyword never spans one."""
    lines: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            lines.append(".")
            continue
        if fenced or _CODE_LINE.match(line):
            lines.append(".")
            continue
        # Token by token: one pattern over the whole line ("\S*(?:mark)\S*") would backtrack through
        # every start of a long unbroken run, quadratically.
        lines.append(_TOKEN.sub(_prose_token, line))
    return "\n".join(lines)


# Lorem ipsum words that are no English word either: a tag made of them comes from filler.
FILLER_TAG_WORDS = LOREM_WORDS - {"class", "per", "leo", "dis", "sem", "non", "nam", "ante", "massa", "magna", "mus"}
_MIXED_SCRIPT_LETTERS = ("LATIN", "CYRILLIC", "GREEK")


def mojibake(word: str) -> bool:
    """Whether a word is text decoded with the wrong encoding ("Ã¼ber", "ÐŸÑ€Ð¸"): ftfy's test for
    such sequences, a replacement character, or Latin, Cyrillic and Greek letters mixed in one word."""
    if word.isascii():
        return False
    if "\ufffd" in word:
        return True
    from ftfy.badness import is_bad

    if is_bad(word):
        return True
    scripts = set()
    for ch in word:
        if ch.isalpha():
            name = unicodedata.name(ch, "")
            scripts.update(s for s in _MIXED_SCRIPT_LETTERS if name.startswith(s))
    return len(scripts) > 1


_TAG_ALIASES: dict[str, str] = {}
_NOT_NOUNS: list = [None]  # a callable returning the words that are only verbs, adjectives or adverbs


def register_tag_vocabulary(*, aliases: dict[str, str], not_nouns=None) -> None:
    """What the graph knows about words, for tags: other names of one thing -> the tag it is filed
    under ("postgres" -> "postgresql"), so a tag says what the graph's entity is called; and a
    callable returning the English words that are never nouns (loaded on first use), so a lone
    verb or adjective is not a tag."""
    _TAG_ALIASES.clear()
    _TAG_ALIASES.update(aliases)
    _NOT_NOUNS[0] = not_nouns


@lru_cache(maxsize=1)
def _not_nouns() -> frozenset[str]:
    return frozenset(_NOT_NOUNS[0]()) if _NOT_NOUNS[0] is not None else frozenset()


def _weak(word: str) -> bool:
    """A word a tag should not start or end with: a date, time or unit, a generic word, a verb
    form ("restarted") or a word that is never a noun ("naive", "linear")."""
    if word in TIME_AND_UNIT_WORDS or word in GENERIC_WORDS or (word.endswith("ed") and len(word) > 4):
        return True
    never = _not_nouns()
    if word in never:
        return True
    # Inflected forms of such words: "lighter", "sweetest", "evicts", "reimburses".
    for suffix in ("est", "er", "es", "s"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            stem = word[: -len(suffix)]
            if stem in never or stem + "e" in never or (len(stem) > 2 and stem[-1] == stem[-2] and stem[:-1] in never):
                return True
    return False


_IDEOGRAPH = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def _too_short(word: str) -> bool:
    """A word too short to be a tag alone: under three letters, or under two in ideographs and hangul,
    where two already make a word ("北京")."""
    return len(word) < (2 if _IDEOGRAPH.search(word) else 3)


def keyword_tag(
    phrase: str, *, stop: frozenset[str] | None = None, latin: bool = False, language: str = ""
) -> str | None:
    """A keyword phrase as a tag: lowercase words joined by hyphens, or None when it is not worth a tag
    (stop-words at either end, numbers, single letters, dates, times and units, a lone generic verb
    or adjective, mojibake, Lorem ipsum words unless the text is Latin, or longer than a tag may be).
    `stop` is the text's stop-words (English's by default). A known alias becomes its canonical name.
    In a language that declines its words (`language`, the text's), the phrase is put in the
    nominative ("близ милана" is "милан"), so each case of one word is one tag."""
    if any(mojibake(w) for w in phrase.split()):  # before lowercasing: "Ã¼" is mojibake, "ã¼" may not look it
        return None
    return _tag_of_words(phrase, stop=stop, latin=latin, language=language)


# An elided article, preposition or pronoun of French or Italian in front of a word ("qu'il", "l'homme",
# "dell'arte"): the word is what follows it.
_ELIDED = re.compile(r"^(?:l|d|j|m|n|s|t|c|qu|jusqu|lorsqu|puisqu|quoiqu|dell|dall|nell|sull|all|un)['’](?=\w)")


def _tag_of_words(phrase: str, *, stop: frozenset[str] | None, latin: bool, language: str) -> str | None:
    words = [_ELIDED.sub("", w.strip(".'-")) for w in re.split(r"[\s_/]+", phrase.lower()) if w.strip(".'-")]
    stop = stopwords() if stop is None else stop
    while words and words[0] in stop:
        words.pop(0)
    while words and words[-1] in stop:
        words.pop()
    if "-".join(words) in _TAG_ALIASES:  # "k8s" is "kubernetes", digits and all
        return _TAG_ALIASES["-".join(words)]
    if not words or any(not _WORD.fullmatch(w) or any(ch.isdigit() for ch in w) for w in words):
        return None
    if any(w in CODE_WORDS for w in words):
        return None
    if not latin and all(w in FILLER_TAG_WORDS for w in words):
        return None
    if len(words) == 1 and _too_short(words[0]):
        return None
    if any(w in TIME_AND_UNIT_WORDS or w in calendar_words() for w in words):
        return None  # "tuesday", "juillet", "montag": a date says nothing of what a memory is about
    # Prefer the noun phrase: "needed redis" is "redis", "legs heavy" is "legs".
    while words and _weak(words[0]):
        words.pop(0)
    while words and _weak(words[-1]):
        words.pop()
    if not words or (len(words) == 1 and (_too_short(words[0]) or words[0].endswith("ly"))):
        return None
    words = nominative_phrase(words, language)
    tag = "-".join(words)
    tag = _TAG_ALIASES.get(tag, tag)
    return tag if len(tag) <= MAX_TAG_CHARS else None


def _singular(tag: str) -> str:
    if tag.endswith("ies") and len(tag) > 4:
        return tag[:-3] + "y"
    if tag.endswith("s") and not tag.endswith(("ss", "us", "is")) and len(tag) > 3:
        return tag[:-1]
    return tag


def warm_up() -> None:
    """Load what the first tagging call would (the keyword extractor and the English word lists),
    so a server's first upload does not wait for it; a second call costs nothing."""
    content_keywords("Warm-up note about keyword extraction for the tagger.", limit=1)


def text_languages(text: str) -> tuple[str, ...]:
    """The languages of a text that choose its stop-words: the dominant one first, then any other read
    in a tenth of it or more."""
    mix = language_mix(text)
    others = sorted(
        code for code, share in mix.shares.items() if code and code != mix.language and share >= STOPWORD_LANGUAGE_SHARE
    )
    # A text too short to name its language still loses the stop-words of the language it most
    # likely is, beside English's ("und" in a short German note).
    first = mix.language or mix.guess
    return tuple(dict.fromkeys(code for code in (first, *others) if code))


# Runs of one script in text written without spaces: katakana words (mostly loanwords and names),
# kanji/hanzi runs, hangul, and Latin-script words (product names inside Japanese or Chinese text).
_KATAKANA_RUN = re.compile(r"[\u30a0-\u30ffー]{3,}")
_HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]{2,}")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9+#.-]{2,}")
HAN_GRAMS = (2, 3, 4)


def unspaced_keywords(text: str, *, stop: frozenset[str]) -> list[tuple[str, float]]:
    """Keywords of text without spaces between words (Japanese, Chinese), best first, each with a
    YAKE-like score (lower is better): katakana words and Latin-script words as they stand, and the
    2-4 character runs of kanji/hanzi that recur (a compound a text is about recurs; a run seen once
    is as likely a phrase as a word). A shorter run inside a longer one that recurs as often is the
    longer one's part, not a keyword of its own."""
    counts: Counter[str] = Counter()
    for match in _KATAKANA_RUN.finditer(text):
        counts[match.group().strip("ー")] += 1
    for match in _LATIN_WORD.finditer(text):
        counts[match.group().rstrip(".-")] += 1
    grams: Counter[str] = Counter()
    for run in _HAN_RUN.findall(text):
        for n in HAN_GRAMS:
            for i in range(len(run) - n + 1):
                grams[run[i : i + n]] += 1
    # A particle or other stop-word at either end makes a run a phrase ("数据库的"), not a word.
    recurring = {
        gram: count
        for gram, count in grams.items()
        if count >= 2 and gram not in stop and gram[0] not in stop and gram[-1] not in stop
    }
    # The most frequent one-character-longer run around each run: its left and right extensions.
    extended: Counter[str] = Counter()
    for gram, count in recurring.items():
        for part in (gram[:-1], gram[1:]):
            extended[part] = max(extended[part], count)
    for gram, count in recurring.items():
        if extended[gram] < count:
            counts[gram] += count
    ranked = sorted(
        ((word, count) for word, count in counts.items() if word.lower() not in stop and len(word) <= MAX_TAG_CHARS),
        key=lambda item: (-item[1] * len(item[0]), item[0]),
    )
    return [(word, 1.0 / (count * len(word))) for word, count in ranked[:KEYWORD_CANDIDATES]]


# The word just before and just after a keyword's place, on the same line.
_WORD_BEFORE = re.compile(r"([^\W\d_][\w'’-]*)[ \t]+$")
_WORD_AFTER = re.compile(r"[ \t]+([^\W\d_][\w'’-]*)")


_NAME_WORD = re.compile(r"[\w-]+")


class TextWords:
    """A text's runs of word characters and hyphens, lower-cased, with where each stands: where a
    keyword is written is looked up here rather than by a pattern compiled for each keyword (that
    cost more than the rest of tagging a memory)."""

    def __init__(self, text: str):
        self.text = text
        self.spans: list[tuple[int, int]] = []
        self.starts: dict[str, list[int]] = {}
        for i, match in enumerate(_NAME_WORD.finditer(text)):
            self.spans.append(match.span())
            self.starts.setdefault(match.group().lower(), []).append(i)

    def written(self, words: Sequence[str]) -> list[tuple[int, int]] | None:
        """Where the words are written in a row, parted by white space only, each a whole run, as
        (start, end) pairs; None when a word is not such a run (then only a pattern can say)."""
        if not all(_NAME_WORD.fullmatch(word) for word in words):
            return None
        lowered = [word.lower() for word in words]
        found = []
        for first in self.starts.get(lowered[0], ()):
            last = first + len(words) - 1
            if last >= len(self.spans):
                break
            if all(
                self.text[self.spans[first + k][0] : self.spans[first + k][1]].lower() == lowered[k]
                and not self.text[self.spans[first + k - 1][1] : self.spans[first + k][0]].strip()
                for k in range(1, len(words))
            ):
                found.append((self.spans[first][0], self.spans[last][1]))
        return found


def name_fragment(phrase: str, text: str | TextWords, *, language: str = "") -> bool:
    """A keyword that is only ever part of a longer name in the text: every time the text writes it,
    it runs on into a capitalised word ("Amazon Web" of "Amazon Web Services", "States" of "United
    States", "Université François" of "Université François Rabelais"). Such a tag names half a thing.
    Not read where every noun is capitalised (German), where capitals say nothing of names; a keyword
    the text never writes as found is kept."""
    words = phrase.split()
    if not words or language in CAPITALISED_NOUN_LANGUAGES:
        return False
    index = text if isinstance(text, TextWords) else TextWords(text)
    places = index.written(words)
    if places is None:
        pattern = re.compile(r"(?<![\w-])" + r"\s+".join(map(re.escape, words)) + r"(?![\w-])", re.IGNORECASE)
        places = [match.span() for match in pattern.finditer(index.text)]
    # Written once as itself, it is a keyword of its own.
    return bool(places) and all(_runs_on(index.text, start, end) for start, end in places)


# Languages that capitalise every noun, so that a capital does not mark a name.
CAPITALISED_NOUN_LANGUAGES = frozenset(["de", "lb"])


def _capitalised(word: str) -> bool:
    """Written with a capital and then small letters: a word in capitals marks no name, as a heading
    may be set all in capitals ("JEAN-BAPTISTE POQUELIN MOLIÈRE")."""
    return word[:1].isupper() and not word.isupper()


def _runs_on(text: str, start: int, end: int) -> bool:
    """Whether a capitalised keyword runs on into a capitalised word beside it on its line; a word
    before it that opens the line or a sentence is capitalised for that, not for a name."""
    written = text[start:end].split()
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    after = _WORD_AFTER.match(text, end, line_end)
    if after is not None and _capitalised(written[-1]) and _capitalised(after.group(1)):
        return True
    before = _WORD_BEFORE.search(text, line_start, start)
    if before is None or not _capitalised(written[0]) or not _capitalised(before.group(1)):
        return False
    ahead = text[line_start : before.start(1)].rstrip()
    return ahead != "" and not ahead.endswith((".", "!", "?", ":", ";"))


def content_keywords(text: str, *, limit: int, languages: tuple[str, ...] | None = None) -> list[dict]:
    """Up to `limit` keyword tags for a text, best first, each {tag, confidence}. `languages` (the
    text's, dominant first) is read from the text when not given.

    Confidence maps YAKE's score (lower is better) relative to the best keyword of the same text:
    0.3 + 0.65 · sqrt(best / score), so the top keyword scores 0.95 and weaker ones fall towards 0.3.
    """
    if limit <= 0 or not text or not text.strip():
        return []
    sample = prose(text[:KEYWORD_SOURCE_CHARS])
    if is_filler(sample):
        return []
    if languages is None:
        languages = text_languages(sample)
    stop = text_stopwords(languages)
    if languages and languages[0] in NO_SPACE_LANGUAGES:
        scored = unspaced_keywords(sample, stop=stop)
    else:
        scored = _language_extractor(languages).get_n_best(sample, n=KEYWORD_CANDIDATES)
    latin = bool(languages) and languages[0] == "la" and detect_language(sample) == "la"
    language = languages[0] if languages else ""
    picked: list[tuple[str, float]] = []
    seen: set[str] = set()
    spaced = not (languages and languages[0] in NO_SPACE_LANGUAGES)
    sample_words = TextWords(sample) if spaced else None
    for phrase, score in scored:
        tag = keyword_tag(phrase, stop=stop, latin=latin, language=language)
        if tag is None or (sample_words is not None and name_fragment(phrase, sample_words, language=language)):
            continue
        # A keyword sharing a word with a better one ("budget" or "budget-shows" after
        # "budget-analysis") repeats it, so each word counts once across a memory's keywords.
        words = {_singular(lemma(word, language)) for word in tag.split("-")}
        if words & seen:
            continue
        seen |= words
        picked.append((tag, max(float(score), 1e-9)))
        if len(picked) == limit:
            break
    if not picked:
        return []
    best = picked[0][1]
    return [{"tag": tag, "confidence": round(0.3 + 0.65 * (best / score) ** 0.5, 3)} for tag, score in picked]


def auto_tags_for(*, source: str, metadata: dict, content: str, summary: str = "") -> list[dict]:
    """All auto tags of a memory: structural ones first, then content keywords up to six in all."""
    tags = structural_auto_tags(source=source, metadata=metadata)
    taken = {item["tag"] for item in tags}
    room = MAX_AUTO_TAGS - len(tags)
    # A mail's header lines name who and when ("date", "utc" were its tags), not what it is about.
    for item in content_keywords(summary or without_mail_header(content), limit=room + len(taken)):
        if len(tags) == MAX_AUTO_TAGS:
            break
        if item["tag"] not in taken:
            tags.append(item)
            taken.add(item["tag"])
    return tags


def auto_tags_many(items: list[tuple[str, dict, str, str]]) -> list[list[dict] | str]:
    """auto_tags_for each (source, metadata, content, summary), in order. A large batch is spread
    over the worker processes (YAKE costs some 8 ms a memory); a memory whose tagging fails gets its
    error message instead of tags, and the others are still tagged."""
    # Only the start of a text is read, so only that crosses to a worker.
    items = [
        (source, metadata, content[:KEYWORD_SOURCE_CHARS], summary) for source, metadata, content, summary in items
    ]
    count = workers.processes()
    size = max(64, -(-len(items) // (count * 4)))  # a few batches per worker, so they finish together
    batches = [items[i : i + size] for i in range(0, len(items), size)]
    return [
        tags
        for part in workers.map_batches(_auto_tags_batch, batches, workers=count, min_items=200, prepare=_extractor)
        for tags in part
    ]


def _auto_tags_batch(items: list[tuple[str, dict, str, str]]) -> list[list[dict] | str]:
    out: list[list[dict] | str] = []
    for source, metadata, content, summary in items:
        try:
            out.append(auto_tags_for(source=source, metadata=metadata, content=content, summary=summary))
        except Exception as exc:  # one bad memory must not stop the batch
            logger.exception("auto-tagging failed")
            out.append(f"{type(exc).__name__}: {exc}")
    return out


def needs_retag(*, auto_tagged_at: datetime | None, auto_tagged_hash: str, content_hash: str, now: datetime) -> bool:
    """The sleep agent re-tags a memory only when its auto tags are over 7 days old or its content changed."""
    return auto_tagged_at is None or auto_tagged_hash != content_hash or now - auto_tagged_at > RETAG_AFTER


def retag_due_filter(now: datetime):
    """needs_retag as a queryset filter on Memory, for selecting the memories due in one query."""
    return (
        Q(auto_tagged_at__isnull=True)
        | Q(auto_tagged_at__lt=now - RETAG_AFTER)
        | ~Q(auto_tagged_hash=F("content_hash"))
    )
