"""Chat memories are classified again by the revised question rule (memories.search.questions): a
message that says more than it asks ("I went to a support group yesterday and it was so powerful.
Have you been to one?") is a note that also asks, no longer a question ranked after every note. A
kind a person chose is kept. Only rows whose kind changes are written, a thousand at a time; each
such change is a version of the memory that names the rule as its author."""

import json

from django.db import migrations

BATCH = 1000
CONTEXT = {"kind": "system", "label": "the question rule, revised: a message that says more than it asks is a note"}


def reclassify_chat_memories(apps, schema_editor):
    from memories.search.questions import QUESTION, asks

    Memory = apps.get_model("memories", "Memory")
    if schema_editor is not None:
        # The history trigger reads who made a change from this setting, for this transaction only.
        schema_editor.execute("SELECT set_config('pghistory.context_metadata', %s, true)", [json.dumps(CONTEXT)])
    pending = Memory.objects.filter(source="chat", kind_chosen_at__isnull=True).order_by("pk")
    last = 0
    while True:
        batch = list(pending.filter(pk__gt=last).only("pk", "content", "metadata")[:BATCH])
        if not batch:
            return
        changed = []
        for memory in batch:
            metadata = dict(memory.metadata or {})
            if asks(memory.content):
                metadata["kind"] = QUESTION
            else:
                metadata.pop("kind", None)
            if metadata != (memory.metadata or {}):
                memory.metadata = metadata
                changed.append(memory)
        Memory.objects.bulk_update(changed, ["metadata"])
        last = batch[-1].pk


class Migration(migrations.Migration):
    dependencies = [("memories", "0029_language")]

    operations = [
        migrations.RunPython(reclassify_chat_memories, migrations.RunPython.noop, elidable=True),
    ]
