"""Chat messages stored before messages were classified get their `metadata.kind`: a message that
asks something is marked "question", so search ranks it after the notes that answer it and the chat
answers it, while a note is kept and not answered. Messages that already carry a kind are left."""

from django.db import migrations

BATCH = 1000


def mark_questions(apps, schema_editor):
    from memories.search.questions import QUESTION, asks

    Memory = apps.get_model("memories", "Memory")
    pending = Memory.objects.filter(source="chat").exclude(metadata__has_key="kind").order_by("pk")
    last = 0
    while True:
        batch = list(pending.filter(pk__gt=last).only("pk", "content", "metadata")[:BATCH])
        if not batch:
            return
        marked = []
        for memory in batch:
            if asks(memory.content):
                memory.metadata = {**(memory.metadata or {}), "kind": QUESTION}
                marked.append(memory)
        Memory.objects.bulk_update(marked, ["metadata"])
        last = batch[-1].pk


class Migration(migrations.Migration):
    dependencies = [("memories", "0019_lexical_final_average_length")]

    operations = [migrations.RunPython(mark_questions, migrations.RunPython.noop, elidable=True)]
