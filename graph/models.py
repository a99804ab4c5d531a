"""The knowledge graph: memory links (entities, mentions and relationships join them here)."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from memories.models import OwnedQuerySet

UNIT_INTERVAL = [MinValueValidator(0.0), MaxValueValidator(1.0)]


class MemoryLink(models.Model):
    """Two related memories. One row per unordered pair and reason: source_id < target_id always.

    The tier rules count a memory's distinct linked memories ("relationships") and the links
    created or reinforced recently ("recent active connections").
    """

    class Reason(models.TextChoices):
        SHARED_ENTITIES = "shared_entities", "Shared entities"
        SHARED_TAGS = "shared_tags", "Shared tags"
        SEMANTIC = "semantic", "Semantic similarity"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    source = models.ForeignKey("memories.Memory", on_delete=models.CASCADE, related_name="links_out")
    target = models.ForeignKey("memories.Memory", on_delete=models.CASCADE, related_name="links_in")
    reason = models.CharField(max_length=24, choices=Reason.choices)
    score = models.FloatField(validators=UNIT_INTERVAL)
    confidence = models.FloatField(validators=UNIT_INTERVAL)
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
