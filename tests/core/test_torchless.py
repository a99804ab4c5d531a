"""core.torchless: spaCy loads without PyTorch, and PyTorch stays importable for whoever needs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = """
import os, sys, threading
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kybernesis.settings_test")
import django
django.setup()
from graph.extraction import pipeline
doc = pipeline.get_nlp()("Ada Lovelace met Charles Babbage in London.")
import thinc.compat
print("entities", [e.text for e in doc.ents])
print("torch after spaCy", "torch" in sys.modules, thinc.compat.has_torch)
seen = []
thread = threading.Thread(target=lambda: seen.append(__import__("torch").__version__))
thread.start(); thread.join()
print("torch in a thread", bool(seen))
"""


def test_spacy_loads_without_pytorch_which_stays_importable():
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=repo, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "entities ['Ada Lovelace', 'Charles Babbage', 'London']" in done.stdout
    assert "torch after spaCy False False" in done.stdout
    assert "torch in a thread True" in done.stdout
