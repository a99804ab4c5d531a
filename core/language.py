"""Which language a text is in: an ISO 639-1 code, or "" when it cannot be told, from langid.py's
model (py3langid, shipped in its wheel) after the rules a reader applies first (kana is Japanese,
hangul is Korean), and filler text (Lorem ipsum) told apart from Latin. Why this detector:
docs/decisions/0016-language-detection.md."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

UNKNOWN = ""
# The filter value that asks for memories whose language is unknown (ISO 639-2 "undetermined").
UNDETERMINED = "und"

# Below this many letters a text says too little about its language ("OK", "v2.1", a bank statement's
# column of figures), and the detector's guess is left out.
MIN_LETTERS = 12
# langid's normalised probability of its best language: a memory is said to be in a language only
# when the detector gives it better than even odds; a short line of names ("Guido van Rossum created
# Python.") or a quoted reply of two words is left unknown rather than called Latin or Dutch.
MIN_CONFIDENCE = 0.5
# The detector reads at most this many characters of one window: a language shows in a paragraph, and
# the cost grows with the text.
WINDOW_CHARS = 2000
# A long text is read in up to this many windows spread over it, so the language of most of the text
# wins, not that of its opening (a German contract with an English cover page).
MAX_WINDOWS = 6

_URL_OR_MAIL = re.compile(r"https?://\S+|www\.\S+|\S+@\S+\.\w+")
_KANA = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_HANGUL = re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

# Names of the languages the detector can answer, for the pages; Django's own table covers most.
_EXTRA_NAMES = {
    "am": "Amharic",
    "an": "Aragonese",
    "as": "Assamese",
    "ba": "Bashkir",
    "dz": "Dzongkha",
    "fo": "Faroese",
    "gu": "Gujarati",
    "ha": "Hausa",
    "ht": "Haitian Creole",
    "jv": "Javanese",
    "ku": "Kurdish",
    "la": "Latin",
    "lg": "Ganda",
    "ln": "Lingala",
    "lo": "Lao",
    "mg": "Malagasy",
    "mt": "Maltese",
    "oc": "Occitan",
    "om": "Oromo",
    "or": "Odia",
    "ps": "Pashto",
    "qu": "Quechua",
    "rw": "Kinyarwanda",
    "sa": "Sanskrit",
    "se": "Northern Sami",
    "si": "Sinhala",
    "sn": "Shona",
    "so": "Somali",
    "st": "Southern Sotho",
    "tk": "Turkmen",
    "tl": "Tagalog",
    "tt": "Tatar",
    "vo": "Volapük",
    "wa": "Walloon",
    "xh": "Xhosa",
    "yo": "Yoruba",
    "zh": "Chinese",
    "zu": "Zulu",
}

# The words of the Lorem ipsum passage and of the generators that extend it (lipsum.com's word list):
# text made mostly of them is filler, not Latin.
LOREM_WORDS = frozenset(
    """
lorem ipsum dolor sit amet consectetur consectetuer adipiscing adipisicing elit sed do eiusmod tempor
incididunt ut labore et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco
laboris nisi aliquip ex ea commodo consequat duis aute irure in reprehenderit voluptate velit esse
cillum eu fugiat nulla pariatur excepteur sint occaecat cupidatat non proident sunt culpa qui officia
deserunt mollit anim id est laborum curabitur pretium tincidunt lacus nunc nullam vestibulum
vel ante ipsum primis faucibus orci luctus ultrices posuere cubilia curae aenean vitae quam
donec pede justo fringilla aliquet vulputate arcu rhoncus imperdiet venenatis integer
cras dapibus vivamus elementum semper nisi aenean leo ligula porttitor eget consequat viverra
etiam ultricies nam augue maecenas tellus phasellus metus varius laoreet quisque rutrum
sodales sagittis magna sed dui mauris mollis ac tortor suspendisse potenti proin molestie
fermentum nec mattis pulvinar morbi tristique senectus netus malesuada fames turpis egestas
pellentesque habitant purus neque bibendum volutpat sapien feugiat accumsan felis gravida
massa mi scelerisque nibh convallis eros condimentum auctor odio blandit sem lectus interdum
iaculis hendrerit placerat lobortis libero dignissim risus aliquam erat ornare urna commodo
euismod facilisis diam fusce cursus tincidunt pharetra sollicitudin vehicula velit ullamcorper
lacinia posuere praesent congue nisl quis eleifend efficitur at mauris dictum hac habitasse platea
dictumst sociis natoque penatibus magnis dis parturient montes nascetur ridiculus mus
class aptent taciti sociosqu litora torquent per conubia nostra inceptos himenaeos
""".split()
)
# English's commonest function words: where they make this share of a text's words (20 words or more),
# the text is English without asking the model. They make a third of English prose and almost none
# of any other language's (0.116 at most in the 30 languages of the language benchmark; SciFact
# abstracts 0.09 at least), and the model costs more than counting them.
ENGLISH_WORDS = frozenset(
    "the of and to that for with are was were by this from which have has been their these be it its".split()
)
ENGLISH_SHARE = 0.15
ENGLISH_MIN_WORDS = 20
# Share of a text's words that must be filler words, and the fewest words, for it to be filler.
FILLER_SHARE = 0.6
FILLER_MIN_WORDS = 8
_WORDS = re.compile(r"[^\W\d_]+")


@lru_cache(maxsize=1)
def _identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    # Only the languages that have an ISO 639-1 code, the codes stored: asking among the model's
    # dialects and regional languages ("lij", "vec") too would lose Italian lines to them.
    identifier.set_languages([code for code in identifier.labels if len(code) == 2 and code != "zxx"])
    return identifier


def warm_up() -> None:
    """Load the detector's model, so the first memory stored does not wait for it."""
    _identifier()


@lru_cache(maxsize=1)
def known_codes() -> frozenset[str]:
    """Every code detect_language can answer."""
    return frozenset(_identifier().nb_classes) | {"ja", "ko"}


# The languages whose month and weekday names calendar_words knows: those people's documents here
# mostly use (Unicode CLDR, through babel).
CALENDAR_LOCALES = ("en", "fr", "de", "es", "it", "pt", "nl", "sv", "da", "nb", "pl", "ru")


@lru_cache(maxsize=2)
def calendar_words(*, abbreviated: bool = False) -> frozenset[str]:
    """Month and weekday names in lower case ("juillet", "montag", "июля"), in every form CLDR gives
    them; with `abbreviated`, their abbreviations too ("sam", "mo", "févr"), which are often words or
    names of their own."""
    from babel import Locale

    widths = ("wide", "abbreviated") if abbreviated else ("wide",)
    words: set[str] = set()
    for code in CALENDAR_LOCALES:
        locale = Locale.parse(code)
        for names in (locale.months, locale.days):
            for context in ("format", "stand-alone"):
                for width in widths:
                    words |= {w.strip(".").lower() for name in names[context][width].values() for w in name.split()}
    return frozenset(words)


def language_name(code: str) -> str:
    """The English name of a language code ("de" -> "German"); "" for unknown."""
    if not code:
        return ""
    from django.conf.locale import LANG_INFO

    info = LANG_INFO.get(code)
    if info and "name" in info:
        return info["name"]
    return _EXTRA_NAMES.get(code, code)


def is_filler(text: str) -> bool:
    """Whether the text is mostly Lorem ipsum filler words (and so not worth tagging as Latin)."""
    words = [w.lower() for w in _WORDS.findall(text[: WINDOW_CHARS * 2])]
    if len(words) < FILLER_MIN_WORDS:
        return False
    return sum(w in LOREM_WORDS for w in words) >= FILLER_SHARE * len(words)


def looks_english(text: str) -> bool:
    """Whether a text is plainly English by its function words (see ENGLISH_WORDS)."""
    words = _WORDS.findall(text.lower())
    return len(words) >= ENGLISH_MIN_WORDS and sum(w in ENGLISH_WORDS for w in words) >= ENGLISH_SHARE * len(words)


def _script_language(letters: int, text: str) -> str | None:
    """The rules a reader applies before any statistics, for a text most of whose letters are
    Chinese characters, kana or hangul: Japanese writes kana between its kanji, Korean writes hangul,
    and Chinese characters alone are Chinese."""
    kana = len(_KANA.findall(text))
    hangul = len(_HANGUL.findall(text))
    han = len(_HAN.findall(text))
    cjk = kana + hangul + han
    if cjk < max(4, letters * 0.5):
        return None
    if hangul >= cjk * 0.3:
        return "ko"
    if kana >= cjk * 0.05:
        return "ja"
    return "zh" if han >= cjk * 0.9 else None


def _letters(text: str) -> int:
    return sum(map(str.isalpha, text))


def _window_language(window: str) -> tuple[str, str]:
    """(the window's language or "", the detector's best guess even when it is not sure)."""
    window = _URL_OR_MAIL.sub(" ", window)
    letters = _letters(window)
    if letters < MIN_LETTERS:
        return UNKNOWN, UNKNOWN
    by_script = _script_language(letters, window)
    if by_script:
        return by_script, by_script
    if is_filler(window):
        return UNKNOWN, UNKNOWN
    if looks_english(window):
        return "en", "en"
    code, confidence = _identifier().classify(unicodedata.normalize("NFC", window))
    if confidence < MIN_CONFIDENCE and code == "en" and _short_english(window):
        return "en", code
    return (code if confidence >= MIN_CONFIDENCE else UNKNOWN), code


# English's commonest function words: what a short note's lower-case words hold besides its names.
_FUNCTION_WORDS = frozenset(
    """the a an of to in on at for with about from by and or but is are was were be been has have had my your
our their his her its this that these those it we you he she they not no""".split()
)
_SHORT_ENGLISH_MIN_WORDS = 3


def _short_english(window: str) -> bool:
    """A short note the detector guesses is English without being sure, as notes made mostly of names
    are ("Call Hiroshi about the Osaka trip."): English when three or more of its words are written
    in lower case and one of them is an English function word. "Guido van Rossum created Python."
    stays unknown."""
    lower = [w for w in _WORDS.findall(window) if w.islower()]
    return len(lower) >= _SHORT_ENGLISH_MIN_WORDS and any(w in _FUNCTION_WORDS for w in lower)


def _windows(text: str) -> list[str]:
    """The text in up to MAX_WINDOWS windows: side by side when they cover it, else spread evenly."""
    if len(text) <= WINDOW_CHARS:
        return [text]
    count = min(MAX_WINDOWS, -(-len(text) // WINDOW_CHARS))
    size = min(WINDOW_CHARS, -(-len(text) // count))
    step = (len(text) - size) / (count - 1)
    return [text[round(i * step) : round(i * step) + size] for i in range(count)]


@dataclass(frozen=True)
class LanguageMix:
    """The languages of a text's windows: the dominant one, each one's share of the letters, and the
    detector's best guess for the text when it is not sure enough to name a language (stop-words of
    a guessed language may still be left out of tags; nothing else reads a guess)."""

    language: str
    shares: dict[str, float]
    guess: str = UNKNOWN

    @property
    def mixed(self) -> bool:
        """Whether a second language covers a fifth of the text or more."""
        return sum(1 for code, share in self.shares.items() if code and share >= 0.2) > 1


# A memory's language and its tags' stop-words read the same short text (a chat message) in a row:
# the last few answers are kept, for texts short enough that keeping them costs nothing.
_CACHED_CHARS = 20_000


def language_mix(text: str) -> LanguageMix:
    """Which languages a text is written in, read window by window over its length."""
    text = text or ""
    return _cached_mix(text) if len(text) <= _CACHED_CHARS else _language_mix(text)


@lru_cache(maxsize=64)
def _cached_mix(text: str) -> LanguageMix:
    return _language_mix(text)


def _language_mix(text: str) -> LanguageMix:
    counts: Counter[str] = Counter()
    guesses: Counter[str] = Counter()
    for window in _windows(text or ""):
        letters = _letters(window)
        if letters:
            code, guess = _window_language(window)
            counts[code] += letters
            guesses[guess] += letters
    total = sum(counts.values())
    if not total:
        return LanguageMix(UNKNOWN, {})
    known = [(code, n) for code, n in counts.most_common() if code]
    # Unknown windows (tables, figures) do not outvote a language read elsewhere in the text.
    dominant = known[0][0] if known else UNKNOWN
    guessed = [code for code, _ in guesses.most_common() if code]
    return LanguageMix(
        dominant, {code: round(n / total, 3) for code, n in counts.items()}, guessed[0] if guessed else UNKNOWN
    )


def mostly_latin(text: str) -> bool:
    """Whether most of a text's letters are Latin-script ones (a text of unknown language that is not
    may still be told apart from English)."""
    letters = [ch for ch in text[:WINDOW_CHARS] if ch.isalpha()]
    latin = sum(1 for ch in letters if ch < "\u0250" or "\u1e00" <= ch <= "\u1eff")
    return bool(letters) and latin * 2 >= len(letters)


def detect_language(text: str) -> str:
    """The ISO 639-1 code of the language most of the text is written in, or "" when it cannot be
    told: too few letters, filler text, or no language the detector is sure of."""
    return language_mix(text).language


def parse_language_code(raw: str | None) -> str | None:
    """A language filter as given by a person or an agent: None for no filter, "" for memories whose
    language is unknown ("und"), else a known ISO 639-1 code. Anything else is a ValueError that says
    why."""
    if raw is None:
        return None
    code = raw.strip().lower()
    if not code:
        return None
    if code == UNDETERMINED:
        return UNKNOWN
    if not re.fullmatch(r"[a-z]{2}", code):
        raise ValueError(
            f"language must be an ISO 639-1 code of two letters, such as 'en' or 'de', or '{UNDETERMINED}' "
            f"for an unknown language; got '{raw[:20]}'"
        )
    if code not in known_codes():
        raise ValueError(f"'{code}' is not a language code Kybernesis detects; use an ISO 639-1 code such as 'en'")
    return code
