"""Deterministic synthetic text for benchmarks: realistic English-like prose from a fixed vocabulary."""

from __future__ import annotations

import random

VOCABULARY = """
account action agreement analysis answer approach area argument article audience author balance bank basis
behaviour benefit board boundary budget building business campaign capacity capital career category cause
challenge change character choice claim client climate code colleague comment committee community company
comparison competition component concept condition conference connection consequence context contract control
conversation cost council country course coverage credit culture customer cycle data database deadline debate
decision definition delivery demand department deployment design detail development device difference director
discussion distribution document economy edge effect effort element energy engine engineer environment error
estimate evaluation event evidence example exchange experience experiment expert factor feature feedback field
figure file finance focus forecast format foundation framework function funding future goal government graph
group growth guidance habit hardware health history hypothesis idea impact implementation improvement incident
index industry information infrastructure initiative input insight instance interface interview investment issue
item journey judgment knowledge language layer leader learning level library license limit list location logic
machine maintenance management manager market material measure media meeting memory message method metric
migration milestone model module moment money monitor network note number objective operation opinion option
order organization outcome output owner package page paper partner pattern payment performance period person
phase pipeline plan platform policy portfolio position practice prediction preference pressure price priority
problem procedure process product profile program progress project proposal protocol quality quarter query
question range rate reason record recovery region release report request requirement research resource response
result retention revenue review risk roadmap role rule safety sample scale schedule scope score search season
section security segment sensor sequence server service session signal situation software solution source
space speed sprint staff stage standard statement strategy stream structure study subject success summary
supply support survey system table target task team technology template term test theory thread threshold
ticket timeline tool topic total traffic training transaction transfer trend trial update usage user value
vendor version view vision volume warehouse week workflow workload
""".split()
VERBS = """improves reduces supports requires explains tracks describes changes measures affects delivers
replaces extends connects reviews limits predicts compares updates protects""".split()
ADJECTIVES = """new current critical stable internal external quarterly weekly shared remote manual automatic
detailed rough final early late primary secondary regional global local""".split()


def sentence(rng: random.Random) -> str:
    words = [rng.choice(ADJECTIVES), rng.choice(VOCABULARY), rng.choice(VERBS), "the"]
    words += [rng.choice(VOCABULARY if rng.random() < 0.8 else ADJECTIVES) for _ in range(rng.randint(4, 14))]
    return " ".join(words).capitalize() + rng.choice([".", ".", ".", "?", "!"])


def document(rng: random.Random, *, target_chars: int = 3000) -> str:
    paragraphs: list[str] = []
    size = 0
    while size < target_chars:
        paragraph = " ".join(sentence(rng) for _ in range(rng.randint(3, 7)))
        paragraphs.append(paragraph)
        size += len(paragraph) + 2
    return "\n\n".join(paragraphs)[: target_chars + 400]
