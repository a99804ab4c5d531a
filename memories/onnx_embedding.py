"""The ONNX Runtime embedding backend: built once, locally, from the packaged sentence-transformers model.

Building (no hub, no network, no optimum):
1. torch.onnx.export of the transformer with the model's pooling and L2 normalisation inside the
   graph (inputs passed by keyword through a small wrapper), with transformers' eager attention:
   the SDPA graph (IsNaN/Where masking) is not recognised by the fuser, which then leaves attention
   as 12 loose ops per layer;
2. onnxruntime's transformer optimiser fuses embeddings + layer norm, attention and GELU (`onnx`),
   but not the residual add with its layer norm (UNFUSED: that fused kernel is slow on CPU);
3. for `onnx-int8`, dynamic quantisation of the fused graph's MatMul and Attention weights to QInt8,
   per channel (per-tensor QInt8 loses too much: mean cosine 0.937 to fp32). The embedding table
   stays float: quantising it saves no time and loses a little agreement.

The result is written to KYBERNESIS_EMBEDDING_CACHE_DIR with a manifest holding its SHA-256 and the
torch vectors of a few probe sentences. Loading checks both: a file that is missing, truncated,
altered or that no longer gives the model's vectors is rebuilt; if building fails, the caller falls
back to torch with a warning (memories.embedding).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

logger = logging.getLogger(__name__)

EXPORT_VERSION = 3  # bump when the export recipe changes: old builds are then ignored
PROBES = (
    "Kybernesis keeps memories and finds them again by meaning.",
    "Mitochondrial DNA mutations accumulate with age in human tissue.",
    "The quarterly budget review moved to Thursday at 10am.",
    "a",
)
# The least cosine between a build's probe vectors and torch's: int8 weights move vectors a little
# (0.995 on average), anything else would be a broken file.
MIN_PROBE_COSINE = {"onnx": 0.999, "onnx-int8": 0.98}
# Fusions left out, at build and at load: ONNX Runtime's CPU SkipLayerNormalization kernel is slower
# than the Add and LayerNormalization it replaces (docs/decisions/0001-onnx-int8-embeddings.md).
UNFUSED = ("SkipLayerNormFusion",)


class OnnxUnavailable(RuntimeError):
    """The ONNX backend could not be built or loaded; the caller falls back to torch."""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _pooling(model_path: Path) -> str:
    config_file = model_path / "1_Pooling" / "config.json"
    if not config_file.exists():
        return "mean"
    config = json.loads(config_file.read_text())
    if config.get("pooling_mode_mean_tokens"):
        return "mean"
    if config.get("pooling_mode_cls_token"):
        return "cls"
    raise OnnxUnavailable(f"pooling {config} is not supported by the ONNX export")


def max_seq_length(model_path: Path) -> int:
    config_file = model_path / "sentence_bert_config.json"
    if config_file.exists():
        return int(json.loads(config_file.read_text()).get("max_seq_length") or 512)
    return 512


def build_dir(model_path: Path, cache_dir: Path) -> Path:
    """A folder per (model weights, exporter and runtime versions), so an upgrade builds afresh."""
    from importlib.metadata import version

    # Versions from the package metadata: importing torch would cost a web worker ~200 MB for nothing.
    weights = sorted(model_path.glob("*.safetensors")) or sorted(model_path.glob("*.bin"))
    fingerprint = hashlib.sha256()
    fingerprint.update((model_path / "config.json").read_bytes())
    for weight in weights:
        fingerprint.update(f"{weight.name}:{weight.stat().st_size}".encode())
    fingerprint.update(f"{EXPORT_VERSION}:{version('onnxruntime')}:{version('torch')}".encode())
    return cache_dir / f"{model_path.name}-{fingerprint.hexdigest()[:16]}"


class Tokenizer:
    """The model's fast tokenizer (tokenizer.json), truncating like sentence-transformers."""

    def __init__(self, model_path: Path):
        from tokenizers import Tokenizer as FastTokenizer

        self.tokenizer = FastTokenizer.from_file(str(model_path / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_seq_length(model_path))
        self.tokenizer.no_padding()

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        return [encoding.ids for encoding in self.tokenizer.encode_batch(list(texts))]


class OnnxEncoder:
    """An ONNX Runtime session over a built model; encode() returns L2-normalised float32 vectors.

    Each text runs on its own, on one thread, and up to `lanes` texts run at once in a process (a
    slot each; ONNX Runtime releases the GIL). That is faster than one session's threads over padded
    batches, whose threads synchronise at every op and whose larger runs outgrow the CPU caches. One
    text per run also makes a text's vector depend on that text alone: int8 activations are quantised
    with one scale per run, so in a padded batch a vector would move with its neighbours; a chunk
    gets the vector its text gets as a query (docs/decisions/0001-onnx-int8-embeddings.md)."""

    def __init__(self, model_file: Path, model_path: Path, *, threads: int):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        # Without the arena, most memory for a large batch goes back to the system afterwards
        # (docs/decisions/0001-onnx-int8-embeddings.md).
        options.enable_cpu_mem_arena = False
        self.session = ort.InferenceSession(
            str(model_file), options, providers=["CPUExecutionProvider"], disabled_optimizers=list(UNFUSED)
        )
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.dimensions = self.session.get_outputs()[0].shape[-1] or 384
        self.tokenizer = Tokenizer(model_path)
        self.lanes = max(1, threads)
        self._pid = None
        self._slots: threading.BoundedSemaphore | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._setup_lock = threading.Lock()

    def _lanes(self) -> tuple[threading.BoundedSemaphore, ThreadPoolExecutor]:
        # Made per process: a forked child (core.workers) has none of its parent's threads, and a
        # slot its parent held at the fork would never be given back.
        with self._setup_lock:
            if self._pid != os.getpid():
                self._slots = threading.BoundedSemaphore(self.lanes)
                self._pool = ThreadPoolExecutor(max_workers=self.lanes, thread_name_prefix="onnx-lane")
                self._pid = os.getpid()
            return self._slots, self._pool

    def _run(self, row: list[int]) -> np.ndarray:
        input_ids = np.asarray([row], dtype=np.int64)
        feed = {"input_ids": input_ids, "attention_mask": np.ones_like(input_ids)}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(input_ids)
        return self.session.run(None, feed)[0][0]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """The texts' vectors, in order. A query (one text) runs on the calling thread; more texts
        are spread over the lanes, longest first so the lanes finish together."""
        ids = self.tokenizer.encode(texts)
        slots, pool = self._lanes()
        out = np.zeros((len(ids), self.dimensions), dtype=np.float32)

        def run(i: int) -> None:
            with slots:  # shared with every other caller in this process
                out[i] = self._run(ids[i])

        if len(ids) == 1:
            run(0)
            return out
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        for _ in pool.map(run, order):  # raises the first run's error, if any
            pass
        return out


def _export(model_path: Path, target: Path) -> None:
    import torch
    from transformers import AutoModel

    pooling = _pooling(model_path)
    transformer = AutoModel.from_pretrained(str(model_path), attn_implementation="eager").eval()

    class Pooled(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)[0]
            if pooling == "cls":
                pooled = hidden[:, 0]
            else:
                weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    sample = torch.ones((2, 8), dtype=torch.long)
    names = ["input_ids", "attention_mask", "token_type_ids"]
    import warnings

    with torch.no_grad(), warnings.catch_warnings():
        # The tracer notes that shapes become constants: true of the sample's batch and length only,
        # which are declared dynamic below (the probes check other lengths).
        warnings.simplefilter("ignore")
        torch.onnx.export(
            Pooled(transformer),
            (sample, sample, torch.zeros_like(sample)),
            str(target),
            input_names=names,
            output_names=["embedding"],
            opset_version=17,
            dynamo=False,
            dynamic_axes={**{n: {0: "batch", 1: "sequence"} for n in names}, "embedding": {0: "batch"}},
        )


def _fuse(source: Path, target: Path, model_path: Path) -> None:
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    config = json.loads((model_path / "config.json").read_text())
    options = FusionOptions("bert")
    # Residual add + layer norm stay two ops (see UNFUSED): fused, they make the slowest kernel.
    options.enable_skip_layer_norm = False
    options.enable_bias_skip_layer_norm = False
    optimized = optimize_model(
        str(source),
        model_type="bert",
        num_heads=config.get("num_attention_heads", 12),
        hidden_size=config.get("hidden_size", 384),
        opt_level=1,
        use_gpu=False,
        optimization_options=options,
    )
    optimized.save_model_to_file(str(target))


def _quantize(source: Path, target: Path) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.disable(logging.INFO)  # the quantiser logs every tensor on the root logger
    try:
        quantize_dynamic(
            str(source),
            str(target),
            per_channel=True,
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["MatMul", "Attention"],
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
    finally:
        logging.disable(logging.NOTSET)


def build(model_path: Path, folder: Path, variant: str, reference) -> Path:
    """Export, fuse and (for onnx-int8) quantise; check the probes; write file and manifest."""
    started = time.monotonic()
    folder.mkdir(parents=True, exist_ok=True)
    exported, fused = folder / "export.tmp.onnx", folder / "fused.tmp.onnx"
    target = folder / f"model-{variant}.onnx"
    staged = folder / f"model-{variant}.tmp.onnx"
    try:
        _export(model_path, exported)
        _fuse(exported, fused, model_path)
        if variant == "onnx-int8":
            _quantize(fused, staged)
        else:
            fused.replace(staged)
        probe = reference(list(PROBES))
        encoder = OnnxEncoder(staged, model_path, threads=1)
        agreement = float(np.min(np.sum(encoder.encode(list(PROBES)) * probe, axis=1)))
        if agreement < MIN_PROBE_COSINE[variant]:
            raise OnnxUnavailable(f"the {variant} build gives vectors with cosine {agreement:.4f} to torch")
        staged.replace(target)
        manifest = {
            "variant": variant,
            "sha256": _sha256(target),
            "probe": probe.tolist(),
            "probe_cosine": agreement,
            "model": str(model_path),
            "export_version": EXPORT_VERSION,
        }
        staged_manifest = folder / f"manifest-{variant}.tmp.json"
        staged_manifest.write_text(json.dumps(manifest))
        staged_manifest.replace(folder / f"manifest-{variant}.json")
    finally:
        for leftover in (exported, fused, staged, folder / "export.tmp.onnx.data"):
            leftover.unlink(missing_ok=True)
    logger.info(
        "built the %s embedding model in %s in %.1f s (probe cosine %.4f)",
        variant,
        folder,
        time.monotonic() - started,
        agreement,
    )
    return target


def _verified(folder: Path, variant: str, model_path: Path, threads: int) -> OnnxEncoder | None:
    """The encoder of a build whose file matches its manifest and still gives the probe vectors."""
    target, manifest_file = folder / f"model-{variant}.onnx", folder / f"manifest-{variant}.json"
    if not target.exists() or not manifest_file.exists():
        return None
    try:
        manifest = json.loads(manifest_file.read_text())
        if _sha256(target) != manifest["sha256"]:
            logger.warning("the %s embedding model %s does not match its checksum; rebuilding", variant, target)
            return None
        encoder = OnnxEncoder(target, model_path, threads=threads)
        agreement = float(np.min(np.sum(encoder.encode(list(PROBES)) * np.asarray(manifest["probe"]), axis=1)))
    except Exception as exc:  # noqa: BLE001 - any unreadable build is rebuilt
        logger.warning(
            "the %s embedding model %s cannot be used (%s: %s); rebuilding", variant, target, type(exc).__name__, exc
        )
        return None
    if agreement < MIN_PROBE_COSINE[variant]:
        logger.warning(
            "the %s embedding model %s gives wrong vectors (cosine %.4f); rebuilding", variant, target, agreement
        )
        return None
    return encoder


def load(model_path: Path, cache_dir: Path, variant: str, *, threads: int, reference) -> OnnxEncoder:
    """A verified encoder, building (once, under a file lock shared by every process) when needed.
    `reference(texts)` gives the torch vectors the build is checked against. Raises OnnxUnavailable."""
    if variant not in MIN_PROBE_COSINE:
        raise OnnxUnavailable(f"unknown ONNX variant {variant!r}")
    folder = build_dir(model_path, cache_dir)
    encoder = _verified(folder, variant, model_path, threads)
    if encoder is not None:
        return encoder
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be building it right now
        encoder = _verified(folder, variant, model_path, threads)
        if encoder is not None:
            return encoder
        try:
            build(model_path, folder, variant, reference)
        except Exception as exc:
            raise OnnxUnavailable(f"building the {variant} model failed: {type(exc).__name__}: {exc}") from exc
        encoder = _verified(folder, variant, model_path, threads)
    if encoder is None:
        raise OnnxUnavailable(f"the {variant} model built in {folder} does not verify")
    return encoder


def threads_default() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
