"""Embedding backends (torch, onnx, onnx-int8), the ONNX build's fallbacks, and the per-chunk model bookkeeping."""

from __future__ import annotations

import json
import logging
import os
import select
import shutil
import threading
import time
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings
from django.core.management import call_command

from memories import embedding, onnx_embedding
from memories.models import MemoryChunk
from memories.search import hybrid_search
from memories.services.reembed import chunks_reembed, chunks_stale_count
from tests.factories import make_memory

SENTENCE = "The hippocampus consolidates episodic memories during sleep."


@pytest.fixture
def backend(settings):
    """Switch the process's embedding backend for one test, and back afterwards."""

    def use(name: str, **overrides):
        settings.KYBERNESIS_EMBEDDING_BACKEND = name
        for key, value in overrides.items():
            setattr(settings, key, value)
        embedding.reset()
        return embedding.backend()

    yield use
    embedding.reset()


def _torch_vector(text: str) -> np.ndarray:
    return embedding.get_model().encode([text], normalize_embeddings=True, convert_to_numpy=True)[0]


def test_the_default_backend_is_onnx_int8_and_agrees_with_torch():
    assert settings.KYBERNESIS_EMBEDDING_BACKEND == "onnx-int8"
    vector = embedding.embed_query(SENTENCE)
    assert embedding.backend_id() == "all-MiniLM-L6-v2/onnx-int8"
    assert vector.shape == (384,) and vector.dtype == np.float32
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-3
    assert float(vector @ _torch_vector(SENTENCE)) > 0.98


@pytest.mark.parametrize("name, least_cosine", [("torch", 0.99999), ("onnx", 0.9999), ("onnx-int8", 0.98)])
def test_each_backend_can_be_selected(backend, name, least_cosine):
    assert backend(name) == name
    assert embedding.backend_id().endswith(f"/{name}")
    vectors = embedding.embed_texts([SENTENCE, "Budget review on Thursday."])
    assert vectors.shape == (2, 384)
    assert float(vectors[0] @ _torch_vector(SENTENCE)) >= least_cosine


def test_an_int8_vector_depends_on_its_text_alone_not_on_what_it_was_embedded_with():
    """int8 activations are quantised per run; one text per run makes a chunk's vector the same in
    any batch, and the same as the text's query vector."""
    alone = embedding.embed_texts([SENTENCE])[0]
    neighbours = ["Budget review on Thursday.", "x " * 300, "Mitochondria", SENTENCE, "Kubernetes pods restart."]
    assert np.array_equal(embedding.embed_texts(neighbours)[3], alone)
    assert np.array_equal(embedding.embed_query(SENTENCE, cache=False), alone)


def test_onnx_runs_at_most_one_per_lane_at_once(monkeypatch):
    embedding.embed_texts(["warm"])
    encoder = embedding._encoder
    running, most = [0], [0]
    lock = threading.Lock()
    real_run = encoder._run

    def counted(row):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            time.sleep(0.002)
            return real_run(row)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(encoder, "_run", counted)
    texts = [f"note {i} about lanes" for i in range(40)]
    shapes: list = []

    def embed(many: bool):
        try:
            if many:
                shapes.append(embedding.embed_texts(texts).shape)
            else:
                shapes.extend(embedding.embed_query(t, cache=False).shape for t in texts[:10])
        except Exception as exc:  # surfaced below
            shapes.append(exc)

    threads = [threading.Thread(target=embed, args=(many,)) for many in (True, True, True, False)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(shapes, key=str) == sorted([(40, 384)] * 3 + [(384,)] * 10, key=str)
    assert most[0] == encoder.lanes


def test_a_forked_child_embeds_with_lanes_of_its_own():
    embedding.embed_texts(["warm", "up"])  # the parent's lanes exist before the fork
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its parent's lane threads are gone; it must not hang
        try:
            vectors = embedding.embed_texts([SENTENCE, "Budget review on Thursday."])
            os.write(write, b"ok" if vectors.shape == (2, 384) else b"bad")
        finally:
            os._exit(0)
    os.close(write)
    try:
        ready, _, _ = select.select([read], [], [], 60)
        assert ready and os.read(read, 2) == b"ok"
    finally:
        os.waitpid(pid, 0)
        os.close(read)


def test_an_unknown_backend_is_refused_at_start_up(monkeypatch):
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=settings.BASE_DIR,
        capture_output=True,
        check=False,
        text=True,
        env={**__import__("os").environ, "KYBERNESIS_EMBEDDING_BACKEND": "tensorflow"},
    )
    assert done.returncode != 0
    assert "KYBERNESIS_EMBEDDING_BACKEND must be torch, onnx or onnx-int8" in done.stderr


def _copy_build(tmp_path: Path) -> Path:
    """The session's verified int8 build, copied into a private cache (no rebuild needed)."""
    model_path = Path(embedding.model_path())
    source = onnx_embedding.build_dir(model_path, Path(settings.KYBERNESIS_EMBEDDING_CACHE_DIR))
    target = onnx_embedding.build_dir(model_path, tmp_path)
    target.mkdir(parents=True)
    for name in ("model-onnx-int8.onnx", "manifest-onnx-int8.json"):
        shutil.copy(source / name, target / name)
    return target


def test_a_corrupt_model_file_is_rebuilt(backend, tmp_path, caplog):
    folder = _copy_build(tmp_path)
    model_file = folder / "model-onnx-int8.onnx"
    with open(model_file, "r+b") as handle:  # damage the weights in the middle of the file
        handle.seek(model_file.stat().st_size // 2)
        handle.write(b"\x00" * 4096)
    with caplog.at_level(logging.WARNING, logger="memories.onnx_embedding"):
        assert backend("onnx-int8", KYBERNESIS_EMBEDDING_CACHE_DIR=str(tmp_path)) == "onnx-int8"
    assert "does not match its checksum; rebuilding" in caplog.text
    manifest = json.loads((folder / "manifest-onnx-int8.json").read_text())
    assert onnx_embedding._sha256(model_file) == manifest["sha256"]
    assert float(embedding.embed_query(SENTENCE) @ _torch_vector(SENTENCE)) > 0.98


def test_a_missing_model_that_cannot_be_built_falls_back_to_torch_with_a_warning(
    backend, tmp_path, caplog, monkeypatch
):
    def broken_export(*_args, **_kwargs):
        raise RuntimeError("exporter exploded")

    monkeypatch.setattr(onnx_embedding, "_export", broken_export)
    with caplog.at_level(logging.WARNING, logger="memories.embedding"):
        assert backend("onnx-int8", KYBERNESIS_EMBEDDING_CACHE_DIR=str(tmp_path)) == "torch"
    assert "embedding backend onnx-int8 unavailable, falling back to torch" in caplog.text
    assert "exporter exploded" in caplog.text
    assert embedding.backend_id() == "all-MiniLM-L6-v2/torch"
    np.testing.assert_allclose(embedding.embed_query(SENTENCE), _torch_vector(SENTENCE), atol=1e-5)


def test_a_build_that_gives_wrong_vectors_is_not_used(backend, tmp_path, monkeypatch):
    folder = _copy_build(tmp_path)
    manifest_file = folder / "manifest-onnx-int8.json"
    manifest = json.loads(manifest_file.read_text())
    manifest["probe"] = (-np.asarray(manifest["probe"])).tolist()  # as if the file computed other vectors
    manifest_file.write_text(json.dumps(manifest))
    monkeypatch.setattr(onnx_embedding, "_export", lambda *_a, **_k: (_ for _ in ()).throw(RuntimeError("no")))
    assert backend("onnx-int8", KYBERNESIS_EMBEDDING_CACHE_DIR=str(tmp_path)) == "torch"


def test_every_chunk_records_its_model_and_key(user):
    memory = make_memory(user, content="Notes on the migration of the billing service to PostgreSQL 18.")
    chunk = MemoryChunk.objects.get(memory=memory)
    assert chunk.embedding_model == "all-MiniLM-L6-v2"
    assert chunk.embedding_key == embedding.embedding_key(embedding.chunk_embedding_text(memory.title, chunk.text))
    assert embedding.embedding_key(chunk.text, model_id="all-MiniLM-L6-v2/torch") != chunk.embedding_key


def test_search_never_compares_a_query_with_vectors_of_another_model(user):
    memory = make_memory(user, title="Billing", content="The billing service moves to PostgreSQL in March.")
    MemoryChunk.objects.filter(memory=memory).update(embedding_model="some-other-model")
    results = hybrid_search(user.pk, "billing service PostgreSQL", min_score=0).results
    # Found by its words only: its vector (another model's) counts for nothing.
    assert [r.memory_id for r in results] == [memory.pk]
    assert results[0].vector_score == 0.0
    assert hybrid_search(user.pk, "completely unrelated gardening tips", min_score=0).results == []


def test_reembed_migrates_stale_chunks_in_batches_and_resumes(user, backend):
    memories = [
        make_memory(user, title=f"Note {i}", content=f"Memory number {i} is about topic {i * 7}.") for i in range(5)
    ]
    assert chunks_stale_count() == (0, 5)
    backend("torch")  # the backend changed: every chunk's key is stale now
    assert chunks_stale_count() == (5, 5)

    first = chunks_reembed(batch_size=2, limit=2)  # as if interrupted after two chunks
    assert (first.reembedded, first.skipped) == (2, 0)
    assert chunks_stale_count() == (3, 5)

    out, err = StringIO(), StringIO()
    call_command("reembed", batch_size=2, stdout=out, stderr=err)
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert result == {
        "model": "all-MiniLM-L6-v2/torch",
        "chunks": 5,
        "stale": 3,
        "reembedded": 3,
        "skipped": 0,
        "seconds": result["seconds"],
    }
    assert "3/3 re-embedded" in err.getvalue()
    assert chunks_stale_count() == (0, 5)
    for chunk in MemoryChunk.objects.filter(memory__in=memories).select_related("memory"):
        embedded = embedding.chunk_embedding_text(chunk.memory.title, chunk.text)
        np.testing.assert_allclose(np.asarray(chunk.embedding), _torch_vector(embedded), atol=1e-4)
        assert chunk.embedding_key == embedding.embedding_key(embedded, model_id="all-MiniLM-L6-v2/torch")

    again = StringIO()
    call_command("reembed", stdout=again, stderr=StringIO())
    assert json.loads(again.getvalue().strip().splitlines()[-1])["reembedded"] == 0


def test_reembed_leaves_a_chunk_changed_meanwhile_to_the_change(user, backend, monkeypatch):
    import memories.services.reembed as reembed_module

    memory = make_memory(user, content="A chunk that is edited while the re-embedding runs.")
    backend("torch")
    real_scan = reembed_module._scan

    def scan_then_edit(**kwargs):
        for batch in real_scan(**kwargs):
            MemoryChunk.objects.filter(memory=memory).update(embedding_key="edited-after-the-read")
            yield batch

    monkeypatch.setattr(reembed_module, "_scan", scan_then_edit)
    progress = chunks_reembed()
    assert (progress.reembedded, progress.skipped) == (0, 1)
    assert MemoryChunk.objects.get(memory=memory).embedding_key == "edited-after-the-read"


@pytest.mark.parametrize(
    ("text", "embedded"),
    [
        (
            "From: Mallori Harrell <mallori@example.com>\nTo: All <all@example.com>\nDate: 2022-12-21 16:28 UTC\n\n"
            "Get excited for our first annual family day!",
            "Family Day — Get excited for our first annual family day!",
        ),
        # a mail with no body keeps its header lines: they are all there is
        (
            "From: a@example.com\nDate: 2022-12-21 16:28 UTC",
            "Family Day — From: a@example.com\nDate: 2022-12-21 16:28 UTC",
        ),
        # prose that opens with "From:" is no header block
        (
            "From: the start it was clear\nthat we would win.",
            "Family Day — From: the start it was clear\nthat we would win.",
        ),
    ],
)
def test_a_mails_header_lines_are_not_embedded_with_its_body(text, embedded):
    """Addresses and a timestamp are what a mail is found by in words, not what it is about."""
    assert embedding.chunk_embedding_text("Family Day", text) == embedded
