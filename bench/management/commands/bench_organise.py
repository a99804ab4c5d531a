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

--real DIR adds real public documents (bench/organise_corpus.py: the corpus folder, its labels in
bench/data/organise-real/labels.json). Each file is uploaded as a person would (parsers, preparation,
chunks, embeddings with the configured model, auto tags; a queued upload's job is run at once), every
memory goes through the graph task, then the owner-wide pass. Its figures, under "real":

entity_recall         share of the names that must be entities found among the document's entities
entity_precision      of the labelled strings found as entities, the share that must be entities
type_accuracy         of the must-be names found, the share with an accepted type
not_entities_found    the must-not strings found as entities, "document: name (type)"
entities_per_document mean and max distinct entities mentioned by one document's memory
junk_tags             auto tags that are stop-words, Lorem ipsum filler, mojibake or no letters
links_at_1            links scoring 1.0; links_at_1_common_only those whose memories share only
                      entities mentioned by 10% or more of the documents (or no entity at all)
"""

from __future__ import annotations

import itertools
import json
import time
import uuid
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from bench import organise_corpus as oc
from graph import tasks
from graph.extraction import canonical_key
from graph.models import Entity, EntityMention, MemoryLink
from graph.services import graph_owner_retype, memory_links_refresh
from memories.models import Memory, UploadJob
from memories.services import (
    MemoryInput,
    memory_create_many,
    ocr_upload_run,
    upload_files,
    upload_job_run,
)

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


class _Upload:
    """The part of Django's UploadedFile that the upload code reads."""

    def __init__(self, name: str, data: bytes):
        self.name = self.client_name = name
        self.size = len(data)
        self._data = data

    def read(self, size: int = -1) -> bytes:
        return self._data if size is None or size < 0 else self._data[:size]


def upload_document(*, owner, document: oc.Document) -> tuple[Memory | None, str | None]:
    """Store one file as an upload does; (memory, None), or (None, the reason it was not stored)."""
    result = upload_files(owner=owner, files=[_Upload(document.path.name, document.path.read_bytes())])[0]
    if result.status == "queued" and result.job is not None:
        # What the worker would do next: read the pages that need OCR, or store the long text.
        run = ocr_upload_run if result.job.kind == UploadJob.Kind.OCR else upload_job_run
        job = run(job_id=result.job.pk) or UploadJob.objects.get(pk=result.job.pk)
        if job.memory_id is None:
            return None, f"its upload job ended {job.status}: {job.error or 'no memory'}"
        return Memory.objects.get(pk=job.memory_id), None
    if result.memory is None:
        return None, result.error or f"upload {result.status}"
    return result.memory, None


def _mean(values: list[int]) -> float | None:
    return round(sum(values) / len(values), 1) if values else None


def score_real(*, owner, keys: dict[str, int], documents: list[oc.Document], labels: dict) -> dict:
    """The --real figures for an owner whose documents are stored (keys: document -> memory id)."""
    memory_ids = set(keys.values())
    entities_of: dict[int, dict[str, tuple[str, list[str]]]] = {memory_id: {} for memory_id in memory_ids}
    mentioned_by: dict[str, set[int]] = {}
    for memory_id, name, entity_type, key, aliases in (
        EntityMention.objects.filter(owner=owner, memory_id__in=memory_ids)
        .values_list("memory_id", "entity__name", "entity__type", "entity__key", "entity__aliases")
        .distinct()
    ):
        entities_of[memory_id][name] = (entity_type, [key, *aliases])
        mentioned_by.setdefault(name, set()).add(memory_id)

    language_of = {document.key: document.language for document in documents}
    per_document, junk, missing, wrong_type = {}, [], {}, {}
    labelled = found = typed_right = junk_count = 0
    by_language: dict[str, dict[str, int]] = {}
    for key, memory_id in keys.items():
        counts = by_language.setdefault(
            language_of[key], {"labelled": 0, "found": 0, "junk": 0, "entities": 0, "docs": 0}
        )
        counts["docs"] += 1
        counts["entities"] += len(entities_of[memory_id])
        if key not in labels:
            continue
        matched = oc.match_labels(labels[key], entities_of[memory_id])
        labelled += len(labels[key].entities)
        found += len(matched["found"])
        typed_right += len(matched["typed_right"])
        junk_count += len(matched["not_entities_found"])
        counts["labelled"] += len(labels[key].entities)
        counts["found"] += len(matched["found"])
        counts["junk"] += len(matched["not_entities_found"])
        junk.extend(f"{key}: {item}" for item in matched["not_entities_found"])
        if matched["missing"]:
            missing[key] = matched["missing"]
        if matched["wrong_type"]:
            wrong_type[key] = matched["wrong_type"]
        per_document[key] = {
            "entities": len(entities_of[memory_id]),
            "recall": f"{len(matched['found'])}/{len(labels[key].entities)}",
            "not_entities_found": len(matched["not_entities_found"]),
        }

    bad_tags, tag_counts = [], []
    for key, memory_id in keys.items():
        tags = [item["tag"] for item in Memory.objects.get(pk=memory_id).auto_tags]
        tag_counts.append(len(tags))
        bad_tags.extend(f"{key}: {tag} ({why})" for tag in tags if (why := oc.junk_tag(tag, language_of[key])))

    common = oc.common_entities(mentioned_by, len(keys))
    name_of = {memory_id: key for key, memory_id in keys.items()}
    links = list(MemoryLink.objects.filter(owner=owner, source_id__in=memory_ids, target_id__in=memory_ids))
    at_one, common_only = [], []
    for link in links:
        if link.score < oc.FULL_SCORE:
            continue
        shared = set(entities_of[link.source_id]) & set(entities_of[link.target_id])
        line = f"{name_of[link.source_id]} ~ {name_of[link.target_id]} ({link.reason}): {link.evidence}"
        at_one.append(line)
        if shared <= common:
            common_only.append(line)

    counts_per_document = [len(entities_of[memory_id]) for memory_id in keys.values()]
    biggest = max(keys, key=lambda key: len(entities_of[keys[key]]), default=None)

    def ratio(a: int, b: int) -> float | None:
        return round(a / b, 3) if b else None

    return {
        "documents_labelled": len(per_document),
        "names_labelled": labelled,
        "entity_recall": ratio(found, labelled),
        "entity_precision": ratio(found, found + junk_count),
        "type_accuracy": ratio(typed_right, found),
        "not_entities_found_count": junk_count,
        "entities_per_document": {
            "mean": _mean(counts_per_document),
            "max": max(counts_per_document, default=0),
            "max_document": biggest,
        },
        "entities": Entity.objects.filter(owner=owner).count(),
        "junk_tags_count": len(bad_tags),
        "auto_tags_per_document": _mean(tag_counts),
        "links": len(links),
        "links_at_1_count": len(at_one),
        "links_at_1_common_only_count": len(common_only),
        "by_language": {
            language: (
                f"{c['docs']} docs, {round(c['entities'] / c['docs'], 1)} entities/doc, "
                f"recall {ratio(c['found'], c['labelled'])}, {c['junk']} must-not found"
            )
            for language, c in sorted(by_language.items())
        },
        "not_entities_found": junk,
        "junk_tags": bad_tags,
        "links_at_1_common_only": common_only,
        "links_at_1": at_one,
        "per_document": per_document,
        "missing": missing,
        "wrong_type": wrong_type,
    }


def run_real(folder: Path, labels_path: Path) -> dict:
    """Upload the corpus for a fresh user, organise it as the upload and sleep do, and score it."""
    documents = oc.load_corpus(folder)
    labels = oc.load_labels(labels_path) if labels_path.is_file() else {}
    unknown = set(labels) - {document.key for document in documents}
    if unknown:
        raise CommandError(f"{labels_path} labels documents that are not in {folder}: {sorted(unknown)[:5]}")
    owner = get_user_model().objects.create(
        username=f"bench-organise-real-{uuid.uuid4().hex[:8]}", email="bench-organise@localhost"
    )
    try:
        started = time.perf_counter()
        keys: dict[str, int] = {}
        refused: dict[str, str] = {}
        for document in documents:
            memory, reason = upload_document(owner=owner, document=document)
            if memory is None:
                refused[document.key] = reason or "not stored"
            elif memory.pk in keys.values():
                refused[document.key] = "a duplicate of another document"
            else:
                keys[document.key] = memory.pk
        uploaded = time.perf_counter()
        for memory_id in keys.values():  # as the upload's graph task does, one memory after another
            tasks.extract_memories([memory_id])
        graph_owner_retype(owner_id=owner.pk)
        memory_links_refresh(owner=owner, memory_ids=list(keys.values()), expire_all=True)
        result = {"documents": len(documents), "stored": len(keys), "refused": refused}
        result.update(score_real(owner=owner, keys=keys, documents=documents, labels=labels))
        result["languages"] = sorted({document.language for document in documents})
        result["seconds_upload"] = round(uploaded - started, 1)
        result["seconds"] = round(time.perf_counter() - started, 1)
        return result
    finally:
        owner.delete()


class Command(BaseCommand):
    help = "Score entity types, links and auto tags against a hand-labelled set of notes."

    def add_arguments(self, parser):
        parser.add_argument("--set", default=str(DEFAULT_SET), help="folder with labels.json and memories/*.md")
        parser.add_argument("--keep", action="store_true", help="keep the benchmark user and its memories")
        parser.add_argument(
            "--real",
            default=None,
            help="also score a corpus of real documents: a folder with manifest.json (bench/organise_corpus.py)",
        )
        parser.add_argument(
            "--real-labels",
            default=None,
            help=f"labels of the --real documents (default: DIR/labels.json if there is one, else {oc.LABELS})",
        )
        parser.add_argument("--real-only", action="store_true", help="with --real, skip the labelled set of notes")

    def handle(
        self, *args, set: str, keep: bool, real: str | None, real_labels: str | None, real_only: bool, **options
    ):
        real_result = None
        if real is not None:
            folder = Path(real)
            if not (folder / "manifest.json").is_file():
                raise CommandError(
                    f"{folder} has no manifest.json; build it with: python -m bench.organise_corpus {folder} --mirrors DIR"
                )
            if real_labels is None:
                real_labels = str(folder / "labels.json") if (folder / "labels.json").is_file() else str(oc.LABELS)
            real_result = run_real(folder, Path(real_labels))
            if real_only:
                self.stdout.write(json.dumps({"real": real_result}, ensure_ascii=False))
                return
        elif real_only:
            raise CommandError("--real-only needs --real DIR")
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
        if real_result is not None:
            result["real"] = real_result
        self.stdout.write(json.dumps(result, ensure_ascii=False))
