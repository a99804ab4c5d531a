"""The knowledge graph: entities, their mentions in chunks, relationships, and memory links."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from core.querysets import OwnedQuerySet
from graph.linkrules import details_explanation
from graph.vocabulary import ENTITY_TYPE_LABELS, RELATION_LABELS

UNIT_INTERVAL = [MinValueValidator(0.0), MaxValueValidator(1.0)]


# The enums are built from the vocabulary the extractor uses, so the two cannot drift apart.
EntityType = models.TextChoices(
    "EntityType", [(value.upper(), (value, label)) for value, label in ENTITY_TYPE_LABELS.items()]
)
RelationType = models.TextChoices(
    "RelationType", [(value.upper(), (value, label)) for value, label in RELATION_LABELS.items()]
)


# The partial alias index's condition, as Django writes it; raw queries repeat it to use the index.
ALIASED_SQL = """NOT ("aliases" = '{}'::varchar(200)[])"""


class Entity(models.Model):
    """A person, place, organisation, concept... named in the owner's memories.

    `key` is the canonical form (graph.extraction.canonical_key) that makes surface variants one
    entity; `aliases` holds further keys merged into it. Counts, type and salience are derived from
    the mentions and recomputed whenever they change.
    """

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=200)
    key = models.CharField(max_length=200)
    aliases = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    type = models.CharField(max_length=16, choices=EntityType.choices)
    salience = models.FloatField(default=0.0, validators=UNIT_INTERVAL)
    mention_count = models.PositiveIntegerField(default=0)
    memory_count = models.PositiveIntegerField(default=0)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["-salience", "name", "id"]
        verbose_name_plural = "entities"
        constraints = [
            models.UniqueConstraint(fields=["owner", "key"], name="entity_owner_key_unique"),
            models.CheckConstraint(condition=models.Q(type__in=EntityType.values), name="entity_type_valid"),
        ]
        indexes = [
            models.Index(fields=["owner", "-salience"], name="entity_owner_salience"),
            # Only merged entities have aliases, so an index of just those finds an owner's aliased
            # entities at once and costs nothing when the many others are inserted. A query must
            # repeat ALIASED_SQL for the planner to use it.
            models.Index(fields=["owner"], name="entity_owner_aliased", condition=~models.Q(aliases=[])),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.type})"


class EntityMention(models.Model):
    """One place a chunk names an entity; start and end are character offsets into the chunk's text."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False)
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="mentions", db_index=False)
    memory = models.ForeignKey("memories.Memory", on_delete=models.CASCADE, related_name="entity_mentions")
    # SET_NULL, not CASCADE: when an edit replaces a memory's chunks, its old mentions stay (without a
    # chunk) until the re-extraction task replaces them, so it still knows which entities to recount.
    chunk = models.ForeignKey(
        "memories.MemoryChunk", null=True, blank=True, on_delete=models.SET_NULL, related_name="entity_mentions"
    )
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    # The type this mention was recognised as; the entity's type is the majority of these.
    type = models.CharField(max_length=16, choices=EntityType.choices)
    surface = models.CharField(max_length=200)

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["chunk_id", "start"]
        constraints = [
            models.UniqueConstraint(fields=["chunk", "start", "entity"], name="entitymention_chunk_start_unique"),
            models.CheckConstraint(condition=models.Q(end__gt=models.F("start")), name="entitymention_span"),
        ]
        indexes = [models.Index(fields=["entity", "memory"], name="entitymention_entity_memory")]

    def __str__(self) -> str:
        return f"{self.surface} @ {self.chunk_id}:{self.start}"


class Relationship(models.Model):
    """A typed edge between two entities, kept while at least one chunk still evidences it.

    weight is how often the pair is evidenced, normalised over the owner's edges; confidence is the
    strongest kind of evidence (named by a verb or preposition > dependency link > co-occurrence);
    context_chunk and evidence are the strongest, latest piece of that evidence.
    """

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    # source is covered by the unique (source, target, relation_type) index.
    source = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="relationships_out", db_index=False)
    target = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="relationships_in")
    relation_type = models.CharField(max_length=24, choices=RelationType.choices)
    weight = models.FloatField(default=0.0, validators=UNIT_INTERVAL)
    confidence = models.FloatField(default=0.0, validators=UNIT_INTERVAL)
    evidence_count = models.PositiveIntegerField(default=0)
    context_chunk = models.ForeignKey(
        "memories.MemoryChunk", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    evidence = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    last_seen = models.DateTimeField()

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["-weight", "id"]
        constraints = [
            models.UniqueConstraint(fields=["source", "target", "relation_type"], name="relationship_edge_unique"),
            models.CheckConstraint(condition=~models.Q(source=models.F("target")), name="relationship_no_loop"),
            models.CheckConstraint(
                condition=models.Q(relation_type__in=RelationType.values), name="relationship_type_valid"
            ),
        ]
        indexes = [
            models.Index(fields=["owner", "-weight"], name="relationship_owner_weight"),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} -[{self.relation_type}]-> {self.target_id}"


class RelationshipEvidence(models.Model):
    """One sentence of one chunk that evidences a relationship. Deleting the chunk deletes it, and a
    relationship left without evidence is deleted too."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False)
    relationship = models.ForeignKey(Relationship, on_delete=models.CASCADE, related_name="evidence_rows")
    memory = models.ForeignKey("memories.Memory", on_delete=models.CASCADE, related_name="+")
    chunk = models.ForeignKey(
        "memories.MemoryChunk", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    confidence = models.FloatField(validators=UNIT_INTERVAL)
    sentence = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    objects = OwnedQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["relationship", "chunk"], name="relationshipevidence_chunk_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.relationship_id} in memory {self.memory_id}"


class MemoryLink(models.Model):
    """Two related memories. One row per unordered pair and reason: source_id < target_id always.

    The tier rules count a memory's distinct linked memories ("relationships") and the links
    created or reinforced recently ("recent active connections").
    """

    class Reason(models.TextChoices):
        SHARED_ENTITIES = "shared_entities", "Shared entities"
        SHARED_TAGS = "shared_tags", "Shared tags"
        SEMANTIC = "semantic", "Semantic similarity"
        LINKED_IN_NOTE = "linked_in_note", "Linked in note"
        MAIL_THREAD = "mail_thread", "A reply in one mail thread"
        MAIL_ATTACHMENT = "mail_attachment", "A mail and its attachment"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    source = models.ForeignKey("memories.Memory", on_delete=models.CASCADE, related_name="links_out")
    target = models.ForeignKey("memories.Memory", on_delete=models.CASCADE, related_name="links_in")
    reason = models.CharField(max_length=24, choices=Reason.choices)
    score = models.FloatField(validators=UNIT_INTERVAL)
    confidence = models.FloatField(validators=UNIT_INTERVAL)
    # What the two memories share, as shown: the entity names or tags that carry the link, most
    # distinctive first ("PostgreSQL|pgvector"); empty when nothing shared names it.
    evidence = models.CharField(max_length=300, blank=True, default="")
    # The evidence behind a link by content (graph.linkrules.link_details): the shared names and
    # tags with their weights, the similarity of the two memories and how it stands out. Empty for
    # a link the material states (a wikilink, a mail thread) and for links made before it was kept.
    details = models.JSONField(default=dict, blank=True)
    # graph.linkrules.LINK_RULES_VERSION when the link was last scored: the sleep agent rescores
    # links older rules made.
    rules_version = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    last_reinforced_at = models.DateTimeField()

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["-score", "id"]
        constraints = [
            models.UniqueConstraint(fields=["source", "target", "reason"], name="memorylink_pair_reason_unique"),
            models.CheckConstraint(condition=models.Q(source__lt=models.F("target")), name="memorylink_ordered_pair"),
        ]
        indexes = [
            models.Index(fields=["target"], name="memorylink_target"),
            models.Index(fields=["owner", "last_reinforced_at"], name="memorylink_owner_reinforced"),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} ↔ {self.target_id} ({self.reason})"

    @property
    def explanation(self) -> str:
        """Why the two memories are linked, in words: "shares 2 rare names: PostgreSQL (0.8),
        pgvector (0.6); similar meaning 0.71", "linked in note"; a link scored before its evidence
        was kept says what it can: "both mention PostgreSQL and pgvector", "close in meaning (0.71)"."""
        if self.details:
            return details_explanation(self.details)
        shared = [item for item in self.evidence.split("|") if item]
        if self.reason == self.Reason.SEMANTIC or not shared:
            return (
                f"close in meaning ({self.score:.2f})"
                if self.reason == self.Reason.SEMANTIC
                else self.get_reason_display().lower()
            )
        listed = shared[0] if len(shared) == 1 else ", ".join(shared[:-1]) + " and " + shared[-1]
        if self.reason == self.Reason.SHARED_TAGS:
            return f"shared tag{'s' if len(shared) > 1 else ''} {listed}"
        return f"both mention {listed}"


class MemoryExtraction(models.Model):
    """Which content a memory's graph reflects: the content hash its entities were extracted from, and
    by which version of the rules. A memory whose hash differs (or that has no row) is due for
    extraction, and so is one read by older rules."""

    memory = models.OneToOneField(
        "memories.Memory", on_delete=models.CASCADE, primary_key=True, related_name="graph_extraction"
    )
    content_hash = models.CharField(max_length=64)
    extracted_at = models.DateTimeField()
    # graph.vocabulary.EXTRACTION_RULES_VERSION at extraction: a memory read by older rules is due again.
    rules_version = models.PositiveSmallIntegerField(default=1, db_default=1)

    def __str__(self) -> str:
        return f"{self.memory_id}: {self.content_hash[:12]}"
