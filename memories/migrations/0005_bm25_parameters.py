"""Recompute the stored BM25 impacts for k1 = 0.9, b = 0.4 (see memories.search.lexical)."""

from django.db import migrations

RECOMPUTE = """
WITH avg AS (SELECT owner_id, total_length::float8 / NULLIF(chunk_count, 0) AS avglen FROM memories_corpusstat)
UPDATE memories_chunkterm p
SET impact = p.tf * (0.9 + 1) / (p.tf + 0.9 * (1 - 0.4 + 0.4 * length(c.search_vector) / COALESCE(avg.avglen, 90)))
FROM memories_memorychunk c, avg
WHERE c.id = p.chunk_id AND avg.owner_id = p.owner_id
"""


class Migration(migrations.Migration):
    dependencies = [("memories", "0004_drop_redundant_posting_indexes")]

    operations = [migrations.RunSQL(RECOMPUTE, migrations.RunSQL.noop)]
