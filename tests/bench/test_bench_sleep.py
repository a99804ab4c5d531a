"""bench_sleep on four memories: the scheduled path (a child process) runs every step and ends with JSON."""

from __future__ import annotations

import pytest


@pytest.mark.django_db(transaction=True)
def test_bench_sleep_measures_the_scheduled_path_and_ends_with_json():
    import json
    from io import StringIO
    from pathlib import Path

    from django.core.management import call_command

    out = StringIO()
    call_command(
        "bench_sleep",
        memories=4,
        via_worker=True,
        stdout=out,
        stderr=StringIO(),
        data=str(Path(__file__).resolve().parent.parent / "data" / "scifact-mini"),
    )
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert result["memories"] == 4 and result["path"] == "child process (scheduled)"
    assert result["failed"] == 0
    assert set(result["steps"]) == {"tag", "link", "tier", "summarize"}
