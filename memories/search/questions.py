"""Whether a message or a sentence asks something: the one rule the memory service applies to every
chat message (`metadata.kind`, see memories.services.memory) and the chat's answers use to never
quote a question back as an answer."""

from __future__ import annotations

import re

# The metadata.kind of a chat message that asks something, and of one a person marked as a note.
QUESTION = "question"
NOTE = "note"
KINDS = (QUESTION, NOTE)

# The rule, as a person would put it.
#
# A sentence asks something when it ends with a question mark (?, the full-width ？ of Japanese and
# Chinese, the Arabic ؟), opens with Spanish ¿, or, unless it ends with "!" or is a labelled note
# ("Where I parked: level 3, bay C42."), when it has the form of a question in English, German,
# French, Spanish, Russian or Dutch: it opens with a question word (what, when, where, who, which, why, how; was,
# wann, wo, wer, warum, wie; que, quand, où, qui, pourquoi, comment; qué, cuándo, dónde, quién,
# cómo, …), with a request to recall ("tell me", "show me", "find my", "remind me where", "I forgot
# when"; sag mir, erinnere mich an; dis-moi, rappelle-moi; dime, recuérdame), or with a verb and
# then its subject ("do I", "is there", "can you"; "hast du", "gibt es"; "as-tu", "est-ce que").
# A Japanese sentence asks when it ends with the particle か after a polite or plain verb (ですか,
# ますか, でしょうか, のか, かな), a Chinese one when it ends with 吗, 呢 or holds a question word
# (什么, 怎么, 为什么, 哪里, 谁, 多少, …) used as one ("什么都" means "anything").
#
# "Remind me to call Sam", "I forgot to pay the gas bill", "When I got home, the door was open" and
# "Quand je suis arrivé, il pleuvait" say something to keep, not something to find.
#
# A message asks something when one of its sentences asks ("Can you help me pick the paint? Let's
# plan a session soon."), unless it says more than it asks: a message whose statements make a
# sentence of their own (STATEMENT_CHARS) and are longer than its questions is a note that also asks
# ("I went to a support group yesterday and it was so powerful. Have you been to one?"; "Carbonara:
# 200 g guanciale, … Maybe rigatoni next time?"). Greetings and talk around a question ("Sounds
# great! … Let's plan a session soon.") stay short of that.
#
# The chat still answers a note that also asks (`wants_answer`): what it asks gets a reply unless it
# is a long note that merely ends with a question, whose statements run past LONG_NOTE_CHARS and
# outweigh its questions two to one.
# A question quoted inside a note is the note's content ('Mum always asks "have you eaten?"'),
# and a message without a single letter or digit ("?") asks nothing anyone could answer.
STATEMENT_CHARS = 40
LONG_NOTE_CHARS = 280

_EN_WH = r"what|what's|whats|who|who's|whom|whose|which"
# These also open a statement's clause ("When I got home, …"), so they ask only before a verb, "to"
# or a quantity ("when is", "how do", "where to eat", "how many").
_EN_WH_CLAUSE = r"when|when's|where|where's|why|how|how's"
_EN_AUX = (
    r"do|does|did|is|are|was|were|can|could|should|would|will|shall|may|might|must|have|has|had|am|"
    r"isn't|aren't|wasn't|weren't|don't|doesn't|didn't|can't|couldn't|shouldn't|won't|wouldn't|haven't|hasn't"
)
_EN_AFTER_CLAUSE_WORD = rf"(?:{_EN_AUX}|'s|to|much|many|long|often|far|old|big|come|not|else)\b"
_EN_WHAT = rf"(?:{_EN_WH}|{_EN_WH_CLAUSE}|if|whether|of|about)\b"
_EN_ASK = (
    rf"remind me {_EN_WHAT}|tell me|do you (?:know|remember)|can you (?:tell|remind|find|show)|show me|find me|"
    rf"show (?:my|all|the)|list (?:my|all|the)|find (?:my|the)|look up|i wonder|"
    rf"i (?:forgot|can't remember|cannot remember|don't remember) {_EN_WHAT}"
)
_EN_SUBJECTS = r"i|we|you|it|there|they|he|she|my|our|the|this|that"

# English opens notes with "Was" too ("Was at the gym"): German "was" asks before a verb or a pronoun.
_DE_WAS = (
    r"was (?:ist|sind|war|waren|hast|habe|hat|haben|machst|macht|mache|kostet|gibt|soll|sollte|muss|kann|könnte|"
    r"brauche|brauchst|braucht|für|ich|du|wir|ihr|man|denn|heißt|bedeutet|wird|weißt|willst|möchtest)"
)
_DE_WH_WORDS = (
    r"wann|wo|wer|wen|wem|wessen|welche|welcher|welches|welchen|welchem|warum|wieso|weshalb|weswegen|"
    r"wie|woher|wohin|womit|wofür|worüber|woran|worauf|wozu|wieviel|wieviele"
)
_DE_WH = rf"{_DE_WAS}|{_DE_WH_WORDS}"
_DE_ASK = (
    r"sag(?:e)? mir|zeig(?:e)? mir|zeig(?:e)? (?:alle|meine)|erzähl(?:e)? mir|weißt du|weisst du|"
    r"such(?:e)? (?:nach|mir)|finde? (?:mir|den|die|das|meine\w*)|"
    r"erinnerst du dich|kannst du mir|erinnere mich (?:an|daran,? (?:was|wann|wo|wer|wie|ob)|woran|was|wann|wo|wie|ob)|"
    r"ich (?:habe )?vergessen,? (?:was|wann|wo|wer|wie|welche\w*|ob)|ich weiß nicht mehr,? (?:was|wann|wo|wer|wie|ob)"
)
# A verb, then its subject: "Hast du", "Brauche ich", "Gibt es". An imperative never puts ich, du,
# wir, ihr or man second, and "es" counts only after the verbs that ask with it ("Gib es mir" orders).
_DE_CONJUNCTIONS = (
    r"und|aber|oder|denn|weil|dass|daß|als|wenn|damit|nachdem|bevor|obwohl|sobald|da|also|nur|auch|sondern|doch|"
    r"seit|bis|während|falls|jetzt|heute|morgen|gestern|dann|hier|dort|so|ob"
)
_DE_V1 = (
    rf"(?!(?:{_DE_CONJUNCTIONS})\b)[^\W\d_]+ (?:ich|du|wir|ihr|man)|"
    r"(?:gibt|gab|ist|war|wird|kann|könnte|muss|soll|sollte|hat|geht|regnet|schneit) es"
)

_FR_WH = r"que|qu'est-ce|quoi|quand|où|ou est|qui|pourquoi|comment|combien|quel|quelle|quels|quelles|lequel|laquelle"
_FR_ASK = (
    r"est-ce qu|dis-moi|dites-moi|rappelle-moi|rappelez-moi|montre-moi|montrez-moi|sais-tu|savez-vous|"
    r"j'ai oublié (?:où|quand|qui|quel|quelle|comment|si|ce que)|je ne sais plus (?:où|quand|qui|quel|comment|si)"
)
# An inverted verb and subject: "As-tu", "Peux-tu", "Avez-vous", "Va-t-il".
_FR_INVERSION = r"[^\W\d_]+-(?:t-)?(?:je|tu|il|elle|on|nous|vous|ils|elles)"
# "Quand je suis arrivé, …", "Que tu viennes …": the clause, not the question.
_FR_SUBJECT = r"(?:je|j'|tu|il|elle|on|nous|vous|ils|elles)\b"

# Spanish question words carry an accent; without it they are conjunctions ("cuando llegué, …").
_ES_WH = r"qué|cuándo|dónde|adónde|quién|quiénes|cuál|cuáles|cómo|cuánto|cuánta|cuántos|cuántas|por qué"
_ES_ASK = r"dime|dígame|recuérdame|muéstrame|sabes|me (?:dices|recuerdas)|olvidé (?:qué|cuándo|dónde|quién|cómo|si)"

# Russian and Dutch question words also open clauses ("Когда я пришёл, …", "Wanneer ik thuis kom, …"):
# as in French, a subject pronoun right after one says it is the clause.
_RU_WH = r"кто|что|где|когда|почему|зачем|как|какой|какая|какое|какие|сколько|куда|откуда|чей|чья|чьё|чьи"
_RU_SUBJECT = r"(?:я|ты|он|она|оно|мы|вы|они)\b"
_NL_WH = r"wat|wanneer|waar|wie|waarom|hoe|welke|welk|hoeveel|hoelang"
_NL_SUBJECT = r"(?:ik|je|jij|hij|zij|ze|we|wij|jullie|u|het)\b"


def _single_words(*alternations: str) -> frozenset[str]:
    return frozenset(w for a in alternations for w in a.split("|") if w.isalpha())


# The question words of the languages Snowball stems, for keyword search: Snowball's stop lists leave
# most of them out ("wer", "wann", "combien", "когда"), and a query that asks would otherwise weigh
# them as its rarest words (memories.search.lexical.query_terms).
QUESTION_WORDS = {
    "de": _single_words(_DE_WH_WORDS, "was"),
    "fr": _single_words(_FR_WH),
    "es": _single_words(_ES_WH),
    "ru": _single_words(_RU_WH),
    "nl": _single_words(_NL_WH),
}


# "Hi, where …", "Bonjour comment vas-tu", "Bitte finde …": a greeting or a "please" before the question.
_LEAD_IN = (
    r"(?:(?:hi|hey|hello|so|well|oh|ok|okay|please|btw|bonjour|salut|alors|hallo|bitte|also|hola|oye)\b[\s,!.]*)?"
)

_QUESTION_START = re.compile(
    rf"^\W*{_LEAD_IN}(?:"
    rf"(?:{_EN_WH})\b|(?:{_EN_WH_CLAUSE})\s+{_EN_AFTER_CLAUSE_WORD}|(?:{_EN_WH_CLAUSE})\W*$|(?:{_EN_ASK})\b|"
    rf"(?:{_EN_AUX})\s+(?:{_EN_SUBJECTS})\b|"
    rf"(?:{_DE_WH})\b|(?:{_DE_ASK})\b|(?:{_DE_V1})\b|"
    rf"(?:{_FR_ASK})|(?:{_FR_INVERSION})\b|(?:{_FR_WH})\b(?!\s+{_FR_SUBJECT})|"
    rf"(?:{_ES_WH})\b|(?:{_ES_ASK})\b|"
    rf"(?:{_RU_WH})\b(?!\s+{_RU_SUBJECT})|(?:{_NL_WH})\b(?!\s+{_NL_SUBJECT})"
    r")",
    re.IGNORECASE,
)
# English "what", "who" and "how" also open exclamations and clauses; the word after tells.
_EN_NOT_QUESTION = re.compile(r"^\W*(?:what a|what an|how nice|how lovely|how great|how kind)\b", re.IGNORECASE)

_ENDS_WITH_QUESTION_MARK = re.compile(r"[?？؟][^\w.。]*$")
_OPENS_WITH_SPANISH_MARK = re.compile(r"^\W*¿")
_EXCLAMATION = re.compile(r"[!！][^\w?？]*$")
# A few words, a colon, then what they label: "How to bake bread: mix…", "Where I parked: level 3".
_LABELLED = re.compile(r"^\W*(?:\S+\s+){0,6}\S+[:：]\s*\S")

_JA_QUESTION_END = re.compile(
    r"(?:ですか|ますか|でしょうか|ましたか|でしたか|ませんか|のか|んですか|だろうか|かな|かしら|の[？?]|ない[？?])[。\s]*$"
)
_ZH_QUESTION_END = re.compile(r"[吗嗎呢么麼][。\s]*$")
_ZH_QUESTION_WORD = re.compile(
    r"(?:什么|什麼|怎么|怎麼|为什么|為什麼|哪里|哪裡|哪儿|哪兒|哪个|哪個|哪些|谁|誰|多少|几点|幾點|几个|幾個|是不是|有没有|有沒有|能不能|可不可以|会不会|會不會)"
    r"(?!都|也)"
)
_CJK_STATEMENT_END = re.compile(r"[。！!]\s*$")

# A sentence ends at . ! ? (and their full-width forms) before a space, at 。！？ anywhere, or at a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?？؟])\s+|(?<=[。！？])|\n+")
_QUOTED_AT_END = re.compile(r"^(?P<lead>.*?[^\W_].*?)[\s:,]*[\"“«„‚'‘「『]\s*[^\"”»“'’」』]+[?？]\s*[\"”»’'」』]\W*$")
_WORD = re.compile(r"[^\W_]")
_MAY_QUOTE_A_QUESTION = re.compile(r"[?？]\s*[\"”»’'」』]")


def asks(text: str) -> bool:
    """True when the text is a question by the rule above: it asks something and says less than it asks."""
    weights = _question_and_statement_chars(text)
    if weights is None:
        return False
    question_chars, statement_chars = weights
    return not (statement_chars >= STATEMENT_CHARS and statement_chars > question_chars)


def wants_answer(text: str) -> bool:
    """True when a chat reply should answer the text: one of its sentences asks, and it is not a long
    note that merely ends with a question (the rule above)."""
    weights = _question_and_statement_chars(text)
    if weights is None:
        return False
    question_chars, statement_chars = weights
    return not (statement_chars > LONG_NOTE_CHARS and statement_chars > 2 * question_chars)


def _question_and_statement_chars(text: str) -> tuple[int, int] | None:
    """The characters of the text's sentences that ask and of those that do not; None when none asks."""
    text = " ".join(text.replace("’", "'").split())
    if not _WORD.search(text):
        return None
    sentences = [s for s in _SENTENCE_END.split(text) if _WORD.search(s)]
    asking = [s for s in sentences if sentence_asks(s)]
    if not asking:
        return None
    question_chars = sum(len(s) for s in asking)
    return question_chars, sum(len(s) for s in sentences) - question_chars


def sentence_asks(sentence: str) -> bool:
    """Whether one sentence asks something (the sentence part of the rule above)."""
    sentence = sentence.strip()
    if not _WORD.search(sentence):
        return False
    # The quoted-question pattern backtracks over the whole sentence; only a sentence with a question
    # mark and a closing quote can match it.
    if _MAY_QUOTE_A_QUESTION.search(sentence) and (quoted := _QUOTED_AT_END.match(sentence)):
        # 'Mum always asks "have you eaten?"' reports a question; 'Did she say "why?"' asks one.
        return _has_question_form(quoted["lead"])
    if _ENDS_WITH_QUESTION_MARK.search(sentence) or _OPENS_WITH_SPANISH_MARK.search(sentence):
        return True
    return _has_question_form(sentence)


def _has_question_form(sentence: str) -> bool:
    if _EXCLAMATION.search(sentence) or _LABELLED.match(sentence):  # "What a lovely day!" exclaims
        return False
    if _JA_QUESTION_END.search(sentence) or _ZH_QUESTION_END.search(sentence):
        return True
    if _ZH_QUESTION_WORD.search(sentence) and not _CJK_STATEMENT_END.search(sentence):
        return True
    if _EN_NOT_QUESTION.search(sentence):
        return False
    return bool(_QUESTION_START.search(sentence))
