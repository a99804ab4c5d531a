"""bench_trash: random trash, restore and purge sequences over a folder of documents, 0 differences."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

pytestmark = pytest.mark.django_db

NOTES = {
    "tar.md": "# tar\n\n> Archiving utility, often combined with gzip or bzip2.\n\n- Create an archive: `tar cf a.tar f`\n",
    "grep.md": "# grep\n\n> Find patterns in files using regular expressions.\n\n- Search a file: `grep x f`\n",
    "curl.md": "# curl\n\n> Transfers data from or to a server over HTTP and FTP.\n\n- Download: `curl -O url`\n",
    "ssh.md": "# ssh\n\n> Secure Shell is a protocol used to log in to remote systems.\n\n- Connect: `ssh host`\n",
    "git.md": "# git\n\n> Distributed version control system for source code.\n\n- Clone: `git clone url`\n",
}


def test_bench_trash_runs_sequences_and_reports_no_difference_and_no_leak(tmp_path):
    for name, text in NOTES.items():
        (tmp_path / name).write_text(text)
    out = StringIO()
    call_command(
        "bench_trash", "--docs", str(tmp_path), "--sequences", "4", "--ops", "4", stdout=out, stderr=StringIO()
    )
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert result["documents"] == 5 and result["sequences"] == 4 and result["operations"] == 16
    assert result["differences"] == 0 and result["trashed_found_by_search"] == 0
    assert result["searches_while_trashed"] == result["trashed"]


def test_bench_trash_needs_a_few_documents(tmp_path):
    with pytest.raises(CommandError, match="fewer than 4"):
        call_command("bench_trash", "--docs", str(tmp_path), stdout=StringIO())
