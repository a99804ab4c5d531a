"""Whether a message or a sentence asks something: the one rule the chat stores with each message
(`metadata.kind`) and the chat's answers use to never quote a question back as an answer."""

from __future__ import annotations

import re

# The metadata.kind the chat stores on a message that asks something.
QUESTION = "question"

# The rule, as a person would put it: a message asks something when it ends with "?", or, unless it
# ends with "!" or is a labelled note ("Where I parked: level 3, bay C42."), when it opens with a
# question word (what, when, where, who, which, why, how, …), with a request to recall ("tell me",
# "do you know", "show me", "find my"…, and "remind me" or "I forgot" followed by what: "remind me
# where…", "I forgot when…"), or with an auxiliary verb followed by a person or "there" ("do I",
# "did we", "is there", "can you", "should I", …). "Remind me to call Sam" and "I forgot to pay the
# gas bill" say something to keep, not something to find.
_QUESTION_WORDS = r"what|what's|whats|when|when's|where|where's|who|who's|whom|whose|which|why|how|how's"
_WHAT = rf"(?:{_QUESTION_WORDS}|if|whether|of|about)\b"
_ASK_PHRASES = (
    rf"remind me {_WHAT}|tell me|do you (?:know|remember)|can you (?:tell|remind|find|show)|show me|find me|"
    rf"find (?:my|the)|look up|i wonder|i (?:forgot|can't remember|cannot remember|don't remember) {_WHAT}"
)
_AUXILIARIES = r"do|does|did|is|are|was|were|can|could|should|would|will|have|has|had|am"
_SUBJECTS = r"i|we|you|it|there|they|he|she|my|our|the|this|that"
_QUESTION_START = re.compile(
    rf"^\W*(?:(?:{_QUESTION_WORDS})\b|(?:{_ASK_PHRASES})\b|(?:{_AUXILIARIES})\s+(?:{_SUBJECTS})\b)",
    re.IGNORECASE,
)
_ENDS_WITH_QUESTION_MARK = re.compile(r"\?[^\w.]*$")
_EXCLAMATION = re.compile(r"![^\w?]*$")
# A few words, a colon, then what they label: "How to bake bread: mix…", "Where I parked: level 3".
_LABELLED = re.compile(r"^\W*(?:\S+\s+){0,6}\S+:\s+\S")


def asks(text: str) -> bool:
    """True when the text asks something, by the rule above."""
    text = " ".join(text.split())
    if not text:
        return False
    if _ENDS_WITH_QUESTION_MARK.search(text):
        return True
    if _EXCLAMATION.search(text) or _LABELLED.match(text):  # "What a lovely day!" exclaims
        return False
    return bool(_QUESTION_START.search(text.replace("’", "'")))
