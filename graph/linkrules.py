"""When two memories are linked, how strongly, and how to say why: pure functions, no database.

Two memories are related when they mean similar things or share things that are rare in the owner's
collection. Both measures are relative to the collection, so the same rules hold at 10 memories and at
100,000, on short notes and on long papers:

* Rarity, like idf: a name or tag carried by only the two memories weighs 1, one carried by
  COMMON_SHARE of the memories (or more) weighs 0, log-linearly between. "USA" in a third of an
  account links nothing, however many memories name it.
* Overlap: the cosine of the two memories' rarity-weighted sets of names and tags. Three rare names
  shared by two short notes are most of what the notes are about; the same three among the 150
  names of two long papers are an accident of length.
* Standing: how much closer the two memories are in meaning than each is to its usual nearest
  neighbours (cross-domain similarity local scaling: 2·sim − r_a − r_b, r the mean similarity to the
  NEIGHBOURHOOD nearest memories). A memory that resembles everything (a generic chat, a form) stands
  out from nobody; a raw similarity threshold would link it to everything in a homogeneous account.

A link needs either meaning (similarity of at least SEMANTIC_FLOOR, and standing plus overlap of at
least STANDING_MIN) or several rare shared things (at least RARE_SHARED_MIN names or tags of rarity
RARE or more, an overlap of at least OVERLAP_MIN, and similarity plus overlap of at least SHARED_MIN). A rare tag the person gave both
memories by hand is a filing they made, like a wikilink: it links on its own. Its score,
1 − (1 − similarity)(1 − overlap), stays below 1 unless the two memories are near-duplicates
(similarity of NEAR_DUPLICATE or more). Decision record 0018 says how the constants were chosen.

Meaning counts only where the embedding model reads the language (KYBERNESIS_EMBEDDING_LANGUAGES;
a memory of unknown language counts as read): to the bundled English model two German or Russian
texts are close because they are German or Russian, so between such memories only near-duplicates
and several rare shared things link.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

# Bumped whenever the rules below change what is linked or how it scores: the sleep agent's Link step
# rescores every owner whose links were made by older rules.
LINK_RULES_VERSION = 3

COMMON_SHARE = 0.3
RARE = 0.5
RARE_SHARED_MIN = 2
NEIGHBOURHOOD = 5
SEMANTIC_FLOOR = 0.35
STANDING_MIN = 0.05
SHARED_MIN = 0.3
OVERLAP_MIN = 0.05  # what rare things two memories share must be some part of what they are about
NEAR_DUPLICATE = 0.95
MAX_SCORE = 0.99  # the ceiling of anything short of a near-duplicate


def rarity(df: int, n: int) -> float:
    """How distinctive a name or tag carried by df of n memories is: 1 when only two carry it (the
    fewest that can share it), 0 from COMMON_SHARE of the collection up, log-linear between."""
    common = COMMON_SHARE * n
    if df <= 2:
        return 1.0 if df < common or n <= 2 / COMMON_SHARE else 0.0
    if df >= common:
        return 0.0
    return math.log(common / df) / math.log(common / 2)


@dataclass
class PairEvidence:
    """What two memories have in common. entities and tags: (name, weight) pairs, the weight being
    the feature's rarity times how firmly each memory carries it (the smaller of the two)."""

    similarity: float
    standing: float
    overlap: float
    entities: list[tuple[str, float]] = field(default_factory=list)
    tags: list[tuple[str, float]] = field(default_factory=list)
    filed: list[str] = field(default_factory=list)  # rare tags the person gave both memories by hand
    readable: bool = True  # the embedding model reads both memories' language: their similarity means something

    @property
    def rare_shared(self) -> int:
        return sum(1 for _, weight in (*self.entities, *self.tags) if weight >= RARE)

    @property
    def near_duplicate(self) -> bool:
        return self.similarity >= NEAR_DUPLICATE


@dataclass(frozen=True)
class LinkVerdict:
    reason: str  # "semantic", "shared_entities" or "shared_tags": what carries the link most
    score: float
    confidence: float


def link_verdict(evidence: PairEvidence) -> LinkVerdict | None:
    """The link two memories warrant, or None. See the module docstring for the rules."""
    sim, overlap = evidence.similarity, evidence.overlap
    by_meaning = evidence.near_duplicate or (
        evidence.readable and sim >= SEMANTIC_FLOOR and evidence.standing + overlap >= STANDING_MIN
    )
    by_shared = evidence.rare_shared >= RARE_SHARED_MIN and overlap >= OVERLAP_MIN and sim + overlap >= SHARED_MIN
    by_filing = bool(evidence.filed)
    if not (by_meaning or by_shared or by_filing):
        return None
    if evidence.near_duplicate:
        score = min(1.0, max(sim, 0.0))
    else:
        score = min(MAX_SCORE, 1 - (1 - max(sim, 0.0)) * (1 - overlap))
    # How far past the bar it cleared: 0.5 just at it, near 1 well past it.
    margin = max(
        evidence.standing + overlap - STANDING_MIN if by_meaning else 0.0,
        sim + overlap - SHARED_MIN if by_shared else 0.0,
        0.5 if by_filing else 0.0,
    )
    confidence = min(MAX_SCORE, 0.5 + margin)
    entity_weight = sum(weight for _, weight in evidence.entities)
    tag_weight = sum(weight for _, weight in evidence.tags)
    if by_meaning and sim >= overlap:
        reason = "semantic"
    else:
        reason = "shared_entities" if entity_weight >= tag_weight else "shared_tags"
    return LinkVerdict(reason=reason, score=round(score, 4), confidence=round(confidence, 4))


def link_details(evidence: PairEvidence, *, limit: int = 8) -> dict:
    """The evidence a link keeps (MemoryLink.details): the shared names and tags with their weights,
    rarest first, and the similarity."""
    return {
        "similarity": round(evidence.similarity, 4),
        "standing": round(evidence.standing, 4),
        "overlap": round(evidence.overlap, 4),
        "entities": [[name, round(w, 2)] for name, w in sorted(evidence.entities, key=lambda i: -i[1])[:limit]],
        "tags": [[tag, round(w, 2)] for tag, w in sorted(evidence.tags, key=lambda i: -i[1])[:limit]],
        "filed": evidence.filed[:limit],
        "nearDuplicate": evidence.near_duplicate,
    }


def _listed(items: list) -> str:
    shown = [f"{name} ({weight:.1f})" for name, weight in items[:3]]
    more = len(items) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _count(n: int, word: str, rare: bool) -> str:
    return f"{n} {'rare ' if rare else ''}{word}{'s' if n != 1 else ''}"


def details_explanation(details: dict) -> str:
    """Why two memories are linked, in words: "shares 3 rare names: X (0.8), Y (0.6) and 1 more;
    similar meaning 0.71". The weight in brackets is how rare the name is in the collection."""
    parts = []
    entities = [item for item in details.get("entities") or [] if item[1] > 0]
    tags = [item for item in details.get("tags") or [] if item[1] > 0]
    if entities:
        rare = all(weight >= RARE for _, weight in entities)
        parts.append(f"shares {_count(len(entities), 'name', rare)}: {_listed(entities)}")
    if tags:
        rare = all(weight >= RARE for _, weight in tags)
        parts.append(f"{'and ' if entities else 'shares '}{_count(len(tags), 'tag', rare)}: {_listed(tags)}")
    if details.get("filed"):
        parts.append("both filed under " + ", ".join(f"#{tag}" for tag in details["filed"][:3]))
    similarity = details.get("similarity")
    if details.get("nearDuplicate"):
        parts.append(f"nearly the same text ({similarity:.2f})")
    elif similarity is not None:
        parts.append(f"similar meaning {similarity:.2f}")
    return "; ".join(parts)
