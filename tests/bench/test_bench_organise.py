"""bench_organise on its labelled set: every figure is a share, and the whole set is stored."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command


@pytest.mark.django_db(transaction=True)
def test_bench_organise_scores_the_labelled_set():
    out = StringIO()
    call_command("bench_organise", stdout=out)
    import json

    result = json.loads(out.getvalue().strip().splitlines()[-1])
    for key in ("entity_type_accuracy", "non_person_as_person", "link_pair_recall", "link_precision", "tag_precision"):
        assert 0.0 <= result[key] <= 1.0
    assert result["memories"] == 43
