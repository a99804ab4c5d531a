"""factory_boy factories, one per model. Memories go through the real service so that their chunks,
embeddings and lexical index exist; derived rows are made consistent with the rows they belong to."""

from __future__ import annotations

import hashlib
import time

import factory
from django.contrib.auth import get_user_model
from django.utils import timezone

from connectors.models import ConnectorAccount, ConnectorItem, Provider
from core.models import ApiToken, RateCounter, TaskRun
from graph.models import (
    Entity,
    EntityMention,
    EntityType,
    MemoryExtraction,
    MemoryLink,
    Relationship,
    RelationshipEvidence,
    RelationType,
)
from memories.models import (
    Activity,
    ActivityKind,
    ChatSession,
    ChunkTerm,
    ConsumedFile,
    ConsumeWatcher,
    CorpusStat,
    ImportJob,
    Memory,
    MemoryChunk,
    MemoryVersion,
    Original,
    PurgedMemory,
    TermStat,
    Tier,
    TierMove,
    TrashedMemory,
    UploadJob,
)
from memories.services import memory_create, memory_delete
from sleep.models import SleepRun, SleepStepRun


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda o: f"{o.username}@example.com")
    password = factory.django.Password("correct horse battery staple")


def make_memory(owner, content: str = "A short note about the quarterly budget review.", **kwargs):
    kwargs.setdefault("title", "")
    return memory_create(owner=owner, content=content, **kwargs)


# --- core -------------------------------------------------------------------------------------------


class ApiTokenFactory(factory.django.DjangoModelFactory):
    """A token row; the plain key is on the instance as `key` (it is stored only as a hash)."""

    class Meta:
        model = ApiToken
        exclude = ["key"]

    user = factory.SubFactory(UserFactory)
    name = "test token"
    key = factory.Sequence(lambda n: f"kyb_test_token_{n:08d}_padding_padding")
    prefix = factory.LazyAttribute(lambda o: o.key[:12])
    key_hash = factory.LazyAttribute(lambda o: ApiToken.hash_key(o.key))


class TaskRunFactory(factory.django.DjangoModelFactory):
    """A finished, successful run of a graph extraction task."""

    class Meta:
        model = TaskRun

    task_id = factory.Sequence(lambda n: f"{n:032x}")
    name = factory.Sequence(lambda n: f"task-{n}")
    func = "graph.tasks.extract_memories"
    args = factory.LazyFunction(lambda: [[1]])
    host = "worker-1"
    pid = 4242
    started_at = factory.LazyFunction(timezone.now)
    finished_at = factory.LazyAttribute(lambda o: o.started_at)
    success = True


# --- memories ---------------------------------------------------------------------------------------


class RateCounterFactory(factory.django.DjangoModelFactory):
    """One account's requests in the current minute of a rate limit."""

    class Meta:
        model = RateCounter

    key = factory.Sequence(lambda n: f"account:{n}")
    slot = factory.LazyFunction(lambda: int(time.time() // 60))
    count = 1
    previous = 0
    expires_at = factory.LazyAttribute(lambda o: (o.slot + 2) * 60)


class MemoryFactory(factory.django.DjangoModelFactory):
    """A memory stored by memories.services.memory_create: chunked, embedded, indexed and tiered."""

    class Meta:
        model = Memory

    owner = factory.SubFactory(UserFactory)
    title = factory.Sequence(lambda n: f"Memory {n}")
    content = factory.Sequence(lambda n: f"Note {n} about the quarterly budget review and the hiring plan.")

    @classmethod
    def _create(cls, model_class, *args, owner, content, **kwargs):
        return memory_create(owner=owner, content=content, **kwargs)


class TrashedMemoryFactory(factory.django.DjangoModelFactory):
    """A memory moved to the trash by memories.services.memory_delete (the trash as admin shows it)."""

    class Meta:
        model = TrashedMemory

    owner = factory.SubFactory(UserFactory)
    title = factory.Sequence(lambda n: f"Deleted memory {n}")
    content = factory.Sequence(lambda n: f"Deleted note {n} about an old packing list.")

    @classmethod
    def _create(cls, model_class, *args, owner, content, **kwargs):
        memory = memory_create(owner=owner, content=content, **kwargs)
        memory_delete(memory=memory)
        return TrashedMemory.objects.get(pk=memory.pk)


class MemoryVersionFactory(factory.django.DjangoModelFactory):
    """A kept version: the history trigger writes one for every memory stored, so this returns the
    memory's newest version rather than inserting a row the trigger would not have written."""

    class Meta:
        model = MemoryVersion

    memory = factory.SubFactory(MemoryFactory)

    @classmethod
    def _create(cls, model_class, *args, memory, **kwargs):
        return model_class.objects.filter(pgh_obj=memory).order_by("-version").first()


class ActivityFactory(factory.django.DjangoModelFactory):
    """An activity entry (normally written by memories.services.activity.activity_record)."""

    class Meta:
        model = Activity

    memory = factory.SubFactory(MemoryFactory)
    owner = factory.SelfAttribute("memory.owner")
    memory_title = factory.SelfAttribute("memory.title")
    kind = ActivityKind.EDITED
    actor_kind = "person"
    actor_label = factory.SelfAttribute("owner.username")
    created_at = factory.LazyFunction(timezone.now)


class ConsumedFileFactory(factory.django.DjangoModelFactory):
    """A file taken from the watched folder (normally claimed by memories.services.consume)."""

    class Meta:
        model = ConsumedFile

    owner = factory.SubFactory(UserFactory)
    root = "/srv/inbox"
    claim = factory.Sequence(lambda n: f"claim{n:08d}")
    name = factory.Sequence(lambda n: f"scan-{n}.pdf")
    size = 1024


class ConsumeWatcherFactory(factory.django.DjangoModelFactory):
    """What a watcher of a watched folder last reported."""

    class Meta:
        model = ConsumeWatcher

    folder = factory.Sequence(lambda n: f"/srv/inbox-{n}")
    seen_at = factory.LazyFunction(timezone.now)


class PurgedMemoryFactory(factory.django.DjangoModelFactory):
    """The note that a memory was deleted forever (normally written by memories.services.memory_purge)."""

    class Meta:
        model = PurgedMemory

    owner = factory.SubFactory(UserFactory)
    memory_id = factory.Sequence(lambda n: 1_000_000 + n)
    purged_at = factory.LazyFunction(timezone.now)


class MemoryChunkFactory(factory.django.DjangoModelFactory):
    """A further chunk of a memory (its first chunks come with the memory)."""

    class Meta:
        model = MemoryChunk

    memory = factory.SubFactory(MemoryFactory)
    owner = factory.SelfAttribute("memory.owner")
    position = factory.LazyAttribute(lambda o: o.memory.chunks.count())
    text = factory.Sequence(lambda n: f"An extra chunk of text, number {n}.")
    char_start = 0
    char_end = factory.LazyAttribute(lambda o: len(o.text))
    text_hash = factory.LazyAttribute(lambda o: hashlib.sha256(o.text.encode()).hexdigest())
    embedding = factory.LazyFunction(lambda: [1.0] + [0.0] * 383)
    embedding_model = factory.LazyFunction(lambda: __import__("memories.embedding").embedding.model_name())
    tier = factory.SelfAttribute("memory.tier")


class TierMoveFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = TierMove

    memory = factory.SubFactory(MemoryFactory)
    owner = factory.SelfAttribute("memory.owner")
    from_tier = Tier.HOT
    to_tier = Tier.WARM
    reason = "idle for 8 days"
    cause = TierMove.Cause.SLEEP
    moved_at = factory.LazyFunction(timezone.now)


class ChatSessionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ChatSession

    owner = factory.SubFactory(UserFactory)
    title = factory.Sequence(lambda n: f"Chat {n}")


class UploadJobFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = UploadJob

    owner = factory.SubFactory(UserFactory)
    filename = factory.Sequence(lambda n: f"notes-{n}.txt")
    title = factory.LazyAttribute(lambda o: o.filename)
    text = "Text waiting to be stored as a memory."


class OriginalFactory(factory.django.DjangoModelFactory):
    """A kept original: the row and its bytes in the store (pass `data=` for other bytes)."""

    class Meta:
        model = Original

    memory = factory.SubFactory(MemoryFactory)
    owner = factory.LazyAttribute(lambda o: o.memory.owner)
    name = factory.Sequence(lambda n: f"notes-{n}.txt")
    media_type = "text/plain"
    data = factory.LazyAttribute(lambda o: f"The original bytes of {o.name}.\n".encode())
    size = factory.LazyAttribute(lambda o: len(o.data))
    sha256 = factory.LazyAttribute(lambda o: hashlib.sha256(o.data).hexdigest())

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        from django.db import transaction

        from memories import original_files

        data = kwargs.pop("data", None)
        with transaction.atomic():
            if data is not None:
                original_files.store(kwargs["owner"].pk, [data])
            return super()._create(model_class, *args, **kwargs)


class ImportJobFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ImportJob

    owner = factory.SubFactory(UserFactory)
    filename = factory.Sequence(lambda n: f"export-{n}.zip")


class ChunkTermFactory(factory.django.DjangoModelFactory):
    """A posting of the lexical index (normally written by memories.search.lexical)."""

    class Meta:
        model = ChunkTerm

    chunk = factory.LazyAttribute(lambda o: MemoryFactory().chunks.first())
    owner = factory.SelfAttribute("chunk.owner")
    lexeme = factory.Sequence(lambda n: f"term{n}")
    tf = 1
    impact = 1.0


class TermStatFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = TermStat

    owner = factory.SubFactory(UserFactory)
    lexeme = factory.Sequence(lambda n: f"term{n}")
    df = 1


class CorpusStatFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = CorpusStat

    owner = factory.SubFactory(UserFactory)
    chunk_count = 1
    total_length = 10


# --- graph ------------------------------------------------------------------------------------------


class EntityFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Entity

    owner = factory.SubFactory(UserFactory)
    name = factory.Sequence(lambda n: f"Entity {n}")
    key = factory.LazyAttribute(lambda o: o.name.lower())
    type = EntityType.values[0]
    first_seen = factory.LazyFunction(timezone.now)
    last_seen = factory.LazyFunction(timezone.now)


class EntityMentionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = EntityMention

    memory = factory.SubFactory(MemoryFactory)
    owner = factory.SelfAttribute("memory.owner")
    entity = factory.SubFactory(EntityFactory, owner=factory.SelfAttribute("..owner"))
    chunk = factory.LazyAttribute(lambda o: o.memory.chunks.first())
    start = 0
    end = factory.LazyAttribute(lambda o: len(o.entity.name))
    type = factory.SelfAttribute("entity.type")
    surface = factory.SelfAttribute("entity.name")


class RelationshipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Relationship

    owner = factory.SubFactory(UserFactory)
    source = factory.SubFactory(EntityFactory, owner=factory.SelfAttribute("..owner"))
    target = factory.SubFactory(EntityFactory, owner=factory.SelfAttribute("..owner"))
    relation_type = RelationType.values[0]
    weight = 0.5
    confidence = 0.5
    evidence_count = 1
    last_seen = factory.LazyFunction(timezone.now)


class RelationshipEvidenceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = RelationshipEvidence

    relationship = factory.SubFactory(RelationshipFactory)
    owner = factory.SelfAttribute("relationship.owner")
    memory = factory.SubFactory(MemoryFactory, owner=factory.SelfAttribute("..owner"))
    chunk = factory.LazyAttribute(lambda o: o.memory.chunks.first())
    confidence = 0.5
    sentence = "Alice works with Bob."


class MemoryLinkFactory(factory.django.DjangoModelFactory):
    """A link between two memories of one owner, source before target as the graph stores them."""

    class Meta:
        model = MemoryLink

    owner = factory.SubFactory(UserFactory)
    source = factory.SubFactory(MemoryFactory, owner=factory.SelfAttribute("..owner"))
    target = factory.SubFactory(MemoryFactory, owner=factory.SelfAttribute("..owner"))
    reason = MemoryLink.Reason.SHARED_TAGS
    score = 0.5
    confidence = 0.5
    last_reinforced_at = factory.LazyFunction(timezone.now)


class MemoryExtractionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = MemoryExtraction

    memory = factory.SubFactory(MemoryFactory)
    content_hash = factory.SelfAttribute("memory.content_hash")
    extracted_at = factory.LazyFunction(timezone.now)


# --- connectors -------------------------------------------------------------------------------------


class ConnectorAccountFactory(factory.django.DjangoModelFactory):
    """A connector with no linked OAuth account (tests that sync link one; see tests/connectors)."""

    class Meta:
        model = ConnectorAccount

    owner = factory.SubFactory(UserFactory)
    provider = Provider.NOTION
    label = factory.Sequence(lambda n: f"Workspace {n}")


class ConnectorItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ConnectorItem

    account = factory.SubFactory(ConnectorAccountFactory)
    external_id = factory.Sequence(lambda n: f"item-{n}")
    title = factory.Sequence(lambda n: f"Remote page {n}")
    mime = "notion/page"
    status = ConnectorItem.Status.SKIPPED
    error = "the page has no text"


# --- sleep ------------------------------------------------------------------------------------------


class SleepRunFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SleepRun

    trigger = SleepRun.Trigger.MANUAL
    owner = factory.SubFactory(UserFactory)


class SleepStepRunFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SleepStepRun

    run = factory.SubFactory(SleepRunFactory)
    step = SleepStepRun.Step.TAG
    position = 0
