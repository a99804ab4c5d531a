"""Benchmark: how well the collection organises itself, on a hand-labelled set; last line is JSON.

The set (bench/data/organise/ by default, or --set DIR of the same shape) is a folder of notes,
memories/<key>.md with a '# Title' first line, and labels.json: groups of notes that belong
together, expected entity types, names that are not people, alias pairs and good/bad tags. The
notes are stored for a fresh user the way an upload is (chunks, embeddings, auto tags), then the
graph task runs for each (extraction and the new memory's links, as after an upload), then the
owner-wide pass the sleep agent's Link step makes (re-typing and links over the whole collection).

entity_type_accuracy  share of labelled names found with an accepted type (a name not found is wrong)
non_person_as_person  share of the not-people names typed person (a name not found is not a person)
link_pair_recall      share of the pairs within a group that are linked
link_precision        share of linked pairs that are within a group
tag_precision         of the auto tags a label judges, the share judged good
alias_pairs_merged    alias pairs that are one entity
"""

from __future__ import annotations

import itertools
import json
import time
import uuid
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from graph import tasks
from graph.extraction import canonical_key
from graph.models import Entity, MemoryLink
from graph.services import graph_owner_retype, memory_links_refresh
from memories.models import Memory
from memories.services import MemoryInput, memory_create_many

DEFAULT_SET = Path(__file__).resolve().parents[2] / "data" / "organise"


def read_set(folder: Path) -> tuple[dict[str, tuple[str, str]], dict]:
    labels_path = folder / "labels.json"
    if not labels_path.exists():
        raise CommandError(f"no labels.json in {folder}")
    labels = json.loads(labels_path.read_text(encoding="utf-8"))
    notes = {}
    for path in sorted((folder / "memories").glob("*.md")):
        text = path.read_text(encoding="utf-8").strip()
        first, _, body = text.partition("\n")
        title = first.lstrip("# ").strip() if first.startswith("#") else path.stem
        notes[path.stem] = (title, body.strip() if first.startswith("#") else text)
    missing = {key for group in labels.get("groups", {}).values() for key in group} - set(notes)
    if missing:
        raise CommandError(f"labels.json names notes that are not in memories/: {sorted(missing)[:5]}")
    return notes, labels


def _entity_index(owner) -> dict[str, Entity]:
    index: dict[str, Entity] = {}
    for entity in Entity.objects.filter(owner=owner):
        for key in (entity.key, *entity.aliases):
            index.setdefault(key, entity)
    return index


def _find(index: dict[str, Entity], name: str) -> Entity | None:
    for entity_type in (None, "technology", "concept"):
        found = index.get(canonical_key(name, entity_type))
        if found is not None:
            return found
    return None


def score(*, owner, keys: dict[str, int], labels: dict) -> dict:
    """The figures of the module docstring for an owner whose notes are stored (keys: note -> memory id)."""
    index = _entity_index(owner)
    typed = {name: _find(index, name) for name in labels.get("entities", {})}
    right = [
        name
        for name, accepted in labels.get("entities", {}).items()
        if typed[name] is not None and typed[name].type in accepted
    ]
    wrong = {
        name: (typed[name].type if typed[name] else None) for name in labels.get("entities", {}) if name not in right
    }
    not_people = labels.get("not_people", [])
    as_person = [name for name in not_people if (e := _find(index, name)) is not None and e.type == "person"]
    aliases = labels.get("aliases", [])
    merged = [pair for pair in aliases if (a := _find(index, pair[0])) is not None and a == _find(index, pair[1])]

    group_of = {keys[key]: group for group, members in labels.get("groups", {}).items() for key in members}
    within = {
        tuple(sorted((keys[a], keys[b])))
        for members in labels.get("groups", {}).values()
        for a, b in itertools.combinations(members, 2)
    }
    linked = {
        (a, b)
        for a, b in MemoryLink.objects.filter(owner=owner).values_list("source_id", "target_id")
        if a in group_of and b in group_of
    }
    name_of = {memory_id: key for key, memory_id in keys.items()}
    stray = sorted(
        f"{name_of[link.source_id]} ~ {name_of[link.target_id]}: {link.explanation}"
        for link in MemoryLink.objects.filter(owner=owner)
        if (link.source_id, link.target_id) in linked - within
    )
    unlinked = sum(1 for memory_id in group_of if not any(memory_id in pair for pair in linked))

    good = bad = unjudged = 0
    bad_found: list[str] = []
    for key, judged in labels.get("tags", {}).items():
        memory = Memory.objects.get(pk=keys[key])
        for item in memory.auto_tags:
            if item["tag"] in judged.get("good", []):
                good += 1
            elif item["tag"] in judged.get("bad", []):
                bad += 1
                bad_found.append(f"{key}:{item['tag']}")
            else:
                unjudged += 1

    def ratio(a: int, b: int) -> float | None:
        return round(a / b, 3) if b else None

    return {
        "entity_type_accuracy": ratio(len(right), len(typed)),
        "non_person_as_person": ratio(len(as_person), len(not_people)),
        "link_pair_recall": ratio(len(within & linked), len(within)),
        "link_precision": ratio(len(linked & within), len(linked)),
        "tag_precision": ratio(good, good + bad),
        "alias_pairs_merged": f"{len(merged)}/{len(aliases)}",
        "tags_judged_share": ratio(good + bad, good + bad + unjudged),
        "memories_without_links": unlinked,
        "links": len(linked),
        "wrong_types": wrong,
        "links_across_groups": stray,
        "non_people_typed_person": as_person,
        "bad_tags": bad_found,
    }


class Command(BaseCommand):
    help = "Score entity types, links and auto tags against a hand-labelled set of notes."

    def add_arguments(self, parser):
        parser.add_argument("--set", default=str(DEFAULT_SET), help="folder with labels.json and memories/*.md")
        parser.add_argument("--keep", action="store_true", help="keep the benchmark user and its memories")

    def handle(self, *args, set: str, keep: bool, **options):
        notes, labels = read_set(Path(set))
        owner = get_user_model().objects.create(
            username=f"bench-organise-{uuid.uuid4().hex[:8]}", email="bench-organise@localhost"
        )
        try:
            started = time.perf_counter()
            memories = memory_create_many(
                owner=owner, items=[MemoryInput(title=title, content=content) for title, content in notes.values()]
            )
            keys = {key: memory.pk for key, memory in zip(notes, memories, strict=True)}
            for memory in memories:  # as the upload's graph task does, one memory after another
                tasks.extract_memories([memory.pk])
            after_ingest = score(owner=owner, keys=keys, labels=labels)
            graph_owner_retype(owner_id=owner.pk)
            memory_links_refresh(owner=owner, memory_ids=list(keys.values()), expire_all=True)
            result = score(owner=owner, keys=keys, labels=labels)
            result["link_pair_recall_after_ingest"] = after_ingest["link_pair_recall"]
            result["memories"] = len(keys)
            result["seconds"] = round(time.perf_counter() - started, 1)
        finally:
            if not keep:
                owner.delete()
        self.stdout.write(json.dumps(result))
